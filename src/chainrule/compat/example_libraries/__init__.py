"""What ``jax.example_libraries`` holds, for programs that import it: ``optimizers``, the
functional optimisers as ``(init, update, get_params)`` triples.

>>> from chainrule.example_libraries import optimizers
>>> init, update, get_params = optimizers.sgd(0.1)
>>> get_params(update(0, 1.0, init(2.0)))
1.9

``stax`` is not here: its layers are ``cr.nn``'s (``nn.Sequential(nn.Linear(...),
nn.ReLU(), ...)``), whose parameters any transform takes as a tree
(docs/coming-from-jax.md).
"""

from . import optimizers

__all__ = ["optimizers"]
