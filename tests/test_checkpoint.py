"""chainrule.checkpoint: round trips, the header, atomic writes, and refusing bad files.

Sections 1 to 4 use the .npz layout (paths ending in .npz); section 5 the safetensors
layout every other path gets: the same promises, and the safetensors library reads it.

1. Round trips keep names (dots too), dtypes, shapes (0-d too) and exact values; Tensors,
   Values, numbers and modules are accepted; the path is used exactly as given.
2. The header: format, version, architecture (given, or from module.architecture()).
3. A crash in the middle of save leaves the old file intact and no temporary behind.
4. Every kind of bad file gives a CheckpointError naming the file and the problem:
   missing, empty, text, a plain .npz, a .npy, truncated, corrupted, a newer version,
   and a pickle inside (refused, never executed).
"""

import json
import os
import pathlib
import zipfile

import numpy as np
import pytest

import chainrule as cr
from chainrule import checkpoint
from chainrule.checkpoint import (HEADER_KEY, CheckpointError, CheckpointNotFoundError,
                                  load, load_header, save)
from chainrule.scalar.value import Value


def sample_state():
    rng = np.random.default_rng(0)
    return {
        "layers.0.weight": rng.standard_normal((3, 2)).astype(np.float32),
        "layers.0.bias": rng.standard_normal(3).astype(np.float32),
        "layers.1.weight": rng.standard_normal((1, 3)),                # float64
        "scale": np.array(0.1, dtype=np.float64),                      # 0-d
        "steps": np.int64(1234),                                       # a NumPy scalar
        "mask": np.array([True, False, True]),
        "empty": np.zeros((0, 4), dtype=np.float16),
        "fortran": np.asfortranarray(rng.standard_normal((2, 3))),
    }


def assert_same(loaded, state):
    assert list(loaded) == list(state)
    for name, value in state.items():
        value = np.asarray(value)
        assert loaded[name].dtype == value.dtype, name
        assert loaded[name].shape == value.shape, name
        np.testing.assert_array_equal(loaded[name], value)


def write_npz(path, **arrays):
    """An .npz written straight with NumPy (so np.savez's naming can be controlled)."""
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def header_bytes(**fields):
    header = {"format": "chainrule", "version": 1, "architecture": None, "names": []}
    header.update(fields)
    return np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)


# ---------------------------------------------------------------------------------------
# 1. Round trips
# ---------------------------------------------------------------------------------------

def test_round_trip_keeps_names_dtypes_shapes_and_values(tmp_path):
    state = sample_state()
    save(state, tmp_path / "model.npz")
    assert_same(load(tmp_path / "model.npz"), state)


def test_extreme_values_round_trip_bit_for_bit(tmp_path):
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, np.finfo(float).max])
    state = {"special": special,
             "f32": np.float32([1 / 3, np.nextafter(1, 2, dtype=np.float32)]),
             "complex": np.array([1 + 2j])}
    save(state, tmp_path / "x.npz")
    loaded = load(tmp_path / "x.npz")
    assert loaded["special"].tobytes() == special.tobytes()  # -0.0 and NaN bits too
    assert_same({k: v for k, v in loaded.items() if k != "special"},
                {k: v for k, v in state.items() if k != "special"})


@pytest.mark.parametrize("as_type", [str, pathlib.Path])
def test_paths_as_str_or_path(tmp_path, as_type):
    path = as_type(tmp_path / "weights.npz")
    save({"w": np.ones(2)}, path)
    assert_same(load(path), {"w": np.ones(2)})
    assert load_header(path)["names"] == ["w"]


@pytest.mark.parametrize("filename", ["model", "model.npz", "model.npz", "model.tar.gz"])
def test_the_path_is_used_exactly_as_given(tmp_path, filename):
    """np.savez would write 'model.npz' for 'model'; save writes 'model'."""
    save({"w": np.arange(3.0)}, tmp_path / filename)
    assert sorted(os.listdir(tmp_path)) == [filename]
    assert_same(load(tmp_path / filename), {"w": np.arange(3.0)})


def test_a_missing_npz_suffix_gets_a_hint(tmp_path):
    write_npz(tmp_path / "old.npz", w=np.ones(1))
    with pytest.raises(CheckpointNotFoundError, match=r"there is .*old\.npz"):
        load(tmp_path / "old")


def test_tensors_values_and_numbers_are_accepted(tmp_path):
    state = {"t": cr.tensor(np.ones((2, 2), dtype=np.float32)),
             "v": Value(2.5), "f": 0.5, "i": 7}
    save(state, tmp_path / "c.npz")
    loaded = load(tmp_path / "c.npz")
    assert loaded["t"].dtype == np.float32 and loaded["t"].shape == (2, 2)
    assert loaded["v"].shape == () and loaded["v"] == 2.5 and loaded["v"].dtype == np.float64
    assert loaded["f"] == 0.5 and loaded["i"] == 7 and loaded["i"].dtype.kind == "i"


class TinyModule:
    """Anything with state_dict() will do (the nn.Module being built has it)."""

    def __init__(self):
        self.weight = cr.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        self.bias = cr.tensor(np.zeros(2, dtype=np.float32))

    def state_dict(self):
        return {"linear.weight": self.weight.data, "linear.bias": self.bias.data}

    def architecture(self):
        return {"kind": "Linear", "in": np.int64(3), "out": 2}


def test_a_module_is_saved_with_its_architecture(tmp_path):
    model = TinyModule()
    save(model, tmp_path / "m.npz")
    assert_same(load(tmp_path / "m.npz"), model.state_dict())
    header = load_header(tmp_path / "m.npz")
    assert header["architecture"] == {"kind": "Linear", "in": 3, "out": 2}
    save(model, tmp_path / "m.npz", architecture={"given": True})  # an explicit one wins
    assert load_header(tmp_path / "m.npz")["architecture"] == {"given": True}


def test_the_header(tmp_path):
    save(sample_state(), tmp_path / "h.npz", architecture={"sizes": [2, 16, 1]})
    header = load_header(tmp_path / "h.npz")
    assert header == {"format": "chainrule", "version": 2,
                      "architecture": {"sizes": [2, 16, 1]}, "names": list(sample_state()),
                      "metadata": None}
    save({"w": np.ones(1)}, tmp_path / "n.npz")
    assert load_header(tmp_path / "n.npz")["architecture"] is None


def test_the_file_is_a_plain_npz_any_numpy_can_read(tmp_path):
    save(sample_state(), tmp_path / "p.npz")
    with np.load(tmp_path / "p.npz", allow_pickle=False) as archive:
        assert set(archive.files) == set(sample_state()) | {HEADER_KEY}
        np.testing.assert_array_equal(archive["layers.1.weight"],
                                      sample_state()["layers.1.weight"])


def test_compressed_round_trip(tmp_path):
    state = {"zeros": np.zeros((100, 100))}
    save(state, tmp_path / "plain.npz")
    save(state, tmp_path / "small.npz", compress=True)
    small, plain = (os.path.getsize(tmp_path / name) for name in ("small.npz", "plain.npz"))
    assert small < plain / 10
    assert_same(load(tmp_path / "small.npz"), state)


def test_saving_again_replaces_the_file(tmp_path):
    save({"w": np.ones(2)}, tmp_path / "r.npz")
    save({"v": np.zeros(3)}, tmp_path / "r.npz")
    assert_same(load(tmp_path / "r.npz"), {"v": np.zeros(3)})
    assert os.listdir(tmp_path) == ["r.npz"]


@pytest.mark.parametrize("state, error, match", [
    ({HEADER_KEY: np.ones(1)}, ValueError, "reserved"),
    ({"": np.ones(1)}, TypeError, "non-empty string"),
    ({3: np.ones(1)}, TypeError, "non-empty string"),
    ({"o": np.array([object()])}, TypeError, "dtype object"),
    ({"s": np.array(["text"])}, TypeError, "expected numbers"),
    ([np.ones(1)], TypeError, "expected a Module"),
])
def test_bad_states_are_refused_before_anything_is_written(tmp_path, state, error, match):
    with pytest.raises(error, match=match):
        save(state, tmp_path / "bad.npz")
    assert os.listdir(tmp_path) == []


def test_an_architecture_that_is_not_json_is_refused(tmp_path):
    with pytest.raises(TypeError, match=r"architecture \(and metadata\) must be JSON"):
        save({"w": np.ones(1)}, tmp_path / "a.npz", architecture={"f": print})
    assert os.listdir(tmp_path) == []


def test_a_missing_directory_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save({"w": np.ones(1)}, tmp_path / "nowhere" / "w.npz")


# ---------------------------------------------------------------------------------------
# 3. Atomic writes
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("exception", [OSError("disk full"), KeyboardInterrupt()])
def test_a_crash_mid_save_leaves_the_old_file_intact(tmp_path, monkeypatch, exception):
    path = tmp_path / "model.npz"
    save({"w": np.ones(3)}, path)
    before = path.read_bytes()

    real_write_array = np.lib.format.write_array
    calls = []

    def write_then_fail(*args, **kwargs):  # the header and one array go out, then a crash
        calls.append(1)
        if len(calls) == 3:
            raise exception
        return real_write_array(*args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", write_then_fail)
    with pytest.raises(type(exception)):
        save({"a": np.zeros(1000), "b": np.zeros(1000), "c": np.zeros(10)}, path)
    assert len(calls) == 3
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]  # no temporary left behind
    monkeypatch.undo()
    assert_same(load(path), {"w": np.ones(3)})


def test_a_crash_while_renaming_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    save({"w": np.ones(3)}, path)
    before = path.read_bytes()

    def fail(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="rename failed"):
        save({"w": np.zeros(3)}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["model.npz"]


def test_save_refuses_a_directory_as_target(tmp_path):
    (tmp_path / "d.npz").mkdir()
    with pytest.raises(IsADirectoryError, match="is a directory"):
        save({"w": np.ones(1)}, tmp_path / "d.npz")


# ---------------------------------------------------------------------------------------
# 4. Bad files: one clear CheckpointError each, naming the file
# ---------------------------------------------------------------------------------------

def assert_refused(path, match, error=CheckpointError):
    for reader in (load, load_header):
        with pytest.raises(error, match=match) as info:
            reader(path)
        assert str(path) in str(info.value)
        assert isinstance(info.value, ValueError)
        # no chained traceback from inside NumPy or zipfile
        err = info.value
        assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)


def test_a_missing_file(tmp_path):
    assert_refused(tmp_path / "nothing.npz", "no such checkpoint file",
                   CheckpointNotFoundError)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nothing.npz")


def test_a_directory(tmp_path):
    assert_refused(tmp_path, "is a directory")


def test_an_empty_file(tmp_path):
    (tmp_path / "e.npz").write_bytes(b"")
    assert_refused(tmp_path / "e.npz", "empty")


def test_a_text_file(tmp_path):
    (tmp_path / "notes.txt").write_text("these are not weights\n")
    assert_refused(tmp_path / "notes.txt",
                   r"not a chainrule checkpoint \(neither safetensors nor a .npz archive\)")


def test_a_single_npy_file(tmp_path):
    np.save(tmp_path / "a.npy", np.ones(3))
    assert_refused(tmp_path / "a.npy", "a single .npy array")


def test_a_plain_npz_without_the_header(tmp_path):
    write_npz(tmp_path / "plain.npz", weight=np.ones(2), bias=np.zeros(1))
    assert_refused(tmp_path / "plain.npz", r"no '__chainrule__' header .*weight")


def test_another_format_in_the_header(tmp_path):
    write_npz(tmp_path / "o.npz", **{HEADER_KEY: header_bytes(format="other")})
    assert_refused(tmp_path / "o.npz", "format is 'other'")


def test_a_newer_version(tmp_path):
    write_npz(tmp_path / "new.npz", w=np.ones(1),
              **{HEADER_KEY: header_bytes(version=3, names=["w"])})
    assert_refused(tmp_path / "new.npz", "format version 3, newer .* upgrade chainrule")


def test_a_format_1_file_of_linear_layers_loads_transposed_and_says_so_once(tmp_path):
    """Format 1 stored nn.Linear's weight (in, out); today's layout is PyTorch's (out,
    in). cr.load hands the file's version to load_state_dict, which knows which entries
    are Linear weights: a square one included, where the shapes alone could not tell."""
    model = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=0), cr.nn.Tanh(), cr.nn.Linear(4, 4, rng=1),
                             cr.nn.LayerNorm(4))
    old = {name: (a.T if name.endswith(("0.weight", "2.weight")) else a)
           for name, a in model.state_dict().items()}
    write_npz(tmp_path / "v1.npz", **old,
              **{HEADER_KEY: header_bytes(version=1, names=list(old))})
    copy = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=5), cr.nn.Tanh(), cr.nn.Linear(4, 4, rng=6),
                            cr.nn.LayerNorm(4))
    with pytest.warns(UserWarning, match="format 1, where nn.Linear stored its weight as "
                                         r"\(in_features, out_features\)") as said:
        copy.load_state_dict(load(tmp_path / "v1.npz"))
    assert len(said) == 1
    x = cr.tensor(np.random.default_rng(0).normal(size=(2, 3)))
    np.testing.assert_array_equal(copy(x).data, model(x).data)
    save(copy, tmp_path / "v2.npz")                  # saved again: format 2, as it is
    assert load_header(tmp_path / "v2.npz")["version"] == 2
    again = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.Tanh(), cr.nn.Linear(4, 4),
                             cr.nn.LayerNorm(4))
    again.load_state_dict(load(tmp_path / "v2.npz"))
    np.testing.assert_array_equal(again(x).data, model(x).data)


@pytest.mark.parametrize("header, match", [
    (np.frombuffer(b"{not json", dtype=np.uint8), "corrupted checkpoint header"),
    (np.frombuffer(b"\xff\xfe", dtype=np.uint8), "corrupted checkpoint header"),
    (np.frombuffer(b"[1, 2]", dtype=np.uint8), "expected a JSON object"),
    (np.ones(3), "expected a 1-d uint8 array"),
    (header_bytes(version="1"), "version '1'"),
    (header_bytes(names="w"), "'names' should be a list of strings"),
])
def test_a_corrupted_header(tmp_path, header, match):
    write_npz(tmp_path / "h.npz", **{HEADER_KEY: header})
    assert_refused(tmp_path / "h.npz", match)


def test_names_that_disagree_with_the_header(tmp_path):
    write_npz(tmp_path / "n.npz", w=np.ones(1), extra=np.ones(1),
              **{HEADER_KEY: header_bytes(names=["w", "gone"])})
    with pytest.raises(CheckpointError, match="missing: gone; unlisted: extra"):
        load(tmp_path / "n.npz")


@pytest.mark.parametrize("keep", [3, 20, 100, 0.5, 0.9, -22, -1])
def test_a_truncated_file(tmp_path, keep):
    save(sample_state(), tmp_path / "full.npz")
    data = (tmp_path / "full.npz").read_bytes()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep
    (tmp_path / "cut.npz").write_bytes(data[:cut])
    assert_refused(tmp_path / "cut.npz", "truncated")


def test_corrupted_array_bytes_are_caught_by_the_checksum(tmp_path):
    save({"w": np.arange(1000.0)}, tmp_path / "c.npz")
    data = bytearray((tmp_path / "c.npz").read_bytes())
    middle = data.find(np.arange(1000.0)[500:501].tobytes())
    data[middle] ^= 0xFF
    (tmp_path / "c.npz").write_bytes(bytes(data))
    assert load_header(tmp_path / "c.npz")["names"] == ["w"]  # the header is intact
    with pytest.raises(CheckpointError, match="corrupted checkpoint: cannot read 'w'.*CRC"):
        load(tmp_path / "c.npz")


@pytest.mark.parametrize("shape, match", [
    (b"(99999999999999,)", "more memory than is available"),   # 800 TB: MemoryError
    (b"(999999999999999999999,)", "corrupted checkpoint: cannot read 'w'"),  # > intp
    (b"(2000,)", "truncated or corrupted checkpoint: cannot read 'w'"),  # past the end
])
def test_a_corrupted_shape(tmp_path, shape, match):
    """The .npy header is parsed before the checksum is checked: a damaged shape must
    still end in a CheckpointError."""
    save({"w": np.ones(1000)}, tmp_path / "s.npz")
    data = (tmp_path / "s.npz").read_bytes()
    old = b"'shape': (1000,), }"
    new = b"'shape': " + shape + b", }"
    # the .npy header is padded with spaces up to its newline: same length, same offsets
    width = data.find(b"\n", data.find(old)) - data.find(old)
    old, new = old.ljust(width), new.ljust(width)
    assert len(new) == width
    (tmp_path / "s.npz").write_bytes(data.replace(old, new))
    with pytest.raises(CheckpointError, match=match):
        load(tmp_path / "s.npz")


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_random_corruption_never_escapes_as_another_error(tmp_path, seed, compress):
    save(sample_state(), tmp_path / "c.npz", architecture={"a": 1}, compress=compress)
    data = bytearray((tmp_path / "c.npz").read_bytes())
    rng = np.random.default_rng(seed)
    for i in rng.integers(0, len(data), size=20):
        data[i] ^= int(rng.integers(1, 256))
    (tmp_path / "c.npz").write_bytes(bytes(data))
    for reader in (load, load_header):
        try:
            out = reader(tmp_path / "c.npz")
        except CheckpointError as err:
            assert str(tmp_path / "c.npz") in str(err)
        else:  # damage outside the checksummed data: what loads is still right
            if reader is load:
                assert_same(out, sample_state())


class Exploit:
    """Unpickling this would create a file: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def test_a_pickle_inside_is_refused_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    payload = np.array([Exploit(marker)], dtype=object)
    with open(tmp_path / "evil.npz", "wb") as f:
        np.savez(f, allow_pickle=True, weight=payload,
                 **{HEADER_KEY: header_bytes(names=["weight"])})
    with pytest.raises(CheckpointError, match="'weight' holds pickled Python objects; "
                                              "refusing"):
        load(tmp_path / "evil.npz")
    assert not marker.exists()


def test_a_raw_pickle_file_is_refused_not_executed(tmp_path):
    import pickle
    marker = tmp_path / "pwned"
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(Exploit(marker)))
    assert_refused(tmp_path / "evil.pkl", "not a chainrule checkpoint")
    assert not marker.exists()


def test_a_member_that_is_not_an_array(tmp_path):
    save({"w": np.ones(1)}, tmp_path / "z.npz")
    with zipfile.ZipFile(tmp_path / "z.npz", "a") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(CheckpointError, match="unlisted: notes.txt"):
        load(tmp_path / "z.npz")


def test_checkpoint_error_is_exported():
    assert issubclass(checkpoint.CheckpointError, ValueError)
    assert issubclass(checkpoint.CheckpointNotFoundError, FileNotFoundError)


def test_metadata_is_kept_in_the_header(tmp_path):
    path = tmp_path / "model.npz"
    checkpoint.save({"w": np.ones(2)}, path, metadata={"data": {"name": "moons", "seed": 3}})
    assert checkpoint.load_header(path)["metadata"] == {"data": {"name": "moons", "seed": 3}}
    checkpoint.save({"w": np.ones(2)}, path)
    assert checkpoint.load_header(path)["metadata"] is None


def test_a_killed_save_leaves_a_temporary_that_the_next_save_removes(tmp_path):
    """A dead writer's temporary goes, whichever file it was for; a live writer's, a
    recent one without a process id, and other files stay; a day-old one goes."""
    import subprocess
    import sys
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)  # that process has exited
    abandoned = tmp_path / f".model.npz.{dead_pid}.0123456789ab.tmp"
    live = tmp_path / f".model.npz.{os.getppid()}.0123456789ab.tmp"
    other = tmp_path / f".other.npz.{dead_pid}.0123456789ab.tmp"
    recent = tmp_path / ".model.npz.0123456789ab.tmp"
    old = tmp_path / ".model.npz.ba9876543210.tmp"
    user = tmp_path / "notes.tmp"
    for f in (abandoned, live, other, recent, old, user):
        f.write_bytes(b"half a zip")
    os.utime(old, (0, 0))
    checkpoint.save({"w": np.ones(2)}, tmp_path / "model.npz")
    assert not abandoned.exists() and not other.exists() and not old.exists()
    assert live.exists() and recent.exists() and user.exists()


# ---------------------------------------------------------------------------------------
# 5. safetensors: what every path but *.npz gets
# ---------------------------------------------------------------------------------------

def test_safetensors_round_trip_and_header(tmp_path):
    state = sample_state()
    path = tmp_path / "model.safetensors"
    save(state, path, architecture={"sizes": [2, 16, 1]}, metadata={"data": "moons"})
    assert path.read_bytes()[8:9] == b"{"  # the length, then the JSON header
    assert_same(load(path), state)
    header = load_header(path)
    assert header["architecture"] == {"sizes": [2, 16, 1]}
    assert header["metadata"] == {"data": "moons"} and header["names"] == list(state)


def test_the_safetensors_library_reads_chainrules_files(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    state = {k: v for k, v in sample_state().items() if np.asarray(v).dtype.kind != "c"}
    save(state, tmp_path / "m.safetensors")
    theirs = safetensors_torch.load_file(str(tmp_path / "m.safetensors"))
    assert set(theirs) == set(state)
    for name, value in state.items():
        np.testing.assert_array_equal(theirs[name].numpy(), np.asarray(value))


def test_a_safetensors_file_from_another_library_loads_its_arrays(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    arrays = {"w": np.arange(6.0).reshape(2, 3), "flag": np.array(True),
              "empty": np.zeros((0, 2), np.float32)}
    safetensors_numpy.save_file(arrays, str(tmp_path / "hf.safetensors"))
    loaded = load(tmp_path / "hf.safetensors")  # (in the order of their bytes)
    assert_same(dict(sorted(loaded.items())), dict(sorted(arrays.items())))
    assert load_header(tmp_path / "hf.safetensors")["architecture"] is None


def test_complex_numbers_need_the_npz_layout(tmp_path):
    with pytest.raises(TypeError, match="safetensors cannot hold.*a .npz path"):
        save({"z": np.ones(2, complex)}, tmp_path / "z.safetensors")
    with pytest.raises(ValueError, match="compress=True is for .npz files"):
        save({"w": np.ones(2)}, tmp_path / "w.safetensors", compress=True)


@pytest.mark.parametrize("damage, match", [
    (lambda b: b[:len(b) - 3], "truncated"),
    (lambda b: (10 ** 9).to_bytes(8, "little") + b[8:], "neither safetensors"),
    (lambda b: b[:8] + b"{" + b"x" * (int.from_bytes(b[:8], "little") - 1) + b[
        8 + int.from_bytes(b[:8], "little"):], "corrupted safetensors header"),
    (lambda b: b.replace(b'"shape":[3,2]', b'"shape":[9,9]'), "does not fit"),
    (lambda b: b.replace(b'"dtype":"F32"', b'"dtype":"Q99"'), "corrupted safetensors"),
])
def test_a_damaged_safetensors_file_is_one_checkpoint_error(tmp_path, damage, match):
    path = tmp_path / "d.safetensors"
    save(sample_state(), path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(CheckpointError, match=match):
        load(path)


@pytest.mark.parametrize("seed", range(5))
def test_random_corruption_of_safetensors_never_escapes_as_another_error(tmp_path, seed):
    path = tmp_path / "c.safetensors"
    save(sample_state(), path, architecture={"a": 1})
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(seed)
    for i in rng.integers(0, len(data), size=20):
        data[i] ^= int(rng.integers(1, 256))
    path.write_bytes(bytes(data))
    for reader in (load, load_header):  # (safetensors has no checksum: bytes may load)
        try:
            reader(path)
        except CheckpointError as err:
            assert str(path) in str(err)
