"""Fewer colours by tabu search (``coloring="tabu"``, chainrule/sparse/tabu.py): a greedy
colouring improved, never made improper, and the Jacobian's values unchanged.

The 2-D Brusselator at N = 32 goes from greedy's 10 colours to the optimal 7 (found on a
folded copy of its grid, chainrule/sparse/periodic.py; the lower bound is 7, as 6 in
every row and column cannot make classes that meet each of the 2 N^2 rows once); a band
stays at its optimal 3 without a search; random graphs and the random sparse programs of
tests/test_sparse_derivatives.py keep proper colourings with no more colours than
greedy, and values equal to the dense Jacobian, eager and under cr.jit."""

import random

import numpy as np
import pytest
import scipy.sparse as sparse

import chainrule as cr
from chainrule.sparse import evaluate
from chainrule.sparse.coloring import column_coloring, columns_are_independent
from chainrule.sparse.periodic import _quotient, digit_shifts, fold
from chainrule.sparse.tabu import _descend, fewer_column_colours, lower_bound, tabu_search
from test_sparse_derivatives import _assert_equal_to_dense, _dense_jacobian, \
    _random_program, brusselator


def ring(n):
    return np.eye(n, k=1) + np.eye(n, k=-1) + np.eye(n, k=n - 1) + np.eye(n, k=1 - n)


def proper(graph, colors):
    rows, cols = np.nonzero(np.asarray(graph) * (1 - np.eye(len(colors))))
    return bool(np.all(colors[rows] != colors[cols]))


def test_an_even_ring_comes_down_to_two_colours_and_an_odd_one_stays_at_three():
    start = np.array([0, 1, 2, 0, 1, 2])
    two = tabu_search(ring(6), start, bound=2)
    assert two.max() + 1 == 2 and proper(ring(6), two)
    odd = tabu_search(ring(7), np.array([0, 1, 0, 1, 0, 1, 2]), bound=2, budget=2000)
    assert odd.max() + 1 == 3 and proper(ring(7), odd)  # no 2-colouring exists


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_keep_a_proper_colouring_with_no_more_colours(seed):
    rng = np.random.default_rng(seed)
    pattern = rng.random((40, 30)) < 0.12
    greedy = column_coloring(pattern)
    searched = fewer_column_colours(pattern, greedy, budget=3000)
    assert columns_are_independent(pattern, searched)
    assert searched.max() <= greedy.max()
    # seeded: the same colours on every run
    np.testing.assert_array_equal(searched, fewer_column_colours(pattern, greedy,
                                                                 budget=3000))


@pytest.mark.slow
def test_the_brusselator_takes_seven_colours_instead_of_ten():
    side = 32
    f = lambda x: brusselator(x, side)  # noqa: E731
    x = np.random.default_rng(0).random(2 * side * side)
    pattern = evaluate._checked_pattern(cr.jacobian_sparsity(f)(x), None, "", "")
    assert evaluate._jacobian_plan(pattern, "forward").ncolors == 10
    plan = evaluate._jacobian_plan(pattern, "forward", "tabu")
    assert plan.ncolors == 7
    jacobian = cr.sparse_jacobian(f, sparsity=pattern, coloring="tabu")
    dense = np.asarray(cr.jacfwd(f)(x))
    _assert_equal_to_dense(jacobian(x), dense)
    _assert_equal_to_dense(cr.jit(cr.sparse_jacobian(f, coloring="tabu"))(x), dense)


def test_a_band_stays_at_three_colours():
    f = lambda x: x[1:-1] ** 2 - x[:-2] * x[2:]  # noqa: E731
    pattern = evaluate._checked_pattern(cr.jacobian_sparsity(f)(np.ones(50)), None, "", "")
    assert evaluate._jacobian_plan(pattern, "auto", "tabu").ncolors == 3


@pytest.mark.parametrize("seed", range(8))
def test_random_programs_values_equal_the_dense_jacobian(seed):
    rng = np.random.default_rng(5000 + seed)
    n = 8
    program = _random_program(rng, n)
    pattern = evaluate._checked_pattern(cr.jacobian_sparsity(program)(rng.random(n)), None,
                                        "", "")
    for mode in ("auto", "forward", "reverse"):
        greedy = evaluate._jacobian_plan(pattern, mode)
        searched = evaluate._jacobian_plan(pattern, mode, "tabu")
        assert searched.ncolors <= greedy.ncolors
    known = {mode: cr.sparse_jacobian(program, mode=mode, sparsity=pattern, coloring="tabu")
             for mode in ("forward", "reverse")}
    jitted = cr.jit(cr.sparse_jacobian(program, coloring="tabu"))
    for _ in range(2):
        x = rng.standard_normal(n)
        dense = _dense_jacobian(program, x)
        for jacobian in known.values():
            _assert_equal_to_dense(jacobian(x), dense)
        _assert_equal_to_dense(jitted(x), dense)
    _assert_equal_to_dense(cr.sparse_jacobian(program, coloring="tabu")(x), dense)


def test_bad_choices_are_named():
    with pytest.raises(ValueError, match="sparse_jacobian: coloring must be one of greedy, "
                                         "tabu, got 'best'"):
        cr.sparse_jacobian(lambda x: x, coloring="best")
    with pytest.raises(ValueError, match="coloring='tabu' searches a column or row "
                                         "colouring .* not the bidirectional one"):
        cr.sparse_jacobian(lambda x: x, mode="bidirectional", coloring="tabu")


def test_the_callers_graph_is_left_as_it_was():
    import scipy.sparse as sparse
    graph = sparse.csr_array((ring(6) + np.eye(6)).astype(bool))  # its diagonal stored
    before = graph.toarray().copy()
    tabu_search(graph, np.array([0, 1, 2, 0, 1, 2]), bound=2)
    np.testing.assert_array_equal(graph.toarray(), before)


def test_the_lower_bound_is_the_largest_row_or_one_more_where_it_cannot_be_enough():
    odd = ring(7) + np.eye(7)  # 3 a row and a column, 7 rows: classes cannot meet each
    assert lower_bound(odd) == 4
    assert lower_bound(ring(6) + np.eye(6)) == 3  # (0, 1, 2, 0, 1, 2)
    assert lower_bound(np.eye(5)) == 1
    uneven = np.triu(np.ones((5, 5)))  # rows of 5, 4, ... entries: the largest row
    assert lower_bound(uneven) == 5
    assert lower_bound(np.zeros((3, 3))) == 0
    for pattern in (odd, ring(6) + np.eye(6)):
        found = fewer_column_colours(pattern, column_coloring(pattern))
        assert found.max() + 1 == lower_bound(pattern)


def torus(rows, cols):
    """The five-point stencil on a periodic rows x cols grid, C order."""
    def cycle(k):
        return sparse.csr_array(ring(k).astype(bool)) if k > 2 else \
            sparse.csr_array(np.ones((k, k), dtype=bool) ^ np.eye(k, dtype=bool))
    return sparse.csr_array(sparse.kron(cycle(rows), sparse.identity(cols))
                            + sparse.kron(sparse.identity(rows), cycle(cols))
                            + sparse.identity(rows * cols), dtype=bool)


def test_digit_shifts_are_the_axes_of_a_periodic_grid():
    pattern = torus(12, 10)  # index 10 * i + j
    graph = sparse.csr_array(pattern.T @ pattern, dtype=bool)
    graph.setdiag(False)
    graph.eliminate_zeros()
    graph.sort_indices()
    shifts = digit_shifts(graph, random.Random(0))
    assert [(stride, radix) for stride, radix, _ in shifts] == [(10, 12), (1, 10)]
    assert all(share == 1.0 for _, _, share in shifts)
    image, first = fold(120, shifts, [4, 5])  # periods 4 along i, 5 along j
    assert len(first) == 20 and image.max() == 19
    np.testing.assert_array_equal(image.reshape(12, 10)[4:8, 5:10],
                                  image.reshape(12, 10)[:4, :5])
    rng = np.random.default_rng(0)
    unordered = sparse.csr_array(rng.random((60, 60)) < 0.05)
    unordered = sparse.csr_array(unordered + unordered.T, dtype=bool)
    unordered.setdiag(False)
    unordered.eliminate_zeros()
    unordered.sort_indices()
    assert digit_shifts(unordered, random.Random(0)) == []


@pytest.mark.parametrize("seed", range(4))
def test_a_lifted_colouring_is_proper_where_the_grid_is_not_periodic(seed):
    """On a grid without wrap-around a shift along an axis maps most edges, not all
    (``digit_shifts`` keeps none); folded along both axes all the same, the quotient
    holds every edge's image, so its colouring lifted is proper."""
    side = 10  # the periodic 5-colourings, (i + 2j) mod 5, repeat with period 5
    line = np.eye(side, k=1) + np.eye(side, k=-1)
    stencil = sparse.csr_array(sparse.kron(line, np.eye(side)) + sparse.kron(np.eye(side), line)
                               + np.eye(side * side), dtype=bool)
    graph = sparse.csr_array(stencil.T @ stencil, dtype=bool)
    graph.setdiag(False)
    graph.eliminate_zeros()
    graph.sort_indices()
    rng = random.Random(seed)
    assert digit_shifts(graph, rng) == []
    image, first = fold(side * side, [(side, side, 1.0), (1, side, 1.0)], [5, 5])
    neighbours = _quotient(graph, image, len(first))
    assert len(neighbours) == 25
    quotient = _descend(neighbours, np.arange(25), 5, 20_000, rng)
    lifted = quotient[image]
    assert lifted.max() + 1 == 5 and columns_are_independent(stencil, lifted)
    assert _quotient(graph, fold(side * side, [(1, side, 1.0)], [2])[0], 20) is None  # a loop
