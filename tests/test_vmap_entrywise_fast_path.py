"""cr.vmap's way for an entrywise operation on batches of NumPy arrays
(``batching._entrywise_on_arrays``: the broadcasting done at once, the forward called
directly) beside the general path it accelerates: every case of the derivative table,
mapped and differentiated per example, gives the same bits with it and without it."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.transforms import batching

import test_derivatives as table
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


@pytest.mark.parametrize("case", CASES)
def test_the_entrywise_way_gives_the_general_paths_bits(case, monkeypatch):
    fast = _mapped(case)
    monkeypatch.setattr(batching, "_entrywise_on_arrays", lambda prim, args: None)
    general = _mapped(case)
    assert len(fast) == len(general)
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)


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
