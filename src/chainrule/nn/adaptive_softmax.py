"""torch's ``nn.AdaptiveLogSoftmaxWithLoss`` (Grave et al.'s adaptive softmax): the
frequent classes scored by a head, the rest in clusters the head scores as a whole and
a small two-layer tail splits, with torch's submodule names so its state_dict loads.

>>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, [4], rng=0)
>>> asm.log_prob(cr.ones(2, 8)).shape
(2, 10)
"""

import math
from collections import namedtuple
from collections.abc import Sequence
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..primitive import raw, shape_of
from ..rules.common import Result
from .construction import RNG, initial_generator
from .containers import ModuleList
from .layers import Linear, Sequential
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss", "ASMOutput"]

# torch's name for the pair is private (_ASMoutput); its fields are these.
ASMOutput = namedtuple("ASMOutput", ["output", "loss"])
ASMOutput.__doc__ = """What ``AdaptiveLogSoftmaxWithLoss`` returns: ``output``, the log
probability of each target, and ``loss``, the mean of their negatives.

>>> ASMOutput(output=1.0, loss=2.0).loss
2.0
"""


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive log-softmax over ``n_classes`` (PyTorch's
    ``nn.AdaptiveLogSoftmaxWithLoss``): classes below ``cutoffs[0]`` are scored by
    ``head`` (Linear(in_features, cutoffs[0] + number of clusters, bias=head_bias)),
    and cluster i (classes cutoffs[i] to cutoffs[i + 1], the last ending at n_classes)
    by ``tail[i]``, Linear(in_features, in_features // div_value ** (i + 1)) then
    Linear(to the cluster's size), both without bias; a class's log probability is its
    cluster's head score plus its own within the cluster.

    ``forward(input, target)`` gives ``(output, loss)``: input (N, in_features) with
    target (N,) class indices, or (in_features,) with one index; ``log_prob(input)``
    the full (N, n_classes) log probabilities and ``predict(input)`` their argmax.
    Weights are drawn as chainrule's Linear draws them (``rng``), not as torch does.

    >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, [4], div_value=2.0, rng=0)
    >>> out = asm(cr.ones(3, 8), np.array([0, 5, 9]))
    >>> out.output.shape, out.loss.shape
    ((3,), ())
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs must not be empty")
        if (cutoffs != sorted(cutoffs) or len(set(cutoffs)) != len(cutoffs)
                or not all(isinstance(c, Integral) and 0 < c <= n_classes - 1
                           for c in cutoffs)):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: cutoffs {cutoffs} for n_classes "
                             f"{n_classes}, expected unique increasing ints in "
                             f"[1, n_classes - 1]")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        rng = initial_generator(rng)
        self.head = Linear(in_features, self.head_size, bias=head_bias, rng=rng, dtype=dtype)
        self.tail = ModuleList([
            Sequential(Linear(in_features, int(in_features // div_value ** (i + 1)),
                              bias=False, rng=rng, dtype=dtype),
                       Linear(int(in_features // div_value ** (i + 1)),
                              self.cutoffs[i + 1] - self.cutoffs[i], bias=False, rng=rng,
                              dtype=dtype))
            for i in range(self.n_clusters)])

    def _full_log_prob(self, x):
        head = ops.log_softmax(self.head(x), axis=-1)
        parts = [head[:, :self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            own = ops.log_softmax(cluster(x), axis=-1)
            parts.append(own + head[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return ops.concatenate(parts, axis=-1)

    def _check_input(self, what, x, dims):
        shape = shape_of(x)
        if len(shape) not in dims or shape[-1] != self.in_features:
            kinds = " or ".join("(N, in_features)" if d == 2 else "(in_features,)"
                                for d in dims)
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss.{what}: input of shape {shape}, "
                             f"expected {kinds} with in_features = {self.in_features}")
        return shape

    def log_prob(self, x: ArrayLike) -> Result:
        """The log probability of every class, (N, n_classes), for x (N, in_features).

        >>> asm = AdaptiveLogSoftmaxWithLoss(4, 6, [2], rng=0)
        >>> bool(np.allclose(np.exp(asm.log_prob(cr.ones(1, 4)).data).sum(), 1.0))
        True
        """
        self._check_input("log_prob", x, (2,))
        return self._full_log_prob(x)

    def predict(self, x: ArrayLike) -> np.ndarray:
        """The most probable class of each row of x (N, in_features): int64 (N,).

        >>> asm = AdaptiveLogSoftmaxWithLoss(4, 6, [2], rng=0)
        >>> asm.predict(cr.ones(3, 4)).shape
        (3,)
        """
        self._check_input("predict", x, (2,))
        return np.argmax(np.asarray(raw(self._full_log_prob(x))), axis=-1)

    def forward(self, x: ArrayLike, target: ArrayLike) -> ASMOutput:
        """``(output, loss)``: the log probability of each target class and the mean of
        their negatives, for x (N, in_features) and target (N,), or x (in_features,) and
        one target."""
        target = np.asarray(raw(target))
        if target.ndim > 1 or not np.issubdtype(target.dtype, np.integer):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: target of shape {target.shape} "
                             f"and dtype {target.dtype}, expected integer class indices, "
                             f"(N,) or one")
        shape = self._check_input("forward", x, (target.ndim + 1,))
        if target.ndim == 1 and shape[0] != target.shape[0]:
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: input of shape {shape} and "
                             f"target of shape {target.shape}, expected the same batch size")
        if target.size and (target.min() < 0 or target.max() >= self.n_classes):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: targets in [{target.min()}, "
                             f"{target.max()}], expected them in [0, {self.n_classes - 1}]")
        batched = target.ndim == 1
        rows = x if batched else ops.reshape(x, (1, self.in_features))
        full = self._full_log_prob(rows)
        output = ops.take_along_axis(full, target.reshape(-1, 1).astype(np.int64), axis=-1)
        output = ops.reshape(output, (math.prod(target.shape[:1]) if batched else 1,))
        loss = ops.mean(-output)
        return ASMOutput(output if batched else ops.reshape(output, ()), loss)

    def extra_repr(self) -> str:
        """Nothing: torch shows only the submodules."""
        return ""
