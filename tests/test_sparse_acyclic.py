"""Acyclic colourings of symmetric patterns (every cycle takes three colours or more) and
Hessians recovered from them by substitution: the colourings pass a checker written
here, independently of the library's (and both fail on hand-made bad colourings), and
``cr.sparse_hessian(f, coloring="acyclic")`` equals the dense ``cr.hessian`` to 1e-12 of
its largest entry, eagerly and under cr.jit."""

import numpy as np
import pytest

import chainrule as cr
from seeds_and_tolerances import per_test_generator

scipy_sparse = pytest.importorskip("scipy.sparse")

from chainrule.sparse import acyclic, coloring, evaluate  # noqa: E402

RNG = per_test_generator(4545)


def _count(colors):
    return int(np.max(colors)) + 1


def _symmetric(pattern):
    pattern = scipy_sparse.csr_array(pattern, dtype=bool)
    return scipy_sparse.csr_array(pattern + pattern.T
                                  + scipy_sparse.identity(pattern.shape[0], dtype=bool),
                                  dtype=bool)


def _two_coloured_cycle(pattern, colors):
    """Why ``colors`` is no acyclic colouring of a symmetric pattern, or None: an edge
    whose ends share a colour, or an edge that joins two vertices already connected by
    edges of the same two colours (a union-find per pair of colours)."""
    upper = scipy_sparse.triu(scipy_sparse.csr_array(pattern), k=1).tocoo()
    roots = {}

    def find(node):
        while roots.setdefault(node, node) != node:
            node = roots[node]
        return node
    for i, j in zip(upper.row.tolist(), upper.col.tolist()):
        a, b = int(colors[i]), int(colors[j])
        if a == b:
            return f"{i} and {j} are neighbours of colour {a}"
        pair = (min(a, b), max(a, b))
        ri, rj = find((pair, i)), find((pair, j))
        if ri == rj:
            return f"the edge ({i}, {j}) closes a cycle of colours {pair}"
        roots[ri] = rj
    return None


def _band(n, width):
    return scipy_sparse.diags_array([np.ones(n - abs(k)) for k in range(-width, width + 1)],
                                    offsets=list(range(-width, width + 1)), format="csr",
                                    dtype=bool)


def _five_point(side):
    path, eye = _band(side, 1), scipy_sparse.identity(side, dtype=bool)
    return scipy_sparse.csr_array(scipy_sparse.kron(path, eye) + scipy_sparse.kron(eye, path),
                                  dtype=bool)


# ---------------------------------------------------------------------------------------
# The colouring and its checks
# ---------------------------------------------------------------------------------------

def test_both_checkers_refuse_a_two_coloured_cycle_and_a_clash():
    """A square (four vertices in a cycle) coloured 0, 1, 0, 1 is a proper colouring,
    and a star colouring would refuse it too; giving the fourth vertex a third colour
    breaks the cycle; two neighbours of one colour are refused as well."""
    square = np.eye(4, dtype=bool) | np.roll(np.eye(4, dtype=bool), 1, axis=1)
    square = square | square.T
    for bad in ([0, 1, 0, 1], [0, 0, 1, 2]):
        assert not acyclic.is_acyclic_coloring(square, bad)
        assert _two_coloured_cycle(square, bad) is not None
    assert acyclic.is_acyclic_coloring(square, [0, 1, 0, 2])
    assert _two_coloured_cycle(square, [0, 1, 0, 2]) is None


def test_the_library_checker_refuses_a_cycle_made_by_recolouring_one_vertex():
    """In the greedy acyclic colouring of a 30 x 30 grid, the first vertex that can take
    another colour none of its neighbours has and so close a two-coloured cycle (found
    by the checker here): the library's checker refuses that colouring too."""
    grid = _five_point(30)
    colors = acyclic.acyclic_coloring(grid)
    neighbours = np.split(grid.indices, grid.indptr[1:-1])
    bad = None
    for v in range(900):
        for c in set(range(_count(colors))) - set(colors[neighbours[v]].tolist()):
            trial = colors.copy()
            trial[v] = c
            if _two_coloured_cycle(grid, trial) is not None:
                bad = trial
                break
        if bad is not None:
            break
    assert bad is not None and "closes a cycle" in _two_coloured_cycle(grid, bad)
    assert acyclic.is_acyclic_coloring(grid, colors)
    assert not acyclic.is_acyclic_coloring(grid, bad)


@pytest.mark.parametrize("seed", range(8))
def test_acyclic_colourings_of_random_patterns_pass_the_independent_checker(seed):
    rng = np.random.default_rng(seed)
    pattern = _symmetric(rng.random((80, 80)) < 0.04)
    for order in coloring.ORDERS:
        colors = acyclic.acyclic_coloring(pattern, orders=(order,))
        assert _two_coloured_cycle(pattern, colors) is None
    star = coloring.star_coloring(pattern)
    assert coloring.is_symmetric_decompressible(pattern, star)
    assert _count(acyclic.acyclic_coloring(pattern)) < _count(star)


def test_a_path_takes_two_colours_and_the_grid_four_of_an_optimal_three():
    """A tridiagonal pattern is a path, a tree: two colours (star colouring: 3). The
    five-point grid has squares, so three colours at least, and (i + j) mod 3 is an
    acyclic colouring with three; the greedy orders here take 4 (star colouring: 5)."""
    assert acyclic.acyclic_coloring(_band(1000, 1)).tolist() == [0, 1] * 500
    grid = _five_point(20)
    found = acyclic.acyclic_coloring(grid)
    assert _two_coloured_cycle(grid, found) is None
    assert _count(found) == 4 and _count(coloring.star_coloring(grid)) == 5
    i, j = np.divmod(np.arange(400), 20)
    assert _two_coloured_cycle(grid, (i + j) % 3) is None


def test_a_diagonal_takes_one_colour_and_an_unknown_order_is_refused():
    assert acyclic.acyclic_coloring(np.eye(5)).tolist() == [0] * 5
    with pytest.raises(ValueError, match="orders must be among"):
        acyclic.acyclic_coloring(np.eye(3), orders=("dsatur",))


# ---------------------------------------------------------------------------------------
# Substitution, on matrices made here
# ---------------------------------------------------------------------------------------

def _recovered(matrix):
    """A symmetric CSR matrix recovered from its compressed products with the seeds of
    its acyclic colouring, against its largest entry."""
    matrix = scipy_sparse.csr_array(matrix)
    matrix.sort_indices()
    pattern = scipy_sparse.csr_array(matrix != 0)
    colors = acyclic.acyclic_coloring(pattern)
    compressed = (matrix @ np.eye(_count(colors))[colors]).T
    values = acyclic.SubstitutionPlan(pattern, colors).recover(np.ascontiguousarray(compressed))
    got = scipy_sparse.csr_array((values, pattern.indices, pattern.indptr), shape=pattern.shape)
    return abs(got - matrix).max() / abs(matrix).max()


@pytest.mark.parametrize("seed", range(6))
def test_substitution_recovers_random_symmetric_matrices(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 200))
    upper = scipy_sparse.random(n, n, density=float(rng.uniform(0.01, 0.08)), random_state=rng,
                                data_rvs=rng.standard_normal)
    matrix = upper + upper.T + scipy_sparse.diags_array(rng.standard_normal(n))
    assert _recovered(matrix) < 1e-12


def test_substitution_along_a_path_of_ten_thousand_keeps_to_1e_12():
    """The longest substitution: a tridiagonal matrix is one two-coloured tree. Rooted
    at its middle, no entry sits at the end of more than 5,000 steps; entries over six
    orders of magnitude."""
    rng = RNG
    n = 10_000
    off = rng.standard_normal(n - 1) * 10.0 ** rng.uniform(-3, 3, n - 1)
    matrix = scipy_sparse.diags_array([off, rng.standard_normal(n), off], offsets=[-1, 0, 1])
    assert _recovered(matrix) < 1e-12


# ---------------------------------------------------------------------------------------
# cr.sparse_hessian(f, coloring="acyclic")
# ---------------------------------------------------------------------------------------

def chained_rosenbrock(x):
    return cr.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def extended_rosenbrock(x):
    odd, even = x[0::2], x[1::2]
    return cr.sum(100 * (even - odd ** 2) ** 2 + (1 - odd) ** 2)


def grid_energy(x, side=12):
    """Half the squared differences of grid neighbours and a quartic: the five-point
    Laplacian plus a diagonal."""
    u = x.reshape(side, side)
    return (0.5 * cr.sum((u[1:] - u[:-1]) ** 2) + 0.5 * cr.sum((u[:, 1:] - u[:, :-1]) ** 2)
            + cr.sum(cr.exp(u) * u ** 2))


def arrow_and_band(x):
    return cr.sum(x[0] * x[1:] ** 2) + cr.sum(cr.sin(x) * x[::-1]) / 3 + chained_rosenbrock(x)


def _assert_close_to_dense(sparse, dense):
    assert isinstance(sparse, scipy_sparse.csr_array) and sparse.shape == dense.shape
    assert np.abs(sparse.toarray() - dense).max() <= 1e-12 * np.abs(dense).max()


@pytest.mark.parametrize("f, n, star, fewer, rounds", [
    (chained_rosenbrock, 40, 3, 2, 1), (extended_rosenbrock, 40, 2, 2, 1),
    (grid_energy, 144, 5, 4, 3), (arrow_and_band, 21, 5, 4, 2)])
def test_acyclic_hessians_equal_the_dense_ones_in_as_few_passes_or_fewer(f, n, star, fewer,
                                                                         rounds):
    """Fewer passes than the star colouring or as many; ``rounds``: how many rounds of
    substitution (paths waiting for the paths hanging off them) the jitted program
    holds."""
    rng = RNG
    x = rng.uniform(-1, 1, n)
    pattern = cr.hessian_sparsity(f)(x)
    assert evaluate._hessian_plan(pattern).ncolors == star
    plan = evaluate._hessian_plan(pattern, "acyclic")
    assert plan.ncolors == fewer and len(plan.substitution.rounds) == rounds
    jitted = cr.jit(cr.sparse_hessian(f, coloring="acyclic"))
    known = cr.sparse_hessian(f, sparsity=pattern, coloring="acyclic")
    for _ in range(2):
        x = rng.uniform(-1, 1, n)
        dense = np.asarray(cr.hessian(f)(x))
        _assert_close_to_dense(cr.sparse_hessian(f, coloring="acyclic")(x), dense)
        _assert_close_to_dense(known(x), dense)
        _assert_close_to_dense(jitted(x), dense)


def test_under_jit_the_colouring_and_plan_are_made_once_and_the_recovery_is_recorded(
        monkeypatch):
    rng = RNG
    made = []
    colour = evaluate.acyclic_coloring

    def counting(pattern):
        made.append(pattern.shape)
        return colour(pattern)
    monkeypatch.setattr(evaluate, "acyclic_coloring", counting)
    jitted = cr.jit(cr.sparse_hessian(chained_rosenbrock, coloring="acyclic"))
    for _ in range(3):
        x = rng.normal(size=16)
        _assert_close_to_dense(jitted(x), np.asarray(cr.hessian(chained_rosenbrock)(x)))
    assert made == [(16, 16)]
    listing = str(cr.make_program(cr.sparse_hessian(chained_rosenbrock,
                                                    coloring="acyclic"))(np.ones(16)))
    assert "np.cumsum" in listing and listing.count("-> returned") == 1


@pytest.mark.parametrize("f, n, colours", [
    (lambda x: cr.sum(x ** 3), 5, 1),       # diagonal: nothing to solve for
    (lambda x: cr.sum(x), 4, 1),            # no entry: one colour, as star gives
    (lambda x: cr.sum(x) ** 2, 6, 6),       # dense: every triangle takes three colours
    (lambda x: cr.sum(x ** 2), 1, 1)], ids=["diagonal", "empty", "dense", "one"])
def test_hessians_with_nothing_or_everything_to_substitute(f, n, colours):
    x = np.arange(1.0, n + 1)
    plan = evaluate._hessian_plan(cr.hessian_sparsity(f)(x), "acyclic")
    assert plan.ncolors == colours
    dense = np.asarray(cr.hessian(f)(x)).reshape(n, n)
    for got in (cr.sparse_hessian(f, coloring="acyclic")(x),
                cr.jit(cr.sparse_hessian(f, coloring="acyclic"))(x)):
        np.testing.assert_allclose(got.toarray(), dense, rtol=1e-12, atol=0)


def test_an_unknown_colouring_is_refused():
    with pytest.raises(ValueError, match="sparse_hessian: coloring must be one of star, "
                                         "acyclic, got 'column'"):
        cr.sparse_hessian(chained_rosenbrock, coloring="column")
