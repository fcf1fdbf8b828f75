"""Jacobians and Hessians, built on the transforms of ``functional.py``: ``jacrev`` (one
backward pass seeded with every row of an identity at once), ``jacfwd`` (one forward pass
per input, carrying every column of an identity as a batch of tangents), ``hessian``
(forward over reverse, as JAX builds it) and ``hvp`` (the Hessian times a vector, two
backward passes, no Hessian formed).

A Jacobian is one pass mapped over a stack of seeds, the rows (or columns) of an
identity. The plain definition is JAX's: ``cr.vmap`` of ``vjp`` (``jacrev``) or of ``jvp``
(``jacfwd``), so that every rule sees one seed (``STACKED_SEEDS = False``). The rules of
the table also take the whole stack as leading axes of their cotangents and tangents
(``batch_shape`` in ``backward.py``, ``lead`` in ``forward.py``), which spares vmap's
dispatch at every operation of the pass: that is the way taken (True), 15-20% faster
at n = 100 and the same at n = 1000. tests/test_jacobians_by_vmap.py holds the two
equal on every case of the derivative table.
"""

from typing import Any, Callable

import numpy as np

from .. import rules as ops
from ..arrays import ARRAYS, as_array, to_float
from ..modes import enable_grad
from ..primitive import Box, new_level
from ..primitive import raw as _innermost
from ..scalar.value import Value
from ..tensor_data import foreign
from .forward import JVPTracer, tangent_in_dtype
from .functional import (_argnums, _check_dtypes, _checked_output, _float_dtype, _in_kind,
                         _kind, _kind_of_results, _library, _point, _refuse_escaped,
                         _ReverseRun, _traced, grad)
from .pytrees import PyTree, leaf_count, leaves_up_to, tree_flatten, tree_map, tree_unflatten
from .vmap_axes import over_rows

__all__ = ["jacrev", "jacfwd", "jacobian", "hessian", "hvp"]

# True: the seeds ride through the rules as leading axes, in one pass; False: the pass
# mapped over them by cr.vmap (see the module's documentation).
STACKED_SEEDS = True


def jacrev(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian by reverse mode, shape ``out.shape + in.shape``: for the tensor
    engine, one backward pass seeded with all the rows of an identity at once. With
    ``has_aux=True``, f returns ``(output, aux)`` and the result is ``(jacobian, aux)``.
    Outputs must be real, as for ``grad``, unless ``holomorphic=True`` (complex inputs
    and outputs, entries f'(z)).

    >>> cr.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))      # diag(2x)
    array([[2., 0.],
           [0., 4.]])
    """
    def jacrev_f(*args, **kwargs):
        trace = _ReverseRun(f, args, kwargs, argnums, has_aux, "jacrev", holomorphic)
        _check_dtypes(trace.out_leaves, holomorphic, "jacrev", "output")
        per_output = []
        # each output by its place: one value returned twice is two outputs, two blocks
        for i, leaf in enumerate(trace.out_leaves):
            shape = np.shape(_innermost(leaf))
            if not shape:  # a scalar output: one plain pass
                cot = [1.0 if j == i else None for j in range(len(trace.out_leaves))]
                per_output.append(trace.input_results(trace.pullback(cot)))
                continue
            size = int(np.prod(shape))
            seed = np.eye(size, dtype=_float_dtype(leaf)).reshape((size,) + shape)
            if STACKED_SEEDS:
                cotangents = [seed if j == i else None for j in range(len(trace.out_leaves))]
                grads = trace.pullback(cotangents, (size,))
            else:
                grads = over_rows(lambda row, i=i: trace.pullback(
                    [row if j == i else None for j in range(len(trace.out_leaves))]), seed)
            blocks = trace.input_results(grads, (size,))
            per_output.append(_batch_axis_into_output_shape(blocks, trace, shape))
        jacobian = tree_unflatten(trace.out_def, per_output)
        return (jacobian, trace.output(aux=True)) if has_aux else jacobian

    return jacrev_f


def _batch_axis_into_output_shape(blocks, trace, out_shape):
    """Move the batch axis of each gradient into the output's shape: out.shape + in.shape."""
    def reshape(block):
        if isinstance(block, (Box, np.ndarray)) or type(block) in ARRAYS or \
                _library(block) is not None:  # (ARRAYS: cr.jit's traced arrays too)
            return ops.reshape(block, out_shape + tuple(np.shape(block)[1:]))
        return block
    if trace.many:
        return tuple(tree_map(reshape, b) for b in blocks)
    return tree_map(reshape, blocks)


def jacfwd(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian by forward mode, shape ``out.shape + in.shape``: one forward pass
    per input, carrying all the columns of an identity as a batch of tangents. With
    ``has_aux=True``, f returns ``(output, aux)`` and the result is ``(jacobian, aux)``.
    Inputs must be real (outputs may be complex), unless ``holomorphic=True``.

    >>> cr.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))      # diag(2x)
    array([[2., 0.],
           [0., 4.]])
    """
    def jacfwd_f(*args, **kwargs):
        nums, many = _argnums(argnums, len(args), "jacfwd")
        for n in nums:
            _check_dtypes(tree_flatten(args[n])[0], holomorphic, "jacfwd", "input")
        out_kind = _kind_of_results([_kind(leaf) for n in nums
                                     for leaf in tree_flatten(args[n])[0]])
        if type(out_kind) is not str:  # another library's arrays: wrapped
            args, kwargs = out_kind.adopt_tree((args, kwargs))
        per_arg, out_def, aux = [], None, None
        for n in nums:
            leaves, treedef = tree_flatten(args[n])
            per_leaf = []
            for k, leaf in enumerate(leaves):
                # each input's blocks in its own kind, as jacrev and grad give them
                kind = _kind(leaf) if type(out_kind) is str else out_kind
                blocks, out_def, aux = _forward_columns(f, args, kwargs, n, leaves, treedef,
                                                        k, out_kind, has_aux, holomorphic,
                                                        kind)
                per_leaf.append(blocks)
            per_arg.append((treedef, per_leaf))
        if not any(per_leaf for _, per_leaf in per_arg):  # no input leaf (None inputs):
            # the output's structure, from a run of f
            _, out_def, aux = _forward_columns(f, args, kwargs, None, [], None, None,
                                               out_kind, has_aux)
        # The output's structure outside, the inputs' inside (as JAX arranges it).
        regrouped = []
        for j in range(leaf_count(out_def)):
            per_num = [tree_unflatten(treedef, [blocks[j] for blocks in per_leaf])
                       for treedef, per_leaf in per_arg]
            regrouped.append(tuple(per_num) if many else per_num[0])
        jacobian = tree_unflatten(out_def, regrouped)
        return (jacobian, aux) if has_aux else jacobian

    return jacfwd_f


def _forward_columns(f, args, kwargs, n, leaves, treedef, k, out_kind, has_aux=False,
                     holomorphic=False, block_kind=None):
    """d out / d leaves[k] of argument n, for every output leaf: out.shape + in.shape,
    in ``block_kind`` (the aux in ``out_kind``). With n None, f runs on args as they
    are (every block is then zeros)."""
    in_shape, columns = (), None
    if n is not None:
        leaf = _point(leaves[k])
        in_shape = np.shape(_innermost(leaf))
        if in_shape != ():  # (a scalar input has one column: a tangent of 1, no stack)
            size = int(np.prod(in_shape))
            columns = np.eye(size, dtype=_float_dtype(leaf)).reshape((size,) + in_shape)
            if foreign(_innermost(leaf)):  # (the library's, as the point: a NumPy
                columns = _innermost(leaf)._owned(columns)  # array meets its indices)
    found = {}

    def tangents(column):
        """f's tangents along ``column``, None for an output the input does not reach."""
        level = new_level()
        new_args = list(args)
        if n is not None:
            traced = list(leaves)
            traced[k] = JVPTracer(leaf, column, level)
            new_args[n] = tree_unflatten(treedef, traced)
        with enable_grad():
            out = _traced(f, new_args, kwargs, out_kind)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(f"jacfwd(..., has_aux=True): the function must return a "
                                f"pair (output, aux), got {type(out).__name__}")
            out, aux = out
            aux = tree_map(lambda leaf: _in_kind(leaf.primal, out_kind) if isinstance(
                leaf, JVPTracer) and leaf._level == level else leaf, aux)  # (no derivative)
        out = _checked_output(out, "jacfwd")
        out_leaves, found["out_def"] = tree_flatten(out)
        if holomorphic:
            _check_dtypes(out_leaves, True, "jacfwd", "output")
        found["aux"], found["out_leaves"] = aux, out_leaves
        tangents = [tangent_in_dtype(o) if isinstance(o, JVPTracer) and o._level == level
                    else None for o in out_leaves]
        for t in tangents:
            _refuse_escaped(t, level, "jacfwd")
        return tangents

    if columns is None:  # (a 0-d input's tangent in its dtype: a float32 one stays so)
        one = None if n is None else 1.0 if foreign(_innermost(leaf)) or \
            _float_dtype(leaf) == np.float64 else np.ones((), _float_dtype(leaf))
        per_output = tangents(one)
    elif STACKED_SEEDS:  # every column at once, as leading axes of one tangent
        per_output = tangents(columns)
    else:
        per_output = over_rows(tangents, columns)
    blocks = []
    for tangent, o in zip(per_output, found["out_leaves"]):
        out_shape = np.shape(_innermost(o))
        if tangent is None:  # this output does not depend on the input
            block = np.zeros(out_shape + in_shape, _float_dtype(o))
        elif columns is None:
            block = tangent
        else:  # (size,) + out.shape: the columns' axis moved to the end
            order = tuple(range(1, len(out_shape) + 1)) + (0,)
            block = ops.reshape(ops.transpose(tangent, order), out_shape + in_shape)
        blocks.append(_in_kind(block, out_kind if block_kind is None else block_kind))
    return blocks, found["out_def"], found["aux"]


jacobian = jacrev


def hessian(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
            has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The matrix of second derivatives, shape ``in.shape + in.shape`` (with
    ``has_aux=True``, f returns ``(output, aux)`` and the result is ``(hessian, aux)``).

    Forward over reverse, as in JAX: the gradient is computed once, carrying all the
    columns of an identity as one batch of tangents. ``holomorphic=True`` for a
    complex function of complex inputs; a real function of complex inputs is refused,
    as JAX refuses it (``cr.jvp(cr.grad(f), (z,), (v,))`` gives its products).

    >>> cr.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))   # [[2y, 2x], [2x, 0]]
    array([[4., 2.],
           [2., 0.]])
    """
    return jacfwd(jacrev(f, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def hvp(f: Callable[..., Any], x: PyTree, v: PyTree) -> PyTree:
    """The Hessian of scalar ``f`` at ``x`` times ``v``, without forming the Hessian:
    the gradient of ``<grad f(x), v>``, two backward passes. The result has x's shape.
    For a complex x, the gradient of Re<grad f(x), v>: JAX's ``jvp(grad(f), (x,), (v,))``.

    >>> f = lambda x: x[0] ** 2 * x[1]              # Hessian [[2y, 2x], [2x, 0]]
    >>> cr.hvp(f, np.array([1.0, 2.0]), np.array([1.0, 0.0]))     # its first column
    array([4., 2.])
    """
    def directional(x):
        g = grad(f)(x)
        g_leaves, g_def = tree_flatten(g)
        v_leaves = leaves_up_to(g_def, v, "hvp: the point and the direction")
        total = 0.0
        for gl, vl in zip(g_leaves, v_leaves):
            if isinstance(vl, Box):  # a traced direction: the product is traced in it too
                total = total + ops.sum(gl * vl)
            elif isinstance(gl, (Value, float)):
                total = total + gl * to_float(vl)
            else:  # (another library's array as it is: chainrule.backends)
                total = total + ops.sum(gl * (vl if type(_kind(vl)) is not str
                                              else as_array(vl)))
        return ops.real(total) if np.iscomplexobj(_innermost(total)) else total
    return grad(directional)(x)
