"""SciPy's functions with derivatives: ``chainrule.scipy.special``, as
``jax.scipy.special`` and ``autograd.scipy.special`` are for their libraries.

SciPy computes every value; the derivative rules are chainrule's, written with the
library's own operations, so that derivatives of any order follow. Needs SciPy (the
``scipy`` extra: ``pip install 'chainrule[scipy]'``); ``import chainrule`` does not
import it.
"""

from . import special

__all__ = ["special"]
