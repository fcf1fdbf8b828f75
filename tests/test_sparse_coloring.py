"""Colourings: optimal counts on the stencil problems, and valid colourings (no two
columns of one colour share a row; the star condition for Hessians) on random patterns."""

import numpy as np
import pytest

scipy_sparse = pytest.importorskip("scipy.sparse")

from chainrule.sparse import coloring  # noqa: E402


def _band(n, width=1):
    return scipy_sparse.diags_array([np.ones(n - abs(k)) for k in range(-width, width + 1)],
                                    offsets=list(range(-width, width + 1)), format="csr",
                                    dtype=bool)


def _five_point(side):
    band = _band(side)
    eye = scipy_sparse.identity(side, dtype=bool, format="csr")
    return scipy_sparse.csr_array((scipy_sparse.kron(band, eye) + scipy_sparse.kron(eye, band)),
                                  dtype=bool)


def _random_pattern(rng, rows, cols, density):
    matrix = rng.random((rows, cols)) < density
    return scipy_sparse.csr_array(matrix)


def _count(colors):
    return int(colors.max()) + 1


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_a_tridiagonal_jacobian_takes_three_colours(n):
    assert _count(coloring.column_coloring(_band(n))) == 3
    assert _count(coloring.row_coloring(_band(n))) == 3


@pytest.mark.parametrize("side", [5, 16, 40])
def test_the_five_point_stencil_takes_five_colours(side):
    assert _count(coloring.column_coloring(_five_point(side))) == 5


def _brusselator_pattern(side):
    """Two five-point stencils on a periodic side x side grid (u's rows, then v's), each
    also holding the other species at its own point."""
    eye = np.eye(side, dtype=bool)
    ring = np.roll(eye, 1, axis=1) | eye | np.roll(eye, -1, axis=1)
    stencil = np.kron(ring, eye) | np.kron(eye, ring)
    coupling = np.eye(side * side, dtype=bool)
    return scipy_sparse.csr_array(np.block([[stencil, coupling], [coupling, stencil]]))


@pytest.mark.parametrize("side, period, greedy", [(24, 6, 10), (32, 8, 10)])
def test_the_brusselator_takes_more_colours_than_a_colouring_by_formula(side, period,
                                                                         greedy):
    """Colour (i + 2j) mod p for u at grid point (i, j), and that plus p/2 for v, is
    valid where p divides the side: with p = 6 it is optimal (6 entries in a row), with
    p = 8 it serves N = 32, 64, 128, whose optimum thus lies between 6 and 8. The greedy
    colourings, which know no such formula, take 10 on both (11 at N = 64 and 128)."""
    pattern = _brusselator_pattern(side)
    i, j = np.divmod(np.arange(side * side), side)
    u = (i + 2 * j) % period
    by_formula = np.concatenate([u, (u + period // 2) % period])
    assert coloring.columns_are_independent(pattern, by_formula)
    assert _count(by_formula) == period
    assert _count(coloring.column_coloring(pattern)) == greedy


def test_a_pentadiagonal_jacobian_takes_five_colours():
    assert _count(coloring.column_coloring(_band(50, width=2))) == 5


def test_a_star_colouring_needs_fewer_colours_than_a_column_colouring_on_an_arrowhead():
    n = 30
    arrow = np.eye(n, dtype=bool)
    arrow[0] = arrow[:, 0] = True
    assert _count(coloring.column_coloring(arrow)) == n
    assert _count(coloring.star_coloring(arrow)) == 2


def test_a_banded_hessian_takes_as_many_star_colours_as_the_band_is_wide():
    assert _count(coloring.star_coloring(_band(40))) == 3


@pytest.mark.parametrize("seed", range(6))
def test_column_and_row_colourings_of_random_patterns_are_valid(seed):
    rng = np.random.default_rng(seed)
    pattern = _random_pattern(rng, 40 + 10 * seed, 35, 0.05 + 0.03 * seed)
    columns = coloring.column_coloring(pattern)
    dense = pattern.toarray()
    for colour in range(_count(columns)):
        assert dense[:, columns == colour].sum(axis=1).max(initial=0) <= 1
    rows = coloring.row_coloring(pattern)
    for colour in range(_count(rows)):
        assert dense[rows == colour].sum(axis=0).max(initial=0) <= 1


@pytest.mark.parametrize("seed", range(6))
def test_star_colourings_of_random_symmetric_patterns_meet_the_star_condition(seed):
    rng = np.random.default_rng(100 + seed)
    n = 30 + 5 * seed
    upper = np.triu(rng.random((n, n)) < 0.04 + 0.02 * seed)
    pattern = upper | upper.T | np.eye(n, dtype=bool)
    colors = coloring.star_coloring(pattern)
    for i, j in zip(*np.nonzero(pattern)):  # proper colouring
        assert i == j or colors[i] != colors[j]
    # every path a-b-c-d on four vertices shows three colours or more
    neighbours = [set(np.flatnonzero(pattern[v])) - {v} for v in range(n)]
    for b in range(n):
        for c in neighbours[b]:
            for a in neighbours[b] - {c}:
                for d in neighbours[c] - {a, b}:
                    assert not (colors[a] == colors[c] and colors[b] == colors[d])
    assert _count(colors) <= _count(coloring.column_coloring(pattern))


def test_the_checks_reject_colourings_that_would_give_wrong_values():
    band = _band(6)
    assert not coloring.columns_are_independent(band, np.array([0, 1, 0, 1, 0, 1]))
    assert coloring.columns_are_independent(band, np.array([0, 1, 2, 0, 1, 2]))
    # a path 0-1-2-3 in two colours: entry (1, 2) is recovered from neither side
    path = np.eye(4, dtype=bool) | np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool)
    assert not coloring.is_symmetric_decompressible(path, np.array([0, 1, 0, 1]))
    assert coloring.is_symmetric_decompressible(path, np.array([0, 1, 2, 0]))


def test_the_symmetric_check_agrees_on_large_patterns():
    band = _band(2000)
    assert coloring.is_symmetric_decompressible(band, np.arange(2000) % 3)
    assert not coloring.is_symmetric_decompressible(band, np.arange(2000) % 2)


@pytest.mark.parametrize("order", sorted(coloring.ORDERS))
def test_every_vertex_order_gives_a_valid_colouring(order):
    pattern = _five_point(12)
    colors = coloring.column_coloring(pattern, orders=(order,))
    assert coloring.columns_are_independent(pattern, colors)
    assert coloring.is_symmetric_decompressible(pattern,
                                                coloring.star_coloring(pattern, orders=(order,)))


def _bidirectional_values(jacobian, pattern, rows, columns, from_rows):
    """The entries, CSR order, as the passes of a bicolouring give them: J @ seeds for
    the column colours, seeds.T @ J for the row colours."""
    m, n = jacobian.shape
    forward = np.zeros((n, columns.max(initial=-1) + 1))
    forward[np.flatnonzero(columns >= 0), columns[columns >= 0]] = 1
    reverse = np.zeros((rows.max(initial=-1) + 1, m))
    reverse[rows[rows >= 0], np.flatnonzero(rows >= 0)] = 1
    by_columns, by_rows = jacobian @ forward, reverse @ jacobian
    i, j = np.nonzero(pattern)  # row by row: CSR order
    return np.where(from_rows, by_rows[np.maximum(rows[i], 0), j] if by_rows.size else 0,
                    by_columns[i, np.maximum(columns[j], 0)] if by_columns.size else 0)


def test_a_bicolouring_of_an_arrow_takes_three_passes_where_one_side_takes_n():
    n = 30
    arrow = np.eye(n, dtype=bool)
    arrow[0] = arrow[:, 0] = True
    assert _count(coloring.column_coloring(arrow)) == _count(coloring.row_coloring(arrow)) == n
    rows, columns, from_rows = coloring.bicoloring(arrow)
    assert (rows.max() + 1, columns.max() + 1) == (1, 2)
    jacobian = np.random.default_rng(7).standard_normal((n, n)) * arrow
    np.testing.assert_array_equal(
        _bidirectional_values(jacobian, arrow, rows, columns, from_rows), jacobian[arrow])


@pytest.mark.parametrize("seed", range(8))
def test_bicolourings_of_random_patterns_recover_every_entry_in_no_more_passes(seed):
    rng = np.random.default_rng(300 + seed)
    m, n = (int(k) for k in rng.integers(5, 40, size=2))
    pattern = rng.random((m, n)) < 0.05 + 0.03 * seed
    pattern[rng.integers(m)] = True            # a dense row
    pattern[:, rng.integers(n)] = True         # and a dense column
    rows, columns, from_rows = coloring.bicoloring(pattern)
    passes = rows.max(initial=-1) + 1 + columns.max(initial=-1) + 1
    assert passes <= min(_count(coloring.column_coloring(pattern)),
                         _count(coloring.row_coloring(pattern)))
    jacobian = rng.standard_normal((m, n)) * pattern
    np.testing.assert_array_equal(
        _bidirectional_values(jacobian, pattern, rows, columns, from_rows), jacobian[pattern])


def test_a_bicolouring_of_a_large_arrow_never_colours_its_dense_row_forward(monkeypatch):
    """Colouring the columns of a dense row builds a graph of n^2 edges (20 GB at
    n = 50,000): the splits are tried from the lowest bound on their passes, and the
    one-sided ones, bounded by n, are skipped once 3 passes are found."""
    n = 50_000
    arrow = scipy_sparse.lil_array((n, n), dtype=bool)
    arrow.setdiag(True)
    arrow[0, :] = True
    arrow[:, 0] = True
    coloured = []
    column_coloring = coloring.column_coloring

    def refusing_dense_rows(pattern, orders=coloring.COLUMN_STRATEGIES):
        # (row colourings come here too, transposed) refused before the graph is built
        coloured.append(int(np.diff(scipy_sparse.csr_array(pattern).indptr).max()))
        assert coloured[-1] <= 2, "the dense row coloured forward"
        return column_coloring(pattern, orders)
    monkeypatch.setattr(coloring, "column_coloring", refusing_dense_rows)
    rows, columns, _ = coloring.bicoloring(arrow.tocsr())
    assert (rows.max() + 1, columns.max() + 1) == (1, 2)
    assert coloured


def test_a_full_row_gives_every_column_its_own_colour_without_the_graph(monkeypatch):
    n = 50_000
    arrow = scipy_sparse.lil_array((n, n), dtype=bool)
    arrow.setdiag(True)
    arrow[0, :] = True

    def refused(graph):  # the graph of n^2 edges: 20 GB here
        raise AssertionError("the column intersection graph was built")
    monkeypatch.setattr(coloring, "_adjacency", refused)
    assert (coloring.column_coloring(arrow.tocsr()) == np.arange(n)).all()
    assert (coloring.row_coloring(arrow.T.tocsr()) == np.arange(n)).all()


def test_the_bidirectional_check_rejects_an_entry_read_where_it_is_not_alone():
    arrow = np.eye(4, dtype=bool)
    arrow[0] = arrow[:, 0] = True
    rows, columns, from_rows = coloring.bicoloring(arrow)
    assert coloring.is_bidirectionally_decompressible(arrow, rows, columns, from_rows)
    # row 0 read from the forward passes: columns 1-3 share a colour there
    assert not coloring.is_bidirectionally_decompressible(arrow, rows, columns,
                                                          np.zeros_like(from_rows))
    # or its row in no reverse pass at all
    assert not coloring.is_bidirectionally_decompressible(arrow, np.full(4, -1), columns,
                                                          from_rows)


@pytest.mark.slow
def test_colouring_a_million_columns_takes_seconds():
    import time
    start = time.perf_counter()
    assert _count(coloring.column_coloring(_band(10 ** 6))) == 3
    assert time.perf_counter() - start < 30


def _random_graphs(rng):
    """Symmetric patterns, some with a diagonal, of every density from empty to dense
    (the dense ones need many colours: many saturation levels)."""
    yield scipy_sparse.csr_array((0, 0), dtype=bool)
    yield _five_point(9)
    for _ in range(60):
        n = int(rng.integers(1, 50))
        upper = np.triu(rng.random((n, n)) < rng.random() * 0.6, 1)
        graph = upper | upper.T
        if rng.random() < 0.5:
            graph |= np.eye(n, dtype=bool)
        yield scipy_sparse.csr_array(graph)


def test_the_bucketed_dsatur_colours_vertex_for_vertex_as_the_plain_rule():
    rng = np.random.default_rng(45)
    for graph in _random_graphs(rng):
        neighbours = coloring._adjacency(graph)
        plain = coloring._dsatur_plain(neighbours)
        assert plain.tolist() == coloring._dsatur(neighbours).tolist()


def test_the_independence_check_counts_or_sorts_with_one_answer():
    # colours spread over many numbers take the sorting path; few, the counting one
    band = _band(50)
    good, bad = np.arange(50) % 3, np.arange(50) % 2
    for spread in (1, 1000):
        assert coloring.columns_are_independent(band, good * spread)
        assert not coloring.columns_are_independent(band, bad * spread)


@pytest.mark.slow
def test_colouring_a_five_point_stencil_of_a_million_columns_takes_seconds():
    import time
    start = time.perf_counter()
    assert _count(coloring.column_coloring(_five_point(1000))) == 5
    assert time.perf_counter() - start < 60


@pytest.mark.parametrize("order", sorted(coloring.ORDERS))
def test_the_greedy_colouring_from_csr_arrays_colours_as_the_plain_rule(order):
    rng = np.random.default_rng(7)
    for graph in _random_graphs(rng):
        neighbours = coloring._adjacency(graph)
        vertices = coloring.ORDERS[order](neighbours)
        plain = coloring._greedy(neighbours, vertices)
        assert plain.tolist() == coloring._greedy_earlier(graph, vertices).tolist()
