"""The rest of jax.random's samplers, and its key utilities, over cr.random's keys.

    >>> x = cr.random.laplace(cr.random.key(0), (4,))
    >>> x.shape, x.dtype
    ((4,), dtype('float64'))

As in cr.random, each sampler is a function of its key alone, drawn from NumPy's Philox
generator keyed by the key (NumPy's samplers, not JAX's bits), and under ``cr.jit`` one
call of the program, run again with each call's key. A sample differentiates in its
parameters as JAX's does: where it is an explicit function of a parameter-free draw
(``lognormal`` in sigma, ``pareto`` in b, ``rayleigh`` in scale, ``weibull_min`` in scale
and concentration, ``double_sided_maxwell`` in loc and scale, ``triangular`` in its
three points, ``multivariate_normal`` in mean and cov) through that function; where it
is made of gamma numbers (``chisquare``, ``f``, ``t``, ``loggamma``,
``generalized_normal``), or chosen between two roots (``wald`` in its mean), by
implicit reparameterization (``random_implicit``). The discrete samplers' numbers are
integers, with no derivative.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp, rules as ops
from ..primitive import Box, raw
from ..rules.predicates import less_equal
from .random_draws import as_shape as _shape, draw as _draw, generator as _generator
from .random_implicit import gamma_sample, wald_sample

Shape = int | Sequence[int]


__all__ = ["key_data", "wrap_key_data", "clone", "key_impl", "bits", "rademacher", "cauchy",
           "laplace", "logistic", "gumbel", "maxwell", "double_sided_maxwell", "lognormal",
           "chisquare", "f", "t", "loggamma", "generalized_normal", "pareto", "rayleigh",
           "wald", "weibull_min", "triangular", "geometric", "poisson", "binomial",
           "multinomial", "multivariate_normal", "orthogonal", "ball"]


def draw_with(sample, key, *params):
    """``sample(generator, *params)`` for this key, the parameters as NumPy arrays: one
    call of a cr.jit program, whose inputs are the key and the parameters. The draw
    reads the parameters' numbers only (under vmap, each example's); a sampler attaches
    their derivatives to what it draws (``differentiated``)."""
    return xp.call(lambda k, *p: sample(_generator(k), *(np.asarray(raw(v)) for v in p)),
                   raw(key), *(raw(p) for p in params))


def differentiated(*params):
    """Whether a transform follows any of the parameters (a sample's derivative is then
    attached to it)."""
    return any(isinstance(p, Box) for p in params)


def _batch(shape, *params):
    """``shape``, or the parameters' broadcast shape when it is None."""
    if shape is None:
        return np.broadcast_shapes(*(np.shape(raw(p)) for p in params))
    return _shape(shape)


# ---------------------------------------------------------------------------------------
# Keys: a key is its data (two uint32 words), so these are the identity, or a copy
# ---------------------------------------------------------------------------------------


def key_data(keys: ArrayLike) -> np.ndarray:
    """The uint32 words of a key (or of an array of keys): a key is its data here.

    >>> cr.random.key_data(cr.random.key(0)).tolist()
    [2968811710, 3677149159]
    """
    return np.asarray(raw(keys), dtype=np.uint32)


def wrap_key_data(key_bits_array: ArrayLike, *, impl: str | None = None) -> np.ndarray:
    """The key whose words are ``key_bits_array`` (its last axis of length 2): the
    inverse of ``key_data``. ``impl`` may only name this library's generator.

    >>> k = cr.random.wrap_key_data(np.array([1, 2], dtype=np.uint32))
    >>> bool((cr.random.key_data(k) == [1, 2]).all())
    True
    """
    if impl not in (None, "philox"):
        raise ValueError(f"wrap_key_data: cr.random's keys are NumPy's Philox keys; "
                         f"impl={impl!r} is not one")
    words = np.asarray(raw(key_bits_array), dtype=np.uint32)
    if words.shape[-1:] != (2,):
        raise ValueError(f"wrap_key_data: a key is two uint32 words, got an array of shape "
                         f"{words.shape}")
    return words


def clone(key: ArrayLike) -> np.ndarray:
    """A copy of the key (JAX's keys are consumed once under some settings; a copy is
    the same key).

    >>> k = cr.random.key(0)
    >>> bool((cr.random.clone(k) == k).all())
    True
    """
    return np.array(raw(key), dtype=np.uint32)


def key_impl(keys: ArrayLike) -> str:
    """The name of the generator behind the keys: NumPy's Philox.

    >>> cr.random.key_impl(cr.random.key(0))
    'philox'
    """
    np.asarray(raw(keys), dtype=np.uint32)
    return "philox"


# ---------------------------------------------------------------------------------------
# Samplers without parameters
# ---------------------------------------------------------------------------------------


def bits(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.uint64) -> Any:
    """Unsigned integers with every bit random (uint64 by default, as JAX in 64 bits).

    >>> b = cr.random.bits(cr.random.key(0), (3,), np.uint8)
    >>> b.shape, b.dtype
    ((3,), dtype('uint8'))
    """
    dt = np.dtype(dtype)
    if dt.kind != "u":
        raise ValueError(f"bits: dtype must be an unsigned integer type, got {dt}")
    return _draw(lambda g: g.integers(0, np.iinfo(dt).max, _shape(shape), dtype=dt,
                                      endpoint=True), key)


def rademacher(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.int64) -> Any:
    """-1 or +1, each with probability 1/2.

    >>> sorted(set(cr.random.rademacher(cr.random.key(0), (100,)).tolist()))
    [-1, 1]
    """
    return _draw(lambda g: (2 * g.integers(0, 2, _shape(shape)) - 1).astype(dtype), key)


def cauchy(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Standard Cauchy numbers (density 1 / (pi (1 + x**2))).

    >>> x = cr.random.cauchy(cr.random.key(0), (100_000,))
    >>> round(float(np.median(x)), 1)
    0.0
    """
    return _draw(lambda g: g.standard_cauchy(_shape(shape)).astype(dtype), key)


def laplace(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Standard Laplace numbers (density exp(-|x|) / 2).

    >>> round(float(cr.random.laplace(cr.random.key(0), (100_000,)).var()), 1)
    2.0
    """
    return _draw(lambda g: g.laplace(size=_shape(shape)).astype(dtype), key)


def logistic(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Standard logistic numbers (CDF expit(x)).

    >>> round(float(cr.random.logistic(cr.random.key(0), (100_000,)).var()), 1)   # pi**2 / 3
    3.3
    """
    return _draw(lambda g: g.logistic(size=_shape(shape)).astype(dtype), key)


def gumbel(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64,
           mode: str | None = None) -> Any:
    """Standard Gumbel numbers (density exp(-(x + exp(-x)))). ``mode`` ("low" or "high",
    JAX's choice of bits for float32) changes nothing here: NumPy draws in float64.

    >>> round(float(cr.random.gumbel(cr.random.key(0), (100_000,)).mean()), 1)   # Euler's 0.577
    0.6
    """
    if mode not in (None, "low", "high"):
        raise ValueError(f"gumbel: mode must be 'low', 'high' or None, got {mode!r}")
    return _draw(lambda g: g.gumbel(size=_shape(shape)).astype(dtype), key)


def maxwell(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Maxwell numbers: the length of a standard normal vector in three dimensions.

    >>> round(float((cr.random.maxwell(cr.random.key(0), (100_000,)) ** 2).mean()), 1)
    3.0
    """
    return _draw(lambda g: np.linalg.norm(g.standard_normal(_shape(shape) + (3,)),
                                          axis=-1).astype(dtype), key)


def double_sided_maxwell(key: ArrayLike, loc: ArrayLike, scale: ArrayLike,
                         shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """``loc + scale * s * m``, s a random sign and m a Maxwell number, of shape
    ``shape + broadcast(loc, scale).shape`` (as JAX); differentiable in loc and scale.

    >>> x = cr.random.double_sided_maxwell(cr.random.key(0), 1.0, 2.0, (100_000,))
    >>> round(float(x.mean())), round(float(((x - 1.0) ** 2).mean() / 4), 1)
    (1, 3.0)
    """
    full = _shape(shape) + np.broadcast_shapes(np.shape(raw(loc)), np.shape(raw(scale)))

    def sample(g):
        m = np.linalg.norm(g.standard_normal(full + (3,)), axis=-1)
        return (m * (2 * g.integers(0, 2, full) - 1)).astype(dtype)
    return loc + scale * _draw(sample, key)


def lognormal(key: ArrayLike, sigma: ArrayLike = 1.0, shape: Shape | None = None,
              dtype: DTypeLike = np.float64) -> Any:
    """``exp(sigma * normal(key))``; differentiable in sigma.

    >>> round(float(np.log(cr.random.lognormal(cr.random.key(0), 0.5, (100_000,))).std()), 2)
    0.5
    """
    unit = _draw(lambda g: g.standard_normal(_batch(shape, sigma), dtype=np.dtype(dtype)), key)
    return ops.exp(sigma * unit)


# ---------------------------------------------------------------------------------------
# Samplers with shape parameters (constants of differentiation)
# ---------------------------------------------------------------------------------------


def chisquare(key: ArrayLike, df: ArrayLike, shape: Shape | None = None,
              dtype: DTypeLike = np.float64) -> Any:
    """Chi-squared numbers with ``df`` degrees of freedom (twice gamma numbers of shape
    df / 2); differentiable in df.

    >>> round(float(cr.random.chisquare(cr.random.key(0), 3.0, (100_000,)).mean()), 1)
    3.0
    """
    x = draw_with(lambda g, df: g.chisquare(df, _batch(shape, df)).astype(dtype), key, df)
    return _chisquared(df, x)


def _chisquared(df, x):
    """A chi-squared number x, with its derivative in df attached where one is asked for:
    x is twice a gamma number of shape df / 2 (a halving and doubling that are exact)."""
    return 2.0 * gamma_sample(df / 2.0, x / 2.0) if differentiated(df) else x


def f(key: ArrayLike, dfnum: ArrayLike, dfden: ArrayLike, shape: Shape | None = None,
      dtype: DTypeLike = np.float64) -> Any:
    """F numbers with ``dfnum`` and ``dfden`` degrees of freedom: the ratio of two
    chi-squared numbers, each over its degrees of freedom; differentiable in both.

    >>> round(float(cr.random.f(cr.random.key(0), 4.0, 12.0, (100_000,)).mean()), 1)  # 12/10
    1.2
    """
    def sample(g, a, b):
        size = _batch(shape, a, b)
        return np.stack([g.chisquare(a, size), g.chisquare(b, size)])
    both = draw_with(sample, key, dfnum, dfden)
    out = (_chisquared(dfnum, both[0]) / dfnum) / (_chisquared(dfden, both[1]) / dfden)
    return ops.astype(out, dtype)


def t(key: ArrayLike, df: ArrayLike, shape: Shape | None = None,
      dtype: DTypeLike = np.float64) -> Any:
    """Student's t numbers with ``df`` degrees of freedom: a normal number over the root
    of a chi-squared one over df; differentiable in df.

    >>> round(float(cr.random.t(cr.random.key(0), 5.0, (100_000,)).var()), 1)   # 5 / 3
    1.7
    """
    def sample(g, df):
        size = _batch(shape, df)
        return np.stack([g.standard_normal(size), g.chisquare(df, size)])
    both = draw_with(sample, key, df)
    return ops.astype(both[0] / ops.sqrt(_chisquared(df, both[1]) / df), dtype)


def loggamma(key: ArrayLike, a: ArrayLike, shape: Shape | None = None,
             dtype: DTypeLike = np.float64) -> Any:
    """The logarithm of gamma numbers of shape ``a``, accurate for a tiny ``a`` (where the
    gamma number itself underflows): log G(a + 1) + log(U) / a; differentiable in a.

    >>> x = cr.random.loggamma(cr.random.key(0), 0.01, (3,))
    >>> bool(np.isfinite(x).all() and (x < 0).all())
    True
    """
    def sample(g, a):
        size = _batch(shape, a)
        return np.stack([g.standard_gamma(a + 1.0, size), g.random(size)])
    both = draw_with(sample, key, a)
    larger = gamma_sample(a + 1.0, both[0]) if differentiated(a) else both[0]
    return ops.astype(ops.log(larger) + ops.log(both[1]) / a, dtype)


def generalized_normal(key: ArrayLike, p: float, shape: Shape = (),
                       dtype: DTypeLike = np.float64) -> Any:
    """Numbers of density exp(-|x|**p) / (2 gamma(1 + 1/p)): a random sign times
    G**(1/p), G a gamma number of shape 1/p (p = 2: normal of variance 1/2);
    differentiable in p.

    >>> round(float(cr.random.generalized_normal(cr.random.key(0), 2.0, (100_000,)).var()), 2)
    0.5
    """
    def sample(g, p):
        size = _shape(shape)
        sign = 2 * g.integers(0, 2, size) - 1
        return np.stack([sign, g.standard_gamma(1.0 / p, size)])
    both = draw_with(sample, key, p)
    power = gamma_sample(1.0 / p, both[1]) if differentiated(p) else both[1]
    return ops.astype(both[0] * power ** (1.0 / p), dtype)


def wald(key: ArrayLike, mean: ArrayLike, shape: Shape | None = None,
         dtype: DTypeLike = np.float64) -> Any:
    """Wald (inverse Gaussian) numbers with mean ``mean`` and shape parameter 1, by
    Michael, Schucany and Haas's transformation of a normal and a uniform number (as
    NumPy and JAX draw them); differentiable in the mean, each number held at its
    quantile (unbiased, where the transformation's own slope is not).

    >>> round(float(cr.random.wald(cr.random.key(0), 2.0, (100_000,)).mean()), 1)
    2.0
    """
    def sample(g, m):
        size = _batch(shape, m)
        return np.stack([g.standard_normal(size), g.random(size)])
    both = draw_with(sample, key, mean)
    # the draw from the mean's numbers: its derivative is the quantile's, attached below
    m, y = ops.stop_gradient(mean), both[0] * both[0]
    root = m + m * m * y / 2.0 - m / 2.0 * ops.sqrt(4.0 * m * y + m * m * y * y)
    # the smaller root where a uniform number falls below m / (m + root), the other
    # (m**2 / root) elsewhere
    x = ops.astype(ops.where(less_equal(both[1], m / (m + root)), root, m * m / root), dtype)
    return wald_sample(mean, x) if differentiated(mean) else x


# ---------------------------------------------------------------------------------------
# Samplers that are explicit functions of a draw and their parameters (differentiable)
# ---------------------------------------------------------------------------------------


def pareto(key: ArrayLike, b: ArrayLike, shape: Shape | None = None,
           dtype: DTypeLike = np.float64) -> Any:
    """Pareto numbers of shape ``b`` on [1, inf): exp(E / b), E exponential;
    differentiable in b.

    >>> round(float(cr.random.pareto(cr.random.key(0), 3.0, (100_000,)).mean()), 1)   # 3/2
    1.5
    """
    e = _draw(lambda g: g.standard_exponential(_batch(shape, b), dtype=np.dtype(dtype)), key)
    return ops.exp(e / b)


def rayleigh(key: ArrayLike, scale: ArrayLike, shape: Shape | None = None,
             dtype: DTypeLike = np.float64) -> Any:
    """Rayleigh numbers: scale * sqrt(2 E), E exponential; differentiable in scale.

    >>> round(float((cr.random.rayleigh(cr.random.key(0), 2.0, (100_000,)) ** 2).mean()), 1)
    8.0
    """
    e = _draw(lambda g: g.standard_exponential(_batch(shape, scale), dtype=np.dtype(dtype)),
              key)
    return scale * xp.sqrt(2.0 * e)


def weibull_min(key: ArrayLike, scale: ArrayLike, concentration: ArrayLike,
                shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Weibull numbers: scale * E**(1 / concentration), E exponential, of shape
    ``shape`` broadcast with the parameters'; differentiable in both parameters.

    >>> round(float(cr.random.weibull_min(cr.random.key(0), 2.0, 1.0, (100_000,)).mean()), 1)
    2.0
    """
    full = np.broadcast_shapes(_shape(shape), np.shape(raw(scale)),
                               np.shape(raw(concentration)))
    e = _draw(lambda g: g.standard_exponential(full, dtype=np.dtype(dtype)), key)
    return scale * ops.exp(xp.log(e) / concentration)


def triangular(key: ArrayLike, left: ArrayLike, mode: ArrayLike, right: ArrayLike,
               shape: Shape | None = None, dtype: DTypeLike = np.float64) -> Any:
    """Triangular numbers on [left, right] peaking at ``mode``, by the inverse of the CDF
    at a uniform number; differentiable in left, mode and right.

    >>> x = cr.random.triangular(cr.random.key(0), 0.0, 0.5, 1.0, (100_000,))
    >>> round(float(x.mean()), 2), bool(x.min() >= 0 and x.max() <= 1)
    (0.5, True)
    """
    u = _draw(lambda g: g.random(_batch(shape, left, mode, right), dtype=np.dtype(dtype)), key)
    width = right - left
    below = raw(u) * (raw(right) - raw(left)) < raw(mode) - raw(left)  # (a constant side)
    low = left + ops.sqrt(ops.where(below, u * width * (mode - left), 1.0))
    high = right - ops.sqrt(ops.where(below, 1.0, (1.0 - u) * width * (right - mode)))
    return ops.where(below, low, high)


def multivariate_normal(key: ArrayLike, mean: ArrayLike, cov: ArrayLike,
                        shape: Shape | None = None, dtype: DTypeLike = np.float64,
                        method: str = "cholesky") -> Any:
    """Normal vectors N(mean, cov): mean + A z with A A^T = cov (A by ``method``:
    "cholesky", "eigh" or "svd") and z standard normal; differentiable in mean and cov.
    The result's shape is ``shape + mean.shape[-1:]`` (``shape`` by default the
    broadcast of mean's and cov's batch shapes).

    >>> cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    >>> x = cr.random.multivariate_normal(cr.random.key(0), np.zeros(2), cov, (100_000,))
    >>> np.round(np.cov(x.T), 1).tolist()
    [[2.0, 0.6], [0.6, 1.0]]
    """
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', "
                         f"got {method!r}")
    m_shape, c_shape = np.shape(raw(mean)), np.shape(raw(cov))
    if len(m_shape) < 1 or len(c_shape) < 2 or c_shape[-2:] != (m_shape[-1],) * 2:
        raise ValueError(f"multivariate_normal: mean must have shape (..., n) and cov "
                         f"(..., n, n), got {m_shape} and {c_shape}")
    batch = np.broadcast_shapes(m_shape[:-1], c_shape[:-2]) if shape is None \
        else _shape(shape)
    z = _draw(lambda g: g.standard_normal(batch + m_shape[-1:], dtype=np.dtype(dtype)), key)
    if method == "cholesky":
        factor = ops.cholesky(cov)
    elif method == "eigh":
        values, vectors = ops.eigh(cov)
        factor = vectors * ops.sqrt(ops.maximum(values, 0.0))[..., None, :]
    else:
        u, s, _ = ops.svd(cov)
        factor = u * ops.sqrt(s)[..., None, :]
    return mean + ops.einsum("...ij,...j->...i", factor, z)


# ---------------------------------------------------------------------------------------
# Discrete samplers (their parameters are not differentiated)
# ---------------------------------------------------------------------------------------


def geometric(key: ArrayLike, p: ArrayLike, shape: Shape | None = None,
              dtype: DTypeLike = np.int64) -> Any:
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...).

    >>> round(float(cr.random.geometric(cr.random.key(0), 0.25, (100_000,)).mean()), 1)
    4.0
    """
    return draw_with(lambda g, p: g.geometric(p, _batch(shape, p)).astype(dtype), key, p)


def poisson(key: ArrayLike, lam: ArrayLike, shape: Shape | None = None,
            dtype: DTypeLike = np.int64) -> Any:
    """Poisson counts with rate ``lam``.

    >>> round(float(cr.random.poisson(cr.random.key(0), 3.0, (100_000,)).mean()), 1)
    3.0
    """
    return draw_with(lambda g, lam: g.poisson(lam, _batch(shape, lam)).astype(dtype),
                     key, lam)


def binomial(key: ArrayLike, n: ArrayLike, p: ArrayLike, shape: Shape | None = None,
             dtype: DTypeLike = np.float64) -> Any:
    """The number of successes of ``n`` Bernoulli(p) trials, as floats (as JAX).

    >>> x = cr.random.binomial(cr.random.key(0), 10, 0.3, (100_000,))
    >>> x.dtype, round(float(x.mean()), 1)
    (dtype('float64'), 3.0)
    """
    return draw_with(lambda g, n, p: g.binomial(n.astype(np.int64), p, _batch(shape, n, p))
                     .astype(dtype), key, n, p)


def multinomial(key: ArrayLike, n: ArrayLike, p: ArrayLike, *, shape: Shape | None = None,
                dtype: DTypeLike = np.float64, unroll: int | bool = 1) -> Any:
    """Counts of ``n`` draws among the outcomes along p's last axis, as floats. The
    result has p's shape, or ``shape`` (p broadcast to it, as JAX does); ``unroll`` is
    JAX's loop setting and changes nothing here.

    >>> x = cr.random.multinomial(cr.random.key(0), 10, np.array([0.2, 0.8]), shape=(3, 2))
    >>> x.shape, x.sum(axis=-1).tolist()
    ((3, 2), [10.0, 10.0, 10.0])
    """
    def sample(g, n, p):
        full = np.shape(p) if shape is None else _shape(shape)
        p = np.broadcast_to(p, full)
        n = np.broadcast_to(n, full[:-1]).astype(np.int64)
        return g.multinomial(n, p / p.sum(axis=-1, keepdims=True)).astype(dtype)
    return draw_with(sample, key, n, p)


# ---------------------------------------------------------------------------------------
# Random matrices and points
# ---------------------------------------------------------------------------------------


def orthogonal(key: ArrayLike, n: int, shape: Shape = (), dtype: DTypeLike = np.float64,
               m: int | None = None) -> Any:
    """Orthogonal matrices (n x n, or n x m with orthonormal columns when m < n, rows
    when m > n) drawn uniformly (by Haar measure): QR of a normal matrix, signs fixed.

    >>> q = cr.random.orthogonal(cr.random.key(0), 3)
    >>> np.allclose(q @ q.T, np.eye(3))
    True
    """
    cols = n if m is None else m

    def sample(g):
        z = g.standard_normal(_shape(shape) + (max(n, cols), min(n, cols)))
        q, r = np.linalg.qr(z)
        q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
        return (q if n >= cols else np.swapaxes(q, -1, -2)).astype(dtype)
    return _draw(sample, key)


def ball(key: ArrayLike, d: int, p: float = 2, shape: Shape = (),
         dtype: DTypeLike = np.float64) -> Any:
    """Points drawn uniformly from the unit ``p``-norm ball in ``d`` dimensions (shape
    ``shape + (d,)``): g / (sum |g|**p + E)**(1/p), g generalized normal, E exponential;
    differentiable in p (through g's gamma numbers, as generalized_normal).

    >>> x = cr.random.ball(cr.random.key(0), 3, 2, (1000,))
    >>> x.shape, bool((np.linalg.norm(x, axis=-1) <= 1).all())
    ((1000, 3), True)
    """
    size = _shape(shape)

    def sample(g, p):  # the three draws in one array: signs, gamma numbers, exponentials
        sign = 2 * g.integers(0, 2, size + (d,)) - 1
        gam = g.standard_gamma(1.0 / p, size + (d,))
        e = g.standard_exponential(size)
        return np.concatenate([sign.ravel(), gam.ravel(), e.ravel()])
    flat, n = draw_with(sample, key, p), int(np.prod(size + (d,), dtype=np.int64))
    sign = ops.reshape(flat[:n], size + (d,))
    gam = ops.reshape(flat[n:2 * n], size + (d,))
    e = ops.reshape(flat[2 * n:], size)
    if differentiated(p):
        gam = gamma_sample(1.0 / p, gam)
    gen = sign * gam ** (1.0 / p)
    norm = (ops.sum(ops.absolute(gen) ** p, axis=-1) + e) ** (1.0 / p)
    return ops.astype(gen / ops.expand_dims(norm, -1), dtype)
