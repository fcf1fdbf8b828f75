"""Rprop, as PyTorch's ``torch.optim.Rprop``."""

import numpy as np

from ..hyperparameters import require_flag, require_number
from .optimizer import Optimizer, Params

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop (Riedmiller and Braun's resilient backpropagation), as PyTorch computes it.

    Each entry has its own step size, started at ``lr``, and moves by it against the
    sign of its gradient; the gradient's size is not used. Where the gradient keeps its
    sign from the last step the step size grows by ``etas[1]``, where it flips the step
    size shrinks by ``etas[0]`` and the entry does not move this step (its gradient is
    taken as 0, so the next step neither grows nor shrinks it); where either gradient is
    0 the step size stays. Step sizes are held within ``step_sizes = (min, max)``.
    ``maximize=True`` flips the gradient's sign first.

    The state is PyTorch's: ``step``, ``prev`` (the last gradient, 0 where it flipped)
    and ``step_size``. A complex parameter's real and imaginary parts are two entries
    each, as in PyTorch.

    >>> x = cr.Value(1.0); opt = cr.optim.Rprop([x], lr=0.1)
    >>> for _ in range(3):
    ...     x.grad = 2 * x.data; opt.step()
    >>> round(x.data, 6)                  # 1 - 0.1 - 0.12 - 0.144
    0.636
    """

    def __init__(self, params: Params, lr: float = 1e-2, *,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50),
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes,
                                      maximize=maximize))

    def _check(self, group):
        super()._check(group)
        for name in ("etas", "step_sizes"):
            pair = group[name]
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"Rprop: {name} must be a pair of numbers, got {pair!r}")
            for i, value in enumerate(pair):
                require_number("Rprop", f"{name}[{i}]", value)
            group[name] = tuple(pair)
        minus, plus = group["etas"]
        # PyTorch's condition: 0 < etas[0] < 1 < etas[1]
        if not 0 < minus < 1:
            raise ValueError(f"Rprop: etas[0] must be in (0, 1), got {minus!r}")
        if not plus > 1:
            raise ValueError(f"Rprop: etas[1] must be > 1, got {plus!r}")
        require_flag("Rprop", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        if group["maximize"]:
            g = -g
        if not state:
            state["step"] = 0
            state["prev"] = np.zeros_like(p)
            # (a complex entry is two real ones, each starting at lr, as PyTorch's)
            lr = complex(group["lr"], group["lr"]) if p.dtype.kind == "c" else group["lr"]
            state["step_size"] = np.full_like(p, lr)
        state["step"] = state["step"] + 1
        if p.dtype.kind != "c":
            return self._step(p, g, state, group)
        parts = {"prev": state["prev"], "step_size": state["step_size"]}
        real = {k: np.stack([v.real, v.imag], axis=-1) for k, v in parts.items()}
        new = self._step(np.stack([p.real, p.imag], axis=-1),
                         np.stack([g.real, g.imag], axis=-1), real, group)
        for key in parts:
            state[key] = real[key][..., 0] + 1j * real[key][..., 1]
        return new[..., 0] + 1j * new[..., 1]

    @staticmethod
    def _step(p, g, state, group):
        """The update of real entries; ``prev`` and ``step_size`` advance in ``state``."""
        minus, plus = group["etas"]
        smallest, largest = group["step_sizes"]
        sign = np.sign(g * state["prev"])
        # the factor in the parameter's dtype, as PyTorch writes it into the sign's tensor
        factor = np.where(sign > 0, plus, np.where(sign < 0, minus, 1.0)).astype(p.dtype)
        size = np.minimum(np.maximum(state["step_size"] * factor, smallest), largest)
        state["step_size"] = size
        g = state["prev"] = np.where(sign < 0, 0, g)  # a flipped sign: no move this step
        return p - np.sign(g) * size
