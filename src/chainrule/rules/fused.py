"""Speed overrides: faster versions of a few plain rules, each beside the plain one it
replaces and tested to give the same numbers (``tests/test_fused.py``: forward,
backward, second order).

The plain library is complete without this module: set ``CHAINRULE_FAST=0`` in the
environment (or call ``set_enabled(False)``) and every operation runs its plain rules,
slower. What is here earned its place in ``make bench`` (the MLP step of workload 3):

* ``linear``: a layer's ``x @ W.T + b`` as one node, as ``torch.addmm`` is, instead of a
  transpose, a matmul and an add node (plain: ``matmul(x, swapaxes(W, -1, -2)) + b``);
* ``linear_relu``: a hidden layer's ``relu(x @ W.T + b)`` as one node, the gradient
  masked once for both weight and input (plain: ``relu(linear(...))``); ``Sequential``
  uses it for a Linear followed by a ReLU;
* ``cross_entropy``: the loss as one node that keeps the softmax its forward computed,
  for the VJP to reuse, computed class-major when there are fewer classes than rows
  (plain: the composition of log_softmax and indexing).

A fused operation has the same rules as the operations it fuses; it only shares their
work, through ``pullback``, which gets every needed gradient in one call.
"""

import os
import time

from .. import arrays as xp
from ..primitive import LEADING_AXES, Box, Primitive, ndim_of, raw, shape_of
from ..arrays import ARRAYS, as_array
from .common import class_indices, tangent_lead
from .linalg import matmul_jvp_a, matmul_jvp_b, matmul_vjp_a, matmul_vjp_b
from .reductions import softmax, sum
from .shapes import reshape, swapaxes

__all__ = ["enabled", "set_enabled", "Fused", "linear", "linear_relu", "cross_entropy"]

_enabled = [os.environ.get("CHAINRULE_FAST", "1") != "0"]


def enabled():
    """Whether the overrides are used (``CHAINRULE_FAST=0`` turns them off)."""
    return _enabled[0]


def set_enabled(flag):
    """Use the overrides or not, from now on; returns the previous setting."""
    previous, _enabled[0] = _enabled[0], bool(flag)
    return previous


class Fused(Primitive):
    """An operation whose VJPs share work: ``shared_pullback(g, ans, *args, needs,
    residual)`` returns a tuple of every argument's gradient in one call (None where
    ``needs`` says no one asked). It also has the plain per-argument rules (``defvjp``), which
    build the gradient's graph (``create_graph``) and take batches, so derivatives of
    any order come from the same formulas.

    >>> from chainrule.rules import fused
    >>> def both(g, ans, x, y, needs, residual):     # 3 g is the work both share
    ...     shared = 3.0 * g
    ...     return (shared * y if needs[0] else None, shared * x if needs[1] else None)
    >>> product = fused.Fused(lambda x, y: 3.0 * x * y, "product", both)
    >>> _ = product.defvjp(lambda g, ans, x, y: 3 * g * y, lambda g, ans, x, y: 3 * g * x)
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> product(x, cr.tensor([5.0, 7.0])).sum().backward()
    >>> x.grad.tolist()
    [15.0, 21.0]
    """

    def __init__(self, forward, name, shared_pullback, *, batched=False, batching=None):
        super().__init__(forward, name, batched=batched, batching=batching)
        self.shared_pullback = shared_pullback
        self._needs = {}

    def differentiable(self, argnum):
        return True  # the shared pullback answers for every argument

    def pullback(self, g, ans, args, kwargs, argnums, residual=None):
        if type(g) not in ARRAYS or type(ans) not in ARRAYS or isinstance(g, Box) \
                or isinstance(ans, Box):
            # building the gradient's graph (traced values), or a batch of cr.vmap (an
            # array type, but not one to write into): the plain rules
            return super().pullback(g, ans, args, kwargs, argnums)
        key = (len(args), tuple(argnums))
        needs = self._needs.get(key)
        if needs is None:  # which arguments need a gradient, as flags (kept per argnums)
            needs = self._needs[key] = tuple([i in argnums for i in range(len(args))])
        grads = self.shared_pullback(g, ans, *args, needs, residual, **kwargs)
        if type(grads) is not tuple or len(grads) != len(args):
            raise TypeError(f"{self.name}: its shared pullback must return a tuple of "
                            f"{len(args)} gradients, one per argument; got "
                            f"{type(grads).__name__}")
        picked = [grads[i] for i in argnums]
        for i, grad in zip(argnums, picked):
            if grad is None:
                raise TypeError(f"{self.name}: its shared pullback gave None for argument "
                                f"{i}, which needs a gradient")
        return picked


# ---------------------------------------------------------------------------------------
# linear: y = x @ W.T + b, with W stored (out, in) as PyTorch stores it. matmul's rules
# with W.T in W's place: dx = g @ W, dW = (x.T @ g).T = g.T @ x, db = g.
# ---------------------------------------------------------------------------------------

def _mT(a):
    """The matrix transpose (the last two axes swapped; the Array API's ``.mT``)."""
    return swapaxes(a, -1, -2)


# A float32 product of few rows by a transposed weight, x @ W.T, is about 1.7x slower in
# OpenBLAS (sgemm with 32 rows: 500 us at 32x784 by 784x512) than the same products
# asked for the other way round, (W @ x.T).T (290 us). With more rows, fewer than 64
# outputs (32x512 by 512x10: 4.2 against 5.7 us), or float64, the two take about the
# same time or the plain one less, and the transposed result slows the backward pass.
# Whether the two orientations sum in the same order, and so give the same bits,
# depends on the BLAS kernel the machine runs (some do, OpenBLAS's Haswell sgemm does
# not): a shape is turned only where one product of spread-out numbers, made both ways
# once per process, gave the same bits (_same_bits).
_FEW_ROWS = 64
_same = {}  # (rows, inputs, outputs, dtype) -> whether both ways gave the same bits


def _same_bits(rows, inputs, outputs, dtype):
    """Whether x @ W.T and (W @ x.T).T give the same bits at this shape and dtype here
    (one draw of numbers whose sums round: an order that differs shows in some entry)."""
    key = (rows, inputs, outputs, dtype)
    found = _same.get(key)
    if found is None:
        x = xp.sin(xp.arange(rows * inputs) * 1.3 + 0.1).astype(dtype).reshape(rows, inputs)
        w = xp.cos(xp.arange(outputs * inputs) * 0.7).astype(dtype).reshape(outputs, inputs)
        found = _same[key] = bool(xp.array_equal(xp.matmul(x, w.T), xp.matmul(w, x.T).T))
    return found

# Larger products have no such rule of thumb: asked the other way round, a product of
# 1024x784 by 784x128 takes 4.6 ms against 5.2 in float64, and 2.3 against 2.1 in
# float32, and the turn pays at some shapes and not at their neighbours. So a product of
# _TIMED_FROM to _TIMED_UP_TO multiply-adds is timed both ways the first time the
# process meets its shape and dtype (on arrays of ones: BLAS's time does not depend on
# the numbers), and turned from then on where that takes at most _TURN_BELOW of the
# time. Below, the timing would cost more than it could save; above, seconds.
_TIMED_FROM, _TIMED_UP_TO, _TURN_BELOW = 1 << 24, 1 << 28, 0.9
_turn = {}  # (rows, inputs, outputs, dtype) -> whether (W @ x.T).T is the faster


def _turn_pays(rows, inputs, outputs, dtype):
    """Whether (W @ x.T).T is clearly faster than x @ W.T at this shape and dtype."""
    key = (rows, inputs, outputs, dtype)
    found = _turn.get(key)
    if found is None:
        x, w = xp.ones((rows, inputs), dtype), xp.ones((outputs, inputs), dtype)
        plain, turned = xp.empty((rows, outputs), dtype), xp.empty((outputs, rows), dtype)
        times = {"plain": [], "turned": []}
        for _ in range(5):
            start = time.perf_counter()
            xp.matmul(x, w.T, out=plain)
            middle = time.perf_counter()
            xp.matmul(w, x.T, out=turned)
            times["plain"].append(middle - start)
            times["turned"].append(time.perf_counter() - middle)
        found = _turn[key] = min(times["turned"]) <= _TURN_BELOW * min(times["plain"])
    return found


def _turned(x, weight):
    """Whether to ask for ``x @ weight.T`` as ``(weight @ x.T).T`` (the same bits, faster)."""
    if not (type(x) in ARRAYS and type(weight) in ARRAYS and x.ndim == 2 and
            weight.ndim == 2 and x.dtype == weight.dtype and x.dtype.kind == "f"):
        return False
    (rows, inputs), outputs = x.shape, weight.shape[0]
    if x.dtype.char == "f" and rows <= _FEW_ROWS <= outputs:
        return _same_bits(rows, inputs, outputs, x.dtype)
    return _TIMED_FROM <= rows * inputs * outputs <= _TIMED_UP_TO and \
        _turn_pays(rows, inputs, outputs, x.dtype) and \
        _same_bits(rows, inputs, outputs, x.dtype)


def _linear(x, weight, bias):
    """``x @ weight.T + bias``: x (..., in), weight (out, in), bias (out,) -> (..., out).

    >>> from chainrule.rules import fused
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> W = cr.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], requires_grad=True)
    >>> b = cr.tensor([10.0, 20.0, 30.0], requires_grad=True)
    >>> y = fused.linear(x, W, b)
    >>> y.data.tolist()
    [[11.0, 22.0, 33.0]]
    >>> y.sum().backward()
    >>> W.grad.tolist(), b.grad.tolist()          # each row of W sees x
    ([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]], [1.0, 1.0, 1.0])
    """
    # (.T of a matrix: an attribute, cheaper than a call, and a view cr.jit replays as one)
    if type(x) in ARRAYS and type(weight) in ARRAYS and x.ndim > 2 and weight.ndim == 2:
        # a stack of rows (batch, time, in): one product of a tall matrix, where NumPy's
        # matmul would make one small product per leading index
        rows = xp.matmul(x.reshape(-1, x.shape[-1]), weight.T)
        out = rows.reshape(x.shape[:-1] + (weight.shape[0],))
    elif _turned(x, weight):
        out = xp.matmul(weight, x.T).T  # the same products, faster (_FEW_ROWS, _turn)
    else:
        out = xp.matmul(x, weight.T if type(weight) in ARRAYS and weight.ndim == 2
                        else xp.swapaxes(weight, -1, -2))
    if (type(out) in ARRAYS and type(bias) in ARRAYS and bias.dtype == out.dtype
            and bias.ndim <= 1):
        return xp.add(out, bias, out=out)  # the product is a new array: add in place
    return out + bias


def _linear_pullback(g, ans, x, weight, bias, needs, residual):
    """matmul's rules and add's: g @ W, g^T @ x, and g for the bias (the engine sums
    it over the rows). Plain 2-D arrays take NumPy directly."""
    if type(x) in ARRAYS and type(weight) in ARRAYS and weight.ndim == 2:
        if x.ndim == 2:  # (g may carry leading axes: a stack of cotangents, for a Jacobian)
            g_t = g.T if g.ndim == 2 else xp.swapaxes(g, -1, -2)
            return (xp.matmul(g, weight) if needs[0] else None,
                    xp.matmul(g_t, x) if needs[1] else None, g)
        if x.ndim > 2 and g.shape[:-1] == x.shape[:-1]:
            # a sequence of rows (batch, time, in): the weight's gradient as one product
            # over every row, not one per leading index summed afterwards
            rows, grads = x.reshape(-1, x.shape[-1]), g.reshape(-1, g.shape[-1])
            return (xp.matmul(grads, weight).reshape(x.shape) if needs[0] else None,
                    xp.matmul(grads.T, rows) if needs[1] else None, g)
    return (matmul_vjp_a(g, x, _mT(weight)) if needs[0] else None,
            _mT(matmul_vjp_b(g, x, _mT(weight))) if needs[1] else None, g)


linear = Fused(_linear, "linear", _linear_pullback, batched=True, batching=LEADING_AXES)
linear.defvjp(lambda g, ans, x, weight, bias: matmul_vjp_a(g, x, _mT(weight)),
              lambda g, ans, x, weight, bias: _mT(matmul_vjp_b(g, x, _mT(weight))),
              lambda g, ans, x, weight, bias: g,
              text=("{g} @ {1}", "{g}.T @ {0}", "{g}"))
linear.defjvp(lambda t, ans, x, weight, bias: matmul_jvp_a(t, x, _mT(weight)),
              lambda t, ans, x, weight, bias: matmul_jvp_b(_mT(t), x, _mT(weight)),
              lambda t, ans, x, weight, bias:   # batch axes kept in front of the result's
              reshape(t, tangent_lead(t, bias) + (1,) * (ndim_of(ans) - ndim_of(bias))
                          + shape_of(bias)))


# ---------------------------------------------------------------------------------------
# linear_relu: relu(x @ W.T + b). relu'(z) is 1 where z > 0, that is where the output is
# > 0 (0 at the kink, as for relu itself): the gradient is masked once, then linear's.
# ---------------------------------------------------------------------------------------

def _linear_relu(x, weight, bias):
    """``relu(x @ weight.T + bias)``: x (..., in), weight (out, in), bias (out,) ->
    (..., out).

    >>> from chainrule.rules import fused
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> W = cr.tensor([[1.0, 1.0], [-1.0, -1.0]], requires_grad=True)
    >>> b = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = fused.linear_relu(x, W, b)
    >>> y
    tensor([[3., 0.]], grad_fn=linear_relu)
    >>> y.sum().backward()
    >>> W.grad.tolist(), b.grad.tolist()          # the second unit is off: no gradient
    ([[1.0, 2.0], [0.0, 0.0]], [1.0, 0.0])
    """
    out = _linear(x, weight, bias)
    return xp.maximum(out, 0, out=out) if type(out) in ARRAYS else xp.maximum(out, 0)


def _linear_relu_pullback(g, ans, x, weight, bias, needs, residual):
    return _linear_pullback(g * (ans > 0), ans, x, weight, bias, needs, residual)


linear_relu = Fused(_linear_relu, "linear_relu", _linear_relu_pullback, batched=True,
                    batching=LEADING_AXES)
linear_relu.defvjp(*[lambda g, ans, *args, _rule=linear.vjps[i]:
                     _rule(g * (raw(ans) > 0), ans, *args) for i in range(3)])
linear_relu.defjvp(*[lambda t, ans, *args, _rule=linear.jvps[i]:
                     _rule(t, ans, *args) * (raw(ans) > 0) for i in range(3)])


# ---------------------------------------------------------------------------------------
# cross_entropy: mean of -log softmax(logits)[label], keeping the softmax for backward
# ---------------------------------------------------------------------------------------

def _cross_entropy_and_softmax(logits, labels):
    """The loss, and what the backward pass reuses: the softmax, which the forward
    computes anyway, and where the labels sit in it seen as one flat array (indexing a
    flat array with one index array is about twice as fast as with a pair).

    Where there are fewer classes than rows (10 digits, a batch of 128), the work runs
    on a class-major copy, (C, N): a reduction over the classes is then C - 1 adds of
    contiguous rows N long, where over a row-major (N, C) array it is N short loops of
    C, about 8 times slower at (128, 10). The softmax stays class-major, and so does
    the gradient (handed back as the transposed view)."""
    logits = as_array(logits)
    labels = class_indices(labels, logits.shape)
    n, classes = logits.shape
    class_major = classes < n
    if class_major:
        scores, axis, picked = logits.T.copy(), 0, labels * n + xp.arange(n)
    else:
        scores, axis, picked = logits, -1, xp.arange(n) * classes + labels
    shifted = scores - xp.maximum.reduce(scores, axis=axis, keepdims=True)  # no overflow
    exp = xp.exp(shifted)
    total = xp.add.reduce(exp, axis=axis, keepdims=True)
    # -log softmax[label] = log(total) - shifted[label], summed over the rows
    loss = (xp.add.reduce(xp.log(total), axis=None) - xp.add.reduce(shifted.take(picked))) / n
    exp /= total
    return loss, (exp, picked, class_major)


def _cross_entropy(logits, labels):
    """The mean over the rows of -log softmax(logits)[label]: logits (N, C), integer
    labels (N,), each in [0, C) (checked).

    >>> from chainrule.rules import fused
    >>> logits = cr.tensor([[0.0, 0.0]], requires_grad=True)
    >>> loss = fused.cross_entropy(logits, np.array([1]))
    >>> round(loss.item(), 4)
    0.6931
    """
    return _cross_entropy_and_softmax(logits, labels)[0]


def _cross_entropy_vjp(g, ans, logits, labels):
    """(softmax(logits) - one_hot(labels)) * g / N, written with the table's operations."""
    if isinstance(labels, Box):  # labels batched by cr.vmap (per-example gradients): the
        # one-hot by a comparison, which vmap maps (the forward checked each example's)
        one_hot = (labels[:, None] == xp.arange(shape_of(raw(logits))[-1])).astype(
            raw(logits).dtype)
    else:
        one_hot = xp.zeros(xp.shape(raw(logits)), dtype=xp.result_type(raw(logits)))
        one_hot[xp.arange(len(labels)), class_indices(labels, one_hot.shape)] = 1
    g = reshape(g, xp.shape(g) + (1, 1))  # (a batch of) scalars, against (N, C)
    return (softmax(logits, axis=-1) - one_hot) * (g / len(labels))


def _cross_entropy_pullback(g, ans, logits, labels, needs, residual):
    """The same formula on the softmax the forward kept, in place on a copy of it (a
    copy: backward may run again on the same graph)."""
    if xp.ndim(g) != 0:  # a batch of cotangents (jacrev): the plain rule
        return (_cross_entropy_vjp(g, ans, logits, labels), None)
    if residual is None:
        residual = _cross_entropy_and_softmax(logits, labels)[1]
    softmax, picked, class_major = residual
    flat = softmax.reshape(-1).copy()
    flat[picked] -= 1  # the one-hot, subtracted in place
    d = flat.reshape(softmax.shape)
    d *= g / len(labels)
    return (d.T if class_major else d, None)


class _KeepingSoftmax(Fused):
    keeps_residual = True

    def forward_keeping(self, logits, labels):
        return _cross_entropy_and_softmax(logits, labels)


cross_entropy = _KeepingSoftmax(_cross_entropy, "cross_entropy", _cross_entropy_pullback,
                                batched=True)
cross_entropy.defvjp(_cross_entropy_vjp, text=("(softmax({0}) - one_hot) / N * {g}",))
cross_entropy.defjvp(lambda t, ans, logits, labels:
                     sum(_cross_entropy_vjp(1.0, ans, logits, labels) * t,
                             axis=(-2, -1)))
