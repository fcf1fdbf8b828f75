"""Write out the operations' names in the ``__all__`` lists that type checkers read.

    python scripts/make_exports.py            # (re)write the lists
    python scripts/make_exports.py --check    # exit 1 if one is out of date

An operation is public once its topic file (``chainrule/rules/elementwise.py``...) lists
it in its ``__all__``. mypy learns what ``from .rules import *`` brings, and what a
module exports, only from ``__all__`` lists written as literals: a list built at import
time (``[name for topic in TOPICS ...]``) is invisible to it, and ``cr.sin`` would be
"Module has no attribute". So the lists that gather the topic files' names spell
them out, and this script writes them:

* ``chainrule/rules/__init__.py``: every topic's names, in the table's order;
* ``chainrule/__init__.py``: the same and the predicates (``cr.NAME``);
* ``chainrule/api/numpy.py``: the same, for ``chainrule.numpy``;
* ``chainrule/transforms/lax.py``: the names of the ``lax_*`` modules it gathers, and
  ``chainrule/compat/jax_lax/__init__.py``: those and its own (``chainrule.lax``).

A list starts on the line that names this script, which says what it holds ("the
operations" or "the predicates"), and ends at the next line that is ``]``; only
the lines between are written.

It also writes stubs for the import paths of ``api/paths.py``: ``import chainrule.optim``
is answered at run time by a finder, with no file a type checker could find, so
``chainrule/optim.pyi`` re-exports the module that lives at the real path
(``chainrule.nn.optim``); a package's path (``chainrule.micrograd``) gets a folder of
stubs, one per module. tests/test_types.py fails when a file and the code disagree.

The files are read, not imported (only the standard library is needed): a list that
names an operation no longer there would stop ``import chainrule`` itself.
"""

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "chainrule"
MARK = "# written by scripts/make_exports.py"
WIDTH = 92


def _assigned(path, target):
    """The literal value assigned to ``target`` at the top level of ``path``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == target for t in node.targets):
            return node.value
    raise SystemExit(f"{path.relative_to(ROOT)}: no {target} = ...")


def _topics():
    """The topic files of the table, in the order of ``rules.TOPICS``."""
    return [name.id for name in _assigned(PACKAGE / "rules" / "__init__.py", "TOPICS").elts]


def _lax_modules():
    """The modules ``transforms/lax.py`` gathers with ``from .lax_... import *``."""
    tree = ast.parse((PACKAGE / "transforms" / "lax.py").read_text(encoding="utf-8"))
    return [node.module for node in tree.body if isinstance(node, ast.ImportFrom)
            and node.level == 1 and (node.module or "").startswith("lax_")
            and [a.name for a in node.names] == ["*"]]


# What a list holds, by the words after MARK on its first line: its files (the folder
# under chainrule/, the module), whose ``__all__`` lists it gathers.
KINDS = {
    "the operations": lambda: [("rules", topic) for topic in _topics()],
    "the predicates": lambda: [("rules", "predicates")],
    "the lax operations": lambda: [("transforms", m) for m in _lax_modules()],
    "jax.lax's names": lambda: [("transforms", m) for m in ["lax", *_lax_modules()]],
}
FILES = [PACKAGE / "rules" / "__init__.py", PACKAGE / "__init__.py",
         PACKAGE / "api" / "numpy.py", PACKAGE / "transforms" / "lax.py",
         PACKAGE / "compat" / "jax_lax" / "__init__.py"]


def groups(kind):
    """(file, the names its ``__all__`` lists) for each file a list of ``kind`` holds."""
    return [(name, ast.literal_eval(_assigned(PACKAGE / folder / f"{name}.py", "__all__")))
            for folder, name in KINDS[kind]()]


def _lines(kind):
    lines = []
    for topic, listed in groups(kind):
        lines.append(f"    # {topic}")
        line = "   "
        for name in listed:
            item = f' "{name}",'
            if len(line) + len(item) > WIDTH:
                lines.append(line)
                line = "   "
            line += item
        lines.append(line)
    return lines


def render(path):
    """The text of ``path`` with each of its marked lists written from the topic files."""
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if MARK in line]
    if not starts:
        raise SystemExit(f"{path.relative_to(ROOT)}: no line with {MARK!r}")
    for start in reversed(starts):  # (from the end: the earlier lines keep their places)
        kind = lines[start].split(MARK, 1)[1].strip(": ")
        if kind not in KINDS:
            raise SystemExit(f"{path.relative_to(ROOT)}, line {start + 1}: after {MARK!r} "
                             f"comes one of {sorted(KINDS)}, not {kind!r}")
        end = lines.index("]", start)
        lines[start + 1:end] = _lines(kind)
    return "\n".join(lines) + "\n"


def _stub(public, real, source):
    text = ("# For type checkers, written by scripts/make_exports.py: at run time\n"
            f"# api/paths.py answers the import of {public} with the module below.\n"
            f"from {real} import *\n")
    if any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
           for node in ast.parse(source.read_text(encoding="utf-8")).body):
        text += f"from {real} import __getattr__ as __getattr__\n"
    return text


def stubs():
    """{stub path: its text} for the import paths of api/paths.py: one stub for a
    module, and for a package one per module in it, in a folder of stubs alone."""
    paths = ast.literal_eval(_assigned(PACKAGE / "api" / "paths.py", "PUBLIC_PATHS"))
    found = {}
    for public, real in paths.items():
        where = PACKAGE.joinpath(*public.split(".")[1:])
        source = ROOT / "src" / real.replace(".", "/")
        if source.with_suffix(".py").is_file():
            source = source.with_suffix(".py")
            found[where.with_suffix(".pyi")] = _stub(public, real, source)
            continue
        for module in sorted(source.rglob("*.py")):
            parts = module.relative_to(source).with_suffix("").parts
            inner = "".join(f".{part}" for part in parts if part != "__init__")
            found[where.joinpath(*parts).with_suffix(".pyi")] = _stub(
                public + inner, real + inner, module)
    return found


def stale():
    """{path: the text it should have} for the files that differ from it."""
    wanted = {path: render(path) for path in FILES}
    wanted.update(stubs())
    return {path: text for path, text in wanted.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a list or a stub is out of date")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale()
        for path in out_of_date:
            print(f"{path.relative_to(ROOT)} is out of date: run "
                  f"python scripts/make_exports.py", file=sys.stderr)
        return 1 if out_of_date else 0
    for path, text in stale().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
