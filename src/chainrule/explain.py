"""A backward pass that explains itself: ``y.backward(explain=True)``.

Each step of the chain rule is printed as it happens, in the order backward() takes
them (the output first, the inputs last)::

    >>> from chainrule import Value
    >>> a, b = Value(2.0, label="a"), Value(3.0, label="b")
    >>> c = a * b; c.label = "c"
    >>> d = c + a; d.label = "d"
    >>> d.backward(explain=True)
    d.grad = 1.0   (the start: dd/dd = 1)
    d = c + a   c.grad += 1 * d.grad = 1.0 * 1.0 -> 1.0
                a.grad += 1 * d.grad = 1.0 * 1.0 -> 1.0
    c = a * b   a.grad += b.data * c.grad = 3.0 * 1.0 -> 4.0
                b.grad += a.data * c.grad = 2.0 * 1.0 -> 2.0

``a`` is used twice, so its gradient arrives in two steps (1 + 3): that is why the
engine writes ``+=``. Each step reads partial * gradient, on both engines.

A leaf without a name (a constant, such as the -1 of ``p - q``, which the engine
computes as ``p + (-1 * q)``) is defined on a line of its own, below the step that uses
it, as each node is defined below its first use::

    >>> p, q = Value(5.0, label="p"), Value(2.0, label="q")
    >>> r = p - q; r.label = "r"
    >>> r.backward(explain=True)
    r.grad = 1.0   (the start: dr/dr = 1)
    r = p + v2    p.grad += 1 * r.grad = 1.0 * 1.0 -> 1.0
                  v2.grad += 1 * r.grad = 1.0 * 1.0 -> 1.0
    v2 = q * v1   q.grad += v1.data * v2.grad = -1.0 * 1.0 -> -1.0
                  v1.grad += q.data * v2.grad = 2.0 * 1.0 -> 2.0
    v1 = -1.0     (a leaf with no name: a constant, or an input)

On the tensor engine, the same story is told with shapes (explained on the output's
first line), the numbers of every array of at most ``SMALL`` entries, and a line for each
leaf (its values are in no step)::

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward(explain={"x": x, "y": y})
    shapes: (shape of the gradient arriving) -> (shape of the operand's gradient)
    y.grad = 1   (the start)
    y = sum(t1)   t1.grad += y.grad copied to every summed position   () -> (2,)   adds [1.0, 1.0]
    t1 = x * x    x.grad += x * t1.grad   (2,) -> (2,)   adds [1.0, 2.0]
                  x.grad += x * t1.grad   (2,) -> (2,)   adds [1.0, 2.0]
    x = [1.0, 2.0]   (a leaf, (2,) float64)

Nodes are named by ``NodeNames``, which the pictures of ``chainrule.app.viz`` use too:
by their ``label`` (Values), by the ``names`` given to backward (``explain={"x": x,
"W": W}``; ``explain=locals()`` works too), or else numbered in the order the walk
meets them, inputs first (v1, v2, ... for Values; t1, t2, ... for Tensors).

Each rule carries its own formula as text (``texts`` of a ``value.DERIVATIVES`` entry,
of a ``Primitive`` of ``chainrule.rules``); the numbers come from the rules themselves,
so what is printed is what ran. tests/test_explain.py checks that every formula,
evaluated, gives the rule's number. The backward passes call ``step`` (their
``on_step`` hook) at each node; this module knows nothing else of them.
"""

import numpy as np

from .graph import topological_order

__all__ = ["ScalarStory", "TensorStory", "NodeNames", "reading_order", "definition",
           "operands", "array_text", "SMALL"]

# An array of at most this many entries is printed with its numbers; a larger one by
# its shape only, so that a line stays a line.
SMALL = 6

SHAPES_LEGEND = "shapes: (shape of the gradient arriving) -> (shape of the operand's gradient)"

_INFIX = {"+": "+", "*": "*", "/": "/", "**": "**",
          "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
          "matmul": "@"}


def _number(x):
    """A float as Python prints it, or to 6 significant digits when that is long."""
    text = repr(float(x))
    return text if len(text) <= 10 else f"{float(x):.6g}"


def _entry(x):
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, complex):
        return repr(x)
    return _number(x)


def array_text(array, limit=SMALL):
    """The numbers of a small array on one line (``[[1.0, 2.0], [3.0, 4.0]]``), or None
    when it has more than ``limit`` entries."""
    array = np.asarray(array)
    if array.size > limit:
        return None

    def nested(x):
        return "[" + ", ".join(nested(e) for e in x) + "]" if isinstance(x, list) \
            else _entry(x)
    return nested(array.tolist())


def _is_node(x):
    return hasattr(x, "_prev")


def operands(node):
    """The nodes a node's definition names: a Tensor's Tensor arguments (those that need
    no gradient too, which are not among its ``_prev``), a Value's operands."""
    args = getattr(node, "_args", None)
    if args is None:
        return node._prev
    return tuple(a for a in args if _is_node(a))


def reading_order(root):
    """Every node of ``root``'s graph once, in the order explain tells them: the output
    first, each interior node after every node that uses it, and each leaf right after
    the first node that uses it."""
    order = topological_order(root)
    if not order:
        return [root]
    nodes, placed = [], set()
    for node in reversed(order):
        nodes.append(node)
        for operand in operands(node):
            if not operand._prev and id(operand) not in placed:
                placed.add(id(operand))
                nodes.append(operand)
    return nodes


class NodeNames:
    """One name for each node of ``root``'s graph, the same in explain and in pictures.

    A node is called, in this order: by ``labels`` (a mapping node -> name, as
    ``draw_graph`` takes), by its own ``label`` (a Value's), by ``names`` (a mapping
    name -> node, such as ``locals()``, as ``backward(explain=...)`` takes; names
    starting with ``_`` and objects that are not nodes are skipped), or else numbered
    v1, v2, ... (t1, t2, ... for Tensors) in the order of the walk, inputs first, so the
    names read like a program: v1 and v2 are combined into v3.

    >>> a = cr.Value(2.0, label="a")
    >>> y = a * 3 + 1
    >>> names = NodeNames(y)
    >>> [names(node) for node in reading_order(y)]
    ['v4', 'v3', 'v2', 'a', 'v1']
    """

    def __init__(self, root, labels=None, names=None, prefix=None):
        self.given = {}
        if isinstance(names, dict):
            for name, node in names.items():
                if _is_node(node) and not name.startswith("_"):
                    self.given.setdefault(id(node), name)
        for node in topological_order(root) or [root]:  # a label comes before a name
            for labelled in (node, *operands(node)):
                if getattr(labelled, "label", ""):
                    self.given[id(labelled)] = str(labelled.label)
        self._keep = list((labels or {}).items())  # ids stay valid while we hold them
        for node, name in self._keep:
            self.given[id(node)] = str(name)
        self.prefix = prefix or ("t" if hasattr(type(root), "_args") else "v")
        self.count = 0
        self.numbers = {}
        order = topological_order(root) or [root]
        for node in order:  # operands before the node: inputs get the small numbers
            for operand in operands(node):
                self(operand)
            self(node)

    def is_given(self, node):
        """Whether the user named this node (a label or a name), or it was numbered."""
        return id(node) in self.given

    def __call__(self, node):
        key = id(node)
        given = self.given.get(key)
        if given is not None:
            return given
        if key not in self.numbers:  # numbered once, on first sight
            self.count += 1
            self.numbers[key] = f"{self.prefix}{self.count}"
        return self.numbers[key]


def definition(node, name):
    """How ``node`` was made, as a line of a program (``v3 = v1 * x``); a leaf's
    definition is its name alone. ``name`` is a ``NodeNames``."""
    if not node._prev:
        return name(node)
    if hasattr(node, "_args"):
        return _tensor_definition(node, name)
    return _scalar_definition(node, name)


def _scalar_definition(node, name):
    op, names = node._op, [name(p) for p in node._prev]
    if op in _INFIX and len(names) == 2:
        return f"{name(node)} = {names[0]} {_INFIX[op]} {names[1]}"
    if op.startswith("**"):
        return f"{name(node)} = {names[0]}{op}"
    if op.endswith("**"):
        return f"{name(node)} = {op}{names[0]}"
    if op == "linear":
        n = (len(names) - 1) // 2
        terms = [f"{w}*{x}" for w, x in zip(names[1:n + 1], names[n + 1:])]
        if len(terms) > 3:
            terms = terms[:2] + ["..."] + terms[-1:]
        return f"{name(node)} = {' + '.join([names[0]] + terms)}"
    function = "relu" if op == "ReLU" else (op or "?")
    return f"{name(node)} = {function}({', '.join(names)})"


def _argument(arg, name):
    """A Tensor argument by its name; a constant by its numbers when it is small."""
    if _is_node(arg):
        return name(arg)
    if isinstance(arg, np.generic) and np.ndim(arg) == 0:
        return _entry(arg.item())
    if hasattr(arg, "shape") and getattr(arg, "ndim", 0) > 0:
        return array_text(arg) or f"array{_shape(arg)}"
    return repr(arg)


def _tensor_definition(node, name):
    prim, args, kwargs = node._op, node._args, node._kwargs or {}
    names = [_argument(a, name) for a in args]
    if prim.name in _INFIX and len(names) == 2:
        return f"{name(node)} = {names[0]} {_INFIX[prim.name]} {names[1]}"
    options = [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    return f"{name(node)} = {prim.name}({', '.join(names + options)})"


class _Story:
    """Prints the lines of one backward pass, aligned in two columns.

    Made when the pass starts, with the walk's ``order`` and the ``seed``: it names the
    nodes and prints the start; the pass then calls ``step`` at each node."""

    def __init__(self, root, names, order, seed, print_line=print):
        self.print_line = print_line
        self.root, self.order = root, order
        self.name = NodeNames(root, names=names)
        self.told = set()  # the leaves already defined on a line of their own
        # a leaf's numbers can be long: its line is left out of the alignment
        self.width = max([len(self.definition(node)) for node in order] + [0]) + 3
        self.start(seed)

    def definition(self, node):
        return definition(node, self.name)

    def say(self, left, right):
        """One line: a node's definition (or nothing) on the left, a step on the right."""
        self.print_line(f"{left:<{max(self.width, len(left) + 3)}}{right}".rstrip())

    def leaves(self, nodes):
        """The leaves that get a line of their own, among the operands of ``nodes``."""
        found = {}
        for node in nodes:
            for operand in operands(node):
                if not operand._prev and self.tells(operand):
                    found.setdefault(id(operand), operand)
        return list(found.values())

    def tell_leaves(self, node):
        """Define, below a node's steps, the leaves it is the first to use."""
        for leaf in self.leaves([node]):
            if id(leaf) not in self.told:
                self.told.add(id(leaf))
                self.say(*self.leaf_line(leaf))


class ScalarStory(_Story):
    """The explanation of a Value's backward pass."""

    def start(self, seed):
        root, seed = self.name(self.root), _data(seed)
        why = f"the start: d{root}/d{root} = 1" if seed == 1.0 else "the gradient given"
        self.print_line(f"{root}.grad = {_number(seed)}   ({why})")

    def tells(self, leaf):
        # a named leaf's number is in every step that reads it (x.data = 2.0)
        return not self.name.is_given(leaf)

    def leaf_line(self, leaf):
        return (f"{self.name(leaf)} = {_number(_data(leaf.data))}",
                "(a leaf with no name: a constant, or an input)")

    def formulas(self, node):
        """The partial derivative of the node with respect to each operand, as text:
        the formulas its rule carries, with the operands' names filled in."""
        operands = node._prev
        data = [f"{self.name(p)}.data" for p in operands]
        texts = getattr(node._rule, "texts", None)
        if callable(texts):  # a rule for any number of operands (a neuron's sum)
            texts = texts(len(operands))
        if texts and len(texts) == len(operands):
            return [t.format(*data, out=f"{self.name(node)}.data") for t in texts]
        return [f"d{self.name(node)}/d{self.name(p)}" for p in operands]

    def walk(self, create_graph):
        """Value.backward's walk, each step told."""
        for node in reversed(self.order):
            self.step(node, lambda: node._chain_rule(create_graph))

    def step(self, node, take_step):
        """Tell one node's step of the chain rule, and take it with ``take_step()``.

        The partials are the rule's own (``node._partials``); the running totals are
        the operands' gradients as the step adds to them, in the same order. A node
        with a hand-written micrograd closure is shown by its effect, after it ran.
        """
        operands = node._prev
        if not operands:
            return
        if getattr(node, "_closure", None) is not None:
            take_step()
            for i, operand in enumerate(operands):
                self.say(self.definition(node) if i == 0 else "",
                         f"{self.name(operand)}.grad -> {_number(operand.grad)}   "
                         f"(by its hand-written _backward)")
            self.tell_leaves(node)
            return
        partials = node._partials(False)
        g = _data(node.grad)
        running = {}
        for i, (operand, formula, d) in enumerate(zip(operands, self.formulas(node), partials)):
            before = running.get(id(operand), _data(operand.grad))
            running[id(operand)] = before + _data(d) * g
            self.say(self.definition(node) if i == 0 else "",
                     f"{self.name(operand)}.grad += {formula} * {self.name(node)}.grad = "
                     f"{_number(_data(d))} * {_number(g)} -> {_number(running[id(operand)])}")
        take_step()
        self.tell_leaves(node)


def _data(x):
    return x.data if hasattr(x, "_prev") else x


def _array(x):
    """The array of a Tensor (read without the side effects of ``.data``), or x."""
    return x._data if hasattr(x, "_data") else x


def _shape(x):
    return str(tuple(np.shape(x)))


class TensorStory(_Story):
    """The explanation of a Tensor's backward pass: the same steps, with shapes."""

    def start(self, seed):
        self.print_line(SHAPES_LEGEND)
        seed = _array(seed)
        self.print_line(f"{self.name(self.root)}.grad = "
                        + ("1   (the start)" if np.size(seed) == 1 and np.all(seed == 1)
                           else f"the gradient given   {_shape(seed)}"))

    def tells(self, leaf):
        return True  # a leaf's numbers appear in no step: every leaf gets its line

    def leaf_line(self, leaf):
        array = _array(leaf)
        numbers = array_text(array)
        left = f"{self.name(leaf)} = {numbers}" if numbers is not None \
            else f"{self.name(leaf)} = array{_shape(array)}"
        return left, f"(a leaf, {_shape(array)} {np.asarray(array).dtype})"

    def formula(self, node, argnum):
        text = node._op.texts.get(argnum)
        names = [_argument(a, self.name) for a in node._args]
        if text:
            return text.format(*names, g=f"{self.name(node)}.grad", out=self.name(node))
        return f"vjp of {node._op.name} (argument {argnum + 1}) applied to " \
               f"{self.name(node)}.grad"

    def step(self, node, argnum, g, raw, fitted):
        """One vector-Jacobian product: from the node's gradient to one argument's."""
        arg = node._args[argnum]
        first = argnum == node._grad_argnums[0]
        shapes = f"{_shape(g)} -> {_shape(raw)}"
        if np.shape(raw) != np.shape(fitted):
            shapes += f", summed over broadcast axes to {_shape(fitted)}"
        numbers = array_text(_array(fitted))
        if numbers is not None:
            shapes += f"   adds {numbers}"
        self.say(self.definition(node) if first else "",
                 f"{self.name(arg)}.grad += {self.formula(node, argnum)}   {shapes}")
        if argnum == node._grad_argnums[-1]:
            self.tell_leaves(node)
