"""Linear algebra: the matrix product and what is built from it (dot, outer).
(Solves are in ``solves``, determinants in ``determinants``, decompositions in
``decompositions``, einsum in ``contractions``.)

matmul's rules are the two halves of the product rule for a @ b: g @ b^T for a, a^T @ g
for b. 1-D operands are promoted to matrices as np.matmul does, and the extra axis is
dropped again; every rule keeps a batch of cotangents or tangents in front.
"""

import builtins
import math
from typing import Any

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import Primitive, ndim_of, shape_of
from .common import Result, tangent_lead
from .contractions import tensordot
from .elementwise import multiply
from .shapes import expand_dims, reshape, squeeze, swapaxes

__all__ = ["matmul", "dot", "outer"]
METHODS = ["dot", "outer", "matmul"]  # also methods of Tensor


def matmul_vjp_a(g, a, b):
    """d/da (a @ b) applied to g: g @ b^T. A 1-D operand is promoted to a matrix, as
    np.matmul does (b to a column, a to a row), and the extra axis dropped again."""
    if ndim_of(a) == 1 and ndim_of(b) == 2:  # vector @ matrix: b g for each row g, all at once
        return matmul(g, swapaxes(b, -1, -2))
    if ndim_of(b) == 1 and ndim_of(a) >= 2:  # matrix @ vector: the outer product g b^T
        return multiply(expand_dims(g, -1), b)
    if ndim_of(b) == 1:
        g, b = expand_dims(g, -1), reshape(b, (1, -1))
    else:
        b = swapaxes(b, -1, -2)
    if ndim_of(a) == 1:
        return squeeze(matmul(expand_dims(g, -2), b), -2)
    return matmul(g, b)


def matmul_vjp_b(g, a, b):
    """d/db (a @ b) applied to g: a^T @ g, with 1-D operands promoted likewise."""
    if ndim_of(a) == 2 and ndim_of(b) == 1:  # matrix @ vector: a^T g for each row g, as g @ a
        return matmul(g, a)
    if ndim_of(a) == 1 and ndim_of(b) >= 2:  # vector @ matrix: the outer product a g^T
        return multiply(expand_dims(a, -1), expand_dims(g, -2))
    if ndim_of(b) == 1:
        g = expand_dims(g, -1)
    if ndim_of(a) == 1:
        g, a = expand_dims(g, -2), reshape(a, (-1, 1))
    else:
        a = swapaxes(a, -1, -2)
    out = matmul(a, g)
    return squeeze(out, -1) if ndim_of(b) == 1 else out


def _pad(t, batch, core, ndim):
    """Reshape a tangent to batch + (1, ...) + core, with ``ndim`` axes after the batch."""
    return reshape(t, batch + (1,) * (ndim - len(core)) + core)


def matmul_jvp_a(t, a, b):
    """t @ b, with a batched tangent: a 1-D a is promoted to a row explicitly (as
    np.matmul does inside) and padded, so that the batch axes of t stay in front."""
    if ndim_of(a) == 1 and ndim_of(b) == 2:  # vector @ matrix: every row of t times b at once
        return matmul(t, b)
    batch = tangent_lead(t, a)
    core = (1,) + shape_of(a) if ndim_of(a) == 1 else shape_of(a)
    t = _pad(t, batch, core, builtins.max(len(core), ndim_of(b), 2))
    out = matmul(t, b)
    if ndim_of(a) == 1:
        out = squeeze(out, -1 if ndim_of(b) == 1 else -2)
    return out


def matmul_jvp_b(t, a, b):
    """a @ t, likewise: a 1-D b is promoted to a column."""
    if ndim_of(a) == 2 and ndim_of(b) == 1:  # matrix @ vector: a t for each row t, as t @ a^T
        return matmul(t, swapaxes(a, -1, -2))
    batch = tangent_lead(t, b)
    core = shape_of(b) + (1,) if ndim_of(b) == 1 else shape_of(b)
    t = _pad(t, batch, core, builtins.max(len(core), ndim_of(a), 2))
    out = matmul(a, t)
    return squeeze(out, -1) if ndim_of(b) == 1 else out


def _stacked_matmul(a, b):
    """np.matmul, faster for a stack of matrices times one matrix: that is one product of
    a taller matrix, where NumPy would loop over the stack, one small product each."""
    if getattr(a, "ndim", 0) > 2 and getattr(b, "ndim", 0) == 2:
        rows = xp.reshape(a, (math.prod(a.shape[:-1]), a.shape[-1]))  # (-1: not if empty)
        return xp.reshape(xp.matmul(rows, b), a.shape[:-1] + (b.shape[-1],))
    return xp.matmul(a, b)


matmul = Primitive(_stacked_matmul, "matmul", batched=True, doc="""\
The matrix product a @ b, as np.matmul: 1-D, 2-D and batches of matrices.

    Shapes (n, k) @ (k, m) -> (n, m); a 1-D operand is a row (on the left) or a column
    (on the right), and its axis is dropped from the result; leading axes are batches,
    broadcast. The gradients are g @ b.T and a.T @ g.

    >>> a = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)   # (2, 2)
    >>> b = cr.tensor([1.0, 1.0], requires_grad=True)                  # (2,)
    >>> y = cr.matmul(a, b)                         # the same as a @ b, shape (2,)
    >>> y.data.tolist()
    [3.0, 7.0]
    >>> y.sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()            # g b^T and a^T g, g = [1, 1]
    ([[1.0, 1.0], [1.0, 1.0]], [4.0, 6.0])
    """)


def _matmul_mismatch(name, a, b):
    """matmul's message for operands that do not fit, naming both shapes (None if they
    do): the axes it sums over differ, or the batch axes do not broadcast."""
    a_shape, b_shape = shape_of(a), shape_of(b)
    start = f"{name}: shapes {a_shape} and {b_shape} cannot be multiplied"
    if not a_shape or not b_shape:
        return f"{start}: a 0-d operand has no axis to sum over (use * to scale)"
    inner = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if a_shape[-1] != inner:
        return f"{start} ({a_shape[-1]} != {inner})"
    a_batch, b_batch = a_shape[:-2], b_shape[:-2]
    try:
        xp.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        return f"{start}: the batch axes {a_batch} and {b_batch} do not broadcast"
    return None


matmul.mismatch = _matmul_mismatch
matmul.defvjp(lambda g, ans, a, b: matmul_vjp_a(g, a, b),
              lambda g, ans, a, b: matmul_vjp_b(g, a, b),
              text=("{g} @ {1}.T", "{0}.T @ {g}"))
matmul.defjvp(lambda t, ans, a, b: matmul_jvp_a(t, a, b),
              lambda t, ans, a, b: matmul_jvp_b(t, a, b))


def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None) -> Result:
    """The dot product of two vectors, or a matrix-vector or matrix-matrix product.

    NumPy's rule for any operands: a 0-d operand multiplies; otherwise the sum over
    the last axis of a and the second-to-last of b (its only axis if 1-D), so the
    result has a's other axes, then b's (unlike ``matmul``, which broadcasts batches).
    ``precision=`` (XLA's, for jax.numpy code) is accepted: a CPU has one precision.

    >>> a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> b = cr.tensor([4.0, 5.0, 6.0], requires_grad=True)
    >>> y = cr.dot(a, b)                      # or a.dot(b): 4 + 10 + 18
    >>> y.item()
    32.0
    >>> y.backward()
    >>> a.grad.tolist(), b.grad.tolist()      # each gradient is the other vector
    ([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    """
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return multiply(a, b)
    along = 0 if ndim_of(b) == 1 else -2
    if shape_of(a)[-1] != shape_of(b)[along]:
        axis = "only" if along == 0 else "second-to-last"
        raise ValueError(f"dot: shapes {shape_of(a)} and {shape_of(b)} cannot be "
                         f"multiplied ({shape_of(a)[-1]} != {shape_of(b)[along]}: the last "
                         f"axis of a against the {axis} axis of b)")
    if ndim_of(a) > 2 or ndim_of(b) > 2:
        return tensordot(a, b, axes=([-1], [along]))
    return matmul(a, b)


def outer(a: ArrayLike, b: ArrayLike) -> Result:
    """The outer product: ``out[i, j] = a[i] * b[j]``, of shape (a.size, b.size).

    Operands with more axes are flattened first, as np.outer does.

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor([3.0, 4.0, 5.0], requires_grad=True)
    >>> y = cr.outer(a, b)                    # shape (2, 3)
    >>> y.data.tolist()
    [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    >>> y.sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()      # sum(b) for each a[i], sum(a) for each b[j]
    ([12.0, 12.0], [3.0, 3.0, 3.0])
    """
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))
