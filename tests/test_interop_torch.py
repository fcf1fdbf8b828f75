"""A Tensor handed to other libraries, and state saved for later.

1. ``torch.tensor(t)``, ``torch.as_tensor(t)``: torch reads no ``__array__`` of an
   object that is not an ndarray; it asks for DLPack (``__dlpack__``), and without it
   walks the object as a sequence, which a 0-d tensor is not. So both go through DLPack:
   the values, for 0-d and n-d tensors of every common dtype, outside the graph. A list
   of 0-d tensors is walked by torch itself, item by item: stacked first, it goes.
2. ``torch.from_dlpack(t)``, ``np.from_dlpack(t)``: the same memory, outside the graph;
   a tensor holding a torch array hands over torch's own.
3. An optimizer's state: ``cr.save(opt.state_dict(), path)`` and
   ``opt.load_state_dict(cr.load(path))`` resume training bit for bit, and loading runs
   no code (the file holds arrays and JSON, and JSON that is not a saved state is
   refused).
4. ``import chainrule.scipy...`` without SciPy says which extra brings it.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.checkpoint import CheckpointError

torch = pytest.importorskip("torch")

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.bool_]
SHAPES = [(), (3,), (2, 3)]


# ---------------------------------------------------------------------------------------
# 1. torch.tensor and torch.as_tensor
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("convert", [torch.tensor, torch.as_tensor],
                         ids=["tensor", "as_tensor"])
def test_torch_takes_a_tensors_values_as_it_takes_an_ndarrays(convert, shape, dtype):
    array = (np.arange(int(np.prod(shape))).reshape(shape) % 2).astype(dtype)
    ours, theirs = convert(cr.tensor(array)), convert(array)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert torch.equal(ours, theirs)


def test_torch_tensor_copies_and_as_tensor_shares_as_for_an_ndarray():
    x = cr.tensor([1.0, 2.0, 3.0])
    copied, shared = torch.tensor(x), torch.as_tensor(x)
    x.data[0] = 10.0
    assert copied.tolist() == [1.0, 2.0, 3.0]
    assert shared.tolist() == [10.0, 2.0, 3.0]


def test_the_values_of_a_tensor_that_requires_grad_leave_the_graph():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3                                  # a result in the graph
    t = torch.tensor(y)
    assert t.tolist() == [3.0, 6.0] and not t.requires_grad and t.grad_fn is None
    y.sum().backward()                         # the graph is unaffected
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_a_list_of_0d_tensors_goes_to_torch_stacked(dtype):
    """``torch.tensor([t0, t1])`` walks the list itself (below); stacked first, the 0-d
    tensors give what the list of their ndarrays gives."""
    arrays = [np.asarray(value, dtype=dtype) for value in (1, 0, 1)]
    theirs = torch.tensor(np.array(arrays))
    for convert in (torch.tensor, torch.as_tensor):
        ours = convert(cr.stack([cr.tensor(a) for a in arrays]))
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape == (3,)
        assert torch.equal(ours, theirs)


@pytest.mark.xfail(raises=TypeError, strict=True,
                   reason="torch takes an item of a list only as a Python number, a "
                          "torch.Tensor, an ndarray or a NumPy scalar, or else walks it as a "
                          "sequence (any object whose type has __getitem__), and a 0-d array "
                          "has no len(): JAX's 0-d arrays fail alike, and an object that is "
                          "no sequence gets 'Could not infer dtype' (tensor_new.cpp, "
                          "infer_scalar_type); neither __array__ nor __dlpack__ is asked")
@pytest.mark.parametrize("convert", [torch.tensor, torch.as_tensor],
                         ids=["tensor", "as_tensor"])
def test_a_list_of_0d_tensors_given_to_torch_as_it_stands(convert):
    t0, t1 = cr.tensor(1.5), cr.tensor(2.5)
    assert torch.equal(convert([t0, t1]), torch.tensor([1.5, 2.5], dtype=torch.float64))


# ---------------------------------------------------------------------------------------
# 2. DLPack
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_from_dlpack_shares_the_memory(shape):
    x = cr.tensor(np.zeros(shape, dtype=np.float32))
    t, a = torch.from_dlpack(x), np.from_dlpack(x)
    assert t.dtype == torch.float32 and tuple(t.shape) == shape
    assert np.shares_memory(a, x.data)
    x.data[...] = 5.0                          # one array, three views of it
    assert t.flatten().tolist() == [5.0] * x.data.size
    assert a.tolist() == x.data.tolist()


def test_from_dlpack_of_a_tensor_that_requires_grad_is_detached():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    t = torch.from_dlpack(x)
    assert not t.requires_grad and t.tolist() == [1.0, 2.0]


def test_the_device_is_the_cpu():
    assert tuple(cr.tensor([1.0]).__dlpack_device__()) == (1, 0)  # kDLCPU, device 0


def test_a_tensor_holding_a_torch_array_hands_over_torchs_own():
    source = torch.arange(3.0)
    x = cr.tensor(source, requires_grad=True)   # computes in torch
    y = x * 2
    out = torch.from_dlpack(y)
    assert out.tolist() == [0.0, 2.0, 4.0] and not out.requires_grad
    assert out.data_ptr() == y.data.data_ptr()  # the very memory of y's torch array
    assert torch.tensor(y).tolist() == [0.0, 2.0, 4.0]


def test_an_answer_without_a_derivative_is_a_torch_array_for_a_tensor_holding_one():
    """Where a NumPy array would come back for a Tensor of NumPy's (an index, a mask, an
    order), a Tensor holding a torch array gives torch's own: never the wrapper the
    engine computes with."""
    x = cr.tensor(torch.tensor([3.0, 1.0, 2.0, 1.0]), requires_grad=True)
    answers = {"np.argmax": np.argmax(x), "np.argsort": np.argsort(x),
               "np.nonzero": np.nonzero(x)[0], "np.isclose": np.isclose(x, x),
               "np.searchsorted": np.searchsorted(x, 1.5),
               "cr.topk's indices": cr.topk(x, 2).indices,
               "np.unique's index": np.unique(x, return_index=True)[1]}
    for name, answer in answers.items():
        assert type(answer) is torch.Tensor, (name, type(answer))
    assert answers["cr.topk's indices"].tolist() == [0, 2]
    assert answers["np.unique's index"].tolist() == [1, 2, 0]


def test_an_array_a_graph_saved_goes_out_read_only_under_the_older_protocol():
    """NumPy's DLPack before version 1 has no read-only flag, so it refuses an array a
    recorded graph locked (writing into it would change the gradient); a consumer of
    the current protocol gets the array with the flag set."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with pytest.raises(BufferError, match="readonly"):
        y.__dlpack__()
    assert not np.from_dlpack(y).flags.writeable
    y.sum().backward()


# ---------------------------------------------------------------------------------------
# 3. An optimizer's state, saved and loaded
# ---------------------------------------------------------------------------------------

OPTIMIZERS = {
    "Adam": lambda params: optim.Adam(params, lr=0.05, betas=(0.8, 0.99), amsgrad=True),
    "SGD with momentum": lambda params: optim.SGD(params, lr=0.05, momentum=0.9,
                                                  nesterov=True, weight_decay=1e-3),
}


def train(model, opt, steps):
    rng = np.random.default_rng(0)
    x, y = cr.tensor(rng.normal(size=(16, 3))), cr.tensor(rng.normal(size=(16, 2)))
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_training_resumed_from_a_saved_optimizer_is_the_same_bit_for_bit(name, tmp_path):
    make = OPTIMIZERS[name]
    straight = nn.Linear(3, 2, rng=0)
    train(straight, make(straight.parameters()), 7)

    model = nn.Linear(3, 2, rng=0)
    opt = make(model.parameters())
    train(model, opt, 3)
    cr.save(model, tmp_path / "model.safetensors")
    cr.save(opt.state_dict(), tmp_path / "optimizer.safetensors")

    resumed = nn.Linear(3, 2, rng=1)          # fresh weights, a fresh optimizer
    resumed.load_state_dict(cr.load(tmp_path / "model.safetensors"))
    opt = make(resumed.parameters())
    opt.load_state_dict(cr.load(tmp_path / "optimizer.safetensors"))
    train(resumed, opt, 4)

    for ours, theirs in zip(resumed.parameters(), straight.parameters()):
        assert np.array_equal(ours.data, theirs.data)


def test_the_loaded_state_is_the_saved_one_with_its_types(tmp_path):
    model = nn.Linear(3, 2, rng=0)
    opt = optim.Adam(model.parameters(), lr=0.01)
    train(model, opt, 2)
    saved = opt.state_dict()
    cr.save(saved, tmp_path / "opt.safetensors")
    loaded = cr.load(tmp_path / "opt.safetensors")
    assert loaded["param_groups"] == saved["param_groups"]
    assert type(loaded["param_groups"][0]["betas"]) is tuple
    assert list(loaded["state"]) == [0, 1]               # int keys, as saved
    assert loaded["state"][0]["step"] == 2 and type(loaded["state"][0]["step"]) is int
    for number, entries in saved["state"].items():
        for key, value in entries.items():
            assert np.array_equal(loaded["state"][number][key], value)


def test_the_arrays_are_safetensors_and_the_rest_is_json_in_the_header(tmp_path):
    """Any safetensors reader sees the arrays by their path; the numbers and the
    structure ride in the header's metadata."""
    safetensors = pytest.importorskip("safetensors.numpy")
    model = nn.Linear(3, 2, rng=0)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train(model, opt, 1)
    cr.save(opt.state_dict(), tmp_path / "opt.safetensors")
    assert sorted(safetensors.load_file(tmp_path / "opt.safetensors")) == [
        "state.0.momentum_buffer", "state.1.momentum_buffer"]
    header = cr.checkpoint.load_header(tmp_path / "opt.safetensors")
    assert header["names"] == ["state.0.momentum_buffer", "state.1.momentum_buffer"]
    assert "lr" in json.dumps(header["tree"])


def test_a_whole_training_state_in_one_file(tmp_path):
    model = nn.Linear(3, 2, rng=0)
    opt = optim.Adam(model.parameters())
    train(model, opt, 1)
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
             "note": "after warm-up", "best": None, "scale": np.float32(0.5)}
    cr.save(state, tmp_path / "run.ckpt")
    loaded = cr.load(tmp_path / "run.ckpt")
    assert loaded["epoch"] == 3 and loaded["note"] == "after warm-up"
    assert loaded["best"] is None
    assert loaded["scale"] == np.float32(0.5) and type(loaded["scale"]) is np.float32
    nn.Linear(3, 2, rng=1).load_state_dict(loaded["model"])
    optim.Adam(nn.Linear(3, 2).parameters()).load_state_dict(loaded["optimizer"])


def test_the_npz_layout_holds_a_nested_state_too(tmp_path):
    state = {"state": {0: {"step": 1, "buf": np.ones(2)}}, "param_groups": [{"lr": 0.1}]}
    cr.save(state, tmp_path / "opt.npz")
    loaded = cr.load(tmp_path / "opt.npz")
    assert loaded["param_groups"] == [{"lr": 0.1}]
    assert loaded["state"][0]["buf"].tolist() == [1.0, 1.0]


def test_what_json_and_arrays_cannot_hold_is_refused_when_saving(tmp_path):
    with pytest.raises(TypeError, match=r"\['state'\]\['f'\] is a function"):
        cr.save({"state": {"f": lambda: 0}}, tmp_path / "x.ckpt")
    with pytest.raises(TypeError, match="keys must be strings or numbers"):
        cr.save({"state": {(0, 1): 1.0}}, tmp_path / "x.ckpt")


def test_a_header_that_describes_anything_else_is_refused_when_loading(tmp_path):
    """Loading makes dicts, lists, tuples, numbers, strings and arrays, and nothing
    else: a header edited to name anything else is a corrupted file."""
    path = tmp_path / "opt.npz"
    cr.save({"state": {"a": 1}}, path)
    raw = dict(np.load(path))
    header = json.loads(raw["__chainrule__"].tobytes())
    header["tree"] = {"dict": [["state", {"pickle": "os.system"}]]}
    raw["__chainrule__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **raw)
    with pytest.raises(CheckpointError, match="none of its kinds of values"):
        cr.load(path)


# ---------------------------------------------------------------------------------------
# 4. chainrule.scipy without SciPy
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", ["chainrule.scipy", "chainrule.scipy.special",
                                    "chainrule.scipy.stats", "chainrule.scipy.optimize"])
def test_importing_chainrule_scipy_without_scipy_names_the_extra(module):
    """In a fresh interpreter where SciPy cannot be imported (None in sys.modules is
    how Python marks a module as missing)."""
    code = textwrap.dedent(f"""
        import sys
        sys.modules["scipy"] = None
        import chainrule                      # imports NumPy only: fine without SciPy
        try:
            import {module}
        except ModuleNotFoundError as err:
            print(type(err).__name__, err.name, "-", err)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == (
        "ModuleNotFoundError scipy - chainrule.scipy needs SciPy, which is not "
        "installed: pip install 'chainrule[scipy]'")
