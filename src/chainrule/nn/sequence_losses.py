"""The connectionist temporal classification loss (Graves et al., 2006), as PyTorch's
``ctc_loss``: the negative log-probability of a target sequence summed over every
alignment of it to the input's time steps.

An alignment reads one class per time step, blanks included; removing repeats and then
blanks must leave the target. The sum over alignments is the forward recursion over the
target with a blank before, between and after its labels (2 S + 1 states): a state is
reached from itself, from the state before, or, for a label unlike the label two states
back, over the blank between them. The recursion is written with chainrule's operations
(logaddexp, where, concatenate), so its derivatives of every order, forward and
reverse, cr.vmap and cr.jit come from theirs.

>>> import chainrule.nn.functional as F
>>> log_probs = cr.log(cr.full((2, 1, 2), 0.5))      # T = 2 steps, N = 1, C = 2 classes
>>> round(F.ctc_loss(log_probs, [[1]], [2], [1], reduction="sum").item(), 4)   # 3 of 4
0.2877
"""

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules.common import Result, float_dtype
from .loss_functions import _check_reduction

__all__ = ["ctc_loss"]


def _integers(values, name, count):
    """``values`` (a sequence, an array or a Tensor of ints) as an int64 array of
    ``count`` entries."""
    array = np.asarray(getattr(values, "data", values))
    if array.ndim == 0:
        array = array.reshape(1)
    if array.shape != (count,) or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"ctc_loss: {name} {array.tolist()!r}, expected {count} ints, one "
                         f"per example")
    return array.astype(np.int64)


def _padded_targets(targets, target_lengths, n, classes, blank):
    """The targets as an (N, S) int array, S the longest target; from (N, S_max) padded
    rows or from the targets of all examples one after another (1-d)."""
    array = np.asarray(getattr(targets, "data", targets))
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"ctc_loss: targets of dtype {array.dtype}, expected ints")
    longest = int(target_lengths.max(initial=0))
    if array.ndim == 2:
        if array.shape[0] != n or array.shape[1] < longest:
            raise ValueError(f"ctc_loss: targets of shape {array.shape}, expected ({n}, S) "
                             f"with S >= the longest target_length {longest}")
        rows = array[:, :longest]
    elif array.ndim == 1:
        if array.size != target_lengths.sum():
            raise ValueError(f"ctc_loss: 1-d targets of {array.size} labels, expected the "
                             f"sum of target_lengths, {int(target_lengths.sum())}")
        rows = np.full((n, longest), blank, np.int64)
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
        for i, (start, length) in enumerate(zip(starts, target_lengths)):
            rows[i, :length] = array[start:start + length]
    else:
        raise ValueError(f"ctc_loss: targets of shape {array.shape}, expected (N, S) or the "
                         f"concatenated targets (sum(target_lengths),)")
    used = np.arange(longest) < target_lengths[:, None]
    if np.any(used & ((rows < 0) | (rows >= classes) | (rows == blank))):
        raise ValueError(f"ctc_loss: targets must be classes in [0, {classes}) other than "
                         f"the blank {blank}, got {rows[used].tolist()}")
    return np.where(used, rows, blank)


def ctc_loss(log_probs: ArrayLike, targets: ArrayLike, input_lengths: ArrayLike,
             target_lengths: ArrayLike, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Result:
    """PyTorch's ``ctc_loss``: -log p(target | input) summed over all alignments.

    ``log_probs`` (T, N, C) (or (T, C) for one example) are log-probabilities of C
    classes at each of T steps, usually a ``log_softmax``; ``targets`` are (N, S) rows
    padded past each length or all targets one after another; ``input_lengths`` and
    ``target_lengths`` give each example's T_n <= T and S_n. ``reduction``: "mean"
    (each loss divided by its target length, then the mean), "sum" or "none".

    A target that no alignment of its input can produce (T_n shorter than S_n plus its
    repeated neighbours) has an infinite loss and a NaN gradient, as torch's;
    ``zero_infinity=True`` makes both 0.

    The gradient in ``log_probs`` is the derivative of this function: minus each
    class's share of the alignments at each step. torch's adds exp(log_probs) to it, a
    term that sums to nothing through a log_softmax: the gradients in the logits agree.

    >>> log_probs = cr.log_softmax(cr.zeros(3, 1, 3), axis=-1)   # 5 of the 27 alignments
    >>> round(ctc_loss(log_probs, [[1, 2]], [3], [2], reduction="none").item(), 4)
    1.6864
    """
    reduction = _check_reduction("ctc_loss", reduction)
    shape = tuple(shape_of(log_probs))
    batched = len(shape) == 3
    if len(shape) not in (2, 3):
        raise ValueError(f"ctc_loss: log_probs of shape {shape}, expected (T, N, C) or "
                         f"(T, C)")
    if not batched:
        log_probs = ops.expand_dims(log_probs, 1)
        targets = np.asarray(getattr(targets, "data", targets))[None]
    T, n, classes = tuple(shape_of(log_probs))
    if not 0 <= blank < classes:
        raise ValueError(f"ctc_loss: blank {blank} is not one of the {classes} classes")
    input_lengths = _integers(input_lengths, "input_lengths", n)
    target_lengths = _integers(target_lengths, "target_lengths", n)
    if np.any(input_lengths < 0) or np.any(input_lengths > T) or np.any(target_lengths < 0):
        raise ValueError(f"ctc_loss: input_lengths {input_lengths.tolist()} must be in "
                         f"[0, {T}] and target_lengths {target_lengths.tolist()} at least 0")
    labels = _padded_targets(targets, target_lengths, n, classes, blank)
    losses = _negative_log_likelihood(log_probs, labels, input_lengths, target_lengths,
                                      blank, zero_infinity)
    if reduction == "none":
        return losses if batched else ops.reshape(losses, ())
    if reduction == "sum":
        return ops.sum(losses)
    return ops.mean(losses / np.maximum(target_lengths, 1).astype(float_dtype(losses)))


def _negative_log_likelihood(log_probs, labels, input_lengths, target_lengths, blank,
                             zero_infinity):
    """-log p(labels | log_probs) per example, by the forward recursion over the 2 S + 1
    states of each target with blanks around its labels."""
    n, longest = labels.shape
    states = 2 * longest + 1
    extended = np.full((n, states), blank, np.int64)
    extended[:, 1::2] = labels
    # a skip over the blank before a state: into a label unlike the one two states back
    skips = np.zeros((n, states), bool)
    skips[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    dtype = float_dtype(log_probs)
    # a very negative finite number stands for log 0: the gradients through states no
    # alignment reaches are then exactly 0, where -inf would make them NaN
    never = np.asarray(np.finfo(dtype).min / 4, dtype)
    T = shape_of(log_probs)[0]
    index = np.broadcast_to(extended[None], (T, n, states))
    per_state = ops.take_along_axis(log_probs, index, axis=2)      # (T, N, states)
    first = np.full((n, states), never)
    first[:, :2] = 0.0
    alpha = ops.where(np.arange(states) < 2, per_state[0], first)
    column = np.full((n, 1), never)
    for t in range(1, int(input_lengths.max(initial=0))):
        stay = alpha
        step = ops.concatenate([column, alpha[:, :-1]], axis=1)
        skip = ops.where(skips, ops.concatenate([column, column, alpha[:, :-2]], axis=1),
                         never)
        moved = ops.logaddexp(ops.logaddexp(stay, step), skip) + per_state[t]
        alpha = ops.where((t < input_lengths)[:, None], moved, alpha)
    last = 2 * target_lengths
    end = ops.take_along_axis(alpha, last[:, None], axis=1)[:, 0]
    before = ops.take_along_axis(alpha, np.maximum(last - 1, 0)[:, None], axis=1)[:, 0]
    before = ops.where(target_lengths > 0, before, never)
    losses = -ops.logaddexp(end, before)
    repeats = np.array([np.sum(row[1:length] == row[:length - 1]) if length else 0
                        for row, length in zip(labels, target_lengths)])
    possible = input_lengths >= target_lengths + repeats
    # (no step at all: the empty target's probability is 1, any other's 0)
    losses = ops.where(input_lengths > 0, losses, 0.0)
    if zero_infinity:
        return ops.where(possible, losses, 0.0)
    # (a factor, not a where: the where's other branch would make every gradient NaN)
    return losses * np.where(possible, 1.0, np.inf).astype(dtype)
