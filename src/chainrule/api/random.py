"""Random numbers as JAX draws them: from explicit keys, by pure functions.

    >>> key = cr.random.key(0)
    >>> key, sub = cr.random.split(key)
    >>> cr.random.normal(sub, (3,)).shape
    (3,)

A key is a small array of two uint32 words. A sampler is a function of its key alone:
the same key gives the same numbers, in every run and on every machine (the numbers
come from NumPy's Philox counter-based generator keyed by the key, and NumPy's
samplers on it; they are not JAX's bits). ``split`` and ``fold_in`` derive new keys
from a key, so a program draws fresh numbers by passing new keys, never by hidden state.

Under ``cr.jit`` a key is an input like any array: each sampler is one call of the
program, run again with the key of each call, so a jitted step draws what the eager
step draws. Under the transforms a sample differentiates in its distribution's
parameters as JAX's do: through the formula that makes it from a parameter-free draw
(``loc + scale * normal(key)``, ``uniform``'s ``minval`` and ``maxval``), or, where it
is drawn by rejection or a choice (gamma, beta, truncated_normal, wald, and what is made
of gamma numbers: dirichlet, chisquare, t, f, loggamma, generalized_normal, ball), by
implicit reparameterization at its quantile (``random_implicit``).

The rest of jax.random's samplers (cauchy, laplace, poisson, multivariate_normal, ...)
and its key utilities are here too, from ``random_distributions``.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp, rules as ops
from ..primitive import raw, shape_of
from .random_draws import as_shape as _shape, draw as _draw
from .random_implicit import beta_sample, gamma_sample, truncated_normal_sample
from . import random_distributions as _more
from .random_distributions import *  # noqa: F403  (the rest of jax.random: its __all__)

__all__ = ["key", "PRNGKey", "split", "fold_in", "uniform", "normal", "bernoulli",
           "categorical", "randint", "permutation", "choice", "truncated_normal", "exponential",
           "gamma", "beta", "dirichlet", *_more.__all__]

Shape = int | Sequence[int]


def key(seed: int) -> np.ndarray:
    """A key from an integer seed (any size: it is hashed into the key's 64 bits).

    >>> cr.random.key(0)
    array([2968811710, 3677149159], dtype=uint32)
    """
    return xp.call(_hashed, raw(seed))  # (a traced seed, a step number under cr.jit, too)


def _hashed(seed):
    return np.random.SeedSequence(int(seed)).generate_state(2, dtype=np.uint32)


PRNGKey = key  # (JAX's older name)


def split(key: ArrayLike, num: int = 2) -> np.ndarray:
    """``num`` new keys (an array of shape (num, 2)), independent of each other and of
    ``key``'s own samples.

    >>> a, b = cr.random.split(cr.random.key(0))
    >>> bool((a != b).any())
    True
    """
    return _draw(lambda g: g.integers(0, 2 ** 32, (num, 2), dtype=np.uint32), key)


def fold_in(key: ArrayLike, data: int) -> np.ndarray:
    """A new key from ``key`` and an integer (a step number, a worker's index).

    >>> k = cr.random.key(0)
    >>> bool((cr.random.fold_in(k, 1) != cr.random.fold_in(k, 2)).any())
    True
    """
    def derive(k, d):
        seq = np.random.SeedSequence([int(k[0]), int(k[1]), int(np.asarray(d))])
        return seq.generate_state(2, dtype=np.uint32)
    return xp.call(derive, raw(key), raw(data))


def uniform(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64,
            minval: ArrayLike = 0.0, maxval: ArrayLike = 1.0) -> Any:
    """Uniform numbers in [minval, maxval); differentiable in minval and maxval.

    >>> x = cr.random.uniform(cr.random.key(1), (1000,))
    >>> bool(0 <= x.min() and x.max() < 1)
    True
    """
    unit = _draw(lambda g: g.random(_shape(shape), dtype=np.dtype(dtype)), key)
    if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)) \
            and (minval, maxval) == (0.0, 1.0):
        return unit
    return minval + (maxval - minval) * unit


def normal(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Standard normal numbers (scale and shift them: ``loc + scale * normal(key)``).

    >>> round(float(cr.random.normal(cr.random.key(2), (100_000,)).std()), 2)
    1.0
    """
    return _draw(lambda g: g.standard_normal(_shape(shape), dtype=np.dtype(dtype)), key)


def bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape: Shape | None = None) -> Any:
    """True with probability ``p`` (its shape by default).

    >>> cr.random.bernoulli(cr.random.key(3), 0.0, (3,)).tolist()
    [False, False, False]
    """
    shape = np.shape(raw(p)) if shape is None else _shape(shape)
    return uniform(key, shape) < raw(p)


def categorical(key: ArrayLike, logits: ArrayLike, axis: int = -1,
                shape: Shape | None = None) -> Any:
    """Category indices drawn with probabilities softmax(logits) along ``axis`` (the
    Gumbel-max trick, as JAX).

    >>> logits = np.array([-50.0, 0.0, -50.0])
    >>> cr.random.categorical(cr.random.key(4), logits, shape=(4,)).tolist()
    [1, 1, 1, 1]
    """
    logits = raw(logits)
    batch = tuple(np.delete(np.shape(logits), axis % np.ndim(logits)))
    shape = batch if shape is None else _shape(shape)
    moved = xp.moveaxis(logits, axis, -1)
    gumbel = _draw(lambda g: g.gumbel(size=shape + (np.shape(logits)[axis],)), key)
    return xp.argmax(moved + gumbel, axis=-1)


def randint(key: ArrayLike, shape: Shape, minval: int, maxval: int,
            dtype: DTypeLike = np.int64) -> Any:
    """Integers in [minval, maxval).

    >>> bool(set(cr.random.randint(cr.random.key(5), (100,), 0, 3).tolist()) <= {0, 1, 2})
    True
    """
    return _draw(lambda g: g.integers(minval, maxval, _shape(shape), dtype=np.dtype(dtype)),
                 key)


def permutation(key: ArrayLike, x: int | ArrayLike, axis: int = 0) -> Any:
    """A random permutation of ``range(x)`` (an int), or of ``x``'s entries along ``axis``
    (differentiable in x: a reordering).

    >>> sorted(cr.random.permutation(cr.random.key(6), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    if isinstance(x, (int, np.integer)):
        return _draw(lambda g: g.permutation(int(x)), key)
    order = _draw(lambda g: g.permutation(np.shape(raw(x))[axis]), key)
    return ops.take(x, order, axis=axis)


def choice(key: ArrayLike, a: int | ArrayLike, shape: Shape = (), replace: bool = True,
           p: ArrayLike | None = None) -> Any:
    """Entries of ``a`` (or of ``range(a)``) drawn with probabilities ``p``.

    >>> cr.random.choice(cr.random.key(7), 3, (4,), p=np.array([0.0, 0.0, 1.0])).tolist()
    [2, 2, 2, 2]
    """
    n = int(a) if isinstance(a, (int, np.integer)) else np.shape(raw(a))[0]
    index = _draw(lambda g: g.choice(n, _shape(shape), replace=replace,
                                     p=None if p is None else np.asarray(raw(p))), key)
    return index if isinstance(a, (int, np.integer)) else ops.take(a, index, axis=0)


def truncated_normal(key: ArrayLike, lower: float, upper: float, shape: Shape = (),
                     dtype: DTypeLike = np.float64) -> Any:
    """Standard normal numbers conditioned to [lower, upper], by drawing again where a
    draw falls outside (exact; slow only for an interval far in a tail); differentiable
    in lower and upper (each number held at its quantile).

    >>> x = cr.random.truncated_normal(cr.random.key(8), -1.0, 2.0, (1000,))
    >>> bool(x.min() >= -1 and x.max() <= 2)
    True
    """
    def sample(g, lower, upper):  # (the bounds' numbers: each example's under vmap)
        if not np.all(lower < upper):
            raise ValueError(f"truncated_normal: expected lower < upper, got {lower} and "
                             f"{upper}")
        out = g.standard_normal(_shape(shape))
        outside = (out < lower) | (out > upper)
        for _ in range(10_000):
            if not outside.any():
                return out.astype(dtype)
            out[outside] = g.standard_normal(int(outside.sum()))
            outside = (out < lower) | (out > upper)
        raise ValueError(f"truncated_normal: [{lower}, {upper}] is too far in a tail to "
                         f"sample by rejection")
    x = _more.draw_with(sample, key, lower, upper)
    return truncated_normal_sample(lower, upper, x) if _more.differentiated(lower, upper) \
        else x


def exponential(key: ArrayLike, shape: Shape = (), dtype: DTypeLike = np.float64) -> Any:
    """Exponential numbers of rate 1.

    >>> round(float(cr.random.exponential(cr.random.key(9), (100_000,)).mean()), 1)
    1.0
    """
    return _draw(lambda g: g.standard_exponential(_shape(shape), dtype=np.dtype(dtype)), key)


def gamma(key: ArrayLike, a: ArrayLike, shape: Shape | None = None) -> Any:
    """Gamma numbers of shape ``a`` and scale 1; differentiable in ``a`` (each number
    held at its quantile, as JAX's).

    >>> round(float(cr.random.gamma(cr.random.key(10), 3.0, (100_000,)).mean()), 1)
    3.0
    """
    shape = np.shape(raw(a)) if shape is None else _shape(shape)
    x = _more.draw_with(lambda g, a: g.standard_gamma(a, shape), key, a)
    return gamma_sample(a, x) if _more.differentiated(a) else x


def beta(key: ArrayLike, a: ArrayLike, b: ArrayLike, shape: Shape | None = None) -> Any:
    """Beta numbers with shapes ``a`` and ``b``; differentiable in both (each number
    held at its quantile).

    >>> round(float(cr.random.beta(cr.random.key(11), 2.0, 2.0, (100_000,)).mean()), 2)
    0.5
    """
    shape = np.broadcast_shapes(np.shape(raw(a)), np.shape(raw(b))) if shape is None \
        else _shape(shape)
    x = _more.draw_with(lambda g, a, b: g.beta(a, b, shape), key, a, b)
    return beta_sample(a, b, x) if _more.differentiated(a, b) else x


def dirichlet(key: ArrayLike, alpha: ArrayLike, shape: Shape = ()) -> Any:
    """Dirichlet vectors with concentrations ``alpha`` (shape + (len(alpha),)): gamma
    numbers of shapes alpha, normalised (in logarithms, so a tiny alpha is exact, as
    JAX draws them); differentiable in alpha.

    >>> v = cr.random.dirichlet(cr.random.key(12), np.ones(3), (2,))
    >>> v.shape, np.allclose(v.sum(axis=-1), 1.0)
    ((2, 3), True)
    """
    logs = _more.loggamma(key, alpha, _shape(shape) + tuple(shape_of(alpha)))
    return ops.softmax(logs, axis=-1)
