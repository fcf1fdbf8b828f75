"""What every engine shares: walking a computation graph.

A node of any engine has a tuple ``_prev`` of the nodes it was computed from (its
operands). A node with no operands is a leaf: an input or a parameter. This module
knows nothing else about nodes, so the scalar engine and the tensor engine use it alike.
"""

__all__ = ["topological_order", "Roots"]


def topological_order(root):
    """The interior nodes that ``root`` depends on, each listed after all of its operands.

    ``root`` comes last (when it is interior). Leaves are left out: backpropagation only
    has to visit the nodes that have operands to pass a gradient to, and skipping leaves
    spares a set lookup for every weight and input.

    It is the order of a depth-first search, micrograd's ``build_topo``, written here
    as a recursion::

        def visit(node):
            if node._prev and node not in seen:
                seen.add(node)
                for operand in node._prev:
                    visit(operand)
                order.append(node)      # after every node it was made from

    Python stops a recursion about a thousand calls deep, so the walk below makes the
    same search with a stack of its own (of operand iterators): a graph a million nodes
    deep works. Operands are visited in the order of their tuple, so the order, and with
    it every floating-point sum made while backpropagating, is the same from run to run.
    """
    if not root._prev:
        return []
    order = []
    seen = {root}
    stack = [(root, iter(root._prev))]
    while stack:
        node, operands = stack[-1]
        for operand in operands:
            if operand._prev and operand not in seen:
                seen.add(operand)
                stack.append((operand, iter(operand._prev)))
                break
        else:  # every operand of `node` is already in `order`
            stack.pop()
            order.append(node)
    return order


class Roots:
    """A stand-in node whose operands are several outputs, to walk them in one order."""

    __slots__ = ("_prev",)

    def __init__(self, roots):
        self._prev = tuple(roots)
