"""How a traced function reached the state it read, checked again at every call.

A program reads the tensors and objects the trace found (``state.py``); it holds those
objects themselves. The function reached them through its arguments, the variables it
closes over and the globals it names, and through the attributes, lists and dicts on
the way (``model.layers[0].weight``, ``params["w"]``). Where one of those is replaced
between calls (``params["w"] = new``, a closed-over ``model = other``), the function
would now read another object: so each way is written down once, after the trace, as a
*path* from where the function starts, and a call first checks that each path still
leads to the same object, and that each list and dict on the way has the same length
(one that gained an item is read by a loop over it). A check that fails traces again.

A path ends at the first object that checks itself (an object with the state
protocol: a module compares its own attributes, an optimizer its parameters); a tensor
reached only through one is not followed further. The checks are one generated
function of identities and lengths: a few attribute loads per object.

A NumPy array the function reaches this way (a closed-over ``a``, a global mask, an
array in a dict) is different: the program may have computed from it while tracing
(the derivative of ``x * a`` is ``a`` times a seed the trace knew), so a write into it
would leave the program's numbers stale while the eager function reads the new ones.
Each such writable array is compared with a copy taken after the trace, at every call:
a write traces again. The comparison reads the array once (a bytes comparison for up
to 64 kB, under a microsecond for a few numbers; about a millisecond for 8 MB); an
array passed as an argument (or in an argument's tuples, lists and dicts), or held in
a Tensor, is read by the program itself and costs nothing, and a new one there traces
nothing again.
"""

import types

import numpy as np

from ..tensor import Tensor
from .codegen import Source
from .names import global_names, unwrapped

__all__ = ["find"]

_DEPTH = 6       # attributes and items from a start to the object found
_VISITS = 4000   # objects looked at, at most, per trace
_WIDTH = 256     # items of one list or dict looked at, at most

_OPAQUE = (type, types.ModuleType, types.BuiltinFunctionType, str, bytes, int, float,
           complex, bool, type(None), np.ndarray, np.generic, Tensor)


def find(fun, args, kwargs, targets, covering):
    """The check of a call (``check(args, kwargs) -> bool``), or None where the function
    reaches none of ``targets`` (id -> the object) and no writable NumPy array through
    what can change. ``covering``: ids of the targets that check what they hold
    themselves."""
    paths, arrays = _search(fun, args, kwargs, targets, covering)
    return _compile(paths, arrays) if paths or arrays else None


def _starts(fun, args, kwargs):
    """(expression, value) where the function starts: its arguments, then what it
    closes over and the globals it names (constants of the check: the cell, the dict)."""
    starts = [(f"args[{i}]", arg) for i, arg in enumerate(args)]
    starts += [(f"kwargs[{name!r}]", value) for name, value in kwargs.items()]
    fun = unwrapped(fun)
    owner = getattr(fun, "__self__", None)  # a bound method: its object
    if owner is not None and not isinstance(owner, types.ModuleType):
        starts.append((("const", owner), owner))
    function = getattr(fun, "__func__", fun)
    if not isinstance(function, types.FunctionType):  # a callable object
        starts.append((("const", fun), fun))
        function = getattr(type(fun), "__call__", None)
    starts.extend(_function_starts(function))
    return starts


def _function_starts(function):
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    found = [((("const", cell), ".cell_contents"), cell.cell_contents)
             for cell in function.__closure__ or () if _filled(cell)]
    namespace = function.__globals__
    found += [((("const", namespace), f"[{name!r}]"), namespace[name])
              for name in dict.fromkeys(global_names(code)) if name in namespace]
    return found


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:  # a variable not yet assigned
        return False


def _search(fun, args, kwargs, targets, covering):
    """([(steps, the object, [(steps, length)])], the same for each writable NumPy array
    reached): a path to each target reached, breadth first, with the lengths of the
    lists and dicts it goes through."""
    found, arrays, seen, visits = {}, {}, set(), 0
    level = [(start, value, (), type(start) is str)
             for start, value in _starts(fun, args, kwargs)]
    for depth in range(_DEPTH + 1):
        following = []
        for steps, value, lengths, argument in level:
            if argument and (type(value) is np.ndarray or isinstance(value, Tensor)):
                # a leaf of an argument's tuples, lists and dicts is an input of the
                # program; reached another way too (a dict it closes over), it is state
                continue
            key = id(value)
            if key in seen or visits >= _VISITS:
                continue
            seen.add(key)
            visits += 1
            if type(value) is np.ndarray and value.flags.writeable:
                arrays[key] = (steps, value, lengths)
            if key in targets:
                if key not in found and type(steps) is not str:  # (an argument itself:
                    found[key] = (steps, value, lengths)         # the signature compares it)
                if key in covering or isinstance(value, Tensor):
                    continue
            if depth < _DEPTH:
                within = argument and type(value) in (list, tuple, dict)
                following.extend(item + (within,) for item in _inside(steps, value, lengths))
        level = following
    return list(found.values()), list(arrays.values())


def _inside(steps, value, lengths):
    """(steps, item, lengths) of what ``value`` holds that a function can read."""
    kind = type(value)
    if isinstance(value, _OPAQUE) or kind.__module__.startswith(__package__):
        return []  # (a jitted function: its programs' own arrays change at each call)
    if kind is list or kind is tuple or kind is dict:
        counted = lengths + ((steps, len(value)),) if kind is not tuple else lengths
        items = value.items() if kind is dict else enumerate(value)
        out = []
        for n, (k, item) in enumerate(items):
            if n >= _WIDTH:
                break
            if kind is dict and type(k) not in (str, int):
                continue
            out.append(((steps, f"[{k!r}]"), item, counted))
        return out
    if isinstance(value, types.FunctionType):  # a helper: what it closes over, its
        # globals (not its module's other functions: one helper deep)
        cells = [(((((steps, ".__closure__"), f"[{i}]"), ".cell_contents"),
                   cell.cell_contents, lengths))
                 for i, cell in enumerate(value.__closure__ or ()) if _filled(cell)]
        namespace = value.__globals__
        return cells + [(((steps, ".__globals__"), f"[{name!r}]"), namespace[name], lengths)
                        for name in dict.fromkeys(global_names(value.__code__))
                        if name in namespace and
                        not isinstance(namespace[name], types.FunctionType)]
    if isinstance(value, types.MethodType):
        return [((steps, ".__self__"), value.__self__, lengths)]
    attributes = getattr(value, "__dict__", None)
    if type(attributes) is not dict:
        return []
    return [((steps, f".{name}"), item, lengths)
            for n, (name, item) in enumerate(attributes.items())
            if n < _WIDTH and name.isidentifier()]


class _Kept:
    """An array's shape, dtype and bytes after the trace, to tell whether it was written
    since: bit for bit (a NaN written over the same NaN is no change)."""

    _SMALL = 1 << 16  # bytes: compared as a bytes object (one memcmp, no array made)

    def __init__(self, array):
        self.shape, self.dtype = array.shape, array.dtype
        self.bytes = (array.tobytes() if array.nbytes <= self._SMALL
                      else np.ascontiguousarray(array).copy().reshape(-1).view(np.uint8))

    def holds(self, array):
        if array.shape != self.shape or array.dtype != self.dtype:
            return False
        if type(self.bytes) is bytes:
            return array.tobytes() == self.bytes
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        return bool(np.array_equal(array.reshape(-1).view(np.uint8), self.bytes))


def _compile(paths, arrays):
    """One function of the checks: each path leads to its object, each list and dict on
    the way has its length, each array holds the numbers it held after the trace; False
    where one fails (or a step is gone)."""
    source = Source()

    def expr(steps):
        if type(steps) is str:
            return steps
        if steps[0] == "const":
            return source.constant(steps[1])
        return expr(steps[0]) + steps[1]

    checks, counted = [], set()
    for steps, value, lengths in paths + arrays:
        for where, length in lengths:
            text = expr(where)
            if text not in counted:
                counted.add(text)
                checks.append(f"len({text}) == {length}")
        name = source.constant(value)
        checks.append(f"{expr(steps)} is {name}")
        if type(value) is np.ndarray:
            checks.append(f"{source.constant(_Kept(value))}.holds({name})")
    source.lines.append("def check(args, kwargs):")
    source.lines.append("    try:")
    source.lines.append("        return (" + "\n                and ".join(checks) + ")")
    source.lines.append("    except Exception:  # (an attribute, an item gone)")
    source.lines.append("        return False")
    return source.build("check", "<cr.jit check of state>")
