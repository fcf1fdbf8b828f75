"""Neural networks: micrograd's scalar Neuron, Layer and MLP, and PyTorch-shaped layers
for tensors, with losses as functions (``nn.functional``) and as modules.

``nn.MLP(2, [16, 16, 1])`` (micrograd's signature) is a scalar MLP;
``nn.MLP([784, 128, 10], activation="relu")`` a tensor one.
"""

from . import functional
from .layers import (GELU, BCEWithLogitsLoss, CrossEntropyLoss, Dropout, Flatten, Linear,
                     MLP, MSELoss, ReLU, Sequential, Sigmoid, Tanh)
from .module import Module, Parameter
from .scalar import Layer, Neuron

__all__ = ["Module", "Parameter", "Neuron", "Layer", "MLP", "Linear", "Sequential",
           "ReLU", "Tanh", "Sigmoid", "GELU", "Dropout", "Flatten", "CrossEntropyLoss",
           "MSELoss", "BCEWithLogitsLoss", "functional"]
