"""Models trained in single precision, as PyTorch users train them, against torch in
float32 on the same weights and the same data.

chainrule's default float is float64; a model made float32 (a ``dtype=`` argument,
``.float()``, ``.to(np.float32)``) must stay float32 everywhere a training loop looks:
its outputs and losses, every ``.grad``, the optimizer's state, the running statistics
of a batch norm, a checkpoint written and read back, the results of cr.grad, cr.vmap and
cr.jit. A float64 number that slips in (a NumPy float64 hyperparameter, a float64 state
loaded from a checkpoint, a constant of a rule) promotes everything it touches, silently:
the model trains at twice the memory and its numbers stop being torch's. So every check
here asserts the dtype of each array, and the values against torch's:

* a value computed in float32 is off from the float64 answer by its rounding, which
  grows with the computation's conditioning (a loss summed through a final LayerNorm
  cancels almost entirely). :func:`within_float32` measures how far torch's float32
  answer is from torch's float64 one, on the same float32 weights and data, and allows
  chainrule's float32 answer a few times that: a float64 leak passes that test (it is
  closer), so the dtypes are asserted separately;
* an optimizer's run after a few steps is compared with torch's float32 run directly,
  rtol 1e-5: its updates are a few well-conditioned operations per step.

The layers are tests/test_nn_under_transforms.py's list (every layer it runs under the
transforms, here also under them in float32) and a list of the layers it leaves out
(activations, cells, a batch norm in training, a stack of encoder layers), built with
the same helper. The optimizers (chainrule.optim's against torch.optim, and JAX's
optimizers in chainrule.example_libraries against jax.example_libraries in JAX's float64
mode, where a float32 array stays float32 unless JAX itself promotes it), the schedules,
the losses and the casts are lists too, each case made of names.

Each defect these checks found is also held at its smallest, as a reproducer test.
"""

import warnings

import numpy as np
import pytest
import torch
import torch.func as tf
import torch.nn.functional as TF

import chainrule as cr
import jax  # (imported before any test, so conftest.py puts its float64 mode back)
import test_nn_under_transforms as layer_cases
from chainrule import nn, optim
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator, seeded

RNG = per_test_generator(3232)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
EPS32 = float(np.finfo(np.float32).eps)
Case = layer_cases.Case


@pytest.fixture(autouse=True)
def _torch_seeded_per_test(request):
    """torch's own draws (a layer's initialisation, overwritten by the shared weights
    where both libraries hold the same numbers) come from a generator seeded by the
    test's id, whatever ran before."""
    torch.manual_seed(int(seeded(request.node.nodeid, "torch").integers(2 ** 31)))


def numbers(a):
    if isinstance(a, torch.Tensor):
        return a.detach().numpy()
    return a.data if isinstance(a, cr.Tensor) else np.asarray(a)


def dtype_of(a):
    return np.dtype(str(a.dtype).replace("torch.", "")) if isinstance(a, torch.Tensor) \
        else np.dtype(a.dtype)


def assert_float32(a, what):
    assert dtype_of(a) == F32, f"{what}: {dtype_of(a)}, expected float32"
    if isinstance(a, cr.Tensor):
        assert numbers(a).dtype == F32, f"{what}: its .data is {numbers(a).dtype}"


def within_float32(ours, t32, t64, what, slack=8.0):
    """chainrule's float32 answer is no farther from torch's float64 answer than a few
    times torch's own float32 answer is, plus a few units of float32 rounding of the
    answer's size (for an answer torch happens to round exactly)."""
    ours, t32, t64 = (np.asarray(numbers(a), dtype=F64) for a in (ours, t32, t64))
    assert ours.shape == t64.shape, (what, ours.shape, t64.shape)
    scale = float(np.max(np.abs(t64), initial=0.0))
    allowed = slack * float(np.max(np.abs(t32 - t64), initial=0.0)) + 4 * EPS32 * scale
    error = float(np.max(np.abs(ours - t64), initial=0.0))
    assert error <= allowed, (f"{what}: off torch's float64 answer by {error:.3g}, torch's "
                              f"float32 answer by {np.max(np.abs(t32 - t64)):.3g} (scale "
                              f"{scale:.3g})")


def torch_copy(module, dtype):
    return {k: torch.tensor(np.asarray(v), dtype=dtype)
            for k, v in module.torch_state_dict().items()}


# =======================================================================================
# 1. Layers: forward and backward in float32
# =======================================================================================

def _activation(name, **kwargs):
    return Case(name, lambda r: getattr(nn, name)(**kwargs),
                lambda: getattr(torch.nn, name)(**kwargs), (2, 5))


def _both_states(out):
    """A cell's new state; an LSTMCell's two, h and c, weighed differently."""
    return out[0] + 2 * out[1] if isinstance(out, tuple) else out


def _cell(name):
    return Case(name, lambda r: getattr(nn, name)(3, 4, rng=r),
                lambda: getattr(torch.nn, name)(3, 4), (3,),
                batched=lambda layer, X: _both_states(layer(X)))


# the layers tests/test_nn_under_transforms.py leaves out
MORE_LAYERS = [
    *[_activation(name) for name in ("ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "ELU",
                                     "LeakyReLU", "Softplus", "Identity", "Flatten")],
    _activation("Softmax", dim=-1), _activation("LogSoftmax", dim=1),
    Case("GELU-tanh", lambda r: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh"), (5,)),
    *[_cell(name) for name in ("RNNCell", "GRUCell", "LSTMCell")],
    Case("BatchNorm1d-train", lambda r: nn.BatchNorm1d(4), lambda: torch.nn.BatchNorm1d(4),
         (2, 4), batched=layer_cases._rows, randomise=("weight", "bias")),
    Case("BatchNorm2d-train", lambda r: nn.BatchNorm2d(2), lambda: torch.nn.BatchNorm2d(2),
         (2, 2, 3, 3), batched=layer_cases._rows, randomise=("weight", "bias")),
    Case("BatchNorm1d-cumulative", lambda r: nn.BatchNorm1d(3, momentum=None),
         lambda: torch.nn.BatchNorm1d(3, momentum=None), (4, 3), batched=layer_cases._rows,
         randomise=("weight", "bias", "running_mean", "running_var"),
         positive=("running_var",)),
    Case("TransformerEncoder",
         lambda r: nn.TransformerEncoder(
             nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                        batch_first=True, rng=r), 2),
         lambda: torch.nn.TransformerEncoder(
             torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                              batch_first=True), 2,
             enable_nested_tensor=False),
         (3, 4), attention=True),
    Case("MLP", lambda r: nn.MLP([4, 6, 3], activation="tanh", rng=r),
         lambda: torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(),
                                     torch.nn.Linear(6, 3)), (4,)),
]
LAYERS = layer_cases.CASES + MORE_LAYERS
LAYER_BY_ID = {case.id: case for case in LAYERS}
FAST_LAYERS = {"Linear", "Conv2d", "LSTM", "MultiheadAttention", "BatchNorm1d-train"}


def built(case):
    """chainrule's layer made float32 and torch's in float32 and in float64, all three
    holding the same float32 numbers."""
    ours, _ = layer_cases.build(case)                 # float64, the state drawn
    ours.float()
    theirs = {}
    for dtype in (torch.float32, torch.float64):
        layer = case.make_torch().to(dtype)
        layer.load_state_dict(torch_copy(ours, dtype))
        theirs[dtype] = layer
    if case.eval:
        ours.eval()
        for layer in theirs.values():
            layer.eval()
    return ours, theirs[torch.float32], theirs[torch.float64]


def layer_input(case):
    shape = (layer_cases.B,) + case.example
    if case.integers:
        return RNG.integers(0, case.integers, size=shape)
    return RNG.standard_normal(shape).astype(np.float32)


def _layer_params():
    return [pytest.param(case.id, marks=[] if case.id in FAST_LAYERS else [pytest.mark.slow])
            for case in LAYERS]


@pytest.mark.parametrize("case_id", _layer_params())
def test_a_float32_layer_computes_torchs_float32_numbers_in_float32(case_id):
    """Forward, ``.backward()`` of a weighted sum of the output, on torch's float32 layer
    with the same weights: the output, the input's gradient, every parameter's gradient
    and every buffer after the call (a batch norm's running statistics) are float32 and
    torch's numbers within float32 rounding."""
    case = LAYER_BY_ID[case_id]
    ours, t32, t64 = built(case)
    X = layer_input(case)
    differentiable = not case.integers
    x = cr.tensor(X, requires_grad=differentiable)
    y = case.batched(ours, x)
    assert_float32(y, "output")
    weights = RNG.standard_normal(y.shape).astype(np.float32)
    loss = cr.sum(y * weights)
    assert_float32(loss, "loss")
    loss.backward()
    results = {}
    for dtype, layer in ((torch.float32, t32), (torch.float64, t64)):
        t = torch.tensor(X, dtype=None if case.integers else dtype,
                         requires_grad=differentiable)
        with layer_cases.torch_kernels(case):
            u = case.batched(layer, t)
        (u * torch.tensor(weights, dtype=dtype)).sum().backward()
        results[dtype] = (u, t.grad, [q.grad for q in layer.parameters()], layer.state_dict())
    u32, g32, p32, s32 = results[torch.float32]
    u64, g64, p64, s64 = results[torch.float64]
    within_float32(y, u32, u64, "output")
    if differentiable:
        assert type(x.grad) is np.ndarray
        assert_float32(x.grad, "input's gradient")
        within_float32(x.grad, g32, g64, "input's gradient")
    params = list(ours.named_parameters())
    assert len(params) == len(p32)
    for (name, p), q32, q64 in zip(params, p32, p64):
        assert_float32(p, name)
        assert_float32(p.grad, f"{name}.grad")
        within_float32(p.grad, q32, q64, f"{name}.grad")
    ours_state = ours.torch_state_dict()
    for name, value in s32.items():
        if value.is_floating_point():
            assert_float32(ours_state[name], name)
            within_float32(ours_state[name], value, s64[name], name)
        else:
            assert dtype_of(ours_state[name]) == dtype_of(value), name


# ---------------------------------------------------------------------------------------
# The ways of making a model float32, and back
# ---------------------------------------------------------------------------------------

CASTS = {
    ".float()": lambda m: m.float(),
    ".to(np.float32)": lambda m: m.to(np.float32),
    ".to('float32')": lambda m: m.to("float32"),
    ".to(dtype=np.float32)": lambda m: m.to(dtype=np.float32),
    ".to('cpu', np.float32)": lambda m: m.to("cpu", np.float32),
    ".to(a float32 tensor)": lambda m: m.to(cr.tensor(np.zeros(1, np.float32))),
    ".double().float()": lambda m: m.double().float(),
}


@pytest.mark.parametrize("cast", list(CASTS))
def test_every_cast_reaches_every_parameter_and_buffer_of_every_layer(cast):
    """Each cast returns the model itself and makes every floating parameter and buffer
    float32 (an integer buffer, ``num_batches_tracked``, keeps its dtype, as in torch);
    ``.double()`` brings every one back to float64."""
    for case in LAYERS:
        model = case.make(seeded("weights", case.id))
        assert CASTS[cast](model) is model
        for name, value in model.state_dict().items():
            expected = np.int64 if name.endswith("num_batches_tracked") else F32
            assert dtype_of(value) == expected, (case.id, cast, name, dtype_of(value))
        assert model.double() is model
        assert all(dtype_of(v) == F64 for k, v in model.state_dict().items()
                   if not k.endswith("num_batches_tracked")), case.id


class Holder(nn.Module):
    """Every kind of place a module keeps arrays: a parameter list and dict, buffers
    (float, integer, not persistent), a layer in a plain list, a complex parameter."""

    def __init__(self):
        self.plist = nn.ParameterList([nn.Parameter(np.ones(2)), nn.Parameter(np.zeros(3))])
        self.pdict = nn.ParameterDict({"a": nn.Parameter(np.ones(2))})
        self.register_buffer("scale", np.ones(2))
        self.register_buffer("scratch", cr.tensor(np.ones(2)), persistent=False)
        self.register_buffer("index", np.arange(3))
        self.blocks = [nn.Linear(2, 2, rng=0)]
        self.phase = nn.Parameter(np.ones(2) + 1j)


class TorchHolder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.plist = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)),
                                             torch.nn.Parameter(torch.zeros(3))])
        self.pdict = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(2))})
        self.register_buffer("scale", torch.ones(2))
        self.register_buffer("scratch", torch.ones(2), persistent=False)
        self.register_buffer("index", torch.arange(3))
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(2, 2)])
        self.phase = torch.nn.Parameter(torch.ones(2, dtype=torch.complex128))


@pytest.mark.parametrize("cast", [
    ("float", lambda m: m.float(), lambda m: m.float()),
    ("to float32", lambda m: m.to(np.float32), lambda m: m.to(torch.float32)),
    ("double", lambda m: m.float().double(), lambda m: m.float().double()),
], ids=lambda c: c[0])
def test_a_cast_reaches_every_place_a_module_keeps_arrays_as_torchs(cast):
    """The dtype of every parameter and buffer after the cast is torch's: float ones
    cast, integer ones kept, a complex one kept by .float() and .double() and cast to
    its real part by .to(a float dtype), as torch does (with its warning)."""
    _, ours_cast, torch_cast = cast
    ours = ours_cast(Holder().double())
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Casting complex values to real")
        theirs = torch_cast(TorchHolder().double())

    def dtypes(pairs):
        return {name: dtype_of(value) for name, value in pairs}
    assert dtypes(ours.named_parameters()) == dtypes(theirs.named_parameters())
    assert dtypes(ours.named_buffers()) == dtypes(theirs.named_buffers())


@pytest.mark.parametrize("make", [
    lambda: nn.Linear(3, 2, rng=0, dtype=np.float32),
    lambda: nn.Embedding(5, 3, rng=0, dtype=np.float32),
    lambda: nn.LayerNorm(3, dtype=np.float32),
    lambda: nn.MLP([3, 4, 2], rng=0, dtype=np.float32),
], ids=["Linear", "Embedding", "LayerNorm", "MLP"])
def test_a_dtype_argument_makes_every_parameter_float32(make):
    model = make()
    assert {dtype_of(p) for p in model.parameters()} == {F32}
    x = RNG.integers(0, 5, (4, 3)) if isinstance(model, nn.Embedding) \
        else RNG.standard_normal((4, 3)).astype(np.float32)
    y = model(cr.tensor(x))
    assert_float32(y, "output")
    cr.sum(y * y).backward()
    for name, p in model.named_parameters():
        assert_float32(p.grad, f"{name}.grad")


# ---------------------------------------------------------------------------------------
# The layers under the transforms, in float32
# ---------------------------------------------------------------------------------------

TRANSFORM_CHECKS = ("vmap", "grad", "vmap_grad", "jacrev", "jacfwd", "jit", "jit_grad",
                    "jit_vmap_grad")
FAST_TRANSFORMS = {("Linear", "vmap_grad"), ("LSTM", "jit_grad"),
                   ("MultiheadAttention", "vmap_grad")}


def _transform_params():
    return [pytest.param(case.id, check, id=f"{case.id}-{check}",
                         marks=[] if (case.id, check) in FAST_TRANSFORMS
                         else [pytest.mark.slow])
            for case in layer_cases.CASES for check in TRANSFORM_CHECKS
            if check in case.checks]


@pytest.mark.parametrize("case_id, check", _transform_params())
def test_a_float32_layer_under_a_transform_is_float32_and_torch_funcs(case_id, check):
    """tests/test_nn_under_transforms.py's checks, each layer made float32 and the
    examples float32: chainrule's result is float32 (a Tensor's data, an ndarray's
    dtype), and torch.func's float32 answer within float32 rounding (on torch's float32
    and float64 layers with the same weights)."""
    case = layer_cases.BY_ID[case_id]
    ours, t32, t64 = built(case)
    layer_cases.frozen(ours)
    X, X2 = layer_input(case), layer_input(case)
    f, loss, _, _ = layer_cases.functions(case, ours, t32)
    got = layer_cases.transformed(case, check, f, loss, X, X2)
    assert_float32(got, f"{check} of {case_id}")
    answers = []
    # the Jacobian by torch's reverse mode: its float32 LSTM (mkldnn) has no forward mode
    torch_check = "jacrev" if check == "jacfwd" else check
    for layer, dtype in ((t32, np.float32), (t64, np.float64)):
        _, _, g, torch_loss = layer_cases.functions(case, ours, layer)
        wide = (lambda a: a) if case.integers else (lambda a: a.astype(dtype))
        with layer_cases.torch_kernels(case):
            answers.append(layer_cases.expected(case, torch_check, ours, layer, f, loss, g,
                                                torch_loss, wide(X), wide(X2))[-1])
    within_float32(got, answers[0], answers[1], f"{check} of {case_id}")


def test_a_float32_parameters_gradient_stays_float32_under_a_float64_loss():
    """A float32 model's loss weighted by a float64 array is float64 (NumPy's
    promotion), but each parameter's gradient keeps the parameter's dtype, as torch's
    does; an input of float64 data makes a float64 output, and the same float32
    gradients, which a second backward adds to in float32; ``zero_grad(set_to_none=
    False)`` leaves float32 zeros."""
    model = nn.Linear(3, 2, rng=seeded("linear")).float()
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    (model(cr.tensor(x)) * RNG.standard_normal((4, 2))).sum().backward()
    for name, p in model.named_parameters():
        assert_float32(p.grad, f"{name}.grad")
    theirs = torch.nn.Linear(3, 2)
    (theirs(torch.from_numpy(x)) * torch.ones(4, 2, dtype=torch.float64)).sum().backward()
    assert theirs.weight.grad.dtype == torch.float32
    model.zero_grad()
    out = model(cr.tensor(x.astype(np.float64)))
    assert out.dtype == F64
    out.sum().backward()
    once = [p.grad.copy() for p in model.parameters()]
    model(cr.tensor(x)).sum().backward()            # accumulated, as torch accumulates
    for (name, p), g in zip(model.named_parameters(), once):
        assert_float32(p.grad, f"{name}.grad")
        np.testing.assert_allclose(p.grad, 2 * g, rtol=1e-6)
    model.zero_grad(set_to_none=False)
    for name, p in model.named_parameters():
        assert_float32(p.grad, f"{name}.grad")
        assert not np.any(p.grad)


def test_a_float32_layers_other_outputs_are_float32():
    """What a layer gives besides its output: attention weights (averaged over the
    heads and not), a recurrent layer's last states (with and without a given initial
    state), dropout in training."""
    x = cr.tensor(RNG.standard_normal((2, 3, 4)).astype(np.float32))
    attention = nn.MultiheadAttention(4, 2, batch_first=True, rng=seeded("mha")).float()
    for average in (True, False):
        out, weights = attention(x, x, x, average_attn_weights=average)
        assert_float32(out, "attention output")
        assert_float32(weights, "attention weights")
    for name in ("RNN", "GRU", "LSTM"):
        layer = getattr(nn, name)(4, 5, num_layers=2, batch_first=True,
                                  rng=seeded(name)).float()
        h0 = RNG.standard_normal((2, 2, 5)).astype(np.float32)
        for state in (None, (h0, h0) if name == "LSTM" else h0):
            out, last = layer(x) if state is None else layer(x, state)
            assert_float32(out, f"{name} output")
            for h in (last if name == "LSTM" else (last,)):
                assert_float32(h, f"{name} last state")
    for dropped in (F.dropout(x, 0.3, rng=1), nn.Dropout(0.3, rng=1)(x)):
        assert_float32(dropped, "dropout in training")
        assert set(np.unique(np.round(dropped.data / x.data, 5))) <= {0.0, np.float32(
            np.round(1 / np.float32(0.7), 5))}


# =======================================================================================
# 2. Losses
# =======================================================================================

LABELS = np.array([2, 0, 1, 2, 1])
IGNORED = np.array([2, -1, 1, 2, -1])


def _probabilities():
    return seeded("probabilities").uniform(0.05, 0.95, (5, 3)).astype(np.float32)


def _targets():
    return seeded("targets").standard_normal((5, 3)).astype(np.float32)


def _t(a, dtype):
    a = np.asarray(a)
    return torch.from_numpy(a) if a.dtype.kind in "iu" else torch.tensor(a, dtype=dtype)


# (id, chainrule's loss of logits z and reduction r, torch's loss of z, r and the float dtype)
LOSSES = [
    ("cross_entropy", lambda z, r: F.cross_entropy(z, LABELS, reduction=r),
     lambda z, r, d: TF.cross_entropy(z, _t(LABELS, d), reduction=r)),
    ("cross_entropy-label_smoothing",
     lambda z, r: F.cross_entropy(z, LABELS, reduction=r, label_smoothing=0.2),
     lambda z, r, d: TF.cross_entropy(z, _t(LABELS, d), reduction=r, label_smoothing=0.2)),
    ("cross_entropy-ignore_index",
     lambda z, r: F.cross_entropy(z, IGNORED, reduction=r, ignore_index=-1),
     lambda z, r, d: TF.cross_entropy(z, _t(IGNORED, d), reduction=r, ignore_index=-1)),
    ("nll_loss", lambda z, r: F.nll_loss(F.log_softmax(z, 1), LABELS, reduction=r),
     lambda z, r, d: TF.nll_loss(TF.log_softmax(z, 1), _t(LABELS, d), reduction=r)),
    ("nll_loss-weight", lambda z, r: F.nll_loss(
        F.log_softmax(z, 1), LABELS, weight=np.array([1.0, 2.0, 0.5], np.float32),
        reduction=r),
     lambda z, r, d: TF.nll_loss(TF.log_softmax(z, 1), _t(LABELS, d),
                                 weight=_t([1.0, 2.0, 0.5], d), reduction=r)),
    ("mse_loss", lambda z, r: F.mse_loss(z, _targets(), reduction=r),
     lambda z, r, d: TF.mse_loss(z, _t(_targets(), d), reduction=r)),
    ("l1_loss", lambda z, r: F.l1_loss(z, _targets(), reduction=r),
     lambda z, r, d: TF.l1_loss(z, _t(_targets(), d), reduction=r)),
    ("smooth_l1_loss", lambda z, r: F.smooth_l1_loss(z, _targets(), reduction=r, beta=0.5),
     lambda z, r, d: TF.smooth_l1_loss(z, _t(_targets(), d), reduction=r, beta=0.5)),
    ("huber_loss", lambda z, r: F.huber_loss(z, _targets(), reduction=r, delta=0.7),
     lambda z, r, d: TF.huber_loss(z, _t(_targets(), d), reduction=r, delta=0.7)),
    ("binary_cross_entropy",
     lambda z, r: F.binary_cross_entropy(F.sigmoid(z), _probabilities(), reduction=r),
     lambda z, r, d: TF.binary_cross_entropy(torch.sigmoid(z), _t(_probabilities(), d),
                                             reduction=r)),
    ("binary_cross_entropy_with_logits",
     lambda z, r: F.binary_cross_entropy_with_logits(z, _probabilities(), reduction=r),
     lambda z, r, d: TF.binary_cross_entropy_with_logits(z, _t(_probabilities(), d),
                                                         reduction=r)),
    ("CrossEntropyLoss", lambda z, r: nn.CrossEntropyLoss(reduction=r)(z, LABELS),
     lambda z, r, d: torch.nn.CrossEntropyLoss(reduction=r)(z, _t(LABELS, d))),
    ("NLLLoss", lambda z, r: nn.NLLLoss(reduction=r)(F.log_softmax(z, 1), LABELS),
     lambda z, r, d: torch.nn.NLLLoss(reduction=r)(TF.log_softmax(z, 1), _t(LABELS, d))),
    ("MSELoss", lambda z, r: nn.MSELoss(reduction=r)(z, _targets()),
     lambda z, r, d: torch.nn.MSELoss(reduction=r)(z, _t(_targets(), d))),
    ("L1Loss", lambda z, r: nn.L1Loss(reduction=r)(z, _targets()),
     lambda z, r, d: torch.nn.L1Loss(reduction=r)(z, _t(_targets(), d))),
    ("SmoothL1Loss", lambda z, r: nn.SmoothL1Loss(reduction=r, beta=0.3)(z, _targets()),
     lambda z, r, d: torch.nn.SmoothL1Loss(reduction=r, beta=0.3)(z, _t(_targets(), d))),
    ("HuberLoss", lambda z, r: nn.HuberLoss(reduction=r, delta=0.4)(z, _targets()),
     lambda z, r, d: torch.nn.HuberLoss(reduction=r, delta=0.4)(z, _t(_targets(), d))),
    ("BCELoss", lambda z, r: nn.BCELoss(reduction=r)(F.sigmoid(z), _probabilities()),
     lambda z, r, d: torch.nn.BCELoss(reduction=r)(torch.sigmoid(z), _t(_probabilities(), d))),
    ("BCEWithLogitsLoss", lambda z, r: nn.BCEWithLogitsLoss(reduction=r)(z, _probabilities()),
     lambda z, r, d: torch.nn.BCEWithLogitsLoss(reduction=r)(z, _t(_probabilities(), d))),
]
LOSS_BY_ID = {case[0]: case for case in LOSSES}
FAST_LOSSES = {"cross_entropy", "mse_loss"}


def _loss_params():
    return [pytest.param(loss_id, reduction,
                         marks=[] if loss_id in FAST_LOSSES else [pytest.mark.slow])
            for loss_id, _, _ in LOSSES for reduction in ("mean", "sum", "none")]


@pytest.mark.parametrize("loss_id, reduction", _loss_params())
def test_a_loss_of_float32_logits_is_float32_and_torchs(loss_id, reduction):
    """The loss (each reduction) and the logits' gradient of a weighted sum of it are
    float32 and torch's float32 numbers within rounding, the fused and plain paths
    alike (the fused path runs by default)."""
    _, ours, theirs = LOSS_BY_ID[loss_id]
    logits = (RNG.standard_normal((5, 3)) * 2).astype(np.float32)
    z = cr.tensor(logits, requires_grad=True)
    value = ours(z, reduction)
    assert_float32(value, "loss")
    weights = RNG.standard_normal(value.shape).astype(np.float32)
    cr.sum(value * weights).backward()
    assert_float32(z.grad, "the logits' gradient")
    got = {}
    for dtype in (torch.float32, torch.float64):
        t = torch.tensor(logits, dtype=dtype, requires_grad=True)
        v = theirs(t, reduction, dtype)
        (v * torch.tensor(weights, dtype=dtype)).sum().backward()
        got[dtype] = (v, t.grad)
    within_float32(value, got[torch.float32][0], got[torch.float64][0], "loss")
    within_float32(z.grad, got[torch.float32][1], got[torch.float64][1], "gradient")


def test_hinge_loss_of_float32_scores_is_float32():
    scores = RNG.standard_normal(6).astype(np.float32)
    signs = np.where(RNG.standard_normal(6) > 0, 1.0, -1.0).astype(np.float32)
    z = cr.tensor(scores, requires_grad=True)
    value = F.hinge_loss(z, signs)
    assert_float32(value, "loss")
    value.backward()
    assert_float32(z.grad, "gradient")
    t = torch.tensor(scores, requires_grad=True)
    TF.relu(1 - torch.from_numpy(signs) * t).mean().backward()
    np.testing.assert_allclose(z.grad, numbers(t.grad), rtol=1e-6)


def test_the_mean_over_the_labels_kept_of_float32_logits_is_float32():
    """cross_entropy's mean with an ignore_index divides by the count of the labels
    kept, and nll_loss's by their weights: both in the logits' dtype, as torch's."""
    logits = RNG.standard_normal((4, 3)).astype(np.float32)
    labels = np.array([0, -1, 2, 1])
    z = cr.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(z, labels, ignore_index=-1)
    assert_float32(loss, "cross_entropy")
    t = torch.tensor(logits, requires_grad=True)
    expected = TF.cross_entropy(t, torch.from_numpy(labels), ignore_index=-1)
    np.testing.assert_allclose(loss.data, numbers(expected), rtol=1e-6)
    log_p = cr.tensor(np.log(np.full((2, 3), 1 / 3, np.float32)), requires_grad=True)
    loss = F.nll_loss(log_p, np.array([0, 2]))
    loss.backward()
    assert_float32(loss, "nll_loss")
    assert_float32(log_p.grad, "nll_loss's gradient")
    np.testing.assert_allclose(loss.data, np.log(np.float32(3)), rtol=1e-6)


# =======================================================================================
# 3. Optimizers and schedules
# =======================================================================================

def _net():
    """A float32 model with a batch norm, and torch's with the same weights. (The batch
    norm follows the activation: right after a Linear it would cancel the Linear's
    bias, whose gradient would be rounding noise that Adam's normalised step amplifies.)"""
    ours = nn.Sequential(nn.Linear(4, 6, rng=seeded("net", 0)), nn.Tanh(), nn.BatchNorm1d(6),
                         nn.Linear(6, 3, rng=seeded("net", 1))).float()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(),
                                 torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 3))
    theirs.load_state_dict(torch_copy(ours, torch.float32))
    return ours, theirs


def _training_step(model, opt, jit, on_python_run=None):
    """One step of training on a batch (zero_grad, cross-entropy, backward, the
    optimizer's update) returning the loss: under ``cr.jit`` when ``jit``.
    ``on_python_run()``, if given, is called each time the step runs in Python (a
    replay of the program does not)."""
    def step(x, y):
        if on_python_run is not None:
            on_python_run()
        opt.zero_grad()
        loss = F.cross_entropy(model(cr.tensor(x)), y)
        loss.backward()
        opt.step()
        return loss
    return cr.jit(step) if jit else step


def _batches(n):
    return [(RNG.standard_normal((8, 4)).astype(np.float32), RNG.integers(0, 3, 8))
            for _ in range(n)]


# (id, class name, keyword arguments): each the same in both libraries
OPTIMIZERS = [
    ("SGD", "SGD", dict(lr=0.1)),
    ("SGD-momentum", "SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD-momentum-dampening-weight_decay", "SGD",
     dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD-nesterov", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD-nesterov-maximize", "SGD", dict(lr=0.05, momentum=0.8, nesterov=True,
                                          maximize=True, weight_decay=0.1)),
    ("Adam", "Adam", dict(lr=0.01)),
    ("Adam-weight_decay-betas-eps", "Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6,
                                                 weight_decay=0.1)),
    ("Adam-amsgrad", "Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam-amsgrad-maximize", "Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("AdamW", "AdamW", dict(lr=0.01)),
    ("AdamW-weight_decay-amsgrad", "AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
]
OPTIMIZER_BY_ID = {case[0]: case for case in OPTIMIZERS}
FAST_OPTIMIZERS = {"SGD-momentum", "Adam"}

# (id, chainrule's schedule of an optimizer, torch's)
SCHEDULES = [
    ("StepLR", lambda o: optim.StepLR(o, step_size=2, gamma=0.5),
     lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)),
    ("CosineAnnealingLR", lambda o: optim.CosineAnnealingLR(o, T_max=4),
     lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4)),
    ("LinearLR", lambda o: optim.LinearLR(o, start_factor=0.2, total_iters=3),
     lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.2, total_iters=3)),
    ("LambdaLR", lambda o: optim.LambdaLR(o, lambda k: 1 / (1 + k)),
     lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda k: 1 / (1 + k))),
]
SCHEDULE_BY_ID = {case[0]: case for case in SCHEDULES}


def train_both(optimizer_id, steps=4, schedule_id=None, ours_kwargs=None):
    """Both models trained ``steps`` steps on the same batches: (chainrule's model and
    optimizer, torch's model and optimizer)."""
    _, name, kwargs = OPTIMIZER_BY_ID[optimizer_id]
    ours, theirs = _net()
    opt = getattr(optim, name)(ours.parameters(), **(ours_kwargs or kwargs))
    topt = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    schedules = ()
    if schedule_id is not None:
        _, make, make_torch = SCHEDULE_BY_ID[schedule_id]
        schedules = (make(opt), make_torch(topt))
    for x, y in _batches(steps):
        opt.zero_grad()
        loss = F.cross_entropy(ours(cr.tensor(x)), y)
        assert_float32(loss, "loss")
        loss.backward()
        opt.step()
        topt.zero_grad()
        TF.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        topt.step()
        for schedule in schedules:
            schedule.step()
    return ours, opt, theirs, topt


def assert_same_training(ours, opt, theirs, topt):
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        assert_float32(p, name)
        np.testing.assert_allclose(p.data, numbers(q), rtol=1e-5, atol=1e-6, err_msg=name)
    for name, value in ours.named_buffers():
        assert dtype_of(value) == (np.int64 if "num_batches" in name else F32), name
    torch_state = [topt.state[q] for q in theirs.parameters()]
    for (name, p), expected in zip(ours.named_parameters(), torch_state, strict=True):
        state = opt.state[p]
        assert sorted(state) == sorted(expected), (name, sorted(state), sorted(expected))
        for key, value in state.items():
            if key == "step":  # a count: torch keeps a float32 tensor, chainrule an int
                assert int(value) == int(expected[key]) and dtype_of(np.asarray(value)) != F64
                continue
            assert_float32(value, f"{name}: state {key!r}")
            np.testing.assert_allclose(value, numbers(expected[key]), rtol=1e-5, atol=1e-7,
                                       err_msg=f"{name}: {key}")
    for group, tgroup in zip(opt.param_groups, topt.param_groups, strict=True):
        assert group["lr"] == pytest.approx(tgroup["lr"], rel=1e-12)


@pytest.mark.parametrize("optimizer_id", [
    pytest.param(c[0], marks=[] if c[0] in FAST_OPTIMIZERS else [pytest.mark.slow])
    for c in OPTIMIZERS])
def test_an_optimizer_trains_a_float32_model_as_torch_does(optimizer_id):
    assert_same_training(*train_both(optimizer_id))


@pytest.mark.slow
@pytest.mark.parametrize("schedule_id", [c[0] for c in SCHEDULES])
@pytest.mark.parametrize("optimizer_id", ["SGD-momentum", "Adam-amsgrad", "AdamW"])
def test_a_schedule_on_a_float32_model_trains_as_torch_does(optimizer_id, schedule_id):
    assert_same_training(*train_both(optimizer_id, steps=5, schedule_id=schedule_id))


# A hyperparameter given as a NumPy float64 number (read from a NumPy config, from a
# np.logspace sweep, returned by a LambdaLR's function) is a float64 scalar, which NumPy
# 2 does not demote: multiplied into a float32 array it would make a float64 array.
# torch reads such a scalar as a number, and so must chainrule.
NUMPY_HYPERPARAMETERS = [
    (optimizer_id, key) for optimizer_id in ("SGD-momentum-dampening-weight_decay",
                                             "Adam-weight_decay-betas-eps",
                                             "AdamW-weight_decay-amsgrad")
    for key, value in OPTIMIZER_BY_ID[optimizer_id][2].items()
    if isinstance(value, (float, tuple))]


@pytest.mark.slow
@pytest.mark.parametrize("optimizer_id, key", NUMPY_HYPERPARAMETERS)
def test_a_numpy_float64_hyperparameter_keeps_the_state_float32(optimizer_id, key):
    kwargs = dict(OPTIMIZER_BY_ID[optimizer_id][2])
    kwargs[key] = (tuple(map(np.float64, kwargs[key])) if isinstance(kwargs[key], tuple)
                   else np.float64(kwargs[key]))
    assert_same_training(*train_both(optimizer_id, steps=3, ours_kwargs=kwargs))


@pytest.mark.slow
@pytest.mark.parametrize("optimizer_id, key", NUMPY_HYPERPARAMETERS)
def test_a_numpy_float64_hyperparameter_keeps_a_jitted_steps_state_float32(optimizer_id,
                                                                           key):
    """The same under cr.jit, where the learning rate is an input of the program: the
    jitted run with the NumPy number is the eager run with the Python number."""
    _, name, kwargs = OPTIMIZER_BY_ID[optimizer_id]
    numpy_kwargs = dict(kwargs)
    numpy_kwargs[key] = (tuple(map(np.float64, kwargs[key])) if isinstance(kwargs[key], tuple)
                         else np.float64(kwargs[key]))
    batches = _batches(3)
    runs = []
    for jit, hyperparameters in ((False, kwargs), (True, numpy_kwargs)):
        model = _mlp()
        opt = getattr(optim, name)(model.parameters(), **hyperparameters)

        f = _training_step(model, opt, jit)
        for x, y in batches:
            f(x, y)
        runs.append((model, opt))
    (eager, opt_e), (jitted, opt_j) = runs
    for (name_, p), q in zip(jitted.named_parameters(), eager.parameters()):
        assert_float32(p, name_)
        np.testing.assert_allclose(p.data, q.data, rtol=1e-6, atol=1e-7)
        for state_key, value in opt_j.state[p].items():
            if state_key != "step":
                assert_float32(value, f"{name_}: state {state_key!r}")
                np.testing.assert_allclose(value, opt_e.state[q][state_key], rtol=1e-6,
                                           atol=1e-9)


def test_reproducer_jitted_adamw_with_a_numpy_learning_rate():
    w = cr.tensor(np.ones(2, np.float32), requires_grad=True)
    opt = optim.AdamW([w], lr=np.float64(0.1), weight_decay=0.1)

    @cr.jit
    def step():
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    step()
    step()
    # eagerly (and in torch) exp_avg is float32
    assert opt.state[w]["exp_avg"].dtype == np.float32


def test_adamw_under_a_schedule_of_numpy_numbers_keeps_its_state_float32():
    """A LambdaLR whose function returns NumPy float64 numbers sets a NumPy lr: AdamW's
    decay and its moments stay float32, and torch's numbers."""
    start = RNG.standard_normal(3).astype(np.float32)
    w = cr.tensor(start, requires_grad=True)
    t = torch.tensor(start, requires_grad=True)
    opt = optim.AdamW([w], lr=0.1, weight_decay=0.1)
    topt = torch.optim.AdamW([t], lr=0.1, weight_decay=0.1)
    schedules = (optim.LambdaLR(opt, lambda k: np.float64(0.5) ** k),
                 torch.optim.lr_scheduler.LambdaLR(topt, lambda k: np.float64(0.5) ** k))
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        topt.zero_grad()
        (t * t).sum().backward()
        topt.step()
        for schedule in schedules:
            schedule.step()
    assert_float32(w, "parameter")
    np.testing.assert_allclose(w.data, numbers(t), rtol=1e-6)
    for key in ("exp_avg", "exp_avg_sq"):
        assert_float32(opt.state[w][key], key)
        np.testing.assert_allclose(opt.state[w][key], numbers(topt.state[t][key]), rtol=1e-6)


@pytest.mark.slow
def test_resuming_from_a_saved_float32_optimizer_is_the_uninterrupted_run(tmp_path):
    """Model and optimizer saved with cr.save after two steps, loaded into a new model
    and optimizer: two more steps give the uninterrupted run's float32 numbers exactly,
    and every array read back is float32."""
    batches = _batches(4)
    runs = []
    for interrupted in (False, True):
        model, _ = _net()
        opt = optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
        for i, (x, y) in enumerate(batches):
            if interrupted and i == 2:
                cr.save(model, tmp_path / "model.safetensors")
                cr.save(opt.state_dict(), tmp_path / "opt.safetensors")
                model, _ = _net()
                model.load_state_dict(cr.load(tmp_path / "model.safetensors"))
                opt = optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
                state = cr.load(tmp_path / "opt.safetensors")
                for entries in state["state"].values():
                    for key, value in entries.items():
                        if key != "step":
                            assert_float32(value, f"saved {key}")
                opt.load_state_dict(state)
            opt.zero_grad()
            F.cross_entropy(model(cr.tensor(x)), y).backward()
            opt.step()
        runs.append((model, opt))
    (a, opt_a), (b, opt_b) = runs
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert dtype_of(p) == dtype_of(q)
        np.testing.assert_array_equal(p, q, err_msg=name)
    for p, q in zip(a.parameters(), b.parameters()):
        for key, value in opt_b.state[q].items():
            if key != "step":
                assert_float32(value, key)
                np.testing.assert_array_equal(value, opt_a.state[p][key])


def test_a_float64_optimizer_state_loaded_for_float32_parameters_is_cast_as_torch_does():
    """torch's Optimizer.load_state_dict casts each saved state to its parameter's
    dtype (a float64 run resumed in float32): chainrule's too, the step count kept."""
    runs = []
    for lib in (cr, torch):
        source = lib.tensor(np.ones(2), requires_grad=True)
        make = optim.Adam if lib is cr else torch.optim.Adam
        saved = make([source], lr=0.1)
        (source * source).sum().backward()
        saved.step()
        target = lib.tensor(np.ones(2, np.float32), requires_grad=True)
        opt = make([target], lr=0.1)
        opt.load_state_dict(saved.state_dict())
        runs.append(opt.state[target])
    ours, theirs = runs
    assert sorted(ours) == sorted(theirs)
    for key in ("exp_avg", "exp_avg_sq"):
        assert_float32(ours[key], key)
        assert dtype_of(theirs[key]) == F32
        np.testing.assert_allclose(ours[key], numbers(theirs[key]), rtol=1e-6)
    assert int(ours["step"]) == int(theirs["step"]) == 1


# ---------------------------------------------------------------------------------------
# JAX's optimizers (chainrule.example_libraries.optimizers) on float32 parameters
# ---------------------------------------------------------------------------------------

# (id, the optimizer made from a module with JAX's names): chainrule's and JAX's
JAX_OPTIMIZERS = [
    ("sgd", lambda M: M.sgd(0.1)),
    ("momentum", lambda M: M.momentum(0.1, 0.9)),
    ("nesterov", lambda M: M.nesterov(0.1, 0.9)),
    ("adagrad", lambda M: M.adagrad(0.1)),
    ("rmsprop", lambda M: M.rmsprop(0.01)),
    ("rmsprop_momentum", lambda M: M.rmsprop_momentum(0.01)),
    ("adam", lambda M: M.adam(0.01)),
    ("adamax", lambda M: M.adamax(0.01)),
    ("adam-exponential_decay", lambda M: M.adam(M.exponential_decay(0.01, 2, 0.5))),
    ("sgd-inverse_time_decay", lambda M: M.sgd(M.inverse_time_decay(0.1, 2, 0.5))),
    ("sgd-polynomial_decay", lambda M: M.sgd(M.polynomial_decay(0.1, 3, 0.01))),
    ("momentum-piecewise_constant",
     lambda M: M.momentum(M.piecewise_constant([2], [0.1, 0.01]), 0.9)),
]


@pytest.mark.slow
@pytest.mark.parametrize("optimizer_id", [case[0] for case in JAX_OPTIMIZERS])
def test_a_jax_style_optimizer_keeps_the_dtypes_jax_keeps(optimizer_id):
    """Four steps of a JAX-style optimizer on float32 parameters, against JAX's own in
    its float64 mode (chainrule's conventions): parameters and every leaf of the state
    have JAX's dtypes (float32, except where JAX itself promotes: piecewise_constant's
    values are a float64 array there) and JAX's numbers."""
    import jax.numpy as jnp
    from jax.example_libraries import optimizers as jax_optimizers

    from chainrule import tree_util
    from chainrule.example_libraries import optimizers as cr_optimizers

    jax.config.update("jax_enable_x64", True)    # put back after the test (conftest.py)
    make = dict(JAX_OPTIMIZERS)[optimizer_id]
    X = RNG.standard_normal((5, 3)).astype(np.float32)
    T = RNG.standard_normal((5, 2)).astype(np.float32)
    start = {"w": RNG.standard_normal((3, 2)).astype(np.float32),
             "b": np.zeros(2, np.float32)}
    runs = []
    for module, grad, lib, leaves_of in (
            (cr_optimizers, cr.grad, cr, tree_util.tree_leaves),
            (jax_optimizers, jax.grad, jnp, jax.tree_util.tree_leaves)):
        def loss(p, lib=lib):
            return lib.mean((lib.tanh(X @ p["w"]) + p["b"] - T) ** 2)
        init, update, get_params = make(module)
        state = init(start)
        for i in range(4):
            state = update(i, grad(loss)(get_params(state)), state)
        runs.append((get_params(state), leaves_of(state)))
    (params, leaves), (jax_params, jax_leaves) = runs
    for key in start:
        assert dtype_of(params[key]) == dtype_of(jax_params[key]), key
        np.testing.assert_allclose(params[key], np.asarray(jax_params[key]), rtol=1e-5,
                                   atol=1e-6, err_msg=key)
    assert [dtype_of(np.asarray(a)) for a in leaves] == \
        [dtype_of(np.asarray(a)) for a in jax_leaves]


# =======================================================================================
# 4. Checkpoints
# =======================================================================================

def _trained_net():
    """The float32 model after a step of training, its running statistics moved."""
    model, _ = _net()
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = _batches(1)[0]
    F.cross_entropy(model(cr.tensor(x)), y).backward()
    opt.step()
    return model


def _expected_dtype(name):
    return np.int64 if name.endswith("num_batches_tracked") else F32


def test_a_float32_model_saved_and_loaded_stays_float32(tmp_path):
    """cr.save writes float32 tensors (safetensors' F32, as safetensors.torch reads
    them), cr.load gives them back float32 and equal, and a fresh float32 model loaded
    from them computes the same numbers."""
    from safetensors.torch import load_file

    model = _trained_net()
    path = tmp_path / "model.safetensors"
    cr.save(model, path)
    on_disk = load_file(path)
    loaded = cr.load(path)
    state = model.state_dict()
    assert list(loaded) == list(state) and set(on_disk) == set(state)
    for name, value in state.items():
        assert dtype_of(loaded[name]) == dtype_of(on_disk[name]) == _expected_dtype(name), name
        np.testing.assert_array_equal(loaded[name], value)
    copy, _ = _net()
    copy.load_state_dict(loaded)
    copy.eval()
    model.eval()
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    out = copy(cr.tensor(x))
    assert_float32(out, "output")
    np.testing.assert_array_equal(out.data, model(cr.tensor(x)).data)


@pytest.mark.parametrize("compress", [False, True])
def test_a_float32_model_in_an_npz_checkpoint_stays_float32(tmp_path, compress):
    model = _trained_net()
    path = tmp_path / "model.npz"
    cr.save(model, path, compress=compress)
    loaded = cr.load(path)
    for name, value in model.state_dict().items():
        assert dtype_of(loaded[name]) == _expected_dtype(name), name
        np.testing.assert_array_equal(loaded[name], value)


def test_a_float32_state_loaded_into_a_float64_model_keeps_it_float64():
    """The other way, as torch's load_state_dict: the model's dtype wins."""
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.BatchNorm1d(6), nn.Linear(6, 3))
    state = _trained_net().state_dict()
    model.load_state_dict(state)
    for name, value in model.state_dict().items():
        expected = np.int64 if name.endswith("num_batches_tracked") else F64
        assert dtype_of(value) == expected, name
        np.testing.assert_array_equal(value, state[name])


def test_a_float64_state_loaded_into_a_float32_model_keeps_it_float32():
    """torch's load_state_dict copies into each parameter and keeps its dtype:
    chainrule's too."""
    model, _ = _net()
    state = {k: np.asarray(v, dtype=F64) if dtype_of(v) == F32 else v
             for k, v in _trained_net().state_dict().items()}
    model.load_state_dict(state)
    for name, value in model.state_dict().items():
        assert dtype_of(value) == _expected_dtype(name), name
        np.testing.assert_array_equal(value, np.asarray(state[name]).astype(value.dtype))


def test_torchs_float32_state_dict_loads_into_a_float32_model():
    """torch's float32 weights (its own initialisation, the running statistics moved by
    a forward pass in training) load into chainrule's float32 model, float32, and both
    compute the same float32 numbers."""
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(),
                                 torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 3))
    x, y = _batches(1)[0]
    TF.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
    ours, _ = _net()
    assert ours.load_torch_state_dict(theirs.state_dict()) == ([], [])
    for name, value in ours.state_dict().items():
        assert dtype_of(value) == _expected_dtype(name), name
    exported = ours.torch_state_dict()
    for name, value in theirs.state_dict().items():
        assert dtype_of(exported[name]) == dtype_of(value), name
        np.testing.assert_array_equal(exported[name], numbers(value), err_msg=name)
    ours.eval()
    theirs.eval()
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    out = ours(cr.tensor(x))
    assert_float32(out, "output")
    np.testing.assert_allclose(out.data, numbers(theirs(torch.from_numpy(x))), rtol=1e-5,
                               atol=1e-6)


def test_torchs_float64_state_dict_loads_into_a_float32_model_as_float32():
    """As torch's own load_state_dict copies a float64 tensor into a float32 parameter,
    chainrule's load_torch_state_dict keeps the model float32."""
    ours, _ = _net()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(),
                                 torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 3)).double()
    ours.load_torch_state_dict(theirs.state_dict())
    for name, value in ours.state_dict().items():
        assert dtype_of(value) == _expected_dtype(name), name
    exported = ours.torch_state_dict()
    for name, value in theirs.state_dict().items():
        np.testing.assert_array_equal(exported[name], numbers(value).astype(
            exported[name].dtype), err_msg=name)


def test_an_optimizer_made_before_float_trains_the_cast_parameters():
    """``.float()`` casts each parameter in place, as torch's does: an optimizer made
    before it holds the same parameters and updates them, in float32."""
    model = nn.Sequential(nn.Linear(4, 6, rng=seeded("net", 0)), nn.Tanh(),
                          nn.Linear(6, 3, rng=seeded("net", 1)))
    before = list(model.parameters())
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    assert model.float() is model
    assert all(p is q for p, q in zip(model.parameters(), before, strict=True))
    start = [p.data.copy() for p in model.parameters()]
    for x, y in _batches(2):
        opt.zero_grad()
        F.cross_entropy(model(cr.tensor(x)), y).backward()
        opt.step()
    for (name, p), s in zip(model.named_parameters(), start):
        assert_float32(p, name)
        assert_float32(opt.state[p]["momentum_buffer"], f"{name}: momentum_buffer")
        assert not np.array_equal(p.data, s), f"{name} was not updated"


# =======================================================================================
# 5. The transforms on a float32 model
# =======================================================================================

def _functional(ours_model):
    """The model's parameters as a list of float32 arrays, and its loss as a function of
    them, written with nn.functional (chainrule) and torch.nn.functional (torch)."""
    params = [np.array(p.data) for p in ours_model.parameters()]

    def forward(lib, params, x):
        W1, b1, W2, b2 = params
        if lib == "cr":
            return F.linear(cr.tanh(F.linear(x, W1, b1)), W2, b2)
        return TF.linear(torch.tanh(TF.linear(x, W1, b1)), W2, b2)
    return params, forward


def _mlp():
    return nn.Sequential(nn.Linear(4, 6, rng=seeded("mlp", 0)), nn.Tanh(),
                         nn.Linear(6, 3, rng=seeded("mlp", 1))).float()


def test_cr_grad_of_a_loss_of_float32_parameters_is_float32_and_the_eager_gradient():
    model = _mlp()
    params, forward = _functional(model)
    x, y = _batches(1)[0]
    grads = cr.grad(lambda ps: F.cross_entropy(forward("cr", ps, x), y))(params)
    F.cross_entropy(model(cr.tensor(x)), y).backward()
    for g, p in zip(grads, model.parameters(), strict=True):
        assert type(g) is np.ndarray
        assert_float32(g, "cr.grad's gradient")
        np.testing.assert_allclose(g, p.grad, rtol=1e-6, atol=1e-7)
    wanted = tf.grad(lambda ps: TF.cross_entropy(forward("torch", ps, torch.from_numpy(x)),
                                                 torch.from_numpy(y)))(
        [torch.from_numpy(p) for p in params])
    for g, w in zip(grads, wanted):
        np.testing.assert_allclose(g, numbers(w), rtol=1e-5, atol=1e-6)


def _two(x):
    """The same float32 numbers for torch's float32 and float64 runs."""
    return {torch.float32: torch.from_numpy(x), torch.float64: torch.from_numpy(x).double()}


# (id, chainrule's result from (forward, params, x, labels, tangent), torch.func's from the
# same, each given torch's arrays): transforms in the parameters of a float32 model
PARAMETER_TRANSFORMS = [
    ("value_and_grad",
     lambda fw, ps, x, y, v: cr.value_and_grad(
         lambda ps: F.cross_entropy(fw("cr", ps, x), y))(ps),
     lambda fw, ps, x, y, v: tf.grad_and_value(
         lambda ps: TF.cross_entropy(fw("torch", ps, x), y))(ps)[::-1]),
    ("jacfwd-first_weight",
     lambda fw, ps, x, y, v: cr.jacfwd(lambda w: fw("cr", [w] + ps[1:], x))(ps[0]),
     lambda fw, ps, x, y, v: tf.jacfwd(lambda w: fw("torch", [w] + ps[1:], x))(ps[0])),
    ("jacrev-last_weight",
     lambda fw, ps, x, y, v: cr.jacrev(lambda w: fw("cr", ps[:2] + [w, ps[3]], x))(ps[2]),
     lambda fw, ps, x, y, v: tf.jacrev(lambda w: fw("torch", ps[:2] + [w, ps[3]], x))(ps[2])),
    ("hessian-last_weight",
     lambda fw, ps, x, y, v: cr.hessian(
         lambda w: F.cross_entropy(fw("cr", ps[:2] + [w, ps[3]], x), y))(ps[2]),
     lambda fw, ps, x, y, v: tf.hessian(
         lambda w: TF.cross_entropy(fw("torch", ps[:2] + [w, ps[3]], x), y))(ps[2])),
    ("jvp",
     lambda fw, ps, x, y, v: cr.jvp(lambda w: fw("cr", [w] + ps[1:], x), (ps[0],), (v,)),
     lambda fw, ps, x, y, v: tf.jvp(lambda w: fw("torch", [w] + ps[1:], x), (ps[0],), (v,))),
    ("vjp",
     lambda fw, ps, x, y, v: cr.vjp(lambda w: fw("cr", [w] + ps[1:], x), ps[0])[1](
         fw("cr", ps, x).data),
     lambda fw, ps, x, y, v: tf.vjp(lambda w: fw("torch", [w] + ps[1:], x), ps[0])[1](
         fw("torch", ps, x))),
    ("vmap-ensemble",    # five copies of the first weight, each scaled
     lambda fw, ps, x, y, v: cr.vmap(lambda w: fw("cr", [w] + ps[1:], x))(
         ps[0] * np.linspace(0.5, 1.5, 5, dtype=np.float32)[:, None, None]),
     lambda fw, ps, x, y, v: tf.vmap(lambda w: fw("torch", [w] + ps[1:], x))(
         ps[0] * torch.linspace(0.5, 1.5, 5, dtype=ps[0].dtype)[:, None, None])),
]


@pytest.mark.parametrize("transform_id", [
    pytest.param(c[0], marks=[] if c[0] == "value_and_grad" else [pytest.mark.slow])
    for c in PARAMETER_TRANSFORMS])
def test_a_transform_in_a_float32_models_parameters_is_float32_and_torch_funcs(
        transform_id):
    """Each result (every array of it) is float32, and torch.func's within float32
    rounding, on the same float32 weights and data."""
    _, ours, theirs = {c[0]: c for c in PARAMETER_TRANSFORMS}[transform_id]
    params, forward = _functional(_mlp())
    x, y = _batches(1)[0]
    v = RNG.standard_normal(params[0].shape).astype(np.float32)
    got = ours(forward, params, x, y, v)
    answers = {}
    for dtype in (torch.float32, torch.float64):
        answers[dtype] = theirs(forward, [_two(p)[dtype] for p in params], _two(x)[dtype],
                                torch.from_numpy(y), _two(v)[dtype])
    got = got if isinstance(got, tuple) else (got,)
    t32 = answers[torch.float32]
    t32, t64 = ((t32, answers[torch.float64]) if isinstance(t32, tuple)
                else ((t32,), (answers[torch.float64],)))
    assert len(got) == len(t32)
    for k, (a, b, c) in enumerate(zip(got, t32, t64)):
        leaves = a if isinstance(a, list) else [a]
        for leaf, b_leaf, c_leaf in zip(leaves, b if isinstance(b, (list, tuple)) else [b],
                                        c if isinstance(c, (list, tuple)) else [c],
                                        strict=True):
            assert_float32(leaf, f"{transform_id} result {k}")
            within_float32(leaf, b_leaf, c_leaf, f"{transform_id} result {k}")


@pytest.mark.slow
def test_per_example_gradients_of_a_float32_model_are_float32_and_torchs():
    """cr.vmap(cr.grad) of a squared error, per example: float32, each example's the
    gradient of that example alone, and torch.func's per-example gradients."""
    model = _mlp()
    params, forward = _functional(model)
    X = RNG.standard_normal((5, 4)).astype(np.float32)
    T = RNG.standard_normal((5, 3)).astype(np.float32)
    loss = lambda ps, x, t: F.mse_loss(forward("cr", ps, x), t)              # noqa: E731
    grads = cr.vmap(cr.grad(loss), in_axes=(None, 0, 0))(params, X, T)
    torch_loss = lambda ps, x, t: TF.mse_loss(forward("torch", ps, x), t)    # noqa: E731
    wanted = tf.vmap(tf.grad(torch_loss), in_dims=(None, 0, 0))(
        [torch.from_numpy(p) for p in params], torch.from_numpy(X), torch.from_numpy(T))
    for g, w, p in zip(grads, wanted, params, strict=True):
        assert_float32(g, "per-example gradient")
        assert g.shape == (5,) + p.shape
        np.testing.assert_allclose(g, numbers(w), rtol=1e-5, atol=1e-6)
    for i in (0, 4):
        alone = cr.grad(loss)(params, X[i], T[i])
        for g, a in zip(grads, alone):
            np.testing.assert_allclose(g[i], a, rtol=1e-6, atol=1e-7)


# (id, chainrule's loss of one example's logits z (C,) and label y, torch's): the
# example as a batch of one, and as itself (a 0-d label, which both libraries take)
PER_EXAMPLE_LOSSES = [
    ("cross_entropy", lambda z, y: F.cross_entropy(z[None], y[None]),
     lambda z, y: TF.cross_entropy(z[None], y[None])),
    ("cross_entropy-unbatched", lambda z, y: F.cross_entropy(z, y),
     lambda z, y: TF.cross_entropy(z, y)),
    ("cross_entropy-label_smoothing",
     lambda z, y: F.cross_entropy(z[None], y[None], label_smoothing=0.1),
     lambda z, y: TF.cross_entropy(z[None], y[None], label_smoothing=0.1)),
    ("cross_entropy-ignore_index",
     lambda z, y: F.cross_entropy(z[None], y[None], reduction="sum", ignore_index=1),
     lambda z, y: TF.cross_entropy(z[None], y[None], reduction="sum", ignore_index=1)),
    ("nll_loss", lambda z, y: F.nll_loss(F.log_softmax(z[None], 1), y[None]),
     lambda z, y: TF.nll_loss(TF.log_softmax(z[None], 1), y[None])),
]


@pytest.mark.parametrize("loss_id", [
    pytest.param(c[0], marks=[] if c[0] == "cross_entropy" else [pytest.mark.slow])
    for c in PER_EXAMPLE_LOSSES])
def test_per_example_classification_gradients_are_float32_and_torch_funcs(loss_id):
    """cr.vmap(cr.grad) of a classification loss of one example, its label batched
    with it: float32, each example's gradient alone, and torch.func's."""
    _, ours, theirs = {c[0]: c for c in PER_EXAMPLE_LOSSES}[loss_id]
    W = RNG.standard_normal((3, 4)).astype(np.float32)
    X = RNG.standard_normal((5, 4)).astype(np.float32)
    Y = np.array([0, 1, 2, 1, 0])
    per_example = cr.grad(lambda w, x, y: ours(F.linear(x, w), y))
    grads = cr.vmap(per_example, in_axes=(None, 0, 0))(W, X, Y)
    assert_float32(grads, "per-example gradients")
    assert grads.shape == (5, 3, 4)
    wanted = tf.vmap(tf.grad(lambda w, x, y: theirs(TF.linear(x, w), y)),
                     in_dims=(None, 0, 0))(torch.from_numpy(W), torch.from_numpy(X),
                                           torch.from_numpy(Y))
    np.testing.assert_allclose(grads, numbers(wanted), rtol=1e-5, atol=1e-6)
    for i in range(5):
        np.testing.assert_allclose(grads[i], per_example(W, X[i], Y[i]), rtol=1e-6,
                                   atol=1e-7)


@pytest.mark.parametrize("optimizer_id", [
    pytest.param(c[0], marks=[] if c[0] in FAST_OPTIMIZERS else [pytest.mark.slow])
    for c in OPTIMIZERS])
def test_a_jitted_float32_training_step_replays_the_eager_one(optimizer_id):
    """cr.jit of a whole step (zero_grad, forward, backward, the optimizer's update):
    traced at the first steps (the second has gradients and an optimizer state the first
    had not) and replayed on the batches after, without running the step in Python;
    the losses, the parameters and the optimizer's state are float32 and the eager
    run's."""
    _, name, kwargs = OPTIMIZER_BY_ID[optimizer_id]
    batches = _batches(5)
    runs, traced = [], []
    for jit in (False, True):
        model = _mlp()
        opt = getattr(optim, name)(model.parameters(), **kwargs)

        f = _training_step(model, opt, jit, lambda jit=jit: traced.append(jit))
        losses = [f(x, y) for x, y in batches[:2]]
        traces = traced.count(True)
        losses += [f(x, y) for x, y in batches[2:]]
        assert traced.count(True) == traces, "a replay ran the step in Python"
        runs.append((model, opt, losses))
    (eager, opt_e, losses_e), (jitted, opt_j, losses_j) = runs
    for a, b in zip(losses_j, losses_e):
        assert_float32(a, "jitted loss")
        np.testing.assert_allclose(numbers(a), numbers(b), rtol=1e-6)
    for p, q in zip(jitted.parameters(), eager.parameters()):
        assert_float32(p, "jitted parameter")
        np.testing.assert_allclose(p.data, q.data, rtol=1e-6, atol=1e-7)
        for key, value in opt_j.state[p].items():
            if key != "step":
                assert_float32(value, f"jitted state {key!r}")
                np.testing.assert_allclose(value, opt_e.state[q][key], rtol=1e-6, atol=1e-8)


# (id, chainrule's loss of logits z and target y, where y is an argument of the jitted
# function, traced as the logits are)
JIT_LOSSES = [
    ("cross_entropy", lambda z, y: F.cross_entropy(z, y), "labels"),
    ("cross_entropy-ignore_index", lambda z, y: F.cross_entropy(z, y, ignore_index=-1),
     "labels"),
    ("cross_entropy-label_smoothing",
     lambda z, y: F.cross_entropy(z, y, label_smoothing=0.1), "labels"),
    ("nll_loss", lambda z, y: F.nll_loss(F.log_softmax(z, 1), y), "labels"),
    ("nll_loss-weight", lambda z, y: F.nll_loss(
        F.log_softmax(z, 1), y, weight=np.array([1.0, 2.0, 0.5], np.float32)), "labels"),
    ("mse_loss", lambda z, y: F.mse_loss(z, y), "targets"),
    ("huber_loss", lambda z, y: F.huber_loss(z, y, delta=0.5), "targets"),
    ("binary_cross_entropy_with_logits",
     lambda z, y: F.binary_cross_entropy_with_logits(z, y), "probabilities"),
]


def _jit_target(kind):
    if kind == "labels":
        return RNG.integers(0, 3, 5)
    if kind == "targets":
        return RNG.standard_normal((5, 3)).astype(np.float32)
    return RNG.uniform(0.05, 0.95, (5, 3)).astype(np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("loss_id", [case[0] for case in JIT_LOSSES])
def test_a_jitted_loss_of_float32_logits_replays_the_eager_one(loss_id):
    """cr.jit(cr.value_and_grad(loss)) of float32 logits and a target, both arguments,
    traced at one batch and replayed at another: float32, and the eager numbers."""
    _, loss, kind = {c[0]: c for c in JIT_LOSSES}[loss_id]
    f = cr.jit(cr.value_and_grad(loss))
    z1, z2 = (RNG.standard_normal((5, 3)).astype(np.float32) for _ in range(2))
    y1, y2 = _jit_target(kind), _jit_target(kind)
    f(z1, y1)
    value, grad = f(z2, y2)
    eager_value, eager_grad = cr.value_and_grad(loss)(z2, y2)
    assert_float32(value, "jitted loss")
    assert_float32(grad, "jitted gradient")
    np.testing.assert_allclose(numbers(value), numbers(eager_value), rtol=1e-6)
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-6, atol=1e-8)


def test_reproducer_nll_loss_under_jit():
    f = cr.jit(lambda log_p, y: F.nll_loss(log_p, y))
    log_p = np.log(np.full((2, 3), 1 / 3, np.float32))
    # torch.compile(lambda log_p, y: TF.nll_loss(log_p, y)) gives log 3, float32
    np.testing.assert_allclose(numbers(f(log_p, np.array([0, 2]))), np.log(3), rtol=1e-6)


def test_jitted_gradient_and_forward_of_a_float32_model_on_new_data():
    """cr.jit of cr.grad of the functional loss, and of the model's forward, traced at
    one batch and replayed at another: float32 and the eager numbers there."""
    model = _mlp()
    params, forward = _functional(model)
    (x1, y1), (x2, y2) = _batches(2)
    loss = lambda ps, x, y: F.cross_entropy(forward("cr", ps, x), y)    # noqa: E731
    jitted = cr.jit(cr.grad(loss))
    jitted(params, x1, y1)
    got = jitted(params, x2, y2)
    for g, e in zip(got, cr.grad(loss)(params, x2, y2), strict=True):
        assert_float32(g, "jitted gradient")
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
    f = cr.jit(lambda x: model(cr.tensor(x)))
    f(x1)
    out = f(x2)
    assert_float32(out, "jitted output")
    np.testing.assert_allclose(numbers(out), model(cr.tensor(x2)).data, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_a_jitted_step_with_a_batch_norm_and_a_schedule_replays_the_eager_one():
    """The running statistics are state cr.jit carries, and a schedule changes the
    learning rate between calls (a program input): after five steps the parameters,
    the running statistics and Adam's moments are float32 and the eager run's."""
    batches = _batches(5)
    runs = []
    for jit in (False, True):
        model, _ = _net()
        opt = optim.Adam(model.parameters(), lr=0.02)
        schedule = optim.CosineAnnealingLR(opt, T_max=5)

        f = _training_step(model, opt, jit)
        for x, y in batches:
            assert_float32(f(x, y), "loss")
            schedule.step()
        runs.append((model, opt))
    (eager, opt_e), (jitted, opt_j) = runs
    for (name, a), b in zip(jitted.state_dict().items(), eager.state_dict().values()):
        assert dtype_of(a) == _expected_dtype(name), name
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
    for p, q in zip(jitted.parameters(), eager.parameters()):
        for key in ("exp_avg", "exp_avg_sq"):
            assert_float32(opt_j.state[p][key], key)
            np.testing.assert_allclose(opt_j.state[p][key], opt_e.state[q][key], rtol=1e-6,
                                       atol=1e-9)
