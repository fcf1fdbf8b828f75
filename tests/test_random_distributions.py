"""cr.random's other samplers (api/random_distributions.py), as jax.random's: shapes and
dtypes as JAX gives them (64-bit), the same key gives the same numbers and different
keys differ, each has its distribution (a Kolmogorov-Smirnov or chi-square test at a
fixed key against scipy.stats, or moments with a bound a wrong distribution fails), and
under cr.jit each call draws with its own key what the eager call draws. The
reparameterised samples differentiate through their parameters."""

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np
import pytest
import scipy.stats as st

import chainrule as cr
from chainrule import random

jax.config.update("jax_enable_x64", True)

N = 20_000

# (id, chainrule's draw, JAX's draw: the same call)
CALLS = [
    ("bits", lambda r, k, a: r.bits(k, (3, 2))),
    ("bits(uint8)", lambda r, k, a: r.bits(k, (4,), a.uint8)),
    ("rademacher", lambda r, k, a: r.rademacher(k, (5,))),
    ("cauchy", lambda r, k, a: r.cauchy(k, (2, 3))),
    ("laplace", lambda r, k, a: r.laplace(k, (3,))),
    ("logistic", lambda r, k, a: r.logistic(k, (3,))),
    ("gumbel", lambda r, k, a: r.gumbel(k, (3,))),
    ("maxwell", lambda r, k, a: r.maxwell(k, (3,))),
    ("double_sided_maxwell", lambda r, k, a: r.double_sided_maxwell(k, a.zeros(3), 1.0, (2,))),
    ("lognormal", lambda r, k, a: r.lognormal(k, a.ones(3))),
    ("chisquare", lambda r, k, a: r.chisquare(k, a.array([1.0, 2.0]))),
    ("f", lambda r, k, a: r.f(k, 2.0, a.array([3.0, 4.0]))),
    ("t", lambda r, k, a: r.t(k, 3.0, (4,))),
    ("loggamma", lambda r, k, a: r.loggamma(k, a.array([0.5, 2.0]))),
    ("generalized_normal", lambda r, k, a: r.generalized_normal(k, 1.5, (3,))),
    ("pareto", lambda r, k, a: r.pareto(k, a.array([1.0, 2.0]))),
    ("rayleigh", lambda r, k, a: r.rayleigh(k, 2.0, (3,))),
    ("wald", lambda r, k, a: r.wald(k, a.array([1.0, 2.0]))),
    ("weibull_min", lambda r, k, a: r.weibull_min(k, a.ones(3), 2.0)),
    ("triangular", lambda r, k, a: r.triangular(k, 0.0, a.array([0.2, 0.5]), 1.0)),
    ("geometric", lambda r, k, a: r.geometric(k, 0.3, (4,))),
    ("poisson", lambda r, k, a: r.poisson(k, a.array([1.0, 3.0]))),
    ("binomial", lambda r, k, a: r.binomial(k, a.array([3.0, 4.0]), 0.3)),
    ("multinomial", lambda r, k, a: r.multinomial(k, 5.0, a.array([0.2, 0.8]), shape=(3, 2))),
    ("multivariate_normal", lambda r, k, a: r.multivariate_normal(k, a.zeros((3, 2)),
                                                               a.eye(2))),
    ("orthogonal", lambda r, k, a: r.orthogonal(k, 3, (2,))),
    ("orthogonal(m=2)", lambda r, k, a: r.orthogonal(k, 3, (2,), m=2)),
    ("orthogonal(m=4)", lambda r, k, a: r.orthogonal(k, 3, (), m=4)),
    ("ball", lambda r, k, a: r.ball(k, 3, 1, (2,))),
]


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_shape_and_dtype_are_jaxs_and_a_key_gives_its_own_numbers(name, call):
    ours = np.asarray(call(random, random.key(0), np))
    theirs = call(jr, jr.key(0), jnp)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(call(random, random.key(0), np), ours)
    others = [np.asarray(call(random, random.key(s), np)) for s in range(1, 4)]
    assert any(not np.array_equal(o, ours) for o in others)


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_under_jit_each_call_draws_with_its_own_key_what_eager_draws(name, call):
    jitted = cr.jit(lambda k: call(random, k, np))
    draws = []
    for seed in range(3):  # traced at the first, replayed after
        k = random.key(seed)
        draws.append(np.asarray(jitted(k)))
        np.testing.assert_array_equal(draws[-1], call(random, k, np))
    assert not np.array_equal(draws[1], draws[2]) or name == "rademacher"


MORE_CALLS = [  # random.py's samplers, beside CALLS
    ("uniform", lambda r, k, a: r.uniform(k, (3,), minval=-1.0, maxval=2.0)),
    ("normal", lambda r, k, a: r.normal(k, (2, 2))),
    ("bernoulli", lambda r, k, a: r.bernoulli(k, 0.3, (4,))),
    ("categorical", lambda r, k, a: r.categorical(k, a.array([0.0, 1.0, -1.0]), shape=(3,))),
    ("randint", lambda r, k, a: r.randint(k, (3,), 0, 10)),
    ("permutation", lambda r, k, a: r.permutation(k, 5)),
    ("choice", lambda r, k, a: r.choice(k, 6, (3,), replace=False)),
    ("truncated_normal", lambda r, k, a: r.truncated_normal(k, -1.0, 0.5, (3,))),
    ("exponential", lambda r, k, a: r.exponential(k, (3,))),
    ("gamma", lambda r, k, a: r.gamma(k, a.array([0.5, 3.0]))),
    ("beta", lambda r, k, a: r.beta(k, 2.0, a.array([0.5, 3.0]))),
    ("dirichlet", lambda r, k, a: r.dirichlet(k, a.array([0.1, 1.0, 5.0]), (2,))),
]


@pytest.mark.parametrize("name, call", CALLS + MORE_CALLS,
                         ids=[c[0] for c in CALLS + MORE_CALLS])
def test_under_vmap_each_mapped_key_draws_its_own_numbers_also_under_jit(name, call):
    keys = random.split(random.key(5), 3)
    one_by_one = np.stack([np.asarray(call(random, k, np)) for k in keys])
    mapped = cr.vmap(lambda k: call(random, k, np))
    np.testing.assert_array_equal(mapped(keys), one_by_one)
    program = cr.jit(cr.vmap(cr.jit(lambda k: call(random, k, np))))
    for seed in (6, 7):  # traced at the first keys, replayed at the next
        others = random.split(random.key(seed), 3)
        np.testing.assert_array_equal(program(others),
                                      np.stack([np.asarray(call(random, k, np))
                                                for k in others]))


def _signed_square(x, loc, scale):
    y = (np.asarray(x) - loc) / scale
    return np.sign(y) * y * y / 2


# (id, a sample of N at a key, scipy's distribution) for the Kolmogorov-Smirnov test
CONTINUOUS = [
    ("cauchy", lambda k: random.cauchy(k, (N,)), st.cauchy()),
    ("laplace", lambda k: random.laplace(k, (N,)), st.laplace()),
    ("logistic", lambda k: random.logistic(k, (N,)), st.logistic()),
    ("gumbel", lambda k: random.gumbel(k, (N,)), st.gumbel_r()),
    ("maxwell", lambda k: random.maxwell(k, (N,)), st.maxwell()),
    # sign(x - loc) (x - loc)**2 / (2 scale**2): a random sign times a gamma(1.5) number
    ("double_sided_maxwell", lambda k: _signed_square(
        random.double_sided_maxwell(k, 1.0, 2.0, (N,)), 1.0, 2.0), st.dgamma(1.5)),
    ("lognormal", lambda k: random.lognormal(k, 0.7, (N,)), st.lognorm(0.7)),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (N,)), st.chi2(3.0)),
    ("f", lambda k: random.f(k, 4.0, 7.0, (N,)), st.f(4.0, 7.0)),
    ("t", lambda k: random.t(k, 3.0, (N,)), st.t(3.0)),
    ("generalized_normal", lambda k: random.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5)),
    ("pareto", lambda k: random.pareto(k, 2.5, (N,)), st.pareto(2.5)),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0)),
    ("wald", lambda k: random.wald(k, 2.0, (N,)), st.invgauss(2.0)),  # (lambda = 1)
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.7, (N,)),
     st.weibull_min(1.7, scale=2.0)),
    ("triangular", lambda k: random.triangular(k, -1.0, 0.2, 2.0, (N,)),
     st.triang(0.4, loc=-1.0, scale=3.0)),
    ("loggamma: exp", lambda k: np.exp(random.loggamma(k, 2.5, (N,))), st.gamma(2.5)),
    ("loggamma(0.05)", lambda k: random.loggamma(k, 0.05, (N,)),
     st.loggamma(0.05)),  # scipy's loggamma is the log of a gamma number
]


@pytest.mark.parametrize("name, sample, reference", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_each_continuous_sampler_has_its_distribution(name, sample, reference):
    x = np.asarray(sample(random.key(123)))
    assert st.kstest(x, reference.cdf).pvalue > 1e-3
    # and a wrong one fails: the same test against the distribution scaled by 1.1
    assert st.kstest(x * 1.1, reference.cdf).pvalue < 1e-3


# (id, a sample of N at a key, scipy's probability mass function)
DISCRETE = [
    ("rademacher", lambda k: random.rademacher(k, (N,)), lambda v: np.where(
        np.abs(v) == 1, 0.5, 0.0)),
    ("geometric", lambda k: random.geometric(k, 0.3, (N,)), st.geom(0.3).pmf),
    ("poisson", lambda k: random.poisson(k, 3.5, (N,)), st.poisson(3.5).pmf),
    ("binomial", lambda k: random.binomial(k, 12, 0.3, (N,)), st.binom(12, 0.3).pmf),
]


def _chi_square_p(x, pmf):
    values, counts = np.unique(x, return_counts=True)
    expected = N * pmf(values)
    rare = expected < 5  # pooled into one cell, as the test asks
    observed, expected = counts[~rare], expected[~rare]
    if N - expected.sum() > 1e-9 * N:  # (the cell of the rest, where there is one)
        observed = np.append(observed, N - observed.sum())
        expected = np.append(expected, N - expected.sum())
    return st.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("name, sample, pmf", DISCRETE, ids=[c[0] for c in DISCRETE])
def test_each_discrete_sampler_has_its_distribution_by_chi_square(name, sample, pmf):
    x = np.asarray(sample(random.key(321)))
    assert _chi_square_p(x, pmf) > 1e-3
    assert np.all(pmf(np.unique(x)) > 0)  # nothing off the support


def test_the_geometric_count_starts_at_one_and_a_shifted_one_fails():
    x = np.asarray(random.geometric(random.key(4), 0.3, (N,)))
    assert x.min() == 1
    assert _chi_square_p(x - 1, st.geom(0.3).pmf) < 1e-6


def test_multinomial_counts_have_the_means_and_covariance_of_the_distribution():
    p = np.array([0.2, 0.5, 0.3])
    x = np.asarray(random.multinomial(random.key(5), 10, p, shape=(N, 3)))
    np.testing.assert_array_equal(x.sum(axis=-1), 10.0)
    np.testing.assert_allclose(x.mean(axis=0), 10 * p, atol=5 * np.sqrt(10 * 0.25 / N))
    np.testing.assert_allclose(np.cov(x.T), 10 * (np.diag(p) - np.outer(p, p)), atol=0.08)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_has_its_mean_and_covariance_by_every_method(method):
    mean = np.array([1.0, -2.0, 0.5])
    a = np.array([[1.0, 0.3, 0.0], [0.2, 1.5, 0.4], [0.0, -0.5, 0.7]])
    cov = a @ a.T
    x = np.asarray(random.multivariate_normal(random.key(6), mean, cov, (N,), method=method))
    assert np.all(np.abs(x.mean(axis=0) - mean) < 5 * np.sqrt(np.diag(cov) / N))
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    # whitened, each coordinate is standard normal
    white = np.linalg.solve(np.linalg.cholesky(cov), (x - mean).T)
    for row in white:
        assert st.kstest(row, st.norm.cdf).pvalue > 1e-3


def test_orthogonal_matrices_are_orthogonal_and_haar():
    q = np.asarray(random.orthogonal(random.key(7), 3, (N // 4,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(3), q.shape),
                               atol=1e-12)
    # under Haar measure an entry of a 3 x 3 orthogonal matrix is 2 B - 1, B ~ beta(1, 1):
    # uniform on [-1, 1]
    assert st.kstest(q[:, 0, 0], st.uniform(-1.0, 2.0).cdf).pvalue > 1e-3
    tall = np.asarray(random.orthogonal(random.key(7), 4, (), m=2))
    np.testing.assert_allclose(tall.T @ tall, np.eye(2), atol=1e-12)
    wide = np.asarray(random.orthogonal(random.key(7), 2, (), m=4))
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_ball_points_are_uniform_in_the_ball(p):
    d = 3
    x = np.asarray(random.ball(random.key(8), d, p, (N,)))
    radius = (np.abs(x) ** p).sum(axis=-1) ** (1 / p)
    assert radius.max() <= 1
    # uniform in the ball: the radius has CDF r**d
    assert st.kstest(radius, lambda r: np.clip(r, 0, 1) ** d).pvalue > 1e-3
    assert st.kstest(radius ** 1.1, lambda r: np.clip(r, 0, 1) ** d).pvalue < 1e-3


def test_bits_cover_the_range_and_rademacher_is_balanced():
    b = np.asarray(random.bits(random.key(9), (N,), np.uint8))
    counts = np.bincount(b, minlength=256)
    assert st.chisquare(counts).pvalue > 1e-3
    high = np.asarray(random.bits(random.key(9), (N,)))
    assert high.dtype == np.uint64 and (high >> np.uint64(63)).mean() == pytest.approx(0.5,
                                                                                       abs=0.02)


def test_reparameterised_samples_differentiate_through_their_parameters():
    k = random.key(10)
    e = np.asarray(random.exponential(k, (4,)))  # the draw pareto, rayleigh and weibull use
    z = np.asarray(random.normal(k, (4,)))
    np.testing.assert_allclose(random.pareto(k, 2.0, (4,)), np.exp(e / 2.0))
    np.testing.assert_allclose(cr.grad(lambda b: cr.sum(random.pareto(k, b, (4,))))(2.0),
                               np.sum(-e / 4.0 * np.exp(e / 2.0)))
    np.testing.assert_allclose(cr.grad(lambda s: cr.sum(random.rayleigh(k, s, (4,))))(2.0),
                               np.sum(np.sqrt(2 * e)))
    np.testing.assert_allclose(cr.grad(lambda c: cr.sum(random.weibull_min(k, 2.0, c, (4,))))(
        1.5), np.sum(2.0 * e ** (1 / 1.5) * np.log(e) * -1 / 1.5 ** 2))
    np.testing.assert_allclose(cr.grad(lambda s: cr.sum(random.lognormal(k, s, (4,))))(0.5),
                               np.sum(z * np.exp(0.5 * z)))
    # triangular: the inverse CDF, by central differences in each point
    def tri(left, mode, right):
        return cr.sum(random.triangular(k, left, mode, right, (4,)))
    at = (-1.0, 0.3, 2.0)
    grads = cr.grad(tri, argnums=(0, 1, 2))(*at)
    for i in range(3):
        up, down = list(at), list(at)
        up[i] += 1e-6
        down[i] -= 1e-6
        np.testing.assert_allclose(grads[i], (float(tri(*up)) - float(tri(*down))) / 2e-6,
                                   rtol=1e-6, atol=1e-8)
    # multivariate_normal: mean + L z, differentiable in the mean and the covariance
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    g_mean = cr.grad(lambda m: cr.sum(random.multivariate_normal(k, m, cov, (3,))))(np.zeros(2))
    np.testing.assert_allclose(g_mean, [3.0, 3.0])

    def total(c):
        return cr.sum(random.multivariate_normal(k, np.zeros(2), c, (3,)))
    g_cov = cr.grad(total)(cov)
    step = np.array([[1.0, 0.5], [0.5, -1.0]]) * 1e-6
    np.testing.assert_allclose(np.sum(g_cov * step / 1e-6),
                               (float(total(cov + step)) - float(total(cov - step))) / 2e-6,
                               rtol=1e-6)


def test_a_bad_argument_is_refused_in_one_line():
    k = random.key(0)
    with pytest.raises(ValueError, match="bits: dtype must be an unsigned integer type"):
        random.bits(k, (2,), np.int32)
    with pytest.raises(ValueError, match="multivariate_normal: method must be"):
        random.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match="random: a key is an array of two uint32 words"):
        random.cauchy(np.zeros(3, dtype=np.uint32))


def test_key_utilities_round_trip():
    k = random.key(3)
    np.testing.assert_array_equal(random.key_data(k), k)
    np.testing.assert_array_equal(random.wrap_key_data(random.key_data(k)), k)
    c = random.clone(k)
    np.testing.assert_array_equal(random.normal(c, (3,)), random.normal(k, (3,)))
    assert random.key_impl(k) == "philox"
    keys = random.split(k, 4)
    assert random.key_data(keys).shape == (4, 2)
    with pytest.raises(ValueError, match="wrap_key_data: a key is two uint32 words"):
        random.wrap_key_data(np.zeros(3, dtype=np.uint32))
