"""cr.jit where a plain NumPy array is read at a place the trace computes: forward mode
through a sort (or any gather whose index comes from the data) pushes identity columns,
plain arrays, through ``getitem`` at the traced ``argsort``, so the program must read
them there at each run. Checked against JAX (float64) and chainrule's eager numbers, at
two inputs whose order differs, so that a replay that kept the traced order would fail.
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule.rules import getitem

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

WEIGHTS = np.array([1.0, -2.0, 0.5, 3.0])


def ours_loss(v):
    return cr.sum(cr.sort(v) ** 3 * WEIGHTS)


def jax_loss(v):
    return jnp.sum(jnp.sort(v) ** 3 * WEIGHTS)


TRANSFORMS = {
    "jacfwd of sort": (lambda: cr.jacfwd(cr.sort), lambda: jax.jacfwd(jnp.sort)),
    "jacrev of sort": (lambda: cr.jacrev(cr.sort), lambda: jax.jacrev(jnp.sort)),
    "hessian through sort": (lambda: cr.hessian(ours_loss), lambda: jax.hessian(jax_loss)),
    "jvp of max's place": (
        lambda: lambda v: cr.jvp(lambda u: u[cr.argmax(u)] * u, (v,), (np.ones(4),))[1],
        lambda: lambda v: jax.jvp(lambda u: u[jnp.argmax(u)] * u, (v,), (jnp.ones(4),))[1]),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("mapped", [False, True], ids=["one", "vmap"])
def test_a_jitted_derivative_through_a_data_dependent_gather(name, mapped):
    ours, theirs = (make() for make in TRANSFORMS[name])
    if mapped:
        ours, theirs = cr.vmap(ours), jax.vmap(theirs)
    rng = np.random.default_rng(7)
    first = rng.standard_normal((3, 4) if mapped else 4)
    second = first[..., ::-1].copy()  # the same numbers in another order
    jitted = cr.jit(ours)
    for v in (first, second):  # the second call replays the program the first traced
        expected = np.asarray(jax.jit(theirs)(v))
        np.testing.assert_allclose(np.asarray(jitted(v)), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(ours(v)), expected, rtol=1e-12, atol=1e-12)


def test_a_constant_array_read_at_a_traced_index():
    table = np.arange(10.0) ** 2
    read = cr.jit(lambda i: getitem(table, index=(i,)))
    for i in (np.array([1, 3]), np.array([9, 0])):
        np.testing.assert_array_equal(read(i), table[i])
    assert table.tolist() == (np.arange(10.0) ** 2).tolist()  # the constant is untouched
