"""Every operation that takes an axis, under ``cr.vmap``, with axes of both signs,
against ``jax.vmap`` (float64).

A batching rule moves an example's axis past the batch's; the operation's derivative
rules address axes from the end (they also run behind the leading axes of a stack of
seeds). Both conventions meet here: each operation is mapped over the examples' first
and last axes, its axis given counted from the front and from the end, and checked for
its value, the gradient of the mapped function (``grad(vmap(f))``), per-example
gradients (``vmap(grad(f))``), and a JVP through the map.
"""

import zlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

EXAMPLE = (3, 4, 2)  # one example's shape: every axis has its own length


def along(name, **kwargs):
    """``name`` from chainrule.numpy and from jax.numpy, with the same arguments."""
    def pick(namespace):
        function = namespace
        for part in name.split("."):
            function = getattr(function, part)
        return lambda x: function(x, **kwargs)
    return pick(cnp), pick(jnp)


def both(mine, theirs):
    return mine, theirs


OPERATIONS = {}
for axis in (0, 2, -1, -2):  # the first and last axes, from the front and from the end
    for name in ("sum", "mean", "max", "min", "prod", "cumsum", "cumprod", "flip", "sort",
                 "diff", "var", "std", "median", "linalg.norm", "fft.fft",
                 "fft.rfft"):
        OPERATIONS[f"{name}(axis={axis})"] = along(name, axis=axis)
    for name in ("sum", "max", "logsumexp"):
        OPERATIONS[f"{name}(axis={axis}, keepdims)"] = (
            (lambda f, a: lambda x: f(x, axis=a, keepdims=True))(
                cr.logsumexp if name == "logsumexp" else getattr(cnp, name), axis),
            (lambda f, a: lambda x: f(x, axis=a, keepdims=True))(
                jax.scipy.special.logsumexp if name == "logsumexp" else getattr(jnp, name),
                axis))
    OPERATIONS[f"softmax(axis={axis})"] = both(lambda x, a=axis: cr.softmax(x, axis=a),
                                               lambda x, a=axis: jax.nn.softmax(x, axis=a))
    OPERATIONS[f"log_softmax(axis={axis})"] = both(
        lambda x, a=axis: cr.log_softmax(x, axis=a),
        lambda x, a=axis: jax.nn.log_softmax(x, axis=a))
    OPERATIONS[f"roll(1, axis={axis})"] = along("roll", shift=1, axis=axis)
    OPERATIONS[f"expand_dims(axis={axis})"] = along("expand_dims", axis=axis)
    OPERATIONS[f"concatenate(axis={axis})"] = both(
        lambda x, a=axis: cnp.concatenate([x, 2 * x], axis=a),
        lambda x, a=axis: jnp.concatenate([x, 2 * x], axis=a))
    OPERATIONS[f"stack(axis={axis})"] = both(
        lambda x, a=axis: cnp.stack([x, x * x], axis=a),
        lambda x, a=axis: jnp.stack([x, x * x], axis=a))
    OPERATIONS[f"take_along_axis(axis={axis})"] = both(
        lambda x, a=axis: cnp.take_along_axis(x, np.argsort(np.ones(EXAMPLE), axis=a),
                                              axis=a),
        lambda x, a=axis: jnp.take_along_axis(x, np.argsort(np.ones(EXAMPLE), axis=a),
                                              axis=a))
    OPERATIONS[f"moveaxis({axis}, 0)"] = along("moveaxis", source=axis, destination=0)
    OPERATIONS[f"split(axis={axis})"] = both(
        lambda x, a=axis: cnp.split(x, [1], axis=a)[1],
        lambda x, a=axis: jnp.split(x, [1], axis=a)[1])
for a1, a2 in ((0, 1), (-1, 0), (2, -3), (-2, -1)):
    OPERATIONS[f"swapaxes({a1}, {a2})"] = along("swapaxes", axis1=a1, axis2=a2)
for axes in ((0, 1), (-1, 0), (0, -1, 1), (2, 0, 1), (-3, -1)):
    if len(axes) == 3:
        OPERATIONS[f"transpose{axes}"] = along("transpose", axes=axes)
    OPERATIONS[f"sum(axis={axes})"] = along("sum", axis=axes[:2])
for order in ("C", "F"):
    OPERATIONS[f"reshape(4, 6, order={order})"] = both(
        lambda x, o=order: cnp.reshape(x, (4, 6), order=o),
        lambda x, o=order: jnp.reshape(x, (4, 6), order=o))
OPERATIONS["squeeze(axis=-2)"] = both(lambda x: cnp.squeeze(x[:, :1], axis=-2),
                                      lambda x: jnp.squeeze(x[:, :1], axis=-2))
OPERATIONS["squeeze(axis=1)"] = both(lambda x: cnp.squeeze(x[:, :1], axis=1),
                                     lambda x: jnp.squeeze(x[:, :1], axis=1))
OPERATIONS["trace(axis1=2, axis2=0)"] = along("trace", axis1=2, axis2=0)
OPERATIONS["diagonal(axis1=-1, axis2=0)"] = along("diagonal", axis1=-1, axis2=0)


def batch(name, in_axis):
    """Three examples, stacked along ``in_axis``, with the examples' entries distinct."""
    rng = np.random.default_rng(zlib.crc32(f"{name}/{in_axis}".encode()))
    examples = rng.uniform(0.5, 1.5, (3,) + EXAMPLE) * rng.choice([-1.0, 1.0], (3,) + EXAMPLE)
    return np.moveaxis(examples, 0, in_axis), rng


def close(mine, theirs):
    mine, theirs = np.asarray(getattr(mine, "data", mine)), np.asarray(theirs)
    assert mine.shape == theirs.shape, (mine.shape, theirs.shape)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("in_axis", [0, pytest.param(-1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", OPERATIONS)
def test_value_and_derivatives_through_the_map(name, in_axis):
    mine, theirs = OPERATIONS[name]
    xs, rng = batch(name, in_axis)
    out = jax.jit(jax.vmap(theirs, in_axis))(xs)
    close(cr.vmap(mine, in_axis)(xs), out)
    w = rng.standard_normal(np.shape(out))
    # (the real part: a loss of an FFT's complex values)
    close(cr.grad(lambda xs: cr.real(cr.sum(cr.vmap(mine, in_axis)(xs) * w)))(xs),
          jax.jit(jax.grad(lambda xs: jnp.real(jnp.sum(jax.vmap(theirs, in_axis)(xs) * w))))(xs))
    w0 = w[0]
    close(cr.vmap(cr.grad(lambda x: cr.real(cr.sum(cr.sin(mine(x)) * w0))), in_axis)(xs),
          jax.jit(jax.vmap(jax.grad(lambda x: jnp.real(jnp.sum(jnp.sin(theirs(x)) * w0))),
                           in_axis))(xs))
    t = rng.standard_normal(xs.shape)
    close(cr.jvp(cr.vmap(mine, in_axis), (xs,), (t,))[1],
          jax.jit(lambda xs, t: jax.jvp(jax.vmap(theirs, in_axis), (xs,), (t,))[1])(xs, t))
