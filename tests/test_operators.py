"""cr.linear_operator and cr.hessian_operator inside transforms, against JAX (float64).

Each quantity is written twice: with chainrule's operators (matvec, rmatvec, matmat,
``@``, ``.T``) built or applied inside grad, jvp, jacrev, jacfwd and hessian, and with
the same products spelled ``jax.jvp`` / ``jax.vjp`` / ``jax.linearize`` inside JAX's
transforms. Outside transforms the operators stay SciPy's, on float64 arrays; handed to
a SciPy solver inside a transform, they are refused.
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule.transforms.tracer import Tracer
from seeds_and_tolerances import per_test_generator

sla = pytest.importorskip("scipy.sparse.linalg")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = per_test_generator(31)
W = RNG.standard_normal((4, 3))
X = RNG.standard_normal(3)
U, V, DX = RNG.standard_normal(4), RNG.standard_normal(3), RNG.standard_normal(3)
A = 0.7


def f_cr(x, a=A):      # R^3 -> R^4
    return cr.tanh(x @ W.T) * cr.sum(x ** 2) + a * cr.sin(x[0]) * x[1]


def f_jax(x, a=A):
    return jnp.tanh(x @ W.T) * jnp.sum(x ** 2) + a * jnp.sin(x[0]) * x[1]


def s_cr(x, a=A):      # R^3 -> R, for the Hessian
    return cr.sum(cr.exp(a * x) * cr.cos(x @ W.T @ W))


def s_jax(x, a=A):
    return jnp.sum(jnp.exp(a * x) * jnp.cos(x @ W.T @ W))


def jax_hvp(s, x, v):
    return jax.jvp(jax.grad(s), (x,), (v,))[1]


def close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=tol, atol=tol)


CASES = {
    # grad in x of u . J(x) v, and of (J(x)^T u) . dx
    "grad(u J v)": (
        lambda: cr.grad(lambda x: U @ cr.linear_operator(f_cr, x).matvec(V))(X),
        lambda: jax.grad(lambda x: U @ jax.jvp(f_jax, (x,), (V,))[1])(X)),
    "grad(J^T u . dx)": (
        lambda: cr.grad(lambda x: cr.linear_operator(f_cr, x).rmatvec(U) @ DX)(X),
        lambda: jax.grad(lambda x: jax.vjp(f_jax, x)[1](U)[0] @ DX)(X)),
    "grad(u (J @ v)) via @ and .T": (
        lambda: cr.grad(lambda x: cr.sum((cr.linear_operator(f_cr, x) @ V) * U)
                        + cr.sum(cr.linear_operator(f_cr, x).T @ U))(X),
        lambda: jax.grad(lambda x: jnp.sum(jax.jvp(f_jax, (x,), (V,))[1] * U)
                         + jnp.sum(jax.vjp(f_jax, x)[1](U)[0]))(X)),
    "grad(sum(J @ M)), matmat": (
        lambda: cr.grad(lambda x: cr.sum(cr.sin(cr.linear_operator(f_cr, x).matmat(
            np.stack([V, DX], axis=1)))))(X),
        lambda: jax.grad(lambda x: jnp.sum(jnp.sin(jnp.stack(
            [jax.linearize(f_jax, x)[1](V), jax.linearize(f_jax, x)[1](DX)], axis=1))))(X)),
    "jvp(x -> J(x) v)": (
        lambda: cr.jvp(lambda x: cr.linear_operator(f_cr, x).matvec(V), (X,), (DX,)),
        lambda: jax.jvp(lambda x: jax.jvp(f_jax, (x,), (V,))[1], (X,), (DX,))),
    "jvp(x -> J(x)^T u)": (
        lambda: cr.jvp(lambda x: cr.linear_operator(f_cr, x).rmatvec(U), (X,), (DX,)),
        lambda: jax.jvp(lambda x: jax.vjp(f_jax, x)[1](U)[0], (X,), (DX,))),
    "jacrev(x -> J(x) v)": (
        lambda: cr.jacrev(lambda x: cr.linear_operator(f_cr, x).matvec(V))(X),
        lambda: jax.jacrev(lambda x: jax.jvp(f_jax, (x,), (V,))[1])(X)),
    "jacfwd(x -> J(x)^T u)": (
        lambda: cr.jacfwd(lambda x: cr.linear_operator(f_cr, x).rmatvec(U))(X),
        lambda: jax.jacfwd(lambda x: jax.vjp(f_jax, x)[1](U)[0])(X)),
    "hessian(u J v)": (
        lambda: cr.hessian(lambda x: U @ cr.linear_operator(f_cr, x).matvec(V))(X),
        lambda: jax.hessian(lambda x: U @ jax.jvp(f_jax, (x,), (V,))[1])(X)),
    # f closes over the differentiated variable; the point is a constant
    "grad in a closed-over a": (
        lambda: cr.grad(lambda a: U @ cr.linear_operator(lambda x: f_cr(x, a), X).matvec(V)
                        + V @ cr.linear_operator(lambda x: f_cr(x, a), X).rmatvec(U))(A),
        lambda: jax.grad(lambda a: U @ jax.jvp(lambda x: f_jax(x, a), (X,), (V,))[1]
                         + V @ jax.vjp(lambda x: f_jax(x, a), X)[1](U)[0])(A)),
    # built outside, applied to a traced vector: linear in it
    "grad in the vector": (
        lambda: cr.grad(lambda v: cr.sum(cr.linear_operator(f_cr, X).matvec(v) ** 2))(V),
        lambda: jax.grad(lambda v: jnp.sum(jax.jvp(f_jax, (X,), (v,))[1] ** 2))(V)),
    "jvp in the cotangent": (
        lambda: cr.jvp(lambda u: cr.linear_operator(f_cr, X).rmatvec(u), (U,), (U[::-1],)),
        lambda: jax.jvp(lambda u: jax.vjp(f_jax, X)[1](u)[0], (U,), (U[::-1],))),
    "grad in point and vector at once": (
        lambda: cr.grad(lambda x, v: U @ cr.linear_operator(f_cr, x).matvec(v),
                        argnums=(0, 1))(X, V),
        lambda: jax.grad(lambda x, v: U @ jax.jvp(f_jax, (x,), (v,))[1],
                         argnums=(0, 1))(X, V)),
    # Hessian-vector products inside transforms
    "grad(w . H(x) v)": (
        lambda: cr.grad(lambda x: DX @ cr.hessian_operator(s_cr, x).matvec(V))(X),
        lambda: jax.grad(lambda x: DX @ jax_hvp(s_jax, x, V))(X)),
    "jvp(x -> H(x) v)": (
        lambda: cr.jvp(lambda x: cr.hessian_operator(s_cr, x) @ V, (X,), (DX,)),
        lambda: jax.jvp(lambda x: jax_hvp(s_jax, x, V), (X,), (DX,))),
    "hessian(v . H(x) v)": (
        lambda: cr.hessian(lambda x: V @ cr.hessian_operator(s_cr, x).rmatvec(V))(X),
        lambda: jax.hessian(lambda x: V @ jax_hvp(s_jax, x, V))(X)),
    "grad in a closed-over a, Hessian": (
        lambda: cr.grad(lambda a: DX @ cr.hessian_operator(lambda x: s_cr(x, a), X).matvec(V))(A),
        lambda: jax.grad(lambda a: DX @ jax_hvp(lambda x: s_jax(x, a), X, V))(A)),
    "grad in the vector, Hessian": (
        lambda: cr.grad(lambda v: cr.sum(cr.hessian_operator(s_cr, X).matvec(v) ** 2))(V),
        lambda: jax.grad(lambda v: jnp.sum(jax_hvp(s_jax, X, v) ** 2))(V)),
    "jacfwd of a matmat in x": (
        lambda: cr.jacfwd(lambda x: cr.hessian_operator(s_cr, x).matmat(np.eye(3)[:, :2]))(X),
        lambda: jax.jacfwd(lambda x: jnp.stack([jax_hvp(s_jax, x, e) for e in np.eye(3)[:2]],
                                               axis=1))(X)),
}


@pytest.mark.parametrize("name", CASES)
def test_operator_products_inside_transforms_match_jax(name):
    ours, theirs = (make() for make in CASES[name])
    ours_leaves, theirs_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        assert isinstance(a, (float, np.ndarray)), type(a)
        close(a, b)


def test_a_traced_operator_gives_traced_products_and_a_plain_one_float64_arrays():
    seen = {}

    def inside(x):
        op = cr.linear_operator(f_cr, x)
        seen["traced"], seen["product"] = op.traced, op.matvec(V)
        return cr.sum(seen["product"])

    cr.grad(inside)(X)
    assert seen["traced"] and isinstance(seen["product"], Tracer)  # not numbers
    op = cr.linear_operator(f_cr, X)
    assert isinstance(op, sla.LinearOperator) and not op.traced
    for out in (op.matvec(V), op.rmatvec(U), op @ V, op.T @ U, op.H @ U, op.matmat(np.eye(3))):
        assert type(out) is np.ndarray and out.dtype == np.float64
    assert op.matvec(V[:, None]).shape == (4, 1)  # SciPy's layouts, as before


def test_scipy_solvers_refuse_an_operator_whose_products_are_traced():
    def solve_inside(x):
        H = cr.hessian_operator(lambda y: cr.sum(x * y ** 2 + y ** 4), np.ones(3))
        return cr.sum(sla.cg(H, np.ones(3))[0])

    with pytest.raises(TypeError, match="hessian_operator: SciPy's solvers compute with "
                                        "plain numbers, but this operator's products are "
                                        "traced"):
        cr.grad(solve_inside)(np.ones(3))
    with pytest.raises(TypeError, match="linear_operator: SciPy's solvers"):
        cr.grad(lambda x: cr.sum(sla.lsqr(cr.linear_operator(f_cr, x), U)[0]))(X)


def test_a_traced_operator_whose_products_are_constant_still_solves():
    """f = a + sum(x^2): the Hessian does not depend on the traced a, so cg can use it."""
    H = []
    cr.grad(lambda a: (H.append(cr.hessian_operator(lambda x: a + cr.sum(x ** 2), X)), a)[1])(A)
    p, info = sla.cg(H[0], np.ones(3), rtol=1e-12, atol=0.0)
    assert info == 0
    close(p, np.full(3, 0.5))


def test_an_operator_closing_over_a_tensor_that_requires_grad_stays_in_its_graph():
    torch = pytest.importorskip("torch")
    w = cr.tensor(W, requires_grad=True)
    op = cr.linear_operator(lambda x: cr.tanh(x @ w.T), X)
    cr.sum(op.matvec(V) * U).backward()
    wt = torch.tensor(W, requires_grad=True)
    out = torch.func.jvp(lambda x: torch.tanh(x @ wt.T), (torch.tensor(X),), (torch.tensor(V),))[1]
    (out * torch.tensor(U)).sum().backward()
    close(w.grad, wt.grad.numpy())


def test_a_wrong_vector_shape_is_named():
    with pytest.raises(ValueError, match=r"linear_operator.matvec: an operand of shape "
                                         r"\(4,\) for an operator of shape \(4, 3\)"):
        cr.grad(lambda x: cr.sum(cr.linear_operator(f_cr, x).matvec(U)))(X)
