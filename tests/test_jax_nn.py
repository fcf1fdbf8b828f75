"""chainrule.jax_nn against jax.nn (float64): every function's values, first and second
derivatives at random points and at its kinks, under vmap and jit; the initializers'
shapes, dtypes and distributions (the draws themselves are chainrule's, not JAX's)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.jax_nn as cnn
from chainrule.jax_nn import initializers as cinit
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(4402)

ELEMENTWISE = ["relu", "relu6", "sigmoid", "tanh", "softplus", "sparse_plus",
               "sparse_sigmoid", "soft_sign", "silu", "swish", "mish", "squareplus",
               "log_sigmoid", "leaky_relu", "hard_tanh", "elu", "celu", "selu", "gelu",
               "hard_sigmoid", "hard_silu", "hard_swish", "identity"]
# where a function's formula changes: the derivative there is JAX's choice
KINKS = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])


def close(ours, theirs, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=1e-13)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_an_activation_matches_jax_in_value_and_derivatives(name):
    ours, theirs = getattr(cnn, name), getattr(jax.nn, name)
    x = np.concatenate([RNG.standard_normal(8) * 4, KINKS])
    close(ours(x), theirs(x))
    close(cr.vmap(cr.grad(ours))(x), jax.vmap(jax.grad(theirs))(x))
    close(cr.vmap(cr.grad(cr.grad(ours)))(x), jax.vmap(jax.grad(jax.grad(theirs)))(x))
    close(cr.jit(cr.grad(lambda v: cr.sum(ours(v) ** 2)))(x),
          jax.grad(lambda v: jnp.sum(theirs(v) ** 2))(x))


@pytest.mark.slow
def test_gelu_exact_and_the_keyword_arguments():
    x = RNG.standard_normal(6) * 2
    close(cnn.gelu(x, approximate=False), jax.nn.gelu(x, approximate=False))
    close(cr.grad(lambda v: cr.sum(cnn.gelu(v, approximate=False)))(x),
          jax.grad(lambda v: jnp.sum(jax.nn.gelu(v, approximate=False)))(x))
    for ours, theirs in [(lambda v: cnn.leaky_relu(v, 0.2), lambda v: jax.nn.leaky_relu(v, 0.2)),
                         (lambda v: cnn.elu(v, 0.5), lambda v: jax.nn.elu(v, 0.5)),
                         (lambda v: cnn.celu(v, 2.0), lambda v: jax.nn.celu(v, 2.0))]:
        close(ours(x), theirs(x))
        close(cr.grad(lambda v: cr.sum(ours(v)))(x), jax.grad(lambda v: jnp.sum(theirs(v)))(x))


@pytest.mark.slow
@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax_log_softmax_logsumexp_standardize_glu_along_axes(axis):
    x = RNG.standard_normal((4, 6))
    w = RNG.standard_normal((4, 6))
    for name in ["softmax", "log_softmax", "standardize"]:
        if name == "standardize" and isinstance(axis, tuple):
            continue
        ours = lambda v: getattr(cnn, name)(v, axis=axis)
        theirs = lambda v: getattr(jax.nn, name)(v, axis=axis)
        close(ours(x), theirs(x), rtol=1e-10)
        close(cr.grad(lambda v: cr.sum(ours(v) * w))(x),
              jax.grad(lambda v: jnp.sum(theirs(v) * w))(x), rtol=1e-10)
    close(cnn.logsumexp(x, axis=axis, keepdims=True),
          jax.nn.logsumexp(x, axis=axis, keepdims=True))
    b = np.abs(w) + 0.1
    close(cr.grad(lambda v: cr.sum(cnn.logsumexp(v, axis=axis, b=b)))(x),
          jax.grad(lambda v: jnp.sum(jax.nn.logsumexp(v, axis=axis, b=b)))(x))
    if not isinstance(axis, tuple):
        close(cnn.glu(x, axis=axis), jax.nn.glu(x, axis=axis))
        close(cr.grad(lambda v: cr.sum(cnn.glu(v, axis=axis) * 1.5))(x),
              jax.grad(lambda v: jnp.sum(jax.nn.glu(v, axis=axis) * 1.5))(x))


def test_logsumexp_with_weights_of_either_sign_is_jaxs():
    x = RNG.standard_normal((3, 4))
    b = np.array([[1.0, -2.0, 0.5, 0.0], [-1.0, -1.0, 0.2, 0.3], [2.0, 1.0, 1.0, -0.5]])
    ours, sign = cnn.logsumexp(x, axis=1, b=b, return_sign=True)
    theirs, their_sign = jax.nn.logsumexp(x, axis=1, b=b, return_sign=True)
    close(ours, theirs)
    np.testing.assert_array_equal(sign, their_sign)
    close(cr.grad(lambda v: cr.sum(cnn.logsumexp(v, axis=1, b=b, return_sign=True)[0]))(x),
          jax.grad(lambda v: jnp.sum(jax.nn.logsumexp(v, axis=1, b=b, return_sign=True)[0]))(
              x))


def test_one_hot_as_jax_out_of_range_rows_are_zeros():
    labels = np.array([[0, 2], [5, -1]])
    for axis in (-1, 0, 1):
        ours = cnn.one_hot(labels, 3, axis=axis)
        theirs = jax.nn.one_hot(labels, 3, axis=axis)
        close(ours, theirs)
        assert ours.dtype == theirs.dtype
    assert cnn.one_hot(labels, 3, dtype=np.int32).dtype == np.int32
    close(cr.vmap(lambda i: cnn.one_hot(i, 4))(np.array([3, 1])),
          jax.vmap(lambda i: jax.nn.one_hot(i, 4))(np.array([3, 1])))


def test_bad_arguments_name_the_function():
    with pytest.raises(ValueError, match="glu: axis -1 of x"):
        cnn.glu(np.ones((2, 3)))
    with pytest.raises(ValueError, match="variance_scaling: mode"):
        cinit.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="variance_scaling: can't compute"):
        cinit.he_normal()(cr.random.key(0), (5,))


INITIALIZERS = [("glorot_normal", ()), ("glorot_uniform", ()), ("xavier_normal", ()),
                ("he_normal", ()), ("he_uniform", ()), ("kaiming_uniform", ()),
                ("lecun_normal", ()), ("lecun_uniform", ()), ("normal", (0.5,)),
                ("uniform", (2.0,)), ("truncated_normal", (0.3,)), ("orthogonal", (1.5,))]


@pytest.mark.slow  # (JAX compiles each of its draws: 1 to 4 s apiece)
@pytest.mark.parametrize("name,args", INITIALIZERS)
def test_an_initializer_draws_jaxs_distribution(name, args):
    shape = (3, 3, 40, 60)   # a convolution's HWIO kernel: fans with a receptive field
    ours = getattr(cinit, name)(*args)(cr.random.key(1), shape)
    theirs = np.asarray(getattr(jax.nn.initializers, name)(*args)(jax.random.key(1), shape))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    # 21,600 draws: the moments agree to a few standard errors
    assert abs(ours.mean() - theirs.mean()) < 0.05 * theirs.std() + 1e-3
    assert ours.std() == pytest.approx(theirs.std(), rel=0.03)
    if theirs.min() >= 0:
        assert ours.min() >= 0
    assert abs(ours).max() <= abs(theirs).max() * 1.3 or name in ("normal", "orthogonal")
    # the same key, the same draw
    np.testing.assert_array_equal(ours, getattr(cinit, name)(*args)(cr.random.key(1), shape))


def test_orthogonal_zeros_ones_constant_and_dtypes():
    q = cinit.orthogonal(2.0)(cr.random.key(3), (4, 7))
    close(q @ q.T, 4.0 * np.eye(4), rtol=1e-12)
    q = cinit.orthogonal(column_axis=0)(cr.random.key(3), (5, 2, 3))
    flat = np.moveaxis(q, 0, -1).reshape(-1, 5)
    close(flat.T @ flat, np.eye(5))
    for name in ("zeros", "ones"):
        ours = getattr(cinit, name)(cr.random.key(0), (2, 3), np.float32)
        theirs = getattr(jax.nn.initializers, name)(jax.random.key(0), (2, 3), jnp.float32)
        close(ours, theirs)
        assert ours.dtype == theirs.dtype
    close(cinit.constant(0.25)(cr.random.key(0), (2,)),
          jax.nn.initializers.constant(0.25)(jax.random.key(0), (2,)))
    assert cinit.glorot_normal()(cr.random.key(0), (3, 4), np.float32).dtype == np.float32


def test_float32_stays_float32_and_zeros_are_positive_as_jaxs():
    x = np.array([-2.0, 0.5, 7.0], np.float32)
    for name in ["relu", "relu6", "hard_tanh", "elu", "sparse_plus", "hard_sigmoid", "gelu"]:
        ours, theirs = getattr(cnn, name)(x), getattr(jax.nn, name)(x)
        assert ours.dtype == theirs.dtype == np.float32
        assert np.signbit(ours).tolist() == np.signbit(np.asarray(theirs)).tolist()
