"""Training recipes for the scalar engine: micrograd's moons demo and microcrad's toy
regression. Each returns the trained model and a dict of metrics; the CLI prints them.

The loops are written out, as in micrograd's notebook: forward, zero_grad, backward,
one step of gradient descent. (The optimizers of ``chainrule.optim`` come later.)
"""

import math
import time

from .data import make_moons, make_toy_regression
from .nn import MLP
from .progress import progress
from .value import Value

__all__ = ["train_moons", "train_toy", "moons_loss", "TrainingDiverged"]


class TrainingDiverged(ArithmeticError):
    """The loss stopped being a finite number: the learning rate is too large."""


def _check_finite(task, step, loss, lr):
    if not math.isfinite(loss):
        raise TrainingDiverged(f"{task}: the loss became {loss} at step {step + 1}; "
                               f"training diverged, try a smaller learning rate than {lr}")


def moons_loss(model, X, y, alpha=1e-4):
    """micrograd's loss: mean hinge loss max(0, 1 - y * score) plus alpha * sum(p**2).

    ``y`` holds -1 and 1. Returns (loss Value, training accuracy as a fraction).
    """
    scores = [model([Value(a), Value(b)]) for a, b in X]
    losses = [(1 + -yi * score).relu() for yi, score in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg_loss = alpha * sum(p * p for p in model.parameters())
    correct = sum((yi > 0) == (score.data > 0) for yi, score in zip(y, scores))
    return data_loss + reg_loss, correct / len(y)


def train_moons(steps=100, lr=1.0, seed=0, n_samples=100, noise=0.1, show_progress=True):
    """micrograd's demo: MLP(2, [16, 16, 1]) on two moons, full batch, SVM loss.

    The learning rate decays linearly from ``lr`` to ``0.1 * lr`` (micrograd's
    ``1.0 - 0.9 * k / 100``). Returns ``(model, X, y, metrics)`` with y in {-1, 1}.
    """
    X, labels = make_moons(n_samples, noise=noise, seed=seed)
    X = X.tolist()
    y = [2 * int(label) - 1 for label in labels]
    model = MLP(2, [16, 16, 1], rng=seed)
    bar = progress(steps, "moons", enabled=show_progress)
    start = time.perf_counter()
    history = []
    for k in range(steps):
        loss, accuracy = moons_loss(model, X, y)
        _check_finite("moons", k, loss.data, lr)
        model.zero_grad()
        loss.backward()
        rate = lr * (1.0 - 0.9 * k / steps)
        for p in model.parameters():
            p.data -= rate * p.grad
        history.append(loss.data)
        bar.set_postfix_str(f"loss {loss.data:.4f} acc {accuracy:.0%}")
        bar.update()
    bar.close()
    loss, accuracy = moons_loss(model, X, y)  # after the last update
    metrics = {
        "task": "moons", "engine": "scalar", "steps": steps, "lr": lr, "seed": seed,
        "loss": loss.data, "train_accuracy": accuracy,
        "wall_time_s": time.perf_counter() - start,
        "parameters": len(model.parameters()), "loss_history": history,
    }
    return model, X, y, metrics


def train_toy(steps=500, lr=0.1, seed=0, n_samples=64, show_progress=True):
    """microcrad's toy regression: MLP(2, [8, 8, 1]) with tanh fits a smooth bump.

    Full-batch gradient descent on the mean squared error. Returns
    ``(model, X, y, metrics)``; ``metrics["mse"]`` is the final training error.
    """
    X, y = make_toy_regression(n_samples, seed=seed)
    X, y = X.tolist(), y.tolist()
    model = MLP(2, [8, 8, 1], nonlin="tanh", rng=seed)
    bar = progress(steps, "toy", enabled=show_progress)
    start = time.perf_counter()
    history = []

    def mse():
        errors = [(model([Value(a), Value(b)]) - target) ** 2 for (a, b), target in zip(X, y)]
        return sum(errors) * (1.0 / len(errors))

    for k in range(steps):
        loss = mse()
        _check_finite("toy", k, loss.data, lr)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        history.append(loss.data)
        bar.set_postfix_str(f"mse {loss.data:.5f}")
        bar.update()
    bar.close()
    final = mse().data
    metrics = {
        "task": "toy", "engine": "scalar", "steps": steps, "lr": lr, "seed": seed,
        "mse": final, "loss": final, "wall_time_s": time.perf_counter() - start,
        "parameters": len(model.parameters()), "loss_history": history,
    }
    return model, X, y, metrics
