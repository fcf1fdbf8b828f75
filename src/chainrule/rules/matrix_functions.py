"""Matrix functions composed from the decompositions and products: the
pseudo-inverse (a primitive with its own rules), trace, matrix_power, lstsq and the
vector and matrix norms of ``cr.linalg.norm``. Batched on leading axes as
numpy.linalg is.
"""

import builtins

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, ndim_of, raw, shape_of
from ..arrays import ARRAYS
from .common import Result, op
from .complexes import conj, is_complex
from .decompositions import svdvals
from .elementwise import absolute, power, sign
from .linalg import matmul
from .matrices import check_matrix, check_square, eye_like, mH, mT
from .reductions import max, min, norm, sum
from .shapes import reshape, transpose
from .solves import inv

__all__ = ["pinv", "trace", "matrix_power", "lstsq"]
METHODS = ["trace"]  # also methods of Tensor


@op("pinv", batching=LEADING_AXES)
def pinv(a, rcond=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse, as np.linalg.pinv (batched).

    Singular values below ``rcond`` times the largest count as zero (NumPy's default
    1e-15). The derivative assumes the rank stays the same nearby (Golub & Pereyra
    1973); at a change of rank the pseudo-inverse is not continuous.

    >>> a = cr.tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]], requires_grad=True)
    >>> cr.pinv(a).data.tolist()              # or cr.linalg.pinv(a)
    [[1.0, 0.0, 0.0], [0.0, 0.5, 0.0]]
    """
    check_matrix("pinv", a)
    return xp.linalg.pinv(a, 1e-15 if rcond is None else rcond, hermitian)


def _pinv_jvp(t, ans, a, rcond=None, hermitian=False):
    # Golub & Pereyra 1973, "The differentiation of pseudo-inverses", eq. 4.12:
    # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
    p = ans
    ta = mH(t)
    first = -matmul(matmul(p, t), p)
    second = matmul(matmul(p, mH(p)), ta - matmul(matmul(ta, a), p))
    third = matmul(ta - matmul(p, matmul(a, ta)), matmul(mH(p), p))
    return first + second + third


def _pinv_vjp(g, ans, a, rcond=None, hermitian=False):
    # The adjoint of _pinv_jvp under Re(c t) (a transpose moves a factor across it, and
    # dA^H's coefficient comes back conjugated and transposed):
    # Abar = -P^T G P^T + (I - conj(A P)) G^H conj(P) P^T + P^T conj(P) G^H (I - conj(P A)).
    p = ans
    cplx = is_complex(a)
    gt = mH(g) if cplx else mT(g)
    ca, cp = (conj(a), conj(p)) if cplx else (a, p)
    first = -matmul(matmul(mT(p), g), mT(p))
    second = matmul(gt - matmul(ca, matmul(cp, gt)), matmul(cp, mT(p)))
    third = matmul(matmul(mT(p), cp), gt - matmul(matmul(gt, cp), ca))
    return first + second + third


pinv.defvjp(_pinv_vjp)
pinv.defjvp(_pinv_jvp)


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Result:
    """The sum along a diagonal, as np.trace: the diagonal ``offset`` above the main
    one (below if negative) of the matrices spanned by ``axis1`` and ``axis2``.

    >>> x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = cr.trace(x)                       # or x.trace()
    >>> y.item()
    5.0
    >>> y.backward()
    >>> x.grad.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    nd = ndim_of(a)
    if nd < 2:
        raise ValueError(f"trace: an array of shape {shape_of(a)}; expected at least 2-D")
    ax1, ax2 = axis1 % nd, axis2 % nd
    if ax1 == ax2:
        raise ValueError(f"trace: axis1 and axis2 are both axis {ax1}; expected two axes")
    rest = [i for i in range(nd) if i not in (ax1, ax2)]
    moved = transpose(a, tuple(rest + [ax1, ax2]))
    n, m = shape_of(a)[ax1], shape_of(a)[ax2]
    return sum(moved * eye_like(n, a, offset, m), axis=(-2, -1))


def matrix_power(a: ArrayLike, n: int) -> Result:
    """a multiplied by itself n times (n an integer), as np.linalg.matrix_power:
    the identity for n = 0, powers of the inverse for n < 0. Built from matmul (and
    inv), so it needs no rules of its own.

    >>> a = cr.tensor([[1.0, 1.0], [0.0, 1.0]])
    >>> cr.matrix_power(a, 3).data.tolist()   # or cr.linalg.matrix_power(a, 3)
    [[1.0, 3.0], [0.0, 1.0]]
    """
    check_square("matrix_power", a)
    if not isinstance(n, (int, xp.integer)):
        raise TypeError(f"matrix_power: exponent {n!r}; expected an integer")
    if n == 0:
        return a * 0 + eye_like(shape_of(a)[-1], a)
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while n:  # binary powers: log2(n) products
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None) -> Result:
    """The least-squares solution of a @ x = b, as np.linalg.lstsq: ``(x, residuals,
    rank, s)``, composed from the pseudo-inverse (x = pinv(a) @ b).

    residuals (the squared norm of b - a @ x for each column) are given when a has
    full column rank and more rows than columns, else an empty array, as in NumPy;
    rank is a plain integer; s are the singular values. Derivatives hold while the
    rank stays the same.

    >>> a = cr.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> x, res, rank, s = cr.lstsq(a, cr.tensor([1.0, 1.0, 3.0]))
    >>> np.round(x.data, 12).tolist(), rank
    ([1.333333333333, 1.333333333333], 2)
    """
    check_matrix("lstsq", a)
    if ndim_of(a) != 2 or ndim_of(b) not in (1, 2) or shape_of(b)[0] != shape_of(a)[0]:
        raise ValueError(f"lstsq: a of shape {shape_of(a)} and b of shape {shape_of(b)}; "
                         f"expected (m, n) and (m,) or (m, k)")
    m, n = shape_of(a)
    cutoff = xp.finfo(xp.result_type(raw(a))).eps * builtins.max(m, n) if rcond is None \
        else rcond
    p = pinv(a, cutoff)
    x = matmul(p, b)
    singular = xp.linalg.svd(raw(a), compute_uv=False)
    rank = xp.sum(singular > cutoff * singular[0]) if singular.size else 0
    rank = rank if type(rank) in ARRAYS else int(rank)  # (traced by cr.jit: stays so)
    if xp.branch(rank == n, "lstsq's 'a has full column rank'") and m > n:
        r = b - matmul(a, x)
        residuals = sum(r * r, axis=0) if ndim_of(b) == 2 else reshape(sum(r * r), (1,))
    else:
        residuals = xp.empty((0,), dtype=xp.result_type(raw(a)))
    return x, residuals, rank, svdvals(a)


# ---------------------------------------------------------------------------------------
# Norms (cr.linalg.norm): vector and matrix norms composed from the table
# ---------------------------------------------------------------------------------------

def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return norm(x, axis=axis, keepdims=keepdims)
    if ord == xp.inf:
        return max(absolute(x), axis=axis, keepdims=keepdims)
    if ord == -xp.inf:
        return min(absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:  # the count of nonzero entries: sign(|x|) has derivative 0
        return sum(sign(absolute(x)), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(absolute(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: ord={ord!r} for a vector norm; expected a number")
    return power(sum(power(absolute(x), ord), axis=axis, keepdims=keepdims), 1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    nd = ndim_of(x)
    r, c = (a % nd for a in axes)
    if r == c:
        raise ValueError(f"norm: axis={axes} names one axis twice; expected two axes")
    if ord in (None, "fro"):
        out = norm(x, axis=(r, c))
    elif ord in ("nuc", 2, -2):
        rest = [i for i in range(nd) if i not in (r, c)]
        s = svdvals(transpose(x, tuple(rest + [r, c])))
        out = sum(s, axis=-1) if ord == "nuc" else max(s, axis=-1) if ord == 2 \
            else min(s, axis=-1)
    elif ord in (1, -1, xp.inf, -xp.inf):
        across, along = (r, c) if ord in (1, -1) else (c, r)  # 1: column sums
        sums = sum(absolute(x), axis=across, keepdims=True)
        reduce = max if ord in (1, xp.inf) else min
        out = reduce(sums, axis=(along, across))
    else:
        raise ValueError(f"norm: ord={ord!r} for a matrix norm; expected 'fro', 'nuc', "
                         f"1, -1, 2, -2, inf or -inf")
    if keepdims:
        shape = list(shape_of(x))
        shape[r] = shape[c] = 1
        out = reshape(out, tuple(shape))
    return out


def linalg_norm(x, ord=None, axis=None, keepdims=False):
    """The vector or matrix norm, as np.linalg.norm (``cr.linalg.norm``).

    Vector norms (1-D x, or an int ``axis``): ord None or 2 (Euclidean), 1, inf
    (largest |x|), -inf, 0 (count of nonzeros) or any p (sum |x|^p)^(1/p). Matrix
    norms (2-D x, or a pair ``axis``): 'fro' (the default), 'nuc' (sum of singular
    values), 2 and -2 (largest and smallest singular value), 1, -1, inf, -inf
    (largest/smallest column or row sum of |x|). With ord None and axis None, the
    2-norm of all entries, whatever the shape. (``cr.norm`` is the 2-norm only.)

    >>> x = cr.tensor([[3.0, 0.0], [0.0, -4.0]], requires_grad=True)
    >>> cr.linalg.norm(x, "nuc").item(), cr.linalg.norm(x, 2).item()
    (7.0, 4.0)
    >>> cr.linalg.norm(x, 1, axis=1).data.tolist()
    [3.0, 4.0]
    """
    nd = ndim_of(x)
    if axis is None:
        if ord is None:
            return norm(x, axis=None, keepdims=keepdims)
        if nd == 1:
            return _vector_norm(x, ord, 0, keepdims)
        if nd == 2:
            return _matrix_norm(x, ord, (0, 1), keepdims)
        raise ValueError(f"norm: ord={ord!r} for an array of shape {shape_of(x)}; "
                         f"expected 1-D or 2-D, or an axis")
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: axis={axis!r}; expected an int or a pair of ints")



def vector_norm(x, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis`` (None: all entries, whatever the shape), as NumPy
    2's np.linalg.vector_norm; ``ord`` as for the vector norms of ``cr.linalg.norm``.

    >>> cr.linalg.vector_norm(cr.tensor([[3.0, 0.0], [0.0, -4.0]])).item()
    5.0
    >>> cr.linalg.vector_norm(cr.tensor([[3.0, 0.0], [0.0, -4.0]]), ord=1).item()
    7.0
    """
    return _vector_norm(x, ord, axis if axis is None or not isinstance(axis, list)
                        else tuple(axis), keepdims)


def matrix_norm(x, keepdims=False, ord="fro"):
    """The matrix norm of each matrix (last two axes), as NumPy 2's
    np.linalg.matrix_norm; ``ord`` as for the matrix norms of ``cr.linalg.norm``.

    >>> cr.linalg.matrix_norm(cr.tensor([[3.0, 0.0], [0.0, -4.0]]), ord="nuc").item()
    7.0
    """
    check_matrix("matrix_norm", x)
    return _matrix_norm(x, ord, (-2, -1), keepdims)


def multi_dot(arrays):
    """The product of a list of matrices, as np.linalg.multi_dot: a first 1-D array is
    a row, a last one a column. Built from matmul, left to right.

    >>> a, b, c = cr.ones(2, 3), cr.ones(3, 4), cr.ones(4)
    >>> cr.linalg.multi_dot([a, b, c]).data.tolist()
    [12.0, 12.0]
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: {len(arrays)} array(s); expected at least 2")
    result = arrays[0]
    for array in arrays[1:]:
        result = matmul(result, array)
    return result
