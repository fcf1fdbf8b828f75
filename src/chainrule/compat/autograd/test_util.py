"""autograd.test_util: ``check_grads`` (a function's derivatives against central
differences, in forward and reverse mode, to any order), ``combo_check`` (the same over
every combination of arguments), ``check_equivalent`` and ``scalar_close``.

Arguments and results may be floats, arrays, or tuples, lists and dicts of them; the
check is autograd's: along random directions from NumPy's global random state, with
steps of 1e-6 and agreement to 1e-6 (absolute or relative)."""

import itertools as _itertools

from ...primitive import raw
from .core import make_jvp, make_vjp, vspace
from .wrap_util import get_name, unary_to_nary

__all__ = ["check_grads", "combo_check", "check_equivalent", "scalar_close", "check_vjp",
           "check_jvp"]

_TOLERANCE = 1e-6
_STEP = 1e-6


def scalar_close(a, b):
    """Whether two numbers agree to 1e-6, absolutely or relative to their size.

    >>> from chainrule.autograd.test_util import scalar_close
    >>> scalar_close(1.0, 1.0 + 1e-9), scalar_close(1.0, 1.1)
    (True, False)
    """
    a, b = float(raw(a)), float(raw(b))
    return abs(a - b) < _TOLERANCE or abs(a - b) / abs(a + b) < _TOLERANCE


def _numeric_jvp(f, x):
    """The central difference of f at x along a direction v, as a function of v."""
    y_space, x_space = vspace(f(x)), vspace(x)

    def jvp(v):
        ahead = f(x_space.add(x, x_space.scalar_mul(v, _STEP / 2)))
        behind = f(x_space.add(x, x_space.scalar_mul(v, -_STEP / 2)))
        return y_space.scalar_mul(y_space.add(ahead, y_space.scalar_mul(behind, -1.0)),
                                  1.0 / _STEP)
    return jvp


def check_vjp(f, x):
    """f's reverse mode at x against central differences along random directions
    (AssertionError naming f if they differ)."""
    vjp, y = make_vjp(f, x)
    x_space, y_space = vspace(x), vspace(y)
    x_direction, y_direction = x_space.randn(), y_space.randn()
    # a VJP takes and gives covectors (conjugates, in a complex space), as autograd's
    exact = x_space.inner_prod(x_direction,
                               x_space.covector(vjp(y_space.covector(y_direction))))
    numeric = y_space.inner_prod(y_direction, _numeric_jvp(f, x)(x_direction))
    assert scalar_close(exact, numeric), (
        f"check_grads: derivative (VJP) check of {get_name(f)} failed at {x!r:.200}:\n"
        f"  analytic: {raw(exact)}\n  numeric:  {raw(numeric)}")


def check_jvp(f, x):
    """f's forward mode at x against central differences along a random direction."""
    direction = vspace(x).randn()
    exact = make_jvp(f, x)(direction)[1]
    numeric = _numeric_jvp(f, x)(direction)
    try:
        check_equivalent(exact, numeric)
    except AssertionError as error:
        raise AssertionError(f"check_grads: derivative (JVP) check of {get_name(f)} "
                             f"failed at {x!r:.200}: {error}") from None


def check_equivalent(x, y):
    """Assert that x and y are in the same vector space and agree along a random
    direction to 1e-6 (absolutely or relatively)."""
    x_space, y_space = vspace(x), vspace(y)
    assert x_space == y_space, f"check_equivalent: spaces differ:\n  x: {x_space}\n  y: {y_space}"
    direction = x_space.randn()
    assert scalar_close(x_space.inner_prod(x, direction), x_space.inner_prod(y, direction)), (
        f"check_equivalent: values differ:\n  x: {x!r:.300}\n  y: {y!r:.300}")


@unary_to_nary
def check_grads(f, x, modes=("fwd", "rev"), order=2):
    """``check_grads(f, argnum=0, modes=["fwd", "rev"], order=2)(*args)``: f's
    derivatives in its argument ``argnum`` (a tuple of positions checks them together)
    against central differences, up to ``order``; AssertionError naming the failing
    derivative (``vjp_f`` is the reverse mode of f) if they differ.

    >>> from chainrule.autograd.test_util import check_grads
    >>> check_grads(lambda x, y: np.sin(x) * y, argnum=(0, 1))(np.ones(3), 2.0)
    """
    unknown = [mode for mode in modes if mode not in ("fwd", "rev")]
    if unknown:
        raise ValueError(f"check_grads: modes must be 'fwd' or 'rev', got {unknown}")
    if "fwd" in modes:
        check_jvp(f, x)
        if order > 1:
            def jvp_f(x, v):
                return make_jvp(f, x)(v)[1]
            jvp_f.__name__ = f"jvp_{get_name(f)}"
            check_grads(jvp_f, (0, 1), modes, order=order - 1)(x, vspace(x).randn())
    if "rev" in modes:
        check_vjp(f, x)
        if order > 1:
            def vjp_f(x, v):
                return make_vjp(f, x)[0](v)
            vjp_f.__name__ = f"vjp_{get_name(f)}"
            check_grads(vjp_f, (0, 1), modes, order=order - 1)(x, vspace(f(x)).randn())


def combo_check(fun, *check_args, **check_kwargs):
    """``combo_check(fun, argnums, modes=..., order=...)(choices, ..., key=choices)``:
    ``check_grads`` of fun at every combination of the choices given for each
    positional argument and each keyword.

    >>> from chainrule.autograd.test_util import combo_check
    >>> combo_check(np.sum, [0])([np.ones(3), np.ones((2, 2))], axis=[None, 0])
    """
    def check_all(*choices, **keyword_choices):
        keywords = [[(key, value) for value in values]
                    for key, values in keyword_choices.items()]
        for args in _itertools.product(*choices):
            for kwargs in _itertools.product(*keywords):
                check_grads(fun, *check_args, **check_kwargs)(*args, **dict(kwargs))
    return check_all


