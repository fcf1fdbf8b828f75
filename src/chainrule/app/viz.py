"""Pictures of computation graphs, drawn with Graphviz (the optional `viz` extra).

``draw_graph`` builds a ``graphviz.Digraph`` in memory (needs only the Python package);
``render_graph`` turns it into a file, which also needs Graphviz's ``dot`` program. When
that program is missing, the DOT source is still written, so nothing is lost: it can be
rendered later, or pasted into an online viewer.
"""

import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..scalar.value import Value

__all__ = ["GraphvizNotFound", "draw_graph", "render_graph"]

# The picture formats render_graph makes with `dot`, by file suffix; the source suffixes
# are written without it.
RENDER_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
SOURCE_SUFFIXES = (".dot", ".gv")

INSTALL_HINT = ("install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), "
                "`brew install graphviz` (macOS), or see https://graphviz.org/download/")


class GraphvizNotFound(RuntimeError):
    """Graphviz's ``dot`` program is not installed; the DOT source was written anyway.

    ``source_path`` is where the source went, ``path`` the picture that was not made.
    """

    def __init__(self, path, source_path):
        self.path = Path(path)
        self.source_path = Path(source_path)
        super().__init__(
            f"cannot render {self.path}: Graphviz's `dot` program was not found. The DOT "
            f"source was written to {self.source_path} (render it later with "
            f"`dot -T{self.path.suffix.lstrip('.') or 'svg'} {self.source_path} -o "
            f"{self.path}`). To {INSTALL_HINT}")


# -> a graphviz.Digraph, written Any because graphviz is an optional dependency
def draw_graph(root: Value, rankdir: str = "LR",
               labels: dict[Value, str] | None = None) -> Any:
    """The computation graph of ``root`` as a ``graphviz.Digraph``, like micrograd's draw_dot.

    Every Value is one box showing its name (from ``labels``, a mapping from Value to
    name, or else its own ``label``, if either has one), its data and its grad; every
    interior Value gets a small node for its operation, with edges operand -> operation
    -> result. Edges leave the operands in
    operand order, and the layout keeps that order (``ordering=in``), so ``a - b`` and
    ``b - a`` look different. A Value used twice is drawn once. Needs the ``graphviz``
    package (``render_graph`` writes the picture).

    >>> a, b = cr.Value(2.0), cr.Value(3.0)
    >>> c = a * b + a
    >>> c.backward()
    >>> dot = cr.draw_graph(c, labels={a: "a", b: "b", c: "c"})
    >>> type(dot).__name__
    'Digraph'
    >>> "{ a | data 2.0000 | grad 4.0000 }" in dot.source
    True
    >>> dot.source.count("->")      # a, b -> *; * -> a*b; a*b, a -> +; + -> c
    6
    """
    graphviz = _import_graphviz()
    if not isinstance(root, Value):
        raise TypeError(f"draw_graph: expected a Value, got {type(root).__name__}")
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"draw_graph: rankdir must be LR, RL, TB or BT, got {rankdir!r}")
    labels = labels or {}

    # Number the nodes in the order an explicit-stack walk discovers them: no recursion
    # (graphs can be far deeper than Python's recursion limit), and the same picture
    # from run to run, unlike micrograd's id()-based names and set order.
    index = {root: 0}
    nodes = [root]
    stack = [root]
    while stack:
        for operand in stack.pop()._prev:
            if operand not in index:
                index[operand] = len(nodes)
                nodes.append(operand)
                stack.append(operand)

    dot = graphviz.Digraph(graph_attr={"rankdir": rankdir, "ordering": "in"},
                           node_attr={"shape": "record"})
    # A record's fields run across the box; with LR/RL they need braces to do so.
    horizontal = "{{ {} }}" if rankdir in ("LR", "RL") else "{}"
    for i, node in enumerate(nodes):
        fields = [f"data {_number(node.data)}", f"grad {_number(node.grad)}"]
        name = labels.get(node) or node.label
        if name:
            fields.insert(0, _record_text(str(name)))
        dot.node(f"v{i}", horizontal.format(" | ".join(fields)))
        if node._prev:
            op = f"v{i}op"
            dot.node(op, graphviz.escape(str(node._op) or "?"), shape="ellipse")
            dot.edge(op, f"v{i}")
            for operand in node._prev:  # once per operand: a * a has two edges
                dot.edge(f"v{index[operand]}", op)
    return dot


def render_graph(root: Value, path: str | os.PathLike[str],
                 labels: dict[Value, str] | None = None) -> Path:
    """Write a picture of the graph of ``root`` to ``path``; returns ``path`` as a Path.

    The suffix picks the format: .svg, .png or .pdf are rendered by Graphviz's ``dot``
    program; .dot or .gv get just the DOT source. For a picture, the DOT source is first
    written next to it (``path`` with suffix .dot), so a missing ``dot`` program
    (``GraphvizNotFound``) loses nothing.

    >>> import pathlib, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> x = cr.Value(2.0)
    >>> y = x * x
    >>> path = cr.render_graph(y, pathlib.Path(folder.name) / "graph.dot")  # no `dot` needed
    >>> path.name, path.read_text().count("->")     # x -> * twice, * -> y
    ('graph.dot', 3)
    >>> folder.cleanup()
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in RENDER_FORMATS and suffix not in SOURCE_SUFFIXES:
        raise ValueError(f"render_graph: cannot tell the format of {path} from its suffix; "
                         f"use .svg, .png, .pdf, or .dot/.gv for the Graphviz source")
    graphviz = _import_graphviz()
    dot = draw_graph(root, labels=labels)
    source_path = path if suffix in SOURCE_SUFFIXES else path.with_suffix(".dot")
    source_path.write_text(dot.source, encoding="utf-8")
    if suffix in SOURCE_SUFFIXES:
        return path
    if shutil.which("dot") is None:
        raise GraphvizNotFound(path, source_path)
    try:
        # pipe() returns the bytes and writes no files; render() would leave its own
        # copy of the source behind.
        picture = dot.pipe(format=RENDER_FORMATS[suffix])
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFound(path, source_path) from None
    path.write_bytes(picture)
    return path


def _import_graphviz():
    """The graphviz package, imported only when drawing: it is an optional dependency."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("drawing graphs needs the graphviz Python package: "
                          "pip install 'chainrule[viz]'") from None
    return graphviz


def _number(x):
    """Four decimals, as micrograd shows them; scientific notation where that would
    print a huge string or round a small number to zero."""
    x = x.data if isinstance(x, Value) else x  # grads are Values after create_graph=True
    if x == 0 or 1e-4 <= abs(x) < 1e6:
        return f"{x:.4f}"
    return f"{x:.4e}"  # also inf and nan


def _record_text(text):
    """Escape the characters that structure a record label (and backslash itself), so a
    name like 'a|b' stays one field."""
    return re.sub(r'([\\{}|<>"])', r"\\\1", text)
