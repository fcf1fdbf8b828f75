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
comes out like any second derivative (J and dF/da move with a and with x*). The rules
take a batch of cotangents or tangents at once (jacrev's, jacfwd's rows), so J is formed
once for all of them. For a solution of one real number, J is dF/dx itself: one VJP of F
gives dF/dx and dF/da together, and the derivative is -dF/da / dF/dx.

What the solution depends on is its arguments (``args``: a pytree) and the values the
equation's function closes over that carry derivatives (an outer transform's tracer, a
Tensor that requires grad). Those are found as JAX's ``closure_convert`` finds them:
the residual runs once, at a point given by the solver (its starting point), at a
capture level (capture.py), which meets each closed-over value in turn; they become
operands of the solution's operation beside the arguments' leaves, and the rules run
the residual at a capture level again with them put back, so the derivative with
respect to them comes out like the derivative with respect to an argument. As in a
trace, the function must read the same closed-over values, in the same order, at every
x (a run at the solution that meets another number of them, or other shapes, raises).
How the solver computes on those values' plain numbers (a batch of cr.vmap, a value
traced by cr.jit) is ``solver_numbers.py``'s job.
"""

import contextlib
from typing import Any, Callable

import numpy as np

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, Primitive, raw, shape_of
from ..tensor import Tensor
from .capture import capture_run, constant, lifted
from .functional import vjp, jvp
from .jacobians import jacfwd
from .pytrees import tree_flatten, tree_unflatten
from .solver_numbers import (Closed, Example, closed_over, is_array, numbers_inside, reads,
                             registered)
from .tracer import Tracer
from .vmap_axes import vmap

__all__ = ["implicit_solution"]


def _innermost(value):
    """The dtype of the numbers inside all of value's boxes."""
    while isinstance(value, Box):
        value = value._contents()
    return np.result_type(value)


def _differentiable(leaf):
    if isinstance(leaf, Box):
        return not (isinstance(leaf, Tensor) and not leaf.requires_grad)
    return False


def implicit_solution(residual: Callable[..., Any], solve: Callable[[tuple], Any],
                      args: tuple, who: str, at: Any,
                      linear_solve: Callable | None = None,
                      transposed_solve: Callable | None = None) -> Any:
    """x* = ``solve(plain_args)`` (the solver, on plain numbers: an array, or a pair
    (array, problem) where ``problem`` is a sentence saying why the solution is not a
    root of ``residual`` to differentiate, or None), as a value differentiable in the
    leaves of ``args`` that carry derivatives and in the values ``residual`` closes
    over, to any order, given that ``residual(x, *args)`` (array-valued, x's size) is 0
    at the solution.

    Without such values the solver's answer is returned as it is; with them, one
    operation of them (packed into one vector z) returns it, with the rules above, so
    that vmap solves once per example and cr.jit solves at every call.

    ``at`` is an x (shaped as the residual takes it) where the residual may be run to
    find the values it closes over: the solver's starting point, or a bracket's end.

    ``linear_solve(matvec, rhs)`` and ``transposed_solve(matvec, rhs)``, if given, solve
    J v = rhs and J^T v = rhs on flat vectors, given v -> J v or v -> J^T v (the
    user's own solvers, as ``cr.custom_root``'s ``tangent_solve``); by default J is
    formed and solved with ``cr.linalg.solve``."""
    leaves, treedef = tree_flatten(args)
    arrays = [k for k, leaf in enumerate(leaves) if is_array(leaf)]

    def run_residual(x, array_leaves, closed=None):
        """residual(x, *args) with args' arrays set to array_leaves, at a capture
        level: its result, and the values it closed over (given: put in their place)."""
        def call(inputs):
            new = list(leaves)
            for k, value in zip(arrays, inputs[1:]):
                new[k] = value
            return residual(inputs[0], *tree_unflatten(treedef, new))
        outs, _, run = capture_run(call, who, [x] + list(array_leaves), closed=closed,
                                   arrays=closed_over())
        return outs[0], run

    # The values the residual closes over, in the order it meets them: those carrying
    # a derivative become operands; the others (a Tensor without grad) stay as they are.
    (_, first), read = reads(lambda: run_residual(lifted(at),
                                                   [lifted(leaves[k]) for k in arrays]))
    met = first.met
    # A closed-over value batched by vmap is an operand too (each example's solve then
    # gets its own numbers, see Example), whether it carries a derivative or not.
    batched = [k for k, value in enumerate(met) if isinstance(raw(value), Box)]
    # Values batched by more than one vmap: each example's solve reads them at its
    # numbers where the function meets them (Closed), as under cr.jit, and what the
    # function computes from them apart from x at its place in each level (Example).
    several = len({raw(met[k])._level for k in batched}) > 1 or \
        any(isinstance(raw(raw(met[k]).value), Box) for k in batched)
    # Under cr.jit, the traced numbers of a batch the residual computed apart from x
    # (cr.sin(a) of a batched a) go to the recorded call too: each call then has the
    # whole batch's numbers, where an example finds its place in that level (Example).
    read = read + [t for t in {id(t): t for t in (numbers_inside(met[k]) for k in batched)
                               if registered(t)}.values()
                   if all(t is not r for r in read)]
    # A closed-over value traced by cr.jit (or a box around one) is an operand too: the
    # recorded solve is handed each call's numbers of it (see Closed).
    traced = [k for k, value in enumerate(met) if registered(numbers_inside(value))]
    # (a batch of integers too, packed with the others as an argument in args= is: each
    # example's solve is handed its numbers, in their own dtype)
    closure_moving = [k for k, value in enumerate(met)
                      if k in batched or ((k in traced or not constant(value))
                                          and _innermost(value).kind in "fc")]
    moving = [k for k, leaf in enumerate(leaves) if _differentiable(leaf)]
    # The other arrays go to the solver as arguments of one call, which cr.jit records
    # (a traced array's numbers are known only at each run).
    held = [k for k, leaf in enumerate(leaves) if k not in moving and is_array(leaf)]
    shapes = [shape_of(leaves[k]) for k in moving]
    closure_shapes = [shape_of(met[k]) for k in closure_moving]
    closure_dtypes = [_innermost(met[k]) for k in closure_moving]
    bounds = np.cumsum([0] + [int(np.prod(s)) for s in shapes + closure_shapes]).tolist()
    closure_bounds = bounds[len(moving):]

    def args_at(z):
        """args with the moving leaves read from the packed vector z."""
        new = list(leaves)
        for k, shape, start, stop in zip(moving, shapes, bounds, bounds[1:]):
            new[k] = _piece(z, start, stop, shape)
        return tree_unflatten(treedef, new)

    def solved(z, *operands):
        held_values, read_values = operands[:len(held)], operands[len(held):]
        fixed = list(leaves)
        for k, value in zip(held, held_values):
            fixed[k] = value
        for k, shape, start, stop in zip(moving, shapes, bounds, bounds[1:]):
            fixed[k] = np.asarray(z[start:stop]).reshape(shape)
        # (copies: the function may write into what it closes over)
        met_numbers = None if not (traced or read or several) else {
            id(met[k]): _as_dtype(np.array(z[start:stop]).reshape(shape), dtype)
            for k, shape, dtype, start, stop in zip(closure_moving, closure_shapes,
                                                    closure_dtypes, closure_bounds,
                                                    closure_bounds[1:])}
        read_numbers = {id(t): np.array(v) for t, v in zip(read, read_values)}
        with example_of(z), Closed(met_numbers, read_numbers):
            x, problem = _answer(solve(tree_unflatten(treedef, fixed)))
        if problem is not None and (moving or closure_moving):
            raise ValueError(f"{who}: {problem}; the derivative of the solution by the "
                             f"implicit function theorem would be that of another problem")
        return np.asarray(x, dtype=np.result_type(x, float))

    def example_of(z):
        """The example of a vmapped solve whose operands are z (their numbers), for
        what the user's functions compute from the whole batches they close over."""
        return Example([met[k] for k in closure_moving if k in batched],
                        [np.asarray(z[start:stop]) for k, start, stop in
                         zip(closure_moving, closure_bounds, closure_bounds[1:])
                         if k in batched])

    def rules_example_of(z):
        """example_of(z) while a rule runs the user's linear solver: the rule may run
        after the vmap has ended (grad of a vmap walks back later), where the solver
        still closes over the whole batches. None where z's numbers are not at hand."""
        numbers = numbers_inside(z)
        if type(numbers) is not np.ndarray or not any(k in batched for k in closure_moving):
            return contextlib.nullcontext()
        return example_of(numbers)

    solved.__name__ = f"{who}'s solver"  # (what an error names)
    held_values = [_plain_leaf(leaves[k]) for k in held]
    if not moving and not closure_moving:
        return xp.call(lambda *values: solved(np.zeros(0), *values), *held_values, *read)

    def closed_at(z):
        """The closed-over values met, the moving ones read from z."""
        closed = list(met)
        for k, shape, start, stop in zip(closure_moving, closure_shapes, closure_bounds,
                                         closure_bounds[1:]):
            closed[k] = _piece(z, start, stop, shape)
        return closed

    def f(x, z):  # the residual, flat, of the flat solution and the packed operands
        if not met:
            return _shaped(residual(_shaped(x, out_shape[0]), *args_at(z)), (-1,))
        new = tree_flatten(args_at(z))[0]
        out, run = run_residual(_shaped(x, out_shape[0]), [new[k] for k in arrays],
                                closed_at(z))
        if len(run.met) != len(met):
            raise ValueError(f"{who}: the function closed over {len(run.met)} values at "
                             f"the solution and {len(met)} at the start; it must run the "
                             f"same operations at every point to be differentiated")
        return _shaped(out, (-1,))

    out_shape = [None]

    def forward(z):
        x = xp.call(solved, z, *held_values, *read)
        out_shape[0] = shape_of(x)
        return ops.reshape(x, (-1,)) if isinstance(x, Box) else xp.reshape(x, (-1,))

    def scalar_partials(ans, z):
        """dF/dx and dF/dz at (x*, z) for a real solution of one number, from one VJP:
        the implicit derivative is then -dF/dz / dF/dx, with no Jacobian to build and no
        matrix to factor; None where the general rule applies. (Not while cr.jit
        records: dF/dx = 0 must raise as the general rule's singular solve does, and
        its numbers are known only then.)"""
        if linear_solve is not None or transposed_solve is not None or \
                shape_of(ans) != (1,) or type(numbers_inside(ans)) is not np.ndarray or \
                numbers_inside(ans).dtype.kind != "f" or _innermost(z).kind != "f":
            return None
        _, pullback = vjp(f, ans, z)
        fx, fz = pullback(np.ones(1, dtype=_innermost(ans)))
        _refuse_zero(fx, who)
        return fx, fz

    def reverse(g, ans, z):
        partials = scalar_partials(ans, z)
        if partials is not None:  # g: lead + (1,), fz: (size of z,)
            return -(g / partials[0]) * partials[1]
        lead = shape_of(g)[:len(shape_of(g)) - 1]
        jx = jacfwd(lambda x: f(x, z))(ans)                       # J = dF/dx at x*
        rows = ops.reshape(g, (-1, shape_of(ans)[0]))
        if transposed_solve is None:
            u = ops.swapaxes(ops.solve(ops.swapaxes(jx, 0, 1),  # J^T u = g
                                       ops.swapaxes(rows, 0, 1)), 0, 1)
        else:
            jt = ops.swapaxes(jx, 0, 1)
            given = _levels(g, ans, z)
            one = (lambda r: _given_levels(transposed_solve(lambda v: ops.matmul(jt, v), r),
                                           given))
            with rules_example_of(z):
                u = _each_row(one, rows)
        _, pullback = vjp(lambda z: f(ans, z), z)
        back = (lambda w: -pullback(w)[0])
        grads = back(u[0]) if not lead else vmap(back)(u)
        return grads if not lead else ops.reshape(grads, lead + shape_of(z))

    def forward_mode(t, ans, z):
        partials = scalar_partials(ans, z)
        if partials is not None:  # t: lead + (size of z,)
            return -ops.matmul(t, ops.reshape(partials[1], (-1, 1))) / partials[0]
        lead = shape_of(t)[:len(shape_of(t)) - 1]
        jx = jacfwd(lambda x: f(x, z))(ans)
        push = (lambda s: jvp(lambda z: f(ans, z), (z,), (s,))[1])
        moved = push(t) if not lead else vmap(push)(ops.reshape(t, (-1,) + shape_of(z)))
        columns = ops.reshape(moved, (-1, shape_of(ans)[0]))
        if linear_solve is None:
            out = -ops.swapaxes(ops.solve(jx, ops.swapaxes(columns, 0, 1)), 0, 1)
        else:
            given = _levels(t, ans, z)
            one = (lambda c: -_given_levels(linear_solve(lambda v: ops.matmul(jx, v), c),
                                            given))
            with rules_example_of(z):
                out = _each_row(one, columns)
        return out[0] if not lead else ops.reshape(out, lead + shape_of(ans))

    op = Primitive(forward, who, batched=True)  # (the rules read lead axes: one J for all)
    op.defvjp(reverse)
    op.defjvp(forward_mode)
    pieces = [_shaped(leaves[k], (-1,)) for k in moving] + \
        [_shaped(met[k], (-1,)) for k in closure_moving]
    x = op(pieces[0] if len(pieces) == 1 else ops.concatenate(pieces))
    return _shaped(x, out_shape[0])


def _levels(*values):
    """The levels of the transforms whose tracers the values carry, at any depth."""
    found = set()
    for value in values:
        while isinstance(value, Box):
            if isinstance(value, Tracer):
                found.add(value._level)
            value = value._contents()
    return found


def _given_levels(answer, given):
    """A user's linear solver's answer without the transforms it was not given. The
    solver runs inside a derivative rule, and computes with whatever it closes over,
    which may be a value of the transform this rule works for or of one inside it (the
    user's ``k`` in ``lambda matvec, b: b / (k + 1)``); no derivative the rule makes
    depends on those, so their values are the answer: the derivative through what a
    solver closes over is not taken (JAX takes none: such a closure is a constant of its
    rules). A batch of cr.vmap stays one, its examples apart, unless it is of a vmap the
    rule was not given (one that has ended, around a solve it ran once per example):
    then it is read at the example being solved (``Example``)."""
    while isinstance(answer, Tracer) and answer._level not in given:
        if not answer._batched:
            answer = answer._contents()
            continue
        place, inside = Example.place(), answer.value
        if not place or answer._level not in place or \
                (isinstance(inside, Box) and inside._batched):
            raise TypeError(
                "a linear solver (custom_linear_solve's solve or transpose_solve, "
                "custom_root's tangent_solve) computes with a value batched by cr.vmap, "
                "and the derivative is taken outside that vmap where the example each "
                "solve belongs to cannot be told (under cr.jit, a value the function "
                "itself does not read, or a batch of two vmaps); take the derivative "
                "inside the vmap (cr.vmap(cr.grad(f))), or let the solver compute with "
                "the matvec it is handed")
        answer = inside[place[answer._level]]
    return answer


def _each_row(solve, rows):
    """A user's linear solver on each row of a batch in turn (J is formed once for all):
    it is handed one vector at a time, as it would be on its own, never a batch."""
    return ops.stack([ops.reshape(solve(rows[i]), (-1,)) for i in range(shape_of(rows)[0])])


def _shaped(x, shape):
    """x in ``shape`` (one -1 at most), reshaped only where it is not: each operation
    is a node that every transform over the solution records and walks back."""
    now = shape_of(x)
    if tuple(shape) == now or (tuple(shape) == (-1,) and len(now) == 1):
        return x
    return ops.reshape(x, shape)


def _piece(z, start, stop, shape):
    """z[start:stop] in ``shape``: z itself, one entry, or a slice, as few operations
    as that takes."""
    if shape == ():
        return z[start]
    return _shaped(z if (start, stop) == (0, shape_of(z)[0]) else z[start:stop], shape)


def _refuse_zero(fx, who):
    """Raise where dF/dx is 0 at a solution of one number (where its numbers are known:
    not while cr.jit records), as the general rule's solve with a singular J does."""
    numbers = numbers_inside(fx)
    if type(numbers) is np.ndarray and not np.all(numbers != 0):
        raise np.linalg.LinAlgError(f"{who}: the function's derivative in x is 0 at the "
                                    f"solution, so the solution has no derivative there")


def _plain_leaf(leaf):
    return np.asarray(raw(leaf)) if isinstance(leaf, Box) else leaf


def _as_dtype(numbers, dtype):
    """A piece of the packed operands (of their common dtype) in its value's own."""
    if numbers.dtype.kind == "c" and dtype.kind != "c":
        numbers = numbers.real
    return numbers.astype(dtype, copy=False)


def _answer(found):
    if isinstance(found, tuple):
        return found
    return found, None
