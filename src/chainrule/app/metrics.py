"""How well a model does on a data set: its outputs, the classes they predict, accuracy
and the confusion matrix for a classifier, the mean squared error for a regression.

>>> confusion_matrix([0, 1, 1], [0, 1, 0], n_classes=2).tolist()
[[1, 0], [1, 1]]
"""

import numpy as np

from ..modes import no_grad
from .training_engines import ENGINES

__all__ = ["scores", "predictions", "accuracy", "confusion_matrix", "evaluate",
           "mean_squared_error"]


def scores(model, X, engine, batch=2048):
    """The model's outputs for every row of X, as an ndarray (N, outputs)."""
    adapter = ENGINES[engine]
    X = np.asarray(X)
    with no_grad():
        return np.concatenate([adapter.scores(adapter.forward(model, X[i:i + batch]))
                               for i in range(0, len(X), batch)])


def predictions(scores):
    """The class of each row of scores: the largest score's, or with one score, 1 where
    it is positive (the hinge loss's sign).

    >>> predictions(np.array([[0.1, 0.9], [2.0, -1.0]])).tolist()
    [1, 0]
    >>> predictions(np.array([[-0.5], [0.5]])).tolist()
    [0, 1]
    """
    return scores.argmax(axis=1) if scores.shape[1] > 1 else (scores[:, 0] > 0).astype(int)


def accuracy(model, X, y, engine):
    """(the fraction of rows classified right, the predicted classes)."""
    predicted = predictions(scores(model, X, engine))
    return float(np.mean(predicted == y)), predicted


def confusion_matrix(y, predicted, n_classes):
    """Counts of (true class, predicted class)."""
    matrix = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(matrix, (np.asarray(y), np.asarray(predicted)), 1)
    return matrix


def evaluate(model, data, engine="tensor"):
    """Test accuracy and the confusion matrix (rows: true class, columns: predicted);
    the training set's when the data set has no test set."""
    X, y = (data["X_test"], data["y_test"]) if data["X_test"] is not None else (
        data["X_train"], data["y_train"])
    acc, predicted = accuracy(model, X, y, engine)
    # a model with more outputs than the set has classes can predict a class it lacks
    n_classes = max(data["n_classes"], int(np.max(predicted, initial=-1)) + 1)
    return acc, confusion_matrix(y, predicted, n_classes), predicted


def mean_squared_error(model, data, engine="tensor"):
    """A regression's error on its test set, or its training set when it has none; a
    model's first output is its prediction."""
    X, y = (data["X_test"], data["y_test"]) if data["X_test"] is not None else (
        data["X_train"], data["y_train"])
    predicted = scores(model, X, engine)[:, 0]
    return float(np.mean((predicted - np.asarray(y, dtype=float)) ** 2))
