"""SciPy's solvers with derivatives: ``minimize``, ``root``, ``fsolve``, ``least_squares``,
``root_scalar``, ``brentq`` and ``newton``, with SciPy's signatures.

SciPy solves, on plain numbers, given chainrule's exact derivatives where the method
uses them and the caller gave none (``jac``, ``hess``/``hessp``, ``fprime``). The
answer is differentiable with respect to everything in ``args`` (any pytree of arrays,
numbers and Tensors) and to the values the function closes over, in reverse and forward
mode, to any order, under ``vmap`` (one solve per example) and ``cr.jit`` (one solve per
call), by the implicit function theorem at the solution (``transforms/implicit.py``):
the optimality conditions are a root of the gradient (minimize, least_squares) or of
the function itself (the others), and their derivative costs one linear solve. The start ``x0`` has no effect on it.

With constraints or bounds, ``minimize``'s conditions (and, with bounds,
``least_squares``') are the KKT conditions on the active set at the solution
(``optimize_constrained.py``): a bound active there fixes its coordinate, and the active
constraints' multipliers are solved for with x; the result holds them, differentiable
too (``constraint_multipliers``, ``bound_multipliers``).

Where those conditions do not describe the answer, differentiating it raises, naming
why: the solver did not converge, an active constraint or bound has a zero multiplier
(or one of the wrong sign: not a minimum), or the active constraints' gradients are
dependent. Values closed over that two nested vmaps batch, or that cr.jit traces, are
refused the same way: pass them in ``args``.

    >>> from chainrule.scipy import optimize
    >>> cube_root = lambda a: optimize.brentq(lambda x, a: x ** 3 - a, 0.0, 5.0, args=(a,))
    >>> round(float(cube_root(8.0)), 12), round(float(cr.grad(cube_root)(8.0)), 9)  # 1/12
    (2.0, 0.083333333)
"""

from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np
import scipy.optimize as _so

from .. import rules as ops
from ..primitive import Box, raw, shape_of
from ..transforms.functional import grad, jvp
from ..transforms.jacobians import hessian, jacfwd
from ..transforms.implicit import implicit_solution
from ..transforms.solver_numbers import plain, reads_numbers, supplied
from .optimize_constrained import bound_values, bounded, constrained_minimize, flat_bound

__all__ = ["minimize", "root", "fsolve", "least_squares", "root_scalar", "brentq", "newton"]

# what minimize, root and least_squares return (imported, not assigned: where SciPy's
# hints are missing, mypy reads an imported class as Any, an assigned one as no type)
from scipy.optimize import OptimizeResult

_HESSIAN_METHODS = {"dogleg", "trust-exact", "trust-constr"}
_HESSP_METHODS = {"newton-cg", "trust-ncg", "trust-krylov"}
_GRADIENT_FREE = {"nelder-mead", "powell", "cobyla", "cobyqa"}


def _tuple(args):
    return args if isinstance(args, tuple) else (args,)


def _shape(x0):
    """The shape of x0 (of one example, under vmap). The start itself goes to the solver
    with the arguments, as numbers: the solution does not depend on it."""
    return tuple(shape_of(x0))


def _flat(x0):
    """x0 as the solvers' x (flat): where the residual runs first, to find the values
    the function closes over."""
    return ops.reshape(x0, (-1,)) if isinstance(x0, Box) else np.ravel(np.asarray(x0, float))


def _first(out):
    """f of a function that returns (f, derivative) (SciPy's ``jac=True``)."""
    return out[0] if isinstance(out, tuple) else out


# ---------------------------------------------------------------------------------------
# minimize: x* is a root of the objective's gradient
# ---------------------------------------------------------------------------------------

def minimize(fun: Callable[..., Any], x0: Any, args: Any = (), method: str | None = None,
             jac: Any = None, hess: Any = None, hessp: Any = None, bounds: Any = None,
             constraints: Any = (), tol: float | None = None, callback: Any = None,
             options: dict | None = None) -> OptimizeResult:
    """scipy.optimize.minimize, whose ``x`` (and ``fun``) are differentiable with respect
    to ``args``. Without ``jac`` SciPy gets the exact gradient, and for methods that use
    one, the exact Hessian (dogleg, trust-exact, trust-constr) or Hessian-vector products
    (Newton-CG, trust-ncg, trust-krylov). With ``constraints`` (SciPy's dicts, with
    their own ``args``, NonlinearConstraint, LinearConstraint) or ``bounds``, x is
    differentiated through the KKT conditions on the active set at the solution, and
    SciPy gets the constraints' exact Jacobians (and Hessians, for trust-constr); x is
    then SciPy's answer refined by Newton's method on those conditions. A bound given
    as a ``(min, max)`` pair may be a differentiable value: a coordinate on it moves
    with it.

    The result then holds the Lagrange multipliers, differentiable like x: with J the
    Jacobian of the constraints' functions (each dict's ``fun``, each
    NonlinearConstraint's ``fun``, each LinearConstraint's ``A x``, their values one
    after another), grad f(x*) = J^T ``constraint_multipliers`` + ``bound_multipliers``.
    A multiplier is 0 where its constraint is not active, >= 0 where an ``ineq`` dict
    or a lower side ``lb`` is, <= 0 where an upper side ``ub`` is; a bound's is > 0 at
    a lower bound, < 0 at an upper one (shaped as x). (SciPy's own SLSQP
    ``multipliers``, of its last QP, are left as they are.)

    >>> from chainrule.scipy.optimize import minimize
    >>> def ridge(w, lam):                  # the minimizer is 3 / (1 + lam)
    ...     return 0.5 * cr.sum((w - 3.0) ** 2) + 0.5 * lam * cr.sum(w ** 2)
    >>> best = lambda lam: minimize(ridge, np.zeros(1), args=(lam,), method="BFGS").x[0]
    >>> round(float(best(2.0)), 6), round(float(cr.grad(best)(2.0)), 6)   # -3 / (1 + lam)^2
    (1.0, -0.333333)
    >>> def nearest(a):                     # the point of x0 + x1 = 1 nearest to a
    ...     return minimize(lambda x, a: cr.sum((x - a) ** 2), np.zeros(2), args=(a,),
    ...                     constraints={"type": "eq", "fun": lambda x: x[0] + x[1] - 1}).x
    >>> (cr.jacrev(nearest)(np.array([1.0, 2.0])).round(9) + 0.0).tolist()
    [[0.5, -0.5], [-0.5, 0.5]]
    >>> def multiplier(a):                  # grad f = 2 (x - a) = lam (1, 1)
    ...     return minimize(lambda x, a: cr.sum((x - a) ** 2), np.zeros(2), args=(a,),
    ...                     constraints={"type": "eq", "fun": lambda x: x[0] + x[1] - 1}
    ...                     ).constraint_multipliers[0]
    >>> round(float(multiplier(np.array([1.0, 2.0]))), 9)      # 1 - sum(a)
    -2.0
    >>> (cr.grad(multiplier)(np.array([1.0, 2.0])).round(9) + 0.0).tolist()
    [-1.0, -1.0]
    """
    args = _tuple(args)
    shape = _shape(x0)
    name = (method or "").lower()
    fun = reads_numbers(fun, "minimize")
    jac = supplied(jac, "minimize")
    hess, hessp = supplied(hess, "minimize"), supplied(hessp, "minimize")

    def objective(x, *a):
        return _first(fun(ops.reshape(x, shape), *a))

    def gradient(x, *a):
        return ops.reshape(grad(objective)(x, *a), (-1,))

    found = SimpleNamespace(result=None)

    def run_scipy(x_start, a, scipy_constraints, scipy_bounds=None):
        f = lambda x: float(plain(objective(x, *a), "minimize"))  # noqa: E731
        extra = {}
        if name not in _GRADIENT_FREE:
            if jac is True:
                f = lambda x: _plain_pair(fun(x.reshape(shape), *a), "minimize")  # noqa: E731
                extra["jac"] = True
            elif callable(jac):
                extra["jac"] = lambda x: np.ravel(jac(x.reshape(shape), *a))
            else:
                extra["jac"] = lambda x: plain(gradient(x, *a), "minimize")
        if hess is not None:
            extra["hess"] = hess if not callable(hess) else \
                (lambda x: hess(x.reshape(shape), *a))
        elif hessp is not None:
            extra["hessp"] = lambda x, p: np.ravel(hessp(x.reshape(shape), p, *a))
        elif name in _HESSIAN_METHODS:
            extra["hess"] = lambda x: plain(hessian(objective)(x, *a), "minimize")
        elif name in _HESSP_METHODS:
            extra["hessp"] = lambda x, p: plain(_hvp(objective, x, p, a), "minimize")
        return _so.minimize(f, np.asarray(x_start, float).reshape(-1), method=method,
                            bounds=scipy_bounds if bounds is not None else None,
                            constraints=scipy_constraints, tol=tol,
                            callback=callback, options=options, **extra)

    if _constrained(constraints) or bounds is not None:
        x, res, on_rows, on_bounds = constrained_minimize(
            objective, gradient, run_scipy, x0, args, shape,
            bound_values(bounds, int(np.prod(shape))), constraints, name)
        out = _result(res, ops.reshape(x, shape),
                      lambda: objective(ops.reshape(x, (-1,)), *args))
        out.constraint_multipliers = on_rows
        out.bound_multipliers = ops.reshape(on_bounds, shape)
        return out

    def solve(tree):
        x_start, a = tree
        res = run_scipy(x_start, a, ())
        found.result = res
        stationary = res.success or _stationary(gradient(res.x, *a), res.fun)
        return res.x, _minimize_problem(res, stationary, bounds, constraints)

    x = implicit_solution(lambda x, x_start, a: gradient(x, *a), solve, (x0, args),
                          "minimize", at=_flat(x0))
    return _result(found.result, ops.reshape(x, shape),
                   lambda: objective(ops.reshape(x, (-1,)), *args))


def _hvp(objective, x, p, a):
    """The Hessian of the objective at x times p: a derivative of the gradient along p."""
    return jvp(lambda y: grad(objective)(y, *a), (x,), (p,))[1]


def _plain_pair(out, who):
    value, derivative = out
    return float(plain(value, who)), np.ravel(plain(derivative, who))


def _stationary(gradient, value):
    """Whether the gradient is 0 to rounding at the answer: SciPy may report a failure
    (a trust region that cannot shrink further) where the answer is the minimum."""
    size = float(np.max(np.abs(plain(gradient, "minimize")), initial=0.0))
    return size <= np.sqrt(np.finfo(float).eps) * (1.0 + abs(float(value)))


def _minimize_problem(res, stationary, bounds, constraints):
    if not stationary:
        return f"the solver did not converge ({res.message})"
    return None


def _constrained(constraints):
    """Whether SciPy's ``constraints`` holds any constraint."""
    if isinstance(constraints, (dict, _so.NonlinearConstraint, _so.LinearConstraint)):
        return True
    return bool(constraints)


def _result(res, x, value):
    """SciPy's result with ``x`` the differentiable solution (and ``fun`` at it, where
    the solution carries a derivative)."""
    out = OptimizeResult(dict(res))
    out.x = x
    if isinstance(x, Box):
        out.fun = value()
    return out


# ---------------------------------------------------------------------------------------
# Roots: x* is a root of the function itself
# ---------------------------------------------------------------------------------------

def root(fun: Callable[..., Any], x0: Any, args: Any = (), method: str = "hybr",
         jac: Any = None, tol: float | None = None, callback: Any = None,
         options: dict | None = None) -> OptimizeResult:
    """scipy.optimize.root, whose ``x`` is differentiable with respect to ``args``;
    without ``jac``, the methods that use one (hybr, lm) get the exact Jacobian.

    >>> from chainrule.scipy.optimize import root
    >>> cube_root = lambda a: root(lambda x, a: x ** 3 - a, np.ones(1), args=(a,)).x[0]
    >>> round(float(cube_root(8.0)), 9), round(float(cr.grad(cube_root)(8.0)), 9)  # 1/12
    (2.0, 0.083333333)
    """
    args = _tuple(args)
    shape = _shape(x0)
    fun = reads_numbers(fun, "root")
    jac = supplied(jac, "root")

    def residual(x, *a):
        return ops.reshape(_first(fun(ops.reshape(x, shape), *a)), (-1,))

    found = SimpleNamespace(result=None)

    def solve(tree):
        x_start, a = tree
        values = lambda x: np.ravel(plain(residual(x, *a), "root"))  # noqa: E731
        f, extra = values, {}
        if jac is True:
            f = lambda x: _plain_values_and_jacobian(fun(x.reshape(shape), *a))  # noqa: E731
            extra["jac"] = True
        elif callable(jac):
            extra["jac"] = lambda x: jac(x.reshape(shape), *a)
        elif method in ("hybr", "lm"):
            extra["jac"] = lambda x: plain(jacfwd(residual)(x, *a), "root")
        start = np.asarray(x_start, float).reshape(-1)
        res = _so.root(f, start, method=method, tol=tol, callback=callback,
                       options=options, **extra)
        found.result = res
        solved = res.success or _at_rounding(values(res.x), values(start))
        return res.x, (None if solved else f"the solver did not converge ({res.message})")

    x = implicit_solution(lambda x, x_start, a: residual(x, *a), solve, (x0, args), "root",
                          at=_flat(x0))
    return _result(found.result, ops.reshape(x, shape),
                   lambda: fun(ops.reshape(x, shape), *args))


def _at_rounding(residual, at_start):
    """Whether a residual is 0 to rounding, on the scale of the residual at the start:
    SciPy may report a failure (no further improvement possible) at such a root."""
    scale = max(1.0, float(np.max(np.abs(at_start), initial=0.0)))
    return float(np.max(np.abs(residual), initial=0.0)) <= np.sqrt(np.finfo(float).eps) * scale


def _plain_values_and_jacobian(out):
    value, jacobian = out
    return np.ravel(plain(value, "root")), plain(jacobian, "root")


def fsolve(func: Callable[..., Any], x0: Any, args: Any = (), fprime: Any = None,
           full_output: bool = False, **options: Any) -> Any:
    """scipy.optimize.fsolve, whose answer is differentiable with respect to ``args``;
    without ``fprime``, it gets the exact Jacobian.

    >>> from chainrule.scipy.optimize import fsolve
    >>> balance = lambda a: fsolve(lambda x, a: [x[0] - a * x[1], x[1] - 2.0], [1.0, 1.0],
    ...                            args=(a,))
    >>> balance(3.0).round(9).tolist(), (cr.jacfwd(balance)(3.0).round(9) + 0.0).tolist()
    ([6.0, 2.0], [2.0, 0.0])
    """
    args = _tuple(args)
    shape = _shape(x0)
    func = reads_numbers(func, "fsolve")
    fprime = supplied(fprime, "fsolve")

    def residual(x, *a):
        out = func(ops.reshape(x, shape), *a)
        if isinstance(out, (list, tuple)):
            out = ops.stack([ops.reshape(v, ()) for v in out])
        return ops.reshape(out, (-1,))

    found = SimpleNamespace(info=None)

    def solve(tree):
        x_start, a = tree
        jacobian = (lambda x: fprime(x.reshape(shape), *a)) if callable(fprime) else \
            (lambda x: plain(jacfwd(residual)(x, *a), "fsolve"))
        x, info, ier, message = _so.fsolve(
            lambda x: np.ravel(plain(residual(x, *a), "fsolve")),
            np.asarray(x_start, float).reshape(-1), fprime=jacobian, full_output=True,
            **options)
        found.info = (info, ier, message)
        return x, (None if ier == 1 else f"the solver did not converge ({message})")

    x = ops.reshape(implicit_solution(lambda x, x_start, a: residual(x, *a), solve,
                                      (x0, args), "fsolve", at=_flat(x0)), shape)
    return (x, *found.info) if full_output else x


def least_squares(fun: Callable[..., Any], x0: Any, jac: Any = "2-point",
                  bounds: Any = (-np.inf, np.inf), method: str = "trf",
                  loss: Any = "linear", f_scale: float = 1.0, args: Any = (),
                  kwargs: dict | None = None, **options: Any) -> OptimizeResult:
    """scipy.optimize.least_squares, whose ``x`` is differentiable with respect to
    ``args`` and ``kwargs``: x* is a root of the gradient of the loss
    0.5 * sum(f_scale**2 * rho((r / f_scale)**2)). A finite-difference ``jac`` (a
    string) is replaced by the exact Jacobian of the residuals; SciPy's other options
    (ftol, xtol, gtol, x_scale, max_nfev...) pass through.

    With ``bounds`` (finite somewhere), x* is differentiated through the KKT
    conditions of the bounded problem: a coordinate at an active bound stays there, the
    others make the loss's gradient 0. The result's ``bound_multipliers`` (shaped as x,
    differentiable too) are that gradient at the coordinates at a bound (> 0 at a lower
    bound, < 0 at an upper one) and 0 elsewhere. An active bound whose multiplier is 0
    has no derivative, and differentiating there raises. ``lb`` and ``ub`` may be
    differentiable values: a coordinate at an active bound moves with it.

    >>> from chainrule.scipy.optimize import least_squares
    >>> t = np.array([0.0, 1.0, 2.0])
    >>> fit = lambda y: least_squares(lambda p, y: p[0] + p[1] * t - y, np.zeros(2),
    ...                               args=(y,)).x
    >>> fit(np.array([1.0, 3.0, 5.0])).round(9).tolist()      # intercept 1, slope 2
    [1.0, 2.0]
    >>> (cr.jacrev(fit)(np.array([1.0, 3.0, 5.0])).round(9) + 0.0).tolist()  # pseudo-inverse
    [[0.833333333, 0.333333333, -0.166666667], [-0.5, 0.0, 0.5]]
    >>> clip = lambda y: least_squares(lambda p, y: p - y, np.full(2, 0.5), args=(y,),
    ...                                bounds=(0.0, 1.0))       # y[1] = 2 is clipped to 1
    >>> y = np.array([0.5, 2.0])
    >>> clip(y).x.round(9).tolist(), (clip(y).bound_multipliers.round(9) + 0.0).tolist()
    ([0.5, 1.0], [0.0, -1.0])
    >>> (cr.jacrev(lambda y: clip(y).x)(y).round(9) + 0.0).tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    args, kwargs = _tuple(args), dict(kwargs or {})
    shape = _shape(x0)
    fun = reads_numbers(fun, "least_squares")
    jac = supplied(jac, "least_squares")

    def residuals(x, a, k):
        return ops.reshape(fun(ops.reshape(x, shape), *a, **k), (-1,))

    def cost(x, a, k):
        z = (residuals(x, a, k) / f_scale) ** 2
        return 0.5 * f_scale ** 2 * ops.sum(_rho(loss, z))

    found = SimpleNamespace(result=None)

    def run_scipy(x_start, a, k, scipy_bounds):
        jacobian = (lambda x: jac(x, *a, **k)) if callable(jac) else \
            (lambda x: plain(jacfwd(residuals)(x, a, k), "least_squares"))
        res = _so.least_squares(
            lambda x: np.ravel(plain(residuals(x, a, k), "least_squares")),
            np.asarray(x_start, float).reshape(-1), jac=jacobian, bounds=scipy_bounds,
            method=method, loss=loss, f_scale=f_scale, **options)
        found.result = res
        return res

    lower, upper = (bounds.lb, bounds.ub) if isinstance(bounds, _so.Bounds) else bounds
    lower, upper = flat_bound(lower, shape), flat_bound(upper, shape)
    if bounded(lower, upper):
        x, res, _, on_bounds = constrained_minimize(
            cost, lambda x, a, k: ops.reshape(grad(cost)(x, a, k), (-1,)),
            lambda x_start, tree, _, box: run_scipy(x_start, *tree, (box.lb, box.ub)),
            x0, (args, kwargs), shape, (lower, upper), (), method, who="least_squares")
        out = _result(res, ops.reshape(x, shape),
                      lambda: residuals(ops.reshape(x, (-1,)), args, kwargs))
        out.bound_multipliers = ops.reshape(on_bounds, shape)
        return out

    def solve(tree):
        x_start, a, k = tree
        res = run_scipy(x_start, a, k, bounds)
        if res.status <= 0:
            return res.x, f"the solver did not converge ({res.message})"
        return res.x, None

    x = implicit_solution(lambda x, x_start, a, k: ops.reshape(grad(cost)(x, a, k), (-1,)),
                          solve, (x0, args, kwargs), "least_squares", at=_flat(x0))
    return _result(found.result, ops.reshape(x, shape),
                   lambda: residuals(ops.reshape(x, (-1,)), args, kwargs))


def _rho(loss, z):
    """SciPy's robust losses rho(z), z = (r / f_scale)**2, in chainrule's operations."""
    if callable(loss):
        return loss(z)[0]
    if loss == "linear":
        return z
    if loss == "soft_l1":
        return 2.0 * ((1.0 + z) ** 0.5 - 1.0)
    if loss == "huber":
        return ops.where(z <= 1.0, z, 2.0 * ops.sqrt(ops.maximum(z, 1.0)) - 1.0)
    if loss == "cauchy":
        return ops.log1p(z)
    if loss == "arctan":
        return ops.arctan(z)
    raise ValueError(f"least_squares: loss must be 'linear', 'soft_l1', 'huber', 'cauchy', "
                     f"'arctan' or a callable, got {loss!r}")


# ---------------------------------------------------------------------------------------
# Scalar roots
# ---------------------------------------------------------------------------------------

def _scalar_residual(f, who):
    def residual(x, *a):
        return ops.reshape(_first(f(ops.reshape(x, ()), *a)), (1,))
    return residual


def _derivative(residual, a, who):
    return lambda x: float(plain(grad(lambda y: residual(y, *a)[0])(
        np.asarray(x, float).reshape(1))[0], who))


def root_scalar(f: Callable[..., Any], args: Any = (), method: str | None = None,
                bracket: Sequence[float] | None = None, fprime: Any = None,
                fprime2: Any = None, x0: float | None = None, x1: float | None = None,
                xtol: float | None = None, rtol: float | None = None,
                maxiter: int | None = None, options: dict | None = None) -> Any:
    """scipy.optimize.root_scalar, whose ``root`` is differentiable with respect to
    ``args``; Newton's and Halley's methods get exact derivatives when none are given.

    >>> from chainrule.scipy.optimize import root_scalar
    >>> where = lambda c: root_scalar(lambda x, c: x * x - c, args=(c,),
    ...                               bracket=[0.0, 10.0]).root
    >>> round(float(where(4.0)), 12), round(float(cr.grad(where)(4.0)), 9)   # 1 / (2 sqrt c)
    (2.0, 0.25)
    """
    args = _tuple(args)
    f = reads_numbers(f, "root_scalar")
    fprime, fprime2 = supplied(fprime, "root_scalar"), supplied(fprime2, "root_scalar")
    residual = _scalar_residual(f, "root_scalar")
    found = SimpleNamespace(result=None)

    def solve(a):
        g = lambda x: float(plain(residual(np.asarray(x, float), *a)[0], "root_scalar"))  # noqa: E731
        extra = {}
        if method in ("newton", "halley") and fprime is None:
            extra["fprime"] = _derivative(residual, a, "root_scalar")
        elif fprime is not None:
            extra["fprime"] = fprime if fprime is True else (lambda x: fprime(x, *a))
        if method == "halley" and fprime2 is None:
            first = lambda y: grad(lambda u: residual(u, *a)[0])(y)  # noqa: E731
            extra["fprime2"] = lambda x: float(plain(jacfwd(first)(
                np.asarray(x, float).reshape(1))[0, 0], "root_scalar"))
        elif fprime2 is not None:
            extra["fprime2"] = fprime2 if fprime2 is True else (lambda x: fprime2(x, *a))
        if fprime is True:
            g = lambda x: _plain_pair(f(x, *a), "root_scalar")  # noqa: E731
        out = _so.root_scalar(g, method=method, bracket=bracket, x0=x0, x1=x1, xtol=xtol,
                              rtol=rtol, maxiter=maxiter, options=options, **extra)
        found.result = out
        return np.array([out.root]), (None if out.converged else
                                      f"the solver did not converge ({out.flag})")

    start = x0 if x0 is not None else (bracket[0] if bracket is not None else 0.0)
    x = implicit_solution(residual, solve, args, "root_scalar",
                          at=np.array([float(raw(start))]))
    out = found.result
    out.root = ops.reshape(x, ())
    return out


def brentq(f: Callable[..., Any], a: float, b: float, args: Any = (), xtol: float = 2e-12,
           rtol: float = 8.881784197001252e-16, maxiter: int = 100,
           full_output: bool = False, disp: bool = True) -> Any:
    """scipy.optimize.brentq, whose root is differentiable with respect to ``args`` (the
    bracket [a, b] has no effect on it).

    >>> from chainrule.scipy.optimize import brentq
    >>> crossing = lambda k: brentq(lambda x, k: np.cos(x) - k * x, 0.0, 2.0, args=(k,))
    >>> round(float(crossing(1.0)), 9), round(float(cr.grad(crossing)(1.0)), 9)
    (0.739085133, -0.441610792)
    """
    args = _tuple(args)
    f = reads_numbers(f, "brentq")
    residual = _scalar_residual(f, "brentq")
    found = SimpleNamespace(result=None)
    lo, hi = float(raw(a)), float(raw(b))

    def solve(p):
        g = lambda x: float(plain(residual(np.asarray(x, float), *p)[0], "brentq"))  # noqa: E731
        x, out = _so.brentq(g, lo, hi, xtol=xtol, rtol=rtol, maxiter=maxiter,
                            full_output=True, disp=disp)
        found.result = out
        return np.array([x]), (None if out.converged else
                               f"the solver did not converge ({out.flag})")

    x = ops.reshape(implicit_solution(residual, solve, args, "brentq",
                                            at=np.array([lo])), ())
    return (x, found.result) if full_output else x


def newton(func: Callable[..., Any], x0: Any, fprime: Any = None, args: Any = (),
           tol: float = 1.48e-08, maxiter: int = 50, fprime2: Any = None,
           x1: float | None = None, rtol: float = 0.0, full_output: bool = False,
           disp: bool = True) -> Any:
    """scipy.optimize.newton, whose root is differentiable with respect to ``args``. For
    a scalar x0 without ``fprime`` (and without ``x1``), Newton's method gets the exact
    derivative, where SciPy would take the secant method; an array x0 solves each entry
    as SciPy does.

    >>> from chainrule.scipy.optimize import newton
    >>> sqrt = lambda c: newton(lambda x, c: x * x - c, 1.0, args=(c,))
    >>> round(float(sqrt(2.0)), 12), round(float(cr.grad(sqrt)(2.0)), 9)
    (1.414213562373, 0.353553391)
    """
    args = _tuple(args)
    shape = _shape(x0)
    scalar = shape == ()
    func = reads_numbers(func, "newton")
    fprime, fprime2 = supplied(fprime, "newton"), supplied(fprime2, "newton")
    found = SimpleNamespace(result=None)

    def residual(x, x_start, *a):
        if scalar:
            return ops.reshape(func(ops.reshape(x, ()), *a), (1,))
        return ops.reshape(func(ops.reshape(x, np.shape(x_start)), *a), (-1,))

    def solve(tree):
        x_start, a = tree
        start = np.asarray(x_start, float)
        g = lambda x: plain(func(x, *a), "newton")  # noqa: E731
        extra = {}
        if fprime is not None:
            extra["fprime"] = lambda x: fprime(x, *a)
        elif scalar and x1 is None:
            extra["fprime"] = _derivative(lambda y, *b: residual(y, start, *b), a, "newton")
        if fprime2 is not None:
            extra["fprime2"] = lambda x: fprime2(x, *a)
        x, converged, *rest = _newton_run(g, start if not scalar else float(start), tol,
                                          maxiter, x1, rtol, disp, extra)
        found.result = rest
        bad = not np.all(converged)
        return np.ravel(x), ("the solver did not converge" if bad else None)

    x = implicit_solution(lambda x, x_start, a: residual(x, x_start, *a), solve,
                          (x0, args), "newton", at=_flat(x0))
    x = ops.reshape(x, shape)
    return (x, *found.result) if full_output else x


def _newton_run(g, start, tol, maxiter, x1, rtol, disp, extra):
    """SciPy's newton with its answer and whether it converged (a scalar run returns a
    RootResults; an array run a namedtuple of root, converged, zero_der)."""
    out = _so.newton(g, start, tol=tol, maxiter=maxiter, x1=x1, rtol=rtol,
                     full_output=True, disp=disp, **extra)
    if np.ndim(start) == 0:
        x, results = out
        return x, results.converged, results
    return out.root, out.converged, out
