"""The Transformer as torch has it: ``TransformerEncoderLayer``, ``TransformerEncoder``,
``TransformerDecoderLayer``, ``TransformerDecoder`` and ``Transformer``, with torch's
arguments, masks, submodule names and layouts, so a torch ``state_dict`` loads as it is.

Each layer is attention (``attention.py``'s MultiheadAttention) and a feed-forward
network, each added to its input and normalised, before (``norm_first``) or after.
Written with the library's differentiable operations, so ``backward``, ``cr.grad``,
``cr.jit`` and ``cr.vmap`` go through it.

    >>> model = cr.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=16, rng=0)
    >>> src, tgt = cr.ones(6, 3, 8), cr.ones(4, 3, 8)       # (length, batch, features)
    >>> model(src, tgt).shape                               # one row per target token
    (4, 3, 8)
"""

import copy
import math
from collections.abc import Callable
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..api.torch_random import default_generator
from ..primitive import shape_of
from ..rules import fused, fused_norm
from ..rules.common import Result
from . import functional as F
from . import init
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .containers import ModuleList
from .layers import RNG, Dropout, LayerNorm, initial_generator
from .module import Module
from .recurrent import check_device

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(name, activation):
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"{name}: activation must be 'relu', 'gelu' or a callable, "
                             f"got {activation!r}")
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise ValueError(f"{name}: activation must be 'relu', 'gelu' or a callable, got "
                         f"{type(activation).__name__}")
    return activation


def _layer_norm(norm):
    """The normalisation ``norm`` computes: a LayerNorm over the last axis as one node
    (rules/fused_norm.py, with its shape check) unless the overrides are off; another
    module (a subclass, a replacement) as it is."""
    if type(norm) is not LayerNorm or len(norm.normalized_shape) != 1 \
            or not fused.enabled():
        return norm

    def normalised(x):
        if shape_of(x)[-1:] != norm.normalized_shape:
            return norm(x)  # (its error)
        return fused_norm.layer_norm(x, norm.weight, norm.bias, eps=norm.eps)
    return normalised


def _feed_forward(layer, x, out_dropout):
    """``out_dropout(linear2(dropout(activation(linear1(x)))))``, the position-wise
    network of an encoder or decoder layer."""
    shape = shape_of(x)
    flat = len(shape) > 2 and layer.activation in _ACTIVATIONS.values()
    if flat:  # the rows as one matrix through both layers: two reshapes, not four
        x = ops.reshape(x, (math.prod(shape[:-1]), shape[-1]))
    if layer.activation is ops.relu:  # (one node with linear1 where the overrides are on)
        hidden = layer.linear1(x, activation="relu")
    else:
        hidden = layer.activation(layer.linear1(x))
    out = out_dropout(layer.linear2(layer.dropout(hidden)))
    return ops.reshape(out, shape) if flat else out


def _copies(layer, num_layers, name, what):
    """``num_layers`` deep copies of ``layer`` in a ModuleList, all sharing the default
    generator: a copy of it in each layer would draw the same dropout masks in each."""
    if not isinstance(layer, Module):
        raise ValueError(f"{name}: {what} must be a Module, got {type(layer).__name__}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, Integral) \
            or num_layers < 1:
        raise ValueError(f"{name}: num_layers must be a positive int, got {num_layers!r}")
    memo = {id(default_generator): default_generator}
    return ModuleList([copy.deepcopy(layer, dict(memo)) for _ in range(num_layers)])


class TransformerEncoderLayer(Module):
    """torch's ``nn.TransformerEncoderLayer``: self-attention and a feed-forward
    network, each added to its input and normalised.

    The two orders::

        norm_first=False (post-norm, torch's default)   norm_first=True (pre-norm)
        x = norm1(x + sa(x))                            x = x + sa(norm1(x))
        x = norm2(x + ff(x))                            x = x + ff(norm2(x))

    where sa is ``self_attn`` (a MultiheadAttention) then dropout, and ff is
    ``linear2(dropout(activation(linear1(x))))`` then dropout. ``activation`` is "relu",
    "gelu" or a callable. Submodules and parameters are named as torch's (self_attn,
    linear1, linear2, norm1, norm2), the linear weights in torch's (out, in) layout.
    Dropout draws from the default generator. ``rng`` draws the initial weights.

    >>> layer = cr.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, rng=0)
    >>> layer(cr.ones(5, 3, 8)).shape                     # 5 tokens, batch 3
    (5, 3, 8)
    >>> sorted(layer.state_dict())[:3]
    ['linear1.bias', 'linear1.weight', 'linear2.bias']
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        check_device("TransformerEncoderLayer", device)
        activation = _activation("TransformerEncoderLayer", activation)
        rng, dtype = initial_generator(rng), np.float64 if dtype is None else dtype
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype, rng=rng)
        self.linear1 = NonDynamicallyQuantizableLinear(d_model, dim_feedforward, bias, rng,
                                                       dtype)
        self.dropout = Dropout(dropout, rng=default_generator)
        self.linear2 = NonDynamicallyQuantizableLinear(dim_feedforward, d_model, bias, rng,
                                                       dtype)
        self.norm_first, self.batch_first = bool(norm_first), bool(batch_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout, rng=default_generator)
        self.dropout2 = Dropout(dropout, rng=default_generator)
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def forward(self, src: ArrayLike, src_mask: ArrayLike | None = None,
                src_key_padding_mask: ArrayLike | None = None,
                is_causal: bool = False) -> Result:
        """The layer on src ((L, N, E), (N, L, E) with batch_first, or (L, E)); the masks
        as MultiheadAttention's attn_mask and key_padding_mask."""
        x, norm1, norm2 = src, _layer_norm(self.norm1), _layer_norm(self.norm2)
        if self.norm_first:
            x = x + self._sa_block(norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + _feed_forward(self, norm2(x), self.dropout2)
        x = norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return norm2(x + _feed_forward(self, x, self.dropout2))


class TransformerEncoder(Module):
    """torch's ``nn.TransformerEncoder``: ``num_layers`` deep copies of
    ``encoder_layer`` (``layers``, a ModuleList), applied in turn, then ``norm`` if
    given. The copies start with the same weights, as torch's, and their dropout draws
    from the default generator, each its own masks.

    >>> layer = cr.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True,
    ...                                       rng=0)
    >>> encoder = cr.nn.TransformerEncoder(layer, num_layers=2, norm=cr.nn.LayerNorm(8))
    >>> encoder(cr.ones(3, 5, 8)).shape, len(encoder.layers)
    ((3, 5, 8), 2)
    >>> list(encoder.state_dict())[0]
    'layers.0.self_attn.in_proj_weight'
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        self.layers = _copies(encoder_layer, num_layers, "TransformerEncoder",
                              "encoder_layer")
        self.num_layers, self.norm = int(num_layers), norm

    def forward(self, src: ArrayLike, mask: ArrayLike | None = None,
                src_key_padding_mask: ArrayLike | None = None,
                is_causal: bool | None = None) -> Result:
        """Each layer on the previous one's output, with the same masks, then norm."""
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoderLayer(Module):
    """torch's ``nn.TransformerDecoderLayer``: self-attention over the target, attention
    from the target to the encoder's output (``memory``), and a feed-forward network,
    each added to its input and normalised::

        norm_first=False (post-norm, torch's default)   norm_first=True (pre-norm)
        x = norm1(x + sa(x))                            x = x + sa(norm1(x))
        x = norm2(x + mha(x, memory))                   x = x + mha(norm2(x), memory)
        x = norm3(x + ff(x))                            x = x + ff(norm3(x))

    Submodules as torch names them (self_attn, multihead_attn, linear1, linear2, norm1,
    norm2, norm3); the rest as ``TransformerEncoderLayer``.

    >>> layer = cr.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, rng=0)
    >>> layer(cr.ones(4, 3, 8), cr.ones(6, 3, 8)).shape   # 4 target tokens, 6 memory
    (4, 3, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        check_device("TransformerDecoderLayer", device)
        activation = _activation("TransformerDecoderLayer", activation)
        rng, dtype = initial_generator(rng), np.float64 if dtype is None else dtype
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype, rng=rng)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype,
                                                 rng=rng)
        # (torch's are Linear, initialised as these: U(+-1/sqrt(in_features)))
        self.linear1 = NonDynamicallyQuantizableLinear(d_model, dim_feedforward, bias, rng,
                                                       dtype)
        self.dropout = Dropout(dropout, rng=default_generator)
        self.linear2 = NonDynamicallyQuantizableLinear(dim_feedforward, d_model, bias, rng,
                                                       dtype)
        self.norm_first, self.batch_first = bool(norm_first), bool(batch_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout, rng=default_generator)
        self.dropout2 = Dropout(dropout, rng=default_generator)
        self.dropout3 = Dropout(dropout, rng=default_generator)
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(x)

    def forward(self, tgt: ArrayLike, memory: ArrayLike, tgt_mask: ArrayLike | None = None,
                memory_mask: ArrayLike | None = None,
                tgt_key_padding_mask: ArrayLike | None = None,
                memory_key_padding_mask: ArrayLike | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Result:
        """The layer on tgt ((T, N, E), (N, T, E) with batch_first, or (T, E)) attending
        to memory ((S, N, E)...); the masks as MultiheadAttention's attn_mask and
        key_padding_mask, ``tgt_mask`` (T, T) and ``memory_mask`` (T, S)."""
        x = tgt
        norm1, norm2, norm3 = (_layer_norm(n) for n in (self.norm1, self.norm2, self.norm3))
        if self.norm_first:
            x = x + self._sa_block(norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + _feed_forward(self, norm3(x), self.dropout3)
        x = norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                      memory_is_causal))
        return norm3(x + _feed_forward(self, x, self.dropout3))


class TransformerDecoder(Module):
    """torch's ``nn.TransformerDecoder``: ``num_layers`` deep copies of
    ``decoder_layer`` (``layers``), each attending to the same ``memory``, applied in
    turn, then ``norm`` if given; copied as ``TransformerEncoder``'s layers are.

    >>> layer = cr.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, rng=0)
    >>> decoder = cr.nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(cr.ones(4, 3, 8), cr.ones(6, 3, 8)).shape
    (4, 3, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        self.layers = _copies(decoder_layer, num_layers, "TransformerDecoder",
                              "decoder_layer")
        self.num_layers, self.norm = int(num_layers), norm

    def forward(self, tgt: ArrayLike, memory: ArrayLike, tgt_mask: ArrayLike | None = None,
                memory_mask: ArrayLike | None = None,
                tgt_key_padding_mask: ArrayLike | None = None,
                memory_key_padding_mask: ArrayLike | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Result:
        """Each layer on the previous one's output and memory, with the same masks,
        then norm."""
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """torch's ``nn.Transformer`` (Vaswani et al.'s model): an encoder of
    ``num_encoder_layers`` layers over ``src`` and a decoder of ``num_decoder_layers``
    over ``tgt`` attending to the encoder's output, each ending in a LayerNorm.

    The weights of more than one dimension start Xavier-uniform, as torch's, drawn from
    ``rng``. ``custom_encoder`` / ``custom_decoder`` replace the built ones.
    ``Transformer.generate_square_subsequent_mask(n)`` is the causal mask (-inf above
    the diagonal) to pass as ``tgt_mask``.

    >>> model = cr.nn.Transformer(8, 2, 1, 1, dim_feedforward=16, batch_first=True, rng=0)
    >>> mask = cr.nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(cr.ones(3, 6, 8), cr.ones(3, 4, 8), tgt_mask=mask).shape
    (3, 4, 8)
    >>> mask[1].tolist()
    [0.0, 0.0, -inf, -inf]
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: DTypeLike = None, *, rng: RNG = None) -> None:
        check_device("Transformer", device)
        rng, dtype = initial_generator(rng), np.float64 if dtype is None else dtype
        settings = dict(dim_feedforward=dim_feedforward, dropout=dropout,
                        activation=activation, layer_norm_eps=layer_norm_eps,
                        batch_first=batch_first, norm_first=norm_first, bias=bias,
                        dtype=dtype, rng=rng)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, **settings)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(
                d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, **settings)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(
                d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter, generator=rng)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, bool(batch_first)

    def forward(self, src: ArrayLike, tgt: ArrayLike, src_mask: ArrayLike | None = None,
                tgt_mask: ArrayLike | None = None, memory_mask: ArrayLike | None = None,
                src_key_padding_mask: ArrayLike | None = None,
                tgt_key_padding_mask: ArrayLike | None = None,
                memory_key_padding_mask: ArrayLike | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Result:
        """The decoder's output for tgt ((T, N, E), (N, T, E) with batch_first, or
        (T, E)) given src ((S, N, E)...): ``decoder(tgt, encoder(src))``, each mask
        passed to the attention it names."""
        src_shape, tgt_shape = shape_of(src), shape_of(tgt)
        batch_axis = 0 if self.batch_first else 1
        if len(src_shape) == 3 and len(tgt_shape) == 3 \
                and src_shape[batch_axis] != tgt_shape[batch_axis]:
            raise ValueError(f"Transformer: src of shape {src_shape} and tgt of shape "
                             f"{tgt_shape} have different batch sizes (axis {batch_axis})")
        if src_shape[-1:] != (self.d_model,) or tgt_shape[-1:] != (self.d_model,):
            raise ValueError(f"Transformer: src of shape {src_shape} and tgt of shape "
                             f"{tgt_shape}, expected d_model = {self.d_model} features "
                             f"last in both")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: str | None = None,
                                        dtype: DTypeLike = None) -> np.ndarray:
        """The (sz, sz) causal mask: 0 on and below the diagonal, -inf above, so that
        position i attends to positions up to i."""
        check_device("Transformer.generate_square_subsequent_mask", device)
        mask = np.zeros((sz, sz), np.float64 if dtype is None else dtype)
        mask[np.triu_indices(sz, 1)] = -np.inf
        return mask
