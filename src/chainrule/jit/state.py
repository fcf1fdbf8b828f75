"""The state a cr.jit program reads and writes besides its arguments, piece by piece:
a tensor (its array and gradient), a module (its train/eval mode), an optimizer (its
learning rates and per-parameter state). Each piece knows how to read itself into a
run's inputs, which of the run's outputs are its new values, and how to write them
back (``jit.py`` decides when a program can be replayed and finds the pieces as the
trace touches them).
"""

import numpy as np

from . import recording
from ..tensor import Tensor

__all__ = ["TensorState", "ModuleState", "OptimizerState", "grad_key", "untraced",
           "output_index"]


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
    return x._value if type(x) is recording.Traced else x


class TensorState:
    """A tensor the program reads: its array (and gradient, if it has one) are inputs;
    what the function left in them is written back."""

    def __init__(self, tensor, trace, name):
        self.tensor = tensor
        self.trace = trace
        data, grad = tensor._data, tensor._grad
        self.key = (data.shape, data.dtype, tensor.requires_grad, grad_key(grad))
        self.initial_grad = grad
        traced = trace.input(data)
        self.name = name
        self.names = {traced._slot: name}
        tensor._data = traced
        self.data_slot = traced._slot
        self.grad_slot = None
        if isinstance(grad, np.ndarray):
            traced_grad = trace.input(grad)
            self.names[traced_grad._slot] = f"{name}.grad"
            tensor._grad = traced_grad
            self.grad_slot = traced_grad._slot

    def read(self, values):
        """Append this call's inputs; False if the tensor no longer fits the program."""
        t = self.tensor
        data, grad = t._data, t._grad
        if (type(data) is not np.ndarray or
                (data.shape, data.dtype, t.requires_grad, grad_key(grad)) != self.key):
            return False
        values.append(data)
        if self.grad_slot is not None:
            values.append(grad)
        return True

    def writes(self, outputs):
        """[(what, where)]: "data" or "grad", and an output index or ("const", v)."""
        found = []
        t = self.tensor
        if type(t._data) is recording.Traced and t._data._slot != self.data_slot:
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

    def write(self, what, value):
        if what == "data":
            self.tensor.data = value  # as an optimizer does: a new version
        else:
            self.tensor.grad = value  # (the setter: not tracing now)

    def restore(self):
        t = self.tensor
        t._data = untraced(t._data)
        t._grad = untraced(t._grad)


class ModuleState:
    """A module the function called: the program holds for its mode (train or eval, of
    it and every module below it: Dropout draws only in training)."""

    names = {}

    def __init__(self, module):
        self.modules = list(module.modules())
        self.key = tuple(m.training for m in self.modules)

    def read(self, values):
        for module, training in zip(self.modules, self.key):
            if module.training is not training:
                return False
        return True

    def writes(self, outputs):
        return []

    def restore(self):
        pass


class OptimizerState:
    """An optimizer the program steps: its parameters are adopted as tensors; its
    learning rates and per-parameter state (arrays and numbers) are inputs."""

    def __init__(self, optimizer, trace, session):
        self.optimizer = optimizer
        self.names = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                if isinstance(p, Tensor):
                    session.adopt(p)
        # what a replay needs to hold still: each group's hyperparameters (the
        # learning rate by type: it is an input) and parameters, each parameter's state
        self.groups = [(tuple((k, type(v) if k == "lr" and _is_number(v) else v)
                              for k, v in group.items() if k != "params"),
                        list(group["params"])) for group in optimizer.param_groups]
        self.params = _params(optimizer)
        self.state_kinds = [(p, {name: _state_key(v)
                                 for name, v in optimizer.state.get(p, {}).items()})
                            for p in self.params]
        self.slots = []    # where each input comes from: ("lr", group) or ("state", i, name)
        self.initial = {}  # where -> the traced input
        for gi, group in enumerate(optimizer.param_groups):
            if _is_number(group.get("lr")):
                self._take(trace, group, "lr", ("lr", gi), f"lr{gi}")
        for pi, p in enumerate(_params(optimizer)):
            state = optimizer.state.get(p)
            for name in sorted(state or ()):
                if _is_number(state[name]) or type(state[name]) is np.ndarray:
                    self._take(trace, state, name, ("state", pi, name), f"{name}{pi}")

    def _take(self, trace, container, name, where, label):
        traced = trace.input(container[name])
        container[name] = traced
        self.names[traced._slot] = label
        self.slots.append(where)
        self.initial[where] = traced

    def read(self, values):
        """Append this call's inputs; False if the optimizer no longer fits the program:
        other hyperparameters (the learning rate excepted: it is an input), other
        parameters, or state of other kinds or shapes than traced."""
        opt = self.optimizer
        groups = opt.param_groups
        if len(groups) != len(self.groups):
            return False
        for group, (settings, params) in zip(groups, self.groups):
            listed = group["params"]
            if (len(group) != len(settings) + 1 or len(listed) != len(params)
                    or any(a is not b for a, b in zip(listed, params))):
                return False
            for name, expected in settings:
                value = group[name]
                if name == "lr" and type(expected) is type:
                    if type(value) is not expected:
                        return False
                elif not (value is expected or value == expected):
                    return False
        state = opt.state
        for p, kinds in self.state_kinds:
            entries = state.get(p)
            if (entries or {}).keys() != kinds.keys():
                return False
            for name, kind in kinds.items():
                if _state_key(entries[name]) != kind:
                    return False
        for where in self.slots:
            if where[0] == "lr":
                values.append(groups[where[1]]["lr"])
            else:
                values.append(state[self.params[where[1]]][where[2]])
        return True

    def writes(self, outputs):
        found = []
        opt = self.optimizer
        for pi, p in enumerate(_params(opt)):
            state = opt.state.get(p)
            for name in sorted(state or ()):
                value = state[name]
                where = (pi, name)
                if type(value) is recording.Traced:
                    if self.initial.get(("state",) + where) is not value:
                        found.append((where, output_index(outputs, value)))
                elif ("state",) + where not in self.initial:
                    found.append((where, ("const", value)))
        return found

    def describe(self, where):
        return f"{where[1]}{where[0]}"  # momentum_buffer0: the first parameter's

    def source(self, where):
        traced = self.initial.get(("state",) + where)
        return None if traced is None else traced._slot

    def write(self, where, value):
        self.optimizer.state.setdefault(self.params[where[0]], {})[where[1]] = value

    def restore(self):
        opt = self.optimizer
        for group in opt.param_groups:
            group["lr"] = untraced(group.get("lr"))
        for state in opt.state.values():
            for name in state:
                state[name] = untraced(state[name])


def _params(opt):
    return [p for group in opt.param_groups for p in group["params"]]


def _is_number(x):
    return type(x) in (float, int)


def _state_key(v):
    """What a replay needs of a state entry: an array's shape and dtype, a number's
    type, anything else itself (compared by identity)."""
    if type(v) is np.ndarray:
        return ("a", v.shape, v.dtype)
    if _is_number(v):
        return type(v)
    return ("object", id(v))
