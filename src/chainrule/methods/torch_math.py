"""PyTorch's spellings of the elementwise functions, the arithmetic, the reductions and
the small linear algebra its users call as Tensor methods: ``x.floor()``,
``x.rsqrt()``, ``x.atan2(y)``, ``x.addmm(a, b)``, ``x.amax(dim)``, ``x.kthvalue(k)``...
Each is one of the table's operations, or a composition of them, so it is
differentiable wherever the operation is, on Tensors and on the transforms' traced
values alike; those with integer results (``floor_divide``, ``bincount``) carry no
derivative, as in PyTorch; the tests and the logical and bitwise operations are in
torch_logic.py.

NumPy's names are kept where NumPy has one (``arccos`` beside torch's ``acos``); where a
name means something else in NumPy (``median``, ``repeat``), NumPy's meaning stays
(torch_names.py).
The in-place forms (``floor_``...) are a Tensor's own: torch_inplace.py.
"""

from collections import namedtuple
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import raw, shape_of
from .torch_logic import _plain

__all__ = ["TorchMath", "MinMax", "ValuesIndices"]

MinMax = namedtuple("MinMax", ["min", "max"])
MinMax.__doc__ = "``x.aminmax()``'s result: the smallest and the largest entries."
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])
ValuesIndices.__doc__ = "Entries and where they were (``kthvalue``, ``cummax``, ``cummin``)."


def _unary(name, compute, doc, example, shown):
    def method(self) -> Any:
        return compute(self)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"{doc}\n\n        >>> cr.tensor({example}).{name}().tolist()\n"
                      f"        {shown}\n        ")
    return method


def _binary(name, compute, doc, example, other, shown):
    def method(self, other: ArrayLike) -> Any:
        return compute(self, other)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"{doc}\n\n        >>> cr.tensor({example}).{name}({other}).tolist()\n"
                      f"        {shown}\n        ")
    return method


def _rsqrt(x):
    return ops.reciprocal(ops.sqrt(x))


def _frac(x):
    return x - ops.trunc(x)


def _sgn(x):
    if np.result_type(raw(x)).kind != "c":
        return ops.sign(x)
    size = ops.absolute(x)
    safe = ops.where(raw(size) == 0, 1.0, size)
    return ops.where(raw(size) == 0, 0.0, x / safe)


# name: (computation, first paragraph, example input, its output)
_UNARY = {
    "floor": (ops.floor, "The largest integer at most each entry (derivative 0).",
              "[1.5, -1.5]", "[1.0, -2.0]"),
    "ceil": (ops.ceil, "The smallest integer at least each entry (derivative 0).",
             "[1.5, -1.5]", "[2.0, -1.0]"),
    "trunc": (ops.trunc, "Each entry rounded toward zero (derivative 0).",
              "[1.5, -1.5]", "[1.0, -1.0]"),
    "fix": (ops.trunc, "Each entry rounded toward zero (torch's other name for trunc).",
            "[1.5, -1.5]", "[1.0, -1.0]"),
    "frac": (_frac, "The fractional part, ``x - x.trunc()`` (sign of x, derivative 1).",
             "[1.5, -1.25]", "[0.5, -0.25]"),
    "reciprocal": (ops.reciprocal, "``1 / x`` for each entry.", "[2.0, 4.0]", "[0.5, 0.25]"),
    "rsqrt": (_rsqrt, "``1 / sqrt(x)`` for each entry.", "[4.0, 16.0]", "[0.5, 0.25]"),
    "square": (ops.square, "``x * x`` for each entry.", "[-3.0, 2.0]", "[9.0, 4.0]"),
    "acos": (ops.arccos, "The inverse cosine of each entry.", "[1.0]", "[0.0]"),
    "arccos": (ops.arccos, "The inverse cosine of each entry (NumPy's name).", "[1.0]", "[0.0]"),
    "asin": (ops.arcsin, "The inverse sine of each entry.", "[0.0]", "[0.0]"),
    "arcsin": (ops.arcsin, "The inverse sine of each entry (NumPy's name).", "[0.0]", "[0.0]"),
    "atan": (ops.arctan, "The inverse tangent of each entry.", "[0.0]", "[0.0]"),
    "arctan": (ops.arctan, "The inverse tangent of each entry (NumPy's name).", "[0.0]",
               "[0.0]"),
    "acosh": (ops.arccosh, "The inverse hyperbolic cosine of each entry.", "[1.0]", "[0.0]"),
    "arccosh": (ops.arccosh, "The inverse hyperbolic cosine (NumPy's name).", "[1.0]",
                "[0.0]"),
    "asinh": (ops.arcsinh, "The inverse hyperbolic sine of each entry.", "[0.0]", "[0.0]"),
    "arcsinh": (ops.arcsinh, "The inverse hyperbolic sine (NumPy's name).", "[0.0]", "[0.0]"),
    "atanh": (ops.arctanh, "The inverse hyperbolic tangent of each entry.", "[0.0]", "[0.0]"),
    "arctanh": (ops.arctanh, "The inverse hyperbolic tangent (NumPy's name).", "[0.0]",
                "[0.0]"),
    "cosh": (ops.cosh, "The hyperbolic cosine of each entry.", "[0.0]", "[1.0]"),
    "sinh": (ops.sinh, "The hyperbolic sine of each entry.", "[0.0]", "[0.0]"),
    "exp2": (ops.exp2, "``2 ** x`` for each entry.", "[3.0]", "[8.0]"),
    "deg2rad": (ops.deg2rad, "Degrees to radians.", "[180.0]", "[3.141592653589793]"),
    "rad2deg": (ops.rad2deg, "Radians to degrees.", "[0.0]", "[0.0]"),
    "negative": (ops.negative, "``-x`` (torch's and NumPy's other name for neg).", "[1.0]",
                 "[-1.0]"),
    "positive": (lambda x: x, "``+x``: the tensor itself.", "[1.0]", "[1.0]"),
    "absolute": (ops.absolute, "``|x|`` for each entry (the other name for abs).", "[-2.0]",
                 "[2.0]"),
    "sinc": (ops.sinc, "``sin(pi x) / (pi x)`` for each entry (1 at 0), as torch.sinc.",
             "[0.0, 1.0]", "[1.0, 3.8981718325193755e-17]"),
    "sgn": (_sgn, "The sign of each entry: -1, 0 or 1; of a complex entry ``x / |x|`` "
            "(0 for 0), as torch.sgn.", "[-2.0, 0.0, 3.0]", "[-1.0, 0.0, 1.0]"),
}


def _xlogy(x, other):
    # as torch's: 0 (and derivative 0 in x) where x is 0 and other is at most 0; where
    # x is 0 and other positive, the derivative in x is still log(other)
    with np.errstate(invalid="ignore"):
        dead = (raw(x) == 0) & (raw(other) <= 0)
    safe = ops.where(dead, 1.0, other)
    return ops.where(dead, 0.0, x * ops.log(safe))


def _copysign(x, other):
    flip = np.signbit(raw(x)) != np.signbit(raw(other))
    return ops.where(flip, -x, x)


def _float_power(x, other):
    wide = np.complex128 if np.result_type(raw(x), raw(other)).kind == "c" else np.float64
    x = ops.astype(x, wide) if np.result_type(raw(x)) != wide else x
    if hasattr(other, "dtype") and np.result_type(raw(other)) != wide:
        other = ops.astype(other, wide)
    return ops.power(x, other)


_BINARY = {
    "atan2": (ops.arctan2, "The angle of the point (other, self): ``atan(self / other)`` "
              "in the right quadrant, as torch.atan2.", "[1.0]", "1.0", "[0.7853981633974483]"),
    "arctan2": (ops.arctan2, "The angle of the point (other, self) (NumPy's name).",
                "[0.0]", "1.0", "[0.0]"),
    "hypot": (ops.hypot, "``sqrt(self ** 2 + other ** 2)``, without overflow.", "[3.0]",
              "4.0", "[5.0]"),
    "fmod": (ops.fmod, "The remainder of ``self / other`` with the sign of self (C's "
             "fmod), as torch.fmod.", "[-3.0, 3.0]", "2.0", "[-1.0, 1.0]"),
    "remainder": (ops.remainder, "The remainder of ``self / other`` with the sign of other "
                  "(Python's %), as torch.remainder.", "[-3.0, 3.0]", "2.0", "[1.0, 1.0]"),
    "true_divide": (ops.divide, "``self / other``.", "[3.0]", "2.0", "[1.5]"),
    "multiply": (ops.multiply, "``self * other``.", "[3.0]", "2.0", "[6.0]"),
    "logaddexp": (ops.logaddexp, "``log(exp(self) + exp(other))``, without overflow.",
                  "[0.0]", "0.0", "[0.6931471805599453]"),
    "logaddexp2": (ops.logaddexp2, "``log2(2 ** self + 2 ** other)``, without overflow.",
                   "[1.0]", "1.0", "[2.0]"),
    "fmax": (ops.fmax, "The larger of the two, entry by entry, ignoring a NaN (the other "
             "is taken), as torch.fmax.", "[1.0, np.nan]", "0.0", "[1.0, 0.0]"),
    "fmin": (ops.fmin, "The smaller of the two, entry by entry, ignoring a NaN, as "
             "torch.fmin.", "[1.0, np.nan]", "0.0", "[0.0, 0.0]"),
    "copysign": (_copysign, "``|self|`` with the sign of other (of -0.0 too), as "
                 "torch.copysign; no derivative in other.", "[1.0, -2.0]", "-0.0",
                 "[-1.0, -2.0]"),
    "xlogy": (_xlogy, "``self * log(other)``, 0 where self is 0 (even where other is 0), "
              "as torch.xlogy.", "[0.0, 2.0]", "cr.tensor([0.0, 1.0])", "[0.0, 0.0]"),
    "float_power": (_float_power, "``self ** other`` computed in float64 (complex128 for "
                    "complex), as torch.float_power.", "[2.0]", "3", "[8.0]"),
}


class TorchMath:
    """PyTorch's elementwise, arithmetic, reduction and linear-algebra method names."""

    __slots__ = ()

    for _name, (_f, _doc, _example, _shown) in _UNARY.items():
        locals()[_name] = _unary(_name, _f, _doc, _example, _shown)
    for _name, (_f, _doc, _example, _other, _shown) in _BINARY.items():
        locals()[_name] = _binary(_name, _f, _doc, _example, _other, _shown)
    del _name, _f, _doc, _example, _shown, _other

    def divide(self, other: ArrayLike, *, rounding_mode: str | None = None) -> Any:
        """``self / other``; ``rounding_mode="trunc"`` rounds toward zero, ``"floor"``
        down (those two carry no derivative), as torch.divide.

        >>> cr.tensor([-7.0]).divide(2.0, rounding_mode="trunc").tolist()
        [-3.0]
        """
        if rounding_mode is None:
            return ops.divide(self, other)
        if rounding_mode == "trunc":
            return ops.trunc(ops.divide(self, other))
        if rounding_mode == "floor":
            return self.floor_divide(other)
        raise ValueError(f"divide: rounding_mode must be None, 'trunc' or 'floor', got "
                         f"{rounding_mode!r}")

    def floor_divide(self, other: ArrayLike) -> Any:
        """``self // other``: the quotient rounded down (no derivative), as torch's.

        >>> cr.tensor([-7.0, 7.0]).floor_divide(2.0).tolist()
        [-4.0, 3.0]
        """
        return _plain(self, np.floor_divide(raw(self), raw(other)))

    def subtract(self, other: ArrayLike, *, alpha: float = 1) -> Any:
        """``self - alpha * other``, as torch.subtract.

        >>> cr.tensor([5.0]).subtract(1.0, alpha=2).tolist()
        [3.0]
        """
        return ops.subtract(self, other if alpha == 1 else alpha * other)

    def clamp_min(self, min: ArrayLike) -> Any:
        """Each entry at least ``min``, as torch.clamp_min.

        >>> cr.tensor([-1.0, 2.0]).clamp_min(0.0).tolist()
        [0.0, 2.0]
        """
        return ops.clip(self, min, None)

    def clamp_max(self, max: ArrayLike) -> Any:
        """Each entry at most ``max``, as torch.clamp_max.

        >>> cr.tensor([-1.0, 2.0]).clamp_max(0.0).tolist()
        [-1.0, 0.0]
        """
        return ops.clip(self, None, max)

    def lerp(self, end: ArrayLike, weight: ArrayLike) -> Any:
        """``self + weight * (end - self)``, as torch.lerp (weights of 0.5 and more as
        ``end - (end - self) * (1 - weight)``, so weight 1 gives ``end`` exactly).

        >>> cr.zeros(2).lerp(cr.tensor([1.0, 2.0]), 0.25).tolist()
        [0.25, 0.5]
        """
        diff = end - self
        if isinstance(weight, (int, float)):
            return self + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
        return ops.where(np.abs(raw(weight)) < 0.5, self + weight * diff,
                         end - diff * (1 - weight))

    def addcmul(self, tensor1: ArrayLike, tensor2: ArrayLike, *, value: float = 1) -> Any:
        """``self + value * tensor1 * tensor2``, as torch.addcmul.

        >>> cr.ones(2).addcmul(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0]), value=0.5).tolist()
        [2.5, 5.0]
        """
        return self + value * (tensor1 * tensor2)

    def addcdiv(self, tensor1: ArrayLike, tensor2: ArrayLike, *, value: float = 1) -> Any:
        """``self + value * tensor1 / tensor2``, as torch.addcdiv.

        >>> cr.ones(2).addcdiv(cr.tensor([1.0, 2.0]), cr.tensor([4.0, 4.0]), value=-2).tolist()
        [0.5, 0.0]
        """
        return self + value * (tensor1 / tensor2)

    def addmm(self, mat1: ArrayLike, mat2: ArrayLike, *, beta: float = 1,
              alpha: float = 1) -> Any:
        """``beta * self + alpha * (mat1 @ mat2)`` (2-d matrices), as torch.addmm.

        >>> cr.ones(2, 2).addmm(cr.ones(2, 3), cr.ones(3, 2), beta=0.5).tolist()
        [[3.5, 3.5], [3.5, 3.5]]
        """
        _ndim("addmm", 2, mat1, mat2)
        return _scaled(self, beta) + _scaled(ops.matmul(mat1, mat2), alpha)

    def addmv(self, mat: ArrayLike, vec: ArrayLike, *, beta: float = 1,
              alpha: float = 1) -> Any:
        """``beta * self + alpha * (mat @ vec)`` (a matrix and a vector), as torch.addmv.

        >>> cr.ones(2).addmv(cr.ones(2, 3), cr.ones(3), alpha=2).tolist()
        [7.0, 7.0]
        """
        _ndim("addmv", 2, mat)
        _ndim("addmv", 1, vec)
        return _scaled(self, beta) + _scaled(ops.matmul(mat, vec), alpha)

    def mv(self, vec: ArrayLike) -> Any:
        """The product of a matrix and a vector, as torch.mv.

        >>> cr.ones(2, 3).mv(cr.tensor([1.0, 2.0, 3.0])).tolist()
        [6.0, 6.0]
        """
        _ndim("mv", 2, self)
        _ndim("mv", 1, vec)
        return ops.matmul(self, vec)

    def ger(self, vec2: ArrayLike) -> Any:
        """The outer product of two vectors (torch's older name for ``outer``).

        >>> cr.tensor([1.0, 2.0]).ger(cr.tensor([3.0, 4.0])).tolist()
        [[3.0, 4.0], [6.0, 8.0]]
        """
        return ops.outer(self, vec2)

    def inverse(self) -> Any:
        """The inverse of a square matrix (or of each in a stack), as torch.inverse.

        >>> cr.tensor([[2.0, 0.0], [0.0, 4.0]]).inverse().tolist()
        [[0.5, 0.0], [0.0, 0.25]]
        """
        return ops.inv(self)

    def det(self) -> Any:
        """The determinant of a square matrix (or of each in a stack), as torch.det.

        >>> round(cr.tensor([[2.0, 0.0], [0.0, 4.0]]).det().item(), 12)
        8.0
        """
        return ops.det(self)

    def slogdet(self) -> Any:
        """``(sign, log|det|)`` of a square matrix (or each in a stack), as torch.slogdet.

        >>> [v.item() for v in cr.tensor([[-2.0, 0.0], [0.0, 1.0]]).slogdet()]
        [-1.0, 0.6931471805599453]
        """
        return ops.slogdet(self)

    def logdet(self) -> Any:
        """The log of the determinant: NaN where it is negative, as torch.logdet.

        >>> round(cr.tensor([[2.0, 0.0], [0.0, 4.0]]).logdet().item(), 6)
        2.079442
        """
        sign, logabs = ops.slogdet(self)
        return ops.where(raw(sign) < 0, np.nan, ops.where(raw(sign) == 0, -np.inf, logabs))

    def dist(self, other: ArrayLike, p: float = 2) -> Any:
        """The ``p``-norm of ``self - other``, as torch.dist.

        >>> cr.tensor([0.0, 0.0]).dist(cr.tensor([3.0, 4.0])).item()
        5.0
        """
        diff = ops.ravel(self - other)
        return ops.matrix_functions.vector_norm(diff, ord=p)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Any:
        """NaN replaced by ``nan``, +inf and -inf by ``posinf`` and ``neginf`` (the
        largest and the smallest finite numbers of the dtype unless told), as torch's.

        >>> cr.tensor([np.nan, np.inf, 1.0]).nan_to_num(posinf=9.0).tolist()
        [0.0, 9.0, 1.0]
        """
        return ops.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)

    def logit(self, eps: float | None = None) -> Any:
        """``log(p / (1 - p))`` for each entry, first limited to [eps, 1 - eps] if
        ``eps`` is given, as torch.logit.

        >>> cr.tensor([0.5, 0.0]).logit(eps=0.25).tolist()
        [0.0, -1.0986122886681096]
        """
        return ops.logit(self if eps is None else ops.clip(self, eps, 1 - eps))

    def heaviside(self, values: ArrayLike) -> Any:
        """0 where negative, 1 where positive, ``values`` where 0 (no derivative), as
        torch.heaviside.

        >>> cr.tensor([-1.0, 0.0, 2.0]).heaviside(cr.tensor([0.5])).tolist()
        [0.0, 0.5, 1.0]
        """
        return _plain(self, np.heaviside(raw(self), raw(values)))

    # --- reductions ------------------------------------------------------------------

    def amax(self, dim: "int | tuple[int, ...] | None" = None, keepdim: bool = False) -> Any:
        """The largest entry (along ``dim``); tied entries share the derivative evenly,
        as torch.amax.

        >>> cr.tensor([[1.0, 5.0], [7.0, 2.0]]).amax(1).tolist()
        [5.0, 7.0]
        """
        return ops.max(self, axis=_dims(dim), keepdims=keepdim)

    def amin(self, dim: "int | tuple[int, ...] | None" = None, keepdim: bool = False) -> Any:
        """The smallest entry (along ``dim``), as torch.amin.

        >>> cr.tensor([[1.0, 5.0], [7.0, 2.0]]).amin(1).tolist()
        [1.0, 2.0]
        """
        return ops.min(self, axis=_dims(dim), keepdims=keepdim)

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
        """``(min, max)`` of the entries (along ``dim``), as torch.aminmax.

        >>> cr.tensor([3.0, -1.0, 2.0]).aminmax()
        MinMax(min=tensor(-1.), max=tensor(3.))
        """
        return MinMax(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def cummax(self, dim: int) -> ValuesIndices:
        """The running largest entry along ``dim`` and where it was (the last place, for
        ties), as torch.cummax: ``(values, indices)``; the derivative goes to that place.

        >>> cr.tensor([1.0, 3.0, 2.0, 3.0]).cummax(0).indices.tolist()
        [0, 1, 1, 3]
        """
        return _running(self, dim, np.greater_equal)

    def cummin(self, dim: int) -> ValuesIndices:
        """The running smallest entry along ``dim`` and where it was, as torch.cummin.

        >>> cr.tensor([3.0, 1.0, 2.0]).cummin(0).values.tolist()
        [3.0, 1.0, 1.0]
        """
        return _running(self, dim, np.less_equal)

    def logcumsumexp(self, dim: int) -> Any:
        """``log(cumsum(exp(x)))`` along ``dim``, computed without overflow, as torch's.

        >>> cr.tensor([0.0, 0.0]).logcumsumexp(0).tolist()
        [0.0, 0.6931471805599453]
        """
        data = raw(self)
        top = np.max(data, axis=dim, keepdims=True) if data.size else data
        top = np.where(np.isfinite(top), top, 0.0)
        return ops.log(ops.cumsum(ops.exp(self - top), axis=dim)) + top

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """The ``k``-th smallest entry along ``dim`` (k from 1) and where it was, as
        torch.kthvalue: ``(values, indices)``.

        >>> cr.tensor([3.0, 1.0, 2.0]).kthvalue(2)
        ValuesIndices(values=tensor(2.), indices=tensor(2))
        """
        order = np.argsort(raw(self), axis=dim, kind="stable")
        index = np.take(order, [k - 1], axis=dim)
        values = ops.take_along_axis(self, index, axis=dim)
        if not keepdim:
            values, index = ops.squeeze(values, dim), np.squeeze(index, dim)
        return ValuesIndices(values, _plain(self, index))

    def nansum(self, dim: "int | tuple[int, ...] | None" = None,
               keepdim: bool = False) -> Any:
        """The sum of the entries (along ``dim``), NaN counted as 0, as torch.nansum.

        >>> cr.tensor([1.0, np.nan, 2.0]).nansum().item()
        3.0
        """
        return ops.nansum(self, axis=_dims(dim), keepdims=keepdim)

    def nanmean(self, dim: "int | tuple[int, ...] | None" = None,
                keepdim: bool = False) -> Any:
        """The mean of the entries that are not NaN (along ``dim``), as torch.nanmean.

        >>> cr.tensor([1.0, np.nan, 2.0]).nanmean().item()
        1.5
        """
        return ops.nanmean(self, axis=_dims(dim), keepdims=keepdim)

    def diff(self, n: int = 1, dim: int = -1, prepend: ArrayLike | None = None,
             append: ArrayLike | None = None) -> Any:
        """The differences of neighbours along ``dim``, ``n`` times (with ``prepend``
        and ``append`` joined first), as torch.diff.

        >>> cr.tensor([1.0, 4.0, 9.0]).diff().tolist()
        [3.0, 5.0]
        """
        return ops.diff(self, n, axis=dim, prepend=prepend, append=append)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        """Where the entries go to be in order along ``dim`` (ties keep their order),
        as torch.argsort (no derivative).

        >>> cr.tensor([3.0, 1.0, 2.0]).argsort(descending=True).tolist()
        [0, 2, 1]
        """
        data = np.asarray(raw(self))
        if descending:
            flipped = np.flip(data, axis=dim)
            order = np.flip(np.argsort(flipped, axis=dim, kind="stable"), axis=dim)
            order = data.shape[dim] - 1 - order
        else:
            order = np.argsort(data, axis=dim, kind="stable")
        return _plain(self, order.astype(np.int64))

    def sort(self, dim: int = -1, descending: bool = False,
             stable: bool = False) -> ValuesIndices:
        """The entries in order along ``dim`` and where each came from, as torch.sort:
        ``(values, indices)``, ties in their order; the values are differentiable (each
        entry's gradient goes back to where it came from).

        >>> cr.tensor([3.0, 1.0, 2.0]).sort(descending=True).values.tolist()
        [3.0, 2.0, 1.0]
        """
        indices = self.argsort(dim, descending, stable)
        return ValuesIndices(ops.take_along_axis(self, raw(indices), axis=dim), indices)

    def count_nonzero(self, dim: "int | tuple[int, ...] | None" = None) -> Any:
        """The number of nonzero entries (along ``dim``), as torch.count_nonzero.

        >>> cr.tensor([[0.0, 1.0], [2.0, 3.0]]).count_nonzero(1).tolist()
        [1, 2]
        """
        return _plain(self, np.asarray(np.count_nonzero(raw(self), axis=_dims(dim)),
                                       dtype=np.int64))

    def bincount(self, weights: ArrayLike | None = None, minlength: int = 0) -> Any:
        """How often each value 0, 1, 2... occurs in a 1-d tensor of non-negative
        integers (or the sum of ``weights`` there), as torch.bincount (no derivative).

        >>> cr.tensor([0, 1, 1, 3]).bincount().tolist()
        [1, 2, 0, 1]
        """
        w = None if weights is None else raw(weights)
        return _plain(self, np.bincount(raw(self), w, minlength))


def _ndim(name, want, *values):
    for value in values:
        if len(shape_of(value)) != want:
            raise ValueError(f"{name}: expected a {want}-d tensor, got shape "
                             f"{tuple(shape_of(value))}")


def _scaled(x, factor):
    return x if factor == 1 else factor * x


def _dims(dim):
    return tuple(dim) if isinstance(dim, list) else dim


def _running(x, dim, better):
    """cummax (better: >=) or cummin (<=) along dim: the values taken where they were."""
    data = np.moveaxis(np.asarray(raw(x)), dim, 0)
    index = np.zeros(data.shape, dtype=np.int64)
    best = data[:1].copy() if len(data) else data
    for i in range(1, len(data)):
        take = better(data[i], best[0]) | np.isnan(data[i])
        best[0] = np.where(take, data[i], best[0])
        index[i] = np.where(take, i, index[i - 1])
    index = np.moveaxis(index, 0, dim)
    return ValuesIndices(ops.take_along_axis(x, index, axis=dim), _plain(x, index))
