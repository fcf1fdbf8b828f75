"""PyTorch's counting functions, ``torch.histc`` and ``torch.histogram``: how the values
of a tensor spread (Karpathy's lectures look at activations and gradients this way).
Counts have no derivative: the results are Tensors outside the graph, of the input's
float dtype, as torch's are.
"""

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..primitive import raw
from ..tensor import Tensor

__all__ = ["histc", "histogram"]


def _numbers(input: ArrayLike, name: str) -> np.ndarray:
    data = np.asarray(raw(input))
    if data.dtype.kind not in "f":
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {data.dtype} "
                        f"(as torch.{name}; cast with .double() or .float())")
    return data


def histc(input: ArrayLike, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """How many entries fall in each of ``bins`` equal bins from ``min`` to ``max``
    (torch.histc): with ``min == max == 0``, from the data's smallest to its largest
    entry; entries outside are left out, and ``max`` itself counts in the last bin.

    >>> cr.histc(cr.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    data = _numbers(input, "histc")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"histc: bins must be a positive int, got {bins!r}")
    low, high = float(min), float(max)
    if low == high == 0 and data.size:
        low, high = float(data.min()), float(data.max())
    if low > high:
        raise ValueError(f"histc: max ({high}) must be larger than min ({low})")
    if low == high:  # one value: torch widens the range by 1 each way
        low, high = low - 1, high + 1
    counts, _ = np.histogram(data, bins=int(bins), range=(low, high))
    return Tensor._make(counts.astype(data.dtype))


class HistogramResult(NamedTuple):
    """``torch.histogram``'s pair: the counts (or densities) and the bins' edges."""
    hist: Tensor
    bin_edges: Tensor


def histogram(input: ArrayLike, bins: Any = 100, *, range: tuple[float, float] | None = None,
              weight: ArrayLike | None = None, density: bool = False) -> HistogramResult:
    """``(hist, bin_edges)`` of the entries (torch.histogram, as np.histogram): ``bins``
    equal bins over ``range`` (the data's by default), or the edges given as a tensor;
    ``weight`` counts each entry by its weight; ``density=True`` divides by the total
    and the bins' widths, so that the histogram integrates to 1.

    >>> hist, edges = cr.histogram(cr.tensor([1.0, 2.0, 1.0, 4.0]), bins=3)
    >>> hist, edges
    (tensor([2., 1., 1.]), tensor([1., 2., 3., 4.]))
    """
    data = _numbers(input, "histogram")
    edges = bins if isinstance(bins, (int, np.integer)) else np.asarray(raw(bins))
    hist, edges = np.histogram(data, bins=edges, range=range, density=density,
                               weights=None if weight is None else np.asarray(raw(weight)))
    return HistogramResult(Tensor._make(hist.astype(data.dtype)),
                           Tensor._make(edges.astype(data.dtype)))
