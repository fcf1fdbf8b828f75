"""Attention as PyTorch has it: ``MultiheadAttention``, with torch's arguments, masks,
parameter names and layouts, so a torch ``state_dict`` of it loads as it is; the
Transformer's layers built on it are in ``transformer.py``.

Everything is written with the library's differentiable operations (matmul, softmax,
where), so ``backward``, ``cr.grad``, ``cr.jit`` and ``cr.vmap`` go through it.

    >>> attention = cr.nn.MultiheadAttention(8, num_heads=2, batch_first=True, rng=0)
    >>> x = cr.ones(3, 5, 8)                              # batch 3, 5 tokens, 8 features
    >>> out, weights = attention(x, x, x)
    >>> out.shape, weights.shape                          # weights averaged over heads
    ((3, 5, 8), (3, 5, 5))
"""

import math
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules import fused, fused_attention
from ..rules.common import Result, float_dtype
from ..api.torch_random import default_generator
from . import functional as F
from .layers import RNG, Linear, initial_generator
from .module import Module, Parameter
from .recurrent import check_device
from .scaled_dot_product import additive_mask, scaled_dot_product_attention

__all__ = ["scaled_dot_product_attention", "MultiheadAttention",
           "NonDynamicallyQuantizableLinear"]


def _affine(x, weight, bias):
    """x @ weight.T + bias, weight in torch's (out, in) layout. A stack of rows (N, L,
    in) is taken as one matrix (N L, in): the weight's gradient is then one product,
    x^T g, rather than one per sequence summed after. With the speed overrides on, one
    node (``fused.linear``, which does the same inside)."""
    if bias is not None and fused.enabled():
        return fused.linear(x, weight, bias)
    shape = shape_of(x)
    if len(shape) > 2:
        x = ops.reshape(x, (math.prod(shape[:-1]), shape[-1]))
    out = ops.matmul(x, ops.swapaxes(weight, 0, 1))
    if bias is not None:
        out = out + bias
    return out if len(shape) <= 2 else ops.reshape(out, shape[:-1] + shape_of(out)[-1:])


_LINEAR_ACTIVATIONS = {"relu": ops.relu, "tanh": ops.tanh, "sigmoid": ops.sigmoid,
                       "gelu": ops.gelu}


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear initialised as torch's: weight and bias from U(-1/sqrt(in_features),
    1/sqrt(in_features)) (nn.Linear's default is He's normal): the projections of
    ``MultiheadAttention`` and the feed-forward layers of the Transformer's,
    so that a model made with a seed starts as torch's would in distribution. Its
    layout is every Linear's, PyTorch's (out_features, in_features), so torch's
    state_dict of them loads as it is. ``isinstance(m, nn.Linear)`` holds.

    (The name is torch's class of ``MultiheadAttention.out_proj``.)

    >>> layer = cr.nn.attention.NonDynamicallyQuantizableLinear(3, 2, rng=0)
    >>> layer.weight.shape, layer(cr.ones(4, 3)).shape
    ((2, 3), (4, 2))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 rng: RNG = None, dtype: DTypeLike = np.float64) -> None:
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, Integral) or n < 1:
                raise ValueError(f"Linear: {name} must be a positive int, got {n!r}")
        rng, bound = initial_generator(rng), 1 / math.sqrt(in_features)
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = Parameter(rng.uniform(-bound, bound, (out_features, in_features)),
                                dtype=dtype)
        self.bias = (Parameter(rng.uniform(-bound, bound, out_features), dtype=dtype)
                     if bias else None)

    def forward(self, x: ArrayLike, activation: str | None = None) -> Result:
        """x @ weight.T + bias; x's last axis must be in_features. ``activation``
        ("relu", "tanh", "sigmoid", "gelu") is applied after, as Linear's."""
        if shape_of(x)[-1:] != (self.in_features,):
            raise ValueError(f"Linear: input of shape {tuple(shape_of(x))}, expected the "
                             f"last axis to be in_features = {self.in_features}")
        out = _affine(x, self.weight, self.bias)
        if activation is None:
            return out
        if activation not in _LINEAR_ACTIVATIONS:
            raise ValueError(f"Linear: activation must be None or one of "
                             f"{', '.join(_LINEAR_ACTIVATIONS)}, got {activation!r}")
        return _LINEAR_ACTIVATIONS[activation](out)

    def _torch_converters(self, name):  # already torch's layout
        return Module._torch_converters(self, name)


class MultiheadAttention(Module):
    """torch's ``nn.MultiheadAttention``: ``num_heads`` attentions side by side, each
    on embed_dim / num_heads features.

    The equations::

        q, k, v = query W_q^T + b_q, key W_k^T + b_k, value W_v^T + b_v   (split in heads)
        head_i  = softmax(q_i k_i^T / sqrt(head_dim) + mask) v_i
        output  = concat(head_1, ..., head_h) W_o^T + b_o

    Parameters as torch's: ``in_proj_weight`` (3 E, E) holding W_q, W_k, W_v (xavier
    uniform) and ``in_proj_bias`` (zeros), or ``q_proj_weight``, ``k_proj_weight``,
    ``v_proj_weight`` when ``kdim`` or ``vdim`` differ from E; ``out_proj`` a Linear in
    torch's layout (bias zeros). Input (L, N, E), (N, L, E) with ``batch_first``, or
    (L, E) unbatched. ``dropout`` drops attention weights in training (drawn from the
    default generator). ``add_bias_kv`` adds one learned key and value (``bias_k``,
    ``bias_v``: (1, 1, E), xavier normal) after the projected keys and values of every
    example; ``add_zero_attn`` one zero key and value after those in every head: S + 1
    (or S + 2) keys, the masks padded with keys that take part, as torch's.

    >>> mha = cr.nn.MultiheadAttention(8, 2, batch_first=True, rng=0)
    >>> x = cr.ones(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape                          # weights averaged over heads
    ((3, 5, 8), (3, 5, 5))
    >>> [name for name, p in mha.named_parameters()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: str | None = None, dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        for name, n in (("embed_dim", embed_dim), ("num_heads", num_heads),
                        ("kdim", kdim or 1), ("vdim", vdim or 1)):
            if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
                raise ValueError(f"MultiheadAttention: {name} must be a positive int, got "
                                 f"{n!r}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim must be divisible by num_heads, "
                             f"got embed_dim={embed_dim} and num_heads={num_heads}")
        if not 0 <= dropout < 1:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1), got {dropout!r}")
        check_device("MultiheadAttention", device)
        E = self.embed_dim = int(embed_dim)
        self.kdim, self.vdim = int(kdim or E), int(vdim or E)
        self.num_heads, self.head_dim = int(num_heads), E // int(num_heads)
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self._qkv_same_embed_dim = self.kdim == E and self.vdim == E
        rng, dtype = initial_generator(rng), np.float64 if dtype is None else dtype

        def xavier(rows, cols):  # torch's xavier_uniform_: U(-a, a), a = sqrt(6 / (in + out))
            a = math.sqrt(6 / (rows + cols))
            return Parameter(rng.uniform(-a, a, (rows, cols)), dtype=dtype)

        if self._qkv_same_embed_dim:
            self.in_proj_weight = xavier(3 * E, E)
        else:
            self.q_proj_weight = xavier(E, E)
            self.k_proj_weight = xavier(E, self.kdim)
            self.v_proj_weight = xavier(E, self.vdim)
        self.in_proj_bias = Parameter(np.zeros(3 * E), dtype=dtype) if bias else None
        if add_bias_kv:  # torch's xavier_normal_ of a (1, 1, E): std sqrt(2 / (E + E))
            self.bias_k, self.bias_v = (
                Parameter(rng.normal(0.0, math.sqrt(1 / E), (1, 1, E)), dtype=dtype)
                for _ in range(2))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias=bias, rng=rng, dtype=dtype)
        if bias:
            self.out_proj.bias.data[...] = 0.0

    def _projections(self):
        """(W_q, W_k, W_v) and (b_q, b_k, b_v), each in torch's (out, in) layout."""
        if self._qkv_same_embed_dim:
            weights = ops.split(self.in_proj_weight, 3, axis=0)
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        biases = (None,) * 3 if self.in_proj_bias is None else \
            ops.split(self.in_proj_bias, 3, axis=0)
        return weights, biases

    def _check(self, query, key, value, key_padding_mask, attn_mask):
        """(batched?, L, N, S) after torch's shape checks, each a ValueError."""
        q, k, v = (tuple(shape_of(a)) for a in (query, key, value))
        dims = len(q)
        where = (f"MultiheadAttention: query {q}, key {k}, value {v}; expected "
                 f"{'(N, L, E)' if self.batch_first else '(L, N, E)'} or (L, E) unbatched, "
                 f"E = {self.embed_dim}, key's last axis kdim = {self.kdim}, value's vdim = "
                 f"{self.vdim}, key and value of the same length and batch")
        if dims not in (2, 3) or len(k) != dims or len(v) != dims or q[-1] != self.embed_dim \
                or k[-1] != self.kdim or v[-1] != self.vdim or k[:-1] != v[:-1]:
            raise ValueError(where)
        batched = dims == 3
        if batched:
            (N, L), S = (q[:2] if self.batch_first else q[1::-1]), \
                (k[1] if self.batch_first else k[0])
            if (k[0] if self.batch_first else k[1]) != N:
                raise ValueError(where)
        else:
            N, L, S = 1, q[0], k[0]
        if key_padding_mask is not None:
            expected = (N, S) if batched else (S,)
            if tuple(shape_of(key_padding_mask)) != expected:
                raise ValueError(f"MultiheadAttention: key_padding_mask of shape "
                                 f"{tuple(shape_of(key_padding_mask))}, expected {expected}")
        if attn_mask is not None:
            allowed = [(L, S), (N * self.num_heads, L, S)] if batched else \
                [(L, S), (self.num_heads, L, S)]
            if tuple(shape_of(attn_mask)) not in allowed:
                raise ValueError(f"MultiheadAttention: attn_mask of shape "
                                 f"{tuple(shape_of(attn_mask))}, expected one of {allowed}")
        return batched, L, N, S

    def forward(self, query: ArrayLike, key: ArrayLike, value: ArrayLike,
                key_padding_mask: ArrayLike | None = None, need_weights: bool = True,
                attn_mask: ArrayLike | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Result, Result | None]:
        """(attn_output, attn_weights) as torch's.

        ``key_padding_mask`` (N, S): True (or -inf, added) marks keys to leave out;
        ``attn_mask`` (L, S) or (N * num_heads, L, S): True marks a pair to leave out, a
        float mask is added to the scores. ``is_causal=True`` is torch's hint that
        attn_mask is the causal mask; without an attn_mask it makes one (torch refuses).
        The weights are (N, L, S), averaged over the heads, or (N, num_heads, L, S) with
        ``average_attn_weights=False``; None with ``need_weights=False``.
        """
        batched, L, N, S = self._check(query, key, value, key_padding_mask, attn_mask)
        H, D = self.num_heads, self.head_dim
        self_attending = query is key and key is value
        if not batched:  # a batch of one, taken off at the end
            query, key, value = (ops.expand_dims(a, 0) for a in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = ops.expand_dims(key_padding_mask, 0)
        elif not self.batch_first:
            query, key, value = (ops.swapaxes(a, 0, 1) for a in (query, key, value))
        dropping = self.dropout and self.training
        fast = not need_weights and not dropping and fused.enabled() and \
            self.bias_k is None and not self.add_zero_attn
        if fast and self_attending and self._qkv_same_embed_dim \
                and key_padding_mask is None:
            # self-attention, the weights neither returned nor dropped: the three
            # projections as one product (as torch's in_proj), then the heads' attention
            # as one node (rules/fused_attention.py)
            mask = None
            if is_causal and attn_mask is None:
                attn_mask = np.triu(np.ones((L, S), dtype=bool), 1)
            if attn_mask is not None:
                mask = additive_mask(attn_mask, float_dtype(query), true_means_masked=True)
                if len(shape_of(mask)) == 3:   # (N * H, L, S), or (H, L, S) unbatched
                    mask = ops.reshape(mask, (N, H, L, S))
            qkv = _affine(query, self.in_proj_weight, self.in_proj_bias)   # (N, L, 3 E)
            out = fused_attention.self_attention(qkv, mask, heads=H, scale=1 / math.sqrt(D))
            out = self.out_proj(out)
            if not batched:
                out = ops.squeeze(out, 0)
            elif not self.batch_first:
                out = ops.swapaxes(out, 0, 1)
            return out, None
        (w_q, w_k, w_v), (b_q, b_k, b_v) = self._projections()
        projected = [_affine(x, w, b) for x, w, b in ((query, w_q, b_q), (key, w_k, b_k),
                                                      (value, w_v, b_v))]  # (N, length, E)
        if self.bias_k is not None:  # one more key and value, learned, for every example
            for i, extra in ((1, self.bias_k), (2, self.bias_v)):
                extra = ops.broadcast_to(extra, (N, 1, self.embed_dim))
                projected[i] = ops.concatenate([projected[i], extra], axis=1)
        length = shape_of(projected[1])[1]
        q, k, v = (ops.swapaxes(ops.reshape(x, (N, n, H, D)), 1, 2)
                   for x, n in zip(projected, (L, length, length)))   # (N, H, length, D)
        if self.add_zero_attn:  # and one more of zeros, in every head
            zeros = np.zeros((N, H, 1, D), dtype=float_dtype(k))
            k, v = (ops.concatenate([a, zeros], axis=2) for a in (k, v))
        added = shape_of(k)[2] - S  # the keys the masks do not cover: they take part
        dtype = float_dtype(q)
        if is_causal and attn_mask is None:
            attn_mask = np.triu(np.ones((L, S), dtype=bool), 1)
        masks = []
        if attn_mask is not None:
            mask = _padded(additive_mask(attn_mask, dtype, true_means_masked=True), added)
            if len(shape_of(mask)) == 3:   # (N * H, L, S), or (H, L, S) unbatched
                mask = ops.reshape(mask, (N, H, L, S + added))
            masks.append(mask)
        if key_padding_mask is not None:
            mask = _padded(additive_mask(key_padding_mask, dtype, true_means_masked=True),
                           added)
            masks.append(ops.reshape(mask, (N, 1, 1, S + added)))
        if fast and len(masks) <= 1:
            # the weights neither returned nor dropped: softmax((q scale) k^T + mask) v
            # as one node (rules/fused_attention.py)
            heads = fused_attention.attention(q, k, v, masks[0] if masks else None,
                                              scale=1 / math.sqrt(D))
        else:
            scores = ops.matmul(q * (1 / math.sqrt(D)), ops.swapaxes(k, -1, -2))  # (N, H, L, S)
            for mask in masks:
                scores = scores + mask
            weights = ops.softmax(scores, axis=-1)
            if dropping:
                weights = F.dropout(weights, self.dropout, True, rng=default_generator)
            heads = ops.matmul(weights, v)
        out = ops.reshape(ops.swapaxes(heads, 1, 2), (N, L, H * D))
        out = self.out_proj(out)
        if not batched:
            out = ops.squeeze(out, 0)
        elif not self.batch_first:
            out = ops.swapaxes(out, 0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = ops.mean(weights, axis=1)
        return out, (weights if batched else ops.squeeze(weights, 0))


def _padded(mask, added):
    """An additive mask over S keys, with 0s for ``added`` keys after them (keys that
    take part: add_bias_kv's and add_zero_attn's)."""
    if not added:
        return mask
    shape = tuple(shape_of(mask))
    return ops.concatenate([mask, np.zeros(shape[:-1] + (added,), dtype=float_dtype(mask))],
                           axis=-1)
