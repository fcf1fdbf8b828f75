"""scipy.stats's discrete distributions beyond poisson, as jax.scipy.stats has them:
bernoulli, binom, betabinom, nbinom, geom and multinomial.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.binom.pmf(3, 10, 0.3)), 6)
    0.266828
    >>> round(float(cr.grad(stats.binom.logpmf, argnums=2)(3, 10, 0.3)), 6)   # k/p - (n-k)/(1-p)
    0.0

Each is written with the table's operations and chainrule.scipy.special's, so its
derivatives of any order follow in the continuous parameters (p, and a, b of betabinom,
n of nbinom, which SciPy lets be any positive number). A count (k, and the number of
trials n of binom, betabinom and multinomial) has no derivative: differentiating in one
raises, where JAX would give the slope of its continuous extension. Off the support
(k not a whole number in range) a log-mass is -inf and a mass 0, as in SciPy.
"""

import math

from numpy.typing import ArrayLike

from .. import arrays as xp, rules as ops
from ..primitive import elementwise, raw
from . import special

__all__ = ["bernoulli", "binom", "betabinom", "nbinom", "geom", "multinomial"]


def _refused(function, parameter):
    def partial(ans, x):
        raise TypeError(f"{function}: no derivative in {parameter}: it is a count (a whole "
                        f"number), not a continuous parameter")
    return partial


def _count(function, parameter):
    """The identity on a count, whose derivative raises: differentiating the function
    in that argument is refused in one line, not answered with a wrong number."""
    return elementwise(lambda x: x, f"{function}_{parameter}", _refused(function, parameter),
                       doc=f"The count {parameter} of {function}: not differentiated.")


def _whole(k, low, high=math.inf):
    """Where k (raw) is a whole number in [low, high] (high may be an array)."""
    k = raw(k)
    return (k >= low) & (k <= raw(high)) & (k == xp.floor(k))


def _log_choose(n, k):
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)


_bernoulli_k = _count("bernoulli", "k")
_binom_k, _binom_n = _count("binom", "k"), _count("binom", "n")
_betabinom_k, _betabinom_n = _count("betabinom", "k"), _count("betabinom", "n")
_nbinom_k, _geom_k = _count("nbinom", "k"), _count("geom", "k")
_multinomial_x, _multinomial_n = _count("multinomial", "x"), _count("multinomial", "n")


class bernoulli:
    """The Bernoulli distribution: 1 with probability p, 0 with 1 - p.

    >>> import chainrule.scipy.stats as stats
    >>> np.round(stats.bernoulli.pmf(np.array([0, 1, 2]), 0.3), 12).tolist()
    [0.7, 0.3, 0.0]
    """

    @staticmethod
    def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        k = _bernoulli_k(k) - loc
        one = raw(k) == 1
        inside = one | (raw(k) == 0)
        # (+ 0 k: k is an argument of the result, so differentiating in it is refused)
        return ops.where(inside, ops.where(one, ops.log(p), ops.log1p(-p)), -math.inf) + 0.0 * k

    @staticmethod
    def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        return ops.exp(bernoulli.logpmf(k, p, loc))

    @staticmethod
    def cdf(k: ArrayLike, p: ArrayLike) -> object:
        k = raw(_bernoulli_k(k))
        return ops.where(k < 0, 0.0, ops.where(k < 1, 1.0 - p, 1.0))

    @staticmethod
    def ppf(q: ArrayLike, p: ArrayLike) -> object:
        """0 where q <= 1 - p, else 1 (nan for q or p outside [0, 1]): a step, whose
        derivative is 0."""
        q, p = raw(q), raw(p)
        bad = xp.isnan(q) | xp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
        return xp.where(bad, math.nan, xp.where(q <= 1 - p, 0.0, 1.0))


class binom:
    """The binomial distribution: k successes of n trials of probability p
    (differentiable in p).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.binom.logpmf(2, 4, 0.5)), 6)       # log(6 / 16)
    -0.980829
    """

    @staticmethod
    def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        k, n = _binom_k(k) - loc, _binom_n(n)
        inside = _whole(k, 0, n)
        k = ops.where(inside, k, 0.0)
        return ops.where(inside, _log_choose(n, k) + special.xlogy(k, p)
                         + special.xlog1py(n - k, -p), -math.inf)

    @staticmethod
    def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        return ops.exp(binom.logpmf(k, n, p, loc))


class betabinom:
    """The beta-binomial distribution: binom with p drawn from beta(a, b)
    (differentiable in a and b).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.betabinom.pmf(2, 4, 1.0, 1.0)), 6)   # uniform on 0 .. 4
    0.2
    """

    @staticmethod
    def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
               loc: ArrayLike = 0) -> object:
        k, n = _betabinom_k(k) - loc, _betabinom_n(n)
        inside = _whole(k, 0, n)
        k = ops.where(inside, k, 0.0)
        return ops.where(inside, _log_choose(n, k) + special.betaln(k + a, n - k + b)
                         - special.betaln(a, b), -math.inf)

    @staticmethod
    def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
            loc: ArrayLike = 0) -> object:
        return ops.exp(betabinom.logpmf(k, n, a, b, loc))


class nbinom:
    """The negative binomial distribution: k failures before the n-th success of trials
    of probability p (differentiable in n, any positive number, and p).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.nbinom.pmf(2, 3, 0.5)), 6)         # C(4, 2) / 2**5
    0.1875
    """

    @staticmethod
    def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        k = _nbinom_k(k) - loc
        inside = _whole(k, 0)
        k = ops.where(inside, k, 0.0)
        return ops.where(inside, special.gammaln(n + k) - special.gammaln(n)
                         - special.gammaln(k + 1.0) + special.xlogy(n, p)
                         + special.xlog1py(k, -p), -math.inf)

    @staticmethod
    def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        return ops.exp(nbinom.logpmf(k, n, p, loc))


class geom:
    """The geometric distribution: the trial of the first success, k = 1, 2, ...
    (differentiable in p).

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.geom.pmf(2, 0.5))
    0.25
    """

    @staticmethod
    def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        k = _geom_k(k) - loc
        inside = _whole(k, 1)
        k = ops.where(inside, k, 1.0)
        return ops.where(inside, special.xlog1py(k - 1.0, -p) + ops.log(p), -math.inf)

    @staticmethod
    def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> object:
        return ops.exp(geom.logpmf(k, p, loc))


class multinomial:
    """The multinomial distribution: counts x (along the last axis) of n draws among
    outcomes of probabilities p (differentiable in p); -inf where x does not sum to n.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.multinomial.pmf(np.array([1, 1]), 2, np.array([0.5, 0.5]))), 6)
    0.5
    """

    @staticmethod
    def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> object:
        x, n = _multinomial_x(x), _multinomial_n(n)
        total = xp.sum(raw(x), axis=-1)
        out = special.gammaln(n + 1.0) + ops.sum(special.xlogy(x, p)
                                                 - special.gammaln(x + 1.0), axis=-1)
        return ops.where(total == raw(n), out, -math.inf)

    @staticmethod
    def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> object:
        return ops.exp(multinomial.logpmf(x, n, p))
