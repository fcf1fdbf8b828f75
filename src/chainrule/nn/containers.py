"""ModuleList and ModuleDict: PyTorch's containers of submodules.

A plain list or dict of modules held in an attribute is registered too (its items are
named ``name.0`` or ``name.key``, as these containers name them); the containers add
PyTorch's methods and let a container be passed around, indexed and repr'd as a module.
"""

from collections.abc import ItemsView, Iterable, KeysView, Mapping, ValuesView
from typing import Any

from .module import Module

__all__ = ["ModuleList", "ModuleDict"]


def _check_module(owner, key, module):
    if not isinstance(module, Module):
        raise TypeError(f"{owner}: expected a Module for {key!r}, got "
                        f"{type(module).__name__}")
    return module


class ModuleList(Module):
    """A list of modules whose parameters the owner's ``parameters()`` and
    ``state_dict()`` find, named ``name.0``, ``name.1``, ... as in PyTorch.

    It has no forward: the owner decides how to call the modules.

    >>> class Tower(cr.nn.Module):
    ...     def __init__(self):
    ...         self.blocks = cr.nn.ModuleList([cr.nn.Linear(2, 2, rng=i) for i in range(2)])
    ...     def forward(self, x):
    ...         for block in self.blocks:
    ...             x = block(x)
    ...         return x
    >>> list(Tower().state_dict())
    ['blocks.0.weight', 'blocks.0.bias', 'blocks.1.weight', 'blocks.1.bias']
    """

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        self._items = []
        self.extend(modules)

    def _entries(self):
        for i, module in enumerate(self._items):
            yield str(i), module

    def append(self, module: Module) -> "ModuleList":
        """Add a module at the end; returns the list.

        >>> len(cr.nn.ModuleList().append(cr.nn.ReLU()))
        1
        """
        self._items.append(_check_module("ModuleList.append", len(self._items), module))
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Add each module of an iterable at the end; returns the list.

        >>> len(cr.nn.ModuleList([cr.nn.ReLU()]).extend([cr.nn.Tanh(), cr.nn.GELU()]))
        3
        """
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put a module before position ``index``.

        >>> layers = cr.nn.ModuleList([cr.nn.ReLU()])
        >>> layers.insert(0, cr.nn.Tanh())
        >>> [type(m).__name__ for m in layers]
        ['Tanh', 'ReLU']
        """
        self._items.insert(index, _check_module("ModuleList.insert", index, module))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList(self._items[index])
        return self._items[index]

    def __setitem__(self, index, module):
        self._items[index] = _check_module("ModuleList", index, module)

    def __delitem__(self, index):
        del self._items[index]

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __iadd__(self, modules):
        return self.extend(modules)


class KeyedEntries(Module):
    """What PyTorch's dict containers share (ModuleDict here, ParameterDict in
    parameter_containers.py): string keys without '.', insertion order, an entry read
    and set as an attribute too, and the mapping's methods. A subclass says what an
    entry is (``_entry_type``) and how a value becomes one (``_entry``)."""

    _entry_type: type = Module

    def _entry(self, key, value):
        raise TypeError(f"{type(self).__name__} does not say what its entries are")

    def __init__(self, entries: Mapping | Iterable | None = None) -> None:
        self._items = {}
        if entries is not None:
            self.update(entries)

    def _entries(self):
        yield from self._items.items()

    def __getattr__(self, name):
        # Called only when no attribute has the name. Read through vars(): while an
        # instance is being made (unpickled, copied) _items may not exist yet.
        items = vars(self).get("_items")
        if items is not None and name in items:
            return items[name]
        raise AttributeError(f"{type(self).__name__} has no attribute or entry {name!r}")

    def __setattr__(self, name, value):
        # An entry's kind set as an attribute is an entry, as PyTorch's containers
        # register it (so parameters() finds it); anything else is a plain attribute.
        if isinstance(value, self._entry_type) and not name.startswith("_"):
            self[name] = value
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name):
        items = vars(self).get("_items")
        if items is not None and name in items and name not in vars(self):
            del items[name]
        else:
            super().__delattr__(name)

    def __setitem__(self, key, value):
        if not isinstance(key, str) or not key or "." in key:
            raise KeyError(f"{type(self).__name__}: keys must be non-empty strings "
                           f"without '.', got {key!r}")
        self._items[key] = self._entry(key, value)

    def __getitem__(self, key):
        return self._items[key]

    def __delitem__(self, key):
        del self._items[key]

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __contains__(self, key):
        return key in self._items

    def update(self, entries: Mapping | Iterable) -> None:
        """Add the (key, entry) pairs of a dict or of an iterable of pairs.

        >>> heads = cr.nn.ModuleDict()
        >>> heads.update({"a": cr.nn.ReLU()})
        >>> list(heads)
        ['a']
        """
        items = entries.items() if hasattr(entries, "items") else entries
        for key, value in items:
            self[key] = value

    def keys(self) -> KeysView[str]:
        """The keys, in insertion order.

        >>> list(cr.nn.ModuleDict({"a": cr.nn.ReLU(), "b": cr.nn.Tanh()}).keys())
        ['a', 'b']
        """
        return self._items.keys()

    def values(self) -> ValuesView:
        """The entries, in insertion order.

        >>> [type(m).__name__ for m in cr.nn.ModuleDict({"a": cr.nn.ReLU()}).values()]
        ['ReLU']
        """
        return self._items.values()

    def items(self) -> ItemsView:
        """The (key, entry) pairs, in insertion order.

        >>> [(k, type(m).__name__) for k, m in cr.nn.ModuleDict({"a": cr.nn.ReLU()}).items()]
        [('a', 'ReLU')]
        """
        return self._items.items()

    def pop(self, key: str) -> Any:
        """Remove the entry under ``key`` and return it.

        >>> heads = cr.nn.ModuleDict({"a": cr.nn.ReLU()})
        >>> type(heads.pop("a")).__name__, len(heads)
        ('ReLU', 0)
        """
        return self._items.pop(key)


class ModuleDict(KeyedEntries):
    """A dict of modules (string keys without '.') whose parameters the owner finds,
    named ``name.key.weight`` and so on, as in PyTorch; it keeps the insertion order.

    As in PyTorch, an entry is an attribute too: ``heads.age`` is ``heads["age"]``, and
    ``heads.extra = module`` adds the entry "extra".

    >>> heads = cr.nn.ModuleDict({"age": cr.nn.Linear(4, 1, rng=0),
    ...                           "kind": cr.nn.Linear(4, 3, rng=0)})
    >>> heads["kind"](cr.ones(2, 4)).shape
    (2, 3)
    >>> heads.kind is heads["kind"]
    True
    >>> [name for name, p in heads.named_parameters()]
    ['age.weight', 'age.bias', 'kind.weight', 'kind.bias']
    """

    _entry_type = Module

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__(modules)

    def _entry(self, key, module):
        return _check_module("ModuleDict", key, module)
