"""autograd's vector spaces: ``vspace(value)`` (the space a value lives in: its zeros,
ones, random elements, basis and inner product) and ``VSpace``, the base of a vector
space of your own (``VSpace.register``), whose operations (``add``, ``scalar_mul``,
``inner_prod``, ``covector``) are differentiable.

    >>> from chainrule.autograd.core import vspace
    >>> vspace({"w": np.ones(2), "b": 0.5}).zeros()
    {'w': array([0., 0.]), 'b': 0.0}
"""

import numpy as _np

from ...primitive import raw
from ...transforms.pytrees import tree_flatten, tree_unflatten
from ...primitive import Box as _EngineBox
from .tracer import Box, _Primitive

__all__ = ["VSpace", "vspace"]

def _undefined(space, method, what):
    """The error for a method a user's vector space leaves out."""
    return TypeError(f"{type(space).__name__}: a vector space registered with "
                     f"VSpace.register must define {method} for {what}")


class VSpace:
    """The base of a vector space, as autograd's: a subclass of your own gives the
    elements of a type of yours a space, registered with ``register``, and defines
    ``__init__(self, value)`` (the space of a value), ``zeros()``, ``_add(x, y)``,
    ``_scalar_mul(x, a)`` and ``_inner_prod(x, y)`` (and ``randn()``, ``ones()`` if
    used). ``add``, ``scalar_mul``, ``inner_prod`` and ``covector`` call them, and are
    operations that can be differentiated. With a ``Box`` for the type
    (``Box.register``), ``grad`` takes values of it: the gradient is an element of the
    space, its parts added with ``add``, starting from ``zeros()``.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.extend import defvjp, primitive
    >>> class Pair:                            # (a, b), a vector of the plane
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    ...     @primitive
    ...     def first(self):
    ...         return self.a
    >>> _ = defvjp(Pair.first, lambda ans, p: lambda g: Pair(g, 0.0))
    >>> class PairBox(Box, Pair):
    ...     pass
    >>> PairBox.register(Pair)
    >>> class PairSpace(VSpace):
    ...     def __init__(self, value):
    ...         pass
    ...     def zeros(self):
    ...         return Pair(0.0, 0.0)
    ...     def _add(self, p, q):
    ...         return Pair(p.a + q.a, p.b + q.b)
    ...     def _scalar_mul(self, p, c):
    ...         return Pair(c * p.a, c * p.b)
    ...     def _inner_prod(self, p, q):
    ...         return p.a * q.a + p.b * q.b
    >>> PairSpace.register(Pair)
    >>> g = grad(lambda p: p.first() ** 2)(Pair(3.0, 4.0))   # d/dp a**2 = (2a, 0)
    >>> g.a, g.b
    (6.0, 0.0)
    """

    mappings = {}  # a value's type -> the function making its space (a VSpace subclass)
    iscomplex = False

    def __init__(self, value):
        pass

    @classmethod
    def register(cls, value_type, vspace_maker=None):
        """Values of ``value_type`` live in the space ``vspace_maker(value)`` (this
        class, by default)."""
        VSpace.mappings[value_type] = vspace_maker or cls

    def zeros(self):
        raise _undefined(self, "zeros()", "the gradient of an argument the result does "
                                          "not depend on")

    def ones(self):
        raise _undefined(self, "ones()", "elementwise_grad and deriv (the element of ones "
                                         "they differentiate along)")

    def randn(self):
        raise _undefined(self, "randn()", "a random element (autograd's check_grads)")

    def standard_basis(self):
        raise _undefined(self, "standard_basis()", "jacobian (the basis of the result's "
                                                   "space it runs over)")

    add = _Primitive(lambda self, x, y: self._add(x, y), "add")
    mut_add = _Primitive(lambda self, x, y: self._mut_add(x, y), "mut_add")
    scalar_mul = _Primitive(lambda self, x, a: self._scalar_mul(x, a), "scalar_mul")
    inner_prod = _Primitive(lambda self, x, y: self._inner_prod(x, y), "inner_prod")
    covector = _Primitive(lambda self, x: self._covector(x), "covector")

    def _add(self, x, y):
        return x + y

    def _mut_add(self, x, y):
        return self._add(x, y)

    def _scalar_mul(self, x, a):
        return x * a

    def _inner_prod(self, x, y):
        raise _undefined(self, "_inner_prod(x, y)", "the inner product")

    def _covector(self, x):
        return x

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash(type(self))

    def __repr__(self):
        return f"{type(self).__name__}_{vars(self)}"


# The rules of the space's operations: linear in each element, the gradient of a
# scalar multiple (or an inner product) with respect to the scalar an inner product.
VSpace.add.defvjp(None, lambda g, ans, vs, x, y: g, lambda g, ans, vs, x, y: g)
VSpace.mut_add.defvjp(None, lambda g, ans, vs, x, y: g, lambda g, ans, vs, x, y: g)
VSpace.scalar_mul.defvjp(
    None,
    lambda g, ans, vs, x, a: vs.covector(vs.scalar_mul(vs.covector(g), a)),
    lambda g, ans, vs, x, a: vs.inner_prod(g, vs.covector(x)))
VSpace.inner_prod.defvjp(
    None,
    lambda g, ans, vs, x, y: vs.covector(vs.scalar_mul(y, g)),
    lambda g, ans, vs, x, y: vs.covector(vs.scalar_mul(x, g)))
VSpace.covector.defvjp(None, lambda g, ans, vs, x: vs.covector(g))
# Their tangents: add passes each operand's tangent on; the others are linear in each
# argument, so an argument's tangent goes through the operation in its place.
VSpace.add.defjvp(None, lambda g, ans, vs, x, y: g, lambda g, ans, vs, x, y: g)
VSpace.mut_add.defjvp(None, lambda g, ans, vs, x, y: g, lambda g, ans, vs, x, y: g)
VSpace.scalar_mul.defjvp(None, lambda g, ans, vs, x, a: vs.scalar_mul(g, a),
                         lambda g, ans, vs, x, a: vs.scalar_mul(x, g))
VSpace.inner_prod.defjvp(None, lambda g, ans, vs, x, y: vs.inner_prod(g, y),
                         lambda g, ans, vs, x, y: vs.inner_prod(x, g))
VSpace.covector.defjvp(None, lambda g, ans, vs, x: vs.covector(g))


class _ValueSpace(VSpace):
    """The vector space of a value: a float, an array (of one shape and dtype), or a
    tuple, list or dict of them. Its elements are built (``zeros``, ``ones``, ``randn``,
    ``standard_basis``) and combined (``add``, ``scalar_mul``, ``inner_prod``,
    differentiable in their arguments) as autograd's VSpace does.

    A complex leaf counts as two real coordinates (``size``), as in autograd: its
    ``ones()`` is 1 + 1j, its basis has 1 and 1j at each entry, the inner product is
    Re(sum(conj(x) y)), and a covector is the conjugate (what a VJP takes and gives,
    as autograd's ``check_grads`` uses it)."""

    def __init__(self, value):
        leaves, self._treedef = tree_flatten(value)
        self._leaves = tuple(_leaf_space(leaf) for leaf in leaves)
        self.iscomplex = any(dtype.kind == "c" for _, dtype, _ in self._leaves)
        self.size = sum(int(_np.prod(shape)) * (2 if dtype.kind == "c" else 1)
                        for shape, dtype, _ in self._leaves)
        if len(self._leaves) == 1 and self._treedef == "*":
            self.shape, self.dtype, _ = self._leaves[0]
            self.ndim = len(self.shape)

    def __eq__(self, other):
        # a float and a 0-d array are one space, as in autograd
        return (isinstance(other, _ValueSpace) and self._treedef == other._treedef
                and [leaf[:2] for leaf in self._leaves] == [leaf[:2] for leaf in other._leaves])

    def __hash__(self):
        return hash(tuple(leaf[:2] for leaf in self._leaves))

    def __repr__(self):
        return f"VSpace({tree_unflatten(self._treedef, [s for s, _, _ in self._leaves])})"

    def _build(self, make):
        return tree_unflatten(self._treedef, [
            make(shape, dtype) if is_array else _scalar(make((), dtype))
            for shape, dtype, is_array in self._leaves])

    def zeros(self):
        return self._build(lambda shape, dtype: _np.zeros(shape, dtype))

    def ones(self):
        return self._build(lambda shape, dtype: _np.ones(shape, dtype) * (
            1 + 1j if dtype.kind == "c" else 1))

    def randn(self):
        def draw(shape, dtype):
            real = _np.random.randn(*shape)
            if dtype.kind == "c":  # (the real parts drawn first, as autograd draws them)
                return _np.asarray(real + 1j * _np.random.randn(*shape), dtype)
            return _np.asarray(real, dtype)
        return self._build(draw)

    def standard_basis(self):
        """The elements with one coordinate 1 and the rest 0, one per coordinate: an
        entry of a complex leaf gives 1, then 1j."""
        for k, (shape, dtype, _) in enumerate(self._leaves):
            for index in _np.ndindex(*shape):
                for unit in ((1.0, 1j) if dtype.kind == "c" else (1.0,)):
                    leaves = self._build(lambda shape, dtype: _np.zeros(shape, dtype))
                    flat = tree_flatten(leaves)[0]
                    if shape:
                        flat[k][index] = unit
                    else:
                        flat[k] = _scalar(_np.asarray(unit, dtype))
                    yield tree_unflatten(self._treedef, flat)

    # Plain methods, not the base's operations: on traced leaves they are differentiated
    # through the leaves' own operations.
    def add(self, x, y):
        return tree_unflatten(self._treedef, [a + b for a, b in zip(_leaves(x), _leaves(y))])

    def mut_add(self, x, y):
        return self.add(x, y)

    def scalar_mul(self, x, a):
        return tree_unflatten(self._treedef, [leaf * a for leaf in _leaves(x)])

    def inner_prod(self, x, y):
        from ... import rules
        terms = [rules.real(rules.sum(rules.conj(a) * b)) if dtype.kind == "c"
                 else rules.sum(a * b)
                 for a, b, (_, dtype, _) in zip(_leaves(x), _leaves(y), self._leaves)]
        return sum(terms[1:], terms[0]) if terms else 0.0

    def covector(self, x):
        """The element of the dual space that x stands for: x itself in a real space,
        its conjugate in a complex one."""
        from ... import rules
        return tree_unflatten(self._treedef, [
            rules.conj(leaf) if dtype.kind == "c" else leaf
            for leaf, (_, dtype, _) in zip(_leaves(x), self._leaves)])


def _scalar(number):
    """A leaf that is a Python number, as one: float, or complex for a complex one."""
    return complex(number) if _np.iscomplexobj(number) else float(number)


def vspace(value):
    """The vector space ``value`` lives in (a ``VSpace``): the registered one of a
    type of your own (``VSpace.register``), else that of a number, an array or a tree of
    them (complex ones included, as in autograd).

    >>> vs = vspace(np.zeros((2, 3)))
    >>> vs.shape, vs.size
    ((2, 3), 6)
    >>> float(vs.inner_prod(vs.ones(), vs.ones()))
    6.0
    """
    if VSpace.mappings:
        inner = _unboxed(value)
        maker = VSpace.mappings.get(type(inner))
        if maker is not None:
            return maker(inner)
    return _ValueSpace(value)


def _leaves(tree):
    return tree_flatten(tree)[0]


def _leaf_space(leaf):
    """(shape, dtype, whether it is an array) of one leaf."""
    inner = raw(leaf)
    if isinstance(inner, (bool, _np.bool_)) or not isinstance(
            inner, (int, float, complex, _np.ndarray, _np.generic)):
        raise TypeError(f"vspace: a leaf of type {type(inner).__name__} ({inner!r:.40}) has no "
                        f"vector space; expected numbers or arrays of numbers (or register a "
                        f"space for its type with VSpace.register)")
    dtype = _np.result_type(inner)
    if dtype.kind not in "fc":
        dtype = _np.dtype(_np.float64)
    is_array = isinstance(inner, _np.ndarray) or isinstance(leaf, _EngineBox)
    return tuple(_np.shape(inner)), dtype, is_array


def _unboxed(x):
    """x without the boxes of traces of user types around it."""
    while isinstance(x, Box):
        x = x._value
    return x
