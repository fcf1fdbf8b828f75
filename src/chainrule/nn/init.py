"""PyTorch's ``torch.nn.init``: fill a layer's weights in place, from a distribution
scaled to the layer's fan-in and fan-out, so that ported code such as

    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

runs as it is. Each function writes into the Tensor (or NumPy array) it is given,
without recording anything (as torch's run under ``no_grad``), and returns it. The
numbers come from ``generator=`` (a ``cr.Generator`` or a ``numpy.random.Generator``)
or from chainrule's default generator, which ``cr.manual_seed`` seeds; they follow
torch's distributions and scales exactly, but are not torch's draws.

The fans of a weight of shape (out, in, *kernel) are ``fan_in = in * prod(kernel)``
and ``fan_out = out * prod(kernel)``, torch's convention for Linear and Conv layers.

>>> w = cr.nn.Linear(300, 100, rng=0).weight
>>> bound = cr.nn.init.calculate_gain("relu") * math.sqrt(3 / 300)  # Kaiming: He et al.
>>> float(abs(cr.nn.init.kaiming_uniform_(w, nonlinearity="relu").data).max()) <= bound
True
"""

import math
from numbers import Real

import numpy as np

from ..api.torch_random import default_generator
from ..modes import no_grad
from ..primitive import raw, shape_of
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_",
           "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor by which a nonlinearity shrinks the spread of its input, which the
    initialisations multiply their standard deviation by (torch's values): 1 for
    linear layers and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope**2))
    for leaky_relu (``param`` the slope, default 0.01), 3/4 for selu.

    >>> cr.nn.init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid "
                             f"number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected "
                     f"one of {', '.join(_LINEAR)}, tanh, relu, leaky_relu, selu")


# ---------------------------------------------------------------------------------------
# Writing into the weight, and where the numbers come from
# ---------------------------------------------------------------------------------------

def _target(tensor, op):
    if isinstance(tensor, Tensor):
        data = tensor.data
    elif isinstance(tensor, np.ndarray):
        data = tensor
    else:
        raise TypeError(f"nn.init.{op}: expected a Tensor (a layer's weight) or a NumPy "
                        f"array to fill, got {type(tensor).__name__}")
    if data.dtype.kind not in "fc":
        raise TypeError(f"nn.init.{op}: expected floating-point numbers to fill, got "
                        f"dtype {data.dtype}")
    return data


def _write(tensor, values):
    """values (any float array of the tensor's shape) into the tensor, as its dtype."""
    if isinstance(tensor, Tensor):
        with no_grad():
            tensor.copy_(np.asarray(values, dtype=tensor.data.dtype))
    else:
        tensor[...] = values
    return tensor


def _source(generator, op):
    if generator is None:
        return default_generator
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"nn.init.{op}: generator= must be a cr.Generator (or a numpy."
                        f"random.Generator), got {type(generator).__name__}")
    return generator


def _fans(shape, op):
    if len(shape) < 2:
        raise ValueError(f"nn.init.{op}: fan in and fan out cannot be computed for a "
                         f"tensor of shape {shape}, with fewer than 2 dimensions")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _fan(shape, mode, op):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init.{op}: mode {mode!r} not supported; expected 'fan_in' "
                         f"or 'fan_out'")
    fan_in, fan_out = _fans(shape, op)
    return fan_in if mode == "fan_in" else fan_out


# ---------------------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------------------

def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill with draws from U(a, b)."""
    data = _target(tensor, "uniform_")
    return _write(tensor, _source(generator, "uniform_").uniform(a, b, data.shape))


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill with draws from N(mean, std**2)."""
    data = _target(tensor, "normal_")
    return _write(tensor, _source(generator, "normal_").normal(mean, std, data.shape))


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None):
    """Fill with draws from N(mean, std**2) kept to [a, b] (a draw outside is drawn
    again, which gives the truncated normal's distribution exactly)."""
    data = _target(tensor, "trunc_normal_")
    if not a < b:
        raise ValueError(f"nn.init.trunc_normal_: expected a < b, got a={a}, b={b}")
    cdf = lambda x: 0.5 * (1 + math.erf((x - mean) / (std * math.sqrt(2))))  # noqa: E731
    if cdf(b) - cdf(a) < 1e-6:
        raise ValueError(f"nn.init.trunc_normal_: [{a}, {b}] holds less than 1e-6 of "
                         f"N({mean}, {std}**2); choose a and b nearer the mean")
    source, values = _source(generator, "trunc_normal_"), np.empty(data.shape)
    todo = np.ones(data.shape, bool)
    while todo.any():
        values[todo] = source.normal(mean, std, int(todo.sum()))
        todo = (values < a) | (values > b)
    return _write(tensor, values)


def constant_(tensor, val: float):
    """Fill with ``val``."""
    data = _target(tensor, "constant_")
    return _write(tensor, np.full(data.shape, val))


def ones_(tensor):
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with 0."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """The identity matrix (a 2-d tensor, rectangular allowed): a Linear layer that
    passes its input through."""
    data = _target(tensor, "eye_")
    if data.ndim != 2:
        raise ValueError(f"nn.init.eye_: only tensors with 2 dimensions are supported, "
                         f"got shape {data.shape}")
    return _write(tensor, np.eye(*data.shape))


def dirac_(tensor, groups: int = 1):
    """The Dirac delta for a convolution's weight (3, 4 or 5 dimensions): the layer
    passes each of its first input channels through (per group of ``groups``)."""
    data = _target(tensor, "dirac_")
    if data.ndim not in (3, 4, 5):
        raise ValueError(f"nn.init.dirac_: only tensors with 3, 4, or 5 dimensions are "
                         f"supported, got shape {data.shape}")
    if data.shape[0] % groups:
        raise ValueError(f"nn.init.dirac_: dim 0 ({data.shape[0]}) must be divisible by "
                         f"groups ({groups})")
    per_group = data.shape[0] // groups
    values, centre = np.zeros(data.shape), tuple(n // 2 for n in data.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, data.shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _write(tensor, values)


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot and Bengio's: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    data = _target(tensor, "xavier_uniform_")
    fan_in, fan_out = _fans(data.shape, "xavier_uniform_")
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot and Bengio's: N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    data = _target(tensor, "xavier_normal_")
    fan_in, fan_out = _fans(data.shape, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(data, a, mode, nonlinearity, op):
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(data.shape, mode, op))


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):
    """He et al.'s: U(-b, b), b = gain * sqrt(3 / fan), gain ``calculate_gain``'s for
    ``nonlinearity`` (``a`` the leaky_relu's slope), fan the fan-in or fan-out."""
    data = _target(tensor, "kaiming_uniform_")
    if data.size == 0:  # (torch warns and leaves it: there is nothing to fill)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(data, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):
    """He et al.'s: N(0, std**2), std = gain / sqrt(fan)."""
    data = _target(tensor, "kaiming_normal_")
    if data.size == 0:
        return tensor
    std = _kaiming_std(data, a, mode, nonlinearity, "kaiming_normal_")
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix times ``gain`` (Saxe et al.): the tensor taken as
    (rows, everything else), its rows orthonormal if there are fewer rows than
    columns, else its columns; from the QR factors of a normal draw, signs fixed so
    that the matrix is uniformly distributed."""
    data = _target(tensor, "orthogonal_")
    if data.ndim < 2:
        raise ValueError(f"nn.init.orthogonal_: only tensors with 2 or more dimensions "
                         f"are supported, got shape {data.shape}")
    if data.size == 0:
        return tensor
    rows = data.shape[0]
    draw = _source(generator, "orthogonal_").standard_normal((rows, data.size // rows))
    wide = rows < draw.shape[1]
    q, r = np.linalg.qr(draw.T if wide else draw)
    q = q * np.sign(np.diag(r))
    return _write(tensor, gain * (q.T if wide else q).reshape(data.shape))


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """A 2-d weight drawn from N(0, std**2) with ``ceil(sparsity * rows)`` zeros in
    each column, in random rows (Martens's sparse initialisation)."""
    data = _target(tensor, "sparse_")
    if data.ndim != 2:
        raise ValueError(f"nn.init.sparse_: only tensors with 2 dimensions are supported, "
                         f"got shape {data.shape}")
    rows, cols = data.shape
    source = _source(generator, "sparse_")
    values = source.normal(0.0, std, data.shape)
    zeros = int(math.ceil(sparsity * rows))
    for col in range(cols):
        values[source.permutation(rows)[:zeros], col] = 0
    return _write(tensor, values)


# torch's own helpers by their private names, which custom layers' reset_parameters
# call (``fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)``)
def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel)."""
    return _fans(tuple(shape_of(raw(tensor))), "_calculate_fan_in_and_fan_out")


def _calculate_correct_fan(tensor, mode):
    """The fan-in or the fan-out (``mode``) of a weight."""
    return _fan(tuple(shape_of(raw(tensor))), mode, "_calculate_correct_fan")
