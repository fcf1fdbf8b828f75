"""autograd.numpy: NumPy's namespace with chainrule's differentiable functions
(``chainrule.numpy``), and its linalg and random modules, as autograd has them."""

from ... import numpy as _chainrule_numpy
from ...numpy import *  # noqa: F401,F403
from ...numpy import __all__ as _names
from . import linalg, random  # noqa: F401

__all__ = [*_names, "linalg", "random"]


def __getattr__(name):
    """The rest of NumPy's namespace (constants, dtypes), as chainrule.numpy has it."""
    return getattr(_chainrule_numpy, name)
