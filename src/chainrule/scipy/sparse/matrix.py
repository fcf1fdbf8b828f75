"""A sparse matrix in coordinate form whose entries may be differentiated, and its
product with a vector or a matrix, a primitive:

    y = A x:   dy = dA x + A dx,   x_bar = A^T g,   data_bar[k] = g[row[k]] x[col[k]].
"""

import numpy as np
import scipy.sparse as _sp

from ... import arrays as xp, rules as ops
from ...primitive import Primitive, raw, shape_of

__all__ = ["SparseMatrix", "coo_array", "csr_array"]


class SparseMatrix:
    """A sparse matrix in coordinate form: entry k is ``data[k]`` at ``(row[k], col[k])``
    (repeated coordinates add up, as in SciPy). ``data`` may be differentiated.

    >>> A = SparseMatrix(np.array([1.0, 2.0, 3.0]), [0, 1, 1], [0, 0, 1], (2, 2))
    >>> A.toarray().tolist(), A.nnz, A.T.shape
    ([[1.0, 0.0], [2.0, 3.0]], 3, (2, 2))
    >>> (A @ np.array([1.0, 1.0])).tolist(), A.dot(np.array([1.0, 0.0])).tolist()
    ([1.0, 5.0], [1.0, 2.0])
    >>> A.to_scipy().toarray().tolist()
    [[1.0, 0.0], [2.0, 3.0]]
    """

    def __init__(self, data, row, col, shape):
        self.data = data
        self.row = np.asarray(row, dtype=np.intp)
        self.col = np.asarray(col, dtype=np.intp)
        self.shape = (int(shape[0]), int(shape[1]))
        if shape_of(data) != self.row.shape or self.row.shape != self.col.shape or \
                self.row.ndim != 1:
            raise ValueError(f"coo_array: expected data, row and col of one shape (k,), "
                             f"got {shape_of(data)}, {self.row.shape} and {self.col.shape}")
        for name, index, size in (("row", self.row, self.shape[0]),
                                  ("col", self.col, self.shape[1])):
            if index.size and (index.min() < 0 or index.max() >= size):
                raise ValueError(f"coo_array: {name} indices must lie in [0, {size}) for "
                                 f"shape {self.shape}, got {index.min()}..{index.max()}")

    def __repr__(self):
        return (f"<chainrule sparse matrix {self.shape[0]}x{self.shape[1]}, "
                f"{self.row.size} stored entries>")

    @property
    def nnz(self) -> int:
        """The number of stored entries."""
        return int(self.row.size)

    @property
    def T(self) -> "SparseMatrix":
        """The transpose: the same entries with rows and columns exchanged."""
        return SparseMatrix(self.data, self.col, self.row, self.shape[::-1])

    def __matmul__(self, x):
        if shape_of(x)[:1] != (self.shape[1],) or len(shape_of(x)) > 2:
            raise ValueError(f"matmul: a sparse matrix of shape {self.shape} times an "
                             f"operand of shape {shape_of(x)}: expected ({self.shape[1]},) "
                             f"or ({self.shape[1]}, k)")
        return matvec(self.data, x, row=self.row, col=self.col, rows=self.shape[0])

    def dot(self, x):
        """``A @ x``."""
        return self @ x

    def toarray(self):
        """The dense matrix, differentiable in the entries."""
        return self @ np.eye(self.shape[1], dtype=np.result_type(raw(self.data)))

    def to_scipy(self) -> "_sp.csr_array":
        """The matrix as a SciPy CSR array of its current numbers (no derivatives)."""
        return _sp.coo_array((np.asarray(raw(self.data)), (self.row, self.col)),
                             shape=self.shape).tocsr()


def coo_array(arg1, shape=None) -> SparseMatrix:
    """A sparse matrix from ``(data, (row, col))`` (SciPy's coordinate form), or from a
    SciPy sparse array or matrix (a constant), with ``data`` differentiable.

    >>> import chainrule.scipy.sparse as sp
    >>> w = cr.tensor([2.0, 3.0], requires_grad=True)
    >>> A = sp.coo_array((w, ([0, 1], [1, 0])), shape=(2, 2))
    >>> (A @ np.array([1.0, 10.0])).tolist()
    [20.0, 3.0]
    """
    if _sp.issparse(arg1):
        coo = _sp.coo_array(arg1)
        return SparseMatrix(coo.data, coo.row, coo.col, coo.shape)
    if isinstance(arg1, SparseMatrix):
        return arg1
    try:
        data, (row, col) = arg1
    except (TypeError, ValueError):
        raise TypeError("coo_array: expected (data, (row, col)) or a SciPy sparse array, "
                        f"got {type(arg1).__name__}") from None
    row, col = np.asarray(row, dtype=np.intp), np.asarray(col, dtype=np.intp)
    if shape is None:
        shape = (int(row.max()) + 1 if row.size else 0, int(col.max()) + 1 if col.size else 0)
    return SparseMatrix(data, row, col, shape)


def csr_array(arg1, shape=None) -> SparseMatrix:
    """A sparse matrix from ``(data, indices, indptr)`` (SciPy's compressed rows), or
    from a SciPy sparse array, with ``data`` differentiable.

    >>> import chainrule.scipy.sparse as sp
    >>> A = sp.csr_array((np.array([4.0, 1.0, 1.0, 4.0]), [0, 1, 0, 1], [0, 2, 4]))
    >>> A.toarray().tolist()
    [[4.0, 1.0], [1.0, 4.0]]
    """
    if _sp.issparse(arg1) or isinstance(arg1, SparseMatrix):
        return coo_array(arg1)
    try:
        data, indices, indptr = arg1
    except (TypeError, ValueError):
        raise TypeError("csr_array: expected (data, indices, indptr) or a SciPy sparse "
                        f"array, got {type(arg1).__name__}") from None
    indices, indptr = np.asarray(indices, dtype=np.intp), np.asarray(indptr, dtype=np.intp)
    row = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if shape is None:
        shape = (len(indptr) - 1, int(indices.max()) + 1 if indices.size else 0)
    return SparseMatrix(data, row, indices, shape)


def as_sparse(A, name) -> SparseMatrix:
    """A sparse matrix of chainrule's from what a solver was given, or a TypeError."""
    if isinstance(A, SparseMatrix):
        return A
    if _sp.issparse(A):
        return coo_array(A)
    raise TypeError(f"{name}: expected A as a sparse matrix (chainrule.scipy.sparse."
                    f"coo_array / csr_array, or SciPy's), got {type(A).__name__}")


# ---------------------------------------------------------------------------------------
# The product, a primitive
# ---------------------------------------------------------------------------------------

def _matvec_forward(data, x, row, col, rows):
    def product(data, x):
        matrix = _sp.coo_array((data, (row, col)), shape=(rows, x.shape[0])).tocsr()
        return np.asarray(matrix @ x)
    return xp.call(product, data, x)


matvec = Primitive(_matvec_forward, "sparse_matvec")


def _vjp_data(g, y, data, x, row, col, rows):
    picked = g[row] * x[col]
    return picked if len(shape_of(x)) == 1 else ops.sum(picked, axis=1)


def _vjp_x(g, y, data, x, row, col, rows):
    return matvec(data, g, row=col, col=row, rows=shape_of(x)[0])


def _jvp_data(t, y, data, x, row, col, rows):
    return matvec(t, x, row=row, col=col, rows=rows)


def _jvp_x(t, y, data, x, row, col, rows):
    return matvec(data, t, row=row, col=col, rows=rows)


matvec.defvjp(_vjp_data, _vjp_x)
matvec.defjvp(_jvp_data, _jvp_x)

