"""autograd.scipy.special: ``chainrule.scipy.special``."""

from ....scipy.special import *  # noqa: F401,F403
from ....scipy.special import __all__  # noqa: F401
