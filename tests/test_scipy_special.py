"""chainrule.scipy.special against jax.scipy.special (float64): values, and first and
second derivatives in reverse and forward mode; against SciPy's values and central
differences where JAX has no such function (rgamma, erfcinv, the Bessel functions of
chainrule's own orders).
"""

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

RNG = per_test_generator(7)


def draw(low, high, shape=(5,)):
    return RNG.uniform(low, high, shape)


# (name, chainrule's, JAX's or None, inputs: one array per differentiated argument)
UNARY = [
    ("gammaln", sps.gammaln, jsp.gammaln, (0.3, 6.0)),
    ("gamma", sps.gamma, jsp.gamma, (0.3, 4.0)),
    ("digamma", sps.digamma, jsp.digamma, (0.3, 6.0)),
    ("psi", sps.psi, jsp.digamma, (0.3, 6.0)),
    ("polygamma(1, x)", lambda x: sps.polygamma(1, x), lambda x: jsp.polygamma(1, x), (0.3, 6.0)),
    ("polygamma(2, x)", lambda x: sps.polygamma(2, x), lambda x: jsp.polygamma(2, x), (0.3, 6.0)),
    ("multigammaln(a, 3)", lambda a: sps.multigammaln(a, 3), lambda a: jsp.multigammaln(a, 3),
     (1.5, 6.0)),
    ("erf", sps.erf, jsp.erf, (-2.0, 2.0)),
    ("erfc", sps.erfc, jsp.erfc, (-2.0, 2.0)),
    ("erfinv", sps.erfinv, jsp.erfinv, (-0.9, 0.9)),
    ("ndtr", sps.ndtr, jsp.ndtr, (-3.0, 3.0)),
    ("ndtri", sps.ndtri, jsp.ndtri, (0.05, 0.95)),
    ("log_ndtr", sps.log_ndtr, jsp.log_ndtr, (-8.0, 3.0)),
    ("expit", sps.expit, jsp.expit, (-4.0, 4.0)),
    ("logit", sps.logit, jsp.logit, (0.05, 0.95)),
    ("entr", sps.entr, jsp.entr, (0.1, 3.0)),
    ("i0", sps.i0, jsp.i0, (-3.0, 3.0)),
    ("i1", sps.i1, jsp.i1, (-3.0, 3.0)),
    ("i0e", sps.i0e, jsp.i0e, (0.2, 3.0)),
    ("i1e", sps.i1e, jsp.i1e, (0.2, 3.0)),
    ("jn(2, x)", lambda x: sps.jn(2, x),
     lambda x: jsp.bessel_jn(x, v=3)[2], (0.5, 5.0)),
    ("expi", sps.expi, jsp.expi, (0.2, 4.0)),
    ("zeta(3, q)", lambda q: sps.zeta(3.0, q), lambda q: jsp.zeta(3.0, q), (0.5, 4.0)),
    ("hyp1f1(a, b, x)", lambda x: sps.hyp1f1(1.1, 2.2, x),
     lambda x: jsp.hyp1f1(1.1, 2.2, x), (-2.0, 2.0)),
    ("hyp2f1(a, b, c, x)", lambda x: sps.hyp2f1(1.1, 0.7, 2.3, x),
     lambda x: jsp.hyp2f1(1.1, 0.7, 2.3, x), (-0.8, 0.8)),
    ("logsumexp", sps.logsumexp, jsp.logsumexp, (-3.0, 3.0)),
    ("logsumexp(b=)", lambda x: sps.logsumexp(x, b=np.arange(1.0, 6.0)),
     lambda x: jsp.logsumexp(x, b=jnp.arange(1.0, 6.0)), (-3.0, 3.0)),
    ("softmax", lambda x: sps.softmax(x) * np.arange(1.0, 6.0),
     lambda x: jax.nn.softmax(x) * jnp.arange(1.0, 6.0), (-3.0, 3.0)),
    ("log_softmax", lambda x: sps.log_softmax(x) * np.arange(1.0, 6.0),
     lambda x: jax.nn.log_softmax(x) * jnp.arange(1.0, 6.0), (-3.0, 3.0)),
]

BINARY = [
    ("beta", sps.beta, jsp.beta, (0.5, 3.0), (0.5, 3.0)),
    ("betaln", sps.betaln, jsp.betaln, (0.5, 3.0), (0.5, 3.0)),
    ("xlogy", sps.xlogy, jsp.xlogy, (-2.0, 2.0), (0.2, 3.0)),
    ("xlog1py", sps.xlog1py, jsp.xlog1py, (-2.0, 2.0), (-0.5, 3.0)),
    ("rel_entr", sps.rel_entr, jsp.rel_entr, (0.2, 3.0), (0.2, 3.0)),
    ("kl_div", sps.kl_div, jsp.kl_div, (0.2, 3.0), (0.2, 3.0)),
    ("poch", sps.poch, jsp.poch, (0.5, 3.0), (0.2, 2.0)),
]


def scalar(f):
    """The sum of f's entries: a scalar function whose gradient holds each derivative."""
    return lambda *args: cr.sum(f(*args))


def jax_scalar(f):
    return lambda *args: jnp.sum(f(*args))


@pytest.mark.parametrize("name, ours, theirs, domain", UNARY, ids=[c[0] for c in UNARY])
def test_a_function_of_one_argument_matches_jax_to_second_order(name, ours, theirs, domain):
    x = draw(*domain)
    np.testing.assert_allclose(ours(x), theirs(jnp.asarray(x)), rtol=1e-12, atol=1e-14)
    # reverse mode, first and second derivatives (the Hessian of the sum)
    np.testing.assert_allclose(cr.grad(scalar(ours))(x),
                               jax.jit(jax.grad(jax_scalar(theirs)))(x),
                               rtol=1e-10, atol=1e-13)
    jax_hessian = jax.jit(jax.hessian(jax_scalar(theirs)))(x)
    np.testing.assert_allclose(cr.hessian(scalar(ours))(x), jax_hessian, rtol=1e-9,
                               atol=1e-12)
    # forward mode along a direction, and forward over reverse
    v = RNG.standard_normal(x.shape)
    _, tangent = cr.jvp(ours, (x,), (v,))
    jax_tangent = jax.jit(lambda x, v: jax.jvp(theirs, (x,), (v,))[1])(x, v)
    np.testing.assert_allclose(tangent, jax_tangent, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(cr.jacfwd(cr.grad(scalar(ours)))(x), jax_hessian,
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name, ours, theirs, first, second", BINARY,
                         ids=[c[0] for c in BINARY])
def test_a_function_of_two_arguments_matches_jax_in_both(name, ours, theirs, first, second):
    a, b = draw(*first), draw(*second)
    np.testing.assert_allclose(ours(a, b), theirs(a, b), rtol=1e-12, atol=1e-14)
    for argnum in (0, 1):
        np.testing.assert_allclose(
            cr.grad(scalar(ours), argnums=argnum)(a, b),
            jax.jit(jax.grad(jax_scalar(theirs), argnums=argnum))(a, b), rtol=1e-10,
            atol=1e-13)
        np.testing.assert_allclose(
            cr.hessian(scalar(ours), argnums=argnum)(a, b),
            jax.jit(jax.hessian(jax_scalar(theirs), argnums=argnum))(a, b), rtol=1e-9,
            atol=1e-12)
    np.testing.assert_allclose(  # the mixed second derivative
        cr.jacrev(cr.grad(scalar(ours), argnums=0), argnums=1)(a, b),
        jax.jit(jax.jacrev(jax.grad(jax_scalar(theirs), argnums=0), argnums=1))(a, b),
        rtol=1e-9, atol=1e-12)


# What JAX lacks: SciPy's values, and central differences to second order (gradcheck)
OWN = [
    ("rgamma", sps.rgamma, sp.rgamma, (0.3, 4.0)),
    ("erfcinv", sps.erfcinv, sp.erfcinv, (0.1, 1.9)),
    ("iv(2.5, x)", lambda x: sps.iv(2.5, x), lambda x: sp.iv(2.5, x), (0.5, 3.0)),
    ("ive(1.5, x)", lambda x: sps.ive(1.5, x), lambda x: sp.ive(1.5, x), (0.5, 3.0)),
    ("j0", sps.j0, sp.j0, (0.5, 5.0)),
    ("j1", sps.j1, sp.j1, (0.5, 5.0)),
    ("jv(1.5, x)", lambda x: sps.jv(1.5, x), lambda x: sp.jv(1.5, x), (0.5, 5.0)),
    ("y0", sps.y0, sp.y0, (0.5, 5.0)),
    ("y1", sps.y1, sp.y1, (0.5, 5.0)),
    ("yn(2, x)", lambda x: sps.yn(2, x), lambda x: sp.yn(2, x), (0.5, 5.0)),
    ("gammasgn", sps.gammasgn, sp.gammasgn, (-3.7, 3.0)),
    ("spence", sps.spence, sp.spence, (0.2, 3.0)),    # (JAX's derivative is NaN above 1)
    ("expn(0, x)", lambda x: sps.expn(0, x), lambda x: sp.expn(0, x), (0.3, 3.0)),
    # (JAX's exp1 and expn have a first derivative only, checked below)
    ("exp1", sps.exp1, sp.exp1, (0.2, 4.0)),
    ("expn(1, x)", lambda x: sps.expn(1, x), lambda x: sp.expn(1, x), (0.2, 4.0)),
    ("expn(2, x)", lambda x: sps.expn(2, x), lambda x: sp.expn(2, x), (0.2, 4.0)),
]


@pytest.mark.parametrize("ours, theirs", [(sps.exp1, jsp.exp1),
                                          (lambda x: sps.expn(2, x), lambda x: jsp.expn(2, x))],
                         ids=["exp1", "expn(2, x)"])
def test_an_exponential_integral_matches_jax_to_first_order(ours, theirs):
    x = draw(0.2, 4.0)
    np.testing.assert_allclose(cr.grad(scalar(ours))(x), jax.grad(jax_scalar(theirs))(x),
                               rtol=1e-10)


@pytest.mark.parametrize("name, ours, values, domain", OWN, ids=[c[0] for c in OWN])
def test_a_function_jax_lacks_matches_scipy_and_central_differences(name, ours, values,
                                                                     domain):
    x = draw(*domain)
    np.testing.assert_allclose(ours(x), values(x), rtol=1e-13)
    assert cr.gradcheck(scalar(ours), x, order=2)


def test_the_derivative_of_rgamma_is_that_of_one_over_gamma():
    x = draw(0.3, 4.0)
    np.testing.assert_allclose(cr.grad(scalar(sps.rgamma))(x),
                               jax.grad(jax_scalar(lambda x: 1 / jsp.gamma(x)))(x),
                               rtol=1e-10)


def test_logsumexp_with_negative_weights_gives_the_sign_as_scipy():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([1.0, -3.0])
    ours, sign = sps.logsumexp(a, axis=1, b=b, return_sign=True)
    theirs, their_sign = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    np.testing.assert_array_equal(sign, their_sign)
    np.testing.assert_allclose(
        cr.grad(lambda a: cr.sum(sps.logsumexp(a, axis=1, b=b, return_sign=True)[0]))(a),
        jax.grad(lambda a: jnp.sum(jsp.logsumexp(a, axis=1, b=b, return_sign=True)[0]))(a),
        rtol=1e-12)


def test_they_take_tensors_and_values():
    x = cr.tensor([0.5, 2.5], requires_grad=True)
    sps.gammaln(x).sum().backward()
    np.testing.assert_allclose(x.grad, sp.digamma([0.5, 2.5]), rtol=1e-14)
    v = cr.Value(2.5)
    sps.gammaln(v).backward()
    assert v.grad == pytest.approx(sp.digamma(2.5), rel=1e-14)


def test_they_run_under_jit():
    """scipy.special's functions are ufuncs of SciPy's, not NumPy's: a cr.jit program
    holds them as it holds any function."""
    step = cr.jit(lambda x: cr.grad(lambda y: cr.sum(sps.log_ndtr(y) * sps.i0e(y)))(x))
    x = np.array([-1.0, 0.5, 2.0])
    expected = jax.grad(lambda y: jnp.sum(jsp.log_ndtr(y) * jsp.i0e(y)))(x)
    for _ in range(2):  # traced, then replayed
        np.testing.assert_allclose(step(x), expected, rtol=1e-12)
    assert "log_ndtr" in str(cr.make_program(
        lambda x: cr.grad(lambda y: cr.sum(sps.log_ndtr(y)))(x))(x))


def test_multigammaln_refuses_a_dimension_that_is_not_a_positive_integer():
    with pytest.raises(ValueError, match="multigammaln: d must be a positive integer"):
        sps.multigammaln(3.0, 1.5)


# ---------------------------------------------------------------------------------------
# The regularized incomplete gamma and beta functions: in x, as any function above; in a
# shape parameter, against JAX where it differentiates (gammainc's a, first order) and
# against mpmath's high-precision derivatives elsewhere (JAX refuses betainc's a and b).
# ---------------------------------------------------------------------------------------

# (name, chainrule's, JAX's, one domain per argument); the last argument is x
INCOMPLETE = [
    ("gammainc", sps.gammainc, jsp.gammainc, ((0.3, 8.0), (0.05, 12.0))),
    ("gammaincc", sps.gammaincc, jsp.gammaincc, ((0.3, 8.0), (0.05, 12.0))),
    ("betainc", sps.betainc, jsp.betainc, ((0.3, 6.0), (0.3, 6.0), (0.02, 0.98))),
]


@pytest.mark.parametrize("name, ours, theirs, domains", INCOMPLETE,
                         ids=[c[0] for c in INCOMPLETE])
def test_an_incomplete_function_matches_jax_in_x_to_second_order(name, ours, theirs,
                                                                   domains):
    args = [draw(*domain) for domain in domains]
    x_arg = len(args) - 1
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cr.grad(scalar(ours), argnums=x_arg)(*args),
                               jax.grad(jax_scalar(theirs), argnums=x_arg)(*args),
                               rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(cr.hessian(scalar(ours), argnums=x_arg)(*args),
                               jax.hessian(jax_scalar(theirs), argnums=x_arg)(*args),
                               rtol=1e-9, atol=1e-12)
    t = RNG.standard_normal(args[x_arg].shape)
    np.testing.assert_allclose(cr.jvp(lambda x: ours(*args[:-1], x), (args[-1],), (t,))[1],
                               jax.jvp(lambda x: theirs(*args[:-1], x), (args[-1],), (t,))[1],
                               rtol=1e-10, atol=1e-13)


# from small shapes to large ones, x from far below the mean to far above it (where the
# derivative comes from the series, the continued fraction, or the other tail)
GAMMA_GRID = [(a, x) for a in (0.05, 0.7, 3.0, 40.0, 900.0)
              for x in (1e-4, 0.3, 1.0, 2.9, 3.1, 39.0, 45.0, 120.0, 880.0, 950.0)]


@pytest.mark.parametrize("ours, theirs", [(sps.gammainc, jsp.gammainc),
                                          (sps.gammaincc, jsp.gammaincc)],
                         ids=["gammainc", "gammaincc"])
def test_gammainc_in_a_matches_jax_across_its_regions(ours, theirs):
    a, x = (np.array(column) for column in zip(*GAMMA_GRID))
    np.testing.assert_allclose(cr.grad(scalar(ours))(a, x), jax.grad(jax_scalar(theirs))(a, x),
                               rtol=1e-9, atol=1e-300)
    v = RNG.standard_normal(a.shape)
    np.testing.assert_allclose(cr.jvp(ours, (a, x), (v, 0 * x))[1],
                               jax.jvp(theirs, (a, x), (v, 0 * x))[1], rtol=1e-9, atol=1e-300)


def test_gammainc_mixed_second_derivative_matches_central_differences_of_jax():
    """JAX gives no second derivative in a; ours in a then x is a closed form, checked
    against central differences of JAX's first derivative in a."""
    a, x = np.array([0.7, 3.0, 12.0]), np.array([0.5, 4.0, 9.0])
    h = 1e-6
    d_da = jax.grad(jax_scalar(jsp.gammainc))
    expected = (d_da(a, x + h) - d_da(a, x - h)) / (2 * h)
    mixed = cr.jacfwd(cr.grad(scalar(sps.gammainc)), argnums=1)(a, x)
    np.testing.assert_allclose(np.diag(mixed), expected, rtol=1e-7)
    np.testing.assert_allclose(mixed - np.diag(np.diag(mixed)), 0.0)


BETA_GRID = [(a, b, x) for a in (0.2, 1.0, 4.5, 300.0) for b in (0.4, 2.0, 700.0)
             for x in (1e-4, 0.2, 0.5, 0.93, 0.9995)]


def test_betainc_in_a_and_b_matches_mpmath_across_its_regions():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    a, b, x = (np.array(column) for column in zip(*BETA_GRID))
    da, db = cr.grad(scalar(sps.betainc), argnums=(0, 1))(a, b, x)
    for i, (ai, bi, xi) in enumerate(BETA_GRID):
        lower = sp.betainc(ai, bi, xi)
        if min(lower, sp.betaincc(ai, bi, xi)) < 1e-40:  # beyond mpmath's digits here;
            assert abs(da[i]) < 1e-30 and abs(db[i]) < 1e-30  # the tail's own size
            continue

        def of(a, b):  # the smaller tail, to the last digit (minus the upper one)
            if lower <= 0.5:
                return mpmath.betainc(a, b, 0, xi, regularized=True)
            return -mpmath.betainc(a, b, xi, 1, regularized=True)
        expected_a = float(mpmath.diff(lambda s: of(s, bi), ai))
        expected_b = float(mpmath.diff(lambda s: of(ai, s), bi))
        assert da[i] == pytest.approx(expected_a, rel=1e-9, abs=1e-300), (ai, bi, xi)
        assert db[i] == pytest.approx(expected_b, rel=1e-9, abs=1e-300), (ai, bi, xi)


def test_betainc_mixed_second_derivatives_match_central_differences():
    a, b, x = np.array([0.7, 3.0]), np.array([2.0, 0.6]), np.array([0.3, 0.8])
    for argnum in (0, 1):
        assert cr.gradcheck(lambda x: cr.sum(cr.grad(scalar(sps.betainc), argnums=argnum)(
            a, b, x)), x, order=1)
    v = RNG.standard_normal(a.shape)  # forward mode in a and b, against reverse mode
    np.testing.assert_allclose(cr.jvp(sps.betainc, (a, b, x), (v, 2 * v, 0 * x))[1],
                               sum(cr.grad(scalar(sps.betainc), argnums=i)(a, b, x) * t
                                   for i, t in ((0, v), (1, 2 * v))), rtol=1e-12)


def test_incomplete_functions_are_nan_outside_their_domain_and_flat_at_its_ends():
    grads = cr.grad(scalar(sps.gammainc), argnums=(0, 1))(np.array([-1.0, 2.0, 2.0]),
                                                         np.array([1.0, -1.0, 0.0]))
    assert np.isnan(grads[0][:2]).all() and grads[0][2] == 0.0
    da, db = cr.grad(scalar(sps.betainc), argnums=(0, 1))(
        np.array([2.0, 2.0, 2.0]), np.array([3.0, 3.0, 3.0]), np.array([0.0, 1.0, 1.5]))
    assert (da[:2] == 0).all() and (db[:2] == 0).all() and np.isnan([da[2], db[2]]).all()


def test_a_second_derivative_in_a_shape_parameter_is_refused_not_guessed():
    for second in (cr.hessian, lambda f: cr.jacfwd(cr.grad(f))):
        with pytest.raises(TypeError, match="gammainc: no second derivative in a"):
            second(sps.gammainc)(2.5, 1.5)
    with pytest.raises(TypeError, match="betainc: no second derivative in b"):
        cr.grad(cr.grad(sps.betainc, argnums=0), argnums=1)(2.5, 1.5, 0.3)


def test_incomplete_functions_run_under_jit():
    step = cr.jit(lambda a, x: cr.grad(scalar(sps.gammainc), argnums=(0, 1))(a, x))
    a, x = np.array([0.7, 3.0, 12.0]), np.array([0.5, 4.0, 30.0])
    expected = jax.grad(jax_scalar(jsp.gammainc), argnums=(0, 1))(a, x)
    for _ in range(2):
        for ours, theirs in zip(step(a, x), expected):
            np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_spence_is_differentiable_through_1_and_zeta_without_q_is_riemanns():
    assert cr.grad(sps.spence)(1.0) == -1.0     # log(z) / (1 - z) tends to -1
    assert cr.gradcheck(sps.spence, np.array([0.999, 1.001]), order=1)
    np.testing.assert_allclose(sps.zeta(np.array([2.0, 3.0])), sp.zeta([2.0, 3.0]), rtol=1e-14)
    with pytest.raises(TypeError, match="zeta: argument 0 is being differentiated"):
        cr.grad(lambda x: sps.zeta(x, 2.0))(3.0)
