"""chainrule.rules.fused: the speed overrides give the same numbers as the plain rules they
replace (forward, backward, second order, forward mode), and the library without them
is complete and correct.

Each override is compared with the composition of plain operations it stands for:
``linear`` with ``matmul(x, W.T) + b``, ``linear_relu`` with ``relu(matmul(x, W.T) + b)``
(W in PyTorch's layout, (out, in)),
``cross_entropy`` with ``-mean(log_softmax(logits)[rows, labels])``.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
from chainrule.rules import fused
from seeds_and_tolerances import per_test_generator

ROOT = Path(__file__).resolve().parents[1]
RNG = per_test_generator(7)


def plain_linear(x, w, b):
    return cr.matmul(x, cr.swapaxes(w, -1, -2)) + b


def plain_linear_relu(x, w, b):
    return cr.relu(cr.matmul(x, cr.swapaxes(w, -1, -2)) + b)


def plain_cross_entropy(logits, labels):
    return -cr.mean(cr.log_softmax(logits, axis=-1)[np.arange(len(labels)), labels])


def layer_inputs(batch_shape=(5,)):
    x = RNG.standard_normal(batch_shape + (3,))
    w = RNG.standard_normal((4, 3))   # (out, in)
    b = RNG.standard_normal(4)
    # keep relu's inputs away from its kink, where a rounding could flip a mask
    z = x @ w.T + b
    b = b + np.where(np.abs(z).min(axis=tuple(range(z.ndim - 1))) < 0.05, 0.1, 0.0)
    return x, w, b


CASES = {
    "linear": (fused.linear, plain_linear),
    "linear_relu": (fused.linear_relu, plain_linear_relu),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("batch_shape", [(5,), (2, 3)], ids=["matrix", "batched"])
def test_a_fused_layer_equals_its_plain_composition(name, batch_shape):
    fused_op, plain_op = CASES[name]
    arrays = layer_inputs(batch_shape)
    inputs_a = [cr.tensor(a, requires_grad=True) for a in arrays]
    plain = [cr.tensor(a, requires_grad=True) for a in arrays]
    y, z = fused_op(*inputs_a), plain_op(*plain)
    np.testing.assert_allclose(y.data, z.data, rtol=1e-14, atol=1e-14)
    # backward, with a cotangent that is not all ones
    u = RNG.standard_normal(y.shape)
    (y * u).sum().backward()
    (z * u).sum().backward()
    for f, p in zip(inputs_a, plain):
        np.testing.assert_allclose(f.grad, p.grad, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fused_layer_has_the_plain_second_derivatives_and_tangents(name):
    fused_op, plain_op = CASES[name]
    x, w, b = layer_inputs()
    for argnum in range(3):
        def through(op):
            def f(*args):
                return cr.sum(cr.tanh(op(*args)))
            return f
        h_fused = cr.hessian(through(fused_op), argnums=argnum)(x, w, b)
        h_plain = cr.hessian(through(plain_op), argnums=argnum)(x, w, b)
        np.testing.assert_allclose(h_fused, h_plain, rtol=1e-12, atol=1e-12)
        j_fused = cr.jacfwd(fused_op, argnums=argnum)(x, w, b)
        j_plain = cr.jacfwd(plain_op, argnums=argnum)(x, w, b)
        np.testing.assert_allclose(j_fused, j_plain, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("rows, classes", [(6, 4), (3, 5), (4, 4)])
def test_fused_cross_entropy_equals_the_plain_composition(rows, classes):
    """Fewer classes than rows (6, 4) runs class-major, the others row-major: both
    give the plain composition's numbers."""
    logits = RNG.standard_normal((rows, classes))
    labels = np.arange(rows) * 7 % classes
    a, b = cr.tensor(logits, requires_grad=True), cr.tensor(logits, requires_grad=True)
    one_node, plain = fused.cross_entropy(a, labels), plain_cross_entropy(b, labels)
    assert one_node.item() == pytest.approx(plain.item(), rel=1e-14)
    one_node.backward(), plain.backward()
    np.testing.assert_allclose(a.grad, b.grad, rtol=1e-13, atol=1e-15)
    for transform in (cr.hessian, cr.jacfwd, cr.jacrev):
        np.testing.assert_allclose(
            transform(lambda z: fused.cross_entropy(z, labels))(logits),
            transform(lambda z: plain_cross_entropy(z, labels))(logits),
            rtol=1e-12, atol=1e-14)


def test_class_major_cross_entropy_hands_a_leaf_an_ordinary_gradient():
    """The class-major work stays inside: a leaf's gradient is a C-ordered array of
    the logits' shape and dtype, equal to softmax - one_hot over N."""
    logits = RNG.standard_normal((8, 3)).astype(np.float32)
    labels = np.array([0, 1, 2, 2, 1, 0, 0, 1])
    z = cr.tensor(logits, requires_grad=True)
    fused.cross_entropy(z, labels).backward()
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected = (e / e.sum(axis=1, keepdims=True) - np.eye(3)[labels]) / 8
    assert z.grad.dtype == np.float32 and z.grad.flags.c_contiguous
    np.testing.assert_allclose(z.grad, expected, rtol=1e-6, atol=1e-7)


def test_nn_uses_the_plain_rules_when_the_overrides_are_off():
    x, w, b = layer_inputs()
    previous = fused.set_enabled(False)
    try:
        y = cr.nn.functional.linear(cr.tensor(x), cr.tensor(w, requires_grad=True),
                                    cr.tensor(b), activation="relu")
        loss = cr.nn.functional.cross_entropy(y, [0, 1, 2, 3, 0])
        model = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=0), cr.nn.ReLU())
        out = model(cr.tensor(x))
    finally:
        fused.set_enabled(previous)
    assert y._op.name == "relu" and loss._op.name != "cross_entropy"
    assert out._op.name == "relu"
    assert fused.enabled() is previous


@pytest.mark.slow
def test_the_library_without_overrides_passes_the_network_tests():
    """CHAINRULE_FAST=0: the layers, losses and training against PyTorch, plain rules only."""
    env = dict(os.environ, CHAINRULE_FAST="0")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(ROOT / "tests" / "test_nn.py"), "-k", "not one_operation"],
                            env=env, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


# ---------------------------------------------------------------------------------------
# What the overrides rely on: a shared pullback, and a residual kept by the forward
# ---------------------------------------------------------------------------------------

def test_cross_entropy_keeps_its_softmax_for_an_ordinary_backward_pass_only():
    """The softmax the forward computed reaches the pullback in an ordinary backward
    pass; where the gradient's own graph is built (create_graph) the plain rule runs."""
    seen = []
    original = fused.cross_entropy.shared_pullback

    def spy(g, ans, logits, labels, needs, residual):
        seen.append(residual is not None)
        return original(g, ans, logits, labels, needs, residual)

    logits = cr.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], requires_grad=True)
    fused.cross_entropy.shared_pullback = spy
    try:
        fused.cross_entropy(logits, np.array([1, 2])).backward()
        once = logits.grad.copy()
        logits.grad = None
        fused.cross_entropy(logits, np.array([1, 2])).backward(create_graph=True)
    finally:
        fused.cross_entropy.shared_pullback = original
    assert seen == [True]
    np.testing.assert_allclose(logits.grad.data, once, rtol=1e-15)


def test_a_fused_operation_gives_all_its_gradients_in_one_call():
    """One call returns every argument's gradient (they share work), told by ``needs``
    which ones anyone asked for. It works in a backward pass, second order, row by row
    in jacrev (a user's rules are not batched), and on Values."""
    calls = []

    def both(g, ans, x, y, needs, residual):
        calls.append(needs)
        shared = 3.0 * g  # the work both gradients share
        return (shared * y if needs[0] else None, shared * x if needs[1] else None)

    scaled_product = fused.Fused(lambda x, y: 3.0 * x * y, "scaled_product", both)
    scaled_product.defvjp(lambda g, ans, x, y: 3.0 * g * y, lambda g, ans, x, y: 3.0 * g * x)
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = cr.tensor([5.0, 7.0])                           # needs no gradient
    scaled_product(x, y).sum().backward()
    assert x.grad.tolist() == [15.0, 21.0] and calls == [(True, False)]

    y.requires_grad_()
    x.grad = None
    scaled_product(x, y).sum().backward()
    assert calls[-1] == (True, True) and y.grad.tolist() == [3.0, 6.0]

    # d/dx of sum(d/dx 3 x^2 y) = 6 y, through a graph of the gradient
    dx = cr.grad(lambda x: scaled_product(x, x).sum())
    np.testing.assert_allclose(cr.jacrev(dx)(np.array([1.0, 2.0])), 6.0 * np.eye(2))
    np.testing.assert_allclose(cr.jacrev(lambda x: scaled_product(x, x))(np.array([1.0, 2.0])),
                               np.diag([6.0, 12.0]))
    a = cr.Value(2.0)
    out = scaled_product(a, cr.Value(4.0))
    out.backward()
    assert out.data == 24.0 and a.grad == 12.0


def test_a_shared_pullback_that_leaves_out_a_needed_gradient_is_an_error():
    half = fused.Fused(lambda x, y: x * y, "half_rule",
                      lambda g, ans, x, y, needs, residual: (g * y, None))
    x, y = cr.tensor(1.0, requires_grad=True), cr.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match="half_rule: its shared pullback gave None for "
                                        "argument 1, which needs a gradient"):
        half(x, y).backward()
    short = fused.Fused(lambda x, y: x * y, "short_rule",
                       lambda g, ans, x, y, needs, residual: g * y)
    with pytest.raises(TypeError, match="short_rule: its shared pullback must return a "
                                        "tuple of 2 gradients, one per argument; got"):
        short(x, y).backward()
    with pytest.raises(TypeError, match="half_rule: argument 0 needs a reverse-mode "
                                        "derivative"):  # row by row, in jacrev: its rules
        cr.jacrev(lambda v: half(v, v))(np.array([1.0, 2.0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_square_or_a_cube_by_multiplies_equals_pow(dtype):
    """x ** 2 and x ** 3 are computed as multiplies (rules/elementwise.py, _pow): the
    square is pow's own result, the cube within two units in the last place (two
    roundings)."""
    from chainrule.rules.elementwise import _pow
    x = (RNG.standard_normal(10_000) * 10.0 ** RNG.uniform(-3, 3, 10_000)).astype(dtype)
    np.testing.assert_array_equal(_pow(x, 2), np.power(x, 2))
    np.testing.assert_array_max_ulp(_pow(x, 3), np.power(x, 3), maxulp=2)
    for b in (-1, 4, np.float64(3.0)):   # every other exponent is pow's
        np.testing.assert_array_equal(_pow(x, b), np.power(x, b))
    np.testing.assert_array_equal(_pow(np.abs(x), 2.5), np.power(np.abs(x), 2.5))
    assert _pow(x, 3).dtype == dtype


@pytest.mark.parametrize("a_shape, b_shape", [((7, 1, 5), (5, 3)), ((4, 6, 5), (5, 3)),
                                              ((2, 3, 4, 5), (5, 2)), ((0, 2, 5), (5, 3)),
                                              ((4, 6, 5), (4, 5, 3)), ((6, 5), (5, 3))])
def test_a_stack_of_matrices_times_one_matrix_equals_numpys_matmul(a_shape, b_shape):
    """matmul computes a stack times one matrix as one taller product
    (rules/linalg.py, _stacked_matmul): the same numbers as np.matmul, for contiguous
    and transposed stacks alike."""
    from chainrule.rules.linalg import _stacked_matmul
    a, b = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
    np.testing.assert_allclose(_stacked_matmul(a, b), np.matmul(a, b), rtol=1e-13, atol=1e-13)
    at = np.swapaxes(RNG.standard_normal(a_shape[:-2] + a_shape[:-3:-1]), -1, -2)
    np.testing.assert_allclose(_stacked_matmul(at, b), np.matmul(at, b),
                               rtol=1e-13, atol=1e-13)
    assert _stacked_matmul(a.astype(np.float32), b.astype(np.float32)).dtype == np.float32


# ---------------------------------------------------------------------------------------
# gru_sequence (chainrule.rules.fused_recurrent): a GRU layer's recurrence as one node,
# against gru_cell at every step (the plain composition nn.GRU runs without overrides)
# ---------------------------------------------------------------------------------------

def plain_gru_sequence(gi, h0, w_hh, b_hh):
    from chainrule.nn.recurrent import gru_cell
    h, out = h0, []
    for t in range(gi.shape[0]):
        gh = cr.matmul(h, cr.swapaxes(w_hh, 0, 1))
        h = gru_cell(gi[t], gh if b_hh is None else gh + b_hh, h)
        out.append(h)
    return cr.stack(out)


def gru_inputs(steps=4, rows=3, hidden=2, dtype=np.float64):
    return [RNG.standard_normal(shape).astype(dtype) for shape in
            ((steps, rows, 3 * hidden), (rows, hidden), (3 * hidden, hidden), (3 * hidden,))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_sequence_equals_the_plain_steps(dtype, bias):
    """Forward and an ordinary backward pass (the kept gates, NumPy's loop) give the
    numbers of gru_cell step by step, in float64 and float32, with and without b_hh."""
    from chainrule.rules.fused_recurrent import gru_sequence
    arrays = gru_inputs(dtype=dtype)
    if not bias:
        arrays[3] = None
    fast = [None if a is None else cr.tensor(a, requires_grad=True) for a in arrays]
    plain = [None if a is None else cr.tensor(a, requires_grad=True) for a in arrays]
    y, z = gru_sequence(*fast), plain_gru_sequence(*plain)
    tol = 1e-14 if dtype == np.float64 else 1e-6
    assert y.dtype == dtype
    np.testing.assert_allclose(y.data, z.data, rtol=tol, atol=tol)
    u = RNG.standard_normal(y.shape).astype(dtype)
    (y * u).sum().backward()
    (z * u).sum().backward()
    for f, p in zip(fast, plain):
        if f is not None:
            assert f.grad.dtype == dtype
            np.testing.assert_allclose(f.grad, p.grad, rtol=10 * tol, atol=10 * tol)


def test_gru_sequence_has_the_plain_second_derivatives_and_tangents():
    from chainrule.rules.fused_recurrent import gru_sequence
    arrays = gru_inputs(steps=3, rows=2)
    for argnum in range(4):
        def through(op):
            return lambda *args: cr.sum(cr.tanh(op(*args)))
        h_fast = cr.hessian(through(gru_sequence), argnums=argnum)(*arrays)
        h_plain = cr.hessian(through(plain_gru_sequence), argnums=argnum)(*arrays)
        np.testing.assert_allclose(h_fast, h_plain, rtol=1e-12, atol=1e-12)
        j_fast = cr.jacfwd(gru_sequence, argnums=argnum)(*arrays)
        j_plain = cr.jacfwd(plain_gru_sequence, argnums=argnum)(*arrays)
        np.testing.assert_allclose(j_fast, j_plain, rtol=1e-13, atol=1e-13)
        r_fast = cr.jacrev(gru_sequence, argnums=argnum)(*arrays)
        np.testing.assert_allclose(r_fast, j_plain, rtol=1e-13, atol=1e-13)


def test_gru_keeps_its_gates_for_an_ordinary_backward_pass_only():
    """The fast pullback runs on the gates the forward kept; create_graph takes the
    plain rules (and so the graph of the gradient)."""
    from chainrule.rules import fused_recurrent
    arrays = gru_inputs(steps=3, rows=2)
    calls = []
    original = fused_recurrent.gru_sequence.shared_pullback

    def spy(g, ans, *args):
        calls.append(args[-1] is not None)   # the residual
        return original(g, ans, *args)
    fused_recurrent.gru_sequence.shared_pullback = spy
    try:
        h0 = cr.tensor(arrays[1], requires_grad=True)
        fused_recurrent.gru_sequence(arrays[0], h0, arrays[2], arrays[3]).sum().backward()
        assert calls == [True]
        fused_recurrent.gru_sequence(arrays[0], h0, arrays[2], arrays[3]).sum().backward(
            create_graph=True)
        assert calls == [True] and h0.grad is not None
    finally:
        fused_recurrent.gru_sequence.shared_pullback = original


def test_gru_takes_its_fast_path_under_jit_too():
    """cr.jit records the fast forward and pullback the eager run takes (the same NumPy
    calls, so a replay gives the eager numbers bit for bit); another library's arrays
    take the plain rules, eagerly and under cr.jit alike."""
    from chainrule.rules import fused_recurrent
    arrays = gru_inputs(steps=3, rows=2)

    def gradients(*arrays):
        ts = [cr.tensor(a, requires_grad=True) for a in arrays]
        (fused_recurrent.gru_sequence(*ts) ** 2).sum().backward()
        return [t.grad for t in ts]

    plain = []
    original = fused_recurrent._plain_gradients
    fused_recurrent._plain_gradients = lambda *args: (plain.append(1), original(*args))[1]
    try:
        jitted = cr.jit(gradients)
        for scale in (1.0, 1.01):
            scaled = [a * scale for a in arrays]
            for e, j in zip(gradients(*scaled), jitted(*scaled)):
                assert np.array_equal(np.asarray(e), np.asarray(j))
        assert plain == []
        torch = pytest.importorskip("torch")
        as_torch = [torch.from_numpy(a) for a in arrays]
        for e, j in zip(gradients(*as_torch), cr.jit(gradients)(*as_torch)):
            np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-14)
        assert plain != []
    finally:
        fused_recurrent._plain_gradients = original


# ---------------------------------------------------------------------------------------
# attention and self_attention (chainrule.rules.fused_attention), against the plain
# composition MultiheadAttention runs without overrides
# ---------------------------------------------------------------------------------------

def plain_attention(q, k, v, mask, scale):
    scores = cr.matmul(q * scale, cr.swapaxes(k, -1, -2))
    return cr.matmul(cr.softmax(scores if mask is None else scores + mask, axis=-1), v)


def plain_self_attention(qkv, mask, heads, scale):
    *lead, length, width = qkv.shape
    x = cr.reshape(qkv, (*lead, length, 3, heads, width // (3 * heads)))
    q, k, v = (cr.swapaxes(x[..., i, :, :], -3, -2) for i in range(3))
    out = cr.swapaxes(plain_attention(q, k, v, mask, scale), -3, -2)
    return cr.reshape(out, (*lead, length, width // 3))


def attention_inputs(dtype=np.float64):
    q, k, v = (RNG.standard_normal(shape).astype(dtype) for shape in
               ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 2)))
    causal = np.where(np.triu(np.ones((5, 6), bool), 2), -np.inf, 0.0).astype(dtype)
    return q, k, v, causal


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("masked", [True, False])
def test_fused_attention_equals_the_plain_composition(dtype, masked):
    from chainrule.rules.fused_attention import attention, self_attention
    q, k, v, mask = attention_inputs(dtype)
    mask = mask if masked else None
    tol = 1e-13 if dtype == np.float64 else 1e-5
    fast = [cr.tensor(a, requires_grad=True) for a in (q, k, v)]
    plain = [cr.tensor(a, requires_grad=True) for a in (q, k, v)]
    y, z = attention(*fast, mask, scale=0.5), plain_attention(*plain, mask, 0.5)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.data, z.data, rtol=tol, atol=tol)
    u = RNG.standard_normal(y.shape).astype(dtype)
    (y * u).sum().backward()
    (z * u).sum().backward()
    for f, p in zip(fast, plain):
        assert f.grad.dtype == dtype
        np.testing.assert_allclose(f.grad, p.grad, rtol=tol, atol=tol)
    qkv = RNG.standard_normal((2, 6, 12)).astype(dtype)
    mask = np.where(np.triu(np.ones((6, 6), bool), 1), -np.inf, 0.0).astype(dtype) \
        if masked else None
    a, b = cr.tensor(qkv, requires_grad=True), cr.tensor(qkv, requires_grad=True)
    y, z = self_attention(a, mask, heads=2, scale=0.5), plain_self_attention(b, mask, 2, 0.5)
    np.testing.assert_allclose(y.data, z.data, rtol=tol, atol=tol)
    u = RNG.standard_normal(y.shape).astype(dtype)
    (y * u).sum().backward()
    (z * u).sum().backward()
    np.testing.assert_allclose(a.grad, b.grad, rtol=tol, atol=tol)


def test_fused_attention_has_the_plain_second_derivatives_and_tangents():
    from chainrule.rules.fused_attention import attention, self_attention
    q, k, v, _ = attention_inputs()
    mask = RNG.standard_normal((5, 6))                    # a float mask: differentiable
    args = (q, k, v, mask)
    for argnum in range(4):
        def fast(*a):
            return attention(*a, scale=0.5)

        def plain(*a):
            return plain_attention(*a, 0.5)
        h_fast = cr.hessian(lambda *a: cr.sum(cr.tanh(fast(*a))), argnums=argnum)(*args)
        h_plain = cr.hessian(lambda *a: cr.sum(cr.tanh(plain(*a))), argnums=argnum)(*args)
        np.testing.assert_allclose(h_fast, h_plain, rtol=1e-11, atol=1e-11)
        j_plain = cr.jacfwd(plain, argnums=argnum)(*args)
        np.testing.assert_allclose(cr.jacfwd(fast, argnums=argnum)(*args), j_plain,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cr.jacrev(fast, argnums=argnum)(*args), j_plain,
                                   rtol=1e-12, atol=1e-12)
    qkv, mask = RNG.standard_normal((2, 4, 12)), RNG.standard_normal((4, 4))
    for argnum in range(2):
        def fast_self(*a):
            return self_attention(*a, heads=2, scale=0.5)

        def plain_self(*a):
            return plain_self_attention(*a, 2, 0.5)
        h_fast = cr.hessian(lambda *a: cr.sum(cr.tanh(fast_self(*a))), argnums=argnum)(qkv, mask)
        h_plain = cr.hessian(lambda *a: cr.sum(cr.tanh(plain_self(*a))), argnums=argnum)(qkv,
                                                                                         mask)
        np.testing.assert_allclose(h_fast, h_plain, rtol=1e-11, atol=1e-11)
        j_plain = cr.jacfwd(plain_self, argnums=argnum)(qkv, mask)
        np.testing.assert_allclose(cr.jacfwd(fast_self, argnums=argnum)(qkv, mask), j_plain,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cr.jacrev(fast_self, argnums=argnum)(qkv, mask), j_plain,
                                   rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------
# layer_norm (chainrule.rules.fused_norm), against nn.functional.layer_norm's composition
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("affine", ["weight and bias", "weight", "none"])
def test_fused_layer_norm_equals_the_plain_composition(dtype, affine):
    from chainrule.rules.fused_norm import layer_norm
    x = RNG.standard_normal((2, 3, 5)).astype(dtype)
    w = RNG.standard_normal(5).astype(dtype) if affine != "none" else None
    b = RNG.standard_normal(5).astype(dtype) if affine == "weight and bias" else None
    fast = [None if a is None else cr.tensor(a, requires_grad=True) for a in (x, w, b)]
    plain = [None if a is None else cr.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = layer_norm(*fast, eps=1e-5)
    z = cr.nn.functional.layer_norm(plain[0], 5, plain[1], plain[2], eps=1e-5)
    tol = 1e-13 if dtype == np.float64 else 1e-5
    assert y.dtype == dtype
    np.testing.assert_array_equal(y.data, z.data)           # the same operations
    u = RNG.standard_normal(y.shape).astype(dtype)
    (y * u).sum().backward()
    (z * u).sum().backward()
    for f, p in zip(fast, plain):
        if f is not None:
            assert f.grad.dtype == dtype
            np.testing.assert_allclose(f.grad, p.grad, rtol=tol, atol=tol)


def test_fused_layer_norm_has_the_plain_second_derivatives_and_tangents():
    from chainrule.rules.fused_norm import layer_norm
    args = (RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal(4))

    def fast(*a):
        return layer_norm(*a, eps=1e-5)

    def plain(x, w, b):
        return cr.nn.functional.layer_norm(x, 4, w, b, eps=1e-5)
    for argnum in range(3):
        h_fast = cr.hessian(lambda *a: cr.sum(cr.tanh(fast(*a))), argnums=argnum)(*args)
        h_plain = cr.hessian(lambda *a: cr.sum(cr.tanh(plain(*a))), argnums=argnum)(*args)
        np.testing.assert_allclose(h_fast, h_plain, rtol=1e-11, atol=1e-11)
        j_plain = cr.jacfwd(plain, argnums=argnum)(*args)
        np.testing.assert_allclose(cr.jacfwd(fast, argnums=argnum)(*args), j_plain,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cr.jacrev(fast, argnums=argnum)(*args), j_plain,
                                   rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------
# An embedding's gradient: rows of a table picked by one integer array, repeats adding up
# (index_add's flat-position path, rules/indexing.py), against NumPy's add.at on the rows
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("table, picked", [((5, 3), (7,)), ((5, 3, 2), (2, 4)),
                                            ((4, 2), (0,)), ((6, 1), (3, 3))])
def test_adding_into_picked_rows_equals_add_at_bit_for_bit(dtype, table, picked):
    from chainrule.rules.indexing import index_add
    x = RNG.standard_normal(table).astype(dtype)
    rows = RNG.integers(-table[0], table[0], picked)  # negative rows and repeats
    value = RNG.standard_normal(picked + table[1:]).astype(dtype)
    expected = x.copy()
    np.add.at(expected, rows, value)
    for index in (rows, (rows,)):
        got = index_add(x, value, index=index)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)
    broadcast = x.copy()
    np.add.at(broadcast, rows, 1.5)  # one number for every picked entry
    assert np.array_equal(index_add(x, 1.5, index=rows), broadcast)


def test_adding_into_a_row_past_the_end_is_refused_as_numpy_refuses():
    from chainrule.rules.indexing import index_add
    with pytest.raises(IndexError, match="index_add: an index is out of bounds for axis 0 "
                                         "with size 3"):
        index_add(np.zeros((3, 2)), 1.0, index=np.array([0, 3]))


def test_an_embeddings_gradient_is_the_sum_of_the_rows_gradients():
    table = cr.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    tokens = np.array([[1, 3, 1], [0, 1, 1]])
    weights = RNG.standard_normal((2, 3, 3))
    (cr.nn.functional.embedding(tokens, table) * weights).sum().backward()
    expected = np.zeros((4, 3))
    for token, w in zip(tokens.ravel(), weights.reshape(-1, 3)):
        expected[token] += w
    np.testing.assert_allclose(table.grad, expected, rtol=1e-14)


@pytest.mark.parametrize("rows", [1, 32, 64, 65])
def test_a_float32_layer_of_few_rows_equals_the_plain_product(rows):
    """fused.linear asks BLAS for (W @ x.T).T where x has few float32 rows and W many
    (the same products as x @ W.T, in OpenBLAS 1.7x faster at 32 rows): the same
    numbers, forward and backward, eagerly and replayed by cr.jit, and a result that
    arithmetic, reshapes and NumPy take like any array."""
    x = RNG.standard_normal((rows, 48)).astype(np.float32)
    w = RNG.standard_normal((72, 48)).astype(np.float32)  # 64 outputs or more
    b = RNG.standard_normal(72).astype(np.float32)
    u = RNG.standard_normal((rows, 72)).astype(np.float32)

    def step(x, w, b):
        grads = []
        for op in (fused.linear_relu, plain_linear_relu):
            xs = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
            y = op(*xs)
            (y * u).sum().backward()
            grads.append([y.data] + [t.grad for t in xs])
        return grads

    (fast, plain), (fast_jit, plain_jit) = step(x, w, b), cr.jit(step)(x, w, b)
    for a, p, aj, pj in zip(fast, plain, fast_jit, plain_jit):
        assert a.dtype == np.float32 and a.shape == p.shape
        np.testing.assert_allclose(a, p, rtol=2e-6, atol=2e-6)
        np.testing.assert_array_equal(aj, a)   # the replay: the eager numbers
        np.testing.assert_array_equal(pj, p)
    y = fused.linear(cr.tensor(x), cr.tensor(w), cr.tensor(b))
    # the same 48 products summed in another order (BLAS's choice per orientation): apart
    # by at most a few roundings of the terms' size, however small the sum
    bound = 48 * np.finfo(np.float32).eps * (np.abs(x) @ np.abs(w).T + np.abs(b))
    assert np.all(np.abs(y.reshape(-1).data - (x @ w.T + b).reshape(-1)) <= bound.reshape(-1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("turn", [True, False])
def test_a_large_product_turned_where_it_times_faster_gives_the_same_bits(
        monkeypatch, dtype, turn):
    """fused.linear times a large product both ways once per shape and dtype and asks
    BLAS for (W @ x.T).T where that is clearly faster and this machine's BLAS gives
    the same bits both ways: so the numbers are the plain product's to the last bit,
    forward and backward, eagerly and replayed by cr.jit. Here the timing is forced
    both ways."""
    rows, inputs, outputs = 1024, 128, 128  # 16.8 million multiply-adds: timed
    assert fused._TIMED_FROM <= rows * inputs * outputs <= fused._TIMED_UP_TO
    monkeypatch.setitem(fused._turn, (rows, inputs, outputs, np.dtype(dtype)), turn)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((rows, inputs)).astype(dtype)
    w = rng.standard_normal((outputs, inputs)).astype(dtype)
    b = rng.standard_normal(outputs).astype(dtype)
    u = rng.standard_normal((rows, outputs)).astype(dtype)

    def step(x, w, b):
        xs = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = fused.linear(*xs)
        (y * u).sum().backward()
        return [y.data] + [t.grad for t in xs]

    eager, replayed = step(x, w, b), cr.jit(step)(x, w, b)
    turned = turn and fused._same_bits(rows, inputs, outputs, np.dtype(dtype))
    assert eager[0].flags.f_contiguous == turned  # (the turned product: a transposed view)
    plain = (x @ w.T) + b
    np.testing.assert_array_equal(eager[0], plain)
    np.testing.assert_array_equal(eager[1], u @ w)
    np.testing.assert_array_equal(eager[2], u.T @ x)
    for a, r in zip(eager, replayed):
        assert a.dtype == dtype
        np.testing.assert_array_equal(r, a)


def test_the_timed_choice_is_made_once_per_shape_and_dtype():
    key = (1024, 128, 128, np.dtype(np.float64))
    fused._turn.pop(key, None)
    first = fused._turn_pays(*key)
    assert type(first) is bool and fused._turn[key] is first
    assert fused._turn_pays(*key) is first


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 48, 72), (32, 48, 72), (64, 784, 512), (1024, 128, 128)])
def test_a_product_is_turned_only_where_both_ways_give_the_same_bits_here(shape, dtype):
    """Whether (W @ x.T).T sums in x @ W.T's order depends on the machine's BLAS kernel:
    fused.linear asks once per shape and dtype, and where it found the same bits, any
    other numbers give the same bits too (the order of the sums is the kernel's, not the
    numbers')."""
    rows, inputs, outputs = shape
    rng = np.random.default_rng(rows + inputs)
    x = rng.standard_normal((rows, inputs)).astype(dtype)
    w = rng.standard_normal((outputs, inputs)).astype(dtype)
    if fused._same_bits(rows, inputs, outputs, np.dtype(dtype)):
        np.testing.assert_array_equal(x @ w.T, (w @ x.T).T)
    else:  # never turned: the plain product
        zero = np.zeros(outputs, dtype)
        y = fused.linear(cr.tensor(x), cr.tensor(w), cr.tensor(zero))
        assert not y.data.flags.f_contiguous
        np.testing.assert_array_equal(y.data, x @ w.T + zero)
