"""A traced program with what a call of ``cr.jit`` needs around it (``Entry``): where its
state comes from, where what it returns goes, the result's structure, and the call
itself, generic (``try_run``) or written as one function (``fast_call``)."""

import numpy as np

from .codegen import call_function
from .state import TensorState, untraced
from ..tensor import Tensor
from ..tensor_data import foreign, users

__all__ = ["Entry", "distinct"]


class Entry:
    """A traced program with what a call needs around it: where its state comes from,
    where what it returns goes, and the result's structure."""

    def __init__(self, program, template, traced_outputs, states, explicit, writes):
        self.program = program
        self.template = template
        self.traced_outputs = traced_outputs
        self.states = states
        self.explicit = explicit  # the states of tensor arguments, in argument order
        self.found = states[len(explicit):]  # the state found while tracing
        self.writes = writes
        self.writes_by_state = []  # [(state, [(what, where)])], in the order of writes
        for state, what, where in writes:
            if not self.writes_by_state or self.writes_by_state[-1][0] is not state:
                self.writes_by_state.append((state, []))
            self.writes_by_state[-1][1].append((what, where))
        # Gradients the program replaces without reading them are let go before it
        # runs, so that the memory they held is free for its new arrays (as in an eager
        # step, which sets them to None first)
        unused = {program.inputs[i] for i in program.unused}
        self.released = [state for state, what, _ in writes
                         if type(state) is TensorState and what == "grad"
                         and (state.grad_slot is None or state.grad_slot in unused)]
        # a program over another library's arrays (torch's, Dask's): its calls run in
        # that library, and what it returns is unwrapped
        self.foreign = any(foreign(program.values[n]) for n in program.inputs)
        self.guards = None  # check(args, kwargs): the state is where it was found
        self._fast = None

    def try_run(self, values, tensors, args, kwargs):
        """Run on this call's arguments, or None if the state does not fit. The key
        already matched: the tensor arguments have the traced shapes, so only the state
        found on the way (a closure's model, an optimizer) is checked."""
        if self.guards is not None and not self.guards(args, kwargs):
            return None
        values = list(values)  # (another entry may be tried after this one)
        explicit = self.explicit
        if explicit:
            if len(tensors) != len(explicit):
                tensors = distinct(tensors)
            for state, tensor in zip(explicit, tensors):
                state.tensor = tensor  # this call's tensor in the argument's place
                values.append(tensor._data)
                if state.grad_slot is not None:
                    values.append(tensor._grad)
        for state in self.found:
            if not state.read(values):
                return None
        for i in self.program.unused:
            values[i] = None
        for state in self.released:
            state.tensor._grad = None
        outputs = self.program(values)
        for state, writes in self.writes_by_state:
            state.write_all({what: _written(where, outputs) for what, where in writes})
        return (_rebuild(self.template, outputs, self.foreign),)

    def rebuild(self, outputs):
        return _rebuild(self.template, [untraced(o) for o in outputs], self.foreign)

    def fast_call(self, key):
        """``call(args, kwargs)``: what ``Jitted.__call__`` and ``try_run`` do for this
        program, as one function the code generator writes (``codegen.call_function``),
        or ``MISS`` where a check fails; None where the signature has a form it does
        not cover (the generic path serves it)."""
        if self._fast is None:
            # (one over another library's arrays checks them on the generic path)
            self._fast = (not self.foreign and call_function(self, key)) or False
        return self._fast or None


def distinct(items):
    seen = []
    for item in items:
        if not any(item is s for s in seen):
            seen.append(item)
    return seen


def _written(where, outputs):
    """The value a write puts back: a run's output, or a constant (a copy of an array,
    as the function made it anew)."""
    if type(where) is int:
        return outputs[where]
    value = where[1]
    return value.copy() if type(value) is np.ndarray else value


def _rebuild(template, outputs, unwrap=False):
    """The function's result from a run's outputs; ``unwrap``: a program over another
    library's arrays gives back that library's arrays, never the engine's wrappers."""
    tag, body = template[0], template[1]
    if tag == "out":
        return users(outputs[body]) if unwrap else outputs[body]
    if tag == "tensor":
        value = outputs[body]
        return Tensor._make(value if foreign(value) else np.asarray(value))
    if tag == "const":
        return users(body) if unwrap else body
    if tag is dict:
        return {k: _rebuild(v, outputs, unwrap) for k, v in body.items()}
    if tag == "node":
        return body[0]([_rebuild(item, outputs, unwrap) for item in body[1]])
    return tag(_rebuild(item, outputs, unwrap) for item in body)
