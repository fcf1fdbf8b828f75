"""``cr.Function``: PyTorch's class spelling of a custom operation, on ``cr.Primitive``.

    class Cube(cr.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x ** 2

    y = Cube.apply(x)

Each subclass is one primitive: ``forward`` computes on Tensors that carry no graph (so
it may use any Tensor method), and ``backward`` is the VJP rule, given the incoming
gradient and returning one gradient per input (None: zero). It works wherever a
``cr.primitive`` does: ``backward()``, every transform, ``cr.jit``, ``cr.gradcheck``.

Second derivatives differentiate ``backward`` itself, so it must be written in chainrule's
operations, as PyTorch's double backward asks. What it reads from ``ctx.saved_tensors``
is then the differentiated input or output itself (not a frozen copy), so the second
derivative sees every way the gradient depends on them; a saved value that is neither an
input nor the output has no such link, and a second derivative through it is refused.

Forward mode uses ``jvp(ctx, *tangents)`` when the class defines it; otherwise it is
derived from ``backward``, which is linear in the gradient: the tangent J t is the VJP
of u -> backward(u) = J^T u, along t.
"""

import weakref
from typing import Any

import numpy as np

from ..primitive import Box, Primitive, raw, shape_of
from ..tensor import Tensor
from .batching import BatchTracer
from .forward import JVPTracer
from .functional import vjp
from .tracer import derivative_levels

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """What ``forward`` leaves for ``backward``: values saved with
    ``save_for_backward``, read back as ``saved_tensors``, and any attribute set on it.

    >>> class Scale(cr.Function):
    ...     @staticmethod
    ...     def forward(ctx, x, factor):
    ...         ctx.factor = factor                # a plain number: an attribute
    ...         return x * factor
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad * ctx.factor, None
    >>> cr.grad(lambda x: Scale.apply(x, 3.0))(2.0)
    3.0
    """

    def __init__(self, needs_input_grad=()):
        self.needs_input_grad = needs_input_grad
        self._saved = ()
        self._sources = ()
        self.saved_tensors = ()

    def save_for_backward(self, *values):
        self._saved = values


class Function:
    """A custom operation written as PyTorch's ``torch.autograd.Function``: subclass it
    with static ``forward(ctx, *inputs)`` and ``backward(ctx, *grads)`` methods (and,
    optionally, ``jvp(ctx, *tangents)``), and call ``apply``.

    >>> class Cube(cr.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return grad * 3 * x ** 2
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    >>> cr.grad(cr.grad(Cube.apply))(2.0)                  # 6x, from backward's own graph
    12.0
    """

    # (typed as PyTorch types them, taking anything, so that a subclass's
    # forward(ctx, x, factor) overrides them in a type checker's eyes too)
    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Function subclass defines forward(ctx, *inputs) as a staticmethod")

    @staticmethod
    def backward(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Function subclass defines backward(ctx, *grads) as a staticmethod")

    jvp = None  # or a staticmethod jvp(ctx, *tangents): the tangent of the output

    @classmethod
    def apply(cls, *inputs):
        """``forward`` on these inputs, recorded as one operation with ``backward`` as
        its derivative."""
        op = cls.__dict__.get("_primitive")
        if op is None:
            op = _primitive_of(cls)
            cls._primitive = op
        return op(*inputs)


def _primitive_of(cls):
    """The primitive of a Function class: its forward, and rules that call backward."""
    contexts = {}  # id(result) -> (weak reference to the result, its ctx)

    def run_forward(*inputs):
        ctx = FunctionCtx()
        shown = tuple(_shown(a) for a in inputs)
        # (the levels of the transforms that handle this call, each unwrapping its own
        # tracers among the inputs; the tensor engine's is 0)
        ctx._levels = set(op.calling) - {None}
        out = _plain(_closures_as_constants(cls.forward(ctx, *shown), ctx._levels, inputs),
                     cls)
        ctx._sources = tuple(_source(value, shown, out) for value in ctx._saved)
        return out, ctx

    def forward(*inputs):
        out, ctx = run_forward(*inputs)
        try:
            key = id(out)
            contexts[key] = (weakref.ref(out, lambda _, key=key: contexts.pop(key, None)), ctx)
        except TypeError:  # a result that takes no weak reference: rebuilt when needed
            pass
        return out

    def context_of(ans, inputs):
        """The ctx forward made for this result, or a new one from running it again
        (the rules may be handed a copy of the result)."""
        entry = contexts.get(id(ans))
        if entry is not None and entry[0]() is ans:
            return entry[1]
        return run_forward(*(raw(a) for a in inputs))[1]

    def prepared(d, ans, inputs):
        """forward's ctx, its saved values as the rule's (differentiable) arguments."""
        ctx = context_of(raw(ans), inputs)
        differentiating = any(isinstance(v, Box) for v in (d, ans, *inputs))
        ctx.saved_tensors = tuple(_saved_view(source, ans, inputs, differentiating, cls)
                                  for source in ctx._sources)
        ctx.needs_input_grad = tuple(True for _ in inputs)
        return ctx

    def gradients(g, ans, inputs):
        ctx = prepared(g, ans, inputs)
        grads = cls.backward(ctx, _shown(g))
        grads = grads if isinstance(grads, tuple) else (grads,)
        grads = tuple(_closures_as_constants(grad, ctx._levels, [g, ans, *inputs])
                      for grad in grads)
        if len(grads) != len(inputs):
            raise TypeError(f"{cls.__name__}.backward returned {len(grads)} gradient(s) for "
                            f"{len(inputs)} input(s); return one per input of forward "
                            f"(None for one that has no gradient)")
        lead = shape_of(g)[:len(shape_of(g)) - len(shape_of(ans))]  # (jacrev's seeds)
        for k, (grad, x) in enumerate(zip(grads, inputs)):
            if grad is not None and not _fits(shape_of(grad), lead + shape_of(x)):
                raise ValueError(f"{cls.__name__}.backward returned a gradient of shape "
                                 f"{shape_of(grad)} for input {k} of shape {shape_of(x)}; "
                                 f"return one shaped like that input")
        return grads

    def vjp_rule(argnum):
        def rule(g, ans, *inputs):
            return _gradient_of(gradients(g, ans, inputs)[argnum], inputs[argnum])
        return rule

    def jvp_rule(argnum):
        def rule(t, ans, *inputs):
            if cls.jvp is not None:  # with the tangent of argnum, zeros elsewhere (the
                # primitive adds up one rule per argument)
                tangents = [t if i == argnum else 0.0 * raw(x) for i, x in enumerate(inputs)]
                return _unshown(cls.jvp(prepared(t, ans, inputs),
                                        *(_shown(v) for v in tangents)))
            # J t = d/du <backward(u), t> for backward(u) = J^T u, linear in u
            try:
                _, pullback = vjp(lambda u: _gradient_of(gradients(u, ans, inputs)[argnum],
                                                         inputs[argnum]), ans)
                tangent = pullback(t)[0]
            except (TypeError, AttributeError) as err:
                raise TypeError(f"{cls.__name__}: forward mode needs a staticmethod "
                                f"jvp(ctx, *tangents), or a backward written in chainrule's "
                                f"operations (no writes into arrays): {err}") from None
            if _closed_over(tangent, set(op.calling) - {None}, (t, ans, *inputs)):
                raise TypeError(f"{cls.__name__}: backward computes with a value forward "
                                f"mode is differentiating that is not an input (it closes "
                                f"over it), so the tangent derived from backward would carry "
                                f"it; pass that value as an input, or give {cls.__name__} a "
                                f"staticmethod jvp(ctx, *tangents)")
            return tangent
        return rule

    count = cls.forward.__code__.co_argcount - 1
    if cls.forward.__code__.co_flags & 0x04:  # forward(ctx, *inputs): any number
        raise TypeError(f"{cls.__name__}.forward must name its inputs "
                        f"(forward(ctx, x, y)), not take *args")
    op = _FunctionPrimitive(forward, cls.__name__)
    op.calling = []
    op.gradients = gradients
    op.defvjp(*(vjp_rule(i) for i in range(count)))
    op.defjvp(*(jvp_rule(i) for i in range(count)))
    return op


def _closed_over(value, levels, inputs):
    """The levels among ``levels`` (the transforms handling the call) that ``value``
    carries and none of ``inputs`` does: brought in by a value closed over."""
    return (derivative_levels(value) & levels) - set().union(*map(derivative_levels, inputs))


def _closures_as_constants(value, levels, inputs):
    """What forward or backward returned, without the derivatives that a value they
    close over brought in from the transforms handling the call (``levels``), where
    none of their own ``inputs`` carries them: PyTorch runs forward, and backward
    unless create_graph (where the inputs carry it), without recording, so such a value
    counts by its numbers, as there. An outer transform's values they close over keep
    their derivatives."""
    dropped = _closed_over(value, levels, inputs)
    while isinstance(value, Box) and value._level in dropped and not value._batched:
        value = value._contents()
    return value


def _fits(shape, target):
    """Whether a gradient of ``shape`` broadcasts to ``target`` (a number does)."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


class _FunctionPrimitive(Primitive):
    """A Function's primitive: one call of backward gives the gradients of all the
    arguments a backward pass asks for (the per-argument rules would call it once each).
    ``calling`` holds the level of each call in progress (the highest among its
    arguments), which forward and the rules read."""

    def __call__(self, *args, **kwargs):
        self.calling.append(max((a._level for a in args if isinstance(a, Box)
                                 and not a._batched), default=None))
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self.calling.pop()

    def pullback(self, g, ans, args, kwargs, argnums):
        grads = self.gradients(g, ans, args)
        return [_gradient_of(grads[i], args[i]) for i in argnums]


def _gradient_of(grad, like):
    """What backward returned for an input, as the engine takes it: None is zero."""
    return 0.0 * like if grad is None else _unshown(grad)


def _shown(value):
    """What forward and backward see: a plain array as a Tensor with no graph (with the
    Tensor methods a PyTorch user writes), a traced value as itself."""
    if type(value) is np.ndarray:
        return Tensor._make(value)
    if isinstance(value, np.generic):
        return Tensor(value)
    return value  # a number, a traced value (of a transform, or of cr.jit's recording)


def _unshown(value):
    """A value of forward or backward as the engine takes it: a Tensor without a graph
    (what arithmetic with the Tensors they were shown makes) as its array, inside
    cr.vmap's batches and forward mode's pairs too."""
    if isinstance(value, Tensor) and not value.requires_grad:
        return raw(value)
    if isinstance(value, BatchTracer):
        inner = _unshown(value.value)
        return value if inner is value.value else BatchTracer(inner, value._level)
    if isinstance(value, JVPTracer):  # (a backward differentiated in forward mode)
        primal, tangent = _unshown(value.primal), _unshown(value.tangent)
        if primal is value.primal and tangent is value.tangent:
            return value
        return JVPTracer(primal, tangent, value._level)
    return value


def _plain(out, cls):
    if isinstance(out, tuple):
        raise TypeError(f"{cls.__name__}.forward returned a tuple: a Function here has one "
                        f"output (return several stacked, or write one Function each)")
    return raw(out) if isinstance(out, Tensor) else out


def _source(value, shown, out):
    """Where a saved value comes from: the i-th input, the output, or elsewhere."""
    for i, candidate in enumerate(shown):
        if value is candidate:
            return ("input", i)
    if value is out or (isinstance(value, Tensor) and raw(value) is out):
        return ("output", None)
    return ("other", raw(value) if isinstance(value, Tensor) else value)


def _saved_view(source, ans, inputs, differentiating, cls):
    kind, where = source
    if kind == "input":
        return _shown(inputs[where])
    if kind == "output":
        return _shown(ans)
    if differentiating:
        raise TypeError(f"{cls.__name__}: a second derivative through a value saved with "
                        f"save_for_backward that is neither an input nor the output of "
                        f"forward is not available (it would be taken as a constant); save "
                        f"inputs or the output, and recompute the rest in backward")
    return _shown(where)
