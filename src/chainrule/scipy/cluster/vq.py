"""``scipy.cluster.vq.vq``: each observation's nearest code and its distance, as
``jax.scipy.cluster.vq.vq``; the distance is differentiable in the observations and the
code book.

    >>> from chainrule.scipy.cluster.vq import vq
    >>> codes, dist = vq(np.array([[1.1, 2.1], [5.9, 4.8]]),
    ...                  np.array([[1.0, 2.0], [4.0, 5.0]]))
    >>> codes.tolist(), np.round(dist, 4).tolist()
    ([0, 1], [0.1414, 1.9105])
"""

from typing import Any

import numpy as np

from ... import rules as ops
from ...primitive import shape_of
from ...rules.predicates import argmin

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """``(code, dist)``: for each row of ``obs`` (M, N), the index of the nearest row of
    ``code_book`` (K, N) by Euclidean distance (the first of a tie, int32 as SciPy's), and
    that distance. 1-d arrays are M and K observations of one feature. ``check_finite``
    is accepted for SciPy's signature; non-finite numbers give non-finite distances.

    >>> from chainrule.scipy.cluster.vq import vq
    >>> vq(np.array([1.0, 5.0]), np.array([0.0, 4.0]))[0].tolist()
    [0, 1]
    """
    del check_finite
    rank, book_rank = len(shape_of(obs)), len(shape_of(code_book))
    if rank != book_rank:
        raise ValueError(f"vq: obs (shape {shape_of(obs)}) and code_book (shape "
                         f"{shape_of(code_book)}) should have the same rank")
    if rank == 1:
        obs, code_book = ops.expand_dims(obs, -1), ops.expand_dims(code_book, -1)
    elif rank != 2:
        raise ValueError(f"vq: expected 1-d or 2-d observations, got shape {shape_of(obs)}")
    if shape_of(obs)[1] != shape_of(code_book)[1]:
        raise ValueError(f"vq: obs has {shape_of(obs)[1]} features and code_book "
                         f"{shape_of(code_book)[1]}; they must have the same number")
    difference = ops.expand_dims(obs, 1) - ops.expand_dims(code_book, 0)     # (M, K, N)
    distance = ops.sqrt(ops.sum(difference * difference, axis=-1))           # (M, K)
    code = ops.astype(argmin(ops.stop_gradient(distance), axis=-1), np.int32)
    nearest = ops.take_along_axis(distance, ops.expand_dims(code, -1), axis=-1)
    return code, ops.squeeze(nearest, axis=-1)
