"""Optimizers and learning-rate schedules, with PyTorch's semantics, for both engines.

An optimizer holds parameters and moves them against their gradients at each
``step()``. A parameter is either

* a scalar ``Value``: ``.data`` and ``.grad`` are floats. A grad of 0.0 is a real
  gradient (a dead ReLU unit's, say): momentum and weight decay still apply, as they
  do in PyTorch for a zero gradient. Only a grad of None is skipped; or
* a ``Tensor``: ``.data`` an ndarray, ``.grad`` an ndarray of the same shape, or None
  (skipped, as PyTorch skips a parameter without a gradient).

Both go through one code path: the parameter's numbers are read as NumPy values, the
update is computed with NumPy, and the result is written back (a Value keeps a Python
float; a Tensor keeps its dtype, so float32 stays float32). Per-parameter state
(momentum buffers, Adam's moments) is NumPy too (torch's, Dask's for their Tensors).

    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        loss(model(x), y).backward()
        opt.step()

Schedules change ``lr`` in the optimizer's groups: after ``k`` calls of
``scheduler.step()`` the learning rate is what PyTorch's scheduler of the same name
gives after ``k`` calls. Call it once per epoch (or per step), after ``opt.step()``.

Every hyperparameter after ``lr`` is keyword-only: a call written for PyTorch's
positional order (``SGD(p, 0.1, 0.9, 0, 1e-4)``, weight decay 1e-4 there) raises
TypeError instead of setting some other hyperparameter.

>>> w = cr.tensor([1.0, -2.0], requires_grad=True)
>>> opt = cr.optim.SGD([w], lr=0.1)
>>> for step in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()        # the gradient is 2w
...     opt.step()                      # w -= 0.1 * 2w: w shrinks by 0.8 a step
>>> np.round(w.data, 6).tolist()
[0.64, -1.28]
"""

import math
from collections.abc import Iterable
from numbers import Real
from typing import Any, Callable

import numpy as np

from .. import arrays as xp, tensor_data
from ..modes import enable_grad, no_grad
from ..arrays import as_array
from ..tensor import Tensor
from ..scalar.value import Value

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LRScheduler", "StepLR", "CosineAnnealingLR",
           "LinearLR", "LinearWarmup", "LambdaLR"]

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
        _require_number(self._name, "lr", lr)
        if not lr >= 0:
            raise ValueError(f"{self._name}: lr must be >= 0, got {lr!r}")

    def _update(self, data, grad, state, group):
        """The new value of one parameter; each optimizer defines its own rule."""
        raise TypeError(f"{type(self).__name__} defines no update rule: use SGD, Adam or "
                        f"AdamW, or subclass Optimizer and define "
                        f"_update(self, data, grad, state, group) -> new data")

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
            arrays["lr", g] = group["lr"]
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
                if p in self.state:
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
            shape = p.shape if isinstance(p, Tensor) else ()
            for name, v in entries.items():
                if isinstance(v, np.ndarray) and v.ndim and v.shape != shape:
                    raise ValueError(f"{self._name}.load_state_dict: {name!r} of parameter "
                                     f"{number} has shape {v.shape}, expected {shape}")
            new_state[p] = {k: _copy(v) for k, v in entries.items()}
        for saved, own in zip(groups, self.param_groups):
            own.update({k: v for k, v in saved.items() if k != "params"})
        self.state = new_state


def _is_named(item):
    return (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], (Tensor, Value)))


def _copy(v):
    return v.copy() if isinstance(v, (np.ndarray, np.generic)) else v


def _require_number(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{owner}: {name} must be a real number, got "
                        f"{type(value).__name__} {value!r}")


def _require_nonnegative(owner, name, value):
    _require_number(owner, name, value)
    if not value >= 0:  # also refuses NaN
        raise ValueError(f"{owner}: {name} must be >= 0, got {value!r}")


def _require_flag(owner, name, value):
    # 0 and 1 are refused too: a number where a switch belongs is more often a
    # hyperparameter passed to the wrong name than a switch
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be True or False, got "
                        f"{type(value).__name__} {value!r}")


# ---------------------------------------------------------------------------------------
# SGD, Adam, AdamW
# ---------------------------------------------------------------------------------------

class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, Nesterov and L2 decay.

    With gradient ``g`` (plus ``weight_decay * p``) and a buffer ``b`` started at the
    first ``g``, then ``b = momentum * b + (1 - dampening) * g``::

        p -= lr * b                          # momentum
        p -= lr * (g + momentum * b)         # nesterov=True
        p -= lr * g                          # momentum=0

    ``maximize=True`` climbs instead: the gradient's sign is flipped before anything
    else (weight decay then still pulls the weights towards 0), as in PyTorch.

    >>> x = cr.Value(1.0); opt = cr.optim.SGD([x], lr=0.1)
    >>> (x * x).backward(); opt.step(); x.data    # 1 - 0.1 * 2
    0.8
    >>> x = cr.Value(1.0); opt = cr.optim.SGD([x], lr=0.1, maximize=True)
    >>> (x * x).backward(); opt.step(); x.data    # 1 + 0.1 * 2
    1.2
    """

    def __init__(self, params: Params, lr: float = 1e-3, *, momentum: float = 0,
                 dampening: float = 0, nesterov: bool = False,
                 weight_decay: float = 0, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      nesterov=nesterov, weight_decay=weight_decay,
                                      maximize=maximize))

    def _check(self, group):
        super()._check(group)
        _require_flag("SGD", "maximize", group["maximize"])
        _require_nonnegative("SGD", "momentum", group["momentum"])
        _require_number("SGD", "dampening", group["dampening"])
        _require_nonnegative("SGD", "weight_decay", group["weight_decay"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, "
                             f"got momentum={group['momentum']!r}, "
                             f"dampening={group['dampening']!r}")

    def _update(self, p, g, state, group):
        lr, momentum, decay = group["lr"], group["momentum"], group["weight_decay"]
        if group["maximize"]:
            g = -g
        if decay:
            g = g + decay * p
        if momentum:
            buf = state.get("momentum_buffer")
            # The first step takes the gradient as it is, undamped (PyTorch does so).
            if buf is None:
                buf = g.copy()
            else:  # (no dampening: g itself, not 1 * g, a copy)
                dampening = group["dampening"]
                buf = buf * momentum + ((1 - dampening) * g if dampening else g)
            state["momentum_buffer"] = buf
            g = g + momentum * buf if group["nesterov"] else buf
        return p - lr * g


class Adam(Optimizer):
    """Adam (Kingma and Ba), as PyTorch computes it.

    Moments ``m = beta1*m + (1-beta1)*g`` and ``v = beta2*v + (1-beta2)*g*g``, corrected
    for their zero start, give ``p -= lr/(1-beta1**t) * m / (sqrt(v/(1-beta2**t)) + eps)``
    at step ``t``. ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2, which
    Adam rescales); ``AdamW`` decays the weights directly instead.

    ``amsgrad=True`` (Reddi, Kale and Kumar) divides by the largest ``v`` seen so far,
    kept as the state ``max_exp_avg_sq``, so a parameter's steps never grow again when
    its gradients shrink. ``maximize=True`` climbs: the gradient's sign is flipped
    before anything else. Both as in PyTorch.

    >>> x = cr.Value(1.0); opt = cr.optim.Adam([x], lr=0.1)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # the first step is ~lr long
    0.9
    """

    _decoupled = False

    def __init__(self, params: Params, lr: float = 1e-3, *,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _check(self, group):
        super()._check(group)
        name = self._name
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            _require_number(name, f"betas[{i}]", beta)
            if not 0 <= beta < 1:
                raise ValueError(f"{name}: betas[{i}] must be in [0, 1), got {beta!r}")
        group["betas"] = tuple(betas)
        _require_nonnegative(name, "eps", group["eps"])
        _require_nonnegative(name, "weight_decay", group["weight_decay"])
        _require_flag(name, "amsgrad", group["amsgrad"])
        _require_flag(name, "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, eps, decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            g = -g
        if decay:
            if self._decoupled:
                p = p * (1 - lr * decay)
            else:
                g = g + decay * p
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p)
            state["exp_avg_sq"] = np.zeros_like(p)
        t = state["step"] = state["step"] + 1
        m = state["exp_avg"]
        m = state["exp_avg"] = m + (1 - beta1) * (g - m)
        v = state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + (1 - beta2) * g * g
        if group["amsgrad"]:
            # The maximum starts at 0, as PyTorch's does; also where the state was made
            # without amsgrad (PyTorch raises KeyError there): max(0, v) is v.
            v_max = state.get("max_exp_avg_sq")
            v_max = np.zeros_like(p) if v_max is None else v_max
            v = state["max_exp_avg_sq"] = np.maximum(v_max, v)
        step_size = lr / (1 - beta1 ** t)
        denom = np.sqrt(v) / (1 - beta2 ** t) ** 0.5 + eps  # (t may be traced: cr.jit)
        return p - step_size * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): each step first shrinks
    the weights, ``p *= 1 - lr * weight_decay``, then takes Adam's step on the plain
    gradient.

    >>> x = cr.Value(1.0); opt = cr.optim.AdamW([x], lr=0.1, weight_decay=0.5)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # 1 * 0.95 - 0.1
    0.85
    """

    _decoupled = True

    def __init__(self, params: Params, lr: float = 1e-3, *,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize)


# ---------------------------------------------------------------------------------------
# Learning-rate schedules
# ---------------------------------------------------------------------------------------

class LRScheduler:
    """The base of the schedules: ``lr_at(base_lr, k)`` is the learning rate after ``k``
    calls of ``step()``, computed from each group's learning rate at construction.

    Constructing a schedule sets the learning rate for k = 0 at once (as PyTorch does).
    One schedule per optimizer: each sets ``lr`` outright; to chain a warm-up and a
    decay, write the product in one ``LambdaLR``. A new schedule defines ``lr_at``.

    >>> class Halving(cr.optim.LRScheduler):
    ...     def lr_at(self, base_lr, k):
    ...         return base_lr / 2 ** k
    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = Halving(opt)
    >>> sched.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected an Optimizer, got "
                            f"{type(optimizer).__name__}")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            # The first schedule records the starting lr; later ones reuse it, so a
            # schedule made after another does not start from an already-decayed lr.
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = 0
        self._apply()

    def lr_at(self, base_lr: float, k: int) -> float:
        """The learning rate after ``k`` steps; each schedule defines its own."""
        raise TypeError(f"{type(self).__name__} defines no schedule: use StepLR, "
                        f"CosineAnnealingLR, LinearLR, LinearWarmup or LambdaLR, or "
                        f"subclass LRScheduler and define lr_at(self, base_lr, k)")

    def step(self) -> None:
        """Advance the schedule by one and set the groups' learning rates."""
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group, as last set: a list, one per group."""
        return list(self._last_lr)

    def _apply(self):
        self._last_lr = [self.lr_at(base, self.last_epoch) for base in self.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def state_dict(self) -> dict[str, Any]:
        """The schedule's position and settings, to save with a checkpoint."""
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what state_dict() returned."""
        self.last_epoch = int(state_dict["last_epoch"])
        self.base_lrs = list(state_dict["base_lrs"])
        self._apply()


def _require_positive_int(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{owner}: {name} must be a positive integer, got {value!r}")


def _require_fraction(owner, name, value):
    _require_number(owner, name, value)
    if not 0 <= value <= 1:
        raise ValueError(f"{owner}: {name} must be in [0, 1], got {value!r}")


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps:
    ``lr = base_lr * gamma ** (k // step_size)``.

        sched = StepLR(opt, step_size=10, gamma=0.5)   # 10 steps at lr, 10 at lr/2, ...

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.StepLR(opt, step_size=2, gamma=0.5)
    >>> [sched.lr_at(1.0, k) for k in range(5)]     # the lr after k calls of step()
    [1.0, 1.0, 0.5, 0.5, 0.25]
    >>> sched.step(); sched.step(); opt.param_groups[0]["lr"]
    0.5
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        _require_positive_int("StepLR", "step_size", step_size)
        _require_nonnegative("StepLR", "gamma", gamma)
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * gamma ** (k // step_size)."""
        return base_lr * self.gamma ** (k // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from the base learning rate down to ``eta_min`` over ``T_max``
    steps: ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * k / T_max)) / 2``.

    Past ``T_max`` it rises again (the cosine goes on), as in PyTorch.

        sched = CosineAnnealingLR(opt, T_max=100)     # lr/2 after 50 steps, 0 after 100

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.CosineAnnealingLR(opt, T_max=4)
    >>> [round(sched.lr_at(1.0, k), 4) for k in range(5)]
    [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:
        _require_positive_int("CosineAnnealingLR", "T_max", T_max)
        _require_nonnegative("CosineAnnealingLR", "eta_min", eta_min)
        self.T_max, self.eta_min = int(T_max), eta_min
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """eta_min + (base_lr - eta_min) * (1 + cos(pi * k / T_max)) / 2."""
        cosine = math.cos(math.pi * k / self.T_max)
        return self.eta_min + (base_lr - self.eta_min) * (1 + cosine) / 2


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` steps, then staying there (PyTorch's LinearLR).

        sched = LinearLR(opt, start_factor=0.5, total_iters=4)   # lr * .5 .625 .75 .875 1

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.LinearLR(opt, start_factor=0.5, total_iters=4)
    >>> [sched.lr_at(1.0, k) for k in range(6)]
    [0.5, 0.625, 0.75, 0.875, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5) -> None:
        name = type(self).__name__
        _require_fraction(name, "start_factor", start_factor)
        _require_fraction(name, "end_factor", end_factor)
        _require_positive_int(name, "total_iters", total_iters)
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = int(total_iters)
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr times a factor going linearly from start_factor to end_factor."""
        done = min(k, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)


class LinearWarmup(LinearLR):
    """Warm up: the learning rate rises linearly from ``start_factor * lr`` to ``lr``
    over ``warmup_steps`` steps, then stays at ``lr``.

    ``start_factor=0`` starts at 0. The same as
    ``LinearLR(optimizer, start_factor, 1.0, warmup_steps)``.

        sched = LinearWarmup(opt, warmup_steps=3, start_factor=0.25)  # lr * .25 .5 .75 1 1

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.LinearWarmup(opt, warmup_steps=3, start_factor=0.25)
    >>> [sched.lr_at(1.0, k) for k in range(5)]
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int,
                 start_factor: float = 1.0 / 3) -> None:
        _require_positive_int("LinearWarmup", "warmup_steps", warmup_steps)
        super().__init__(optimizer, start_factor=start_factor, end_factor=1.0,
                         total_iters=warmup_steps)


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(k)``, for any schedule of the step count k.

    For instance a warm-up then a cosine::

        warm, total = 100, 1000
        LambdaLR(opt, lambda k: min(1, (k + 1) / warm)
                 * (1 + math.cos(math.pi * min(k, total) / total)) / 2)

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.LambdaLR(opt, lambda k: 0.5 ** k)
    >>> [sched.lr_at(1.0, k) for k in range(4)]
    [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float]) -> None:
        if not callable(lr_lambda):
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the step count, "
                            f"got {type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * lr_lambda(k)."""
        return base_lr * self.lr_lambda(k)
