"""The base of the optimizers: parameter groups, per-parameter state, ``step()``, saving
and resuming, and cr.jit's state protocol. Each optimizer (``sgd.py``, ``adam.py``,
...) adds the checks of its hyperparameters and the update of one parameter.

A parameter is either

* a scalar ``Value``: ``.data`` and ``.grad`` are floats. A grad of 0.0 is a real
  gradient (a dead ReLU unit's, say): momentum and weight decay still apply, as they
  do in PyTorch for a zero gradient. Only a grad of None is skipped; or
* a ``Tensor``: ``.data`` an ndarray, ``.grad`` an ndarray of the same shape, or None
  (skipped, as PyTorch skips a parameter without a gradient).

Both go through one code path: the parameter's numbers are read as NumPy values, the
update is computed with NumPy, and the result is written back (a Value keeps a Python
float; a Tensor keeps its dtype, so float32 stays float32). Per-parameter state
(momentum buffers, Adam's moments) is NumPy too (torch's, Dask's for their Tensors).
"""

from collections.abc import Iterable
from typing import Any, Callable

import numpy as np

from ... import arrays as xp, tensor_data
from ...modes import enable_grad, no_grad
from ...arrays import as_array
from ...tensor import Tensor
from ...scalar.value import Value
from ..hyperparameters import require_number

__all__ = ["Optimizer", "Params"]

# What an optimizer updates: Values or Tensors, (name, parameter) pairs as
# named_parameters() gives them, or parameter groups (dicts with a "params" list).
Params = (Iterable[Tensor | Value] | Iterable[tuple[str, Tensor | Value]]
          | Iterable[dict[str, Any]] | dict[str, Any])


# ---------------------------------------------------------------------------------------
# Reading and writing a parameter: the only place that knows the two engines apart
# ---------------------------------------------------------------------------------------

def _read(p):
    """``(data, grad)`` of a parameter as NumPy values; grad is None if there is none."""
    if isinstance(p, Tensor):
        data, grad = p.data, p.grad
        if grad is None:
            return data, None
        if isinstance(grad, Tensor):  # left by backward(create_graph=True)
            grad = grad.data
        data, grad = tensor_data.for_update(p._data, data, grad)  # (torch's: in torch)
        grad = as_array(grad, dtype=data.dtype)  # no copy when the dtype already fits
        if grad.shape != data.shape:
            raise ValueError(f"optimizer: a parameter of shape {data.shape} has a gradient "
                             f"of shape {grad.shape}; expected the parameter's shape")
        return data, grad
    grad = p.grad
    if isinstance(grad, Value):  # left by backward(create_graph=True)
        grad = grad.data
    if grad is None:
        return None, None
    return np.asarray(p.data, dtype=np.float64), np.asarray(grad, dtype=np.float64)


def _write(p, new):
    if isinstance(p, Tensor):
        # NumPy turns 0-d results into scalars, and a float64 hyperparameter could widen
        # a float32 update: the array written back is always the parameter's own dtype.
        p.data = as_array(new, dtype=p.dtype)
    else:
        p.data = float(new)


def _describe(p):
    if isinstance(p, Tensor):
        return f"Tensor of shape {p.shape}"
    return repr(p)


# ---------------------------------------------------------------------------------------
# Optimizer
# ---------------------------------------------------------------------------------------

class Optimizer:
    """The base of every optimizer: parameter groups, per-parameter state, ``step()``.

    ``params`` is an iterable of Values or Tensors (or of ``(name, parameter)`` pairs,
    as ``named_parameters()`` gives), or of dicts (parameter groups), each with a
    ``"params"`` list and any hyperparameters that differ from ``defaults``::

        SGD([{"params": body.parameters()},
             {"params": head.parameters(), "lr": 1e-3}], lr=1e-2)

    A subclass validates its hyperparameters in ``_check(group)`` and computes one
    parameter's update in ``_update(data, grad, state, group) -> new data``, with NumPy
    (``data`` and ``grad`` are arrays of the same shape; 0-d for a Value).

    >>> class SignSGD(cr.optim.Optimizer):           # p -= lr * sign(g)
    ...     def __init__(self, params, lr=0.1):
    ...         super().__init__(params, dict(lr=lr))
    ...     def _update(self, data, grad, state, group):
    ...         return data - group["lr"] * np.sign(grad)
    >>> x = cr.Value(1.0)
    >>> opt = SignSGD([x])
    >>> (x * x).backward(); opt.step(); x.data
    0.9
    """

    def __init__(self, params: Params, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = {}  # parameter -> its state (a dict), created at its first update
        if isinstance(params, (Tensor, Value)):
            raise TypeError(f"{self._name}: params should be an iterable of Values or "
                            f"Tensors (or of dicts), got a single {type(params).__name__}; "
                            f"wrap it in a list")
        if isinstance(params, dict):
            params = [params]
        try:
            params = list(params)
        except TypeError:
            raise TypeError(f"{self._name}: params should be an iterable of Values or "
                            f"Tensors (or of dicts), got {type(params).__name__}") from None
        if not params:
            raise ValueError(f"{self._name}: got an empty parameter list; expected at least "
                             f"one Value or Tensor (did the model define its parameters?)")
        if not isinstance(params[0], dict):  # one group of parameters
            params = [{"params": params}]
        for group in params:
            self.add_param_group(group)

    @property
    def _name(self):
        return type(self).__name__

    def __repr__(self):
        lines = [f"{self._name} ("]
        for i, group in enumerate(self.param_groups):
            settings = ", ".join(f"{k}={v!r}" for k, v in group.items() if k != "params")
            lines.append(f"  group {i}: {len(group['params'])} parameters, {settings}")
        return "\n".join(lines + [")"])

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a dict ``{"params": [...], **hyperparameters}``; missing ones come from
        the defaults."""
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{self._name}: a parameter group should be a dict with a "
                            f"'params' key, got {type(group).__name__}")
        params = group["params"]
        if isinstance(params, (Tensor, Value)):
            params = [params]
        # (name, parameter) pairs, as named_parameters() gives, are taken too.
        params = [p[1] if _is_named(p) else p for p in params]
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, (Tensor, Value)):
                raise TypeError(f"{self._name}: can only optimize Values and Tensors, got "
                                f"{type(p).__name__} {p!r}")
            if isinstance(p, Tensor) and not p.is_leaf:
                raise ValueError(f"{self._name}: can only optimize leaf tensors (inputs and "
                                 f"parameters), got the result of an operation "
                                 f"({_describe(p)}); optimize the tensors it was made from")
            if id(p) in seen:
                raise ValueError(f"{self._name}: the same parameter ({_describe(p)}) appears "
                                 f"twice; each parameter may be listed once, in one group")
            seen.add(id(p))
        group = {**self.defaults, **group, "params": params}
        self._check(group)
        self.param_groups.append(group)

    def _check(self, group):
        lr = group.get("lr")
        require_number(self._name, "lr", lr)
        if not lr >= 0:
            raise ValueError(f"{self._name}: lr must be >= 0, got {lr!r}")

    @staticmethod
    def _decayed(p, g, group, decoupled=False):
        """The parameter and the gradient a step starts from, in PyTorch's order: the
        gradient's sign flipped for ``maximize``, then ``weight_decay`` either added to
        it (L2, ``g + decay * p``) or, ``decoupled``, applied to the weights
        (``p * (1 - lr * decay)``, AdamW's)."""
        if group["maximize"]:
            g = -g
        decay = group["weight_decay"]
        if decay:
            if decoupled:
                p = p * (1 - group["lr"] * decay)
            else:
                g = g + decay * p
        return p, g

    def _update(self, data, grad, state, group):
        """The new value of one parameter; each optimizer defines its own rule."""
        raise TypeError(f"{type(self).__name__} defines no update rule: use one of "
                        f"chainrule.optim's (SGD, Adam, ...), or subclass Optimizer and "
                        f"define _update(self, data, grad, state, group) -> new data")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients before the next backward pass: a Tensor's ``.grad``
        becomes None (or zeros, with ``set_to_none=False``), a Value's 0.0."""
        xp.touch(self)
        for group in self.param_groups:
            for p in group["params"]:
                if isinstance(p, Value):
                    p.grad = 0.0
                else:
                    p.grad = None if set_to_none or p.grad is None else tensor_data.zeros_like(p)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # closure's result
        """Update every parameter that has a gradient, once.

        ``closure``, if given, is called first (with gradients switched on) to compute
        the loss and the gradients again; its result is returned.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        trace = xp.recorder()
        if trace is not None:  # cr.jit: the parameters and state become the program's
            trace.adopt(self)
            trace.mark(f"update ({self._name})")
        with no_grad():  # the update itself is not part of any graph
            for group in self.param_groups:
                group = _python_numbers(group)
                for p in group["params"]:
                    data, grad = _read(p)
                    if grad is None:
                        continue
                    state = self.state.setdefault(p, {})
                    _write(p, self._update(data, grad, state, group))
        return loss

    def _jit_state_(self) -> tuple[dict, tuple]:
        """cr.jit's state protocol (docs/conventions.md): each group's learning rate (an
        input), each parameter and its state; the other hyperparameters are the mode."""
        arrays, settings, i = {}, [], 0
        for g, group in enumerate(self.param_groups):
            lr = group["lr"]  # (a NumPy float scalar as a number: float32 state stays so)
            arrays["lr", g] = float(lr) if isinstance(lr, np.floating) else lr
            settings.append(tuple([kv for kv in group.items()
                                   if kv[0] != "params" and kv[0] != "lr"]))
            for p in group["params"]:
                arrays["param", i] = p
                for name, value in self.state.get(p, {}).items():
                    arrays["state", i, name] = value
                i += 1
        return arrays, tuple(settings)

    def _jit_load_(self, arrays: dict) -> None:
        params = [p for group in self.param_groups for p in group["params"]]
        for key, value in arrays.items():
            if key[0] == "lr":
                self.param_groups[key[1]]["lr"] = value
            elif key[0] == "state":  # (a parameter is updated in its own array)
                self.state.setdefault(params[key[1]], {})[key[2]] = value

    # --- saving and resuming ------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {name: array}}, "param_groups": [...]}``, PyTorch's layout:
        parameters are numbered across groups in order, and stored by number."""
        groups, state, number = [], {}, 0
        for group in self.param_groups:
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": list(range(number, number + len(group["params"])))})
            for p in group["params"]:
                if self.state.get(p):  # (nothing kept, as SGD without momentum: none)
                    state[number] = {k: _copy(v) for k, v in self.state[p].items()}
                number += 1
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from ``state_dict()``: same groups, same number of parameters in each."""
        try:
            groups, state = state_dict["param_groups"], state_dict["state"]
        except (KeyError, TypeError):
            raise ValueError(f"{self._name}.load_state_dict: expected a dict with "
                             f"'state' and 'param_groups', as state_dict() returns") from None
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{self._name}.load_state_dict: the saved state has "
                             f"{len(groups)} parameter groups, this optimizer "
                             f"{len(self.param_groups)}")
        for i, (saved, own) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(own["params"]):
                raise ValueError(f"{self._name}.load_state_dict: group {i} has "
                                 f"{len(saved['params'])} parameters in the saved state, "
                                 f"{len(own['params'])} here")
        by_number = {n: p for saved, own in zip(groups, self.param_groups)
                     for n, p in zip(saved["params"], own["params"])}
        new_state = {}
        for number, entries in state.items():
            p = by_number.get(int(number))
            if p is None:
                raise ValueError(f"{self._name}.load_state_dict: the saved state refers to "
                                 f"parameter {number}, which no group lists")
            shape = tuple(p.shape) if isinstance(p, Tensor) else ()
            for name, v in entries.items():
                expected = self._state_shape(name, shape)
                if isinstance(v, np.ndarray) and v.ndim and v.shape != expected:
                    raise ValueError(f"{self._name}.load_state_dict: {name!r} of parameter "
                                     f"{number} has shape {v.shape}, expected {expected}")
            new_state[p] = {k: _in_dtype_of(p, k, _copy(v)) for k, v in entries.items()}
        for saved, own in zip(groups, self.param_groups):
            own.update({k: v for k, v in saved.items() if k != "params"})
        self.state = new_state


    def _state_shape(self, name: str, shape: tuple) -> tuple:
        """The shape of the state entry ``name`` of a parameter of shape ``shape``, as
        load_state_dict checks it: the parameter's own (Adafactor's factored moments
        are not)."""
        return shape


def _is_named(item):
    return (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], (Tensor, Value)))


def _copy(v):
    return v.copy() if isinstance(v, (np.ndarray, np.generic)) else v


def _python_numbers(group):
    """The group, with NumPy float scalars among its hyperparameters (a learning rate a
    schedule computed, betas of np.float64) as Python floats: a Python number keeps a
    float32 parameter and its state float32, where NumPy's float64 scalar would make them
    float64 (as PyTorch treats NumPy's scalars as numbers). The group itself where there
    are none, as usual."""
    for value in group.values():
        if isinstance(value, np.floating) or (
                type(value) is tuple and any(isinstance(v, np.floating) for v in value)):
            break
    else:
        return group
    plain = lambda v: float(v) if isinstance(v, np.floating) else v
    return {k: tuple(map(plain, v)) if type(v) is tuple else plain(v)
            for k, v in group.items()}


def _in_dtype_of(p, name, value):
    """A saved state entry in its parameter's float dtype, as PyTorch loads one (the step
    count stays as saved): a float64 state resumed for float32 parameters is float32. A
    complex state for a real parameter is refused: casting would drop its imaginary part."""
    dtype = getattr(p, "dtype", None)
    if name == "step" or dtype is None or not isinstance(value, np.ndarray) or \
            value.dtype.kind not in "fc" or value.dtype == dtype:
        return value
    if value.dtype.kind == "c" and dtype.kind != "c":
        raise ValueError(f"load_state_dict: the saved {name!r} is {value.dtype} for a "
                         f"parameter of dtype {dtype}; expected a real state for a real "
                         f"parameter (was the state saved from complex parameters?)")
    return value.astype(dtype)
