"""``minimize`` with constraints or bounds, and ``least_squares`` with bounds: the
solution differentiated through the KKT conditions (issue 46).

At a solution x* of  min f(x; a)  s.t. c_eq(x; a) = 0, c_ineq(x; a) >= 0, lb <= x <= ub,
with the active set A (the equality constraints, and the inequality constraints and
bounds at 0 at x*), the KKT conditions with L = f - lam . c read

    grad_x L(x, lam) = 0 on the coordinates not at a bound,
    x_j = bound_j on those at a bound,
    c_i(x) = 0 for i in A,   lam_i = 0 for the others,

a root y = (x, lam) of a function F(y; a) to which the implicit function theorem applies
where the active set does not change nearby: the multipliers of the active inequalities
are strictly positive (strict complementarity) and the active constraints' gradients,
on the free coordinates, are independent (LICQ). The solver's answer goes through
``implicit_solution`` as y = [x, lam, s_bounds, s_constraints]: the active set rides in
the answer as numbers (s_bounds = -1 / 0 / +1 for a lower bound / none / an upper bound,
s_constraints = 1 / 0 for active or not), read back with ``round`` (whose derivative is
0), so each example of a vmap, and each call of cr.jit, carries its own. Their rows of
F are s - round(s): 0 at the answer, identity in J, and they do not move with a.

The multipliers are found at SciPy's answer by least squares from grad f = J_A^T lam on
the free coordinates, and (x, lam) is then polished by Newton's method on F, so the
solution is a root of F to rounding. The multipliers come out of the same solve (and its
derivative), and the bounds' are the Lagrangian's gradient at the coordinates at a bound.
"""

from typing import Any, Callable

import numpy as np
import scipy.optimize as _so

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, shape_of
from ..rules.predicates import isfinite
from ..transforms.functional import grad
from ..transforms.jacobians import hessian, jacfwd
from ..transforms.implicit import implicit_solution
from ..transforms.solver_numbers import plain

__all__: list = []


def _constraint_list(constraints):
    """SciPy's constraints (a dict, a NonlinearConstraint, a LinearConstraint, or a list
    of them) as a list of (kind, fn(x, *cargs) -> values, cargs, jac or None), kind
    'eq' or 'ineq' (values >= 0), and beside it, for each, (its constraint function's
    row, or None for a dict's rows of its own; the sign of that row in fn): a two-sided
    row lb <= g(x) <= ub is two entries, g - lb and ub - g, of one row."""
    if isinstance(constraints, (dict, _so.NonlinearConstraint, _so.LinearConstraint)):
        constraints = [constraints]
    out, rows = [], []
    for j, con in enumerate(constraints or ()):
        if isinstance(con, dict):
            kind = con["type"].lower()
            if kind not in ("eq", "ineq"):
                raise ValueError(f"minimize: a constraint's type must be 'eq' or 'ineq', "
                                 f"got {con['type']!r}")
            out.append((kind, con["fun"], tuple(con.get("args", ())), con.get("jac")))
            rows.append((None, 1.0))
            continue
        if isinstance(con, _so.LinearConstraint):
            A = np.atleast_2d(np.asarray(con.A, float))
            fn = (lambda A: lambda x: ops.matmul(A, ops.reshape(x, (-1,))))(A)
        else:
            fn = (lambda g: lambda x: ops.reshape(g(x), (-1,)))(con.fun)
        lb, ub = np.ravel(np.asarray(con.lb, float)), np.ravel(np.asarray(con.ub, float))
        for k in range(max(lb.size, ub.size)):
            lo, hi = lb[k % lb.size], ub[k % ub.size]
            pick = (lambda fn, k: lambda x: ops.reshape(fn(x), (-1,))[k])(fn, k)
            if lo == hi:
                out.append(("eq", (lambda p, lo: lambda x: p(x) - lo)(pick, lo), (), None))
                rows.append(((j, k), 1.0))
                continue
            if np.isfinite(lo):
                out.append(("ineq", (lambda p, lo: lambda x: p(x) - lo)(pick, lo), (), None))
                rows.append(((j, k), 1.0))
            if np.isfinite(hi):
                out.append(("ineq", (lambda p, hi: lambda x: hi - p(x))(pick, hi), (), None))
                rows.append(((j, k), -1.0))
    return out, rows


def _to_rows(rows, sizes):
    """The matrix P (rows of the constraints' functions x entries of _constraint_list's
    values) with P lam the multipliers of the functions' rows: a two-sided row's two
    entries, g - lb and ub - g, give lam_lower - lam_upper."""
    first, count, entries = {}, 0, []
    for e, ((row, sign), size) in enumerate(zip(rows, sizes)):
        key = ("entry", e) if row is None else row
        if key not in first:
            first[key], count = count, count + size
        entries.extend((first[key] + i, sign) for i in range(size))
    P = np.zeros((count, len(entries)))
    for column, (r, sign) in enumerate(entries):
        P[r, column] = sign
    return P


def _moving(value):
    """Whether a bound is a value the solve must follow: one that carries a derivative,
    or cr.jit's traced array (its numbers known only at each call)."""
    return isinstance(value, Box) or (type(value) is not np.ndarray
                                      and type(value) in xp.ARRAYS)


def _column(entries, fill):
    """Bounds given one per coordinate (numbers, None for no bound, or values that carry
    a derivative) as one flat vector: an ndarray, or a value differentiable in them."""
    entries = [fill if e is None else e for e in entries]
    if not any(_moving(e) for e in entries):
        return np.asarray(entries, float).reshape(-1)
    return ops.stack([ops.reshape(e, ()) if _moving(e) else float(e) for e in entries])


def flat_bound(value, shape):
    """One side of the bounds (a number, an array or a value that carries a derivative,
    broadcast to x's ``shape``) as one flat vector; a fresh ndarray for plain numbers."""
    if _moving(value):
        return ops.reshape(ops.broadcast_to(value, shape), (-1,))
    return np.ravel(np.broadcast_to(np.asarray(value, float), shape)).copy()


def bound_values(bounds, n):
    """``minimize``'s bounds (None, a Bounds, or a pair (min, max) per coordinate, None
    for no bound) as two flat vectors (lower, upper) of x's n entries; either may carry
    a derivative: x* then moves with a bound it lies on."""
    if bounds is None:
        return np.full(n, -np.inf), np.full(n, np.inf)
    if isinstance(bounds, _so.Bounds):
        return flat_bound(bounds.lb, (n,)), flat_bound(bounds.ub, (n,))
    pairs = list(bounds)
    return _column([lo for lo, _ in pairs], -np.inf), _column([hi for _, hi in pairs], np.inf)


def bounded(lower, upper):
    """Whether bounds limit x anywhere: a bound that carries a derivative counts."""
    return any(_moving(side) or np.isfinite(side).any() for side in (lower, upper))


def constrained_minimize(objective: Callable, gradient: Callable, run_scipy: Callable,
                         x0: Any, args: tuple, shape: tuple, bounds: tuple,
                         constraints: Any, method: str, who: str = "minimize") -> tuple:
    """The solution x* (flat, differentiable in ``args``, the constraints' ``args`` and
    the values closed over), SciPy's result and the multipliers (of the constraints'
    rows, and of the bounds: flat, 0 where a bound is not active; differentiable too),
    for ``minimize`` with constraints or bounds (or ``least_squares`` with bounds).
    ``bounds`` is (lower, upper), flat (``bound_values``), each an ndarray or a value
    that carries a derivative. ``run_scipy(x_start, a, scipy_constraints, scipy_bounds)``
    runs SciPy's solver on plain numbers (``scipy_bounds``: a Bounds). The multipliers satisfy grad f = J^T lam + mu at x*, J the Jacobian of
    the constraints' functions (a dict's fun, a NonlinearConstraint's fun, a
    LinearConstraint's A x) and mu the bounds' (> 0 at a lower bound, < 0 at an upper
    one)."""
    cons, rows = _constraint_list(constraints)
    cargs = tuple(c[2] for c in cons)
    n = int(np.prod(shape)) if shape else 1
    lower, upper = bounds

    def values(x, cargs_now):
        """All constraints' values at flat x, one vector (m,)."""
        parts = [ops.reshape(fn(ops.reshape(x, shape), *ca), (-1,))
                 for (_, fn, _, _), ca in zip(cons, cargs_now)]
        return ops.concatenate(parts) if parts else None

    x_flat0 = _flat(x0)
    sizes = [int(np.prod(shape_of(ops.reshape(fn(ops.reshape(x_flat0, shape), *ca),
                                                 (-1,))))) for _, fn, ca, _ in cons]
    m = int(sum(sizes))
    equality = np.concatenate([np.full(s, c[0] == "eq") for s, c in zip(sizes, cons)]) \
        if cons else np.zeros(0, bool)

    def residual(y, x_start, a, cargs_now, edges, finite_edges):
        # (the masks are 0 or 1, so the rows are selected by arithmetic)
        lower_f, upper_f = finite_edges
        x = y[:n]
        sb = ops.round(y[n + m:2 * n + m])
        at_lower, at_upper = sb * (sb - 1.0) / 2.0, sb * (sb + 1.0) / 2.0
        fixed = at_lower + at_upper
        to_bound = at_lower * (x - lower_f) + at_upper * (x - upper_f)
        if m:
            lam = y[n:n + m]
            sc = ops.round(y[2 * n + m:])
            lagrangian = lambda x: objective(x, *a) - ops.sum(lam * values(x, cargs_now))  # noqa: E731
            rows_x = to_bound + (1.0 - fixed) * ops.reshape(grad(lagrangian)(x), (-1,))
            rows_lam = sc * values(x, cargs_now) + (1.0 - sc) * lam
            return ops.concatenate([rows_x, rows_lam, y[n + m:] - ops.round(y[n + m:])])
        rows_x = to_bound + (1.0 - fixed) * gradient(x, *a)
        return ops.concatenate([rows_x, y[n:] - ops.round(y[n:])])

    found: dict = {}

    def solve(tree):
        x_start, a, cargs_now, edges, finite_edges = tree
        lower, upper = (np.asarray(side, float) for side in edges)
        scipy_cons = [_scipy_constraint(kind, fn, jac, ca, shape, method)
                      for (kind, fn, _, jac), ca in zip(cons, cargs_now)]
        res = run_scipy(x_start, a, scipy_cons, _so.Bounds(lower, upper))
        found["result"] = res
        y, problem = _kkt_point(res, lambda x: plain(gradient(x, *a), who),
                                (lambda x: plain(values(x, cargs_now), who)) if m
                                else None,
                                (lambda x: plain(jacfwd(lambda u: values(u, cargs_now))(x),
                                                 who)) if m else None,
                                equality, lower, upper, n, len(cons))
        if problem is None:
            F = lambda y: np.ravel(plain(residual(y, x_start, a, cargs_now, edges, finite_edges), who))  # noqa: E731
            J = lambda y: plain(jacfwd(lambda u: residual(u, x_start, a, cargs_now, edges,
                                                        finite_edges))(y),  # noqa: E731
                                who)
            y, problem = _polish(y, F, J, res)
            # a coordinate at an active bound is the bound itself, not a rounding off it
            # (Newton's method stops once the rows are 0 to rounding)
            sb = y[n + m:2 * n + m]
            y[:n] = np.where(sb < 0, lower, np.where(sb > 0, upper, y[:n]))
        if problem is None:
            problem = _feasible(y, n, m, lower, upper,
                                (lambda x: plain(values(x, cargs_now), who)) if m
                                else None)
        if problem is not None and not res.success:
            # (SciPy may report a failure at the minimum, as SLSQP's line search that
            # cannot improve on it: then the KKT conditions hold there to rounding)
            problem = f"the solver did not converge ({res.message})"
        return y, problem

    at = ops.concatenate([x_flat0, np.zeros(n + 2 * m)]) if isinstance(x_flat0, Box) \
        else np.concatenate([x_flat0, np.zeros(n + 2 * m)])
    # The bounds ride in the arguments (they may carry a derivative, or differ from one
    # example of a vmap to the next): as given, for SciPy, and with 0 for an infinite
    # bound, for the residual's rows (0 * inf would make them NaN).
    finite = tuple(ops.where(isfinite(side), side, 0.0) for side in (lower, upper))
    y = implicit_solution(residual, solve, (x0, args, cargs, (lower, upper), finite), who,
                          at=at)
    x = y[:n]
    sb = ops.round(y[n + m:2 * n + m])
    if m:
        lam = y[n:n + m]
        lagrangian = lambda u: objective(u, *args) - ops.sum(lam * values(u, cargs))  # noqa: E731
        on_rows = ops.matmul(_to_rows(rows, sizes), lam)
    else:
        lagrangian, on_rows = (lambda u: objective(u, *args)), np.zeros(0)
    # sb * sb is 1 at a bound, 0 elsewhere: the bounds' multipliers are the Lagrangian's
    # gradient there
    on_bounds = sb * sb * ops.reshape(grad(lagrangian)(x), (-1,))
    return x, found["result"], on_rows, on_bounds


def _scipy_constraint(kind, fn, jac, ca, shape, method):
    """One constraint for SciPy, on plain numbers, with chainrule's exact Jacobian where
    none was given (and, for trust-constr, the exact Hessian of v . c)."""
    def one(x):
        return ops.reshape(fn(ops.reshape(x, shape), *ca), (-1,))

    def values(x):
        return np.ravel(plain(one(x), "minimize"))

    def jacobian(x):
        if callable(jac):
            return jac(x, *ca)
        return np.atleast_2d(plain(jacfwd(one)(x), "minimize"))

    if method != "trust-constr":
        return {"type": kind, "fun": values, "jac": jacobian}

    def hess(x, v):
        return plain(hessian(lambda u: ops.sum(v * one(u)))(x), "minimize")

    return _so.NonlinearConstraint(values, 0.0, 0.0 if kind == "eq" else np.inf,
                                   jac=jacobian, hess=hess)


def _flat(x0):
    return ops.reshape(x0, (-1,)) if isinstance(x0, Box) else np.ravel(np.asarray(x0, float))


def _reported(res, count, n, m):
    """The sizes of the multipliers trust-constr reports (its ``v``: one array per
    constraint, then the bounds'), as (constraints' (m,), bounds' (n,)), zeros where
    the solver reports none (SLSQP's answer is on its active constraints to rounding,
    and their values find them)."""
    v = res.get("v") if res.get("method") == "tr_interior_point" else None
    if not v or len(v) < count:
        return np.zeros(m), np.zeros(n)
    lam = np.abs(np.concatenate([np.ravel(u) for u in v[:count]])) if count else np.zeros(0)
    mu = np.abs(np.ravel(v[count])) if len(v) > count else np.zeros(n)
    return lam, mu


def _kkt_point(res, gradient, values, jacobian, equality, lower, upper, n, count):
    """y = [x, lam, s_bounds, s_constraints] at SciPy's answer, and the reason the KKT
    conditions do not give its derivative (or None). A constraint or bound is active
    where its value is 0 to 1e-6, or where the solver reports a multiplier larger than
    its value (trust-constr's interior point stops short of the boundary, with the
    product of the two about its barrier parameter)."""
    m = equality.size
    x = np.asarray(res.x, float)
    g = np.ravel(gradient(x))
    tol = 1e-6 * (1.0 + np.max(np.abs(g), initial=0.0))
    reported_lam, reported_mu = _reported(res, count, n, m)
    scale = 1e-6 * (1.0 + np.abs(x))
    near_lower = (x - lower <= scale) | ((reported_mu > x - lower) & (x - lower <= upper - x))
    near_upper = (upper - x <= scale) | ((reported_mu > upper - x) & (x - lower > upper - x))
    sb = np.zeros(n)
    sb[near_lower & np.isfinite(lower)] = -1.0
    sb[near_upper & np.isfinite(upper)] = 1.0
    free = sb == 0
    lam = np.zeros(m)
    sc = np.zeros(m)
    y = lambda: np.concatenate([x, lam, sb, sc])  # noqa: E731
    if m:
        c = np.ravel(values(x))
        jc = np.atleast_2d(jacobian(x)).reshape(m, n)
        size = 1e-6 * (1.0 + np.max(np.abs(jc), axis=1) * np.max(np.abs(x), initial=1.0))
        sc[equality | (np.abs(c) <= size) | (reported_lam > c)] = 1.0
    else:
        jc = np.zeros((0, n))
    active = np.flatnonzero(sc)
    block = jc[active][:, free]
    if active.size:
        singular = np.linalg.svd(block, compute_uv=False) if block.size else np.zeros(0)
        if active.size > int(free.sum()) or \
                singular.min(initial=np.inf) <= 1e-8 * max(1.0, singular.max(initial=0.0)):
            return y(), ("the active constraints' gradients are linearly dependent at the "
                         "solution (LICQ fails: the multipliers are not unique)")
        lam[active] = np.linalg.lstsq(block.T, g[free], rcond=None)[0]
    for i in active:
        if not equality[i] and lam[i] < -tol:
            return y(), (f"inequality constraint {i} has the multiplier {lam[i]:.3g} < 0 at "
                         f"the solution (the answer is not a KKT point: not a minimum)")
        if not equality[i] and lam[i] <= tol:
            return y(), (f"inequality constraint {i} is active at the solution with "
                         f"multiplier {lam[i] + 0.0:.3g} (strict complementarity fails: the "
                         f"solution is not differentiable there)")
    mu = g - jc.T @ lam  # the bounds' multipliers, on the coordinates at a bound
    for j in np.flatnonzero(~free):
        if sb[j] * mu[j] > tol:
            return y(), (f"the bound on x[{j}] is active at the solution with a multiplier "
                         f"of the wrong sign ({-sb[j] * mu[j]:.3g} < 0: the answer is not a "
                         f"KKT point, not a minimum)")
        if sb[j] * mu[j] >= -tol:
            return y(), (f"the bound on x[{j}] is active at the solution with multiplier "
                         f"{abs(mu[j]):.3g} (strict complementarity fails: the solution "
                         f"is not differentiable there)")
    return y(), None


def _feasible(y, n, m, lower, upper, values):
    """None if the polished answer keeps the inactive constraints and bounds satisfied;
    else the reason (the solver stopped too far from its active set to find it)."""
    x = y[:n]
    slack = 1e-9 * (1.0 + np.abs(x))
    outside = (x < lower - slack) | (x > upper + slack)
    c = np.ravel(values(x)) if m else np.zeros(0)
    inactive = (np.round(y[2 * n + m:]) == 0) & (c < -1e-9)
    if outside.any() or inactive.any():
        return ("the active set at the solver's answer is not clear (the solution of the "
                "KKT conditions with it is not feasible): tighten the solver's tolerances")
    # A bound or constraint taken as inactive on which the polished answer lies is
    # active with multiplier 0: the answer has no derivative there.
    free = np.round(y[n + m:2 * n + m]) == 0
    touching = np.flatnonzero(free & ((np.abs(x - lower) <= slack) |
                                      (np.abs(upper - x) <= slack)))
    grazing = np.flatnonzero((np.round(y[2 * n + m:]) == 0) & (np.abs(c) <= 1e-9))
    fails = "with multiplier 0 (strict complementarity fails: the solution is not " \
        "differentiable there)"
    if touching.size:
        return f"the bound on x[{touching[0]}] is active at the solution {fails}"
    if grazing.size:
        return f"inequality constraint {grazing[0]} is active at the solution {fails}"
    return None


def _polish(y, F, J, res):
    """Newton's method on the KKT conditions from SciPy's answer and the least-squares
    multipliers: the root to rounding (its steps keep the active set)."""
    r = F(y)
    if not res.success and np.max(np.abs(r), initial=0.0) > \
            np.sqrt(np.finfo(float).eps) * (1.0 + np.max(np.abs(y), initial=0.0)):
        return y, "not converged"
    jac = J(y)
    if not np.all(np.isfinite(jac)) or np.linalg.cond(jac) > 1e12:
        return y, ("the KKT matrix is singular at the solution (the second-order "
                   "condition fails on the active constraints)")
    for k in range(8):
        size = np.max(np.abs(r), initial=0.0)
        if size <= 1e-14 * (1.0 + np.max(np.abs(y), initial=0.0)):
            break
        jac = J(y) if k else jac
        step = np.linalg.solve(jac, -r)
        new = F(y + step)
        if np.max(np.abs(new), initial=0.0) >= size:
            break
        y, r = y + step, new
    if np.max(np.abs(r), initial=0.0) > 1e-6 * (1.0 + np.max(np.abs(y), initial=0.0)):
        return y, f"the solver's answer does not satisfy the KKT conditions ({res.message})"
    return y, None
