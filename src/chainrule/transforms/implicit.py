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

The solver itself computes on numbers: a closed-over value's own numbers are what its
derivative-carrying box holds. A value batched by ``cr.vmap`` holds a batch (of
integers too): it is an operand too, so vmap hands each example's solve its own
numbers, and what the solver's function computes from the batch is read at that
example's place (``_Example``): the index, at each vmap level, where the batched
closed-over values hold the example's numbers, so that a value batched by two nested
vmaps (``cr.sin(a) * c``, ``a`` from the outer and ``c`` from the inner) is read at
both. Values batched by two vmaps are also read at the example's numbers where the
function meets them at a capture level (``_Closed``). A batch whose place is not known
(the function did not meet it at the start) is refused with a one-line error that says
to pass it in ``args``.

Under cr.jit, a closed-over traced array (or a box around one) is an operand too, and
so is each traced array the residual's operations read (``_reads``): the program
records one call of the solver, replayed at each call with that call's numbers. The
solver's function still closes over the trace's values, which have no numbers of that
call; while the solve runs, the function meets the closed-over operands at a capture
level, which hands it their numbers, and an operation on a traced array read is
computed on its numbers by the recorder (``arrays.standing_in``), so that
what the function computes apart from x has this call's numbers too (``_Closed``).
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
from .tracer import Tracer
from .vmap_axes import vmap

__all__ = ["implicit_solution", "plain", "refuse_closures", "on_numbers", "reads_numbers",
           "supplied"]


def plain(value, who):
    """``value`` as plain numbers (what a solver computes with). A value that still
    carries a derivative was made from something the function closes over, which
    ``implicit_solution`` differentiates through its own run of the residual: here
    only its numbers count. A batch of ``cr.vmap`` (made from a batched value closed
    over) gives the example being solved (``_Example``); a closed-over value that is an
    operand of a solve under cr.jit gives that call's numbers (``_Closed``)."""
    found = _Closed.numbers(value)
    if found is not None:
        return found
    numbers = _Closed.stood(raw(value))
    if isinstance(numbers, Box):
        numbers = _Example.row(numbers)
        if numbers is None:
            raise TypeError(refuse_closures(who))
    if type(numbers) is not np.ndarray and type(numbers) in xp.ARRAYS:
        # (cr.jit's traced array that is not an operand of the solve: the function read
        # it at a point of the solve but not in its run at the start, where the values
        # it reads are found; the solve has no numbers of it for this call)
        raise TypeError(f"{who}: under cr.jit, the function reads a value traced by "
                        f"cr.jit that it did not read at the starting point (it must run "
                        f"the same operations at every x); pass that value in args=, and "
                        f"to the function as an argument")
    return np.asarray(numbers)


class _Closed:
    """While one solve runs whose function closes over values traced by cr.jit (or
    batched by two vmaps): this call's (this example's) numbers of them.

    A program of cr.jit replays the solve (one recorded call) with each call's operands;
    the solver's function still closes over the traced values of the trace, which have
    no numbers of that call and cannot compute once the trace has ended. Two tables
    stand in for them, by identity:

    * ``met``: each closed-over value the residual met (a traced array, or a box around
      one: an outer transform's), which is an operand of the solve, packed with the
      others (z), and so read at this example's numbers under cr.vmap (for values
      batched by two vmaps, looked up before _Example's search of the batches). The
      solver's function runs at a capture level (``reads_numbers``, ``on_numbers``)
      that meets each and computes with these numbers instead (``plain``);
    * ``traced``: each traced array of the program that the residual's operations read
      (``_reads``), handed to the recorded call as its arguments: while the solve runs,
      an operation on them computes on these numbers (the recorder's ``standing_in``),
      so a value the function computes from them apart from x (cr.sin(a)) has this
      call's numbers too."""

    active: list = []  # (met, traced) tables, or None

    def __init__(self, met, traced):
        self.entry = None if met is None else (met, traced)

    def __enter__(self):
        _Closed.active.append(self.entry)
        if self.entry is not None:
            self.hook = xp.standing_in(lambda t, table=self.entry[1]: table.get(id(t)))
            self.hook.__enter__()

    def __exit__(self, *exc):
        if self.entry is not None:
            self.hook.__exit__(*exc)
        _Closed.active.pop()

    @classmethod
    def on(cls):
        return bool(cls.active) and cls.active[-1] is not None

    @classmethod
    def numbers(cls, value):
        """The numbers of this call standing for ``value`` (a value met), or None."""
        if not cls.on():
            return None
        return cls.active[-1][0].get(id(value))

    @classmethod
    def stood(cls, value):
        """``value``, or this call's numbers where it is a traced array they stand for."""
        if not cls.on() or not _registered(value):
            return value
        found = cls.active[-1][1].get(id(value))
        return value if found is None else found


def _closed_over():
    """A test of whether a traced array of the program is one a function run from now on
    closes over: one made before now (or by another recording), not one it computes
    from its own values."""
    trace = xp.recorder()
    return (lambda traced: True) if trace is None else trace.made_so_far()


def _reads(run):
    """run() and the traced arrays of the program (cr.jit's, if it records) that its
    operations read and that it did not compute itself, in the order read."""
    if xp.recorder() is None:
        return run(), []
    older = _closed_over()
    read = {}

    def note(traced):
        if older(traced):
            read.setdefault(id(traced), traced)
        return None
    with xp.standing_in(note):
        out = run()
    return out, list(read.values())


class _Example:
    """While one example of a vmapped solve runs: where it sits in each batch.

    vmap runs the solution's operation once per example (it has no batching rule),
    handing it that example's operands, the batched closed-over values' numbers among
    them; but the solver's function still closes over the whole batches, so what it
    computes is a batch (of one vmap, or of several nested). The example's place is the
    index, at each vmap level, where every batched closed-over value holds the operands'
    numbers: if several places do, each gives the same answer (the function sees the
    same numbers). A batch the function computes is read there. Costly (each call
    computes the whole batch), and exact."""

    active: list = []  # [batched closed-over values, the example's numbers, its place]

    def __init__(self, values, numbers):
        self.entry = [values, numbers, None]

    def __enter__(self):
        _Example.active.append(self.entry)

    def __exit__(self, *exc):
        _Example.active.pop()

    @classmethod
    def place(cls):
        """{vmap level: index} of the example being solved, {} if none is known."""
        if not cls.active or not cls.active[-1][0]:
            return {}
        entry = cls.active[-1]
        if entry[2] is None:
            entry[2] = _place(entry[0], entry[1])
        return entry[2]

    @classmethod
    def row(cls, batch):
        """The example's numbers of ``batch`` (a batch of vmap, of one level or
        nested), or None if its place in some level's batch is not known."""
        place = cls.place()
        levels, numbers = _levels_and_numbers(batch)
        if numbers is None or not place or any(level not in place for level in levels):
            return None
        # (the innermost box's batch axis comes first in its numbers)
        return np.asarray(numbers)[tuple(place[level] for level in reversed(levels))]


def _levels_and_numbers(value):
    """The vmap levels batching ``value``, outermost first, and its numbers, whose
    leading axes are those levels' batch axes, innermost first (each box's batch axis
    is the first of the value it holds). Numbers None where cr.jit traced them and this
    call does not have them."""
    levels = []
    while isinstance(value, Box):
        if value._batched:
            levels.append(value._level)
            value = value.value
        else:
            value = value._contents()
    value = _Closed.stood(value)
    return levels, (None if _registered(value) else value)


def _place(values, numbers):
    """{vmap level: index} of the example whose batched closed-over ``values`` hold
    ``numbers`` (one array each), or {} if none does."""
    found, sizes = [], {}
    for value, own in zip(values, numbers):
        levels, every = _levels_and_numbers(value)
        if every is None:
            # (under cr.jit, a batch the residual computed from the values it closes
            # over, whose numbers this call does not have: the others tell)
            continue
        every, n = np.asarray(every), len(levels)
        match = np.all(every.reshape(every.shape[:n] + (-1,)) == own.reshape(1, -1),
                       axis=-1)
        order = list(reversed(levels))  # the axes of match
        sizes.update(zip(order, match.shape))
        found.append((order, match))
    if not found:
        return {}
    axes = sorted(sizes)
    grid = np.ones([sizes[level] for level in axes], dtype=bool)
    for order, match in found:
        # each match over its own levels, spread over all of them (1 where it has none)
        spread = np.transpose(match, [order.index(level) for level in axes
                                      if level in order])
        grid &= spread.reshape([sizes[level] if level in order else 1 for level in axes])
    if not grid.any():
        return {}
    return dict(zip(axes, (int(i) for i in np.argwhere(grid)[0])))


def on_numbers(fn, who):
    """fn(x) with the values it closes over replaced by their numbers: what a user's
    solver is handed, so that it computes (and differentiates fn itself, as a Newton
    step does) on plain numbers, not on the outer derivatives."""
    def numbers(x):
        outs, treedef, _ = capture_run(lambda inputs: fn(inputs[0]), who, [x],
                                       lift=lambda box: plain(box, who),
                                       arrays=_closed_over())
        return tree_unflatten(treedef, outs)
    return numbers


def reads_numbers(fn, who, always=False):
    """``fn`` as a solver calls it: while a solve whose function closes over values
    traced by cr.jit runs (``_Closed``), at a capture level, its array arguments as
    inputs, where each closed-over value reads that call's numbers; otherwise ``fn``
    itself. ``always``: at a capture level at every call, where each value it closes
    over that carries a derivative gives its numbers (``supplied``)."""
    if not callable(fn):
        return fn

    def numbers(*args, **kwargs):
        if not always and not _Closed.on():
            return fn(*args, **kwargs)
        leaves, treedef = tree_flatten((args, kwargs))
        places = [k for k, leaf in enumerate(leaves) if _is_array(leaf)]

        def call(inputs):
            new = list(leaves)
            for k, value in zip(places, inputs):
                new[k] = value
            a, kw = tree_unflatten(treedef, new)
            return fn(*a, **kw)
        outs, out_tree, _ = capture_run(call, who, [leaves[k] for k in places],
                                        lift=lambda box: plain(box, who),
                                        arrays=_closed_over())
        return tree_unflatten(out_tree, outs)
    return numbers


def supplied(fn, who):
    """A derivative the caller hands a solver (``jac``, ``hess``, ``hessp``,
    ``fprime``...), as the solver calls it: on numbers. The solver only reads its
    values (the solution's own derivative comes from the equation, by the implicit
    function theorem), so where it closes over a value being differentiated (the
    parameter an outer ``cr.grad`` moves, a value traced by cr.jit) it computes with
    that value's numbers, as the equation's function does in the solve."""
    return reads_numbers(fn, who, always=True)


def refuse_closures(who):
    return (f"{who}: the function computes on a value batched by cr.vmap that its run at "
            f"the starting point did not meet as a value it closes over (an operation's "
            f"keyword, or another operation at another x), so one example's solve has no "
            f"numbers of it; pass that value in args=, and to the function as an argument")


def _numbers(value):
    """The numbers inside all of value's boxes (a batch of vmap's: the whole batch)."""
    while isinstance(value, Box):
        value = value._contents()
    return value


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
    arrays = [k for k, leaf in enumerate(leaves) if _is_array(leaf)]

    def run_residual(x, array_leaves, closed=None):
        """residual(x, *args) with args' arrays set to array_leaves, at a capture
        level: its result, and the values it closed over (given: put in their place)."""
        def call(inputs):
            new = list(leaves)
            for k, value in zip(arrays, inputs[1:]):
                new[k] = value
            return residual(inputs[0], *tree_unflatten(treedef, new))
        outs, _, run = capture_run(call, who, [x] + list(array_leaves), closed=closed,
                                   arrays=_closed_over())
        return outs[0], run

    # The values the residual closes over, in the order it meets them: those carrying
    # a derivative become operands; the others (a Tensor without grad) stay as they are.
    (_, first), read = _reads(lambda: run_residual(lifted(at),
                                                   [lifted(leaves[k]) for k in arrays]))
    met = first.met
    # A closed-over value batched by vmap is an operand too (each example's solve then
    # gets its own numbers, see _Example), whether it carries a derivative or not.
    batched = [k for k, value in enumerate(met) if isinstance(raw(value), Box)]
    # Values batched by more than one vmap: each example's solve reads them at its
    # numbers where the function meets them (_Closed), as under cr.jit, and what the
    # function computes from them apart from x at its place in each level (_Example).
    several = len({raw(met[k])._level for k in batched}) > 1 or \
        any(isinstance(raw(raw(met[k]).value), Box) for k in batched)
    # Under cr.jit, the traced numbers of a batch the residual computed apart from x
    # (cr.sin(a) of a batched a) go to the recorded call too: each call then has the
    # whole batch's numbers, where an example finds its place in that level (_Example).
    read = read + [t for t in {id(t): t for t in (_numbers(met[k]) for k in batched)
                               if _registered(t)}.values()
                   if all(t is not r for r in read)]
    # A closed-over value traced by cr.jit (or a box around one) is an operand too: the
    # recorded solve is handed each call's numbers of it (see _Closed).
    traced = [k for k, value in enumerate(met) if _registered(_numbers(value))]
    # (a batch of integers too, packed with the others as an argument in args= is: each
    # example's solve is handed its numbers, in their own dtype)
    closure_moving = [k for k, value in enumerate(met)
                      if k in batched or ((k in traced or not constant(value))
                                          and _innermost(value).kind in "fc")]
    moving = [k for k, leaf in enumerate(leaves) if _differentiable(leaf)]
    # The other arrays go to the solver as arguments of one call, which cr.jit records
    # (a traced array's numbers are known only at each run).
    held = [k for k, leaf in enumerate(leaves) if k not in moving and _is_array(leaf)]
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
        with example_of(z), _Closed(met_numbers, read_numbers):
            x, problem = _answer(solve(tree_unflatten(treedef, fixed)))
        if problem is not None and (moving or closure_moving):
            raise ValueError(f"{who}: {problem}; the derivative of the solution by the "
                             f"implicit function theorem would be that of another problem")
        return np.asarray(x, dtype=np.result_type(x, float))

    def example_of(z):
        """The example of a vmapped solve whose operands are z (their numbers), for
        what the user's functions compute from the whole batches they close over."""
        return _Example([met[k] for k in closure_moving if k in batched],
                        [np.asarray(z[start:stop]) for k, start, stop in
                         zip(closure_moving, closure_bounds, closure_bounds[1:])
                         if k in batched])

    def rules_example_of(z):
        """example_of(z) while a rule runs the user's linear solver: the rule may run
        after the vmap has ended (grad of a vmap walks back later), where the solver
        still closes over the whole batches. None where z's numbers are not at hand."""
        numbers = _numbers(z)
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
                shape_of(ans) != (1,) or type(_numbers(ans)) is not np.ndarray or \
                _numbers(ans).dtype.kind != "f" or _innermost(z).kind != "f":
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
    then it is read at the example being solved (``_Example``)."""
    while isinstance(answer, Tracer) and answer._level not in given:
        if not answer._batched:
            answer = answer._contents()
            continue
        place, inside = _Example.place(), answer.value
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
    numbers = _numbers(fx)
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


def _registered(x):
    """Whether x is a value of a registered array type other than NumPy's (cr.jit's)."""
    return type(x) is not np.ndarray and type(x) in xp.ARRAYS


def _is_array(leaf):
    return isinstance(leaf, (np.ndarray, np.generic, Box)) or type(leaf) in xp.ARRAYS


def _answer(found):
    if isinstance(found, tuple):
        return found
    return found, None
