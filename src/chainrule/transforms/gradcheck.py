"""gradcheck: a function's derivatives against central differences along random
directions, in forward and reverse mode, to any order, as JAX's ``check_grads`` and
autograd's ``check_grads`` do. Public, so users check their own primitives the same way.

Complex numbers as JAX checks them: a complex input is moved along random real
directions, then along random imaginary ones (a rule can be right along one and wrong
along the other: a missing conjugate is); the VJP is paired with the differences as
Re(sum(c t)), JAX's convention (docs/conventions.md).
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

    The inputs are floats or arrays, real or complex (complex ones are moved along
    real, then imaginary directions); f must also accept them plainly (it is evaluated
    on shifted inputs for the differences). Use it to test your own ``cr.primitive``.

    >>> cr.gradcheck(lambda x: cr.sin(x) * x, np.array([0.5, 1.0]))
    True
    >>> cr.gradcheck(lambda z: cr.abs(z) ** 2 + cr.exp(z), np.array([0.5 + 1j, -1j]))
    True
    """
    inputs = tuple(complex(x) if isinstance(x, complex) else float(x) if isinstance(x, Real)
                   else _numbers(x) for x in inputs)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"gradcheck: modes must be 'fwd' or 'rev', got {mode!r}")
    parts = (1.0, 1j) if any(np.iscomplexobj(x) for x in inputs) else (1.0,)
    for part in parts:  # real directions, then imaginary ones (complex inputs)
        rng = np.random.default_rng(seed)
        _check_order(f, inputs, order, modes, eps, atol, rtol, rng, "f", part)
    return True


def _numbers(x):
    """x as an array of float64, or of complex128 if it holds complex numbers."""
    return np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)


def _random_like(x, rng, part=1.0):
    """A random direction for x: real, or ``part`` (1 or 1j) times one for a complex x."""
    scale = part if np.iscomplexobj(x) else 1.0
    if isinstance(x, (float, complex)):
        return complex(scale * rng.standard_normal()) if np.iscomplexobj(x) \
            else float(rng.standard_normal())
    return np.asarray(scale * rng.standard_normal(np.shape(x)))


def _random_cotangent(out, rng):
    """A random cotangent for out: complex (both parts random) for a complex out."""
    shape = np.shape(out)
    u = rng.standard_normal(shape)
    if np.iscomplexobj(out):
        u = u + 1j * rng.standard_normal(shape)
        return np.asarray(u) if shape else complex(u)
    return np.asarray(u) if shape else float(u)


def _shift(inputs, directions, step):
    """The inputs moved along the directions, each kept in its kind (a 0-d array stays
    an array, so it keeps to the tensor engine)."""
    return tuple(x + step * d if isinstance(x, (float, complex)) else np.asarray(x + step * d)
                 for x, d in zip(inputs, directions))


def _dot(a, b):
    """JAX's pairing of a cotangent with a tangent, Re(sum(a b)): sum(a b) for reals."""
    return float(np.real(np.sum(_numbers(a) * _numbers(b))))


def _check_order(f, inputs, order, modes, eps, atol, rtol, rng, name, part=1.0):
    directions = tuple(_random_like(x, rng, part) for x in inputs)
    plus = _numbers(_innermost(f(*_shift(inputs, directions, eps))))
    minus = _numbers(_innermost(f(*_shift(inputs, directions, -eps))))
    numeric = (plus - minus) / (2 * eps)
    along = " along imaginary directions" if part == 1j else ""
    if "fwd" in modes:
        _, tangent = jvp(f, inputs, directions)
        _compare(_numbers(_innermost(tangent)), numeric, atol, rtol,
                 f"forward mode (jvp) of {name}{along}")
    if "rev" in modes:
        out, f_vjp = vjp(f, *inputs)
        u = _random_cotangent(_innermost(out), rng)
        grads = f_vjp(u)
        ours = sum(_dot(g, d) for g, d in zip(grads, directions))
        _compare(np.asarray(ours), np.asarray(_dot(u, numeric)), atol, rtol,
                 f"reverse mode (vjp) of {name}{along}")
    if order > 1:
        # Each first derivative is itself checked in every mode: forward over forward,
        # reverse over forward, forward over reverse, reverse over reverse.
        if "fwd" in modes:
            _check_order(lambda *xs: jvp(f, xs, directions)[1], inputs, order - 1,
                         modes, eps, atol, rtol, rng, f"the jvp of {name}", part)
        if "rev" in modes:
            def pulled(*xs):
                out, f_vjp = vjp(f, *xs)
                out = _innermost(out)  # (a seed of ones, complex for a complex output)
                one = complex(1.0) if np.iscomplexobj(out) else 1.0
                return f_vjp(np.full(np.shape(out), one) if np.ndim(out) else one)[0]
            _check_order(pulled, inputs, order - 1, modes, eps, atol, rtol, rng,
                         f"the vjp of {name}", part)


def _compare(ours, numeric, atol, rtol, what):
    if not np.allclose(ours, numeric, atol=atol, rtol=rtol):
        worst = float(np.max(np.abs(ours - numeric)))
        raise GradcheckError(f"gradcheck: {what} disagrees with central differences:\n"
                             f"  chainrule: {ours}\n  numeric:   {numeric}\n"
                             f"  largest difference {worst:.3g} (atol {atol}, rtol {rtol})")
