"""``cr.checkpoint_policies``: which values a ``cr.checkpoint`` (``cr.remat``) keeps from
its forward pass, as ``jax.checkpoint_policies``.

A policy is a function ``policy(prim, *args, **kwargs) -> bool``, asked once for each
operation the checkpointed function runs (``prim`` the operation, ``args`` and
``kwargs`` its arguments): True keeps the operation's result for the backward pass,
which reuses it instead of computing it again. Without a policy nothing is kept but the
function's inputs (``nothing_saveable``).

What counts as a dot here: ``matmul`` (so ``@``, ``dot``, ``nn.Linear``'s fused
``linear``) and ``einsum`` (so ``tensordot``, ``inner``). A named value is one passed
through ``cr.ad_checkpoint.checkpoint_name(x, name)``: keeping it keeps the result of
the operation that computed ``x``.

>>> from chainrule.ad_checkpoint import print_saved_residuals
>>> print_saved_residuals(lambda w: cr.sin(w @ w), np.ones((2, 2)),
...                       policy=cr.checkpoint_policies.everything_saveable)
f64[2,2] from the argument w
f64[2,2] output of matmul
f64[2,2] output of sin
"""

from typing import Any, Callable

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
           "save_only_these_names", "save_any_names_but_these",
           "save_anything_except_these_names", "save_from_both_policies"]

NAME_PRIMITIVE = "checkpoint_name"  # the name of checkpoint_name's operation
DOT_PRIMITIVES = frozenset({"matmul", "einsum", "linear"})

Policy = Callable[..., bool]


def everything_saveable(prim: Any, *args: Any, **kwargs: Any) -> bool:
    """Keep every result: nothing is computed again (and no memory is saved).

    >>> f = cr.checkpoint(cr.sin, policy=cr.checkpoint_policies.everything_saveable)
    >>> round(float(cr.grad(f)(0.0)), 6)
    1.0
    """
    return True


def nothing_saveable(prim: Any, *args: Any, **kwargs: Any) -> bool:
    """Keep nothing but the inputs: the backward pass computes everything again (the
    default).

    >>> f = cr.checkpoint(cr.sin, policy=cr.checkpoint_policies.nothing_saveable)
    >>> round(float(cr.grad(f)(0.0)), 6)
    1.0
    """
    return False


def dots_saveable(prim: Any, *args: Any, **kwargs: Any) -> bool:
    """Keep the results of matrix products (matmul, einsum, the fused linear layer);
    everything else (the cheap elementwise operations) is computed again.

    >>> f = cr.checkpoint(lambda w: cr.sum(cr.tanh(w @ w)),
    ...                   policy=cr.checkpoint_policies.dots_saveable)
    >>> cr.grad(f)(np.eye(2)).round(4)
    array([[0.8399, 2.    ],
           [2.    , 0.8399]])
    """
    return getattr(prim, "name", None) in DOT_PRIMITIVES


checkpoint_dots = dots_saveable  # JAX's older name


def dots_with_no_batch_dims_saveable(prim: Any, *args: Any, **kwargs: Any) -> bool:
    """Keep the results of matrix products without batch axes: matmul of operands of at
    most two axes, and einsum where no label is shared by every operand and the result
    (JAX's dot_general without batch dimensions).

    >>> policy = cr.checkpoint_policies.dots_with_no_batch_dims_saveable
    >>> policy(cr.matmul, np.ones((2, 3)), np.ones((3, 4)))
    True
    >>> policy(cr.matmul, np.ones((5, 2, 3)), np.ones((5, 3, 4)))
    False
    """
    name = getattr(prim, "name", None)
    if name in ("matmul", "linear"):
        return all(len(getattr(a, "shape", ())) <= 2 for a in args[:2])
    if name == "einsum":
        inputs, _, output = kwargs.get("subscripts", "").replace(" ", "").partition("->")
        labels = [set(part) for part in inputs.split(",")] + [set(output)]
        if "..." in kwargs.get("subscripts", "") or not output:
            return False  # (implicit output or broadcast axes: not told apart here)
        return not set.intersection(*labels) - {"."}
    return False


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names: str) -> Policy:
    """A policy that keeps the values named (``checkpoint_name(x, name)``) with one of
    ``names``, and nothing else.

    >>> from chainrule.ad_checkpoint import checkpoint_name
    >>> def f(x):
    ...     y = checkpoint_name(cr.sin(x), "y")
    ...     return cr.cos(y)
    >>> g = cr.checkpoint(f, policy=cr.checkpoint_policies.save_only_these_names("y"))
    >>> round(float(cr.grad(g)(1.0)), 6)
    -0.402862
    """
    wanted = frozenset(_names(names, "save_only_these_names"))

    def policy(prim: Any, *args: Any, **kwargs: Any) -> bool:
        return getattr(prim, "name", None) == NAME_PRIMITIVE and kwargs.get("name") in wanted
    policy.__name__ = f"save_only_these_names{tuple(sorted(wanted))}"
    return policy


def save_any_names_but_these(*names: str) -> Policy:
    """A policy that keeps every named value (``checkpoint_name``) except those named
    with one of ``names``, and nothing unnamed.

    >>> policy = cr.checkpoint_policies.save_any_names_but_these("a")
    >>> from chainrule.ad_checkpoint import checkpoint_name
    >>> f = cr.checkpoint(lambda x: checkpoint_name(x * x, "b") * x, policy=policy)
    >>> float(cr.grad(f)(3.0))
    27.0
    """
    unwanted = frozenset(_names(names, "save_any_names_but_these"))

    def policy(prim: Any, *args: Any, **kwargs: Any) -> bool:
        return getattr(prim, "name", None) == NAME_PRIMITIVE and \
            kwargs.get("name") not in unwanted
    policy.__name__ = f"save_any_names_but_these{tuple(sorted(unwanted))}"
    return policy


def save_anything_except_these_names(*names: str) -> Policy:
    """A policy that keeps every result except the values named with one of ``names``
    (as in JAX, the operation that computed a named value may still keep it as its
    own result).

    >>> from chainrule.ad_checkpoint import checkpoint_name
    >>> policy = cr.checkpoint_policies.save_anything_except_these_names("a")
    >>> f = cr.checkpoint(lambda x: cr.cos(checkpoint_name(cr.sin(x), "a")), policy=policy)
    >>> round(float(cr.grad(f)(1.0)), 6)
    -0.402862
    """
    unwanted = frozenset(_names(names, "save_anything_except_these_names"))

    def policy(prim: Any, *args: Any, **kwargs: Any) -> bool:
        return getattr(prim, "name", None) != NAME_PRIMITIVE or \
            kwargs.get("name") not in unwanted
    policy.__name__ = f"save_anything_except_these_names{tuple(sorted(unwanted))}"
    return policy


def save_from_both_policies(left: Policy, right: Policy) -> Policy:
    """A policy that keeps what either of two policies keeps.

    >>> P = cr.checkpoint_policies
    >>> both = P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("h"))
    >>> both(cr.matmul, np.ones((2, 2)), np.ones((2, 2))), both(cr.sin, 1.0)
    (True, False)
    """
    for policy in (left, right):
        if not callable(policy):
            raise TypeError(f"checkpoint_policies.save_from_both_policies: expected two "
                            f"policies (functions), got {type(policy).__name__}")

    def policy(prim: Any, *args: Any, **kwargs: Any) -> bool:
        return bool(left(prim, *args, **kwargs) or right(prim, *args, **kwargs))
    return policy


def _names(names, who):
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"checkpoint_policies.{who}: expected names (strings), got "
                            f"{type(name).__name__} {name!r:.40}")
    return names
