"""What the linear-algebra rules (``solves``, ``determinants``, ``decompositions``,
``matrix_functions``) share: transposes and diagonals on the last two axes, identities
of the operand's dtype, the shape checks behind their error messages, and the packing of
several results (eigh's, svd's, qr's) into one array, so that each is a single
primitive with one result.
"""

from .. import arrays as xp
from ..primitive import ndim_of, raw, shape_of
from ..arrays import as_array
from .complexes import conj
from .reductions import sum
from .joining import concatenate
from .shapes import broadcast_to, expand_dims, reshape, swapaxes

__all__ = ["mT", "mH", "conjugated", "hermitian_part", "symmetrised", "eye_like", "diagonal_of", "diag_embed", "column",
           "check_square", "check_matrix", "pack_raw", "pack", "unpack", "zero_gradient"]


def mT(x):
    """Each matrix transposed (the last two axes swapped), as PyTorch's x.mT."""
    return swapaxes(x, -1, -2)


def symmetrised(x):
    """(x + x^T) / 2 for each matrix; (x + x^H) / 2, Hermitian, for a complex x."""
    return 0.5 * (x + mH(x))


def mH(x):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return conj(mT(x)) if xp.result_type(raw(x)).kind == "c" else mT(x)


def conjugated(x):
    """conj(x) for a complex x, x itself for a real one."""
    return conj(x) if xp.result_type(raw(x)).kind == "c" else x


def hermitian_part(a):
    """(a + a^H) / 2 on raw arrays: what eigh and cholesky read, as JAX's."""
    a = as_array(a)
    at = xp.swapaxes(a, -1, -2)
    return 0.5 * (a + (xp.conj(at) if a.dtype.kind == "c" else at))


def eye_like(n, like, k=0, m=None):
    """An identity (or np.eye(n, m, k)) of like's dtype: float32 stays float32."""
    return xp.eye(n, m, k, dtype=xp.result_type(raw(like)))


def diagonal_of(x):
    """The diagonal of each square matrix (last two axes), as a vector."""
    return sum(x * eye_like(shape_of(x)[-1], x), axis=-1)


def diag_embed(v):
    """Each vector (last axis) as a diagonal matrix."""
    return expand_dims(v, -1) * eye_like(shape_of(v)[-1], v)


def column(b):
    """A vector right-hand side as a one-column matrix (solve's rules use matrices)."""
    return expand_dims(b, -1)


def check_square(name, a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{name}: a matrix of shape {shape}; expected square matrices "
                         f"of shape (..., n, n)")


def check_matrix(name, a):
    if ndim_of(a) < 2:
        raise ValueError(f"{name}: an array of shape {shape_of(a)}; expected matrices of "
                         f"shape (..., m, n)")


def pack_raw(parts, cores):
    """Arrays with trailing shapes ``cores`` side by side along one last axis."""
    return xp.concat([xp.reshape(p, xp.shape(p)[:xp.ndim(p) - len(c)] + (-1,))
                           for p, c in zip(parts, cores)], axis=-1)


def pack(parts, cores):
    """The same with the table's operations (for tangents: leading axes stay in front)."""
    return concatenate([reshape(p, shape_of(p)[:ndim_of(p) - len(c)] + (-1,))
                        for p, c in zip(parts, cores)], axis=-1)


def unpack(packed, cores):
    """The pieces of a packed array (or gradient), each with its trailing shape."""
    pieces, start = [], 0
    for core in cores:
        size = int(xp.prod(core))
        piece = packed[..., start:start + size]
        pieces.append(reshape(piece, shape_of(piece)[:-1] + tuple(core)))
        start += size
    return pieces


def zero_gradient(g, a):
    """The gradient of a result with derivative 0 (a sign), for each matrix of a."""
    return broadcast_to(expand_dims(expand_dims(g, -1), -1) * 0.0,
                        shape_of(g) + shape_of(a)[-2:])
