"""torch's ``nn.utils.parametrizations``: weight normalisation and spectral normalisation
as parametrizations (``parametrize.register_parametrization``), with torch's keys and
numbers, so a torch checkpoint of such a layer loads as it is; and the older
``nn.utils.weight_norm`` / ``remove_weight_norm``, which keep ``weight_g`` and
``weight_v`` on the layer itself.

* ``weight_norm``: weight = g * v / ||v||, the norm over every axis but ``dim``
  (Salimans and Kingma, 2016); ``original0`` is g, ``original1`` is v.
* ``spectral_norm``: weight = W / sigma(W), sigma the largest singular value of W
  reshaped to a matrix (its ``dim`` axis the rows), estimated by power iteration:
  ``n_power_iterations`` steps each time the weight is read in training, on vectors
  ``_u`` and ``_v`` kept as buffers (Miyato et al., 2018). The vectors are constants
  to the derivative, as torch's.

>>> from chainrule.nn.utils.parametrizations import weight_norm
>>> layer = weight_norm(cr.nn.Linear(3, 2, rng=0))
>>> sorted(layer.state_dict())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from typing import Any

import numpy as np

from ... import arrays as xp
from ... import rules as ops
from ...api.torch_random import default_generator
from ...modes import no_grad
from ...primitive import raw
from ..module import Module, Parameter
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except(v, dim):
    """||v|| over every axis but ``dim`` (kept, size 1 elsewhere); None: over all."""
    if dim is None:
        return ops.sqrt(ops.sum(v * v))
    shape = np.shape(raw(v))
    axes = tuple(a for a in range(len(shape)) if a != dim % len(shape))
    return ops.sqrt(ops.sum(v * v, axis=axes, keepdims=True))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        self.dim = dim

    def forward(self, weight_g: Any, weight_v: Any) -> Any:
        return weight_v * (weight_g / _norm_except(weight_v, self.dim))

    def right_inverse(self, weight: Any) -> tuple[Any, Any]:
        numbers = np.asarray(raw(weight))
        return np.asarray(raw(_norm_except(numbers, self.dim))), numbers.copy()


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as g * v / ||v|| (torch's
    ``parametrizations.weight_norm``): ``dim`` is the axis kept by the norm (0: one g
    per output), None one norm for all. Returns the module.

    >>> layer = weight_norm(cr.nn.Linear(3, 2, rng=0))
    >>> layer.parametrizations.weight.original0.shape        # g: one per output row
    (2, 1)
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    _buffer_names = ("_u", "_v")

    def __init__(self, weight: Any, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        numbers = np.asarray(raw(weight))
        ndim = numbers.ndim
        if not -ndim <= dim < ndim:
            raise ValueError(f"spectral_norm: dim {dim} is not an axis of a weight of "
                             f"shape {numbers.shape}")
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: n_power_iterations must be positive, got "
                             f"{n_power_iterations}")
        self.dim = dim % ndim if ndim else 0
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            matrix = self._matrix(numbers)
            h, w = matrix.shape
            u = default_generator.normal(size=h).astype(numbers.dtype)
            v = default_generator.normal(size=w).astype(numbers.dtype)
            self._u, self._v = self._normalized(u), self._normalized(v)
            self._power_method(matrix, 15)
        else:
            self._u = self._v = None

    def _normalized(self, x):
        return x / xp.maximum(xp.sqrt(xp.sum(x * xp.conj(x)).real), self.eps)

    def _matrix(self, weight):
        """The weight as a matrix, its ``dim`` axis the rows (NumPy or chainrule)."""
        if self.dim != 0:
            order = (self.dim,) + tuple(a for a in range(np.ndim(raw(weight)))
                                        if a != self.dim)
            weight = ops.transpose(weight, order) if not isinstance(weight, np.ndarray) \
                else weight.transpose(order)
        rows = np.shape(raw(weight))[0]
        return ops.reshape(weight, (rows, -1)) if not isinstance(weight, np.ndarray) \
            else weight.reshape(rows, -1)

    def _power_method(self, matrix, steps):
        # in place, so that the buffers (and a loaded checkpoint's) move on; cr.jit
        # records the writes into them
        for _ in range(steps):
            xp.copyto(self._u, self._normalized(xp.matmul(matrix, self._v)))
            xp.copyto(self._v, self._normalized(xp.matmul(xp.conj(matrix).T, self._u)))

    def forward(self, weight: Any) -> Any:
        if np.ndim(raw(weight)) == 1:
            return weight / ops.maximum(ops.sqrt(ops.sum(weight * weight)), self.eps)
        matrix = self._matrix(weight)
        if self.training:
            with no_grad():
                self._power_method(raw(matrix), self.n_power_iterations)
        u, v = xp.array(self._u, copy=True), xp.array(self._v, copy=True)
        sigma = ops.sum(xp.conj(u) * ops.matmul(matrix, v))
        return weight / sigma

    def right_inverse(self, value: Any) -> Any:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as W / sigma(W) (torch's
    ``parametrizations.spectral_norm``): sigma by ``n_power_iterations`` of power
    iteration per read in training; ``dim`` the rows of the matrix (None: 1 for a
    transposed convolution, 0 otherwise). Returns the module.

    >>> layer = spectral_norm(cr.nn.Linear(4, 3, rng=0))
    >>> sigma = np.linalg.svd(layer.weight.data, compute_uv=False)[0]
    >>> bool(abs(sigma - 1) < 1e-6)                          # after 15 + 1 iterations
    True
    """
    weight = vars(module).get(name)
    if not isinstance(weight, Parameter):
        raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter "
                         f"{name!r}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# --- the older form: weight_g and weight_v on the layer itself --------------------------

def _legacy_property(name, dim):
    def get(module):
        return getattr(module, name + "_v") * (getattr(module, name + "_g")
                                               / _norm_except(getattr(module, name + "_v"),
                                                              dim))
    return property(get)


def legacy_weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """torch's older ``nn.utils.weight_norm``: ``module.<name>`` becomes g * v / ||v||
    from two Parameters on the layer, ``<name>_g`` and ``<name>_v`` (their state_dict
    keys, as torch's). Returns the module.

    >>> layer = legacy_weight_norm(cr.nn.Linear(3, 2, rng=0))
    >>> sorted(layer.state_dict())
    ['bias', 'weight_g', 'weight_v']
    """
    weight = vars(module).get(name)
    if not isinstance(weight, Parameter):
        raise ValueError(f"weight_norm: {type(module).__name__} has no parameter {name!r}")
    if hasattr(type(module), "_weight_norm_names"):
        raise ValueError(f"weight_norm: {type(module).__name__} already has weight_norm "
                         f"on {type(module)._weight_norm_names}")
    numbers = np.asarray(raw(weight))
    g = np.asarray(raw(_norm_except(numbers, dim)))
    del module.__dict__[name]
    setattr(module, name + "_g", Parameter(g, dtype=numbers.dtype))
    setattr(module, name + "_v", Parameter(numbers.copy(), dtype=numbers.dtype))
    cls = type(module)
    module.__class__ = type(cls.__name__, (cls,), {
        name: _legacy_property(name, dim), "_weight_norm_names": (name,),
        "__qualname__": cls.__qualname__, "__module__": cls.__module__})
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo the older ``nn.utils.weight_norm``: ``<name>`` a Parameter again, holding
    g * v / ||v||. Returns the module.

    >>> layer = remove_weight_norm(legacy_weight_norm(cr.nn.Linear(3, 2, rng=0)))
    >>> sorted(layer.state_dict())
    ['bias', 'weight']
    """
    names = getattr(type(module), "_weight_norm_names", ())
    if name not in names:
        raise ValueError(f"remove_weight_norm: weight_norm of {name!r} not found in "
                         f"{type(module).__name__}")
    with no_grad():
        value = np.array(raw(getattr(module, name)))
    del module.__dict__[name + "_g"], module.__dict__[name + "_v"]
    module.__class__ = type(module).__bases__[0]
    module.__dict__[name] = Parameter(value, dtype=value.dtype)
    return module
