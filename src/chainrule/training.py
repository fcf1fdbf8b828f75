"""Training on the data sets, for the ``chainrule train`` and ``chainrule eval`` commands.

Each data set has defaults that train well on this engine; the CLI may override any of
them. Two loops: the tensor engine (mini-batches through ``nn.MLP``, an optimizer from
``optim``) and the scalar engine (an MLP of Values, one sample at a time summed into a
mini-batch loss: slow but real, as microcrad's MNIST example).
"""

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import data as datasets
from .graph import no_grad
from .nn import MLP
from .nn.functional import cross_entropy
from .nn.scalar import MLP as ScalarMLP
from .progress import progress
from .recipes import TrainingDiverged
from .tensor import tensor
from .value import Value

__all__ = ["Config", "DEFAULTS", "DATASETS", "load_dataset", "train", "evaluate",
           "build_model", "TrainingDiverged"]

DATASETS = ("toy", "moons", "circles", "spirals", "digits", "mnist")


@dataclass
class Config:
    """Everything that decides a run (written to metrics.json)."""
    dataset: str
    engine: str = "tensor"
    hidden: list = field(default_factory=lambda: [16, 16])
    epochs: int = 100
    batch_size: int = 0            # 0: the whole training set at once
    lr: float = 0.01
    optimizer: str = "adam"
    seed: int = 0
    data_dir: str = ""


DEFAULT_ENGINE = {"toy": "scalar", "moons": "scalar", "circles": "tensor",
                  "spirals": "tensor", "digits": "tensor", "mnist": "tensor"}

# Settings that train well, per data set and engine. The scalar engine handles a few
# hundred samples a second on the image sets, so its image defaults are small and short.
DEFAULTS = {
    # micrograd's demo: full batch, SVM loss, SGD with lr 1.0 decaying to 0.1
    ("moons", "scalar"): dict(hidden=[16, 16], epochs=100, batch_size=0, lr=1.0,
                              optimizer="sgd"),
    ("moons", "tensor"): dict(hidden=[16, 16], epochs=300, batch_size=0, lr=0.02,
                              optimizer="adam"),
    ("toy", "scalar"): dict(hidden=[8, 8], epochs=500, batch_size=0, lr=0.1, optimizer="sgd"),
    ("toy", "tensor"): dict(hidden=[8, 8], epochs=500, batch_size=0, lr=0.1, optimizer="sgd"),
    ("circles", "tensor"): dict(hidden=[16, 16], epochs=300, batch_size=0, lr=0.02,
                                optimizer="adam"),
    ("circles", "scalar"): dict(hidden=[16, 16], epochs=150, batch_size=0, lr=0.02,
                                optimizer="adam"),
    ("spirals", "tensor"): dict(hidden=[64, 64], epochs=1500, batch_size=0, lr=0.01,
                                optimizer="adam"),
    ("spirals", "scalar"): dict(hidden=[32, 32], epochs=300, batch_size=0, lr=0.01,
                                optimizer="adam"),
    ("digits", "tensor"): dict(hidden=[64], epochs=40, batch_size=32, lr=2e-3,
                               optimizer="adam"),
    ("digits", "scalar"): dict(hidden=[32], epochs=4, batch_size=16, lr=5e-3,
                               optimizer="adam"),
    ("mnist", "tensor"): dict(hidden=[256], epochs=20, batch_size=64, lr=1e-3,
                              optimizer="adam"),
    ("mnist", "scalar"): dict(hidden=[32], epochs=1, batch_size=16, lr=5e-3,
                              optimizer="adam"),
}


def load_dataset(name, seed=0, data_dir=""):
    """A dict: X_train, y_train, X_test, y_test (None for the 2-D sets, which report
    training accuracy), n_classes, and ``image`` (the side of a square image, or None)."""
    if name == "toy":  # regression: one output, mean squared error
        X, y = datasets.make_toy_regression(64, seed=seed)
        return dict(X_train=X, y_train=y, X_test=None, y_test=None, n_classes=1,
                    image=None, regression=True)
    if name == "moons":
        X, y = datasets.make_moons(100, noise=0.1, seed=seed)
    elif name == "circles":
        X, y = datasets.make_circles(200, noise=0.05, seed=seed)
    elif name == "spirals":
        X, y = datasets.make_spirals(300, seed=seed)
    elif name == "digits":
        X, y, Xt, yt = datasets.load_digits_split(seed=seed)
        return dict(X_train=X, y_train=y, X_test=Xt, y_test=yt, n_classes=10, image=8)
    elif name == "mnist":
        if data_dir:
            X, y, Xt, yt = datasets.load_mnist(data_dir)
        else:
            X, y, Xt, yt = datasets.load_mnist_subset(seed=seed)
        return dict(X_train=X, y_train=y, X_test=Xt, y_test=yt, n_classes=10, image=28)
    else:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}")
    return dict(X_train=X, y_train=np.asarray(y), X_test=None, y_test=None,
                n_classes=int(np.max(y)) + 1, image=None)


def build_model(config, n_inputs, n_classes):
    """The MLP a config asks for: tensor or scalar, hidden sizes, tanh for the toy set."""
    sizes = [n_inputs] + list(config.hidden) + [n_classes]
    activation = "tanh" if config.dataset == "toy" else "relu"
    if config.engine == "tensor":
        return MLP(sizes, activation=activation, rng=config.seed)
    return ScalarMLP(n_inputs, list(config.hidden) + [n_classes], nonlin=activation,
                     rng=config.seed)


def _optimizer(config, params):
    from . import optim
    if config.optimizer == "sgd":
        return optim.SGD(params, lr=config.lr, momentum=0.9 if config.engine == "tensor"
                         else 0.0)
    if config.optimizer == "adam":
        return optim.Adam(params, lr=config.lr)
    raise ValueError(f"unknown optimizer {config.optimizer!r}; known: sgd, adam")


# ---------------------------------------------------------------------------------------
# Predictions
# ---------------------------------------------------------------------------------------

def scores(model, X, engine, batch=2048):
    """The model's class scores for every row of X, as an ndarray (N, n_classes)."""
    if engine == "tensor":
        with no_grad():
            return np.concatenate([model(tensor(X[i:i + batch])).data
                                   for i in range(0, len(X), batch)])
    out = []
    for row in X:
        result = model([Value(float(v)) for v in row])
        result = result if isinstance(result, list) else [result]
        out.append([v.data for v in result])
    return np.asarray(out)


def accuracy(model, X, y, engine):
    s = scores(model, X, engine)
    predicted = s.argmax(axis=1) if s.shape[1] > 1 else (s[:, 0] > 0).astype(int)
    return float(np.mean(predicted == y)), predicted


def confusion_matrix(y, predicted, n_classes):
    matrix = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(matrix, (np.asarray(y), np.asarray(predicted)), 1)
    return matrix


# ---------------------------------------------------------------------------------------
# The loops
# ---------------------------------------------------------------------------------------

def _value_cross_entropy(outputs, label):
    """-log softmax(outputs)[label] with Values, shifted by the max so exp cannot overflow."""
    m = max(v.data for v in outputs)
    total = sum((v - m).exp() for v in outputs)
    return total.log() - (outputs[label] - m)


def _batches(n, batch_size, rng):
    order = rng.permutation(n)
    size = batch_size or n
    return [order[i:i + size] for i in range(0, n, size)]


def train(config, data, show_progress=True):
    """Train a model on ``data`` (from load_dataset) as ``config`` says.

    Returns (model, metrics): metrics has the final loss, train (and test) accuracy, a
    history per epoch, samples per second and the wall time.
    """
    X, y = data["X_train"], data["y_train"]
    regression = data.get("regression", False)
    model = build_model(config, X.shape[1], data["n_classes"])
    optimizer = _optimizer(config, model.parameters())
    rng = np.random.default_rng(config.seed)
    bar = progress(config.epochs, config.dataset, enabled=show_progress)
    history = {"loss": [], "train_accuracy": [], "test_accuracy": []}
    start = time.perf_counter()
    seen = 0
    try:
        for epoch in range(config.epochs):
            total, count, correct = 0.0, 0, 0
            if hasattr(model, "train"):
                model.train()
            for index in _batches(len(X), config.batch_size, rng):
                if regression:
                    loss = _mean_squared_error(model, X[index], y[index], config.engine)
                elif config.engine == "tensor":
                    logits = model(tensor(X[index]))
                    loss = cross_entropy(logits, y[index])
                    correct += int(np.sum(logits.data.argmax(axis=1) == y[index]))
                else:
                    outputs = [model([Value(float(v)) for v in X[i]]) for i in index]
                    loss = sum(_value_cross_entropy(out, int(y[i]))
                               for out, i in zip(outputs, index)) * (1 / len(index))
                    correct += sum(int(np.argmax([v.data for v in out]) == y[i])
                                   for out, i in zip(outputs, index))
                value = float(loss.data)
                if not math.isfinite(value):
                    raise TrainingDiverged(
                        f"{config.dataset}: the loss became {value} in epoch {epoch + 1}; "
                        f"training diverged, try a smaller learning rate than {config.lr}")
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += value * len(index)
                count += len(index)
            seen += count
            history["loss"].append(total / count)
            if hasattr(model, "eval"):
                model.eval()
            last = epoch == config.epochs - 1
            if not regression:
                # the running accuracy of the epoch's own forward passes: free to record
                history["train_accuracy"].append((epoch + 1, correct / count))
                # the test set every epoch on the tensor engine (cheap), at the end on
                # the scalar one (a pass over it costs as much as training on it)
                if data["X_test"] is not None and (config.engine == "tensor" or last):
                    history["test_accuracy"].append(
                        (epoch + 1, accuracy(model, data["X_test"], data["y_test"],
                                             config.engine)[0]))
            bar.set_postfix_str(f"loss {total / count:.4f}" + (
                f" acc {history['train_accuracy'][-1][1]:.1%}" if not regression else ""))
            bar.update()
    finally:
        bar.close()
    wall = time.perf_counter() - start
    metrics = {"config": asdict(config), "loss": history["loss"][-1],
               "wall_time_s": wall, "samples_per_second": seen / wall,
               "parameters": len(model.parameters()), "history": history}
    if regression:
        metrics["mse"] = float(_mean_squared_error(model, X, y, config.engine).data)
    else:  # after the last update, over the whole training set
        metrics["train_accuracy"] = accuracy(model, X, y, config.engine)[0]
    if data["X_test"] is not None:
        metrics["test_accuracy"] = history["test_accuracy"][-1][1]
    return model, metrics


def _mean_squared_error(model, X, y, engine):
    if engine == "tensor":
        return ((model(tensor(X))[:, 0] - y) ** 2).mean()
    errors = [(model([Value(float(a)), Value(float(b))]) - float(t)) ** 2
              for (a, b), t in zip(X, y)]
    return sum(errors) * (1 / len(errors))


def evaluate(model, data, engine="tensor"):
    """Test accuracy and the confusion matrix (rows: true class, columns: predicted)."""
    X, y = (data["X_test"], data["y_test"]) if data["X_test"] is not None else (
        data["X_train"], data["y_train"])
    acc, predicted = accuracy(model, X, y, engine)
    return acc, confusion_matrix(y, predicted, data["n_classes"]), predicted
