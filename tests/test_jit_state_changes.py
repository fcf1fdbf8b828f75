"""cr.jit when the state a function reads is replaced between calls, not written in place.

A program reads the objects its trace found. When a parameter, a submodule, a buffer,
an optimizer's state or a closed-over model is replaced (``m.weight = new``,
``seq[0] = nn.Linear(...)``), added or removed, the next call must read the new one,
or trace again: never replay the old one. Each test runs the same changes on two twin
setups, one eager and one jitted, and compares every call's result.
"""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim


def _x(seed, shape=(4, 2)):
    return np.random.default_rng(seed).standard_normal(shape)


def _same(jitted, eager):
    np.testing.assert_allclose(np.asarray(getattr(jitted, "data", jitted)),
                               np.asarray(getattr(eager, "data", eager)),
                               rtol=1e-12, atol=1e-12)


def test_the_issues_case_a_replaced_weight_is_read():
    m, X = nn.Linear(2, 3, rng=0), np.ones((4, 2))
    f = cr.jit(lambda model, x: model(cr.tensor(x)))
    _same(f(m, X), m(cr.tensor(X)))
    m.weight = cr.tensor(np.zeros((3, 2)), requires_grad=True)  # (out, in)
    _same(f(m, X), m(cr.tensor(X)))
    np.testing.assert_array_equal(f(m, X).data, np.broadcast_to(m.bias.data, (4, 3)))


@pytest.mark.parametrize("passed", [True, False], ids=["argument", "closed over"])
def test_a_replaced_submodule_is_read(passed):
    seq = nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU(), nn.Linear(3, 1, rng=1))
    if passed:
        f = cr.jit(lambda model, x: model(cr.tensor(x)))
        call = lambda x: f(seq, x)  # noqa: E731
    else:
        g = cr.jit(lambda x: seq(cr.tensor(x)))
        call = g
    X = _x(0)
    _same(call(X), seq(cr.tensor(X)))
    seq[0] = nn.Linear(2, 3, rng=5)                      # Sequential's own __setitem__
    _same(call(X), seq(cr.tensor(X)))
    seq.layers[2] = nn.Linear(3, 1, rng=6)               # its list, written directly
    _same(call(X), seq(cr.tensor(X)))
    seq[0].weight = nn.Parameter(np.ones((3, 2)))        # a parameter two levels down
    _same(call(X), seq(cr.tensor(X)))
    del seq[1]                                           # a layer removed
    _same(call(X), seq(cr.tensor(X)))


class _Sum(nn.Module):
    """Its output reads every parameter it holds: one added or removed changes it."""

    def __init__(self):
        self.w = nn.Parameter(np.arange(6.0).reshape(2, 3))

    def forward(self, x):
        return sum(cr.sum(x @ p) if p.ndim == 2 else cr.sum(p) for p in self.parameters())


def test_a_parameter_added_or_removed_is_read():
    m, X = _Sum(), _x(1)
    f = cr.jit(lambda model, x: model(cr.tensor(x)))
    _same(f(m, X), m(cr.tensor(X)))
    m.extra = nn.Parameter(np.ones((2, 3)))
    _same(f(m, X), m(cr.tensor(X)))
    m.bias = nn.Parameter(np.full(3, 2.0))
    _same(f(m, X), m(cr.tensor(X)))
    del m.extra
    _same(f(m, X), m(cr.tensor(X)))
    m.w = nn.Parameter(np.ones((2, 3)))
    _same(f(m, X), m(cr.tensor(X)))


def test_a_setting_changed_is_read():
    class Scaled(nn.Module):
        def __init__(self):
            self.lin, self.scale = nn.Linear(2, 2, rng=0), 2.0

        def forward(self, x):
            return self.lin(x) * self.scale
    m, X = Scaled(), _x(2)
    f = cr.jit(lambda x: m(cr.tensor(x)))
    _same(f(X), m(cr.tensor(X)))
    m.scale = 3.0
    _same(f(X), m(cr.tensor(X)))


def test_a_replaced_buffer_is_read():
    bn = nn.BatchNorm1d(3).eval()
    f = cr.jit(lambda x: bn(cr.tensor(x)))
    X = _x(3, (5, 3))
    _same(f(X), bn(cr.tensor(X)))
    bn.running_mean = np.array([1.0, -2.0, 0.5])         # the same shape: read anew
    _same(f(X), bn(cr.tensor(X)))
    bn.running_var = np.array([4.0, 0.25, 1.0])
    _same(f(X), bn(cr.tensor(X)))
    bn.weight = nn.Parameter(np.array([2.0, 3.0, -1.0]))  # a parameter of a BatchNorm
    _same(f(X), bn(cr.tensor(X)))


def _training_setup(make_opt):
    model = nn.Sequential(nn.Linear(2, 4, rng=0), nn.Tanh(), nn.Linear(4, 1, rng=1))
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = cr.sum((model(cr.tensor(x)) - y) ** 2)
        loss.backward()
        opt.step()
        return loss
    return model, opt, step


@pytest.mark.parametrize("name", ["SGD momentum", "Adam"])
def test_an_optimizers_replaced_state_and_parameters_are_read(name):
    make = (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9)) if name == "SGD momentum" \
        else (lambda ps: optim.Adam(ps, lr=0.05))
    eager, jitted = _training_setup(make), _training_setup(make)
    step_eager, step_jit = eager[2], cr.jit(jitted[2])
    X, Y = _x(4), _x(5, (4, 1))
    changes = [
        lambda model, opt: None,
        lambda model, opt: opt.param_groups[0].__setitem__("lr", 0.01),
        lambda model, opt: [state.update({k: np.zeros_like(v) for k, v in state.items()
                                          if isinstance(v, np.ndarray)})
                            for state in opt.state.values()],
        lambda model, opt: opt.state.clear(),                  # the state forgotten
        lambda model, opt: setattr(model[0], "bias", nn.Parameter(np.ones(4))),
        lambda model, opt: opt.param_groups[0].__setitem__(    # the optimizer told
            "params", list(model.parameters())),
    ]
    for change in changes:
        for model, opt, _ in (eager, jitted):
            change(model, opt)
        for _ in range(2):
            _same(step_jit(X, Y), step_eager(X, Y))
            for p, q in zip(jitted[0].parameters(), eager[0].parameters()):
                _same(p, q)


def test_a_closed_over_model_rebound_is_read():
    model = nn.Linear(2, 3, rng=0)
    f = cr.jit(lambda x: model(cr.tensor(x)))
    X = _x(6)
    _same(f(X), model(cr.tensor(X)))
    model = nn.Linear(2, 3, rng=7)  # the variable f closes over, bound anew
    _same(f(X), model(cr.tensor(X)))


def test_a_dict_or_a_plain_object_of_tensors_replaced_or_grown_is_read():
    params = {"w": cr.tensor(np.ones((2, 3)), requires_grad=True)}

    class Holder:
        pass
    holder = Holder()
    holder.b = cr.tensor(np.ones(3))

    def eager(x):
        return sum(cr.sum(cr.tensor(x) @ p) for p in params.values()) + cr.sum(holder.b)
    f, X = cr.jit(eager), _x(7)
    _same(f(X), eager(X))
    params["w"] = cr.tensor(2 * np.ones((2, 3)), requires_grad=True)
    _same(f(X), eager(X))
    params["v"] = cr.tensor(-np.ones((2, 3)), requires_grad=True)  # grown: one more read
    _same(f(X), eager(X))
    holder.b = cr.tensor(np.full(3, 5.0))
    _same(f(X), eager(X))


def test_a_model_reached_through_a_helper_function_is_read():
    model = nn.Linear(2, 1, rng=0)

    def helper(x):
        return model(x)
    f, X = cr.jit(lambda x: helper(cr.tensor(x)) * 2.0), _x(8)
    _same(f(X), helper(cr.tensor(X)) * 2.0)
    model.weight = nn.Parameter(np.ones((1, 2)))
    _same(f(X), helper(cr.tensor(X)) * 2.0)


def test_an_unchanged_state_replays_without_tracing_again():
    model = nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU())
    f = cr.jit(lambda x: model(cr.tensor(x)))
    for seed in range(4):
        f(_x(seed))
    assert sum(len(entries) for entries in f._programs.values()) == 1


@pytest.mark.parametrize("pack", [lambda a, t: {"w": a, "t": t}, lambda a, t: [a, [t]],
                                  lambda a, t: (a, {"inner": (t,)})],
                         ids=["dict", "nested list", "tuple of a dict"])
def test_new_arrays_and_tensors_in_an_arguments_containers_replay_one_program(pack):
    """They are the program's inputs (the signature flattens tuples, lists and dicts),
    not state it reached: a new one each call (a parameter dict under
    cr.jit(cr.vmap(cr.grad(loss))), say) replays, with its own numbers."""
    def f(p):
        a, t = (p["w"], p["t"]) if isinstance(p, dict) else (
            (p[0], p[1][0]) if isinstance(p, list) else (p[0], p[1]["inner"][0]))
        return cr.sum(a * 2.0) + cr.sum(t * t)

    jitted = cr.jit(f)
    for seed in range(4):
        args = pack(_x(seed), cr.tensor(_x(seed + 10)))
        _same(jitted(args), f(args))
    assert sum(len(entries) for entries in jitted._programs.values()) == 1


def test_an_array_both_in_an_argument_and_in_a_dict_it_closes_over_is_state_too():
    """Read through the closed-over dict the array is a constant of the program, so a
    write into it must still trace again, though the argument passes it too."""
    shared = {"w": np.ones(3)}

    def f(p):
        return cr.sum(p["w"]) + cr.sum(shared["w"] * 3.0)
    jitted, a = cr.jit(f), shared["w"]
    _same(jitted({"w": a}), f({"w": a}))
    a[:] = 5.0
    _same(jitted({"w": a}), f({"w": a}))


def test_a_state_replaced_at_every_call_warns_once_and_keeps_few_programs():
    model = nn.Linear(2, 1, rng=0)
    f = cr.jit(lambda x: model(cr.tensor(x)))
    X = _x(9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(12):
            model.weight = nn.Parameter(np.full((1, 2), float(k)))
            _same(f(X), model(cr.tensor(X)))
    assert len([w for w in caught if "replaced" in str(w.message)]) == 1
    assert max(len(entries) for entries in f._programs.values()) <= 8


def test_sequential_setitem_and_delitem_as_pytorch():
    seq = nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU(), nn.Linear(3, 1, rng=1))
    new = nn.Linear(2, 3, rng=2)
    seq[0] = new
    assert seq[0] is new and [p is q for p, q in zip(seq.parameters(),
                                                     new.parameters())] == [True, True]
    del seq[1]
    assert [type(m).__name__ for m in seq.children()] == ["Linear", "Linear"]
    with pytest.raises(TypeError, match=r"Sequential\[0\] = \.\.\.: expected a Module"):
        seq[0] = "relu"


# NumPy arrays the function closes over or names as globals: the trace may compute from
# them (the derivative of x * a is a times the seed), so a write into one, or a name
# bound to another, traces again; the program never mixes old and new numbers.
MASK = np.array([True, False, True])


def _closures():
    i, a = np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0])
    functions = {
        "an index": lambda x: cr.sum(cr.sin(x[i]) * a),
        "indexed writes": lambda x: cr.sum(cr.sin(cr.tensor(np.zeros(3)).at[i].set(a * x))),
        "a global mask": lambda x: cr.sum(cr.where(MASK, x * x, x)),
        "a weight": lambda x: cr.sum(cr.sin(x * a)),
    }
    return i, a, functions


@pytest.mark.parametrize("name", list(_closures()[2]))
@pytest.mark.parametrize("transform", ["grad", "value", "backward inside"])
def test_a_closed_over_array_written_between_calls_is_read(name, transform):
    i, a, functions = _closures()
    f = functions[name]
    if transform == "grad":
        f = cr.grad(f)
    elif transform == "backward inside":
        inner = f

        def f(x):
            t = cr.tensor(x, requires_grad=True)
            inner(t).backward()
            return t.grad

    jitted, x = cr.jit(f), np.array([0.1, 0.2, 0.3])
    before = MASK.copy()
    try:
        for write in (lambda: None, lambda: i.__setitem__(Ellipsis, [1, 2, 2]),
                      lambda: a.__imul__(-2.0), lambda: MASK.__setitem__(1, True),
                      lambda: None):
            write()
            _same(jitted(x), f(x))
    finally:
        MASK[...] = before


def test_a_closed_over_array_bound_anew_is_read():
    a = np.array([1.0, 2.0])
    f = cr.jit(cr.grad(lambda x: cr.sum(x * a)))
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 2.0])
    a = np.array([5.0, 7.0])  # noqa: F841 (read by the closure)
    np.testing.assert_array_equal(f(np.zeros(2)), [5.0, 7.0])


@pytest.mark.parametrize("size", [8, 20_000], ids=["compared as bytes", "compared as an array"])
def test_one_entry_written_in_a_closed_over_array_is_read(size):
    a = np.ones(size)
    view = np.ones((size, 2))[:, 0]  # not contiguous
    f = cr.jit(cr.grad(lambda x: cr.sum(x * a * view)))
    x = np.zeros(size)
    np.testing.assert_array_equal(f(x), np.ones(size))
    a[size // 2] = 3.0
    view[-1] = np.nan
    expected = np.ones(size)
    expected[size // 2], expected[-1] = 3.0, np.nan
    np.testing.assert_array_equal(f(x), expected)
    np.testing.assert_array_equal(f(x), expected)  # (a NaN where a NaN was: no write)


def test_a_trace_in_one_thread_adopts_only_its_own_tensors():
    """While one thread traces, another's eager graph records as usual, and the trace
    adopts only the tensors its own function reads (each thread has its recorder)."""
    import threading
    w = cr.tensor(np.array([1.0, 2.0]), requires_grad=True)
    tracing, eager_done = threading.Event(), threading.Event()

    def weighted(x):
        tracing.set()
        assert eager_done.wait(10)
        return cr.sum(cr.tensor(x) * w)
    f, out = cr.jit(weighted), {}
    worker = threading.Thread(target=lambda: out.update(first=f(np.array([3.0, 4.0]))))
    worker.start()
    assert tracing.wait(10)
    v = cr.tensor(np.array([0.5, 1.5]), requires_grad=True)
    cr.sum(v * v * w).backward()
    eager_done.set()
    worker.join(10)
    np.testing.assert_allclose(v.grad, 2 * np.array([0.5, 1.5]) * [1.0, 2.0])
    assert float(out["first"].data) == 11.0
    w.data = np.array([10.0, 20.0])       # the trace's input: read anew
    v.data = np.array([7.0, 7.0])         # not the trace's: changes nothing in f
    assert float(f(np.array([3.0, 4.0])).data) == 110.0
