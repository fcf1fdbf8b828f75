"""parse_expression and parse_assignments: right values and gradients, and a whitelist
that refuses everything else, without side effects."""

import math

import pytest

from chainrule.app import expression
from chainrule.scalar import value as v
from chainrule.app.expression import ExpressionError, parse_assignments, parse_expression, unused
from chainrule.scalar.value import Value

X, Y = 0.7, -1.3

# (text, the same expression built directly from Values, the same with the math module)
CASES = [
    ("x*y + tanh(x)",
     lambda x, y: x * y + v.tanh(x),
     lambda x, y: x * y + math.tanh(x)),
    ("x**2 / y - 3*x",
     lambda x, y: x ** 2 / y - 3 * x,
     lambda x, y: x ** 2 / y - 3 * x),
    ("exp(x) * sin(y) + cos(x*y)",
     lambda x, y: v.exp(x) * v.sin(y) + v.cos(x * y),
     lambda x, y: math.exp(x) * math.sin(y) + math.cos(x * y)),
    ("sqrt(x*x + y*y) + log(abs(y))",
     lambda x, y: v.sqrt(x * x + y * y) + v.log(v.absolute(y)),
     lambda x, y: math.sqrt(x * x + y * y) + math.log(abs(y))),
    ("sigmoid(-x) + relu(y) + relu(x)",
     lambda x, y: v.sigmoid(-x) + v.relu(y) + v.relu(x),
     lambda x, y: 1 / (1 + math.exp(x)) + max(y, 0) + max(x, 0)),
    ("(x*y).relu() + x.tanh() + y.abs().sqrt()",
     lambda x, y: (x * y).relu() + x.tanh() + y.abs().sqrt(),
     lambda x, y: max(x * y, 0) + math.tanh(x) + math.sqrt(abs(y))),
    ("-x + +y - -2 ** x",
     lambda x, y: -x + y - -(2 ** x),
     lambda x, y: -x + y + 2 ** x),
    ("pi * x + e ** y",
     lambda x, y: math.pi * x + math.e ** y,
     lambda x, y: math.pi * x + math.e ** y),
    ("x / (1 + y**2) ** 0.5",
     lambda x, y: x / (1 + y ** 2) ** 0.5,
     lambda x, y: x / (1 + y ** 2) ** 0.5),
]


@pytest.mark.parametrize("text, direct, reference", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_direct_computation(text, direct, reference):
    root, variables = parse_expression(text, {"x": X, "y": Y})
    root.backward()
    x, y = Value(X), Value(Y)
    expected = direct(x, y)
    expected.backward()
    assert root.data == pytest.approx(expected.data, rel=1e-12)
    assert root.data == pytest.approx(reference(X, Y), rel=1e-12)
    assert variables["x"].grad == pytest.approx(x.grad, rel=1e-12)
    assert variables["y"].grad == pytest.approx(y.grad, rel=1e-12)


def test_returns_a_leaf_per_given_variable():
    root, variables = parse_expression("x*y + tanh(x)", {"x": 2, "y": 3, "unused": 5})
    assert list(variables) == ["x", "y", "unused"]
    assert all(isinstance(leaf, Value) and not leaf._prev for leaf in variables.values())
    assert [leaf.data for leaf in variables.values()] == [2.0, 3.0, 5.0]
    root.backward()
    assert variables["y"].grad == 2.0 and variables["unused"].grad == 0.0


def test_small_cases():
    root, variables = parse_expression("x", {"x": 2})
    assert root is variables["x"]
    root, _ = parse_expression("2**3 + 1", {})
    assert isinstance(root, Value) and root.data == 9.0
    root, _ = parse_expression("x**2", {"x": 2})
    assert root._op == "**2"  # an integer constant stays an integer in the label
    given = Value(4.0)
    root, variables = parse_expression("sqrt(w)", {"w": given})
    assert variables["w"] is given and root.data == 2.0
    assert parse_expression("e * 2", {"e": 5})[0].data == 10.0  # a variable shadows e
    assert parse_expression("\n  x * 2 \n", {"x": 2})[0].data == 4.0
    assert parse_expression("µ + 1", {"µ": 1})[0].data == 2.0  # micro sign, NFKC in ast


def test_deep_but_parseable_expression_is_evaluated_without_recursion():
    # 2000 nested additions: a recursive evaluator would pass Python's recursion limit.
    root, variables = parse_expression("x" + " + x" * 2000, {"x": 1.5})
    root.backward()
    assert root.data == 1.5 * 2001 and variables["x"].grad == 2001.0


REFUSED = [
    ("__import__('os').system('x')", "'__import__' is not an allowed function; allowed: exp, log"),
    ("().__class__", "tuples are not allowed"),
    ("x.__class__", "attribute access '.__class__' is not allowed"),
    ("abs(x).__class__", "'.__class__'"),
    ("x.system()", "'.system()' is not an allowed method"),
    ("x.tanh", "attribute access '.tanh'"),
    ("[x][0]", "subscripts"),
    ("x[1:2]", "subscripts"),
    ("lambda: 1", "lambda expressions are not allowed"),
    ("x if x else y", "conditional expressions"),
    ("open('f')", "'open' is not an allowed function"),
    ("x(y)", "'x' is not an allowed function"),
    ("(x + y)(1)", "only functions called by name"),
    ("z + 1", "unknown variable 'z'; given: x, y"),
    ("exp", "'exp' is a function: call it"),
    ("exp(x, y)", "exp() takes exactly one argument, got 2"),
    ("exp()", "exp() takes exactly one argument, got 0"),
    ("x.exp(y)", ".exp() takes no arguments, got 1"),
    ("tanh(x=1)", "keyword arguments (x=...)"),
    ("tanh(**{})", "keyword arguments (**...)"),
    ("tanh(*x)", "starred arguments"),
    ("x // y", "'//'"), ("x % y", "'%'"), ("x @ y", "'@'"), ("x ^ y", "'^'"),
    ("x << y", "'<<'"), ("~x", "'~'"), ("not x", "'not'"),
    ("x < y", "comparisons"), ("x and y", "'and' and 'or'"),
    ("(x := 2)", "assignment expressions (:=)"),
    ("f'{x}'", "f-strings"),
    ("'abc'", "the constant 'abc'"), ("b'x'", "the constant b'x'"),
    ("True + x", "the constant True"), ("1j", "the constant 1j"), ("None", "the constant None"),
    ("...", "the constant Ellipsis"),
    ("[i for i in x]", "comprehensions"), ("(i for i in x)", "generator expressions"),
    ("{x: y}", "dicts"), ("{x}", "sets"), ("(x, y)", "tuples"), ("[x]", "lists"),
    ("1" + "0" * 400, "too large"),
    ("1e400", "the number is too large for a float"),
]


@pytest.mark.parametrize("text, message", REFUSED, ids=[r[0][:30] for r in REFUSED])
def test_refused_constructs_are_named(text, message):
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text, {"x": 2, "y": 3})
    assert message in str(caught.value)
    assert "column" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_refused_expressions_have_no_side_effects(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ["__import__('os').system('touch pwned')", "open('pwned', 'w')",
                 "__import__('pathlib').Path('pwned').touch()"]:
        with pytest.raises(ExpressionError):
            parse_expression(text, {})
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_computed_before_the_whole_text_is_checked(monkeypatch):
    calls = []
    monkeypatch.setitem(expression.FUNCTIONS, "log", lambda x: calls.append(x) or x)
    with pytest.raises(ExpressionError, match="subscripts"):
        parse_expression("log(x) + [x][0]", {"x": 2})
    assert calls == []


@pytest.mark.parametrize("text, message", [
    ("x +* 2", "syntax error at column 4"),
    ("tanh(x", "syntax error at column 5: '(' was never closed"),
    ("1 +", "syntax error at the end of the expression"),
    ("(x +\n [1])", "lists are not allowed"),
    ("", "the expression is empty"),
    ("x + 0." + "0" * 9996 + "1", "too long: 10,003 characters"),
    ("-" * 9999 + "x", "nested too deeply"),
    ("(" + "1+" * 4900 + "1)*2", "nested too deeply"),  # a deep term of a chain
    ("(" * 300 + "x" + ")" * 300, "syntax error"),
    ("1" * 5000, "syntax error"),  # over Python's limit on int digits
])
def test_syntax_length_and_depth_errors(text, message):
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text, {"x": 2})
    assert message in str(caught.value)


def test_a_long_flat_sum_or_product_is_not_too_deep():
    """Python's parser nests a + b + ... to the left and gives up past a few thousand
    terms; such a chain is parsed term by term instead."""
    root, variables = parse_expression("1+" * 4999 + "x", {"x": 2})
    root.backward()
    assert root.data == 5001.0 and variables["x"].grad == 1.0
    root, variables = parse_expression("-x+" + "*".join(["x"] * 2000), {"x": 1.0})
    root.backward()
    assert root.data == 0.0 and variables["x"].grad == 1999.0
    with pytest.raises(ExpressionError, match=r"'foo' is not an allowed function.*column 6001"):
        parse_expression("+".join(["x"] * 3000) + "+foo(x)", {"x": 1.0})


def test_positions_count_characters_and_lines():
    with pytest.raises(ExpressionError, match=r"at line 2, column 2: `\[1\]`"):
        parse_expression("(x +\n [1])", {"x": 2})
    with pytest.raises(ExpressionError, match=r"at column 5: `\[1\]`"):
        parse_expression("é + [1]", {"é": 2})  # é is two bytes in UTF-8


def test_an_expression_of_exactly_the_maximum_length_is_fine():
    text = "x + 0." + "0" * 9993 + "1"
    assert len(text) == expression.MAX_LENGTH
    assert parse_expression(text, {"x": 2})[0].data == 2.0


@pytest.mark.parametrize("text, values, message", [
    ("log(x - 3)", {"x": 2}, "cannot evaluate (at column 1: `log(x - 3)`): log: -1.0"),
    ("1 / (x - 2)", {"x": 2}, "division by zero"),
    ("1 / (2 - 2)", {}, "division by zero"),
    ("(x - 3) ** 0.5", {"x": 2}, "not a real number"),
])
def test_values_outside_a_domain_are_expression_errors(text, values, message):
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text, values)
    assert message in str(caught.value)


@pytest.mark.parametrize("text, values, where", [
    ("10**400", {}, "`10**400`"),
    ("exp(x)", {"x": 1000}, "`exp(x)`"),
    ("x * 1e308 * 10", {"x": 1}, "`x * 1e308 * 10`"),
    ("x**1e10", {"x": 2}, "`x**1e10`"),
])
def test_a_result_that_overflows_is_refused_as_an_infinite_value_is(text, values, where):
    """inf is never a value: not given (x=inf is refused), and not computed either."""
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text, values)
    message = str(caught.value)
    assert message.startswith("cannot evaluate (at column ") and where in message
    assert "too large for a float" in message


def test_unused_names_the_variables_the_expression_does_not_use():
    root, variables = parse_expression("x * y + x * 0", {"x": 2, "y": 3, "z": 4, "w": 1})
    assert unused(root, variables) == ["z", "w"]  # x * 0 uses x, with a gradient of 0
    root, variables = parse_expression("2", {"x": 1})
    assert unused(root, variables) == ["x"]


@pytest.mark.parametrize("values, message", [
    ({"x": "2"}, "the value of 'x' must be a real number, got str"),
    ({"x": True}, "must be a real number, got bool"),
    ({"1x": 2}, "'1x' is not a valid variable name"),
    ({"for": 2}, "'for' is not a valid variable name"),
])
def test_bad_values_are_refused(values, message):
    with pytest.raises(ExpressionError, match=message):
        parse_expression("1", values)


def test_parse_assignments():
    assert parse_assignments("x=2,y=3") == {"x": 2.0, "y": 3.0}
    assert parse_assignments(" x = -1.5 , y_2=1e3 ") == {"x": -1.5, "y_2": 1000.0}
    assert parse_assignments("") == {} and parse_assignments("  ") == {}
    assert all(type(x) is float for x in parse_assignments("x=2").values())


@pytest.mark.parametrize("text, message", [
    ("x", "expected name=number, got 'x'"),
    ("x=2,", "expected name=number, got ''"),
    ("x=", "'' is not a number"),
    ("x=abc", "'abc' is not a number"),
    ("=2", "'' is not a valid variable name"),
    ("1x=2", "'1x' is not a valid variable name"),
    ("for=1", "'for' is not a valid variable name"),
    ("x=2,x=3", "variable 'x' is given twice"),
    ("x=nan", "finite"),
    ("x=inf", "finite"),
])
def test_parse_assignments_errors(text, message):
    with pytest.raises(ExpressionError) as caught:
        parse_assignments(text)
    assert message in str(caught.value)
