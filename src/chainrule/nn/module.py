"""Module: the base of every model, holding the parameters that training updates.

PyTorch's shape: a module's parameters are found by walking its attributes (Parameters,
Values, other modules, and lists of those), so a model is written as plain attributes.
micrograd's scalar modules (Neuron, Layer, MLP) are modules too.
"""

import numpy as np

from ..tensor import Tensor
from ..value import Value

__all__ = ["Module", "Parameter"]


class Parameter(Tensor):
    """A Tensor that a Module trains: it requires grad and is listed by parameters()."""

    __slots__ = ()

    def __init__(self, data, dtype=None):
        super().__init__(data, requires_grad=True, dtype=dtype)


def _is_parameter(x):
    return isinstance(x, (Parameter, Value))


class Module:
    """A model or a part of one.

    ``parameters()`` lists the Parameters (and scalar Values) held in attributes, in the
    order they were set; ``zero_grad()`` clears their gradients before the next step
    (as micrograd's Module does); ``train()`` / ``eval()`` switch modes such as Dropout;
    ``state_dict()`` / ``load_state_dict()`` save and restore the numbers.
    """

    training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """The computation of the module; subclasses define it."""
        raise TypeError(f"{type(self).__name__} defines no forward(); a Module subclass "
                        f"computes its output in forward(self, x)")

    # --- what the module holds ------------------------------------------------------

    def named_children(self):
        """(name, module) pairs of the submodules held in attributes."""
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def named_parameters(self, prefix=""):
        """(name, parameter) pairs, names like ``layers.0.weight``. A parameter shared by
        two layers is listed once (under its first name), so an optimizer steps it once."""
        seen = set()
        for name, p in self._walk_parameters(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def _walk_parameters(self, prefix):
        for name, value in vars(self).items():
            full = f"{prefix}{name}"
            if _is_parameter(value):
                yield full, value
            elif isinstance(value, Module):
                yield from value._walk_parameters(full + ".")
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if _is_parameter(item):
                        yield f"{full}.{i}", item
                    elif isinstance(item, Module):
                        yield from item._walk_parameters(f"{full}.{i}.")

    def parameters(self):
        """The parameters, each once, in the order they were set."""
        return [p for _, p in self.named_parameters()]

    def zero_grad(self):
        """Clear the gradients: None for Tensors, 0.0 for scalar Values."""
        for p in self.parameters():
            p.grad = 0.0 if isinstance(p, Value) else None

    # --- modes ----------------------------------------------------------------------

    def train(self, mode=True):
        """Training mode (Dropout active) for this module and all below it."""
        self.training = bool(mode)
        for _, child in self.named_children():
            child.train(mode)
        return self

    def eval(self):
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    # --- saving and restoring -------------------------------------------------------

    def state_dict(self):
        """Name -> a copy of the parameter's numbers (an ndarray)."""
        return {name: np.array(p.data, copy=True) for name, p in self.named_parameters()}

    def load_state_dict(self, state):
        """Copy numbers in; names and shapes must match exactly (the error names both)."""
        own = dict(self.named_parameters())
        missing = [name for name in own if name not in state]
        unexpected = [name for name in state if name not in own]
        if missing or unexpected:
            raise ValueError(f"load_state_dict: {type(self).__name__} does not match: "
                             f"missing {missing or 'nothing'}, unexpected "
                             f"{unexpected or 'nothing'}")
        arrays = {}
        for name, p in own.items():  # check every shape before changing anything
            array = np.asarray(state[name].data if isinstance(state[name], Tensor)
                               else state[name])
            shape = np.shape(p.data)
            if array.shape != shape:
                raise ValueError(f"load_state_dict: parameter {name!r} has shape {shape} "
                                 f"in the model but {array.shape} in the state")
            arrays[name] = array
        for name, p in own.items():
            array = arrays[name]
            if isinstance(p, Value):
                p.data = float(array)
            else:
                p.data = array.astype(p.dtype, copy=True)
        return self

    # --- a tree for repr ------------------------------------------------------------

    def extra_repr(self):
        """What repr shows inside the parentheses (a subclass's settings)."""
        return ""

    def __repr__(self):
        children = list(self.named_children())
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"
