"""``cr.custom_jvp`` and ``cr.custom_vjp``: JAX's decorators that give a Python function
its own derivative rule, with JAX's signatures::

    @cr.custom_jvp                       @cr.custom_vjp
    def f(x, y): ...                     def f(x, y): ...

    @f.defjvp                            def f_fwd(x, y): return f(x, y), residuals
    def f_jvp(primals, tangents):        def f_bwd(residuals, g): return (gx, gy)
        ...                              f.defvjp(f_fwd, f_bwd)
        return primal_out, tangent_out

This module is the surface: arguments bound to positions, ``nondiff_argnums`` set
aside (passed first to the rules, as JAX does), pytrees flattened to the array leaves
the primitive of ``custom_primitive.py`` takes, and what the user's rules return checked
against the function's output, in one-line errors that name the function. Every
transform then uses the rule: grad, vjp, jacrev, hessian and higher orders through it;
jvp and jacfwd through a custom_jvp (a custom_vjp refuses forward mode, as JAX does);
vmap and cr.jit through both.

The function, fwd, bwd and the jvp rule run where JAX runs them, as often (tests compare
the calls). ``symbolic_zeros=True`` gives the rules JAX's ``SymbolicZero`` and
``CustomVJPPrimal`` (``symbolic_zero.py``; ``custom_primitive.py`` finds which values the
transform at hand perturbs). What differs from JAX: a function may close over an outer
transform's values (both decorators), and the derivative with respect to a closed-over
value goes through what the function and its rules compute with it, where JAX refuses it
(``closure_convert``). A closure over the value the transform at hand differentiates
(``cr.grad(lambda k: f_closing_over_k(k))``) is refused, as JAX refuses it: the rule
gives derivatives for the arguments only.

>>> double = cr.custom_derivatives.custom_jvp(lambda x: 2.0 * x)
>>> _ = double.defjvp(lambda primals, tangents: (double(*primals), 2.0 * tangents[0]))
>>> cr.grad(double)(1.0)
2.0
"""

import functools
import inspect
from typing import Any, Callable, Sequence

from .. import rules as ops
from ..primitive import Box, shape_of
from .custom_primitive import Rules, call
from .pytrees import leaves_up_to, tree_flatten, tree_map, tree_unflatten
from .symbolic_zero import CustomVJPPrimal, SymbolicZero, instantiated, zero_from_primal

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal",
           "zero_from_primal"]


class _Custom:
    """What the two decorators share: the function, its nondiff_argnums, binding a
    call's arguments, and splitting them into the primitive's values."""

    kind = "custom"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"{self.kind}: expected a function to decorate, got "
                            f"{type(fun).__name__} {fun!r:.60}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        if any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in nums):
            raise TypeError(f"{self.kind} of {self._name}: nondiff_argnums must be "
                            f"non-negative ints (positions of arguments), got "
                            f"{nondiff_argnums!r}")
        names = (nondiff_argnames,) if isinstance(nondiff_argnames, str) else nondiff_argnames
        if names:  # JAX's other spelling: the parameters' names, as positions
            params = list(inspect.signature(fun).parameters)
            missing = [name for name in names if name not in params]
            if missing:
                raise ValueError(f"{self.kind} of {self._name}: nondiff_argnames names "
                                 f"{missing}, which are not among its parameters {params}")
            nums = tuple(nums) + tuple(params.index(name) for name in names)
        self.nondiff_argnums = tuple(sorted(set(nums)))
        try:  # (bound at every call: looked up once)
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):  # (a builtin: its arguments as given)
            self._signature = None

    @property
    def _name(self):
        return getattr(self.fun, "__name__", type(self.fun).__name__)

    def _positional(self, args, kwargs):
        """The call's arguments as positions, defaults filled in (JAX binds them so)."""
        signature = self._signature
        if signature is not None:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as err:
                raise TypeError(f"{self.kind} function {self._name}: its arguments could "
                                f"not be bound to positions: {err}") from None
            bound.apply_defaults()
            if bound.kwargs:
                raise TypeError(f"{self.kind} function {self._name}: keyword-only "
                                f"arguments ({', '.join(bound.kwargs)}) cannot be "
                                f"differentiated or set aside; make them positional")
            args = bound.args
        elif kwargs:
            raise TypeError(f"{self.kind} function {self._name}: call it with positional "
                            f"arguments")
        for n in self.nondiff_argnums:
            if n >= len(args):
                raise ValueError(f"{self.kind} function {self._name}: nondiff_argnums "
                                 f"names argument {n}, but it was called with "
                                 f"{len(args)} arguments")
        return tuple(args)

    def _split(self, args, boxes_allowed):
        """The primitive's values (the differentiable arguments' leaves, then any array
        among the nondiff arguments), whether each has a derivative, and ``rebuild``:
        values -> (the differentiable arguments, the nondiff ones) as the rules take
        them."""
        nondiff = [args[n] for n in self.nondiff_argnums]
        trees = [tree_flatten(a) for i, a in enumerate(args)
                 if i not in self.nondiff_argnums]
        leaves = [leaf for tree_leaves, _ in trees for leaf in tree_leaves]
        nd_leaves, nd_def = tree_flatten(tuple(nondiff))
        boxed = [k for k, leaf in enumerate(nd_leaves) if isinstance(leaf, Box)]
        if boxed and not boxes_allowed:
            raise TypeError(f"custom_vjp function {self._name}: an argument in "
                            f"nondiff_argnums {self.nondiff_argnums} is a value being "
                            f"differentiated or batched; as in JAX, pass it as an ordinary "
                            f"argument (its bwd gradient may be None)")
        counts = [len(tree_leaves) for tree_leaves, _ in trees]

        def rebuild(vals):
            dargs, start = [], 0
            for (_, treedef), count in zip(trees, counts):
                dargs.append(tree_unflatten(treedef, vals[start:start + count]))
                start += count
            nd = list(nd_leaves)
            for k, v in zip(boxed, vals[start:]):
                nd[k] = v
            return tuple(dargs), tree_unflatten(nd_def, nd) if nondiff else ()

        vals = leaves + [nd_leaves[k] for k in boxed]
        diff = [True] * len(leaves) + [False] * len(boxed)
        return vals, diff, rebuild, trees

    def _merged(self, dargs, nargs):
        """The arguments in the function's own order."""
        dargs, nargs, out = list(dargs), list(nargs), []
        for i in range(len(dargs) + len(nargs)):
            out.append(nargs.pop(0) if i in self.nondiff_argnums else dargs.pop(0))
        return out

    def _outputs(self, out, meta, who):
        """The leaves of an output, checked against the function's structure."""
        leaves, treedef = tree_flatten(out)
        known = meta.setdefault("out_def", treedef)
        if known != treedef:
            raise TypeError(f"{self.kind} function {self._name}: {who} returned an output "
                            f"of another structure than the function's; expected "
                            f"{_shown(tree_unflatten(known, ['*'] * len(leaves)))}, got "
                            f"{_shown(out)}")
        for leaf in leaves:
            if not _is_array(leaf):
                raise TypeError(f"{self.kind} function {self._name}: {who} returned "
                                f"{type(leaf).__name__} {leaf!r:.40} among its outputs; "
                                f"expected numbers and arrays (in tuples, lists, dicts)")
        return leaves

    def _run(self, rebuild, meta):
        def run(vals):
            dargs, nargs = rebuild(vals)
            return self._outputs(self.fun(*self._merged(dargs, nargs)), meta,
                                 "the function")
        return run

    def __repr__(self):
        return f"<{self.kind} {self._name}>"


class custom_jvp(_Custom):
    """A function with its own forward-mode rule, as ``jax.custom_jvp``: every transform
    uses the rule, reverse mode too (the rule is linear in the tangents, so its VJP is
    the function's), and derivatives of higher order differentiate the rule itself.

    ``nondiff_argnums`` (or ``nondiff_argnames``) are arguments without a derivative (a
    function, a flag, a number of steps): they come first in the rule's arguments, ``jvp(*nondiff,
    primals, tangents)``, and an array among them is a constant of differentiation.

    >>> @cr.custom_jvp
    ... def log1pexp(x):
    ...     return cr.log(1.0 + cr.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     x, = primals
    ...     t, = tangents
    ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + cr.exp(x)))
    >>> cr.grad(log1pexp)(100.0)          # the plain formula gives nan: inf / inf
    1.0
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Set the rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``, with
        ``primals`` and ``tangents`` tuples of the (differentiable) arguments; returns
        it, so it serves as a decorator. ``symbolic_zeros=True``: the tangent of an
        argument (a leaf) the transform does not perturb is a ``SymbolicZero``, as in
        JAX, and the rule may return one for a zero tangent."""
        if not callable(jvp):
            raise TypeError(f"custom_jvp {self._name}.defjvp: expected a function "
                            f"jvp(primals, tangents), got {type(jvp).__name__}")
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Set the rule from one function per argument, ``jvp_i(t_i, primal_out,
        *primals)``, the tangent of the output caused by argument i's tangent (None: the
        argument has no derivative); the tangent of the output is their sum."""
        if self.nondiff_argnums:
            raise TypeError(f"custom_jvp {self._name}.defjvps: cannot be used with "
                            f"nondiff_argnums (as in JAX); use defjvp")

        self.symbolic_zeros = False

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise TypeError(f"custom_jvp {self._name}: defjvps was given {len(jvps)} "
                                f"rules for a call with {len(primals)} arguments; give one "
                                f"per argument (None for one without a derivative)")
            primal_out = self(*primals)
            parts = [rule(t, primal_out, *primals) for t, rule in zip(tangents, jvps)
                     if rule is not None]
            if not parts:
                return primal_out, tree_map(lambda o: 0.0 * o, primal_out)
            return primal_out, tree_map(lambda *ts: functools.reduce(
                lambda a, b: a + b, ts), *parts)
        self.jvp = jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self._name} "
                                 f"using defjvp.")
        args = self._positional(args, kwargs)
        vals, diff, rebuild, _ = self._split(args, boxes_allowed=True)
        meta = {}

        def jvp(vals, tangents):
            dargs, nargs = rebuild(vals)
            dtangents = rebuild(tangents)[0]
            pair = self.jvp(*nargs, dargs, dtangents)
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(f"custom_jvp function {self._name}: its jvp rule must "
                                f"return a pair (primal_out, tangent_out), got "
                                f"{type(pair).__name__}")
            outs = self._outputs(pair[0], meta, "the jvp rule's primal output")
            try:
                touts = leaves_up_to(meta["out_def"], pair[1], "tangent")
            except ValueError:
                raise TypeError(f"custom_jvp function {self._name}: the jvp rule's tangent "
                                f"output {_shown(pair[1])} is not of the structure of its "
                                f"primal output {_shown(pair[0])}") from None
            return outs, [_like(instantiated(t, o), o, self._name)
                          for t, o in zip(touts, outs)]

        rules = Rules(self._name, self._run(rebuild, meta), diff, jvp=jvp,
                      symbolic=self.symbolic_zeros)
        leaves = call(rules, vals, meta)
        return tree_unflatten(meta["out_def"], leaves)


class custom_vjp(_Custom):
    """A function with its own reverse-mode rule, as ``jax.custom_vjp``: ``fwd`` returns
    the output and residuals, ``bwd(residuals, g)`` one gradient per (differentiable)
    argument, in a tuple (None for zeros; a pytree for a pytree argument). grad, vjp,
    jacrev, vmap and cr.jit use it; forward mode is refused, as in JAX. A second
    derivative differentiates ``bwd`` (and ``fwd``'s residuals), so write them in
    chainrule's operations.

    ``nondiff_argnums`` (or ``nondiff_argnames``: a function, a setting) come first in
    bwd's arguments:
    ``bwd(*nondiff, residuals, g)``; fwd takes every argument, in order.

    >>> @cr.custom_vjp
    ... def clip_gradient(lo, hi, x):
    ...     return x
    >>> def fwd(lo, hi, x):
    ...     return x, (lo, hi)
    >>> def bwd(res, g):
    ...     lo, hi = res
    ...     return None, None, cr.clip(g, lo, hi)
    >>> clip_gradient.defvjp(fwd, bwd)
    >>> cr.grad(lambda x: 3.0 * clip_gradient(-0.5, 0.5, x))(2.0)   # 3, clipped
    0.5
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        """Set the rules: ``fwd(*args) -> (out, residuals)`` and
        ``bwd(*nondiff, residuals, g) -> tuple of gradients``. ``symbolic_zeros=True``,
        as in JAX: fwd is given a ``CustomVJPPrimal`` (``.value``, ``.perturbed``) for
        each leaf of a differentiable argument, and bwd a ``SymbolicZero`` for the
        cotangent of an output no gradient reached; bwd may return None or a
        SymbolicZero for a zero gradient."""
        for name, rule in (("fwd", fwd), ("bwd", bwd)):
            if not callable(rule):
                raise TypeError(f"custom_vjp {self._name}.defvjp: expected functions fwd "
                                f"and bwd, got {type(rule).__name__} for {name}")
        del optimize_remat  # JAX's memory setting: fwd's residuals are all kept here
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self._name} "
                                 f"using defvjp.")
        args = self._positional(args, kwargs)
        vals, diff, rebuild, trees = self._split(args, boxes_allowed=False)
        meta = {}

        def fwd(vals, perturbed=()):
            if self.symbolic_zeros:  # JAX's records in place of the differentiable leaves
                vals = [CustomVJPPrimal(v, bool(p)) if d else v
                        for v, d, p in zip(vals, diff, perturbed)]
            pair = self.fwd(*self._merged(*rebuild(vals)))
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(f"custom_vjp function {self._name}: its fwd must return a "
                                f"pair (output, residuals), got {type(pair).__name__}")
            outs = self._outputs(pair[0], meta, "fwd")
            residuals, meta["res_def"] = tree_flatten(pair[1])
            if any(isinstance(r, CustomVJPPrimal) for r in residuals):
                raise TypeError(f"custom_vjp function {self._name}: fwd kept a "
                                f"CustomVJPPrimal among its residuals; keep its .value")
            return outs, residuals

        def bwd(residuals, cotangents):
            nargs = rebuild(vals)[1]  # (static: boxes are refused among them)
            grads = self.bwd(*nargs, tree_unflatten(meta["res_def"], residuals),
                             tree_unflatten(meta["out_def"], cotangents))
            if not isinstance(grads, tuple):
                raise TypeError(f"custom_vjp function {self._name}: its bwd must return a "
                                f"tuple with one gradient per differentiable argument, got "
                                f"{type(grads).__name__} (write (g,) for one)")
            if len(grads) != len(trees):
                raise TypeError(f"custom_vjp function {self._name}: its bwd returned "
                                f"{len(grads)} gradients for {len(trees)} differentiable "
                                f"arguments; return one per argument (None for zeros)")
            out = []
            for k, (grad, (arg_leaves, treedef)) in enumerate(zip(grads, trees)):
                if grad is None or isinstance(grad, SymbolicZero):
                    out.extend([None] * len(arg_leaves))
                    continue
                try:
                    leaves = leaves_up_to(treedef, grad, "gradient")
                except ValueError:
                    raise TypeError(f"custom_vjp function {self._name}: bwd's gradient "
                                    f"{k} {_shown(grad)} is not of the structure of "
                                    f"argument {k}") from None
                out.extend(None if g is None or isinstance(g, SymbolicZero) else
                           _like(g, v, self._name, "bwd's gradient")
                           for g, v in zip(leaves, arg_leaves))
            return out

        rules = Rules(self._name, self._run(rebuild, meta), diff, fwd=fwd, bwd=bwd,
                      symbolic=self.symbolic_zeros)
        leaves = call(rules, vals, meta)
        return tree_unflatten(meta["out_def"], leaves)


def _is_array(x):
    return isinstance(x, Box) or hasattr(x, "shape") or isinstance(x, (int, float, complex))


def _like(t, like, name, what="the jvp rule's tangent"):
    """A tangent (or gradient) checked to have the shape of its primal (JAX's check),
    in its primal's dtype."""
    if shape_of(t) != shape_of(like):
        raise ValueError(f"{name}: {what} has shape {shape_of(t)} where the primal value "
                         f"has shape {shape_of(like)}; return one of the same shape")
    dtype = getattr(like, "dtype", None)
    if dtype is not None and getattr(t, "dtype", dtype) != dtype and dtype.kind in "fc":
        return ops.astype(t, dtype)
    return t


def _shown(tree):
    """A pytree's structure in a few characters, for an error."""
    return repr(tree_unflatten(tree_flatten(tree)[1], ["*"] * len(tree_flatten(tree)[0])))


def custom_gradient(fun: Callable[..., Any]) -> custom_vjp:
    """A function that returns its own gradient rule with its output, as
    ``jax.custom_gradient``: ``fun(*args)`` returns ``(out, vjp_fn)``, and
    ``vjp_fn(g)`` the gradients, one per argument (a tuple; one alone may be bare). A
    ``custom_vjp`` whose residual is ``vjp_fn``.

    >>> @cr.custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: g * 3 * x      # a gradient of 3x, not 2x
    >>> f(2.0), cr.grad(f)(2.0)
    (4.0, 6.0)
    """
    if not callable(fun):
        raise TypeError(f"custom_gradient: expected a function, got {type(fun).__name__}")
    name = getattr(fun, "__name__", "function")

    def pair(*args):
        found = fun(*args)
        if not (isinstance(found, (tuple, list)) and len(found) == 2 and callable(found[1])):
            raise TypeError(f"custom_gradient function {name}: it must return a pair "
                            f"(output, vjp_fn), got {type(found).__name__}")
        return found

    @functools.wraps(fun)
    def primal(*args):
        return pair(*args)[0]

    def bwd(vjp_fn, g):
        grads = vjp_fn(g)
        return grads if isinstance(grads, tuple) else (grads,)

    wrapped = custom_vjp(primal)
    wrapped.defvjp(lambda *args: tuple(pair(*args)), bwd)
    return wrapped
