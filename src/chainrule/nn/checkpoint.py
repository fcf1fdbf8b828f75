"""Checkpoints: a model's weights in one file that loading cannot run code from.

A checkpoint is a **safetensors** file, the ecosystem's format for weights (what
Hugging Face and PyTorch users exchange; ``safetensors.torch.load_file`` reads ours):
an 8-byte length, a JSON header giving each array's dtype, shape and byte range, then
the raw bytes. chainrule's own facts ride in the header's ``__metadata__``, under
``"chainrule"``, as JSON::

    {"format": "chainrule", "version": 1, "architecture": ..., "names": [...],
     "metadata": ...}

``architecture`` is whatever JSON the caller (or ``module.architecture()``) gave to
rebuild the model, or null; ``names`` lists the arrays in state-dict order;
``metadata`` is any other JSON the caller keeps with the weights (``chainrule train``
keeps the data set and its split), or null. A nested state (an optimizer's
``state_dict()``: step counts, hyperparameters, dicts and lists) adds ``"tree"``: its
structure and numbers as JSON, each array in it a reference to a stored array (see
``_flattened``), so that ``load`` gives back the same dicts, lists, tuples, numbers and
arrays. A path ending in ``.npz`` is written in the older layout, a NumPy ``.npz``
archive with the same header as a ``"__chainrule__"`` entry; both are read, whatever
the name. A safetensors file written by another library
loads too (its arrays, with no architecture).

    save(model, "model.safetensors", architecture={"sizes": [2, 16, 1]})
    weights = load("model.safetensors")          # {"layers.0.weight": ndarray, ...}
    load_header("model.safetensors")["architecture"]

Why this shape:

* **Loading runs no code.** safetensors holds numbers only; ``.npz`` arrays are read
  with ``allow_pickle=False``, so a pickled Python object is refused, never unpickled.
  Every byte range and shape is checked against the file before anything is allocated.
* **A crash never destroys the last good checkpoint.** ``save`` writes a temporary
  file in the same directory and renames it over the target (``os.replace``, atomic on
  POSIX and Windows), so the target is either the old file or the new one. A save
  that was killed leaves its hidden temporary behind; the next save into the same
  folder removes it (once the process that wrote it is gone; where that cannot be
  told, once it is a day old).
* **Exactly the path given.** ``save`` and ``load`` use the path as written, whatever
  its suffix.
* **One error type.** Anything wrong with a file (missing, truncated, corrupted, not a
  checkpoint, a newer format) raises ``CheckpointError``, a ``ValueError`` whose message
  names the file and the problem.

>>> import pathlib, tempfile
>>> folder = tempfile.TemporaryDirectory()
>>> path = pathlib.Path(folder.name) / "model.ckpt"
>>> model = cr.nn.MLP([2, 4, 1], rng=0)
>>> cr.save(model, path)                         # the weights, and model.architecture()
>>> list(cr.load(path))
['layers.0.weight', 'layers.0.bias', 'layers.2.weight', 'layers.2.bias']
>>> folder.cleanup()

Called, the module is JAX's ``jax.checkpoint`` (``cr.remat``): the name is JAX's too, so
``cr.checkpoint(f)`` and ``@cr.checkpoint`` rematerialise, as in JAX code, while
``cr.checkpoint.save`` and ``from chainrule.checkpoint import CheckpointError`` are this
module's.

>>> block = cr.checkpoint(lambda x: cr.sin(cr.sin(x)))    # values computed again backward
>>> round(float(cr.grad(block)(1.0)), 6)
0.360039
"""

import os
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..tensor import Tensor
from ..scalar.value import Value
from ..transforms.ad_checkpoint import remat
from .checkpoint_format import (FORMAT_VERSION, HEADER_KEY, CheckpointError,
                                CheckpointNotFoundError, encode_header, open_file,
                                read_array, read_header, write_file)

__all__ = ["save", "load", "load_header", "CheckpointError", "CheckpointNotFoundError",
           "HEADER_KEY", "FORMAT_VERSION"]


# ---------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------

# module_or_state is Any: anything with a state_dict() method (a Module), or a mapping
# of names to ndarrays, Tensors, Values or numbers.
def save(module_or_state: Any, path: str | os.PathLike[str], architecture: Any = None, *,
         compress: bool = False, metadata: Any = None) -> None:
    """Write a model's weights to ``path`` (a str or ``pathlib.Path``, used as is).

    ``module_or_state`` is anything with ``state_dict()`` (a Module) or a dict
    ``name -> array``, whose values may be ndarrays, Tensors, Values or numbers. Dtypes
    and shapes (0-d included) are kept exactly. ``architecture`` is any JSON-able
    description of the model; when omitted, ``module.architecture()`` is used if the
    module has it. ``compress=True`` deflates the arrays (smaller, slower).
    ``metadata``: any other JSON-able facts to keep with the weights (``load_header``
    returns them).

    A state that holds dicts (an optimizer's ``state_dict()``, or ``{"model": ...,
    "optimizer": ..., "epoch": 3}``) is saved whole: its arrays as arrays, everything
    else (numbers, strings, None, lists, tuples, dicts with string or number keys) as
    JSON in the header, and ``load`` returns it as it was, each number of its own type.

    >>> import pathlib, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "tiny.ckpt"
    >>> cr.save({"w": np.eye(2, dtype=np.float32), "step": 3}, path)
    >>> weights = cr.load(path)
    >>> weights["w"].dtype, weights["step"].tolist()
    (dtype('float32'), 3)
    >>> folder.cleanup()
    """
    path = os.fspath(path)
    state = _state_of(module_or_state)
    arrays, tree = {}, None
    if any(_nested(value) for value in state.values()):
        tree = _flattened(state, (), arrays)
    else:
        for name, value in state.items():
            _check_name(name)
            arrays[name] = _as_array(name, value)
    if architecture is None:
        describe = getattr(module_or_state, "architecture", None)
        if callable(describe) and not isinstance(module_or_state, Mapping):
            architecture = describe()
    write_file(path, arrays, encode_header(architecture, list(arrays), metadata, tree),
               compress)


def _state_of(module_or_state):
    if isinstance(module_or_state, Mapping):
        return module_or_state
    state_dict = getattr(module_or_state, "state_dict", None)
    if not callable(state_dict):
        raise TypeError(f"checkpoint.save: expected a Module (with state_dict()) or a dict "
                        f"name -> array, got {type(module_or_state).__name__}")
    state = state_dict()
    if not isinstance(state, Mapping):
        raise TypeError(f"checkpoint.save: {type(module_or_state).__name__}.state_dict() "
                        f"returned {type(state).__name__}; expected a dict name -> array")
    return state


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise TypeError(f"checkpoint.save: every name must be a non-empty string, got "
                        f"{name!r}")
    if name == HEADER_KEY:
        raise ValueError(f"checkpoint.save: the name {HEADER_KEY!r} is reserved for the "
                         f"checkpoint's header; rename that entry")
    if "\x00" in name:  # a zip entry name ends at the first NUL
        raise ValueError(f"checkpoint.save: the name {name!r} contains a NUL character")


def _as_array(name, value):
    if isinstance(value, Tensor):
        value = value.data
    elif isinstance(value, Value):
        value = value.data
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":
        # Anything else (objects, strings) would need pickle, or is not a weight.
        raise TypeError(f"checkpoint.save: {name!r} has dtype {array.dtype} (from "
                        f"{type(value).__name__}); expected numbers: an array, Tensor, "
                        f"Value, int or float")
    return array


# ---------------------------------------------------------------------------------------
# A nested state (an optimizer's): its arrays stored as arrays, the rest in the header.
# Every container becomes a JSON object of one key saying what it was, so that no dict
# of the user's is ever read as one of these markers:
#     {"dict": [[key, value], ...]}  {"list": [...]}  {"tuple": [...]}
#     {"array": name}  (an ndarray)  {"scalar": name}  (a NumPy number, stored 0-d)
# and numbers, strings, booleans and None are themselves. Loading builds only these, so
# a file can make nothing but dicts, lists, tuples, numbers, strings and arrays.
# ---------------------------------------------------------------------------------------

_KEY_TYPES = (str, int, float, bool, type(None))  # JSON's own values: a key's types


def _nested(value):
    """Whether a state's value needs the tree (a dict, or what no array holds)."""
    if isinstance(value, Mapping) or value is None or isinstance(value, str):
        return True
    return isinstance(value, (list, tuple)) and any(_nested(v) for v in value)


def _flattened(value, path, arrays):
    """The JSON of ``value`` (at ``path``, the keys leading to it), its arrays added to
    ``arrays`` under names made of that path (``state.0.exp_avg``)."""
    if isinstance(value, np.generic):  # (before float: np.float64 is a float too)
        return {"scalar": _stored(value, path, arrays)}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (np.ndarray, Tensor, Value)):
        return {"array": _stored(value, path, arrays)}
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, _KEY_TYPES):
                raise TypeError(f"checkpoint.save: the key {key!r} at {_shown(path)} is a "
                                f"{type(key).__name__}; keys must be strings or numbers")
        return {"dict": [[key, _flattened(v, path + (key,), arrays)]
                         for key, v in value.items()]}
    if isinstance(value, (list, tuple)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [_flattened(v, path + (i,), arrays) for i, v in enumerate(value)]}
    raise TypeError(f"checkpoint.save: {_shown(path)} is a {type(value).__name__}; a saved "
                    f"state holds arrays, Tensors, numbers, strings, None, and dicts, lists "
                    f"and tuples of them")


def _stored(value, path, arrays):
    name = ".".join(str(key) for key in path) or "array"
    unique, n = name, 1
    while unique in arrays or unique == HEADER_KEY:  # ({0: ...} and {"0": ...} both)
        n += 1
        unique = f"{name}#{n}"
    _check_name(unique)
    arrays[unique] = _as_array(unique, value)
    return unique


def _shown(path):
    return "".join(f"[{key!r}]" for key in path) or "the top level"


def _rebuilt(node, arrays, file):
    """The value the JSON ``node`` of a header's tree stands for (see ``_flattened``),
    read from ``file``."""
    if isinstance(node, (bool, int, float, str)) or node is None:
        return node
    if isinstance(node, dict) and len(node) == 1:
        (kind, body), = node.items()
        if kind in ("array", "scalar") and isinstance(body, str) and body in arrays:
            return arrays[body] if kind == "array" else arrays[body][()]
        if kind in ("list", "tuple") and isinstance(body, list):
            items = [_rebuilt(item, arrays, file) for item in body]
            return items if kind == "list" else tuple(items)
        if kind == "dict" and isinstance(body, list) and all(
                isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], _KEY_TYPES)
                for pair in body):
            return {key: _rebuilt(item, arrays, file) for key, item in body}
    raise CheckpointError(f"{file}: corrupted checkpoint header: the saved state holds "
                          f"{node!r:.80}, which is none of its kinds of values")


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------

class LoadedState(dict):
    """The arrays of a checkpoint, and the format version they were written in
    (``format_version``): ``Module.load_state_dict`` brings an older layout up to date."""

    def __init__(self, arrays, format_version):
        super().__init__(arrays)
        self.format_version = format_version


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The arrays of a checkpoint: a dict ``name -> ndarray``, in the order saved.

    A nested state (an optimizer's ``state_dict()``) comes back as it was saved: the
    same dicts, lists, tuples, numbers and strings, with its arrays in place.

    Raises ``CheckpointError`` (naming the file and the problem) for a missing,
    truncated, corrupted or foreign file, or one written by a newer chainrule.

    >>> import pathlib, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "model.ckpt"
    >>> model = cr.nn.Linear(2, 1, rng=0)
    >>> cr.save(model, path)
    >>> copy = cr.nn.Linear(2, 1, rng=1)
    >>> copy.load_state_dict(cr.load(path))
    <All keys matched successfully>
    >>> copy.weight.data.tolist() == model.weight.data.tolist()
    True
    >>> opt = cr.optim.Adam(model.parameters(), lr=0.01)    # an optimizer's state too
    >>> model(cr.ones(1, 2)).sum().backward()
    >>> opt.step()
    >>> cr.save(opt.state_dict(), path)
    >>> state = cr.load(path)
    >>> state["state"][0]["step"], state["param_groups"][0]["betas"]
    (1, (0.9, 0.999))
    >>> cr.optim.Adam(copy.parameters()).load_state_dict(state)   # resumes from it
    >>> folder.cleanup()
    """
    path = os.fspath(path)
    with open_file(path) as archive:
        header = read_header(archive, path)
        names = header["names"]
        stored = [key for key in archive.files if key != HEADER_KEY]
        if sorted(stored) != sorted(names):
            missing = sorted(set(names) - set(stored))
            extra = sorted(set(stored) - set(names))
            raise CheckpointError(f"{path}: corrupted checkpoint: the header lists "
                                  f"{len(names)} arrays, the file holds {len(stored)}"
                                  f"{'; missing: ' + ', '.join(missing) if missing else ''}"
                                  f"{'; unlisted: ' + ', '.join(extra) if extra else ''}")
        arrays = {name: read_array(archive, name, path) for name in names}
    if "tree" not in header:
        return LoadedState(arrays, header["version"])
    try:
        state = _rebuilt(header["tree"], arrays, path)
    except RecursionError:
        raise CheckpointError(f"{path}: corrupted checkpoint header: the saved state is "
                              f"nested too deep") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: corrupted checkpoint header: the saved state is "
                              f"a {type(state).__name__}, not a dict")
    return LoadedState(state, header["version"])


def load_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The checkpoint's JSON header as a dict: ``format``, ``version``,
    ``architecture``, ``names`` and ``metadata``. Reads no array but the header.

    >>> import pathlib, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "model.ckpt"
    >>> cr.save(cr.nn.MLP([2, 3, 1], rng=0), path)
    >>> cr.checkpoint.load_header(path)["architecture"]
    {'type': 'MLP', 'sizes': [2, 3, 1], 'activation': 'relu', 'dropout': 0.0}
    >>> folder.cleanup()
    """
    path = os.fspath(path)
    with open_file(path) as archive:
        return read_header(archive, path)


# ---------------------------------------------------------------------------------------
# A model from a checkpoint of `chainrule train`: rebuilt from its header, checked
# against the file's arrays and for numbers that are not finite (chainrule eval)
# ---------------------------------------------------------------------------------------

def refuse_non_finite(state, path):
    """A model with a NaN or infinite number would evaluate to a plausible-looking
    accuracy (10% on MNIST: every prediction the same): refused instead, naming the
    first array that holds one and how many."""
    for name, array in state.items():
        bad = array.size - int(np.count_nonzero(np.isfinite(array)))
        if bad:
            raise ValueError(f"{path}: the parameter {name} holds {bad:,} NaN or infinite "
                             f"number{'s' if bad > 1 else ''} (of {array.size:,}); the file "
                             f"is corrupted, or the run that wrote it diverged")


def _positive_ints(value, count=None):
    return (isinstance(value, list) and (count is None or len(value) >= count) and
            all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value))


def _layer_sizes(architecture, path):
    """The layer sizes of a checkpoint's MLP; ValueError (one line) if the header does
    not describe one."""
    if not isinstance(architecture, dict):
        raise ValueError(f"{path}: no architecture this command can rebuild (expected a "
                         f"JSON object, found {architecture!r:.80})")
    kind = architecture.get("type")
    if kind == "MLP":
        sizes = architecture.get("sizes")
        if not _positive_ints(sizes, 2):
            raise ValueError(f"{path}: corrupted architecture: 'sizes' should list at least "
                             f"two positive integers, got {sizes!r:.80}")
        return sizes
    if kind == "ScalarMLP":
        nin, nouts = architecture.get("nin"), architecture.get("nouts")
        if not _positive_ints([nin]) or not _positive_ints(nouts, 1):
            raise ValueError(f"{path}: corrupted architecture: 'nin' should be a positive "
                             f"integer and 'nouts' a list of them, got {nin!r:.40} and "
                             f"{nouts!r:.80}")
        return [nin] + nouts
    raise ValueError(f"{path}: no architecture this command can rebuild (found type "
                     f"{kind!r:.80}; expected 'MLP' or 'ScalarMLP')")


def rebuild_model(architecture, path, state):
    """(the model a checkpoint's header describes, with fresh weights; its engine; its
    layer sizes). The sizes are checked against the arrays of the file (``state``)
    first, so a damaged header cannot make this allocate more than the file holds."""
    from . import MLP
    from .scalar import MLP as ScalarMLP
    sizes = _layer_sizes(architecture, path)
    described = sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))
    held = sum(int(a.size) for a in state.values())
    if described != held:
        raise ValueError(f"{path}: corrupted checkpoint: its architecture has "
                         f"{described:,} parameters but the file holds {held:,} numbers")
    if architecture["type"] == "MLP":
        return MLP(sizes, activation=architecture.get("activation", "relu")), "tensor", sizes
    model = ScalarMLP(sizes[0], sizes[1:], nonlin=architecture.get("nonlin", "relu"),
                      activate_output=architecture.get("activate_output", False))
    return model, "scalar", sizes


# ---------------------------------------------------------------------------------------
# cr.checkpoint(f): JAX's name for rematerialisation is this module's name. JAX code
# writes ``jax.checkpoint(f)``; chainrule's users write ``cr.checkpoint.save(...)`` and
# ``from chainrule.checkpoint import CheckpointError``. Both hold because the module
# itself is callable: calling it is ``cr.remat`` (transforms/ad_checkpoint.py). A plain
# function at ``cr.checkpoint`` would not do: importing this module sets the package's
# attribute back to the module. This is the one place that makes it callable.
# ---------------------------------------------------------------------------------------

class _CallableModule(types.ModuleType):
    """This module, which called is ``cr.remat`` (JAX's ``jax.checkpoint``). Type
    checkers know no callable module, so chainrule/__init__.py declares ``cr.checkpoint``
    of this class for them, and the class spells the module's names (its ``__all__``,
    which tests/test_types.py compares) as they see them."""

    __call__ = staticmethod(remat)
    # (typing.TYPE_CHECKING, not imported: make_api_docs.py names a default by the
    # module's upper-case constant of that value, and save's compress=False would show it)
    if typing.TYPE_CHECKING:
        save = staticmethod(save)
        load = staticmethod(load)
        load_header = staticmethod(load_header)
        CheckpointError = CheckpointError
        CheckpointNotFoundError = CheckpointNotFoundError
        HEADER_KEY = HEADER_KEY
        FORMAT_VERSION = FORMAT_VERSION


sys.modules[__name__].__class__ = _CallableModule
