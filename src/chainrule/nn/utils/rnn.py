"""PyTorch's ``torch.nn.utils.rnn``: a batch of sequences of different lengths, padded to
one length or packed, and the recurrent layers run on a packed batch.

A *padded* batch is one array (L, N, *) (or (N, L, *) with ``batch_first``) whose
sequence b holds its entries in its first ``lengths[b]`` steps. A *packed* batch,
``PackedSequence``, keeps only those entries, time step by time step: ``data`` holds
step 0 of every sequence, then step 1 of every sequence still running, and so on, the
sequences ordered from the longest to the shortest; ``batch_sizes[t]`` counts the
sequences running at step t. An ``RNN``, ``GRU`` or ``LSTM`` given a packed batch runs
each sequence for its own number of steps: ``h_n`` holds each one's state after its
last step, never after padding.

Every function here moves entries with one gather (``cr.take``), so the gradient flows
back to the sequences' entries and no further (padding receives none).

>>> from chainrule.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([cr.tensor([1.0, 2.0, 3.0]), cr.tensor([4.0])])
>>> packed.data.tolist(), packed.batch_sizes.tolist()      # step 0 of both, then of one
([1.0, 4.0, 2.0, 3.0], [2, 1, 1])
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]], [3, 1])
"""

from numbers import Integral
from typing import Any, NamedTuple

import numpy as np

from ... import rules as ops
from ...primitive import raw, shape_of
from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


class _Fields(NamedTuple):
    data: Any
    batch_sizes: np.ndarray
    sorted_indices: np.ndarray | None
    unsorted_indices: np.ndarray | None


class PackedSequence(_Fields):
    """A batch of sequences of different lengths, packed (see the module's
    documentation): ``data`` (the entries, (total steps, *)), ``batch_sizes`` (how many
    sequences run at each step), ``sorted_indices`` (the batch's order from the
    longest sequence to the shortest; None where it was already so) and
    ``unsorted_indices`` (its inverse: where each sequence of the batch went). The
    integers are NumPy int64 arrays; ``data`` is what was packed (a Tensor keeps its
    graph). Build one with ``pack_padded_sequence`` or ``pack_sequence``."""

    def __new__(cls, data, batch_sizes, sorted_indices=None, unsorted_indices=None):
        sizes = np.asarray(raw(batch_sizes))
        if sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer):
            raise TypeError(f"PackedSequence: batch_sizes must be a 1-d array of ints, "
                            f"got {sizes.dtype} of shape {sizes.shape}")
        sizes = sizes.astype(np.int64)
        if sorted_indices is not None:
            sorted_indices = np.asarray(raw(sorted_indices), np.int64)
            if unsorted_indices is None:
                unsorted_indices = invert_permutation(sorted_indices)
        if unsorted_indices is not None:
            unsorted_indices = np.asarray(raw(unsorted_indices), np.int64)
        return super().__new__(cls, data, sizes, sorted_indices, unsorted_indices)

    is_cuda = False

    @property
    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None), as torch's."""
    if permutation is None:
        return None
    permutation = np.asarray(raw(permutation), np.int64)
    inverse = np.empty_like(permutation)
    inverse[permutation] = np.arange(len(permutation))
    return inverse


def _lengths(lengths, batch, steps, op):
    """The lengths as int64, after torch's checks (and one more: no sequence longer
    than the padded steps, which torch reads past the end of)."""
    if isinstance(lengths, Integral):
        lengths = [lengths]
    found = np.asarray(raw(lengths))
    if found.ndim != 1:
        raise ValueError(f"{op}: lengths must be 1-d, one per sequence, got shape "
                         f"{found.shape}")
    if len(found) != batch:
        raise ValueError(f"{op}: expected len(lengths) to be equal to batch_size, but got "
                         f"{len(found)} (batch_size={batch})")
    if found.dtype.kind not in "iu" and not (
            found.dtype.kind == "f" and np.array_equal(found, np.round(found))):
        raise TypeError(f"{op}: lengths must be whole numbers, got {found.tolist()}")
    found = found.astype(np.int64)
    if len(found) and found.min() <= 0:
        raise ValueError(f"{op}: the length of every sequence has to be greater than 0, "
                         f"got lengths {found.tolist()}")
    if len(found) and found.max() > steps:
        raise ValueError(f"{op}: lengths {found.tolist()} reach past the {steps} steps "
                         f"of the padded input")
    return found


def _padded_batch(padded, lengths, batch_first, op):
    """(shape, steps, batch, lengths) of a padded batch, after the checks."""
    shape = tuple(shape_of(padded))
    if len(shape) < 2:
        raise ValueError(f"{op}: input of shape {shape}, expected (L, N, *) or with "
                         f"batch_first (N, L, *)")
    steps, batch = (shape[1], shape[0]) if batch_first else shape[:2]
    return shape, steps, batch, _lengths(lengths, batch, steps, op)


def _sizes(lengths):
    """batch_sizes: how many of the (sorted) sequences run at each step."""
    return (lengths[None, :] > np.arange(lengths.max())[:, None]).sum(axis=1).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, N, *) ((N, L, *) with ``batch_first``) whose sequence b
    runs ``lengths[b]`` steps. With ``enforce_sorted`` the lengths must not increase
    (as torch, which needs it for ONNX); otherwise the batch is sorted here and
    ``sorted_indices`` says how.

    >>> x = cr.tensor([[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]])  # L = 3, N = 2
    >>> pack_padded_sequence(x, [3, 1]).data.tolist()
    [1.0, 4.0, 2.0, 3.0]
    """
    shape, steps, batch, lengths = _padded_batch(input, lengths, batch_first,
                                                 "pack_padded_sequence")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise ValueError(f"pack_padded_sequence: lengths {lengths.tolist()} must be "
                             f"sorted in decreasing order when enforce_sorted is True; "
                             f"pass enforce_sorted=False to sort them here")
        order, sorted_indices = np.arange(batch), None
    else:
        order = sorted_indices = np.argsort(-lengths, kind="stable")
    sizes = _sizes(lengths[order])
    # the row of the flattened input that each packed entry comes from, step by step
    step = np.repeat(np.arange(len(sizes)), sizes)
    which = np.concatenate([order[:n] for n in sizes])
    rows = which * steps + step if batch_first else step * batch + which
    data = ops.take(ops.reshape(input, (steps * batch,) + shape[2:]), rows, axis=0)
    return PackedSequence(data, sizes, sorted_indices)


def _check_packed(sequence, op):
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expected a PackedSequence (pack_padded_sequence's), got "
                        f"{type(sequence).__name__}")
    return sequence


def padded_rows(sizes, steps, order=None):
    """For a packed batch of ``sizes``, the (steps, N) rows of its data that make the
    padded batch (``order`` the batch's order, sorted if None): ``len(data)`` stands
    for padding."""
    sizes = np.asarray(sizes)
    batch, total = int(sizes[0]), int(sizes.sum())
    rows = np.full((steps, batch), total, np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for t, (start, n) in enumerate(zip(starts, sizes)):
        rows[t, :n] = np.arange(start, start + n)
    return rows if order is None else rows[:, order]


def _with_padding(data, padding_value):
    """data with one more row, of ``padding_value``, at its end: what padding gathers."""
    shape = tuple(shape_of(data))
    dtype = getattr(raw(data), "dtype", np.float64)
    return ops.concatenate([data, np.full((1,) + shape[1:], padding_value, dtype)], axis=0)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """The padded batch (L, N, *) ((N, L, *) with ``batch_first``) of a packed one, in
    the batch's own order, and each sequence's length (int64): the inverse of
    ``pack_padded_sequence``. ``total_length`` pads to that many steps (at least the
    longest sequence's), as a model whose input was padded further needs.
    """
    data, sizes, _, unsorted = _check_packed(sequence, "pad_packed_sequence")
    longest = len(sizes)
    if total_length is None:
        total_length = longest
    elif total_length < longest:
        raise ValueError(f"pad_packed_sequence: expected total_length to be at least the "
                         f"length of the longest sequence in input, but got total_length="
                         f"{total_length} and max sequence length being {longest}")
    rows = padded_rows(sizes, total_length, unsorted)
    if batch_first:
        rows = rows.T
    padded = ops.take(_with_padding(data, padding_value), rows.reshape(-1), axis=0)
    padded = ops.reshape(padded, rows.shape + tuple(shape_of(data))[1:])
    lengths = (sizes[None, :] > np.arange(int(sizes[0]))[:, None]).sum(axis=1)
    if unsorted is not None:
        lengths = lengths[unsorted]
    return padded, _like(lengths.astype(np.int64), data)


def _like(integers, data):
    """An int64 result as a Tensor where the sequences are Tensors (torch's tensor)."""
    return Tensor(integers) if isinstance(data, Tensor) else integers


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """The sequences (each (L_b, *), the same *) as one padded batch (L, N, *) ((N, L,
    *) with ``batch_first``), L the longest; ``padding_side="left"`` puts the padding
    before each sequence instead of after it.

    >>> pad_sequence([cr.tensor([1.0, 2.0]), cr.tensor([3.0])], batch_first=True).tolist()
    [[1.0, 2.0], [3.0, 0.0]]
    """
    sequences = list(sequences)
    if not sequences:
        raise ValueError("pad_sequence: received an empty list of sequences; expected at "
                         "least one")
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'right' or 'left', got "
                         f"{padding_side!r}")
    shapes = [tuple(shape_of(s)) for s in sequences]
    for shape in shapes:
        if not shape or shape[1:] != shapes[0][1:]:
            raise ValueError(f"pad_sequence: sequences of shapes {shapes}; expected each "
                             f"(L, *) with the same * after its length")
    lengths = np.array([s[0] for s in shapes], np.int64)
    steps, total = int(lengths.max()), int(lengths.sum())
    rows = np.full((steps, len(shapes)), total, np.int64)
    for b, (start, n) in enumerate(zip(np.cumsum(lengths) - lengths, lengths)):
        first = 0 if padding_side == "right" else steps - n
        rows[first:first + n, b] = np.arange(start, start + n)
    if batch_first:
        rows = rows.T
    stacked = _with_padding(ops.concatenate(sequences, axis=0), padding_value)
    return ops.reshape(ops.take(stacked, rows.reshape(-1), axis=0),
                       rows.shape + shapes[0][1:])


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (each (L_b, *)): ``pack_padded_sequence`` of their
    ``pad_sequence``."""
    sequences = list(sequences)
    lengths = [tuple(shape_of(s))[0] if shape_of(s) else 0 for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The padded batch's sequences, each cut to its length: a list, as torch's."""
    _, _, _, lengths = _padded_batch(padded_sequences, lengths, batch_first,
                                     "unpad_sequence")
    if batch_first:
        return [padded_sequences[b, :n] for b, n in enumerate(lengths.tolist())]
    return [padded_sequences[:n, b] for b, n in enumerate(lengths.tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The packed batch's sequences, each its own length: a list, in the batch's order."""
    padded, lengths = pad_packed_sequence(_check_packed(packed_sequences, "unpack_sequence"),
                                          batch_first=True)
    return unpad_sequence(padded, raw(lengths), batch_first=True)


def packed_data(padded, sizes):
    """The data of a packed batch from its padded form (L, N, *) in the sorted order:
    each step's running sequences, one step after another (what an RNN run on a packed
    batch hands back)."""
    shape = tuple(shape_of(padded))
    step = np.repeat(np.arange(len(sizes)), sizes)
    which = np.concatenate([np.arange(n) for n in sizes])
    flat = ops.reshape(padded, (shape[0] * shape[1],) + shape[2:])
    return ops.take(flat, step * shape[1] + which, axis=0)
