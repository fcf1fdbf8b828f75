"""A Tensor over another library's array: ``cr.tensor(torch_tensor, requires_grad=True)``.

The tensor engine records operations on whatever array its Tensors hold; the rules
compute with NumPy's functions, which ``chainrule.backends.ForeignArray`` runs in the
library of the array it wraps (see docs/backends.md). So a Tensor made from a torch
tensor holds a ForeignArray, computes in torch, and ``backward()`` fills ``.grad`` with
torch's numbers. This module is the boundary, for tensor.py:

* ``adopted``: the array a Tensor holds for another library's array (a copy, as for a
  NumPy array, of its dtype);
* ``users``: what ``.data`` and ``.grad`` give: the library's own array, never the
  wrapper;
* ``seed``: the gradient ``backward()`` starts from, in the library;
* ``numpy_of`` and ``text``: ``.numpy()`` refuses (a GPU's array would be copied,
  a Dask graph computed), and ``repr`` shows the library's own.

NumPy's Tensors meet none of it beyond one type check where a value crosses the
boundary (``.data =``, ``.grad =``, ``backward()``), never per operation.
"""

from typing import Any

import numpy as np

from . import libraries
from .arrays import as_array

__all__ = ["foreign", "adopted", "users", "seed", "numpy_of", "for_update",
           "zeros_like", "text"]


def foreign(array: Any) -> bool:
    """Whether a Tensor's array is another library's (a ``ForeignArray``).

    >>> foreign(np.ones(2))
    False
    """
    if type(array) is np.ndarray:
        return False
    return libraries.wrapped(array)


def adopted(data: Any, dtype: Any) -> Any:
    """The array a Tensor holds for ``data``, an array of another library (torch, CuPy,
    Dask): a copy of it in its library, of its dtype (integers stay integers, as for a
    NumPy array) or ``dtype``; None if ``data`` is no Array API array (pandas: NumPy's
    path takes it).

    >>> import torch
    >>> adopted(torch.tensor([1, 2]), None)
    ForeignArray(tensor([1, 2]))
    """
    lib = libraries.library_of(data)
    if lib is None:
        return None
    copy = lib.ns.asarray(data, copy=True) if dtype is None else lib.ns.astype(
        data, lib.dtype(dtype))
    return lib.adopt(copy)


def users(array: Any) -> Any:
    """What ``.data`` and ``.grad`` give for a Tensor's array: the array itself, or for
    another library's, that library's array (a user never holds the wrapper).

    >>> users(None) is None
    True
    """
    return array if type(array) is np.ndarray else libraries.unwrapped(array)


def seed(data: Any, gradient: Any) -> Any:
    """The gradient ``backward()`` starts from for an output holding ``data`` (another
    library's array): ones, or ``gradient`` (of that library, or NumPy's), in the
    library and dtype of the output.

    >>> import torch
    >>> from chainrule.backends import library_of
    >>> out = library_of(torch.ones(1)).adopt(torch.ones(1))
    >>> seed(out, None)
    ForeignArray(tensor([1.]))
    """
    if gradient is None:
        if data.size != 1:
            raise RuntimeError(
                f"backward: the output has shape {data.shape}, not a scalar; pass "
                f"gradient= (an array of that shape) or reduce the output first, e.g. "
                f"y.sum().backward()")
        return np.ones_like(data)
    gradient = data._lib.adopt(gradient)
    if not foreign(gradient):  # (a NumPy array, a list, a number)
        gradient = data._owned(np.asarray(gradient, dtype=data.dtype))
    if gradient.shape != data.shape:
        raise ValueError(f"backward: gradient has shape {gradient.shape}, expected the "
                         f"output's shape {data.shape}")
    return as_array(gradient, data.dtype)


def numpy_of(array: Any, what: str = "numpy()") -> Any:
    """What ``.numpy()`` (or ``what``: ``np.asarray``) gives for a Tensor's array: a
    NumPy array itself; another library's is refused (a GPU's array would be copied, a
    Dask graph computed).

    >>> import torch
    >>> from chainrule.backends import library_of
    >>> numpy_of(library_of(torch.ones(1)).adopt(torch.ones(1)))
    Traceback (most recent call last):
    TypeError: numpy(): this tensor holds a torch array, which is not turned into a NumPy array behind your back; .data is the torch array (convert it with torch's own function)
    """
    if not foreign(array):
        return array
    name = array._lib.name
    raise TypeError(f"{what}: this tensor holds a {name} array, which is not turned into "
                    f"a NumPy array behind your back; .data is the {name} array (convert "
                    f"it with {name}'s own function)")


def for_update(array: Any, data: Any, grad: Any) -> tuple[Any, Any]:
    """``(data, grad)`` of a parameter holding ``array``, as an optimizer computes its
    update: as they are for a NumPy array; for another library's, as the rules see
    them (wrapped), so the optimizer's NumPy calls run in that library.

    >>> for_update(np.ones(1), np.ones(1), np.zeros(1))
    (array([1.]), array([0.]))
    """
    if not foreign(array):
        return data, grad
    return array, array._lib.adopt(grad)


def zeros_like(tensor: Any) -> Any:
    """Zeros of a Tensor's shape and dtype in its array's library, as its ``.grad``
    (``zero_grad(set_to_none=False)``): a torch tensor's are torch's, never NumPy's.

    >>> import chainrule as cr, torch
    >>> zeros_like(cr.tensor(torch.ones(2)))
    ForeignArray(tensor([0., 0.]))
    """
    if foreign(tensor._data):  # (the wrapper hands np.zeros_like to its library)
        return np.zeros_like(tensor._data)
    return np.zeros_like(tensor.data)


def text(array: Any) -> str:
    """The body of a Tensor's repr: NumPy's printing, or the library's own repr.

    >>> text(np.array([1.0, 2.0]))
    '[1., 2.]'
    """
    if foreign(array):
        return repr(array._value)
    return np.array2string(array, separator=", ", prefix="tensor(")
