"""Speed override for attention: ``attention(q, k, v, mask, scale=)``, the core of
``nn.MultiheadAttention`` and ``F.scaled_dot_product_attention``,
``softmax((q * scale) @ k^T + mask) @ v``, as one operation instead of six (a scaling,
a transpose, two products, an add and the softmax), as torch's fused
scaled_dot_product_attention is one.

The pattern is ``rules/fused.py``'s (``Fused``): the forward keeps the attention
weights p it computed, and an ordinary backward pass gets every gradient from them in
one call. The plain rules below, written with the table's operations, are the same
formulas: they serve ``create_graph`` (derivatives of any order), batches of
cotangents and tangents (jacrev, jacfwd), forward mode, cr.jit and cr.vmap. Both are
tested equal to the plain composition (``tests/test_fused.py``); ``CHAINRULE_FAST=0``
turns the override off as it does fused.py's.

With s = (q * scale) @ k^T + mask, p = softmax(s) and out = p @ v, the gradients::

    dv = p^T @ g        dp = g @ v^T        ds = p * (dp - sum(dp * p, last axis))
    dq = (ds @ k) * scale        dk = ds^T @ (q * scale)        dmask = ds
"""

from .. import arrays as xp
from ..primitive import LEADING_AXES, ndim_of, shape_of
from .common import tangent_lead
from .fused import Fused
from .linalg import _stacked_matmul, matmul
from .reductions import softmax, sum
from .indexing import getitem
from .joining import stack
from .shapes import reshape, swapaxes

__all__ = ["attention", "self_attention"]


def _mT(a):
    return swapaxes(a, -1, -2)


def _weights_of(q, k, mask, scale):
    """(q * scale, p): the scaled queries and the attention weights, with the array
    namespace (the forward's own computation)."""
    scaled = q * scale
    scores = _stacked_matmul(scaled, xp.swapaxes(k, -1, -2))
    if mask is not None:
        scores = scores + mask
    return scaled, softmax.forward(scores, axis=-1)


def _attention(q, k, v, mask=None, *, scale):
    """``softmax((q * scale) @ k^T + mask) @ v``: q (..., L, D), k (..., S, D),
    v (..., S, Dv), mask an additive mask broadcasting to (..., L, S) (or None) ->
    (..., L, Dv). The leading axes are batches (heads), broadcast.

    >>> from chainrule.rules.fused_attention import attention
    >>> q = k = cr.zeros(2, 1)
    >>> v = cr.tensor([[1.0], [3.0]], requires_grad=True)
    >>> causal = np.array([[0.0, -np.inf], [0.0, 0.0]])   # row 0 sees key 0 only
    >>> out = attention(q, k, v, causal, scale=1.0)
    >>> out.tolist()
    [[1.0], [2.0]]
    >>> out.sum().backward()
    >>> v.grad.tolist()                               # 1 + 1/2 and 1/2
    [[1.5], [0.5]]
    """
    return _stacked_matmul(_weights_of(q, k, mask, scale)[1], v)


# ---------------------------------------------------------------------------------------
# The plain rules, with the table's operations
# ---------------------------------------------------------------------------------------

def _plain_weights(q, k, mask, scale):
    scaled = q * scale
    scores = matmul(scaled, _mT(k))
    return scaled, softmax(scores if mask is None else scores + mask, axis=-1)


def _score_gradient(g, q, k, v, mask, scale):
    """(q * scale, p, ds): the gradient of the scores given g (a batch's axes in front)."""
    scaled, p = _plain_weights(q, k, mask, scale)
    dp = matmul(g, _mT(v))
    return scaled, p, p * (dp - sum(dp * p, axis=-1, keepdims=True))


def _vjp(argnum):
    def rule(g, ans, q, k, v, mask=None, *, scale):
        if argnum == 2:
            return matmul(_mT(_plain_weights(q, k, mask, scale)[1]), g)
        scaled, p, ds = _score_gradient(g, q, k, v, mask, scale)
        if argnum == 0:
            return matmul(ds, k) * scale
        if argnum == 1:
            return matmul(_mT(ds), scaled)
        return ds
    return rule


def _jvp(argnum):
    def rule(t, ans, q, k, v, mask=None, *, scale):
        scaled, p = _plain_weights(q, k, mask, scale)
        if argnum == 2:
            return matmul(p, t)
        if argnum == 3:  # a batch's axes of the mask's tangent before the heads'
            t = reshape(t, tangent_lead(t, mask) + (1,) * (ndim_of(p) - ndim_of(mask))
                        + shape_of(mask))
        ds = (matmul(t * scale, _mT(k)) if argnum == 0 else
              matmul(scaled, _mT(t)) if argnum == 1 else t)
        dp = p * (ds - sum(ds * p, axis=-1, keepdims=True))
        return matmul(dp, v)
    return rule


# ---------------------------------------------------------------------------------------
# The fast pullback: the kept weights, every gradient in one call
# ---------------------------------------------------------------------------------------

def _pullback(g, ans, q, k, v, *rest, scale):
    """The formulas above on the weights the forward kept, on NumPy arrays (any other
    case, or a batch of cotangents, takes the plain rules). ``rest`` is (mask, needs,
    residual), or (needs, residual) without a mask."""
    *mask, needs, residual = rest
    mask = mask[0] if mask else None
    arrays = (g, q, k, v) + (() if mask is None else (mask,))
    if residual is None or g.shape != ans.shape or any(
            type(a) is not xp.ndarray for a in arrays):
        return tuple(_vjp(i)(g, ans, q, k, v, mask, scale=scale) if need else None
                     for i, need in enumerate(needs))
    scaled, p = residual
    dv = _stacked_matmul(xp.swapaxes(p, -1, -2), g) if needs[2] else None
    ds = xp.matmul(g, xp.swapaxes(v, -1, -2))      # dp, then ds in place
    ds -= xp.add.reduce(ds * p, axis=-1, keepdims=True)
    ds *= p
    dq = xp.matmul(ds, k) * scale if needs[0] else None
    dk = xp.matmul(xp.swapaxes(ds, -1, -2), scaled) if needs[1] else None
    return (dq, dk, dv, ds if needs[3] else None)[:len(needs)]


class _KeepingWeights(Fused):
    keeps_residual = True

    def forward_keeping(self, q, k, v, mask=None, *, scale):
        scaled, p = _weights_of(q, k, mask, scale)
        return _stacked_matmul(p, v), (scaled, p)


attention = _KeepingWeights(_attention, "attention", _pullback, batched=True,
                            batching=LEADING_AXES)
attention.defvjp(*[_vjp(i) for i in range(4)],
                 text=("(ds @ {1}) * scale", "ds^T @ ({0} * scale)", "p^T @ {g}", "ds"))
attention.defjvp(*[_jvp(i) for i in range(4)])


# ---------------------------------------------------------------------------------------
# self_attention: the same on the packed projection of MultiheadAttention's
# self-attention, qkv = x @ in_proj_weight^T + in_proj_bias (..., L, 3 E), split in heads
# and joined again inside the operation (no slicing, transposing or reshaping node, and
# one product for the three projections, as torch's in_proj)
# ---------------------------------------------------------------------------------------

def _heads(x, heads, parts):
    """(..., L, parts * E) -> ``parts`` arrays (..., heads, L, E / heads), with the
    table's operations (a batch's axes in front kept)."""
    shape = shape_of(x)
    size = shape[-1] // (parts * heads)
    x = reshape(x, shape[:-1] + (parts, heads, size))
    return [swapaxes(getitem(x, index=(Ellipsis, i, slice(None), slice(None))), -3, -2)
            for i in range(parts)]


def _joined(parts):
    """The inverse of ``_heads``: arrays (..., heads, L, D) -> (..., L, parts * heads * D)."""
    x = stack([swapaxes(p, -3, -2) for p in parts], axis=-3)      # (..., L, parts, H, D)
    shape = shape_of(x)
    return reshape(x, shape[:-3] + (shape[-3] * shape[-2] * shape[-1],))


def _self_attention(qkv, mask=None, *, heads, scale):
    """Multi-head self-attention on packed projections: qkv (..., L, 3 E), the queries,
    keys and values side by side, each ``heads`` heads of E / heads features ->
    (..., L, E), the heads' ``softmax((q * scale) @ k^T + mask) @ v`` side by side.
    ``mask`` is additive, broadcasting to (..., heads, L, L), or None.

    >>> from chainrule.rules.fused_attention import self_attention
    >>> qkv = cr.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 3.0]])   # 2 tokens, E = 1
    >>> self_attention(qkv, None, heads=1, scale=1.0).tolist()  # equal scores: the mean
    [[2.0], [2.0]]
    """
    shape = qkv.shape
    width = shape[-1] // 3
    x = xp.reshape(qkv, shape[:-1] + (3, heads, width // heads))
    q, k, v = (xp.swapaxes(x[..., i, :, :], -3, -2) for i in range(3))
    out = _stacked_matmul(_weights_of(q, k, mask, scale)[1], v)    # (..., H, L, D)
    out = xp.swapaxes(out, -3, -2)
    return xp.reshape(out, shape[:-1] + (width,))


def _self_vjp(argnum):
    def rule(g, ans, qkv, mask=None, *, heads, scale):
        q, k, v = _heads(qkv, heads, 3)
        (g_heads,) = _heads(g, heads, 1)
        if argnum == 1:
            return _vjp(3)(g_heads, None, q, k, v, mask, scale=scale)
        return _joined([_vjp(i)(g_heads, None, q, k, v, mask, scale=scale) for i in range(3)])
    return rule


def _self_jvp(argnum):
    def rule(t, ans, qkv, mask=None, *, heads, scale):
        q, k, v = _heads(qkv, heads, 3)
        if argnum == 1:
            out = _jvp(3)(t, None, q, k, v, mask, scale=scale)
        else:
            tq, tk, tv = _heads(t, heads, 3)
            out = (_jvp(0)(tq, None, q, k, v, mask, scale=scale)
                   + _jvp(1)(tk, None, q, k, v, mask, scale=scale)
                   + _jvp(2)(tv, None, q, k, v, mask, scale=scale))
        return _joined([out])
    return rule


def _self_pullback(g, ans, qkv, *rest, heads, scale):
    """The gradient of qkv written into one array (N, L, 3, H, D), each head's dq, dk,
    dv through views of it, from the weights the forward kept."""
    *mask, needs, residual = rest
    mask = mask[0] if mask else None
    arrays = (g, qkv) + (() if mask is None else (mask,))
    if residual is None or g.shape != ans.shape or any(
            type(a) is not xp.ndarray for a in arrays):
        return tuple(_self_vjp(i)(g, ans, qkv, mask, heads=heads, scale=scale)
                     if need else None for i, need in enumerate(needs))
    scaled, p, k, v = residual
    shape = qkv.shape
    width = shape[-1] // 3
    size = width // heads
    g_heads = xp.swapaxes(xp.reshape(g, shape[:-1] + (heads, size)), -3, -2)
    ds = xp.matmul(g_heads, xp.swapaxes(v, -1, -2))      # dp, then ds in place
    ds -= xp.add.reduce(ds * p, axis=-1, keepdims=True)
    ds *= p
    grad = xp.empty(shape[:-1] + (3, heads, size), dtype=qkv.dtype)
    into = [xp.swapaxes(grad[..., i, :, :], -3, -2) for i in range(3)]   # (..., H, L, D)
    into[0][...] = xp.matmul(ds, k) * scale
    into[1][...] = xp.matmul(xp.swapaxes(ds, -1, -2), scaled)
    into[2][...] = xp.matmul(xp.swapaxes(p, -1, -2), g_heads)
    return (xp.reshape(grad, shape), ds if needs[1] else None)[:len(needs)]


class _KeepingSelfWeights(Fused):
    keeps_residual = True

    def forward_keeping(self, qkv, mask=None, *, heads, scale):
        shape = qkv.shape
        width = shape[-1] // 3
        x = xp.reshape(qkv, shape[:-1] + (3, heads, width // heads))
        q, k, v = (xp.swapaxes(x[..., i, :, :], -3, -2) for i in range(3))
        scaled, p = _weights_of(q, k, mask, scale)
        out = xp.swapaxes(_stacked_matmul(p, v), -3, -2)
        return xp.reshape(out, shape[:-1] + (width,)), (scaled, p, k, v)


self_attention = _KeepingSelfWeights(_self_attention, "self_attention", _self_pullback,
                                     batched=True, batching=LEADING_AXES)
self_attention.defvjp(*[_self_vjp(i) for i in range(2)],
                      text=("dq, dk, dv side by side", "ds"))
self_attention.defjvp(*[_self_jvp(i) for i in range(2)])
