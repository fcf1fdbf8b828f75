"""The function transforms of ``chainrule.transforms.functional``: grad, value_and_grad, vjp, jvp,
jacrev, jacfwd, jacobian, hessian, hvp, linear_operator, hessian_operator, gradcheck.

Every derivative is compared with an independent reference: PyTorch in float64
(``torch.func`` or ``torch.autograd``), a closed form worked out by hand, or central
differences; never with chainrule itself. The groups:

1. kinds in, kinds out: floats, Values, arrays, Tensors; pytrees (dicts, lists, tuples);
2. grad and value_and_grad: argnums, has_aux, the non-scalar error;
3. vjp; 4. jvp (true forward mode);
5. Jacobians by reverse and forward mode, against torch.func; the seed's example;
6. hessian and hvp;
7. matrix-free operators for SciPy (lsqr, gmres, cg);
8. derivatives of any order (nested transforms, Value.backward(create_graph=True));
9. no perturbation confusion in nested transforms;
10. transforms never read or write ``.grad``;
11. users' own primitives (@cr.primitive, defvjp, defjvp);
12. gradcheck; 13. errors; 14. dtypes;
15. corner cases: forward over forward, gradcheck's default order, jvp's has_aux,
    var/std in forward mode, jacfwd on Values and on users' broadcasting rules,
    functions that loop over their input;
16. None in pytrees, an empty subtree, through every transform, against JAX.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse.linalg as sla
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule import Tensor, Value
from seeds_and_tolerances import per_test_generator



@pytest.fixture(autouse=True)
def torch_in_float64():
    """PyTorch's references in float64 while these tests run, restored afterwards (a
    global change would leak into other test modules)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def t64(x):
    """A float64 torch tensor holding the same numbers (the reference's input)."""
    return torch.tensor(np.asarray(x, dtype=np.float64))


def npy(x):
    """A chainrule or torch result as a float64 ndarray, for comparison."""
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, Tensor):
        return np.asarray(x.data, dtype=np.float64)
    if isinstance(x, Value):
        return np.asarray(x.data)
    return np.asarray(x, dtype=np.float64)


def close(ours, reference, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(npy(ours), npy(reference), rtol=rtol, atol=atol)


RNG = per_test_generator(20240611)
W = RNG.standard_normal((4, 3))          # a constant matrix for R^3 -> R^4 maps
V = RNG.standard_normal((3, 2))          # for a (2, 3) -> (4,) map


# ---------------------------------------------------------------------------------------
# 1. Kinds in, kinds out; pytrees
# ---------------------------------------------------------------------------------------

def test_float_in_float_out():
    """A Python float gives a Python float (not a Value, not a NumPy scalar)."""
    g = cr.grad(lambda x: x * x + 3 * x)(2.0)
    assert type(g) is float and g == 7.0
    g = cr.grad(lambda x: x ** 3)(2)  # an int is a number too
    assert type(g) is float and g == 12.0


def test_value_in_value_out():
    g = cr.grad(lambda x: x * x * x)(Value(2.0))
    assert isinstance(g, Value) and g.data == 12.0


def test_array_in_array_out():
    x = np.array([1.0, -2.0, 0.5])
    g = cr.grad(lambda x: (cr.sin(x) * x).sum())(x)
    assert type(g) is np.ndarray and g.shape == x.shape
    close(g, np.sin(x) + x * np.cos(x))


def test_tensor_in_tensor_out():
    x = cr.tensor([1.0, -2.0, 0.5])
    g = cr.grad(lambda x: (cr.exp(x) * x).sum())(x)
    assert isinstance(g, Tensor) and g.shape == (3,)
    close(g, np.exp(x.data) * (1 + x.data))


def test_integer_arrays_are_differentiated_as_floats():
    g = cr.grad(lambda x: (x * x).sum())(np.array([1, 2, 3]))
    assert g.dtype == np.float64
    close(g, [2.0, 4.0, 6.0])


def test_value_and_grad_value_has_the_input_kind():
    value, g = cr.value_and_grad(lambda x: x ** 3)(2.0)
    assert (type(value), type(g)) == (float, float) and (value, g) == (8.0, 12.0)
    value, g = cr.value_and_grad(lambda x: (x ** 2).sum())(cr.tensor([1.0, 2.0]))
    assert isinstance(value, Tensor) and isinstance(g, Tensor)
    close(value, 5.0)
    close(g, [2.0, 4.0])


def test_pytree_loss_of_params_dict():
    """``grad(loss)(params, x, y)`` with params a dict: the gradient is a dict of the
    same keys and shapes, equal to torch.func.grad on the same dict."""
    params = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
    x, y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))

    def loss(p, x, y):
        return ((cr.tanh(x @ p["w"] + p["b"]) - y) ** 2).mean()

    def loss_t(p, x, y):
        return ((torch.tanh(x @ p["w"] + p["b"]) - y) ** 2).mean()

    g = cr.grad(loss)(params, x, y)
    ref = torch.func.grad(loss_t)({k: t64(v) for k, v in params.items()}, t64(x), t64(y))
    assert set(g) == {"w", "b"}
    for k in params:
        assert type(g[k]) is np.ndarray and g[k].shape == params[k].shape
        close(g[k], ref[k])


def test_pytree_nested_containers_keep_their_types():
    g = cr.grad(lambda p: p["a"][0] * p["a"][1]["c"] ** 2)({"a": (2.0, {"c": 3.0})})
    assert g == {"a": (9.0, {"c": 12.0})}
    assert isinstance(g["a"], tuple)
    g = cr.grad(lambda xs: xs[0] * xs[1])([2.0, 3.0])
    assert g == [3.0, 2.0] and isinstance(g, list)


def test_pytree_mixed_leaves_floats_and_arrays():
    """A float next to an array rides on the tensor engine but still comes back a float."""
    ga, gx = cr.grad(lambda a, x: (a * x ** 2).sum(), argnums=(0, 1))(2.0, np.array([1.0, 3.0]))
    assert type(ga) is float and ga == 10.0
    close(gx, [4.0, 12.0])


def test_keyword_arguments_are_passed_through_not_differentiated():
    assert cr.grad(lambda x, k=1.0: x * k)(2.0, k=5.0) == 5.0


def test_tree_flatten_round_trip():
    tree = {"a": [1.0, (2.0, np.ones(2))], "b": {"c": 3.0}}
    leaves, treedef = cr.tree_flatten(tree)
    assert len(leaves) == 4
    rebuilt = cr.tree_unflatten(treedef, [10 * np.asarray(leaf) for leaf in leaves])
    assert isinstance(rebuilt["a"][1], tuple)
    close(rebuilt["a"][1][1], [10.0, 10.0])
    assert float(rebuilt["b"]["c"]) == 30.0


# ---------------------------------------------------------------------------------------
# 2. grad and value_and_grad
# ---------------------------------------------------------------------------------------

SCALAR_CASES = {
    "polynomial": (lambda x: (x ** 3 - 2 * x).sum(), lambda x: (x ** 3 - 2 * x).sum()),
    "exp_log": (lambda x: cr.log(1 + cr.exp(x)).sum() * cr.sin(x).mean(),
                lambda x: torch.log(1 + torch.exp(x)).sum() * torch.sin(x).mean()),
    "logsumexp": (lambda x: cr.logsumexp(x * 3.0), lambda x: torch.logsumexp(x * 3.0, 0)),
    "norm_softmax": (lambda x: cr.norm(cr.softmax(x)) + cr.sigmoid(x).prod(),
                     lambda x: torch.linalg.norm(torch.softmax(x, -1))
                     + torch.sigmoid(x).prod()),
    "quadratic_form": (lambda x: cr.tanh(x) @ (W.T @ W) @ cr.tanh(x),
                       lambda x: torch.tanh(x) @ t64(W.T @ W) @ torch.tanh(x)),
}


@pytest.mark.parametrize("name", SCALAR_CASES)
def test_grad_matches_torch(name):
    f, f_t = SCALAR_CASES[name]
    x = RNG.standard_normal(3)
    close(cr.grad(f)(x), torch.func.grad(f_t)(t64(x)))


@pytest.mark.parametrize("name", SCALAR_CASES)
def test_value_and_grad_matches_torch(name):
    f, f_t = SCALAR_CASES[name]
    x = RNG.standard_normal(3)
    value, g = cr.value_and_grad(f)(x)
    ref_g, ref_value = torch.func.grad_and_value(f_t)(t64(x))
    close(value, ref_value)
    close(g, ref_g)


def test_grad_argnums_int_and_tuple():
    f = lambda x, y, z: x * y ** 2 + cr.sin(z) * x  # noqa: E731
    assert cr.grad(f)(2.0, 3.0, 0.5) == pytest.approx(9.0 + math.sin(0.5))
    assert cr.grad(f, argnums=1)(2.0, 3.0, 0.5) == pytest.approx(12.0)
    assert cr.grad(f, argnums=-1)(2.0, 3.0, 0.5) == pytest.approx(2 * math.cos(0.5))
    grads = cr.grad(f, argnums=(2, 0))(2.0, 3.0, 0.5)
    assert isinstance(grads, tuple) and len(grads) == 2
    assert grads == pytest.approx((2 * math.cos(0.5), 9.0 + math.sin(0.5)))
    single = cr.grad(f, argnums=(1,))(2.0, 3.0, 0.5)
    assert isinstance(single, tuple) and single == pytest.approx((12.0,))


def test_grad_argnums_on_arrays_matches_torch():
    A, x = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    gA, gx = cr.grad(lambda A, x: cr.tanh(A @ x).sum(), argnums=(0, 1))(A, x)
    rA, rx = torch.func.grad(lambda A, x: torch.tanh(A @ x).sum(),
                             argnums=(0, 1))(t64(A), t64(x))
    close(gA, rA)
    close(gx, rx)


def test_grad_of_an_input_the_output_ignores_is_zero():
    gx, gy = cr.grad(lambda x, y: (y ** 2).sum(), argnums=(0, 1))(np.ones(2), np.ones(3))
    close(gx, np.zeros(2))
    close(gy, 2 * np.ones(3))
    assert cr.grad(lambda x: 3.0)(2.0) == 0.0


def test_grad_has_aux():
    g, aux = cr.grad(lambda x: (x * x, {"note": x + 1}), has_aux=True)(3.0)
    assert g == 6.0 and aux == {"note": 4.0} and type(aux["note"]) is float
    g, aux = cr.grad(lambda x: ((x ** 2).sum(), "label"), has_aux=True)(np.array([1.0, 2.0]))
    close(g, [2.0, 4.0])
    assert aux == "label"


def test_value_and_grad_has_aux():
    (value, aux), g = cr.value_and_grad(lambda x: (x ** 3, x + 1), has_aux=True)(2.0)
    assert (value, aux, g) == (8.0, 3.0, 12.0)


def test_grad_of_non_scalar_output_raises_with_advice():
    with pytest.raises((TypeError, ValueError)) as info:
        cr.grad(lambda x: x * x)(np.array([1.0, 2.0]))
    message = str(info.value)
    assert "scalar" in message and "jacobian" in message and ".sum()" in message


# ---------------------------------------------------------------------------------------
# 3. vjp
# ---------------------------------------------------------------------------------------

def test_vjp_floats():
    out, f_vjp = cr.vjp(lambda x, y: x * cr.sin(y), 2.0, 0.5)
    assert out == pytest.approx(2 * math.sin(0.5))
    grads = f_vjp(3.0)
    assert isinstance(grads, tuple) and len(grads) == 2
    assert grads == pytest.approx((3 * math.sin(0.5), 3 * 2 * math.cos(0.5)))


def test_vjp_one_primal_still_gives_a_tuple():
    _, f_vjp = cr.vjp(lambda x: x * 2, np.array([1.0, 2.0]))
    grads = f_vjp(np.array([1.0, 10.0]))
    assert isinstance(grads, tuple) and len(grads) == 1
    close(grads[0], [2.0, 20.0])


def test_vjp_matches_torch_and_can_be_called_twice():
    A, x = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    out, f_vjp = cr.vjp(lambda A, x: cr.tanh(A @ x), A, x)
    ref_out, ref_vjp = torch.func.vjp(lambda A, x: torch.tanh(A @ x), t64(A), t64(x))
    close(out, ref_out)
    for _ in range(2):  # the pullback is reusable, with different cotangents
        u = RNG.standard_normal(3)
        for ours, ref in zip(f_vjp(u), ref_vjp(t64(u))):
            close(ours, ref)


def test_vjp_pytree_output_and_cotangent():
    out, f_vjp = cr.vjp(lambda p: {"a": p["x"] * 2, "b": (p["x"] ** 2).sum()},
                        {"x": np.array([1.0, 2.0])})
    close(out["a"], [2.0, 4.0])
    (g,) = f_vjp({"a": np.array([1.0, 1.0]), "b": 1.0})
    close(g["x"], [2.0 + 2.0, 2.0 + 4.0])


def test_vjp_tensor_in_tensor_out():
    (g,) = cr.vjp(lambda x: x * 3, cr.tensor([1.0, 2.0]))[1](np.ones(2))
    assert isinstance(g, Tensor)
    close(g, [3.0, 3.0])


def test_vjp_has_aux():
    out, f_vjp, aux = cr.vjp(lambda x: (x * x, "aux"), 3.0, has_aux=True)
    assert out == 9.0 and aux == "aux" and f_vjp(1.0) == (6.0,)


def test_vjp_wrong_cotangent_shape_raises():
    _, f_vjp = cr.vjp(lambda x: x * 2, np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        f_vjp(np.ones(2))
    _, f_vjp = cr.vjp(lambda x: (x, x), 1.0)
    with pytest.raises(ValueError):
        f_vjp(1.0)  # one leaf for a two-leaf output


# ---------------------------------------------------------------------------------------
# 4. jvp: forward mode
# ---------------------------------------------------------------------------------------

def test_jvp_floats():
    out, tangent = cr.jvp(lambda x: x ** 3, (2.0,), (1.0,))
    assert (type(out), type(tangent)) == (float, float) and (out, tangent) == (8.0, 12.0)
    out, tangent = cr.jvp(lambda x, y: x * y, (2.0, 3.0), (1.0, 10.0))
    assert (out, tangent) == (6.0, 3.0 + 20.0)


@pytest.mark.parametrize("name", SCALAR_CASES)
def test_jvp_matches_torch(name):
    f, f_t = SCALAR_CASES[name]
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    out, tangent = cr.jvp(f, (x,), (v,))
    ref_out, ref_tangent = torch.func.jvp(f_t, (t64(x),), (t64(v),))
    close(out, ref_out)
    close(tangent, ref_tangent)


def test_jvp_vector_output_matches_torch():
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    out, tangent = cr.jvp(lambda x: cr.softmax(cr.tanh(x) @ W.T), (x,), (v,))
    ref = torch.func.jvp(lambda x: torch.softmax(torch.tanh(x) @ t64(W.T), -1),
                         (t64(x),), (t64(v),))
    close(out, ref[0])
    close(tangent, ref[1])


def test_jvp_kinds():
    out, tangent = cr.jvp(lambda x: x * x, (Value(3.0),), (1.0,))
    assert isinstance(out, Value) and isinstance(tangent, Value)
    assert (out.data, tangent.data) == (9.0, 6.0)
    out, tangent = cr.jvp(lambda x: x * x, (cr.tensor([1.0, 2.0]),), (np.ones(2),))
    assert isinstance(out, Tensor) and isinstance(tangent, Tensor)
    close(tangent, [2.0, 4.0])


def test_jvp_pytree_primals():
    out, tangent = cr.jvp(lambda p: p["a"] * p["b"] ** 2, ({"a": 2.0, "b": 3.0},),
                          ({"a": 1.0, "b": 1.0},))
    assert (out, tangent) == (18.0, 9.0 + 12.0)


def test_jvp_of_a_constant_function_is_zero():
    assert cr.jvp(lambda x: 5.0, (2.0,), (1.0,)) == (5.0, 0.0)


def test_jvp_is_one_forward_pass_and_uses_no_vjp_rule():
    """True forward mode: f runs once, and no reverse-mode rule is consulted."""
    calls = []

    @cr.primitive
    def square(x):
        return x * x

    square.defjvp(lambda t, ans, x: 2 * x * t)
    square.defvjp(lambda g, ans, x: pytest.fail("jvp used a reverse-mode rule"))

    def f(x):
        calls.append(1)
        return cr.sin(square(x))

    x, v = RNG.standard_normal(6), RNG.standard_normal(6)
    _, tangent = cr.jvp(f, (x,), (v,))
    assert len(calls) == 1
    close(tangent, np.cos(x * x) * 2 * x * v)


def test_jvp_has_aux():
    out, tangent, aux = cr.jvp(lambda x: (x * 2, "hi"), (1.0,), (1.0,), has_aux=True)
    assert (out, tangent, aux) == (2.0, 2.0, "hi")


def test_jvp_argument_errors():
    with pytest.raises(TypeError, match="tuple"):
        cr.jvp(lambda x: x, 1.0, 1.0)
    with pytest.raises(ValueError):
        cr.jvp(lambda x, y: x, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="shape"):
        cr.jvp(lambda x: x, (np.ones(2),), (np.ones(3),))


def test_jvp_with_an_ndarray_on_the_left():
    """ndarray @ tracer (and * + -) must defer to the tracer, as for a Tensor; otherwise
    NumPy builds an object array of per-element tracers and the tangent is lost."""
    A = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0]])
    out, tangent = cr.jvp(lambda x: A @ x, (np.zeros(3),), (np.ones(3),))
    assert out.dtype == np.float64
    close(tangent, [3.0, 5.0])
    c = np.array([1.0, 2.0, 3.0])
    out, tangent = cr.jvp(lambda x: c * x + c - x, (np.ones(3),), (np.ones(3),))
    assert out.dtype == np.float64
    close(out, 2 * c - 1)
    close(tangent, c - 1)


# ---------------------------------------------------------------------------------------
# 5. Jacobians: jacrev, jacfwd, jacobian, against torch.func
# ---------------------------------------------------------------------------------------

# (chainrule f, torch f, input shape). Shapes: out.shape + in.shape.
JACOBIAN_CASES = {
    "elementwise": (lambda x: cr.sin(x) * cr.exp(x) + x ** 2,
                    lambda x: torch.sin(x) * torch.exp(x) + x ** 2, (4,)),
    "matmul": (lambda x: cr.tanh(x) @ W.T, lambda x: torch.tanh(x) @ t64(W.T), (3,)),
    # matrix @ vector, where a batch of cotangents or tangents is one matrix product
    "matvec": (lambda x: cr.tanh(cr.tensor(W) @ x) + x[0] * (W @ x),
               lambda x: torch.tanh(t64(W) @ x) + x[0] * (t64(W) @ x), (3,)),
    "reductions": (lambda x: cr.stack([x.sum(), (x ** 2).mean(), cr.logsumexp(x),
                                       cr.norm(x), x.max()]),
                   lambda x: torch.stack([x.sum(), (x ** 2).mean(), torch.logsumexp(x, 0),
                                          torch.linalg.norm(x), x.max()]), (5,)),
    "indexing": (lambda x: x[[0, 2, 2]] * x[1] + x[1:3].sum(),
                 lambda x: x[[0, 2, 2]] * x[1] + x[1:3].sum(), (4,)),
    "softmax": (lambda x: cr.softmax(x), lambda x: torch.softmax(x, -1), (5,)),
    "log_softmax_2d": (lambda x: cr.log_softmax(x, axis=1),
                       lambda x: torch.log_softmax(x, 1), (2, 3)),
    "R3_to_R2": (lambda x: cr.stack([x[0] * x[1] * x[2],
                                     cr.sqrt(1 + x[0] ** 2) / (2 + cr.cos(x[2]))]),
                 lambda x: torch.stack([x[0] * x[1] * x[2],
                                        torch.sqrt(1 + x[0] ** 2) / (2 + torch.cos(x[2]))]),
                 (3,)),
    "matrix_in": (lambda X: cr.tanh(X @ V).reshape(4),
                  lambda X: torch.tanh(X @ t64(V)).reshape(4), (2, 3)),
    "scalar_out": (lambda x: (x ** 3).sum(), lambda x: (x ** 3).sum(), (3,)),
}


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "jacobian"])
@pytest.mark.parametrize("name", JACOBIAN_CASES)
def test_jacobian_matches_torch(transform, name):
    f, f_t, shape = JACOBIAN_CASES[name]
    x = RNG.standard_normal(shape)
    J = getattr(cr, transform)(f)(x)
    ref = (torch.func.jacrev if transform != "jacfwd" else torch.func.jacfwd)(f_t)(t64(x))
    assert type(J) is np.ndarray
    assert J.shape == tuple(ref.shape)
    close(J, ref)


def test_jacobian_shape_matrix_in_vector_out():
    f, _, _ = JACOBIAN_CASES["matrix_in"]
    X = RNG.standard_normal((2, 3))
    assert cr.jacrev(f)(X).shape == (4, 2, 3)
    assert cr.jacfwd(f)(X).shape == (4, 2, 3)
    assert cr.jacrev(lambda X: X @ np.ones((3, 4)))(X).shape == (2, 4, 2, 3)


def test_jacobian_is_jacrev():
    assert cr.jacobian is cr.jacrev


def seed_jacobian_example(x):
    """The seed's example: f(x) = [x1 + 4 x2, 10 x2^2 + sin x3]."""
    return cr.stack([x[0] + 4 * x[1], 10 * x[1] ** 2 + cr.sin(x[2])])


def seed_expected(x):
    return np.array([[1.0, 4.0, 0.0], [0.0, 20 * x[1], math.cos(x[2])]])


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_seed_jacobian_example(transform):
    x = np.array([0.7, -1.3, 2.1])
    close(transform(seed_jacobian_example)(x), seed_expected(x))


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_seed_jacobian_example_with_cr_tensor_of_a_list(transform):
    """cr.tensor of a list of traced entries is their differentiable stack, in both modes."""
    x = np.array([0.7, -1.3, 2.1])
    f = lambda x: cr.tensor([x[0] + 4 * x[1], 10 * x[1] ** 2 + cr.sin(x[2])])  # noqa: E731
    close(transform(f)(x), seed_expected(x))


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_seed_jacobian_example_on_the_scalar_engine(transform):
    """The same function on three floats (argnums) and on a list of floats (a pytree):
    the Jacobian comes back as nested containers of floats."""
    x = [0.7, -1.3, 2.1]
    f = lambda a, b, c: [a + 4 * b, 10 * b ** 2 + cr.sin(c)]  # noqa: E731
    J = transform(f, argnums=(0, 1, 2))(*x)
    np.testing.assert_allclose(np.array(J, dtype=float), seed_expected(x), atol=1e-15)
    J = transform(lambda x: f(*x))(x)
    assert isinstance(J, list) and isinstance(J[0], list)
    np.testing.assert_allclose(np.array(J, dtype=float), seed_expected(x), atol=1e-15)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_multiple_argnums_matches_torch(transform):
    A, x = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    JA, Jx = getattr(cr, transform)(lambda A, x: cr.sin(x @ A.T), argnums=(0, 1))(A, x)
    rA, rx = getattr(torch.func, transform)(lambda A, x: torch.sin(x @ A.T),
                                            argnums=(0, 1))(t64(A), t64(x))
    assert JA.shape == (2, 2, 3) and Jx.shape == (2, 3)
    close(JA, rA)
    close(Jx, rx)


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_jacobian_pytree_output(transform):
    J = transform(lambda x: {"a": x * 2, "b": (x ** 2).sum()})(np.array([1.0, 2.0]))
    close(J["a"], 2 * np.eye(2))
    close(J["b"], [2.0, 4.0])


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_jacobian_kinds(transform):
    J = transform(lambda x: x ** 2)(cr.tensor([1.0, 2.0]))
    assert isinstance(J, Tensor)
    close(J, np.diag([2.0, 4.0]))
    J = transform(lambda x: x ** 2)(3.0)
    assert type(J) is float and J == 6.0


def test_jacfwd_with_an_ndarray_on_the_left():
    close(cr.jacfwd(lambda x: W @ x)(np.ones(3)), W)
    close(cr.jacfwd(lambda X: V.T @ X.T)(np.ones((2, 3))),
          torch.func.jacrev(lambda X: t64(V.T) @ X.T)(t64(np.ones((2, 3)))))


def test_jacfwd_is_one_forward_pass_per_input():
    """jacfwd carries all the columns of the identity as one batch of tangents: f (and
    each forward rule) runs once per input, not once per coordinate."""
    calls, rule_calls = [], []

    @cr.primitive
    def cube(x):
        return x ** 3

    cube.defjvp(lambda t, ans, x: (rule_calls.append(1), t * 3 * x ** 2)[1])

    def f(x, y):
        calls.append(1)
        return cube(x) * y.sum()

    x, y = RNG.standard_normal(5), RNG.standard_normal(4)
    # A user's rule is called once per row of the batch, unless it says it takes batches
    # (an elementwise rule like this one does).
    Jx, Jy = cr.jacfwd(f, argnums=(0, 1))(x, y)
    close(Jx, np.diag(3 * x ** 2 * y.sum()))
    assert len(calls) == 2 and len(rule_calls) == 5
    calls.clear(), rule_calls.clear()
    cube.batched = True
    Jx, Jy = cr.jacfwd(f, argnums=(0, 1))(x, y)
    close(Jx, np.diag(3 * x ** 2 * y.sum()))
    close(Jy, np.outer(x ** 3, np.ones(4)))
    assert len(calls) == 2 and len(rule_calls) == 1  # y's pass does not reach cube's rule


# Operations whose rules must handle a batch of tangents (jacfwd) or of cotangents
# (jacrev) in front of the operand's own axes: axes, broadcasting, indexing, joins.
X23 = RNG.standard_normal((2, 3))
M34 = RNG.standard_normal((3, 4))
Y3 = RNG.standard_normal(3)
AXIS_CASES = {
    "sum_axis0": (lambda x: x.sum(axis=0), lambda x: x.sum(0)),
    "sum_axis1_keepdims": (lambda x: x.sum(axis=1, keepdims=True),
                           lambda x: x.sum(1, keepdim=True)),
    "mean_axis0": (lambda x: x.mean(axis=0), lambda x: x.mean(0)),
    "max_axis0": (lambda x: cr.max(x, axis=0), lambda x: x.max(0).values),
    "min_axis1": (lambda x: cr.min(x, axis=1), lambda x: x.min(1).values),
    "prod_axis0": (lambda x: cr.prod(x, axis=0), lambda x: x.prod(0)),
    "norm_axis1": (lambda x: cr.norm(x, axis=1), lambda x: torch.linalg.norm(x, dim=1)),
    "logsumexp_axis0": (lambda x: cr.logsumexp(x, axis=0), lambda x: torch.logsumexp(x, 0)),
    "softmax_axis0": (lambda x: cr.softmax(x, axis=0), lambda x: torch.softmax(x, 0)),
    "T": (lambda x: x.T, lambda x: x.T),
    "reshape": (lambda x: x.reshape(3, 2), lambda x: x.reshape(3, 2)),
    "flatten": (lambda x: cr.flatten(x), lambda x: x.flatten()),
    "swapaxes": (lambda x: cr.swapaxes(x, 0, 1), lambda x: x.swapaxes(0, 1)),
    "permute": (lambda x: cr.permute(x.reshape(1, 2, 3), (2, 0, 1)),
                lambda x: x.reshape(1, 2, 3).permute(2, 0, 1)),
    "expand_dims": (lambda x: cr.expand_dims(x, 0) * 2, lambda x: x.unsqueeze(0) * 2),
    "unsqueeze_outer_sum": (lambda x: cr.unsqueeze(x, 1) + cr.unsqueeze(x, 0),
                            lambda x: x.unsqueeze(1) + x.unsqueeze(0)),
    "squeeze": (lambda x: cr.squeeze(x[:1], 0), lambda x: x[:1].squeeze(0)),
    "broadcast_to": (lambda x: cr.broadcast_to(x[0], (4, 3)), lambda x: x[0].expand(4, 3)),
    "concatenate_axis0": (lambda x: cr.concatenate([x, x * 2], axis=0),
                          lambda x: torch.cat([x, x * 2], 0)),
    "concatenate_axis1": (lambda x: cr.concatenate([x, x * 2], axis=1),
                          lambda x: torch.cat([x, x * 2], 1)),
    "stack_axis1": (lambda x: cr.stack([x[0], x[1]], axis=1),
                    lambda x: torch.stack([x[0], x[1]], 1)),
    "split": (lambda x: cr.split(x, 3, axis=1)[1], lambda x: torch.split(x, 1, 1)[1]),
    "row": (lambda x: x[1], lambda x: x[1]),
    "column": (lambda x: x[:, 1], lambda x: x[:, 1]),
    "fancy_index": (lambda x: x[[1, 0, 1]], lambda x: x[[1, 0, 1]]),
    "matmul_right": (lambda x: x @ M34, lambda x: x @ t64(M34)),
    "matmul_left": (lambda x: M34.T @ x.T, lambda x: t64(M34.T) @ x.T),
    "matvec": (lambda x: x @ Y3, lambda x: x @ t64(Y3)),
    "x_xT": (lambda x: x @ x.T, lambda x: x @ x.T),
    "dot": (lambda x: cr.dot(x[0], x[1]), lambda x: torch.dot(x[0], x[1])),
    "outer": (lambda x: cr.outer(x[0], x[1]), lambda x: torch.outer(x[0], x[1])),
    "broadcast_row": (lambda x: x + x[0], lambda x: x + x[0]),
    "broadcast_column": (lambda x: x * x[:, :1], lambda x: x * x[:, :1]),
    "where": (lambda x: cr.where(x > 0, x ** 2, -x), lambda x: torch.where(x > 0, x ** 2, -x)),
    "clip": (lambda x: cr.clip(x, -0.5, 0.5), lambda x: x.clamp(-0.5, 0.5)),
    "maximum": (lambda x: cr.maximum(x, x[::-1] * 0.5),
                lambda x: torch.maximum(x, x.flip(0) * 0.5)),
    "power_of_tensors": (lambda x: cr.exp(x) ** x[0], lambda x: torch.exp(x) ** x[0]),
    "divide": (lambda x: x[0] / (2 + x[1] ** 2), lambda x: x[0] / (2 + x[1] ** 2)),
    "gelu_softplus_erf": (lambda x: cr.gelu(x) + cr.softplus(x) * cr.erf(x),
                          lambda x: torch.nn.functional.gelu(x)
                          + torch.nn.functional.softplus(x) * torch.erf(x)),
}


@pytest.mark.parametrize("name", AXIS_CASES)
def test_jacobians_and_jvp_through_axis_ops_match_torch(name):
    f, f_t = AXIS_CASES[name]
    ref = torch.func.jacrev(f_t)(t64(X23))
    for transform in (cr.jacrev, cr.jacfwd):
        J = transform(f)(X23)
        assert J.shape == tuple(ref.shape), transform.__name__
        close(J, ref, rtol=1e-9, atol=1e-12)
    v = RNG.standard_normal(X23.shape)
    _, tangent = cr.jvp(f, (X23,), (v,))
    close(tangent, torch.func.jvp(f_t, (t64(X23),), (t64(v),))[1], rtol=1e-9, atol=1e-12)


def test_jacrev_is_one_batched_backward_pass():
    """jacrev seeds all rows of the identity at once: each rule runs once, not once per
    output (its docstring's promise)."""
    calls = []

    @cr.primitive
    def cube(x):
        return x ** 3

    cube.defvjp(lambda g, ans, x: (calls.append(1), g * 3 * x ** 2)[1])
    x = RNG.standard_normal(7)
    J = cr.jacrev(cube)(x)  # a user's rule: one row at a time, unless it takes batches
    close(J, np.diag(3 * x ** 2))
    assert len(calls) == 7
    calls.clear()
    cube.batched = True
    J = cr.jacrev(cube)(x)
    close(J, np.diag(3 * x ** 2))
    assert len(calls) == 1


# ---------------------------------------------------------------------------------------
# 6. hessian and hvp
# ---------------------------------------------------------------------------------------

HESSIAN_CASES = {
    "rosenbrock": (lambda x: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum(),
                   lambda x: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum(),
                   (4,)),
    "logsumexp": (lambda x: cr.logsumexp(x @ W.T),
                  lambda x: torch.logsumexp(x @ t64(W.T), 0), (3,)),
    "cross_entropy": (lambda x: -cr.log_softmax(cr.tanh(x) @ W.T)[2],
                      lambda x: -torch.log_softmax(torch.tanh(x) @ t64(W.T), -1)[2], (3,)),
    "matvec": (lambda x: cr.log(1 + x ** 2).sum() + (cr.tanh(cr.tensor(W) @ x) ** 2).sum(),
               lambda x: torch.log(1 + x ** 2).sum() + (torch.tanh(t64(W) @ x) ** 2).sum(),
               (3,)),
    "matrix_input": (lambda X: (cr.sin(X) * X.T.sum(axis=1)).sum() ** 2,
                     lambda X: (torch.sin(X) * X.T.sum(1)).sum() ** 2, (3, 3)),
}


@pytest.mark.parametrize("name", HESSIAN_CASES)
def test_hessian_matches_torch_and_is_symmetric(name):
    f, f_t, shape = HESSIAN_CASES[name]
    x = RNG.standard_normal(shape)
    H = cr.hessian(f)(x)
    ref = torch.func.hessian(f_t)(t64(x))
    assert H.shape == shape + shape
    close(H, ref, rtol=1e-9, atol=1e-10)
    n = x.size
    flat = H.reshape(n, n)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-12, atol=1e-12)


def test_hessian_floats_values_tensors():
    assert cr.hessian(lambda x: x ** 4)(2.0) == 48.0
    h = cr.hessian(lambda x: x ** 3)(Value(2.0))
    assert isinstance(h, Value) and h.data == 12.0
    H = cr.hessian(lambda x: (x ** 3).sum())(cr.tensor([1.0, 2.0]))
    assert isinstance(H, Tensor)
    close(H, np.diag([6.0, 12.0]))


def test_hessian_with_argnums_is_blocks():
    H = cr.hessian(lambda x, y: x * y ** 2, argnums=(0, 1))(2.0, 3.0)
    assert H == ((0.0, 6.0), (6.0, 4.0))


@pytest.mark.parametrize("name", HESSIAN_CASES)
def test_hvp_matches_hessian_times_v(name):
    f, f_t, shape = HESSIAN_CASES[name]
    x, v = RNG.standard_normal(shape), RNG.standard_normal(shape)
    n = x.size
    H = torch.func.hessian(f_t)(t64(x)).reshape(n, n).numpy()
    out = cr.hvp(f, x, v)
    assert out.shape == shape
    close(out.ravel(), H @ v.ravel(), rtol=1e-9, atol=1e-10)


def test_hvp_floats_and_pytrees():
    assert cr.hvp(lambda x: x ** 4, 2.0, 1.5) == 48.0 * 1.5
    # f(a, b) = b * sum(a^2): H = [[2b I, 2a], [2a^T, 0]]
    a, b = np.array([1.0, 2.0]), 3.0
    out = cr.hvp(lambda p: (p["a"] ** 2 * p["b"]).sum(), {"a": a, "b": b},
                 {"a": np.array([1.0, 0.0]), "b": 1.0})
    close(out["a"], 2 * b * np.array([1.0, 0.0]) + 2 * a * 1.0)
    assert out["b"] == pytest.approx(2 * a @ np.array([1.0, 0.0]))


# ---------------------------------------------------------------------------------------
# 7. Matrix-free operators for SciPy
# ---------------------------------------------------------------------------------------

def test_linear_operator_matvec_rmatvec_match_the_jacobian():
    f = lambda x: cr.tanh(x @ W.T) + x.sum() ** 2  # noqa: E731   R^3 -> R^4
    f_t = lambda x: torch.tanh(x @ t64(W.T)) + x.sum() ** 2  # noqa: E731
    x = RNG.standard_normal(3)
    op = cr.linear_operator(f, x)
    J = torch.func.jacrev(f_t)(t64(x)).numpy()
    assert op.shape == (4, 3)
    v, u = RNG.standard_normal(3), RNG.standard_normal(4)
    close(op.matvec(v), J @ v)
    close(op.rmatvec(u), J.T @ u)
    close(op @ np.eye(3), J)  # column by column: the whole matrix


def test_linear_operator_of_a_matrix_input():
    X = RNG.standard_normal((2, 3))
    op = cr.linear_operator(lambda X: X.sum(axis=0) * X[0], X)
    assert op.shape == (3, 6)
    J = torch.func.jacrev(lambda X: X.sum(0) * X[0])(t64(X)).reshape(3, 6).numpy()
    v = RNG.standard_normal(6)
    close(op.matvec(v), J @ v)
    close(op.rmatvec(np.ones(3)), J.T @ np.ones(3))


def test_linear_operator_with_an_ndarray_on_the_left():
    A = RNG.standard_normal((4, 3))
    op = cr.linear_operator(lambda x: A @ x, np.zeros(3))
    v = np.array([1.0, 2.0, 3.0])
    close(op.matvec(v), A @ v)
    close(op.rmatvec(np.ones(4)), A.T @ np.ones(4))


def test_linear_operator_in_lsqr_least_squares():
    """min |A x - b| for a tall A, with only products by A and A^T."""
    A, b = RNG.standard_normal((6, 3)), RNG.standard_normal(6)
    op = cr.linear_operator(lambda x: x @ A.T, np.zeros(3))
    x = sla.lsqr(op, b, atol=1e-14, btol=1e-14, iter_lim=200)[0]
    np.testing.assert_allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-8, atol=1e-10)


def test_linear_operator_in_gmres_newton_step():
    """One Newton step for F(x) = M x + 0.1 x^3 - b: solve J d = -F(x0) with gmres."""
    M = 4 * np.eye(4) + 0.5 * RNG.standard_normal((4, 4))
    b = RNG.standard_normal(4)
    F = lambda x: x @ M.T + 0.1 * x ** 3 - b  # noqa: E731
    x0 = RNG.standard_normal(4)
    J = M + np.diag(0.3 * x0 ** 2)  # by hand
    d, info = sla.gmres(cr.linear_operator(F, x0), -(M @ x0 + 0.1 * x0 ** 3 - b), rtol=1e-12,
                        atol=0.0)
    assert info == 0
    np.testing.assert_allclose(d, np.linalg.solve(J, -(M @ x0 + 0.1 * x0 ** 3 - b)),
                               rtol=1e-8, atol=1e-10)


def test_hessian_operator_in_cg_solves_the_newton_system():
    """f = x^T Q x / 2 + c^T x, convex: cg on H p = -g gives the exact Newton step, and
    x0 + p is the minimiser -Q^{-1} c."""
    A = RNG.standard_normal((4, 4))
    Q = A @ A.T + 4 * np.eye(4)
    c = RNG.standard_normal(4)
    f = lambda x: 0.5 * ((x @ Q) * x).sum() + (c * x).sum()  # noqa: E731
    x0 = RNG.standard_normal(4)
    g = Q @ x0 + c  # the gradient, by hand
    H = cr.hessian_operator(f, x0)
    assert H.shape == (4, 4)
    close(H.matvec(np.eye(4)[1]), Q[:, 1], rtol=1e-12, atol=1e-12)
    p, info = sla.cg(H, -g, rtol=1e-12, atol=0.0)
    assert info == 0
    np.testing.assert_allclose(p, np.linalg.solve(Q, -g), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(x0 + p, -np.linalg.solve(Q, c), rtol=1e-8, atol=1e-10)


def test_hessian_operator_matches_torch_and_is_symmetric():
    f, f_t, _ = HESSIAN_CASES["rosenbrock"]
    x, v, u = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)
    H = torch.func.hessian(f_t)(t64(x)).numpy()
    op = cr.hessian_operator(f, x)
    close(op.matvec(v), H @ v, rtol=1e-9)
    close(op.rmatvec(v), H @ v, rtol=1e-9)
    assert u @ op.matvec(v) == pytest.approx(v @ op.matvec(u), rel=1e-10)


# ---------------------------------------------------------------------------------------
# 8. Derivatives of any order
# ---------------------------------------------------------------------------------------

def test_fourth_derivative_of_tanh():
    """d^4/dx^4 tanh = 8 t (1 - t^2)(2 - 3 t^2), t = tanh x; and torch.autograd repeated."""
    t = math.tanh(0.5)
    closed_form = 8 * t * (1 - t * t) * (2 - 3 * t * t)
    ours = cr.grad(cr.grad(cr.grad(cr.grad(cr.tanh))))(0.5)
    assert type(ours) is float
    assert ours == pytest.approx(closed_form, rel=1e-12)
    x = torch.tensor(0.5, requires_grad=True)
    d = torch.tanh(x)
    for _ in range(4):
        (d,) = torch.autograd.grad(d, x, create_graph=True)
    assert ours == pytest.approx(d.item(), rel=1e-12)


def test_fourth_derivative_on_values():
    ours = cr.grad(cr.grad(cr.grad(cr.grad(lambda x: x ** 5 + cr.exp(x)))))(Value(0.3))
    assert isinstance(ours, Value)
    assert ours.data == pytest.approx(120 * 0.3 + math.exp(0.3), rel=1e-12)


def elementwise_derivative(f):
    """x -> f'(x), elementwise, as the gradient of sum(f(x))."""
    return lambda x: cr.grad(lambda y: f(y).sum())(x)


def test_third_derivative_of_sin_on_an_array():
    x = np.linspace(-3, 3, 7)
    d3 = elementwise_derivative(elementwise_derivative(elementwise_derivative(cr.sin)))
    close(d3(x), -np.cos(x), rtol=1e-12, atol=1e-14)
    d3 = elementwise_derivative(elementwise_derivative(elementwise_derivative(cr.sin)))
    close(d3(cr.tensor(x)), -np.cos(x), rtol=1e-12, atol=1e-14)


def test_third_derivative_tensor_against_torch():
    f = lambda x: cr.sigmoid(x) * cr.log1p(x * x)  # noqa: E731
    x = np.linspace(-2, 2, 5)
    ours = elementwise_derivative(elementwise_derivative(elementwise_derivative(f)))(x)
    xt = t64(x).requires_grad_()
    d = torch.sigmoid(xt) * torch.log1p(xt * xt)
    for _ in range(3):
        (d,) = torch.autograd.grad(d.sum(), xt, create_graph=True)
    close(ours, d, rtol=1e-10)


def test_third_order_tensor_of_jacrev_matches_torch():
    f = lambda x: cr.tanh(x @ W.T).sum() * x[0]  # noqa: E731
    f_t = lambda x: torch.tanh(x @ t64(W.T)).sum() * x[0]  # noqa: E731
    x = RNG.standard_normal(3)
    T = cr.jacrev(cr.jacrev(cr.jacrev(f)))(x)
    ref = torch.func.jacrev(torch.func.jacrev(torch.func.jacrev(f_t)))(t64(x))
    assert T.shape == (3, 3, 3)
    close(T, ref, rtol=1e-9, atol=1e-10)


def test_jacrev_of_jacfwd_is_the_hessian():
    """Reverse-over-forward is supported."""
    f, f_t, shape = HESSIAN_CASES["logsumexp"]
    x = RNG.standard_normal(shape)
    close(cr.jacrev(cr.jacfwd(f))(x), torch.func.hessian(f_t)(t64(x)), rtol=1e-9)


def test_value_backward_create_graph_gives_differentiable_grads():
    """micrograd issue #3: with create_graph=True, x.grad is a Value whose own backward
    gives the second derivative. f = x^3 sin x."""
    x = Value(0.7)
    y = x ** 3 * cr.sin(x)
    y.backward(create_graph=True)
    g = x.grad
    assert isinstance(g, Value)
    s, c = math.sin(0.7), math.cos(0.7)
    assert g.data == pytest.approx(3 * 0.7 ** 2 * s + 0.7 ** 3 * c, rel=1e-12)
    x.grad = 0.0
    g.backward()
    second = 6 * 0.7 * s + 6 * 0.7 ** 2 * c - 0.7 ** 3 * s
    assert x.grad == pytest.approx(second, rel=1e-12)


def test_grad_of_a_graph_value_is_differentiable_by_backward():
    """cr.grad on a Value that is part of a graph returns a gradient inside that graph."""
    x = Value(2.0)
    g = cr.grad(lambda x: x ** 3)(x)
    assert g.data == 12.0
    g.backward()
    assert x.grad == 12.0  # d/dx 3x^2 = 6x


def test_grad_of_a_requires_grad_tensor_is_differentiable_by_backward():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    g = cr.grad(lambda x: (x ** 3).sum())(x)
    close(g, [3.0, 12.0])
    g.sum().backward()
    close(x.grad, [6.0, 12.0])


# ---------------------------------------------------------------------------------------
# 9. No perturbation confusion
# ---------------------------------------------------------------------------------------

def test_nested_grad_no_perturbation_confusion():
    """d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1, not 2 (Siskind & Pearlmutter)."""
    assert cr.grad(lambda x: x * cr.grad(lambda y: x + y)(1.0))(1.0) == 1.0
    ref = torch.func.grad(lambda x: x * torch.func.grad(lambda y: x + y)(torch.tensor(1.0)))(
        torch.tensor(1.0))
    assert ref.item() == 1.0


def test_nested_grad_no_perturbation_confusion_values():
    out = cr.grad(lambda x: x * cr.grad(lambda y: x + y)(Value(1.0)))(Value(1.0))
    assert out.data == 1.0


@pytest.mark.parametrize("kind", [np.asarray, cr.tensor])
def test_nested_grad_no_perturbation_confusion_arrays(kind):
    x = kind(np.array([1.0, 2.0, 3.0]))
    out = cr.grad(lambda x: (x * cr.grad(lambda y: (x + y).sum())(np.ones(3))).sum())(x)
    close(out, np.ones(3))


def test_nested_grad_at_the_same_point():
    """d/dy (x y) = x, evaluated at y = x; then d/dx x = 1."""
    assert cr.grad(lambda x: cr.grad(lambda y: x * y)(x))(3.0) == 1.0
    # d/dy (x y^2) = 2 x y, at y = x: 2 x^2; d/dx = 4 x
    assert cr.grad(lambda x: cr.grad(lambda y: x * y ** 2)(x))(3.0) == 12.0


def test_nested_jvp_no_perturbation_confusion():
    out, tangent = cr.jvp(lambda x: x * cr.jvp(lambda y: x + y, (1.0,), (1.0,))[1],
                          (1.0,), (1.0,))
    assert (out, tangent) == (1.0, 1.0)
    # the inner tangent is d/dy (x y) = x, so the outer function is x^2: tangent 2x
    out, tangent = cr.jvp(lambda x: x * cr.jvp(lambda y: x * y, (1.0,), (1.0,))[1],
                          (2.0,), (1.0,))
    assert (out, tangent) == (4.0, 4.0)


def test_jvp_inside_grad():
    """grad(x -> jvp(y -> x y, (x,), (1,))[1]): the inner tangent is x, whose derivative is
    1; with y^2 the inner tangent is 2 x y at y = x, i.e. 2 x^2, derivative 4 x."""
    assert cr.grad(lambda x: cr.jvp(lambda y: x * y, (x,), (1.0,))[1])(3.0) == 1.0
    assert cr.grad(lambda x: cr.jvp(lambda y: x * y ** 2, (x,), (1.0,))[1])(3.0) == 12.0
    ref = torch.func.grad(lambda x: torch.func.jvp(lambda y: x * y ** 2, (x,),
                                                   (torch.tensor(1.0),))[1])(torch.tensor(3.0))
    assert ref.item() == 12.0


def test_jvp_inside_grad_on_arrays_matches_torch():
    x = RNG.standard_normal(3)
    v = RNG.standard_normal(3)
    ours = cr.grad(lambda x: cr.jvp(lambda y: (cr.sin(x * y) * y).sum(), (x,), (v,))[1])(x)
    ref = torch.func.grad(lambda x: torch.func.jvp(lambda y: (torch.sin(x * y) * y).sum(),
                                                   (x,), (t64(v),))[1])(t64(x))
    close(ours, ref)


def test_jacrev_inside_grad_closes_over_the_outer_variable():
    """jacrev(y -> x y)(x) = diag(x); its sum is sum(x), whose gradient is ones."""
    x = RNG.standard_normal(3)
    close(cr.grad(lambda x: cr.jacrev(lambda y: x * y)(x).sum())(x), np.ones(3))


# ---------------------------------------------------------------------------------------
# 10. Transforms never read or write .grad
# ---------------------------------------------------------------------------------------

TRANSFORMS_ON_ARRAYS = {
    "grad": lambda f, x: cr.grad(lambda x: f(x).sum())(x),
    "value_and_grad": lambda f, x: cr.value_and_grad(lambda x: f(x).sum())(x),
    "vjp": lambda f, x: cr.vjp(f, x)[1](np.ones(2)),
    "jvp": lambda f, x: cr.jvp(f, (x,), (np.ones(2),)),
    "jacrev": lambda f, x: cr.jacrev(f)(x),
    "jacfwd": lambda f, x: cr.jacfwd(f)(x),
    "hessian": lambda f, x: cr.hessian(lambda x: f(x).sum())(x),
    "hvp": lambda f, x: cr.hvp(lambda x: f(x).sum(), x, np.ones(2)),
}


@pytest.mark.parametrize("name", TRANSFORMS_ON_ARRAYS)
def test_tensor_grads_untouched(name):
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    w = cr.tensor([3.0, 4.0], requires_grad=True)  # captured by the function
    fresh = cr.tensor([5.0, 6.0], requires_grad=True)  # .grad None, must stay None
    x.grad = np.array([7.0, 7.0])
    w.grad = np.array([5.0, 5.0])
    TRANSFORMS_ON_ARRAYS[name](lambda x: x * x * w + fresh, x)
    np.testing.assert_array_equal(x.grad, [7.0, 7.0])
    np.testing.assert_array_equal(w.grad, [5.0, 5.0])
    assert fresh.grad is None


def test_a_preset_grad_does_not_leak_into_the_result():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    x.grad = np.array([100.0, 100.0])
    close(cr.grad(lambda x: (x * x).sum())(x), [2.0, 4.0])
    v = Value(3.0)
    v.grad = 100.0
    assert cr.grad(lambda x: x * x)(v).data == 6.0


def test_value_grads_untouched():
    v, c = Value(2.0), Value(3.0)
    v.grad, c.grad = 9.0, 11.0
    assert cr.grad(lambda x: x * c)(v).data == 3.0
    assert cr.jvp(lambda x: x * c, (v,), (1.0,))[1].data == 3.0
    assert cr.hessian(lambda x: x * x * c)(v).data == 6.0
    assert cr.vjp(lambda x: x * c, v)[1](1.0)[0].data == 3.0
    assert (v.grad, c.grad) == (9.0, 11.0)


# ---------------------------------------------------------------------------------------
# 11. Users' own primitives
# ---------------------------------------------------------------------------------------

def make_cube(with_jvp=True):
    @cr.primitive
    def cube(x):
        return x ** 3

    cube.defvjp(lambda g, ans, x: g * 3 * x ** 2)
    if with_jvp:
        cube.defjvp(lambda t, ans, x: t * 3 * x ** 2)
    return cube


def test_primitive_plain_call_is_the_numpy_function():
    cube = make_cube()
    assert cube(2.0) == 8.0
    close(cube(np.array([1.0, 2.0])), [1.0, 8.0])


@pytest.mark.parametrize("kind", ["float", "value", "array", "tensor"])
def test_primitive_under_grad_and_jvp(kind):
    cube = make_cube()
    x = {"float": 2.0, "value": Value(2.0), "array": np.array([1.0, 2.0]),
         "tensor": cr.tensor([1.0, 2.0])}[kind]
    xs = np.asarray(npy(x))
    g = cr.grad(lambda x: cube(x).sum() if kind in ("array", "tensor") else cube(x))(x)
    close(g, 3 * xs ** 2)
    out, tangent = cr.jvp(cube, (x,), (np.ones(xs.shape) if xs.shape else 1.0,))
    close(out, xs ** 3)
    close(tangent, 3 * xs ** 2)
    # second order: 6x
    if kind in ("array", "tensor"):
        close(cr.hessian(lambda x: cube(x).sum())(x), np.diag(6 * xs))
    else:
        close(cr.grad(cr.grad(cube))(x), 6 * xs)
        close(cr.hessian(cube)(x), 6 * xs)


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_primitive_jacobians(transform):
    cube = make_cube()
    x = np.array([1.0, -2.0, 0.5])
    close(transform(lambda x: cube(cr.sin(x)))(x), np.diag(3 * np.sin(x) ** 2 * np.cos(x)))


def test_primitive_second_order_through_its_own_rules():
    """The rules use cr operations, so grad of grad (and jvp inside grad) give 6x."""
    cube = make_cube()
    assert cr.grad(cr.grad(cube))(2.0) == 12.0
    assert cr.grad(lambda x: cr.jvp(cube, (x,), (1.0,))[1])(2.0) == 12.0
    assert cr.grad(cr.grad(cr.grad(cube)))(2.0) == 6.0


def test_primitive_without_jvp_rule_names_the_missing_forward_rule():
    cube = make_cube(with_jvp=False)
    assert cr.grad(cube)(2.0) == 12.0  # reverse mode still works
    for x, t in [(2.0, 1.0), (np.array([2.0]), np.array([1.0]))]:
        with pytest.raises(TypeError) as info:
            cr.jvp(cube, (x,), (t,))
        message = str(info.value)
        assert "cube" in message and "forward-mode" in message and "defjvp" in message
    with pytest.raises(TypeError, match="forward-mode"):
        cr.jacfwd(cube)(np.array([1.0, 2.0]))


def make_mulpow():
    """f(x, y) = x y^2 with one rule per argument."""
    @cr.primitive
    def mulpow(x, y):
        return x * y ** 2

    mulpow.defvjp(lambda g, ans, x, y: g * y ** 2, lambda g, ans, x, y: g * 2 * x * y)
    mulpow.defjvp(lambda t, ans, x, y: t * y ** 2, lambda t, ans, x, y: t * 2 * x * y)
    return mulpow


def test_two_argument_primitive():
    mulpow = make_mulpow()
    assert cr.grad(mulpow, argnums=(0, 1))(2.0, 3.0) == (9.0, 12.0)
    assert cr.jvp(mulpow, (2.0, 3.0), (1.0, 10.0)) == (18.0, 9.0 + 120.0)
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    gx, gy = cr.grad(lambda x, y: mulpow(x, y).sum(), argnums=(0, 1))(x, y)
    close(gx, y ** 2)
    close(gy, 2 * x * y)
    close(cr.hessian(lambda v: mulpow(v[0], v[1]))(np.array([2.0, 3.0])),
          [[0.0, 6.0], [6.0, 4.0]])
    gx, gy = cr.grad(mulpow, argnums=(0, 1))(Value(2.0), Value(3.0))
    assert (gx.data, gy.data) == (9.0, 12.0)


def test_primitive_with_a_rule_for_one_argument_only():
    @cr.primitive
    def scale(x, k):
        return x * k

    scale.defvjp(lambda g, ans, x, k: g * k)
    assert cr.grad(scale)(2.0, 5.0) == 5.0
    close(cr.grad(lambda x: scale(x, 5.0).sum())(np.ones(2)), [5.0, 5.0])
    with pytest.raises(TypeError):
        cr.grad(lambda k: scale(np.ones(2), k).sum())(np.array(5.0))


def test_primitive_with_broadcasting_rule():
    """A rule may return the broadcast shape: the engine sums it back."""
    mulpow = make_mulpow()
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    gy = cr.grad(lambda y: mulpow(x, y).sum())(y)
    close(gy, (2 * x * y).sum(axis=0))


# ---------------------------------------------------------------------------------------
# 12. gradcheck
# ---------------------------------------------------------------------------------------

GRADCHECK_CASES = {
    "sin_exp_float": (lambda x: cr.sin(x) * cr.exp(x), (0.3,)),
    "tanh_matmul": (lambda A, x: cr.tanh(x @ A.T), (RNG.standard_normal((2, 3)),
                                                   RNG.standard_normal(3))),
    "logsumexp": (lambda x: cr.logsumexp(x), (RNG.standard_normal(4),)),
    "softmax": (lambda x: cr.softmax(x), (RNG.standard_normal(4),)),
    "two_floats": (lambda x, y: x * y ** 2 + cr.sqrt(1 + x * x), (0.7, -1.2)),
}


@pytest.mark.parametrize("name", GRADCHECK_CASES)
@pytest.mark.parametrize("modes", [("rev",), ("fwd",), ("fwd", "rev")])
def test_gradcheck_first_order_true_for_correct_ops(name, modes):
    f, inputs = GRADCHECK_CASES[name]
    assert cr.gradcheck(f, *inputs, order=1, modes=modes) is True


@pytest.mark.parametrize("name", GRADCHECK_CASES)
def test_gradcheck_reverse_mode_higher_order(name):
    f, inputs = GRADCHECK_CASES[name]
    assert cr.gradcheck(f, *inputs, order=2, modes=("rev",)) is True


def test_gradcheck_catches_a_wrong_defvjp():
    @cr.primitive
    def square(x):
        return x ** 2

    square.defvjp(lambda g, ans, x: g * 3 * x)  # wrong: should be 2x
    square.defjvp(lambda t, ans, x: t * 2 * x)
    for x in (0.7, np.array([0.5, -1.0, 2.0])):
        with pytest.raises(cr.GradcheckError) as info:
            cr.gradcheck(square, x)
        message = str(info.value)
        assert "reverse mode" in message and "chainrule" in message and "numeric" in message
    assert issubclass(cr.GradcheckError, AssertionError)


def test_gradcheck_keeps_a_complex_inputs_imaginary_part():
    """Complex inputs are moved along real, then imaginary directions (more in
    tests/test_complex.py), never cast to float."""
    assert cr.gradcheck(lambda x, y: x * cr.abs(y) ** 2 + y, 1.0, np.array([1.0 + 2.0j]))


def test_gradcheck_catches_a_wrong_defjvp():
    @cr.primitive
    def square(x):
        return x ** 2

    square.defvjp(lambda g, ans, x: g * 2 * x)
    square.defjvp(lambda t, ans, x: t * 3 * x)  # wrong
    with pytest.raises(cr.GradcheckError, match="forward mode") as info:
        cr.gradcheck(square, 0.7, modes=("fwd",))
    assert "numeric" in str(info.value)
    assert cr.gradcheck(square, 0.7, modes=("rev",)) is True  # the vjp is right


def test_gradcheck_catches_a_wrong_second_derivative():
    """The first derivative is right, but the rule's own derivative is not: the rule is
    written with np.cos, a constant to the engine, so d2/dx2 sin comes out 0."""
    @cr.primitive
    def mysin(x):
        return np.sin(x)

    def plain(x):  # the number inside, cut off from any graph
        from chainrule.primitive import raw
        return np.asarray(raw(x))

    mysin.defvjp(lambda g, ans, x: g * np.cos(plain(x)))
    assert cr.gradcheck(mysin, 0.4, order=1, modes=("rev",)) is True
    with pytest.raises(cr.GradcheckError):
        cr.gradcheck(mysin, 0.4, order=2, modes=("rev",))


def test_gradcheck_rejects_unknown_modes():
    with pytest.raises(ValueError):
        cr.gradcheck(lambda x: x, 1.0, modes=("sideways",))


# ---------------------------------------------------------------------------------------
# 13. Errors
# ---------------------------------------------------------------------------------------

def test_forward_over_reverse_jvp_of_grad_is_the_hessian_times_the_tangent():
    """jvp(grad f) at x along v is H v (checked with torch.func), on floats and arrays."""
    assert cr.jvp(cr.grad(lambda x: x ** 3), (2.0,), (1.0,)) == (12.0, 12.0)
    x = np.array([0.3, -1.2, 2.0])
    v = np.array([1.0, 0.5, -2.0])
    f_t = lambda x: (torch.sin(x) * x ** 2).sum()
    H = torch.func.hessian(f_t)(t64(x)).numpy()
    _, tangent = cr.jvp(cr.grad(lambda x: (cr.sin(x) * x ** 2).sum()), (x,), (v,))
    close(tangent, H @ v, rtol=1e-12, atol=1e-12)


def test_forward_over_reverse_jacfwd_of_jacrev_is_the_hessian():
    x = np.array([0.3, -1.2, 2.0])
    f_t = lambda x: (torch.sin(x) * x ** 2).sum() + x.prod()
    H = torch.func.hessian(f_t)(t64(x)).numpy()
    f = lambda x: (cr.sin(x) * x ** 2).sum() + cr.prod(x)
    close(cr.jacfwd(cr.jacrev(f))(x), H, rtol=1e-12, atol=1e-12)
    close(cr.jacfwd(cr.grad(f))(x), H, rtol=1e-12, atol=1e-12)


def test_forward_over_reverse_with_a_tangent_captured_by_the_inner_function():
    """jvp(lambda x: grad(lambda y: x * y * y)(1.0)): the inner gradient is 2 x y = 2x at
    y = 1, so the value is 4 at x = 2 and its tangent along 1 is 2 (not 0)."""
    assert cr.jvp(lambda x: cr.grad(lambda y: x * y * y)(1.0), (2.0,), (1.0,)) == (4.0, 2.0)
    x = np.array([1.0, 2.0])
    out, tangent = cr.jvp(lambda x: cr.grad(lambda y: (x * y * y).sum())(np.ones(2)),
                          (x,), (np.array([1.0, -1.0]),))
    close(out, 2 * x)
    close(tangent, np.array([2.0, -2.0]))


@pytest.mark.parametrize("transform", [cr.grad, cr.value_and_grad, cr.jacrev, cr.jacfwd,
                                       cr.hessian])
@pytest.mark.parametrize("argnums", [1, -2, (0, 3)])
def test_argnums_out_of_range(transform, argnums):
    with pytest.raises(ValueError, match="argnums"):
        transform(lambda x: x * x, argnums=argnums)(1.0)


def test_has_aux_without_a_pair():
    with pytest.raises(TypeError, match="pair"):
        cr.grad(lambda x: x * x, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="pair"):
        cr.value_and_grad(lambda x: x * x, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="pair"):
        cr.grad(lambda x: (x * x, 1, 2), has_aux=True)(1.0)
    with pytest.raises(TypeError, match="pair"):
        cr.vjp(lambda x: x * x, 1.0, has_aux=True)
    with pytest.raises(TypeError):
        cr.jvp(lambda x: x * x, (1.0,), (1.0,), has_aux=True)


def test_inputs_that_cannot_be_differentiated():
    with pytest.raises(TypeError, match="str"):
        cr.grad(lambda x: x)("a")
    with pytest.raises(TypeError, match="dtype"):
        cr.grad(lambda x: (x * x).sum())(cr.tensor([1, 2], dtype=np.int64))


# ---------------------------------------------------------------------------------------
# 14. dtypes
# ---------------------------------------------------------------------------------------

def test_float_inputs_give_python_floats_everywhere():
    assert type(cr.grad(cr.sin)(0.5)) is float
    assert all(type(g) is float for g in cr.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0))
    assert all(type(v) is float for v in cr.jvp(cr.sin, (0.5,), (1.0,)))
    assert type(cr.vjp(cr.sin, 0.5)[1](1.0)[0]) is float
    assert type(cr.jacrev(cr.sin)(0.5)) is float
    assert type(cr.jacfwd(cr.sin)(0.5)) is float
    assert type(cr.hessian(cr.sin)(0.5)) is float


def test_float32_stays_float32():
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    f = lambda x: cr.tanh(x) * x  # noqa: E731
    g = cr.grad(lambda x: f(x).sum())(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, (1 - np.tanh(x) ** 2) * x + np.tanh(x), rtol=1e-6)
    assert cr.jacrev(f)(x).dtype == np.float32
    assert cr.jacfwd(f)(x).dtype == np.float32
    assert cr.hessian(lambda x: f(x).sum())(x).dtype == np.float32
    assert cr.jvp(f, (x,), (np.ones(3, np.float32),))[1].dtype == np.float32
    assert cr.vjp(f, x)[1](np.ones(3, np.float32))[0].dtype == np.float32
    assert cr.grad(lambda x: f(x).sum())(cr.tensor(x)).dtype == np.float32


# ---------------------------------------------------------------------------------------
# A property: reverse and forward mode agree with torch on random smooth functions
# ---------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=1, max_size=5), st.integers(0, 3))
def test_jvp_vjp_duality_against_torch(xs, which):
    """<u, J v> computed by jvp and by vjp equals torch's, for a few smooth maps."""
    f, f_t = [
        (lambda x: cr.sin(x) * cr.tanh(x[::-1]),
         lambda x: torch.sin(x) * torch.tanh(x.flip(0))),
        (lambda x: cr.softmax(x) * x.sum(), lambda x: torch.softmax(x, -1) * x.sum()),
        (lambda x: cr.exp(-x * x) / (1 + x ** 2), lambda x: torch.exp(-x * x) / (1 + x ** 2)),
        (lambda x: cr.log1p(cr.sigmoid(x)), lambda x: torch.log1p(torch.sigmoid(x))),
    ][which]
    x = np.array(xs)
    v = np.cos(np.arange(x.size) + 1.0)
    u = np.sin(np.arange(x.size) + 2.0)
    J = torch.func.jacrev(f_t)(t64(x)).numpy()
    close(cr.jvp(f, (x,), (v,))[1], J @ v, rtol=1e-9, atol=1e-12)
    close(cr.vjp(f, x)[1](u)[0], J.T @ u, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------
# 15. Corner cases: forward over forward, gradcheck's defaults, jvp's has_aux,
#     var/std in forward mode, jacfwd on Values and on users' broadcasting rules,
#     functions that loop over their input
# ---------------------------------------------------------------------------------------

def test_jvp_of_jvp_forward_over_forward():
    # f(x) = x^3 (floats); d2f/dx2 at 2 = 12
    out, tangent = cr.jvp(lambda x: cr.jvp(lambda y: y ** 3, (x,), (1.0,))[1],
                          (2.0,), (1.0,))
    assert (out, tangent) == (12.0, 12.0)


def test_jacfwd_of_jacfwd():
    f, f_t, shape = HESSIAN_CASES["logsumexp"]
    x = RNG.standard_normal(shape)
    close(cr.jacfwd(cr.jacfwd(f))(x), torch.func.hessian(f_t)(t64(x)), rtol=1e-9)


@pytest.mark.parametrize("name", ["sin_exp_float", "tanh_matmul"])
def test_gradcheck_default_order_two(name):
    f, inputs = GRADCHECK_CASES[name]
    assert cr.gradcheck(f, *inputs) is True


def test_gradcheck_forward_order_two():
    assert cr.gradcheck(lambda x: cr.sin(x) * cr.exp(x), 0.3, order=2, modes=("fwd",)) is True


def test_jvp_has_aux_with_an_array_output():
    with pytest.raises(TypeError, match="pair"):
        cr.jvp(lambda x: x * np.ones(2), (1.0,), (1.0,), has_aux=True)


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_in_forward_mode(op):
    x = np.array([1.0, 2.0, 4.0])
    f = getattr(cr, op)
    f_t = lambda x: getattr(torch, op)(x, unbiased=False)  # noqa: E731
    ref = torch.func.jvp(f_t, (t64(x),), (t64([1.0, 0.0, 0.0]),))[1]
    close(cr.jvp(f, (x,), (np.array([1.0, 0.0, 0.0]),))[1], ref)
    close(cr.jacfwd(lambda X: f(X, axis=0))(X23), torch.func.jacrev(
        lambda X: getattr(torch, op)(X, 0, unbiased=False))(t64(X23)))


def test_jacfwd_on_values():
    cube = make_cube()
    J = cr.jacfwd(cube)(Value(2.0))
    assert isinstance(J, Value) and J.data == 12.0
    assert cr.jacfwd(lambda x: x * x)(Value(2.0)).data == 4.0


def test_jacfwd_user_primitive_with_broadcast_operands():
    mulpow = make_mulpow()
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    ref = torch.func.jacrev(lambda y: t64(x) * y ** 2)(t64(y))
    close(cr.jacrev(lambda y: mulpow(x, y))(y), ref)  # reverse mode, the same rule
    close(cr.jacfwd(lambda y: mulpow(x, y))(y), ref)


def test_a_function_that_loops_over_its_input_works_in_every_mode():
    """len() and iteration work on whatever the transforms pass in (Tensors, tracers)."""
    f = lambda x: sum(xi * xi for xi in x) + len(x)
    x = np.array([1.0, 2.0, 3.0])
    close(cr.grad(f)(x), 2 * x)
    close(cr.jacfwd(f)(x), 2 * x)
    assert cr.jvp(f, (x,), (np.ones(3),))[1] == pytest.approx(12.0)


# ---------------------------------------------------------------------------------------
# has_aux on the Jacobians and the Hessian, as JAX's
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian"])
def test_jacobians_and_hessians_take_has_aux_as_jax_does(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x = np.array([1.0, 2.0])
    ours = getattr(cr, name)(lambda v: (cr.sum(v ** 3) if name == "hessian" else v ** 3,
                                        {"twice": v * 2}), has_aux=True)(x)
    theirs = getattr(jax, name)(lambda v: (jnp.sum(v ** 3) if name == "hessian" else v ** 3,
                                           {"twice": v * 2}), has_aux=True)(x)
    np.testing.assert_allclose(ours[0], np.asarray(theirs[0]), rtol=1e-12)
    np.testing.assert_allclose(ours[1]["twice"], np.asarray(theirs[1]["twice"]))
    with pytest.raises(TypeError, match="must return a pair"):
        getattr(cr, name)(lambda v: v, has_aux=True)(x)


# ---------------------------------------------------------------------------------------
# 16. None in pytrees: an empty subtree, as in JAX
# ---------------------------------------------------------------------------------------

@pytest.fixture
def jax():
    """JAX in float64 for the test, its previous setting restored afterwards."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", previous)


def same_tree(ours, theirs):
    """The same containers, None in the same places, leaves equal to 1e-12."""
    if theirs is None or ours is None:
        assert ours is None and theirs is None, (ours, theirs)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), (ours, theirs)
        for key in theirs:
            same_tree(ours[key], theirs[key])
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            same_tree(a, b)
    else:
        np.testing.assert_allclose(npy(ours), np.asarray(theirs), rtol=1e-12, atol=1e-12)


TREES = [None, {"a": None, "b": [1.0, None, (None,)], "c": 2.0}, [None, [None]],
         (np.array([1.0, 2.0]), None), {"frozen": None, "w": {"x": None, "y": 3.0}}]


@pytest.mark.parametrize("tree", TREES, ids=[repr(t)[:40] for t in TREES])
def test_tree_flatten_takes_none_as_a_subtree_without_leaves_as_jax_does(tree, jax):
    leaves, treedef = cr.tree_flatten(tree)
    their_leaves, their_def = jax.tree_util.tree_flatten(tree)
    assert len(leaves) == len(their_leaves)
    for ours, theirs in zip(leaves, their_leaves):
        np.testing.assert_array_equal(ours, theirs)
    doubled = [2 * np.asarray(leaf) for leaf in leaves]
    same_tree(cr.tree_unflatten(treedef, doubled),
              jax.tree_util.tree_unflatten(their_def, doubled))


# Each case is one program, written against a namespace of transforms (chainrule's or
# JAX's); its result must be the same tree, None in the same places.
X = np.array([1.0, 2.0])
NONE_CASES = {
    "grad of a dict with a None entry":
        lambda t: t.grad(lambda p: t.sum(p["w"] ** 2) * p["s"])({"b": None, "s": 2.0, "w": X}),
    "grad with argnums naming a None argument":
        lambda t: t.grad(lambda x, y: x * 2.0, argnums=(0, 1))(1.5, None),
    "grad of None alone":
        lambda t: t.grad(lambda x, y: x * 2.0, argnums=1)(1.5, None),
    "value_and_grad of a list with None":
        lambda t: t.value_and_grad(lambda p: p[0] ** 3)([2.0, None]),
    "grad with an aux of None":
        lambda t: t.grad(lambda x: (x * x, None), has_aux=True)(3.0),
    "grad with None inside the aux":
        lambda t: t.grad(lambda x: (x * x, {"a": None, "b": x}), has_aux=True)(3.0),
    "vjp: None among the primals, in the output and in the cotangent":
        lambda t: (lambda out, f_vjp: (out, f_vjp((1.0, None))))(
            *t.vjp(lambda x, y: (x * x, None), 3.0, None)),
    "vjp with an aux of None":
        lambda t: (lambda out, f_vjp, aux: (out, f_vjp(1.0), aux))(
            *t.vjp(lambda x: (x * x, None), 3.0, has_aux=True)),
    "jvp: None among the primals and in the output":
        lambda t: t.jvp(lambda x, y: (x * x, None), (3.0, None), (1.0, None)),
    "jvp with an aux of None":
        lambda t: t.jvp(lambda x: (x * x, None), (3.0,), (1.0,), has_aux=True),
    "jacrev: None in and out":
        lambda t: t.jacrev(lambda p: (p["w"] ** 2, None))({"b": None, "w": X}),
    "jacfwd: None in and out":
        lambda t: t.jacfwd(lambda p: (p["w"] ** 2, None))({"b": None, "w": X}),
    "jacrev with argnums naming a None argument":
        lambda t: t.jacrev(lambda x, y: x * 2, argnums=(0, 1))(X, None),
    "jacfwd with argnums naming a None argument first":
        lambda t: t.jacfwd(lambda x, y: y * 2, argnums=(0, 1))(None, X),
    "jacrev with an aux of None":
        lambda t: t.jacrev(lambda x: (x ** 2, None), has_aux=True)(X),
    "jacfwd with an aux of None":
        lambda t: t.jacfwd(lambda x: (x ** 2, None), has_aux=True)(X),
    "hessian of a dict with a None entry":
        lambda t: t.hessian(lambda p: t.sum(p["w"] ** 3))({"b": None, "w": X}),
    "forward over reverse with None in the point and the tangent":
        lambda t: t.jvp(t.grad(lambda p: p[0] ** 3), ([2.0, None],), ([1.0, None],)),
    "grad inside grad, the inner point holding None":
        lambda t: t.grad(lambda x: t.grad(lambda p: p["v"] * x ** 2)({"v": x, "n": None})["v"])(
            1.5),
}


@pytest.mark.parametrize("case", sorted(NONE_CASES))
def test_every_transform_passes_none_through_as_jax_does(case, jax):
    ours = NONE_CASES[case](SimpleNamespace(
        grad=cr.grad, value_and_grad=cr.value_and_grad, vjp=cr.vjp, jvp=cr.jvp,
        jacrev=cr.jacrev, jacfwd=cr.jacfwd, hessian=cr.hessian, sum=cr.sum))
    theirs = NONE_CASES[case](SimpleNamespace(
        grad=jax.grad, value_and_grad=jax.value_and_grad, vjp=jax.vjp, jvp=jax.jvp,
        jacrev=jax.jacrev, jacfwd=jax.jacfwd, hessian=jax.hessian, sum=jax.numpy.sum))
    same_tree(ours, theirs)


def test_hvp_with_none_in_the_point_and_the_direction(jax):
    ours = cr.hvp(lambda p: p[0] ** 3 * p[2], [2.0, None, 0.5], [1.0, None, -1.0])
    theirs = jax.jvp(jax.grad(lambda p: p[0] ** 3 * p[2]), ([2.0, None, 0.5],),
                     ([1.0, None, -1.0],))[1]
    same_tree(ours, theirs)


def test_a_scalar_and_a_none_without_has_aux_is_refused_as_jax_does(jax):
    """(loss, None) is not a scalar: most likely has_aux=True was forgotten."""
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output"):
        jax.grad(lambda x: (x * x, None))(3.0)
    with pytest.raises(TypeError, match=r"grad: the function must return a scalar, but it "
                                        r"returned a tuple; .* pass has_aux=True"):
        cr.grad(lambda x: (x * x, None))(3.0)


def test_a_function_that_returns_none_is_still_refused():
    """None alone as the output is a function without its return, in every transform
    (JAX refuses it in grad, and takes it as an output without leaves elsewhere)."""
    for transform in (lambda f: cr.grad(f)(1.0), lambda f: cr.vjp(f, 1.0),
                      lambda f: cr.jvp(f, (1.0,), (1.0,)), lambda f: cr.jacfwd(f)(X)):
        with pytest.raises(TypeError, match=r"returned None \(a missing `return`\?\)"):
            transform(lambda x: None)
