"""chainrule.nn.init against torch.nn.init.

What is deterministic is torch's exactly: the gains, the fans, constant_, ones_,
zeros_, eye_, dirac_, and every refusal. What is drawn follows torch's distribution and
scale: each draw's bound is torch's bound (computed by torch from the same shape, read
back from its own draws' range), and on large tensors the sample moments match the
distribution's within a few standard errors (the draws are seeded, so a test gives the
same numbers at every run). orthogonal_ is orthogonal to rounding; sparse_ has torch's
number of zeros in each column. A layer's weight stays a Parameter that requires grad,
and nothing is recorded.
"""

import math

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.nn import init
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261130)

SHAPES = [(40, 30), (16, 8, 3), (8, 4, 3, 5), (6, 2, 3, 3, 2)]


def _seeded():
    return np.random.default_rng(RNG.integers(2 ** 32))


def _torch_seeded():
    """torch's draws seeded from the test's own generator too (no state between tests)."""
    return torch.Generator().manual_seed(int(RNG.integers(2 ** 32)))


def _spread(n, kurtosis=3.0):
    """Five standard errors of a sample's standard deviation, relative, for n draws of
    a distribution of that kurtosis (3 normal, 1.8 uniform)."""
    return 5 * math.sqrt((kurtosis - 1) / (4 * n))


@pytest.mark.parametrize("nonlinearity, param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain_is_torchs(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == \
        pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-15)


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_are_torchs(shape):
    assert init._calculate_fan_in_and_fan_out(np.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    for mode in ("fan_in", "fan_out"):
        assert init._calculate_correct_fan(cr.zeros(shape), mode) == \
            torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)


@pytest.mark.parametrize("fill, args", [("constant_", (0.3,)), ("ones_", ()),
                                        ("zeros_", ())])
def test_constant_fills_are_torchs(fill, args):
    ours, theirs = cr.zeros(3, 4), torch.empty(3, 4, dtype=torch.float64)
    getattr(init, fill)(ours, *args)
    getattr(torch.nn.init, fill)(theirs, *args)
    np.testing.assert_array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_eye_is_torchs(shape):
    np.testing.assert_array_equal(init.eye_(np.empty(shape)),
                                  torch.nn.init.eye_(torch.empty(shape)).numpy())


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 1),
                                           ((6, 2, 3, 3), 2), ((4, 6, 3, 2, 5), 2),
                                           ((6, 2, 4, 4), 3)])
def test_dirac_is_torchs(shape, groups):
    np.testing.assert_array_equal(init.dirac_(np.empty(shape), groups),
                                  torch.nn.init.dirac_(torch.empty(shape), groups).numpy())


def _bound_of_torch(fill, shape, **kwargs):
    """The bound torch's uniform initialisation draws within, read from its draws of a
    large tensor whose fans are those of ``shape``."""
    theirs = torch.empty(shape, dtype=torch.float64)
    getattr(torch.nn.init, fill)(theirs, generator=_torch_seeded(), **kwargs)
    return float(theirs.abs().max())


@pytest.mark.parametrize("fill, kwargs", [
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.5}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_uniform_", {"nonlinearity": "tanh"})])
@pytest.mark.parametrize("shape", [(400, 300), (64, 32, 3, 3)])
def test_uniform_initialisations_draw_within_torchs_bound(fill, kwargs, shape):
    ours = getattr(init, fill)(np.empty(shape), generator=_seeded(), **kwargs)
    torchs = _bound_of_torch(fill, shape, **kwargs)
    bound = float(np.abs(ours).max())
    # both are within the same bound and reach within 0.1% of it (120,000 draws)
    assert torchs * 0.999 < bound <= torchs * 1.001
    assert abs(ours.mean()) < 4 * bound / math.sqrt(3 * ours.size)
    np.testing.assert_allclose(ours.std(), bound / math.sqrt(3),
                               rtol=_spread(ours.size, 1.8))


@pytest.mark.parametrize("fill, kwargs, std", [
    ("xavier_normal_", {}, lambda fi, fo: math.sqrt(2 / (fi + fo))),
    ("xavier_normal_", {"gain": 0.5}, lambda fi, fo: 0.5 * math.sqrt(2 / (fi + fo))),
    ("kaiming_normal_", {}, lambda fi, fo: math.sqrt(2 / (1 + 0.0)) / math.sqrt(fi)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"},
     lambda fi, fo: math.sqrt(2) / math.sqrt(fo)),
    ("normal_", {"mean": 0.5, "std": 0.2}, lambda fi, fo: 0.2)])
@pytest.mark.parametrize("shape", [(400, 300), (64, 32, 3, 3)])
def test_normal_initialisations_have_torchs_spread(fill, kwargs, std, shape):
    ours = getattr(init, fill)(np.empty(shape), generator=_seeded(), **kwargs)
    theirs = getattr(torch.nn.init, fill)(torch.empty(shape, dtype=torch.float64),
                                          generator=_torch_seeded(), **kwargs)
    expected = std(*torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape)))
    mean = kwargs.get("mean", 0.0)
    for sample in (ours, theirs.numpy()):  # (the formula is checked on torch's too)
        assert abs(sample.mean() - mean) < 4 * expected / math.sqrt(sample.size)
        np.testing.assert_allclose(sample.std(), expected, rtol=_spread(sample.size))


def test_uniform_and_trunc_normal_keep_to_their_interval():
    u = init.uniform_(np.empty(10_000), -0.5, 2.0, generator=_seeded())
    assert u.min() >= -0.5 and u.max() < 2.0
    assert abs(u.mean() - 0.75) < 5 * 2.5 / math.sqrt(12 * u.size)
    t = init.trunc_normal_(np.empty(100_000), mean=0.3, std=1.0, a=-0.5, b=1.0,
                           generator=_seeded())
    assert t.min() >= -0.5 and t.max() <= 1.0
    # the truncated normal's mean: mu + sigma (phi(alpha) - phi(beta)) / (Phi(beta) - Phi(alpha))
    alpha, beta = -0.8, 0.7
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    Phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    np.testing.assert_allclose(t.mean(), 0.3 + (phi(alpha) - phi(beta)) /
                               (Phi(beta) - Phi(alpha)), atol=5 * t.std() / math.sqrt(t.size))
    theirs = torch.nn.init.trunc_normal_(torch.empty(100_000, dtype=torch.float64),
                                         mean=0.3, std=1.0, a=-0.5, b=1.0,
                                         generator=_torch_seeded())
    np.testing.assert_allclose(t.std(), float(theirs.std()), rtol=0.02)


@pytest.mark.parametrize("shape, gain", [((5, 5), 1.0), ((3, 8), 2.0), ((8, 3), 0.5),
                                         ((4, 2, 3, 3), 1.0)])
def test_orthogonal_gives_orthonormal_rows_or_columns_times_the_gain(shape, gain):
    w = init.orthogonal_(np.empty(shape), gain, generator=_seeded())
    flat = w.reshape(shape[0], -1)
    small = min(flat.shape)
    product = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
    np.testing.assert_allclose(product, gain ** 2 * np.eye(small), atol=1e-13)
    theirs = torch.nn.init.orthogonal_(torch.empty(shape, dtype=torch.float64), gain,
                                       generator=_torch_seeded())
    flat_t = theirs.reshape(shape[0], -1).numpy()
    np.testing.assert_allclose((flat_t @ flat_t.T if flat_t.shape[0] == small
                                else flat_t.T @ flat_t), product, atol=1e-13)


@pytest.mark.parametrize("sparsity", [0.1, 0.25, 0.9])
def test_sparse_has_torchs_zeros_in_each_column(sparsity):
    ours = init.sparse_(np.empty((20, 7)), sparsity, std=0.3, generator=_seeded())
    theirs = torch.nn.init.sparse_(torch.empty(20, 7, dtype=torch.float64), sparsity, 0.3,
                                   generator=_torch_seeded())
    assert ((ours == 0).sum(axis=0) == (theirs == 0).sum(dim=0).numpy()).all()


def test_a_layers_weight_is_filled_in_place_and_stays_a_parameter():
    layer = cr.nn.Linear(4, 3, rng=0)
    weight = layer.weight
    assert init.xavier_uniform_(weight, generator=_seeded()) is weight
    assert init.zeros_(layer.bias) is layer.bias
    assert isinstance(layer.weight, cr.nn.Parameter) and layer.weight.requires_grad
    assert layer.weight.grad_fn is None and not layer.bias.data.any()
    layer(cr.ones(2, 4)).sum().backward()  # a model built this way trains as usual
    assert layer.weight.grad.shape == (3, 4)
    f32 = cr.nn.Linear(4, 3, rng=0, dtype=np.float32).weight
    assert init.normal_(f32, generator=_seeded()).data.dtype == np.float32


def test_the_default_generator_draws_repeatably_after_manual_seed():
    cr.manual_seed(7)
    first = init.kaiming_normal_(np.empty((3, 4))).copy()
    cr.manual_seed(7)
    np.testing.assert_array_equal(init.kaiming_normal_(np.empty((3, 4))), first)


@pytest.mark.parametrize("call, error, message", [
    (lambda: init.calculate_gain("softmax"), ValueError, "unsupported nonlinearity 'softmax'"),
    (lambda: init.calculate_gain("leaky_relu", True), ValueError, "not a valid number"),
    (lambda: init.xavier_uniform_(np.empty(3)), ValueError, "fewer than 2 dimensions"),
    (lambda: init.kaiming_normal_(np.empty((2, 2)), mode="fan"), ValueError,
     "mode 'fan' not supported"),
    (lambda: init.eye_(np.empty((2, 2, 2))), ValueError, "only tensors with 2 dimensions"),
    (lambda: init.dirac_(np.empty((2, 2))), ValueError, "3, 4, or 5 dimensions"),
    (lambda: init.dirac_(np.empty((5, 2, 3)), groups=2), ValueError,
     r"dim 0 \(5\) must be divisible by groups \(2\)"),
    (lambda: init.orthogonal_(np.empty(4)), ValueError, "2 or more dimensions"),
    (lambda: init.sparse_(np.empty((2, 2, 2)), 0.1), ValueError, "2 dimensions"),
    (lambda: init.uniform_([1.0, 2.0]), TypeError, "expected a Tensor"),
    (lambda: init.normal_(np.zeros(3, int)), TypeError, "floating-point"),
    (lambda: init.normal_(np.empty(3), generator=3), TypeError, "generator= must be"),
    (lambda: init.trunc_normal_(np.empty(3), a=1.0, b=0.0), ValueError, "a < b"),
    (lambda: init.trunc_normal_(np.empty(3), a=10.0, b=11.0), ValueError, "less than 1e-6"),
])
def test_bad_calls_are_refused_in_one_line_naming_the_function(call, error, message):
    with pytest.raises(error, match=message):
        call()
