"""autograd.builtins: the containers autograd traces through, and ``isinstance`` and
``type`` that look through a traced value to the plain one inside (``isinstance(x,
np.ndarray)`` holds for a traced array). chainrule's transforms take Python's own
tuples, lists and dicts, so those are Python's.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.builtins import isinstance
    >>> grad(lambda x: x.sum() if isinstance(x, np.ndarray) else x)(np.ones(2))
    array([1., 1.])
"""

import builtins as _python

from ...primitive import raw as _raw

dict, list, tuple = _python.dict, _python.list, _python.tuple

__all__ = ["dict", "isinstance", "list", "tuple", "type"]


def isinstance(obj, classinfo):  # noqa: A001
    """Python's ``isinstance`` of the plain value inside ``obj``."""
    return _python.isinstance(_raw(obj), classinfo)


def type(obj):  # noqa: A001
    """Python's ``type`` of the plain value inside ``obj``."""
    return _python.type(_raw(obj))
