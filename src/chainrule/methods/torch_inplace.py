"""PyTorch's in-place forms, a Tensor's own: ``x.floor_()``, ``x.sqrt_()``,
``x.index_add_(dim, index, source)``, ``x.eq_(y)``... each the out-of-place method's
result written back into the tensor through its write rule (``Tensor._inplace``): refused
on a tensor that requires grad unless inside ``cr.no_grad()``, refused where a graph that
can still be walked saved its values, and the version counter bumped. The random fills
(``uniform_``, ``normal_``, ``bernoulli_``...) draw from ``generator=`` or the default
generator (``cr.manual_seed``); the shape changes (``unsqueeze_``, ``t_``...) rebind the
tensor to the new view under the same rule. Also the in-place forms of nn.functional's
activations (``relu_``, ``elu_``...), as functions.
"""

from types import MethodType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp, rules as ops
from ..primitive import raw

__all__ = ["TensorInplaceMethods", "use_default_generator", "relu_", "elu_", "leaky_relu_",
           "hardtanh_", "threshold_", "celu_", "selu_", "rrelu_"]

_DEFAULT_GENERATOR: list = []  # the default cr.Generator, set by chainrule.api.torch_random


def use_default_generator(generator: Any) -> None:
    """Make ``generator`` the one the random fills draw from without ``generator=``
    (chainrule.api.torch_random registers cr.default_generator at import).

    >>> import chainrule.methods.torch_inplace as m
    >>> from chainrule.api.torch_random import default_generator
    >>> m._DEFAULT_GENERATOR[0] is default_generator
    True
    """
    _DEFAULT_GENERATOR[:] = [generator]


def _copy(data, value, out, casting):
    # as torch's copy_: floats into an integer tensor are truncated toward zero
    kinds = np.result_type(value).kind, out.dtype.kind
    np.copyto(out, value, casting="unsafe" if kinds in (("f", "i"), ("f", "u"), ("b", "f"))
              else casting)


def _keep(data, value, out, casting):
    pass


def _write(x, name, new):
    return x._inplace("", _copy, new, what=f"x.{name}_(...)", instead=f"x = x.{name}(...)")


def _form(name, example, args, shown):
    def method(self, *args: Any, **kwargs: Any) -> Any:
        return _write(self, name, getattr(self.detach(), name)(*args, **kwargs))
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = (
        f"``x.{name}(...)`` written into x, in place (the Tensor's write rule: inside "
        f"cr.no_grad() for a tensor that requires grad), as torch's ``{name}_``.\n\n"
        f"        >>> cr.tensor({example}).{name}_({args}).tolist()\n        {shown}\n        ")
    return method


# name, example tensor, arguments, the tensor afterwards
_FORMS = [
    ('abs', '[-1.5, 2.0]', '', '[1.5, 2.0]'),
    ('absolute', '[-1.5, 2.0]', '', '[1.5, 2.0]'),
    ('neg', '[1.0, -2.0]', '', '[-1.0, 2.0]'),
    ('negative', '[1.0, -2.0]', '', '[-1.0, 2.0]'),
    ('exp', '[0.0]', '', '[1.0]'),
    ('exp2', '[3.0]', '', '[8.0]'),
    ('log', '[1.0]', '', '[0.0]'),
    ('log1p', '[0.0]', '', '[0.0]'),
    ('log2', '[8.0]', '', '[3.0]'),
    ('log10', '[100.0]', '', '[2.0]'),
    ('expm1', '[0.0]', '', '[0.0]'),
    ('sqrt', '[4.0, 9.0]', '', '[2.0, 3.0]'),
    ('rsqrt', '[4.0]', '', '[0.5]'),
    ('sin', '[0.0]', '', '[0.0]'),
    ('cos', '[0.0]', '', '[1.0]'),
    ('tan', '[0.0]', '', '[0.0]'),
    ('tanh', '[0.0]', '', '[0.0]'),
    ('sigmoid', '[0.0]', '', '[0.5]'),
    ('relu', '[-1.0, 2.0]', '', '[0.0, 2.0]'),
    ('sign', '[-3.0, 0.0, 2.0]', '', '[-1.0, 0.0, 1.0]'),
    ('sgn', '[-3.0, 0.0, 2.0]', '', '[-1.0, 0.0, 1.0]'),
    ('floor', '[1.5, -1.5]', '', '[1.0, -2.0]'),
    ('ceil', '[1.5, -1.5]', '', '[2.0, -1.0]'),
    ('round', '[0.5, 1.5, 2.25]', '', '[0.0, 2.0, 2.0]'),
    ('trunc', '[1.5, -1.5]', '', '[1.0, -1.0]'),
    ('fix', '[1.5, -1.5]', '', '[1.0, -1.0]'),
    ('frac', '[1.5, -1.25]', '', '[0.5, -0.25]'),
    ('reciprocal', '[2.0, 4.0]', '', '[0.5, 0.25]'),
    ('square', '[-3.0]', '', '[9.0]'),
    ('acos', '[1.0]', '', '[0.0]'),
    ('arccos', '[1.0]', '', '[0.0]'),
    ('asin', '[0.0]', '', '[0.0]'),
    ('arcsin', '[0.0]', '', '[0.0]'),
    ('atan', '[0.0]', '', '[0.0]'),
    ('arctan', '[0.0]', '', '[0.0]'),
    ('acosh', '[1.0]', '', '[0.0]'),
    ('arccosh', '[1.0]', '', '[0.0]'),
    ('asinh', '[0.0]', '', '[0.0]'),
    ('arcsinh', '[0.0]', '', '[0.0]'),
    ('atanh', '[0.0]', '', '[0.0]'),
    ('arctanh', '[0.0]', '', '[0.0]'),
    ('cosh', '[0.0]', '', '[1.0]'),
    ('sinh', '[0.0]', '', '[0.0]'),
    ('deg2rad', '[180.0]', '', '[3.141592653589793]'),
    ('rad2deg', '[0.0]', '', '[0.0]'),
    ('erf', '[0.0]', '', '[0.0]'),
    ('sinc', '[0.0]', '', '[1.0]'),
    ('logit', '[0.5]', '', '[0.0]'),
    ('copysign', '[1.0, -2.0]', '-0.0', '[-1.0, -2.0]'),
    ('heaviside', '[-1.0, 0.0]', 'cr.tensor([0.5])', '[0.0, 0.5]'),
    ('pow', '[2.0, 3.0]', '2', '[4.0, 9.0]'),
    ('float_power', '[2.0]', '3', '[8.0]'),
    ('clamp_min', '[-1.0, 2.0]', '0.0', '[0.0, 2.0]'),
    ('clamp_max', '[-1.0, 2.0]', '0.0', '[-1.0, 0.0]'),
    ('remainder', '[-3.0, 3.0]', '2.0', '[1.0, 1.0]'),
    ('fmod', '[-3.0, 3.0]', '2.0', '[-1.0, 1.0]'),
    ('atan2', '[1.0]', '1.0', '[0.7853981633974483]'),
    ('arctan2', '[1.0]', '1.0', '[0.7853981633974483]'),
    ('hypot', '[3.0]', '4.0', '[5.0]'),
    ('xlogy', '[0.0, 2.0]', '1.0', '[0.0, 0.0]'),
    ('multiply', '[3.0]', '2.0', '[6.0]'),
    ('true_divide', '[3.0]', '2.0', '[1.5]'),
    ('divide', '[-7.0]', "2.0, rounding_mode='trunc'", '[-3.0]'),
    ('subtract', '[5.0]', '1.0, alpha=2', '[3.0]'),
    ('floor_divide', '[-7.0, 7.0]', '2.0', '[-4.0, 3.0]'),
    ('nan_to_num', '[np.nan, 1.0]', 'nan=-1.0', '[-1.0, 1.0]'),
    ('eq', '[1.0, 2.0]', '2.0', '[0.0, 1.0]'),
    ('ne', '[1.0, 2.0]', '2.0', '[1.0, 0.0]'),
    ('lt', '[1.0, 2.0]', '2.0', '[1.0, 0.0]'),
    ('le', '[1.0, 2.0]', '2.0', '[1.0, 1.0]'),
    ('gt', '[1.0, 2.0]', '1.0', '[0.0, 1.0]'),
    ('ge', '[1.0, 2.0]', '2.0', '[0.0, 1.0]'),
    ('logical_not', '[0.0, 2.0]', '', '[1.0, 0.0]'),
    ('logical_and', '[0.0, 2.0]', '1.0', '[0.0, 1.0]'),
    ('logical_or', '[0.0, 2.0]', '0.0', '[0.0, 1.0]'),
    ('logical_xor', '[0.0, 2.0]', '1.0', '[1.0, 0.0]'),
    ('bitwise_not', '[0, 5]', '', '[-1, -6]'),
    ('bitwise_and', '[12, 10]', '6', '[4, 2]'),
    ('bitwise_or', '[12, 10]', '1', '[13, 11]'),
    ('bitwise_xor', '[12, 10]', '6', '[10, 12]'),
    ('bitwise_left_shift', '[1, 3]', '2', '[4, 12]'),
    ('bitwise_right_shift', '[8, -8]', '2', '[2, -2]'),
    ('tril', '[[1.0, 1.0], [1.0, 1.0]]', '', '[[1.0, 0.0], [1.0, 1.0]]'),
    ('triu', '[[1.0, 1.0], [1.0, 1.0]]', '', '[[1.0, 1.0], [0.0, 1.0]]'),
    ('masked_fill', '[1.0, 2.0]', 'np.array([True, False]), 0.0', '[0.0, 2.0]'),
    ('index_fill', '[1.0, 2.0, 3.0]', '0, np.array([0, 2]), -1.0', '[-1.0, 2.0, -1.0]'),
    ('index_add', '[1.0, 2.0, 3.0]', '0, np.array([0, 0]), cr.tensor([1.0, 1.0])', '[3.0, 2.0, 3.0]'),
    ('index_copy', '[1.0, 2.0, 3.0]', '0, np.array([2]), cr.tensor([9.0])', '[1.0, 2.0, 9.0]'),
    ('scatter', '[1.0, 2.0, 3.0]', '0, np.array([1]), cr.tensor([9.0])', '[1.0, 9.0, 3.0]'),
    ('scatter_add', '[1.0, 2.0, 3.0]', '0, np.array([1, 1]), cr.tensor([1.0, 1.0])', '[1.0, 4.0, 3.0]'),
    ('scatter_reduce', '[1.0, 2.0, 3.0]', "0, np.array([1, 1]), cr.tensor([5.0, 4.0]), 'amax'", '[1.0, 5.0, 3.0]'),
    ('addmm', '[[1.0]]', 'cr.ones(1, 2), cr.ones(2, 1)', '[[3.0]]'),
    ('addmv', '[1.0]', 'cr.ones(1, 2), cr.ones(2)', '[3.0]'),
]


def _generator(name, generator):
    if generator is None:
        return _DEFAULT_GENERATOR[0]
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"{name}: generator= must be a cr.Generator (or a numpy.random."
                        f"Generator), got {type(generator).__name__}")
    return generator


def _fill(x, name, sample, generator, *args):
    """x's entries drawn by ``sample(numpy_generator, shape, *args)``, under the write
    rule (checked before anything is drawn), as a draw a cr.jit program repeats."""
    source = _generator(name, generator)

    def draw(data, value, out, casting):
        out[...] = xp.draw(MethodType(sample, source), out.shape, *args)
    return x._inplace("", draw, 0, what=f"x.{name}(...)",
                      instead="x = a new tensor of draws (cr.rand, cr.normal...)")


class TensorInplaceMethods:
    """PyTorch's in-place forms that only a Tensor has (they write into its array)."""

    __slots__ = ()

    for _name, _example, _args, _shown in _FORMS:
        locals()[_name + "_"] = _form(_name, _example, _args, _shown)
    del _name, _example, _args, _shown

    def fill_diagonal_(self, fill_value: ArrayLike, wrap: bool = False) -> Any:
        """The main diagonal set to ``fill_value``, in place (every axis of equal length,
        or a tall matrix; ``wrap=True`` starts again below the square part), as torch's.

        >>> cr.zeros(2, 2).fill_diagonal_(5.0).tolist()
        [[5.0, 0.0], [0.0, 5.0]]
        """
        new = np.array(self._data)
        np.fill_diagonal(new, raw(fill_value), wrap=wrap)
        return _write(self, "fill_diagonal", new)

    # --- random fills -----------------------------------------------------------------

    def uniform_(self, from_: float = 0.0, to: float = 1.0, *,
                 generator: Any = None, **kwargs: float) -> Any:
        """Every entry drawn uniformly from [from, to), in place, from ``generator=`` or
        the default generator (``from=`` is also taken by that name, as torch's).

        >>> g = cr.Generator().manual_seed(0)
        >>> x = cr.zeros(3).uniform_(2.0, 3.0, generator=g)
        >>> bool(((x.data >= 2.0) & (x.data < 3.0)).all())
        True
        """
        low = kwargs.pop("from", from_)
        _no_more("uniform_", kwargs)
        return _fill(self, "uniform_", lambda g, shape: g.uniform(low, to, shape),
                     generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        """Every entry drawn from the normal distribution of ``mean`` and ``std``, in
        place.

        >>> g = cr.Generator().manual_seed(0)
        >>> cr.zeros(2).normal_(generator=g).tolist() == cr.zeros(2).normal_(
        ...     generator=cr.Generator().manual_seed(0)).tolist()
        True
        """
        return _fill(self, "normal_", lambda g, shape: g.normal(mean, std, shape), generator)

    def bernoulli_(self, p: ArrayLike = 0.5, *, generator: Any = None) -> Any:
        """Every entry 1 with probability ``p`` (a number or a tensor of them), else 0,
        in place.

        >>> cr.zeros(3).bernoulli_(1.0).tolist()
        [1.0, 1.0, 1.0]
        """
        prob = np.asarray(raw(p), dtype=np.float64)
        return _fill(self, "bernoulli_", lambda g, shape: g.random(shape) < prob, generator)

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Any:
        """Every entry drawn from the exponential distribution of rate ``lambd``, in place.

        >>> bool((cr.zeros(3).exponential_(2.0).data >= 0).all())
        True
        """
        return _fill(self, "exponential_",
                     lambda g, shape: g.exponential(1.0 / lambd, shape), generator)

    def geometric_(self, p: float, *, generator: Any = None) -> Any:
        """Every entry the number of trials up to the first success, each a success
        with probability ``p`` (1, 2, ...), in place.

        >>> cr.zeros(2).geometric_(1.0).tolist()
        [1.0, 1.0]
        """
        return _fill(self, "geometric_", lambda g, shape: g.geometric(p, shape), generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *,
                    generator: Any = None) -> Any:
        """Every entry ``exp`` of a normal draw of ``mean`` and ``std``, in place.

        >>> bool((cr.zeros(3).log_normal_().data > 0).all())
        True
        """
        return _fill(self, "log_normal_", lambda g, shape: g.lognormal(mean, std, shape),
                     generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *,
                generator: Any = None) -> Any:
        """Every entry drawn from the Cauchy distribution of ``median`` and ``sigma``,
        in place.

        >>> cr.zeros(2).cauchy_().shape
        (2,)
        """
        return _fill(self, "cauchy_",
                     lambda g, shape: median + sigma * g.standard_cauchy(shape), generator)

    def random_(self, from_: int = 0, to: int | None = None, *,
                generator: Any = None, **kwargs: int) -> Any:
        """Every entry a whole number drawn uniformly from [from, to), in place;
        ``random_(to)`` from [0, to); ``random_()`` from [0, 2**53] for float64 (2**24
        for float32, the dtype's largest for integers), as torch's.

        >>> bool((cr.zeros(5).random_(3, 5).data >= 3).all())
        True
        """
        given_from = "from" in kwargs
        low = kwargs.pop("from", from_)
        _no_more("random_", kwargs)
        if to is None and not given_from and from_ != 0:
            low, to = 0, from_
        if to is None:
            dtype = self._data.dtype
            to = (2 ** (np.finfo(dtype).nmant + 1) + 1 if dtype.kind == "f"
                  else int(np.iinfo(dtype).max))
        return _fill(self, "random_",
                     lambda g, shape: g.integers(low, to, shape, dtype=np.int64), generator)

    # --- shape, in place ------------------------------------------------------------

    def unsqueeze_(self, dim: int) -> Any:
        """A new axis of length 1 at ``dim``, in place.

        >>> cr.zeros(2).unsqueeze_(0).shape
        (1, 2)
        """
        return _reshaped(self, "unsqueeze_", np.expand_dims(self._data, dim))

    def squeeze_(self, dim: "int | tuple[int, ...] | None" = None) -> Any:
        """The axes of length 1 (at ``dim``, if given and of length 1) taken out, in
        place, as torch's.

        >>> cr.zeros(1, 2, 1).squeeze_().shape
        (2,)
        """
        data = self._data
        dims = (dim,) if isinstance(dim, int) else dim
        if dims is not None:
            dims = tuple(d for d in dims if data.shape[d] == 1)
        return _reshaped(self, "squeeze_", np.squeeze(data, axis=dims))

    def t_(self) -> Any:
        """The transpose of a matrix, in place (a vector stays as it is).

        >>> cr.zeros(2, 3).t_().shape
        (3, 2)
        """
        if self._data.ndim > 2:
            raise ValueError(f"t_: expected a tensor of at most 2 dimensions, got shape "
                             f"{self._data.shape}")
        return _reshaped(self, "t_", self._data.T)

    def transpose_(self, dim0: int, dim1: int) -> Any:
        """Axes ``dim0`` and ``dim1`` swapped, in place.

        >>> cr.zeros(2, 3, 4).transpose_(0, 2).shape
        (4, 3, 2)
        """
        return _reshaped(self, "transpose_", np.swapaxes(self._data, dim0, dim1))

    def swapaxes_(self, axis0: int, axis1: int) -> Any:
        """Axes ``axis0`` and ``axis1`` swapped, in place (``transpose_``).

        >>> cr.zeros(2, 3).swapaxes_(0, 1).shape
        (3, 2)
        """
        return _reshaped(self, "swapaxes_", np.swapaxes(self._data, axis0, axis1))

    def swapdims_(self, dim0: int, dim1: int) -> Any:
        """Axes ``dim0`` and ``dim1`` swapped, in place (``transpose_``).

        >>> cr.zeros(2, 3).swapdims_(0, 1).shape
        (3, 2)
        """
        return _reshaped(self, "swapdims_", np.swapaxes(self._data, dim0, dim1))


def _no_more(name, kwargs):
    if kwargs:
        raise TypeError(f"{name}: unexpected keyword argument(s) {sorted(kwargs)}")


def _reshaped(x, name, view):
    """x rebound to ``view`` (a view of its array), under the write rule."""
    if x._prev:
        raise RuntimeError(f"x.{name}(...): this tensor is the result of a recorded "
                           f"operation, whose gradient has its shape; write x = "
                           f"x.{name[:-1]}(...) (a new tensor)")
    x._inplace("", _keep, 0, what=f"x.{name}(...)", instead=f"x = x.{name[:-1]}(...)")
    x._data = view
    return x


# --- nn.functional's in-place activations -----------------------------------------------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _activation(input, name, new):
    return input._inplace("", _copy, new, what=f"F.{name}_(x)", instead=f"x = F.{name}(x)")


def _numbers(input, name):
    """``input.detach()``: the numbers an in-place activation computes from. Only a
    Tensor can be written into: a value a transform traces (vmap, grad, cr.jit) is
    immutable, as JAX's arrays are."""
    if not hasattr(input, "_inplace"):  # (a Tensor's write rule)
        raise TypeError(f"F.{name}_(x) writes into x, which must be a Tensor; got "
                        f"{type(input).__name__} (a transform's traced value or an array "
                        f"cannot be written): write x = F.{name}(x)")
    return input.detach()


def relu_(input: Any) -> Any:
    """``max(x, 0)`` written into x, in place (under the Tensor's write rule).

    >>> from chainrule.methods.torch_inplace import relu_
    >>> relu_(cr.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _activation(input, "relu", ops.maximum(_numbers(input, "relu"), 0.0))


def elu_(input: Any, alpha: float = 1.0) -> Any:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere, in place.

    >>> from chainrule.methods.torch_inplace import elu_
    >>> elu_(cr.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    x = _numbers(input, "elu")
    return _activation(input, "elu", ops.where(raw(x) > 0, x, alpha * ops.expm1(x)))


def leaky_relu_(input: Any, negative_slope: float = 0.01) -> Any:
    """``x`` where positive, ``negative_slope * x`` elsewhere, in place.

    >>> from chainrule.methods.torch_inplace import leaky_relu_
    >>> leaky_relu_(cr.tensor([-2.0, 2.0]), 0.5).tolist()
    [-1.0, 2.0]
    """
    x = _numbers(input, "leaky_relu")
    return _activation(input, "leaky_relu", ops.where(raw(x) > 0, x, negative_slope * x))


def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    """Each entry limited to [min_val, max_val], in place.

    >>> from chainrule.methods.torch_inplace import hardtanh_
    >>> hardtanh_(cr.tensor([-2.0, 0.5, 2.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    new = ops.clip(_numbers(input, "hardtanh"), min_val, max_val)
    return _activation(input, "hardtanh", new)


def threshold_(input: Any, threshold: float, value: float) -> Any:
    """``x`` where above ``threshold``, ``value`` elsewhere, in place.

    >>> from chainrule.methods.torch_inplace import threshold_
    >>> threshold_(cr.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    x = _numbers(input, "threshold")
    return _activation(input, "threshold", ops.where(raw(x) > threshold, x, value))


def celu_(input: Any, alpha: float = 1.0) -> Any:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``, in place.

    >>> from chainrule.methods.torch_inplace import celu_
    >>> celu_(cr.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    x = _numbers(input, "celu")
    new = ops.maximum(x, 0.0) + ops.minimum(alpha * ops.expm1(x / alpha), 0.0)
    return _activation(input, "celu", new)


def selu_(input: Any) -> Any:
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with SELU's constants, in
    place.

    >>> from chainrule.methods.torch_inplace import selu_
    >>> selu_(cr.tensor([0.0])).tolist()
    [0.0]
    """
    x = _numbers(input, "selu")
    new = _SELU_SCALE * (ops.maximum(x, 0.0) + ops.minimum(_SELU_ALPHA * ops.expm1(x), 0.0))
    return _activation(input, "selu", new)


def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Any = None) -> Any:
    """``x`` where positive, ``a * x`` elsewhere, in place: ``a`` drawn uniformly from
    [lower, upper] for each entry in training, their mean otherwise.

    >>> from chainrule.methods.torch_inplace import rrelu_
    >>> rrelu_(cr.tensor([-3.0, 2.0]), 0.5, 0.5).tolist()
    [-1.5, 2.0]
    """
    x = _numbers(input, "rrelu")
    if training:
        source = _generator("rrelu_", generator)
        slope = xp.draw(source.uniform, lower, upper, x.shape)
    else:
        slope = (lower + upper) / 2
    return _activation(input, "rrelu", ops.where(raw(x) >= 0, x, slope * x))
