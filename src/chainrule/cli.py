"""The ``chainrule`` command: train the examples, draw computation graphs.

    chainrule train moons --out out/moons
    chainrule train toy
    chainrule graph "x*y + tanh(x)" --at x=2,y=3 -o graph.svg

This is the one module that knows every other; the engines know nothing of it.
"""

import argparse
import json
import os
import sys
from pathlib import Path

__all__ = ["main"]

_TASKS = {
    # name: (default steps, default lr, what it is)
    "moons": (100, 1.0, "micrograd's demo: MLP(2, [16, 16, 1]) on 100 two-moons points, "
                        "SVM loss, lr decaying to 10%"),
    "toy": (500, 0.1, "microcrad's toy regression: MLP(2, [8, 8, 1], tanh) fits a smooth "
                      "bump, mean squared error"),
}


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="chainrule",
        description="chainrule: automatic differentiation you can read. Train the "
                    "examples and draw computation graphs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    train = sub.add_parser(
        "train", help="train an example network and report how it did",
        description="Train an example network on the scalar engine. " + " ".join(
            f"{name}: {text}." for name, (_, _, text) in _TASKS.items()))
    train.add_argument("task", choices=sorted(_TASKS), help="which example to train")
    train.add_argument("--steps", type=int, default=None,
                       help="training steps (moons: 100, toy: 500)")
    train.add_argument("--lr", type=float, default=None,
                       help="learning rate (moons: 1.0, decaying linearly to 0.1; toy: 0.1)")
    train.add_argument("--seed", type=int, default=0,
                       help="seed for the data and the initial weights (default 0)")
    train.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="write metrics.json and a picture (decision_boundary.png or "
                            "fit.png) into DIR")
    train.add_argument("--quiet", action="store_true", help="no progress bar")

    graph = sub.add_parser(
        "graph", help="draw the computation graph of an expression, with gradients",
        description="Build the graph of an arithmetic expression in named variables, "
                    "run backward, print the gradients and render the graph. The "
                    "expression is parsed, never evaluated as Python: numbers, variables, "
                    "+ - * / **, and exp, log, sqrt, sin, cos, tanh, sigmoid, relu, abs.")
    graph.add_argument("expression", help='for example "x*y + tanh(x)"')
    graph.add_argument("--at", default="", metavar="NAME=VALUE,...",
                       help="values of the variables, for example x=2,y=3")
    graph.add_argument("-o", "--output", type=Path, default=Path("graph.svg"),
                       help="picture to write: .svg, .png, .pdf, or .dot for the "
                            "Graphviz source only (default graph.svg)")
    return parser


def _train(args):
    from . import recipes
    steps_default, lr_default, _ = _TASKS[args.task]
    steps = steps_default if args.steps is None else args.steps
    lr = lr_default if args.lr is None else args.lr
    if steps < 1:
        raise SystemExit(f"chainrule train: error: --steps must be at least 1, got {steps}")
    train = recipes.train_moons if args.task == "moons" else recipes.train_toy
    try:
        model, X, y, metrics = train(steps=steps, lr=lr, seed=args.seed,
                                     show_progress=not args.quiet)
    except recipes.TrainingDiverged as err:
        print(f"chainrule train: error: {err}", file=sys.stderr)
        return 1
    if args.task == "moons":
        print(f"moons: {steps} steps, loss {metrics['loss']:.4f}, train accuracy "
              f"{metrics['train_accuracy']:.1%}, {metrics['wall_time_s']:.1f} s")
    else:
        print(f"toy: {steps} steps, mean squared error {metrics['mse']:.5f}, "
              f"{metrics['wall_time_s']:.1f} s")
    if args.out is not None:
        _write_outputs(args.task, model, X, y, metrics, args.out)
    return 0


def _write_outputs(task, model, X, y, metrics, out):
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / "metrics.json", metrics)
    written = [out / "metrics.json"]
    try:
        from . import plots
        if task == "moons":
            written.append(plots.plot_decision_boundary(
                model, X, y, out / "decision_boundary.png",
                title=f"moons: train accuracy {metrics['train_accuracy']:.0%}"))
        else:
            from .data.synthetic import toy_target
            written.append(plots.plot_toy_fit(model, X, y, toy_target, out / "fit.png"))
    except ImportError as err:
        print(f"chainrule train: no picture: {err}", file=sys.stderr)
    print("wrote " + ", ".join(str(p) for p in written))


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
    try:
        root.backward()
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
    if args.command == "train":
        return _train(args)
    return _graph(args)


if __name__ == "__main__":
    sys.exit(main())
