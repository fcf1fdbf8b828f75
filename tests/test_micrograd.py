"""micrograd compatibility: ``chainrule.micrograd.engine`` and ``chainrule.micrograd.nn``.

micrograd's own two engine tests, in our words, run through the micrograd import path
and compared with PyTorch in float64 (micrograd asks for 1e-6; both sides are float64,
so we also ask for 1e-12). Then the networks: parameter counts, reprs, initialisation
(micrograd's random draws, seeds), and forward and backward passes against the same
network written in PyTorch.
"""

import math
import random

import numpy as np
import pytest
import torch

from chainrule.micrograd.engine import Value
from chainrule.micrograd.nn import MLP, Layer, Module, Neuron

# ---------------------------------------------------------------------------------------
# Helpers (local to this file)
# ---------------------------------------------------------------------------------------


def tensor(x):
    return torch.tensor(float(x), dtype=torch.float64, requires_grad=True)


def assert_close(actual, expected, rel=1e-12, what="value"):
    """Relative error <= rel, with an absolute floor of rel for values near 0 (a gradient
    that is a sum of terms of both signs may be tiny)."""
    expected = float(expected)
    assert math.isclose(actual, expected, rel_tol=rel, abs_tol=rel), \
        f"{what}: {actual!r} vs {expected!r}"


# ---------------------------------------------------------------------------------------
# micrograd's test_engine.py, rewritten
# ---------------------------------------------------------------------------------------

def sanity_check(x):
    """micrograd's test_sanity_check expression; works for Values and tensors alike."""
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    return h + q + q * x


def more_ops(a, b):
    """micrograd's test_more_ops expression, with its in-place updates."""
    c = a + b
    d = a * b + b ** 3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g += 10.0 / f
    return g


@pytest.mark.parametrize("rel", [1e-6, 1e-12], ids=["micrograd-tolerance", "float64"])
def test_sanity_check(rel):
    x = Value(-4.0)
    y = sanity_check(x)
    y.backward()
    tx = tensor(-4.0)
    ty = sanity_check(tx)
    ty.backward()
    assert_close(y.data, ty.item(), rel, "y")
    assert_close(x.grad, tx.grad.item(), rel, "dy/dx")
    assert (y.data, x.grad) == (-20.0, 46.0)  # the numbers micrograd's test sees


@pytest.mark.parametrize("rel", [1e-6, 1e-12], ids=["micrograd-tolerance", "float64"])
def test_more_ops(rel):
    a, b = Value(-4.0), Value(2.0)
    g = more_ops(a, b)
    g.backward()
    ta, tb = tensor(-4.0), tensor(2.0)
    tg = more_ops(ta, tb)
    tg.backward()
    assert_close(g.data, tg.item(), rel, "g")
    assert_close(a.grad, ta.grad.item(), rel, "dg/da")
    assert_close(b.grad, tb.grad.item(), rel, "dg/db")
    # micrograd's README quotes these (printed with 4 decimals)
    assert f"{g.data:.4f}" == "24.7041"
    assert f"{a.grad:.4f}" == "138.8338" and f"{b.grad:.4f}" == "645.5773"


def test_engine_path_is_chainrule_value():
    """micrograd's Value is chainrule's, plus micrograd's hand-written closures; the
    operators keep its kind, so every node of a micrograd graph can take one."""
    from chainrule.scalar.value import Value as ChainruleValue
    assert issubclass(Value, ChainruleValue)
    assert type(Value(1.0) * 2.0 + 1.0) is Value and type(2.0 - Value(1.0)) is Value


# ---------------------------------------------------------------------------------------
# Networks: structure, reprs, zero_grad
# ---------------------------------------------------------------------------------------

def test_mlp_parameter_count_matches_micrograd():
    """(2*16 + 16) + (16*16 + 16) + (16 + 1) = 337, micrograd's demo network."""
    assert len(MLP(2, [16, 16, 1], rng=0).parameters()) == 337
    assert len(Neuron(3, rng=0).parameters()) == 4
    assert len(Layer(3, 5, rng=0).parameters()) == 20
    assert all(isinstance(p, Value) for p in MLP(2, [4, 1], rng=0).parameters())


def test_reprs_match_micrograd():
    assert repr(Neuron(2, rng=0)) == "ReLUNeuron(2)"
    assert repr(Neuron(16, nonlin=False, rng=0)) == "LinearNeuron(16)"
    assert repr(Layer(2, 2, rng=0)) == "Layer of [ReLUNeuron(2), ReLUNeuron(2)]"
    model = MLP(2, [16, 16, 1], rng=0)
    hidden = ", ".join(["ReLUNeuron(2)"] * 16)
    hidden2 = ", ".join(["ReLUNeuron(16)"] * 16)
    assert repr(model) == (f"MLP of [Layer of [{hidden}], Layer of [{hidden2}], "
                           f"Layer of [LinearNeuron(16)]]")
    assert str(model) == repr(model)
    # micrograd's boolean attribute is there too
    assert Neuron(2, rng=0).nonlin is True and Neuron(2, nonlin=False, rng=0).nonlin is False


def test_zero_grad_sets_every_gradient_to_zero():
    model = MLP(2, [4, 3, 1], rng=5)
    model([0.3, -1.2]).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 and type(p.grad) is float for p in model.parameters())


def test_module_base_class():
    m = Module()
    assert m.parameters() == []
    m.zero_grad()  # nothing to do, and no error


# ---------------------------------------------------------------------------------------
# Initialisation: micrograd's draws, and seeds
# ---------------------------------------------------------------------------------------

def all_weights(model):
    """Weights in drawing order: layer by layer, neuron by neuron, input by input."""
    return [w.data for layer in model.layers for n in layer.neurons for w in n.w]


def test_global_seed_gives_micrograd_s_initial_weights():
    """With random.seed(1337) (micrograd's demo), the weights are random.uniform(-1, 1)
    drawn in order, nin per neuron, and every bias is 0, as in micrograd."""
    state = random.getstate()
    try:
        random.seed(1337)
        expected = [random.uniform(-1, 1) for _ in range(2 * 16 + 16 * 16 + 16)]
        random.seed(1337)
        model = MLP(2, [16, 16, 1])
    finally:
        random.setstate(state)
    assert all_weights(model) == expected
    biases = [n.b.data for layer in model.layers for n in layer.neurons]
    assert biases == [0.0] * 33


def test_int_seed_and_random_instance_give_the_same_weights():
    """rng=7 twice: identical; random.Random(7): identical again; one stream is shared
    by all layers, so the weights are Random(7)'s draws in order."""
    a, b = MLP(3, [5, 4, 1], rng=7), MLP(3, [5, 4, 1], rng=7)
    c = MLP(3, [5, 4, 1], rng=random.Random(7))
    stream = random.Random(7)
    expected = [stream.uniform(-1, 1) for _ in range(3 * 5 + 5 * 4 + 4)]
    assert all_weights(a) == all_weights(b) == all_weights(c) == expected
    assert all_weights(MLP(3, [5, 4, 1], rng=8)) != expected


def test_seeded_model_does_not_touch_the_global_random_state():
    state = random.getstate()
    MLP(2, [8, 1], rng=3)
    assert random.getstate() == state


def test_bad_rng_and_nonlin_are_rejected():
    with pytest.raises(TypeError, match="rng: expected None, an int seed, a random.Random or a "
                                        "numpy.random.Generator, got str"):
        MLP(2, [1], rng="seed")
    with pytest.raises(ValueError, match="nonlin: expected"):
        Neuron(2, nonlin="swish", rng=0)
    with pytest.raises(ValueError, match="Neuron: nin must be a positive int"):
        Neuron(0)


# ---------------------------------------------------------------------------------------
# Forward and backward against the same network in PyTorch
# ---------------------------------------------------------------------------------------

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
               "linear": lambda t: t}


def torch_copy(model):
    """The model's weights as float64 matrices W (nout x nin) and vectors b."""
    params = []
    for layer in model.layers:
        W = torch.tensor([[w.data for w in n.w] for n in layer.neurons],
                         dtype=torch.float64, requires_grad=True)
        b = torch.tensor([n.b.data for n in layer.neurons],
                         dtype=torch.float64, requires_grad=True)
        params.append((W, b, layer.neurons[0].activation))
    return params


def torch_forward(params, x):
    h = x
    for W, b, activation in params:
        h = ACTIVATIONS[activation](W @ h + b)
    return h


def assert_matches_torch(model, inputs, rel=1e-12):
    """Output, every parameter's gradient and the inputs' gradients equal torch's."""
    xs = [Value(v) for v in inputs]
    out = model(xs)
    out.backward()
    params = torch_copy(model)
    tx = torch.tensor(inputs, dtype=torch.float64, requires_grad=True)
    tout = torch_forward(params, tx)
    assert tout.shape == (1,)
    tout[0].backward()
    assert_close(out.data, tout[0].item(), rel, "output")
    for (W, b, _), layer in zip(params, model.layers):
        for i, n in enumerate(layer.neurons):
            assert_close(n.b.grad, b.grad[i].item(), rel, "bias gradient")
            for j, w in enumerate(n.w):
                assert_close(w.grad, W.grad[i, j].item(), rel, "weight gradient")
    for j, x in enumerate(xs):
        assert_close(x.grad, tx.grad[j].item(), rel, "input gradient")
    return out


@pytest.mark.parametrize("inputs", [[0.5, -1.5], [2.0, 0.25], [-0.8, -0.3]])
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "micrograd-chain"])
def test_mlp_forward_and_backward_match_torch(inputs, fused):
    """MLP(2, [16, 16, 1]): ReLU hidden layers, a linear output."""
    model = MLP(2, [16, 16, 1], rng=1337, fused=fused)
    assert_matches_torch(model, inputs)


def test_fused_and_micrograd_chain_agree():
    """fused=False builds micrograd's chain of * and + nodes; fused=True one node per
    neuron. Same float operations in the same order: the same output bit for bit and
    the same gradients."""
    fused, chain = MLP(2, [16, 16, 1], rng=42), MLP(2, [16, 16, 1], rng=42, fused=False)
    assert all_weights(fused) == all_weights(chain)
    x1, x2 = [Value(0.7), Value(-1.9)], [Value(0.7), Value(-1.9)]
    out1, out2 = fused(x1), chain(x2)
    assert out1.data == out2.data
    out1.backward()
    out2.backward()
    for p, q in zip(fused.parameters(), chain.parameters()):
        assert_close(p.grad, q.grad, 1e-12, "parameter gradient")
    for a, b in zip(x1, x2):
        assert_close(a.grad, b.grad, 1e-12, "input gradient")
    assert any(p.grad != 0.0 for p in fused.parameters())


def test_one_neuron_hidden_layer_works():
    """MLP(2, [16, 1, 1]): micrograd's Layer returns a bare Value for one neuron, which
    the next layer cannot iterate; here it works and matches torch."""
    model = MLP(2, [16, 1, 1], rng=3)
    out = assert_matches_torch(model, [0.4, -0.9])
    assert isinstance(out, Value)


def test_mlp_with_several_outputs_returns_a_list():
    model = MLP(3, [4, 2], rng=0)
    out = model([1.0, 2.0, 3.0])
    assert isinstance(out, list) and len(out) == 2
    assert all(isinstance(o, Value) for o in out)


@pytest.mark.parametrize("x", [[0.5, -1.5], [3.0, 2.0]])
def test_tanh_network_with_activated_output(x):
    """nonlin='tanh', activate_output=True: tanh on every layer, the last one included,
    so the output lies in (-1, 1)."""
    model = MLP(2, [8, 8, 1], nonlin="tanh", activate_output=True, rng=11)
    assert all(n.activation == "tanh" for layer in model.layers for n in layer.neurons)
    assert repr(model.layers[-1]) == "Layer of [TanhNeuron(8)]"
    out = assert_matches_torch(model, x)
    assert -1.0 < out.data < 1.0
    assert out._op == "tanh"


def test_tanh_hidden_layers_linear_output_by_default():
    model = MLP(2, [8, 1], nonlin="tanh", rng=11)
    assert repr(model.layers[-1]) == "Layer of [LinearNeuron(8)]"
    assert_matches_torch(model, [1.5, -2.5])


def test_sigmoid_network_matches_torch():
    model = MLP(3, [5, 1], nonlin="sigmoid", activate_output=True, rng=2)
    out = assert_matches_torch(model, [0.2, -0.4, 1.1])
    assert 0.0 < out.data < 1.0


# ---------------------------------------------------------------------------------------
# Neurons: inputs
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("inputs", [[1.0], [1.0, 2.0, 3.0], []], ids=["1", "3", "0"])
def test_neuron_rejects_a_wrong_number_of_inputs(inputs):
    with pytest.raises(ValueError, match=rf"Neuron: expected 2 inputs, got {len(inputs)}"):
        Neuron(2, rng=0)(inputs)


def test_single_input_neuron_takes_a_scalar():
    n = Neuron(1, nonlin=False, rng=4)
    x = Value(2.5)
    y = n(x)
    y.backward()
    assert y.data == n.b.data + n.w[0].data * 2.5
    assert x.grad == n.w[0].data and n.w[0].grad == 2.5 and n.b.grad == 1.0
    assert n(2.5).data == y.data  # a plain number works too


def test_single_input_network_takes_a_scalar():
    model = MLP(1, [3, 1], rng=6)
    assert model(0.75).data == model([0.75]).data == model([Value(0.75)]).data


def test_relu_neuron_outputs_zero_for_negative_sums():
    n = Neuron(2, rng=0)
    n.w[0].data, n.w[1].data = 1.0, 1.0
    assert n([-1.0, -2.0]).data == 0.0
    assert n([1.0, 2.0]).data == 3.0


# ---------------------------------------------------------------------------------------
# Karpathy's lecture: calling _backward() by hand, and adding an operation with a closure
# ---------------------------------------------------------------------------------------

def test_backpropagating_by_hand_with_underscore_backward():
    """The lecture sets o.grad = 1 and calls each node's _backward() in reverse order."""
    from chainrule.micrograd.engine import Value
    x1, x2, w1, w2, b = Value(2.0), Value(0.0), Value(-3.0), Value(1.0), Value(6.8813735870195432)
    x1w1, x2w2 = x1 * w1, x2 * w2
    s = x1w1 + x2w2
    n = s + b
    o = n.tanh()
    o.grad = 1.0
    for node in (o, n, s, x1w1, x2w2):
        node._backward()
    t = torch.tensor([2.0, 0.0, -3.0, 1.0, 6.8813735870195432], dtype=torch.float64,
                     requires_grad=True)
    torch.tanh(t[0] * t[2] + t[1] * t[3] + t[4]).backward()
    ours = [x1.grad, x2.grad, w1.grad, w2.grad, b.grad]
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_an_operation_added_micrograd_style_with_a_closure():
    """micrograd code defines new operations by assigning out._backward; that still works."""
    from chainrule.micrograd.engine import Value

    def cube(self):
        out = Value(self.data ** 3, (self,), "cube")

        def _backward():
            self.grad += 3 * self.data ** 2 * out.grad
        out._backward = _backward
        return out

    x = Value(1.5)
    y = cube(x * 2.0) + x
    y.backward()
    assert x.grad == pytest.approx(3 * (2 * 1.5) ** 2 * 2 + 1, rel=1e-15)
    with pytest.raises(TypeError, match="hand-written _backward closure"):
        cube(Value(1.0)).backward(create_graph=True)


def test_a_scalar_mlp_describes_how_to_rebuild_it():
    """architecture() is what a checkpoint stores; rebuilding from it gives the same shape."""
    model = MLP(3, [4, 4, 2], nonlin="tanh", rng=0)
    arch = model.architecture()
    assert arch == {"type": "ScalarMLP", "nin": 3, "nouts": [4, 4, 2], "nonlin": "tanh",
                    "activate_output": False}
    again = MLP(arch["nin"], arch["nouts"], nonlin=arch["nonlin"],
                activate_output=arch["activate_output"])
    assert repr(again) == repr(model)
    assert len(again.parameters()) == len(model.parameters())
