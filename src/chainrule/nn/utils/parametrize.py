"""torch's ``nn.utils.parametrize``: a layer's tensor computed from other parameters each
time it is read, ``module.weight = f(module.parametrizations.weight.original)``.

``register_parametrization(module, "weight", f)`` moves the Parameter ``weight`` to
``module.parametrizations.weight.original`` (or, where ``f`` has a ``right_inverse``,
stores what that gives: ``original0``, ``original1``... for a tuple) and makes
``weight`` a property of the module's class (a subclass named ``Parametrized<Name>``,
as torch's) that applies ``f`` (then any later parametrization of the same tensor).
The gradient reaches the originals through ``f``, whatever reads ``weight``;
``state_dict()`` holds torch's keys (``parametrizations.weight.original``), so a torch
checkpoint of a parametrized model loads as it is.

>>> import chainrule.nn.utils.parametrize as P
>>> class Symmetric(cr.nn.Module):
...     def forward(self, X):
...         return cr.triu(X) + cr.transpose(cr.triu(X, 1))
>>> layer = cr.nn.Linear(3, 3, rng=0)
>>> P.register_parametrization(layer, "weight", Symmetric())
ParametrizedLinear(
  in_features=3, out_features=3, bias=True
  (parametrizations): ModuleDict(
    (weight): ParametrizationList(
      (0): Symmetric()
    )
  )
)
>>> bool(np.allclose(layer.weight.data, layer.weight.data.T))
True
"""

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...modes import no_grad
from ...primitive import raw
from ...tensor import Tensor
from ..containers import ModuleDict
from ..module import Module, Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized",
           "cached", "type_before_parametrizations", "ParametrizationList"]

# (id(module), name) -> the tensor computed inside ``cached()``
_cache: dict[tuple[int, str], Any] = {}
_caching = [0]


class ParametrizationList(Module):
    """The parametrizations of one tensor, applied in order to the originals it holds
    (``original``, or ``original0``, ``original1``... where the first parametrization's
    ``right_inverse`` gave a tuple), as torch's.

    >>> holder = ParametrizationList([cr.nn.Identity()], cr.nn.Parameter(np.ones(2)))
    >>> holder().data.tolist()
    [1.0, 1.0]
    """

    def __init__(self, modules: list, original: Any, unsafe: bool = False) -> None:
        self._items = list(modules)
        self.unsafe = unsafe
        if isinstance(original, tuple):
            self.is_tensor = False
            self.ntensors = len(original)
            for i, value in enumerate(original):
                setattr(self, f"original{i}", _as_parameter(value))
        else:
            self.is_tensor, self.ntensors = True, 1
            self.original = _as_parameter(original)

    def _entries(self):
        if self.is_tensor:
            yield "original", self.original
        else:
            for i in range(self.ntensors):
                yield f"original{i}", getattr(self, f"original{i}")
        for i, module in enumerate(self._items):
            yield str(i), module

    def __getitem__(self, index: int) -> Module:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items)

    def append(self, module: Module) -> None:
        """One more parametrization, applied after the others."""
        self._items.append(module)

    def _originals(self):
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self) -> Any:
        """The tensor: the parametrizations applied in order to the originals."""
        x = self._items[0](*self._originals())
        for module in self._items[1:]:
            x = module(x)
        return x

    def right_inverse(self, value: Any) -> None:
        """Store ``value`` as the tensor: through each ``right_inverse`` in reverse
        order into the originals, outside the graph."""
        with no_grad():
            for module in reversed(self._items):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            values = value if isinstance(value, tuple) else (value,)
            if len(values) != self.ntensors:
                raise ValueError(f"ParametrizationList: right_inverse gave {len(values)} "
                                 f"tensors, expected {self.ntensors}")
            for original, new in zip(self._originals(), values):
                new = np.asarray(raw(new))
                if new.shape != original.shape and not self.unsafe:
                    raise ValueError(f"ParametrizationList: right_inverse gave shape "
                                     f"{new.shape}, expected the original's "
                                     f"{original.shape}")
                original.data = new.astype(original.dtype)   # (rebound, as an optimizer does)

    def extra_repr(self) -> str:
        return ""


def _as_parameter(value):
    if isinstance(value, Parameter):
        return value
    array = np.array(raw(value))
    return Parameter(array, dtype=array.dtype if array.dtype.kind in "fc" else None)


def _parametrized_class(cls):
    """A subclass whose parametrized tensors are properties: one for each module (its
    properties are that module's), as torch's."""
    return type(f"Parametrized{cls.__name__}", (cls,), {})


def _property(name):
    def get(module):
        key = (id(module), name)
        if _caching[0] and key in _cache:
            return _cache[key]
        value = module.parametrizations[name]()
        if _caching[0]:
            _cache[key] = value
        return value

    def put(module, value):
        module.parametrizations[name].right_inverse(value)
    return property(get, put)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (of ``tensor_name``, if given).

    >>> is_parametrized(cr.nn.Linear(2, 2, rng=0))
    False
    """
    holders = vars(module).get("parametrizations")
    if not isinstance(holders, ModuleDict):
        return False
    return tensor_name is None or tensor_name in holders.keys()


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered.

    >>> type_before_parametrizations(cr.nn.Linear(2, 2, rng=0)).__name__
    'Linear'
    """
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` ``parametrization`` of what it was (see the module's
    docstring); a second registration on the same tensor applies after the first.
    Returns the module.

    >>> layer = cr.nn.Linear(2, 2, rng=0)
    >>> class Doubled(cr.nn.Module):
    ...     def forward(self, W):
    ...         return 2 * W
    >>> original = layer.weight.data.copy()
    >>> bool(np.allclose(register_parametrization(layer, "weight", Doubled()).weight.data,
    ...                  2 * original))
    True
    """
    if not isinstance(parametrization, Module):
        raise ValueError(f"register_parametrization: the parametrization must be a Module, "
                         f"got {type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        holder = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            new = parametrization(current)
            if tuple(np.shape(raw(new))) != tuple(np.shape(raw(current))):
                raise ValueError(f"register_parametrization: {type(parametrization).__name__}"
                                 f" changes {tensor_name}'s shape from "
                                 f"{np.shape(raw(current))} to {np.shape(raw(new))}; pass "
                                 f"unsafe=True to allow it")
        holder.append(parametrization)
        return module
    original = vars(module).get(tensor_name)
    if not isinstance(original, (Tensor, np.ndarray)):
        raise ValueError(f"register_parametrization: {type(module).__name__} has no "
                         f"parameter or buffer {tensor_name!r} to parametrize")
    if tensor_name in module._buffer_names:
        raise ValueError(f"register_parametrization: {tensor_name!r} is a buffer of "
                         f"{type(module).__name__}; chainrule parametrizes parameters")
    stored = original
    if hasattr(parametrization, "right_inverse"):
        with no_grad():
            stored = parametrization.right_inverse(original)
    if not unsafe:
        check = parametrization(*(stored if isinstance(stored, tuple) else (stored,)))
        if tuple(np.shape(raw(check))) != tuple(original.shape):
            raise ValueError(f"register_parametrization: {type(parametrization).__name__} "
                             f"gives shape {np.shape(raw(check))} for {tensor_name} of "
                             f"shape {original.shape}; pass unsafe=True to allow it")
    if isinstance(stored, Tensor) and stored is not original and not isinstance(
            stored, Parameter):
        stored = stored.detach()
    if stored is not original and isinstance(original, Parameter) \
            and not isinstance(stored, tuple) and np.shape(raw(stored)) == original.shape:
        # the same Parameter keeps its place in an optimizer
        original.data = np.asarray(raw(stored)).astype(original.dtype)
        stored = original
    holder = ParametrizationList([parametrization], stored, unsafe)
    del module.__dict__[tensor_name]
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
        module.__class__ = _parametrized_class(type(module))
    module.parametrizations[tensor_name] = holder
    setattr(type(module), tensor_name, _property(tensor_name))
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` for ``tensor_name``: the tensor becomes a plain
    Parameter again, holding its current (parametrized) value with
    ``leave_parametrized``, else its original. Returns the module.

    >>> layer = cr.nn.Linear(2, 2, rng=0)
    >>> class Doubled(cr.nn.Module):
    ...     def forward(self, W):
    ...         return 2 * W
    >>> _ = register_parametrization(layer, "weight", Doubled())
    >>> type(remove_parametrizations(layer, "weight")).__name__
    'Linear'
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"remove_parametrizations: {type(module).__name__} has no "
                         f"parametrization on {tensor_name!r}")
    holder = module.parametrizations[tensor_name]
    if leave_parametrized:
        with no_grad():
            value = np.array(raw(getattr(module, tensor_name)))
        if holder.is_tensor and holder.original.shape == value.shape:
            holder.original.data = value.astype(holder.original.dtype)
            restored = holder.original
        else:
            restored = Parameter(value, dtype=value.dtype)
    else:
        if not holder.is_tensor:
            raise ValueError(f"remove_parametrizations: {tensor_name!r} is stored as "
                             f"{holder.ntensors} tensors; only leave_parametrized=True "
                             f"can give it back as one")
        restored = holder.original
    cls = type(module)
    delattr(cls, tensor_name)
    del module.parametrizations[tensor_name]
    module.__dict__[tensor_name] = restored
    if not list(module.parametrizations.keys()):
        del module.__dict__["parametrizations"]
        module.__class__ = cls.__bases__[0]
    return module


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside ``with cached():`` a parametrized tensor is computed once, at its first
    read, and that value is read again after, as torch's (for a forward pass that reads
    a weight many times, as a recurrent layer does).

    >>> with cached():
    ...     pass
    """
    _caching[0] += 1
    try:
        yield
    finally:
        _caching[0] -= 1
        if not _caching[0]:
            _cache.clear()
