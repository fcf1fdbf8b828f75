"""``cr.vmap``: the transform around the batching tracer (``batching.py``): which axis
of which argument is mapped (``in_axes``, JAX's tree prefixes), the batch size, and
where the batch axis goes in the results (``out_axes``).
"""

import contextlib
import functools
from typing import Any, Callable

import numpy as np

from .. import arrays as xp
from .. import libraries
from .. import rules as ops
from ..primitive import Box, new_level, shape_of
from .batching import BatchTracer, _ndim, _numbers
from .lax_collectives import named_axis
from .pytrees import _NODES, tree_flatten, tree_unflatten

__all__ = ["vmap"]



def _is_axis(a):
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))


def _axes_of_leaves(axes, tree, what):
    """One axis (or None) per leaf of ``tree``, from ``axes``: an int or None for the
    whole tree, or containers of the tree's shape (JAX's tree prefix)."""
    if _is_axis(axes):
        return [axes] * len(tree_flatten(tree)[0])
    if tree is None:
        return []
    if isinstance(tree, (tuple, list)) and isinstance(axes, (tuple, list)) \
            and len(axes) == len(tree):
        return [a for sub, t in zip(axes, tree) for a in _axes_of_leaves(sub, t, what)]
    if isinstance(tree, dict) and isinstance(axes, dict) and set(axes) == set(tree):
        return [a for key, t in tree.items() for a in _axes_of_leaves(axes[key], t, what)]
    raise ValueError(f"vmap: {what} {axes!r} does not match the structure of a "
                     f"{type(tree).__name__} (keys or length differ); expected an int, "
                     f"None, or a container of the same shape")


def _move(x, source, destination):
    return x if source == destination else ops.moveaxis(x, source, destination)


def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: Any = None, axis_size: int | None = None,
         spmd_axis_name: Any = None) -> Callable[..., Any]:
    """``f`` mapped over a batch axis: written for one example, run on all at once.

    ``in_axes`` says, per positional argument, which axis holds the batch (an int, or
    None for an argument every example shares); a tuple gives one entry per argument,
    and lists, tuples and dicts inside match the arguments' pytrees (JAX's prefix
    rule). Keyword arguments are batched along axis 0. ``out_axes`` puts the batch axis
    of each output. ``axis_size`` gives the batch size when no argument is batched.
    ``axis_name`` names the batch axis for the collectives of ``chainrule.lax``
    (``psum``, ``pmean``, ``all_gather``, ``axis_index``...: ``lax_collectives.py``);
    ``spmd_axis_name`` (a device mesh's axis) changes nothing on one CPU.
    vmap nests with every transform, in any order: ``cr.vmap(cr.grad(loss))`` gives
    per-example gradients. Operations without a batching rule run example by example
    (counted in ``chainrule.transforms.batching.fallbacks``); random draws inside f are
    shared by every example (see the module's documentation).

    >>> x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> cr.vmap(lambda row: row @ row)(x)                  # one dot product per row
    array([ 5., 25., 61.])
    >>> cr.vmap(lambda a, b: a * b, in_axes=(1, None))(x, 2.0).shape   # over columns
    (2, 3)
    >>> cr.vmap(cr.grad(lambda w, x: cr.sum(w * x) ** 2), in_axes=(None, 0))(
    ...     np.ones(2), x)                                  # per-example gradients
    array([[  6.,  12.],
           [ 42.,  56.],
           [110., 132.]])
    """
    if not (_is_axis(in_axes) or isinstance(in_axes, (tuple, list))):
        raise ValueError(f"vmap: in_axes must be an int, None, or a tuple with one entry "
                         f"per positional argument, got {in_axes!r}")

    @functools.wraps(f)
    def vmapped(*args, **kwargs):
        axes = in_axes
        if isinstance(axes, (tuple, list)) and len(axes) != len(args):
            raise ValueError(f"vmap: in_axes has {len(axes)} entries but the function was "
                             f"called with {len(args)} positional arguments; expected one "
                             f"entry per argument")
        if not kwargs and _all_leaves(args) and (_is_axis(axes) or all(
                _is_axis(a) for a in axes)):  # (arrays as arguments: no tree to walk)
            leaves, treedef = list(args), None
            flat_axes = [axes] * len(args) if _is_axis(axes) else list(axes)
        else:
            leaves, treedef = tree_flatten((tuple(args), kwargs))
            flat_axes = (_axes_of_leaves(tuple(axes) if isinstance(axes, list) else axes,
                                         tuple(args), "in_axes")
                         + [0] * (len(leaves) - len(tree_flatten(tuple(args))[0])))
        library = _library(leaves)  # torch, Dask...: wrapped in, unwrapped out
        if library is not None:
            leaves = [library.adopt(leaf) for leaf in leaves]
        size = _batch_size(leaves, flat_axes, axis_size)
        level = new_level()
        traced = [leaf if axis is None else
                  BatchTracer(_move(leaf, axis % _ndim(leaf), 0), level)
                  for leaf, axis in zip(leaves, flat_axes)]
        with _named(axis_name, level, size):
            if treedef is None:
                out = f(*traced)
            else:
                new_args, new_kwargs = tree_unflatten(treedef, traced)
                out = f(*new_args, **new_kwargs)
        if _is_axis(out_axes) and _all_leaves((out,)):  # (one array: no tree to walk)
            out_leaves, out_def = [out], None
            placed = [_output(out, out_axes, size, level)]
        else:
            out_leaves, out_def = tree_flatten(out)
            placed = [_output(leaf, axis, size, level)
                      for leaf, axis in zip(out_leaves, _axes_of_leaves(out_axes, out,
                                                                        "out_axes"))]
        if library is not None:  # (a traced result stays so: an outer transform's)
            placed = [p if isinstance(p, Box) else library.result(p) for p in placed]
        return placed[0] if out_def is None else tree_unflatten(out_def, placed)

    return vmapped


def _named(axis_name, level, size):
    return contextlib.nullcontext() if axis_name is None else named_axis(axis_name, level, size)


def over_rows(f: Callable[..., Any], rows: Any) -> Any:
    """``vmap(f)(rows)`` for one array mapped along its first axis, every output
    batched along its first: how the Jacobians map a pass over a stack of seeds
    (``jacobians.py``), without in_axes' trees to walk. A None among f's outputs stays
    None."""
    level = new_level()
    out = f(BatchTracer(rows, level))
    size = shape_of(rows)[0]
    leaves, treedef = tree_flatten(out)
    return tree_unflatten(treedef, [_output(leaf, 0, size, level) for leaf in leaves])


def _all_leaves(items):
    """Whether every item is a leaf of a pytree whatever it holds: an array, a box, a
    number (a registered node type is never one of these)."""
    for item in items:
        if not isinstance(item, _LEAVES) or type(item) in _NODES:
            return False
    return True


_LEAVES = (np.ndarray, np.generic, float, int, complex, Box)


def _library(leaves):
    """The one array library other than NumPy among vmap's inputs (torch, Dask), or
    None; NumPy's path imports nothing of ``chainrule.backends``."""
    if all(isinstance(x, _KNOWN) or type(x) in xp.ARRAYS for x in leaves):
        return None
    return libraries.library_among(leaves, "cr.vmap's inputs")


_KNOWN = (np.ndarray, np.generic, int, float, complex, Box)


def _of_a_finished_trace(leaf):
    try:
        numbers = _numbers(leaf)
    except Exception:  # (a traced value refuses to show its numbers once its trace ended)
        return True
    return type(numbers) in xp.ARRAYS and type(numbers) is not np.ndarray and \
        not hasattr(numbers, "_lib")  # (a ForeignArray, which no trace owns)


def _batch_size(leaves, axes, axis_size):
    sizes = []
    for k, (leaf, axis) in enumerate(zip(leaves, axes)):
        if axis is None:
            continue
        shape = shape_of(leaf)
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"vmap: in_axes {axis} for an input of shape {shape} (leaf "
                             f"{k}); expected an axis between {-len(shape)} and "
                             f"{len(shape) - 1}, or None")
        sizes.append((k, axis, shape[axis]))
    found = {n for _, _, n in sizes} | ({axis_size} if axis_size is not None else set())
    if len(found) > 1:
        said = ", ".join(f"leaf {k} axis {a} has {n}" for k, a, n in sizes)
        given = f", axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(f"vmap: the mapped axes have different sizes ({said}{given}); "
                         f"expected one batch size")
    if not found:
        raise ValueError("vmap: no input is mapped (every in_axes is None); pass "
                         "axis_size= to say how many examples to make")
    return found.pop()


def _output(leaf, axis, size, level):
    if xp.recorder() is None and _of_a_finished_trace(leaf):
        raise TypeError("cr.vmap: the function returned a value of a cr.jit trace that has "
                        "ended (a cr.jit function called on batched values cannot trace "
                        "them); write cr.jit(cr.vmap(f)) instead of cr.vmap(cr.jit(f))")
    mine = isinstance(leaf, BatchTracer) and leaf._level == level
    if axis is None:
        if mine:
            raise ValueError(f"vmap: out_axes None for an output that differs from example "
                             f"to example (shape {leaf.shape}); expected an int there")
        return leaf
    if mine:
        value = leaf.value
    elif isinstance(leaf, Box):
        value = ops.broadcast_to(leaf, (size,) + shape_of(leaf))
    else:
        value = np.broadcast_to(xp.as_array(leaf), (size,) + np.shape(leaf)).copy()
    rank = _ndim(value)
    if not -rank <= axis < rank:
        raise ValueError(f"vmap: out_axes {axis} for an output of {rank - 1} dimensions "
                         f"per example; expected an axis between {-rank} and {rank - 1}")
    return _move(value, 0, axis % rank)

