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


# ---------------------------------------------------------------------------------------
# convolve2d and correlate2d (with their boundaries), fftconvolve, detrend
# ---------------------------------------------------------------------------------------

SHAPES_2D = [((4, 5), (3, 2)), ((3, 3), (4, 5)), ((2, 5), (3, 2))]
BOUNDARIES = [("fill", 0.0), ("fill", 1.5), ("wrap", 0.0), ("symm", 0.0)]
FUNCTIONS_2D = [("convolve2d", signal.convolve2d, jss.convolve2d, ss.convolve2d),
                ("correlate2d", signal.correlate2d, jss.correlate2d, ss.correlate2d)]


def _second_order_against_jax(mine, jaxs, args):
    """The gradient in each argument, the Hessian in the first and a jvp in all: JAX's."""
    for argnum in range(len(args)):
        np.testing.assert_allclose(cr.grad(mine, argnums=argnum)(*args),
                                   jax.jit(jax.grad(jaxs, argnums=argnum))(*args), atol=1e-12)
    np.testing.assert_allclose(cr.hessian(mine)(*args), jax.jit(jax.hessian(jaxs))(*args),
                               atol=1e-12)
    ts = tuple(RNG.standard_normal(np.shape(a)) for a in args)
    np.testing.assert_allclose(cr.jvp(mine, args, ts)[1],
                               jax.jit(lambda p, t: jax.jvp(jaxs, p, t)[1])(args, ts),
                               atol=1e-12)


@pytest.mark.parametrize("shapes", SHAPES_2D, ids=str)
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("boundary, fillvalue", BOUNDARIES, ids=str)
@pytest.mark.parametrize("name, ours, theirs, values", FUNCTIONS_2D,
                         ids=[f[0] for f in FUNCTIONS_2D])
def test_2d_convolutions_match_scipy_in_every_boundary_and_jax_where_it_has_one(
        name, ours, theirs, values, boundary, fillvalue, mode, shapes):
    a, v = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    kwargs = dict(mode=mode, boundary=boundary, fillvalue=fillvalue)
    nested = (a.shape[0] >= v.shape[0] and a.shape[1] >= v.shape[1]
              or a.shape[0] <= v.shape[0] and a.shape[1] <= v.shape[1])
    if mode == "valid" and not nested:
        with pytest.raises(ValueError):
            values(a, v, **kwargs)
        with pytest.raises(ValueError, match="at least as large"):
            ours(a, v, **kwargs)
        return
    expected = values(a, v, **kwargs)
    np.testing.assert_allclose(ours(a, v, **kwargs), expected, rtol=1e-12, atol=1e-13)
    w = RNG.standard_normal(np.shape(expected))
    mine = lambda a, v: cr.sum(ours(a, v, **kwargs) ** 2 * w)
    if mode == "valid" or (boundary == "fill" and fillvalue == 0 and nested):
        # (no entry reaches past an edge in valid mode; JAX has no other boundary, and
        # refuses two shapes that do not nest)
        jaxs = lambda a, v: jnp.sum(theirs(a, v, mode=mode) ** 2 * w)
    else:  # the boundary written out: in1 extended, then a full convolution's window
        jaxs = lambda a, v: jnp.sum(_jax_extended(theirs, a, v, **kwargs) ** 2 * w)
        np.testing.assert_allclose(_jax_extended(theirs, a, v, **kwargs), expected,
                                   rtol=1e-12, atol=1e-13)
    _second_order_against_jax(mine, jaxs, (a, v))


def _jax_extended(theirs, a, v, mode, boundary, fillvalue):
    """scipy's boundary in JAX: in1 padded by in2's size less one on every side, as the
    boundary says, then the valid convolution (or correlation), windowed as ``mode``."""
    pad = [(n - 1, n - 1) for n in v.shape]
    if boundary == "fill":
        inside = jnp.pad(jnp.ones(a.shape, bool), pad)  # (JAX's pad does not
        extended = jnp.where(inside, jnp.pad(a, pad), fillvalue)  # differentiate its fill)
    else:
        extended = jnp.pad(a, pad, mode={"wrap": "wrap", "symm": "symmetric"}[boundary])
    full = theirs(extended, v, mode="valid")
    if mode == "full":
        return full
    centre = (1 if theirs is jss.correlate2d else 0)
    starts = [(f - n + centre) // 2 for f, n in zip(full.shape, a.shape)]
    return full[starts[0]:starts[0] + a.shape[0], starts[1]:starts[1] + a.shape[1]]


@pytest.mark.parametrize("shapes, axes", [(((3, 7), (3, 2)), 1), (((3, 7), (1, 2)), -1),
                                          (((2, 4, 5), (2, 2, 3)), (1, 2)),
                                          (((4, 5), (2, 3)), None), (((2, 5), (3, 5)), 0)],
                         ids=str)
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_fftconvolve_over_some_axes_matches_scipy_and_jax(shapes, axes, mode):
    a, v = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    expected = ss.fftconvolve(a, v, mode=mode, axes=axes)
    np.testing.assert_allclose(signal.fftconvolve(a, v, mode=mode, axes=axes), expected,
                               rtol=1e-10, atol=1e-12)
    w = RNG.standard_normal(expected.shape)
    _second_order_against_jax(
        lambda a, v: cr.sum(signal.fftconvolve(a, v, mode=mode, axes=axes) ** 2 * w),
        lambda a, v: jnp.sum(jss.fftconvolve(a, _broadcast_off(v, a, axes), mode=mode,
                                             axes=axes) ** 2 * w), (a, v))


def _broadcast_off(v, a, axes):
    """v broadcast to a's sizes along the axes not convolved (JAX's fftconvolve wants
    them equal, where SciPy's broadcasts a size 1)."""
    if axes is None:
        return v
    kept = {ax % a.ndim for ax in np.atleast_1d(axes)}
    return jnp.broadcast_to(v, [v.shape[k] if k in kept else a.shape[k]
                                for k in range(a.ndim)])


@pytest.mark.parametrize("axis, bp", [(-1, 0), (1, [3]), (1, [2, 6]), (0, [2]), (0, [0, 5])],
                         ids=str)
@pytest.mark.parametrize("kind", ["linear", "constant"])
def test_detrend_matches_scipy_and_jax(kind, axis, bp):
    x = RNG.standard_normal((5, 9))
    expected = ss.detrend(x, axis=axis, type=kind, bp=bp)
    np.testing.assert_allclose(signal.detrend(x, axis=axis, type=kind, bp=bp), expected,
                               rtol=1e-11, atol=1e-12)
    w = RNG.standard_normal(x.shape)
    _second_order_against_jax(
        lambda x: cr.sum(signal.detrend(x, axis=axis, type=kind, bp=bp) ** 2 * w),
        lambda x: jnp.sum(jss.detrend(x, axis=axis, type=kind, bp=bp) ** 2 * w), (x,))


def test_the_2d_convolutions_fftconvolve_and_detrend_run_under_vmap_and_jit():
    a, v = RNG.standard_normal((3, 4, 5)), RNG.standard_normal((2, 2))
    for f in (lambda a: signal.convolve2d(a, v, boundary="wrap", mode="same"),
              lambda a: signal.correlate2d(a, v, fillvalue=2.0),
              lambda a: signal.fftconvolve(a, v, axes=(0, 1)),
              lambda a: signal.detrend(a, axis=0, bp=[2])):
        expected = np.stack([f(x) for x in a])
        np.testing.assert_allclose(cr.vmap(f)(a), expected, atol=1e-12)
        np.testing.assert_allclose(cr.jit(cr.vmap(f))(a), expected, atol=1e-12)
        loss = lambda a: cr.sum(cr.vmap(f)(a) ** 2)
        np.testing.assert_allclose(cr.jit(cr.grad(loss))(a), cr.grad(loss)(a), atol=1e-12)


@pytest.mark.parametrize("name, ours, theirs, values", FUNCTIONS_2D,
                         ids=[f[0] for f in FUNCTIONS_2D])
def test_the_fill_value_is_differentiated_at_zero_too(name, ours, theirs, values):
    a, v = RNG.standard_normal((4, 5)), RNG.standard_normal((3, 2))
    w = RNG.standard_normal(values(a, v).shape)
    for c in (0.0, 1.5):
        mine = lambda c: cr.sum(ours(a, v, fillvalue=c) ** 2 * w)
        jaxs = lambda c: jnp.sum(_jax_extended(theirs, a, v, "full", "fill", c) ** 2 * w)
        np.testing.assert_allclose(cr.grad(mine)(c), jax.jit(jax.grad(jaxs))(c), rtol=1e-11)
        np.testing.assert_allclose(cr.hessian(mine)(c), jax.jit(jax.hessian(jaxs))(c),
                                   rtol=1e-11)
        assert cr.grad(mine)(c) != 0


def test_float32_stays_float32_as_in_scipy():
    a, v = RNG.standard_normal((4, 5)).astype(np.float32), np.ones((2, 3), np.float32)
    for ours, scipys in [(signal.detrend(a, bp=[2]), ss.detrend(a, bp=[2])),
                         (signal.detrend(a, type="constant"), ss.detrend(a, type="constant")),
                         (signal.convolve2d(a, v, boundary="symm"),
                          ss.convolve2d(a, v, boundary="symm")),
                         (signal.correlate2d(a, v, fillvalue=1.5),
                          ss.correlate2d(a, v, fillvalue=1.5)),
                         (signal.fftconvolve(a, v[:1], axes=1), ss.fftconvolve(a, v[:1], axes=1))]:
        assert np.asarray(ours).dtype == scipys.dtype == np.float32
        np.testing.assert_allclose(ours, scipys, rtol=1e-5, atol=1e-5)


def test_bad_boundaries_types_and_breakpoints_are_refused_in_one_line():
    with pytest.raises(ValueError, match="convolve2d: mode must be 'full', 'valid' or 'same'"):
        signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), mode="wrap")
    with pytest.raises(ValueError, match="boundary must be 'fill', 'wrap' or 'symm'"):
        signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect")
    with pytest.raises(ValueError, match="must be 2-d"):
        signal.convolve2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="type must be 'linear' or 'constant'"):
        signal.detrend(np.ones(4), type="quadratic")
    with pytest.raises(ValueError, match=r"breakpoints must lie in \[0, 4\]"):
        signal.detrend(np.ones(4), bp=[7])
    with pytest.raises(ValueError, match="sizes must match or be 1"):
        signal.fftconvolve(np.ones((2, 3)), np.ones((3, 3)), axes=1)
