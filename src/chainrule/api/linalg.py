"""``cr.linalg``: numpy.linalg's names for chainrule's differentiable linear algebra.

>>> K = cr.tensor([[4.0, 2.0], [2.0, 5.0]], requires_grad=True)
>>> L = cr.linalg.cholesky(K)                 # as np.linalg.cholesky(K)
>>> x = cr.linalg.solve(K, cr.tensor([2.0, 1.0]))
>>> (cr.sum(x) + 2 * cr.sum(cr.log(cr.linalg.eigvalsh(K)))).backward()
>>> K.grad.shape
(2, 2)

The same functions are ``cr.NAME`` too (``cr.inv``, ``cr.det``, ...), except ``norm``
(``cr.linalg.norm`` has np.linalg.norm's signature, ``ord``, ``axis``, ``keepdims``,
while ``cr.norm`` is the 2-norm alone) and NumPy 2's ``vector_norm``, ``matrix_norm``
and ``multi_dot``, which are here only. ``trace`` is np.trace (axis1=0, axis2=1).
"""

from ..rules import (cholesky, cross, det, eig, eigh, eigvals, eigvalsh, inv, lstsq,
                    matmul, matrix_power, outer, pinv, qr, slogdet, solve, solve_triangular, svd,
                    svdvals, tensordot, trace, vdot)
from ..rules.matrix_functions import linalg_norm as norm
from ..rules.matrix_functions import matrix_norm, multi_dot, vector_norm

__all__ = ["cholesky", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm", "outer", "pinv", "qr",
           "slogdet", "solve", "solve_triangular", "svd", "svdvals", "tensordot", "trace",
           "vdot", "vector_norm"]
