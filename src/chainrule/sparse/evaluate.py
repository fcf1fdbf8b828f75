"""Sparse Jacobians and Hessians in a few compressed passes.

With columns coloured so that no two of one colour share a row, ``J @ seed`` for the
seed that sums one colour's unit vectors holds each of their entries alone in its row:
one jvp per colour gives every entry (forward mode). Rows coloured the same way give
one vjp per colour (reverse mode). For a Hessian, one Hessian-vector product per colour
(forward over reverse) with a star colouring (``coloring.py``), or, on request, an
acyclic one, the entries then solved for by substitution (``acyclic.py``). ``mode="bidirectional"``
takes both: jvps for the entries a bicolouring reads from columns, vjps for the others
(a dense row and a dense column need n passes either way alone). All the colours' passes
run at once: forward mode carries the seeds as one batch of tangents through f (as
``cr.jacfwd`` carries its columns: one pass, 2-3x faster than ``cr.vmap`` of ``cr.jvp``
on the tridiagonal benchmark), reverse mode maps the pullback over them with
``cr.vmap``. The entries are gathered from the compressed result into a ``scipy.sparse.csr_array`` (SciPy's array interface, which
``scipy.optimize`` and ``scipy.sparse.linalg`` take as they take a csr_matrix).

A ``sparsity=`` given up front is coloured once, when ``sparse_jacobian(f, ...)`` is
called, so each evaluation is only the passes and the gather; without it, each call
finds the pattern at its point first (``pattern.py``). Under ``cr.jit`` the pattern is
found and coloured once, while tracing (a global pattern holds for every input), so the
program holds only the compressed passes and the gather; its result is the values, and
each call makes the sparse array around them (``TracedSparse``, a pytree node).
"""

import math
from typing import Any, Callable

import numpy as np

from .. import arrays as xp
from .. import libraries
from ..modes import enable_grad
from ..primitive import new_level
from ..tensor import Tensor
from ..transforms.forward import JVPTracer, tangent_in_dtype
from ..transforms.functional import grad, vjp
from ..transforms.pytrees import register_pytree_node
from ..transforms.vmap_axes import vmap
from .acyclic import SubstitutionPlan, acyclic_coloring
from .coloring import bicoloring, column_coloring, row_coloring, star_coloring
from .pattern import hessian_sparsity, jacobian_sparsity
from .scipy_door import sparse_module
from .tabu import fewer_column_colours

__all__ = ["sparse_jacobian", "sparse_hessian"]

MODES = ("auto", "forward", "reverse", "bidirectional")
HESSIAN_COLORINGS = ("star", "acyclic")
JACOBIAN_COLORINGS = ("greedy", "tabu")


def _traced(x):
    """Whether x is a registered stand-in for an ndarray (cr.jit's traced array, or
    another library's array wrapped: ``ForeignArray``)."""
    return type(x) is not np.ndarray and type(x) in xp.ARRAYS


def _in_own_library(evaluate, x, who):
    """``evaluate`` of x, an array of another library (torch, CuPy), computed in that
    library (its passes and gather) and returned as its sparse array; None for NumPy's
    and cr.jit's arrays, evaluated as they are."""
    lib = libraries.library_of(x)
    if lib is None:
        return None
    from ..backends.sparse_arrays import check_sparse_support
    check_sparse_support(lib, who)
    return evaluate(lib.adopt(x))


def _numbers_now(point, who):
    """The NumPy numbers the pattern is found on: ``xp.value_now``, or a host copy of
    another library's array (eager, or what cr.jit's traced array holds at this call)."""
    lib = _library_of_point(point) if not xp.numpy_backed(point) else None
    if lib is not None:
        from ..backends.sparse_arrays import check_sparse_support, host_copy
        check_sparse_support(lib, who)
        held = point._value if _traced(point) else point
        return host_copy(lib, held._value if libraries.wrapped(held) else held)
    return xp.value_now(point)


def _point(x, name):
    point = x if _traced(x) else np.asarray(x)
    if point.dtype.kind not in "fc":
        if point.dtype.kind not in "biu":
            raise TypeError(f"{name}: expected an array of numbers, got {point.dtype} "
                            f"({type(x).__name__})")
        point = xp.as_array(point, np.float64)
    return point


def _checked_pattern(sparsity, shape, name, what):
    pattern = sparse_module().csr_array(sparsity, dtype=bool)
    pattern.sum_duplicates()
    pattern.sort_indices()
    if shape is not None and pattern.shape != shape:
        raise ValueError(f"{name}: sparsity has shape {pattern.shape}, expected {what} = "
                         f"{shape}")
    return pattern


def _seeds(colors, ncolors):
    """One seed per colour: the sum of the unit vectors of that colour's columns (colour
    -1: in no seed)."""
    seeds = np.zeros((ncolors, colors.size))
    coloured = np.flatnonzero(colors >= 0)
    seeds[colors[coloured], coloured] = 1.0
    return seeds


def _values(a):
    """A Tensor's array where the Tensor carries no derivative (f computed with Tensors;
    under cr.jit the array is a traced one, which np.asarray cannot take); anything else
    as it is, so that a value an outer transform differentiates is refused by
    ``as_array`` rather than silently detached."""
    return a._data if isinstance(a, Tensor) and not a.requires_grad else a


def _compressed_jvps(f, point, seeds):
    """The jvps of f at ``point`` along every seed (stacked on a leading axis) in one
    pass: the seeds ride through f as one batch of tangents, in x's dtype (float32 stays
    float32, as with cr.jacfwd)."""
    seeds = _in_library_of(point, seeds.astype(point.dtype, copy=False))
    level = new_level()
    with enable_grad():
        out = f(JVPTracer(point, seeds, level))
    if isinstance(out, JVPTracer) and out._level == level:
        return xp.as_array(_values(tangent_in_dtype(out)))
    return np.zeros((seeds.shape[0],) + np.shape(out))  # f does not depend on x


class _Plan:
    """A pattern, coloured, and where each stored entry is found in the compressed
    result: ``compressed.ravel()[gather]`` are the values in CSR order."""

    def __init__(self, pattern, mode, colors, gather):
        self.pattern, self.mode, self.colors, self.gather = pattern, mode, colors, gather
        self.ncolors = int(colors.max(initial=-1)) + 1
        self._seeds = None

    def seeds(self, shape):
        """The seeds, one per colour, each of ``shape`` (made once: a known pattern
        serves many calls)."""
        if self._seeds is None:
            self._seeds = _seeds(self.colors, self.ncolors)
        return self._seeds.reshape((self.ncolors,) + tuple(shape))

    def assemble(self, compressed):
        values = xp.reshape(xp.as_array(_values(compressed)), (-1,))[self.gather]
        return _sparse_array(values, self.pattern)


class TracedSparse:
    """A CSR array whose values a cr.jit program computes: the program's result is the
    values (the pytree's one leaf), and each call puts the pattern, a constant of the
    program, around them again as a ``scipy.sparse.csr_array``."""

    def __init__(self, values, pattern):
        self.values, self.pattern = values, pattern

    def __repr__(self):
        return f"TracedSparse(shape={self.pattern.shape}, nnz={self.pattern.nnz})"


def _library_of_point(point):
    """The library of another library's array (wrapped, or held by cr.jit's traced
    array), or None."""
    held = point._value if _traced(point) and not libraries.wrapped(point) else point
    return held._lib if libraries.wrapped(held) else libraries.library_of(held)


def _in_library_of(point, seeds, wrapped=True):
    """The seeds (NumPy) as arrays of the point's library, if it has one, wrapped as the
    engine computes with them (a tangent), or not (the batch a transform is given): a
    derivative computed from the seeds and constants alone (a linear f) is then that
    library's too, not NumPy's."""
    lib = _library_of_point(point) if type(point) is not np.ndarray else None
    if lib is None:
        return seeds
    return lib.wrap(lib.from_numpy(seeds)) if wrapped else lib.from_numpy(seeds)


def _wrapped_like(point, result):
    """A transform's result over the point's library (its own array) wrapped, as the
    engine computes with it; anything else as it is."""
    lib = _library_of_point(point) if type(point) is not np.ndarray else None
    return lib.adopt(result) if lib is not None and lib.owns(result) else result


def _sparse_array(values, pattern):
    """The CSR array of ``pattern`` holding ``values``: SciPy's for NumPy values, the
    library's own for another library's, a TracedSparse for values of a cr.jit program
    being traced."""
    lib = values._lib if libraries.wrapped(values) else None
    if lib is None and _traced(values):
        return TracedSparse(values, pattern)
    if lib is None and type(values) is not np.ndarray:  # (a replay's result: torch's...)
        lib = libraries.library_of(values)
    if lib is not None:
        from ..backends.sparse_arrays import csr_array
        return csr_array(lib, values._value if libraries.wrapped(values) else values,
                         pattern.indptr, pattern.indices, pattern.shape)
    return sparse_module().csr_array((values, pattern.indices, pattern.indptr),
                                     shape=pattern.shape)


register_pytree_node(TracedSparse, lambda node: ((node.values,), node.pattern),
                     lambda pattern, children: _sparse_array(children[0], pattern))


def _entries(pattern):
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return rows, pattern.indices.astype(np.int64)


def _structurally_symmetric(pattern):
    return pattern.shape[0] == pattern.shape[1] and (pattern != pattern.T).nnz == 0


class _BidirectionalPlan:
    """Forward passes for some entries and reverse passes for the others
    (``coloring.bicoloring``): ``concat([forward.ravel(), reverse.ravel()])[gather]``
    are the values in CSR order."""

    mode = "bidirectional"

    def __init__(self, pattern, rows, columns, from_rows):
        m, n = pattern.shape
        self.pattern = pattern
        self.nforward, self.nreverse = int(columns.max()) + 1, int(rows.max()) + 1
        self.ncolors = self.nforward + self.nreverse
        self.forward_seeds = _seeds(columns, self.nforward)
        self.reverse_seeds = _seeds(rows, self.nreverse)
        entry_rows, entry_columns = _entries(pattern)
        # forward is (nforward, m): entry (i, j) at [colour of j, i]; reverse follows it,
        # (nreverse, n): entry (i, j) at [colour of i, j]
        self.gather = np.where(from_rows,
                               self.nforward * m + rows[entry_rows] * n + entry_columns,
                               columns[entry_columns] * m + entry_rows)

    def evaluate(self, f, point):
        m = self.pattern.shape[0]
        forward = _compressed_jvps(f, point, self.forward_seeds.reshape(
            (self.nforward,) + point.shape))
        if np.size(forward) != self.nforward * m:
            raise ValueError(f"sparse_jacobian: sparsity has {m} rows, expected one per "
                             f"entry of f(x) ({np.size(forward) // self.nforward})")
        out, pullback = vjp(f, point)
        reverse = _wrapped_like(point, vmap(lambda u: pullback(u)[0])(_in_library_of(
            point, self.reverse_seeds.reshape((self.nreverse,) + np.shape(out)),
            wrapped=False)))
        flat = xp.concat([xp.reshape(xp.as_array(_values(part)), (-1,))
                          for part in (forward, reverse)])
        return _sparse_array(flat[self.gather], self.pattern)


def _bidirectional_plan(pattern):
    """Forward and reverse passes together where they need fewer passes than either
    alone; else the one-sided plan that the colouring chose."""
    rows, columns, from_rows = bicoloring(pattern)
    if rows.max(initial=-1) < 0 or columns.max(initial=-1) < 0:
        return _jacobian_plan(pattern, "reverse" if columns.max(initial=-1) < 0
                              else "forward")
    return _BidirectionalPlan(pattern, rows, columns, from_rows)


def _jacobian_plan(pattern, mode, coloring="greedy"):
    """Colour the pattern for forward mode (columns), reverse mode (rows), or whichever
    needs fewer passes ("auto"; forward on a tie: a jvp costs less than a vjp); with
    ``coloring="tabu"``, each greedy colouring improved by tabu search."""
    if mode == "bidirectional":
        return _bidirectional_plan(pattern)
    searched = (lambda p, colors: fewer_column_colours(p, colors)) if coloring == "tabu" \
        else (lambda p, colors: colors)
    rows, cols = _entries(pattern)
    m, n = pattern.shape
    plans = []
    if mode in ("auto", "forward"):
        colors = searched(pattern, column_coloring(pattern))
        # compressed is (colours, m): entry (i, j) is at [colour of j, i]
        plans.append(_Plan(pattern, "forward", colors, colors[cols] * m + rows))
    most_in_a_column = int(np.bincount(cols, minlength=n).max(initial=0))
    if mode == "reverse" or mode == "auto" and plans[0].ncolors > most_in_a_column \
            and not _structurally_symmetric(pattern):
        # (rows need at least as many colours as a column has entries: where the
        # columns' colouring reaches that, it is no worse; and the rows of a symmetric
        # pattern are its columns: either way the rows are not tried)
        colors = searched(pattern.T, row_coloring(pattern))
        # compressed is (colours, n): entry (i, j) is at [colour of i, j]
        plans.append(_Plan(pattern, "reverse", colors, colors[rows] * n + cols))
    return min(plans, key=lambda plan: plan.ncolors)


def sparse_jacobian(f: Callable[..., Any], mode: str = "auto", sparsity: Any = None,
                    coloring: str = "greedy") -> Callable[..., Any]:
    """The Jacobian of f at x as a SciPy sparse array, ``sparse_jacobian(f)(x)``: shape
    ``(out.size, x.size)`` (``scipy.sparse.csr_array``), entries in C order.

    The pattern is found first (``jacobian_sparsity``), coloured, and computed in one
    pass per colour: ``mode="forward"`` (a jvp per group of columns), ``"reverse"`` (a
    vjp per group of rows) or ``"auto"`` (the fewer). ``"bidirectional"`` takes jvps for
    some entries and vjps for the others where that needs fewer passes in all: a dense
    row, a dense column and a diagonal take 3 passes, either way alone n.
    ``sparsity=`` (a boolean matrix, dense or sparse) skips the detection, and is
    coloured once, here. ``coloring="tabu"`` improves the greedy colouring by tabu
    search (``tabu.py``): fewer passes at every evaluation for a search of a few
    seconds (the 2-D Brusselator at N = 32: 10 colours -> 8), worth it where the
    colouring is made once (with ``sparsity=``, or under cr.jit). For a PyTorch (or
    CuPy) x, the passes run in that library and the result is its CSR array
    (``torch.sparse_csr_tensor``).

    >>> f = lambda x: x[1:] ** 2 - x[:-1]
    >>> J = cr.sparse_jacobian(f)(np.arange(4.0))
    >>> J.toarray()
    array([[-1.,  2.,  0.,  0.],
           [ 0., -1.,  4.,  0.],
           [ 0.,  0., -1.,  6.]])
    """
    if mode not in MODES:
        raise ValueError(f"sparse_jacobian: mode must be one of {', '.join(MODES)}, "
                         f"got {mode!r}")
    if coloring not in JACOBIAN_COLORINGS:
        raise ValueError(f"sparse_jacobian: coloring must be one of "
                         f"{', '.join(JACOBIAN_COLORINGS)}, got {coloring!r}")
    if coloring == "tabu" and mode == "bidirectional":
        raise ValueError("sparse_jacobian: coloring='tabu' searches a column or row "
                         "colouring (mode 'auto', 'forward' or 'reverse'), not the "
                         "bidirectional one")
    known = None if sparsity is None else _jacobian_plan(
        _checked_pattern(sparsity, None, "sparse_jacobian", ""), mode, coloring)

    def jacobian_f(x):
        foreign = _in_own_library(jacobian_f, x, "sparse_jacobian")
        if foreign is not None:
            return foreign
        point = _point(x, "sparse_jacobian")
        plan = known or _jacobian_plan(_checked_pattern(
            jacobian_sparsity(f)(_numbers_now(point, "sparse_jacobian")), None, "", ""), mode,
            coloring)
        if plan.pattern.shape[1] != point.size:
            raise ValueError(f"sparse_jacobian: sparsity has {plan.pattern.shape[1]} "
                             f"columns, expected one per entry of x ({point.size}, x of "
                             f"shape {point.shape})")
        if plan.mode == "bidirectional":
            return plan.evaluate(f, point)
        if plan.mode == "forward":
            compressed = _compressed_jvps(f, point, plan.seeds(point.shape))
        else:
            out, pullback = vjp(f, point)
            if math.prod(np.shape(out)) != plan.pattern.shape[0]:
                raise ValueError(f"sparse_jacobian: sparsity has {plan.pattern.shape[0]} "
                                 f"rows, expected one per entry of f(x) ({math.prod(np.shape(out))})")
            compressed = _wrapped_like(point, vmap(lambda u: pullback(u)[0])(
                _in_library_of(point, plan.seeds(np.shape(out)), wrapped=False)))
        compressed = xp.reshape(xp.as_array(_values(compressed)), (plan.ncolors, -1))
        if plan.mode == "forward" and compressed.shape[1] != plan.pattern.shape[0]:
            raise ValueError(f"sparse_jacobian: sparsity has {plan.pattern.shape[0]} rows, "
                             f"expected one per entry of f(x) ({compressed.shape[1]})")
        return plan.assemble(compressed)
    return jacobian_f


class _AcyclicPlan(_Plan):
    """An acyclic colouring: the values solved for from the compressed Hessian by
    substitution (``acyclic.SubstitutionPlan``), with array operations that cr.jit
    records."""

    def __init__(self, pattern, colors):
        super().__init__(pattern, "acyclic", colors, None)
        self.substitution = SubstitutionPlan(pattern, colors)

    def assemble(self, compressed):
        compressed = xp.reshape(xp.as_array(_values(compressed)), (self.ncolors, -1))
        return _sparse_array(self.substitution.recover(compressed), self.pattern)


def _hessian_plan(pattern, coloring="star"):
    """A star colouring where it needs fewer passes than a column colouring (each
    entry then comes from its row or from its mirror's), else the column colouring;
    or, ``coloring="acyclic"``, an acyclic colouring (values by substitution)."""
    pattern = _checked_pattern(pattern + pattern.T, None, "", "")
    if coloring == "acyclic":
        return _AcyclicPlan(pattern, acyclic_coloring(pattern))
    rows, cols = _entries(pattern)
    n = pattern.shape[0]
    column = column_coloring(pattern)
    star = star_coloring(pattern)
    if star.max(initial=-1) >= column.max(initial=-1):
        # compressed is (colours, n) = (H @ seeds).T: entry (i, j) at [colour of j, i]
        return _Plan(pattern, "column", column, column[cols] * n + rows)
    ncolors = int(star.max()) + 1
    keys = rows * ncolors + star[cols]
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    alone = counts[inverse] == 1  # j's colour appears once in row i: read it there
    gather = np.where(alone, star[cols] * n + rows, star[rows] * n + cols)
    return _Plan(pattern, "star", star, gather)


def sparse_hessian(f: Callable[..., Any], sparsity: Any = None,
                   coloring: str = "star") -> Callable[..., Any]:
    """The Hessian of scalar f at x as a SciPy sparse array, ``sparse_hessian(f)(x)``:
    shape ``(x.size, x.size)`` (``scipy.sparse.csr_array``).

    The pattern is found first (``hessian_sparsity``), star-coloured (or
    column-coloured, where that needs fewer passes), and computed with one
    Hessian-vector product per colour, each entry read off one of them.
    ``coloring="acyclic"`` takes an acyclic colouring instead: fewer colours (2 for a
    band of width 3, where star needs 3), the entries solved for by substitution along
    the two-coloured trees. ``sparsity=`` skips the detection. For a PyTorch (or CuPy)
    x, the passes run in that library and the result is its CSR array.

    >>> f = lambda x: cr.sum(x[1:] * x[:-1] ** 2)
    >>> cr.sparse_hessian(f)(np.array([1.0, 2.0, 3.0])).toarray()
    array([[4., 2., 0.],
           [2., 6., 4.],
           [0., 4., 0.]])
    >>> cr.sparse_hessian(f, coloring="acyclic")(np.array([1.0, 2.0, 3.0])).toarray()
    array([[4., 2., 0.],
           [2., 6., 4.],
           [0., 4., 0.]])
    """
    if coloring not in HESSIAN_COLORINGS:
        raise ValueError(f"sparse_hessian: coloring must be one of "
                         f"{', '.join(HESSIAN_COLORINGS)}, got {coloring!r}")
    known = None if sparsity is None else _hessian_plan(
        _checked_pattern(sparsity, None, "sparse_hessian", ""), coloring)

    def hessian_f(x):
        foreign = _in_own_library(hessian_f, x, "sparse_hessian")
        if foreign is not None:
            return foreign
        point = _point(x, "sparse_hessian")
        plan = known or _hessian_plan(
            hessian_sparsity(f)(_numbers_now(point, "sparse_hessian")), coloring)
        if plan.pattern.shape != (point.size, point.size):
            raise ValueError(f"sparse_hessian: sparsity has shape {plan.pattern.shape}, "
                             f"expected (x.size, x.size) = {(point.size, point.size)}")
        compressed = _compressed_jvps(grad(f), point, plan.seeds(point.shape))  # (forward
        # over reverse)
        return plan.assemble(xp.reshape(xp.as_array(_values(compressed)), (plan.ncolors, -1)))
    return hessian_f
