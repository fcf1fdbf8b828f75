"""chainrule.lax's ``fft`` (with ``FftType``), ``approx_max_k``/``approx_min_k``,
``bitcast_convert_type``, ``igamma_grad_a`` and ``random_gamma_grad`` against jax.lax's
(float64): the same values and dtypes, and where JAX differentiates, the same
gradients, directional derivatives and Hessians; under vmap and cr.jit too."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as J

import chainrule as cr
from chainrule import lax as C
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)


def _same(ours, theirs, rtol=1e-11, atol=1e-12):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


# (kind, lengths, the input's shape): each kind over one, two and three axes
FFTS = [(kind, lengths, shape)
        for kind in ("FFT", "IFFT", "RFFT", "IRFFT")
        for lengths, shape in (((6,), (2, 6)), ((3, 4), (2, 3, 4)), ((2, 3, 4), (2, 3, 4)))]


def _fft_input(kind, lengths, shape, name):
    rng = seeded("lax.fft", name)
    if kind == "IRFFT":  # a half spectrum, made by JAX's own RFFT of a real signal
        return np.asarray(J.fft(rng.standard_normal(shape), "RFFT", lengths))
    if kind in ("FFT", "IFFT"):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("kind,lengths,shape", FFTS, ids=[f"{k}-{len(n)}d" for k, n, _ in FFTS])
def test_fft_values_and_derivatives_equal_jax(kind, lengths, shape):
    x = _fft_input(kind, lengths, shape, f"{kind}{lengths}")
    for fft_type in (kind, kind.lower(), getattr(C.FftType, kind)):
        _same(C.fft(x, fft_type, lengths), J.fft(x, kind, lengths))
    weights = seeded("lax.fft", kind, "weights").standard_normal(
        np.shape(J.fft(x, kind, lengths)))

    def loss(L, N):
        return lambda v: N.sum(N.abs(L.fft(v, kind, lengths)) ** 2 * weights)
    _same(cr.grad(loss(C, cr))(x), jax.grad(loss(J, jnp))(x), rtol=1e-10)
    if np.iscomplexobj(x):  # (the transforms of complex inputs: test_complex* files)
        return
    t = seeded("lax.fft", kind, "tangent").standard_normal(shape)
    _same(cr.jvp(loss(C, cr), (x,), (t,))[1], jax.jvp(loss(J, jnp), (x,), (t,))[1], rtol=1e-10)
    if len(lengths) == 1:
        _same(cr.hessian(loss(C, cr))(x), jax.hessian(loss(J, jnp))(x), rtol=1e-9, atol=1e-10)
    batch = np.stack([x, 2 * x])
    _same(cr.vmap(cr.grad(loss(C, cr)))(batch), jax.vmap(jax.grad(loss(J, jnp)))(batch),
          rtol=1e-10)
    jitted = cr.jit(cr.grad(loss(C, cr)))
    for v in (x, x + 1.0):
        _same(jitted(v), jax.grad(loss(J, jnp))(v), rtol=1e-10)


def test_fft_refuses_lengths_that_are_not_the_inputs_in_one_line():
    for call, message in [(lambda: C.fft(np.ones((2, 6)), "FFT", (5,)), r"expects the input's last axes to be \(5,\)"),
                          (lambda: C.fft(np.ones((2, 4)), "IRFFT", (4,)), r"expects the input's last axes to be \(3,\)"),
                          (lambda: C.fft(np.ones(4), "DCT", (4,)), "fft_type 'DCT'"),
                          (lambda: C.fft(np.ones(4), "FFT", ()), "0 fft_lengths")]:
        with pytest.raises(ValueError, match=message) as info:
            call()
        assert "\n" not in str(info.value)


CASES_K = list(itertools.product(["approx_max_k", "approx_min_k"], [-1, 0, 1],
                                 ["float64", "float32"]))


@pytest.mark.parametrize("name,dimension,dtype", CASES_K)
def test_approx_max_k_and_min_k_are_jaxs_exact_top_k_on_a_cpu(name, dimension, dtype):
    rng = seeded("lax.approx", name, str(dimension), dtype)
    x = rng.standard_normal((4, 5, 6)).astype(dtype)  # (JAX's take floats only)
    ours, theirs = getattr(C, name)(x, 3, reduction_dimension=dimension), \
        getattr(J, name)(x, 3, reduction_dimension=dimension)
    for o, t in zip(ours, theirs):
        _same(o, t)
    if dtype == "float64":
        weights = rng.standard_normal(np.shape(theirs[0]))

        def loss(L, N):
            return lambda v: N.sum(getattr(L, name)(v, 3, reduction_dimension=dimension)[0]
                                   ** 2 * weights)
        _same(cr.grad(loss(C, cr))(x), jax.grad(loss(J, jnp))(x))
        _same(cr.jit(cr.grad(loss(C, cr)))(x), jax.grad(loss(J, jnp))(x))
        batch = np.stack([x, -x])
        _same(cr.vmap(cr.grad(loss(C, cr)))(batch), jax.vmap(jax.grad(loss(J, jnp)))(batch))


def test_approx_k_without_aggregating_refuses_in_one_line():
    """JAX's unaggregated result is XLA's candidate list (256 of 3000 entries for k = 5),
    a length its algorithm picks: refused rather than guessed."""
    for name in ("approx_max_k", "approx_min_k"):
        with pytest.raises(ValueError, match=f"lax.{name}: aggregate_to_topk=False") as info:
            getattr(C, name)(np.ones((2, 6)), 2, aggregate_to_topk=False)
        assert "\n" not in str(info.value)


BITCASTS = [("float32", "int32", ()), ("float64", "uint8", (3,)), ("int16", "float32", (4, 2)),
            ("uint32", "float32", (5,)), ("float64", "int64", (2, 3)), ("int8", "uint8", (4,)),
            ("float32", "uint16", (3,)), ("uint8", "float64", (2, 8))]


@pytest.mark.parametrize("source,target,shape", BITCASTS,
                         ids=[f"{s}-{t}" for s, t, _ in BITCASTS])
def test_bitcast_convert_type_reads_the_same_bits_as_jax(source, target, shape):
    rng = seeded("lax.bitcast", source, target)
    x = (rng.standard_normal(shape) * 100).astype(source)
    _same(C.bitcast_convert_type(x, target), J.bitcast_convert_type(x, target), rtol=0, atol=0)
    _same(cr.jit(lambda v: C.bitcast_convert_type(v, target))(x),
          J.bitcast_convert_type(x, target), rtol=0, atol=0)
    if shape:
        batch = np.stack([x, x[::-1]])
        _same(cr.vmap(lambda v: C.bitcast_convert_type(v, target))(batch),
              jax.vmap(lambda v: J.bitcast_convert_type(v, target))(batch), rtol=0, atol=0)


def test_bitcast_convert_type_has_no_derivative_and_refuses_a_wrong_last_axis():
    with pytest.raises(TypeError, match="bitcast_convert_type: argument 0 is being differentiated"):
        cr.grad(lambda v: cr.sum(C.bitcast_convert_type(v, np.int64)))(np.ones(2))
    with pytest.raises(ValueError, match="the last axis must have 4; got shape") as info:
        C.bitcast_convert_type(np.ones((2, 3), np.uint8), np.float32)
    assert "\n" not in str(info.value)


def test_igamma_grad_a_and_random_gamma_grad_equal_jax_eagerly_under_jit_and_vmap():
    rng = seeded("lax.igamma_grad_a")
    a, x = rng.uniform(0.3, 6.0, (3, 4)), rng.uniform(0.05, 8.0, (3, 4))
    for name in ("igamma_grad_a", "random_gamma_grad"):
        want = getattr(J, name)(a, x)
        _same(getattr(C, name)(a, x), want, rtol=1e-9)
        _same(cr.jit(getattr(C, name))(a, x), want, rtol=1e-9)
        _same(cr.vmap(getattr(C, name))(a, x), jax.vmap(getattr(J, name))(a, x), rtol=1e-9)
    # random_gamma_grad is d sample / d a: JAX's jax.random.gamma differentiates with it
    key = jax.random.key(0)
    shapes = np.array([0.7, 2.5, 5.0])
    samples = np.asarray(jax.random.gamma(key, shapes))
    _same(C.random_gamma_grad(shapes, samples),
          jax.jacfwd(lambda s: jax.random.gamma(key, s))(shapes).diagonal(), rtol=1e-8)
