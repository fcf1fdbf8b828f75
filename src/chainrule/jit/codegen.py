"""The code generator: the one place that turns a program's data into Python and runs it.

It writes two functions of one program, from the same lines:

* ``program_function``: ``program(t0, t1, ...) -> outputs``, the program alone;
* ``call_function``: what a call of a jitted function does when its last program fits,
  as one function: a check of each leaf of the signature and of the state (a type, a
  shape, a dtype, a mode), the program's inputs, the program's own lines, the writes of
  state, and the result; ``MISS`` where a check fails. A replay then costs little
  more than the calls themselves.

``listing`` writes the program for a reader (``print(program)``) from the same
rendering of each call, with names, shapes and constants shown.
"""

import operator

import numpy as np

from . import fused
from .blocks import by_rows, target
from .ops import Attribute, Effect, Method, Slot, UFUNC_OF
from .passes import ufunc_of, used_inputs
from .simplify import cheaper
from .state import TensorState, is_input
from ..tensor import Tensor
from ..tensor_data import foreign

__all__ = ["program_function", "loop_function", "call_function", "listing", "MISS"]

MISS = object()  # a call whose checks failed: the generic path decides

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
          operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
          operator.lt: "<", operator.gt: ">", operator.le: "<=", operator.ge: ">=",
          operator.eq: "==", operator.ne: "!="}
_AUGMENTED = {operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=",
              operator.itruediv: "/=", operator.ipow: "**=", operator.imatmul: "@="}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


# ---------------------------------------------------------------------------------------
# Source and its namespace
# ---------------------------------------------------------------------------------------

class Source:
    """Lines of Python being written, and the namespace their names refer to."""

    def __init__(self, **names):
        self.lines = []
        self.namespace = {"np": np, **names}
        self._named = {}  # id(value) -> its name (the namespace keeps the value alive)

    def constant(self, value):
        """The name of a value in the namespace (small numbers written inline)."""
        if value is None or value is Ellipsis or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float and np.isfinite(value):
            return repr(value)
        name = self._named.get(id(value))
        if name is None:
            name = self._named[id(value)] = f"c{len(self._named)}"
            self.namespace[name] = value
        return name

    def build(self, name, filename):
        """The function ``name`` the lines define, with its text as ``.source``."""
        text = "\n".join(self.lines) + "\n"
        exec(compile(text, filename, "exec"), self.namespace)
        function = self.namespace[name]
        function.source = text
        return function


class _Shown:
    """The ``constant`` of a listing: a value as a reader reads it."""

    @staticmethod
    def constant(value):
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


# ---------------------------------------------------------------------------------------
# One call as a line
# ---------------------------------------------------------------------------------------

class _Lines:
    """Renders a program's calls: as code (slots as ``t3``, constants named in a
    Source, results into kept buffers) or for a reader (the listing's names,
    constants shown, indices as Python writes them)."""

    def __init__(self, program, name_of, source, code):
        self.program, self.name_of, self.source, self.code = program, name_of, source, code

    def expr(self, template):
        kind = type(template)
        if kind is Slot:
            return self.name_of(template.n)
        if kind is tuple:
            items = [self.expr(x) for x in template]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if kind is list:
            return "[" + ", ".join(self.expr(x) for x in template) + "]"
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {self.expr(v)}"
                                   for k, v in template.items()) + "}"
        if kind is slice:
            parts = [self.expr(v) for v in (template.start, template.stop, template.step)]
            return f"slice({', '.join(parts)})"
        return self.source.constant(template)

    def index(self, template):
        """An index as Python writes it: x[1:, None] rather than x[(slice(1, None), None)]."""
        if self.code:
            return self.expr(template)
        shown = []
        for part in template if type(template) is tuple else (template,):
            if type(part) is slice:
                ends = ["" if v is None else self.expr(v)
                        for v in (part.start, part.stop, part.step)]
                shown.append(":".join(ends if ends[2] else ends[:2]))
            elif part is Ellipsis:
                shown.append("...")
            else:
                shown.append(self.expr(part))
        return ", ".join(shown)

    def function(self, fn):
        if type(fn) is Effect:
            fn = fn.fn
        name = getattr(fn, "__name__", None)
        # NumPy's own by their names; a ufunc of another library (scipy.special's) is
        # a constant of the program like any other function
        if name and getattr(np, name, None) is fn:
            return f"np.{name}"
        if name and getattr(np.linalg, name, None) is fn:
            return f"np.linalg.{name}"
        owner = getattr(fn, "__self__", None)  # a ufunc's method: np.add.reduce
        if isinstance(owner, np.ufunc) and getattr(np, owner.__name__, None) is owner:
            return f"np.{owner.__name__}.{name}"
        if not self.code:
            return name or repr(fn)
        return self.source.constant(fn)

    def fused_update(self, update):
        """``p -= s * g`` as one call of ``fused.update``: its compiled loop, or the
        two NumPy calls with the product in its kept buffer."""
        buffer = self.program.buffers.get(update.t)
        call = (f"fused_update({self.expr(Slot(update.p))}, "
                f"{self.expr(update.s)}, {self.expr(Slot(update.g))}, "
                f"{'None' if buffer is None else self.source.constant(buffer)}, "
                f"{update.sign})")
        return call if update.result is None else f"{self.name_of(update.result)} = {call}"

    def line(self, op):
        """The Python of one call: ``t3 = np.matmul(t1, t2)``."""
        if self.code:
            op = cheaper(op, self.program.values)
        fn, args, kwargs, program = op.fn, op.args, op.kwargs, self.program
        arg = [self.expr(a) for a in args]
        keywords = [f"{k}={self.expr(v)}" for k, v in kwargs.items()
                    if not (k == "out" and type(v) is tuple and len(v) == 1)]
        if type(kwargs.get("out")) is tuple and len(kwargs["out"]) == 1:  # out=(a,): a
            keywords.append(f"out={self.expr(kwargs['out'][0])}")
        out, into = op.outs, None
        if self.code and out in program.buffers and getattr(fn, "fills_new_array", False):
            # a broadcast copy: the kept buffer filled by assignment, NumPy's cheapest copy
            name, into = self.name_of(out), self.source.constant(program.buffers[out])
            return f"{name} = {into}; {name}[...] = {arg[0]}"
        if self.code and out in program.buffers:
            fn = UFUNC_OF.get(fn, fn)
            into = self.source.constant(program.buffers[out])
        elif out in program.in_place:
            fn = UFUNC_OF.get(fn, fn)
            into = self.name_of(program.in_place[out])
        if into is not None:
            # a ufunc takes its output after its inputs: parsing out= costs a third
            # of a small array's call (NumPy deprecates it for maximum and minimum,
            # whose third argument some took for a third operand)
            if self.code and isinstance(fn, np.ufunc) and len(args) == fn.nin \
                    and fn.nout == 1 and fn not in (np.maximum, np.minimum):
                arg.append(into)
            elif self.code and len(args) == 2 and getattr(fn, "__name__", None) == \
                    "reduce" and isinstance(getattr(fn, "__self__", None), np.ufunc):
                arg.extend(("None", into))  # reduce(array, axis, dtype, out)
            else:
                keywords.append(f"out={into}")
        if fn in _AUGMENTED:
            return f"{arg[0]} {_AUGMENTED[fn]} {arg[1]}"
        if fn is operator.setitem:
            return f"{arg[0]}[{self.index(args[1])}] = {arg[2]}"
        if fn is operator.getitem:
            call = f"{arg[0]}[{self.index(args[1])}]"
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
            call = f"{self.function(fn)}({', '.join(arg + keywords)})"
        if type(out) is not tuple:  # one result: t3 = ..., or none: the call alone
            return call if out is None else f"{self.name_of(out)} = {call}"
        if all(o is None for o in out):
            return call
        targets = ", ".join(self.name_of(o) if o is not None else "_" for o in out)
        return f"{targets}{',' if len(out) == 1 else ''} = {call}"


# ---------------------------------------------------------------------------------------
# The program's lines
# ---------------------------------------------------------------------------------------

def _slot_name(n):
    return f"t{n}"


def _body(program, source, indent):
    """The program's lines, inputs ``t<slot>`` bound before, outputs bound after."""
    lines = _Lines(program, _slot_name, source, code=True)
    body = [f"t{n} = t{n} if t{n}.flags.writeable else t{n}.copy()"
            for n in sorted(set(program.in_place.values()))]  # (a read-only one stays so)
    i = 0
    while i < len(program.ops):
        run = program.blocks.get(i)
        if run is not None:
            body.extend(_blocked(program, run, lines))
            i = run.stop
            continue
        update = program.fused.get(i)
        if update is not None:
            body.append(lines.fused_update(update))
            i += 2
            continue
        body.append(lines.line(program.ops[i]))
        i += 1
    if program.native is not None:
        body = _tiered(program, source, body)
    source.lines.extend(indent + line for line in body or ["pass"])


def _tiered(program, source, body):
    """The lines of a program with a compiled tier (``native.py``): its compiled
    function where it is ready and takes these arrays; otherwise the NumPy replay,
    counted, which hands the program to the compiler at its ``after``-th call."""
    tier = source.constant(program.native)
    inputs = ", ".join(f"t{n}" for n in used_inputs(program))
    outs = ", ".join(f"t{n}" for n in program.outputs) + ","
    return [f"_native = {tier}.run",
            f"_outs = None if _native is None else _native({inputs})",
            "if _outs is not None:",
            f"    {outs} = _outs",
            "else:",
            f"    {tier}.calls += 1",
            f"    if {tier}.calls == {tier}.after: {tier}.start()"] + \
        ["    " + line for line in body]


def _blocked(program, run, lines):
    """A run of elementwise calls, block of rows by block of rows:
    ``for s, u1 in blocks: r2 = t2[s]; np.multiply(t0, t5[s], out=u1); ...``."""
    ops, constant = program.ops, lines.source.constant
    out = [lines.line(ops[k]) for k in run.hoisted]  # numbers the run reads, made first
    made = {}  # slot -> the whole array its entries go into
    for k in run.ops:
        n = ops[k].outs
        if type(n) is not int or n in run.scratch:
            continue  # (an in-place call writes into a slot already named)
        if n in program.buffers:
            made[n] = constant(program.buffers[n])
        elif n in program.in_place:
            made[n] = f"t{program.in_place[n]}"
        else:  # returned: a new array, as the call would have made
            value = program.values[n]
            out.append(f"t{n} = np.empty({value.shape!r}, {constant(value.dtype)})")
            made[n] = f"t{n}"
    scratch = {n: f"u{i}" for i, n in enumerate(run.scratch, 1)}
    table = [tuple([block] + [run.scratch[n][i] for n in run.scratch])
             for i, block in enumerate(run.rows)]
    out.append(f"for {', '.join(['s'] + list(scratch.values()))} in {constant(table)}:")
    rowed = {}  # the block of a whole array: "r" + its name, made once a block

    def block_of(array):
        if array not in rowed:
            rowed[array] = f"r{array}"
            out.append(f"    r{array} = {array}[s]")
        return rowed[array]

    def operand(n):  # a slot's entries in this block
        if n in scratch:
            return scratch[n]
        name = made.get(n, f"t{n}")
        return block_of(name) if by_rows(program.values[n], run.shape) else name

    for k in run.ops:
        op = ops[k]
        arguments = []
        for template in op.args:
            if type(template) is Slot:
                arguments.append(operand(template.n))
            else:
                name = constant(template)
                arguments.append(block_of(name) if by_rows(template, run.shape) else name)
        out.append(f"    {lines.function(ufunc_of(op))}({', '.join(arguments)}, "
                   f"out={operand(target(op))})")
    out.extend(f"t{n} = {array}" for n, array in made.items() if array != f"t{n}")
    return out


def program_function(program):
    """``program(t0, t1, ...) -> (outputs,)``: the program's calls, one a line."""
    source = Source(fused_update=fused.update)
    source.lines.append(f"def program({', '.join(f't{n}' for n in program.inputs)}):")
    _body(program, source, "    ")
    outs = ", ".join(f"t{n}" for n in program.outputs)
    source.lines.append(f"    return ({outs}{',' if len(program.outputs) == 1 else ''})")
    return source.build("program", "<cr.jit program>")


def loop_function(loop):
    """``loop(*carry, *xs, *captured) -> (*carry, *ys)`` of a ``loops.Loop``: a Python
    ``for`` over the steps (``while`` the condition holds) that calls the body's
    function, each y written into its row of the stacked result."""
    source = Source(body=loop.body._run)
    names = [f"a{k}" for k in range(loop.carries + loop.xs + loop.cond_captured
                                     + loop.body_captured)]
    carry, xs = names[:loop.carries], names[loop.carries:loop.carries + loop.xs]
    body_reads = names[len(names) - loop.body_captured:]
    lines = source.lines
    lines.append(f"def loop({', '.join(names)}):")
    ys = [f"y{k}" for k in range(len(loop.ys))]
    for y, (shape, dtype) in zip(ys, loop.ys):
        lines.append(f"    {y} = np.empty({(loop.steps,) + shape!r}, "
                     f"{source.constant(dtype)})")
    step = [f"v{k}" for k in range(len(ys))]
    targets = ", ".join(carry + step) + ("," if len(carry + step) == 1 else "")
    if loop.cond is None:
        order = f"range({loop.steps - 1}, -1, -1)" if loop.reverse else \
            f"range({loop.steps})"
        lines.append(f"    for i in {order}:")
        reads = carry + [f"{x}[i]" for x in xs]
    else:
        source.namespace["cond"] = loop.cond._run
        cond_reads = names[loop.carries:loop.carries + loop.cond_captured]
        lines.append(f"    while cond({', '.join(carry + cond_reads)})[0]:")
        reads = list(carry)
    if targets:
        lines.append(f"        {targets} = body({', '.join(reads + body_reads)})")
    else:
        lines.append(f"        body({', '.join(reads + body_reads)})")
    lines.extend(f"        {y}[i] = {v}" for y, v in zip(ys, step))
    outs = carry + ys
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return source.build("loop", f"<cr.jit {loop.__name__}>")


# ---------------------------------------------------------------------------------------
# For readers
# ---------------------------------------------------------------------------------------

def _describe(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return f"{np.shape(value)} {np.result_type(value)}"
    if foreign(value):  # another library's array: which one
        return f"{value.shape} {value.dtype} {value._lib.name}"
    return type(value).__name__


def listing(program, indent=""):
    """The program numbered, a call a line, with the shape and dtype each made; a
    loop's body listed once, indented, under the loop's line."""
    names = program.names

    def name(n):
        return names.get(n, f"t{n}")
    lines = _Lines(program, name, _Shown, code=False)
    width = len(str(len(program.ops)))
    out = ["inputs: " + ", ".join(f"{name(n)} {_describe(program.values[n])}"
                                  for n in program.inputs)]
    runs = {run.ops[0]: run for run in program.blocks.values()}
    for i, op in enumerate(program.ops):
        if i in program.sections:
            out.append(f"# {program.sections[i]}")
        run = runs.get(i)
        if run is not None:
            out.append(f"# (lines {i + 1}-{run.ops[-1] + 1} of shape {run.shape}: run "
                       f"by blocks of {run.rows[0].stop} rows)")
        if i in program.fused:
            out.append(f"# (lines {i + 1}-{i + 2}: one pass over memory, fused.py)")
        shapes = [_describe(program.values[o]) for o in op.results()]
        comment = f"  # {', '.join(shapes)}" if shapes else ""
        out.append(f"{i + 1:>{width}}  {lines.line(op)}{comment}")
        fn = op.fn.fn if type(op.fn) is Effect else op.fn
        for title, part in getattr(fn, "parts", lambda: ())():
            out.append(f"{' ' * (width + 2)}# {title}:")
            out.append(listing(part, " " * (width + 4)))
    out.append("outputs: " + ", ".join(
        name(n) + (f" -> {program.destinations[n]}" if n in program.destinations else "")
        for n in program.outputs))
    return "\n".join(indent + line for line in "\n".join(out).split("\n"))


# ---------------------------------------------------------------------------------------
# A jitted function's call, with the program inside
# ---------------------------------------------------------------------------------------

def call_function(entry, key):
    """``call(args, kwargs)`` for a traced entry and its signature ``key``, or None
    where the signature has a form it does not cover (the generic path serves it)."""
    return _Call(entry, key).build()


class _Call:
    """Writes a call: one check per leaf of the signature and of the state, with no
    loop and no method call where a line will do; then the inputs, the program, the
    writes and the result."""

    def __init__(self, entry, key):
        self.entry, self.key = entry, key
        program = entry.program
        self.source = Source(MISS=MISS, ndarray=np.ndarray, generic=np.generic,
                             Tensor=Tensor, make=Tensor._make, asarray=np.asarray,
                             lock=program._lock, fused_update=fused.update)
        self.lines = self.source.lines
        self.leaves, self.tensors = [], []
        self.count = 0

    def name(self, value):
        return self.source.constant(value)

    def fresh(self, expr):
        self.count += 1
        var = f"v{self.count}"
        self.lines.append(f"    {var} = {expr}")
        return var

    def check(self, condition):
        self.lines.append(f"    if not ({condition}): return MISS")

    def array_check(self, var, shape, dtype):
        return (f"type({var}) is ndarray and {var}.shape == {shape!r} and "
                f"{var}.dtype == {self.name(dtype)}")

    def check_tensor(self, tensor, data, key):
        """The tensor's array and gradient have the traced shapes and dtypes (key:
        shape, dtype, requires_grad, and the gradient's (shape, dtype) or None)."""
        shape, dtype, requires_grad, grad = key
        self.check(f"{self.array_check(data, shape, dtype)} and "
                   f"{tensor}.requires_grad is {bool(requires_grad)}")
        if grad is None:
            self.check(f"{tensor}._grad is None")
        else:
            self.check(self.array_check(f"{tensor}._grad", grad[0], grad[1]))

    def visit(self, expr, part):
        """Check one part of the signature; False where its form is not covered."""
        if part in (float, int, complex):
            var = self.fresh(expr)
            self.check(f"type({var}) is {part.__name__}")
            self.leaves.append(var)
            return True
        kind = part[0]
        var = self.fresh(expr)
        if kind == "a":
            self.check(self.array_check(var, part[1], part[2]))
            self.leaves.append(var)
        elif kind == "s":
            self.check(f"isinstance({var}, generic) and {var}.dtype == {self.name(part[1])}")
            self.leaves.append(var)
        elif kind == "T":
            data = self.fresh(f"{var}._data if isinstance({var}, Tensor) else None")
            self.check_tensor(var, data, part[1:5])
            self.tensors.append((var, data))
        elif kind in (list, tuple):
            self.check(f"type({var}) is {kind.__name__} and len({var}) == {len(part[1])}")
            return all(self.visit(f"{var}[{i}]", item) for i, item in enumerate(part[1]))
        elif kind is dict:
            keys = [k for k, _ in part[1]]
            self.check(f"type({var}) is dict and list({var}) == {self.name(keys)}")
            return all(self.visit(f"{var}[{self.name(k)}]", item) for k, item in part[1])
        elif kind == "=":
            self.check(f"type({var}) is {self.name(part[1])} and {var} == "
                       f"{self.name(part[2])}")
        elif kind == "id":
            self.check(f"{var} is {self.name(part[1].obj)}")
        else:
            return False
        return True

    def read_object(self, state):
        """An object's answer (``_jit_state_``) checked against the traced one: its
        mode, its keys, each value's kind; its inputs, in order."""
        obj = self.name(state.obj)
        if not state.kinds:
            self.check(f"{obj}._jit_state_() == {self.name(({}, state.mode))}")
            return []
        self.count += 1
        arrays, mode = f"a{self.count}", f"m{self.count}"
        self.lines.append(f"    {arrays}, {mode} = {obj}._jit_state_()")
        self.check(f"{mode} == {self.name(state.mode)} and "
                   f"{arrays}.keys() == {self.name(frozenset(state.kinds))}")
        held = {}  # key -> the variable that holds its value
        for key, kind in state.kinds.items():
            value = f"{arrays}[{self.name(key)}]"
            if not is_input(kind):
                self.check(f"{value} is {self.name(kind.obj)}")
                continue
            held[key] = var = self.fresh(value)
            if type(kind) is tuple:
                self.check(self.array_check(var, kind[0], kind[1]))
            else:
                self.check(f"type({var}) is {self.name(kind)}")
        return [held[key] for key in state.inputs]

    def inputs(self):
        """The program's inputs in order: the signature's leaves, the tensor arguments,
        the state found while tracing; {id(state): the expression that holds it}."""
        entry = self.entry
        inputs, holder = list(self.leaves), {}
        for state, (var, data) in zip(entry.explicit, self.tensors):
            holder[id(state)] = var
            inputs.append(data)
            if state.grad_slot is not None:
                inputs.append(f"{var}._grad")
        for state in entry.found:
            if type(state) is not TensorState:
                holder[id(state)] = self.name(state.obj)
                inputs.extend(self.read_object(state))
                continue
            tensor = self.fresh(self.name(state.tensor))
            holder[id(state)] = tensor
            data = self.fresh(f"{tensor}._data")
            self.check_tensor(tensor, data, state.key)
            inputs.append(data)
            if state.grad_slot is not None:
                inputs.append(f"{tensor}._grad")
        return inputs, holder

    def build(self):
        entry, program = self.entry, self.entry.program
        positional, named, aliases = self.key
        if aliases is not None:
            return None  # one tensor in two places: the generic path serves it
        self.lines.append("def call(args, kwargs):")
        self.check(f"len(args) == {len(positional)} and "
                   f"sorted(kwargs) == {self.name([name for name, _ in named])}")
        parts = [(f"args[{i}]", part) for i, part in enumerate(positional)]
        parts += [(f"kwargs[{name!r}]", part) for name, part in named]
        if not all(self.visit(expr, part) for expr, part in parts):
            return None
        if len(self.tensors) != len(entry.explicit):
            return None
        if len(self.tensors) > 1:
            listed = ", ".join(var for var, _ in self.tensors)
            self.check(f"len({{id(t) for t in ({listed},)}}) == {len(self.tensors)}")
        if entry.guards is not None:  # the state is where the function found it
            self.check(f"{self.name(entry.guards)}(args, kwargs)")
        inputs, holder = self.inputs()
        unused = set(program.unused)
        for i, (slot, expr) in enumerate(zip(program.inputs, inputs)):
            if i not in unused:
                self.lines.append(f"    t{slot} = {expr}")
        for state in entry.released:
            self.lines.append(f"    {holder[id(state)]}._grad = None")
        self.lines.append("    with lock:  # (the kept buffers: one run at a time)")
        _body(program, self.source, "        ")
        self.writes(holder)
        self.lines.append(f"    return {self.result(entry.template)}")
        return self.source.build("call", "<cr.jit call>")

    def writes(self, holder):
        outputs = self.entry.program.outputs
        for state, writes in self.entry.writes_by_state:
            values = {}
            for what, where in writes:
                if type(where) is int:
                    values[what] = f"t{outputs[where]}"
                elif type(where[1]) is np.ndarray:  # a copy: the function made it anew
                    values[what] = f"{self.name(where[1])}.copy()"
                else:
                    values[what] = self.name(where[1])
            if type(state) is TensorState:
                for what, value in values.items():
                    attribute = "data" if what == "data" else "_grad"  # (data: a new version)
                    self.lines.append(f"    {holder[id(state)]}.{attribute} = {value}")
            else:
                listed = ", ".join(f"{self.name(k)}: {v}" for k, v in values.items())
                self.lines.append(f"    {holder[id(state)]}._jit_load_({{{listed}}})")

    def result(self, template):
        tag, body = template[0], template[1]
        outputs = self.entry.program.outputs
        if tag == "out":
            return f"t{outputs[body]}"
        if tag == "tensor":
            return f"make(asarray(t{outputs[body]}))"
        if tag == "const":
            return self.name(body)
        if tag is dict:
            return "{" + ", ".join(f"{self.name(k)}: {self.result(v)}"
                                   for k, v in body.items()) + "}"
        if tag == "node":  # a pytree node (a named tuple: slogdet, eigh): rebuilt
            rebuild, children = body
            return f"{self.name(rebuild)}([{', '.join(map(self.result, children))}])"
        items = [self.result(item) for item in body]
        if tag is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if tag is list:
            return "[" + ", ".join(items) + "]"
        return f"{self.name(tag)}([{', '.join(items)}])"
