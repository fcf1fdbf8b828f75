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


ORDERS = [2.0, 1.0, 3.0, 0.5, math.inf, -math.inf, 0.0, -1.5]


# --- distances --------------------------------------------------------------------------

@pytest.mark.parametrize("p", ORDERS)
@pytest.mark.parametrize("dim", [1, 0, -1])
def test_normalize(p, dim):
    check(lambda x: F.normalize(x, p, dim), lambda x: TF.normalize(x, p, dim), normal(3, 4))


@pytest.mark.parametrize("p", ORDERS[:-1])
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


@pytest.mark.parametrize("p", ORDERS)
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


# --- the margin and embedding losses -----------------------------------------------------

REDUCTIONS = ["mean", "sum", "none"]


def signs(*shape):
    return RNG.choice([-1.0, 1.0], shape)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.5])
@pytest.mark.parametrize("shape", [(5,), (2, 3), ()])
def test_margin_ranking_loss(reduction, margin, shape):
    y = signs(*shape)
    check(lambda a, b: F.margin_ranking_loss(a, b, y, margin, reduction=reduction),
          lambda a, b: TF.margin_ranking_loss(a, b, torch.tensor(y), margin,
                                              reduction=reduction), normal(*shape),
          normal(*shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.2])
def test_hinge_embedding_loss(reduction, margin):
    y = signs(3, 4)
    y[0, 0] = 0.5  # (neither 1 nor -1: torch adds both terms)
    check(lambda x: F.hinge_embedding_loss(x, y, margin, reduction=reduction),
          lambda x: TF.hinge_embedding_loss(x, torch.tensor(y), margin, reduction=reduction),
          normal(3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4, -0.6])
@pytest.mark.parametrize("rows", [True, False])
def test_cosine_embedding_loss(reduction, margin, rows):
    shape, y = ((4, 5), signs(4)) if rows else ((5,), np.asarray(-1.0))
    check(lambda a, b: F.cosine_embedding_loss(a, b, y, margin, reduction=reduction),
          lambda a, b: TF.cosine_embedding_loss(a, b, torch.tensor(y), margin,
                                                reduction=reduction),
          normal(*shape), normal(*shape))


def test_cosine_embedding_loss_of_zero_vectors_is_finite():
    a, b = normal(3, 4), normal(3, 4)
    a[0], b[1] = 0.0, 0.0
    check(lambda a, b: F.cosine_embedding_loss(a, b, np.array([1.0, -1.0, 1.0])),
          lambda a, b: TF.cosine_embedding_loss(a, b, torch.tensor([1.0, -1.0, 1.0])), a, b)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction):
    y = signs(3, 4)
    check(lambda x: F.soft_margin_loss(x, y, reduction=reduction),
          lambda x: TF.soft_margin_loss(x, torch.tensor(y), reduction=reduction),
          5 * normal(3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction, weighted):
    target = RNG.integers(0, 2, (3, 4)).astype(float)
    weight = RNG.uniform(0.5, 2.0, 4) if weighted else None
    check(lambda x: F.multilabel_soft_margin_loss(x, target, weight, reduction=reduction),
          lambda x: TF.multilabel_soft_margin_loss(
              x, torch.tensor(target), None if weight is None else torch.tensor(weight),
              reduction=reduction), normal(3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("margin, eps", [(1.0, 1e-6), (0.3, 0.0)])
def test_triplet_margin_loss(reduction, p, swap, margin, eps):
    check(lambda a, q, n: F.triplet_margin_loss(a, q, n, margin, p, eps, swap,
                                                reduction=reduction),
          lambda a, q, n: TF.triplet_margin_loss(a, q, n, margin, p, eps, swap,
                                                 reduction=reduction),
          normal(4, 3), normal(4, 3), normal(4, 3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distance", [None, "cosine", "l1"])
def test_triplet_margin_with_distance_loss(reduction, swap, distance):
    ours, theirs = {None: (None, None),
                    "cosine": (lambda a, b: 1 - F.cosine_similarity(a, b),
                               lambda a, b: 1 - TF.cosine_similarity(a, b)),
                    "l1": (lambda a, b: F.pairwise_distance(a, b, 1.0),
                           lambda a, b: TF.pairwise_distance(a, b, 1.0))}[distance]
    check(lambda a, q, n: F.triplet_margin_with_distance_loss(
              a, q, n, distance_function=ours, margin=0.5, swap=swap, reduction=reduction),
          lambda a, q, n: TF.triplet_margin_with_distance_loss(
              a, q, n, distance_function=theirs, margin=0.5, swap=swap, reduction=reduction),
          normal(4, 3), normal(4, 3), normal(4, 3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("margin", [1.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(reduction, p, margin, weighted):
    labels = np.array([0, 3, 4, 1])
    weight = RNG.uniform(0.5, 2.0, 5) if weighted else None
    check(lambda x: F.multi_margin_loss(x, labels, p, margin, weight, reduction=reduction),
          lambda x: TF.multi_margin_loss(x, torch.tensor(labels), p, margin,
                                         None if weight is None else torch.tensor(weight),
                                         reduction=reduction), normal(4, 5))
    check(lambda x: F.multi_margin_loss(x, np.array(2), p, margin, weight, reduction=reduction),
          lambda x: TF.multi_margin_loss(x, torch.tensor(2), p, margin,
                                         None if weight is None else torch.tensor(weight),
                                         reduction=reduction), normal(5))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    """Each row's classes end at its first -1 (what follows is ignored); a class listed
    twice counts twice, as in torch."""
    target = np.array([[3, 0, -1, 1, 2], [1, 1, -1, -1, -1], [-1, 0, 1, 2, 3],
                       [0, 1, 2, 3, 4]])
    check(lambda x: F.multilabel_margin_loss(x, target, reduction=reduction),
          lambda x: TF.multilabel_margin_loss(x, torch.tensor(target), reduction=reduction),
          normal(4, 5))
    check(lambda x: F.multilabel_margin_loss(x, target[0], reduction=reduction),
          lambda x: TF.multilabel_margin_loss(x, torch.tensor(target[0]), reduction=reduction),
          normal(5))


@pytest.mark.parametrize("name, ours, theirs, arrays", [
    # each hinge exactly at 0: the pair and triplet losses pass the gradient there (torch's
    # clamp_min), the multi-class ones do not (torch's z > 0)
    ("margin_ranking_loss", lambda a, b: F.margin_ranking_loss(a, b, np.array([1.0, -1.0]),
                                                                0.5, reduction="none"),
     lambda a, b: TF.margin_ranking_loss(a, b, torch.tensor([1.0, -1.0]), 0.5,
                                         reduction="none"),
     (np.array([1.0, 0.0]), np.array([1.5, 0.5]))),
    ("hinge_embedding_loss", lambda x: F.hinge_embedding_loss(x, np.array([-1.0, 1.0])),
     lambda x: TF.hinge_embedding_loss(x, torch.tensor([-1.0, 1.0])),
     (np.array([1.0, 0.0]),)),
    ("cosine_embedding_loss", lambda a, b: F.cosine_embedding_loss(a, b, np.array([-1.0]),
                                                                    0.0),
     lambda a, b: TF.cosine_embedding_loss(a, b, torch.tensor([-1.0]), 0.0),
     (np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]]))),
    ("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, eps=0.0),
     lambda a, p, n: TF.triplet_margin_loss(a, p, n, eps=0.0),
     (np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([[2.0, 0.0]]))),
    ("triplet_margin_loss(swap, tied)",
     lambda a, p, n: F.triplet_margin_loss(a, p, n, 1.0, eps=0.0, swap=True),
     lambda a, p, n: TF.triplet_margin_loss(a, p, n, 1.0, eps=0.0, swap=True),
     (np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([[1.0, 2.0]]))),
    ("multi_margin_loss", lambda x: F.multi_margin_loss(x, np.array([0])),
     lambda x: TF.multi_margin_loss(x, torch.tensor([0])), (np.array([[1.0, 0.0, -0.5]]),)),
    ("multi_margin_loss(p=2)", lambda x: F.multi_margin_loss(x, np.array([0]), 2),
     lambda x: TF.multi_margin_loss(x, torch.tensor([0]), 2), (np.array([[1.0, 0.0, 0.5]]),)),
    ("multilabel_margin_loss", lambda x: F.multilabel_margin_loss(x, np.array([[0, -1, 1]])),
     lambda x: TF.multilabel_margin_loss(x, torch.tensor([[0, -1, 1]])),
     (np.array([[1.0, 0.0, 0.5]]),)),
])
def test_margins_exactly_met(name, ours, theirs, arrays):
    check(ours, theirs, *arrays)


@pytest.mark.parametrize("fn, ref, arrays", [
    (lambda a, b: F.margin_ranking_loss(a, b, np.ones(4, np.float32)),
     lambda a, b: TF.margin_ranking_loss(a, b, torch.ones(4)), [(4,), (4,)]),
    (lambda a, b: F.cosine_embedding_loss(a, b, np.array([1.0, -1.0], np.float32), 0.1),
     lambda a, b: TF.cosine_embedding_loss(a, b, torch.tensor([1.0, -1.0]), 0.1),
     [(2, 4), (2, 4)]),
    (lambda x: F.soft_margin_loss(x, np.ones((2, 3), np.float32)),
     lambda x: TF.soft_margin_loss(x, torch.ones(2, 3)), [(2, 3)]),
    (lambda x: F.multilabel_soft_margin_loss(x, np.ones((2, 3), np.float32)),
     lambda x: TF.multilabel_soft_margin_loss(x, torch.ones(2, 3)), [(2, 3)]),
    (F.triplet_margin_loss, TF.triplet_margin_loss, [(3, 4), (3, 4), (3, 4)]),
    (lambda x: F.multi_margin_loss(x, np.array([1, 0])),
     lambda x: TF.multi_margin_loss(x, torch.tensor([1, 0])), [(2, 3)]),
    (lambda x: F.multilabel_margin_loss(x, np.array([[1, -1, 0], [2, 0, 1]])),
     lambda x: TF.multilabel_margin_loss(x, torch.tensor([[1, -1, 0], [2, 0, 1]])), [(2, 3)]),
])
def test_margin_losses_in_float32(fn, ref, arrays):
    check(fn, ref, *[normal(*s, dtype=np.float32) for s in arrays], rtol=2e-6)


def test_margin_loss_modules_match_torchs():
    x, y, labels = normal(4, 5), normal(4, 5), np.array([0, 3, 4, 1])
    weight = RNG.uniform(0.5, 2.0, 5)
    t = RNG.integers(0, 2, (4, 5)).astype(float)
    pm = signs(4)
    listed = np.array([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [0, 1, 2, 3, 4], [4, -1, 1, 1, 1]])
    pairs = [
        (cr.nn.MarginRankingLoss(0.2, reduction="sum"), tnn.MarginRankingLoss(0.2, reduction="sum"),
         (x[:, 0], y[:, 0]), (pm,)),
        (cr.nn.HingeEmbeddingLoss(0.5), tnn.HingeEmbeddingLoss(0.5), (x,), (signs(4, 5),)),
        (cr.nn.CosineEmbeddingLoss(0.1), tnn.CosineEmbeddingLoss(0.1), (x, y), (pm,)),
        (cr.nn.SoftMarginLoss(reduction="none"), tnn.SoftMarginLoss(reduction="none"), (x,),
         (signs(4, 5),)),
        (cr.nn.MultiLabelSoftMarginLoss(weight), tnn.MultiLabelSoftMarginLoss(
            torch.tensor(weight)), (x,), (t,)),
        (cr.nn.TripletMarginLoss(0.5, 1.0, 0.0, True), tnn.TripletMarginLoss(0.5, 1.0, 0.0, True),
         (x, y, normal(4, 5)), ()),
        (cr.nn.TripletMarginWithDistanceLoss(), tnn.TripletMarginWithDistanceLoss(),
         (x, y, normal(4, 5)), ()),
        (cr.nn.MultiMarginLoss(2, 0.5, weight), tnn.MultiMarginLoss(2, 0.5, torch.tensor(weight)),
         (x,), (labels,)),
        (cr.nn.MultiLabelMarginLoss(), tnn.MultiLabelMarginLoss(), (x,), (listed,)),
    ]
    for ours, theirs, arrays, constants in pairs:
        assert repr(ours) == repr(theirs)
        mine, torchs = ours.state_dict(), theirs.state_dict()
        assert list(mine) == list(torchs)
        for key in mine:
            np.testing.assert_array_equal(np.asarray(mine[key]), torchs[key].numpy())
        assert ours.reduction == theirs.reduction
        check(lambda *xs: ours(*xs, *constants),
              lambda *ts: theirs(*ts, *[torch.tensor(c) for c in constants]), *arrays)


_ONES = np.ones


@pytest.mark.parametrize("call, torch_call, message", [
    (lambda: F.margin_ranking_loss(_ONES(3), _ONES(3), _ONES((1, 3))),
     lambda: TF.margin_ranking_loss(torch.ones(3), torch.ones(3), torch.ones(1, 3)),
     "margin_ranking_loss: input1 of shape (3,), input2 of shape (3,), target of shape "
     "(1, 3); expected the same number of dimensions"),
    (lambda: F.margin_ranking_loss(_ONES(3), _ONES(3), _ONES(3), reduction="avg"),
     lambda: TF.margin_ranking_loss(torch.ones(3), torch.ones(3), torch.ones(3),
                                    reduction="avg"),
     "margin_ranking_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'"),
    (lambda: F.cosine_embedding_loss(_ONES((2, 3)), _ONES((2, 3)), _ONES((2, 1))),
     lambda: TF.cosine_embedding_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 1)),
     "cosine_embedding_loss: input1 of shape (2, 3), input2 of shape (2, 3) and target of "
     "shape (2, 1); expected (N, D), (N, D) and (N,)"),
    (lambda: F.cosine_embedding_loss(_ONES(3), _ONES(3), _ONES(3)),
     lambda: TF.cosine_embedding_loss(torch.ones(3), torch.ones(3), torch.ones(3)),
     "cosine_embedding_loss: input1 of shape (3,), input2 of shape (3,) and target of "
     "shape (3,)"),
    (lambda: F.triplet_margin_loss(_ONES((2, 3)), _ONES((2, 3)), _ONES((2, 3)), margin=0.0),
     lambda: TF.triplet_margin_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3),
                                    margin=0.0),
     "triplet_margin_loss: margin must be greater than 0, got 0.0"),
    (lambda: F.triplet_margin_loss(_ONES((2, 3)), _ONES(3), _ONES((2, 3))),
     lambda: TF.triplet_margin_loss(torch.ones(2, 3), torch.ones(3), torch.ones(2, 3)),
     "triplet_margin_loss: anchor of shape (2, 3), positive of shape (3,), negative of "
     "shape (2, 3); expected the same number of dimensions"),
    (lambda: F.triplet_margin_with_distance_loss(_ONES((2, 3)), _ONES((2, 3)),
                                                 _ONES((2, 3)), margin=-1.0),
     lambda: TF.triplet_margin_with_distance_loss(torch.ones(2, 3), torch.ones(2, 3),
                                                  torch.ones(2, 3), margin=-1.0),
     "triplet_margin_with_distance_loss: margin must be greater than 0, got -1.0"),
    (lambda: F.multi_margin_loss(_ONES((2, 3)), np.array([0, 1]), p=3),
     lambda: TF.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]), p=3),
     "multi_margin_loss: p must be 1 or 2, got 3"),
    (lambda: F.multi_margin_loss(_ONES((2, 3)), np.array([0, 1]), weight=_ONES((1, 3))),
     lambda: TF.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]),
                                  weight=torch.ones(1, 3)),
     "multi_margin_loss: weight of shape (1, 3) for an input of shape (2, 3); expected (3,)"),
    (lambda: F.multi_margin_loss(_ONES((2, 3)), np.array([0, 1, 2])),
     lambda: TF.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1, 2])),
     "multi_margin_loss: input of shape (2, 3) and target of shape (3,); expected (N, C) "
     "and (N,)"),
    (lambda: F.multi_margin_loss(_ONES((2, 3)), np.array([0, 3])),
     lambda: TF.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 3])),
     "multi_margin_loss: "),
    (lambda: F.multilabel_margin_loss(_ONES((2, 3)), np.array([0, 1, -1])),
     lambda: TF.multilabel_margin_loss(torch.ones(2, 3), torch.tensor([0, 1, -1])),
     "multilabel_margin_loss: input of shape (2, 3) and target of shape (3,); expected "
     "the same shape"),
    (lambda: F.multilabel_margin_loss(_ONES((2, 3)), np.array([[0, 3, -1], [0, -1, 0]])),
     lambda: TF.multilabel_margin_loss(torch.ones(2, 3), torch.tensor([[0, 3, -1],
                                                                        [0, -1, 0]])),
     "multilabel_margin_loss: target values must be in [-1, 3), got -1 to 3"),
])
def test_margin_loss_refusals_match_torchs(call, torch_call, message):
    with pytest.raises((RuntimeError, ValueError, IndexError)):
        torch_call()
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


@pytest.mark.parametrize("module, args", [
    (lambda: cr.nn.TripletMarginLoss(margin=0.0), "margin must be greater than 0"),
    (lambda: cr.nn.MultiMarginLoss(p=3), "p must be 1 or 2"),
    (lambda: cr.nn.KLDivLoss(reduction="avg"), "reduction must be"),
    (lambda: cr.nn.SoftMarginLoss(reduction="avg"), "reduction must be"),
])
def test_loss_modules_refuse_bad_settings_when_made(module, args):
    with pytest.raises(ValueError, match=args):
        module()


_TARGETED = {
    "hinge_embedding_loss": (F.hinge_embedding_loss, lambda: signs(4, 5)),
    "cosine_embedding_loss": (lambda a, t: F.cosine_embedding_loss(a, a + 1, t),
                              lambda: signs(4)),
    "multi_margin_loss": (F.multi_margin_loss, lambda: np.array([0, 3, 4, 1])),
    "multilabel_margin_loss": (F.multilabel_margin_loss,
                               lambda: np.array([[3, 0, -1, 1, 2], [1, 1, -1, -1, -1],
                                                 [-1, 0, 1, 2, 3], [0, 1, 2, 3, 4]])),
    "kl_div": (lambda a, t: F.kl_div(a, t, reduction="sum"), lambda: probabilities(4, 5)),
    "poisson_nll_loss(full)": (lambda a, t: F.poisson_nll_loss(a, 3 * t, full=True),
                               lambda: probabilities(4, 5)),
    "gaussian_nll_loss": (lambda a, t: F.gaussian_nll_loss(a, t, t * t + 0.1),
                          lambda: normal(4, 5)),
    "margin_ranking_loss": (lambda a, t: F.margin_ranking_loss(a[:, 0], a[:, 1], t),
                            lambda: signs(4)),
}


@pytest.mark.parametrize("name", sorted(_TARGETED))
def test_targets_passed_through_jit_and_vmap(name):
    """A target given as an argument is traced by cr.jit and batched by cr.vmap (one
    loss per example): the losses compute with it, as with a constant."""
    fn, target = _TARGETED[name]
    x, t = normal(4, 5), target()
    expected = fn(cr.tensor(x), t).data
    np.testing.assert_allclose(cr.jit(fn)(x, t), expected, rtol=RTOL)
    per_example = cr.vmap(lambda a, b: fn(a[None], b[None]))(x, t)
    whole = [fn(x[i:i + 1], t[i:i + 1]) for i in range(4)]
    np.testing.assert_allclose(np.asarray(per_example), np.asarray(whole), rtol=RTOL)


def _hvp_of_torch(ref, arrays, w, v):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    grads = torch.autograd.grad((ref(*ts) * torch.tensor(w)).sum(), ts, create_graph=True,
                                allow_unused=True)
    inner = [(g * torch.tensor(d)).sum() for g, d in zip(grads, v)
             if g is not None and g.requires_grad]
    if not inner:
        return [np.zeros_like(a) for a in arrays]
    second = torch.autograd.grad(sum(inner), ts, allow_unused=True)
    return [np.zeros_like(a) if s is None else s.numpy() for a, s in zip(arrays, second)]


def _hvp_of_chainrule(fn, arrays, w, v):
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    (fn(*xs) * w).sum().backward(create_graph=True)
    grads = [x.grad for x in xs]
    for x in xs:
        x.zero_grad()
    inner = sum((g * d).sum() for g, d in zip(grads, v))
    if not getattr(inner, "requires_grad", False):  # (a gradient constant in x)
        return [np.zeros_like(a) for a in arrays]
    inner.backward()
    return [np.zeros_like(a) if x.grad is None else x.grad for x, a in zip(xs, arrays)]


def _special(kind):
    rows = normal(2, 3)
    if kind == "zero row":
        rows[0] = 0.0
        return rows
    other = rows.copy()
    other[1] += 1.0
    return rows, other


@pytest.mark.parametrize("name, fn, ref, arrays", [
    ("normalize(p=2)", F.normalize, TF.normalize, lambda: [_special("zero row")]),
    ("normalize(p=3)", lambda x: F.normalize(x, 3.0), lambda x: TF.normalize(x, 3.0),
     lambda: [_special("zero row")]),
    ("normalize(p=inf)", lambda x: F.normalize(x, math.inf),
     lambda x: TF.normalize(x, math.inf), lambda: [_special("zero row")]),
    ("pairwise_distance(p=2)", lambda a, b: F.pairwise_distance(a, b, 2.0, 0.0),
     lambda a, b: TF.pairwise_distance(a, b, 2.0, 0.0), lambda: list(_special("equal row"))),
    ("pairwise_distance(p=3)", lambda a, b: F.pairwise_distance(a, b, 3.0, 0.0),
     lambda a, b: TF.pairwise_distance(a, b, 3.0, 0.0), lambda: list(_special("equal row"))),
    ("cosine_similarity", F.cosine_similarity, TF.cosine_similarity,
     lambda: [_special("zero row"), normal(2, 3)]),
    ("cosine_embedding_loss",
     lambda a, b: F.cosine_embedding_loss(a, b, np.array([1.0, -1.0]), -0.5),
     lambda a, b: TF.cosine_embedding_loss(a, b, torch.tensor([1.0, -1.0]), -0.5),
     lambda: [_special("zero row"), normal(2, 3)]),
    ("gaussian_nll_loss", lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="none"),
     lambda x, t, v: TF.gaussian_nll_loss(x, t, v, reduction="none"),
     lambda: [normal(2, 3), normal(2, 3), np.array([[1e-8, 0.0, 1.0], [0.5, 1e-7, 2.0]])]),
    ("kl_div", lambda x, t: F.kl_div(x, t, reduction="none"),
     lambda x, t: TF.kl_div(x, t, reduction="none"),
     lambda: [normal(2, 3), np.array([[0.0, 0.5, 0.2], [0.1, 0.0, 0.3]])]),
])
def test_second_derivatives_at_torchs_special_points(name, fn, ref, arrays):
    """Hessian-vector products at zero vectors, equal points, clamped variances and zero
    targets: torch's where torch's is finite, and finite where torch's is NaN (the
    2-norm's second derivative at 0, xlogy's at a zero target)."""
    arrays = arrays()
    with torch.no_grad():
        shape = tuple(ref(*[torch.tensor(a) for a in arrays]).shape)
    w, v = RNG.standard_normal(shape), [RNG.standard_normal(a.shape) for a in arrays]
    for ours, theirs in zip(_hvp_of_chainrule(fn, arrays, w, v),
                            _hvp_of_torch(ref, arrays, w, v)):
        assert np.all(np.isfinite(ours))
        finite = np.isfinite(theirs)
        np.testing.assert_allclose(ours[finite], theirs[finite], rtol=RTOL, atol=RTOL * float(
            np.max(np.abs(theirs[finite]), initial=0.0)))
