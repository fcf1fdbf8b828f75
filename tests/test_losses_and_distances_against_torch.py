"""nn.functional's distances and remaining losses, and their modules, against torch's
where the derivative table does not look: every option of each (reductions, flags,
orders p), float32, the points PyTorch special-cases (zero vectors, equal points,
margins exactly met), the modules (repr, state_dict) and the refusals.

Away from those points each function is a row of tests/test_derivatives.py, which
checks it to second order in both modes and under every transform.
"""

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261131)
RTOL = 1e-12


def _grads_of_torch(ref, arrays, w):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = ref(*ts)
    grads = torch.autograd.grad((out * torch.tensor(w, dtype=out.dtype)).sum(), ts,
                                allow_unused=True)
    return out.detach().numpy(), [np.zeros_like(a) if g is None else g.numpy()
                                  for a, g in zip(arrays, grads)]


def check(fn, ref, *arrays, rtol=RTOL, atol=0.0, grads_of=None):
    """Value and the gradient of sum(w * out) for every input, against torch's, to
    ``rtol`` per entry with a floor at the gradient's own scale (plus ``atol``, for a
    gradient that is 0 but for rounding); ``grads_of`` the inputs whose gradients are
    compared (all by default), the others' must be finite."""
    arrays = [np.asarray(a) for a in arrays]
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    w = RNG.standard_normal(np.shape(out.data)).astype(out.data.dtype)
    (out * w).sum().backward()
    t_out, t_grads = _grads_of_torch(ref, arrays, w)
    assert out.data.dtype == t_out.dtype and out.data.shape == t_out.shape
    np.testing.assert_allclose(out.data, t_out, rtol=rtol, atol=0)
    for i, (x, g) in enumerate(zip(xs, t_grads)):
        got = np.zeros_like(x.data) if x.grad is None else x.grad
        if grads_of is not None and i not in grads_of:
            assert np.all(np.isfinite(got)), (i, got)
            continue
        # (an entry that cancels to ~0 is held to the array's scale, not its own)
        np.testing.assert_allclose(got, g, rtol=rtol, atol=atol + rtol * float(
            np.max(np.abs(g), initial=0.0)))


def normal(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


ORDERS = [2.0, 1.0, 3.0, 0.5, math.inf, -math.inf, 0.0]


# --- distances --------------------------------------------------------------------------

@pytest.mark.parametrize("p", ORDERS)
@pytest.mark.parametrize("dim", [1, 0, -1])
def test_normalize(p, dim):
    check(lambda x: F.normalize(x, p, dim), lambda x: TF.normalize(x, p, dim), normal(3, 4))


@pytest.mark.parametrize("p", ORDERS)
def test_normalize_of_zero_and_tiny_vectors_has_torchs_gradient(p):
    x = np.zeros((3, 4))
    x[1] = 1e-14 * normal(4)
    x[2] = normal(4)
    check(lambda x: F.normalize(x, p), lambda x: TF.normalize(x, p), x)


def test_normalize_shares_the_gradient_among_tied_largest_entries():
    x = np.array([[1.0, -1.0, 0.5]])
    check(lambda x: F.normalize(x, math.inf), lambda x: TF.normalize(x, math.inf), x)


@pytest.mark.parametrize("shapes, dim", [(((3, 4), (3, 4)), 1), (((4,), (4,)), 0),
                                         (((2, 1, 4), (3, 4)), -1), (((2, 3), (2, 1)), 0),
                                         (((5, 2, 3), (5, 2, 3)), 1)])
def test_cosine_similarity(shapes, dim):
    check(lambda a, b: F.cosine_similarity(a, b, dim),
          lambda a, b: TF.cosine_similarity(a, b, dim), *[normal(*s) for s in shapes])


@pytest.mark.parametrize("scale1, scale2", [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0),
                                            (1e-10, 1.0), (1e-10, 1e-12)])
def test_cosine_similarity_of_zero_and_tiny_vectors_has_torchs_gradient(scale1, scale2):
    """torch clamps the norms at eps outside the derivative: a zero vector's gradient is
    the other's direction over eps, not 0 and not NaN."""
    check(F.cosine_similarity, TF.cosine_similarity, scale1 * normal(3, 4),
          scale2 * normal(3, 4))


def test_cosine_similarity_of_identical_and_opposite_vectors():
    x = normal(2, 5)
    # (the gradient is 0 there: rounding's, ~1e-16 per unit of x, on both sides)
    check(F.cosine_similarity, TF.cosine_similarity, x, x.copy(), atol=1e-14)
    check(F.cosine_similarity, TF.cosine_similarity, x, -x, atol=1e-14)


@pytest.mark.parametrize("p", ORDERS[:5] + [-math.inf])
@pytest.mark.parametrize("eps, keepdim", [(1e-6, False), (0.0, True), (0.1, False)])
def test_pairwise_distance(p, eps, keepdim):
    check(lambda a, b: F.pairwise_distance(a, b, p, eps, keepdim),
          lambda a, b: TF.pairwise_distance(a, b, p, eps, keepdim), normal(3, 4), normal(3, 4))


@pytest.mark.parametrize("shapes", [((4,), (3, 4)), ((4,), (4,)), ((), ()), ((2, 1, 3), (4, 3))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_broadcasts_as_torch(shapes, keepdim):
    check(lambda a, b: F.pairwise_distance(a, b, keepdim=keepdim),
          lambda a, b: TF.pairwise_distance(a, b, keepdim=keepdim), *[normal(*s) for s in shapes])


@pytest.mark.parametrize("p", ORDERS[:5])
def test_pairwise_distance_of_equal_points_without_eps_has_gradient_0(p):
    x = normal(3, 4)
    check(lambda a, b: F.pairwise_distance(a, b, p, 0.0),
          lambda a, b: TF.pairwise_distance(a, b, p, 0.0), x, x.copy())


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf, 0.0])
def test_pdist(p):
    check(lambda x: F.pdist(x, p), lambda x: TF.pdist(x, p), normal(5, 3))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf, 0.0])
def test_pdist_of_equal_and_tied_rows(p):
    """Equal rows are at distance 0 with gradient 0; p = inf gives each tied largest
    difference the whole gradient (torch.pdist's backward, not linalg.vector_norm's)."""
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0], [2.0, 3.0]])
    check(lambda x: F.pdist(x, p), lambda x: TF.pdist(x, p), x)


@pytest.mark.parametrize("rows", [0, 1])
def test_pdist_of_fewer_than_two_rows_is_empty(rows):
    out = F.pdist(cr.tensor(np.ones((rows, 3))))
    assert out.shape == tuple(TF.pdist(torch.ones(rows, 3)).shape) == (0,)


@pytest.mark.parametrize("fn, ref, shapes", [
    (F.normalize, TF.normalize, [(3, 4)]),
    (F.cosine_similarity, TF.cosine_similarity, [(3, 4), (3, 4)]),
    (F.pairwise_distance, TF.pairwise_distance, [(3, 4), (3, 4)]),
    (F.pdist, TF.pdist, [(4, 3)]),
])
def test_distances_in_float32(fn, ref, shapes):
    check(fn, ref, *[normal(*s, dtype=np.float32) for s in shapes], rtol=2e-6)


def test_distance_modules_match_torchs():
    a, b = normal(3, 4), normal(3, 4)
    for ours, theirs in [(cr.nn.CosineSimilarity(), tnn.CosineSimilarity()),
                         (cr.nn.CosineSimilarity(dim=0, eps=1e-3),
                          tnn.CosineSimilarity(dim=0, eps=1e-3)),
                         (cr.nn.PairwiseDistance(), tnn.PairwiseDistance()),
                         (cr.nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True),
                          tnn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True))]:
        assert repr(ours) == repr(theirs)
        assert dict(ours.state_dict()) == {} == dict(theirs.state_dict())
        check(ours, theirs, a, b)


@pytest.mark.parametrize("call, torch_call, message", [
    (lambda: F.cosine_similarity(np.ones(4), np.ones(4)),
     lambda: TF.cosine_similarity(torch.ones(4), torch.ones(4)),
     "cosine_similarity: dim=1 is out of range for inputs of shape (4,)"),
    (lambda: F.cosine_similarity(np.ones((2, 3)), np.ones((3, 3))),
     lambda: TF.cosine_similarity(torch.ones(2, 3), torch.ones(3, 3)),
     "cosine_similarity: inputs of shapes (2, 3) and (3, 3) do not broadcast"),
    (lambda: F.pairwise_distance(np.ones((2, 3)), np.ones((3, 3))),
     lambda: TF.pairwise_distance(torch.ones(2, 3), torch.ones(3, 3)),
     "pairwise_distance: inputs of shapes (2, 3) and (3, 3) do not broadcast"),
    (lambda: F.normalize(np.ones(3)),
     lambda: TF.normalize(torch.ones(3)),
     "normalize: dim=1 is out of range for inputs of shape (3,)"),
    (lambda: F.pdist(np.ones(3)), lambda: TF.pdist(torch.ones(3)),
     "pdist: input of shape (3,); expected (N, M)"),
    (lambda: F.pdist(np.ones((2, 3, 4))), lambda: TF.pdist(torch.ones(2, 3, 4)),
     "pdist: input of shape (2, 3, 4); expected (N, M)"),
    (lambda: F.pdist(np.ones((2, 3)), -1.0), lambda: TF.pdist(torch.ones(2, 3), -1.0),
     "pdist: p must be >= 0, got -1.0"),
])
def test_distance_refusals_match_torchs(call, torch_call, message):
    with pytest.raises((RuntimeError, IndexError, ValueError)):
        torch_call()
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


# --- kl_div, poisson_nll_loss, gaussian_nll_loss -----------------------------------------

def _quiet(fn):
    """torch's kl_div warns that "mean" is not "batchmean" (chainrule does not)."""
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args, **kwargs)
    return call


def probabilities(*shape):
    return RNG.uniform(0.05, 0.95, shape)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("shape", [(3, 4), (5,), (2, 3, 2)])
def test_kl_div(reduction, log_target, shape):
    target = normal(*shape) if log_target else probabilities(*shape)
    check(lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target),
          _quiet(lambda x, t: TF.kl_div(x, t, reduction=reduction, log_target=log_target)),
          normal(*shape), target)


def test_kl_div_of_a_zero_target_is_0_with_a_finite_gradient():
    """torch's xlogy(0, 0) is 0 but its gradient with respect to the target is NaN there;
    chainrule's is finite (the input's gradient is torch's)."""
    target = probabilities(3, 4)
    target[0, :2] = 0.0
    check(lambda x, t: F.kl_div(x, t, reduction="sum"),
          lambda x, t: TF.kl_div(x, t, reduction="sum"), normal(3, 4), target, grads_of=[0])


def test_kl_div_batchmean_of_a_0d_input_is_the_sum():
    x, t = np.asarray(-0.3), np.asarray(0.4)
    check(lambda x, t: F.kl_div(x, t, reduction="batchmean"),
          lambda x, t: TF.kl_div(x, t, reduction="batchmean"), x, t)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_poisson_nll_loss(reduction, log_input, full, eps):
    x = normal(3, 4) if log_input else RNG.uniform(0.5, 2.0, (3, 4))
    target = RNG.uniform(1.2, 4.0, (3, 4))  # (above 1, where full=True adds Stirling's term)
    check(lambda x, t: F.poisson_nll_loss(x, t, log_input, full, eps=eps, reduction=reduction),
          lambda x, t: TF.poisson_nll_loss(x, t, log_input, full, eps=eps, reduction=reduction),
          x, target)


@pytest.mark.parametrize("log_input", [True, False])
def test_poisson_nll_loss_full_at_counts_of_at_most_1(log_input):
    """Stirling's term is 0 for targets <= 1; at 0 torch's target gradient is NaN,
    chainrule's finite."""
    x = RNG.uniform(0.5, 2.0, (5,))
    target = np.array([0.0, 0.5, 1.0, 1.5, 3.0])
    check(lambda x, t: F.poisson_nll_loss(x, t, log_input, True, reduction="none"),
          lambda x, t: TF.poisson_nll_loss(x, t, log_input, True, reduction="none"), x, target,
          grads_of=[0])
    check(lambda x, t: F.poisson_nll_loss(x, t, log_input, True, reduction="none"),
          lambda x, t: TF.poisson_nll_loss(x, t, log_input, True, reduction="none"),
          x[1:], target[1:])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (3,)), ((3, 4), (3, 1)),
                                    ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (2, 3)),
                                    ((4,), (4,))])
def test_gaussian_nll_loss(reduction, full, shapes):
    shape, var_shape = shapes
    check(lambda x, t, v: F.gaussian_nll_loss(x, t, v, full, reduction=reduction),
          lambda x, t, v: TF.gaussian_nll_loss(x, t, v, full, reduction=reduction),
          normal(*shape), normal(*shape), RNG.uniform(0.5, 2.0, var_shape))


def test_gaussian_nll_loss_clamps_tiny_variances_outside_the_derivative():
    var = np.array([[1e-8, 0.0, 1e-6, 0.3]])
    check(lambda x, t, v: F.gaussian_nll_loss(x, t, v, eps=1e-6, reduction="none"),
          lambda x, t, v: TF.gaussian_nll_loss(x, t, v, eps=1e-6, reduction="none"),
          normal(1, 4), normal(1, 4), var)


def test_gaussian_nll_loss_of_a_float_variance():
    x, t = normal(3, 4), normal(3, 4)
    out = F.gaussian_nll_loss(cr.tensor(x), cr.tensor(t), 0.7, reduction="sum")
    expected = TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(t), 0.7, reduction="sum")
    np.testing.assert_allclose(out.item(), expected.item(), rtol=RTOL)


@pytest.mark.parametrize("fn, ref, shapes, draw", [
    (F.kl_div, _quiet(TF.kl_div), [(3, 4), (3, 4)], [normal, probabilities]),
    (F.poisson_nll_loss, TF.poisson_nll_loss, [(3, 4), (3, 4)], [normal, probabilities]),
    (F.gaussian_nll_loss, TF.gaussian_nll_loss, [(3, 4), (3, 4), (3,)],
     [normal, normal, probabilities]),
])
def test_likelihood_losses_in_float32(fn, ref, shapes, draw):
    arrays = [d(*s).astype(np.float32) for d, s in zip(draw, shapes)]
    check(fn, ref, *arrays, rtol=2e-6)


def test_likelihood_modules_match_torchs():
    x, t, v = normal(3, 4), probabilities(3, 4), probabilities(3, 4)
    pairs = [(cr.nn.KLDivLoss(), tnn.KLDivLoss(), (x, t)),
             (cr.nn.KLDivLoss(reduction="batchmean", log_target=True),
              tnn.KLDivLoss(reduction="batchmean", log_target=True), (x, normal(3, 4))),
             (cr.nn.PoissonNLLLoss(), tnn.PoissonNLLLoss(), (x, t)),
             (cr.nn.PoissonNLLLoss(False, True, eps=0.1, reduction="sum"),
              tnn.PoissonNLLLoss(False, True, eps=0.1, reduction="sum"), (v, t + 1)),
             (cr.nn.GaussianNLLLoss(), tnn.GaussianNLLLoss(), (x, t, v)),
             (cr.nn.GaussianNLLLoss(full=True, eps=0.1, reduction="none"),
              tnn.GaussianNLLLoss(full=True, eps=0.1, reduction="none"), (x, t, v))]
    for ours, theirs, arrays in pairs:
        assert repr(ours) == repr(theirs)
        assert dict(ours.state_dict()) == {} == dict(theirs.state_dict())
        assert ours.reduction == theirs.reduction
        check(ours, _quiet(theirs), *arrays)


@pytest.mark.parametrize("call, torch_call, message", [
    (lambda: F.kl_div(np.ones(3), np.ones(3), reduction="avg"),
     lambda: TF.kl_div(torch.ones(3), torch.ones(3), reduction="avg"),
     "kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none', got 'avg'"),
    (lambda: F.poisson_nll_loss(np.ones(3), np.ones(3), reduction="avg"),
     lambda: TF.poisson_nll_loss(torch.ones(3), torch.ones(3), reduction="avg"),
     "poisson_nll_loss: reduction must be"),
    (lambda: F.gaussian_nll_loss(np.ones(3), np.ones(3), np.ones(3), reduction="avg"),
     lambda: TF.gaussian_nll_loss(torch.ones(3), torch.ones(3), torch.ones(3),
                                  reduction="avg"),
     "gaussian_nll_loss: reduction must be"),
    (lambda: F.gaussian_nll_loss(np.ones((3, 4)), np.ones((3, 4)), np.ones((4,))),
     lambda: TF.gaussian_nll_loss(torch.ones(3, 4), torch.ones(3, 4), torch.ones(4)),
     "gaussian_nll_loss: var of shape (4,) for an input of shape (3, 4); expected"),
    (lambda: F.gaussian_nll_loss(np.ones((3, 4)), np.ones((3, 4)), np.ones((1, 1))),
     lambda: TF.gaussian_nll_loss(torch.ones(3, 4), torch.ones(3, 4), torch.ones(1, 1)),
     "gaussian_nll_loss: var of shape (1, 1) for an input of shape (3, 4)"),
    (lambda: F.gaussian_nll_loss(np.ones(3), np.ones(3), -1.0),
     lambda: TF.gaussian_nll_loss(torch.ones(3), torch.ones(3), -1.0),
     "gaussian_nll_loss: var must be >= 0, got -1.0"),
    (lambda: F.gaussian_nll_loss(np.ones(3), np.ones(3), np.array([1.0, -1.0, 1.0])),
     lambda: TF.gaussian_nll_loss(torch.ones(3), torch.ones(3), torch.tensor([1.0, -1, 1])),
     "gaussian_nll_loss: var has negative entries"),
])
def test_likelihood_refusals_match_torchs(call, torch_call, message):
    with pytest.raises((RuntimeError, ValueError)):
        _quiet(torch_call)()
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
