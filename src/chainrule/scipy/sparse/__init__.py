"""Sparse matrices whose entries are differentiable, for ``chainrule.scipy.sparse.linalg``.

SciPy's sparse arrays hold plain numbers, so a matrix whose entries are parameters (a
stiffness matrix of material constants, a graph Laplacian of edge weights) cannot be one.
``coo_array`` and ``csr_array`` take SciPy's arguments with ``data`` any array chainrule
differentiates (a Tensor, a traced value): the pattern (rows and columns) is fixed, the
entries carry derivatives. A SciPy sparse array is taken as it is, as a constant.

``A @ x`` (``A.T @ x`` in place of x A; ``A.toarray()``) is differentiable in the
entries and in x, to any order (``matrix.py``). The solvers are in ``.linalg``.

    >>> import chainrule.scipy.sparse as sp
    >>> laplacian = lambda w: sp.coo_array((cr.concatenate([w, w, -w, -w]),
    ...                                     ([0, 1, 0, 1], [0, 1, 1, 0])), shape=(2, 2))
    >>> x = np.array([1.0, -1.0])
    >>> energy = lambda w: x @ (laplacian(w) @ x)         # w (x0 - x1)**2
    >>> float(energy(np.array([3.0]))), cr.grad(energy)(np.array([3.0])).tolist()
    (12.0, [4.0])
"""

from . import linalg
from .matrix import SparseMatrix, coo_array, csr_array

__all__ = ["SparseMatrix", "coo_array", "csr_array", "linalg"]
