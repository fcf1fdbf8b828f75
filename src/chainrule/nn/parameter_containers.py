"""ParameterList and ParameterDict: PyTorch's containers of parameters (ModuleList and
ModuleDict, its containers of submodules, are in containers.py).

A plain list or dict of Parameters held in an attribute is registered too; these add
PyTorch's methods, its conversion of Tensors and arrays into Parameters, and its repr.
"""

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from numpy.typing import ArrayLike

from ..tensor import Tensor
from .containers import KeyedEntries
from .module import Module, Parameter

__all__ = ["ParameterList", "ParameterDict"]


def _as_parameter(owner, key, value):
    """A Parameter of ``value``, as torch's containers make one: a Parameter stays itself
    (so an optimizer holding it still steps it), a Tensor or an array is copied in."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Module) or value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{owner}: expected a Parameter, a Tensor or an array for "
                        f"{key!r}, got {type(value).__name__}")
    return Parameter(value.data if isinstance(value, Tensor) else value)


def _parameters_repr(container, pairs):
    """PyTorch's picture of a container of parameters: one line each, dtype and size."""
    lines = [f"  ({key}): Parameter containing: [{p.dtype} of size "
             f"{'x'.join(map(str, p.shape)) or '()'}]" for key, p in pairs]
    name = type(container).__name__
    return f"{name}(\n" + "\n".join(lines) + "\n)" if lines else f"{name}()"


class ParameterList(Module):
    """A list of Parameters that the owner's ``parameters()`` and ``state_dict()`` find,
    named ``name.0``, ``name.1``, ... as in PyTorch. A Tensor or an array put in becomes
    a Parameter (a Parameter stays the same object).

    >>> class Mixture(cr.nn.Module):
    ...     def __init__(self):
    ...         self.weights = cr.nn.ParameterList([np.ones(2), np.zeros(3)])
    >>> model = Mixture()
    >>> [(name, p.shape) for name, p in model.named_parameters()]
    [('weights.0', (2,)), ('weights.1', (3,))]
    >>> model.weights[1].requires_grad
    True
    """

    def __init__(self, values: Iterable | None = None) -> None:
        self._items = []
        if values is not None:
            self.extend(values)

    def _entries(self):
        for i, p in enumerate(self._items):
            yield str(i), p

    def append(self, value: Parameter | Tensor | ArrayLike) -> "ParameterList":
        """Add a parameter at the end; returns the list.

        >>> len(cr.nn.ParameterList().append(np.ones(2)))
        1
        """
        self._items.append(_as_parameter("ParameterList.append", len(self._items), value))
        return self

    def extend(self, values: Iterable) -> "ParameterList":
        """Add each parameter of an iterable at the end; returns the list.

        >>> len(cr.nn.ParameterList([np.ones(2)]).extend([np.ones(1), np.ones(3)]))
        3
        """
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList(self._items[index])
        return self._items[index]

    def __setitem__(self, index, value):
        self._items[index] = _as_parameter("ParameterList", index, value)

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __iadd__(self, values):
        return self.extend(values)

    def __repr__(self):
        return _parameters_repr(self, enumerate(self._items))


class ParameterDict(KeyedEntries):
    """A dict of Parameters (string keys without '.') that the owner finds, named
    ``name.key`` as in PyTorch, in insertion order (a plain dict given is sorted, as
    PyTorch sorts it); an entry is an attribute too. A Tensor or an array put in
    becomes a Parameter.

    >>> heads = cr.nn.ParameterDict({"scale": np.ones(2), "shift": np.zeros(2)})
    >>> list(heads.state_dict()), heads.scale is heads["scale"]
    (['scale', 'shift'], True)
    """

    _entry_type = Tensor

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__(parameters)

    def _entry(self, key, value):
        return _as_parameter("ParameterDict", key, value)

    def update(self, parameters: Mapping | Iterable) -> None:
        """Add the (key, parameter) pairs of a dict or of an iterable of pairs. As in
        PyTorch, a plain dict's keys are added in sorted order (an OrderedDict's, a
        ParameterDict's and a list's in theirs).

        >>> d = cr.nn.ParameterDict()
        >>> d.update({"b": np.ones(1), "a": np.ones(2)})
        >>> list(d)
        ['a', 'b']
        """
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = parameters.items()
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = parameters
        for key, value in items:
            self[key] = value

    def __repr__(self):
        return _parameters_repr(self, self._items.items())

    def get(self, key: str, default: Any = None) -> Parameter | Any:
        """The parameter under ``key``, or ``default``.

        >>> cr.nn.ParameterDict().get("a") is None
        True
        """
        return self._items.get(key, default)
