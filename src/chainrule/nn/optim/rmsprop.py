"""RMSprop, as PyTorch's ``torch.optim.RMSprop``."""

import numpy as np

from ..hyperparameters import require_flag, require_nonnegative
from ..updates import momentum_buffer, moving_average, rmsprop_step
from .optimizer import Optimizer, Params

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes), as PyTorch computes it.

    A running mean of the squared gradients, ``v = alpha*v + (1-alpha)*g*g``, scales the
    step: ``p -= lr * g / (sqrt(v) + eps)`` (``eps`` added to the root, as PyTorch does;
    JAX adds it under the root). ``centered=True`` also keeps the running mean of the
    gradients, ``grad_avg``, and divides by the root of the variance ``v - grad_avg**2``
    instead. ``momentum > 0`` steps along a buffer ``b = momentum*b + g/(sqrt(v)+eps)``
    (started at zero). ``weight_decay`` adds ``weight_decay * p`` to the gradient, and
    ``maximize=True`` flips the gradient's sign first.

    The state is PyTorch's: ``step``, ``square_avg``, and ``momentum_buffer`` and
    ``grad_avg`` when momentum and centering are on.

    >>> x = cr.Value(1.0); opt = cr.optim.RMSprop([x], lr=0.01, alpha=0.75, eps=0.0)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # 1 - 0.01 * 2 / sqrt(0.25*4)
    0.98
    """

    def __init__(self, params: Params, lr: float = 1e-2, *, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps,
                                      weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    def _check(self, group):
        super()._check(group)
        # PyTorch's conditions: each >= 0 (alpha above 1 included: it refuses no more)
        for name in ("alpha", "eps", "momentum", "weight_decay"):
            require_nonnegative("RMSprop", name, group[name])
        require_flag("RMSprop", "centered", group["centered"])
        require_flag("RMSprop", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum = group["momentum"]
        p, g = self._decayed(p, g, group)
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p)
        # The buffers start at zero, as PyTorch's; also where momentum or centering is
        # switched on after the first step (PyTorch raises KeyError there).
        if momentum > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = np.zeros_like(p)
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = np.zeros_like(p)
        state["step"] = state["step"] + 1
        v = state["square_avg"] = moving_average(state["square_avg"], g * g, alpha)
        if group["centered"]:
            mean = state["grad_avg"] = moving_average(state["grad_avg"], g, alpha)
            v = v - mean * mean
        if momentum > 0:
            # the buffer holds the scaled gradients (lr = 1), and lr multiplies it after
            scaled = rmsprop_step(g, v, 1.0, eps, eps_under_root=False)
            buf = state["momentum_buffer"] = momentum_buffer(
                state["momentum_buffer"], scaled, momentum)
            return p - lr * buf
        return p - rmsprop_step(g, v, lr, eps, eps_under_root=False)
