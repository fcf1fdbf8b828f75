"""Fewer colours by tabu search (``coloring="tabu"``, chainrule/sparse/tabu.py): a greedy
colouring improved, never made improper, and the Jacobian's values unchanged.

The 2-D Brusselator at N = 32 goes from greedy's 10 colours to 8 (a colouring by formula
gives 8 there; the lower bound, the most entries in a row, is 6); a band stays at its
optimal 3 without a search; random graphs and the random sparse programs of
tests/test_sparse_derivatives.py keep proper colourings with no more colours than
greedy, and values equal to the dense Jacobian, eager and under cr.jit."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.sparse import evaluate
from chainrule.sparse.coloring import column_coloring, columns_are_independent
from chainrule.sparse.tabu import fewer_column_colours, tabu_search
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
def test_the_brusselator_takes_eight_colours_instead_of_ten():
    side = 32
    f = lambda x: brusselator(x, side)  # noqa: E731
    x = np.random.default_rng(0).random(2 * side * side)
    pattern = evaluate._checked_pattern(cr.jacobian_sparsity(f)(x), None, "", "")
    assert evaluate._jacobian_plan(pattern, "forward").ncolors == 10
    plan = evaluate._jacobian_plan(pattern, "forward", "tabu")
    assert plan.ncolors == 8
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
