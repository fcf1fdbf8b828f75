"""The rest of scipy.linalg's names that ``jax.scipy.linalg`` has: the structured
matrices built from a vector (Toeplitz, Hankel, circulant, companion, block diagonal...),
the named constant matrices (Hilbert, Pascal, Hadamard, DFT...), and the decompositions
and functions ``schur``, ``hessenberg``, ``polar``, ``qr_multiply``, ``eigh_tridiagonal``,
``expm_frechet``, ``funm`` and ``rsf2csf``.

A structured matrix is its vector's entries gathered by a table of indices
(``take``), so its derivative is the gather's: each entry's gradient is the sum over the
places it went. ``polar``, ``qr_multiply``, ``eigh_tridiagonal`` and ``expm_frechet`` are
composed of differentiable operations (SVD, QR, eigh, expm). ``schur``, ``hessenberg``,
``funm`` and ``rsf2csf`` are SciPy's numbers with no derivative, as JAX gives them none:
differentiating through one raises.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.toeplitz(np.array([1.0, 2.0, 3.0])).tolist()
    [[1.0, 2.0, 3.0], [2.0, 1.0, 2.0], [3.0, 2.0, 1.0]]
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as _sl

from .. import arrays as xp, rules as ops
from ..api import linalg as _linalg
from ..primitive import Box, Primitive, raw, shape_of
from .matrix_functions import _check_square, expm

__all__ = ["toeplitz", "hankel", "circulant", "companion", "leslie", "fiedler",
           "fiedler_companion", "convolution_matrix", "block_diag", "dft", "hadamard",
           "helmert", "hilbert", "invhilbert", "pascal", "invpascal", "schur", "hessenberg",
           "rsf2csf", "funm", "polar", "qr_multiply", "eigh_tridiagonal", "expm_frechet"]


def _vector(name, v):
    """v as a 1-d array (a list becomes one; a Tensor, a transform's tracer or cr.jit's
    traced array stays as it is)."""
    if not isinstance(v, Box) and type(v) not in xp.ARRAYS:
        v = np.asarray(v)
    if len(shape_of(v)) != 1:
        raise ValueError(f"{name}: expected a 1-d array, got shape {shape_of(v)}")
    return v


def _require_leading(name, a):
    """The polynomial's first coefficient is not 0: checked on its numbers (under vmap
    every example's, under cr.jit at each run of the program)."""
    xp.require(raw(a[0]) != 0, _zero_leading, name)


def _zero_leading(name):
    return ValueError(f"{name}: the first coefficient must not be zero")


def _gathered(values, index):
    """values[index], with a -1 in index standing for 0 and a -2 for 1."""
    values = ops.concatenate([values, np.ones(1, raw(values).dtype),
                              np.zeros(1, raw(values).dtype)])  # (-2, then -1)
    size = shape_of(values)[0]
    return ops.take(values, np.where(index < 0, size + index, index))


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r`` None:
    ``conj(c)``, a Hermitian one), as ``scipy.linalg.toeplitz``; ``r[0]`` is not read.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.toeplitz(np.array([1.0, 2.0]), np.array([9.0, 5.0, 6.0])).tolist()
    [[1.0, 5.0, 6.0], [2.0, 1.0, 5.0]]
    """
    c = _vector("toeplitz", c)
    r = ops.conj(c) if r is None else _vector("toeplitz", r)
    m, n = shape_of(c)[0], shape_of(r)[0]
    values = ops.concatenate([ops.flip(r[1:], 0), c])  # r reversed, then c
    return ops.take(values, np.arange(m)[:, None] - np.arange(n)[None, :] + n - 1)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r`` (None: zeros), as
    ``scipy.linalg.hankel``; ``r[0]`` is not read.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.hankel(np.array([1.0, 2.0, 3.0])).tolist()
    [[1.0, 2.0, 3.0], [2.0, 3.0, 0.0], [3.0, 0.0, 0.0]]
    """
    c = _vector("hankel", c)
    r = np.zeros(shape_of(c), raw(c).dtype) if r is None else _vector("hankel", r)
    m, n = shape_of(c)[0], shape_of(r)[0]
    values = ops.concatenate([c, r[1:]])
    return ops.take(values, np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c: Any) -> Any:
    """The circulant matrix whose first column is ``c``, as ``scipy.linalg.circulant``.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.circulant(np.array([1.0, 2.0, 3.0])).tolist()
    [[1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [3.0, 2.0, 1.0]]
    """
    c = _vector("circulant", c)
    n = shape_of(c)[0]
    return ops.take(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a`` (highest power
    first): its eigenvalues are the roots, as ``scipy.linalg.companion``.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.companion(np.array([1.0, -3.0, 2.0])).tolist()     # roots 1 and 2
    [[3.0, -2.0], [1.0, 0.0]]
    """
    a = _vector("companion", a)
    n = shape_of(a)[0]
    if n < 2:
        raise ValueError(f"companion: the polynomial needs at least 2 coefficients, got {n}")
    _require_leading("companion", a)
    values = -a[1:] / a[0]
    index = np.full((n - 1, n - 1), -1)
    index[0] = np.arange(n - 1)
    index[np.arange(1, n - 1), np.arange(n - 2)] = -2
    return _gathered(values, index)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix of fecundities ``f`` (its first row) and survival rates ``s``
    (its subdiagonal), as ``scipy.linalg.leslie``.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.leslie(np.array([0.1, 2.0, 1.0]), np.array([0.2, 0.8])).tolist()
    [[0.1, 2.0, 1.0], [0.2, 0.0, 0.0], [0.0, 0.8, 0.0]]
    """
    f, s = _vector("leslie", f), _vector("leslie", s)
    n = shape_of(f)[0]
    if shape_of(s) != (n - 1,):
        raise ValueError(f"leslie: s must have one entry fewer than f ({n - 1}), got "
                         f"shape {shape_of(s)}")
    index = np.full((n, n), -1)
    index[0] = np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _gathered(ops.concatenate([f, s]), index)


def fiedler(a: Any) -> Any:
    """The symmetric matrix of distances ``|a_i - a_j|`` (``scipy.linalg.fiedler``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.fiedler(np.array([1.0, 4.0, 2.0])).tolist()
    [[0.0, 3.0, 1.0], [3.0, 0.0, 2.0], [1.0, 2.0, 0.0]]
    """
    a = _vector("fiedler", a)
    return ops.absolute(ops.expand_dims(a, 1) - ops.expand_dims(a, 0))


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest power
    first), with the polynomial's roots as eigenvalues (``scipy.linalg.fiedler_companion``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.fiedler_companion(np.array([1.0, -3.0, 2.0])).tolist()
    [[3.0, -2.0], [1.0, 0.0]]
    """
    a = _vector("fiedler_companion", a)
    size = shape_of(a)[0]
    if size <= 2:
        return ops.reshape(-(a / a[0])[-1:], (1, 1)) if size == 2 else np.zeros((0, 0))
    _require_leading("fiedler_companion", a)
    a = a / a[0]
    n = size - 1
    values = -a  # values[k] is -a[k]; -1 stands for 0, -2 for 1
    index = np.full((n, n), -1)
    index[np.arange(3, n, 2), np.arange(1, n - 2, 2)] = -2
    index[np.arange(2, n, 2), np.arange(1, n - 1, 2)] = np.arange(3, size, 2)
    index[np.arange(0, n - 2, 2), np.arange(2, n, 2)] = -2
    index[np.arange(0, n - 1, 2), np.arange(1, n, 2)] = np.arange(2, size, 2)
    index[0, 0], index[1, 0] = 1, -2
    return _gathered(values, index)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix A with ``A @ v == np.convolve(a, v, mode)`` for every v of length n
    (``scipy.linalg.convolution_matrix``; ``mode`` "full", "same" or "valid").

    >>> import chainrule.scipy.linalg as sla
    >>> sla.convolution_matrix(np.array([1.0, 2.0]), 3).tolist()
    [[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]]
    """
    a = _vector("convolution_matrix", a)
    m = shape_of(a)[0]
    if m == 0 or n <= 0:
        raise ValueError(f"convolution_matrix: a must be non-empty and n positive, got "
                         f"len(a)={m}, n={n}")
    rows = np.arange(m + n - 1)[:, None] - np.arange(n)[None, :]
    index = np.where((rows >= 0) & (rows < m), rows, -1)
    if mode == "same":
        start = (min(n, m) - 1) // 2
        index = index[start:start + max(m, n)]
    elif mode == "valid":
        index = index[min(m, n) - 1:max(m, n)]
    elif mode != "full":
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', "
                         f"got {mode!r}")
    return _gathered(a, index)


def block_diag(*arrs: Any) -> Any:
    """The block diagonal matrix of the arrays (a 0-d or 1-d one is a row), zeros
    elsewhere, as ``scipy.linalg.block_diag``.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.block_diag(np.ones((1, 2)), np.array([[5.0]])).tolist()
    [[1.0, 1.0, 0.0], [0.0, 0.0, 5.0]]
    """
    if not arrs:
        return np.zeros((1, 0))
    blocks = [ops.reshape(a, (1, -1)) if len(shape_of(a)) < 2 else a for a in arrs]
    for a in blocks:
        if len(shape_of(a)) != 2:
            raise ValueError(f"block_diag: expected arrays of at most 2 axes, got shape "
                             f"{shape_of(a)}")
    widths = [shape_of(a)[1] for a in blocks]
    total, before = sum(widths), 0
    rows = []
    for a, width in zip(blocks, widths):
        rows.append(ops.pad(a, ((0, 0), (before, total - before - width))))
        before += width
    return ops.concatenate(rows, axis=0)


def dft(n: int, scale: str | None = None) -> np.ndarray:
    """The n x n discrete Fourier transform matrix (``scipy.linalg.dft``): ``scale``
    None, "sqrtn" or "n".

    >>> import chainrule.scipy.linalg as sla
    >>> np.round(sla.dft(2), 6).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (-1-0j)]]
    """
    return _sl.dft(n, scale=scale)


def hadamard(n: int, dtype: Any = int) -> np.ndarray:
    """The n x n Hadamard matrix, n a power of 2 (``scipy.linalg.hadamard``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.hadamard(2).tolist()
    [[1, 1], [1, -1]]
    """
    return _sl.hadamard(n, dtype=dtype)


def helmert(n: int, full: bool = False) -> np.ndarray:
    """The Helmert matrix of order n, without its first row unless ``full``
    (``scipy.linalg.helmert``).

    >>> import chainrule.scipy.linalg as sla
    >>> np.round(sla.helmert(2, full=True) ** 2, 6).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    return _sl.helmert(n, full=full)


def hilbert(n: int) -> np.ndarray:
    """The n x n Hilbert matrix, 1 / (i + j + 1) (``scipy.linalg.hilbert``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.hilbert(2).tolist()
    [[1.0, 0.5], [0.5, 0.3333333333333333]]
    """
    return _sl.hilbert(n)


def invhilbert(n: int, exact: bool = False) -> np.ndarray:
    """The inverse of the n x n Hilbert matrix, from its closed form
    (``scipy.linalg.invhilbert``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.invhilbert(2).tolist()
    [[4.0, -6.0], [-6.0, 12.0]]
    """
    return _sl.invhilbert(n, exact=exact)


def pascal(n: int, kind: str = "symmetric", exact: bool = True) -> np.ndarray:
    """The n x n Pascal matrix of binomial coefficients, ``kind`` "symmetric", "lower"
    or "upper" (``scipy.linalg.pascal``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.pascal(3).tolist()
    [[1, 1, 1], [1, 2, 3], [1, 3, 6]]
    """
    return _sl.pascal(n, kind=kind or "symmetric", exact=exact)


def invpascal(n: int, kind: str = "symmetric", exact: bool = True) -> np.ndarray:
    """The inverse of the n x n Pascal matrix (``scipy.linalg.invpascal``).

    >>> import chainrule.scipy.linalg as sla
    >>> sla.invpascal(3).tolist()
    [[3, -3, 1], [-3, 5, -2], [1, -2, 1]]
    """
    return _sl.invpascal(n, kind=kind or "symmetric", exact=exact)


# The decompositions SciPy computes and JAX does not differentiate: one primitive of
# their stacked results, without rules, so that a derivative through it raises.
_schur = Primitive(lambda a, output="real": xp.call(
    lambda a: np.stack(_sl.schur(a, output=output)), a), "schur")
_hessenberg = Primitive(lambda a: xp.call(
    lambda a: np.stack(_sl.hessenberg(a, calc_q=True)), a), "hessenberg")
_rsf2csf = Primitive(lambda t, z: xp.call(lambda t, z: np.stack(_sl.rsf2csf(t, z)), t, z),
                     "rsf2csf")


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """``(T, Z)`` with a = Z T Zᴴ, T quasi-upper-triangular (``output="real"``) or
    upper-triangular (``"complex"``), as ``scipy.linalg.schur``. No derivative (JAX
    gives none): differentiating through it raises.

    >>> import chainrule.scipy.linalg as sla
    >>> t, z = sla.schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> np.allclose(z @ t @ z.T, [[1.0, 2.0], [0.0, 3.0]])
    True
    """
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    _check_square("schur", a)
    pair = _schur(a, output=output)
    return pair[0], pair[1]


def hessenberg(a: Any, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """The upper Hessenberg form H of a (zeros below the first subdiagonal), and with
    ``calc_q=True`` ``(H, Q)`` with a = Q H Qᴴ, as ``scipy.linalg.hessenberg``. No
    derivative (JAX gives none).

    >>> import chainrule.scipy.linalg as sla
    >>> h = sla.hessenberg(np.arange(9.0).reshape(3, 3) ** 2)
    >>> bool(abs(h[2, 0]) < 1e-12)
    True
    """
    _check_square("hessenberg", a)
    pair = _hessenberg(a)
    return (pair[0], pair[1]) if calc_q else pair[0]


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """A real Schur form ``(T, Z)`` turned complex (T upper triangular), as
    ``scipy.linalg.rsf2csf``. No derivative.

    >>> import chainrule.scipy.linalg as sla
    >>> t, z = sla.rsf2csf(*sla.schur(np.array([[0.0, -1.0], [1.0, 0.0]])))
    >>> bool(abs(t[1, 0]) < 1e-12)
    True
    """
    pair = _rsf2csf(T, Z)
    return pair[0], pair[1]


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """The matrix function of ``func`` (applied to NumPy arrays, entry by entry) at A,
    by Schur-Parlett, as ``scipy.linalg.funm``; with ``disp=False`` also its error
    estimate. No derivative (JAX gives none); ``expm``, ``logm`` and ``sqrtm`` have one.

    >>> import chainrule.scipy.linalg as sla
    >>> np.round(sla.funm(np.diag([1.0, 4.0]), np.sqrt), 6).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    _check_square("funm", A, "A")
    if disp:
        return Primitive(lambda a: xp.call(lambda a: _sl.funm(a, func), a), "funm")(A)
    value = Primitive(lambda a: xp.call(lambda a: _sl.funm(a, func, disp=False)[0], a),
                      "funm")(A)
    return value, float(_sl.funm(np.asarray(raw(A)), func, disp=False)[1])


def polar(a: Any, side: str = "right", *, method: str = "svd", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """``(u, p)``: a = u p (``side="right"``) or p u (``"left"``), u with orthonormal
    columns, p Hermitian positive semidefinite, from the SVD (as ``scipy.linalg.polar``,
    and JAX's ``method="svd"``); differentiable where the singular values are distinct
    and non-zero. JAX's iterative ``"qdwh"`` gives the same numbers.

    >>> import chainrule.scipy.linalg as sla
    >>> u, p = sla.polar(np.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> np.round(u, 6).tolist(), np.round(p, 6).tolist()
    ([[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("svd", "qdwh"):
        raise ValueError(f"polar: method must be 'svd' or 'qdwh', got {method!r}")
    if len(shape_of(a)) != 2:
        raise ValueError(f"polar: expected a matrix, got shape {shape_of(a)}")
    w, s, vh = _linalg.svd(a, full_matrices=False)
    u = w @ vh
    if side == "right":
        p = ops.conj(ops.transpose(vh)) @ (ops.expand_dims(s, 1) * vh)
    else:
        p = (w * s) @ ops.conj(ops.transpose(w))
    return u, p


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, ...]:
    """Q of a's economic QR times c: ``(c @ Q, R)`` for ``mode="right"``, ``(Q @ c, R)``
    for ``"left"`` (``conjugate``: with Q's conjugate), as ``scipy.linalg.qr_multiply``;
    with ``pivoting`` also the column permutation P (a[:, P] = Q R). Differentiable in a
    and c, P a constant.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[3.0, 1.0], [4.0, 2.0]])
    >>> qc, r = sla.qr_multiply(a, np.eye(2), mode="left")
    >>> np.allclose(qc @ r, a)
    True
    """
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    permutation = None
    if pivoting:
        permutation = _sl.qr(np.asarray(raw(a)), mode="r", pivoting=True)[1]
        a = a[:, permutation]
    q, r = _linalg.qr(a, mode="reduced")
    if conjugate:
        q = ops.conj(q)
    product = c @ q if mode == "right" else q @ c  # (a vector c: a row, or a column)
    return (product, r) if permutation is None else (product, r, permutation)


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None,
                     tol: float | None = None, key: Any = None) -> Any:
    """The eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal
    ``d`` and off-diagonal ``e``, and unless ``eigvals_only`` its eigenvectors as columns
    (``scipy.linalg.eigh_tridiagonal``; JAX's computes the eigenvalues only).
    ``select="i"`` keeps the eigenvalues with indices ``select_range`` (both ends kept).
    Differentiable as ``eigh``.

    >>> import chainrule.scipy.linalg as sla
    >>> np.round(sla.eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]),
    ...                               eigvals_only=True), 6).tolist()
    [1.0, 3.0]
    """
    d, e = _vector("eigh_tridiagonal", d), _vector("eigh_tridiagonal", e)
    n = shape_of(d)[0]
    if shape_of(e) != (max(n - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: e must have {n - 1} entries, got shape "
                         f"{shape_of(e)}")
    if select not in ("a", "i"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a' (all) or 'i' (by index), "
                         f"got {select!r}; a range of values picks a number of eigenvalues "
                         f"that depends on the data")
    index = np.full((n, n), -1)
    index[np.arange(n), np.arange(n)] = np.arange(n)
    index[np.arange(n - 1), np.arange(1, n)] = n + np.arange(n - 1)
    index[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    matrix = _gathered(ops.concatenate([d, e]), index)
    keep = slice(None)
    if select == "i":
        if select_range is None:
            raise ValueError("eigh_tridiagonal: select='i' needs select_range=(lo, hi)")
        keep = slice(int(select_range[0]), int(select_range[1]) + 1)
    if eigvals_only:
        return _linalg.eigvalsh(matrix)[keep]
    w, v = _linalg.eigh(matrix)
    return w[keep], v[:, keep]


def expm_frechet(A: Any, E: Any, method: str | None = None,
                 compute_expm: bool = True) -> Any:
    """The Fréchet derivative of the matrix exponential at A in the direction E, and
    with ``compute_expm`` first e^A: ``(expm(A), L)`` (``scipy.linalg.expm_frechet``),
    from e^[[A, E], [0, A]] = [[e^A, L], [0, e^A]]. Differentiable in A and E.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.zeros((2, 2))
    >>> sla.expm_frechet(a, np.eye(2), compute_expm=False).tolist()   # at 0: E itself
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _check_square("expm_frechet", A, "A")
    if shape_of(E) != shape_of(A):
        raise ValueError(f"expm_frechet: E must have A's shape {shape_of(A)}, got "
                         f"{shape_of(E)}")
    n = shape_of(A)[0]
    zeros = np.zeros((n, n), np.result_type(raw(A), raw(E)))
    big = expm(ops.concatenate([ops.concatenate([A, E], axis=1),
                                ops.concatenate([zeros, A], axis=1)], axis=0))
    frechet = big[:n, n:]
    return (big[:n, :n], frechet) if compute_expm else frechet
