"""The answers to docs/exercises.md, one test per exercise, named after it.

The questions are on that page, each after the tutorial's sections it practises; do one
there first, then read its test here: the answer, worked, and checked with the suite.
"""

import contextlib
import io
import math
import re

import numpy as np
import pytest

import chainrule as cr
from chainrule.graph import topological_order
from chainrule.scalar import value as scalar_engine
from chainrule.scalar.value import DERIVATIVES, Value, rule


def test_1_backpropagation_by_hand():
    """Exercise 1: a receives a gradient from two paths (e * a, and d = a * b)."""
    a, b, c = 2.0, -3.0, 10.0
    d = a * b              # -6
    e = d + c              # 4
    f = e * a              # 8
    # backward, from f: each gradient is (the gradient arriving) * (the local partial)
    df_df = 1.0
    df_de = df_df * a      # f = e * a: df/de = a               -> 2
    df_da = df_df * e      # ... and df/da = e along this path   -> 4
    df_dd = df_de * 1.0    # e = d + c: de/dd = 1                -> 2
    df_dc = df_de * 1.0    # de/dc = 1                           -> 2
    df_da += df_dd * b     # d = a * b: dd/da = b; a's second path: 4 + 2 * -3 = -2
    df_db = df_dd * a      # dd/db = a                           -> 4

    va, vb, vc = Value(a), Value(b), Value(c)
    vf = (va * vb + vc) * va
    vf.backward()
    assert vf.data == f == 8.0
    assert (va.grad, vb.grad, vc.grad) == (df_da, df_db, df_dc) == (-2.0, 4.0, 2.0)


def test_2_the_six_lines_of_backpropagation_are_backward():
    """Exercise 2: the docstring's lines, run as they are, give backward()'s numbers."""
    code = scalar_engine.__doc__.split("::", 1)[1].split("\n\n")[1]
    code = "\n".join(line[4:] for line in code.splitlines())

    def graph():
        x, y, z = Value(0.5), Value(-1.5), Value(2.0)
        root = (x * y + z.exp()).tanh() * x + (y / z) ** 2
        return root, (x, y, z)

    root, inputs = graph()
    exec(code, {"topological_order": topological_order, "root": root})
    expected_root, expected_inputs = graph()
    expected_root.backward()
    assert [v.grad for v in inputs] == [v.grad for v in expected_inputs]


def test_3_add_softplus_to_both_tables(monkeypatch):
    """Exercise 3: softplus in both tables, checked to the second derivative."""
    # the scalar engine: an entry of the table (the partial as a function of the
    # result and the operands), and a node that names it
    monkeypatch.setitem(DERIVATIVES, "softplus",
                        rule(lambda ans, x: (scalar_engine.sigmoid(x),), "sigmoid({0})"))

    def softplus(x):
        return Value(math.log1p(math.exp(x.data)), (x,), "softplus")

    x = Value(0.3)
    y = softplus(x)
    y.backward(create_graph=True)
    slope = x.grad
    x.grad = 0.0
    slope.backward()

    torch = pytest.importorskip("torch", reason="the check against PyTorch needs torch "
                                                "(the test extra)")
    t = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    (t_slope,) = torch.autograd.grad(torch.nn.functional.softplus(t), t, create_graph=True)
    (t_curvature,) = torch.autograd.grad(t_slope, t)
    assert y.data == pytest.approx(torch.nn.functional.softplus(t).item(), rel=1e-15)
    assert slope.data == pytest.approx(t_slope.item(), rel=1e-15)
    assert x.grad == pytest.approx(t_curvature.item(), rel=1e-14)

    # the tensor table: the forward on arrays, and the partial written with the table's
    # own operations, so that second derivatives come from the same line
    softplus_op = cr.elementwise(lambda x: np.logaddexp(0.0, x), "softplus",
                                 lambda ans, x: cr.sigmoid(x))
    xs = np.array([-2.0, 0.3, 5.0])
    assert cr.gradcheck(lambda x: cr.sum(softplus_op(x)), xs, order=2)
    hessian = cr.hessian(lambda x: cr.sum(softplus_op(x)))(xs)
    t = torch.tensor(xs, requires_grad=True)
    t_hessian = torch.autograd.functional.hessian(
        lambda x: torch.nn.functional.softplus(x).sum(), t)
    np.testing.assert_allclose(hessian, t_hessian.numpy(), rtol=1e-13)


def test_4_write_a_vjp_and_check_it():
    """Exercise 4: the VJP of x e^x is g (1 + x) e^x; without the product rule,
    gradcheck names the mode that disagrees."""
    xexp = cr.primitive(lambda x: x * np.exp(x))
    xexp.defvjp(lambda g, ans, x: g * (1 + x) * cr.exp(x))   # (x e^x)' = (1 + x) e^x
    xexp.defjvp(lambda t, ans, x: t * (1 + x) * cr.exp(x))
    assert cr.gradcheck(xexp, np.array([-1.0, 0.5, 2.0]), order=2)

    wrong = cr.primitive(lambda x: x * np.exp(x))
    wrong.defvjp(lambda g, ans, x: g * x * cr.exp(x))         # forgot the product rule
    wrong.defjvp(lambda t, ans, x: t * (1 + x) * cr.exp(x))
    with pytest.raises(cr.GradcheckError, match="reverse mode"):
        cr.gradcheck(wrong, np.array([-1.0, 0.5, 2.0]))


def test_5_find_the_bug_in_a_broken_rule_with_explain(monkeypatch):
    """Exercise 5: the printed partial is sin(0.5) = 0.479426, where cos(0.5) =
    0.877583 belongs (a central difference says so without reading the table); the
    rule reads ``sin`` for ``cos``."""
    monkeypatch.setitem(DERIVATIVES, "sin",
                        rule(lambda ans, x: (scalar_engine.sin(x),), "sin({0})"))
    x = Value(0.5, label="x")
    y = x.sin()
    y.label = "y"
    told = io.StringIO()
    with contextlib.redirect_stdout(told):
        y.backward(explain=True)
    step = told.getvalue().splitlines()[1]
    assert step.startswith("y = sin(x)   x.grad += sin(x.data) * y.grad")
    partial = float(re.search(r"= ([-\d.]+) \*", step).group(1))
    central = (math.sin(0.5 + 1e-6) - math.sin(0.5 - 1e-6)) / 2e-6
    assert partial == pytest.approx(math.sin(0.5), rel=1e-5)    # what the broken rule says
    assert partial != pytest.approx(central, rel=1e-3)          # what the derivative is
    assert central == pytest.approx(math.cos(0.5), rel=1e-9)    # the fix: cos({0})


def test_the_exercises_page_asks_what_these_tests_answer():
    """docs/exercises.md names, for each exercise, the test here that answers it."""
    from pathlib import Path
    page = (Path(__file__).resolve().parents[1] / "docs" / "exercises.md").read_text()
    asked = re.findall(r"^## Exercise (\d+):", page, re.M)
    answers = re.findall(r"^Answer: `(test_(\d+)_\w+)`", page, re.M)
    assert asked == [number for _, number in answers] == ["1", "2", "3", "4", "5"]
    for name, _ in answers:
        assert callable(globals().get(name)), name
