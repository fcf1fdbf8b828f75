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
