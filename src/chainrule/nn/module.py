"""Module: the base of every model, holding the parameters that training updates.

PyTorch's shape: a module's parameters are found by walking its attributes (Parameters,
Values, other modules, and lists and dicts of those, as PyTorch's ModuleList and
ModuleDict hold them), so a model is written as plain attributes.
micrograd's scalar modules (Neuron, Layer, MLP) are modules too.
"""

from collections import namedtuple
from collections.abc import Iterator, Mapping
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..tensor import Tensor
from ..scalar.value import Value

__all__ = ["Module", "Parameter", "IncompatibleKeys"]


class Parameter(Tensor):
    """A Tensor that a Module trains: it requires grad and is listed by parameters().

    >>> w = cr.nn.Parameter([1.0, 2.0])
    >>> w
    tensor([1., 2.], requires_grad=True)
    """

    __slots__ = ()

    def __init__(self, data: ArrayLike, dtype: DTypeLike = None) -> None:
        super().__init__(data, requires_grad=True, dtype=dtype)


def _same(array):
    return array


class _Buffer:
    """A module's buffer seen as a parameter is by the loaders: ``data`` to read and to
    replace, ``dtype`` to cast a loaded array to."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    @property
    def dtype(self):
        return np.result_type(getattr(self.module, self.name))

    @property
    def data(self):
        return getattr(self.module, self.name)

    @data.setter
    def data(self, array):
        setattr(self.module, self.name, array)


class _Layout:
    """What a module holds besides its buffers, as cr.jit compares it between calls
    (the mode of ``_jit_state_``): the attributes' names and the identity of each
    value (a parameter, a submodule, an array, a setting), and of the items of each
    list, tuple or dict among them (Sequential's layers). Compared as tuples of ints,
    at C speed; the values are held, so that their ids stay theirs. (A setting set
    again to an equal value is another object: one more trace, never a wrong one.)"""

    __slots__ = ("key", "held")

    def __init__(self, attributes, buffers):
        if buffers:
            attributes = {k: v for k, v in attributes.items() if k not in buffers}
        values = tuple(attributes.values())
        nested = [tuple(v.values()) if type(v) is dict else v
                  for v in values if type(v) in _CONTAINERS]
        self.key = (tuple(attributes), tuple(map(id, values)))
        if nested:
            self.key += (tuple([tuple(map(id, items)) for items in nested]),
                         tuple([tuple(v) for v in values if type(v) is dict]))
        self.held = (values, nested)

    def __eq__(self, other):
        return type(other) is _Layout and other.key == self.key

    __hash__ = None


_CONTAINERS = (list, tuple, dict)


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


def _held(name, value, owner):
    """(name, item) of the Parameters and Modules in an attribute's value: the value
    itself, or the items of a list, tuple or dict of them, nested ones too."""
    if isinstance(value, (Module, Parameter, Value)):
        yield name, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _held(f"{name}.{i}", item, owner)
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = list(_held(f"{name}.{key}", item, owner))
            if inner and (not isinstance(key, str) or "." in key or not key):
                raise TypeError(f"{owner}.{name}: a dict of modules or parameters needs "
                                f"string keys without '.', got {key!r}; its items are "
                                f"named '{name}.<key>' in state_dict()")
            yield from inner
    elif isinstance(value, (set, frozenset)):
        if any(list(_held(name, item, owner)) for item in value):
            raise TypeError(f"{owner}.{name}: a set of modules or parameters has no order "
                            f"to name them by; use a list (or nn.ModuleList) or a dict "
                            f"(or nn.ModuleDict)")


def _as_array(value):
    """An ndarray of a state entry: an ndarray, a number, a Tensor, or a PyTorch tensor
    (read through ``.detach().cpu().numpy()``, without importing torch)."""
    if isinstance(value, Tensor):
        return np.asarray(value.data)
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return np.asarray(value.detach().cpu().numpy())
    return np.asarray(value)


def _load(own, state, strict, op, owner):
    """Copy ``state`` into ``own`` (name -> (parameter, expected shape, convert or
    None)); every check before any change. Returns IncompatibleKeys."""
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
        array = _as_array(state[name])
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
    return IncompatibleKeys(missing, unexpected)


class Module:
    """A model or a part of one.

    ``parameters()`` lists the Parameters (and scalar Values) held in attributes, in the
    order they were set; ``zero_grad()`` clears their gradients before the next step
    (as micrograd's Module does); ``train()`` / ``eval()`` switch modes such as Dropout;
    ``state_dict()`` / ``load_state_dict()`` save and restore the numbers.

    A subclass sets its parameters and submodules as attributes and computes its
    output in ``forward``; calling the module calls ``forward``.

    >>> class Affine(cr.nn.Module):
    ...     def __init__(self):
    ...         self.w = cr.nn.Parameter([2.0])
    ...         self.b = cr.nn.Parameter([0.5])
    ...     def forward(self, x):
    ...         return x * self.w + self.b
    >>> model = Affine()
    >>> model(cr.tensor([1.0, 2.0])).data.tolist()
    [2.5, 4.5]
    >>> [name for name, p in model.named_parameters()]
    ['w', 'b']
    """

    _training = True
    # Attributes holding arrays that are state but not trained (BatchNorm's running
    # statistics): saved and loaded with the parameters, never given to an optimizer.
    _buffer_names: tuple[str, ...] = ()

    @property
    def training(self) -> bool:
        """Whether the module is in training mode (``train()``) or evaluation mode
        (``eval()``); Dropout reads it.

        >>> cr.nn.Dropout(0.5).eval().training
        False
        """
        if xp.recorders_open[0]:  # cr.jit: a program that read the mode holds for it
            xp.touch(self)        # alone, however the module was reached (a .forward)
        return self._training

    @training.setter
    def training(self, mode: bool) -> None:
        self._training = mode

    def __call__(self, *args, **kwargs):
        if xp.recorders_open[0] and xp.recorder() is not None:  # cr.jit: the
            # program it is traced into holds for this module's mode (train or eval)
            xp.touch(self)
        return self.forward(*args, **kwargs)

    def _jit_state_(self) -> tuple[dict, tuple]:
        """What cr.jit carries of this module (the state protocol): its buffers (arrays
        a program reads and updates, such as BatchNorm's running statistics), and as
        its mode the train/eval flag and the layout of everything else it holds (a
        parameter, a submodule, an array by identity, a setting by value). A call after
        a parameter, a layer or a setting was replaced, added or removed therefore
        traces again instead of replaying a program that reads the old one; the
        parameters themselves are carried as the tensors they are, where the function
        reads them."""
        attributes, buffers = vars(self), self._buffer_names
        arrays = {}
        for name in buffers:
            value = attributes.get(name)
            if value is not None:
                arrays[name] = value
        return arrays, (self._training, _Layout(attributes, buffers))

    def _jit_parts_(self) -> list:
        """The submodules: state of their own for cr.jit, each checked at every call
        (a layer run through its forward, not called, has its parameters checked too)."""
        return list(self.children())

    def _jit_load_(self, arrays: dict) -> None:
        """Put the buffers back (traced while tracing, new after a run)."""
        for key, value in arrays.items():
            setattr(self, key, value)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module; subclasses define it.

        >>> class Double(cr.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> Double()(cr.tensor([1.0, 2.0])).data.tolist()   # calling it calls forward
        [2.0, 4.0]
        """
        raise TypeError(f"{type(self).__name__} defines no forward(); a Module subclass "
                        f"computes its output in forward(self, x)")

    # --- what the module holds ------------------------------------------------------

    def _entries(self):
        """(name, value) of the Parameters, Values and Modules held directly, in the order
        the attributes were set; lists, tuples and dicts of them are entered, their
        items named ``name.0`` or ``name.key`` (as PyTorch's ModuleList and ModuleDict)."""
        for name, value in vars(self).items():
            yield from _held(name, value, type(self).__name__)

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """(name, module) pairs of the submodules held in attributes (and in lists and
        dicts held in attributes: ``heads.0``), each once.

        The names are those of the parameters: ``named_parameters()`` lists
        ``body.weight`` for the child ``body``.

        >>> class Net(cr.nn.Module):
        ...     def __init__(self):
        ...         self.body = cr.nn.Linear(2, 4, rng=0)
        ...         self.heads = [cr.nn.Linear(4, 1, rng=0), cr.nn.Linear(4, 3, rng=0)]
        >>> [name for name, module in Net().named_children()]
        ['body', 'heads.0', 'heads.1']
        """
        seen = set()
        for name, value in self._entries():
            if isinstance(value, Module) and id(value) not in seen:
                seen.add(id(value))
                yield name, value

    def children(self) -> Iterator["Module"]:
        """The submodules held directly, each once (see ``named_children``).

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.ReLU())
        >>> [type(m).__name__ for m in model.children()]
        ['Linear', 'ReLU']
        """
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """(name, module) pairs of this module (named ``prefix``, "" by default) and every
        module below it, depth first, as PyTorch's ``named_modules``; a module reached
        twice is listed once unless ``remove_duplicate=False``.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.ReLU())
        >>> [name for name, m in model.named_modules()]
        ['', 'layers.0', 'layers.1']
        """
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, value in self._entries():
            if isinstance(value, Module):
                yield from value.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                               remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        """This module and every module below it, each once, depth first.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.ReLU())
        >>> [type(m).__name__ for m in model.modules()]
        ['Sequential', 'Linear', 'ReLU']
        """
        for _, module in self.named_modules():
            yield module

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Call ``fn(module)`` on every submodule and then on this one (as PyTorch, for
        example to initialise weights); returns this module.

        >>> def ones(m):
        ...     if isinstance(m, cr.nn.Linear):
        ...         m.weight.data[...] = 1.0
        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.ReLU()).apply(ones)
        >>> model[0].weight.data.tolist()
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Tensor | Value]]:
        """(name, parameter) pairs, names like ``layers.0.weight``.

        A parameter shared by two layers is listed once (under its first name), so an
        optimizer steps it once.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.ReLU())
        >>> [(name, p.shape) for name, p in model.named_parameters()]
        [('layers.0.weight', (2, 3)), ('layers.0.bias', (3,))]
        """
        seen = set()
        for name, p in self._walk_parameters(prefix, set()):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def _walk_parameters(self, prefix, visited):
        visited.add(id(self))  # a module held twice (or holding itself) is walked once
        for name, value in self._entries():
            if isinstance(value, Module):
                if id(value) not in visited:
                    yield from value._walk_parameters(f"{prefix}{name}.", visited)
            else:
                yield f"{prefix}{name}", value

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
        """(name, array) of the arrays the modules keep besides their parameters, such as
        BatchNorm's running statistics; ``state_dict()`` holds them too.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.BatchNorm1d(3))
        >>> [name for name, array in model.named_buffers()]
        ['layers.1.running_mean', 'layers.1.running_var', 'layers.1.num_batches_tracked']
        """
        for name, module in self.named_modules(prefix=prefix):
            for key in module._buffer_names:
                value = vars(module).get(key)
                if value is not None:
                    yield (f"{name}.{key}" if name else key), value

    def parameters(self) -> list[Tensor | Value]:
        """The parameters, each once, in the order they were set: what an optimizer takes.

        >>> layer = cr.nn.Linear(3, 2, rng=0)
        >>> [p.shape for p in layer.parameters()]      # the weight (in, out), the bias
        [(3, 2), (2,)]
        """
        return [p for _, p in self.named_parameters()]

    def zero_grad(self) -> None:
        """Clear the gradients: None for Tensors, 0.0 for scalar Values.

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> layer(cr.ones(3, 2)).sum().backward()
        >>> layer.bias.grad.tolist()                   # one for each of the 3 rows
        [3.0]
        >>> layer.zero_grad()
        >>> layer.bias.grad is None
        True
        """
        for p in self.parameters():
            xp.touch(p)  # (cr.jit: the gradient it had becomes an input first)
            p.grad = 0.0 if isinstance(p, Value) else None

    # --- modes ----------------------------------------------------------------------

    def train(self, mode: bool = True) -> "Module":
        """Training mode (Dropout active) for this module and all below it; returns it.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 2, rng=0), cr.nn.Dropout(0.5))
        >>> model.eval()[1].training, model.train()[1].training
        (False, True)
        """
        for module in self.modules():
            module.training = bool(mode)
        return self

    def eval(self) -> "Module":
        """Evaluation mode, ``train(False)``: Dropout lets everything through.

        >>> drop = cr.nn.Dropout(0.5, rng=0)
        >>> drop.eval()(cr.ones(3)).data.tolist()
        [1.0, 1.0, 1.0]
        """
        return self.train(False)

    # --- saving and restoring -------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Name -> a copy of the parameter's numbers (an ndarray), and of the buffers'
        (``named_buffers``).

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> {name: array.shape for name, array in layer.state_dict().items()}
        {'weight': (2, 1), 'bias': (1,)}
        """
        state = {name: np.array(p.data, copy=True) for name, p in self.named_parameters()}
        state.update((name, np.array(b, copy=True)) for name, b in self.named_buffers())
        return state

    def load_state_dict(self, state: Mapping[str, ArrayLike],
                        strict: bool = True) -> "IncompatibleKeys":
        """Copy numbers in, by name; return what did not match, as PyTorch does: the
        named tuple ``(missing_keys, unexpected_keys)``.

        The values may be ndarrays, Tensors or PyTorch tensors (read through their
        ``.numpy()``); each is cast to its parameter's dtype.

        ``strict=True``: the names must match exactly; a mismatch raises ValueError
        naming the missing and unexpected keys (so the tuple holds two empty lists).
        ``strict=False``: the names found are loaded and the rest reported. A shape
        mismatch always raises, naming the key and both shapes, and a refused load
        changes nothing.

        >>> a, b = cr.nn.Linear(2, 1, rng=0), cr.nn.Linear(2, 1, rng=1)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> b.weight.data.tolist() == a.weight.data.tolist()
        True
        >>> b.load_state_dict({"weight": np.zeros((2, 1)), "scale": 1.0}, strict=False)
        IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['scale'])
        """
        own = {name: (p, np.shape(p.data), None) for name, p in self.named_parameters()}
        for name, module in self.named_modules():
            for key in module._buffer_names:
                if vars(module).get(key) is not None:
                    buffer = _Buffer(module, key)
                    own[f"{name}.{key}" if name else key] = (buffer, np.shape(buffer.data),
                                                             None)
        return _load(own, state, strict, "load_state_dict", type(self).__name__)

    def torch_state_dict(self) -> dict[str, np.ndarray]:
        """A copy of the numbers with PyTorch's names and layouts, ready for the same
        model's ``load_state_dict`` in PyTorch.

        The values are ndarrays (``torch.from_numpy`` makes them tensors); the keys are
        PyTorch's, such as ``0.weight`` for a Sequential's first layer (here
        ``layers.0.weight``); a Linear's weight is transposed to PyTorch's
        (out_features, in_features).

        Layers with a PyTorch counterpart: Linear, LayerNorm, Embedding, Sequential and
        MLP, and the layers without parameters; lists and dicts of modules are
        PyTorch's ModuleList and ModuleDict. Scalar Values (micrograd's MLP) have none.

        >>> model = cr.nn.Sequential(cr.nn.Linear(3, 2, rng=0), cr.nn.ReLU())
        >>> {name: a.shape for name, a in model.torch_state_dict().items()}
        {'0.weight': (2, 3), '0.bias': (2,)}
        """
        return {torch_name: np.ascontiguousarray(to_torch(np.array(p.data, copy=True)))
                for torch_name, (p, to_torch, _) in self._torch_layout().items()}

    def load_torch_state_dict(self, state: Mapping[str, ArrayLike],
                              strict: bool = True) -> "IncompatibleKeys":
        """Copy in a PyTorch ``state_dict()`` of the same model.

        PyTorch's key names and layouts (see ``torch_state_dict``), tensors or ndarrays;
        errors name PyTorch's keys and shapes. Returns as ``load_state_dict``.

        >>> model = cr.nn.Sequential(cr.nn.Linear(3, 2, rng=0), cr.nn.ReLU())
        >>> W = np.arange(6.0).reshape(2, 3)             # PyTorch's (out, in)
        >>> _ = model.load_torch_state_dict({"0.weight": W, "0.bias": np.zeros(2)})
        >>> model[0].weight.data.tolist()                # chainrule's (in, out)
        [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        """
        own = {}
        for torch_name, (p, to_torch, from_torch) in self._torch_layout().items():
            own[torch_name] = (p, np.shape(to_torch(np.asarray(p.data))), from_torch)
        return _load(own, state, strict, "load_torch_state_dict", type(self).__name__)

    def _torch_layout(self):
        """torch name -> (parameter, to_torch, from_torch) for every parameter. As in
        PyTorch's state_dict, a module or parameter held twice is listed under each name
        (tied weights load from either)."""
        layout = {}
        for torch_prefix, module in self._torch_modules("", ()):
            for name, p in module._entries():
                if isinstance(p, Module):
                    continue
                if isinstance(p, Value):
                    raise TypeError(f"torch_state_dict: {type(module).__name__} holds "
                                    f"scalar Values ({torch_prefix + name!r}), which have "
                                    f"no PyTorch counterpart; only tensor layers convert")
                to_torch, from_torch = module._torch_converters(name)
                layout[torch_prefix + name] = (p, to_torch, from_torch)
            for key in module._buffer_names:
                if vars(module).get(key) is not None:
                    layout[torch_prefix + key] = (_Buffer(module, key), _same, _same)
        return layout

    def _torch_modules(self, prefix, ancestors):
        ancestors = (*ancestors, id(self))  # only a module holding itself is cut short
        yield prefix, self
        for name, child in self._torch_children():
            if id(child) not in ancestors:
                yield from child._torch_modules(f"{prefix}{name}.", ancestors)

    def _torch_children(self):
        """(PyTorch's name, module) of the submodules, one held twice under both names:
        the same names by default."""
        return self._module_entries()

    def _module_entries(self):
        return ((name, value) for name, value in self._entries() if isinstance(value, Module))

    def _torch_converters(self, name):
        """(to_torch, from_torch) layout maps of the parameter ``name``: the identity
        by default; Linear transposes its weight."""
        return _same, _same

    # --- a tree for repr ------------------------------------------------------------

    def extra_repr(self) -> str:
        """What repr shows inside the parentheses (a subclass's settings).

        >>> cr.nn.Linear(2, 3, rng=0).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def _repr_children(self):
        """(label, module) pairs that repr shows: every submodule, as PyTorch's repr."""
        return self._module_entries()

    def __repr__(self):
        children = list(self._repr_children())
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"
