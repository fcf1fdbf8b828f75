"""``micrograd.nn``: Module, Neuron, Layer and MLP."""

from ..nn.module import Module
from ..nn.scalar import MLP, Layer, Neuron

__all__ = ["Module", "Neuron", "Layer", "MLP"]
