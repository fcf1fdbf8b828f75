"""autograd.scipy.integrate: ``odeint`` with SciPy's calling convention (extra
arguments in ``args=``), solved and differentiated by ``chainrule.scipy.integrate``."""

import numpy as _np

from ....scipy.integrate import odeint as _odeint

__all__ = ["odeint"]

# scipy.integrate.odeint's keywords that mean something to this solver; in SciPy, 0 for
# mxstep or hmax means "no limit of the caller's"
_KEYWORDS = {"rtol", "atol", "mxstep", "hmax"}


def odeint(func, y0, t, args=(), **kwargs):
    """The solution of dy/dt = func(y, t, *args) at the times t, as scipy.integrate.odeint
    (``rtol``, ``atol``, ``mxstep`` and ``hmax`` too), differentiable in y0, t and args.

    >>> ys = odeint(lambda y, t, k: -k * y, np.array([1.0]), np.array([0.0, 1.0]),
    ...             args=(0.5,))
    >>> np.round(ys, 6).tolist()                              # exp(-0.5 t)
    [[1.0], [0.606531]]
    """
    unknown = sorted(set(kwargs) - _KEYWORDS)
    if unknown:
        raise TypeError(f"odeint: keyword(s) {unknown} of scipy.integrate.odeint are not "
                        f"supported; this odeint takes {sorted(_KEYWORDS)}")
    for name in ("mxstep", "hmax"):
        if kwargs.get(name, None) == 0:
            kwargs[name] = _np.inf
    return _odeint(func, y0, t, *tuple(args), **kwargs)
