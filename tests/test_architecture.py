"""The shape of the package: the imports between chainrule's modules run one way.

    graph, modes <- primitive <- origin <- recording <- rules <- array_methods
          <- tensor, value, tracer <- reverse, forward <- functional
          <- nn, optim, data, viz, explain <- jit <- training <- cli
    recording <- program <- jit   (cr.jit)
    node, saved <- backward <- tensor, reverse   (one node record, one backward pass)

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


@pytest.mark.parametrize("name", sorted(m for m in GRAPH if m.startswith("chainrule.rules")))
def test_the_rule_table_imports_no_engine_and_none_of_their_users(name):
    users = {"chainrule.tensor", "chainrule.value", "chainrule.tracer", "chainrule.forward",
             "chainrule.reverse", "chainrule.functional", "chainrule.cli", "chainrule.fast"}
    reached = reachable(name)
    assert not reached & users, sorted(reached & users)
    assert not any(m.startswith(("chainrule.nn", "chainrule.data")) for m in reached)


@pytest.mark.parametrize("lower, higher", [
    ("chainrule.graph", "chainrule.tensor"),
    ("chainrule.origin", "chainrule.recording"),
    ("chainrule.saved", "chainrule.backward"),
    ("chainrule.backward", "chainrule.tensor"),
    ("chainrule.backward", "chainrule.reverse"),
    ("chainrule.value_ops", "chainrule.value"),
    ("chainrule.primitive", "chainrule.rules.elementwise"),
    ("chainrule.rules.elementwise", "chainrule.tensor"),
    ("chainrule.array_methods", "chainrule.tensor"),
    ("chainrule.array_methods", "chainrule.tracer"),
    ("chainrule.node", "chainrule.tensor"),
    ("chainrule.node", "chainrule.reverse"),
    ("chainrule.modes", "chainrule.tensor"),
    ("chainrule.modes", "chainrule.value"),
    ("chainrule.tracer", "chainrule.forward"),
    ("chainrule.tracer", "chainrule.reverse"),
    ("chainrule.value", "chainrule.functional"),
    ("chainrule.forward", "chainrule.functional"),
    ("chainrule.reverse", "chainrule.functional"),
    ("chainrule.tensor", "chainrule.cli"),
    ("chainrule.tensor", "chainrule.optim"),
    ("chainrule.tensor", "chainrule.nn.layers"),
    ("chainrule.primitive", "chainrule.recording"),
    ("chainrule.arrays", "chainrule.rules.shapes"),
    ("chainrule.arrays", "chainrule.recording"),
    ("chainrule.recording", "chainrule.tensor"),
    ("chainrule.recording", "chainrule.program"),
    ("chainrule.program", "chainrule.jit"),
    ("chainrule.jit_state", "chainrule.jit"),
    ("chainrule.optim", "chainrule.jit"),
    ("chainrule.nn.module", "chainrule.jit"),
    ("chainrule.jit", "chainrule.training"),
])
def test_the_arrows_run_one_way(lower, higher):
    """The higher module imports the lower one (through some chain), never the reverse."""
    assert lower in reachable(higher) and higher not in reachable(lower)


def test_the_transforms_tracers_and_the_tensor_engine_are_side_by_side():
    """A tracer has the array surface and the node record a Tensor has, not the Tensor."""
    for name in ("chainrule.tracer", "chainrule.reverse", "chainrule.forward",
                 "chainrule.backward"):
        assert "chainrule.tensor" not in reachable(name), name


def test_graph_is_only_the_walk():
    assert not GRAPH["chainrule.graph"]


def test_the_engines_know_nothing_of_training_pictures_or_the_command_line():
    for engine in ("chainrule.graph", "chainrule.primitive", "chainrule.value",
                   "chainrule.saved", "chainrule.backward", "chainrule.tensor", "chainrule.tracer", "chainrule.forward",
                   "chainrule.reverse", "chainrule.functional"):
        reached = {m for m in reachable(engine) if not m.startswith("chainrule.rules")}
        assert not any(m.startswith(("chainrule.nn", "chainrule.optim", "chainrule.data",
                                     "chainrule.viz", "chainrule.cli", "chainrule.training"))
                       for m in reached), (engine, sorted(reached))


def test_no_source_file_is_over_a_thousand_lines_and_value_reads_in_ten_minutes():
    lengths = {name: len(p.read_text().splitlines()) for name, p in MODULES.items()}
    assert max(lengths.values()) <= 1000, max(lengths, key=lengths.get)
    assert lengths["chainrule.value"] <= 320
    assert lengths["chainrule.tensor"] <= 600
