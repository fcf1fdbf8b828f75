"""Speed override for the transformer layer's normalisations: ``layer_norm(x, weight,
bias, eps=)`` over the last axis as one operation, instead of the nine of
``nn.functional.layer_norm``'s composition (two means, a subtraction, a square, an add,
a square root, a division, the scale and the shift).

The pattern is ``rules/fused.py``'s (``Fused``): the forward keeps the normalised x and
the standard deviations, and an ordinary backward pass gets every gradient from them in
one call. The plain rules below, written with the table's operations, are the same
formulas: they serve ``create_graph``, batches of cotangents and tangents, forward mode,
cr.jit and cr.vmap. Both are tested equal to the plain composition
(``tests/test_fused.py``); ``CHAINRULE_FAST=0`` turns the override off.

With xhat = (x - mean(x)) / s, s = sqrt(mean((x - mean(x))^2) + eps), y = xhat w + b
(means over the last axis)::

    dx = (gw - mean(gw) - xhat mean(gw xhat)) / s,  gw = g w
    dweight = g xhat (summed over the rows)         dbias = g (summed over the rows)
"""

from .. import arrays as xp
from ..primitive import LEADING_AXES, ndim_of, shape_of
from .common import tangent_lead
from .elementwise import sqrt
from .fused import Fused
from .reductions import mean
from .shapes import reshape

__all__ = ["layer_norm"]


def _normalised(x, eps):
    """(x - mean) / sqrt(var + eps) and the divisor, as functional.layer_norm computes
    them (the same operations, in the same order)."""
    centred = x - mean.forward(x, axis=(-1,), keepdims=True)
    spread = xp.sqrt(mean.forward(centred * centred, axis=(-1,), keepdims=True) + eps)
    return centred / spread, spread


def _layer_norm(x, weight=None, bias=None, *, eps=1e-5):
    """x normalised over its last axis, then times ``weight`` plus ``bias`` (each (D,),
    or None): ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance,
    as ``nn.functional.layer_norm(x, D, weight, bias, eps)``.

    >>> from chainrule.rules.fused_norm import layer_norm
    >>> x = cr.tensor([[1.0, 3.0]], requires_grad=True)
    >>> y = layer_norm(x, cr.tensor([2.0, 2.0]), cr.tensor([0.5, 0.5]), eps=0.0)
    >>> y.tolist()
    [[-1.5, 2.5]]
    >>> (y * cr.tensor([[1.0, 0.0]])).sum().backward()
    >>> x.grad.tolist()                               # (1 - 1/2 - (-1)(-1/2)) * 2 / 1
    [[0.0, 0.0]]
    """
    y = _normalised(x, eps)[0]
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


# ---------------------------------------------------------------------------------------
# The plain rules, with the table's operations
# ---------------------------------------------------------------------------------------

def _plain_normalised(x, eps):
    centred = x - mean(x, axis=(-1,), keepdims=True)
    spread = sqrt(mean(centred * centred, axis=(-1,), keepdims=True) + eps)
    return centred / spread, spread


def _vjp(argnum):
    def rule(g, ans, x, weight=None, bias=None, *, eps=1e-5):
        if argnum == 2:
            return g
        xhat, spread = _plain_normalised(x, eps)
        if argnum == 1:
            return g * xhat
        gw = g if weight is None else g * weight
        return (gw - mean(gw, axis=-1, keepdims=True)
                - xhat * mean(gw * xhat, axis=-1, keepdims=True)) / spread
    return rule


def _jvp(argnum):
    def rule(t, ans, x, weight=None, bias=None, *, eps=1e-5):
        if argnum != 0:  # a (D,) tangent: a batch's axes before the rows
            t = reshape(t, tangent_lead(t, weight if argnum == 1 else bias)
                        + (1,) * (ndim_of(x) - 1) + shape_of(t)[-1:])
        if argnum == 2:
            return t
        xhat, spread = _plain_normalised(x, eps)
        if argnum == 1:
            return xhat * t
        dc = t - mean(t, axis=-1, keepdims=True)
        dy = (dc - xhat * mean(xhat * dc, axis=-1, keepdims=True)) / spread
        return dy if weight is None else dy * weight
    return rule


# ---------------------------------------------------------------------------------------
# The fast pullback
# ---------------------------------------------------------------------------------------

def _pullback(g, ans, x, *rest, eps=1e-5):
    """The formulas above on the kept xhat and divisor, NumPy arrays only."""
    *params, needs, residual = rest
    weight, bias = (list(params) + [None, None])[:2]
    if residual is None or g.shape != ans.shape or any(
            type(a) is not xp.ndarray for a in (g, x, weight, bias) if a is not None):
        return tuple(_vjp(i)(g, ans, x, weight, bias, eps=eps) if need else None
                     for i, need in enumerate(needs))
    xhat, spread = residual
    rows = (-1, shape_of(x)[-1])
    dweight = (g * xhat).reshape(rows).sum(axis=0) if len(needs) > 1 and needs[1] else None
    dbias = g.reshape(rows).sum(axis=0) if len(needs) > 2 and needs[2] else None
    dx = None
    if needs[0]:
        gw = g if weight is None else g * weight
        dx = gw - xp.mean(gw, axis=-1, keepdims=True)
        dx -= xhat * xp.mean(gw * xhat, axis=-1, keepdims=True)
        dx /= spread
    return (dx, dweight, dbias)[:len(needs)]


class _KeepingNormalised(Fused):
    keeps_residual = True

    def forward_keeping(self, x, weight=None, bias=None, *, eps=1e-5):
        xhat, spread = _normalised(x, eps)
        y = xhat if weight is None else xhat * weight
        return (y if bias is None else y + bias), (xhat, spread)


layer_norm = _KeepingNormalised(_layer_norm, "layer_norm", _pullback, batched=True,
                                batching=LEADING_AXES)
layer_norm.defvjp(*[_vjp(i) for i in range(3)],
                  text=("(gw - mean(gw) - xhat mean(gw xhat)) / s", "{g} xhat", "{g}"))
layer_norm.defjvp(*[_jvp(i) for i in range(3)])
