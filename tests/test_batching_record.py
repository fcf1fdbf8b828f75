"""How an operation batches under cr.vmap is part of its record (``Primitive.batching``):
an operation defined with a kind runs on the whole batch at once, with nothing written
for vmap, and one defined without runs once per example (counted, still right)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import rules
from chainrule.transforms import batching

X = np.arange(24.0).reshape(2, 3, 4) / 10 - 1


def _per_example(f, xs):
    return np.stack([f(x) for x in xs])


def test_every_operation_of_the_table_names_how_it_batches_but_the_known_loops():
    # convolutions, pooling and the fused cross-entropy loop over the batch on purpose:
    # their rules already take a batch axis of their own (N), and vmap adds one more
    looping = sorted(p.name for p in rules.primitives() if p.batching is None)
    assert looping == ["conv", "conv_input_grad", "conv_weight_grad", "cross_entropy",
                       "fold", "max_pool", "unfold"]
    assert batching.batching_rules() == {"rule": len(rules.primitives()) - len(looping),
                                         "fallback": len(looping)}


@pytest.mark.parametrize("axis", [0, 1, -1, -2, (0, 1), None])
def test_a_new_reduction_batches_from_its_record_alone(axis):
    @cr.primitive(name="sum_of_squares", batching=cr.along_axis(axis=None, keepdims=False))
    def sum_of_squares(x, axis=None, keepdims=False):
        return np.sum(x * x, axis=axis, keepdims=keepdims)
    sum_of_squares.defvjp(lambda g, ans, x, axis=None, keepdims=False:
                          2 * x * rules.expand_reduced(g, x.shape, axis, keepdims))

    def f(x):
        return sum_of_squares(x, axis=axis)
    before = batching.fallbacks["sum_of_squares"]
    got = cr.vmap(f)(X)
    assert batching.fallbacks["sum_of_squares"] == before  # one call on the batch
    np.testing.assert_allclose(got, _per_example(f, X), rtol=1e-14)
    grads = cr.vmap(cr.grad(lambda x: cr.sum(f(x))))(X)
    np.testing.assert_allclose(grads, 2 * X, rtol=1e-14)


def test_a_new_entrywise_operation_batches_from_its_record_alone():
    cube = cr.primitive(lambda x: x ** 3, name="entrywise_cube", batching=cr.ENTRYWISE)
    cube.defvjp(lambda g, ans, x: 3 * g * x ** 2)
    before = batching.fallbacks["entrywise_cube"]
    np.testing.assert_allclose(cr.vmap(cube)(X), X ** 3, rtol=1e-14)
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda x: cr.sum(cube(x))))(X), 3 * X ** 2,
                               rtol=1e-14)
    assert batching.fallbacks["entrywise_cube"] == before


def test_an_operation_without_a_kind_runs_once_per_example_and_is_counted():
    cube = cr.primitive(lambda x: x ** 3, name="looped_cube")
    cube.defvjp(lambda g, ans, x: 3 * g * x ** 2)
    before = batching.fallbacks["looped_cube"]
    np.testing.assert_allclose(cr.vmap(cube)(X), X ** 3, rtol=1e-14)
    assert batching.fallbacks["looped_cube"] == before + 1


def test_the_kinds_read_as_they_are_written():
    assert repr(cr.ENTRYWISE) == "ENTRYWISE"
    assert repr(cr.LEADING_AXES) == "LEADING_AXES"
    assert repr(rules.sum.batching) == "along_axis(axis=None, keepdims=False)"
    assert rules.exp.batching is cr.ENTRYWISE
    assert rules.det.batching is cr.LEADING_AXES


def test_a_kind_that_does_not_exist_is_refused_when_written():
    with pytest.raises(ValueError, match="Batching: kind 'elementwise' is none of"):
        cr.Batching("elementwise")
    with pytest.raises(ValueError, match="names its axis= parameter"):
        cr.along_axis(keepdims=False)
    assert cr.Batching("entrywise").kind == cr.ENTRYWISE.kind  # a kind, not an object
    twin = cr.primitive(lambda x: x * 2, name="doubled_twin", batching=cr.Batching("entrywise"))
    twin.defvjp(lambda g, ans, x: 2 * g)
    before = batching.fallbacks["doubled_twin"]
    np.testing.assert_allclose(cr.vmap(twin)(X), 2 * X)
    assert batching.fallbacks["doubled_twin"] == before
