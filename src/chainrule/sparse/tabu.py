"""Fewer colours by search: a greedy colouring improved by tabu search.

A greedy colouring is fast, and optimal on bands and on the five-point stencil, but on
other patterns it can be well above the optimum: the 2-D Brusselator's Jacobian (a
five-point stencil for each of two species, and their coupling) takes 10 or 11 colours
greedily where 7 are enough. Each colour is one compressed pass at every evaluation, so
when a pattern is coloured once and evaluated many times (``sparsity=``, or under
cr.jit), a search that removes colours pays for itself.

The search removes one colour at a time. To look for a colouring with k colours it
starts from the one found with k + 1, empties its smallest colour class and gives each
of those vertices the colour the fewest of its neighbours have; then it moves vertices
that clash with a neighbour until none does (a colouring with k colours: it tries k - 1)
or ``budget`` steps have passed (it keeps the k + 1). It stops at the lower bound.

Each step is the tabu search of Hertz and de Werra's TabuCol (1987) with two changes
that let it finish on large, grid-like graphs:

* the vertex to move is a clashing vertex drawn at random (as in Minton's min-conflicts
  heuristic), not the one with the best move over the whole graph. On a grid the clashes
  left are isolated defects far apart; moving the best one each time moves the same few
  back and forth, while a random one makes every defect wander until two meet and
  cancel (the Brusselator at N = 64 stays at 37 clashes with best-move choice, and
  reaches none in about 4 steps a vertex with the random one);
* the vertex goes to its best colour that is not tabu, but a move that adds clashes is
  taken only with a small probability (``NOISE``): always moving it, as TabuCol does,
  makes the clashes grow without bound when the vertex is drawn at random.

Moving v from a to b is tabu for a while after v left b: ``tenure`` steps, random
between 1 and 10 plus 0.6 per clashing vertex (Galinier and Hao's dynamic tenure, 1999),
so the search does not circle back; a tabu move is taken anyway if it gives fewer
clashes than any seen (aspiration). ``clashes[v * k + c]`` counts the neighbours of v
with colour c, kept up to date at each move (the gamma matrix of TabuCol), so a move is
evaluated in O(k) and made in O(degree of v); the steps run in plain Python, a few
microseconds each, since NumPy's call overhead would dominate work this small.

Where the graph repeats along the axes of its variables' array (a PDE on a periodic
grid), the search runs first on small folded copies of it (``periodic.py``): a colouring
of the copy, lifted, colours the whole graph, and on the copy a colour is removed in far
fewer steps. The Brusselator at N = 32, 64 and 128 comes down to 7 colours on its copy
of 256 vertices (periods 16 x 8) in a fraction of a second, where the search on the
whole graph stops at 8 within its budget. The search on the whole graph then starts
from the better of the two.

The lower bound (``lower_bound``) is the largest row of the pattern (its columns need a
colour each), or one more where every row has that many entries and the columns' entry
counts cannot add up to the number of rows (each colour class would have to meet every
row once): 7 on the Brusselator at N = 32, 64, 128, so the search stops where it
reaches 7. Where the bound is not reached, the last search ends by its budget. The
search is seeded, so its result is the same on every run, and the caller checks it as
any colouring, so a search can cost time, never a wrong value.
"""

import random

import numpy as np

from .periodic import periodic_colouring
from .scipy_door import sparse_module

__all__ = ["tabu_search", "fewer_column_colours", "lower_bound"]

NOISE = 0.05  # the probability of taking a move that adds clashes
STEPS_PER_VERTEX = 16  # the default budget; the Brusselator needs about 4 to reach 8
QUOTIENT_STEPS = 400  # a budget per vertex of a periodic quotient (periodic.py)


def lower_bound(pattern):
    """Colours no column colouring of ``pattern`` goes below: the most entries in a
    row, or one more where that many cannot be enough.

    With b colours and b entries in every row, each row holds every colour once, so
    each colour class meets every row exactly once: the entries of its columns add up
    to the number of rows m. Every class's total is a multiple of g, the greatest
    common divisor of the columns' entry counts; if g does not divide m, b colours are
    too few. (The 2-D Brusselator: 6 entries in every row and column, m = 2 N^2, and 6
    does not divide 2 N^2 unless 3 divides N.)

    >>> import numpy as np
    >>> ring = np.eye(7) + np.eye(7, k=1) + np.eye(7, k=-6)   # 2 a row, 7 rows
    >>> int(lower_bound(ring)), int(lower_bound(ring[:6, :6] + np.eye(6, k=-5)))
    (3, 2)
    """
    from .coloring import _boolean
    matrix = _boolean(pattern)
    in_row = np.diff(matrix.indptr)
    bound = int(in_row.max(initial=0))
    if bound == 0 or np.any(in_row != bound):
        return bound
    in_column = np.bincount(matrix.indices, minlength=matrix.shape[1])
    divisor = int(np.gcd.reduce(in_column[in_column > 0]))
    return bound + 1 if matrix.shape[0] % divisor else bound


def fewer_column_colours(pattern, colors, budget=None, seed=0):
    """A column colouring of ``pattern`` (``colors``: a proper one, from
    ``column_coloring``) with as few colours as tabu search finds; checked before use,
    as every colouring is, and searched down to ``lower_bound(pattern)``. For rows,
    pass the pattern's transpose. ``budget`` and ``seed`` as for ``tabu_search``."""
    from .coloring import _boolean, columns_are_independent
    matrix = _boolean(pattern)
    found = tabu_search(matrix.T @ matrix, colors, lower_bound(matrix), budget, seed)
    if not columns_are_independent(matrix, found):
        raise AssertionError("tabu_search: two columns of one colour share a row")
    return found


def tabu_search(graph, colors, bound, budget=None, seed=0):
    """``colors`` (a proper colouring of the symmetric boolean ``graph``) with as few
    colours as tabu search finds, down to ``bound``: the same array if it finds none
    fewer. ``budget`` is the number of steps tried for each colour removed (by default
    16 per vertex, at least 20,000 and at most 2,000,000: about 5 s at 3 * 10^4
    vertices); the search is seeded, so its result is the same on every run. Where the
    graph repeats along an axis of the flat index, the search starts from the best
    colouring lifted from its folded copies (``periodic.periodic_colouring``).

    >>> import numpy as np
    >>> ring = np.eye(6, k=1) + np.eye(6, k=-1) + np.eye(6, k=5) + np.eye(6, k=-5)
    >>> two = tabu_search(ring, np.array([0, 1, 0, 1, 0, 2]), bound=2)
    >>> int(two.max()) + 1, bool(np.all(two != np.roll(two, 1)))
    (2, True)
    """
    graph = sparse_module().csr_array(graph, dtype=bool, copy=True)  # (the caller's stays)
    graph.setdiag(False)
    graph.eliminate_zeros()
    graph.sort_indices()
    n = graph.shape[0]
    best = np.asarray(colors, dtype=np.int64)
    if budget is None:
        budget = min(2_000_000, max(20_000, STEPS_PER_VERTEX * n))
    rng = random.Random(seed)
    if int(best.max(initial=-1)) + 1 > max(bound, 1):
        lifted = periodic_colouring(
            graph, best, bound,
            lambda near, start, bound: _descend(near, np.array(start, dtype=np.int64), bound,
                                                _quotient_budget(len(near)), rng), rng)
        if lifted is not None:
            best = lifted
    indices, indptr = graph.indices.tolist(), graph.indptr.tolist()
    neighbours = [indices[indptr[v]:indptr[v + 1]] for v in range(n)]
    return _descend(neighbours, best, bound, budget, rng)


def _quotient_budget(n):
    """The steps for each colour removed from a quotient of n vertices: more per vertex
    than on the whole graph, since a quotient is small and the colourings that repeat
    are few (the Brusselator's 7 colours on its 256-vertex quotient: 50,000 steps find
    them for 19 seeds in 20, 100,000 for all 20)."""
    return min(200_000, max(20_000, QUOTIENT_STEPS * n))


def _descend(neighbours, best, bound, budget, rng):
    """``best`` (a proper colouring, an array) with colours removed one at a time while
    ``_with_colours`` finds one within ``budget`` steps, down to ``bound``."""
    k = int(best.max(initial=-1)) + 1
    while k > max(bound, 1):
        found = _with_colours(neighbours, _without_smallest_class(best, k), k - 1, budget,
                              rng)
        if found is None:
            break
        best, k = np.array(found, dtype=np.int64), k - 1
    return best


def _without_smallest_class(colors, k):
    """``colors`` (k colours) as a list with its smallest class marked -1 (uncoloured)
    and the last colour renamed to the one freed, so the rest are 0 .. k - 2."""
    smallest = int(np.argmin(np.bincount(colors, minlength=k)))
    renamed = colors.copy()
    renamed[colors == smallest] = -1
    renamed[colors == k - 1] = smallest if smallest != k - 1 else -1
    return renamed.tolist()


def _with_colours(neighbours, colour, k, budget, rng):
    """A proper colouring with k colours as a list, searched for from ``colour`` (a list
    of colours 0 .. k - 1, and -1 for the vertices to colour), or None within
    ``budget`` steps."""
    n = len(colour)
    rand = rng.random
    # the uncoloured vertices, in random order, each to the colour fewest neighbours
    # have: far fewer clashes to remove than random colours leave
    uncoloured = [v for v in range(n) if colour[v] < 0]
    rng.shuffle(uncoloured)
    for v in uncoloured:
        around = [0] * k
        for w in neighbours[v]:
            if colour[w] >= 0:
                around[colour[w]] += 1
        colour[v] = around.index(min(around))

    clashes = [0] * (n * k)
    for v in range(n):
        row = v * k
        for w in neighbours[v]:
            clashes[row + colour[w]] += 1
    # the clashing vertices, in a list with each one's place, to draw one and to add or
    # remove one in O(1)
    clashing = [v for v in range(n) if clashes[v * k + colour[v]]]
    place = [-1] * n
    for i, v in enumerate(clashing):
        place[v] = i

    def drop(v):
        last = clashing.pop()
        if last != v:
            clashing[place[v]] = last
            place[last] = place[v]
        place[v] = -1

    count = sum(clashes[v * k + colour[v]] for v in clashing) // 2  # clashing edges
    fewest = count
    tabu_until = [0] * (n * k)
    for step in range(budget):
        if not clashing:
            return colour
        v = clashing[int(rand() * len(clashing))]
        old, row = colour[v], v * k
        here = clashes[row + old]
        new, change, ties = -1, 0, 0
        for c in range(k):
            if c == old:
                continue
            delta = clashes[row + c] - here
            if tabu_until[row + c] > step and count + delta >= fewest:
                continue  # tabu, and not better than every count seen
            if new < 0 or delta < change:
                new, change, ties = c, delta, 1
            elif delta == change:
                ties += 1  # an even choice among the ties, drawn as they come
                if rand() * ties < 1:
                    new = c
        if new < 0 or (change > 0 and rand() >= NOISE):
            continue
        for w in neighbours[v]:
            at = w * k
            clashes[at + old] -= 1
            clashes[at + new] += 1
            if colour[w] == old and clashes[at + old] == 0:
                drop(w)
            elif colour[w] == new and clashes[at + new] == 1:
                place[w] = len(clashing)
                clashing.append(w)
        colour[v] = new
        if clashes[row + new] == 0:
            drop(v)
        count += change
        fewest = min(fewest, count)
        tabu_until[row + old] = step + 1 + int(10 * rand()) + int(0.6 * len(clashing))
    return colour if not clashing else None
