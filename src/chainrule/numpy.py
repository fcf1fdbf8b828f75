"""NumPy's namespace with chainrule's differentiable functions: code written for
``autograd.numpy`` or ``jax.numpy`` ports by changing its import.

>>> import chainrule.numpy as cnp
>>> cr.grad(lambda x: cnp.sum(cnp.sin(x) ** 2))(np.array([0.5, 1.0])).round(6).tolist()
[0.841471, 0.909297]

Every function chainrule differentiates is here under NumPy's name (``cnp.exp``,
``cnp.cumsum``, ``cnp.linalg.solve``...), with NumPy's arguments. The rest of NumPy's
namespace (dtypes, constants such as ``pi``, and the functions chainrule has no
derivative for) is NumPy's own: called on plain arrays they compute as NumPy does, and
called on a value some gradient flows through they raise a TypeError that names the
function, rather than cut the gradient off.

``array`` and ``asarray`` build an array from numbers, or, from a list that holds traced
values or Tensors, their differentiable stack (as ``autograd.numpy.array`` does).
"""

import numpy as _np

from . import predicates as _predicates
from . import rules as _rules
from .primitive import Box as _Box
from .tensor import tensor as _tensor
from .array_methods import holds_box

__all__ = sorted({*_rules.__all__, *_predicates.__all__, "abs", "array", "asarray"})

from .rules import *  # noqa: E402,F401,F403
from .predicates import *  # noqa: E402,F401,F403

abs = absolute  # noqa: F405  (NumPy's name for it)


def array(obj, dtype=None):
    """``np.array``, except that a list holding traced values or Tensors becomes their
    differentiable stack (and a traced value or Tensor stays what it is).

    >>> import chainrule.numpy as cnp
    >>> cr.grad(lambda x: cnp.sum(cnp.array([x, 2 * x]) ** 2))(1.0)
    10.0
    """
    if isinstance(obj, _Box):
        return obj if dtype is None else obj.astype(dtype)
    if isinstance(obj, (list, tuple)) and holds_box(obj):
        return _tensor(list(obj), dtype=dtype)
    return _np.array(obj, dtype=dtype)


asarray = array


class _Linalg:
    """``numpy.linalg`` with chainrule's functions where it has them (``cr.linalg``),
    NumPy's own otherwise (which refuse traced values, naming the function)."""

    def __getattr__(self, name):
        from . import linalg
        return getattr(linalg, name) if name in linalg.__all__ else getattr(_np.linalg, name)

    def __dir__(self):
        return sorted(set(dir(_np.linalg)))


linalg = _Linalg()


def __getattr__(name):
    """The rest of NumPy's namespace (constants, dtypes, submodules such as random)."""
    return getattr(_np, name)
