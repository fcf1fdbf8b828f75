"""chainrule.scipy.stats's further distributions and summaries (scipy/stats_discrete.py
and scipy/stats_more.py) against scipy.stats's values and jax.scipy.stats's float64
derivatives in the data and every continuous parameter: first and second order, reverse
and forward mode, as tests/test_scipy_stats.py checks the others."""

import jax
import jax.numpy as jnp
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats as sst

import chainrule as cr
import chainrule.scipy.stats as stats
from jax_references import gumbel
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(23)


def u(low, high, shape=(4,)):
    return RNG.uniform(low, high, shape)


X, LOC, SCALE = u(-2.0, 2.0), u(-0.5, 0.5), u(0.5, 2.0)
POSITIVE, UNIT = u(0.5, 3.0), u(0.05, 0.95)
ANGLE = u(0.1, 2 * np.pi - 0.1)
COUNTS = np.array([0.0, 1.0, 3.0, 6.0])
TRIALS = np.array([2.0, 4.0, 5.0, 9.0])


def _of(name, functions, args, argnums):
    return [(f"{name}.{f}", getattr(getattr(stats, name), f), getattr(getattr(jst, name), f),
             getattr(getattr(sst, name), f), args, argnums) for f in functions]


def _gumbel_cases(name, sign):
    """JAX's Gumbel densities cannot be differentiated (jax_references.gumbel says why):
    their jax.numpy formulas are the reference."""
    return [(f"{name}.{f}", getattr(getattr(stats, name), f), formula,
             getattr(getattr(sst, name), f), (UNIT if f == "ppf" else X, LOC, SCALE), (0, 1, 2))
            for f, formula in gumbel(sign).items()]


# (id, chainrule's, JAX's, SciPy's, arguments, the arguments differentiated)
CASES = [
    *_gumbel_cases("gumbel_r", 1.0),
    *_gumbel_cases("gumbel_l", -1.0),
    *_of("pareto", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
         (POSITIVE + 2.0, POSITIVE, LOC, SCALE), (0, 1, 2, 3)),
    *_of("pareto", ("ppf",), (UNIT, POSITIVE, LOC, SCALE), (0, 1, 2, 3)),
    *_of("gennorm", ("logpdf", "pdf"), (X, POSITIVE + 0.5), (0, 1)),
    *_of("gennorm", ("cdf",), (X, POSITIVE + 0.5), (0,)),
    *_of("truncnorm", ("logpdf", "pdf"),
         (X * 0.4, X * 0.0 - 1.2, X * 0.0 + 1.5, LOC * 0.2, SCALE), (0, 1, 2, 3, 4)),
    # (JAX's truncnorm CDFs are slow to differentiate eagerly: x, one bound and scale)
    *_of("truncnorm", ("cdf", "logcdf", "sf", "logsf"),
         (X * 0.4, X * 0.0 - 1.2, X * 0.0 + 1.5, LOC * 0.2, SCALE), (0, 1, 4)),
    *_of("truncnorm", ("cdf", "sf"),
         (X * 0.4, X * 0.0 - 1.2, X * 0.0 + 1.5, LOC * 0.2, SCALE), (2,)),
    *_of("vonmises", ("logpdf", "pdf"), (X, POSITIVE), (0, 1)),
    *_of("wrapcauchy", ("logpdf", "pdf"), (ANGLE, UNIT), (0, 1)),
    *_of("bernoulli", ("logpmf", "pmf"), (np.array([0.0, 1.0, 1.0, 0.0]), UNIT), (1,)),
    *_of("bernoulli", ("cdf",), (np.array([-1.0, 0.0, 0.5, 1.0]), UNIT), (1,)),
    *_of("binom", ("logpmf", "pmf"), (COUNTS, TRIALS + 1.0, UNIT), (2,)),
    *_of("betabinom", ("logpmf", "pmf"), (COUNTS, TRIALS + 1.0, POSITIVE, POSITIVE[::-1]),
         (2, 3)),
    *_of("nbinom", ("logpmf", "pmf"), (COUNTS, POSITIVE, UNIT), (1, 2)),
    *_of("geom", ("logpmf", "pmf"), (COUNTS + 1.0, UNIT), (1,)),
]


def _summed(f, argnum, args):
    def g(value):
        full = list(args)
        full[argnum] = value
        return f(*full)
    return g


def _jax_derivatives(f, at, direction):
    """JAX's gradient, Hessian and derivative along ``direction`` of f at ``at``, as one
    compiled program: eager JAX runs each operation of these long functions (truncnorm's
    tails, betabinom's series) on its own, several times slower than compiling them."""
    def all_three(x, d):
        return jax.grad(f)(x), jax.hessian(f)(x), jax.jvp(f, (x,), (d,))[1]
    return jax.jit(all_three)(at, direction)


@pytest.mark.parametrize("name, ours, theirs, values, args, argnums", CASES,
                         ids=[c[0] for c in CASES])
def test_a_distribution_function_matches_scipy_and_jax_to_second_order(name, ours, theirs,
                                                                       values, args,
                                                                       argnums):
    np.testing.assert_allclose(ours(*args), values(*args), rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-10, atol=1e-14)
    if name.startswith("gumbel"):  # (JAX's own values, as above)
        jax_own = getattr(getattr(jst, name.split(".")[0]), name.split(".")[1])
        np.testing.assert_allclose(ours(*args), jax_own(*args), rtol=1e-10, atol=1e-14)
    for argnum in argnums:
        mine = _summed(lambda *a: cr.sum(ours(*a)), argnum, args)
        jaxs = _summed(lambda *a: jnp.sum(theirs(*a)), argnum, args)
        at = args[argnum]
        direction = RNG.standard_normal(np.shape(at))
        jax_grad, jax_hessian, jax_jvp = _jax_derivatives(jaxs, at, direction)
        np.testing.assert_allclose(cr.grad(mine)(at), jax_grad,
                                   rtol=1e-9, atol=1e-12, err_msg=f"argument {argnum}")
        np.testing.assert_allclose(cr.hessian(mine)(at), jax_hessian,
                                   rtol=1e-8, atol=1e-11, err_msg=f"argument {argnum}")
        np.testing.assert_allclose(cr.jvp(mine, (at,), (direction,))[1], jax_jvp,
                                   rtol=1e-9, atol=1e-12, err_msg=f"argument {argnum}")
        np.testing.assert_allclose(cr.jacfwd(cr.grad(mine))(at), jax_hessian,
                                   rtol=1e-8, atol=1e-11, err_msg=f"argument {argnum}")


@pytest.mark.parametrize("function", ["logpdf", "logcdf", "logsf"])
def test_truncnorm_far_in_a_tail_is_accurate_where_jax_gives_nan(function):
    """Between 8.5 and 10 standard deviations ndtr(b) - ndtr(a) cancels to 0 in float64;
    SciPy's values hold there, and so do chainrule's, and their derivatives match central
    differences (JAX's derivatives there are nan)."""
    f = getattr(stats.truncnorm, function)
    x = u(8.6, 9.9)
    a, b = 8.5, 10.0
    np.testing.assert_allclose(f(x, a, b), getattr(sst.truncnorm, function)(x, a, b),
                               rtol=1e-9)
    h = 1e-6
    for argnum in (0, 1, 2):
        def g(t, argnum=argnum):
            args = [x, a, b]
            args[argnum] = t
            return cr.sum(f(*args))
        at = [x, a, b][argnum]
        grad = cr.grad(g)(at)
        step = np.ones_like(at) * h
        fd = (float(g(at + step)) - float(g(at - step))) / (2 * h)
        np.testing.assert_allclose(np.sum(grad), fd, rtol=1e-5, atol=1e-6)
        assert np.all(np.isfinite(cr.hessian(g)(at)))


def test_the_generalized_normal_cdf_in_beta_matches_jax_once():
    x, beta = X, POSITIVE + 0.5
    np.testing.assert_allclose(
        cr.grad(lambda b: cr.sum(stats.gennorm.cdf(x, b)))(beta),
        jax.grad(lambda b: jnp.sum(jst.gennorm.cdf(x, b)))(beta), rtol=1e-8, atol=1e-11)


def test_off_the_support_a_log_mass_or_density_is_minus_infinity_with_gradient_zero():
    assert np.all(np.isneginf(stats.binom.logpmf(np.array([-1.0, 2.5, 6.0]), 5.0, 0.3)))
    assert np.all(np.isneginf(stats.geom.logpmf(np.array([0.0, 1.5]), 0.3)))
    assert np.all(np.isneginf(stats.nbinom.logpmf(np.array([-2.0, 0.5]), 2.0, 0.3)))
    assert np.isneginf(float(stats.bernoulli.logpmf(2.0, 0.3)))
    assert float(stats.pareto.pdf(0.5, 2.0)) == 0.0
    assert cr.grad(lambda b: stats.pareto.pdf(0.5, b))(2.0) == 0.0
    assert float(stats.truncnorm.pdf(3.0, -1.0, 1.0)) == 0.0
    assert cr.grad(lambda x: stats.truncnorm.logcdf(x, -1.0, 1.0))(3.0) == 0.0
    assert cr.grad(lambda p: stats.binom.pmf(7.0, 5.0, p))(0.3) == 0.0
    assert np.isneginf(float(stats.wrapcauchy.logpdf(7.0, 0.5)))
    assert np.isnan(float(stats.vonmises.logpdf(0.0, -1.0)))


def test_a_count_is_not_differentiated_it_is_refused():
    for f, args, argnum in ((stats.binom.logpmf, (3.0, 5.0, 0.3), 1),
                            (stats.binom.logpmf, (3.0, 5.0, 0.3), 0),
                            (stats.betabinom.pmf, (3.0, 5.0, 1.0, 2.0), 1),
                            (stats.geom.logpmf, (3.0, 0.3), 0),
                            (stats.nbinom.logpmf, (3.0, 2.0, 0.3), 0),
                            (stats.bernoulli.logpmf, (1.0, 0.3), 0)):
        with pytest.raises(TypeError, match=r"no derivative in \w+: it is a count"):
            cr.grad(f, argnums=argnum)(*args)
    # a continuous n of nbinom is differentiated
    np.testing.assert_allclose(cr.grad(stats.nbinom.logpmf, argnums=1)(3.0, 2.0, 0.3),
                               jax.grad(jst.nbinom.logpmf, argnums=1)(3.0, 2.0, 0.3),
                               rtol=1e-12)


def test_bernoulli_ppf_is_scipys_step():
    q = np.array([0.0, 0.2, 0.7, 0.71, 1.0, 1.5])
    np.testing.assert_array_equal(stats.bernoulli.ppf(q, 0.3), jst.bernoulli.ppf(q, 0.3))
    assert np.isnan(stats.bernoulli.ppf(1.5, 0.3))


def test_multinomial_matches_scipy_and_jax_in_p():
    x = np.array([[1, 2, 0], [0, 1, 2], [1, 1, 1]])
    p = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(stats.multinomial.logpmf(x, 3, p),
                               sst.multinomial.logpmf(x, 3, p), rtol=1e-12)
    np.testing.assert_allclose(stats.multinomial.pmf(x, 3, p), sst.multinomial.pmf(x, 3, p),
                               rtol=1e-12)
    assert np.isneginf(float(stats.multinomial.logpmf(np.array([1, 1, 0]), 3, p)))

    # (JAX compares the sum of all of x with n, so it is checked on one row at a time)
    for row in x:
        def mine(p, row=row):
            return stats.multinomial.logpmf(row, 3, p)

        def jaxs(p, row=row):
            return jst.multinomial.logpmf(row, 3, p)
        np.testing.assert_allclose(cr.grad(mine)(p), jax.grad(jaxs)(p), rtol=1e-12)
        np.testing.assert_allclose(cr.hessian(mine)(p), jax.hessian(jaxs)(p), rtol=1e-12)
        np.testing.assert_allclose(cr.jvp(mine, (p,), (np.ones(3),))[1],
                                   jax.jvp(jaxs, (p,), (jnp.ones(3),))[1], rtol=1e-12)
    with pytest.raises(TypeError, match="multinomial: no derivative in x"):
        cr.grad(lambda x: stats.multinomial.logpmf(x, 3.0, p))(np.array([1.0, 2.0, 0.0]))


@pytest.mark.parametrize("axis, keepdims", [(0, False), (1, True), (None, False)])
def test_mode_matches_scipy_and_jax(axis, keepdims):
    a = RNG.integers(0, 4, (6, 5)).astype(float)
    ours = stats.mode(a, axis=axis, keepdims=keepdims)
    theirs = jst.mode(a, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(ours.mode, theirs.mode)
    np.testing.assert_array_equal(ours.count, theirs.count)
    np.testing.assert_array_equal(ours.mode, sst.mode(a, axis=axis, keepdims=keepdims).mode)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy_and_jax(method):
    a = RNG.integers(0, 5, (4, 6)).astype(float)
    np.testing.assert_array_equal(stats.rankdata(a, method), jst.rankdata(a, method))
    np.testing.assert_array_equal(stats.rankdata(a, method, axis=1),
                                  jst.rankdata(a, method, axis=1))
    np.testing.assert_array_equal(stats.rankdata(a, method, axis=0),
                                  sst.rankdata(a, method, axis=0))


@pytest.mark.parametrize("axis, ddof, keepdims", [(0, 1, False), (1, 0, True), (None, 1, False)])
def test_sem_matches_scipy_and_jax_with_its_derivatives(axis, ddof, keepdims):
    a = RNG.standard_normal((5, 4))
    np.testing.assert_allclose(stats.sem(a, axis, ddof, keepdims=keepdims),
                               sst.sem(a, axis, ddof, keepdims=keepdims), rtol=1e-13)

    def mine(a):
        return cr.sum(stats.sem(a, axis, ddof, keepdims=keepdims) * np.arange(1.0, 2.0))

    def jaxs(a):
        return jnp.sum(jst.sem(a, axis, ddof, keepdims=keepdims) * jnp.arange(1.0, 2.0))
    np.testing.assert_allclose(cr.grad(mine)(a), jax.grad(jaxs)(a), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(cr.hessian(mine)(a), jax.hessian(jaxs)(a), rtol=1e-9,
                               atol=1e-12)


def test_sem_omits_nans_as_scipy_and_jax():
    a = RNG.standard_normal((6, 3))
    a[1, 0] = a[4, 2] = np.nan
    np.testing.assert_allclose(stats.sem(a, nan_policy="omit"),
                               sst.sem(a, nan_policy="omit"), rtol=1e-13)
    present = ~np.isnan(a)

    def mine(b):
        return cr.sum(stats.sem(cr.where(present, b, np.nan), nan_policy="omit"))

    def jaxs(b):
        return jnp.sum(jst.sem(jnp.where(present, b, jnp.nan), nan_policy="omit"))
    filled = np.where(present, a, 0.0)
    np.testing.assert_allclose(cr.grad(mine)(filled), jax.grad(jaxs)(filled), rtol=1e-10,
                               atol=1e-13)
    with pytest.raises(ValueError, match="sem: nan_policy must be"):
        stats.sem(a, nan_policy="raise")


def test_under_jit_and_vmap_they_compute_what_they_compute_eagerly():
    for f in (lambda x: stats.gumbel_r.logcdf(x, 0.1, 1.2), lambda x: stats.pareto.cdf(x + 3, 2.0),
              lambda x: stats.truncnorm.logpdf(x * 0.3, -1.0, 1.0),
              lambda x: stats.vonmises.logpdf(x, 1.5), lambda x: stats.gennorm.cdf(x, 1.5),
              lambda p: stats.binom.logpmf(COUNTS, 9.0, p * 0.1 + 0.5)):
        np.testing.assert_allclose(cr.jit(f)(X), f(X), rtol=1e-14)
        g = cr.grad(lambda x: cr.sum(f(x)))
        np.testing.assert_allclose(cr.jit(g)(X), g(X), rtol=1e-13)
    np.testing.assert_allclose(cr.vmap(lambda x: stats.gumbel_l.cdf(x, 0.2, 1.5))(X),
                               stats.gumbel_l.cdf(X, 0.2, 1.5), rtol=1e-14)


def test_distributions_import_as_modules_as_in_jax():
    import chainrule.scipy.stats.binom as binom
    import chainrule.scipy.stats.truncnorm as truncnorm
    assert binom is stats.binom and truncnorm is stats.truncnorm
