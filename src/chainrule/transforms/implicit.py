"""The solution of an equation, differentiated by the implicit function theorem.

A solver (SciPy's ``minimize``, ``root``, ``brentq``...) finds x* with F(x*, a) = 0 on
plain numbers, by iterations nothing should differentiate. Around the solution,
F(x*(a), a) = 0 for every a, so

    dx*/da = -J^-1 dF/da,     J = dF/dx at (x*, a),

and a product with it costs one linear solve with J: reverse mode solves J^T u = g and
pulls u back through F's dependence on a (one VJP); forward mode pushes the tangent
through F's dependence on a (one JVP) and solves with J. The rules are written with
chainrule's own operations at the solution the node returned, so an outer transform
differentiates them too: the Hessian of an outer objective through an inner solution
comes out like any second derivative (J and dF/da move with a and with x*).

What the solve depends on is its arguments (``args``: a pytree). A value the equation's
function closes over that carries a derivative cannot be seen from here (JAX finds
those by tracing the function into a program: ``closure_convert``); such a function is
refused with a one-line error that says to pass the value in ``args``, never
differentiated as if it were a constant.
"""

from typing import Any, Callable

import numpy as np

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, Primitive, raw, shape_of
from ..tensor import Tensor
from .functional import jacfwd, vjp, jvp
from .pytrees import tree_flatten, tree_unflatten
from .vmap_axes import vmap

__all__ = ["implicit_solution", "plain", "refuse_closures"]


def plain(value, who):
    """``value`` as plain numbers (a solver's inputs). A value that still carries a
    derivative was made from something the function closes over: refused, because the
    solution's derivative with respect to it would be lost."""
    if isinstance(value, Box) and not (isinstance(value, Tensor) and not value.requires_grad):
        raise TypeError(refuse_closures(who))
    return np.asarray(raw(value))


def refuse_closures(who):
    return (f"{who}: the function's result depends on a value being differentiated that "
            f"is not among its arguments (a variable it closes over?); pass that value in "
            f"args=, and to the function as an argument, so that the solution is "
            f"differentiated with respect to it")


def _differentiable(leaf):
    if isinstance(leaf, Box):
        return not (isinstance(leaf, Tensor) and not leaf.requires_grad)
    return False


def implicit_solution(residual: Callable[..., Any], solve: Callable[[tuple], Any],
                      args: tuple, who: str) -> Any:
    """x* = ``solve(plain_args)`` (the solver, on plain numbers: an array, or a pair
    (array, problem) where ``problem`` is a sentence saying why the solution is not a
    root of ``residual`` to differentiate, or None), as a value differentiable in the
    leaves of ``args`` that carry derivatives, to any order, given that
    ``residual(x, *args)`` (array-valued, x's size) is 0 at the solution.

    Without such leaves the solver's answer is returned as it is; with them, one
    operation of those leaves (packed into one vector) returns it, with the rules above,
    so that vmap solves once per example and cr.jit solves at every call."""
    leaves, treedef = tree_flatten(args)
    moving = [k for k, leaf in enumerate(leaves) if _differentiable(leaf)]
    # The other arrays go to the solver as arguments of one call, which cr.jit records
    # (a traced array's numbers are known only at each run).
    held = [k for k, leaf in enumerate(leaves) if k not in moving and _is_array(leaf)]
    shapes = [shape_of(leaves[k]) for k in moving]
    bounds = np.cumsum([0] + [int(np.prod(s)) for s in shapes]).tolist()

    def args_at(z):
        """args with the moving leaves read from the packed vector z."""
        new = list(leaves)
        for k, shape, start, stop in zip(moving, shapes, bounds, bounds[1:]):
            new[k] = ops.reshape(z[start:stop], shape)
        return tree_unflatten(treedef, new)

    def solved(z, *held_values):
        fixed = list(leaves)
        for k, value in zip(held, held_values):
            fixed[k] = value
        for k, shape, start, stop in zip(moving, shapes, bounds, bounds[1:]):
            fixed[k] = np.asarray(z[start:stop]).reshape(shape)
        x, problem = _answer(solve(tree_unflatten(treedef, fixed)))
        if problem is not None and moving:
            raise ValueError(f"{who}: {problem}; the derivative of the solution by the "
                             f"implicit function theorem would be that of another problem")
        return np.asarray(x, dtype=np.result_type(x, float))

    held_values = [_plain_leaf(leaves[k]) for k in held]
    if not moving:
        return xp.call(lambda *values: solved(np.zeros(0), *values), *held_values)

    def f(x, z):  # the residual, flat, of the flat solution and the packed arguments
        return ops.reshape(residual(ops.reshape(x, out_shape[0]), *args_at(z)), (-1,))

    out_shape = [None]

    def forward(z):
        x = xp.call(solved, z, *held_values)
        out_shape[0] = shape_of(x)
        return ops.reshape(x, (-1,)) if isinstance(x, Box) else xp.reshape(x, (-1,))

    def reverse(g, ans, z):
        lead = shape_of(g)[:len(shape_of(g)) - 1]
        jx = jacfwd(lambda x: f(x, z))(ans)                       # J = dF/dx at x*
        rows = ops.reshape(g, (-1, shape_of(ans)[0]))
        u = ops.swapaxes(ops.solve(ops.swapaxes(jx, 0, 1),  # J^T u = g
                                          ops.swapaxes(rows, 0, 1)), 0, 1)
        _, pullback = vjp(lambda z: f(ans, z), z)
        back = (lambda w: -pullback(w)[0])
        grads = back(u[0]) if not lead else vmap(back)(u)
        return grads if not lead else ops.reshape(grads, lead + shape_of(z))

    def forward_mode(t, ans, z):
        lead = shape_of(t)[:len(shape_of(t)) - 1]
        jx = jacfwd(lambda x: f(x, z))(ans)
        push = (lambda s: jvp(lambda z: f(ans, z), (z,), (s,))[1])
        moved = push(t) if not lead else vmap(push)(ops.reshape(t, (-1,) + shape_of(z)))
        columns = ops.reshape(moved, (-1, shape_of(ans)[0]))
        out = -ops.swapaxes(ops.solve(jx, ops.swapaxes(columns, 0, 1)), 0, 1)
        return out[0] if not lead else ops.reshape(out, lead + shape_of(ans))

    op = Primitive(forward, who)
    op.defvjp(reverse)
    op.defjvp(forward_mode)
    z = ops.concatenate([ops.reshape(leaves[k], (-1,)) for k in moving])
    x = op(z)
    return ops.reshape(x, out_shape[0])


def _plain_leaf(leaf):
    return np.asarray(raw(leaf)) if isinstance(leaf, Box) else leaf


def _is_array(leaf):
    return isinstance(leaf, (np.ndarray, np.generic, Box)) or type(leaf) in xp.ARRAYS


def _answer(found):
    if isinstance(found, tuple):
        return found
    return found, None
