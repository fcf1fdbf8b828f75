"""scalar/first_read.py, the sixty-line engine a learner reads first, is value.py's
engine with nothing around it: on random expressions of +, * and tanh (values used more
than once, Python numbers mixed in) both give the same value and the same gradient of
every input, to the last bit."""

import numpy as np
import pytest

from chainrule.scalar import first_read
from chainrule.scalar.value import Value


def _expression(rng, engine, inputs):
    """A random expression over ``inputs``: each step combines earlier results (any of
    them, so some are used twice or more) by +, * or tanh; returns the last."""
    values = [engine(x) for x in inputs]
    for _ in range(int(rng.integers(3, 25))):
        kind = rng.choice(["+", "*", "tanh", "+number", "number*"])
        a, b = (values[int(i)] for i in rng.integers(0, len(values), 2))
        number = float(np.round(rng.normal(), 3))
        values.append({"+": lambda: a + b, "*": lambda: a * b, "tanh": lambda: a.tanh(),
                       "+number": lambda: a + number, "number*": lambda: number * a}[kind]())
    return values[: len(inputs)], values[-1]


@pytest.mark.parametrize("seed", range(200))
def test_the_first_read_engine_gives_value_pys_numbers(seed):
    inputs = np.random.default_rng(seed).normal(size=4).tolist()
    results = {}
    for engine in (first_read.Value, Value):
        leaves, out = _expression(np.random.default_rng(seed), engine, inputs)
        out.backward()
        results[engine] = (out.data, [leaf.grad for leaf in leaves])
    assert results[first_read.Value] == results[Value]


def test_a_value_used_twice_gets_both_paths():
    x = first_read.Value(3.0)
    y = x * x + x          # dy/dx = 2x + 1
    y.backward()
    assert (y.data, x.grad) == (12.0, 7.0)


def test_the_table_holds_the_three_operations_and_the_file_stays_short():
    assert sorted(first_read.DERIVATIVES) == ["*", "+", "tanh"]
    with open(first_read.__file__, encoding="utf-8") as source:
        assert len(source.readlines()) <= 75


def test_its_example_prints_what_it_says():
    import doctest
    assert doctest.testmod(first_read).failed == 0
