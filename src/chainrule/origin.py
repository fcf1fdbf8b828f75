"""Where in the user's code something happened: the first frame outside chainrule.

detect_anomaly names the line that created a tensor, cr.jit the line that read a traced
value, and NumPy's own warnings (log of a negative, an overflow) are pointed at the
user's line instead of the rule inside chainrule that called NumPy.
"""

import os
import sys
import traceback
import warnings

import numpy as np

from .primitive import raw

__all__ = ["user_frame", "user_line", "numpy_caller", "refuse_a_computing_conversion",
           "check_finite", "point_warnings_at_the_user", "warn_grad_of_a_result"]

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _outside(filename):
    return not os.path.abspath(filename).startswith(PACKAGE_DIR)


def _first_outside():
    """The innermost frame summary outside chainrule's own files (not any folder that
    happens to be called chainrule, such as a clone of this project), or None."""
    for frame in reversed(traceback.extract_stack()[:-3]):
        if _outside(frame.filename):
            return frame
    return None


def user_frame():
    """'file:line in function' of the first caller outside chainrule."""
    frame = _first_outside()
    return "unknown" if frame is None else f"{frame.filename}:{frame.lineno} in {frame.name}"


def user_line():
    """'file:line' of the innermost caller outside chainrule."""
    frame = _first_outside()
    return "unknown line" if frame is None else f"{frame.filename}:{frame.lineno}"


def numpy_caller(depth=2):
    """The NumPy function the user called that is converting an array now (the outermost
    NumPy frame of the stack, as ``vectorize.__call__``), or None."""
    frame, caller = sys._getframe(depth), None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "numpy" or module.startswith("numpy."):
            caller = frame
        elif caller is not None:
            break
        frame = frame.f_back
    if caller is None:
        return None
    code = caller.f_code
    name = getattr(code, "co_qualname", None)  # (Python 3.11+)
    if name is None:
        owner = caller.f_locals.get("self")
        name = code.co_name if owner is None else f"{type(owner).__name__}.{code.co_name}"
    return name


# NumPy's callables that compute new numbers from a converted array, through a Python
# function of the user's, without NumPy's protocols (np.apply_along_axis and the other
# array functions reach the Tensor's __array_function__, which refuses them)
_COMPUTING = ("vectorize",)


def refuse_a_computing_conversion(shape):
    """Raise if a tensor that requires grad is being converted by a NumPy function that
    computes with it (np.vectorize): the gradient would be lost, silently. Reading the
    numbers (np.asarray, plotting, np.testing) stays allowed."""
    name = numpy_caller(3)
    if name is not None and name.split(".")[0] in _COMPUTING:
        raise TypeError(
            f"np.{name}() of a tensor that requires grad (shape {shape}) computes without "
            f"its gradient, and everything computed from the result would silently get "
            f"none; write the function with chainrule's operations (cr.where for a "
            f"choice), or pass t.detach() to compute with the numbers on purpose")


def warn_grad_of_a_result(tensor):
    """Warn (UserWarning, at the user's line) that ``tensor.grad`` is read on a tensor
    an operation made, which backward() leaves without a gradient: a learner who reads
    ``y.grad`` most often meant ``x.grad``, and a silent None says nothing (PyTorch warns
    too)."""
    made = f" (the result of {tensor._op.name})" if tensor._op is not None else ""
    warnings.warn(
        f"reading .grad of a tensor an operation made{made}, which is None: backward() "
        f"fills .grad only for leaves (tensors created with requires_grad=True, such as "
        f"parameters). Read the leaf's .grad, or call .retain_grad() on this tensor "
        f"before backward() to keep its gradient too.", UserWarning, stacklevel=3)


def check_finite(array, what, origin):
    """Raise FloatingPointError if ``array`` holds a NaN or an infinity (detect_anomaly)."""
    array = raw(array)
    kind = getattr(getattr(array, "dtype", None), "kind", "f")
    if kind in "fc" and not np.isfinite(array).all():
        bad = "nan" if np.isnan(array).any() else "inf"
        where = (f"; the tensor was created at {origin}" if origin else
                 "; run the forward pass inside detect_anomaly() too, to see the line "
                 "that created the tensor")
        raise FloatingPointError(f"detect_anomaly: {what} produced {bad}{where}")


# ---------------------------------------------------------------------------------------
# NumPy's warnings at the user's line
#
# NumPy warns from C (RuntimeWarning: divide by zero encountered in log) at the Python
# line that called it, which is a rule of chainrule's. Catching warnings around every
# operation would cost each one a microsecond or two; instead, the warning is moved when
# Python is about to show or record it: told again at the first frame outside chainrule
# (with that module's "once per line" registry), and forgotten at chainrule's line, so
# that the same warning from another line of the user's is shown there too. The hook is
# warnings._showwarnmsg, which every warning passes through, also while
# warnings.catch_warnings(record=True) (and so pytest) collects them: that replaces
# showwarning, not this. Only RuntimeWarnings raised inside chainrule's files are
# touched; everything else goes on as before.
# ---------------------------------------------------------------------------------------

def point_warnings_at_the_user():
    """Install the hook (once; at import of chainrule)."""
    previous = warnings._showwarnmsg
    if getattr(previous, "_chainrule", False):
        return

    def show(msg):
        if issubclass(msg.category, RuntimeWarning) and not _outside(msg.filename):
            frame = _warning_frame(msg.filename, msg.lineno)
            user = frame
            while user is not None and not _outside(user.f_code.co_filename):
                user = user.f_back
            if user is not None:
                registry = frame.f_globals.get("__warningregistry__")
                if registry:  # judged at the user's line from now on
                    registry.pop((str(msg.message), msg.category, msg.lineno), None)
                module = user.f_globals
                warnings.warn_explicit(
                    msg.message, msg.category, user.f_code.co_filename, user.f_lineno,
                    module=module.get("__name__"),
                    registry=module.setdefault("__warningregistry__", {}))
                return
        previous(msg)

    show._chainrule = True
    warnings._showwarnmsg = show


def _warning_frame(filename, lineno):
    """The frame of chainrule's that was running NumPy when it warned (None if gone)."""
    frame = sys._getframe(2)
    while frame is not None and not (frame.f_code.co_filename == filename
                                     and frame.f_lineno == lineno):
        frame = frame.f_back
    return frame
