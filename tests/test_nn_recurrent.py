"""nn.RNN, nn.GRU, nn.LSTM and their cells against torch 2.x in float64: torch's initial
weights copied in by ``load_state_dict``, the same input, then the outputs and the
gradients of a scalar loss with respect to the input, the initial states and every
parameter; second derivatives; cr.jit and cr.vmap; torch's names, shapes, initialisation
range and refusals."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn

TOL = 1e-10
KINDS = {"RNN": (nn.RNN, torch.nn.RNN), "GRU": (nn.GRU, torch.nn.GRU),
         "LSTM": (nn.LSTM, torch.nn.LSTM)}
CELLS = {"RNNCell": (nn.RNNCell, torch.nn.RNNCell), "GRUCell": (nn.GRUCell, torch.nn.GRUCell),
         "LSTMCell": (nn.LSTMCell, torch.nn.LSTMCell)}


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def pair(kind, seed, *args, **kwargs):
    """The torch layer (float64, seeded) and chainrule's with torch's weights loaded."""
    ours, theirs = (KINDS | CELLS)[kind]
    torch.manual_seed(seed)
    t = theirs(*args, **kwargs).double()
    c = ours(*args, **kwargs, rng=seed)
    assert repr(c.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    return c, t


def loss_of(out, state):
    """A scalar reading every output and state, weighted so that no gradient is uniform."""
    total = (out * out).sum() + out.sum()
    states = state if isinstance(state, tuple) else (state,)
    for k, s in enumerate(states):
        total = total + (k + 2) * (s * s * s).sum()
    return total


def compare_layer(kind, seed, x, states, *args, **kwargs):
    c, t = pair(kind, seed, *args, **kwargs)
    xt = torch.tensor(x, requires_grad=True)
    xc = cr.tensor(x, requires_grad=True)
    st = [torch.tensor(s, requires_grad=True) for s in states]
    sc = [cr.tensor(s, requires_grad=True) for s in states]
    arg_t = None if not st else (tuple(st) if kind == "LSTM" else st[0])
    arg_c = None if not sc else (tuple(sc) if kind == "LSTM" else sc[0])
    out_t, state_t = t(xt, arg_t)
    out_c, state_c = c(xc, arg_c)
    close(out_c, out_t)
    for a, b in zip(state_c if kind == "LSTM" else (state_c,),
                    state_t if kind == "LSTM" else (state_t,)):
        close(a, b)
    loss_of(out_t, state_t).backward()
    loss_of(out_c, state_c).backward()
    close(xc.grad, xt.grad)
    for a, b in zip(sc, st):
        close(a.grad, b.grad)
    named_t = dict(t.named_parameters())
    named_c = dict(c.named_parameters())
    assert list(named_c) == list(named_t)
    for name, p in named_c.items():
        close(p.grad, named_t[name].grad)
    return c, t


CONFIGS = [dict(), dict(num_layers=2), dict(bidirectional=True), dict(batch_first=True),
           dict(bias=False), dict(num_layers=3, bidirectional=True, batch_first=True)]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in
                                                                  c.items()) or "default")
def test_layer_matches_torch(kind, config):
    rng = np.random.default_rng(7)
    steps, batch, features, hidden = 5, 3, 4, 6
    shape = (batch, steps, features) if config.get("batch_first") else (steps, batch, features)
    x = rng.normal(size=shape)
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    states = [rng.normal(size=(layers, batch, hidden)) * 0.5
              for _ in range(2 if kind == "LSTM" else 1)]
    compare_layer(kind, 11, x, states, features, hidden, **config)
    compare_layer(kind, 12, x, [], features, hidden, **config)  # zeros as initial state


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in
                                                                  c.items()) or "default")
def test_a_projected_lstm_matches_torch(config):
    """proj_size: h_t = W_hr (o_t * tanh(c_t)) of proj_size features, the next layer's
    input and the output too; c keeps hidden_size. Names, shapes, outputs, states and
    every gradient are torch's."""
    rng = np.random.default_rng(9)
    steps, batch, features, hidden, proj = 5, 3, 4, 6, 2
    shape = (batch, steps, features) if config.get("batch_first") else (steps, batch, features)
    x = rng.normal(size=shape)
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    states = [rng.normal(size=(layers, batch, size)) * 0.5 for size in (proj, hidden)]
    c, t = compare_layer("LSTM", 13, x, states, features, hidden, proj_size=proj, **config)
    assert {k: v.shape for k, v in c.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert repr(c) == repr(t)
    compare_layer("LSTM", 14, x, [], features, hidden, proj_size=proj, **config)


def test_rnn_relu_matches_torch():
    rng = np.random.default_rng(3)
    compare_layer("RNN", 4, rng.normal(size=(6, 2, 3)), [rng.normal(size=(2, 2, 5))],
                  3, 5, num_layers=2, nonlinearity="relu")


@pytest.mark.parametrize("kind", list(KINDS))
def test_unbatched_input_matches_torch(kind):
    rng = np.random.default_rng(5)
    states = [rng.normal(size=(4, 3)) for _ in range(2 if kind == "LSTM" else 1)]
    c, _ = compare_layer(kind, 2, rng.normal(size=(7, 2)), states, 2, 3, num_layers=2,
                         bidirectional=True)
    out, state = c(cr.ones(7, 2))
    h = state[0] if kind == "LSTM" else state
    assert out.shape == (7, 6) and h.shape == (4, 3)


@pytest.mark.parametrize("kind", list(CELLS))
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_cell_matches_torch(kind, batched, bias):
    rng = np.random.default_rng(9)
    c, t = pair(kind, 21, 3, 4, bias=bias)
    shape = (5,) if batched else ()
    x = rng.normal(size=shape + (3,))
    states = [rng.normal(size=shape + (4,)) for _ in range(2 if kind == "LSTMCell" else 1)]
    xt, xc = torch.tensor(x, requires_grad=True), cr.tensor(x, requires_grad=True)
    st = [torch.tensor(s, requires_grad=True) for s in states]
    sc = [cr.tensor(s, requires_grad=True) for s in states]
    lstm = kind == "LSTMCell"
    # two steps, the second from the first's state, so the state's gradient goes through
    # a step
    out_t = t(xt, tuple(st) if lstm else st[0])
    out_t = t(2 * xt, out_t)
    out_c = c(xc, tuple(sc) if lstm else sc[0])
    out_c = c(2 * xc, out_c)
    for a, b in zip(out_c if lstm else [out_c], out_t if lstm else [out_t]):
        close(a, b)
    loss_of(out_t[0], out_t[1]).backward() if lstm else loss_of(out_t, out_t).backward()
    loss_of(out_c[0], out_c[1]).backward() if lstm else loss_of(out_c, out_c).backward()
    close(xc.grad, xt.grad)
    for a, b in zip(sc, st):
        close(a.grad, b.grad)
    for (name, p), (name_t, q) in zip(c.named_parameters(), t.named_parameters()):
        assert name == name_t
        close(p.grad, q.grad)
    no_state = c(xc)
    for a, b in zip(no_state if lstm else [no_state], t(xt) if lstm else [t(xt)]):
        close(a, b)


def test_cell_relu_matches_torch():
    c, t = pair("RNNCell", 1, 2, 3, nonlinearity="relu")
    x = np.random.default_rng(1).normal(size=(4, 2))
    close(c(cr.tensor(x)), t(torch.tensor(x)))


@pytest.mark.parametrize("kind", list(KINDS))
def test_names_shapes_and_initial_range_are_torchs(kind):
    ours, theirs = KINDS[kind]
    c = ours(3, 5, num_layers=2, bidirectional=True, rng=0)
    t = theirs(3, 5, num_layers=2, bidirectional=True)
    assert {k: v.shape for k, v in c.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert list(c.state_dict()) == list(t.state_dict())
    bound = 1 / np.sqrt(5)
    values = np.concatenate([p.data.ravel() for p in c.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.max() > 0.9 * bound and values.min() < -0.9 * bound   # the whole range
    c2 = ours(3, 5, num_layers=2, bidirectional=True, rng=0)
    assert all(np.array_equal(a.data, b.data) for a, b in zip(c.parameters(), c2.parameters()))
    assert c.torch_state_dict().keys() == c.state_dict().keys()


def test_default_initialisation_draws_from_the_default_generator():
    cr.manual_seed(5)
    a = nn.GRU(2, 3)
    cr.manual_seed(5)
    b = nn.GRU(2, 3)
    assert all(np.array_equal(p.data, q.data) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
def test_dropout_between_layers_only_in_training():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 2, 3))
    c, t = pair("LSTM", 3, 3, 5, num_layers=2, dropout=0.5)
    t.eval()
    c.eval()
    close(c(cr.tensor(x))[0], t(torch.tensor(x))[0])
    c.train()
    out_a, out_b = c(cr.tensor(x))[0], c(cr.tensor(x))[0]
    assert not np.allclose(out_a.data, out_b.data)   # new masks at each call
    # a single layer has no layer above to drop into: training changes nothing
    c1, t1 = pair("GRU", 3, 3, 5, dropout=0.5)
    close(c1(cr.tensor(x))[0], t1(torch.tensor(x))[0])


def test_second_derivatives_match_torch():
    """The gradient of the squared norm of the input's gradient, through two steps of
    each gate's nonlinearity: torch's double backward against cr.grad of cr.grad."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 2, 2))
    for kind in KINDS:
        c, t = pair(kind, 8, 2, 3, num_layers=2)
        xt = torch.tensor(x, requires_grad=True)
        out, _ = t(xt)
        (g,) = torch.autograd.grad((out ** 3).sum(), xt, create_graph=True)
        (gg,) = torch.autograd.grad((g ** 2).sum(), xt)

        def first(u):
            return (c(u)[0] ** 3).sum()

        close(cr.grad(first)(x), g)
        close(cr.grad(lambda u: (cr.grad(first)(u) ** 2).sum())(x), gg)


def test_under_jit_and_vmap():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5, 2))                          # batch 3, 5 steps
    gru = nn.GRU(2, 4, batch_first=True, rng=1)
    eager = gru(cr.tensor(x))[0]
    jitted = cr.jit(lambda u: gru(u)[0])
    close(jitted(cr.tensor(x)), eager.data)
    close(jitted(cr.tensor(x)), eager.data)                 # the replayed program too
    per_sequence = cr.vmap(lambda u: gru(u)[0])(x)          # each (5, 2), unbatched
    close(per_sequence, eager.data)
    grads = cr.vmap(cr.grad(lambda u: (gru(u)[0] ** 2).sum()))(x)
    for i in range(3):
        close(grads[i], cr.grad(lambda u: (gru(u)[0] ** 2).sum())(x[i]))


def test_a_training_step_from_torchs_weights_matches_torch():
    """A makemore-style step: embedding, GRU, a linear head, cross entropy, SGD."""
    rng = np.random.default_rng(6)
    tokens = rng.integers(0, 7, size=(4, 5))
    targets = rng.integers(0, 7, size=(4, 5))
    c, t = pair("GRU", 13, 3, 6, batch_first=True)
    torch.manual_seed(13)
    emb_t, head_t = torch.nn.Embedding(7, 3).double(), torch.nn.Linear(6, 7).double()
    emb_c = nn.Embedding(7, 3)
    emb_c.weight.data = emb_t.weight.detach().numpy().copy()
    w_head = cr.tensor(head_t.weight.detach().numpy().copy(), requires_grad=True)
    b_head = cr.tensor(head_t.bias.detach().numpy().copy(), requires_grad=True)
    opt_t = torch.optim.SGD([*t.parameters(), *emb_t.parameters(), *head_t.parameters()],
                            lr=0.1)
    opt_c = cr.optim.SGD([*c.parameters(), *emb_c.parameters(), w_head, b_head], lr=0.1)
    for _ in range(2):
        out_t, _ = t(emb_t(torch.tensor(tokens)))
        loss_t = torch.nn.functional.cross_entropy(head_t(out_t).reshape(-1, 7),
                                                   torch.tensor(targets).reshape(-1))
        opt_t.zero_grad()
        loss_t.backward()
        opt_t.step()
        out_c, _ = c(emb_c(tokens))
        logits = out_c @ w_head.T + b_head
        loss_c = nn.functional.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1))
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        close(loss_c, loss_t)
    for name, p in c.named_parameters():
        close(p, dict(t.named_parameters())[name])


@pytest.mark.parametrize("make, call, message", [
    (lambda: nn.GRU(3, 4), lambda m: m(cr.ones(5, 2, 2)),
     r"GRU: input of shape \(5, 2, 2\), expected the last axis to be input_size = 3"),
    (lambda: nn.RNN(3, 4), lambda m: m(cr.ones(3)), r"RNN: input of shape \(3,\), expected 3-d"),
    (lambda: nn.GRU(3, 4), lambda m: m(cr.ones(0, 2, 3)),
     r"GRU: input of shape \(0, 2, 3\) is a sequence of no steps"),
    (lambda: nn.LSTM(3, 4, batch_first=True), lambda m: m(cr.ones(2, 0, 3)),
     r"LSTM: input of shape \(2, 0, 3\) is a sequence of no steps"),
    (lambda: nn.LSTM(3, 4), lambda m: m(cr.ones(5, 2, 3), cr.zeros(1, 2, 4)),
     r"LSTM: expected hx to be a tuple \(h_0, c_0\)"),
    (lambda: nn.LSTM(3, 4), lambda m: m(cr.ones(5, 2, 3), (cr.zeros(1, 2, 4), cr.zeros(2, 2, 4))),
     r"LSTM: c_0 of shape \(2, 2, 4\), expected \(1, 2, 4\)"),
    (lambda: nn.GRU(3, 4, num_layers=2), lambda m: m(cr.ones(5, 2, 3), cr.zeros(1, 2, 4)),
     r"GRU: hx of shape \(1, 2, 4\), expected \(2, 2, 4\)"),
    (lambda: nn.GRUCell(3, 4), lambda m: m(cr.ones(2, 5)),
     r"GRUCell: input of shape \(2, 5\), expected \(N, 3\)"),
    (lambda: nn.LSTMCell(3, 4), lambda m: m(cr.ones(2, 3), (cr.zeros(3, 4), cr.zeros(2, 4))),
     r"LSTMCell: h of shape \(3, 4\), expected \(2, 4\)"),
    (lambda: nn.LSTM(3, 4, proj_size=4), None,
     r"LSTM: proj_size must be an int in \[0, hidden_size = 4\), got 4"),
    (lambda: nn.LSTM(3, 4, proj_size=2), lambda m: m(cr.ones(5, 2, 3), (cr.zeros(1, 2, 4),
                                                                          cr.zeros(1, 2, 4))),
     r"LSTM: h_0 of shape \(1, 2, 4\), expected \(1, 2, 2\)"),
    (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), None,
     r"RNN: nonlinearity must be 'tanh' or 'relu'"),
    (lambda: nn.GRU(3, 0), None, r"GRU: hidden_size must be a positive int"),
    (lambda: nn.LSTM(3, 4, dropout=1.5), None, r"LSTM: dropout must be a number in \[0, 1\]"),
    (lambda: nn.GRU(3, 4, device="cuda"), None,
     r"GRU: chainrule computes on the CPU, got device='cuda'"),
    (lambda: nn.LSTMCell(3, 4, device="cuda:0"), None,
     r"LSTMCell: chainrule computes on the CPU, got device='cuda:0'"),
])
def test_bad_input_is_a_one_line_value_error(make, call, message):
    with pytest.raises(ValueError, match=message) as info:
        call(make()) if call else make()
    assert "\n" not in str(info.value)


def test_the_cpu_device_is_accepted():
    assert nn.GRU(3, 4, device="cpu", rng=0).hidden_size == 4
    assert nn.RNNCell(3, 4, device=torch.device("cpu"), rng=0).hidden_size == 4


def test_repr_is_torchs():
    assert repr(nn.LSTM(3, 4, num_layers=2, batch_first=True, rng=0)) == \
        repr(torch.nn.LSTM(3, 4, num_layers=2, batch_first=True))
    assert repr(nn.GRUCell(3, 4, bias=False, rng=0)) == repr(torch.nn.GRUCell(3, 4, bias=False))
    assert repr(nn.RNN(2, 3, nonlinearity="relu", rng=0)) == \
        repr(torch.nn.RNN(2, 3, nonlinearity="relu"))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in
                                                                  c.items()) or "default")
def test_the_fused_gru_recurrence_equals_the_plain_steps(config):
    """nn.GRU runs each layer's recurrence as one gru_sequence node (rules.fused_recurrent)
    unless the overrides are off (CHAINRULE_FAST=0), when it runs gru_cell at every step:
    the same outputs and gradients either way."""
    from chainrule.rules import fused
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3, 2))
    h0 = rng.normal(size=(2 * config.get("num_layers", 1)
                          if config.get("bidirectional") else config.get("num_layers", 1),
                          4 if config.get("batch_first") else 3, 5))
    results = []
    for on in (True, False):
        previous = fused.set_enabled(on)
        try:
            gru = nn.GRU(2, 5, **config, rng=3)
            xc, hc = cr.tensor(x, requires_grad=True), cr.tensor(h0, requires_grad=True)
            out, h_n = gru(xc, hc)
            loss_of(out, h_n).backward()
        finally:
            fused.set_enabled(previous)
        results.append([out, h_n, xc.grad, hc.grad] + [p.grad for p in gru.parameters()])
    for a, b in zip(*results):
        close(a, b, 1e-13)
