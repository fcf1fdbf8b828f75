"""cr.jit nested in cr.vmap and cr.grad, and around them, against JAX (float64, 1e-10).

A cr.jit called inside another trace is part of that trace's program; a cr.jit called
on a transform's values (vmap's batches, grad's tracers) runs its function on them. So
``jit(vmap(jit(f)))`` is ``vmap(f)`` with the same numbers, as ``jax.jit(jax.vmap(
jax.jit(f)))`` is; each nesting below is checked for a handful of operations.
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

# (name, chainrule's f, JAX's f): each takes one example, a (4, 3) matrix
OPERATIONS = [
    ("sum", cr.sum, jnp.sum),
    ("sum axis 0", lambda x: cnp.sum(x, axis=0), lambda x: jnp.sum(x, axis=0)),
    ("sum axis -1", lambda x: cnp.sum(x, axis=-1), lambda x: jnp.sum(x, axis=-1)),
    ("matmul", lambda x: x @ x.T, lambda x: x @ x.T),
    ("elementwise", lambda x: cr.tanh(x) * cr.exp(-x) + x ** 2,
     lambda x: jnp.tanh(x) * jnp.exp(-x) + x ** 2),
    ("indexing", lambda x: x[1] * x[::-1, 0][:3] + x[np.array([0, 0, 2]), 1],
     lambda x: x[1] * x[::-1, 0][:3] + x[np.array([0, 0, 2]), 1]),
]
IDS = [name for name, _, _ in OPERATIONS]

# (name, how to nest a function of one example, as chainrule and as JAX nest it);
# each gives a function of a batch of five examples
NESTINGS = [
    ("vmap(jit)", lambda f: cr.vmap(cr.jit(f)), lambda f: jax.vmap(jax.jit(f))),
    ("jit(vmap)", lambda f: cr.jit(cr.vmap(f)), lambda f: jax.jit(jax.vmap(f))),
    ("jit(vmap(jit))", lambda f: cr.jit(cr.vmap(cr.jit(f))),
     lambda f: jax.jit(jax.vmap(jax.jit(f)))),
    ("jit(jit)", lambda f: cr.jit(cr.jit(f)), lambda f: jax.jit(jax.jit(f))),
]


def _batch(seed):
    return np.random.default_rng(seed).standard_normal((5, 4, 3))


def _close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-10,
                               atol=1e-12)


def _loss(f, sum_):
    """A scalar of the batch, for grad: the sum of f's outputs squared."""
    return lambda x: sum_(f(x) ** 2)


@pytest.mark.parametrize("nesting", NESTINGS, ids=[n for n, _, _ in NESTINGS])
@pytest.mark.parametrize("op", OPERATIONS, ids=IDS)
def test_nested_jit_and_vmap_give_jaxs_numbers(op, nesting):
    _, ours, theirs = op
    _, nest_cr, nest_jax = nesting
    xs = _batch(0)
    if nest_cr is NESTINGS[3][1]:  # (jit of jit: one example, no batch)
        xs = xs[0]
    jitted = nest_cr(ours)
    _close(jitted(xs), nest_jax(theirs)(xs))
    _close(jitted(xs + 1.0), nest_jax(theirs)(xs + 1.0))  # the replay, on new numbers


@pytest.mark.parametrize("op", OPERATIONS, ids=IDS)
def test_grad_outside_and_inside_the_nesting(op):
    _, ours, theirs = op
    xs = _batch(1)
    cases = [  # (chainrule, JAX), functions of the batch
        (cr.grad(_loss(cr.jit(cr.vmap(cr.jit(ours))), cr.sum)),
         jax.grad(_loss(jax.jit(jax.vmap(jax.jit(theirs))), jnp.sum))),
        (cr.jit(cr.grad(_loss(cr.vmap(cr.jit(ours)), cr.sum))),
         jax.jit(jax.grad(_loss(jax.vmap(jax.jit(theirs)), jnp.sum)))),
        (cr.jit(cr.vmap(cr.grad(_loss(cr.jit(ours), cr.sum)))),
         jax.jit(jax.vmap(jax.grad(_loss(jax.jit(theirs), jnp.sum))))),
        (cr.vmap(cr.jit(cr.grad(_loss(cr.jit(ours), cr.sum)))),
         jax.vmap(jax.jit(jax.grad(_loss(jax.jit(theirs), jnp.sum))))),
    ]
    for mine, jaxs in cases:
        _close(mine(xs), jaxs(xs))
        _close(mine(xs * 0.5), jaxs(xs * 0.5))


def test_the_issues_case():
    x = np.arange(6.).reshape(3, 2)
    np.testing.assert_array_equal(cr.jit(cr.vmap(cr.jit(cr.sum)))(x), [1.0, 5.0, 9.0])


def test_a_jit_around_a_wrapped_jit_keeps_its_own_function_and_programs():
    inner = cr.jit(lambda x: x * 2.0)
    outer = cr.jit(cr.vmap(inner))
    assert outer.fun is not inner.fun and outer._programs is not inner._programs
    assert outer.__name__ == inner.__name__  # (the name still comes through)


def test_a_jitted_function_under_grad_or_vmap_is_traced_by_them_at_every_call():
    f = cr.jit(lambda x: cr.sum(cr.sin(x) * x))
    g = jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))
    for scale in (1.0, 2.0, 3.0):  # (not the first call's numbers again)
        x = np.arange(1.0, 4.0) * scale
        _close(cr.grad(f)(x), g(x))
        _close(cr.vmap(f)(np.stack([x, -x])), jax.vmap(lambda v: jnp.sum(jnp.sin(v) * v))(
            np.stack([x, -x])))
    assert not f._programs  # (no program was made of a transform's values)
