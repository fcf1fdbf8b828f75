"""Neural networks of scalar Values: micrograd's Neuron, Layer and MLP.

Same names, arguments and parameter counts as micrograd (``MLP(2, [16, 16, 1])`` has
337 parameters, initialised with ``random.uniform(-1, 1)`` in the same order, so
``random.seed(1337)`` gives micrograd's own initial weights). What is added:

* ``rng=``: an int seed, a ``random.Random`` or a ``numpy.random.Generator`` for a
  reproducible initialisation
  (the default, ``None``, draws from the ``random`` module, as micrograd does);
* ``nonlin=`` may name the activation (``"relu"``, ``"tanh"``, ``"sigmoid"``) as well
  as be True (ReLU) or False (linear); ``MLP(..., activate_output=True)`` applies it on
  the last layer too (microcrad's variant);
* a neuron's weighted sum is one graph node (``linear`` below), which makes training
  several times faster; ``fused=False`` builds micrograd's chain of ``*`` and ``+``
  nodes, for pictures of small graphs where every multiplication should show;
* ``MLP(2, [16, 1, 1])`` works (micrograd crashes on a one-neuron hidden layer).
"""

import random
from collections.abc import Sequence
from itertools import repeat
from numbers import Real
from typing import Any

from ..modes import modes_switched
from ..scalar.fast_paths import node
from ..scalar.value import DERIVATIVES, Value
from .module import Module

__all__ = ["Neuron", "Layer", "MLP", "make_rng", "linear"]

# A source of random numbers: None, an int seed, a random.Random or a
# numpy.random.Generator. Any, to spell it without importing NumPy here.
RNG = Any


# A neuron's weighted sum b + w1*x1 + ... + wn*xn as one node with operands
# (b, w1..wn, x1..xn): d/db = 1, d/dwi = xi, d/dxi = wi.
def _linear_partials(ans, b, *wx):
    n = len(wx) // 2
    return (1.0, *wx[n:], *wx[:n])


def _linear_texts(count):  # the formulas for `count` operands: 1, the xs, the ws
    n = count // 2
    return ("1", *[f"{{{n + 1 + i}}}" for i in range(n)], *[f"{{{1 + i}}}" for i in range(n)])


_linear_partials.texts = _linear_texts


def linear(weights: Sequence[Value | float], inputs: Sequence[Value | float],
           bias: Value | float = 0.0) -> Value:
    """``bias + w1*x1 + ... + wn*xn`` as one node: what a neuron computes.

    micrograd builds this sum from 2n nodes (n products and n sums); one node with
    2n + 1 operands gives the same numbers (the same float operations in the same
    order) and backpropagates several times faster, because Python's cost is per
    node. Numbers among the inputs are treated as constants.

    >>> from chainrule.nn.scalar import linear
    >>> w = [cr.Value(2.0), cr.Value(-1.0)]
    >>> y = linear(w, [3.0, 4.0], bias=cr.Value(0.5))      # 0.5 + 2*3 - 1*4
    >>> y.data
    2.5
    >>> y.backward()
    >>> [wi.grad for wi in w]                    # each weight's gradient is its input
    [3.0, 4.0]
    """
    weights = [w if isinstance(w, Value) else _constant(w) for w in weights]
    inputs = [x if isinstance(x, Value) else _constant(x) for x in inputs]
    if len(weights) != len(inputs):
        raise ValueError(f"linear: {len(weights)} weights but {len(inputs)} inputs; "
                         f"expected one weight per input")
    bias = bias if isinstance(bias, Value) else _constant(bias)
    total = bias.data
    for w, x in zip(weights, inputs):
        total += w.data * x.data
    return type(bias)(total, (bias, *weights, *inputs), "linear", _rule=_linear_partials)


def _constant(x):
    if not isinstance(x, Real):
        raise TypeError(f"linear: expected a Value or a real number, got "
                        f"{type(x).__name__} {x!r}")
    return Value(x)

_ACTIVATIONS = {
    "relu": ("ReLU", Value.relu),
    "tanh": ("Tanh", Value.tanh),
    "sigmoid": ("Sigmoid", Value.sigmoid),
    "linear": ("Linear", None),
}


def make_rng(rng: RNG) -> Any:  # anything with uniform(a, b)
    """A source of random numbers from None (Python's global one), a seed, a
    ``random.Random`` or a ``numpy.random.Generator`` (anything with ``uniform(a, b)``)."""
    if rng is None or rng is random:
        return random
    if isinstance(rng, int) and not isinstance(rng, bool):
        return random.Random(rng)
    if callable(getattr(rng, "uniform", None)):  # random.Random, numpy's Generator
        return rng
    raise TypeError(f"rng: expected None, an int seed, a random.Random or a "
                    f"numpy.random.Generator, got {type(rng).__name__} {rng!r}")


def _activation_name(nonlin):
    if nonlin is True:
        return "relu"
    if nonlin is False or nonlin is None:
        return "linear"
    if isinstance(nonlin, str) and nonlin.lower() in _ACTIVATIONS:
        return nonlin.lower()
    raise ValueError(f"nonlin: expected True, False or one of "
                     f"{', '.join(map(repr, _ACTIVATIONS))}, got {nonlin!r}")


class Neuron(Module):
    """``activation(b + w1*x1 + ... + wn*xn)`` with weights drawn from U(-1, 1), bias 0.

    Takes a list of ``nin`` numbers or Values and gives one Value.

    >>> n = cr.nn.Neuron(2, nonlin=False, rng=0)     # linear: no activation
    >>> len(n.parameters())                          # two weights and the bias
    3
    >>> y = n([1.0, 2.0])
    >>> y.backward()
    >>> [w.grad for w in n.w]                        # each weight's gradient is its input
    [1.0, 2.0]
    """

    value = Value  # the kind of its parameters (chainrule.micrograd's Value there)

    def __init__(self, nin: int, nonlin: bool | str = True, rng: RNG = None,
                 fused: bool = True) -> None:
        if not isinstance(nin, int) or nin < 1:
            raise ValueError(f"Neuron: nin must be a positive int, got {nin!r}")
        rng = make_rng(rng)
        self.w = [self.value(rng.uniform(-1, 1)) for _ in range(nin)]
        self.b = self.value(0)
        self.activation = _activation_name(nonlin)
        self.nonlin = self.activation != "linear"
        self.fused = fused

    def __call__(self, x: Any) -> Value:
        if type(x) is list and self.fused:  # the usual call: the same nodes, sooner
            out = _neuron_of_values(self, x)
            if out is not None:
                return out
        if isinstance(x, (Value, Real)):  # a neuron with a single input takes a scalar
            x = [x]
        x = list(x)
        if len(x) != len(self.w):
            raise ValueError(f"Neuron: expected {len(self.w)} inputs, got {len(x)}")
        if self.fused:
            act = linear(self.w, x, self.b)
        else:
            act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        apply = _ACTIVATIONS[self.activation][1]
        return apply(act) if apply else act

    def parameters(self) -> list[Value]:
        """The weights, then the bias (micrograd's order)."""
        return self.w + [self.b]

    def __repr__(self):
        return f"{_ACTIVATIONS[self.activation][0]}Neuron({len(self.w)})"


class Layer(Module):
    """``nout`` neurons that read the same inputs. Returns a list, or a Value when nout == 1.

    >>> layer = cr.nn.Layer(2, 3, rng=0)             # 3 neurons of 2 inputs
    >>> len(layer([1.0, 2.0])), len(layer.parameters())
    (3, 9)
    """

    neuron = Neuron

    def __init__(self, nin: int, nout: int, **kwargs: Any) -> None:
        kwargs["rng"] = make_rng(kwargs.get("rng"))  # one stream for all neurons
        self.neurons = [self.neuron(nin, **kwargs) for _ in range(nout)]

    def outputs(self, x: Sequence[Value | float]) -> list[Value]:
        """The outputs as a list, always (also for a single neuron)."""
        return [n(x) for n in self.neurons]

    def __call__(self, x: Any) -> Any:  # (a Value, or a list of them for a layer of several)
        out = self.outputs(x)
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        """Every neuron's parameters, neuron by neuron."""
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multi-layer perceptron: ``MLP(2, [16, 16, 1])`` maps 2 inputs to 1 output.

    Hidden layers apply ``nonlin`` (ReLU by default); the last layer is linear unless
    ``activate_output=True``. Returns a Value when the last layer has one neuron.

    >>> model = cr.nn.MLP(2, [16, 16, 1], rng=0)    # micrograd's demo network
    >>> len(model.parameters())                     # (2*16 + 16) + (16*16 + 16) + (16 + 1)
    337
    >>> type(model([1.0, -1.0])).__name__
    'Value'
    """

    layer = Layer

    def __init__(self, nin: int, nouts: Sequence[int], nonlin: bool | str = True,
                 activate_output: bool = False, rng: RNG = None, fused: bool = True) -> None:
        rng = make_rng(rng)
        sizes = [nin] + list(nouts)
        last = len(nouts) - 1
        self.layers = [
            self.layer(sizes[i], sizes[i + 1], nonlin=(nonlin if (i != last or activate_output)
                                                  else False), rng=rng, fused=fused)
            for i in range(len(nouts))
        ]

    def __call__(self, x: Any) -> Any:  # (a Value, or a list of them for a layer of several)
        # Layers pass lists to each other, so a one-neuron hidden layer is no special case.
        for layer in self.layers:
            x = layer.outputs(x)
        return x[0] if len(x) == 1 else x

    def parameters(self) -> list[Value]:
        """Every layer's parameters, layer by layer."""
        return [p for layer in self.layers for p in layer.parameters()]

    def architecture(self) -> dict[str, Any]:
        """What rebuilds this model (stored in checkpoints)."""
        first, last = self.layers[0].neurons[0], self.layers[-1].neurons[0]
        return {"type": "ScalarMLP", "nin": len(first.w),
                "nouts": [len(layer.neurons) for layer in self.layers],
                "nonlin": first.activation if len(self.layers) > 1 else last.activation,
                "activate_output": last.activation != "linear"}

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


# ---------------------------------------------------------------------------------------
# The neuron's fast path: the nodes that linear() and Value.relu() make, the same numbers
# bit for bit, built in one pass over the operands (a neuron is a network's hottest
# line; tests/test_scalar_fast_paths.py compares the two ways).
# ---------------------------------------------------------------------------------------

def _neuron_of_values(neuron, x):
    """``neuron(x)`` for a list ``x`` of Values, when the weights and the bias are Values
    too and no mode is switched (no_grad, detect_anomaly); None elsewhere."""
    w, b = neuron.w, neuron.b
    kind = type(b)
    if modes_switched[0] or len(x) != len(w) or not isinstance(b, Value) or \
            kind.__init__ is not Value.__init__:
        return None
    if not (all(map(isinstance, w, _VALUES)) and all(map(isinstance, x, _VALUES))):
        return None
    ws, xs = [wi.data for wi in w], [xi.data for xi in x]
    total = b.data
    for wi, xi in zip(ws, xs):  # linear()'s sum: the same operations in the same order
        total += wi * xi
    if type(total) is not float:  # (Value() would convert it: the plain path does)
        return None
    numbers = (total, b.data, *ws, *xs)
    act = node(kind, total, (b, *w, *x), "linear", _linear_partials, numbers)
    if neuron.activation == "relu":  # Value.relu
        out = 0.0 if total < 0 else total
        return node(kind, out, (act,), "ReLU", _RELU, (out, total))
    apply = _ACTIVATIONS[neuron.activation][1]
    return apply(act) if apply else act


_RELU, _VALUES = DERIVATIVES["ReLU"], repeat(Value)  # (isinstance's second argument)
