"""chainrule.scipy.cluster.vq.vq against SciPy's values and JAX's derivatives.

The codes are SciPy's (int32, the first of a tie), the distances SciPy's to rounding,
float32 kept; the distance's first and second derivatives in the observations and the
code book are JAX's (``jax.scipy.cluster.vq.vq``) in both modes; vmap and jit replay."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.cluster.vq as scipy_vq

import chainrule as cr
from chainrule.scipy.cluster.vq import vq
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("shapes", [((6, 3), (4, 3)), ((5,), (3,)), ((1, 2), (1, 2)),
                                    ((7, 1), (2, 1))])
def test_codes_and_distances_are_scipys(shapes):
    rng = seeded("vq", shapes)
    obs, book = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    code, dist = vq(obs, book)
    their_code, their_dist = scipy_vq.vq(obs, book)
    np.testing.assert_array_equal(code, their_code)
    assert code.dtype == their_code.dtype == np.int32
    np.testing.assert_allclose(dist, their_dist, rtol=1e-14, atol=1e-15)


def test_a_tie_goes_to_the_first_code_and_float32_stays_float32_as_scipys():
    obs = np.array([[0.0, 0.0], [2.0, 2.0]], dtype=np.float32)
    book = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 2.0]], dtype=np.float32)
    code, dist = vq(obs, book)
    their_code, their_dist = scipy_vq.vq(obs, book)
    np.testing.assert_array_equal(code, their_code)
    assert code.tolist() == [0, 2]
    assert dist.dtype == their_dist.dtype == np.float32
    np.testing.assert_allclose(dist, their_dist, rtol=1e-6)


def _loss(f, np_):
    return lambda o, b: np_.sum(f(o, b)[1] ** 3 * np_.arange(1.0, 6.0))


def test_first_and_second_derivatives_are_jaxs_in_both_modes():
    rng = seeded("vq derivatives")
    obs, book = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    ours, theirs = _loss(vq, cr), _loss(jax.scipy.cluster.vq.vq, jnp)
    for argnum in (0, 1):
        expected = jax.grad(theirs, argnum)(obs, book)
        np.testing.assert_allclose(cr.grad(ours, argnum)(obs, book), expected, rtol=1e-12)
        np.testing.assert_allclose(cr.jacfwd(ours, argnum)(obs, book), expected, rtol=1e-12)
        np.testing.assert_allclose(cr.hessian(ours, argnum)(obs, book),
                                   jax.hessian(theirs, argnum)(obs, book),
                                   rtol=1e-10, atol=1e-12)


def test_under_vmap_and_jit_replayed_at_new_numbers():
    rng = seeded("vq transforms")
    batch, book = rng.standard_normal((3, 5, 2)), rng.standard_normal((4, 2))
    codes, dists = cr.vmap(lambda o: vq(o, book))(batch)
    for o, c, d in zip(batch, codes, dists):
        their_code, their_dist = scipy_vq.vq(o, book)
        np.testing.assert_array_equal(c, their_code)
        np.testing.assert_allclose(d, their_dist, rtol=1e-14)
    program = cr.jit(lambda o, b: vq(o, b))
    for scale in (1.0, -1.7):  # traced, then replayed
        code, dist = program(batch[0] * scale, book)
        their_code, their_dist = scipy_vq.vq(batch[0] * scale, book)
        np.testing.assert_array_equal(code, their_code)
        np.testing.assert_allclose(dist, their_dist, rtol=1e-14)


def test_bad_shapes_are_named_in_one_line():
    with pytest.raises(ValueError, match=r"vq: obs \(shape \(2, 3\)\) and code_book "
                                         r"\(shape \(3,\)\) should have the same rank"):
        vq(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="vq: expected 1-d or 2-d observations"):
        vq(np.ones((2, 2, 2)), np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="vq: obs has 3 features and code_book 2"):
        vq(np.ones((2, 3)), np.ones((4, 2)))
