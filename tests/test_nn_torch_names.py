"""PyTorch's module names that makemore and the PyTorch tutorials use (issue 43, round
2), each checked against torch in float64:

1. ``register_buffer``: an attribute, listed by named_buffers()/buffers(), in
   state_dict() (and cr.save) when persistent, loaded back, carried by cr.jit; torch's
   exception types for a bad name;
2. ``Module.to``, ``cpu``, ``double``, ``float``; ``zero_grad(set_to_none=)`` on modules
   and optimizers;
3. ModuleDict entries as attributes;
4. ``F.one_hot`` and ``F.cross_entropy(ignore_index=)`` (values and gradients, with the
   fused overrides on and off).
"""

import copy
import pickle
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn, optim
from chainrule.nn import functional as F
from chainrule.rules import fused
from test_nn_torch_parity import close


class Masked(nn.Module):
    """A makemore-style block: a causal mask as a buffer, a Linear, and a counter
    updated by forward (as BatchNorm's running statistics are)."""

    def __init__(self, T=3, persistent=True):
        self.proj = nn.Linear(T, T, rng=0)
        self.register_buffer("tril", cr.tril(cr.ones(T, T)))
        self.register_buffer("calls", np.zeros(()), persistent=persistent)

    def forward(self, x):
        self.calls = self.calls + 1
        return self.proj(x) * self.tril


class TorchMasked(torch.nn.Module):
    def __init__(self, T=3, persistent=True):
        super().__init__()
        self.proj = torch.nn.Linear(T, T)
        self.register_buffer("tril", torch.tril(torch.ones(T, T)))
        self.register_buffer("calls", torch.zeros(()), persistent=persistent)


# --- 1. register_buffer ---------------------------------------------------------------

@pytest.mark.parametrize("persistent", [True, False])
def test_buffers_are_listed_and_saved_as_torchs(persistent):
    ours, theirs = Masked(persistent=persistent), TorchMasked(persistent=persistent)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert len(list(ours.buffers())) == len(list(theirs.buffers())) == 2
    # (the same names; chainrule lists every parameter before the buffers, where torch
    # lists each module's own parameters and buffers before its submodules')
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert sorted(ours.torch_state_dict()) == sorted(theirs.state_dict())
    assert isinstance(ours.tril, cr.Tensor) and ours.tril.shape == (3, 3)
    assert [n for n, _ in ours.named_parameters()] == ["proj.weight", "proj.bias"]


def test_buffers_of_submodules_are_named_by_path_and_recurse_false_keeps_own():
    outer = nn.Sequential(Masked(), nn.ReLU())
    assert [n for n, _ in outer.named_buffers()] == ["layers.0.tril", "layers.0.calls"]
    assert list(outer.named_buffers(recurse=False)) == []
    assert [n for n, _ in outer[0].named_buffers(prefix="m")] == ["m.tril", "m.calls"]


def test_load_state_dict_loads_buffers_and_a_tensor_buffer_keeps_its_identity():
    a, b = Masked(), Masked()
    a.tril.data[...] = 7.0
    a.calls = np.array(5.0)
    tril = b.tril
    assert b.load_state_dict(a.state_dict()) == ([], [])
    assert b.tril is tril
    np.testing.assert_array_equal(b.tril.data, np.full((3, 3), 7.0))
    assert b.calls == 5.0


def test_a_non_persistent_buffer_is_neither_saved_nor_expected():
    a = Masked(persistent=False)
    state = a.state_dict()
    assert "calls" not in state
    assert a.load_state_dict(state) == ([], [])
    result = a.load_state_dict({**state, "calls": np.ones(())}, strict=False)
    assert result.unexpected_keys == ["calls"]


def test_registering_again_replaces_and_can_change_persistence():
    m = Masked()
    m.register_buffer("calls", np.ones(()), persistent=False)
    assert m.calls == 1.0 and "calls" not in m.state_dict()
    m.register_buffer("calls", np.full((), 2.0))
    assert m.state_dict()["calls"] == 2.0
    assert [n for n, _ in m.named_buffers()] == ["tril", "calls"]


def test_a_none_buffer_is_listed_once_set():
    class Lazy(nn.Module):
        def __init__(self):
            self.register_buffer("stats", None)
    m, t = Lazy(), torch.nn.Module()
    t.register_buffer("stats", None)
    assert list(m.named_buffers()) == list(t.named_buffers()) == []
    assert list(m.state_dict()) == list(t.state_dict()) == []
    m.stats = np.arange(3.0)
    assert [n for n, _ in m.named_buffers()] == ["stats"]


def test_batchnorm_buffers_and_registered_ones_together():
    bn = nn.BatchNorm1d(2)
    bn.register_buffer("extra", np.ones(2))
    tbn = torch.nn.BatchNorm1d(2)
    tbn.register_buffer("extra", torch.ones(2))
    assert [n for n, _ in bn.named_buffers()] == [n for n, _ in tbn.named_buffers()]
    assert list(bn.state_dict()) == list(tbn.state_dict())
    assert nn.BatchNorm1d(2)._buffer_names == ("running_mean", "running_var",
                                               "num_batches_tracked")


def _torch_error(name, value):
    try:
        torch.nn.Linear(2, 2).register_buffer(name, value)
    except Exception as error:  # noqa: BLE001 (the type is what is compared)
        return type(error)
    return None


@pytest.mark.parametrize("name, value", [
    ("a.b", np.zeros(1)), ("", np.zeros(1)), ("weight", np.zeros(1)),
    ("forward", np.zeros(1)), ("training", np.zeros(1)), (3, np.zeros(1)),
    ("x", 3), ("x", [1.0])])
def test_bad_buffers_raise_torchs_exception_types_in_one_line(name, value):
    layer = nn.Linear(2, 2, rng=0)
    torch_value = torch.zeros(1) if isinstance(value, np.ndarray) else value
    expected = _torch_error(name, torch_value)
    assert expected is not None
    with pytest.raises(expected) as info:
        layer.register_buffer(name, value)
    message = str(info.value)
    assert "\n" not in message and "Linear.register_buffer" in message
    assert repr(name) in message or (name == "" and "empty" in message)


def test_a_parameter_is_refused_as_a_buffer():
    with pytest.raises(TypeError, match="Linear.register_buffer: 'p' is given a Parameter"):
        nn.Linear(2, 2, rng=0).register_buffer("p", nn.Parameter([1.0]))


def test_buffers_go_through_cr_save_and_load(tmp_path):
    a, b = Masked(), Masked()
    a.tril.data[...] = 3.0
    a.calls = np.array(4.0)
    path = tmp_path / "model.safetensors"
    cr.save(a, path)
    assert set(cr.load(path)) == {"proj.weight", "proj.bias", "tril", "calls"}
    b.load_state_dict(cr.load(path))
    np.testing.assert_array_equal(b.tril.data, a.tril.data)
    assert b.calls == 4.0
    c = Masked(persistent=False)
    cr.save(c, tmp_path / "c.safetensors")
    assert "calls" not in cr.load(tmp_path / "c.safetensors")


def test_cr_jit_carries_registered_buffers_as_batchnorms():
    eager, jitted = Masked(), Masked()
    f = cr.jit(lambda model, x: model(cr.tensor(x)))
    for seed in range(4):
        x = np.random.default_rng(seed).standard_normal((2, 3, 3))
        close(f(jitted, x), eager(cr.tensor(x)).data)
        assert jitted.calls == eager.calls == seed + 1
    jitted.tril = cr.ones(3, 3)  # a replaced buffer is read anew
    eager.tril = cr.ones(3, 3)
    x = np.ones((2, 3, 3))
    close(f(jitted, x), eager(cr.tensor(x)).data)


def test_the_state_of_a_registered_buffer_is_torchs_after_copying_weights():
    ours, theirs = Masked(), TorchMasked().double()
    state = ours.torch_state_dict()
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 3))
    close(ours(cr.tensor(x)), theirs.proj(torch.from_numpy(x)) * theirs.tril)


# --- 2. to, cpu, double, float, zero_grad ---------------------------------------------

def _pair():
    ours = nn.Sequential(nn.Linear(3, 2, rng=0), nn.BatchNorm1d(2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).double()
    return ours, theirs


def _dtypes(model):
    if isinstance(model, torch.nn.Module):
        return [str(v.dtype).replace("torch.", "") for v in model.state_dict().values()]
    return [str(np.dtype(v.dtype)) for v in model.state_dict().values()]


# Each cast, as either library spells it: ``lib`` is torch, or chainrule's spelling
CASTS = {
    "float": lambda m, lib: m.float(),
    "double": lambda m, lib: m.float().double(),
    "to float32": lambda m, lib: m.to(lib.float32),
    "to dtype=float32": lambda m, lib: m.to(dtype=lib.float32),
    "to cpu float32": lambda m, lib: m.to("cpu", lib.float32),
    "to a tensor's": lambda m, lib: m.to(lib.zeros(1, dtype=lib.float32)),
    "cpu": lambda m, lib: m.cpu(),
}


@pytest.mark.parametrize("cast", list(CASTS))
def test_casts_change_the_float_entries_as_torchs(cast):
    ours, theirs = _pair()
    weight = ours[0].weight
    chainrule = SimpleNamespace(float32=np.float32, zeros=cr.zeros)
    assert CASTS[cast](ours, chainrule) is ours and CASTS[cast](theirs, torch) is theirs
    assert _dtypes(ours) == _dtypes(theirs)
    assert ours[0].weight is weight  # the optimizer's parameter still


def test_a_cast_casts_gradients_and_registered_tensor_buffers_too():
    m = Masked()
    m(cr.ones(2, 3, 3)).sum().backward()
    m.float()
    assert m.proj.weight.grad.dtype == np.float32 and m.tril.dtype == np.float32
    assert m.calls.dtype == np.float32
    x = np.ones((2, 3, 3), np.float32)
    assert m(cr.tensor(x)).dtype == np.float32


def test_to_another_device_or_an_integer_dtype_is_refused_in_one_line():
    layer = nn.Linear(2, 1, rng=0)
    with pytest.raises(ValueError, match=r"^Linear.to: chainrule computes on the CPU, "
                                         r"got device 'cuda:0'$"):
        layer.to("cuda:0")
    with pytest.raises(ValueError, match="'mps'"):
        layer.to(device="mps")
    with pytest.raises(ValueError, match="'cuda'"):
        layer.to(torch.device("cuda"))
    with pytest.raises(TypeError, match="floating point or complex dtypes only, got int64"):
        layer.to(np.int64)
    with pytest.raises(TypeError):  # as torch's
        torch.nn.Linear(2, 1).to(torch.int64)
    with pytest.raises(TypeError, match="unexpected keyword"):
        layer.to(copy=True)
    assert layer.to(torch.device("cpu"), non_blocking=True) is layer
    assert layer.weight.dtype == np.float64


@pytest.mark.filterwarnings("ignore:Complex modules are a new feature")
def test_to_complex_casts_floats_and_keeps_integers_as_torch():
    bn, tbn = nn.BatchNorm1d(2), torch.nn.BatchNorm1d(2).double()
    bn.to(np.complex128)
    tbn.to(torch.complex128)
    assert _dtypes(bn) == _dtypes(tbn)


def _grads(ours, theirs):
    x = np.random.default_rng(1).standard_normal((4, 3))
    ours(cr.tensor(x)).sum().backward()
    theirs(torch.from_numpy(x)).sum().backward()


@pytest.mark.parametrize("set_to_none", [True, False, None])
def test_zero_grad_as_torch(set_to_none):
    ours, theirs = nn.Linear(3, 2, rng=0), torch.nn.Linear(3, 2).double()
    _grads(ours, theirs)
    kwargs = {} if set_to_none is None else {"set_to_none": set_to_none}
    ours.zero_grad(**kwargs)
    theirs.zero_grad(**kwargs)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        if q.grad is None:
            assert p.grad is None
        else:
            np.testing.assert_array_equal(p.grad, np.zeros(p.shape))


def test_zero_grad_set_to_none_false_leaves_a_missing_gradient_missing():
    ours, theirs = nn.Linear(3, 2, rng=0), torch.nn.Linear(3, 2).double()
    ours.zero_grad(set_to_none=False)
    theirs.zero_grad(set_to_none=False)
    assert ours.weight.grad is None and theirs.weight.grad is None


@pytest.mark.parametrize("set_to_none", [True, False])
def test_an_optimizers_zero_grad_as_torch(set_to_none):
    ours, theirs = nn.Linear(3, 2, rng=0), torch.nn.Linear(3, 2).double()
    opt, topt = optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(),
                                                                       lr=0.1)
    _grads(ours, theirs)
    opt.zero_grad(set_to_none=set_to_none)
    topt.zero_grad(set_to_none=set_to_none)
    assert (ours.weight.grad is None) == (theirs.weight.grad is None) == set_to_none


def test_zero_grad_of_scalar_values_is_zero():
    mlp = nn.MLP(2, [2, 1], rng=0)
    out = mlp([1.0, 2.0])
    out.backward()
    mlp.zero_grad(set_to_none=False)
    assert all(p.grad == 0.0 for p in mlp.parameters())


# --- 3. ModuleDict entries as attributes ----------------------------------------------

def test_module_dict_entries_are_attributes_as_torch():
    md = nn.ModuleDict({"linear": nn.Linear(2, 2, rng=0), "act": nn.ReLU()})
    tmd = torch.nn.ModuleDict({"linear": torch.nn.Linear(2, 2), "act": torch.nn.ReLU()})
    assert md.linear is md["linear"] and tmd.linear is tmd["linear"]
    md.extra = nn.Linear(2, 1, rng=1)
    tmd.extra = torch.nn.Linear(2, 1)
    assert list(md) == list(tmd) == ["linear", "act", "extra"]
    assert [n for n, _ in md.named_parameters()] == [n for n, _ in tmd.named_parameters()]
    del md.extra
    del tmd.extra
    assert list(md) == list(tmd) == ["linear", "act"]
    with pytest.raises(AttributeError, match="ModuleDict has no attribute or entry 'nope'"):
        md.nope


def test_a_module_dict_copies_and_pickles_with_attribute_access():
    md = nn.ModuleDict({"linear": nn.Linear(2, 2, rng=0)})
    md.tag = "settings stay attributes"
    for other in (copy.deepcopy(md), pickle.loads(pickle.dumps(md))):
        np.testing.assert_array_equal(other.linear.weight.data, md.linear.weight.data)
        assert other.tag == md.tag and list(other) == ["linear"]


# --- 4. one_hot and cross_entropy(ignore_index=) --------------------------------------

@pytest.mark.parametrize("labels, num_classes", [
    ([0, 2, 1], -1), ([0, 2, 1], 5), ([[1, 0], [3, 3]], -1), ([[1, 0], [3, 3]], 4),
    (2, 3), ([], 3)])
def test_one_hot_as_torch(labels, num_classes):
    expected = TF.one_hot(torch.tensor(labels, dtype=torch.int64), num_classes).numpy()
    for given in (cr.tensor(labels, dtype=np.int64), np.array(labels, np.int64),
                  cr.tensor(np.array(labels, np.float64))):
        result = F.one_hot(given, num_classes)
        assert type(result) is type(given)
        array = np.asarray(getattr(result, "data", result))
        assert array.dtype == np.int64 and array.shape == expected.shape
        np.testing.assert_array_equal(array, expected)


@pytest.mark.parametrize("labels, num_classes, error, match", [
    ([0, -1], -1, ValueError, "non-negative, got -1"),
    ([0, 3], 3, ValueError, "smaller than num_classes = 3, got 3"),
    ([], -1, ValueError, "empty"),
    ([0.5, 1.0], -1, TypeError, "integer class indices, got dtype float64 with fractions"),
    ([0, 1], -2, ValueError, "got -2")])
def test_one_hot_refuses_what_torch_refuses(labels, num_classes, error, match):
    dtype = torch.float64 if error is TypeError else torch.int64
    with pytest.raises(RuntimeError):
        TF.one_hot(torch.tensor(labels, dtype=dtype), num_classes)
    with pytest.raises(error, match=match) as info:
        F.one_hot(cr.tensor(labels, dtype=np.float64 if error is TypeError else np.int64),
                  num_classes)
    assert str(info.value).startswith("one_hot: ") and "\n" not in str(info.value)


@pytest.fixture(params=[True, False], ids=["fused", "plain"])
def fused_setting(request):
    previous = fused.set_enabled(request.param)
    yield request.param
    fused.set_enabled(previous)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("ignore_index, labels", [
    (-1, [0, -1, 2, 1, -1]), (-100, [0, -100, 2, 1, 1]), (2, [0, 2, 2, 1, 1]),
    (-100, [0, 1, 2, 1, 1])])
def test_cross_entropy_ignore_index_as_torch(fused_setting, reduction, label_smoothing,
                                             ignore_index, labels):
    x = np.random.default_rng(3).standard_normal((5, 3))
    logits, tlogits = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    loss = F.cross_entropy(logits, np.array(labels), reduction=reduction,
                           label_smoothing=label_smoothing, ignore_index=ignore_index)
    expected = TF.cross_entropy(tlogits, torch.tensor(labels), reduction=reduction,
                                label_smoothing=label_smoothing, ignore_index=ignore_index)
    close(loss, expected)
    weights = np.arange(1.0, 6.0) if reduction == "none" else 1.0
    (loss * weights).sum().backward()
    (expected * torch.from_numpy(np.asarray(weights))).sum().backward()
    close(logits.grad, tlogits.grad)


def test_cross_entropy_loss_module_takes_ignore_index():
    x = np.random.default_rng(4).standard_normal((4, 3))
    labels = [2, -1, -1, 0]
    close(nn.CrossEntropyLoss(ignore_index=-1)(cr.tensor(x), labels),
          torch.nn.CrossEntropyLoss(ignore_index=-1)(torch.from_numpy(x),
                                                     torch.tensor(labels)))


def test_cross_entropy_with_every_label_ignored_is_nan_as_torch():
    x = np.zeros((2, 3))
    expected = TF.cross_entropy(torch.from_numpy(x), torch.tensor([-1, -1]), ignore_index=-1)
    assert torch.isnan(expected)
    assert np.isnan(F.cross_entropy(cr.tensor(x), [-1, -1], ignore_index=-1).item())


def test_cross_entropy_ignore_index_under_jit_matches_eager():
    x = np.random.default_rng(5).standard_normal((4, 3))

    def loss_and_grad(logits, labels):
        logits = cr.tensor(logits, requires_grad=True)
        loss = F.cross_entropy(logits, labels, ignore_index=-1)
        loss.backward()
        return loss, logits.grad

    f = cr.jit(loss_and_grad)
    for labels in ([0, -1, 2, 1], [-1, -1, 1, 1], [0, 1, 2, 1]):
        labels = np.array(labels)
        (loss, grad), (eager_loss, eager_grad) = f(x, labels), loss_and_grad(x, labels)
        close(loss, eager_loss.data)
        close(grad, eager_grad)


def test_cross_entropy_refuses_a_float_ignore_index_and_still_checks_other_labels():
    with pytest.raises(TypeError, match="cross_entropy: ignore_index must be an int, got "
                                        "float 1.5"):
        F.cross_entropy(cr.zeros(2, 3), [0, 1], ignore_index=1.5)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        F.cross_entropy(cr.zeros(2, 3), [0, -2], ignore_index=-1)
