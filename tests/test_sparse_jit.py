"""Sparse Jacobians and Hessians under cr.jit: the pattern is found and coloured once,
while tracing, and the program holds only the compressed passes and the gather; every
call gives a scipy.sparse.csr_array equal to the eager one."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.sparse import evaluate, pattern
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(45)

pytest.importorskip("scipy")


def residual(x):  # a 1-D reaction-diffusion residual: tridiagonal
    inner = x[:-2] - 2 * x[1:-1] + x[2:] + x[1:-1] ** 2 * cr.sin(x[1:-1])
    return cr.concatenate([x[:1] - 1.0, inner, x[-1:] + cr.exp(x[-2:-1])])


def rosenbrock(x):  # the extended Rosenbrock function: a banded Hessian
    return cr.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse", "bidirectional"])
def test_a_jitted_sparse_jacobian_equals_the_eager_one_at_every_call(mode):
    rng = RNG
    jitted = cr.jit(cr.sparse_jacobian(residual, mode=mode))
    for _ in range(3):
        x = rng.normal(size=12)
        got, expected = jitted(x), cr.sparse_jacobian(residual, mode=mode)(x)
        assert type(got) is type(expected)
        assert (got.indices == expected.indices).all() and (got.indptr == expected.indptr).all()
        np.testing.assert_allclose(got.toarray(), cr.jacfwd(residual)(x), rtol=1e-12,
                                   atol=1e-12)
        assert np.array_equal(got.data, expected.data)


def test_a_jitted_sparse_hessian_equals_the_dense_one():
    rng = RNG
    jitted = cr.jit(cr.sparse_hessian(rosenbrock))
    for _ in range(3):
        x = rng.normal(size=10)
        np.testing.assert_allclose(jitted(x).toarray(), cr.hessian(rosenbrock)(x),
                                   rtol=1e-12, atol=1e-9)


def test_the_pattern_is_found_once_while_tracing(monkeypatch):
    rng = RNG
    found = []
    detect = pattern.jacobian_sparsity

    def counting(f, local=False):
        found.append(f)
        return detect(f, local)
    monkeypatch.setattr(evaluate, "jacobian_sparsity", counting)
    jitted = cr.jit(cr.sparse_jacobian(residual))
    for _ in range(4):
        jitted(rng.normal(size=8))
    assert len(found) == 1
    listing = str(cr.make_program(cr.sparse_jacobian(residual))(np.ones(8)))
    assert listing.count("-> returned") == 1  # the values alone leave the program


def test_a_known_pattern_is_used_as_it_is():
    rng = RNG
    x = rng.normal(size=9)
    known = cr.jacobian_sparsity(residual)(x)
    jitted = cr.jit(cr.sparse_jacobian(residual, sparsity=known))
    np.testing.assert_allclose(jitted(x).toarray(), cr.jacfwd(residual)(x), rtol=1e-12,
                               atol=1e-12)


def test_a_derivative_through_a_sparse_jacobian_is_refused_not_dropped():
    """The result is a SciPy array, which carries no derivative: a transform around it
    that differentiates a value f closes over raises, rather than giving 0."""
    x = np.array([1.0, 2.0, 3.0])
    outer = lambda p: cr.sparse_jacobian(lambda x: p * x ** 2)(x).sum()
    with pytest.raises(TypeError, match="differentiating"):
        cr.grad(outer)(2.0)
    with pytest.raises(TypeError, match="differentiating"):
        cr.jvp(outer, (2.0,), (1.0,))
