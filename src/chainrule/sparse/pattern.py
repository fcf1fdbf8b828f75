"""Sparsity patterns: which inputs each entry of a function's result depends on.

``jacobian_sparsity(f)(x)`` calls f on a ``PatternTracer``: a value (the number at x,
so shapes, Python comparisons and indices work as usual) with its *pattern*, a SciPy
sparse boolean matrix with one row per entry of the value and one column per entry of
x (row i holds the inputs entry i depends on). Each operation computes its result's
pattern from its operands' by a rule of its kind (``index_sets.py``), with sparse
products and row selections only, so a pass costs about the number of non-zeros.

Global or local. By default a pattern holds for every input: a choice made from the
data (``where``, ``maximum``, ``abs``, ``clip``) keeps both sides. ``local=True`` keeps
only what is non-zero at this point: an entry by entry operation drops the entries
whose partial derivative is exactly 0 here (the side ``where`` did not take). A pattern
may hold too much, never too little; an operation without a rule of its own depends,
entry for entry, on every entry of its operands (``dense_fallbacks`` counts those).

What a tracer cannot see: a Python ``if`` on the values, or an index computed from them
(``x[cr.argmax(x)]``, ``cr.sort``) is taken as at this point, so the pattern holds for
the points that take the same branches.
"""

from collections import Counter
from typing import Any, Callable

import numpy as np

from ..primitive import new_level
from ..transforms.tracer import Tracer
from ..transforms.functional import grad
from . import index_sets
from .scipy_door import sparse_module

__all__ = ["PatternTracer", "jacobian_sparsity", "hessian_sparsity", "dense_fallbacks"]

dense_fallbacks: Counter = Counter()  # operation name -> calls that took the dense rule


class _Run:
    """What one detection shares: the number of inputs and whether it is local."""

    __slots__ = ("n", "local")

    def __init__(self, n, local):
        self.n, self.local = n, local


class PatternTracer(Tracer):
    """A value with the inputs each of its entries depends on (``pattern``: a sparse
    boolean matrix, ``value.size`` rows by the number of inputs)."""

    __slots__ = ("primal", "pattern", "_level", "_run")

    def __init__(self, primal, pattern, level, run):
        self.primal, self.pattern, self._level, self._run = primal, pattern, level, run

    def __repr__(self):
        return (f"PatternTracer(shape={self.shape}, non-zeros={self.pattern.nnz}, "
                f"level={self._level})")

    def _contents(self):
        return self.primal

    @classmethod
    def _apply_primitive(cls, prim, args, kwargs):
        params = [v for v in kwargs.values() if isinstance(v, cls)]
        level, primals, positions = cls._unwrap_top(args, params)
        values = {k: (v._contents() if isinstance(v, cls) and v._level == level else v)
                  for k, v in kwargs.items()}
        ans = prim(*primals, **values)
        mine = [args[i] for i in positions]
        run = (mine or params)[0]._run
        operands = {i: args[i].pattern for i in positions}
        if any(isinstance(v, cls) and v._level == level for v in kwargs.values()):
            # a traced keyword parameter: no rule reads those, so the dense one
            operands.update({("kw", k): v.pattern for k, v in kwargs.items()
                             if isinstance(v, cls) and v._level == level})
            rule = index_sets.dense
        else:
            rule = index_sets.rule_of(prim)
        several = isinstance(ans, (tuple, list))
        if several and rule not in index_sets.SEVERAL_RESULTS:
            rule = index_sets.dense
        call = index_sets.Call(prim, primals, values, operands, ans, run.n, run.local)
        if rule is index_sets.dense:
            dense_fallbacks[prim.name] += 1
        try:
            patterns = rule(call)
        except Exception:  # a call a rule did not foresee: the rule that always holds
            dense_fallbacks[f"{prim.name} (its rule failed)"] += 1
            patterns = index_sets.dense(call)
        if several:
            return type(ans)(PatternTracer(a, p, level, run) for a, p in zip(ans, patterns))
        return PatternTracer(ans, patterns, level, run)


def _as_point(x, name):
    point = np.asarray(x)
    if point.dtype.kind not in "biufc":
        raise TypeError(f"{name}: expected an array of numbers, got {point.dtype} "
                        f"({type(x).__name__})")
    return point if point.dtype.kind in "fc" else point.astype(np.float64)


def _pattern_of_result(out, n, name):
    """The pattern of f's result: a constant result depends on nothing."""
    sparse = sparse_module()
    if isinstance(out, PatternTracer):
        return out.pattern.tocsr()
    if isinstance(out, (tuple, list, dict)):
        raise TypeError(f"{name}: f must return one array, got a {type(out).__name__}")
    return sparse.csr_array((int(np.size(out)), n), dtype=bool)


def jacobian_sparsity(f: Callable[..., Any], local: bool = False) -> Callable[..., Any]:
    """The sparsity pattern of f's Jacobian at x, ``jacobian_sparsity(f)(x)``: a SciPy
    CSR boolean array of shape ``(out.size, x.size)``, True where an entry of the
    result may depend on an entry of x (rows and columns in C order).

    Global by default (true for every x: both sides of ``where``, ``maximum``,
    ``abs``); ``local=True`` for the pattern at this x only.

    >>> f = lambda x: x[1:] * x[:-1]
    >>> cr.jacobian_sparsity(f)(np.ones(4)).toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    def pattern_f(x):
        sparse = sparse_module()
        point = _as_point(x, "jacobian_sparsity")
        n = point.size
        seed = sparse.identity(n, dtype=bool, format="csr")
        tracer = PatternTracer(point, seed, new_level(), _Run(n, local))
        return _pattern_of_result(f(tracer), n, "jacobian_sparsity")
    return pattern_f


def hessian_sparsity(f: Callable[..., Any], local: bool = False) -> Callable[..., Any]:
    """The sparsity pattern of the Hessian of scalar f at x, ``hessian_sparsity(f)(x)``:
    a SciPy CSR boolean array of shape ``(x.size, x.size)``, symmetric.

    >>> f = lambda x: cr.sum(x[1:] * x[:-1]) + cr.sum(x ** 3)
    >>> cr.hessian_sparsity(f)(np.ones(3)).toarray().astype(int)
    array([[1, 1, 0],
           [1, 1, 1],
           [0, 1, 1]])
    """
    # The pattern of the gradient's Jacobian: the tracer runs through the reverse pass
    # (grad's VJP rules are operations like any other). Tracking first- and second-order
    # interactions per entry, as SparseConnectivityTracer.jl does, would need a set of
    # pairs per entry of every value; the gradient's rows are already what we propagate.
    # Symmetrised, since a rule may be conservative on one side only.
    def pattern_f(x):
        pattern = jacobian_sparsity(grad(f), local=local)(x)
        return (pattern + pattern.T).tocsr()
    return pattern_f
