"""Stochastic gradient descent, as PyTorch's ``torch.optim.SGD``."""

from ..hyperparameters import require_flag, require_nonnegative, require_number
from ..updates import momentum_buffer, nesterov_direction
from .optimizer import Optimizer, Params

__all__ = ["SGD"]


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
        lr, momentum = group["lr"], group["momentum"]
        p, g = self._decayed(p, g, group)
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
