"""The scalar engine, ``chainrule.scalar.value.Value``, checked against independent references.

Every derivative here is compared with something that does not share code with the
engine: PyTorch in float64 (values, first, second and third derivatives) or central
finite differences. The groups, top to bottom:

1. every operation, value and gradient, against PyTorch (relative error <= 1e-12);
2. the same operations against central differences;
3. higher order derivatives with ``backward(create_graph=True)``;
4. the conventions at kinks, at 0 and for huge arguments (exact values);
5. errors: what is outside a function's domain, and what is not a number;
6. micrograd's small examples, and accumulation when ``backward()`` runs twice;
7. properties of the engine: no reference cycles, a million-node chain, determinism,
   operand order and labels;
8. nodes built by hand, micrograd style.
"""

import gc
import math
import operator
import random
import sys
import weakref

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.scalar import value as V
from chainrule.nn.scalar import linear
from chainrule.graph import topological_order
from chainrule.scalar.value import Value

# ---------------------------------------------------------------------------------------
# Helpers (local to this file)
# ---------------------------------------------------------------------------------------

REL = 1e-12  # both sides compute in float64: only rounding may differ


def tensor(x):
    """A float64 PyTorch leaf that records gradients: the reference for one Value."""
    return torch.tensor(float(x), dtype=torch.float64, requires_grad=True)


def assert_rel(actual, expected, rel=REL, what="value"):
    """|actual - expected| <= rel * |expected|; exact equality when expected is 0 or inf."""
    expected = float(expected)
    assert isinstance(actual, float), f"{what}: expected a float, got {actual!r}"
    if expected == 0.0 or not math.isfinite(expected):
        assert actual == expected, f"{what}: {actual!r} != {expected!r}"
        return
    err = abs(actual - expected) / abs(expected)
    assert err <= rel, f"{what}: {actual!r} vs {expected!r} (relative error {err:.3g})"


def central_difference(f, x, h=1e-6):
    """(f(x + h) - f(x - h)) / 2h, with h scaled to the size of x: the derivative of f
    at x up to O(h^2), computed from function values only."""
    h = h * max(1.0, abs(x))
    return (f(x + h) - f(x - h)) / (2 * h)


def assert_fd(actual, expected, rel=1e-6):
    """Agreement with a finite difference: relative 1e-6 (tiny absolute floor for 0)."""
    assert abs(actual - expected) <= rel * abs(expected) + 1e-9, \
        f"{actual!r} vs finite difference {expected!r}"


def torch_grad(y, x, create_graph=False):
    """dy/dx in PyTorch; 0 when y does not depend on x (e.g. relu'' or abs'')."""
    if not y.requires_grad:
        return torch.zeros((), dtype=torch.float64)
    (g,) = torch.autograd.grad(y, x, create_graph=create_graph, allow_unused=True)
    return torch.zeros((), dtype=torch.float64) if g is None else g


# ---------------------------------------------------------------------------------------
# The operations under test: (engine function, the same function in PyTorch, inputs).
# Inputs stay away from kinks (0 for relu and abs) and from the edges of domains.
# ---------------------------------------------------------------------------------------

ANYWHERE = (-1.3, 0.5, 2.0)
POSITIVE = (0.3, 1.7, 5.0)

UNARY = {
    "-x":       (lambda x: -x,             lambda t: -t,             ANYWHERE),
    "relu":     (lambda x: x.relu(),       torch.relu,               ANYWHERE),
    "exp":      (lambda x: x.exp(),        torch.exp,                ANYWHERE),
    "log":      (lambda x: x.log(),        torch.log,                POSITIVE),
    "tanh":     (lambda x: x.tanh(),       torch.tanh,               ANYWHERE),
    "sigmoid":  (lambda x: x.sigmoid(),    torch.sigmoid,            ANYWHERE),
    "sin":      (lambda x: x.sin(),        torch.sin,                ANYWHERE),
    "cos":      (lambda x: x.cos(),        torch.cos,                ANYWHERE),
    "sqrt":     (lambda x: x.sqrt(),       torch.sqrt,               POSITIVE),
    "abs":      (lambda x: x.abs(),        torch.abs,                ANYWHERE),
    "abs(x)":   (lambda x: abs(x),         torch.abs,                ANYWHERE),
    "x**2":     (lambda x: x ** 2,         lambda t: t ** 2,         ANYWHERE),
    "x**3":     (lambda x: x ** 3,         lambda t: t ** 3,         ANYWHERE),
    "x**-1":    (lambda x: x ** -1,        lambda t: t ** -1,        ANYWHERE),
    "x**0.5":   (lambda x: x ** 0.5,       lambda t: t ** 0.5,       POSITIVE),
    "x**-2.5":  (lambda x: x ** -2.5,      lambda t: t ** -2.5,      POSITIVE),
    "2**x":     (lambda x: 2 ** x,         lambda t: 2 ** t,         ANYWHERE),
    "0.5**x":   (lambda x: 0.5 ** x,       lambda t: 0.5 ** t,       ANYWHERE),
    "e**x":     (lambda x: math.e ** x,    lambda t: math.e ** t,    ANYWHERE),
}
UNARY_CASES = [pytest.param(name, x0, id=f"{name}@{x0}")
               for name, (_, _, xs) in UNARY.items() for x0 in xs]

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul,
          "/": operator.truediv, "**": operator.pow}
# (left float, right float, left int, right int): ** keeps its float base positive.
BINARY_INPUTS = {
    "+": [(1.7, -0.6, 3, -2), (-2.5, 0.8, -4, 5)],
    "-": [(1.7, -0.6, 3, -2), (-2.5, 0.8, -4, 5)],
    "*": [(1.7, -0.6, 3, -2), (-2.5, 0.8, -4, 5)],
    "/": [(1.7, -0.6, 3, -2), (-2.5, 0.8, -4, 5)],
    "**": [(1.7, -0.6, 3, -2), (0.4, 2.3, 2, 5)],
}
# Which side is a Value, and what the other side is: 2 + x, x + 2, 2.0 * x, x / 3, ...
KINDS = [("Value", "Value"), ("Value", "int"), ("Value", "float"),
         ("int", "Value"), ("float", "Value")]
BINARY_CASES = [pytest.param(op, left, right, i, id=f"{left}{op}{right}#{i}")
                for op in BINARY for left, right in KINDS
                for i in range(len(BINARY_INPUTS[op]))]


def make_operand(kind, as_float, as_int):
    """(engine operand, PyTorch operand) of the given kind."""
    if kind == "Value":
        return Value(as_float), tensor(as_float)
    if kind == "int":
        return as_int, as_int
    return as_float, as_float


# ---------------------------------------------------------------------------------------
# 1. Every operation against PyTorch float64
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, x0", UNARY_CASES)
def test_unary_op_value_and_gradient_match_torch(name, x0):
    """f(x) and f'(x) of each one-operand operation agree with torch to 1e-12."""
    f, tf, _ = UNARY[name]
    x = Value(x0)
    y = f(x)
    y.backward()
    tx = tensor(x0)
    ty = tf(tx)
    ty.backward()
    assert isinstance(y, Value)
    assert_rel(y.data, ty.item(), what=f"{name}({x0})")
    assert_rel(x.grad, tx.grad.item(), what=f"d/dx {name}({x0})")


@pytest.mark.parametrize("op, left, right, i", BINARY_CASES)
def test_binary_op_value_and_gradients_match_torch(op, left, right, i):
    """a op b for Value, int and float on either side: the result is a Value, its value
    and the gradient of every Value operand agree with torch to 1e-12."""
    lf, rf, li, ri = BINARY_INPUTS[op][i]
    a, ta = make_operand(left, lf, li)
    b, tb = make_operand(right, rf, ri)
    y = BINARY[op](a, b)
    ty = BINARY[op](ta, tb)
    assert isinstance(y, Value)
    y.backward()
    ty.backward()
    assert_rel(y.data, ty.item(), what=f"{a!r} {op} {b!r}")
    for v, tv in ((a, ta), (b, tb)):
        if isinstance(v, Value):
            assert_rel(v.grad, tv.grad.item(), what=f"gradient of {op}")


@pytest.mark.parametrize("weights, inputs, bias", [
    ([0.3, -1.2, 0.7], [1.5, 0.4, -2.0], 0.25),
    ([2.0], [-0.75], -1.0),
    ([0.1 * k - 0.45 for k in range(10)], [0.9 - 0.17 * k for k in range(10)], 0.0),
], ids=["n=3", "n=1", "n=10"])
def test_linear_matches_torch(weights, inputs, bias):
    """linear(w, x, b) = b + sum w_i x_i, as one node with 2n + 1 operands:
    value and all gradients (d/db = 1, d/dw_i = x_i, d/dx_i = w_i) agree with torch."""
    W, X, B = [Value(w) for w in weights], [Value(x) for x in inputs], Value(bias)
    y = linear(W, X, B)
    y.backward()
    tw = torch.tensor(weights, dtype=torch.float64, requires_grad=True)
    tx = torch.tensor(inputs, dtype=torch.float64, requires_grad=True)
    tb = tensor(bias)
    ty = tb + (tw * tx).sum()
    ty.backward()
    assert y._op == "linear" and len(y._prev) == 2 * len(weights) + 1
    assert_rel(y.data, ty.item())
    assert_rel(B.grad, tb.grad.item())
    for k in range(len(weights)):
        assert_rel(W[k].grad, tw.grad[k].item(), what=f"dw{k}")
        assert_rel(X[k].grad, tx.grad[k].item(), what=f"dx{k}")


def test_linear_with_numbers_treats_them_as_constants():
    """Numbers among the inputs (and the default bias 0) are constants; the weights'
    gradients are still the inputs."""
    W = [Value(0.5), Value(-2.0), Value(1.25)]
    y = linear(W, [3, -1.5, 0.2])
    y.backward()
    tw = torch.tensor([0.5, -2.0, 1.25], dtype=torch.float64, requires_grad=True)
    ty = (tw * torch.tensor([3, -1.5, 0.2], dtype=torch.float64)).sum()
    ty.backward()
    assert_rel(y.data, ty.item())
    for k in range(3):
        assert_rel(W[k].grad, tw.grad[k].item())


def test_linear_is_micrograd_sum_bit_for_bit():
    """The fused node computes the same float operations in the same order as
    micrograd's chain b + w1*x1 + w2*x2 + ..., so the value is identical."""
    rng = random.Random(3)
    W = [Value(rng.uniform(-1, 1)) for _ in range(16)]
    X = [Value(rng.uniform(-3, 3)) for _ in range(16)]
    b = Value(rng.uniform(-1, 1))
    chain = sum((w * x for w, x in zip(W, X)), b)
    expected = b.data
    for w, x in zip(W, X):
        expected += w.data * x.data
    assert linear(W, X, b).data == chain.data == expected


def test_linear_errors():
    """One weight per input, and only Values or numbers."""
    with pytest.raises(ValueError, match="linear: 2 weights but 3 inputs"):
        linear([Value(1.0), Value(2.0)], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="linear: .*str 'x'"):
        linear([Value(1.0)], ["x"])


def test_module_functions_work_on_numbers_and_values():
    """chainrule.scalar.value.exp, log, ... take floats (returning floats, as math does) and
    Values (returning the same node the method builds)."""
    cases = [(V.exp, "exp", 0.7, math.exp), (V.log, "log", 0.7, math.log),
             (V.sqrt, "sqrt", 0.7, math.sqrt), (V.sin, "sin", 0.7, math.sin),
             (V.cos, "cos", 0.7, math.cos), (V.tanh, "tanh", 0.7, math.tanh),
             (V.sigmoid, "sigmoid", 0.7, lambda x: 1 / (1 + math.exp(-x))),
             (V.relu, "ReLU", -0.7, lambda x: 0.0), (V.absolute, "abs", -0.7, abs)]
    for fn, label, x0, reference in cases:
        out = fn(x0)
        assert type(out) is float
        assert_rel(out, reference(x0), rel=1e-15, what=label)
        node = fn(Value(x0))
        assert isinstance(node, Value) and node._op == label and node.data == out
    assert_rel(V.power(2.0, 0.5), math.sqrt(2.0), rel=1e-15)
    assert V.power(Value(2.0), 3).data == 8.0 and V.power(2.0, Value(3.0)).data == 8.0


# ---------------------------------------------------------------------------------------
# 2. The same operations against central finite differences of the forward pass
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, x0", UNARY_CASES)
def test_unary_gradient_matches_finite_difference(name, x0):
    f = UNARY[name][0]
    x = Value(x0)
    f(x).backward()
    assert_fd(x.grad, central_difference(lambda v: f(Value(v)).data, x0))


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("i", [0, 1])
def test_binary_gradients_match_finite_difference(op, i):
    """Both partial derivatives of Value op Value."""
    a0, b0, _, _ = BINARY_INPUTS[op][i]
    fn = BINARY[op]
    a, b = Value(a0), Value(b0)
    fn(a, b).backward()
    assert_fd(a.grad, central_difference(lambda v: fn(Value(v), Value(b0)).data, a0))
    assert_fd(b.grad, central_difference(lambda v: fn(Value(a0), Value(v)).data, b0))


def test_linear_gradients_match_finite_difference():
    ws, xs, b0 = [0.3, -1.2, 0.7], [1.5, 0.4, -2.0], 0.25
    W, X, B = [Value(w) for w in ws], [Value(x) for x in xs], Value(b0)
    linear(W, X, B).backward()

    def f(ws_, xs_, b_):
        return linear([Value(w) for w in ws_], [Value(x) for x in xs_], Value(b_)).data

    assert_fd(B.grad, central_difference(lambda v: f(ws, xs, v), b0))
    for k in range(3):
        assert_fd(W[k].grad, central_difference(
            lambda v: f(ws[:k] + [v] + ws[k + 1:], xs, b0), ws[k]))
        assert_fd(X[k].grad, central_difference(
            lambda v: f(ws, xs[:k] + [v] + xs[k + 1:], b0), xs[k]))


def test_composite_expression_gradient_matches_finite_difference_and_torch():
    """A longer expression through many operations, with shared subexpressions."""
    def f(x, y):
        u = x * y + x.tanh() - y / 3.0
        return (u.sigmoid() * u.exp()).log() + (x ** 2 + 1).sqrt() * (y * 2).sin() + u ** y.abs()

    x0, y0 = 0.8, -1.1
    x, y = Value(x0), Value(y0)
    out = f(x, y)
    out.backward()
    tx, ty = tensor(x0), tensor(y0)
    tout = f(tx, ty)
    tout.backward()
    assert_rel(out.data, tout.item())
    assert_rel(x.grad, tx.grad.item())
    assert_rel(y.grad, ty.grad.item())
    assert_fd(x.grad, central_difference(lambda v: f(Value(v), Value(y0)).data, x0))
    assert_fd(y.grad, central_difference(lambda v: f(Value(x0), Value(v)).data, y0))


# ---------------------------------------------------------------------------------------
# 3. Higher derivatives: backward(create_graph=True) makes the gradients Values
# ---------------------------------------------------------------------------------------

def engine_second_derivative(f, x0):
    """f'(x0) and f''(x0): differentiate once building a graph, then differentiate x.grad."""
    x = Value(x0)
    f(x).backward(create_graph=True)
    g = x.grad
    assert isinstance(g, Value), "create_graph=True must leave a Value in .grad"
    x.grad = 0.0
    g.backward()
    return g.data, x.grad


def torch_second_derivative(tf, x0):
    tx = tensor(x0)
    g = torch_grad(tf(tx), tx, create_graph=True)
    return g.item(), torch_grad(g, tx).item()


@pytest.mark.parametrize("name, x0", UNARY_CASES)
def test_second_derivative_of_every_unary_op_matches_torch(name, x0):
    f, tf, _ = UNARY[name]
    first, second = engine_second_derivative(f, x0)
    t_first, t_second = torch_second_derivative(tf, x0)
    assert_rel(first, t_first, what="f'")
    assert_rel(second, t_second, what="f''")


def engine_hessian(f, point):
    """H[i][j] = d/dx_j (d f / d x_i), one create_graph backward per row."""
    rows = []
    for i in range(len(point)):
        xs = [Value(p) for p in point]
        f(*xs).backward(create_graph=True)
        g = xs[i].grad
        assert isinstance(g, Value)
        for v in xs:
            v.grad = 0.0
        g.backward()
        rows.append([v.grad for v in xs])
    return rows


def torch_hessian(f, point):
    ts = [tensor(p) for p in point]
    grads = torch.autograd.grad(f(*ts), ts, create_graph=True)
    rows = []
    for g in grads:
        if not g.requires_grad:
            rows.append([0.0] * len(ts))
            continue
        second = torch.autograd.grad(g, ts, retain_graph=True, allow_unused=True)
        rows.append([0.0 if s is None else s.item() for s in second])
    return rows


HESSIAN_CASES = {
    "x*y":              (lambda x, y: x * y, (1.5, -0.7)),
    "x**y":             (lambda x, y: x ** y, (1.7, 0.6)),
    "x**y (y > 1)":     (lambda x, y: x ** y, (0.4, 2.3)),
    "x**3":             (lambda x: x ** 3, (1.3,)),
    "x**3 at -2":       (lambda x: x ** 3, (-2.0,)),
    "x/y":              (lambda x, y: x / y, (1.2, -0.8)),
    "composite":        (lambda x, y: (x * y).sin() + x.exp() / y + (x ** 2 + y ** 2).sqrt(),
                         (0.6, 1.4)),
    "linear":           (lambda w, x, b: linear([w], [x], b).tanh()
                         if isinstance(w, Value) else (b + w * x).tanh(), (0.7, -1.1, 0.3)),
}


@pytest.mark.parametrize("name", list(HESSIAN_CASES))
def test_hessian_with_mixed_partials_matches_torch(name):
    """All second partial derivatives, d2f/dx2 and the mixed ones, of functions of
    several variables."""
    f, point = HESSIAN_CASES[name]
    H, TH = engine_hessian(f, point), torch_hessian(f, point)
    for i in range(len(point)):
        for j in range(len(point)):
            assert_rel(H[i][j], TH[i][j], what=f"H[{i}][{j}]")


@pytest.mark.parametrize("x0", [-0.9, 0.4, 1.1])
def test_third_derivative_of_tanh_matches_torch(x0):
    """Three nested create_graph passes: tanh''' = -2 (1 - t^2)(1 - 3 t^2)."""
    x = Value(x0)
    x.tanh().backward(create_graph=True)
    g1, x.grad = x.grad, 0.0
    g1.backward(create_graph=True)
    g2, x.grad = x.grad, 0.0
    assert isinstance(g2, Value)
    g2.backward()
    tx = tensor(x0)
    t1 = torch_grad(torch.tanh(tx), tx, create_graph=True)
    t2 = torch_grad(t1, tx, create_graph=True)
    t3 = torch_grad(t2, tx)
    assert_rel(g1.data, t1.item())
    assert_rel(g2.data, t2.item())
    assert_rel(x.grad, t3.item())


def test_mixed_partial_of_power_at_zero_exponent_d_dx_then_d_dw():
    """d/dx (d/dw x**w) = x**(w-1) (1 + w ln x), which is 1/x at w = 0."""
    x, w = Value(2.0), Value(0.0)
    (x ** w).backward(create_graph=True)
    g = w.grad
    x.grad = w.grad = 0.0
    g.backward()
    reference = central_difference(
        lambda v: _grad_of_power(v, 0.0, wrt="w"), 2.0)
    assert_fd(x.grad, reference)
    assert_rel(x.grad, 0.5)


def test_mixed_partial_of_power_at_zero_exponent_d_dw_then_d_dx():
    """d/dw (d/dx x**w) = d/dw (w x**(w-1)) = x**(w-1) (1 + w ln x), 1/x at w = 0:
    the same number as the other order (checked against a central difference)."""
    x, w = Value(2.0), Value(0.0)
    (x ** w).backward(create_graph=True)
    g = x.grad
    x.grad = w.grad = 0.0
    g.backward()
    reference = central_difference(lambda v: _grad_of_power(2.0, v, wrt="x"), 0.0)
    assert abs(reference - 0.5) < 1e-9  # the reference itself: 1/x
    assert_fd(w.grad, reference)


def _grad_of_power(x0, w0, wrt):
    """The first derivative of x**w (an ordinary backward pass) at (x0, w0)."""
    x, w = Value(x0), Value(w0)
    (x ** w).backward()
    return x.grad if wrt == "x" else w.grad


# ---------------------------------------------------------------------------------------
# 4. Conventions: exact values at kinks, at 0, and far out
# ---------------------------------------------------------------------------------------

def test_relu_derivative_at_zero_is_zero():
    x = Value(0.0)
    y = x.relu()
    y.backward()
    assert y.data == 0.0 and x.grad == 0.0


def test_abs_derivative_at_zero_is_zero():
    x = Value(0.0)
    y = x.abs()
    y.backward()
    assert y.data == 0.0 and x.grad == 0.0


@pytest.mark.parametrize("exponent", [0, 0.0, Value(0.0)], ids=["int", "float", "Value"])
def test_power_zero_at_zero_is_one_with_derivative_zero(exponent):
    """x**0 is the constant 1, so d/dx x**0 = 0 at x = 0 too (the formula would say
    0 * 0**-1, NaN or a division by zero)."""
    x = Value(0.0)
    y = x ** exponent
    y.backward()
    assert y.data == 1.0
    assert x.grad == 0.0 and not math.isnan(x.grad)


def test_zero_to_a_value_power_has_derivative_zero_in_the_exponent():
    """0**y = 0 for every y > 0, so d/dy 0**y = 0 (not 0 * ln 0), with Value**Value and
    with a number base; d/dx x**2.5 at x = 0 is 0 as well."""
    x, y = Value(0.0), Value(2.5)
    z = x ** y
    z.backward()
    assert z.data == 0.0 and y.grad == 0.0 and x.grad == 0.0
    y2 = Value(2.5)
    z2 = 0 ** y2
    z2.backward()
    assert z2.data == 0.0 and y2.grad == 0.0


@pytest.mark.parametrize("x0, expected", [(1000.0, 1.0), (-1000.0, -1.0)])
def test_tanh_saturates_without_overflow(x0, expected):
    x = Value(x0)
    y = x.tanh()
    y.backward()
    assert y.data == expected and x.grad == 0.0


@pytest.mark.parametrize("x0, expected", [(1000.0, 1.0), (-1000.0, 0.0)])
def test_sigmoid_saturates_without_overflow(x0, expected):
    x = Value(x0)
    y = x.sigmoid()
    y.backward()
    assert math.isfinite(y.data) and y.data == expected
    assert x.grad == 0.0


def test_exp_of_huge_argument_is_inf_not_overflow_error():
    assert Value(1000.0).exp().data == math.inf
    assert Value(-1000.0).exp().data == 0.0


def test_power_overflow_is_signed_inf_not_overflow_error():
    assert (Value(1e200) ** 2).data == math.inf
    assert (Value(-1e200) ** 3).data == -math.inf
    assert (Value(-1e200) ** 2).data == math.inf


def test_division_by_a_tiny_number_with_a_finite_quotient_is_finite():
    """1e-10 / 1e-310 = 1e300 is an ordinary float; so is its derivative in a."""
    a, b = Value(1e-10), Value(1e-310)
    y = a / b
    ta, tb = tensor(1e-10), tensor(1e-310)
    ty = ta / tb
    ty.backward()
    assert_rel(y.data, ty.item())
    y.backward()
    assert_rel(a.grad, ta.grad.item())


# ---------------------------------------------------------------------------------------
# 5. Errors: ValueError outside a function's domain (naming the operation and the value),
#    TypeError for what is not a number (naming the types)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("compute, message", [
    (lambda: Value(0).log(), r"log: 0\.0 is outside the domain of log"),
    (lambda: Value(-1).log(), r"log: -1\.0 is outside the domain of log"),
    (lambda: Value(-1).sqrt(), r"sqrt: -1\.0 is outside the domain of sqrt"),
    (lambda: Value(0) ** -1, r"\*\*: 0\.0 \*\* -1 is undefined"),
    (lambda: Value(0) ** Value(-1), r"\*\*: 0\.0 \*\* -1\.0 is undefined"),
    (lambda: 0 ** Value(-1), r"\*\*: 0 \*\* -1\.0 is undefined"),
    (lambda: Value(-8) ** 0.5, r"\*\*: -8\.0 \*\* 0\.5 is not a real number"),
    (lambda: (-8) ** Value(0.5), r"\*\*: -8 \*\* 0\.5 is not a real number"),
    (lambda: Value(1) / Value(0), r"/: division by zero \(1\.0 / 0\.0\)"),
    (lambda: Value(1) / 0, r"/: division by zero \(1\.0 / 0\.0\)"),
    (lambda: 1 / Value(0), r"/: division by zero \(1\.0 / 0\.0\)"),
    (lambda: Value(float("inf")).sin(), r"sin: inf is outside the domain"),
], ids=["log(0)", "log(-1)", "sqrt(-1)", "0**-1", "0**Value(-1)", "0**-Value(1)",
        "(-8)**0.5", "(-8)**Value(0.5)", "1/0", "Value/0", "1/Value(0)", "sin(inf)"])
def test_domain_errors_name_the_operation_and_the_value(compute, message):
    with pytest.raises(ValueError, match=message):
        compute()


def test_domain_errors_of_the_module_functions_on_floats():
    with pytest.raises(ValueError, match=r"log: 0\.0 is outside"):
        V.log(0.0)
    with pytest.raises(ValueError, match=r"sqrt: -2\.0 is outside"):
        V.sqrt(-2.0)


@pytest.mark.parametrize("create_graph", [False, True])
def test_derivative_of_sqrt_at_zero_raises(create_graph):
    """sqrt'(0) is infinite: backward raises instead of returning inf silently."""
    x = Value(0.0)
    y = x.sqrt()
    assert y.data == 0.0
    with pytest.raises(ValueError, match=r"backward through 'sqrt' \(operands 0\.0\)"):
        y.backward(create_graph=create_graph)


def test_derivative_of_fractional_power_at_zero_raises():
    """d/dx x**0.5 at 0 is infinite, as for sqrt."""
    y = Value(0.0) ** 0.5
    with pytest.raises(ValueError, match=r"backward through '\*\*0\.5'"):
        y.backward()


def test_negative_base_with_value_exponent_raises_in_backward_naming_the_exponent():
    """(-2) ** y is real for an integer y, but d/dy = (-2)**y ln(-2) is not: the value is
    computed, backward raises a ValueError that explains the exponent is the problem."""
    x, y = Value(-2.0), Value(2.0)
    z = x ** y
    assert z.data == 4.0
    with pytest.raises(ValueError, match=r"exponent") as info:
        z.backward()
    assert "-2.0" in str(info.value)


def test_negative_number_base_with_value_exponent_raises_naming_the_exponent():
    y = Value(2.0)
    z = (-2) ** y
    assert z.data == 4.0
    with pytest.raises(ValueError, match=r"exponent"):
        z.backward()


@pytest.mark.parametrize("compute, message", [
    (lambda: Value(1.0) + "a", r"unsupported operand type\(s\) for \+: 'Value' and 'str'"),
    (lambda: "a" - Value(1.0), r"unsupported operand type\(s\) for -: 'str' and 'Value'"),
    (lambda: "a" / Value(1.0), r"for /: 'str' and 'Value'"),
    (lambda: "a" ** Value(1.0), r"for \*\* or pow\(\): 'str' and 'Value'"),
    (lambda: Value(1.0) - "a", r"for -: 'Value' and 'str'"),
    (lambda: Value(1.0) / "a", r"for /: 'Value' and 'str'"),
    (lambda: Value(1.0) ** "a", r"for \*\* or pow\(\): 'Value' and 'str'"),
    (lambda: Value(1.0) * None, r"for \*: 'Value' and 'NoneType'"),
    (lambda: Value(1.0) * [1], r"can't multiply sequence by non-int of type 'Value'"),
    (lambda: Value("abc"), r"Value: expected a real number .* got str 'abc'"),
    (lambda: Value(None), r"Value: expected a real number .* got NoneType None"),
    (lambda: Value(1 + 2j), r"got complex"),
], ids=["V+str", "str-V", "str/V", "str**V", "V-str", "V/str", "V**str", "V*None", "V*list",
        "Value(str)", "Value(None)", "Value(complex)"])
def test_non_numbers_raise_type_error_naming_the_types(compute, message):
    with pytest.raises(TypeError, match=message):
        compute()


@pytest.mark.parametrize("compute", [lambda: "a" + Value(1.0), lambda: None * Value(1.0)],
                         ids=["str+V", "None*V"])
def test_reflected_add_and_mul_with_non_numbers_raise_type_error(compute):
    """They do raise a TypeError that mentions both types (in some order)."""
    with pytest.raises(TypeError, match=r"(str|NoneType).*Value"):
        compute()


@pytest.mark.parametrize("compute, message", [
    # str + anything that is not a str is refused by str itself, with its own message
    (lambda: "a" + Value(1.0), r"can only concatenate str \(not \"Value\"\) to str"),
    (lambda: None * Value(1.0), r"for \*: 'NoneType' and 'Value'"),
], ids=["str+V", "None*V"])
def test_reflected_add_and_mul_name_the_types_in_the_order_written(compute, message):
    with pytest.raises(TypeError, match=message):
        compute()


def test_backward_errors_do_not_hide_the_operands():
    """The error of a failing backward step names the operation and its operands."""
    y = Value(-3.0) ** Value(3.0)
    with pytest.raises(ValueError, match=r"backward through '\*\*' \(operands -3\.0, 3\.0\)"):
        y.backward()


# ---------------------------------------------------------------------------------------
# 6. micrograd's small examples, and what happens when backward() runs twice
# ---------------------------------------------------------------------------------------

def test_product_gradients_are_the_other_factor():
    a, b = Value(2.0), Value(3.0)
    c = a * b
    c.backward()
    assert (c.data, a.grad, b.grad) == (6.0, 3.0, 2.0)


def test_gradients_add_up_over_every_path():
    """d = a*b + a: a reaches d twice, so a.grad = b + 1 = 4."""
    a, b = Value(2.0), Value(3.0)
    c = a * b
    d = c + a
    d.backward()
    assert (d.data, a.grad, b.grad, c.grad) == (8.0, 4.0, 2.0, 1.0)


def test_a_value_used_twice_in_one_operation():
    a = Value(5.0)
    (a + a).backward()
    assert a.grad == 2.0
    b = Value(5.0)
    (b * b).backward()
    assert b.grad == 10.0


def test_backward_on_a_leaf_gives_one():
    x = Value(3.0)
    x.backward()
    assert x.grad == 1.0


def test_backward_with_an_explicit_output_gradient_scales_everything():
    a, b = Value(2.0), Value(3.0)
    (a * b + a).backward(gradient=0.5)
    assert (a.grad, b.grad) == (2.0, 1.0)


@pytest.mark.parametrize("build", [
    lambda a, b: a * b,
    lambda a, b: a * b + a,
    lambda a, b: (a * b + a) * (b + 1) + a * a - b / 4.0,
    lambda a, b: ((a * b + a) * (b - a) + a ** 3 - (a + b).relu() * 2) * (a - b * b),
], ids=["a*b", "a*b+a", "deeper", "deeper2"])
def test_backward_twice_exactly_doubles_leaf_gradients(build):
    """Leaves accumulate and interior nodes restart from zero at every pass, so a second
    backward() adds the same gradient again: exactly twice the first (micrograd itself
    also accumulates in interior nodes and gets a*b+a wrong). Integer data keeps every
    float sum exact."""
    a, b = Value(2.0), Value(3.0)
    out = build(a, b)
    interior = topological_order(out)
    out.backward()
    first = (a.grad, b.grad)
    interior_first = [n.grad for n in interior]
    out.backward()
    assert (a.grad, b.grad) == (2 * first[0], 2 * first[1])
    assert [n.grad for n in interior] == interior_first  # this pass's gradient only
    # and the first gradients are right: compare with torch
    ta, tb = tensor(2.0), tensor(3.0)
    build(ta, tb).backward()
    assert first == (ta.grad.item(), tb.grad.item())


def test_repr_is_micrograd_s():
    assert repr(Value(2.0)) == "Value(data=2.0, grad=0.0)"
    assert repr(Value(2)) == "Value(data=2.0, grad=0.0)"
    a, b = Value(2.0), Value(3.0)
    (a * b).backward()
    assert repr(a) == "Value(data=2.0, grad=3.0)"


def test_data_is_always_a_float():
    for x in (2, 2.5, True, 10 ** 3):
        assert type(Value(x).data) is float
    assert Value(0).grad == 0.0 and type(Value(0).grad) is float


# ---------------------------------------------------------------------------------------
# 7. Properties of the engine
# ---------------------------------------------------------------------------------------

def _every_op_graph(a, b, rounds=12):
    """A graph that uses every operation (a few hundred nodes), and weak references to
    all of its nodes except the leaves a and b."""
    acc = Value(0.1)
    for k in range(rounds):
        t = (a * b + a - b / 2.0) ** 2 + 0.1 * k           # + - * / **number, number*
        u = ((t + 1.0).log() + (t + 1.0).sqrt() + 2 ** a + a ** b + (-t).relu()
             + t.exp().tanh() + t.sigmoid() + t.sin() + t.cos() + abs(t - 1.0)
             + 1 - t + 3 / (t + 1.0))                        # every function, r-ops
        acc = linear([u, acc], [a, b], b).tanh() * 0.5
    nodes, stack, seen = [], [acc], set()
    while stack:  # every node of the graph, leaves included (constants too)
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        stack.extend(n._prev)
    refs = [weakref.ref(n) for n in nodes if n is not a and n is not b]
    return acc, refs


@pytest.mark.parametrize("run_backward", [False, True], ids=["built", "after backward"])
def test_dropping_the_output_frees_the_graph_without_the_garbage_collector(run_backward):
    """A node refers only to its operands (no closure that captures the node itself, as
    micrograd's _backward does), so there are no reference cycles: with the cyclic
    garbage collector switched off, deleting the output frees every node at once."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        a, b = Value(0.7), Value(1.3)
        root, refs = _every_op_graph(a, b)
        assert len(refs) >= 300
        assert all(r() is not None for r in refs)
        if run_backward:
            root.backward()
            assert math.isfinite(a.grad) and a.grad != 0.0
        del root
        alive = sum(r() is not None for r in refs)
        assert alive == 0, f"{alive} of {len(refs)} nodes outlived their graph"
        assert (a.data, b.data) == (0.7, 1.3)  # the leaves, still held here, are intact
    finally:
        if was_enabled:
            gc.enable()


def test_graph_is_freed_after_create_graph_once_leaf_gradients_are_reset():
    """backward() docstring: the gradient graph refers back to the nodes it was computed
    from, 'so reset the leaves' .grad (and drop those gradients) when you are done'."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = Value(0.7)

        def build():
            p = x * x
            z = p.exp()
            return z, [weakref.ref(p), weakref.ref(z)]

        z, refs = build()
        z.backward(create_graph=True)
        assert isinstance(x.grad, Value)
        x.grad = 0.0
        del z
        assert all(r() is None for r in refs)
    finally:
        if was_enabled:
            gc.collect()
            gc.enable()


def test_graph_after_create_graph_is_collected_by_the_garbage_collector():
    """What happens today after backward(create_graph=True): the graph is not leaked for
    good, the cyclic collector frees it (and nothing else holds the nodes)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = Value(0.7)
        p = x * x
        z = p.exp()
        refs = [weakref.ref(p), weakref.ref(z)]
        z.backward(create_graph=True)
        x.grad = 0.0
        del z, p
        gc.collect()
        assert all(r() is None for r in refs)
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_backward_through_a_chain_of_a_million_nodes():
    """The graph is walked with an explicit stack, so depth is not limited by Python's
    recursion limit (1000 here): x -> x*1 -> x*1+1 -> ... 1,000,000 operations."""
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        x = Value(1.0)
        y = x
        for k in range(1_000_000):
            y = y * 1.0 if k % 2 == 0 else y + 1.0
        y.backward()
        assert y.data == 500_001.0
        assert x.grad == 1.0
        del y  # freeing the chain must not overflow the C stack either
    finally:
        sys.setrecursionlimit(old_limit)


def _random_expression(seed, n_leaves=6, n_ops=400):
    """A random graph with heavy reuse of nodes, bounded operations so values stay finite."""
    rng = random.Random(seed)
    leaves = [Value(rng.uniform(0.5, 1.5)) for _ in range(n_leaves)]
    pool = list(leaves)
    ops = [
        lambda a, b: (a * b).tanh(),
        lambda a, b: (a + b).sigmoid(),
        lambda a, b: a.sin() * b.cos(),
        lambda a, b: (a - b).tanh() + a / (b.abs() + 1.0),
        lambda a, b: linear([a, b], [b, a], 0.1).tanh(),
        lambda a, b: ((a * b) ** 2 + 1.0).log() - (b * b + 0.5).sqrt() + 2 ** a.tanh(),
    ]
    for _ in range(n_ops):
        pool.append(rng.choice(ops)(rng.choice(pool), rng.choice(pool)))
    root = sum(pool[-50:], Value(0.0))
    return root, leaves


def test_same_graph_built_twice_gives_bit_identical_gradients():
    """The walk visits operands in tuple order, so every floating-point sum in the
    backward pass happens in the same order: equal graphs, equal bits."""
    root1, leaves1 = _random_expression(2024)
    root2, leaves2 = _random_expression(2024)
    root1.backward()
    root2.backward()
    g1, g2 = [v.grad for v in leaves1], [v.grad for v in leaves2]
    assert root1.data == root2.data
    assert g1 == g2
    assert all(math.isfinite(g) for g in g1) and any(g != 0.0 for g in g1)
    # and the order of the walk itself is the same, operation by operation
    assert [n._op for n in topological_order(root1)] == \
        [n._op for n in topological_order(root2)]


def test_prev_is_the_tuple_of_operands_in_operand_order():
    a, b, c = Value(2.0), Value(3.0), Value(0.5)
    for node in (a + b, a * b, a ** b):
        assert type(node._prev) is tuple
        assert node._prev[0] is a and node._prev[1] is b and len(node._prev) == 2
    assert (b + a)._prev[0] is b and (b * a)._prev[0] is b
    assert a._prev == () and a._op == ""
    lin = linear([a, b], [c, a], b)
    assert [id(n) for n in lin._prev] == [id(b), id(a), id(b), id(c), id(a)]  # b, w.., x..
    diff = a - b  # a + (-1 * b)
    assert diff._prev[0] is a and diff._prev[1]._prev[0] is b


def test_op_labels_are_micrograd_s():
    """The labels micrograd shows in its pictures."""
    a, b = Value(2.0), Value(3.0)
    assert (a + b)._op == "+"
    assert (a * b)._op == "*"
    assert (a ** 2)._op == "**2"
    assert a.relu()._op == "ReLU"
    assert (a - b)._op == "+" and (-a)._op == "*"  # as micrograd builds them
    assert (a / b)._op == "/"  # its own operation: a * b**-1 would overflow for a tiny b


# ---------------------------------------------------------------------------------------
# 8. Nodes built by hand, micrograd style: Value(data, children, op)
# ---------------------------------------------------------------------------------------

def test_hand_built_nodes_backpropagate_by_their_label():
    """A node made as Value(a.data * b.data, (a, b), '*') finds its derivative rule by
    its label, as if it had been made by a * b."""
    a, b = Value(2.0), Value(-3.0)
    c = Value(a.data * b.data, (a, b), "*")
    d = Value(c.data + a.data, (c, a), "+")
    e = Value(max(d.data, 0.0), (d,), "ReLU")
    f = Value(math.tanh(a.data), (a,), "tanh")
    out = Value(e.data + f.data, (e, f), "+")
    out.backward()
    ta, tb = tensor(2.0), tensor(-3.0)
    tout = torch.relu(ta * tb + ta) + torch.tanh(ta)
    tout.backward()
    assert_rel(out.data, tout.item())
    assert_rel(a.grad, ta.grad.item())
    assert_rel(b.grad, tb.grad.item())


def test_hand_built_product_matches_operator_product():
    a, b = Value(1.5), Value(-0.25)
    Value(a.data * b.data, (a, b), "*").backward()
    hand = (a.grad, b.grad)
    a.grad = b.grad = 0.0
    (a * b).backward()
    assert hand == (a.grad, b.grad) == (-0.25, 1.5)


def test_hand_built_node_with_an_unknown_label_fails_in_backward_naming_it():
    x = Value(3.0)
    y = Value(x.data ** 2, (x,), "square")
    with pytest.raises(TypeError, match=r"no derivative rule for the operation 'square'"):
        y.backward()


def test_no_grad_and_detect_anomaly_apply_to_values():
    """Under no_grad a Value records no operands (nothing to backpropagate through);
    under detect_anomaly the first operation that makes an infinity or NaN raises; both
    per thread, as for tensors."""
    import threading

    import chainrule as cr
    a = Value(2.0)
    with cr.no_grad():
        b = a * 3 + 1
        with cr.enable_grad():
            c = a * 3
    assert b.data == 7.0 and b._prev == () and c._prev[0] is a
    assert (a * 3)._prev[0] is a  # recording again outside
    with pytest.raises(FloatingPointError, match=r"detect_anomaly: \* \(forward\) produced inf"):
        with cr.detect_anomaly():
            Value(1e308) * 10
    seen = []
    with cr.no_grad():  # another thread still records
        worker = threading.Thread(target=lambda: seen.append((a * 2)._prev))
        worker.start()
        worker.join(5)
    assert seen[0][0] is a


def test_numpy_arithmetic_with_a_value_gives_a_value_or_a_clear_error():
    """Never an object array of Values: it would leave the graph without a word."""
    v = Value(3.0)
    for result in (np.float64(2.0) * v, v * np.float32(2.0), np.array(2.0) * v,
                   np.multiply(2.0, v)):
        assert type(result) is Value and result.data == 6.0
    (np.float64(2.0) * v).backward()
    assert v.grad == 2.0
    for make, dv in ((lambda: np.array([1.0, 2.0]) * v, 3.0),
                     (lambda: v * np.array([1.0, 2.0]), 3.0),
                     (lambda: np.add(np.ones(2), v), 2.0)):  # v joins the tensor engine
        result = make()
        assert type(result) is cr.Tensor and result.requires_grad
        v.grad = 0.0
        result.sum().backward()
        assert v.grad == dv


def test_a_value_among_arrays_in_a_transform_is_a_0d_array():
    c = Value(2.0)
    ours = cr.jacfwd(lambda x, c: x * c, argnums=1)(np.array([0.5, 1.0]), c)
    np.testing.assert_array_equal(ours, [0.5, 1.0])
    assert cr.jacfwd(cr.grad(lambda x: cr.sin(x) * c))(1.5).data == \
        pytest.approx(-2 * np.sin(1.5))


# ---------------------------------------------------------------------------------------
# A Value among arrays joins the tensor engine as a 0-d array (docs/conventions.md)
# ---------------------------------------------------------------------------------------

def test_a_value_among_arrays_gets_its_gradient_through_the_tensor_graph_as_torch():
    torch = pytest.importorskip("torch")
    k = np.array([0.5, -1.0, 2.0])
    a = Value(0.7)
    b = a.tanh() * 3.0                                 # an interior Value meets arrays
    y = cr.sum(cr.sin(b * k) ** 2) * Value(1.5) + b
    assert isinstance(y, cr.Tensor)
    y.backward()
    at = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    bt = torch.tanh(at) * 3.0
    (torch.sum(torch.sin(bt * torch.tensor(k)) ** 2) * 1.5 + bt).backward()
    assert a.grad == pytest.approx(at.grad.item(), rel=1e-12)
    a.grad = 0.0
    (a * a).backward()                                 # the Value graph is as it was
    assert a.grad == 1.4


def test_transforms_of_array_code_on_a_value_match_jax_and_central_differences():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    k = np.arange(1.0, 4.0)
    f_cr = lambda v: cr.sum(cr.exp(-v * k) * cr.cos(v * k))  # noqa: E731
    f_jax = lambda v: jnp.sum(jnp.exp(-v * k) * jnp.cos(v * k))  # noqa: E731
    assert cr.grad(lambda v: cr.sum(v * np.arange(3.0)))(Value(2.0)).data == 3.0
    g = cr.grad(f_cr)(Value(0.3))
    assert float(g.data if isinstance(g, Value) else g) == pytest.approx(
        float(jax.grad(f_jax)(0.3)), rel=1e-12)
    h = 1e-5
    assert float(g.data if isinstance(g, Value) else g) == pytest.approx(
        (float(f_jax(0.3 + h)) - float(f_jax(0.3 - h))) / (2 * h), rel=1e-8)
    out, tangent = cr.jvp(f_cr, (Value(0.3),), (1.0,))
    assert float(tangent.data) == pytest.approx(float(jax.jvp(f_jax, (0.3,), (1.0,))[1]),
                                                rel=1e-12)
    second = cr.hessian(f_cr)(Value(0.3))
    assert float(second.data) == pytest.approx(float(jax.hessian(f_jax)(0.3)), rel=1e-12)
    v = Value(0.3)                                     # the gradient stays in v's graph:
    cr.grad(f_cr)(v).backward()                        # its backward is the 2nd derivative
    assert v.grad == pytest.approx(float(jax.hessian(f_jax)(0.3)), rel=1e-12)


def test_a_closure_over_a_value_in_array_transforms_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x = np.array([0.5, -1.0, 2.0])
    c = Value(1.3)
    g = cr.grad(lambda x: cr.sum(cr.sin(c * x) * x))(x)
    theirs = lambda c: jax.grad(lambda x: jnp.sum(jnp.sin(c * x) * x))(x)  # noqa: E731
    np.testing.assert_allclose(g.data, theirs(1.3), rtol=1e-12)
    cr.sum(g).backward()                               # d/dc of the gradient's sum
    assert c.grad == pytest.approx(float(jnp.sum(jax.jacfwd(theirs)(1.3))), rel=1e-12)
    _, t = cr.jvp(lambda x: cr.sum(x * x * c), (x,), (np.ones(3),))
    assert t.data == pytest.approx(float(jnp.sum(2 * x * 1.3)), rel=1e-12)


def test_create_graph_through_a_value_that_met_an_array_raises():
    v = Value(2.0)
    with pytest.raises(TypeError, match=r"backward\(create_graph=True\): a gradient reached "
                                        r"Value\(data=2.0, grad=0.0\), a Value that met an array"):
        (cr.sum(v * np.ones(2)) ** 2).backward(create_graph=True)

