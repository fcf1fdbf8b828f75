"""``cr.Array``: the type of what ``chainrule.numpy``'s functions return, for
annotations and ``isinstance``, as ``jax.Array`` is for ``jax.numpy``'s.

chainrule has no array class of its own: its functions return NumPy's arrays (and NumPy
scalars, the 0-d results of reductions), a Tensor where they are given one, and inside
a transform its traced values (``cr.grad``'s, ``cr.vmap``'s, ``cr.jit``'s), which
stand for arrays. ``isinstance(x, cr.Array)`` is true for each of those, as
``isinstance(x, jax.Array)`` is for JAX's arrays and its tracers, and false for Python's
numbers and lists (as JAX's) and for a scalar engine's ``Value``. What differs: JAX's
``jnp.asarray`` makes a ``jax.Array`` of a NumPy array, while here a NumPy array already
is one.

>>> isinstance(np.ones(2), cr.Array), isinstance(1.0, cr.Array)
(True, False)
>>> cr.grad(lambda x: isinstance(x, cr.Array) and x ** 2)(3.0)
6.0
"""

import numpy as np

from .. import arrays as xp
from ..methods.array import ArrayMethods

__all__ = ["Array"]


class _ArrayMeta(type):
    def __instancecheck__(cls, x):
        return isinstance(x, (np.ndarray, np.number, np.bool_, ArrayMethods)) or \
            type(x) in xp.ARRAYS  # (cr.jit's traced array registers itself there)

    def __subclasscheck__(cls, kind):
        return isinstance(kind, type) and (
            kind is cls or issubclass(kind, (np.ndarray, np.number, np.bool_, ArrayMethods))
            or kind in xp.ARRAYS)


class Array(metaclass=_ArrayMeta):
    """The type of chainrule's arrays: NumPy's arrays and scalars, Tensors, and the
    transforms' traced values (see the module's text). Not instantiable: make arrays
    with ``chainrule.numpy.array``.

    >>> import chainrule.numpy as cnp
    >>> isinstance(cnp.sum(cnp.array([1.0, 2.0])), cr.Array), isinstance(2.0, cr.Array)
    (True, False)
    """

    def __new__(cls, *args, **kwargs):
        raise TypeError("cr.Array is a type for annotations and isinstance, not a "
                        "constructor; make an array with chainrule.numpy.array(...)")
