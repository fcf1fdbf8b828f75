"""Neural networks: micrograd's scalar Neuron, Layer and MLP."""

from .module import Module
from .scalar import MLP, Layer, Neuron

__all__ = ["Module", "Neuron", "Layer", "MLP"]
