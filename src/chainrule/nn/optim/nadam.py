"""NAdam, as PyTorch's ``torch.optim.NAdam``."""

import numpy as np

from ..hyperparameters import require_betas, require_flag, require_nonnegative
from .adam import adam_moments
from .optimizer import Optimizer, Params

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat's Adam with Nesterov momentum), as PyTorch computes it.

    Adam's moments ``m`` and ``v``, and a momentum coefficient that warms up over the
    steps, ``mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay))``, whose running
    product ``mu_product`` corrects ``m`` for its zero start. At step ``t``, with
    ``d = sqrt(v / (1 - beta2**t)) + eps``::

        p -= lr * (1 - mu_t) / (1 - mu_product) * g / d
        p -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / d

    (the gradient's part and the momentum's next step: Nesterov's look-ahead).
    ``weight_decay`` adds ``weight_decay * p`` to the gradient, or, with
    ``decoupled_weight_decay=True``, shrinks ``p *= 1 - lr * weight_decay`` first, as
    AdamW. ``maximize=True`` flips the gradient's sign first.

    The state is PyTorch's: ``step``, ``mu_product``, ``exp_avg`` and ``exp_avg_sq``.
    ``mu_product`` is a float64 number here; PyTorch keeps it in its default dtype
    (float32 unless changed), so the two differ by float32's rounding of it unless
    ``torch.set_default_dtype(torch.float64)``.

    >>> x = cr.Value(1.0); opt = cr.optim.NAdam([x], lr=0.1)
    >>> (x * x).backward(); opt.step(); round(x.data, 4)   # ~lr, and the look-ahead
    0.8944
    """

    def __init__(self, params: Params, lr: float = 2e-3, *,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _check(self, group):
        super()._check(group)
        require_betas("NAdam", group)
        for name in ("eps", "weight_decay", "momentum_decay"):
            require_nonnegative("NAdam", name, group[name])
        require_flag("NAdam", "decoupled_weight_decay", group["decoupled_weight_decay"])
        require_flag("NAdam", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        p, g = self._decayed(p, g, group, decoupled=group["decoupled_weight_decay"])
        state.setdefault("mu_product", 1.0)
        t, m, v = adam_moments(state, p, g, beta1, beta2)
        warmup = group["momentum_decay"]
        mu = beta1 * (1 - 0.5 * 0.96 ** (t * warmup))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * warmup))
        mu_product = state["mu_product"] = state["mu_product"] * mu
        d = np.sqrt(v / (1 - beta2 ** t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_product) * (g / d)
        return p - lr * mu_next / (1 - mu_product * mu_next) * (m / d)
