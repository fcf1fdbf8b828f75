"""Writing into values a graph saved: never a gradient mixed from old and new numbers.

The rule, for both engines (docs/conventions.md, "Writing after use"):

- while a tensor graph can be walked (before its backward(), or after one with
  retain_graph=True), the arrays it saved are read-only: every way to write into them
  raises at once;
- backward() frees the graph (PyTorch's rule): the arrays are writable again, and a
  second walk raises, saying how to keep the graph;
- a graph dropped without a walk lets go of its arrays too;
- a replaced array (t.data = new) makes a walk of a graph that saved the old one raise;
- a Value node keeps the numbers its rule reads (a float each), so a walk computes at
  the numbers the graph was built from whatever .data was written since, and a graph of
  Values can be walked again, as in micrograd; create_graph=True, which builds the
  gradient from the Values themselves, raises if one was written.
"""

import gc

import numpy as np
import pytest

import chainrule as cr
from chainrule import Value


def _set_index(t): t.data[0] = 5.0
def _set_slice(t): t.data[:] = t.data - 1.0
def _iadd_data(t): t.data += 1.0
def _ufunc_out(t): np.add(t.data, 1.0, out=t.data)
def _fill(t): t.data.fill(0.0)
def _view(t): t.data[0:1][0] = 5.0
def _asarray(t): np.asarray(t)[0] = 5.0
def _numpy(t): t.numpy()[1] = 5.0


def _no_grad_index(t):
    with cr.no_grad():
        t[0] = 5.0


def _no_grad_iadd(t):
    with cr.no_grad():
        t += 1.0


def _no_grad_isub(t):  # PyTorch's hand-written update
    with cr.no_grad():
        t -= 0.1 * np.ones(t.shape)


# Straight into the array: NumPy refuses (ValueError, "read-only"). Through chainrule:
# RuntimeError naming the write and the tensor.
RAW = [_set_index, _set_slice, _iadd_data, _ufunc_out, _fill, _view, _asarray, _numpy]
API = [_no_grad_index, _no_grad_iadd, _no_grad_isub]
WRITES = [pytest.param(w, ValueError, "read-only", id=w.__name__[1:]) for w in RAW] + \
         [pytest.param(w, RuntimeError, "saved by a recorded graph that can still be walked",
                       id=w.__name__[1:]) for w in API]


def cube_sum(x, w):
    return (x * x * x * w).sum()


def fresh():
    return cr.tensor([1.0, 2.0], requires_grad=True), cr.tensor([3.0, 4.0])


# The gradients at the graph's point: d/dx sum(x^3 w) = 3 x^2 w, d/dw = x^3
X_GRAD, W_GRAD = [9.0, 48.0], [1.0, 8.0]


@pytest.mark.parametrize("write, error, message", WRITES)
@pytest.mark.parametrize("which", ["parameter", "data"])
def test_a_write_before_backward_raises_at_once(write, error, message, which):
    x, w = fresh()
    y = cube_sum(x, w)
    target = x if which == "parameter" else w
    before = target.data.copy()
    with pytest.raises(error, match=message):
        write(target)
    np.testing.assert_array_equal(target.data, before)   # nothing was written
    y.backward()                                          # the graph's own point
    np.testing.assert_array_equal(x.grad, X_GRAD)


@pytest.mark.parametrize("write, error, message", WRITES)
def test_a_write_into_a_result_before_backward_raises(write, error, message):
    x, w = fresh()
    h = x * w                      # a result its consumers saved
    y = (h * h).sum()
    with pytest.raises(error, match=message):
        write(h)
    y.backward()
    np.testing.assert_array_equal(x.grad, 2 * np.array([3.0, 8.0]) * [3.0, 4.0])


@pytest.mark.parametrize("write, error, message", WRITES)
@pytest.mark.parametrize("which", ["parameter", "data", "result"])
def test_after_backward_a_write_works_and_a_second_walk_raises(write, error, message,
                                                               which):
    x, w = fresh()
    h = x * w
    y = (h * x * x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad, X_GRAD)
    write({"parameter": x, "data": w, "result": h}[which])   # the graph is freed: allowed
    x.grad = None
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()
    assert x.grad is None                                     # nothing was accumulated


@pytest.mark.parametrize("write, error, message", WRITES)
def test_retain_graph_keeps_the_arrays_locked_until_the_last_walk(write, error, message):
    x, w = fresh()
    y = cube_sum(x, w)
    y.backward(retain_graph=True)
    with pytest.raises(error, match=message):
        write(x)
    x.grad = None
    y.backward()                                  # the same numbers again, then freed
    np.testing.assert_array_equal(x.grad, X_GRAD)
    write(x)


@pytest.mark.parametrize("write, error, message", WRITES)
def test_a_graph_dropped_without_a_walk_lets_go_of_its_arrays(write, error, message):
    x, w = fresh()
    y = cube_sum(x, w)
    del y
    gc.collect()
    write(x)
    write(w)


def test_a_leaf_stays_locked_while_another_graph_that_saved_it_can_be_walked():
    x, w = fresh()
    first, second = cube_sum(x, w), (x * w).sum()
    first.backward()                       # frees the first graph, not the second
    with pytest.raises(ValueError, match="read-only"):
        x.data[0] = 5.0
    x.grad = None
    second.backward()
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])
    x.data[0] = 5.0                        # now no graph holds it


def test_a_walk_after_a_write_into_a_freed_graph_raises_instead_of_mixing_values():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x * x).sum()
    y.backward()
    with cr.no_grad():
        x.data[0] = 5.0
    x.grad = None
    with pytest.raises(RuntimeError, match="walked by an earlier backward"):
        y.backward()


def test_a_replaced_array_makes_a_retained_walk_raise_naming_the_operation():
    x, w = fresh()
    y = cube_sum(x, w)
    y.backward(retain_graph=True)
    w.data = w.data * 2                   # new memory: the version counter sees it
    with pytest.raises(RuntimeError, match="used by multiply was modified in place"):
        y.backward()


def test_an_optimizer_step_after_backward_writes_and_the_next_step_is_right():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    opt = cr.optim.SGD([x], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        expected = x.data - 0.1 * 2 * x.data
        opt.step()
        np.testing.assert_allclose(x.data, expected, rtol=0, atol=0)


def test_no_grad_update_of_a_parameter_is_pytorchs_manual_sgd_step():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    with cr.no_grad():
        x -= 0.25 * x.grad
        x[1] = 7.0
    assert x.tolist() == [0.5, 7.0] and x.requires_grad and x.is_leaf


def test_outside_no_grad_an_in_place_write_into_a_parameter_is_refused():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"x \+= y: in-place operations on a tensor "
                                           r"that requires grad.*cr.no_grad\(\)"):
        x += 1.0
    with pytest.raises(RuntimeError, match=r"tensor\[0\] = \.\.\.: this tensor requires "
                                           r"grad.*at\[index\]\.set"):
        x[0] = 1.0


def test_create_graph_keeps_the_graph_for_the_second_derivative():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x * x).sum()
    y.backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_array_equal(x.grad, 6 * np.array([1.0, 2.0]))


# ---------------------------------------------------------------------------------------
# The scalar engine: every way to write is an assignment to .data
# ---------------------------------------------------------------------------------------

def _value_set(v): v.data = 5.0
def _value_iadd(v): v.data += 1.0


VALUE_WRITES = [pytest.param(_value_set, id="data ="), pytest.param(_value_iadd, id="data +=")]


@pytest.mark.parametrize("write", VALUE_WRITES)
@pytest.mark.parametrize("when", ["before backward", "after backward"])
@pytest.mark.parametrize("which", ["leaf", "interior", "output"])
def test_a_value_walk_computes_at_the_numbers_the_graph_was_built_from(write, when, which):
    x = Value(1.0)
    h = x * x
    y = (h * x).tanh()
    expected = 3 * (1 - np.tanh(1.0) ** 2)       # d/dx tanh(x^3) at x = 1
    if when == "after backward":
        y.backward()
        assert x.grad == pytest.approx(expected, rel=1e-15)
    write({"leaf": x, "interior": h, "output": y}[which])
    x.grad = 0.0
    y.backward()                                  # never a mix of old and new numbers
    assert x.grad == pytest.approx(expected, rel=1e-15)
    with pytest.raises(RuntimeError, match="was written after the graph was built"):
        y.backward(create_graph=True)


def test_a_value_graph_walks_again_and_the_gradients_add_up():
    x = Value(2.0)
    y = x * x * x
    y.backward()
    y.backward()
    assert x.grad == 24.0


def test_create_graph_names_the_value_that_was_written():
    x = Value(2.0)
    y = x * x
    x.data = 3.0
    with pytest.raises(RuntimeError, match=r"backward through '\*': the \.data of "
                                           r"operand 0 \(Value\(data=3\.0"):
        y.backward(create_graph=True)


def test_graphs_built_and_never_walked_keep_no_leaf_alive_or_locked_for_long():
    """An evaluation loop that forgets no_grad(): every graph is dropped without a walk."""
    import weakref
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    batches = []
    for _ in range(3000):
        x = cr.tensor([3.0, 4.0])
        batches.append(weakref.ref(x))
        (x * w).sum()
    gc.collect()
    assert sum(ref() is not None for ref in batches) <= 1     # only the last batch
    w.data[0] = 5.0                                           # nothing holds w any more
