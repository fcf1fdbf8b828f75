"""``jax.nn.dot_product_attention``: softmax(Q Kᵀ scale + bias) V for each head, with
JAX's layout (batch, sequence, heads, head size), its masks (a boolean ``mask``,
``is_causal``, ``local_window_size``, the padded lengths ``query_seq_lengths`` and
``key_value_seq_lengths``) and grouped-query attention (fewer key/value heads than
query heads, each shared by a group).

A masked logit is set to JAX's large negative number (-0.7 times float32's largest), so
a row with every logit masked gets even weights, as in JAX, rather than NaN. JAX takes the
softmax in float32 whatever the inputs; chainrule keeps float64 inputs in float64 (its
numbers are JAX's to float32's precision, and more accurate). Written with chainrule's
operations: every derivative, vmap and cr.jit follow.
"""

import numpy as np

from ... import rules as ops
from ...api import numpy as cnp
from ...primitive import raw, shape_of

__all__ = ["dot_product_attention"]

_LARGE_NEGATIVE = -0.7 * float(np.finfo(np.float32).max)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention (``jax.nn.dot_product_attention``): ``query`` of
    shape (B, T, N, H) or (T, N, H), ``key`` and ``value`` (B, S, K, H) with N a
    multiple of K; the result has the query's shape. ``return_residual=True`` also gives
    the logsumexp of each row's logits, (B, T, N), as a constant.

    >>> import chainrule.jax_nn as jnn
    >>> q = np.ones((1, 2, 1, 4))
    >>> jnn.dot_product_attention(q, q, np.arange(8.0).reshape(1, 2, 1, 4),
    ...                           is_causal=True)[0, :, 0].tolist()
    [[0.0, 1.0, 2.0, 3.0], [2.0, 3.0, 4.0, 5.0]]
    """
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation {implementation!r} is a "
                         f"GPU kernel; chainrule computes as implementation='xla' does")
    output_shape = shape_of(query)
    query, key, value = (_four_axes(t) for t in (query, key, value))
    B, S, K, H = shape_of(key)
    _, T, N, _ = shape_of(query)
    if shape_of(value) != (B, S, K, H):
        raise ValueError(f"dot_product_attention: value should have key's shape "
                         f"{(B, S, K, H)}, got {shape_of(value)}")
    if shape_of(query)[0] != B or shape_of(query)[3] != H:
        raise ValueError(f"dot_product_attention: query should have shape (B={B}, T, N, "
                         f"H={H}), got {shape_of(query)}")
    if N % K:
        raise ValueError(f"dot_product_attention: the number of query heads must be a "
                         f"multiple of key/value heads, but got {N} vs {K}")
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    logits = cnp.einsum("BTKGH,BSKH->BKGTS", ops.reshape(query, (B, T, K, G, H)), key)
    logits = logits * scale
    if bias is not None:
        bias = ops.broadcast_to(_four_axes(bias), (B, N, T, S))
        logits = logits + ops.reshape(bias, (B, K, G, T, S))
    keep = _kept(B, N, T, S, mask, is_causal, local_window_size, query_seq_lengths,
                 key_value_seq_lengths)
    if keep is not None:
        logits = cnp.where(keep.reshape(B, K, G, T, S), logits, _LARGE_NEGATIVE)
    probs = ops.softmax(logits, axis=-1)
    encoded = ops.reshape(cnp.einsum("BKGTS,BSKH->BTKGH", probs, value), (B, T, N, H))
    if query_seq_lengths is not None:  # padded queries' rows are zeros, as JAX's
        rows = np.arange(T)[None, :] < np.asarray(query_seq_lengths)[:, None]
        encoded = encoded * rows[:, :, None, None].astype(raw(encoded).dtype)
    encoded = ops.reshape(encoded, output_shape)
    if not return_residual:
        return encoded
    residual = ops.stop_gradient(ops.logsumexp(logits, axis=-1))  # B K G T
    residual = ops.transpose(ops.reshape(residual, (B, N, T)), (0, 2, 1))
    return encoded, ops.reshape(residual, output_shape[:-1])


def _four_axes(t):
    """t with axes of length 1 in front up to four, as JAX's unbatched forms take."""
    while len(shape_of(t)) < 4:
        t = ops.expand_dims(t, 0)
    return t


def _kept(B, N, T, S, mask, is_causal, window, q_lengths, kv_lengths):
    """Which logits the masks keep, (B, N, T, S) booleans; None when none is given."""
    if mask is None and not is_causal and window is None and q_lengths is None \
            and kv_lengths is None:
        return None
    keep = np.ones((B, N, T, S), bool)
    if mask is not None:
        mask = np.asarray(raw(mask))
        if mask.dtype != bool:
            raise ValueError(f"dot_product_attention: mask dtype should be bool, got "
                             f"{mask.dtype}")
        keep &= np.broadcast_to(mask.reshape((1,) * (4 - mask.ndim) + mask.shape),
                                keep.shape)
    queries, keys = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        keep &= keys <= queries
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        keep &= (queries <= keys + left) & (queries >= keys - right)
    if q_lengths is not None:
        keep &= (np.arange(T)[None, :, None] < np.asarray(q_lengths)[:, None, None])[:, None]
    if kv_lengths is not None:
        keep &= (np.arange(S)[None, None, :] < np.asarray(kv_lengths)[:, None, None])[:, None]
    return keep
