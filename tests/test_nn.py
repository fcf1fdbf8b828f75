"""Neural-network layers, ``chainrule.nn``: Module, Linear, Sequential, MLP, Dropout,
the activations and the loss modules.

Every gradient is compared with PyTorch in float64 (or with an exact hand-computed
value), never with chainrule itself. The groups:

1. Linear: output and gradients against ``torch.nn.functional.linear``; shapes; bias;
   initialisation (He, Xavier) and seeds; errors; dtype;
2. Sequential and the tensor MLP: structure, names, parameter counts, errors, and the
   forward/backward pass against an equivalent PyTorch model with copied weights;
   ``nn.MLP(nin, nouts)`` giving micrograd's scalar MLP;
3. activation modules and Flatten against PyTorch;
4. Module: parameters and their order, zero_grad, train()/eval();
5. Dropout;
6. state_dict / load_state_dict (tensor and scalar models);
7. repr, the tree of modules;
8. the losses as modules, against the functional ones and PyTorch;
9. end to end: plain gradient descent fits a small data set.
"""

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule.rules import fused
from chainrule import nn
from chainrule.nn import scalar
from chainrule.scalar.value import Value

ACTIVATION_NAMES = ["relu", "tanh", "sigmoid", "gelu"]


# ---------------------------------------------------------------------------------------
# Helpers (local to this file)
# ---------------------------------------------------------------------------------------

def torch_leaf(array):
    """A float64 PyTorch leaf that records gradients: the reference for one tensor."""
    return torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, cr.Tensor):
        return x.data
    return np.asarray(x)


def assert_rel(actual, expected, tol=1e-12, what="value"):
    """Same shape, and max|actual - expected| <= tol * max|expected| (a relative error
    measured against the array's scale, so entries near 0 do not need bit equality)."""
    actual, expected = to_numpy(actual), to_numpy(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = max(np.max(np.abs(expected), initial=0.0), 1e-300)
    err = np.max(np.abs(actual - expected), initial=0.0) / scale
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.0e}"


def torch_twin(model):
    """A float64 PyTorch Sequential computing the same function as a chainrule
    Sequential/MLP: each Linear's weight copied as it is (both keep (out, in))."""
    layers = []
    for layer in model.layers:
        if isinstance(layer, nn.Linear):
            t = torch.nn.Linear(layer.in_features, layer.out_features,
                                bias=layer.bias is not None, dtype=torch.float64)
            with torch.no_grad():
                t.weight.copy_(torch.from_numpy(layer.weight.data.copy()))
                if layer.bias is not None:
                    t.bias.copy_(torch.from_numpy(layer.bias.data.copy()))
            layers.append(t)
        elif isinstance(layer, nn.ReLU):
            layers.append(torch.nn.ReLU())
        elif isinstance(layer, nn.Tanh):
            layers.append(torch.nn.Tanh())
        elif isinstance(layer, nn.Sigmoid):
            layers.append(torch.nn.Sigmoid())
        elif isinstance(layer, nn.GELU):
            layers.append(torch.nn.GELU(approximate=layer.approximate))
        else:
            raise TypeError(f"no PyTorch twin for {type(layer).__name__}")
    return torch.nn.Sequential(*layers)


def randomize_biases(model, seed=0):
    """Biases start at 0; give them values so that tests of the output see them."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.data = rng.normal(0, 0.1, layer.bias.shape)


# =======================================================================================
# 1. Linear
# =======================================================================================

class TestLinear:
    """``Linear(in, out)`` keeps weight as (out, in) and computes ``x @ W.T + b``: the
    same layout and function as PyTorch's ``F.linear(x, W, b)``."""

    @pytest.mark.parametrize("x_shape", [(5, 4), (4,), (2, 5, 4)],
                             ids=["batch", "single-vector", "3d-batch"])
    def test_output_and_gradients_match_torch(self, x_shape):
        rng = np.random.default_rng(1)
        layer = nn.Linear(4, 3, rng=0)
        layer.bias.data = rng.normal(size=3)
        x_np = rng.normal(size=x_shape)
        g = rng.normal(size=x_shape[:-1] + (3,))   # an arbitrary upstream gradient

        x = cr.tensor(x_np, requires_grad=True)
        y = layer(x)
        (y * g).sum().backward()

        w_t, b_t, x_t = torch_leaf(layer.weight.data), torch_leaf(layer.bias.data), torch_leaf(x_np)
        y_t = TF.linear(x_t, w_t, b_t)
        (y_t * torch.from_numpy(g)).sum().backward()

        assert y.shape == x_shape[:-1] + (3,)
        assert_rel(y, y_t, what="output")
        assert_rel(layer.weight.grad, w_t.grad, what="weight grad")
        assert_rel(layer.bias.grad, b_t.grad, what="bias grad")
        assert_rel(x.grad, x_t.grad, what="input grad")

    def test_parameter_shapes_and_zero_bias(self):
        layer = nn.Linear(7, 3, rng=0)
        assert isinstance(layer.weight, nn.Parameter) and isinstance(layer.bias, nn.Parameter)
        assert layer.weight.shape == (3, 7)          # (out, in), as PyTorch's
        assert layer.bias.shape == (3,)
        assert layer.weight.requires_grad and layer.bias.requires_grad
        assert np.array_equal(layer.bias.data, np.zeros(3))
        assert (layer.in_features, layer.out_features) == (7, 3)

    def test_no_bias(self):
        rng = np.random.default_rng(2)
        layer = nn.Linear(4, 3, bias=False, rng=0)
        assert layer.bias is None
        assert [name for name, _ in layer.named_parameters()] == ["weight"]
        params = layer.parameters()
        assert len(params) == 1 and params[0] is layer.weight

        x_np, g = rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
        x = cr.tensor(x_np, requires_grad=True)
        y = layer(x)
        (y * g).sum().backward()
        w_t, x_t = torch_leaf(layer.weight.data), torch_leaf(x_np)
        y_t = TF.linear(x_t, w_t)
        (y_t * torch.from_numpy(g)).sum().backward()
        assert_rel(y, y_t, what="output")
        assert_rel(layer.weight.grad, w_t.grad, what="weight grad")
        assert_rel(x.grad, x_t.grad, what="input grad")

    def test_he_init_is_normal_with_std_sqrt_2_over_in(self):
        """He (the default): N(0, 2/in). One million draws pin the std within 1%."""
        fan_in = 1000
        w = nn.Linear(fan_in, 1000, rng=0).weight.data
        std = np.sqrt(2 / fan_in)
        assert abs(w.mean()) < 5e-4                     # std of the mean is 4.5e-5
        assert abs(w.std() / std - 1) < 0.01
        # normal, not uniform: ~68.27% within one std, and some beyond 4 std
        assert abs(np.mean(np.abs(w) < std) - 0.6827) < 0.005
        assert np.max(np.abs(w)) > 4 * std

    def test_xavier_init_is_uniform_within_bounds(self):
        """Xavier: U(-a, a), a = sqrt(6 / (in + out))."""
        fan_in, fan_out = 1000, 500
        w = nn.Linear(fan_in, fan_out, init="xavier", rng=0).weight.data
        a = np.sqrt(6 / (fan_in + fan_out))
        assert np.all(np.abs(w) <= a)
        assert np.max(w) > 0.999 * a and np.min(w) < -0.999 * a   # fills the interval
        assert abs(w.mean()) < 5e-4
        assert abs(w.std() / (a / np.sqrt(3)) - 1) < 0.01
        assert abs(np.mean(np.abs(w)) / (a / 2) - 1) < 0.01      # flat: E|w| = a/2

    def test_same_seed_same_weights_and_generator_accepted(self):
        a = nn.Linear(5, 3, rng=42)
        b = nn.Linear(5, 3, rng=42)
        c = nn.Linear(5, 3, rng=np.random.default_rng(42))
        d = nn.Linear(5, 3, rng=43)
        assert np.array_equal(a.weight.data, b.weight.data)
        assert np.array_equal(a.weight.data, c.weight.data)
        assert not np.array_equal(a.weight.data, d.weight.data)

    def test_shared_generator_advances(self):
        """Two layers drawn from one Generator differ, and the pair is reproducible."""
        def pair():
            gen = np.random.default_rng(5)
            return nn.Linear(4, 4, rng=gen), nn.Linear(4, 4, rng=gen)
        (a1, a2), (b1, b2) = pair(), pair()
        assert not np.array_equal(a1.weight.data, a2.weight.data)
        assert np.array_equal(a1.weight.data, b1.weight.data)
        assert np.array_equal(a2.weight.data, b2.weight.data)

    def test_wrong_input_width_names_in_features(self):
        layer = nn.Linear(3, 2, rng=0)
        with pytest.raises(ValueError, match=r"in_features = 3") as info:
            layer(cr.ones(4, 5))
        assert "(4, 5)" in str(info.value)

    @pytest.mark.parametrize("args, word", [((0, 3), "in_features"),
                                            ((3, -1), "out_features"),
                                            ((2.0, 3), "in_features")])
    def test_bad_sizes_rejected(self, args, word):
        with pytest.raises(ValueError, match=word):
            nn.Linear(*args)

    def test_bad_init_and_rng_rejected(self):
        with pytest.raises(ValueError, match="init"):
            nn.Linear(3, 2, init="kaiming-uniform")
        with pytest.raises(TypeError, match="rng"):
            nn.Linear(3, 2, rng="seed")

    def test_float32_kept(self):
        layer = nn.Linear(4, 3, rng=0, dtype=np.float32)
        assert layer.weight.dtype == np.float32 and layer.bias.dtype == np.float32
        x_np = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
        y = layer(cr.tensor(x_np))
        assert y.dtype == np.float32
        y.sum().backward()
        assert layer.weight.grad.dtype == np.float32
        assert layer.bias.grad.dtype == np.float32
        expected = x_np.astype(np.float64) @ layer.weight.data.astype(np.float64).T
        np.testing.assert_allclose(y.data, expected, rtol=1e-5, atol=1e-6)


# =======================================================================================
# 2. Sequential and the tensor MLP
# =======================================================================================

class TestSequential:
    """``Sequential(a, b, c)`` applies its modules in order; ``layers.i.*`` names."""

    def test_forward_is_the_composition(self):
        l1, l2 = nn.Linear(3, 5, rng=0), nn.Linear(5, 2, rng=1)
        model = nn.Sequential(l1, nn.Tanh(), l2)
        x = cr.tensor(np.random.default_rng(0).normal(size=(4, 3)))
        expected = np.tanh(x.data @ l1.weight.data.T + l1.bias.data) @ l2.weight.data.T \
            + l2.bias.data
        assert_rel(model(x), expected)

    def test_indexing_and_len(self):
        l1, act, l2 = nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2)
        model = nn.Sequential(l1, act, l2)
        assert len(model) == 3
        assert model[0] is l1 and model[1] is act and model[2] is l2
        assert model[-1] is l2

    def test_names(self):
        model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2, bias=False))
        assert [n for n, _ in model.named_parameters()] == [
            "layers.0.weight", "layers.0.bias", "layers.2.weight"]

    def test_rejects_non_modules(self):
        with pytest.raises(TypeError, match="Sequential"):
            nn.Sequential(nn.Linear(2, 2), lambda x: x)


class TestMLPStructure:
    """``MLP([784, 128, 10])``: Linear, activation, Linear; no activation at the end."""

    def test_layers_types_and_order(self):
        model = nn.MLP([784, 128, 10])
        assert isinstance(model, nn.Sequential) and isinstance(model, nn.Module)
        assert [type(m) for m in model.layers] == [nn.Linear, nn.ReLU, nn.Linear]
        assert (model[0].in_features, model[0].out_features) == (784, 128)
        assert (model[2].in_features, model[2].out_features) == (128, 10)

    def test_deeper_with_dropout(self):
        model = nn.MLP([4, 8, 8, 2], activation="tanh", dropout=0.25)
        assert [type(m) for m in model.layers] == [
            nn.Linear, nn.Tanh, nn.Dropout, nn.Linear, nn.Tanh, nn.Dropout, nn.Linear]
        assert all(m.p == 0.25 for m in model.layers if isinstance(m, nn.Dropout))

    def test_parameter_count_and_names(self):
        model = nn.MLP([784, 128, 10])
        assert sum(p.size for p in model.parameters()) == 784 * 128 + 128 + 128 * 10 + 10
        assert sum(p.size for p in model.parameters()) == 101_770
        named = list(model.named_parameters())
        assert [n for n, _ in named] == ["layers.0.weight", "layers.0.bias",
                                         "layers.2.weight", "layers.2.bias"]
        assert [p.shape for _, p in named] == [(128, 784), (128,), (10, 128), (10,)]
        assert named[0][1] is model[0].weight and named[3][1] is model[2].bias

    @pytest.mark.parametrize("activation, cls, init", [
        ("relu", nn.ReLU, "he"), ("gelu", nn.GELU, "he"),
        ("tanh", nn.Tanh, "xavier"), ("sigmoid", nn.Sigmoid, "xavier")])
    def test_activation_and_its_default_init(self, activation, cls, init):
        """ReLU/GELU networks start with He weights, tanh/sigmoid ones with Xavier."""
        model = nn.MLP([1000, 500, 3], activation=activation, rng=0)
        assert isinstance(model[1], cls)
        w = model[0].weight.data
        a = np.sqrt(6 / 1500)
        if init == "he":
            assert abs(w.std() / np.sqrt(2 / 1000) - 1) < 0.01
            assert np.max(np.abs(w)) > a       # a normal spills past the Xavier bound
        else:
            assert np.all(np.abs(w) <= a)
            assert abs(w.std() / (a / np.sqrt(3)) - 1) < 0.01

    def test_init_override(self):
        model = nn.MLP([1000, 500, 3], activation="relu", init="xavier", rng=0)
        assert np.all(np.abs(model[0].weight.data) <= np.sqrt(6 / 1500))

    def test_seeded_and_generator(self):
        a = nn.MLP([6, 5, 2], rng=3)
        b = nn.MLP([6, 5, 2], rng=np.random.default_rng(3))
        c = nn.MLP([6, 5, 2], rng=4)
        for pa, pb in zip(a.parameters(), b.parameters()):
            assert np.array_equal(pa.data, pb.data)
        assert not np.array_equal(a[0].weight.data, c[0].weight.data)
        # the layers draw from one stream: the two weight matrices are not the same draws
        assert not np.array_equal(a[0].weight.data[:5, :2], a[2].weight.data)

    def test_float32(self):
        model = nn.MLP([4, 3, 2], dtype=np.float32, rng=0)
        assert all(p.dtype == np.float32 for p in model.parameters())
        assert model(cr.tensor(np.ones((2, 4), np.float32))).dtype == np.float32

    @pytest.mark.parametrize("sizes", [[784], [], [784, 0, 10], [784, -3],
                                       [784, 12.5, 10]])
    def test_invalid_sizes(self, sizes):
        with pytest.raises(ValueError, match="sizes"):
            nn.MLP(sizes)

    def test_invalid_activation(self):
        with pytest.raises(ValueError, match="activation") as info:
            nn.MLP([4, 3, 2], activation="softmax")
        assert "relu" in str(info.value) and "'softmax'" in str(info.value)

    def test_architecture(self):
        assert nn.MLP([784, 128, 10]).architecture() == {
            "type": "MLP", "sizes": [784, 128, 10], "activation": "relu", "dropout": 0.0}
        assert nn.MLP((3, 4, 4, 1), activation="tanh", dropout=0.1).architecture() == {
            "type": "MLP", "sizes": [3, 4, 4, 1], "activation": "tanh", "dropout": 0.1}

    def test_architecture_rebuilds_the_same_shape(self):
        model = nn.MLP([5, 7, 3], activation="gelu", dropout=0.2)
        arch = model.architecture()
        twin = nn.MLP(arch["sizes"], activation=arch["activation"], dropout=arch["dropout"])
        assert [type(m) for m in twin.layers] == [type(m) for m in model.layers]
        assert [p.shape for p in twin.parameters()] == [p.shape for p in model.parameters()]

    def test_deepcopy_stays_a_tensor_mlp(self):
        model = nn.MLP([3, 4, 2], rng=0)
        twin = copy.deepcopy(model)
        assert type(twin) is nn.MLP
        x = cr.ones(2, 3)
        assert np.array_equal(twin(x).data, model(x).data)
        assert twin[0].weight is not model[0].weight


class TestMLPAgainstTorch:
    """A chainrule MLP and a PyTorch model with copied weights compute the same output
    and the same gradients for every parameter and for the input (relative 1e-12)."""

    @pytest.mark.parametrize("activation", ACTIVATION_NAMES)
    def test_forward_and_all_gradients(self, activation):
        rng = np.random.default_rng(0)
        model = nn.MLP([784, 128, 10], activation=activation, rng=0)
        randomize_biases(model)
        twin = torch_twin(model)
        x_np = rng.normal(size=(8, 784))
        labels = rng.integers(0, 10, size=8)

        x = cr.tensor(x_np, requires_grad=True)
        out = model(x)
        nn.CrossEntropyLoss()(out, labels).backward()

        x_t = torch_leaf(x_np)
        out_t = twin(x_t)
        TF.cross_entropy(out_t, torch.from_numpy(labels)).backward()

        assert_rel(out, out_t, what="output")
        assert_rel(x.grad, x_t.grad, what="input grad")
        linears = [m for m in model.layers if isinstance(m, nn.Linear)]
        torch_linears = [m for m in twin if isinstance(m, torch.nn.Linear)]
        for i, (mine, ref) in enumerate(zip(linears, torch_linears)):
            assert_rel(mine.weight.grad, ref.weight.grad, what=f"weight {i} grad")
            assert_rel(mine.bias.grad, ref.bias.grad, what=f"bias {i} grad")

    def test_deeper_tanh_with_vector_gradient(self):
        """Three hidden layers, and an arbitrary upstream gradient instead of a loss."""
        rng = np.random.default_rng(1)
        model = nn.MLP([6, 16, 16, 16, 4], activation="tanh", rng=1)
        randomize_biases(model, seed=1)
        twin = torch_twin(model)
        x_np, g = rng.normal(size=(5, 6)), rng.normal(size=(5, 4))
        out = model(cr.tensor(x_np))
        (out * g).sum().backward()
        out_t = twin(torch.from_numpy(x_np))
        (out_t * torch.from_numpy(g)).sum().backward()
        assert_rel(out, out_t, what="output")
        for mine, ref in zip([m for m in model.layers if isinstance(m, nn.Linear)],
                             [m for m in twin if isinstance(m, torch.nn.Linear)]):
            assert_rel(mine.weight.grad, ref.weight.grad, what="weight grad")
            assert_rel(mine.bias.grad, ref.bias.grad, what="bias grad")


class TestScalarMLPDispatch:
    """``nn.MLP(nin, nouts)`` (an int first, micrograd's signature) builds micrograd's
    scalar MLP of Values; ``nn.MLP([sizes])`` the tensor one."""

    def test_micrograd_signature_gives_scalar_mlp(self):
        model = nn.MLP(2, [16, 16, 1])
        assert isinstance(model, scalar.MLP)
        assert isinstance(model, nn.Module)
        assert not isinstance(model, nn.MLP)
        params = model.parameters()
        assert len(params) == 337 == (2 * 16 + 16) + (16 * 16 + 16) + (16 + 1)
        assert all(isinstance(p, Value) for p in params)
        assert isinstance(model([1.0, -0.5]), Value)

    def test_scalar_seeded(self):
        a, b = nn.MLP(2, [4, 1], rng=7), nn.MLP(2, [4, 1], rng=7)
        assert [p.data for p in a.parameters()] == [p.data for p in b.parameters()]

    def test_micrograd_signature_by_keyword(self):
        model = nn.MLP(nin=2, nouts=[16, 16, 1])
        assert isinstance(model, scalar.MLP) and len(model.parameters()) == 337


# =======================================================================================
# 3. Activation modules and Flatten
# =======================================================================================

class TestActivationsAndFlatten:
    """The activation modules compute PyTorch's functions and derivatives."""

    @pytest.mark.parametrize("module, ref", [
        (nn.ReLU(), torch.relu), (nn.Tanh(), torch.tanh), (nn.Sigmoid(), torch.sigmoid),
        (nn.GELU(), lambda t: TF.gelu(t)),
        (nn.GELU(approximate="tanh"), lambda t: TF.gelu(t, approximate="tanh"))],
        ids=["relu", "tanh", "sigmoid", "gelu", "gelu-tanh"])
    def test_values_and_gradients(self, module, ref):
        rng = np.random.default_rng(3)
        x_np, g = rng.normal(size=(4, 6)) * 3, rng.normal(size=(4, 6))
        x = cr.tensor(x_np, requires_grad=True)
        (module(x) * g).sum().backward()
        x_t = torch_leaf(x_np)
        y_t = ref(x_t)
        (y_t * torch.from_numpy(g)).sum().backward()
        assert_rel(module(cr.tensor(x_np)), y_t, what="value")
        assert_rel(x.grad, x_t.grad, what="grad")
        assert module.parameters() == []

    def test_flatten(self):
        x_np = np.arange(24.0).reshape(2, 3, 4)
        x = cr.tensor(x_np, requires_grad=True)
        y = nn.Flatten()(x)
        assert y.shape == (2, 12)
        assert np.array_equal(y.data, x_np.reshape(2, 12))
        g = np.random.default_rng(0).normal(size=(2, 12))
        (y * g).sum().backward()
        assert np.array_equal(x.grad, g.reshape(2, 3, 4))
        assert nn.Flatten(start_dim=0)(x).shape == (24,)

    def test_flatten_then_linear(self):
        model = nn.Sequential(nn.Flatten(), nn.Linear(12, 2, rng=0))
        assert model(cr.ones(5, 3, 4)).shape == (5, 2)


# =======================================================================================
# 4. Module: parameters, zero_grad, train/eval
# =======================================================================================

class Net(nn.Module):
    """A hand-written model: a Parameter, a Sequential, a list of heads, and attributes
    that are not parameters (a string, a plain Tensor that requires grad)."""

    def __init__(self):
        self.scale = nn.Parameter(np.ones(3))
        self.body = nn.Sequential(nn.Linear(3, 4, rng=0), nn.ReLU(), nn.Dropout(0.5, rng=0))
        self.note = "not a parameter"
        self.plain = cr.ones(2, requires_grad=True)
        self.heads = [nn.Linear(4, 2, rng=1), nn.Linear(4, 1, bias=False, rng=2)]

    def forward(self, x):
        h = self.body(x * self.scale)
        return [head(h) for head in self.heads]


class TestModule:
    """Parameters are found by walking attributes in the order they were set."""

    def test_named_parameters_walk_attributes_in_order(self):
        net = Net()
        named = list(net.named_parameters())
        assert [n for n, _ in named] == ["scale", "body.layers.0.weight",
                                         "body.layers.0.bias", "heads.0.weight",
                                         "heads.0.bias", "heads.1.weight"]
        expected = [net.scale, net.body[0].weight, net.body[0].bias,
                    net.heads[0].weight, net.heads[0].bias, net.heads[1].weight]
        assert all(a is b for (_, a), b in zip(named, expected))
        assert len(net.parameters()) == 6
        assert all(a is b for a, b in zip(net.parameters(), expected))

    def test_parameter_is_a_tensor_requiring_grad(self):
        p = nn.Parameter([1, 2, 3])
        assert isinstance(p, cr.Tensor) and p.requires_grad and p.dtype == np.float64
        assert nn.Parameter(np.zeros(2), dtype=np.float32).dtype == np.float32

    def test_forward_missing_is_a_clear_error(self):
        class Empty(nn.Module):
            pass
        with pytest.raises(TypeError, match="Empty defines no forward"):
            Empty()(cr.ones(2))

    def test_zero_grad_tensor_grads_become_none(self):
        net = Net().eval()
        outs = net(cr.ones(5, 3))
        (outs[0].sum() + outs[1].sum()).backward()
        assert all(p.grad is not None for p in net.parameters())
        net.zero_grad()
        assert all(p.grad is None for p in net.parameters())

    def test_zero_grad_scalar_values_become_zero(self):
        model = nn.MLP(2, [4, 1], rng=0)
        out = model([1.0, -2.0])
        (out * out).backward()
        assert any(p.grad != 0 for p in model.parameters())
        model.zero_grad()
        assert all(p.grad == 0.0 and isinstance(p.grad, float) for p in model.parameters())

    def test_gradients_accumulate_until_zero_grad(self):
        layer = nn.Linear(2, 1, rng=0)
        x = cr.tensor([[1.0, 2.0]])
        layer(x).sum().backward()
        layer(x).sum().backward()
        assert np.array_equal(layer.weight.grad, [[2.0, 4.0]])
        layer.zero_grad()
        layer(x).sum().backward()
        assert np.array_equal(layer.weight.grad, [[1.0, 2.0]])

    def test_train_eval_propagate_to_all_children(self):
        net = Net()
        modules = [net, net.body, *net.body.layers, *net.heads]
        assert all(m.training for m in modules)
        assert net.eval() is net
        assert not any(m.training for m in modules)
        assert net.train() is net
        assert all(m.training for m in modules)
        net.train(False)
        assert not any(m.training for m in modules)

    def test_train_eval_reach_scalar_neurons(self):
        model = nn.MLP(2, [3, 1])
        model.eval()
        neurons = [n for layer in model.layers for n in layer.neurons]
        assert not model.training and not any(layer.training for layer in model.layers)
        assert not any(n.training for n in neurons)
        model.train()
        assert all(n.training for n in neurons)

    def test_scalar_named_parameters_match_parameters(self):
        model = nn.MLP(2, [3, 1], rng=0)
        names = [n for n, _ in model.named_parameters()]
        assert names[:3] == ["layers.0.neurons.0.w.0", "layers.0.neurons.0.w.1",
                             "layers.0.neurons.0.b"]
        assert names[-1] == "layers.1.neurons.0.b"
        assert len(names) == len(set(names)) == 13
        assert all(a is b for (_, a), b in zip(model.named_parameters(), model.parameters()))


# =======================================================================================
# 5. Dropout
# =======================================================================================

class TestDropout:
    """In training, zero each entry with probability p and scale the rest by 1/(1-p);
    in eval mode, the identity."""

    def test_eval_is_identity(self):
        d = nn.Dropout(0.5, rng=0).eval()
        x_np = np.random.default_rng(0).normal(size=(10, 10))
        x = cr.tensor(x_np, requires_grad=True)
        y = d(x)
        assert np.array_equal(y.data, x_np)
        y.sum().backward()
        assert np.array_equal(x.grad, np.ones((10, 10)))

    @pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.8])
    def test_train_drops_about_p_and_scales_the_rest(self, p):
        rng = np.random.default_rng(1)
        x_np = rng.uniform(0.5, 1.5, size=(400, 250))         # no zeros of its own
        d = nn.Dropout(p, rng=0)
        x = cr.tensor(x_np, requires_grad=True)
        y = d(x)
        kept = y.data != 0
        # 100,000 entries: the dropped fraction has std <= 0.0016
        assert abs(np.mean(~kept) - p) < 0.01
        scale = 1 / (1 - p)
        assert np.array_equal(y.data[kept], x_np[kept] * scale)
        # the mean is preserved (std of the mean <= 0.006 for p = 0.8)
        assert abs(y.data.mean() / x_np.mean() - 1) < 0.03
        # the gradient flows through the kept entries only, exactly 1/(1-p)
        y.sum().backward()
        assert np.all(x.grad[kept] == scale)
        assert np.all(x.grad[~kept] == 0)

    def test_p_zero_is_identity_in_training(self):
        x = cr.tensor(np.arange(6.0))
        assert np.array_equal(nn.Dropout(0.0)(x).data, x.data)

    @pytest.mark.parametrize("p", [-0.1, 1, 1.0, 1.5, float("nan")])
    def test_p_outside_0_1_rejected(self, p):
        with pytest.raises(ValueError, match="p must be in"):
            nn.Dropout(p)

    def test_seeded_masks_reproducible(self):
        x = cr.ones(20, 30)
        a, b = nn.Dropout(0.5, rng=7), nn.Dropout(0.5, rng=7)
        c = nn.Dropout(0.5, rng=np.random.default_rng(7))
        first = a(x).data
        assert np.array_equal(first, b(x).data)
        assert np.array_equal(first, c(x).data)
        assert not np.array_equal(first, a(x).data)          # a fresh mask per call
        assert not np.array_equal(first, nn.Dropout(0.5, rng=8)(x).data)

    def test_float32_kept(self):
        x = cr.tensor(np.ones((4, 4), np.float32), requires_grad=True)
        y = nn.Dropout(0.25, rng=0)(x)
        assert y.dtype == np.float32
        y.sum().backward()
        assert x.grad.dtype == np.float32

    def test_in_mlp_eval_is_deterministic_train_is_not(self):
        model = nn.MLP([4, 32, 32, 2], dropout=0.5, rng=0)
        x = cr.tensor(np.random.default_rng(0).normal(size=(8, 4)))
        model.eval()
        lin = [m for m in model.layers if isinstance(m, nn.Linear)]
        h = x.data
        for i, layer in enumerate(lin):
            h = h @ layer.weight.data.T + layer.bias.data
            if i < len(lin) - 1:
                h = np.maximum(h, 0)
        assert_rel(model(x), h)
        assert np.array_equal(model(x).data, model(x).data)
        model.train()
        assert not np.array_equal(model(x).data, model(x).data)


# =======================================================================================
# 6. state_dict / load_state_dict
# =======================================================================================

class TestStateDict:
    """``state_dict()``: name -> a copy of the numbers; ``load_state_dict()`` copies them
    back in, and refuses any mismatch of names or shapes, naming what is wrong."""

    def test_names_and_values(self):
        model = nn.MLP([5, 4, 3], rng=0)
        state = model.state_dict()
        assert list(state) == [n for n, _ in model.named_parameters()]
        for name, p in model.named_parameters():
            assert isinstance(state[name], np.ndarray)
            assert np.array_equal(state[name], p.data)

    def test_returns_copies_not_views(self):
        model = nn.MLP([5, 4, 3], rng=0)
        before = model[0].weight.data.copy()
        state = model.state_dict()
        assert not np.shares_memory(state["layers.0.weight"], model[0].weight.data)
        state["layers.0.weight"][...] = 123.0
        state["layers.0.bias"] += 1
        assert np.array_equal(model[0].weight.data, before)
        assert np.array_equal(model[0].bias.data, np.zeros(4))

    def test_round_trip_into_fresh_model(self):
        source = nn.MLP([6, 8, 3], activation="tanh", rng=0)
        randomize_biases(source)
        target = nn.MLP([6, 8, 3], activation="tanh", rng=1)
        x = cr.tensor(np.random.default_rng(0).normal(size=(4, 6)))
        assert not np.array_equal(source(x).data, target(x).data)
        params_before = target.parameters()
        assert target.load_state_dict(source.state_dict()) == ([], [])  # as PyTorch
        assert np.array_equal(source(x).data, target(x).data)
        # the same Parameter objects (an optimizer holding them keeps working)
        assert all(a is b for a, b in zip(params_before, target.parameters()))

    def test_loaded_numbers_are_copies(self):
        source, target = nn.MLP([3, 2], rng=0), nn.MLP([3, 2], rng=1)
        state = source.state_dict()
        target.load_state_dict(state)
        state["layers.0.weight"][...] = 0.0
        assert np.array_equal(target[0].weight.data, source[0].weight.data)
        assert not np.shares_memory(target[0].weight.data, source[0].weight.data)

    def test_accepts_tensors_and_casts_to_model_dtype(self):
        source = nn.MLP([3, 2], rng=0)
        target = nn.MLP([3, 2], rng=1, dtype=np.float32)
        target.load_state_dict(dict(source.named_parameters()))   # Parameters as values
        assert target[0].weight.dtype == np.float32
        np.testing.assert_array_equal(target[0].weight.data,
                                      source[0].weight.data.astype(np.float32))

    def test_shape_mismatch_names_parameter_and_both_shapes(self):
        model = nn.MLP([784, 128, 10], rng=0)
        state = model.state_dict()
        state["layers.0.weight"] = np.zeros((784, 128))
        with pytest.raises(ValueError) as info:
            model.load_state_dict(state)
        message = str(info.value)
        assert "'layers.0.weight'" in message
        assert "(784, 128)" in message and "(128, 784)" in message

    def test_missing_and_unexpected_names_listed(self):
        model = nn.MLP([4, 3, 2], rng=0)
        before = [p.data.copy() for p in model.parameters()]
        state = nn.MLP([4, 3, 2], rng=1).state_dict()
        del state["layers.2.bias"]
        with pytest.raises(ValueError, match="missing") as info:
            model.load_state_dict(state)
        assert "layers.2.bias" in str(info.value)

        state = nn.MLP([4, 3, 2], rng=1).state_dict()
        state["layers.4.weight"] = np.zeros((2, 2))
        with pytest.raises(ValueError, match="unexpected") as info:
            model.load_state_dict(state)
        assert "layers.4.weight" in str(info.value)

        state = nn.MLP([4, 3, 2], rng=1).state_dict()
        state["head.weight"] = state.pop("layers.0.weight")
        with pytest.raises(ValueError) as info:
            model.load_state_dict(state)
        assert "layers.0.weight" in str(info.value) and "head.weight" in str(info.value)
        # a refused load changes nothing
        assert all(np.array_equal(p.data, b) for p, b in zip(model.parameters(), before))

    def test_scalar_mlp_names_and_values(self):
        model = nn.MLP(2, [3, 1], rng=0)
        state = model.state_dict()
        expected_names = [f"layers.0.neurons.{j}.{k}" for j in range(3)
                          for k in ("w.0", "w.1", "b")] + \
            [f"layers.1.neurons.0.{k}" for k in ("w.0", "w.1", "w.2", "b")]
        assert list(state) == expected_names
        assert [float(v) for v in state.values()] == [p.data for p in model.parameters()]
        assert all(np.shape(v) == () for v in state.values())

    def test_scalar_mlp_round_trip(self):
        source, target = nn.MLP(2, [16, 16, 1], rng=0), nn.MLP(2, [16, 16, 1], rng=1)
        x = [0.3, -1.2]
        assert source(x).data != target(x).data
        target.load_state_dict(source.state_dict())
        assert target(x).data == source(x).data
        assert all(isinstance(p.data, float) for p in target.parameters())

    def test_scalar_mlp_mismatches(self):
        model = nn.MLP(2, [3, 1], rng=0)
        state = model.state_dict()
        state["layers.0.neurons.0.b"] = np.zeros(2)
        with pytest.raises(ValueError, match=r"'layers.0.neurons.0.b'.*\(\).*\(2,\)"):
            model.load_state_dict(state)
        with pytest.raises(ValueError, match="layers.1.neurons.0.w.2"):
            nn.MLP(2, [3, 1]).load_state_dict(nn.MLP(2, [2, 1]).state_dict())


# =======================================================================================
# 7. repr
# =======================================================================================

class TestRepr:
    """``repr(model)`` draws the tree of modules, PyTorch-style."""

    def test_mlp(self):
        assert repr(nn.MLP([784, 128, 10])) == (
            "MLP(\n"
            "  (0): Linear(in_features=784, out_features=128, bias=True)\n"
            "  (1): ReLU()\n"
            "  (2): Linear(in_features=128, out_features=10, bias=True)\n"
            ")")

    def test_leaves(self):
        assert repr(nn.Linear(3, 2, bias=False)) == \
            "Linear(in_features=3, out_features=2, bias=False)"
        assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25)"
        assert repr(nn.Tanh()) == "Tanh()"

    def test_nested_tree_is_indented(self):
        model = nn.Sequential(nn.Flatten(), nn.Sequential(nn.Linear(4, 3), nn.GELU()),
                              nn.Dropout(0.1))
        assert repr(model) == (
            "Sequential(\n"
            "  (0): Flatten(start_dim=1, end_dim=-1)\n"
            "  (1): Sequential(\n"
            "    (0): Linear(in_features=4, out_features=3, bias=True)\n"
            "    (1): GELU()\n"
            "  )\n"
            "  (2): Dropout(p=0.1)\n"
            ")")

    def test_custom_module_shows_attribute_names(self):
        text = repr(Net())
        assert text.startswith("Net(\n")
        assert "  (body): Sequential(\n" in text
        assert "  (heads.0): Linear(in_features=4, out_features=2, bias=True)" in text
        assert "  (heads.1): Linear(in_features=4, out_features=1, bias=False)" in text

    def test_scalar_mlp_keeps_micrograds_repr(self):
        assert repr(nn.MLP(2, [2, 1])) == \
            "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2)], Layer of [LinearNeuron(2)]]"


# =======================================================================================
# 8. Losses as modules
# =======================================================================================

class TestLossModules:
    """``CrossEntropyLoss``, ``MSELoss`` and ``BCEWithLogitsLoss`` are the functions of
    ``nn.functional`` as modules; both agree with PyTorch (mean over the batch)."""

    def test_cross_entropy(self):
        rng = np.random.default_rng(0)
        logits_np = rng.normal(size=(6, 4)) * 3
        labels = rng.integers(0, 4, size=6)
        x = cr.tensor(logits_np, requires_grad=True)
        loss = nn.CrossEntropyLoss()(x, labels)
        loss.backward()
        assert loss.item() == nn.functional.cross_entropy(cr.tensor(logits_np), labels).item()
        x_t = torch_leaf(logits_np)
        loss_t = torch.nn.CrossEntropyLoss()(x_t, torch.from_numpy(labels))
        loss_t.backward()
        assert_rel(loss, loss_t, what="loss")
        assert_rel(x.grad, x_t.grad, what="logits grad")

    def test_cross_entropy_of_transposed_logits(self):
        """Logits that are a transposed view (Fortran order): the labels are picked
        through a flat index in C order, which must still address the right entries."""
        rng = np.random.default_rng(2)
        stored = rng.normal(size=(4, 5))            # (C, N), so stored.T is (N, C)
        labels = np.array([0, 3, 1, 2, 3])
        x = cr.tensor(stored, requires_grad=True)
        loss = nn.functional.cross_entropy(x.T, labels)
        loss.backward()
        x_t = torch_leaf(stored)
        loss_t = torch.nn.functional.cross_entropy(x_t.T, torch.from_numpy(labels))
        loss_t.backward()
        assert_rel(loss, loss_t, what="loss")
        assert_rel(x.grad, x_t.grad, what="logits grad")

    def test_cross_entropy_rejects_bad_labels(self):
        with pytest.raises(ValueError, match="labels"):
            nn.CrossEntropyLoss()(cr.zeros(3, 4), np.array([0, 1, 4]))
        with pytest.raises(ValueError, match="labels"):
            nn.CrossEntropyLoss()(cr.zeros(3, 4), np.array([0.5, 1, 2]))

    def test_mse(self):
        rng = np.random.default_rng(1)
        p_np, t_np = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
        p, t = cr.tensor(p_np, requires_grad=True), cr.tensor(t_np, requires_grad=True)
        loss = nn.MSELoss()(p, t)
        loss.backward()
        assert loss.item() == nn.functional.mse_loss(cr.tensor(p_np), cr.tensor(t_np)).item()
        p_t, t_t = torch_leaf(p_np), torch_leaf(t_np)
        loss_t = torch.nn.MSELoss()(p_t, t_t)
        loss_t.backward()
        assert_rel(loss, loss_t, what="loss")
        assert_rel(p.grad, p_t.grad, what="prediction grad")
        assert_rel(t.grad, t_t.grad, what="target grad")

    def test_bce_with_logits(self):
        rng = np.random.default_rng(2)
        x_np = rng.normal(size=(9,)) * 4
        y_np = rng.uniform(size=(9,))                 # soft targets are allowed
        x, y = cr.tensor(x_np, requires_grad=True), cr.tensor(y_np, requires_grad=True)
        loss = nn.BCEWithLogitsLoss()(x, y)
        loss.backward()
        assert loss.item() == nn.functional.binary_cross_entropy_with_logits(
            cr.tensor(x_np), cr.tensor(y_np)).item()
        x_t, y_t = torch_leaf(x_np), torch_leaf(y_np)
        loss_t = torch.nn.BCEWithLogitsLoss()(x_t, y_t)
        loss_t.backward()
        assert_rel(loss, loss_t, what="loss")
        assert_rel(x.grad, x_t.grad, what="logits grad")
        assert_rel(y.grad, y_t.grad, what="targets grad")

    def test_bce_with_large_logits_is_finite(self):
        x_np = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
        y_np = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
        x = cr.tensor(x_np, requires_grad=True)
        loss = nn.BCEWithLogitsLoss()(x, y_np)
        loss.backward()
        x_t = torch_leaf(x_np)
        loss_t = TF.binary_cross_entropy_with_logits(x_t, torch.from_numpy(y_np))
        loss_t.backward()
        assert np.isfinite(loss.item())
        assert_rel(loss, loss_t, what="loss")
        assert_rel(x.grad, x_t.grad, what="grad")

    def test_losses_have_no_parameters(self):
        for loss in (nn.CrossEntropyLoss(), nn.MSELoss(), nn.BCEWithLogitsLoss()):
            assert loss.parameters() == []
            assert loss.state_dict() == {}


# =======================================================================================
# 9. End to end
# =======================================================================================

def xor_blobs(n_per_blob=15, seed=0):
    """Four tight blobs at (+-2, +-2), labelled by the sign of x*y: separable, but not
    by a line, so the hidden layer has to do its work."""
    rng = np.random.default_rng(seed)
    centres = np.array([[2, 2], [-2, -2], [2, -2], [-2, 2]], dtype=float)
    X = np.concatenate([c + 0.4 * rng.normal(size=(n_per_blob, 2)) for c in centres])
    y = np.repeat([0, 0, 1, 1], n_per_blob)
    return X, y


def test_end_to_end_gradient_descent_reaches_full_accuracy():
    """A 2-16-2 MLP trained with plain gradient descent (updates under cr.no_grad())
    classifies every point of a small XOR data set."""
    X, y = xor_blobs()
    model = nn.MLP([2, 16, 2], rng=0)
    loss_fn = nn.CrossEntropyLoss()
    inputs = cr.tensor(X)
    losses = []
    for _ in range(200):
        model.zero_grad()
        loss = loss_fn(model(inputs), y)
        loss.backward()
        losses.append(loss.item())
        with cr.no_grad():
            for p in model.parameters():
                p.data = p.data - 0.1 * p.grad
    with cr.no_grad():
        predictions = np.argmax(model(inputs).data, axis=1)
    assert np.mean(predictions == y) == 1.0
    assert losses[-1] < 0.1 * losses[0]
    # a line cannot do it: the same loop without the hidden layer stays near chance
    linear = nn.MLP([2, 2], rng=0)
    for _ in range(200):
        linear.zero_grad()
        loss_fn(linear(inputs), y).backward()
        with cr.no_grad():
            for p in linear.parameters():
                p.data = p.data - 0.1 * p.grad
    assert np.mean(np.argmax(linear(inputs).data, axis=1) == y) < 0.8


def test_a_layer_used_twice_is_one_set_of_parameters():
    """As in PyTorch, parameters() lists a shared layer once: an optimizer steps it once."""
    shared = nn.Linear(3, 3, rng=0)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(model.parameters()) == 2
    assert [name for name, _ in model.named_parameters()] == ["layers.0.weight",
                                                             "layers.0.bias"]


def test_a_refused_load_changes_nothing():
    """Shapes are all checked before anything is copied."""
    model = nn.MLP([2, 3, 2], rng=0)
    before = model.state_dict()
    bad = dict(before, **{"layers.2.weight": np.zeros((5, 5))})
    bad["layers.0.weight"] = before["layers.0.weight"] + 1
    with pytest.raises(ValueError, match="layers.2.weight"):
        model.load_state_dict(bad)
    np.testing.assert_array_equal(model.state_dict()["layers.0.weight"],
                                  before["layers.0.weight"])


def test_functional_linear_without_bias_is_a_matmul_and_checks_its_shapes():
    x = cr.tensor([[1.0, 2.0]])
    w = cr.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 3.0]], requires_grad=True)   # (out, in)
    y = cr.nn.functional.linear(x, w)
    assert y.data.tolist() == [[1.0, 2.0, 8.0]] and y._op.name == "matmul"
    with pytest.raises(ValueError, match=r"linear: input of shape \(1, 2\) and weight of "
                                         r"shape \(2, 3\); expected \(\.\.\., in\) and \(out, in\)"):
        cr.nn.functional.linear(x, cr.tensor(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"linear: bias of shape \(2,\), expected \(3,\)"):
        cr.nn.functional.linear(x, w, cr.tensor([1.0, 2.0]))


def test_functional_linear_activations():
    x = cr.tensor([[1.0, -2.0]])
    w = cr.tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True)
    b = cr.tensor([0.5, 0.5], requires_grad=True)
    F = cr.nn.functional
    assert F.linear(x, w, b, activation="relu").data.tolist() == [[1.5, 0.0]]
    np.testing.assert_allclose(F.linear(x, w, b, activation="tanh").data, np.tanh([[1.5, -1.5]]))
    assert F.linear(x, w, b, activation="tanh")._op.name == "tanh"   # not fused: a second op
    assert F.linear(x, w, activation="relu")._op.name == "relu"      # no bias: matmul, relu
    with pytest.raises(ValueError, match=r"linear: activation must be None or one of relu, "
                                         r"tanh, sigmoid, gelu, got 'softmax'"):
        F.linear(x, w, b, activation="softmax")


@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("x_shape,b_shape", [((4, 3), (2,)), ((4, 3), ()), ((5, 4, 3), (2,)),
                                             ((3,), (2,))])
def test_functional_linear_bias_gradient_sums_every_row(x_shape, b_shape, activation):
    """The bias gradient is g summed over every axis the bias was broadcast along: the
    rows of a batch, the leading axes of a 3-D input, and all of them for a 0-d bias
    (the engine's unbroadcast sums them, as for any broadcast operand)."""
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s) for s in (x_shape, (2, 3), b_shape))   # w (out, in)
    xs, ws, bs = (cr.tensor(a, requires_grad=True) for a in (x, w, b))
    out = cr.nn.functional.linear(xs, ws, bs, activation=activation)
    weights = rng.standard_normal(out.shape)
    (out * cr.tensor(weights)).sum().backward()
    xt, wt, bt = torch_leaf(x), torch_leaf(w), torch_leaf(b)
    ref = torch.nn.functional.linear(xt, wt) + bt
    ref = torch.relu(ref) if activation == "relu" else ref
    (ref * torch.tensor(weights)).sum().backward()
    assert_rel(out, ref, what="output")
    for mine, theirs, name in ((xs, xt, "x"), (ws, wt, "W"), (bs, bt, "b")):
        assert_rel(mine.grad, theirs.grad, what=f"d/d{name}")


@pytest.mark.skipif(not fused.enabled(), reason="the speed overrides are off "
                    "(CHAINRULE_FAST=0): no fused operation")
def test_sequential_runs_a_linear_then_a_relu_as_one_operation():
    """The same numbers as the two modules one after the other, one node fewer."""
    model = nn.MLP([3, 5, 4, 2], rng=0)
    x = cr.tensor(np.random.default_rng(1).standard_normal((6, 3)))
    out = model(x)
    step = x
    for layer in model.layers:
        step = layer(step)
    np.testing.assert_allclose(out.data, step.data, rtol=1e-15)
    ops = []
    node = out
    while node._prev:
        ops.append(node._op.name)
        node = node._prev[0]
    assert ops == ["linear", "linear_relu", "linear_relu"]
    # a ReLU that follows something else, or a Linear followed by another activation
    other = nn.Sequential(nn.Linear(3, 2, rng=0), nn.Tanh(), nn.ReLU())
    assert other(x)._op.name == "relu" and other(x)._prev[0]._op.name == "tanh"


def test_batch_norm_with_momentum_none_keeps_torchs_cumulative_average():
    ours = nn.BatchNorm1d(3, momentum=None)
    theirs = torch.nn.BatchNorm1d(3, momentum=None).double()
    rng = np.random.default_rng(0)
    for scale in (1.0, 2.0, 3.0, 4.0):
        x = rng.normal(size=(5, 3)) * scale
        ours(cr.tensor(x))
        theirs(torch.tensor(x))
    np.testing.assert_allclose(ours.running_mean, theirs.running_mean.numpy(), rtol=1e-14)
    np.testing.assert_allclose(ours.running_var, theirs.running_var.numpy(), rtol=1e-14)
    assert ours.num_batches_tracked == theirs.num_batches_tracked.item() == 4
