"""chainrule.scipy.special and chainrule.scipy.stats under the function transforms,
against jax.scipy under the same transforms (float64): generated, not picked.

tests/test_scipy_special.py and tests/test_scipy_stats.py check each function's values
and derivatives on plain arrays. Here every function both libraries have (the modules'
``__all__`` meets jax.scipy's names; a distribution's methods meet JAX's) runs through
the transforms a port from ``jax.scipy`` uses, each example a scalar problem (or one
small vector: logsumexp, softmax, fresnel's and sici's pairs, bessel_jn's orders,
dirichlet, multinomial and multivariate_normal) and a batch of BATCH of them:

* ``vmap``: every argument mapped; and, for two or more arguments, each argument mapped
  in turn with the others shared (``in_axes=(0, None, ...)``): a batch of models is
  the common use of a distribution (its parameters mapped with x);
* ``vmap(grad)``, ``grad(vmap)`` (of a weighted sum of the mapped values),
  ``vmap(jacfwd)`` and ``vmap(hessian)``, in each argument that has a derivative;
  and ``vmap(grad)`` and ``grad(vmap)`` in an argument shared by the batch while the
  others are mapped (one model's parameter and a batch of data: grad(vmap) sums the
  examples' gradients into it);
* ``jit(vmap(grad))`` and ``jit(grad)``, traced at one batch (one example) and
  replayed at another: the program holds no number of the first.

Each argument's domain is in SPECS (and the orders of derivative JAX gives in it); a
function added to either module without an entry there, or a reason in SKIPPED, fails
test_every_function_jax_also_has_is_specified. Where JAX has no derivative (betainc's
shape parameters; a second derivative of exp1 and expn) the reference is central
differences of SciPy's values or of JAX's first derivative, with their own tolerance;
where jax.scipy's function cannot be differentiated (Gumbel) or is less accurate than
SciPy (betabinom), its formula in jax.numpy (tests/jax_references.py).
Every result of NumPy inputs must be a NumPy array, not a Tensor or a tracer. Operations
that cr.vmap runs example by example (``chainrule.transforms.batching.fallbacks``) are
reported at the end of the module, not failed: they are right, only slower.
"""

import collections
from dataclasses import dataclass, field
from functools import lru_cache

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as sst

import chainrule as cr
import chainrule.numpy as cnp
import chainrule.scipy.special as sps
import chainrule.scipy.stats as stats
from chainrule.transforms import batching
from jax_references import betabinom, gumbel
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

BATCH = 4
RTOL, ATOL = 1e-10, 1e-13            # values and first derivatives
RTOL2, ATOL2 = 1e-8, 1e-11           # second derivatives
FD_STEP = 1e-5


@dataclass(frozen=True)
class Arg:
    """One argument's domain: uniform in [low, high) (of ``shape`` per example), or
    drawn from ``values`` (an order or a count: never differentiated). ``order`` is how
    many derivatives JAX gives in it; ``fd`` is 1 or 2 where the derivative of that
    order comes from central differences instead (JAX has none)."""
    low: float = 0.0
    high: float = 1.0
    order: int = 2
    shape: tuple = ()
    values: tuple = None
    fd: int = 0
    simplex: bool = False       # a point of the probability simplex (dirichlet's x)

    def draw(self, rng, batch):
        size = (batch,) + self.shape
        if self.values is not None:
            return rng.choice(np.array(self.values), size)   # integers, as JAX asks
        x = rng.uniform(self.low, self.high, size)
        return x / x.sum(-1, keepdims=True) if self.simplex else x


def R(low, high, order=2, **kw):
    return Arg(low, high, order, **kw)


def N(*values):
    """An integer argument (an order, a count): data, mapped, never differentiated."""
    return Arg(order=0, values=values)


def C(low, high, **kw):
    """A real argument JAX does not differentiate (a Bessel or zeta order, the
    hypergeometric functions' parameters): mapped, not differentiated."""
    return Arg(low, high, 0, **kw)


@dataclass(frozen=True)
class Spec:
    args: tuple
    ours: object = None         # default: the module's function of that name
    theirs: object = None       # default: jax.scipy's
    scipy: object = None        # SciPy's values, for central differences (fd)
    note: str = ""
    weights: tuple = field(default=None)   # the example's output shape, if not scalar


X, LOC, SCALE = R(-2.0, 2.0), R(-0.5, 0.5), R(0.5, 2.0)
UNIT = R(0.05, 0.95)
VECTOR = R(-3.0, 3.0, shape=(3,))
ONE = 1   # for readability of the orders: JAX differentiates this argument once

SPECIAL = {
    "gammaln": Spec((R(0.3, 6.0),)),
    "gamma": Spec((R(0.3, 4.0),)),
    # piecewise constant (its derivative 0 in both), across poles of gamma
    "gammasgn": Spec((R(-3.7, 3.0),)),
    "digamma": Spec((R(0.3, 6.0),)),
    "polygamma": Spec((N(0, 1, 2, 3), R(0.3, 6.0))),
    # d is static in both (the number of terms), so the spec holds it
    "multigammaln": Spec((R(1.5, 6.0),), ours=lambda a: sps.multigammaln(a, 3),
                         theirs=lambda a: jsp.multigammaln(a, 3)),
    "beta": Spec((R(0.5, 3.0), R(0.5, 3.0))),
    "betaln": Spec((R(0.5, 3.0), R(0.5, 3.0))),
    # JAX differentiates gammainc's a once; chainrule refuses the second, as JAX does
    "gammainc": Spec((R(0.3, 8.0, ONE), R(0.05, 12.0))),
    "gammaincc": Spec((R(0.3, 8.0, ONE), R(0.05, 12.0))),
    # JAX refuses betainc's a and b: SciPy's central differences are the reference
    "betainc": Spec((R(0.3, 6.0, ONE, fd=1), R(0.3, 6.0, ONE, fd=1), R(0.02, 0.98)),
                    scipy=sp.betainc),
    "erf": Spec((R(-2.0, 2.0),)),
    "erfc": Spec((R(-2.0, 2.0),)),
    "erfinv": Spec((R(-0.9, 0.9),)),
    "ndtr": Spec((R(-3.0, 3.0),)),
    "ndtri": Spec((R(0.05, 0.95),)),
    "log_ndtr": Spec((R(-8.0, 3.0),)),
    "expit": Spec((R(-4.0, 4.0),)),
    "logit": Spec((R(0.05, 0.95),)),
    "logsumexp": Spec((VECTOR,)),
    "softmax": Spec((VECTOR,), weights=(3,)),
    "log_softmax": Spec((VECTOR,), weights=(3,)),
    "xlogy": Spec((R(-2.0, 2.0), R(0.2, 3.0))),
    "xlog1py": Spec((R(-2.0, 2.0), R(-0.5, 3.0))),
    "entr": Spec((R(0.1, 3.0),)),
    "rel_entr": Spec((R(0.2, 3.0), R(0.2, 3.0))),
    "kl_div": Spec((R(0.2, 3.0), R(0.2, 3.0))),
    # JAX's exp1 and expn have no second derivative (their JVP rule calls expn with a
    # traced order): central differences of JAX's first derivative are the reference
    "exp1": Spec((R(0.2, 4.0, fd=2),)),
    "expi": Spec((R(0.2, 4.0),)),
    "expn": Spec((N(0, 1, 2, 3), R(0.2, 4.0, fd=2))),
    # below 1: JAX's derivative of spence is NaN above it
    "spence": Spec((R(0.2, 0.95),)),
    "poch": Spec((R(0.5, 3.0), R(0.2, 2.0))),
    "zeta": Spec((C(2.0, 4.0), R(0.5, 4.0))),
    "hyp1f1": Spec((C(0.5, 2.0), C(1.5, 3.0), R(-2.0, 2.0))),
    "hyp2f1": Spec((C(0.5, 1.5), C(0.3, 1.0), C(1.8, 3.0), R(-0.8, 0.8))),
    "i0": Spec((R(-3.0, 3.0),)),
    "i1": Spec((R(-3.0, 3.0),)),
    "i0e": Spec((R(0.2, 3.0),)),
    "i1e": Spec((R(0.2, 3.0),)),
    "dawsn": Spec((R(-3.0, 3.0),)),
    "erfcx": Spec((R(-2.0, 5.0),)),
    # complex-valued: both parts enter one real number
    "wofz": Spec((R(-3.0, 3.0),),
                 ours=lambda x: cr.real(sps.wofz(x)) - 0.7 * cr.imag(sps.wofz(x)),
                 theirs=lambda x: jnp.real(jsp.wofz(x)) - 0.7 * jnp.imag(jsp.wofz(x))),
    # the degree and order are integers (an order above the degree gives 0); JAX needs
    # n_max where n is traced
    "sph_harm_y": Spec((N(1, 2, 3), N(-2, 0, 1, 3), R(0.2, 2.9), R(-3.0, 3.0)),
                       ours=lambda n, m, t, p: cr.real(sps.sph_harm_y(n, m, t, p))
                       - 0.6 * cr.imag(sps.sph_harm_y(n, m, t, p)),
                       theirs=lambda n, m, t, p: jnp.real(jsp.sph_harm_y(n, m, t, p, n_max=3))
                       - 0.6 * jnp.imag(jsp.sph_harm_y(n, m, t, p, n_max=3))),
    "loggamma": Spec((R(0.3, 6.0),)),
    "factorial": Spec((R(0.0, 5.0),)),
    # a pair of functions: the example's output is the two stacked
    "fresnel": Spec((R(-2.0, 2.0),), ours=lambda x: cnp.stack(sps.fresnel(x)),
                    theirs=lambda x: jnp.stack(jsp.fresnel(x)), weights=(2,)),
    # (Ci is real for x > 0)
    "sici": Spec((R(0.2, 4.0),), ours=lambda x: cnp.stack(sps.sici(x)),
                 theirs=lambda x: jnp.stack(jsp.sici(x)), weights=(2,)),
    # v is static in both (the number of orders returned): J_0 .. J_3
    "bessel_jn": Spec((R(0.5, 5.0),), ours=lambda z: sps.bessel_jn(z, v=3),
                      theirs=lambda z: jsp.bessel_jn(z, v=3), weights=(4,)),
    "owens_t": Spec((R(-2.0, 2.0), R(-2.0, 2.0))),
    "comb": Spec((R(6.0, 9.0), R(0.5, 5.5))),
    "boxcox": Spec((R(0.2, 4.0), R(-1.5, 1.5))),
    "boxcox1p": Spec((R(-0.5, 3.0), R(-1.5, 1.5))),
}

# arguments of each distribution (x first), by method family
POSITIVE_X = R(0.5, 3.0)
EXPON = (POSITIVE_X, R(-1.1, -0.1), SCALE)
T = (X, R(1.5, 4.0), LOC, SCALE)
GAMMA_PDF = (R(1.5, 4.0), R(0.5, 3.0), LOC, SCALE)
GAMMA_CDF = (R(1.5, 4.0), R(0.5, 3.0, ONE), LOC, SCALE)
# the support [loc, loc + scale] holds every x drawn
BETA_PDF = (UNIT, R(0.5, 3.0), R(0.5, 3.0), R(-0.04, 0.04), R(1.1, 1.5))
BETA_CDF = (UNIT, R(0.5, 3.0, ONE, fd=1), R(0.5, 3.0, ONE, fd=1), R(-0.04, 0.04),
            R(1.1, 1.5))
UNIFORM = (UNIT, R(-0.04, 0.0), R(1.05, 1.5))


def _mvn(method, library):
    """multivariate_normal with cov = A A^T + 3 I: every direction of A moves cov along
    symmetric matrices, the only ones a covariance moves in (a gradient in cov itself is
    a convention: its lower triangle, or the symmetric part)."""
    if library == "jax":
        return lambda x, mean, a: getattr(jst.multivariate_normal, method)(
            x, mean, a @ a.T + 3.0 * jnp.eye(3))
    return lambda x, mean, a: getattr(stats.multivariate_normal, method)(
        x, mean, cnp.matmul(a, cnp.transpose(a)) + 3.0 * np.eye(3))


def _multinomial(method, library):
    """multinomial over three outcomes of four draws: the example's x is its first two
    counts (each at most 2), the third what is left, so that x sums to n."""
    if library == "jax":
        return lambda k, p: getattr(jst.multinomial, method)(
            jnp.concatenate([k, 4 - jnp.sum(k, keepdims=True)]), 4, p)
    return lambda k, p: getattr(stats.multinomial, method)(
        cnp.concatenate([k, 4 - cnp.sum(k, keepdims=True)]), 4, p)


# x inside [loc + a scale, loc + b scale] for every draw
TRUNCNORM = (R(-0.4, 0.4), R(-1.5, -1.0), R(1.2, 2.0), R(-0.1, 0.1), SCALE)
COUNT = N(0, 1, 3, 5)


STATS = {
    **{f"norm.{m}": Spec((X, LOC, SCALE))
       for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    "norm.ppf": Spec((UNIT, LOC, SCALE)),
    **{f"expon.{m}": Spec(EXPON) for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    "expon.ppf": Spec((UNIT, LOC, SCALE)),
    **{f"uniform.{m}": Spec(UNIFORM) for m in ("logpdf", "pdf", "cdf")},
    "uniform.ppf": Spec((UNIT, LOC, SCALE)),
    **{f"laplace.{m}": Spec((X, LOC, SCALE)) for m in ("logpdf", "pdf", "cdf")},
    **{f"logistic.{m}": Spec((X, LOC, SCALE)) for m in ("logpdf", "pdf", "cdf", "sf")},
    "logistic.ppf": Spec((UNIT, LOC, SCALE)),
    **{f"cauchy.{m}": Spec((X, LOC, SCALE))
       for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    "cauchy.ppf": Spec((UNIT, LOC, SCALE)),
    **{f"t.{m}": Spec(T) for m in ("logpdf", "pdf")},
    **{f"gamma.{m}": Spec(GAMMA_PDF) for m in ("logpdf", "pdf")},
    **{f"gamma.{m}": Spec(GAMMA_CDF) for m in ("cdf", "logcdf", "sf", "logsf")},
    **{f"chi2.{m}": Spec(GAMMA_PDF) for m in ("logpdf", "pdf")},
    **{f"chi2.{m}": Spec(GAMMA_CDF) for m in ("cdf", "logcdf", "sf", "logsf")},
    **{f"beta.{m}": Spec(BETA_PDF) for m in ("logpdf", "pdf")},
    **{f"beta.{m}": Spec(BETA_CDF, scipy=getattr(sst.beta, m))
       for m in ("cdf", "logcdf", "sf", "logsf")},
    **{f"poisson.{m}": Spec((N(0, 1, 3, 6), R(1.0, 6.0))) for m in ("logpmf", "pmf", "cdf")},
    **{f"dirichlet.{m}": Spec((R(0.2, 1.0, shape=(3,), simplex=True),
                               R(0.5, 3.0, shape=(3,)))) for m in ("logpdf", "pdf")},
    **{f"multivariate_normal.{m}": Spec((R(-2.0, 2.0, shape=(3,)), R(-1.0, 1.0, shape=(3,)),
                                         R(-1.0, 1.0, shape=(3, 3))),
                                        ours=_mvn(m, "cr"), theirs=_mvn(m, "jax"))
       for m in ("logpdf", "pdf")},
    **{f"gumbel_{side}.{m}": Spec((UNIT if m == "ppf" else X, LOC, SCALE),
                                  theirs=gumbel(sign)[m])
       for side, sign in (("r", 1.0), ("l", -1.0))
       for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")},
    # x above loc + scale for every draw
    **{f"pareto.{m}": Spec((R(2.5, 5.0), R(0.5, 3.0), LOC, SCALE))
       for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    "pareto.ppf": Spec((UNIT, R(0.5, 3.0), LOC, SCALE)),
    **{f"gennorm.{m}": Spec((X, R(1.0, 3.5))) for m in ("logpdf", "pdf")},
    # JAX differentiates the CDF in beta once (through gammainc's a)
    "gennorm.cdf": Spec((X, R(1.0, 3.5, ONE))),
    **{f"truncnorm.{m}": Spec(TRUNCNORM)
       for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    **{f"vonmises.{m}": Spec((X, R(0.5, 3.0))) for m in ("logpdf", "pdf")},
    **{f"wrapcauchy.{m}": Spec((R(0.1, 6.18), UNIT)) for m in ("logpdf", "pdf")},
    **{f"bernoulli.{m}": Spec((N(0, 1), UNIT)) for m in ("logpmf", "pmf")},
    "bernoulli.cdf": Spec((N(-1, 0, 1, 2), UNIT)),
    # a step in q and in p: both derivatives are zero
    "bernoulli.ppf": Spec((UNIT, UNIT)),
    **{f"binom.{m}": Spec((COUNT, N(5, 6, 9), UNIT)) for m in ("logpmf", "pmf")},
    **{f"betabinom.{m}": Spec((COUNT, N(5, 6, 9), R(0.5, 3.0), R(0.5, 3.0)),
                              theirs=betabinom(m)) for m in ("logpmf", "pmf")},
    # n is continuous in the negative binomial: it is differentiated
    **{f"nbinom.{m}": Spec((COUNT, R(0.5, 3.0), UNIT)) for m in ("logpmf", "pmf")},
    **{f"geom.{m}": Spec((N(1, 2, 4, 7), UNIT)) for m in ("logpmf", "pmf")},
    **{f"multinomial.{m}": Spec((Arg(order=0, values=(0, 1, 2), shape=(2,)),
                                 R(0.2, 1.0, shape=(3,), simplex=True)),
                                ours=_multinomial(m, "cr"), theirs=_multinomial(m, "jax"))
       for m in ("logpmf", "pmf")},
}

# Names both libraries have that this file does not check, and why
SKIPPED = {"bernoulli": "its argument is a count that sets the length of its output (the "
                        "Bernoulli numbers B_0 .. B_n): nothing to map or differentiate; "
                        "tests/test_scipy_special_more_against_jax.py checks its values",
           **{f"gaussian_kde.{m}": "a fitted estimator's method, not a function of arrays: "
                                   "tests/test_scipy_stats_kde.py checks it against JAX "
                                   "(values, grad, jvp, Hessian, jit and vmap)"
              for m in ("evaluate", "pdf", "logpdf", "integrate_box", "integrate_box_1d",
                        "integrate_gaussian", "integrate_kde", "resample", "set_bandwidth",
                        "tree_flatten", "tree_unflatten")}}


def jax_names():
    """Every function of chainrule.scipy.special and distribution method of
    chainrule.scipy.stats that jax.scipy also has."""
    special = [n for n in sps.__all__ if hasattr(jsp, n)]
    methods = []
    for d in stats.__all__:
        if not hasattr(jst, d):
            continue
        ours, theirs = getattr(stats, d), getattr(jst, d)
        methods += [f"{d}.{m}" for m in dir(ours)
                    if not m.startswith("_") and callable(getattr(ours, m))
                    and hasattr(theirs, m)]
    return special, methods


def resolve(name):
    """(spec, chainrule's function, JAX's function)."""
    if "." in name:
        spec = STATS[name]
        d, m = name.split(".")
        ours = spec.ours or getattr(getattr(stats, d), m)
        theirs = spec.theirs or getattr(getattr(jst, d), m)
    else:
        spec = SPECIAL[name]
        ours = spec.ours or getattr(sps, name)
        theirs = spec.theirs or getattr(jsp, name)
    return spec, ours, theirs


def test_every_function_jax_also_has_is_specified():
    special, methods = jax_names()
    missing = [n for n in special if n not in SPECIAL and n not in SKIPPED]
    missing += [n for n in methods if n not in STATS and n not in SKIPPED]
    assert not missing, f"no argument spec (nor a reason in SKIPPED) for {missing}"
    stale = [n for n in (*SPECIAL, *STATS) if n not in special + methods]
    assert not stale, f"specs for functions that are not in both libraries: {stale}"


# ---------------------------------------------------------------------------------------
# The inputs (drawn by the function's name: every check of a function sees the same
# batches, so JAX's references are computed once) and the per-example scalar
# ---------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def batch(name, which):
    spec = resolve(name)[0]
    rng = seeded("test_scipy_under_transforms", name, which)
    return tuple(a.draw(rng, BATCH) for a in spec.args)


def output_weights(name):
    spec = resolve(name)[0]
    return None if spec.weights is None else seeded(name, "c").standard_normal(spec.weights)


def scalar(name, library):
    """The function of one example, made a scalar where its output is a vector (by fixed
    weights), so that grad and hessian apply."""
    spec, ours, theirs = resolve(name)
    f = ours if library == "cr" else theirs
    c = output_weights(name)
    if c is None:
        return f
    total = cr.sum if library == "cr" else jnp.sum
    return lambda *a: total(f(*a) * c)


def differentiable(name, order=1):
    return [i for i, a in enumerate(resolve(name)[0].args) if a.order >= order]


def shared(args, mapped):
    """in_axes mapping the arguments in ``mapped``, the rest shared (example 0's, an
    array: a NumPy scalar is a number, whose gradient is a Python float)."""
    in_axes = tuple(0 if i in mapped else None for i in range(len(args)))
    return in_axes, tuple(a if i in mapped else np.asarray(a[0]) for i, a in enumerate(args))


# ---------------------------------------------------------------------------------------
# JAX's answers: for each function one jax.jit program of its values, first and second
# derivatives (one compilation, run at each batch). A function of scalars, with a scalar
# value, is entrywise over a batch: JAX's derivative of the sum of its values is each
# example's derivative, and the derivative of the sum of those each example's second;
# a vector function (logsumexp, softmax, dirichlet, multivariate_normal) is asked
# through jax.vmap.
# ---------------------------------------------------------------------------------------


def entrywise(name):
    spec = resolve(name)[0]
    return spec.weights is None and all(a.shape == () for a in spec.args)


def _summed_grad(f, i):
    return jax.grad(lambda *a: jnp.sum(f(*a)), argnums=i)


def _second_derivatives(f, args, argnums):
    """{i: each example's second derivative in argument i} of an entrywise f: the
    derivative of its summed gradient along all-ones in argument i, the directions
    pushed through together (JAX traces f's gradient once, not once per argument)."""
    if not argnums:
        return {}
    grad = _summed_grad(f, tuple(argnums))
    zeros = [jnp.zeros_like(args[i]) for i in argnums]

    def along(k):  # the derivative of every gradient along argument argnums[k]
        tangents = [jnp.where(k == m, 1.0, 0.0) + z for m, z in enumerate(zeros)]

        def of_differentiable(*values):
            full = list(args)
            for i, v in zip(argnums, values):
                full[i] = v
            return grad(*full)
        return jax.jvp(of_differentiable, [args[i] for i in argnums], tangents)[1]

    per_direction = jax.vmap(along)(jnp.arange(len(argnums)))
    return {i: per_direction[k][k] for k, i in enumerate(argnums)}


@lru_cache(maxsize=None)
def jax_program(name):
    spec, _, theirs = resolve(name)
    firsts = [i for i in differentiable(name) if spec.args[i].fd != 1]
    seconds = [i for i in differentiable(name, 2) if spec.args[i].fd != 2]
    if entrywise(name):
        def run(*args):
            grads = dict(zip(firsts, _summed_grad(theirs, tuple(firsts))(*args)))
            return {"values": theirs(*args), "grad": grads, "jacobian": grads,
                    "hessian": _second_derivatives(theirs, args, seconds)}
    else:
        f = scalar(name, "jax")

        def run(*args):
            def each(transform, g, argnums):
                return {i: jax.vmap(transform(g, argnums=i))(*args) for i in argnums}
            return {"values": jax.vmap(theirs)(*args), "grad": each(jax.grad, f, firsts),
                    "jacobian": each(jax.jacfwd, theirs, firsts),
                    "hessian": each(jax.hessian, f, seconds)}
    return jax.jit(run)


def _with_shared(args, mapped):
    """The batch with the arguments not in ``mapped`` shared: example 0's, repeated."""
    if mapped is None:
        return list(args)
    return [a if i in mapped else np.broadcast_to(a[0], a.shape) for i, a in enumerate(args)]


@lru_cache(maxsize=None)
def _every_jax_answer(name):
    """JAX's answers at every batch a check of this function asks about, run together:
    the program compiles once per process, although the suite's memory guard
    (tests/conftest.py) may empty JAX's caches between any two tests."""
    spec = resolve(name)[0]
    n = len(spec.args)
    mappings = {None} | {(i,) for i in range(n)}
    mappings |= {tuple(k for k in range(n) if k != i) for i in differentiable(name)}
    program = jax_program(name)
    answers = {}
    for which in ("A", "B"):
        for mapped in mappings:
            args = _with_shared(batch(name, which), mapped)
            answers[which, mapped] = jax.tree_util.tree_map(np.asarray, program(*args))
    for i in differentiable(name, 2):
        if spec.args[i].fd == 2:  # steps for central differences of the first derivative
            for sign in (1, -1):
                args = list(batch(name, "A"))
                args[i] = args[i] + sign * FD_STEP
                answers["A", ("step", i, sign)] = jax.tree_util.tree_map(
                    np.asarray, program(*args))
    return answers


def jax_answers(name, which, mapped=None):
    """JAX's answers at a batch; with ``mapped``, the other arguments shared (example
    0's, repeated along the batch)."""
    if mapped == tuple(range(len(resolve(name)[0].args))):
        mapped = None
    return _every_jax_answer(name)[which, mapped]


def jax_values(name, which, mapped):
    return jax_answers(name, which, mapped)["values"]


def _first_by_fd(name, args, i):
    """JAX has no derivative here: central differences of SciPy's values."""
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + FD_STEP, args[i] - FD_STEP
    scipy = resolve(name)[0].scipy
    return (scipy(*up) - scipy(*down)) / (2 * FD_STEP)


def jax_grad(name, which, i, kind="grad", mapped=None):
    """Each example's gradient of the per-example scalar in argument i (its Jacobian
    of the function itself, for kind="jacobian"); ``mapped`` as in jax_answers."""
    if resolve(name)[0].args[i].fd == 1:
        return _first_by_fd(name, _with_shared(batch(name, which), mapped), i)
    return jax_answers(name, which, mapped)[kind][i]


def jax_jacobian(name, which, i):
    return jax_grad(name, which, i, "jacobian")


def jax_hessian(name, which, i):
    if resolve(name)[0].args[i].fd == 2:  # central differences of JAX's first derivative
        up, down = (jax_answers(name, which, ("step", i, sign)) for sign in (1, -1))
        return (up["grad"][i] - down["grad"][i]) / (2 * FD_STEP)
    return jax_answers(name, which)["hessian"][i]


def tolerance(name, i, order):
    """(rtol, atol) for a derivative of this order in argument i."""
    a = resolve(name)[0].args[i]
    if a.fd == order:
        # central differences: truncation h^2 f'''/6 and rounding eps |f| / h, both about
        # 1e-10 relative here; SciPy's betainc is good to some ulps, times 1/h
        return 1e-6, 1e-8
    return (RTOL, ATOL) if order == 1 else (RTOL2, ATOL2)


# ---------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------

FALLBACKS = collections.defaultdict(collections.Counter)  # function -> operations looped


def assert_numpy(result, what):
    assert type(result) is np.ndarray, f"{what} gave {type(result).__name__}, not an ndarray"


def mapped_call(name, f, *args, **kw):
    """f(*args), noting which operations cr.vmap ran example by example in it."""
    before = collections.Counter(batching.fallbacks)
    out = f(*args, **kw)
    FALLBACKS[name].update(collections.Counter(batching.fallbacks) - before)
    return out


def check_vmap(name, mapped):
    _, ours, _ = resolve(name)
    in_axes, args = shared(batch(name, "A"), mapped)
    got = mapped_call(name, cr.vmap(ours, in_axes), *args)
    assert_numpy(got, "vmap")
    np.testing.assert_allclose(got, jax_values(name, "A", mapped), rtol=RTOL, atol=ATOL)


def check_vmap_grad(name, i):
    args = batch(name, "A")
    got = mapped_call(name, cr.vmap(cr.grad(scalar(name, "cr"), argnums=i)), *args)
    assert_numpy(got, "vmap(grad)")
    np.testing.assert_allclose(got, jax_grad(name, "A", i), *tolerance(name, i, 1))


def check_grad_vmap(name, i):
    args = batch(name, "A")
    w = seeded(name, "w").standard_normal(BATCH)
    f = scalar(name, "cr")

    def loss(*a):
        return cr.sum(cr.vmap(f)(*a) * w)

    got = mapped_call(name, cr.grad(loss, argnums=i), *args)
    assert_numpy(got, "grad(vmap)")
    expected = jax_grad(name, "A", i) * w.reshape((BATCH,) + (1,) * (args[i].ndim - 1))
    np.testing.assert_allclose(got, expected, *tolerance(name, i, 1))


def check_shared(name, i, order):
    """Argument i shared by every example (one model's parameter, a batch of data): its
    per-example gradients (vmap(grad)), or the gradient of the weighted sum of the
    mapped values (grad(vmap)), which sums them over the batch."""
    others = tuple(k for k in range(len(resolve(name)[0].args)) if k != i)
    in_axes, args = shared(batch(name, "A"), others)
    f = scalar(name, "cr")
    per_example = jax_grad(name, "A", i, mapped=others)
    if order == "vmap(grad)":
        got = mapped_call(name, cr.vmap(cr.grad(f, argnums=i), in_axes), *args)
        expected = per_example
    else:
        w = seeded(name, "w").standard_normal(BATCH)

        def loss(*a):
            return cr.sum(cr.vmap(f, in_axes)(*a) * w)

        got = mapped_call(name, cr.grad(loss, argnums=i), *args)
        expected = np.tensordot(w, per_example, axes=1)
    assert_numpy(got, order)
    np.testing.assert_allclose(got, expected, *tolerance(name, i, 1))


def check_vmap_jacfwd(name, i):
    args = batch(name, "A")
    got = mapped_call(name, cr.vmap(cr.jacfwd(resolve(name)[1], argnums=i)), *args)
    assert_numpy(got, "vmap(jacfwd)")
    np.testing.assert_allclose(got, jax_jacobian(name, "A", i), *tolerance(name, i, 1))


def check_vmap_hessian(name, i):
    args = batch(name, "A")
    got = mapped_call(name, cr.vmap(cr.hessian(scalar(name, "cr"), argnums=i)), *args)
    assert_numpy(got, "vmap(hessian)")
    np.testing.assert_allclose(got, jax_hessian(name, "A", i), *tolerance(name, i, 2))


def check_jit_vmap_grad(name):
    argnums = tuple(differentiable(name))
    step = cr.jit(cr.vmap(cr.grad(scalar(name, "cr"), argnums=argnums)))
    for which in ("A", "B"):  # traced, then replayed on new numbers
        got = mapped_call(name, step, *batch(name, which))
        for i, g in zip(argnums, got):
            assert_numpy(g, f"jit(vmap(grad)) in argument {i}")
            np.testing.assert_allclose(g, jax_grad(name, which, i), *tolerance(name, i, 1),
                                       err_msg=f"batch {which}, argument {i}")


def check_jit_grad(name):
    argnums = tuple(differentiable(name))
    step = cr.jit(cr.grad(scalar(name, "cr"), argnums=argnums))
    for which in ("A", "B"):
        for k in (0, 1):  # one example, then another: replayed (as 0-d arrays: a
            # NumPy scalar is a number, and cr.grad of a number is a Python float)
            got = step(*(np.asarray(a[k]) for a in batch(name, which)))
            for i, g in zip(argnums, got):
                assert_numpy(g, f"jit(grad) in argument {i}")
                np.testing.assert_allclose(g, jax_grad(name, which, i)[k],
                                           *tolerance(name, i, 1),
                                           err_msg=f"batch {which}[{k}], argument {i}")


def checks(name):
    """Every check of one function: (id, callable)."""
    spec = resolve(name)[0]
    n = len(spec.args)
    out = [("vmap", lambda: check_vmap(name, tuple(range(n))))]
    if n > 1:
        out += [(f"vmap in_axes[{i}]", lambda i=i: check_vmap(name, (i,))) for i in range(n)]
    for i in differentiable(name):
        out += [(f"vmap(grad)[{i}]", lambda i=i: check_vmap_grad(name, i)),
                (f"grad(vmap)[{i}]", lambda i=i: check_grad_vmap(name, i)),
                (f"vmap(jacfwd)[{i}]", lambda i=i: check_vmap_jacfwd(name, i))]
        if spec.args[i].order >= 2:
            out.append((f"vmap(hessian)[{i}]", lambda i=i: check_vmap_hessian(name, i)))
        if n > 1:
            out += [(f"{order}[{i}] shared", lambda i=i, order=order: check_shared(name, i, order))
                    for order in ("vmap(grad)", "grad(vmap)")]
    if differentiable(name):
        out += [("jit(vmap(grad))", lambda: check_jit_vmap_grad(name)),
                ("jit(grad)", lambda: check_jit_grad(name))]
    return out


# chainrule defects these checks found outside chainrule.scipy (id -> reason)
KNOWN = {}


def cases():
    for name in (*SPECIAL, *STATS):
        for k, (check, run) in enumerate(checks(name)):
            case_id = f"{name}-{check}"
            marks = ([pytest.mark.xfail(strict=True, reason=KNOWN[case_id])]
                     if case_id in KNOWN else [])
            # the developer's loop (make test-fast) runs each function's first check;
            # make test runs them all
            yield pytest.param(run, id=case_id, marks=marks + ([pytest.mark.slow] if k else []))


@pytest.mark.parametrize("run", list(cases()))
def test_under_transforms_as_jax(run):
    run()


@pytest.fixture(scope="module", autouse=True)
def report_fallbacks(request):
    """At the end of the module: which functions cr.vmap ran example by example."""
    yield
    looped = {name: dict(c) for name, c in FALLBACKS.items() if c}
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin(
        "capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            reporter.write_line("scipy under cr.vmap, operations run example by example: "
                                + (", ".join(f"{n}: {c}"
                                             for n, c in sorted(looped.items())) or "none"))
