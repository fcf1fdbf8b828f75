"""autograd.core: the one-argument operators ``make_vjp(fun, x)`` and
``make_jvp(fun, x)``, ``vspace`` (the vector space a value lives in: its zeros, random
elements, inner product), ``VSpace`` (the base of a vector space of your own), and the
rule-giving names of ``autograd.extend``.

    >>> from chainrule.autograd.core import make_vjp, vspace
    >>> vjp, ans = make_vjp(lambda x: x ** 3, 2.0)
    >>> ans, vjp(1.0)
    (8.0, 12.0)
    >>> vspace({"w": np.ones(2), "b": 0.5}).zeros()
    {'w': array([0., 0.]), 'b': 0.0}

Numbers, arrays and trees of them are differentiated by chainrule's transforms. A
value of a type registered with ``VSpace.register`` (and ``Box.register``) is
differentiated by a trace of its own (``tracer.trace``), walked backwards here as
autograd walks its graph: each operation's VJP rules give its operands' gradients,
which add up in the operand's vector space (``VSpace.add``, where arrays use ``+``).
Forward mode (``make_jvp``) is the same trace, each node carrying its value's tangent
from its operands' tangents by the operation's JVP rules (``user_jvp``).
"""

import warnings

import numpy as _np

from ...primitive import Box as _EngineBox, Primitive, new_level, raw, shape_of
from ...transforms import functional as _f
from ...transforms.pytrees import tree_flatten, tree_map, tree_unflatten
from .tracer import Box, Node, _Primitive, new_box

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "primitive", "defvjp", "defjvp",
           "defvjp_argnum", "defjvp_argnum", "def_linear", "Box"]


def make_vjp(fun, x):
    """``(vjp, fun(x))``: fun at x, and the function taking a cotangent shaped like
    ``fun(x)`` to the vector-Jacobian product, shaped like x (x may be a tuple, list or
    dict of arrays, or a value of a registered vector space).

    >>> vjp, ans = make_vjp(lambda v: v * v, np.array([1.0, 2.0]))
    >>> vjp(np.ones(2))
    array([2., 4.])
    """
    if in_user_space((x,), 0):
        out, pullback = user_vjp(fun, (x,), {}, (0,))
        return (lambda g: pullback(g)[0]), out
    out, pullback = _f.vjp(_bools_as_constants(fun), x)
    return (lambda g: pullback(g)[0]), out


def make_jvp(fun, x):
    """``jvp(v) -> (fun(x), the derivative of fun at x along v)``, in forward mode.

    >>> from chainrule.autograd.core import make_jvp
    >>> make_jvp(lambda v: v ** 2, 3.0)(1.0)
    (9.0, 6.0)
    """
    if in_user_space((x,), 0):
        return lambda v: user_jvp(fun, (x,), {}, (0,), (v,))
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


# -------------------- rules of primitives, given as autograd gives them --------------------

class _PrimitiveWithDeprecations(_Primitive):
    """What ``autograd.primitive`` (and ``autograd.core.primitive``) makes, as autograd
    does: the operation ``tracer.primitive`` makes, which also answers autograd's
    deprecated methods of a primitive, with its warning: ``f.defvjp(vjp, argnum)`` (``vjp(g, ans, vs,
    gvs, *args)``), ``f.defgrad(maker, argnum)`` (``maker(ans, *args)`` returns
    ``vjp(g)``) and ``f.defvjp_is_zero(argnums)``."""

    def defvjp(self, vjp, argnum=0):
        _deprecated("defvjp")
        def maker(ans, *args, **kwargs):
            return lambda g: vjp(g, ans, vspace(args[argnum]), vspace(g), *args, **kwargs)
        return self._one_rule(argnum, maker)

    def defgrad(self, maker, argnum=0):
        _deprecated("defgrad")
        return self._one_rule(argnum, maker)

    def defvjp_is_zero(self, argnums=(0,)):
        _deprecated("defvjp_is_zero")
        for argnum in argnums:
            self._one_rule(argnum, None)
        return self

    def _one_rule(self, argnum, maker):
        """Argument ``argnum``'s rule (autograd's maker; None: zero), the others kept."""
        rules = dict(getattr(self, "_makers", {}))
        rules[argnum] = maker
        self._makers = rules
        positions = sorted(rules)
        defvjp(self, *[rules[k] for k in positions], argnums=positions)
        return self


def _deprecated(method):
    warnings.warn(f"The {method} method is deprecated (as in autograd): use "
                  f"autograd.extend.defvjp(fun, maker, argnums=...)", DeprecationWarning,
                  stacklevel=3)


def primitive(fun):
    """``fun`` as an operation (``tracer.primitive``) that also takes autograd's
    deprecated ``f.defvjp``, ``f.defgrad`` and ``f.defvjp_is_zero``: what
    ``autograd.primitive`` and ``autograd.core.primitive`` make."""
    return _PrimitiveWithDeprecations(fun)


def defvjp(fun, *makers, argnums=None):
    """Reverse-mode rules for ``fun``'s arguments (0, 1, ... or ``argnums``): each
    ``maker(ans, *args, **kwargs)`` returns ``vjp(g)``; None: the gradient is zero
    there (autograd's meaning). An argument given no rule is not differentiable.

    >>> from chainrule.autograd import grad
    >>> @primitive
    ... def logsumexp(x):
    ...     return np.log(np.sum(np.exp(x)))
    >>> _ = defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    >>> grad(logsumexp)(np.zeros(2))
    array([0.5, 0.5])
    """
    positions = range(len(makers)) if argnums is None else argnums
    rules = [None] * (max(positions, default=-1) + 1)
    for position, maker in zip(positions, makers):
        if maker is None:
            rules[position] = (lambda g, ans, *args, _at=position, **kwargs:
                               vspace(args[_at]).zeros())
        else:
            rules[position] = (lambda g, ans, *args, _maker=maker, **kwargs:
                               _maker(ans, *args, **kwargs)(g))
    return Primitive.defvjp(fun, *rules)


def defjvp(fun, *jvps, argnums=None):
    """Forward-mode rules for ``fun``'s arguments: ``jvp(g, ans, *args, **kwargs)`` is
    the tangent of the result for the tangent g of that argument; None: the tangent is
    zero there (autograd's meaning). ``"same"`` applies ``fun`` to the tangent (a
    linear function)."""
    positions = range(len(jvps)) if argnums is None else argnums
    rules = [None] * (max(positions, default=-1) + 1)
    for position, jvp in zip(positions, jvps):
        if jvp == "same":
            jvp = (lambda g, ans, *args, _at=position, **kwargs:
                   fun(*args[:_at], g, *args[_at + 1:], **kwargs))
        elif jvp is None:
            jvp = lambda g, ans, *args, **kwargs: vspace(ans).zeros()  # noqa: E731
        rules[position] = jvp
    return Primitive.defjvp(fun, *rules)


def defvjp_argnum(fun, maker):
    """One reverse-mode rule for every argument: ``maker(argnum, ans, args, kwargs)``
    returns ``vjp(g)``."""
    count = fun.__wrapped__.__code__.co_argcount
    return Primitive.defvjp(fun, *[(lambda g, ans, *args, _at=i, **kwargs: maker(_at, ans, args, kwargs)(g))
                        for i in range(count)])


def defjvp_argnum(fun, jvp):
    """One forward-mode rule for every argument: ``jvp(argnum, g, ans, args, kwargs)``."""
    count = fun.__wrapped__.__code__.co_argcount
    return Primitive.defjvp(fun, *[(lambda g, ans, *args, _at=i, **kwargs: jvp(_at, g, ans, args, kwargs))
                        for i in range(count)])


def def_linear(fun):
    """Say that ``fun`` is linear in each argument: its forward-mode rule for an
    argument is ``fun`` itself applied to the tangent there."""
    count = fun.__wrapped__.__code__.co_argcount
    return defjvp(fun, *["same"] * count)


# -------------------- vector spaces --------------------

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


# -------------------- reverse mode in a user's vector space --------------------

def in_user_space(args, argnum):
    """Whether an argument that ``argnum`` names (an int, or a tuple of them) is a value
    of a type registered with ``VSpace.register`` or ``Box.register``: one that
    ``user_vjp`` differentiates, not chainrule's transforms. Nothing registered: two
    dict checks."""
    if not (VSpace.mappings or Box.type_mappings):
        return False
    positions = argnum if type(argnum) is tuple else (argnum,)
    return any(i < len(args) and (type(args[i]) in VSpace.mappings
                                  or type(args[i]) in Box.type_mappings)
               for i in positions)


def user_vjp(fun, args, kwargs, positions):
    """``(fun(*args, **kwargs), pullback)`` with the arguments at ``positions`` traced:
    ``pullback(g)`` is the tuple of their gradients for the cotangent g of the result
    (a tuple of cotangents for a tuple of results), each an element of its argument's
    vector space (its ``zeros()`` where the result does not depend on it)."""
    level = new_level()
    roots = [_VJPNode.new_root() for _ in positions]
    boxed = list(args)
    for i, root in zip(positions, roots):
        boxed[i] = _start(args[i], level, root)
    value, ends = _opened(fun(*boxed, **kwargs), level)

    def pullback(g):
        arrived = _backward(_seeds(g, ends))
        return tuple(_as_argument(arrived[root], args[i]) if root in arrived
                     else vspace(args[i]).zeros() for i, root in zip(positions, roots))
    return value, pullback


def user_jvp(fun, args, kwargs, positions, tangents):
    """``(fun(*args, **kwargs), its tangent)`` for the tangents of the arguments at
    ``positions``, in forward mode: each operation's JVP rules (``defjvp``) give its
    result's tangent from its operands'. The result's space's ``zeros()`` where it does
    not depend on them; a tuple of tangents for a tuple of results."""
    level = new_level()
    boxed = list(args)
    for i, tangent in zip(positions, tangents):
        boxed[i] = _start(args[i], level, _JVPNode.new_root(tangent))
    value, ends = _opened(fun(*boxed, **kwargs), level)

    def tangent_of(value, end):
        if type(end) is list:
            return type(value)(tangent_of(v, e) for v, e in zip(value, end))
        return vspace(value).zeros() if end is None else end.g
    return value, tangent_of(value, ends)


def _opened(out, level):
    """``(value, ends)``: the result of the trace at ``level`` out of its box and the
    node it ends at (None where it does not depend on the arguments); for a tuple or
    list, one of each per element (a list of ends)."""
    if type(out) in (tuple, list):
        opened = [_opened(part, level) for part in out]
        return type(out)(value for value, _ in opened), [end for _, end in opened]
    if isinstance(out, Box) and out._level == level:
        return out._value, out._node
    return out, None


def _seeds(g, ends):
    """The pairs (node, cotangent) a backward pass starts from: g at the end node, or a
    tuple's cotangents at its elements' end nodes."""
    if type(ends) is list:
        return [seed for part, end in zip(g, ends) for seed in _seeds(part, end)]
    return [] if ends is None else [(ends, g)]


def user_value_and_grad(fun, argnum, args, kwargs):
    """``(value, gradient)`` of a scalar function, by ``user_vjp``."""
    positions = argnum if type(argnum) is tuple else (argnum,)
    value, pullback = user_vjp(fun, args, kwargs, positions)
    if _np.size(raw(value)) != 1 or VSpace.mappings.get(type(_unboxed(value))):
        raise TypeError(f"grad: the function must return a scalar, but it returned a "
                        f"{type(raw(value)).__name__}")
    grads = pullback(vspace(value).ones())
    return value, (grads if type(argnum) is tuple else grads[0])


def _start(x, level, root):
    """An argument boxed at the start of a trace: a value of a user's space in its Box,
    a number or array in one that takes NumPy's operations. TypeError for a type with a
    vector space and no Box, a Box and no vector space, or neither."""
    inner = _unboxed(x)
    name = type(inner).__name__
    in_space, has_box = type(inner) in VSpace.mappings, type(x) in Box.type_mappings
    if in_space and not has_box:
        raise TypeError(f"grad: a {name} has a vector space (VSpace.register) but no Box "
                        f"to be traced in; register one: class {name}Box(Box, {name}), "
                        f"and {name}Box.register({name})")
    if has_box and not in_space:
        raise TypeError(f"grad: a {name} has a Box (Box.register) but no vector space; "
                        f"register one: class {name}VSpace(VSpace) with zeros, _add, "
                        f"_scalar_mul and _inner_prod, and {name}VSpace.register({name})")
    if not in_space and not isinstance(raw(x), (int, float, _np.ndarray, _np.generic)):
        raise TypeError(f"grad: expected a float, a NumPy array or a value of a "
                        f"registered vector space (VSpace.register) to differentiate, got "
                        f"{name}")
    return new_box(x, level, root)


class _VJPNode(Node):
    """A node of a reverse-mode trace: the operation (a Primitive), its result and
    arguments (as the operation saw them), and the nodes of its traced arguments
    (``parents``) at positions ``argnums``."""

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        prim = fun.prim
        for argnum in parent_argnums:
            if not prim.differentiable(argnum):
                raise TypeError(f"{prim.name}: argument {argnum} is being differentiated, "
                                f"but the operation has no VJP for it; give one with "
                                f"defvjp")
        self.prim, self.ans, self.args, self.kwargs = prim, value, args, kwargs
        self.argnums, self.parents = parent_argnums, parents

    def initialize_root(self):
        self.parents = ()


class _JVPNode(Node):
    """A node of a forward-mode trace: ``g``, the tangent of its value, the sum of what
    the operation's JVP rules make of its traced operands' tangents."""

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        prim, self.g = fun.prim, None
        for parent, argnum in zip(parents, parent_argnums):
            part = prim.jvp(argnum)(parent.g, value, *args, **kwargs)
            self.g = part if self.g is None else _added(self.g, part)

    def initialize_root(self, g):
        self.g = g


def _backward(seeds):
    """The gradients arriving at the roots of a trace for the cotangents ``seeds`` of
    its end nodes: ``{root: gradient}``. Each node's VJP rules give its operands'
    gradients; two reaching one node are added in its vector space."""
    grads, arrived = {}, {}
    for end, g in seeds:
        grads[end] = _added(grads[end], g) if end in grads else g
    for node in _toposort(list(grads)):
        g = grads.pop(node)
        if not node.parents:
            arrived[node] = g
            continue
        parts = node.prim.pullback(g, node.ans, node.args, node.kwargs, node.argnums)
        for parent, argnum, part in zip(node.parents, node.argnums, parts):
            part = _fitted(part, node.args[argnum])
            grads[parent] = _added(grads[parent], part) if parent in grads else part
    return arrived


def _toposort(ends):
    """The nodes of a trace from its end nodes back to its roots, each after every node
    that reads it."""
    readers, stack, seen = {}, list(ends), set(ends)
    while stack:
        for parent in stack.pop().parents:
            readers[parent] = readers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    ready = [end for end in ends if end not in readers]
    while ready:
        node = ready.pop()
        yield node
        for parent in node.parents:
            readers[parent] -= 1
            if readers[parent] == 0:
                ready.append(parent)


def _added(a, b):
    """Two gradients of one value added: in its registered vector space, else with +."""
    if VSpace.mappings.get(type(_unboxed(a))) is not None:
        return vspace(a).add(a, b)
    return a + b


def _fitted(g, arg):
    """The gradient of an array argument summed back to its shape, where broadcasting
    made the operation's result larger (a value of a user's space is left as it is)."""
    if VSpace.mappings.get(type(_unboxed(arg))) is None and shape_of(g) != shape_of(arg):
        from ... import rules
        return rules.unbroadcast(g, shape_of(arg))
    return g


def _as_argument(g, x):
    """A gradient as its argument's kind: a float for a float."""
    return float(g) if type(x) is float and not isinstance(g, _EngineBox) else g


def _unboxed(x):
    """x without the boxes of traces of user types around it."""
    while isinstance(x, Box):
        x = x._value
    return x
