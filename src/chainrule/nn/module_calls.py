"""A module called with other numbers in place of its parameters and buffers, and many
modules' numbers stacked for one vmap: ``torch.func``'s ``functional_call`` and
``stack_module_state`` (public as ``chainrule.func``).

A parameter lives in an attribute of its module, in a list or dict held there, or in a
container's ``_items`` (ModuleList, ParameterDict): a *slot*. ``functional_call`` finds
the slot of every name, puts the given value there for the call alone and puts the
module's own value back afterwards, even when the call raises. Nothing is copied, so a
value traced by cr.grad, cr.vmap or cr.jit reaches the module's arithmetic as it is,
and the transform differentiates (or batches, or records) the call in that value.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import arrays as xp
from ..primitive import Box
from ..scalar.value import Value
from ..tensor import Tensor
from .normalization import _BatchNorm
from .module import Module, Parameter

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


class _Slot:
    """Where a name's value lives: ``holder[key]`` (a module's ``vars``, a list or dict
    it holds, a container's ``_items``), in the module ``owner``."""

    __slots__ = ("owner", "holder", "key", "buffer")

    def __init__(self, owner, holder, key, buffer):
        self.owner, self.holder, self.key, self.buffer = owner, holder, key, buffer

    def get(self):
        return self.holder[self.key]

    def put(self, value):
        self.holder[self.key] = value


def _roots(module):
    """(key, value, holder) of what ``module`` holds directly, as ``Module._entries``
    walks it: its attributes, or its ``_items`` for the containers that keep their
    entries there (ModuleList, ModuleDict, ParameterList, ParameterDict)."""
    if type(module)._entries is Module._entries:
        holder = vars(module)
        return [(key, value, holder) for key, value in list(holder.items())]
    holder = vars(module)["_items"]
    pairs = holder.items() if isinstance(holder, dict) else enumerate(holder)
    return [(key, value, holder) for key, value in list(pairs)]


def _parameter_slots(module, prefix, ancestors, slots):
    """Every name of every parameter below ``module`` (a module or parameter reached
    by two paths has a name on each, as torch's ``remove_duplicate=False``)."""
    for key, value, holder in _roots(module):
        _held(value, holder, key, f"{prefix}{key}", module, ancestors, slots)
    for key in module._buffer_names:
        if vars(module).get(key) is not None:
            slots[f"{prefix}{key}"] = _Slot(module, vars(module), key, True)


def _held(value, holder, key, name, owner, ancestors, slots):
    if isinstance(value, Module):
        if id(value) not in ancestors:  # (a module holding itself is walked once)
            _parameter_slots(value, name + ".", ancestors | {id(value)}, slots)
    elif isinstance(value, (Parameter, Value)):
        if isinstance(holder, tuple):
            raise TypeError(f"functional_call: {type(owner).__name__} holds parameter "
                            f"{name!r} in a tuple, which cannot take another value for "
                            f"a call; hold it in a list (or nn.ParameterList)")
        slots[name] = _Slot(owner, holder, key, False)
    elif isinstance(value, (list, tuple)):  # (lists and dicts of them, as Module's walk)
        for i, item in enumerate(value):
            _held(item, value, i, f"{name}.{i}", owner, ancestors, slots)
    elif isinstance(value, dict):
        for k, item in value.items():
            if isinstance(k, str):
                _held(item, value, k, f"{name}.{k}", owner, ancestors, slots)


def named_slots(module: Module) -> dict[str, _Slot]:
    """Name -> slot of every parameter and buffer of ``module``, under every name it
    has, parameters first, in ``named_parameters()`` order."""
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: expected a cr.nn.Module, got "
                        f"{type(module).__name__} {module!r:.60}")
    slots = {}
    _parameter_slots(module, "", frozenset({id(module)}), slots)
    # (buffers were gathered module by module; parameters first, as torch lists them)
    return dict(sorted(slots.items(), key=lambda item: item[1].buffer))


def _merged(dicts):
    """torch's ``parameter_and_buffer_dicts``: one dict, or a sequence of dicts with
    distinct keys."""
    if isinstance(dicts, Mapping):
        return dicts
    if isinstance(dicts, Sequence) and not isinstance(dicts, str) and \
            all(isinstance(d, Mapping) for d in dicts):
        keys = [k for d in dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"functional_call: {repeated} appear in more than one of the "
                             f"dicts; expected each name in one dict only")
        return {k: v for d in dicts for k, v in d.items()}
    raise ValueError(f"functional_call: expected a dict of name -> value, or a list or "
                     f"tuple of such dicts, got {type(dicts).__name__}")


def _tied(slots, values, tie_weights):
    """Name -> value for every slot to fill: with ``tie_weights``, a value given for one
    name of a parameter shared under several names goes to all of them (torch's rule;
    two different values for one such parameter are refused)."""
    if not tie_weights:
        return dict(values)
    names_of = {}
    for name, slot in slots.items():
        names_of.setdefault(id(slot.get()), []).append(name)
    filled = dict(values)
    for names in names_of.values():
        given = [n for n in names if n in values]
        if len(names) < 2 or not given:
            continue
        if any(values[n] is not values[given[0]] for n in given[1:]):
            raise ValueError(f"functional_call: different values for {given}, which are "
                             f"one tied parameter or buffer; pass one of them, or "
                             f"tie_weights=False to fill each name on its own")
        filled.update((n, values[given[0]]) for n in names)
    return filled


def _as_held(value, own):
    """The value put in a slot that held ``own``: a NumPy array or number for a
    parameter becomes a Tensor (sharing its memory), so a module may call a Tensor's
    methods on it; a buffer keeps the kind the module computes with (an ndarray for
    BatchNorm's running statistics, updated in place, as torch updates the tensor
    given)."""
    if isinstance(value, Box) or type(value) in xp.ARRAYS:  # traced: as it is
        return value
    plain = isinstance(value, (np.ndarray, np.generic, int, float, complex))
    if isinstance(own, Tensor) and plain:
        return Tensor._make(np.asarray(value))
    if isinstance(own, np.ndarray) and isinstance(value, Tensor) and not value.requires_grad:
        return value._data  # (the Tensor's own array: an in-place update reaches it)
    return value


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced, for
    this call only, by the given values (``torch.func.functional_call``).

    ``parameter_and_buffer_dicts`` maps the names of ``named_parameters()`` and
    ``named_buffers()`` to NumPy arrays, Tensors or the values a transform traces (a
    sequence of such dicts with distinct names works too). ``args`` is a tuple, or one
    argument. The module's own values are back when the call returns or raises. A name
    the module lacks is refused; with ``strict=True`` every name must be given. With
    ``tie_weights`` (the default), a value for one name of a shared parameter fills its
    other names too. A module that sets a replaced attribute to a new value during the
    call leaves that value in the (single) dict given, as torch's; BatchNorm's running
    statistics in training mode are updated in place in the arrays given.

    >>> model = cr.nn.Linear(2, 1, rng=0)
    >>> params = {"weight": np.array([[1.0, 2.0]]), "bias": np.array([0.5])}
    >>> cr.func.functional_call(model, params, (np.array([[3.0, 4.0]]),))
    array([[11.5]])
    >>> loss = lambda p, x: cr.sum(cr.func.functional_call(model, p, x))
    >>> cr.func.grad(loss)(params, np.array([[3.0, 4.0]]))["weight"]
    array([[3., 4.]])
    """
    slots = named_slots(module)
    values = _merged(parameter_and_buffer_dicts)
    unknown = [name for name in values if name not in slots]
    filled = _tied(slots, {k: v for k, v in values.items() if k in slots}, tie_weights)
    missing = [name for name in slots if name not in filled] if strict else []
    if unknown or missing:
        problem = (f"unexpected names {unknown}" if unknown else "") + \
            (" and " if unknown and missing else "") + \
            (f"missing names {missing} (strict=True)" if missing else "")
        names = list(slots)[:12] + (["..."] if len(slots) > 12 else [])
        raise RuntimeError(f"functional_call: {problem} for {type(module).__name__}; "
                           f"expected names of its named_parameters() and "
                           f"named_buffers(): {', '.join(names)}")
    if not isinstance(args, tuple):
        args = () if args is None else (args,)
    for owner in {id(slot.owner): slot.owner for slot in slots.values()}.values():
        xp.touch(owner)  # (cr.jit: what the modules held before the swap is the program's)
    own, put, wrapped = {}, {}, {}
    try:
        for name, value in filled.items():
            slot = slots[name]
            # (one value for tied names, or for a module reached by two paths: one object)
            held = wrapped.get(id(value))
            if held is None:
                held = wrapped[id(value)] = _as_held(value, slot.get())
            own[name], put[name] = slot.get(), held
            slot.put(held)
        return module(*args, **(kwargs or {}))
    finally:
        after = {name: slots[name].get() for name in own}
        for name in reversed(list(own)):  # (a slot reached twice: its first value last)
            slots[name].put(own[name])
        if isinstance(parameter_and_buffer_dicts, dict):  # (torch writes back the same)
            for name, value in after.items():
                if name in parameter_and_buffer_dicts and value is not put[name]:
                    parameter_and_buffer_dicts[name] = value


def _stacked(name, values, parameter):
    if any(isinstance(v, Value) for v in values):
        raise TypeError(f"stack_module_state: {name!r} is a scalar Value; stack the "
                        f"parameters of Tensor modules")
    arrays = [np.asarray(v._data if isinstance(v, Tensor) else v) for v in values]
    if len({a.shape for a in arrays}) != 1:
        raise RuntimeError(f"stack_module_state: {name!r} has shapes "
                         f"{[a.shape for a in arrays]} in the models; expected one shape")
    stacked = np.stack(arrays)
    if not parameter:
        return stacked if all(isinstance(v, np.ndarray) for v in values) else \
            Tensor._make(stacked)
    grads = {bool(v.requires_grad) for v in values}
    if len(grads) != 1:
        raise RuntimeError(f"stack_module_state: {name!r} requires grad in some models and "
                         f"not in others; expected the same in every model")
    return Tensor._make(stacked, requires_grad=grads.pop())


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(params, buffers)``: each name's values in every model stacked along a new
    first axis, ready for ``vmap(..., in_dims=(0, 0, None))`` over ``functional_call``
    of one of the models (``torch.func.stack_module_state``).

    The stacked parameters are new Tensors, out of any graph, that require grad where
    the models' do (an optimizer can take them); a buffer stacks into an ndarray where
    the models hold ndarrays (BatchNorm's statistics), a Tensor where they hold Tensors.
    The models must be of one class, in one mode (train or eval); a RuntimeError says
    otherwise, as torch's.

    >>> models = [cr.nn.Linear(3, 2, rng=seed) for seed in range(4)]
    >>> params, buffers = cr.func.stack_module_state(models)
    >>> {name: p.shape for name, p in params.items()}, buffers
    ({'weight': (4, 2, 3), 'bias': (4, 2)}, {})
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: expected at least one model, got none")
    if any(not isinstance(m, Module) for m in models):
        raise TypeError(f"stack_module_state: expected cr.nn.Modules, got "
                        f"{[type(m).__name__ for m in models]}")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError(f"stack_module_state: expected models of one class, got "
                         f"{sorted({type(m).__name__ for m in models})}")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: expected every model in the same mode, "
                         "got some in training and some in eval")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked(k, [p[k] for p in all_params], True) for k in all_params[0]}
    buffers = {k: _stacked(k, [b[k] for b in all_buffers], False) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Make every BatchNorm below ``root`` normalise by each batch's own statistics and
    keep none (``running_mean``, ``running_var`` and ``num_batches_tracked`` None,
    ``track_running_stats=False``), in place, so it runs under vmap in training mode;
    returns ``root`` (``torch.func.replace_all_batch_norm_modules_``).

    >>> bn = cr.func.replace_all_batch_norm_modules_(cr.nn.BatchNorm1d(3))
    >>> bn.track_running_stats, bn.running_mean
    (False, None)
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            xp.touch(module)  # (cr.jit: the statistics it held are the program's first)
            module.running_mean = module.running_var = module.num_batches_tracked = None
            module.track_running_stats = False
    return root
