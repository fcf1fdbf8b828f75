"""The fixed point of an iteration, differentiated by the implicit function theorem.

``fixed_point(f, a, x0, distance, tol)`` iterates ``x = f(a)(x)`` from ``x0`` until
``distance(x, previous) <= tol`` and returns the last x, x*. Its derivative in ``a`` does
not go back through the iterations (their number, their memory): at the fixed point
x* = f(a)(x*), so dx*/da = (I - df/dx)^-1 df/da, and a product with it is itself a
fixed point, of a linear iteration with f's own VJP (reverse) or JVP (forward) at x*.
That fixed point is solved by the same operation, so its derivative is one more fixed
point, and so on: no order of derivative differentiates a loop.

Each iteration is a ``while_loop`` (``control.py``), so the fixed point and its
derivatives of any order take cr.jit (one loop of the program, as many steps as each
call needs) and cr.vmap (one iteration for the batch, each example stopping at its own
step)."""

from typing import Any, Callable

import numpy as np

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Primitive, raw, shape_of
from .batching import BatchTracer
from .control import while_loop
from .functional import jvp, vjp

__all__ = ["fixed_point"]


def fixed_point(f: Callable[[Any], Callable[[Any], Any]], a: Any, x0: Any,
                distance: Callable[[Any, Any], Any], tol: float,
                max_iterations: int = 100_000) -> Any:
    """The fixed point x* = f(a)(x*), iterated from ``x0`` until ``distance(x, previous)``
    is at most ``tol``; differentiable in ``a`` (and to any order), as autograd's
    ``fixed_point``, under cr.jit and cr.vmap too. An iteration that has not converged
    after ``max_iterations`` steps (or whose distance is NaN) raises, naming the last
    distance.

    >>> newton_sqrt = lambda a: lambda x: 0.5 * (x + a / x)     # x* = sqrt(a)
    >>> distance = lambda x, y: abs(x - y)
    >>> round(float(cr.fixed_point(newton_sqrt, 2.0, 1.0, distance, 1e-12)), 12)
    1.414213562373
    >>> round(cr.grad(lambda a: cr.fixed_point(newton_sqrt, a, 1.0, distance, 1e-12))(2.0), 10)
    0.3535533906
    """
    return _solve(f, (a,), x0, (distance, tol, max_iterations))


def _solve(step_of, params, x0, how):
    """x* = step_of(*params)(x*), iterated from x0: an operation of the parameters, whose
    derivatives are fixed points of their own, solved by ``_solve`` again. So a
    derivative of any order differentiates no loop: each is one more fixed point, and
    under cr.jit each iteration is one loop of the program, whatever the order."""
    return _operation(step_of, len(params), how)(*params, raw(x0))


def _iterate(step, x, distance, tol, max_iterations):
    """``x = step(x)`` until ``distance(x, previous) <= tol`` (one step at least), as a
    ``while_loop``: one loop of the program under cr.jit, and under cr.vmap each example
    stops at its own step, as in JAX. Raises where it does not converge."""
    def going(carry):
        _, gap, count = carry
        return (gap > tol) & (count < max_iterations)  # (NaN > tol is False: it stops)

    def advance(carry):
        previous, _, count = carry
        new = step(previous)
        return new, raw(distance(new, previous)), count + 1

    x, gap, count = while_loop(going, advance, advance((x, None, 0)))
    xp.require(gap <= tol, _not_converged, count, gap, tol)
    return x


def _not_converged(count, gap, tol):
    try:
        said = (f"after {int(count)} steps the distance between the last two iterates is "
                f"{float(gap)!r}")
    except TypeError:  # (under cr.vmap: a batch, of which some examples did not converge)
        said = "for some examples the distance between the last two iterates stays"
    return ValueError(f"fixed_point: the iteration did not converge: {said}, above "
                      f"tol={tol!r}; check that f(a) is a contraction near the fixed point")


def _operation(step_of, n, how):
    """The primitive of ``n`` parameters and a start (last; its derivative is 0: the
    fixed point does not depend on where the iteration starts) for this iteration.

    At the fixed point x* = s(p)(x*), so dx* = (I - ds/dx)^-1 ds/dp dp:
    * reverse: w = g + w ds/dx, a fixed point in (g, p, x*); the gradient is w ds/dp;
    * forward: u = ds/dx u + ds/dp t, a fixed point in (ds/dp t, p, x*)."""
    def forward(*args):
        return _iterate(step_of(*args[:n]), args[n], *how)

    def along(params, argnum):
        """s(p)(x) as a function of parameter ``argnum`` alone."""
        return lambda p: step_of(*params[:argnum], p, *params[argnum + 1:])

    def reverse(g, ans, *args, argnum):
        if argnum == n:
            return 0.0 * g
        params = args[:n]
        w = _solve(_adjoint_step(step_of), (g, *params, ans), g, how)
        return vjp(lambda p: along(params, argnum)(p)(ans), params[argnum])[1](w)[0]

    def forward_mode(t, ans, *args, argnum):
        if argnum == n:
            return 0.0 * t
        params = args[:n]
        pushed = jvp(lambda p: along(params, argnum)(p)(ans), (params[argnum],), (t,))[1]
        return _solve(_tangent_step(step_of), (pushed, *params, ans), pushed, how)

    op = Primitive(forward, "fixed_point", variadic=True, batching=_on_the_batch)
    op.defvjp(reverse)
    op.defjvp(forward_mode)
    return op


def _adjoint_step(step_of):
    """w -> g + w ds/dx at x, for the parameters (g, *p, x)."""
    def step(g, *rest):
        g, x = _like(g, rest[-1]), rest[-1]
        pullback = vjp(step_of(*rest[:-1]), x)[1]
        return lambda w: g + pullback(w)[0]
    return step


def _tangent_step(step_of):
    """u -> c + ds/dx u at x, for the parameters (c, *p, x)."""
    def step(c, *rest):
        s, x = step_of(*rest[:-1]), rest[-1]
        c = _like(c, x)
        return lambda u: c + jvp(s, (x,), (u,))[1]
    return step


def _like(seed, x):
    """A seed (a cotangent, a tangent) made of NumPy's in the kind of array x is (torch's
    where x is torch's), so that the iteration adds arrays of one library."""
    return xp.owned_by(seed, x) if type(seed) is np.ndarray else seed


def _on_the_batch(call):
    """Under cr.vmap, one iteration for the whole batch (a while_loop, in which each
    example stops at its own step), not one per example."""
    args = [BatchTracer(v, call.level) if b else v
            for v, b in zip(call.values, call.batched)]
    out = call.prim.forward(*args)
    if isinstance(out, BatchTracer) and out._level == call.level:
        return out.value
    return ops.broadcast_to(out, (call.size,) + shape_of(out))  # (the same for all)
