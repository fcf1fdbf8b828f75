"""``torch.func``'s names, as ``chainrule.func``: a torch.func program runs with its
imports changed (``from chainrule.func import functional_call, vmap, grad``).

The transforms are chainrule's own (``cr.grad``, ``cr.vmap``...), under torch's
signatures and return conventions: ``grad_and_value`` gives ``(grad, value)``, the
reverse of ``cr.value_and_grad``; ``vmap`` takes ``in_dims`` and ``out_dims`` and maps
positional arguments only, keyword arguments going to every example as they are.
They take what chainrule's transforms take, NumPy arrays, numbers, cr.Tensors (and
torch tensors), and pytrees of them, and give results of that kind: arrays for arrays,
Tensors for Tensors. ``functional_call`` and ``stack_module_state`` work on cr.nn
modules (nn/module_calls.py).

Where torch.func's behaviour depends on machinery chainrule does not have:

* ``vmap(randomness=...)``: a random draw inside ``vmap`` is shared by every example
  in chainrule, which is torch's ``"same"``. ``"error"`` (torch's default) is accepted
  and behaves as ``"same"`` (the draw is not detected); ``"different"`` is refused.
* ``chunk_size``: ``vmap`` runs ``chunk_size`` examples at a time and joins the
  results, as torch; ``jacrev`` checks it and computes the Jacobian at once (the same
  numbers, the memory not bounded by it).
* ``linearize``: the function returned runs ``jvp`` again at the primals (torch keeps
  the linearised graph); the values are the same, each call costs a forward pass.
* ``functionalize``: the function itself; chainrule's transforms handle in-place
  writes or refuse them.
* ``rearrange`` (einops) and ``debug_unwrap`` are not here.

>>> from chainrule.func import grad_and_value
>>> grad_and_value(lambda x: x ** 3)(2.0)              # (3x**2, x**3): torch's order
(12.0, 8.0)
"""

from typing import Any, Callable

from .. import rules as _ops
from ..nn.module_calls import (functional_call, replace_all_batch_norm_modules_,
                               stack_module_state)
from ..primitive import shape_of
from ..transforms import functional as _functional
from ..transforms import jacobians as _jacobians
from ..transforms.forward import JVPTracer
from ..transforms.pytrees import tree_flatten, tree_leaves, tree_unflatten
from ..transforms.vmap_axes import _axes_of_leaves
from ..transforms.vmap_axes import vmap as _vmap

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_",
           "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "linearize", "functionalize"]

_RANDOMNESS = ("error", "different", "same")


def _check_chunk_size(chunk_size, name):
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(
            chunk_size, int) or chunk_size < 1):
        raise ValueError(f"{name}: chunk_size must be None or a positive int, got "
                         f"{chunk_size!r}")


def _check_randomness(randomness, name):
    if randomness not in _RANDOMNESS:
        raise ValueError(f"{name}: randomness must be 'error', 'different' or 'same', got "
                         f"{randomness!r}")
    if randomness == "different":
        raise ValueError(f"{name}: randomness='different' cannot be honoured: a generator's "
                         f"draw inside chainrule's vmap is shared by every example (that is "
                         f"randomness='same'); for a draw per example, map over keys "
                         f"(cr.random.split(key, n) as an input) or draw the batch outside")


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``func`` (a scalar) in the argument(s) ``argnums``, as
    ``torch.func.grad``: the gradient, or ``(gradient, aux)`` with ``has_aux``.

    >>> cr.func.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    (5.0, 2.0)
    """
    return _functional.grad(func, argnums, has_aux)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """The gradient and the value of ``func``, as ``torch.func.grad_and_value``:
    ``(grad, value)``, or ``(grad, (value, aux))`` with ``has_aux`` (the reverse of
    ``cr.value_and_grad``'s order).

    >>> cr.func.grad_and_value(lambda x: (x * x, x + 1), has_aux=True)(3.0)
    (6.0, (9.0, 4.0))
    """
    value_and_grad_f = _functional.value_and_grad(func, argnums, has_aux)

    def grad_and_value_f(*args, **kwargs):
        value, gradient = value_and_grad_f(*args, **kwargs)
        return gradient, value

    return grad_and_value_f


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(output, vjp_fn)``, or ``(output, vjp_fn, aux)`` with ``has_aux``, as
    ``torch.func.vjp``: ``vjp_fn(cotangents)`` (shaped like the output) gives a tuple
    with one vector-Jacobian product per primal.

    torch's ``retain_graph`` and ``create_graph`` are taken and need nothing here:
    ``vjp_fn`` may be called again, and its results are differentiable by any enclosing
    transform.

    >>> out, vjp_fn = cr.func.vjp(lambda x, y: x * y, 2.0, 3.0)
    >>> out, vjp_fn(1.0)
    (6.0, (3.0, 2.0))
    """
    out, pullback, *aux = _functional.vjp(func, *primals, has_aux=has_aux)

    def vjp_fn(cotangents: Any, retain_graph: bool = True,
               create_graph: bool | None = None) -> tuple[Any, ...]:
        return pullback(cotangents)

    return (out, vjp_fn, *aux)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(output, jvp_out)``, or ``(output, jvp_out, aux)`` with ``has_aux``, as
    ``torch.func.jvp``: ``primals`` and ``tangents`` are tuples, one entry per argument.
    ``strict=True`` refuses an output that does not depend on the inputs (torch's
    rule), where by default its tangent is zeros.

    >>> cr.func.jvp(lambda x: x ** 3, (2.0,), (1.0,))
    (8.0, 12.0)
    """
    if strict:
        func = _strict(func, has_aux)
    return _functional.jvp(func, primals, tangents, has_aux=has_aux)


def _strict(func, has_aux):
    """``func`` that refuses an output leaf not traced by the jvp it runs under."""
    def checked(*args):
        out = func(*args)
        levels = [leaf._level for leaf in tree_leaves(args) if isinstance(leaf, JVPTracer)]
        level = max(levels, default=None)
        for leaf in tree_leaves(out[0] if has_aux else out):
            if not (isinstance(leaf, JVPTracer) and leaf._level == level):
                raise RuntimeError("jvp(f, primals, tangents, strict=True): an output of "
                                   "the function does not depend on the inputs; expected "
                                   "every output to (or strict=False: zeros)")
        return out
    return checked


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
           has_aux: bool = False, chunk_size: int | None = None) -> Callable[..., Any]:
    """The Jacobian by reverse mode, as ``torch.func.jacrev``: shape ``out.shape +
    in.shape`` for each output and input; ``(jacobian, aux)`` with ``has_aux``.
    ``chunk_size`` is checked, and the Jacobian computed at once.

    >>> cr.func.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    _check_chunk_size(chunk_size, "jacrev")
    return _jacobians.jacrev(func, argnums, has_aux)


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, *, randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian by forward mode, as ``torch.func.jacfwd`` (``randomness`` as in
    ``vmap``).

    >>> cr.func.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    _check_randomness(randomness, "jacfwd")
    return _jacobians.jacfwd(func, argnums, has_aux)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of ``func``, forward over reverse, as ``torch.func.hessian``.

    >>> cr.func.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    return _jacobians.jacfwd(_jacobians.jacrev(func, argnums), argnums)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """``func`` mapped over a batch axis, as ``torch.func.vmap``: ``in_dims`` per
    positional argument (an int, None for an argument every example shares, or a
    container matching the argument), ``out_dims`` per output. Keyword arguments are
    not mapped: every example gets them as they are, as in torch. ``chunk_size`` runs
    that many examples at a time and joins the results. ``randomness``: see the module.

    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> cr.func.vmap(lambda row, w: row @ w, in_dims=(0, None))(x, np.ones(2))
    array([3., 7.])
    """
    _check_randomness(randomness, "vmap")
    _check_chunk_size(chunk_size, "vmap")

    def vmapped(*args, **kwargs):
        f = func if not kwargs else (lambda *a: func(*a, **kwargs))
        if chunk_size is None:
            return _vmap(f, in_dims, out_dims)(*args)
        return _in_chunks(_vmap(f, in_dims, out_dims), in_dims, out_dims, chunk_size, args)

    return vmapped


def _in_chunks(mapped, in_dims, out_dims, chunk_size, args):
    """``mapped(*args)`` run ``chunk_size`` examples at a time, the results joined along
    their batch axes (torch's ``chunk_size``: the same numbers, in bounded memory)."""
    leaves, treedef = tree_flatten(args)
    axes = _axes_of_leaves(tuple(in_dims) if isinstance(in_dims, list) else in_dims, args,
                           "in_dims")
    sizes = {shape_of(leaf)[axis] for leaf, axis in zip(leaves, axes) if axis is not None}
    size = sizes.pop() if len(sizes) == 1 else 0
    if size <= chunk_size:
        return mapped(*args)  # (one chunk; or sizes that disagree, which vmap names)
    chunks = []
    for start in range(0, size, chunk_size):
        part = [leaf if axis is None else
                leaf[(slice(None),) * (axis % len(shape_of(leaf)))
                     + (slice(start, start + chunk_size),)]
                for leaf, axis in zip(leaves, axes)]
        chunks.append(tree_flatten(mapped(*tree_unflatten(treedef, part))))
    out_def = chunks[0][1]
    outs = tree_unflatten(out_def, chunks[0][0])
    joined = []
    for k, axis in enumerate(_axes_of_leaves(out_dims, outs, "out_dims")):
        pieces = [chunk[0][k] for chunk in chunks]
        joined.append(pieces[0] if axis is None else _ops.concatenate(
            pieces, axis=axis % len(shape_of(pieces[0]))))
    return tree_unflatten(out_def, joined)


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(output, jvp_fn)``, as ``torch.func.linearize``: ``jvp_fn(*tangents)`` is the
    Jacobian-vector product at the primals (here a ``jvp`` run again at each call).

    >>> out, jvp_fn = cr.func.linearize(lambda x: x ** 3, 2.0)
    >>> out, jvp_fn(1.0), jvp_fn(2.0)
    (8.0, 12.0, 24.0)
    """
    output = func(*primals)

    def jvp_fn(*tangents):
        if len(tangents) != len(primals):
            raise ValueError(f"linearize: jvp_fn got {len(tangents)} tangents for "
                             f"{len(primals)} primals; expected one per primal")
        return _functional.jvp(func, primals, tangents)[1]

    return output, jvp_fn


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` itself (``torch.func.functionalize``): chainrule's transforms already
    handle a function's in-place writes, or refuse them.

    >>> f = lambda x: x * 2
    >>> cr.func.functionalize(f) is f
    True
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise ValueError(f"functionalize: remove must be 'mutations' or "
                         f"'mutations_and_views', got {remove!r}")
    return func
