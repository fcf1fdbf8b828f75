"""The losses of ``nn.functional``, as PyTorch's: each takes ``reduction=`` ("mean" over
the batch, the default; "sum"; or "none" for one loss per example), and the class
losses take PyTorch's options: per-class ``weight``, ``ignore_index``,
``label_smoothing``, class-probability targets, and inputs (N, C, d1, ..., dk) with a
class at every position (a segmentation's pixels, a sequence's tokens).

Weights are taken as given: an array is a constant, and a Tensor that requires grad
gets its gradient too (PyTorch's class weights have none).

>>> import chainrule.nn.functional as F
>>> logits = cr.tensor([[0.0, 0.0]], requires_grad=True)      # (N=1, C=2)
>>> loss = F.cross_entropy(logits, [1])
>>> round(loss.item(), 4)                                     # log 2: a coin toss
0.6931
"""

from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from ..rules import elementary, fused
from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, raw as _raw, shape_of
from ..rules.common import Result, class_indices, float_dtype

__all__ = ["cross_entropy", "linear_cross_entropy", "nll_loss", "mse_loss",
           "binary_cross_entropy_with_logits", "binary_cross_entropy", "hinge_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss"]

# an ignore_index no label equals: torch's ignore_index=None, nothing ignored
_NO_LABEL = -(2 ** 62)

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


def _weights(op, name, weight, like):
    """``weight`` ready to multiply losses computed from ``like``, in ``like``'s float
    dtype: a Tensor or traced value stays one (so it can be differentiated), anything
    else becomes an array. A string is the one mistake PyTorch's order makes likely (its
    ``reduction`` comes after ``weight``), so it gets its own message."""
    if isinstance(weight, str):
        raise TypeError(f"{op}: {name} must be an array of weights, got {weight!r}; "
                        f"pass reduction={weight!r} by name")
    dtype = float_dtype(_raw(like))
    if isinstance(weight, Box):  # (cast by an operation: its derivative flows back)
        return weight if weight.dtype == dtype else ops.astype(weight, dtype)
    return xp.as_array(_raw(weight), dtype=dtype)


def _class_weights(op, weight, logits):
    """``weight`` as one number per class, C = the class axis of ``logits`` (axis 1, or
    0 for one example (C,)); None stays None."""
    if weight is None:
        return None
    weight, shape = _weights(op, "weight", weight, logits), shape_of(logits)
    classes = shape[1] if len(shape) > 1 else shape[0]
    if shape_of(weight) != (classes,):
        raise ValueError(f"{op}: weight of shape {shape_of(weight)} for inputs of shape "
                         f"{shape}; expected ({classes},), one weight per class")
    return weight


def _positions_as_rows(op, logits, labels):
    """Logits (N, C, d1, ..., dk) and labels (N, d1, ..., dk) as PyTorch takes them, a
    class at every position, turned into rows (N * d1 * ... * dk, C) and labels (M,)."""
    shape, labels_shape = shape_of(logits), shape_of(labels)
    if labels_shape != shape[:1] + shape[2:]:
        raise ValueError(f"{op}: logits of shape {shape} and labels of shape "
                         f"{labels_shape}; expected (N, C, d1, ..., dk) and "
                         f"(N, d1, ..., dk)")
    rows = ops.reshape(ops.moveaxis(logits, 1, -1), (-1, shape[1]))
    return rows, ops.reshape(xp.as_array(labels) if not isinstance(labels, Box) else labels,
                             (-1,))


def cross_entropy(logits: ArrayLike, labels: ArrayLike, weight: ArrayLike | None = None,
                  *, reduction: str = "mean", label_smoothing: float = 0.0,
                  ignore_index: int = -100) -> Result:
    """Mean negative log-likelihood of integer ``labels`` (N,) under ``logits`` (N, C),
    through a stable log-softmax (``reduction="sum"``: the sum; ``"none"``: the N losses).
    One example's logits (C,) take a 0-d label, as in PyTorch; logits (N, C, d1, ..., dk)
    take labels (N, d1, ..., dk), a class at each position, and "none" gives a loss at
    each.

    The gradient with respect to the logits is (softmax(logits) - one_hot(labels)) / N.

    ``weight`` (C,) weighs each class: a row's loss is multiplied by its label's weight,
    and "mean" divides by the sum of those weights (not by N), as PyTorch does.

    ``label_smoothing=e`` (in [0, 1]) takes the target as (1 - e) one_hot(labels) + e / C
    in place of the one-hot, as PyTorch does: each row's loss is (1 - e) times its
    negative log-likelihood plus e / C times the sum of -log softmax over the C classes
    (each weighted by its class's weight), and the gradient is (softmax - target) / N.

    Labels equal to ``ignore_index`` (-100 by default, as PyTorch's) contribute
    nothing, to the loss or to the gradient; "mean" divides by the number (or weight)
    of the other labels (NaN if there are none, as in PyTorch), "none" gives 0.0 for an
    ignored row. (Under cr.jit, -100 is not looked for, so that a program keeps the
    fused path: labels of -100 are out of range there and the program refuses them;
    mark the rows with another ``ignore_index`` to have them ignored.)

    Targets of the logits' own shape are class probabilities (soft labels, a float
    array): the loss is -sum_c weight_c target_c log softmax_c along the class axis,
    and "mean" divides by the number of losses, as PyTorch does.

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
    >>> logits = cr.tensor([[0.0, 0.0], [0.0, 0.0]])
    >>> loss = cr.nn.functional.cross_entropy(logits, [0, 1], np.array([3.0, 1.0]))
    >>> round(loss.item(), 4)                     # (3 log 2 + log 2) / (3 + 1)
    0.6931
    >>> round(cr.nn.functional.cross_entropy(logits, np.full((2, 2), 0.5)).item(), 4)
    0.6931
    """
    shape, labels_shape = shape_of(logits), shape_of(labels)
    table = _class_weights("cross_entropy", weight, logits)
    if labels_shape == shape and shape:  # (probabilities have a derivative: kept whole)
        return _cross_entropy_of_probabilities(logits, labels, table, reduction,
                                               label_smoothing, ignore_index)
    labels = _raw(labels)
    # one example, logits (C,) with a 0-d label, as torch takes it: a batch of one
    if len(shape) == 1 and not labels_shape:
        losses = cross_entropy(ops.expand_dims(logits, 0), ops.reshape(labels, (1,)), table,
                               reduction=reduction, label_smoothing=label_smoothing,
                               ignore_index=ignore_index)
        return losses[0] if reduction == "none" else losses
    if len(shape) > 2:
        rows, row_labels = _positions_as_rows("cross_entropy", logits, labels)
        losses = cross_entropy(rows, row_labels, table, reduction=reduction,
                               label_smoothing=label_smoothing, ignore_index=ignore_index)
        return ops.reshape(losses, labels_shape) if reduction == "none" else losses
    if type(ignore_index) is not int and (isinstance(ignore_index, (bool, np.bool_))
                                          or not isinstance(ignore_index, Integral)):
        raise TypeError(f"cross_entropy: ignore_index must be an int, got "
                        f"{type(ignore_index).__name__} {ignore_index!r}")
    if ignore_index != -100 or _holds(labels, ignore_index):
        return _cross_entropy(logits, labels, reduction, label_smoothing, int(ignore_index),
                              table)
    if (reduction == "mean" and type(label_smoothing) in (float, int) and not label_smoothing
            and table is None and fused.enabled()):
        return fused.cross_entropy(logits, labels)  # (which checks the labels)
    return _cross_entropy(logits, labels, reduction, label_smoothing, None, table)


def _holds(labels, ignore_index):
    """Whether eager labels (an ndarray or a list) hold ``ignore_index``: then the
    masking path computes the loss. A traced array's values are not known when the
    program is made, so a program keeps the faster path (and checks the labels)."""
    if type(labels) is not np.ndarray:
        if type(labels) in xp.ARRAYS:
            return False
        labels = np.asarray(labels)
    return labels.dtype.kind in "iuf" and bool((labels == ignore_index).any())


def _cross_entropy(logits, labels, reduction, label_smoothing, ignore_index, weight=None):
    """cross_entropy without the fused override. With an ``ignore_index`` (None: every
    row counts), the rows of that label are masked out: their loss is multiplied by 0
    (so is their gradient), and the mean divides by the count of the others. With class
    weights (None: all 1), each row's loss is multiplied by its label's weight, and the
    mean divides by the sum of the weights of the rows counted."""
    _check_reduction("cross_entropy", reduction)
    _check_label_smoothing("cross_entropy", label_smoothing)
    if ignore_index is not None:
        labels = xp.as_array(labels)
        kept = labels != ignore_index
        labels = xp.where(kept, labels, 0)
    labels = class_indices(labels, shape_of(logits))
    log_p = ops.log_softmax(logits, axis=-1)
    losses = -log_p[np.arange(len(labels)), labels]
    classes = shape_of(logits)[-1]
    if weight is not None:
        return _weighted_cross_entropy(losses, log_p, labels, weight, reduction,
                                       label_smoothing, kept if ignore_index is not None
                                       else None)
    if label_smoothing:
        losses = ((1 - label_smoothing) * losses
                  - (label_smoothing / classes) * ops.sum(log_p, axis=-1))
    if ignore_index is None:
        return _reduce(losses, reduction)
    losses = losses * kept.astype(float_dtype(_raw(logits)))
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # none kept: NaN, as torch
            return ops.sum(losses) / xp.sum(kept, dtype=float_dtype(_raw(logits)))
    return _reduce(losses, reduction)


def _weighted_cross_entropy(losses, log_p, labels, weight, reduction, label_smoothing, kept):
    """Each row's negative log-likelihood ``losses`` times its label's weight; the
    smoothing term weighs each class by its own weight. PyTorch divides both terms'
    "mean" by the same sum, the weights of the labels counted."""
    row_weights = ops.take(weight, labels)
    if kept is not None:
        row_weights = row_weights * kept.astype(float_dtype(_raw(log_p)))
    losses = losses * row_weights
    if label_smoothing:
        smooth = -ops.sum(log_p * weight, axis=-1)
        if kept is not None:
            smooth = smooth * kept.astype(float_dtype(_raw(log_p)))
        classes = shape_of(log_p)[-1]
        losses = (1 - label_smoothing) * losses + (label_smoothing / classes) * smooth
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # none kept: NaN, as torch
            return ops.sum(losses) / ops.sum(row_weights)
    return _reduce(losses, reduction)


def _cross_entropy_of_probabilities(logits, targets, weight, reduction, label_smoothing,
                                    ignore_index):
    """cross_entropy of class probabilities, targets of the logits' shape."""
    _check_reduction("cross_entropy", reduction)
    _check_label_smoothing("cross_entropy", label_smoothing)
    dtype = targets.dtype if hasattr(targets, "dtype") else np.asarray(targets).dtype
    if np.dtype(dtype).kind not in "fc":
        raise ValueError(f"cross_entropy: logits of shape {shape_of(logits)} and labels of "
                         f"shape {shape_of(targets)} are class probabilities, which must be "
                         f"floats, got dtype {dtype}; class indices: expected (N, C) and "
                         f"(N,)")
    if ignore_index != -100:
        raise ValueError(f"cross_entropy: ignore_index={ignore_index!r} applies to class "
                         f"indices; these labels are class probabilities, of the "
                         f"logits' shape {shape_of(logits)}")
    shape = shape_of(logits)
    axis = 1 if len(shape) > 1 else 0
    log_p = ops.log_softmax(logits, axis=axis)
    if label_smoothing:
        targets = targets * (1 - label_smoothing) + label_smoothing / shape[axis]
    terms = log_p * targets
    if weight is not None:  # one weight per class, along the class axis
        terms = terms * ops.reshape(weight, (shape[axis],) + (1,) * (len(shape) - axis - 1))
    return _reduce(-ops.sum(terms, axis=axis), reduction)


def linear_cross_entropy(input: ArrayLike, linear_weight: ArrayLike, target: ArrayLike, *,
                         linear_bias: ArrayLike | None = None,
                         weight: ArrayLike | None = None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options: object = None) -> Result:
    """torch's ``linear_cross_entropy``: ``cross_entropy`` of the logits ``input @
    linear_weight.T + linear_bias``, for input (N, in) (or (in,)), linear_weight
    (C, *out, in) and bias (C, *out): the logits are (N, C, *out) and the targets
    (N, *out). ``ignore_index`` None ignores nothing. ``options`` (torch's chunking of
    the batch, a memory strategy) is accepted; the numbers are the same without it.

    >>> W = cr.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> round(linear_cross_entropy(cr.tensor([[0.0, 0.0]]), W, np.array([1])).item(), 4)
    0.6931
    """
    x_shape, w_shape = shape_of(input), shape_of(linear_weight)
    if len(w_shape) < 2 or not x_shape or x_shape[-1] != w_shape[-1]:
        raise ValueError(f"linear_cross_entropy: input of shape {x_shape} and "
                         f"linear_weight of shape {w_shape}; expected (N, in) and "
                         f"(C, *out_features, in)")
    logits = ops.tensordot(input, linear_weight, axes=([len(x_shape) - 1], [len(w_shape) - 1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight, reduction=reduction,
                         label_smoothing=label_smoothing,
                         ignore_index=_NO_LABEL if ignore_index is None else ignore_index)


def nll_loss(log_probs: ArrayLike, labels: ArrayLike, weight: ArrayLike | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Result:
    """The negative log-likelihood of class-index labels, given log-probabilities
    (N, C) (what ``log_softmax`` gives), as torch's: ``weight`` (C,) weighs each class,
    and the mean divides by the weights of the labels counted; labels equal to
    ``ignore_index`` count for nothing. Log-probabilities (N, C, d1, ..., dk) take
    labels (N, d1, ..., dk), a class at each position.

    >>> log_p = cr.log(cr.tensor([[0.25, 0.75], [0.5, 0.5]]))
    >>> round(cr.nn.functional.nll_loss(log_p, [1, 0]).item(), 4)   # -(log .75 + log .5) / 2
    0.4904
    """
    _check_reduction("nll_loss", reduction)
    labels = _raw(labels)
    shape = shape_of(log_probs)
    table = _class_weights("nll_loss", weight, log_probs)
    # one example, log-probabilities (C,) with a 0-d label, as torch takes it
    if len(shape) == 1 and not shape_of(labels):
        losses = nll_loss(ops.expand_dims(log_probs, 0), ops.reshape(labels, (1,)), table,
                          ignore_index, reduction)
        return losses[0] if reduction == "none" else losses
    if len(shape) > 2:
        rows, row_labels = _positions_as_rows("nll_loss", log_probs, labels)
        losses = nll_loss(rows, row_labels, table, ignore_index, reduction)
        return ops.reshape(losses, shape_of(labels)) if reduction == "none" else losses
    # labels batched by cr.vmap (per-example losses) or traced by cr.jit stay so: cr's
    # operations map and record them
    labels = labels.astype(np.int64) if isinstance(labels, Box) or type(labels) in xp.ARRAYS \
        else np.asarray(labels).astype(np.int64)
    kept = labels != ignore_index
    # every label not ignored must be a class: -1 would pick the last one silently
    safe = class_indices(ops.where(kept, labels, 0), shape, "nll_loss", "log-probabilities")
    dtype = float_dtype(_raw(log_probs))  # (float32 log-probabilities: a float32 loss)
    if table is None:
        table = np.ones(shape[-1], dtype)
    weights = ops.take(table, safe) * kept
    losses = -log_probs[np.arange(len(labels)), safe] * weights
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # none kept: NaN, as torch
            return ops.sum(losses) / weights.sum()
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
                                     weight: ArrayLike | None = None, *,
                                     reduction: str = "mean",
                                     pos_weight: ArrayLike | None = None) -> Result:
    """Mean of -[y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))], computed stably as
    softplus(x) - x * y (``reduction="sum"``: the sum; ``"none"``: each entry's loss).

    ``logits`` and ``targets`` (in [0, 1]) have the same shape; the gradient with
    respect to the logits is (sigmoid(x) - y) / N.

    As PyTorch's: ``weight`` (broadcast against the losses) multiplies each loss, and
    ``pos_weight`` (one per class, broadcast along the last axis) weighs the positive
    term, -[pos_weight y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))], computed as
    (1 - y) x + (1 + (pos_weight - 1) y) softplus(-x); "mean" divides by the number of
    losses either way.

    >>> x = cr.tensor([0.0, 0.0], requires_grad=True)
    >>> loss = cr.nn.functional.binary_cross_entropy_with_logits(x, cr.tensor([1.0, 0.0]))
    >>> round(loss.item(), 4)                     # log 2 for each
    0.6931
    >>> loss.backward()
    >>> x.grad.tolist()                           # (0.5 - y) / 2
    [-0.25, 0.25]
    >>> loss = cr.nn.functional.binary_cross_entropy_with_logits(
    ...     cr.tensor([0.0, 0.0]), cr.tensor([1.0, 0.0]), pos_weight=np.array(3.0))
    >>> round(loss.item(), 4)                     # (3 log 2 + log 2) / 2
    1.3863
    """
    op = "binary_cross_entropy_with_logits"
    _check_reduction(op, reduction)
    if pos_weight is None:
        losses = ops.softplus(logits) - logits * targets
    else:
        pos_weight = _broadcast_weights(op, "pos_weight", pos_weight, logits)
        losses = (1 - targets) * logits + (1 + (pos_weight - 1) * targets) * ops.softplus(
            -logits)
    if weight is not None:
        losses = losses * _broadcast_weights(op, "weight", weight, logits)
    return _reduce(losses, reduction)


def _broadcast_weights(op, name, weight, like):
    """``weight`` as ``_weights`` gives it, refused in one line unless it broadcasts
    to ``like``'s shape without growing it."""
    weight = _weights(op, name, weight, like)
    shape = shape_of(like)
    try:
        fits = np.broadcast_shapes(shape_of(weight), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: {name} of shape {shape_of(weight)} does not broadcast to "
                         f"the inputs' shape {shape}")
    return weight


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
                         weight: ArrayLike | None = None, *,
                         reduction: str = "mean") -> Result:
    """-[y log p + (1 - y) log(1 - p)] for probabilities p, each log clamped at -100 as
    torch's, and its gradient (p - y) / max(p (1 - p), 1e-12), finite where a sigmoid
    rounded to 0 or 1, as torch's (``binary_cross_entropy_with_logits`` is the stable
    form on logits);
    ``weight`` (broadcast against the losses) multiplies each, as PyTorch's.

    >>> round(cr.nn.functional.binary_cross_entropy(cr.tensor([0.5]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction("binary_cross_entropy", reduction)
    losses = elementary.binary_cross_entropy(probabilities, targets)
    if weight is not None:
        losses = losses * _broadcast_weights("binary_cross_entropy", "weight", weight,
                                             probabilities)
    return _reduce(losses, reduction)
