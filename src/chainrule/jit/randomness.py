"""Random numbers a traced function draws behind cr.jit's back, refused.

A draw chainrule makes (``Dropout``, an initialiser, anything through ``xp.draw``) is a
call of the program: each run draws again from the same generator, as eager code does.
A draw the function makes itself, from ``numpy.random``'s global functions, a
``numpy.random.Generator`` or ``RandomState`` or Python's ``random``, happens once while
tracing: its numbers would be constants of the program, the same at every call. So the
generators the function can reach (its arguments, what it closes over, the globals it
names, one attribute deep, the helpers it calls, and the global ones) are watched
while it is traced, and one that moved without going through the program makes the
trace raise, with the way around: a ``cr.random`` key passed as an argument.

Two more sources are watched the same way. A generator the function makes itself
without a seed (``np.random.default_rng()``, ``Generator(PCG64())``,
``random.Random()``, ``g.seed()`` of a ``cr.Generator``) reads the operating system's
entropy as it is made, through ``random._urandom`` (NumPy's SeedSequence reads it
through ``secrets``; Python's ``Random.seed(None)`` reads it in C, so that call is
counted): such a read during the trace, other than in a call of the program (which
runs again at every call) or in a module's first import, is refused (one made with a
seed gives the same numbers at every call, eagerly too, so it stays). And where torch
is imported, its global generator's state (``torch.rand``, ``randn``, ``normal_``...)
is compared before and after the trace.
"""

import contextlib
import pickle
import random as _python_random
import sys
import threading
import types

import numpy as np

__all__ = ["Watch", "drawn_by_a_call"]

_GENERATORS = (np.random.Generator, np.random.RandomState)


def _state(generator):
    bits = generator.bit_generator if isinstance(generator, np.random.Generator) \
        else generator._bit_generator
    return pickle.dumps(bits.state)


def _candidates(fun, args, kwargs):
    """Objects a traced function can draw from, and a few levels of what holds them."""
    seen, found = set(), []

    def visit(value, depth):
        if isinstance(value, types.FunctionType):
            return visit_function(value, depth + 1)
        if id(value) in seen or depth > 2:
            return
        seen.add(id(value))
        if isinstance(value, _GENERATORS):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            for item in value[:64]:
                visit(item, depth + 1)
        elif isinstance(value, dict):
            for item in list(value.values())[:64]:
                visit(item, depth + 1)
        elif hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType)):
            for item in list(vars(value).values())[:64]:
                visit(item, depth + 1)

    def visit_function(function, depth):
        """What a function closes over and the globals it names (a helper it calls:
        one level deeper)."""
        if id(function) in seen or depth > 1:
            return
        seen.add(id(function))
        for cell in getattr(function, "__closure__", None) or ():
            try:
                visit(cell.cell_contents, depth)
            except ValueError:  # an empty cell
                pass
        code, names = getattr(function, "__code__", None), set()
        stack = [code] if code is not None else []
        while stack:
            current = stack.pop()
            names.update(current.co_names)
            stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
        module_globals = getattr(function, "__globals__", {})
        for name in names:
            value = module_globals.get(name)
            if isinstance(value, types.FunctionType):
                visit_function(value, depth + 1)
            elif name in module_globals:
                visit(value, 1)

    for value in (*args, *kwargs.values()):
        visit(value, 0)
    if getattr(fun, "__self__", None) is not None:
        visit(fun.__self__, 0)
    visit_function(getattr(fun, "__func__", fun), 0)
    found.append(np.random.mtrand._rand)  # numpy.random's global functions
    return found


# --- entropy read while tracing: a generator made without a seed ----------------------

_os_entropy = _python_random._urandom
_thread = threading.local()  # .reads: [count] while this thread traces, else None
_patch = {"lock": threading.Lock(), "open": 0}


# The code of the functions that run a call of the program while tracing (the
# recording's, registered by recording.py; and the generated programs of loops' bodies):
# a generator made there is made again at every run, its numbers live.
RUNS_A_CALL = set()


def _counted_entropy(n):
    _count_a_read()
    return _os_entropy(n)


# Python's random.Random() seeds itself from the entropy in C (not through _urandom):
# its seed(None) is counted instead
_python_seed = _python_random.Random.seed


def _counted_seed(self, a=None, version=2):
    if a is None:
        _count_a_read()
    return _python_seed(self, a, version)


def _count_a_read():
    reads = getattr(_thread, "reads", None)
    if reads is not None and not _in_a_call_of_the_program_or_an_import():
        reads[0] += 1


def _in_a_call_of_the_program_or_an_import():
    """A generator made in a call of the program is made again at every run; one made
    while a module is first imported (a library making its own at its top level, as
    chainrule.scipy's first use inside a traced function imports SciPy's) is part of
    that module, made once per process whether or not a trace is open."""
    frame = sys._getframe(3)
    while frame is not None:
        code = frame.f_code
        if code in RUNS_A_CALL or code.co_filename.startswith("<cr.jit") or (
                code.co_filename == "<frozen importlib._bootstrap>"
                and code.co_name == "_load_unlocked"):
            return True
        frame = frame.f_back
    return False


def _watch_entropy(on):
    with _patch["lock"]:
        _patch["open"] += 1 if on else -1
        _python_random._urandom = _counted_entropy if _patch["open"] else _os_entropy
        _python_random.Random.seed = _counted_seed if _patch["open"] else _python_seed


def _torch_state():
    torch = sys.modules.get("torch")  # (never imported here: only if the user has)
    return None if torch is None else torch.random.get_rng_state()


class Watch:
    """The states of the generators a function can reach, taken before its trace;
    while it is open (``with``), the entropy this thread reads is counted."""

    def __init__(self, fun, args, kwargs):
        self.generators = {id(g): (g, _state(g)) for g in _candidates(fun, args, kwargs)}
        self.python = _python_random.getstate()
        self.torch = _torch_state()

    def __enter__(self):
        self.outer = getattr(_thread, "reads", None)
        _thread.reads = [0]
        _watch_entropy(True)
        return self

    def __exit__(self, *exc):
        _thread.reads = self.outer
        _watch_entropy(False)
        return False

    def refuse_hidden_draws(self, drawn, name):
        """Raise if a watched generator moved other than through the program's own
        draws (``drawn``: the ids of the generators those used)."""
        moved = [g for key, (g, before) in self.generators.items()
                 if key not in drawn and _state(g) != before]
        torch_now = _torch_state() if self.torch is not None else None
        if _python_random.getstate() != self.python:
            source = "Python's random module"
        elif _thread.reads[0]:
            source = ("a generator made without a seed (np.random.default_rng(), "
                      "Generator(PCG64()), random.Random(), cr.Generator().seed())")
        elif torch_now is not None and not bool((torch_now == self.torch).all()):
            source = "torch's global generator (torch.rand, torch.randn, normal_...)"
        elif not moved:
            return
        elif moved[0] is np.random.mtrand._rand:
            source = "numpy.random's global functions"
        else:
            source = f"a {type(moved[0]).__name__} it reaches"
        raise TypeError(
            f"cr.jit: {name} drew random numbers from {source} while being traced; in "
            f"the program they would be constants, the same at every call. Pass a "
            f"cr.random key as an argument and draw with cr.random (new numbers at each "
            f"call), or draw outside the jitted function and pass the numbers in")


@contextlib.contextmanager
def drawn_by_a_call(drawn):
    """A function the program calls (``xp.call``: SciPy's logm, which estimates a norm
    with random vectors) runs again at every run, so a draw it makes from numpy.random's
    global generator is not frozen: that generator is counted in ``drawn``."""
    generator = np.random.mtrand._rand
    before = _state(generator)
    yield
    if _state(generator) != before:
        drawn.add(id(generator))
