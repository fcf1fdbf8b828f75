"""chainrule's learning-rate schedules side by side with torch.optim.lr_scheduler's.

Each case builds the same optimizer in both (SGD with momentum, or Adam; three param
groups with different rates), the same schedule on it, and steps both past every phase,
restart and milestone, comparing after every step ``get_last_lr()``, every group's
``lr``, and every group's momentum (``momentum``, or ``betas[0]``). The cases are
generated over each schedule's arguments. Then: two schedules on one optimizer, a rate
changed by hand mid-run, a ``state_dict()`` loaded into a new schedule that goes on
identically, ReduceLROnPlateau on random metrics with plateaus, and the arguments torch
refuses, refused here in one line.

Tolerance: rtol 1e-12 throughout. The arithmetic is torch's own, in the same order, on
Python floats, so most values agree to the last bit; 1e-12 leaves room for a
rounding in a different order (none is known to need it).
"""

import inspect
import itertools
import math
import re

import numpy as np
import pytest
import torch
from seeds_and_tolerances import per_test_generator

import chainrule as cr
import chainrule.nn.optim.lr_scheduler as nn_lr_scheduler

RNG = per_test_generator(2613)
T = torch.optim.lr_scheduler
C = cr.optim.lr_scheduler
RTOL = 1e-12
LRS = (0.1, 0.05, 0.3)

# torch's own warnings about calling order (we step both optimizers first anyway)
pytestmark = pytest.mark.filterwarnings("ignore:.*lr_scheduler.step:UserWarning")

# Entries of torch's state_dict that are its warning machinery, not the schedule's
# state: chainrule keeps no such bookkeeping.
TORCH_BOOKKEEPING = {"_step_count", "_get_lr_called_within_step", "_is_initial"}

NEW = ["ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "CyclicLR",
       "OneCycleLR", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau",
       "MultiplicativeLR"]


# --- the harness -------------------------------------------------------------------------

def optimizers(kind, lrs=LRS):
    """The same optimizer in torch and in chainrule: one parameter a group, each group
    with its own learning rate."""
    theirs = [torch.nn.Parameter(torch.zeros(1, dtype=torch.float64)) for _ in lrs]
    ours = [cr.Value(0.0) for _ in lrs]

    def groups(params):
        return [{"params": [p], "lr": lr} for p, lr in zip(params, lrs)]
    if kind == "sgd":
        return (torch.optim.SGD(groups(theirs), lr=1e-3, momentum=0.9),
                cr.optim.SGD(groups(ours), lr=1e-3, momentum=0.9))
    return (torch.optim.Adam(groups(theirs), lr=1e-3, betas=(0.9, 0.99)),
            cr.optim.Adam(groups(ours), lr=1e-3, betas=(0.9, 0.99)))


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def assert_same(theirs, ours, opt_t, opt_c, where):
    """get_last_lr(), each group's lr and each group's momentum agree."""
    np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=RTOL,
                               atol=0, err_msg=f"get_last_lr {where}")
    np.testing.assert_allclose([g["lr"] for g in opt_c.param_groups],
                               [g["lr"] for g in opt_t.param_groups], rtol=RTOL, atol=0,
                               err_msg=f"the groups' lr {where}")
    np.testing.assert_allclose(momenta(opt_c), momenta(opt_t), rtol=RTOL, atol=0,
                               err_msg=f"the groups' momentum {where}")


def step_both(theirs, ours, opt_t, opt_c, *args):
    opt_t.step()
    opt_c.step()
    theirs.step(*args)
    ours.step(*args)


class Case:
    """A schedule built the same way on either library's optimizer, and how many steps
    take it through all it does."""

    def __init__(self, name, kwargs, steps, build=None):
        self.name, self.kwargs, self.steps = name, kwargs, steps
        self.build = build or (lambda lib, opt: getattr(lib, name)(opt, **kwargs))
        self.id = name + "(" + ",".join(f"{k}={short(v)}" for k, v in kwargs.items()) + ")"


def short(v):
    """v in a test's id, the same in every process (a function by its name, never by
    its repr, whose address differs between pytest-xdist's workers)."""
    if callable(v):
        return v.__name__
    if type(v) in (list, tuple):
        return "[" + ",".join(short(item) for item in v) + "]"
    return repr(v).replace(" ", "")


def grid(**axes):
    """Every combination of the axes' values; an axis at None is left to its default."""
    keys = list(axes)
    for values in itertools.product(*axes.values()):
        yield {k: v for k, v in zip(keys, values) if v is not None}


def halving(x):
    """A scale_fn: the cycle's height halves every cycle (or step)."""
    return 0.5 ** x


CASES = []
for kw in grid(factor=[None, 0.5, 1.0], total_iters=[None, 1, 4]):
    CASES.append(Case("ConstantLR", kw, 8))
def every_other(k):
    """A factor of the step count: 0.5 at odd steps, 1.25 at even ones."""
    return 0.5 if k % 2 else 1.25


for fn in [every_other, lambda k: 0.9, [every_other, lambda k: 0.8, lambda k: 1.1 ** k]]:
    CASES.append(Case("MultiplicativeLR", dict(lr_lambda=fn), 8))
def swalr(**kwargs):
    """SWALR, from either library's swa_utils."""
    return lambda lib, opt: (torch.optim.swa_utils if lib is T
                             else cr.optim.swa_utils).SWALR(opt, **kwargs)


for kw in grid(swa_lr=[0.05, [0.01, 0.2, 0.05]], anneal_epochs=[None, 0, 1, 4],
               anneal_strategy=[None, "linear"]):
    CASES.append(Case("SWALR", kw, 8, swalr(**kw)))
for kw in grid(total_iters=[None, 1, 6], power=[None, 0.5, 2.0]):
    CASES.append(Case("PolynomialLR", kw, 9))
for kw in grid(T_0=[1, 3], T_mult=[None, 2, 3], eta_min=[None, 0.01]):
    CASES.append(Case("CosineAnnealingWarmRestarts", kw, 30))
for mode, up, down, lrs in itertools.product(
        ["triangular", "triangular2", "exp_range"], [1, 3], [None, 2],
        [(0.01, 0.1), ([0.01, 0.02, 0.005], [0.1, 0.5, 0.05])]):
    kw = dict(base_lr=lrs[0], max_lr=lrs[1], step_size_up=up, mode=mode)
    if down is not None:
        kw["step_size_down"] = down
    if mode == "exp_range":
        kw["gamma"] = 0.95
    CASES.append(Case("CyclicLR", kw, 16))
for kw in grid(scale_mode=["cycle", "iterations"], cycle_momentum=[True, False],
               base_momentum=[None, [0.7, 0.8, 0.75]]):
    CASES.append(Case("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2,
                                       scale_fn=halving, **kw), 12))
for length, pct, anneal, three in itertools.product(
        [dict(total_steps=10), dict(total_steps=17), dict(epochs=3, steps_per_epoch=4)],
        [None, 0.0, 0.5], ["cos", "linear"], [False, True]):
    kw = dict(max_lr=0.5, **length, anneal_strategy=anneal, three_phase=three)
    if pct is not None:
        kw["pct_start"] = pct
    steps = length.get("total_steps") or 12
    CASES.append(Case("OneCycleLR", kw, steps))
for kw in grid(max_lr=[[0.5, 0.2, 1.0]], div_factor=[None, 10.0],
               final_div_factor=[None, 100.0], cycle_momentum=[True, False],
               max_momentum=[None, [0.95, 0.9, 0.99]]):
    CASES.append(Case("OneCycleLR", dict(total_steps=9, **kw), 9))


def sequential(*parts, milestones):
    """SequentialLR of the schedules ``parts`` (each a name and its arguments)."""
    def build(lib, opt):
        inner = [getattr(lib, name)(opt, **kw) for name, kw in parts]
        return lib.SequentialLR(opt, inner, milestones=milestones)
    return build


def chained(*parts, pass_optimizer=False):
    """ChainedScheduler of the schedules ``parts``."""
    def build(lib, opt):
        inner = [getattr(lib, name)(opt, **kw) for name, kw in parts]
        return lib.ChainedScheduler(inner, opt) if pass_optimizer else \
            lib.ChainedScheduler(inner)
    return build


COMBINED = [
    ("const-then-exp", sequential(("ConstantLR", dict(factor=0.1, total_iters=2)),
                                  ("ExponentialLR", dict(gamma=0.9)), milestones=[3]), 10),
    ("exp-from-milestone-0", sequential(("ConstantLR", dict(factor=0.1)),
                                        ("ExponentialLR", dict(gamma=0.9)),
                                        milestones=[0]), 6),
    ("linear-cosine-step", sequential(("LinearLR", dict(start_factor=0.25, total_iters=3)),
                                      ("CosineAnnealingLR", dict(T_max=4)),
                                      ("StepLR", dict(step_size=2, gamma=0.5)),
                                      milestones=[3, 8]), 14),
    ("poly-then-restarts", sequential(("PolynomialLR", dict(total_iters=3, power=2.0)),
                                      ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=2)),
                                      milestones=[4]), 16),
    ("linear-then-onecycle", sequential(("LinearLR", dict(start_factor=0.5, total_iters=2)),
                                        ("OneCycleLR", dict(max_lr=0.5, total_steps=8)),
                                        milestones=[3]), 11),
    ("cyclic-then-exp", sequential(("CyclicLR", dict(base_lr=0.01, max_lr=0.1,
                                                     step_size_up=2)),
                                   ("ExponentialLR", dict(gamma=0.8)), milestones=[5]), 10),
    ("exp-then-const-then-poly", sequential(("ExponentialLR", dict(gamma=0.9)),
                                            ("ConstantLR", dict(factor=0.5, total_iters=2)),
                                            ("PolynomialLR", dict(total_iters=4)),
                                            milestones=[3, 6]), 12),
    ("step-then-lambda", sequential(("StepLR", dict(step_size=2)),
                                    ("LambdaLR", dict(lr_lambda=lambda k: 0.8 ** k)),
                                    milestones=[3]), 8),
    ("step-then-multiplicative", sequential(("StepLR", dict(step_size=2)),
                                            ("MultiplicativeLR",
                                             dict(lr_lambda=every_other)),
                                            milestones=[3]), 8),
    ("chained-multiplicative-exp", chained(("MultiplicativeLR", dict(lr_lambda=every_other)),
                                           ("ExponentialLR", dict(gamma=0.9))), 8),
    ("linear-then-swalr", lambda lib, opt: lib.SequentialLR(
        opt, [lib.LinearLR(opt, start_factor=0.5, total_iters=2),
              swalr(swa_lr=0.02, anneal_epochs=3)(lib, opt)], milestones=[3]), 9),
    ("chained-const-exp", chained(("ConstantLR", dict(factor=0.5, total_iters=3)),
                                  ("ExponentialLR", dict(gamma=0.9))), 8),
    ("chained-poly-step", chained(("PolynomialLR", dict(total_iters=5, power=2.0)),
                                  ("StepLR", dict(step_size=2, gamma=0.5)),
                                  pass_optimizer=True), 9),
    ("chained-linear-restarts", chained(("LinearLR", dict(start_factor=0.5, total_iters=3)),
                                        ("CosineAnnealingWarmRestarts", dict(T_0=3))), 10),
    ("chained-const-cyclic", chained(("ConstantLR", dict(factor=0.5, total_iters=2)),
                                     ("CyclicLR", dict(base_lr=0.01, max_lr=0.1,
                                                       step_size_up=2))), 10),
]
for name, build, steps in COMBINED:
    case = Case("SequentialLR" if "chained" not in name else "ChainedScheduler", {}, steps,
                build)
    case.id = name
    CASES.append(case)


def nested_chain_first(lib, opt):
    """A ChainedScheduler as SequentialLR's first schedule."""
    inner = lib.ChainedScheduler([lib.ConstantLR(opt, factor=0.5, total_iters=2),
                                  lib.ExponentialLR(opt, gamma=0.9)])
    return lib.SequentialLR(opt, [inner, lib.StepLR(opt, step_size=2)], milestones=[4])


def run_both(case, kind, by_hand_at=None):
    opt_t, opt_c = optimizers(kind)
    theirs, ours = case.build(T, opt_t), case.build(C, opt_c)
    assert_same(theirs, ours, opt_t, opt_c, "after construction")
    for k in range(1, case.steps + 1):
        if k == by_hand_at:
            for group in [*opt_t.param_groups, *opt_c.param_groups]:
                group["lr"] *= 0.5
        step_both(theirs, ours, opt_t, opt_c)
        assert_same(theirs, ours, opt_t, opt_c, f"after step {k}")
    return theirs, ours, opt_t, opt_c


# --- every step, as torch's ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_step_matches_torch(case, kind):
    """The rates (and momenta) after construction and after every step are torch's."""
    run_both(case, kind)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_rate_changed_by_hand_is_carried_as_in_torch(case):
    """Halving every group's lr by hand mid-run: a chainable schedule goes on from the
    halved rate, a cyclic one overwrites it, each as torch's does."""
    run_both(case, "sgd", by_hand_at=3)


PAIRS = [
    (("ConstantLR", dict(factor=0.5, total_iters=3)), ("PolynomialLR", dict(total_iters=6))),
    (("PolynomialLR", dict(total_iters=4, power=2.0)), ("ExponentialLR", dict(gamma=0.9))),
    (("LinearLR", dict(start_factor=0.5, total_iters=3)), ("ConstantLR", dict(factor=0.2))),
    (("ConstantLR", dict(factor=0.5, total_iters=2)),
     ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2))),
    (("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2)),
     ("ConstantLR", dict(factor=0.5, total_iters=3))),
    (("OneCycleLR", dict(max_lr=0.5, total_steps=10)), ("StepLR", dict(step_size=3))),
    (("CosineAnnealingLR", dict(T_max=4)), ("PolynomialLR", dict(total_iters=5))),
    (("LinearLR", dict(start_factor=0.5, total_iters=3)),
     ("MultiplicativeLR", dict(lr_lambda=every_other))),
]


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("first,second", PAIRS, ids=lambda p: p[0])
def test_two_schedules_on_one_optimizer_compose_as_in_torch(first, second, kind):
    """Two schedules on one optimizer, stepped in turn: the second scales (or
    overwrites) what the first set, and the rates are torch's after every step."""
    opt_t, opt_c = optimizers(kind)
    theirs = [getattr(T, name)(opt_t, **kw) for name, kw in (first, second)]
    ours = [getattr(C, name)(opt_c, **kw) for name, kw in (first, second)]
    assert_same(theirs[1], ours[1], opt_t, opt_c, "after construction")
    for k in range(1, 11):
        opt_t.step()
        opt_c.step()
        for t, c in zip(theirs, ours):
            t.step()
            c.step()
        for t, c in zip(theirs, ours):
            assert_same(t, c, opt_t, opt_c, f"after step {k}")


# --- state_dict ----------------------------------------------------------------------------

def assert_same_data(ours, theirs, where):
    """Plain data equal: numbers to RTOL, containers entry by entry."""
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs) - TORCH_BOOKKEEPING, where
        for key in ours:
            assert_same_data(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_data(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float) and not math.isinf(theirs):
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=0, err_msg=where)
    else:
        assert ours == theirs, where


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_state_dict_is_torchs_and_resumes_identically(case):
    """Halfway, the state_dict holds what torch's holds (less its warning bookkeeping);
    a new schedule on a new optimizer, loaded from it and from the optimizer's, goes on
    with torch's rates."""
    opt_t, opt_c = optimizers("sgd")
    theirs, ours = case.build(T, opt_t), case.build(C, opt_c)
    half = case.steps // 2
    for _ in range(half):
        step_both(theirs, ours, opt_t, opt_c)
    saved = ours.state_dict()
    assert_same_data(saved, theirs.state_dict(), "state_dict")
    _, opt_new = optimizers("sgd")
    resumed = case.build(C, opt_new)       # made first, as torch's docs say, then loaded
    opt_new.load_state_dict(opt_c.state_dict())
    resumed.load_state_dict(saved)
    assert_same(theirs, resumed, opt_t, opt_new, "after loading")
    for k in range(half + 1, case.steps + 1):
        step_both(theirs, resumed, opt_t, opt_new)
        assert_same(theirs, resumed, opt_t, opt_new, f"after step {k}")


class Decay:
    """A scale_fn that is a callable object: its attributes are its state."""

    def __init__(self, base):
        self.base = base

    def __call__(self, x):
        return self.base ** x


def test_cyclic_scale_fn_in_the_state_dict_as_in_torch():
    """A scale_fn that is a function is saved as None; a callable object as its
    attributes, which loading puts back on the new schedule's scale_fn."""
    def fn(x):
        return 1.0
    for lib, opt in zip((T, C), optimizers("sgd")):
        assert lib.CyclicLR(opt, 0.01, 0.1, scale_fn=fn).state_dict()["_scale_fn_custom"] \
            is None
    states = []
    for lib, opt in zip((T, C), optimizers("sgd")):
        sched = lib.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=Decay(0.5))
        saved = sched.state_dict()
        kept = saved["_scale_fn_custom"]   # (torch's load takes it out of the dict given)
        again = lib.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=Decay(0.9))
        again.load_state_dict(saved)
        states.append((kept, again._scale_fn_custom.base))
    assert states[0] == states[1] == ({"base": 0.5}, 0.5)


def test_lambda_lr_lambdas_in_the_state_dict_as_in_torch():
    """LambdaLR's state_dict has torch's lr_lambdas, one per group: None for a function,
    a callable object's attributes, which loading puts back."""
    saved_by = []
    for lib, opt in zip((T, C), optimizers("sgd")):
        assert lib.LambdaLR(opt, lambda k: 1.0).state_dict()["lr_lambdas"] == [None] * 3
        saved = lib.LambdaLR(opt, Decay(0.5)).state_dict()
        again = lib.LambdaLR(opt, Decay(0.9))
        saved_by.append(saved["lr_lambdas"])
        again.load_state_dict(saved)
        assert again.get_last_lr() == [0.9 ** 0 * lr for lr in LRS]
        again.step()
        np.testing.assert_allclose(again.get_last_lr(), [0.5 * lr for lr in LRS], rtol=RTOL)
    assert saved_by[0] == saved_by[1] == [{"base": 0.5}] * 3


def test_multiplicative_lr_lambdas_in_the_state_dict_as_in_torch():
    """MultiplicativeLR's state_dict has torch's lr_lambdas, one per group: None for a
    function, a callable object's attributes, which loading puts back, each on its
    group's function."""
    saved_by = []
    for lib, opt in zip((T, C), optimizers("sgd")):
        saved = lib.MultiplicativeLR(opt, [every_other, Decay(0.5), Decay(0.25)]).state_dict()
        saved_by.append(saved["lr_lambdas"])
        again = lib.MultiplicativeLR(opt, [every_other, Decay(0.9), Decay(0.9)])
        again.load_state_dict(saved)
        assert [again.lr_lambdas[i].base for i in (1, 2)] == [0.5, 0.25]
    assert saved_by[0] == saved_by[1] == [None, {"base": 0.5}, {"base": 0.25}]


def test_multiplicative_lr_closed_form_is_the_product_of_the_factors():
    """lr_at(base, k) = base * f(1) * ... * f(k): the rates the steps set, per group."""
    _, opt = optimizers("sgd")
    sched = C.MultiplicativeLR(opt, [every_other, lambda k: 0.8, lambda k: 1.1 ** k])
    for k in range(1, 7):
        sched.step()
        np.testing.assert_allclose(sched.get_last_lr(), [sched.lr_at(lr, k, i) for i, lr
                                                         in enumerate(LRS)], rtol=RTOL)


# --- CosineAnnealingWarmRestarts.step(epoch) -----------------------------------------------

@pytest.mark.parametrize("T_0,T_mult", [(1, 1), (3, 1), (2, 2), (3, 3)])
def test_warm_restarts_with_a_fractional_epoch_as_in_torch(T_0, T_mult):
    """The documented use inside an epoch, ``step(epoch + i / iters)``, then plain
    ``step()`` calls from there: torch's rates, and its T_cur and T_i."""
    opt_t, opt_c = optimizers("sgd")
    kw = dict(T_0=T_0, T_mult=T_mult, eta_min=0.001)
    theirs, ours = T.CosineAnnealingWarmRestarts(opt_t, **kw), \
        C.CosineAnnealingWarmRestarts(opt_c, **kw)
    iters = 5
    for epoch in range(14):
        for i in range(iters):
            step_both(theirs, ours, opt_t, opt_c, epoch + i / iters)
            assert_same(theirs, ours, opt_t, opt_c, f"at {epoch} + {i}/{iters}")
            assert (ours.T_cur, ours.T_i, ours.last_epoch) == \
                pytest.approx((theirs.T_cur, theirs.T_i, theirs.last_epoch), rel=RTOL)
    for k in range(10):
        step_both(theirs, ours, opt_t, opt_c)
        assert_same(theirs, ours, opt_t, opt_c, f"{k} steps after the epochs")


def test_warm_restarts_jumps_back_and_forth_as_in_torch():
    """step(epoch) to any epoch, earlier or later, in any order."""
    opt_t, opt_c = optimizers("adam")
    theirs = T.CosineAnnealingWarmRestarts(opt_t, T_0=2, T_mult=2)
    ours = C.CosineAnnealingWarmRestarts(opt_c, T_0=2, T_mult=2)
    for epoch in RNG.uniform(0, 40, size=30).tolist() + [0, 2, 6, 14, 30, 1.0, 3]:
        step_both(theirs, ours, opt_t, opt_c, epoch)
        assert_same(theirs, ours, opt_t, opt_c, f"at epoch {epoch}")
        step_both(theirs, ours, opt_t, opt_c)
        assert_same(theirs, ours, opt_t, opt_c, f"a step after epoch {epoch}")


# --- ReduceLROnPlateau ---------------------------------------------------------------------

def plateau_metrics(n, mode):
    """A metric that improves, stalls (exactly, and within a small noise) and worsens by
    turns: n values from this test's generator, negated for mode='max'."""
    values, level = [], 1.0
    while len(values) < n:
        kind = RNG.integers(4)
        length = int(RNG.integers(1, 8))
        for _ in range(length):
            if kind == 0:
                level *= RNG.uniform(0.8, 0.99)          # improving
            elif kind == 1:
                level *= 1 + RNG.uniform(0, 0.05)        # worsening
            elif kind == 2:
                level *= 1 + RNG.uniform(-5e-5, 5e-5)    # within the threshold
            values.append(level)                         # (kind 3: exactly flat)
    return [v if mode == "min" else -v for v in values[:n]]


# factor 0.7: cuts that leave the rate above eps for the whole run
PLATEAU = list(grid(mode=["min", "max"], threshold_mode=["rel", "abs"],
                    patience=[0, 2], cooldown=[0, 2], factor=[0.7]))
PLATEAU += [dict(), dict(mode="max", threshold_mode="abs", patience=1)]
PLATEAU += [dict(factor=0.5, min_lr=0.02, patience=1),
            dict(factor=0.5, min_lr=[0.0, 0.04, 0.1], patience=1, mode="max"),
            dict(factor=0.9, eps=1e-3, min_lr=0.045, patience=0),
            dict(threshold=0.0, patience=3, threshold_mode="abs"),
            dict(threshold=0.01, patience=1, factor=0.0)]


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("kwargs", PLATEAU, ids=lambda kw: ",".join(
    f"{k}={short(v)}" for k, v in kw.items()))
def test_reduce_on_plateau_follows_a_random_metric_as_in_torch(kwargs, kind):
    """Fed the same metric sequence, the cuts come at the same steps to the same rates,
    with the same best, bad-epoch count and cooldown along the way; then a state_dict
    carries it on."""
    opt_t, opt_c = optimizers(kind)
    theirs, ours = T.ReduceLROnPlateau(opt_t, **kwargs), C.ReduceLROnPlateau(opt_c, **kwargs)
    metrics = plateau_metrics(80, kwargs.get("mode", "min"))
    for k, metric in enumerate(metrics[:60]):
        step_both(theirs, ours, opt_t, opt_c, metric)
        assert_same(theirs, ours, opt_t, opt_c, f"after metric {k}")
        assert_same_data(ours.state_dict(), theirs.state_dict(), f"state after {k}")
    _, opt_new = optimizers(kind)
    resumed = C.ReduceLROnPlateau(opt_new, **kwargs)
    opt_new.load_state_dict(opt_c.state_dict())
    resumed.load_state_dict(ours.state_dict())
    for k, metric in enumerate(metrics[60:], 60):
        step_both(theirs, resumed, opt_t, opt_new, metric)
        assert_same(theirs, resumed, opt_t, opt_new, f"resumed, after metric {k}")


def test_a_chain_inside_sequential_starts_as_the_chain_alone_not_as_torch():
    """Not torch's: with a ChainedScheduler first in a SequentialLR, torch's
    SequentialLR retakes the chain's step 0 with the chain's schedules not marked as
    starting, so ExponentialLR (PolynomialLR, CosineAnnealingLR likewise) applies its
    step-1 factor at step 0: the rates are gamma times lower until the milestone than
    the same chain's alone. Here the chain inside starts as the chain alone does."""
    opt_alone, opt_t = optimizers("sgd")[0], optimizers("sgd")[0]
    alone = T.ChainedScheduler([T.ConstantLR(opt_alone, factor=0.5, total_iters=2),
                                T.ExponentialLR(opt_alone, gamma=0.9)])
    opt_c = optimizers("sgd")[1]
    ours, theirs = nested_chain_first(C, opt_c), nested_chain_first(T, opt_t)
    for k in range(4):
        np.testing.assert_allclose(ours.get_last_lr(), alone.get_last_lr(), rtol=RTOL)
        np.testing.assert_allclose(theirs.get_last_lr(),
                                   [0.9 * lr for lr in alone.get_last_lr()], rtol=RTOL)
        for sched in (ours, theirs, alone):
            sched.step()
    # from the milestone on the second schedule sets the rates: the two agree again
    for k in range(5):
        np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=RTOL)
        ours.step()
        theirs.step()


def test_reduce_on_plateau_is_an_lr_scheduler_as_in_torch():
    """In torch 2.13 ReduceLROnPlateau is an LRScheduler subclass (it takes none of its
    steps); so is every schedule here, SequentialLR and ChainedScheduler included."""
    for name in NEW:
        assert issubclass(getattr(T, name), T.LRScheduler)
        assert issubclass(getattr(C, name), C.LRScheduler)


def test_reduce_on_plateau_takes_a_0d_array_or_tensor():
    """The metric may be a 0-d NumPy array or a 0-d tensor of either library."""
    opt_t, opt_c = optimizers("sgd")
    theirs, ours = T.ReduceLROnPlateau(opt_t, patience=0), C.ReduceLROnPlateau(opt_c,
                                                                            patience=0)
    for metric in (1.0, np.float64(2.0), np.array(3.0), cr.tensor(4.0)):
        step_both(theirs, ours, opt_t, opt_c, float(metric))
        ours_only = C.ReduceLROnPlateau(optimizers("sgd")[1], patience=0)
        ours_only.step(metric)
    assert_same(theirs, ours, opt_t, opt_c, "after four worsening metrics")


def test_reduce_on_plateau_with_a_group_added_later_as_in_torch():
    """A group added after construction: one min_lr covers it, a list of them is
    refused at the next cut (as torch refuses it)."""
    for min_lr, fails in ((0.0, False), ([0.0, 0.0, 0.0], True)):
        opt_t, opt_c = optimizers("sgd")
        theirs = T.ReduceLROnPlateau(opt_t, patience=0, min_lr=min_lr)
        ours = C.ReduceLROnPlateau(opt_c, patience=0, min_lr=min_lr)
        opt_t.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 1.0})
        opt_c.add_param_group({"params": [cr.Value(0.0)], "lr": 1.0})
        step_both(theirs, ours, opt_t, opt_c, 1.0)
        if fails:
            with pytest.raises(RuntimeError):
                theirs.step(2.0)
            with pytest.raises(RuntimeError, match=r"ReduceLROnPlateau: .*4 param groups"):
                ours.step(2.0)
        else:
            step_both(theirs, ours, opt_t, opt_c, 2.0)
            assert_same(theirs, ours, opt_t, opt_c, "after a cut")


# --- what is refused -----------------------------------------------------------------------

def plateau_in(lib, opt):
    return lib.ReduceLROnPlateau(opt)


def bad_sequences(lib, opt, other):
    """The ways torch's SequentialLR and ChainedScheduler refuse their schedules."""
    def exp(o):
        return lib.ExponentialLR(o, gamma=0.9)
    return {
        "SequentialLR empty": lambda: lib.SequentialLR(opt, [], milestones=[]),
        "SequentialLR milestones": lambda: lib.SequentialLR(opt, [exp(opt), exp(opt)],
                                                            milestones=[2, 4]),
        "SequentialLR plateau": lambda: lib.SequentialLR(opt, [exp(opt), plateau_in(lib, opt)],
                                                         milestones=[2]),
        "SequentialLR other optimizer": lambda: lib.SequentialLR(
            opt, [exp(opt), exp(other)], milestones=[2]),
        "SequentialLR not a schedule": lambda: lib.SequentialLR(opt, [exp(opt), 0.5],
                                                                milestones=[2]),
        "ChainedScheduler empty": lambda: lib.ChainedScheduler([]),
        "ChainedScheduler plateau": lambda: lib.ChainedScheduler([exp(opt),
                                                                  plateau_in(lib, opt)]),
        "ChainedScheduler other optimizer": lambda: lib.ChainedScheduler([exp(opt),
                                                                          exp(other)]),
    }


# (schedule, arguments, what our one-line message must name); torch refuses each too
REFUSED = [
    ("ConstantLR", dict(factor=1.5), ["factor", "1.5"]),
    ("ConstantLR", dict(factor=-0.1), ["factor", "-0.1"]),
    ("CosineAnnealingWarmRestarts", dict(T_0=0), ["T_0", "0"]),
    ("CosineAnnealingWarmRestarts", dict(T_0=2.5), ["T_0", "2.5"]),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=0), ["T_mult", "0"]),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=1.5), ["T_mult", "1.5"]),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, eta_min="0"), ["eta_min", "'0'"]),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, mode="cosine"), ["mode", "'cosine'"]),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.1), ["base_lr", "2", "3"]),
    ("CyclicLR", dict(base_lr=0.01, max_lr=[0.1] * 4), ["max_lr", "4", "3"]),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, base_momentum=[0.8]), ["base_momentum",
                                                                       "1", "3"]),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=0), ["step_size_up", "0"]),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=0), ["total_steps", "0"]),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=2.5), ["total_steps", "2.5"]),
    ("OneCycleLR", dict(max_lr=0.1, epochs=0, steps_per_epoch=3), ["epochs", "0"]),
    ("OneCycleLR", dict(max_lr=0.1, epochs=2, steps_per_epoch=-1),
     ["steps_per_epoch", "-1"]),
    ("OneCycleLR", dict(max_lr=0.1, epochs=2), ["total_steps", "steps_per_epoch", "None"]),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=5, pct_start=1.5), ["pct_start", "1.5"]),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=5, anneal_strategy="cosine"),
     ["anneal_strategy", "'cosine'"]),
    ("OneCycleLR", dict(max_lr=[0.1, 0.2], total_steps=5), ["max_lr", "2", "3"]),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=5, div_factor=0), ["div_factor", "0"]),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=5, max_momentum=[0.9] * 2),
     ["max_momentum", "2", "3"]),
    ("ReduceLROnPlateau", dict(factor=1.0), ["factor", "1.0"]),
    ("ReduceLROnPlateau", dict(factor=2), ["factor", "2"]),
    ("ReduceLROnPlateau", dict(mode="avg"), ["mode", "'avg'"]),
    ("ReduceLROnPlateau", dict(threshold_mode="relative"), ["threshold_mode", "'relative'"]),
    ("ReduceLROnPlateau", dict(min_lr=[0.0, 0.0]), ["min_lr", "2", "3"]),
    ("MultiplicativeLR", dict(lr_lambda=0.9), ["lr_lambda", "float"]),
    ("SWALR", dict(swa_lr=0.1, anneal_strategy="cosine"), ["anneal_strategy", "'cosine'"]),
    ("SWALR", dict(swa_lr=0.1, anneal_epochs=-1), ["anneal_epochs", "-1"]),
    ("SWALR", dict(swa_lr=0.1, anneal_epochs=2.5), ["anneal_epochs", "2.5"]),
    ("SWALR", dict(swa_lr=[0.1, 0.2]), ["swa_lr", "2", "3"]),
    ("MultiplicativeLR", dict(lr_lambda=[every_other] * 2), ["lr_lambda", "2", "3"]),
    ("MultiplicativeLR", dict(lr_lambda=[every_other, every_other, None]),
     ["lr_lambda", "NoneType"]),
]


def one_line_naming(error, *fragments):
    message = str(error.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("name,kwargs,named", REFUSED,
                         ids=[f"{n}-{'-'.join(f[:1])}-{i}" for i, (n, _, f) in
                              enumerate(REFUSED)])
def test_what_torch_refuses_is_refused_in_one_line(name, kwargs, named):
    """torch refuses these arguments (some by dividing by zero); chainrule refuses them
    too, in one line naming the schedule, the argument and the value (for a list, its
    length and the number of groups)."""
    opt_t, opt_c = optimizers("sgd")
    theirs, ours = ((torch.optim.swa_utils, cr.optim.swa_utils) if name == "SWALR"
                    else (T, C))
    with pytest.raises((ValueError, TypeError, ZeroDivisionError)):
        getattr(theirs, name)(opt_t, **kwargs)
    with pytest.raises((ValueError, TypeError)) as error:
        getattr(ours, name)(opt_c, **kwargs)
    one_line_naming(error, name + ":", *named)


@pytest.mark.parametrize("what", list(bad_sequences(C, None, None)))
def test_the_combinators_refuse_what_torch_refuses(what):
    """No schedule, one milestone too many, ReduceLROnPlateau inside, a schedule of
    another optimizer, something that is no schedule: refused by both, here in one line
    naming the combinator."""
    (opt_t, opt_c), (other_t, other_c) = optimizers("sgd"), optimizers("sgd")
    with pytest.raises((ValueError, TypeError)):
        bad_sequences(T, opt_t, other_t)[what]()
    with pytest.raises((ValueError, TypeError)) as error:
        bad_sequences(C, opt_c, other_c)[what]()
    one_line_naming(error, what.split()[0] + ":")


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_one_cycle_refuses_a_step_past_total_steps_as_torch(kind):
    """total_steps steps are taken; the next is refused, in one line naming the step
    and total_steps."""
    opt_t, opt_c = optimizers(kind)
    theirs, ours = T.OneCycleLR(opt_t, 0.5, total_steps=4), C.OneCycleLR(opt_c, 0.5,
                                                                         total_steps=4)
    for _ in range(4):
        step_both(theirs, ours, opt_t, opt_c)
    assert_same(theirs, ours, opt_t, opt_c, "after total_steps steps")
    with pytest.raises(ValueError, match="Tried to step 5 times"):
        theirs.step()
    with pytest.raises(ValueError) as error:
        ours.step()
    one_line_naming(error, "OneCycleLR:", "5", "total_steps is 4")


@pytest.mark.parametrize("name", ["CyclicLR", "OneCycleLR"])
def test_cycling_momentum_needs_momentum_or_betas_as_in_torch(name):
    """An optimizer with neither momentum nor betas (Adagrad) is refused when momentum
    is to cycle, in one line; with cycle_momentum=False it is taken."""
    kw = dict(base_lr=0.01, max_lr=0.1) if name == "CyclicLR" else dict(max_lr=0.1,
                                                                        total_steps=5)
    theirs = torch.optim.Adagrad([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    ours = cr.optim.Adagrad([cr.Value(0.0)], lr=0.1)
    with pytest.raises(ValueError, match="momentum"):
        getattr(T, name)(theirs, **kw)
    with pytest.raises(ValueError) as error:
        getattr(C, name)(ours, **kw)
    one_line_naming(error, f"{name}:", "cycle_momentum", "Adagrad")
    assert getattr(C, name)(ours, cycle_momentum=False, **kw).get_last_lr() == \
        getattr(T, name)(theirs, cycle_momentum=False, **kw).get_last_lr()


def test_warm_restarts_refuses_a_negative_epoch_as_torch():
    """step(epoch) with epoch < 0 is refused by both, here in one line."""
    opt_t, opt_c = optimizers("sgd")
    with pytest.raises(ValueError):
        T.CosineAnnealingWarmRestarts(opt_t, T_0=2).step(-1)
    with pytest.raises(ValueError) as error:
        C.CosineAnnealingWarmRestarts(opt_c, T_0=2).step(-1)
    one_line_naming(error, "CosineAnnealingWarmRestarts:", "epoch", "-1")


# Arguments torch takes and chainrule refuses: each is a schedule that does nothing
# sensible there (a division by zero at a later step, a rate that never comes back).
STRICTER = [
    ("ConstantLR", dict(total_iters=0), "total_iters"),
    ("PolynomialLR", dict(total_iters=0), "total_iters"),
    ("PolynomialLR", dict(power=-1.0), "power"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=-2), "step_size_up"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, scale_fn=halving, scale_mode="cycles"),
     "scale_mode"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=5, div_factor=-1.0), "div_factor"),
    ("ReduceLROnPlateau", dict(factor=-0.5), "factor"),
    ("ReduceLROnPlateau", dict(patience=-1), "patience"),
    ("ReduceLROnPlateau", dict(cooldown=1.5), "cooldown"),
]


@pytest.mark.parametrize("name,kwargs,argument", STRICTER,
                         ids=[f"{n}-{a}" for n, _, a in STRICTER])
def test_what_only_chainrule_refuses(name, kwargs, argument):
    """These torch takes without a word; chainrule refuses them in one line."""
    opt_t, opt_c = optimizers("sgd")
    getattr(T, name)(opt_t, **kwargs)
    with pytest.raises((ValueError, TypeError)) as error:
        getattr(C, name)(opt_c, **kwargs)
    one_line_naming(error, f"{name}:", argument)


# --- names and defaults --------------------------------------------------------------------

@pytest.mark.parametrize("name", NEW)
def test_arguments_and_defaults_are_torchs(name):
    """The same argument names, in the same order, with the same defaults, but for
    torch's last_epoch (a schedule here is resumed by load_state_dict instead)."""
    def arguments(cls):
        return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()
                if p.name != "last_epoch"]
    assert arguments(getattr(C, name)) == arguments(getattr(T, name))


def test_swalr_arguments_and_defaults_and_public_paths_are_torchs():
    """SWALR's arguments, in torch's order with torch's defaults (but last_epoch); it is
    cr.optim.swa_utils.SWALR, as torch.optim.swa_utils.SWALR, not a schedule of
    lr_scheduler."""
    import chainrule.optim.swa_utils as public
    def arguments(cls):
        return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()
                if p.name != "last_epoch"]
    assert arguments(cr.optim.swa_utils.SWALR) == arguments(torch.optim.swa_utils.SWALR)
    assert public.SWALR is cr.optim.swa_utils.SWALR and not hasattr(C, "SWALR")
    assert set(public.__all__) == set(torch.optim.swa_utils.__all__)


@pytest.mark.parametrize("name", C.__all__)
def test_every_schedule_is_at_the_three_public_paths(name):
    """cr.optim.X, cr.optim.lr_scheduler.X and chainrule.nn.optim.lr_scheduler.X are
    one class, and torch.optim.lr_scheduler has one of that name (but LinearWarmup,
    chainrule's own)."""
    assert getattr(cr.optim, name) is getattr(C, name) is getattr(nn_lr_scheduler, name)
    assert name == "LinearWarmup" or hasattr(T, name)


def test_the_schedules_torch_has_and_chainrule_has_not():
    """Every one of torch's schedules (but the private _LRScheduler) is here."""
    theirs = {n for n in dir(T) if re.fullmatch(r"[A-Z]\w*(LR|Scheduler|Plateau|Restarts)", n)}
    assert theirs - set(C.__all__) == set()
