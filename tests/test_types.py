"""Type checkers see chainrule as it runs: every public name, the modes as context
managers, Tensor results as Tensors, and the README's blocks check clean under mypy.

mypy learns a module's public names only from ``__all__`` lists written as literals, and
finds no file behind the import paths that api/paths.py answers at run time
(``chainrule.optim``, ``chainrule.micrograd``...). scripts/make_exports.py writes both:
the operations' names into the lists, and a stub per import path. The first tests here
check those against the running code; the last runs mypy (pinned in the test extra).
"""

import ast
import importlib.util
import json
import os
import re
import subprocess
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

# mypy errors in the README's blocks that are known and not yet fixed: (the line of code,
# the start of mypy's message) -> why. An entry whose error is gone fails the test.
KNOWN: dict = {}


def _mypy_files(tmp_path):
    """The common names, and each of the README's python blocks, as files (a block's
    lines keep their README line numbers); {file name: what it is}."""
    files = {"common_names.py": "the common names (COMMON_NAMES above)"}
    (tmp_path / "common_names.py").write_text(textwrap.dedent(COMMON_NAMES))
    page = ROOT / "README.md"
    for number, (language, info, code, line, _) in enumerate(
            code_blocks(page.read_text(encoding="utf-8")), 1):
        if language == "python" and info != "skip":
            name = f"readme_block_{number:02d}.py"
            (tmp_path / name).write_text("\n" * (line - 1) + code)
            files[name] = f"README.md, block {number}"
    return files


def test_mypy_finds_no_error_in_the_common_names_and_the_readme(tmp_path, request):
    pytest.importorskip("mypy", reason="mypy is in the test extra (pip install "
                                       "'chainrule[test]')")
    files = _mypy_files(tmp_path)
    # A cache kept between runs (under .pytest_cache, which git ignores): NumPy's and
    # chainrule's hints take mypy about 15 s to read the first time, 2 s afterwards.
    cache = request.config.cache.mkdir("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), "--follow-imports=silent",
         "--check-untyped-defs", "--no-error-summary", "--hide-error-context",
         *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")})
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert done.returncode in (0, 1) and not done.stderr.strip(), done.stdout + done.stderr
    found = {}
    for error in errors:
        name, line, message = re.match(r"(\S+?):(\d+): error: (.*)", error).groups()
        if name.startswith("readme_block_"):
            code = (tmp_path / name).read_text().splitlines()[int(line) - 1].split("#")[0]
            known = next((key for key in KNOWN
                          if key[0] == code.strip() and message.startswith(key[1])), None)
            if known is not None:
                found[known] = error
                continue
        raise AssertionError(f"mypy, in {files[name]}, line {line}: {message}\n"
                             + "\n".join(errors))
    assert set(found) == set(KNOWN), f"fixed, delete from KNOWN: {set(KNOWN) - set(found)}"


def test_pyright_finds_no_error_in_the_common_names_and_the_readme(tmp_path):
    """The same files through pyright (pinned in the test extra, with Node.js from PyPI),
    in its standard mode, which reads hints more strictly than mypy where they are
    missing: it infers a return type from the body (a union a user cannot call methods
    on) and reads ``from .tensor import Tensor`` as binding the submodule ``tensor``."""
    pytest.importorskip("pyright", reason="pyright is in the test extra (pip install "
                                          "'chainrule[test]')")
    files = _mypy_files(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "extraPaths": [str(ROOT / "src")], "typeCheckingMode": "standard",
        "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}"}))
    done = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", *files],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYRIGHT_PYTHON_FORCE_VERSION": "",
                               "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})
    report = json.loads(done.stdout[done.stdout.index("{"):])
    errors = [f"{files[Path(d['file']).name]}, line {d['range']['start']['line'] + 1}: "
              f"{d['message']}" for d in report["generalDiagnostics"]
              if d["severity"] == "error"]
    assert not errors, "\n".join(errors)
    assert report["summary"]["filesAnalyzed"] == len(files)
