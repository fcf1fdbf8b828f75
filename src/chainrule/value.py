"""The scalar engine: a ``Value`` is a number that remembers how it was made.

Read this file top to bottom:

1. **The derivative table.** For every operation, the partial derivative of its result
   with respect to each operand. This is all the calculus the engine knows.
2. **Value.** Each arithmetic operation makes a new ``Value`` that records its operands
   (``_prev``), a label (``_op``) and the table entry for its derivatives (``_rule``).
3. **backward().** Visit the graph from the output back to the inputs and apply the
   chain rule at every node: ``operand.grad += partial * node.grad``.
4. **Functions on plain numbers and Values alike** (``exp``, ``log``, ...), and the
   float arithmetic behind them, with clear errors outside each function's domain.

The API is micrograd's (``Value(data, _children, _op)``, ``.data``, ``.grad``,
``.backward()``, ``.relu()``), so micrograd code runs unchanged. Three things differ
under the hood, each for a reason:

* A node points only at its operands. micrograd stores a closure ``_backward`` that
  captures the node itself, a reference cycle: its graphs stay in memory until Python's
  cyclic garbage collector runs. Here, dropping the output of a graph frees it at once.
* The graph is walked with an explicit stack, not recursion, so a chain of a million
  nodes backpropagates under Python's default recursion limit.
* The rules in the table are written with ``+ - * /`` and the functions of part 4, so
  they work on floats (the ordinary, fast backward pass) *and* on Values:
  ``backward(create_graph=True)`` builds the graph of the gradient itself, which can be
  differentiated again, to any order.
"""

import math
from numbers import Real

from .graph import nodes_towards, topological_order

__all__ = [
    "Value", "DERIVATIVES", "gradients",
    "exp", "log", "sqrt", "power", "sin", "cos", "tanh", "sigmoid", "relu", "absolute",
]


# ---------------------------------------------------------------------------------------
# 1. The derivative table
#
# Each entry maps an operation to  (ans, *operands) -> (d ans/d operand, ...):
# the partial derivative of the result `ans` with respect to each operand, in operand
# order. The backward pass multiplies each partial by the gradient arriving at `ans`
# (the chain rule) and adds it to the operand's gradient.
#
# The arguments are floats during an ordinary backward pass and Values during
# backward(create_graph=True); every line below works for both.
# ---------------------------------------------------------------------------------------

DERIVATIVES = {
    # --- arithmetic.  a - b is a + (-1 * b), as in micrograd. a / b is its own
    #     operation: as a * b**-1 it would overflow for a tiny b even when a / b is finite ---
    "+":       lambda ans, a, b: (1.0, 1.0),
    "*":       lambda ans, a, b: (b, a),
    "/":       lambda ans, a, b: (1.0 / b, -ans / b),   # d/db a/b = -a/b**2
    "**":      lambda ans, a, b: (d_power_base(a, b), d_power_exponent(ans, a, b)),

    # --- exponential and logarithm ---
    "exp":     lambda ans, x: (ans,),                    # (e^x)' = e^x
    "log":     lambda ans, x: (1.0 / x,),
    "sqrt":    lambda ans, x: (0.5 / ans,),              # infinite at 0: raises

    # --- trigonometric and hyperbolic ---
    "sin":     lambda ans, x: (cos(x),),
    "cos":     lambda ans, x: (-sin(x),),
    "tanh":    lambda ans, x: (1.0 - ans * ans,),        # 0 far from 0: no overflow
    "sigmoid": lambda ans, x: (ans * (1.0 - ans),),

    # --- kinks: the derivative at the kink is taken to be 0 (PyTorch and JAX agree) ---
    "ReLU":    lambda ans, x: (step(x),),
    "abs":     lambda ans, x: (sign(x),),

    # --- the identity: how a function transform marks its input (cr.grad, cr.jacrev) ---
    "identity": lambda ans, x: (1.0,),

    # --- a neuron's weighted sum  b + w1*x1 + ... + wn*xn  as one node, with operands
    #     (b, w1..wn, x1..xn): d/db = 1, d/dwi = xi, d/dxi = wi ---
    "linear":  lambda ans, b, *wx: (1.0, *wx[len(wx) // 2:], *wx[:len(wx) // 2]),
}


def power_rule(n):
    """The rule for x ** n with a constant exponent n: d/dx = n * x**(n-1).

    x ** 0 is the constant 1, so its derivative is 0 everywhere, x = 0 included
    (the formula would say 0 * 0**-1, which is undefined).
    """
    if n == 0:
        return lambda ans, x: (0.0,)
    return lambda ans, x: (n * power(x, n - 1),)


def exponential_rule(base):
    """The rule for base ** x with a constant base: d/dx = base**x * ln(base)."""
    return lambda ans, x: (d_power_exponent(ans, base, x),)


def d_power_base(a, b):
    """d/da a**b = b * a**(b-1).

    At a = 0 and b = 0 the formula reads 0 * 0**-1; a**0 = 1 whatever a is, so the
    derivative is 0. Elsewhere the formula stands, even at b = 0 (where it is 0), so
    that its derivative with respect to b is right: d/db (b * a**(b-1)) = 1/a at b = 0.
    """
    if value_of(b) == 0 and value_of(a) == 0:
        return 0.0
    return b * power(a, b - 1)


def d_power_exponent(ans, a, b):
    """d/db a**b = a**b * ln(a); 0 at a = 0, since 0**b = 0 for every b > 0."""
    if value_of(a) == 0:
        return 0.0
    if value_of(a) < 0:
        raise ValueError(
            f"**: the derivative of a**b with respect to the exponent b is not a real "
            f"number for a negative base a = {value_of(a)!r}; if the exponent is a "
            f"constant, write it as a plain number (x ** 2, not x ** Value(2))")
    return ans * log(a)


def step(x):
    """1 where x > 0, else 0: the derivative of relu. A constant, so its own derivative is 0."""
    return 1.0 if value_of(x) > 0 else 0.0


def sign(x):
    """The derivative of |x|: -1, 0 or 1 (0 at the kink)."""
    x = value_of(x)
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


def value_of(x):
    """The number inside a Value, or the number itself."""
    return x.data if isinstance(x, Value) else x


# ---------------------------------------------------------------------------------------
# 2. Value
# ---------------------------------------------------------------------------------------

class Value:
    """A scalar that records the operations that made it, so it can be differentiated.

    >>> a, b = cr.Value(2.0), cr.Value(3.0)
    >>> c = a * b + a
    >>> c.backward()
    >>> a.grad, b.grad                    # dc/da = b + 1, dc/db = a
    (4.0, 2.0)

    ``data`` is the number (a float), ``grad`` the derivative of the output that
    ``backward()`` was last called on with respect to this value. ``_prev`` is the
    tuple of operands, ``_op`` a label for pictures, ``_rule`` the entry of
    ``DERIVATIVES`` that gives the partial derivatives.
    """

    # __slots__: a Value is small and quick to make; no __dict__ per node.
    __slots__ = ("data", "grad", "_prev", "_op", "_rule", "label", "__weakref__")

    def __init__(self, data, _children=(), _op="", label="", _rule=None):
        self.data = data if type(data) is float else _as_float(data)
        self.grad = 0.0
        self._prev = tuple(_children)
        self._op = _op
        self.label = label  # a name for pictures and explanations, as in micrograd's lecture
        # A node built by hand, micrograd style (Value(x, (a, b), '*')), finds its rule
        # by its label.
        self._rule = _rule if (_rule is not None or not _children) else DERIVATIVES.get(_op)

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    # --- arithmetic -----------------------------------------------------------------

    def __add__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return Value(self.data + other.data, (self, other), "+")

    def __mul__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return Value(self.data * other.data, (self, other), "*")

    def __pow__(self, other):
        if isinstance(other, Value):  # both base and exponent vary
            return Value(_float_pow(self.data, other.data), (self, other), "**")
        if not _is_number(other):
            return NotImplemented
        return Value(_float_pow(self.data, other), (self,), f"**{other}",
                     _rule=power_rule(other))

    def __rpow__(self, base):  # number ** Value
        if not _is_number(base):
            return NotImplemented
        return Value(_float_pow(base, self.data), (self,), f"{base}**",
                     _rule=exponential_rule(base))

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return self + (-other)

    def __truediv__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        if other.data == 0:
            raise ValueError(f"/: division by zero ({self.data!r} / {other.data!r})")
        return Value(self.data / other.data, (self, other), "/")

    # Reflected operators (2 + x): the operands keep the order in which they were written.

    def __radd__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return other + self

    def __rmul__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return other * self

    def __rsub__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return other + (-self)

    def __rtruediv__(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        return other / self

    # --- functions ----------------------------------------------------------------

    def relu(self):
        """max(x, 0); its derivative is 1 for x > 0, else 0 (0 at the kink, too).

        >>> a, b = cr.Value(-2.0), cr.Value(3.0)
        >>> y = a.relu() + b.relu()
        >>> y.backward()
        >>> y.data, a.grad, b.grad        # 0 + 3; flat on the left, slope 1 on the right
        (3.0, 0.0, 1.0)
        """
        return Value(0.0 if self.data < 0 else self.data, (self,), "ReLU")

    def exp(self):
        """e ** self; its derivative is itself (inf, not OverflowError, for huge inputs).

        >>> x = cr.Value(1.0)
        >>> y = x.exp()
        >>> y.backward()
        >>> round(y.data, 4), round(x.grad, 4)       # e, and e again
        (2.7183, 2.7183)
        """
        return Value(_float_exp(self.data), (self,), "exp")

    def log(self):
        """The natural logarithm; its derivative is 1/x. ValueError for a value <= 0.

        >>> x = cr.Value(4.0)
        >>> y = x.log()
        >>> y.backward()
        >>> round(y.data, 4), x.grad                 # log 4, and 1/4
        (1.3863, 0.25)
        >>> cr.Value(0.0).log()
        Traceback (most recent call last):
        ...
        ValueError: log: 0.0 is outside the domain of log (x > 0)
        """
        return Value(_float_log(self.data), (self,), "log")

    def sqrt(self):
        """The square root; its derivative is 1 / (2 sqrt(x)). ValueError for x < 0.

        >>> x = cr.Value(4.0)
        >>> y = x.sqrt()
        >>> y.backward()
        >>> y.data, x.grad                           # 2, and 1 / (2 * 2)
        (2.0, 0.25)
        """
        return Value(_float_sqrt(self.data), (self,), "sqrt")

    def sin(self):
        """The sine; its derivative is the cosine.

        >>> x = cr.Value(0.0)
        >>> y = x.sin()
        >>> y.backward()
        >>> y.data, x.grad                           # sin 0, cos 0
        (0.0, 1.0)
        """
        return Value(_float_sin(self.data), (self,), "sin")

    def cos(self):
        """The cosine; its derivative is minus the sine.

        >>> x = cr.Value(np.pi / 2)
        >>> y = x.cos()
        >>> y.backward()
        >>> round(y.data, 6), x.grad                 # cos(pi/2) = 0, -sin(pi/2) = -1
        (0.0, -1.0)
        """
        return Value(_float_cos(self.data), (self,), "cos")

    def tanh(self):
        """The hyperbolic tangent; its derivative is 1 - tanh**2 (no overflow far out).

        >>> x = cr.Value(0.5)
        >>> y = x.tanh()
        >>> y.backward()
        >>> round(y.data, 4), round(x.grad, 4)       # tanh(0.5), 1 - tanh(0.5)**2
        (0.4621, 0.7864)
        """
        return Value(math.tanh(self.data), (self,), "tanh")

    def sigmoid(self):
        """1 / (1 + e**-self), computed without overflow; its derivative is s * (1 - s).

        >>> x = cr.Value(0.0)
        >>> y = x.sigmoid()
        >>> y.backward()
        >>> y.data, x.grad                           # 1/2, and 1/2 * 1/2
        (0.5, 0.25)
        """
        return Value(_float_sigmoid(self.data), (self,), "sigmoid")

    def abs(self):
        """The absolute value, also ``abs(x)``; its derivative is the sign (0 at 0).

        >>> x = cr.Value(-3.0)
        >>> y = abs(x)
        >>> y.backward()
        >>> y.data, x.grad
        (3.0, -1.0)
        """
        return Value(abs(self.data), (self,), "abs")

    __abs__ = abs

    @staticmethod
    def linear(weights, inputs, bias=0.0):
        """``bias + w1*x1 + ... + wn*xn`` as one node: what a neuron computes.

        micrograd builds this sum from 2n nodes (n products and n sums); one node with
        2n + 1 operands gives the same numbers (the same float operations in the same
        order) and backpropagates several times faster, because Python's cost is per
        node. Numbers among the inputs are treated as constants.

        >>> w = [cr.Value(2.0), cr.Value(-1.0)]
        >>> y = cr.Value.linear(w, [3.0, 4.0], bias=cr.Value(0.5))   # 0.5 + 2*3 - 1*4
        >>> y.data
        2.5
        >>> y.backward()
        >>> [wi.grad for wi in w]                    # each weight's gradient is its input
        [3.0, 4.0]
        """
        weights = [w if isinstance(w, Value) else _constant(w, "linear") for w in weights]
        inputs = [x if isinstance(x, Value) else _constant(x, "linear") for x in inputs]
        if len(weights) != len(inputs):
            raise ValueError(f"linear: {len(weights)} weights but {len(inputs)} inputs; "
                             f"expected one weight per input")
        bias = bias if isinstance(bias, Value) else _constant(bias, "linear")
        total = bias.data
        for w, x in zip(weights, inputs):
            total += w.data * x.data
        return Value(total, (bias, *weights, *inputs), "linear")

    # --- backpropagation ------------------------------------------------------------

    def backward(self, gradient=1.0, create_graph=False, explain=False):
        """Fill ``.grad`` of every node this one depends on with d(self)/d(node).

        Leaves (inputs and parameters) *accumulate*: calling backward twice doubles
        their gradients, as in micrograd and PyTorch; set ``p.grad = 0`` (or call the
        model's ``zero_grad()``) between steps. Interior nodes hold the gradient of
        this pass only.

        With ``create_graph=True`` the gradients are Values, built from the graph's
        own operations, so they can be differentiated again (a second derivative).
        The gradient graph refers back to the nodes it was computed from, so reset the
        leaves' ``.grad`` (and drop those gradients) when you are done with them.

        ``explain=True`` prints each step of the chain rule as it is taken, with its
        numbers (see chainrule.explain); ``explain={"a": a, ...}`` (or ``locals()``)
        also names the nodes.

        >>> a, b = Value(2.0, label="a"), Value(3.0, label="b")
        >>> c = a * b; c.label = "c"
        >>> c.backward(explain=True)
        c.grad = 1.0   (the start: dc/dc = 1)
        c = a * b   a.grad += b.data * c.grad = 3.0 * 1.0 -> 3.0
                    b.grad += a.data * c.grad = 2.0 * 1.0 -> 2.0
        """
        order = topological_order(self)
        seed = Value(gradient) if create_graph else _as_float(gradient)
        if not order:  # self is a leaf: d(self)/d(self) = 1
            self.grad = self.grad + seed
            return
        for node in order:  # interior nodes start from zero at every pass
            node.grad = 0.0
        self.grad = seed
        if explain:
            self._explained_backward(order, seed, explain, create_graph)
            return
        if not create_graph:
            for node in reversed(order):
                node._chain_rule()
            return
        for node in reversed(order):
            node._chain_rule(create_graph=True)
            # Once passed on, an interior node keeps the number, not the graph: that
            # graph is made of the nodes that use this one, so keeping it would make
            # a reference cycle. The leaves get the differentiable gradients.
            node.grad = node.grad.data

    def _explained_backward(self, order, seed, names, create_graph):
        """The same walk as backward(), telling each step before taking it."""
        from .explain import ScalarStory  # only the explaining pass needs it
        story = ScalarStory(self, names)
        story.plan(order)
        story.start(seed)
        for node in reversed(order):
            story.step(node, lambda: node._chain_rule(create_graph))
            if create_graph:
                node.grad = node.grad.data

    def _chain_rule(self, create_graph=False):
        """One step of the chain rule: pass this node's gradient on to its operands.

        micrograd stores this step as a closure; here it is a method that reads the
        partial derivatives from the table.
        """
        operands = self._prev
        if not operands:
            return
        rule = self._rule
        if type(rule) is _HandWrittenStep:
            rule.run(self, create_graph)
            return
        g = self.grad
        if create_graph:
            for operand, d in zip(operands, self._partials(True)):
                operand.grad = operand.grad + d * g
        else:
            for operand, d in zip(operands, self._partials(False)):
                operand.grad += d * g

    def _partials(self, create_graph):
        """The table's partial derivatives at this node: floats, or Values that can be
        differentiated again."""
        operands, rule = self._prev, self._rule
        if rule is None:
            raise TypeError(f"backward: no derivative rule for the operation {self._op!r} "
                            f"of {self!r}; known operations: {', '.join(DERIVATIVES)}")
        try:
            if create_graph:
                return rule(self, *operands)
            return rule(self.data, *[operand.data for operand in operands])
        except (ValueError, ZeroDivisionError, OverflowError) as err:
            inputs = ", ".join(repr(operand.data) for operand in operands)
            raise ValueError(f"backward through {self._op!r} (operands {inputs}): the "
                             f"derivative is not a finite real number: {err}") from None

    # micrograd's name for the step, for code that calls it by hand (as Karpathy's
    # lecture does: o.grad = 1.0; o._backward()) or that defines its own operations by
    # assigning a closure: out._backward = _backward.

    @property
    def _backward(self):
        rule = self._rule
        return rule.step if type(rule) is _HandWrittenStep else self._chain_rule

    @_backward.setter
    def _backward(self, step):
        self._rule = _HandWrittenStep(step)


class _HandWrittenStep:
    """A backward step written as a micrograd closure. It computes floats, so it cannot
    build the graph of a gradient; and it usually captures its own output node, a
    reference cycle the garbage collector has to break (micrograd's own behaviour)."""

    __slots__ = ("step",)

    def __init__(self, step):
        self.step = step

    def run(self, node, create_graph):
        if create_graph:
            raise TypeError(
                f"backward(create_graph=True): the operation {node._op!r} has a "
                f"hand-written _backward closure, which computes floats and cannot build "
                f"the graph of a gradient; add its rule to DERIVATIVES instead")
        self.step()


def gradients(roots, seeds, targets, create_graph=False):
    """The gradient of ``sum(seed * root)`` with respect to each target, as a list.

    Unlike ``backward()``, it reads and writes no ``.grad``: the function transforms
    (``cr.grad`` and the others) use it, so that a transform never disturbs the
    gradients a user is accumulating, and nested transforms never see each other's.
    Only the nodes that depend on a target are visited, and the walk stops at the
    targets. A target that the roots do not depend on gets 0.0.
    """
    order, depends = nodes_towards(roots, targets)
    index = {id(t): i for i, t in enumerate(targets)}
    grads = {}
    for root, seed in zip(roots, seeds):
        if id(root) in depends:
            grads[id(root)] = grads[id(root)] + seed if id(root) in grads else seed
    for node in reversed(order):
        if id(node) in index or id(node) not in depends:
            continue
        g = grads.pop(id(node), None)
        if g is None:
            continue
        if type(node._rule) is _HandWrittenStep:
            raise TypeError(f"{node._op!r}: an operation with a hand-written _backward "
                            f"closure cannot be used inside cr.grad and the other "
                            f"transforms; add its rule to DERIVATIVES instead")
        for operand, d in zip(node._prev, node._partials(create_graph)):
            if id(operand) in depends:
                contribution = d * g
                previous = grads.get(id(operand))
                grads[id(operand)] = contribution if previous is None else previous + contribution
    return [grads.get(id(t), 0.0) for t in targets]


def _is_number(x):
    return isinstance(x, Real)


def _as_float(x):
    if isinstance(x, Real):
        return float(x)
    raise TypeError(f"Value: expected a real number (int or float), got "
                    f"{type(x).__name__} {x!r}")


def _constant(x, op):
    if not _is_number(x):
        raise TypeError(f"{op}: expected a Value or a real number, got {type(x).__name__} {x!r}")
    return Value(x)


def _operand(x):
    """The other operand of a binary operator as a Value, or None if it is not a number
    (then the operator returns NotImplemented and Python raises a TypeError that names
    both types)."""
    if isinstance(x, Value):
        return x
    if isinstance(x, Real):
        return Value(x)
    return None


# ---------------------------------------------------------------------------------------
# 4. Functions of plain numbers and Values alike
#
# The derivative table is written with these, so the same rule computes a float in an
# ordinary backward pass and builds a Value graph in backward(create_graph=True).
# ---------------------------------------------------------------------------------------

def exp(x):
    """e ** x."""
    return x.exp() if isinstance(x, Value) else _float_exp(x)


def log(x):
    """The natural logarithm; ValueError for x <= 0."""
    return x.log() if isinstance(x, Value) else _float_log(x)


def sqrt(x):
    """The square root; ValueError for x < 0."""
    return x.sqrt() if isinstance(x, Value) else _float_sqrt(x)


def power(a, b):
    """a ** b; ValueError where it is not a real number (0 ** -1, (-8) ** 0.5)."""
    if isinstance(a, Value) or isinstance(b, Value):
        return a ** b if isinstance(a, Value) else b.__rpow__(a)
    return _float_pow(a, b)


def sin(x):
    """The sine of a number or a Value."""
    return x.sin() if isinstance(x, Value) else _float_sin(x)


def cos(x):
    """The cosine of a number or a Value."""
    return x.cos() if isinstance(x, Value) else _float_cos(x)


def tanh(x):
    """The hyperbolic tangent of a number or a Value."""
    return x.tanh() if isinstance(x, Value) else math.tanh(x)


def sigmoid(x):
    """1 / (1 + e**-x), computed without overflow for any x."""
    return x.sigmoid() if isinstance(x, Value) else _float_sigmoid(x)


def relu(x):
    """max(x, 0) of a number or a Value."""
    return x.relu() if isinstance(x, Value) else (0.0 if x < 0 else float(x))


def absolute(x):
    """|x| of a number or a Value."""
    return x.abs() if isinstance(x, Value) else abs(float(x))


# --- float arithmetic with clear errors: ValueError naming the operation and value,
#     like Python's math module, and inf (not OverflowError) for huge results ---

def _float_exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _float_log(x):
    if x <= 0:
        raise ValueError(f"log: {x!r} is outside the domain of log (x > 0)")
    return math.log(x)


def _float_sqrt(x):
    if x < 0:
        raise ValueError(f"sqrt: {x!r} is outside the domain of sqrt (x >= 0)")
    return math.sqrt(x)


def _float_pow(a, b):
    if a == 0 and b < 0:
        raise ValueError(f"**: {a!r} ** {b!r} is undefined (0 to a negative power "
                         f"divides by zero)")
    if a < 0 and not float(b).is_integer():
        raise ValueError(f"**: {a!r} ** {b!r} is not a real number (a negative base "
                         f"needs an integer exponent)")
    try:
        return float(a) ** b
    except OverflowError:
        odd = float(b).is_integer() and int(b) % 2 == 1
        return -math.inf if (a < 0 and odd) else math.inf


def _float_sin(x):
    if math.isinf(x):
        raise ValueError(f"sin: {x!r} is outside the domain of sin (finite numbers)")
    return math.sin(x)


def _float_cos(x):
    if math.isinf(x):
        raise ValueError(f"cos: {x!r} is outside the domain of cos (finite numbers)")
    return math.cos(x)


def _float_sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = _float_exp(x)  # x < 0: e**x cannot overflow, and 1 + e**-x might
    return e / (1.0 + e)
