"""nn's batch, group, instance and RMS normalisation, padding, reshaping and resampling
layers against torch 2.13 in float64: values over a grid of options and shapes, the gradient
of sum(w * y) in the input and the weights, a Hessian-vector product in the input
against torch's double backward, float32 kept, modules' repr, parameter and buffer
names and a torch state_dict loaded, train and eval of the statistics layers, cr.vmap
and cr.jit giving the eager numbers, and the refusals where torch refuses.
"""

import contextlib
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import central_difference_atol, per_test_generator

RNG = per_test_generator(20261131)
RTOL = 1e-12


def close(actual, expected, rtol=RTOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)


def normal(*shape):
    return RNG.standard_normal(shape)


def T(a, grad=True):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=grad)


def against_torch(ours, theirs, arrays, second=True):
    """ours(*arrays) and theirs(*tensors): values, the gradient of sum(w * y) in every
    array, and (``second``) a Hessian-vector product in the first, all to RTOL: of
    sum(w * y), or for ``second="square"`` (a linear map, whose Hessian is 0) of
    sum(w * y**2)."""
    tensors = [T(a) for a in arrays]
    ty = theirs(*tensors)
    y = ours(*arrays)
    close(y, ty)
    w = normal(*ty.shape)
    tgrads = torch.autograd.grad((ty * torch.tensor(w)).sum(), tensors, create_graph=True)
    loss = lambda *a: cr.sum(ours(*a) * w)  # noqa: E731
    grads = cr.grad(loss, argnums=tuple(range(len(arrays))))(*arrays)
    for g, tg in zip(grads, tgrads):
        close(g, tg)
    if second:
        v, rest = normal(*arrays[0].shape), arrays[1:]
        if second == "square":
            (tg,) = torch.autograd.grad((ty * ty * torch.tensor(w)).sum(), tensors[0],
                                        create_graph=True)
            square = lambda x: cr.sum(ours(x, *rest) ** 2 * w)  # noqa: E731
        else:
            tg, square = tgrads[0], lambda x: loss(x, *rest)  # noqa: E731
        (th,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tensors[0])
        close(cr.hvp(square, arrays[0], v), th)
    return y


def under_transforms(f, *arrays):
    """cr.jit and cr.vmap (over a leading batch of two inputs) give the eager numbers."""
    eager = f(*arrays)
    close(cr.jit(f)(*arrays), eager, 1e-14)
    others = [normal(*np.shape(a)) for a in arrays]
    batched = cr.vmap(f)(*[np.stack([a, b]) for a, b in zip(arrays, others)])
    close(batched[0], eager, 1e-14)
    close(batched[1], f(*others), 1e-14)


# =======================================================================================
# 1. group_norm, instance_norm, rms_norm and their modules
# =======================================================================================

GROUP_NORMS = [((2, 4, 5), 2, True), ((3, 6, 2, 3), 3, True), ((1, 4, 3, 2, 2), 4, False),
               ((2, 6), 1, True), ((2, 6, 7), 6, False), ((1, 2, 1), 1, True)]


@pytest.mark.parametrize("shape, groups, affine", GROUP_NORMS)
@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_group_norm_values_and_derivatives_are_torchs(shape, groups, affine, eps):
    x, c = normal(*shape) * 3 + 1, shape[1]
    if affine:
        arrays = [x, normal(c), normal(c)]
        ours = lambda x, w, b: F.group_norm(x, groups, w, b, eps)  # noqa: E731
        theirs = lambda x, w, b: TF.group_norm(x, groups, w, b, eps)  # noqa: E731
    else:
        arrays = [x]
        ours = lambda x: F.group_norm(x, groups, eps=eps)  # noqa: E731
        theirs = lambda x: TF.group_norm(x, groups, eps=eps)  # noqa: E731
    against_torch(ours, theirs, arrays)
    under_transforms(ours, *arrays)


INSTANCE_NORMS = [(2, 3, 5), (1, 2, 4, 3), (2, 2, 3, 2, 2), (3, 1, 2)]


@pytest.mark.parametrize("shape", INSTANCE_NORMS)
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_values_and_derivatives_are_torchs(shape, affine):
    x, c = normal(*shape) * 2 - 1, shape[1]
    if affine:
        arrays = [x, normal(c), normal(c)]
        ours = lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3)  # noqa: E731
        theirs = lambda x, w, b: TF.instance_norm(x, weight=w, bias=b, eps=1e-3)  # noqa: E731
    else:
        arrays = [x]
        ours, theirs = F.instance_norm, TF.instance_norm
    against_torch(ours, theirs, arrays)
    under_transforms(ours, *arrays)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_statistics_are_torchs(use_input_stats):
    x = normal(3, 2, 6) * 2 + 1
    rm, rv = normal(2), np.abs(normal(2)) + 0.5
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    ty = TF.instance_norm(T(x), trm, trv, use_input_stats=use_input_stats, momentum=0.3)
    y = F.instance_norm(cr.tensor(x), rm, rv, use_input_stats=use_input_stats,
                        momentum=0.3)
    close(y, ty)
    close(rm, trm)
    close(rv, trv)


RMS_NORMS = [((3, 4), 4, True, None), ((2, 3, 4), (3, 4), True, 1e-3),
             ((5,), 5, False, None), ((2, 2, 3), 3, False, 0.5)]


@pytest.mark.parametrize("shape, normalized, affine, eps", RMS_NORMS)
def test_rms_norm_values_and_derivatives_are_torchs(shape, normalized, affine, eps):
    x = normal(*shape)
    wshape = (normalized,) if isinstance(normalized, int) else normalized
    if affine:
        arrays = [x, normal(*wshape)]
        ours = lambda x, w: F.rms_norm(x, normalized, w, eps)  # noqa: E731
        theirs = lambda x, w: TF.rms_norm(x, wshape, w, eps)  # noqa: E731
    else:
        arrays = [x]
        ours = lambda x: F.rms_norm(x, normalized, eps=eps)  # noqa: E731
        theirs = lambda x: TF.rms_norm(x, wshape, eps=eps)  # noqa: E731
    against_torch(ours, theirs, arrays)
    under_transforms(ours, *arrays)


@pytest.mark.parametrize("name", ["group_norm", "instance_norm", "rms_norm"])
def test_third_order_of_the_norms_against_central_differences(name):
    # (torch's own third derivative of instance_norm is off: its autograd.grad and its
    # torch.func disagree with each other and with central differences)
    ours = {"group_norm": lambda x: F.group_norm(x, 2, eps=0.1),
            "instance_norm": lambda x: F.instance_norm(x, eps=0.1),
            "rms_norm": lambda x: F.rms_norm(x, 4, eps=0.1)}[name]
    x, v, w = normal(2, 4, 4), normal(2, 4, 4), normal(2, 4, 4)
    f = lambda x: cr.sum(ours(x) ** 3 * w)  # noqa: E731
    second = lambda x: float(np.sum(cr.hvp(f, x, v) * v))  # noqa: E731
    third = cr.grad(lambda x: cr.sum(cr.hvp(f, x, v) * v))(x)
    h = 1e-4
    for k in range(3):
        e = normal(*x.shape)
        difference = (second(x + h * e) - second(x - h * e)) / (2 * h)
        scale = float(np.sum(np.abs(cr.hvp(f, x, v) * v)))
        assert abs(float(np.sum(third * e)) - difference) <= \
            central_difference_atol(h, scale, 100 * scale)


def test_rms_norms_default_eps_is_the_dtypes_as_torchs():
    x = np.full((1, 3), 1e-5)
    for dtype, tdtype in ((np.float64, torch.float64), (np.float32, torch.float32)):
        y = F.rms_norm(cr.tensor(x.astype(dtype)), 3)
        ty = TF.rms_norm(torch.tensor(x, dtype=tdtype), (3,))
        assert y.dtype == dtype
        close(y, ty, 1e-6 if dtype == np.float32 else RTOL)


def test_the_norms_keep_float32():
    x = cr.tensor(normal(2, 4, 3).astype(np.float32))
    for y in (F.group_norm(x, 2), F.instance_norm(x), F.rms_norm(x, 3),
              nn.GroupNorm(2, 4, dtype=np.float32)(x), nn.RMSNorm(3, dtype=np.float32)(x),
              nn.InstanceNorm1d(4, affine=True, dtype=np.float32)(x)):
        assert y.dtype == np.float32
    close(F.group_norm(x, 2), TF.group_norm(torch.tensor(x.data), 2), 1e-5)


def _load_and_compare(module, tmodule, x, train=True):
    """module with tmodule's state_dict loaded: repr, names, values and gradients."""
    assert repr(module) == repr(tmodule)
    assert [n for n, _ in module.named_parameters()] == \
        [n for n, _ in tmodule.named_parameters()]
    assert [n for n, _ in module.named_buffers()] == [n for n, _ in tmodule.named_buffers()]
    assert sorted(module.state_dict()) == sorted(tmodule.state_dict())
    module.load_torch_state_dict(tmodule.state_dict())
    module.train(train), tmodule.train(train)
    tx = T(x)
    ty = tmodule(tx)
    cx = cr.tensor(x, requires_grad=True)
    y = module(cx)
    close(y, ty)
    w = normal(*ty.shape)
    (ty * torch.tensor(w)).sum().backward()
    (y * w).sum().backward()
    close(cx.grad, tx.grad)
    for (name, p), tp in zip(module.named_parameters(), tmodule.parameters()):
        close(p.grad, tp.grad)
    for (name, b), tb in zip(module.named_buffers(), tmodule.buffers()):
        close(b, tb)


@pytest.mark.parametrize("affine, bias", [(True, True), (True, False), (False, True)])
def test_group_norm_module_is_torchs(affine, bias):
    tm = tnn.GroupNorm(3, 6, eps=1e-4, affine=affine, bias=bias).double()
    for p in tm.parameters():
        with torch.no_grad():
            p.copy_(torch.tensor(normal(6)))
    _load_and_compare(nn.GroupNorm(3, 6, eps=1e-4, affine=affine, bias=bias), tm,
                      normal(2, 6, 4))


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("affine, track", [(False, False), (True, False), (False, True),
                                           (True, True)])
@pytest.mark.parametrize("momentum, bias", [(0.1, True), (None, True), (0.2, False)])
def test_instance_norm_modules_are_torchs_in_train_and_eval(d, affine, track, momentum,
                                                            bias):
    ours_cls = {1: nn.InstanceNorm1d, 2: nn.InstanceNorm2d, 3: nn.InstanceNorm3d}[d]
    theirs_cls = {1: tnn.InstanceNorm1d, 2: tnn.InstanceNorm2d, 3: tnn.InstanceNorm3d}[d]
    tm = theirs_cls(3, momentum=momentum, affine=affine, track_running_stats=track,
                    bias=bias).double()
    if affine:
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(normal(3)))
    m = ours_cls(3, momentum=momentum, affine=affine, track_running_stats=track, bias=bias)
    spatial = (4, 3, 2)[:d]
    for step in range(2):
        _load_and_compare(m, tm, normal(2, 3, *spatial) * 2 + step, train=True)
    _load_and_compare(m, tm, normal(2, 3, *spatial), train=False)
    _load_and_compare(m, tm, normal(3, *spatial), train=False)  # unbatched
    _load_and_compare(m, tm, normal(3, *spatial), train=True)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("affine, track", [(False, False), (True, False), (False, True),
                                           (True, True)])
@pytest.mark.parametrize("momentum, bias", [(0.1, True), (None, True), (0.2, False)])
def test_batch_norm_modules_are_torchs_in_train_and_eval(d, affine, track, momentum, bias):
    ours_cls = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[d]
    theirs_cls = {1: tnn.BatchNorm1d, 2: tnn.BatchNorm2d, 3: tnn.BatchNorm3d}[d]
    tm = theirs_cls(3, momentum=momentum, affine=affine, track_running_stats=track,
                    bias=bias).double()
    if affine:
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(normal(3)))
    m = ours_cls(3, momentum=momentum, affine=affine, track_running_stats=track, bias=bias)
    assert repr(m) == repr(tm)
    assert sorted(m.state_dict()) == sorted(tm.state_dict())
    spatial = ((4,), (4, 3), (3, 2, 2))[d - 1]
    for step in range(2):
        _load_and_compare(m, tm, normal(5, 3, *spatial) * 2 + step, train=True)
    _load_and_compare(m, tm, normal(2, 3, *spatial), train=False)
    if d == 1:  # BatchNorm1d also takes (N, C)
        _load_and_compare(m, tm, normal(6, 3), train=True)


def test_rms_norm_module_is_torchs():
    for args in [((4,), {}), (((2, 3),), dict(eps=1e-3)), ((3,), dict(elementwise_affine=False))]:
        tm = tnn.RMSNorm(*args[0], **args[1]).double()
        if tm.weight is not None:
            with torch.no_grad():
                tm.weight.copy_(torch.tensor(normal(*tm.weight.shape)))
        shape = (2,) + tuple(np.atleast_1d(args[0][0]))
        _load_and_compare(nn.RMSNorm(*args[0], **args[1]), tm, normal(*shape))


def test_instance_norm_under_jit_moves_the_running_statistics_as_eagerly():
    models = [nn.InstanceNorm1d(2, track_running_stats=True) for _ in range(2)]
    jitted = cr.jit(lambda m, x: m(x))
    for step in range(3):
        x = cr.tensor(normal(3, 2, 5) + step)
        close(jitted(models[1], x), models[0](x), 1e-14)
    close(models[1].running_mean, models[0].running_mean, 1e-14)
    close(models[1].running_var, models[0].running_var, 1e-14)


def _refusals(ours, theirs, match):
    with pytest.raises((ValueError, RuntimeError)):
        theirs()
    with pytest.raises(ValueError, match=match):
        ours()


def test_the_norms_refuse_what_torch_refuses():
    x = normal(2, 6, 3)
    _refusals(lambda: F.group_norm(x, 4), lambda: TF.group_norm(T(x), 4), "num_groups=4")
    _refusals(lambda: nn.GroupNorm(4, 6), lambda: tnn.GroupNorm(4, 6),
              "divisible by num_groups=4")
    _refusals(lambda: F.group_norm(normal(1, 2), 2), lambda: TF.group_norm(T(normal(1, 2)), 2),
              "one value per group")
    _refusals(lambda: F.instance_norm(normal(2, 3, 1)),
              lambda: TF.instance_norm(T(normal(2, 3, 1))), "one spatial entry")
    _refusals(lambda: F.rms_norm(x, 4), lambda: TF.rms_norm(T(x), (4,)), "normalized_shape")
    _refusals(lambda: nn.InstanceNorm1d(4, affine=True)(x),
              lambda: tnn.InstanceNorm1d(4, affine=True)(T(x)), "4 channels")
    _refusals(lambda: nn.InstanceNorm2d(6)(x[0]), lambda: tnn.InstanceNorm2d(6)(T(x[0])),
              "expected 4 dimensions")
    with pytest.raises(ValueError, match="cr.vmap"):
        cr.vmap(nn.InstanceNorm1d(6, track_running_stats=True))(normal(2, 1, 6, 3))
    with pytest.warns(UserWarning):
        with pytest.raises(RuntimeError):
            tnn.InstanceNorm1d(4, track_running_stats=True)(T(x))
    with pytest.raises(ValueError, match=r"expected 4 channels \(num_features\)"):
        nn.InstanceNorm1d(4, track_running_stats=True)(x)


def test_instance_norm_without_weights_or_statistics_warns_of_other_channels_as_torch():
    x = normal(2, 6, 3)
    with pytest.warns(UserWarning, match="does not match num_features"):
        expected = tnn.InstanceNorm1d(4)(T(x))
    with pytest.warns(UserWarning, match="num_features is unused"):
        close(nn.InstanceNorm1d(4)(x), expected)


# =======================================================================================
# 2. pad and the padding modules
# =======================================================================================

PADS = [((2, 3, 5), (1, 2)), ((2, 3, 5), (0, 4)), ((2, 3, 5), (-1, 3)), ((2, 3, 5), (1, 5)),
        ((1, 2, 4, 5), (1, 2, 3, 0)),
        ((3, 4, 5), (2, 1, -1, 2)), ((1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2)),
        ((2, 3, 4, 3), (2, 2, 1, 1, 1, 2)), ((3, 5), (4, 4)), ((2, 1, 3, 4), (-1, -1, 2, 0))]
CONSTANT_PADS = [((4,), (2, 1)), ((2, 3), (1, 0, 0, 2)), ((2, 3, 4), (1, 1, 1, 1, -1, 1)),
                 ((1, 2, 2, 2, 2), (1, 0, 0, 1, 1, 0, 0, 1, 2, 0))]


def _fits(shape, widths, mode):
    """Whether torch pads this input in this mode (else both refuse: tested below)."""
    for k in range(len(widths) // 2):
        n, before, after = shape[-1 - k], widths[2 * k], widths[2 * k + 1]
        if mode == "reflect" and max(before, after) >= n:
            return False
        if mode == "circular" and max(before, after) > n:
            return False
    return True


@pytest.mark.parametrize("shape, widths", PADS)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_values_and_derivatives_are_torchs(shape, widths, mode):
    if not _fits(shape, widths, mode):
        with pytest.raises(RuntimeError):
            TF.pad(T(normal(*shape)), widths, mode=mode)
        with pytest.raises(ValueError, match=f"mode '{mode}' with widths"):
            F.pad(normal(*shape), widths, mode=mode)
        return
    value = {"constant": 1.5}.get(mode)
    ours = lambda x: F.pad(x, widths, mode, value)  # noqa: E731
    theirs = lambda x: TF.pad(x, widths, mode, value)  # noqa: E731
    against_torch(ours, theirs, [normal(*shape)], second="square")
    under_transforms(ours, normal(*shape))


@pytest.mark.parametrize("shape, widths", CONSTANT_PADS)
@pytest.mark.parametrize("value", [None, -2.0])
def test_constant_pad_of_any_axes_is_torchs(shape, widths, value):
    ours = lambda x: F.pad(x, widths, value=value)  # noqa: E731
    theirs = lambda x: TF.pad(x, widths, value=value)  # noqa: E731
    against_torch(ours, theirs, [normal(*shape)], second="square")
    under_transforms(ours, normal(*shape))


PADDING_MODULES = [(name, d, args) for d in (1, 2, 3)
                   for name, args in (("ZeroPad", ()), ("ConstantPad", (2.5,)),
                                      ("ReflectionPad", ()), ("ReplicationPad", ()),
                                      ("CircularPad", ()))]


@pytest.mark.parametrize("name, d, args", PADDING_MODULES,
                         ids=[f"{n}{d}d" for n, d, _ in PADDING_MODULES])
@pytest.mark.parametrize("padding", [1, "tuple"])
def test_padding_modules_are_torchs(name, d, args, padding):
    if padding == "tuple":
        padding = (2, 1, 0, 1, 1, 2)[:2 * d]
    module = getattr(nn, f"{name}{d}d")(padding, *args)
    tmodule = getattr(tnn, f"{name}{d}d")(padding, *args)
    assert repr(module) == repr(tmodule)
    assert module.padding == tmodule.padding
    assert module.state_dict() == {} and module.parameters() == []
    for shape in ((2, 3) + (3, 4, 3)[:d], (3,) + (4, 3, 3)[:d]):
        x = normal(*shape)
        close(module(x), tmodule(torch.tensor(x)))
    x32 = cr.tensor(normal(1, 2, *(3,) * d).astype(np.float32))
    assert module(x32).dtype == np.float32


def test_pad_refuses_what_torch_refuses():
    x = normal(1, 2, 3)
    for widths, mode, match in [((1,), "constant", "even number"),
                                ((1,) * 8, "constant", "at most two per axis"),
                                ((3, 0), "reflect", "below the axis's size 3"),
                                ((4, 0), "circular", "at most the axis's size 3"),
                                ((1, 1, 1, 1, 1, 1), "reflect", "last 1, 2 or 3 axes"),
                                ((-2, -2), "constant", "crop more than")]:
        with pytest.raises((RuntimeError, NotImplementedError)):
            TF.pad(T(x), widths, mode=mode)
        with pytest.raises(ValueError, match=match):
            F.pad(x, widths, mode=mode)
    for ours, theirs in [(lambda: F.pad(x, (1, 1), "reflect", 2.0),
                          lambda: TF.pad(T(x), (1, 1), "reflect", 2.0)),
                         (lambda: F.pad(x[0, 0], (1, 1), "replicate"),
                          lambda: TF.pad(T(x[0, 0]), (1, 1), "replicate")),
                         (lambda: F.pad(x, (1, 1), "wrap"),
                          lambda: TF.pad(T(x), (1, 1), "wrap"))]:
        with pytest.raises((RuntimeError, NotImplementedError)):
            theirs()
        with pytest.raises(ValueError, match="pad: mode"):
            ours()


# =======================================================================================
# 3. Unflatten, pixel and channel shuffles, channel and alpha dropout
# =======================================================================================

SHUFFLES = [("pixel_shuffle", (2, 8, 3, 2), 2), ("pixel_shuffle", (9, 2, 3), 3),
            ("pixel_shuffle", (2, 1, 4, 1, 2), 1), ("pixel_shuffle", (2, 3, 8, 2, 3), 2),
            ("pixel_unshuffle", (2, 2, 4, 6), 2), ("pixel_unshuffle", (1, 6, 3), 3),
            ("pixel_unshuffle", (2, 3, 1, 4, 2), 2), ("channel_shuffle", (2, 6, 3), 2),
            ("channel_shuffle", (1, 6, 2, 2), 3), ("channel_shuffle", (2, 4, 1, 2, 3), 4)]


@pytest.mark.parametrize("name, shape, factor", SHUFFLES)
def test_shuffles_are_torchs(name, shape, factor):
    ours = lambda x: getattr(F, name)(x, factor)  # noqa: E731
    theirs = lambda x: getattr(TF, name)(x, factor)  # noqa: E731
    against_torch(ours, theirs, [normal(*shape)], second="square")
    under_transforms(ours, normal(*shape))
    module = {"pixel_shuffle": "PixelShuffle", "pixel_unshuffle": "PixelUnshuffle",
              "channel_shuffle": "ChannelShuffle"}[name]
    m, tm = getattr(nn, module)(factor), getattr(tnn, module)(factor)
    assert repr(m) == repr(tm) and m.state_dict() == {}
    x32 = normal(*shape).astype(np.float32)
    y = m(cr.tensor(x32))
    assert y.dtype == np.float32
    close(y, tm(torch.tensor(x32)), 0)


@pytest.mark.parametrize("dim, sizes, shape", [(1, (2, 5), (3, 10)), (-1, [2, -1], (2, 3, 6)),
                                               (0, (1, 3, 1), (3, 2)), (1, (-1,), (2, 4))])
def test_unflatten_is_torchs(dim, sizes, shape):
    m, tm = nn.Unflatten(dim, sizes), tnn.Unflatten(dim, sizes)
    assert repr(m) == repr(tm)
    against_torch(m, tm, [normal(*shape)], second="square")
    under_transforms(m, normal(*shape))


def test_the_shuffles_refuse_what_torch_refuses():
    cases = [(lambda: F.pixel_shuffle(normal(1, 3, 2, 2), 2),
              lambda: TF.pixel_shuffle(T(normal(1, 3, 2, 2)), 2), "divisible by upscale"),
             (lambda: F.pixel_shuffle(normal(4, 2), 2),
              lambda: TF.pixel_shuffle(T(normal(4, 2)), 2), "expected"),
             (lambda: F.pixel_unshuffle(normal(1, 3, 3, 2), 2),
              lambda: TF.pixel_unshuffle(T(normal(1, 3, 3, 2)), 2), "divisible by downscale"),
             (lambda: F.channel_shuffle(normal(1, 3, 3), 2),
              lambda: TF.channel_shuffle(T(normal(1, 3, 3)), 2), "divisible by groups"),
             (lambda: F.channel_shuffle(normal(1, 6), 2),
              lambda: TF.channel_shuffle(T(normal(1, 6)), 2), "at least 3 dimensions"),
             (lambda: nn.Unflatten(1, (2, 4))(normal(3, 10)),
              lambda: tnn.Unflatten(1, (2, 4))(T(normal(3, 10))), "don't multiply up")]
    for ours, theirs, match in cases:
        with pytest.raises(RuntimeError):
            theirs()
        with pytest.raises(ValueError, match=match):
            ours()


CHANNEL_DROPOUTS = [("dropout1d", (4, 6, 5), 2), ("dropout1d", (6, 5), 1),
                    ("dropout2d", (3, 5, 2, 3), 2), ("dropout2d", (3, 5, 4), 2),
                    ("dropout3d", (2, 4, 2, 2, 3), 2), ("dropout3d", (5, 2, 1, 3), 1)]


@pytest.mark.parametrize("name, shape, lead", CHANNEL_DROPOUTS)
def test_channel_dropout_drops_whole_channels_as_torch(name, shape, lead):
    p = 0.4
    x = normal(*shape)
    seed = int(RNG.integers(2 ** 31))
    y = getattr(F, name)(cr.tensor(x), p, rng=seed)
    ratio = y.data / x
    per_channel = ratio.reshape(shape[:lead] + (-1,))
    # every channel of every example is all zeros or all 1 / (1 - p), as torch's
    assert np.all((per_channel == 0) | np.isclose(per_channel, 1 / (1 - p), rtol=1e-15))
    np.testing.assert_allclose(per_channel.min(axis=-1), per_channel.max(axis=-1),
                               rtol=1e-14)
    with torch_seeded(seed), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's dropout2d warns of a 3-d input)
        ty = getattr(TF, name)(torch.tensor(x), p)
    t_ratio = (ty.numpy() / x).reshape(shape[:lead] + (-1,))
    np.testing.assert_allclose(t_ratio.min(axis=-1), t_ratio.max(axis=-1), rtol=1e-14)
    # the gradient is the mask, the second derivative 0
    mask = per_channel[..., :1] * np.ones_like(per_channel)
    w = normal(*shape)
    g = cr.grad(lambda x: cr.sum(getattr(F, name)(x, p, rng=seed) * w))(x)
    close(g, (mask.reshape(shape) * w))
    close(cr.hvp(lambda x: cr.sum(getattr(F, name)(x, p, rng=seed) ** 2 * w), x, w),
          2 * mask.reshape(shape) ** 2 * w * w)
    # eval, p = 0 and p = 1, as torch's
    close(getattr(F, name)(x, p, training=False), x, 0)
    close(getattr(F, name)(x, 0.0, rng=seed), x, 0)
    close(getattr(F, name)(x, 1.0, rng=seed), np.zeros(shape), 0)
    x32 = cr.tensor(x.astype(np.float32))
    assert getattr(F, name)(x32, p, rng=seed).dtype == np.float32


@contextlib.contextmanager
def torch_seeded(seed):
    """torch's global generator seeded from RNG inside, and put back after: torch's
    dropout functions take no generator."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


def test_channel_dropout_rate_is_p():
    y = F.dropout2d(np.ones((200, 50, 1, 1)), 0.3, rng=int(RNG.integers(2 ** 31)))
    dropped = np.mean(y == 0)
    assert abs(dropped - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 10000)


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_is_torchs_affine_map(p):
    x = normal(4000)
    seed = int(RNG.integers(2 ** 31))
    y = F.alpha_dropout(cr.tensor(x), p, training=True, rng=seed).data
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    kept = np.isclose(y, a * x + 1.7580993408473766 * a * p, rtol=1e-14)
    dropped = np.isclose(y, -1.7580993408473766 * a * (1 - p), rtol=1e-14)
    assert np.all(kept ^ dropped)
    assert abs(dropped.mean() - p) < 5 * np.sqrt(p * (1 - p) / x.size)
    # torch's values take the same two forms (its own draws)
    with torch_seeded(seed):
        ty = TF.alpha_dropout(torch.tensor(x), p, training=True).numpy()
    t_kept = np.isclose(ty, a * x + 1.7580993408473766 * a * p, rtol=1e-14)
    t_dropped = np.isclose(ty, -1.7580993408473766 * a * (1 - p), rtol=1e-14)
    assert np.all(t_kept ^ t_dropped)
    # standardised inputs stay standardised, which is what it is for
    z = F.alpha_dropout(RNG.standard_normal(200000), p, training=True, rng=seed)
    assert abs(np.mean(z)) < 0.02 and abs(np.var(z) - 1) < 0.02
    g = cr.grad(lambda x: cr.sum(F.alpha_dropout(x, p, training=True, rng=seed)))(x)
    close(g, np.where(kept, a, 0.0))
    close(F.alpha_dropout(x, p), x, 0)                     # training=False by default
    close(F.alpha_dropout(x, 1.0, training=True), np.zeros_like(x), 0)
    assert F.alpha_dropout(cr.tensor(x.astype(np.float32)), p, training=True,
                           rng=seed).dtype == np.float32


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"])
def test_dropout_modules_are_torchs_in_repr_train_and_eval(name):
    m, tm = getattr(nn, name)(0.3, rng=0), getattr(tnn, name)(0.3)
    assert repr(m) == repr(tm) and m.state_dict() == {} and m.parameters() == []
    shape = {"Dropout1d": (4, 3, 5), "Dropout2d": (4, 3, 2, 2), "Dropout3d": (4, 3, 2, 1, 2),
             "AlphaDropout": (4, 3, 5)}[name]
    x = normal(*shape)
    assert not np.allclose(m(x), x)                    # training: draws
    first, second = m(x), m(x)
    assert not np.array_equal(first, second)           # new draws each call
    m.eval(), tm.eval()
    close(m(x), tm(torch.tensor(x)), 0)                # eval: the identity, both
    with pytest.raises(ValueError, match=f"{name}: p must be in"):
        getattr(nn, name)(1.5)
    with pytest.raises(ValueError):
        getattr(tnn, name)(1.5)


def test_channel_dropout_under_jit_draws_anew_and_refuses_bad_ranks():
    drop = nn.Dropout1d(0.5, rng=0)
    jitted = cr.jit(lambda m, x: m(x))
    x = cr.ones(8, 16, 3)
    draws = [jitted(drop, x).data for _ in range(3)]
    assert not np.array_equal(draws[0], draws[1])
    for y in draws:
        assert np.all((y == 0) | (y == 2)) and np.all(y.min(-1) == y.max(-1))
    with pytest.raises(RuntimeError):
        TF.dropout1d(torch.ones(2, 3, 4, 5), 0.5)
    with pytest.raises(ValueError, match="dropout1d: input of shape"):
        F.dropout1d(np.ones((2, 3, 4, 5)), 0.5)


# =======================================================================================
# 4. interpolate and the upsampling modules
# =======================================================================================

INTERPOLATIONS = [
    # (input shape, mode, size, scale_factor, align_corners, recompute_scale_factor)
    ((2, 3, 5), "nearest", 7, None, None, None),
    ((2, 3, 5), "nearest", 3, None, None, None),
    ((2, 3, 5), "nearest", 10, None, None, None),
    ((2, 3, 5), "nearest", None, 1.7, None, None),
    ((2, 3, 5), "nearest", None, 1.7, None, True),
    ((2, 3, 7), "nearest", None, 0.6, None, None),
    ((1, 2, 4, 5), "nearest", (7, 3), None, None, None),
    ((1, 2, 4, 5), "nearest", None, (2.5, 1.3), None, None),
    ((1, 2, 3, 4, 2), "nearest", (5, 2, 3), None, None, None),
    ((2, 3, 5), "linear", 8, None, False, None),
    ((2, 3, 5), "linear", 8, None, True, None),
    ((2, 3, 6), "linear", 4, None, False, None),
    ((2, 3, 6), "linear", 4, None, True, None),
    ((2, 3, 5), "linear", None, 2.3, None, None),
    ((2, 3, 5), "linear", None, 2.3, False, True),
    ((2, 3, 5), "linear", None, 0.5, True, None),
    ((2, 3, 5), "linear", 1, None, True, None),
    ((1, 2, 4, 5), "bilinear", (7, 3), None, False, None),
    ((1, 2, 4, 5), "bilinear", (7, 3), None, True, None),
    ((1, 2, 4, 5), "bilinear", None, (1.5, 2.7), None, None),
    ((2, 1, 3, 3), "bilinear", None, 2, True, None),
    ((1, 2, 3, 2, 4), "trilinear", (4, 5, 3), None, False, None),
    ((1, 2, 3, 2, 4), "trilinear", None, 1.5, True, None),
]


@pytest.mark.parametrize("shape, mode, size, scale, corners, recompute", INTERPOLATIONS)
def test_interpolate_values_and_derivatives_are_torchs(shape, mode, size, scale, corners,
                                                       recompute):
    kwargs = dict(size=size, scale_factor=scale, mode=mode, align_corners=corners,
                  recompute_scale_factor=recompute)
    ours = lambda x: F.interpolate(x, **kwargs)  # noqa: E731
    theirs = lambda x: TF.interpolate(x, **kwargs)  # noqa: E731
    against_torch(ours, theirs, [normal(*shape)], second="square")
    under_transforms(ours, normal(*shape))
    x32 = normal(*shape).astype(np.float32)
    y32 = ours(cr.tensor(x32))
    assert y32.dtype == np.float32
    close(y32, theirs(torch.tensor(x32)), 1e-6)


def test_nearest_takes_torchs_float32_index_where_float64_would_differ():
    for n_in, factor in [(16, 2.6), (21, 1.85), (22, 2.45)]:
        dst = np.arange(int(n_in * factor))
        in_float64 = np.floor(dst * (1 / factor))
        in_float32 = np.floor(dst.astype(np.float32) * np.float32(1 / factor))
        assert np.any(in_float64 != in_float32)
        x = normal(1, 1, n_in)
        close(F.interpolate(x, scale_factor=factor),
              TF.interpolate(torch.tensor(x), scale_factor=factor), 0)


UPSAMPLERS = [("Upsample", dict(scale_factor=2)), ("Upsample", dict(size=(3, 4), mode="bilinear")),
              ("Upsample", dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)),
              ("Upsample", dict(size=7, mode="linear")),
              ("UpsamplingNearest2d", dict(scale_factor=2)),
              ("UpsamplingNearest2d", dict(size=(5, 3))),
              ("UpsamplingBilinear2d", dict(size=5)),
              ("UpsamplingBilinear2d", dict(scale_factor=1.5))]


@pytest.mark.parametrize("name, kwargs", UPSAMPLERS)
def test_upsampling_modules_are_torchs(name, kwargs):
    m, tm = getattr(nn, name)(**kwargs), getattr(tnn, name)(**kwargs)
    assert repr(m) == repr(tm)
    assert m.state_dict() == {} and m.parameters() == []
    shape = (2, 3, 4) if kwargs.get("mode") == "linear" else (2, 3, 4, 5)
    against_torch(m, tm, [normal(*shape)], second="square")


def test_upsample_is_interpolate():
    x = normal(1, 2, 3)
    with pytest.warns(UserWarning):
        expected = TF.upsample(torch.tensor(x), 5, mode="linear")
    close(F.upsample(x, 5, mode="linear"), expected)


def test_interpolate_refuses_what_torch_refuses():
    x = normal(1, 2, 4, 4)
    cases = [(dict(size=3, scale_factor=2), "got both"), (dict(), "got neither"),
             (dict(size=(3, 4, 5)), "expected 2 spatial sizes"),
             (dict(size=3, mode="linear"), "expected a 3-d input"),
             (dict(size=3, mode="trilinear"), "expected a 5-d input"),
             (dict(size=3, align_corners=True), "align_corners can only be set"),
             (dict(scale_factor=(2, 2, 2)), "expected 2 factors")]
    for kwargs, match in cases:
        with pytest.raises((ValueError, NotImplementedError)):
            TF.interpolate(torch.tensor(x), **kwargs)
        with pytest.raises(ValueError, match=match):
            F.interpolate(x, **kwargs)
    with pytest.raises(ValueError, match="mode 'cubic' is not one of"):
        F.interpolate(x, size=3, mode="cubic")


# =======================================================================================
# 5. A torch model of these layers, loaded
# =======================================================================================

def test_a_torch_model_of_these_layers_loads_and_computes_the_same():
    torch.manual_seed(int(RNG.integers(2 ** 31)))

    def build(lib, **conv):
        return lib.Sequential(
            lib.Conv2d(2, 8, 3, **conv), lib.GroupNorm(4, 8), lib.ReLU(),
            lib.Upsample(scale_factor=2, mode="bilinear"), lib.ReflectionPad2d((1, 0, 2, 1)),
            lib.Conv2d(8, 8, 3, **conv), lib.InstanceNorm2d(8, affine=True,
                                                            track_running_stats=True),
            lib.PixelShuffle(2), lib.ChannelShuffle(2), lib.ZeroPad2d(1),
            lib.Flatten(), lib.Unflatten(1, (2, -1)), lib.RMSNorm(192))

    with torch.random.fork_rng():
        tmodel = build(tnn).double()
        for p in tmodel.parameters():  # (not the initial ones and zeros)
            with torch.no_grad():
                p.add_(0.1 * torch.randn(p.shape, dtype=torch.float64))
        tmodel(torch.randn(3, 2, 5, 5, dtype=torch.float64))  # running statistics move
    model = build(nn, rng=0)
    assert repr(model) == repr(tmodel)
    model.load_torch_state_dict(tmodel.state_dict())
    assert sorted(model.torch_state_dict()) == sorted(tmodel.state_dict())
    for train in (True, False):
        model.train(train), tmodel.train(train)
        x = normal(3, 2, 5, 5)
        tx = T(x)
        ty = tmodel(tx)
        cx = cr.tensor(x, requires_grad=True)
        y = model(cx)
        close(y, ty, 1e-11)
        w = normal(*ty.shape)
        (ty * torch.tensor(w)).sum().backward()
        model.zero_grad()
        (y * w).sum().backward()
        close(cx.grad, tx.grad, 1e-10)
        for (name, p), tp in zip(model.named_parameters(), tmodel.parameters()):
            close(p.grad, tp.grad, 1e-10)
        tmodel.zero_grad()
    for (name, b), tb in zip(model.named_buffers(), tmodel.buffers()):
        close(b, tb)


FLOAT32_UNDER_TRANSFORMS = {
    "group_norm": lambda x: F.group_norm(x, 2), "instance_norm": F.instance_norm,
    "rms_norm": lambda x: F.rms_norm(x, 4),
    "pad": lambda x: F.pad(x, (1, 2, 2, 1), "reflect"),
    "interpolate": lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
    "pixel_unshuffle": lambda x: F.pixel_unshuffle(x, 2),
    "channel_shuffle": lambda x: F.channel_shuffle(x, 2)}


@pytest.mark.parametrize("name", sorted(FLOAT32_UNDER_TRANSFORMS))
def test_float32_stays_float32_under_jit_vmap_and_grad(name):
    f = FLOAT32_UNDER_TRANSFORMS[name]
    x = normal(2, 2, 4, 4).astype(np.float32)
    eager = f(x)
    assert eager.dtype == np.float32
    assert cr.jit(f)(x).dtype == np.float32
    batched = cr.vmap(f)(x[:, None])
    assert batched.dtype == np.float32
    close(batched[:, 0], eager, 1e-6)
    assert cr.grad(lambda x: cr.sum(f(x) ** 2))(x).dtype == np.float32
