"""``cr.checkpoint`` / ``cr.remat``: JAX's gradient checkpointing (rematerialisation).

A checkpointed function keeps none of its intermediate values for reverse mode: the
forward pass runs it without recording, and the backward pass runs it again, this
time recorded, and pulls the cotangent back through that. Memory for time: a deep
chain of checkpointed blocks keeps one value per block instead of one per operation.
A policy (``checkpoint_policies.py``) may keep chosen results (matrix products, named
values) from the forward pass; the second run reuses them instead of computing them.

How it is built. One call of the checkpointed function is one custom primitive
(``custom_primitive.py``, the machinery of ``cr.custom_vjp``): its ``fwd`` is the
function run on what the recording level's tracers carry (so nothing is recorded at
that level), its residuals the inputs and the kept values, its ``bwd`` the second run
under ``cr.vjp``, its forward-mode rule ``cr.jvp`` of the function; vmap, cr.jit,
jacrev's rows and nesting come from that primitive as they do for custom_vjp.

What the primitive needs that custom_vjp's user writes by hand, the inputs and the
residuals, comes from a *capture level* (``Capture``): the function runs once on its
inputs wrapped in boxes of a fresh level, the highest, so every operation on them
passes through ``Capture._apply_primitive``, which

* turns a value the function closed over (a module's weights, an outer transform's
  tracer) into an input of the primitive: the first run lifts it out (computing on its
  numbers, so the recording level records nothing), later runs replace the k-th such
  value met by the k-th input the primitive was given (closure conversion, which JAX
  does when it traces to a jaxpr). Order is how they are told apart, as in a trace:
  the function must run the same operations each time (as JAX requires);
* asks the policy about each operation and keeps what it marks, and in the backward
  run hands back the kept result in place of computing it again (``Replayed``: the
  operation's own rules, its forward replaced by the kept value).

What differs from JAX: ``prevent_cse`` is accepted and has nothing to do (an eager
library runs no common-subexpression elimination). Only the innermost recording level
saves memory: in grad of grad the outer level records the function's operations
(correct derivatives, more memory), and inside a checkpoint's second run a nested
checkpoint runs plainly. Under vmap together with grad the function runs twice in the
forward pass, and a policy's kept values are computed again rather than reused.

>>> from chainrule.ad_checkpoint import checkpoint, checkpoint_name
>>> @checkpoint
... def layer(w, x):
...     return cr.tanh(checkpoint_name(w @ x, "pre"))
>>> cr.grad(lambda w: cr.sum(layer(w, np.ones(2))))(np.eye(2)).round(4)
array([[0.42, 0.42],
       [0.42, 0.42]])
"""

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ..primitive import elementwise, raw, shape_of
from ..scalar.value import Value
from . import checkpoint_policies
from .capture import capture_run, constant, lifted, records, same, unboxed
from .custom_primitive import Rules, call
from .functional import jvp, vjp
from .pytrees import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_name", "saved_residuals",
           "print_saved_residuals"]


# ---------------------------------------------------------------------------------------
# checkpoint_name: an identity that the policies can see
# ---------------------------------------------------------------------------------------

_name = elementwise(lambda x, name=None: x, checkpoint_policies.NAME_PRIMITIVE, 1)


def checkpoint_name(x: Any, name: str) -> Any:
    """x itself, named for the policies of ``cr.checkpoint`` (``save_only_these_names``,
    ``save_any_names_but_these``), as ``jax.ad_checkpoint.checkpoint_name``.

    >>> from chainrule.ad_checkpoint import checkpoint_name
    >>> checkpoint_name(np.array([1.0, 2.0]), "h")
    array([1., 2.])
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: expected a name (a string), got "
                        f"{type(name).__name__} {name!r:.40}")
    return _name(x, name=name)


# ---------------------------------------------------------------------------------------
# The transform
# ---------------------------------------------------------------------------------------

def remat(fun: Callable[..., Any] | None = None, *, prevent_cse: bool = True,
          policy: Callable[..., bool] | None = None,
          static_argnums: int | Sequence[int] = ()) -> Any:
    """``fun`` checkpointed: its intermediate values are not kept for reverse mode but
    computed again in the backward pass (``jax.checkpoint``, also named ``jax.remat``).
    Values and derivatives are those of ``fun``; what changes is memory and time.

    ``policy`` (``cr.checkpoint_policies``) chooses results to keep from the forward
    pass instead (the matrix products, values named with ``checkpoint_name``);
    ``static_argnums`` are arguments passed as they are, never differentiated;
    ``prevent_cse`` is accepted (no compiler here merges the two runs). A decorator,
    with or without arguments.

    >>> calls = []
    >>> @cr.remat
    ... def block(x):
    ...     calls.append(1)
    ...     return cr.sin(cr.sin(x))
    >>> round(float(cr.grad(block)(1.0)), 6)
    0.360039
    >>> len(calls)                        # once forward, once again backward
    2
    """
    if fun is None:
        return functools.partial(remat, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a function, got {type(fun).__name__} "
                        f"{fun!r:.60}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function (prim, *args, **kwargs) "
                        f"-> bool, such as cr.checkpoint_policies.dots_saveable; got "
                        f"{type(policy).__name__}")
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if any(not isinstance(n, int) or isinstance(n, bool) for n in statics):
        raise TypeError(f"checkpoint: static_argnums must be ints, got {static_argnums!r}")
    del prevent_cse  # nothing to prevent: no compiler merges the two runs

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        return _call(fun, policy, statics, args, kwargs)
    checkpointed.__wrapped__ = fun
    checkpointed._checkpoint = (fun, policy)  # (for saved_residuals)
    return checkpointed


checkpoint = remat  # JAX's two names for one transform


def _call(fun, policy, statics, args, kwargs):
    who = getattr(fun, "__name__", type(fun).__name__)
    statics = {n % len(args) for n in statics if -len(args) <= n < len(args)}
    dynamic = [a for i, a in enumerate(args) if i not in statics]
    leaves, treedef = tree_flatten((dynamic, kwargs))

    def call_fun(inputs):
        dyn, kw = tree_unflatten(treedef, inputs)
        it = iter(dyn)
        return fun(*[a if i in statics else next(it) for i, a in enumerate(args)], **kw)

    # The first run, on the inputs' numbers: the forward pass, which records nothing.
    lifts = [lifted(x) for x in leaves]
    outs, out_def, first = capture_run(call_fun, f"checkpoint of {who}", lifts,
                                       policy=policy)
    vals = leaves + first.met
    floats = [k for k, o in enumerate(outs) if _is_float(o)]
    if not floats or not any(records(v) for v in vals):
        return tree_unflatten(out_def, outs)
    nin = len(leaves)
    diff = [_is_float(v) and not constant(v) for v in vals]  # (no gradient wasted)
    moving = [i for i, d in enumerate(diff) if d]
    first_inputs = [unboxed(x) for x in lifts + first.lifted]
    keys = sorted(first.kept)

    def again(vals, policy=None, kept=None):
        """The float outputs of a later run at vals (and its kept values)."""
        outs_, _, run = capture_run(call_fun, f"checkpoint of {who}", vals[:nin],
                                    vals[nin:], policy, kept,
                                    first.shapes if kept is not None else None)
        if len(run.met) != len(vals) - nin:
            raise ValueError(f"checkpoint of {who}: its second run closed over "
                             f"{len(run.met)} values where its first closed over "
                             f"{len(vals) - nin}; a checkpointed function must run the "
                             f"same operations each time it is called")
        return [outs_[k] for k in floats], run

    def run_plain(vals):
        return again(vals)[0]

    def fwd(vals):
        if len(vals) == len(first_inputs) and all(
                same(a, b) for a, b in zip(vals, first_inputs)):  # the first run's
            return [unboxed(outs[k]) for k in floats], \
                list(vals) + [first.kept[k] for k in keys]
        outs_, run = again(vals, policy)  # an outer level's values: run again on them
        return outs_, list(vals) + [run.kept.get(k) for k in keys]

    def bwd(residuals, cotangents):
        vals = list(residuals[:len(diff)])
        kept = {k: v for k, v in zip(keys, residuals[len(diff):]) if v is not None}

        def moving_fun(*xs):
            full = list(vals)
            for i, x in zip(moving, xs):
                full[i] = x
            return again(full, kept=kept)[0]
        _, pull = vjp(moving_fun, *[vals[i] for i in moving])
        grads = [None] * len(vals)
        for i, g in zip(moving, pull(list(cotangents))):
            grads[i] = g
        return grads

    def tangents(vals, tans):
        def moving_fun(*xs):
            full = list(vals)
            for i, x in zip(moving, xs):
                full[i] = x
            return again(full)[0]
        out, tout = jvp(moving_fun, tuple(vals[i] for i in moving),
                        tuple(tans[i] for i in moving))
        return list(out), list(tout)

    rules = Rules(f"checkpoint({who})", run_plain, diff, jvp=tangents, fwd=fwd, bwd=bwd)
    results = list(outs)  # (outs itself stays the first run's: fwd hands it back)
    for k, r in zip(floats, call(rules, vals, {})):
        results[k] = r
    return tree_unflatten(out_def, results)


def _is_float(x):
    if isinstance(x, Value):
        return True
    dtype = getattr(x, "dtype", None)
    return (np.result_type(x) if dtype is None else np.dtype(dtype)).kind in "fc"


# ---------------------------------------------------------------------------------------
# What a policy keeps, for a reader
# ---------------------------------------------------------------------------------------

def saved_residuals(fun: Callable[..., Any], *args: Any,
                    policy: Callable[..., bool] | None = None
                    ) -> list[tuple[tuple, np.dtype, str]]:
    """What reverse mode keeps of ``fun`` at ``args`` for its backward pass, as JAX's
    ``saved_residuals``: one ``(shape, dtype, what)`` per value, the arguments first
    (``what`` is "the argument NAME"), then the values kept ("output of OPERATION", or
    "named 'NAME'" for one kept by its ``checkpoint_name``). For a checkpointed function, what its policy keeps;
    for a plain one, every result (reverse mode without a checkpoint keeps them);
    ``policy=`` asks about ``fun`` checkpointed with that policy.

    >>> from chainrule.ad_checkpoint import saved_residuals
    >>> f = cr.checkpoint(lambda w: cr.tanh(w @ w),
    ...                   policy=cr.checkpoint_policies.dots_saveable)
    >>> saved_residuals(f, np.eye(3))
    [((3, 3), dtype('float64'), 'the argument w'), ((3, 3), dtype('float64'), 'output of matmul')]
    """
    inner, own = getattr(fun, "_checkpoint", (fun, None))
    if policy is None:
        policy = own if inner is not fun else checkpoint_policies.everything_saveable
    leaves, treedef = tree_flatten(args)
    names = {}

    def watch(prim, *a, **k):
        names[len(names)] = prim.name
        return policy(prim, *a, **k) if policy is not None else False
    _, _, run = capture_run(lambda xs: inner(*tree_unflatten(treedef, xs)), "saved_residuals",
                     [lifted(x) for x in leaves], policy=watch)
    return _arguments(inner, args) + [
        (shape_of(run.kept[k]), np.result_type(raw(run.kept[k])),
         f"named {run.named[k]!r}" if k in run.named else f"output of {names[k]}")
        for k in sorted(run.kept)]


def _arguments(fun, args):
    """(shape, dtype, "the argument NAME") for each float leaf of the arguments, a leaf
    inside a container named by its key path, as JAX names it (``params[0][1]``)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    found = []
    for i, arg in enumerate(args):
        name = params[i] if i < len(params) else str(i)
        for path, leaf in tree_flatten_with_path(arg)[0]:
            if _is_float(leaf):
                found.append((shape_of(leaf), np.result_type(raw(leaf)),
                              f"the argument {name}{keystr(path)}"))
    return found


def print_saved_residuals(fun: Callable[..., Any], *args: Any,
                          policy: Callable[..., bool] | None = None) -> None:
    """Print what ``saved_residuals`` lists, one value a line (JAX's
    ``print_saved_residuals``).

    >>> from chainrule.ad_checkpoint import print_saved_residuals
    >>> print_saved_residuals(lambda w: cr.tanh(w @ w), np.eye(2),
    ...                       policy=cr.checkpoint_policies.dots_saveable)
    f64[2,2] from the argument w
    f64[2,2] output of matmul
    """
    for shape, dtype, what in saved_residuals(fun, *args, policy=policy):
        short = f"{dtype.kind}{dtype.itemsize * 8}"  # (JAX's f64, f32, i32)
        where = "from " if what.startswith("the argument") else ""
        print(f"{short}[{','.join(map(str, shape))}] {where}{what}")
