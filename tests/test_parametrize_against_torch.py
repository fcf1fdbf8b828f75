"""nn.utils.parametrize, parametrizations.weight_norm and spectral_norm, and the older
nn.utils.weight_norm, against torch 2.13 in float64: the state_dict's keys, torch's
checkpoint loaded, outputs and the gradients of the originals, spectral norm's power
iteration moving its buffers in training (and not in eval), a training step, a user's
parametrization with a right_inverse, assignment through it, chains, caching, removal,
and the refusals."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrizations as TP
import torch.nn.utils.parametrize as TZ

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils import parametrizations as P
from chainrule.nn.utils import parametrize as Z
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261206)
TOL = 1e-12


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


LAYERS = {
    "linear": (lambda lib, **k: lib.Linear(4, 3, **k), (5, 4)),
    "conv2d": (lambda lib, **k: lib.Conv2d(2, 3, 3, **k), (2, 2, 5, 5)),
    "transposed": (lambda lib, **k: lib.ConvTranspose2d(2, 3, 3, **k), (2, 2, 4, 4)),
}


def pair(kind, wrap_ours, wrap_theirs):
    make, shape = LAYERS[kind]
    theirs = wrap_theirs(make(torch.nn).double())
    ours = wrap_ours(make(nn, rng=0))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs, RNG.normal(size=shape)


def same_gradients(ours, theirs, x):
    """The outputs, and the gradients of sum(w * y) in every parameter, as torch's."""
    y, ty = ours(x), theirs(torch.tensor(x))
    close(y, ty)
    w = RNG.normal(size=tuple(ty.shape))
    (ty * torch.tensor(w)).sum().backward()
    (y * w).sum().backward()
    named = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(named)
    for name, p in ours.named_parameters():
        close(p.grad, named[name].grad)


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_is_torchs(kind, dim):
    ours, theirs, x = pair(kind, lambda m: P.weight_norm(m, dim=dim),
                           lambda m: TP.weight_norm(m, dim=dim))
    assert repr(ours) == repr(theirs)
    same_gradients(ours, theirs, x)


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_norm_is_torchs_in_training_and_eval(kind, iterations):
    ours, theirs, x = pair(kind, lambda m: P.spectral_norm(m, n_power_iterations=iterations),
                           lambda m: TP.spectral_norm(m, n_power_iterations=iterations))
    for _ in range(3):   # the power iteration moves the vectors at each read
        close(ours(x), theirs(torch.tensor(x)))
    for key, value in theirs.state_dict().items():
        close(ours.state_dict()[key], value)
    ours.eval(), theirs.eval()
    u = ours.parametrizations.weight[0]._u.copy()
    same_gradients(ours, theirs, x)
    np.testing.assert_array_equal(ours.parametrizations.weight[0]._u, u)   # eval: still


def test_spectral_norm_divides_by_the_largest_singular_value():
    layer = P.spectral_norm(nn.Linear(6, 4, rng=1), n_power_iterations=30)
    layer.weight   # noqa: B018  (a read in training iterates)
    assert abs(np.linalg.svd(layer.weight.data, compute_uv=False)[0] - 1) < 1e-10


def test_a_training_step_through_weight_norm_is_torchs():
    ours, theirs, x = pair("linear", P.weight_norm, TP.weight_norm)
    opt, topt = cr.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(),
                                                                         lr=0.1)
    for _ in range(3):
        loss, tloss = (ours(x) ** 2).sum(), (theirs(torch.tensor(x)) ** 2).sum()
        opt.zero_grad(), topt.zero_grad()
        loss.backward(), tloss.backward()
        opt.step(), topt.step()
        close(loss, tloss, tol=1e-11)


class Symmetric(nn.Module):
    def forward(self, X):
        return cr.triu(X) + cr.transpose(cr.triu(X, 1))

    def right_inverse(self, A):
        return cr.triu(A)


class TSymmetric(torch.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).T

    def right_inverse(self, A):
        return A.triu()


class Scaled(nn.Module):
    def forward(self, X):
        return 3 * X


def test_a_users_parametrization_with_a_right_inverse_is_torchs():
    theirs = torch.nn.Linear(3, 3).double()
    ours = nn.Linear(3, 3, rng=0)
    ours.load_state_dict(theirs.state_dict())
    original = ours.weight
    TZ.register_parametrization(theirs, "weight", TSymmetric())
    Z.register_parametrization(ours, "weight", Symmetric())
    assert Z.is_parametrized(ours) and Z.is_parametrized(ours, "weight")
    assert not Z.is_parametrized(ours, "bias")
    assert Z.type_before_parametrizations(ours) is nn.Linear
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert ours.parametrizations.weight.original is original   # the same Parameter
    close(ours.weight, theirs.weight)
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    x = RNG.normal(size=(2, 3))
    same_gradients(ours, theirs, x)
    A = RNG.normal(size=(3, 3))
    ours.weight = A   # stored through right_inverse
    with torch.no_grad():
        theirs.weight = torch.tensor(A)
    close(ours.weight, theirs.weight)
    assert type(nn.Linear(3, 3, rng=0)) is nn.Linear   # other layers keep their class


def test_chains_caching_and_removal():
    layer = nn.Linear(3, 3, rng=0)
    start = layer.weight.data.copy()
    Z.register_parametrization(layer, "weight", Symmetric())
    Z.register_parametrization(layer, "weight", Scaled())
    symmetric = np.triu(start) + np.triu(start, 1).T
    close(layer.weight, 3 * symmetric)
    with Z.cached():
        first = layer.weight
        assert layer.weight is first
    assert layer.weight is not first
    Z.remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
    close(layer.weight, np.triu(start))   # the original: what right_inverse stored
    Z.register_parametrization(layer, "weight", Scaled())
    Z.remove_parametrizations(layer, "weight")
    close(layer.weight, 3 * np.triu(start))
    assert list(layer.state_dict()) == ["bias", "weight"]


def test_the_older_weight_norm_is_torchs_and_comes_off():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs, x = pair("conv2d", nn.utils.weight_norm, torch.nn.utils.weight_norm)
    assert list(ours.state_dict()) == ["bias", "weight_g", "weight_v"]
    same_gradients(ours, theirs, x)
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == sorted(theirs.state_dict())
    close(ours.weight, theirs.weight)
    assert type(ours) is nn.Conv2d


@pytest.mark.parametrize("call, message", [
    (lambda: Z.register_parametrization(nn.Linear(2, 2, rng=0), "scale", Scaled()),
     r"register_parametrization: Linear has no parameter or buffer 'scale'"),
    (lambda: Z.register_parametrization(nn.Linear(2, 3, rng=0), "weight",
                                        nn.Flatten(0)),
     r"register_parametrization: Flatten gives shape \(6,\) for weight of shape \(3, 2\)"),
    (lambda: Z.remove_parametrizations(nn.Linear(2, 2, rng=0), "weight"),
     r"remove_parametrizations: Linear has no parametrization on 'weight'"),
    (lambda: nn.utils.remove_weight_norm(nn.Linear(2, 2, rng=0)),
     r"remove_weight_norm: weight_norm of 'weight' not found in Linear"),
    (lambda: P.spectral_norm(nn.Linear(2, 2, rng=0), n_power_iterations=0),
     r"spectral_norm: n_power_iterations must be positive"),
])
def test_bad_input_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)
