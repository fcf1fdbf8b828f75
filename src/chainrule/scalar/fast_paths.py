"""The scalar engine's hot paths: the same steps as the plain code they stand in for, with
fewer Python calls. Python's cost in a scalar engine is per call and per attribute, not
per multiplication, so these inline calls and skip checks their callers have made; every
number they compute is the plain code's, bit for bit (tests/test_scalar_fast_paths.py
runs each beside the plain code and compares).

* ``backpropagate(order, base, relu)``: value.py's walk, ``for node in reversed(order):
  node._chain_rule()``, with the two method calls of each step inlined, and relu's rule
  (a neural network's most common node) computed in place;
* ``node(cls, data, operands, op, rule, numbers)``: the node ``cls(data, operands, op,
  _rule=rule)`` builds, without ``__init__``'s checks, for a caller that has them done
  and the numbers at hand (nn.scalar's neurons).
"""

__all__ = ["backpropagate", "node"]


def backpropagate(order, base, relu):
    """Pass each node's gradient on to its operands, the last node first, in floats:
    the plain walk's steps, ``base._chain_rule`` (value.py), one by one. ``relu`` is
    the table's rule for ReLU, whose nodes take the step inline.

    Returns False, having done nothing, when a node's class has a step of its own (a
    micrograd-style ``_backward`` closure): the plain walk then runs it.
    """
    step, partials_of = base._chain_rule, base._partials
    for kind in set(map(type, order)):
        if kind._chain_rule is not step or kind._partials is not partials_of:
            return False
    for each in reversed(order):
        g = each.grad
        rule = each._rule
        if rule is relu and len(each._prev) == 1:  # its rule: (1.0 if x > 0 else 0.0,)
            each._prev[0].grad += (1.0 if each._seen[1] > 0 else 0.0) * g
            continue
        try:
            partials = rule(*each._seen)  # the numbers the node was computed from
        except Exception:  # no rule, or no finite derivative: the plain step's error
            partials = each._partials(False)
        for operand, d in zip(each._prev, partials):
            operand.grad += d * g
    return True


def node(cls, data, operands, op, rule, numbers):
    """What ``cls(data, operands, op, _rule=rule)`` makes, when the caller knows that
    no mode is switched (``modes_switched[0]`` is 0), that ``data`` is a float, that
    ``cls`` keeps Value's ``__init__``, and that ``numbers`` is ``(data, *[operand.data
    for operand in operands])``."""
    made = cls.__new__(cls)
    made.data = data
    made.grad = 0.0
    made._prev = operands
    made._op = op
    made._seen = numbers
    made.label = ""
    made._rule = rule
    return made
