"""autograd.core: the one-argument operators ``make_vjp(fun, x)`` and
``make_jvp(fun, x)``, ``vspace`` (the vector space a value lives in: its zeros, random
elements, inner product), and the primitive-making names of ``autograd.extend``.

    >>> from chainrule.autograd.core import make_vjp, vspace
    >>> vjp, ans = make_vjp(lambda x: x ** 3, 2.0)
    >>> ans, vjp(1.0)
    (8.0, 12.0)
    >>> vspace({"w": np.ones(2), "b": 0.5}).zeros()
    {'w': array([0., 0.]), 'b': 0.0}
"""

import numpy as _np

from ...primitive import Box, raw
from ...transforms import functional as _f
from ...transforms.pytrees import tree_flatten, tree_map, tree_unflatten
from .extend import defjvp, defjvp_argnum, defvjp, defvjp_argnum, primitive

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "primitive", "defvjp", "defjvp",
           "defvjp_argnum", "defjvp_argnum", "Box"]


def make_vjp(fun, x):
    """``(vjp, fun(x))``: fun at x, and the function taking a cotangent shaped like
    ``fun(x)`` to the vector-Jacobian product, shaped like x (x may be a tuple, list or
    dict of arrays).

    >>> vjp, ans = make_vjp(lambda v: v * v, np.array([1.0, 2.0]))
    >>> vjp(np.ones(2))
    array([2., 4.])
    """
    out, pullback = _f.vjp(_bools_as_constants(fun), x)
    return (lambda g: pullback(g)[0]), out


def make_jvp(fun, x):
    """``jvp(v) -> (fun(x), the derivative of fun at x along v)``, in forward mode.

    >>> from chainrule.autograd.core import make_jvp
    >>> make_jvp(lambda v: v ** 2, 3.0)(1.0)
    (9.0, 6.0)
    """
    return lambda v: _f.jvp(fun, (x,), (v,))


def _bools_as_constants(fun):
    """``fun`` with a boolean result (a comparison) turned into floats: a constant,
    whose derivative autograd gives as zero."""
    def as_float(leaf):
        inner = raw(leaf)
        if getattr(inner, "dtype", None) == bool or isinstance(inner, bool):
            return _np.asarray(inner, dtype=float) if _np.ndim(inner) else float(inner)
        return leaf

    def constant_bools(*args, **kwargs):
        return tree_map(as_float, fun(*args, **kwargs))
    return constant_bools


class VSpace:
    """The real vector space of a value: a float, an array (of one shape and float
    dtype), or a tuple, list or dict of them. Its elements are built (``zeros``,
    ``ones``, ``randn``, ``standard_basis``) and combined (``add``, ``scalar_mul``,
    ``inner_prod``, differentiable in their arguments) as autograd's VSpace does."""

    def __init__(self, value):
        leaves, self._treedef = tree_flatten(value)
        self._leaves = tuple(_leaf_space(leaf) for leaf in leaves)
        self.size = sum(int(_np.prod(shape)) for shape, _, _ in self._leaves)
        if len(self._leaves) == 1 and self._treedef == "*":
            self.shape, self.dtype, _ = self._leaves[0]
            self.ndim = len(self.shape)

    def __eq__(self, other):
        # a float and a 0-d array are one space, as in autograd
        return (isinstance(other, VSpace) and self._treedef == other._treedef
                and [leaf[:2] for leaf in self._leaves] == [leaf[:2] for leaf in other._leaves])

    def __hash__(self):
        return hash(tuple(leaf[:2] for leaf in self._leaves))

    def __repr__(self):
        return f"VSpace({tree_unflatten(self._treedef, [s for s, _, _ in self._leaves])})"

    def _build(self, make):
        return tree_unflatten(self._treedef, [
            make(shape, dtype) if is_array else float(make((), dtype))
            for shape, dtype, is_array in self._leaves])

    def zeros(self):
        return self._build(lambda shape, dtype: _np.zeros(shape, dtype))

    def ones(self):
        return self._build(lambda shape, dtype: _np.ones(shape, dtype))

    def randn(self):
        return self._build(lambda shape, dtype: _np.asarray(_np.random.randn(*shape), dtype))

    def standard_basis(self):
        """The elements with one entry 1 and the rest 0, one per entry."""
        for k in range(self.size):
            flat = _np.zeros(self.size)
            flat[k] = 1.0
            yield self._from_flat(flat)

    def _from_flat(self, flat):
        pieces, start = [], 0
        for shape, dtype, is_array in self._leaves:
            n = int(_np.prod(shape))
            piece = flat[start:start + n].reshape(shape).astype(dtype)
            pieces.append(piece if is_array else float(piece))
            start += n
        return tree_unflatten(self._treedef, pieces)

    def add(self, x, y):
        return tree_unflatten(self._treedef, [a + b for a, b in zip(_leaves(x), _leaves(y))])

    def mut_add(self, x, y):
        return self.add(x, y)

    def scalar_mul(self, x, a):
        return tree_unflatten(self._treedef, [leaf * a for leaf in _leaves(x)])

    def inner_prod(self, x, y):
        from ... import rules
        terms = [rules.sum(a * b) for a, b in zip(_leaves(x), _leaves(y))]
        return sum(terms[1:], terms[0]) if terms else 0.0

    def covector(self, x):
        """The element of the dual space that x stands for: x itself (real spaces)."""
        return x


def vspace(value):
    """The vector space ``value`` lives in (a ``VSpace``); TypeError for a complex
    value, which chainrule does not differentiate.

    >>> vs = vspace(np.zeros((2, 3)))
    >>> vs.shape, vs.size
    ((2, 3), 6)
    >>> float(vs.inner_prod(vs.ones(), vs.ones()))
    6.0
    """
    return VSpace(value)


def _leaves(tree):
    return tree_flatten(tree)[0]


def _leaf_space(leaf):
    """(shape, dtype, whether it is an array) of one leaf."""
    inner = raw(leaf)
    if isinstance(inner, (bool, _np.bool_)) or not isinstance(
            inner, (int, float, _np.ndarray, _np.generic)):
        raise TypeError(f"vspace: a leaf of type {type(inner).__name__} ({inner!r:.40}) has no "
                        f"vector space; expected floats or float arrays")
    dtype = _np.result_type(inner)
    if dtype.kind == "c":
        raise TypeError(f"vspace: a complex value of dtype {dtype}; chainrule "
                        f"differentiates real numbers only (write it as two real arrays)")
    if dtype.kind != "f":
        dtype = _np.dtype(_np.float64)
    is_array = isinstance(inner, _np.ndarray) or isinstance(leaf, Box)
    return tuple(_np.shape(inner)), dtype, is_array
