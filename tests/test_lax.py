"""``chainrule.lax``: jax.lax's names for programs that port by their imports, each
checked against jax.lax (float64) in value, gradient, forward mode and second order."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
from chainrule import lax
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(3)
X = RNG.standard_normal((4, 3))


def _agree(ours, theirs, x=X):
    """f's value, gradient, a jvp and a Hessian-vector product: chainrule's are JAX's."""
    t = RNG.standard_normal(np.shape(x))
    np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cr.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cr.jvp(ours, (x,), (t,))[1], jax.jvp(theirs, (x,), (t,))[1],
                               rtol=1e-12, atol=1e-14)
    ours_hvp = cr.jvp(cr.grad(ours), (x,), (t,))[1]
    theirs_hvp = jax.jvp(jax.grad(theirs), (x,), (t,))[1]
    np.testing.assert_allclose(ours_hvp, theirs_hvp, rtol=1e-12, atol=1e-14)


def test_the_names_are_jax_lax_names_and_import_chainrule_lax_works():
    import chainrule.lax as imported
    assert imported is lax and cr.lax is lax
    assert all(hasattr(jax.lax, name) for name in lax.__all__)


def test_map_is_jaxs():
    _agree(lambda x: cr.sum(lax.map(lambda r: cr.sin(r) * r[0], x) ** 2),
           lambda x: jnp.sum(jax.lax.map(lambda r: jnp.sin(r) * r[0], x) ** 2))


@pytest.mark.parametrize("start", [0, 1, 3])   # 3: clamped so the slice fits
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_dynamic_slices_along_one_axis_are_jaxs(start, axis):
    size = 2
    _agree(lambda x: cr.sum(cr.tanh(lax.dynamic_slice_in_dim(x, start, size, axis)) ** 3),
           lambda x: jnp.sum(jnp.tanh(jax.lax.dynamic_slice_in_dim(x, start, size, axis)) ** 3))
    _agree(lambda x: cr.sum(lax.dynamic_index_in_dim(x, start, axis, keepdims=False) ** 3),
           lambda x: jnp.sum(jax.lax.dynamic_index_in_dim(x, start, axis, False) ** 3))
    update = RNG.standard_normal(tuple(size if k == axis % 2 else n
                                       for k, n in enumerate(X.shape)))
    _agree(lambda x: cr.sum(cr.sin(lax.dynamic_update_slice_in_dim(x, update * x[0, 0],
                                                                   start, axis))),
           lambda x: jnp.sum(jnp.sin(jax.lax.dynamic_update_slice_in_dim(x, update * x[0, 0],
                                                                          start, axis))))


def test_stop_gradient_is_a_constant_of_differentiation_at_every_order():
    _agree(lambda x: cr.sum(x ** 2 * lax.stop_gradient(cr.sin(x) * x)),
           lambda x: jnp.sum(x ** 2 * jax.lax.stop_gradient(jnp.sin(x) * x)))


def test_stop_gradient_under_vmap_jit_and_backward():
    f = cr.grad(lambda x: cr.sum(x * cr.stop_gradient(x ** 2)))
    np.testing.assert_allclose(cr.vmap(f)(X), X ** 2)
    np.testing.assert_allclose(cr.jit(f)(X), X ** 2)
    t = cr.tensor(X, requires_grad=True)
    cr.sum(t * cr.stop_gradient(t ** 2)).backward()
    np.testing.assert_allclose(t.grad, X ** 2)


# jax.lax's special functions, chainrule.scipy.special's under lax's names: (name,
# the point, the arguments differentiated, as JAX differentiates them; its lax.zeta has
# no derivative, where chainrule's has one in q, checked in test_scipy_special)
SPECIAL = [("lgamma", (2.7,), (0,)), ("digamma", (2.7,), (0,)), ("polygamma", (2.0, 1.7), (1,)),
           ("zeta", (3.0, 1.5), ()), ("igamma", (2.0, 1.3), (1,)),
           ("igammac", (2.0, 1.3), (1,)), ("betainc", (2.0, 3.0, 0.4), (2,)),
           ("bessel_i0e", (1.3,), (0,)), ("bessel_i1e", (1.3,), (0,)),
           ("erf_inv", (0.3,), (0,)), ("erfc", (0.7,), (0,))]


@pytest.mark.parametrize("name, point, argnums", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_the_special_functions_are_jaxs_to_second_order(name, point, argnums):
    ours, theirs = getattr(lax, name), getattr(jax.lax, name)
    point = tuple(np.float64(p) if isinstance(p, float) else p for p in point)
    np.testing.assert_allclose(ours(*point), theirs(*point), rtol=1e-12)
    for argnum in argnums:
        first = cr.grad(ours, argnums=argnum)(*point)
        np.testing.assert_allclose(first, jax.grad(theirs, argnums=argnum)(*point),
                                   rtol=1e-10)
        np.testing.assert_allclose(cr.grad(cr.grad(ours, argnums=argnum), argnums=argnum)(
            *point), jax.grad(jax.grad(theirs, argnums=argnum), argnums=argnum)(*point),
            rtol=1e-8)
    assert name in lax.__all__


def test_a_name_jax_lax_lacks_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        lax.nonesuch  # noqa: B018
