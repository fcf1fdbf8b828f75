"""What ``jax.example_libraries`` holds, for programs that import it: ``optimizers``, the
functional optimisers as ``(init, update, get_params)`` triples, and ``stax``, networks
as ``(init_fun, apply_fun)`` pairs whose parameters are pytrees.

>>> from chainrule.example_libraries import optimizers
>>> init, update, get_params = optimizers.sgd(0.1)
>>> get_params(update(0, 1.0, init(2.0)))
1.9

``cr.nn``'s modules (``nn.Sequential(nn.Linear(...), nn.ReLU(), ...)``) are PyTorch's
shape of the same networks, whose parameters any transform takes as a tree too
(docs/coming-from-jax.md).
"""

from . import optimizers, stax

__all__ = ["optimizers", "stax"]
