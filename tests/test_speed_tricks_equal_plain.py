"""Each speed trick of the library against the plain rule it accelerates, on a broad set of
inputs: several shapes (0-d and empty where the operation allows them), float32 and
float64, complex where the operation takes it, non-contiguous and transposed arrays,
broadcasting.

A trick is switched off the way the library offers (``backward.FAST_PATHS``,
``fused.set_enabled``, the short ways of ``cr.vmap`` replaced by the general path, a
cr.jit entry without its generated call), or its plain rule is called directly (a fused
operation's per-argument rules, ``Primitive.__call__``, ``np.matmul``). Where the two run
the same NumPy operations in the same order the results are compared bit for bit, with
their dtypes, shapes and kinds; where the trick legitimately sums in another order (one
tall product for a stack of products, a BLAS product asked for in the other orientation,
a recurrence run as NumPy's loop), the test says so and allows that many roundings.

The tricks and where each is held to its plain rule:

* the eager backward walk's shortcuts (``backward.FAST_PATHS``): tests/test_eager_fast_paths.py
  on a few functions of float64 vectors; here every dtype, 0-d, empty, transposed and
  broadcast leaves, and the ownership of the gradients it hands out;
* a fused operation's shared pullback (``rules/fused*.py``, ``Fused.pullback``) and its
  forward that keeps a residual (``forward_keeping``): tests/test_fused.py compares each
  with a composition of other operations; here each with its own plain per-argument rules
  and its plain forward;
* ``fused.linear``'s forward (one tall product for a stack, the in-place bias) against the
  plain composition, and the nn layers with the overrides on and off
  (``fused.set_enabled``: Linear + ReLU, GRU, self-attention, the Transformer layer's
  normalisation, cross_entropy class-major and row-major), eagerly and under vmap,
  jacrev, jacfwd and hessian;
* ``rules.linalg._stacked_matmul`` against ``np.matmul``: tests/test_fused.py in float64;
  here every dtype, empty stacks and vectors;
* ``cr.vmap``'s short ways (``batching._entrywise_on_arrays``, ``_kind_on_one_array``,
  ``_arithmetic_on_arrays``, ``_shape_on_one_array``): tests/test_vmap_fast_paths.py on
  the derivative table with ``assert_array_equal`` (which passes a float32 result for a
  float64 one); here the dtypes are compared too, over every dtype kind, empty and
  transposed batches;
* cr.jit's generated call (``Entry.fast_call``, made by ``codegen.call_function``) against
  the generic ``Entry.try_run``;
* ``primitive.call_unwrapped`` against ``Primitive.__call__``;
* power's square and cube by multiplies (``rules.elementwise._pow``) against ``np.power``:
  tests/test_fused.py on float32 and float64 arrays; here 0-d arrays, NumPy and Python
  scalars, the awkward numbers; integer, boolean and complex bases and Python numbers,
  which take pow itself;
* an embedding's gradient by ``add.at`` on flat positions (``rules.indexing._add_rows``)
  against ``add.at`` on the rows: tests/test_fused.py on three dtypes; here every dtype
  kind, mixed value dtypes, transposed tables, 0-d, unsigned and empty indices;
* micrograd's neuron as one node (``nn.scalar``, ``MLP(fused=True)``) against its chain
  of ``*`` and ``+`` nodes: tests/test_micrograd.py to 1e-12; here bit for bit, for every
  activation and awkward inputs.

Covered elsewhere, each beside its plain rule: the scalar engine's walk and its neuron's
nodes (tests/test_scalar_fast_paths.py), the stacked seeds of jacrev and jacfwd
(tests/test_jacobians_by_vmap.py), the rewrites, broadcast copies and 0-d buffers of a
cr.jit program (tests/test_jit_simplify.py, tests/test_jit_small_functions.py), its
kept buffers (tests/test_jit.py), its runs by blocks of rows (tests/test_jit.py,
tests/test_optim.py), the compiled update (tests/test_jit_fused_update.py) and the
compiled tier (tests/test_jit_native.py), fused.linear's turned product
(tests/test_fused.py), the bucketed DSATUR and the greedy colouring from CSR arrays
(tests/test_sparse_coloring.py), and ``Primitive.pullback``'s single-rule lookup
(tests/test_eager_fast_paths.py).
"""

import contextlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import backward
from chainrule import rules as ops
from chainrule.jit import entry as jit_entry
from chainrule.primitive import call_unwrapped
from chainrule.rules import fused
from chainrule.rules.fused_attention import attention, self_attention
from chainrule.rules.fused_norm import layer_norm
from chainrule.rules.fused_recurrent import gru_sequence
from chainrule.rules.linalg import _stacked_matmul
from chainrule.transforms import batching

from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(2026)

FLOATS = [np.float32, np.float64]


def draw(shape, dtype):
    """Numbers of ``dtype`` (complex: both parts drawn), from the running test's generator."""
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return np.asarray(x).astype(dtype)


def identical(a, b):
    """The same kind (ndarray or NumPy scalar), dtype, shape and bytes."""
    assert type(a) is type(b), (type(a), type(b))
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), np.max(np.abs(a - b), initial=0)


def close(a, b, dtype, roundings=50):
    """The same dtype and shape, and values apart by at most ``roundings`` units of the
    dtype's precision at the values' scale: for a trick that sums in another order."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    tol = roundings * np.finfo(dtype).eps * max(1.0, float(np.max(np.abs(b), initial=0)))
    np.testing.assert_allclose(a, b, rtol=0, atol=tol)


@contextlib.contextmanager
def overrides(flag):
    """The speed overrides on (True) or off (False) inside the block."""
    was_on = fused.set_enabled(flag)
    try:
        yield
    finally:
        fused.set_enabled(was_on)


# ---------------------------------------------------------------------------------------
# The backward walk's shortcuts (backward.FAST_PATHS)
# ---------------------------------------------------------------------------------------

def fast_and_plain_walks(monkeypatch, compute):
    """compute() with the walk's shortcuts, then with every step through _pullback and
    _fit: the walk runs the same NumPy operations either way."""
    fast = compute()
    monkeypatch.setattr(backward, "FAST_PATHS", False)
    plain = compute()
    monkeypatch.setattr(backward, "FAST_PATHS", True)
    return fast, plain


def layout(x, how):
    """x as given, as a transposed view of a C-ordered array, or as a reversed view."""
    if how == "transposed" and x.ndim >= 2:
        return np.ascontiguousarray(x.T).T
    if how == "reversed" and x.ndim >= 1:
        return np.ascontiguousarray(x[::-1])[::-1]
    return x


WALK_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
WALK_SHAPES = [(), (0,), (5,), (3, 4), (0, 4), (2, 3, 4)]


@pytest.mark.parametrize("how", ["contiguous", "transposed", "reversed"])
@pytest.mark.parametrize("shape", WALK_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", WALK_DTYPES, ids=lambda d: np.dtype(d).name)
def test_the_walks_shortcuts_give_the_plain_walks_gradients(monkeypatch, dtype, shape, how):
    """Leaves of every float and complex dtype, 0-d and empty, transposed and reversed
    views, a float32 vector broadcast against them, a NumPy float64 scalar and a Python
    complex mixed in: Tensor.backward gives the same .grad bit for bit either way."""
    x = layout(draw(shape, dtype), how)
    v = draw(shape[-1:], np.float32)

    def compute():
        t = cr.tensor(x, requires_grad=True)
        u = cr.tensor(v.copy(), requires_grad=True)
        y = cnp.sin(t) * u + t * np.float64(1.5) - u / (1 + 2j if t.dtype.kind == "c" else 3)
        loss = cnp.sum(cnp.abs(y) ** 2) + cnp.sum(cnp.real(t * t))
        loss.backward()
        return t.grad, u.grad

    fast, plain = fast_and_plain_walks(monkeypatch, compute)
    identical(fast[0], plain[0])
    identical(fast[1], plain[1])
    assert fast[0].dtype == np.dtype(dtype) and fast[0].shape == shape


@pytest.mark.parametrize("dtype", WALK_DTYPES, ids=lambda d: np.dtype(d).name)
def test_the_walks_shortcuts_give_the_plain_walks_holomorphic_and_real_gradients(
        monkeypatch, dtype):
    """cr.grad of a real loss and of a holomorphic function, cr.value_and_grad and
    cr.vjp with a complex cotangent: the same results, kinds included."""
    x, cotangent = draw((3, 2), dtype), draw((3, 2), dtype)
    complex_input = np.dtype(dtype).kind == "c"

    def compute():
        out = [cr.grad(lambda z: cnp.sum(cnp.abs(cnp.exp(z) * z) ** 2))(x),
               *cr.value_and_grad(lambda z: cnp.sum(cnp.real(cnp.tanh(z))))(x)]
        if complex_input:
            out.append(cr.grad(lambda z: cnp.sum(z * z * z), holomorphic=True)(x))
        value, pullback = cr.vjp(lambda z: cnp.sin(z) * 2.0, x)
        out += [value, *pullback(cotangent)]
        return out

    fast, plain = fast_and_plain_walks(monkeypatch, compute)
    assert len(fast) == len(plain)
    for a, b in zip(fast, plain):
        identical(a, b)


GRADIENT_PASSERS = {
    # each hands an operand the cotangent itself, a view of it, or one array to two
    # leaves: the places where a gradient could end up shared
    "add": lambda x, y: cnp.sum(x + y),
    "subtract": lambda x, y: cnp.sum(x - y),
    "reshape": lambda x, y: cnp.sum(cnp.reshape(x, (-1,)) + cnp.reshape(y, (-1,))),
    "transpose": lambda x, y: cnp.sum(x.T * 2.0 + y.T),
    "index": lambda x, y: cnp.sum(x[...] + y[:, :]),
    "times one": lambda x, y: cnp.sum(x * 1.0 + y),
    "astype": lambda x, y: cnp.sum(x.astype(np.float32) + y),
    "mean": lambda x, y: cnp.mean(x) + cnp.mean(y),
    "the output": lambda x, y: x + 0.0 * y,
}


@pytest.mark.parametrize("name", sorted(GRADIENT_PASSERS))
def test_the_walks_shortcuts_hand_out_gradients_of_their_own(monkeypatch, name):
    """The shortcut passes a VJP on as it is where its shape and dtype fit, and says
    whether it owns its memory as _fit does: each leaf's .grad is memory of its own
    (not another leaf's, not the seed's, not an array of the graph), with the plain
    walk's numbers, and writing into one changes no other."""
    f = GRADIENT_PASSERS[name]
    x0, y0 = draw((2, 3), np.float64), draw((2, 3), np.float64)

    def compute():
        x, y = cr.tensor(x0.copy(), requires_grad=True), cr.tensor(y0.copy(), requires_grad=True)
        out = f(x, y)
        seed = np.ones(out.shape)
        out.backward(seed)
        gx, gy = x.grad, y.grad
        for a, b in ((gx, gy), (gx, seed), (gy, seed), (gx, x.data), (gy, y.data),
                     (gx, out.data), (gy, out.data)):
            assert not np.shares_memory(a, b)
        kept = gy.copy()
        gx += 1.0
        identical(gy, kept)
        return gx - 1.0, gy

    fast, plain = fast_and_plain_walks(monkeypatch, compute)
    identical(fast[0], plain[0])
    identical(fast[1], plain[1])


def test_the_walks_shortcuts_give_the_plain_walks_retained_and_accumulated_gradients(
        monkeypatch):
    """retain_grad on intermediates of float32 and float64, and a second backward pass
    adding into the leaves' .grad: the same numbers either way."""
    x0 = draw((4, 3), np.float32)

    def compute():
        x = cr.tensor(x0, requires_grad=True)
        h = cnp.tanh(x @ np.ones((3, 2), np.float32))
        h.retain_grad()
        w = h.astype(np.float64) * 2.0
        w.retain_grad()
        cnp.sum(w * w).backward(retain_graph=True)
        first = x.grad.copy()
        cnp.sum(w * w).backward()
        return first, x.grad, h.grad, w.grad

    fast, plain = fast_and_plain_walks(monkeypatch, compute)
    for a, b in zip(fast, plain):
        identical(a, b)
    assert fast[0].dtype == np.float32 and fast[3].dtype == np.float64


# ---------------------------------------------------------------------------------------
# A fused operation's shared pullback against its own plain per-argument rules, and its
# forward that keeps a residual against its plain forward
# ---------------------------------------------------------------------------------------

def fused_cases(dtype):
    """(name, operation, arguments, keywords) for every fused operation, in several
    layouts; the arguments are drawn in the running test."""
    labels7 = np.array([0, 2, 1, 1, 0, 2, 2])
    causal = np.where(np.triu(np.ones((5, 6), bool), 2), -np.inf, 0.0).astype(dtype)
    future = np.where(np.triu(np.ones((6, 6), bool), 1), -np.inf, 0.0).astype(dtype)

    def d(*shape):
        return draw(shape, dtype)

    return [
        ("linear", fused.linear, (d(5, 3), d(4, 3), d(4)), {}),
        ("linear transposed x", fused.linear, (d(3, 5).T, d(4, 3), d(4)), {}),
        ("linear no rows", fused.linear, (d(0, 3), d(4, 3), d(4)), {}),
        ("linear one row", fused.linear, (d(3), d(4, 3), d(4)), {}),
        ("linear 40x50 by 30", fused.linear, (d(40, 50), d(30, 50), d(30)), {}),
        ("linear_relu", fused.linear_relu, (d(6, 3), d(4, 3), d(4)), {}),
        ("linear_relu 40x50 by 30", fused.linear_relu, (d(40, 50), d(30, 50), d(30)), {}),
        ("cross_entropy class-major", fused.cross_entropy, (d(7, 3), labels7), {}),
        ("cross_entropy row-major", fused.cross_entropy, (d(3, 7), labels7[:3]), {}),
        ("cross_entropy transposed", fused.cross_entropy, (d(3, 7).T, labels7), {}),
        ("cross_entropy 200 rows", fused.cross_entropy, (d(200, 10), np.arange(200) % 10), {}),
        ("attention masked", attention, (d(2, 3, 5, 4), d(2, 3, 6, 4), d(2, 3, 6, 2), causal),
         {"scale": 0.5}),
        ("attention unmasked", attention, (d(5, 4), d(6, 4), d(6, 2), None), {"scale": 0.5}),
        ("attention float mask", attention, (d(3, 5, 4), d(3, 6, 4), d(3, 6, 2), d(5, 6)),
         {"scale": 0.3}),
        ("self_attention", self_attention, (d(2, 6, 12), None), {"heads": 2, "scale": 0.5}),
        ("self_attention causal", self_attention, (d(3, 6, 24), future),
         {"heads": 4, "scale": 0.3}),
        ("layer_norm", layer_norm, (d(2, 3, 5), d(5), d(5)), {"eps": 1e-5}),
        ("layer_norm 4x33x16", layer_norm, (d(4, 33, 16), d(16), d(16)), {"eps": 1e-5}),
        ("layer_norm no affine", layer_norm, (d(4, 5), None, None), {"eps": 1e-5}),
        ("layer_norm no rows", layer_norm, (d(0, 4), d(4), d(4)), {"eps": 1e-5}),
        ("layer_norm transposed", layer_norm, (d(5, 4).T, d(5), None), {"eps": 1e-5}),
        ("gru_sequence", gru_sequence, (d(4, 3, 6), d(3, 2), d(6, 2), d(6)), {}),
        ("gru_sequence no bias", gru_sequence, (d(4, 3, 6), d(3, 2), d(6, 2), None), {}),
    ]


FUSED_NAMES = [case[0] for case in fused_cases(np.float64)]
KEEPING_NAMES = [case[0] for case in fused_cases(np.float64) if case[1].keeps_residual]


def fused_case(name, dtype):
    return next(case for case in fused_cases(dtype) if case[0] == name)


def differentiable_argnums(args):
    return tuple(i for i, a in enumerate(args)
                 if a is not None and np.asarray(a).dtype.kind == "f")


def summed_as_fit_sums(plain, fast):
    """A plain rule's VJP with the leading axes the engine sums (``backward._fit``:
    ``np.add.reduce`` over the broadcast axes) summed, where the shared pullback
    summed them itself."""
    plain = np.asarray(plain)
    extra = plain.ndim - np.ndim(fast)
    return np.add.reduce(plain, axis=tuple(range(extra))) if extra > 0 else plain


# The shared pullbacks that run their plain rules' NumPy operations in another order:
# linear's weight gradient is g.T @ x where the plain rule computes (x.T @ g).T (BLAS
# sums the two orientations in different orders: float32 shows it), and for a stack of
# rows one product over every row where the plain rule makes one per leading index,
# summed afterwards; gru_sequence's pullback is a NumPy loop over the steps where the
# plain rule differentiates the step-by-step composition.
REORDERED = {("linear", 1), ("linear_relu", 1), ("gru_sequence", 0), ("gru_sequence", 1),
             ("gru_sequence", 2), ("gru_sequence", 3)}


@pytest.mark.parametrize("name", FUSED_NAMES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_a_fused_forward_that_keeps_its_residual_gives_the_plain_forwards_result(
        name, dtype):
    """forward_keeping (run where an argument requires grad) returns the result
    forward gives (run where none does): the same operations. Through the engine too,
    for every fused operation: a result recorded in a graph has the bits of one
    computed under no_grad."""
    _, prim, args, kwargs = fused_case(name, dtype)
    plain = prim.forward(*args, **kwargs)
    if prim.keeps_residual:
        kept, residual = prim.forward_keeping(*args, **kwargs)
        assert residual is not None
        identical(kept, plain)
    # and through the engine: a result with a graph against one without
    tensors = [None if a is None else cr.tensor(a, requires_grad=np.asarray(a).dtype.kind == "f")
               for a in args]
    with cr.no_grad():
        without = prim(*[None if a is None else cr.tensor(a) for a in args], **kwargs)
    identical(prim(*tensors, **kwargs).data, without.data)
    assert np.asarray(plain).dtype == dtype


@pytest.mark.parametrize("name", FUSED_NAMES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_a_fused_pullback_gives_its_plain_rules_gradients(name, dtype):
    """Fused.pullback (the shared pullback, on the residual the forward kept) against
    the operation's plain per-argument rules (``prim.vjp(i)``), every argument that
    takes a gradient asked for at once: bit for bit, once the engine's sum over
    broadcast axes is applied to the plain rule's VJP, except where REORDERED says the
    shared pullback sums in another order."""
    _, prim, args, kwargs = fused_case(name, dtype)
    argnums = differentiable_argnums(args)
    ans, residual = (prim.forward_keeping(*args, **kwargs) if prim.keeps_residual
                     else (prim.forward(*args, **kwargs), None))
    g = draw(np.shape(ans), dtype) if np.ndim(ans) else np.asarray(1.3, dtype)
    if prim.keeps_residual:
        fast = prim.pullback(g, ans, args, kwargs, argnums, residual=residual)
    else:
        fast = prim.pullback(g, ans, args, kwargs, argnums)
    plain = [prim.vjp(i)(g, ans, *args, **kwargs) for i in argnums]
    assert len(fast) == len(plain) == len(argnums)
    for argnum, a, b in zip(argnums, fast, plain):
        b = summed_as_fit_sums(getattr(b, "data", b), a)
        if (prim.name, argnum) in REORDERED:
            close(a, b, dtype, roundings=200)
        else:
            identical(np.asarray(a), b)


@pytest.mark.parametrize("name", KEEPING_NAMES)
def test_a_fused_pullback_without_its_residual_is_the_plain_rules(name):
    """Given no residual (a node that kept none), the shared pullback runs the plain
    per-argument rules: their results exactly."""
    _, prim, args, kwargs = fused_case(name, np.float64)
    argnums = differentiable_argnums(args)
    ans = prim.forward(*args, **kwargs)
    g = draw(np.shape(ans), np.float64) if np.ndim(ans) else np.asarray(0.7)
    without = prim.pullback(g, ans, args, kwargs, argnums, residual=None)
    plain = [prim.vjp(i)(g, ans, *args, **kwargs) for i in argnums]
    for a, b in zip(without, plain):
        identical(np.asarray(getattr(a, "data", a)), np.asarray(getattr(b, "data", b)))


# ---------------------------------------------------------------------------------------
# fused.linear against the plain composition, and the nn layers with the overrides on
# and off
# ---------------------------------------------------------------------------------------

def plain_linear(x, w, b):
    return cr.matmul(x, cr.swapaxes(w, -1, -2)) + b


@pytest.mark.parametrize("x_shape, outputs", [
    ((5, 3), 4), ((0, 3), 4), ((3,), 4), ((1, 3), 4), ((40, 50), 30), ((33, 70), 20),
    ((6, 20), 70), ((2, 4, 3), 4), ((3, 17, 40), 25), ((2, 0, 3), 4), ((7, 1, 3), 4)],
    ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_fused_linear_gives_the_plain_compositions_forward_and_input_gradients(
        dtype, x_shape, outputs):
    """fused.linear (the bias added in place, a stack of rows as one tall product,
    few float32 rows by many outputs asked for as (W @ x.T).T where that gives the
    same bits) against matmul(x, swapaxes(W)) + b: the result, the input's and the
    bias's gradients bit for bit (matmul makes a stack times one matrix the same tall
    product, and the bias's gradient is the engine's sum of g either way). The
    weight's gradient is g.T @ x against the plain rule's (x.T @ g).T, and for a stack
    one product over every row against one per leading index summed: BLAS sums those in
    other orders (float32 shows it), so within a few roundings of the terms."""
    x = draw(x_shape, dtype)
    w, b = draw((outputs, x_shape[-1]), dtype), draw(outputs, dtype)
    results = []
    for op in (fused.linear, plain_linear):
        ts = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = op(*ts)
        u = np.cos(np.arange(y.size)).reshape(y.shape).astype(dtype)
        (y * u).sum().backward()
        results.append((y.data, ts[0].grad, ts[1].grad, ts[2].grad))
    (y, dx, dw, db), (y_plain, dx_plain, dw_plain, db_plain) = results
    identical(y, y_plain)
    identical(dx, dx_plain)
    identical(db, db_plain)
    inner = max(1, int(np.prod(x_shape[:-1])))
    bound = 4 * inner * np.finfo(dtype).eps * (np.abs(np.cos(np.arange(y.size))).reshape(
        y.shape).reshape(-1, outputs).T @ np.abs(x).reshape(-1, x_shape[-1]))
    assert dw.dtype == dw_plain.dtype == dtype and dw.shape == dw_plain.shape
    assert np.all(np.abs(dw - dw_plain) <= bound)


def on_and_off(make, inputs):
    """The module's output, the inputs' gradients and the parameters' gradients (for
    the output times a fixed cotangent), made with the overrides on and off."""
    results = []
    for flag in (True, False):
        with overrides(flag):
            module, parameters = make()
            ts = [cr.tensor(a, requires_grad=True) for a in inputs]
            out = module(*ts)
            u = np.cos(np.arange(out.size)).reshape(out.shape).astype(out.dtype)
            (out * u).sum().backward()
            results.append([out.data] + [t.grad for t in ts] + [p.grad for p in parameters])
    return results


def _sequential(dtype):
    model = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=0, dtype=dtype), cr.nn.ReLU(),
                             cr.nn.Linear(4, 2, rng=1, dtype=dtype))
    return model, model.parameters()


def _gru(**options):
    def make(dtype):
        model = cr.nn.GRU(3, 4, rng=0, dtype=dtype, **options)
        return (lambda x: model(x)[0]), model.parameters()
    return make


def _gru_last_state(dtype):
    model = cr.nn.GRU(3, 4, rng=0, dtype=dtype)
    return (lambda x, h: model(x, h)[1]), model.parameters()


def _self_attention(batch_first=True, **call):
    def make(dtype):
        model = cr.nn.MultiheadAttention(8, 2, rng=0, dtype=dtype, batch_first=batch_first)
        masks = {k: v.astype(dtype) if v.dtype.kind == "f" else v for k, v in call.items()
                 if isinstance(v, np.ndarray)}
        flags = {k: v for k, v in call.items() if not isinstance(v, np.ndarray)}
        return ((lambda x: model(x, x, x, need_weights=False, **masks, **flags)[0]),
                model.parameters())
    return make


def _encoder_layer(**options):
    def make(dtype):
        model = cr.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, rng=0,
                                              dtype=dtype, batch_first=True, **options)
        return model, model.parameters()
    return make


def _masked_encoder(dtype):
    layer = cr.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, rng=0,
                                          dtype=dtype, batch_first=True)
    model = cr.nn.TransformerEncoder(layer, 2)
    causal = np.triu(np.ones((5, 5), bool), 1)
    return (lambda x: model(x, mask=causal)), model.parameters()


def _cross_entropy(labels):
    def make(dtype):
        return (lambda z: cr.nn.functional.cross_entropy(z, labels)), []
    return make


SEVEN_LABELS = np.array([0, 2, 1, 1, 0, 2, 2])
CAUSAL = np.triu(np.ones((5, 5), bool), 1)
LAYERS = {
    # name: (make(dtype) -> (module, parameters), input shapes, whether the same
    # operations run both ways)
    "Linear, ReLU, Linear": (_sequential, [(5, 3)], True),
    "Linear, ReLU on a stack": (_sequential, [(2, 5, 3)], False),
    "Linear, ReLU on one row": (_sequential, [(3,)], False),
    "GRU, two layers, both ways": (_gru(num_layers=2, bidirectional=True), [(6, 2, 3)], False),
    "GRU, batch first": (_gru(batch_first=True), [(2, 6, 3)], False),
    "GRU, unbatched": (_gru(), [(6, 3)], False),
    "GRU, no bias": (_gru(bias=False), [(6, 2, 3)], False),
    "GRU, one step": (_gru(), [(1, 2, 3)], False),
    "GRU, given h0, last state": (_gru_last_state, [(6, 2, 3), (1, 2, 4)], False),
    "self-attention": (_self_attention(), [(2, 5, 8)], False),
    "self-attention, boolean mask": (_self_attention(attn_mask=CAUSAL), [(2, 5, 8)], False),
    "self-attention, float mask": (
        _self_attention(attn_mask=np.linspace(-1, 1, 25).reshape(5, 5)), [(2, 5, 8)], False),
    "self-attention, a mask per head": (
        _self_attention(attn_mask=np.triu(np.ones((4, 5, 5), bool), 1)), [(2, 5, 8)], False),
    "self-attention, causal": (_self_attention(attn_mask=CAUSAL, is_causal=True),
                               [(2, 5, 8)], False),
    "self-attention, sequence first": (_self_attention(batch_first=False), [(5, 2, 8)],
                                       False),
    "self-attention, unbatched": (_self_attention(), [(5, 8)], False),
    "self-attention, no examples": (_self_attention(), [(0, 5, 8)], False),
    "Transformer encoder layer": (_encoder_layer(), [(2, 5, 8)], False),
    "Transformer encoder layer, norm first, gelu": (
        _encoder_layer(norm_first=True, activation="gelu"), [(2, 5, 8)], False),
    "Transformer encoder, two layers, masked": (_masked_encoder, [(2, 5, 8)], False),
    "cross_entropy class-major": (_cross_entropy(SEVEN_LABELS), [(7, 3)], False),
    "cross_entropy row-major": (_cross_entropy(SEVEN_LABELS), [(7, 9)], False),
    "cross_entropy, uint8 labels": (_cross_entropy(SEVEN_LABELS.astype(np.uint8)), [(7, 3)],
                                    False),
    "cross_entropy, a list of labels": (_cross_entropy(SEVEN_LABELS.tolist()), [(7, 3)],
                                        False),
    "cross_entropy, float labels": (_cross_entropy(SEVEN_LABELS.astype(float)), [(7, 3)],
                                    False),
    "cross_entropy, one example": (_cross_entropy(np.array(2)), [(3,)], False),
    "cross_entropy, one row": (_cross_entropy(np.array([2])), [(1, 3)], False),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nn_layers_give_the_plain_numbers_with_the_overrides_on(name, dtype):
    """Each layer with the speed overrides on (fused.set_enabled(True): linear,
    linear_relu, gru_sequence, self_attention, layer_norm, cross_entropy) and off (the
    plain composition): the output and every gradient of the same dtype and shape, and
    equal to a few roundings of their scale (the fused operations sum in other orders:
    a stack of rows as one tall product, the recurrence as NumPy's loop, the softmax
    and its reductions class-major). A Linear, ReLU, Linear on a matrix runs the same
    operations both ways but the weight's gradient (g.T @ x against (x.T @ g).T), which
    BLAS may sum in another order."""
    make, shapes, same_operations = LAYERS[name]
    fast, plain = on_and_off(lambda: make(dtype), [draw(shape, dtype) for shape in shapes])
    assert len(fast) == len(plain)
    for a, b in zip(fast, plain):
        close(a, b, dtype)
    if same_operations:
        identical(fast[0], plain[0])
        identical(fast[1], plain[1])


# ---------------------------------------------------------------------------------------
# matmul's stacked product (rules/linalg.py, _stacked_matmul) against np.matmul
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape, b_shape", [
    ((4, 6, 5), (5, 3)), ((2, 3, 4, 5), (5, 2)), ((2, 3, 0), (0, 4)), ((0, 2, 5), (5, 3)),
    ((4, 6, 5), (5, 0)), ((3, 4, 5), (5,)), ((5,), (5, 3)), ((7, 1, 5), (5, 3)),
    ((6, 5), (5, 3)), ((4, 6, 5), (4, 5, 3))], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128,
                                   np.int64], ids=lambda d: np.dtype(d).name)
def test_a_stacked_product_gives_numpys_matmul(dtype, a_shape, b_shape):
    """One tall product for a stack of matrices times one matrix, against np.matmul's
    loop over the stack: the same kind, dtype and shape; integers to the last bit, and
    floating numbers within a few roundings of the terms' size (a one-row product is
    one dot in NumPy's loop and part of a BLAS product in the tall one, which may
    sum in another order); a transposed stack alike."""
    a, b = draw(a_shape, dtype) * 3, draw(b_shape, dtype) * 3
    if np.dtype(dtype).kind == "i":
        a, b = (RNG.integers(-9, 9, a_shape), RNG.integers(-9, 9, b_shape))
    for left in (a, np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
                 if a.ndim >= 2 else a):
        got, want = _stacked_matmul(left, b), np.matmul(left, b)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        if np.dtype(dtype).kind == "i":
            identical(got, want)
        else:
            bound = 4 * a_shape[-1] * np.finfo(dtype).eps * np.matmul(np.abs(left), np.abs(b))
            assert np.all(np.abs(got - want) <= bound)


# ---------------------------------------------------------------------------------------
# cr.vmap's short ways against its general path, dtypes included
# ---------------------------------------------------------------------------------------

SHORT_WAYS = ["_entrywise_on_arrays", "_kind_on_one_array", "_arithmetic_on_arrays",
              "_shape_on_one_array"]


def leaves_of(tree):
    return [getattr(v, "data", v) for v in cr.tree_flatten(tree)[0]]


def with_and_without_short_ways(monkeypatch, run):
    """run() with the short ways (each counted where it served a call) and with the
    general path alone."""
    served = []
    with monkeypatch.context() as patch:
        for name in SHORT_WAYS:
            def counted(*call, _way=getattr(batching, name)):
                out = _way(*call)
                served.append(out is not None)
                return out
            patch.setattr(batching, name, counted)
        fast = run()
    with monkeypatch.context() as patch:
        for name in SHORT_WAYS:
            patch.setattr(batching, name, lambda *call: None)
        general = run()
    return fast, general, any(served)


def served_and_equal(monkeypatch, vmapped, name):
    """vmapped() (a vmap's leaves, or the error it raised as text) with the short ways
    and with the general path alone: the same leaves, bit for bit and in dtype, or the
    same error. Whether a short way served."""
    def run():
        try:
            return leaves_of(vmapped())
        except (ValueError, TypeError, IndexError) as err:
            return [f"{type(err).__name__}: {err}"]
    fast, general, served = with_and_without_short_ways(monkeypatch, run)
    assert len(fast) == len(general), name
    for a, b in zip(fast, general):
        if isinstance(a, str):
            assert a == b, name
        else:
            identical(a, b)
    return served


def mapped(shape):
    """(name, f, extra arguments, in_axes) on examples of ``shape[1:]``."""
    row = shape[-1:] if len(shape) > 1 else ()
    return [
        ("times a float", lambda v: v * 2.5, (), 0),
        ("plus an int", lambda v: v + 3, (), 0),
        ("an int minus", lambda v: 3 - v, (), 0),
        ("over an int", lambda v: v / 2, (), 0),
        ("times a NumPy float64", lambda v: v * np.float64(1.5), (), 0),
        ("times a float32 0-d array", lambda v: v * np.array(1.5, np.float32), (), 0),
        ("plus a float32 row", lambda v: v + np.ones(row, np.float32), (), 0),
        ("times itself", lambda v: v * v, (), 0),
        ("sin", lambda v: cr.sin(v), (), 0),
        ("maximum with an unmapped array", lambda v, w: cr.maximum(v, w),
         (np.zeros(shape[1:], np.float32),), (0, None)),
        ("a batch of lower rank", lambda v, w: v * w, (np.ones(shape[:1], np.float32),), 0),
        ("sum over the last axis", lambda v: cr.sum(v, axis=-1) if v.ndim else v, (), 0),
        ("cumsum", lambda v: cr.cumsum(v, axis=0) if v.ndim else v, (), 0),
        ("reshape to a vector", lambda v: cr.reshape(v, (v.size,)), (), 0),
        ("broadcast_to", lambda v: cr.broadcast_to(v, (2,) + shape[1:]), (), 0),
        ("mapped over the last axis", lambda v: cr.add(v, 1.0), (), -1),
    ]


VMAP_DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64,
               np.bool_]
VMAP_SHAPES = [(4,), (4, 3), (0, 3), (4, 0), (3, 2, 5)]


@pytest.mark.parametrize("shape", VMAP_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", VMAP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_vmaps_short_ways_give_the_general_paths_results_and_dtypes(monkeypatch, dtype,
                                                                       shape):
    """Batches of every dtype kind (float32 beside Python numbers and float64 scalars,
    where NumPy's casting decides the dtype; integers and booleans; complex), empty
    batches and empty examples, Fortran-ordered batches, a batch against a smaller
    array and a batch of lower rank: each mapped function gives the same results
    with the short ways and with the general path alone, dtype and shape included
    (assert_array_equal alone would pass a float32 result for a float64 one)."""
    x = draw(shape, dtype) * 3 if np.dtype(dtype).kind in "fc" else \
        RNG.integers(-5, 5, shape).astype(dtype)
    short_ways_served = []
    for batch in (x, np.asfortranarray(x)):
        for name, f, extra, in_axes in mapped(shape):
            if name == "a batch of lower rank" and len(shape) < 2:
                continue
            short_ways_served.append(served_and_equal(
                monkeypatch, lambda: cr.vmap(f, in_axes=in_axes)(batch, *extra), name))
    assert sum(short_ways_served) >= len(short_ways_served) // 2


ALONG_AXES = {
    # operations along an axis or on leading axes, on one mapped array: the axis
    # numbers are an example's, which the short way shifts past the batch axis
    "mean of all": lambda v: cnp.mean(v),
    "mean over the last axis": lambda v: cnp.mean(v, axis=-1),
    "max over two axes": lambda v: cnp.max(v, axis=(0, 1)),
    "argmax": lambda v: cnp.argmax(v, axis=-1),
    "sort": lambda v: cnp.sort(v, axis=0),
    "softmax": lambda v: cr.softmax(v, axis=0),
    "transpose": lambda v: cnp.transpose(v),
    "swapaxes": lambda v: cnp.swapaxes(v, 0, 1),
    "moveaxis": lambda v: cnp.moveaxis(v, 0, -1),
    "flip": lambda v: cnp.flip(v, axis=1),
    "roll": lambda v: cnp.roll(v, 1, axis=0),
    "cumprod": lambda v: cnp.cumprod(v, axis=1),
    "diff": lambda v: cnp.diff(v, axis=0),
    "var": lambda v: cnp.var(v, axis=0, ddof=1),
    "prod, keepdims": lambda v: cnp.prod(v, axis=1, keepdims=True),
    "sum into float32": lambda v: cnp.sum(v, axis=0, dtype=np.float32),
    "any": lambda v: cnp.any(v, axis=0),
    "expand_dims": lambda v: cnp.expand_dims(v, -1),
    "squeeze": lambda v: cnp.squeeze(v[:1], axis=0),
    "take": lambda v: cnp.take(v, np.array([0, 1, 1]), axis=1),
    "clip": lambda v: cnp.clip(v, -1, 1),
    "where": lambda v: cnp.where(v > 0, v, 0),
    "reshape of a transpose": lambda v: cnp.reshape(v.T, (-1,)),
    "broadcast_to": lambda v: cnp.broadcast_to(v[:, :1], v.shape),
    "astype": lambda v: v.astype(np.float32),
    "matmul": lambda v: v @ np.ones((v.shape[-1], 2)),
    "matmul from the left": lambda v: np.ones((2, v.shape[0])) @ v,
    "einsum": lambda v: cnp.einsum("ij,ij->i", v, v),
    "norm": lambda v: cnp.linalg.norm(v, axis=-1),
    "floor_divide": lambda v: v // 2,
    "mod": lambda v: v % 3,
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a variance of one entry, 0 // 0
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128,
                                   np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_vmaps_short_ways_along_an_axis_give_the_general_paths_results(monkeypatch, dtype):
    """Operations along an axis and on leading axes, on batches mapped over their
    first axis, Fortran-ordered, and mapped over their last axis (in_axes=2), with
    empty examples and empty batches: the same results, dtypes and shapes, or the
    same error, with the short ways and without."""
    short_ways_served = []
    for shape in [(4, 2, 3), (4, 0, 3), (0, 2, 3), (4, 3, 3)]:
        x = (RNG.standard_normal(shape) * 3).astype(dtype)
        batches = [(x, 0), (np.asfortranarray(x), 0), (np.moveaxis(x, 0, 2), 2)]
        for name, f in ALONG_AXES.items():
            for batch, axis in batches:
                short_ways_served.append(served_and_equal(
                    monkeypatch, lambda: cr.vmap(f, in_axes=axis)(batch), name))
    # a short way serves in a good share of the cases; the others (an index array or a
    # dtype among the parameters, an error before any call) take the general path on
    # both runs
    assert sum(short_ways_served) >= len(short_ways_served) // 3


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_vmaps_short_ways_give_the_general_paths_per_example_gradients(monkeypatch, dtype):
    """Per-example gradients, a vmap of a vmap and a per-example Jacobian, in float32
    and float64: the same results and dtypes both ways."""
    x = draw((4, 3), dtype)
    w = draw(3, dtype)

    def run():
        loss = cr.grad(lambda v: cnp.sum(cnp.tanh(v * w) ** 2 + 0.5 * v))
        return [cr.vmap(loss)(x),
                cr.vmap(cr.vmap(lambda a: cnp.exp(a) * 2.0 - a / 3))(x),
                cr.vmap(cr.jacrev(lambda v: cnp.sin(v) * v[::-1]))(x),
                cr.vmap(cr.jacfwd(lambda v: cnp.cumsum(v * v)))(x.T.copy().T)]

    fast, general, served = with_and_without_short_ways(monkeypatch, run)
    assert served
    for a, b in zip(fast, general):
        identical(a, b)
        assert a.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_vmaps_short_ways_give_the_general_paths_results_at_two_levels(monkeypatch, dtype):
    """Two levels of vmap, each mapping a different argument (every pair of rows) or
    the same one, over the first or the last axis: the short ways take only batches
    of one level, and the results are the general path's, dtypes included."""
    x, y, z = [(RNG.standard_normal(shape) * 3).astype(dtype)
               for shape in ((3, 4), (5, 4), (3, 6))]

    def pairs(f, axis=0):  # rows of x and y, or columns of x and z
        return cr.vmap(cr.vmap(f, in_axes=(axis, None)), in_axes=(None, axis))(
            x, y if axis == 0 else z)

    def run():
        out = [pairs(lambda a, b: a * b + a - 2.0),
               pairs(lambda a, b: cnp.sum(a * b, axis=-1) / 3),
               pairs(lambda a, b: cnp.reshape(a + b, (2, 2))),
               pairs(lambda a, b: cnp.broadcast_to(a, (2, 4)) * b),
               pairs(lambda a, b: cnp.maximum(a, b) if dtype != np.complex64 else a + b, 1),
               cr.vmap(cr.vmap(lambda a: a * a - a / 2))(x)]
        return [leaves_of(o)[0] for o in out]

    fast, general, served = with_and_without_short_ways(monkeypatch, run)
    assert served
    for a, b in zip(fast, general):
        identical(a, b)


# ---------------------------------------------------------------------------------------
# cr.jit's generated call (Entry.fast_call) against the generic Entry.try_run
# ---------------------------------------------------------------------------------------

def jitted_both_ways(monkeypatch, run):
    """run() with cr.jit's generated call, and with every call through the generic
    path (an Entry that writes no call of its own): the generated call makes the same
    checks and runs the same program."""
    written = []
    with monkeypatch.context() as patch:
        def counted(self, key, _fast_call=jit_entry.Entry.fast_call):
            call = _fast_call(self, key)
            written.append(call is not None)
            return call
        patch.setattr(jit_entry.Entry, "fast_call", counted)
        fast = run()
    assert any(written)  # the generated call served the calls after the first
    with monkeypatch.context() as patch:
        patch.setattr(jit_entry.Entry, "fast_call", lambda self, key: None)
        generic = run()
    return fast, generic


def results_of(tree):
    """(kind, array) of each leaf: a Tensor's array, a NumPy value, a Python number."""
    return [(type(v).__name__, np.asarray(getattr(v, "data", v)))
            for v in cr.tree_flatten(tree)[0]]


def same_calls(fast, generic):
    assert len(fast) == len(generic)
    for call_fast, call_generic in zip(fast, generic):
        assert [k for k, _ in call_fast] == [k for k, _ in call_generic]
        for (_, a), (_, b) in zip(call_fast, call_generic):
            identical(a, b)


@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_jits_generated_call_gives_the_generic_calls_results(monkeypatch, dtype, shape):
    """A function returning a dict, a tuple, a shape and a keyword's scaling, called
    with other arrays of the traced signature (the generated call serves them), with a
    keyword (another program), a transposed array, and again: the same results, kinds
    and dtypes either way."""
    xs = [draw(shape, dtype) for _ in range(3)]

    def f(x, s=2.0):
        return {"y": cr.sin(x) * s, "z": (cr.sum(x), x.shape, cr.exp(-x * x))}

    calls = [((x,), {}) for x in xs] + [((xs[0],), {"s": 3.0}),
                                        ((layout(xs[1], "transposed"),), {}), ((xs[2],), {})]

    def run():
        jitted = cr.jit(f)
        return [results_of(jitted(*a, **k)) for a, k in calls]

    same_calls(*jitted_both_ways(monkeypatch, run))


def _read_only(x):
    x = x.copy()
    x.flags.writeable = False
    return x


X23 = np.arange(6.0).reshape(2, 3)
CALL_SEQUENCES = {
    # name: (f, [arguments of each call]): after the first call of a signature, the
    # generated call checks each argument's kind, shape and dtype; a call it does not
    # take goes to the generic path, which traces again where nothing fits
    "numbers of every kind": (
        lambda x, s: (x * s, s, cr.sum(x) + s),
        [(X23, 2), (X23, 3), (X23, True), (X23, 2.0), (X23, np.float32(2)),
         (X23, np.float64(2)), (X23, np.int64(2)), (X23, np.array(2.0)), (X23, 2 + 0j),
         (X23, np.bool_(True)), (X23, False), (X23, 5)]),
    "arrays of every layout and kind": (
        lambda x: cr.exp(x) * 2,
        [(X23,), (X23.copy(),), (np.asfortranarray(X23),), (X23.astype(np.float32),),
         (X23[:, ::2],), (X23.reshape(3, 2),), (np.array(X23, dtype=">f8"),),
         (_read_only(X23),), (X23,), (X23[::-1],), (X23,)]),
    "integer and boolean arrays": (
        lambda x: x * 2 + 1,
        [(np.arange(3),), (np.arange(3, dtype=np.int32),), (np.arange(3) + 5,),
         (np.arange(3) > 1,), (np.arange(3),)]),
    "None, a number and a string": (
        lambda x, m: x if m is None else x * 2,
        [(X23, None), (X23, 1), (X23, None), (X23, "a"), (X23, None)]),
    "shapes as tuples and lists": (
        lambda x, shape: cr.reshape(x, shape),
        [(X23, (3, 2)), (X23, (6,)), (X23, (3, 2)), (X23, [3, 2]), (X23, (3, 2))]),
    "dicts in either order": (
        lambda d: d["a"] * d["b"],
        [({"a": X23, "b": 2.0},), ({"b": 2.0, "a": X23},), ({"a": X23, "b": X23},),
         ({"a": X23, "b": 2.0},)]),
}


@pytest.mark.parametrize("name", sorted(CALL_SEQUENCES))
def test_jits_generated_call_takes_and_refuses_the_calls_the_generic_path_does(
        monkeypatch, name):
    """A sequence of calls whose arguments change kind, dtype, layout or structure:
    each gives the same results, kinds and dtypes through the generated call's checks
    as through the generic path's."""
    f, calls = CALL_SEQUENCES[name]

    def run():
        jitted = cr.jit(f)
        return [results_of(jitted(*args)) for args in calls]

    same_calls(*jitted_both_ways(monkeypatch, run))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_jits_generated_call_gives_the_generic_calls_gradients(monkeypatch, dtype):
    """cr.value_and_grad under cr.jit, a Python float and int and a NumPy scalar
    beside the array, a list of arrays, an array of another dtype (traced again): the
    same results either way."""
    xs = [draw((4, 3), dtype) for _ in range(3)]

    def loss(x, s, k):
        return cnp.sum(cnp.tanh(x * s) ** 2) + k

    calls = [(x, s, k) for x in xs for s, k in ((2.0, 3), (0.5, 1), (np.float64(1.5), 2))]
    calls.append((xs[0].astype(np.float64 if dtype == np.float32 else np.float32), 2.0, 3))

    def run():
        jitted = cr.jit(cr.value_and_grad(loss))
        listed = cr.jit(lambda arrays: sum(cnp.sum(a * a) for a in arrays))
        return ([results_of(jitted(*call)) for call in calls]
                + [results_of(listed(list(xs[:k]))) for k in (2, 2, 3)])

    same_calls(*jitted_both_ways(monkeypatch, run))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_jits_generated_call_gives_the_generic_calls_training_steps(monkeypatch, dtype):
    """A jitted training step (a model and an optimizer found while tracing, the
    gradients and the optimizer's state written back), and a step on a tensor
    argument: the losses, the parameters, their gradients and the tensor's .grad the
    same after every step either way."""
    x = draw((8, 3), dtype)
    labels = np.arange(8) % 2
    v0 = draw(5, dtype)

    def run():
        model = cr.nn.Sequential(cr.nn.Linear(3, 5, rng=0, dtype=dtype), cr.nn.ReLU(),
                                 cr.nn.Linear(5, 2, rng=1, dtype=dtype))
        opt = cr.optim.Adam(model.parameters(), lr=0.01)

        @cr.jit
        def step(x, y):
            opt.zero_grad()
            loss = cr.nn.functional.cross_entropy(model(cr.tensor(x)), y)
            loss.backward()
            opt.step()
            return loss

        @cr.jit
        def on_tensor(v, scale):
            v.grad = None
            out = cnp.sum(cnp.sin(v) * scale)
            out.backward()
            return out

        v = cr.tensor(v0.copy(), requires_grad=True)
        seen = []
        for k in range(5):
            seen.append(results_of(step(x, labels)))
            seen.append(results_of([p.data for p in model.parameters()]
                                   + [p.grad for p in model.parameters()]))
            seen.append(results_of((on_tensor(v, 1.0 + k), v.grad)))
        return seen

    same_calls(*jitted_both_ways(monkeypatch, run))


# ---------------------------------------------------------------------------------------
# primitive.call_unwrapped against Primitive.__call__
# ---------------------------------------------------------------------------------------

UNWRAPPED = [
    (ops.add, 2, {}), (ops.subtract, 2, {}), (ops.multiply, 2, {}), (ops.divide, 2, {}),
    (ops.maximum, 2, {}), (ops.sin, 1, {}), (ops.exp, 1, {}), (ops.tanh, 1, {}),
    (ops.negative, 1, {}), (ops.real, 1, {}), (ops.conj, 1, {}),
    (ops.sum, 1, {"axis": -1}), (ops.sum, 1, {"axis": None, "keepdims": True}),
    (ops.mean, 1, {"axis": (0,)}), (ops.max, 1, {"axis": None}),
    (ops.swapaxes, 1, {"axis1": 0, "axis2": -1}), (ops.transpose, 1, {}),
    (ops.expand_dims, 1, {"axis": 0}),
]


@pytest.mark.parametrize("prim, arity, kwargs", UNWRAPPED,
                         ids=[f"{p.name}{sorted(k.items())}" for p, _, k in UNWRAPPED])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # an empty mean, an integer over 0
def test_call_unwrapped_gives_the_primitives_own_call(prim, arity, kwargs, dtype):
    """Arrays of every kind (0-d, empty, transposed), a NumPy scalar and Python numbers
    among the operands: call_unwrapped (the forward called at once) gives what the
    operation's own call gives, kind, dtype and bits; an operand it does not take (a
    Tensor) goes through that call."""
    for shape in [(2, 3), (0, 3), (1, 4)]:
        x = draw(shape, dtype) if np.dtype(dtype).kind != "i" else RNG.integers(-5, 5, shape)
        operands = [[x], [layout(x, "transposed")]]
        if arity == 2:
            operands = [[x, x[:1]], [layout(x, "transposed"), 2.5], [3, x],
                        [x, np.float32(0.5)], [x, np.float64(-1.0)]]
        for args in operands:
            if "axis" in kwargs and not np.ndim(args[0]):
                continue
            try:
                want = prim(*args, **kwargs)
            except (ValueError, TypeError) as err:
                with pytest.raises(type(err)):
                    call_unwrapped(prim, args, kwargs)
                continue
            identical(call_unwrapped(prim, args, kwargs), want)
    t = cr.tensor(draw((2, 3), np.float64))
    through = call_unwrapped(prim, [t] * arity, kwargs)
    assert isinstance(through, cr.Tensor)
    identical(through.data, prim(*[t] * arity, **kwargs).data)


# ---------------------------------------------------------------------------------------
# power's square and cube by multiplies (rules/elementwise.py, _pow) against np.power
# ---------------------------------------------------------------------------------------

AWKWARD = np.array([0.5, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -3.0, 1e200, -7.25])


def real_bases(dtype):
    """Arrays of ``dtype`` (spread over many magnitudes, the awkward numbers, 0-d,
    empty, transposed) and a NumPy scalar."""
    spread = (RNG.standard_normal(2000) * 10.0 ** RNG.uniform(-3, 3, 2000)).astype(dtype)
    matrix = RNG.standard_normal((4, 3)).astype(dtype)
    return [spread, AWKWARD.astype(dtype), np.asarray(dtype(1.75)), np.zeros((0, 3), dtype),
            layout(matrix, "transposed"), dtype(-2.5)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # squares of 1e200 overflow
@pytest.mark.parametrize("exponent", [2, 2.0])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_a_real_square_by_a_multiply_is_powers_own_result(dtype, exponent):
    """For a real floating base, np.square is np.power(a, 2) to the last bit (one
    correctly rounded product): the same kind, dtype and shape, -0.0, inf, NaN and
    subnormals included."""
    from chainrule.rules.elementwise import _pow
    for a in real_bases(dtype):
        identical(_pow(a, exponent), np.power(a, exponent))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("exponent", [3, 3.0])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_a_real_cube_by_multiplies_is_within_two_roundings_of_pow(dtype, exponent):
    """a * a * a rounds twice where pow rounds once: within two units in the last
    place, with pow's kind, dtype and shape, and the same infinities, NaNs and zeros."""
    from chainrule.rules.elementwise import _pow
    for a in real_bases(dtype):
        got, want = _pow(a, exponent), np.power(a, exponent)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_max_ulp(got, want, maxulp=2)


@pytest.mark.parametrize("exponent", [2, 3])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_an_integer_square_or_cube_by_integer_multiplies_is_powers_result(dtype, exponent):
    """An integer base and an integer exponent: the same integers, wrapping around as
    pow wraps (uint8's 200 ** 3), in the base's dtype."""
    from chainrule.rules.elementwise import _pow
    a = np.array([0, 1, 2, 3, 100, 127, 200], dtype=np.int64).astype(dtype)
    for base in (a, a[::-1], np.asarray(a[3])):
        identical(_pow(base, exponent), np.power(base, exponent))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_a_complex_square_is_powers_own_result(dtype):
    """A complex base takes pow itself: np.square's bits would differ from
    np.power(a, 2)'s in about a quarter of the entries (the real part re*re - im*im
    rounded another way)."""
    from chainrule.rules.elementwise import _pow
    a = (RNG.standard_normal(1000) + 1j * RNG.standard_normal(1000)).astype(dtype)
    identical(_pow(a, 2), np.power(a, 2))


@pytest.mark.parametrize("exponent", [2.0, 3.0])
def test_an_integer_base_to_a_float_power_is_a_float_as_pow_gives(exponent):
    """An integer base to the float power 2.0 or 3.0 is pow's float64 (multiplies would
    keep the integers, and uint8's 200 ** 3.0 would wrap to 0)."""
    for a in (np.arange(4), np.array([0, 100, 200], np.uint8), np.arange(3, dtype=np.int32)):
        identical(cr.power(a, exponent), np.power(a, exponent))


@pytest.mark.parametrize("exponent", [2, 3, 2.0])
def test_a_boolean_base_to_a_power_has_pows_dtype(exponent):
    """A boolean base is pow's: int64 for 2 and 3, float64 for 2.0 (np.square would give
    int8, and a * a * a a boolean)."""
    a = np.array([True, False, True])
    identical(cr.power(a, exponent), np.power(a, exponent))


@pytest.mark.parametrize("base, exponent", [(3, 3), (3.0, 3), (3, 3.0), (3, 2.0)])
def test_a_python_number_to_a_small_power_is_the_numpy_scalar_pow_gives(base, exponent):
    """A Python number to a small power is pow's NumPy scalar (np.int64(27),
    np.float64(27.0)), not a Python number multiplied in Python."""
    identical(cr.power(base, exponent), np.power(base, exponent))


# ---------------------------------------------------------------------------------------
# An embedding's gradient as add.at on flat positions (rules/indexing.py, _add_rows)
# against add.at on the rows
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64, np.int32,
                                   np.bool_], ids=lambda d: np.dtype(d).name)
def test_adding_into_picked_rows_by_flat_positions_equals_add_at_on_the_rows(dtype):
    """index_add's flat-position path against np.add.at on a copy in the result's
    dtype: tables of every dtype, values of another dtype (float32, float64, complex,
    a Python number, a row broadcast), transposed tables, unsigned and int32 rows, a
    0-d row and a NumPy scalar row, no rows, an empty table, a table of width 0, three
    axes: the same kind, dtype, shape and bits."""
    from chainrule.rules.indexing import index_add

    def plain(x, value, index):
        out = np.asarray(x).astype(np.result_type(x, value))
        np.add.at(out, index, value)
        return out

    x = (RNG.standard_normal((5, 3)) * 4).astype(dtype)
    rows = RNG.integers(-5, 5, 7)
    cases = [
        (x, (RNG.standard_normal((7, 3)) * 4).astype(dtype), rows),
        (x, RNG.standard_normal((7, 3)), rows),
        (x, RNG.standard_normal((7, 3)).astype(np.float32), rows),
        (x, 1.5, rows), (x, 2, rows), (x, 1j, rows),
        (x, RNG.standard_normal((1, 3)), rows), (x, RNG.standard_normal(3), rows),
        (layout(x, "transposed"), 1.5, rows),
        (x, 1.5, rows.astype(np.uint8) % 5),
        (x, 1.5, RNG.integers(0, 5, (2, 3)).astype(np.int32)),
        (x, RNG.standard_normal(3), np.array(2)), (x, RNG.standard_normal(3), np.int64(-1)),
        (x, 1.5, np.array([], dtype=np.int64)),
        (np.zeros((0, 3), dtype), 1.5, np.array([], dtype=np.int64)),
        (np.zeros((4, 0), dtype), 1.0, np.array([0, 3, 3, -1])),
        ((RNG.standard_normal((4, 2, 3)) * 3).astype(dtype), 1.0, np.array([0, 3, 3, -1])),
        (x, 1.0, (np.array([0, 3, 3, -1]),)),
    ]
    for table, value, index in cases:
        identical(index_add(table, value, index=index), plain(table, value, index))


# ---------------------------------------------------------------------------------------
# The overrides under the transforms: per-example gradients (vmap of grad), Jacobians
# (a stack of cotangents or tangents), a Hessian (the gradient's graph)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_the_overrides_under_the_transforms_give_the_plain_numbers(dtype):
    """A fused operation hands a batch of vmap, a stack of cotangents (jacrev), a stack
    of tangents (jacfwd) and a graph of the gradient (hessian) to its plain rules, and
    takes its own pullback for an ordinary gradient of a stack of inputs: with the
    overrides on and off, the same dtypes and shapes, and the same numbers to a few
    roundings (the fused forward sums the softmax's reductions class-major)."""
    x = draw((6, 3), dtype)
    labels = np.arange(6) % 3
    w0, b0 = draw((4, 3), dtype), draw(4, dtype)
    w1, b1 = draw((3, 4), dtype), draw(3, dtype)

    def loss(w, xi, yi):
        h = cr.nn.functional.linear(xi, w, b0, activation="relu")
        out = cr.nn.functional.linear(h, w1, b1)
        return cr.nn.functional.cross_entropy(out[None], yi[None])

    def layer(w):
        return cr.nn.functional.linear(x, w, b0, activation="relu")

    def compute():
        return [cr.vmap(cr.grad(loss), in_axes=(None, 0, 0))(w0, x, labels),
                cr.jacrev(layer)(w0), cr.jacfwd(layer)(w0),
                cr.hessian(lambda z: cr.nn.functional.cross_entropy(z, labels))(x),
                cr.grad(lambda s: cr.sum(cr.nn.functional.linear(s, w0, b0,
                                                                 activation="relu") ** 2))(
                    np.stack([x, x[::-1]]))]

    with overrides(True):
        fast = compute()
    with overrides(False):
        plain = compute()
    for a, b in zip(fast, plain):
        close(a, b, dtype)


# ---------------------------------------------------------------------------------------
# micrograd's neuron as one node (nn.scalar.linear) against its chain of * and + nodes
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("nonlin", [True, "tanh", "sigmoid", False])
def test_a_scalar_network_of_one_node_neurons_gives_the_chains_bits(nonlin):
    """MLP(fused=True) makes each neuron's weighted sum one node; fused=False builds
    micrograd's chain of * and + nodes. The sum is the same additions in the same order
    and each partial derivative the same product, so the outputs and every gradient
    (parameters and inputs, through a loss that uses two outputs) are the same floats,
    -0.0 and the awkward inputs included (tests/test_micrograd.py holds the gradients
    to 1e-12)."""
    from chainrule.nn.scalar import MLP
    for seed, inputs in [(0, [0.7, -1.9, 0.3]), (1, [0.0, -0.0, 1e-300]),
                         (2, [1e150, -2.5, 3.0]), (3, RNG.uniform(-3, 3, 3).tolist())]:
        one_node = MLP(3, [8, 8, 2], rng=seed, nonlin=nonlin)
        chain = MLP(3, [8, 8, 2], rng=seed, nonlin=nonlin, fused=False)
        xs_one, xs_chain = [cr.Value(v) for v in inputs], [cr.Value(v) for v in inputs]
        out_one, out_chain = one_node(xs_one), chain(xs_chain)
        (out_one[0] * out_one[1] + out_one[0]).backward()
        (out_chain[0] * out_chain[1] + out_chain[0]).backward()
        assert [o.data.hex() for o in out_one] == [o.data.hex() for o in out_chain]
        assert [p.grad.hex() for p in one_node.parameters()] == \
            [p.grad.hex() for p in chain.parameters()]
        assert [x.grad.hex() for x in xs_one] == [x.grad.hex() for x in xs_chain]
