"""An optimizer's step ``p -= lr * g`` in one pass over memory, compiled (Numba).

NumPy makes the step two calls: ``lr * g`` into a temporary, then ``p -= `` it. Each
streams the whole array, so on a weight matrix of a megabyte or more the step costs twice
what one loop reading ``g`` and ``p`` and writing ``p`` costs (measured on 670k float32
weights: 147 us against 82 us), and on a large network's training step that is a few
percent of the whole. XLA fuses the two; NumPy has no call that does.

Where the compiled tier may be used (``native.enabled``: Numba installed and
``CHAINRULE_NATIVE`` not ``0``), ``scaled_updates`` finds the pairs in a program: a
product of a number and an array, read only by the next call, which adds it to or
subtracts it from an array of the same shape and dtype in place. The code generator
writes each pair as one call of ``update``. Its loop computes, entry by entry, the same
two roundings as NumPy's two calls (the product in the array's dtype, then the sum), so
the numbers are NumPy's to the last bit (tests/test_jit_fused_update.py compares them).

``update`` runs the two NumPy calls, exactly as the replay would write them, until the
loop is compiled, and wherever the loop does not take the arrays (another memory layout,
arrays that overlap, a number NumPy would compute in another dtype). The loop is compiled
once per process in the background (the compiled tier's thread), at the first replay
that asks for it, and Numba keeps it on disk for the next process.

Pairs inside a run of elementwise calls that ``blocks.py`` runs block by block (Adam's
update, SGD with momentum) are left to it: there the temporaries are already in cache.
"""

import threading
import warnings

import numpy as np

from . import native
from .ops import Slot, pure
from .passes import ufunc_of

__all__ = ["Update", "scaled_updates", "update", "compile_now", "FUSED_FROM"]

# Below this many entries the two NumPy calls cost little more than the checks that
# choose the loop.
FUSED_FROM = 1 << 15
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# ---------------------------------------------------------------------------------------
# The pass: which pairs of calls are one update
# ---------------------------------------------------------------------------------------

class Update:
    """One pair written as one call: ``p += sign * (s * g)``, the product ``t`` kept in
    its buffer for the two NumPy calls; ``result``: the slot the second call binds
    (None for ``p -= t``, which binds none)."""

    __slots__ = ("p", "s", "g", "t", "sign", "result")

    def __init__(self, p, s, g, t, sign, result):
        self.p, self.s, self.g, self.t, self.sign, self.result = p, s, g, t, sign, result


def scaled_updates(program):
    """{index of the product's call: its ``Update``} for the pairs ``t = s * g`` (or
    ``g * s``), ``p += t`` / ``p -= t`` (or ``np.add``/``np.subtract`` into ``p``),
    where ``t`` is read by nothing else, ``s`` is a Python float, and ``p``, ``g`` and
    ``t`` have one shape and one floating dtype, with at least ``FUSED_FROM`` entries."""
    if not native.enabled() or program.native is not None:
        return {}
    ops, values = program.ops, program.values
    in_runs = {i for run in program.blocks.values() for i in range(run.ops[0], run.stop)}
    reads = {}
    for op in ops:
        for n in op.slots_read():
            reads[n] = reads.get(n, 0) + 1
    outputs = set(program.outputs)
    found = {}
    for i in range(len(ops) - 1):
        if i in in_runs or i + 1 in in_runs:
            continue
        product, step = ops[i], ops[i + 1]
        t = product.outs
        if type(t) is not int or t in outputs or reads.get(t) != 1 or \
                ufunc_of(product) is not np.multiply or product.kwargs or \
                len(product.args) != 2 or not pure(product) or not pure(step):
            continue
        array, number = _array_and_number(product.args, values)
        target = _target(step, t, program)
        if array is None or target is None:
            continue
        value = values[t]
        if not all(_same_array(values[n], value) for n in (array, target)) or \
                value.dtype not in _FLOATS or value.size < FUSED_FROM:
            continue
        sign = 1 if ufunc_of(step) is np.add else -1
        result = step.outs if type(step.outs) is int else None
        found[i] = Update(target, number, array, t, sign, result)
    return found


def _array_and_number(args, values):
    """(the array's slot, the number) of a product's operands, or (None, None)."""
    for a, s in (args, args[::-1]):
        if type(a) is Slot and type(values[a.n]) is np.ndarray:
            number = values[s.n] if type(s) is Slot else s
            if type(number) is float:
                return a.n, s
    return None, None


def _target(step, t, program):
    """The array a call adds ``t`` to or subtracts it from, in place, or None."""
    fn, args = ufunc_of(step), step.args
    if fn not in (np.add, np.subtract) or len(args) != 2 or \
            not all(type(a) is Slot for a in args):
        return None
    if step.writes and not step.kwargs and len(step.writes) == 1:  # p += t, p -= t
        into = step.writes[0]
    elif type(step.outs) is int and step.outs in program.in_place and not step.kwargs:
        into = program.in_place[step.outs]   # np.subtract(p, t, out=p), an input's array
    else:
        return None
    first, second = args[0].n, args[1].n
    if fn is np.subtract:
        return into if (first, second) == (into, t) else None
    return into if {first, second} == {into, t} and first != second else None


def _same_array(a, b):
    return type(a) is np.ndarray and a.shape == b.shape and a.dtype == b.dtype


# ---------------------------------------------------------------------------------------
# The call a replay makes, and the loop
# ---------------------------------------------------------------------------------------

def update(p, s, g, buffer, sign):
    """``p += s * g`` (``sign`` 1) or ``p -= s * g`` (``sign`` -1), in place; returns
    ``p``. ``buffer``: where the two NumPy calls put the product (None: a new array)."""
    loop = _loop.run
    if loop is not None and type(p) is np.ndarray and type(g) is np.ndarray and \
            p.dtype == g.dtype and p.shape == g.shape and p.flags.c_contiguous and \
            g.flags.c_contiguous and p.flags.writeable and p.dtype in _FLOATS and \
            (type(s) is float or (type(s) is p.dtype.type)) and \
            (g is p or not np.may_share_memory(p, g)):
        # s in the array's dtype: the product NumPy computes for a Python float beside
        # a float32 array is float32's
        try:
            loop(p.reshape(-1), p.dtype.type(s), g.reshape(-1), sign)
            return p
        except TypeError:  # a kind of array Numba has no version for: NumPy's calls
            pass
    if loop is None:
        _loop.request()
    product = np.multiply(s, g, buffer)
    return np.add(p, product, out=p) if sign > 0 else np.subtract(p, product, out=p)


def _scaled_add(p, s, g, sign):
    """The loop Numba compiles: one pass, each entry rounded as NumPy's two calls."""
    if sign > 0:
        for i in range(p.size):
            p[i] = p[i] + s * g[i]
    else:
        for i in range(p.size):
            p[i] = p[i] - s * g[i]


class _Loop:
    """The compiled loop: ``run`` is None until it is compiled and checked."""

    def __init__(self):
        self.run = None
        self.state = "waiting"  # -> "compiling" -> "ready" or "refused"
        self.reason = None
        self.done = threading.Event()
        self._lock = threading.Lock()

    def request(self):
        """Queue the loop for the compiled tier's background thread (once)."""
        with self._lock:
            if self.state != "waiting":
                return
            self.state = "compiling"
        native.background(self)

    def compile_now(self):
        """Compile and check the loop in this thread; True where it serves from now on."""
        with self._lock:
            if self.state in ("ready", "refused"):
                return self.state == "ready"
            self.state = "compiling"
        try:
            loop = _compiled()
            problem = _check(loop)
        except Exception as err:  # Numba's errors: the two NumPy calls stay
            loop, problem = None, f"{type(err).__name__}: {str(err).splitlines()[0]}"
        if problem is None:
            self.run, self.state = loop, "ready"
        else:
            self.reason, self.state = problem, "refused"
        self.done.set()
        return problem is None


def _compiled():
    import numba
    from numba import types
    signatures = []
    for number in (types.float32, types.float64):
        p = types.Array(number, 1, "C")
        for g in (p, types.Array(number, 1, "C", readonly=True)):
            signatures.append(types.void(p, number, g, types.int64))
    compile_with = dict(error_model="numpy", nogil=True, boundscheck=False)
    try:  # kept on disk for the next process, where the package's folder allows it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", numba.NumbaWarning)
            return numba.njit(signatures, cache=True, **compile_with)(_scaled_add)
    except RuntimeError:  # no folder to cache in
        return numba.njit(signatures, **compile_with)(_scaled_add)


def _check(loop):
    """None where the loop gives NumPy's two calls' numbers to the last bit."""
    rng = np.random.default_rng(0)
    for dtype in _FLOATS:
        p = rng.standard_normal(1000).astype(dtype)
        g = rng.standard_normal(1000).astype(dtype)
        for s, sign in ((0.1, -1), (3.7e-3, 1)):
            want = p - s * g if sign < 0 else p + s * g
            got = p.copy()
            loop(got, dtype.type(s), g, sign)
            if not np.array_equal(got, want):
                return f"the compiled loop differs from NumPy's numbers in {dtype}"
    return None


_loop = _Loop()


def compile_now():
    """Compile the loop in this thread: "compiled", or why it is not."""
    off = native.switched_off()
    if off is not None:
        return f"not compiled: {off}"
    return "compiled" if _loop.compile_now() else f"not compiled: {_loop.reason}"
