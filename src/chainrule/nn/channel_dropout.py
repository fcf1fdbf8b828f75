"""Dropout of whole channels (torch's ``dropout1d``/``2d``/``3d`` and their modules) and
SELU's alpha dropout (``alpha_dropout``, ``nn.AlphaDropout``, and of whole channels
``feature_alpha_dropout``, ``nn.FeatureAlphaDropout``). The draws come from
``rng`` (a seed or a ``numpy.random.Generator``), as ``F.dropout`` and ``nn.Dropout``
take them; under cr.jit each run draws anew. The mask is a constant: the gradient is
the mask, its derivatives zero, as torch's.

>>> import chainrule.nn.functional as F
>>> y = F.dropout1d(cr.ones(1, 4, 3), 0.5, rng=0)         # each channel kept or not
>>> y.data[0].tolist()
[[2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
"""

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import shape_of
from ..rules.common import Result, float_dtype
from .module import Module

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
           "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]

Generator = np.random.Generator | int | None

# SELU's negative saturation, -scale * alpha: where alpha dropout puts what it drops
_ALPHA = 1.7580993408473766


def _generator(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _check_p(p, name):
    if not 0 <= p <= 1:
        raise ValueError(f"{name}: p must be in [0, 1], got {p!r}")


def _channel_dropout(x, p, training, rng, name, leads, expected):
    """x with each (example, channel) kept or zeroed as a whole; ``leads`` maps each
    rank taken to its count of leading axes, 2 for (N, C, ...), 1 for (C, ...)."""
    _check_p(p, name)
    shape = shape_of(x)
    if len(shape) not in leads:
        raise ValueError(f"{name}: input of shape {shape}, expected {expected}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    lead = leads[len(shape)]
    mask_shape = shape[:lead] + (1,) * (len(shape) - lead)
    keep = xp.draw(_generator(rng).random, mask_shape) >= p
    return x * (keep / (1 - p)).astype(float_dtype(x))


def dropout1d(input: ArrayLike, p: float = 0.5, training: bool = True,
              inplace: bool = False, rng: Generator = None) -> Result:
    """torch's ``dropout1d``: in training, each channel of x (N, C, L) or (C, L) zeroed
    with probability ``p``, the others scaled by 1 / (1 - p); else x.

    >>> dropout1d(cr.ones(3, 2), 0.5, training=False).data.tolist()
    [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    """
    return _channel_dropout(input, p, training, rng, "dropout1d", {3: 2, 2: 1},
                            "(N, C, L) or (C, L)")


def dropout2d(input: ArrayLike, p: float = 0.5, training: bool = True,
              inplace: bool = False, rng: Generator = None) -> Result:
    """torch's ``dropout2d``: in training, each channel of x (N, C, H, W) zeroed with
    probability ``p``, the others scaled by 1 / (1 - p); else x. A 3-d input is read as
    (N, C, L), as torch 2.13 still reads it.

    >>> dropout2d(cr.ones(1, 3, 2, 2), 0.5, rng=0).data[0, :, 0, 0].tolist()
    [2.0, 0.0, 0.0]
    """
    return _channel_dropout(input, p, training, rng, "dropout2d", {4: 2, 3: 2},
                            "(N, C, H, W) or (N, C, L)")


def dropout3d(input: ArrayLike, p: float = 0.5, training: bool = True,
              inplace: bool = False, rng: Generator = None) -> Result:
    """torch's ``dropout3d``: in training, each channel of x (N, C, D, H, W) or
    (C, D, H, W) zeroed with probability ``p``, the others scaled by 1 / (1 - p).

    >>> dropout3d(cr.ones(2, 1, 1, 1), 0.5, rng=0).data.ravel().tolist()
    [2.0, 0.0]
    """
    return _channel_dropout(input, p, training, rng, "dropout3d", {5: 2, 4: 1},
                            "(N, C, D, H, W) or (C, D, H, W)")


def _alpha_dropout(x, p, training, rng, name, mask_shape):
    _check_p(p, name)
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    dtype = float_dtype(x)
    keep = (xp.draw(_generator(rng).random, mask_shape) >= p).astype(dtype)
    a = 1 / np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
    return x * (keep * a).astype(dtype) + shift.astype(dtype)


def alpha_dropout(input: ArrayLike, p: float = 0.5, training: bool = False,
                  inplace: bool = False, rng: Generator = None) -> Result:
    """torch's ``alpha_dropout``, for SELU networks: in training each entry is dropped
    with probability ``p`` to SELU's saturation -1.7581, then all are moved by an affine
    map a x + b that keeps a zero mean and unit variance; else x. (``training`` is
    False by default, as torch's.)

    >>> y = alpha_dropout(cr.zeros(4), 0.5, training=True, rng=0)
    >>> np.round(y.data, 4).tolist()                       # kept: a alpha p, dropped: -a alpha (1 - p)
    [0.7792, -0.7792, -0.7792, -0.7792]
    """
    return _alpha_dropout(input, p, training, rng, "alpha_dropout", shape_of(input))


def feature_alpha_dropout(input: ArrayLike, p: float = 0.5, training: bool = False,
                          inplace: bool = False, rng: Generator = None) -> Result:
    """torch's ``feature_alpha_dropout``: ``alpha_dropout`` of whole channels, each
    (example, channel) of x (N, C, ...) kept or dropped as one, for SELU networks of
    convolutions. (``training`` is False by default, as torch's.)

    >>> y = feature_alpha_dropout(cr.zeros(1, 3, 2), 0.5, training=True, rng=0)
    >>> np.round(y.data[0], 4).tolist()                    # one choice per channel
    [[0.7792, 0.7792], [-0.7792, -0.7792], [-0.7792, -0.7792]]
    """
    shape = shape_of(input)
    if len(shape) < 2:
        raise ValueError(f"feature_alpha_dropout: input of shape {shape}, expected (N, C, "
                         f"...) with at least 2 dimensions")
    return _alpha_dropout(input, p, training, rng, "feature_alpha_dropout",
                          shape[:2] + (1,) * (len(shape) - 2))


class _Dropout(Module):
    _functional = staticmethod(dropout1d)

    def __init__(self, p: float = 0.5, inplace: bool = False, rng: Generator = None) -> None:
        _check_p(p, type(self).__name__)
        self.p, self.inplace, self.rng = p, inplace, _generator(rng)

    def forward(self, x: ArrayLike) -> Result:
        """x with its draws in training; x itself in eval."""
        return self._functional(x, self.p, self.training, rng=self.rng)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) in training (torch's
    ``nn.Dropout1d``); ``rng`` (a seed or a Generator) fixes the draws.

    >>> drop = cr.nn.Dropout1d(0.5, rng=0)
    >>> drop
    Dropout1d(p=0.5, inplace=False)
    >>> drop(cr.ones(3, 2)).data.tolist()
    [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
    """

    _functional = staticmethod(dropout1d)


class Dropout2d(_Dropout):
    """Zeroes whole channels of (N, C, H, W) in training (torch's ``nn.Dropout2d``).

    >>> cr.nn.Dropout2d(0.5, rng=0).eval()(cr.ones(1, 2, 2, 2)).shape
    (1, 2, 2, 2)
    """

    _functional = staticmethod(dropout2d)


class Dropout3d(_Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) in training (torch's
    ``nn.Dropout3d``).

    >>> cr.nn.Dropout3d(0.25)
    Dropout3d(p=0.25, inplace=False)
    """

    _functional = staticmethod(dropout3d)


class AlphaDropout(_Dropout):
    """Alpha dropout for SELU networks (torch's ``nn.AlphaDropout``): see
    ``F.alpha_dropout``; the identity in eval.

    >>> cr.nn.AlphaDropout(0.2).eval()(cr.ones(2)).data.tolist()
    [1.0, 1.0]
    """

    _functional = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_Dropout):
    """Alpha dropout of whole channels (torch's ``nn.FeatureAlphaDropout``): see
    ``F.feature_alpha_dropout``; the identity in eval.

    >>> cr.nn.FeatureAlphaDropout(0.2)
    FeatureAlphaDropout(p=0.2, inplace=False)
    """

    _functional = staticmethod(feature_alpha_dropout)
