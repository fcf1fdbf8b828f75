"""autograd.scipy: chainrule.scipy's special functions, distributions, linear
algebra, convolutions and ODE solutions."""

from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
