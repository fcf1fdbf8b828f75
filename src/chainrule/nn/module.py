"""Module: the base of every model, holding parameters that training updates."""

__all__ = ["Module"]


class Module:
    """A model or a part of one. Subclasses list their parameters in ``parameters()``.

    As in micrograd, ``zero_grad()`` resets the gradients that ``backward()``
    accumulates, before the next training step.
    """

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self):
        return []
