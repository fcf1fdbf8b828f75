"""Loss functions for tensors (and plain arrays): each returns the mean over the batch."""

import numpy as np

from .. import derivatives as ops
from ..tensor import Primitive, _raw

__all__ = ["cross_entropy", "mse_loss", "binary_cross_entropy_with_logits", "hinge_loss"]


def _check_labels(logits, labels):
    logits, labels = np.asarray(_raw(logits)), np.asarray(_raw(labels))
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ValueError(f"cross_entropy: logits of shape {logits.shape} and labels of "
                         f"shape {labels.shape}; expected (N, C) and (N,)")
    if labels.dtype.kind not in "iu":
        if not np.all(labels == np.round(labels)):
            raise ValueError("cross_entropy: labels must be integer class indices")
        labels = labels.astype(np.int64)
    if labels.size and (labels.min() < 0 or labels.max() >= logits.shape[1]):
        raise ValueError(f"cross_entropy: labels must lie in [0, {logits.shape[1]}), got "
                         f"values from {labels.min()} to {labels.max()}")
    return labels


@Primitive
def _cross_entropy(logits, labels):
    log_p = ops.log_softmax.forward(logits, axis=-1)
    return -log_p[np.arange(len(labels)), labels].sum() / len(labels)


def _cross_entropy_vjp(g, ans, logits, labels):
    """(softmax(logits) - one_hot(labels)) / N: one fused step instead of four."""
    one_hot = np.zeros(np.shape(logits), dtype=np.result_type(_raw(logits)))
    one_hot[np.arange(len(labels)), labels] = 1
    g = ops.reshape(g, np.shape(g) + (1, 1))  # (a batch of) scalars, against (N, C)
    return (ops.softmax(logits, axis=-1) - one_hot) * (g / len(labels))


_cross_entropy.name = "cross_entropy"
_cross_entropy.batch_safe = True  # its rules address axes from the end
_cross_entropy.defvjp(_cross_entropy_vjp)
_cross_entropy.defjvp(lambda t, ans, logits, labels:
                      ops.sum(_cross_entropy_vjp(1.0, ans, logits, labels) * t, axis=(-2, -1)))


def cross_entropy(logits, labels):
    """Mean negative log-likelihood of integer ``labels`` (N,) under ``logits`` (N, C),
    through a stable log-softmax."""
    return _cross_entropy(logits, _check_labels(logits, labels))


def mse_loss(prediction, target):
    """Mean squared error."""
    diff = prediction - target
    return ops.mean(diff * diff)


def binary_cross_entropy_with_logits(logits, targets):
    """Mean of -[y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))], computed stably as
    softplus(x) - x * y."""
    return ops.mean(ops.softplus(logits) - logits * targets)


def hinge_loss(scores, labels):
    """micrograd's SVM loss: mean of max(0, 1 - y * score), labels in {-1, 1}."""
    return ops.mean(ops.relu(1 - labels * scores))
