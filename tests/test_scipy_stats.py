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
from seeds_and_tolerances import central_difference_atol, per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(11)


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
    # the CDFs: to second order in x, loc and scale (JAX differentiates a shape once)
    *[(f"gamma.{f}", getattr(stats.gamma, f), getattr(jst.gamma, f), getattr(sst.gamma, f),
       (POSITIVE + 1.0, POSITIVE, LOC, SCALE), (0, 2, 3))
      for f in ("cdf", "logcdf", "sf", "logsf")],
    *[(f"chi2.{f}", getattr(stats.chi2, f), getattr(jst.chi2, f), getattr(sst.chi2, f),
       (POSITIVE + 1.0, POSITIVE + 1.0, LOC, SCALE), (0, 2, 3))
      for f in ("cdf", "logcdf", "sf", "logsf")],
    *[(f"beta.{f}", getattr(stats.beta, f), getattr(jst.beta, f), getattr(sst.beta, f),
       (UNIT, POSITIVE, POSITIVE[::-1], LOC * 0.1, SCALE + 0.5), (0, 3, 4))
      for f in ("cdf", "logcdf", "sf", "logsf")],
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
    # JAX eagerly: the cases share their primitives, whose compiled code eager JAX keeps
    # from one case to the next; under jax.jit every case compiles a program of its own,
    # which costs these cases more time than it saves.
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
            jax.jit(jax.grad(jst.dirichlet.logpdf, argnums=argnum))(x, alpha), rtol=1e-11)
        np.testing.assert_allclose(
            cr.hessian(stats.dirichlet.logpdf, argnums=argnum)(x, alpha),
            jax.jit(jax.hessian(jst.dirichlet.logpdf, argnums=argnum))(x, alpha),
            rtol=1e-10)


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
                                   jax.jit(jax.grad(jax_total, argnums=argnum))(points, mean,
                                                                                cov),
                                   rtol=1e-10, atol=1e-12)
    # the covariance along symmetric directions (the only ones a covariance moves in),
    # first and second order
    d = RNG.standard_normal((3, 3))
    d = d + d.T
    first = cr.jvp(lambda c: total(points, mean, c), (cov,), (d,))[1]
    jax_first = jax.jit(lambda c, d: jax.jvp(lambda c: jax_total(points, mean, c), (c,),
                                             (d,))[1])(cov, d)
    np.testing.assert_allclose(first, jax_first, rtol=1e-10)
    slope = lambda c: cr.jvp(lambda c: total(points, mean, c), (c,), (d,))[1]
    jax_slope = lambda c: jax.jvp(lambda c: jax_total(points, mean, c), (c,), (d,))[1]
    np.testing.assert_allclose(cr.jvp(slope, (cov,), (d,))[1],
                               jax.jit(lambda c: jax.jvp(jax_slope, (c,), (d,))[1])(cov),
                               rtol=1e-9)


FD_STEP = 1e-5


def _central_difference(f, args, argnum, h=FD_STEP):
    """The derivative of sum(f) in each entry of argument ``argnum``, by central
    differences."""
    at = np.asarray(args[argnum], dtype=float)
    out = np.empty_like(at)
    for i in np.ndindex(at.shape):
        shifted = [list(args), list(args)]
        for sign, full in zip((1, -1), shifted):
            moved = at.copy()
            moved[i] += sign * h
            full[argnum] = moved
        out[i] = (np.sum(f(*shifted[0])) - np.sum(f(*shifted[1]))) / (2 * h)
    return out


# (id, chainrule's, JAX's or None, SciPy's, arguments, the shape parameters)
SHAPES = [
    *[(f"gamma.{f}", getattr(stats.gamma, f), getattr(jst.gamma, f), getattr(sst.gamma, f),
       (POSITIVE + 1.0, POSITIVE, LOC, SCALE), (1,)) for f in ("cdf", "logcdf", "sf", "logsf")],
    *[(f"chi2.{f}", getattr(stats.chi2, f), getattr(jst.chi2, f), getattr(sst.chi2, f),
       (POSITIVE + 1.0, POSITIVE + 1.0, LOC, SCALE), (1,)) for f in ("cdf", "sf")],
    *[(f"beta.{f}", getattr(stats.beta, f), None, getattr(sst.beta, f),
       (UNIT, POSITIVE, POSITIVE[::-1], LOC * 0.1, SCALE + 0.5), (1, 2))
      for f in ("cdf", "logcdf", "sf", "logsf")],
    *[(f"t.{f}", getattr(stats.t, f), None, getattr(sst.t, f),
       (X, POSITIVE + 1.0, LOC, SCALE), (1,)) for f in ("cdf", "sf", "logcdf", "logsf")],
]


@pytest.mark.parametrize("name, ours, theirs, values, args, shapes", SHAPES,
                         ids=[c[0] for c in SHAPES])
def test_a_cdf_in_its_shape_parameters_matches_jax_or_central_differences(
        name, ours, theirs, values, args, shapes):
    np.testing.assert_allclose(ours(*args), values(*args), rtol=1e-11, atol=1e-14)
    for argnum in shapes:
        mine = _summed(lambda *a: cr.sum(ours(*a)), argnum, args)
        at = args[argnum]
        direction = RNG.standard_normal(np.shape(at))
        if theirs is not None:
            # (eagerly, as in the test above)
            expected = jax.grad(_summed(lambda *a: jnp.sum(theirs(*a)), argnum, args))(at)
            rtol, atol, jvp_atol = 1e-9, 1e-12, 1e-12
        else:  # SciPy's incomplete beta and t are good to some ulps (times 1/tail in a log)
            expected = _central_difference(values, args, argnum)
            rtol = 0.0
            atol = central_difference_atol(FD_STEP, np.sum(np.abs(values(*args))),
                                           conditioning=10.0)
            jvp_atol = atol * np.sum(np.abs(direction))
        np.testing.assert_allclose(cr.grad(mine)(at), expected, rtol=rtol, atol=atol)
        np.testing.assert_allclose(cr.jvp(mine, (at,), (direction,))[1],
                                   np.sum(expected * direction), rtol=rtol, atol=jvp_atol)


def test_the_t_cdf_matches_scipy_and_central_differences_in_x_to_second_order():
    args = (X, POSITIVE + 1.0, LOC, SCALE)
    for f in (stats.t.cdf, stats.t.sf, stats.t.logcdf, stats.t.logsf):
        for argnum in (0, 2, 3):
            assert cr.gradcheck(_summed(lambda *a: cr.sum(f(*a)), argnum, args), args[argnum],
                                order=2, rtol=1e-6, atol=1e-9)
    # at 0, where the tail's formula would be 0 times infinity: the density, and 0 in df
    assert cr.grad(stats.t.cdf)(0.0, 3.0) == pytest.approx(sst.t.pdf(0.0, 3.0), rel=1e-14)
    assert cr.grad(stats.t.cdf, argnums=1)(0.0, 3.0) == 0.0


def test_a_cdf_is_flat_outside_the_support():
    x = np.array([-1.0, 2.0])
    np.testing.assert_array_equal(stats.gamma.cdf(x, 3.0), sst.gamma.cdf(x, 3.0))
    np.testing.assert_array_equal(cr.grad(lambda a: stats.gamma.cdf(x, a)[0])(3.0), 0.0)
    y = np.array([-0.5, 1.5])
    for f in ("cdf", "sf", "logcdf", "logsf"):
        np.testing.assert_array_equal(getattr(stats.beta, f)(y, 2.0, 3.0),
                                      getattr(sst.beta, f)(y, 2.0, 3.0))
        np.testing.assert_array_equal(
            cr.grad(lambda a: cr.sum(getattr(stats.beta, f)(y, a, 3.0)))(2.0), 0.0)


RANK_TWO = RNG.standard_normal((3, 2))   # a covariance A A^T of rank 2 in 3 dimensions
WEIGHTS = RNG.standard_normal((4, 2))    # points mean + A w on its plane


def test_a_singular_multivariate_normal_matches_scipy():
    mean = RNG.standard_normal(3)
    cov = RANK_TWO @ RANK_TWO.T
    points = mean + WEIGHTS @ RANK_TWO.T
    off = np.vstack([points, points[0] + np.linalg.svd(RANK_TWO)[0][:, 2]])  # one off it
    np.testing.assert_allclose(
        stats.multivariate_normal.logpdf(off, mean, cov, allow_singular=True),
        sst.multivariate_normal.logpdf(off, mean, cov, allow_singular=True), rtol=1e-10)
    np.testing.assert_allclose(
        stats.multivariate_normal.pdf(points[1], mean, cov, allow_singular=True),
        sst.multivariate_normal.pdf(points[1], mean, cov, allow_singular=True), rtol=1e-10)
    with pytest.raises(ValueError, match="multivariate_normal: cov must be positive semidef"):
        stats.multivariate_normal.logpdf(points, mean, -cov, allow_singular=True)


def test_a_singular_multivariate_normal_is_differentiable_along_its_rank():
    """On the plane of A's columns, the points mean + A w have log-density
    -(2 log(2 pi) + log det(A^T A) + |w|^2) / 2: JAX's derivatives of that, in A, to
    second order, are the oracle for ours through the covariance A A^T."""
    mean = RNG.standard_normal(3)

    def ours(a):
        return cr.sum(stats.multivariate_normal.logpdf(mean + WEIGHTS @ a.T, mean, a @ a.T,
                                                       allow_singular=True))

    def theirs(a):
        sign, log_det = jnp.linalg.slogdet(a.T @ a)
        return jnp.sum(-0.5 * (2 * np.log(2 * np.pi) + log_det + jnp.sum(WEIGHTS ** 2, 1)))

    np.testing.assert_allclose(cr.grad(ours)(RANK_TWO), jax.jit(jax.grad(theirs))(RANK_TWO),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.hessian(ours)(RANK_TWO),
                               jax.jit(jax.hessian(theirs))(RANK_TWO),
                               rtol=1e-8, atol=1e-11)
    d = RNG.standard_normal(RANK_TWO.shape)
    np.testing.assert_allclose(cr.jvp(ours, (RANK_TWO,), (d,))[1],
                               jax.jit(lambda a, d: jax.jvp(theirs, (a,), (d,))[1])(
                                   RANK_TWO, d), rtol=1e-9)


def test_allow_singular_on_a_full_rank_covariance_is_the_ordinary_density():
    points, mean = RNG.standard_normal((5, 3)), RNG.standard_normal(3)
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    total = lambda x, m, c: cr.sum(stats.multivariate_normal.logpdf(x, m, c,
                                                                    allow_singular=True))
    jax_total = lambda x, m, c: jnp.sum(jst.multivariate_normal.logpdf(x, m, c))
    np.testing.assert_allclose(total(points, mean, cov), jax.jit(jax_total)(points, mean, cov),
                               rtol=1e-12)
    for argnum in (0, 1):
        np.testing.assert_allclose(cr.hessian(total, argnums=argnum)(points, mean, cov),
                                   jax.jit(jax.hessian(jax_total, argnums=argnum))(
                                       points, mean, cov), rtol=1e-9, atol=1e-12)
    d = RNG.standard_normal((3, 3))
    d = d + d.T
    slope = lambda c: cr.jvp(lambda c: total(points, mean, c), (c,), (d,))[1]
    jax_slope = lambda c: jax.jvp(lambda c: jax_total(points, mean, c), (c,), (d,))[1]
    np.testing.assert_allclose(cr.jvp(slope, (cov,), (d,))[1],
                               jax.jit(lambda c: jax.jvp(jax_slope, (c,), (d,))[1])(cov),
                               rtol=1e-9)


def test_a_covariance_may_be_a_vector_or_a_number_as_in_scipy():
    x, mean = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    for cov in (np.array([1.0, 2.0, 3.0]), 2.5):
        np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, mean, cov),
                                   sst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(
        cr.grad(lambda c: cr.sum(stats.multivariate_normal.logpdf(x, mean, c)))(
            np.array([1.0, 2.0, 3.0])),
        jax.jit(jax.grad(lambda c: jnp.sum(jst.multivariate_normal.logpdf(x, mean,
                                                                          jnp.diag(c)))))(
            np.array([1.0, 2.0, 3.0])), rtol=1e-11)
