"""The program: a traced function's list of calls (``recording.Op``), run as Python.

``Program`` turns the list a trace recorded into Python source, one line per call (what
``print(program)`` shows, with shapes), so a replay costs what the same calls written
by hand cost. On the way it
* removes calls whose results nobody uses;
* computes temporaries into buffers kept from call to call (NumPy's ``out=``;
  temporaries whose lives do not overlap share one, and an elementwise call writes over
  an operand that dies there, as NumPy does inside an expression);
* computes the new value of a parameter into the parameter's own array;
* runs elementwise calls one after another on large arrays (an optimizer's update of a
  weight matrix) block of rows by block of rows, each block still in cache for the
  next call.

A replay runs the same NumPy calls, in the same order, on arrays of the same shapes and
dtypes, so its results are the traced run's to the last bit.
"""

import operator
import threading

import numpy as np

from .recording import Attribute, Method, Slot, UFUNC_OF

__all__ = ["Program"]


_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
          operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
          operator.lt: "<", operator.gt: ">", operator.le: "<=", operator.ge: ">=",
          operator.eq: "==", operator.ne: "!="}
_AUGMENTED = {operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=",
              operator.itruediv: "/=", operator.ipow: "**=", operator.imatmul: "@="}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


class Program:
    """A traced function as a list of NumPy calls: ``program(inputs) -> outputs``.

    ``inputs`` are the arrays and numbers of the program's argument slots, in order;
    ``outputs`` are the values of ``output_slots``. ``print(program)`` lists the calls,
    one a line, with the shape and dtype each made while tracing."""

    def __init__(self, trace, output_slots, names=None, replaces=None, destinations=None):
        self.inputs = list(trace.inputs)
        self.output_slots = list(output_slots)
        self.values = trace.values
        self.names = dict(names or {})  # slot -> a reader's name (x, layers.0.weight)
        self.destinations = dict(destinations or {})  # output slot -> where it goes
        self.ops = _live_ops(trace.ops, set(self.output_slots) | set(self.inputs))
        views = _views(self.ops, trace.values)
        # {output: input} where the output is the input's new value (a parameter after
        # its update): computed into the input's own array when nothing reads it later
        self.in_place = _in_place(self.ops, replaces or {}, self.output_slots,
                                  trace.values, views)
        # elementwise calls on large arrays, one after another: run block by block
        self.blocks = _row_blocks(self.ops, self.output_slots, self.inputs, trace.values,
                                  views, self.in_place)
        scratch = {n for run in self.blocks.values() for n in run.scratch}
        self.buffers = _kept_buffers(self.ops, self.output_slots, self.inputs,
                                     trace.values, views, skip=scratch)
        used = set(self.output_slots)
        for op in self.ops:
            used.update(op.slots_read())
            used.update(op.writes)
        # the arguments no call reads (a gradient the function sets to None, say)
        self.unused = [i for i, n in enumerate(self.inputs) if n not in used]
        self._constants = {}
        self._source = self._python()
        namespace = {"np": np, **self._constants}
        exec(compile(self._source, "<cr.jit program>", "exec"), namespace)
        self._run = namespace["program"]
        self._lock = threading.Lock()

    def __call__(self, inputs):
        with self._lock:  # the kept buffers are the program's own: one run at a time
            return self._run(*inputs)

    # --- Python source ---------------------------------------------------------------
    def _python(self):
        args = ", ".join(f"t{n}" for n in self.inputs)
        lines = [f"def program({args}):"]
        for n in sorted(set(self.in_place.values())):  # (a read-only array stays so)
            lines.append(f"    t{n} = t{n} if t{n}.flags.writeable else t{n}.copy()")
        i = 0
        while i < len(self.ops):
            run = self.blocks.get(i)
            if run is not None:
                lines.extend(self._blocked(run))
                i = run.stop
                continue
            lines.append("    " + self._line(self.ops[i], self._code_name, code=True))
            i += 1
        outs = ", ".join(f"t{n}" for n in self.output_slots)
        lines.append(f"    return ({outs}{',' if len(self.output_slots) == 1 else ''})")
        return "\n".join(lines) + "\n"

    def _code_name(self, n):
        return f"t{n}"

    def _constant(self, value):
        """The name of a constant in the program's namespace (small numbers inline)."""
        if value is None or value is Ellipsis or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float and np.isfinite(value):
            return repr(value)
        for name, known in self._constants.items():
            if known is value:
                return name
        name = f"c{len(self._constants)}"
        self._constants[name] = value
        return name

    def _expr(self, template, slot_name, code):
        kind = type(template)
        if kind is Slot:
            return slot_name(template.n)
        if kind is tuple:
            items = [self._expr(x, slot_name, code) for x in template]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if kind is list:
            return "[" + ", ".join(self._expr(x, slot_name, code) for x in template) + "]"
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {self._expr(v, slot_name, code)}"
                                   for k, v in template.items()) + "}"
        if kind is slice:
            parts = [self._expr(v, slot_name, code) for v in
                     (template.start, template.stop, template.step)]
            return f"slice({', '.join(parts)})"
        if code:
            return self._constant(template)
        return _show_constant(template)

    def _index(self, template, slot_name, code):
        """An index as Python writes it: x[1:, None] rather than x[(slice(1, None), None)]."""
        if code:
            return self._expr(template, slot_name, code)
        parts = template if type(template) is tuple else (template,)
        shown = []
        for part in parts:
            if type(part) is slice:
                ends = ["" if v is None else self._expr(v, slot_name, code)
                        for v in (part.start, part.stop, part.step)]
                shown.append(":".join(ends if ends[2] else ends[:2]))
            elif part is Ellipsis:
                shown.append("...")
            else:
                shown.append(self._expr(part, slot_name, code))
        return ", ".join(shown)

    def _line(self, op, slot_name, code):
        """The Python of one call: ``t3 = np.matmul(t1, t2)``."""
        fn, args, kwargs = op.fn, op.args, op.kwargs
        arg = [self._expr(a, slot_name, code) for a in args]
        keywords = [f"{k}={self._expr(v, slot_name, code)}" for k, v in kwargs.items()
                    if not (k == "out" and type(v) is tuple and len(v) == 1)]
        if type(kwargs.get("out")) is tuple and len(kwargs["out"]) == 1:  # out=(a,): a
            keywords.append(f"out={self._expr(kwargs['out'][0], slot_name, code)}")
        out = op.outs[0] if op.outs else None
        if code and out in self.buffers:
            fn = UFUNC_OF.get(fn, fn)
            keywords.append(f"out={self._constant(self.buffers[out])}")
        elif out in self.in_place:
            fn = UFUNC_OF.get(fn, fn)
            keywords.append(f"out={slot_name(self.in_place[out])}")
        if fn in _AUGMENTED:
            return f"{arg[0]} {_AUGMENTED[fn]} {arg[1]}"
        if fn is operator.setitem:
            return f"{arg[0]}[{self._index(args[1], slot_name, code)}] = {arg[2]}"
        if fn is operator.getitem:
            call = f"{arg[0]}[{self._index(args[1], slot_name, code)}]"
        elif fn in _INFIX:
            call = f"{arg[0]} {_INFIX[fn]} {arg[1]}"
        elif fn in _PREFIX:
            call = f"{_PREFIX[fn]}{arg[0]}"
        elif fn is operator.abs:
            call = f"abs({arg[0]})"
        elif type(fn) is Attribute:
            call = f"{arg[0]}.{fn.name}"
        elif type(fn) is Method:
            call = f"{arg[0]}.{fn.name}({', '.join(arg[1:] + keywords)})"
        else:
            call = f"{self._function(fn, code)}({', '.join(arg + keywords)})"
        outs = [o for o in op.outs]
        if not outs or all(o is None for o in outs):
            return call
        targets = ", ".join(slot_name(o) if o is not None else "_" for o in outs)
        if not op.unpack:
            return f"{targets} = {call}"
        return f"{targets}{',' if len(outs) == 1 else ''} = {call}"

    def _function(self, fn, code):
        name = getattr(fn, "__name__", None)
        if isinstance(fn, np.ufunc) or (name and getattr(np, name, None) is fn):
            return f"np.{name}"
        if name and getattr(np.linalg, name, None) is fn:
            return f"np.linalg.{name}"
        owner = getattr(fn, "__self__", None)  # a ufunc's method: np.add.reduce
        if isinstance(owner, np.ufunc):
            return f"np.{owner.__name__}.{name}"
        if not code:
            return name or repr(fn)
        return self._constant(fn)

    def _blocked(self, run):
        """The Python of a run of elementwise calls, block of rows by block of rows:
        ``for s, u1 in blocks: r2 = t2[s]; np.multiply(t0, t5[s], out=u1); ...``."""
        lines = ["    " + self._line(self.ops[k], self._code_name, code=True)
                 for k in run.hoisted]  # numbers the run reads, computed first
        made = {}  # slot -> the whole array its entries go into
        for k in run.ops:
            op = self.ops[k]
            out = op.outs[0] if op.outs else None
            if out is None or out in run.scratch:
                continue  # (an in-place call writes into a slot already named)
            if out in self.buffers:
                made[out] = self._constant(self.buffers[out])
            elif out in self.in_place:
                made[out] = f"t{self.in_place[out]}"
            else:  # returned: a new array, as the call would have made
                value = self.values[out]
                lines.append(f"    t{out} = np.empty({value.shape!r}, "
                             f"{self._constant(value.dtype)})")
                made[out] = f"t{out}"
        scratch = {n: f"u{i}" for i, n in enumerate(run.scratch, 1)}
        loop = ", ".join(["s"] + list(scratch.values()))
        table = [tuple([block] + [run.scratch[n][i] for n in run.scratch])
                 for i, block in enumerate(run.rows)]
        lines.append(f"    for {loop} in {self._constant(table)}:")
        rowed = {}  # the block of a whole array: "r" + its name, made once a block

        def block_of(array):
            if array not in rowed:
                rowed[array] = f"r{array}"
                lines.append(f"        r{array} = {array}[s]")
            return rowed[array]

        def operand(n):  # a slot's entries in this block
            if n in scratch:
                return scratch[n]
            name = made.get(n, f"t{n}")
            return block_of(name) if _by_rows(self.values[n], run.shape) else name

        for k in run.ops:
            op = self.ops[k]
            arguments = []
            for template in op.args:
                if type(template) is Slot:
                    arguments.append(operand(template.n))
                else:
                    name = self._constant(template)
                    arguments.append(block_of(name) if _by_rows(template, run.shape)
                                     else name)
            target = operand(_target(op))
            lines.append(f"        {self._function(_ufunc(op), True)}"
                         f"({', '.join(arguments)}, out={target})")
        for out, array in made.items():
            if array != f"t{out}":
                lines.append(f"    t{out} = {array}")
        return lines

    # --- for readers -----------------------------------------------------------------
    def source(self):
        """The Python function a replay runs."""
        return self._source

    def __str__(self):
        names = self.names

        def name(n):
            return names.get(n, f"t{n}")
        width = len(str(len(self.ops)))
        lines = ["inputs: " + ", ".join(f"{name(n)} {_describe(self.values[n])}"
                                        for n in self.inputs)]
        section = None
        runs = {run.ops[0]: run for run in self.blocks.values()}
        for i, op in enumerate(self.ops, 1):
            if op.section != section:
                section = op.section
                lines.append(f"# {section}")
            run = runs.get(i - 1)
            if run is not None:
                lines.append(f"# (lines {i}-{run.ops[-1] + 1} of shape {run.shape}: run "
                             f"by blocks of {run.rows[0].stop} rows)")
            text = self._line(op, name, code=False)
            shapes = [_describe(self.values[o]) for o in op.outs if o is not None]
            comment = f"  # {', '.join(shapes)}" if shapes else ""
            lines.append(f"{i:>{width}}  {text}{comment}")
        lines.append("outputs: " + ", ".join(
            name(n) + (f" -> {self.destinations[n]}" if n in self.destinations else "")
            for n in self.output_slots))
        return "\n".join(lines)

    __repr__ = __str__

    def __len__(self):
        return len(self.ops)


def _describe(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return f"{np.shape(value)} {np.result_type(value)}"
    return type(value).__name__


def _show_constant(value):
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            return np.array2string(value, separator=", ").replace("\n", "")
        return f"<constant {value.shape} {value.dtype}>"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return value.__name__
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return repr(value)


def _live_ops(ops, needed):
    """The calls that make what the program returns or writes: a call is kept if
    something kept reads what it makes, or if it writes in place or draws random
    numbers (kept, in order, as the traced run did)."""
    needed = set(needed)
    kept = []
    for op in reversed(ops):
        if (not op.pure or op.writes or any(o in needed for o in op.outs if o is not None)):
            kept.append(op)
            needed.update(op.slots_read())
            needed.update(op.writes)
    kept.reverse()
    return kept


def _views(ops, values):
    """{slot: the slots whose memory it may share}, for the results that are not new
    arrays (reshape, transpose, indexing with slices)."""
    views = {}
    for op in ops:
        if op.fresh:
            continue
        reads = op.slots_read()
        for out in op.outs:
            if out is not None and isinstance(values[out], np.ndarray):
                views[out] = [r for r in reads if isinstance(values.get(r), np.ndarray)
                              and np.may_share_memory(values[out], values[r])]
    return views


def _sharing(slots, views):
    """The slots that may share memory with any of ``slots`` (through views, either
    way), those included."""
    found = set(slots)
    changed = True
    while changed:
        changed = False
        for view, bases in views.items():
            linked = view in found or any(b in found for b in bases)
            if linked and not (view in found and found.issuperset(bases)):
                found.add(view)
                found.update(bases)
                changed = True
    return found


def _kept_buffers(ops, outputs, inputs, values, views, skip=()):
    """{slot: a buffer} for the temporaries a replay computes into buffers kept from run
    to run: arrays a call makes new (ufuncs, matmul) that share no memory with what the
    program returns or takes. Temporaries whose lives do not overlap share a buffer (of
    their shape and dtype), so a run touches little memory, as NumPy's allocator reuses
    what was just freed."""
    escaping = _sharing(set(outputs) | set(inputs), views)
    last_use = {}  # slot -> the last op that reads it, or a view of it
    for i, op in enumerate(ops):
        for n in op.slots_read() + list(op.writes):
            last_use[n] = i
    # A view keeps its bases alive; the latest views first, so views of views count
    for view in sorted(views, reverse=True):
        for base in views[view]:
            last_use[base] = max(last_use.get(base, -1), last_use.get(view, -1))
    free = {}     # (shape, dtype) -> [(free after op i, buffer)]
    buffers = {}
    for i, op in enumerate(ops):
        if not op.fresh or op.outs[0] in escaping or op.outs[0] in skip:
            continue
        out = op.outs[0]
        value = values[out]
        pool = free.setdefault((value.shape, value.dtype), [])
        reuse = None
        if _elementwise(op):
            # An operand that dies here, in a buffer of the result's shape: the result
            # goes into it, entry by entry, as NumPy itself does for the temporaries of
            # an expression (a + b * c), so a run touches as little memory as one
            dying = {id(buffers[n]) for n in op.slots_read()
                     if n in buffers and last_use.get(n) == i
                     and values[n].shape == value.shape and values[n].dtype == value.dtype}
            reuse = next((k for k, (_, b) in enumerate(pool) if id(b) in dying), None)
        if reuse is None:
            # the buffer freed last, as an allocator would: the likeliest still in cache
            ready = [k for k, (after, _) in enumerate(pool) if after < i]
            reuse = max(ready, key=lambda k: pool[k][0]) if ready else None
        buffer = pool.pop(reuse)[1] if reuse is not None else \
            np.empty(value.shape, value.dtype)
        buffers[out] = buffer
        pool.append((last_use.get(out, i), buffer))
    return buffers


def _elementwise(op):
    """Whether a call works entry by entry (a ufunc of one result, ``+=`` and the like
    included), so that it may write its result over an operand of the same shape, or
    run by blocks of rows."""
    fn = _ufunc(op)
    return isinstance(fn, np.ufunc) and fn.nout == 1 and fn is not np.matmul


def _in_place(ops, replaces, outputs, values, views):
    """{output: input} for each new value of an input (``replaces``) that a call can
    compute into the input's array: made by a ufunc or matmul of the same shape and
    dtype, after which nothing reads the input or a view of it, and no other result
    shares its memory."""
    chosen = {}
    for i, op in enumerate(ops):
        if not op.fresh or op.outs[0] not in replaces:
            continue
        out = op.outs[0]
        source = replaces[out]
        new, old = values[out], values[source]
        if (not isinstance(old, np.ndarray) or new.shape != old.shape
                or new.dtype != old.dtype or source in chosen.values()):
            continue
        shared = _sharing({source}, views)
        later = {n for later_op in ops[i + 1:]
                 for n in later_op.slots_read() + list(later_op.writes)}
        if shared & later or shared & (set(outputs) - {out}):
            continue
        chosen[out] = source
    return chosen


# ---------------------------------------------------------------------------------------
# Blocks of rows
# ---------------------------------------------------------------------------------------

# An optimizer's update of a weight matrix is a few elementwise calls in a row (lr * g,
# then p -= that; Adam's, a dozen). Each streams the whole array through memory, and a
# matrix of a megabyte or more has left the cache before the next call reads it. Run
# block of rows by block of rows, the calls find each block in cache, and a temporary
# that lives only inside the run needs a block's worth of memory, not a whole array's.
# An elementwise call reads each entry of its operands at its own place only, so
# the numbers are the same to the last bit.
_BLOCK_BYTES = 128 * 1024   # a block: a small part of a core's cache (1-2 MB of L2)
_BLOCKED_FROM = 512 * 1024  # smaller arrays stay in cache from one call to the next


class _Run:
    """Calls ``ops`` (op indices, in order) run block by block over ``rows`` (slices of
    axis 0 of ``shape``); ``hoisted``: calls on numbers inside the run, made before it;
    ``scratch``: {slot: one array per block} for the temporaries that live only in the
    run."""

    def __init__(self, ops, hoisted, shape, rows, scratch):
        self.ops, self.hoisted, self.shape, self.rows = ops, hoisted, shape, rows
        self.scratch = scratch
        self.stop = ops[-1] + 1  # (the hoisted calls sit between its first and last)


_AUGMENTED_UFUNC = {operator.iadd: np.add, operator.isub: np.subtract,
                    operator.imul: np.multiply, operator.itruediv: np.true_divide}


def _ufunc(op):
    return _AUGMENTED_UFUNC.get(op.fn) or UFUNC_OF.get(op.fn, op.fn)


def _by_rows(value, shape):
    """Whether an operand of an elementwise call with a result of ``shape`` varies along
    its first axis (its blocks are taken), rather than being broadcast along it."""
    return (isinstance(value, np.ndarray) and value.ndim == len(shape)
            and value.shape[0] == shape[0])


def _target(op):
    """The slot a call's result goes to: what it makes, or the array it writes into."""
    if op.outs and op.outs[0] is not None:
        return op.outs[0]
    return op.writes[0] if len(op.writes) == 1 else None


def _row_wise(op, values):
    """The shape of the call's result if it is elementwise with operands that are either
    of that shape or broadcast along its first axis; else None."""
    if not (_elementwise(op) and set(op.kwargs) <= {"out"} and op.pure):
        return None
    target = _target(op)
    if target is None or not isinstance(values[target], np.ndarray):
        return None
    shape = values[target].shape
    if len(shape) == 0 or shape[0] < 2:
        return None
    for template in op.args:
        value = values[template.n] if type(template) is Slot else template
        if isinstance(value, np.ndarray) and value.ndim:
            if not (value.ndim <= len(shape) and (
                    _by_rows(value, shape) or value.ndim < len(shape)
                    or value.shape[0] == 1)):
                return None
        elif not isinstance(value, (np.generic, np.ndarray, float, int, complex)):
            return None
    return shape


def _on_numbers(op, values):
    """A pure call that makes numbers (a bias correction, a step count)."""
    return op.pure and not op.writes and all(
        o is None or not isinstance(values[o], np.ndarray) or values[o].ndim == 0
        for o in op.outs)


def _row_blocks(ops, outputs, inputs, values, views, in_place):
    """{index of its first call: _Run} for each run of two or more elementwise calls on
    arrays of one shape, of at least _BLOCKED_FROM bytes, that can run by blocks
    (``in_place``: {output: the input whose array it is computed into})."""
    escaping = _sharing(set(outputs) | set(inputs), views)
    viewed = set(views) | {b for bases in views.values() for b in bases}
    last_use = {}
    for i, op in enumerate(ops):
        for n in op.slots_read() + list(op.writes):
            last_use[n] = i
    runs, i = {}, 0
    while i < len(ops):
        shape = _row_wise(ops[i], values)
        if shape is None:
            i += 1
            continue
        members, hoisted, made = [], [], set()
        j = i
        while j < len(ops):
            op = ops[j]
            if _row_wise(op, values) == shape:
                members.append(j)
                made.update(o for o in op.outs if o is not None)
                made.update(op.writes)
            elif _on_numbers(op, values) and not made & set(op.slots_read()):
                hoisted.append(j)
            else:
                break
            j += 1
        hoisted = [k for k in hoisted if k < members[-1]]
        run = _plan_run(ops, members, hoisted, shape, values, views, in_place, escaping,
                        viewed, last_use, outputs)
        if run is not None:
            runs[i] = run
        i = members[-1] + 1
    return runs


def _plan_run(ops, members, hoisted, shape, values, views, in_place, escaping, viewed,
              last_use, outputs):
    """The _Run of these calls, or None where blocks would not pay or not be safe."""
    targets = [_target(ops[k]) for k in members]
    itemsize = max(values[n].dtype.itemsize for n in targets)
    row_bytes = itemsize * int(np.prod(shape[1:], dtype=np.int64))
    if len(members) < 2 or row_bytes * shape[0] < _BLOCKED_FROM:
        return None
    # What the run writes may share memory with nothing else it reads: a transposed
    # view of a matrix it updates would be read at other places than written, and a
    # block would read entries an earlier block changed.
    written = {in_place.get(n, n) for n in targets}
    read = {n for k in members for n in ops[k].slots_read()}
    for w in written:
        linked = _sharing({w}, views)
        for n in read - {w}:
            if n in linked or (isinstance(values[n], np.ndarray) and
                               np.may_share_memory(values[n], values[w])):
                return None
    last = members[-1]
    rows = max(1, _BLOCK_BYTES // row_bytes)
    blocks = [slice(start, min(start + rows, shape[0])) for start in
              range(0, shape[0], rows)]
    scratch = {}
    for k in members:
        out = ops[k].outs[0] if ops[k].outs else None
        if (out is None or not ops[k].fresh or out in escaping or out in viewed
                or out in outputs or last_use.get(out, k) > last):
            continue
        value = values[out]
        whole = np.empty((rows,) + value.shape[1:], value.dtype)
        scratch[out] = [whole[:b.stop - b.start] for b in blocks]
    return _Run(members, hoisted, shape, blocks, scratch)
