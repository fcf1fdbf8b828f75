"""autograd.scipy.signal: ``chainrule.scipy.signal``."""

from ...scipy.signal import *  # noqa: F401,F403
from ...scipy.signal import __all__  # noqa: F401
