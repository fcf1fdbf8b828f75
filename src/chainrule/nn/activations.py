"""The activations as modules, shaped like PyTorch's (``nn.ReLU()``, ``nn.Hardswish()``,
``nn.PReLU()``...): each holds its settings and calls its function of
``nn.functional`` (``activation_functions.py``) or of the derivative table (``cr.relu``,
``cr.tanh``...). ``inplace=True`` is accepted and computes out of place, as there.

>>> cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.Hardswish())(cr.ones(1, 2)).shape
(1, 3)
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules.common import Result
from . import activation_functions as F
from .module import Module, Parameter

__all__ = ["ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "ELU", "Softplus",
           "Identity", "Softmax", "Softmax2d", "LogSoftmax", "ReLU6", "Hardtanh", "SELU", "CELU", "Mish",
           "Softsign", "LogSigmoid", "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink",
           "Tanhshrink", "Threshold", "RReLU", "GLU", "Softmin", "PReLU"]


class ReLU(Module):
    """max(x, 0), elementwise, as a module (``cr.relu``); any shape.

    >>> cr.nn.ReLU()(cr.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, x: ArrayLike) -> Result:
        """max(x, 0)."""
        return ops.relu(x)


class Tanh(Module):
    """tanh(x), elementwise, as a module (``cr.tanh``); any shape.

    >>> cr.nn.Tanh()(cr.tensor([0.0, 100.0])).data.tolist()
    [0.0, 1.0]
    """

    def forward(self, x: ArrayLike) -> Result:
        """tanh(x)."""
        return ops.tanh(x)


class Sigmoid(Module):
    """1 / (1 + e**-x), elementwise, as a module (``cr.sigmoid``); any shape.

    >>> cr.nn.Sigmoid()(cr.tensor([0.0, -1000.0])).data.tolist()
    [0.5, 0.0]
    """

    def forward(self, x: ArrayLike) -> Result:
        """sigmoid(x)."""
        return ops.sigmoid(x)


class GELU(Module):
    """x * Phi(x), Phi the normal CDF, as a module (``cr.gelu``); any shape.

    ``approximate="tanh"`` uses PyTorch's tanh formula.

    >>> x = cr.tensor([0.0, 1.0])
    >>> np.round(cr.nn.GELU()(x).data, 4).tolist()
    [0.0, 0.8413]
    >>> np.round(cr.nn.GELU(approximate="tanh")(x).data, 4).tolist()
    [0.0, 0.8412]
    """

    def __init__(self, approximate: str = "none") -> None:
        self.approximate = approximate

    def forward(self, x: ArrayLike) -> Result:
        """gelu(x)."""
        return ops.gelu(x, approximate=self.approximate)


class SiLU(Module):
    """x * sigmoid(x), elementwise, as a module (``cr.silu``); any shape.

    >>> round(cr.nn.SiLU()(cr.tensor([1.0])).item(), 4)
    0.7311
    """

    def __init__(self, inplace: bool = False) -> None:
        pass

    def forward(self, x: ArrayLike) -> Result:
        """silu(x)."""
        return ops.silu(x)


class LeakyReLU(Module):
    """x where x > 0, else ``negative_slope * x``, as a module (``cr.leaky_relu``).

    >>> cr.nn.LeakyReLU(0.1)(cr.tensor([-1.0, 2.0])).data.tolist()
    [-0.1, 2.0]
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        self.negative_slope = negative_slope

    def forward(self, x: ArrayLike) -> Result:
        """leaky_relu(x, negative_slope)."""
        return ops.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        """negative_slope, for repr."""
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """x where x > 0, else alpha (e**x - 1), as a module (``cr.elu``).

    >>> round(cr.nn.ELU()(cr.tensor([-1.0])).item(), 4)
    -0.6321
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        self.alpha = alpha

    def forward(self, x: ArrayLike) -> Result:
        """elu(x, alpha)."""
        return ops.elu(x, self.alpha)

    def extra_repr(self) -> str:
        """alpha, for repr."""
        return f"alpha={self.alpha}"


class Softplus(Module):
    """log(1 + e**(beta x)) / beta (x beyond ``threshold``), as a module.

    >>> round(cr.nn.Softplus()(cr.tensor([0.0])).item(), 4)
    0.6931
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        self.beta, self.threshold = beta, threshold

    def forward(self, x: ArrayLike) -> Result:
        """softplus(x, beta, threshold)."""
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """beta and threshold, for repr."""
        return f"beta={self.beta}, threshold={self.threshold}"


class Identity(Module):
    """Its input, unchanged (a placeholder layer, as PyTorch's); takes and ignores any
    arguments.

    >>> x = cr.ones(2)
    >>> cr.nn.Identity(54, unused="yes")(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def forward(self, x: ArrayLike) -> ArrayLike:
        """x."""
        return x


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim`` (the last by default), as a module
    (``cr.softmax``); any shape.

    >>> cr.nn.Softmax(dim=-1)(cr.tensor([[0.0, np.log(3.0)]])).data.tolist()
    [[0.25, 0.75]]
    """

    def __init__(self, dim: int = -1) -> None:
        self.dim = dim

    def forward(self, x: ArrayLike) -> Result:
        """softmax(x) along dim."""
        return ops.softmax(x, axis=self.dim)

    def extra_repr(self) -> str:
        """dim, for repr."""
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels of each position (torch's ``nn.Softmax2d``): input
    (N, C, H, W) or (C, H, W), the softmax along axis -3.

    >>> y = cr.nn.Softmax2d()(cr.zeros(1, 4, 2, 2))
    >>> y.data[0, :, 0, 0].tolist()                 # 4 channels share each position
    [0.25, 0.25, 0.25, 0.25]
    """

    def forward(self, x: ArrayLike) -> Result:
        """softmax(x) along the channel axis."""
        shape = shape_of(x)
        if len(shape) not in (3, 4):
            raise ValueError(f"Softmax2d: input of shape {shape}, expected (N, C, H, W) or "
                             f"(C, H, W)")
        return ops.softmax(x, axis=-3)


class LogSoftmax(Module):
    """log(softmax(x)) along ``dim`` (the last by default), computed stably, as a
    module (``cr.log_softmax``); any shape.

    >>> cr.nn.LogSoftmax()(cr.tensor([1000.0, 0.0])).data.tolist()
    [0.0, -1000.0]
    """

    def __init__(self, dim: int = -1) -> None:
        self.dim = dim

    def forward(self, x: ArrayLike) -> Result:
        """log_softmax(x) along dim."""
        return ops.log_softmax(x, axis=self.dim)

    def extra_repr(self) -> str:
        """dim, for repr."""
        return f"dim={self.dim}"


class _Elementwise(Module):
    """An activation without settings: its function of ``nn.functional``, entry by entry."""

    function: Any = None

    def __init__(self, inplace: bool = False) -> None:
        pass

    def forward(self, x: ArrayLike) -> Result:
        """The activation of x, entry by entry."""
        return type(self).function(x)


class ReLU6(_Elementwise):
    """min(max(x, 0), 6), as a module (``F.relu6``).

    >>> cr.nn.ReLU6()(cr.tensor([-1.0, 8.0])).data.tolist()
    [0.0, 6.0]
    """
    function = staticmethod(F.relu6)


class SELU(_Elementwise):
    """The self-normalising ELU, as a module (``F.selu``).

    >>> round(cr.nn.SELU()(cr.tensor([1.0])).item(), 4)
    1.0507
    """
    function = staticmethod(F.selu)


class Mish(_Elementwise):
    """x tanh(softplus(x)), as a module (``F.mish``).

    >>> round(cr.nn.Mish()(cr.tensor([1.0])).item(), 4)
    0.8651
    """
    function = staticmethod(F.mish)


class Hardswish(_Elementwise):
    """x hardsigmoid(x), as a module (``F.hardswish``).

    >>> cr.nn.Hardswish()(cr.tensor([-4.0, 4.0])).data.tolist()
    [0.0, 4.0]
    """
    function = staticmethod(F.hardswish)


class Hardsigmoid(_Elementwise):
    """0 below -3, 1 above 3, x / 6 + 1/2 between, as a module (``F.hardsigmoid``).

    >>> cr.nn.Hardsigmoid()(cr.tensor([0.0])).data.tolist()
    [0.5]
    """
    function = staticmethod(F.hardsigmoid)


class Softsign(Module):
    """x / (1 + |x|), as a module (``F.softsign``).

    >>> cr.nn.Softsign()(cr.tensor([1.0])).data.tolist()
    [0.5]
    """

    def forward(self, x: ArrayLike) -> Result:
        """softsign(x)."""
        return F.softsign(x)


class LogSigmoid(Module):
    """log(sigmoid(x)), as a module (``F.logsigmoid``).

    >>> cr.nn.LogSigmoid()(cr.tensor([-1000.0])).data.tolist()
    [-1000.0]
    """

    def forward(self, x: ArrayLike) -> Result:
        """logsigmoid(x)."""
        return F.logsigmoid(x)


class Tanhshrink(Module):
    """x - tanh(x), as a module (``F.tanhshrink``).

    >>> cr.nn.Tanhshrink()(cr.tensor([0.0])).data.tolist()
    [0.0]
    """

    def forward(self, x: ArrayLike) -> Result:
        """tanhshrink(x)."""
        return F.tanhshrink(x)


class Hardtanh(Module):
    """x clipped to [min_val, max_val], as a module (``F.hardtanh``).

    >>> cr.nn.Hardtanh(-2.0, 2.0)(cr.tensor([-3.0, 1.0])).data.tolist()
    [-2.0, 1.0]
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val "
                             f"({max_val})")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: ArrayLike) -> Result:
        """hardtanh(x, min_val, max_val)."""
        return F.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        """The bounds, for repr."""
        return f"min_val={self.min_val}, max_val={self.max_val}"


class CELU(Module):
    """x where x > 0, else alpha (e**(x / alpha) - 1), as a module (``F.celu``).

    >>> round(cr.nn.CELU(2.0)(cr.tensor([-1.0])).item(), 4)
    -0.7869
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        self.alpha = alpha

    def forward(self, x: ArrayLike) -> Result:
        """celu(x, alpha)."""
        return F.celu(x, self.alpha)

    def extra_repr(self) -> str:
        """alpha, for repr."""
        return f"alpha={self.alpha}"


class Hardshrink(Module):
    """x where |x| > lambd, else 0, as a module (``F.hardshrink``).

    >>> cr.nn.Hardshrink()(cr.tensor([0.2, 0.7])).data.tolist()
    [0.0, 0.7]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        self.lambd = lambd

    def forward(self, x: ArrayLike) -> Result:
        """hardshrink(x, lambd)."""
        return F.hardshrink(x, self.lambd)

    def extra_repr(self) -> str:
        """lambd, for repr."""
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x moved towards 0 by lambd, 0 within lambd of it, as a module (``F.softshrink``).

    >>> cr.nn.Softshrink()(cr.tensor([0.2, 0.75])).data.tolist()
    [0.0, 0.25]
    """

    def forward(self, x: ArrayLike) -> Result:
        """softshrink(x, lambd)."""
        return F.softshrink(x, self.lambd)


class Threshold(Module):
    """x where x > threshold, else value, as a module (``F.threshold``).

    >>> cr.nn.Threshold(1.0, -1.0)(cr.tensor([0.5, 2.0])).data.tolist()
    [-1.0, 2.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        self.threshold, self.value = threshold, value

    def forward(self, x: ArrayLike) -> Result:
        """threshold(x, threshold, value)."""
        return F.threshold(x, self.threshold, self.value)

    def extra_repr(self) -> str:
        """threshold and value, for repr."""
        return f"threshold={self.threshold}, value={self.value}"


class RReLU(Module):
    """The randomized leaky ReLU, as a module (``F.rrelu``): a slope drawn from
    U(lower, upper) per entry in training, their mean in evaluation. ``rng`` (a seed
    or a Generator) fixes the draws; by default they come from the default generator.

    >>> cr.nn.RReLU(0.125, 0.375).eval()(cr.tensor([-4.0])).data.tolist()
    [-1.0]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False,
                 rng: "np.random.Generator | int | None" = None) -> None:
        if not 0 <= lower <= upper:
            raise ValueError(f"RReLU: expected 0 <= lower <= upper, got lower={lower}, "
                             f"upper={upper}")
        self.lower, self.upper = lower, upper
        self.rng = rng if rng is None or isinstance(rng, np.random.Generator) \
            else np.random.default_rng(rng)

    def forward(self, x: ArrayLike) -> Result:
        """rrelu(x, lower, upper, training)."""
        return F.rrelu(x, self.lower, self.upper, self.training, rng=self.rng)

    def extra_repr(self) -> str:
        """The slopes' bounds, for repr."""
        return f"lower={self.lower}, upper={self.upper}"


class GLU(Module):
    """The gated linear unit along ``dim``, as a module (``F.glu``).

    >>> cr.nn.GLU()(cr.tensor([1.0, 2.0, 0.0, 0.0])).data.tolist()
    [0.5, 1.0]
    """

    def __init__(self, dim: int = -1) -> None:
        self.dim = dim

    def forward(self, x: ArrayLike) -> Result:
        """glu(x, dim)."""
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        """dim, for repr."""
        return f"dim={self.dim}"


class Softmin(Module):
    """softmax(-x) along ``dim``, as a module (``F.softmin``).

    >>> cr.nn.Softmin(dim=0)(cr.tensor([0.0, np.log(3.0)])).data.tolist()
    [0.75, 0.25]
    """

    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim

    def forward(self, x: ArrayLike) -> Result:
        """softmin(x, dim)."""
        return F.softmin(x, self.dim)

    def extra_repr(self) -> str:
        """dim, for repr."""
        return f"dim={self.dim}"


class PReLU(Module):
    """x where x > 0, else a x, with the slope ``a`` learned: one for all channels, or
    ``num_parameters`` (one per channel, axis 1), each starting at ``init`` (torch's
    ``weight``).

    >>> layer = cr.nn.PReLU()
    >>> layer(cr.tensor([-2.0, 3.0])).data.tolist(), [p.shape for p in layer.parameters()]
    ([-0.5, 3.0], [(1,)])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: str | None = None,
                 dtype: DTypeLike = None) -> None:
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or \
                num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be a positive int, got "
                             f"{num_parameters!r}")
        self.num_parameters = num_parameters
        self.weight = Parameter(np.full(num_parameters, init,
                                        np.float64 if dtype is None else dtype))

    def forward(self, x: ArrayLike) -> Result:
        """prelu(x, weight)."""
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        """num_parameters, for repr."""
        return f"num_parameters={self.num_parameters}"
