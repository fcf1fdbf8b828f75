"""chainrule.scipy.special's further functions (scipy/special_more.py) against SciPy's
values and jax.scipy.special's derivatives (float64): first and second order, reverse
and forward mode, as tests/test_scipy_special.py checks the others."""

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special as sp

import chainrule as cr
import chainrule.scipy.special as sps
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(17)


def draw(low, high, shape=(5,)):
    return RNG.uniform(low, high, shape)


# (name, chainrule's, JAX's, SciPy's, domain)
UNARY = [
    ("dawsn", sps.dawsn, jsp.dawsn, sp.dawsn, (-3.0, 3.0)),
    ("erfcx", sps.erfcx, jsp.erfcx, sp.erfcx, (-2.0, 5.0)),
    ("fresnel S", lambda x: sps.fresnel(x)[0], lambda x: jsp.fresnel(x)[0],
     lambda x: sp.fresnel(x)[0], (-2.0, 2.0)),
    ("fresnel C", lambda x: sps.fresnel(x)[1], lambda x: jsp.fresnel(x)[1],
     lambda x: sp.fresnel(x)[1], (-2.0, 2.0)),
    ("sici Si", lambda x: sps.sici(x)[0], lambda x: jsp.sici(x)[0], lambda x: sp.sici(x)[0],
     (-4.0, 4.0)),
    ("sici Ci", lambda x: sps.sici(x)[1], lambda x: jsp.sici(x)[1], lambda x: sp.sici(x)[1],
     (0.2, 4.0)),
    ("loggamma", sps.loggamma, jsp.loggamma, sp.loggamma, (0.3, 6.0)),
    ("factorial", sps.factorial, jsp.factorial, sp.factorial, (0.0, 5.0)),
    ("bessel_jn(v=3)", lambda z: sps.bessel_jn(z, v=3) * np.arange(1.0, 5.0)[:, None],
     lambda z: jsp.bessel_jn(z, v=3) * jnp.arange(1.0, 5.0)[:, None],
     lambda z: np.stack([sp.jv(k, z) for k in range(4)]) * np.arange(1.0, 5.0)[:, None],
     (0.5, 5.0)),
]

BINARY = [
    ("owens_t", sps.owens_t, jsp.owens_t, sp.owens_t, (-2.0, 2.0), (-2.0, 2.0)),
    ("comb", sps.comb, jsp.comb, sp.comb, (6.0, 9.0), (0.5, 5.5)),
    ("comb(repetition)", lambda n, k: sps.comb(n, k, repetition=True),
     lambda n, k: jsp.comb(n, k, repetition=True),
     lambda n, k: sp.comb(n + k - 1, k), (1.0, 4.0), (0.5, 3.0)),
    ("boxcox", sps.boxcox, jsp.boxcox, sp.boxcox, (0.2, 4.0), (-1.5, 1.5)),
    ("boxcox1p", sps.boxcox1p, jsp.boxcox1p, sp.boxcox1p, (-0.5, 3.0), (-1.5, 1.5)),
]


def scalar(f):
    return lambda *args: cr.sum(f(*args))


def jax_scalar(f):
    return lambda *args: jnp.sum(f(*args))


@pytest.mark.parametrize("name, ours, theirs, scipys, domain", UNARY, ids=[c[0] for c in UNARY])
def test_a_function_of_one_argument_matches_scipy_and_jax_to_second_order(name, ours, theirs,
                                                                          scipys, domain):
    x = draw(*domain)
    np.testing.assert_allclose(ours(x), scipys(x), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ours(x), theirs(jnp.asarray(x)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.grad(scalar(ours))(x), jax.grad(jax_scalar(theirs))(x),
                               rtol=1e-9, atol=1e-12)
    jax_hessian = jax.hessian(jax_scalar(theirs))(x)
    np.testing.assert_allclose(cr.hessian(scalar(ours))(x), jax_hessian, rtol=1e-8,
                               atol=1e-11)
    v = RNG.standard_normal(x.shape)
    np.testing.assert_allclose(cr.jvp(ours, (x,), (v,))[1], jax.jvp(theirs, (x,), (v,))[1],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.jacfwd(cr.grad(scalar(ours)))(x), jax_hessian, rtol=1e-8,
                               atol=1e-11)


@pytest.mark.parametrize("name, ours, theirs, scipys, first, second", BINARY,
                         ids=[c[0] for c in BINARY])
def test_a_function_of_two_arguments_matches_scipy_and_jax_in_both(name, ours, theirs, scipys,
                                                                   first, second):
    a, b = draw(*first), draw(*second)
    np.testing.assert_allclose(ours(a, b), scipys(a, b), rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(ours(a, b), theirs(a, b), rtol=1e-11, atol=1e-14)
    for argnum in (0, 1):
        np.testing.assert_allclose(cr.grad(scalar(ours), argnums=argnum)(a, b),
                                   jax.grad(jax_scalar(theirs), argnums=argnum)(a, b),
                                   rtol=1e-9, atol=1e-12, err_msg=f"argument {argnum}")
        np.testing.assert_allclose(cr.hessian(scalar(ours), argnums=argnum)(a, b),
                                   jax.hessian(jax_scalar(theirs), argnums=argnum)(a, b),
                                   rtol=1e-8, atol=1e-11, err_msg=f"argument {argnum}")
        v = RNG.standard_normal(a.shape)
        args, jargs = [a, b], [a, b]

        def ours_in(t, argnum=argnum):
            full = list(args)
            full[argnum] = t
            return ours(*full)

        def theirs_in(t, argnum=argnum):
            full = list(jargs)
            full[argnum] = t
            return theirs(*full)
        at = (a, b)[argnum]
        np.testing.assert_allclose(cr.jvp(ours_in, (at,), (v,))[1],
                                   jax.jvp(theirs_in, (at,), (v,))[1], rtol=1e-9, atol=1e-12)
    # the mixed second derivative, reverse over reverse
    mixed = cr.jacrev(cr.grad(scalar(ours), argnums=0), argnums=1)(a, b)
    jax_mixed = jax.jacrev(jax.grad(jax_scalar(theirs), argnums=0), argnums=1)(a, b)
    np.testing.assert_allclose(mixed, jax_mixed, rtol=1e-8, atol=1e-11)


def test_boxcox_is_smooth_in_lambda_through_zero_where_jax_gives_zero():
    x = draw(0.3, 4.0)
    lx = np.log(x)
    np.testing.assert_allclose(sps.boxcox(x, 0.0), lx, rtol=1e-15)
    np.testing.assert_allclose(sps.boxcox1p(x - 1.0, 0.0), lx, rtol=1e-12)
    # d/dl of (x**l - 1) / l at 0 is log(x)**2 / 2, the second log(x)**3 / 3
    for l0 in (0.0, 1e-5, -3e-4):
        np.testing.assert_allclose(cr.grad(scalar(lambda l: sps.boxcox(x, l)))(l0),
                                   np.sum(lx ** 2 / 2 + l0 * lx ** 3 / 3), rtol=1e-6)
        np.testing.assert_allclose(cr.hessian(scalar(lambda l: sps.boxcox(x, l)))(l0),
                                   np.sum(lx ** 3 / 3 + l0 * lx ** 4 / 4), rtol=1e-5)
    # and away from 0 the value still matches SciPy on either side of the switch
    for l0 in (0.9e-3 / 1.4, 1.1e-3 / 1.4):
        np.testing.assert_allclose(sps.boxcox(4.0, l0), sp.boxcox(4.0, l0), rtol=1e-13)
    assert float(sps.boxcox(0.0, 0.5)) == sp.boxcox(0.0, 0.5) == -2.0


def test_comb_and_factorial_are_zero_off_their_domain_with_zero_gradient():
    np.testing.assert_array_equal(sps.comb(np.array([3.0, -1.0, 4.0]),
                                           np.array([4.0, 1.0, -1.0])), [0.0, 0.0, 0.0])
    assert cr.grad(lambda k: sps.comb(3.0, k))(4.0) == 0.0
    assert float(sps.factorial(-1.5)) == 0.0 and cr.grad(sps.factorial)(-1.5) == 0.0
    with pytest.raises(ValueError, match="factorial: exact=True"):
        sps.factorial(3.0, exact=True)


def test_bernoulli_numbers_are_the_exact_fractions_rounded():
    exact = [Fraction(1), Fraction(-1, 2), Fraction(1, 6), Fraction(0), Fraction(-1, 30),
             Fraction(0), Fraction(1, 42), Fraction(0), Fraction(-1, 30), Fraction(0),
             Fraction(5, 66), Fraction(0), Fraction(-691, 2730), Fraction(0), Fraction(7, 6)]
    np.testing.assert_array_equal(sps.bernoulli(14), [float(b) for b in exact])
    np.testing.assert_allclose(sps.bernoulli(30), sp.bernoulli(30), rtol=1e-10, atol=1e-12)
    assert sps.bernoulli(0).tolist() == [1.0]
    with pytest.raises(ValueError, match="bernoulli: n must be a nonnegative integer"):
        sps.bernoulli(-1)


def test_under_jit_and_vmap_they_compute_what_they_compute_eagerly():
    x = draw(0.5, 3.0)
    for f in (sps.dawsn, sps.erfcx, lambda x: sps.sici(x)[1], lambda x: sps.fresnel(x)[0],
              sps.loggamma, sps.factorial, lambda x: sps.boxcox(x, 0.3),
              lambda x: sps.owens_t(x, 0.7), lambda x: sps.comb(7.0, x),
              lambda x: sps.bessel_jn(x, v=2)):
        np.testing.assert_allclose(cr.jit(f)(x), f(x), rtol=1e-14)
        np.testing.assert_allclose(cr.jit(cr.grad(scalar(f)))(x), cr.grad(scalar(f))(x),
                                   rtol=1e-13)
        np.testing.assert_allclose(cr.vmap(f, out_axes=-1)(x), f(x), rtol=1e-14)


def test_owens_t_matches_its_closed_forms():
    h = draw(-2.0, 2.0)
    # T(h, 1) = Phi(h) (1 - Phi(h)) / 2; T(0, a) = arctan(a) / (2 pi)
    phi = sp.ndtr(h)
    np.testing.assert_allclose(sps.owens_t(h, 1.0), phi * (1 - phi) / 2, rtol=1e-13)
    a = draw(-3.0, 3.0)
    np.testing.assert_allclose(sps.owens_t(0.0, a), np.arctan(a) / (2 * math.pi), rtol=1e-13)


def test_wofz_is_scipys_and_holomorphic_with_jaxs_derivatives_at_complex_points():
    z = np.array([0.5 + 0.3j, -1.2 + 2.0j, 3.0 - 0.4j, 0.0 + 0.0j, -0.3 - 1.5j])
    np.testing.assert_allclose(sps.wofz(z), sp.wofz(z), rtol=1e-15)
    x = np.array([-2.0, 0.25, 7.0])  # real points give complex values, as SciPy's
    np.testing.assert_array_equal(sps.wofz(x), sp.wofz(x + 0j))
    assert sps.wofz(np.float32(1.0)).dtype == jsp.wofz(np.float32(1.0)).dtype
    w = np.array([0.3, -1.1, 0.7, 0.2, 0.9])

    def loss(np_, f):
        return lambda v: np_.sum(np_.real(f(v)) * w + np_.imag(f(v)) * w[::-1])
    np.testing.assert_allclose(cr.grad(loss(cr, sps.wofz))(z),
                               jax.grad(loss(jnp, jsp.wofz))(z), rtol=1e-12)
    np.testing.assert_allclose(cr.jacfwd(sps.wofz, holomorphic=True)(z),
                               jax.jacfwd(jsp.wofz, holomorphic=True)(z), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(cr.hessian(loss(cr, sps.wofz))(z.real),
                               jax.hessian(loss(jnp, jsp.wofz))(z.real), rtol=1e-10,
                               atol=1e-14)


def test_sph_harm_y_is_scipys_with_jaxs_derivatives_in_both_angles():
    n = np.array([0, 1, 2, 3, 3, 4, 2, 5])
    m = np.array([0, -1, 2, 1, -3, 2, 3, -5])     # |m| > n gives 0, as SciPy's
    theta = np.array([0.3, 1.1, 2.0, 0.7, 1.5, 2.8, 1.0, 0.9])
    phi = np.array([0.1, -0.7, 2.2, 0.4, 1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(sps.sph_harm_y(n, m, theta, phi),
                               sp.sph_harm_y(n, m, theta, phi), rtol=1e-14, atol=1e-16)
    w = np.arange(1.0, 9.0)

    def loss(np_, f):
        return lambda t, p: np_.sum((np_.real(f(n, m, t, p)) - 0.6 * np_.imag(f(n, m, t, p)))
                                    * w)
    ours = loss(cr, sps.sph_harm_y)
    theirs = loss(jnp, lambda *a: jsp.sph_harm_y(*a, n_max=5))
    for i in (0, 1):
        expected = jax.grad(theirs, i)(theta, phi)
        np.testing.assert_allclose(cr.grad(ours, i)(theta, phi), expected, rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(cr.jacfwd(ours, i)(theta, phi), expected, rtol=1e-12,
                                   atol=1e-14)
    np.testing.assert_allclose(cr.hessian(ours, (0, 1))(theta, phi),
                               jax.hessian(theirs, (0, 1))(theta, phi), rtol=1e-10,
                               atol=1e-12)


def test_sph_harm_y_refuses_what_it_does_not_compute_by_name():
    with pytest.raises(ValueError, match="sph_harm_y: diff_n=1 is not computed here"):
        sps.sph_harm_y(2, 1, 0.5, 0.5, diff_n=1)
    with pytest.raises(ValueError, match="sph_harm_y: a degree n above n_max=2"):
        sps.sph_harm_y(np.array([1, 3]), 0, 0.5, 0.5, n_max=2)
    with pytest.raises(TypeError, match="sph_harm_y: argument 0 is being differentiated, "
                                        "but the operation is not differentiable"):
        cr.grad(lambda n: cr.real(sps.sph_harm_y(n, 1, 0.5, 0.5)))(2.0)   # n: a degree
