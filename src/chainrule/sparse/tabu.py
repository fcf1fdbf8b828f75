"""Fewer colours by search: a greedy colouring improved by tabu search (TabuCol).

A greedy colouring is fast, and optimal on bands and on the five-point stencil, but on
other patterns it can be well above the optimum: the 2-D Brusselator's Jacobian (a
five-point stencil for each of two species, and their coupling) takes 10 or 11 colours
greedily where 8 are enough at N = 32. Each colour is one compressed pass at every
evaluation, so when a pattern is coloured once and evaluated many times (``sparsity=``,
or under cr.jit), a search that removes colours pays for itself.

Hertz and de Werra's TabuCol (1987) looks for a colouring with k colours: start from
the best one with k + 1, give the vertices of the last colour random colours among the
k, and then, again and again, move one vertex that clashes with a neighbour to the
colour that removes the most clashes, except for moves it recently undid (the *tabu*
list, which keeps it from circling back), unless the move gives fewer clashes than any
seen so far. With no clash left it has a colouring with k colours and tries k - 1; it
stops at the lower bound, or after ``budget`` moves without success. The result is
checked by the caller as any colouring is, so a search can cost time, never a wrong
value.

``clashes[v, c]`` counts the neighbours of v with colour c: a vertex clashes where
``clashes[v, colour[v]] > 0``, and moving it from a to b changes the number of clashing
edges by ``clashes[v, b] - clashes[v, a]``.
"""

import numpy as np

from .scipy_door import sparse_module

__all__ = ["tabu_search", "fewer_column_colours"]


def fewer_column_colours(pattern, colors, budget=None):
    """A column colouring of ``pattern`` (``colors``: a proper one, from
    ``column_coloring``) with as few colours as tabu search finds; checked before use,
    as every colouring is. For rows, pass the pattern's transpose."""
    from .coloring import _boolean, columns_are_independent
    matrix = _boolean(pattern)
    bound = int(np.diff(matrix.indptr).max(initial=0))  # the most entries in a row
    found = tabu_search(matrix.T @ matrix, colors, bound, budget)
    if not columns_are_independent(matrix, found):
        raise AssertionError("tabu_search: two columns of one colour share a row")
    return found


def tabu_search(graph, colors, bound, budget=None, seed=0):
    """``colors`` (a proper colouring of the symmetric boolean ``graph``) with as few
    colours as tabu search finds, down to ``bound``: the same array if it finds none
    fewer. ``budget`` is the number of moves tried for each colour removed (by
    default 500 per vertex, at most 20,000: a few seconds at 10^4 vertices); the
    search is seeded, so its result is the same on every run.

    >>> import numpy as np
    >>> ring = np.eye(6, k=1) + np.eye(6, k=-1) + np.eye(6, k=5) + np.eye(6, k=-5)
    >>> tabu_search(ring, np.array([0, 1, 0, 1, 0, 2]), bound=2).tolist()
    [0, 1, 0, 1, 0, 1]
    """
    graph = sparse_module().csr_array(graph, dtype=bool, copy=True)  # (the caller's stays)
    graph.setdiag(False)
    graph.eliminate_zeros()
    best = np.asarray(colors, dtype=np.int64)
    budget = min(20_000, 500 * graph.shape[0]) if budget is None else budget
    rng = np.random.default_rng(seed)
    while best.max(initial=-1) + 1 > bound:
        found = _with_colours(graph, best, int(best.max()), budget, rng)
        if found is None:
            break
        best = found
    return best


def _with_colours(graph, colors, k, budget, rng):
    """A proper colouring with k colours, searched for from ``colors`` (k + 1), or None
    within ``budget`` moves."""
    n = graph.shape[0]
    neighbours = np.split(graph.indices.astype(np.int64), graph.indptr[1:-1])
    colour = colors.copy()
    last = np.flatnonzero(colour == k)
    colour[last] = rng.integers(0, k, last.size)
    clashes = np.zeros((n, k), dtype=np.int64)
    rows = np.repeat(np.arange(n), np.diff(graph.indptr))
    np.add.at(clashes, (rows, colour[graph.indices]), 1)
    own = clashes[np.arange(n), colour]  # neighbours of each vertex's own colour
    tabu_until = np.zeros((n, k), dtype=np.int64)
    never = np.iinfo(np.int64).max
    count = int(own.sum()) // 2  # clashing edges
    fewest = count
    for move in range(budget):
        if count == 0:
            return colour
        clashing = np.flatnonzero(own)
        change = clashes[clashing] - own[clashing, None]
        change[np.arange(clashing.size), colour[clashing]] = never
        # a tabu move is allowed only if it beats every count seen (aspiration)
        blocked = (tabu_until[clashing] > move) & (count + change >= fewest)
        change[blocked] = never
        least = change.min()
        if least == never:
            continue  # every move is tabu: wait for the list to clear
        choices = np.argwhere(change == least)
        i, new = choices[rng.integers(len(choices))]
        v, old = clashing[i], colour[clashing[i]]
        around = neighbours[v]
        colour[v] = new
        clashes[around, old] -= 1
        clashes[around, new] += 1
        own[around[colour[around] == old]] -= 1
        own[around[colour[around] == new]] += 1
        own[v] = clashes[v, new]
        count += int(least)
        fewest = min(fewest, count)
        # undoing the move stays tabu for a while that grows with the clashes left
        tabu_until[v, old] = move + 1 + int(0.6 * clashing.size) + int(rng.integers(0, 10))
    return colour if count == 0 else None
