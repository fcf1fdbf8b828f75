"""Pictures of computation graphs: drawn with Graphviz (the optional `viz` extra), or
as plain text, which needs nothing installed.

``draw_graph`` builds a ``graphviz.Digraph`` in memory (needs only the Python package),
or with ``format="text"`` a list of the nodes, one a line; when Graphviz cannot show a
picture (no package, or no ``dot`` program) it gives the text, and warns.
``render_graph`` writes either to a file; a picture (.svg, .png, .pdf) also needs
Graphviz's ``dot`` program. When that program is missing, the DOT source and the text
are still written, so nothing is lost: the source can be rendered later, or pasted into
an online viewer.

Nodes are named as ``backward(explain=...)`` names them (``chainrule.explain.NodeNames``),
so a picture and an explanation of the same graph say the same names.
"""

import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

from ..explain import NodeNames, array_text, definition, operands, reading_order

__all__ = ["GraphvizNotFound", "draw_graph", "render_graph"]

# The picture formats render_graph makes with `dot`, by file suffix; the source suffixes
# are written without it, and so is the text.
RENDER_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
SOURCE_SUFFIXES = (".dot", ".gv")
TEXT_SUFFIX = ".txt"

INSTALL_HINT = ("install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), "
                "`brew install graphviz` (macOS), or see https://graphviz.org/download/")
PACKAGE_HINT = "pip install 'chainrule[viz]'"


class GraphvizNotFound(RuntimeError):
    """Graphviz cannot make the picture (its ``dot`` program, or the graphviz Python
    package, is not installed); what could be written was.

    ``path`` is the picture that was not made, ``source_path`` where its DOT source went
    (None without the package, which writes it), ``text_path`` where the graph went as
    text.
    """

    def __init__(self, path, source_path, text_path):
        self.path = Path(path)
        self.source_path = None if source_path is None else Path(source_path)
        self.text_path = Path(text_path)
        if self.source_path is None:
            message = (f"cannot write {self.path}: drawing with Graphviz needs the graphviz "
                       f"Python package ({PACKAGE_HINT}). The graph was written as text to "
                       f"{self.text_path}")
        else:
            message = (f"cannot render {self.path}: Graphviz's `dot` program was not "
                       f"found. The graph was written as text to {self.text_path}, and "
                       f"the DOT source to {self.source_path} (render it later with "
                       f"`dot -T{self.path.suffix.lstrip('.') or 'svg'} "
                       f"{self.source_path} -o {self.path}`). To {INSTALL_HINT}")
        super().__init__(message)


# -> a graphviz.Digraph, or the text (a str): written Any, as graphviz is optional
def draw_graph(root: Any, rankdir: str = "LR", labels: dict[Any, str] | None = None,
               names: dict[str, Any] | None = None, format: str | None = None) -> Any:
    """The computation graph of ``root`` (a Value or a Tensor), like micrograd's draw_dot.

    ``format="dot"`` gives a ``graphviz.Digraph`` (needs the ``graphviz`` package;
    ``render_graph`` writes the picture); ``format="text"`` a str that needs nothing
    installed: one line per node, ``name = how it was made``, then its data and grad,
    the output first (``print`` it). Without ``format``, the Digraph where Graphviz can
    show it (the package and its ``dot`` program are installed), else the text, with a
    warning that says how to install Graphviz.

    A node is named as ``backward(explain=...)`` names it: from ``labels`` (a mapping
    from node to name), its own ``label`` (a Value's), ``names`` (a mapping from name to
    node, such as ``locals()``), or else v1, v2, ... (t1, t2, ... for Tensors) in the
    order the walk meets them. A node used twice is drawn once; the text refers to it
    by name after. A Tensor's box shows its shape and dtype, and its numbers when it
    has at most six entries.

    In the Digraph every node is a box showing its name, data and grad; every interior
    node gets a small node for its operation, with edges operand -> operation ->
    result. Edges leave the operands in operand order, and the layout keeps that order
    (``ordering=in``), so ``a - b`` and ``b - a`` look different.

    >>> a, b = cr.Value(2.0), cr.Value(3.0)
    >>> c = a * b + a
    >>> c.backward()
    >>> print(cr.draw_graph(c, labels={a: "a", b: "b", c: "c"}, format="text"))
    c = v1 + a   data 8.0000   grad 1.0000
    a            data 2.0000   grad 4.0000
    v1 = a * b   data 6.0000   grad 1.0000
    b            data 3.0000   grad 2.0000
    >>> dot = cr.draw_graph(c, labels={a: "a", b: "b", c: "c"}, format="dot")
    >>> type(dot).__name__
    'Digraph'
    >>> "{ a | data 2.0000 | grad 4.0000 }" in dot.source
    True
    >>> dot.source.count("->")      # a, b -> *; * -> v1; v1, a -> +; + -> c
    6
    """
    if not hasattr(root, "_prev"):
        raise TypeError(f"draw_graph: expected a Value or a Tensor, got {type(root).__name__}")
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"draw_graph: rankdir must be LR, RL, TB or BT, got {rankdir!r}")
    if format not in (None, "dot", "text"):
        raise ValueError(f"draw_graph: format must be 'dot' or 'text' (or None: 'dot' "
                         f"where Graphviz can show it), got {format!r}")
    if format is None:
        missing = _graphviz_missing()
        if missing:
            warnings.warn(f"draw_graph: {missing}, so the graph is given as text (print "
                          f"it); format='text' asks for it without this warning",
                          stacklevel=2)
            format = "text"
        else:
            format = "dot"
    name = NodeNames(root, labels=labels, names=names)
    if format == "text":
        return _text(root, name)
    return _digraph(root, name, rankdir)


def _graphviz_missing():
    """Why Graphviz cannot show a picture here, or None if it can."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return f"the graphviz Python package is not installed ({PACKAGE_HINT})"
    if shutil.which("dot") is None:
        return "Graphviz's `dot` program was not found (to " + INSTALL_HINT + ")"
    return None


def _text(root, name):
    """One line per node, in explain's order: the definition, then its fields (data and
    grad), in aligned columns."""
    rows = [[definition(node, name)] + _fields(node) for node in reading_order(root)]
    widths = {}
    for row in rows:
        for column, cell in enumerate(row[:-1]):
            widths[column] = max(widths.get(column, 0), len(cell))
    return "\n".join("   ".join([cell.ljust(widths[column]) for column, cell
                                 in enumerate(row[:-1])] + row[-1:]) for row in rows)


def _fields(node):
    """['data 2.0000', 'grad 4.0000'] for a Value; shape and dtype, and the numbers when
    they are few, for a Tensor."""
    if not hasattr(node, "_args"):
        return [f"data {_number(node.data)}", f"grad {_number(node.grad)}"]
    data = node._data
    fields = [f"{tuple(data.shape)} {data.dtype}"]
    numbers = array_text(data)
    if numbers is not None:
        fields.append(f"data {numbers}")
    grad = getattr(node, "_grad", None)
    grad = getattr(grad, "_data", grad)  # a Tensor after create_graph=True
    if grad is not None and array_text(grad) is not None:
        fields.append(f"grad {array_text(grad)}")
    return fields


def _digraph(root, name, rankdir):
    graphviz = _import_graphviz()
    # The nodes in explain's order, numbered: the same picture from run to run, unlike
    # micrograd's id()-based names and set order.
    nodes = reading_order(root)
    index = {id(node): i for i, node in enumerate(nodes)}
    dot = graphviz.Digraph(graph_attr={"rankdir": rankdir, "ordering": "in"},
                           node_attr={"shape": "record"})
    # A record's fields run across the box; with LR/RL they need braces to do so.
    horizontal = "{{ {} }}" if rankdir in ("LR", "RL") else "{}"
    for i, node in enumerate(nodes):
        fields = [_record_text(text) for text in [name(node)] + _fields(node)]
        dot.node(f"n{i}", horizontal.format(" | ".join(fields)))
        if node._prev:
            op = f"n{i}op"
            label = node._op.name if hasattr(node, "_args") else str(node._op)
            dot.node(op, graphviz.escape(label or "?"), shape="ellipse")
            dot.edge(op, f"n{i}")
            for operand in operands(node):  # once per operand: a * a has two edges
                dot.edge(f"n{index[id(operand)]}", op)
    return dot


def render_graph(root: Any, path: str | os.PathLike[str],
                 labels: dict[Any, str] | None = None,
                 names: dict[str, Any] | None = None) -> Path:
    """Write a picture of the graph of ``root`` to ``path``; returns ``path`` as a Path.

    The suffix picks the format: .svg, .png or .pdf are rendered by Graphviz's ``dot``
    program; .dot or .gv get just the DOT source; .txt the text of
    ``draw_graph(format="text")``, which needs nothing installed. For a picture, the
    DOT source and the text are first written next to it (``path`` with suffixes .dot
    and .txt), so a missing ``dot`` program (``GraphvizNotFound``) loses nothing;
    without the graphviz package, the text is written and ``GraphvizNotFound`` raised.
    ``labels`` and ``names`` name the nodes, as in ``draw_graph``.

    >>> import pathlib, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> x = cr.Value(2.0)
    >>> y = x * x
    >>> path = cr.render_graph(y, pathlib.Path(folder.name) / "graph.dot")  # no `dot` needed
    >>> path.name, path.read_text().count("->")     # x -> * twice, * -> y
    ('graph.dot', 3)
    >>> print(cr.render_graph(y, pathlib.Path(folder.name) / "graph.txt").read_text(), end="")
    v2 = v1 * v1   data 4.0000   grad 0.0000
    v1             data 2.0000   grad 0.0000
    >>> folder.cleanup()
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in RENDER_FORMATS and suffix not in SOURCE_SUFFIXES and suffix != TEXT_SUFFIX:
        raise ValueError(f"render_graph: cannot tell the format of {path} from its suffix; "
                         f"use .svg, .png, .pdf, .dot/.gv for the Graphviz source, or .txt "
                         f"for text")
    text = draw_graph(root, labels=labels, names=names, format="text")
    if suffix == TEXT_SUFFIX:
        path.write_text(text + "\n", encoding="utf-8")
        return path
    text_path = path.with_suffix(TEXT_SUFFIX)
    try:
        graphviz = _import_graphviz()
    except ImportError:
        text_path.write_text(text + "\n", encoding="utf-8")
        raise GraphvizNotFound(path, None, text_path) from None
    dot = draw_graph(root, labels=labels, names=names, format="dot")
    source_path = path if suffix in SOURCE_SUFFIXES else path.with_suffix(".dot")
    source_path.write_text(dot.source, encoding="utf-8")
    if suffix in SOURCE_SUFFIXES:
        return path
    if shutil.which("dot") is None:
        text_path.write_text(text + "\n", encoding="utf-8")
        raise GraphvizNotFound(path, source_path, text_path)
    try:
        # pipe() returns the bytes and writes no files; render() would leave its own
        # copy of the source behind.
        picture = dot.pipe(format=RENDER_FORMATS[suffix])
    except graphviz.ExecutableNotFound:
        text_path.write_text(text + "\n", encoding="utf-8")
        raise GraphvizNotFound(path, source_path, text_path) from None
    path.write_bytes(picture)
    return path


def _import_graphviz():
    """The graphviz package, imported only when drawing: it is an optional dependency."""
    try:
        import graphviz
    except ImportError:
        raise ImportError(f"drawing graphs with Graphviz needs the graphviz Python "
                          f"package: {PACKAGE_HINT} (or draw_graph(..., format='text'), "
                          f"which needs nothing)") from None
    return graphviz


def _number(x):
    """Four decimals, as micrograd shows them; scientific notation where that would
    print a huge string or round a small number to zero."""
    x = x.data if hasattr(x, "_prev") else x  # grads are Values after create_graph=True
    if x == 0 or 1e-4 <= abs(x) < 1e6:
        return f"{x:.4f}"
    return f"{x:.4e}"  # also inf and nan


def _record_text(text):
    """Escape the characters that structure a record label (and backslash itself), so a
    name like 'a|b' stays one field."""
    return re.sub(r'([\\{}|<>"])', r"\\\1", text)
