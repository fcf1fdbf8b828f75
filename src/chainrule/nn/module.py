"""Module: the base of every model, holding the parameters that training updates.

PyTorch's shape: a module's parameters are found by walking its attributes (Parameters,
Values, other modules, and lists and dicts of those, as PyTorch's ModuleList and
ModuleDict hold them), so a model is written as plain attributes.
micrograd's scalar modules (Neuron, Layer, MLP) are modules too.
"""

import warnings
from collections.abc import Iterator, Mapping
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from ..tensor import Tensor
from ..scalar.value import Value
from ..tensor_data import zeros_like
from . import hooks
from .module_state import BufferSlot, IncompatibleKeys, cast, check_buffer, load, parse_to
from .parameter import Buffer, Parameter
from .torch_layout import TorchLayout

__all__ = ["Module", "Parameter", "Buffer", "IncompatibleKeys"]


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


class Module(TorchLayout, hooks.HookRegistration):
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
    # A class names its own; register_buffer gives an instance its own tuple, which
    # extends the class's (and names in _non_persistent_buffers are not saved).
    _buffer_names: tuple[str, ...] = ()
    _non_persistent_buffers: frozenset[str] = frozenset()

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
        held = self.__dict__   # (hooks.has_hooks, spelt out: this runs at every call)
        if "_forward_hooks" in held or "_forward_pre_hooks" in held or \
                "_backward_hooks" in held or "_backward_pre_hooks" in held:
            return hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        # An nn.Buffer set as an attribute registers itself, as torch's does; the
        # registration sets None first, so that it does not come back here.
        if isinstance(value, Buffer):
            self.register_buffer(name, None, value.persistent)
        object.__setattr__(self, name, value)

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
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
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
        [('layers.0.weight', (3, 2)), ('layers.0.bias', (3,))]
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

    def named_buffers(self, prefix: str = "", recurse: bool = True
                      ) -> Iterator[tuple[str, np.ndarray | Tensor]]:
        """(name, array) of the arrays (or Tensors) the modules keep besides their
        parameters, such as BatchNorm's running statistics and what ``register_buffer``
        registered; ``state_dict()`` holds the persistent ones too. A buffer set to None
        is left out; ``recurse=False``: this module's own only.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.BatchNorm1d(3))
        >>> [name for name, array in model.named_buffers()]
        ['layers.1.running_mean', 'layers.1.running_var', 'layers.1.num_batches_tracked']
        """
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for name, module in modules:
            for key in module._buffer_names:
                value = vars(module).get(key)
                if value is not None:
                    yield (f"{name}.{key}" if name else key), value

    def buffers(self, recurse: bool = True) -> Iterator[np.ndarray | Tensor]:
        """The buffers of ``named_buffers()``, without their names.

        >>> [array.tolist() for array in cr.nn.BatchNorm1d(2).buffers()]
        [[0.0, 0.0], [1.0, 1.0], 0]
        """
        for _, value in self.named_buffers(recurse=recurse):
            yield value

    def _saved_buffers(self):
        """(name, module, key) of the buffers ``state_dict()`` holds: the persistent ones."""
        for name, module in self.named_modules():
            for key in module._buffer_names:
                if (vars(module).get(key) is not None
                        and key not in module._non_persistent_buffers):
                    yield (f"{name}.{key}" if name else key), module, key

    def register_buffer(self, name: str, tensor: Tensor | np.ndarray | None,
                        persistent: bool = True) -> None:
        """Keep ``tensor`` as the attribute ``name``, a buffer: state that is not
        trained (a mask, running statistics), as PyTorch's ``register_buffer``.

        ``named_buffers()`` lists it, cr.jit carries it as it carries BatchNorm's
        running statistics, and ``state_dict()`` (so ``cr.save``) holds it unless
        ``persistent=False``. It may be a Tensor, an ndarray, or None (listed nowhere
        until set). Registering a buffer's name again replaces it; a name with '.',
        an empty one, or one the module already has (a parameter, a method) is a
        KeyError, as in PyTorch.

        >>> class Causal(cr.nn.Module):
        ...     def __init__(self, T):
        ...         self.register_buffer("tril", cr.tril(cr.ones(T, T)))
        >>> model = Causal(3)
        >>> model.tril.shape, list(model.state_dict())
        ((3, 3), ['tril'])
        """
        check_buffer(self, name, tensor, Parameter)
        xp.touch(self)  # (cr.jit: the module's state before the change is the program's)
        if name not in self._buffer_names:
            self._buffer_names = (*self._buffer_names, name)
        if persistent and name in self._non_persistent_buffers:
            self._non_persistent_buffers = self._non_persistent_buffers - {name}
        elif not persistent and name not in self._non_persistent_buffers:
            self._non_persistent_buffers = self._non_persistent_buffers | {name}
        setattr(self, name, tensor)

    def parameters(self) -> list[Tensor | Value]:
        """The parameters, each once, in the order they were set: what an optimizer takes.

        >>> layer = cr.nn.Linear(3, 2, rng=0)
        >>> [p.shape for p in layer.parameters()]      # the weight (out, in), the bias
        [(2, 3), (2,)]
        """
        return [p for _, p in self.named_parameters()]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients: None for Tensors (PyTorch's default), or zeros with
        ``set_to_none=False`` (a gradient that is None stays None, as in PyTorch);
        0.0 for scalar Values.

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> layer(cr.ones(3, 2)).sum().backward()
        >>> layer.bias.grad.tolist()                   # one for each of the 3 rows
        [3.0]
        >>> layer.zero_grad(set_to_none=False)
        >>> layer.bias.grad.tolist()
        [0.0]
        >>> layer.zero_grad()
        >>> layer.bias.grad is None
        True
        """
        for p in self.parameters():
            xp.touch(p)  # (cr.jit: the gradient it had becomes an input first)
            if isinstance(p, Value):
                p.grad = 0.0
            elif set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = zeros_like(p)

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

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Switch gradient recording on (or off) for every parameter below; returns the
        module, as PyTorch's. ``requires_grad_(False)`` freezes them: backward leaves
        their ``.grad`` None, so an optimizer skips them (fine-tuning a head alone).

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 2, rng=0), cr.nn.Linear(2, 1, rng=0))
        >>> frozen = model[0].requires_grad_(False)      # (returns model[0])
        >>> model(cr.ones(3, 2)).sum().backward()
        >>> model[0].weight.grad is None, model[1].weight.grad is None
        (True, False)
        """
        for name, p in self.named_parameters():
            if isinstance(p, Value):
                raise TypeError(f"requires_grad_: {name} is a scalar Value, which always "
                                f"records; leave it out of the optimizer's parameters "
                                f"to freeze it")
            p.requires_grad_(requires_grad)
        return self

    # --- dtype and device -----------------------------------------------------------

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Cast the floating-point and complex parameters and buffers to a dtype, in
        place, and return the module, as PyTorch's ``Module.to``: ``to(np.float32)``,
        ``to("cpu", np.float64)``, ``to(dtype=...)``, ``to(other_tensor)`` (its dtype).

        The device may only be the CPU, where chainrule computes ("cpu", "cpu:0");
        another is a ValueError naming it. Integer buffers (BatchNorm's
        ``num_batches_tracked``) keep their dtype; the dtype must be floating point or
        complex. A Parameter stays the same object, so an optimizer built before still
        steps it.

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> layer.to("cpu") is layer, layer.to(np.float32).weight.dtype
        (True, dtype('float32'))
        """
        dtype = parse_to(type(self).__name__, args, kwargs)
        if dtype is not None:
            self._cast(dtype, "fc")
        return self

    def cpu(self) -> "Module":
        """The module itself: chainrule computes on the CPU.

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> layer.cpu() is layer
        True
        """
        return self

    def double(self) -> "Module":
        """Cast the floating-point parameters and buffers to float64, in place; returns
        the module (PyTorch's ``double``).

        >>> cr.nn.Linear(2, 1, rng=0, dtype=np.float32).double().weight.dtype
        dtype('float64')
        """
        return self._cast(np.dtype(np.float64), "f")

    def float(self) -> "Module":
        """Cast the floating-point parameters and buffers to float32, in place; returns
        the module (PyTorch's ``float``).

        >>> cr.nn.BatchNorm1d(2).float().running_mean.dtype
        dtype('float32')
        """
        return self._cast(np.dtype(np.float32), "f")

    def _cast(self, dtype, kinds):
        for p in self.parameters():
            cast(p, dtype, kinds)
        for module in self.modules():
            for key in module._buffer_names:
                value = vars(module).get(key)
                if value is not None:
                    new = cast(value, dtype, kinds)
                    if new is not value:
                        xp.touch(module)
                        setattr(module, key, new)
        return self

    # --- saving and restoring -------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Name -> a copy of the parameter's numbers (an ndarray), and of the buffers'
        (``named_buffers``) but those registered with ``persistent=False``, as PyTorch's.

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> {name: array.shape for name, array in layer.state_dict().items()}
        {'weight': (1, 2), 'bias': (1,)}
        """
        state = {name: np.array(p.data, copy=True) for name, p in self.named_parameters()}
        state.update((name, np.array(BufferSlot(module, key).data, copy=True))
                     for name, module, key in self._saved_buffers())
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
        >>> b.load_state_dict({"weight": np.zeros((1, 2)), "scale": 1.0}, strict=False)
        IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['scale'])
        """
        version = getattr(state, "format_version", None)  # (a checkpoint's: cr.load)
        if version is not None:
            state = self._in_current_layout(state, version)
        # a lazy layer inside, not called yet, takes its shapes from the state first
        sized = []
        try:
            for prefix, module in self._lazy_parts():
                sized.append((module, module._materialize_from(state, prefix)))
            own = {name: (p, np.shape(p.data), None) for name, p in self.named_parameters()}
            for name, module, key in self._saved_buffers():
                buffer = BufferSlot(module, key)
                own[name] = (buffer, np.shape(buffer.data), None)
            return IncompatibleKeys(*load(own, state, strict, "load_state_dict",
                                          type(self).__name__))
        except BaseException:
            for module, materialized in sized:
                module._unmaterialize(materialized)
            raise

    def _lazy_parts(self):
        """(prefix, module) of the lazy submodules (nn.lazy's) not called yet."""
        return [(f"{name}." if name else "", module)
                for name, module in self.named_modules()
                if module is not self and hasattr(module, "_materialize_from")]

    def _in_current_layout(self, state, version):
        """A checkpoint's arrays, written in format ``version``, in today's layouts: each
        module converts its own entries (``_from_format``)."""
        converted, notes = dict(state), {}
        for prefix, module in self.named_modules():
            for name in module._layout_changes(version):
                key = f"{prefix}.{name}" if prefix else name
                if key in converted:
                    converted[key] = module._from_format(name, converted[key], version)
                    notes[module._layout_note(version)] = None
        for note in notes:  # once per kind of change, however many layers it touched
            warnings.warn(note, UserWarning, stacklevel=3)
        return converted

    def _layout_changes(self, version):
        """The names of this module's own entries whose layout changed since format
        ``version`` (none by default; Linear's weight before version 2)."""
        return ()

    def _from_format(self, name, array, version):
        """Entry ``name`` of a checkpoint of format ``version``, in today's layout."""
        return array

    def _layout_note(self, version):
        """What a user is told when a checkpoint of format ``version`` is converted."""
        return f"{type(self).__name__}: a checkpoint of format {version} was converted"

    def _module_entries(self):
        return ((name, value) for name, value in self._entries() if isinstance(value, Module))

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
        # torch's layout: the settings alone on the first line; with submodules, the
        # settings' lines and then each submodule's, indented, one per line
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({name}): " + repr(child).replace("\n", "\n  ")
                    for name, child in self._repr_children()]
        if not children:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines + children) + "\n)"
