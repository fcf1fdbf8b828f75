"""Colourings: which columns (or rows) of a sparse matrix one compressed pass can share.

Columns that never share a row can be summed into one seed: J @ (e_i + e_j) holds each
of their entries alone in its row. So a *column colouring* (forward mode, one jvp per
colour) is a colouring of the column intersection graph (columns adjacent when they
share a row: ``P.T @ P``), and a *row colouring* (reverse mode, one vjp per colour) the
same for ``P @ P.T``. For a symmetric Hessian a *star colouring* of its adjacency graph
is enough (Coleman and More, 1984): a proper colouring in which every path on four
vertices has three colours; then each entry (i, j) is alone in its row i among the
columns of j's colour, or (i, j)'s mirror (j, i) is, and symmetry gives the other.

Greedy colouring in several vertex orders (natural, largest degree first, smallest
degree last) and, for column and row colourings, Brelaz's DSATUR ("dsatur"), keeping the
fewest colours, and stopping early where a colouring reaches a lower bound (the most
entries in one row): natural order gives the optimal 3 on a band of width 3, DSATUR the
optimal 5 on the five-point stencil. One order alone (``orders=("natural",)``) gives the
greedy colouring of that order, as ColPack and SparseMatrixColorings.jl compute it
(tests/test_sparse_published_counts.py compares the counts). Every colouring is checked
before use (``columns_are_independent``, ``is_symmetric_decompressible``); a check that
fails would be a bug, and raises instead of giving wrong values.

Each strategy is one sweep over the graph's edges, in a plain Python loop: the greedy
colouring reads the earlier neighbours of each vertex from CSR arrays, DSATUR keeps its
candidates in buckets of small heaps, and a vertex's neighbouring colours are the bits
of one integer; so the time grows about as the edges do (a five-point stencil of 10^6
columns, 13 million edges in its column graph, is coloured in seconds). The plain forms (``_greedy``, ``_dsatur_plain``) stay beside the
fast ones, tested to give the same colours.

A *bicolouring* (``bicoloring``) takes forward passes for some entries and reverse passes
for the others: it splits the entries by rows (the densest rows read from reverse
passes) or by columns, and colours each side for its part alone, so that the rows read
from reverse passes do not constrain the columns' colours, nor those columns the rows'.
Those are among the star bicolourings of Coleman and Verma (1998), which may divide the
entries between the sides more finely; on a dense row, a dense column and a diagonal it
finds 3 passes, the fewest possible.
"""

import contextlib
import gc
import heapq

import numpy as np

from .scipy_door import sparse_module

__all__ = ["column_coloring", "row_coloring", "star_coloring", "bicoloring",
           "columns_are_independent", "is_symmetric_decompressible",
           "is_bidirectionally_decompressible", "ORDERS", "COLUMN_STRATEGIES"]


def _boolean(pattern):
    sparse = sparse_module()
    matrix = sparse.csr_array(pattern, dtype=bool)
    matrix.sum_duplicates()
    return matrix


def _adjacency(graph):
    """A symmetric boolean matrix as neighbour lists. A vertex may be its own neighbour
    (the diagonal): every algorithm here meets itself uncoloured, which blocks nothing."""
    graph = sparse_module().csr_array(graph, dtype=bool)
    indptr, indices = graph.indptr.tolist(), graph.indices.tolist()
    return [indices[indptr[v]:indptr[v + 1]] for v in range(graph.shape[0])]


@contextlib.contextmanager
def _collector_paused():
    """Python's cycle collector paused: the colourings make a million small lists and
    sets (no cycles among them), and its passes over them cost more than the work."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


# ---------------------------------------------------------------------------------------
# Vertex orders
# ---------------------------------------------------------------------------------------

def _natural(neighbours):
    return range(len(neighbours))


def _largest_first(neighbours):
    degrees = np.array([len(a) for a in neighbours])
    return np.argsort(-degrees, kind="stable").tolist()


def _smallest_last(neighbours):
    """Remove a vertex of least remaining degree, again and again; colour in the
    reverse order of removal (Matula and Beck)."""
    degree = [len(a) for a in neighbours]
    heap = [(d, v) for v, d in enumerate(degree)]
    heapq.heapify(heap)
    removed = [False] * len(neighbours)
    order = []
    while heap:
        d, v = heapq.heappop(heap)
        if removed[v] or d != degree[v]:
            continue  # a stale entry: the vertex's degree dropped since
        removed[v] = True
        order.append(v)
        for w in neighbours[v]:
            if not removed[w]:
                degree[w] -= 1
                heapq.heappush(heap, (degree[w], w))
    return order[::-1]


ORDERS = {"natural": _natural, "largest_first": _largest_first,
          "smallest_last": _smallest_last}


# ---------------------------------------------------------------------------------------
# Greedy colourings
# ---------------------------------------------------------------------------------------

def _greedy(neighbours, order):
    """Each vertex in turn gets the least colour none of its neighbours has."""
    colors = [-1] * len(neighbours)
    for v in order:
        taken = {colors[w] for w in neighbours[v]}
        c = 0
        while c in taken:
            c += 1
        colors[v] = c
    return np.array(colors, dtype=np.int64)


def _greedy_earlier(graph, order):
    """``_greedy``'s colours, vertex for vertex, from the CSR arrays of the symmetric
    ``graph``: the neighbours that come earlier in the order picked out at once by
    NumPy (the later ones are uncoloured when a vertex's turn comes, so they never block
    a colour), and the colours around a vertex gathered as one integer's bits. Half the
    time of building neighbour lists and colouring from them, at n = 10^6."""
    graph = sparse_module().csr_array(graph, dtype=bool)
    n = graph.shape[0]
    order = np.asarray(order, dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    rows = np.repeat(np.arange(n), np.diff(graph.indptr))
    earlier = rank[graph.indices] < rank[rows]
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[earlier], minlength=n), out=starts[1:])
    starts, before = starts.tolist(), graph.indices[earlier].tolist()
    colors = [0] * n
    colour_of = colors.__getitem__
    for v in order.tolist():
        mask = 0
        for c in map(colour_of, before[starts[v]:starts[v + 1]]):
            mask |= 1 << c
        colors[v] = (~mask & (mask + 1)).bit_length() - 1  # the lowest colour not there
    return np.array(colors, dtype=np.int64)


def _greedy_star(neighbours, order):
    """Each vertex in turn gets the least colour that keeps the colouring proper and
    leaves no path on four vertices with two colours: with v at an end (v-w-x-y, x of
    v's colour, y of w's) or inside (u-v-w-x, x of v's colour, u of w's)."""
    colors = [-1] * len(neighbours)
    for v in order:
        taken = set()
        around = {}
        for w in neighbours[v]:
            cw = colors[w]
            if cw >= 0:
                taken.add(cw)
                around[cw] = around.get(cw, 0) + 1
        for w in neighbours[v]:
            cw = colors[w]
            if cw < 0:
                continue
            twice = around[cw] > 1  # another neighbour u of v has w's colour
            for x in neighbours[w]:
                cx = colors[x]
                if x == v or cx < 0 or cx in taken:
                    continue
                if twice or any(colors[y] == cw for y in neighbours[x] if y != w):
                    taken.add(cx)
        c = 0
        while c in taken:
            c += 1
        colors[v] = c
    return np.array(colors, dtype=np.int64)


def _dsatur_plain(neighbours):
    """Brelaz's DSATUR: next, the uncoloured vertex whose neighbours show the most
    distinct colours (then the one of highest degree, then the lowest number), given the
    least colour free. Optimal (5) on the five-point stencil, where every static order
    here gives 6-7. The rule as written; ``_dsatur`` computes the same colours faster."""
    colors = [-1] * len(neighbours)
    seen = [set() for _ in neighbours]
    heap = [(0, -len(a), v) for v, a in enumerate(neighbours)]
    heapq.heapify(heap)
    while heap:
        saturation, _, v = heapq.heappop(heap)
        if colors[v] >= 0 or -saturation != len(seen[v]):
            continue  # coloured already, or a stale entry
        c = 0
        while c in seen[v]:
            c += 1
        colors[v] = c
        for w in neighbours[v]:
            if colors[w] < 0 and c not in seen[w]:
                seen[w].add(c)
                heapq.heappush(heap, (-len(seen[w]), -len(neighbours[w]), w))
    return np.array(colors, dtype=np.int64)


def _dsatur(neighbours):
    """``_dsatur_plain``'s colours, vertex for vertex, several times faster on large
    graphs, where its one heap of tuples over every vertex compares tuples at each
    step. Here the uncoloured vertices sit in buckets, one per (saturation, degree),
    each a heap of plain vertex numbers (the lowest first, as the tuples order them);
    the fullest bucket is found by walking down from the highest one filled. The
    colours around a vertex are one integer's bits; a coloured vertex's is -1 (every
    bit set), so one test per neighbour skips both it and a colour it has seen."""
    n = len(neighbours)
    degree = [len(a) for a in neighbours]
    levels = sorted(set(degree))
    width = len(levels)  # bucket saturation * width + (rank of the degree)
    rank = dict(zip(levels, range(width)))
    where = [rank[d] for d in degree]
    buckets = [[] for _ in range(width)]
    for v in range(n):  # in increasing order: each bucket a heap already
        buckets[where[v]].append(v)
    filled, top = width, width - 1
    colors = [-1] * n
    seen = [0] * n
    pop, push = heapq.heappop, heapq.heappush
    left = n
    while left:
        bucket = buckets[top]
        while not bucket:
            top -= 1
            bucket = buckets[top]
        v = pop(bucket)
        mask = seen[v]
        if mask < 0 or where[v] != top:
            continue  # coloured already, or a stale entry
        left -= 1
        c = (~mask & (mask + 1)).bit_length() - 1  # the lowest colour not around v
        colors[v], seen[v] = c, -1
        bit = 1 << c
        for w in neighbours[v]:
            if not seen[w] & bit:
                seen[w] |= bit
                b = where[w] = where[w] + width
                if b >= filled:  # the first vertex of a new saturation
                    buckets.extend([] for _ in range(width))
                    filled += width
                push(buckets[b], w)
                if b > top:
                    top = b
    return np.array(colors, dtype=np.int64)


# The column (and row) colourings try these in turn: the vertex orders and DSATUR, which
# is not a fixed order (it picks the next vertex by the colours already around it).
COLUMN_STRATEGIES = ("natural", "dsatur", "largest_first", "smallest_last")

# Past this many vertices only the natural order and DSATUR are tried: each further
# order costs seconds there, and on the problems measured (tridiagonal, five-point
# stencils, the Brusselator) none of them saved a colour over DSATUR.
MANY_VERTICES = 20_000


def _known(strategies, colour, what):
    strategies = tuple(strategies)
    known = set(ORDERS) | ({"dsatur"} if colour is _greedy else set())
    unknown = [name for name in strategies if name not in known]
    if unknown or not strategies:
        raise ValueError(f"{what}: orders must be among {', '.join(sorted(known))}, got "
                         f"{strategies!r}")
    return strategies


def _fewest(graph, colour, strategies, bound, what):
    """The colouring with the fewest colours among the strategies tried, in turn,
    stopping at one that reaches ``bound`` (a lower bound: it is optimal). ``graph`` is
    the symmetric boolean matrix; its neighbour lists are made only if a strategy reads
    them (a plain greedy colouring in natural order does not)."""
    strategies = _known(strategies, colour, what)
    n = graph.shape[0]
    if n > MANY_VERTICES:
        strategies = tuple(name for name in strategies if name in ("natural", "dsatur")) \
            or strategies[:1]
    made = []

    def neighbours():
        if not made:
            made.append(_adjacency(graph))
        return made[0]
    best = None
    for name in strategies:
        if name == "dsatur":
            colors = _dsatur(neighbours())
        elif colour is _greedy:
            colors = _greedy_earlier(graph, range(n) if name == "natural" else
                                     ORDERS[name](neighbours()))
        else:
            colors = colour(neighbours(), ORDERS[name](neighbours()))
        if best is None or colors.max(initial=-1) < best.max(initial=-1):
            best = colors
        if best.max(initial=-1) + 1 <= bound:
            break
    return best


def column_coloring(pattern, orders=COLUMN_STRATEGIES):
    """A colour per column such that two columns of one colour share no row: one
    forward pass per colour. An array of ``pattern.shape[1]`` colours 0, 1, ...
    ``orders`` names the greedy colourings tried (``COLUMN_STRATEGIES``); the one with
    the fewest colours is kept.

    >>> import numpy as np
    >>> band = np.eye(6) + np.eye(6, k=1) + np.eye(6, k=-1)   # tridiagonal
    >>> column_coloring(band).tolist()
    [0, 1, 2, 0, 1, 2]
    """
    matrix = _boolean(pattern)
    most_in_a_row = int(np.diff(matrix.indptr).max(initial=0))  # each needs its colour
    if most_in_a_row == matrix.shape[1] > 0:
        # a full row: every column its own colour, without the graph of n^2 edges that
        # says so
        _known(orders, _greedy, "column_coloring")
        colors = np.arange(matrix.shape[1], dtype=np.int64)
    else:
        with _collector_paused():
            colors = _fewest(matrix.T @ matrix, _greedy, orders,
                             most_in_a_row, "column_coloring")
    if not columns_are_independent(matrix, colors):
        raise AssertionError("column_coloring: two columns of one colour share a row")
    return colors


def row_coloring(pattern, orders=COLUMN_STRATEGIES):
    """A colour per row such that two rows of one colour share no column: one reverse
    pass per colour.

    >>> import numpy as np
    >>> row_coloring(np.array([[1, 1, 0], [0, 1, 1], [0, 0, 1]])).tolist()
    [0, 1, 0]
    """
    return column_coloring(_boolean(pattern).T, orders)


def star_coloring(pattern, orders=tuple(ORDERS)):
    """A star colouring of a symmetric pattern: one Hessian-vector product per colour,
    each entry recovered from its row or from its mirror's.

    >>> import numpy as np
    >>> arrow = np.eye(5) + np.eye(5)[0] + np.eye(5)[:, [0]]   # an arrowhead
    >>> star_coloring(arrow).tolist()                          # column colouring: 5
    [0, 1, 1, 1, 1]
    """
    matrix = _boolean(pattern)
    matrix = _boolean(matrix + matrix.T)
    with _collector_paused():
        colors = _fewest(matrix, _greedy_star, orders,
                         2 if matrix.nnz > matrix.diagonal().sum() else 1, "star_coloring")
    if not is_symmetric_decompressible(matrix, colors):
        raise AssertionError("star_coloring: an entry is recovered neither from its row "
                             "nor from its mirror's")
    return colors


def _used(colors, used):
    """The colours of the vertices ``used``, numbered 0, 1, ... again; -1 for the others
    (a row or column no pass needs)."""
    colors = np.where(used, colors, -1)
    if used.any():
        colors[used] = np.unique(colors[used], return_inverse=True)[1]
    return colors


def _passes(colors):
    return int(colors.max(initial=-1)) + 1


def _most(keys, size):
    return int(np.bincount(keys, minlength=size).max(initial=0)) if keys.size else 0


def bicoloring(pattern, orders=COLUMN_STRATEGIES, levels=6):
    """Colours for a Jacobian computed both ways: forward passes (one per column colour)
    for some entries, reverse passes (one per row colour) for the others, fewer passes
    in all than either way alone where the pattern has dense rows and dense columns.

    The entries are split by rows (the rows with the most entries read from reverse
    passes, the rest from forward passes) or by columns (the columns with the most
    entries read from forward passes, the rest from reverse passes), at each of the
    ``levels`` largest entry counts, and each side coloured for its entries alone; the
    split with the fewest passes is kept (one side alone among them, preferred on a
    tie). Returns ``(row_colors, column_colors, from_rows)``: colour -1 for a row
    (column) in no pass, and for each stored entry in CSR order whether a reverse pass
    gives it.

    >>> import numpy as np
    >>> arrow = np.eye(6) + np.eye(6)[0] + np.eye(6)[:, [0]]  # one side alone: 6 passes
    >>> rows, columns, from_rows = bicoloring(arrow)
    >>> rows.tolist(), columns.tolist()                       # 1 reverse, 2 forward
    ([0, -1, -1, -1, -1, -1], [0, 1, 1, 1, 1, 1])
    """
    matrix = _boolean(pattern)
    matrix.sort_indices()
    (m, n), sparse = matrix.shape, sparse_module()
    entry_rows = np.repeat(np.arange(m), np.diff(matrix.indptr))
    entry_columns = matrix.indices.astype(np.int64)
    in_row, in_column = np.diff(matrix.indptr), np.bincount(entry_columns, minlength=n)
    splits = [np.zeros(matrix.nnz, dtype=bool), np.ones(matrix.nnz, dtype=bool)]
    splits += [in_row[entry_rows] >= level for level in np.unique(in_row)[::-1][:levels]]
    splits += [in_column[entry_columns] < level
               for level in np.unique(in_column)[::-1][:levels]]

    def bound(from_rows):
        """Passes no colouring of this split goes below: the most entries read forward
        in one row, plus the most read backward in one column. Splits are tried from
        the lowest bound, and one whose bound reaches the best found is skipped: a dense
        row read forward would be coloured through a graph of n^2 edges."""
        return (_most(entry_rows[~from_rows], m) + _most(entry_columns[from_rows], n),
                bool(from_rows.any() and not from_rows.all()))

    def part(keep):
        """The pattern of the entries ``keep``, at full size."""
        return sparse.csr_array((np.ones(int(keep.sum()), dtype=bool),
                                 (entry_rows[keep], entry_columns[keep])), shape=(m, n))

    best = None
    tries = sorted(((bound(split), i, split) for i, split in enumerate(splits)),
                   key=lambda t: t[:2])
    for key, _, from_rows in tries:
        if best is not None and key >= best[0]:
            continue
        forward, backward = ~from_rows, from_rows
        columns = _used(column_coloring(part(forward), orders) if forward.any()
                        else np.zeros(n, dtype=np.int64),
                        np.bincount(entry_columns[forward], minlength=n) > 0)
        rows = _used(row_coloring(part(backward), orders) if backward.any()
                     else np.zeros(m, dtype=np.int64),
                     np.bincount(entry_rows[backward], minlength=m) > 0)
        found = (_passes(rows) + _passes(columns), key[1])
        if best is None or found < best[0]:
            best = (found, rows, columns, from_rows)
    _, rows, columns, from_rows = best
    if not is_bidirectionally_decompressible(matrix, rows, columns, from_rows):
        raise AssertionError("bicoloring: an entry is alone neither in its row's forward "
                             "pass nor in its column's reverse pass")
    return rows, columns, from_rows


# ---------------------------------------------------------------------------------------
# Checks (vectorised: they run on every colouring before it is used)
# ---------------------------------------------------------------------------------------

def _row_colour_counts(matrix, colors):
    """For each stored entry (i, j): how many entries of row i have j's colour."""
    coo = matrix.tocoo()
    ncolors = int(colors.max(initial=-1)) + 1
    keys = coo.row.astype(np.int64) * ncolors + colors[coo.col]
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return coo.row, coo.col, counts[inverse]


def columns_are_independent(pattern, colors):
    """No row holds two entries whose columns have one colour."""
    matrix = _boolean(pattern)
    if matrix.nnz == 0:
        return True
    colors = np.asarray(colors, dtype=np.int64)
    ncolors = int(colors.max(initial=-1)) + 1
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    keys = rows * ncolors + colors[matrix.indices]
    if colors.min(initial=0) >= 0 and matrix.shape[0] * ncolors <= 8 * matrix.nnz + 1024:
        # few enough keys for a count of each: no sort
        return bool(np.bincount(keys).max() == 1)
    keys.sort()
    return bool(np.all(keys[1:] != keys[:-1]))


def is_symmetric_decompressible(pattern, colors):
    """Each entry (i, j) of a symmetric pattern is alone in row i among the columns of
    j's colour, or its mirror (j, i) is alone in row j among the columns of i's."""
    matrix = _boolean(pattern)
    if matrix.nnz == 0:
        return True
    colors = np.asarray(colors)
    rows, cols, counts = _row_colour_counts(matrix, colors)
    alone = {(int(i), int(j)) for i, j, c in zip(rows, cols, counts) if c == 1} \
        if matrix.nnz < 1000 else None
    if alone is not None:
        return all((int(i), int(j)) in alone or (int(j), int(i)) in alone
                   for i, j in zip(rows, cols))
    # the same test on sorted keys, for large patterns
    n = matrix.shape[0]
    alone_keys = np.sort(rows[counts == 1].astype(np.int64) * n + cols[counts == 1])
    mirror = cols.astype(np.int64) * n + rows
    found = np.searchsorted(alone_keys, mirror)
    found = np.minimum(found, max(alone_keys.size - 1, 0))
    mirrored = alone_keys.size > 0 and alone_keys[found] == mirror
    return bool(np.all((counts == 1) | mirrored))


def _alone(colours, group):
    """For each entry: whether its colour (-1: none) is taken by no other entry of its
    group (its row, for the columns' colours; its column, for the rows')."""
    coloured = colours >= 0
    alone = np.zeros(colours.size, dtype=bool)
    if coloured.any():
        keys = group[coloured] * (int(colours.max()) + 1) + colours[coloured]
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        alone[coloured] = counts[inverse] == 1
    return alone


def is_bidirectionally_decompressible(pattern, row_colors, column_colors, from_rows):
    """Each stored entry (i, j), CSR order, is read where ``from_rows`` says: alone in
    column j among the rows of i's colour (a reverse pass), or alone in row i among the
    columns of j's colour (a forward pass); colour -1 is in no pass."""
    matrix = _boolean(pattern)
    matrix.sort_indices()
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    columns = matrix.indices.astype(np.int64)
    by_rows = _alone(np.asarray(row_colors)[rows], columns)
    by_columns = _alone(np.asarray(column_colors)[columns], rows)
    from_rows = np.asarray(from_rows, dtype=bool)
    return bool(np.all(np.where(from_rows, by_rows, by_columns)))
