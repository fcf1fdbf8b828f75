"""The eager engine's shortcuts against the plain code they stand in for, bit for bit.

``backward.FAST_PATHS`` lets the backward walk call an operation's pullback itself and
pass on a VJP that already has its argument's shape and dtype, where ``_pullback`` and
``_fit`` would otherwise be called; ``Primitive.pullback`` looks a single argument's rule
up in its table; ``ReverseTracer._apply_primitive`` unwraps its arguments as
``Tracer._unwrap_top`` does. Each test computes gradients both ways (the plain way with
the shortcut switched off, or by the general function) and compares every number
exactly: the same dtype, the same shape, the same bytes.
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import backward, rules as ops
from chainrule.graph import topological_order
from chainrule.transforms import functional
from chainrule.transforms.reverse import ReverseTracer
from chainrule.transforms.tracer import Tracer

RNG = np.random.default_rng(47)
X = RNG.uniform(-1.5, 1.5, 10)
A = RNG.normal(size=(4, 3))
W = RNG.normal(size=3)


def f1(x):
    return cnp.sum(cnp.sin(x) * x + cnp.exp(-x * x) / (1 + x * x)) + cnp.sum(cnp.tanh(x)) ** 2


def log_density(theta, X=A, y=np.arange(4.0)):
    w, log_sigma = theta[:3], theta[3]
    r = y - X @ w
    return -4 * log_sigma - 0.5 * cnp.exp(-2 * log_sigma) * cnp.sum(r * r) - 0.5 * cnp.sum(w * w)


def broadcasting(x):  # a row against a column, a scalar, a reduction: _fit sums axes
    return cnp.sum(x[:, None] * x[None, :3] + 2.0) + cnp.mean(cnp.maximum(x, 0.1))


def mixed_dtypes(x):  # a float32 input meeting float64 constants: _fit casts back
    return cnp.sum(x * np.float64(1.5) + cnp.cos(x)) * 2.0


def complex_inside(x):  # a complex intermediate of a real input: the real part
    z = x * (1 + 2j)
    return cnp.real(cnp.sum(z * cnp.conj(z) + cnp.exp(z)))


def same_operand_twice(x):  # one node reaching an argument by two paths
    y = x * x
    return cnp.sum(y * y + y)


def matrix(w):
    return cnp.sum(cnp.tanh(A @ w) ** 2) + w @ w


def nested(x):  # grad of a grad: the outer level's tracers inside the inner walk
    return cnp.sum(cr.grad(lambda y: cnp.sum(cnp.sin(y * x)))(x) * x)


CASES = [
    (f1, X), (log_density, np.append(W, 0.3)), (broadcasting, X),
    (mixed_dtypes, X.astype(np.float32)), (complex_inside, X), (same_operand_twice, X),
    (matrix, W), (nested, X[:4]),
]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def both_ways(monkeypatch, compute):
    fast = compute()
    monkeypatch.setattr(backward, "FAST_PATHS", False)
    plain = compute()
    monkeypatch.setattr(backward, "FAST_PATHS", True)
    return fast, plain


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_grad_and_value_and_grad_equal_the_plain_walk(monkeypatch, f, x):
    fast, plain = both_ways(monkeypatch, lambda: (cr.grad(f)(x), cr.value_and_grad(f)(x)))
    same(fast[0], plain[0])
    same(fast[1][0], plain[1][0])
    same(fast[1][1], plain[1][1])


@pytest.mark.parametrize("f, x", CASES[:-1], ids=[f.__name__ for f, _ in CASES[:-1]])
def test_tensor_backward_equals_the_plain_walk(monkeypatch, f, x):
    def compute():
        t = cr.tensor(x.copy(), requires_grad=True)
        f(t).backward()
        return t.grad
    fast, plain = both_ways(monkeypatch, compute)
    same(fast, plain)


def test_jacobian_and_hessian_equal_the_plain_walk(monkeypatch):
    # jacrev's batch of cotangents and the Hessian's graph take the general code;
    # the inner walks of a Hessian take the shortcuts
    for transform in (cr.jacrev, cr.hessian, cr.jacfwd):
        fast, plain = both_ways(monkeypatch, lambda: transform(f1)(X))
        same(fast, plain)


def test_the_shortcut_is_taken(monkeypatch):
    # the walk on arrays of matching shape and dtype never reaches _fit
    calls = []
    real_fit = backward._fit
    monkeypatch.setattr(backward, "_fit", lambda *a: calls.append(1) or real_fit(*a))
    cr.grad(lambda x: cnp.sum(cnp.sin(x) * cnp.cos(x)))(X)
    assert not calls
    monkeypatch.setattr(backward, "FAST_PATHS", False)
    calls.clear()
    cr.grad(lambda x: cnp.sum(cnp.sin(x) * cnp.cos(x)))(X)
    assert len(calls) == 5  # sum, multiply's two operands, sin, cos


def test_single_rule_lookup_equals_vjp():
    g, x, y = RNG.normal(size=5), RNG.normal(size=5), RNG.normal(size=5)
    for prim, args in ((ops.multiply, (x, y)), (ops.sin, (x,)), (ops.add, (x, y)),
                       (ops.divide, (x, y)), (_sum_of, (x, y, x))):
        assert isinstance(prim, cr.Primitive)
        ans = prim(*args)
        for argnums in [(i,) for i in range(len(args))] + [tuple(range(len(args)))]:
            plain = [prim.vjp(i)(g, ans, *args) for i in argnums]
            got = prim.pullback(g, ans, args, {}, argnums)
            assert len(got) == len(plain)
            for a, b in zip(got, plain):
                same(a, b)


def test_unwrapping_equals_unwrap_top():
    # levels mixed: the highest level's tracers are the operands, others stay whole
    outer, inner = ReverseTracer.start(X, 3), ReverseTracer.start(X * 2, 5)
    inner2 = ReverseTracer.start(X * 3, 5)
    for args in ((inner, 2.0), (2.0, inner), (outer, inner, inner2), (inner, outer),
                 (inner, inner2, outer, X)):
        level, values, positions = Tracer._unwrap_top.__func__(ReverseTracer, args)
        node = ReverseTracer._apply_primitive(_sum_of, args, {})
        assert node._level == level
        assert list(node._grad_argnums) == positions
        assert list(node._prev) == [args[i] for i in positions]
        for got, want in zip(node._raw_args, values):
            assert got is want or (type(want) is np.ndarray and np.array_equal(got, want))


_sum_of = cr.Primitive(lambda *xs: sum(xs), "sum_of", variadic=True)
_sum_of.defvjp(lambda g, ans, *xs, argnum: g)


def test_value_and_grad_seed_is_what__seed_makes(monkeypatch):
    # value_and_grad's seed skips _seed, which hands such a seed back as it is
    seen = []
    real = functional._ReverseRun.pullback

    def spy(self, cotangents, batch_shape=(), seeded=False):
        if seeded:
            seen.extend(functional._seed(leaf, cot) is cot
                        for leaf, cot in zip(self.out_leaves, cotangents))
        return real(self, cotangents, batch_shape, seeded)
    monkeypatch.setattr(functional._ReverseRun, "pullback", spy)
    cr.grad(lambda x: cnp.sum(x * x))(X.astype(np.float32))
    cr.grad(f1)(X)
    cr.grad(lambda z: z * z, holomorphic=True)(1 + 2j)
    cr.value_and_grad(lambda x: cnp.sum(x)[None])(X)  # a size-1 output of shape (1,)
    assert len(seen) == 4 and all(seen)


def test_array_results_are_what__in_kind_gives():
    for g in (X, X.astype(np.float32), X * 1j, np.full((), 2.0)):
        assert functional._in_kind(g, "array", g) is g
    for f, x in CASES:
        same(cr.grad(f)(x), functional._in_kind(cr.grad(f)(x), "array", x))


def test_each_step_is_told_the_same(monkeypatch):
    # on_step (backward(explain=True)'s story) sees the rules' own results either way
    def steps():
        told = []
        t = cr.tensor(np.append(W, 0.3), requires_grad=True)
        out = log_density(t)
        order = topological_order(out)
        backward.backward_pass({id(out): (out, np.ones(()), False)}, order,
                               on_step=lambda node, argnum, g, vjp, fitted:
                               told.append((node._op.name, argnum, type(vjp), type(fitted),
                                            np.asarray(vjp).tobytes(),
                                            np.asarray(fitted).tobytes())))
        return told
    fast, plain = both_ways(monkeypatch, steps)
    assert fast == plain and any(t[2] is not np.ndarray for t in fast)


def test_plain_keywords_hold_no_batch_and_no_library():
    # Primitive.__call__ skips _batched_param and _in_keywords for keywords of these
    # types: both find nothing in them
    from chainrule.primitive import _PLAIN, _batched_param, _in_keywords
    samples = [np.ones(2), 1.5, 3, True, np.float64(1), np.float32(1), np.int64(1),
               np.bool_(True), None, slice(1, None), "mean"]
    # (np.dtype itself: NumPy's dtypes are instances of its subclasses)
    assert {type(v) for v in samples} == set(_PLAIN) - {np.dtype}
    for value in samples:
        assert _batched_param({"k": value}) is None
        assert _in_keywords((np.ones(2),), {"k": value}) is None
