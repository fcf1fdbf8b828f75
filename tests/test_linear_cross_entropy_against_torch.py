"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss (torch 2.13's) against torch in
float64: values and the gradients in the input, the layer's weight and bias over
reductions, class weights, label smoothing, ignore_index (None ignores nothing) and
K-dimensional outputs; the module's parameters, state_dict, repr and initial bounds."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261209)
TOL = 1e-12


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("out", [(), (2,)], ids=["classes", "K-dimensional"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", [
    dict(), dict(label_smoothing=0.2), dict(ignore_index=1), dict(weight="classes")],
    ids=["plain", "smoothing", "ignore 1", "class weights"])
def test_values_and_gradients_are_torchs(out, reduction, options):
    x, W, b = RNG.normal(size=(6, 3)), RNG.normal(size=(4,) + out + (3,)), \
        RNG.normal(size=(4,) + out)
    target = RNG.integers(0, 4, size=(6,) + out)
    options = dict(options)
    if options.get("weight") == "classes":
        options["weight"] = RNG.uniform(0.5, 2.0, size=4)
    torch_options = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                     for k, v in options.items()}
    tensors = [torch.tensor(a, requires_grad=True) for a in (x, W, b)]
    theirs = TF.linear_cross_entropy(tensors[0], tensors[1], torch.tensor(target),
                                     linear_bias=tensors[2], reduction=reduction,
                                     **torch_options)
    w = RNG.normal(size=tuple(theirs.shape))
    (theirs * torch.tensor(w)).sum().backward()

    def loss(x, W, b):
        return F.linear_cross_entropy(x, W, target, linear_bias=b, reduction=reduction,
                                      **options)
    close(loss(x, W, b), theirs)
    grads = cr.grad(lambda *a: cr.sum(loss(*a) * w), argnums=(0, 1, 2))(x, W, b)
    for g, t in zip(grads, tensors):
        close(g, t.grad)


def test_the_module_is_torchs():
    theirs = torch.nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True,
                                             label_smoothing=0.1).double()
    ours = nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True,
                                     label_smoothing=0.1, rng=0)
    assert repr(ours) == repr(theirs)
    assert {k: v.shape for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert np.abs(ours.linear.weight.data).max() <= 1 / np.sqrt(5)
    ours.load_state_dict(theirs.state_dict())
    x, target = RNG.normal(size=(2, 5)), RNG.integers(0, 4, size=(2, 3))
    close(ours(x, target), theirs(torch.tensor(x), torch.tensor(target)))


def test_a_mismatched_weight_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"linear_cross_entropy: input of shape \(2, 3\) "
                                         r"and linear_weight of shape \(4, 2\)"):
        F.linear_cross_entropy(np.ones((2, 3)), np.ones((4, 2)), np.zeros(2, int))
