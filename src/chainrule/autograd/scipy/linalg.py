"""autograd.scipy.linalg: ``chainrule.scipy.linalg``."""

from ...scipy.linalg import *  # noqa: F401,F403
from ...scipy.linalg import __all__  # noqa: F401
