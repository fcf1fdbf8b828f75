"""draw_graph and render_graph: what the picture contains (drawn by Graphviz, or as
text), and how files are written."""

import importlib.util
import os
import re
import shutil
import sys
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.app import viz
from chainrule.scalar.value import Value
from chainrule.app.viz import GraphvizNotFound, draw_graph, render_graph

# graphviz is in the `test` extra; CI also installs the `dot` program and sets
# CHAINRULE_REQUIRE_DOT=1, so that rendering is tested for real there, never skipped.
# The text pictures need neither, and the tests of their absence simulate it.
REQUIRE_DOT = os.environ.get("CHAINRULE_REQUIRE_DOT") == "1"
needs_graphviz = pytest.mark.skipif(importlib.util.find_spec("graphviz") is None
                                    and not REQUIRE_DOT,
                                    reason="the graphviz Python package is not installed")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None and not REQUIRE_DOT,
                               reason="Graphviz's dot program is not installed")


def dot_source(root, **kwargs):
    return draw_graph(root, format="dot", **kwargs).source


def small_graph():
    """c = a*b; d = c + a: 4 Values, 2 operations, 6 edges."""
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    d = c + a
    d.backward()
    return a, b, c, d


def node_names(source):
    """{record label: node id} for the boxes of a DOT source."""
    return {label: name for name, label in re.findall(r'(n\d+) \[label="(.*?)"\]', source)}


def edges(source):
    return re.findall(r"^\s*(\w+) -> (\w+)$", source, flags=re.M)


@needs_graphviz
def test_small_graph_has_every_node_and_edge():
    a, b, c, d = small_graph()
    source = dot_source(d)
    for v in (a, b, c, d):
        assert f"data {v.data:.4f} | grad {v.grad:.4f}" in source
    assert 'label="*"' in source and 'label="+"' in source
    assert len(node_names(source)) == 4
    assert source.count("shape=ellipse") == 2
    assert len(edges(source)) == 6  # a->*, b->*, *->c, c->+, a->+, +->d


@needs_graphviz
def test_operands_are_drawn_in_operand_order():
    a, b, c, d = small_graph()
    source = dot_source(d)
    ids = node_names(source)
    # unnamed Values are numbered in the walk's order, inputs first, as explain does
    box = {a: "v1", b: "v2", c: "v3", d: "v4"}
    name = {v: ids[f"{{ {box[v]} | data {v.data:.4f} | grad {v.grad:.4f} }}"]
            for v in (a, b, c, d)}
    into = lambda head: [tail for tail, h in edges(source) if h == head]  # noqa: E731
    assert into(f"{name[d]}op") == [name[c], name[a]]
    assert into(f"{name[c]}op") == [name[a], name[b]]
    assert into(name[d]) == [f"{name[d]}op"]


@needs_graphviz
def test_a_shared_node_is_drawn_once():
    x = Value(3.0)
    y = x * x + x
    source = dot_source(y)
    assert source.count("data 3.0000") == 1
    x_id = node_names(source)["{ v1 | data 3.0000 | grad 0.0000 }"]
    assert [tail for tail, _ in edges(source)].count(x_id) == 3  # twice into *, once into +


@needs_graphviz
def test_labels_name_values_and_are_escaped():
    a, b, c, d = small_graph()
    source = dot_source(d, labels={a: "a", d: "out|{1}"})
    assert "{ a | data 2.0000 |" in source
    # Escaped, the record keeps 'out|{1}' as one field instead of splitting it.
    assert r"{ out\|\{1\} | data -4.0000 |" in source


@needs_graphviz
def test_rankdir_and_its_validation():
    *_, d = small_graph()
    source = dot_source(d, rankdir="TB")
    assert "rankdir=TB" in source and 'label="v4 | data -4.0000 | grad 1.0000"' in source
    with pytest.raises(ValueError, match="rankdir"):
        draw_graph(d, rankdir="sideways")
    with pytest.raises(ValueError, match="format must be 'dot' or 'text'"):
        draw_graph(d, format="svg")
    with pytest.raises(TypeError, match="expected a Value or a Tensor"):
        draw_graph(2.0)


@needs_graphviz
def test_numbers_stay_short():
    source = dot_source(Value(1e300) * Value(1e-9))
    assert "data 1.0000e+300" in source and "data 1.0000e-09" in source
    assert max(len(line) for line in source.splitlines()) < 100


@needs_graphviz
def test_grads_from_create_graph_are_drawn():
    x = Value(3.0)
    y = x * x * x
    y.backward(create_graph=True)  # x.grad is a Value: 3 x**2 = 27
    assert "data 3.0000 | grad 27.0000" in dot_source(y)
    assert "data 3.0000    grad 27.0000" in draw_graph(y, format="text")
    x.grad = 0.0


# --- the text picture: needs nothing installed -------------------------------------

def test_the_text_lists_each_node_once_output_first():
    a, b, c, d = small_graph()
    text = draw_graph(d, labels={a: "a", b: "b"}, format="text")
    assert text.splitlines() == [
        "v2 = v1 + a   data -4.0000   grad 1.0000",
        "a             data 2.0000    grad -2.0000",
        "v1 = a * b    data -6.0000   grad 1.0000",
        "b             data -3.0000   grad 2.0000",
    ]


def test_the_text_refers_to_a_shared_node_by_name():
    x = Value(3.0, label="x")
    y = x * x + x
    lines = draw_graph(y, format="text").splitlines()
    assert [line.split("   ")[0].strip() for line in lines] == ["v2 = v1 + x", "x",
                                                                "v1 = x * x"]


def test_the_text_needs_neither_graphviz_nor_dot(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    *_, d = small_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked for text: no warning
        assert draw_graph(d, format="text").startswith("v4 = v3 + v1")


def test_the_picture_and_explain_name_the_nodes_alike(capsys):
    """One naming (chainrule.explain.NodeNames): the definitions explain prints are the
    lines of the text picture, and the names in the Graphviz boxes."""
    x, y = Value(2.0), Value(3.0)
    f = x * y + x * 2
    f.backward(explain={"x": x, "y": y, "f": f})
    told = capsys.readouterr().out
    text = draw_graph(f, names={"x": x, "y": y, "f": f}, format="text")
    definitions = [line.split("   ")[0].strip() for line in text.splitlines()]
    assert definitions == ["f = v1 + v3", "v3 = x * v2", "x", "v2", "v1 = x * y", "y"]
    for line in definitions:
        if " = " in line:
            assert line in told
    assert "v2 = 2.0" in told  # the constant, a line in both
    if importlib.util.find_spec("graphviz"):
        source = dot_source(f, names={"x": x, "y": y, "f": f})
        assert {label.split(" | ")[0].strip("{ ") for label in node_names(source)} == \
            {"f", "v1", "v2", "v3", "x", "y"}


def test_tensors_are_drawn_with_shape_dtype_and_small_numbers():
    x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = cr.tensor(np.ones((3, 2)), requires_grad=True)
    mask = cr.tensor([1.0, 0.0])  # needs no gradient: a leaf all the same
    y = ((x * mask) @ w.T).sum()
    y.backward()
    lines = draw_graph(y, names={"x": x, "w": w, "y": y}, format="text").splitlines()
    columns = [re.sub(r" {3,}", "   ", line) for line in lines]
    assert columns == [  # x * mask is [[1, 0], [3, 0]]; y is its row sums times 3
        "y = sum(t4)   () float64   data 12.0",
        "t4 = t2 @ t3   (2, 3) float64   data [[1.0, 1.0, 1.0], [3.0, 3.0, 3.0]]",
        "t3 = transpose(w)   (2, 3) float64   data [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]",
        "w   (3, 2) float64   data [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]   "
        "grad [[4.0, 0.0], [4.0, 0.0], [4.0, 0.0]]",
        "t2 = x * t1   (2, 2) float64   data [[1.0, 0.0], [3.0, 0.0]]",
        "x   (2, 2) float64   data [[1.0, 2.0], [3.0, 4.0]]   grad [[3.0, 0.0], [3.0, 0.0]]",
        "t1   (2,) float64   data [1.0, 0.0]",
    ]
    big = cr.tensor(np.zeros((10, 10)), requires_grad=True)
    assert draw_graph(big.sum(), format="text").splitlines()[1].split() == \
        ["t1", "(10,", "10)", "float64"]  # too many entries: no numbers
    if importlib.util.find_spec("graphviz"):
        source = dot_source(y, names={"x": x, "w": w, "y": y})
        assert r"{ x | (2, 2) float64 | data [[1.0, 2.0], [3.0, 4.0]] |" in source
        assert "label=matmul" in source
        assert len(edges(source)) == 2 + 3 + 2 + 3  # sum, matmul, transpose, multiply


def test_without_graphviz_draw_graph_gives_the_text_and_says_why(monkeypatch):
    *_, d = small_graph()
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)  # no `dot`
    with pytest.warns(UserWarning, match=r"`dot` program was not found .*apt-get "
                                         r"install graphviz.*given as text"):
        text = draw_graph(d)
    assert text == draw_graph(d, format="text")
    monkeypatch.setitem(sys.modules, "graphviz", None)  # no package either
    with pytest.warns(UserWarning, match=r"graphviz Python package is not installed "
                                         r"\(pip install 'chainrule\[viz\]'\)"):
        assert draw_graph(d) == text


@needs_graphviz
@needs_dot
def test_with_graphviz_draw_graph_gives_a_digraph():
    *_, d = small_graph()
    assert type(draw_graph(d)).__name__ == "Digraph"


@needs_graphviz
def test_deep_chain_without_recursion_error():
    x = Value(0.5)
    y = x
    for _ in range(50_000):
        y = y.tanh()
    source = dot_source(y)
    assert source.count("label=tanh") == 50_000
    assert len(edges(source)) == 100_000
    assert len(draw_graph(y, format="text").splitlines()) == 50_001


def test_missing_python_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    with pytest.raises(ImportError, match=r"pip install 'chainrule\[viz\]' \(or "
                                          r"draw_graph\(\.\.\., format='text'\)"):
        draw_graph(Value(1.0), format="dot")


@needs_graphviz
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
    assert (tmp_path / "graph.dot").read_text() == dot_source(d, labels={a: "a", b: "b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["graph.dot", f"graph{suffix}"])


@needs_graphviz
@pytest.mark.parametrize("name", ["graph.dot", "graph.gv"])
def test_source_suffixes_write_only_the_source(tmp_path, name):
    *_, d = small_graph()
    path = render_graph(d, tmp_path / name)
    assert path.read_text().startswith("digraph")
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_the_txt_suffix_writes_the_text_and_needs_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    a, b, c, d = small_graph()
    path = render_graph(d, tmp_path / "graph.txt", labels={a: "a"})
    assert path.read_text() == draw_graph(d, labels={a: "a"}, format="text") + "\n"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.txt"]


def test_unknown_suffix_is_refused_before_writing(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg, \.png, \.pdf, \.dot/\.gv .* or \.txt"):
        render_graph(Value(1.0), tmp_path / "graph.jpeg")
    assert list(tmp_path.iterdir()) == []


def assert_install_hint(err, source_path, text_path):
    message = str(err)
    assert str(source_path) in message and str(text_path) in message
    assert "apt-get install graphviz" in message and "brew install graphviz" in message
    assert "https://graphviz.org/download/" in message
    assert isinstance(err, RuntimeError) and err.source_path == source_path
    assert err.text_path == text_path


@needs_graphviz
def test_missing_dot_program_writes_source_and_text_and_says_how_to_install(tmp_path,
                                                                            monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no `dot` anywhere
    *_, d = small_graph()
    with pytest.raises(GraphvizNotFound) as caught:
        render_graph(d, tmp_path / "graph.svg")
    assert_install_hint(caught.value, tmp_path / "graph.dot", tmp_path / "graph.txt")
    assert (tmp_path / "graph.dot").read_text() == dot_source(d)
    assert (tmp_path / "graph.txt").read_text() == draw_graph(d, format="text") + "\n"
    assert not (tmp_path / "graph.svg").exists()


@needs_graphviz
def test_dot_vanishing_after_the_check_is_reported_the_same_way(tmp_path, monkeypatch):
    # shutil.which says yes, but graphviz cannot start `dot`: graphviz.ExecutableNotFound.
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(viz.shutil, "which", lambda name: "/usr/bin/dot")
    with pytest.raises(GraphvizNotFound) as caught:
        render_graph(Value(1.0) + 1, tmp_path / "graph.png")
    assert_install_hint(caught.value, tmp_path / "graph.dot", tmp_path / "graph.txt")
    assert not (tmp_path / "graph.png").exists()


@pytest.mark.parametrize("name", ["graph.svg", "graph.dot"])
def test_missing_python_package_writes_the_text(tmp_path, monkeypatch, name):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    *_, d = small_graph()
    with pytest.raises(GraphvizNotFound) as caught:
        render_graph(d, tmp_path / name)
    err = caught.value
    assert err.source_path is None and err.text_path == tmp_path / "graph.txt"
    assert str(err) == (f"cannot write {tmp_path / name}: drawing with Graphviz needs the "
                        f"graphviz Python package (pip install 'chainrule[viz]'). The "
                        f"graph was written as text to {tmp_path / 'graph.txt'}")
    assert [p.name for p in tmp_path.iterdir()] == ["graph.txt"]
