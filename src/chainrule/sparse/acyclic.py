"""Acyclic colouring of a symmetric pattern, and the substitution that recovers a Hessian
from it (Gebremedhin, Tarafdar, Pothen and Walther, 2009).

An *acyclic* colouring is a proper colouring in which every cycle of the adjacency graph
takes at least three colours: the edges between any two colours a, b form a forest.
It needs fewer colours than a star colouring (a path on four vertices may take two
colours), but, unlike star colouring, an entry is not read off the compressed Hessian:
the compressed entry ``B[u, b]`` (row u, seed of colour b) is the sum of ``H[u, w]`` over the
neighbours w of colour b, all of them in u's tree of the (a, b) forest. At a leaf that
sum has one term; taking it off its neighbour's sum makes another leaf, and so on.

Here each tree is rooted at a centroid (no subtree holds more than half its vertices,
so no entry is the end of a substitution longer than that), and cut into *heavy paths*
(each vertex continued by its child of the largest subtree). Along a path the
substitution is ``H(v_i) = b'(v_i) - H(v_{i-1})``, the running alternating sum that
one ``cumsum`` computes, where ``b'`` is the compressed entry less the values of the
paths hanging off the vertex (its light children). A path waits only for the paths
hanging off it, and every light edge at least halves the subtree, so all the paths are
solved in at most log2(n) + 1 rounds of a few NumPy calls (gathers, ``np.add.reduceat``,
``np.cumsum``), which cr.jit records like any other: the plan (who is whose child, in
what order) is made once, from the pattern and the colours.
"""

from typing import Any, Sequence

import numpy as np

from .. import arrays as xp
from .coloring import ORDERS, _boolean, _collector_paused, _fewest
from .scipy_door import sparse_module

__all__ = ["acyclic_coloring", "is_acyclic_coloring", "SubstitutionPlan"]


def _without_diagonal(matrix):
    matrix = _boolean(matrix + matrix.T)
    matrix.setdiag(False)
    matrix.eliminate_zeros()
    return matrix


def _find(parent, e):
    root = e
    while parent[root] != root:
        root = parent[root]
    while parent[e] != root:  # path compression
        parent[e], e = root, parent[e]
    return root


def _greedy_acyclic(neighbours, order):
    """Each vertex in turn gets the least colour that keeps the colouring proper and
    acyclic. The two-coloured trees are kept as sets of edges (union-find, an edge
    (w, x) keyed ``w * n + x``, w < x): colour c of a neighbour x of a neighbour w of v
    closes a two-coloured cycle exactly where v is adjacent to another vertex of the
    tree holding the edge (w, x)."""
    n = len(neighbours)
    colors = [-1] * n
    parent = {}

    def key(a, b):
        return a * n + b if a < b else b * n + a

    for v in order:
        taken = {colors[w] for w in neighbours[v] if colors[w] >= 0}
        first = {}  # tree -> the neighbour of v through which it was met
        for w in neighbours[v]:
            if colors[w] < 0:
                continue
            for x in neighbours[w]:
                cx = colors[x]
                if x == v or cx < 0 or cx in taken:
                    continue
                tree = _find(parent, key(w, x))
                met = first.setdefault(tree, w)
                if met != w:
                    taken.add(cx)
        c = 0
        while c in taken:
            c += 1
        colors[v] = c
        # the new edges (v, w) join the trees they touch in the (c, colour of w) forest
        by_colour = {}
        for w in neighbours[v]:
            cw = colors[w]
            if cw < 0 or w == v:
                continue
            e = key(v, w)
            parent[e] = e
            other = by_colour.setdefault(cw, e)
            if other != e:
                parent[_find(parent, e)] = _find(parent, other)
            for x in neighbours[w]:
                if x != v and colors[x] == c:
                    a, b = _find(parent, e), _find(parent, key(w, x))
                    if a != b:
                        parent[a] = b
    return np.array(colors, dtype=np.int64)


def acyclic_coloring(pattern: Any, orders: Sequence[str] = tuple(ORDERS)) -> np.ndarray:
    """An acyclic colouring of a symmetric pattern: one Hessian-vector product per
    colour, the entries recovered by substitution (``SubstitutionPlan``). ``orders``
    names the greedy vertex orders tried (``coloring.ORDERS``); the fewest colours kept.

    >>> import numpy as np
    >>> band = np.eye(6) + np.eye(6, k=1) + np.eye(6, k=-1)   # a path: a tree
    >>> acyclic_coloring(band).tolist()                       # star colouring: 3
    [0, 1, 0, 1, 0, 1]
    """
    matrix = _without_diagonal(_boolean(pattern))
    with _collector_paused():
        colors = _fewest(matrix, _greedy_acyclic, orders,
                         2 if matrix.nnz else 1, "acyclic_coloring")
    if not is_acyclic_coloring(matrix, colors):
        raise AssertionError("acyclic_coloring: two neighbours share a colour, or two "
                             "colours make a cycle")
    return colors


def _two_coloured_forest(matrix, colors):
    """The edges (i < j) of a symmetric pattern and, for each, its two ends as vertices
    of the graph that holds every two-coloured subgraph apart: a vertex i of colour a is
    one vertex there for each other colour b it meets, (i, the pair {a, b}).
    Returns ``(i, j, node of i, node of j, vertex of each node)``."""
    upper = sparse_module().triu(matrix, k=1).tocoo()
    i, j = upper.row.astype(np.int64), upper.col.astype(np.int64)
    n, ncolors = matrix.shape[0], int(colors.max(initial=-1)) + 1
    low, high = np.minimum(colors[i], colors[j]), np.maximum(colors[i], colors[j])
    pair = low * ncolors + high
    keys = np.concatenate([pair * n + i, pair * n + j])
    unique, nodes = np.unique(keys, return_inverse=True)
    return i, j, nodes[:i.size], nodes[i.size:], unique % n


def is_acyclic_coloring(pattern: Any, colors: Any) -> bool:
    """Whether ``colors`` is a proper colouring of a symmetric pattern (the diagonal
    aside) in which the edges between any two colours form a forest: edges = vertices -
    components, counted over every two-coloured subgraph at once.

    >>> import numpy as np
    >>> square = np.array([[1, 1, 0, 1], [1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 1, 1]])
    >>> is_acyclic_coloring(square, [0, 1, 0, 1]), is_acyclic_coloring(square, [0, 1, 0, 2])
    (False, True)
    """
    matrix = _without_diagonal(_boolean(pattern))
    colors = np.asarray(colors, dtype=np.int64)
    if colors.shape != (matrix.shape[0],) or (colors < 0).any():
        return False
    i, j, a, b, vertex = _two_coloured_forest(matrix, colors)
    if (colors[i] == colors[j]).any():
        return False
    if i.size == 0:
        return True
    sparse = sparse_module()
    graph = sparse.coo_array((np.ones(i.size), (a, b)), shape=(vertex.size,) * 2)
    components = sparse.csgraph.connected_components(graph, directed=False)[0]
    return bool(i.size == vertex.size - components)


class SubstitutionPlan:
    """How to recover a symmetric matrix of pattern ``pattern`` (CSR, sorted, with its
    mirror) from ``B = H @ seeds`` of an acyclic colouring: ``recover(B)`` gives the
    values in CSR order, with array operations alone (gathers, ``np.add.reduceat``,
    ``np.cumsum``), so that cr.jit records them. ``B`` is ``(ncolors, n)``: the
    Hessian-vector product of each colour's seed.

    >>> import numpy as np
    >>> H = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 4.0], [0.0, 4.0, 5.0]])
    >>> pattern = sparse_module().csr_array(H != 0)
    >>> colors = acyclic_coloring(pattern)
    >>> plan = SubstitutionPlan(pattern, colors)
    >>> seeds = np.eye(2)[colors]                         # (n, colours): 0/1 per colour
    >>> plan.recover((H @ seeds).T).tolist()             # CSR order
    [2.0, 1.0, 1.0, 3.0, 4.0, 4.0, 5.0]
    """

    def __init__(self, pattern: Any, colors: Any) -> None:
        pattern = _boolean(pattern)
        pattern.sort_indices()
        n = pattern.shape[0]
        colors = np.asarray(colors, dtype=np.int64)
        matrix = _without_diagonal(pattern)
        i, j, a, b, vertex = _two_coloured_forest(matrix, colors)
        nodes = vertex.size
        other = np.zeros(nodes, dtype=np.int64)  # each node's colour across its edges
        other[a], other[b] = colors[j], colors[i]
        adjacent = [[] for _ in range(nodes)]
        for p, q in zip(a.tolist(), b.tolist()):
            adjacent[p].append(q)
            adjacent[q].append(p)
        with _collector_paused():
            up, rounds = self._rounds(adjacent, (other * n + vertex).tolist())
        self.rounds = rounds
        # every value, in CSR order: a diagonal entry is read off B (its row has no
        # other entry of its colour), an edge (i, j) is its child's, in the rounds'
        # results, which follow B's entries
        rows = np.repeat(np.arange(n), np.diff(pattern.indptr))
        cols = pattern.indices.astype(np.int64)
        node_of = {}
        for p, q in zip(a.tolist(), b.tolist()):
            child = p if up[p] == q else q
            node_of[(int(vertex[p]), int(vertex[q]))] = child
        position = np.zeros(nodes, dtype=np.int64)
        offset = 0
        for step in rounds:  # a round's light children were solved in earlier rounds
            step["light"] = position[step["light"]]
            position[step["nodes"]] = offset + np.arange(len(step["nodes"]))
            offset += len(step["nodes"])
        gather = colors[cols] * n + rows  # the diagonal's place in B
        off = rows != cols
        lo, hi = np.minimum(rows, cols)[off].tolist(), np.maximum(rows, cols)[off].tolist()
        edge_nodes = np.array([node_of[(p, q)] for p, q in zip(lo, hi)], dtype=np.int64)
        gather[off] = int(colors.max(initial=-1) + 1) * n + position[edge_nodes]
        self.gather = gather

    @staticmethod
    def _rounds(adjacent, compressed_at):
        """Root each tree at a centroid, cut it into heavy paths, and group the paths
        into rounds (a path after every path hanging off it). Returns each node's parent
        (-1 at a root) and, per round, the index arrays ``recover`` applies."""
        nodes = len(adjacent)
        up, order, seen = [-1] * nodes, [], [False] * nodes

        def walk(root):
            """Breadth-first from root over an unvisited tree: its nodes, parents set."""
            up[root], start = -1, len(order)
            seen[root] = True
            order.append(root)
            k = start
            while k < len(order):
                u = order[k]
                for w in adjacent[u]:
                    if not seen[w]:
                        seen[w], up[w] = True, u
                        order.append(w)
                k += 1
            return order[start:]

        size = [1] * nodes
        centroids = []
        for start in range(nodes):
            if seen[start]:
                continue
            tree = walk(start)
            for u in reversed(tree[1:]):
                size[up[u]] += size[u]
            total, c = len(tree), start
            while True:  # down the child of a subtree over half the tree, if any
                heavier = [w for w in adjacent[c] if w != up[c] and 2 * size[w] > total]
                if not heavier:
                    break
                c = heavier[0]
            centroids.append(c)
        order.clear()
        seen = [False] * nodes
        size = [1] * nodes
        for c in centroids:
            walk(c)
        for u in reversed(order):
            if up[u] >= 0:
                size[up[u]] += size[u]
        heavy = [-1] * nodes
        for u in order:
            children = [w for w in adjacent[u] if w != up[u]]
            if children:
                heavy[u] = max(children, key=size.__getitem__)
        # a path starts at a root's heavy child or at a light child, and runs down
        rank = [0] * nodes  # of the path starting at a node
        paths = []
        for u in reversed(order):
            if up[u] < 0 or (up[up[u]] >= 0 and heavy[up[u]] == u):
                continue  # a root, or inside a path
            path, v = [], u
            while v >= 0:
                path.append(v)
                v = heavy[v]
            path.reverse()  # from the bottom up
            light = [w for v in path for w in adjacent[v] if w != up[v] and w != heavy[v]]
            rank[u] = 1 + max((rank[w] for w in light), default=-1)
            paths.append((rank[u], path))
        rounds = []
        for r in range(1 + max((p[0] for p in paths), default=-1)):
            rounds.append(_round([p for k, p in paths if k == r], adjacent, up, heavy,
                                 compressed_at))
        return up, rounds

    def recover(self, compressed: Any) -> Any:
        """The values in CSR order from ``B`` (``(ncolors, n)``, NumPy or traced)."""
        flat = xp.reshape(compressed, (-1,))
        solved = []
        zero = xp.zeros_like(flat[:1])
        for step in self.rounds:
            done = xp.concat(solved + [zero])  # the zero: a vertex with no light child
            b = flat[step["b"]]
            if step["starts"].size:
                sums = np.add.reduceat(done[step["light"]], step["starts"])
                b = b - xp.concat([sums, zero])[step["light_of"]]
            b = xp.concat([b, zero])
            for index, sign, filled in step["groups"]:
                sign = sign.astype(flat.dtype, copy=False)  # (+-1: float32 stays float32)
                alternating = np.cumsum(b[index] * sign, axis=0) * sign
                solved.append(xp.reshape(alternating, (-1,))[filled])
        return xp.concat([flat] + solved)[self.gather]


def _round(paths, adjacent, up, heavy, compressed_at):
    """The index arrays of one round: for its paths' nodes (in the order of their
    results), where their compressed entry is, which solved nodes hang off each, and
    the paths laid out in the rows of padded matrices, longest first, a new matrix
    wherever one more path would leave it over half padding (one matrix for all would
    hold mostly padding: a round has many short paths and a few long ones)."""
    paths = sorted(paths, key=len, reverse=True)
    nodes = [v for path in paths for v in path]
    light, starts, light_of = [], [], []
    for v in nodes:
        hanging = [w for w in adjacent[v] if w != up[v] and w != heavy[v]]
        if hanging:
            light_of.append(len(starts))
            starts.append(len(light))
            light.extend(hanging)
        else:
            light_of.append(-1)
    light_of = np.array(light_of, dtype=np.int64)
    light_of[light_of < 0] = len(starts)
    groups, first, at = [], 0, 0
    lengths = [len(p) for p in paths]
    while first < len(paths):
        longest, last, filled = lengths[first], first + 1, lengths[first]
        while last < len(paths) and longest * (last - first + 1) <= 2 * (filled + lengths[last]):
            filled += lengths[last]
            last += 1
        index = np.full((last - first, longest), len(nodes), dtype=np.int64)
        for r, size in enumerate(lengths[first:last]):
            index[r, :size] = np.arange(at, at + size)
            at += size
        # laid out a path per column, so that cumsum runs down contiguous rows; the
        # results read back path by path
        path, step = np.divmod(np.flatnonzero(index < len(nodes)), longest)
        groups.append((np.ascontiguousarray(index.T),
                       np.where(np.arange(longest) % 2, -1.0, 1.0)[:, None],
                       step * (last - first) + path))
        first = last
    return {"nodes": np.array(nodes, dtype=np.int64),
            "b": np.array([compressed_at[v] for v in nodes], dtype=np.int64),
            "light": np.array(light, dtype=np.int64),  # node ids until __init__ maps them
            "starts": np.array(starts, dtype=np.int64), "light_of": light_of,
            "groups": groups}
