"""micrograd's moons demo and microcrad's toy regression, with micrograd's arguments
and results: recipes on the one training loop, ``training.train``.

Each recipe makes its data, takes the data set's defaults for the scalar engine from
``training.DEFAULTS`` (the moons: ``MLP(2, [16, 16, 1])``, micrograd's SVM loss with L2,
SGD with the learning rate falling from 1.0 to 0.1) and returns
``(model, X, y, metrics)``, X and y as lists, the moons' y in {-1, 1} as micrograd has it.

>>> model, X, y, metrics = train_moons(steps=2, show_progress=False)
>>> metrics["steps"], metrics["parameters"], sorted(set(y))
(2, 337, [-1, 1])
"""

from ..data import make_moons, make_toy_regression
from .training import (CNN_DEFAULTS, DEFAULTS, SCALAR, Config, TrainingDiverged, as_dataset,
                       load_dataset, predictions, train)

__all__ = ["train_moons", "train_toy", "train_mnist_cnn", "moons_loss", "TrainingDiverged"]


def moons_loss(model, X, y, alpha=1e-4):
    """micrograd's loss: mean hinge loss max(0, 1 - y * score) plus alpha * sum(p**2).

    ``y`` holds -1 and 1. Returns (loss Value, training accuracy as a fraction): the
    loss the moons recipe trains with, on the scalar engine.
    """
    outputs = SCALAR.forward(model, X)
    loss = SCALAR.losses["hinge"](outputs, y) + alpha * SCALAR.squared_norm(model.parameters())
    classes = [int(sign > 0) for sign in y]
    correct = sum(predictions(SCALAR.scores(outputs)) == classes)
    return loss, correct / len(y)


def _scalar_config(dataset, steps, lr, seed):
    """The data set's scalar defaults, with micrograd's arguments: steps, lr, seed."""
    return Config(dataset, **{**DEFAULTS[(dataset, "scalar")], "engine": "scalar",
                              "epochs": steps, "lr": lr, "seed": seed})


def train_moons(steps=100, lr=1.0, seed=0, n_samples=100, noise=0.1, show_progress=True):
    """micrograd's demo: MLP(2, [16, 16, 1]) on two moons, full batch, SVM loss.

    The learning rate decays linearly from ``lr`` to ``0.1 * lr`` (micrograd's
    ``1.0 - 0.9 * k / 100``). Returns ``(model, X, y, metrics)`` with y in {-1, 1}.
    """
    X, labels = make_moons(n_samples, noise=noise, seed=seed)
    model, metrics = train(_scalar_config("moons", steps, lr, seed), as_dataset(X, labels),
                           show_progress)
    return model, X.tolist(), [2 * int(label) - 1 for label in labels], metrics


def train_toy(steps=500, lr=0.1, seed=0, n_samples=64, show_progress=True):
    """microcrad's toy regression: MLP(2, [8, 8, 1]) with tanh fits a smooth bump.

    Full-batch gradient descent on the mean squared error. Returns
    ``(model, X, y, metrics)``; ``metrics["mse"]`` is the final training error.
    """
    X, y = make_toy_regression(n_samples, seed=seed)
    model, metrics = train(_scalar_config("toy", steps, lr, seed),
                           as_dataset(X, y, regression=True), show_progress)
    return model, X.tolist(), y.tolist(), metrics


def train_mnist_cnn(epochs=None, seed=0, n_train=None, show_progress=True):
    """A small CNN on the bundled 5,000 MNIST digits (``chainrule train mnist --model
    cnn``): conv 3x3 (8 channels), relu, 2x2 max pool, conv 3x3 (16), relu, max pool,
    linear; Adam, batches of 64, 15 epochs by default (about 96% test accuracy, where
    the MLP's defaults reach 95%).

    ``n_train`` keeps only the first n training images (a quick run); the test set is
    always the whole held-out 1,000. Returns ``(model, metrics)``.

    >>> model, metrics = train_mnist_cnn(epochs=1, n_train=64, show_progress=False)
    >>> metrics["steps"], metrics["config"]["model"]
    (1, 'cnn')
    """
    settings = dict(CNN_DEFAULTS["mnist"])
    if epochs is not None:
        settings["epochs"] = epochs
    config = Config("mnist", model="cnn", seed=seed, **settings)
    data = load_dataset("mnist", seed)
    if n_train is not None:
        data = dict(data, X_train=data["X_train"][:n_train], y_train=data["y_train"][:n_train])
    return train(config, data, show_progress)
