"""What every layer's constructor uses: where its initial weights come from (``rng``: a
seed, a ``numpy.random.Generator``, or chainrule's default generator) and torch's
``device=`` argument (the CPU, where chainrule computes).

>>> from chainrule.nn.construction import make_generator
>>> bool(make_generator(0).integers(10) == make_generator(0).integers(10))
True
"""

from numbers import Integral
from typing import Any

import numpy as np

from ..api.torch_random import default_generator

__all__ = ["RNG", "make_generator", "initial_generator", "check_device"]

RNG = int | np.random.Generator | None


def make_generator(rng: RNG) -> np.random.Generator:
    """A ``numpy.random.Generator`` from None (fresh entropy), a seed, or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, Integral):
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected None, an int seed or a numpy.random.Generator, "
                    f"got {type(rng).__name__} {rng!r}")


def initial_generator(rng: RNG) -> Any:
    """Where a layer's initial weights come from: ``rng`` (a seed or a Generator), or by
    default chainrule's default generator, as PyTorch draws them from its own, so that
    ``cr.manual_seed(n)`` makes a model's first weights repeatable."""
    return default_generator if rng is None else make_generator(rng)


def check_device(layer, device):
    """torch's ``device=``: the CPU (where chainrule computes) or None; another is refused."""
    kind = getattr(device, "type", None) or str(device).split(":")[0]
    if device is not None and kind != "cpu":
        raise ValueError(f"{layer}: chainrule computes on the CPU, got device={str(device)!r}")
