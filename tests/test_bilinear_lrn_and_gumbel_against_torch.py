"""nn.Bilinear, nn.Softmax2d, nn.LocalResponseNorm, nn.FeatureAlphaDropout and
F.gumbel_softmax against torch 2.13 in float64: values, gradients of sum(w * y) and a
Hessian-vector product against torch's double backward, torch's state_dict loaded,
reprs; for the random ones, what torch documents and does: one mask per channel,
the identity in eval, a hard sample one-hot with the soft sample's gradient, and
samples drawn in the softmax's proportions."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261204)
TOL = 1e-12


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def against_torch(ours, theirs, arrays):
    """Values, the gradient of sum(w * y) in every array and a Hessian-vector product
    (of sum(w * y**2)) in the first, each against torch's."""
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    ty = theirs(*tensors)
    close(ours(*arrays), ty)
    w = RNG.normal(size=tuple(ty.shape))
    grads = torch.autograd.grad((ty * torch.tensor(w)).sum(), tensors, retain_graph=True)
    ours_grads = cr.grad(lambda *a: cr.sum(ours(*a) * w), argnums=tuple(range(len(arrays))))(
        *arrays)
    for g, tg in zip(ours_grads, grads):
        close(g, tg)
    v = RNG.normal(size=arrays[0].shape)
    (tg,) = torch.autograd.grad((ty * ty * torch.tensor(w)).sum(), tensors[0],
                                create_graph=True)
    (thv,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tensors[0])
    hvp = cr.hvp(lambda a: cr.sum(ours(a, *arrays[1:]) ** 2 * w), arrays[0], v)
    close(hvp, thv, tol=1e-10)


@pytest.mark.parametrize("lead", [(), (4,), (2, 3)], ids=["one", "batch", "two axes"])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_is_torchs(lead, bias):
    w, b = RNG.normal(size=(5, 3, 4)), RNG.normal(size=5) if bias else None
    arrays = [RNG.normal(size=lead + (3,)), RNG.normal(size=lead + (4,)), w] + (
        [b] if bias else [])
    against_torch(F.bilinear, TF.bilinear, arrays)


def test_the_bilinear_layer_loads_torchs_weights_and_starts_in_its_bounds():
    theirs = torch.nn.Bilinear(3, 4, 5).double()
    ours = nn.Bilinear(3, 4, 5, rng=0)
    assert repr(ours) == repr(theirs)
    assert np.abs(ours.weight.data).max() <= 1 / np.sqrt(3)
    assert np.abs(ours.weight.data).max() > 0.9 / np.sqrt(3)
    ours.load_state_dict(theirs.state_dict())
    x1, x2 = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4))
    close(ours(x1, x2), theirs(torch.tensor(x1), torch.tensor(x2)))
    assert repr(nn.Bilinear(2, 2, 1, bias=False)) == repr(torch.nn.Bilinear(2, 2, 1, bias=False))


@pytest.mark.parametrize("shape", [(2, 4, 3, 3), (4, 2, 5)])
def test_softmax2d_is_torchs(shape):
    x = RNG.normal(size=shape)
    close(nn.Softmax2d()(x), torch.nn.Softmax2d()(torch.tensor(x)))
    assert repr(nn.Softmax2d()) == repr(torch.nn.Softmax2d())


@pytest.mark.parametrize("shape", [(2, 7, 5), (2, 6, 3, 4), (1, 5, 2, 3, 2)])
@pytest.mark.parametrize("size, alpha, beta, k", [(1, 1e-4, 0.75, 1.0), (2, 0.5, 0.6, 1.5),
                                                  (3, 0.3, 0.75, 2.0), (8, 1.0, 1.2, 0.7)])
def test_local_response_norm_is_torchs(shape, size, alpha, beta, k):
    against_torch(lambda x: F.local_response_norm(x, size, alpha, beta, k),
                  lambda x: TF.local_response_norm(x, size, alpha, beta, k),
                  [RNG.normal(size=shape)])
    assert repr(nn.LocalResponseNorm(size, alpha, beta, k)) == \
        repr(torch.nn.LocalResponseNorm(size, alpha, beta, k))


def test_feature_alpha_dropout_drops_whole_channels_with_alpha_dropouts_map():
    x = RNG.normal(size=(3, 8, 4, 2))
    y = np.asarray(F.feature_alpha_dropout(cr.tensor(x), 0.4, training=True, rng=1).data)
    p, saturation = 0.4, 1.7580993408473766
    a = 1 / np.sqrt((saturation ** 2 * p + 1) * (1 - p))
    kept = np.isclose(y, a * x + a * saturation * p, rtol=1e-12, atol=1e-12)
    dropped = np.isclose(y, -a * saturation * (1 - p), rtol=1e-12, atol=1e-12)
    assert np.all(kept | dropped)
    per_channel = kept.reshape(3, 8, -1)
    assert np.all(per_channel.all(axis=2) | (~per_channel).all(axis=2))   # whole channels
    assert 0 < per_channel.all(axis=2).sum() < 24
    module = nn.FeatureAlphaDropout(0.4)
    assert repr(module) == repr(torch.nn.FeatureAlphaDropout(0.4))
    close(module.eval()(x), x)
    with pytest.raises(ValueError, match=r"feature_alpha_dropout: input of shape \(4,\)"):
        F.feature_alpha_dropout(np.ones(4), 0.5, training=True)


def test_a_hard_gumbel_sample_is_one_hot_with_the_soft_samples_gradient():
    logits = RNG.normal(size=(5, 4))
    w = RNG.normal(size=(5, 4))
    hard = F.gumbel_softmax(cr.tensor(logits), tau=0.5, hard=True, rng=3)
    np.testing.assert_array_equal(hard.data.sum(axis=1), np.ones(5))
    assert set(np.unique(hard.data)) == {0.0, 1.0}
    soft = F.gumbel_softmax(cr.tensor(logits), tau=0.5, rng=3)   # the same noise
    np.testing.assert_array_equal(hard.data.argmax(axis=1), soft.data.argmax(axis=1))
    g_hard = cr.grad(lambda z: cr.sum(F.gumbel_softmax(z, 0.5, hard=True, rng=3) * w))(logits)
    g_soft = cr.grad(lambda z: cr.sum(F.gumbel_softmax(z, 0.5, rng=3) * w))(logits)
    close(g_hard, g_soft)
    close(soft.data.sum(axis=1), np.ones(5))


def test_gumbel_samples_fall_in_the_softmaxs_proportions_as_torchs():
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    n = 20000
    ours = F.gumbel_softmax(cr.tensor(np.tile(logits, (n, 1))), hard=True, rng=5)
    torch.manual_seed(5)
    theirs = TF.gumbel_softmax(torch.tensor(np.tile(logits, (n, 1))), hard=True)
    for counts in (ours.data.sum(axis=0), theirs.sum(0).numpy()):
        frequency = counts / n
        standard_error = np.sqrt(np.exp(logits) * (1 - np.exp(logits)) / n)
        assert np.all(np.abs(frequency - np.exp(logits)) < 5 * standard_error)
