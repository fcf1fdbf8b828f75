"""cond, switch, while_loop and fori_loop under cr.vmap with a predicate, an index or a
bound that differs per example (chainrule/transforms/control_batching.py), against
jax.vmap of jax.lax's in float64: values, derivatives through them (vmap of grad, grad
of a vmapped sum, forward mode), cr.jit, nested vmaps, and the custom-derivative
notebook's fixed point."""

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from seeds_and_tolerances import per_test_generator

sys.path.insert(0, str(Path(__file__).parent))
from test_custom_derivatives import CR, JAX, make_fixed_point  # noqa: E402

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(4401)
LIBS = [(cr, cnp, cr), (jax, jnp, jax.lax)]


def same(ours, theirs, rtol=1e-12):
    ours_leaves = jax.tree_util.tree_leaves(ours)
    theirs_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-12)
        assert np.asarray(a).dtype == np.asarray(b).dtype


def both(run):
    """run(lib, np_like, lax_like) under chainrule and under JAX; the two agree."""
    ours, theirs = (run(*lib) for lib in LIBS)
    same(ours, theirs)
    return ours


def piecewise(lib, np_, lax):
    return lambda x, y: lax.cond(x > y, lambda x, y: np_.sin(x) * y, lambda x, y: x ** 3 - y,
                                 x, y)


@pytest.mark.slow
def test_cond_with_a_predicate_per_example_selects_as_jax_and_differentiates():
    x, y = RNG.standard_normal(6), RNG.standard_normal(6)
    both(lambda lib, np_, lax: lib.vmap(piecewise(lib, np_, lax))(x, y))
    both(lambda lib, np_, lax: lib.vmap(lib.grad(piecewise(lib, np_, lax), (0, 1)))(x, y))
    both(lambda lib, np_, lax: lib.grad(
        lambda x: np_.sum(lib.vmap(piecewise(lib, np_, lax))(x, y) ** 2))(x))
    both(lambda lib, np_, lax: lib.vmap(lib.hessian(piecewise(lib, np_, lax)))(x, y))
    both(lambda lib, np_, lax: lib.jit(lib.vmap(lib.grad(piecewise(lib, np_, lax))))(x, y))
    # a predicate batched, the operand not (in_axes None): each branch sees the one operand
    both(lambda lib, np_, lax: lib.vmap(piecewise(lib, np_, lax), in_axes=(None, 0))(0.3, y))


def test_cond_on_pytrees_and_an_integer_predicate():
    x = RNG.standard_normal((4, 3))
    flag = np.array([0, 2, 0, 1])

    def run(lib, np_, lax):
        f = lambda k, v: lax.cond(k, lambda v: {"a": v * 2.0, "b": np_.sum(v)},
                                  lambda v: {"a": -v, "b": np_.max(v)}, v)
        return lib.vmap(f)(flag, x)
    both(run)


def test_an_unbatched_predicate_still_runs_one_branch():
    ran = []

    def f(x):
        return cr.cond(True, lambda x: x * 2.0, lambda x: ran.append(1) or x, x)
    np.testing.assert_allclose(cr.vmap(f)(np.arange(3.0)), [0.0, 2.0, 4.0])
    assert ran == []


def test_switch_with_an_index_per_example_clamps_and_selects_as_jax():
    index = np.array([-2, 0, 1, 2, 7])
    x = RNG.standard_normal(5)

    def g(lib, np_, lax):
        return lambda i, x: lax.switch(i, [lambda x: x, lambda x: x ** 2, np_.exp], x)
    both(lambda lib, np_, lax: lib.vmap(g(lib, np_, lax))(index, x))
    both(lambda lib, np_, lax: lib.vmap(lib.grad(g(lib, np_, lax), 1))(index, x))
    both(lambda lib, np_, lax: lib.jit(lib.vmap(lib.grad(g(lib, np_, lax), 1)))(index, x))
    both(lambda lib, np_, lax: lib.grad(lambda x: np_.sum(lib.vmap(g(lib, np_, lax))(index, x)))(x))


def doubling(lib, np_, lax):
    """Examples need 1 to many steps to pass 10; the counter and the value are carried."""
    return lambda x: lax.while_loop(lambda c: c[1] < 10.0,
                                    lambda c: (c[0] + 1, c[1] * 2.0 + x), (0, x))


def test_while_loop_runs_until_every_example_is_done_keeping_finished_carries():
    x = np.array([0.5, 1.0, 3.0, 12.0])
    steps, values = both(lambda lib, np_, lax: lib.vmap(doubling(lib, np_, lax))(x))
    assert steps.tolist() == [4, 3, 2, 0]  # the last one never ran its body
    both(lambda lib, np_, lax: lib.jit(lib.vmap(doubling(lib, np_, lax)))(x))
    # forward mode through the steps each example took (JAX differentiates a
    # while_loop only forward)
    both(lambda lib, np_, lax: lib.vmap(lambda x: lib.jvp(doubling(lib, np_, lax), (x,),
                                                          (1.0,))[1][1])(x))
    both(lambda lib, np_, lax: lib.jacfwd(lambda x: lib.vmap(doubling(lib, np_, lax))(x)[1])(x))
    # nested: a per-example condition at the inner level sees the outer batch too
    m = np.array([[0.5, 1.0], [3.0, 0.1]])
    both(lambda lib, np_, lax: lib.vmap(lib.vmap(doubling(lib, np_, lax)))(m))


def test_under_jit_the_batched_while_loop_is_one_loop_of_the_program():
    x = np.array([0.5, 1.0, 3.0])
    f = cr.jit(cr.vmap(doubling(cr, cnp, cr)))
    listing = str(cr.make_program(cr.vmap(doubling(cr, cnp, cr)))(x))
    assert listing.count("while_loop(") == 1 and "np.any" in listing
    for scale in (1.0, 0.01, 5.0):  # other numbers of steps: the same program
        theirs = jax.vmap(doubling(jax, jnp, jax.lax))(x * scale)
        same(f(x * scale), theirs)


def test_reverse_mode_through_a_batched_while_loop_matches_forward_mode():
    # JAX refuses reverse mode through while_loop; chainrule records the steps, so
    # grad gives what jacfwd gives (checked against JAX's forward mode)
    x = np.array([0.5, 1.0, 3.0])
    ours = cr.grad(lambda x: cnp.sum(cr.vmap(doubling(cr, cnp, cr))(x)[1]))(x)
    theirs = jax.jacfwd(lambda x: jnp.sum(jax.vmap(doubling(jax, jnp, jax.lax))(x)[1]))(x)
    same(ours, theirs)


def test_fori_loop_with_bounds_per_example_is_jaxs_while_loop():
    n, x = np.array([0, 1, 2, 4]), RNG.uniform(0.5, 1.5, 4)

    def power(lib, np_, lax):
        return lambda n, x: lax.fori_loop(0, n, lambda i, v: v * x + i, 1.0)
    both(lambda lib, np_, lax: lib.vmap(power(lib, np_, lax))(n, x))
    both(lambda lib, np_, lax: lib.jit(lib.vmap(power(lib, np_, lax)))(n, x))
    both(lambda lib, np_, lax: lib.vmap(lib.jacfwd(power(lib, np_, lax), 1))(n, x))
    # a batched lower bound, and the index used to read a table per example
    table = RNG.standard_normal(6)

    def from_lower(lib, np_, lax):
        return lambda lo, x: lax.fori_loop(lo, 5, lambda i, v: v + np_.take(table, i) * x,
                                           0.0)
    both(lambda lib, np_, lax: lib.vmap(from_lower(lib, np_, lax))(np.array([0, 3, 5]),
                                                                   x[:3]))


@pytest.mark.slow
def test_vmap_of_the_notebooks_fixed_point_as_jax():
    a = np.array([2.0, 9.0, 0.25, 100.0])
    for make in (lambda lib, f: lib["vmap"](f)(a),
                 lambda lib, f: lib["vmap"](lib["grad"](f))(a),
                 lambda lib, f: lib["jit"](lib["vmap"](lib["grad"](f)))(a),
                 lambda lib, f: lib["grad"](lambda a: lib["np"].sum(lib["vmap"](f)(a)))(a)):
        same(make(CR, make_fixed_point(CR)), make(JAX, make_fixed_point(JAX)), rtol=1e-10)


def test_branches_of_different_structures_are_refused_naming_cond():
    with pytest.raises(TypeError, match=r"cond: with a choice made from the data \(per example under cr.vmap"):
        cr.vmap(lambda x: cr.cond(x > 0, lambda x: (x, x), lambda x: x, x))(np.ones(2))
