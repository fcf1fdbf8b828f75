"""chainrule.nn.utils.rnn against torch.nn.utils.rnn, and the recurrent layers on packed
batches against torch's, float64.

A batch of sequences of different lengths is padded to one length or packed (only the
entries, step by step). Each function gives torch's arrays (data, batch_sizes,
sorted_indices, unsorted_indices, padded values, lengths) and torch's gradients; an
RNN, GRU or LSTM given a packed batch gives torch's packed output and final states, and
torch's gradients for the input, the initial state and every weight, to first and
second order. Lengths are drawn with ties, where sorting could tell them apart: where
two equal lengths may be ordered either way the comparison goes through the padded
batch, which is the same whatever the tie's order.
"""

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as torch_rnn

import chainrule as cr
from chainrule.nn.utils import rnn
from chainrule.jit.errors import TracingError
from chainrule.primitive import raw
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261130)
TOL = dict(rtol=1e-12, atol=1e-13)


def _both(array, grad=True):
    """The same numbers as a torch tensor and a chainrule Tensor."""
    return (torch.tensor(array, requires_grad=grad),
            cr.tensor(array, requires_grad=grad))


def _np(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(raw(x))


def _close(ours, theirs):
    np.testing.assert_allclose(_np(ours), _np(theirs), **TOL)


def _lengths(rng, batch, steps, distinct=False):
    if distinct:
        return rng.permutation(np.arange(1, steps + 1))[:batch].tolist()
    lengths = rng.integers(1, steps + 1, batch)
    lengths[rng.integers(batch)] = steps  # the padding is as long as the longest
    return lengths.tolist()


# --- packing and padding ---------------------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 3)])
def test_pack_padded_sequence_gives_torchs_packed_batch_and_gradient(batch_first,
                                                                       enforce_sorted,
                                                                       trailing):
    steps, batch = 6, 5
    lengths = _lengths(RNG, batch, steps, distinct=True)
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    shape = ((batch, steps) if batch_first else (steps, batch)) + trailing
    tx, cx = _both(RNG.standard_normal(shape))
    theirs = torch_rnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    ours = rnn.pack_padded_sequence(cx, lengths, batch_first, enforce_sorted)
    assert isinstance(ours, rnn.PackedSequence) and isinstance(ours, tuple)
    _close(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    for mine, torchs in zip(ours[2:], theirs[2:]):
        assert (mine is None) == (torchs is None)
        if mine is not None:
            assert mine.tolist() == torchs.tolist()
    cotangent = RNG.standard_normal(tuple(theirs.data.shape))
    (theirs.data * torch.tensor(cotangent)).sum().backward()
    (ours.data * cotangent).sum().backward()
    _close(cx.grad, tx.grad)  # padding's entries get no gradient, as torch's


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("total_length", [None, 9])
@pytest.mark.parametrize("padding_value", [0.0, -1.5])
def test_pad_packed_sequence_is_torchs_in_the_batchs_order(batch_first, total_length,
                                                          padding_value):
    steps, batch = 7, 6
    lengths = _lengths(RNG, batch, steps)  # ties: compared through the padded batch
    tx, cx = _both(RNG.standard_normal((steps, batch, 2)))
    tp = torch_rnn.pack_padded_sequence(tx, lengths, enforce_sorted=False)
    cp = rnn.pack_padded_sequence(cx, lengths, enforce_sorted=False)
    theirs, their_lengths = torch_rnn.pad_packed_sequence(tp, batch_first, padding_value,
                                                          total_length)
    ours, our_lengths = rnn.pad_packed_sequence(cp, batch_first, padding_value, total_length)
    _close(ours, theirs)
    assert our_lengths.tolist() == their_lengths.tolist() == lengths
    assert _np(our_lengths).dtype == np.int64
    cotangent = RNG.standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(cotangent)).sum().backward()
    (ours * cotangent).sum().backward()
    _close(cx.grad, tx.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_is_torchs(batch_first, padding_side):
    lengths = [3, 1, 4, 4, 2]
    arrays = [RNG.standard_normal((n, 2, 3)) for n in lengths]
    pairs = [_both(a) for a in arrays]
    theirs = torch_rnn.pad_sequence([t for t, _ in pairs], batch_first, 0.25, padding_side)
    ours = rnn.pad_sequence([c for _, c in pairs], batch_first, 0.25, padding_side)
    _close(ours, theirs)
    cotangent = RNG.standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(cotangent)).sum().backward()
    (ours * cotangent).sum().backward()
    for t, c in pairs:
        _close(c.grad, t.grad)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_unpack_sequence_and_unpad_sequence_are_torchs(enforce_sorted):
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    arrays = [RNG.standard_normal((n, 3)) for n in lengths]
    theirs = torch_rnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted)
    ours = rnn.pack_sequence([cr.tensor(a) for a in arrays], enforce_sorted)
    _close(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    for mine, torchs in zip(rnn.unpack_sequence(ours), torch_rnn.unpack_sequence(theirs)):
        _close(mine, torchs)
    padded = RNG.standard_normal((3, 5, 2))
    for batch_first in (False, True):
        cut = [5, 2, 4] if batch_first else [3, 1, 2, 3, 1]
        for mine, torchs in zip(rnn.unpad_sequence(cr.tensor(padded), cut, batch_first),
                                torch_rnn.unpad_sequence(torch.tensor(padded),
                                                         torch.tensor(cut), batch_first)):
            _close(mine, torchs)


def test_a_packed_sequence_holds_numpy_integers_and_its_inverse_order():
    packed = rnn.pack_padded_sequence(np.zeros((3, 3)), [1, 3, 2], enforce_sorted=False)
    assert packed.sorted_indices.tolist() == [1, 2, 0]
    assert packed.unsorted_indices.tolist() == [2, 0, 1]
    assert packed.batch_sizes.dtype == np.int64
    again = rnn.PackedSequence(packed.data, packed.batch_sizes, packed.sorted_indices)
    assert again.unsorted_indices.tolist() == [2, 0, 1]  # computed, as torch's
    assert rnn.invert_permutation(None) is None
    assert isinstance(rnn.pack_padded_sequence(np.ones((2, 1)), [2]).data, np.ndarray)


# --- the recurrent layers on packed batches --------------------------------------------

LAYERS = [("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2)),
          ("GRU", {}), ("GRU", dict(bidirectional=True, num_layers=2)),
          ("LSTM", {}), ("LSTM", dict(bidirectional=True, num_layers=2)),
          ("LSTM", dict(proj_size=2, bidirectional=True)), ("RNN", dict(bias=False))]


def _layers(mode, settings):
    theirs = getattr(torch.nn, mode)(3, 4, **settings).double()
    ours = getattr(cr.nn, mode)(3, 4, **settings)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def _initial_state(mode, settings, batch):
    layers = settings.get("num_layers", 1) * (2 if settings.get("bidirectional") else 1)
    h = RNG.standard_normal((layers, batch, settings.get("proj_size") or 4))
    if mode != "LSTM":
        return [h]
    return [h, RNG.standard_normal((layers, batch, 4))]


@pytest.mark.parametrize("mode, settings", LAYERS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layers_run_each_packed_sequence_for_its_own_steps(mode, settings,
                                                                     enforce_sorted,
                                                                     with_state):
    """Output, final states and every gradient (input, initial state, weights) equal
    torch's; each sequence's final state is its last step's, not the padding's."""
    theirs, ours = _layers(mode, settings)
    steps, batch = 6, 5
    lengths = _lengths(RNG, batch, steps)
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    tx, cx = _both(RNG.standard_normal((steps, batch, 3)))
    states = [_both(s) for s in _initial_state(mode, settings, batch)] if with_state else []

    def run(library, layer, x, state):
        pack = library.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        hx = None if not state else (tuple(state) if mode == "LSTM" else state[0])
        out, final = layer(pack, hx)
        assert type(out).__name__ == "PackedSequence"
        padded, _ = library.pad_packed_sequence(out, batch_first=True)
        return padded, list(final) if mode == "LSTM" else [final]

    t_out, t_final = run(torch_rnn, theirs, tx, [t for t, _ in states])
    c_out, c_final = run(rnn, ours, cx, [c for _, c in states])
    _close(c_out, t_out)
    for mine, torchs in zip(c_final, t_final):
        _close(mine, torchs)
    weights = [RNG.standard_normal(tuple(t.shape)) for t in [t_out] + t_final]
    sum((t * torch.tensor(w)).sum() for t, w in zip([t_out] + t_final, weights)).backward()
    sum((c * w).sum() for c, w in zip([c_out] + c_final, weights)).backward()
    _close(cx.grad, tx.grad)
    for t, c in states:
        _close(c.grad, t.grad)
    for name, p in theirs.named_parameters():
        _close(getattr(ours, name).grad, p.grad)


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_second_derivatives_through_a_packed_layer_are_torchs(mode):
    """A Hessian-vector product in the input, by chainrule's transforms and by torch's
    double backward."""
    theirs, ours = _layers(mode, dict(bidirectional=True))
    lengths, x = [4, 2, 3], RNG.standard_normal((4, 3, 3))
    v = RNG.standard_normal(x.shape)

    def loss(library, layer, x):
        out, _ = layer(library.pack_padded_sequence(x, lengths, enforce_sorted=False))
        padded, _ = library.pad_packed_sequence(out)
        return (padded ** 3).sum()

    tx = torch.tensor(x, requires_grad=True)
    (g,) = torch.autograd.grad(loss(torch_rnn, theirs, tx), tx, create_graph=True)
    (their_hvp,) = torch.autograd.grad((g * torch.tensor(v)).sum(), tx)
    _close(cr.hvp(lambda x: loss(rnn, ours, x), x, v), their_hvp)


def test_a_packed_layer_under_jit_replays_the_eager_numbers():
    layer = cr.nn.LSTM(3, 4, bidirectional=True, rng=0)
    x = RNG.standard_normal((5, 3, 3))

    def padded_output(x):
        out, (h, _) = layer(rnn.pack_padded_sequence(x, [2, 5, 4], enforce_sorted=False))
        return rnn.pad_packed_sequence(out)[0], h

    eager, jitted = padded_output(x), cr.jit(padded_output)
    for _ in range(2):
        for mine, reference in zip(jitted(x), eager):
            np.testing.assert_array_equal(_np(mine), _np(reference))


# --- refusals ---------------------------------------------------------------------------

@pytest.mark.parametrize("lengths, kwargs, error, message", [
    ([2, 3, 1], {}, ValueError, "must be sorted in decreasing order when enforce_sorted"),
    ([3, 0, 1], {"enforce_sorted": False}, ValueError, "greater than 0"),
    ([5, 2, 1], {}, ValueError, "reach past the 4 steps"),
    ([3, 2], {}, ValueError, "equal to batch_size, but got 2 (batch_size=3)"),
    ([2.5, 2, 1], {}, TypeError, "whole numbers"),
    ([[3, 2, 1]], {}, ValueError, "1-d"),
])
def test_bad_lengths_are_refused_in_one_line(lengths, kwargs, error, message):
    with pytest.raises(error, match=f"pack_padded_sequence: .*{message}".replace(
            "(", r"\(").replace(")", r"\)")):
        rnn.pack_padded_sequence(np.zeros((4, 3, 2)), lengths, **kwargs)


def test_other_bad_inputs_are_refused_in_one_line():
    packed = rnn.pack_padded_sequence(np.zeros((4, 2, 3)), [4, 2])
    with pytest.raises(ValueError, match="total_length to be at least .* got total_length=3"):
        rnn.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(TypeError, match="pad_packed_sequence: expected a PackedSequence"):
        rnn.pad_packed_sequence(np.zeros((4, 2, 3)))
    with pytest.raises(ValueError, match="pad_sequence: received an empty list"):
        rnn.pad_sequence([])
    with pytest.raises(ValueError, match=r"pad_sequence: sequences of shapes \[\(2, 3\), "
                                         r"\(2, 4\)\]"):
        rnn.pad_sequence([np.zeros((2, 3)), np.zeros((2, 4))])
    with pytest.raises(ValueError, match="padding_side must be 'right' or 'left'"):
        rnn.pad_sequence([np.zeros(2)], padding_side="middle")
    with pytest.raises(ValueError, match=r"LSTM: a PackedSequence of data shape \(6, 3\), "
                                         r"expected \(steps of all sequences, 5\)"):
        cr.nn.LSTM(5, 2)(packed)
    with pytest.raises(TypeError, match="batch_sizes must be a 1-d array of ints"):
        rnn.PackedSequence(np.zeros(3), np.array([1.5]))


def test_lengths_that_change_between_jitted_calls_are_a_static_argument():
    """Packing depends on the lengths' values: traced, they are refused in one line
    naming static_argnums; as a static argument, each new tuple of lengths is traced
    anew and gives the eager numbers."""
    layer = cr.nn.GRU(3, 4, rng=0)

    def final_state(x, lengths):
        return layer(rnn.pack_padded_sequence(x, lengths, enforce_sorted=False))[1]

    x = RNG.standard_normal((5, 3, 3))
    with pytest.raises(TracingError, match="static_argnums"):
        cr.jit(final_state)(x, np.array([2, 5, 4]))
    jitted = cr.jit(final_state, static_argnums=1)
    for lengths in [(2, 5, 4), (5, 1, 3), (2, 5, 4)]:
        np.testing.assert_array_equal(_np(jitted(x, lengths)), _np(final_state(x, lengths)))
