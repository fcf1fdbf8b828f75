"""cr.random: keys and pure samplers, as JAX's jax.random. The same key gives the same
numbers eagerly and under cr.jit; different keys differ; each sampler has its
distribution (moments and a Kolmogorov-Smirnov test at fixed keys); samples are
constants of differentiation, and a reparameterised sample differentiates through its
parameters."""

import numpy as np
import pytest
import scipy.stats as st

import chainrule as cr
from chainrule import random


def test_a_key_gives_the_same_numbers_and_keys_differ():
    k = random.key(0)
    np.testing.assert_array_equal(random.normal(k, (5,)), random.normal(k, (5,)))
    np.testing.assert_array_equal(random.key(0), random.PRNGKey(0))
    a, b = random.split(k)
    assert not np.array_equal(random.normal(a, (5,)), random.normal(b, (5,)))
    assert not np.array_equal(random.normal(a, (5,)), random.normal(k, (5,)))
    np.testing.assert_array_equal(random.split(k, 3), random.split(k, 3))
    assert random.split(k, 3).shape == (3, 2) and random.split(k).dtype == np.uint32
    folded = [random.fold_in(k, i) for i in range(3)]
    assert len({tuple(f) for f in folded}) == 3
    np.testing.assert_array_equal(random.fold_in(k, 1), random.fold_in(k, 1))


def test_under_jit_a_key_is_an_input_and_each_call_draws_with_its_own():
    step = cr.jit(lambda key, scale: scale * random.normal(key, (4,)))
    for seed in range(3):  # traced at the first, replayed after
        k = random.key(seed)
        np.testing.assert_array_equal(step(k, 2.0), 2.0 * random.normal(k, (4,)))

    def noisy_step(w, key, t):
        sub = random.fold_in(key, t)
        return w - 0.1 * (w + random.normal(sub, w.shape))
    jitted = cr.jit(noisy_step)
    w_eager = w_jit = np.ones(3)
    key = random.key(7)
    for t in range(4):
        w_eager = noisy_step(w_eager, key, t)
        w_jit = jitted(w_jit, key, t)
        np.testing.assert_allclose(w_jit, w_eager, rtol=1e-15)


@pytest.mark.parametrize("name, sample, reference", [
    ("uniform", lambda k: random.uniform(k, (20_000,)), st.uniform()),
    ("uniform(2, 5)", lambda k: random.uniform(k, (20_000,), minval=2.0, maxval=5.0),
     st.uniform(2.0, 3.0)),
    ("normal", lambda k: random.normal(k, (20_000,)), st.norm()),
    ("exponential", lambda k: random.exponential(k, (20_000,)), st.expon()),
    ("gamma(2.5)", lambda k: random.gamma(k, 2.5, (20_000,)), st.gamma(2.5)),
    ("beta(2, 3)", lambda k: random.beta(k, 2.0, 3.0, (20_000,)), st.beta(2.0, 3.0)),
    ("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 0.5, (20_000,)),
     st.truncnorm(-1.0, 0.5)),
])
def test_each_sampler_has_its_distribution(name, sample, reference):
    x = np.asarray(sample(random.key(123)))
    assert st.kstest(x, reference.cdf).pvalue > 1e-3
    assert abs(x.mean() - reference.mean()) < 5 * reference.std() / np.sqrt(len(x))


def test_discrete_samplers():
    k = random.key(5)
    draws = random.bernoulli(k, 0.3, (20_000,))
    assert draws.dtype == bool and abs(draws.mean() - 0.3) < 0.02
    counts = np.bincount(random.categorical(k, np.log([0.2, 0.5, 0.3]), shape=(20_000,)),
                         minlength=3) / 20_000
    np.testing.assert_allclose(counts, [0.2, 0.5, 0.3], atol=0.02)
    ints = random.randint(k, (1000,), 3, 7)
    assert ints.min() == 3 and ints.max() == 6
    assert sorted(random.permutation(k, 6).tolist()) == list(range(6))
    rows = random.permutation(k, np.arange(12.0).reshape(4, 3))
    assert sorted(rows[:, 0].tolist()) == [0.0, 3.0, 6.0, 9.0]
    assert set(random.choice(k, np.array([10.0, 20.0]), (50,)).tolist()) <= {10.0, 20.0}
    assert sorted(random.choice(k, 5, (5,), replace=False).tolist()) == list(range(5))
    v = random.dirichlet(k, np.array([1.0, 2.0, 3.0]), (1000,))
    np.testing.assert_allclose(v.sum(axis=1), 1.0)
    np.testing.assert_allclose(v.mean(axis=0), [1 / 6, 2 / 6, 3 / 6], atol=0.02)


def test_samples_are_constants_and_reparameterised_ones_differentiate():
    k = random.key(9)
    eps = random.normal(k, (3,))
    loc, scale = 0.5, 2.0
    grads = cr.grad(lambda loc, scale: cr.sum(loc + scale * random.normal(k, (3,))),
                    argnums=(0, 1))(loc, scale)
    np.testing.assert_allclose(grads, (3.0, eps.sum()))
    d_bounds = cr.grad(lambda lo, hi: cr.sum(random.uniform(k, (3,), minval=lo, maxval=hi)),
                       argnums=(0, 1))(1.0, 4.0)
    u = random.uniform(k, (3,))
    np.testing.assert_allclose(d_bounds, ((1 - u).sum(), u.sum()))


def test_a_key_of_the_wrong_shape_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"random: a key is an array of two uint32 words "
                                         r".* got shape \(3,\)"):
        random.normal(np.zeros(3, dtype=np.uint32), (2,))
    with pytest.raises(ValueError, match="truncated_normal: expected lower < upper"):
        random.truncated_normal(random.key(0), 1.0, 0.0)


def test_under_vmap_each_mapped_key_draws_its_own_numbers_also_under_jit():
    keys = random.split(random.key(3), 4)
    one_by_one = np.stack([random.normal(k, (3,)) for k in keys])
    draw = cr.vmap(lambda k, s: s * random.normal(k, (3,)), in_axes=(0, None))
    np.testing.assert_array_equal(draw(keys, 1.0), one_by_one)
    jitted = cr.jit(draw)
    np.testing.assert_array_equal(jitted(keys, 1.0), one_by_one)
    others = random.split(random.key(4), 4)
    np.testing.assert_array_equal(jitted(others, 2.0),
                                  2.0 * np.stack([random.normal(k, (3,)) for k in others]))
    shared = cr.vmap(lambda x, k: x + random.normal(k, (3,)), in_axes=(0, None))(
        np.zeros((4, 3)), keys[0])
    np.testing.assert_array_equal(shared, np.tile(random.normal(keys[0], (3,)), (4, 1)))
    # a reparameterised draw per example differentiates through its parameters
    grads = cr.vmap(cr.grad(lambda m, k: cr.sum(m + 2.0 * random.normal(k, (3,)))),
                    in_axes=(None, 0))(1.5, keys)
    np.testing.assert_array_equal(grads, np.full(4, 3.0))
