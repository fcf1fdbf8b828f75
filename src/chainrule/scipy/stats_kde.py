"""``gaussian_kde``: a density estimated from samples, as ``scipy.stats.gaussian_kde``
and ``jax.scipy.stats.gaussian_kde``, built from chainrule's operations so that the
density, its logarithm and its integrals have derivatives in the data, the weights
and the points (a bandwidth fitted by a gradient, a sample moved to raise a
likelihood).

The estimate at a point x is a weighted sum of Gaussian bumps, one per sample, all
with the covariance ``factor**2 * cov(dataset)``; ``factor`` is Scott's
``neff**(-1/(d+4))`` unless ``bw_method`` says otherwise.
"""

import math
from typing import Any, Callable

import numpy as np

from ..api import numpy as cnp
from ..api import random
from ..transforms.tree_util import register_pytree_node_class
from . import linalg
from .special import logsumexp, ndtr

__all__ = ["gaussian_kde"]


@register_pytree_node_class
class gaussian_kde:  # noqa: N801  (SciPy's and JAX's name)
    """A Gaussian kernel density estimate of ``dataset``: shape ``(n,)`` for n samples
    of one variable, ``(d, n)`` for n samples of d. ``bw_method``: "scott" (the
    default), "silverman", a number (the factor itself) or a function of the
    estimator that returns it. ``weights``: one per sample, normalized to sum to 1.
    A pytree (dataset, weights and the covariances are its leaves), so it passes
    through ``cr.jit`` and ``cr.vmap``.

    >>> from chainrule.scipy.stats import gaussian_kde
    >>> kde = gaussian_kde(np.array([0.0, 1.0, 3.0]))
    >>> float(kde.integrate_box_1d(-np.inf, np.inf))
    1.0
    >>> bool(kde(np.array([0.5]))[0] > kde(np.array([6.0]))[0])
    True
    >>> round(float(cr.grad(lambda h: gaussian_kde([0.0, 1.0, 3.0], bw_method=h)
    ...                     .logpdf(np.array([0.5]))[0])(0.5)), 6)      # d/d bandwidth
    -1.082953
    """

    def __init__(self, dataset: Any, bw_method: str | float | Callable[..., Any] | None = None,
                 weights: Any = None) -> None:
        dataset = cnp.atleast_2d(dataset)
        if np.issubdtype(cnp.result_type(dataset), np.complexfloating):
            raise ValueError("gaussian_kde: complex data is not supported; expected real "
                             "samples")
        if cnp.size(dataset) <= 1:
            raise ValueError(f"gaussian_kde: a dataset of shape {cnp.shape(dataset)}; "
                             f"expected more than one sample")
        dataset = dataset + 0.0  # (integers become float64; float32 stays float32)
        n = cnp.shape(dataset)[1]
        if weights is None:
            weights = cnp.full(n, 1.0 / n, dtype=cnp.result_type(dataset))
        else:
            weights = cnp.atleast_1d(weights) + 0.0
            if cnp.ndim(weights) != 1 or cnp.shape(weights)[0] != n:
                raise ValueError(f"gaussian_kde: weights of shape {cnp.shape(weights)}; "
                                 f"expected one per sample, shape ({n},)")
            weights = weights / cnp.sum(weights)
        self.dataset, self.weights = dataset, weights
        self.neff = 1.0 / cnp.sum(weights ** 2)
        d = self.d
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            factor = self.neff ** (-1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif not isinstance(bw_method, str) and cnp.ndim(bw_method) == 0:
            factor = bw_method
        else:
            raise ValueError(f"gaussian_kde: bw_method={bw_method!r}; expected 'scott', "
                             f"'silverman', a number or a function of the estimator")
        data_covariance = cnp.atleast_2d(cnp.cov(dataset, rowvar=True, bias=False,
                                                 aweights=weights))
        self.covariance = data_covariance * factor ** 2
        self.inv_cov = cnp.linalg.inv(data_covariance) / factor ** 2

    # --- a pytree: its arrays are the leaves -------------------------------------------

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux: None, leaves: Any) -> "gaussian_kde":
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = leaves
        return kde

    @property
    def d(self) -> int:
        """The number of variables."""
        return cnp.shape(self.dataset)[0]

    @property
    def n(self) -> int:
        """The number of samples."""
        return cnp.shape(self.dataset)[1]

    # --- the density -------------------------------------------------------------------

    def evaluate(self, points: Any) -> Any:
        """The density at each of ``points`` (shape ``(d, m)``, or ``(m,)`` for d = 1,
        or ``(d,)`` for one point)."""
        return self._kernel_sums(points, in_log=False)

    __call__ = pdf = evaluate

    def logpdf(self, points: Any) -> Any:
        """The log of the density, summed in logs (no underflow far from the data)."""
        return self._kernel_sums(points, in_log=True)

    def _kernel_sums(self, points, in_log):
        """sum_j w_j N(x; x_j, covariance) for each point x, or its log. In whitened
        coordinates (L^T of the precision's Cholesky factor L) each bump is a standard
        normal's, scaled by det(L)."""
        points = self._as_points(points)
        whitening = cnp.linalg.cholesky(self.inv_cov)
        samples = cnp.matmul(cnp.transpose(self.dataset), whitening)  # (n, d)
        at = cnp.matmul(cnp.transpose(points), whitening)              # (m, d)
        log_norm = cnp.sum(cnp.log(cnp.diagonal(whitening))) - 0.5 * self.d * math.log(2 * math.pi)
        exponent = log_norm - 0.5 * cnp.sum((at[:, None, :] - samples[None, :, :]) ** 2,
                                            axis=-1)                  # (m, n)
        if in_log:
            return logsumexp(exponent + cnp.log(self.weights), axis=1)
        return cnp.sum(self.weights * cnp.exp(exponent), axis=1)

    def _as_points(self, points):
        points = cnp.atleast_2d(points)
        if np.issubdtype(cnp.result_type(points), np.complexfloating):
            raise ValueError("gaussian_kde: complex points are not supported")
        d, m = cnp.shape(points)
        if d != self.d:
            if d == 1 and m == self.d:  # one point, given as a row
                return cnp.reshape(points, (self.d, 1))
            raise ValueError(f"gaussian_kde: points of shape {cnp.shape(points)}; the "
                             f"dataset has {self.d} variables, expected ({self.d}, m)")
        return points

    # --- integrals ---------------------------------------------------------------------

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the density times the Gaussian N(mean, cov)."""
        mean = cnp.atleast_1d(cnp.squeeze(mean))
        cov = cnp.atleast_2d(cov)
        if cnp.shape(mean) != (self.d,) or cnp.shape(cov) != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean of shape "
                             f"{cnp.shape(mean)} and cov of shape {cnp.shape(cov)}; "
                             f"expected ({self.d},) and ({self.d}, {self.d})")
        return self._convolved(self.covariance + cov, self.dataset, self.weights,
                               mean[:, None])[0]

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The probability that the variable lies between ``low`` and ``high`` (one
        variable only)."""
        if self.d != 1:
            raise ValueError(f"gaussian_kde.integrate_box_1d: the dataset has {self.d} "
                             f"variables; expected 1")
        if cnp.ndim(low) != 0 or cnp.ndim(high) != 0:
            raise ValueError("gaussian_kde.integrate_box_1d: expected numbers as limits")
        sigma = cnp.squeeze(cnp.sqrt(self.covariance))
        upper = cnp.squeeze((high - self.dataset) / sigma)
        lower = cnp.squeeze((low - self.dataset) / sigma)
        return cnp.sum(self.weights * (ndtr(upper) - ndtr(lower)))

    def integrate_kde(self, other: "gaussian_kde") -> Any:
        """The integral of the product of this density and ``other``."""
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: {other.d} variables against "
                             f"{self.d}; expected the same")
        small, large = (self, other) if self.n < other.n else (other, self)
        at_each = self._convolved(self.covariance + other.covariance, large.dataset,
                                  large.weights, small.dataset)
        return cnp.sum(small.weights * at_each)

    def _convolved(self, covariance, samples, weights, means):
        """sum_j w_j N(m; x_j, covariance) for each column m of ``means`` (d, k): one
        solve with the covariance's Cholesky factor for every pair of m and x_j."""
        factor = linalg.cho_factor(covariance)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d
                      * cnp.prod(cnp.diagonal(factor[0])))
        k, n = cnp.shape(means)[1], cnp.shape(samples)[1]
        difference = cnp.reshape(samples[:, None, :] - means[:, :, None], (self.d, k * n))
        exponent = 0.5 * cnp.sum(difference * linalg.cho_solve(factor, difference), axis=0)
        return norm * cnp.sum(cnp.exp(-cnp.reshape(exponent, (k, n))) * weights, axis=1)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """SciPy's box integral over several variables, which JAX leaves out too."""
        raise ValueError("gaussian_kde.integrate_box: only one variable is supported, "
                         "by integrate_box_1d (as in JAX)")

    # --- samples -----------------------------------------------------------------------

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """New samples, shape ``(d,) + shape``: a sample of the dataset drawn by its
        weight, moved by a draw of N(0, covariance). ``key`` is a ``cr.random`` key
        (its numbers are chainrule's generator's, not JAX's)."""
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(
            noise_key, cnp.zeros(self.d, cnp.result_type(self.covariance)),
            self.covariance, shape=shape, dtype=cnp.result_type(self.dataset))
        return self.dataset[:, index] + cnp.transpose(noise)

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """SciPy's way to change the bandwidth in place; build a new estimator instead
        (as in JAX, whose estimator does not change once built)."""
        raise ValueError("gaussian_kde.set_bandwidth: the estimator does not change once "
                         "built; make a new gaussian_kde(dataset, bw_method=...)")
