"""The bytes of a checkpoint file: writing them so that a crash never leaves half a file,
and reading them back without trusting them.

Two layouts hold the same JSON header (``encode_header``) and the arrays:

* safetensors: an 8-byte little-endian length, a JSON object giving each array's dtype,
  shape and byte range (chainrule's header as a string in its ``__metadata__``, under
  ``"chainrule"``), then the raw bytes;
* ``.npz``: a zip of ``.npy`` members, as ``np.savez`` writes, the header a uint8 array
  named ``HEADER_KEY``.

``write_file`` writes either through a temporary renamed over the target;
``open_file`` opens either as an archive with ``files`` and ``archive[name]``, which
``read_header`` and ``read_array`` read, checking every range and shape against the
file first. Anything wrong with a file raises ``CheckpointError``.
"""

import contextlib
import json
import os
import re
import secrets
import time
import zipfile
import zlib

import numpy as np

__all__ = ["HEADER_KEY", "FORMAT_VERSION", "CheckpointError", "CheckpointNotFoundError",
           "encode_header", "write_file", "open_file", "read_header", "read_array"]

HEADER_KEY = "__chainrule__"
# The newest format this code writes and reads. 2: nn.Linear's weight in PyTorch's layout,
# (out_features, in_features); version 1 stored it (in, out), and loads transposed
# (Module.load_state_dict, by the version cr.load hands it).
FORMAT_VERSION = 2

_ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip
_NPY_START = b"\x93NUMPY"


class CheckpointError(ValueError):
    """A checkpoint file is missing, unreadable, corrupted, or not a checkpoint.

    A ValueError; its message names the file and the problem.

    >>> import pathlib, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "notes.txt"
    >>> _ = path.write_text("not a checkpoint")
    >>> try:
    ...     cr.load(path)
    ... except cr.checkpoint.CheckpointError as err:
    ...     print(str(err).split(": ", 1)[1])
    not a chainrule checkpoint (neither safetensors nor a .npz archive)
    >>> folder.cleanup()
    """


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """The checkpoint file does not exist (also a ``FileNotFoundError``).

    >>> try:
    ...     cr.load("no-such-file.ckpt")
    ... except FileNotFoundError as err:
    ...     print(type(err).__name__, "-", err)
    CheckpointNotFoundError - no-such-file.ckpt: no such checkpoint file
    """


def encode_header(architecture, names, metadata, tree=None):
    """The JSON text of a checkpoint's header: the format, its version, the architecture,
    the arrays' names in order, the metadata when given, and the ``tree`` of a nested
    state (an optimizer's) when there is one."""
    header = {"format": "chainrule", "version": FORMAT_VERSION,
              "architecture": architecture, "names": list(names)}
    if metadata is not None:
        header["metadata"] = metadata
    if tree is not None:
        header["tree"] = tree
    try:
        return json.dumps(header, default=_json_default)
    except (TypeError, ValueError) as err:
        raise TypeError(f"checkpoint.save: the architecture (and metadata) must be JSON "
                        f"data (dicts, lists, strings, numbers, booleans, None): {err}"
                        ) from None


def _json_default(obj):
    # NumPy numbers and arrays in an architecture are written as plain JSON.
    if isinstance(obj, (np.generic, np.ndarray)):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} {obj!r} is not JSON-serializable")


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------

def write_file(path, arrays, text, compress):
    """``arrays`` (name -> ndarray) and the header ``text`` at ``path``: a ``.npz``
    archive when the path ends so (deflated with ``compress``), else safetensors."""
    if path.endswith(".npz"):
        header_array = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        entries = [(HEADER_KEY, header_array), *arrays.items()]
        _write_atomically(path, lambda f: _write_npz(f, entries, compress))
        return
    if compress:
        raise ValueError(f"checkpoint.save: compress=True is for .npz files; a "
                         f"safetensors file ({path!r}) holds the raw bytes (name the file "
                         f"...npz to compress it)")
    _write_atomically(path, lambda f: _write_safetensors(f, arrays, text, path))


# safetensors' dtype codes, by NumPy's kind and size (complex numbers have none)
_SAFETENSORS_CODES = {"f8": "F64", "f4": "F32", "f2": "F16", "i8": "I64", "i4": "I32",
                      "i2": "I16", "i1": "I8", "u8": "U64", "u4": "U32", "u2": "U16",
                      "u1": "U8", "b1": "BOOL"}
_SAFETENSORS_DTYPES = {code: np.dtype(f"<{kind}") if kind[0] != "b" else np.dtype(bool)
                       for kind, code in _SAFETENSORS_CODES.items()}


def _write_safetensors(f, arrays, text, path):
    """The safetensors layout: the header's length (8 bytes, little-endian), the header
    (JSON, padded with spaces to a multiple of 8 bytes), then each array's bytes."""
    header, offset, blobs = {"__metadata__": {"chainrule": text}}, 0, []
    for name, array in arrays.items():
        code = _SAFETENSORS_CODES.get(f"{array.dtype.kind}{array.dtype.itemsize}")
        if code is None:
            raise TypeError(f"checkpoint.save: {name!r} has dtype {array.dtype}, which "
                            f"safetensors cannot hold; save to a .npz path instead")
        array = np.asarray(array, dtype=_SAFETENSORS_DTYPES[code], order="C")  # (0-d stays)
        header[name] = {"dtype": code, "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
        blobs.append(array)
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)
    f.write(len(encoded).to_bytes(8, "little"))
    f.write(encoded)
    for array in blobs:
        f.write(array.tobytes() if array.ndim == 0 else array.data)


def _write_npz(f, entries, compress):
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(f, "w", compression=method) as archive:
        for name, array in entries:
            # The layout np.savez writes: "<name>.npy" members, zip64 allowed.
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _write_atomically(path, write):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"checkpoint.save: cannot write {path!r}: the directory "
                                f"{directory!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"checkpoint.save: cannot write {path!r}: it is a directory")
    _remove_abandoned_temporaries(directory)
    # Same directory as the target, so os.replace is a rename within one file system;
    # the process id in the name tells a later save whether its writer is still alive.
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}."
                                        f"{secrets.token_hex(6)}.tmp")
    # O_EXCL: never clobber another file; mode 0o666 lets the umask decide, as open() does.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the name points at it
        os.replace(temporary, path)
    except BaseException:  # KeyboardInterrupt too: never leave the temporary behind
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _sync_directory(directory)


_ABANDONED_AFTER_S = 24 * 3600  # where a process cannot be asked whether it lives


# ".model.npz.4242.0123456789ab.tmp": the target's name, the writer's process id (absent
# in files of older versions) and a random part.
_TEMPORARY = re.compile(r"\..+?\.(?:(\d+)\.)?[0-9a-f]{12}\.tmp")


def _remove_abandoned_temporaries(directory):
    """Delete the temporaries of saves into ``directory`` that were killed before their
    rename: those whose writing process has exited, or, where that cannot be told
    (Windows, no process id in the name), that are a day old. A save still running
    keeps its file."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            match = _TEMPORARY.fullmatch(entry.name)
            if match and entry.is_file(follow_symlinks=False) and _abandoned(
                    match.group(1), entry):
                with contextlib.suppress(OSError):
                    os.remove(entry.path)


def _abandoned(pid, entry):
    if pid is None or os.name != "posix":
        return time.time() - entry.stat().st_mtime > _ABANDONED_AFTER_S
    pid = int(pid)
    if pid == os.getpid():
        return False  # another thread of this process may be writing it now
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except OSError:  # it exists, under another user
        return False
    return False


def _sync_directory(directory):
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------

@contextlib.contextmanager
def open_file(path):
    """The file as an open ``NpzFile``, after checking it is there and is a zip."""
    if not os.path.exists(path):
        hint = ""
        if os.path.exists(path + ".npz"):
            hint = f" (there is {path + '.npz'!r}: np.savez adds .npz to names without it)"
        raise CheckpointNotFoundError(f"{path}: no such checkpoint file{hint}")
    if os.path.isdir(path):
        raise CheckpointError(f"{path}: is a directory, not a checkpoint file")
    try:
        f = open(path, "rb")
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read the file: {err.strerror or err}") from None
    with f:
        start = f.read(8)  # (enough for every format's first bytes)
        if not start:
            raise CheckpointError(f"{path}: the file is empty, not a chainrule checkpoint")
        if _looks_like_safetensors(f, start):
            f.seek(0)
            yield _Safetensors(f, path)
            return
        if not start.startswith(_ZIP_STARTS):
            if any(z.startswith(start) for z in _ZIP_STARTS):
                problem = "truncated (it ends after a few bytes)"
            elif start.startswith(_NPY_START):
                problem = "a single .npy array, not a chainrule checkpoint (.npz archive)"
            else:
                problem = "not a chainrule checkpoint (neither safetensors nor a .npz archive)"
            raise CheckpointError(f"{path}: {problem}")
        f.seek(0)
        try:
            # allow_pickle=False: a pickle inside is refused when read, never executed.
            archive = np.load(f, allow_pickle=False)
        except (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError,
                NotImplementedError) as err:
            raise CheckpointError(f"{path}: truncated or corrupted checkpoint (cannot "
                                  f"read the archive: {err})") from None
        try:
            yield archive
        finally:
            archive.close()


def _looks_like_safetensors(f, start):
    """A header length that fits in the file, followed by a JSON object."""
    size = os.fstat(f.fileno()).st_size
    if len(start) < 8:
        return False
    length = int.from_bytes(start[:8], "little")
    if not 2 <= length <= size - 8:
        return False
    f.seek(8)
    return f.read(1) == b"{"


class _Safetensors:
    """A safetensors file read as an ``NpzFile`` is: ``files`` (the names, the header
    first) and ``archive[name]`` (one array, read when asked)."""

    _MAX_HEADER = 100 * 2 ** 20

    def __init__(self, f, path):
        self.f, self.path = f, path
        size = os.fstat(f.fileno()).st_size
        length = int.from_bytes(f.read(8), "little")
        if length > self._MAX_HEADER:
            raise CheckpointError(f"{path}: corrupted checkpoint: a safetensors header of "
                                  f"{length:,} bytes")
        try:
            entries = json.loads(f.read(length).decode("utf-8"))
            if not isinstance(entries, dict):
                raise ValueError("the header is not a JSON object")
        except (ValueError, UnicodeDecodeError) as err:
            raise CheckpointError(f"{path}: corrupted safetensors header: {err}") from None
        metadata = entries.pop("__metadata__", None) or {}
        self.start, data_size = 8 + length, size - 8 - length
        self.entries = {}
        for name, entry in entries.items():
            self.entries[name] = self._checked(name, entry, data_size)
        names = sorted(self.entries, key=lambda n: self.entries[n][2])
        text = metadata.get("chainrule") if isinstance(metadata, dict) else None
        if text is None:  # another library's file: its arrays, with nothing to rebuild
            text = json.dumps({"format": "chainrule", "version": 1, "architecture": None,
                               "names": names})
        self.header = np.frombuffer(str(text).encode("utf-8"), dtype=np.uint8)
        self.files = [HEADER_KEY, *names]

    def _checked(self, name, entry, data_size):
        """(dtype, shape, start, end) of an entry, after checking it against the file
        (before any array is allocated: a damaged shape could ask for any amount)."""
        try:
            dtype = _SAFETENSORS_DTYPES[entry["dtype"]]
            shape = tuple(entry["shape"])
            begin, end = entry["data_offsets"]
            if not all(isinstance(d, int) and d >= 0 for d in (*shape, begin, end)):
                raise ValueError("negative or non-integer sizes")
        except (KeyError, TypeError, ValueError) as err:
            raise CheckpointError(f"{self.path}: corrupted safetensors header: the entry "
                                  f"{name!r} is {entry!r:.80} ({err})") from None
        if not begin <= end <= data_size or \
                end - begin != int(np.prod(shape, dtype=object)) * dtype.itemsize:
            raise CheckpointError(f"{self.path}: truncated or corrupted checkpoint: "
                                  f"{name!r} (shape {shape}, {dtype}) does not fit bytes "
                                  f"{begin}..{end} of the {data_size} after the header")
        return dtype, shape, begin, end

    def __getitem__(self, name):
        if name == HEADER_KEY:
            return self.header
        dtype, shape, begin, end = self.entries[name]
        self.f.seek(self.start + begin)
        data = self.f.read(end - begin)
        if len(data) != end - begin:
            raise CheckpointError(f"{self.path}: truncated checkpoint: {name!r} ends early")
        return np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)

    def close(self):
        pass  # (the file is closed by open_file)


def read_array(archive, name, path):
    try:
        array = archive[name]
    except CheckpointError:
        raise
    except ValueError as err:
        if "pickle" in str(err).lower():
            raise CheckpointError(f"{path}: {name!r} holds pickled Python objects; "
                                  f"refusing to load it, since unpickling can run "
                                  f"arbitrary code (a checkpoint holds numbers only)"
                                  ) from None
        raise CheckpointError(f"{path}: corrupted checkpoint: cannot read {name!r}: "
                              f"{err}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError, OverflowError,
            # zipfile's answers to flag bits flipped by corruption: "encrypted",
            # "unsupported compression method", "zip file version 16.1"
            RuntimeError, NotImplementedError) as err:
        raise CheckpointError(f"{path}: truncated or corrupted checkpoint: cannot read "
                              f"{name!r}: {err}") from None
    except MemoryError:  # the shape is read before the checksum: a damaged one can be huge
        raise CheckpointError(f"{path}: cannot read {name!r}: its shape asks for more "
                              f"memory than is available (a corrupted checkpoint, or one "
                              f"too big for this machine)") from None
    if not isinstance(array, np.ndarray):  # NumPy hands back raw bytes for a non-.npy entry
        raise CheckpointError(f"{path}: corrupted checkpoint: {name!r} is not a .npy array")
    return array


def read_header(archive, path):
    if HEADER_KEY not in archive.files:
        found = ", ".join(archive.files[:5]) + (", ..." if len(archive.files) > 5 else "")
        raise CheckpointError(f"{path}: not a chainrule checkpoint: no {HEADER_KEY!r} "
                              f"header (a plain .npz? it holds: {found or 'nothing'})")
    raw = read_array(archive, HEADER_KEY, path)
    try:
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError(f"expected a 1-d uint8 array, got {raw.dtype} {raw.shape}")
        header = json.loads(raw.tobytes().decode("utf-8"))
        if not isinstance(header, dict):
            raise ValueError(f"expected a JSON object, got {type(header).__name__}")
    except (ValueError, UnicodeDecodeError, RecursionError) as err:  # (nested too deep)
        raise CheckpointError(f"{path}: corrupted checkpoint header: {err}") from None
    if header.get("format") != "chainrule":
        raise CheckpointError(f"{path}: not a chainrule checkpoint: the header's format is "
                              f"{header.get('format')!r}, expected 'chainrule'")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise CheckpointError(f"{path}: corrupted checkpoint header: version {version!r}, "
                              f"expected a positive integer")
    if version > FORMAT_VERSION:
        raise CheckpointError(f"{path}: written in checkpoint format version {version}, "
                              f"newer than this chainrule reads (up to {FORMAT_VERSION}); "
                              f"upgrade chainrule to load it")
    names = header.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CheckpointError(f"{path}: corrupted checkpoint header: 'names' should be a "
                              f"list of strings, got {names!r}")
    if len(set(names)) != len(names):
        raise CheckpointError(f"{path}: corrupted checkpoint header: 'names' repeats a name")
    header.setdefault("architecture", None)
    header.setdefault("metadata", None)
    return header
