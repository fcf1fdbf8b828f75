"""draw_graph and render_graph: what the picture contains, and how files are written."""

import os
import re
import shutil
import sys

import pytest

# graphviz is in the `test` extra; CI also installs the `dot` program and sets
# CHAINRULE_REQUIRE_DOT=1, so that rendering is tested for real there, never skipped.
REQUIRE_DOT = os.environ.get("CHAINRULE_REQUIRE_DOT") == "1"
graphviz = pytest.importorskip("graphviz")

from chainrule.app import viz  # noqa: E402
from chainrule.scalar.value import Value  # noqa: E402
from chainrule.app.viz import GraphvizNotFound, draw_graph, render_graph  # noqa: E402

needs_dot = pytest.mark.skipif(shutil.which("dot") is None and not REQUIRE_DOT,
                               reason="Graphviz's dot program is not installed")


def small_graph():
    """c = a*b; d = c + a: 4 Values, 2 operations, 6 edges."""
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    d = c + a
    d.backward()
    return a, b, c, d


def node_names(source):
    """{record label: node name} for the Value boxes of a DOT source."""
    return {label: name for name, label in re.findall(r'(v\d+) \[label="(.*?)"\]', source)}


def edges(source):
    return re.findall(r"^\s*(\w+) -> (\w+)$", source, flags=re.M)


def test_small_graph_has_every_node_and_edge():
    a, b, c, d = small_graph()
    source = draw_graph(d).source
    for v in (a, b, c, d):
        assert f"data {v.data:.4f} | grad {v.grad:.4f}" in source
    assert 'label="*"' in source and 'label="+"' in source
    assert len(node_names(source)) == 4
    assert source.count("shape=ellipse") == 2
    assert len(edges(source)) == 6  # a->*, b->*, *->c, c->+, a->+, +->d


def test_operands_are_drawn_in_operand_order():
    a, b, c, d = small_graph()
    source = draw_graph(d).source
    names = node_names(source)
    name = {v: names[f"{{ data {v.data:.4f} | grad {v.grad:.4f} }}"] for v in (a, b, c, d)}
    into = lambda head: [tail for tail, h in edges(source) if h == head]  # noqa: E731
    assert into(f"{name[d]}op") == [name[c], name[a]]
    assert into(f"{name[c]}op") == [name[a], name[b]]
    assert into(name[d]) == [f"{name[d]}op"]


def test_a_shared_node_is_drawn_once():
    x = Value(3.0)
    y = x * x + x
    source = draw_graph(y).source
    assert source.count("data 3.0000") == 1
    x_name = node_names(source)["{ data 3.0000 | grad 0.0000 }"]
    assert [tail for tail, _ in edges(source)].count(x_name) == 3  # twice into *, once into +


def test_labels_name_values_and_are_escaped():
    a, b, c, d = small_graph()
    source = draw_graph(d, labels={a: "a", d: "out|{1}"}).source
    assert "{ a | data 2.0000 |" in source
    # Escaped, the record keeps 'out|{1}' as one field instead of splitting it.
    assert r"{ out\|\{1\} | data -4.0000 |" in source


def test_rankdir_and_its_validation():
    *_, d = small_graph()
    source = draw_graph(d, rankdir="TB").source
    assert "rankdir=TB" in source and 'label="data -4.0000 | grad 1.0000"' in source
    with pytest.raises(ValueError, match="rankdir"):
        draw_graph(d, rankdir="sideways")
    with pytest.raises(TypeError, match="expected a Value"):
        draw_graph(2.0)


def test_numbers_stay_short():
    source = draw_graph(Value(1e300) * Value(1e-9)).source
    assert "data 1.0000e+300" in source and "data 1.0000e-09" in source
    assert max(len(line) for line in source.splitlines()) < 100


def test_grads_from_create_graph_are_drawn():
    x = Value(3.0)
    y = x * x * x
    y.backward(create_graph=True)  # x.grad is a Value: 3 x**2 = 27
    assert "data 3.0000 | grad 27.0000" in draw_graph(y).source
    x.grad = 0.0


def test_deep_chain_without_recursion_error():
    x = Value(0.5)
    y = x
    for _ in range(50_000):
        y = y.tanh()
    source = draw_graph(y).source
    assert source.count("label=tanh") == 50_000
    assert len(edges(source)) == 100_000


def test_missing_python_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    with pytest.raises(ImportError, match=r"pip install 'chainrule\[viz\]'"):
        draw_graph(Value(1.0))


@needs_dot
@pytest.mark.parametrize("suffix, magic", [
    (".svg", None), (".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF")])
def test_render_with_the_real_dot_program(tmp_path, suffix, magic):
    a, b, c, d = small_graph()
    path = render_graph(d, tmp_path / f"graph{suffix}", labels={a: "a", b: "b"})
    assert path == tmp_path / f"graph{suffix}"
    data = path.read_bytes()
    if magic is None:
        assert data.lstrip().startswith((b"<?xml", b"<svg"))
        assert b"data 2.0000" in data and b">a<" in data
    else:
        assert data.startswith(magic)
    # The source next to the picture, and nothing else (no stray 'graph' file).
    assert (tmp_path / "graph.dot").read_text() == draw_graph(d, labels={a: "a", b: "b"}).source
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["graph.dot", f"graph{suffix}"])


@pytest.mark.parametrize("name", ["graph.dot", "graph.gv"])
def test_source_suffixes_write_only_the_source(tmp_path, name):
    *_, d = small_graph()
    path = render_graph(d, tmp_path / name)
    assert path.read_text().startswith("digraph")
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_unknown_suffix_is_refused_before_writing(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg, \.png, \.pdf"):
        render_graph(Value(1.0), tmp_path / "graph.jpeg")
    assert list(tmp_path.iterdir()) == []


def assert_install_hint(err, source_path):
    message = str(err)
    assert str(source_path) in message
    assert "apt-get install graphviz" in message and "brew install graphviz" in message
    assert "https://graphviz.org/download/" in message
    assert isinstance(err, RuntimeError) and err.source_path == source_path


def test_missing_dot_program_writes_source_and_says_how_to_install(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no `dot` anywhere
    *_, d = small_graph()
    with pytest.raises(GraphvizNotFound) as caught:
        render_graph(d, tmp_path / "graph.svg")
    assert_install_hint(caught.value, tmp_path / "graph.dot")
    assert (tmp_path / "graph.dot").read_text() == draw_graph(d).source
    assert not (tmp_path / "graph.svg").exists()


def test_dot_vanishing_after_the_check_is_reported_the_same_way(tmp_path, monkeypatch):
    # shutil.which says yes, but graphviz cannot start `dot`: graphviz.ExecutableNotFound.
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(viz.shutil, "which", lambda name: "/usr/bin/dot")
    with pytest.raises(GraphvizNotFound) as caught:
        render_graph(Value(1.0) + 1, tmp_path / "graph.png")
    assert_install_hint(caught.value, tmp_path / "graph.dot")
    assert not (tmp_path / "graph.png").exists()
