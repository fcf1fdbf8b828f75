"""A model's parameters as one vector and back, as PyTorch's
``torch.nn.utils.parameters_to_vector`` and ``vector_to_parameters``: what a
second-order method or a flat optimizer works on.
"""

from collections.abc import Iterable

from ... import rules as ops
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _tensors(parameters, op):
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for p in parameters:
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: expected Tensors (a model's parameters()), got "
                            f"{type(p).__name__}")
    return parameters


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters' entries, each flattened, one after another in a 1-d Tensor; it
    is differentiable, as PyTorch's (a gradient flows back to each parameter).

    >>> layer = cr.nn.Linear(2, 1, rng=0)
    >>> cr.nn.utils.parameters_to_vector(layer.parameters()).shape    # 2 weights, 1 bias
    (3,)
    """
    flat = [ops.reshape(p, (-1,)) for p in _tensors(parameters, "parameters_to_vector")]
    return ops.concatenate(flat) if flat else Tensor([])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write the entries of the 1-d ``vec`` into the parameters, in order, as PyTorch's
    (each parameter's ``.data`` replaced: nothing is recorded).

    >>> layer = cr.nn.Linear(2, 1, rng=0)
    >>> cr.nn.utils.vector_to_parameters(cr.tensor([1.0, 2.0, 3.0]), layer.parameters())
    >>> layer.weight.data.tolist(), layer.bias.data.tolist()
    ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    params = _tensors(parameters, "vector_to_parameters")
    needed = sum(p.size for p in params)
    if vec.ndim != 1 or vec.shape[0] != needed:
        raise ValueError(f"vector_to_parameters: a vector of shape {vec.shape} for "
                         f"parameters of {needed} entries; expected ({needed},)")
    start = 0
    for p in params:
        piece = vec.data[start:start + p.size].reshape(p.shape)
        # a copy (the vector's memory stays the vector's), in the parameter's dtype
        p.data = piece.astype(p.dtype) if hasattr(piece, "astype") else piece.clone()
        start += p.size
