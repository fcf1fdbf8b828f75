"""The margin and embedding losses of ``nn.functional``, as PyTorch's: ranking pairs
(``margin_ranking_loss``), embeddings of pairs and triplets (``hinge_embedding_loss``,
``cosine_embedding_loss``, ``triplet_margin_loss``,
``triplet_margin_with_distance_loss``) and the margin classifiers (``soft_margin_loss``,
``multilabel_soft_margin_loss``, ``multi_margin_loss``, ``multilabel_margin_loss``).
Each takes ``reduction=`` "mean" (the default), "sum" or "none".

At a margin exactly met each gives torch's one-sided gradient: the hinges max(0, z) of
the pair and triplet losses pass the gradient at z = 0 (torch's clamp_min), those of
``multi_margin_loss`` and ``multilabel_margin_loss`` do not (torch's z > 0).
``reduction`` is keyword-only where torch's signature puts its deprecated
``size_average`` and ``reduce`` before it.

>>> import chainrule.nn.functional as F
>>> F.margin_ranking_loss(cr.tensor([1.0]), cr.tensor([0.0]), cr.tensor([-1.0])).item()
1.0
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import raw as _raw, shape_of
from ..rules.common import Result, class_indices, float_dtype
from .distances import pairwise_distance
from .loss_functions import _check_reduction, _reduce, _weights

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "multi_margin_loss",
           "multilabel_margin_loss"]

# what torch adds to each squared norm in cosine_embedding_loss: 1e-12 as a C++ float
# (9.99999996e-13), which a zero vector's gradient shows in float64
COSINE_EPSILON = float(np.float32(1e-12))


def _hinge(z):
    """max(z, 0), its gradient passed at z = 0 as torch's clamp_min passes it."""
    return ops.where(_raw(z) >= 0, z, 0.0)


def _strict_hinge(z):
    """max(z, 0), no gradient at z = 0 (torch's multi-margin losses count z > 0)."""
    return ops.where(_raw(z) > 0, z, 0.0)


def _same_ndim(op, names, *arrays):
    shapes = [shape_of(a) for a in arrays]
    if len({len(s) for s in shapes}) != 1:
        given = ", ".join(f"{n} of shape {s}" for n, s in zip(names, shapes))
        raise ValueError(f"{op}: {given}; expected the same number of dimensions")


def _positive_margin(op, margin):
    if not margin > 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")


def margin_ranking_loss(input1: ArrayLike, input2: ArrayLike, target: ArrayLike,
                        margin: float = 0.0, *, reduction: str = "mean") -> Result:
    """max(0, -target (input1 - input2) + margin), targets in {1, -1} saying which input
    should rank higher, as torch's.

    >>> F = cr.nn.functional
    >>> F.margin_ranking_loss(cr.tensor([2.0, 0.0]), cr.tensor([1.0, 1.0]),
    ...                       cr.tensor([1.0, 1.0]), margin=0.5, reduction="none").data
    array([0. , 1.5])
    """
    _check_reduction("margin_ranking_loss", reduction)
    _same_ndim("margin_ranking_loss", ("input1", "input2", "target"), input1, input2, target)
    return _reduce(_hinge(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(input: ArrayLike, target: ArrayLike, margin: float = 1.0, *,
                         reduction: str = "mean") -> Result:
    """``input`` (a distance) where target = 1, max(0, margin - input) where
    target = -1, as torch's.

    >>> F = cr.nn.functional
    >>> F.hinge_embedding_loss(cr.tensor([0.3, 0.3]), cr.tensor([1.0, -1.0]),
    ...                        reduction="none").data
    array([0.3, 0.7])
    """
    _check_reduction("hinge_embedding_loss", reduction)
    labels = _raw(target)
    losses = (ops.where(labels != 1, _hinge(margin - input), 0.0)
              + ops.where(labels != -1, input, 0.0))
    return _reduce(losses, reduction)


def cosine_embedding_loss(input1: ArrayLike, input2: ArrayLike, target: ArrayLike,
                          margin: float = 0.0, *, reduction: str = "mean") -> Result:
    """1 - cos(input1, input2) where target = 1, max(0, cos - margin) where target = -1,
    as torch's: rows (N, D) with targets (N,), or one pair (D,) with a 0-d target; the
    cosine is x1.x2 / sqrt((|x1|**2 + e)(|x2|**2 + e)), e = float32(1e-12) as torch's,
    finite at zero vectors.

    >>> F = cr.nn.functional
    >>> F.cosine_embedding_loss(cr.tensor([[1.0, 0.0]]), cr.tensor([[0.0, 1.0]]),
    ...                         cr.tensor([1.0])).item()
    1.0
    """
    op = "cosine_embedding_loss"
    _check_reduction(op, reduction)
    shapes = shape_of(input1), shape_of(input2), shape_of(target)
    axis = len(shapes[2])
    if axis > 1 or len(shapes[0]) != axis + 1 or len(shapes[1]) != axis + 1:
        raise ValueError(f"{op}: input1 of shape {shapes[0]}, input2 of shape {shapes[1]} "
                         f"and target of shape {shapes[2]}; expected (N, D), (N, D) and "
                         f"(N,), or (D,), (D,) and ()")
    product = ops.sum(input1 * input2, axis=axis)
    squares1 = ops.sum(input1 * input1, axis=axis) + COSINE_EPSILON
    squares2 = ops.sum(input2 * input2, axis=axis) + COSINE_EPSILON
    cosine = product / ops.sqrt(squares1 * squares2)
    labels = _raw(target)
    losses = (ops.where(labels == 1, 1 - cosine, 0.0)
              + ops.where(labels == -1, _hinge(cosine - margin), 0.0))
    return _reduce(losses, reduction)


def soft_margin_loss(input: ArrayLike, target: ArrayLike, *,
                     reduction: str = "mean") -> Result:
    """log(1 + exp(-target input)), targets in {1, -1}, as torch's (computed as a
    softplus, finite for large inputs).

    >>> round(cr.nn.functional.soft_margin_loss(cr.tensor([0.0]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction("soft_margin_loss", reduction)
    return _reduce(ops.softplus(-target * input), reduction)


def multilabel_soft_margin_loss(input: ArrayLike, target: ArrayLike,
                                weight: ArrayLike | None = None, *,
                                reduction: str = "mean") -> Result:
    """The binary cross-entropy of each of C labels (targets in {0, 1}) under logits
    ``input`` (N, C), each times its ``weight`` (broadcast), averaged over the C labels:
    one loss per row, as torch's.

    >>> F = cr.nn.functional
    >>> round(F.multilabel_soft_margin_loss(cr.tensor([[0.0, 0.0]]),
    ...                                     cr.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    _check_reduction("multilabel_soft_margin_loss", reduction)
    losses = target * ops.softplus(-input) + (1 - target) * ops.softplus(input)
    if weight is not None:
        losses = losses * _weights("multilabel_soft_margin_loss", "weight", weight, input)
    shape = shape_of(input)
    classes = shape[-1] if shape else 1
    return _reduce(ops.sum(losses, axis=-1) / classes if shape else losses, reduction)


def triplet_margin_loss(anchor: ArrayLike, positive: ArrayLike, negative: ArrayLike,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, *, reduction: str = "mean") -> Result:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the
    ``pairwise_distance`` of order ``p`` (with its ``eps``), as torch's; ``swap=True``
    takes d(positive, negative) in place of d(anchor, negative) where it is smaller.

    >>> F = cr.nn.functional
    >>> F.triplet_margin_loss(cr.tensor([[0.0]]), cr.tensor([[1.0]]), cr.tensor([[1.5]]),
    ...                       eps=0.0).item()
    0.5
    """
    op = "triplet_margin_loss"
    _check_reduction(op, reduction)
    _positive_margin(op, margin)
    _same_ndim(op, ("anchor", "positive", "negative"), anchor, positive, negative)
    return _triplets(anchor, positive, negative,
                     lambda a, b: pairwise_distance(a, b, p, eps), margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor: ArrayLike, positive: ArrayLike,
                                      negative: ArrayLike, *,
                                      distance_function: Callable[[Any, Any], Any] | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Result:
    """``triplet_margin_loss`` with any ``distance_function(x1, x2)`` (None:
    ``pairwise_distance``), as torch's.

    >>> F = cr.nn.functional
    >>> F.triplet_margin_with_distance_loss(
    ...     cr.tensor([[0.0]]), cr.tensor([[1.0]]), cr.tensor([[1.5]]),
    ...     distance_function=lambda a, b: cr.sum(cr.abs(a - b), axis=-1)).item()
    0.5
    """
    op = "triplet_margin_with_distance_loss"
    _check_reduction(op, reduction)
    _positive_margin(op, margin)
    _same_ndim(op, ("anchor", "positive", "negative"), anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplets(anchor, positive, negative, distance, margin, swap, reduction)


def _triplets(anchor, positive, negative, distance, margin, swap, reduction):
    to_positive, to_negative = distance(anchor, positive), distance(anchor, negative)
    if swap:
        to_negative = ops.minimum(to_negative, distance(positive, negative))
    return _reduce(_hinge(margin + to_positive - to_negative), reduction)


def _class_rows(op, input, target):
    """``input`` as rows (N, C) and ``target`` as N class indices: one example (C,)
    with a 0-d target is a batch of one."""
    shape, target_shape = shape_of(input), shape_of(target)
    if len(shape) == 1 and not target_shape:
        return ops.reshape(input, (1, shape[0])), ops.reshape(target, (1,)), True
    if len(shape) != 2 or target_shape != shape[:1]:
        raise ValueError(f"{op}: input of shape {shape} and target of shape {target_shape}; "
                         f"expected (N, C) and (N,), or (C,) and ()")
    return input, target, False


def multi_margin_loss(input: ArrayLike, target: ArrayLike, p: int = 1, margin: float = 1.0,
                      weight: ArrayLike | None = None, *,
                      reduction: str = "mean") -> Result:
    """The multi-class hinge loss, as torch's: for each row, the sum over the classes
    j other than the target y of max(0, margin - input[y] + input[j]) ** p (p = 1 or 2),
    times ``weight[y]``, divided by the number of classes C.

    >>> F = cr.nn.functional
    >>> round(F.multi_margin_loss(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), np.array([3])).item(), 4)
    0.325
    """
    op = "multi_margin_loss"
    _check_reduction(op, reduction)
    if isinstance(p, (bool, np.bool_)) or p not in (1, 2):
        raise ValueError(f"{op}: p must be 1 or 2, got {p!r}")
    rows, labels, single = _class_rows(op, input, target)
    n, classes = shape_of(rows)
    labels = class_indices(_raw(labels), (n, classes), op, "input")
    if weight is not None:
        weight = _weights(op, "weight", weight, input)
        if len(shape_of(weight)) != 1 or shape_of(weight)[0] != classes:
            raise ValueError(f"{op}: weight of shape {shape_of(weight)} for an input of "
                             f"shape {shape_of(input)}; expected ({classes},), one weight "
                             f"per class")
    chosen = ops.take_along_axis(rows, ops.reshape(labels, (n, 1)), axis=1)
    margins = _strict_hinge(margin - chosen + rows)
    if p == 2:
        margins = margins * margins
    others = (xp.arange(classes)[None, :] != labels[:, None]).astype(float_dtype(_raw(rows)))
    margins = margins * others
    if weight is not None:
        margins = margins * ops.reshape(ops.take(weight, labels), (n, 1))
    losses = ops.sum(margins, axis=1) / classes
    if single and reduction == "none":
        return losses[0]
    return _reduce(losses, reduction)


def multilabel_margin_loss(input: ArrayLike, target: ArrayLike, *,
                           reduction: str = "mean") -> Result:
    """The multi-label hinge loss, as torch's: ``target`` (the input's shape, (N, C) or
    (C,)) lists each row's classes, ended by the first -1; each row's loss is the sum
    over its listed classes j and its other classes i of max(0, 1 - (input[j] -
    input[i])), divided by C.

    >>> F = cr.nn.functional
    >>> round(F.multilabel_margin_loss(cr.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                np.array([[3, 0, -1, 1]])).item(), 4)
    0.85
    """
    op = "multilabel_margin_loss"
    _check_reduction(op, reduction)
    shape, target = shape_of(input), _raw(target)
    target = target if hasattr(target, "dtype") else np.asarray(target)
    if len(shape) not in (1, 2) or shape_of(target) != shape:
        raise ValueError(f"{op}: input of shape {shape} and target of shape "
                         f"{shape_of(target)}; expected the same shape, (N, C) or (C,)")
    if np.dtype(target.dtype).kind not in "iu":
        raise TypeError(f"{op}: target must hold integer class indices, got dtype "
                        f"{target.dtype}")
    classes = shape[-1]
    if type(target) is np.ndarray and target.size and (target.min() < -1
                                                       or target.max() >= classes):
        raise ValueError(f"{op}: target values must be in [-1, {classes}), got "
                         f"{target.min()} to {target.max()}")
    rows = ops.reshape(input, (-1, classes))
    target = ops.reshape(target, (-1, classes))
    dtype = float_dtype(_raw(rows))
    # (comparisons and cr operations on the target: under vmap and cr.jit it may be
    # batched or traced) a row's classes are the entries before its first -1
    listed = (ops.cumsum((target == -1).astype(dtype), axis=1) == 0).astype(dtype)
    # counts[n, j]: how often row n lists class j (torch counts a repeated class twice)
    is_class = (ops.expand_dims(target, 2) == xp.arange(classes)).astype(dtype)
    counts = ops.sum(is_class * ops.expand_dims(listed, 2), axis=1)
    pairs = ops.expand_dims(counts, 2) * ops.expand_dims((counts == 0).astype(dtype), 1)
    hinges = _strict_hinge(1 - ops.expand_dims(rows, 2) + ops.expand_dims(rows, 1))
    losses = ops.sum(hinges * pairs, axis=(1, 2)) / classes
    if len(shape) == 1:
        losses = ops.reshape(losses, ())
    return _reduce(losses, reduction)
