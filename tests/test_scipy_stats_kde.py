"""chainrule.scipy.stats.gaussian_kde against jax.scipy.stats.gaussian_kde (values,
integrals and derivatives) and scipy.stats.gaussian_kde (values): one and two
variables, weighted or not, every way of choosing the bandwidth."""

import jax
import jax.numpy as jnp
import jax.scipy.stats as jstats
import numpy as np
import pytest
import scipy.stats

import chainrule as cr
import chainrule.scipy.stats as stats
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

_rng = seeded("gaussian_kde")
ONE = _rng.standard_normal(30)                       # 30 samples of one variable
TWO = _rng.standard_normal((2, 40)) * [[1.0], [0.5]]  # 40 samples of two
WEIGHTS = _rng.uniform(0.5, 2.0, 40)
AT_ONE = np.linspace(-3.0, 3.0, 7)
AT_TWO = _rng.standard_normal((2, 5))

CASES = {
    "one variable": (ONE, AT_ONE, {}),
    "two variables": (TWO, AT_TWO, {}),
    "two variables, weighted": (TWO, AT_TWO, {"weights": WEIGHTS}),
    "silverman": (ONE, AT_ONE, {"bw_method": "silverman"}),
    "a number": (TWO, AT_TWO, {"bw_method": 0.3}),
    "a function": (ONE, AT_ONE, {"bw_method": lambda kde: 0.5 * kde.neff ** -0.2}),
}


def _same(ours, theirs, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", sorted(CASES))
def test_density_log_density_and_bandwidth_equal_jax_and_scipy(case):
    data, at, keywords = CASES[case]
    ours, theirs = stats.gaussian_kde(data, **keywords), jstats.gaussian_kde(data, **keywords)
    scipys = scipy.stats.gaussian_kde(data, **keywords)
    _same(ours(at), theirs(at))
    _same(ours.pdf(at), scipys.pdf(at))
    _same(ours.logpdf(at), theirs.logpdf(at))
    _same(ours.logpdf(at), scipys.logpdf(at))
    for name in ("covariance", "inv_cov", "neff", "weights", "dataset"):
        _same(getattr(ours, name), getattr(scipys, name))
    assert (ours.d, ours.n) == (scipys.d, scipys.n)
    _same(ours.logpdf(at[..., 0]), theirs.logpdf(at[..., 0]))  # one point


def test_log_density_far_from_the_data_does_not_underflow():
    kde = stats.gaussian_kde(ONE, bw_method=0.05)
    far = np.array([40.0])
    assert kde.pdf(far)[0] == 0.0 and np.isfinite(kde.logpdf(far)[0])
    _same(kde.logpdf(far), jstats.gaussian_kde(ONE, bw_method=0.05).logpdf(far))


def test_integrals_equal_jax():
    ours, theirs = stats.gaussian_kde(TWO, weights=WEIGHTS), jstats.gaussian_kde(TWO, weights=WEIGHTS)
    mean, cov = np.array([0.3, -0.2]), np.array([[1.0, 0.2], [0.2, 0.5]])
    _same(ours.integrate_gaussian(mean, cov), theirs.integrate_gaussian(mean, cov))
    other = TWO[:, :12] + 0.5
    _same(ours.integrate_kde(stats.gaussian_kde(other)),
          theirs.integrate_kde(jstats.gaussian_kde(other)))
    one, jone = stats.gaussian_kde(ONE), jstats.gaussian_kde(ONE)
    _same(one.integrate_box_1d(-0.5, 1.0), jone.integrate_box_1d(-0.5, 1.0))
    _same(one.integrate_box_1d(-np.inf, np.inf), 1.0)


def test_derivatives_in_the_bandwidth_the_data_the_weights_and_the_points_equal_jax():
    """A bandwidth fitted by its gradient, samples and weights moved by theirs."""
    def likelihood(library, kde):
        def f(factor, data, weights, at):
            return library.sum(kde(data, bw_method=factor, weights=weights).logpdf(at))
        return f

    ours = likelihood(cr, stats.gaussian_kde)
    theirs = likelihood(jnp, jstats.gaussian_kde)
    args = (0.4, TWO, WEIGHTS, AT_TWO)
    every = (0, 1, 2, 3)
    for got, want in zip(cr.grad(ours, argnums=every)(*args),
                         jax.grad(theirs, argnums=every)(*args)):
        _same(got, want, rtol=1e-9)
    tangents = tuple(seeded("gaussian_kde", "tangent", str(i)).standard_normal(np.shape(a))
                     for i, a in enumerate(args))
    _same(cr.jvp(ours, args, tangents)[1], jax.jvp(theirs, args, tangents)[1], rtol=1e-9)
    _same(cr.hessian(lambda data: ours(0.4, data, WEIGHTS, AT_TWO))(TWO),
          jax.jit(jax.hessian(lambda data: theirs(0.4, data, WEIGHTS, AT_TWO)))(TWO),
          rtol=1e-8, atol=1e-10)


def test_jit_builds_and_evaluates_it_and_vmap_maps_the_points():
    kde = stats.gaussian_kde(TWO)
    jitted = cr.jit(lambda data, at: stats.gaussian_kde(data).logpdf(at))
    _same(jitted(TWO, AT_TWO), kde.logpdf(AT_TWO))
    _same(jitted(TWO + 0.1, AT_TWO), stats.gaussian_kde(TWO + 0.1).logpdf(AT_TWO))
    # a pytree: the estimator itself is an argument of a jitted function
    _same(cr.jit(lambda k, at: k.pdf(at))(kde, AT_TWO), kde.pdf(AT_TWO))
    _same(cr.vmap(lambda point: kde.pdf(point)[0])(AT_TWO.T), kde.pdf(AT_TWO))


def test_resample_draws_from_the_estimate():
    """(chainrule's generator is its own, so the numbers are not JAX's: the checks are
    the shape, the key's determinism and the moments.)"""
    kde = stats.gaussian_kde(TWO, weights=WEIGHTS)
    key = cr.random.PRNGKey(0)
    draws = np.asarray(kde.resample(key, (20000,)))
    assert draws.shape == (2, 20000)
    np.testing.assert_array_equal(kde.resample(key, (5,)), kde.resample(key, (5,)))
    assert np.asarray(kde.resample(key)).shape == (2,)
    weights = WEIGHTS / WEIGHTS.sum()
    mean = TWO @ weights
    spread = np.cov(TWO, aweights=weights, bias=True) + np.asarray(kde.covariance)
    np.testing.assert_allclose(draws.mean(axis=1), mean, atol=0.03)
    np.testing.assert_allclose(np.cov(draws), spread, atol=0.05)


def test_bad_input_is_refused_in_one_line():
    cases = [(lambda: stats.gaussian_kde(np.array([1.0])), "expected more than one sample"),
             (lambda: stats.gaussian_kde(ONE, bw_method="wide"), "bw_method='wide'"),
             (lambda: stats.gaussian_kde(TWO, weights=np.ones(3)), "weights of shape (3,)"),
             (lambda: stats.gaussian_kde(ONE + 1j), "complex data"),
             (lambda: stats.gaussian_kde(TWO).pdf(np.ones((3, 2))), "points of shape (3, 2)"),
             (lambda: stats.gaussian_kde(TWO).integrate_box_1d(0.0, 1.0), "has 2 variables"),
             (lambda: stats.gaussian_kde(TWO).integrate_box([0, 0], [1, 1]), "integrate_box_1d"),
             (lambda: stats.gaussian_kde(ONE).set_bandwidth("scott"), "make a new"),
             (lambda: stats.gaussian_kde(ONE).integrate_kde(stats.gaussian_kde(TWO)),
              "2 variables against 1")]
    for call, message in cases:
        with pytest.raises(ValueError) as info:
            call()
        assert message in str(info.value) and "\n" not in str(info.value)
