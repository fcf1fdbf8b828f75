"""chainrule.lax.linalg against jax.lax.linalg (float64): the same outputs (shapes,
dtypes, numbers), and where JAX differentiates, the same gradients (reverse mode),
the same directional derivatives (forward mode) and the same Hessians, plus vmap and
cr.jit (traced, then replayed on other numbers).

Eigenvectors and singular vectors are compared as LAPACK leaves them (the two libraries
call the same routines); only ``eig``'s left eigenvectors, which chainrule computes from
the right ones, are compared up to each column's phase. A function of vectors that is
differentiated is one that does not depend on their signs.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.lax import linalg as J

import chainrule as cr
from chainrule.lax import linalg as C
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

RTOL, ATOL = 1e-10, 1e-12


def _same(ours, theirs, rtol=RTOL, atol=ATOL):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def _positive_definite(name, shape):
    a = seeded("lax.linalg", name).standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _matrix(name, shape, shift=0.0):
    return seeded("lax.linalg", name).standard_normal(shape) + shift * np.eye(*shape[-2:])


# name -> (build(L, N) giving the function of the arguments, the arguments): L is a
# lax.linalg module, N a NumPy namespace; each function returns a scalar whose
# derivatives are compared (sign-free in the vectors it reads)
def _weights(name, shape):
    return seeded("lax.linalg", name, "weights").standard_normal(shape)


DIFFERENTIABLE = {
    "cholesky": (lambda L, N: lambda a: N.sum(L.cholesky(a) * _weights("cholesky", (2, 4, 4))),
                 [_positive_definite("cholesky", (2, 4, 4))]),
    "cholesky unsymmetrized": (
        lambda L, N: lambda a: N.sum(L.cholesky(a + N.swapaxes(a, -1, -2),
                                                symmetrize_input=False) ** 2),
        [_positive_definite("cholesky-u", (4, 4))]),
    "eigh values": (lambda L, N: lambda a: N.sum(L.eigh(a)[1] * N.arange(1.0, 5.0)),
                    [_positive_definite("eigh", (3, 4, 4))]),
    "eigh vectors": (lambda L, N: lambda a: N.sum(L.eigh(a)[0] ** 2 * _weights("eighv", (4, 4))),
                     [_positive_definite("eighv", (4, 4))]),
    "eigh subset": (lambda L, N: lambda a: N.sum(L.eigh(a, subset_by_index=(1, 3))[1] ** 2),
                    [_positive_definite("eighs", (4, 4))]),
    "eig values": (lambda L, N: lambda a: N.sum(N.abs(L.eig(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]) ** 2),
        [_matrix("eig", (4, 4))]),
    "eig right vectors": (lambda L, N: lambda a: N.sum(N.abs(L.eig(
        a, compute_left_eigenvectors=False)[1]) ** 2 * _weights("eigv", (4, 4))),
        [_matrix("eigv", (4, 4))]),
    "eig left vectors": (lambda L, N: lambda a: N.sum(N.abs(L.eig(
        a, compute_right_eigenvectors=False)[1]) ** 2 * _weights("eigl", (4, 4))),
        [_matrix("eigl", (4, 4))]),
    "lu": (lambda L, N: lambda a: N.sum(L.lu(a)[0] * _weights("lu", (4, 4))),
           [_matrix("lu", (4, 4))]),
    "lu batched": (lambda L, N: lambda a: N.sum(L.lu(a)[0] ** 2),
                   [_matrix("lub", (2, 3, 3))]),
    "qr square": (lambda L, N: lambda a: N.sum(L.qr(a)[1] * _weights("qr", (4, 4))),
                  [_matrix("qr", (4, 4), 3.0)]),
    "qr full, tall": (lambda L, N: lambda a: N.sum(L.qr(a)[0] * _weights("qrf", (5, 5))),
                      [_matrix("qrf", (5, 3))]),
    "qr full, tall, batched": (lambda L, N: lambda a: N.sum(L.qr(a)[0] ** 3),
                               [_matrix("qrfb", (2, 4, 2))]),
    "qr reduced": (lambda L, N: lambda a: N.sum(
        L.qr(a, full_matrices=False)[0] * _weights("qrr", (5, 3))),
        [_matrix("qrr", (5, 3))]),
    "qr pivoted": (lambda L, N: lambda a: N.sum(
        L.qr(a, pivoting=True)[1] * _weights("qrp", (4, 4))), [_matrix("qrp", (4, 4), 3.0)]),
    "qr pivoted, wide, reduced": (lambda L, N: lambda a: N.sum(
        L.qr(a, pivoting=True, full_matrices=False)[0] ** 3), [_matrix("qrpw", (3, 5))]),
    "ormqr": (lambda L, N: lambda a, taus, c: N.sum(L.ormqr(a, taus, c) ** 3),
              [_matrix("om", (5, 3)), seeded("lax.linalg", "om-taus").uniform(0.5, 1.5, 3),
               _weights("om-c", (5, 2))]),
    "ormqr from the right, transposed": (
        lambda L, N: lambda a, taus, c: N.sum(L.ormqr(a, taus, c, left=False,
                                                      transpose=True) ** 3),
        [_matrix("omr", (4, 3)), seeded("lax.linalg", "omr-taus").uniform(0.5, 1.5, 2),
         _weights("omr-c", (2, 4))]),
    "svd values": (lambda L, N: lambda a: N.sum(L.svd(a, compute_uv=False) ** 3),
                   [_matrix("svd", (2, 5, 3))]),
    "svd reduced": (lambda L, N: lambda a: N.sum(
        L.svd(a, full_matrices=False)[0] ** 2 * _weights("svdr", (4, 3))),
        [_matrix("svdr", (4, 3))]),
    "tridiagonal_solve": (
        lambda L, N: lambda dl, d, du, b: N.sum(L.tridiagonal_solve(dl, d, du, b) ** 2),
        [np.concatenate([[0.0], _weights("tri-dl", (4,))]), 4 + _weights("tri-d", (5,)),
         np.concatenate([_weights("tri-du", (4,)), [0.0]]), _weights("tri-b", (5, 2))]),
    "tridiagonal_solve perturb_singular": (  # (a matrix that is not singular: the plain solve)
        lambda L, N: lambda dl, d, du, b: N.sum(
            L.tridiagonal_solve(dl, d, du, b, perturb_singular=True) ** 2),
        [np.concatenate([[0.0], _weights("trp-dl", (4,))]), 0.5 + _weights("trp-d", (5,)),
         np.concatenate([_weights("trp-du", (4,)), [0.0]]), _weights("trp-b", (5, 2))]),
    "cholesky_update": (
        lambda L, N: lambda r, w: N.sum(L.cholesky_update(r, w) * _weights("cu", (4, 4))),
        [np.linalg.cholesky(_positive_definite("cu", (4, 4))).T, _weights("cu-w", (4,))]),
    "symmetric_product": (
        lambda L, N: lambda a, c: N.sum(L.symmetric_product(a, c, alpha=2.0, beta=0.5) ** 2),
        [_matrix("sp", (4, 3)), _positive_definite("sp-c", (4, 4))]),
    "householder_product": (
        lambda L, N: lambda a, taus: N.sum(L.householder_product(a, taus) ** 3),
        [_matrix("hh", (5, 3)), seeded("lax.linalg", "hh-taus").uniform(0.5, 1.5, 3)]),
}

class _Composed:
    """jax.lax.linalg, but for what JAX does not differentiate (cholesky_update,
    symmetric_product, householder_product, ormqr, eigh's subset_by_index; eig's eigenvalues
    only with ``enable_eigvec_derivs``), written with
    jax.numpy's differentiable operations: the reference for their derivatives (the
    values are checked against jax.lax.linalg's own)."""

    def __getattr__(self, name):
        return getattr(J, name)

    @staticmethod
    def cholesky_update(r, w):
        return jnp.linalg.cholesky(r.T @ r + jnp.outer(w, w)).T

    @staticmethod
    def symmetric_product(a, c, alpha=1.0, beta=0.0, symmetrize_output=False):
        out = alpha * a @ jnp.swapaxes(a, -1, -2) + beta * c
        if symmetrize_output:
            return jnp.tril(out) + jnp.swapaxes(jnp.tril(out, -1), -1, -2)
        return out

    @staticmethod
    def householder_product(a, taus):
        m, n = a.shape[-2:]
        rows = jnp.arange(m)[:, None]
        q = jnp.eye(m)
        for i in range(taus.shape[-1]):
            v = jnp.where(rows > i, a[:, i:i + 1], 0.0) + (rows == i)
            q = q - taus[i] * (q @ v) @ v.T
        return q[:, :n]

    @staticmethod
    def ormqr(a, taus, c, left=True, transpose=False):
        m = a.shape[-2]
        rows = jnp.arange(m)[:, None]
        q = jnp.eye(m)
        for i in range(taus.shape[-1]):
            v = jnp.where(rows > i, a[:, i:i + 1], 0.0) + (rows == i)
            q = q - taus[i] * (q @ v) @ v.T
        q = q.T if transpose else q
        return q @ c if left else c @ q

    @staticmethod
    def eig(a, **keywords):  # (JAX asks for consent even for the eigenvalues alone)
        return J.eig(a, enable_eigvec_derivs=True, **keywords)

    @staticmethod
    def eigh(a, subset_by_index=None):
        v, w = J.eigh(a)
        if subset_by_index is None:
            return v, w
        start, stop = subset_by_index
        return v[..., start:stop], w[..., start:stop]


COMPOSED = _Composed()

# every flag of triangular_solve: (left_side, lower, transpose_a, conjugate_a, unit_diagonal)
FLAGS = list(itertools.product([True, False], repeat=5))


def _triangular_case(flags):
    left_side = flags[0]
    name = "ts" + "".join("1" if f else "0" for f in flags)
    a = _matrix(name, (4, 4), 4.0)
    b = _weights(name, (4, 3) if left_side else (3, 4))
    keywords = dict(zip(["left_side", "lower", "transpose_a", "conjugate_a",
                         "unit_diagonal"], flags))
    return (lambda L, N: lambda a, b: N.sum(L.triangular_solve(a, b, **keywords) ** 2), [a, b])


for _flags in FLAGS:
    DIFFERENTIABLE[f"triangular_solve {_flags}"] = _triangular_case(_flags)


def _complex_triangular_case(transpose_a, conjugate_a):
    """A complex a (from its real and imaginary parts, the arguments), where
    ``conjugate_a`` matters."""
    name = f"tsc{int(transpose_a)}{int(conjugate_a)}"
    keywords = dict(left_side=True, lower=True, transpose_a=transpose_a,
                    conjugate_a=conjugate_a)
    return (lambda L, N: lambda re, im, b: N.sum(N.abs(
        L.triangular_solve(re + 1j * im, b * (1 + 0.5j), **keywords)) ** 2),
        [_matrix(name, (4, 4), 4.0), _matrix(name + "-im", (4, 4)), _weights(name, (4, 3))])


for _transpose, _conjugate in itertools.product([True, False], repeat=2):
    DIFFERENTIABLE[f"triangular_solve complex a, transpose_a={_transpose}, "
                   f"conjugate_a={_conjugate}"] = _complex_triangular_case(_transpose, _conjugate)


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_values_gradients_directional_derivatives_and_hessians_equal_jax(name):
    build, args = DIFFERENTIABLE[name]
    ours, theirs = build(C, cr), build(COMPOSED, jnp)
    if "subset" not in name:  # (JAX computes no subset on a CPU)
        _same(ours(*args), build(J, jnp)(*args))
    every = tuple(range(len(args)))
    tangents = [seeded("lax.linalg", name, "tangent", str(i)).standard_normal(np.shape(a))
                for i, a in enumerate(args)]

    def jaxs(args, tangents):  # compiled: eager JAX takes ten times as long on these
        return (jax.grad(theirs, argnums=every)(*args), jax.jvp(theirs, args, tangents)[1],
                jax.hessian(lambda x: theirs(x, *args[1:]))(args[0]))

    want_grads, want_jvp, want_hessian = jax.jit(jaxs)(args, tangents)
    for got, want in zip(cr.grad(ours, argnums=every)(*args), want_grads):
        _same(got, want)
    _same(cr.jvp(ours, args, tangents)[1], want_jvp)
    first = args[0]
    rest = args[1:]
    _same(cr.hessian(lambda x: ours(x, *rest))(first), want_hessian, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_jit_replays_and_vmap_maps_the_gradient(name):
    build, args = DIFFERENTIABLE[name]
    ours, theirs = build(C, cr), build(COMPOSED, jnp)
    jitted = cr.jit(cr.grad(ours))
    other = [a * 1.01 + 0.001 for a in args]  # (keeps the triangles and diagonals' shape)
    jax_grad = jax.jit(jax.grad(theirs))
    for values in (args, other):
        _same(jitted(*values), jax_grad(*values))
    stacked = [np.stack([a, b]) for a, b in zip(args, other)]
    _same(cr.vmap(cr.grad(ours))(*stacked), jax.jit(jax.vmap(jax.grad(theirs)))(*stacked))


def test_the_decompositions_outputs_equal_jax_with_their_dtypes():
    spd = _positive_definite("outputs", (2, 4, 4))
    a, tall, wide = _matrix("outputs-a", (4, 4)), _matrix("tall", (5, 3)), _matrix("wide", (3, 5))
    pairs = [(C.cholesky(spd), J.cholesky(spd)), (C.eigh(spd), J.eigh(spd)),
             (C.lu(a), J.lu(a)), (C.lu(spd), J.lu(spd)),
             (C.schur(a), J.schur(a)), (C.schur(a, compute_schur_vectors=False),
                                        J.schur(a, compute_schur_vectors=False))]
    for x in (a, tall, wide):
        for full in (True, False):
            pairs += [(C.qr(x, full_matrices=full), J.qr(x, full_matrices=full)),
                      (C.svd(x, full_matrices=full), J.svd(x, full_matrices=full))]
        pairs.append((C.svd(x, compute_uv=False), J.svd(x, compute_uv=False)))
        # (JAX computes no subset on a CPU: the reference is its full SVD's slice)
        u, s, vh = J.svd(x, full_matrices=False)
        pairs.append((C.svd(x, full_matrices=False, subset_by_index=(1, 2)),
                      (u[:, 1:2], s[1:2], vh[1:2])))
    for ours, theirs in pairs:
        if isinstance(theirs, (list, tuple)):
            assert type(ours) is type(theirs), (type(ours), type(theirs))
            assert len(ours) == len(theirs)
            for o, t in zip(ours, theirs):
                _same(o, t)
        else:
            _same(ours, theirs)


def test_eigh_and_cholesky_read_the_triangle_they_are_told_to():
    """Without symmetrizing, only ``lower`` (or the upper) triangle is read, and of a
    complex diagonal its real part. (JAX's eigenvectors from the upper triangle and
    NumPy's may differ in sign, which is free.)"""
    spd = _positive_definite("triangle", (2, 4, 4))
    junk = _matrix("triangle-junk", (2, 4, 4))
    hermitian = spd + 1j * (junk - np.swapaxes(junk, -1, -2))
    for matrix in (spd, hermitian):
        for lower in (True, False):
            unread = np.triu(junk, 1) if lower else np.tril(junk, -1)
            scrambled = (np.tril(matrix) if lower else np.triu(matrix)) + 10 * unread
            scrambled = scrambled + 0.5j * np.eye(4) if matrix is hermitian else scrambled
            v, w = C.eigh(scrambled, lower=lower, symmetrize_input=False)
            jv, jw = J.eigh(scrambled, lower=lower, symmetrize_input=False)
            _same(w, jw)
            _same(w, np.linalg.eigvalsh(matrix))
            signs = np.sum(np.conj(jv) * np.asarray(v), axis=-2, keepdims=True)
            _same(np.asarray(v), jv * signs)
        scrambled = np.tril(matrix) + 10 * np.triu(junk, 1)
        _same(C.cholesky(scrambled, symmetrize_input=False),
              J.cholesky(scrambled, symmetrize_input=False))


def test_eig_gives_jaxs_eigenvalues_and_right_vectors_and_left_vectors_up_to_phase():
    a = _matrix("eig-outputs", (3, 4, 4))
    w, vl, vr = C.eig(a)
    jw, jvl, jvr = J.eig(a)
    _same(w, jw)
    _same(vr, jvr)
    vl, jvl = np.asarray(vl), np.asarray(jvl)
    assert vl.dtype == jvl.dtype and vl.shape == jvl.shape
    phase = np.sum(np.conj(jvl) * vl, axis=-2, keepdims=True)  # one unit number per column
    np.testing.assert_allclose(np.abs(phase), 1.0, rtol=1e-10)
    np.testing.assert_allclose(vl, jvl * phase, rtol=1e-9, atol=1e-12)
    # the definition: vl^H a = w vl^H, columns of length 1
    left = np.swapaxes(np.conj(vl), -1, -2)
    np.testing.assert_allclose(left @ a, np.asarray(w)[..., :, None] * left, atol=1e-12)
    assert [len(C.eig(a[0], compute_left_eigenvectors=left, compute_right_eigenvectors=right))
            for left in (True, False) for right in (True, False)] == [3, 2, 2, 1]


def test_lu_pivots_to_permutation_equals_jax_on_batches():
    pivots = np.array([[2, 2, 3], [1, 2, 2], [0, 1, 2]], dtype=np.int32)
    _same(C.lu_pivots_to_permutation(pivots, 5), J.lu_pivots_to_permutation(pivots, 5))
    _same(cr.jit(lambda p: C.lu_pivots_to_permutation(p, 4))(pivots),
          J.lu_pivots_to_permutation(pivots, 4))


def test_symmetric_product_with_its_output_symmetrized_equals_jax():
    """A c that is not symmetric tells the two apart: symmetrized, the output is its
    lower triangle mirrored."""
    a, c = _matrix("sp-sym", (2, 4, 3)), _matrix("sp-sym-c", (2, 4, 4))
    for symmetrize in (True, False):
        ours = C.symmetric_product(a, c, alpha=0.5, beta=2.0, symmetrize_output=symmetrize)
        _same(ours, J.symmetric_product(a, c, alpha=0.5, beta=2.0,
                                        symmetrize_output=symmetrize))
        assert np.array_equal(ours, np.swapaxes(ours, -1, -2)) == symmetrize
        loss = lambda L, N: lambda a, c: N.sum(N.sin(L.symmetric_product(
            a, c, alpha=0.5, beta=2.0, symmetrize_output=symmetrize)))
        for ours_g, theirs_g in zip(cr.grad(loss(C, cr), argnums=(0, 1))(a, c),
                                    jax.grad(loss(COMPOSED, jnp), argnums=(0, 1))(a, c)):
            _same(ours_g, theirs_g)


def _tridiagonal_systems(name, dtype, m, count=40):
    """Diagonals of entries -1, 0 and 1: many of the matrices singular, some with a
    whole row of zeros; right-hand sides of two columns."""
    rng = seeded("lax.linalg", name, str(np.dtype(dtype)), str(m))
    dl, d, du = (rng.integers(-1, 2, (count, m)).astype(dtype) for _ in range(3))
    if np.issubdtype(dtype, np.complexfloating):
        d = d + 1j * rng.integers(-1, 2, (count, m)) * (rng.random((count, m)) < 0.3)
    dl[..., 0], du[..., -1] = 0, 0
    return dl, d, du, rng.integers(-2, 3, (count, m, 2)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_tridiagonal_solve_perturbs_singular_systems_as_jax_does(dtype):
    """With ``perturb_singular`` a zero pivot becomes eps * max|U| (doubled until the
    quotient fits): the result is finite and JAX's, to the bit for real matrices."""
    for m in (1, 2, 3, 5):
        systems = _tridiagonal_systems("perturbed", dtype, m)
        ours = C.tridiagonal_solve(*systems, perturb_singular=True)
        theirs = np.asarray(J.tridiagonal_solve(*systems, perturb_singular=True))
        assert ours.dtype == theirs.dtype and np.isfinite(ours).all()
        if np.issubdtype(dtype, np.complexfloating):  # (rounding: to each system's size)
            size = np.maximum(np.abs(theirs).max(axis=(-2, -1), keepdims=True), 1.0)
            np.testing.assert_allclose(ours / size, theirs / size, rtol=0, atol=1e-14)
        else:
            np.testing.assert_array_equal(ours, theirs)
    singular = [np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([2.0, 0.0])]
    with pytest.raises(np.linalg.LinAlgError):  # (the plain solve refuses it)
        C.tridiagonal_solve(*singular, np.ones((2, 1)))
    _same(cr.jit(lambda *s: C.tridiagonal_solve(*s, perturb_singular=True))(
        *singular, np.ones((2, 1))),
        J.tridiagonal_solve(*singular, np.ones((2, 1)), perturb_singular=True))


def test_inverse_iteration_through_the_perturbed_solve_finds_jaxs_eigenvector():
    """The use it exists for: a symmetric tridiagonal matrix shifted by one of its
    eigenvalues is singular to working precision; one solve gives that eigenvector."""
    rng = seeded("lax.linalg", "inverse iteration")
    d, e = rng.standard_normal(20), rng.standard_normal(19)
    shift = np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1))[3]
    args = (np.concatenate([[0.0], e]), d - shift, np.concatenate([e, [0.0]]),
            np.ones((20, 1)))
    ours = C.tridiagonal_solve(*args, perturb_singular=True)
    _same(ours, J.tridiagonal_solve(*args, perturb_singular=True))
    vector = ours[:, 0] / np.linalg.norm(ours)
    matrix = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(matrix @ vector, shift * vector, atol=1e-10)


def test_pivoted_qr_and_the_reductions_equal_jax_in_values_and_dtypes():
    """qr's column order, hessenberg's and tridiagonal's packed reflectors are LAPACK's
    (geqp3, gehrd, sytrd/hetrd) in both; ormqr applies reflectors under every flag."""
    for dtype in (np.float64, np.complex128):
        x = _matrix("reductions", (2, 5, 5)).astype(dtype)
        if dtype == np.complex128:
            x = x + 1j * _matrix("reductions-im", (2, 5, 5))
        for shape in [(5, 5), (5, 3), (3, 5)]:
            for full in (True, False):
                ours = C.qr(x[..., :shape[0], :shape[1]], pivoting=True, full_matrices=full)
                theirs = J.qr(x[..., :shape[0], :shape[1]], pivoting=True,
                              full_matrices=full)
                for got, want in zip(ours, theirs):
                    assert np.asarray(got).dtype == want.dtype
                    _same(got, want)
        for got, want in zip(C.hessenberg(x), J.hessenberg(x)):
            _same(got, want)
        for lower in (True, False):  # (the other triangle unread: x is not Hermitian)
            for got, want in zip(C.tridiagonal(x, lower=lower), J.tridiagonal(x, lower=lower)):
                assert np.asarray(got).dtype == want.dtype
                _same(got, want)
        h, taus = jnp.linalg.qr(x[..., :, :3], mode="raw")  # (h: the packed factor's transpose)
        h, taus = np.swapaxes(np.asarray(h), -1, -2), np.asarray(taus)
        for left, transpose in itertools.product([True, False], repeat=2):
            c = _weights("ormqr-c", (2, 5, 2) if left else (2, 2, 5)).astype(dtype)
            _same(C.ormqr(h, taus, c, left=left, transpose=transpose),
                  J.ormqr(h, taus, c, left=left, transpose=transpose))


def test_what_jax_does_not_differentiate_raises_here_too():
    """A full SVD of a matrix that is not square (its extra vectors are any basis of
    the rest of the space) and a Schur decomposition. (A full QR's extra columns are
    LAPACK's Householder basis, a smooth function of the matrix: both differentiate it.)"""
    tall = _matrix("no-derivative", (5, 3))
    for build in (lambda L, N: lambda x: N.sum(L.svd(x)[0]),
                  lambda L, N: lambda x: N.sum(L.svd(x.T)[2]),
                  lambda L, N: lambda x: N.sum(L.schur(x[:3])[0]),
                  lambda L, N: lambda x: N.sum(L.hessenberg(x[:3])[0]),
                  lambda L, N: lambda x: N.sum(L.tridiagonal(x[:3])[1])):
        with pytest.raises(Exception):
            jax.grad(build(J, jnp))(tall)
        with pytest.raises(TypeError, match="not differentiable"):
            cr.grad(build(C, cr))(tall)


def test_bad_input_is_refused_in_one_line_naming_the_operation():
    cases = [(lambda: C.cholesky(np.ones((2, 3))),
              "lax.linalg.cholesky: a matrix of shape (2, 3); expected square"),
             (lambda: C.triangular_solve(np.eye(3), np.ones((2, 3)), left_side=True),
              "lax.linalg.triangular_solve: a is 3x3"),
             (lambda: C.tridiagonal_solve(np.ones(3), np.ones(4), np.ones(4), np.ones((4, 1))),
              "lax.linalg.tridiagonal_solve: dl has shape (3,)"),
             (lambda: C.lu_pivots_to_permutation(np.zeros(4, np.int32), 3),
              "permutation_size 3 is less than the 4 pivots"),
             (lambda: C.householder_product(np.ones((3, 2)), np.ones(3)), "3 taus"),
             (lambda: C.ormqr(np.ones((4, 2)), np.ones(2), np.ones((3, 2))),
              "lax.linalg.ormqr: c has shape (3, 2); expected 4 rows"),
             (lambda: C.hessenberg(np.ones((2, 3))), "lax.linalg.hessenberg: a matrix")]
    for call, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
            call()
        assert "\n" not in str(info.value)
