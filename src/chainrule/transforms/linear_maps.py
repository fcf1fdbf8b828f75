"""JAX's two transforms that hand back a linear map: ``linearize`` (the Jacobian at a
point, as a function of the tangent) and ``linear_transpose`` (the transpose of a linear
function, as a function of the cotangent).

JAX builds both from one jaxpr: ``linearize`` evaluates f and keeps only the linear
part; ``linear_transpose`` transposes each linear operation of f. chainrule's are built
on ``jvp`` and ``vjp``:

* ``linearize`` evaluates f once for its output, and each call of the linear map is a
  ``jvp`` at the same point (a forward pass of f's cost: the nonlinear parts are computed
  again, where JAX's map holds only the linear ones);
* ``linear_transpose`` of a linear f is its ``vjp``, which is the same at every point:
  taken at zeros. A function whose derivative changes with the point is not linear, and
  transposing it has no meaning: the derivatives at zero and at a second point are
  compared once, and a difference raises (JAX refuses such a function while tracing it).
  A constant added to a linear function is no part of its transpose, as in JAX.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from ..primitive import raw
from .functional import jvp, vjp
from .pytrees import tree_flatten, tree_map

__all__ = ["linearize", "linear_transpose"]


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(out, f_jvp)``, and with ``has_aux=True`` ``(out, f_jvp, aux)``: f at the
    primals, and its Jacobian there as a linear function of the tangents
    (``jax.linearize``): ``f_jvp(*tangents)`` is ``cr.jvp(fun, primals, tangents)[1]``.

    >>> out, f_jvp = cr.linearize(lambda x: x ** 3, 2.0)
    >>> out, f_jvp(1.0), f_jvp(2.0)             # 2**3, and 3 * 2**2 times each tangent
    (8.0, 12.0, 24.0)
    """
    result = fun(*primals)
    if has_aux:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(f"linearize(..., has_aux=True): the function must return a "
                            f"pair (output, aux), got {type(result).__name__}")
        out, aux = result
    else:
        out = result

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(f"linearize: the linear map takes one tangent per primal "
                            f"({len(primals)}), got {len(tangents)}")
        found = jvp(fun, primals, tangents, has_aux=has_aux)
        return found[1]

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: tuple[Any, ...] = ()) -> Callable[[Any], tuple[Any, ...]]:
    """The transpose of the linear function ``fun`` (``jax.linear_transpose``): a
    function of a cotangent shaped like fun's output, giving a tuple with one cotangent
    per input. The primals say the inputs' shapes and dtypes (arrays, numbers or
    ``cr.ShapeDtypeStruct``s); their values are not used. A function that is not linear
    raises.

    >>> f_t = cr.linear_transpose(lambda x, y: (2 * x + y, x), 1.0, 2.0)
    >>> f_t((1.0, 3.0))                         # [[2, 1], [1, 0]] transposed, applied
    (5.0, 1.0)
    """
    if reduce_axes:
        raise ValueError("linear_transpose: reduce_axes (JAX's named axes) are not "
                         "supported; chainrule has no named axes")
    zeros = tree_map(lambda p: _like(p, np.zeros), primals)
    _, at_zero = vjp(fun, *zeros)
    second = tree_map(lambda p: _like(p, _second_point), primals)
    out, elsewhere = vjp(fun, *second)
    # a linear map's transpose is the same at every point: checked once, at a second
    # point along one cotangent
    probe = tree_map(lambda o: _second_point(np.shape(raw(o)), np.result_type(raw(o))), out)
    for a, b in zip(tree_flatten(at_zero(probe))[0], tree_flatten(elsewhere(probe))[0]):
        a, b = np.asarray(raw(a)), np.asarray(raw(b))
        if not np.allclose(a, b, rtol=1e-9, atol=1e-12 * (1.0 + np.max(np.abs(a), initial=0))):
            raise TypeError("linear_transpose: the function is not linear in its inputs "
                            "(its derivative at zero and at another point differ); "
                            "transpose its jvp at a point instead: cr.vjp(f, x)[1]")

    def transposed(cotangent: Any) -> tuple[Any, ...]:
        return at_zero(cotangent)

    return transposed


def _like(primal, fill):
    """An array of the primal's shape and dtype, made by ``fill(shape, dtype)``."""
    shape = getattr(primal, "shape", None)
    dtype = getattr(primal, "dtype", None)
    if shape is None or dtype is None:
        value = np.asarray(raw(primal))
        shape, dtype = value.shape, value.dtype
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating)):
        raise TypeError(f"linear_transpose: an input of dtype {dtype} has no derivative; "
                        f"expected floating or complex inputs")
    made = fill(tuple(shape), dtype)
    if isinstance(primal, (int, float, complex)):  # a Python number stays one
        return complex(made) if np.iscomplexobj(made) else float(made)
    return made


def _second_point(shape, dtype):
    """Fixed numbers away from zero (a seeded generator: the same at every call)."""
    rng = np.random.default_rng(20261201)
    values = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.uniform(0.5, 1.5, shape)
    return np.asarray(values, dtype=dtype)
