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

__all__ = ["train_moons", "train_toy", "moons_loss", "gradient_descent", "TrainingDiverged"]


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


def gradient_descent(task, model, loss_and_status, steps, rate_at, show_progress=True):
    """The loop of micrograd's notebook: forward, zero_grad, backward, a step downhill.

    ``loss_and_status()`` returns the loss Value and a short text for the progress bar;
    ``rate_at(k)`` is the learning rate of step k. Returns the loss of every step.
    Raises TrainingDiverged as soon as the loss is not a finite number.
    """
    bar = progress(steps, task, enabled=show_progress)
    history = []
    try:
        for k in range(steps):
            loss, status = loss_and_status()
            _check_finite(task, k, loss.data, rate_at(0))
            model.zero_grad()
            loss.backward()
            rate = rate_at(k)
            for p in model.parameters():
                p.data -= rate * p.grad
            history.append(loss.data)
            bar.set_postfix_str(status)
            bar.update()
    finally:
        bar.close()
    return history


def train_moons(steps=100, lr=1.0, seed=0, n_samples=100, noise=0.1, show_progress=True):
    """micrograd's demo: MLP(2, [16, 16, 1]) on two moons, full batch, SVM loss.

    The learning rate decays linearly from ``lr`` to ``0.1 * lr`` (micrograd's
    ``1.0 - 0.9 * k / 100``). Returns ``(model, X, y, metrics)`` with y in {-1, 1}.
    """
    X, labels = make_moons(n_samples, noise=noise, seed=seed)
    X = X.tolist()
    y = [2 * int(label) - 1 for label in labels]
    model = MLP(2, [16, 16, 1], rng=seed)

    def loss_and_status():
        loss, accuracy = moons_loss(model, X, y)
        return loss, f"loss {loss.data:.4f} acc {accuracy:.0%}"

    start = time.perf_counter()
    history = gradient_descent("moons", model, loss_and_status, steps,
                               lambda k: lr * (1.0 - 0.9 * k / steps), show_progress)
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

    def mse():
        errors = [(model([Value(a), Value(b)]) - target) ** 2 for (a, b), target in zip(X, y)]
        return sum(errors) * (1.0 / len(errors))

    def loss_and_status():
        loss = mse()
        return loss, f"mse {loss.data:.5f}"

    start = time.perf_counter()
    history = gradient_descent("toy", model, loss_and_status, steps, lambda k: lr,
                               show_progress)
    final = mse().data
    metrics = {
        "task": "toy", "engine": "scalar", "steps": steps, "lr": lr, "seed": seed,
        "mse": final, "loss": final, "wall_time_s": time.perf_counter() - start,
        "parameters": len(model.parameters()), "loss_history": history,
    }
    return model, X, y, metrics
