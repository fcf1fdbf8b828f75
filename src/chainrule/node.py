"""The record of one recorded operation: what the backward pass reads of a node.

A Tensor made by an operation on tensors that require grad, and a reverse-mode tracer
made by an operation inside ``grad``/``vjp``/``jacrev``, are both nodes of a graph, and
the one backward pass (``backward.py``) walks both. So they share this record:

``_prev``          the operands that carry a gradient (a tuple, in argument order); a node
                   without operands is a leaf (an input, a parameter)
``_op``            the operation (a ``Primitive``)
``_args``          the arguments as called (Tensors or tracers among them)
``_raw_args``      the same with each operand's array: what the rules are given
``_kwargs``        the keyword arguments (parameters such as ``axis``)
``_grad_argnums``  the positions of the operands among the arguments
``_versions``      the version counters of the tensors it saved, with their values when
                   it was made: a walk that finds one moved refuses (a write since);
                   ``saved.FREED`` once backward() freed the graph
``_retain``        keep this node's gradient (``retain_grad()``)
``_origin``        where the user's code made it (under ``detect_anomaly``)
``_residual``      what a speed override's forward kept for its VJP (``chainrule.rules.fused``)
``_leaves``        the leaves among its arguments, whose arrays it holds locked
                   (``saved.py``)
"""

__all__ = ["Node"]


class Node:
    """The fields a graph node carries for the backward pass (see the module)."""

    __slots__ = ("_prev", "_op", "_args", "_raw_args", "_kwargs", "_grad_argnums",
                 "_versions", "_retain", "_origin", "_residual", "_leaves", "__weakref__")
