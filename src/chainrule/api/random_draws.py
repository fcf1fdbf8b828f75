"""How a key draws, for ``cr.random``'s samplers (``random.py`` and
``random_distributions.py``): NumPy's Philox generator keyed by the key's two words,
called as one call of a cr.jit program when the key is traced, so that each run draws
with its own key.
"""

from collections.abc import Sequence

import numpy as np

from .. import arrays as xp
from ..primitive import raw

__all__ = ["generator", "draw", "as_shape"]


def generator(key_words: np.ndarray) -> np.random.Generator:
    """NumPy's Philox generator keyed by a key's two words."""
    words = np.asarray(key_words, dtype=np.uint32)
    if words.shape != (2,):
        raise ValueError(f"random: a key is an array of two uint32 words (from "
                         f"cr.random.key or split), got shape {words.shape}")
    return np.random.Generator(np.random.Philox(key=int(words[0]) << 32 | int(words[1])))


def draw(sample, key_words):
    """``sample(generator)`` for this key: one call of a cr.jit program when the key is
    traced, so that each run draws with its own key."""
    return xp.call(lambda k: sample(generator(k)), raw(key_words))


def as_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    """A shape given as an int or a sequence, as a tuple."""
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
