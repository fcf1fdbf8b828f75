"""Type checkers see chainrule as it runs: every public name, the modes as context
managers, Tensor results as Tensors, and the python blocks of the README and of the docs
pages check clean under mypy and pyright (but for the errors KNOWN lists, with why).

mypy learns a module's public names only from ``__all__`` lists written as literals, and
finds no file behind the import paths that api/paths.py answers at run time
(``chainrule.optim``, ``chainrule.micrograd``...). scripts/make_exports.py writes both:
the operations' names into the lists, and a stub per import path. The first tests here
check those against the running code; the last run mypy and pyright (pinned in the test
extra).
"""

import ast
import importlib.util
import json
import os
import re
import subprocess
import symtable
import sys
import textwrap
from pathlib import Path

import pytest

import chainrule as cr
from chainrule import rules
from chainrule.rules import predicates

from test_docs import code_blocks

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make_exports.py"
PACKAGE = ROOT / "src" / "chainrule"


def _load_script():
    spec = importlib.util.spec_from_file_location("make_exports", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_written_lists_and_stubs_are_up_to_date():
    script = _load_script()
    stale = [str(path.relative_to(ROOT)) for path in script.stale()]
    assert not stale, f"out of date: {stale}; run `python scripts/make_exports.py`"
    left_over = set(PACKAGE.rglob("*.pyi")) - set(script.stubs())
    assert not left_over, f"stubs of no import path (delete them): {sorted(left_over)}"


def test_the_lists_hold_what_the_topic_files_list():
    from_topics = [name for topic in rules.TOPICS for name in topic.__all__]
    assert rules.__all__ == from_topics
    import chainrule.numpy as cnp
    for module in (cr, cnp):
        assert len(module.__all__) == len(set(module.__all__)), module.__name__
        assert set(from_topics) | set(predicates.__all__) <= set(module.__all__)
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, f"{module.__name__}.__all__ names what it lacks: {missing}"


def test_the_tensor_methods_type_checkers_see_are_the_tables():
    """methods/array.py spells out, under TYPE_CHECKING, the methods its loop sets."""
    tree = ast.parse((PACKAGE / "methods" / "array.py").read_text(encoding="utf-8"))
    cls = next(node for node in tree.body
               if isinstance(node, ast.ClassDef) and node.name == "ArrayMethods")
    block = next(node for node in cls.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    spelt = {target.id for node in block.body if isinstance(node, ast.Assign)
             for target in node.targets}
    spelt |= {node.name for node in block.body if isinstance(node, ast.FunctionDef)}
    assert spelt - {"_operation"} == set(rules.METHODS)


def test_the_checkpoint_module_type_checkers_see_has_the_modules_names():
    """cr.checkpoint is a module that is called (nn/checkpoint.py); type checkers see it
    as its class, which spells the module's names under TYPE_CHECKING."""
    from chainrule.nn import checkpoint
    tree = ast.parse((PACKAGE / "nn" / "checkpoint.py").read_text(encoding="utf-8"))
    cls = next(node for node in tree.body
               if isinstance(node, ast.ClassDef) and node.name == "_CallableModule")
    block = next(node for node in cls.body if isinstance(node, ast.If))
    spelt = {target.id for node in block.body for target in node.targets}
    assert spelt == set(checkpoint.__all__)
    assert isinstance(cr.checkpoint, type(checkpoint)) and checkpoint is cr.checkpoint
    assert cr.grad(cr.checkpoint(cr.sin))(0.0) == 1.0


def test_the_modes_are_context_managers_and_decorators():
    x = cr.tensor([1.0], requires_grad=True)

    def double(t):
        return t * 2

    for mode, records in [(cr.no_grad, False), (cr.inference_mode, False),
                          (cr.enable_grad, True)]:
        with cr.no_grad() if records else cr.enable_grad():
            with mode() as entered:
                assert isinstance(entered, mode)
                assert (x * 2).requires_grad is records
            assert mode(double)(x).requires_grad is records       # @mode
            assert mode()(double)(x).requires_grad is records     # @mode()
    with cr.no_grad():
        assert cr.inference_mode(False)(double)(x).requires_grad is False
    assert cr.inference_mode(False)(double)(x).requires_grad is True
    with pytest.raises(ZeroDivisionError):  # an exception goes on up, the mode restored
        with cr.no_grad():
            1 / 0
    assert cr.is_grad_enabled()


# The names a README user types most, each used once, with the types they should have.
COMMON_NAMES = '''
import numpy as np
from typing_extensions import assert_type

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import Value, nn, optim
from chainrule.nn import functional as F

x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
assert_type(x, cr.Tensor)
assert_type(cr.zeros(2, 2), cr.Tensor)
assert_type(cr.ones(2, 2), cr.Tensor)
assert_type(cr.randn(2, 2), cr.Tensor)
assert_type(x @ x, cr.Tensor)
assert_type(x + 1.0, cr.Tensor)
assert_type(2.0 * x - x / 3.0, cr.Tensor)
assert_type(x.relu().sum(), cr.Tensor)
assert_type(x.mean(axis=0), cr.Tensor)
assert_type(x.split(1), list[cr.Tensor])
assert_type(x.sum().backward(), None)

y = cr.sin(x) + cr.tanh(x) + cr.exp(x) + cr.log(cr.ones(2, 2))
s = cr.sum(cr.stack([x, x]), axis=0)
w = cr.where(x > 1.0, x, cr.zeros(2, 2))
e = cr.einsum("ij,jk->ik", x, x)
m = cr.matmul(x, x)
a = cnp.sum(cnp.sin(np.ones(3)) ** 2) + cnp.pi


def f(v):
    return cr.sum(cr.sin(v) ** 2)


g = cr.grad(f)(np.ones(3))
value, gradient = cr.value_and_grad(f)(np.ones(3))
h = cr.hessian(f)(np.ones(3))
jr = cr.jacrev(cr.sin)(np.ones(3))
jf = cr.jacfwd(cr.sin)(np.ones(3))
fast = cr.jit(f)
vm = cr.vmap(cr.sin)(np.ones(3))

with cr.no_grad() as mode:
    assert_type(mode, cr.no_grad)
    q = x * 2
with cr.inference_mode(), cr.enable_grad():
    q = x * 2


@cr.no_grad
def predict(t: cr.Tensor) -> cr.Tensor:
    return t * 2


assert_type(predict(x), cr.Tensor)

model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
opt = optim.Adam(model.parameters(), lr=1e-3)
loss = F.mse_loss(model(x), cr.zeros(2, 1))
opt.zero_grad()
opt.step()

b = Value(2.0)
c = b * b + b.tanh()
c.backward()
picture = cr.draw_graph(c)
cr.save(model.state_dict(), "model.safetensors")
state = cr.load("model.safetensors")
'''

# Errors the checkers find that stay for now: (checker, the line of code, the start of
# the message) -> why. An entry whose error is gone fails the test: delete it.
KNOWN = {
    # right to be found: the page shows the TypeError this call raises
    ("mypy", "optim.SGD(model.parameters(), 0.1, 0.9)", "Too many positional arguments"):
        "the page shows the TypeError of a positional momentum (keyword-only)",
    ("pyright", "optim.SGD(model.parameters(), 0.1, 0.9)", "Expected 2 positional"):
        "the page shows the TypeError of a positional momentum (keyword-only)",
    ("pyright", "print(X.dtype, X.shape, loss.item() < 1.0)", '"loss" is possibly unbound'):
        "bound by the loop above, whose range(300) pyright does not know to be non-empty",
    # other libraries' hints, on their own idioms as the pages show them
    ("pyright", "loss.backward()", 'Cannot access attribute "backward" for class "float"'):
        "micrograd's demo loop as micrograd writes it: typeshed types sum() of Values "
        "as Value | Literal[0] (its start), so the loss as Value | float",
    ("pyright", "losses.append(round(loss.data, 6))", 'Cannot access attribute "data"'):
        "the same loss as the line above",
    ("pyright", "print(step, round(loss.data, 4), accuracy)", 'Cannot access attribute "data"'):
        "the same loss as the line above",
    ("pyright", "print(out.item(), x.grad.item(), y.grad.item())", '"item" is not a known'):
        "PyTorch's Tensor.grad is Optional (None before backward): PyTorch's own idiom, "
        "beside chainrule's and micrograd's",
    ("mypy", "print(out.item(), x.grad.item(), y.grad.item())", 'Item "None" of'):
        "PyTorch's Tensor.grad is Optional, as above",
    ("mypy", "out, g_vjp = torch.func.vjp(g, x)", "Too many values to unpack"):
        "torch.func.vjp's hint is a union over has_aux (two results or three)",
    ("mypy", "out, tangent = torch.func.jvp(g, (x,), (torch.tensor([0.0, 0.0, 1.0], "
             "dtype=torch.float64),))", "Too many values to unpack"):
        "torch.func.jvp's hint is a union over has_aux, as vjp's",
    ("pyright", "out, g_vjp = torch.func.vjp(g, x)", "Expression with type"):
        "torch.func.vjp's hint is a union over has_aux (two results or three)",
    ("pyright", "out, tangent = torch.func.jvp(g, (x,), (torch.tensor([0.0, 0.0, 1.0], "
                "dtype=torch.float64),))", "Expression with type"):
        "torch.func.jvp's hint is a union over has_aux, as vjp's",
    ("pyright", "Xd = da.from_array(X, chunks=(25, 3))", "Argument of type"):
        "dask's from_array has no hint for chunks: pyright infers str from its default",
    ("pyright", "g = cr.grad(loss)(da.from_array(w), Xd, da.from_array(y, chunks=25))",
     "Argument of type"): "dask's from_array chunks, as above",
    ("pyright", "hv = cr.hvp(lambda w: loss(w, Xd, da.from_array(y, chunks=25)), "
                "da.from_array(w), da.ones(3))", "Argument of type"):
        "dask's from_array chunks, as above",
    ("pyright", "g_, hv_ = dask.compute(g, hv)", '"compute" is not exported'):
        "dask's documented dask.compute, which its __init__ imports without re-exporting",
    ("pyright", "fit = least_squares(lambda u: np.asarray(residual(u)), np.zeros(1000), "
                "jac=jacobian)", "Argument of type"):
        "SciPy's least_squares has no hint for jac: pyright infers str from its default",
}


# The pages of the docs site (mkdocs.yml lists every docs/*.md, as its strict build
# requires), whose python blocks run in one namespace per page (tests/test_docs.py).
DOCS_PAGES = sorted((ROOT / "docs").glob("*.md"))


def _inner_reads(table):
    """The module's names that the functions, classes, lambdas and comprehensions under
    a symbol table read."""
    names = set()
    for child in table.get_children():
        names |= {symbol.get_name() for symbol in child.get_symbols()
                  if symbol.is_global() and symbol.is_referenced()}
        names |= _inner_reads(child)
    return names


def _bound_and_needed(code):
    """The names a block binds at its top level, and those it reads before binding them
    (from an earlier block of its page, or builtins). A function's body counts as read
    where the function is defined: it may run from there on."""
    bound, needed = set(), set()

    def read(name):
        if name not in bound:
            needed.add(name)

    def visit(node):
        if isinstance(node, ast.Name):
            read(node.id) if isinstance(node.ctx, ast.Load) else bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in [*node.decorator_list, *getattr(node, "bases", []),
                          *getattr(node, "keywords", [])]:
                visit(child)
            if not isinstance(node, ast.ClassDef):
                visit(node.args)  # the defaults
            bound.add(node.name)
        elif isinstance(node, ast.arguments):
            for child in [*node.defaults, *filter(None, node.kw_defaults)]:
                visit(child)
        elif isinstance(node, ast.Lambda):
            visit(node.args)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            visit(node.generators[0].iter)  # the rest runs in a scope of its own
        elif isinstance(node, ast.AugAssign):  # x += 1 reads x first
            visit(node.value)
            if isinstance(node.target, ast.Name):
                read(node.target.id)
            visit(node.target)
        else:  # an assignment's value, and a loop's iterable, before what they bind
            first = {ast.Assign: "value", ast.AnnAssign: "value", ast.NamedExpr: "value",
                     ast.For: "iter"}.get(type(node))
            if first and getattr(node, first) is not None:
                visit(getattr(node, first))
            for field, value in ast.iter_fields(node):
                if field != first:
                    for child in value if isinstance(value, list) else [value]:
                        if isinstance(child, ast.AST):
                            visit(child)

    for statement in ast.parse(code).body:
        table = symtable.symtable(ast.unparse(statement), "block", "exec")
        for name in sorted(_inner_reads(table)):
            read(name)
        visit(statement)
    return bound, needed


def _page_modules(text, label, stem, tmp_path):
    """Each python block of a page as a module of its own, its lines at the page's line
    numbers, which imports the names it reads before binding them from the block that
    bound them last: the page's one namespace, as tests/test_docs.py runs it, with each
    block checked as it stands, so that a later block may bind a name to a value of
    another type (``f`` for micrograd, then for PyTorch) as a notebook's next cell may.
    One file for the whole page would hold the first binding's type against every later
    one. {file name: what it is}."""
    files, binder = {}, {}
    for number, (language, info, code, line, _) in enumerate(code_blocks(text), 1):
        if language != "python" or info == "skip":
            continue
        module = f"{stem}_{number:02d}"
        bound, needed = _bound_and_needed(code)
        header = [f"import {binder[name]}; {name} = {binder[name]}.{name}" if name in bound
                  else f"from {binder[name]} import {name}"
                  for name in sorted(needed & binder.keys())]
        (tmp_path / f"{module}.py").write_text("; ".join(header) + "\n" * (line - 1) + code)
        files[f"{module}.py"] = f"{label}, block {number}"
        binder.update(dict.fromkeys(bound, module))
    return files


def _mypy_files(tmp_path):
    """The common names, each of the README's python blocks, and the docs pages' blocks
    as files (a block's lines keep their page's line numbers); {file name: what it is}."""
    files = {"common_names.py": "the common names (COMMON_NAMES above)"}
    (tmp_path / "common_names.py").write_text(textwrap.dedent(COMMON_NAMES))
    page = ROOT / "README.md"
    for number, (language, info, code, line, _) in enumerate(
            code_blocks(page.read_text(encoding="utf-8")), 1):
        if language == "python" and info != "skip":
            name = f"readme_block_{number:02d}.py"
            (tmp_path / name).write_text("\n" * (line - 1) + code)
            files[name] = f"README.md, block {number}"
    for page in DOCS_PAGES:
        files.update(_page_modules(page.read_text(encoding="utf-8"),
                                   str(page.relative_to(ROOT)),
                                   "docs_" + re.sub(r"\W", "_", page.stem), tmp_path))
    return files


# A page with a deliberate error in its second block, checked with the docs pages: the
# checkers must find it there (through the name the first block bound), or the check of
# the pages could be passing by seeing nothing.
WRONG_PAGE = """
```python
import chainrule as cr
x = cr.tensor([1.0, 2.0])
```

```python
print(x.no_such_method())
```

```python
x = "a later block may bind a name to another type"
print(x.upper())
```
"""
WRONG = ("print(x.no_such_method())", "no_such_method")


def _unexplained(checker, errors, tmp_path, files):
    """The errors that are neither KNOWN nor the WRONG_PAGE's; fails if an entry of KNOWN
    matched nothing, or the wrong page's error was missed. ``errors``: (file, line, message)."""
    found, unexplained, wrong = set(), [], False
    for name, line, message in errors:
        code = (tmp_path / name).read_text().splitlines()[line - 1].split("  #")[0].strip()
        if files[name].startswith("the wrong page") and WRONG[0] == code and WRONG[1] in message:
            wrong = True
            continue
        known = next((key for key in KNOWN if key[0] == checker and key[1] == code
                      and message.startswith(key[2])), None)
        if known is None:
            unexplained.append(f"{checker}, in {files[name]}, line {line}: {message}")
        else:
            found.add(known)
    assert wrong, f"{checker} missed the wrong page's error: {errors}"
    stale = {key for key in KNOWN if key[0] == checker} - found
    assert not stale, f"fixed, delete from KNOWN: {stale}"
    return unexplained


def _all_files(tmp_path):
    files = _mypy_files(tmp_path)
    files.update(_page_modules(WRONG_PAGE, "the wrong page", "wrong_page", tmp_path))
    return files


def test_mypy_finds_no_error_in_the_common_names_and_the_pages(tmp_path, request):
    pytest.importorskip("mypy", reason="mypy is in the test extra (pip install "
                                       "'chainrule[test]')")
    files = _all_files(tmp_path)
    # SciPy ships no hints mypy reads (they are the separate scipy-stubs): its names are
    # Any to mypy, as an untyped library's are. pyright reads SciPy's source instead.
    (tmp_path / "mypy.ini").write_text("[mypy]\n[mypy-scipy.*]\nignore_missing_imports = True\n")
    # A cache kept between runs (under .pytest_cache, which git ignores): NumPy's and
    # chainrule's hints take mypy about 15 s to read the first time, 2 s afterwards.
    cache = request.config.cache.mkdir("mypy")
    # --allow-redefinition: a block may bind a name again, to another type, as a script
    # may (pyright allows it as it stands)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(cache),
         "--follow-imports=silent", "--check-untyped-defs", "--allow-redefinition",
         "--no-error-summary", "--hide-error-context", *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")})
    assert done.returncode in (0, 1) and not done.stderr.strip(), done.stdout + done.stderr
    errors = [(name, int(line), message) for name, line, message in
              re.findall(r"^(\S+?):(\d+): error: (.*)$", done.stdout, re.M)]
    unexplained = _unexplained("mypy", errors, tmp_path, files)
    assert not unexplained, "\n".join(unexplained)


def test_pyright_finds_no_error_in_the_common_names_and_the_pages(tmp_path):
    """The same files through pyright (pinned in the test extra, with Node.js from PyPI),
    in its standard mode, which reads hints more strictly than mypy where they are
    missing: it infers a return type from the body (a union a user cannot call methods
    on) and reads ``from .tensor import Tensor`` as binding the submodule ``tensor``."""
    pytest.importorskip("pyright", reason="pyright is in the test extra (pip install "
                                          "'chainrule[test]')")
    files = _all_files(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "extraPaths": [str(ROOT / "src")], "typeCheckingMode": "standard",
        "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}"}))
    # --pythonpath: the libraries of the Python running the tests (the first `python` on
    # PATH may be another, without torch or jax)
    done = subprocess.run([sys.executable, "-m", "pyright", "--outputjson",
                           "--pythonpath", sys.executable, *files],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYRIGHT_PYTHON_FORCE_VERSION": "",
                               "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})
    report = json.loads(done.stdout[done.stdout.index("{"):])
    errors = [(Path(d["file"]).name, d["range"]["start"]["line"] + 1,
               d["message"].splitlines()[0]) for d in report["generalDiagnostics"]
              if d["severity"] == "error"]
    unexplained = _unexplained("pyright", errors, tmp_path, files)
    assert not unexplained, "\n".join(unexplained)
    assert report["summary"]["filesAnalyzed"] == len(files)
