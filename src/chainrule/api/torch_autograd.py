"""PyTorch's ``torch.autograd.grad`` and ``torch.autograd.backward``: gradients of
tensors in a recorded graph, several outputs and inputs at once, reached as
``cr.autograd.grad`` and ``cr.autograd.backward`` (``chainrule.autograd`` is HIPS
autograd's drop-in too: its ``grad`` takes a function, PyTorch's takes tensors, and the
first argument tells them apart).

``grad`` returns the gradients and leaves every ``.grad`` of a leaf alone; ``backward``
adds them into ``.grad``. Both walk only the part of the graph between the outputs and
the inputs asked for, run the tensors' hooks on the way (``register_hook``), fill the
``.grad`` of results that asked with ``retain_grad()``, and free the graph unless told
``retain_graph=True`` (``create_graph=True`` keeps it, and makes the gradients tensors
of a graph of their own, to differentiate again).

>>> x = cr.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x ** 3).sum()
>>> (g,) = cr.autograd.grad(y, x, create_graph=True)    # 3 x^2, in a graph
>>> g.tolist()
[3.0, 12.0]
>>> cr.autograd.grad(g.sum(), x)[0].tolist()              # 6 x
[6.0, 12.0]
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import arrays as xp
from ..backward import accumulate, accumulate_arrived, backward_pass
from ..gradient_hooks import keep_gradient, keeps_gradient, run_after_accumulate, run_hooks
from ..graph import Roots, topological_order
from ..saved import free
from ..tensor import Tensor, _seed_gradient

__all__ = ["grad", "backward"]


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` (a tensor or a sequence) with respect to ``inputs``
    (a tensor or a sequence: leaves or intermediate results), as a tuple of Tensors, one
    per input: the vector-Jacobian products with ``grad_outputs`` (ones for a scalar
    output when None). No leaf's ``.grad`` changes.

    An input the outputs do not depend on is refused, unless ``allow_unused=True``
    (its gradient is then None, or zeros with ``materialize_grads=True``).
    ``is_grads_batched=True``: each grad_output has one more leading axis, a batch of
    vectors, and each gradient that axis in front (rows of a Jacobian).

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x * 3
    >>> y = (h * h).sum()
    >>> [g.tolist() for g in cr.autograd.grad(y, [x, h])]    # 18 x and 2 h
    [[18.0, 36.0], [6.0, 12.0]]
    """
    outs = _tensors(outputs, "outputs")
    ins = _tensors(inputs, "inputs")
    for i, t in enumerate(outs):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.grad: output {i} does not require grad (no "
                               f"recorded operation of a tensor that requires grad made "
                               f"it), so it has no gradient")
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.grad: input {i} does not require grad; create "
                               f"it with requires_grad=True")
    if materialize_grads and allow_unused is False:
        raise ValueError("autograd.grad: materialize_grads=True needs allow_unused to be "
                         "True or None")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    seeds = _seeds(outs, grad_outputs, create_graph, is_grads_batched, "autograd.grad")
    arrived = _walk(outs, seeds, ins, create_graph, retain_graph,
                    _batch(seeds, outs, is_grads_batched))
    _fill_retained(arrived)
    results = []
    for i, t in enumerate(ins):
        found = arrived.get(id(t))
        if found is None:
            if not allow_unused:
                raise RuntimeError(
                    f"autograd.grad: input {i} (shape {t.shape}) was not used to compute "
                    f"the outputs, so it has no gradient; pass allow_unused=True to get "
                    f"None for it (or materialize_grads=True for zeros)")
            results.append(Tensor._make(np.zeros(t.shape, t.dtype)) if materialize_grads
                           else None)
            continue
        _, g, owned = found
        if not t._prev:  # a leaf's hooks (a result's ran in the walk)
            g, owned = run_hooks(t, g, owned)
        results.append(g if isinstance(g, Tensor) else
                       Tensor._make(g if owned else np.array(g, copy=True)))
    return tuple(results)


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Add the gradients of ``tensors`` (a tensor or a sequence), times ``grad_tensors``
    (ones for a scalar when None), into the ``.grad`` of every leaf they depend on, or
    only of ``inputs`` (leaves or intermediate results) when given: one walk for all
    the outputs, as ``sum(t * g).backward()`` would take.

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> cr.autograd.backward([(x * x).sum(), x * 3], [None, cr.ones(2)])
    >>> x.grad.tolist()                                     # 2 x + 3
    [5.0, 7.0]
    """
    outs = _tensors(tensors, "tensors")
    for i, t in enumerate(outs):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.backward: tensor {i} does not require grad, so "
                               f"there is no graph to differentiate")
    seeds = _seeds(outs, grad_tensors, create_graph, False, "autograd.backward")
    if inputs is None:
        accumulate_arrived(_walk(outs, seeds, None, create_graph, retain_graph, ()))
        return
    ins = _tensors(inputs, "inputs")
    arrived = _walk(outs, seeds, ins, create_graph, retain_graph, ())
    _fill_retained(arrived)
    for t in ins:
        found = arrived.get(id(t))
        if found is None:
            continue
        _, g, owned = found
        if t._prev:
            if not keeps_gradient(t):  # (a retained result was filled already)
                keep_gradient(t)  # (its .grad is asked for: no warning that it is None)
                accumulate(t, g, owned)
                keep_gradient(t, False)
        else:
            g, owned = run_hooks(t, g, owned)
            accumulate(t, g, owned)
            run_after_accumulate(t)


# ---------------------------------------------------------------------------------------

def _tensors(items, what):
    items = (items,) if isinstance(items, Tensor) else items
    if not isinstance(items, Sequence) or isinstance(items, str) or \
            not all(isinstance(t, Tensor) for t in items):
        kinds = type(items).__name__ if not isinstance(items, Sequence) else \
            ", ".join(sorted({type(t).__name__ for t in items}))
        raise TypeError(f"autograd: {what} must be a Tensor or a sequence of Tensors, "
                        f"got {kinds}")
    return tuple(items)


def _seeds(outs, grad_outputs, create_graph, batched, name):
    if grad_outputs is None or isinstance(grad_outputs, (Tensor, np.ndarray)):
        grad_outputs = (grad_outputs,) * len(outs) if grad_outputs is None else \
            (grad_outputs,)
    if len(grad_outputs) != len(outs):
        raise ValueError(f"{name}: {len(grad_outputs)} grad_outputs for {len(outs)} "
                         f"outputs; give one for each (None for a scalar output)")
    seeds = []
    for out, given in zip(outs, grad_outputs):
        if batched:
            if given is None:
                raise ValueError(f"{name}(is_grads_batched=True): every output needs its "
                                 f"batch of grad_outputs (got None)")
            seed = np.asarray(getattr(given, "_data", given), dtype=out.dtype)
            if seed.shape[1:] != out.shape:
                raise ValueError(f"{name}: a batched grad_output has shape {seed.shape}; "
                                 f"expected a batch axis in front of the output's shape "
                                 f"{out.shape}")
        elif given is not None and isinstance(given, Tensor) and given.requires_grad \
                and create_graph:
            seed = given  # (its own graph: the gradients depend on it)
        else:
            seed = _seed_gradient(out, given)
        seeds.append(Tensor._make(seed) if create_graph and not isinstance(seed, Tensor)
                     else seed)
    return seeds


def _batch(seeds, outs, batched):
    """The batch axis of is_grads_batched's seeds (one size for all), or ()."""
    if not batched:
        return ()
    sizes = {np.shape(getattr(s, "_data", s))[0] for s in seeds}
    if len(sizes) != 1:
        raise ValueError(f"autograd.grad(is_grads_batched=True): the grad_outputs' batch "
                         f"axes differ ({sorted(sizes)}); expected one size for all")
    return (sizes.pop(),)


def _walk(outs, seeds, inputs, create_graph, retain_graph, batch_shape):
    """One backward walk from every output, over the nodes between the outputs and
    ``inputs`` (the whole graph for None); the gradients that reach a leaf, a retained
    result or one of the inputs, by id."""
    order = topological_order(Roots(outs))[:-1]
    if inputs is not None:
        order = _between(order, {id(t) for t in inputs})
    grads, leaf_seeds = {}, []
    for out, seed in zip(outs, seeds):
        if not out._prev:  # an output that is itself a leaf: d(out)/d(out) = 1
            leaf_seeds.append((out, seed))
            continue
        previous = grads.get(id(out))
        grads[id(out)] = (out, seed if previous is None else previous[1] + seed, False)
    kept = [t for t in (inputs or ()) if t._prev and not keeps_gradient(t)]
    for t in kept:  # (the walk hands back what these reach, for this call only)
        keep_gradient(t)
    trace = xp.recorder()
    if trace is not None:  # cr.jit: name the part of the program that follows
        trace.mark("backward")
    try:
        arrived = backward_pass(grads, order, create_graph, batch_shape) if order else {}
    finally:
        for t in kept:
            keep_gradient(t, False)
    if trace is not None:
        trace.mark("forward")
    for leaf, seed in leaf_seeds:
        found = arrived.get(id(leaf))
        arrived[id(leaf)] = (leaf, seed if found is None else found[1] + seed, False)
    if not (create_graph if retain_graph is None else retain_graph):
        free(order)
    return arrived


def _fill_retained(arrived):
    """The ``.grad`` of each result that asked with retain_grad() and that the walk
    reached: PyTorch fills it at every walk through it, ``autograd.grad``'s too."""
    for node, g, _ in arrived.values():
        if node._prev and keeps_gradient(node):
            accumulate(node, g, False)


def _between(order, wanted):
    """The nodes of ``order`` on a path to one of the ``wanted`` ids: the only ones
    whose gradients the answer needs (PyTorch walks no others, so no other hook runs)."""
    reaches, kept = set(wanted), []
    for node in order:  # (operands before the nodes made from them)
        if id(node) in reaches or any(id(p) in reaches for p in node._prev):
            reaches.add(id(node))
            kept.append(node)
    return kept
