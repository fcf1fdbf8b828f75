"""autograd.scipy.stats: ``chainrule.scipy.stats``. autograd has a module per
distribution (``import autograd.scipy.stats.norm as norm``); each name below is also
importable that way. What chainrule does not differentiate (``rvs``, a random draw) is
SciPy's own, as in autograd.

    >>> import chainrule.autograd.scipy.stats.dirichlet as dirichlet
    >>> dirichlet.rvs(np.ones(3), size=2, random_state=0).shape
    (2, 3)
"""

import sys as _sys
import types as _types

import scipy.stats as _scipy_stats

from ....scipy import stats as _stats
from ....scipy.stats import __all__  # noqa: F401


class _Distribution(_types.ModuleType):
    """One distribution as a module: chainrule's functions, SciPy's for the rest."""

    def __init__(self, name):
        super().__init__(f"{__name__}.{name}", getattr(_stats, name).__doc__)
        self._ours, self._scipys = getattr(_stats, name), getattr(_scipy_stats, name)

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        try:
            return getattr(self._ours, attribute)
        except AttributeError:
            return getattr(self._scipys, attribute)

    def __dir__(self):
        return sorted(set(dir(self._ours)) | set(dir(self._scipys)))


for _name in __all__:
    globals()[_name] = _sys.modules[f"{__name__}.{_name}"] = _Distribution(_name)
