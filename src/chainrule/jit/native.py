"""cr.jit's compiled tier: a hot program run as one machine-code function (Numba).

A replay of a small program is a few dozen NumPy calls, and on arrays of ten numbers
each call costs a third of a microsecond of NumPy's own dispatch, whatever it computes:
the gradient of a ten-operation function takes ~10 us where the arithmetic takes well
under one. Compiled, the same calls cost a few nanoseconds each. Compiling costs a
second or two, so it is done only for a program that has proved hot:

* when the program is built, ``tier_for`` decides whether it can be compiled at all:
  Numba is installed, ``CHAINRULE_NATIVE`` is not ``0``, every value is a float64 (or
  bool, or int64) array or number, and every call is one this module writes for Numba
  (``_Writer``: elementwise arithmetic and functions, reductions, reshapes, transposes,
  basic indexing and gathers, matrix products). Anything else, and the program stays
  NumPy's alone. A chain of elementwise calls is written as one expression, which
  Numba compiles to one loop;
* the replay counts its calls; at the ``after``-th (``CHAINRULE_NATIVE_AFTER``, 1,000 by
  default) a background thread compiles it, while calls go on as NumPy replays;
* the compiled function is run on the values the trace saw and must give the same
  shapes and dtypes, and numbers equal to the traced ones to within a few rounding
  errors (Numba's ``sin`` or ``sum`` is not NumPy's to the last bit: NumPy sums in
  pairs, its transcendental functions are its own); then it is timed against the NumPy
  replay, and kept only where it is faster. A program refused here says why
  (``Tier.reason``).

So the numbers of a compiled replay may differ from NumPy's in the last bits, as two
NumPy builds' do; they are never those of another computation. Floating-point warnings
(NumPy's "overflow encountered") are not raised by compiled code; a division by zero
gives NumPy's inf or nan (``error_model="numpy"``), never Python's ZeroDivisionError.
"""

import atexit
import importlib.util
import math
import operator
import os
import queue
import threading
import time
import warnings

import numpy as np

from .ops import UFUNC_OF, Attribute, Method, Slot, pure
from .passes import ufunc_of, used_inputs

__all__ = ["Tier", "tier_for", "enabled", "compile_now", "switched_off", "background"]

# NumPy ufuncs that Numba compiles with NumPy's meaning on float64 and bool
_UFUNCS = frozenset(getattr(np, name) for name in (
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "positive",
    "power", "square", "sqrt", "reciprocal", "absolute", "sign", "exp", "exp2", "expm1",
    "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "arctan2", "hypot", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "maximum", "minimum", "floor", "ceil", "less", "greater", "less_equal",
    "greater_equal", "equal", "not_equal", "logical_and", "logical_or", "logical_not",
    "isnan", "isinf", "isfinite", "trunc", "rint", "logaddexp", "logaddexp2", "fmax",
    "fmin", "copysign", "deg2rad", "rad2deg", "cbrt", "invert"))
_AUGMENTED = {operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=",
              operator.itruediv: "/="}
_DTYPES = (np.dtype(np.float64), np.dtype(np.bool_), np.dtype(np.int64))
_REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "max", np.min: "min",
               np.prod: "prod", np.amax: "max", np.amin: "min"}
_REDUCES = {np.add: "sum", np.maximum: "max", np.minimum: "min", np.multiply: "prod"}
# A compiled program serves only where it times faster than the NumPy replay (the tests
# switch this off to check the numbers of every program the tier can compile).
FASTER_ONLY = True


def _numba_installed():
    found = _numba_installed.found
    if found is None:
        found = _numba_installed.found = importlib.util.find_spec("numba") is not None
    return found


_numba_installed.found = None


def switched_off():
    """Why no program is compiled (switched off, Numba missing), or None."""
    if os.environ.get("CHAINRULE_NATIVE", "1") == "0":
        return "CHAINRULE_NATIVE=0"
    if not _numba_installed():
        return "Numba is not installed (pip install 'chainrule[native]')"
    return None


def enabled():
    """Whether programs may be compiled: Numba installed and ``CHAINRULE_NATIVE`` not 0."""
    return switched_off() is None


def background(job):
    """Hand ``job`` (an object with ``compile_now()``) to the background compiler."""
    _compiler().put(job)


def after():
    """The number of NumPy replays after which a program is compiled."""
    return int(os.environ.get("CHAINRULE_NATIVE_AFTER", "1000"))


def tier_for(program):
    """The compiled tier of a program, or None where it cannot have one (Numba missing,
    switched off, or a value or call this module does not write for Numba)."""
    if not enabled() or program.in_place:
        return None
    try:
        source, constants = kernel_source(program)
    except _NotCompiled:
        return None
    return Tier(program, source, constants)


def compile_now(program):
    """Compile a program's tier in this thread: "compiled", or why it is not."""
    off = switched_off()
    if off is not None:
        return f"not compiled: {off}"
    tier = program.native
    if tier is None:
        reason = "it writes into an array it was given"
        if not program.in_place:
            try:
                kernel_source(program)
            except _NotCompiled as err:
                reason = str(err)
        return f"not compiled: {reason}"
    if tier.state == "compiling":
        tier.done.wait()
    elif tier.state == "waiting":
        tier.compile_now()
    return "compiled" if tier.state == "ready" else f"not compiled: {tier.reason}"


class _NotCompiled(Exception):
    """A value or call of the program that the compiled tier does not take."""


# ---------------------------------------------------------------------------------------
# The program as Numba's Python
# ---------------------------------------------------------------------------------------

def _is_scalar(value):
    """Whether a value is a number in the compiled function (a 0-d array or a NumPy or
    Python number in the replay)."""
    return np.ndim(value) == 0


def _check_value(value):
    if type(value) in (float, bool):
        return
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype in _DTYPES:
        return
    raise _NotCompiled(f"a value of type {type(value).__name__} "
                       f"{getattr(value, 'dtype', '')}")


class _Writer:
    """Renders a program's calls as the body of ``kernel(t0, ..., k0, ...)``: the
    slots as ``t<n>``, its array constants as arguments ``k<i>``."""

    def __init__(self, program):
        self.program, self.values = program, program.values
        self.constants = []  # the array constants, passed in as arguments
        self.inlined = {}    # slot -> its expression, written into its one reader
        self.folded = _foldable(program)

    def expr(self, template):
        kind = type(template)
        if kind is Slot:
            inlined = self.inlined.get(template.n)
            return f"t{template.n}" if inlined is None else inlined
        if kind is bool or template is None:
            return repr(template)
        if kind is int:
            return repr(template)
        if kind is tuple and all(type(x) is int for x in template):  # a shape, axes
            return repr(template)
        if kind is float or (isinstance(template, (np.ndarray, np.generic))
                             and np.ndim(template) == 0 and template.dtype.kind in "fbi"):
            number = template.item() if kind is not float else template
            if type(number) is bool or type(number) is int:
                return repr(number)
            if math.isnan(number):
                return "np.nan"
            if math.isinf(number):
                return "np.inf" if number > 0 else "(-np.inf)"
            return repr(float(number))
        if isinstance(template, np.ndarray) and template.dtype.kind in "fbi":
            self.constants.append(template)
            return f"k{len(self.constants) - 1}"
        raise _NotCompiled(f"a constant of type {kind.__name__}")

    def index(self, template):
        parts = template if type(template) is tuple else (template,)
        shown = []
        for part in parts:
            if type(part) is int:
                shown.append(repr(part))
            elif type(part) is slice and all(v is None or type(v) is int for v in
                                             (part.start, part.stop, part.step)):
                ends = ["" if v is None else repr(v) for v in
                        (part.start, part.stop, part.step)]
                shown.append(":".join(ends))
            elif isinstance(part, np.ndarray) and part.dtype.kind == "i" and part.ndim == 1:
                shown.append(self.expr(part))  # a gather: Numba takes one such index
            else:
                raise _NotCompiled("an index other than integers, slices and one "
                                   "array of integers")
        return ", ".join(shown) + ("," if len(shown) == 1 and type(template) is tuple
                                   else "")

    def shape(self, n):
        return np.shape(self.values[n])

    def line(self, op):
        if not pure(op):
            raise _NotCompiled("a call with an effect")
        if op.writes and any(n in self.program.inputs for n in op.writes):
            raise _NotCompiled("a write into an input")
        out = op.outs
        if type(out) is tuple:
            raise _NotCompiled("a call with several results")
        for n in op.results():
            _check_value(self.values[n])
        fn, args, kwargs = op.fn, op.args, op.kwargs
        arg = [self.expr(a) for a in args] if fn not in (operator.getitem,
                                                         operator.setitem) else None
        if out in self.folded:  # written where it is read: one loop with its reader
            self.inlined[out] = arg[0] if getattr(fn, "fills_new_array", False) else \
                f"({self.call(fn, args, kwargs, arg, out)})"
            return None
        call = self.call(fn, args, kwargs, arg, out)
        return call if out is None or call.startswith(f"t{out} ") else f"t{out} = {call}"

    def call(self, fn, args, kwargs, arg, out):
        name = getattr(fn, "__name__", None)
        owner = getattr(fn, "__self__", None)
        ufunc = UFUNC_OF.get(fn, fn)  # (an operator: the ufunc it calls)
        if ufunc in _UFUNCS and not kwargs and len(args) == ufunc.nin:
            return f"np.{ufunc.__name__}({', '.join(arg)})"
        if fn is operator.pow and not kwargs:
            return f"{arg[0]} ** {arg[1]}"
        if fn is operator.invert and type(args[0]) is Slot and \
                not _is_scalar(self.values[args[0].n]):  # (~ of a Python bool is -2)
            return f"~{arg[0]}"
        if fn in _AUGMENTED:
            return f"t{out} = {arg[0]}; t{out} {_AUGMENTED[fn]} {arg[1]}"
        reduction = _REDUCTIONS.get(fn) or (_REDUCES.get(owner) if name == "reduce"
                                            else None)
        if reduction is not None and len(args) <= 2 and type(args[0]) is Slot and \
                set(kwargs) <= {"axis", "keepdims"}:
            axis = kwargs.get("axis", args[1] if len(args) == 2 else None)
            return self.reduce(reduction, args[0], arg[0], axis, out)
        if fn is np.asarray and len(args) == 1 and not kwargs:
            return arg[0] if _is_scalar(self.values[args[0].n]) else f"np.asarray({arg[0]})"
        if (fn is np.reshape or (type(fn) is Method and fn.name == "reshape")) and \
                len(args) == 2 and not kwargs and type(args[1]) is tuple:
            return self.reshape(args[0], arg[0], out)
        if (fn is np.transpose or (type(fn) is Method and fn.name == "transpose")) and \
                not kwargs and len(args) <= 2:
            return f"np.transpose({', '.join(arg)})"
        if (fn is np.swapaxes or (type(fn) is Method and fn.name == "swapaxes")) and \
                len(args) == 3 and not kwargs:
            return f"np.swapaxes({', '.join(arg)})"
        if type(fn) is Attribute and fn.name == "T":
            return f"{arg[0]}.T"
        if ufunc is np.matmul and not kwargs:
            return f"{arg[0]} @ {arg[1]}"
        if getattr(fn, "fills_new_array", False):  # broadcasts.broadcast_copy
            shape = self.shape(out)
            if _is_scalar(self.values[args[0].n]) if type(args[0]) is Slot else True:
                return f"np.full({shape!r}, {arg[0]})"
            return f"np.ascontiguousarray(np.broadcast_to({arg[0]}, {shape!r}))"
        if fn is np.broadcast_to and len(args) == 2 and not kwargs and \
                type(args[0]) is Slot and not _is_scalar(self.values[args[0].n]):
            return f"np.broadcast_to({arg[0]}, {self.shape(out)!r})"
        if fn is np.array and len(args) == 1 and set(kwargs) <= {"copy"}:
            return f"{arg[0]}.copy()"
        if (fn is np.copy or (type(fn) is Method and fn.name == "copy")) and \
                len(args) == 1 and not kwargs and type(args[0]) is Slot:  # (real of a real)
            return arg[0] if _is_scalar(self.values[args[0].n]) else f"{arg[0]}.copy()"
        if fn is operator.getitem and type(args[0]) is Slot:
            return f"t{args[0].n}[{self.index(args[1])}]"
        if fn is operator.setitem and type(args[0]) is Slot:
            return f"t{args[0].n}[{self.index(args[1])}] = {self.expr(args[2])}"
        if (fn is np.take or (type(fn) is Method and fn.name == "take")) and len(args) == 3 and not kwargs and type(args[0]) is Slot and \
                type(args[2]) is int and isinstance(args[1], np.ndarray) and \
                args[1].ndim == 1:  # a gather along one axis: x[:, indices]
            ndim = np.ndim(self.values[args[0].n])
            parts = [":"] * ndim
            parts[args[2] % ndim] = arg[1]
            return f"{arg[0]}[{', '.join(parts)}]"
        if fn is np.expand_dims and len(args) == 2 and type(args[1]) is int and not kwargs:
            return f"np.expand_dims({arg[0]}, {arg[1]})"
        if fn is np.where and len(args) == 3 and not kwargs:
            return f"np.where({', '.join(arg)})"
        raise _NotCompiled(f"the call {name or fn!r}")

    def reduce(self, reduction, source, expr, axis, out):
        """A reduction over some axes: over all of them, Numba's function of the whole
        array; over some, one axis at a time from the last (a mean: the sum over the
        count). The result keeps the reduced axes where NumPy's would."""
        ndim = np.ndim(self.values[source.n])
        axes = range(ndim) if axis is None else axis if type(axis) is tuple else (axis,)
        if not all(type(a) is int for a in axes):
            raise _NotCompiled("a reduction over axes that are not integers")
        axes = sorted({a % ndim for a in axes} if ndim else set(), reverse=True)
        name = "sum" if reduction == "mean" else reduction
        if len(axes) == ndim:
            call = f"np.{name}({expr})"
        else:
            call = expr
            for a in axes:
                call = f"np.{name}({call}, axis={a})"
        if reduction == "mean":
            count = int(np.prod([np.shape(self.values[source.n])[a] for a in axes]))
            call = f"({call}) / {float(count)!r}"
        shape = self.shape(out)
        if shape != () and len(axes) == ndim:  # every axis, kept: an array of one entry
            return f"np.full({shape!r}, {call})"
        if len(shape) != ndim - len(axes):  # some axes, kept
            return f"np.ascontiguousarray({call}).reshape({shape!r})"
        return call

    def reshape(self, source, expr, out):
        """A reshape, with the numbers of the compiled function (0-d values) in mind."""
        shape = self.shape(out)
        if type(source) is not Slot:
            raise _NotCompiled("a reshape of a constant")
        if _is_scalar(self.values[source.n]):
            return expr if shape == () else f"np.full({shape!r}, {expr})"
        if shape == ():
            return f"{expr}.ravel()[0]"
        return f"np.ascontiguousarray({expr}).reshape({shape!r})"


def _elementwise(op):
    """A ufunc of one result the tier writes as such (an operator's included)."""
    fn = ufunc_of(op)
    return type(op.outs) is int and not op.writes and not op.kwargs and pure(op) and \
        fn in _UFUNCS and len(op.args) == fn.nin


def _foldable(program):
    """The slots written into the expression that reads them, so that Numba makes one
    loop of a chain of elementwise calls (its array expressions) rather than a loop and
    an array per call: the result of an elementwise call that one elementwise call
    reads, once; and a broadcast copy (``broadcasts.py``, for NumPy's sake) every reader
    of which is elementwise beside an operand of the copy's whole shape, so that
    broadcasting makes the same entries. None where the program writes in place."""
    ops = program.ops
    if any(op.writes for op in ops):
        return set()
    readers = {}
    for op in ops:
        for n in op.slots_read():
            readers.setdefault(n, []).append(op)
    keep = set(program.outputs)
    folded = set()
    for op in ops:
        n = op.outs
        if type(n) is not int or n in keep or n not in readers:
            continue
        if _elementwise(op) and len(readers[n]) == 1 and _elementwise(readers[n][0]):
            folded.add(n)
        elif getattr(op.fn, "fills_new_array", False) and type(op.args[0]) is Slot:
            shape = np.shape(program.values[n])
            if all(_elementwise(r) and any(_whole(a, n, shape, program.values)
                                           for a in r.args) for r in readers[n]):
                folded.add(n)
    return folded


def _whole(operand, copy, shape, values):
    """Whether an operand beside a broadcast copy has the copy's whole shape."""
    if type(operand) is Slot:
        return operand.n != copy and np.shape(values[operand.n]) == shape
    return isinstance(operand, np.ndarray) and operand.shape == shape


def kernel_source(program):
    """The Python of ``kernel(t0, ..., k0, ...)`` that Numba compiles, and its array
    constants; raises ``_NotCompiled`` where a value or call is not taken."""
    writer = _Writer(program)
    used = used_inputs(program)
    for n in used:
        _check_value(program.values[n])
    body = [line for line in map(writer.line, program.ops) if line is not None]
    outs = [f"t{n}" for n in program.outputs]
    if not program.ops:
        raise _NotCompiled("nothing to compile: the program makes no call")
    params = [f"t{n}" for n in used] + \
        [f"k{i}" for i in range(len(writer.constants))]
    lines = [f"def kernel({', '.join(params)}):"]
    lines += [f"    {line}" for line in body]
    lines.append(f"    return ({', '.join(outs)},)")
    return "\n".join(lines) + "\n", writer.constants


# ---------------------------------------------------------------------------------------
# The tier: counting, compiling in the background, checking, timing
# ---------------------------------------------------------------------------------------

class Tier:
    """A program's compiled tier. ``run`` is None until the compiled function is
    ready, checked and faster; then ``run(*inputs)`` returns the program's outputs, or
    None where Numba has no version for these arrays (another memory layout), and the
    NumPy replay serves the call. ``calls`` counts NumPy replays; the replay calls
    ``start`` at the ``after``-th. ``reason`` says why a compiled program was refused."""

    def __init__(self, program, source, constants):
        self.program, self.source, self.constants = program, source, constants
        self.run = None
        self.calls = 0
        self.after = after()
        self.state = "waiting"  # -> "compiling" -> "ready" or "refused"
        self.reason = None
        self.done = threading.Event()

    def start(self):
        """Queue the program for the background compiler (once)."""
        if self.state == "waiting":
            self.state = "compiling"
            background(self)

    def compile_now(self):
        """Compile, check and time the program in this thread; True where the compiled
        function serves it from now on."""
        self.state = "compiling"
        try:
            run = self._compiled()
            problem = self._check(run)
            if problem is None and FASTER_ONLY and not self._faster(run):
                problem = "not faster than the NumPy replay"
        except Exception as err:  # Numba's typing errors and the like: NumPy stays
            run, problem = None, f"{type(err).__name__}: {str(err).splitlines()[0]}"
        if problem is None:
            self.run, self.state = run, "ready"
        else:
            self.reason, self.state = problem, "refused"
        self.done.set()
        return problem is None

    def _compiled(self):
        import numba
        # (a matrix product of a transposed view is as fast as NumPy's here; Numba's
        # advice to make it contiguous is not for the user)
        warnings.filterwarnings("ignore", category=numba.NumbaPerformanceWarning,
                                module="<cr.jit native program>")
        namespace = {"np": np}
        exec(compile(self.source, "<cr.jit native program>", "exec"), namespace)
        kernel = numba.njit(error_model="numpy", cache=False)(namespace["kernel"])
        inputs = [self.program.values[n] for n in used_inputs(self.program)]
        kernel(*inputs, *self.constants)  # compiled for these types and layouts
        kernel.disable_compile()  # other arrays: TypeError, and the replay serves them
        return _runner(kernel, self.constants, self.program)

    def _check(self, run):
        program = self.program
        got = run(*[program.values[n] for n in used_inputs(program)])
        if got is None:
            return "the compiled function does not take the traced arrays"
        for n, value in zip(program.outputs, got):
            want = program.values[n]
            if type(value) is not type(want) or np.shape(value) != np.shape(want) or \
                    np.result_type(value) != np.result_type(want):
                return (f"output t{n}: {type(value).__name__} {np.shape(value)} against "
                        f"the replay's {type(want).__name__} {np.shape(want)}")
            if not _close(value, want):
                return f"output t{n} differs from the traced numbers"
        return None

    def _faster(self, run):
        program = self.program
        unused = set(program.unused)
        every = [None if i in unused else program.values[n]
                 for i, n in enumerate(program.inputs)]
        used = [program.values[n] for n in used_inputs(program)]

        def best(fn, inputs):
            times = []
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(20):
                    fn(*inputs)
                times.append(time.perf_counter() - start)
            return min(times)
        with program._lock:  # (the replay's kept buffers)
            numpy_time = best(program._run, every)
        return best(run, used) < 0.9 * numpy_time


def _close(value, want):
    """Equal but for rounding: the same non-finite entries, the finite ones within a
    few rounding errors of a sum of their sizes."""
    value, want = np.asarray(value), np.asarray(want)
    if want.dtype == np.bool_:
        return bool(np.array_equal(value, want))
    if not np.array_equal(np.isfinite(value), np.isfinite(want)) or \
            not np.array_equal(value[~np.isfinite(want)], want[~np.isfinite(want)],
                               equal_nan=True):
        return False
    finite = np.isfinite(want)
    scale = np.max(np.abs(want[finite]), initial=1.0)
    return bool(np.allclose(value[finite], want[finite], rtol=1e-9, atol=1e-12 * scale))


def _runner(kernel, constants, program):
    """``run(*inputs)``: the compiled kernel with the program's constants, its numbers
    made the replay's kinds of result (a 0-d array, a NumPy float); None where Numba
    has no version for these arrays."""
    kinds = []
    for n in program.outputs:
        want = program.values[n]
        kinds.append(None if type(want) is np.ndarray and want.ndim else type(want))
    constants = tuple(constants)
    if all(kind is None for kind in kinds):
        def run(*inputs):
            try:
                return kernel(*inputs, *constants)
            except TypeError:
                return None
        return run

    def run(*inputs):
        try:
            outs = kernel(*inputs, *constants)
        except TypeError:
            return None
        return tuple(value if kind is None else
                     np.array(value) if kind is np.ndarray else kind(value)
                     for value, kind in zip(outs, kinds))
    return run


# One background thread compiles the programs that became hot, one at a time.
_queue = None
_thread = None
_start_lock = threading.Lock()


def _compiler():
    global _queue, _thread
    with _start_lock:
        if _queue is None:
            _queue = queue.Queue()
            _thread = threading.Thread(target=_serve, name="cr.jit native compiler",
                                       daemon=True)
            _thread.start()
            atexit.register(_finish)
    return _queue


def _serve():
    while True:
        tier = _queue.get()
        if tier is None:
            return
        tier.compile_now()


def _finish():
    """At exit: let a compile under way end before the interpreter does."""
    if _queue is not None:
        _queue.put(None)
        _thread.join(timeout=30)
