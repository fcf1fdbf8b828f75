"""torch.histc and torch.histogram as cr.histc and cr.histogram: the same counts, edges
and densities as torch's, Tensors outside the graph, and torch's refusals."""

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


@pytest.fixture
def x():
    return np.random.default_rng(0).normal(size=1000)


@pytest.mark.parametrize("args", [(), (20,), (7, -1.0, 1.0), (5, 0.0, 0.0), (3, -10, 10)])
def test_histc_counts_as_torch(x, args):
    ours, theirs = cr.histc(cr.tensor(x), *args), torch.histc(torch.tensor(x), *args)
    assert isinstance(ours, cr.Tensor) and ours.dtype == np.float64
    np.testing.assert_array_equal(ours.data, theirs.numpy())


def test_histc_of_one_value_and_of_float32():
    np.testing.assert_array_equal(cr.histc(cr.tensor([2.0, 2.0]), 4).data,
                                  torch.histc(torch.tensor([2.0, 2.0]), 4).numpy())
    assert cr.histc(cr.tensor([1.0, 2.0], dtype=np.float32), 2).dtype == np.float32


def test_histc_refuses_what_torch_refuses():
    with pytest.raises(ValueError, match=r"histc: max \(0.0\) must be larger than min \(1.0\)"):
        cr.histc(cr.tensor([1.0]), 3, 1.0, 0.0)
    with pytest.raises(ValueError, match="histc: bins must be a positive int, got 0"):
        cr.histc(cr.tensor([1.0]), 0)
    with pytest.raises(TypeError, match="histc: expected a floating-point tensor, got dtype int64"):
        cr.histc(cr.tensor([1, 2]))


@pytest.mark.parametrize("density", [False, True])
def test_histogram_as_torch(x, density):
    hist, edges = cr.histogram(cr.tensor(x), 10, density=density)
    theirs = torch.histogram(torch.tensor(x), 10, density=density)
    np.testing.assert_allclose(hist.data, theirs.hist.numpy(), rtol=1e-12)
    np.testing.assert_allclose(edges.data, theirs.bin_edges.numpy(), rtol=1e-12)
    result = cr.histogram(cr.tensor(x), 4, range=(-1.0, 1.0))
    theirs = torch.histogram(torch.tensor(x), 4, range=(-1.0, 1.0))
    np.testing.assert_array_equal(result.hist.data, theirs.hist.numpy())


def test_histogram_with_given_edges_and_weights(x):
    edges = [-3.0, 0.0, 1.0, 3.0]
    hist, _ = cr.histogram(cr.tensor(x), cr.tensor(edges), weight=cr.tensor(np.abs(x)))
    theirs = torch.histogram(torch.tensor(x), torch.tensor(edges, dtype=torch.float64),
                             weight=torch.tensor(np.abs(x)))
    np.testing.assert_allclose(hist.data, theirs.hist.numpy(), rtol=1e-12)


def test_counts_have_no_derivative_and_leave_the_graph():
    t = cr.tensor([0.5, 1.5], requires_grad=True)
    assert not cr.histc(t, 2).requires_grad and not cr.histogram(t, 2).hist.requires_grad
