"""autograd.scipy.stats: ``chainrule.scipy.stats``. autograd has a module per
distribution (``import autograd.scipy.stats.norm as norm``); each name below is also
importable that way."""

import sys as _sys

from ...scipy import stats as _stats
from ...scipy.stats import *  # noqa: F401,F403
from ...scipy.stats import __all__  # noqa: F401

# ``import chainrule.autograd.scipy.stats.norm as norm``: the module path autograd has
for _name in __all__:
    _sys.modules[f"{__name__}.{_name}"] = getattr(_stats, _name)
