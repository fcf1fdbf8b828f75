"""Losses as modules, PyTorch-shaped: each is the function of ``nn.functional`` of the
same name, with its ``reduction`` (and options) fixed at construction.

>>> loss_fn = cr.nn.L1Loss()
>>> loss_fn(cr.tensor([1.0, 2.0]), cr.tensor([0.0, 4.0])).item()
1.5
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..rules.common import Result
from ..tensor import Tensor
from . import distances, embedding_losses, likelihood_losses, loss_functions as F
from . import sequence_losses
from .construction import check_device
from .layers import Linear
from .module import Module

__all__ = ["CrossEntropyLoss", "MSELoss", "BCEWithLogitsLoss", "NLLLoss", "L1Loss",
           "SmoothL1Loss", "HuberLoss", "BCELoss", "CosineSimilarity", "PairwiseDistance",
           "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss",
           "HingeEmbeddingLoss", "CosineEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
           "MultiMarginLoss", "MultiLabelMarginLoss", "CTCLoss", "LinearCrossEntropyLoss"]


def _weight_buffer(module, name, weight):
    """Keep a loss's weights as PyTorch does, a buffer (in ``state_dict()`` when set)."""
    if weight is not None and not isinstance(weight, (Tensor, np.ndarray)):
        F._weights(type(module).__name__, name, weight, np.zeros(0))  # (refuses a string)
        weight = np.asarray(weight, dtype=float)
    module.register_buffer(name, weight)


class CrossEntropyLoss(Module):
    """``nn.functional.cross_entropy`` as a module: logits (N, C) (or (N, C, d1, ...)),
    integer labels (N,) or class probabilities of the logits' shape; per-class
    ``weight``; ``reduction`` "mean" (the default), "sum" or "none" (one loss per row),
    ``label_smoothing`` in [0, 1], and ``ignore_index`` (labels equal to it count for
    nothing), as in PyTorch. The weights are a buffer, as PyTorch's.

    >>> loss_fn = cr.nn.CrossEntropyLoss()
    >>> logits = cr.tensor([[0.0, 0.0], [0.0, 0.0]])
    >>> round(loss_fn(logits, np.array([0, 1])).item(), 4)    # log 2: a coin toss
    0.6931
    >>> weighted = cr.nn.CrossEntropyLoss(weight=np.array([1.0, 3.0]), reduction="sum")
    >>> round(weighted(logits, np.array([0, 1])).item(), 4)   # (1 + 3) log 2
    2.7726
    """

    def __init__(self, weight: ArrayLike | None = None, *, reduction: str = "mean",
                 label_smoothing: float = 0.0, ignore_index: int = -100) -> None:
        _weight_buffer(self, "weight", weight)
        self.reduction = F._check_reduction("CrossEntropyLoss", reduction)
        self.label_smoothing = F._check_label_smoothing("CrossEntropyLoss", label_smoothing)
        self.ignore_index = ignore_index

    def forward(self, logits: ArrayLike, labels: ArrayLike) -> Result:
        """Cross-entropy of integer labels (N,) under logits (N, C), reduced."""
        return F.cross_entropy(logits, labels, self.weight, reduction=self.reduction,
                               label_smoothing=self.label_smoothing,
                               ignore_index=self.ignore_index)


class MSELoss(Module):
    """``nn.functional.mse_loss`` as a module: the mean of (prediction - target)**2
    (``reduction="sum"``: the sum; ``"none"``: each entry).

    >>> cr.nn.MSELoss()(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 4.0])).item()   # (0 + 4) / 2
    2.0
    """

    def __init__(self, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("MSELoss", reduction)

    def forward(self, prediction: ArrayLike, target: ArrayLike) -> Result:
        """(prediction - target) ** 2, reduced."""
        return F.mse_loss(prediction, target, reduction=self.reduction)


class BCEWithLogitsLoss(Module):
    """``nn.functional.binary_cross_entropy_with_logits`` as a module: ``weight``
    multiplies each loss, ``pos_weight`` (one per class) the positive term; both are
    buffers, as PyTorch's. ``reduction`` "mean" (the default), "sum" or "none".

    >>> loss_fn = cr.nn.BCEWithLogitsLoss()
    >>> round(loss_fn(cr.tensor([0.0, 0.0]), cr.tensor([1.0, 0.0])).item(), 4)  # log 2
    0.6931
    """

    def __init__(self, weight: ArrayLike | None = None, *, reduction: str = "mean",
                 pos_weight: ArrayLike | None = None) -> None:
        _weight_buffer(self, "weight", weight)
        _weight_buffer(self, "pos_weight", pos_weight)
        self.reduction = F._check_reduction("BCEWithLogitsLoss", reduction)

    def forward(self, logits: ArrayLike, targets: ArrayLike) -> Result:
        """Binary cross-entropy of targets in [0, 1] under logits, reduced."""
        return F.binary_cross_entropy_with_logits(logits, targets, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class NLLLoss(Module):
    """``nn.functional.nll_loss`` as a module: log-probabilities (N, C), labels (N,);
    ``weight``, ``ignore_index`` and ``reduction`` as in PyTorch.

    >>> log_p = cr.log(cr.tensor([[0.5, 0.5]]))
    >>> round(cr.nn.NLLLoss()(log_p, [0]).item(), 4)
    0.6931
    """

    def __init__(self, weight: ArrayLike | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        _weight_buffer(self, "weight", weight)
        self.ignore_index = ignore_index
        self.reduction = F._check_reduction("NLLLoss", reduction)

    def forward(self, log_probs: ArrayLike, labels: ArrayLike) -> Result:
        """The negative log-likelihood of the labels, reduced."""
        return F.nll_loss(log_probs, labels, self.weight, self.ignore_index, self.reduction)


class L1Loss(Module):
    """``nn.functional.l1_loss`` as a module: |prediction - target|, reduced.

    >>> cr.nn.L1Loss(reduction="sum")(cr.tensor([1.0, 2.0]), cr.tensor([0.0, 4.0])).item()
    3.0
    """

    def __init__(self, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("L1Loss", reduction)

    def forward(self, prediction: ArrayLike, target: ArrayLike) -> Result:
        """|prediction - target|, reduced."""
        return F.l1_loss(prediction, target, self.reduction)


class SmoothL1Loss(Module):
    """``nn.functional.smooth_l1_loss`` as a module.

    >>> cr.nn.SmoothL1Loss()(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0])).item()
    1.3125
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        self.reduction, self.beta = F._check_reduction("SmoothL1Loss", reduction), beta

    def forward(self, prediction: ArrayLike, target: ArrayLike) -> Result:
        """The smooth L1 loss, reduced."""
        return F.smooth_l1_loss(prediction, target, self.reduction, self.beta)


class HuberLoss(Module):
    """``nn.functional.huber_loss`` as a module.

    >>> cr.nn.HuberLoss(delta=2.0)(cr.tensor([3.0]), cr.tensor([0.0])).item()
    4.0
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        self.reduction, self.delta = F._check_reduction("HuberLoss", reduction), delta

    def forward(self, prediction: ArrayLike, target: ArrayLike) -> Result:
        """The Huber loss, reduced."""
        return F.huber_loss(prediction, target, self.reduction, self.delta)


class BCELoss(Module):
    """``nn.functional.binary_cross_entropy`` as a module, on probabilities; ``weight``
    (a buffer, as PyTorch's) multiplies each loss.

    >>> round(cr.nn.BCELoss()(cr.tensor([0.5]), cr.tensor([0.0])).item(), 4)
    0.6931
    """

    def __init__(self, weight: ArrayLike | None = None, *, reduction: str = "mean") -> None:
        _weight_buffer(self, "weight", weight)
        self.reduction = F._check_reduction("BCELoss", reduction)

    def forward(self, probabilities: ArrayLike, targets: ArrayLike) -> Result:
        """Binary cross-entropy of the targets under the probabilities, reduced."""
        return F.binary_cross_entropy(probabilities, targets, self.weight,
                                      reduction=self.reduction)


class CosineSimilarity(Module):
    """``nn.functional.cosine_similarity`` as a module, ``dim`` and ``eps`` fixed.

    >>> cr.nn.CosineSimilarity()(cr.tensor([[1.0, 0.0]]), cr.tensor([[3.0, 0.0]])).data
    array([1.])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        self.dim, self.eps = dim, eps

    def forward(self, x1: ArrayLike, x2: ArrayLike) -> Result:
        """The cosine similarity of x1 and x2 along ``dim``."""
        return distances.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``nn.functional.pairwise_distance`` as a module: ``p``, ``eps`` and ``keepdim``
    fixed.

    >>> cr.nn.PairwiseDistance(eps=0.0)(cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0]])).data
    array([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: ArrayLike, x2: ArrayLike) -> Result:
        """The p-norm of x1 - x2 + eps along the last axis."""
        return distances.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class KLDivLoss(Module):
    """``nn.functional.kl_div`` as a module: log-probabilities in, probabilities (or
    log-probabilities, ``log_target=True``) as targets; ``reduction`` "mean", "sum",
    "none" or "batchmean".

    >>> loss_fn = cr.nn.KLDivLoss(reduction="batchmean")
    >>> loss_fn(cr.log(cr.tensor([[0.5, 0.5]])), cr.tensor([[0.5, 0.5]])).item()
    0.0
    """

    def __init__(self, *, reduction: str = "mean", log_target: bool = False) -> None:
        self.reduction = likelihood_losses._check_kl_reduction("KLDivLoss", reduction)
        self.log_target = log_target

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """The divergence of the target from the input, reduced."""
        return likelihood_losses.kl_div(input, target, reduction=self.reduction,
                                        log_target=self.log_target)


class PoissonNLLLoss(Module):
    """``nn.functional.poisson_nll_loss`` as a module: ``log_input``, ``full``, ``eps``
    and ``reduction`` fixed.

    >>> cr.nn.PoissonNLLLoss()(cr.tensor([0.0]), cr.tensor([2.0])).item()
    1.0
    """

    def __init__(self, log_input: bool = True, full: bool = False, *, eps: float = 1e-8,
                 reduction: str = "mean") -> None:
        self.log_input, self.full, self.eps = log_input, full, eps
        self.reduction = F._check_reduction("PoissonNLLLoss", reduction)

    def forward(self, log_input: ArrayLike, target: ArrayLike) -> Result:
        """The Poisson negative log-likelihood of the target counts, reduced."""
        return likelihood_losses.poisson_nll_loss(log_input, target, self.log_input,
                                                  self.full, eps=self.eps,
                                                  reduction=self.reduction)


class GaussianNLLLoss(Module):
    """``nn.functional.gaussian_nll_loss`` as a module: ``full``, ``eps`` and
    ``reduction`` fixed; the variances come with each call.

    >>> loss_fn = cr.nn.GaussianNLLLoss()
    >>> loss_fn(cr.tensor([1.0]), cr.tensor([1.0]), cr.tensor([1.0])).item()
    0.0
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        self.full, self.eps = full, eps
        self.reduction = F._check_reduction("GaussianNLLLoss", reduction)

    def forward(self, input: ArrayLike, target: ArrayLike, var: ArrayLike | float) -> Result:
        """The Gaussian negative log-likelihood of the target, reduced."""
        return likelihood_losses.gaussian_nll_loss(input, target, var, self.full, self.eps,
                                                   self.reduction)


class MarginRankingLoss(Module):
    """``nn.functional.margin_ranking_loss`` as a module.

    >>> cr.nn.MarginRankingLoss()(cr.tensor([1.0]), cr.tensor([0.0]), cr.tensor([-1.0])).item()
    1.0
    """

    def __init__(self, margin: float = 0.0, *, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("MarginRankingLoss", reduction)
        self.margin = margin

    def forward(self, input1: ArrayLike, input2: ArrayLike, target: ArrayLike) -> Result:
        """max(0, -target (input1 - input2) + margin), reduced."""
        return embedding_losses.margin_ranking_loss(input1, input2, target, self.margin,
                                                    reduction=self.reduction)


class HingeEmbeddingLoss(Module):
    """``nn.functional.hinge_embedding_loss`` as a module.

    >>> cr.nn.HingeEmbeddingLoss()(cr.tensor([0.25]), cr.tensor([-1.0])).item()
    0.75
    """

    def __init__(self, margin: float = 1.0, *, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("HingeEmbeddingLoss", reduction)
        self.margin = margin

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """The hinge embedding loss of the distances, reduced."""
        return embedding_losses.hinge_embedding_loss(input, target, self.margin,
                                                     reduction=self.reduction)


class CosineEmbeddingLoss(Module):
    """``nn.functional.cosine_embedding_loss`` as a module.

    >>> loss_fn = cr.nn.CosineEmbeddingLoss()
    >>> round(loss_fn(cr.tensor([[1.0, 0.0]]), cr.tensor([[2.0, 0.0]]), cr.tensor([-1.0])).item(), 4)
    1.0
    """

    def __init__(self, margin: float = 0.0, *, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("CosineEmbeddingLoss", reduction)
        self.margin = margin

    def forward(self, input1: ArrayLike, input2: ArrayLike, target: ArrayLike) -> Result:
        """The cosine embedding loss of the pairs, reduced."""
        return embedding_losses.cosine_embedding_loss(input1, input2, target, self.margin,
                                                      reduction=self.reduction)


class SoftMarginLoss(Module):
    """``nn.functional.soft_margin_loss`` as a module.

    >>> round(cr.nn.SoftMarginLoss()(cr.tensor([0.0]), cr.tensor([-1.0])).item(), 4)
    0.6931
    """

    def __init__(self, *, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("SoftMarginLoss", reduction)

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """log(1 + exp(-target input)), reduced."""
        return embedding_losses.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(Module):
    """``nn.functional.multilabel_soft_margin_loss`` as a module; ``weight`` (one per
    class) is a buffer, as PyTorch's.

    >>> round(cr.nn.MultiLabelSoftMarginLoss()(cr.tensor([[0.0]]), cr.tensor([[1.0]])).item(), 4)
    0.6931
    """

    def __init__(self, weight: ArrayLike | None = None, *, reduction: str = "mean") -> None:
        _weight_buffer(self, "weight", weight)
        self.reduction = F._check_reduction("MultiLabelSoftMarginLoss", reduction)

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """The mean over the labels of their binary cross-entropies, reduced."""
        return embedding_losses.multilabel_soft_margin_loss(input, target, self.weight,
                                                            reduction=self.reduction)


class TripletMarginLoss(Module):
    """``nn.functional.triplet_margin_loss`` as a module.

    >>> cr.nn.TripletMarginLoss(eps=0.0)(cr.tensor([[0.0]]), cr.tensor([[1.0]]),
    ...                                  cr.tensor([[1.5]])).item()
    0.5
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, *, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("TripletMarginLoss", reduction)
        embedding_losses._positive_margin("TripletMarginLoss", margin)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: ArrayLike, positive: ArrayLike, negative: ArrayLike) -> Result:
        """The triplet margin loss, reduced."""
        return embedding_losses.triplet_margin_loss(anchor, positive, negative, self.margin,
                                                    self.p, self.eps, self.swap,
                                                    reduction=self.reduction)


class TripletMarginWithDistanceLoss(Module):
    """``nn.functional.triplet_margin_with_distance_loss`` as a module: the default
    distance is a ``PairwiseDistance()`` submodule, as in PyTorch.

    >>> cr.nn.TripletMarginWithDistanceLoss()
    TripletMarginWithDistanceLoss(
      (distance_function): PairwiseDistance()
    )
    """

    def __init__(self, *, distance_function: Callable[[Any, Any], Any] | None = None,
                 margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("TripletMarginWithDistanceLoss", reduction)
        embedding_losses._positive_margin("TripletMarginWithDistanceLoss", margin)
        self.distance_function = (PairwiseDistance() if distance_function is None
                                  else distance_function)
        self.margin, self.swap = margin, swap

    def forward(self, anchor: ArrayLike, positive: ArrayLike, negative: ArrayLike) -> Result:
        """The triplet margin loss under ``distance_function``, reduced."""
        return embedding_losses.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(Module):
    """``nn.functional.multi_margin_loss`` as a module; ``weight`` (one per class) is a
    buffer, as PyTorch's.

    >>> loss_fn = cr.nn.MultiMarginLoss()
    >>> round(loss_fn(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), np.array([3])).item(), 4)
    0.325
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: ArrayLike | None = None, *,
                 reduction: str = "mean") -> None:
        if isinstance(p, (bool, np.bool_)) or p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: p must be 1 or 2, got {p!r}")
        _weight_buffer(self, "weight", weight)
        self.reduction = F._check_reduction("MultiMarginLoss", reduction)
        self.p, self.margin = p, margin

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """The multi-class hinge loss of the target classes, reduced."""
        return embedding_losses.multi_margin_loss(input, target, self.p, self.margin,
                                                  self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(Module):
    """``nn.functional.multilabel_margin_loss`` as a module.

    >>> loss_fn = cr.nn.MultiLabelMarginLoss()
    >>> round(loss_fn(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), np.array([[3, 0, -1, 1]])).item(), 4)
    0.85
    """

    def __init__(self, *, reduction: str = "mean") -> None:
        self.reduction = F._check_reduction("MultiLabelMarginLoss", reduction)

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """The multi-label hinge loss of the listed classes, reduced."""
        return embedding_losses.multilabel_margin_loss(input, target,
                                                       reduction=self.reduction)


class CTCLoss(Module):
    """``nn.functional.ctc_loss`` as a module: ``blank``, ``reduction`` and
    ``zero_infinity`` fixed; the lengths come with each call.

    >>> loss_fn = cr.nn.CTCLoss()
    >>> log_probs = cr.log_softmax(cr.zeros(3, 1, 3), axis=-1)
    >>> round(loss_fn(log_probs, [[1, 2]], [3], [2]).item(), 4)    # mean: / 2 labels
    0.8432
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        self.blank, self.zero_infinity = blank, zero_infinity
        self.reduction = F._check_reduction("CTCLoss", reduction)

    def forward(self, log_probs: ArrayLike, targets: ArrayLike, input_lengths: ArrayLike,
                target_lengths: ArrayLike) -> Result:
        """The CTC loss of the targets given the log-probabilities, reduced."""
        return sequence_losses.ctc_loss(log_probs, targets, input_lengths, target_lengths,
                                        self.blank, self.reduction, self.zero_infinity)


class LinearCrossEntropyLoss(Module):
    """torch's ``nn.LinearCrossEntropyLoss``: a ``linear`` layer to ``num_classes`` (times
    ``out_features``) logits and the cross-entropy of the targets under them, in one
    module (``F.linear_cross_entropy``); the layer's weight (num_classes * prod(out),
    in_features) starts U(+-1/sqrt(in_features)), as torch's.

    >>> loss_fn = cr.nn.LinearCrossEntropyLoss(3, 4, rng=0)
    >>> loss_fn(cr.ones(2, 3), np.array([0, 3])).shape, loss_fn.linear.weight.shape
    ((), (4, 3))
    """

    def __init__(self, in_features: int, num_classes: int, *,
                 out_features: tuple[int, ...] = (), bias: bool = False,
                 device: str | None = None, dtype: Any = None, reduction: str = "mean",
                 weight: ArrayLike | None = None, ignore_index: int | None = None,
                 label_smoothing: float = 0.0, options: object = None,
                 rng: Any = None) -> None:
        check_device("LinearCrossEntropyLoss", device)
        self.num_classes, self.out_features = int(num_classes), tuple(out_features)
        size = self.num_classes * int(np.prod(self.out_features, dtype=np.int64))
        self.linear = Linear(in_features, size, bias, init="torch", rng=rng,
                             dtype=np.float64 if dtype is None else dtype)
        _weight_buffer(self, "weight", weight)
        self.reduction = F._check_reduction("LinearCrossEntropyLoss", reduction)
        self.label_smoothing = F._check_label_smoothing("LinearCrossEntropyLoss",
                                                        label_smoothing)
        self.ignore_index, self.options = ignore_index, options

    def forward(self, input: ArrayLike, target: ArrayLike) -> Result:
        """The cross-entropy of the targets under the layer's logits of input."""
        shape = (self.num_classes, *self.out_features)
        weight = ops.reshape(self.linear.weight, shape + (self.linear.in_features,))
        bias = None if self.linear.bias is None else ops.reshape(self.linear.bias, shape)
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
