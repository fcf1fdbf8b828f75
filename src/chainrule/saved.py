"""What a graph saved stays as it was while the graph can be walked.

A node saves its operands' arrays for its rules. Writes through chainrule (t.data = a,
t[i] = v, t -= v) bump the tensor's version, and a walk that finds a version moved
refuses. A write straight into the array (t.data[0] = 5, np.add(a, b, out=t.data),
t.data.fill(0), np.asarray(t)[...]) bumps nothing, so the saved arrays are made
read-only, as MyGrad does: NumPy refuses the write at once. A graph can be walked until
backward() frees it (PyTorch's rule; retain_graph=True keeps it) or until it is
garbage. Each locked array remembers the nodes that saved it (weak references, so the
lock never keeps a graph alive) and becomes writable again when none of them can be
walked: at the end of backward(), or, for a graph dropped without a walk, the next
time the tensor's array is reached through chainrule (.data, np.asarray, a write).
"""

import weakref

import numpy as np

from .arrays import recorder, recorders_open

__all__ = ["hold", "reached", "release", "free", "FREED", "copied", "copied_keywords", "kept",
           "share_version_counter", "user_arrays"]


class _Freed(tuple):
    """The ``_versions`` of a node whose graph backward() freed: nothing to check, and
    told apart from a live node's by identity."""


FREED = _Freed()

def hold(leaves, node):
    """Lock the leaves' arrays (those chainrule may lock) for ``node``'s graph."""
    node._leaves = leaves  # (what free() releases)
    holder = weakref.ref(node)
    for tensor in leaves:
        holders = tensor._holders
        if holders is not None and len(holders) >= 8:  # graphs dropped without a walk
            release(tensor)
            holders = tensor._holders
        if holders is not None:
            holders.append(holder)
            continue
        array = tensor._data
        # an array the user made read-only, or a view of memory the tensor does not own,
        # is left as it is (its flags are not ours to change back)
        if type(array) is np.ndarray and array.base is None and array.flags.writeable:
            array.setflags(write=False)
            tensor._holders = [holder]


def reached(tensor):
    """The user reaches a tensor's array (.data, np.asarray, .numpy()): a leaf's lock is
    dropped if no graph that can be walked holds it any more; a result's array is locked
    while its own node can be walked (its rules and its consumers' saved it, and every
    consumer's walk passes through that node)."""
    if not tensor._prev:
        if tensor._holders is not None:
            release(tensor)
    elif tensor._holders is None and tensor._versions is not FREED:
        array = tensor._data
        if type(array) is np.ndarray and array.flags.writeable:
            array.setflags(write=False)
            tensor._holders = [weakref.ref(tensor)]


def _walkable(holder):
    node = holder()
    return node is not None and node._versions is not FREED


def release(tensor):
    """Make the tensor's array writable again if no graph that can be walked saved it."""
    holders = tensor._holders
    for holder in holders:
        node = holder()
        if node is not None and node._versions is not FREED:  # still held
            tensor._holders = [h for h in holders if _walkable(h)]
            return
    tensor._holders = None
    try:
        tensor._data.setflags(write=True)
    except ValueError:  # a view of an array that is itself still locked
        pass


def free(order):
    """After a walk: the graph cannot be walked again (PyTorch's rule), its saved
    arrays are dropped, and arrays locked only for it become writable (another graph
    may still hold some)."""
    for node in order:
        node._versions = FREED
        node._raw_args = node._residual = None
        if node._holders is not None:
            release(node)
        for leaf in node._leaves:
            if leaf._holders is not None:
                release(leaf)


def copied(args, arrays, positions):
    """A node's arguments with a copy of each NumPy array at ``positions`` (also put in
    ``arrays``): the user's own arrays, which nothing locks, so that a write into one
    (or into the array it is a view of) before backward changes no gradient. PyTorch and
    JAX copy a NumPy operand into an array of theirs too. While cr.jit records, nothing
    is copied: its program reads the user's array each time it runs, where a copy would
    be a constant frozen at the trace."""
    if _recording():
        return args
    for i in positions:
        arrays[i] = arrays[i].copy()
    return tuple(arrays[i] if i in positions else arg for i, arg in enumerate(args))


def copied_keywords(kwargs):
    """A node's keyword arguments with a copy of each of the user's NumPy arrays among
    them (an index, ``take_along_axis``'s indices, alone or in a tuple): kwargs itself
    where there is none, or while cr.jit records (as ``copied``)."""
    for value in kwargs.values():  # (the usual case, axis= and the like: a glance)
        kind = type(value)
        if kind is np.ndarray or (kind is tuple or kind is list) and _holds_an_array(value):
            break
    else:
        return kwargs
    if _recording():
        return kwargs
    return {name: _kept(value) for name, value in kwargs.items()}


def kept(value):
    """``value``, or a copy of it if it is the user's own writable NumPy array (as
    ``copied``: nothing is copied while cr.jit records)."""
    return value if _recording() else _kept(value)


def _recording():
    return recorders_open[0] and recorder() is not None


def _holds_an_array(parts):
    for part in parts:
        if type(part) is np.ndarray:
            return True
    return False


def _kept(value):
    if type(value) is np.ndarray:
        return value.copy() if value.flags.writeable else value
    if type(value) is tuple or type(value) is list:
        parts = [_kept(part) for part in value]
        if any(p is not q for p, q in zip(parts, value)):
            return type(value)(parts)
    return value


def user_arrays(values):
    """The positions of the user's own NumPy arrays among ``values``: writable, so a
    write after the operation would reach a rule that read them."""
    return [i for i, v in enumerate(values) if type(v) is np.ndarray and v.flags.writeable]


def share_version_counter(view, args):
    """A result that is a view of a tensor operand counts that tensor's writes as its own
    (they write into its memory too)."""
    for arg in args:
        version = getattr(arg, "_version", None)  # (a Tensor's)
        if version is not None and np.may_share_memory(view._data, arg._data):
            view._version = version
            return
