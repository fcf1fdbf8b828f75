"""nn.functional's activations and their modules against torch's, where the derivative
table does not look: at the kinks (values, first and second derivatives at exactly the
points where a piece ends), far out (no overflow, no NaN), in float32, as modules
(settings, repr, PReLU's learned slopes, RReLU's draws) and in their refusals.

Away from the kinks each activation is a row of tests/test_derivatives.py, which checks
it against torch and central differences to second order, in both modes and under
every transform.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261130)

# name, chainrule's, torch's, the points where a piece ends
KINKS = [
    ("relu6", F.relu6, TF.relu6, [0.0, 6.0]),
    ("hardtanh", F.hardtanh, TF.hardtanh, [-1.0, 1.0]),
    ("hardtanh(-2,0.5)", lambda x: F.hardtanh(x, -2.0, 0.5),
     lambda x: TF.hardtanh(x, -2.0, 0.5), [-2.0, 0.5]),
    ("selu", F.selu, TF.selu, [0.0]),
    ("celu", F.celu, TF.celu, [0.0]),
    ("hardswish", F.hardswish, TF.hardswish, [-3.0, 3.0]),
    ("hardsigmoid", F.hardsigmoid, TF.hardsigmoid, [-3.0, 3.0]),
    ("hardshrink", F.hardshrink, TF.hardshrink, [-0.5, 0.5, 0.0]),
    ("softshrink", F.softshrink, TF.softshrink, [-0.5, 0.5, 0.0]),
    ("threshold", lambda x: F.threshold(x, 0.5, -2.0), lambda x: TF.threshold(x, 0.5, -2.0),
     [0.5]),
    ("rrelu(eval)", F.rrelu, TF.rrelu, [0.0]),
    ("softsign", F.softsign, TF.softsign, [0.0]),
    ("tanhshrink", F.tanhshrink, TF.tanhshrink, [0.0]),
    ("mish", F.mish, TF.mish, [0.0]),
    ("logsigmoid", F.logsigmoid, TF.logsigmoid, [0.0]),
]

# torch's second derivative at 0 of the ELU family is the positive side's (0), while its
# first is the negative side's; chainrule takes the negative side for both (the
# derivative of the first derivative it gives), which the docstrings say
SECOND_AT_ZERO_DIFFERS = {"selu", "celu"}


def _torch_derivatives(f, x):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = f(t)
    (g,) = torch.autograd.grad(y, t, create_graph=True)
    try:
        (h,) = torch.autograd.grad(g, t, allow_unused=True)
    except RuntimeError:  # (torch's hardsigmoid has no second derivative)
        h = None
    return float(y), float(g), None if h is None else float(h)


@pytest.mark.parametrize("name, ours, theirs, points", KINKS, ids=[k[0] for k in KINKS])
def test_values_and_derivatives_at_the_kinks_are_torchs(name, ours, theirs, points):
    for x in points:
        y, g, h = _torch_derivatives(theirs, x)
        assert float(ours(cr.tensor(x)).data) == pytest.approx(y, rel=1e-15, abs=1e-300)
        # (torch's hardsigmoid scales its gradient by a float32 1/6)
        assert cr.grad(ours)(x) == pytest.approx(g, rel=1e-7 if name == "hardsigmoid"
                                                 else 1e-15)
        second = cr.grad(cr.grad(ours))(x)
        if h is None:
            assert second == 0.0  # piecewise linear: 0 (torch raises)
        elif name in SECOND_AT_ZERO_DIFFERS and x == 0.0:
            assert h == 0.0 and second == pytest.approx(
                {"selu": 1.0507009873554805 * 1.6732632423543772, "celu": 1.0}[name])
        else:
            assert second == pytest.approx(h, rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("name, ours, theirs, points", KINKS, ids=[k[0] for k in KINKS])
def test_far_out_values_and_gradients_are_finite_and_torchs(name, ours, theirs, points):
    x = np.array([-1e4, -800.0, -40.0, 40.0, 800.0, 1e4])
    t = torch.tensor(x, requires_grad=True)
    y = theirs(t)
    y.sum().backward()
    c = cr.tensor(x, requires_grad=True)
    z = ours(c)
    z.sum().backward()
    np.testing.assert_allclose(z.data, y.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(c.grad, t.grad.numpy(), rtol=1e-7, atol=1e-300)
    assert np.isfinite(c.grad).all()


@pytest.mark.parametrize("name, ours, theirs, points", KINKS, ids=[k[0] for k in KINKS])
def test_float32_stays_float32_and_agrees_with_torch(name, ours, theirs, points):
    x = (RNG.standard_normal(50) * 4).astype(np.float32)
    c = cr.tensor(x, requires_grad=True)
    y = ours(c)
    y.sum().backward()
    t = torch.tensor(x, requires_grad=True)
    theirs(t).sum().backward()
    assert y.data.dtype == np.float32 and c.grad.dtype == np.float32
    np.testing.assert_allclose(y.data, theirs(torch.tensor(x)).numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(c.grad, t.grad.numpy(), rtol=2e-6, atol=1e-6)


# --- modules ----------------------------------------------------------------------------

MODULES = [("ReLU6", ()), ("Hardtanh", (-2.0, 3.0)), ("SELU", ()), ("CELU", (0.5,)),
           ("Mish", ()), ("Softsign", ()), ("LogSigmoid", ()), ("Hardswish", ()),
           ("Hardsigmoid", ()), ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)),
           ("Tanhshrink", ()), ("Threshold", (0.1, 20.0)), ("GLU", (1,)), ("Softmin", (1,)),
           ("PReLU", ()), ("PReLU", (4, 0.1)), ("RReLU", (0.1, 0.3))]


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{m}{a}" for m, a in MODULES])
def test_modules_compute_as_torchs_and_print_alike(name, args):
    ours, theirs = getattr(cr.nn, name)(*args), getattr(tnn, name)(*args).double()
    ours.eval(), theirs.eval()  # (RReLU: the mean slope)
    # (torch draws PReLU's initial slope in float32: 0.1 is not 0.1 there)
    theirs.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in ours.state_dict().items()})
    x = RNG.standard_normal((3, 4, 2)) * 3
    np.testing.assert_allclose(ours(cr.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-14, atol=1e-15)
    assert repr(ours) == repr(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


def test_prelu_learns_one_slope_or_one_per_channel_as_torchs():
    x = RNG.standard_normal((5, 3, 2))
    for n in (1, 3):
        ours, theirs = cr.nn.PReLU(n, init=0.2), tnn.PReLU(n, init=0.2).double()
        w = RNG.standard_normal(x.shape)
        (ours(cr.tensor(x)) * w).sum().backward()
        (theirs(torch.tensor(x)) * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-13)
        ours.load_state_dict({"weight": np.full(n, -0.7)})
        assert ours.weight.data.tolist() == [-0.7] * n


def test_rrelu_in_training_draws_a_slope_per_negative_entry_within_its_bounds():
    layer = cr.nn.RReLU(0.1, 0.3, rng=0)
    x = -np.ones(10_000)
    slopes = -layer(cr.tensor(x)).data
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and len(np.unique(slopes)) > 9_000
    assert abs(slopes.mean() - 0.2) < 5 * 0.2 / math.sqrt(12 * x.size)
    np.testing.assert_array_equal(cr.nn.RReLU(0.1, 0.3, rng=0)(cr.tensor(x)).data, -slopes)
    positive = cr.tensor(np.array([2.0, 3.0]), requires_grad=True)
    layer(positive).sum().backward()
    assert positive.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("call, message", [
    (lambda: F.hardtanh(cr.ones(2), 1.0, -1.0), "min_val .* cannot be greater than max_val"),
    (lambda: cr.nn.Hardtanh(2.0, 1.0), "min_val .* cannot be greater than max_val"),
    (lambda: F.softshrink(cr.ones(2), -0.1), "lambd must be greater or equal to 0"),
    (lambda: F.hardshrink(cr.ones(2), -0.1), "lambd must be greater or equal to 0"),
    (lambda: F.glu(cr.ones((2, 3))), r"halving dimension must be even, .* size 3"),
    (lambda: F.prelu(cr.ones((2, 3)), cr.ones(2)), r"2 slopes for an input of shape \(2, 3\)"),
    (lambda: F.rrelu(cr.ones(2), 0.5, 0.1), "expected 0 <= lower <= upper"),
    (lambda: F.celu(cr.ones(2), 0.0), "alpha cannot be 0"),
    (lambda: cr.nn.PReLU(0), "num_parameters must be a positive int"),
])
def test_bad_settings_are_refused_in_one_line(call, message):
    with pytest.raises(ValueError, match=message):
        call()
