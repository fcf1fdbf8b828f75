"""``chainrule.lax``: jax.lax's names, as ``from chainrule import lax``. The operations
are ``chainrule.transforms.lax``'s; jax.lax's special functions (``lgamma``,
``digamma``, ``igamma``, ``betainc``, ``bessel_i0e``...) are ``chainrule.scipy.special``'s
under jax.lax's names, imported at their first use (they need SciPy, the ``scipy``
extra), so that ``import chainrule`` still imports NumPy alone.

>>> from chainrule import lax
>>> round(float(lax.lgamma(5.0)), 6)                 # log 4!
3.178054
>>> round(float(cr.grad(lax.lgamma)(5.0)), 6)        # digamma(5)
1.506118
"""

import importlib
from typing import TYPE_CHECKING

from ..transforms.lax import *  # noqa: F401,F403
from ..transforms.lax import __all__ as _OPERATIONS

if TYPE_CHECKING:
    from ..scipy.special import (digamma, erfc, gammainc as igamma,  # noqa: F401
                                 gammaincc as igammac, gammaln as lgamma, i0e as bessel_i0e,
                                 i1e as bessel_i1e, erfinv as erf_inv, betainc, polygamma,
                                 zeta)

# jax.lax's name -> chainrule.scipy.special's (the same function, the same arguments:
# igamma(a, x) is the regularized lower incomplete gamma, betainc(a, b, x) the
# regularized incomplete beta, zeta(x, q) Hurwitz's)
_SPECIAL = {"lgamma": "gammaln", "digamma": "digamma", "polygamma": "polygamma",
            "zeta": "zeta", "igamma": "gammainc", "igammac": "gammaincc",
            "betainc": "betainc", "bessel_i0e": "i0e", "bessel_i1e": "i1e",
            "erf_inv": "erfinv", "erfc": "erfc"}

__all__ = [*_OPERATIONS, *_SPECIAL]


def __getattr__(name: str) -> object:
    if name in _SPECIAL:
        special = importlib.import_module("chainrule.scipy.special")
        return getattr(special, _SPECIAL[name])
    raise AttributeError(f"module 'chainrule.lax' has no attribute '{name}'")
