"""Complex numbers, differentiated as JAX differentiates them: each operation that NumPy
defines on complex arrays, against jax.numpy (complex128) and central differences.

JAX's convention (docs/conventions.md): a cotangent c acts on a tangent t as Re(sum(c t)),
with no conjugate, so the VJP of a holomorphic f is g * f'(z) and ``grad`` of a real
function of z is 2 d f / dz (2 conj(z) for |z|**2). For every case below:

1. the value, the VJP (a random complex cotangent) and the JVP (random complex
   tangents) against jax.vjp and jax.jvp;
2. the JVP against central differences along a real and an imaginary direction, and
   the VJP against the JVP through the pairing Re(sum(c t));
3. second order, three ways (forward over reverse, reverse over reverse, reverse over
   forward), against JAX;
4. the Tensor engine's backward(gradient=c) against cr.vjp.

Then the transforms' rules of JAX (grad needs a real output unless holomorphic=True,
jacfwd real inputs), holomorphic Jacobians and Hessians, and real programs whose
intermediates are complex.
"""

import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

jax.config.update("jax_enable_x64", True)

REL = 1e-9
FD_EPS = 1e-6
FD_REL = 1e-7


def seeded(*parts):
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


def draw(rng, shape, kind):
    """Inputs away from branch cuts and zeros: ``c`` a complex number with real part in
    [0.4, 1.2] (log, sqrt and powers cut along the negative reals), ``r`` a real one in
    the same range, ``s`` a real of either sign."""
    if kind == "s":
        return rng.uniform(-1.2, 1.2, shape)
    real = rng.uniform(0.4, 1.2, shape)
    if kind == "r":
        return real
    return real + 1j * rng.uniform(-0.9, 0.9, shape)


class Case:
    def __init__(self, id, fn, ref, specs, fd=True):
        self.id, self.fn, self.ref, self.specs, self.fd = id, fn, ref, specs, fd

    def inputs(self):
        rng = seeded("inputs", self.id)
        return [draw(rng, shape, kind) for shape, kind in self.specs]

    def __repr__(self):
        return self.id


CASES = []


def case(id, fn, ref, *specs, fd=True):
    CASES.append(Case(id, fn, ref, specs, fd))


C, C3, C23, C33, R3, C4 = (((), "c"), ((3,), "c"), ((2, 3), "c"), ((3, 3), "c"),
                           ((3,), "r"), ((4,), "c"))

for name in ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "log1p",
             "expm1", "log2", "log10", "square", "reciprocal", "negative", "arctan",
             "arcsin", "arccos", "arcsinh", "arctanh", "abs", "angle", "real", "imag",
             "conj"]:
    case(name, getattr(cr, name), getattr(jnp, name), C23)
# sign(z) = z / |z| is smooth off 0, but JAX (and so chainrule) takes its derivative as 0
case("sign", cr.sign, jnp.sign, C23, fd=False)
case("abs-real", cr.abs, jnp.abs, ((3,), "s"))
for name, op in [("add", lambda a, b: a + b), ("subtract", lambda a, b: a - b),
                 ("multiply", lambda a, b: a * b), ("divide", lambda a, b: a / b)]:
    case(name, op, op, C23, C3)
    case(name + "-real-complex", op, op, R3, C23)
case("power-real-exponent", lambda a: a ** 2.5, lambda a: a ** 2.5, C23)
case("power-integer", lambda a: a ** 3, lambda a: a ** 3, C23)
case("power-complex", lambda a, b: a ** b, lambda a, b: a ** b, C3, C3)
case("matmul", cr.matmul, jnp.matmul, C23, ((3, 2), "c"))
case("matmul-real-complex", cr.matmul, jnp.matmul, ((2, 3), "r"), C3)
case("dot", cr.dot, jnp.dot, C3, C3)
case("vdot", cr.vdot, jnp.vdot, C3, C3)
case("outer", cr.outer, jnp.outer, C3, R3)
case("einsum", lambda a, b: cr.einsum("ij,jk->ik", a, b),
     lambda a, b: jnp.einsum("ij,jk->ik", a, b), C23, ((3, 2), "c"))
case("tensordot", lambda a, b: cr.tensordot(a, b, 1), lambda a, b: jnp.tensordot(a, b, 1),
     C23, C3)
case("kron", cr.kron, jnp.kron, C3, C3)
for name in ["sum", "mean", "prod", "var", "std"]:
    case(name, getattr(cr, name), getattr(jnp, name), C23)
    case(name + "-axis", lambda x, f=getattr(cr, name): f(x, axis=1),
         lambda x, f=getattr(jnp, name): f(x, axis=1), C23)
case("norm", cr.norm, jnp.linalg.norm, C23)
case("cumsum", lambda x: cr.cumsum(x, axis=1), lambda x: jnp.cumsum(x, axis=1), C23)
case("cumprod", lambda x: cr.cumprod(x, axis=1), lambda x: jnp.cumprod(x, axis=1), C23)
case("reshape-transpose", lambda x: cr.reshape(x, (3, 2)).T,
     lambda x: jnp.reshape(x, (3, 2)).T, C23)
case("getitem", lambda x: x[1, ::2], lambda x: x[1, ::2], C23)
case("gather", lambda x: x[np.array([0, 2, 2])], lambda x: x[np.array([0, 2, 2])], C3)
case("concatenate", lambda a, b: cr.concatenate([a, b]), lambda a, b: jnp.concatenate([a, b]),
     C3, R3)
case("stack", lambda a, b: cr.stack([a, b]), lambda a, b: jnp.stack([a, b]), C3, C3)
case("flip-roll", lambda x: cr.roll(cr.flip(x, 1), 1, axis=1),
     lambda x: jnp.roll(jnp.flip(x, 1), 1, axis=1), C23)
case("where", lambda a, b: cr.where(np.array([True, False, True]), a, b),
     lambda a, b: jnp.where(jnp.array([True, False, True]), a, b), C3, C3)
case("trace-diag", lambda x: cr.trace(x) * cr.diag(x), lambda x: jnp.trace(x) * jnp.diag(x),
     C33)
case("astype", lambda x: x.astype(np.complex128) * 1j,
     lambda x: x.astype(jnp.complex128) * 1j, R3)
case("composite", lambda z: cr.exp(z) * cr.conj(z) + cr.abs(z) ** 2 * cr.angle(z),
     lambda z: jnp.exp(z) * jnp.conj(z) + jnp.abs(z) ** 2 * jnp.angle(z), C3)


# numpy.fft: every transform, with n (padding and cutting), axes and the three norms
FFT = cnp.fft
C45, R45, R5 = ((4, 5), "c"), ((4, 5), "s"), ((5,), "s")
for name, spec in [("fft", C45), ("ifft", C45), ("rfft", R45), ("irfft", C45),
                   ("hfft", C45), ("ihfft", R45)]:
    for n, axis, norm in [(None, -1, None), (7, 0, "ortho"), (3, 1, "forward"),
                          (8, -1, "backward")]:
        case(f"{name}-n{n}-axis{axis}-{norm}",
             lambda x, f=getattr(FFT, name), n=n, a=axis, m=norm: f(x, n, a, m),
             lambda x, f=getattr(jnp.fft, name), n=n, a=axis, m=norm: f(x, n, a, m), spec)
for name, spec in [("fft2", C45), ("ifft2", C45), ("rfft2", R45), ("irfft2", C45),
                   ("fftn", C45), ("ifftn", C45), ("rfftn", R45), ("irfftn", C45)]:
    for s, axes, norm in [(None, None, None), ((3, 6), (1, 0), "ortho"),
                          ((5, 4), (0, 1), "forward")]:
        if axes is None and name.endswith("2"):
            axes = (-2, -1)
        case(f"{name}-s{s}-axes{axes}-{norm}",
             lambda x, f=getattr(FFT, name), s=s, a=axes, m=norm: f(x, s, a, m),
             lambda x, f=getattr(jnp.fft, name), s=s, a=axes, m=norm: f(x, s, a, m), spec)
case("fftshift", lambda x: FFT.fftshift(FFT.fft(x)), lambda x: jnp.fft.fftshift(jnp.fft.fft(x)),
     R5)
case("ifftshift", lambda x: FFT.ifftshift(x, axes=0), lambda x: jnp.fft.ifftshift(x, axes=0),
     C45)
case("fft-power-spectrum", lambda x: cr.abs(FFT.rfft(x)) ** 2 * FFT.rfftfreq(5),
     lambda x: jnp.abs(jnp.fft.rfft(x)) ** 2 * jnp.fft.rfftfreq(5), R5)
case("fft-round-trip", lambda z: FFT.irfft(FFT.rfft(cr.real(z) * 2.0), 5),
     lambda z: jnp.fft.irfft(jnp.fft.rfft(jnp.real(z) * 2.0), 5), C3)

# Linear algebra of complex matrices (a square complex matrix is made well conditioned
# by its draw: the real parts of the diagonal dominate; a Hermitian one is a a^H + 3 I)
def hermitian(np_):
    return lambda f: lambda a: f(np_.matmul(a, np_.conj(a.T)) + 3 * np.eye(3))


def dominant(a):
    return a + 3 * np.eye(3)


case("solve", lambda a, b: cr.linalg.solve(dominant(a), b),
     lambda a, b: jnp.linalg.solve(dominant(a), b), C33, ((3, 2), "c"))
case("inv", lambda a: cr.linalg.inv(dominant(a)), lambda a: jnp.linalg.inv(dominant(a)), C33)
case("det", lambda a: cr.linalg.det(dominant(a)), lambda a: jnp.linalg.det(dominant(a)), C33)
case("slogdet", lambda a: cr.stack(list(cr.linalg.slogdet(dominant(a))), 0),
     lambda a: jnp.stack(list(jnp.linalg.slogdet(dominant(a)))), C33)
case("pinv-square", lambda a: cr.linalg.pinv(dominant(a)), lambda a: jnp.linalg.pinv(dominant(a)), C33)
case("cholesky", hermitian(cr)(cr.linalg.cholesky), hermitian(jnp)(jnp.linalg.cholesky), C33)
case("eigvalsh", hermitian(cr)(cr.linalg.eigvalsh), hermitian(jnp)(jnp.linalg.eigvalsh), C33)
case("eigh", hermitian(cr)(lambda a: cr.linalg.eigh(a)[0] * cr.abs(cr.linalg.eigh(a)[1]) ** 2),
     hermitian(jnp)(lambda a: jnp.linalg.eigh(a)[0] * jnp.abs(jnp.linalg.eigh(a)[1]) ** 2), C33)

# svd, qr and eig fix their vectors only up to a phase (svd: the same turn of U's and
# V's column j; qr: a sign of Q's column and R's row, R's diagonal being real; eig: a
# sign, each eigenvector having unit norm and its largest entry real). The cases are
# functions that do not depend on that choice: U f(S) Vh and |U|^2 |Vh|^2, Q and R with
# R's diagonal made positive, eigenvectors with their largest entry made positive.
def svd_invariants(np_):
    def f(a):
        u, s, vh = np_.linalg.svd(a, full_matrices=False)
        return (u * (s ** 2 + s)[..., None, :]) @ vh + np_.abs(u) ** 2 @ np_.abs(vh) ** 2
    return f


def qr_positive(np_):
    def f(a):
        q, r = np_.linalg.qr(a)
        signs = np_.sign(np_.real(np_.diagonal(r, 0, -2, -1)))  # (derivative 0)
        return np_.concatenate([(q * signs[..., None, :]).ravel(), (r * signs[..., None]).ravel()])
    return f


def positive_largest(np_, v):
    """Each eigenvector (column) times the sign of its largest entry (real: LAPACK's)."""
    mag = np_.abs(v)
    largest = np_.sum(v * (mag == np_.max(mag, axis=-2, keepdims=True)), axis=-2)
    return v * np_.sign(np_.real(largest))[..., None, :]


def eig_of(np_):
    if np_ is jnp:  # jax.numpy's eig leaves out the eigenvectors' derivatives (#2748)
        return lambda a: jax.lax.linalg.eig(a, compute_left_eigenvectors=False,
                                            enable_eigvec_derivs=True)
    return np_.linalg.eig


def eig_parts(np_):
    def f(a):
        w, v = eig_of(np_)(a)
        v = positive_largest(np_, v).astype(np.complex128)  # (NumPy's real where JAX's is not)
        return np_.concatenate([w.astype(np.complex128)[..., None, :], v], axis=-2)
    return f


C42, C24, C233, S33 = ((4, 2), "c"), ((2, 4), "c"), ((2, 3, 3), "c"), ((3, 3), "s")
for shape, name in [(C33, "square"), (C42, "tall"), (C24, "wide"), (C233, "batch")]:
    case(f"svd-{name}", svd_invariants(cr), svd_invariants(jnp), shape)
    case(f"svdvals-{name}", cr.linalg.svdvals, jnp.linalg.svdvals, shape)
for shape, name in [(C33, "square"), (C42, "tall"), (C24, "wide")]:
    case(f"qr-{name}", qr_positive(cr), qr_positive(jnp), shape)
case("pinv-tall", cr.linalg.pinv, jnp.linalg.pinv, C42)
case("pinv-wide", cr.linalg.pinv, jnp.linalg.pinv, C24)
case("eig", eig_parts(cr), eig_parts(jnp), C33)
case("eig-batch", eig_parts(cr), eig_parts(jnp), C233)
case("eig-real-matrix", eig_parts(cr), eig_parts(jnp), S33)  # (complex eigenvalues)
case("eig-real-eigenvalues", lambda a: eig_parts(cr)(a + a.T * 0.5),
     lambda a: eig_parts(jnp)(a + a.T * 0.5), S33)
case("eigvals", lambda a: cr.linalg.eigvals(a).astype(np.complex128),
     lambda a: eig_of(jnp)(a)[0], C33)

# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def assert_close(actual, expected, what, rel=REL):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert (actual.dtype.kind == "c") == (expected.dtype.kind == "c"), \
        f"{what}: dtype {actual.dtype}, JAX's {expected.dtype}"
    scale = max(np.max(np.abs(expected), initial=0.0), 1.0)
    error = np.max(np.abs(actual - expected), initial=0.0)
    assert error <= rel * scale, f"{what}: error {error:.3g} (scale {scale:.3g})"


def jax_vjp(f, primals, cotangent):
    """JAX's value of f and its VJP at the cotangent, compiled as one XLA program: eager
    JAX compiles each operation on its own, which was most of these tests' time."""
    def value_and_pulled(primals, cotangent):
        out, pullback = jax.vjp(f, *primals)
        return out, pullback(cotangent)
    return jax.jit(value_and_pulled)(tuple(primals), cotangent)


def jax_jvp(f, primals, tangents):
    """JAX's value of f and its JVP along the tangents, compiled as one XLA program."""
    return jax.jit(lambda p, t: jax.jvp(f, p, t))(tuple(primals), tuple(tangents))


def like(rng, x):
    """A random array of x's shape and kind (complex or real)."""
    x = np.asarray(x)
    out = rng.standard_normal(x.shape)
    return out + 1j * rng.standard_normal(x.shape) if x.dtype.kind == "c" else out


def pairing(c, t):
    """JAX's pairing of a cotangent with a tangent, Re(sum(c t))."""
    return sum(float(np.real(np.sum(np.asarray(a) * np.asarray(b)))) for a, b in zip(c, t))


def setup(case):
    xs = case.inputs()
    rng = seeded("directions", case.id)
    out = np.asarray(jax.jit(case.ref)(*map(jnp.asarray, xs)))
    return xs, like(rng, out), [like(rng, x) for x in xs], [like(rng, x) for x in xs]


# ---------------------------------------------------------------------------------------
# First order
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=repr)
def test_value_vjp_jvp_against_jax(case):
    xs, w, ts, _ = setup(case)
    jxs = [jnp.asarray(x) for x in xs]
    out, f_vjp = cr.vjp(case.fn, *xs)
    j_out, j_pulled = jax_vjp(case.ref, jxs, jnp.asarray(w))
    assert_close(out, j_out, "value")
    for i, (mine, theirs) in enumerate(zip(f_vjp(w), j_pulled)):
        assert_close(mine, theirs, f"vjp of input {i}")
    _, tangent = cr.jvp(case.fn, tuple(xs), tuple(ts))
    _, j_tangent = jax_jvp(case.ref, jxs, map(jnp.asarray, ts))
    assert_close(tangent, j_tangent, "jvp")


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jvp_against_central_differences_and_vjp_against_jvp(case):
    if not case.fd:
        pytest.skip("JAX's derivative here is not the function's (see the case)")
    xs, w, _, _ = setup(case)
    for i, x in enumerate(xs):
        directions = [np.ones_like(x)] + ([1j * np.ones_like(x)] if x.dtype.kind == "c" else [])
        for d in directions:
            d = d * seeded("fd", case.id, i).uniform(0.5, 1.5, np.shape(x))
            ts = [d if k == i else np.zeros_like(xk) for k, xk in enumerate(xs)]
            _, tangent = cr.jvp(case.fn, tuple(xs), tuple(ts))
            plus = case.fn(*[xk + FD_EPS * tk for xk, tk in zip(xs, ts)])
            minus = case.fn(*[xk - FD_EPS * tk for xk, tk in zip(xs, ts)])
            fd = (np.asarray(plus) - np.asarray(minus)) / (2 * FD_EPS)
            assert_close(tangent, fd.astype(np.asarray(tangent).dtype), f"jvp of input {i} "
                         f"along {'i' if np.iscomplexobj(d) and not np.any(d.real) else '1'}",
                         FD_REL)
            vjp_row = cr.vjp(case.fn, *xs)[1](w)
            assert abs(pairing([w], [tangent]) - pairing(vjp_row, ts)) <= \
                REL * max(1.0, abs(pairing([w], [tangent])))


# ---------------------------------------------------------------------------------------
# Second order
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=repr)
def test_second_order_against_jax(case):
    xs, w, ts, us = setup(case)
    jxs, jw = tuple(map(jnp.asarray, xs)), jnp.asarray(w)
    pulled = lambda *z: cr.vjp(case.fn, *z)[1](w)  # noqa: E731
    j_pulled = lambda *z: jax.vjp(case.ref, *z)[1](jw)  # noqa: E731
    # forward over reverse
    mine = cr.jvp(pulled, tuple(xs), tuple(ts))[1]
    theirs = jax_jvp(j_pulled, jxs, map(jnp.asarray, ts))[1]
    for i, (a, b) in enumerate(zip(mine, theirs)):
        assert_close(a, b, f"jvp of vjp, input {i}")
    # reverse over reverse
    mine = cr.vjp(pulled, *xs)[1](tuple(us))
    theirs = jax_vjp(j_pulled, jxs, tuple(map(jnp.asarray, us)))[1]
    for i, (a, b) in enumerate(zip(mine, theirs)):
        assert_close(a, b, f"vjp of vjp, input {i}")
    # reverse over forward
    pushed = lambda *z: cr.jvp(case.fn, z, tuple(ts))[1]  # noqa: E731
    j_pushed = lambda *z: jax.jvp(case.ref, z, tuple(map(jnp.asarray, ts)))[1]  # noqa: E731
    mine = cr.vjp(pushed, *xs)[1](w)
    theirs = jax_vjp(j_pushed, jxs, jw)[1]
    for i, (a, b) in enumerate(zip(mine, theirs)):
        assert_close(a, b, f"vjp of jvp, input {i}")


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_tensor_backward_is_the_vjp(case):
    xs, w, _, _ = setup(case)
    tensors = [cr.tensor(x, requires_grad=True) for x in xs]
    case.fn(*tensors).backward(gradient=w)
    for i, (t, expected) in enumerate(zip(tensors, cr.vjp(case.fn, *xs)[1](w))):
        assert_close(t.grad, expected, f"tensor grad of input {i}")


# ---------------------------------------------------------------------------------------
# The transforms, as JAX's
# ---------------------------------------------------------------------------------------

Z = np.array([0.7 + 0.3j, 1.1 - 0.5j, 0.9 + 0.8j])


def loss(np_):
    """A real function of complex inputs: |f(z)|**2 summed, with f holomorphic."""
    return lambda z: np_.sum(np_.abs(np_.sin(z) * z) ** 2)


def test_grad_of_a_real_function_of_complex_inputs_is_jaxs():
    assert_close(cr.grad(lambda z: cr.abs(z) ** 2)(3 + 4j), 6 - 8j, "grad |z|**2")
    assert_close(cr.grad(loss(cr))(Z), jax.jit(jax.grad(loss(jnp)))(jnp.asarray(Z)), "grad")
    value, g = cr.value_and_grad(loss(cr))(Z)
    assert_close(value, jax.jit(jax.value_and_grad(loss(jnp)))(jnp.asarray(Z))[0], "value")
    # jacrev of a real vector function of complex inputs
    f = lambda np_: lambda z: np_.abs(z) * np_.real(z)  # noqa: E731
    assert_close(cr.jacrev(f(cr))(Z), jax.jit(jax.jacrev(f(jnp)))(jnp.asarray(Z)), "jacrev")


def test_second_order_of_a_real_function_of_complex_inputs_as_jax_writes_it():
    v = np.array([1.0 - 1j, 0.5j, 2.0])
    mine = cr.jvp(cr.grad(loss(cr)), (Z,), (v,))[1]
    theirs = jax_jvp(jax.grad(loss(jnp)), (jnp.asarray(Z),), (jnp.asarray(v),))[1]
    assert_close(mine, theirs, "jvp of grad")
    mine = cr.grad(lambda z: cr.real(cr.vdot(cr.grad(loss(cr))(z), v)))(Z)
    theirs = jax.jit(jax.grad(lambda z: jnp.real(jnp.vdot(jax.grad(loss(jnp))(z), v))))(
        jnp.asarray(Z))
    assert_close(mine, theirs, "grad of grad")


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "hessian"])
def test_holomorphic_jacobians_and_hessians(name):
    f = lambda np_: lambda z: np_.exp(z) * z ** 2 + np_.sin(z[::-1])  # noqa: E731
    if name == "hessian":
        f = lambda np_: lambda z: np_.sum(np_.exp(z) * z ** 3)  # noqa: E731
    mine = getattr(cr, name)(f(cr), holomorphic=True)(Z)
    theirs = jax.jit(getattr(jax, name)(f(jnp), holomorphic=True))(jnp.asarray(Z))
    assert_close(mine, theirs, name)
    assert_close(cr.grad(lambda z: z ** 3, holomorphic=True)(1j),
                 jax.jit(jax.grad(lambda z: z ** 3, holomorphic=True))(1j), "grad")


@pytest.mark.parametrize("call, message", [
    (lambda: cr.grad(lambda z: z * z)(1j), "grad requires real-valued outputs"),
    (lambda: cr.grad(lambda x: x * 1j)(1.0), "grad requires real-valued outputs"),
    (lambda: cr.jacrev(lambda z: z * z)(Z), "jacrev requires real-valued outputs"),
    (lambda: cr.jacfwd(cr.abs)(Z), "jacfwd requires real-valued inputs"),
    (lambda: cr.hessian(loss(cr))(Z), "jacfwd requires real-valued inputs"),
    (lambda: cr.grad(lambda z: z * z, holomorphic=True)(1.0),
     "grad with holomorphic=True requires inputs with complex dtype"),
    (lambda: cr.jacfwd(cr.abs, holomorphic=True)(Z),
     "jacfwd with holomorphic=True requires outputs with complex dtype"),
])
def test_refused_where_jax_refuses(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_real_programs_with_complex_intermediates_have_real_derivatives():
    x = np.array([0.3, -1.2, 2.0])
    f = lambda np_: lambda x: np_.sum(np_.abs(np_.exp(1j * x) * (x + 2j)) ** 2 + np_.real(x * 1j))  # noqa: E731,E501
    g = cr.grad(f(cr))(x)
    assert g.dtype == np.float64
    assert_close(g, jax.jit(jax.grad(f(jnp)))(jnp.asarray(x)), "grad")
    assert_close(cr.hessian(f(cr))(x), jax.jit(jax.hessian(f(jnp)))(jnp.asarray(x)), "hessian")
    h = lambda np_: lambda x: np_.exp(1j * x)  # noqa: E731
    assert_close(cr.jacfwd(h(cr))(x), jax.jit(jax.jacfwd(h(jnp)))(jnp.asarray(x)), "jacfwd")


def test_pytrees_with_complex_leaves():
    tree = {"z": Z, "x": np.array([1.0, 2.0])}
    f = lambda np_: lambda t: np_.sum(np_.abs(t["z"] * t["x"][0]) ** 2) + np_.sum(t["x"] ** 2)  # noqa: E731,E501
    mine, theirs = cr.grad(f(cr))(tree), jax.jit(jax.grad(f(jnp)))(jax.tree.map(jnp.asarray, tree))
    for key in tree:
        assert_close(mine[key], theirs[key], key)


def test_a_complex_tensor_requires_grad_and_its_grad_is_jaxs():
    z = cr.tensor(Z, requires_grad=True)
    (cr.abs(z) ** 2).sum().backward()
    assert_close(z.grad, 2 * np.conj(Z), ".grad")  # PyTorch's would be 2 z: the conjugate
    with pytest.raises(RuntimeError, match="the output is complex"):
        (z * z).sum().backward()


def test_jit_runs_a_complex_program():
    step = cr.jit(cr.grad(loss(cr)))
    theirs = jax.jit(jax.grad(loss(jnp)))(jnp.asarray(Z))
    for _ in range(3):
        assert_close(step(Z), theirs, "jit")


def test_eig_gives_numpys_results_and_dtypes():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    triangular = np.array([[2.0, 1.0], [0.0, 3.0]])
    for a in (rotation, triangular, rotation * (1 + 1j)):
        w, v = cr.linalg.eig(a)
        expected = np.linalg.eig(a)
        assert w.dtype == expected.eigenvalues.dtype and v.dtype == expected.eigenvectors.dtype
        assert_close(w, expected.eigenvalues, "eigenvalues")
        assert_close(v, expected.eigenvectors, "eigenvectors")
        assert_close(cr.linalg.eigvals(a), np.linalg.eigvals(a), "eigvals")
    # grad of a real function of the complex eigenvalues of a real matrix: a real gradient
    f = lambda np_: lambda a: np_.sum(np_.abs(np_.linalg.eigvals(a) - 0.5j) ** 2)  # noqa: E731
    g = cr.grad(f(cr))(rotation)
    assert g.dtype == np.float64
    assert_close(g, jax.jit(jax.grad(f(jnp)))(jnp.asarray(rotation)), "grad")


def test_a_tangent_has_its_outputs_dtype():
    """A complex output whose complex part does not move gets a complex tangent all the
    same (found by the complex programs of tests/test_fuzz.py)."""
    x, v = np.array([0.3, -1.2]), np.array([1.0, 0.5])
    f = lambda np_: lambda x: x * 2.0 + np_.exp(1j * np.array([0.3, 0.4]))  # noqa: E731
    out, tangent = cr.jvp(f(cr), (x,), (v,))
    j_out, j_tangent = jax_jvp(f(jnp), (jnp.asarray(x),), (jnp.asarray(v),))
    assert_close(tangent, j_tangent, "jvp")
    assert_close(cr.jacfwd(f(cr))(x), jax.jit(jax.jacfwd(f(jnp)))(jnp.asarray(x)), "jacfwd")


# ---------------------------------------------------------------------------------------
# cr.gradcheck on complex inputs: real directions, then imaginary ones
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda z: cr.exp(z) * z,                                   # holomorphic
    lambda z: cr.abs(z) ** 2 + cr.real(z) * cr.angle(z),       # real, not holomorphic
    lambda z: cr.conj(z) * cr.sin(z),                          # complex, not holomorphic
    lambda z: cr.linalg.eigvals(cr.reshape(z, (2, 2))),
    lambda z: cr.linalg.svdvals(cr.reshape(z, (2, 2))),
], ids=["holomorphic", "real-output", "conj", "eigvals", "svdvals"])
def test_gradcheck_takes_complex_inputs(f):
    z = np.array([0.7 + 0.3j, 1.1 - 0.5j, 0.2 + 0.8j, -0.4 - 0.6j])
    assert cr.gradcheck(f, z, order=2, atol=1e-6, rtol=1e-5)
    assert cr.gradcheck(lambda z, x: f(z * x), z, np.array([1.5, 0.5, 2.0, 1.0]), order=1)
    assert cr.gradcheck(lambda z: cr.sum(f(cr.stack([z, 2.0 * z, 1.0 - z, z * z]))), 0.3 - 0.2j)


def test_gradcheck_finds_pytorchs_conjugate_and_a_rule_wrong_along_i():
    """A VJP with PyTorch's conjugate, g conj(f'(z)), is wrong under JAX's convention;
    a JVP that is right along real directions only, t Re(f'(z)), is found along i."""
    conjugated = cr.primitive(lambda z: np.exp(z))
    conjugated.defvjp(lambda g, ans, z: g * cr.conj(ans))
    conjugated.defjvp(lambda t, ans, z: t * ans)
    with pytest.raises(cr.GradcheckError, match="reverse mode"):
        cr.gradcheck(conjugated, np.array([0.3 + 0.4j]), order=1)
    real_only = cr.primitive(lambda z: np.exp(z))
    real_only.defvjp(lambda g, ans, z: g * ans)
    real_only.defjvp(lambda t, ans, z: cr.real(t) * ans)
    with pytest.raises(cr.GradcheckError, match="forward mode .* along imaginary directions"):
        cr.gradcheck(real_only, np.array([0.3 + 0.4j]), order=1, modes=("fwd",))


# ---------------------------------------------------------------------------------------
# hvp and linear operators of complex inputs; Tensor methods of complex tensors
# ---------------------------------------------------------------------------------------

def test_hvp_of_a_real_function_of_complex_inputs_is_jvp_of_grad():
    v = np.array([1.0 - 1j, 0.5j, 2.0])
    theirs = jax_jvp(jax.grad(loss(jnp)), (jnp.asarray(Z),), (jnp.asarray(v),))[1]
    assert_close(cr.hvp(loss(cr), Z, v), theirs, "hvp")
    with pytest.raises(TypeError, match="hessian_operator: complex inputs"):
        cr.hessian_operator(loss(cr), Z)


def test_linear_operator_of_a_holomorphic_function_is_its_complex_jacobian():
    f = lambda np_: lambda z: np_.exp(z) * z[::-1] + np_.sin(z) ** 2  # noqa: E731
    J = np.asarray(jax.jit(jax.jacfwd(f(jnp), holomorphic=True))(jnp.asarray(Z)))
    op = cr.linear_operator(f(cr), Z)
    rng = seeded("linear operator")
    v, u = like(rng, Z), like(rng, Z)
    assert op.dtype == np.complex128
    assert_close(op.matvec(v), J @ v, "matvec")
    assert_close(op.rmatvec(u), J.conj().T @ u, "rmatvec: the conjugate transpose's")
    assert_close(op.T @ u, J.T @ u, "transpose")
    assert_close(op.H @ u, J.conj().T @ u, "adjoint")
    assert_close(op.matmat(np.stack([v, u], 1)), J @ np.stack([v, u], 1), "matmat")
    from scipy.sparse.linalg import gmres
    x, info = gmres(op, J @ v, rtol=1e-12)
    assert info == 0 and np.allclose(x, v, atol=1e-8)


def test_linear_operator_of_a_real_input_with_complex_outputs():
    f = lambda np_: lambda x: np_.exp(1j * x) * x[::-1]  # noqa: E731
    x = np.array([0.3, -1.2, 2.0])
    J = np.asarray(jax.jit(jax.jacfwd(f(jnp)))(jnp.asarray(x)))
    op = cr.linear_operator(f(cr), x)
    rng = seeded("real to complex")
    v, u = like(rng, Z), like(rng, Z)     # complex vectors, as SciPy's solvers pass them
    assert_close(op.matvec(v), J @ v, "matvec")
    assert_close(op.rmatvec(u), J.conj().T @ u, "rmatvec")
    with pytest.raises(TypeError, match="complex inputs to real outputs"):
        cr.linear_operator(loss(cr), Z)


def test_complex_tensors_have_numpys_and_pytorchs_methods():
    z = cr.tensor(Z, requires_grad=True)
    assert_close(z.real, Z.real, "real")
    assert_close(z.imag, Z.imag, "imag")
    assert_close(z.conj(), Z.conj(), "conj")
    assert_close(z.conjugate(), Z.conj(), "conjugate")
    assert_close(z.angle(), np.angle(Z), "angle")
    assert_close(np.fft.fft(z), np.fft.fft(Z), "np.fft.fft on a tensor")

    def f(np_, z):
        spectrum = np_.fft.fft(z * np_.conj(z[::-1])) if np_ is jnp else \
            np.fft.fft(z * z[::-1].conj())
        return np_.sum(np_.abs(spectrum) ** 2 + np_.real(z) * np_.imag(z))
    value = f(cr, z)
    value.backward(create_graph=True)
    assert_close(z.grad, jax.jit(jax.grad(lambda z: f(jnp, z)))(jnp.asarray(Z)), ".grad")
    v = np.array([0.5, -1.0j, 1.0 + 1.0j])
    g = z.grad
    z.grad = None
    cr.real(cr.sum(g * v)).backward()   # second order: Re<grad, v> differentiated
    theirs = jax.jit(jax.grad(
        lambda z: jnp.real(jnp.sum(jax.grad(lambda z: f(jnp, z))(z) * v))))(jnp.asarray(Z))
    assert_close(z.grad, theirs, "grad of the grad")
