"""The engine on arrays of other libraries: PyTorch, CuPy, Dask, array-api-strict.

``cr.grad(loss)(torch.tensor(w), torch.tensor(X), torch.tensor(y))`` gives a torch
tensor: the rules computed with torch's functions, on its device, in its dtype. How:

* ``library.py``: a ``Library`` is a namespace (``array_api_compat``), a device, and
  the dtypes both ways; ``library_of(x)`` finds the one of an array.
* ``foreign.py``: ``ForeignArray`` holds an array of such a library and behaves as an
  ndarray in the rules. NumPy hands it every call a rule makes (as it does cr.jit's
  traced array), and it makes each call in its library's namespace.
* ``translate.py``: NumPy's calls, as the namespace makes them: ufuncs in
  ``ufuncs.py``, functions in ``functions.py`` (the table), ``x[i]`` in ``indexing.py``.
* ``shims.py``: what the standard lacks (einsum, erf, scatters with repeated indices, tril, ...).
* ``dask_linalg.py``: NumPy's linear algebra where Dask's is narrower.

A transform wraps its inputs (``adopt``) and unwraps its results (``Library.result``);
``Primitive.__call__`` wraps an array of a library that meets a traced value
(``foreign_call``). NumPy's own path meets none of this. ``import chainrule`` imports
no backend: this package is imported the first time an array of another library
reaches the engine.
"""

from typing import Any

import numpy as np

from .foreign import ForeignArray
from .library import Library, library_of, mixed_libraries

__all__ = ["ForeignArray", "Library", "library_of", "mixed_libraries", "foreign_call",
           "one_library", "library_among"]


def foreign_call(prim: Any, args: tuple, kwargs: dict, foreign: Any, traced: bool,
                 refusal: str) -> Any:
    """``prim(*args, **kwargs)`` where ``foreign`` (an argument) is an array of another
    library: its arguments of that library (keyword ones too) wrapped; the result
    unwrapped unless a traced value (``traced``) keeps it in a graph. ``refusal`` is
    the error for an array type that is not an Array API array (pandas, xarray) among
    traced values.

    >>> import torch, chainrule as cr
    >>> cr.exp(torch.zeros(2, dtype=torch.float64))
    tensor([1., 1.], dtype=torch.float64)
    """
    lib = foreign._lib if type(foreign) is ForeignArray else library_of(foreign)
    if lib is None:  # (pandas, xarray: their own result outside a graph, as before)
        if not traced:
            return prim.forward(*args, **kwargs)
        raise TypeError(refusal)
    args = [lib.adopt(a) for a in args]
    if kwargs:  # (a keyword parameter of the library: f(x, w=t) of a cr.primitive)
        kwargs = {key: lib.adopt(value) for key, value in kwargs.items()}
        if not any(a is foreign for a in args):
            # the library's array is a keyword's alone (getitem(zeros, index=(torch's
            # order,))): NumPy's arrays become the library's, which NumPy cannot index
            args = [lib.wrap(lib.from_numpy(a)) if type(a) is np.ndarray else a
                    for a in args]
    result = prim(*args, **kwargs)
    if traced or type(foreign) is ForeignArray:  # (in a graph, or inside the engine)
        return result
    return lib.unwrapped(result)


def one_library(kinds: list, what: str) -> "Library | None":
    """The one Library among a transform's input kinds (None if there is none); an
    error naming both if there are two.

    >>> one_library(["array", "float"], "grad") is None
    True
    """
    found = None
    for kind in kinds:
        if isinstance(kind, Library):
            if found is not None and kind is not found:
                raise mixed_libraries(found, kind, what)
            found = kind
    return found


def library_among(values: list, what: str) -> "Library | None":
    """The one Library of the arrays among ``values`` (None if there is none); an
    error naming both if there are two.

    >>> import torch
    >>> library_among([1.0, torch.ones(2)], "vmap").name
    'torch'
    """
    return one_library([library_of(value) for value in values], what)
