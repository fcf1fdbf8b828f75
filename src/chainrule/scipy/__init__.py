"""SciPy's functions with derivatives: ``chainrule.scipy.special``, ``.stats``,
``.linalg``, ``.signal``, ``.integrate``, ``.ndimage``, ``.interpolate``, ``.fft`` and
``.cluster``, as ``jax.scipy`` and ``autograd.scipy`` are for their libraries.

SciPy computes the values (odeint solves on its own); the derivative rules are
chainrule's, written with the library's own operations, so that derivatives of any
order follow. The exceptions say so where they are: odeint and the incomplete gamma
and beta functions' shape parameters are differentiated once. Needs SciPy (the
``scipy`` extra: ``pip install 'chainrule[scipy]'``); ``import chainrule`` does not
import it.
"""

try:  # (every module below imports SciPy: say which extra brings it, once, here)
    import scipy as _scipy  # noqa: F401  (private: not a public name of this package)
except ImportError as err:  # (a ModuleNotFoundError, as the bare one was: an ImportError)
    raise ModuleNotFoundError("chainrule.scipy needs SciPy, which is not installed: pip "
                              "install 'chainrule[scipy]'", name="scipy") from err

from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize,  # noqa: E402
               signal, special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "special", "stats"]
