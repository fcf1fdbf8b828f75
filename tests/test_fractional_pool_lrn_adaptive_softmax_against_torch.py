"""nn's last torch layers against torch 2.13 in float64: fractional max pooling (2-d and
3-d, functions and modules), torch's legacy cross-channel LRN (CrossMapLRN2d) and the
adaptive log-softmax (AdaptiveLogSoftmaxWithLoss).

Fractional pooling with torch's ``_random_samples`` gives torch's windows, so values and
indices are compared exactly; the gradient of sum(w * y), a Hessian-vector product of
sum(w * y**2) against torch's double backward, forward mode against reverse, float32,
cr.vmap and cr.jit follow. Inputs are continuous draws, so no window has a tie.

CrossMapLRN2d's values are torch's; its gradient is checked against central differences
of torch's forward, since torch's hand-written backward differentiates a different
(centred) window than its forward uses, and fails for some sizes: chainrule's is the
derivative of the forward. Second order is by central differences of the gradient.
"""

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from chainrule.nn.adaptive_softmax import AdaptiveLogSoftmaxWithLoss
from chainrule.nn.legacy_norms import CrossMapLRN2d
from chainrule.nn.pooling import FractionalMaxPool2d, FractionalMaxPool3d
from chainrule.nn.pooling_functions import (fractional_max_pool2d,
                                            fractional_max_pool2d_with_indices,
                                            fractional_max_pool3d,
                                            fractional_max_pool3d_with_indices)
from seeds_and_tolerances import central_differences, per_test_generator

RNG = per_test_generator(20261215)
RTOL = 1e-12
OURS = {2: fractional_max_pool2d, 3: fractional_max_pool3d}
WITH_INDICES = {2: fractional_max_pool2d_with_indices, 3: fractional_max_pool3d_with_indices}


def close(actual, expected, rtol=RTOL, atol=None):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol if atol is None else atol)


def normal(*shape):
    return RNG.standard_normal(shape)


def T(a, grad=True):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=grad)


def under_transforms(f, x):
    """cr.jit and cr.vmap (over a leading batch of two inputs) give the eager numbers."""
    eager = f(x)
    close(cr.jit(f)(x), eager, 1e-14)
    other = normal(*np.shape(x))
    batched = cr.vmap(f)(np.stack([x, other]))
    close(batched[0], eager, 1e-14)
    close(batched[1], f(other), 1e-14)


# =======================================================================================
# 1. fractional max pooling
# =======================================================================================

FRACTIONAL = [  # (d, input shape, kernel_size, output_size, output_ratio)
    (2, (2, 3, 7, 6), 2, 3, None), (2, (2, 3, 7, 6), 3, (4, 2), None),
    (2, (1, 2, 9, 8), (2, 3), None, (0.5, 0.5)), (2, (2, 2, 8, 9), (3, 2), None, (0.7, 0.4)),
    (2, (2, 2, 5, 5), 1, 5, None), (2, (3, 6, 7), 2, (5, 3), None),
    (3, (1, 2, 5, 6, 7), 2, 3, None), (3, (2, 2, 6, 5, 7), (2, 3, 2), (2, 2, 4), None),
    (3, (1, 2, 8, 7, 6), (3, 2, 2), None, 0.5), (3, (2, 5, 6, 7), 2, (3, 2, 4), None)]


def _settings(d, shape, kernel, size, ratio):
    samples = RNG.random(((shape[0] if len(shape) == d + 2 else 1), shape[-d - 1], d))
    return dict(kernel_size=kernel, output_size=size, output_ratio=ratio), samples


@pytest.mark.parametrize("d, shape, kernel, size, ratio", FRACTIONAL)
def test_fractional_max_pool_is_torchs(d, shape, kernel, size, ratio):
    settings, samples = _settings(d, shape, kernel, size, ratio)
    theirs_f = getattr(TF, f"fractional_max_pool{d}d")
    ours = lambda x: OURS[d](x, **settings, _random_samples=samples)  # noqa: E731
    theirs = lambda x: theirs_f(x, **settings, _random_samples=torch.tensor(samples))  # noqa: E731,E501
    x = normal(*shape)
    tx = T(x)
    ty = theirs(tx)
    y, indices = OURS[d](x, **settings, return_indices=True, _random_samples=samples)
    close(y, ty)
    _, tindices = theirs_f(tx, **settings, return_indices=True,
                           _random_samples=torch.tensor(samples))
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, tindices.numpy())
    y2, indices2 = WITH_INDICES[d](x, **settings, _random_samples=samples)
    close(y2, ty)
    np.testing.assert_array_equal(indices2, indices)
    # the gradient of sum(w * y), forward mode against it, and a Hessian-vector product
    # of sum(w * y**2) (max pooling is piecewise linear: sum(w * y)'s Hessian is 0)
    w = normal(*ty.shape)
    (tg,) = torch.autograd.grad((ty * torch.tensor(w)).sum(), tx)
    g = cr.grad(lambda x: cr.sum(ours(x) * w))(x)
    close(g, tg)
    v = normal(*shape)
    _, tangent = cr.jvp(ours, (x,), (v,))
    close(np.sum(np.asarray(tangent) * w), np.sum(np.asarray(g) * v))
    (tg2,) = torch.autograd.grad((theirs(tx) ** 2 * torch.tensor(w)).sum(), tx,
                                 create_graph=True)
    (th,) = torch.autograd.grad((tg2 * torch.tensor(v)).sum(), tx)
    close(cr.hvp(lambda x: cr.sum(ours(x) ** 2 * w), x, v), th)
    under_transforms(ours, x)
    xs = np.stack([x, normal(*shape)])
    index_of = lambda x: OURS[d](x, **settings, return_indices=True,  # noqa: E731
                                 _random_samples=samples)[1]
    np.testing.assert_array_equal(cr.vmap(index_of)(xs), np.stack([index_of(a) for a in xs]))
    np.testing.assert_array_equal(cr.jit(index_of)(x), indices)


@pytest.mark.parametrize("d, shape, kernel, size, ratio", FRACTIONAL[:2] + FRACTIONAL[6:8])
def test_fractional_max_pool_float32_takes_torchs_float32_windows(d, shape, kernel, size,
                                                                  ratio):
    settings, samples = _settings(d, shape, kernel, size, ratio)
    x32, s32 = normal(*shape).astype(np.float32), samples.astype(np.float32)
    y, indices = OURS[d](cr.tensor(x32), **settings, return_indices=True,
                         _random_samples=s32)
    ty, tindices = getattr(TF, f"fractional_max_pool{d}d")(
        torch.tensor(x32), **settings, return_indices=True, _random_samples=torch.tensor(s32))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.data, ty.numpy())
    np.testing.assert_array_equal(indices, tindices.numpy())
    g = cr.grad(lambda x: cr.sum(OURS[d](x, **settings, _random_samples=s32) ** 2))(x32)
    assert g.dtype == np.float32


def test_fractional_windows_match_torch_over_many_samples_and_sizes():
    """The windows are torch's for every sample, size and kernel tried (including the
    sample 0 and samples near 1), in float64 and float32."""
    for dtype in (np.float64, np.float32):
        for _ in range(60):
            spatial = tuple(int(n) for n in RNG.integers(2, 12, 2))
            kernel = tuple(int(RNG.integers(1, n + 1)) for n in spatial)
            size = tuple(int(RNG.integers(1, n - k + 2)) for n, k in zip(spatial, kernel))
            x = np.arange(np.prod(spatial), dtype=dtype).reshape((1, 1) + spatial)
            samples = RNG.random((1, 1, 2)).astype(dtype)
            samples[0, 0, RNG.integers(2)] = RNG.choice([0.0, np.nextafter(1.0, 0.0)])
            samples = samples.astype(dtype)
            _, i = fractional_max_pool2d(x, kernel, size, return_indices=True,
                                         _random_samples=samples)
            _, ti = TF.fractional_max_pool2d(torch.tensor(x), kernel, size,
                                             return_indices=True,
                                             _random_samples=torch.tensor(samples))
            np.testing.assert_array_equal(i, ti.numpy())


def test_fractional_max_pool_draws_from_rng_and_the_default_generator():
    x = normal(2, 3, 9, 9)
    a = fractional_max_pool2d(x, 2, output_size=4, rng=7)
    b = fractional_max_pool2d(x, 2, output_size=4, rng=np.random.default_rng(7))
    close(a, b, 0)
    samples = np.random.default_rng(7).random((2, 3, 2))
    close(a, fractional_max_pool2d(x, 2, output_size=4, _random_samples=samples), 0)
    cr.manual_seed(3)
    first = fractional_max_pool2d(x, 2, output_size=4)
    cr.manual_seed(3)
    close(fractional_max_pool2d(x, 2, output_size=4), first, 0)
    assert first.shape == (2, 3, 4, 4)


@pytest.mark.parametrize("d", [2, 3])
def test_fractional_max_pool_modules_are_torchs(d):
    module_type = {2: FractionalMaxPool2d, 3: FractionalMaxPool3d}[d]
    shape = (2, 3) + (7,) * d
    samples = RNG.random((2, 3, d))
    module = module_type(2, output_size=3, return_indices=True, _random_samples=samples)
    tmodule = getattr(tnn, f"FractionalMaxPool{d}d")(
        2, output_size=3, return_indices=True, _random_samples=torch.tensor(samples))
    assert repr(module) == repr(tmodule)
    assert module.kernel_size == tmodule.kernel_size and module.output_size == tmodule.output_size
    x = normal(*shape)
    y, indices = module(x)
    ty, tindices = tmodule(torch.tensor(x))
    close(y, ty)
    np.testing.assert_array_equal(indices, tindices.numpy())
    ratio = module_type(3, output_ratio=0.5)
    tratio = getattr(tnn, f"FractionalMaxPool{d}d")(3, output_ratio=0.5)
    assert repr(ratio) == repr(tratio) and ratio.output_ratio == tratio.output_ratio
    assert ratio(x).shape == tuple(tratio(torch.tensor(x)).shape)


FRACTIONAL_REFUSALS = [
    (lambda: fractional_max_pool2d(np.ones((1, 1, 5, 5)), 3, output_size=4),
     r"fractional_max_pool2d: kernel_size \(3, 3\) and output_size \(4, 4\) do not fit "
     r"input of spatial shape \(5, 5\)"),
    (lambda: fractional_max_pool3d(np.ones((1, 1, 4, 4, 4)), 2, output_size=3),
     r"fractional_max_pool3d: .* expected output \+ kernel - 1 < input"),
    (lambda: fractional_max_pool2d(np.ones((5, 5)), 2, output_size=2),
     r"fractional_max_pool2d: input of shape \(5, 5\), expected \(N, C, H, W\)"),
    (lambda: fractional_max_pool2d(np.ones((1, 1, 5, 5)), 2),
     "fractional_max_pool2d: requires an output_size or an output_ratio"),
    (lambda: fractional_max_pool2d(np.ones((2, 1, 5, 5)), 2, output_size=2,
                                   _random_samples=np.zeros((1, 1, 2))),
     r"_random_samples of shape \(1, 1, 2\) for input of shape \(2, 1, 5, 5\), "
     r"expected \(2, 1, 2\)"),
    (lambda: FractionalMaxPool2d(2), "FractionalMaxPool2d: requires an output_size"),
    (lambda: FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
     "FractionalMaxPool2d: takes one of output_size and output_ratio"),
    (lambda: FractionalMaxPool3d(2, output_ratio=1.5),
     "FractionalMaxPool3d: output_ratio must be between 0 and 1")]


@pytest.mark.parametrize("case", range(len(FRACTIONAL_REFUSALS)))
def test_fractional_max_pool_refusals(case):
    call, match = FRACTIONAL_REFUSALS[case]
    with pytest.raises(ValueError, match=match) as error:
        call()
    assert "\n" not in str(error.value)


# =======================================================================================
# 2. CrossMapLRN2d
# =======================================================================================

LRNS = [(1, 1e-4, 0.75, 1), (2, 0.3, 0.6, 2.0), (3, 1e-4, 0.75, 1), (3, 0.7, 0.5, 1.5),
        (4, 0.5, 0.75, 1.0), (5, 0.9, 1.2, 0.5), (6, 0.2, 0.75, 2.0), (9, 0.4, 0.9, 1.0)]


@pytest.mark.parametrize("channels", [1, 3, 7])
@pytest.mark.parametrize("size, alpha, beta, k", LRNS)
def test_cross_map_lrn2d_values_are_torchs(channels, size, alpha, beta, k):
    x = normal(2, channels, 3, 2)
    module = CrossMapLRN2d(size, alpha, beta, k)
    tmodule = tnn.CrossMapLRN2d(size, alpha, beta, k)
    assert repr(module) == repr(tmodule)
    close(module(x), tmodule(T(x, False)))


@pytest.mark.parametrize("size, alpha, beta, k", LRNS[1:6])
def test_cross_map_lrn2d_derivatives_are_those_of_torchs_forward(size, alpha, beta, k):
    x = normal(1, 5, 2, 2)
    w = normal(1, 5, 2, 2)
    module = CrossMapLRN2d(size, alpha, beta, k)
    tmodule = tnn.CrossMapLRN2d(size, alpha, beta, k)

    def torch_loss(a):
        return float((tmodule(T(a, False)) * torch.tensor(w)).sum())

    loss = lambda x: cr.sum(module(x) * w)  # noqa: E731
    g = cr.grad(loss)(x)
    close(g, central_differences(torch_loss, x), 1e-7, 1e-8)
    v = normal(*x.shape)
    _, tangent = cr.jvp(module, (x,), (v,))
    close(np.sum(np.asarray(tangent) * w), np.sum(np.asarray(g) * v))
    along = lambda t: float(np.sum(np.asarray(cr.grad(loss)(x + t * v)) * v))  # noqa: E731
    hv = np.sum(np.asarray(cr.hvp(loss, x, v)) * v)
    close(hv, central_differences(along, np.zeros(()))[()], 1e-6, 1e-7)
    under_transforms(module, x)
    y32 = module(cr.tensor(x.astype(np.float32)))
    assert y32.dtype == np.float32
    close(y32, tmodule(torch.tensor(x.astype(np.float32))), 1e-6)


def test_cross_map_lrn2d_refusals():
    with pytest.raises(ValueError, match=r"CrossMapLRN2d: input of shape \(3, 4, 5\), "
                                         r"expected 4-D") as error:
        CrossMapLRN2d(3)(np.ones((3, 4, 5)))
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="CrossMapLRN2d: size must be a positive int"):
        CrossMapLRN2d(0)(np.ones((1, 2, 3, 3)))


# =======================================================================================
# 3. AdaptiveLogSoftmaxWithLoss
# =======================================================================================

ASMS = [  # (in_features, n_classes, cutoffs, div_value, head_bias)
    (8, 10, [3, 6], 2.0, False), (8, 10, [3, 6], 2.0, True), (16, 20, [5], 4.0, False),
    (12, 9, [2, 4, 7], 1.5, True)]


def _pair(in_features, n_classes, cutoffs, div_value, head_bias):
    tmodule = tnn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs,
                                             div_value=div_value,
                                             head_bias=head_bias).double()
    module = AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value,
                                        head_bias, rng=0)
    module.load_torch_state_dict({k: v.numpy() for k, v in tmodule.state_dict().items()})
    return module, tmodule


@pytest.mark.parametrize("in_features, n_classes, cutoffs, div_value, head_bias", ASMS)
def test_adaptive_log_softmax_is_torchs(in_features, n_classes, cutoffs, div_value,
                                        head_bias):
    module, tmodule = _pair(in_features, n_classes, cutoffs, div_value, head_bias)
    assert repr(module) == repr(tmodule)
    assert sorted(module.torch_state_dict()) == sorted(tmodule.state_dict())
    x = normal(6, in_features)
    target = RNG.integers(0, n_classes, 6)
    target[:2] = [0, n_classes - 1]
    tx = T(x)
    tout = tmodule(tx, torch.tensor(target))
    out = module(x, target)
    assert type(out).__name__ == "ASMOutput" and out._fields == tout._fields
    close(out.output, tout.output)
    close(out.loss, tout.loss)
    close(module.log_prob(x), tmodule.log_prob(T(x, False)))
    np.testing.assert_array_equal(module.predict(x), tmodule.predict(T(x, False)).numpy())
    one = module(x[0], np.int64(target[0]))
    tone = tmodule(T(x[0], False), torch.tensor(target[0]))
    assert one.output.shape == () and one.loss.shape == ()
    close(one.output, tone.output)
    # gradients in the input and the weights, forward mode, a Hessian-vector product
    (tg,) = torch.autograd.grad(tout.loss, tx, create_graph=True)
    close(cr.grad(lambda x: module(x, target).loss)(x), tg)
    v = normal(*x.shape)
    (th,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tx)
    close(cr.hvp(lambda x: module(x, target).loss, x, v), th)
    _, tangent = cr.jvp(lambda x: module(x, target).loss, (x,), (v,))
    close(tangent, (tg * torch.tensor(v)).sum())
    tmodule.zero_grad()
    tmodule(T(x, False), torch.tensor(target)).loss.backward()
    module.zero_grad()
    module(cr.tensor(x), target).loss.backward()
    for name, parameter in module.named_parameters():
        torch_name = name.replace(".layers.", ".")
        tgrad = tmodule.get_parameter(torch_name).grad  # None for a cluster no target is in
        close(parameter.grad, np.zeros(parameter.shape) if tgrad is None else tgrad)
    close(cr.jit(lambda x: module(x, target).loss)(x), out.loss, 1e-14)
    # (under cr.vmap the target is fixed: its range is checked on its numbers)
    rows = cr.vmap(lambda r: module(r, np.int64(target[0])).output)(x)
    close(rows, [float(module(r, np.int64(target[0])).output.data) for r in x], 1e-14)


def test_adaptive_log_softmax_float32():
    module = AdaptiveLogSoftmaxWithLoss(8, 10, [4], rng=0, dtype=np.float32)
    out = module(cr.tensor(normal(3, 8).astype(np.float32)), np.array([1, 5, 9]))
    assert out.output.dtype == np.float32 and out.loss.dtype == np.float32


ASM_REFUSALS = [
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [], rng=0), "cutoffs must not be empty"),
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3], rng=0),
     r"cutoffs \[6, 3\] for n_classes 10, expected unique increasing ints"),
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10], rng=0), r"in \[1, n_classes - 1\]"),
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [4], rng=0)(np.ones((3, 8)),
                                                           np.array([0, 10, 2])),
     r"targets in \[0, 10\], expected them in \[0, 9\]"),
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [4], rng=0)(np.ones((3, 8)), np.array([0, 1])),
     r"input of shape \(3, 8\) and target of shape \(2,\), expected the same batch size"),
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [4], rng=0)(np.ones((3, 7)), np.array([0] * 3)),
     r"forward: input of shape \(3, 7\), expected \(N, in_features\) with in_features = 8"),
    (lambda: AdaptiveLogSoftmaxWithLoss(8, 10, [4], rng=0).log_prob(np.ones(8)),
     r"log_prob: input of shape \(8,\)")]


@pytest.mark.parametrize("case", range(len(ASM_REFUSALS)))
def test_adaptive_log_softmax_refusals(case):
    call, match = ASM_REFUSALS[case]
    with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss") as error:
        call()
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match=match):
        call()


def test_exported_under_torchs_names():
    assert nn.FractionalMaxPool2d is FractionalMaxPool2d
    assert nn.CrossMapLRN2d is CrossMapLRN2d
    assert nn.AdaptiveLogSoftmaxWithLoss is AdaptiveLogSoftmaxWithLoss
    assert F.fractional_max_pool3d_with_indices is fractional_max_pool3d_with_indices
