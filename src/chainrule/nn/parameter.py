"""The Tensors a Module holds: ``Parameter`` (trained, listed by ``parameters()``) and
``Buffer`` (state that is not trained, such as running statistics), as torch's
``torch.nn.parameter``.

>>> cr.nn.Parameter([1.0, 2.0]).requires_grad
True
"""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A Tensor that a Module trains: it requires grad and is listed by parameters().
    A parameter is a float: integer data becomes float64 (where ``cr.tensor`` keeps
    integers), unless ``dtype`` says otherwise.

    >>> w = cr.nn.Parameter([1.0, 2.0])
    >>> w
    tensor([1., 2.], requires_grad=True)
    >>> cr.nn.Parameter([1, 2]).dtype
    dtype('float64')
    """

    __slots__ = ()

    def __init__(self, data: ArrayLike, dtype: DTypeLike = None) -> None:
        super().__init__(data, dtype=dtype)
        if dtype is None and self._data.dtype.kind in "biu":
            self._data = self._data.astype(np.float64)
        self._set_requires_grad(True, "Parameter")


class Buffer(Tensor):
    """A Tensor that, set as a Module's attribute, becomes one of its buffers (as
    ``register_buffer(name, data, persistent)`` makes it), as torch's ``nn.Buffer``:
    state that is not trained, listed by ``named_buffers()`` and, unless
    ``persistent=False``, saved by ``state_dict()``. It shares ``data``'s array (an
    empty one without data) and its ``requires_grad``.

    >>> class Causal(cr.nn.Module):
    ...     def __init__(self):
    ...         self.mask = cr.nn.Buffer(cr.tril(cr.ones(2, 2)))
    ...         self.scratch = cr.nn.Buffer(cr.zeros(2), persistent=False)
    >>> model = Causal()
    >>> [name for name, b in model.named_buffers()], list(model.state_dict())
    (['mask', 'scratch'], ['mask'])
    """

    __slots__ = ("persistent",)

    def __init__(self, data: ArrayLike | None = None, *, persistent: bool = True) -> None:
        if data is None:
            data = np.empty(0)
        grad = isinstance(data, Tensor) and data.requires_grad
        super().__init__(data.data if isinstance(data, Tensor) else data,
                         requires_grad=grad)
        self.persistent = bool(persistent)

    def __reduce__(self):
        return _rebuilt_buffer, (self._data, self.requires_grad, self.persistent)


def _rebuilt_buffer(data, requires_grad, persistent):
    buffer = Buffer(np.array(data), persistent=persistent)  # (a copy, writable)
    buffer.requires_grad = requires_grad
    return buffer
