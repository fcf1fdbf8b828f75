"""``micrograd.nn``: Module, Neuron, Layer and MLP, whose parameters and results are
``micrograd.engine``'s Values (chainrule's, with micrograd's closures).

>>> from chainrule.micrograd.nn import MLP
>>> len(MLP(2, [16, 16, 1], rng=0).parameters())
337
"""

from ...nn import scalar
from ...nn.module import Module
from .engine import Value

__all__ = ["Module", "Neuron", "Layer", "MLP"]


class Neuron(scalar.Neuron):
    __doc__ = scalar.Neuron.__doc__
    value = Value


class Layer(scalar.Layer):
    __doc__ = scalar.Layer.__doc__
    neuron = Neuron


class MLP(scalar.MLP):
    __doc__ = scalar.MLP.__doc__
    layer = Layer
