"""chainrule.numpy's creation and assembly functions take values a gradient flows through
(a fill value, the ends of a range, the pieces of np.r_), with JAX's derivatives; and
NumPy's own functions never drop such a value silently.
"""

import jax
import jax.numpy as jnp
import numpy
import pytest

import chainrule as cr
import chainrule.numpy as np

jax.config.update("jax_enable_x64", True)

W = numpy.arange(1.0, 13.0)

CASES = [
    ("full", lambda x: np.full((2, 3), x) * W[:6].reshape(2, 3),
     lambda x: jnp.full((2, 3), x) * W[:6].reshape(2, 3)),
    ("full_like", lambda x: np.full_like(numpy.zeros(4), x ** 2) * W[:4],
     lambda x: jnp.full_like(jnp.zeros(4), x ** 2) * W[:4]),
    ("linspace", lambda x: np.linspace(-x, x ** 2, 5) * W[:5],
     lambda x: jnp.linspace(-x, x ** 2, 5) * W[:5]),
    ("linspace, arrays of ends, axis=1",
     lambda x: np.linspace(numpy.array([0.0, 1.0]), x, 3, axis=1) * W[:6].reshape(2, 3),
     lambda x: jnp.linspace(jnp.array([0.0, 1.0]), x, 3, axis=1) * W[:6].reshape(2, 3)),
    ("linspace, no endpoint", lambda x: np.linspace(0.0, x, 4, endpoint=False) * W[:4],
     lambda x: jnp.linspace(0.0, x, 4, endpoint=False) * W[:4]),
    ("logspace", lambda x: np.logspace(0.0, x, 3), lambda x: jnp.logspace(0.0, x, 3)),
    ("geomspace", lambda x: np.geomspace(1.0, x * 3, 4), lambda x: jnp.geomspace(1.0, x * 3, 4)),
    ("r_", lambda x: np.r_[x, 2 * x, 0:3] * W[:5], lambda x: jnp.r_[x, 2 * x, 0:3] * W[:5]),
    ("c_", lambda x: np.c_[np.array([x, x * x]), numpy.array([1.0, 2.0])] * W[:4].reshape(2, 2),
     lambda x: jnp.c_[jnp.array([x, x * x]), jnp.array([1.0, 2.0])] * W[:4].reshape(2, 2)),
    ("gradient", lambda x: np.gradient(np.array([x, 2 * x, 4 * x, x * x]) ** 2) * W[:4],
     lambda x: jnp.gradient(jnp.array([x, 2 * x, 4 * x, x * x]) ** 2) * W[:4]),
    ("gradient, 2-D, spacing",
     lambda x: np.gradient(x * W.reshape(3, 4) ** 2, 0.5)[1] * W.reshape(3, 4),
     lambda x: jnp.gradient(x * W.reshape(3, 4) ** 2, 0.5)[1] * W.reshape(3, 4)),
    ("row_stack", lambda x: np.row_stack([np.array([x, 1.0]), np.array([2.0, x])]) * W[:4].reshape(2, 2),
     lambda x: jnp.vstack([jnp.array([x, 1.0]), jnp.array([2.0, x])]) * W[:4].reshape(2, 2)),
]


@pytest.mark.parametrize("name, ours, theirs", CASES, ids=[c[0] for c in CASES])
def test_a_value_a_gradient_flows_through_keeps_its_derivative(name, ours, theirs):
    numpy.testing.assert_allclose(ours(1.5), theirs(1.5), rtol=1e-13)
    for at in (1.5, 0.7):
        assert cr.grad(lambda x: np.sum(ours(x)))(at) == pytest.approx(
            float(jax.grad(lambda x: jnp.sum(theirs(x)))(at)), rel=1e-12)
        assert cr.grad(cr.grad(lambda x: np.sum(ours(x))))(at) == pytest.approx(
            float(jax.grad(jax.grad(lambda x: jnp.sum(theirs(x))))(at)), rel=1e-10, abs=1e-12)


def test_plain_arguments_give_numpys_own_results():
    assert numpy.array_equal(np.r_[1, 2, 0:2], numpy.r_[1, 2, 0:2])
    assert numpy.array_equal(np.linspace(0, 1, 5), numpy.linspace(0, 1, 5))
    assert numpy.array_equal(np.gradient(numpy.array([1.0, 2.0, 4.0])),
                             numpy.gradient(numpy.array([1.0, 2.0, 4.0])))
    assert np.full(3, 2).dtype == numpy.full(3, 2).dtype


def test_numpys_full_and_full_like_never_drop_a_fill_value_silently():
    """NumPy's own full and full_like write the fill value with np.copyto: a value a
    gradient flows through is refused there, naming what to use instead."""
    with pytest.raises(TypeError, match="np.copyto.*chainrule.numpy's full or full_like"):
        cr.grad(lambda x: cr.sum(numpy.full((2,), x, dtype=float)))(1.5)
    with pytest.raises(TypeError, match="np.copyto"):
        cr.grad(lambda x: cr.sum(numpy.full_like(numpy.zeros(2), x)))(1.5)
    # a Tensor's full_like (the Tensor gives the shape) runs chainrule's: the fill value
    # keeps its derivative
    t = cr.tensor([1.0, 2.0])
    assert cr.grad(lambda x: cr.sum(numpy.full_like(t, x)))(1.5) == 2.0


def test_angle_isreal_and_real_if_close_of_real_numbers():
    assert cr.grad(lambda x: np.angle(x) * x)(-1.5) == pytest.approx(numpy.pi)
    assert cr.grad(lambda x: np.real_if_close(x) * 2)(1.5) == 2.0
    assert cr.grad(lambda x: np.isreal(x) * x)(1.5) == 1.0


@pytest.mark.parametrize("name, ours, theirs", [
    ("mean of a tuple", lambda x: np.mean((x, 2 * x)), lambda x: jnp.mean(jnp.array((x, 2 * x)))),
    ("sum of a tuple", lambda x: np.sum((x, x * x)), lambda x: jnp.sum(jnp.array((x, x * x)))),
    ("norm of a list", lambda x: np.linalg.norm([x, 2 * x]), lambda x: jnp.linalg.norm(jnp.array([x, 2 * x]))),
    ("norm of a tuple", lambda x: np.linalg.norm((x, 3.0)), lambda x: jnp.linalg.norm(jnp.array((x, 3.0)))),
    ("dot of tuples", lambda x: np.dot((x, 1.0), (2.0, x)), lambda x: jnp.dot(jnp.array((x, 1.0)), jnp.array((2.0, x)))),
    ("mean of nested lists", lambda x: np.mean([[x, 1.0], [2.0, x * x]]),
     lambda x: jnp.mean(jnp.array([[x, 1.0], [2.0, x * x]]))),
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_tuple_or_list_of_traced_values_is_their_stack(name, ours, theirs):
    assert cr.grad(ours)(1.5) == pytest.approx(float(jax.grad(theirs)(1.5)), rel=1e-13)
    assert cr.grad(cr.grad(ours))(1.5) == pytest.approx(float(jax.grad(jax.grad(theirs))(1.5)),
                                                        rel=1e-12, abs=1e-14)
