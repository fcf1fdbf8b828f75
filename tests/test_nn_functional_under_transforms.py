"""chainrule.nn.functional under the function transforms: the functions the derivative
table has no case for (convolutions, pooling, normalization, resampling, the losses and
layers made of several operations), generated from a table.

tests/test_derivatives.py's cases cover the activations and the one-operation losses,
and tests/test_table_under_transforms.py runs them through the transforms. The functions
here are checked against PyTorch on plain arrays by their own files
(test_pooling_against_torch.py, test_grid_sample_and_interpolate_against_torch.py...).
Here each row runs through the same seven transforms (vmap over the first and the last
axis, vmap of the first argument with the others shared, grad of vmap, vmap of grad,
jit(vmap(jit)) replayed on new numbers, jit of jacfwd), each against the same call made
one example at a time, eagerly: a per-example gradient of a CNN or an attention layer
(vmap of grad) is the common use.

Every public function of ``chainrule.nn.functional`` has a row here, a case in the
derivative table, or a reason in SKIPPED (test_every_function_has_a_row_or_a_reason).
Rows whose output has no derivative (indices, a one-hot matrix) run through the three
vmaps and jit(vmap(jit)) only.
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

import test_derivatives as table
import test_table_under_transforms as transforms

CASES = []


def case(*row, **options):
    CASES.append(transforms.row(*row, **options))


# --- layers and losses made of several operations --------------------------------------
case("bilinear", F.bilinear, ((2, 3), "any"), ((2, 4), "any"), ((5, 3, 4), "any"),
     ((5,), "any"))
case("one_hot", lambda x: F.one_hot(cr.argmax(x, -1), 4), ((3, 4), "any"),
     values_only=True)
for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
    for reduction in ("none", "mean", "sum"):
        case(f"{name}-{reduction}",
             lambda p, t, f=getattr(F, name), r=reduction: f(p, t, reduction=r),
             ((2, 3), "any"), ((2, 3), "any"))
case("smooth_l1_loss-beta", lambda p, t: F.smooth_l1_loss(p, t, beta=0.5),
     ((2, 3), "any"), ((2, 3), "any"))
case("huber_loss-delta", lambda p, t: F.huber_loss(p, t, delta=0.5), ((2, 3), "any"),
     ((2, 3), "any"))
case("linear_cross_entropy",
     lambda x, w: F.linear_cross_entropy(x, w, np.array([0, 3])), ((2, 3), "any"),
     ((4, 3), "any"))
CTC_TARGETS = np.array([[1, 2]])
case("ctc_loss",
     lambda x: F.ctc_loss(F.log_softmax(x, -1), CTC_TARGETS, np.array([5]), np.array([2])),
     ((5, 1, 3), "any"))
BAG = np.array([0, 2, 1, 4, 3])
for mode in ("sum", "mean", "max"):
    case(f"embedding_bag-{mode}",
         lambda w, m=mode: F.embedding_bag(BAG, w, np.array([0, 2]), mode=m),
         ((5, 3), "any"))
case("embedding_bag-per_sample_weights",
     lambda w, s: F.embedding_bag(BAG, w, np.array([0, 2]), mode="sum",
                                  per_sample_weights=s),
     ((5, 3), "any"), ((5,), "any"))

# --- attention and normalization -------------------------------------------------------
case("scaled_dot_product_attention", F.scaled_dot_product_attention, ((2, 3, 4), "any"),
     ((2, 5, 4), "any"), ((2, 5, 4), "any"))
case("scaled_dot_product_attention-causal",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     ((2, 3, 4), "any"), ((2, 3, 4), "any"), ((2, 3, 4), "any"))
case("batch_norm-training",
     lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     ((2, 3, 4), "any"), ((3,), "any"), ((3,), "any"))
case("batch_norm-running",
     lambda x, w, b: F.batch_norm(x, np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.8, 1.1]),
                                  w, b),
     ((2, 3, 4), "any"), ((3,), "any"), ((3,), "any"))
case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), ((2, 4, 3), "any"),
     ((4,), "any"), ((4,), "any"))
case("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
     ((2, 3, 4), "any"), ((3,), "any"), ((3,), "any"))
case("rms_norm", lambda x, w: F.rms_norm(x, (3,), w), ((2, 3), "any"), ((3,), "any"))
case("local_response_norm", lambda x: F.local_response_norm(x, 2), ((1, 4, 3), "any"))

# --- convolutions ----------------------------------------------------------------------
case("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2),
     ((1, 2, 7), "any"), ((3, 2, 2), "any"), ((3,), "any"))
case("conv2d-groups-same", lambda x, w: F.conv2d(x, w, padding="same", groups=2),
     ((1, 2, 4, 4), "any"), ((2, 1, 2, 2), "any"))
case("conv2d-stride", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0)),
     ((2, 2, 4, 3), "any"), ((3, 2, 2, 2), "any"), ((3,), "any"))
case("conv3d", lambda x, w: F.conv3d(x, w, padding=1), ((1, 1, 3, 3, 2), "any"),
     ((2, 1, 2, 2, 2), "any"))
case("conv_transpose1d",
     lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
     ((1, 2, 4), "any"), ((2, 3, 2), "any"), ((3,), "any"))
case("conv_transpose2d",
     lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2, dilation=(1, 2)),
     ((1, 2, 3, 3), "any"), ((2, 1, 2, 2), "any"))
case("conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w, stride=(1, 2, 1)),
     ((1, 1, 2, 2, 2), "any"), ((1, 2, 2, 2, 2), "any"))
case("unfold", lambda x: F.unfold(x, 2, padding=1, stride=(1, 2)), ((1, 2, 3, 4), "any"))
case("fold", lambda x: F.fold(x, (3, 4), 2), ((1, 8, 6), "any"))

# --- pooling ---------------------------------------------------------------------------
SHAPE = {1: (1, 2, 6), 2: (1, 2, 5, 4), 3: (1, 1, 4, 3, 4)}
for d in (1, 2, 3):
    x = (SHAPE[d], "any")
    case(f"max_pool{d}d", lambda v, f=getattr(F, f"max_pool{d}d"): f(v, 2), x)
    case(f"max_pool{d}d-stride-padding-ceil",
         lambda v, f=getattr(F, f"max_pool{d}d"): f(v, 3, stride=2, padding=1,
                                                     ceil_mode=True), x)
    case(f"max_pool{d}d_with_indices",
         lambda v, f=getattr(F, f"max_pool{d}d_with_indices"): f(v, 2), x)
    case(f"avg_pool{d}d", lambda v, f=getattr(F, f"avg_pool{d}d"): f(v, 2), x)
    case(f"avg_pool{d}d-padding-ceil-exclude",
         lambda v, f=getattr(F, f"avg_pool{d}d"): f(v, 3, stride=2, padding=1,
                                                     ceil_mode=True,
                                                     count_include_pad=False), x)
    case(f"adaptive_avg_pool{d}d", lambda v, f=getattr(F, f"adaptive_avg_pool{d}d"): f(v, 3),
         x)
    case(f"adaptive_max_pool{d}d", lambda v, f=getattr(F, f"adaptive_max_pool{d}d"): f(v, 3),
         x)
    case(f"adaptive_max_pool{d}d_with_indices",
         lambda v, f=getattr(F, f"adaptive_max_pool{d}d_with_indices"): f(v, 3), x)
    case(f"lp_pool{d}d", lambda v, f=getattr(F, f"lp_pool{d}d"): f(v, 2.0, 2), x)
    case(f"lp_pool{d}d-norm3", lambda v, f=getattr(F, f"lp_pool{d}d"): f(v, 3.0, 2),
         (SHAPE[d], "pos"))
    case(f"max_unpool{d}d",
         lambda v, p=getattr(F, f"max_pool{d}d"), u=getattr(F, f"max_unpool{d}d"), d=d:
             u(*p(v, 2, return_indices=True), 2, output_size=v.shape[-d:]), x)
for d, shape in ((2, (1, 2, 5, 4)), (3, (1, 1, 4, 4, 5))):
    samples = np.random.default_rng(d).uniform(size=(1, shape[1], d))  # fixed windows
    for suffix in ("", "_with_indices"):
        case(f"fractional_max_pool{d}d{suffix}",
             lambda v, f=getattr(F, f"fractional_max_pool{d}d{suffix}"), s=samples:
                 f(v, 2, output_size=2, _random_samples=s), (shape, "any"))

# --- resampling ------------------------------------------------------------------------
case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), ((1, 4, 2, 3), "any"))
case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), ((1, 1, 4, 2), "any"))
case("channel_shuffle", lambda x: F.channel_shuffle(x, 2), ((1, 4, 3), "any"))
for mode in ("nearest", "nearest-exact", "bilinear", "bicubic", "area"):
    case(f"interpolate-{mode}", lambda x, m=mode: F.interpolate(x, size=(5, 3), mode=m),
         ((1, 2, 3, 4), "any"))
for mode in ("bilinear", "bicubic"):
    case(f"interpolate-{mode}-align_corners",
         lambda x, m=mode: F.interpolate(x, scale_factor=2, mode=m, align_corners=True),
         ((1, 1, 3, 2), "any"))
case("interpolate-linear", lambda x: F.interpolate(x, size=7, mode="linear"),
     ((1, 2, 4), "any"))
case("interpolate-trilinear", lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"),
     ((1, 1, 2, 2, 3), "any"))
case("interpolate-antialias",
     lambda x: F.interpolate(x, size=(2, 2), mode="bilinear", antialias=True),
     ((1, 1, 5, 4), "any"))
case("upsample", lambda x: F.upsample(x, scale_factor=2, mode="bilinear"),
     ((1, 1, 2, 3), "any"))
case("upsample_bilinear", lambda x: F.upsample_bilinear(x, scale_factor=2),
     ((1, 1, 2, 3), "any"))
case("upsample_nearest", lambda x: F.upsample_nearest(x, size=(3, 5)),
     ((1, 1, 2, 3), "any"))
case("affine_grid", lambda t: F.affine_grid(t, (1, 1, 3, 4), align_corners=False),
     ((1, 2, 3), "any"))
case("affine_grid-3d", lambda t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners=True),
     ((1, 3, 4), "any"))
for mode in ("bilinear", "nearest", "bicubic"):
    for padding in ("zeros", "border", "reflection"):
        for align in (False, True):
            case(f"grid_sample-{mode}-{padding}-{'align' if align else 'noalign'}",
                 lambda x, g, m=mode, p=padding, a=align:
                     F.grid_sample(x, 1.2 * g, mode=m, padding_mode=p, align_corners=a),
                 ((1, 2, 3, 4), "any"), ((1, 2, 3, 2), "unit"))
case("grid_sample-3d",
     lambda x, g: F.grid_sample(x, g, align_corners=False),
     ((1, 1, 2, 3, 2), "any"), ((1, 2, 1, 2, 3), "unit"))

IN_PLACE = ("relu_", "elu_", "leaky_relu_", "hardtanh_", "threshold_", "celu_", "selu_",
            "rrelu_")
SKIPPED = {name: "draws random numbers: the same call twice differs, so no "
                 "example-by-example reference"
           for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                        "feature_alpha_dropout", "gumbel_softmax")}
SKIPPED.update({name: "writes into a Tensor; a transform's traced value cannot be "
                      "written (test_an_in_place_activation_refuses_a_traced_value)"
                for name in IN_PLACE})


@pytest.mark.parametrize("name", IN_PLACE)
def test_an_in_place_activation_refuses_a_traced_value(name):
    f = getattr(F, name)
    args = (0.1, -2.0) if name == "threshold_" else ()
    x = np.array([[-0.5, 0.5], [1.5, -1.5]])
    for transform in (cr.vmap, cr.grad, cr.jacfwd, cr.jit):
        sink = (lambda y: cr.sum(y)) if transform is cr.grad else (lambda y: y)
        with pytest.raises(TypeError, match=rf"F\.{name}\(x\) writes into x, which must "
                                            rf"be a Tensor; got \w+ .* write x = F\."):
            transform(lambda v: sink(f(v * 1.0, *args)))(x)
    with pytest.raises(TypeError, match="which must be a Tensor; got ndarray"):
        f(x, *args)
    t = cr.tensor(x)  # a Tensor is written into, as PyTorch's
    assert f(t, *args) is t


def test_one_hot_under_a_transform_needs_num_classes_and_checks_each_run():
    labels = np.array([[0, 3], [2, 1]])
    out = cr.vmap(lambda i: F.one_hot(i, 4))(labels)
    np.testing.assert_array_equal(out, [[[1, 0, 0, 0], [0, 0, 0, 1]],
                                        [[0, 0, 1, 0], [0, 1, 0, 0]]])
    assert out.dtype == np.int64
    with pytest.raises(ValueError, match="one_hot: num_classes=-1 reads the largest index"):
        cr.vmap(F.one_hot)(labels)
    outside = np.array([[0, 3], [2, 5]])  # 5 is not one of 4 classes
    with pytest.raises(ValueError, match="class values must be smaller than num_classes"):
        F.one_hot(outside, 4)  # eagerly the numbers are known: PyTorch's error
    with pytest.raises(ValueError, match=r"one_hot: class values must be whole numbers "
                                         r"in \[0, 4\)"):
        cr.vmap(lambda i: F.one_hot(i, 4))(outside)
    program = cr.jit(lambda i: F.one_hot(i, 4))
    np.testing.assert_array_equal(program(labels), F.one_hot(labels, 4))
    with pytest.raises(ValueError, match=r"whole numbers in \[0, 4\)"):
        program(outside)  # the traced program checks at each run


def test_max_unpool_under_a_transform_checks_its_indices_at_each_run():
    y = np.array([[[[1.0, 2.0]]], [[[3.0, 4.0]]]])       # two examples of (1, 1, 2)
    good = np.array([[[[0, 3]]], [[[2, 1]]]])
    out = cr.vmap(lambda v, i: F.max_unpool1d(v, i, 2))(y, good)
    np.testing.assert_array_equal(out, [[[[1.0, 0.0, 0.0, 2.0]]], [[[0.0, 4.0, 3.0, 0.0]]]])
    bad = np.array([[[[0, 3]]], [[[-1, 1]]]])            # -1 is outside the plane of 4
    with pytest.raises(ValueError, match="indices run from -1 to 1"):
        F.max_unpool1d(y[1], bad[1], 2)
    with pytest.raises(ValueError, match="max_unpool1d: an index lies outside the output "
                                         "plane of 4 entries"):
        cr.vmap(lambda v, i: F.max_unpool1d(v, i, 2))(y, bad)
    program = cr.jit(lambda v, i: F.max_unpool1d(v, i, 2))
    np.testing.assert_array_equal(program(y[0], good[0]), F.max_unpool1d(y[0], good[0], 2))
    with pytest.raises(ValueError, match="an index lies outside the output plane"):
        program(y[1], bad[1])


def test_every_function_has_a_row_or_a_reason():
    here = {c.id.split("-")[0] for c in CASES}
    in_the_table = " ".join(c.id for c in table.CASES)
    missing = [name for name in F.__all__ if callable(getattr(F, name))
               and name not in here and name not in SKIPPED and name not in in_the_table]
    assert not missing, f"add a row (or a reason in SKIPPED) for: {missing}"


@pytest.mark.parametrize("case, transform", transforms.params(CASES))
def test_a_function_through_a_transform(case, transform):
    transforms.through(case, transform)
