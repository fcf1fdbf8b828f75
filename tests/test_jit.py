"""cr.jit: a function traced once into a program of NumPy calls, then replayed.

What must hold, and is checked here:

* a replay gives the eager numbers to the last bit (the same NumPy calls in the same
  order): on every case of the rule table (``test_derivatives.CASES``) in reverse mode,
  at second order and in forward mode, and over 100 training steps of an MLP with each
  optimizer;
* a new signature (shapes, dtypes, static values) or new state (a momentum buffer that
  now exists, a model switched to eval mode) traces again;
* what a program cannot replay raises while tracing, naming the line: an ``if`` on
  data, ``float()``, ``np.asarray``, a traced value kept after the trace;
* it composes with the transforms, nn modules and optimizers, whether they come as
  arguments or through a closure;
* a user's own class carries state through the same protocol (``_jit_state_``,
  ``_jit_load_``) as modules and optimizers, and a malformed answer raises one line;
* ``make_program`` prints the program as a numbered listing, each part named for what
  it does (forward, backward, update, no_grad) and each input as the function names it;
* a Value (the scalar engine) met while tracing raises one line that says to use Tensors;
* elementwise calls on large arrays run block of rows by block of rows with the same
  numbers, and only where no array they write is read elsewhere through a view.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.jit import blocks, errors, recording
from chainrule.nn.functional import cross_entropy

import test_derivatives as table


def same(expected, got):
    """Equal to the last bit (NaN where NaN), with the same dtypes, leaf by leaf."""
    expected, got = cr.tree_flatten(expected)[0], cr.tree_flatten(got)[0]
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        e, g = np.asarray(e), np.asarray(g)
        assert e.dtype == g.dtype, (e.dtype, g.dtype)
        assert np.array_equal(e, g, equal_nan=True), (e, g)


def eager_then_jitted(f, *args, others=()):
    """f's results eagerly, and jitted: traced at args, then replayed at each of others
    (arguments of the same shapes), every one compared with the eager result."""
    jitted = cr.jit(f)
    for call in [args, *others]:
        same(f(*call), jitted(*call))
    return jitted


# Every case of the table, quantile with q traced too (the entries it interpolates are
# picked by an index array computed from q, which the program holds)
CASES = [pytest.param(case, id=case.id) for case in table.CASES]


@pytest.fixture
def small_blocks(monkeypatch):
    """Runs of elementwise calls by blocks of a few rows from the smallest arrays up
    (a ragged last block included), so that every program with such a run has it."""
    monkeypatch.setattr(blocks, "_BLOCKED_FROM", 0)
    monkeypatch.setattr(blocks, "_BLOCK_BYTES", 300)
    monkeypatch.setattr(blocks, "_SHORTEST_RUN", 2)


# ---------------------------------------------------------------------------------------
# Every operation of the rule table, in each mode
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_every_operation_replays_its_value_and_gradient(case):
    """The outputs and the gradient of sum(w * y) (backward()), traced at x and
    replayed at 1.01 x, bit for bit as eager."""
    arrays = case.arrays()
    ws = table.cotangents(case, table.cr_forward(case, arrays), np.float64)

    def value_and_gradient(arrays, ws):
        return table.cr_vjp(case, arrays, ws)

    eager_then_jitted(value_and_gradient, arrays, ws,
                      others=[([a * 1.01 for a in arrays], ws)])


@pytest.mark.parametrize("case", CASES)
def test_every_operation_replays_by_blocks_of_rows(case, small_blocks):
    """The same with every run of two or more elementwise calls on arrays of two or
    more rows split into blocks of a few rows."""
    test_every_operation_replays_its_value_and_gradient(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_every_operation_replays_its_second_derivative(case):
    """A Hessian-vector product through backward(create_graph=True), in a program."""
    arrays = case.arrays()
    ws = table.cotangents(case, table.cr_forward(case, arrays), np.float64)
    vs = [np.random.default_rng(1).standard_normal(a.shape) for a in arrays]

    def hessian_vector_product(arrays, vs):
        xs = [cr.tensor(a, requires_grad=True) for a in arrays]
        table.second_order_loss(table.as_list(case.fn(*xs)), ws).backward(create_graph=True)
        grads = [x.grad for x in xs]
        for x in xs:
            x.zero_grad()
        sum((g * v).sum() for g, v in zip(grads, vs)).backward()
        return [x.grad for x in xs]

    eager_then_jitted(hessian_vector_product, arrays, vs,
                      others=[([a * 1.01 for a in arrays], vs)])


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_every_operation_replays_its_forward_mode(case):
    arrays = case.arrays()
    tangents = [np.random.default_rng(2).standard_normal(a.shape) for a in arrays]

    def tangent(arrays, tangents):
        def fn(*xs):  # (xs: the transform's tracers, which take every operation)
            return tuple(table.as_list(case.fn(*xs)))
        return cr.jvp(fn, tuple(arrays), tuple(tangents))

    eager_then_jitted(tangent, arrays, tangents,
                      others=[([a * 1.01 for a in arrays], tangents)])


# ---------------------------------------------------------------------------------------
# Training: the program updates a model as the eager step does
# ---------------------------------------------------------------------------------------

def _problem(dtype, batch=32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 20)).astype(dtype)
    y = rng.integers(0, 5, batch)
    return x, y


def _model(dtype, dropout=0.0):
    layers = [nn.Linear(20, 16, rng=1, dtype=dtype), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(dropout, rng=3))
    return nn.Sequential(*layers, nn.Linear(16, 5, rng=2, dtype=dtype))


OPTIMIZERS = {
    "sgd": lambda p: optim.SGD(p, lr=0.1),
    "sgd-momentum-nesterov-decay": lambda p: optim.SGD(p, lr=0.1, momentum=0.9,
                                                       nesterov=True, weight_decay=1e-3),
    "adam": lambda p: optim.Adam(p, lr=1e-2),
    "adamw": lambda p: optim.AdamW(p, lr=1e-2, weight_decay=0.1),
}


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = cross_entropy(model(cr.tensor(x)), y)
    loss.backward()
    opt.step()
    return loss


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_hundred_training_steps_are_bit_exact_in_float64(name):
    x, y = _problem(np.float64)
    eager_model, jit_model = _model(np.float64, dropout=0.2), _model(np.float64, dropout=0.2)
    eager_opt, jit_opt = OPTIMIZERS[name](eager_model.parameters()), \
        OPTIMIZERS[name](jit_model.parameters())
    step = cr.jit(train_step)
    for _ in range(100):
        same(train_step(eager_model, eager_opt, x, y), step(jit_model, jit_opt, x, y))
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        same(p.data, q.data)
        same(p.grad, q.grad)
    # a trace without the optimizer's state, one with it; the rest were replays
    assert sum(len(entries) for entries in step._programs.values()) <= 3


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_training_by_blocks_of_rows_is_bit_exact(name, small_blocks):
    """Each optimizer's update, by blocks of one row (of the 16 x 20 weight): the eager
    numbers to the last bit, and the listing says which lines run so."""
    test_a_hundred_training_steps_are_bit_exact_in_float64(name)
    model = _model(np.float64)
    text = str(cr.make_program(train_step)(model, OPTIMIZERS[name](model.parameters()),
                                           *_problem(np.float64)))
    assert "of shape (16, 20): run by blocks of 1 rows)" in text


def test_a_large_update_runs_by_blocks_of_rows():
    """At the real threshold: Adam on a 256 x 512 float64 weight (1 MB) runs its update
    by blocks of rows, with the eager numbers, into the parameter's own array."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 512)), np.arange(8) % 4

    def model_and_opt():
        model = nn.Sequential(nn.Linear(512, 256, rng=1), nn.ReLU(), nn.Linear(256, 4, rng=2))
        return model, optim.Adam(model.parameters(), lr=1e-3)

    (eager_model, eager_opt), (jit_model, jit_opt) = model_and_opt(), model_and_opt()
    step = cr.jit(train_step)
    for i in range(5):
        if i == 2:  # traced without Adam's state, then with it: replays from here
            weight = jit_model.layers[0].weight.data
        same(train_step(eager_model, eager_opt, x, y), step(jit_model, jit_opt, x, y))
    same(eager_model.layers[0].weight.data, jit_model.layers[0].weight.data)
    assert jit_model.layers[0].weight.data is weight
    text = str(step.program(jit_model, jit_opt, x, y))
    assert "of shape (256, 512): run by blocks of 32 rows)" in text
    assert "for s, u1" in step.program(jit_model, jit_opt, x, y).source()


def test_blocks_of_rows_never_write_what_a_view_reads(small_blocks):
    """w -= 0.5 * w.T reads each entry of w at another place than it writes: run by
    blocks, the first blocks would change what later ones read. Not split, it gives
    NumPy's numbers (which buffer the overlap)."""
    start = np.arange(16.0).reshape(4, 4)
    w = cr.tensor(start.copy())

    def in_place():
        w.data -= 0.5 * w.data.T
        return w.data * 1.0

    def a_new_value():  # computed into w's own array all the same
        w.data = w.data - 0.5 * w.data.T
        return w.data * 1.0

    for mix in (in_place, a_new_value):
        w.data = start.copy()
        jitted = cr.jit(mix)
        for _ in range(3):
            expected = w.data - 0.5 * w.data.T
            same(jitted(), expected)
        assert "run by blocks" not in str(jitted.program())


def test_a_result_of_a_run_that_is_returned_is_a_whole_new_array(small_blocks):
    jitted = cr.jit(lambda x: (x * 2.0 + 1.0, cr.sum(x * 3.0 - 1.0)))
    x = np.arange(12.0).reshape(6, 2)
    first = jitted(x)
    second = jitted(x + 1.0)
    same(first, (x * 2.0 + 1.0, np.sum(x * 3.0 - 1.0)))
    same(second, ((x + 1.0) * 2.0 + 1.0, np.sum((x + 1.0) * 3.0 - 1.0)))
    assert not np.shares_memory(first[0], second[0])


@pytest.mark.parametrize("name", ["sgd-momentum-nesterov-decay", "adam"])
def test_float32_training_stays_float32_and_within_1e_6(name):
    x, y = _problem(np.float32)
    eager_model, jit_model = _model(np.float32), _model(np.float32)
    eager_opt = OPTIMIZERS[name](eager_model.parameters())
    jit_opt = OPTIMIZERS[name](jit_model.parameters())
    step = cr.jit(train_step)
    for _ in range(20):
        a, b = train_step(eager_model, eager_opt, x, y), step(jit_model, jit_opt, x, y)
        assert b.dtype == np.float32
        np.testing.assert_allclose(b.item(), a.item(), rtol=1e-6)
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        assert q.dtype == np.float32
        np.testing.assert_allclose(q.data, p.data, rtol=1e-6, atol=1e-7)


def test_a_step_that_closes_over_the_model_and_optimizer():
    """State found through a closure is read and written like state passed in."""
    x, y = _problem(np.float64)
    eager_model, jit_model = _model(np.float64), _model(np.float64)
    eager_opt = optim.SGD(eager_model.parameters(), lr=0.1, momentum=0.9)
    jit_opt = optim.SGD(jit_model.parameters(), lr=0.1, momentum=0.9)

    @cr.jit
    def step(x, y):
        return train_step(jit_model, jit_opt, x, y)

    for _ in range(10):
        same(train_step(eager_model, eager_opt, x, y), step(x, y))
    same([p.data for p in eager_model.parameters()], [p.data for p in jit_model.parameters()])


def test_a_raw_tensor_step_with_an_update_by_hand():
    """The form of the benchmark: tensors for parameters, p.data -= lr * p.grad."""
    x, y = _problem(np.float64)
    rng = np.random.default_rng(5)
    start = [rng.standard_normal((16, 20)), np.zeros(16), rng.standard_normal((5, 16)),
             np.zeros(5)]   # the weights (out, in), as nn.Linear's

    def step(x, params, lr):
        h = nn.functional.linear(cr.tensor(x), params[0], params[1], "relu")
        loss = cross_entropy(nn.functional.linear(h, params[2], params[3]), y)
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
        return loss

    eager = [cr.tensor(a.copy(), requires_grad=True) for a in start]
    jitted = [cr.tensor(a.copy(), requires_grad=True) for a in start]
    jstep = cr.jit(step)
    for _ in range(5):
        same(step(x, eager, 0.1), jstep(x, jitted, 0.1))
    same([p.data for p in eager], [p.data for p in jitted])


def test_a_learning_rate_schedule_takes_effect_without_tracing_again():
    x, y = _problem(np.float64)
    eager_model, jit_model = _model(np.float64), _model(np.float64)
    eager_opt = optim.SGD(eager_model.parameters(), lr=0.5)
    jit_opt = optim.SGD(jit_model.parameters(), lr=0.5)
    schedules = [optim.StepLR(eager_opt, step_size=1, gamma=0.5),
                 optim.StepLR(jit_opt, step_size=1, gamma=0.5)]
    step = cr.jit(train_step)
    traced = []
    for _ in range(5):
        same(train_step(eager_model, eager_opt, x, y), step(jit_model, jit_opt, x, y))
        for schedule in schedules:
            schedule.step()
        traced.append(sum(len(entries) for entries in step._programs.values()))
    # traced without gradients, then with them; the learning rate is an input
    assert traced == [1, 2, 2, 2, 2]


def test_eval_mode_traces_again_and_dropout_draws_anew_at_each_run():
    model = nn.Sequential(nn.Linear(3, 4, rng=0), nn.Dropout(0.5, rng=1))
    forward = cr.jit(lambda x: model(cr.tensor(x)))
    x = np.ones((8, 3))
    first, second = forward(x).data, forward(x).data
    assert not np.array_equal(first, second)  # new masks, from the same generator
    model.eval()
    same(model(cr.tensor(x)).data, forward(x).data)
    model.train()
    reference = nn.Sequential(nn.Linear(3, 4, rng=0), nn.Dropout(0.5, rng=1))
    same([reference(cr.tensor(x)).data for _ in range(2)], [first, second])


def test_a_module_whose_forward_is_called_directly_is_checked_for_its_mode_too():
    """The mode is state wherever it is read: a parent that calls a child's .forward
    (not the child itself), and only the child switched to eval, traces again."""
    class Parent(nn.Module):
        def __init__(self):
            self.linear, self.drop = nn.Linear(3, 4, rng=0), nn.Dropout(0.5, rng=1)

        def forward(self, x):
            return self.drop.forward(self.linear(x))

    model = Parent()
    forward = cr.jit(lambda x: model(cr.tensor(x)))
    x = np.ones((8, 3))
    forward(x)
    model.drop.eval()
    same(model(cr.tensor(x)).data, forward(x).data)
    assert np.all(forward(x).data == model.linear(cr.tensor(x)).data)  # nothing dropped


def test_a_replaced_parameter_array_is_read_at_the_next_call():
    """Parameters are inputs, read at each call: load_state_dict, or p.data = ..., is
    seen (nothing of the traced arrays is kept)."""
    model = _model(np.float64)
    forward = cr.jit(lambda x: model(cr.tensor(x)))
    x, _ = _problem(np.float64)
    forward(x)
    other = _model(np.float64)
    for p in other.parameters():
        p.data = p.data * 2.0
    model.load_state_dict(other.state_dict())
    same(model(cr.tensor(x)).data, forward(x).data)


# ---------------------------------------------------------------------------------------
# Signatures: when a program is reused, and when a function is traced again
# ---------------------------------------------------------------------------------------

def test_a_new_shape_or_dtype_traces_again_and_the_old_program_stays():
    calls = []

    def f(x):
        calls.append(x.shape)  # a Python side effect: it happens while tracing only
        return cr.tanh(x) * 2.0

    jitted = cr.jit(f)
    for x in [np.ones(3), np.zeros(3), np.ones((2, 2)), np.ones(3, np.float32), np.ones(3)]:
        same(np.tanh(x) * 2.0 if x.dtype == np.float64 else np.tanh(x) * np.float32(2.0),
             jitted(x))
    assert calls == [(3,), (2, 2), (3,)]  # traced for (3,) f64, (2, 2), (3,) f32


def test_static_arguments_are_part_of_the_signature():
    jitted = cr.jit(lambda x, n: x ** n, static_argnums=1)
    same(jitted(np.arange(3.0), 2), np.arange(3.0) ** 2)
    same(jitted(np.arange(3.0), 3), np.arange(3.0) ** 3)
    by_name = cr.jit(lambda x, *, axis: cr.sum(x, axis=axis), static_argnames="axis")
    same(by_name(np.ones((2, 3)), axis=1), np.full(2, 3.0))


def test_numbers_are_inputs_not_constants():
    jitted = cr.jit(lambda x, scale: x * scale)
    same(jitted(np.ones(2), 2.0), np.full(2, 2.0))
    same(jitted(np.ones(2), 3.0), np.full(2, 3.0))
    assert sum(len(entries) for entries in jitted._programs.values()) == 1


def test_state_the_function_sets_in_python_is_set_at_every_call():
    """A gradient set to None or to an array by the function (not by a NumPy call) is
    state like any other: what it was at the call is part of the program's signature,
    what the function leaves is written back."""
    w = cr.tensor(np.ones(3), requires_grad=True)

    def step():
        w.grad = np.zeros(3) if w.grad is None else None
        return (w * 2.0).sum()

    jitted = cr.jit(step)
    seen = []
    for _ in range(6):
        jitted()
        seen.append(None if w.grad is None else w.grad.tolist())
    assert seen == [[0.0, 0.0, 0.0], None] * 3
    assert sum(len(entries) for entries in jitted._programs.values()) == 2


def test_state_of_a_new_shape_at_each_call_traces_again_and_warns():
    w = cr.tensor(np.ones(1))
    jitted = cr.jit(lambda: cr.sum(w * 2.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 12):
            w.data = np.ones(n)
            assert jitted() == 2.0 * n
    assert any("traced 8 times" in str(w.message) for w in caught)


# ---------------------------------------------------------------------------------------
# The state protocol: a user's own class carried as state
# ---------------------------------------------------------------------------------------

class RunningMean:
    """Neither a Module nor an Optimizer: a running sum and count (inputs of the
    program), and whether it still accumulates (its mode), said through the protocol."""

    def __init__(self, n):
        self.total, self.count, self.frozen = np.zeros(n), 0.0, False

    def _jit_state_(self):
        return {"total": self.total, "count": self.count}, self.frozen

    def _jit_load_(self, arrays):
        for name, value in arrays.items():
            setattr(self, name, value)


def running_mean(stats, x, traces):
    traces.append(stats.frozen)  # (Python: runs while tracing only)
    if not stats.frozen:
        stats.total = stats.total + x
        stats.count = stats.count + 1.0
    return stats.total / stats.count


def test_a_user_class_with_the_state_protocol_is_read_and_written_at_every_call():
    eager, carried = RunningMean(3), RunningMean(3)
    traces = []
    jitted = cr.jit(running_mean, static_argnums=2)
    rng = np.random.default_rng(0)
    for i in range(6):
        x = rng.standard_normal(3)
        if i == 3:  # a new value put in from outside is read by the next run
            eager.total, carried.total = np.full(3, 10.0), np.full(3, 10.0)
        same(running_mean(eager, x, []), jitted(carried, x, traces))
        same((eager.total, eager.count), (carried.total, carried.count))
    assert type(carried.count) is float and traces == [False]
    eager.frozen = carried.frozen = True  # another mode: traced again, then replayed
    for _ in range(2):
        same(running_mean(eager, x, []), jitted(carried, x, traces))
    assert traces == [False, True]
    assert "inputs: x (3,) float64, total (3,) float64, count float" in \
        str(cr.make_program(running_mean, static_argnums=2)(RunningMean(3), x, []))


class Malformed:
    def __init__(self, answer):
        self.answer = answer

    def _jit_state_(self):
        return self.answer

    def _jit_load_(self, arrays):
        pass


@pytest.mark.parametrize("answer, message", [
    ([{}, True], r"Malformed\._jit_state_\(\) must return \(arrays, mode\)"),
    (({(1.5,): np.ones(2)}, None), r"keys .* must be strings, ints or tuples of them"),
    (({}, np.ones(2)), r"the mode .* must compare with =="),
])
def test_a_malformed_protocol_answer_raises_one_clear_line(answer, message):
    with pytest.raises(TypeError, match=message) as caught:
        cr.jit(lambda obj, x: x * 2.0)(Malformed(answer), np.ones(2))
    assert "\n" not in str(caught.value)


def test_a_protocol_without_a_way_to_put_values_back_raises():
    class ReadOnly:
        def _jit_state_(self):
            return {"w": np.ones(2)}, None

    with pytest.raises(TypeError, match=r"ReadOnly defines _jit_state_\(\) but no "
                                        r"_jit_load_\(arrays\)"):
        cr.jit(lambda obj, x: x * 2.0)(ReadOnly(), np.ones(2))


def test_one_module_turns_program_data_into_python_and_runs_it():
    """The passes decide, the code generators write: codegen.py the NumPy replay,
    native.py the function Numba compiles; no other file of cr.jit execs."""
    folder = Path(blocks.__file__).parent
    execs = sorted(p.name for p in folder.glob("*.py") if "exec(" in p.read_text())
    assert execs == ["codegen.py", "native.py"]


# ---------------------------------------------------------------------------------------
# What cannot be replayed raises while tracing
# ---------------------------------------------------------------------------------------

def test_branching_on_data_raises_naming_the_line_and_the_way_out():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(errors.TracingError, match=r"test_jit\.py:\d+.*cr\.where"):
        cr.jit(f)(np.ones(3))
    # the way out: a static argument, or where()
    same(cr.jit(lambda x: cr.where(cr.sum(x) > 0, x, -x))(np.ones(3)), np.ones(3))


@pytest.mark.parametrize("leave", [float, int, bool, lambda x: x.item(),
                                   lambda x: x.tolist(), np.asarray])
def test_a_traced_value_cannot_become_a_python_number_or_a_plain_array(leave):
    with pytest.raises(errors.TracingError, match="traced value"):
        cr.jit(lambda x: leave(cr.sum(x)))(np.ones(3))


def test_a_traced_value_kept_after_the_trace_raises_when_used():
    kept = []
    cr.jit(lambda x: kept.append(x) or x * 2.0)(np.ones(2))
    with pytest.raises(errors.TracingError, match="after its trace ended"):
        kept[0] + 1.0


def test_a_write_into_an_array_from_outside_the_trace_raises():
    table_ = np.zeros(3)

    def f(x):
        np.add(table_, x, out=table_)
        return x

    with pytest.raises(errors.TracingError, match="written into a NumPy array"):
        cr.jit(f)(np.ones(3))


def test_a_check_of_data_runs_at_every_call():
    step = cr.jit(lambda logits, y: cross_entropy(cr.tensor(logits), y))
    logits = np.zeros((2, 3))
    step(logits, np.array([0, 2]))
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        step(logits, np.array([0, 7]))


def test_a_formula_chosen_by_data_is_checked_at_every_call():
    grad_det = cr.jit(cr.grad(lambda a: cr.det(a)))
    same(grad_det(np.eye(2) * 2.0), cr.grad(lambda a: cr.det(a))(np.eye(2) * 2.0))
    with pytest.raises(errors.TracingError, match="invertible"):
        grad_det(np.zeros((2, 2)))


# ---------------------------------------------------------------------------------------
# With the transforms
# ---------------------------------------------------------------------------------------

def f_scalar(x):
    return cr.sum(cr.tanh(x) ** 2 * cr.sin(x))


@pytest.mark.parametrize("transform", [cr.grad, cr.hessian, cr.jacrev, cr.jacfwd,
                                       cr.value_and_grad,
                                       lambda f: cr.jacfwd(cr.grad(f)),
                                       lambda f: cr.grad(lambda x: cr.sum(cr.grad(f)(x) * x))])
def test_jit_of_a_transform(transform):
    x = np.linspace(-1.0, 1.0, 4)
    eager_then_jitted(transform(f_scalar), x, others=[(x * 0.5,)])


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_jit_of_the_jacobian_of_a_matrix_valued_function_has_its_shape(transform):
    # out.shape + in.shape = (3, 3, 4), as eagerly (not the (9, 4) of the passes)
    a = np.arange(9.0).reshape(3, 3) / 7.0
    jacobian = transform(lambda x: cr.tanh(a * x[1:]))
    x = np.linspace(-1.0, 1.0, 4)
    assert cr.jit(jacobian)(x).shape == (3, 3, 4)
    eager_then_jitted(jacobian, x, others=[(x * 0.5,)])


def test_transforms_inside_a_jitted_function_with_closures():
    def f(x):
        inner = cr.grad(lambda y: cr.sum(cr.exp(y * x)))(x)
        _, tangent = cr.jvp(lambda y: cr.sin(y) * x, (x,), (np.ones_like(x),))
        return inner + tangent

    eager_then_jitted(f, np.linspace(0, 1, 3), others=[(np.linspace(1, 2, 3),)])


def test_a_float_argument_gives_a_float():
    df = cr.jit(cr.grad(lambda s: s ** 3))
    assert df(2.0) == 12.0 and df(3.0) == 27.0
    assert isinstance(df(3.0), float)


def test_a_grad_of_a_jitted_function_and_jit_inside_jit():
    inner = cr.jit(lambda x: cr.sum(cr.sin(x) ** 2))
    same(cr.grad(inner)(np.arange(3.0)), cr.grad(lambda x: cr.sum(cr.sin(x) ** 2))(
        np.arange(3.0)))
    outer = cr.jit(lambda x: inner(x) * 2.0)  # the inner one is part of the outer program
    same(outer(np.arange(3.0)), 2.0 * np.sum(np.sin(np.arange(3.0)) ** 2))


# ---------------------------------------------------------------------------------------
# The program, for readers
# ---------------------------------------------------------------------------------------

def test_the_program_of_a_training_step_reads_as_numbered_numpy_calls():
    model = nn.Sequential(nn.Linear(4, 3, rng=0), nn.ReLU(), nn.Linear(3, 2, rng=1))
    opt = optim.SGD(model.parameters(), lr=0.1)
    program = cr.make_program(train_step)(model, opt, np.ones((5, 4)), np.array([0, 1, 0, 1, 0]))
    text = str(program)
    lines = text.splitlines()
    assert lines[0].startswith("inputs: x (5, 4) float64, y (5,) int64, "
                               "model.layers.0.weight (3, 4) float64")
    assert [line for line in lines if line.startswith("#")] == \
        ["# forward", "# backward", "# update (SGD)"]
    assert "np.matmul(t" in text and "# (5, 3) float64" in text
    numbers = [int(line.split()[0]) for line in lines if line[:1] == " " or
               line[:1].isdigit()]
    assert numbers == list(range(1, len(program) + 1))
    assert lines[-1].startswith("outputs: ")
    assert "def program(" in program.source()


def _parts(program):
    return [line[2:] for line in str(program).splitlines() if line.startswith("# ")]


def _inputs(program):
    """The names on the listing's first line: ``inputs: x (4, 2) float64, lr0 float``."""
    return re.findall(r"(\S+) (?:\([^)]*\) )?\w+(?:, |$)",
                      str(program).splitlines()[0].removeprefix("inputs: "))


def test_each_part_of_the_program_is_named_for_what_it_does():
    """A backward pass (Tensor.backward, cr.grad's), an update of the parameters
    (an optimizer's, or by hand, under no_grad or through .data), a no_grad block that
    updates nothing, and a trace begun under no_grad."""
    w = cr.tensor([1.0, -2.0], requires_grad=True)
    x = np.array([1.0, 2.0])

    def update_under_no_grad(w, x):
        loss = ((w * x) ** 2).sum()
        loss.backward()
        with cr.no_grad():
            w -= 0.1 * w.grad
        return loss

    def update_through_data(x):
        loss = ((w * x) ** 2).sum()
        loss.backward()
        w.data = w.data - 0.1 * w.grad
        return loss

    def evaluate_under_no_grad(x):
        loss = ((w * x) ** 2).sum()
        loss.backward()
        with cr.no_grad():
            positive = (w * x > 0).mean()
        return loss, positive

    assert _parts(cr.make_program(update_under_no_grad)(w, x)) == \
        ["forward", "backward", "update"]
    assert _parts(cr.make_program(update_through_data)(x)) == \
        ["forward", "backward", "update"]
    assert _parts(cr.make_program(evaluate_under_no_grad)(x)) == \
        ["forward", "backward", "no_grad"]
    f = lambda x: cr.sum(cr.tanh(x) ** 2)
    assert _parts(cr.make_program(cr.value_and_grad(f))(x)) == ["forward", "backward"]
    assert _parts(cr.make_program(cr.grad(f))(x)) == ["forward", "backward"]
    with cr.no_grad():
        assert _parts(cr.make_program(lambda x: cr.sum(w * x))(x)) == ["no_grad"]
        assert _parts(cr.make_program(cr.value_and_grad(f))(x)) == \
            ["forward", "backward"]  # (cr.grad switches the graph on for its function)
    model = nn.Linear(2, 1, rng=0)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_step = cr.make_program(lambda x, y: train_step(model, opt, x, np.array([0, 0])))
    assert _parts(opt_step(np.ones((2, 2)), None)) == ["forward", "backward", "update (SGD)"]


def test_the_inputs_are_named_as_the_function_names_them():
    """By argument, by the variable a function closes over or reads, by a module's
    parameter names; tensor0 only where nothing names a tensor."""
    x = np.ones(2)
    w = cr.tensor([1.0, -2.0], requires_grad=True)
    params = [cr.tensor([0.5, 0.5], requires_grad=True)]
    box = type("Box", (), {})()
    box.t = cr.tensor([3.0, 4.0])

    def closes_over(x):
        return cr.sum(w * x + params[0] * box.t)

    assert _inputs(cr.make_program(closes_over)(x)) == ["x", "w", "params[0]", "tensor0"]
    assert _inputs(cr.make_program(lambda v, ps: cr.sum(v * ps[0]))(w, params)) == \
        ["v", "ps[0]"]
    assert _inputs(cr.make_program(lambda *xs: cr.sum(xs[0] * xs[1]))(x, x)) == \
        ["xs[0]", "xs[1]"]
    assert _inputs(cr.make_program(cr.jit(lambda a: cr.sum(a * 2.0)))(x)) == ["a"]

    model = nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU(), nn.Linear(3, 1, rng=1))
    opt = optim.SGD(model.parameters(), lr=0.1)

    def reads_a_model(x):
        opt.zero_grad()
        cr.sum(model(cr.tensor(x))).backward()
        opt.step()

    names = _inputs(cr.make_program(reads_a_model)(np.ones((4, 2))))
    assert names == ["x", "model.layers.0.weight", "model.layers.0.bias",
                     "model.layers.2.weight", "model.layers.2.bias", "lr0"]
    holder = type("Holder", (), {})()
    holder.net = model

    def reaches_a_model(x):  # (through an attribute: named by the model alone)
        return cr.sum(holder.net(cr.tensor(x)))

    assert _inputs(cr.make_program(reaches_a_model)(np.ones((4, 2))))[1:4] == \
        ["layers.0.weight", "layers.0.weight.grad", "layers.0.bias"]


def test_parts_and_names_are_made_while_tracing_only(monkeypatch):
    """A replay runs the program alone: no mark, no name."""
    w = cr.tensor([1.0, -2.0], requires_grad=True)

    @cr.jit
    def step(w, x):
        loss = cr.sum((w * x) ** 2)
        w.grad = None
        loss.backward()
        with cr.no_grad():
            w -= 0.1 * w.grad
        return loss

    step(w, np.ones(2))
    step(w, np.ones(2))  # (traced again: w has a gradient now)

    def refuse(*args, **kwargs):
        raise AssertionError("called in a replay")
    monkeypatch.setattr(recording.Recording, "mark", refuse)
    monkeypatch.setattr(recording.Recording, "__init__", refuse)
    for _ in range(3):
        step(w, np.ones(2))


@pytest.mark.parametrize("way", ["operation", "reflected", "ufunc", "argument",
                                 "list argument", "result", "scalar model",
                                 "scalar model argument", "optimizer", "micrograd"])
def test_a_value_met_while_tracing_raises_one_line_that_says_to_use_tensors(way):
    from chainrule.micrograd.engine import Value as MicrogradValue
    from chainrule.nn.scalar import MLP
    model = MLP(2, [3, 1], rng=0)
    ways = {
        "operation": (lambda x: x * cr.Value(2.0), (np.ones(2),)),
        "reflected": (lambda x: cr.Value(2.0) * x, (3.0,)),
        "ufunc": (lambda x: np.multiply(x, cr.Value(2.0)), (np.ones(2),)),
        "argument": (lambda v: v * 2.0, (cr.Value(2.0),)),
        "list argument": (lambda vs: vs[0] * 2.0, ([cr.Value(2.0)],)),
        "result": (lambda: cr.Value(2.0) * 3.0, ()),
        "scalar model": (lambda x: model(list(x)), ([1.0, 2.0],)),
        "scalar model argument": (lambda m: m([1.0, 2.0]), (model,)),
        "optimizer": (lambda: optim.SGD(model.parameters(), lr=0.1).step(), ()),
        "micrograd": (lambda x: MicrogradValue(1.0) + x, (np.ones(2),)),
    }
    f, args = ways[way]
    for make in (cr.jit, cr.make_program):
        with pytest.raises(errors.TracingError) as caught:
            make(f)(*args)
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith("cr.jit and cr.make_program cannot trace a Value")
        assert "use Tensors" in message


def test_kept_buffers_never_hold_what_a_call_returns():
    """Temporaries are computed into buffers kept from call to call; results are new
    arrays at each call, so a result kept from an earlier call does not change."""
    jitted = cr.jit(lambda x: (cr.exp(x) * 2.0 + 1.0, cr.sum(cr.exp(x) * 3.0)))
    first = jitted(np.zeros(3))
    second = jitted(np.ones(3))
    same(first, (np.full(3, 3.0), np.float64(3.0 * 3)))
    assert not np.shares_memory(first[0], second[0])


def test_a_returned_view_of_a_temporary_is_not_overwritten_by_the_next_call():
    jitted = cr.jit(lambda x: (cr.exp(x) * 2.0)[1:])
    first = jitted(np.zeros(3))
    jitted(np.ones(3))
    same(first, np.full(2, 2.0))


def test_an_update_is_not_written_in_place_while_the_old_array_is_returned():
    w = cr.tensor(np.ones(3))

    @cr.jit
    def step():
        old = w.data
        w.data = w.data - 1.0
        return old

    for expected in (1.0, 0.0, -1.0):
        old = step()
        same(old, np.full(3, expected))
        same(w.data, np.full(3, expected - 1.0))
    assert not np.shares_memory(old, w.data)


def test_an_update_is_written_into_the_parameter_s_own_array():
    """What a hand-written step does (p -= lr * g), and PyTorch's optimizers: the new
    values go into the array the parameter holds, which stays the same array."""
    model = _model(np.float64)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = cr.jit(train_step)
    x, y = _problem(np.float64)
    for _ in range(3):
        step(model, opt, x, y)
    arrays = [p.data for p in model.parameters()]
    buffers = [opt.state[p]["momentum_buffer"] for p in model.parameters()]
    step(model, opt, x, y)
    assert all(a is p.data for a, p in zip(arrays, model.parameters()))
    assert all(b is opt.state[p]["momentum_buffer"]
               for b, p in zip(buffers, model.parameters()))
    text = str(step.program(model, opt, x, y))
    assert "out=model.layers.0.weight)" in text and "-> model.layers.0.weight" in text


def test_a_tensor_read_in_any_way_is_read_anew_at_every_call():
    """A closed-over tensor whose values the function reads outside the operations
    (.data, a comparison, .detach(), np.asarray...) is an input of the program like one
    used in an operation: a later change is seen."""
    w = cr.tensor(np.array([1.0, -2.0, 3.0]))
    reads = {
        "data": lambda: w.data * 2.0,
        "comparison": lambda: cr.where(w > 0, 1.0, 0.0),
        "detach": lambda: w.detach() * 2.0,
        "grad of detach": lambda: cr.sum(w.detach() ** 2),
    }
    for name, read in reads.items():
        jitted = cr.jit(read)
        jitted()
        w.data = w.data * -1.0
        same(read(), jitted())
        w.data = w.data * -1.0


def test_in_place_writes_into_a_tensor_replay():
    w = cr.tensor(np.zeros(3))

    @cr.jit
    def bump(x):
        w[1] = x[0]
        t = w
        t += x  # (Tensor.__iadd__: into w's array)
        return w.data * 1.0

    same(bump(np.ones(3)), np.array([1.0, 2.0, 1.0]))
    same(bump(np.full(3, 2.0)), np.array([3.0, 4.0, 3.0]))


def test_a_gradient_function_lists_its_inputs_by_the_differentiated_functions_names():
    """cr.grad(f) carries f's name and signature, so the listing of its program names
    the inputs as f does (w, b), not args[0]."""
    def loss(w, b):
        return cr.sum((w * 2.0 + b) ** 2)
    listing = str(cr.make_program(cr.grad(loss, argnums=(0, 1)))(np.ones(2), 1.0))
    assert listing.startswith("inputs: w (2,) float64, b float")


def test_a_gradient_that_writes_at_an_index_computed_from_data():
    """x[argmax(x)]'s gradient writes plain ones at a place the program computes: the
    written copy is a value of the program, replayed with each call's place."""
    for f in (lambda x: cr.sum(x[cr.argmax(x)]),
              lambda x: cr.sum(x[cr.argsort(x)[:2]] ** 2)):
        jitted = cr.jit(cr.grad(f))
        for x in (np.array([1.0, 3.0, 2.0]), np.array([5.0, 3.0, 2.0])):
            np.testing.assert_array_equal(jitted(x), cr.grad(f)(x))
