"""autograd.scipy: chainrule.scipy's special functions and distributions."""

from . import special, stats

__all__ = ["special", "stats"]
