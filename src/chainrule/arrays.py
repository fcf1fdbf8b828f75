"""The array namespace the rule table computes with: ``from chainrule import arrays as xp``.

A rule's forward function calls array functions through this one name: ``xp.exp(x)``,
``xp.matmul(a, b)``, ``xp.linalg.solve(a, b)``. Today they are NumPy's, under the Array
API standard's names where NumPy's differ (``xp.concat``, ``xp.permute_dims``,
``xp.pow``, ``xp.acos``), so that another array library can stand where NumPy stands
without a rule changing. An array type that is not an ndarray takes part the way NumPy
lets it: through ``__array_ufunc__`` and ``__array_function__``. That is how cr.jit's
traced array records a function's calls: the rule table imports nothing of cr.jit.

A rule does a few things that are not array functions. They go through the calls below,
which an array type registered in ``ARRAYS`` (cr.jit's traced array) implements its own
way, by a method of the same name with a leading underscore:

    as_array(x, dtype)          np.asarray; a registered array stays what it is
    to_float(x)                 float(x), likewise
    require(ok, error, *args)   raise ``error(*args)`` unless ``ok``: a check of data
    branch(condition, what)     ``bool(condition)``, for a rule that picks its formula
                                by its data (``what`` says what was chosen)
    call(function, *args)       ``function(*args)``, for a Python function NumPy cannot
                                hand to another array type (``np.vectorize``)
    owned_by(array, like)       a new array, made a value of ``like``'s kind, so that
                                values of that kind can be written into it

``numpy_backed(a)`` tells a speed trick written in NumPy's own terms where it may run;
``value_now(a)`` gives, while cr.jit traces, what a traced array holds at that call, for
work done once for every call (a sparsity pattern).

Two more serve the code around the rules (layers, optimizers, the Tensor): ``draw``, a
random draw, and ``touch``, said before chainrule changes an object outside any array
call. Both reach the *recorder* this thread runs in, if any (``recorder()``): cr.jit
sets it while it traces a function.
"""

import threading
from contextlib import contextmanager

import numpy as np
from numpy import fft, linalg  # noqa: F401

# Every NumPy function, type and constant, under NumPy's own name. Not its submodules
# (numpy.testing, numpy.random...): NumPy loads those when first asked, and a star
# import would ask for every one (20 ms at import); linalg and fft, which rules use, are above.
globals().update({name: getattr(np, name) for name in np.__all__
                  if name not in getattr(np, "__numpy_submodules__", ())})

# The Array API standard's names, where NumPy before 2.0 has only its own.
concat = getattr(np, "concat", np.concatenate)
permute_dims = getattr(np, "permute_dims", np.transpose)
pow = getattr(np, "pow", np.power)  # noqa: A001
acos, asin, atan = np.arccos, np.arcsin, np.arctan
acosh, asinh, atanh = np.arccosh, np.arcsinh, np.arctanh
atan2 = np.arctan2
# A window view without a copy (im2col for the convolutions); NumPy hands it to an
# array type's __array_function__, so cr.jit records it like any function.
sliding_window_view = np.lib.stride_tricks.sliding_window_view

# The array types the engine computes on: NumPy's, and types that stand in for an ndarray
# (chainrule.jit.traced adds its traced array).
ARRAYS = {np.ndarray}


def as_array(x, dtype=None):
    """``np.asarray(x, dtype)``, where a registered array type (a traced array) stays
    what it is: the engine's own conversions take part in a program like any call."""
    if type(x) is not np.ndarray and type(x) in ARRAYS:
        return x._as_array(dtype)
    return np.asarray(x, dtype)


def numpy_backed(a):
    """Whether ``a`` is NumPy's array, or a registered array type standing for one
    (cr.jit's traced array, whose value at each run is NumPy's). Not another library's
    array (``ForeignArray``), nor a transform's tracer. A speed trick written in NumPy's
    own terms (a view written into, an ``order=``) runs only on these, eagerly and under
    cr.jit alike, so that a replay runs the very calls the eager run did."""
    return type(a) is np.ndarray or (type(a) in ARRAYS
                                     and type(getattr(a, "_value", None)) is np.ndarray)


def value_now(x):
    """The NumPy array x holds at this moment: x itself for NumPy's array; for a
    registered array type standing for one (cr.jit's traced array), its value at the call
    being traced. For work done once, while tracing, whose result must hold for every
    call (a sparsity pattern found for all inputs): never for a number of the program."""
    if type(x) is not np.ndarray and type(x) in ARRAYS and numpy_backed(x):
        return x._value
    return np.asarray(x)


def to_float(x):
    """``float(x)``, where a registered array type stays what it is (a traced array: a
    float at each run of the program)."""
    if type(x) is not np.ndarray and type(x) in ARRAYS:
        return x._convert(float)
    return float(x)


def require(ok, error, *args):
    """Raise ``error(*args)`` unless ``ok``: a check of data (labels in range, say)."""
    if type(ok) in ARRAYS and type(ok) is not np.ndarray:
        return ok._require(error, *args)
    if not ok:
        raise error(*args)
    return None


def branch(condition, what):
    """``bool(condition)``, for a rule that picks a formula by its data."""
    if type(condition) in ARRAYS and type(condition) is not np.ndarray:
        return condition._branch(what)
    return bool(condition)


def call(function, *args):
    """``function(*args)``: a Python function applied to arrays, which NumPy cannot hand
    to another array type itself."""
    for a in args:
        if type(a) in ARRAYS and type(a) is not np.ndarray:
            return a._call(function, args)
    return function(*args)


def holds_traced(items):
    """Whether a (nested) list holds an array of a registered type other than NumPy's
    (cr.jit's traced array), which NumPy's np.array would ask for its numbers."""
    for x in items:  # (a loop: this namespace's ``any`` is NumPy's)
        if holds_traced(x) if type(x) in (list, tuple) else (
                type(x) in ARRAYS and type(x) is not np.ndarray):
            return True
    return False


def stacked_list(items):
    """A nested list as one array, by np.stack, which a traced array among the items
    records (np.array cannot: it converts each item itself)."""
    return np.stack([stacked_list(x) if type(x) in (list, tuple) else x for x in items])


def owned_by(array, like):
    """``array`` (a new NumPy array), as a value of the kind ``like`` is: itself, unless
    ``like`` is a registered array type (then that type makes it one of its values)."""
    if type(like) in ARRAYS and type(like) is not np.ndarray:
        return like._owned(array)
    return array


# ---------------------------------------------------------------------------------------
# The recorder this thread runs in (cr.jit), for what is not a call on an array
# ---------------------------------------------------------------------------------------

class _Thread(threading.local):
    recorder = None


_thread = _Thread()
# How many recorders are open, in any thread: hot paths (a Tensor's array, a module's
# call) look at their thread's recorder only while one is (a plain read is cheaper).
recorders_open = [0]


def recorder():
    """The recorder this thread runs in (a cr.jit trace), or None."""
    return _thread.recorder


def set_recorder(new):
    """Make ``new`` (or None) this thread's recorder; returns the one it replaces."""
    previous, _thread.recorder = _thread.recorder, new
    return previous


class _StandIns(threading.local):
    hooks: tuple = ()


_stand_ins = _StandIns()


@contextmanager
def standing_in(hook):
    """While it is open, the recorder computes a call on traced values for each of
    which ``hook(traced)`` gives numbers (not None) on those numbers, and does not record
    it: a solver replaying inside a program (``transforms/solver_numbers.py``) reruns a
    function that closes over traced values, with each call's numbers of them, after
    the trace has ended. A hook that gives None sees each traced value a call reads."""
    _stand_ins.hooks += (hook,)
    try:
        yield
    finally:
        _stand_ins.hooks = _stand_ins.hooks[:-1]


def stand_in_hook():
    """The innermost ``standing_in`` hook of this thread, or None."""
    hooks = _stand_ins.hooks
    return hooks[-1] if hooks else None


def draw(sample, *args, **kwargs):
    """``sample(*args, **kwargs)``, a random generator's method. A recorder records the
    draw as a call, so that each run of its program draws new numbers."""
    rec = _thread.recorder
    if rec is None:
        return sample(*args, **kwargs)
    return rec.draw(sample, args, kwargs)


def touch(obj):
    """Said before chainrule changes ``obj`` (a tensor, a module, an optimizer) outside
    any array call, such as ``zero_grad`` setting gradients to None: a recorder adopts
    what ``obj`` held first, as an input of its program."""
    rec = _thread.recorder
    if rec is not None:
        rec.touch(obj)


# ---------------------------------------------------------------------------------------
# Freed memory kept for reuse
# ---------------------------------------------------------------------------------------

def _keep_freed_memory(nbytes: int = 2 << 20) -> None:
    """Allocate and free one block of ``nbytes``, so that glibc's malloc keeps freed
    blocks of up to that size for reuse instead of handing them back to the system.

    A backward pass or a Jacobian makes and drops many arrays of a few tens of KB (a
    (100, 100) float64 is 80 KB). glibc gives memory back once 128 KB lie free at the
    top of its heap, and takes it again, page by page, at the next call: a page fault
    for every 4 KB, which doubled a Hessian of 100 inputs (0.98 ms against 0.49 ms).
    glibc moves that limit itself after the first large block it frees (to twice the
    block's size, and blocks below the size then come from the heap); freeing one block
    here puts it where a program that once freed a 2 MB array would be. The cost is at
    most 4 MB of freed memory the process keeps. Where malloc is not glibc's, or its
    limits were set by ``MALLOC_TRIM_THRESHOLD_`` and the like, nothing changes.
    ``tests/test_freed_memory.py`` counts the page faults."""
    np.empty(nbytes, np.uint8)


_keep_freed_memory()
