"""nn's lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*), nn.Buffer and the recurrent base classes against torch 2.13 in
float64: after a first call each becomes its eager class, with torch's repr before and
after; torch's state_dict loaded gives torch's outputs and gradients; a state_dict
loaded before the first call takes its shapes from the state; an optimizer (built
before or after the first call) trains as torch's; the initial weights lie in torch's
bounds; cr.jit and cr.vmap size a module at its first call as eager code does; and the
refusals. nn.Buffer registers itself, persistent or not, as torch's does.
"""

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn

import chainrule as cr
from chainrule import nn
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261211)
RTOL = 1e-12

# name -> (ours, torch's, the first input's shape): the settings are torch's arguments
CASES = {
    "LazyLinear": (lambda: nn.LazyLinear(3, rng=0),
                   lambda: tnn.LazyLinear(3, dtype=torch.float64), (4, 5)),
    "LazyLinear-nobias": (lambda: nn.LazyLinear(2, bias=False, rng=0),
                          lambda: tnn.LazyLinear(2, bias=False, dtype=torch.float64),
                          (2, 3, 6)),
    "LazyConv1d": (lambda: nn.LazyConv1d(4, 3, padding=1, rng=0),
                   lambda: tnn.LazyConv1d(4, 3, padding=1, dtype=torch.float64), (2, 5, 7)),
    "LazyConv2d": (lambda: nn.LazyConv2d(4, 3, stride=2, groups=2, rng=0),
                   lambda: tnn.LazyConv2d(4, 3, stride=2, groups=2, dtype=torch.float64),
                   (2, 6, 7, 6)),
    "LazyConv3d": (lambda: nn.LazyConv3d(2, 2, bias=False, rng=0),
                   lambda: tnn.LazyConv3d(2, 2, bias=False, dtype=torch.float64),
                   (1, 3, 4, 3, 4)),
    "LazyConvTranspose1d": (lambda: nn.LazyConvTranspose1d(2, 3, stride=2, rng=0),
                            lambda: tnn.LazyConvTranspose1d(2, 3, stride=2,
                                                            dtype=torch.float64), (2, 4, 5)),
    "LazyConvTranspose2d": (lambda: nn.LazyConvTranspose2d(4, 2, stride=2, output_padding=1,
                                                           groups=2, rng=0),
                            lambda: tnn.LazyConvTranspose2d(4, 2, stride=2, output_padding=1,
                                                            groups=2, dtype=torch.float64),
                            (1, 4, 3, 3)),
    "LazyConvTranspose3d": (lambda: nn.LazyConvTranspose3d(2, 2, rng=0),
                            lambda: tnn.LazyConvTranspose3d(2, 2, dtype=torch.float64),
                            (1, 3, 2, 2, 2)),
    "LazyBatchNorm1d": (lambda: nn.LazyBatchNorm1d(),
                        lambda: tnn.LazyBatchNorm1d(dtype=torch.float64), (6, 3)),
    "LazyBatchNorm2d": (lambda: nn.LazyBatchNorm2d(momentum=None),
                        lambda: tnn.LazyBatchNorm2d(momentum=None, dtype=torch.float64),
                        (4, 3, 2, 2)),
    "LazyBatchNorm3d": (lambda: nn.LazyBatchNorm3d(eps=1e-3),
                        lambda: tnn.LazyBatchNorm3d(eps=1e-3, dtype=torch.float64),
                        (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": (lambda: nn.LazyInstanceNorm1d(),
                           lambda: tnn.LazyInstanceNorm1d(dtype=torch.float64), (2, 3, 5)),
    "LazyInstanceNorm2d": (lambda: nn.LazyInstanceNorm2d(track_running_stats=False),
                           lambda: tnn.LazyInstanceNorm2d(track_running_stats=False,
                                                          dtype=torch.float64),
                           (2, 3, 3, 3)),
    "LazyInstanceNorm3d": (lambda: nn.LazyInstanceNorm3d(affine=False),
                           lambda: tnn.LazyInstanceNorm3d(affine=False, dtype=torch.float64),
                           (1, 2, 3, 3, 3)),
}
NAMES = list(CASES)


def close(actual, expected, rtol=RTOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)


def first_called(name):
    """Ours and torch's, each sized by a first call on the same input."""
    ours, theirs, shape = CASES[name]
    ours, theirs = ours(), theirs()
    x = RNG.standard_normal(shape)
    with torch.no_grad():
        theirs(torch.tensor(x))
    ours(cr.tensor(x))
    return ours, theirs, shape


def compare_call(ours, theirs, shape):
    """One more call of both on a new input: outputs, the gradients of sum(w * y) in
    the input and in every parameter, and the buffers after, to RTOL."""
    x = RNG.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(tx)
    w = RNG.standard_normal(tuple(ty.shape))
    (ty * torch.tensor(w)).sum().backward()
    cx = cr.tensor(x, requires_grad=True)
    y = ours(cx)
    close(y, ty)
    cr.sum(y * w).backward()
    close(cx.grad, tx.grad)
    theirs_params = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(theirs_params)
    for n, p in ours.named_parameters():
        close(p.grad, theirs_params[n].grad)
    theirs_buffers = dict(theirs.named_buffers())
    assert [n for n, _ in ours.named_buffers()] == list(theirs_buffers)
    for n, b in ours.named_buffers():
        close(b, theirs_buffers[n])


@pytest.mark.parametrize("name", NAMES)
def test_after_a_first_call_and_torchs_state_it_computes_as_torch(name):
    ours, theirs, shape = first_called(name)
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours) is getattr(nn, type(theirs).__name__)
    ours.load_state_dict(theirs.state_dict())
    compare_call(ours, theirs, shape)
    ours.eval(), theirs.eval()
    compare_call(ours, theirs, shape)


@pytest.mark.parametrize("name", NAMES)
def test_repr_before_and_after_the_first_call_is_torchs(name):
    ours, theirs, shape = CASES[name]
    ours, theirs = ours(), theirs()
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal(shape)
    with torch.no_grad():
        theirs(torch.tensor(x))
    ours(cr.tensor(x))
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", NAMES)
def test_a_lazy_module_is_an_instance_of_its_eager_class_before_and_after(name):
    ours, theirs, shape = CASES[name]
    ours = ours()
    eager = ours.cls_to_become
    assert isinstance(ours, eager) and type(ours) is not eager
    ours(cr.tensor(RNG.standard_normal(shape)))
    assert type(ours) is eager
    assert not hasattr(ours, "_lazy_init")


@pytest.mark.parametrize("name", NAMES)
def test_a_state_dict_loaded_before_the_first_call_gives_the_shapes(name):
    ours, theirs, shape = CASES[name]
    _, sized, _ = first_called(name)
    ours = ours()
    ours.load_state_dict(sized.state_dict())
    # as torch's, still the lazy class until its first call
    lazy = theirs()
    lazy.load_state_dict(sized.state_dict())
    assert repr(ours) == repr(lazy)
    compare_call(ours, sized, shape)
    assert type(ours).__name__ == type(sized).__name__


@pytest.mark.parametrize("name", ["LazyLinear", "LazyConv2d", "LazyConvTranspose1d",
                                  "LazyBatchNorm2d", "LazyInstanceNorm1d"])
@pytest.mark.parametrize("built", ["before", "after"])
def test_an_optimizer_trains_as_torchs(name, built):
    ours, theirs, shape = CASES[name]
    ours, theirs = ours(), theirs()
    x0 = RNG.standard_normal(shape)
    if built == "before":  # the same parameter objects are filled at the first call
        opt = cr.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    with torch.no_grad():
        theirs(torch.tensor(x0))
    ours(cr.tensor(x0))
    ours.load_state_dict(theirs.state_dict())
    if built == "after":
        opt = cr.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        x = RNG.standard_normal(shape)
        topt.zero_grad()
        ty = theirs(torch.tensor(x))
        w = RNG.standard_normal(tuple(ty.shape))
        (ty * torch.tensor(w)).sum().backward()
        topt.step()
        opt.zero_grad()
        cr.sum(ours(cr.tensor(x)) * w).backward()
        opt.step()
    theirs_state = theirs.state_dict()
    for key, value in ours.state_dict().items():
        close(value, theirs_state[key])


def bounds_of(module):
    """torch's initial bounds: U(+-1/sqrt(fan_in)) for the weight and the bias, fan_in
    the weight's second axis times the kernel's size."""
    weight = module.weight.data
    return 1 / math.sqrt(weight.shape[1] * math.prod(weight.shape[2:]))


@pytest.mark.parametrize("name", ["LazyLinear", "LazyConv1d", "LazyConv2d",
                                  "LazyConvTranspose1d", "LazyConvTranspose2d"])
def test_the_initial_weights_lie_in_torchs_bounds(name):
    ours, theirs, shape = CASES[name]
    wide = tuple(s * 8 if i == (len(shape) - 1 if "Linear" in name else 1) else s
                 for i, s in enumerate(shape))
    ours, theirs = ours(), theirs()
    x = RNG.standard_normal(wide)
    with torch.no_grad():
        theirs(torch.tensor(x))
    ours(cr.tensor(x))
    bound = bounds_of(ours)
    assert bound == pytest.approx(bounds_of(theirs), rel=1e-15)
    for n, p in ours.named_parameters():
        assert np.abs(p.data).max() <= bound, n
        assert p.shape == tuple(dict(theirs.named_parameters())[n].shape)
    # uniform in the bound, as torch's (not He's normal, nn.Linear's default here): of
    # the weight's many draws some come near the bound
    assert np.abs(ours.weight.data).max() > 0.8 * bound


@pytest.mark.parametrize("name", ["LazyBatchNorm1d", "LazyInstanceNorm1d"])
def test_the_norms_start_as_torchs(name):
    ours, theirs = first_called(name)[:2]  # (the one call moved the statistics alike)
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key, value in ours_state.items():
        close(value, theirs_state[key])


def test_the_default_generator_is_drawn_at_the_first_call():
    cr.manual_seed(7)
    layer = nn.LazyLinear(3)
    nn.Linear(2, 2)  # a draw between the construction and the first call
    layer(cr.ones(1, 4))
    cr.manual_seed(7)
    nn.Linear(2, 2)
    again = nn.LazyLinear(3)
    again(cr.ones(1, 4))
    close(layer.weight, again.weight.data)


def test_a_seed_gives_the_same_weights():
    a, b = nn.LazyConv2d(3, 2, rng=5), nn.LazyConv2d(3, 2, rng=5)
    a(cr.ones(1, 2, 3, 3)), b(cr.ones(1, 2, 3, 3))
    close(a.weight, b.weight.data)
    close(a.bias, b.bias.data)


def test_parameters_before_the_first_call_are_uninitialized_as_torchs():
    layer, theirs = nn.LazyLinear(3), tnn.LazyLinear(3)
    params = layer.parameters()
    assert [type(p).__name__ for p in params] == [type(p).__name__
                                                   for p in theirs.parameters()]
    assert repr(params[0]) == repr(next(theirs.parameters())) == "<UninitializedParameter>"
    assert layer.has_uninitialized_params()
    bn, tbn = nn.LazyBatchNorm1d(), tnn.LazyBatchNorm1d()
    assert [(n, type(b).__name__) for n, b in bn.named_buffers()][:2] == \
        [(n, type(b).__name__) for n, b in tbn.named_buffers()][:2]
    layer(cr.ones(2, 4))
    assert [type(p) for p in params] == [nn.Parameter, nn.Parameter]
    assert params[0] is layer.weight


def test_a_first_call_under_jit_and_vmap_is_the_eager_one():
    x = RNG.standard_normal((4, 5))
    eager = nn.LazyLinear(3, rng=1)
    expected = eager(cr.tensor(x)).data
    traced = nn.LazyLinear(3, rng=1)
    f = cr.jit(lambda t: traced(t))
    close(f(cr.tensor(x)), expected)
    assert type(traced) is nn.Linear
    traced.weight.data = traced.weight.data * 2  # the program reads the weight it holds
    close(f(cr.tensor(x)), traced(cr.tensor(x)).data)
    mapped = nn.LazyLinear(3, rng=1)
    close(cr.vmap(lambda row: mapped(row))(cr.tensor(x)), expected)
    assert mapped.weight.shape == (3, 5)


def test_a_first_call_under_jit_of_a_module_with_buffers_is_refused():
    bn = nn.LazyBatchNorm1d()
    with pytest.raises(TypeError, match="LazyBatchNorm1d: a first call under cr.jit") as e:
        cr.jit(lambda t: bn(t))(cr.ones(4, 3))
    one_line(e)
    assert type(bn) is nn.LazyBatchNorm1d and bn.has_uninitialized_params()
    x = RNG.standard_normal((4, 3))
    eager = nn.BatchNorm1d(3)
    bn(cr.tensor(x)), eager(cr.tensor(x))  # once outside; then cr.jit carries the statistics
    f = cr.jit(lambda t: bn(t))
    close(f(cr.tensor(x)), eager(cr.tensor(x)).data)
    close(bn.running_mean, eager.running_mean)


def test_a_lazy_module_inside_a_model_is_sized_by_the_models_first_call():
    model = nn.Sequential(nn.LazyLinear(4, rng=0), nn.ReLU(), nn.LazyLinear(2, rng=1))
    model(cr.ones(3, 6))
    assert [(n, p.shape) for n, p in model.named_parameters()] == [
        ("layers.0.weight", (4, 6)), ("layers.0.bias", (4,)), ("layers.2.weight", (2, 4)),
        ("layers.2.bias", (2,))]
    assert "Linear(in_features=6, out_features=4, bias=True)" in repr(model)


def test_a_model_holding_lazy_layers_loads_a_state_before_its_first_call():
    eager = nn.Sequential(nn.Linear(3, 4, rng=0), nn.ReLU(), nn.Linear(4, 2, rng=1))
    lazy = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    assert repr(lazy.load_state_dict(eager.state_dict())) == "<All keys matched successfully>"
    x = RNG.normal(size=(5, 3))
    np.testing.assert_array_equal(lazy(x).data, eager(x).data)
    assert type(lazy[2]) is nn.Linear
    partial = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    state = {k: v for k, v in eager.state_dict().items() if k.startswith("layers.0")}
    with pytest.raises(ValueError, match=r"missing \['layers.2.weight', 'layers.2.bias'\]"):
        partial.load_state_dict(state)
    assert isinstance(partial[0].weight, nn.UninitializedParameter)   # nothing changed


def test_the_unbatched_instance_norm_reads_its_channels_from_axis_0():
    # (torch 2.13's lazy instance norms read axis 1 even here, and then refuse the input)
    norm = nn.LazyInstanceNorm1d()
    assert norm(cr.ones(3, 5)).shape == (3, 5)
    assert norm.num_features == 3


def test_without_weights_or_statistics_the_size_stays_0_as_torchs():
    ours = nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    theirs = tnn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    x = RNG.standard_normal((2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = theirs(torch.tensor(x))
        close(ours(cr.tensor(x)), expected)
    assert repr(ours) == repr(theirs)


# --- refusals ---------------------------------------------------------------------------

def one_line(excinfo):
    assert "\n" not in str(excinfo.value)
    return str(excinfo.value)


def test_state_dict_before_the_first_call_is_refused():
    with pytest.raises(ValueError, match="before the module's first call") as e:
        nn.LazyLinear(3).state_dict()
    one_line(e)
    with pytest.raises(ValueError, match="no data or shape"):
        nn.LazyBatchNorm1d().running_mean.shape


def test_a_refused_load_leaves_the_parameters_uninitialized():
    layer = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="missing") as e:
        layer.load_state_dict({"weight": np.zeros((3, 4))})
    one_line(e)
    assert layer.has_uninitialized_params()
    assert type(layer.weight) is nn.UninitializedParameter


def test_an_input_that_does_not_fit_a_loaded_state_is_refused():
    layer = nn.LazyLinear(3)
    layer.load_state_dict(nn.Linear(4, 3, rng=0).state_dict())
    with pytest.raises(ValueError, match=r"LazyLinear: weight has shape \(3, 4\)") as e:
        layer(cr.ones(2, 5))
    one_line(e)


@pytest.mark.parametrize("name", ["LazyConv1d", "LazyConv2d", "LazyConvTranspose3d"])
def test_a_convolution_input_of_the_wrong_rank_is_refused(name):
    layer = CASES[name][0]()
    with pytest.raises(ValueError, match=f"{name}: input of shape") as e:
        layer(cr.ones(*(2,) * (layer.d + 3)))
    one_line(e)


def test_in_channels_that_groups_do_not_divide_are_refused():
    with pytest.raises(ValueError, match="LazyConv2d: groups=2 must divide in_channels=3"):
        nn.LazyConv2d(4, 3, groups=2)(cr.ones(1, 3, 5, 5))


def test_the_settings_are_checked_at_construction():
    with pytest.raises(ValueError, match="LazyConv2d: padding_mode"):
        nn.LazyConv2d(4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="LazyLinear: chainrule computes on the CPU"):
        nn.LazyLinear(3, device="cuda")


def test_a_norm_input_without_channels_is_refused():
    with pytest.raises(ValueError, match=r"LazyBatchNorm1d: input of shape \(4,\)") as e:
        nn.LazyBatchNorm1d()(cr.ones(4))
    one_line(e)


# --- nn.Buffer ------------------------------------------------------------------------------

def with_buffers(lib):
    class Model(lib.Module):
        def __init__(self):
            super().__init__() if lib is tnn else None
            data = RNG.standard_normal(3)
            ones = np.ones(2)
            if lib is tnn:
                self.mask = tnn.Buffer(torch.tensor(data))
                self.scratch = tnn.Buffer(torch.tensor(ones), persistent=False)
                self.register_buffer("count", torch.zeros(()))
                self.empty = tnn.Buffer()
            else:
                self.mask = nn.Buffer(cr.tensor(data))
                self.scratch = nn.Buffer(cr.tensor(ones), persistent=False)
                self.register_buffer("count", cr.zeros(()))
                self.empty = nn.Buffer()
    return Model()


def test_a_buffer_set_as_an_attribute_is_registered_as_torchs():
    ours, theirs = with_buffers(nn), with_buffers(tnn)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.empty.shape == tuple(theirs.empty.shape) == (0,)
    assert ours.parameters() == [] and list(theirs.parameters()) == []


def test_a_buffers_persistence_follows_the_last_buffer_set():
    for lib, make in ((nn, cr.ones), (tnn, torch.ones)):
        m = with_buffers(lib)
        m.scratch = lib.Buffer(make(2))  # persistent now
        m.mask = lib.Buffer(make(3), persistent=False)
        m.count = make(())  # a plain tensor keeps the buffer's persistence
        assert sorted(m.state_dict()) == ["count", "empty", "scratch"]


def test_a_buffer_keeps_its_data_and_requires_grad():
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    b = nn.Buffer(t)
    assert b.requires_grad and b.persistent
    assert b.data.tolist() == [1.0, 2.0]
    assert isinstance(b, cr.Tensor)


def test_a_buffer_set_on_a_parameters_name_is_refused():
    m = nn.Linear(2, 1, rng=0)
    with pytest.raises(KeyError, match="'weight' already exists"):
        m.weight = nn.Buffer(cr.ones(2))


def test_cr_jit_carries_a_buffer_set_as_an_attribute():
    class Scale(nn.Module):
        def __init__(self):
            self.scale = nn.Buffer(cr.ones(2))

        def forward(self, x):
            return x * self.scale

    m = Scale()
    f = cr.jit(lambda x: m(x))
    close(f(cr.ones(2)), np.ones(2))
    m.scale = nn.Buffer(cr.tensor([2.0, 3.0]))
    close(f(cr.ones(2)), np.array([2.0, 3.0]))


# --- the recurrent base classes --------------------------------------------------------------

@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_the_recurrent_layers_are_rnnbases_as_torchs(name):
    ours, theirs = getattr(nn, name)(3, 4, rng=0), getattr(tnn, name)(3, 4)
    assert isinstance(ours, nn.RNNBase) and isinstance(theirs, tnn.RNNBase)
    assert not isinstance(ours, nn.RNNCellBase)


@pytest.mark.parametrize("name", ["RNNCell", "GRUCell", "LSTMCell"])
def test_the_cells_are_rnncellbases_as_torchs(name):
    ours, theirs = getattr(nn, name)(3, 4, rng=0), getattr(tnn, name)(3, 4)
    assert isinstance(ours, nn.RNNCellBase) and isinstance(theirs, tnn.RNNCellBase)
    assert not isinstance(ours, nn.RNNBase)


def test_rnnbase_makes_torchs_parameters():
    ours = nn.RNNBase("LSTM", 3, 4, num_layers=2, bidirectional=True, rng=0)
    theirs = tnn.RNNBase("LSTM", 3, 4, num_layers=2, bidirectional=True)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
