"""Adafactor, as PyTorch's ``torch.optim.Adafactor``."""

import numpy as np

from ..hyperparameters import require_flag, require_nonnegative, require_number
from .optimizer import Optimizer, Params

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern), as PyTorch computes it: Adam's second moment kept
    in factored form, without a first moment.

    At step ``t`` the second moment moves towards ``g*g`` by ``t ** beta2_decay``
    (``lerp``). A parameter of 2 or more dimensions keeps only the means of ``g*g`` over
    its last dimension (``row_var``, shape ``(..., R, 1)``) and over the one before
    (``col_var``, ``(..., 1, C)``), and estimates the second moment as ``row_var *
    col_var / mean(row_var)`` (the mean at least ``eps[0]``); a vector or a scalar keeps
    it whole (``variance``). The update ``u = g / sqrt(max(estimate, eps[0]**2))`` is
    scaled down to a root mean square of at most ``d``, and the parameter moves by

        p -= max(eps[1], rms(p)) * min(lr, 1/sqrt(t)) * u / max(1, rms(u) / d)

    (a relative step: the larger the parameter, the larger its step). ``eps[0]`` None is
    the parameter dtype's machine epsilon. ``weight_decay`` shrinks ``p *= 1 - lr *
    weight_decay`` (after ``rms(p)`` is taken); ``maximize=True`` flips the gradient's
    sign first.

    The state is PyTorch's: ``step``, and ``row_var`` and ``col_var``, or ``variance``.

    >>> w = cr.tensor(np.ones((2, 3)), requires_grad=True)
    >>> opt = cr.optim.Adafactor([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> opt.state[w]["row_var"].shape, opt.state[w]["col_var"].shape
    ((2, 1), (1, 3))
    >>> np.round(w.data[0], 6).tolist()          # each moved by rms(p) * lr * u, u = 1
    [0.99, 0.99, 0.99]
    """

    def __init__(self, params: Params, lr: float = 1e-2, *, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, maximize=maximize))

    def _check(self, group):
        super()._check(group)
        decay = group["beta2_decay"]
        require_number("Adafactor", "beta2_decay", decay)
        if not decay <= 0:
            raise ValueError(f"Adafactor: beta2_decay must be <= 0, got {decay!r}")
        eps = group["eps"]
        if not isinstance(eps, (tuple, list)) or len(eps) != 2:
            raise ValueError(f"Adafactor: eps must be a pair (eps1 or None, eps2), got "
                             f"{eps!r}")
        if eps[0] is not None:
            require_nonnegative("Adafactor", "eps[0]", eps[0])
        require_nonnegative("Adafactor", "eps[1]", eps[1])
        group["eps"] = tuple(eps)
        require_number("Adafactor", "d", group["d"])
        if not group["d"] >= 1:
            raise ValueError(f"Adafactor: d must be >= 1, got {group['d']!r}")
        require_nonnegative("Adafactor", "weight_decay", group["weight_decay"])
        require_flag("Adafactor", "maximize", group["maximize"])

    def _state_shape(self, name, shape):
        if name == "row_var":
            return shape[:-1] + (1,)
        if name == "col_var":
            return shape[:-2] + (1,) + shape[-1:]
        return shape

    def _update(self, p, g, state, group):
        if p.dtype.kind == "c":
            raise TypeError("Adafactor: complex parameters are not supported (as in "
                            "PyTorch); optimize the real and imaginary parts as reals")
        lr, d = group["lr"], group["d"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(p.dtype).eps)
        if not state:
            state["step"] = 0
            if p.ndim > 1:
                state["row_var"] = np.zeros(self._state_shape("row_var", p.shape), p.dtype)
                state["col_var"] = np.zeros(self._state_shape("col_var", p.shape), p.dtype)
            else:
                state["variance"] = np.zeros_like(p)
        t = state["step"] = state["step"] + 1
        weight = t ** group["beta2_decay"]  # 1 - beta2 at step t
        # the relative step size, from the parameter before weight decay (PyTorch's order)
        alpha = np.maximum(eps2, _rms(p)) * np.minimum(lr, 1 / t ** 0.5)
        p, g = self._decayed(p, g, group, decoupled=True)
        if p.ndim > 1:
            rows = np.sum(g * g, axis=-1, keepdims=True) / g.shape[-1]
            cols = np.sum(g * g, axis=-2, keepdims=True) / g.shape[-2]
            row = state["row_var"] = _lerp(state["row_var"], rows, weight)
            col = state["col_var"] = _lerp(state["col_var"], cols, weight)
            estimate = row * col / np.maximum(np.mean(row, axis=-2, keepdims=True), eps1)
        else:
            estimate = state["variance"] = _lerp(state["variance"], g * g, weight)
        # eps1 squared under the root keeps its size after it
        update = 1 / np.sqrt(np.maximum(estimate, eps1 * eps1)) * g
        return p - alpha / np.maximum(1.0, _rms(update) / d) * update


def _rms(x):
    """The root mean square of the entries, ``norm(x) / sqrt(x.size)``."""
    return np.sqrt(np.sum(x * x)) / x.size ** 0.5


def _lerp(start, end, weight):
    """PyTorch's lerp, in its two forms: from ``start`` for a small weight, from ``end``
    for a large one (exact at weight 1, the first step's)."""
    return np.where(weight < 0.5, start + weight * (end - start),
                    end - (end - start) * (1 - weight))
