"""Training: one loop for both engines, behind ``chainrule train``, ``chainrule eval``
and the recipes (micrograd's moons demo, the toy regression).

A run is a ``Config`` (data set, engine, network, optimizer, schedule, loss) and a data
set from ``load_dataset`` (or ``as_dataset``; both in ``training_data.py``). ``train``
runs the one loop: for each mini-batch, forward, loss, zero_grad, backward, an optimizer
step and a schedule step from ``chainrule.optim``; then progress and metrics (accuracy
and the like in ``metrics.py``). What the engines do differently is an ``Engine``
(``training_engines.py``): a handful of small functions (build a model, pass a batch
through it, its losses, the sum of squared weights), one set for the MLP of Values and
one for the tensor MLP. The data sets' and the metrics' names are importable from here
too (``training.load_dataset``, ``training.evaluate``).

Each data set has defaults (``DEFAULTS``) that train well on each engine; the CLI may
override any of them, and metrics.json records the config that ran.

>>> config = Config("moons", engine="scalar", hidden=[4], epochs=3, batch_size=50,
...                 lr=0.1, optimizer="adam")
>>> model, metrics = train(config, load_dataset("moons"), show_progress=False)
>>> metrics["steps"], metrics["optimizer"]["name"], model.architecture()["nouts"]
(6, 'Adam', [4, 2])
"""

import contextlib
import math
import signal
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from numbers import Integral, Real

import numpy as np

from ..data import DataLoader, TensorDataset
from ..nn import optim
from .training_engines import CNN_DEFAULTS, ENGINES, SCALAR, TENSOR, DigitsCNN, Engine
from ..modes import no_grad
from ..jit.jitted import jit
from .progress import progress
from .metrics import (accuracy, confusion_matrix, evaluate, mean_squared_error, predictions,
                      scores)
from .training_data import DATASETS, as_dataset, load_dataset

__all__ = ["Config", "DEFAULTS", "DEFAULT_ENGINE", "DATASETS", "OPTIMIZERS", "SCHEDULES",
           "LOSSES", "Engine", "ENGINES", "SCALAR", "TENSOR", "load_dataset", "as_dataset",
           "train", "evaluate", "build_model", "make_optimizer", "make_schedule",
           "batch_loss", "scores", "predictions", "accuracy", "confusion_matrix",
           "TrainingDiverged", "TrainingWarning", "ConfigError", "mean_squared_error",
           "check_model_size", "count_parameters", "MAX_MODEL_BYTES", "STOP_SIGNALS",
           "LOSS_GROWTH", "MODELS", "CNN_DEFAULTS"]

MODELS = ("mlp", "cnn")
# --optimizer's names and the chainrule.optim class each builds (with PyTorch's defaults
# for every hyperparameter but lr, and SGD's momentum, which the Config carries)
OPTIMIZER_CLASSES = {"sgd": optim.SGD, "adam": optim.Adam, "adamw": optim.AdamW,
                     "rmsprop": optim.RMSprop, "adagrad": optim.Adagrad,
                     "adadelta": optim.Adadelta, "adamax": optim.Adamax, "nadam": optim.NAdam,
                     "radam": optim.RAdam, "rprop": optim.Rprop, "asgd": optim.ASGD,
                     "adafactor": optim.Adafactor}
OPTIMIZERS = tuple(OPTIMIZER_CLASSES)
SCHEDULES = ("constant", "linear")
LOSSES = ("cross_entropy", "hinge", "mse")


class TrainingDiverged(ArithmeticError):
    """The loss (or a parameter) stopped being a finite number: the learning rate is
    too large.

    ``model`` is the model as it was after the last finished epoch, whose numbers were
    all finite (the initial model if no epoch finished), and ``metrics`` the run's
    metrics up to there, with ``"diverged"`` holding this message: what a caller saves
    instead of losing the run. Both are None when raised outside ``train``.
    """

    def __init__(self, message, model=None, metrics=None):
        super().__init__(message)
        self.model, self.metrics = model, metrics


class TrainingWarning(RuntimeWarning):
    """A run that goes on but looks wrong: its loss grew by orders of magnitude."""


# Signals that end a run at the end of its step, as Ctrl-C does: SIGTERM is what
# `timeout`, `kill`, containers, systemd and batch schedulers send, SIGHUP what a closed
# terminal sends. Windows has no SIGHUP.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))

# An epoch's mean loss this many times the first step's is a warning: an untrained
# model's loss is the baseline, and a run a hundred times worse than it is diverging
# even while its numbers stay finite (--lr 1e10 reaches 1e22 without an inf).
LOSS_GROWTH = 100


# ---------------------------------------------------------------------------------------
# What decides a run
# ---------------------------------------------------------------------------------------

@dataclass
class Config:
    """Everything that decides a run (written to metrics.json as it ran).

    ``batch_size`` 0 takes the whole training set at once. ``optimizer`` names a class of
    ``chainrule.optim`` (``OPTIMIZERS``: sgd, adam, adamw, rmsprop, adagrad, adadelta,
    adamax, nadam, radam, rprop, asgd, adafactor), built with ``lr`` and PyTorch's
    defaults for the rest;
    ``momentum`` is SGD's (the others have none to set here). ``schedule``: ``"constant"``, or ``"linear"``, the learning rate falling
    linearly from ``lr`` to ``lr / 10`` over the run (micrograd's demo). ``loss``:
    ``"cross_entropy"`` (one output per class), ``"hinge"`` (micrograd's SVM loss, one
    output whose sign is the class; two classes only) or ``"mse"`` (regression, one
    output). ``l2`` adds ``l2 * sum(p**2)`` over the parameters to the loss. ``jit``:
    on the tensor engine, each step runs as a program traced once (``cr.jit``), with
    the same numbers as eager steps.

    >>> Config("moons", hidden=[0])
    Traceback (most recent call last):
    ...
    chainrule.app.training.ConfigError: hidden must be positive layer sizes, like [16, 16], got [0]
    """
    dataset: str
    engine: str = "tensor"
    hidden: list = field(default_factory=lambda: [16, 16])
    epochs: int = 100
    batch_size: int = 0
    lr: float = 0.01
    optimizer: str = "adam"
    momentum: float = 0.9
    schedule: str = "constant"
    loss: str = "cross_entropy"
    l2: float = 0.0
    activation: str = "relu"
    seed: int = 0
    data_dir: str = ""
    jit: bool = True
    model: str = "mlp"

    def __post_init__(self):
        self.hidden = list(self.hidden)
        if not self.hidden or not all(_is_int(n) and n > 0 for n in self.hidden):
            raise ConfigError("hidden", self.hidden, "positive layer sizes, like [16, 16]")
        for name, lowest in (("epochs", 1), ("batch_size", 0), ("seed", 0)):
            value = getattr(self, name)
            if not _is_int(value) or value < lowest:
                raise ConfigError(name, value, f"an integer >= {lowest}")
        if not _is_real(self.lr) or not (0 < self.lr < math.inf):
            raise ConfigError("lr", self.lr, "a finite number > 0")
        if not _is_real(self.momentum) or not 0 <= self.momentum < 1:
            raise ConfigError("momentum", self.momentum, "a number in [0, 1)")
        if not _is_real(self.l2) or not (0 <= self.l2 < math.inf):
            raise ConfigError("l2", self.l2, "a finite number >= 0")
        for name, known in (("engine", ENGINES), ("optimizer", OPTIMIZERS),
                            ("schedule", SCHEDULES), ("loss", LOSSES), ("model", MODELS)):
            if getattr(self, name) not in known:
                raise ConfigError(name, getattr(self, name), "one of " + ", ".join(known))
        if self.model == "cnn" and (self.engine != "tensor" or self.loss != "cross_entropy"):
            raise ConfigError("model", self.model, "'mlp' on the scalar engine and for "
                              "the hinge and mse losses (the CNN is a tensor classifier)")


class ConfigError(ValueError):
    """A setting a run cannot take; ``name`` is the Config field, ``value`` what was
    given, ``expected`` what it must be (so the CLI can name its own flag)."""

    def __init__(self, name, value, expected):
        self.name, self.value, self.expected = name, value, expected
        super().__init__(f"{name} must be {expected}, got {value!r}")


def _is_real(value):
    return isinstance(value, Real) and not isinstance(value, bool)


def _is_int(value):
    return isinstance(value, Integral) and not isinstance(value, bool)


DEFAULT_ENGINE = {"toy": "scalar", "moons": "scalar", "circles": "tensor",
                  "spirals": "tensor", "digits": "tensor", "mnist": "tensor"}

# Settings that train well, per data set and engine; what is not given is Config's
# default. The scalar engine handles a few hundred samples a second on the image sets,
# so its image defaults are small and short.
DEFAULTS = {
    # micrograd's demo: full batch, SVM loss with L2, SGD with lr 1.0 decaying to 0.1
    ("moons", "scalar"): dict(hidden=[16, 16], epochs=100, batch_size=0, lr=1.0,
                              optimizer="sgd", momentum=0.0, schedule="linear",
                              loss="hinge", l2=1e-4),
    ("moons", "tensor"): dict(hidden=[16, 16], epochs=300, batch_size=0, lr=0.02,
                              optimizer="adam"),
    # microcrad's toy regression: tanh, mean squared error
    ("toy", "scalar"): dict(hidden=[8, 8], epochs=500, batch_size=0, lr=0.1, optimizer="sgd",
                            momentum=0.0, loss="mse", activation="tanh"),
    ("toy", "tensor"): dict(hidden=[8, 8], epochs=500, batch_size=0, lr=0.1, optimizer="sgd",
                            momentum=0.9, loss="mse", activation="tanh"),
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


# ---------------------------------------------------------------------------------------
# The pieces of a run: model, optimizer, schedule, loss
# ---------------------------------------------------------------------------------------

def _n_outputs(loss, n_classes):
    """One score per class for cross-entropy; one number for the hinge loss (its sign
    is the class) and for a regression."""
    return n_classes if loss == "cross_entropy" else 1


def build_model(config, n_inputs, n_classes):
    """The MLP a config asks for, on its engine: ``n_inputs``, the hidden sizes, and as
    many outputs as its loss needs.

    >>> model = build_model(Config("moons", engine="scalar", hidden=[3]), 2, 2)
    >>> model.architecture()["nouts"]
    [3, 2]
    """
    if config.model == "cnn":
        return DigitsCNN.for_rows(n_inputs, _n_outputs(config.loss, n_classes), config.seed)
    sizes = _layer_sizes(config, n_inputs, n_classes)
    return ENGINES[config.engine].build(sizes, config.activation, config.seed)


# What one parameter costs while training: on the tensor engine a float64 weight, its
# gradient and Adam's two moments; on the scalar engine a Value object with its gradient
# and the optimizer's state (about 120 bytes measured, doubled for the graph of a step).
BYTES_PER_PARAMETER = {"tensor": 4 * 8, "scalar": 256}
MAX_MODEL_BYTES = 2 * 2**30  # beyond this a run is a typo, not a plan: refuse it up front


def _layer_sizes(config, n_inputs, n_classes):
    return [n_inputs] + list(config.hidden) + [_n_outputs(config.loss, n_classes)]


def check_model_size(config, n_inputs, n_classes, limit=MAX_MODEL_BYTES):
    """Raise ConfigError (naming ``hidden``) when the network the config asks for would
    need more than ``limit`` bytes to train, before any of it is allocated.

    >>> try:
    ...     check_model_size(Config("moons", hidden=[10**8]), 2, 2)
    ... except ConfigError as err:
    ...     print(err.expected)
    sizes whose network fits in 2 GiB (this one has 500,000,002 parameters, about 14.9 GiB to train)
    """
    if config.model == "cnn":  # its size is fixed, and small
        return
    sizes = _layer_sizes(config, n_inputs, n_classes)
    count = sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))
    needed = count * BYTES_PER_PARAMETER[config.engine]
    if needed > limit:
        raise ConfigError("hidden", config.hidden,
                          f"sizes whose network fits in {limit / 2**30:g} GiB (this one has "
                          f"{count:,} parameters, about {needed / 2**30:.1f} GiB to train)")


def count_parameters(model):
    """The number of scalars a model learns: one per Value, a Tensor's size per Tensor."""
    return int(sum(np.size(p.data) for p in model.parameters()))


def make_optimizer(config, parameters):
    """The config's optimizer from ``chainrule.optim``, over ``parameters``."""
    if config.optimizer == "sgd":
        return optim.SGD(parameters, lr=config.lr, momentum=config.momentum)
    if config.optimizer in OPTIMIZER_CLASSES:
        return OPTIMIZER_CLASSES[config.optimizer](parameters, lr=config.lr)
    raise ValueError(f"unknown optimizer {config.optimizer!r}; known: "
                     f"{', '.join(OPTIMIZERS)}")


def make_schedule(config, optimizer, total_steps):
    """The config's learning-rate schedule over a run of ``total_steps`` optimizer steps.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> schedule = make_schedule(Config("moons", schedule="linear"), opt, total_steps=10)
    >>> [round(schedule.lr_at(1.0, k), 2) for k in (0, 5, 9)]    # micrograd's 1.0 -> 0.1
    [1.0, 0.55, 0.19]
    """
    if config.schedule == "linear":
        return optim.LinearLR(optimizer, start_factor=1.0, end_factor=0.1,
                              total_iters=total_steps)
    if config.schedule == "constant":
        return optim.LambdaLR(optimizer, lambda k: 1.0)
    raise ValueError(f"unknown schedule {config.schedule!r}; known: {', '.join(SCHEDULES)}")


def _describe_optimizer(optimizer):
    """The optimizer's class and its hyperparameters at the start, for metrics.json."""
    group = optimizer.param_groups[0]
    settings = {k: v for k, v in group.items() if k not in ("params", "initial_lr")}
    return {"name": type(optimizer).__name__, **settings,
            "lr": group.get("initial_lr", group["lr"])}


def _loss_targets(loss, labels):
    """What the loss compares the outputs with: the hinge loss takes classes 0 and 1 as
    -1 and 1; the others take the labels as they are."""
    return 2.0 * np.asarray(labels) - 1.0 if loss == "hinge" else labels


def batch_loss(engine, config, model, outputs, targets):
    """The loss of one batch: the config's loss of the outputs, plus ``l2 * sum(p**2)``
    over the parameters when ``config.l2`` is set."""
    loss = engine.losses[config.loss](outputs, targets)
    if config.l2:
        loss = loss + config.l2 * engine.squared_norm(model.parameters())
    return loss


def _check_fits(config, data):
    """The loss suits the data set: mse for a regression, a classification loss
    otherwise, and the hinge loss only for two classes."""
    regression = data.get("regression", False)
    if regression != (config.loss == "mse"):
        kind = "a regression set" if regression else "a classification set"
        expected = "'mse'" if regression else "'cross_entropy' or 'hinge'"
        raise ValueError(f"{config.dataset} is {kind}: the loss must be {expected}, "
                         f"got {config.loss!r}")
    if config.loss == "hinge" and data["n_classes"] != 2:
        raise ValueError(f"the hinge loss needs two classes; {config.dataset} has "
                         f"{data['n_classes']}")


# ---------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------

def _finite(loss, config, step, epoch):
    """The loss as a float; TrainingDiverged if it is not a finite number."""
    value = float(loss.data)
    if not math.isfinite(value):
        raise TrainingDiverged(
            f"{config.dataset}: the loss became {value} at step {step} (epoch {epoch}); "
            f"training diverged, try a smaller learning rate than {config.lr}")
    return value


def train(config, data, show_progress=True, stop_on_interrupt=False):
    """Train the model ``config`` describes on ``data`` (from ``load_dataset`` or
    ``as_dataset``): the one loop, for both engines.

    Returns ``(model, metrics)``. metrics has the config and the optimizer that ran,
    ``steps`` (optimizer steps taken), ``epochs_completed``, ``loss`` (the mean loss of
    the last epoch; of the steps taken, for a run interrupted in its first epoch),
    ``train_accuracy`` (the final model on the training set, measured after training;
    ``mse`` for a regression), ``test_accuracy`` when there is a test set, ``history``
    per epoch, ``loss_history`` per step, ``parameters`` (the number of scalars
    learned), samples per second, the wall time, and ``warnings`` if any were given.

    ``history["loss"]`` and ``history["train_accuracy"]`` are measured *during* each
    epoch, over its steps' own forward passes (free, but the model changes as they
    run, so they trail the model at the epoch's end); ``history["test_accuracy"]`` is
    measured *after* the epoch. Hence a final ``train_accuracy`` above the last
    epoch's running one.

    Raises TrainingDiverged as soon as the loss (or, at the end of an epoch, a
    parameter) is not a finite number; the exception carries the model of the last
    finished epoch and its metrics. An epoch whose mean loss is ``LOSS_GROWTH`` times
    the first step's gives a TrainingWarning (once a run, also kept in metrics).

    ``stop_on_interrupt``: a signal of ``STOP_SIGNALS`` (Ctrl-C's SIGINT, SIGTERM,
    SIGHUP) ends the run after the step it arrives in, and the model and metrics so
    far are returned, with ``metrics["interrupted"]`` True and ``metrics["signal"]``
    its name; the accuracies are then the history's only (no pass over the data after
    the user asked to stop). A second signal acts at once, as it would have without
    this. A signal that is ignored (``nohup`` ignores SIGHUP) stays ignored. Only in the
    main thread, where Python delivers signals.
    """
    engine = ENGINES[config.engine]
    _check_fits(config, data)
    X = data["X_train"]
    check_model_size(config, X.shape[1], data["n_classes"])
    batch_size = min(config.batch_size or len(X), len(X))
    model = build_model(config, X.shape[1], data["n_classes"])
    optimizer = make_optimizer(config, model.parameters())
    settings = _describe_optimizer(optimizer)
    schedule = make_schedule(config, optimizer,
                             config.epochs * math.ceil(len(X) / batch_size))
    # "last_good": the model's numbers after the last finished epoch, all finite
    history = {"loss": [], "train_accuracy": [], "test_accuracy": [], "step_loss": [],
               "samples": 0, "warnings": [], "last_good": model.state_dict()}
    start = time.perf_counter()
    try:
        with _interrupt_flag(stop_on_interrupt) as interrupted:
            _run_epochs(engine, config, model, optimizer, schedule, data, batch_size,
                        show_progress, history, interrupted)
    except TrainingDiverged as err:
        model.load_state_dict(history["last_good"])
        metrics = _metrics(config, settings, model, history, time.perf_counter() - start)
        metrics["diverged"] = str(err)
        metrics["loss"] = history["loss"][-1] if history["loss"] else None  # the model's
        metrics.update(_final_results(engine, model, data, history, stopped=True))
        _add_history(metrics, history)
        raise TrainingDiverged(str(err), model, metrics) from None
    metrics = _metrics(config, settings, model, history, time.perf_counter() - start)
    if interrupted:
        metrics["interrupted"] = True
        metrics["signal"] = signal.Signals(interrupted.signal).name
    metrics.update(_final_results(engine, model, data, history, stopped=bool(interrupted)))
    _add_history(metrics, history)
    return model, metrics


def _metrics(config, settings, model, history, wall):
    step_loss = history["step_loss"]
    losses = history["loss"] or ([float(np.mean(step_loss))] if step_loss else [None])
    metrics = {"config": asdict(config), "optimizer": settings,
               "steps": len(step_loss), "epochs_completed": len(history["loss"]),
               "loss": losses[-1], "wall_time_s": wall,
               "samples_per_second": history["samples"] / wall if wall > 0 else None,
               "parameters": count_parameters(model)}
    if history["warnings"]:
        metrics["warnings"] = history["warnings"]
    return metrics


def _add_history(metrics, history):
    metrics["history"] = {k: history[k] for k in ("loss", "train_accuracy", "test_accuracy")}
    metrics["loss_history"] = history["step_loss"]


class _Flag:
    """Set by the stop signals' handler to the signal's number; read by the loop after
    each step."""

    def __init__(self):
        self.signal = None

    def __bool__(self):
        return self.signal is not None


@contextlib.contextmanager
def _interrupt_flag(enabled):
    """While training, the first stop signal sets a flag instead of raising or killing;
    the handlers then step aside, so a second signal acts as it always does."""
    flag = _Flag()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield flag
        return
    # An ignored signal stays ignored: `nohup` (SIGHUP) and a script's `cmd &` (SIGINT)
    # ask for exactly that. None: a handler not set from Python, which cannot be restored.
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    previous = {signum: handler for signum, handler in previous.items()
                if handler not in (signal.SIG_IGN, None)}

    def restore():
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def handler(signum, frame):
        flag.signal = signum
        restore()

    for signum in previous:
        signal.signal(signum, handler)
    try:
        yield flag
    finally:
        restore()


def training_step(engine, config):
    """``step(model, optimizer, X, targets) -> (loss, outputs)``: forward, loss,
    zero_grad, backward and the optimizer's step on one batch. On the tensor engine
    with ``config.jit``, traced once per batch shape into a program (``cr.jit``): the
    same NumPy calls, without building the graph at every step. Its outputs are then
    the outputs' array, without a graph."""
    def step(model, optimizer, X, targets):
        outputs = engine.forward(model, X)
        loss = batch_loss(engine, config, model, outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss, outputs
    if engine.name == "tensor" and config.jit:
        return jit(step)
    return step


def _run_epochs(engine, config, model, optimizer, schedule, data, batch_size,
                show_progress, history, interrupted=False):
    """The loop: per batch forward, loss, zero_grad, backward, optimizer and schedule
    steps; per epoch the mean loss and the accuracy; the progress shows them as they
    run, with the last test accuracy. Fills
    ``history`` as it goes, ``history["last_good"]`` at the end of each epoch. Stops
    after the step in which ``interrupted`` turns true, keeping only finished epochs in
    the per-epoch history."""
    X, labels = data["X_train"], data["y_train"]
    targets = _loss_targets(config.loss, labels)
    classify = not data.get("regression", False)
    step = training_step(engine, config)
    # a fresh random order each epoch; all rows in order when one batch holds them all
    # (shuffling it would only reorder a sum)
    loader = DataLoader(TensorDataset(X, targets, labels), batch_size,
                        shuffle=batch_size < len(X), generator=np.random.default_rng(config.seed))
    bar = progress(config.epochs, len(loader), config.dataset, enabled=show_progress)
    tested = ""  # the last test accuracy, shown with every step's numbers
    try:
        for epoch in range(1, config.epochs + 1):
            model.train()
            total, correct, seen, finished = 0.0, 0, 0, True
            for k, (x_batch, target_batch, label_batch) in enumerate(loader, 1):
                loss, outputs = step(model, optimizer, x_batch, target_batch)
                value = _finite(loss, config, len(history["step_loss"]) + 1, epoch)
                if classify:
                    correct += int(np.sum(predictions(engine.scores(outputs)) == label_batch))
                schedule.step()
                history["step_loss"].append(value)
                history["samples"] += len(x_batch)
                total += value * len(x_batch)
                seen += len(x_batch)
                bar.step(f"epoch {epoch}/{config.epochs} loss {total / seen:.4f}"
                         + (f" acc {correct / seen:.1%}" if classify else "") + tested)
                if interrupted:
                    finished = k == len(loader)
                    break
            model.eval()
            if not finished:
                break  # an unfinished epoch's loss and accuracy cover part of the data
            # A last step can make a parameter inf with no loss left to show it; and a
            # copy an epoch is what a diverged run falls back to (cheap next to an epoch).
            history["last_good"] = _finite_state(model, config, epoch)
            history["loss"].append(total / len(X))
            _warn_if_growing(history, config, epoch)
            status = f"loss {total / len(X):.4f}"
            if classify:
                # the running accuracy of the epoch's own forward passes: free to record
                history["train_accuracy"].append((epoch, correct / len(X)))
                status += f" acc {correct / len(X):.1%}"
                if data["X_test"] is not None and (engine.test_every_epoch
                                                   or epoch == config.epochs):
                    history["test_accuracy"].append(
                        (epoch, accuracy(model, data["X_test"], data["y_test"],
                                         engine.name)[0]))
                    tested = f" test {history['test_accuracy'][-1][1]:.1%}"
                    status += tested
            bar.epoch(epoch, status)
            if interrupted:
                break
    finally:
        bar.close()


def _finite_state(model, config, epoch):
    """A copy of the model's numbers; TrainingDiverged if one is not finite."""
    state = model.state_dict()
    for name, array in state.items():
        if not np.all(np.isfinite(array)):
            raise TrainingDiverged(
                f"{config.dataset}: the parameter {name} became "
                f"{'nan' if np.any(np.isnan(array)) else 'inf'} in epoch {epoch}; "
                f"training diverged, try a smaller learning rate than {config.lr}")
    return state


def _warn_if_growing(history, config, epoch):
    """A TrainingWarning, once a run, when the epoch's mean loss is LOSS_GROWTH times
    the first step's."""
    first, loss = history["step_loss"][0], history["loss"][-1]
    if history["warnings"] or not first > 0 or not loss > LOSS_GROWTH * first:
        return
    message = (f"{config.dataset}: the loss grew from {first:.4g} at the first step to "
               f"{loss:.4g} in epoch {epoch}; the learning rate {config.lr:g} is "
               f"probably too large")
    history["warnings"].append(message)
    warnings.warn(message, TrainingWarning, stacklevel=4)


def _final_results(engine, model, data, history, stopped=False):
    """The trained model on the training set (mse, or accuracy), and the last test
    accuracy. A run that stopped early (interrupted, or diverged) reports no accuracy of
    its own: the user asked it to stop, and the history has each epoch's."""
    X, y = data["X_train"], data["y_train"]
    if data.get("regression", False):
        with no_grad():
            error = engine.losses["mse"](engine.forward(model, X), y)
        return {"mse": float(error.data)}
    if stopped:
        return {}
    results = {"train_accuracy": accuracy(model, X, y, engine.name)[0]}
    if data["X_test"] is not None and history["test_accuracy"]:
        results["test_accuracy"] = history["test_accuracy"][-1][1]
    return results
