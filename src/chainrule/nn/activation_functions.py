"""``nn.functional``'s activations, normalisations and dropout, with torch's arguments
(``chainrule.nn.functional`` is where users find them; this file is their home).
``inplace=True`` is accepted and computes out of place: the result is the same, and the
input is kept (a recorded graph may need it).

>>> import chainrule.nn.functional as F
>>> F.leaky_relu(cr.tensor([-1.0, 2.0]), 0.1)
tensor([-0.1,  2. ])
"""


import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, raw as _raw, shape_of
from ..rules.common import Result, float_dtype

__all__ = ["relu", "leaky_relu", "elu", "gelu", "silu", "sigmoid", "tanh", "softplus", "softmax", "log_softmax", "dropout", "layer_norm", "embedding"]

# ---------------------------------------------------------------------------------------
# Activations, normalisations and dropout, with torch's arguments. ``inplace=True`` is
# accepted and computes out of place: the result is the same, the input is kept (a
# recorded graph may need it).
# ---------------------------------------------------------------------------------------

def relu(x: ArrayLike, inplace: bool = False) -> Result:
    """max(x, 0).

    >>> cr.nn.functional.relu(cr.tensor([-1.0, 2.0])).data.tolist()
    [0.0, 2.0]
    """
    return ops.relu(x)


def leaky_relu(x: ArrayLike, negative_slope: float = 0.01, inplace: bool = False) -> Result:
    """x where x > 0, else ``negative_slope * x``.

    >>> cr.nn.functional.leaky_relu(cr.tensor([-1.0, 2.0]), 0.1).data.tolist()
    [-0.1, 2.0]
    """
    return ops.leaky_relu(x, negative_slope)


def elu(x: ArrayLike, alpha: float = 1.0, inplace: bool = False) -> Result:
    """x where x > 0, else alpha (e**x - 1).

    >>> round(cr.nn.functional.elu(cr.tensor([-1.0])).item(), 4)
    -0.6321
    """
    return ops.elu(x, alpha)


def gelu(x: ArrayLike, approximate: str = "none") -> Result:
    """x Phi(x) (``approximate="tanh"``: PyTorch's tanh formula).

    >>> round(cr.nn.functional.gelu(cr.tensor([1.0])).item(), 4)
    0.8413
    """
    return ops.gelu(x, approximate)


def silu(x: ArrayLike, inplace: bool = False) -> Result:
    """x sigmoid(x).

    >>> round(cr.nn.functional.silu(cr.tensor([1.0])).item(), 4)
    0.7311
    """
    return ops.silu(x)


def sigmoid(x: ArrayLike) -> Result:
    """1 / (1 + e**-x).

    >>> cr.nn.functional.sigmoid(cr.tensor([0.0])).item()
    0.5
    """
    return ops.sigmoid(x)


def tanh(x: ArrayLike) -> Result:
    """The hyperbolic tangent.

    >>> cr.nn.functional.tanh(cr.tensor([0.0])).item()
    0.0
    """
    return ops.tanh(x)


def softplus(x: ArrayLike, beta: float = 1.0, threshold: float = 20.0) -> Result:
    """log(1 + e**(beta x)) / beta, and x itself where beta x > threshold, as torch's.

    >>> round(cr.nn.functional.softplus(cr.tensor([0.0])).item(), 4)
    0.6931
    """
    scaled = beta * x
    return ops.where(_raw(scaled) > threshold, x, ops.softplus(scaled) / beta)


def _softmax_dim(x, dim):
    """torch's axis when none is given: 0 for 0-, 1- and 3-d input, else 1."""
    return dim if dim is not None else (0 if len(shape_of(x)) in (0, 1, 3) else 1)


def softmax(x: ArrayLike, dim: int | None = None) -> Result:
    """exp(x) / sum(exp(x)) along ``dim`` (torch's choice of axis when None).

    >>> cr.nn.functional.softmax(cr.tensor([[0.0, 0.0]]), dim=1).data.tolist()
    [[0.5, 0.5]]
    """
    return ops.softmax(x, axis=_softmax_dim(x, dim))


def log_softmax(x: ArrayLike, dim: int | None = None) -> Result:
    """The logarithm of ``softmax(x, dim)``, computed stably.

    >>> round(cr.nn.functional.log_softmax(cr.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    return ops.log_softmax(x, axis=_softmax_dim(x, dim))


def dropout(x: ArrayLike, p: float = 0.5, training: bool = True, inplace: bool = False,
            rng: "np.random.Generator | int | None" = None) -> Result:
    """In training, each entry zeroed with probability ``p`` and the rest scaled by
    1 / (1 - p); else x. ``rng`` (a seed or a Generator) fixes the draw.

    >>> cr.nn.functional.dropout(cr.ones(4), 0.5, rng=0).data.tolist()
    [2.0, 0.0, 0.0, 0.0]
    """
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p!r}")
    if not training or p == 0:
        return x
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    keep = xp.draw(generator.random, shape_of(x)) >= p
    return x * (keep / (1 - p)).astype(float_dtype(x))


def layer_norm(x: ArrayLike, normalized_shape: int | tuple[int, ...],
               weight: ArrayLike | None = None, bias: ArrayLike | None = None,
               eps: float = 1e-5) -> Result:
    """(x - mean) / sqrt(var + eps) over the last ``normalized_shape`` axes (the biased
    variance), times ``weight`` plus ``bias`` where given.

    >>> y = cr.nn.functional.layer_norm(cr.tensor([[1.0, 3.0]]), 2)
    >>> np.round(y.data, 4).tolist()
    [[-1.0, 1.0]]
    """
    n = 1 if isinstance(normalized_shape, int) else len(tuple(normalized_shape))
    axes = tuple(range(-n, 0))
    centred = x - ops.mean(x, axis=axes, keepdims=True)
    y = centred / ops.sqrt(ops.mean(centred * centred, axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


def embedding(indices: ArrayLike, weight: ArrayLike) -> Result:
    """The rows of ``weight`` at ``indices`` (ints, any shape): shape indices.shape +
    (embedding_dim,), as torch's; differentiable in the weight.

    >>> table = cr.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> cr.nn.functional.embedding(np.array([2, 0]), table).data.tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    indices = _raw(indices)
    if not unknown_values(indices):
        indices = np.asarray(indices).astype(np.intp)
    return ops.take(weight, indices, axis=0)


def unknown_values(indices) -> bool:
    """Whether raw indices are a transform's, whose numbers are not known here: a batch
    of cr.vmap (one set of indices per example) or cr.jit's traced array (other numbers
    at each replay). They index as they are, where eager ones are read and checked."""
    return isinstance(indices, Box) or (type(indices) is not np.ndarray
                                        and type(indices) in xp.ARRAYS)
