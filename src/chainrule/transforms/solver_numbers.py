"""What a solver computes with: plain numbers, where its function closes over values
that carry derivatives, are batched by cr.vmap or traced by cr.jit.

The solver computes on numbers: a closed-over value's own numbers are what its
derivative-carrying box holds (``plain``), and a function handed to a solver runs at a
capture level that gives it those numbers (``on_numbers``, ``reads_numbers``,
``supplied``). A value batched by ``cr.vmap`` holds a batch (of integers too): it is an
operand of the solution's operation too, so vmap hands each example's solve its own
numbers, and what the solver's function computes from the batch is read at that
example's place (``Example``): the index, at each vmap level, where the batched
closed-over values hold the example's numbers, so that a value batched by two nested
vmaps (``cr.sin(a) * c``, ``a`` from the outer and ``c`` from the inner) is read at
both. Values batched by two vmaps are also read at the example's numbers where the
function meets them at a capture level (``Closed``). A batch whose place is not known
(the function did not meet it at the start) is refused with a one-line error that says
to pass it in ``args``.

Under cr.jit, a closed-over traced array (or a box around one) is an operand too, and
so is each traced array the residual's operations read (``reads``): the program
records one call of the solver, replayed at each call with that call's numbers. The
solver's function still closes over the trace's values, which have no numbers of that
call; while the solve runs, the function meets the closed-over operands at a capture
level, which hands it their numbers, and an operation on a traced array read is
computed on its numbers by the recorder (``arrays.standing_in``), so that
what the function computes apart from x has this call's numbers too (``Closed``).
"""

import numpy as np

from .. import arrays as xp
from ..primitive import Box, raw
from .capture import capture_run
from .pytrees import tree_flatten, tree_unflatten

__all__ = ["plain", "on_numbers", "reads_numbers", "supplied", "refuse_closures",
           "Closed", "Example", "closed_over", "reads", "registered", "is_array",
           "numbers_inside"]


def plain(value, who):
    """``value`` as plain numbers (what a solver computes with). A value that still
    carries a derivative was made from something the function closes over, which
    ``implicit_solution`` differentiates through its own run of the residual: here
    only its numbers count. A batch of ``cr.vmap`` (made from a batched value closed
    over) gives the example being solved (``Example``); a closed-over value that is an
    operand of a solve under cr.jit gives that call's numbers (``Closed``)."""
    found = Closed.numbers(value)
    if found is not None:
        return found
    numbers = Closed.stood(raw(value))
    if isinstance(numbers, Box):
        numbers = Example.row(numbers)
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


class Closed:
    """While one solve runs whose function closes over values traced by cr.jit (or
    batched by two vmaps): this call's (this example's) numbers of them.

    A program of cr.jit replays the solve (one recorded call) with each call's operands;
    the solver's function still closes over the traced values of the trace, which have
    no numbers of that call and cannot compute once the trace has ended. Two tables
    stand in for them, by identity:

    * ``met``: each closed-over value the residual met (a traced array, or a box around
      one: an outer transform's), which is an operand of the solve, packed with the
      others (z), and so read at this example's numbers under cr.vmap (for values
      batched by two vmaps, looked up before Example's search of the batches). The
      solver's function runs at a capture level (``reads_numbers``, ``on_numbers``)
      that meets each and computes with these numbers instead (``plain``);
    * ``traced``: each traced array of the program that the residual's operations read
      (``reads``), handed to the recorded call as its arguments: while the solve runs,
      an operation on them computes on these numbers (the recorder's ``standing_in``),
      so a value the function computes from them apart from x (cr.sin(a)) has this
      call's numbers too."""

    active: list = []  # (met, traced) tables, or None

    def __init__(self, met, traced):
        self.entry = None if met is None else (met, traced)

    def __enter__(self):
        Closed.active.append(self.entry)
        if self.entry is not None:
            self.hook = xp.standing_in(lambda t, table=self.entry[1]: table.get(id(t)))
            self.hook.__enter__()

    def __exit__(self, *exc):
        if self.entry is not None:
            self.hook.__exit__(*exc)
        Closed.active.pop()

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
        if not cls.on() or not registered(value):
            return value
        found = cls.active[-1][1].get(id(value))
        return value if found is None else found


def closed_over():
    """A test of whether a traced array of the program is one a function run from now on
    closes over: one made before now (or by another recording), not one it computes
    from its own values."""
    trace = xp.recorder()
    return (lambda traced: True) if trace is None else trace.made_so_far()


def reads(run):
    """run() and the traced arrays of the program (cr.jit's, if it records) that its
    operations read and that it did not compute itself, in the order read."""
    if xp.recorder() is None:
        return run(), []
    older = closed_over()
    read = {}

    def note(traced):
        if older(traced):
            read.setdefault(id(traced), traced)
        return None
    with xp.standing_in(note):
        out = run()
    return out, list(read.values())


class Example:
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
        Example.active.append(self.entry)

    def __exit__(self, *exc):
        Example.active.pop()

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
    value = Closed.stood(value)
    return levels, (None if registered(value) else value)


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
                                       arrays=closed_over())
        return tree_unflatten(treedef, outs)
    return numbers


def reads_numbers(fn, who, always=False):
    """``fn`` as a solver calls it: while a solve whose function closes over values
    traced by cr.jit runs (``Closed``), at a capture level, its array arguments as
    inputs, where each closed-over value reads that call's numbers; otherwise ``fn``
    itself. ``always``: at a capture level at every call, where each value it closes
    over that carries a derivative gives its numbers (``supplied``)."""
    if not callable(fn):
        return fn

    def numbers(*args, **kwargs):
        if not always and not Closed.on():
            return fn(*args, **kwargs)
        leaves, treedef = tree_flatten((args, kwargs))
        places = [k for k, leaf in enumerate(leaves) if is_array(leaf)]

        def call(inputs):
            new = list(leaves)
            for k, value in zip(places, inputs):
                new[k] = value
            a, kw = tree_unflatten(treedef, new)
            return fn(*a, **kw)
        outs, out_tree, _ = capture_run(call, who, [leaves[k] for k in places],
                                        lift=lambda box: plain(box, who),
                                        arrays=closed_over())
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


def numbers_inside(value):
    """The numbers inside all of value's boxes (a batch of vmap's: the whole batch)."""
    while isinstance(value, Box):
        value = value._contents()
    return value


def registered(x):
    """Whether x is a value of a registered array type other than NumPy's (cr.jit's)."""
    return type(x) is not np.ndarray and type(x) in xp.ARRAYS


def is_array(leaf):
    return isinstance(leaf, (np.ndarray, np.generic, Box)) or type(leaf) in xp.ARRAYS
