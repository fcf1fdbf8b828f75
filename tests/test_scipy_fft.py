"""chainrule.scipy.fft: dct, idct, dctn and idctn (type 2), against SciPy's values for
every norm, axis and length (float32 and complex inputs kept as SciPy keeps them),
and against jax.scipy.fft's first and second derivatives in both modes, under vmap
and jit.
"""

import jax
import jax.numpy as jnp
import jax.scipy.fft as jfft
import numpy as np
import pytest
import scipy.fft as sfft

import chainrule as cr
import chainrule.scipy.fft as cfft
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

NORMS = [None, "backward", "ortho", "forward"]
JAX_NORMS = [None, "ortho"]  # (what jax.scipy.fft's dct takes)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["dct", "idct"])
def test_values_are_scipys_along_each_axis_at_each_length(name, norm):
    x = seeded("dct values", name, norm).standard_normal((3, 7, 4))
    for axis in (0, 1, -1):
        for n in (None, 1, 3, 9):
            ours = getattr(cfft, name)(x, n=n, axis=axis, norm=norm)
            assert type(ours) is np.ndarray
            want = getattr(sfft, name)(x, n=n, axis=axis, norm=norm)
            np.testing.assert_allclose(ours, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_the_n_dimensional_ones_are_scipys(name, norm):
    x = seeded("dctn values", name, norm).standard_normal((3, 5, 4))
    for s, axes in [(None, None), (None, (0, 2)), ((4, 2), (0, 2)), ((6,), None),
                    (None, 1)]:
        ours = getattr(cfft, name)(x, s=s, axes=axes, norm=norm)
        want = getattr(sfft, name)(x, s=s, axes=axes, norm=norm)
        np.testing.assert_allclose(ours, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.complex128])
def test_float32_and_complex_inputs_are_kept_as_scipy_keeps_them(dtype):
    rng = seeded("dct dtypes", np.dtype(dtype).name)
    x = rng.standard_normal(6).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(6).astype(dtype)
    for name in ("dct", "idct"):
        ours, want = getattr(cfft, name)(x, norm="ortho"), getattr(sfft, name)(x, norm="ortho")
        assert ours.dtype == want.dtype
        tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-13
        np.testing.assert_allclose(ours, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", NORMS)
def test_idct_undoes_dct(norm):
    x = seeded("dct round trip", norm).standard_normal((4, 6))
    np.testing.assert_allclose(cfft.idct(cfft.dct(x, norm=norm), norm=norm), x, atol=1e-13)
    np.testing.assert_allclose(cfft.idctn(cfft.dctn(x, norm=norm), norm=norm), x,
                               atol=1e-13)


@pytest.mark.parametrize("norm", JAX_NORMS)
@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_derivatives_match_jax_to_second_order(name, norm):
    rng = seeded("dct derivatives", name, norm)
    x, w = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    keywords = {"axis": 0} if name in ("dct", "idct") else {"axes": (0, 1)}

    def ours(x):
        return cr.sum(w * cr.sin(getattr(cfft, name)(x, norm=norm, **keywords)))

    def theirs(x):
        return jnp.sum(w * jnp.sin(getattr(jfft, name)(x, norm=norm, **keywords)))

    want = jax.jit(jax.grad(theirs))(x)
    np.testing.assert_allclose(cr.grad(ours)(x), want, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(cr.jacfwd(ours)(x), want, rtol=1e-11, atol=1e-12)
    want = jax.jit(jax.hessian(theirs))(x)
    np.testing.assert_allclose(cr.hessian(ours)(x), want, rtol=1e-10, atol=1e-11)


def test_under_vmap_and_jit():
    rng = seeded("dct transforms")
    xs = rng.standard_normal((4, 6))
    mapped = cr.vmap(lambda x: cfft.dct(x, norm="ortho"))(xs)
    np.testing.assert_allclose(mapped, sfft.dct(xs, axis=-1, norm="ortho"), atol=1e-13)
    loss = lambda x: cr.sum(cfft.idct(x) ** 3)
    jitted = cr.jit(cr.grad(loss))
    for x in xs:  # traced at the first
        np.testing.assert_allclose(jitted(x), cr.grad(loss)(x), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(loss))(xs),
                               np.stack([cr.grad(loss)(x) for x in xs]), rtol=1e-12)


def test_bad_input_is_named():
    x = np.ones(4)
    with pytest.raises(ValueError, match=r"dct: only type 2 .* got type=1"):
        cfft.dct(x, type=1)
    with pytest.raises(ValueError, match=r"idct: norm must be .* got 'half'"):
        cfft.idct(x, norm="half")
    with pytest.raises(ValueError, match=r"dct: n must be a positive integer, got 0"):
        cfft.dct(x, n=0)
    with pytest.raises(ValueError, match=r"dct: axis 2 is out of range .* shape \(4,\)"):
        cfft.dct(x, axis=2)
    with pytest.raises(ValueError, match=r"dctn: s and axes must have the same length"):
        cfft.dctn(np.ones((2, 2)), s=(2,), axes=(0, 1))
