"""How a Tensor hands its numbers out: to Python (``item``, ``tolist``, ``float()``,
``int()``, ``bool()``, ``round()``, f-strings), to NumPy (``numpy()``, ``__array__``) and to
other libraries (the DLPack exchange, ``__dlpack__``, ``__dlpack_device__``).

``torch.tensor(t)``, ``torch.as_tensor(t)``, ``torch.from_dlpack(t)`` and
``np.from_dlpack(t)`` all ask for DLPack: torch reads no ``__array__`` of an object that
is not an ndarray, and without ``__dlpack__`` it would take a Tensor for a sequence and
walk it entry by entry. Both protocols give the numbers only: what comes out is outside
chainrule's graph, as a NumPy array given to torch is outside torch's.
"""

from typing import Any

import numpy as np

from .. import tensor_data
from ..modes import _modes
from ..origin import refuse_a_computing_conversion
from ..saved import reached

__all__ = ["TensorInterop"]


class TensorInterop:
    """A Tensor's conversions to Python's numbers, NumPy's arrays and other
    libraries' (DLPack)."""

    __slots__ = ()

    def item(self) -> Any:  # a Python float, int, bool or complex
        """The single number of a one-element tensor, as a Python number.

        >>> cr.tensor([[3.5]]).item()
        3.5
        """
        try:
            return self._array().item()
        except ValueError:  # (NumPy's words do not say how many entries there are)
            raise ValueError(f"item(): only a tensor of one entry converts to a Python "
                             f"number; this one has {self._data.size} entries (shape "
                             f"{self._data.shape})") from None

    def numpy(self) -> np.ndarray:
        """The ndarray itself (no copy), the same as ``.data``.

        >>> x = cr.tensor([1.0, 2.0])
        >>> x.numpy()
        array([1., 2.])
        >>> x.numpy() is x.data
        True
        """
        if self._prev or self._holders is not None:
            reached(self)
        return tensor_data.numpy_of(self._array())  # (torch's, Dask's: refused)

    def tolist(self) -> Any:  # a number, or nested lists of numbers
        """The values as (nested) Python lists of numbers, as ndarray.tolist.

        >>> cr.tensor([[1.0, 2.0]]).tolist()
        [[1.0, 2.0]]
        """
        return self._array().tolist()

    def __format__(self, spec):
        """A format spec applies to every entry (``f"{loss:.4f}"``, ``f"{x:.2f}"``); a
        one-entry tensor formats as its number.

        >>> f"{cr.tensor(0.123456):.3f}", f"{cr.tensor([1.0, 2.5]):.2f}"
        ('0.123', '[1.00, 2.50]')
        """
        if not spec:
            return str(self)
        data = self._array()
        if data.size == 1:
            return format(data.item(), spec)
        try:
            format(data.flat[0].item(), spec)
        except ValueError as err:
            raise TypeError(f"format: the spec {spec!r} does not apply to the entries of "
                            f"a tensor of dtype {data.dtype} ({err})") from None
        return np.array2string(data, separator=", ",
                               formatter={"all": lambda v: format(v, spec)})

    def __round__(self, ndigits=None): return round(self._array().item(), ndigits)

    def __float__(self): return float(self._array())
    def __int__(self): return int(self._array())
    def __bool__(self): return bool(self._array())

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
