"""chainrule.optim against torch.optim, step by step.

1. Every optimizer configuration runs 20 steps on the same starting parameters and the
   same gradient rule (Rosenbrock's gradient, computed with NumPy from each side's own
   current parameters) in chainrule and in torch; the parameters must agree after every
   step (float64: to 1e-12 relative; float32: to float32 precision, dtype kept).
   An optimizer with maximize=True climbs the same function turned upside down.
2. The scalar engine: the same optimizers on Values train a micrograd-style problem and
   give the numbers of the Tensor path.
3. zero_grad, None gradients, argument checks, state_dict round trips.
4. Schedules against torch.optim.lr_scheduler.
5. Under cr.jit: every configuration's training step, replayed, gives the eager step's
   numbers to the last bit.
"""

import math

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.optim import (SGD, Adam, AdamW, CosineAnnealingLR, LambdaLR, LinearLR,
                             LinearWarmup, StepLR)
from chainrule.tensor import Tensor
from chainrule.scalar.value import Value
from jitted_training import blocks, train_step, training_problem  # noqa: F401 (blocks: a fixture)

STEPS = 20

# (name, chainrule class, torch class, keyword arguments shared by both)
CONFIGS = [
    ("sgd", SGD, torch.optim.SGD, dict(lr=1e-3)),
    ("sgd-momentum", SGD, torch.optim.SGD, dict(lr=1e-3, momentum=0.9)),
    ("sgd-dampening", SGD, torch.optim.SGD, dict(lr=1e-3, momentum=0.8, dampening=0.3)),
    ("sgd-nesterov", SGD, torch.optim.SGD, dict(lr=1e-3, momentum=0.9, nesterov=True)),
    ("sgd-weight-decay", SGD, torch.optim.SGD, dict(lr=1e-3, weight_decay=0.1)),
    ("sgd-all", SGD, torch.optim.SGD,
     dict(lr=5e-4, momentum=0.7, nesterov=True, weight_decay=0.05)),
    ("adam", Adam, torch.optim.Adam, dict(lr=1e-2)),
    ("adam-betas", Adam, torch.optim.Adam, dict(lr=3e-2, betas=(0.5, 0.9), eps=1e-6)),
    ("adam-weight-decay", Adam, torch.optim.Adam, dict(lr=1e-2, weight_decay=0.1)),
    ("adamw", AdamW, torch.optim.AdamW, dict(lr=1e-2)),
    ("adamw-weight-decay", AdamW, torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.3)),
    ("sgd-maximize", SGD, torch.optim.SGD, dict(lr=1e-3, maximize=True)),
    ("sgd-maximize-all", SGD, torch.optim.SGD,
     dict(lr=5e-4, momentum=0.7, nesterov=True, weight_decay=0.05, maximize=True)),
    # beta2 = 0.8: v forgets fast enough to fall within 20 steps, where amsgrad's
    # maximum takes over (with 0.999 it only grows, and amsgrad changes nothing)
    ("adam-amsgrad", Adam, torch.optim.Adam, dict(lr=1e-2, betas=(0.9, 0.8), amsgrad=True)),
    ("adam-amsgrad-maximize-decay", Adam, torch.optim.Adam,
     dict(lr=1e-2, betas=(0.9, 0.8), amsgrad=True, maximize=True, weight_decay=0.1)),
    ("adam-maximize", Adam, torch.optim.Adam, dict(lr=1e-2, maximize=True)),
    ("adamw-amsgrad", AdamW, torch.optim.AdamW,
     dict(lr=1e-2, betas=(0.9, 0.8), weight_decay=0.3, amsgrad=True)),
    ("adamw-amsgrad-maximize", AdamW, torch.optim.AdamW,
     dict(lr=1e-2, betas=(0.9, 0.8), amsgrad=True, maximize=True)),
]


def rosenbrock_grad(x):
    """The gradient of sum(10 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2) over the flattened x
    (Rosenbrock's function, made milder so that every optimizer stays finite)."""
    flat = x.reshape(-1)
    g = np.zeros_like(flat)
    a, b = flat[:-1], flat[1:]
    g[:-1] += -40 * a * (b - a * a) - 2 * (1 - a)
    g[1:] += 20 * (b - a * a)
    return g.reshape(x.shape)


def gradient_rule(kwargs):
    """Rosenbrock's gradient, or, for an optimizer that maximizes, the gradient of minus
    Rosenbrock's function: climbing it is the same path as descending the function (and
    an optimizer that ignored maximize=True would run off to infinity)."""
    if kwargs.get("maximize"):
        return lambda x: -rosenbrock_grad(x)
    return rosenbrock_grad


def starting_points(dtype):
    rng = np.random.default_rng(0)
    return [rng.uniform(-1.5, 1.5, size=shape).astype(dtype) for shape in [(5,), (2, 3)]]


def run_side_by_side(cr_class, torch_class, kwargs, dtype, check):
    """Run both optimizers for STEPS steps and call check(ours, theirs) after each."""
    starts = starting_points(dtype)
    ours = [cr.tensor(x.copy(), requires_grad=True) for x in starts]
    theirs = [torch.tensor(x.copy(), requires_grad=True) for x in starts]
    # A third parameter that never gets a gradient: both optimizers must leave it alone.
    idle_ours = cr.tensor(np.ones(3, dtype=dtype), requires_grad=True)
    idle_theirs = torch.ones(3, dtype=torch.from_numpy(np.ones(1, dtype)).dtype,
                             requires_grad=True)
    opt_ours = cr_class(ours + [idle_ours], **kwargs)
    opt_theirs = torch_class(theirs + [idle_theirs], **kwargs)
    gradient = gradient_rule(kwargs)
    for _ in range(STEPS):
        assert all(np.isfinite(p.data).all() for p in ours)
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        for p, q in zip(ours, theirs):
            p.grad = gradient(p.data)
            q.grad = torch.from_numpy(gradient(q.detach().numpy()))
        opt_ours.step()
        opt_theirs.step()
        for p, q in zip(ours, theirs):
            check(p.data, q.detach().numpy())
        assert idle_ours.grad is None
        np.testing.assert_array_equal(idle_ours.data, np.ones(3))
    return ours


@pytest.mark.parametrize("name, cr_class, torch_class, kwargs", CONFIGS,
                         ids=[c[0] for c in CONFIGS])
def test_matches_torch_float64(name, cr_class, torch_class, kwargs):
    def check(ours, theirs):
        assert ours.dtype == np.float64
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)

    final = run_side_by_side(cr_class, torch_class, kwargs, np.float64, check)
    assert not np.allclose(final[0].data, starting_points(np.float64)[0])  # it moved


@pytest.mark.parametrize("name, cr_class, torch_class, kwargs", CONFIGS,
                         ids=[c[0] for c in CONFIGS])
def test_matches_torch_float32_and_keeps_the_dtype(name, cr_class, torch_class, kwargs):
    def check(ours, theirs):
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-6)

    final = run_side_by_side(cr_class, torch_class, kwargs, np.float32, check)
    assert all(p.dtype == np.float32 for p in final)


@pytest.mark.parametrize("name, cr_class, torch_class, kwargs", CONFIGS,
                         ids=[c[0] for c in CONFIGS])
def test_param_groups_match_torch(name, cr_class, torch_class, kwargs):
    """Two groups, the second with its own lr: the per-group hyperparameters are used."""
    starts = starting_points(np.float64)
    ours = [cr.tensor(x.copy(), requires_grad=True) for x in starts]
    theirs = [torch.tensor(x.copy(), requires_grad=True) for x in starts]
    opt_ours = cr_class([{"params": [ours[0]]}, {"params": [ours[1]], "lr": 2e-3}], **kwargs)
    opt_theirs = torch_class([{"params": [theirs[0]]}, {"params": [theirs[1]], "lr": 2e-3}],
                             **kwargs)
    gradient = gradient_rule(kwargs)
    for _ in range(5):
        for p, q in zip(ours, theirs):
            p.grad = gradient(p.data)
            q.grad = torch.from_numpy(gradient(q.detach().numpy()))
        opt_ours.step()
        opt_theirs.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_gradients_from_backward_match_torch():
    """The usual loop, with gradients from chainrule's and torch's own backward()."""
    x0 = np.array([[0.3, -0.2], [0.1, 0.5]])
    target = np.array([[1.0, 2.0], [-1.0, 0.5]])
    w = cr.tensor(x0.copy(), requires_grad=True)
    v = torch.tensor(x0.copy(), requires_grad=True)
    opt_ours = Adam([w], lr=0.05, weight_decay=0.01)
    opt_theirs = torch.optim.Adam([v], lr=0.05, weight_decay=0.01)
    for _ in range(STEPS):
        opt_ours.zero_grad()
        ((w @ w - target) ** 2).sum().backward()
        opt_ours.step()
        opt_theirs.zero_grad()
        ((v @ v - torch.from_numpy(target)) ** 2).sum().backward()
        opt_theirs.step()
        np.testing.assert_allclose(w.data, v.detach().numpy(), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------
# 2. The scalar engine
# ---------------------------------------------------------------------------------------

SCALAR_CONFIGS = [
    (SGD, dict(lr=0.1)),
    (SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    (Adam, dict(lr=0.1)),
    (AdamW, dict(lr=0.1, weight_decay=1e-3)),
    (Adam, dict(lr=0.1, amsgrad=True)),
    (AdamW, dict(lr=0.1, weight_decay=1e-3, amsgrad=True)),
]


@pytest.mark.parametrize("cls, kwargs", SCALAR_CONFIGS,
                         ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(SCALAR_CONFIGS)])
def test_values_converge_and_match_the_tensor_path(cls, kwargs):
    """Minimize (a - 3)^2 + (b + 1)^2 with Value arithmetic, micrograd style, and the
    same problem as one Tensor: the same numbers at every step."""
    a, b = Value(0.5), Value(0.25)
    x = cr.tensor([0.5, 0.25], requires_grad=True)
    target = np.array([3.0, -1.0])
    opt_values = cls([a, b], **kwargs)
    opt_tensor = cls([x], **kwargs)
    for _ in range(300):
        opt_values.zero_grad()
        assert a.grad == 0.0 and b.grad == 0.0
        loss = (a - 3) ** 2 + (b + 1) ** 2
        loss.backward()
        opt_values.step()
        assert type(a.data) is float and type(b.data) is float
        opt_tensor.zero_grad()
        ((x - target) ** 2).sum().backward()
        opt_tensor.step()
        np.testing.assert_allclose([a.data, b.data], x.data, rtol=1e-12, atol=1e-14)
    assert a.data == pytest.approx(3.0, abs=1e-2) and b.data == pytest.approx(-1.0, abs=1e-2)


@pytest.mark.parametrize("cls, torch_class, kwargs", [
    (Adam, torch.optim.Adam, dict(lr=0.1, weight_decay=0.01)),
    (Adam, torch.optim.Adam, dict(lr=0.1, betas=(0.9, 0.8), amsgrad=True)),
    (AdamW, torch.optim.AdamW, dict(lr=0.1, amsgrad=True, maximize=True)),
    (SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, maximize=True)),
], ids=["adam", "adam-amsgrad", "adamw-amsgrad-maximize", "sgd-maximize"])
def test_values_match_torch(cls, torch_class, kwargs):
    a, b = Value(0.5), Value(-0.5)
    p = torch.tensor([0.5, -0.5], dtype=torch.float64, requires_grad=True)
    opt = cls([a, b], **kwargs)
    ref = torch_class([p], **kwargs)
    for _ in range(STEPS):
        opt.zero_grad()
        (a * a * b + b.exp()).backward()
        opt.step()
        ref.zero_grad()
        (p[0] * p[0] * p[1] + p[1].exp()).backward()
        ref.step()
        np.testing.assert_allclose([a.data, b.data], p.detach().numpy(), rtol=1e-12)


def test_a_value_gradient_of_zero_is_a_real_gradient():
    """A Value's grad of 0.0 (a dead ReLU unit's) still gets weight decay and momentum,
    as a zero gradient does in PyTorch; a grad of None is skipped."""
    used, unused, absent = Value(1.0), Value(2.0), Value(5.0)
    opt = SGD([used, unused, absent], lr=0.1, momentum=0.9, weight_decay=0.5)
    for _ in range(3):
        opt.zero_grad()
        absent.grad = None
        (used * 3).backward()
        opt.step()
    p = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    reference = torch.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5)
    for _ in range(3):
        p.grad = torch.zeros_like(p)
        reference.step()
    assert unused.data == pytest.approx(p.item(), rel=1e-15) and unused.data < 2.0
    assert absent.data == 5.0 and absent not in opt.state


def test_the_micrograd_mlp_trains():
    from chainrule.nn import MLP
    model = MLP(2, [8, 1], rng=0)
    xs = [[2.0, 3.0], [3.0, -1.0], [0.5, 1.0], [1.0, 1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    opt = Adam(model.parameters(), lr=0.05)

    def loss():
        return sum((model(x) - y) ** 2 for x, y in zip(xs, ys))

    first = loss().data
    for _ in range(100):
        opt.zero_grad()
        loss().backward()
        opt.step()
    assert loss().data < 0.1 * first


# ---------------------------------------------------------------------------------------
# 3. zero_grad, None gradients, dtypes, checks, state_dict
# ---------------------------------------------------------------------------------------

def test_zero_grad_sets_none_on_tensors_and_zero_on_values():
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    v = Value(1.0)
    opt = SGD([t, v], lr=0.1)
    (t * t).sum().backward()
    (v * v).backward()
    assert t.grad is not None and v.grad == 2.0
    opt.zero_grad()
    assert t.grad is None and v.grad == 0.0
    (t * t).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(t.grad, [0.0, 0.0])
    assert t.grad.dtype == t.dtype


def test_gradients_accumulate_without_zero_grad_as_in_torch():
    t = cr.tensor([1.0], requires_grad=True)
    opt = SGD([t], lr=0.1)
    (t * 2).sum().backward()
    (t * 2).sum().backward()
    opt.step()
    np.testing.assert_allclose(t.data, [1.0 - 0.1 * 4])


def test_none_grads_are_skipped_and_get_no_state():
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    opt = Adam([t], lr=0.1, weight_decay=0.5)
    opt.step()
    np.testing.assert_array_equal(t.data, [1.0, 2.0])
    assert t not in opt.state


def test_float32_stays_float32_and_0d_stays_0d():
    t = cr.tensor(np.float32(1.5), requires_grad=True)
    opt = AdamW([t], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (t * t).backward()
        opt.step()
    assert t.dtype == np.float32 and t.shape == ()
    assert opt.state[t]["exp_avg"].dtype == np.float32


def test_step_writes_data_without_recording_a_graph_and_bumps_the_version():
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (t * t).sum()
    y.backward(retain_graph=True)
    before = t._version[0]
    SGD([t], lr=0.1).step()
    assert t.is_leaf and t.requires_grad and t._version[0] == before + 1
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()  # the graph saw the old data; the version counter catches it


def test_step_takes_a_closure_and_returns_its_loss():
    t = cr.tensor([2.0], requires_grad=True)
    opt = SGD([t], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (t * t).sum()
        loss.backward()
        return loss

    with cr.no_grad():  # the closure still records its graph
        loss = opt.step(closure)
    assert loss.item() == 4.0
    np.testing.assert_allclose(t.data, [1.0])


def test_a_create_graph_gradient_is_read_as_numbers():
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    (t * t).sum().backward(create_graph=True)
    assert isinstance(t.grad, Tensor)
    SGD([t], lr=0.5).step()
    np.testing.assert_allclose(t.data, [0.0, 0.0])


@pytest.mark.parametrize("make, match", [
    (lambda p: SGD(p, lr=-0.1), "lr must be >= 0"),
    (lambda p: SGD(p, lr=float("nan")), "lr must be >= 0"),
    (lambda p: SGD(p, lr=0.1, momentum=-0.5), "momentum must be >= 0"),
    (lambda p: SGD(p, lr=0.1, weight_decay=-1), "weight_decay must be >= 0"),
    (lambda p: SGD(p, lr=0.1, nesterov=True), "nesterov=True needs momentum > 0"),
    (lambda p: SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "dampening = 0"),
    (lambda p: Adam(p, lr=-1e-3), "lr must be >= 0"),
    (lambda p: Adam(p, betas=(1.0, 0.999)), r"betas\[0\] must be in \[0, 1\)"),
    (lambda p: Adam(p, betas=(0.9, -0.1)), r"betas\[1\] must be in \[0, 1\)"),
    (lambda p: Adam(p, betas=0.9), "betas must be a pair"),
    (lambda p: Adam(p, eps=-1e-8), "eps must be >= 0"),
    (lambda p: AdamW(p, weight_decay=-0.01), "weight_decay must be >= 0"),
    (lambda p: SGD([{"params": p, "lr": -1.0}], lr=0.1), "lr must be >= 0"),
    (lambda p: SGD([], lr=0.1), "empty parameter list"),
    (lambda p: SGD(p + p, lr=0.1), "appears twice"),
    (lambda p: SGD([p[0] * 2], lr=0.1), "leaf tensors"),
])
def test_bad_arguments_are_refused_with_a_clear_error(make, match):
    params = [cr.tensor([1.0], requires_grad=True)]
    with pytest.raises(ValueError, match=match):
        make(params)


@pytest.mark.parametrize("make, match", [
    (lambda p: SGD(p[0], lr=0.1), "iterable of Values or Tensors"),
    (lambda p: SGD([np.ones(2)], lr=0.1), "only optimize Values and Tensors"),
    (lambda p: SGD(p, lr="0.1"), "lr must be a real number"),
    (lambda p: SGD(p, lr=0.1, maximize=1), "SGD: maximize must be True or False, got int 1"),
    (lambda p: Adam(p, amsgrad="yes"), "Adam: amsgrad must be True or False, got str 'yes'"),
    (lambda p: AdamW(p, maximize=None), "AdamW: maximize must be True or False, got NoneType"),
    (lambda p: AdamW([{"params": p, "amsgrad": 0.0}]), "AdamW: amsgrad must be True or False"),
])
def test_wrong_types_are_refused_with_a_clear_error(make, match):
    params = [cr.tensor([1.0], requires_grad=True)]
    with pytest.raises(TypeError, match=match):
        make(params)


@pytest.mark.parametrize("make", [
    lambda p: SGD(p, 0.1, 0.9),
    lambda p: SGD(p, 0.1, 0.9, 0, 1e-4),
    lambda p: Adam(p, 0.1, (0.9, 0.99)),
    lambda p: AdamW(p, 0.1, (0.9, 0.99), 1e-8, 0.1),
    lambda p: Adam(p, 0.1, (0.9, 0.99), 1e-8, 0.0, True),       # PyTorch's amsgrad
    lambda p: SGD(p, 0.1, 0.9, 0, 1e-4, False, maximize=True),   # PyTorch's nesterov
])
def test_hyperparameters_after_lr_are_keyword_only(make):
    """PyTorch users pass them positionally in PyTorch's order; none is read by position."""
    params = [cr.tensor([1.0], requires_grad=True)]
    with pytest.raises(TypeError, match="positional"):
        make(params)
    assert SGD(params, 0.1).param_groups[0]["lr"] == 0.1  # lr itself may be positional


def test_named_parameters_are_accepted():
    w, b = cr.tensor([1.0], requires_grad=True), Value(2.0)
    opt = SGD([("layer.weight", w), ("layer.bias", b)], lr=0.5)
    assert opt.param_groups[0]["params"] == [w, b]
    w.grad, b.grad = np.ones(1), 1.0
    opt.step()
    assert w.data[0] == 0.5 and b.data == 1.5


def test_a_gradient_of_the_wrong_shape_is_refused():
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    t.grad = np.ones(3)
    with pytest.raises(ValueError, match=r"gradient of shape \(3,\)"):
        SGD([t], lr=0.1).step()


@pytest.mark.parametrize("cls, kwargs", [
    (SGD, dict(lr=1e-3, momentum=0.9)),
    (SGD, dict(lr=1e-3, momentum=0.9, maximize=True)),
    (Adam, dict(lr=1e-2)),
    (Adam, dict(lr=1e-2, betas=(0.9, 0.8), amsgrad=True)),
    (AdamW, dict(lr=1e-2, weight_decay=0.1)),
    (AdamW, dict(lr=1e-2, betas=(0.9, 0.8), weight_decay=0.1, amsgrad=True, maximize=True)),
])
def test_state_dict_resumes_exactly(cls, kwargs):
    starts = starting_points(np.float64)

    def make():
        params = [cr.tensor(x.copy(), requires_grad=True) for x in starts]
        return params, cls(params, **kwargs)

    def steps(params, opt, n):
        for _ in range(n):
            for p in params:
                p.grad = gradient_rule(kwargs)(p.data)
            opt.step()

    straight, opt = make()
    steps(straight, opt, 10)

    first, opt1 = make()
    steps(first, opt1, 5)
    saved, saved_params = opt1.state_dict(), [p.data.copy() for p in first]
    if kwargs.get("amsgrad"):  # the running maximum is saved with the moments
        assert all(set(entry) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
                   for entry in saved["state"].values())
    assert all(saved["param_groups"][0][key] == value for key, value in kwargs.items()
               if key != "betas")
    steps(first, opt1, 1)  # the saved state must be a copy, unchanged by later steps
    resumed, opt2 = make()
    for p, data in zip(resumed, saved_params):
        p.data = data
    opt2.load_state_dict(saved)
    steps(resumed, opt2, 5)
    for p, q in zip(resumed, straight):
        np.testing.assert_array_equal(p.data, q.data)


def test_amsgrad_divides_by_the_largest_second_moment_seen():
    """Where v falls, amsgrad keeps its maximum, and the path differs from Adam's."""
    def run(amsgrad):
        params = [cr.tensor(x.copy(), requires_grad=True) for x in starting_points(np.float64)]
        opt = Adam(params, lr=1e-2, betas=(0.9, 0.8), amsgrad=amsgrad)
        for _ in range(STEPS):
            for p in params:
                p.grad = rosenbrock_grad(p.data)
            opt.step()
        return params, opt

    plain, _ = run(False)
    kept, opt = run(True)
    state = opt.state[kept[0]]
    assert (state["max_exp_avg_sq"] >= state["exp_avg_sq"]).all()
    assert (state["max_exp_avg_sq"] > state["exp_avg_sq"]).any()
    assert not np.allclose(plain[0].data, kept[0].data)


def test_amsgrad_switched_on_later_starts_its_maximum_there():
    """A state made without amsgrad has no maximum: it starts at 0, as a new state's does
    (PyTorch raises KeyError), so the first step with amsgrad is Adam's own."""
    w, twin = (cr.tensor([1.0, -2.0], requires_grad=True) for _ in range(2))
    switched, plain = Adam([w], lr=0.1), Adam([twin], lr=0.1)
    for opt, p in ((switched, w), (plain, twin)):
        p.grad = np.array([3.0, 0.5])
        opt.step()
    switched.param_groups[0]["amsgrad"] = True
    for opt, p in ((switched, w), (plain, twin)):
        p.grad = np.array([1.0, 0.25])
        opt.step()
    np.testing.assert_array_equal(w.data, twin.data)
    np.testing.assert_array_equal(switched.state[w]["max_exp_avg_sq"],
                                  switched.state[w]["exp_avg_sq"])


def test_load_state_dict_refuses_a_mismatch():
    a = cr.tensor([1.0], requires_grad=True)
    b = cr.tensor([1.0, 2.0], requires_grad=True)
    saved = SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="group 0 has 2 parameters in the saved state, 1 "):
        SGD([a], lr=0.1).load_state_dict(saved)


# ---------------------------------------------------------------------------------------
# 4. Schedules
# ---------------------------------------------------------------------------------------

def both_optimizers(lrs=(0.1, 0.03)):
    ours = SGD([{"params": [cr.tensor([1.0], requires_grad=True)], "lr": lr} for lr in lrs])
    theirs = torch.optim.SGD([{"params": [torch.ones(1, requires_grad=True)], "lr": lr}
                              for lr in lrs])
    return ours, theirs


SCHEDULES = [
    ("step", lambda o: StepLR(o, step_size=3),
     lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=3)),
    ("step-gamma", lambda o: StepLR(o, step_size=2, gamma=0.5),
     lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)),
    ("cosine", lambda o: CosineAnnealingLR(o, T_max=10),
     lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10)),
    ("cosine-eta-min", lambda o: CosineAnnealingLR(o, T_max=7, eta_min=1e-3),
     lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=1e-3)),
    ("linear", lambda o: LinearLR(o),
     lambda o: torch.optim.lr_scheduler.LinearLR(o)),
    ("linear-down", lambda o: LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=8),
     lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                                 total_iters=8)),
    ("warmup", lambda o: LinearWarmup(o, warmup_steps=6, start_factor=0.1),
     lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=6)),
    ("lambda", lambda o: LambdaLR(o, lambda k: 0.9 ** k),
     lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda k: 0.9 ** k)),
    ("multistep", lambda o: cr.optim.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.5),
     lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.5)),
    ("exponential", lambda o: cr.optim.ExponentialLR(o, gamma=0.8),
     lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.8)),
]


@pytest.mark.parametrize("name, ours, theirs", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedules_match_torch_step_by_step(name, ours, theirs):
    opt_ours, opt_theirs = both_optimizers()
    sched_ours, sched_theirs = ours(opt_ours), theirs(opt_theirs)
    for k in range(25):  # past T_max and total_iters: the tails must agree too
        expected = sched_theirs.get_last_lr()
        np.testing.assert_allclose(sched_ours.get_last_lr(), expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose([g["lr"] for g in opt_ours.param_groups], expected,
                                   rtol=1e-12, atol=1e-15)
        opt_ours.step()
        opt_theirs.step()
        sched_ours.step()
        sched_theirs.step()


def test_warmup_from_zero_reaches_the_base_lr():
    opt, _ = both_optimizers(lrs=(0.2,))
    sched = LinearWarmup(opt, warmup_steps=4, start_factor=0.0)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(6):
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [0.0, 0.05, 0.1, 0.15, 0.2, 0.2, 0.2])


def test_the_schedule_drives_the_optimizer_step():
    t = cr.tensor([1.0], requires_grad=True)
    opt = SGD([t], lr=1.0)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    for expected in [1.0, 0.5, 0.25]:
        t.grad = np.ones(1)
        before = t.data.copy()
        opt.step()
        np.testing.assert_allclose(before - t.data, [expected])
        sched.step()


def test_schedule_state_dict_resumes():
    """Resumed as in PyTorch: the optimizer's state brings its rates back, the
    schedule's its position (its load leaves the rates as they are)."""
    opt, _ = both_optimizers()
    sched = CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        sched.step()
    saved, saved_opt = sched.state_dict(), opt.state_dict()
    opt2, _ = both_optimizers()
    sched2 = CosineAnnealingLR(opt2, T_max=10)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert sched2.get_last_lr() == sched.get_last_lr()
    for _ in range(8):
        sched.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()


def test_two_schedules_and_a_rate_set_by_hand_compose_as_in_torch():
    """Each step scales the rate the group has: a warm-up and a decay on one optimizer
    multiply, and a rate halved by hand stays halved, as PyTorch's schedules do."""
    S = torch.optim.lr_scheduler
    opt_ours, opt_theirs = both_optimizers()
    ours = [LinearLR(opt_ours, start_factor=0.25, total_iters=3),
            StepLR(opt_ours, step_size=2, gamma=0.5), CosineAnnealingLR(opt_ours, T_max=5)]
    theirs = [S.LinearLR(opt_theirs, start_factor=0.25, total_iters=3),
              S.StepLR(opt_theirs, step_size=2, gamma=0.5), S.CosineAnnealingLR(opt_theirs, 5)]
    for k in range(14):
        np.testing.assert_allclose([g["lr"] for g in opt_ours.param_groups],
                                   [g["lr"] for g in opt_theirs.param_groups], rtol=1e-12)
        if k == 6:
            for opt in (opt_ours, opt_theirs):
                opt.param_groups[1]["lr"] *= 0.5
        opt_ours.step()
        opt_theirs.step()
        for schedule in ours + theirs:
            schedule.step()


@pytest.mark.parametrize("make, error, match", [
    (lambda o: StepLR(o, step_size=0), ValueError, "step_size must be a positive integer"),
    (lambda o: StepLR(o, step_size=2.5), ValueError, "step_size must be a positive integer"),
    (lambda o: StepLR(o, step_size=2, gamma=-1), ValueError, "gamma must be >= 0"),
    (lambda o: CosineAnnealingLR(o, T_max=0), ValueError, "T_max must be a positive integer"),
    (lambda o: LinearLR(o, start_factor=1.5), ValueError, r"start_factor must be in \[0, 1\]"),
    (lambda o: LinearWarmup(o, warmup_steps=-3), ValueError, "warmup_steps must be a"),
    (lambda o: cr.optim.MultiStepLR(o, milestones=[2, 0]), ValueError,
     "each milestone must be a positive integer"),
    (lambda o: cr.optim.ExponentialLR(o, gamma=-0.5), ValueError, "gamma must be >= 0"),
    (lambda o: StepLR(torch.optim.SGD([torch.ones(1)], lr=0.1), 2), TypeError,
     "expected an Optimizer"),
])
def test_bad_schedule_arguments_are_refused(make, error, match):
    opt, _ = both_optimizers()
    with pytest.raises(error, match=match):
        make(opt)


def test_a_second_schedule_starts_from_the_initial_lr():
    """As in PyTorch, 'initial_lr' is recorded once: a later schedule reads it as its
    base, and its step 0 leaves the rate the first one set."""
    opt, opt_torch = both_optimizers(lrs=(1.0,))
    first = StepLR(opt, step_size=1, gamma=0.1)
    first.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    second = CosineAnnealingLR(opt, T_max=4)
    assert second.base_lrs == [1.0] and math.isclose(opt.param_groups[0]["lr"], 0.1)
    torch.optim.lr_scheduler.StepLR(opt_torch, step_size=1, gamma=0.1).step()
    torch.optim.lr_scheduler.CosineAnnealingLR(opt_torch, T_max=4)
    assert math.isclose(opt_torch.param_groups[0]["lr"], 0.1)


def test_the_base_classes_say_what_to_use_instead():
    """Optimizer and LRScheduler are bases: using them directly is a clear error."""
    p = Tensor(np.array([1.0]), requires_grad=True)
    p.grad = np.array([1.0])
    base = cr.optim.Optimizer([p], {"lr": 0.1})
    with pytest.raises(TypeError, match=r"use one of chainrule\.optim.s \(SGD, Adam, \.\.\.\)"):
        base.step()
    with pytest.raises(TypeError, match="use StepLR"):
        cr.optim.LRScheduler(SGD([p], lr=0.1))


# ---------------------------------------------------------------------------------------
# 5. Under cr.jit
# ---------------------------------------------------------------------------------------

JIT_CONFIGS = [c for c in CONFIGS if "maximize" in c[3] or "amsgrad" in c[3]]


@pytest.mark.parametrize("name, cr_class, torch_class, kwargs", JIT_CONFIGS,
                         ids=[c[0] for c in JIT_CONFIGS])
def test_a_jitted_step_gives_the_eager_numbers_to_the_last_bit(name, cr_class, torch_class,
                                                               kwargs, blocks):  # noqa: F811
    (eager_model, x, y), (jit_model, _, _) = training_problem(), training_problem()
    eager_opt = cr_class(eager_model.parameters(), **kwargs)
    jit_opt = cr_class(jit_model.parameters(), **kwargs)
    step = cr.jit(train_step)
    for _ in range(30):
        eager_loss = train_step(eager_model, eager_opt, x, y)
        np.testing.assert_array_equal(eager_loss.data, step(jit_model, jit_opt, x, y).data)
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        np.testing.assert_array_equal(p.data, q.data)
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        eager_state, jit_state = eager_opt.state[p], jit_opt.state[q]
        assert eager_state.keys() == jit_state.keys()
        for key in eager_state:
            np.testing.assert_array_equal(eager_state[key], jit_state[key])
    # traced without the optimizer's state, then with it; every other call replayed
    assert sum(len(entries) for entries in step._programs.values()) <= 3


def test_a_complex_state_for_a_real_parameter_is_refused_not_cast():
    """Loading an optimizer's state saved from complex parameters into real ones would
    drop the imaginary parts of its moments: refused in one line."""
    z = cr.tensor(np.array([1.0 + 1.0j, 2.0]), requires_grad=True)
    saved = Adam([z], lr=0.1)
    (z * z.conj()).real.sum().backward()
    saved.step()
    w = cr.tensor(np.ones(2), requires_grad=True)
    opt = Adam([w], lr=0.1)
    with pytest.raises(ValueError, match="complex128 for a parameter of dtype float64"):
        opt.load_state_dict(saved.state_dict())
