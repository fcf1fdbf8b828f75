"""NumPy's linear algebra on Dask arrays, where Dask's own is narrower than NumPy's.

``dask.array.linalg`` takes one matrix at a time (2-D), takes an SVD or a QR of a
matrix chunked along one axis only (tall-and-skinny or short-and-fat), and has no
pinv; array_api_compat's ``cholesky`` on Dask returns the upper factor where the
standard (and NumPy) give the lower. Here, each as NumPy's:

* a batch of matrices is Dask's function on each, stacked (the batch's size is in the
  shape: nothing is computed);
* a matrix chunked both ways is rechunked to whole rows or whole columns first, as
  Dask's own error advises (a step of the graph, computed when the graph is);
* pinv is written with the SVD, with NumPy's cutoff.

What Dask has no way to do at all (det, slogdet, eigh, eigvalsh) is not here: the
translation refuses it by name (``dask has no linalg.eigh``).
"""

import numpy as np

__all__ = ["cholesky", "inv", "solve", "qr", "svd", "svdvals", "pinv", "matrix_norm"]


def _da():
    import dask.array as da
    return da


def _each(lib, function, arrays, cores):
    """``function`` on each matrix (or vector) of a batch: ``arrays`` with ``cores``
    trailing axes each, their leading axes broadcast; the results stacked on them."""
    ns = lib.ns
    batch = np.broadcast_shapes(*[tuple(a.shape[:a.ndim - c]) for a, c in zip(arrays, cores)])
    if not batch:
        return function(*arrays)
    arrays = [ns.broadcast_to(a, batch + tuple(a.shape[a.ndim - c:]))
              for a, c in zip(arrays, cores)]
    if 0 in batch:  # no matrices: the results' shapes from one of zeros, not computed
        one = function(*(ns.zeros(a.shape[len(batch):], dtype=a.dtype) for a in arrays))
        return tuple(ns.zeros(batch + r.shape, dtype=r.dtype) for r in one) if \
            isinstance(one, tuple) else ns.zeros(batch + one.shape, dtype=one.dtype)
    results = [function(*(a[i] for a in arrays)) for i in np.ndindex(*batch)]
    if isinstance(results[0], tuple):
        return tuple(_stacked(lib, [r[k] for r in results], batch)
                     for k in range(len(results[0])))
    return _stacked(lib, results, batch)


def _stacked(lib, results, batch):
    stacked = lib.ns.stack(results, axis=0)
    return lib.ns.reshape(stacked, batch + tuple(stacked.shape[1:]))


def cholesky(lib, a, upper=False):
    """np.linalg.cholesky: the lower factor (``upper=True``: its transpose)."""
    da = _da()
    return _each(lib, lambda m: da.linalg.cholesky(m, lower=not upper), [a], [2])


def inv(lib, a):
    """np.linalg.inv, batched."""
    return _each(lib, _da().linalg.inv, [a], [2])


def solve(lib, a, b):
    """np.linalg.solve, batched: b is one vector when it has one axis (NumPy 2's rule),
    else a (batch of) matrices of right-hand sides."""
    return _each(lib, _da().linalg.solve, [a, b], [2, 1 if b.ndim == 1 else 2])


def _one_way(m, for_qr):
    """The matrix chunked along one axis only: columns whole for a tall (or square)
    one, rows whole for a wide one (and, for Dask's QR of a wide one, column chunks no
    wider than the rows)."""
    rows, cols = m.shape
    if rows >= cols:
        return m if m.numblocks[1] == 1 else m.rechunk({1: -1})
    if for_qr:
        return m if m.numblocks[0] == 1 and m.chunks[1][0] <= rows else \
            m.rechunk({0: -1, 1: rows})
    return m if m.numblocks[0] == 1 else m.rechunk({0: -1})


def qr(lib, a, mode="reduced"):
    """np.linalg.qr (reduced), batched. Its signs are Dask's (a QR is unique up to the
    sign of each column of Q and row of R; NumPy's are LAPACK's)."""
    if mode != "reduced":
        from .shims import unsupported
        raise unsupported(lib, f"linalg.qr with mode={mode!r}", "linalg.qr")
    return _each(lib, lambda m: tuple(_da().linalg.qr(_one_way(m, True))), [a], [2])


def svd(lib, a, full_matrices=True, compute_uv=True, hermitian=False):
    """np.linalg.svd, reduced (Dask has no full one), batched; U's and Vh's signs are
    Dask's."""
    if not compute_uv:
        return svdvals(lib, a)
    if full_matrices and a.shape[-1] != a.shape[-2]:
        from .shims import unsupported
        raise unsupported(lib, "full SVD of a matrix that is not square (full_matrices=True)",
                          "linalg.svd")
    return _each(lib, lambda m: tuple(_da().linalg.svd(_one_way(m, False))), [a], [2])


def svdvals(lib, a):
    """np.linalg.svdvals: the singular values, descending, of each matrix."""
    return _each(lib, lambda m: _da().linalg.svd(_one_way(m, False))[1], [a], [2])


def pinv(lib, a, rtol=None, hermitian=False):
    """np.linalg.pinv: V diag(1/s) U^T over the singular values above ``rtol`` times
    the largest (NumPy's default rtol: 1e-15)."""
    ns = lib.ns
    rtol = 1e-15 if rtol is None else rtol

    def one(m):
        u, s, vh = _da().linalg.svd(_one_way(m, False))
        kept = s > rtol * ns.max(s)
        inverse = ns.where(kept, 1.0 / ns.where(kept, s, 1.0), 0.0)
        return ns.matmul(ns.matrix_transpose(vh) * inverse, ns.matrix_transpose(u))
    return _each(lib, one, [a], [2])


def matrix_norm(lib, x, keepdims=False, ord="fro"):
    """The matrix norms of the standard: those of the singular values (2, -2, "nuc")
    from them, the others Dask's."""
    ns = lib.ns
    if ord not in (2, -2, "nuc"):
        return ns.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
    s = svdvals(lib, x)
    out = ns.max(s, axis=-1) if ord == 2 else ns.min(s, axis=-1) if ord == -2 else \
        ns.sum(s, axis=-1)
    return ns.reshape(out, tuple(out.shape) + (1, 1)) if keepdims else out
