"""Colourings that repeat: colour a small folded copy of a graph and lift it back.

Discretised PDEs on periodic grids give patterns that a translation of the grid maps to
themselves, and their variables are laid out as a C-ordered array (fields x N1 x N2 ...
or N1 x N2 x fields). A translation by one step along one axis of such an array is a
*digit shift* of the flat index: write ``j = (a * radix + d) * stride + b`` with
``0 <= d < radix`` and ``0 <= b < stride``; the shift sends d to ``(d + 1) % radix``.
``digit_shifts`` tries every ``(stride, radix)`` that divides the number of vertices
and keeps those that map every edge of a sample of the graph's edges to an edge. (A
shift that maps most edges, not all, is not kept: on a grid without wrap-around the
shares of the grid's axes, of a shift by one along the flat index and of coarse shifts
by a block of rows come within a sampling error of each other.)

Folding a digit to a period p (a divisor of its radix) sends d to ``d % p``; folding
several digits maps the graph onto a *quotient* of ``n / prod(radix / p)`` vertices,
whose edges are the images of the graph's edges. A proper colouring of the quotient,
lifted (each vertex takes the colour of its image), is a proper colouring of the graph,
whatever the graph: an edge of the graph becomes an edge of the quotient, whose ends
differ. So the lifted colouring's correctness does not rest on the shifts being symmetries
(nor on the sample: every colouring is checked before use); the symmetry makes the
quotient as good as the graph (where the graph is invariant, the quotient with periods
p colours exactly the colourings of the graph that repeat with those periods). If an
edge folds onto one vertex (a loop), no colouring with those periods exists and the
quotient is skipped.

A quotient is small, so search on it is cheap: the 2-D Brusselator at N = 128 has
32,768 columns, and its quotient with periods 16 x 8 (two fields) has 256, on which
tabu search finds the optimal 7 colours in a tenth of a second, where the search on the
whole graph stops at 8 within its budget (at N = 32, 64, 128 alike). ``periodic_colouring`` grows the periods through the
divisors of their radices, the smallest period first (on a 24 x 24 grid: 2, 3, 4, 6, 8,
12), each quotient searched from the best colouring found so far where that repeats
with the quotient's periods (a colouring with periods p repeats with every multiple of
p), else from its DSATUR colouring; it stops at a lower bound or at ``LARGEST``
vertices.
"""

import numpy as np

__all__ = ["digit_shifts", "fold", "periodic_colouring"]

SAMPLE = 2_000  # edges checked for each candidate shift
KEPT = 1.0  # the share of the sample a shift must map to edges
LARGEST = 4_096  # the most vertices in a quotient searched


def _divisors(n):
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _shifted(vertices, stride, radix):
    digit = (vertices // stride) % radix
    return vertices + (np.where(digit == radix - 1, -(radix - 1), 1) * stride)


def digit_shifts(graph, rng):
    """The ``(stride, radix, share)`` digit shifts of the flat index that map at least
    ``KEPT`` of a sample of the symmetric boolean CSR ``graph``'s edges to edges, best
    share first, then the largest radix; overlapping ones (sharing a digit position)
    dropped for the one before them."""
    n = graph.shape[0]
    if n < 4 or graph.nnz == 0:
        return []
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
    cols = graph.indices.astype(np.int64)
    keys = rows * n + cols  # sorted: CSR with sorted indices
    if graph.nnz > SAMPLE:
        pick = np.array(sorted(rng.sample(range(graph.nnz), SAMPLE)), dtype=np.int64)
        rows, cols = rows[pick], cols[pick]
    found = []
    for stride in _divisors(n):
        for radix in _divisors(n // stride):
            if radix < 2:
                continue
            images = _shifted(rows, stride, radix) * n + _shifted(cols, stride, radix)
            at = np.minimum(np.searchsorted(keys, images), keys.size - 1)
            share = float(np.mean(keys[at] == images))
            if share >= KEPT:
                found.append((stride, radix, share))
    found.sort(key=lambda s: (-s[2], -s[1], s[0]))
    kept = []
    for stride, radix, share in found:
        if all(stride >= s * r or s >= stride * radix for s, r, _ in kept):
            kept.append((stride, radix, share))
    return kept


def fold(n, shifts, periods):
    """Each vertex's image in the quotient (numbered 0, 1, ... in the order of their
    first vertex) and, for each quotient vertex, one vertex it comes from."""
    vertices = np.arange(n, dtype=np.int64)
    image = vertices.copy()
    for (stride, radix, _), period in zip(shifts, periods):
        digit = (vertices // stride) % radix
        image -= (digit - digit % period) * stride
    first, image = np.unique(image, return_inverse=True)
    return image.reshape(-1), first


def _quotient(graph, image, size):
    """The quotient's neighbour lists, or None where an edge folds onto a loop."""
    from .scipy_door import sparse_module
    rows = np.repeat(image, np.diff(graph.indptr))
    cols = image[graph.indices]
    if np.any(rows == cols):
        return None
    quotient = sparse_module().csr_array((np.ones(rows.size, dtype=bool), (rows, cols)),
                                         shape=(size, size))
    quotient.sum_duplicates()
    indptr, indices = quotient.indptr.tolist(), quotient.indices.tolist()
    return [indices[indptr[v]:indptr[v + 1]] for v in range(size)]


def periodic_colouring(graph, colors, bound, search, rng):
    """A proper colouring of ``graph`` (symmetric boolean CSR, no diagonal, sorted
    indices) lifted from its quotients, if one has fewer colours than ``colors``; else
    None. ``search(neighbours, start, bound)`` improves a proper colouring (a list) of a
    quotient, as tabu search does."""
    from .coloring import _dsatur
    n = graph.shape[0]
    shifts = digit_shifts(graph, rng)
    if not shifts:
        return None
    k = int(np.max(colors, initial=-1)) + 1
    best, best_periods = None, None
    periods = [1] * len(shifts)
    while True:
        size = n
        for (_, radix, _), period in zip(shifts, periods):
            size //= radix // period
        if size > min(LARGEST, n // 2):
            break
        image, first = fold(n, shifts, periods)
        neighbours = _quotient(graph, image, size)
        if neighbours is not None:
            repeats = best is not None and all(
                p % q == 0 for p, q in zip(periods, best_periods))
            start = best[first].tolist() if repeats else _dsatur(neighbours).tolist()
            found = np.asarray(search(neighbours, start, bound), dtype=np.int64)
            if int(found.max(initial=-1)) + 1 < k:
                best, k = found[image], int(found.max(initial=-1)) + 1
                best_periods = list(periods)
            if k <= bound:
                break
        growing = [i for i, (_, radix, _) in enumerate(shifts) if periods[i] < radix]
        if not growing:
            break
        i = min(growing, key=lambda i: periods[i])
        radix = shifts[i][1]
        periods[i] = next(d for d in range(periods[i] + 1, radix + 1) if radix % d == 0)
    return best
