"""gradcheck: a function's derivatives against central differences along random
directions, in forward and reverse mode, to any order, as JAX's ``check_grads`` and
autograd's ``check_grads`` do. Public, so users check their own primitives the same way.
"""

from collections.abc import Sequence
from numbers import Real
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .functional import jvp, vjp
from ..primitive import raw as _innermost

__all__ = ["gradcheck", "GradcheckError"]


class GradcheckError(AssertionError):
    """The library's derivative and the central difference disagree (an AssertionError).

    Raised by ``gradcheck``; the message names the mode and shows both numbers.

    >>> sin = cr.primitive(lambda x: np.sin(x))
    >>> _ = sin.defvjp(lambda g, ans, x: g * cr.sin(x))     # a mistake: should be cos
    >>> _ = sin.defjvp(lambda t, ans, x: t * cr.cos(x))
    >>> try:
    ...     cr.gradcheck(sin, 1.0)
    ... except cr.GradcheckError as err:
    ...     print(str(err).splitlines()[0])
    gradcheck: reverse mode (vjp) of f disagrees with central differences:
    """


def gradcheck(f: Callable[..., Any], *inputs: ArrayLike, order: int = 2,
              modes: Sequence[str] = ("fwd", "rev"), eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, seed: int | None = 0) -> bool:
    """Check f's derivatives against central differences along random directions, in
    forward and reverse mode, up to ``order``; True if they agree, else GradcheckError.

    The inputs are floats or arrays; f must also accept them plainly (it is evaluated
    on shifted inputs for the differences). Use it to test your own ``cr.primitive``.

    >>> cr.gradcheck(lambda x: cr.sin(x) * x, np.array([0.5, 1.0]))
    True
    """
    rng = np.random.default_rng(seed)
    for i, x in enumerate(inputs):
        if np.iscomplexobj(x):  # (the float64 cast below would drop its imaginary part)
            raise TypeError(f"gradcheck: input {i} is complex ({np.asarray(x).dtype}); "
                            f"chainrule differentiates real numbers only")
    inputs = tuple(float(x) if isinstance(x, Real) else np.asarray(x, dtype=np.float64)
                   for x in inputs)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"gradcheck: modes must be 'fwd' or 'rev', got {mode!r}")
    _check_order(f, inputs, order, modes, eps, atol, rtol, rng, "f")
    return True


def _random_like(x, rng):
    return float(rng.standard_normal()) if isinstance(x, float) else np.asarray(
        rng.standard_normal(np.shape(x)))


def _shift(inputs, directions, step):
    """The inputs moved along the directions, each kept in its kind (a 0-d array stays
    an array, so it keeps to the tensor engine)."""
    return tuple(x + step * d if isinstance(x, float) else np.asarray(x + step * d)
                 for x, d in zip(inputs, directions))


def _dot(a, b):
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def _check_order(f, inputs, order, modes, eps, atol, rtol, rng, name):
    directions = tuple(_random_like(x, rng) for x in inputs)
    plus = np.asarray(_innermost(f(*_shift(inputs, directions, eps))), dtype=np.float64)
    minus = np.asarray(_innermost(f(*_shift(inputs, directions, -eps))), dtype=np.float64)
    numeric = (plus - minus) / (2 * eps)
    if "fwd" in modes:
        _, tangent = jvp(f, inputs, directions)
        _compare(np.asarray(_innermost(tangent), dtype=np.float64), numeric, atol, rtol,
                 f"forward mode (jvp) of {name}")
    if "rev" in modes:
        out, f_vjp = vjp(f, *inputs)
        u = _random_like(out if np.ndim(_innermost(out)) else 0.0, rng) \
            if np.ndim(_innermost(out)) else float(rng.standard_normal())
        grads = f_vjp(np.asarray(u) if np.ndim(_innermost(out)) else u)
        ours = sum(_dot(g, d) for g, d in zip(grads, directions))
        _compare(np.asarray(ours), np.asarray(_dot(u, numeric)), atol, rtol,
                 f"reverse mode (vjp) of {name}")
    if order > 1:
        # Each first derivative is itself checked in every mode: forward over forward,
        # reverse over forward, forward over reverse, reverse over reverse.
        if "fwd" in modes:
            _check_order(lambda *xs: jvp(f, xs, directions)[1], inputs, order - 1,
                         modes, eps, atol, rtol, rng, f"the jvp of {name}")
        if "rev" in modes:
            def pulled(*xs):
                out, f_vjp = vjp(f, *xs)
                seed = np.ones(np.shape(_innermost(out))) if np.ndim(_innermost(out)) else 1.0
                return f_vjp(seed)[0]
            _check_order(pulled, inputs, order - 1, modes, eps, atol, rtol, rng,
                         f"the vjp of {name}")


def _compare(ours, numeric, atol, rtol, what):
    if not np.allclose(ours, numeric, atol=atol, rtol=rtol):
        worst = float(np.max(np.abs(ours - numeric)))
        raise GradcheckError(f"gradcheck: {what} disagrees with central differences:\n"
                             f"  chainrule: {ours}\n  numeric:   {numeric}\n"
                             f"  largest difference {worst:.3g} (atol {atol}, rtol {rtol})")
