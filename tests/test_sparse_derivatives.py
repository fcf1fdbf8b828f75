"""cr.sparse_jacobian and cr.sparse_hessian equal the dense cr.jacfwd / cr.hessian to
1e-12: on the problems the issue names (a tridiagonal reaction-diffusion residual, a 2-D
Brusselator, the extended Rosenbrock function) and on random sparse programs, whose
detected pattern must also hold every non-zero of the dense Jacobian at other points."""

import numpy as np
import pytest

import chainrule as cr

scipy_sparse = pytest.importorskip("scipy.sparse")

MODES = ("auto", "forward", "reverse", "bidirectional")


def _dense_jacobian(f, x):
    return np.asarray(cr.jacfwd(f)(x)).reshape(-1, np.size(x))


def _assert_equal_to_dense(sparse, dense):
    assert isinstance(sparse, scipy_sparse.csr_array)
    assert sparse.shape == dense.shape
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------
# The problems
# ---------------------------------------------------------------------------------------

def reaction_diffusion(u, d=0.7):
    """A 1-D reaction-diffusion residual, u = 0 at both ends: tridiagonal (and
    monotone in -u, so it has one root)."""
    padded = cr.concatenate([cr.zeros(1), u, cr.zeros(1)])
    return d * (padded[:-2] - 2 * u + padded[2:]) - u ** 3 - 0.1 * cr.exp(u) + 1


def brusselator(x, side, alpha=0.1):
    """The 2-D Brusselator's right-hand side on a periodic grid, u and v stacked."""
    u, v = x.reshape(2, side, side)

    def laplacian(w):
        return (cr.roll(w, 1, axis=0) + cr.roll(w, -1, axis=0) + cr.roll(w, 1, axis=1)
                + cr.roll(w, -1, axis=1) - 4 * w) * (side - 1) ** 2
    du = 1 + u ** 2 * v - 4.4 * u + alpha * laplacian(u)
    dv = 3.4 * u - u ** 2 * v + alpha * laplacian(v)
    return cr.stack([du, dv]).reshape(-1)


def extended_rosenbrock(x):
    odd, even = x[0::2], x[1::2]
    return cr.sum(100 * (even - odd ** 2) ** 2 + (1 - odd) ** 2)


def chained_rosenbrock(x):
    return cr.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_the_reaction_diffusion_jacobian_equals_the_dense_one(mode):
    x = np.random.default_rng(0).random(30)
    jac = cr.sparse_jacobian(reaction_diffusion, mode=mode)(x)
    _assert_equal_to_dense(jac, _dense_jacobian(reaction_diffusion, x))
    assert jac.nnz == 3 * 30 - 2


@pytest.mark.parametrize("mode", MODES)
def test_the_brusselator_jacobian_equals_the_dense_one(mode):
    side = 6
    x = np.random.default_rng(1).random(2 * side * side)
    f = lambda x: brusselator(x, side)
    _assert_equal_to_dense(cr.sparse_jacobian(f, mode=mode)(x), _dense_jacobian(f, x))


def test_the_brusselator_pattern_is_two_five_point_stencils_and_their_coupling():
    side = 8
    x = np.random.default_rng(2).random(2 * side * side)
    pattern = cr.jacobian_sparsity(lambda x: brusselator(x, side))(x)
    # du: u's five points and v's own; dv: v's five points and u's own
    assert pattern.nnz == 2 * side * side * 6


@pytest.mark.parametrize("f", [extended_rosenbrock, chained_rosenbrock])
def test_the_rosenbrock_hessians_equal_the_dense_ones(f):
    x = np.random.default_rng(3).random(20) * 2 - 1
    hess = cr.sparse_hessian(f)(x)
    _assert_equal_to_dense(hess, np.asarray(cr.hessian(f)(x)))


def test_the_extended_rosenbrock_hessian_is_block_diagonal_and_takes_two_passes():
    from chainrule.sparse import evaluate
    x = np.random.default_rng(4).random(12)
    pattern = cr.hessian_sparsity(extended_rosenbrock)(x)
    assert (pattern.toarray() == np.kron(np.eye(6), np.ones((2, 2)))).all()
    assert evaluate._hessian_plan(pattern).ncolors == 2


def test_a_star_coloured_hessian_equals_the_dense_one():
    from chainrule.sparse import evaluate
    f = lambda x: cr.sum(x[0] * x[1:] ** 2) + cr.sum(cr.sin(x) * x[::-1]) / 3
    x = np.random.default_rng(5).random(11)
    pattern = cr.hessian_sparsity(f)(x)
    assert evaluate._hessian_plan(pattern).mode == "star"
    _assert_equal_to_dense(cr.sparse_hessian(f)(x), np.asarray(cr.hessian(f)(x)))


# ---------------------------------------------------------------------------------------
# A known pattern, reused
# ---------------------------------------------------------------------------------------

def test_a_known_pattern_skips_detection_and_serves_other_points():
    rng = np.random.default_rng(6)
    pattern = cr.jacobian_sparsity(reaction_diffusion)(rng.random(25))
    jacobian = cr.sparse_jacobian(reaction_diffusion, sparsity=pattern)
    for _ in range(3):
        x = rng.random(25)
        _assert_equal_to_dense(jacobian(x), _dense_jacobian(reaction_diffusion, x))


def test_a_dense_boolean_array_serves_as_the_pattern():
    x = np.random.default_rng(7).random(10)
    band = np.abs(np.subtract.outer(np.arange(10), np.arange(10))) <= 1
    hess = cr.sparse_hessian(chained_rosenbrock, sparsity=band)(x)
    _assert_equal_to_dense(hess, np.asarray(cr.hessian(chained_rosenbrock)(x)))


def test_a_pattern_of_the_wrong_shape_is_refused_with_the_shapes():
    with pytest.raises(ValueError, match=r"sparse_jacobian: sparsity has 4 columns, "
                                         r"expected one per entry of x \(5"):
        cr.sparse_jacobian(reaction_diffusion, sparsity=np.eye(5, 4))(np.ones(5))
    with pytest.raises(ValueError, match=r"sparse_hessian: sparsity has shape \(4, 4\)"):
        cr.sparse_hessian(chained_rosenbrock, sparsity=np.eye(4))(np.ones(5))


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="sparse_jacobian: mode must be one of"):
        cr.sparse_jacobian(reaction_diffusion, mode="sideways")


def test_auto_mode_takes_reverse_mode_where_rows_need_fewer_passes():
    from chainrule.sparse import evaluate
    f = lambda x: cr.concatenate([cr.sum(x ** 2, keepdims=True), x[:3] * 2])
    pattern = cr.jacobian_sparsity(f)(np.ones(8))
    assert evaluate._jacobian_plan(pattern, "auto").mode == "reverse"
    x = np.random.default_rng(8).random(8)
    _assert_equal_to_dense(cr.sparse_jacobian(f)(x), _dense_jacobian(f, x))


def arrow(x):
    """A dense row (a sum), a dense column (x[0] in every other entry) and a diagonal:
    n forward passes, or n reverse passes, or 3 both ways."""
    return cr.concatenate([cr.sum(x * cr.sin(x), keepdims=True),
                           x[0] * cr.exp(x[1:] / 3) + x[1:] ** 2])


def test_an_arrow_jacobian_takes_three_passes_both_ways_and_n_one_way():
    from chainrule.sparse import evaluate
    n = 40
    x = np.random.default_rng(10).standard_normal(n)
    pattern = evaluate._checked_pattern(cr.jacobian_sparsity(arrow)(x), None, "", "")
    assert evaluate._jacobian_plan(pattern, "auto").ncolors == n
    plan = evaluate._jacobian_plan(pattern, "bidirectional")
    assert (plan.mode, plan.nforward, plan.nreverse) == ("bidirectional", 2, 1)
    _assert_equal_to_dense(cr.sparse_jacobian(arrow, mode="bidirectional")(x),
                           _dense_jacobian(arrow, x))


def test_bidirectional_mode_keeps_one_side_where_it_needs_no_more_passes():
    from chainrule.sparse import evaluate
    pattern = evaluate._checked_pattern(
        cr.jacobian_sparsity(reaction_diffusion)(np.ones(30)), None, "", "")
    plan = evaluate._jacobian_plan(pattern, "bidirectional")
    assert (plan.mode, plan.ncolors) == ("forward", 3)


def test_scipy_least_squares_takes_the_sparse_jacobian():
    from scipy.optimize import least_squares
    jacobian = cr.sparse_jacobian(reaction_diffusion)
    found = least_squares(lambda u: np.asarray(reaction_diffusion(u)), np.zeros(40),
                          jac=jacobian, method="trf")
    assert found.success and np.abs(found.fun).max() < 1e-8


# ---------------------------------------------------------------------------------------
# Random sparse programs
# ---------------------------------------------------------------------------------------

def _random_program(rng, n):
    """A program of vectors of length n built from the pool of values so far: entry by
    entry operations, shifts, reversal, sums along an axis, where/maximum, a constant
    permutation, an indexed add, a product with a sparse constant matrix."""
    steps = []
    for _ in range(int(rng.integers(3, 8))):
        kind = rng.choice(["unary", "binary", "shift", "reverse", "pairsum", "where",
                           "maximum", "permute", "scatter", "matvec", "cumsum"])
        a, b = (int(k) for k in rng.integers(0, len(steps) + 1, size=2))
        k = int(rng.integers(1, 3))
        perm = rng.permutation(n)
        matrix = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.15)
        steps.append((str(kind), a, b, k, perm, matrix, int(rng.integers(0, 4))))

    def program(x):
        pool = [x]
        for kind, a, b, k, perm, matrix, choice in steps:
            u, v = pool[a], pool[b]
            if kind == "unary":
                out = [cr.sin, cr.tanh, cr.exp, lambda w: w * w][choice](u)
            elif kind == "binary":
                out = [u + v, u * v, u - 2 * v, u / (1.5 + v * v)][choice]
            elif kind == "shift":
                out = cr.concatenate([u[k:], cr.zeros(k)]) if choice % 2 else \
                    cr.concatenate([cr.zeros(k), u[:-k]])
            elif kind == "reverse":
                out = u[::-1]
            elif kind == "pairsum":  # sums along an axis, broadcast back
                out = (cr.sum(u.reshape(n // 2, 2), axis=1, keepdims=True)
                       * cr.ones((1, 2))).reshape(n)
            elif kind == "where":
                out = cr.where(u > v, u * v, cr.cos(v))
            elif kind == "maximum":
                out = cr.maximum(u, v) + cr.minimum(cr.abs(u), 0.4)
            elif kind == "permute":
                out = u[perm]
            elif kind == "scatter":
                out = u.at[perm[:3]].add(v[:3])
            elif kind == "matvec":
                out = matrix @ u
            else:
                out = cr.cumsum(u.reshape(2, n // 2), axis=1).reshape(n)
            pool.append(out)
        return pool[-1] + 0.5 * pool[len(pool) // 2]
    return program


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_patterns_hold_and_values_equal_the_dense_jacobian(seed):
    rng = np.random.default_rng(seed)
    n = 8
    program = _random_program(rng, n)
    pattern = cr.jacobian_sparsity(program)(rng.random(n)).toarray()
    jitted = {mode: cr.jit(cr.sparse_jacobian(program, mode=mode)) for mode in MODES}
    for _ in range(3):
        x = rng.standard_normal(n)
        dense = _dense_jacobian(program, x)
        assert not ((dense != 0) & ~pattern).any()
        local = cr.jacobian_sparsity(program, local=True)(x).toarray()
        assert not ((dense != 0) & ~local).any() and not (local & ~pattern).any()
        for mode in MODES:
            _assert_equal_to_dense(cr.sparse_jacobian(program, mode=mode)(x), dense)
            # under cr.jit the pattern of the first call's point serves every call
            _assert_equal_to_dense(jitted[mode](x), dense)
        _assert_equal_to_dense(cr.sparse_jacobian(program, sparsity=pattern)(x), dense)


@pytest.mark.parametrize("seed", range(15))
def test_random_programs_with_a_dense_row_and_column_take_fewer_passes_both_ways(seed):
    """A random program with a dense row and a dense column added: no one-sided colouring
    does better than n passes; jvps and vjps together take no more, and fewer on most
    seeds (5-15 passes on 13 of these 15), and the values equal the dense Jacobian,
    eager and under cr.jit."""
    from chainrule.sparse import evaluate
    rng = np.random.default_rng(2000 + seed)
    n = 16
    program = _random_program(rng, n)

    def f(x):
        inner = program(x)
        return cr.concatenate([cr.sum(cr.cos(x) * inner, keepdims=True),
                               inner[1:] + x[0] * cr.sin(x[1:])])
    pattern = cr.jacobian_sparsity(f)(rng.random(n))
    one_sided = evaluate._jacobian_plan(evaluate._checked_pattern(pattern, None, "", ""),
                                        "auto")
    both = evaluate._jacobian_plan(evaluate._checked_pattern(pattern, None, "", ""),
                                   "bidirectional")
    assert one_sided.ncolors == n and both.ncolors <= n
    jitted = cr.jit(cr.sparse_jacobian(f, mode="bidirectional"))
    for _ in range(2):
        x = rng.standard_normal(n)
        dense = _dense_jacobian(f, x)
        assert not ((dense != 0) & ~pattern.toarray()).any()
        _assert_equal_to_dense(cr.sparse_jacobian(f, mode="bidirectional")(x), dense)
        _assert_equal_to_dense(cr.sparse_jacobian(f, mode="bidirectional",
                                                  sparsity=pattern)(x), dense)
        _assert_equal_to_dense(jitted(x), dense)


@pytest.mark.parametrize("seed", range(10))
def test_random_programs_hessians_equal_the_dense_ones(seed):
    rng = np.random.default_rng(1000 + seed)
    n = 8
    program = _random_program(rng, n)
    f = lambda x: cr.sum(cr.sin(program(x))) + cr.sum(x[1:] * x[:-1])
    pattern = cr.hessian_sparsity(f)(rng.random(n)).toarray()
    jitted = cr.jit(cr.sparse_hessian(f))
    acyclic = cr.jit(cr.sparse_hessian(f, coloring="acyclic"))
    for _ in range(2):
        x = rng.standard_normal(n)
        dense = np.asarray(cr.hessian(f)(x))
        assert not ((dense != 0) & ~pattern).any()
        _assert_equal_to_dense(cr.sparse_hessian(f)(x), dense)
        _assert_equal_to_dense(jitted(x), dense)
        # by substitution: to 1e-12 of the largest entry
        for got in (cr.sparse_hessian(f, coloring="acyclic")(x), acyclic(x)):
            assert np.abs(got.toarray() - dense).max() <= 1e-12 * np.abs(dense).max()


@pytest.mark.slow
def test_large_problems_equal_the_dense_ones_where_dense_fits():
    rng = np.random.default_rng(9)
    x = rng.random(1500)
    _assert_equal_to_dense(cr.sparse_jacobian(reaction_diffusion)(x),
                           _dense_jacobian(reaction_diffusion, x))
    side = 16
    y = rng.random(2 * side * side)
    f = lambda x: brusselator(x, side)
    _assert_equal_to_dense(cr.sparse_jacobian(f)(y), _dense_jacobian(f, y))
    z = rng.random(400)
    _assert_equal_to_dense(cr.sparse_hessian(extended_rosenbrock)(z),
                           np.asarray(cr.hessian(extended_rosenbrock)(z)))
