"""``jax.lax.fft``: the discrete Fourier transform over an array's last axes, as one
function with a kind (``FftType``: FFT, IFFT, RFFT, IRFFT) and the lengths of those
axes, computed and differentiated by chainrule's ``numpy.fft`` functions.

>>> cr.lax.fft(np.array([1.0, 2.0, 3.0, 4.0]), "rfft", (4,)).tolist()
[(10+0j), (-2+2j), (-2+0j)]
"""

import enum
from collections.abc import Sequence
from typing import Any

from ..api import numpy as cnp
from ..primitive import shape_of

__all__ = ["FftType", "fft"]


class FftType(enum.IntEnum):
    """The kinds of ``fft``, with JAX's numbers: complex to complex forward (FFT) and
    inverse (IFFT), real to half-spectrum (RFFT) and back (IRFFT)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x: Any, fft_type: "FftType | str", fft_lengths: Sequence[int]) -> Any:
    """The transform of kind ``fft_type`` (an ``FftType``, or its name in any case) over
    the last ``len(fft_lengths)`` axes of x, whose lengths they are: the input's for
    FFT, IFFT and RFFT, the output's for IRFFT (whose input's last axis holds
    ``fft_lengths[-1] // 2 + 1`` frequencies)."""
    try:
        kind = FftType[fft_type.upper()] if isinstance(fft_type, str) else FftType(fft_type)
    except (KeyError, ValueError):
        raise ValueError(f"lax.fft: fft_type {fft_type!r}; expected one of "
                         f"{[k.name for k in FftType]}") from None
    lengths = tuple(int(n) for n in fft_lengths)
    shape = tuple(shape_of(x))
    if not 1 <= len(lengths) <= min(3, len(shape)):
        raise ValueError(f"lax.fft: {len(lengths)} fft_lengths for an input of shape "
                         f"{shape}; expected 1 to 3, at most its rank")
    expected = lengths
    if kind is FftType.IRFFT:
        expected = lengths[:-1] + (lengths[-1] // 2 + 1,)
    if shape[-len(lengths):] != expected:
        raise ValueError(f"lax.fft: {kind.name} with fft_lengths {lengths} expects the "
                         f"input's last axes to be {expected}, got shape {shape}")
    axes = tuple(range(-len(lengths), 0))
    if kind is FftType.FFT:
        return cnp.fft.fftn(x, axes=axes)
    if kind is FftType.IFFT:
        return cnp.fft.ifftn(x, axes=axes)
    if kind is FftType.RFFT:
        return cnp.fft.rfftn(x, axes=axes)
    return cnp.fft.irfftn(x, s=lengths, axes=axes)
