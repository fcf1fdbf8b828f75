"""The state a cr.jit program reads and writes besides its arguments, piece by piece.

Two kinds of piece:

* a tensor (``TensorState``): its array and gradient are inputs of the program; what
  the function left in them is written back;
* any object that says what it holds through the *state protocol* (``ObjectState``),
  as a module (its train/eval mode) and an optimizer (its learning rates, parameters
  and buffers) do. cr.jit knows no class of them, as JAX's pytrees know nothing of
  the libraries that register them:

  ``obj._jit_state_() -> (arrays, mode)``
      ``arrays``: a dict of what the object holds that a program reads and may
      replace. Its keys are strings, ints, or tuples of them (the listing shows
      ``("lr", 0)`` as ``lr0``); its values are NumPy arrays and numbers (inputs of
      the program, read at every call), Tensors (carried as tensors), or any other
      object (part of the program as itself: another one there traces again).
      ``mode``: what the program holds for besides (flags, hyperparameters), compared
      with ``==``: a call in another mode traces again.
  ``obj._jit_load_(arrays)``
      Put these values (a dict with some of the keys ``_jit_state_`` gave, or new
      ones the function created) in place: traced values while tracing, each run's
      new values after it.
  ``obj._jit_parts_()`` (optional)
      Other objects with the protocol that are parts of this one (a module's
      submodules): state as well, found with it, each checked at every call.

Each piece knows how to read itself into a run's inputs, which of the run's outputs
are its new values, and how to write them back (``jitted.py`` decides when a program
can be replayed and finds the pieces as the trace touches them).
"""

import numpy as np

from .errors import values_refused
from .traced import Traced
from ..scalar.value import Value
from ..tensor import Tensor
from ..tensor_data import foreign, users

__all__ = ["TensorState", "ObjectState", "ByIdentity", "carries_state", "grad_key",
           "untraced", "output_index", "kind", "key_name"]


def grad_key(grad):
    if grad is None:
        return None
    if type(grad) is np.ndarray:
        return (grad.shape, grad.dtype)
    return (np.shape(grad), getattr(grad, "dtype", None))


def output_index(outputs, traced):
    for i, known in enumerate(outputs):
        if known is traced:
            return i
    outputs.append(traced)
    return len(outputs) - 1


def untraced(x):
    return x._value if type(x) is Traced else x


class TensorState:
    """A tensor the program reads: its array (and gradient, if it has one) are inputs;
    what the function left in them is written back."""

    def __init__(self, tensor, trace):
        self.tensor = tensor
        self.trace = trace
        data, grad = tensor._data, tensor._grad
        self.key = (data.shape, data.dtype, tensor.requires_grad, grad_key(grad))
        self.initial_grad = grad
        # another library's array (torch's, Dask's): the tensor holds it wrapped, its
        # gradient as the library's own (tensor_data.py); both inputs all the same
        self.data_type, self.lib = type(data), getattr(data, "_lib", None)
        traced = trace.input(data)
        tensor._data = traced
        self.data_slot = traced._slot
        self.grad_slot = None
        if self.lib is not None and grad is not None:
            grad = self.lib.adopt(grad)
        if isinstance(grad, np.ndarray) or foreign(grad):
            traced_grad = trace.input(grad)
            tensor._grad = traced_grad
            self.grad_slot = traced_grad._slot
        # The listing's name (a parameter's, found by the end of the trace: jitted.py)
        self.name = self.names = None

    def named(self, name):
        self.name = name
        self.names = {self.data_slot: name}
        if self.grad_slot is not None:
            self.names[self.grad_slot] = f"{name}.grad"

    def read(self, values):
        """Append this call's inputs; False if the tensor no longer fits the program."""
        t = self.tensor
        data, grad = t._data, t._grad
        if (type(data) is not self.data_type or
                (data.shape, data.dtype, t.requires_grad, grad_key(grad)) != self.key):
            return False
        if self.lib is not None:
            if data._lib is not self.lib:
                return False
            if grad is not None:
                grad = self.lib.adopt(grad)
        values.append(data)
        if self.grad_slot is not None:
            values.append(grad)
        return True

    def writes(self, outputs):
        """[(what, where)]: "data" or "grad", and an output index or ("const", v)."""
        found = []
        t = self.tensor
        if type(t._data) is Traced and t._data._slot != self.data_slot:
            found.append(("data", output_index(outputs, t._data)))
        grad = t._grad
        traced = self.trace.lookup(grad)
        if traced is not None:
            if traced._slot != self.grad_slot:
                found.append(("grad", output_index(outputs, traced)))
        elif grad is not self.initial_grad:  # None, or a constant
            found.append(("grad", ("const", grad)))
        return found

    def describe(self, what):
        return self.name if what == "data" else f"{self.name}.grad"

    def source(self, what):
        """The input slot that ``what`` was read from (a new value may replace it in
        place): the data, not the gradient (a gradient kept from an earlier step keeps
        its values, as eagerly)."""
        return self.data_slot if what == "data" else None

    def write_all(self, values):
        """Write {what: value} back: the data as an optimizer does (a new version),
        the gradient through its setter."""
        for what, value in values.items():
            if what == "data":
                self.tensor.data = value
            else:
                self.tensor.grad = value

    def restore(self):
        t = self.tensor
        t._data = untraced(t._data)
        t._grad = users(untraced(t._grad))  # (another library's: its own array)


# ---------------------------------------------------------------------------------------
# The state protocol
# ---------------------------------------------------------------------------------------

def carries_state(obj):
    """Whether ``obj`` says what it holds through ``_jit_state_`` (looked up on its
    class, as Python looks up its own protocols)."""
    return callable(getattr(type(obj), "_jit_state_", None))


class ByIdentity:
    """An object in a cache key, compared by identity: a value a replay needs to find
    again itself, or a static argument that cannot be hashed (a module, an optimizer, a
    list held as config)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return type(other) is ByIdentity and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


_NUMBERS = (float, int, complex)


def kind(value):
    """What a replay needs of a value an object holds: an array's shape and dtype, a
    number's type, anything else itself."""
    t = type(value)
    if t is np.ndarray:
        return (value.shape, value.dtype)
    if foreign(value):  # another library's array (an optimizer's moments on torch)
        return (value.shape, value.dtype, value._lib)
    if t in _NUMBERS or isinstance(value, np.generic):
        return t
    return ByIdentity(value)


def is_input(k):
    """Whether a value of this kind is an input of the program (arrays, numbers)."""
    return type(k) is not ByIdentity


def key_name(key):
    """How the listing names a key: ``("lr", 0)`` as lr0, ``("state", 1, "step")`` as
    state1.step."""
    if type(key) is not tuple:
        return str(key)
    name = ""
    for part in key:
        name += str(part) if not name or type(part) is int else f".{part}"
    return name


def _asked(obj):
    """``obj._jit_state_()``, checked: (a dict of arrays, a mode)."""
    owner = type(obj).__name__
    answer = obj._jit_state_()
    if not (type(answer) is tuple and len(answer) == 2 and type(answer[0]) is dict):
        raise TypeError(f"cr.jit: {owner}._jit_state_() must return (arrays, mode), a "
                        f"dict and a value; got {type(answer).__name__} {answer!r:.60}")
    arrays, mode = answer
    for key in arrays:
        parts = key if type(key) is tuple else (key,)
        if not parts or not all(type(p) in (str, int) for p in parts):
            raise TypeError(f"cr.jit: the keys of {owner}._jit_state_()'s arrays must be "
                            f"strings, ints or tuples of them; got {key!r}")
    try:
        comparable = (mode == mode) is True
    except Exception:
        comparable = False
    if not comparable:
        raise TypeError(f"cr.jit: the mode {owner}._jit_state_() returns must compare "
                        f"with == (numbers, strings, tuples of them); got "
                        f"{type(mode).__name__}")
    if not callable(getattr(type(obj), "_jit_load_", None)):
        raise TypeError(f"cr.jit: {owner} defines _jit_state_() but no _jit_load_(arrays) "
                        f"to put new values back")
    return arrays, mode


class ObjectState:
    """An object that says what it holds (``_jit_state_``): its arrays and numbers are
    inputs, its Tensors are carried as tensors, its mode and other values must be found
    again at each call; new values are put back through ``_jit_load_``."""

    def __init__(self, obj, trace, adopt):
        arrays, self.mode = _asked(obj)
        self.obj, self.trace = obj, trace
        self.kinds = {}   # key -> kind(value) when traced
        self.inputs = {}  # key -> the traced input that stands for it
        self.names = {}   # slot -> a reader's name
        for key, value in arrays.items():
            if isinstance(value, Value):  # (an optimizer of a scalar model)
                raise values_refused()
            self.kinds[key] = kind(value)
            if isinstance(value, Tensor):
                adopt(value)  # first: its inputs come before this object's
        for key, value in arrays.items():
            if is_input(self.kinds[key]):
                traced = trace.input(value)
                self.inputs[key] = traced
                self.names[traced._slot] = key_name(key)
        if self.inputs:
            obj._jit_load_(dict(self.inputs))
        parts = getattr(obj, "_jit_parts_", None)
        for part in parts() if callable(parts) else ():  # (a module's submodules)
            adopt(part)

    def read(self, values):
        """Append this call's inputs; False if the object no longer fits the program
        (another mode, other keys, values of other kinds)."""
        arrays, mode = self.obj._jit_state_()
        if not (mode == self.mode) or arrays.keys() != self.kinds.keys():
            return False
        for key, k in self.kinds.items():
            if not (kind(arrays[key]) == k):
                return False
        for key in self.inputs:
            values.append(arrays[key])
        return True

    def writes(self, outputs):
        """[(key, where)]: where is an output index or ("const", value)."""
        found = []
        arrays, _ = _asked(self.obj)
        for key, value in arrays.items():
            traced = self.trace.lookup(value)
            if traced is not None:
                if self.inputs.get(key) is not traced:
                    found.append((key, output_index(outputs, traced)))
            elif key in self.inputs or key not in self.kinds or \
                    not (kind(value) == self.kinds[key]):
                found.append((key, ("const", value)))
        return found

    def describe(self, key):
        return key_name(key)

    def source(self, key):
        traced = self.inputs.get(key)
        return None if traced is None else traced._slot

    def write_all(self, values):
        self.obj._jit_load_(values)

    def restore(self):
        arrays = self.obj._jit_state_()[0]
        real = {k: v._value for k, v in arrays.items() if type(v) is Traced}
        if real:
            self.obj._jit_load_(real)
