"""What cr.jit refuses while tracing: the errors a traced function meets.

A program replays NumPy calls, so what would leave them raises while tracing, naming
what the function did: a traced value turned into a Python bool, int or float (an ``if``
on data), or into a plain NumPy array (``np.asarray``); a traced value used after its
trace ended, or written into an array made outside the trace; a Value (the scalar
engine), whose operations are Python's and no NumPy call records. The traced array
(``traced.py``) and the recorder (``recording.py``) raise these, and ``jitted.py`` and
``loops.py`` catch them and raise them on: they are a file of their own, which each of
those imports without importing another for its errors.
"""

__all__ = ["TracingError", "ValueTracingError", "values_refused"]


class TracingError(TypeError):
    """A traced function did what a program cannot replay (see the message)."""


class ValueTracingError(TracingError):
    """A Value met while tracing: its operations are Python's, one number at a time,
    and no NumPy call records them."""


def values_refused():
    return ValueTracingError(
        "cr.jit and cr.make_program cannot trace a Value: Values are the scalar engine, "
        "whose operations run in Python one number at a time, not as NumPy calls a "
        "program can hold; use Tensors (cr.tensor, nn.Linear) instead")
