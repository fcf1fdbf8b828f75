"""The engine's one door to other array libraries (torch, CuPy, Dask: ``chainrule.backends``).

``import chainrule`` imports no other array library, and NumPy's path pays nothing for
them: ``chainrule.backends`` is imported here, at the first array of another library an
operation, a transform or cr.jit meets, and nowhere else in the engine. Every engine
module that must tell such an array apart, or hand one on, asks this module.
"""

import sys
from typing import Any

__all__ = ["wrapped", "unwrapped", "library_of", "library_among", "one_library",
           "mixed_libraries", "foreign_call"]


def wrapped(x: Any) -> bool:
    """Whether x is an array of another library the engine wrapped (a ``ForeignArray``).
    Until the first such array there is none to meet, and nothing is imported to ask.

    >>> import numpy as np
    >>> wrapped(np.ones(2))
    False
    """
    module = sys.modules.get("chainrule.backends.foreign")
    return module is not None and type(x) is module.ForeignArray


def unwrapped(x: Any) -> Any:
    """x as a user holds it: for a ``ForeignArray``, the library's own array (a user
    never holds the wrapper the engine computes with); anything else as it is.

    >>> import numpy as np
    >>> unwrapped(np.ones(2)).tolist()
    [1.0, 1.0]
    """
    return x._value if wrapped(x) else x


def library_of(x: Any) -> Any:
    """The ``Library`` that runs x (torch's, CuPy's, Dask's...), or None for an array
    no library of chainrule.backends takes (a NumPy array, a pandas frame)."""
    from .backends import library_of
    return library_of(x)


def library_among(values: list, what: str) -> Any:
    """The one library among ``values`` besides NumPy, or None; a ValueError names
    ``what`` if they mix two."""
    from .backends import library_among
    return library_among(values, what)


def one_library(kinds: list, what: str) -> Any:
    """The one library among a transform's kinds of inputs (a ValueError names ``what``
    if they mix two)."""
    from .backends import one_library
    return one_library(kinds, what)


def mixed_libraries(first: Any, second: Any, what: str) -> Exception:
    """The error for arrays of two libraries met in ``what``."""
    from .backends import mixed_libraries
    return mixed_libraries(first, second, what)


def foreign_call(prim: Any, args: tuple, kwargs: dict, foreign: Any, traced: bool,
                 refusal: str) -> Any:
    """An operation among whose arguments is an array of another library, run in that
    library (``refusal``: the error for an array no library takes)."""
    from .backends import foreign_call
    return foreign_call(prim, args, kwargs, foreign, traced, refusal)
