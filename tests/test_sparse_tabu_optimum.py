"""Tabu search (chainrule/sparse/tabu.py) reaches the optimal 7 colours on the 2-D
Brusselator's column pattern at N = 32, 64 and 128, where greedy colourings take 10-11:
for seeds 0-5, with a valid colouring, the same colours for a seed on every run, and the
caller's arrays untouched. 7 is optimal there: 6 would need every row to hold each
colour once, so classes of N^2 / 3 columns (``lower_bound`` says 7, from the pattern),
and a 7-colouring of the 16 x 16 grid, tiled, colours these grids. The search finds it
on a folded copy of the grid (chainrule/sparse/periodic.py); where 3 divides N it finds
6, the lower bound.

The pattern is built from its formula with scipy.sparse (tracing the function at
N = 128 takes longer than the search); the first test checks it against the traced one."""

import functools

import numpy as np
import pytest
import scipy.sparse as sparse

import chainrule as cr
from chainrule.sparse.coloring import column_coloring, columns_are_independent
from chainrule.sparse.tabu import fewer_column_colours, lower_bound, tabu_search
from test_sparse_derivatives import brusselator


def brusselator_pattern(side):
    """The Jacobian pattern of ``brusselator`` on a periodic side x side grid: a
    five-point stencil in each species' block and the diagonal coupling them."""
    eye = sparse.identity(side, format="csr", dtype=bool)
    ring = sparse.csr_array(np.roll(np.eye(side, dtype=bool), 1, axis=1)
                            | np.roll(np.eye(side, dtype=bool), -1, axis=1))
    stencil = (sparse.kron(ring, eye) + sparse.kron(eye, ring)
               + sparse.identity(side * side, dtype=bool))
    diagonal = sparse.identity(side * side, dtype=bool)
    return sparse.csr_array(sparse.block_array([[stencil, diagonal], [diagonal, stencil]]),
                            dtype=bool)


@functools.cache
def brusselator_greedy_128():
    return column_coloring(brusselator_pattern(128))


def colours(colors):
    return int(np.max(colors)) + 1


def test_the_pattern_is_the_traced_brusselators():
    side = 8
    x = np.random.default_rng(1).random(2 * side * side)
    traced = cr.jacobian_sparsity(lambda y: brusselator(y, side))(x)
    np.testing.assert_array_equal(sparse.csr_array(traced).toarray() != 0,
                                  brusselator_pattern(side).toarray())


@pytest.mark.parametrize("side", [32, 64])
@pytest.mark.parametrize("seed", range(6))
def test_the_brusselator_takes_its_optimal_seven_colours(side, seed):
    pattern = brusselator_pattern(side)
    greedy = column_coloring(pattern)
    assert colours(greedy) >= 10
    assert lower_bound(pattern) == 7  # 6 in every row and column, 2 N^2 rows
    found = fewer_column_colours(pattern, greedy, seed=seed)
    assert colours(found) == 7
    assert columns_are_independent(pattern, found)


@pytest.mark.parametrize("seed", range(6))
def test_the_brusselator_at_n_128_takes_seven_colours(seed):
    pattern = brusselator_pattern(128)
    found = fewer_column_colours(pattern, brusselator_greedy_128(), seed=seed)
    assert colours(found) == 7
    assert columns_are_independent(pattern, found)


@pytest.mark.parametrize("side", [24, 48])
def test_six_colours_where_3_divides_n(side):
    """(i + 2j) mod 6, and v's colours u's plus 3, colour these grids with 6: the
    lower bound, reached from the pattern."""
    pattern = brusselator_pattern(side)
    assert lower_bound(pattern) == 6
    found = fewer_column_colours(pattern, column_coloring(pattern))
    assert colours(found) == 6 and columns_are_independent(pattern, found)


def test_a_seed_gives_the_same_colours_on_every_run():
    pattern = brusselator_pattern(32)
    greedy = column_coloring(pattern)
    first = fewer_column_colours(pattern, greedy, seed=7)
    np.testing.assert_array_equal(first, fewer_column_colours(pattern, greedy, seed=7))
    assert colours(first) == 7


def test_tabu_search_with_a_lower_bound_below_the_optimum_still_finds_seven():
    """Told only the largest row (6), the search on the folded copies finds 7, and the
    search for 6 on the whole graph ends by its budget."""
    pattern = brusselator_pattern(32)
    found = tabu_search(pattern.T @ pattern, column_coloring(pattern), bound=6, seed=3,
                        budget=20_000)
    assert colours(found) == 7 and columns_are_independent(pattern, found)


def test_the_callers_pattern_and_colours_are_left_as_they_were():
    pattern = brusselator_pattern(16)
    greedy = column_coloring(pattern)
    before, colours_before = pattern.toarray().copy(), greedy.copy()
    graph = pattern.T @ pattern
    graph_before = graph.toarray().copy()
    found = fewer_column_colours(pattern, greedy)
    tabu_search(graph, greedy, bound=7, seed=1)
    assert colours(found) < colours(greedy)
    np.testing.assert_array_equal(pattern.toarray(), before)
    np.testing.assert_array_equal(greedy, colours_before)
    np.testing.assert_array_equal(graph.toarray(), graph_before)


def test_seven_colours_are_the_optimum_where_16_divides_n():
    """A 7-colouring of the 16 x 16 grid, tiled, colours the grids of N = 32, 64, 128;
    6 colours would give every row each colour once, so each colour class N^2 / 3
    columns (each column is in 6 rows), not a whole number for these N."""
    small = brusselator_pattern(16)
    seven = fewer_column_colours(small, column_coloring(small), seed=1)
    assert colours(seven) == 7 and columns_are_independent(small, seven)
    for side in (32, 64, 128):
        tiled = np.tile(seven.reshape(2, 16, 16), (1, side // 16, side // 16)).reshape(-1)
        assert columns_are_independent(brusselator_pattern(side), tiled)
        assert side * side % 3 != 0  # no class of N^2 / 3 columns: 6 is too few
        assert lower_bound(brusselator_pattern(side)) == 7
