"""The fixed point of an iteration, differentiated by the implicit function theorem.

``fixed_point(f, a, x0, distance, tol)`` iterates ``x = f(a)(x)`` from ``x0`` until
``distance(x, previous) <= tol`` and returns the last x, x*. Its derivative in ``a`` does
not go back through the iterations (their number, their memory): at the fixed point
x* = f(a)(x*), so dx*/da = (I - df/dx)^-1 df/da, and a product with it is itself a
fixed point, of a linear iteration with f's own VJP (reverse) or JVP (forward) at x*.

Each iteration is a ``while_loop`` (``control.py``), so the fixed point and its
derivatives take cr.jit (one loop of the program, as many steps as each call needs) and
cr.vmap (each example stops at its own step).
"""

from typing import Any, Callable

import numpy as np

from .. import arrays as xp
from ..primitive import Primitive, raw
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
    op = _operation(f, distance, tol, max_iterations)
    return op(a, raw(x0))


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


def _operation(f, distance, tol, max_iterations):
    """A primitive of ``a`` (and of x0, whose derivative is 0: the fixed point does not
    depend on where the iteration starts) for this f."""
    def forward(a, x0):
        return _iterate(f(a), x0, distance, tol, max_iterations)

    def reverse(g, ans, a, x0):
        # w = g + w df/dx, a fixed point of its own; then the gradient is w df/da
        _, pullback = vjp(lambda a, x: f(a)(x), a, ans)
        g = xp.owned_by(g, ans) if type(g) is np.ndarray else g  # (torch's where ans is)
        w = _iterate(lambda w: g + pullback(w)[1], g, distance, tol, max_iterations)
        return pullback(w)[0]

    def forward_mode(t, ans, a, x0):
        # u = df/dx u + df/da t, a fixed point of its own
        along_a = jvp(lambda a: f(a)(ans), (a,), (t,))[1]
        return _iterate(lambda u: along_a + jvp(f(a), (ans,), (u,))[1], along_a, distance,
                        tol, max_iterations)

    op = Primitive(forward, "fixed_point")
    op.defvjp(reverse, lambda g, ans, a, x0: 0.0 * g)
    op.defjvp(forward_mode, lambda t, ans, a, x0: 0.0 * t)
    return op
