"""Optimizers and learning-rate schedules, with PyTorch's semantics, for both engines.

An optimizer holds parameters (Values or Tensors) and moves them against their
gradients at each ``step()``:

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

This module holds SGD, Adam and AdamW and is the one to import; the base class
``Optimizer`` lives in ``optimizer.py``, the schedules in ``schedules.py``, and the
arithmetic the updates share with JAX's and autograd's optimizers in ``updates.py``.

>>> w = cr.tensor([1.0, -2.0], requires_grad=True)
>>> opt = cr.optim.SGD([w], lr=0.1)
>>> for step in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()        # the gradient is 2w
...     opt.step()                      # w -= 0.1 * 2w: w shrinks by 0.8 a step
>>> np.round(w.data, 6).tolist()
[0.64, -1.28]
"""

import numpy as np

from .hyperparameters import require_flag, require_nonnegative, require_number
from .optimizer import Optimizer, Params
from .schedules import (CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, LinearWarmup,
                        LRScheduler, MultiStepLR, StepLR)
from .updates import adam_step, momentum_buffer, moving_average, nesterov_direction

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LRScheduler", "StepLR", "MultiStepLR",
           "ExponentialLR", "CosineAnnealingLR", "LinearLR", "LinearWarmup", "LambdaLR"]


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
        require_flag("SGD", "maximize", group["maximize"])
        require_nonnegative("SGD", "momentum", group["momentum"])
        require_number("SGD", "dampening", group["dampening"])
        require_nonnegative("SGD", "weight_decay", group["weight_decay"])
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
            else:
                buf = momentum_buffer(buf, g, momentum, group["dampening"])
            state["momentum_buffer"] = buf
            g = nesterov_direction(buf, g, momentum) if group["nesterov"] else buf
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
            require_number(name, f"betas[{i}]", beta)
            if not 0 <= beta < 1:
                raise ValueError(f"{name}: betas[{i}] must be in [0, 1), got {beta!r}")
        group["betas"] = tuple(betas)
        require_nonnegative(name, "eps", group["eps"])
        require_nonnegative(name, "weight_decay", group["weight_decay"])
        require_flag(name, "amsgrad", group["amsgrad"])
        require_flag(name, "maximize", group["maximize"])

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
        m = state["exp_avg"] = moving_average(state["exp_avg"], g, beta1)
        v = state["exp_avg_sq"] = moving_average(state["exp_avg_sq"], g * g, beta2)
        if group["amsgrad"]:
            # The maximum starts at 0, as PyTorch's does; also where the state was made
            # without amsgrad (PyTorch raises KeyError there): max(0, v) is v.
            v_max = state.get("max_exp_avg_sq")
            v_max = np.zeros_like(p) if v_max is None else v_max
            v = state["max_exp_avg_sq"] = np.maximum(v_max, v)
        return p - adam_step(m, v, t, lr, beta1, beta2, eps)


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
