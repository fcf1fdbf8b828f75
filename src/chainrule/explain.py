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
engine writes ``+=``. On the tensor engine, the same story is told with shapes.

Nodes are named by their ``label`` (Values), by the ``names`` given to backward
(``explain={"x": x, "W": W}``; ``explain=locals()`` works too), or else numbered in
the order they are met (v1, v2, ... for Values; t1, t2, ... for Tensors).

Each rule carries its own formula as text (``texts`` of a ``value.DERIVATIVES`` entry,
of a ``Primitive`` of ``chainrule.rules``); the numbers come from the rules themselves,
so what is printed is what ran. tests/test_explain.py checks that every formula,
evaluated, gives the rule's number. The backward passes call ``step`` (their
``on_step`` hook) at each node; this module knows nothing else of them.
"""

import numpy as np

__all__ = ["ScalarStory", "TensorStory"]

_INFIX = {"+": "+", "*": "*", "/": "/", "**": "**",
          "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
          "matmul": "@"}


def _number(x):
    """A float as Python prints it, or to 6 significant digits when that is long."""
    text = repr(float(x))
    return text if len(text) <= 10 else f"{float(x):.6g}"


class _Story:
    """Names nodes and prints the lines of one backward pass, aligned in two columns.

    Made when the pass starts, with the walk's ``order`` and the ``seed``: it names the
    nodes and prints the start; the pass then calls ``step`` at each node."""

    prefix = "v"

    def __init__(self, root, names, order, seed, print_line=print):
        self.print_line = print_line
        self.names = {}
        if isinstance(names, dict):  # e.g. locals(): keep only the graph's nodes
            for name, node in names.items():
                if hasattr(node, "_prev") and not name.startswith("_"):
                    self.names.setdefault(id(node), name)
        self.count = 0
        self.root, self.order = root, order
        self.width = 0
        self.plan(order)
        self.start(seed)

    def name(self, node):
        key = id(node)
        if key not in self.names:
            label = getattr(node, "label", "")
            if label:
                self.names[key] = label
            else:
                self.count += 1
                self.names[key] = f"{self.prefix}{self.count}"
        return self.names[key]

    def say(self, left, right):
        """One line: a node's definition (or nothing) on the left, a step on the right."""
        self.print_line(f"{left:<{self.width}}{right}".rstrip())

    def plan(self, order):
        """Name the nodes in the order the walk met them (inputs first), so that names
        read like a program: v1 and v2 are combined into v3, and so on."""
        for node in order:
            for operand in node._prev:
                self.name(operand)
            self.name(node)
        definitions = [self.definition(node) for node in order]
        self.width = max([len(d) for d in definitions] + [0]) + 3


class ScalarStory(_Story):
    """The explanation of a Value's backward pass."""

    def start(self, seed):
        root, seed = self.name(self.root), _data(seed)
        why = f"the start: d{root}/d{root} = 1" if seed == 1.0 else "the gradient given"
        self.print_line(f"{root}.grad = {_number(seed)}   ({why})")

    def definition(self, node):
        op, names = node._op, [self.name(p) for p in node._prev]
        if op in _INFIX and len(names) == 2:
            return f"{self.name(node)} = {names[0]} {_INFIX[op]} {names[1]}"
        if op.startswith("**"):
            return f"{self.name(node)} = {names[0]}{op}"
        if op.endswith("**"):
            return f"{self.name(node)} = {op}{names[0]}"
        if op == "linear":
            n = (len(names) - 1) // 2
            terms = [f"{w}*{x}" for w, x in zip(names[1:n + 1], names[n + 1:])]
            if len(terms) > 3:
                terms = terms[:2] + ["..."] + terms[-1:]
            return f"{self.name(node)} = {' + '.join([names[0]] + terms)}"
        function = "relu" if op == "ReLU" else (op or "?")
        return f"{self.name(node)} = {function}({', '.join(names)})"

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


def _data(x):
    return x.data if hasattr(x, "_prev") else x


def _shape(x):
    return str(tuple(np.shape(x)))


class TensorStory(_Story):
    """The explanation of a Tensor's backward pass: the same steps, with shapes."""

    prefix = "t"

    def start(self, seed):
        self.print_line(f"{self.name(self.root)}.grad = "
                        + ("1   (the start)" if np.size(seed) == 1 and np.all(_data(seed) == 1)
                           else f"the gradient given   {_shape(seed)}"))

    def _argument(self, arg):
        if hasattr(arg, "_prev"):
            return self.name(arg)
        if hasattr(arg, "shape") and getattr(arg, "ndim", 0) > 0:
            return f"array{_shape(arg)}"
        return repr(arg)

    def definition(self, node):
        prim, args, kwargs = node._op, node._args, node._kwargs or {}
        names = [self._argument(a) for a in args]
        if prim.name in _INFIX and len(names) == 2:
            return f"{self.name(node)} = {names[0]} {_INFIX[prim.name]} {names[1]}"
        options = [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
        return f"{self.name(node)} = {prim.name}({', '.join(names + options)})"

    def formula(self, node, argnum):
        text = node._op.texts.get(argnum)
        names = [self._argument(a) for a in node._args]
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
        self.say(self.definition(node) if first else "",
                 f"{self.name(arg)}.grad += {self.formula(node, argnum)}   {shapes}")
