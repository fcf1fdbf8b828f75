"""What layers compute, as functions, for tensors and plain arrays alike, under torch's
names: the affine map ``linear``, the losses, the activations, dropout and
normalisations, the convolutions and pooling, and attention. Each loss takes PyTorch's
``reduction=``: "mean" over the batch (the default), "sum", or "none" for one loss per
example.

This file holds ``linear`` and the losses and gathers the rest from their homes:
``activation_functions.py``, ``conv_functions.py`` and ``scaled_dot_product.py``.

>>> import chainrule.nn.functional as F
>>> logits = cr.tensor([[0.0, 0.0]], requires_grad=True)      # (N=1, C=2)
>>> loss = F.cross_entropy(logits, [1])
>>> round(loss.item(), 4)                                     # log 2: a coin toss
0.6931
"""

from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from ..rules import fused
from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, raw as _raw, shape_of
from ..rules.common import Result, class_indices, float_dtype
from ..tensor import Tensor
from .activation_functions import (dropout, elu, embedding, gelu, layer_norm, leaky_relu,
                                   log_softmax, relu, sigmoid, silu, softmax, softplus, tanh)
from .conv_functions import (adaptive_avg_pool2d, avg_pool2d, batch_norm, conv1d, conv2d,
                             max_pool2d)
from .scaled_dot_product import scaled_dot_product_attention

__all__ = ["linear", "cross_entropy", "one_hot", "mse_loss",
           "binary_cross_entropy_with_logits", "hinge_loss", "nll_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "relu", "leaky_relu", "elu", "gelu", "silu", "sigmoid",
           "tanh", "softplus", "softmax", "log_softmax", "dropout", "layer_norm", "embedding",
           "conv1d",
           "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
           "scaled_dot_product_attention"]

REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op, reduction):
    """``reduction`` if it is "mean", "sum" or "none"; else a ValueError naming ``op``."""
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    return reduction


def _check_label_smoothing(op, label_smoothing):
    """``label_smoothing`` if it is a number in [0, 1]; else an error naming ``op``."""
    if isinstance(label_smoothing, (bool, np.bool_)) or not isinstance(label_smoothing, Real):
        raise TypeError(f"{op}: label_smoothing must be a real number in [0, 1], got "
                        f"{type(label_smoothing).__name__} {label_smoothing!r}")
    if not 0 <= label_smoothing <= 1:  # (NaN too)
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    return label_smoothing


def _reduce(losses, reduction):
    if reduction == "mean":
        return ops.mean(losses)
    if reduction == "sum":
        return ops.sum(losses)
    return losses


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


def cross_entropy(logits: ArrayLike, labels: ArrayLike, reduction: str = "mean",
                  label_smoothing: float = 0.0, ignore_index: int = -100) -> Result:
    """Mean negative log-likelihood of integer ``labels`` (N,) under ``logits`` (N, C),
    through a stable log-softmax (``reduction="sum"``: the sum; ``"none"``: the N losses).
    One example's logits (C,) take a 0-d label, as in PyTorch.

    The gradient with respect to the logits is (softmax(logits) - one_hot(labels)) / N.

    ``label_smoothing=e`` (in [0, 1]) takes the target as (1 - e) one_hot(labels) + e / C
    in place of the one-hot, as PyTorch does: each row's loss is (1 - e) times its
    negative log-likelihood plus e / C times the sum of -log softmax over the C classes,
    and the gradient is (softmax - target) / N.

    Labels equal to ``ignore_index`` (-100 by default, as PyTorch's) contribute
    nothing, to the loss or to the gradient; "mean" divides by the number of the other
    labels (NaN if there are none, as in PyTorch), "none" gives 0.0 for an ignored row.
    (Under cr.jit, labels of -100 with the default ``ignore_index`` are out of range:
    the program checks they are not; pass ``ignore_index`` to have them ignored there.)

    >>> logits = cr.tensor([[2.0, 0.0, 0.0]], requires_grad=True)   # N = 1, C = 3
    >>> loss = cr.nn.functional.cross_entropy(logits, [0])
    >>> round(loss.item(), 4)                     # -log(e**2 / (e**2 + 2))
    0.2395
    >>> loss.backward()
    >>> np.round(logits.grad, 4).tolist()         # softmax - [1, 0, 0]
    [[-0.213, 0.1065, 0.1065]]
    >>> logits = cr.tensor([[0.0, 0.0], [2.0, 0.0]])
    >>> np.round(cr.nn.functional.cross_entropy(logits, [0, 1], reduction="none").data, 4)
    array([0.6931, 2.1269])
    >>> logits = cr.tensor([[0.0, 0.0], [2.0, 0.0]], requires_grad=True)
    >>> loss = cr.nn.functional.cross_entropy(logits, [0, 1], label_smoothing=0.2)
    >>> loss.backward()                           # targets [0.9, 0.1] and [0.1, 0.9]
    >>> np.round(logits.grad, 4).tolist()         # (softmax - target) / 2
    [[-0.2, 0.2], [0.3904, -0.3904]]
    >>> logits = cr.tensor([[0.0, 0.0], [2.0, 0.0]], requires_grad=True)
    >>> loss = cr.nn.functional.cross_entropy(logits, [0, -1], ignore_index=-1)
    >>> round(loss.item(), 4)                     # the first row's alone
    0.6931
    """
    labels = _raw(labels)
    # one example, logits (C,) with a 0-d label, as torch takes it: a batch of one
    if len(shape_of(logits)) == 1 and not shape_of(labels):
        losses = cross_entropy(ops.expand_dims(logits, 0), ops.reshape(labels, (1,)),
                               reduction, label_smoothing, ignore_index)
        return losses[0] if reduction == "none" else losses
    if type(ignore_index) is not int and (isinstance(ignore_index, (bool, np.bool_))
                                          or not isinstance(ignore_index, Integral)):
        raise TypeError(f"cross_entropy: ignore_index must be an int, got "
                        f"{type(ignore_index).__name__} {ignore_index!r}")
    if ignore_index != -100 or _holds(labels, ignore_index):
        return _cross_entropy(logits, labels, reduction, label_smoothing, int(ignore_index))
    if (reduction == "mean" and type(label_smoothing) in (float, int) and not label_smoothing
            and fused.enabled()):
        return fused.cross_entropy(logits, labels)  # (which checks the labels)
    return _cross_entropy(logits, labels, reduction, label_smoothing, None)


def _holds(labels, ignore_index):
    """Whether eager labels (an ndarray or a list) hold ``ignore_index``: then the
    masking path computes the loss. A traced array's values are not known when the
    program is made, so a program keeps the faster path (and checks the labels)."""
    if type(labels) is not np.ndarray:
        if type(labels) in xp.ARRAYS:
            return False
        labels = np.asarray(labels)
    return labels.dtype.kind in "iuf" and bool((labels == ignore_index).any())


def _cross_entropy(logits, labels, reduction, label_smoothing, ignore_index):
    """cross_entropy without the fused override. With an ``ignore_index`` (None: every
    row counts), the rows of that label are masked out: their loss is multiplied by 0
    (so is their gradient), and the mean divides by the count of the others."""
    _check_reduction("cross_entropy", reduction)
    _check_label_smoothing("cross_entropy", label_smoothing)
    if ignore_index is not None:
        labels = xp.as_array(labels)
        kept = labels != ignore_index
        labels = xp.where(kept, labels, 0)
    labels = class_indices(labels, shape_of(logits))
    log_p = ops.log_softmax(logits, axis=-1)
    losses = -log_p[np.arange(len(labels)), labels]
    if label_smoothing:
        classes = shape_of(logits)[-1]
        losses = ((1 - label_smoothing) * losses
                  - (label_smoothing / classes) * ops.sum(log_p, axis=-1))
    if ignore_index is None:
        return _reduce(losses, reduction)
    losses = losses * kept.astype(float_dtype(_raw(logits)))
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # none kept: NaN, as torch
            return ops.sum(losses) / xp.sum(kept, dtype=float_dtype(_raw(logits)))
    return _reduce(losses, reduction)


def one_hot(tensor: ArrayLike, num_classes: int = -1) -> Result:
    """The one-hot encoding of integer class indices, as PyTorch's: shape
    ``tensor.shape + (num_classes,)``, int64, with a 1 at each index. ``num_classes=-1``
    takes the largest index plus one. An index below 0 or not below ``num_classes`` is a
    ValueError, a fraction a TypeError (whole floats are taken, where PyTorch wants
    int64); a Tensor gives a Tensor (without a gradient: the result is made of
    integers), an array an ndarray.

    >>> cr.nn.functional.one_hot(cr.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    >>> cr.nn.functional.one_hot(np.array([1]), num_classes=4).tolist()
    [[0, 1, 0, 0]]
    """
    indices = xp.as_array(_raw(tensor))
    # (cr.tensor([0, 2]) is float64: whole floats are taken, as cross_entropy takes them)
    if indices.dtype.kind not in "iu" and not (
            indices.dtype.kind == "f" and bool(xp.all(indices == xp.round(indices)))):
        raise TypeError(f"one_hot: expected integer class indices, got dtype "
                        f"{indices.dtype}" + (" with fractions" if indices.dtype.kind == "f"
                                               else ""))
    if indices.dtype.kind == "f":
        indices = indices.astype(np.int64)
    if (isinstance(num_classes, (bool, np.bool_)) or not isinstance(num_classes, Integral)
            or num_classes < -1):
        raise ValueError(f"one_hot: num_classes must be -1 (the largest index plus one) "
                         f"or a count >= 0, got {num_classes!r}")
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


def mse_loss(prediction: ArrayLike, target: ArrayLike, reduction: str = "mean") -> Result:
    """Mean squared error: the mean of (prediction - target)**2 over all entries
    (``reduction="sum"``: the sum; ``"none"``: each entry's square).

    >>> prediction = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> loss = cr.nn.functional.mse_loss(prediction, cr.tensor([1.0, 4.0]))
    >>> loss.item()                               # (0 + 4) / 2
    2.0
    >>> loss.backward()
    >>> prediction.grad.tolist()                  # 2 (prediction - target) / 2
    [0.0, -2.0]
    """
    _check_reduction("mse_loss", reduction)
    diff = prediction - target
    return _reduce(diff * diff, reduction)


def binary_cross_entropy_with_logits(logits: ArrayLike, targets: ArrayLike,
                                     reduction: str = "mean") -> Result:
    """Mean of -[y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))], computed stably as
    softplus(x) - x * y (``reduction="sum"``: the sum; ``"none"``: each entry's loss).

    ``logits`` and ``targets`` (in [0, 1]) have the same shape; the gradient with
    respect to the logits is (sigmoid(x) - y) / N.

    >>> x = cr.tensor([0.0, 0.0], requires_grad=True)
    >>> loss = cr.nn.functional.binary_cross_entropy_with_logits(x, cr.tensor([1.0, 0.0]))
    >>> round(loss.item(), 4)                     # log 2 for each
    0.6931
    >>> loss.backward()
    >>> x.grad.tolist()                           # (0.5 - y) / 2
    [-0.25, 0.25]
    """
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    return _reduce(ops.softplus(logits) - logits * targets, reduction)


def hinge_loss(scores: ArrayLike, labels: ArrayLike, reduction: str = "mean") -> Result:
    """micrograd's SVM loss: mean of max(0, 1 - y * score), labels in {-1, 1}
    (``reduction="sum"``: the sum; ``"none"``: each score's loss).

    Only scores on the wrong side of the margin get a gradient, -y / N.

    >>> scores = cr.tensor([-2.0, 0.5, -1.0, 0.0], requires_grad=True)
    >>> labels = cr.tensor([-1.0, 1.0, -1.0, 1.0])
    >>> loss = cr.nn.functional.hinge_loss(scores, labels)
    >>> loss.item()                               # (0 + 0.5 + 0 + 1) / 4
    0.375
    >>> loss.backward()
    >>> scores.grad.tolist()
    [0.0, -0.25, 0.0, -0.25]
    """
    _check_reduction("hinge_loss", reduction)
    return _reduce(ops.relu(1 - labels * scores), reduction)


def nll_loss(log_probs: ArrayLike, labels: ArrayLike, weight: ArrayLike | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Result:
    """The negative log-likelihood of class-index labels, given log-probabilities
    (N, C) (what ``log_softmax`` gives), as torch's: ``weight`` (C,) weighs each class,
    and the mean divides by the weights of the labels counted; labels equal to
    ``ignore_index`` count for nothing.

    >>> log_p = cr.log(cr.tensor([[0.25, 0.75], [0.5, 0.5]]))
    >>> round(cr.nn.functional.nll_loss(log_p, [1, 0]).item(), 4)   # -(log .75 + log .5) / 2
    0.4904
    """
    _check_reduction("nll_loss", reduction)
    labels = _raw(labels)
    # labels batched by cr.vmap (per-example losses) or traced by cr.jit stay so: cr's
    # operations map and record them
    labels = labels.astype(np.int64) if isinstance(labels, Box) or type(labels) in xp.ARRAYS \
        else np.asarray(labels).astype(np.int64)
    kept = labels != ignore_index
    safe = ops.where(kept, labels, 0)
    dtype = float_dtype(_raw(log_probs))  # (float32 log-probabilities: a float32 loss)
    table = (np.ones(shape_of(log_probs)[-1], dtype) if weight is None
             else np.asarray(_raw(weight), dtype=dtype))
    weights = ops.take(table, safe) * kept
    losses = -log_probs[np.arange(len(labels)), safe] * weights
    if reduction == "mean":
        return ops.sum(losses) / weights.sum()
    return _reduce(losses, reduction)


def l1_loss(prediction: ArrayLike, target: ArrayLike, reduction: str = "mean") -> Result:
    """The mean absolute error, |prediction - target| (its gradient at 0 is 0).

    >>> cr.nn.functional.l1_loss(cr.tensor([1.0, 2.0]), cr.tensor([0.0, 4.0])).item()
    1.5
    """
    _check_reduction("l1_loss", reduction)
    return _reduce(ops.absolute(prediction - target), reduction)


def smooth_l1_loss(prediction: ArrayLike, target: ArrayLike, reduction: str = "mean",
                   beta: float = 1.0) -> Result:
    """|d| - beta/2 for |d| >= beta, d**2 / (2 beta) below, d = prediction - target, as
    torch's (beta = 0: the L1 loss).

    >>> cr.nn.functional.smooth_l1_loss(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0])).item()
    1.3125
    """
    _check_reduction("smooth_l1_loss", reduction)
    size = ops.absolute(prediction - target)
    if beta == 0:
        return _reduce(size, reduction)
    return _reduce(ops.where(_raw(size) < beta, 0.5 * size * size / beta, size - 0.5 * beta),
                   reduction)


def huber_loss(prediction: ArrayLike, target: ArrayLike, reduction: str = "mean",
               delta: float = 1.0) -> Result:
    """d**2 / 2 for |d| < delta, delta (|d| - delta/2) beyond, d = prediction - target.

    >>> cr.nn.functional.huber_loss(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0])).item()
    1.3125
    """
    _check_reduction("huber_loss", reduction)
    size = ops.absolute(prediction - target)
    return _reduce(ops.where(_raw(size) < delta, 0.5 * size * size,
                             delta * (size - 0.5 * delta)), reduction)


def binary_cross_entropy(probabilities: ArrayLike, targets: ArrayLike,
                         reduction: str = "mean") -> Result:
    """-[y log p + (1 - y) log(1 - p)] for probabilities p, each log clamped at -100 as
    torch's (``binary_cross_entropy_with_logits`` is the stable form on logits).

    >>> round(cr.nn.functional.binary_cross_entropy(cr.tensor([0.5]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction("binary_cross_entropy", reduction)
    log_p = ops.maximum(ops.log(probabilities), -100.0)
    log_q = ops.maximum(ops.log1p(-probabilities), -100.0)
    return _reduce(-(targets * log_p + (1 - targets) * log_q), reduction)
