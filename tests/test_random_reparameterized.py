"""cr.random's samples differentiated in their distributions' parameters, as JAX's are.

A gamma, beta or truncated normal number is drawn by rejection; its derivative in a
parameter is taken at its quantile u = F(x; theta) held fixed (implicit
reparameterization, chainrule.api.random_implicit). Two checks, each against someone
else:

* each sample's derivative equals the derivative of SciPy's quantile function at
  that u (central differences of ``scipy.stats.<dist>.ppf(u, theta +- h)``);
* for every sampler with a continuous parameter, the mean of the samples' derivatives
  is d/dtheta of the distribution's mean (or of E[log x], E[x^2]: closed forms, or
  SciPy's), within five standard errors: what makes a pathwise gradient estimator
  unbiased, so a zero or a wrong-signed derivative fails. (JAX's wald fails it: the
  slope of its root-choosing formula averages about 1.2 where the mean's is 1.)
"""

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import chainrule as cr
from chainrule import random

N = 40_000


def per_sample(sampler, theta):
    """Each sample and its derivative in theta (forward mode: one column)."""
    values = sampler(theta)
    derivatives = cr.jacfwd(sampler)(theta)
    return np.asarray(values), np.asarray(derivatives)


# --- each sample at its quantile, against SciPy's quantile function ---------------------

QUANTILE_CASES = {
    # name: (sampler given theta, theta, SciPy's distribution at theta)
    "gamma": (lambda k, a: random.gamma(k, a, (200,)), 2.5, lambda a: st.gamma(a)),
    "gamma-small-shape": (lambda k, a: random.gamma(k, a, (200,)), 0.3, lambda a: st.gamma(a)),
    "beta-a": (lambda k, a: random.beta(k, a, 3.0, (200,)), 1.7, lambda a: st.beta(a, 3.0)),
    "beta-b": (lambda k, b: random.beta(k, 1.7, b, (200,)), 3.0, lambda b: st.beta(1.7, b)),
    "truncated_normal-lower": (lambda k, lo: random.truncated_normal(k, lo, 1.5, (200,)),
                               -0.8, lambda lo: st.truncnorm(lo, 1.5)),
    "truncated_normal-upper": (lambda k, hi: random.truncated_normal(k, -0.8, hi, (200,)),
                               1.5, lambda hi: st.truncnorm(-0.8, hi)),
    "wald": (lambda k, m: random.wald(k, m, (200,)), 1.5, lambda m: st.invgauss(m)),
}


@pytest.mark.parametrize("name", sorted(QUANTILE_CASES))
def test_each_samples_derivative_is_that_of_scipys_quantile_at_its_level(name):
    draw, theta, dist = QUANTILE_CASES[name]
    key = random.key(7)
    x, dx = per_sample(lambda t: draw(key, t), theta)
    # each sample's level u under SciPy's distribution; SciPy's quantile function at u
    # gives the sample back, and its slope in theta at that fixed u is dx/dtheta
    u = dist(theta).cdf(x)
    np.testing.assert_allclose(dist(theta).ppf(u), x, rtol=1e-7, atol=1e-12)
    h = 1e-6
    expected = (dist(theta + h).ppf(u) - dist(theta - h).ppf(u)) / (2 * h)
    # central differences of a quantile function promise about 1e-6 here (its own
    # accuracy over a step of 1e-6)
    np.testing.assert_allclose(dx, expected, rtol=2e-5, atol=2e-5)


# --- unbiased: the mean derivative is the derivative of the mean ------------------------

def _truncnorm_mean(lo, hi):
    return st.truncnorm.mean(lo, hi)


MEAN_CASES = {
    # name: (sampler of N numbers given theta, theta, h(x) averaged, d/dtheta E[h(x)])
    "gamma": (lambda k, a: random.gamma(k, a, (N,)), 2.0, lambda x: x, lambda a: 1.0),
    "gamma-small": (lambda k, a: random.gamma(k, a, (N,)), 0.4, lambda x: x, lambda a: 1.0),
    "beta-a": (lambda k, a: random.beta(k, a, 3.0, (N,)), 2.0, lambda x: x,
               lambda a: 3.0 / (a + 3.0) ** 2),
    "beta-b": (lambda k, b: random.beta(k, 2.0, b, (N,)), 3.0, lambda x: x,
               lambda b: -2.0 / (2.0 + b) ** 2),
    "dirichlet": (lambda k, a0: random.dirichlet(
        k, a0 * np.array([1.0, 0.0, 0.0]) + np.array([0.0, 2.0, 3.0]), (N,))[:, 0], 1.5,
        lambda x: x, lambda a0: 5.0 / (a0 + 5.0) ** 2),
    "chisquare": (lambda k, df: random.chisquare(k, df, (N,)), 3.0, lambda x: x,
                  lambda df: 1.0),
    "t": (lambda k, df: random.t(k, df, (N,)), 6.0, lambda x: x * x,
          lambda df: -2.0 / (df - 2.0) ** 2),
    "f-dfden": (lambda k, d2: random.f(k, 4.0, d2, (N,)), 9.0, lambda x: x,
                lambda d2: -2.0 / (d2 - 2.0) ** 2),
    "f-dfnum": (lambda k, d1: random.f(k, d1, 9.0, (N,)), 4.0, lambda x: cr.log(x),
                lambda d1: -1.0 / d1 + sp.polygamma(1, d1 / 2.0) / 2.0),
    "loggamma": (lambda k, a: random.loggamma(k, a, (N,)), 1.5, lambda x: x,
                 lambda a: sp.polygamma(1, a)),
    "loggamma-tiny": (lambda k, a: random.loggamma(k, a, (N,)), 0.05, lambda x: x,
                      lambda a: sp.polygamma(1, a)),
    "wald": (lambda k, m: random.wald(k, m, (N,)), 1.5, lambda x: x, lambda m: 1.0),
    # a point uniform in the unit p-ball of 3 dimensions: its p-norm to the p has mean
    # 3 / (3 + p), for every p
    "ball": (lambda k, p: cr.sum(cr.abs(random.ball(k, 3, p, (N,))) ** p, axis=-1), 1.5,
             lambda x: x, lambda p: -3.0 / (3.0 + p) ** 2),
    "generalized_normal": (lambda k, p: random.generalized_normal(k, p, (N,)), 1.5,
                           lambda x: cr.abs(x),
                           lambda p: np.exp(sp.gammaln(2 / p) - sp.gammaln(1 / p))
                           * (-2 * sp.digamma(2 / p) + sp.digamma(1 / p)) / p ** 2),
    "truncated_normal-lower": (lambda k, lo: random.truncated_normal(k, lo, 1.5, (N,)),
                               -0.8, lambda x: x,
                               lambda lo: (_truncnorm_mean(lo + 1e-5, 1.5)
                                           - _truncnorm_mean(lo - 1e-5, 1.5)) / 2e-5),
    "truncated_normal-upper": (lambda k, hi: random.truncated_normal(k, -0.8, hi, (N,)),
                               1.5, lambda x: x,
                               lambda hi: (_truncnorm_mean(-0.8, hi + 1e-5)
                                           - _truncnorm_mean(-0.8, hi - 1e-5)) / 2e-5),
}


@pytest.mark.parametrize("name", sorted(MEAN_CASES))
def test_the_mean_derivative_is_the_derivative_of_the_mean(name):
    draw, theta, h, expected = MEAN_CASES[name]
    key = random.key(11)
    per = np.asarray(cr.jacfwd(lambda t: h(draw(key, t)))(theta))
    assert np.all(np.isfinite(per)), name
    error = per.std() / np.sqrt(N)
    assert abs(per.mean() - expected(theta)) < 5 * error, (per.mean(), expected(theta), error)
    # and reverse mode gives the same numbers: the gradient of the sum is their sum
    total = cr.grad(lambda t: cr.sum(h(draw(key, t))))(theta)
    np.testing.assert_allclose(total, per.sum(), rtol=1e-9)


# --- what holds around it ---------------------------------------------------------------

def test_a_value_is_the_same_whether_or_not_it_is_differentiated():
    key = random.key(3)
    for draw in (lambda a: random.gamma(key, a, (5,)), lambda a: random.beta(key, a, 2.0, (5,)),
                 lambda a: random.t(key, a, (5,)), lambda a: random.loggamma(key, a, (5,)),
                 lambda a: random.chisquare(key, a, (5,)),
                 lambda a: random.truncated_normal(key, -a, a, (5,)),
                 lambda a: random.wald(key, a, (5,))):
        value, _ = cr.value_and_grad(lambda a: cr.sum(draw(a)))(2.5)
        assert value == np.sum(draw(2.5))


def test_a_second_derivative_in_a_shape_parameter_raises_as_in_jax():
    key = random.key(0)
    with pytest.raises(TypeError, match="cr.random.gamma: no second derivative"):
        cr.hessian(lambda a: cr.sum(random.gamma(key, a, (3,))))(2.0)
    with pytest.raises(TypeError, match="cr.random.beta: no second derivative"):
        cr.grad(cr.grad(lambda b: cr.sum(random.beta(key, 2.0, b, (3,)))))(2.0)


def test_under_jit_a_new_key_draws_new_numbers_and_their_derivative():
    step = cr.jit(cr.grad(lambda a, k: cr.sum(random.gamma(k, a, (4,))), argnums=0))
    for seed in (1, 2):
        k = random.key(seed)
        eager = cr.grad(lambda a: cr.sum(random.gamma(k, a, (4,))))(1.5)
        np.testing.assert_allclose(step(1.5, k), eager, rtol=1e-12)


def test_vmap_over_keys_gives_each_keys_derivative():
    keys = random.split(random.key(4), 3)
    per_key = cr.vmap(cr.grad(lambda a, k: cr.sum(random.gamma(k, a, (4,)))),
                      in_axes=(None, 0))(2.0, keys)
    for k, g in zip(keys, per_key):
        np.testing.assert_allclose(g, cr.grad(lambda a: cr.sum(random.gamma(k, a, (4,))))(2.0),
                                   rtol=1e-12)


MAPPED = {  # a sampler of a parameter m in [1, 2]
    "gamma": lambda k, m: random.gamma(k, m, (4,)),
    "beta": lambda k, m: random.beta(k, m, 2.0, (4,)),
    "dirichlet": lambda k, m: random.dirichlet(k, m * np.array([1.0, 2.0]), (2,))[:, 0],
    "chisquare": lambda k, m: random.chisquare(k, m, (4,)),
    "f": lambda k, m: random.f(k, m + 2.0, 5.0, (4,)),
    "t": lambda k, m: random.t(k, m + 2.0, (4,)),
    "loggamma": lambda k, m: random.loggamma(k, m, (4,)),
    "generalized_normal": lambda k, m: random.generalized_normal(k, m, (4,)),
    "ball": lambda k, m: random.ball(k, 2, m + 0.5, (3,)),
    "truncated_normal": lambda k, m: random.truncated_normal(k, -m, m, (4,)),
    "wald": lambda k, m: random.wald(k, m, (4,)),
}


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_a_batch_of_parameters_gives_each_its_own_derivative_in_every_order(name):
    """vmap(grad), grad(vmap) and jacfwd(vmap) over a batch of parameters, against
    each parameter's own gradient: the draw reads each example's numbers, and the
    derivative is attached once (not also through the formula that draws)."""
    key, ms = random.key(2), np.array([1.0, 1.4, 2.0])

    def one(m):
        return cr.sum(MAPPED[name](key, m))
    each = np.array([cr.grad(one)(m) for m in ms])
    np.testing.assert_allclose(cr.vmap(cr.grad(one))(ms), each, rtol=1e-10)
    np.testing.assert_allclose(cr.grad(lambda v: cr.sum(cr.vmap(one)(v)))(ms), each,
                               rtol=1e-10)
    np.testing.assert_allclose(np.diagonal(cr.jacfwd(cr.vmap(one))(ms)), each, rtol=1e-10)


def test_truncated_normal_refuses_crossed_bounds_eagerly_under_vmap_and_jit():
    key = random.key(0)
    message = "truncated_normal: expected lower < upper, got 1.0 and 0.5"
    with pytest.raises(ValueError, match=message):
        random.truncated_normal(key, 1.0, 0.5)
    with pytest.raises(ValueError, match=message):
        cr.vmap(lambda lo: random.truncated_normal(key, lo, 0.5))(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=message):
        cr.jit(lambda lo: random.truncated_normal(key, lo, 0.5))(1.0)
