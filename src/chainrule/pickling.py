"""What a Tensor or a Value pickles (and deep-copies) as: a new leaf.

Its numbers, ``requires_grad`` and ``.grad`` (a Value's label too) are kept; the graph
that made it is not (its rules are functions, its nodes hold the arrays of a whole
computation), nor are the locks that graph holds on the arrays (``saved.py``), so the
copy is writable. ``torch.save`` keeps no graph either; a Module's parameters are
leaves, so a model pickles whole, before or after a forward pass.
"""

import numpy as np

__all__ = ["reduce_tensor", "reduce_value"]


def reduce_tensor(tensor):
    return _rebuilt_tensor, (type(tensor), tensor._data, tensor.requires_grad, tensor._grad)


def _rebuilt_tensor(cls, data, requires_grad, grad):
    tensor = cls._make(np.array(data), requires_grad)  # (writable, whatever was saved)
    tensor._grad = grad
    return tensor


def reduce_value(value):
    return _rebuilt_value, (type(value), value.data, value.grad, value.label)


def _rebuilt_value(cls, data, grad, label):
    value = cls(data, label=label)
    value.grad = grad
    return value
