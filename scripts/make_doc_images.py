"""Regenerate the pictures in docs/images/ with chainrule's own training and drawing code.

    .venv/bin/python scripts/make_doc_images.py            # into docs/images/
    .venv/bin/python scripts/make_doc_images.py OUT_DIR    # anywhere else
    .venv/bin/python scripts/make_doc_images.py --quick OUT_DIR   # seconds: for the tests

Each picture is exactly what a reader gets from the command beside it in RUNS (seed 0,
so the same numbers every run): the command writes into a scratch directory and the
picture is copied out under its docs name. About 10 seconds on two cores; needs the
viz extra (matplotlib, graphviz) and Graphviz's `dot` program.
"""

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

from chainrule.app import cli

ROOT = Path(__file__).resolve().parents[1]

# (the `chainrule` command, with {dir} for the scratch directory;
#  {file it writes: name in docs/images})
RUNS = [
    (["train", "moons", "--seed", "0", "--out", "{dir}"],
     {"decision_boundary.png": "decision_boundary.png"}),
    (["train", "mnist", "--seed", "0", "--out", "{dir}"],
     {"curves.png": "mnist_curves.png", "confusion.png": "mnist_confusion.png",
      "misclassified.png": "mnist_misclassified.png"}),
    (["graph", "x*y + tanh(x)", "--at", "x=2,y=3", "-o", "{dir}/graph.svg"],
     {"graph.svg": "graph.svg"}),
]


def _tutorial_graph(path):
    """docs/tutorial.md section 2's graph of ``d = a * b + a``, drawn from the
    tutorial's own code, so that the picture names its nodes as the text does."""
    import chainrule as cr
    a, b = cr.Value(2.0, label="a"), cr.Value(3.0, label="b")
    c = a * b
    c.label = "c"
    d = c + a
    d.label = "d"
    d.backward()
    cr.render_graph(d, path)


# (a function drawing into a path, name in docs/images)
DRAWINGS = [(_tutorial_graph, "a_used_twice.svg")]


def make_images(out, quick=False):
    """Run every command of RUNS and every drawing of DRAWINGS, and copy their pictures
    into ``out``; returns their paths.

    ``quick`` trains for one epoch (ten steps for moons): the same files, unfinished
    pictures, in a fraction of the time.
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for command, pictures in RUNS:
        with tempfile.TemporaryDirectory() as scratch:
            args = [arg.replace("{dir}", scratch) for arg in command]
            if args[0] == "train":
                args.append("--quiet")
                if quick:
                    args += ["--epochs", "10" if args[1] == "moons" else "1"]
            with contextlib.redirect_stdout(io.StringIO()):
                status = cli.main(args)
            if status != 0:
                raise SystemExit(f"`chainrule {' '.join(command)}` failed (exit {status})")
            for made, name in pictures.items():
                written.append(Path(shutil.copyfile(Path(scratch) / made, out / name)))
    for draw, name in DRAWINGS:
        with tempfile.TemporaryDirectory() as scratch:
            draw(Path(scratch) / name)
            written.append(Path(shutil.copyfile(Path(scratch) / name, out / name)))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "images",
                        help="where to write the pictures (default: docs/images)")
    parser.add_argument("--quick", action="store_true",
                        help="train for one epoch only: to check that the script works")
    args = parser.parse_args(argv)
    for path in make_images(args.out, args.quick):
        print(f"{path}  {path.stat().st_size / 1000:.0f} kB")


if __name__ == "__main__":
    sys.exit(main())
