"""Sparse matrices whose entries are differentiable, for ``chainrule.scipy.sparse.linalg``.

SciPy's sparse arrays hold plain numbers, so a matrix whose entries are parameters (a
stiffness matrix of material constants, a graph Laplacian of edge weights) cannot be one.
``coo_array`` and ``csr_array`` take SciPy's arguments with ``data`` any array chainrule
differentiates (a Tensor, a traced value): the pattern (rows and columns) is fixed, the
entries carry derivatives. A SciPy sparse array is taken as it is, as a constant.

``A @ x`` (``A.T @ x`` in place of x A; ``A.toarray()``) is differentiable in the
entries and in x, to any order (``matrix.py``). The solvers are in ``.linalg``.
"""

from . import linalg
from .matrix import SparseMatrix, coo_array, csr_array

__all__ = ["SparseMatrix", "coo_array", "csr_array", "linalg"]
