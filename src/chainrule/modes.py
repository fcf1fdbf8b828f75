"""Modes: whether operations record a graph, and whether to stop at the first NaN or inf.

Both are per thread, so one thread's no_grad() does not switch off another's training.
"""

import contextlib
import math
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

from . import arrays as xp

if TYPE_CHECKING:  # (typing.Self is Python 3.11's; type checkers bring typing_extensions)
    from typing_extensions import Self

_Function = TypeVar("_Function", bound=Callable[..., Any])

__all__ = ["no_grad", "enable_grad", "inference_mode", "is_grad_enabled",
           "detect_anomaly", "is_anomaly_enabled", "disable_jit", "is_jit_disabled"]


class _Modes(threading.local):
    grad_enabled = True
    anomaly = False
    jit_disabled = False


_modes = _Modes()

# How many mode switches are open, in any thread. The scalar engine looks at the modes
# of its thread only while one is (its nodes are small: checking the thread's modes at
# every node costs its step about 4%, this list lookup about 1%).
modes_switched = [0]
_switching = threading.Lock()


def scalar_operands(data, operands, op):
    """The operands a scalar node keeps while a mode is switched: none under no_grad;
    and under detect_anomaly, a result that is NaN or infinite raises, naming the
    operation (as for tensors)."""
    if _modes.anomaly and operands and not math.isfinite(data):
        raise FloatingPointError(f"detect_anomaly: {op} (forward) produced {data}")
    return operands if _modes.grad_enabled else ()


def is_grad_enabled() -> bool:
    """True unless inside ``no_grad()``: operations record their operands for backward.

    >>> cr.is_grad_enabled()
    True
    >>> with cr.no_grad():
    ...     print(cr.is_grad_enabled())
    False
    """
    return _modes.grad_enabled


def is_anomaly_enabled():
    """True inside ``detect_anomaly()``."""
    return _modes.anomaly


def is_jit_disabled() -> bool:
    """True inside ``disable_jit()``: a ``cr.jit`` function runs its Python, eagerly.

    >>> cr.is_jit_disabled()
    False
    """
    return bool(modes_switched[0]) and _modes.jit_disabled


class _SwitchMode(contextlib.ContextDecorator):
    """A context manager that is also a decorator, and restores the previous setting."""

    attribute: str = ""
    value: Any = None

    # For type checkers: no_grad() is a context manager (and a decorator), and
    # @no_grad without parentheses gives back the function, decorated. (mypy flags a
    # __new__ that returns something other than an instance, yet reads the overload.)
    @overload
    def __new__(cls, function: None = None) -> "Self": ...
    @overload
    def __new__(cls, function: _Function) -> _Function: ...  # type: ignore[misc]

    def __new__(cls, function=None):
        mode = super().__new__(cls)
        # @no_grad without parentheses decorates the function directly.
        return mode(function) if callable(function) else mode

    def __enter__(self) -> "Self":
        self._previous = getattr(_modes, self.attribute)
        setattr(_modes, self.attribute, self.value)
        with _switching:
            modes_switched[0] += 1
        self._section = None  # (cr.jit's recorder, the part to name again on the way out)
        if xp.recorders_open[0] and self.attribute == "grad_enabled" and \
                self._previous != self.value:
            trace = xp.recorder()
            if trace is not None:  # the program's listing names this part
                part = "forward" if self.value else "no_grad"
                self._section = (trace, trace.mark(part, switch=True))
        return self

    def __exit__(self, *exc: object) -> None:  # (None: an exception goes on up)
        setattr(_modes, self.attribute, self._previous)
        with _switching:
            modes_switched[0] -= 1
        if self._section is not None:
            trace, section = self._section
            trace.mark(section)

    def _recreate_cm(self):  # a fresh one per call when used as a decorator (re-entrant)
        return type(self)()


class no_grad(_SwitchMode):
    """Inside it, operations record no graph: for evaluation and for updating weights.

    A context manager, or a decorator (with or without parentheses); the setting is
    per thread, and restored on the way out.

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> with cr.no_grad():
    ...     y = x * 2
    >>> y.requires_grad, (x * 2).requires_grad
    (False, True)
    >>> @cr.no_grad
    ... def predict(x):
    ...     return x * 2
    >>> predict(x).requires_grad
    False
    """

    attribute, value = "grad_enabled", False


class inference_mode(no_grad):
    """PyTorch's name for running a model without recording: the same as ``no_grad()``
    (chainrule has no separate kind of inference tensor). ``inference_mode(False)``
    changes nothing, as in PyTorch. A context manager or a decorator.

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> with cr.inference_mode():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    mode = True  # (@inference_mode without parentheses never sets it)

    @overload
    def __new__(cls, mode: bool = True) -> "Self": ...
    @overload
    def __new__(cls, mode: _Function) -> _Function: ...  # type: ignore[misc]

    def __new__(cls, mode=True):
        made = super().__new__(cls, mode)
        if isinstance(made, inference_mode):
            made.mode = bool(mode)
        return made

    def __enter__(self) -> "Self":
        self.value = False if self.mode else _modes.grad_enabled
        return super().__enter__()

    def _recreate_cm(self):
        return type(self)(self.mode)


class enable_grad(_SwitchMode):
    """Switches recording back on inside a ``no_grad()`` block (also a decorator).

    >>> x = cr.tensor(1.0, requires_grad=True)
    >>> with cr.no_grad():
    ...     with cr.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    attribute, value = "grad_enabled", True


class detect_anomaly(_SwitchMode):
    """Inside it, the first operation that makes a NaN or an infinity, in the forward
    or the backward pass, raises ``FloatingPointError`` naming the operation and the
    line of your code that created the tensor.

    Slower: for hunting bugs. Also a decorator.

    >>> x = cr.tensor([1.0, 0.0], requires_grad=True)
    >>> with cr.detect_anomaly():
    ...     y = cr.log(x)                 # log(0) = -inf
    Traceback (most recent call last):
    ...
    FloatingPointError: detect_anomaly: log (forward) produced inf; the tensor was created at ...
    """

    attribute, value = "anomaly", True


class disable_jit(_SwitchMode):
    """Inside it, a ``cr.jit`` function runs as plain Python (``jax.disable_jit``): a
    ``print`` shows numbers, a debugger stops inside, nothing is traced or replayed.
    ``disable_jit(False)`` switches it back on inside an outer one. Also a decorator.

    >>> f = cr.jit(lambda x: print("running", x) or x * 2)
    >>> with cr.disable_jit():
    ...     f(1.0), f(2.0)
    running 1.0
    running 2.0
    (2.0, 4.0)
    """

    attribute, value = "jit_disabled", True

    @overload
    def __new__(cls, disable: bool = True) -> "Self": ...
    @overload
    def __new__(cls, disable: _Function) -> _Function: ...  # type: ignore[misc]

    def __new__(cls, disable=True):
        mode = object.__new__(cls)
        if callable(disable):
            return mode(disable)
        mode.value = bool(disable)
        return mode

    def _recreate_cm(self):
        return type(self)(self.value)
