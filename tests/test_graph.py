"""``chainrule.graph.topological_order``: the order in which backward() visits a graph.

What it promises: only interior nodes (nodes with operands; leaves are left out), each
listed after all of its operands, the root last, every node exactly once however many
paths lead to it, no recursion (so any depth works), and the same order every time
(operands are visited in the order of their ``_prev`` tuple).
"""

import random
import sys

import pytest

from chainrule.graph import topological_order
from chainrule.nn.scalar import linear
from chainrule.scalar.value import Value


class Node:
    """The least a node needs: a tuple ``_prev`` of operands. The walk knows nothing
    else, which is what lets the scalar and tensor engines share it."""

    def __init__(self, name, *prev):
        self.name = name
        self._prev = prev

    def __repr__(self):
        return self.name


def all_nodes(root):
    """Every node reachable from root, leaves included (a reference walk, independent
    of the function under test)."""
    seen, stack = {}, [root]
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen[id(n)] = n
            stack.extend(n._prev)
    return list(seen.values())


def assert_topological(order, root):
    """The promises, checked one by one."""
    position = {id(n): i for i, n in enumerate(order)}
    assert len(position) == len(order), "a node is listed twice"
    interior = [n for n in all_nodes(root) if n._prev]
    assert {id(n) for n in interior} == set(position), "not exactly the interior nodes"
    for n in order:
        assert n._prev, f"leaf {n!r} listed"
        for operand in n._prev:
            if operand._prev:
                assert position[id(operand)] < position[id(n)], \
                    f"{n!r} listed before its operand {operand!r}"
    if root._prev:
        assert order[-1] is root


# --- leaves ------------------------------------------------------------------------

def test_a_leaf_has_an_empty_order():
    assert topological_order(Value(3.0)) == []
    assert topological_order(Node("x")) == []


def test_leaves_are_left_out():
    a, b = Value(2.0), Value(3.0)
    c = a * b
    assert topological_order(c) == [c]


# --- small graphs, order spelled out -------------------------------------------------

def test_operands_first_root_last_in_operand_order():
    """s = (a*b) + (c*d): the left operand's subgraph, then the right one's, then s."""
    a, b, c, d = (Value(float(k)) for k in range(1, 5))
    ab, cd = a * b, c * d
    s = ab + cd
    assert topological_order(s) == [ab, cd, s]
    s2 = cd + ab  # the other operand order gives the other order
    assert topological_order(s2) == [cd, ab, s2]


def test_chain_with_reuse():
    x, y = Value(0.5), Value(2.0)
    p = x * y
    q = p + x
    r = q.exp()
    s = r * p  # p is reached twice: through r -> q and directly
    order = topological_order(s)
    assert order == [p, q, r, s]
    assert_topological(order, s)


def test_diamond_lists_the_shared_node_once():
    """     b          b feeds both c and d; e reaches b along two paths
          /   \\
      a - b    c,d -> e
    """
    a = Node("a")
    b = Node("b", a)
    c = Node("c", b)
    d = Node("d", b)
    e = Node("e", c, d)
    assert topological_order(e) == [b, c, d, e]


def test_same_operand_twice():
    x = Value(3.0)
    h = x.tanh()
    sq = h * h
    assert topological_order(sq) == [h, sq]


def test_ladder_of_diamonds_is_linear_not_exponential():
    """100 stacked diamonds: 2**100 paths from the top to the bottom, yet every node is
    visited once (a walk per path would never finish)."""
    x = Value(0.5)
    nodes = []
    node = x
    for _ in range(100):
        left, right = node.tanh(), node.sin()
        node = left * right
        nodes += [left, right, node]
    order = topological_order(node)
    assert len(order) == 300
    assert [id(n) for n in order] == [id(n) for n in nodes]
    assert_topological(order, node)


def test_order_of_an_expression_using_every_operation():
    a, b = Value(0.7), Value(1.3)
    t = (a * b + a - b / 2.0) ** 2
    u = (t + 1.0).log() + t.sqrt() + 2 ** a + a ** b + (-t).relu() + t.exp().tanh() \
        + t.sigmoid() + t.sin() + t.cos() + abs(t) + linear([a, t], [b, a], 0.5)
    assert_topological(topological_order(u), u)


# --- depth and determinism -----------------------------------------------------------

def test_depth_200000_without_recursion():
    """A chain 200,000 nodes deep under a recursion limit of 1000: the walk uses an
    explicit stack."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        x = Node("x")
        first = node = Node("n0", x)
        for k in range(1, 200_000):
            node = Node(f"n{k}", node, x)
        order = topological_order(node)
        assert len(order) == 200_000
        assert order[0] is first and order[-1] is node
        assert all(order[k]._prev[0] is order[k - 1] for k in range(1, len(order)))
    finally:
        sys.setrecursionlimit(old)


def _random_graph(rng_seed, n=300):
    rng = random.Random(rng_seed)
    leaves = [Node(f"x{k}") for k in range(5)]
    pool = list(leaves)
    for k in range(n):
        arity = rng.choice([1, 2, 3])
        pool.append(Node(f"n{k}", *(rng.choice(pool) for _ in range(arity))))
    root = Node("root", *pool[-30:])
    return root


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_graphs_satisfy_every_promise(seed):
    root = _random_graph(seed)
    assert_topological(topological_order(root), root)


def recursive_order(root):
    """graph.py's docstring's recursion, as it is written there."""
    order, seen = [], set()

    def visit(node):
        if node._prev and node not in seen:
            seen.add(node)
            for operand in node._prev:
                visit(operand)
            order.append(node)
    visit(root)
    return order


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_walk_gives_the_order_of_the_recursive_search(seed):
    """The explicit stack is the recursion of the docstring, node for node."""
    root = _random_graph(seed)
    assert [n.name for n in topological_order(root)] == \
        [n.name for n in recursive_order(root)]


def test_deterministic():
    """The same graph walked twice gives the same list; the same graph built twice gives
    the same sequence of nodes."""
    root = _random_graph(7)
    first = topological_order(root)
    assert [id(n) for n in topological_order(root)] == [id(n) for n in first]
    assert [n.name for n in topological_order(_random_graph(7))] == [n.name for n in first]


def test_the_graph_is_not_modified():
    root = _random_graph(3)
    before = [(id(n), tuple(id(p) for p in n._prev)) for n in all_nodes(root)]
    topological_order(root)
    assert [(id(n), tuple(id(p) for p in n._prev)) for n in all_nodes(root)] == before
