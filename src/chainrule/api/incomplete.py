"""The regularized incomplete gamma and beta functions' derivatives in their shape
parameters, which have no closed form.

Each is computed as the function itself is: a series or a continued fraction, summed
term by term, here together with each term's derivative in the parameter (forward-mode
differentiation of the recurrence, written out by hand). Both run on NumPy arrays, all
entries at once, until every entry has converged.

    P(a, x) = x^a e^-x / gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))   (x <= a or x <= 1)
    Q(a, x) = x^a e^-x / gamma(a) * (Legendre's continued fraction)           (otherwise)
    I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * sum_n (a + b)_n / (a + 1)_n x^n

and I_x(a, b) = 1 - I_{1-x}(b, a) where that tail is the smaller one. An entry whose sum
runs out of terms before it settles is NaN, never a rough number.
"""

import numpy as np
import scipy.special as _sp

__all__ = ["gammainc_da", "betainc_dab"]

# A term's change, relative to the sum, below which summing stops: a few units in the
# last place for a value (rounding leaves a converged continued fraction wandering by
# that much), more for a derivative, which a convergent gets as a difference (p'q - pq')
# and so carries about a hundred units of rounding.
_TOLERANCE = 16 * np.finfo(np.float64).eps
_D_TOLERANCE = 512 * np.finfo(np.float64).eps
_MAX_TERMS = 100_000
_BIG = 2.0 ** 52


def _settled(value, change, tolerance=_TOLERANCE):
    """Where a sum's last term no longer moves it (entry by entry)."""
    return np.abs(change) <= tolerance * np.abs(value)


def _unless_settled(result, done):
    """NaN where a sum ran out of terms before it settled: never a wrong number."""
    return np.where(done, result, np.nan)


def _gamma_series_da(a, x):
    """dP/da by P's power series (for x <= max(a, 1))."""
    log_front = a * np.log(x) - x - _sp.gammaln(a + 1.0)
    d_log_front = np.log(x) - _sp.digamma(a + 1.0)
    term, d_term = np.ones_like(x), np.zeros_like(x)
    total, d_total = np.ones_like(x), np.zeros_like(x)
    done = np.zeros(x.shape, dtype=bool)
    for n in range(1, _MAX_TERMS):
        ratio = x / (a + n)
        d_term = d_term * ratio - term * ratio / (a + n)  # d/da of x / (a + n) is -ratio / (a + n)
        term = term * ratio
        total, d_total = total + term, d_total + d_term
        done |= _settled(total, term) & _settled(d_total, d_term, _D_TOLERANCE)
        if done.all():
            break
    return _unless_settled(np.exp(log_front) * (d_log_front * total + d_total), done)


def _gamma_fraction_da(a, x):
    """dQ/da by Q's continued fraction (for x > max(a, 1)): the convergents p_k / q_k
    follow a three-term recurrence in which a enters linearly, so their derivatives
    follow one too."""
    log_front = a * np.log(x) - x - _sp.gammaln(a)
    d_log_front = np.log(x) - _sp.digamma(a)
    y, z = 1.0 - a, x + 2.0 - a             # dy/da = dz/da = -1
    p2, q2, p1, q1 = np.ones_like(x), x, x + 1.0, z * x
    dp2, dq2, dp1, dq1 = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x), -x
    value, d_value = p1 / q1, (dp1 - p1 / q1 * dq1) / q1
    done = np.zeros(x.shape, dtype=bool)
    for c in range(1, _MAX_TERMS):
        y, z = y + 1.0, z + 2.0
        yc = y * c
        p, q = p1 * z - p2 * yc, q1 * z - q2 * yc
        dp = dp1 * z - p1 - dp2 * yc + p2 * c
        dq = dq1 * z - q1 - dq2 * yc + q2 * c
        new = p / q
        d_new = (dp - new * dq) / q
        change, d_change = new - value, d_new - d_value
        value, d_value = new, d_new
        p2, q2, p1, q1 = p1, q1, p, q
        dp2, dq2, dp1, dq1 = dp1, dq1, dp, dq
        # the convergents' numerators and denominators grow without bound; rescaling all
        # of them at once changes no ratio
        large = (np.abs(p) > _BIG) | (np.abs(dp) > _BIG)
        if np.any(large):
            scale = np.where(large, 1.0 / _BIG, 1.0)
            p2, q2, p1, q1 = p2 * scale, q2 * scale, p1 * scale, q1 * scale
            dp2, dq2, dp1, dq1 = dp2 * scale, dq2 * scale, dp1 * scale, dq1 * scale
        done |= _settled(value, change) & _settled(d_value, d_change, _D_TOLERANCE)
        if done.all():
            break
    return _unless_settled(np.exp(log_front) * (d_value + value * d_log_front), done)


def gammainc_da(a, x):
    """d/da of the regularized lower incomplete gamma function P(a, x), for a > 0,
    x >= 0 (NaN elsewhere, as P is)."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.zeros(a.shape)
    valid = (a > 0) & (x >= 0) & np.isfinite(a)
    out[~valid] = np.nan
    out[np.isnan(x)] = np.nan
    inner = valid & (x > 0) & np.isfinite(x)      # P is 0 at x = 0 and 1 at infinity
    series = inner & ((x <= a) | (x <= 1.0))
    fraction = inner & ~series
    if np.any(series):
        out[series] = _gamma_series_da(a[series], x[series])
    if np.any(fraction):
        out[fraction] = -_gamma_fraction_da(a[fraction], x[fraction])
    return out


def _beta_series_dab(a, b, x):
    """(dI/da, dI/db) by I_x(a, b)'s hypergeometric series. Its terms shrink by about x
    each once n passes x (a + b) / (1 - x): quickly for x up to about the mean
    a / (a + b), unless x is near 1."""
    log_front = a * np.log(x) + b * np.log1p(-x) - np.log(a) - _sp.betaln(a, b)
    d_front_a = np.log(x) - 1.0 / a - _sp.digamma(a) + _sp.digamma(a + b)
    d_front_b = np.log1p(-x) - _sp.digamma(b) + _sp.digamma(a + b)
    term = np.ones_like(x)
    total = np.ones_like(x)
    # the derivatives of log(term): sums over the factors (a + b + k) / (a + 1 + k)
    d_log_a, d_log_b = np.zeros_like(x), np.zeros_like(x)
    d_total_a, d_total_b = np.zeros_like(x), np.zeros_like(x)
    done = np.zeros(x.shape, dtype=bool)
    for n in range(1, _MAX_TERMS):
        top, bottom = a + b + (n - 1), a + n
        term = term * x * top / bottom
        d_log_a = d_log_a + 1.0 / top - 1.0 / bottom
        d_log_b = d_log_b + 1.0 / top
        total = total + term
        d_total_a, d_total_b = d_total_a + term * d_log_a, d_total_b + term * d_log_b
        done |= (_settled(total, term) & _settled(d_total_a, term * d_log_a, _D_TOLERANCE)
                 & _settled(d_total_b, term * d_log_b, _D_TOLERANCE))
        if done.all():
            break
    front = np.exp(log_front)
    return (_unless_settled(front * (d_front_a * total + d_total_a), done),
            _unless_settled(front * (d_front_b * total + d_total_b), done))


def betainc_dab(a, b, x):
    """(d/da, d/db) of the regularized incomplete beta function I_x(a, b), for a, b > 0
    and 0 <= x <= 1 (NaN elsewhere, as I is)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    da, db = np.zeros(a.shape), np.zeros(a.shape)
    valid = (a > 0) & (b > 0) & (x >= 0) & (x <= 1) & np.isfinite(a) & np.isfinite(b)
    da[~valid] = db[~valid] = np.nan
    inner = valid & (x > 0) & (x < 1)             # I is 0 at x = 0 and 1 at x = 1
    # Sum the smaller tail, so that no derivative is a small difference of large terms;
    # but where its series would crawl (x near 1: terms shrink by only x each) and the
    # other's terms grow only a little before they shrink, sum the other.
    lower = _sp.betainc(a, b, x) <= 0.5
    crawls = np.where(lower, x > 0.98, x < 0.02)
    other_grows = np.where(lower, 1.0 - x, x) * (a + b) > 500.0
    lower = np.where(crawls & ~other_grows, ~lower, lower)
    lower, upper = inner & lower, inner & ~lower
    if np.any(lower):
        da[lower], db[lower] = _beta_series_dab(a[lower], b[lower], x[lower])
    if np.any(upper):  # I_x(a, b) = 1 - I_{1-x}(b, a): the roles of a and b swap
        d_b, d_a = _beta_series_dab(b[upper], a[upper], 1.0 - x[upper])
        da[upper], db[upper] = -d_a, -d_b
    return da, db
