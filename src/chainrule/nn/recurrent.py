"""PyTorch's recurrent layers: ``RNN``, ``GRU``, ``LSTM`` and their cells ``RNNCell``,
``GRUCell``, ``LSTMCell``, with torch's arguments, parameter names and shapes, so a
torch ``state_dict`` loads as it is.

Each step is written with the library's differentiable operations (matmul, sigmoid,
tanh, split), next to the equations of torch's documentation, so ``backward``,
``cr.grad`` (to any order), ``cr.jit`` and ``cr.vmap`` go through a layer as through
any other code. A sequence is a Python loop over its time steps.

    >>> rnn = cr.nn.GRU(input_size=3, hidden_size=4, num_layers=2, batch_first=True, rng=0)
    >>> out, h_n = rnn(cr.ones(5, 7, 3))                 # batch 5, 7 steps, 3 features
    >>> out.shape, h_n.shape
    ((5, 7, 4), (2, 5, 4))
"""

import math
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules import fused, fused_recurrent
from ..rules.common import Result
from ..tensor import Tensor
from ..api.torch_random import default_generator
from . import functional as F
from .construction import RNG, check_device, initial_generator, make_generator
from .module import Module, Parameter
from .utils.rnn import PackedSequence, packed_data, padded_rows

__all__ = ["RNNBase", "RNNCellBase", "RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell",
           "rnn_tanh_cell",
           "rnn_relu_cell", "gru_cell", "lstm_cell"]

# How many blocks of hidden_size rows each weight has: the gates, in torch's order.
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _project(x, weight_t, bias):
    """x @ weight_t + bias, weight_t the transpose of torch's (out, in) weight: taken
    once per sequence, not at every step. A sequence (L, N, in) is taken as one matrix
    (L N, in), so that the weight's gradient is one product, x^T g, rather than one per
    step summed after."""
    shape = shape_of(x)
    if len(shape) > 2:
        x = ops.reshape(x, (math.prod(shape[:-1]), shape[-1]))
    out = ops.matmul(x, weight_t)
    if bias is not None:
        out = out + bias
    return out if len(shape) <= 2 else ops.reshape(out, shape[:-1] + shape_of(out)[-1:])


def _transposed(weight):
    return ops.swapaxes(weight, 0, 1)


# ---------------------------------------------------------------------------------------
# One step. Each takes the input's share of the gates, gi = W_i* x + b_i* (computed for
# every time step at once, one matmul), the hidden state's, gh = W_h* h + b_h*, and the
# previous state.
# ---------------------------------------------------------------------------------------

def rnn_tanh_cell(gi: Result, gh: Result, h: Result) -> Result:
    """One step of an Elman RNN: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``, given
    ``gi = W_ih x + b_ih`` and ``gh = W_hh h + b_hh``.

    >>> h = cr.nn.recurrent.rnn_tanh_cell(cr.zeros(1, 2), cr.ones(1, 2), cr.ones(1, 2))
    >>> np.round(h.data, 4).tolist()
    [[0.7616, 0.7616]]
    """
    return ops.tanh(gi + gh)


def rnn_relu_cell(gi: Result, gh: Result, h: Result) -> Result:
    """One step of an Elman RNN with relu: ``h' = relu(W_ih x + b_ih + W_hh h + b_hh)``.

    >>> cr.nn.recurrent.rnn_relu_cell(cr.ones(1, 2), -2 * cr.ones(1, 2), cr.ones(1, 2)).tolist()
    [[0.0, 0.0]]
    """
    return ops.relu(gi + gh)


def gru_cell(gi: Result, gh: Result, h: Result) -> Result:
    """One step of a GRU: the new hidden state from ``gi``, ``gh`` and ``h``.

    torch's equations (gates in the order r, z, n)::

        r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)       reset gate
        z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)       update gate
        n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))    candidate
        h' = (1 - z) * n + z * h

    ``gi`` holds the three W_i* x + b_i* side by side on the last axis, ``gh`` the
    three W_h* h + b_h*.

    >>> h = cr.nn.recurrent.gru_cell(cr.zeros(1, 3), cr.zeros(1, 3), cr.ones(1, 1))
    >>> h.tolist()                                     # z = 1/2, n = 0
    [[0.5]]
    """
    i_r, i_z, i_n = ops.split(gi, 3, axis=-1)
    h_r, h_z, h_n = ops.split(gh, 3, axis=-1)
    r = ops.sigmoid(i_r + h_r)
    z = ops.sigmoid(i_z + h_z)
    n = ops.tanh(i_n + r * h_n)
    return n + z * (h - n)  # (1 - z) * n + z * h, one operation fewer


def lstm_cell(gi: Result, gh: Result, h: Result, c: Result) -> tuple[Result, Result]:
    """One step of an LSTM: the new (h, c) from ``gi``, ``gh`` and ``c``.

    torch's equations (gates in the order i, f, g, o)::

        i  = sigmoid(W_ii x + b_ii + W_hi h + b_hi)       input gate
        f  = sigmoid(W_if x + b_if + W_hf h + b_hf)       forget gate
        g  = tanh(W_ig x + b_ig + W_hg h + b_hg)          cell candidate
        o  = sigmoid(W_io x + b_io + W_ho h + b_ho)       output gate
        c' = f * c + i * g
        h' = o * tanh(c')

    ``gi`` and ``gh`` hold the four gates' shares side by side; ``h`` enters through
    ``gh`` only. Returns (h', c').

    >>> h, c = cr.nn.recurrent.lstm_cell(cr.zeros(1, 4), cr.zeros(1, 4), cr.zeros(1, 1),
    ...                                  cr.ones(1, 1))
    >>> c.tolist(), np.round(h.data, 4).tolist()       # f = o = 1/2, g = 0
    ([[0.5]], [[0.2311]])
    """
    i, f, g, o = ops.split(gi + gh, 4, axis=-1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    return ops.sigmoid(o) * ops.tanh(c), c


_STEPS = {"RNN_TANH": rnn_tanh_cell, "RNN_RELU": rnn_relu_cell, "GRU": gru_cell}


def _check_size(layer, name, n):
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
        raise ValueError(f"{layer}: {name} must be a positive int, got {n!r}")


def _mode(layer, nonlinearity):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{layer}: nonlinearity must be 'tanh' or 'relu', got "
                         f"{nonlinearity!r}")
    return "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


def _uniform(rng, k, shape, dtype):
    return Parameter(rng.uniform(-k, k, shape), dtype=dtype)


# ---------------------------------------------------------------------------------------
# The layers over a sequence
# ---------------------------------------------------------------------------------------

class RNNBase(Module):
    """What RNN, GRU and LSTM share (torch's ``nn.RNNBase``): the parameters of each
    layer and direction, named as torch's (``weight_ih_l0``, ``weight_hh_l0``,
    ``bias_ih_l0``, ``bias_hh_l0``, then ``..._reverse`` for the backward direction of a
    bidirectional layer), each drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)),
    and the loop over time. ``mode`` is ``'RNN_TANH'``, ``'RNN_RELU'``, ``'GRU'`` or
    ``'LSTM'``.

    >>> isinstance(cr.nn.GRU(3, 4, rng=0), cr.nn.RNNBase)
    True
    >>> cr.nn.RNNBase("LSTM", 3, 4, rng=0).weight_ih_l0.shape
    (16, 3)
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: str | None = None,
                 dtype: DTypeLike = None, rng: RNG = None) -> None:
        name = type(self).__name__
        check_device(name, device)
        _check_size(name, "input_size", input_size)
        _check_size(name, "hidden_size", hidden_size)
        _check_size(name, "num_layers", num_layers)
        if isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout must be a number in [0, 1], got {dropout!r}")
        if isinstance(proj_size, bool) or not isinstance(proj_size, Integral) or \
                not 0 <= proj_size < hidden_size:
            raise ValueError(f"{name}: proj_size must be an int in [0, hidden_size = "
                             f"{hidden_size}), got {proj_size!r}")
        self.mode = mode
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.bias = int(num_layers), bool(bias)
        self.batch_first, self.dropout = bool(batch_first), float(dropout)
        self.bidirectional, self.proj_size = bool(bidirectional), int(proj_size)
        # the hidden state's size: the projection's where there is one (torch's
        # real_hidden_size); the cell state keeps hidden_size
        state_size = self.proj_size or self.hidden_size
        # dropout between layers draws from chainrule's default generator, as torch's
        # from its own, unless rng= gives the layer a generator of its own
        self._dropout_rng = None if rng is None else make_generator(rng)
        rng = initial_generator(rng)
        gate_size = _GATES[mode] * self.hidden_size
        k = 1 / math.sqrt(self.hidden_size)
        directions = 2 if self.bidirectional else 1
        dtype = np.float64 if dtype is None else dtype
        for layer in range(self.num_layers):
            layer_input = self.input_size if layer == 0 else state_size * directions
            for suffix in ("", "_reverse")[:directions]:
                setattr(self, f"weight_ih_l{layer}{suffix}",
                        _uniform(rng, k, (gate_size, layer_input), dtype))
                setattr(self, f"weight_hh_l{layer}{suffix}",
                        _uniform(rng, k, (gate_size, state_size), dtype))
                if self.bias:
                    setattr(self, f"bias_ih_l{layer}{suffix}",
                            _uniform(rng, k, (gate_size,), dtype))
                    setattr(self, f"bias_hh_l{layer}{suffix}",
                            _uniform(rng, k, (gate_size,), dtype))
                if self.proj_size:
                    setattr(self, f"weight_hr_l{layer}{suffix}",
                            _uniform(rng, k, (self.proj_size, self.hidden_size), dtype))

    def _weights(self, layer, suffix):
        get = lambda kind: getattr(self, f"{kind}_l{layer}{suffix}", None)  # noqa: E731
        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"),
                get("weight_hr"))

    def _check_input(self, x, hx):
        """(batched?, sequence-first input) after torch's checks, each a ValueError."""
        name, shape = type(self).__name__, tuple(shape_of(x))
        if len(shape) not in (2, 3):
            raise ValueError(f"{name}: input of shape {shape}, expected 3-d (L, N, "
                             f"{self.input_size}) ({'N, L' if self.batch_first else 'L, N'} "
                             f"with batch_first={self.batch_first}) or 2-d (L, "
                             f"{self.input_size}) unbatched")
        if shape[-1] != self.input_size:
            raise ValueError(f"{name}: input of shape {shape}, expected the last axis to be "
                             f"input_size = {self.input_size}")
        steps = shape[1] if len(shape) == 3 and self.batch_first else shape[0]
        if steps == 0:
            raise ValueError(f"{name}: input of shape {shape} is a sequence of no steps; "
                             f"expected at least one (as torch's)")
        return len(shape) == 3

    def _check_state(self, what, state, batch, size=None):
        """The initial state (layers * directions, N, size: hidden_size unless given)
        checked; None if None."""
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, size or self.hidden_size)
        if state is None:
            return None
        if tuple(shape_of(state)) != expected:
            raise ValueError(f"{type(self).__name__}: {what} of shape "
                             f"{tuple(shape_of(state))}, expected {expected}")
        return state

    def forward(self, input: ArrayLike,
                hx: ArrayLike | tuple[ArrayLike, ArrayLike] | None = None
                ) -> tuple[Result, Result | tuple[Result, Result]]:
        """(output, h_n), or for an LSTM (output, (h_n, c_n)), as torch's.

        input (L, N, input_size), (N, L, input_size) with ``batch_first``, or (L,
        input_size) unbatched; hx (or for an LSTM (h_0, c_0)) of shape
        (num_layers * directions, N, hidden_size), (num_layers * directions,
        hidden_size) unbatched, or None for zeros. output holds the last layer's h at
        every step (both directions side by side), h_n (and c_n) every layer's last.

        input may also be a ``PackedSequence`` (``chainrule.nn.utils.rnn``): each
        sequence then runs its own number of steps, output is packed the same way, and
        h_n (c_n) holds each sequence's state after its own last step, in the batch's
        order (hx is given in that order too).
        """
        lstm = self.mode == "LSTM"
        name = type(self).__name__
        if lstm and hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise ValueError(f"{name}: expected hx to be a tuple (h_0, c_0) or None, got "
                             f"{type(hx).__name__}")
        if not lstm and isinstance(hx, (tuple, list)):
            raise ValueError(f"{name}: expected hx to be a Tensor or None, got a "
                             f"{type(hx).__name__}")
        packed = isinstance(input, PackedSequence)
        if packed:  # in the sorted order, padded; each sequence runs its own steps
            data, sizes, sorted_indices, unsorted_indices = input
            input, batched = self._padded(data, sizes), True
        else:
            batched, sizes = self._check_input(input, hx), None
            if not batched:  # torch's unbatched input: a batch of one, taken off at the end
                input = ops.expand_dims(input, 1)
                hx = None if hx is None else (tuple(ops.expand_dims(s, 1) for s in hx)
                                              if lstm else ops.expand_dims(hx, 1))
            elif self.batch_first:
                input = ops.swapaxes(input, 0, 1)
        batch = shape_of(input)[1]
        dtype = getattr(self.weight_ih_l0, "dtype", np.float64)
        if lstm:
            h0 = self._check_state("h_0" if batched else "h_0 (unbatched)",
                                   None if hx is None else hx[0], batch, self.proj_size)
            c0 = self._check_state("c_0" if batched else "c_0 (unbatched)",
                                   None if hx is None else hx[1], batch)
        else:
            h0, c0 = self._check_state("hx" if batched else "hx (unbatched)", hx, batch), None
        if packed and sorted_indices is not None:  # the states in the sorted order too
            h0, c0 = [None if s is None else ops.take(s, sorted_indices, axis=1)
                      for s in (h0, c0)]
        zeros = Tensor(np.zeros((batch, self.hidden_size), dtype=dtype))
        h_zeros = Tensor(np.zeros((batch, self.proj_size), dtype=dtype)) \
            if self.proj_size else zeros
        outputs, h_n, c_n = input, [], []
        directions = ("", "_reverse") if self.bidirectional else ("",)
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout and self.training:
                outputs = F.dropout(outputs, self.dropout, True, rng=self._dropout_rng
                                    or default_generator)
            results = []
            for d, suffix in enumerate(directions):
                i = layer * len(directions) + d
                h = h_zeros if h0 is None else h0[i]
                c = zeros if not lstm else (zeros if c0 is None else c0[i])
                seq, h, c = self._run(outputs, h, c, self._weights(layer, suffix),
                                      reverse=bool(d), sizes=sizes)
                results.append(seq)
                h_n.append(h)
                c_n.append(c)
            outputs = results[0] if len(results) == 1 else ops.concatenate(results, axis=-1)
        h_n = ops.stack(h_n)
        c_n = ops.stack(c_n) if lstm else None
        if packed:
            outputs = PackedSequence(packed_data(outputs, sizes), sizes, sorted_indices,
                                     unsorted_indices)
            if unsorted_indices is not None:  # the states back in the batch's order
                h_n = ops.take(h_n, unsorted_indices, axis=1)
                c_n = ops.take(c_n, unsorted_indices, axis=1) if lstm else None
        elif not batched:
            outputs = ops.squeeze(outputs, 1)
            h_n = ops.squeeze(h_n, 1)
            c_n = ops.squeeze(c_n, 1) if lstm else None
        elif self.batch_first:
            outputs = ops.swapaxes(outputs, 0, 1)
        return (outputs, (h_n, c_n)) if lstm else (outputs, h_n)

    def _padded(self, data, sizes):
        """A packed batch's data as (L, N, input_size) in its sorted order, zeros past
        each sequence's end (which no step reads)."""
        shape = tuple(shape_of(data))
        if len(shape) != 2 or shape[1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: a PackedSequence of data shape "
                             f"{shape}, expected (steps of all sequences, "
                             f"{self.input_size})")
        rows = padded_rows(sizes, len(sizes))
        dtype = getattr(self.weight_ih_l0, "dtype", np.float64)
        data = ops.concatenate([data, np.zeros((1, shape[1]), dtype)], axis=0)
        return ops.reshape(ops.take(data, rows.reshape(-1), axis=0), rows.shape + shape[1:])

    def _run(self, x, h, c, weights, reverse, sizes=None):
        """One layer in one direction over the sequence x (L, N, features): the
        outputs (L, N, hidden, or proj_size) in x's order, and the last h and c. With
        ``sizes`` (a packed batch, longest sequence first), step t moves only the
        first sizes[t] sequences: the others keep their state, so each one's last h
        is its own last step's, in either direction."""
        w_ih, w_hh, b_ih, b_hh, w_hr = weights
        gi = _project(x, _transposed(w_ih), b_ih)  # every step's input share: one matmul
        if self.mode == "GRU" and fused.enabled() and sizes is None:  # one node
            backwards = (slice(None, None, -1),)
            seq = fused_recurrent.gru_sequence(ops.getitem(gi, index=backwards) if reverse
                                               else gi, h, w_hh, b_hh)
            last = ops.getitem(seq, index=(-1,))
            return (ops.getitem(seq, index=backwards) if reverse else seq), last, c
        w_hh_t = _transposed(w_hh)
        w_hr_t = None if w_hr is None else _transposed(w_hr)
        steps = range(shape_of(x)[0] - 1, -1, -1) if reverse else range(shape_of(x)[0])
        out = []
        batch = shape_of(x)[1]
        for t in steps:
            n = batch if sizes is None else int(sizes[t])
            h_was, c_was = h, c
            if n < batch:  # (a packed batch: the sequences still running)
                h, c = h[:n], (c[:n] if self.mode == "LSTM" else c)
            gi_t = gi[t] if n == batch else gi[t, :n]
            gh = _project(h, w_hh_t, b_hh)
            if self.mode == "LSTM":
                h, c = lstm_cell(gi_t, gh, h, c)
                if w_hr_t is not None:  # the projected LSTM: h_t = W_hr (o_t * tanh(c_t))
                    h = ops.matmul(h, w_hr_t)
            else:
                h = _STEPS[self.mode](gi_t, gh, h)
            if n < batch:
                h = ops.concatenate([h, h_was[n:]], axis=0)
                c = ops.concatenate([c, c_was[n:]], axis=0) if self.mode == "LSTM" else c
            out.append(h)
        if reverse:
            out.reverse()
        return ops.stack(out), h, c

    def flatten_parameters(self) -> None:
        """Nothing to do (torch packs cuDNN's weights here); kept so ported code runs."""

    def extra_repr(self) -> str:
        """The sizes and the settings that differ from torch's defaults, for repr."""
        s = f"{self.input_size}, {self.hidden_size}"  # (torch's leaves out nonlinearity)
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        for key, default in (("bias", True), ("batch_first", False), ("dropout", 0.0),
                             ("bidirectional", False)):
            if getattr(self, key) != default:
                s += f", {key}={getattr(self, key)}"
        return s


class RNN(RNNBase):
    """An Elman RNN over a sequence, torch's ``nn.RNN``: at each step t, for each layer,
    ``h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)`` (``nonlinearity="relu"``:
    relu), x_t the input (the layer below's h_t above the first layer).

    torch's arguments: ``num_layers`` stacked, ``bias``, ``batch_first`` (input and
    output (N, L, features)), ``dropout`` on each layer's output but the last's, in
    training, ``bidirectional`` (a second pass from the end; the outputs side by side).
    ``rng`` (chainrule's: a seed or a Generator) draws the initial weights, by default
    from the default generator. Returns ``(output, h_n)`` (see ``forward``).

    >>> rnn = cr.nn.RNN(2, 3, rng=0)
    >>> [name for name, p in rnn.named_parameters()]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    >>> out, h_n = rnn(cr.ones(4, 2))                  # unbatched: 4 steps, 2 features
    >>> out.shape, h_n.shape
    ((4, 3), (1, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        super().__init__(_mode("RNN", nonlinearity), input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype, rng)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """A gated recurrent unit over a sequence, torch's ``nn.GRU``; each step is
    ``gru_cell``.

    At step t, for each layer::

        r_t = sigmoid(W_ir x_t + b_ir + W_hr h_(t-1) + b_hr)
        z_t = sigmoid(W_iz x_t + b_iz + W_hz h_(t-1) + b_hz)
        n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_(t-1) + b_hn))
        h_t = (1 - z_t) * n_t + z_t * h_(t-1)

    ``weight_ih_l0`` is (3 * hidden_size, input_size): W_ir, W_iz, W_in stacked, as
    torch's. The arguments and the result as ``RNN``'s.

    >>> gru = cr.nn.GRU(2, 3, bidirectional=True, rng=0)
    >>> out, h_n = gru(cr.ones(4, 5, 2))               # 4 steps, batch 5
    >>> out.shape, h_n.shape, gru.weight_ih_l0_reverse.shape
    ((4, 5, 6), (2, 5, 3), (9, 2))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype, rng)


class LSTM(RNNBase):
    """A long short-term memory over a sequence, torch's ``nn.LSTM``; each step is
    ``lstm_cell``.

    At step t, for each layer::

        i_t = sigmoid(W_ii x_t + b_ii + W_hi h_(t-1) + b_hi)
        f_t = sigmoid(W_if x_t + b_if + W_hf h_(t-1) + b_hf)
        g_t = tanh(W_ig x_t + b_ig + W_hg h_(t-1) + b_hg)
        o_t = sigmoid(W_io x_t + b_io + W_ho h_(t-1) + b_ho)
        c_t = f_t * c_(t-1) + i_t * g_t
        h_t = o_t * tanh(c_t)

    The state is the pair (h, c): ``forward(input, (h_0, c_0))`` returns
    ``(output, (h_n, c_n))``. With ``proj_size`` > 0 (torch's projected LSTM), h_t is
    ``W_hr (o_t * tanh(c_t))`` of size proj_size (``weight_hr_l{k}``: (proj_size,
    hidden_size)), so h, the output and the next layer's input have proj_size features
    and c keeps hidden_size. Otherwise the arguments as ``RNN``'s.

    >>> lstm = cr.nn.LSTM(2, 3, num_layers=2, batch_first=True, rng=0)
    >>> out, (h_n, c_n) = lstm(cr.ones(5, 4, 2))        # batch 5, 4 steps
    >>> out.shape, h_n.shape, c_n.shape
    ((5, 4, 3), (2, 5, 3), (2, 5, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype, rng)


# ---------------------------------------------------------------------------------------
# The cells: one step, the loop left to the caller
# ---------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """What the cells share (torch's ``nn.RNNCellBase``): ``weight_ih`` (gates * hidden,
    input), ``weight_hh`` (gates * hidden, hidden), ``bias_ih``, ``bias_hh``, drawn as
    the layers' are. (torch's takes the number of gates, ``num_chunks``; this one the
    ``mode``, as RNNBase, which names them.)

    >>> isinstance(cr.nn.LSTMCell(3, 4, rng=0), cr.nn.RNNCellBase)
    True
    >>> cr.nn.RNNCellBase("GRU", 3, 4, rng=0).weight_hh.shape
    (12, 4)
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool = True,
                 device: str | None = None, dtype: DTypeLike = None,
                 rng: RNG = None) -> None:
        name = type(self).__name__
        check_device(name, device)
        _check_size(name, "input_size", input_size)
        _check_size(name, "hidden_size", hidden_size)
        self.mode, self.input_size, self.hidden_size = mode, int(input_size), int(hidden_size)
        self.bias = bool(bias)
        rng, k = initial_generator(rng), 1 / math.sqrt(self.hidden_size)
        gate_size, dtype = _GATES[mode] * self.hidden_size, (dtype or np.float64)
        self.weight_ih = _uniform(rng, k, (gate_size, self.input_size), dtype)
        self.weight_hh = _uniform(rng, k, (gate_size, self.hidden_size), dtype)
        if self.bias:
            self.bias_ih = _uniform(rng, k, (gate_size,), dtype)
            self.bias_hh = _uniform(rng, k, (gate_size,), dtype)
        else:
            self.bias_ih = self.bias_hh = None

    def _prepare(self, input, states):
        """(batched?, input as a batch, the states as a batch: zeros for None)."""
        name, shape = type(self).__name__, tuple(shape_of(input))
        if len(shape) not in (1, 2) or shape[-1] != self.input_size:
            raise ValueError(f"{name}: input of shape {shape}, expected (N, "
                             f"{self.input_size}) or ({self.input_size},) unbatched")
        batched = len(shape) == 2
        if not batched:
            input = ops.expand_dims(input, 0)
        batch = shape_of(input)[0]
        expected = (batch, self.hidden_size) if batched else (self.hidden_size,)
        dtype = self.weight_ih.dtype
        out = []
        for what, state in states:
            if state is None:
                state = Tensor(np.zeros((batch, self.hidden_size), dtype=dtype))
            elif tuple(shape_of(state)) != expected:
                raise ValueError(f"{name}: {what} of shape {tuple(shape_of(state))}, "
                                 f"expected {expected} for an input of shape {shape}")
            elif not batched:
                state = ops.expand_dims(state, 0)
            out.append(state)
        return batched, input, out

    def _gi(self, input):
        return _project(input, _transposed(self.weight_ih), self.bias_ih)

    def _gh(self, h):
        return _project(h, _transposed(self.weight_hh), self.bias_hh)

    def extra_repr(self) -> str:
        """The sizes (and bias=False), for repr."""
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        return s


def _unbatch(batched, x):
    return x if batched else ops.squeeze(x, 0)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN, torch's ``nn.RNNCell``:
    ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (``nonlinearity="relu"``: relu).

    ``forward(input, hx=None)``: input (N, input_size) or (input_size,), hx (N,
    hidden_size) or (hidden_size,) or None (zeros); returns h'.

    >>> cell = cr.nn.RNNCell(2, 3, rng=0)
    >>> h = cell(cr.ones(5, 2))
    >>> h = cell(cr.ones(5, 2), h)                     # the caller loops over time
    >>> h.shape
    (5, 3)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        super().__init__(_mode("RNNCell", nonlinearity), input_size, hidden_size, bias,
                         device, dtype, rng)
        self.nonlinearity = nonlinearity

    def forward(self, input: ArrayLike, hx: ArrayLike | None = None) -> Result:
        """h' of the step from hx (zeros if None) given input."""
        batched, input, (h,) = self._prepare(input, [("hx", hx)])
        h = _STEPS[self.mode](self._gi(input), self._gh(h), h)
        return _unbatch(batched, h)


class GRUCell(RNNCellBase):
    """One step of a GRU, torch's ``nn.GRUCell``: ``gru_cell``'s equations.

    ``forward(input, hx=None)`` as ``RNNCell``'s; returns h'.

    >>> cell = cr.nn.GRUCell(2, 3, rng=0)
    >>> cell(cr.ones(2)).shape, cell.weight_hh.shape   # unbatched; r, z, n stacked
    ((3,), (9, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: str | None = None, dtype: DTypeLike = None, *,
                 rng: RNG = None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype, rng)

    def forward(self, input: ArrayLike, hx: ArrayLike | None = None) -> Result:
        """h' of the step from hx (zeros if None) given input."""
        batched, input, (h,) = self._prepare(input, [("hx", hx)])
        return _unbatch(batched, gru_cell(self._gi(input), self._gh(h), h))


class LSTMCell(RNNCellBase):
    """One step of an LSTM, torch's ``nn.LSTMCell``: ``lstm_cell``'s equations.

    ``forward(input, hx=None)``: hx is the pair (h, c), or None (zeros); returns
    (h', c').

    >>> cell = cr.nn.LSTMCell(2, 3, rng=0)
    >>> h, c = cell(cr.ones(5, 2))
    >>> h, c = cell(cr.ones(5, 2), (h, c))
    >>> h.shape, c.shape
    ((5, 3), (5, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: str | None = None, dtype: DTypeLike = None, *,
                 rng: RNG = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype, rng)

    def forward(self, input: ArrayLike, hx: tuple | None = None) -> tuple[Result, Result]:
        """(h', c') of the step from hx = (h, c) (zeros if None) given input."""
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise ValueError(f"LSTMCell: expected hx to be a tuple (h, c) or None, got "
                             f"{type(hx).__name__}")
        h, c = (None, None) if hx is None else hx
        batched, input, (h, c) = self._prepare(input, [("h", h), ("c", c)])
        h, c = lstm_cell(self._gi(input), self._gh(h), h, c)
        return _unbatch(batched, h), _unbatch(batched, c)
