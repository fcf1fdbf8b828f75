"""The IDX format of the MNIST files: read, write, and load the four standard files.

An IDX file is: two zero bytes, a type code, the number of dimensions n, then n
big-endian uint32 sizes, then the values, big-endian, in C order. The files are usually
gzipped; that is detected from the content (gzip's magic bytes), not from the name.
"""

import gzip as _gzip
import os
import struct
import zlib

import numpy as np

__all__ = ["read_idx", "write_idx", "load_mnist", "MNIST_NAMES"]

# IDX type code -> numpy dtype (big-endian, as stored)
_CODE_TO_DTYPE = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_KIND_SIZE_TO_CODE = {(d.kind, d.itemsize): code for code, d in _CODE_TO_DTYPE.items()}
_GZIP_MAGIC = b"\x1f\x8b"

# The four files of MNIST, without the ".gz" that the downloaded copies carry.
MNIST_NAMES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


def _read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != _GZIP_MAGIC:
        return raw
    try:
        return _gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{path}: corrupt or truncated gzip data ({e})") from None


def read_idx(path):
    """Read an IDX file, plain or gzipped, into a numpy array of the shape it declares.

    The dtype is the one the file stores (uint8, int8, int16, int32, float32 or float64),
    in native byte order. Raises ValueError for a bad magic number, an unknown type code,
    or data shorter or longer than the declared shape needs.

    >>> import pathlib, tempfile
    >>> from chainrule.data import read_idx, write_idx
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "labels-idx1-ubyte"
    >>> write_idx(path, np.array([3, 1, 4], dtype=np.uint8))
    >>> read_idx(path)
    array([3, 1, 4], dtype=uint8)
    >>> folder.cleanup()
    """
    raw = _read_bytes(path)
    if len(raw) < 4:
        raise ValueError(f"{path}: truncated IDX header: {len(raw)} bytes, expected at least 4")
    zero0, zero1, code, ndim = raw[0], raw[1], raw[2], raw[3]
    if zero0 != 0 or zero1 != 0:
        raise ValueError(
            f"{path}: not an IDX file: magic starts with bytes {raw[:2].hex(' ')}, expected 00 00"
        )
    if code not in _CODE_TO_DTYPE:
        known = ", ".join(f"0x{c:02X}" for c in _CODE_TO_DTYPE)
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02X}, expected one of {known}")
    header_size = 4 + 4 * ndim
    if len(raw) < header_size:
        raise ValueError(
            f"{path}: truncated IDX header: {ndim} dimensions need {header_size} bytes, "
            f"file has {len(raw)}"
        )
    shape = struct.unpack(f">{ndim}I", raw[4:header_size])
    dtype = _CODE_TO_DTYPE[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = len(raw) - header_size
    if found != expected:
        what = "truncated" if found < expected else "too long"
        raise ValueError(
            f"{path}: IDX data {what}: shape {shape} of {dtype.name} needs {expected} bytes "
            f"after the header, found {found}"
        )
    array = np.frombuffer(raw, dtype=dtype, offset=header_size).reshape(shape)
    return array.astype(dtype.newbyteorder("="))  # a native, writable copy


def write_idx(path, array, gzip=None):
    """Write ``array`` (any shape) as an IDX file; gzipped if ``gzip``, or by default if
    ``path`` ends in ".gz".

    The dtype must be one IDX has: uint8, int8, int16, int32, float32 or float64 (cast
    first otherwise). The gzip stream carries no timestamp, so the same array always
    gives the same bytes.

    >>> import pathlib, tempfile
    >>> from chainrule.data import read_idx, write_idx
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "images-idx3-ubyte.gz"    # .gz: gzipped
    >>> write_idx(path, np.zeros((2, 28, 28), dtype=np.uint8))
    >>> read_idx(path).shape, path.stat().st_size < 2 * 28 * 28     # zeros pack small
    ((2, 28, 28), True)
    >>> folder.cleanup()
    """
    array = np.asarray(array)
    code = _KIND_SIZE_TO_CODE.get((array.dtype.kind, array.dtype.itemsize))
    if code is None or array.dtype.kind == "b":
        raise ValueError(
            f"write_idx: IDX cannot store dtype {array.dtype}; expected uint8, int8, int16, "
            "int32, float32 or float64"
        )
    if array.ndim > 255 or any(n >= 2**32 for n in array.shape):
        raise ValueError(f"write_idx: shape {array.shape} does not fit IDX (<= 255 dims < 2**32)")
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + np.ascontiguousarray(array, dtype=_CODE_TO_DTYPE[code]).tobytes()
    if gzip is None:
        gzip = os.fspath(path).endswith(".gz")
    if gzip:
        data = _gzip.compress(data, mtime=0)
    with open(path, "wb") as f:
        f.write(data)


def _find(data_dir, name):
    """The path of ``name`` or ``name.gz`` in ``data_dir`` (the plain one wins)."""
    for candidate in (name, name + ".gz"):
        path = os.path.join(data_dir, candidate)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        f"MNIST file {name}.gz (or {name}) not found in {data_dir}; "
        f"`chainrule data fetch mnist --to {data_dir}` fetches it"
    )


def _load_pair(data_dir, images_path, labels_path, dtype):
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3 or images.dtype != np.uint8:
        raise ValueError(
            f"{images_path}: expected uint8 images of shape (n, rows, cols), "
            f"got {images.dtype} of shape {images.shape}"
        )
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise ValueError(
            f"{labels_path}: expected uint8 labels of shape (n,), "
            f"got {labels.dtype} of shape {labels.shape}"
        )
    if len(images) != len(labels):
        raise ValueError(
            f"MNIST in {data_dir}: {os.path.basename(images_path)} has {len(images)} images "
            f"but {os.path.basename(labels_path)} has {len(labels)} labels; expected equal counts"
        )
    if labels.size and labels.max() > 9:
        raise ValueError(f"{labels_path}: expected labels 0..9, found {int(labels.max())}")
    n, rows, cols = images.shape
    X = images.reshape(n, rows * cols).astype(dtype) / dtype.type(255)
    return X, labels.astype(np.int64)


def load_mnist(data_dir, dtype=np.float64):
    """MNIST from the four standard IDX files in ``data_dir`` (each plain or gzipped).

    Returns ``(X_train, y_train, X_test, y_test)``: X_train of shape (60000, 784) and
    X_test of shape (10000, 784), pixels scaled to [0, 1] as ``dtype`` (float64 takes
    ~440 MB in all; float32 half that); y_train and y_test int64 labels 0..9. A missing
    file raises FileNotFoundError naming it; mismatched counts or shapes raise ValueError.

    Here, two tiny blank images per part stand in for the real files (``fetch_mnist``
    downloads those):

    >>> import pathlib, tempfile
    >>> from chainrule.data import MNIST_NAMES, load_mnist, write_idx
    >>> folder = tempfile.TemporaryDirectory()
    >>> for key, name in MNIST_NAMES.items():
    ...     part = (np.zeros((2, 28, 28), np.uint8) if key.endswith("images")
    ...             else np.array([3, 7], np.uint8))
    ...     write_idx(pathlib.Path(folder.name) / (name + ".gz"), part)
    >>> X_train, y_train, X_test, y_test = load_mnist(folder.name)
    >>> X_train.shape, y_train.tolist()
    ((2, 784), [3, 7])
    >>> folder.cleanup()
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"load_mnist: dtype must be a float type, got {dtype}")
    data_dir = os.fspath(data_dir)
    # all four located before any is decoded: a missing file fails at once
    paths = {key: _find(data_dir, name) for key, name in MNIST_NAMES.items()}
    X_train, y_train = _load_pair(data_dir, paths["train_images"], paths["train_labels"], dtype)
    X_test, y_test = _load_pair(data_dir, paths["test_images"], paths["test_labels"], dtype)
    return X_train, y_train, X_test, y_test
