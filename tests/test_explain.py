"""backward(explain=True): the chain rule, printed step by step as backward takes it."""

import contextlib
import io
import math
import re

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.rules import fused
from chainrule import Value, nn
from chainrule.app.cli import main
from chainrule.explain import ScalarStory
from chainrule.graph import topological_order
from chainrule.nn.scalar import linear
from chainrule.scalar.value import DERIVATIVES


def told(backward, *args, **kwargs):
    """What a backward call prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        backward(*args, **kwargs)
    return out.getvalue()


def test_the_seeds_example_shows_a_gradient_arriving_in_two_steps():
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    c = a * b
    c.label = "c"
    d = c + a
    d.label = "d"
    text = told(d.backward, explain=True)
    assert text.splitlines() == [
        "d.grad = 1.0   (the start: dd/dd = 1)",
        "d = c + a   c.grad += 1 * d.grad = 1.0 * 1.0 -> 1.0",
        "            a.grad += 1 * d.grad = 1.0 * 1.0 -> 1.0",
        "c = a * b   a.grad += b.data * c.grad = 3.0 * 1.0 -> 4.0",
        "            b.grad += a.data * c.grad = 2.0 * 1.0 -> 2.0",
    ]
    assert (a.grad, b.grad) == (4.0, 2.0)


def test_names_come_from_a_mapping_such_as_locals_and_the_rest_are_numbered():
    x = Value(0.5)
    y = x * x + 1.0
    text = told(y.backward, explain={"x": x, "y": y, "not_a_node": 3})
    assert "v1 = x * x" in text and "y = v1 + v2" in text
    assert "x.grad += x.data * v1.grad = 0.5 * 1.0 -> 0.5" in text
    assert text.splitlines()[-1].endswith("-> 1.0")  # x used twice: 0.5 + 0.5


def expression_with_every_operation(x, y):
    return ((x * y).tanh() ** 2 + 2 ** x - x / y + (x ** y).exp().log().relu()
            + x.sin() * y.cos() + (x + 1).sqrt() + (-x).abs() + x.sigmoid())


def test_explaining_changes_no_gradient():
    plain = [Value(0.7), Value(1.3)]
    expression_with_every_operation(*plain).backward()
    explained = [Value(0.7), Value(1.3)]
    told(expression_with_every_operation(*explained).backward, explain=True)
    assert [v.grad for v in explained] == [v.grad for v in plain]


def test_the_printed_totals_are_the_gradients_the_pass_leaves():
    """The last printed total for each leaf is its .grad, checked against PyTorch."""
    x, y = Value(0.7, label="x"), Value(1.3, label="y")
    text = told(expression_with_every_operation(x, y).backward, explain=True)
    last = {name: float(total) for name, total in
            re.findall(r"\b([xy])\.grad \+= .* -> (\S+)$", text, flags=re.M)}
    tx = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    expression_with_every_operation(tx, ty).backward()
    assert last["x"] == pytest.approx(tx.grad.item(), rel=1e-5)  # printed to 6 digits
    assert last["y"] == pytest.approx(ty.grad.item(), rel=1e-5)


@pytest.mark.parametrize("op", sorted(DERIVATIVES))
def test_each_printed_formula_evaluates_to_the_tables_partial_derivative(op):
    """The formulas are text for the reader; evaluated, they give the numbers that ran."""
    a, b = Value(0.8, label="a"), Value(1.7, label="b")
    one_operand = {"exp": a.exp, "log": a.log, "sqrt": a.sqrt, "sin": a.sin, "cos": a.cos,
                   "tanh": a.tanh, "sigmoid": a.sigmoid, "ReLU": a.relu, "abs": a.abs}
    two_operands = {"+": a.__add__, "*": a.__mul__, "/": a.__truediv__, "**": a.__pow__}
    node = one_operand[op]() if op in one_operand else two_operands[op](b)
    node.label = "out"
    story = ScalarStory(node, None, topological_order(node), 1.0, print_line=lambda line: None)
    numbers = {"a.data": a.data, "b.data": b.data, "out.data": node.data}
    for formula, partial in zip(story.formulas(node), node._partials(False)):
        for name, number in numbers.items():
            formula = formula.replace(name, repr(number))
        environment = {"log": math.log, "sin": math.sin, "cos": math.cos,
                       "sign": lambda v: math.copysign(1.0, v) if v else 0.0}
        assert float(eval(formula, environment)) == pytest.approx(partial, rel=1e-12)


@pytest.mark.parametrize("build, shown", [
    (lambda a: a ** 3, "a.grad += 3 * a.data**2 * out.grad = 1.92 * 1.0 -> 1.92"),
    (lambda a: 2 ** a, "a.grad += out.data * log(2) * out.grad"),
    (lambda a: linear([a, 2.0], [3.0, a], 1.0), "out = v1 + a*v3 + v2*a"),
])
def test_powers_with_constants_and_the_fused_neuron_are_written_out(build, shown):
    a = Value(0.8, label="a")
    out = build(a)
    out.label = "out"
    assert shown in told(out.backward, explain=True)


def test_a_micrograd_style_hand_written_backward_is_shown_by_its_effect():
    from chainrule.micrograd.engine import Value
    a = Value(3.0, label="a")
    out = Value(a.data * 2, (a,), "double", label="out")

    def _backward():
        a.grad += 2 * out.grad
    out._backward = _backward
    text = told(out.backward, explain=True)
    assert "out = double(a)   a.grad -> 2.0   (by its hand-written _backward)" in text


def test_explain_works_with_create_graph_and_the_gradient_stays_differentiable():
    x = Value(0.5, label="x")
    y = x ** 3
    text = told(y.backward, explain=True, create_graph=True)
    assert "x.grad += 3 * x.data**2 * v1.grad = 0.75 * 1.0 -> 0.75" in text
    slope = x.grad
    assert slope.data == 0.75  # 3x^2, a Value that can be differentiated again
    x.grad = 0.0
    slope.backward()
    assert x.grad == 3.0  # d/dx 3x^2 = 6x


@pytest.mark.skipif(not fused.enabled(), reason="the speed overrides are off "
                    "(CHAINRULE_FAST=0): cross_entropy is a composition")
def test_the_tensor_engine_tells_the_same_story_with_shapes():
    x = cr.tensor(np.ones((4, 3)), requires_grad=True)
    W = cr.tensor(np.full((3, 2), 0.5), requires_grad=True)
    b = cr.tensor(np.zeros(2), requires_grad=True)
    h = (x @ W + b).relu()
    loss = nn.functional.cross_entropy(h, [0, 1, 1, 0])
    text = told(loss.backward, explain={"x": x, "W": W, "b": b, "h": h, "loss": loss})
    lines = text.splitlines()
    assert lines[:2] == ["shapes: (shape of the gradient arriving) -> (shape of the "
                         "operand's gradient)", "loss.grad = 1   (the start)"]
    assert "h.grad += (softmax(h) - one_hot) / N * loss.grad   () -> (4, 2)" in lines[2]
    assert "t2.grad += (t2 > 0) * h.grad   (4, 2) -> (4, 2)" in text
    assert "b.grad += t2.grad   (4, 2) -> (4, 2), summed over broadcast axes to (2,)" in text
    assert "x.grad += t1.grad @ W.T   (4, 2) -> (4, 3)" in text
    assert "W.grad += x.T @ t1.grad   (4, 2) -> (3, 2)" in text
    # the output first, the inputs last, each leaf below the first step that uses it
    assert [line.split(" = ")[0] for line in lines if not line.startswith(" ")][2:] == \
        ["loss", "h", "t2", "b", "t1", "x", "W"]
    columns = [re.sub(r" {3,}", "   ", line) for line in lines]
    assert "b = [0.0, 0.0]   (a leaf, (2,) float64)" in columns  # small: its numbers
    assert "x = array(4, 3)   (a leaf, (4, 3) float64)" in columns  # large: its shape
    assert "(2,)   adds [0.0, 0.0]" in text and "(4, 3)   adds" not in text


def test_explaining_a_tensor_backward_changes_no_gradient():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(5, 3))
    grads = []
    for explain in (False, True):
        x = cr.tensor(data, requires_grad=True)
        y = (x.exp() * x.sum(axis=0) - x.mean()).tanh().sum()
        told(y.backward, explain=explain)
        grads.append(x.grad)
    assert np.array_equal(grads[0], grads[1])


def test_an_operation_without_a_written_formula_is_still_named():
    x = cr.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = cr.softplus(x).sum()
    text = told(y.backward, explain={"x": x})
    assert "x.grad += vjp of softplus (argument 1) applied to t1.grad   (3,) -> (3,)" in text


def test_chainrule_graph_explain_prints_the_steps(tmp_path, capsys):
    status = main(["graph", "x*y + x", "--at", "x=2,y=3", "--explain",
                   "-o", str(tmp_path / "g.dot")])
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines()[:5] == [
        "f.grad = 1.0   (the start: df/df = 1)",
        "f = v1 + x   v1.grad += 1 * f.grad = 1.0 * 1.0 -> 1.0",
        "             x.grad += 1 * f.grad = 1.0 * 1.0 -> 1.0",
        "v1 = x * y   x.grad += y.data * v1.grad = 3.0 * 1.0 -> 4.0",
        "             y.grad += x.data * v1.grad = 2.0 * 1.0 -> 2.0",
    ]
    assert "d/dx = 4.0" in out


def test_both_engines_write_the_partial_before_the_gradient():
    """Value: a.grad += b.data * c.grad; Tensor: the same order, partial * grad."""
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    c = a / b
    c.label = "c"
    assert "a.grad += 1 / b.data * c.grad" in told(c.backward, explain=True)
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = cr.tensor([3.0, 4.0], requires_grad=True)
    text = told((x / y).sum().backward, explain={"x": x, "y": y})
    assert "x.grad += 1 / y * t1.grad" in text and "y.grad += -t1 / y * t1.grad" in text
    # a partial that is a phrase is kept whole by parentheses
    text = told(cr.nan_to_num(x).sum().backward, explain={"x": x})
    assert "x.grad += (1 where x is finite, else 0) * t1.grad" in text


def test_a_constant_is_defined_below_the_step_that_uses_it():
    """p - q is p + (-1 * q): the -1 is a leaf with no name, and its value is said."""
    p, q = Value(5.0, label="p"), Value(2.0, label="q")
    r = p - q
    r.label = "r"
    lines = told(r.backward, explain=True).splitlines()
    assert lines[3:] == [
        "v2 = q * v1   q.grad += v1.data * v2.grad = -1.0 * 1.0 -> -1.0",
        "              v1.grad += q.data * v2.grad = 2.0 * 1.0 -> 2.0",
        "v1 = -1.0     (a leaf with no name: a constant, or an input)",
    ]
    # a named leaf's number is in the steps already: no line of its own
    assert not any(line.startswith(("p =", "q =")) for line in lines)


def test_a_constant_used_twice_is_defined_once():
    x = Value(3.0, label="x")
    two = Value(2.0)
    y = x * two + two
    y.label = "y"
    lines = told(y.backward, explain=True).splitlines()
    assert [line for line in lines if line.startswith("v1 =")] == \
        ["v1 = 2.0      (a leaf with no name: a constant, or an input)"]
    assert lines[3].startswith("v1 = 2.0 ")  # below y's steps, the first to use it


def test_names_prefer_labels_then_a_mapping_then_numbers_in_walk_order():
    from chainrule.explain import NodeNames, reading_order
    a, b = Value(1.0, label="a"), Value(2.0)
    c = a * b
    d = c + a
    names = NodeNames(d, labels={d: "out"},
                      names={"b": b, "x": a, "prod": c, "_hidden": b, "n": 3})
    # the output, then each node after its users, each leaf after its first user
    assert [names(node) for node in reading_order(d)] == ["out", "a", "prod", "b"]
    plain = NodeNames(d)  # numbered as the walk meets them, inputs first
    assert [plain(node) for node in reading_order(d)] == ["v3", "a", "v2", "v1"]


def test_tensor_constants_appear_by_their_numbers_when_small():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * np.array([3.0, 4.0]) + np.zeros((5, 2))).sum()
    text = told(y.backward, explain={"x": x, "y": y})
    assert "t1 = x * [3.0, 4.0]" in text and "t2 = t1 + array(5, 2)" in text
    # a tensor that needs no gradient is a leaf too, with a name and its line
    w = cr.tensor([0.5, 0.5])
    text = told((x * w).sum().backward, explain={"x": x})
    assert "t2 = x * t1" in text and "t1 = [0.5, 0.5]" in text
