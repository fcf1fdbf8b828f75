"""``jax.test_util.check_grads``, as ``chainrule.test_util.check_grads``: a function's
derivatives, checked against finite differences up to a given order.

Forward mode (``"fwd"``): ``cr.jvp`` along a random tangent must match the central
difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``. Reverse mode (``"rev"``): ``cr.vjp``
of a random cotangent ``c`` must satisfy ``<vjp(c), t> = <c, jvp(t)>``, the jvp by finite
differences. Higher orders check the jvp (and the vjp) functions themselves, as JAX's
does. Arguments and results are pytrees of float arrays or numbers; a failure raises an
AssertionError saying which check and by how much.

>>> from chainrule.test_util import check_grads
>>> check_grads(lambda x: np.sin(x) * x, (np.array([0.5, 1.0]),), order=2)
"""

import functools

import numpy as np

from ..primitive import raw
from ..transforms.functional import jvp, vjp
from ..transforms.pytrees import tree_flatten, tree_map

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4
# JAX's default gradient tolerances (jax._src.public_test_util), by dtype
_TOLERANCE = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2,
              np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 2e-2,
              np.dtype(np.complex128): 1e-5}


def _tolerance(trees, given):
    if given is not None:
        return given
    dtypes = [np.result_type(raw(leaf)) for tree in trees for leaf in tree_flatten(tree)[0]]
    return max([_TOLERANCE.get(np.dtype(d), 1e-5) for d in dtypes] or [1e-5])


def _random_like(tree, rng):
    def draw(leaf):
        value = np.asarray(raw(leaf))
        if not np.issubdtype(value.dtype, np.inexact):
            raise TypeError(f"check_grads: expected float arguments and results, got an "
                            f"array of {value.dtype} (shape {value.shape})")
        out = rng.standard_normal(value.shape).astype(value.dtype)
        return out if value.ndim else out[()]
    return tree_map(draw, tree)


def _add(tree, other, scale):
    return tree_map(lambda a, b: np.asarray(raw(a)) + scale * np.asarray(raw(b)), tree, other)


def _inner(a, b):
    pairs = zip(tree_flatten(a)[0], tree_flatten(b)[0])
    return sum(float(np.real(np.vdot(np.asarray(raw(x)), np.asarray(raw(y))))) for x, y in pairs)


def _numerical_jvp(f, primals, tangents, eps):
    plus = f(*_add(primals, tangents, eps))
    minus = f(*_add(primals, tangents, -eps))
    return tree_map(lambda p, m: (np.asarray(raw(p)) - np.asarray(raw(m))) / (2 * eps),
                    plus, minus)


def _close(what, ours, expected, atol, rtol):
    ours_leaves, ours_def = tree_flatten(ours)
    expected_leaves, expected_def = tree_flatten(expected)
    if len(ours_leaves) != len(expected_leaves):
        raise AssertionError(f"check_grads: {what}: {len(ours_leaves)} results where "
                             f"{len(expected_leaves)} were expected")
    for a, b in zip(ours_leaves, expected_leaves):
        np.testing.assert_allclose(np.asarray(raw(a)), np.asarray(raw(b)), rtol=rtol,
                                   atol=atol, err_msg=f"check_grads: {what}")


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """``f_jvp(args, tangents) -> (out, out_tangent)`` against ``f`` and finite
    differences along random tangents.

    >>> from chainrule.test_util import check_jvp
    >>> f = lambda x: x ** 3
    >>> args = (np.array([1.0, 2.0]),)
    >>> check_jvp(f, lambda args, ts: (args[0] ** 3, 3 * args[0] ** 2 * ts[0]), args)  # right
    >>> check_jvp(f, lambda args, ts: (args[0] ** 3, 2 * args[0] * ts[0]), args)       # wrong
    Traceback (most recent call last):
        ...
    AssertionError: ...
    >>> check_jvp(f, lambda args, ts: cr.jvp(f, args, ts), args)                   # cr.jvp's
    """
    rng = np.random.default_rng(0)  # (the same tangents at every run)
    atol = _tolerance([args], atol)
    rtol = _tolerance([args], rtol)
    tangents = _random_like(args, rng)
    out, out_tangent = f_jvp(args, tangents)
    _close(f"jvp's value {err_msg}", out, f(*args), atol, rtol)
    _close(f"jvp's tangent against finite differences {err_msg}", out_tangent,
           _numerical_jvp(f, args, tangents, eps), atol, rtol)


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """``f_vjp(*args) -> (out, vjp_fun)``: the value, and ``<vjp(c), t>`` equal to
    ``<c, jvp(t)>`` with the jvp by finite differences.

    >>> from chainrule.test_util import check_vjp
    >>> f = lambda x: cr.tanh(x) * x
    >>> check_vjp(f, lambda *args: cr.vjp(f, *args), (np.array([0.1, 0.5]),))
    >>> wrong = lambda x: (f(x), lambda c: (c,))          # a pullback that forgets f'
    >>> check_vjp(f, wrong, (np.array([0.1, 0.5]),))
    Traceback (most recent call last):
        ...
    AssertionError: ...
    """
    rng = np.random.default_rng(1)
    atol = _tolerance([args], atol)
    rtol = _tolerance([args], rtol)
    out, vjp_fun = f_vjp(*args)
    _close(f"vjp's value {err_msg}", out, f(*args), atol, rtol)
    tangents = _random_like(args, rng)
    cotangent = _random_like(out, rng)
    pulled = vjp_fun(cotangent)
    ours = _inner(tangents, pulled)
    expected = _inner(_numerical_jvp(f, args, tangents, eps), cotangent)
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=atol,
                               err_msg=f"check_grads: <vjp(c), t> against <c, jvp(t)> "
                                       f"by finite differences {err_msg}")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check ``f``'s derivatives at ``args`` (a tuple of pytrees) up to ``order``, in
    ``modes`` ("fwd", "rev"), against finite differences, as jax.test_util.check_grads;
    raises an AssertionError if one differs beyond the tolerances (by default JAX's:
    1e-5 for float64, 2e-2 for float32).

    >>> from chainrule.test_util import check_grads
    >>> check_grads(lambda x: cr.sin(x) * x, (np.array([0.5, 1.0]),), order=2)  # silent: passes
    >>> params = {"w": np.array([1.0, -2.0]), "b": 0.5}              # pytrees of arguments
    >>> check_grads(lambda p, x: cr.tanh(p["w"] @ x + p["b"]), (params, np.ones(2)), order=1,
    ...             modes=["rev"])
    >>> @cr.custom_jvp
    ... def square(x):
    ...     return x * x
    >>> @square.defjvp
    ... def square_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return x * x, x * t                 # wrong: 2 x t
    >>> check_grads(square, (np.array([1.0, 2.0]),), order=1, modes=["fwd"])
    Traceback (most recent call last):
        ...
    AssertionError: ...
    """
    args = tuple(args)
    eps = EPS if eps is None else eps
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got "
                         f"{sorted(unknown)}")
    if int(order) != order or order < 1:
        raise ValueError(f"check_grads: order must be a positive int, got {order!r}")

    def check(f, args, order):
        if "fwd" in modes:
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps,
                      f"(order {order}, forward)")
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1)
        if "rev" in modes:
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps,
                      f"(order {order}, reverse)")
            if order > 1:
                def f_vjp(*args):
                    out, vjp_fun = vjp(f, *args)
                    return vjp_fun(out)
                check(f_vjp, args, order - 1)
    check(f, args, int(order))
