"""chainrule.numpy: NumPy's namespace with chainrule's differentiable functions, so code
written for autograd.numpy or jax.numpy ports by changing its import."""

import inspect

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.primitive import Primitive

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def kind_of(obj):
    """How a public function of chainrule.numpy gets its derivative."""
    if isinstance(obj, Primitive):
        return "rule"
    module = inspect.getmodule(obj).__name__
    if module == "chainrule.rules.predicates":
        return "no derivative"  # tests and indices: plain NumPy results
    if module.startswith("chainrule.rules") or module == "chainrule.api.numpy":
        return "composed"
    return module


@pytest.mark.parametrize("name", cnp.__all__)
def test_every_function_has_a_rule_composes_or_has_no_derivative(name):
    obj = getattr(cnp, name)
    kind = kind_of(obj)
    assert kind in ("rule", "composed", "no derivative"), (name, kind)
    if kind == "rule":  # a rule for every argument it differentiates, in both modes
        assert obj.vjps and set(obj.vjps) == set(obj.jvps), name


def test_the_rest_of_numpy_is_numpys_own():
    assert cnp.pi == np.pi and cnp.float32 is np.float32 and cnp.newaxis is None
    assert cnp.random is np.random
    with pytest.raises(TypeError, match="np.unwrap"):  # no derivative: refused, not cut
        cr.grad(lambda x: cnp.sum(cnp.unwrap(x)))(np.ones(3))
    np.testing.assert_array_equal(cnp.unwrap(np.array([0.0, 7.0])), np.unwrap([0.0, 7.0]))


def _logistic_loss(np_, w, x, y):
    """An autograd-style function: written against a NumPy namespace passed in."""
    z = np_.dot(x, w)
    log_p = -np_.logaddexp(0.0, -z)
    log_not_p = -np_.logaddexp(0.0, z)
    pieces = np_.array([np_.mean(y * log_p), np_.mean((1 - y) * log_not_p)])
    return -np_.sum(pieces) + 0.1 * np_.sum(np_.square(np_.clip(w, -1.0, 1.0)))


def test_a_program_for_jax_numpy_ports_by_changing_the_import():
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal(3), rng.standard_normal((8, 3))
    y = (rng.uniform(size=8) > 0.5).astype(float)
    ours = cr.grad(lambda w: _logistic_loss(cnp, w, x, y))(w)
    theirs = jax.grad(lambda w: _logistic_loss(jnp, w, x, y))(w)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)
    ours_h = cr.hessian(lambda w: _logistic_loss(cnp, w, x, y))(w)
    theirs_h = jax.hessian(lambda w: _logistic_loss(jnp, w, x, y))(w)
    np.testing.assert_allclose(ours_h, np.asarray(theirs_h), rtol=1e-10, atol=1e-14)


def test_array_stacks_traced_values_and_leaves_numbers_plain():
    assert type(cnp.array([1.0, 2.0])) is np.ndarray
    assert cr.grad(lambda x: cnp.sum(cnp.array([x, x * x]) ** 2))(2.0) == 2 * 2 + 4 * 2 ** 3


def test_linalg_is_chainrules_where_it_can_be_and_numpys_otherwise():
    assert cnp.linalg.solve is cr.linalg.solve and cnp.linalg.cholesky is cr.linalg.cholesky
    assert cnp.linalg.eigvals is cr.linalg.eigvals   # (differentiable, as JAX's)
    np.testing.assert_allclose(cnp.linalg.eigvals(np.diag([1.0, 2.0])), [1.0, 2.0])
    np.testing.assert_allclose(cnp.linalg.cond(np.diag([1.0, 2.0])), 2.0)   # NumPy's
    with pytest.raises(TypeError, match="np.linalg.cond"):  # refused, not cut
        cr.grad(lambda x: cnp.linalg.cond(x))(np.eye(2))


@pytest.mark.parametrize("shape, axes", [((5,), None), ((4, 5), None), ((4, 5), 1),
                                         ((3, 4, 6), (0, 2)), ((3, 4, 6), -1)])
def test_fftshift_and_ifftshift_are_numpys_and_differentiable_as_jaxs(shape, axes):
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(shape), rng.standard_normal(shape)
    for ours, plain, theirs in [(cnp.fft.fftshift, np.fft.fftshift, jnp.fft.fftshift),
                                (cnp.fft.ifftshift, np.fft.ifftshift, jnp.fft.ifftshift)]:
        np.testing.assert_array_equal(ours(x, axes), plain(x, axes))
        loss = lambda z, f=ours: cnp.sum(cnp.sin(f(z, axes)) * w)            # noqa: E731
        jax_loss = lambda z, f=theirs: jnp.sum(jnp.sin(f(z, axes)) * w)    # noqa: E731
        np.testing.assert_allclose(cr.grad(loss)(x), jax.grad(jax_loss)(x), rtol=1e-12)
        np.testing.assert_allclose(cr.hessian(loss)(x), jax.hessian(jax_loss)(x),
                                   rtol=1e-12, atol=1e-14)
        assert cr.gradcheck(lambda z, f=ours: f(z, axes) ** 2, x, order=2)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "cumsum", "cumprod", "var", "std"])
def test_a_reductions_dtype_computes_in_that_dtype_as_numpy_does(name):
    """dtype= casts the operand first (as NumPy does); the gradient comes back in x's."""
    data = np.array([[1.5, -2.0, 3.0], [0.5, 1.0, -1.25]])
    x = cr.tensor(data, requires_grad=True)
    for call in (getattr(cnp, name), getattr(np, name)):
        out = call(x, axis=1, dtype=np.float32)
        expected = getattr(np, name)(data, axis=1, dtype=np.float32)
        assert out.dtype == expected.dtype == np.float32
        np.testing.assert_allclose(out.data, expected, rtol=1e-6)
    x.grad = None
    getattr(cnp, name)(x, axis=1, dtype=np.float32).sum().backward()
    assert x.grad.dtype == np.float64
    exact = cr.grad(lambda x: getattr(cnp, name)(x, axis=1).sum())(data)
    np.testing.assert_allclose(x.grad, exact, rtol=1e-6)
    assert cr.vmap(lambda r: getattr(cnp, name)(r, dtype=np.float32))(data).dtype == np.float32
