"""An operation and its derivative rules: the one shape every rule in chainrule has.

An operation is a forward function on NumPy arrays and numbers, and, for each of its
differentiable positional arguments, two rules::

    vjp(g, ans, *args, **kwargs)   reverse mode: the gradient with respect to this
                                   argument, given the gradient g arriving at ans
    jvp(t, ans, *args, **kwargs)   forward mode: the tangent of ans caused by the
                                   tangent t of this argument

``ans`` is the forward's result. A VJP may return a result of the broadcast shape: the
engine sums it back to the argument's shape (``unbroadcast``) and casts it to its
dtype. An argument without rules is not differentiable (a label, an index, a flag).

Two shorthands keep the table short:

* ``elementwise(forward, name, *partials)``: an operation that works entry by entry
  (with NumPy broadcasting) is defined by its partial derivatives, one per argument:
  ``partial(ans, *args)``. Both rules follow from it: g * partial and t * partial.
* ``defvjp(..., symmetric=True)``: where the Jacobian is symmetric (softmax), the same
  rules serve forward mode, with t in place of g.

Operations built from others (``a - b`` as ``a + (-b)``, ``gelu``) need no rules at all.

Who runs what: calling a Primitive on plain arrays and numbers is the forward function
and nothing else. Called with a *box* among its arguments (a ``Tensor`` that records a
graph, a ``Value``, a forward-mode tracer), it hands the call to the box with the
highest level, which records or propagates what it must and calls the rules.

Where the parts are: what an argument can be (``Box``, ``raw``, ``shape_of``) is in
``boxes.py``, and what a call does with arguments other than plain arrays and numbers
(keyword operands, another library's arrays) in ``arguments.py``. This module holds the
record, its call and the ways to make one, and exports their public names too: every
rule imports its vocabulary from here.
"""

from collections.abc import Sequence
from typing import Any, Callable, overload

import numpy as np

from . import libraries
from .arguments import (_batched_param, _cast_first, _foreign_array, _in_keywords,
                        _operands_by_name, _refuse_foreign, _stacked, objects_refused,
                        of_a_library, renamed)
from .boxes import _PLAIN, _SEQUENCES, Box, _boxes_in, ndim_of, new_level, raw, shape_of

__all__ = ["Primitive", "primitive", "elementwise", "Box", "raw", "shape_of", "ndim_of",
           "new_level", "objects_refused", "of_a_library", "Batching", "ENTRYWISE",
           "LEADING_AXES", "along_axis", "refuse_mismatch", "broadcast_mismatch"]


class Batching:
    """How an operation runs on a batch of examples under ``cr.vmap`` (``batching=``).

    One part of an operation's record, which ``transforms/batching_rules.py`` carries out.
    The kinds most operations are:

    * ``ENTRYWISE``: entry by entry with broadcasting (what ``elementwise`` makes);
    * ``along_axis(axis=None, keepdims=False)``: along the axes its ``axis`` parameter
      names (a reduction, a cumulative sum, a transform along one axis), given the
      parameters after the operand, in order, with their defaults;
    * ``LEADING_AXES``: already computes on any leading axes (a stack of matrices), so
      the batch is one more.

    A few operations of shapes and products batch in a way of their own: their record
    holds a function of the call (``transforms/batching_rules.py`` writes those, beside the
    helpers they share). An operation without any (None) runs on each example in turn,
    the results stacked: always right, slower, and counted.

    >>> cr.exp.batching, cr.sum.batching, cr.linalg.det.batching
    (ENTRYWISE, along_axis(axis=None, keepdims=False), LEADING_AXES)
    """

    __slots__ = ("kind", "params")

    KINDS = ("entrywise", "leading axes", "along axis")

    def __init__(self, kind: str, params: tuple[tuple[str, Any], ...] = ()) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"Batching: kind {kind!r} is none of {', '.join(self.KINDS)}")
        if kind == "along axis" and "axis" not in dict(params):
            raise ValueError(f"Batching: an operation along an axis names its axis= "
                             f"parameter among its parameters, got {dict(params)}")
        self.kind, self.params = kind, tuple(params)

    def __repr__(self) -> str:
        if not self.params:
            return self.kind.upper().replace(" ", "_")
        return f"along_axis({', '.join(f'{k}={v!r}' for k, v in self.params)})"


ENTRYWISE = Batching("entrywise")
LEADING_AXES = Batching("leading axes")


def along_axis(**params: Any) -> Batching:
    """The batching of an operation along the axes its ``axis`` parameter names:
    ``params`` are its parameters after the operand, in order, with their defaults.

    >>> @cr.primitive(batching=cr.along_axis(axis=None))
    ... def total(x, axis=None):
    ...     return np.sum(x, axis=axis)
    >>> cr.vmap(lambda x: total(x, axis=0))(np.ones((5, 3, 2))).shape  # one call
    (5, 2)
    """
    return Batching("along axis", tuple(params.items()))


class Primitive:
    """An operation NumPy can compute, made differentiable by its rules.

    ``defvjp`` takes one reverse-mode rule per positional argument, ``defjvp`` one
    forward-mode rule per positional argument (None where an argument is not
    differentiable). ``variadic=True`` is for operations on any number of arrays
    (``concatenate``): one rule serves every argument and is told which with
    ``argnum=``. ``jacrev`` and ``jacfwd`` push a batch of cotangents or tangents through
    the rules at once (extra leading axes); a rule is called once per row of the batch
    unless ``batched=True`` says it handles leading axes itself (the library's do).
    ``batching`` says how ``cr.vmap`` runs it on a batch (``Batching``; by default,
    once per example).
    ``text`` (optional, one string per argument) shows a rule to a reader in
    ``backward(explain=True)``: ``{g}`` is the incoming gradient, ``{out}`` the result,
    ``{0}``, ``{1}`` the arguments.

    >>> cube = cr.Primitive(lambda x: x ** 3, "cube")
    >>> _ = cube.defvjp(lambda g, ans, x: g * 3 * x ** 2)      # d/dx x**3 = 3x**2
    >>> _ = cube.defjvp(lambda t, ans, x: t * 3 * x ** 2)
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = cube(x)
    >>> y
    tensor([1., 8.], grad_fn=cube)
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    >>> cr.jvp(cube, (2.0,), (1.0,))                # forward mode uses the jvp rule
    (8.0, 12.0)
    """

    keeps_residual = False  # a speed override (chainrule.rules.fused) may keep what its VJP reuses
    # or joint_jvp(primals, {argnum: tangent}, kwargs) -> (ans, tangent): one forward-mode
    # rule for all the tangents, which computes the result too (cr.custom_jvp's)
    joint_jvp = None
    # NumPy's dtype= of a reduction (np.sum(x, dtype=np.float32)) computes in that dtype:
    # the operand cast first, which is how NumPy itself does it
    casts_to_dtype = False
    # mismatch(name, a, b) -> a message naming the operation and both operands' shapes
    # where they do not fit (NumPy's own says "remapped shapes" or a gufunc's signature),
    # or None: see refuse_mismatch
    mismatch = None
    # False where the forward does more than compute its result (a custom function's
    # notes its outputs' layout for the call): a checkpoint's second run computes it
    # again rather than hand back the result its first run kept
    replayable = True

    def __init__(self, forward, name=None, *, batched=False, variadic=False, doc=None,
                 aliases=None, batching=None):
        self.forward = forward
        self.aliases = aliases  # other names of keyword arguments (PyTorch's dim=)
        self.name = name or forward.__name__
        self.vjps = {}
        self.jvps = {}
        self.texts = {}
        self.batched = batched
        self.batching = batching
        self.variadic = variadic
        self.__doc__ = doc or forward.__doc__
        self.__wrapped__ = forward

    def __repr__(self):
        return f"<primitive {self.name}>"

    # named as a function is, for code that wraps or dispatches on functions
    # (functools.wraps, autograd's programs that read fun.__name__)
    __name__ = property(lambda self: self.name)

    def defvjp(self, *rules, symmetric=False, text=()):
        """Reverse-mode rules, one per positional argument (None: not differentiable).
        ``symmetric=True``: the Jacobian is symmetric, so they are the JVPs too."""
        self._check_count(rules, "defvjp")
        for argnum, rule in enumerate(rules):
            if rule is not None:
                self.vjps[argnum] = rule
                if symmetric:
                    self.jvps[argnum] = rule
        for argnum, words in enumerate(text):
            self.texts[argnum] = words
        return self

    def defjvp(self, *rules):
        """Forward-mode rules, one per positional argument (None: not differentiable)."""
        self._check_count(rules, "defjvp")
        for argnum, rule in enumerate(rules):
            if rule is not None:
                self.jvps[argnum] = rule
        return self

    def _check_count(self, rules, method):
        if self.variadic and len(rules) != 1:
            raise TypeError(f"{self.name}.{method}: a variadic operation takes one rule "
                            f"for all its arguments (told which by argnum=)")

    def vjp(self, argnum):
        """The reverse-mode rule for argument ``argnum``; TypeError if there is none."""
        return self._rule(self.vjps, argnum, "reverse-mode", "defvjp")

    def jvp(self, argnum):
        """The forward-mode rule for argument ``argnum``; TypeError if there is none."""
        return self._rule(self.jvps, argnum, "forward-mode", "defjvp")

    def _rule(self, rules, argnum, mode, method):
        if self.variadic:
            rule = rules.get(0)
            if rule is not None:
                return lambda d, ans, *args, **kwargs: rule(d, ans, *args, argnum=argnum,
                                                            **kwargs)
        else:
            rule = rules.get(argnum)
            if rule is not None:
                return rule
        raise TypeError(f"{self.name}: argument {argnum} needs a {mode} derivative, but "
                        f"the operation has no {mode} rule for it; define one with "
                        f".{method}() (or pass the argument as a constant)")

    def differentiable(self, argnum):
        """Whether argument ``argnum`` has a reverse-mode rule."""
        return (0 if self.variadic else argnum) in self.vjps

    def pullback(self, g, ans, args, kwargs, argnums):
        """The gradients of the arguments in ``argnums``, in that order: what a backward
        pass asks of a node. The plain way is one VJP rule per argument; a speed
        override (``chainrule.rules.fused``) may share work between them."""
        if self.variadic:
            return [self.vjp(argnum)(g, ans, *args, **kwargs) for argnum in argnums]
        # self.vjp(argnum) is the table's rule where there is one: looked up here, in a
        # loop (no comprehension's frame); self.vjp raises for an argument without one
        rules, vjps = self.vjps, []
        for argnum in argnums:
            rule = rules.get(argnum)
            if rule is None:
                rule = self.vjp(argnum)
            vjps.append(rule(g, ans, *args, **kwargs))
        return vjps

    def __call__(self, *args, **kwargs):
        # keywords of plain types only (axis=, an index of slices) hold neither a batch
        # nor another library's array: _batched_param and _in_keywords would find none
        plain_keywords = True
        if kwargs:
            if "input" in kwargs or "other" in kwargs:
                args, kwargs = _operands_by_name(args, kwargs, self.name)
            if "precision" in kwargs:  # XLA's matmul precision: one choice on a CPU
                kwargs = {k: v for k, v in kwargs.items() if k != "precision"}
            if self.aliases is not None:
                kwargs = renamed(kwargs, self.aliases, self.name)
            if "dtype" in kwargs and self.casts_to_dtype:
                args, kwargs = _cast_first(args, kwargs, self.name)
            for value in kwargs.values():
                if type(value) not in _PLAIN:
                    plain_keywords = False
                    break
        top = None if plain_keywords else _batched_param(kwargs)
        foreign = None
        for arg in args:
            if type(arg) not in _PLAIN:
                if isinstance(arg, Box):
                    if top is None or arg._level > top._level:
                        top = arg
                elif type(arg) in _SEQUENCES:  # (a shape, an index: never an array)
                    if _boxes_in(arg):
                        # a list (or tuple) of Tensors is their stack (np.mean([x, y])
                        # as cr.mean): handing it to NumPy would cut them from the graph
                        return self(*[_stacked(a) for a in args], **kwargs)
                elif _foreign_array(arg):
                    foreign = arg
        if not plain_keywords and foreign is None:  # a keyword parameter of a library:
            foreign = _in_keywords(args, kwargs)     # f(x, w=t)
        if foreign is not None:  # torch, CuPy, Dask...: chainrule.backends
            return libraries.foreign_call(self, args, kwargs, foreign, top is not None,
                                          _refuse_foreign(self.name, foreign))
        if top is None:
            try:
                return self.forward(*args, **kwargs)
            except ValueError as err:
                refuse_mismatch(self, args, err)
                raise
        return top._apply_primitive(self, args, kwargs)


def call_unwrapped(prim: "Primitive", args: Sequence[Any], kwargs: dict) -> Any:
    """``prim(*args, **kwargs)`` for a transform that has unwrapped its own level: where
    every argument is a plain NumPy array or number, straight to the forward (what
    ``__call__`` would do once its scan found nothing to hand them to, and the keywords
    are already in their final form: ``__call__`` made them so before the transform got
    them); anything else (an outer level's value, a cr.jit trace's array, another
    library's) goes through ``__call__``. Tested equal by every transform test.

    >>> call_unwrapped(cr.add, (np.ones(2), 2.0), {}).tolist()
    [3.0, 3.0]
    """
    if type(prim).__call__ is not Primitive.__call__:  # (a custom function's own call)
        return prim(*args, **kwargs)
    for arg in args:
        if type(arg) not in _PLAIN:
            return prim(*args, **kwargs)
    for value in kwargs.values():
        if type(value) not in _PLAIN and not (
                type(value) is tuple and all(type(v) in _PLAIN for v in value)):
            return prim(*args, **kwargs)
    try:
        return prim.forward(*args, **kwargs)
    except ValueError as err:
        refuse_mismatch(prim, args, err)
        raise


def refuse_mismatch(prim: "Primitive", operands: Sequence[Any], err: ValueError) -> None:
    """Raise a ValueError naming the operation and its operands' shapes in place of
    NumPy's ``err``, where the shapes are why it failed and the operation can say how
    (``prim.mismatch``); return otherwise, for the caller to raise ``err`` as it is.
    Called only once the forward has failed: the success path pays nothing.

    >>> a, b = np.ones((2, 3)), np.ones(4)
    >>> refuse_mismatch(cr.add, (a, b), ValueError("operands could not be broadcast"))
    Traceback (most recent call last):
    ValueError: add: shapes (2, 3) and (4,) do not broadcast (axis -1 has 3 and 4; ...)
    """
    if prim.mismatch is None or len(operands) < 2:
        return
    message = prim.mismatch(prim.name, operands[0], operands[1])
    if message is not None:
        raise ValueError(message) from err


def broadcast_mismatch(name: str, a: Any, b: Any) -> str | None:
    """The message of an elementwise operation whose operands' shapes do not broadcast
    (None if they do: then something else failed).

    >>> print(broadcast_mismatch("multiply", np.ones((2, 3)), np.ones((3, 2))))
    multiply: shapes (2, 3) and (3, 2) do not broadcast (axis -1 has 3 and 2; ...)
    >>> broadcast_mismatch("multiply", np.ones((2, 3)), np.ones(3)) is None
    True
    """
    a_shape, b_shape = shape_of(a), shape_of(b)
    try:
        np.broadcast_shapes(a_shape, b_shape)
        return None
    except ValueError:
        pass
    for axis in range(-1, -min(len(a_shape), len(b_shape)) - 1, -1):
        m, n = a_shape[axis], b_shape[axis]
        if m != n and 1 not in (m, n):
            return (f"{name}: shapes {a_shape} and {b_shape} do not broadcast (axis "
                    f"{axis} has {m} and {n}; sizes must match, or one be 1)")
    return f"{name}: shapes {a_shape} and {b_shape} do not broadcast"


# Called with the function, a Primitive; called with only keywords (@primitive(name=...)),
# the decorator that makes one (the overloads tell a type checker which).
@overload
def primitive(forward: Callable[..., Any], *, name: str | None = None, batched: bool = False,
              batching: Batching | None = None) -> "Primitive": ...
@overload
def primitive(forward: None = None, *, name: str | None = None, batched: bool = False,
              batching: Batching | None = None
              ) -> "Callable[[Callable[..., Any]], Primitive]": ...


def primitive(forward: Callable[..., Any] | None = None, *, name: str | None = None,
              batched: bool = False, batching: Batching | None = None
              ) -> "Primitive | Callable[[Callable[..., Any]], Primitive]":
    """Decorator: turn a NumPy function into a differentiable operation (add its rules
    with ``.defvjp`` and ``.defjvp``).

    The operation then works on Tensors, arrays, numbers and Values, in every
    transform; ``cr.gradcheck`` checks the rules against central differences.
    ``batching=cr.ENTRYWISE`` (or another ``Batching``) lets ``cr.vmap`` run it on a
    whole batch at once rather than once per example.

    >>> @cr.primitive
    ... def cube(x):
    ...     return x ** 3
    >>> _ = cube.defvjp(lambda g, ans, x: g * 3 * x ** 2)
    >>> cr.grad(cube)(2.0)                          # 3 * 2**2
    12.0
    """
    if forward is None:
        return lambda f: Primitive(f, name, batched=batched, batching=batching)
    return Primitive(forward, name, batched=batched, batching=batching)


def elementwise(forward: Callable[..., Any], name: str,
                *partials: Callable[..., Any] | float | None, text: Sequence[str] = (),
                doc: str | None = None) -> "Primitive":
    """An elementwise operation given by its partial derivatives, one per argument.

    ``partial(ans, *args, **kwargs)`` is d ans / d arg, entry by entry (an array that
    broadcasts against the result), or a constant number (1 for ``add``). The VJP is
    ``g * partial`` and the JVP ``t * partial``: the Jacobian of an elementwise map is
    diagonal. ``text`` shows each partial to a reader.

    >>> square = cr.elementwise(np.square, "square", lambda ans, x: 2 * x)
    >>> cr.grad(lambda x: cr.sum(square(x)))(np.array([1.0, 3.0]))
    array([2., 6.])
    """
    prim = Primitive(forward, name, batched=True, doc=doc, batching=ENTRYWISE)
    if len(partials) == 2:
        prim.mismatch = broadcast_mismatch
    for argnum, partial in enumerate(partials):
        if partial is None:
            continue
        prim.vjps[argnum] = _gradient_times(partial)
        prim.jvps[argnum] = _tangent_times(partial, argnum)
    for argnum, words in enumerate(text):  # a partial, or the whole VJP if it names {g}
        prim.texts[argnum] = (words if "{g}" in words else
                              "{g}" if words == "1" else f"{_factor(words)} * {{g}}")
    return prim


def _factor(words):
    """A partial written before ``* {g}``, as the scalar engine writes it (partial *
    grad); in parentheses when it is a phrase ("1 where x is finite, else 0") that the
    product would otherwise cut in two."""
    return f"({words})" if "," in words else words


def _gradient_times(partial):
    if partial == 1:
        return lambda g, ans, *args, **kwargs: g
    if partial == -1:
        return lambda g, ans, *args, **kwargs: -g
    return lambda g, ans, *args, **kwargs: g * partial(ans, *args, **kwargs)


def _tangent_times(partial, argnum):
    """t * partial, with the tangent's batch axes (jacfwd's columns) kept in front: an
    argument with fewer axes than the result is padded with 1s behind them first."""
    def jvp(t, ans, *args, **kwargs):
        arg_ndim, t_ndim = ndim_of(args[argnum]), ndim_of(t)
        if t_ndim > arg_ndim and arg_ndim < ndim_of(ans):
            lead = shape_of(t)[:t_ndim - arg_ndim]
            t = t.reshape(lead + (1,) * (ndim_of(ans) - arg_ndim) + shape_of(args[argnum]))
        if partial == 1:
            return t
        if partial == -1:
            return -t
        return t * partial(ans, *args, **kwargs)
    return jvp
