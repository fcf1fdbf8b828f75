"""Speed override for the recurrent layers: a GRU layer's whole recurrence as one
operation, ``gru_sequence``, beside the plain composition it replaces (``gru_cell`` of
``nn/recurrent.py`` at every time step, whose ~20 recorded operations a step, and the
slice of the input projection each step reads, make a sequence's graph long).

The pattern is ``rules/fused.py``'s (``Fused``): the forward runs the loop over time in
NumPy and keeps the gates it computed; an ordinary backward pass runs backpropagation
through time on them in one call, the weight's gradient one matrix product for all the
steps. The plain rules, written with the table's operations below, are the same
formulas: they serve ``create_graph`` (derivatives of any order), batches of
cotangents and tangents (jacrev, jacfwd), forward mode, cr.vmap and other libraries'
arrays. cr.jit records the fast path itself (its traced arrays take it as NumPy's do),
so a replay makes the eager run's calls. Both are tested equal to the plain
composition (``tests/test_fused.py``), and ``CHAINRULE_FAST=0`` turns the override off
as it does fused.py's.

torch's equations of one step (gates r, z, n side by side on the last axis)::

    gh = h @ W_hh^T + b_hh
    r  = sigmoid(gi_r + gh_r)
    z  = sigmoid(gi_z + gh_z)
    n  = tanh(gi_n + r * gh_n)
    h' = n + z * (h - n)                  # (1 - z) * n + z * h
"""

from .. import arrays as xp
from ..primitive import LEADING_AXES, shape_of
from .common import tangent_lead
from .elementwise import _sigmoid, sigmoid, tanh
from .fused import Fused
from .linalg import _stacked_matmul, matmul
from .reductions import sum
from .indexing import getitem
from .joining import concatenate, stack
from .shapes import reshape, swapaxes

__all__ = ["gru_sequence"]


def _at(t):
    """Time step t of a sequence (L, N, features), read from the end (batch-safe)."""
    return (Ellipsis, t, slice(None), slice(None))


def _block(k, hidden):
    """Gate k (0: r, 1: z, 2: n) of a (..., 3 * hidden) array."""
    return (Ellipsis, slice(k * hidden, (k + 1) * hidden))


# ---------------------------------------------------------------------------------------
# The forward: the loop over time
# ---------------------------------------------------------------------------------------

def _gru_run(gi, h0, w_hh, b_hh):
    """The outputs (..., L, N, H) of every step, with the array namespace (so cr.jit
    records it); leading axes before L are a stack of sequences."""
    hidden, steps = shape_of(h0)[-1], shape_of(gi)[-3]
    two = 2 * hidden
    w_t = xp.swapaxes(w_hh, -1, -2)
    h, outs = h0, []
    for t in range(steps):
        x = gi[..., t, :, :]
        gh = _stacked_matmul(h, w_t)
        if b_hh is not None:
            gh = gh + b_hh
        rz = _sigmoid(x[..., :two] + gh[..., :two])  # r and z in one call
        r, z = rz[..., :hidden], rz[..., hidden:]
        n = xp.tanh(x[..., two:] + r * gh[..., two:])
        h = n + z * (h - n)
        outs.append(h)
    return xp.stack(outs, axis=-3)


def _gru_sequence(gi, h0, w_hh, b_hh=None):
    """Every hidden state of a GRU layer over a sequence: gi (L, N, 3H) the input's share
    of the gates at every step (``x @ W_ih^T + b_ih``), h0 (N, H) the first state,
    w_hh (3H, H) and b_hh (3H,) (or None) in torch's layout -> (L, N, H), the state
    after each step (the last is h_n). Leading axes before L are a stack of sequences.

    >>> from chainrule.rules.fused_recurrent import gru_sequence
    >>> gi = cr.zeros(2, 1, 3)                         # 2 steps, batch 1, hidden 1
    >>> h0 = cr.ones(1, 1, requires_grad=True)
    >>> out = gru_sequence(gi, h0, cr.zeros(3, 1), cr.zeros(3))
    >>> out.tolist()                                   # z = 1/2, n = 0: h halves each step
    [[[0.5]], [[0.25]]]
    >>> out[-1].sum().backward()
    >>> h0.grad.tolist()
    [[0.25]]
    """
    return _gru_run(gi, h0, w_hh, b_hh)


# ---------------------------------------------------------------------------------------
# The plain rules, with the table's operations
# ---------------------------------------------------------------------------------------

def _plain_steps(gi, h0, w_hh, b_hh):
    """Each step's (h, r, z, n, gh_n), computed again with the table's operations (so a
    rule on Tensors builds the graph of the gradient)."""
    hidden = shape_of(h0)[-1]
    w_t = swapaxes(w_hh, -1, -2)
    h, steps = h0, []
    for t in range(shape_of(gi)[-3]):
        x = getitem(gi, index=_at(t))
        gh = matmul(h, w_t)
        if b_hh is not None:
            gh = gh + b_hh
        i_r, i_z, i_n = (getitem(x, index=_block(k, hidden)) for k in range(3))
        h_r, h_z, h_n = (getitem(gh, index=_block(k, hidden)) for k in range(3))
        r = sigmoid(i_r + h_r)
        z = sigmoid(i_z + h_z)
        n = tanh(i_n + r * h_n)
        steps.append((h, r, z, n, h_n))
        h = n + z * (h - n)
    return steps


def _plain_gradients(g, gi, h0, w_hh, b_hh):
    """Backpropagation through time: the gradients of (gi, h0, w_hh, b_hh) given the
    gradient g (..., L, N, H) of every output (leading axes: a batch of them)."""
    steps = _plain_steps(gi, h0, w_hh, b_hh)
    dgis, dh, dw, db = [None] * len(steps), None, None, None
    for t in reversed(range(len(steps))):
        h, r, z, n, h_n = steps[t]
        g_t = getitem(g, index=_at(t))
        dh = g_t if dh is None else g_t + dh
        dn = dh * (1 - z)
        da_n = dn * (1 - n * n)
        da_r = da_n * h_n * r * (1 - r)
        da_z = dh * (h - n) * z * (1 - z)
        dgis[t] = concatenate([da_r, da_z, da_n], axis=-1)
        dgh = concatenate([da_r, da_z, da_n * r], axis=-1)
        dw_t = matmul(swapaxes(dgh, -1, -2), h)
        db_t = sum(dgh, axis=-2)
        dw = dw_t if dw is None else dw + dw_t
        db = db_t if db is None else db + db_t
        dh = dh * z + matmul(dgh, w_hh)
    return stack(dgis, axis=-3), dh, dw, db


def _plus(a, b):
    return b if a is None else a if b is None else a + b


def _plain_tangent(gi, h0, w_hh, b_hh, argnum, tangent):
    """The tangent of the outputs (..., L, N, H) caused by the tangent of argument
    ``argnum`` (leading axes: a batch of them, kept in front)."""
    steps = _plain_steps(gi, h0, w_hh, b_hh)
    hidden = shape_of(h0)[-1]
    if argnum == 3:  # b_hh's tangent, (..., 3H): a batch's axes before the rows
        tangent = reshape(tangent, tangent_lead(tangent, b_hh) + (1,) + shape_of(b_hh))
    dh, outs = tangent if argnum == 1 else None, []
    for t, (h, r, z, n, h_n) in enumerate(steps):
        dx = getitem(tangent, index=_at(t)) if argnum == 0 else None
        dgh = None if dh is None else matmul(dh, swapaxes(w_hh, -1, -2))
        if argnum == 2:
            dgh = _plus(dgh, matmul(h, swapaxes(tangent, -1, -2)))
        elif argnum == 3:
            dgh = _plus(dgh, tangent)
        dx_r, dx_z, dx_n = ((None,) * 3 if dx is None else
                            (getitem(dx, index=_block(k, hidden)) for k in range(3)))
        dy_r, dy_z, dy_n = ((None,) * 3 if dgh is None else
                            (getitem(dgh, index=_block(k, hidden)) for k in range(3)))
        d_r = _plus(dx_r, dy_r) * (r * (1 - r))
        d_z = _plus(dx_z, dy_z) * (z * (1 - z))
        d_n = _plus(_plus(dx_n, d_r * h_n), None if dy_n is None else r * dy_n) * (1 - n * n)
        dh = d_n + d_z * (h - n) + z * (d_n * -1 if dh is None else dh - d_n)
        outs.append(dh)
    return stack(outs, axis=-3)


# ---------------------------------------------------------------------------------------
# The fast pullback: the kept gates, NumPy, every gradient in one pass
# ---------------------------------------------------------------------------------------

def _plain_arrays(*arrays):
    """Whether the fast path applies: NumPy's arrays, or cr.jit's traced ones (so that a
    replay runs the very calls the eager run did), of one floating dtype, one sequence
    (gi (L, N, 3H), h0 (N, H), w_hh (3H, H), b_hh (3H,) or None), not a stack of them."""
    gi, h0, w_hh, b_hh = arrays
    if not xp.numpy_backed(gi):
        return False
    dtype = gi.dtype
    return (dtype.kind == "f" and gi.ndim == 3
            and xp.numpy_backed(h0) and h0.dtype == dtype and h0.ndim == 2
            and xp.numpy_backed(w_hh) and w_hh.dtype == dtype and w_hh.ndim == 2
            and (b_hh is None or (xp.numpy_backed(b_hh) and b_hh.dtype == dtype
                                  and b_hh.ndim == 1)))


def _gru_keeping(gi, h0, w_hh, b_hh):
    """``_gru_run`` with the same formulas, written into arrays made once for the whole
    sequence (no stacking after): the outputs, and the kept (h0, [r z] of every step,
    n of every step, gh of every step). The arrays are made from gi (``empty_like``),
    so that under cr.jit they are values of the program, which traced values can be
    written into: a replay runs the very calls the eager run did, on NumPy's arrays and
    traced ones alike (a new array above ~128 KB costs page faults: hence the buffers)."""
    if not _plain_arrays(gi, h0, w_hh, b_hh):  # (a stack of sequences: the plain rules)
        return _gru_run(gi, h0, w_hh, b_hh), None
    steps, rows, gates = gi.shape
    hidden = gates // 3
    two = 2 * hidden
    out = xp.empty_like(gi, order="C", shape=(steps, rows, hidden))
    rzs = xp.empty_like(gi, order="C", shape=(steps, rows, two))
    ns = xp.empty_like(gi, order="C", shape=(steps, rows, hidden))
    ghs = xp.empty_like(gi, order="C")
    w_t = w_hh.T
    h = h0
    for t in range(steps):
        gh = ghs[t]
        xp.matmul(h, w_t, out=gh)
        if b_hh is not None:
            gh += b_hh
        rz = rzs[t]
        xp.add(gi[t, :, :two], gh[:, :two], out=rz)
        # sigmoid, as _sigmoid computes it: where(a >= 0, 1 / (1 + e), e / (1 + e)),
        # e = exp(-|a|) <= 1; the numerator, 1 or e, is max(e, a >= 0)
        positive = rz >= 0
        e = xp.abs(rz)
        xp.negative(e, out=e)
        xp.exp(e, out=e)
        d = e + 1
        xp.maximum(e, positive, out=e)
        xp.divide(e, d, out=rz)
        n = ns[t]
        xp.multiply(rz[:, :hidden], gh[:, two:], out=n)
        n += gi[t, :, two:]
        xp.tanh(n, out=n)
        h_new = out[t]
        xp.subtract(h, n, out=h_new)
        h_new *= rz[:, hidden:]
        h_new += n
        h = h_new
    return out, (h0, rzs, ns, ghs)


def _gru_pullback(g, ans, gi, h0, w_hh, b_hh, needs, residual):
    """Backpropagation through time on the gates the forward kept. What does not
    depend on the gradient arriving from later steps is computed for every step at
    once, before the loop (the gates' slopes); the loop over time then does the few
    products that do, writing the gradient of every step's gh into one array; W_hh's
    gradient is then one product over all the steps, and b_hh's one sum. As in the
    forward, every array written into is made here from a value (so cr.jit records
    these very calls)."""
    if (residual is None or not xp.numpy_backed(g) or g.shape != ans.shape or len(residual) != 4
            or not _plain_arrays(gi, h0, w_hh, b_hh)):
        grads = _plain_gradients(g, gi, h0, w_hh, b_hh)
        return tuple(grad if need else None for grad, need in zip(grads, needs))
    _, rzs, ns, ghs = residual
    steps, rows, gates = gi.shape
    hidden = gates // 3
    two = 2 * hidden
    hs = xp.concat([h0[None], ans[:-1]], axis=0)  # the state each step started from
    rs, zs = rzs[..., :hidden], rzs[..., hidden:]
    # h' = n + z (h - n): dn = dh (1 - z), times tanh' = 1 - n^2 ...
    to_n = 1 - zs
    to_n *= 1 - ns * ns
    # ... dr = da_n gh_n, times sigmoid' = r (1 - r); dz = dh (h - n) z (1 - z)
    slope = 1 - rzs
    slope *= rzs
    to_r = slope[..., :hidden]
    to_r *= ghs[..., two:]
    to_z = slope[..., hidden:]
    to_z *= hs - ns
    dgh = xp.empty_like(gi, order="C")
    dgi_n = xp.empty_like(ns, order="C")
    carry = None
    for t in range(steps - 1, -1, -1):
        dh = g[t] if carry is None else g[t] + carry
        dgh_t, da_n = dgh[t], dgi_n[t]
        xp.multiply(dh, to_n[t], out=da_n)
        xp.multiply(da_n, to_r[t], out=dgh_t[:, :hidden])
        xp.multiply(dh, to_z[t], out=dgh_t[:, hidden:two])
        xp.multiply(da_n, rs[t], out=dgh_t[:, two:])   # gh_n enters through r * gh_n
        carry = xp.matmul(dgh_t, w_hh)
        carry += dh * zs[t]
    dgi = None
    if needs[0]:  # gi's gradient is gh's but for n: da_n, not r da_n
        dgi = xp.concat([dgh[..., :two], dgi_n], axis=-1)
    flat = dgh.reshape(-1, gates)
    dw = xp.matmul(flat.T, hs.reshape(-1, hidden)) if needs[2] else None
    db = flat.sum(axis=0) if b_hh is not None and needs[3] else None
    return (dgi, carry if needs[1] else None, dw, db)


class _KeepingGates(Fused):
    keeps_residual = True

    def forward_keeping(self, gi, h0, w_hh, b_hh=None):
        return _gru_keeping(gi, h0, w_hh, b_hh)


gru_sequence = _KeepingGates(_gru_sequence, "gru_sequence", _gru_pullback, batched=True,
                             batching=LEADING_AXES)
gru_sequence.defvjp(*[lambda g, ans, *args, _k=k: _plain_gradients(g, *args)[_k]
                      for k in range(4)],
                    text=("backpropagation through time", "{g} through every step",
                          "sum over steps of dgh^T @ h", "sum over steps of dgh"))
gru_sequence.defjvp(*[lambda t, ans, *args, _k=k: _plain_tangent(*args, _k, t)
                      for k in range(4)])
