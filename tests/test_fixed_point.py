"""cr.fixed_point: the fixed point of an iteration, its derivative by the implicit
function theorem (not through the iterations), checked against closed forms, central
differences and autograd's fixed_point, to second order and in both modes."""

import numpy as np
import pytest

import chainrule as cr


def newton_sqrt(a):
    return lambda x: 0.5 * (x + a / x)        # its fixed point is sqrt(a)


def distance(x, y):
    return cr.max(cr.abs(x - y))


def test_the_square_root_by_newtons_iteration_has_the_square_roots_derivatives():
    root = lambda a: cr.fixed_point(newton_sqrt, a, 1.0, distance, 1e-13)
    for a in (0.5, 2.0, 9.0):
        assert float(root(a)) == pytest.approx(np.sqrt(a), rel=1e-13)
        assert cr.grad(root)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-12)
        assert cr.grad(cr.grad(root))(a) == pytest.approx(-0.25 * a ** -1.5, rel=1e-10)
        assert cr.jvp(root, (a,), (1.0,))[1] == pytest.approx(0.5 / np.sqrt(a), rel=1e-12)


def test_a_vector_fixed_point_against_the_implicit_function_theorem_and_differences():
    def f(a):
        return lambda x: 0.5 * cr.tanh(x @ np.array([[0.3, 0.1], [-0.2, 0.4]])) + a
    solve = lambda a: cr.fixed_point(f, a, np.zeros(2), distance, 1e-14)
    a = np.array([0.3, -0.2])
    jac_rev, jac_fwd = cr.jacrev(solve)(a), cr.jacfwd(solve)(a)
    x = np.asarray(solve(a))
    m = np.array([[0.3, 0.1], [-0.2, 0.4]])
    df_dx = 0.5 * (1 - np.tanh(x @ m) ** 2)[:, None] * m.T     # d f_i / d x_j
    np.testing.assert_allclose(jac_rev, np.linalg.inv(np.eye(2) - df_dx), rtol=1e-10)
    np.testing.assert_allclose(jac_fwd, jac_rev, rtol=1e-12)
    assert cr.gradcheck(lambda a: cr.sum(solve(a) ** 2), a, order=2)


def test_the_start_does_not_change_the_fixed_point_so_its_gradient_is_zero():
    assert cr.grad(lambda x0: cr.fixed_point(newton_sqrt, 2.0, x0, distance, 1e-13),
                   )(1.0) == 0.0


def test_autograds_fixed_point_gives_the_same_numbers():
    fixed_points = pytest.importorskip("autograd.misc.fixed_points")
    import autograd
    import autograd.numpy as anp
    from chainrule.autograd.misc.fixed_points import fixed_point
    theirs = autograd.grad(lambda a: fixed_point_of(fixed_points.fixed_point, anp, a))(2.0)
    ours = cr.grad(lambda a: fixed_point_of(fixed_point, cr, a))(2.0)
    assert ours == pytest.approx(theirs, rel=1e-12)


def fixed_point_of(fixed_point, numpy, a):
    return fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 1.0,
                       lambda x, y: numpy.abs(x - y), 1e-13)


def test_an_iteration_that_does_not_converge_is_refused_in_one_line():
    with pytest.raises(ValueError, match="fixed_point: the iteration did not converge"):
        cr.fixed_point(lambda a: lambda x: 2.0 * x + a, 1.0, 1.0, distance, 1e-12,
                       max_iterations=50)
    with pytest.raises(ValueError, match="did not converge.*nan"):
        cr.fixed_point(lambda a: lambda x: x * np.inf - x * np.inf, 1.0, 1.0, distance, 1e-12)


def test_a_tree_of_parameters_ravels_to_one_vector_and_back_differentiably():
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": 0.5}
    vector, unravel = cr.ravel_pytree(params)
    assert vector.tolist() == [0.5, 1.0, 2.0, 3.0, 4.0]      # dict entries by sorted key
    np.testing.assert_array_equal(unravel(vector)["w"], params["w"])
    gradient = cr.grad(lambda v: cr.sum(unravel(v)["w"] ** 2) * unravel(v)["b"])(vector)
    np.testing.assert_allclose(gradient, [30.0, 1.0, 2.0, 3.0, 4.0])


# The iteration is a while_loop: under cr.jit one loop of the program, which runs as many
# steps as each call's input needs; under cr.vmap each example stops at its own step. So
# the fixed point and its derivatives (whose rules iterate too) take every transform.

def roots(a):
    return cr.fixed_point(newton_sqrt, a, cr.ones_like(a), distance, 1e-13)


def test_under_jit_each_call_iterates_as_long_as_its_own_input_needs():
    total, gradient = cr.jit(lambda a: cr.sum(roots(a))), cr.jit(cr.grad(lambda a: cr.sum(roots(a))))
    for a in ([2.0, 3.0], [1e6, 7.0], [0.01, 1.0]):      # from a few steps to a few dozen
        a = np.array(a)
        assert total(a) == pytest.approx(np.sum(np.sqrt(a)), rel=1e-13)
        np.testing.assert_allclose(gradient(a), 0.5 / np.sqrt(a), rtol=1e-12)
        np.testing.assert_array_equal(gradient(a), cr.grad(lambda a: cr.sum(roots(a)))(a))


def test_under_vmap_every_derivative_transform_maps_over_the_examples():
    a = np.array([[2.0, 3.0], [1e6, 0.01]])          # examples converging at different steps
    first, second = 0.5 / np.sqrt(a), -0.25 * a ** -1.5
    total = lambda a: cr.sum(roots(a))
    np.testing.assert_allclose(cr.vmap(roots)(a), np.sqrt(a), rtol=1e-13)
    np.testing.assert_allclose(cr.vmap(cr.grad(total))(a), first, rtol=1e-12)
    np.testing.assert_allclose(cr.jit(cr.vmap(cr.grad(total)))(a), first, rtol=1e-12)
    np.testing.assert_allclose(cr.grad(lambda a: cr.sum(cr.vmap(roots)(a)))(a), first,
                               rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(lambda x: cr.jvp(roots, (x,), (np.ones(2),))[1])(a),
                               first, rtol=1e-12)
    for jacobian in (cr.jacrev, cr.jacfwd):
        np.testing.assert_allclose(cr.vmap(jacobian(roots))(a),
                                   [np.diag(row) for row in first], rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.hessian(total))(a),
                               [np.diag(row) for row in second], rtol=1e-9)
    for k, row in enumerate(a):   # each example as it would be alone
        np.testing.assert_allclose(cr.vmap(cr.grad(total))(a)[k], cr.grad(total)(row),
                                   rtol=1e-15)


def test_derivatives_of_any_order_under_jit_iterate_in_the_program():
    """A derivative's own iteration is a fixed point of the same operation, so the
    derivative of that derivative is one more fixed point, not the derivative of a
    loop: every order runs under cr.jit, traced once and replayed at a new point."""
    root = lambda a: cr.fixed_point(newton_sqrt, a, 1.0, distance, 1e-13)
    third = {"grad of grad of grad": cr.jit(cr.grad(cr.grad(cr.grad(root)))),
             "forward over reverse over forward": cr.jit(cr.jacfwd(cr.grad(cr.jacfwd(root))))}
    hessian = cr.jit(cr.hessian(lambda a: cr.sum(roots(a))))
    for a in (2.0, 5.0):
        for name, derivative in third.items():
            assert derivative(a) == pytest.approx(3 / 8 * a ** -2.5, rel=1e-9), name
        vector = np.array([a, 4.0 * a])
        np.testing.assert_allclose(hessian(vector), np.diag(-0.25 * vector ** -1.5),
                                   rtol=1e-9)


def test_an_iteration_that_does_not_converge_is_refused_under_jit_and_vmap_too():
    diverging = lambda a: cr.fixed_point(newton_sqrt, a, cr.ones_like(a), distance, 1e-13,
                                         max_iterations=40)   # no real square root of -2
    jitted = cr.jit(diverging)
    np.testing.assert_allclose(jitted(np.array([2.0])), [np.sqrt(2.0)], rtol=1e-13)
    with pytest.raises(ValueError, match="did not converge: after 40 steps"):
        jitted(np.array([-2.0]))
    with pytest.raises(ValueError, match="did not converge"):
        cr.vmap(diverging)(np.array([[2.0], [-2.0]]))
    # the derivative's own iteration, batched: x -> a x has the fixed point 0 (where the
    # forward iteration starts), and the rule's w -> 1 + a w converges for |a| < 1 only
    scaling = lambda a: cr.fixed_point(lambda a: lambda x: a * x, a, 0.0 * a, distance,
                                       1e-13, max_iterations=200)
    np.testing.assert_allclose(cr.vmap(cr.grad(scaling))(np.array([0.5, -0.5])), [0.0, 0.0])
    with pytest.raises(ValueError, match="did not converge: for some examples"):
        cr.vmap(cr.grad(scaling))(np.array([0.5, 3.0]))


def test_a_torch_parameter_gives_torch_derivatives():
    torch = pytest.importorskip("torch")
    a = torch.tensor([2.0, 9.0], dtype=torch.float64)
    gradient = cr.grad(lambda a: cr.sum(roots(a)))(a)
    assert isinstance(gradient, torch.Tensor)
    np.testing.assert_allclose(gradient.numpy(), 0.5 / np.sqrt([2.0, 9.0]), rtol=1e-12)
    tangent = cr.jvp(roots, (a,), (torch.ones(2, dtype=torch.float64),))[1]
    np.testing.assert_allclose(np.asarray(tangent), 0.5 / np.sqrt([2.0, 9.0]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cr.hessian(lambda a: cr.sum(roots(a)))(a)),
                               np.diag(-0.25 * np.array([2.0, 9.0]) ** -1.5), rtol=1e-9)
