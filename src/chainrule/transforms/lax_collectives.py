"""``jax.lax``'s collectives over the named axes of ``cr.vmap``. ``cr.vmap(f,
axis_name="i")`` names its batch axis; inside f, ``lax.psum(x, "i")`` is the sum of x
over the examples of that batch, the same for every example (``pmean``, ``pmax``,
``pmin`` alike); ``all_gather`` hands every example the whole stack; ``axis_index`` tells
each example its place; ``ppermute``, ``pshuffle`` and ``pbroadcast`` send examples'
values to other examples; ``psum_scatter`` and ``all_to_all`` (``pswapaxes``) cut the
values and deal the pieces. ``cr.pmap`` is a vmap with a name (``jit/pmap.py``).

How. While f runs, each named vmap keeps (name, level, size) on a stack of its thread
(``named_axis``). A collective looks its name up once, and the operation's record (a
Primitive) carries that level and size. When the operation reaches that level's batch
(a ``BatchTracer``), its batching rule computes across the batch axis with the
library's operations (a sum over the axis, broadcast back), so that a transform
outside the vmap (grad of it, cr.jit) differentiates or records those. At any other
level the operation passes that level's batch axis through. The records' own VJP and
JVP rules serve a transform inside the vmap (``vmap(grad(f))``): as in JAX, psum's
cotangent is summed over the examples (psum is its own transpose), all_gather's is
summed and dealt back, and a permutation's is sent back the other way. A value that
does not vary along the axis is the same for every example, so its psum is the axis
size times it, and its pmean, pmax and pmin are itself.

>>> from chainrule import lax
>>> x = np.array([1.0, 2.0, 3.0])
>>> cr.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(x).tolist()
[0.16666666666666666, 0.3333333333333333, 0.5]
>>> cr.vmap(lambda v: lax.axis_index("i") * v, axis_name="i")(x).tolist()
[0.0, 2.0, 6.0]
"""

import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import rules as R
from ..primitive import Box, Primitive, shape_of
from ..rules import predicates as P
from .batching import BatchTracer
from .pytrees import tree_map

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "ppermute", "pshuffle", "pbroadcast", "psum_scatter", "all_to_all", "pswapaxes"]

_thread = threading.local()


def _bound() -> list:
    axes = getattr(_thread, "axes", None)
    if axes is None:
        axes = _thread.axes = []
    return axes


@contextmanager
def named_axis(name: Hashable, level: int, size: int) -> Iterator[None]:
    """While the function of ``vmap(f, axis_name=name)`` runs, ``name`` stands for the
    batch of that vmap's ``level``, of ``size`` examples."""
    axes = _bound()
    axes.append((name, level, size))
    try:
        yield
    finally:
        axes.pop()


def _axis(name, what):
    """(level, size) of the innermost vmap named ``name``."""
    for bound, level, size in reversed(_bound()):
        if bound == name:
            return level, size
    names = [n for n, _, _ in _bound()]
    raise NameError(f"lax.{what}: unbound axis name {name!r}; expected the axis_name of a "
                    f"cr.vmap or cr.pmap around this call (bound here: "
                    f"{', '.join(map(repr, names)) or 'none'})")


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _one_name(axis_name, what):
    names = _names(axis_name)
    if len(names) != 1:
        raise ValueError(f"lax.{what}: one axis name, got {axis_name!r}; expected a "
                         f"single name (nest the call to go over several axes)")
    return names[0]


def _no_groups(groups, what):
    if groups is not None:
        raise ValueError(f"lax.{what}: axis_index_groups={groups!r} is not supported over "
                         f"cr.vmap's axes (nor over jax.vmap's); expected None")


def _varies(x, level):
    """Whether x holds a batch of ``level``: whether it differs from example to example
    along that axis."""
    while isinstance(x, Box):
        if isinstance(x, BatchTracer) and x._level == level:
            return True
        x = x._contents()
    return False


def _varying(x, level, size):
    """x as a batch of ``level``: the same value for every example, where it is not
    one already (added to a batch of zeros, so that the levels stay in their order)."""
    if _varies(x, level):
        return x
    dtype = getattr(x, "dtype", None)
    zeros = np.zeros((size,), np.result_type(x) if dtype is None else dtype)
    return R.add(x, BatchTracer(zeros, level))


def _my_index(level, size):
    """Each example's place along the axis: a batch of ``level``."""
    return BatchTracer(np.arange(size, dtype=np.int32), level)


# ---------------------------------------------------------------------------------------
# The operations' records: each computes across the batch axis where it reaches its
# level, and passes any other level's batch axis through
# ---------------------------------------------------------------------------------------


def _across(reduce):
    """The batching rule of a reduction over the named axis (sum, max, min): the
    reduced value, the same for every example."""
    def rule(call):
        x, kwargs = call.values[0], call.kwargs
        if call.level != kwargs["level"]:
            return call.prim(x, **kwargs)
        return R.broadcast_to(reduce(x, axis=0), shape_of(x))
    return rule


def _psum_forward(x, *, level, size):
    return np.multiply(x, size)  # (not varying: every example holds x)


_psum = Primitive(_psum_forward, "psum", batching=_across(R.sum),
                  doc="The sum over a named vmap axis (lax.psum's record).")
_psum.defvjp(lambda g, ans, x, *, level, size: _psum(g, level=level, size=size))
_psum.defjvp(lambda t, ans, x, *, level, size: _psum(t, level=level, size=size))


def _extreme(reduce, name):
    """pmax or pmin: the derivative goes to the examples that hold the extreme, shared
    equally where several do (as max's does)."""
    def forward(x, *, level, size):
        return x

    prim = Primitive(forward, name, batching=_across(reduce),
                     doc=f"The {name[1:]} over a named vmap axis (lax.{name}'s record).")

    def share(x, ans, level, size):
        mask = R.astype(P.equal(x, ans), np.result_type(ans))
        return mask, _psum(mask, level=level, size=size)

    def vjp(g, ans, x, *, level, size):
        mask, count = share(x, ans, level, size)
        return _psum(g, level=level, size=size) * mask / count

    def jvp(t, ans, x, *, level, size):
        mask, count = share(x, ans, level, size)
        return _psum(t * mask, level=level, size=size) / count

    prim.defvjp(vjp)
    prim.defjvp(jvp)
    return prim


_pmax = _extreme(R.max, "pmax")
_pmin = _extreme(R.min, "pmin")


def _stacked_shape(shape, axis, size):
    return tuple(shape[:axis]) + (size,) + tuple(shape[axis:])


def _all_gather_forward(x, *, axis, level, size):
    # (not varying: the stack of size copies of x)
    expanded = R.expand_dims(x, axis)
    return R.broadcast_to(expanded, _stacked_shape(shape_of(x), axis, size))


def _all_gather_rule(call):
    x, kwargs = call.values[0], call.kwargs
    if call.level != kwargs["level"]:  # (this level's axis in front of the example's)
        return call.prim(x, **{**kwargs, "axis": kwargs["axis"] + 1})
    stack = R.moveaxis(x, 0, kwargs["axis"])
    return R.broadcast_to(R.expand_dims(stack, 0), (call.size,) + shape_of(stack))


def _dealt(stacked, axis, level, size):
    """Entry ``i`` along ``axis`` of each example's ``stacked``, for example i."""
    return R.take(stacked, _my_index(level, size), axis=axis)


_all_gather = Primitive(_all_gather_forward, "all_gather", batching=_all_gather_rule,
                        doc="Every example's value, stacked along axis (lax.all_gather's "
                            "record).")
_all_gather.defvjp(lambda g, ans, x, *, axis, level, size: _dealt(
    _psum(g, level=level, size=size), axis, level, size))
_all_gather.defjvp(lambda t, ans, x, *, axis, level, size: _all_gather(
    t, axis=axis, level=level, size=size))


def _permute_rule(call):
    x, kwargs = call.values[0], call.kwargs
    if call.level != kwargs["level"]:
        return call.prim(x, **kwargs)
    index = np.array(kwargs["index"])
    out = R.take(x, np.maximum(index, 0), axis=0)
    if np.all(index >= 0):
        return out
    received = (index >= 0).reshape((-1,) + (1,) * (len(shape_of(x)) - 1))
    return R.where(received, out, 0)


def _permute_forward(x, *, index, level, size):
    raise TypeError("lax.ppermute: the value must be a batch of its axis (lax's ppermute "
                    "and pshuffle make it one); expected a call through them")


_permute = Primitive(_permute_forward, "ppermute", batching=_permute_rule,
                     doc="Example i receives example index[i]'s value, or zeros where "
                         "index[i] is -1 (lax.ppermute's and lax.pshuffle's record).")


def _permuted(x, index, level, size):
    return _permute(_varying(x, level, size), index=index, level=level, size=size)


def _inverse(index):
    back = [-1] * len(index)
    for destination, source in enumerate(index):
        if source >= 0:
            back[source] = destination
    return tuple(back)


_permute.defvjp(lambda g, ans, x, *, index, level, size: _permuted(
    g, _inverse(index), level, size))
_permute.defjvp(lambda t, ans, x, *, index, level, size: _permuted(t, index, level, size))


# ---------------------------------------------------------------------------------------
# jax.lax's functions
# ---------------------------------------------------------------------------------------


def _over_names(prim, x, axis_name, what):
    for name in _names(axis_name):
        level, size = _axis(name, what)
        x = tree_map(lambda leaf, level=level, size=size: prim(leaf, level=level, size=size),
                     x)
    return x


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of x over the examples of the named axis (a tuple of names: over each),
    the same for every example; x may be a pytree.

    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> cr.vmap(lambda v: cr.lax.psum(v, "i"), axis_name="i")(x).tolist()
    [[4.0, 6.0], [4.0, 6.0]]
    """
    _no_groups(axis_index_groups, "psum")
    return _over_names(_psum, x, axis_name, "psum")


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of x over the examples of the named axis (or axes).

    >>> cr.vmap(lambda v: v - cr.lax.pmean(v, "i"), axis_name="i")(
    ...     np.array([1.0, 2.0, 6.0])).tolist()
    [-2.0, -1.0, 3.0]
    """
    _no_groups(axis_index_groups, "pmean")
    total = psum(x, axis_name)
    n = axis_size(axis_name)
    return tree_map(lambda leaf: leaf / n, total)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The largest x over the examples of the named axis (or axes); its derivative goes
    to the examples that hold it (shared where several do; JAX gives none).

    >>> cr.vmap(lambda v: cr.lax.pmax(v, "i"), axis_name="i")(np.array([1.0, 5.0, 2.0])).tolist()
    [5.0, 5.0, 5.0]
    """
    _no_groups(axis_index_groups, "pmax")
    return _over_names(_pmax, x, axis_name, "pmax")


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The smallest x over the examples of the named axis (or axes), as ``pmax``.

    >>> cr.vmap(lambda v: cr.lax.pmin(v, "i"), axis_name="i")(np.array([1.0, 5.0, 2.0])).tolist()
    [1.0, 1.0, 1.0]
    """
    _no_groups(axis_index_groups, "pmin")
    return _over_names(_pmin, x, axis_name, "pmin")


def axis_size(axis_name: Any) -> int:
    """The number of examples along the named axis (the product, for a tuple of names).

    >>> cr.vmap(lambda v: v * cr.lax.axis_size("i"), axis_name="i")(np.ones(3)).tolist()
    [3.0, 3.0, 3.0]
    """
    n = 1
    for name in _names(axis_name):
        n *= _axis(name, "axis_size")[1]
    return n


def axis_index(axis_name: Any) -> Any:
    """Each example's place along the named axis (int32, as JAX's); for a tuple of
    names, the place in their product, the last name varying fastest.

    >>> cr.vmap(lambda v: cr.lax.axis_index("i"), axis_name="i")(np.ones(3)).tolist()
    [0, 1, 2]
    """
    index = None
    for name in _names(axis_name):
        level, size = _axis(name, "axis_index")
        mine = _my_index(level, size)
        index = mine if index is None else index * size + mine
    return index


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Every example's x, stacked along a new ``axis`` (``tiled=True``: joined along
    ``axis``), handed to every example.

    >>> cr.vmap(lambda v: cr.lax.all_gather(v, "i"), axis_name="i")(
    ...     np.array([1.0, 2.0])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    _no_groups(axis_index_groups, "all_gather")
    level, size = _axis(_one_name(axis_name, "all_gather"), "all_gather")

    def gather(leaf):
        shape = shape_of(leaf)
        at = _normalized(axis, len(shape) + (0 if tiled else 1), "all_gather", "axis")
        out = _all_gather(leaf, axis=at, level=level, size=size)
        if not tiled:
            return out
        joined = shape[:at] + (size * shape[at],) + shape[at + 1:]
        return R.reshape(out, joined)
    return tree_map(gather, x)


def _normalized(axis, rank, what, name):
    if not -rank <= axis < rank:
        raise ValueError(f"lax.{what}: {name}={axis} for a value of {rank} axes here; "
                         f"expected an axis between {-rank} and {rank - 1}")
    return axis % rank


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """The sum over the examples, dealt out along ``scatter_dimension``: example i gets
    entry i of it (``tiled=True``: the i-th of size-many equal blocks).

    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> cr.vmap(lambda v: cr.lax.psum_scatter(v, "i"), axis_name="i")(x).tolist()
    [4.0, 6.0]
    """
    _no_groups(axis_index_groups, "psum_scatter")
    name = _one_name(axis_name, "psum_scatter")
    level, size = _axis(name, "psum_scatter")

    def scatter(leaf):
        shape = shape_of(leaf)
        d = _normalized(scatter_dimension, len(shape), "psum_scatter", "scatter_dimension")
        _divides(shape[d], size, tiled, "psum_scatter", "scatter_dimension")
        total = _psum(leaf, level=level, size=size)
        return _block(total, d, level, size, tiled)
    return tree_map(scatter, x)


def _divides(length, size, tiled, what, name):
    if (length % size if tiled else length - size):
        expected = f"a multiple of {size}" if tiled else f"{size}, the axis size"
        raise ValueError(f"lax.{what}: the {name} axis has {length} entries; expected "
                         f"{expected}")


def _block(value, axis, level, size, tiled):
    """Example i's piece of ``value`` along ``axis``: entry i, or (tiled) block i of
    size-many."""
    if not tiled:
        return _dealt(value, axis, level, size)
    width = shape_of(value)[axis] // size
    first = _my_index(level, size) * width
    return R.take(value, R.add(first, np.arange(width, dtype=np.int32)), axis=axis)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Each example cuts x along ``split_axis`` into size-many pieces and sends piece j to
    example j, which puts the pieces it receives together along ``concat_axis`` (a new
    axis in place of the split one; ``tiled=True``: joined along ``concat_axis``).

    >>> x = np.arange(4.0).reshape(2, 2)
    >>> cr.vmap(lambda v: cr.lax.all_to_all(v, "i", 0, 0), axis_name="i")(x).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    _no_groups(axis_index_groups, "all_to_all")
    level, size = _axis(_one_name(axis_name, "all_to_all"), "all_to_all")

    def exchange(leaf):
        rank = len(shape_of(leaf))
        split = _normalized(split_axis, rank, "all_to_all", "split_axis")
        concat = _normalized(concat_axis, rank, "all_to_all", "concat_axis")
        _divides(shape_of(leaf)[split], size, tiled, "all_to_all", "split_axis")
        everyone = _all_gather(leaf, axis=0, level=level, size=size)  # (sender first)
        mine = _block(everyone, split + 1, level, size, tiled)
        if not tiled:  # (the split axis is gone; the senders' axis takes concat's place)
            return R.moveaxis(mine, 0, concat)
        # the senders' axis just before concat's, then merged with it
        placed = R.moveaxis(mine, 0, concat)
        shape = shape_of(placed)
        return R.reshape(placed, shape[:concat] + (shape[concat] * shape[concat + 1],)
                         + shape[concat + 2:])
    return tree_map(exchange, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """``all_to_all(x, axis_name, axis, axis)``: the named axis and ``axis`` swapped.

    >>> x = np.arange(4.0).reshape(2, 2)
    >>> cr.vmap(lambda v: cr.lax.pswapaxes(v, "i", 0), axis_name="i")(x).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each example's x along the (source, destination) pairs of ``perm``; an
    example no pair sends to receives zeros.

    >>> cr.vmap(lambda v: cr.lax.ppermute(v, "i", [(0, 1), (1, 2)]), axis_name="i")(
    ...     np.array([1.0, 2.0, 3.0])).tolist()
    [0.0, 1.0, 2.0]
    """
    level, size = _axis(_one_name(axis_name, "ppermute"), "ppermute")
    index = [-1] * size
    pairs = [tuple(int(k) for k in pair) for pair in perm]
    for source, destination in pairs:
        if not (0 <= source < size and 0 <= destination < size):
            raise ValueError(f"lax.ppermute: the pair ({source}, {destination}) names an "
                             f"example outside the axis of {size}; expected places in "
                             f"0..{size - 1}")
        index[destination] = source
    sources = [s for s, _ in pairs]
    if len(set(sources)) != len(sources) or index.count(-1) != size - len(pairs):
        raise ValueError(f"lax.ppermute: perm {pairs} sends from one example twice or "
                         f"to one example twice; expected distinct sources and "
                         f"distinct destinations")
    return tree_map(lambda leaf: _permuted(leaf, tuple(index), level, size), x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Example i receives example ``perm[i]``'s x.

    >>> cr.vmap(lambda v: cr.lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(
    ...     np.array([1.0, 2.0, 3.0])).tolist()
    [3.0, 1.0, 2.0]
    """
    level, size = _axis(_one_name(axis_name, "pshuffle"), "pshuffle")
    index = tuple(int(k) for k in perm)
    if sorted(index) != list(range(size)):
        raise ValueError(f"lax.pshuffle: perm {list(index)} is not a permutation of "
                         f"0..{size - 1} (the axis has {size} examples)")
    return tree_map(lambda leaf: _permuted(leaf, index, level, size), x)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Example ``source``'s x, handed to every example.

    >>> cr.vmap(lambda v: cr.lax.pbroadcast(v, "i", 1), axis_name="i")(
    ...     np.array([1.0, 2.0, 3.0])).tolist()
    [2.0, 2.0, 2.0]
    """
    name = _one_name(axis_name, "pbroadcast")
    is_source = axis_index(name) == source
    return psum(tree_map(lambda leaf: R.where(is_source, leaf, 0), x), name)
