"""A Module's state apart from the walk over its attributes: copying a state dict into
its parameters and buffers, checking what ``register_buffer`` is given, and casting
(``Module.to``, ``double``, ``float``). Module's methods call these; of them only the
loader's report, ``IncompatibleKeys``, is public (as ``cr.nn.IncompatibleKeys``).
"""

from collections import namedtuple

import numpy as np

from .. import arrays as xp
from ..scalar.value import Value
from ..tensor import Tensor
from ..methods.torch_names import _is_dtype_name

__all__ = ["IncompatibleKeys"]


def same(array):
    return array


class BufferSlot:
    """A module's buffer seen as a parameter is by the loaders: ``data`` to read and to
    replace, ``dtype`` to cast a loaded array to. A Tensor buffer keeps its identity
    (its ``.data`` is replaced), as a parameter does."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    @property
    def dtype(self):
        value = getattr(self.module, self.name)
        return np.dtype(value.dtype) if hasattr(value, "dtype") else np.result_type(value)

    @property
    def data(self):
        value = getattr(self.module, self.name)
        return value.data if isinstance(value, Tensor) else value

    @data.setter
    def data(self, array):
        value = getattr(self.module, self.name)
        if isinstance(value, Tensor):
            value.data = array
        else:
            setattr(self.module, self.name, array)


def as_array(value):
    """An ndarray of a state entry: an ndarray, a number, a Tensor, or a PyTorch tensor
    (read through ``.detach().cpu().numpy()``, without importing torch)."""
    if isinstance(value, Tensor):
        return np.asarray(value.data)
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return np.asarray(value.detach().cpu().numpy())
    return np.asarray(value)


def load(own, state, strict, op, owner):
    """Copy ``state`` into ``own`` (name -> (parameter, expected shape, convert or
    None)); every check before any change. Returns (missing, unexpected)."""
    if not hasattr(state, "keys") or not hasattr(state, "__getitem__"):
        raise TypeError(f"{op}: expected a dict of name -> array, got "
                        f"{type(state).__name__}")
    missing = [name for name in own if name not in state]
    unexpected = [name for name in state.keys() if name not in own]
    if strict and (missing or unexpected):
        raise ValueError(f"{op}: {owner} does not match the state: missing "
                         f"{missing or 'nothing'}, unexpected {unexpected or 'nothing'} "
                         f"(strict=False loads the names that match)")
    arrays = {}
    for name, (p, shape, _) in own.items():
        if name not in state:
            continue
        array = as_array(state[name])
        if array.shape != shape:
            raise ValueError(f"{op}: {name!r} has shape {shape} in the model but "
                             f"{array.shape} in the state")
        arrays[name] = array
    for name, array in arrays.items():
        p, _, convert = own[name]
        if convert is not None:
            array = convert(array)
        if isinstance(p, Value):
            p.data = float(array)
        else:
            p.data = np.array(array, dtype=p.dtype, copy=True)
    return missing, unexpected


def check_buffer(module, name, tensor, parameter_type):
    """PyTorch's checks of ``register_buffer(name, tensor)``, with its exception types
    (a bad name is a KeyError), each message naming the module's class and the name."""
    where = f"{type(module).__name__}.register_buffer"
    if not isinstance(name, str):
        raise TypeError(f"{where}: a buffer's name must be a string, got "
                        f"{type(name).__name__} {name!r}")
    if "." in name:
        raise KeyError(f"{where}: a buffer's name cannot contain '.', got {name!r}")
    if not name:
        raise KeyError(f"{where}: a buffer's name cannot be the empty string")
    if name not in module._buffer_names and hasattr(module, name):
        raise KeyError(f"{where}: attribute {name!r} already exists (a parameter, a "
                       f"submodule, a method or a setting); a buffer needs a new name")
    if isinstance(tensor, parameter_type):
        # An attribute holding a Parameter is a parameter here (listed by
        # parameters(), given to the optimizer): it cannot also be a buffer.
        raise TypeError(f"{where}: {name!r} is given a Parameter, which parameters() "
                        f"lists; register a plain Tensor (its .detach()) as a buffer")
    if tensor is not None and not isinstance(tensor, (Tensor, np.ndarray)):
        raise TypeError(f"{where}: cannot make a {type(tensor).__name__} the buffer "
                        f"{name!r}; expected a Tensor, an ndarray or None")


def _is_torch_device(arg):
    return isinstance(getattr(arg, "type", None), str) and hasattr(arg, "index")


def parse_to(owner, args, kwargs):
    """The dtype that ``Module.to(*args, **kwargs)`` asks for (None: none), after PyTorch's
    signatures: ``to(device, dtype)``, ``to(dtype)``, ``to(tensor)``, with ``device=``,
    ``dtype=`` and ``non_blocking=`` as keywords. A device other than the CPU, or a
    dtype neither floating point nor complex (as PyTorch), is refused."""
    where = f"{owner}.to"
    unknown = sorted(set(kwargs) - {"device", "dtype", "non_blocking"})
    if unknown:
        raise TypeError(f"{where}: unexpected keyword arguments {unknown}; expected "
                        f"device=, dtype= or non_blocking=")
    if len(args) > 3:
        raise TypeError(f"{where}: expected at most (device, dtype, non_blocking), got "
                        f"{len(args)} positional arguments")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for arg in args:
        if arg is None or isinstance(arg, (bool, np.bool_)):  # (non_blocking: no copy
            continue                                          # here is asynchronous)
        if (isinstance(arg, str) and not _is_dtype_name(arg)) or _is_torch_device(arg):
            device = arg
        elif not isinstance(arg, type) and hasattr(arg, "shape") and hasattr(arg, "dtype"):
            dtype = arg.dtype  # another tensor's (it lives on the CPU too)
        else:
            dtype = arg
    if device is not None:
        kind = device.type if _is_torch_device(device) else str(device).split(":")[0]
        if kind != "cpu":
            raise ValueError(f"{where}: chainrule computes on the CPU, got device "
                             f"{str(device)!r}")
    if dtype is None:
        return None
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{where}: expected a device ('cpu') or a dtype, got "
                        f"{type(dtype).__name__} {dtype!r}") from None
    if dtype.kind not in "fc":
        raise TypeError(f"{where}: a module casts to floating point or complex dtypes "
                        f"only, got {dtype}")
    return dtype


def cast(value, dtype, kinds):
    """``value`` (a Tensor, an ndarray, a Value or anything else) cast to ``dtype`` if
    its dtype's kind is among ``kinds`` ("f" for float, "fc" for complex too): a Tensor
    in place (data and gradient, so a Parameter stays the one an optimizer holds), an
    ndarray as a new array. A complex value cast to a real dtype keeps its real part,
    as PyTorch's does."""
    if isinstance(value, Value) or not hasattr(value, "dtype"):
        return value
    current = np.dtype(value.dtype)
    if current.kind not in kinds or current == dtype:
        return value
    if isinstance(value, Tensor):
        xp.touch(value)  # (cr.jit: its array becomes an input first)
        value.data = _cast_array(value.data, dtype)
        if value.grad is not None:
            value.grad = _cast_array(value.grad, dtype)
        return value
    return _cast_array(value, dtype)


def _cast_array(array, dtype):
    if np.iscomplexobj(array) and dtype.kind != "c":
        array = np.real(array)
    return np.asarray(array).astype(dtype)


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict(state, strict=False)`` did not load, as PyTorch reports it:
    the model's names absent from the state, and the state's names the model lacks.

    >>> cr.nn.IncompatibleKeys(missing_keys=["bias"], unexpected_keys=[])
    IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
    >>> cr.nn.IncompatibleKeys([], [])
    <All keys matched successfully>
    """

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()
