"""autograd.scipy: chainrule.scipy's special functions, distributions, linear
algebra and convolutions."""

from . import linalg, signal, special, stats

__all__ = ["linalg", "signal", "special", "stats"]
