"""Colour counts against the ones ColPack and SparseMatrixColorings.jl (SMC) publish, on
matrices rebuilt exactly here: the same colouring problem in the same vertex order gives
the same count (or the same colours), and the default (the fewest over several orders
and DSATUR) never more.

Sources (public repositories):

* ColPack, github.com/CSCsw/ColPack: ``Graphs/bcsstk01.mtx`` (the Harwell-Boeing
  stiffness matrix BCSSTK01 of the SuiteSparse collection) and ``README.md``'s example
  output for it: distance-1 6, star 12, acyclic 8, distance-2 15 colours. The README
  prints one count for every order; ColPack built from that repository (commit 9a7293a)
  and run once per order gives those counts for the natural order only, and for the
  others (distance-2 / column partial distance-2): largest first 17, smallest last 16,
  dynamic largest first 15, incidence degree 14; star: 12 in every order but incidence
  degree (13). Its example driver reuses the first order's colouring for the later
  ones, which is why the README repeats the natural counts.
* SMC, github.com/gdalle/SparseMatrixColorings.jl: ``test/theory.jl`` (star colouring of
  a symmetric band with rho off-diagonals takes 2 floor(rho/2) + 1 colours),
  ``src/examples.jl`` with ``test/small.jl`` (its greedy colourings in natural order
  reproduce the colours of Figure 4.1 of "What color is your Jacobian?" and Figure 1 of
  "Efficient computation of sparse Hessians using coloring and AD"; and two 3 x 3
  examples).
* ColPack's sample patterns ``Graphs/column-compress.mtx`` (a dense column and the
  diagonal), ``row-compress.mtx`` (a dense row and the diagonal), ``mtx-spear-head.mtx``
  (both: an arrow) and ``jac_pat.mtx`` (10 x 43), with no counts published beside them:
  ColPack built as above gives, in natural, largest-first and smallest-last order alike,
  2 / 10, 10 / 2, 10 / 10 and 11 / 6 colours for the columns / the rows, and its star
  bicolouring (implicit covering) 2, 2, 3 and 6 passes in its best orders (its count
  adds one, a neutral colour; the seed matrices it returns have these many rows and
  columns).
* asdex (the JAX port of the same pipeline), adrianhill.de/asdex/how-to/brusselator: the
  2-D Brusselator at N = 32, 2048 x 2048 with 12,288 non-zeros, "12 colors".

Acyclic colourings (values by substitution, ``coloring="acyclic"``): ColPack run as above
on BCSSTK01 takes 8 colours in natural order (the README's 8), 7 in largest-first,
smallest-last, dynamic largest-first and incidence-degree order; on the random
symmetric patterns below the counts of ``COLPACK_ACYCLIC_ON_RANDOM_PATTERNS``. SMC's
``test/theory.jl``: a band with rho off-diagonals takes floor(rho/2) + 1 acyclic
colours; its ``src/examples.jl`` holds the acyclic colouring of Figure 4 of "Efficient
computation of sparse Hessians" (``test/small.jl`` recovers a Hessian from it).

Not compared: the distance-2 counts of the ColPack paper's Tables VI-VII (lp_cre_a,
cage11, ...) need matrices of 10^4-10^6 entries that are not in this repository.
"""

import numpy as np
import pytest

import chainrule as cr

scipy_sparse = pytest.importorskip("scipy.sparse")

from chainrule.sparse import acyclic, coloring  # noqa: E402

# BCSSTK01's lower triangle, as ColPack's Graphs/bcsstk01.mtx stores it (1-based):
# "column: its rows", the diagonal first.
BCSSTK01_LOWER = """
1: 1 5 6 7 11 19 25 30
2: 2 4 6 8 10 20 24 26
3: 3 4 5 9 21 23 27 28
4: 4 8 10 22 27 28
5: 5 7 11 21 23 29
6: 6 12 20 24 25 30
7: 7 11 12 13 31 36
8: 8 10 12 14 18 32
9: 9 10 11 15 17 33 34
10: 10 16 33 34
11: 11 15 17 35
12: 12 14 18 31 36
13: 13 17 18 19 23 37 42 43 47 48
14: 14 15 16 18 20 22 38 44 45 46
15: 15 16 17 21 39 40 44 45 46
16: 16 20 22 39 40 44 45 46
17: 17 18 19 23 41 43 47 48
18: 18 24 37 42 43 47 48
19: 19 23 24 43 48
20: 20 22 24 44
21: 21 22 23 45 46
22: 22 45 46
23: 23 47
24: 24 43 48
25: 25 29 30 31 35
26: 26 28 32 34
27: 27 28 33
28: 28 32 34
29: 29 31 35
30: 30 36
31: 31 35 36 37
32: 32 34 36 38 42
33: 33 34 35 39 41
34: 34 40
35: 35 39 41
36: 36 38 42
37: 37 41 42 43 47
38: 38 40 42 44 46
39: 39 40 41 45
40: 40 44 46
41: 41 43 47
42: 42 48
43: 43 47 48
44: 44 45 46
45: 45 46
46: 46
47: 47 48
48: 48
"""


def bcsstk01():
    """The full symmetric pattern: the stored lower triangle and its mirror."""
    rows, cols = [], []
    for line in BCSSTK01_LOWER.strip().splitlines():
        column, entries = line.split(":")
        for row in entries.split():
            rows.append(int(row) - 1)
            cols.append(int(column) - 1)
    lower = scipy_sparse.csr_array((np.ones(len(rows), dtype=bool), (rows, cols)),
                                   shape=(48, 48))
    return scipy_sparse.csr_array(lower + lower.T, dtype=bool)


def _count(colors):
    return int(colors.max()) + 1


def test_the_transcribed_bcsstk01_has_its_published_shape():
    """SuiteSparse lists BCSSTK01 as 48 x 48 with 400 entries; ColPack's file stores the
    224 of the lower triangle."""
    pattern = bcsstk01()
    assert pattern.shape == (48, 48) and pattern.nnz == 400
    assert scipy_sparse.tril(pattern).nnz == 224
    assert pattern.diagonal().all()


@pytest.mark.parametrize("order, colours, colpacks", [
    ("natural", 15, 15),        # ColPack's README and ColPack run: the same
    ("largest_first", 17, 17),  # ColPack run: the same
    ("smallest_last", 15, 16),  # ties among least degrees broken otherwise
])
def test_bcsstk01_column_and_row_colourings_in_one_order_match_colpack(order, colours,
                                                                        colpacks):
    """Column partial distance-2 colouring (one forward pass per colour) in one vertex
    order: ColPack's count, or one fewer in smallest-last order, where the two break ties
    among vertices of least degree otherwise (this takes the lowest-numbered; ColPack
    the last of its degree bucket, whose order its moves shuffle). The colouring step is
    the same: ColPack's smallest-last order, printed by ColPack and coloured here, takes
    its 16. The pattern is symmetric, so the rows take as many colours."""
    pattern = bcsstk01()
    assert _count(coloring.column_coloring(pattern, orders=(order,))) == colours
    assert _count(coloring.row_coloring(pattern, orders=(order,))) == colours
    assert colours <= colpacks


def test_bcsstk01_default_column_colouring_matches_colpacks_best_order():
    """The default keeps the fewest over the orders and DSATUR: 14, as ColPack's best
    (incidence degree; 12 entries in a row make 12 the lower bound)."""
    pattern = bcsstk01()
    assert _count(coloring.column_coloring(pattern, orders=("dsatur",))) == 14
    assert _count(coloring.column_coloring(pattern)) == 14


@pytest.mark.parametrize("order", sorted(coloring.ORDERS))
def test_bcsstk01_star_colouring_takes_colpacks_twelve_colours(order):
    """ColPack's README: star colouring, 12 colours (every order ColPack was run in but
    incidence degree, which took 13); two fewer than the 14 of a column colouring."""
    assert _count(coloring.star_coloring(bcsstk01(), orders=(order,))) == 12


def _symmetric_band(n, off_diagonals):
    half = off_diagonals // 2
    return scipy_sparse.diags_array([np.ones(n - abs(k)) for k in range(-half, half + 1)],
                                    offsets=list(range(-half, half + 1)), format="csr",
                                    dtype=bool)


@pytest.mark.parametrize("off_diagonals, colours", [(10, 11), (20, 21)])
def test_a_symmetric_band_takes_smcs_star_colour_count(off_diagonals, colours):
    """SMC's test/theory.jl: a band with rho off-diagonals takes 2 floor(rho/2) + 1 star
    colours (at n = 5,000 as there; a column colouring takes as many, rho + 1)."""
    band = _symmetric_band(5000, off_diagonals)
    assert _count(coloring.star_coloring(band, orders=("natural",))) == colours
    assert _count(coloring.column_coloring(band)) == colours


# SMC's src/examples.jl: a symmetric pattern from each paper and the colours of its figure,
# which SMC's greedy star colouring in natural order reproduces (test/small.jl).
WHAT_FIGURE_4_1 = ([[1, 1, 0, 0, 0, 0],
                    [1, 1, 1, 0, 1, 1],
                    [0, 1, 1, 1, 0, 0],
                    [0, 0, 1, 1, 0, 1],
                    [0, 1, 0, 0, 1, 0],
                    [0, 1, 0, 1, 0, 1]],
                   [1, 2, 1, 3, 1, 1])
EFFICIENT_FIGURE_1 = ([[1, 1, 0, 0, 0, 0, 1, 0, 0, 0],
                       [1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
                       [0, 1, 1, 1, 0, 1, 0, 0, 0, 0],
                       [0, 0, 1, 1, 0, 0, 0, 0, 0, 1],
                       [0, 1, 0, 0, 1, 1, 0, 1, 0, 0],
                       [0, 0, 1, 0, 1, 1, 0, 0, 1, 0],
                       [1, 0, 0, 0, 0, 0, 1, 1, 0, 0],
                       [0, 0, 0, 0, 1, 0, 1, 1, 1, 0],
                       [0, 0, 0, 0, 0, 1, 0, 1, 1, 1],
                       [0, 0, 0, 1, 0, 0, 0, 0, 1, 1]],
                      [1, 2, 1, 3, 1, 4, 3, 5, 1, 2])


@pytest.mark.parametrize("example, fewest", [(WHAT_FIGURE_4_1, 3), (EFFICIENT_FIGURE_1, 4)],
                         ids=["what-color-figure-4.1", "efficient-hessians-figure-1"])
def test_star_colourings_in_natural_order_are_the_papers_and_smcs(example, fewest):
    """In natural order the star colouring is the figure's, colour for colour (SMC counts
    from 1); over all orders the fewest: on the second figure largest-first order finds
    4 colours where the figure (and SMC's natural order) shows 5."""
    pattern, colours = np.array(example[0], dtype=bool), example[1]
    assert (pattern == pattern.T).all()
    assert (coloring.star_coloring(pattern, orders=("natural",)) + 1).tolist() == colours
    found = coloring.star_coloring(pattern)
    assert _count(found) == fewest
    assert coloring.is_symmetric_decompressible(pattern, found)


def test_smcs_small_column_and_row_colourings():
    """SMC's test/small.jl: the columns of [[1, 0, 2], [0, 3, 4], [5, 0, 0]] take colours
    [1, 1, 2], and the rows of [[1, 0, 3], [0, 2, 0], [4, 5, 0]] colours [1, 1, 2]."""
    columns = np.array([[1, 0, 2], [0, 3, 4], [5, 0, 0]]) != 0
    rows = np.array([[1, 0, 3], [0, 2, 0], [4, 5, 0]]) != 0
    assert (coloring.column_coloring(columns) + 1).tolist() == [1, 1, 2]
    assert (coloring.row_coloring(rows) + 1).tolist() == [1, 1, 2]


def _colpack_sample(name):
    n = 10
    if name == "jac_pat":  # five rows, each twice (1-based columns)
        rows = ["1 2 5 15 16 19", "1 2 3 4 5 15 16 17 18 19 30", "2 3 4 16 17 18 31",
                "5 6 11 12 13 19 20 25 26 27 34", "7 8 21 22"] * 2
        pattern = np.zeros((10, 43), dtype=bool)
        for i, columns in enumerate(rows):
            pattern[i, [int(j) - 1 for j in columns.split()]] = True
        return pattern
    pattern = np.eye(n, dtype=bool)
    if name in ("column-compress", "mtx-spear-head"):
        pattern[:, 0] = True
    if name in ("row-compress", "mtx-spear-head"):
        pattern[0] = True
    return pattern


@pytest.mark.parametrize("name, columns, rows, both_ways", [
    ("column-compress", 2, 10, 2), ("row-compress", 10, 2, 2),
    ("mtx-spear-head", 10, 10, 3), ("jac_pat", 11, 6, 6)])
def test_colpacks_sample_patterns_take_colpacks_counts(name, columns, rows, both_ways):
    """Columns and rows in every order, and both ways: ColPack's counts (run)."""
    pattern = _colpack_sample(name)
    for order in coloring.COLUMN_STRATEGIES:
        assert _count(coloring.column_coloring(pattern, orders=(order,))) == columns
        assert _count(coloring.row_coloring(pattern, orders=(order,))) == rows
    by_rows, by_columns, _ = coloring.bicoloring(pattern)
    assert by_rows.max() + 1 + by_columns.max() + 1 == both_ways


# ColPack's counts (built as above, one run per order) on the random patterns below:
# (natural, largest first, smallest last) for the columns, the rows (column / row partial
# distance-2) and a star colouring of the symmetric pattern.
COLPACK_ON_RANDOM_PATTERNS = {
    0: ((13, 13, 12), (17, 15, 15), (16, 16, 15)),
    1: ((15, 12, 13), (15, 13, 13), (15, 14, 13)),
    2: ((14, 13, 13), (15, 13, 13), (15, 14, 14)),
    3: ((16, 13, 14), (15, 14, 14), (16, 16, 15)),
    4: ((14, 12, 12), (15, 14, 14), (14, 15, 14)),
    5: ((16, 14, 13), (17, 13, 14), (17, 16, 14)),
}


@pytest.mark.parametrize("seed", sorted(COLPACK_ON_RANDOM_PATTERNS))
def test_random_patterns_take_colpacks_counts_in_natural_and_largest_first_order(seed):
    """A 200 x 150 pattern of density 0.03 and a symmetric 120 x 120 one (density 0.03,
    mirrored, with its diagonal), drawn from NumPy's generator (written to Matrix Market
    files for ColPack). In natural and largest-first order every count is ColPack's:
    the same greedy colourings in the same orders. In smallest-last order, where ties
    among least degrees are broken otherwise, never more than ColPack's (13 of the 18
    equal, the others one or two fewer)."""
    rng = np.random.default_rng(seed)
    jacobian = scipy_sparse.csr_array(rng.random((200, 150)) < 0.03)
    upper = scipy_sparse.csr_array(rng.random((120, 120)) < 0.03)
    hessian = scipy_sparse.csr_array(upper + upper.T + scipy_sparse.identity(120, dtype=bool),
                                     dtype=bool)
    colourings = [lambda order: coloring.column_coloring(jacobian, orders=(order,)),
                  lambda order: coloring.row_coloring(jacobian, orders=(order,)),
                  lambda order: coloring.star_coloring(hessian, orders=(order,))]
    for colour, colpacks in zip(colourings, COLPACK_ON_RANDOM_PATTERNS[seed]):
        natural, largest_first, smallest_last = colpacks
        assert _count(colour("natural")) == natural
        assert _count(colour("largest_first")) == largest_first
        assert _count(colour("smallest_last")) <= smallest_last


def brusselator(uv, side=32, alpha=10.0):
    """asdex's 2-D Brusselator: u and v on a periodic side x side grid, concatenated."""
    u, v = uv[:side * side].reshape(side, side), uv[side * side:].reshape(side, side)

    def laplacian(w):
        return (cr.roll(w, 1, axis=0) + cr.roll(w, -1, axis=0) + cr.roll(w, 1, axis=1)
                + cr.roll(w, -1, axis=1) - 4 * w) * side ** 2
    du = 1.0 + u ** 2 * v - 4.4 * u + alpha * laplacian(u)
    dv = 3.4 * u - u ** 2 * v + alpha * laplacian(v)
    return cr.concatenate([du.reshape(-1), dv.reshape(-1)])


def test_the_brusselator_takes_asdexs_twelve_colours_in_natural_order_and_ten_at_best():
    """asdex publishes 12 colours for this Jacobian (2048 x 2048, 12,288 non-zeros); the
    greedy colouring in natural order takes 12 too, as ColPack does on this pattern in
    natural, largest-first, smallest-last and dynamic largest-first order (11 in
    incidence-degree order); DSATUR 10. The lower bound is 6, the entries of a row."""
    uv = np.random.default_rng(0).random(2 * 32 * 32)
    pattern = cr.jacobian_sparsity(brusselator)(uv)
    assert pattern.shape == (2048, 2048) and pattern.nnz == 12288
    assert _count(coloring.column_coloring(pattern, orders=("natural",))) == 12
    assert _count(coloring.column_coloring(pattern)) == 10


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="orders must be among"):
        coloring.column_coloring(np.eye(3), orders=("random",))
    with pytest.raises(ValueError, match="orders must be among"):
        coloring.star_coloring(np.eye(3), orders=("dsatur",))  # no star DSATUR here


# ---------------------------------------------------------------------------------------
# Acyclic colourings (tests/test_sparse_acyclic.py has the recovery)
# ---------------------------------------------------------------------------------------

# ColPack's smallest-last order of BCSSTK01's vertices (0-based), as its
# GraphColoringInterface prints it after an acyclic colouring (GetOrderedVertices).
COLPACK_SMALLEST_LAST_BCSSTK01 = [
    13, 15, 43, 44, 45, 14, 16, 17, 12, 42, 46, 47, 18, 23, 19, 21, 20, 22, 4, 10, 0, 6,
    11, 5, 1, 7, 3, 2, 8, 9, 36, 41, 37, 39, 38, 40, 32, 34, 30, 35, 31, 33, 27, 25, 26,
    24, 28, 29]


@pytest.mark.parametrize("order, colours, colpacks", [
    ("natural", 8, 8),          # ColPack's README and ColPack run: the same
    ("largest_first", 7, 7),    # ColPack run: the same
    ("smallest_last", 6, 7),    # ties among least degrees broken otherwise
])
def test_bcsstk01_acyclic_colourings_match_colpack(order, colours, colpacks):
    """Acyclic colouring in one vertex order: ColPack's count in natural and
    largest-first order, one fewer in smallest-last order, whose ties this breaks
    otherwise; four fewer than the star colouring's 12 (ColPack: 8 and 12 in natural
    order). Each colouring passes the check."""
    pattern = bcsstk01()
    found = acyclic.acyclic_coloring(pattern, orders=(order,))
    assert _count(found) == colours and colours <= colpacks
    assert acyclic.is_acyclic_coloring(pattern, found)
    assert _count(acyclic.acyclic_coloring(pattern)) == 6  # the fewest over the orders


def test_bcsstk01_in_colpacks_smallest_last_order_takes_colpacks_seven():
    """The colouring step is the same as ColPack's: in the order ColPack's smallest-last
    ordering gives, the greedy acyclic colouring here takes its 7 colours."""
    pattern = bcsstk01()
    assert sorted(COLPACK_SMALLEST_LAST_BCSSTK01) == list(range(48))
    neighbours = coloring._adjacency(acyclic._without_diagonal(pattern))
    found = acyclic._greedy_acyclic(neighbours, COLPACK_SMALLEST_LAST_BCSSTK01)
    assert _count(found) == 7 and acyclic.is_acyclic_coloring(pattern, found)


# ColPack's acyclic colour counts (built as above, one run per order: natural, largest
# first, smallest last) on the symmetric random patterns of
# test_random_patterns_take_colpacks_counts_in_natural_and_largest_first_order.
COLPACK_ACYCLIC_ON_RANDOM_PATTERNS = {
    0: (7, 8, 8), 1: (7, 7, 7), 2: (7, 7, 7), 3: (8, 9, 8), 4: (7, 7, 6), 5: (8, 8, 7)}


@pytest.mark.parametrize("seed", sorted(COLPACK_ACYCLIC_ON_RANDOM_PATTERNS))
def test_random_patterns_take_colpacks_acyclic_counts(seed):
    """The same symmetric 120 x 120 patterns (the same draws): ColPack's count in
    natural and largest-first order; in smallest-last order within one of it either
    way (here 8, 7, 7, 7, 7, 8: one fewer on one, one more on two), as ties among
    least degrees are broken otherwise."""
    rng = np.random.default_rng(seed)
    rng.random((200, 150))  # the Jacobian's pattern, drawn first there
    upper = scipy_sparse.csr_array(rng.random((120, 120)) < 0.03)
    hessian = scipy_sparse.csr_array(upper + upper.T + scipy_sparse.identity(120, dtype=bool),
                                     dtype=bool)
    natural, largest_first, smallest_last = COLPACK_ACYCLIC_ON_RANDOM_PATTERNS[seed]
    assert _count(acyclic.acyclic_coloring(hessian, orders=("natural",))) == natural
    assert _count(acyclic.acyclic_coloring(hessian, orders=("largest_first",))) == \
        largest_first
    assert abs(_count(acyclic.acyclic_coloring(hessian, orders=("smallest_last",)))
               - smallest_last) <= 1


@pytest.mark.parametrize("off_diagonals, colours", [(10, 6), (20, 11)])
def test_a_symmetric_band_takes_smcs_acyclic_colour_count(off_diagonals, colours):
    """SMC's test/theory.jl: floor(rho/2) + 1 acyclic colours for a band with rho
    off-diagonals (at n = 5,000), about half the star colouring's 2 floor(rho/2) + 1."""
    band = _symmetric_band(5000, off_diagonals)
    found = acyclic.acyclic_coloring(band, orders=("natural",))
    assert _count(found) == colours and acyclic.is_acyclic_coloring(band, found)


EFFICIENT_FIGURE_4 = [1, 2, 1, 2, 1, 3, 2, 3, 2, 1]  # SMC's efficient_fig_4, from 1


def test_the_acyclic_colouring_in_natural_order_is_the_papers_figure_4():
    """SMC's src/examples.jl: Figure 4 of "Efficient computation of sparse Hessians"
    colours the graph of its Figure 1 acyclically with 3 colours (the star colouring of
    Figure 1 takes 5); in natural order the colouring here is that one."""
    pattern = np.array(EFFICIENT_FIGURE_1[0], dtype=bool)
    found = acyclic.acyclic_coloring(pattern, orders=("natural",))
    assert (found + 1).tolist() == EFFICIENT_FIGURE_4
    assert acyclic.is_acyclic_coloring(pattern, found)
