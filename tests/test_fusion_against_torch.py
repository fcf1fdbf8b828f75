"""nn.utils.fuse_conv_bn_eval, fuse_linear_bn_eval and their ``_weights`` forms against
torch 2.13's in float64: the fused weights and biases equal torch's, the fused layer
computes what the two layers computed, the originals are left as they were, and
what torch refuses is refused in one line."""

import numpy as np
import pytest
import torch

from chainrule import nn
from chainrule.nn.utils import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                                fuse_linear_bn_weights)
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261205)
TOL = 1e-12


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def trained_norm(theirs_cls, ours_cls, channels, affine=True):
    """A torch batch norm with running statistics and affine weights away from their
    starting values, and ours loaded from it, both in eval."""
    theirs = theirs_cls(channels, affine=affine).double()
    with torch.no_grad():
        theirs.running_mean.copy_(torch.tensor(RNG.normal(size=channels)))
        theirs.running_var.copy_(torch.tensor(RNG.uniform(0.5, 2.0, size=channels)))
        if affine:
            theirs.weight.copy_(torch.tensor(RNG.normal(size=channels)))
            theirs.bias.copy_(torch.tensor(RNG.normal(size=channels)))
    ours = ours_cls(channels, affine=affine)
    ours.load_state_dict(theirs.state_dict())
    return ours.eval(), theirs.eval()


CONVS = {
    "conv1d": (lambda lib, **k: lib.Conv1d(3, 4, 3, **k), (2, 3, 9), "BatchNorm1d", False),
    "conv2d, no bias": (lambda lib, **k: lib.Conv2d(3, 4, 3, padding=1, bias=False, **k),
                        (2, 3, 6, 6), "BatchNorm2d", False),
    "conv3d": (lambda lib, **k: lib.Conv3d(2, 4, 2, **k), (1, 2, 4, 4, 4), "BatchNorm3d",
               False),
    "transposed 2d": (lambda lib, **k: lib.ConvTranspose2d(3, 4, 3, stride=2, **k),
                      (2, 3, 4, 4), "BatchNorm2d", True),
}


@pytest.mark.parametrize("case", list(CONVS))
@pytest.mark.parametrize("affine", [True, False])
def test_a_fused_convolution_is_torchs_and_computes_both_layers(case, affine):
    make, shape, norm, transpose = CONVS[case]
    theirs_conv = make(torch.nn).double().eval()
    ours_conv = make(nn, rng=0)
    ours_conv.load_state_dict(theirs_conv.state_dict())
    ours_conv.eval()
    ours_bn, theirs_bn = trained_norm(getattr(torch.nn, norm), getattr(nn, norm), 4, affine)
    before = ours_conv.weight.data.copy()
    ours = fuse_conv_bn_eval(ours_conv, ours_bn, transpose=transpose)
    theirs = torch.nn.utils.fuse_conv_bn_eval(theirs_conv, theirs_bn, transpose=transpose)
    close(ours.weight, theirs.weight)
    close(ours.bias, theirs.bias)
    x = RNG.normal(size=shape)
    close(ours(x), ours_bn(ours_conv(x)))
    close(ours(x), theirs(torch.tensor(x)))
    np.testing.assert_array_equal(ours_conv.weight.data, before)   # a copy was fused


@pytest.mark.parametrize("shared_statistics", [False, True],
                         ids=["per output", "one for all"])
def test_a_fused_linear_layer_is_torchs(shared_statistics):
    theirs_linear = torch.nn.Linear(5, 4).double().eval()
    ours_linear = nn.Linear(5, 4, rng=0)
    ours_linear.load_state_dict(theirs_linear.state_dict())
    ours_linear.eval()
    channels = 1 if shared_statistics else 4
    ours_bn, theirs_bn = trained_norm(torch.nn.BatchNorm1d, nn.BatchNorm1d, channels)
    ours = fuse_linear_bn_eval(ours_linear, ours_bn)
    theirs = torch.nn.utils.fuse_linear_bn_eval(theirs_linear, theirs_bn)
    close(ours.weight, theirs.weight)
    close(ours.bias, theirs.bias)
    x = RNG.normal(size=(3, 5))
    close(ours(x), theirs(torch.tensor(x)))


def test_the_weight_forms_take_arrays_and_give_parameters_as_torchs():
    w, b = RNG.normal(size=(4, 2, 3)), RNG.normal(size=4)
    stats = [RNG.normal(size=4), RNG.uniform(0.5, 2, size=4), 1e-3, RNG.normal(size=4),
             RNG.normal(size=4)]
    ours = fuse_conv_bn_weights(w, b, *stats)
    theirs = torch.nn.utils.fuse_conv_bn_weights(
        *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in (w, b, *stats)])
    for o, t in zip(ours, theirs):
        assert isinstance(o, nn.Parameter) and o.requires_grad
        close(o, t)
    lw, lb = RNG.normal(size=(4, 3)), None
    ours = fuse_linear_bn_weights(lw, lb, *stats)
    theirs = torch.nn.utils.fuse_linear_bn_weights(
        torch.tensor(lw), torch.zeros(4, dtype=torch.float64),
        *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in stats])
    for o, t in zip(ours, theirs):
        close(o, t)


@pytest.mark.parametrize("call, message", [
    (lambda: fuse_conv_bn_eval(nn.Conv2d(1, 2, 3, rng=0), nn.BatchNorm2d(2).eval()),
     r"fuse_conv_bn_eval: fusion is for eval; call .eval\(\) on both Conv2d and BatchNorm2d"),
    (lambda: fuse_conv_bn_eval(nn.Conv2d(1, 2, 3, rng=0).eval(),
                               nn.BatchNorm2d(2, track_running_stats=False).eval()),
     r"the batch norm keeps no running statistics"),
    (lambda: fuse_conv_bn_eval(nn.Conv2d(1, 2, 3, rng=0).eval(), nn.BatchNorm2d(3).eval()),
     r"running statistics of shape \(3,\), expected \(2,\)"),
])
def test_bad_input_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)
