"""chainrule.scipy.stats against scipy.stats (values) and jax.scipy.stats (float64
derivatives in the data and in every continuous parameter, first and second order,
reverse and forward mode).
"""

import jax
import jax.numpy as jnp
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats as sst

import chainrule as cr
import chainrule.scipy.stats as stats

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(11)


def u(low, high, shape=(4,)):
    return RNG.uniform(low, high, shape)


X, LOC, SCALE = u(-2.0, 2.0), u(-0.5, 0.5), u(0.5, 2.0)
POSITIVE = u(0.5, 3.0)
UNIT = u(0.05, 0.95)

# (id, chainrule's, JAX's, SciPy's, arguments, the arguments differentiated)
CASES = [
    *[(f"norm.{f}", getattr(stats.norm, f), getattr(jst.norm, f), getattr(sst.norm, f),
       (X, LOC, SCALE), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("norm.ppf", stats.norm.ppf, jst.norm.ppf, sst.norm.ppf, (UNIT, LOC, SCALE), (0, 1, 2)),
    *[(f"expon.{f}", getattr(stats.expon, f), getattr(jst.expon, f), getattr(sst.expon, f),
       (POSITIVE, LOC - 0.6, SCALE), (0, 1, 2))
      for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("expon.ppf", stats.expon.ppf, jst.expon.ppf, sst.expon.ppf, (UNIT, LOC, SCALE), (0, 1, 2)),
    ("uniform.logpdf", stats.uniform.logpdf, jst.uniform.logpdf, sst.uniform.logpdf,
     (UNIT, LOC * 0.0, SCALE + 1.0), (2,)),
    ("uniform.ppf", stats.uniform.ppf, jst.uniform.ppf, sst.uniform.ppf,
     (UNIT, LOC, SCALE), (0, 1, 2)),
    *[(f"laplace.{f}", getattr(stats.laplace, f), getattr(jst.laplace, f),
       getattr(sst.laplace, f), (X, LOC, SCALE), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf")],
    *[(f"logistic.{f}", getattr(stats.logistic, f), getattr(jst.logistic, f),
       getattr(sst.logistic, f), (X, LOC, SCALE), (0, 1, 2))
      for f in ("logpdf", "pdf", "cdf", "sf")],
    ("logistic.ppf", stats.logistic.ppf, jst.logistic.ppf, sst.logistic.ppf,
     (UNIT, LOC, SCALE), (0, 1, 2)),
    *[(f"cauchy.{f}", getattr(stats.cauchy, f), getattr(jst.cauchy, f), getattr(sst.cauchy, f),
       (X, LOC, SCALE), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("cauchy.ppf", stats.cauchy.ppf, jst.cauchy.ppf, sst.cauchy.ppf, (UNIT, LOC, SCALE),
     (0, 1, 2)),
    *[(f"t.{f}", getattr(stats.t, f), getattr(jst.t, f), getattr(sst.t, f),
       (X, POSITIVE + 1.0, LOC, SCALE), (0, 1, 2, 3)) for f in ("logpdf", "pdf")],
    *[(f"gamma.{f}", getattr(stats.gamma, f), getattr(jst.gamma, f), getattr(sst.gamma, f),
       (POSITIVE + 1.0, POSITIVE, LOC, SCALE), (0, 1, 2, 3)) for f in ("logpdf", "pdf")],
    *[(f"chi2.{f}", getattr(stats.chi2, f), getattr(jst.chi2, f), getattr(sst.chi2, f),
       (POSITIVE + 1.0, POSITIVE + 1.0, LOC, SCALE), (0, 1, 2, 3)) for f in ("logpdf", "pdf")],
    *[(f"beta.{f}", getattr(stats.beta, f), getattr(jst.beta, f), getattr(sst.beta, f),
       (UNIT, POSITIVE, POSITIVE[::-1], LOC * 0.0, SCALE * 0.0 + 1.0), (0, 1, 2))
      for f in ("logpdf", "pdf")],
    *[(f"poisson.{f}", getattr(stats.poisson, f), getattr(jst.poisson, f),
       getattr(sst.poisson, f), (np.array([0.0, 1.0, 3.0, 6.0]), POSITIVE * 2.0), (1,))
      for f in ("logpmf", "pmf", "cdf")],
]


def _summed(f, argnum, args):
    """The sum of f's values as a function of its argument ``argnum`` alone."""
    def g(value):
        full = list(args)
        full[argnum] = value
        return f(*full)
    return g


@pytest.mark.parametrize("name, ours, theirs, values, args, argnums", CASES,
                         ids=[c[0] for c in CASES])
def test_a_distribution_function_matches_scipy_and_jax_to_second_order(name, ours, theirs,
                                                                       values, args,
                                                                       argnums):
    np.testing.assert_allclose(ours(*args), values(*args), rtol=1e-11, atol=1e-14)
    for argnum in argnums:
        mine = _summed(lambda *a: cr.sum(ours(*a)), argnum, args)
        jaxs = _summed(lambda *a: jnp.sum(theirs(*a)), argnum, args)
        at = args[argnum]
        np.testing.assert_allclose(cr.grad(mine)(at), jax.grad(jaxs)(at),
                                   rtol=1e-9, atol=1e-12, err_msg=f"argument {argnum}")
        np.testing.assert_allclose(cr.hessian(mine)(at), jax.hessian(jaxs)(at),
                                   rtol=1e-8, atol=1e-11, err_msg=f"argument {argnum}")
        direction = RNG.standard_normal(np.shape(at))
        np.testing.assert_allclose(cr.jvp(mine, (at,), (direction,))[1],
                                   jax.jvp(jaxs, (at,), (direction,))[1],
                                   rtol=1e-9, atol=1e-12, err_msg=f"argument {argnum}")


def test_outside_the_support_a_log_density_is_minus_infinity_and_its_gradient_zero():
    x = np.array([-1.0, 2.0])
    np.testing.assert_array_equal(stats.gamma.logpdf(x, 3.0), sst.gamma.logpdf(x, 3.0))
    np.testing.assert_array_equal(cr.grad(lambda x: stats.gamma.pdf(x, 3.0)[0])(x),
                                  [0.0, 0.0])
    np.testing.assert_array_equal(stats.beta.logpdf(np.array([1.5]), 2.0, 2.0), [-np.inf])
    np.testing.assert_array_equal(stats.poisson.pmf(np.array([-1.0, 1.5]), 2.0), [0.0, 0.0])


def test_dirichlet_matches_scipy_and_jax_in_the_point_and_the_concentrations():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(stats.dirichlet.logpdf(x, alpha), sst.dirichlet.logpdf(x, alpha),
                               rtol=1e-13)
    points = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]).T   # components first, as SciPy
    np.testing.assert_allclose(stats.dirichlet.logpdf(points, alpha),
                               sst.dirichlet.logpdf(points, alpha), rtol=1e-13)
    for argnum in (0, 1):
        np.testing.assert_allclose(
            cr.grad(stats.dirichlet.logpdf, argnums=argnum)(x, alpha),
            jax.grad(jst.dirichlet.logpdf, argnums=argnum)(x, alpha), rtol=1e-11)
        np.testing.assert_allclose(
            cr.hessian(stats.dirichlet.logpdf, argnums=argnum)(x, alpha),
            jax.hessian(jst.dirichlet.logpdf, argnums=argnum)(x, alpha), rtol=1e-10)


def test_multivariate_normal_matches_scipy_and_jax_in_the_points_the_mean_and_the_cov():
    points = RNG.standard_normal((5, 3))
    mean = RNG.standard_normal(3)
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + 3.0 * np.eye(3)
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(points, mean, cov),
                               sst.multivariate_normal.logpdf(points, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(stats.multivariate_normal.pdf(points[0], mean, cov),
                               sst.multivariate_normal.pdf(points[0], mean, cov), rtol=1e-12)
    np.testing.assert_allclose(stats.multivariate_normal.entropy(mean, cov),
                               sst.multivariate_normal.entropy(mean, cov), rtol=1e-13)
    total = lambda x, m, c: cr.sum(stats.multivariate_normal.logpdf(x, m, c))
    jax_total = lambda x, m, c: jnp.sum(jst.multivariate_normal.logpdf(x, m, c))
    for argnum in (0, 1):
        np.testing.assert_allclose(cr.grad(total, argnums=argnum)(points, mean, cov),
                                   jax.grad(jax_total, argnums=argnum)(points, mean, cov),
                                   rtol=1e-10, atol=1e-12)
    # the covariance along symmetric directions (the only ones a covariance moves in),
    # first and second order
    d = RNG.standard_normal((3, 3))
    d = d + d.T
    first = cr.jvp(lambda c: total(points, mean, c), (cov,), (d,))[1]
    jax_first = jax.jvp(lambda c: jax_total(points, mean, c), (cov,), (d,))[1]
    np.testing.assert_allclose(first, jax_first, rtol=1e-10)
    slope = lambda c: cr.jvp(lambda c: total(points, mean, c), (c,), (d,))[1]
    jax_slope = lambda c: jax.jvp(lambda c: jax_total(points, mean, c), (c,), (d,))[1]
    np.testing.assert_allclose(cr.jvp(slope, (cov,), (d,))[1],
                               jax.jvp(jax_slope, (cov,), (d,))[1], rtol=1e-9)
