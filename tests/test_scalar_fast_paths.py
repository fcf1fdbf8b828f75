"""The scalar engine's fast paths against the plain code they stand in for, bit for bit.

``chainrule.scalar.fast_paths.backpropagate`` is value.py's walk (``node._chain_rule()``
for each node, the last first) with fewer calls; ``nn.scalar._neuron_of_values`` makes
the nodes that ``linear()`` and ``Value.relu()`` make. Each test runs a computation
both ways, the plain way by switching the fast path off, and compares every number
exactly (``float.hex``: -0.0 and NaN included). The moons training run is also pinned
to the numbers the engine gave before the fast paths existed.
"""

import hashlib
import math
import random

import pytest

import chainrule as cr
import chainrule.nn.scalar as scalar_nn
import chainrule.scalar.value as value_module
from chainrule import Value
from chainrule.data import make_moons
from chainrule.micrograd import engine as micro_engine
from chainrule.micrograd import nn as micro_nn
from chainrule.nn.scalar import linear


@pytest.fixture
def plain(monkeypatch):
    """A function that switches the fast paths off (the plain code runs)."""
    def switch_off():
        monkeypatch.setattr(value_module, "backpropagate", lambda order, base, relu: False)
        monkeypatch.setattr(scalar_nn, "_neuron_of_values", lambda neuron, x: None)
    return switch_off


def hexes(numbers):
    return [float(n).hex() for n in numbers]


# --- the walk ------------------------------------------------------------------------

def random_graph(rng):
    """Leaves and an output made with every operation of the table, operands shared and
    repeated, relu's kink and linear nodes included."""
    leaves = [Value(rng.uniform(-2, 2)) for _ in range(6)] + [Value(0.0), Value(1.5)]
    pool = list(leaves)
    for _ in range(60):
        a, b = rng.choice(pool), rng.choice(pool)
        kind = rng.randrange(12)
        made = [a + b, a * b, a * a, a - b, a / (b * b + 1), (a * a + 1) ** 1.5,
                (a * 0.3).exp(), (a * a + 0.5).log(), a.tanh(), b.sigmoid(), a.relu(),
                linear([a, b, a], [b, rng.choice(pool), 2.0], bias=b)][kind]
        if abs(made.data) < 1e3:
            pool.append(made)
    total = pool[-1]
    for node in pool[-12:]:
        total = total + node.relu() * node
    return leaves, total


@pytest.mark.parametrize("seed", range(8))
def test_the_fast_walk_gives_the_plain_walks_gradients(seed, plain):
    leaves, total = random_graph(random.Random(seed))
    total.backward()
    fast = hexes(leaf.grad for leaf in leaves)
    for leaf in leaves:
        leaf.grad = 0.0
    plain()
    total.backward()
    assert hexes(leaf.grad for leaf in leaves) == fast


def test_the_fast_walk_takes_relus_step_as_the_table_does(plain):
    """At the kink (0.0 and -0.0), at NaN, and with an infinite gradient (0 * inf is
    NaN: the step multiplies its 0.0 by the gradient, as the plain one does)."""
    def grads():
        found = []
        for x in (-1.0, 0.0, -0.0, 2.0, math.nan):
            for scale in (3.0, 1e308):
                leaf = Value(x)
                (leaf.relu() * scale * scale).backward()
                found.append(leaf.grad)
        return hexes(found)
    fast = grads()
    plain()
    assert grads() == fast


def test_the_fast_walk_gives_the_plain_walks_errors(plain):
    def failures():
        found = []
        for build in (lambda: Value(0.0).sqrt(),                      # 0.5 / 0
                      lambda: Value(2.0, (Value(1.0),), "unknown op")):  # no rule
            with pytest.raises((ValueError, TypeError)) as err:
                build().backward()
            found.append((err.type, str(err.value)))
        return found
    fast = failures()
    plain()
    assert failures() == fast


def test_micrograd_closures_take_the_plain_walk():
    x = micro_engine.Value(3.0)
    out = micro_engine.Value(x.data * 2, (x,), "*")  # a table op, with a closure of its own

    def _backward():
        x.grad += 10 * out.grad
    out._backward = _backward
    (out.relu() + x).backward()
    assert x.grad == 11.0


# --- the neuron ----------------------------------------------------------------------

def same_node(a, b):
    """Two nodes alike: class, numbers, operation, rule, and the very same operands."""
    assert type(a) is type(b) and a._op == b._op and a._rule is b._rule
    assert hexes(a._seen) == hexes(b._seen) and a.data.hex() == b.data.hex()
    assert (a.grad, a.label) == (b.grad, b.label)
    assert len(a._prev) == len(b._prev)
    for p, q in zip(a._prev, b._prev):
        if p._prev:
            same_node(p, q)
        else:
            assert p is q


@pytest.mark.parametrize("nonlin", [True, False, "tanh", "sigmoid"])
@pytest.mark.parametrize("library", [cr.nn, micro_nn])
def test_a_neuron_makes_the_plain_nodes(nonlin, library, plain):
    neuron = library.Neuron(5, nonlin=nonlin, rng=1)
    kind = type(neuron.b)
    x = [kind(v) for v in (0.5, -1.25, 3.0, 0.0, -0.0)]
    x[1] = neuron.w[0] * x[0]  # an interior node among the inputs
    fast = neuron(x)
    plain()
    same_node(fast, neuron(x))


@pytest.mark.parametrize("case", ["number input", "number weight", "int data", "no_grad",
                                  "tuple input"])
def test_a_neuron_outside_the_fast_path_is_unchanged(case, plain):
    neuron = cr.nn.Neuron(3, rng=2)
    x = [Value(1.0), Value(-2.0), Value(0.5)]
    if case == "number input":
        x[1] = -2.0
    elif case == "number weight":
        neuron.w[2] = 0.25
    elif case == "int data":
        neuron.b.data = 1
        for xi in x:
            xi.data = int(xi.data)
    elif case == "tuple input":
        x = tuple(x)

    def call():
        if case == "no_grad":
            with cr.no_grad():
                return neuron(x)
        return neuron(x)
    fast = call()
    plain()
    expected = call()
    assert fast.data.hex() == expected.data.hex() and fast._op == expected._op
    assert len(fast._prev) == len(expected._prev) and hexes(fast._seen) == hexes(expected._seen)


# --- a training run, both ways and as before ---------------------------------------------

def train_moons(MLP, steps=6):
    """micrograd's moons demo (benchmarks/w1_scalar_moons.py): losses, gradients, weights."""
    X, y01 = make_moons(100, noise=0.1, seed=0)
    X, y = X.tolist(), [2 * int(v) - 1 for v in y01]
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    params = model.parameters()
    record = []
    for _ in range(steps):
        scores = [model(list(map(type(params[0]), row))) for row in X]
        losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
        total = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in params)
        model.zero_grad()
        total.backward()
        for p in params:
            p.data -= 0.1 * p.grad
        record.append([total.data] + [p.grad for p in params] + [p.data for p in params])
    return record


@pytest.mark.parametrize("MLP", [cr.nn.MLP, micro_nn.MLP], ids=["chainrule", "micrograd"])
def test_moons_training_is_the_same_both_ways_and_as_before(MLP, plain):
    fast = train_moons(MLP)
    digest = hashlib.sha256(repr(fast).encode()).hexdigest()
    # the first 6 steps as the plain engine computed them before the fast paths existed
    assert digest == "a72f89a027d369e0a7b219eae13dcdfeb217511626bcd40b3071c4f16f924274"
    plain()
    assert [hexes(step) for step in train_moons(MLP)] == [hexes(step) for step in fast]
