"""A Module's backward hooks, as torch's: ``register_full_backward_pre_hook`` (called
with the gradients of the module's outputs, ``grad_output``, and may replace them) and
``register_full_backward_hook`` (called with the gradients of its positional inputs
too, ``grad_input``, and may replace those).

A call of a module with such hooks passes its tensors through two gates, each an
operation that changes no number: one between the positional inputs that require grad
and the forward, one between the forward's outputs and the caller. The backward walk
reaches a gate once every gradient of its side has arrived (a gate of several tensors
joins them into one flat tensor, so that they arrive together), and the gate's tensor
hook (gradient_hooks.py) calls the module's hooks there. As torch's:

* only the positional inputs count (a keyword's tensor is not in ``grad_input``); a
  tensor among them that does not require grad gets zeros, anything else None;
* only the output itself, or the top-level entries of a tuple or list it returns,
  count; an output no gradient reached is None in ``grad_output``;
* where no input requires grad, the hook is called once the outputs' gradients are
  known, with None for every input.

>>> layer = cr.nn.Linear(2, 1, rng=0)
>>> seen = []
>>> handle = layer.register_full_backward_hook(
...     lambda m, grad_input, grad_output: seen.append(grad_output[0].tolist()))
>>> layer(cr.ones(1, 2, requires_grad=True)).sum().backward()
>>> seen
[[[1.0]]]
"""

from typing import Any

import numpy as np

from .. import rules as ops
from ..boxes import Box
from ..gradient_hooks import add_hook
from ..modes import _modes
from ..tensor import Tensor

__all__ = ["has_backward_hooks", "gate_inputs", "gate_outputs"]


def has_backward_hooks(module: Any) -> bool:
    held = module.__dict__
    return "_backward_hooks" in held or "_backward_pre_hooks" in held


class _Call:
    """What one call's gates share: the positional arguments, and the gradients of the
    outputs once the output gate has them (the input gate, later in the walk, reads
    them)."""

    def __init__(self, module: Any, args: tuple) -> None:
        self.module, self.args = module, args
        self.grad_output: tuple | None = None
        self.inputs_gated = False


def gate_inputs(module: Any, args: tuple) -> tuple[tuple, _Call]:
    """The positional arguments, those that require grad passed through the input gate;
    and the call's record, for ``gate_outputs``."""
    call = _Call(module, args)
    _refuse_tracers(module, args, "an argument")
    needing = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if not needing or not _modes.grad_enabled:
        return args, call
    call.inputs_gated = True
    tensors = [args[i] for i in needing]

    def on_inputs(g):
        parts = _split(g, tensors)
        grad_input = tuple(parts[needing.index(i)] if i in needing else
                           Tensor._make(np.zeros(a.shape, a.dtype)) if isinstance(a, Tensor)
                           else None for i, a in enumerate(args))
        grad_input = _run_full_hooks(module, grad_input, call.grad_output)
        return _joined([grad_input[i] for i in needing], tensors)

    gated = _gate(tensors, on_inputs)
    out = list(args)
    for i, t in zip(needing, gated):
        out[i] = t
    return tuple(out), call


def gate_outputs(call: _Call, output: Any) -> Any:
    """The output, its tensors that require grad passed through the output gate."""
    module = call.module
    items = list(output) if isinstance(output, (tuple, list)) else [output]
    _refuse_tracers(module, items, "an output")
    places = [j for j, o in enumerate(items) if isinstance(o, Tensor) and o.requires_grad]
    if not places or not _modes.grad_enabled:
        return output
    tensors = [items[j] for j in places]
    arrived = [False] * len(places)

    def on_outputs(g):
        parts = _split(g, tensors)
        grad_output = tuple(parts[places.index(j)] if j in places and arrived[places.index(j)]
                            else None for j in range(len(items)))
        for hook, _, _ in list(module.__dict__.get("_backward_pre_hooks", {}).values()):
            result = hook(module, grad_output)
            if result is not None:
                grad_output = _checked(result, grad_output, module, "pre-hook")
        call.grad_output = grad_output
        if not call.inputs_gated:  # no input requires grad: the hook is called now
            _run_full_hooks(module, (None,) * len(call.args), grad_output)
        return _joined([grad_output[j] for j in places], tensors)

    gated = _gate(tensors, on_outputs, arrived)
    for j, t in zip(places, gated):
        items[j] = t
    if isinstance(output, (tuple, list)):
        return type(output)(items)
    return items[0]


def _run_full_hooks(module, grad_input, grad_output):
    for hook, _, _ in list(module.__dict__.get("_backward_hooks", {}).values()):
        result = hook(module, grad_input, grad_output)
        if result is not None:
            grad_input = _checked(result, grad_input, module, "hook")
    return grad_input


def _gate(tensors, on_arrival, arrived=None):
    """The tensors through one operation that changes no number, ``on_arrival`` hooked
    on it: called with the gradients of all of them at once (flat and joined, for
    several), it returns the gradient to pass on. ``arrived[k]`` turns True when a
    gradient reaches the k-th tensor (with one tensor, the gate's own hook is that)."""
    if len(tensors) == 1:
        gate = ops.reshape(tensors[0], tensors[0].shape)
        if arrived is not None:
            arrived[0] = True
        add_hook(gate, on_arrival)
        return [gate]
    dtype = np.result_type(*[t.dtype for t in tensors])
    if dtype.kind == "c" and any(t.dtype.kind != "c" for t in tensors):
        raise TypeError("backward hooks: a module's tensors that require grad are real "
                        "and complex together; the hooks need one kind (pass the real "
                        "ones as complex, or call the module's parts separately)")
    joined = ops.concatenate([ops.reshape(t, (-1,)) for t in tensors]).astype(dtype)
    add_hook(joined, on_arrival)
    gated, start = [], 0
    for k, t in enumerate(tensors):
        piece = ops.reshape(joined[start:start + t.size], t.shape)
        piece = piece if piece.dtype == t.dtype else piece.astype(t.dtype)
        if arrived is not None:
            add_hook(piece, lambda g, k=k: arrived.__setitem__(k, True))
        gated.append(piece)
        start += t.size
    return gated


def _split(g, tensors):
    """A gate's gradient as one Tensor per gated tensor, in each one's dtype."""
    if len(tensors) == 1:
        return [g]
    parts, start = [], 0
    for t in tensors:
        part = ops.reshape(g[start:start + t.size], t.shape)
        parts.append(part if part.dtype == t.dtype else part.astype(t.dtype))
        start += t.size
    return parts


def _joined(grads, tensors):
    """The gradients handed back by the hooks, as the gate's gradient (zeros for None)."""
    filled = [g if g is not None else Tensor._make(np.zeros(t.shape, t.dtype))
              for g, t in zip(grads, tensors)]
    if len(tensors) == 1:
        return filled[0]
    return ops.concatenate([ops.reshape(g, (-1,)) for g in filled])


def _checked(result, given, module, what):
    name = type(module).__name__
    if not isinstance(result, (tuple, list)) or len(result) != len(given):
        raise RuntimeError(f"{name}: a backward {what} must return None or a tuple of "
                           f"{len(given)} gradients (one per entry it was given), "
                           f"got {_described(result)}")
    for k, (new, old) in enumerate(zip(result, given)):
        if new is not None and old is not None and np.shape(new) != np.shape(old):
            raise RuntimeError(f"{name}: a backward {what} returned a gradient of shape "
                               f"{np.shape(new)} at position {k}; expected "
                               f"{np.shape(old)}")
    return tuple(result)


def _described(result):
    if isinstance(result, (tuple, list)):
        return f"a {type(result).__name__} of {len(result)}"
    return type(result).__name__


def _refuse_tracers(module, values, what):
    for v in values:
        if isinstance(v, Box) and not isinstance(v, Tensor):
            raise RuntimeError(f"{type(module).__name__}: backward hooks run in a "
                               f"Tensor's backward(), and {what} is a transform's traced "
                               f"value (cr.grad, vmap, jvp...); remove the hooks, or "
                               f"compute the gradient with .backward()")
