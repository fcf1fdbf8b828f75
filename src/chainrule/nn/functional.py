"""What layers compute, as functions: the affine map ``linear``, and the losses, for
tensors and plain arrays alike. Each loss takes PyTorch's ``reduction=``: "mean" over
the batch (the default), "sum", or "none" for one loss per example.

>>> import chainrule.nn.functional as F
>>> logits = cr.tensor([[0.0, 0.0]], requires_grad=True)      # (N=1, C=2)
>>> loss = F.cross_entropy(logits, [1])
>>> round(loss.item(), 4)                                     # log 2: a coin toss
0.6931
"""

from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from ..rules import fused
from .. import rules as ops
from ..primitive import raw as _raw, shape_of
from ..rules.common import Result, class_indices

__all__ = ["linear", "cross_entropy", "mse_loss", "binary_cross_entropy_with_logits",
           "hinge_loss"]

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
    """``x @ weight + bias``, the map of a ``Linear`` layer.

    x (..., in), weight (in, out), bias (out,) or None -> (..., out). The weight is
    stored (in, out), so no transpose is needed (PyTorch stores it (out, in)).

    ``activation="relu"`` gives ``relu(x @ weight + bias)``, a hidden layer (as Keras's
    ``Dense(..., activation="relu")``); ``Sequential`` and ``MLP`` use it for a Linear
    followed by a ReLU; "tanh", "sigmoid" and "gelu" work the same way. With the speed
    overrides on (``chainrule.rules.fused``), the map and a relu run as one fused operation.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> W = cr.tensor([[1.0], [1.0]], requires_grad=True)
    >>> b = cr.tensor([0.5], requires_grad=True)
    >>> y = linear(x, W, b)
    >>> y.data.tolist()
    [[3.5]]
    >>> y.sum().backward()
    >>> W.grad.tolist(), b.grad.tolist()
    ([[1.0], [2.0]], [1.0])
    """
    x_shape, w_shape = shape_of(x), shape_of(weight)
    if len(w_shape) != 2 or not x_shape or x_shape[-1] != w_shape[0]:
        raise ValueError(f"linear: input of shape {x_shape} and weight of shape {w_shape}; "
                         f"expected (..., in) and (in, out)")
    if bias is not None and shape_of(bias) not in ((w_shape[1],), ()):
        raise ValueError(f"linear: bias of shape {shape_of(bias)}, expected "
                         f"({w_shape[1]},) for a weight of shape {w_shape}")
    if activation is not None and activation not in _ACTIVATIONS:
        raise ValueError(f"linear: activation must be None or one of "
                         f"{', '.join(_ACTIVATIONS)}, got {activation!r}")
    if bias is not None and fused.enabled():
        if activation == "relu":
            return fused.linear_relu(x, weight, bias)
        out = fused.linear(x, weight, bias)
    else:
        out = ops.matmul(x, weight) if bias is None else ops.matmul(x, weight) + bias
    return out if activation is None else _ACTIVATIONS[activation](out)


_ACTIVATIONS = {"relu": ops.relu, "tanh": ops.tanh, "sigmoid": ops.sigmoid, "gelu": ops.gelu}


def cross_entropy(logits: ArrayLike, labels: ArrayLike, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Result:
    """Mean negative log-likelihood of integer ``labels`` (N,) under ``logits`` (N, C),
    through a stable log-softmax (``reduction="sum"``: the sum; ``"none"``: the N losses).

    The gradient with respect to the logits is (softmax(logits) - one_hot(labels)) / N.

    ``label_smoothing=e`` (in [0, 1]) takes the target as (1 - e) one_hot(labels) + e / C
    in place of the one-hot, as PyTorch does: each row's loss is (1 - e) times its
    negative log-likelihood plus e / C times the sum of -log softmax over the C classes,
    and the gradient is (softmax - target) / N.

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
    """
    if (reduction == "mean" and type(label_smoothing) in (float, int) and not label_smoothing
            and fused.enabled()):
        return fused.cross_entropy(logits, _raw(labels))  # (which checks the labels)
    _check_reduction("cross_entropy", reduction)
    _check_label_smoothing("cross_entropy", label_smoothing)
    labels = class_indices(_raw(labels), shape_of(logits))
    log_p = ops.log_softmax(logits, axis=-1)
    losses = -log_p[np.arange(len(labels)), labels]
    if label_smoothing:
        classes = shape_of(logits)[-1]
        losses = ((1 - label_smoothing) * losses
                  - (label_smoothing / classes) * ops.sum(log_p, axis=-1))
    return _reduce(losses, reduction)


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
