"""Layers for the tensor engine, shaped like PyTorch's: Linear, Sequential, Dropout,
Flatten, LayerNorm and a tensor MLP (the activations as modules are in activations.py,
the lookup tables in embeddings.py, the losses in losses.py, the convolutions in
conv.py)."""

import math
from numbers import Integral
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..rules import fused
from .. import rules as ops
from ..rules.common import Result
from ..tensor import Tensor
from . import functional as F
from .activations import GELU, ReLU, Sigmoid, Tanh
from . import hooks
from .construction import RNG, check_device, initial_generator, make_generator
from .module import Module, Parameter
from .scalar import MLP as ScalarMLP

__all__ = ["Linear", "Bilinear", "Sequential", "Dropout", "Flatten", "MLP", "LayerNorm",
           "ACTIVATIONS", "make_generator"]

# Where random numbers come from: None (fresh entropy), an int seed, or a Generator.
class Linear(Module):
    """``y = x @ weight.T + bias``, weight of shape (out_features, in_features): one row
    per output, PyTorch's layout, so that ``weight[k]``, ``F.linear`` and a torch
    state dict carry over as they are. ``init="he"`` draws N(0, 2 / in_features), right for ReLU;
    ``"xavier"`` draws U(-a, a) with a = sqrt(6 / (in + out)), right for tanh; the bias
    starts at 0. ``"torch"`` is torch's default: weight and bias U(-b, b), b =
    1 / sqrt(in_features), so a ported model starts alike in distribution. ``rng`` is a seed or a ``numpy.random.Generator``; by default the
    weights come from the default generator, which ``cr.manual_seed`` seeds, as PyTorch's.

    Input (..., in_features), output (..., out_features).

    >>> layer = cr.nn.Linear(3, 2, rng=0)
    >>> layer.weight.shape, layer.bias.shape
    ((2, 3), (2,))
    >>> y = layer(cr.ones(4, 3))                  # a batch of 4 rows
    >>> y.shape
    (4, 2)
    >>> y.sum().backward()
    >>> layer.bias.grad.tolist()                  # each row adds 1
    [4.0, 4.0]
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 init: str = "he", rng: RNG = None, dtype: DTypeLike = np.float64) -> None:
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, Integral) or n < 1:
                raise ValueError(f"Linear: {name} must be a positive int, got {n!r}")
        rng = initial_generator(rng)
        if init == "torch":  # torch's default: weight and bias U(-1/sqrt(in), 1/sqrt(in))
            bound = 1 / math.sqrt(in_features)
            self.in_features, self.out_features = in_features, out_features
            self.weight = Parameter(rng.uniform(-bound, bound, (out_features, in_features)),
                                    dtype=dtype)
            self.bias = (Parameter(rng.uniform(-bound, bound, out_features), dtype=dtype)
                         if bias else None)
            return
        # (drawn column by column, so that a seed gives the numbers it always gave)
        if init == "he":
            w = rng.standard_normal((in_features, out_features)) * math.sqrt(2 / in_features)
        elif init == "xavier":
            a = math.sqrt(6 / (in_features + out_features))
            w = rng.uniform(-a, a, (in_features, out_features))
        else:
            raise ValueError(f"Linear: init must be 'he', 'xavier' or 'torch', got {init!r}")
        w = np.ascontiguousarray(w.T)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(w, dtype=dtype)
        self.bias = Parameter(np.zeros(out_features), dtype=dtype) if bias else None

    def forward(self, x: ArrayLike, activation: str | None = None) -> Tensor:
        """x @ weight.T + bias; x's last axis must be in_features. ``activation="relu"``
        applies relu in the same operation (see ``nn.functional.linear``)."""
        if x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: input of shape {tuple(x.shape)}, expected the last "
                             f"axis to be in_features = {self.in_features}")
        return F.linear(x, self.weight, self.bias, activation)

    def extra_repr(self) -> str:
        """in_features, out_features and bias, for repr."""
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")

    def _layout_changes(self, version):
        return ("weight",) if version < 2 else ()

    def _from_format(self, name, array, version):
        """A checkpoint of format 1 stored the weight (in, out): transposed."""
        return np.transpose(np.asarray(array)) if name == "weight" and version < 2 else array

    def _layout_note(self, version):
        return ("this checkpoint was written in format 1, where nn.Linear stored its weight "
                "as (in_features, out_features); it is loaded transposed into PyTorch's "
                "(out_features, in_features). Save it again to write format 2")


class Sequential(Module):
    """Modules applied one after the other: ``Sequential(Linear(2, 16), ReLU(), ...)``.

    >>> model = cr.nn.Sequential(cr.nn.Linear(2, 4, rng=0), cr.nn.Tanh(),
    ...                          cr.nn.Linear(4, 1, rng=0))
    >>> model
    Sequential(
      (0): Linear(in_features=2, out_features=4, bias=True)
      (1): Tanh()
      (2): Linear(in_features=4, out_features=1, bias=True)
    )
    >>> model(cr.ones(3, 2)).shape, len(model), type(model[1]).__name__
    ((3, 1), 3, 'Tanh')
    """

    def __init__(self, *modules: Module) -> None:
        for m in modules:
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: expected Modules, got {type(m).__name__}")
        self.layers = list(modules)

    def forward(self, x: ArrayLike) -> Result:
        """Each module applied to the previous one's output.

        With the speed overrides on (``chainrule.rules.fused``), a Linear followed by a ReLU
        runs as one operation, ``linear_relu``: the same numbers, one graph node and one
        pass over the activations fewer."""
        layers, i, fuse = self.layers, 0, fused.enabled()
        while i < len(layers):
            layer = layers[i]
            if (fuse and type(layer) is Linear and i + 1 < len(layers)
                    and type(layers[i + 1]) is ReLU and not hooks.has_hooks(layer)
                    and not hooks.has_hooks(layers[i + 1])):
                x = layer.forward(x, activation="relu")
                i += 2
            else:
                x = layer(x)
                i += 1
        return x

    def __getitem__(self, i):
        return self.layers[i]

    def __setitem__(self, i, module):
        """``model[i] = layer``: replace a layer, as in PyTorch."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential[{i}] = ...: expected a Module, got "
                            f"{type(module).__name__}")
        self.layers[i] = module

    def __delitem__(self, i):
        """``del model[i]``: remove a layer (or a slice of them), as in PyTorch."""
        del self.layers[i]

    def __len__(self):
        return len(self.layers)

    def _repr_children(self):  # PyTorch's picture: the layers by position
        return ((str(i), layer) for i, layer in enumerate(self.layers))

    def _torch_children(self):  # PyTorch's Sequential names its layers '0', '1', ...
        return ((str(i), layer) for i, layer in enumerate(self.layers))


ACTIVATIONS = {"relu": ReLU, "tanh": Tanh, "sigmoid": Sigmoid, "gelu": GELU}


class Dropout(Module):
    """In training, zero each entry with probability p and scale the rest by 1/(1-p),
    so the expected output is unchanged; in eval mode, the identity.

    Any shape; ``rng`` (a seed or a Generator) fixes which entries are dropped.

    >>> drop = cr.nn.Dropout(0.5, rng=0)
    >>> drop(cr.ones(8)).data.tolist()            # kept entries are scaled by 2
    [2.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0]
    >>> drop.eval()(cr.ones(3)).data.tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, rng: RNG = None) -> None:
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p!r}")
        self.p = p
        self.rng = make_generator(rng)

    def forward(self, x: ArrayLike) -> Result:
        """x with entries dropped at random in training; x itself in eval."""
        return F.dropout(x, self.p, self.training, rng=self.rng)  # (drawn anew in each
        # cr.jit run)

    def extra_repr(self) -> str:
        """p, for repr."""
        return f"p={self.p}"


class Bilinear(Module):
    """``y = x1 A x2 + b`` per output (torch's ``nn.Bilinear``): weight (out_features,
    in1_features, in2_features), bias (out_features,), both U(-1/sqrt(in1_features),
    1/sqrt(in1_features)) as torch's, drawn from ``rng`` or the default generator.

    >>> layer = cr.nn.Bilinear(3, 4, 5, rng=0)
    >>> layer(cr.ones(2, 3), cr.ones(2, 4)).shape, layer.weight.shape
    ((2, 5), (5, 3, 4))
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: str | None = None, dtype: DTypeLike = np.float64,
                 *, rng: RNG = None) -> None:
        check_device("Bilinear", device)
        for name, n in (("in1_features", in1_features), ("in2_features", in2_features),
                        ("out_features", out_features)):
            if not isinstance(n, Integral) or n < 1:
                raise ValueError(f"Bilinear: {name} must be a positive int, got {n!r}")
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        rng, bound = initial_generator(rng), 1 / math.sqrt(in1_features)
        self.weight = Parameter(rng.uniform(-bound, bound, (out_features, in1_features,
                                                            in2_features)), dtype=dtype)
        self.bias = (Parameter(rng.uniform(-bound, bound, out_features), dtype=dtype)
                     if bias else None)

    def forward(self, input1: ArrayLike, input2: ArrayLike) -> Result:
        """x1 A_k x2 + b_k for each output k."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Merge the axes from ``start_dim`` to ``end_dim`` (both included; by default all
    but the batch axis 0): (N, ...) -> (N, -1), as PyTorch's.

    >>> cr.nn.Flatten()(cr.zeros(5, 2, 3)).shape
    (5, 6)
    >>> cr.nn.Flatten(0, 1)(cr.zeros(5, 2, 3)).shape
    (10, 3)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: ArrayLike) -> Result:
        """x with the axes from start_dim to end_dim merged into one."""
        shape = tuple(x.shape)
        start, end = self.start_dim % len(shape), self.end_dim % len(shape)
        if start > end:
            raise ValueError(f"Flatten: start_dim {self.start_dim} comes after end_dim "
                             f"{self.end_dim} for an input of shape {shape}")
        return ops.reshape(x, shape[:start] + (-1,) + shape[end + 1:])

    def extra_repr(self) -> str:
        """start_dim and end_dim, for repr."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class LayerNorm(Module):
    """Normalise over the last axes, ``normalized_shape`` (an int or a tuple): subtract
    their mean, divide by sqrt(variance + eps) (the biased variance, as PyTorch), then
    scale by ``weight`` (ones at first) and shift by ``bias`` (zeros) of that shape
    when ``elementwise_affine``.

    Built from mean and sqrt, so cr.grad and higher derivatives go through it.

    >>> norm = cr.nn.LayerNorm(4)
    >>> y = norm(cr.tensor([[1.0, 2.0, 3.0, 4.0]]))
    >>> np.round(y.data, 4).tolist()
    [[-1.3416, -0.4472, 0.4472, 1.3416]]
    >>> [name for name, p in norm.named_parameters()]
    ['weight', 'bias']
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 dtype: DTypeLike = np.float64) -> None:
        shape = (normalized_shape,) if isinstance(normalized_shape, Integral) \
            else tuple(normalized_shape)
        if not shape or not all(isinstance(n, Integral) and n > 0 for n in shape):
            raise ValueError(f"LayerNorm: normalized_shape must be a positive int or a "
                             f"tuple of them, got {normalized_shape!r}")
        if not eps >= 0:
            raise ValueError(f"LayerNorm: eps must be >= 0, got {eps!r}")
        self.normalized_shape = tuple(int(n) for n in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(np.ones(shape), dtype=dtype) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape), dtype=dtype) \
            if elementwise_affine and bias else None

    def forward(self, x: ArrayLike) -> Result:
        """(x - mean) / sqrt(var + eps) * weight + bias over the last axes."""
        n = len(self.normalized_shape)
        if tuple(x.shape[-n:]) != self.normalized_shape or len(x.shape) < n:
            raise ValueError(f"LayerNorm: input of shape {tuple(x.shape)}, expected it to "
                             f"end with normalized_shape {self.normalized_shape}")
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """normalized_shape, eps and elementwise_affine, for repr."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class MLP(Sequential):
    """A multi-layer perceptron of tensors: ``MLP([784, 128, 10])`` is Linear 784->128,
    ReLU, Linear 128->10 (the last layer has no activation).

    ``nn.MLP(nin, nouts)`` with an int first, micrograd's signature, builds micrograd's
    scalar MLP instead (``MLP(2, [16, 16, 1])``).

    >>> model = cr.nn.MLP([2, 16, 1], rng=0)
    >>> [type(layer).__name__ for layer in model]
    ['Linear', 'ReLU', 'Linear']
    >>> model(cr.ones(5, 2)).shape               # (N, 2) -> (N, 1)
    (5, 1)
    >>> type(cr.nn.MLP(2, [16, 1], rng=0)).__module__   # micrograd's signature: Values
    'chainrule.nn.scalar'
    """

    # (for type checkers: which of the two MLPs a call makes, by its first argument)
    @overload
    def __new__(cls, sizes: Integral | int, *args: Any, **kwargs: Any) -> ScalarMLP: ...
    @overload
    def __new__(cls, sizes: list[int] | tuple[int, ...], *args: Any,
                **kwargs: Any) -> "MLP": ...

    def __new__(cls, *args: Any, **kwargs: Any) -> "MLP | ScalarMLP":
        if cls is MLP and ((args and isinstance(args[0], Integral)) or "nin" in kwargs):
            return ScalarMLP(*args, **kwargs)  # micrograd's MLP(nin, nouts)
        return super().__new__(cls)

    # (mypy reads a call's arguments from __init__ alone: micrograd's signature too)
    @overload
    def __init__(self, sizes: Integral | int, *args: Any, **kwargs: Any) -> None: ...
    @overload
    def __init__(self, sizes: list[int] | tuple[int, ...], activation: str = "relu",
                 dropout: float = 0.0, init: str | None = None, rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None: ...

    def __init__(self, sizes: Any, activation: str = "relu", dropout: float = 0.0,
                 init: str | None = None, rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        sizes = list(sizes)
        if len(sizes) < 2 or not all(isinstance(n, Integral) and n > 0 for n in sizes):
            raise ValueError(f"MLP: sizes must list at least two positive ints (inputs, "
                             f"..., outputs), got {sizes}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"MLP: activation must be one of {', '.join(ACTIVATIONS)}, "
                             f"got {activation!r}")
        rng = initial_generator(rng)
        init = init or ("he" if activation in ("relu", "gelu") else "xavier")
        layers = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(Linear(a, b, init=init, rng=rng, dtype=dtype))
            if i < len(sizes) - 2:
                layers.append(ACTIVATIONS[activation]())
                if dropout:
                    layers.append(Dropout(dropout, rng=rng))
        super().__init__(*layers)
        self.sizes, self.activation, self.dropout = sizes, activation, dropout

    def architecture(self) -> dict[str, Any]:
        """What rebuilds this model (stored in checkpoints)."""
        return {"type": "MLP", "sizes": self.sizes, "activation": self.activation,
                "dropout": self.dropout}
