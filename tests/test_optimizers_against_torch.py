"""chainrule.optim's RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD,
Adafactor and LBFGS against torch.optim's, step by step.

1. Each optimizer over a grid of its hyperparameters (every flag on and off, several
   values): the same parameters (float64 Tensors and a scalar Value, which torch holds
   as a 0-d tensor) take the same steps on the same nonconvex loss in both libraries;
   after every step the parameters agree to 1e-12 relative (float64 rounding, the
   libraries' formulas written in the same order but not fused the same way) and so
   does ``state_dict()["state"]``, PyTorch's names and values. Two parameter groups
   with different settings; float32 Tensors stay float32 and agree to float32's
   precision.
2. Saving mid-run (state_dict, a new optimizer, load_state_dict) continues identically;
   a bad hyperparameter is refused in one line where torch refuses it; flags torch has
   and chainrule does not model (foreach, fused, ...) are not arguments.
3. Under cr.jit, a whole training step replayed gives the eager numbers to the last bit;
   maximize=True climbs, exactly as descending the negated loss.
4. LBFGS, with and without the strong Wolfe line search, on Rosenbrock's function, least
   squares and logistic regression: the same iterates, evaluation counts and state.

The gradients of sections 1 to 3 are computed with NumPy from each side's own current
parameters (the same function on the same numbers), so only the optimizers differ.
"""

import copy
import inspect
import itertools

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.optim import (ASGD, LBFGS, Adadelta, Adafactor, Adagrad, Adamax, NAdam, RAdam,
                             RMSprop, Rprop)
from chainrule.scalar.value import Value
from jitted_training import blocks, train_step, training_problem  # noqa: F401 (blocks: a fixture)
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261130)
STEPS = 15
RTOL64 = 1e-12
# An entry that passes near zero has no relative precision left: absolute 1e-13 there
# (the parameters are of order 1, so this is a few float64 ulps of their scale).
ATOL64 = 1e-13
# float32: eps is 1.2e-7, and 15 steps of rounding in different orders add up. The state
# holds gradients (and their squares), which amplify the parameters' differences by the
# loss's curvature (up to about 10 here): 1e-4 there.
RTOL32, ATOL32 = 2e-5, 1e-6
STATE_TOL32 = 1e-4

OURS = {"RMSprop": RMSprop, "Adagrad": Adagrad, "Adadelta": Adadelta, "Adamax": Adamax,
        "NAdam": NAdam, "RAdam": RAdam, "Rprop": Rprop, "ASGD": ASGD,
        "Adafactor": Adafactor}


def _grid(**values):
    keys = list(values)
    return [dict(zip(keys, combo)) for combo in itertools.product(*values.values())]


FLAG = [False, True]
# each optimizer's grid: every flag both ways, and values of each hyperparameter
GRIDS = {
    "RMSprop": _grid(lr=[1e-2], alpha=[0.99, 0.5], momentum=[0, 0.9], centered=FLAG,
                     weight_decay=[0, 0.1], maximize=FLAG, eps=[1e-8, 1e-3]),
    "Adagrad": _grid(lr=[0.1], lr_decay=[0, 0.1], weight_decay=[0, 0.1],
                     initial_accumulator_value=[0, 0.5], eps=[1e-10, 1e-3], maximize=FLAG),
    "Adadelta": _grid(lr=[1.0, 0.5], rho=[0.9, 0.5], eps=[1e-6, 1e-2],
                      weight_decay=[0, 0.1], maximize=FLAG),
    "Adamax": _grid(lr=[2e-3, 5e-2], betas=[(0.9, 0.999), (0.5, 0.8)], eps=[1e-8, 1e-3],
                    weight_decay=[0, 0.1], maximize=FLAG),
    "NAdam": _grid(lr=[5e-2], betas=[(0.9, 0.999), (0.5, 0.8)], weight_decay=[0, 0.1],
                   momentum_decay=[4e-3, 0.1], decoupled_weight_decay=FLAG, maximize=FLAG),
    # beta2 = 0.8: rectified from the 6th step on; 0.6: rho_inf = 4, never rectified
    "RAdam": _grid(lr=[5e-2], betas=[(0.9, 0.999), (0.9, 0.8), (0.5, 0.6)],
                   eps=[1e-8, 1e-3], weight_decay=[0, 0.1], decoupled_weight_decay=FLAG,
                   maximize=FLAG),
    # step_sizes (1e-3, 0.05): both bounds reached within 15 steps
    "Rprop": _grid(lr=[1e-2, 0.1], etas=[(0.5, 1.2), (0.3, 1.5)],
                   step_sizes=[(1e-6, 50), (1e-3, 0.05)], maximize=FLAG),
    # t0 = 5: averaging from the 7th step on
    "ASGD": _grid(lr=[1e-2, 5e-2], lambd=[1e-4, 0.1], alpha=[0.75, 0.5], t0=[1e6, 5],
                  weight_decay=[0, 0.1], maximize=FLAG),
    # (the (2, 3) parameter is factored, the (5,) one and the scalar are not)
    "Adafactor": _grid(lr=[1e-2, 0.1], beta2_decay=[-0.8, -0.3], eps=[(None, 1e-3), (1e-2, 0.5)],
                       d=[1.0, 1.5], weight_decay=[0, 0.1], maximize=FLAG),
}
CONFIGS = [(name, kwargs) for name, grid in GRIDS.items() for kwargs in grid]
IDS = [f"{name}-" + "-".join(f"{k}={v}" for k, v in kwargs.items()) for name, kwargs in CONFIGS]
# one configuration per optimizer with every flag off, one with every flag on
CORNERS = [(name, grid[0]) for name, grid in GRIDS.items()] + \
          [(name, grid[-1]) for name, grid in GRIDS.items()]
CORNER_IDS = [f"{name}-{'off' if i < len(GRIDS) else 'on'}"
              for i, (name, _) in enumerate(CORNERS)]
# a second group's settings, different in every hyperparameter that has a choice
SECOND_GROUP = {
    "RMSprop": dict(lr=3e-2, alpha=0.7, momentum=0.5, centered=True, weight_decay=0.05),
    # (not initial_accumulator_value: torch ignores a group's own, see below)
    "Adagrad": dict(lr=0.05, lr_decay=0.2, weight_decay=0.05),
    "Adadelta": dict(lr=0.3, rho=0.8, eps=1e-4, weight_decay=0.05),
    "Adamax": dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.05),
    "NAdam": dict(lr=0.02, betas=(0.8, 0.9), momentum_decay=0.05, weight_decay=0.05,
                  decoupled_weight_decay=True),
    "RAdam": dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.05, decoupled_weight_decay=True),
    "Rprop": dict(lr=0.05, etas=(0.4, 1.3), step_sizes=(1e-4, 0.2)),
    "ASGD": dict(lr=0.03, lambd=0.05, alpha=0.6, t0=3, weight_decay=0.05),
    "Adafactor": dict(lr=0.05, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.2, weight_decay=0.05),
}


# ---------------------------------------------------------------------------------------
# The problem: a nonconvex loss over all the parameters, its gradient by NumPy
# ---------------------------------------------------------------------------------------

def loss_and_gradient(flat):
    """sum(sin(2x) + x**4/10) - sum(x[i] x[i-1]) / 2 (cyclically): bounded below, with
    many minima, and every entry coupled to its neighbours."""
    loss = np.sum(np.sin(2 * flat) + 0.1 * flat ** 4 - 0.5 * flat * np.roll(flat, 1))
    grad = (2 * np.cos(2 * flat) + 0.4 * flat ** 3
            - 0.5 * np.roll(flat, 1) - 0.5 * np.roll(flat, -1))
    return loss, grad


SHAPES = [(5,), (), (2, 3)]  # the 0-d one is a Value on chainrule's side


def starts(dtype):
    return [RNG.uniform(-1.5, 1.5, size=shape).astype(dtype) for shape in SHAPES]


def make_ours(values, value_param=True):
    return [Value(float(x)) if x.ndim == 0 and value_param
            else cr.tensor(x.copy(), requires_grad=True) for x in values]


def make_theirs(values):
    return [torch.tensor(x.copy(), requires_grad=True) for x in values]


def numbers(p):
    if isinstance(p, torch.Tensor):
        return p.detach().numpy()
    return np.asarray(p.data)


def set_gradients(params, maximize, torch_side):
    """Each parameter's gradient of the loss at the current parameters (of minus the
    loss if the optimizer maximizes: the same path, climbed)."""
    arrays = [numbers(p) for p in params]
    flat = np.concatenate([a.reshape(-1) for a in arrays]).astype(np.float64)
    _, grad = loss_and_gradient(flat)
    if maximize:
        grad = -grad
    offset = 0
    for p, a in zip(params, arrays):
        g = grad[offset:offset + a.size].reshape(a.shape).astype(a.dtype)
        offset += a.size
        if torch_side:
            p.grad = torch.from_numpy(g)
        elif isinstance(p, Value):
            p.grad = float(g)
        else:
            p.grad = g


def build(name, kwargs, values, groups=False, value_param=True):
    """Both sides' parameters (starting at ``values``) and optimizers; with ``groups``,
    the (2, 3) tensor and an idle one (never given a gradient) form a second group of
    other settings."""
    dtype = values[0].dtype
    ours, theirs = make_ours(values, value_param), make_theirs(values)
    idle_ours = cr.tensor(np.ones(3, dtype=dtype), requires_grad=True)
    idle_theirs = torch.tensor(np.ones(3, dtype=dtype), requires_grad=True)
    if groups:
        extra = {**SECOND_GROUP[name], "maximize": kwargs.get("maximize", False)}
        ours_arg = [{"params": ours[:2]}, {"params": [ours[2], idle_ours], **extra}]
        theirs_arg = [{"params": theirs[:2]}, {"params": [theirs[2], idle_theirs], **extra}]
    else:
        ours_arg, theirs_arg = ours + [idle_ours], theirs + [idle_theirs]
    return (ours, OURS[name](ours_arg, **kwargs),
            theirs, getattr(torch.optim, name)(theirs_arg, **kwargs))


def one_step(params, opt, maximize, torch_side):
    opt.zero_grad()
    set_gradients(params, maximize, torch_side)
    opt.step()


def assert_states_equal(ours, theirs, rtol, atol):
    """Two ``state_dict()["state"]``: the same parameters, names and values."""
    assert ours.keys() == theirs.keys()
    for number in ours:
        assert ours[number].keys() == theirs[number].keys(), number
        for key, value in theirs[number].items():
            expected = value.numpy() if isinstance(value, torch.Tensor) else value
            np.testing.assert_allclose(np.asarray(ours[number][key]), expected,
                                       rtol=rtol, atol=atol, err_msg=f"{number} {key}")


def run_side_by_side(name, kwargs, dtype, rtol, atol, groups=False, state_tol=None):
    ours, opt_ours, theirs, opt_theirs = build(name, kwargs, starts(dtype), groups)
    maximize = kwargs.get("maximize", False)
    for _ in range(STEPS):
        one_step(ours, opt_ours, maximize, False)
        one_step(theirs, opt_theirs, maximize, True)
        for p, q in zip(ours, theirs):
            if isinstance(p, cr.Tensor):
                assert p.data.dtype == dtype
            np.testing.assert_allclose(numbers(p), numbers(q), rtol=rtol, atol=atol)
        assert_states_equal(opt_ours.state_dict()["state"], opt_theirs.state_dict()["state"],
                            state_tol or rtol, state_tol or atol)
    return ours


def takes(name, hyperparameter):
    return hyperparameter in inspect.signature(OURS[name]).parameters


@pytest.fixture
def torch_float64_scalars():
    """torch keeps NAdam's ``mu_product`` and ASGD's ``eta`` and ``mu`` in its default
    dtype (float32 unless changed); chainrule keeps them in float64. Compared in float64
    (conftest puts it back)."""
    torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------------------------------------
# 1. Step by step against torch
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=IDS)
def test_float64_parameters_and_state_match_torch_after_every_step(name, kwargs,
                                                                   torch_float64_scalars):
    """Every configuration of the grid: parameters and state after each of 15 steps."""
    run_side_by_side(name, kwargs, np.float64, RTOL64, ATOL64)


@pytest.mark.parametrize("name, kwargs", CORNERS, ids=CORNER_IDS)
def test_two_parameter_groups_with_their_own_settings_match_torch(name, kwargs,
                                                                 torch_float64_scalars):
    """A second group with other settings (and a parameter without a gradient, left
    alone and given no state, as torch does; Adagrad gives it state from the start)."""
    run_side_by_side(name, kwargs, np.float64, RTOL64, ATOL64, groups=True)


@pytest.mark.parametrize("name, kwargs", CORNERS, ids=CORNER_IDS)
def test_float32_tensors_stay_float32_and_match_torch(name, kwargs):
    """float32 parameters, their state float32 too, within float32's precision."""
    run_side_by_side(name, kwargs, np.float32, RTOL32, ATOL32, state_tol=STATE_TOL32)
    ours, opt, _, _ = build(name, kwargs, starts(np.float32), value_param=False)
    one_step(ours, opt, kwargs.get("maximize", False), False)
    for entries in opt.state.values():
        for key, value in entries.items():
            if isinstance(value, np.ndarray) and value.ndim:
                assert value.dtype == np.float32, key


def test_nadam_with_torchs_float32_scalars_agrees_to_float32_precision():
    """With torch's default dtype float32, torch rounds NAdam's ``mu_product`` to float32
    at each step; chainrule's stays float64: the steps then agree to 1e-6, not 1e-12."""
    kwargs = dict(lr=5e-2)
    ours, opt_ours, theirs, opt_theirs = build("NAdam", kwargs, starts(np.float64))
    for _ in range(STEPS):
        one_step(ours, opt_ours, False, False)
        one_step(theirs, opt_theirs, False, True)
    assert opt_theirs.state[theirs[0]]["mu_product"].dtype == torch.float32
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(numbers(p), numbers(q), rtol=1e-6)


def test_adagrad_has_state_for_every_parameter_from_the_start_as_torch():
    """Before any step, every parameter has ``step`` 0 and ``sum`` filled."""
    values = starts(np.float64)
    ours = Adagrad(make_ours(values), initial_accumulator_value=0.25)
    theirs = torch.optim.Adagrad(make_theirs(values), initial_accumulator_value=0.25)
    assert_states_equal(ours.state_dict()["state"], theirs.state_dict()["state"], 0, 0)


def test_adagrad_starts_a_groups_sum_at_its_own_initial_value_where_torch_does_not():
    """A group's own ``initial_accumulator_value`` is used here; torch fills every
    group's ``sum`` with the constructor's value (a group's own is kept, unused)."""
    a, b = cr.tensor([1.0], requires_grad=True), cr.tensor([2.0], requires_grad=True)
    ours = Adagrad([{"params": [a]}, {"params": [b], "initial_accumulator_value": 0.5}])
    assert ours.state[a]["sum"].tolist() == [0.0] and ours.state[b]["sum"].tolist() == [0.5]
    ta, tb = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    theirs = torch.optim.Adagrad([{"params": [ta]},
                                  {"params": [tb], "initial_accumulator_value": 0.5}])
    assert theirs.state[tb]["sum"].tolist() == [0.0]


# ---------------------------------------------------------------------------------------
# 2. Saving and resuming; hyperparameters refused
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kwargs", CORNERS, ids=CORNER_IDS)
def test_resuming_from_a_state_dict_mid_run_continues_identically(name, kwargs):
    """10 steps straight; and 5 steps, state_dict, a new optimizer, load_state_dict, 5
    more: the same numbers to the last bit. The saved state is a copy: the first
    optimizer going on does not change it."""
    maximize, values = kwargs.get("maximize", False), starts(np.float64)
    straight, opt, _, _ = build(name, kwargs, values, groups=True)
    for _ in range(10):
        one_step(straight, opt, maximize, False)

    resumed, first, _, _ = build(name, kwargs, values, groups=True)
    for _ in range(5):
        one_step(resumed, first, maximize, False)
    saved = first.state_dict()
    snapshot, positions = copy.deepcopy(saved), [numbers(p).copy() for p in resumed]
    one_step(resumed, first, maximize, False)
    assert_states_equal(saved["state"], snapshot["state"], 0, 0)
    for p, x in zip(resumed, positions):
        p.data = x if isinstance(p, cr.Tensor) else float(x)

    second = OURS[name]([{"params": g["params"]} for g in first.param_groups], **kwargs)
    second.load_state_dict(saved)
    for _ in range(5):
        one_step(resumed, second, maximize, False)
    for p, q in zip(straight, resumed):
        np.testing.assert_array_equal(numbers(p), numbers(q))


def _refusal_cases():
    """(optimizer, keyword arguments, the name and value the error shows): every
    hyperparameter out of its range, and values at the edges that are allowed."""
    cases = []
    for name in OURS:
        cases += [(name, dict(lr=-0.1), "lr", -0.1), (name, dict(lr=float("nan")), "lr", "nan")]
        for param in ("eps", "weight_decay"):
            # (Adafactor's eps is a pair: a number there is a TypeError in torch)
            if takes(name, param) and not (name, param) == ("Adafactor", "eps"):
                cases.append((name, {param: -1e-9}, param, -1e-9))
    cases += [("RMSprop", dict(alpha=-0.1), "alpha", -0.1),
              ("RMSprop", dict(alpha=1.5), "alpha", 1.5),  # allowed by both
              ("RMSprop", dict(momentum=-0.5), "momentum", -0.5),
              ("RMSprop", dict(eps=float("nan")), "eps", "nan"),
              ("Adagrad", dict(lr_decay=-0.1), "lr_decay", -0.1),
              ("Adagrad", dict(initial_accumulator_value=-0.1), "initial_accumulator_value",
               -0.1),
              ("Adadelta", dict(rho=-0.1), "rho", -0.1),
              ("Adadelta", dict(rho=1.0), "rho", 1.0),  # allowed by both
              ("Adadelta", dict(rho=1.5), "rho", 1.5),
              ("NAdam", dict(momentum_decay=-0.1), "momentum_decay", -0.1),
              ("Rprop", dict(etas=(0.0, 1.2)), "etas[0]", 0.0),
              ("Rprop", dict(etas=(1.0, 1.2)), "etas[0]", 1.0),
              ("Rprop", dict(etas=(0.5, 1.0)), "etas[1]", 1.0),
              ("Rprop", dict(etas=(0.5, 0.9)), "etas[1]", 0.9),
              ("Rprop", dict(step_sizes=(0.0, 1e9)), "step_sizes", None),  # both allow
              ("ASGD", dict(lambd=-1.0, alpha=-2.0, t0=-5.0), "lambd", None),
              ("Adafactor", dict(beta2_decay=0.1), "beta2_decay", 0.1),
              ("Adafactor", dict(beta2_decay=0.0), "beta2_decay", None),  # both allow
              ("Adafactor", dict(eps=(-1e-3, 1e-3)), "eps[0]", -0.001),
              ("Adafactor", dict(eps=(0.0, -1e-3)), "eps[1]", -0.001),
              ("Adafactor", dict(d=0.5), "d", 0.5),
              ("Adafactor", dict(d=1.0, eps=(0.0, 0.0)), "d", None)]  # both allow  # both allow
    for name in ("Adamax", "NAdam", "RAdam"):
        cases += [(name, dict(betas=(1.0, 0.999)), "betas[0]", 1.0),
                  (name, dict(betas=(-0.1, 0.999)), "betas[0]", -0.1),
                  (name, dict(betas=(0.9, 1.0)), "betas[1]", 1.0),
                  (name, dict(betas=(0.0, 0.0)), "betas[0]", 0.0)]  # allowed by both
    return cases


REFUSALS = _refusal_cases()


@pytest.mark.parametrize("name, kwargs, shown, value", REFUSALS,
                         ids=[f"{c[0]}-{c[2]}={c[3]}" for c in REFUSALS])
def test_a_hyperparameter_is_refused_in_one_line_where_torch_refuses_it(name, kwargs, shown,
                                                                       value):
    """Refused exactly where torch refuses (a ValueError in both), in one line naming the
    optimizer, the hyperparameter and the value; accepted where torch accepts."""
    try:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
        torch_refuses = False
    except ValueError:
        torch_refuses = True
    p = cr.tensor(np.zeros(2), requires_grad=True)
    if not torch_refuses:
        OURS[name]([p], **kwargs)
        return
    with pytest.raises(ValueError) as refused:
        OURS[name]([p], **kwargs)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{name}: {shown} ")
    assert message.endswith(f"got {value}")


TORCH_ONLY_FLAGS = ["foreach", "fused", "capturable", "differentiable"]


@pytest.mark.parametrize("name", [*OURS, "LBFGS"])
def test_torchs_implementation_flags_are_not_arguments(name):
    """foreach, fused, capturable, differentiable choose torch's kernels: not arguments
    here (TypeError by Python), rather than accepted and ignored; and every
    hyperparameter after lr is keyword-only."""
    ours = LBFGS if name == "LBFGS" else OURS[name]
    p = cr.tensor(np.zeros(2), requires_grad=True)
    for flag in TORCH_ONLY_FLAGS:
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{flag}'"):
            ours([p], **{flag: False})
    with pytest.raises(TypeError, match="positional"):
        ours([p], 0.1, 0.5)


@pytest.mark.parametrize("name", list(OURS))
def test_arguments_and_defaults_are_torchs_but_its_implementation_flags(name):
    """The same hyperparameters, in torch's order, with torch's defaults."""
    def arguments(cls):
        return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()
                if p.name not in TORCH_ONLY_FLAGS]
    assert arguments(OURS[name]) == arguments(getattr(torch.optim, name))


# ---------------------------------------------------------------------------------------
# 3. Under cr.jit; maximize
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kwargs", CORNERS, ids=CORNER_IDS)
def test_a_jitted_training_step_gives_the_eager_numbers_to_the_last_bit(
        name, kwargs, blocks):  # noqa: F811 (blocks: the fixture imported above)
    """A whole step (forward, backward, update) under cr.jit, 20 times: the losses,
    parameters and state are the eager run's, bit for bit, on whole arrays and by blocks
    of rows. The step count is an input of the program, so a choice on it (RAdam's
    rectification) is np.where's."""
    (eager_model, x, y), (jit_model, _, _) = training_problem(), training_problem()
    eager_opt = OURS[name](eager_model.parameters(), **kwargs)
    jit_opt = OURS[name](jit_model.parameters(), **kwargs)
    step = cr.jit(train_step)
    for _ in range(20):
        eager_loss = train_step(eager_model, eager_opt, x, y)
        np.testing.assert_array_equal(eager_loss.data, step(jit_model, jit_opt, x, y).data)
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        np.testing.assert_array_equal(p.data, q.data)
        assert eager_opt.state[p].keys() == jit_opt.state[q].keys()
        for key in eager_opt.state[p]:
            np.testing.assert_array_equal(eager_opt.state[p][key], jit_opt.state[q][key])
    # traced without the optimizer's state (if it has none at first), then with it
    assert sum(len(entries) for entries in step._programs.values()) <= 3


@pytest.mark.parametrize("name", list(OURS))
def test_maximize_climbs_exactly_as_descending_the_negated_loss(name):
    """maximize=True on a concave function's gradient raises it, and takes the very
    steps that maximize=False takes on the negated gradient."""
    lr = dict(Adadelta=1.0).get(name, 0.05)
    up_x, down_x = (cr.tensor(np.array([0.0, 3.0, -1.0]), requires_grad=True)
                    for _ in range(2))
    decay = dict(weight_decay=0.01) if takes(name, "weight_decay") else {}
    up = OURS[name]([up_x], lr=lr, maximize=True, **decay)
    down = OURS[name]([down_x], lr=lr, **decay)
    height = lambda x: -np.sum((x - 1.0) ** 2)
    start = height(up_x.data)
    for _ in range(30):
        up_x.grad = -2 * (up_x.data - 1.0)
        down_x.grad = 2 * (down_x.data - 1.0)
        up.step()
        down.step()
        np.testing.assert_array_equal(up_x.data, down_x.data)
    assert height(up_x.data) > start


def test_rmsprop_switched_to_momentum_and_centering_mid_run_starts_them_at_zero():
    """Momentum or centering switched on after the first step: their buffers start at
    zero then, as they would have at the first step (torch raises KeyError)."""
    w = cr.tensor(np.array([1.0, -2.0]), requires_grad=True)
    opt = RMSprop([w], lr=0.1)
    w.grad = np.array([0.5, 0.5])
    opt.step()
    opt.param_groups[0].update(momentum=0.9, centered=True)
    w.grad = np.array([0.5, -1.0])
    opt.step()
    np.testing.assert_allclose(opt.state[w]["grad_avg"], 0.01 * w.grad)
    assert opt.state[w]["momentum_buffer"].shape == (2,)
    tw = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    theirs = torch.optim.RMSprop([tw], lr=0.1)
    tw.grad = torch.tensor([0.5, 0.5], dtype=torch.float64)
    theirs.step()
    theirs.param_groups[0].update(momentum=0.9, centered=True)
    with pytest.raises(KeyError):
        theirs.step()


def test_rprop_keeps_the_step_size_where_a_gradient_is_zero_and_skips_a_flip_as_torch():
    """Gradients with exact zeros, sign flips and agreements, entry by entry: a zero (this
    step's or the last's) leaves the step size and does not move the entry; a flip
    shrinks the step size, does not move the entry and stores 0 as the last gradient,
    so the step after it keeps the size whatever its sign. torch's numbers exactly."""
    grads = [[1.0, 0.0, -2.0, 3.0, 0.0], [2.0, 1.0, 1.0, -3.0, 0.0],
             [0.0, 4.0, -1.0, 5.0, 0.0], [-1.0, 2.0, 1.0, 6.0, 0.0],
             [-1.0, -2.0, 3.0, -6.0, 0.0]]
    w = cr.tensor(np.zeros(5), requires_grad=True)
    wt = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    ours, theirs = Rprop([w], lr=0.1), torch.optim.Rprop([wt], lr=0.1)
    for g in grads:
        w.grad, wt.grad = np.array(g), torch.tensor(g, dtype=torch.float64)
        ours.step()
        theirs.step()
        np.testing.assert_array_equal(w.data, wt.detach().numpy())
        assert_states_equal(ours.state_dict()["state"], theirs.state_dict()["state"], 0, 0)
    # entry 0, gradients +, +, 0, -, -: stays (no last gradient), grows, stays (and
    # no move), stays (the last was 0), grows
    np.testing.assert_allclose(ours.state[w]["step_size"][0], 0.1 * 1.2 * 1.2, rtol=1e-15)
    assert w.data[4] == 0 and ours.state[w]["step_size"][4] == 0.1  # never a gradient
    np.testing.assert_array_equal(ours.state[w]["prev"], [-1.0, 0.0, 3.0, 0.0, 0.0])


@pytest.mark.parametrize("name, kwargs", [("Rprop", dict(lr=0.1)),
                                          ("ASGD", dict(lr=0.1, t0=2, weight_decay=0.1))])
def test_rprop_and_asgd_move_a_complex_parameter_as_its_two_real_parts_as_torch(
        name, kwargs, torch_float64_scalars):
    """A complex parameter: Rprop's signs and step sizes are the real and imaginary
    parts' own (its step_size starts at lr + lr*1j), as torch's view_as_real does;
    ASGD's arithmetic is the same on them. torch's numbers and state over 10 steps."""
    start = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    z = cr.tensor(start.copy(), requires_grad=True)
    zt = torch.tensor(start.copy(), requires_grad=True)
    ours, theirs = OURS[name]([z], **kwargs), getattr(torch.optim, name)([zt], **kwargs)
    target = np.array([1 + 2j, -1j, 0.5, -2 + 1j])
    field = lambda x: 2 * (x - target) + 0.3 * np.sin(x)  # the same "gradient" for both
    for _ in range(10):
        z.grad, zt.grad = field(z.data), torch.from_numpy(field(zt.detach().numpy()))
        ours.step()
        theirs.step()
        assert z.data.dtype == np.complex128
        np.testing.assert_allclose(z.data, zt.detach().numpy(), rtol=RTOL64, atol=ATOL64)
        assert_states_equal(ours.state_dict()["state"], theirs.state_dict()["state"],
                            RTOL64, ATOL64)


def test_asgd_averages_the_iterates_from_step_t0_plus_2_as_torch():
    """Up to step t0 + 2, ax is the parameter itself; from there it is the mean of the
    iterates since step t0 + 2 (mu = 1/(t - t0) of the step before). torch's ax and
    parameters at every step, float64."""
    torch.set_default_dtype(torch.float64)  # torch's eta and mu in float64 (conftest resets)
    t0, values = 3, starts(np.float64)
    ours, opt, theirs, opt_t = build("ASGD", dict(lr=0.05, t0=t0), values)
    history = []
    for t in range(1, STEPS + 1):
        one_step(ours, opt, False, False)
        one_step(theirs, opt_t, False, True)
        history.append(ours[0].data.copy())
        ax = opt.state[ours[0]]["ax"]
        expected = history[-1] if t <= t0 + 2 else np.mean(history[t0 + 1:], axis=0)
        np.testing.assert_allclose(ax, expected, rtol=1e-12, atol=ATOL64)
        np.testing.assert_allclose(ax, opt_t.state[theirs[0]]["ax"].numpy(), rtol=RTOL64,
                                   atol=ATOL64)
        np.testing.assert_allclose(numbers(ours[0]), numbers(theirs[0]), rtol=RTOL64)
    assert opt.state[ours[0]]["mu"] == 1 / (STEPS - t0)


ADAFACTOR_SHAPES = [(), (7,), (4, 6), (3, 4, 5), (2, 1, 3, 2)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", ADAFACTOR_SHAPES, ids=str)
def test_adafactor_factors_the_last_two_dimensions_as_torch(shape, dtype,
                                                            torch_float64_scalars):
    """A parameter of 0, 1, 2, 3 and 4 dimensions, alone: ``variance`` of its shape up
    to one dimension, ``row_var`` (..., R, 1) and ``col_var`` (..., 1, C) from two on;
    torch's parameters and state after each of 15 steps, float32 staying float32 (its
    eps[0], None, is float32's machine epsilon)."""
    start = RNG.uniform(-1.5, 1.5, size=shape).astype(dtype)
    kwargs = dict(lr=0.05, weight_decay=0.02)
    ours = cr.tensor(start.copy(), requires_grad=True)
    theirs = torch.tensor(start.copy(), requires_grad=True)
    opt, opt_t = Adafactor([ours], **kwargs), torch.optim.Adafactor([theirs], **kwargs)
    rtol, atol, state_tol = ((RTOL64, ATOL64, RTOL64) if dtype == np.float64
                             else (RTOL32, ATOL32, STATE_TOL32))
    for _ in range(STEPS):
        one_step([ours], opt, False, False)
        one_step([theirs], opt_t, False, True)
        assert ours.data.dtype == dtype
        np.testing.assert_allclose(ours.data, numbers(theirs), rtol=rtol, atol=atol)
        assert_states_equal(opt.state_dict()["state"], opt_t.state_dict()["state"],
                            state_tol, state_tol)
    state = opt.state[ours]
    if len(shape) >= 2:
        assert state["row_var"].shape == shape[:-1] + (1,)
        assert state["col_var"].shape == shape[:-2] + (1,) + shape[-1:]
        assert "variance" not in state
    else:
        assert state["variance"].shape == shape and "row_var" not in state
    assert all(v.dtype == dtype for v in state.values() if isinstance(v, np.ndarray))


def test_adafactor_resumes_its_factored_state_and_refuses_a_misshapen_one():
    """load_state_dict takes row_var and col_var in their own shapes (not the
    parameter's), and refuses one of another shape in one line."""
    w = cr.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    opt = Adafactor([w])
    w.grad = RNG.standard_normal((3, 4))
    opt.step()
    saved = opt.state_dict()
    again = Adafactor([w])
    again.load_state_dict(saved)
    assert again.state[w]["row_var"].shape == (3, 1)
    saved["state"][0]["col_var"] = np.zeros((3, 4))
    with pytest.raises(ValueError, match=r"^Adafactor.load_state_dict: 'col_var' of "
                                         r"parameter 0 has shape \(3, 4\), expected "
                                         r"\(1, 4\)$"):
        Adafactor([w]).load_state_dict(saved)


def test_adafactor_refuses_a_complex_parameter_as_torch():
    z = cr.tensor(np.ones(3, complex), requires_grad=True)
    z.grad = np.ones(3, complex)
    with pytest.raises(TypeError, match="^Adafactor: complex parameters are not supported"):
        Adafactor([z]).step()
    zt = torch.ones(3, dtype=torch.complex128, requires_grad=True)
    zt.grad = torch.ones(3, dtype=torch.complex128)
    with pytest.raises(RuntimeError, match="complex"):
        torch.optim.Adafactor([zt]).step()


def test_adamax_step_is_also_jaxs_when_given_u_plus_eps():
    """nn/updates.adamax_step, shared: PyTorch's Adamax divides by u (eps inside the
    maximum), JAX's by u + eps; given that, it is example_libraries' adamax step."""
    from chainrule.example_libraries import optimizers
    from chainrule.nn.updates import adamax_step
    init, update, get_params = optimizers.adamax(0.1, b1=0.8, b2=0.9, eps=1e-3)
    state, x, m, u = init(np.array([1.0, -2.0])), np.array([1.0, -2.0]), 0.0, 0.0
    for i, g in enumerate([np.array([0.5, -1.0]), np.array([-0.25, 2.0])]):
        state = update(i, g, state)
        m, u = 0.8 * m + 0.2 * g, np.maximum(0.9 * u, np.abs(g))
        x = x - adamax_step(m, u + 1e-3, i + 1, 0.1, 0.8)
        np.testing.assert_allclose(get_params(state), x, rtol=1e-15)


# ---------------------------------------------------------------------------------------
# 4. LBFGS
# ---------------------------------------------------------------------------------------

def rosenbrock(flat):
    """Rosenbrock's function of 4 variables and its gradient: a curved, narrow valley."""
    a, b = flat[:-1], flat[1:]
    loss = np.sum(100 * (b - a * a) ** 2 + (1 - a) ** 2)
    grad = np.zeros_like(flat)
    grad[:-1] += -400 * a * (b - a * a) - 2 * (1 - a)
    grad[1:] += 200 * (b - a * a)
    return loss, grad


def least_squares(seed):
    """0.5 |A x - b|^2 over 5 unknowns, A 20 by 5."""
    rng = np.random.default_rng(seed)
    A, b = rng.standard_normal((20, 5)), rng.standard_normal(20)
    return lambda x: (0.5 * np.sum((A @ x - b) ** 2), A.T @ (A @ x - b))


def set_flat_gradients(params, problem, torch_side):
    arrays = [numbers(p) for p in params]
    loss, grad = problem(np.concatenate([a.reshape(-1) for a in arrays]).astype(np.float64))
    offset = 0
    for p, a in zip(params, arrays):
        g = grad[offset:offset + a.size].reshape(a.shape).astype(a.dtype)
        offset += a.size
        p.grad = torch.from_numpy(g) if torch_side else float(g) if isinstance(p, Value) else g
    set_flat_gradients.loss = loss


def lbfgs_pair(problem, start, shapes, kwargs, value_param=True):
    """Both sides' parameters (``start`` cut into ``shapes``; a 0-d one a Value here),
    LBFGS optimizers and closures."""
    pieces, offset = [], 0
    for shape in shapes:
        n = int(np.prod(shape))
        pieces.append(start[offset:offset + n].reshape(shape))
        offset += n
    ours, theirs = make_ours(pieces, value_param), make_theirs(pieces)
    opt_ours, opt_theirs = LBFGS(ours, **kwargs), torch.optim.LBFGS(theirs, **kwargs)

    def closure_for(params, opt, torch_side):
        def closure():
            opt.zero_grad()
            set_flat_gradients(params, problem, torch_side)
            loss = set_flat_gradients.loss
            return torch.tensor(loss) if torch_side else cr.tensor(loss)
        return closure
    return (ours, opt_ours, closure_for(ours, opt_ours, False),
            theirs, opt_theirs, closure_for(theirs, opt_theirs, True))


def assert_lbfgs_states_equal(ours, theirs, rtol, atol):
    """LBFGS's state: its names, numbers, and lists (of vectors, or None) as torch's."""
    assert ours.keys() == theirs.keys()
    for number in ours:
        assert ours[number].keys() == theirs[number].keys()
        for key, value in theirs[number].items():
            mine = ours[number][key]
            if isinstance(value, list):
                assert len(mine) == len(value), key
                for a, b in zip(mine, value):
                    assert (a is None) == (b is None), key
                    if b is not None:
                        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=rtol,
                                                   atol=atol, err_msg=key)
            else:
                expected = value.numpy() if isinstance(value, torch.Tensor) else value
                np.testing.assert_allclose(np.asarray(mine), expected, rtol=rtol,
                                           atol=atol, err_msg=key)


# LBFGS's history holds differences of nearly equal gradients, y = g_k+1 - g_k, their
# products and inverses (ro = 1/(y.s)): near a minimum these cancel down to a few correct
# digits in any two float64 runs whose gradients differ by an ulp. Its state is compared
# to 1e-4 (its counters exactly) over the first step() calls, before a run nears a
# minimum; its iterates at the tolerances below.
LBFGS_STATE_RTOL = 1e-4

LBFGS_CONFIGS = _grid(line_search_fn=[None, "strong_wolfe"], history_size=[100, 3],
                      max_iter=[20, 4])
LBFGS_IDS = ["-".join(f"{k}={v}" for k, v in c.items()) for c in LBFGS_CONFIGS]


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS, ids=LBFGS_IDS)
def test_lbfgs_follows_torchs_iterates_on_rosenbrocks_function(kwargs):
    """From (-1.2, 1, -0.5, 0.8), split over a (2,) tensor, a Value and a (1,) tensor:
    the same evaluation counts after every step() (the same path through every branch
    of the iterations and the line search) and the same iterates and state. The first
    step() agrees to 1e-12; over the next ones, dot products summed in another order
    (torch's BLAS, NumPy's) drift by a few ulps that the valley's curvature amplifies,
    so 1e-7 over 8 step() calls (the loss falls by 10 orders of magnitude there)."""
    if kwargs["line_search_fn"] is None:
        kwargs = {**kwargs, "lr": 0.1}  # lr 1 without a line search leaves the valley
    ours, opt, closure, theirs, opt_t, closure_t = lbfgs_pair(
        rosenbrock, np.array([-1.2, 1.0, -0.5, 0.8]), [(2,), (), (1,)], kwargs)
    for k in range(8):
        loss, loss_t = opt.step(closure), opt_t.step(closure_t)
        np.testing.assert_allclose(loss.data, loss_t.item(), rtol=1e-7 if k else 0)
        tol = RTOL64 if k == 0 else 1e-7
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(numbers(p), numbers(q), rtol=tol, atol=tol)
        state, state_t = opt.state_dict()["state"], opt_t.state_dict()["state"]
        assert state[0]["func_evals"] == state_t[0]["func_evals"]
        assert state[0]["n_iter"] == state_t[0]["n_iter"]
        if k < 3:  # (later, near a minimum, the history is made of cancellations)
            assert_lbfgs_states_equal(state, state_t, LBFGS_STATE_RTOL, 0)
    if kwargs["line_search_fn"] and kwargs["max_iter"] == 20:
        np.testing.assert_allclose(np.concatenate([np.reshape(numbers(p), -1) for p in ours]),
                                   np.ones(4), atol=1e-4)  # (the minimum)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_solves_least_squares_as_torch(line_search_fn):
    """A well-conditioned least-squares problem: torch's numbers to 1e-12 at every step()
    and the solution of the normal equations."""
    problem = least_squares(3)
    lr = 1
    ours, opt, closure, theirs, opt_t, closure_t = lbfgs_pair(
        problem, np.zeros(5), [(3,), (), (1,)],
        dict(lr=lr, max_iter=10, line_search_fn=line_search_fn))
    for _ in range(4):
        opt.step(closure)
        opt_t.step(closure_t)
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(numbers(p), numbers(q), rtol=RTOL64, atol=ATOL64)
        assert_lbfgs_states_equal(opt.state_dict()["state"], opt_t.state_dict()["state"],
                                  LBFGS_STATE_RTOL, 0)
    x = np.concatenate([np.reshape(numbers(p), -1) for p in ours])
    rng = np.random.default_rng(3)
    A, b = rng.standard_normal((20, 5)), rng.standard_normal(20)
    np.testing.assert_allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-6)


def test_lbfgs_trains_a_logistic_regression_with_each_librarys_gradients():
    """The loss and its gradients computed by each library's own backward (chainrule's
    Tensors, torch's autograd) on 60 points: the same iterates to 1e-10 (the two
    backward passes sum in different orders) and the same evaluation counts."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 3))
    y = (X @ np.array([1.5, -2.0, 0.5]) + 0.3 * rng.standard_normal(60) > 0).astype(float)
    w, b = cr.tensor(np.zeros(3), requires_grad=True), cr.tensor(0.0, requires_grad=True)
    wt, bt = torch.zeros(3, dtype=torch.float64, requires_grad=True), \
        torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    opt = LBFGS([w, b], line_search_fn="strong_wolfe", max_iter=15)
    opt_t = torch.optim.LBFGS([wt, bt], line_search_fn="strong_wolfe", max_iter=15)
    Xc, Xt, yt = cr.tensor(X), torch.from_numpy(X), torch.from_numpy(y)

    def closure():
        opt.zero_grad()
        z = Xc @ w + b
        loss = cr.mean(cr.log(1 + cr.exp(z)) - cr.tensor(y) * z)
        loss.backward()
        return loss

    def closure_t():
        opt_t.zero_grad()
        z = Xt @ wt + bt
        loss = torch.mean(torch.log(1 + torch.exp(z)) - yt * z)
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
        opt_t.step(closure_t)
        np.testing.assert_allclose(w.data, wt.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(b.data, bt.item(), rtol=1e-10, atol=1e-12)
        assert opt.state[w]["func_evals"] == opt_t.state[wt]["func_evals"]


def test_lbfgs_moves_a_complex_parameter_as_its_real_and_imaginary_parts_as_torch():
    """A complex least-squares problem, |A z - b|^2 in 12 real unknowns, its gradient
    (torch's convention for a complex parameter) computed by torch for both sides: the
    same iterates to 1e-12 over 8 iterations (before the minimum, where the line
    search's tests compare numbers equal to rounding)."""
    rng = np.random.default_rng(7)
    A = torch.from_numpy(rng.standard_normal((12, 6)) + 1j * rng.standard_normal((12, 6)))
    b = torch.from_numpy(rng.standard_normal(12) + 1j * rng.standard_normal(12))

    def loss_and_grad(z):
        z = torch.from_numpy(z.copy()).requires_grad_()
        r = A @ z - b
        loss = (r.conj() * r).real.sum()
        loss.backward()
        return loss.item(), z.grad.numpy()
    z = cr.tensor(np.zeros(6, complex), requires_grad=True)
    zt = torch.zeros(6, dtype=torch.complex128, requires_grad=True)
    opt = LBFGS([z], line_search_fn="strong_wolfe", max_iter=4)
    opt_t = torch.optim.LBFGS([zt], line_search_fn="strong_wolfe", max_iter=4)

    def closure():
        opt.zero_grad()
        loss, z.grad = loss_and_grad(z.data)
        return loss

    def closure_t():
        opt_t.zero_grad()
        loss, grad = loss_and_grad(zt.detach().numpy())
        zt.grad = torch.from_numpy(grad)
        return torch.tensor(loss)
    for _ in range(2):
        opt.step(closure)
        opt_t.step(closure_t)
        assert z.data.dtype == np.complex128
        assert opt.state[z]["func_evals"] == opt_t.state[zt]["func_evals"]
        np.testing.assert_allclose(z.data, zt.detach().numpy(), rtol=RTOL64, atol=ATOL64)


def test_lbfgs_keeps_float32_parameters_float32():
    """float32 parameters stay float32, within float32's precision of torch's after a
    step() of 5 iterations (torch's step lengths are float32 tensors, ours float64
    numbers: the path agrees to float32 rounding)."""
    ours, opt, closure, theirs, opt_t, closure_t = lbfgs_pair(
        least_squares(4), np.zeros(5, dtype=np.float32), [(3,), (2,)],
        dict(max_iter=5, line_search_fn="strong_wolfe"))
    opt.step(closure)
    opt_t.step(closure_t)
    for p, q in zip(ours, theirs):
        assert p.data.dtype == np.float32
        np.testing.assert_allclose(numbers(p), numbers(q), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_resumes_from_a_state_dict_mid_run_identically(line_search_fn):
    """Six step() calls straight, and three, state_dict, a new LBFGS, load_state_dict,
    three more: the same numbers to the last bit (the history is saved as copies)."""
    kwargs = dict(lr=0.1 if line_search_fn is None else 1, max_iter=4, history_size=3,
                  line_search_fn=line_search_fn)
    start = np.array([-1.2, 1.0, -0.5, 0.8])
    straight, opt, closure, *_ = lbfgs_pair(rosenbrock, start, [(2,), (2,)], kwargs)
    for _ in range(6):
        opt.step(closure)
    resumed, first, first_closure, *_ = lbfgs_pair(rosenbrock, start, [(2,), (2,)], kwargs)
    for _ in range(3):
        first.step(first_closure)
    saved = first.state_dict()
    snapshot, positions = copy.deepcopy(saved), [numbers(p).copy() for p in resumed]
    first.step(first_closure)  # going on does not change what was saved
    assert_lbfgs_states_equal(saved["state"], {0: {
        k: [torch.from_numpy(np.asarray(x)) if x is not None else None for x in v]
        if isinstance(v, list) else v for k, v in snapshot["state"][0].items()}}, 0, 0)
    for p, x in zip(resumed, positions):
        p.data = x
    second = LBFGS(resumed, **kwargs)
    second.load_state_dict(saved)
    closure_2 = lambda: first_closure()  # (the closure reads the same parameters)
    for _ in range(3):
        second.step(closure_2)
    for p, q in zip(straight, resumed):
        np.testing.assert_array_equal(numbers(p), numbers(q))


def test_lbfgs_step_without_a_closure_is_a_one_line_type_error():
    """torch's step(closure) has no default; here the error also says what it is for."""
    opt = LBFGS([cr.tensor(np.zeros(2), requires_grad=True)])
    with pytest.raises(TypeError, match=r"^LBFGS.step needs a closure that recomputes the "
                                        r"loss and its gradients: opt.step\(closure\)$"):
        opt.step()


def test_lbfgs_takes_one_parameter_group_as_torch():
    a, b = (cr.tensor(np.zeros(2), requires_grad=True) for _ in range(2))
    with pytest.raises(ValueError, match="^LBFGS: takes one parameter group"):
        LBFGS([{"params": [a]}, {"params": [b], "lr": 0.5}])
    with pytest.raises(ValueError):
        torch.optim.LBFGS([{"params": [torch.zeros(2, requires_grad=True)]},
                           {"params": [torch.zeros(2, requires_grad=True)], "lr": 0.5}])
    with pytest.raises(ValueError, match="^LBFGS: takes one parameter group"):
        LBFGS([a]).add_param_group({"params": [b]})


LBFGS_REFUSALS = [  # (keyword arguments, shown in the error, does torch refuse at once)
    (dict(lr=-1.0), "lr must be >= 0, got -1.0", True),
    (dict(line_search_fn="armijo"), "line_search_fn must be None or 'strong_wolfe', got "
                                    "'armijo'", False),
    (dict(max_iter=0), "max_iter must be a positive integer, got 0", False),
    (dict(max_eval=2.5), "max_eval must be a positive integer, got 2.5", False),
    (dict(history_size=0), "history_size must be a positive integer, got 0", False),
    (dict(tolerance_grad=-1e-7), "tolerance_grad must be >= 0, got -1e-07", False),
    (dict(tolerance_change=float("nan")), "tolerance_change must be >= 0, got nan", False),
]


@pytest.mark.parametrize("kwargs, shown, torch_refuses", LBFGS_REFUSALS,
                         ids=[next(iter(c[0])) for c in LBFGS_REFUSALS])
def test_lbfgs_refuses_a_bad_setting_in_one_line_at_once(kwargs, shown, torch_refuses):
    """torch refuses only lr < 0 when it is built (another line search raises at the
    first step, the rest fail later or loop without iterating): here each is refused
    when the optimizer is built."""
    with pytest.raises(ValueError, match="^LBFGS: " + shown.replace("(", r"\(")
                       .replace(")", r"\)") + "$"):
        LBFGS([cr.tensor(np.zeros(2), requires_grad=True)], **kwargs)
    try:
        torch.optim.LBFGS([torch.zeros(2, requires_grad=True)], **kwargs)
        refused = False
    except ValueError:
        refused = True
    assert refused == torch_refuses


def test_lbfgs_refuses_to_run_under_jit():
    """Its loops choose on the loss's values, which a traced program does not know."""
    w = cr.tensor(np.array([1.0, 2.0]), requires_grad=True)
    opt = LBFGS([w])

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    @cr.jit
    def step(x):
        return opt.step(closure) + x
    with pytest.raises(TypeError, match="^LBFGS: cannot run under cr.jit"):
        step(np.zeros(1))


# ---------------------------------------------------------------------------------------
# 5. swa_utils: AveragedModel, the averaging functions, update_bn
# ---------------------------------------------------------------------------------------

swa = cr.optim.swa_utils


def twin_models():
    """The same model in both libraries: Linear(3, 4), BatchNorm1d(4), Linear(4, 2)."""
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.Linear(4, 2)).double()
    ours = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=0), cr.nn.BatchNorm1d(4),
                            cr.nn.Linear(4, 2, rng=1))
    set_both(ours, theirs)
    return ours, theirs


def set_both(ours, theirs):
    """New random numbers in both models' parameters and buffers (BatchNorm's count an
    integer)."""
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        p.data = RNG.standard_normal(p.shape)
        q.data.copy_(torch.from_numpy(p.data))
    for (name, b), q in zip(ours.named_buffers(), theirs.buffers(), strict=True):
        new = RNG.integers(0, 9, size=b.shape) if b.dtype.kind == "i" else \
            RNG.uniform(0.5, 2.0, size=b.shape)
        np.copyto(b, new, casting="unsafe")
        q.copy_(torch.from_numpy(np.asarray(b)))


def assert_models_equal(ours, theirs, rtol):
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=rtol, atol=ATOL64)
    for b, q in zip(ours.buffers(), theirs.buffers(), strict=True):
        assert np.asarray(b).dtype == q.numpy().dtype
        np.testing.assert_allclose(b, q.numpy(), rtol=rtol, atol=ATOL64)


AVERAGES = {  # name: (chainrule's arguments, torch's)
    "swa": ({}, {}),
    "avg_fn-ema": (dict(avg_fn=swa.get_ema_avg_fn(0.8)),
                   dict(avg_fn=torch.optim.swa_utils.get_ema_avg_fn(0.8))),
    "multi-ema": (dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.7)),
                  dict(multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.7))),
    "multi-swa": (dict(multi_avg_fn=swa.get_swa_multi_avg_fn()),
                  dict(multi_avg_fn=torch.optim.swa_utils.get_swa_multi_avg_fn())),
    "avg_fn-swa": (dict(avg_fn=swa.get_swa_avg_fn()),
                   dict(avg_fn=torch.optim.swa_utils.get_swa_avg_fn())),
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("average", list(AVERAGES))
def test_averaged_model_follows_torchs_average_update_by_update(average, use_buffers,
                                                               torch_float64_scalars):
    """Six updates from models given new numbers each time: the averaged parameters and
    buffers (copied, or averaged with use_buffers, BatchNorm's integer count too) and
    n_averaged are torch's after each; the model itself is left as it is. (torch's
    get_swa_multi_avg_fn computes its weight 1/(n+1) in the default dtype, float32
    unless changed; chainrule's is float64: compared with torch's in float64.)"""
    ours_kwargs, theirs_kwargs = AVERAGES[average]
    if use_buffers and average == "multi-swa":
        pytest.skip("torch's raises on the integer buffer (see the test after this one)")
    model, model_t = twin_models()
    averaged = swa.AveragedModel(model, use_buffers=use_buffers, **ours_kwargs)
    averaged_t = torch.optim.swa_utils.AveragedModel(model_t, use_buffers=use_buffers,
                                                     **theirs_kwargs)
    for _ in range(6):
        set_both(model, model_t)
        before = [p.data.copy() for p in model.parameters()]
        averaged.update_parameters(model)
        averaged_t.update_parameters(model_t)
        assert_models_equal(averaged.module, averaged_t.module, RTOL64)
        assert int(averaged.n_averaged) == int(averaged_t.n_averaged)
        for p, x in zip(model.parameters(), before):
            np.testing.assert_array_equal(p.data, x)
    # torch's layout: the copy's entries under "module.", and n_averaged
    for wrapper, inner in ((averaged, model), (averaged_t, model_t)):
        assert sorted(wrapper.state_dict()) == sorted(
            ["n_averaged", *("module." + k for k in inner.state_dict())])
    x = RNG.standard_normal((5, 3))
    averaged.eval()
    averaged_t.eval()
    np.testing.assert_allclose(averaged(cr.tensor(x)).data,
                               averaged_t(torch.from_numpy(x)).detach().numpy(), rtol=1e-10)


def test_swa_multi_avg_fn_averages_an_integer_buffer_where_torch_raises():
    """Not torch's: with use_buffers, torch's get_swa_multi_avg_fn raises on BatchNorm's
    integer count (addcdiv refuses integers); chainrule's takes its running mean,
    rounded towards zero as any average written into an integer."""
    model, model_t = twin_models()
    fn_t = torch.optim.swa_utils.get_swa_multi_avg_fn()
    averaged_t = torch.optim.swa_utils.AveragedModel(model_t, use_buffers=True,
                                                     multi_avg_fn=fn_t)
    averaged = swa.AveragedModel(model, use_buffers=True,
                                 multi_avg_fn=swa.get_swa_multi_avg_fn())
    averaged_t.update_parameters(model_t)
    with pytest.raises(RuntimeError, match="addcdiv"):
        averaged_t.update_parameters(model_t)
    counts = []
    for count in (4, 9, 2):
        model.layers[1].num_batches_tracked[...] = count
        averaged.update_parameters(model)
        counts.append(int(averaged.module.layers[1].num_batches_tracked))
    assert counts == [4, 6, 4]  # 4; 4 + (9 - 4) / 2 = 6.5; 6 + (2 - 6) / 3 = 4.67


def test_averaged_model_averages_a_scalar_value_and_float32_tensors():
    """A Value parameter (a float) and float32 Tensors are averaged in their own types."""
    class Mixed(cr.nn.Module):
        def __init__(self):
            self.w = cr.nn.Parameter(np.ones(3, np.float32), dtype=np.float32)
            self.s = cr.Value(1.0)
    model = Mixed()
    for average in ({}, dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.5))):
        averaged = swa.AveragedModel(model, **average)
        for value in (1.0, 2.0, 6.0):
            model.w.data = np.full(3, value, np.float32)
            model.s.data = value
            averaged.update_parameters(model)
        expected = 3.0 if not average else 3.75  # the mean; ((1 + 2) / 2 + 6) / 2
        assert averaged.module.w.data.dtype == np.float32
        assert isinstance(averaged.module.s.data, float)
        np.testing.assert_allclose(averaged.module.w.data, expected, rtol=1e-6)
        np.testing.assert_allclose(averaged.module.s.data, expected, rtol=1e-15)


def test_update_bn_recomputes_the_running_statistics_as_torch():
    """One pass over three batches (given as (input, target) pairs): the running mean
    and variance averaged over them (momentum None for the pass, put back after), the
    count 3, the mode restored, as torch's."""
    model, model_t = twin_models()
    model.eval()
    model_t.eval()
    batches = [(RNG.standard_normal((6, 3)), None) for _ in range(3)]
    swa.update_bn([(cr.tensor(x), y) for x, y in batches], model)
    torch.optim.swa_utils.update_bn([(torch.from_numpy(x), y) for x, y in batches], model_t)
    assert_models_equal(model, model_t, 1e-12)
    assert not model.training and model.layers[1].momentum == 0.1
    assert int(model.layers[1].num_batches_tracked) == 3


@pytest.mark.parametrize("maker", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
def test_an_ema_decay_outside_0_1_is_refused_in_one_line_as_torch(maker):
    with pytest.raises(ValueError):
        getattr(torch.optim.swa_utils, maker)(1.5)
    with pytest.raises(ValueError, match=f"^{maker}: decay must be in \\[0, 1\\], got 1.5$"):
        getattr(swa, maker)(1.5)


def test_averaged_model_takes_avg_fn_or_multi_avg_fn_not_both():
    model, model_t = twin_models()
    with pytest.raises(AssertionError):
        torch.optim.swa_utils.AveragedModel(model_t, avg_fn=lambda *a: a[0],
                                            multi_avg_fn=lambda *a: None)
    with pytest.raises(ValueError, match="^AveragedModel: give avg_fn or multi_avg_fn, "
                                         "not both$"):
        swa.AveragedModel(model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None)
