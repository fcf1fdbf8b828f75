"""cr.jit's compiled tier (Numba) on float32, complex128 and complex64 inputs.

The tier (``chainrule.jit.native``) compiles only programs whose every value is a
float64, int64 or bool array or number; a program over float32 or complex numbers is
meant to stay NumPy's replay, which keeps the input's dtype as eager chainrule does. A
compiled program that took such a program anyway could hand back float64 for float32
(Numba's literals and reductions are float64) or drop an imaginary part, and a program
the tier took in float64 must still run when traced again in float32 or complex. So, for
small functions of the kind the tier is written for (elementwise chains, reductions,
matmul, indexing, where/maximum, exp/log/tanh/sin, powers with Python-float exponents,
softmax, logsumexp), each through cr.jit of the function itself, of cr.grad,
cr.value_and_grad, cr.hessian, cr.jacfwd, cr.jvp and cr.vmap(cr.grad), in each dtype:

* ``compile_native`` compiles the float64 program (but for a few listed in
  ``FLOAT64_REFUSED``, for a call it does not write) and refuses every other, naming
  the dtype it does not take;
* replayed on new numbers of the same dtype, the jitted result has the dtype, shape and
  numbers (to the dtype's rounding) of the NumPy replay of the same trace, of eager
  chainrule, and of ``jax.jit`` with float64 enabled where JAX has the transform.

Then one program in several dtypes, numbers (0-d arrays, NumPy and Python scalars) as
arguments, float32 constants in a float64 program, and float64 programs that compute in
complex or float32 on the way. Only float64 programs reach Numba (seconds each), about
thirty in all; most of them are marked slow.
The suite runs with the tier off (``conftest.py``); the ``tier_on`` fixture switches it
on for a test, and every program the tier can compile is compiled and checked
(``FASTER_ONLY`` off), not only those that time faster.
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.jit import native
from seeds_and_tolerances import per_test_generator

pytest.importorskip("numba", reason="the compiled tier needs Numba (chainrule[native])")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)  # conftest.py puts the switch back after each test
jnp = jax.numpy

RNG = per_test_generator(8)

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]
# rtol for the same computation in two orders of rounding (Numba's against NumPy's sums
# and transcendental functions, JAX's XLA against either)
RTOL = {np.float64: 1e-9, np.float32: 2e-4, np.complex128: 1e-9, np.complex64: 2e-4}
N, BATCH = 5, 3


@pytest.fixture(autouse=True)
def _x64():
    jax.config.update("jax_enable_x64", True)


@pytest.fixture
def tier_on(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "1")
    monkeypatch.setattr(native, "FASTER_ONLY", False)


# ---------------------------------------------------------------------------------------
# The functions: each written once over a NumPy-like module m (chainrule.numpy or
# jax.numpy) of x, shape (N,), with W (3, N) a constant of x's dtype; real_only where the
# operation orders numbers (max, maximum, where on a comparison), which complex ones have not
# ---------------------------------------------------------------------------------------

def chain(m, x, W):
    return m.sin(x) * m.exp(-x * x) + m.tanh(x) / (1.0 + x * x)


def powers(m, x, W):
    return x ** 3.0 + 0.5 * x ** 2.0 - (x * x + 1.0) ** 1.5


def matmul(m, x, W):
    return m.tanh(W @ x) * 2.0


def indexing(m, x, W):
    return x[1:4] * m.sin(x[::2]) + x[np.array([4, 0, 2])] ** 3.0 - x[-1]


def reductions(m, x, W):
    return m.sum(x * x) + m.mean(m.cos(x)) * x + m.prod(x[:3]) - m.sum(W * x, axis=0)


def log_exp(m, x, W):
    return m.log(1.0 + x * x) + m.exp(0.5 * x)


def where_maximum(m, x, W):
    return m.where(x > 0.0, x * x, 0.1 * x) + m.maximum(x, 0.25) * m.max(x)


def softmax(m, x, W):
    e = m.exp(x - m.max(x))
    return e / m.sum(e)


def logsumexp(m, x, W):
    top = m.max(x)
    return m.log(m.sum(m.exp(x - top))) + top + 0.0 * x


OPS = [chain, powers, matmul, indexing, reductions, log_exp, where_maximum, softmax,
       logsumexp]
REAL_ONLY = {where_maximum, softmax, logsumexp}
TRANSFORMS = ["f", "grad", "value_and_grad", "hessian", "jacfwd", "jvp", "vmap_grad"]
REAL_TRANSFORMS = {"hessian", "jacfwd"}  # complex inputs need holomorphic=True there


def real_dtype(dtype):
    return np.finfo(dtype).dtype


def draw(dtype, shape):
    x = RNG.uniform(-1.0, 1.0, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.uniform(-0.5, 0.5, shape)
    return x.astype(dtype)


class Case:
    """One function under one transform in one dtype: the chainrule function, its JAX
    counterpart and the arguments it takes."""

    def __init__(self, op, transform, dtype):
        self.op, self.transform, self.dtype = op, transform, dtype
        self.W = draw(dtype, (3, N))
        size = np.size(op(np, self.W[0], self.W))  # (NumPy's own functions)
        self.weights = np.linspace(0.5, 1.5, size).astype(real_dtype(dtype))
        self.tangent = draw(dtype, (N,))
        self.batched = transform == "vmap_grad"

    def arguments(self):
        return draw(self.dtype, (BATCH, N) if self.batched else (N,))

    def make(self, m, jit=None):
        op, W, w, v = self.op, self.W, self.weights, self.tangent
        if m is jnp:
            W, w, v = jnp.asarray(W), jnp.asarray(w), jnp.asarray(v)
            t = jax
        else:
            t = cr

        def f(x):
            return op(m, x, W)

        complex_ = np.dtype(self.dtype).kind == "c"

        def loss(x):  # a real number, as grad asks
            total = m.sum(f(x) * w)
            return m.real(total) if complex_ else total
        kind = self.transform
        if kind == "f":
            return f
        if kind == "grad":
            return t.grad(loss)
        if kind == "value_and_grad":
            return t.value_and_grad(loss)
        if kind == "hessian":
            return t.hessian(loss)
        if kind == "jacfwd":
            return t.jacfwd(f)
        if kind == "jvp":
            return lambda x: t.jvp(f, (x,), (v,))
        if kind == "vmap_grad":
            return t.vmap(t.grad(loss))
        raise AssertionError(kind)


def applicable(op, transform, dtype):
    complex_ = np.dtype(dtype).kind == "c"
    return not (complex_ and (op in REAL_ONLY or transform in REAL_TRANSFORMS))


def leaves(tree):
    return [np.asarray(getattr(a, "data", a)) for a in cr.tree_util.tree_leaves(tree)]


def agree(actual, expected, rtol, what):
    """The same structure, shapes and dtypes, and numbers within rtol of the largest
    entry (a gradient's small entries carry the rounding of its large ones)."""
    actual, expected = leaves(actual), leaves(expected)
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.shape == e.shape, f"{what}, output {i}: shape {a.shape} != {e.shape}"
        assert a.dtype == e.dtype, f"{what}, output {i}: dtype {a.dtype} != {e.dtype}"
        scale = max(float(np.max(np.abs(e), initial=0.0)), 1.0)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"{what}, output {i}")


def numpy_replay(case, x0, x1, monkeypatch):
    """The NumPy replay of the program traced at x0, run at x1."""
    with monkeypatch.context() as patch:
        patch.setenv("CHAINRULE_NATIVE", "0")  # read when the program is built
        replay = cr.jit(case.make(cnp))
        replay(x0)
        return replay(x1)


def check(case, monkeypatch):
    """Compile (or be refused), replay on new numbers, compare with the NumPy replay,
    eager chainrule and jax.jit."""
    x0, x1 = case.arguments(), case.arguments()
    jitted = cr.jit(case.make(cnp))
    status = jitted.compile_native(x0)
    if case.dtype is np.float64:
        refused = FLOAT64_REFUSED.get((case.op.__name__, case.transform))
        assert status == "compiled" or status == f"not compiled: {refused}", status
    else:
        name = np.dtype(case.dtype).name
        assert status.startswith(f"not compiled: a value of type ndarray {name}"), status
    got = jitted(x1)
    rtol = RTOL[case.dtype]
    what = f"{case.op.__name__} {case.transform} {np.dtype(case.dtype).name}"
    agree(got, numpy_replay(case, x0, x1, monkeypatch), rtol, f"{what}: NumPy replay")
    agree(got, case.make(cnp)(x1), rtol, f"{what}: eager")
    expected = jax.jit(case.make(jnp))(jnp.asarray(x1))
    agree(got, expected, max(rtol, 1e-7), f"{what}: jax.jit")
    return jitted, x1, got


# float64 programs the tier does not take for a call or constant it does not write (not
# for a dtype); their replays are checked all the same
FLOAT64_REFUSED = {("indexing", "grad"): "the call 'at'",  # (np.add.at, the gather's rule)
                   ("indexing", "hessian"): "a constant of type tuple",
                   ("indexing", "vmap_grad"): "a constant of type tuple",
                   ("where_maximum", "vmap_grad"): "the call 'expand_dims'",
                   ("reductions", "vmap_grad"): "the call 'expand_dims'",
                   ("logsumexp", "vmap_grad"): "the call 'expand_dims'"}

# A few cases run by default (one compiled program in each float64 transform's family, a
# refused one per other dtype); the rest are slow.
FAST = {("chain", "grad"), ("softmax", "value_and_grad"), ("matmul", "jvp")}


def grid():
    for op in OPS:
        for transform in TRANSFORMS:
            for dtype in DTYPES:
                if not applicable(op, transform, dtype):
                    continue
                fast = (op.__name__, transform) in FAST
                compiled_here = dtype is np.float64
                # the float64 programs of the slow cases: one in two (about thirty reach
                # Numba), at a second or a few each
                if compiled_here and not fast and \
                        (OPS.index(op) + TRANSFORMS.index(transform)) % 2:
                    continue
                marks = () if fast else (pytest.mark.slow,)
                yield pytest.param(op, transform, dtype, marks=marks,
                                   id=f"{op.__name__}-{transform}-{np.dtype(dtype).name}")


@pytest.mark.parametrize("op, transform, dtype", list(grid()))
def test_compiled_or_refused_and_the_numbers_and_dtype_agree(op, transform, dtype,
                                                              tier_on, monkeypatch):
    check(Case(op, transform, dtype), monkeypatch)


# ---------------------------------------------------------------------------------------
# One program in several dtypes, numbers as arguments, constants of another dtype
# ---------------------------------------------------------------------------------------

def mixed_chain(x):
    return cnp.sum(cnp.tanh(x) * x ** 2.0 + cnp.exp(-x * x))


def test_a_compiled_float64_program_leaves_other_dtypes_to_their_own_traces(tier_on):
    """The same jitted gradient compiled in float64, then called in float32, complex
    (through a real loss) and float64 again: each dtype its own trace, its own dtype
    out, the float64 one still compiled."""
    def loss(x):
        total = mixed_chain(x)
        return cnp.real(total) if np.iscomplexobj(x) else total
    step, eager = cr.jit(cr.grad(loss)), cr.grad(loss)
    x64 = RNG.uniform(-1.0, 1.0, N)
    assert step.compile_native(x64) == "compiled"
    for dtype in DTYPES:
        x = draw(dtype, (N,))
        got = step(x)
        assert got.dtype == np.dtype(dtype), (dtype, got.dtype)
        agree(got, eager(x), RTOL[dtype], np.dtype(dtype).name)
    entries = [e for found in step._programs.values() for e in found]
    tiers = {str(e.program.values[e.program.inputs[0]].dtype): e.program.native
             for e in entries}
    assert tiers["float64"].state == "ready"
    assert all(tiers[name] is None for name in ("float32", "complex128", "complex64"))


@pytest.mark.parametrize("number, compiled", [
    (np.array(0.7), True), (0.7, False), (np.float64(0.7), False),
    (np.float32(0.7), False), (np.array(0.7, np.float32), False)],
    ids=["0d-float64", "float", "np.float64", "np.float32", "0d-float32"])
def test_a_number_in_keeps_its_kind_and_dtype(number, compiled, tier_on):
    """A gradient of one number: the compiled or replayed result is the eager one's
    type and dtype (a Python float stays a float, a float32 a float32)."""
    def f(x):
        return cnp.sin(x) * x ** 2.5 + cnp.tanh(x)
    step, eager = cr.jit(cr.grad(f)), cr.grad(f)
    status = step.compile_native(number)
    assert (status == "compiled") == compiled, status
    moved = type(number)(number * 1.1) if np.ndim(number) == 0 and \
        not isinstance(number, np.ndarray) else number * np.asarray(1.1, number.dtype)
    got, want = step(moved), eager(moved)
    assert type(got) is type(want) and np.result_type(got) == np.result_type(want)
    rtol = RTOL[np.result_type(number).type]
    np.testing.assert_allclose(got, want, rtol=rtol)
    expected = jax.jit(jax.grad(lambda x: jnp.sin(x) * x ** 2.5 + jnp.tanh(x)))(
        jnp.asarray(moved))
    np.testing.assert_allclose(got, expected, rtol=max(rtol, 1e-7))
    assert np.result_type(got) == expected.dtype


def test_a_python_complex_in_gives_a_complex_out():
    def f(z):
        return cnp.real(z * z)
    step = cr.jit(cr.grad(f))
    step(2.0 + 1.0j)
    got, want = step(2.2 + 1.1j), cr.grad(f)(2.2 + 1.1j)
    assert want == 4.4 + 2.2j and type(want) is complex
    assert type(got) is complex, repr(got)


def test_float32_constants_in_a_float64_program(tier_on):
    """A float64 program whose constants are float32 (an array, a NumPy scalar in a
    product and in a maximum): NumPy promotes to float64 with the float32 constants'
    exact values, and so must the compiled function (a float32 scalar written as its
    own decimal, 0.1, would be another number)."""
    w32 = np.linspace(0.1, 1.0, N).astype(np.float32)

    def f(x):
        return cnp.sum(x * w32 * np.float32(0.1) + cnp.maximum(x, np.float32(0.3)) ** 2.0)
    step, eager = cr.jit(cr.value_and_grad(f)), cr.value_and_grad(f)
    x0, x1 = RNG.uniform(-1.0, 1.0, N), RNG.uniform(-1.0, 1.0, N)
    assert step.compile_native(x0) == "compiled"
    got, want = step(x1), eager(x1)
    agree(got, want, 1e-12, "value_and_grad")
    grad = got[1]
    assert grad.dtype == np.float64
    where = x1 < 0.3  # the product's own term, with float32(0.1) * w32 exactly
    np.testing.assert_array_equal(grad[where], (w32.astype(np.float64)
                                                * float(np.float32(0.1)))[where])


def test_a_float32_argument_beside_a_float64_one_is_not_compiled(tier_on):
    """Inputs of two dtypes: the tier refuses the float32 one, and each gradient keeps
    its own input's dtype, as eager and JAX give."""
    def f(x, y):
        return cnp.sum(cnp.tanh(x * y) + y ** 2.0)
    x, y = RNG.uniform(-1.0, 1.0, N), RNG.uniform(-1.0, 1.0, N).astype(np.float32)
    step = cr.jit(cr.grad(f, (0, 1)))
    status = step.compile_native(x, y)
    assert status.startswith("not compiled: a value of type ndarray float32"), status
    got = step(x * 0.9, y * np.float32(0.9))
    agree(got, cr.grad(f, (0, 1))(x * 0.9, y * np.float32(0.9)), 1e-12, "eager")
    expected = jax.jit(jax.grad(lambda x, y: jnp.sum(jnp.tanh(x * y) + y ** 2.0),
                                (0, 1)))(x * 0.9, y * np.float32(0.9))
    assert [g.dtype for g in got] == [e.dtype for e in expected]


def test_real_of_a_float64_loss_compiles(tier_on):
    def loss(x):
        return cnp.real(cnp.sum(cnp.sin(x) * x))
    step = cr.jit(cr.value_and_grad(loss))
    x = RNG.uniform(-1.0, 1.0, N)
    status = step.compile_native(x)
    agree(step(x * 1.1), cr.value_and_grad(loss)(x * 1.1), 1e-12, "eager")
    assert status == "compiled", status


# float64 in and out, another dtype inside: (chainrule function, JAX function, the dtype)
THROUGH = {
    "through_complex": (lambda m, x: m.sum(m.abs(m.exp(1j * x) + x) ** 2.0), "complex128"),
    "real_and_imag": (lambda m, x: m.sum(m.real(x * (1 + 2j)) ** 2.0 + m.imag(x * x * 1j)),
                      "complex128"),
    "through_float32": (lambda m, x: m.sum(m.tanh(x.astype(np.float32)) * 2.0), "float32"),
}


@pytest.mark.parametrize("name", THROUGH)
@pytest.mark.parametrize("transform", ["f", "grad"])
def test_a_float64_program_through_another_dtype_is_not_compiled(name, transform, tier_on):
    """A float64 input whose program computes in complex or float32 on the way: the
    tier refuses it (compiled, the float64 kernel's typing would have to follow each
    value's dtype), and the replay gives eager's and JAX's dtype and numbers."""
    fn, inside = THROUGH[name]
    ours = (lambda x: fn(cnp, x)) if transform == "f" else cr.grad(lambda x: fn(cnp, x))
    theirs = (lambda x: fn(jnp, x)) if transform == "f" else jax.grad(lambda x: fn(jnp, x))
    x0, x1 = RNG.uniform(-1.0, 1.0, N), RNG.uniform(-1.0, 1.0, N)
    step = cr.jit(ours)
    status = step.compile_native(x0)
    assert status.startswith(f"not compiled: a value of type ndarray {inside}"), status
    got = step(x1)
    agree(got, ours(x1), 1e-12, "eager")
    expected = jax.jit(theirs)(x1)
    rtol = 2e-4 if inside == "float32" else 1e-9
    agree(got, np.asarray(expected), rtol, "jax.jit")
