"""How a Tensor hands its numbers to other libraries: NumPy's ``__array__`` and the
DLPack exchange (``__dlpack__``, ``__dlpack_device__``).

``torch.tensor(t)``, ``torch.as_tensor(t)``, ``torch.from_dlpack(t)`` and
``np.from_dlpack(t)`` all ask for DLPack: torch reads no ``__array__`` of an object that
is not an ndarray, and without ``__dlpack__`` it would take a Tensor for a sequence and
walk it entry by entry. Both protocols give the numbers only: what comes out is outside
chainrule's graph, as a NumPy array given to torch is outside torch's.
"""

from typing import Any

from .. import tensor_data
from ..modes import _modes
from ..origin import refuse_a_computing_conversion
from ..saved import reached

__all__ = ["TensorInterop"]


class TensorInterop:
    """A Tensor's conversions to NumPy's arrays and to other libraries' (DLPack)."""

    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        if self._prev or self._holders is not None:
            reached(self)
        if self.requires_grad and _modes.grad_enabled:  # (np.vectorize: lost gradients)
            refuse_a_computing_conversion(self._data.shape)
        data = tensor_data.numpy_of(self._array(), "np.asarray")
        if dtype is not None and dtype != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None
                   ) -> Any:  # a PyCapsule
        """The array as a DLPack capsule, for ``torch.from_dlpack(t)``,
        ``np.from_dlpack(t)`` and ``torch.tensor(t)``: the array's own ``__dlpack__``
        (NumPy's, or that of the library whose array the tensor holds), given the same
        arguments.

        The result **shares memory** with the tensor (unless ``copy=True``) and is
        **outside the graph**: a detached view of the numbers, as torch's
        ``from_dlpack`` of ``x.detach()`` would be. An array a recorded graph saved is
        exported read-only (DLPack's flag; a consumer that asks for the older protocol
        gets a BufferError): writing into it through the other library would change
        the gradient that backward computes.

        >>> import torch
        >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> y = torch.from_dlpack(x)          # the same memory, outside both graphs
        >>> y, y.requires_grad
        (tensor([1., 2., 3.], dtype=torch.float64), False)
        >>> np.from_dlpack(x).tolist()
        [1.0, 2.0, 3.0]
        """
        if self._prev or self._holders is not None:
            reached(self)  # (a result's array is locked while its graph can be walked)
        array = tensor_data.users(self._array())
        asked = {"stream": stream, "max_version": max_version, "dl_device": dl_device,
                 "copy": copy}
        # Only what the consumer passed: an older producer takes fewer keywords.
        return array.__dlpack__(**{k: v for k, v in asked.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        """Where the array lives, as DLPack names devices: ``(1, 0)`` is the CPU (the
        device of a NumPy array; another library's array says its own).

        >>> cr.tensor([1.0, 2.0]).__dlpack_device__()
        (1, 0)
        """
        return tuple(tensor_data.users(self._array()).__dlpack_device__())
