"""chainrule.scipy.linalg's structured matrices, named matrices and the decompositions
JAX's jax.scipy.linalg adds (schur, hessenberg, polar, qr_multiply, eigh_tridiagonal,
expm_frechet, funm, rsf2csf): values against scipy.linalg, derivatives against
jax.scipy.linalg in float64, and a refusal where JAX gives no derivative."""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sl

import chainrule as cr
import chainrule.scipy.linalg as sla
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(78)


def vec(n):
    return RNG.standard_normal(n)


# (id, the function's name, the arguments: arrays differentiated, then the rest)
BUILT = [
    ("toeplitz", "toeplitz", (vec(3), vec(4)), ()),
    ("toeplitz_hermitian", "toeplitz", (vec(4),), ()),
    ("hankel", "hankel", (vec(3), vec(5)), ()),
    ("hankel_square", "hankel", (vec(4),), ()),
    ("circulant", "circulant", (vec(4),), ()),
    ("companion", "companion", (vec(5),), ()),
    ("leslie", "leslie", (vec(4), vec(3)), ()),
    ("fiedler", "fiedler", (vec(4),), ()),
    ("fiedler_companion", "fiedler_companion", (vec(6),), ()),
    ("fiedler_companion_small", "fiedler_companion", (vec(2),), ()),
    ("convolution_full", "convolution_matrix", (vec(3),), (5,)),
    ("convolution_same", "convolution_matrix", (vec(4),), (3, "same")),
    ("convolution_valid", "convolution_matrix", (vec(2),), (5, "valid")),
    ("block_diag", "block_diag", (vec((2, 3)), vec(2), vec(()), vec((1, 1))), ()),
]


@pytest.mark.parametrize("name, function, arrays, rest", BUILT, ids=[b[0] for b in BUILT])
def test_a_structured_matrix_and_its_gradient_are_scipys_and_jaxs(name, function, arrays,
                                                                   rest):
    ours = getattr(sla, function)(*arrays, *rest)
    np.testing.assert_allclose(ours, getattr(sl, function)(*arrays, *rest), rtol=1e-14)
    weights = RNG.standard_normal(np.shape(ours))
    argnums = tuple(range(len(arrays)))
    grads = cr.grad(lambda *a: cr.sum(getattr(sla, function)(*a, *rest) * weights),
                    argnums=argnums)(*arrays)
    jax_grads = jax.grad(lambda *a: jnp.sum(getattr(jsl, function)(*a, *rest) * weights),
                         argnums=argnums)(*arrays)
    for a, b in zip(grads, jax_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("function, args", [
    ("dft", (4,)), ("dft", (3, "sqrtn")), ("hadamard", (4,)), ("helmert", (4,)),
    ("helmert", (3, True)), ("hilbert", (4,)), ("invhilbert", (4,)), ("pascal", (4,)),
    ("pascal", (4, "lower")), ("invpascal", (4,)), ("invpascal", (3, "upper"))])
def test_the_named_matrices_are_scipys_and_jaxs(function, args):
    ours = getattr(sla, function)(*args)
    np.testing.assert_array_equal(ours, getattr(sl, function)(*args))
    # (JAX's Pascal matrices come from float32 logarithms: right to float32's precision,
    # where SciPy's and ours are exact integers)
    rtol = 1e-5 if "pascal" in function else 1e-12
    np.testing.assert_allclose(ours, getattr(jsl, function)(*args), rtol=rtol, atol=rtol)


def test_polar_on_both_sides_with_jaxs_derivative():
    a = RNG.standard_normal((4, 3))
    for side in ("right", "left"):
        u, p = sla.polar(a, side)
        su, sp = sl.polar(a, side)
        np.testing.assert_allclose(u, su, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(p, sp, rtol=1e-12, atol=1e-13)
        w = RNG.standard_normal(np.shape(u)), RNG.standard_normal(np.shape(p))

        def loss(lib, polar):
            return lambda a: lib.sum(polar(a, side)[0] * w[0]) + lib.sum(polar(a, side)[1]
                                                                         * w[1])
        np.testing.assert_allclose(
            cr.grad(loss(cr, sla.polar))(a),
            jax.grad(loss(jnp, lambda a, s: jsl.polar(a, s, method="svd")))(a),
            rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode, pivoting, conjugate", [
    ("right", False, False), ("left", False, False), ("right", True, False),
    ("left", False, True)])
def test_qr_multiply_is_scipys_and_differentiates_as_jaxs(mode, pivoting, conjugate):
    a = RNG.standard_normal((4, 3))
    c = RNG.standard_normal((2, 4)) if mode == "right" else RNG.standard_normal((3, 2))
    ours = sla.qr_multiply(a, c, mode, pivoting, conjugate)
    for x, y in zip(ours, sl.qr_multiply(a, c, mode, pivoting, conjugate)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-13)
    # JAX's qr_multiply has no derivative (its geqrf has none): ours is its QR's, as
    # jnp.linalg.qr differentiates it, and central differences agree
    def theirs(a, c):
        q, r = jnp.linalg.qr(a)
        return jnp.sum((c @ q if mode == "right" else q @ c) ** 2) + jnp.sum(r)
    grads = cr.grad(lambda a, c: cr.sum(sla.qr_multiply(a, c, mode)[0] ** 2)
                    + cr.sum(sla.qr_multiply(a, c, mode)[1]), argnums=(0, 1))(a, c)
    if not pivoting:
        for x, y in zip(grads, jax.grad(theirs, argnums=(0, 1))(a, c)):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
    cr.gradcheck(lambda a, c: sla.qr_multiply(a, c, mode, pivoting, conjugate)[0], a, c)


def test_eigh_tridiagonal_values_vectors_and_derivatives():
    d, e = vec(5), vec(4)
    w, v = sla.eigh_tridiagonal(d, e)
    sw, sv = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, sw, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v.T @ sv), np.eye(5), atol=1e-10)  # up to signs
    np.testing.assert_allclose(sla.eigh_tridiagonal(d, e, eigvals_only=True),
                               jsl.eigh_tridiagonal(d, e, eigvals_only=True), rtol=1e-12)
    np.testing.assert_allclose(
        sla.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        sw[1:4], rtol=1e-12)
    # JAX's eigh_tridiagonal has no reverse mode (a while_loop): ours is eigvalsh's of
    # the tridiagonal matrix, as JAX differentiates that, and central differences agree
    weights = vec(5)

    def theirs(d, e):
        matrix = jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(e, -1)
        return jnp.sum(jnp.linalg.eigvalsh(matrix) * weights)
    grads = cr.grad(lambda d, e: cr.sum(sla.eigh_tridiagonal(d, e, eigvals_only=True)
                                        * weights), argnums=(0, 1))(d, e)
    for x, y in zip(grads, jax.grad(theirs, argnums=(0, 1))(d, e)):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
    cr.gradcheck(lambda d, e: sla.eigh_tridiagonal(d, e)[0], d, e)
    with pytest.raises(ValueError, match="select must be"):
        sla.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))


def test_expm_frechet_is_scipys_and_differentiates_as_jaxs():
    a, direction = 0.5 * RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    ours = sla.expm_frechet(a, direction)
    for x, y in zip(ours, sl.expm_frechet(a, direction)):
        np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-13)
    w = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(
        cr.grad(lambda a, e: cr.sum(sla.expm_frechet(a, e, compute_expm=False) * w),
                argnums=(0, 1))(a, direction),
        jax.grad(lambda a, e: jnp.sum(jsl.expm_frechet(a, e, compute_expm=False) * w),
                 argnums=(0, 1))(a, direction), rtol=1e-9, atol=1e-11)


def test_schur_hessenberg_funm_rsf2csf_are_scipys_and_refuse_a_derivative():
    a = RNG.standard_normal((4, 4))
    for ours, theirs in ((sla.schur(a), sl.schur(a)),
                         (sla.schur(a, "complex"), sl.schur(a, "complex")),
                         (sla.hessenberg(a, calc_q=True), sl.hessenberg(a, calc_q=True)),
                         (sla.rsf2csf(*sl.schur(a)), sl.rsf2csf(*sl.schur(a)))):
        for x, y in zip(ours, theirs):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(sla.hessenberg(a), sl.hessenberg(a), rtol=1e-12, atol=1e-13)
    spd = a @ a.T + np.eye(4)
    np.testing.assert_allclose(sla.funm(spd, np.exp), sl.funm(spd, np.exp), rtol=1e-12)
    value, error = sla.funm(spd, np.exp, disp=False)
    assert error < 1e-8 and np.allclose(value, sl.expm(spd))
    for f in (lambda a: sla.schur(a)[0], lambda a: sla.hessenberg(a),
              lambda a: sla.funm(a, np.exp)):
        with pytest.raises(TypeError, match="differentiated"):
            cr.grad(lambda a: cr.sum(f(a)))(a)


def test_bad_input_is_named_in_one_line():
    with pytest.raises(ValueError, match="toeplitz: expected a 1-d array"):
        sla.toeplitz(np.ones((2, 2)))
    with pytest.raises(ValueError, match="leslie: s must have one entry fewer"):
        sla.leslie(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="convolution_matrix: mode"):
        sla.convolution_matrix(np.ones(2), 3, "circular")
    with pytest.raises(ValueError, match="companion: the first coefficient"):
        sla.companion(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="expm_frechet: E must have"):
        sla.expm_frechet(np.eye(2), np.eye(3))


def test_a_zero_leading_coefficient_raises_eagerly_under_vmap_and_at_each_jit_run():
    zero_first, fine = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0])
    for f in (sla.companion, sla.fiedler_companion):
        message = f"{f.__name__}: the first coefficient must not be zero"
        with pytest.raises(ValueError, match=message):
            f(cr.tensor(zero_first))
        with pytest.raises(ValueError, match=message):
            cr.grad(lambda a: cr.sum(f(a)))(zero_first)
        with pytest.raises(ValueError, match=message):
            cr.vmap(f)(np.stack([zero_first, fine]))
        program = cr.jit(f)
        np.testing.assert_array_equal(program(fine), f(fine))
        with pytest.raises(ValueError, match=message):
            program(zero_first)
