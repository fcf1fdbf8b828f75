"""``micrograd.engine``: the Value class, with micrograd's hand-written closures.

chainrule's ``Value`` reads each backward step from its derivative table. micrograd code
also calls a node's step by hand (``o.grad = 1.0; o._backward()``, as Karpathy's lecture
does) and defines new operations by assigning a closure (``out._backward = _backward``).
This Value keeps both working; everything else is chainrule's.

A closure computes floats, so it cannot build the graph of a gradient
(``backward(create_graph=True)``) or take part in ``cr.grad``; and it usually captures
its own output node, a reference cycle left to the garbage collector, as in micrograd.

>>> from chainrule.micrograd.engine import Value
>>> x = Value(3.0)
>>> out = Value(x.data * 2, (x,), "double")
>>> def _backward():
...     x.grad += 2 * out.grad
>>> out._backward = _backward
>>> (out + x).backward()
>>> x.grad
3.0
"""

from ...scalar.value import Value as _TableValue

__all__ = ["Value"]


class Value(_TableValue):
    """chainrule's Value, plus micrograd's ``_backward`` closures (see the module).

    >>> a, b = Value(2.0), Value(3.0)
    >>> c = a * b
    >>> c.grad = 1.0
    >>> c._backward()                 # one step of the chain rule, by hand
    >>> a.grad, b.grad
    (3.0, 2.0)
    """

    __slots__ = ("_closure",)  # set only on a node given a closure

    @property
    def _backward(self):
        """This node's step of the chain rule: its closure, or the table's rule."""
        return getattr(self, "_closure", None) or self._chain_rule

    @_backward.setter
    def _backward(self, step):
        # The node becomes one that runs its closure; the others keep the table's step,
        # with nothing added to the hot path of building and walking a graph.
        self._closure = step
        self.__class__ = _WithClosure


class _WithClosure(Value):
    """A node whose backward step is a hand-written closure. (Nodes computed from it
    share its class, but not a closure: they take the table's step.)"""

    __slots__ = ()

    def _chain_rule(self, create_graph=False):
        if getattr(self, "_closure", None) is None:
            return super()._chain_rule(create_graph)
        if create_graph:
            raise TypeError(
                f"backward(create_graph=True): the operation {self._op!r} has a "
                f"hand-written _backward closure, which computes floats and cannot build "
                f"the graph of a gradient; add its rule to DERIVATIVES instead")
        self._closure()

    def _partials(self, create_graph):
        if getattr(self, "_closure", None) is None:
            return super()._partials(create_graph)
        raise TypeError(f"{self._op!r}: an operation with a hand-written _backward "
                        f"closure cannot be used inside cr.grad and the other "
                        f"transforms; add its rule to DERIVATIVES instead")
