"""The shape of the package: folders that show the layers, imports that run one way.

    chainrule/            the engine, flat where a reader starts: graph, modes, origin,
                          arrays (the namespace rules compute with), boxes (what an
                          argument can be) and arguments (what a call does with one)
                          under primitive (an operation's record and call), rules/
                          (the derivative table, and predicates: the operations with
                          none), methods/ (a Tensor's and a tracer's methods), node,
                          saved, gradient_hooks, backward, tensor, explain, and
                          libraries (the one door to backends/)
    chainrule/backends/   other array libraries (torch, CuPy, Dask), at the
                          namespace's seam; the core reaches them through its door
    chainrule/api/        the public surfaces over the engine: chainrule.numpy, linalg,
                          random keys, creation, PyTorch's random functions, and the
                          public import paths (api/paths.py)
    chainrule/scalar/     the scalar engine (Value)
    chainrule/transforms/ grad, vjp, jvp and the tracers
    chainrule/sparse/     sparse Jacobians and Hessians: a pattern tracer, colourings,
                          compressed passes (over the transforms; SciPy on demand)
    chainrule/scipy/      SciPy's functions with derivatives (imported on demand)
    chainrule/nn/         modules, optimizers, checkpoints (and data/)
    chainrule/compat/     other libraries' names and module paths: micrograd/,
                          autograd/, example_libraries/
    chainrule/jit/        cr.jit: the recorder, the program, the state it carries
    chainrule/app/        the command line, training runs, pictures

A module imports only modules of its own layer or of the layers above it in that list;
nn/ and jit/ import nothing of each other (state reaches cr.jit through a protocol).
Read from the source (every ``import`` statement, at the top of a module or inside a
function), so the test sees what a reader sees. ``chainrule/__init__.py`` is the public
face that gathers every name; it is not part of the arrows (a subpackage's ``__init__``
is: importing ``chainrule.rules`` imports its topic files).
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "chainrule"


def module_name(path):
    parts = ("chainrule",) + path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}
PACKAGES = {name for name, p in MODULES.items() if p.name == "__init__.py"}


def imports_of(name):
    """The chainrule modules that ``name`` imports, anywhere in its source."""
    path = MODULES[name]
    package = name if name in PACKAGES else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("chainrule")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("chainrule"):
                continue
            for alias in node.names:  # `from . import rules` names a module
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports_of(name) - {"chainrule"} for name in MODULES if name != "chainrule"}


def reachable(start):
    seen, stack = set(), [start]
    while stack:
        for nxt in GRAPH.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def test_no_module_imports_one_that_imports_it_back():
    cycles = sorted(name for name in GRAPH if name in reachable(name))
    assert not cycles, f"modules on an import cycle: {cycles}"


# The layers, lowest first; each names the packages (or core modules) it holds.
LAYERS = [
    ("core", lambda m: (m.count(".") == 1 or m.startswith(("chainrule.rules",
                                                           "chainrule.methods")))
     and not m.startswith(("chainrule.backends", "chainrule.api", "chainrule.compat"))),
    ("backends", lambda m: m.startswith("chainrule.backends")),
    ("api", lambda m: m.startswith("chainrule.api")),
    ("scalar", lambda m: m.startswith("chainrule.scalar")),
    ("transforms", lambda m: m.startswith("chainrule.transforms")),
    ("sparse", lambda m: m.startswith("chainrule.sparse")),
    ("scipy", lambda m: m.startswith("chainrule.scipy")),
    ("nn", lambda m: m.startswith(("chainrule.nn", "chainrule.data"))),
    ("compat", lambda m: m.startswith("chainrule.compat")),
    ("jit", lambda m: m.startswith("chainrule.jit")),
    ("app", lambda m: m.startswith("chainrule.app")),
]
# A package's own __init__ imports its files, and ``python -m chainrule`` runs the app:
# those look down the list by design.
# The engine meets other array libraries through one door, chainrule.libraries, which
# imports chainrule.backends at the first such array (never at ``import chainrule``).
DOORS = {("chainrule.libraries", "chainrule.backends")}
GATHERERS = {"chainrule.scalar", "chainrule.transforms", "chainrule.scipy", "chainrule.nn",
             "chainrule.data", "chainrule.compat.micrograd", "chainrule.compat.autograd",
             "chainrule.jit", "chainrule.app", "chainrule.__main__",
             "chainrule.compat.example_libraries", "chainrule.sparse"}


def layer_of(name):
    return next(i for i, (_, holds) in enumerate(LAYERS)
                if holds(name) and not (i == 0 and name in GATHERERS))


@pytest.mark.parametrize("name", sorted(m for m in GRAPH if m not in GATHERERS))
def test_a_module_imports_only_its_own_layer_and_those_below(name):
    mine = layer_of(name)
    above = sorted(m for m in GRAPH[name] if m not in GATHERERS and layer_of(m) > mine
                   and (name, m) not in DOORS)
    assert not above, f"{name} ({LAYERS[mine][0]}) imports {above}"


@pytest.mark.parametrize("name", sorted(m for m in GRAPH if m.startswith("chainrule.rules")))
def test_the_rule_table_imports_no_engine_and_none_of_their_users(name):
    """A rule reaches arrays through chainrule.arrays and its shape through primitive
    (built on boxes and arguments): nothing of an engine, of cr.jit, or of an array library besides NumPy. (primitive
    hands an array of another library to chainrule.backends through chainrule.libraries,
    which imports it with the first such array: array_api_compat and the library come
    then, not at import time.)"""
    allowed = {"chainrule.arrays", "chainrule.primitive", "chainrule.boxes",
               "chainrule.arguments", "chainrule.rules", "chainrule.libraries"}
    reached = {m for m in reachable(name) if not m.startswith(("chainrule.rules.",
                                                               "chainrule.backends"))}
    assert reached <= allowed, sorted(reached - allowed)


@pytest.mark.parametrize("lower, higher", [
    ("chainrule.graph", "chainrule.tensor"),
    ("chainrule.origin", "chainrule.jit.recording"),
    ("chainrule.saved", "chainrule.backward"),
    ("chainrule.backward", "chainrule.tensor"),
    ("chainrule.backward", "chainrule.transforms.reverse"),
    ("chainrule.scalar.value_ops", "chainrule.scalar.value"),
    ("chainrule.boxes", "chainrule.arguments"),
    ("chainrule.arguments", "chainrule.primitive"),
    ("chainrule.primitive", "chainrule.rules.elementwise"),
    ("chainrule.rules.elementwise", "chainrule.tensor"),
    ("chainrule.methods.array", "chainrule.tensor"),
    ("chainrule.methods.array", "chainrule.transforms.tracer"),
    ("chainrule.node", "chainrule.tensor"),
    ("chainrule.node", "chainrule.transforms.reverse"),
    ("chainrule.modes", "chainrule.tensor"),
    ("chainrule.modes", "chainrule.scalar.value"),
    ("chainrule.transforms.tracer", "chainrule.transforms.forward"),
    ("chainrule.transforms.tracer", "chainrule.transforms.reverse"),
    ("chainrule.scalar.value", "chainrule.transforms.functional"),
    ("chainrule.transforms.forward", "chainrule.transforms.functional"),
    ("chainrule.transforms.reverse", "chainrule.transforms.functional"),
    ("chainrule.transforms.functional", "chainrule.transforms.jacobians"),
    ("chainrule.tensor", "chainrule.app.cli"),
    ("chainrule.tensor", "chainrule.nn.optim"),
    ("chainrule.tensor", "chainrule.nn.layers"),
    ("chainrule.nn.hyperparameters", "chainrule.nn.optim.optimizer"),
    ("chainrule.nn.optim.optimizer", "chainrule.nn.optim.scheduler"),
    ("chainrule.nn.optim.scheduler", "chainrule.nn.optim.decays"),
    ("chainrule.nn.optim.scheduler", "chainrule.nn.optim.cycles"),
    ("chainrule.nn.optim.scheduler", "chainrule.nn.optim.combinators"),
    ("chainrule.nn.optim.scheduler", "chainrule.nn.optim.plateau"),
    ("chainrule.nn.optim.decays", "chainrule.nn.optim.lr_scheduler"),
    ("chainrule.nn.optim.cycles", "chainrule.nn.optim.lr_scheduler"),
    ("chainrule.nn.optim.combinators", "chainrule.nn.optim.lr_scheduler"),
    ("chainrule.nn.optim.plateau", "chainrule.nn.optim.lr_scheduler"),
    ("chainrule.nn.optim.optimizer", "chainrule.nn.optim.sgd"),
    ("chainrule.nn.optim.lr_scheduler", "chainrule.nn.optim"),
    ("chainrule.nn.updates", "chainrule.nn.optim.adam"),
    ("chainrule.nn.updates", "chainrule.compat.example_libraries.optimizers"),
    ("chainrule.nn.updates", "chainrule.compat.autograd.misc.optimizers"),
    ("chainrule.primitive", "chainrule.jit.recording"),
    ("chainrule.backends.indexing", "chainrule.backends.ufuncs"),
    ("chainrule.backends.ufuncs", "chainrule.backends.functions"),
    ("chainrule.backends.functions", "chainrule.backends.translate"),
    ("chainrule.arrays", "chainrule.rules.shapes"),
    ("chainrule.rules.shapes", "chainrule.rules.indexing"),
    ("chainrule.rules.indexing", "chainrule.rules.joining"),
    ("chainrule.rules.solves", "chainrule.rules.decompositions"),
    ("chainrule.rules.decompositions", "chainrule.rules.determinants"),
    ("chainrule.arrays", "chainrule.jit.recording"),
    ("chainrule.arrays", "chainrule.tensor"),
    ("chainrule.jit.ops", "chainrule.jit.program"),
    ("chainrule.jit.traced", "chainrule.jit.recording"),
    ("chainrule.jit.recording", "chainrule.jit.jitted"),
    ("chainrule.jit.program", "chainrule.jit.jitted"),
    ("chainrule.jit.state", "chainrule.jit.jitted"),
    ("chainrule.jit.jitted", "chainrule.app.training"),
    ("chainrule.app.training_data", "chainrule.app.training"),
    ("chainrule.app.metrics", "chainrule.app.training"),
    ("chainrule.nn.checkpoint_format", "chainrule.nn.checkpoint"),
])
def test_the_arrows_run_one_way(lower, higher):
    """The higher module imports the lower one (through some chain), never the reverse."""
    assert lower in reachable(higher) and higher not in reachable(lower)


def test_the_transforms_tracers_and_the_tensor_engine_are_side_by_side():
    """A tracer has the array surface and the node record a Tensor has, not the Tensor."""
    for name in ("chainrule.transforms.tracer", "chainrule.transforms.reverse", "chainrule.transforms.forward",
                 "chainrule.backward"):
        assert "chainrule.tensor" not in reachable(name), name


def test_cr_jit_knows_no_nn_and_nn_knows_no_jit():
    """Modules and optimizers reach cr.jit through the state protocol (_jit_state_,
    _jit_load_), as any user's class can: neither package imports the other."""
    for name in (m for m in GRAPH if m.startswith("chainrule.jit")):
        assert not any(m.startswith(("chainrule.nn", "chainrule.data", "chainrule.app"))
                       for m in reachable(name)), name
    for name in (m for m in GRAPH if m.startswith("chainrule.nn")):
        assert not any(m.startswith("chainrule.jit") for m in reachable(name)), name


def test_graph_is_only_the_walk():
    assert not GRAPH["chainrule.graph"]


def test_the_optimizers_update_arithmetic_is_pure_and_knows_no_engine():
    """chainrule.nn.updates computes on whatever its three callers hold (PyTorch's
    classes, JAX's triples, autograd's loops): it reaches the rules and nothing else,
    no Tensor, Value, optimizer or transform."""
    rules = {"chainrule.rules"} | reachable("chainrule.rules")
    assert reachable("chainrule.nn.updates") <= rules, sorted(
        reachable("chainrule.nn.updates") - rules)


def test_the_engines_know_nothing_of_training_pictures_or_the_command_line():
    engines = [m for m in GRAPH if m.startswith(("chainrule.scalar.", "chainrule.transforms.",
                                                 "chainrule.methods.", "chainrule.api."))
               or (m.count(".") == 1 and m not in GATHERERS)]
    for engine in engines:
        reached = reachable(engine)
        assert not any(m.startswith(("chainrule.nn", "chainrule.data", "chainrule.jit",
                                     "chainrule.app")) for m in reached), (engine, sorted(reached))


def test_no_source_file_is_over_seven_hundred_lines_and_the_engines_read_in_a_sitting():
    lengths = {name: len(p.read_text().splitlines()) for name, p in MODULES.items()}
    assert max(lengths.values()) <= 700, max(lengths, key=lengths.get)
    assert lengths["chainrule.scalar.value"] <= 320
    assert lengths["chainrule.tensor"] <= 600


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("chainrule.rules")))
def test_a_rule_computes_through_the_array_namespace_not_numpy_itself(name):
    """Rules call ``xp.NAME`` (chainrule.arrays), the seam cr.jit records at and another
    array library plugs into; NumPy's type hints (numpy.typing) are the one import."""
    tree = ast.parse(MODULES[name].read_text())
    numpy_imports = [node.lineno for node in ast.walk(tree)
                     if isinstance(node, ast.Import) and any(
                         alias.name.split(".")[0] == "numpy" for alias in node.names)
                     or isinstance(node, ast.ImportFrom) and node.module
                     and node.module.split(".")[0] == "numpy" and node.module != "numpy.typing"]
    assert not numpy_imports, f"{name} imports NumPy at lines {numpy_imports}; use xp"


def test_import_chainrule_imports_numpy_and_nothing_else_outside_the_standard_library():
    """The core's one dependency is NumPy: SciPy, the oracles and the extras load only
    where a user asks for them (chainrule.scipy, draw_graph, the progress bar)."""
    import subprocess
    import sys
    code = ("import sys, chainrule; print(' '.join(sorted({name.split('.')[0] for name "
            "in sys.modules})))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split())
    extras = {"scipy", "torch", "jax", "jaxlib", "matplotlib", "graphviz", "tqdm",
              "safetensors", "pandas", "hypothesis", "pytest"}
    assert not loaded & extras, sorted(loaded & extras)


def test_import_chainrule_leaves_nn_the_jax_namespaces_sparse_and_pictures_for_their_first_use():
    """``import chainrule`` loads the engines and the transforms; nn, optim, lax, func,
    sparse Jacobians and pictures load when a program first names them (chainrule's
    ``__getattr__``), as the same objects their own import paths give, and ``dir``
    and a star import still show them."""
    import subprocess
    import sys
    code = """
import sys, chainrule as cr
waiting = ["chainrule.nn", "chainrule.nn.optim", "chainrule.compat.jax_lax",
           "chainrule.compat.torch_func", "chainrule.sparse", "chainrule.app.viz"]
print(sorted(m for m in waiting if m in sys.modules))
import chainrule.nn, chainrule.optim, chainrule.lax, chainrule.func, chainrule.sparse
import chainrule.nn.checkpoint, chainrule.app.viz
print(cr.nn is chainrule.nn, cr.optim is chainrule.optim, cr.lax is chainrule.lax,
      cr.func is chainrule.func, cr.checkpoint is chainrule.nn.checkpoint,
      cr.load is chainrule.nn.checkpoint.load, cr.save is chainrule.nn.checkpoint.save,
      cr.sparse_jacobian is chainrule.sparse.sparse_jacobian,
      cr.draw_graph is chainrule.app.viz.draw_graph)
print(all(name in dir(cr) for name in ["nn", "optim", "lax", "sparse_hessian", "Tensor"]))
namespace = {}
exec("from chainrule import *", namespace)
print(all(name in namespace for name in cr.__all__))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[0] == "[]", out[0]
    assert out[1] == " ".join(["True"] * 9), out[1]
    assert out[2:4] == ["True", "True"], out[2:4]


def test_every_import_in_the_package_names_a_module_at_its_real_path():
    """Inside the package, imports name where a module lives (``chainrule.api.numpy``),
    never a public path kept for users (``chainrule.numpy``: api/paths.py), so this test
    and a reader follow the same arrows."""
    from chainrule.api.paths import real_name
    wrong = []
    for name, path in MODULES.items():
        package = name if name in PACKAGES else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                    if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
            wrong += [f"{name}, line {node.lineno}: {target} is {real_name(target)}"
                      for target in targets
                      if target.startswith("chainrule") and real_name(target)]
    assert not wrong, "import the real path: " + "; ".join(wrong)


TOP_LEVEL = {"__init__", "__main__", "arguments", "arrays", "backward", "boxes", "explain",
             "gradient_hooks", "graph", "libraries", "modes", "node", "origin", "pickling",
             "primitive", "saved", "tensor", "tensor_data"}


def test_the_top_level_is_the_engine():
    """Public surfaces live in api/, other libraries' names in compat/, a Tensor's
    methods in methods/: the top level holds the engine's modules and nothing else."""
    assert {p.stem for p in SRC.glob("*.py")} == TOP_LEVEL


@pytest.mark.parametrize("public", [
    "chainrule.numpy", "chainrule.linalg", "chainrule.random", "chainrule.creation",
    "chainrule.predicates", "chainrule.torch_random", "chainrule.optim", "chainrule.checkpoint",
    "chainrule.lax", "chainrule.micrograd", "chainrule.micrograd.engine", "chainrule.micrograd.nn",
    "chainrule.autograd", "chainrule.autograd.numpy", "chainrule.autograd.numpy.linalg",
    "chainrule.autograd.scipy.stats", "chainrule.autograd.scipy.stats.norm",
    "chainrule.autograd.misc.optimizers", "chainrule.example_libraries.optimizers",
    "chainrule.jax_nn", "chainrule.jax_nn.initializers", "chainrule.example_libraries.stax",
    "chainrule.tree_util", "chainrule.test_util", "chainrule.ad_checkpoint"])
def test_a_public_import_path_is_the_module_at_its_real_path(public):
    """``import chainrule.autograd.numpy`` works as before the move, and gives the very
    module at ``chainrule.compat.autograd.numpy``: one copy, one set of classes."""
    import importlib
    import subprocess
    import sys
    from chainrule.api.paths import real_name
    module = importlib.import_module(public)
    assert module is importlib.import_module(real_name(public))
    if module.__spec__ is not None:  # (autograd's scipy.stats.norm is an object, no file)
        assert module.__spec__.name == real_name(public)
    # and first thing in a fresh interpreter, before anything imported the real path
    code = (f"import {public} as m, {real_name(public)} as r, sys; "
            f"assert m is r and sys.modules[{public!r}] is r, m")
    subprocess.run([sys.executable, "-c", code], check=True)
