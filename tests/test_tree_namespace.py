"""``cr.tree``, JAX's ``jax.tree`` namespace, against JAX's: the same results (a dict's
leaves in its own order in chainrule, sorted in JAX's: compared by key)."""

import jax
import numpy as np
import pytest

import chainrule as cr

TREES = [
    {"w": np.ones((2, 3)), "b": [1.0, (2.0, 3.0)]},
    [dict(t=1, obs=3), dict(t=2, obs=4)],
    (1.0, None, [np.arange(3.0)]),
]


def canonical(tree):
    """A tree with its dicts' keys sorted, as JAX orders them."""
    if isinstance(tree, dict):
        return {k: canonical(tree[k]) for k in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(canonical(t) for t in tree)
    return np.asarray(tree).tolist() if tree is not None else None


@pytest.mark.parametrize("k", range(len(TREES)))
def test_the_functions_give_jaxs_results(k):
    tree = TREES[k]
    double = lambda x: 2 * x  # noqa: E731
    assert canonical(cr.tree.map(double, tree)) == canonical(jax.tree.map(double, tree))
    assert sorted(np.asarray(x).sum() for x in cr.tree.leaves(tree)) == \
        sorted(np.asarray(x).sum() for x in jax.tree.leaves(tree))
    assert cr.tree.reduce(lambda a, b: a + np.sum(b), tree, 0.0) == \
        pytest.approx(float(jax.tree.reduce(lambda a, b: a + np.sum(b), tree, 0.0)))
    leaves, treedef = cr.tree.flatten(tree)
    assert canonical(cr.tree.unflatten(treedef, leaves)) == canonical(tree)
    assert cr.tree.structure(tree) == treedef
    assert len(cr.tree.leaves_with_path(tree)) == len(jax.tree.leaves_with_path(tree))
    assert canonical(cr.tree.map_with_path(lambda p, x: len(p), tree)) == \
        canonical(jax.tree.map_with_path(lambda p, x: len(p), tree))


def test_transpose_as_jaxs():
    steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
    for inner in (True, False):
        ours = cr.tree.transpose(cr.tree.structure([0 for _ in steps]),
                                 cr.tree.structure(steps[0]) if inner else None, steps)
        theirs = jax.tree.transpose(jax.tree.structure([0 for _ in steps]),
                                    jax.tree.structure(steps[0]) if inner else None, steps)
        assert canonical(ours) == canonical(theirs) == {"obs": [3, 4], "t": [1, 2]}
    pairs = ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0))
    outer, inner = cr.tree.structure((0, 0, 0)), cr.tree.structure((0, 0))
    assert cr.tree.transpose(outer, inner, pairs) == ((1.0, 3.0, 5.0), (2.0, 4.0, 6.0))


def test_all_is_false_where_a_leaf_is():
    assert cr.tree.all([True, {"a": 1}]) and not cr.tree.all((1, [0]))
    assert cr.tree.all([]) == jax.tree.all([])
