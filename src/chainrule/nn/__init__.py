"""Neural networks: micrograd's scalar Neuron, Layer and MLP, and losses for tensors
(``chainrule.nn.functional``)."""

from . import functional
from .module import Module
from .scalar import MLP, Layer, Neuron

__all__ = ["Module", "Neuron", "Layer", "MLP", "functional"]
