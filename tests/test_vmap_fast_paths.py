"""cr.vmap's short ways beside the general path they accelerate: an entrywise operation
on batches of NumPy arrays (``batching._entrywise_on_arrays``: the broadcasting done at
once, the forward called directly); an operation along an axis or on leading axes whose
one batched operand is a NumPy array (``batching._kind_on_one_array``: the axis shifted
and the forward called, without the general call record); the arithmetic operators
between a batch and a number, a smaller array or a batch of its own level
(``batching._arithmetic_on_arrays``: NumPy's operator on the numbers, without the
operation's dispatch); reshape and broadcast_to of one batch to a plain shape
(``batching._shape_on_one_array``); an indexed update through slices and integers
(``batching_indexing._basic_update``: one more slice in front); and the backward walk's
fitting of a batch of gradients as the stack of arrays it holds
(``backward._fitted_stack``). Every case of the derivative table, mapped and
differentiated per example, gives the same bits with them and without them, and so does
every Jacobian taken as vmap of vjp and jvp."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import backward
from chainrule.transforms import batching, batching_indexing

import test_derivatives as table
from test_jacobians_by_vmap import jacobian_both_ways
from test_table_under_transforms import examples, gradient, outputs, weights_for

CASES = [pytest.param(case, id=case.id) for case in table.CASES]


def _mapped(case):
    fn = case.fn
    per_example = examples(case)
    batched = [np.stack(column) for column in zip(*per_example)]
    ws = weights_for(case, outputs(fn(*[cr.tensor(a) for a in per_example[0]])), "fast path")
    values = outputs(cr.vmap(fn)(*batched))
    grads = cr.vmap(lambda *a: tuple(gradient(case, a, ws)))(*batched)
    return values + [np.asarray(getattr(g, "data", g)) for g in grads]


SHORT_WAYS = ["_entrywise_on_arrays", "_kind_on_one_array", "_arithmetic_on_arrays",
              "_shape_on_one_array"]


def same_bits_without_the_short_ways(run, monkeypatch):
    """run() with the short ways and with the general path alone: the same arrays. The
    backward walk's shortcuts go too (``backward.FAST_PATHS``, whose ``_fitted_stack``
    fits a vmapped pass's gradients as stacks), and so does the indexed update's way
    through a basic index (``batching_indexing._basic_update``)."""
    fast = run()
    for name in SHORT_WAYS:
        monkeypatch.setattr(batching, name, lambda *call: None)
    monkeypatch.setattr(backward, "FAST_PATHS", False)
    monkeypatch.setattr(batching_indexing, "_basic_update", lambda *call: None)
    general = run()
    assert len(fast) == len(general)
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES)
def test_the_short_ways_give_the_general_paths_bits(case, monkeypatch):
    same_bits_without_the_short_ways(lambda: _mapped(case), monkeypatch)


def test_it_is_taken_for_entrywise_operations_on_arrays_and_left_for_the_rest():
    calls = []
    original = batching._entrywise_on_arrays

    def counted(prim, args):
        out = original(prim, args)
        calls.append((prim.name, out is not None))
        return out
    x = np.arange(6.0).reshape(2, 3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batching, "_entrywise_on_arrays", counted)
        cr.vmap(lambda v: cr.sin(v) * 2.0 + np.ones(3))(x)
        assert calls and all(taken for _, taken in calls)
        calls.clear()
        cr.grad(lambda v: cr.sum(cr.vmap(cr.sin)(v)))(x)  # batches of an outer level's
        # values: the general path
        assert any(not taken for _, taken in calls)


def test_the_axis_way_is_taken_for_one_batched_array_and_left_for_the_rest():
    calls = []
    original = batching._kind_on_one_array

    def counted(prim, kind, args, kwargs):
        out = original(prim, kind, args, kwargs)
        calls.append((prim.name, out is not None))
        return out
    x = np.arange(24.0).reshape(2, 3, 4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batching, "_kind_on_one_array", counted)
        out = cr.vmap(lambda v: cr.sum(v, axis=-1) + cr.mean(v, 0).sum())(x)
        np.testing.assert_array_equal(out, x.sum(axis=-1) + x.mean(axis=1).sum(axis=-1)[:, None])
        assert ("sum", True) in calls and ("mean", True) in calls
        calls.clear()
        cr.grad(lambda v: cr.sum(cr.vmap(lambda r: cr.sum(r, axis=0))(v)))(x)
        # a batch of an outer level's values (a reverse-mode tracer): the general path
        assert ("sum", False) in calls


def _jacobians_by_vmap(case, monkeypatch):
    """jacrev and jacfwd as vmap of vjp and jvp (every leaf of both)."""
    return [np.asarray(getattr(leaf, "data", leaf)) for way in ("jacrev", "jacfwd")
            for leaf in jacobian_both_ways(way, case, monkeypatch)[1]]


@pytest.mark.parametrize("case", CASES)
def test_the_short_ways_give_the_general_paths_bits_in_jacobians_by_vmap(case, monkeypatch):
    same_bits_without_the_short_ways(lambda: _jacobians_by_vmap(case, monkeypatch), monkeypatch)


def test_the_operators_way_is_taken_for_numbers_smaller_arrays_and_its_own_batches():
    calls = []
    original = batching._arithmetic_on_arrays

    def counted(prim, batch, other, reflected):
        out = original(prim, batch, other, reflected)
        calls.append((prim.name, type(other).__name__, out is not None))
        return out
    x = np.arange(6.0).reshape(2, 3)
    row = np.array([1.0, 2.0, 3.0])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batching, "_arithmetic_on_arrays", counted)
        out = cr.vmap(lambda v: (2.0 * v - row) / (v + 1) * v + row * v)(x)
        np.testing.assert_array_equal(out, (2.0 * x - row) / (x + 1) * x + row * x)
        assert calls and all(taken for *_, taken in calls)
        assert {name for name, *_ in calls} == {"add", "subtract", "multiply", "divide"}
        calls.clear()
        # an array with as many axes as the batch would meet its batch axis: the
        # record's path pads the batch first
        square = np.arange(9.0).reshape(3, 3)
        out = cr.vmap(lambda v: v * square)(x)
        np.testing.assert_array_equal(out, x[:, None, :] * square)
        assert calls == [("multiply", "ndarray", False)]


def test_batches_of_two_sizes_are_refused_not_broadcast():
    one = np.ones((1, 3))
    with pytest.raises(ValueError, match="batch"):
        cr.vmap(lambda a, b: a * b)(np.ones((4, 3)), one)


def test_the_shape_way_is_taken_for_one_batched_array_and_a_plain_shape():
    calls = []
    original = batching._shape_on_one_array

    def counted(prim, args, kwargs):
        out = original(prim, args, kwargs)
        calls.append((prim.name, out is not None))
        return out
    x = np.arange(12.0).reshape(2, 6)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batching, "_shape_on_one_array", counted)
        out = cr.vmap(lambda v: cr.broadcast_to(cr.reshape(v, (3, 2))[0], (4, 2)))(x)
        np.testing.assert_array_equal(out, np.broadcast_to(x.reshape(2, 3, 2)[:, :1], (2, 4, 2)))
        assert ("reshape", True) in calls and ("broadcast_to", True) in calls


def test_a_basic_index_updates_the_batch_through_one_more_slice():
    taken = []
    original = batching_indexing._basic_update

    def counted(*args):
        out = original(*args)
        taken.append(out is not None)
        return out
    x = np.arange(12.0).reshape(3, 4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batching_indexing, "_basic_update", counted)
        jac = cr.jacrev(lambda v: v[::-1] * 2.0)(x[0])
        per_row = cr.vmap(lambda v: v.at[1:3].add(v[:2] * 10.0))(x)
    assert taken and all(taken)
    np.testing.assert_array_equal(jac, 2.0 * np.eye(4)[::-1])
    np.testing.assert_array_equal(per_row, [[0, 1, 12, 3], [4, 45, 56, 7], [8, 89, 100, 11]])


def test_a_batch_of_gradients_is_fitted_as_its_stack():
    fitted = []
    original = backward._fitted_stack

    def counted(*args):
        out = original(*args)
        fitted.append(out is not None)
        return out
    # x * s(x), s the sum: the scalar's gradient sums the example's axis away
    _, pullback = cr.vjp(lambda x: x * cr.sum(x), np.array([1.0, 2.0]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backward, "_fitted_stack", counted)
        (rows,) = cr.vmap(pullback)(np.eye(2))  # the rows of the Jacobian, s I + x 1^T
    assert fitted and all(fitted)
    np.testing.assert_array_equal(rows, [[4.0, 1.0], [2.0, 5.0]])
