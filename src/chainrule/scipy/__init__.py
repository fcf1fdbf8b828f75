"""SciPy's functions with derivatives: ``chainrule.scipy.special``,
``chainrule.scipy.stats``, ``chainrule.scipy.linalg`` and ``chainrule.scipy.signal``, as ``jax.scipy`` and
``autograd.scipy`` are for their libraries.

SciPy computes every value; the derivative rules are chainrule's, written with the
library's own operations, so that derivatives of any order follow. Needs SciPy (the
``scipy`` extra: ``pip install 'chainrule[scipy]'``); ``import chainrule`` does not
import it.
"""

from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
