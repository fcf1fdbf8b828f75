"""autograd.numpy.numpy_boxes: ``ArrayBox``, the class of a traced value, for
``isinstance(x, ArrayBox)`` (is x being differentiated?). In chainrule every traced
value (a reverse- or forward-mode tracer, a Tensor, a Value) is a ``chainrule.Box``.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.numpy.numpy_boxes import ArrayBox
    >>> grad(lambda x: 1.0 if isinstance(x, ArrayBox) else 0.0)(2.0)   # traced
    0.0
    >>> isinstance(np.ones(2), ArrayBox)
    False
"""

from ....primitive import Box as ArrayBox

__all__ = ["ArrayBox"]
