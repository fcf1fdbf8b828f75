"""Dtypes as PyTorch has them: integer data stays integers (an index, a class label),
indices and comparisons are Tensors, torch's dtype names exist, and only a float or
complex tensor can require grad. Each checked against torch itself."""

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def same_dtype(ours, theirs):
    return np.dtype(ours.dtype) == np.dtype(str(theirs.dtype).replace("torch.", ""))


@pytest.mark.parametrize("data", [[1, 2, 3], 5, [[0, 1], [1, 0]], [True, False], [1.5, 2],
                                  np.array([1, 2], dtype=np.int32),
                                  np.array([1, 2], dtype=np.uint8), [1, 2.0]])
def test_tensor_keeps_the_datas_dtype_as_torch(data):
    ours, theirs = cr.tensor(data), torch.tensor(data)
    if theirs.dtype == torch.float32:  # torch's default float; chainrule's is float64
        assert ours.dtype == np.float64
    else:
        assert same_dtype(ours, theirs), (ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("args", [(5,), (2, 7), (0, 10, 3), (-3, 3)])
def test_arange_of_ints_is_int64_and_of_floats_float64(args):
    ours, theirs = cr.arange(*args), torch.arange(*args)
    assert ours.dtype == np.int64 and theirs.dtype == torch.int64
    np.testing.assert_array_equal(ours.data, theirs.numpy())
    assert cr.arange(0, 1, 0.25).dtype == np.float64
    assert cr.arange(3, dtype=np.float32).dtype == np.float32


def test_an_integer_tensor_indexes_as_an_embedding_lookup():
    """makemore's ``C[X]``: a table of rows, looked up by a batch of contexts."""
    table = cr.randn((27, 2), generator=cr.Generator().manual_seed(0), requires_grad=True)
    contexts = cr.tensor([[0, 0, 5], [0, 5, 13]])
    emb = table[contexts]
    assert emb.shape == (2, 3, 2)
    emb.sum().backward()
    assert table.grad[0].tolist() == [3.0, 3.0] and table.grad[5].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("make", [lambda: cr.tensor([1, 2], requires_grad=True),
                                  lambda: cr.arange(3, requires_grad=True),
                                  lambda: cr.tensor([True], requires_grad=True)])
def test_only_float_and_complex_tensors_require_grad_as_in_torch(make):
    with pytest.raises(TypeError, match="only floating-point and complex tensors can "
                                        "require grad, got dtype"):
        make()
    with pytest.raises(RuntimeError, match="floating point and complex"):
        torch.tensor([1, 2], requires_grad=True)


def test_argmax_and_comparisons_are_tensors_so_accuracy_reads_as_in_torch():
    """PyTorch's tutorials: ``(pred.argmax(1) == y).type(torch.float).sum().item()``."""
    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(8, 3)), rng.integers(0, 3, size=8)
    pred, y = cr.tensor(logits), cr.tensor(labels)
    correct = (pred.argmax(1) == y).type(cr.float).sum().item()
    theirs = (torch.tensor(logits).argmax(1) == torch.tensor(labels)).type(
        torch.float).sum().item()
    assert correct == theirs
    index = pred.argmax(1)
    assert isinstance(index, cr.Tensor) and index.dtype == np.int64
    assert repr(cr.tensor([1.0, 3.0]).argmax()) == "tensor(1)"
    assert pred.argmin(dim=1, keepdim=True).shape == (8, 1)
    np.testing.assert_array_equal(pred.argmin(dim=1, keepdim=True).data,
                                  torch.tensor(logits).argmin(dim=1, keepdim=True).numpy())


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "half", "float",
                                  "double", "complex64", "complex128", "cfloat", "cdouble",
                                  "uint8", "int8", "int16", "int32", "int64", "short",
                                  "int", "long", "bool"])
def test_torchs_dtype_names(name):
    ours, theirs = getattr(cr, name), getattr(torch, name)
    assert same_dtype(cr.zeros(1, dtype=ours), torch.zeros(1, dtype=theirs))


def test_the_dtype_names_do_not_shadow_pythons_in_a_star_import():
    namespace = {}
    exec("from chainrule import *", namespace)
    assert "float" not in namespace and "int" not in namespace and "bool" not in namespace


def test_a_repr_leaves_the_default_dtypes_unsaid_as_torch():
    assert repr(cr.tensor([1, 2])) == "tensor([1, 2])" == repr(torch.tensor([1, 2]))
    assert repr(cr.tensor([True, False])) == "tensor([ True, False])"  # (NumPy's spacing)
    assert repr(cr.tensor([1, 2], dtype=np.int32)) == "tensor([1, 2], dtype=int32)"
