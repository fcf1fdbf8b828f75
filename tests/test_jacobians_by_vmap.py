"""Jacobians two ways, on every case of the derivative table.

``jacrev`` and ``jacfwd`` push a stack of seeds (the rows, or columns, of an identity)
through one pass. The plain definition is JAX's: ``cr.vmap`` of ``vjp`` or of ``jvp``,
where every rule sees one seed and vmap's batching rules carry the stack. The way
taken (``jacobians.STACKED_SEEDS``) hands the stack to the rules themselves, as leading
axes of their cotangents and tangents. These are two mechanisms written apart (a rule's
leading axes against vmap's batching of each operation inside the rule), so their
agreement checks each against the other: jacrev, jacfwd and the Hessian of a loss of
the outputs agree on every case, to 1e-12 of the result's scale.
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule.transforms import jacobians

import test_derivatives as table
from test_table_under_transforms import (differentiable, dtype_of, loss, outputs,
                                         takes_arrays, weights_for)

REL = 1e-12
CASES = [pytest.param(case, id=case.id) for case in table.CASES]
# the developer's loop (make test-fast) runs jacrev; make test runs all three
WAYS = [pytest.param(way, marks=[pytest.mark.slow] if k else [])
        for k, way in enumerate(["jacrev", "jacfwd", "hessian"])]


def real_outputs(out):
    """The outputs with a derivative, a complex one as its real and imaginary parts
    (a Jacobian of real numbers either way)."""
    parts = []
    for o in differentiable(out):
        parts += [cr.real(o), cr.imag(o)] if dtype_of(o).kind == "c" else [o]
    return parts


def jacobian_both_ways(way, case, monkeypatch):
    xs = case.arrays()
    n = len(xs)
    fn = case.fn
    if way == "hessian":
        w = weights_for(case, outputs(fn(*[cr.tensor(a) for a in xs])), "hessian")
        transform = cr.hessian(lambda *a: loss(fn(*a), w), tuple(range(n)))
    else:
        make = cr.jacrev if way == "jacrev" else cr.jacfwd
        transform = make(lambda *a: real_outputs(fn(*a)), tuple(range(n)))
    inputs = xs if takes_arrays(transform, xs) else [cr.tensor(a) for a in xs]
    stacked = cr.tree_flatten(transform(*inputs))[0]
    monkeypatch.setattr(jacobians, "STACKED_SEEDS", False)
    mapped = cr.tree_flatten(transform(*inputs))[0]
    return stacked, mapped


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("case", CASES)
def test_the_stack_through_the_rules_equals_vmap_of_the_pass(case, way, monkeypatch):
    stacked, mapped = jacobian_both_ways(way, case, monkeypatch)
    assert len(stacked) == len(mapped)
    for k, (a, b) in enumerate(zip(stacked, mapped)):
        a, b = np.asarray(getattr(a, "data", a)), np.asarray(getattr(b, "data", b))
        assert a.dtype == b.dtype, f"{way}, block {k}: {a.dtype} vs {b.dtype}"
        table.assert_close(a, b, REL, f"{way}, block {k}")


def test_the_mapped_way_runs_every_rule_on_one_seed(monkeypatch):
    # under vmap a rule is handed a batch that shows one example's shape: a rule that
    # looks at its cotangent's shape sees the output's own
    seen = []

    @cr.custom_vjp
    def square(x):
        return x ** 2

    def bwd(x, g):
        seen.append(np.shape(g))
        return (2 * x * g,)
    square.defvjp(lambda x: (square(x), x), bwd)
    x = np.array([1.0, 2.0, 3.0])
    monkeypatch.setattr(jacobians, "STACKED_SEEDS", False)
    np.testing.assert_array_equal(cr.jacrev(square)(x), np.diag(2 * x))
    assert seen == [(3,)]
