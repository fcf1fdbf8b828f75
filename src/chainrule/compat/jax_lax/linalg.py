"""``chainrule.lax.linalg``: jax.lax.linalg's decompositions and solves, with JAX's
arguments and JAX's outputs (``eigh`` gives the eigenvectors first, ``lu`` the packed
factors, LAPACK's pivots and the permutation), written over chainrule's linear algebra
so that each has its derivative. Every function takes a batch of matrices (``[..., m, n]``).

>>> from chainrule.lax import linalg
>>> l = linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
>>> l.tolist()
[[2.0, 0.0], [1.0, 2.0]]
>>> linalg.triangular_solve(l, np.array([[2.0, 4.0]]), left_side=False, lower=True).tolist()
[[0.0, 2.0]]

Where it differs from JAX: a matrix that is not positive definite makes ``cholesky``
raise (JAX fills the result with NaNs), as a singular one makes ``tridiagonal_solve``
raise without ``perturb_singular``; ``eigh`` and ``eig`` return the eigenvalues in NumPy's
order whatever ``sort_eigenvalues`` says (JAX leaves an unsorted order unspecified);
``eig``'s left eigenvectors may differ from JAX's by a sign (each is unique up to its
phase; here its largest entry is real and positive), and its eigenvectors have
derivatives without ``enable_eigvec_derivs`` (JAX's raise unless it is set; with it,
they are JAX's); ``qr`` does not pivot.
"""

import functools
from typing import Any

import numpy as np

from ... import arrays as xp
from ...api import linalg as _linalg
from ...api import numpy as cnp
from ...boxes import raw
from ...primitive import Primitive
from ...rules.matrices import check_square

try:  # lu and schur are SciPy's (the ``scipy`` extra); the rest needs NumPy alone
    from ...scipy import linalg as _scipy_linalg
except ImportError:  # pragma: no cover  (SciPy is installed with the test extra)
    _scipy_linalg = None


def _scipy(name):
    if _scipy_linalg is None:
        raise ImportError(f"lax.linalg.{name} needs SciPy: pip install 'chainrule[scipy]'")
    return _scipy_linalg

__all__ = ["cholesky", "cholesky_update", "eig", "eigh", "hessenberg", "householder_product",
           "lu", "lu_pivots_to_permutation", "ormqr", "qr", "schur", "svd", "symmetric_product",
           "triangular_solve", "tridiagonal", "tridiagonal_solve"]


def _mT(x):  # the matrices' transposes
    return cnp.swapaxes(x, -1, -2)


def _mH(x):  # the matrices' conjugate transposes
    return cnp.conj(_mT(x))


def _square(name, x):
    check_square(f"lax.linalg.{name}", x)


def _hermitian_from(x, lower):
    """The Hermitian matrix one triangle of x describes (LAPACK reads that triangle and
    the real part of the diagonal; chainrule's own decompositions read both triangles)."""
    x = cnp.tril(x) + _mH(cnp.tril(x, -1)) if lower else cnp.triu(x) + _mH(cnp.triu(x, 1))
    return x - 1j * cnp.imag(cnp.tril(cnp.triu(x))) if cnp.iscomplexobj(x) else x


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """L, lower triangular, with ``x = L @ L^H``; ``symmetrize_input`` reads ``(x + x^H)/2``,
    else only x's lower triangle is read."""
    _square("cholesky", x)
    x = (x + _mH(x)) / 2 if symmetrize_input else _hermitian_from(x, lower=True)
    return _linalg.cholesky(x)


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: Any = None) -> tuple[Any, Any]:
    """``(v, w)``: the eigenvectors (columns) and the ascending eigenvalues of a Hermitian
    matrix; without ``symmetrize_input`` only the ``lower`` (or upper) triangle is read."""
    _square("eigh", x)
    if symmetrize_input:
        x = (x + _mH(x)) / 2
    else:
        x = _hermitian_from(x, lower)
    w, v = _linalg.eigh(x)
    if subset_by_index is not None:
        start, stop = subset_by_index
        w, v = w[..., start:stop], v[..., start:stop]
    return v, w


def _unit_with_real_largest(vectors):
    """Each column scaled to length 1 with its largest entry real and positive: LAPACK's
    (geev's) choice among the vectors of an eigenspace."""
    norms = cnp.sqrt(cnp.sum(cnp.abs(vectors) ** 2, axis=-2, keepdims=True))
    vectors = vectors / norms
    largest = cnp.expand_dims(cnp.argmax(cnp.abs(vectors), axis=-2), -2)
    top = cnp.take_along_axis(vectors, largest, axis=-2)
    return vectors * (cnp.conj(top) / cnp.abs(top))


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: bool | None = None) -> list[Any]:
    """``[w, vl, vr]`` (the eigenvectors asked for): complex eigenvalues ``w``, left
    eigenvectors (``vl^H x = w vl^H``) and right ones (``x vr = w vr``), each column of
    length 1 with its largest entry real."""
    _square("eig", x)
    w, vr = _linalg.eig(x)
    w, vr = w + 0j, vr + 0j  # complex always, as JAX's (NumPy's are real when they can be)
    out = [w]
    if compute_left_eigenvectors:  # the rows of vr's inverse, conjugated, are left ones
        out.append(_unit_with_real_largest(_mH(_linalg.inv(vr))))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation (int32, ``[..., permutation_size]``) that the row swaps ``pivots``
    (row i swapped with row ``pivots[i]``, in order) make of ``0, 1, ...``."""
    shape = tuple(cnp.shape(pivots))
    k = shape[-1] if shape else 0
    if permutation_size < k:
        raise ValueError(f"lax.linalg.lu_pivots_to_permutation: permutation_size "
                         f"{permutation_size} is less than the {k} pivots")
    positions = cnp.arange(permutation_size, dtype=np.int32)
    permutation = cnp.broadcast_to(positions, shape[:-1] + (permutation_size,))
    for i in range(k):  # (array operations, not item writes: cr.jit and vmap trace them)
        j = pivots[..., i:i + 1]
        at_i = permutation[..., i:i + 1]
        at_j = cnp.take_along_axis(permutation, j, axis=-1)
        permutation = cnp.where(positions == i, at_j,
                                cnp.where(positions == j, at_i, permutation))
    return permutation


def lu(x: Any) -> list[Any]:
    """``[lu, pivots, permutation]`` of ``p @ x = l @ u`` (partial pivoting): ``lu`` holds
    u on and above the diagonal and l's multipliers below, ``pivots`` LAPACK's row swaps
    (from 0, int32), ``permutation`` the rows of x in the order they take."""
    scipy_linalg = _scipy("lu")
    _square("lu", x)
    shape = cnp.shape(x)
    if len(shape) > 2:  # each matrix of the batch on its own
        parts = [lu(x[i]) for i in range(shape[0])]
        return [cnp.stack([p[k] for p in parts]) for k in range(3)]
    packed, pivots = scipy_linalg.lu_factor(x)  # (pivots: int32, as LAPACK's)
    return [packed, pivots, lu_pivots_to_permutation(pivots, shape[-2])]


def _complete_columns(x):
    """The last m - n columns of LAPACK's complete Q for a tall x (m > n), as a
    differentiable function of x: geqrf's Householder reflectors (dlarfg's choice of
    sign) computed with chainrule's operations, then multiplied out as orgqr does. The
    derivative is that of LAPACK's basis for the rest of the space, which is what JAX
    differentiates too (arXiv:2409.13374)."""
    m, n = cnp.shape(x)[-2:]
    rows = np.arange(m)[:, None]
    a, reflectors = x, []
    for k in range(n):
        column = a[..., :, k:k + 1]
        alpha = column[..., k:k + 1, :]
        below = cnp.where(rows > k, column, 0)
        rest = cnp.sum(cnp.abs(below) ** 2, axis=-2, keepdims=True)
        done = rest == 0  # nothing below the diagonal: LAPACK's H is the identity
        beta = -cnp.where(cnp.real(alpha) >= 0, 1.0, -1.0) * cnp.sqrt(
            cnp.abs(alpha) ** 2 + rest)
        beta = cnp.where(done, 1.0, beta)
        tau = cnp.where(done, 0.0, (beta - alpha) / beta)
        v = cnp.where(done, 0.0, below / cnp.where(done, 1.0, alpha - beta)) + (rows == k)
        a = a - cnp.conj(tau) * (v @ (_mH(v) @ a))  # H^H from the left, as geqr2
        reflectors.append((v, tau))
    q = cnp.broadcast_to(cnp.eye(m, dtype=cnp.result_type(x)), tuple(cnp.shape(x)[:-2]) + (m, m))
    for v, tau in reflectors:
        q = q - tau * ((q @ v) @ _mH(v))
    return q[..., :, n:]


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> Any:
    """``(q, r)`` with ``x = q @ r``, q unitary, r upper triangular. With
    ``full_matrices`` q is square (m x m), else it has ``min(m, n)`` columns. With
    ``pivoting``, ``(q, r, p)`` with ``x[..., p] = q @ r``: LAPACK's geqp3 picks the
    column order p (int32, no derivative) so that r's diagonal does not grow."""
    shape = cnp.shape(x)
    if len(shape) < 2:
        raise ValueError(f"lax.linalg.qr: expected a batch of matrices [..., m, n], "
                         f"got shape {tuple(shape)}")
    if pivoting:
        order = _pivoted_columns(raw(x))  # (a constant: piecewise, as a sort's order)
        permuted = cnp.take_along_axis(x, order[..., None, :], axis=-1)
        return (*qr(permuted, full_matrices=full_matrices), order)
    q, r = _linalg.qr(x)
    m, n = shape[-2], shape[-1]
    if full_matrices and m > n:
        pad = [(0, 0)] * (len(shape) - 2) + [(0, m - n), (0, 0)]
        return cnp.concatenate([q, _complete_columns(x)], axis=-1), cnp.pad(r, pad)
    return q, r


# The singular vectors a full SVD adds span the rest of the space, and any basis of it
# will do: they have no derivative (JAX's raises as well), so these primitives have no
# rules and a derivative through them raises.
_complete_u = Primitive(lambda x: xp.call(lambda x: np.linalg.svd(x)[0], x), "svd_complete_u")
_complete_vh = Primitive(lambda x: xp.call(lambda x: np.linalg.svd(x)[2], x),
                         "svd_complete_vh")


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Any:
    """``(u, s, vh)`` with ``x = u @ diag(s) @ vh`` and ``s`` descending, or ``s`` alone
    (``compute_uv=False``); ``subset_by_index=(i, j)`` keeps singular values i to j - 1."""
    if not compute_uv:
        s = _linalg.svd(x, compute_uv=False)
        return s if subset_by_index is None else s[..., subset_by_index[0]:subset_by_index[1]]
    shape = cnp.shape(x)
    u, s, vh = _linalg.svd(x, full_matrices=False)
    if full_matrices and shape[-2] > shape[-1]:
        u = _complete_u(x)
    elif full_matrices and shape[-2] < shape[-1]:
        vh = _complete_vh(x)
    if subset_by_index is not None:
        start, stop = subset_by_index
        u, s, vh = u[..., start:stop], s[..., start:stop], vh[..., start:stop, :]
    return u, s, vh


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """x with ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b``, where op transposes
    and/or conjugates a as asked; only a's ``lower`` (or upper) triangle is read, and
    with ``unit_diagonal`` not its diagonal either (taken to be ones)."""
    _square("triangular_solve", a)
    n = cnp.shape(a)[-1]
    side = cnp.shape(b)[-2] if left_side else cnp.shape(b)[-1]
    if side != n:
        raise ValueError(f"lax.linalg.triangular_solve: a is {n}x{n} but b has shape "
                         f"{tuple(cnp.shape(b))} (its {'rows' if left_side else 'columns'} "
                         f"should number {n})")
    a = cnp.tril(a) if lower else cnp.triu(a)
    if unit_diagonal:
        a = a - cnp.tril(cnp.triu(a)) + cnp.eye(n, dtype=cnp.result_type(a))
    if conjugate_a:
        a = cnp.conj(a)
    if transpose_a:
        a, lower = _mT(a), not lower
    if left_side:
        return _linalg.solve_triangular(a, b, lower=lower)
    # x @ a = b  <=>  a^T @ x^T = b^T
    return _mT(_linalg.solve_triangular(_mT(a), _mT(b), lower=not lower))


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Any:
    """x with ``a @ x = b`` for the tridiagonal a with ``a[i, i-1] = dl[i]``,
    ``a[i, i] = d[i]`` and ``a[i, i+1] = du[i]`` (``dl[0]`` and ``du[-1]`` unread). A
    singular a raises, unless ``perturb_singular``: then a zero pivot is perturbed and
    the result stays finite (large, along a's null space: inverse iteration's step)."""
    m = cnp.shape(d)[-1]
    for name, v in (("dl", dl), ("du", du)):
        if cnp.shape(v) != cnp.shape(d):
            raise ValueError(f"lax.linalg.tridiagonal_solve: {name} has shape "
                             f"{tuple(cnp.shape(v))}, d has {tuple(cnp.shape(d))}; "
                             f"expected the same")
    if cnp.shape(b)[-2] != m:
        raise ValueError(f"lax.linalg.tridiagonal_solve: b has shape {tuple(cnp.shape(b))}; "
                         f"expected [..., {m}, k] for diagonals of length {m}")
    if perturb_singular:
        return _perturbed_tridiagonal_solve(dl, d, du, b)
    dtype = cnp.result_type(dl, d, du, b)
    a = (cnp.eye(m, k=-1, dtype=dtype) * cnp.expand_dims(dl, -1)
         + cnp.eye(m, dtype=dtype) * cnp.expand_dims(d, -1)
         + cnp.eye(m, k=1, dtype=dtype) * cnp.expand_dims(du, -1))
    return _linalg.solve(a, b)


def _perturbed_tridiagonal_solve(dl, d, du, b):
    """The solve that stays finite on a singular matrix, as JAX's CPU kernel gives it
    (the elimination of LAPACK's dlagtf, the inverse iteration's): two rows swap where
    the lower one's entry is the larger relative to its row's size; in the back
    substitution a pivot of exactly 0 becomes ``eps * max|U|`` with the zero's sign
    (the smallest normal number where that maximum is 0). The maximum runs over the
    rows of U that JAX's kernel reads for it: the first row as given, the rows the
    elimination has finished but the last two, and the last pivot. Where no pivot is 0
    this is the plain solve, and its derivative is the elimination's."""
    m = cnp.shape(d)[-1]
    dtype = cnp.result_type(dl, d, du, b)
    real = np.finfo(np.dtype(dtype)).dtype  # (the precision of a complex dtype's parts)
    a = [d[..., k] for k in range(m)]     # U's diagonal
    up = [du[..., k] for k in range(m)]   # U's first superdiagonal
    up2 = [0.0] * m                       # the second, filled in by row swaps
    rows = [b[..., k, :] for k in range(m)]
    scale = cnp.abs(a[0]) + cnp.abs(up[0])  # the size of the row that holds the pivot
    sizes = [cnp.abs(a[0])] + ([cnp.abs(up[0])] if m > 1 else [])

    def ratio(x, size):  # |x| / size, 0 where x is 0
        return cnp.where(x == 0, 0.0, cnp.abs(x) / cnp.where(x == 0, 1.0, size))

    for k in range(m - 1):
        c = dl[..., k + 1]
        below = cnp.abs(c) + cnp.abs(a[k + 1]) + (cnp.abs(up[k + 1]) if k < m - 2 else 0.0)
        swap = ratio(c, below) > ratio(a[k], scale)
        keep_factor = c / cnp.where(swap | (c == 0), 1.0, a[k])
        swap_factor = a[k] / cnp.where(swap, c, 1.0)
        a[k], a[k + 1], up[k] = (cnp.where(swap, c, a[k]),
                                 cnp.where(swap, up[k] - swap_factor * a[k + 1],
                                           a[k + 1] - keep_factor * up[k]),
                                 cnp.where(swap, a[k + 1], up[k]))
        if k < m - 2:
            up2[k], up[k + 1] = (cnp.where(swap, up[k + 1], 0.0),
                                 cnp.where(swap, -swap_factor * up[k + 1], up[k + 1]))
            sizes += [cnp.abs(a[k]), cnp.abs(up[k]), cnp.abs(up2[k])]
        flag = swap[..., None]
        rows[k], rows[k + 1] = (cnp.where(flag, rows[k + 1], rows[k]),
                                cnp.where(flag, rows[k] - swap_factor[..., None] * rows[k + 1],
                                          rows[k + 1] - keep_factor[..., None] * rows[k]))
        scale = cnp.where(swap, cnp.abs(a[k + 1]) + cnp.abs(up[k + 1]), below)
    if m > 1:
        sizes.append(cnp.abs(a[m - 1]))
    largest = cnp.max(cnp.stack(sizes), axis=0)
    perturbation = cnp.maximum(np.finfo(real).eps * largest, np.finfo(real).tiny)
    x = [None] * m
    for k in reversed(range(m)):
        rest = rows[k]
        if k + 1 < m:
            rest = rest - up[k][..., None] * x[k + 1]
        if k + 2 < m:
            rest = rest - up2[k][..., None] * x[k + 2]
        pivot, rest = _safe_pivot(a[k], rest, perturbation, np.finfo(real).tiny)
        x[k] = rest * (1.0 / pivot)[..., None]
    return cnp.stack(x, axis=-2)


def _safe_pivot(pivot, rest, perturbation, safemin):
    """``(pivot, rest)`` such that ``rest / pivot`` neither overflows nor divides by 0,
    as LAPACK's dlagts does it: a pivot below 1 whose quotient would pass the largest
    number (or that is 0) has ``perturbation``, then twice it, four times... added, with
    its own sign, until the quotient fits; a subnormal pivot whose quotient fits has
    both scaled up."""
    size = cnp.abs(pivot)
    numerator = cnp.max(cnp.abs(rest), axis=-1)
    add = (size < 1) & ((size == 0) | (numerator * safemin > size))
    target = cnp.minimum(1.0, numerator * safemin)
    doublings = cnp.maximum(1.0, cnp.ceil(cnp.log2(cnp.maximum(target - size, 0.0)
                                                   / perturbation + 1.0)))
    signed = cnp.where(cnp.signbit(cnp.real(pivot)), -perturbation, perturbation)
    scale = cnp.where(~add & (size < safemin) & (size != 0), 1.0 / safemin, 1.0)
    pivot = cnp.where(add, pivot + signed * (2.0 ** doublings - 1.0), pivot * scale)
    return pivot, rest * scale[..., None]


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """R' upper triangular with ``R'^T R' = R^T R + w w^T``: the Cholesky factor after
    a rank-one update."""
    _square("cholesky_update", r_matrix)
    a = _mT(r_matrix) @ r_matrix + cnp.outer(w_vector, w_vector)
    return _mT(_linalg.cholesky(a))


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.0,
                      beta: float = 0.0, symmetrize_output: bool = False) -> Any:
    """``alpha * a @ a^T + beta * c``; with ``symmetrize_output`` its lower triangle
    mirrored above the diagonal (BLAS's syrk writes only that triangle: a c that is not
    symmetric leaves its own upper triangle out)."""
    out = alpha * (a_matrix @ _mT(a_matrix)) + beta * c_matrix
    return cnp.tril(out) + _mT(cnp.tril(out, -1)) if symmetrize_output else out


def householder_product(a: Any, taus: Any) -> Any:
    """The first n columns of ``H_0 H_1 ... H_{k-1}``, ``H_i = I - taus[i] v_i v_i^H``,
    where v_i is 0 above row i, 1 at row i and a's column i below it (LAPACK's
    packed reflectors, as geqrf leaves them)."""
    shape = cnp.shape(a)
    m, n, k = shape[-2], shape[-1], cnp.shape(taus)[-1]
    if k > min(m, n):
        raise ValueError(f"lax.linalg.householder_product: {k} taus for a matrix of "
                         f"shape {tuple(shape)}; expected at most {min(m, n)}")
    dtype = cnp.result_type(a, taus)
    q = cnp.broadcast_to(cnp.eye(m, dtype=dtype), tuple(shape[:-2]) + (m, m))
    for i in range(k):
        v = _reflector(a, i, dtype)
        q = q - (taus[..., i, None, None] * (q @ v)) @ _mH(v)
    return q[..., :, :n]


def _reflector(a, i, dtype):
    """v_i, a column: 0 above row i, 1 at row i and a's column i below it."""
    rows = np.arange(cnp.shape(a)[-2])[:, None]
    return cnp.where(rows > i, a[..., :, i:i + 1], 0) + \
        cnp.asarray((rows == i).astype(np.float64), dtype=dtype)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """c multiplied by the Q that the reflectors packed in a and taus describe (see
    ``householder_product``), without forming Q: ``Q @ c`` (``left``), ``c @ Q`` (not),
    with Q's conjugate transpose for ``transpose``. Each reflector ``I - tau v v^H`` is
    applied in turn, in the order the product asks for."""
    shape, k = cnp.shape(a), cnp.shape(taus)[-1]
    m = shape[-2]
    if cnp.shape(c)[-2 if left else -1] != m:
        side = "rows" if left else "columns"
        raise ValueError(f"lax.linalg.ormqr: c has shape {tuple(cnp.shape(c))}; expected "
                         f"{m} {side}, as a has {m} rows (left={left})")
    if k > min(m, shape[-1]):
        raise ValueError(f"lax.linalg.ormqr: {k} taus for a matrix of shape "
                         f"{tuple(shape)}; expected at most {min(m, shape[-1])}")
    dtype = cnp.result_type(a, taus)
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for i in order:
        v = _reflector(a, i, dtype)
        tau = taus[..., i, None, None]
        tau = cnp.conj(tau) if transpose else tau
        c = c - tau * (v @ (_mH(v) @ c)) if left else c - tau * ((c @ v) @ _mH(v))
    return c


def hessenberg(a: Any) -> list[Any]:
    """``[a, taus]``: the upper Hessenberg form of a on and above its first
    subdiagonal, the reflectors that reach it below (LAPACK's gehrd). No derivative,
    as JAX gives none."""
    _square("hessenberg", a)
    return [_reduced("gehrd", 0)(a), _reduced("gehrd", 1)(a)]


def tridiagonal(a: Any, *, lower: bool = True) -> list[Any]:
    """``[a, d, e, taus]``: the tridiagonal form of the symmetric (Hermitian) a that
    its ``lower`` (else upper) triangle describes, as LAPACK's sytrd/hetrd packs it:
    the diagonal d, the off-diagonal e, and the reflectors in a's other entries of that
    triangle, with their taus. No derivative, as JAX gives none."""
    _square("tridiagonal", a)
    return [_reduced("sytrd", i, bool(lower))(a) for i in range(4)]


def _per_matrix(function, x):
    """``function`` (NumPy arrays in and out) on each matrix of the batch x, stacked."""
    parts = [function(matrix) for matrix in x.reshape((-1,) + x.shape[-2:])]
    return np.stack(parts).reshape(x.shape[:-2] + parts[0].shape)


def _geqp3_order(x):
    """geqp3's column order for each matrix of the batch (int32)."""
    import scipy.linalg
    return _per_matrix(lambda matrix: scipy.linalg.qr(matrix, mode="r", pivoting=True)[1]
                       .astype(np.int32), x)


_pivoted_columns = Primitive(lambda x: xp.call(_geqp3_order, x), "qr_pivots")


@functools.cache
def _reduced(routine, output, lower=None):
    """A primitive without derivative giving output ``output`` of the LAPACK reduction
    ``routine`` (gehrd; sytrd, or hetrd for complex matrices), matrix by matrix."""
    keywords = {} if lower is None else {"lower": int(lower)}

    def run(x):
        import scipy.linalg.lapack as lapack
        name = "hetrd" if routine == "sytrd" and np.iscomplexobj(x) else routine
        function = lapack.get_lapack_funcs(name, (x,))
        return _per_matrix(lambda matrix: function(matrix, **keywords)[output], x)
    return Primitive(lambda x: xp.call(run, x), f"{routine}_{output}")


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> Any:
    """``[t, z]`` (``[t]`` without the vectors) with ``x = z @ t @ z^H``, t (quasi-)upper triangular (complex input:
    upper triangular), as LAPACK's gees; no derivative, as JAX gives none."""
    scipy_linalg = _scipy("schur")
    if sort_eig_vals or select_callable is not None:
        raise ValueError("lax.linalg.schur: sort_eig_vals and select_callable are "
                         "not supported; sort the eigenvalues of t afterwards")
    _square("schur", x)
    complex_input = np.issubdtype(cnp.result_type(x), np.complexfloating)
    t, z = scipy_linalg.schur(x, output="complex" if complex_input else "real")
    return [t, z] if compute_schur_vectors else [t]
