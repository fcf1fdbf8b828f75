"""What layers compute, as functions, for tensors and plain arrays alike, under torch's
names: the affine map ``linear``, the losses, the activations, dropout and
normalisations, the convolutions and pooling, and attention. Each loss takes PyTorch's
``reduction=``: "mean" over the batch (the default), "sum", or "none" for one loss per
example.

This file holds ``linear``, ``bilinear`` and ``one_hot`` and gathers the rest from their homes:
``loss_functions.py``, ``likelihood_losses.py``, ``embedding_losses.py``,
``sequence_losses.py``, ``distances.py``, ``activation_functions.py``, ``embeddings.py``,
``conv_functions.py``, ``pooling_functions.py``, ``normalization.py`` and
``scaled_dot_product.py``.

>>> import chainrule.nn.functional as F
>>> logits = cr.tensor([[0.0, 0.0]], requires_grad=True)      # (N=1, C=2)
>>> loss = F.cross_entropy(logits, [1])
>>> round(loss.item(), 4)                                     # log 2: a coin toss
0.6931
"""

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..rules import fused
from .. import arrays as xp
from .. import rules as ops
from ..primitive import raw as _raw, shape_of
from ..rules.common import Result
from ..rules.predicates import all as _all, logical_and
from ..tensor import Tensor
from ..methods.torch_inplace import (celu_, elu_, hardtanh_, leaky_relu_, relu_, rrelu_,
                                     selu_, threshold_)
from .activation_functions import (celu, dropout, elu, gelu, gumbel_softmax, glu, hardshrink,
                                   hardsigmoid, hardswish, hardtanh, layer_norm, leaky_relu,
                                   log_softmax, logsigmoid, mish, prelu, relu, relu6, rrelu,
                                   selu, sigmoid, silu, softmax, softmin, softplus,
                                   softshrink, softsign, tanh, tanhshrink, threshold)
from .conv_functions import conv1d, conv2d
from .conv_functions import conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from .embeddings import embedding, embedding_bag
from .distances import cosine_similarity, normalize, pairwise_distance, pdist
from .embedding_losses import (cosine_embedding_loss, hinge_embedding_loss,
                               margin_ranking_loss, multi_margin_loss,
                               multilabel_margin_loss, multilabel_soft_margin_loss,
                               soft_margin_loss, triplet_margin_loss,
                               triplet_margin_with_distance_loss)
from .likelihood_losses import gaussian_nll_loss, kl_div, poisson_nll_loss
from .loss_functions import (binary_cross_entropy, binary_cross_entropy_with_logits,
                             cross_entropy, hinge_loss, huber_loss, l1_loss,
                             linear_cross_entropy, mse_loss,
                             nll_loss, smooth_l1_loss)
from .normalization import (batch_norm, group_norm, instance_norm, local_response_norm,
                            rms_norm)
from .padding import pad
from .pooling_functions import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .pooling_functions import (adaptive_avg_pool1d, adaptive_avg_pool3d,
                                adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
                                avg_pool1d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                                max_pool1d, max_pool3d, max_unpool1d, max_unpool2d,
                                max_unpool3d)
from .folding import fold, unfold
from .pooling_functions import (adaptive_max_pool1d_with_indices,
                                adaptive_max_pool2d_with_indices,
                                adaptive_max_pool3d_with_indices, max_pool1d_with_indices,
                                max_pool2d_with_indices, max_pool3d_with_indices)
from .channel_dropout import (alpha_dropout, dropout1d, dropout2d, dropout3d,
                              feature_alpha_dropout)
from .reshaping import channel_shuffle, pixel_shuffle, pixel_unshuffle
from .resampling import interpolate, upsample
from .resampling import upsample_bilinear, upsample_nearest
from .sampling_grids import affine_grid, grid_sample
from .scaled_dot_product import scaled_dot_product_attention
from .sequence_losses import ctc_loss
from .pooling_functions import (fractional_max_pool2d, fractional_max_pool2d_with_indices,
                                fractional_max_pool3d, fractional_max_pool3d_with_indices)

__all__ = ["linear", "bilinear", "cross_entropy", "one_hot", "mse_loss",
           "binary_cross_entropy_with_logits", "hinge_loss", "nll_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "relu", "leaky_relu", "elu", "gelu", "silu", "sigmoid",
           "tanh", "softplus", "softmax", "log_softmax", "dropout", "layer_norm", "embedding",
           "relu6", "hardtanh", "selu", "celu", "mish", "softsign", "logsigmoid", "hardswish",
           "hardsigmoid", "hardshrink", "softshrink", "tanhshrink", "threshold", "rrelu",
           "glu", "softmin", "prelu", "conv1d",
           "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
           "scaled_dot_product_attention", "normalize", "cosine_similarity",
           "pairwise_distance", "pdist", "kl_div", "poisson_nll_loss",
           "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "multi_margin_loss",
           "multilabel_margin_loss"]

def linear(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
           activation: str | None = None) -> Result:
    """``x @ weight.T + bias``, the map of a ``Linear`` layer, as ``torch.nn.functional.linear``.

    x (..., in), weight (out, in), bias (out,) or None -> (..., out): the weight in
    PyTorch's layout, one row per output.

    ``activation="relu"`` gives ``relu(x @ weight.T + bias)``, a hidden layer (as Keras's
    ``Dense(..., activation="relu")``); ``Sequential`` and ``MLP`` use it for a Linear
    followed by a ReLU; "tanh", "sigmoid" and "gelu" work the same way. With the speed
    overrides on (``chainrule.rules.fused``), the map and a relu run as one fused operation.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> W = cr.tensor([[1.0, 1.0]], requires_grad=True)
    >>> b = cr.tensor([0.5], requires_grad=True)
    >>> y = linear(x, W, b)
    >>> y.data.tolist()
    [[3.5]]
    >>> y.sum().backward()
    >>> W.grad.tolist(), b.grad.tolist()
    ([[1.0, 2.0]], [1.0])
    """
    x_shape, w_shape = shape_of(x), shape_of(weight)
    if len(w_shape) != 2 or not x_shape or x_shape[-1] != w_shape[1]:
        raise ValueError(f"linear: input of shape {x_shape} and weight of shape {w_shape}; "
                         f"expected (..., in) and (out, in)")
    if bias is not None and shape_of(bias) not in ((w_shape[0],), ()):
        raise ValueError(f"linear: bias of shape {shape_of(bias)}, expected "
                         f"({w_shape[0]},) for a weight of shape {w_shape}")
    if activation is not None and activation not in _ACTIVATIONS:
        raise ValueError(f"linear: activation must be None or one of "
                         f"{', '.join(_ACTIVATIONS)}, got {activation!r}")
    if bias is not None and fused.enabled():
        if activation == "relu":
            return fused.linear_relu(x, weight, bias)
        out = fused.linear(x, weight, bias)
    else:
        out = ops.matmul(x, ops.swapaxes(weight, -1, -2))
        out = out if bias is None else out + bias
    return out if activation is None else _ACTIVATIONS[activation](out)


_ACTIVATIONS = {"relu": ops.relu, "tanh": ops.tanh, "sigmoid": ops.sigmoid, "gelu": ops.gelu}


def bilinear(input1: ArrayLike, input2: ArrayLike, weight: ArrayLike,
             bias: ArrayLike | None = None) -> Result:
    """torch's ``bilinear``: y_k = x1 A_k x2 + b_k, for x1 (..., in1), x2 (..., in2),
    weight A (out, in1, in2) and bias (out,) or None -> (..., out).

    >>> A = cr.tensor([[[1.0, 0.0], [0.0, 2.0]]])             # one output
    >>> bilinear(cr.tensor([[1.0, 1.0]]), cr.tensor([[3.0, 4.0]]), A).data.tolist()
    [[11.0]]
    """
    s1, s2, sw = shape_of(input1), shape_of(input2), shape_of(weight)
    if len(sw) != 3 or not s1 or not s2 or s1[-1] != sw[1] or s2[-1] != sw[2] \
            or s1[:-1] != s2[:-1]:
        raise ValueError(f"bilinear: input1 of shape {s1}, input2 of shape {s2} and weight "
                         f"of shape {sw}; expected (..., in1), (..., in2) and (out, in1, "
                         f"in2)")
    y = ops.einsum("...i,kij,...j->...k", input1, weight, input2)
    return y if bias is None else y + bias


def one_hot(tensor: ArrayLike, num_classes: int = -1) -> Result:
    """The one-hot encoding of integer class indices, as PyTorch's: shape
    ``tensor.shape + (num_classes,)``, int64, with a 1 at each index. ``num_classes=-1``
    takes the largest index plus one. An index below 0 or not below ``num_classes`` is a
    ValueError, a fraction a TypeError (whole floats are taken, where PyTorch wants
    int64); a Tensor gives a Tensor (without a gradient: the result is made of
    integers), an array an ndarray. Under vmap or cr.jit ``num_classes`` must be given,
    and the indices are checked when their numbers exist (at each run of a program).

    >>> cr.nn.functional.one_hot(cr.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    >>> cr.nn.functional.one_hot(np.array([1]), num_classes=4).tolist()
    [[0, 1, 0, 0]]
    """
    if (isinstance(num_classes, (bool, np.bool_)) or not isinstance(num_classes, Integral)
            or num_classes < -1):
        raise ValueError(f"one_hot: num_classes must be -1 (the largest index plus one) "
                         f"or a count >= 0, got {num_classes!r}")
    indices = xp.as_array(_raw(tensor))
    if type(indices) is not np.ndarray:  # traced by vmap or cr.jit: checked when known
        if num_classes == -1:
            raise ValueError("one_hot: num_classes=-1 reads the largest index, which a "
                             "transform is tracing here; pass num_classes")
        inside = logical_and(indices >= 0, indices < num_classes)
        if indices.dtype.kind == "f":
            inside = logical_and(inside, indices == ops.round(indices))
        xp.require(_all(inside), _not_a_class, num_classes)
        return ops.astype(ops.expand_dims(indices, -1) == xp.arange(int(num_classes)),
                          np.int64)
    # (cr.tensor([0, 2]) is float64: whole floats are taken, as cross_entropy takes them)
    if indices.dtype.kind not in "iu" and not (
            indices.dtype.kind == "f" and bool(xp.all(indices == xp.round(indices)))):
        raise TypeError(f"one_hot: expected integer class indices, got dtype "
                        f"{indices.dtype}" + (" with fractions" if indices.dtype.kind == "f"
                                               else ""))
    if indices.dtype.kind == "f":
        indices = indices.astype(np.int64)
    if num_classes == -1:
        if not indices.size:
            raise ValueError("one_hot: cannot infer num_classes from an empty tensor; "
                             "pass num_classes")
        num_classes = int(indices.max()) + 1
    if indices.size:
        low, high = indices.min(), indices.max()
        if low < 0:
            raise ValueError(f"one_hot: class values must be non-negative, got {low}")
        if high >= num_classes:
            raise ValueError(f"one_hot: class values must be smaller than num_classes = "
                             f"{num_classes}, got {high}")
    encoded = (indices[..., None] == xp.arange(int(num_classes))).astype(np.int64)
    return Tensor(encoded, dtype=np.int64) if isinstance(tensor, Tensor) else encoded


def _not_a_class(num_classes):
    return ValueError(f"one_hot: class values must be whole numbers in [0, {num_classes})")


__all__ += ["group_norm", "instance_norm", "rms_norm"]
__all__ += ["pad"]
__all__ += ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "channel_shuffle",
            "pixel_shuffle", "pixel_unshuffle"]
__all__ += ["interpolate", "upsample"]
__all__ += ["conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
__all__ += ["max_pool1d", "max_pool3d", "avg_pool1d", "avg_pool3d", "adaptive_avg_pool1d",
            "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
            "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
            "max_unpool2d", "max_unpool3d", "fold", "unfold"]
__all__ += ["ctc_loss"]
__all__ += ["embedding_bag"]
__all__ += ["gumbel_softmax", "feature_alpha_dropout", "local_response_norm"]
__all__ += ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices"]
__all__ += ["affine_grid", "grid_sample", "upsample_bilinear", "upsample_nearest"]
__all__ += ["linear_cross_entropy"]
__all__ += ["fractional_max_pool2d", "fractional_max_pool3d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]
__all__ += ["relu_", "elu_", "leaky_relu_", "hardtanh_", "threshold_", "celu_", "selu_",
            "rrelu_"]
