"""chainrule.scipy.signal against scipy.signal (values) and jax.scipy.signal (float64
derivatives in both inputs, the mixed second derivative, and forward mode), in every
mode, in one and two dimensions."""

import jax
import jax.numpy as jnp
import jax.scipy.signal as jss
import numpy as np
import pytest
import scipy.signal as ss

import chainrule as cr
import chainrule.scipy.signal as signal
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(3)
SHAPES = [((7,), (3,)), ((3,), (7,)), ((5, 6), (2, 3)), ((4, 4), (4, 4))]
FUNCTIONS = [("convolve", signal.convolve, jss.convolve, ss.convolve),
             ("correlate", signal.correlate, jss.correlate, ss.correlate)]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("name, ours, theirs, values", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_convolve_and_correlate_match_scipy_and_jax(name, ours, theirs, values, mode, shapes):
    a, v = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    expected = values(a, v, mode=mode)
    np.testing.assert_allclose(ours(a, v, mode=mode), expected, rtol=1e-12, atol=1e-13)
    w = RNG.standard_normal(np.shape(expected))
    mine = lambda a, v: cr.sum(ours(a, v, mode=mode) * w)
    jaxs = lambda a, v: jnp.sum(theirs(a, v, mode=mode) * w)
    for argnum in (0, 1):
        np.testing.assert_allclose(cr.grad(mine, argnums=argnum)(a, v),
                                   jax.jit(jax.grad(jaxs, argnums=argnum))(a, v), atol=1e-12)
    np.testing.assert_allclose(cr.jacrev(cr.grad(mine, argnums=0), argnums=1)(a, v),
                               jax.jit(jax.jacrev(jax.grad(jaxs, argnums=0), argnums=1))(a, v),
                               atol=1e-12)
    da, dv = RNG.standard_normal(a.shape), RNG.standard_normal(v.shape)
    np.testing.assert_allclose(cr.jvp(mine, (a, v), (da, dv))[1],
                               jax.jit(lambda a, v, da, dv: jax.jvp(jaxs, (a, v), (da, dv))[1])(
                                   a, v, da, dv), atol=1e-12)


def test_bad_modes_and_shapes_are_refused_in_one_line():
    with pytest.raises(ValueError, match="mode must be 'full', 'valid' or 'same'"):
        signal.convolve(np.ones(3), np.ones(2), mode="wrap")
    with pytest.raises(ValueError, match="one input must be at least as large"):
        signal.convolve(np.ones((3, 1)), np.ones((1, 3)), mode="valid")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(np.ones(3), np.ones((2, 2)))
