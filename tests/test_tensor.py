"""The tensor engine, ``chainrule.tensor``: its surface and the properties of backward().

Per-operation gradient sweeps live in ``test_derivatives.py``; this file checks what the
engine itself promises. Every gradient is compared with an independent reference: a
hand-computed exact value or PyTorch in float64, never chainrule itself. The groups:

1. creating tensors (numbers, lists, arrays, lists of Tensors, the factory functions);
2. the Tensor's attributes and methods (data, grad, repr, detach, retain_grad, ...);
3. the C++/Eigen seed's own test, in float32;
4. the NumPy-array seed's examples: broadcasting, indexing, backward(gradient=v);
5. where gradients go, and how they accumulate; create_graph=True;
6. grad modes: no_grad, enable_grad, per thread;
7. detect_anomaly;
8. the version counter and in-place updates;
9. x.at[idx].set(v) and .add(v);
10. memory: no reference cycles, a 100,000-op chain;
11. dtypes of gradients; 12. determinism.
"""

import contextlib
import gc
import math
import operator
import os
import runpy
import sys
import threading
import weakref

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule.rules import fused
from chainrule.tensor import Tensor

THIS_FILE = os.path.basename(__file__)  # "test_tensor.py": where anomalies must point


# ---------------------------------------------------------------------------------------
# Helpers (local to this file)
# ---------------------------------------------------------------------------------------

def torch_leaf(array):
    """A float64 PyTorch leaf that records gradients: the reference for one tensor."""
    return torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def assert_close(actual, expected, rtol=1e-12, atol=1e-14, what="value"):
    """Same shape, and equal up to float64 rounding (both sides compute in float64)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected.detach().numpy() if isinstance(expected, torch.Tensor)
                          else expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def assert_exact(actual, expected, dtype=None):
    """Bit-for-bit equal values (for gradients that are small integers or exact
    binary fractions), with the same shape, and the given dtype if one is named."""
    actual = np.asarray(actual)
    expected = np.asarray(expected, dtype=dtype if dtype is not None else actual.dtype)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if dtype is not None:
        assert actual.dtype == np.dtype(dtype), f"dtype {actual.dtype} != {np.dtype(dtype)}"
    np.testing.assert_array_equal(actual, expected)


@pytest.fixture
def gc_disabled():
    """The cyclic garbage collector off (and earlier garbage cleared first), so only
    reference counting frees objects; switched back on afterwards, whatever happens."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# =======================================================================================
# 1. Creation
# =======================================================================================

@pytest.mark.parametrize("data, shape, dtype", [
    (3, (), np.int64),
    (2.5, (), np.float64),
    ([1, 2, 3], (3,), np.int64),
    ([[1.0, 2.0], [3.0, 4.0]], (2, 2), np.float64),
    (np.array([1, 2], dtype=np.int32), (2,), np.int32),
    (np.arange(6, dtype=np.int64).reshape(2, 3), (2, 3), np.int64),
    (np.array([True, False]), (2,), np.bool_),
    (np.float64(1.5), (), np.float64),
    ([1, 2.5], (2,), np.float64),
])
def test_tensor_keeps_the_datas_dtype_floats_float64_and_integers_integers(data, shape,
                                                                            dtype):
    """As PyTorch and NumPy: floats are float64 (chainrule's default float), integers
    stay integers (an index, a label), booleans booleans."""
    t = cr.tensor(data)
    assert isinstance(t, Tensor)
    assert t.dtype == dtype
    assert t.shape == shape
    assert_exact(t.data, np.asarray(data, dtype=dtype))
    assert t.requires_grad is False and t.grad is None


def test_a_float32_array_stays_float32():
    t = cr.tensor(np.array([1.5, 2.5], dtype=np.float32))
    assert t.dtype == np.float32
    assert_exact(t.data, [1.5, 2.5], dtype=np.float32)
    assert cr.tensor(np.float32(0.5)).dtype == np.float32


@pytest.mark.parametrize("data", [[1, 2], [1.0, 2.0], np.array([1.0, 2.0])])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_dtype_argument_is_respected(data, dtype):
    t = cr.tensor(data, dtype=dtype)
    assert t.dtype == np.dtype(dtype)
    assert_exact(t.data, [1, 2], dtype=dtype)


def test_tensor_copies_its_input_array():
    """Like torch.tensor: a later change to the source array does not reach the tensor."""
    source = np.array([1.0, 2.0])
    t = cr.tensor(source)
    source[0] = 99.0
    assert_exact(t.data, [1.0, 2.0])


def test_tensor_of_text_is_a_type_error():
    with pytest.raises(TypeError, match="numeric"):
        cr.tensor("abc")


@pytest.mark.parametrize("make", [
    lambda: cr.tensor([1, 2], dtype=np.int64, requires_grad=True),
    lambda: cr.zeros(2, dtype=np.int32, requires_grad=True),
    lambda: cr.arange(3, dtype=np.int64, requires_grad=True),
    lambda: cr.tensor([1, 2], dtype=np.int64).requires_grad_(),
], ids=["tensor", "zeros", "arange", "requires_grad_"])
def test_an_integer_tensor_cannot_require_grad(make):
    with pytest.raises(TypeError, match="floating-point"):
        make()


# --- a list that holds Tensors is their differentiable stack ---------------------------

def test_list_of_tensors_is_a_differentiable_stack():
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    b = cr.tensor([3.0, 4.0], requires_grad=True)
    m = cr.tensor([a, b * 2.0])
    assert m.shape == (2, 2) and m.requires_grad
    assert_exact(m.data, [[1.0, 2.0], [6.0, 8.0]])
    weights = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    (m * weights).sum().backward()
    assert_exact(a.grad, [1.0, 2.0])           # row 0 of the weights
    assert_exact(b.grad, [6.0, 8.0])           # 2 * row 1


def test_nested_list_mixing_tensors_and_numbers():
    """[[a, b], [b*a, 3]]: numbers are constants; d/da = 1 + 3b = 7, d/db = 2 + 3a = 5
    for the weights [[1, 2], [3, 4]] at a = 1, b = 2."""
    a = cr.tensor(1.0, requires_grad=True)
    b = cr.tensor(2.0, requires_grad=True)
    m = cr.tensor([[a, b], [b * a, 3.0]])
    assert_exact(m.data, [[1.0, 2.0], [2.0, 3.0]])
    (m * cr.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert a.grad == 7.0 and b.grad == 5.0


def test_list_of_tensors_with_dtype_casts_and_the_gradient_casts_back():
    a = cr.tensor([1.0, 2.0], requires_grad=True)      # float64
    m = cr.tensor([a, a], dtype=np.float32)
    assert m.dtype == np.float32
    m.sum().backward()
    assert_exact(a.grad, [2.0, 2.0], dtype=np.float64)


def test_list_of_tensors_refuses_requires_grad():
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="requires_grad"):
        cr.tensor([a, a], requires_grad=True)


# --- factory functions ------------------------------------------------------------------

def test_zeros_ones_full():
    for shape_args in [(2, 3), ((2, 3),)]:
        z, o = cr.zeros(*shape_args), cr.ones(*shape_args)
        assert z.shape == o.shape == (2, 3)
        assert z.dtype == o.dtype == np.float64
        assert_exact(z.data, np.zeros((2, 3)))
        assert_exact(o.data, np.ones((2, 3)))
    assert cr.zeros(()).shape == ()
    f = cr.full((2, 3), 7.0)
    assert f.dtype == np.float64
    assert_exact(f.data, np.full((2, 3), 7.0))
    assert_exact(cr.full(3, 2).data, [2.0, 2.0, 2.0], dtype=np.float64)
    assert cr.ones(2, dtype=np.float32).dtype == np.float32


def test_eye_arange_linspace():
    assert_exact(cr.eye(3).data, np.eye(3), dtype=np.float64)
    assert_exact(cr.eye(2, 3).data, [[1, 0, 0], [0, 1, 0]], dtype=np.float64)
    assert_exact(cr.arange(5).data, [0, 1, 2, 3, 4], dtype=np.int64)   # as torch.arange
    assert_exact(cr.arange(5.0).data, [0, 1, 2, 3, 4], dtype=np.float64)
    assert_exact(cr.arange(1, 2, 0.25).data, [1.0, 1.25, 1.5, 1.75], dtype=np.float64)
    assert_exact(cr.linspace(0, 1, 5).data, [0, 0.25, 0.5, 0.75, 1], dtype=np.float64)
    assert cr.linspace(0, 1).shape == (50,)  # NumPy's default count
    assert cr.eye(2, dtype=np.float32).dtype == np.float32


def test_zeros_like_and_ones_like_keep_shape_and_dtype():
    t = cr.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    z, o = cr.zeros_like(t), cr.ones_like(t)
    assert z.shape == o.shape == (2, 3)
    assert z.dtype == o.dtype == np.float32
    assert_exact(z.data, np.zeros((2, 3)), dtype=np.float32)
    assert_exact(o.data, np.ones((2, 3)), dtype=np.float32)
    assert not z.requires_grad and not o.requires_grad  # a new leaf, not t's graph
    assert cr.zeros_like(t, dtype=np.float64).dtype == np.float64
    assert cr.ones_like(np.zeros(4)).shape == (4,)      # arrays are accepted too


def test_factories_can_make_leaves_that_require_grad():
    for t in [cr.zeros(2, requires_grad=True), cr.ones(2, requires_grad=True),
              cr.full(2, 1.5, requires_grad=True), cr.eye(2, requires_grad=True),
              cr.arange(2.0, requires_grad=True), cr.linspace(0, 1, 2, requires_grad=True),
              cr.rand(2, seed=0, requires_grad=True), cr.randn(2, seed=0, requires_grad=True)]:
        assert t.requires_grad and t.is_leaf and t.grad is None
        t.sum().backward()
        assert_exact(t.grad, np.ones(t.shape))


@pytest.mark.parametrize("make", [cr.rand, cr.randn], ids=["rand", "randn"])
def test_random_tensors_are_reproducible_from_a_seed(make):
    a, b, c = make(3, 4, seed=7), make(3, 4, seed=7), make(3, 4, seed=8)
    assert a.shape == (3, 4) and a.dtype == np.float64
    assert_exact(a.data, b.data)                        # same seed, same values
    assert not np.array_equal(a.data, c.data)           # another seed, other values
    assert make((3, 4), seed=7).shape == (3, 4)         # a tuple shape works too
    # a Generator: two generators seeded alike agree; one generator moves on
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    first, same = make(5, seed=g1), make(5, seed=g2)
    assert_exact(first.data, same.data)
    assert not np.array_equal(first.data, make(5, seed=g1).data)
    assert make(2, seed=0, dtype=np.float32).dtype == np.float32


def test_rand_is_uniform_on_the_unit_interval():
    u = cr.rand(10_000, seed=0).data
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.02       # 0.5 +- 7 standard errors
    n = cr.randn(10_000, seed=0).data
    assert abs(n.mean()) < 0.07 and abs(n.std() - 1.0) < 0.05


# =======================================================================================
# 2. The Tensor's surface
# =======================================================================================

def test_attributes_of_a_fresh_leaf():
    t = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert isinstance(t.data, np.ndarray)
    assert t.grad is None and t.requires_grad is False
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6
    assert t.dtype == np.float64
    assert t.is_leaf


def test_T_is_the_transpose_and_differentiable():
    x = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.T.shape == (3, 2)
    assert_exact(x.T.data, x.data.T)
    c = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    (x.T * c).sum().backward()
    assert_exact(x.grad, c.T)


def test_item_numpy_and_asarray():
    assert cr.tensor(2.5).item() == 2.5 and isinstance(cr.tensor(2.5).item(), float)
    assert cr.tensor([[4.0]]).item() == 4.0
    with pytest.raises(ValueError):
        cr.tensor([1.0, 2.0]).item()
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    assert isinstance(t.numpy(), np.ndarray)
    assert np.shares_memory(t.numpy(), t.data)
    a = np.asarray(t)
    assert isinstance(a, np.ndarray) and not isinstance(a, Tensor)
    assert_exact(a, [1.0, 2.0])
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert float(cr.tensor(1.5)) == 1.5 and int(cr.tensor(3.0)) == 3


def test_detach_cuts_the_graph_and_shares_memory():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    d = y.detach()
    assert d.requires_grad is False and d.is_leaf and d._prev == ()
    assert np.shares_memory(d.data, y.data)
    assert_exact(d.data, [3.0, 6.0])
    (d * y).sum().backward()   # d is a constant here: the gradient is 3 * d
    assert_exact(x.grad, [9.0, 18.0])


def test_requires_grad_switches_a_leaf_on_and_returns_it():
    t = cr.tensor([1.0, 2.0])
    assert t.requires_grad_() is t and t.requires_grad
    (t * t).sum().backward()
    assert_exact(t.grad, [2.0, 4.0])
    t.requires_grad_(False)
    assert not t.requires_grad and not (t * t).requires_grad


def test_requires_grad_switched_on_after_the_graph_was_built_gives_no_partial_gradient():
    """y = sum(w t + w (2 t)) built while t is a constant; t.requires_grad_() afterwards.
    The true dy/dt is 3w = [3, 6]; the graph never recorded t, so PyTorch leaves
    t.grad None. A gradient of [1, 2] (the direct use only) is wrong either way."""
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    t = cr.tensor([3.0, 4.0])
    y = (w * t + w * (t * 2.0)).sum()
    t.requires_grad_()
    y.backward()
    assert_exact(w.grad, [9.0, 12.0])            # 3t
    assert t.grad is None or np.array_equal(t.grad, [3.0, 6.0]), f"t.grad = {t.grad}"


def test_an_interior_result_cannot_stop_requiring_grad():
    y = cr.tensor([1.0], requires_grad=True) * 2.0
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad_(False)


def test_zero_grad_clears_the_gradient():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad is not None
    x.zero_grad()
    assert x.grad is None
    (x * x).sum().backward()                 # starts from zero again
    assert_exact(x.grad, [2.0, 4.0])


def test_intermediates_keep_grad_only_when_asked():
    """h = 2x, k = 3h, s = sum(k): leaves always get .grad; h and k only with retain_grad."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    k = h * 3.0
    s = k.sum()
    assert k.retain_grad() is k
    s.backward(retain_graph=True)
    with pytest.warns(UserWarning, match="retain_grad"):  # (PyTorch warns too)
        assert h.grad is None
    assert_exact(k.grad, [1.0, 1.0])
    assert_exact(x.grad, [6.0, 6.0])
    s.backward()                             # a retained gradient accumulates, as in PyTorch
    assert_exact(k.grad, [2.0, 2.0])
    with pytest.warns(UserWarning, match="retain_grad"):
        assert h.grad is None


def test_retain_grad_needs_a_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        cr.tensor([1.0]).retain_grad()


def test_retained_gradient_of_the_root_is_the_seed():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).retain_grad()
    y.backward(gradient=np.array([0.5, -1.0]))
    assert_exact(y.grad, [0.5, -1.0])
    assert_exact(x.grad, [1.0, -4.0])


def test_repr_shows_values_dtype_and_grad_fn():
    assert repr(cr.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(cr.tensor(3.0)) == "tensor(3.)" and repr(cr.tensor(3)) == "tensor(3)"
    assert repr(cr.tensor([1.0, 2.0], requires_grad=True)) == \
        "tensor([1., 2.], requires_grad=True)"
    assert repr(cr.tensor([1.5], dtype=np.float32)) == "tensor([1.5], dtype=float32)"
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2.0) == "tensor([2., 4.], grad_fn=multiply)"
    assert repr(x.sum()) == "tensor(3., grad_fn=sum)"
    assert "grad_fn=matmul" in repr(cr.ones(2, 2, dtype=np.float32, requires_grad=True)
                                    @ cr.ones(2, 2, dtype=np.float32))
    assert repr(x > 1.5) == "tensor([False,  True])"   # as torch: bool goes unsaid
    multi = repr(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert multi.startswith("tensor([[1., 2.],") and "[3., 4.]])" in multi


def test_len_and_iteration():
    x = cr.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, Tensor) for r in rows)
    assert_exact(rows[1].data, [3.0, 4.0])
    (rows[0] * 1.0 + rows[2] * 2.0).sum().backward()   # rows are differentiable
    assert_exact(x.grad, [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]])
    with pytest.raises(TypeError, match="0-d"):
        len(cr.tensor(1.0))


@pytest.mark.parametrize("compare", [operator.lt, operator.le, operator.gt, operator.ge,
                                     operator.eq, operator.ne],
                         ids=["<", "<=", ">", ">=", "==", "!="])
def test_comparisons_give_boolean_tensors_outside_the_graph(compare):
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    other = np.array([2.0, 2.0, 2.0])
    expected = compare(x.data, other)
    for rhs in [other, cr.tensor(other), 2.0]:
        result = compare(x, rhs)
        assert isinstance(result, Tensor)
        assert result.dtype == np.bool_
        assert result.requires_grad is False and result._prev == ()
        assert_exact(result.data, expected)


def test_an_ndarray_on_the_left_gives_a_tensor():
    """__array_priority__: ndarray + Tensor and ndarray < Tensor go to the Tensor."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = np.array([10.0, 20.0]) * x
    assert isinstance(y, Tensor) and y.requires_grad
    y.sum().backward()
    assert_exact(x.grad, [10.0, 20.0])
    less = np.array([1.5, 1.5]) < x
    assert isinstance(less, Tensor)
    assert_exact(less.data, [False, True])


def test_tensors_hash_by_identity():
    a, b = cr.tensor([1.0]), cr.tensor([1.0])
    seen = {a: "a", b: "b"}
    assert seen[a] == "a" and seen[b] == "b"


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sum",
         "mean", "max", "min", "norm", "softmax", "logsumexp"]


@pytest.mark.parametrize("name", UNARY)
def test_methods_and_module_functions_agree_and_accept_arrays(name):
    """t.f() is cr.f(t); cr.f on a plain array gives a plain NumPy result (no Tensor)."""
    array = np.array([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]])
    t = cr.tensor(array)
    via_method = getattr(t, name)()
    via_function = getattr(cr, name)(t)
    assert isinstance(via_method, Tensor) and isinstance(via_function, Tensor)
    assert_exact(via_method.data, via_function.data)
    plain = getattr(cr, name)(array)
    assert not isinstance(plain, Tensor)
    assert isinstance(plain, (np.ndarray, np.floating))
    assert_exact(plain, via_function.data)


def test_module_functions_on_numbers_and_arrays_are_numpy():
    one = cr.exp(1.0)
    assert not isinstance(one, Tensor) and one == math.e
    assert_exact(cr.exp(np.array([0.0, 1.0])), np.exp([0.0, 1.0]))
    m = cr.maximum(np.array([1.0, 5.0]), np.array([3.0, 2.0]))
    assert isinstance(m, np.ndarray) and not isinstance(m, Tensor)
    assert_exact(m, [3.0, 5.0])
    assert_exact(cr.matmul(np.eye(2), np.array([1.0, 2.0])), [1.0, 2.0])
    assert cr.sum(np.array([1.0, 2.0, 3.0])) == 6.0


def test_method_reshape_accepts_sizes_or_a_tuple():
    x = cr.tensor(np.arange(6.0), requires_grad=True)
    assert x.reshape(2, 3).shape == x.reshape((2, 3)).shape == (2, 3)
    (x.reshape(3, 2) * np.array([[1.0, 2.0]])).sum().backward()
    assert_exact(x.grad, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0])


# =======================================================================================
# 3. The C++/Eigen seed's own test, in float32
# =======================================================================================

def _eigen_seed_inputs():
    a = cr.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32, requires_grad=True)
    b = cr.tensor([[5.0, 6.0], [7.0, 8.0]], dtype=np.float32, requires_grad=True)
    return a, b


def test_eigen_seed_sum_of_a_matmul():
    """e = (a - b) @ (a + b); d sum(e)/da = 1 (a+b)^T + (a-b)^T 1, exact in float32."""
    a, b = _eigen_seed_inputs()
    e = (a - b) @ (a + b)
    assert e.dtype == np.float32
    assert_exact(e.data, [[-64.0, -80.0], [-64.0, -80.0]], dtype=np.float32)
    s = cr.sum(e)
    assert s.dtype == np.float32 and s.item() == -288.0
    s.backward()
    assert_exact(a.grad, [[6.0, 14.0], [6.0, 14.0]], dtype=np.float32)
    assert_exact(b.grad, [[-22.0, -30.0], [-22.0, -30.0]], dtype=np.float32)


def test_eigen_seed_mean_of_a_matmul():
    a, b = _eigen_seed_inputs()
    m = cr.mean((a - b) @ (a + b))
    assert m.dtype == np.float32 and m.item() == -72.0
    m.backward()
    assert_exact(a.grad, [[1.5, 3.5], [1.5, 3.5]], dtype=np.float32)
    assert_exact(b.grad, [[-5.5, -7.5], [-5.5, -7.5]], dtype=np.float32)


def test_eigen_seed_norm_of_relu():
    """h = |relu((a + b) + (a - b) * 2.2)|: the relu keeps [1.2, 3.2] in row 1, so
    h = sqrt(1.2^2 + 3.2^2) = sqrt(11.68); dh/da = 3.2 r/h, dh/db = -1.2 r/h."""
    a, b = _eigen_seed_inputs()
    h = cr.norm(cr.relu((a + b) + (a - b) * 2.2))
    assert h.dtype == np.float32
    assert h.item() == pytest.approx(3.4176, abs=1e-4)
    assert h.item() == pytest.approx(math.sqrt(11.68), rel=1e-6)
    h.backward()
    r = np.array([[0.0, 0.0], [1.2, 3.2]]) / math.sqrt(11.68)
    assert a.grad.dtype == b.grad.dtype == np.float32
    np.testing.assert_allclose(a.grad, 3.2 * r, rtol=1e-5, atol=0)
    np.testing.assert_allclose(b.grad, -1.2 * r, rtol=1e-5, atol=0)
    assert_exact(a.grad[0], [0.0, 0.0])  # where relu cut, the gradient is exactly 0


# =======================================================================================
# 4. The NumPy-array seed's examples
# =======================================================================================

def test_adding_a_number_broadcasts():
    y = cr.tensor([1.0, 2.0]) + 3.0
    assert_exact(y.data, [4.0, 5.0], dtype=np.float64)
    assert_exact((3.0 + cr.tensor([1.0, 2.0])).data, [4.0, 5.0])


def test_broadcast_operand_gets_a_gradient_of_its_own_shape():
    """x (2, 3) + b (3,) + c (2, 1): each gradient is summed over the axes it was
    broadcast along: b.grad = 2 (rows), c.grad = 3 (columns)."""
    x = cr.tensor(np.zeros((2, 3)), requires_grad=True)
    b = cr.tensor(np.zeros(3), requires_grad=True)
    c = cr.tensor(np.zeros((2, 1)), requires_grad=True)
    (x + b + c).sum().backward()
    assert_exact(x.grad, np.ones((2, 3)))
    assert_exact(b.grad, [2.0, 2.0, 2.0])
    assert_exact(c.grad, [[3.0], [3.0]])


@pytest.mark.parametrize("index, expected_grad", [
    (0, [1.0, 0.0, 0.0]),
    (slice(1, None), [0.0, 1.0, 1.0]),
    ([0, 0], [2.0, 0.0, 0.0]),              # a repeated index accumulates
    ([2, 0, 2, 2], [1.0, 0.0, 3.0]),
    (np.array([True, False, True]), [1.0, 0.0, 1.0]),
    (-1, [0.0, 0.0, 1.0]),
], ids=["x[0]", "x[1:]", "x[[0,0]]", "x[[2,0,2,2]]", "mask", "x[-1]"])
def test_indexing_values_and_gradients(index, expected_grad):
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[index]
    assert_exact(y.data, x.data[index])
    y.sum().backward()
    assert_exact(x.grad, expected_grad)


def test_indexing_a_matrix_with_a_tuple_of_integer_arrays():
    x = cr.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x[[0, 1, 0], [2, 0, 2]]
    assert_exact(y.data, [2.0, 3.0, 2.0])
    y.sum().backward()
    assert_exact(x.grad, [[0.0, 0.0, 2.0], [1.0, 0.0, 0.0]])


def test_backward_with_a_gradient_is_the_vector_jacobian_product():
    """y = tanh(x @ W) * x[:, :2] + sum(W, 0): y.backward(gradient=v) gives v^T J for
    both x and W, checked against PyTorch in float64."""
    rng = np.random.default_rng(0)
    xv, wv, v = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 2))

    x, w = cr.tensor(xv, requires_grad=True), cr.tensor(wv, requires_grad=True)
    y = cr.tanh(x @ w) * x[:, :2] + w.sum(axis=0)
    y.backward(gradient=v)

    tx, tw = torch_leaf(xv), torch_leaf(wv)
    ty = torch.tanh(tx @ tw) * tx[:, :2] + tw.sum(dim=0)
    ty.backward(torch.tensor(v))

    assert_close(y.data, ty, what="y")
    assert_close(x.grad, tx.grad, what="x.grad")
    assert_close(w.grad, tw.grad, what="W.grad")


def test_backward_gradient_may_be_a_list_or_a_tensor():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(gradient=[1.0, 0.5])
    assert_exact(x.grad, [2.0, 2.0])
    x.zero_grad()
    (x * x).backward(gradient=cr.tensor([0.0, 1.0]))
    assert_exact(x.grad, [0.0, 4.0])


def test_vector_jacobian_product_is_linear_in_the_vector():
    """J^T (2 u - 3 v) = 2 J^T u - 3 J^T v, for y = softmax(x) * sin(x) (exact up to
    rounding; the reference side is computed by PyTorch)."""
    rng = np.random.default_rng(1)
    xv, u, v = rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
    x = cr.tensor(xv, requires_grad=True)
    (cr.softmax(x) * cr.sin(x)).backward(gradient=2 * u - 3 * v)
    tx = torch_leaf(xv)
    ty = torch.softmax(tx, 0) * torch.sin(tx)
    gu, = torch.autograd.grad(ty, tx, torch.tensor(u), retain_graph=True)
    gv, = torch.autograd.grad(ty, tx, torch.tensor(v))
    assert_close(x.grad, 2 * gu - 3 * gv, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(2,), (2, 3), (1, 2)])
def test_backward_on_a_non_scalar_needs_a_gradient(shape):
    y = cr.ones(*shape, requires_grad=True) * 2.0
    with pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert "gradient=" in message and ".sum()" in message
    assert str(shape) in message


def test_backward_on_a_one_element_tensor_needs_no_gradient():
    x = cr.tensor([[3.0]], requires_grad=True)
    (x * x).backward()
    assert_exact(x.grad, [[6.0]])


def test_gradient_of_the_wrong_shape_names_both_shapes():
    y = cr.ones(2, 3, requires_grad=True) * 2.0
    with pytest.raises(ValueError) as info:
        y.backward(gradient=np.ones((3, 2)))
    assert "(3, 2)" in str(info.value) and "(2, 3)" in str(info.value)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_broadcast_gradients_match_pytorch(data):
    """a * b + a for random broadcast-compatible shapes (size-1 axes, missing leading
    axes): each gradient is summed back to its operand's shape, as PyTorch does."""
    out = data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=3), label="out")
    def operand_shape(label):
        lead = data.draw(st.integers(0, len(out)), label=label + " drops")
        return tuple(n if data.draw(st.booleans(), label=label) else 1 for n in out[lead:])
    sa, sb = operand_shape("a"), operand_shape("b")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    av, bv = rng.normal(size=sa), rng.normal(size=sb)
    v = rng.normal(size=np.broadcast_shapes(sa, sb))

    a, b = cr.tensor(av, requires_grad=True), cr.tensor(bv, requires_grad=True)
    (a * b + a).backward(gradient=v)
    ta, tb = torch_leaf(av), torch_leaf(bv)
    (ta * tb + ta).backward(torch.tensor(v))
    assert_close(a.grad, ta.grad, what=f"a{sa}")
    assert_close(b.grad, tb.grad, what=f"b{sb}")


# =======================================================================================
# 5. Where gradients go, accumulation, create_graph
# =======================================================================================

def test_backward_twice_doubles_the_leaf_gradients():
    """A graph kept with retain_graph=True is walked again; the gradients add up."""
    x = cr.tensor([1.0, -2.0], requires_grad=True)
    w = cr.tensor([3.0, 0.5], requires_grad=True)
    y = (x * w).sum()
    y.backward(retain_graph=True)
    assert_exact(x.grad, [3.0, 0.5])
    assert_exact(w.grad, [1.0, -2.0])
    y.backward()
    assert_exact(x.grad, [6.0, 1.0])
    assert_exact(w.grad, [2.0, -4.0])


def test_gradients_land_only_on_leaves_that_require_grad():
    x = cr.tensor([1.0, 2.0])                        # data: no gradient wanted
    w = cr.tensor([3.0, 4.0], requires_grad=True)
    h = x * w                                         # interior, not retained
    (h * h).sum().backward()
    assert_exact(w.grad, 2 * w.data * x.data ** 2)   # d/dw sum((x w)^2) = 2 x^2 w
    assert x.grad is None
    with pytest.warns(UserWarning, match="fills .grad only for leaves"):
        assert h.grad is None


def test_a_tensor_used_twice_sums_both_paths():
    """y = x*x + x: dy/dx = 2x + 1 (two uses of x, one through an interior node)."""
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = x * x
    (s + x + s).sum().backward()      # 2x^2 + x: 4x + 1
    assert_exact(x.grad, [5.0, 9.0, 13.0])


def test_backward_on_a_leaf_gives_ones():
    x = cr.tensor(2.0, requires_grad=True)
    x.backward()
    assert_exact(x.grad, 1.0)
    y = cr.tensor([1.0, 2.0], requires_grad=True)
    y.backward(gradient=np.array([3.0, 4.0]))
    assert_exact(y.grad, [3.0, 4.0])


def test_backward_on_a_tensor_that_does_not_require_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (cr.tensor([1.0, 2.0]) * 2.0).sum().backward()


def test_leaf_grad_does_not_share_memory_with_the_seed_or_each_other():
    """a + b hands the same gradient array to both operands; each leaf must get its own
    copy, or accumulating into one would change the other (and the caller's seed)."""
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    b = cr.tensor([3.0, 4.0], requires_grad=True)
    seed = np.array([1.0, 1.0])
    (a + b).backward(gradient=seed)
    assert not np.shares_memory(a.grad, b.grad)
    assert not np.shares_memory(a.grad, seed) and not np.shares_memory(b.grad, seed)
    a.grad += 1.0
    assert_exact(b.grad, [1.0, 1.0])
    assert_exact(seed, [1.0, 1.0])


def test_create_graph_gives_a_differentiable_gradient():
    """x**3 at 2: dy/dx = 3x^2 = 12, d2y/dx2 = 6x = 12."""
    x = cr.tensor(2.0, requires_grad=True)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert isinstance(g, Tensor) and g.requires_grad
    assert g.item() == 12.0
    x.grad = None
    g.backward()
    assert x.grad.item() == 12.0


def test_create_graph_second_derivatives_match_pytorch():
    """f(x) = sum(sin(x) * x^2 + exp(x) @ W) with a matrix W: the gradient of
    sum(grad f * c) (a Hessian-vector product) against PyTorch."""
    rng = np.random.default_rng(2)
    xv, wv, c = rng.normal(size=(2, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    x, w = cr.tensor(xv, requires_grad=True), cr.tensor(wv, requires_grad=True)
    (cr.sin(x) * x ** 2 + cr.exp(x) @ w).sum().backward(create_graph=True)
    gx = x.grad
    x.grad = w.grad = None
    (gx * c).sum().backward()

    tx, tw = torch_leaf(xv), torch_leaf(wv)
    f = (torch.sin(tx) * tx ** 2 + torch.exp(tx) @ tw).sum()
    tgx, = torch.autograd.grad(f, tx, create_graph=True)
    hx, hw = torch.autograd.grad((tgx * torch.tensor(c)).sum(), (tx, tw))
    assert_close(gx.data, tgx, what="first derivative")
    assert_close(x.grad, hx, rtol=1e-11, what="d/dx <grad_x f, c>")
    assert_close(w.grad, hw, rtol=1e-11, what="d/dW <grad_x f, c>")


def test_graph_is_freed_after_create_graph_once_leaf_gradients_are_reset(gc_disabled):
    """The differentiable gradient refers back to the graph (as in PyTorch); dropping it
    (x.grad = None) and the output frees every node without the garbage collector."""
    x = cr.tensor([0.5, 1.5], requires_grad=True)

    def build():
        p = x * x
        z = cr.exp(p).sum()
        return z, [weakref.ref(p), weakref.ref(z)]

    z, refs = build()
    z.backward(create_graph=True)
    assert isinstance(x.grad, Tensor)
    x.grad = None
    del z
    assert all(r() is None for r in refs)


# =======================================================================================
# 6. Grad modes: no_grad, enable_grad (per thread)
# =======================================================================================

def test_no_grad_as_a_context_manager():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    assert cr.is_grad_enabled()
    with cr.no_grad():
        assert not cr.is_grad_enabled()
        y = x * 2.0 + cr.exp(x)
    assert cr.is_grad_enabled()
    assert y.requires_grad is False and y._prev == () and y.is_leaf
    np.testing.assert_allclose(y.data, 2 * x.data + np.exp(x.data), rtol=1e-15)
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_no_grad_as_a_decorator():
    @cr.no_grad()
    def double(t):
        """Doubles."""
        assert not cr.is_grad_enabled()
        return t * 2.0

    x = cr.tensor([1.0], requires_grad=True)
    y = double(x)
    assert y.requires_grad is False and y._prev == ()
    assert cr.is_grad_enabled()
    assert double.__name__ == "double" and double.__doc__ == "Doubles."
    assert double(x).requires_grad is False      # reusable


def test_no_grad_decorator_is_reentrant():
    """A decorated function that calls itself: each call restores what it found."""
    states = []

    @cr.no_grad()
    def countdown(n):
        states.append(cr.is_grad_enabled())
        if n:
            countdown(n - 1)
            with cr.enable_grad():
                countdown(n - 1)
        states.append(cr.is_grad_enabled())

    countdown(2)
    assert not any(states)
    assert cr.is_grad_enabled()


def test_enable_grad_inside_no_grad_records_again():
    x = cr.tensor([3.0], requires_grad=True)
    with cr.no_grad():
        with cr.enable_grad():
            assert cr.is_grad_enabled()
            y = x * x
        z = x * x
        assert not cr.is_grad_enabled()
    assert y.requires_grad and not z.requires_grad
    y.backward(gradient=[1.0])
    assert_exact(x.grad, [6.0])


def test_enable_grad_as_a_decorator_inside_no_grad():
    @cr.enable_grad()
    def square(t):
        return t * t

    x = cr.tensor(2.0, requires_grad=True)
    with cr.no_grad():
        y = square(x)
        assert not cr.is_grad_enabled()
    y.backward()
    assert x.grad == 4.0


def test_backward_inside_no_grad_still_differentiates_a_recorded_graph():
    """no_grad() stops recording new operations; it does not stop backward() over a
    graph recorded before (as in PyTorch)."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with cr.no_grad():
        y.backward()
    assert_exact(x.grad, [2.0, 4.0])


def test_modes_are_restored_after_exceptions():
    with pytest.raises(KeyError):
        with cr.no_grad():
            with cr.enable_grad():
                with cr.no_grad():
                    raise KeyError("inner")
    assert cr.is_grad_enabled()

    with cr.no_grad():
        with pytest.raises(ValueError):
            with cr.enable_grad():
                raise ValueError
        assert not cr.is_grad_enabled()     # back to the outer no_grad, not to "on"
    assert cr.is_grad_enabled()

    @cr.no_grad()
    def fails():
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        fails()
    assert cr.is_grad_enabled()


class _Thread(threading.Thread):
    """A thread that hands its return value, or its exception, back to the caller."""

    def __init__(self, target):
        super().__init__(target=None, daemon=True)
        self._job, self.result, self.error = target, None, None

    def run(self):
        try:
            self.result = self._job()
        except BaseException as err:  # re-raised in the main thread by outcome()
            self.error = err

    def outcome(self):
        self.join(10)
        assert not self.is_alive(), "the thread did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def _grad_probe(x):
    """What a thread sees right now: the mode, and whether an operation records."""
    return cr.is_grad_enabled(), (x * x).requires_grad


def test_no_grad_in_a_thread_does_not_switch_off_the_main_thread():
    """The thread sits inside no_grad() while the main thread computes (no mode of
    its own): the main thread still records a graph."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    inside, main_done = threading.Event(), threading.Event()

    def worker():
        with cr.no_grad():
            inside.set()
            assert main_done.wait(10)
            return _grad_probe(x)

    thread = _Thread(worker)
    thread.start()
    try:
        assert inside.wait(10)
        main_sees = _grad_probe(x)          # while the thread is inside no_grad
    finally:
        main_done.set()
    assert thread.outcome() == (False, False)
    assert main_sees == (True, True)


def test_no_grad_in_the_main_thread_does_not_switch_off_a_thread():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    inside = threading.Event()

    def worker():
        assert inside.wait(10)
        return _grad_probe(x)              # while the main thread is inside no_grad

    thread = _Thread(worker)
    thread.start()
    with cr.no_grad():
        inside.set()
        thread_sees = thread.outcome()
        main_sees = _grad_probe(x)
    assert thread_sees == (True, True)
    assert main_sees == (False, False)
    assert cr.is_grad_enabled()


def test_a_new_thread_starts_with_grad_enabled_and_no_anomaly_mode():
    from chainrule.modes import is_anomaly_enabled
    seen = []
    with cr.no_grad(), cr.detect_anomaly():
        thread = threading.Thread(
            target=lambda: seen.append((cr.is_grad_enabled(), is_anomaly_enabled())))
        thread.start()
        thread.join(10)
    assert seen == [(True, False)]


# =======================================================================================
# 7. detect_anomaly
# =======================================================================================

def test_anomaly_in_the_forward_pass_names_the_operation():
    with cr.detect_anomaly(), np.errstate(divide="ignore", invalid="ignore"):
        with pytest.raises(FloatingPointError, match="log"):
            cr.log(cr.tensor([0.0]))                       # log(0) = -inf
        with pytest.raises(FloatingPointError, match="log"):
            cr.log(cr.tensor([1.0, -1.0], requires_grad=True))   # nan
    with np.errstate(divide="ignore"):
        assert cr.log(cr.tensor([0.0])).item() == -math.inf    # the mode is off again


def test_anomaly_in_the_forward_pass_points_to_the_users_line():
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        with pytest.raises(FloatingPointError) as info:
            line = sys._getframe().f_lineno + 1
            cr.log(cr.tensor([0.0]))
    assert f"{THIS_FILE}:{line}" in str(info.value)


def test_anomaly_in_the_backward_pass_names_the_operation_and_the_line():
    """sqrt at 0: the forward value 0 is fine, the gradient 1/(2 sqrt 0) is inf."""
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        x = cr.tensor([0.0, 4.0], requires_grad=True)
        line = sys._getframe().f_lineno + 1
        y = cr.sqrt(x)
        assert_exact(y.data, [0.0, 2.0])                   # no anomaly in the forward
        with pytest.raises(FloatingPointError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "sqrt" in message and "backward" in message
    assert f"{THIS_FILE}:{line}" in message                # the line that made y


def test_anomaly_in_backward_of_a_graph_built_outside_the_mode_has_no_none():
    x = cr.tensor([0.0], requires_grad=True)
    y = cr.sqrt(x).sum()
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        with pytest.raises(FloatingPointError, match="sqrt") as info:
            y.backward()
    assert "None" not in str(info.value)


def test_without_detect_anomaly_nan_and_inf_propagate_as_in_numpy():
    with np.errstate(divide="ignore", invalid="ignore"):
        y = cr.log(cr.tensor([0.0, -1.0, 1.0]))
        assert y.data[0] == -math.inf and math.isnan(y.data[1]) and y.data[2] == 0.0
        x = cr.tensor([0.0, 4.0], requires_grad=True)
        cr.sqrt(x).sum().backward()
    assert x.grad[0] == math.inf and x.grad[1] == 0.25


def test_detect_anomaly_passes_finite_computations_and_gives_the_same_gradient():
    rng = np.random.default_rng(3)
    xv = rng.normal(size=(3, 3))
    with cr.detect_anomaly():
        x = cr.tensor(xv, requires_grad=True)
        (cr.tanh(x @ x) ** 2).mean().backward()
    tx = torch_leaf(xv)
    (torch.tanh(tx @ tx) ** 2).mean().backward()
    assert_close(x.grad, tx.grad)


# =======================================================================================
# 8. The version counter and in-place updates
# =======================================================================================

def _used_then(change):
    """y = sum(w * t) with t a constant, then `change(t)`: returns (y, w)."""
    t = cr.tensor([1.0, 2.0])
    w = cr.tensor([3.0, 4.0], requires_grad=True)
    y = (w * t).sum()
    change(t)
    return y, w


def _assign_data(t):
    t.data = np.array([5.0, 6.0])


def _iadd_data(t):
    t.data += 1.0


def _iadd(t):
    t += 1.0


def _setitem(t):
    t[0] = 7.0


def test_replacing_a_tensors_array_after_it_was_used_makes_backward_refuse():
    y, w = _used_then(_assign_data)
    with pytest.raises(RuntimeError, match="multiply") as info:
        y.backward()
    assert "modified in place" in str(info.value)
    assert w.grad is None


def _fill_data(t):
    t.data.fill(0.0)


def _numpy_out(t):
    np.add(t.data, 1.0, out=t.data)


def _numpy_view(t):
    np.asarray(t)[0] = 7.0


@pytest.mark.parametrize("change, error", [
    (_iadd, RuntimeError), (_setitem, RuntimeError), (_iadd_data, ValueError),
    (_fill_data, ValueError), (_numpy_out, ValueError), (_numpy_view, ValueError)],
    ids=["t += 1", "t[0] = 7", "t.data += 1", "t.data.fill", "np.add(out=t.data)",
         "np.asarray(t)[0] = 7"])
def test_writing_into_a_tensor_a_graph_saved_raises_at_once(change, error):
    """Every way of writing into the saved array is refused where it happens: ours names
    the tensor; NumPy's says the array is read-only."""
    y, w = _used_then(change=lambda t: None)
    t = y._prev[0]._args[1]  # the constant tensor multiply saved
    with pytest.raises(error, match="saved by a recorded graph|read-only"):
        change(t)
    y.backward()  # nothing was written: the gradient is the right one
    assert w.grad.tolist() == [1.0, 2.0]


def test_after_backward_the_inputs_are_writable_again():
    """backward() frees the graph: an optimizer, or a hand-written update, writes into
    the parameters after it, and the intermediate results are writable too."""
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    h = cr.exp(w)
    assert not h.data.flags.writeable         # its node can still be walked
    y = (h * w).sum()
    y.backward()
    w.data -= 0.1 * w.grad                    # the usual hand-written SGD step
    assert w.data.flags.writeable and h.data.flags.writeable


def test_retain_graph_keeps_the_saved_arrays_locked_until_the_last_walk():
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    assert not w.data.flags.writeable
    y.backward()
    assert w.data.flags.writeable and w.grad.tolist() == [4.0, 8.0]


def test_changing_a_leaf_that_requires_grad_through_data_raises():
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    with pytest.raises(ValueError, match="read-only"):
        w.data += 1.0
    y.backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_changing_an_interior_result_through_data_makes_backward_refuse():
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    h = cr.exp(w)
    y = h.sum()
    h.data = np.zeros(2)
    with pytest.raises(RuntimeError, match="used by sum"):   # sum saw the old h
        y.backward()
    root = cr.exp(w)
    root.data = np.zeros(2)
    with pytest.raises(RuntimeError, match="result of exp"):
        root.backward(gradient=np.ones(2))


def test_a_graph_built_after_the_change_works():
    """The optimizer pattern: step (w.data -= ...), then build the next graph."""
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with cr.no_grad():
        w.data = w.data - 0.25 * w.grad
    w.zero_grad()
    assert_exact(w.data, [0.5, 1.0])
    (w * w).sum().backward()
    assert_exact(w.grad, [1.0, 2.0])


IN_PLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv]
IN_PLACE_IDS = ["+=", "-=", "*=", "/="]


@pytest.mark.parametrize("op", IN_PLACE, ids=IN_PLACE_IDS)
def test_in_place_operators_on_a_tensor_that_requires_grad_raise(op):
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        op(w, 2.0)
    assert_exact(w.data, [1.0, 2.0])   # unchanged


@pytest.mark.parametrize("op, expected", list(zip(IN_PLACE, [[3.0, 4.0], [-1.0, 0.0],
                                                            [2.0, 4.0], [0.5, 1.0]])),
                         ids=IN_PLACE_IDS)
def test_in_place_operators_on_a_plain_tensor_update_it(op, expected):
    t = cr.tensor([1.0, 2.0])
    assert op(t, 2.0) is t                      # the same object, updated in place
    assert_exact(t.data, expected)


def test_setitem_on_a_tensor_that_requires_grad_points_to_at():
    w = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\.at\["):
        w[0] = 5.0
    with pytest.raises(RuntimeError, match=r"\.at\["):
        w[np.array([0, 1])] = 5.0
    assert_exact(w.data, [1.0, 2.0, 3.0])


def test_setitem_on_a_plain_tensor_writes():
    t = cr.zeros(2, 3)
    t[0] = 1.0
    t[1, 1:] = cr.tensor([5.0, 6.0])
    t[[1, 1], [0, 0]] = 9.0
    assert_exact(t.data, [[1.0, 1.0, 1.0], [9.0, 5.0, 6.0]])


@pytest.mark.parametrize("alias", [lambda t: t.detach(), lambda t: t[:1],
                                   lambda t: t.reshape(-1)],
                         ids=["detach", "slice", "reshape"])
def test_writing_through_an_alias_is_refused(alias):
    """y = sum(w * t) is computed with t = [1, 2], so dy/dw = [1, 2]; writing 100 into
    t through an alias must not let backward() report [100, 2]."""
    t = cr.tensor([1.0, 2.0])
    w = cr.tensor([3.0, 4.0], requires_grad=True)
    y = (w * t).sum()
    view = alias(t)
    with pytest.raises(RuntimeError, match="saved by a recorded graph"):
        view[0] = 100.0
    y.backward()
    assert w.grad.tolist() == [1.0, 2.0]


# =======================================================================================
# 9. x.at[idx].set(v) and .add(v)
# =======================================================================================

def test_at_set_returns_a_new_tensor_and_leaves_x_unchanged():
    x = cr.tensor([1.0, 2.0, 3.0])
    y = x.at[1].set(10.0)
    assert y is not x
    assert_exact(y.data, [1.0, 10.0, 3.0])
    assert_exact(x.data, [1.0, 2.0, 3.0])
    z = x.at[np.array([0, 2])].add(5.0)
    assert_exact(z.data, [6.0, 2.0, 8.0])
    assert_exact(x.data, [1.0, 2.0, 3.0])


def test_at_set_gradients():
    """y = x.at[1].set(v); L = sum(y * c): dL/dx = c with 0 at index 1, dL/dv = c[1]."""
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = cr.tensor(5.0, requires_grad=True)
    c = np.array([1.0, 2.0, 3.0])
    y = x.at[1].set(v)
    assert_exact(y.data, [1.0, 5.0, 3.0])
    (y * c).sum().backward()
    assert_exact(x.grad, [1.0, 0.0, 3.0])
    assert_exact(v.grad, 2.0)


def test_at_set_a_slice_with_a_broadcast_value():
    x = cr.tensor(np.ones((2, 3)), requires_grad=True)
    v = cr.tensor([7.0, 8.0, 9.0], requires_grad=True)
    c = np.arange(6.0).reshape(2, 3)
    y = x.at[1:].set(v)
    assert_exact(y.data, [[1.0, 1.0, 1.0], [7.0, 8.0, 9.0]])
    (y * c).sum().backward()
    assert_exact(x.grad, [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
    assert_exact(v.grad, [3.0, 4.0, 5.0])


def test_at_add_with_repeated_indices_accumulates():
    """y = x.at[[0, 0, 2]].add(v) adds v twice at 0 and once at 2. With L = sum(y * c),
    dL/dx = c and dL/dv = c[0] + c[0] + c[2] (v scalar) or [c0, c0, c2] (v a vector)."""
    c = np.array([1.0, 2.0, 3.0])
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = cr.tensor(5.0, requires_grad=True)
    y = x.at[[0, 0, 2]].add(v)
    assert_exact(y.data, [11.0, 2.0, 8.0])
    (y * c).sum().backward()
    assert_exact(x.grad, c)
    assert_exact(v.grad, 5.0)

    x.zero_grad()
    u = cr.tensor([10.0, 20.0, 30.0], requires_grad=True)
    y = x.at[np.array([0, 0, 2])].add(u)
    assert_exact(y.data, [31.0, 2.0, 33.0])
    (y * c).sum().backward()
    assert_exact(x.grad, c)
    assert_exact(u.grad, [1.0, 1.0, 3.0])


def test_at_with_a_boolean_mask():
    x = cr.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    y = x.at[x < 0].set(0.0)                       # a differentiable relu, by hand
    assert_exact(y.data, [1.0, 0.0, 3.0, 0.0])
    (y * np.array([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert_exact(x.grad, [1.0, 0.0, 3.0, 0.0])


def test_at_updates_of_a_constant_with_a_parameter():
    """Only v requires grad: the result still records the graph (for v)."""
    x = cr.zeros(3)
    v = cr.tensor([2.0, 3.0], requires_grad=True)
    y = x.at[1:].add(v)
    assert y.requires_grad
    (y * y).sum().backward()
    assert_exact(v.grad, [4.0, 6.0])
    assert x.grad is None


def test_at_matches_pytorch_index_put_and_index_add():
    rng = np.random.default_rng(4)
    xv, vv, c = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    idx = np.array([3, 1, 3])
    x, v = cr.tensor(xv, requires_grad=True), cr.tensor(vv, requires_grad=True)
    (cr.tanh(x.at[idx].add(v)) * c).sum().backward()
    tx, tv = torch_leaf(xv), torch_leaf(vv)
    out = tx.index_add(0, torch.tensor(idx), tv)
    (torch.tanh(out) * torch.tensor(c)).sum().backward()
    assert_close(x.grad, tx.grad, what="x.grad (add)")
    assert_close(v.grad, tv.grad, what="v.grad (add)")

    idx = np.array([0, 2])                          # no repeats: set is well defined
    x, v = cr.tensor(xv, requires_grad=True), cr.tensor(vv[:2], requires_grad=True)
    (cr.sin(x.at[idx].set(v)) * c).sum().backward()
    tx, tv = torch_leaf(xv), torch_leaf(vv[:2])
    out = tx.index_put((torch.tensor(idx),), tv)
    (torch.sin(out) * torch.tensor(c)).sum().backward()
    assert_close(x.grad, tx.grad, what="x.grad (set)")
    assert_close(v.grad, tv.grad, what="v.grad (set)")


# =======================================================================================
# 10. Memory: no reference cycles; a 100,000-op chain
# =======================================================================================

def _hundred_op_graph(w, x):
    """About 100 operations (matmul, getitem, reductions, stack, concatenate, at[]).
    Returns the root and weak references to every intermediate result."""
    refs = []

    def keep(t):
        refs.append(weakref.ref(t))
        return t

    h = x
    for _ in range(9):
        h = keep(h @ w)                                        # (4, 3)
        h = keep(cr.tanh(h))
        col = keep(h.sum(axis=0))                              # (3,)
        h = keep(h * col)
        h = keep(h - keep(h.mean()))
        h = keep(h[[0, 1, 2, 3, 3]])                           # (5, 3), fancy index
        h = keep(cr.concatenate([keep(h[:2]), keep(h[3:])]))   # (4, 3)
        h = keep(cr.tensor([keep(h[0]), keep(h[1]), keep(h[2]), keep(h[3])]))
        h = keep(h.at[0].add(keep(h.max())))
    root = keep(cr.norm(h) + keep(cr.logsumexp(h)))
    return root, refs


@pytest.mark.parametrize("run_backward", [False, True], ids=["built", "after backward"])
def test_dropping_the_root_frees_the_graph_without_the_garbage_collector(
        gc_disabled, run_backward):
    """A node refers only to its operands and arguments (no closure that captures the
    node itself), so with the cyclic collector off, deleting the root frees every
    intermediate at once, whether or not backward() ran."""
    w = cr.randn(3, 3, seed=0, requires_grad=True)
    x = cr.randn(4, 3, seed=1)
    root, refs = _hundred_op_graph(w, x)
    assert len(refs) >= 100
    assert all(r() is not None for r in refs)
    if run_backward:
        root.backward()
        assert w.grad.shape == (3, 3) and np.all(np.isfinite(w.grad))
    del root
    alive = sum(r() is not None for r in refs)
    assert alive == 0, f"{alive} of {len(refs)} intermediates outlived the root"


@pytest.mark.parametrize("anomaly", [False, True], ids=["plain", "detect_anomaly"])
def test_a_training_loop_leaves_no_garbage_for_the_collector(gc_disabled, anomaly):
    """Three steps of forward, backward and an update under no_grad (also with
    detect_anomaly, which records where tensors were made): nothing is left for the
    cyclic collector to find."""
    rng = np.random.default_rng(5)
    x, target = cr.tensor(rng.normal(size=(8, 3))), cr.tensor(rng.normal(size=(8, 1)))
    w1 = cr.randn(3, 4, seed=1, requires_grad=True)
    b1 = cr.zeros(4, requires_grad=True)
    w2 = cr.randn(4, 1, seed=2, requires_grad=True)
    losses = []
    with cr.detect_anomaly() if anomaly else contextlib.nullcontext():
        for _ in range(3):
            hidden = cr.relu(x @ w1 + b1)
            loss = cr.mean((hidden @ w2 - target) ** 2)
            loss.backward()
            losses.append(loss.item())
            with cr.no_grad():
                for p in (w1, b1, w2):
                    p.data = p.data - 0.1 * p.grad
                    p.zero_grad()
            del hidden, loss
    assert losses[-1] < losses[0]
    assert gc.collect() == 0


@pytest.fixture
def default_recursion_limit():
    """Python's default limit (1000) for the duration of a test, whatever it was."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def test_a_100000_op_chain_backpropagates_under_the_default_recursion_limit(
        default_recursion_limit):
    """y = x * 1.0 + 0.0, 50,000 times: a graph 100,000 operations deep. Walking it,
    differentiating it and freeing it must not recurse; dy/dx = 1 exactly."""
    x = cr.tensor([1.0, -2.0, 0.5], requires_grad=True)
    y = x
    for _ in range(50_000):                   # two operations per step
        y = y * 1.0 + 0.0
    (y * np.array([1.0, 2.0, 3.0])).sum().backward()
    assert_exact(x.grad, [1.0, 2.0, 3.0])
    assert_exact(y.data, [1.0, -2.0, 0.5])
    del y                                      # freeing the chain must not overflow


def test_a_long_chain_of_distinct_factors_has_the_exact_gradient():
    """y = x * 2 * 0.5 * 2 * 0.5 ... (20,000 factors): dy/dx = 1 exactly (powers of 2)."""
    x = cr.tensor([3.0], requires_grad=True)
    y = x
    for k in range(20_000):
        y = y * (2.0 if k % 2 == 0 else 0.5)
    y.backward(gradient=[1.0])
    assert_exact(x.grad, [1.0])


# =======================================================================================
# 11. Dtypes of gradients
# =======================================================================================

def test_a_float32_parameter_gets_a_float32_gradient_from_float64_inputs():
    w = cr.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32, requires_grad=True)
    xv = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = cr.tensor(xv)                                  # float64
    y = (x @ w).sum()
    assert y.dtype == np.float64                       # NumPy promotion in the forward
    y.backward()
    assert w.grad.dtype == np.float32
    assert_exact(w.grad, xv.sum(axis=0)[:, None].repeat(2, axis=1), dtype=np.float32)
    b = cr.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    (b * np.array([1.0, 3.0])).sum().backward()        # a float64 array operand
    assert_exact(b.grad, [1.0, 3.0], dtype=np.float32)


def test_float32_stays_float32_with_python_numbers():
    w = cr.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    y = (w * 2.5 + 1).sum()
    assert y.dtype == np.float32
    y.backward()
    assert_exact(w.grad, [2.5, 2.5], dtype=np.float32)


def test_float32_gradient_matches_pytorch_float32():
    rng = np.random.default_rng(6)
    xv = rng.normal(size=(4, 3)).astype(np.float32)
    x = cr.tensor(xv, requires_grad=True)
    cr.softmax(x @ x.T, axis=-1).max(axis=1).sum().backward()
    tx = torch.tensor(xv, requires_grad=True)
    torch.softmax(tx @ tx.T, dim=-1).max(dim=1).values.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=2e-5, atol=2e-6)


# =======================================================================================
# 12. Determinism
# =======================================================================================

def test_the_same_computation_twice_gives_bit_identical_gradients():
    def gradients():
        rng = np.random.default_rng(7)
        x = cr.tensor(rng.normal(size=(16, 8)))
        w1 = cr.tensor(rng.normal(size=(8, 32)), requires_grad=True)
        w2 = cr.tensor(rng.normal(size=(32, 4)), requires_grad=True)
        h = cr.tanh(x @ w1)
        logits = h @ w2 + h[:, :4] * h[:, 4:8]
        loss = -cr.log_softmax(logits, axis=1)[np.arange(16), np.arange(16) % 4].mean()
        loss = loss + 1e-3 * (cr.norm(w1) + cr.var(w2))
        loss.backward()
        return loss.data.tobytes(), w1.grad.tobytes(), w2.grad.tobytes()

    first, second = gradients(), gradients()
    assert first == second


def test_a_broadcast_scalar_parameter_gets_a_0d_ndarray_gradient():
    """Summing a gradient down to shape () gives a NumPy scalar; .grad stays an ndarray."""
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    b = cr.tensor(0.5, requires_grad=True)
    (x + b).sum().backward()
    assert type(b.grad) is np.ndarray and b.grad.shape == () and b.grad == 2.0


@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_anomaly_names_a_users_file_even_inside_a_folder_called_chainrule(tmp_path):
    """Frames are skipped by the package's own directory, not by a folder's name: a clone
    of this project is often a folder called chainrule."""
    script = tmp_path / "chainrule" / "examples" / "mine.py"
    script.parent.mkdir(parents=True)
    script.write_text("import chainrule as cr\n"
                      "with cr.detect_anomaly():\n"
                      "    cr.log(cr.tensor([-1.0], requires_grad=True))\n")
    with pytest.raises(FloatingPointError, match=r"mine\.py:3"):
        runpy.run_path(str(script))


def test_cross_entropy_backward_twice_accumulates_exactly_twice():
    """Its VJP reuses the softmax the forward kept; it must not consume it."""
    logits = cr.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], requires_grad=True)
    loss = cr.nn.functional.cross_entropy(logits, [1, 2])
    loss.backward(retain_graph=True)
    once = logits.grad.copy()
    loss.backward()
    np.testing.assert_array_equal(logits.grad, 2 * once)


@pytest.mark.skipif(not fused.enabled(), reason="the speed overrides are off "
                    "(CHAINRULE_FAST=0): no fused operation")
def test_linear_relu_is_relu_of_linear_in_one_node():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((5, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)
    fused = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
    plain = [cr.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = cr.nn.functional.linear(*fused, activation="relu")
    z = cr.relu(cr.nn.functional.linear(*plain))
    assert y._op.name == "linear_relu" and y._prev == tuple(fused)
    np.testing.assert_array_equal(y.data, z.data)
    (y * y).sum().backward()
    (z * z).sum().backward()
    for f, p in zip(fused, plain):
        np.testing.assert_allclose(f.grad, p.grad, rtol=1e-15, atol=1e-15)


# ---------------------------------------------------------------------------------------
# What PyTorch users type first
# ---------------------------------------------------------------------------------------

def test_pytorch_names_of_the_axis_arguments_are_accepted():
    x = cr.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.sum(dim=1).tolist() == [3.0, 12.0]
    assert cr.mean(x, dim=0, keepdim=True).shape == (1, 3)
    assert x.max(dim=1).tolist() == [2.0, 5.0]
    assert cr.softmax(x, dim=0).shape == (2, 3)
    assert cr.concatenate([x, x], dim=1).shape == (2, 6)
    assert cr.var(x, dim=1).shape == (2,) and cr.cumsum(x, dim=1).shape == (2, 3)
    assert cr.argmax(x, dim=1).tolist() == [2, 2] and cr.all(x >= 0, dim=0).tolist() == [True] * 3
    with pytest.raises(TypeError, match="both axis= and dim="):
        cr.sum(x, axis=0, dim=1)


def test_pytorch_conveniences_on_a_tensor():
    x = cr.tensor([1.0, 3.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    assert f"{loss:.2f}" == "14.00" and round(loss, 1) == 14.0
    assert x.tolist() == [1.0, 3.0, 2.0] and int(x.argmax()) == 1 and int(x.argmin()) == 0
    y = x.clone()
    assert not np.shares_memory(y.data, x.data)
    loss.backward(retain_graph=True)
    loss.backward()
    assert x.grad.tolist() == [4.0, 12.0, 8.0]


# ---------------------------------------------------------------------------------------
# Formatting, floor division, inference_mode
# ---------------------------------------------------------------------------------------

def test_a_format_spec_applies_to_every_entry():
    assert f"{cr.tensor(0.123456):.3f}" == "0.123"
    assert f"{cr.tensor([1.0, 2.5]):.2f}" == "[1.00, 2.50]"
    assert f"{cr.tensor([[1.0, 2.0], [3.0, 4.0]]):.1f}" == "[[1.0, 2.0],\n [3.0, 4.0]]"
    assert f"{cr.tensor([1.0, 2.0])}" == str(cr.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"format: the spec 'd' does not apply to the "
                                        r"entries of a tensor of dtype float64"):
        f"{cr.tensor([1.0, 2.0]):d}"


def test_floor_division_is_numpys_and_its_derivative_is_zero_as_in_jax():
    x = cr.tensor([3.0, -4.5, 1.0], requires_grad=True)
    np.testing.assert_array_equal((x // 2).data, np.array([3.0, -4.5, 1.0]) // 2)
    np.testing.assert_array_equal((7 // x).data, 7 // np.array([3.0, -4.5, 1.0]))
    assert (x // 0.1).data[2] == 1.0 // 0.1        # NumPy's rounding, not floor(x / 0.1)
    assert not (x // 2).requires_grad               # piecewise constant
    ((x // 2) * x).sum().backward()                 # d/dx (x // 2) x = x // 2
    np.testing.assert_array_equal(x.grad, np.array([3.0, -4.5, 1.0]) // 2)
    np.testing.assert_array_equal(cr.grad(lambda v: cr.sum((v // 2) * v))(x.data),
                                  np.array([3.0, -4.5, 1.0]) // 2)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)  # (tests/conftest.py puts it back)
    expected = jax.grad(lambda v: ((v // 2) * v).sum())(jax.numpy.array([3.0, -4.5, 1.0]))
    np.testing.assert_array_equal(x.grad, np.asarray(expected))


def test_inference_mode_is_no_grad_and_inference_mode_false_changes_nothing():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    with cr.inference_mode():
        assert not (x * 2).requires_grad and not cr.is_grad_enabled()
    assert cr.is_grad_enabled()

    @cr.inference_mode
    def bare(v):
        return v * 2

    @cr.inference_mode(False)
    def kept(v):
        return v * 2

    assert not bare(x).requires_grad and kept(x).requires_grad
    with cr.no_grad(), cr.inference_mode(False):
        assert not cr.is_grad_enabled()
