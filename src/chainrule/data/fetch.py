"""Download MNIST's four files, checked against known sizes and SHA-256 hashes.

This is the only place in chainrule that touches the network. A file is written under a
temporary name in the target directory and renamed only once it is complete and
verified, so an interrupted or corrupted download never leaves a file that looks right.
"""

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request

__all__ = ["fetch_mnist", "FetchError", "MNIST_FILES", "MNIST_URL"]

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"

# name -> (size in bytes, SHA-256) of the gzipped files as served at MNIST_URL
MNIST_FILES = {
    "train-images-idx3-ubyte.gz": (
        9912422, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
    "train-labels-idx1-ubyte.gz": (
        28881, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
    "t10k-images-idx3-ubyte.gz": (
        1648877, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
    "t10k-labels-idx1-ubyte.gz": (
        4542, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
}

_CHUNK = 1 << 16


class FetchError(OSError):
    """A download failed or did not match its expected size or hash; nothing was written.

    An OSError, like the network errors it reports, so ``except OSError`` catches it.

    >>> import tempfile
    >>> from chainrule.data import FetchError, fetch_mnist
    >>> folder = tempfile.TemporaryDirectory()
    >>> files = {"x.gz": (3, "0" * 64)}                  # a file that is nowhere
    >>> try:
    ...     fetch_mnist(folder.name, base_url="file:///no/such/dir/", files=files)
    ... except FetchError as err:
    ...     print(type(err).__name__, isinstance(err, OSError))
    FetchError True
    >>> folder.cleanup()
    """


def _sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _is_verified(path, size, sha256):
    """Whether ``path`` exists with the expected size (checked first: cheap) and hash."""
    return (
        os.path.isfile(path)
        and os.path.getsize(path) == size
        and _sha256_of(path) == sha256.lower()
    )


def _download(url, name, target, size, sha256, progress, timeout):
    """Stream ``url`` to a temporary file beside ``target``, verify it, then rename it."""
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
    try:
        digest, received = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    if progress:
                        progress(name, 0, size)
                    while chunk := response.read(_CHUNK):
                        received += len(chunk)
                        if received > size:  # stop reading: a wrong file may be any size
                            raise FetchError(
                                f"{name} from {url} is larger than the expected {size} bytes "
                                f"(expected SHA-256 {sha256}); refused, nothing written"
                            )
                        digest.update(chunk)
                        out.write(chunk)
                        if progress:
                            progress(name, received, size)
            except FetchError:
                raise
            except urllib.error.HTTPError as e:
                raise FetchError(f"{name}: HTTP {e.code} {e.reason} from {url}") from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                raise FetchError(f"{name}: could not download {url}: {reason}") from None
        got = digest.hexdigest()
        if received != size or got != sha256.lower():
            raise FetchError(
                f"{name} from {url} does not match: {received} bytes with SHA-256 {got}, "
                f"expected {size} bytes with SHA-256 {sha256}; refused, nothing written"
            )
        os.replace(tmp, target)
    except BaseException:
        # also on KeyboardInterrupt: never leave a partial file behind
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise


def fetch_mnist(to_dir, base_url=MNIST_URL, files=MNIST_FILES, progress=None, timeout=60):
    """Download MNIST's gzipped IDX files into ``to_dir`` (created if needed).

    ``files`` maps each file name to ``(size_in_bytes, sha256)``; each is fetched from
    ``base_url + name``. A file already in ``to_dir`` with the right size and hash is
    not downloaded again (one that does not match is downloaded again and replaced only
    once the new copy verifies). ``progress``, if given, is called as
    ``progress(name, bytes_done, bytes_total)`` as each download advances.

    Returns a dict ``{name: "downloaded" | "present"}`` in the order of ``files``.
    Raises FetchError (naming the file, and for a mismatch both hashes) on an HTTP or
    network error or a file of the wrong size or hash (the rejected download is
    deleted), or when ``to_dir`` is a file or cannot be made.

    ``fetch_mnist("~/mnist")`` gets the four MNIST files. Here, a file already in
    place, with the right size and hash, is checked and not fetched again:

    >>> import hashlib, pathlib, tempfile
    >>> from chainrule.data import fetch_mnist
    >>> folder = tempfile.TemporaryDirectory()
    >>> _ = (pathlib.Path(folder.name) / "hello.txt").write_bytes(b"hi")
    >>> files = {"hello.txt": (2, hashlib.sha256(b"hi").hexdigest())}
    >>> fetch_mnist(folder.name, files=files)
    {'hello.txt': 'present'}
    >>> folder.cleanup()
    """
    to_dir = os.fspath(to_dir)
    if os.path.exists(to_dir) and not os.path.isdir(to_dir):
        raise FetchError(f"{to_dir}: is a file, expected a folder for MNIST's files")
    try:
        os.makedirs(to_dir, exist_ok=True)
    except OSError as err:
        raise FetchError(f"{to_dir}: cannot make the folder: {err.strerror or err}") from None
    if not base_url.endswith("/"):
        base_url += "/"
    done = {}
    for name, (size, sha256) in files.items():
        target = os.path.join(to_dir, name)
        if _is_verified(target, size, sha256):
            done[name] = "present"
            continue
        _download(base_url + name, name, target, size, sha256, progress, timeout)
        done[name] = "downloaded"
    return done
