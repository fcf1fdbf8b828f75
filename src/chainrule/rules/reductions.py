"""Reductions (sum, mean, max, min, prod, var, std, norm, logsumexp, trapezoid, ptp, and
NaN-ignoring nansum, nanmean, nanmax, nanmin) and the normalisations along an axis
(softmax, log_softmax).

A reduction's gradient is g spread back along the reduced axes (``expand_reduced``),
times what each entry contributed. ``unbroadcast`` is the reverse: it sums a gradient
back to the shape of an operand that was broadcast, the one place the engine undoes
broadcasting.

Conventions: ties in max and min share the gradient evenly (so in ptp too, as JAX's);
the gradient of norm at 0 is 0 (PyTorch's choice); prod's gradient is exact with zeros
among the entries. The nan* reductions are compositions, as JAX's: NaN entries replaced
by what the reduction ignores (0 for a sum, -inf for a max), so they get no gradient,
and a slice of NaN alone gives NaN (0 for nansum) with a gradient of 0.
"""

import builtins
import functools

from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..primitive import along_axis, elementwise, ndim_of, raw, shape_of
from ..arrays import as_array
from .common import TORCH_NAMES, Result, axes_of, float_dtype, from_end, op, torch_names
from .complexes import conj, is_complex, real
from .elementwise import exp, where
from .shapes import astype, broadcast_to, reshape

__all__ = ["sum", "mean", "max", "min", "prod", "var", "std", "logsumexp", "softmax",
           "log_softmax", "norm", "trapezoid", "ptp", "nansum", "nanmean", "nanmax",
           "nanmin"]
# also methods of Tensor (x.norm is torch's, with p first: methods/torch_names.py)
METHODS = ["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp", "softmax",
           "log_softmax"]


def expand_reduced(g, shape, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction back to the shape it reduced (keeping any
    leading batch axes of g)."""
    shape = tuple(shape)
    axes = axes_of(axis, len(shape))
    batch = tuple(shape_of(g)[:ndim_of(g) - (len(shape) if keepdims else
                                              len(shape) - len(axes))])
    if not keepdims:
        kept = list(shape)
        for a in axes:
            kept[a] = 1
        g = reshape(g, batch + tuple(kept))
    return broadcast_to(g, batch + shape)


def broadcast_axes(g_shape, shape, batch_ndim=0):
    """The axes of a gradient of shape ``g_shape`` to sum for an operand of ``shape``:
    the leading ones it lacked (after ``batch_ndim`` batch axes), and those where it had
    size 1."""
    start = len(g_shape) - len(shape)  # the operand's first axis in g
    axes = tuple(range(batch_ndim, start))
    if 1 in shape:
        axes += tuple(start + i for i, n in enumerate(shape)
                      if n == 1 and g_shape[start + i] != 1)
    return axes


def unbroadcast(g, shape, batch_ndim=0):
    """Sum a gradient of a broadcast result back to an operand's shape: first the
    leading axes the operand lacked, then the axes where it had size 1. The first
    ``batch_ndim`` axes of g (a batch of cotangents) are kept as they are."""
    shape, g_shape = tuple(shape), shape_of(g)
    axes = broadcast_axes(g_shape, shape, batch_ndim)
    target = g_shape[:batch_ndim] + shape
    if axes:
        g = sum(g, axis=axes)
    return reshape(g, target) if shape_of(g) != target else g


@op("sum", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def sum(x, axis=None, keepdims=False):  # noqa: A001  (cr.sum, like np.sum)
    """The sum over ``axis`` (an int, a tuple, or None for all), like np.sum.

    The result has x's shape without the summed axes (kept as size 1 with
    ``keepdims=True``). Every entry counts once, so the gradient is g spread back
    over the summed axes.

    >>> x = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)  # (2, 3)
    >>> cr.sum(x, axis=0)                     # shape (3,); or x.sum(axis=0)
    tensor([5., 7., 9.], grad_fn=sum)
    >>> x.sum(axis=1, keepdims=True).shape
    (2, 1)
    >>> x.sum().backward()
    >>> x.grad.tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    return xp.sum(x, axis=axis, keepdims=keepdims)


sum.defvjp(lambda g, ans, x, axis=None, keepdims=False:
           expand_reduced(g, shape_of(x), axis, keepdims),
           text=("{g} copied to every summed position",))
sum.defjvp(lambda t, ans, x, axis=None, keepdims=False:
           sum(t, from_end(axis, ndim_of(x)), keepdims))


def _count(x, ans):
    return xp.size(x) // builtins.max(xp.size(ans), 1) if xp.size(x) else 0


@op("mean", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def mean(x, axis=None, keepdims=False):
    """The mean over ``axis`` (an int, a tuple, or None for all), like np.mean.

    Shapes as for ``sum``; each of the n averaged entries gets 1/n of the gradient.

    >>> x = cr.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> m = cr.mean(x)                        # or x.mean()
    >>> m
    tensor(2.5, grad_fn=mean)
    >>> m.backward()
    >>> x.grad.tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return xp.mean(x, axis=axis, keepdims=keepdims)


mean.defvjp(lambda g, ans, x, axis=None, keepdims=False:
            expand_reduced(g, shape_of(x), axis, keepdims) / _count(x, ans),
            text=("{g} / n copied to every averaged position",))
mean.defjvp(lambda t, ans, x, axis=None, keepdims=False:
            mean(t, from_end(axis, ndim_of(x)), keepdims))


def _extremum_share(x, ans, axis, keepdims):
    """Where x attains its max (or min): ties share evenly, so the shares sum to 1."""
    x = raw(x)
    hit = x == expand_reduced(raw(ans), shape_of(x), axis, keepdims)
    return hit / xp.sum(hit, axis=axes_of(axis, ndim_of(x)), keepdims=True)


@op("max", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def max(x, axis=None, keepdims=False):  # noqa: A001
    """The largest entry over ``axis`` (an int, a tuple, or None for all), like np.max.

    Shapes as for ``sum``. The gradient goes to the largest entry; entries tied for
    the maximum share it evenly.

    >>> x = cr.tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> m = cr.max(x)                         # or x.max()
    >>> m.item()
    3.0
    >>> m.backward()
    >>> x.grad.tolist()                       # a tie: half each
    [0.0, 0.5, 0.5]
    """
    return xp.max(x, axis=axis, keepdims=keepdims)


@op("min", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def min(x, axis=None, keepdims=False):  # noqa: A001
    """The smallest entry over ``axis`` (an int, a tuple, or None for all), like np.min.

    Shapes as for ``sum``. The gradient goes to the smallest entry; entries tied for
    the minimum share it evenly.

    >>> x = cr.tensor([[2.0, 1.0], [0.0, 5.0]], requires_grad=True)
    >>> m = cr.min(x, axis=1)                 # the smallest of each row, shape (2,)
    >>> m.data.tolist()
    [1.0, 0.0]
    >>> m.sum().backward()
    >>> x.grad.tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    return xp.min(x, axis=axis, keepdims=keepdims)


for _extremum in (max, min):
    _extremum.defvjp(lambda g, ans, x, axis=None, keepdims=False:
                     expand_reduced(g, shape_of(x), axis, keepdims)
                     * _extremum_share(x, ans, axis, keepdims))
    _extremum.defjvp(lambda t, ans, x, axis=None, keepdims=False:
                     sum(t * _extremum_share(x, ans, axis, keepdims),
                         from_end(axis, ndim_of(x)), keepdims))


@op("prod", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def prod(x, axis=None, keepdims=False):
    """The product over ``axis`` (an int, a tuple, or None for all), like np.prod.

    Shapes as for ``sum``. The derivative with respect to an entry is the product of
    the others, computed without dividing by the entry, so it is exact with zeros.

    >>> x = cr.tensor([2.0, 0.0, 4.0], requires_grad=True)
    >>> p = cr.prod(x)                        # or x.prod()
    >>> p.item()
    0.0
    >>> p.backward()
    >>> x.grad.tolist()                       # 0*4, 2*4, 2*0
    [0.0, 8.0, 0.0]
    """
    return xp.prod(x, axis=axis, keepdims=keepdims)


def _product_of_the_others(x, axis):
    """For each element, the product of the other elements along ``axis``.

    ans / x would divide by zero, so the zeros are kept apart: the product of the
    non-zero others (exact) times the product of the *other zeros*, written so that it
    stays differentiable in those zeros (their value is 0, their derivative is not):
    with one zero z, that product is z for every other element and 1 for z itself; with
    two zeros z1, z2, it is z1 * z2, or the other zero for each of them. With three or
    more zeros it is 0 with a first derivative of 0, exact to second order.
    """
    values = as_array(raw(x))
    is_zero = values == 0
    nonzero = where(is_zero, 1.0, x)
    others_nonzero = expand_reduced(prod(nonzero, axis, True), values.shape, axis, True) / nonzero
    count = xp.sum(is_zero, axis=axes_of(axis, values.ndim), keepdims=True)
    if type(count) is xp.ndarray and not count.any():  # no zeros: the product rule
        return others_nonzero  # (a cr.jit program takes the general formula below: the
    #                            same numbers where there are no zeros)
    zeros = where(is_zero, x, 0.0)                       # the zeros themselves, else 0
    e1 = expand_reduced(sum(zeros, axis, True), values.shape, axis, True)
    e2 = expand_reduced((sum(zeros, axis, True) ** 2 - sum(zeros * zeros, axis, True)) / 2,
                        values.shape, axis, True)           # z1 * z2 for two zeros
    other_zeros = where(count == 1, where(is_zero, 1.0, e1),
                        where(count == 2, where(is_zero, e1 - zeros, e2), 0.0 * e1))
    return where(count == 0, others_nonzero, others_nonzero * other_zeros)


prod.defvjp(lambda g, ans, x, axis=None, keepdims=False:
            expand_reduced(g, shape_of(x), axis, keepdims) * _product_of_the_others(x, axis))
prod.defjvp(lambda t, ans, x, axis=None, keepdims=False:
            sum(t * _product_of_the_others(x, axis), from_end(axis, ndim_of(x)), keepdims))


sum.casts_to_dtype = mean.casts_to_dtype = prod.casts_to_dtype = True


def _torch_corrections(function):
    """Decorator: var and std also take PyTorch's ``correction=`` (NumPy's ``ddof``) and
    ``unbiased=`` (True for ``ddof=1``, False for ``ddof=0``). Each spells the same
    number, so at most one of the three may be given."""
    @functools.wraps(function)
    def with_corrections(*args, **kwargs):
        given = [name for name in ("ddof", "correction", "unbiased") if name in kwargs]
        if len(given) + (len(args) > 2) > 1:
            raise TypeError(f"{function.__name__}: ddof, correction and unbiased say the "
                            f"same thing; give one (got {', '.join(given)})")
        if "correction" in kwargs:
            kwargs["ddof"] = kwargs.pop("correction")
        if "unbiased" in kwargs:
            kwargs["ddof"] = 1 if kwargs.pop("unbiased") else 0
        return function(*args, **kwargs)
    return with_corrections


@_torch_corrections
@torch_names
def var(x: ArrayLike, axis: int | tuple[int, ...] | None = None, ddof: int = 0,
        keepdims: bool = False, dtype: DTypeLike = None) -> Result:
    """The variance over ``axis``: the mean of (x - mean(x))**2, divided by n - ddof.

    ``ddof=0`` by default, as NumPy (PyTorch's ``correction=0``); ``ddof=1`` gives the
    unbiased estimate, PyTorch's default. PyTorch's ``correction=`` and ``unbiased=``
    are accepted too (``unbiased=True`` is ``ddof=1``). Shapes as for ``sum``.

    >>> x = cr.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> v = cr.var(x)                         # or x.var()
    >>> v.item(), round(cr.var(x, ddof=1).item(), 4), round(x.var(unbiased=True).item(), 4)
    (1.25, 1.6667, 1.6667)
    >>> v.backward()
    >>> x.grad.tolist()                       # 2 * (x - 2.5) / 4
    [-0.75, -0.25, 0.25, 0.75]
    """
    if dtype is not None:  # computed in that dtype, as NumPy's
        x = astype(x, dtype)
    centred = x - mean(x, axis, keepdims=True)
    shape = shape_of(centred)  # x's (x may be a list)
    n = int(xp.prod([shape[a] for a in axes_of(axis, len(shape))]))
    if is_complex(centred):  # |x - mean|**2, real, as NumPy's
        return real(sum(centred * conj(centred), axis, keepdims)) / (n - ddof)
    return sum(centred * centred, axis, keepdims) / (n - ddof)


@_torch_corrections
@torch_names
def std(x: ArrayLike, axis: int | tuple[int, ...] | None = None, ddof: int = 0,
        keepdims: bool = False, dtype: DTypeLike = None) -> Result:
    """The standard deviation over ``axis``, the square root of ``var`` (``ddof=0``).

    Shapes as for ``sum``.

    >>> x = cr.tensor([1.0, 3.0], requires_grad=True)
    >>> s = cr.std(x)                         # or x.std()
    >>> s.item()
    1.0
    >>> s.backward()
    >>> x.grad.tolist()                       # (x - mean) / (n * std)
    [-0.5, 0.5]
    """
    return _root_of_variance(var(x, axis, ddof, keepdims, dtype))


# sqrt, with derivative 0 where the variance is 0 (one entry, or all equal): there std
# is constant (one entry) or has a kink, where PyTorch and autograd also give 0
_root_of_variance = elementwise(
    xp.sqrt, "sqrt", lambda ans, v: 0.5 / where(raw(ans) == 0, xp.inf, ans),
    text=("0.5 / {out} * {g}, 0 where {out} = 0",),
    doc="The square root of a variance, with derivative 0 where it is 0 (see std).")


@op("logsumexp", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over ``axis``, shifted by the max so that nothing overflows.

    Shapes as for ``sum``; its gradient is the softmax of x along the reduced axes.

    >>> x = cr.tensor([1000.0, 1000.0], requires_grad=True)
    >>> y = cr.logsumexp(x)                   # exp(1000) alone would overflow
    >>> round(y.item(), 4)                    # 1000 + log 2
    1000.6931
    >>> y.backward()
    >>> x.grad.tolist()
    [0.5, 0.5]
    """
    x = as_array(x)
    m = xp.max(x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    out = m + xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else xp.squeeze(out, axis=axes_of(axis, x.ndim))


def _softmax_of(x, axis):
    """exp(x - logsumexp(x)) over ``axis``, computed as exp(x - m) / sum(exp(x - m)) with
    m the max, a constant (the softmax does not change when x shifts): subtracting a
    rounded logsumexp instead would lose every digit for huge x."""
    values = as_array(raw(x))
    shift = xp.max(values, axis=axes_of(axis, values.ndim), keepdims=True)
    shifted = exp(x - xp.where(xp.isfinite(shift), shift, 0))
    return shifted / expand_reduced(sum(shifted, axis, True), values.shape, axis, True)


logsumexp.defvjp(lambda g, ans, x, axis=None, keepdims=False:
                 expand_reduced(g, shape_of(x), axis, keepdims) * _softmax_of(x, axis))
logsumexp.defjvp(lambda t, ans, x, axis=None, keepdims=False:
                 sum(t * _softmax_of(x, axis), from_end(axis, ndim_of(x)), keepdims))


@op("softmax", aliases=TORCH_NAMES, batching=along_axis(axis=-1))
def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (the last by default), the shape of x.

    Shifted by the max first, so nothing overflows. The derivative of entry i with
    respect to x is p_i * (onehot_i - p).

    >>> x = cr.tensor([0.0, np.log(3.0)], requires_grad=True)
    >>> p = cr.softmax(x)                     # or x.softmax()
    >>> p
    tensor([0.25, 0.75], grad_fn=softmax)
    >>> p[0].backward()
    >>> x.grad.tolist()                       # 0.25 * ([1, 0] - [0.25, 0.75])
    [0.1875, -0.1875]
    """
    x = as_array(x)
    shifted = as_array(x - xp.maximum.reduce(x, axis=axis, keepdims=True))  # 0-d: an array
    if shifted.dtype.kind != "f":  # integers: a float result, as np.exp gives
        shifted = shifted.astype(xp.result_type(shifted, xp.float64))
    xp.exp(shifted, out=shifted)  # in place: the array is ours
    shifted /= xp.add.reduce(shifted, axis=axis, keepdims=True)  # (x.sum adds a wrapper)
    return shifted


# The Jacobian diag(p) - p p^T is symmetric: the same rule serves both modes (d for g or t)
softmax.defvjp(lambda d, ans, x, axis=-1:
               ans * (d - sum(d * ans, from_end(axis, ndim_of(ans)), keepdims=True)),
               symmetric=True)


@op("log_softmax", aliases=TORCH_NAMES, batching=along_axis(axis=-1))
def log_softmax(x, axis=-1):
    """The log of the softmax along ``axis`` (the last by default), the shape of x.

    Computed as (x - m) - log(sum(exp(x - m))) with m the max: exact even for huge x,
    where log(softmax(x)) would give log(0). Its gradient is g - softmax(x) * sum(g).

    >>> x = cr.tensor([1000.0, 0.0], requires_grad=True)
    >>> y = cr.log_softmax(x)                 # or x.log_softmax()
    >>> y
    tensor([    0., -1000.], grad_fn=log_softmax)
    >>> y[1].backward()
    >>> x.grad.tolist()                       # [0, 1] - softmax(x) = [0, 1] - [1, 0]
    [-1.0, 1.0]
    """
    x = as_array(x)
    shifted = x - xp.maximum.reduce(x, axis=axis, keepdims=True)  # the ufuncs themselves:
    return shifted - xp.log(xp.add.reduce(xp.exp(shifted), axis=axis, keepdims=True))


log_softmax.defvjp(lambda g, ans, x, axis=-1:
                   g - exp(ans) * sum(g, from_end(axis, ndim_of(ans)), keepdims=True))
log_softmax.defjvp(lambda t, ans, x, axis=-1:
                   t - sum(exp(ans) * t, from_end(axis, ndim_of(ans)), keepdims=True))


@op("norm", aliases=TORCH_NAMES, batching=along_axis(axis=None, keepdims=False))
def norm(x, axis=None, keepdims=False):
    """The 2-norm sqrt(sum(x**2)) over ``axis`` (None: all entries, so the Frobenius
    norm of a matrix).

    Shapes as for ``sum``. The gradient is x / norm, and 0 where the norm is 0
    (PyTorch's choice).

    >>> x = cr.tensor([3.0, 4.0], requires_grad=True)
    >>> n = cr.norm(x)                        # or x.norm()
    >>> n.item()
    5.0
    >>> n.backward()
    >>> np.round(x.grad, 6).tolist()          # x / 5
    [0.6, 0.8]
    """
    if xp.iscomplexobj(x):  # |x|, so the norm is real
        x = xp.abs(x)
    return xp.sqrt(xp.sum(xp.square(x), axis=axis, keepdims=keepdims))


def _safe_reciprocal(ans):
    """1 / ans, and 0 where ans = 0: at 0 the norm's gradient is 0 (PyTorch's choice)."""
    return 1 / where(raw(ans) == 0, xp.inf, ans)


def _conj_if_complex(x):
    """conj(x) for a complex x (d|x| = Re(conj(x) t) / |x|), x itself for a real one."""
    return conj(x) if is_complex(x) else x


def _norm_jvp(t, ans, x, axis=None, keepdims=False):
    d = sum(t * _conj_if_complex(x), from_end(axis, ndim_of(x)), keepdims)
    if is_complex(d):
        d = real(d)
    return d * _safe_reciprocal(ans)


norm.defvjp(lambda g, ans, x, axis=None, keepdims=False:
            _conj_if_complex(x) * expand_reduced(g * _safe_reciprocal(ans), shape_of(x),
                                                 axis, keepdims))
norm.defjvp(_norm_jvp)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0,
              axis: int = -1) -> Result:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, as np.trapezoid: the
    sum of (x[i+1] - x[i]) (y[i] + y[i+1]) / 2, with sample points ``x`` (1-d along the
    axis, or shaped as y) or a spacing ``dx``; composed, so differentiable in y, x and dx.

    >>> float(cr.trapezoid(np.array([1.0, 2.0, 3.0])))
    4.0
    >>> cr.grad(lambda y: cr.trapezoid(y, x=np.array([0.0, 1.0, 3.0])))(np.ones(3)).tolist()
    [0.5, 1.5, 1.0]
    """
    ndim = ndim_of(y)
    axis = axis % ndim

    def part(v, lo, hi, at):
        index = [slice(None)] * ndim_of(v)
        index[at] = slice(lo, hi)
        return v[tuple(index)]

    if x is None:
        widths = dx
    elif ndim_of(x) == 1:
        steps = part(x, 1, None, 0) - part(x, None, -1, 0)
        widths = reshape(steps, tuple(-1 if a == axis else 1 for a in range(ndim)))
    else:
        widths = part(x, 1, None, axis) - part(x, None, -1, axis)
    return sum(widths * (part(y, 1, None, axis) + part(y, None, -1, axis)) / 2.0, axis=axis)


@torch_names
def ptp(x: ArrayLike, axis: int | tuple[int, ...] | None = None,
        keepdims: bool = False) -> Result:
    """The range max - min over ``axis`` (peak to peak), as np.ptp; tied extremes share
    their part of the gradient evenly, as in max and min (and JAX's ptp).

    >>> x = cr.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
    >>> r = cr.ptp(x)
    >>> r.item()
    2.0
    >>> r.backward()
    >>> x.grad.tolist()                       # two maxima, half each; the minimum, -1
    [0.5, -1.0, 0.5, 0.0]
    """
    return max(x, axis, keepdims) - min(x, axis, keepdims)


def _nan_mask(x):
    """Where x is NaN (on its raw values: the mask has no derivative), or None for an
    integer or boolean x, which holds no NaN (the nan* reductions are then the plain ones)."""
    values = raw(x)
    dtype = getattr(values, "dtype", None) or as_array(values).dtype  # (a list)
    return xp.isnan(values) if dtype.kind in "fc" else None


def _counted(missing, axis, keepdims):
    """How many entries over ``axis`` are not NaN (an integer array, batched with x)."""
    return sum(~missing, axis, keepdims)


@torch_names
def nansum(x: ArrayLike, axis: int | tuple[int, ...] | None = None, dtype: DTypeLike = None,
           keepdims: bool = False) -> Result:
    """The sum over ``axis`` with NaN entries counted as 0, as np.nansum; they get no
    gradient (a slice of NaN alone sums to 0).

    >>> x = cr.tensor([1.0, np.nan, 2.0], requires_grad=True)
    >>> s = cr.nansum(x)
    >>> s.item()
    3.0
    >>> s.backward()
    >>> x.grad.tolist()
    [1.0, 0.0, 1.0]
    """
    if dtype is not None:  # computed in that dtype, as NumPy's
        x = astype(x, dtype)
    missing = _nan_mask(x)
    return sum(x if missing is None else where(missing, 0, x), axis, keepdims)


@torch_names
def nanmean(x: ArrayLike, axis: int | tuple[int, ...] | None = None,
            dtype: DTypeLike = None, keepdims: bool = False) -> Result:
    """The mean over ``axis`` of the entries that are not NaN, as np.nanmean; NaN where
    a slice has none (without NumPy's warning), and no gradient to NaN entries.

    >>> x = cr.tensor([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], requires_grad=True)
    >>> m = cr.nanmean(x, axis=1)
    >>> m.data.tolist()
    [2.0, nan]
    >>> m[0].backward()
    >>> x.grad.tolist()                       # 1/2 to each of the two numbers
    [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]]
    """
    if dtype is not None:
        x = astype(x, dtype)
    missing = _nan_mask(x)
    if missing is None:
        return mean(x, axis, keepdims)
    count = _counted(missing, axis, keepdims)
    empty = count == 0
    # an empty slice divides by 1, not 0, so that its gradient is 0 and not 0 * inf
    divisor = astype(where(empty, 1, count), float_dtype(x))
    return where(empty, xp.nan, nansum(x, axis, keepdims=keepdims) / divisor)


def _nan_extremum(extremum, fill, x, axis, keepdims):
    """max or min over ``axis`` of the entries that are not NaN (NaN entries replaced by
    ``fill``: -inf for max, inf for min, as JAX's), NaN where a slice has none."""
    missing = _nan_mask(x)
    if missing is None:
        return extremum(x, axis, keepdims)
    found = extremum(where(missing, fill, x), axis, keepdims)
    return where(_counted(missing, axis, keepdims) == 0, xp.nan, found)


@torch_names
def nanmax(x: ArrayLike, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False) -> Result:
    """The largest entry over ``axis`` that is not NaN, as np.nanmax (NaN where a slice
    has none); ties share the gradient evenly, as in max.

    >>> x = cr.tensor([1.0, np.nan, 4.0, 4.0], requires_grad=True)
    >>> m = cr.nanmax(x)
    >>> m.item()
    4.0
    >>> m.backward()
    >>> x.grad.tolist()
    [0.0, 0.0, 0.5, 0.5]
    """
    return _nan_extremum(max, -xp.inf, x, axis, keepdims)


@torch_names
def nanmin(x: ArrayLike, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False) -> Result:
    """The smallest entry over ``axis`` that is not NaN, as np.nanmin (NaN where a slice
    has none); ties share the gradient evenly, as in min.

    >>> x = cr.tensor([[np.nan, 2.0], [np.nan, np.nan]])
    >>> cr.nanmin(x, axis=1).data.tolist()
    [2.0, nan]
    """
    return _nan_extremum(min, xp.inf, x, axis, keepdims)
