"""Adam and AdamW, as PyTorch's ``torch.optim.Adam`` and ``torch.optim.AdamW``."""

import numpy as np

from ..hyperparameters import require_betas, require_flag, require_nonnegative
from ..updates import adam_step, moving_average
from .optimizer import Optimizer, Params

__all__ = ["Adam", "AdamW", "adam_moments"]


def adam_moments(state, p, g, beta1, beta2):
    """Adam's step count and moments, advanced by one step with gradient ``g``, in
    PyTorch's state names (``step``, ``exp_avg``, ``exp_avg_sq``, started at 0): the
    running means ``m = beta1 m + (1 - beta1) g`` and ``v = beta2 v + (1 - beta2) g g``.
    NAdam and RAdam keep the same ones."""
    if "step" not in state:
        state["step"] = 0
        state["exp_avg"] = np.zeros_like(p)
        state["exp_avg_sq"] = np.zeros_like(p)
    t = state["step"] = state["step"] + 1
    m = state["exp_avg"] = moving_average(state["exp_avg"], g, beta1)
    v = state["exp_avg_sq"] = moving_average(state["exp_avg_sq"], g * g, beta2)
    return t, m, v


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
        require_betas(name, group)
        require_nonnegative(name, "eps", group["eps"])
        require_nonnegative(name, "weight_decay", group["weight_decay"])
        require_flag(name, "amsgrad", group["amsgrad"])
        require_flag(name, "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        p, g = self._decayed(p, g, group, decoupled=self._decoupled)
        t, m, v = adam_moments(state, p, g, beta1, beta2)
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
