"""The examples in chainrule's docstrings run and print what they show, and every public
name has one.

The examples are doctests (``>>>`` lines followed by what they print), one test per
module of the package. They run as ``doctest.testmod`` runs them, in the namespace of
their module, with two names added, as docs/api.md says: ``np`` (NumPy) and ``cr``
(chainrule). Examples of public names use only those two, so a reader can paste them.

Public names are those docs/api.md lists (``sections()`` of scripts/make_api_docs.py):
everything in ``chainrule.__all__``, the public names of ``nn``, ``nn.functional``,
``optim``, ``data`` and ``checkpoint``, and the methods of Value, Tensor and Module.
"""

import builtins
import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import chainrule
from chainrule.primitive import Primitive

ROOT = Path(__file__).resolve().parents[1]


def _load_script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_api_docs = _load_script("make_api_docs")

# ``python -m chainrule`` runs the command line when imported: its docstring has no example.
NOT_IMPORTED = {"chainrule.__main__"}
MODULES = ["chainrule"] + sorted(
    info.name for info in pkgutil.walk_packages(chainrule.__path__, "chainrule.")
    if info.name not in NOT_IMPORTED)

# (and Python's round, all, any and abs: a reader pastes an example where those are
# Python's, though a module of chainrule may define its own, as NumPy does)
GLOBS = {"np": np, "cr": chainrule, "round": builtins.round, "all": builtins.all,
         "any": builtins.any, "abs": builtins.abs}
OPTIONS = doctest.ELLIPSIS

# NumPy's default print options, so that a setting made elsewhere cannot change a repr.
NUMPY_DEFAULTS = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75,
                      suppress=False, nanstr="nan", infstr="inf", sign="-",
                      floatmode="maxprec", legacy=False)


def _primitives_by_module():
    """The Primitives (objects, not functions: doctest's finder passes them by), each
    under the first module, in name order, whose namespace holds it; the package,
    chainrule.numpy and the autograd shim, which re-export them, come last."""
    owned, seen = {}, set()
    exporters = ["chainrule.api.numpy", "chainrule",
                 *[m for m in MODULES if m.startswith("chainrule.compat.autograd")]]
    for name in [m for m in MODULES if m not in exporters] + exporters:
        for key, value in vars(importlib.import_module(name)).items():
            if isinstance(value, Primitive) and id(value) not in seen:
                seen.add(id(value))
                owned.setdefault(name, []).append((key, value))
    return owned


class _Finder(doctest.DocTestFinder):
    """doctest's finder, which also looks into properties (it takes their module to
    be ``builtins`` and passes them by)."""

    def _from_module(self, module, obj):
        if isinstance(obj, property):
            return obj.fget is not None and super()._from_module(module, obj.fget)
        return super()._from_module(module, obj)


def examples_of(module):
    finder = _Finder(exclude_empty=True)
    tests = finder.find(module, module.__name__, extraglobs=GLOBS)
    for key, prim in _primitives_by_module().get(module.__name__, []):
        tests += finder.find(prim, f"{module.__name__}.{key}", module=module,
                             extraglobs=GLOBS)
    return tests


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_print_what_they_show(module_name):
    module = importlib.import_module(module_name)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = []
    for test in examples_of(module):
        # NumPy warns where an example makes an inf or a nan on purpose (log(0), say).
        with np.printoptions(**NUMPY_DEFAULTS), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            runner.run(test, out=report.append)
    assert runner.failures == 0, (
        f"{runner.failures} docstring example(s) in {module_name} print something else "
        f"than they show:\n" + "".join(report))


def test_the_primitives_are_found():
    """The operations NumPy computes are Primitive objects; their examples run too."""
    names = [test.name for test in examples_of(importlib.import_module("chainrule.rules"))]
    assert "chainrule.rules.exp" in names
    assert "chainrule.rules.sigmoid" in names


def _rows_of_the_derivative_tables():
    """The operations with a row of their own in the derivative tables (their name
    first in the row's id): tests/test_derivatives.py and tests/test_scipy_special.py."""
    rows = set()
    for table in ("test_derivatives.py", "test_scipy_special.py"):
        text = (ROOT / "tests" / table).read_text()
        rows |= set(re.findall(r'^    \("(\w+)[^"]*", ', text, flags=re.M))
    return rows


def _one_line_operations():
    namespaces = (chainrule, importlib.import_module("chainrule.scipy.special"))
    found = set()
    for name in _rows_of_the_derivative_tables():
        for namespace in namespaces:
            op = getattr(namespace, name, None)
            if isinstance(op, Primitive) and len((op.__doc__ or "").strip().splitlines()) == 1:
                found.add(op.name)
    return found


# An elementwise function with nothing to show beyond its formula (exp, sin) has a
# one-line docstring: d/dx in words. Its example is its row of a derivative table,
# checked against PyTorch or JAX to second order, in both modes.
ONE_LINERS = _one_line_operations()


def test_a_one_line_operation_is_in_the_derivative_table():
    assert {"exp", "sin", "arcsinh", "square"} <= ONE_LINERS


def _missing_examples():
    missing = []
    for section in make_api_docs.sections():
        for entry in section.entries:
            if entry.kind == "constant":  # a number or a dict carries no docstring
                continue
            if getattr(entry.obj, "name", None) in ONE_LINERS or \
                    getattr(getattr(entry.obj, "operation", None), "name", None) in ONE_LINERS:
                continue
            doc = inspect.getdoc(entry.obj) or ""
            if entry.kind == "property":
                if not doc.strip():
                    missing.append(f"{entry.display} (a property: needs a docstring)")
            elif ">>>" not in doc:
                missing.append(entry.display)
    return missing


def test_every_public_name_has_a_docstring_with_an_example():
    missing = _missing_examples()
    assert not missing, (
        f"{len(missing)} public name(s) without an example (a '>>>' line and its output) "
        f"in the docstring: {', '.join(missing)}")


def test_every_name_in_all_is_in_the_reference():
    listed = {id(entry.obj) for section in make_api_docs.sections()
              for entry in section.entries}
    absent = [name for name in chainrule.__all__ if id(getattr(chainrule, name)) not in listed]
    assert not absent, f"in chainrule.__all__ but in no section of the reference: {absent}"
