"""The two engines as the training loop sees them: how each builds an MLP, passes a
batch through it, scores the outputs and computes a loss, as small functions, so that
one loop (``training.py``) trains either.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import nn
from ..nn import MLP
from ..nn.functional import cross_entropy, hinge_loss, mse_loss
from ..nn.scalar import MLP as ScalarMLP
from ..api.creation import tensor
from ..scalar.value import Value

__all__ = ["Engine", "ENGINES", "SCALAR", "TENSOR", "DigitsCNN", "CNN_DEFAULTS"]


@dataclass(frozen=True)
class Engine:
    """How one engine builds a model, passes a batch through it and scores the result.

    ``build(sizes, activation, seed)`` gives an MLP; ``forward(model, X)`` the outputs of
    a batch, in the engine's own kind; ``scores(outputs)`` them as an ndarray (N,
    outputs); ``losses[name](outputs, targets)`` a mean over the batch;
    ``squared_norm(parameters)`` the sum of p**2. ``test_every_epoch``: whether a pass
    over the test set is cheap enough to make after every epoch.
    """
    name: str
    build: Callable
    forward: Callable
    scores: Callable
    losses: dict
    squared_norm: Callable
    test_every_epoch: bool


def _scalar_mlp(sizes, activation, seed):
    return ScalarMLP(sizes[0], sizes[1:], nonlin=activation, rng=seed)


def _scalar_forward(model, X):
    """One list of output Values per row of X."""
    outputs = []
    for row in X:
        out = model([Value(float(v)) for v in row])
        outputs.append(out if isinstance(out, list) else [out])
    return outputs


def _scalar_scores(outputs):
    return np.array([[v.data for v in out] for out in outputs])


def _scalar_mean(losses):
    return sum(losses) * (1.0 / len(losses))


def _scalar_cross_entropy(outputs, labels):
    return _scalar_mean([_value_cross_entropy(out, int(label))
                         for out, label in zip(outputs, labels)])


def _value_cross_entropy(outputs, label):
    """-log softmax(outputs)[label] with Values, shifted by the max so exp cannot overflow."""
    m = max(v.data for v in outputs)
    total = sum((v - m).exp() for v in outputs)
    return total.log() - (outputs[label] - m)


def _scalar_hinge(outputs, signs):
    """micrograd's SVM loss: the mean of max(0, 1 - y * score), y in {-1, 1}."""
    return _scalar_mean([(1 + -float(sign) * out[0]).relu()
                         for out, sign in zip(outputs, signs)])


def _scalar_squared_error(outputs, targets):
    return _scalar_mean([(out[0] - float(target)) ** 2
                         for out, target in zip(outputs, targets)])


def _scalar_squared_norm(parameters):
    return sum(p * p for p in parameters)


def _tensor_mlp(sizes, activation, seed):
    return MLP(sizes, activation=activation, rng=seed)


class DigitsCNN(nn.Module):
    """A small convolutional network for square grey images given as flat rows:
    (conv 3x3, relu, 2x2 max pool) per entry of ``channels``, then a linear layer to
    the classes. Padding 1 keeps each convolution's size, so each stage halves it.

    >>> model = DigitsCNN(side=28, n_classes=10, seed=0)
    >>> model(cr.ones(2, 784)).shape
    (2, 10)
    """

    def __init__(self, side, n_classes, channels=(8, 16), seed=0):
        self.side, self.n_classes, self.channels = side, n_classes, list(channels)
        stages, size, previous = [], side, 1
        for i, c in enumerate(self.channels):
            stages += [nn.Conv2d(previous, c, 3, padding=1, rng=seed + i), nn.ReLU(),
                       nn.MaxPool2d(2)]
            previous, size = c, size // 2
        self.features = nn.Sequential(*stages)
        self.classifier = nn.Linear(previous * size * size, n_classes, rng=seed)

    @classmethod
    def for_rows(cls, n_inputs, n_classes, seed=0):
        """The CNN for square images given as rows of ``n_inputs`` pixels.

        >>> DigitsCNN.for_rows(64, 10).side
        8
        """
        side = int(round(n_inputs ** 0.5))
        if side * side != n_inputs or side < 4:
            raise ValueError(f"the CNN takes square images of 4x4 pixels or more, as "
                             f"rows; these rows have {n_inputs} features")
        return cls(side, n_classes, seed=seed)

    def forward(self, x):
        """Scores (N, n_classes) of images given as rows (N, side * side)."""
        images = x.reshape((x.shape[0], 1, self.side, self.side))
        return self.classifier(self.features(images).reshape((x.shape[0], -1)))

    def architecture(self):
        """What rebuilds this model."""
        return {"type": "DigitsCNN", "side": self.side, "n_classes": self.n_classes,
                "channels": self.channels}


# The CNN's settings on the image sets (tensor engine): on the bundled MNIST subset it
# reaches about 96% test accuracy, where the MLP's defaults reach 95%.
CNN_DEFAULTS = {
    "mnist": dict(epochs=15, batch_size=64, lr=2e-3, optimizer="adam"),
    "digits": dict(epochs=40, batch_size=32, lr=2e-3, optimizer="adam"),
}


def _tensor_forward(model, X):
    return model(tensor(X))


def _tensor_scores(logits):
    return logits.data


def _tensor_hinge(logits, signs):
    return hinge_loss(logits[:, 0], tensor(signs))


def _tensor_squared_error(logits, targets):
    return mse_loss(logits[:, 0], tensor(targets))


def _tensor_squared_norm(parameters):
    return sum((p * p).sum() for p in parameters)


SCALAR = Engine(
    name="scalar", build=_scalar_mlp, forward=_scalar_forward, scores=_scalar_scores,
    losses={"cross_entropy": _scalar_cross_entropy, "hinge": _scalar_hinge,
            "mse": _scalar_squared_error},
    squared_norm=_scalar_squared_norm,
    test_every_epoch=False)  # a pass over the test set costs as much as training on it

TENSOR = Engine(
    name="tensor", build=_tensor_mlp, forward=_tensor_forward, scores=_tensor_scores,
    losses={"cross_entropy": cross_entropy, "hinge": _tensor_hinge,
            "mse": _tensor_squared_error},
    squared_norm=_tensor_squared_norm,
    test_every_epoch=True)

ENGINES = {"scalar": SCALAR, "tensor": TENSOR}
