"""autograd.scipy: chainrule.scipy's special functions, distributions and linear
algebra."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
