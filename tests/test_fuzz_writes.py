"""Writes between forward and backward, fuzzed: never a gradient mixed from old and new numbers.

A random program runs a leaf tensor through operations whose other operands are the
user's NumPy arrays (some of them views of a larger array, some index arrays, some
passed through NumPy's own functions, which dispatch to chainrule). Between the forward
pass and the backward pass (``backward()``, a ``cr.vjp`` pullback, or a second-order
walk with ``create_graph=True``) the fuzzer writes into what the graph read, every way
a user can:

* into a NumPy operand, its base array, or an index array: allowed, and the gradient
  must be the one at the numbers the forward pass saw (the node kept a copy);
* into a Tensor's data (the leaf or a result the graph saved), directly or under
  ``no_grad``: refused at once (``ValueError`` "read-only" from NumPy, or chainrule's
  ``RuntimeError``) with nothing written;
* between two calls of the program's gradient under ``cr.jit``, which closes over the
  operands: the second call must give the eager gradient at the written numbers.

The oracle is the same program run eagerly on copies of the arrays as the walk should
see them (untouched, or written for the jitted call): equal gradients, bit for bit. ``CHAINRULE_FUZZ_WRITES_N=2000``
runs more programs; 200 run in ``make test`` (about ten seconds), the first 20 in
``make test-fast``.
"""

import copy
import os
import zlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

COUNT = int(os.environ.get("CHAINRULE_FUZZ_WRITES_N", "200"))
SHAPE = (3, 4)


# --- the operations: each takes the live tensor and the operands it draws ------------
# (name, how its operands are drawn, the operation); every result has shape SHAPE.

def _block(rng, shape=SHAPE):
    return rng.uniform(0.5, 1.5, shape)


def _view_of_a_larger_array(rng):
    base = rng.uniform(0.5, 1.5, (SHAPE[0] * 2, SHAPE[1] + 1))
    return base[::2, 1:]  # writing into ``base`` writes into the operand


def _rows(rng):
    return rng.integers(0, SHAPE[0], SHAPE[0])  # repeats allowed


def _columns(rng):
    return rng.integers(0, SHAPE[1], SHAPE)


OPS = [
    ("x * a", lambda rng: [_block(rng)], lambda x, a: x * a),
    ("a * x (a view)", lambda rng: [_view_of_a_larger_array(rng)], lambda x, a: a * x),
    ("a - x (a row)", lambda rng: [_block(rng, SHAPE[1:])], lambda x, a: a - x),
    ("x / a", lambda rng: [_block(rng)], lambda x, a: x / a),
    ("x @ a", lambda rng: [_block(rng, (SHAPE[1], SHAPE[1]))], lambda x, a: x @ a),
    ("a @ x", lambda rng: [_block(rng, (SHAPE[0], SHAPE[0]))], lambda x, a: a @ x),
    ("np.multiply(x, a)", lambda rng: [_block(rng)], lambda x, a: np.multiply(x, a)),
    ("np.dot(x, a)", lambda rng: [_block(rng, (SHAPE[1], SHAPE[1]))],
     lambda x, a: np.dot(x, a)),
    ("einsum", lambda rng: [_block(rng, (SHAPE[1], SHAPE[1]))],
     lambda x, a: cnp.einsum("ij,jk->ik", x, a)),
    ("where(mask, x, a)", lambda rng: [rng.random(SHAPE) < 0.5, _block(rng)],
     lambda x, m, a: cr.where(m, x, a)),
    ("maximum(x, a)", lambda rng: [_block(rng)], lambda x, a: cr.maximum(x, a)),
    ("clip(x, lo, hi)", lambda rng: [_block(rng) - 1.0, _block(rng) + 0.5],
     lambda x, lo, hi: cr.clip(x, lo, hi)),
    ("x[rows]", lambda rng: [_rows(rng)], lambda x, i: x[i]),
    ("take_along_axis", lambda rng: [_columns(rng)],
     lambda x, i: cnp.take_along_axis(x, i, axis=1)),
    ("x.at[rows].set(a)", lambda rng: [_rows(rng), _block(rng)],
     lambda x, i, a: x.at[i].set(a * x[i])),
    ("x.at[rows].add(a)", lambda rng: [_rows(rng), _block(rng)],
     lambda x, i, a: x.at[i].add(a * x[i])),
    ("sin", lambda rng: [], lambda x: cr.sin(x)),
    ("x * x", lambda rng: [], lambda x: x * x),
    ("tanh(x) + x", lambda rng: [], lambda x: cr.tanh(x) + x),
]


# --- the writes ----------------------------------------------------------------------

def _operand_writes(a):
    """Every way a user writes into an array they own (and that a graph copied); each
    changes every entry, so a walk that read the array would see other numbers."""
    if a.dtype == bool:
        return [lambda: np.logical_not(a, out=a), lambda: a.__setitem__(Ellipsis, ~a)]
    if a.dtype.kind in "iu":  # an index array: another valid index in each entry
        return [lambda: np.copyto(a, np.where(a > 0, a - 1, a + 1))]
    ways = [lambda: a.__iadd__(7.0), lambda: np.multiply(a, -3.0, out=a),
            lambda: a.fill(99.0), lambda: np.copyto(a, a + 1.0),
            lambda: a.__setitem__(Ellipsis, a * 2.0 + 0.5)]
    if a.base is not None:  # through the array it is a view of
        ways.append(lambda: a.base.__setitem__(Ellipsis, -5.0))
    return ways


def _tensor_writes(t):
    """Every way to write into a Tensor's array; each must be refused while the graph
    can still be walked."""
    def under_no_grad_add():
        with cr.no_grad():
            t.__iadd__(1.0)

    def under_no_grad_set():
        with cr.no_grad():
            t.__setitem__(0, 5.0)

    return [lambda: t.data.__setitem__(0, 5.0), lambda: t.data.__iadd__(1.0),
            lambda: np.add(t.data, 1.0, out=t.data), lambda: np.asarray(t).fill(0.0),
            under_no_grad_add, under_no_grad_set]


# --- a program -----------------------------------------------------------------------

class Program:
    """``steps`` ops applied one after another to the live tensor; ``operands`` the
    arrays each step reads; ``weights`` for the scalar loss."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(zlib.crc32(f"writes/{seed}".encode()))
        rng = self.rng
        self.x0 = rng.uniform(-1.0, 1.0, SHAPE)
        self.steps = [OPS[k] for k in rng.integers(0, len(OPS), rng.integers(2, 6))]
        self.operands = [make(rng) for _, make, _ in self.steps]
        self.weights = rng.standard_normal(SHAPE)
        self.walk = ["backward", "vjp", "second order", "jit"][rng.integers(0, 4)]

    def forward(self, x, operands):
        """The loss, and the results the steps made (the graph saved some of them)."""
        results, h = [], x
        for (_, _, op), args in zip(self.steps, operands):
            h = op(h, *args)
            results.append(h)
        return cr.sum(h * self.weights), results

    def gradient(self, operands, between=None):
        """d loss / dx (and, for ``second order``, d/dx of sum(grad * weights[0]))
        walked after ``between(x, results)`` ran (results None for ``cr.vjp``, whose
        intermediate values are the transform's own)."""
        if self.walk == "jit":  # a program traced at the first call, replayed after
            step = cr.jit(cr.grad(lambda x: self.forward(x, operands)[0]))
            first = step(self.x0)
            if between:
                between(None, None)
            return [first, step(self.x0)]
        if self.walk == "vjp":  # x the user's own array, which they may write too
            x = self.x0.copy()
            _, pullback = cr.vjp(lambda x: self.forward(x, operands)[0], x)
            if between:
                between(x, None)
            (g,) = pullback(1.0)
            return [np.asarray(g)]
        x = cr.tensor(self.x0.copy(), requires_grad=True)
        y, results = self.forward(x, operands)
        if between:
            between(x, results)
        if self.walk == "backward":
            y.backward()
            return [x.grad.copy()]
        y.backward(create_graph=True)
        first, x.grad = x.grad, None
        if not first.requires_grad:  # a program linear in x: no second derivative
            return [np.asarray(first.data).copy(), np.zeros(SHAPE)]
        cr.sum(first * self.weights[0]).backward()
        return [np.asarray(first.data).copy(), x.grad.copy()]


def _describe(program):
    return f"{' -> '.join(name for name, _, _ in program.steps)} ({program.walk})"


@pytest.mark.parametrize("seed", [pytest.param(s, marks=[pytest.mark.slow] if s >= 20 else [])
                                  for s in range(COUNT)])
def test_writes_between_forward_and_backward_change_nothing_or_raise(seed):
    program = Program(seed)
    arrays = [a for args in program.operands for a in args]
    untouched = copy.deepcopy(arrays)
    expected = program.gradient(copy.deepcopy(program.operands))
    rng = program.rng
    written, refused = [], []  # (refused: the tensor writes that raised)

    def write(x, results):
        for k in rng.permutation(len(arrays))[:3]:
            ways = _operand_writes(arrays[k])
            ways[rng.integers(0, len(ways))]()  # allowed: the graph kept a copy
            written.append(k)
        if x is None:  # cr.jit: nothing of a graph outlives a call
            refused.append("none: a jitted call")
            return
        if results is None:  # cr.vjp's point, an ndarray: the pullback kept a copy
            x += 7.0
            refused.append("none: the point was written")
            return
        # the leaf, or a result a later step (or the loss) saved
        target = [x, *results][rng.integers(0, len(results) + 1)]
        before = np.array(target.data, copy=True)
        ways = _tensor_writes(target)
        with pytest.raises((ValueError, RuntimeError),
                           match="read-only|saved by a recorded graph"):
            ways[rng.integers(0, len(ways))]()
        np.testing.assert_array_equal(target.data, before)
        refused.append(target)

    got = program.gradient(program.operands, between=write)
    assert refused, _describe(program)
    for k in written:  # the writes took place: a walk that read them would differ
        assert not np.array_equal(arrays[k], untouched[k]), _describe(program)
    if program.walk == "jit":  # the first call's numbers, then the written arrays'
        program.walk = "backward"
        expected = [expected[0], *program.gradient(copy.deepcopy(program.operands))]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e, err_msg=_describe(program))
