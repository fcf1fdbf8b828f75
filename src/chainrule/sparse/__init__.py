"""Sparse Jacobians and Hessians: the pattern found by a tracer, coloured, and computed
in a few compressed passes (docs/sparse-derivatives.md).

* ``pattern.py``: ``jacobian_sparsity``, ``hessian_sparsity`` (the tracer);
  ``index_sets.py``: each operation's rule;
* ``coloring.py``: column, row and star colourings, and bicolouring; ``tabu.py``: fewer
  colours for a column or row colouring by tabu search (``coloring="tabu"``);
  ``acyclic.py``: acyclic colouring, and the substitution that recovers a Hessian from it;
* ``evaluate.py``: ``sparse_jacobian``, ``sparse_hessian`` (compressed passes,
  decompression).

SciPy is imported when one of them is first called (``scipy_door.py``).
"""

from .pattern import hessian_sparsity, jacobian_sparsity
from .evaluate import sparse_hessian, sparse_jacobian

__all__ = ["jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian"]
