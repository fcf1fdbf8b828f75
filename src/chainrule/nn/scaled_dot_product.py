"""``scaled_dot_product_attention``, torch's ``F.scaled_dot_product_attention``, given
as ``nn.functional.scaled_dot_product_attention``, and the masks it shares with
``MultiheadAttention`` (attention.py).

A module of its own so that functional.py can give it without importing attention.py,
whose layers import functional.py.
"""

import math

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..api.torch_random import default_generator
from ..primitive import raw, shape_of
from ..rules.common import Result, float_dtype

__all__ = ["scaled_dot_product_attention", "additive_mask"]

# what rng= takes: None (the default generator), an int seed or a NumPy Generator
RNG = int | np.random.Generator | None


def additive_mask(mask, dtype, true_means_masked):
    """A mask to add to the scores: a float mask as it is, a bool one as 0 where a key
    takes part and -inf where it does not (torch's two conventions: True masks a key
    out in MultiheadAttention, True lets it in for scaled_dot_product_attention)."""
    array = raw(mask)
    if np.asarray(array).dtype == bool:
        masked = array if true_means_masked else ~np.asarray(array)
        return np.where(masked, -np.inf, 0.0).astype(dtype)
    return mask


def scaled_dot_product_attention(query: ArrayLike, key: ArrayLike, value: ArrayLike,
                                 attn_mask: ArrayLike | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False, *, rng: RNG = None) -> Result:
    """torch's ``F.scaled_dot_product_attention``: each query's average of the values,
    weighted by the softmax of its scaled dot products with the keys.

    The equation::

        softmax(query @ key^T * scale + mask) @ value

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev); ``scale`` is
    1 / sqrt(E) unless given. ``attn_mask`` broadcasts to (..., L, S): a bool mask is
    True where a query may look at a key, a float one is added to the scores.
    ``is_causal=True`` lets query i see keys 0..i only (a mask of its own: not with
    ``attn_mask``, as in torch). ``dropout_p > 0`` drops attention weights at random
    (drawn from ``rng``, by default the default generator), in training or not, as
    torch's function does. ``enable_gqa`` lets key and value have fewer heads (axis
    -3) than query, each shared by a group of query heads, as torch's.

    >>> F = cr.nn.functional
    >>> q = k = cr.zeros(2, 2)
    >>> v = cr.tensor([[1.0], [3.0]])
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()   # row 0 sees key 0
    [[1.0], [2.0]]
    """
    q_shape, k_shape, v_shape = shape_of(query), shape_of(key), shape_of(value)
    if len(q_shape) < 2 or len(k_shape) < 2 or len(v_shape) < 2 or q_shape[-1] != k_shape[-1] \
            or k_shape[-2] != v_shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: query {q_shape}, key {k_shape}, value "
                         f"{v_shape}; expected (..., L, E), (..., S, E) and (..., S, Ev)")
    if not 0 <= dropout_p < 1:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got "
                         f"{dropout_p!r}")
    if enable_gqa and len(q_shape) >= 3 and q_shape[-3] != k_shape[-3]:
        if q_shape[-3] % k_shape[-3] or k_shape[-3] != v_shape[-3]:
            raise ValueError(f"scaled_dot_product_attention: enable_gqa with query "
                             f"{q_shape}, key {k_shape}, value {v_shape}; expected key and "
                             f"value to have the same number of heads (axis -3), dividing "
                             f"the query's")
        group = q_shape[-3] // k_shape[-3]
        key, value = ops.repeat(key, group, axis=-3), ops.repeat(value, group, axis=-3)
    L, S = q_shape[-2], k_shape[-2]
    scale = 1 / math.sqrt(q_shape[-1]) if scale is None else scale
    scores = ops.matmul(query, ops.swapaxes(key, -1, -2)) * scale
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: is_causal=True makes its own "
                             "mask; pass attn_mask or is_causal, not both")
        attn_mask = np.tril(np.ones((L, S), dtype=bool))
    if attn_mask is not None:
        scores = scores + additive_mask(attn_mask, float_dtype(scores), true_means_masked=False)
    weights = ops.softmax(scores, axis=-1)
    if dropout_p > 0:
        generator = default_generator if rng is None else np.random.default_rng(rng)
        keep = xp.draw(generator.random, shape_of(weights)) >= dropout_p
        weights = weights * (keep / (1 - dropout_p)).astype(float_dtype(weights))
    return ops.matmul(weights, value)
