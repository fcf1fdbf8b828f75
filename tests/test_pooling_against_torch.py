"""nn's pooling and window layers against torch 2.13 in float64: max and average pooling
in 1, 2 and 3 dimensions (ceil_mode, count_include_pad, divisor_override, dilation,
return_indices), max unpooling, adaptive average and max pooling, power-average (LP)
pooling, and im2col / col2im (unfold, fold). Values over a grid of settings and shapes,
the gradient of sum(w * y) in the input, a Hessian-vector product against torch's double
backward (for the piecewise-linear max pools, of sum(w * y**2)), forward mode against
reverse, indices equal to torch's, float32 kept, modules' repr, cr.vmap and cr.jit
giving the eager numbers, and the refusals where torch refuses.

Inputs are continuous random draws, so no window has a tie: at a tie chainrule shares
the gradient among the tied maxima, where torch gives it to one.
"""

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261201)
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


def against_torch(ours, theirs, x, second=True):
    """ours(x) and theirs(tensor): values, the gradient of sum(w * y), forward mode
    (cr.jvp) against it, and (``second``) a Hessian-vector product to RTOL: of
    sum(w * y), or for ``second="square"`` (a piecewise-linear map, whose Hessian is 0)
    of sum(w * y**2)."""
    tx = T(x)
    ty = theirs(tx)
    y = ours(x)
    close(y, ty)
    w = normal(*ty.shape)
    (tg,) = torch.autograd.grad((ty * torch.tensor(w)).sum(), tx, create_graph=True)
    loss = lambda x: cr.sum(ours(x) * w)  # noqa: E731
    g = cr.grad(loss)(x)
    close(g, tg)
    v = normal(*np.shape(x))
    _, tangent = cr.jvp(ours, (x,), (v,))
    close(np.sum(np.asarray(tangent) * w), np.sum(np.asarray(g) * v))
    if second:
        if second == "square":
            (tg,) = torch.autograd.grad((ty * ty * torch.tensor(w)).sum(), tx,
                                        create_graph=True)
            square = lambda x: cr.sum(ours(x) ** 2 * w)  # noqa: E731
        else:
            square = loss
        (th,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tx)
        close(cr.hvp(square, x, v), th)
    return y


def under_transforms(f, x, positive=False):
    """cr.jit and cr.vmap (over a leading batch of two inputs) give the eager numbers."""
    eager = f(x)
    close(cr.jit(f)(x), eager, 1e-14)
    other = normal(*np.shape(x))
    other = np.abs(other) + 0.2 if positive else other
    batched = cr.vmap(f)(np.stack([x, other]))
    close(batched[0], eager, 1e-14)
    close(batched[1], f(other), 1e-14)


def indices_under_transforms(f, x):
    """Indices (int64, no derivative) under cr.vmap and cr.jit are the eager ones."""
    xs = np.stack([x, normal(*np.shape(x))])
    np.testing.assert_array_equal(cr.vmap(f)(xs), np.stack([f(a) for a in xs]))
    np.testing.assert_array_equal(cr.jit(f)(x), f(x))


def float32_kept(ours, theirs, x):
    x32 = x.astype(np.float32)
    y32 = ours(cr.tensor(x32))
    assert y32.dtype == np.float32
    close(y32, theirs(torch.tensor(x32)), 1e-6)
    assert cr.grad(lambda x: cr.sum(ours(x) ** 2))(x32).dtype == np.float32


SHAPES = {1: (2, 3, 9), 2: (2, 2, 7, 6), 3: (1, 2, 5, 6, 4)}


# =======================================================================================
# 1. max pooling: values, derivatives, indices and unpooling
# =======================================================================================

MAX_POOLS = [  # (d, kernel, stride, padding, dilation, ceil_mode)
    (1, 3, None, 0, 1, False), (1, 3, 2, 1, 1, True), (1, 2, 3, 1, 2, True),
    (1, 4, 1, 2, 1, False), (2, 2, None, 0, 1, False), (2, 3, 2, 1, 1, True),
    (2, (2, 3), (2, 1), (1, 1), (2, 1), False), (2, (3, 2), 2, (1, 0), 1, True),
    (2, 3, (3, 2), 0, 2, True), (3, 2, None, 0, 1, False), (3, 2, 2, 1, 1, True),
    (3, (3, 2, 2), (2, 3, 1), (1, 0, 1), (1, 2, 1), True)]


@pytest.mark.parametrize("d, kernel, stride, padding, dilation, ceil_mode", MAX_POOLS)
def test_max_pool_values_derivatives_and_indices_are_torchs(d, kernel, stride, padding,
                                                            dilation, ceil_mode):
    settings = dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                    ceil_mode=ceil_mode)
    ours = lambda x: getattr(F, f"max_pool{d}d")(x, **settings)  # noqa: E731
    theirs = lambda x: getattr(TF, f"max_pool{d}d")(x, **settings)  # noqa: E731
    x = normal(*SHAPES[d])
    against_torch(ours, theirs, x, second="square")
    under_transforms(ours, x)
    float32_kept(ours, theirs, x)
    y, indices = getattr(F, f"max_pool{d}d")(x, **settings, return_indices=True)
    ty, tindices = getattr(TF, f"max_pool{d}d")(torch.tensor(x), **settings,
                                                return_indices=True)
    close(y, ty)
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, tindices.numpy())
    unbatched = getattr(F, f"max_pool{d}d")(x[0], **settings, return_indices=True)
    close(unbatched[0], ty[0])
    np.testing.assert_array_equal(unbatched[1], tindices[0].numpy())
    indices_under_transforms(
        lambda x: getattr(F, f"max_pool{d}d")(x, **settings, return_indices=True)[1], x)


UNPOOLS = [(1, 2, None, 0), (1, 3, 2, 1), (2, 2, None, 0), (2, (3, 2), (2, 2), (1, 0)),
           (3, 2, None, 0), (3, (2, 3, 2), (2, 2, 1), (0, 1, 1))]


@pytest.mark.parametrize("d, kernel, stride, padding", UNPOOLS)
def test_max_unpool_is_torchs_and_undoes_max_pool(d, kernel, stride, padding):
    x = np.abs(normal(*SHAPES[d])) + 0.1  # (positive: the zeros between are no maxima)
    pool = getattr(F, f"max_pool{d}d")
    y, indices = pool(x, kernel, stride, padding, return_indices=True)
    unpool, tunpool = getattr(F, f"max_unpool{d}d"), getattr(TF, f"max_unpool{d}d")
    size = x.shape[2:]
    settings = dict(kernel_size=kernel, stride=stride, padding=padding, output_size=size)
    ours = lambda y: unpool(y, indices, **settings)  # noqa: E731
    theirs = lambda y: tunpool(y, torch.tensor(indices), **settings)  # noqa: E731
    back = against_torch(ours, theirs, y, second="square")
    close(pool(back, kernel, stride, padding), y)  # each maximum back where it was
    kept = np.asarray(back) != 0
    close(np.asarray(back)[kept], x[kept])
    under_transforms(ours, y)
    module, tmodule = getattr(nn, f"MaxUnpool{d}d")(kernel, stride, padding), \
        getattr(tnn, f"MaxUnpool{d}d")(kernel, stride, padding)
    assert repr(module) == repr(tmodule)
    close(module(y[0], indices[0], output_size=size),
          tmodule(torch.tensor(y[0]), torch.tensor(indices[0]), output_size=size))


def test_max_unpool_default_output_size_is_torchs():
    x = normal(2, 3, 4, 6)
    y, indices = F.max_pool2d(x, 2, return_indices=True)
    expected = TF.max_unpool2d(torch.tensor(y), torch.tensor(indices), 2)
    close(F.max_unpool2d(y, indices, 2), expected)
    close(nn.MaxUnpool2d(2)(y, indices), expected)


# =======================================================================================
# 2. average pooling
# =======================================================================================

AVG_POOLS = [  # (d, kernel, stride, padding, ceil_mode)
    (1, 3, None, 0, False), (1, 3, 2, 1, True), (1, 4, 3, 2, True), (2, 2, None, 0, False),
    (2, 3, 2, 1, True), (2, (2, 3), (2, 1), (1, 1), False), (2, (3, 2), 2, (1, 0), True),
    (3, 2, None, 0, False), (3, 3, 2, 1, True), (3, (3, 2, 2), (2, 3, 1), (1, 0, 1), True)]


AVG_CASES = [case + (include, divisor) for case in AVG_POOLS for include in (True, False)
             for divisor in ((None,) if case[0] == 1 else (None, 3))]  # (no 1-d divisor)


@pytest.mark.parametrize("d, kernel, stride, padding, ceil_mode, count_include_pad, "
                         "divisor_override", AVG_CASES)
def test_avg_pool_values_and_derivatives_are_torchs(d, kernel, stride, padding, ceil_mode,
                                                    count_include_pad, divisor_override):
    settings = dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                    count_include_pad=count_include_pad)
    if divisor_override is not None:
        settings["divisor_override"] = divisor_override
    ours = lambda x: getattr(F, f"avg_pool{d}d")(x, **settings)  # noqa: E731
    theirs = lambda x: getattr(TF, f"avg_pool{d}d")(x, **settings)  # noqa: E731
    x = normal(*SHAPES[d])
    against_torch(ours, theirs, x, second="square")
    under_transforms(ours, x)
    float32_kept(ours, theirs, x)
    close(ours(x[0]), theirs(torch.tensor(x[0])))
    module = getattr(nn, f"AvgPool{d}d")(**settings)
    tmodule = getattr(tnn, f"AvgPool{d}d")(**settings)
    assert repr(module) == repr(tmodule)
    close(module(x), tmodule(torch.tensor(x)))


# =======================================================================================
# 3. adaptive average and max pooling
# =======================================================================================

ADAPTIVE = [(1, (2, 3, 7), 3), (1, (2, 3, 5), 5), (1, (1, 2, 4), 7), (2, (2, 3, 7, 5), (3, 2)),
            (2, (1, 2, 6, 9), 4), (2, (2, 2, 5, 7), (None, 3)), (3, (1, 2, 5, 4, 6), (2, 3, 4)),
            (3, (1, 1, 3, 7, 2), (2, None, 1))]


@pytest.mark.parametrize("d, shape, size", ADAPTIVE)
def test_adaptive_avg_pool_is_torchs(d, shape, size):
    ours = lambda x: getattr(F, f"adaptive_avg_pool{d}d")(x, size)  # noqa: E731
    theirs = lambda x: getattr(TF, f"adaptive_avg_pool{d}d")(x, size)  # noqa: E731
    x = normal(*shape)
    against_torch(ours, theirs, x, second="square")
    under_transforms(ours, x)
    float32_kept(ours, theirs, x)
    close(ours(x[0]), theirs(torch.tensor(x[0])))
    module, tmodule = getattr(nn, f"AdaptiveAvgPool{d}d")(size), \
        getattr(tnn, f"AdaptiveAvgPool{d}d")(size)
    assert repr(module) == repr(tmodule)


@pytest.mark.parametrize("d, shape, size", ADAPTIVE)
def test_adaptive_max_pool_and_its_indices_are_torchs(d, shape, size):
    pool, tpool = getattr(F, f"adaptive_max_pool{d}d"), getattr(TF, f"adaptive_max_pool{d}d")
    ours = lambda x: pool(x, size)  # noqa: E731
    theirs = lambda x: tpool(x, size)  # noqa: E731
    x = normal(*shape)
    against_torch(ours, theirs, x, second="square")
    under_transforms(ours, x)
    float32_kept(ours, theirs, x)
    y, indices = pool(x, size, return_indices=True)
    ty, tindices = tpool(torch.tensor(x), size, return_indices=True)
    close(y, ty)
    np.testing.assert_array_equal(indices, tindices.numpy())
    y, indices = pool(x[0], size, return_indices=True)
    np.testing.assert_array_equal(indices, tindices[0].numpy())
    indices_under_transforms(lambda x: pool(x, size, return_indices=True)[1], x)
    module, tmodule = getattr(nn, f"AdaptiveMaxPool{d}d")(size, True), \
        getattr(tnn, f"AdaptiveMaxPool{d}d")(size, True)
    assert repr(module) == repr(tmodule)
    np.testing.assert_array_equal(module(x)[1], tmodule(torch.tensor(x))[1].numpy())


# =======================================================================================
# 4. power-average pooling
# =======================================================================================

LP_POOLS = [(1, 2, 3, None, False), (1, 3, 2, 1, True), (1, 1.5, 3, 2, True),
            (2, 2, 2, None, False), (2, 3, (2, 3), (1, 2), True), (2, 1, 3, 2, False),
            (2, 1.5, 2, 1, False), (3, 2, 2, None, True), (3, 4, (2, 3, 2), 1, False)]


@pytest.mark.parametrize("d, p, kernel, stride, ceil_mode", LP_POOLS)
def test_lp_pool_values_and_derivatives_are_torchs(d, p, kernel, stride, ceil_mode):
    ours = lambda x: getattr(F, f"lp_pool{d}d")(x, p, kernel, stride, ceil_mode)  # noqa: E731
    theirs = lambda x: getattr(TF, f"lp_pool{d}d")(x, p, kernel, stride, ceil_mode)  # noqa: E731
    # positive windows (an odd p's negative window sum is nan in both, as 0 gives inf
    # derivatives), away from 0
    x = np.abs(normal(*SHAPES[d])) + 0.2
    against_torch(ours, theirs, x)
    under_transforms(ours, x, positive=True)
    float32_kept(ours, theirs, x)
    module = getattr(nn, f"LPPool{d}d")(p, kernel, stride, ceil_mode)
    tmodule = getattr(tnn, f"LPPool{d}d")(p, kernel, stride, ceil_mode)
    assert repr(module) == repr(tmodule)
    close(module(x[0]), tmodule(torch.tensor(x[0])))


@pytest.mark.parametrize("p", [2, 3, float("inf"), -float("inf")])
def test_lp_pool_signs_are_torchs(p):
    x = normal(2, 3, 8, 6)
    with np.errstate(invalid="ignore"):  # (a negative sum's odd root: nan, as torch's)
        ours = F.lp_pool2d(x, p, 2)
    theirs = TF.lp_pool2d(torch.tensor(x), p, 2).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    close(np.nan_to_num(ours), np.nan_to_num(theirs))


# =======================================================================================
# 5. unfold and fold
# =======================================================================================

FOLDS = [((2, 3, 5, 6), 2, 1, 0, 1), ((1, 2, 7, 6), (2, 3), (2, 1), (1, 2), (2, 1)),
         ((2, 1, 8, 8), 3, 2, 1, 2), ((1, 3, 4, 5), (1, 2), 1, 0, (1, 3)),
         ((2, 2, 6, 5), 3, 1, 3, 2)]


@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", FOLDS)
def test_unfold_and_fold_are_torchs(shape, kernel, dilation, padding, stride):
    settings = dict(kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
    ours = lambda x: F.unfold(x, **settings)  # noqa: E731
    theirs = lambda x: TF.unfold(x, **settings)  # noqa: E731
    x = normal(*shape)
    cols = against_torch(ours, theirs, x, second="square")
    under_transforms(ours, x)
    float32_kept(ours, theirs, x)
    close(ours(x[0]), theirs(torch.tensor(x[0])))
    size = shape[2:]
    folded = lambda c: F.fold(c, size, **settings)  # noqa: E731
    tfolded = lambda c: TF.fold(c, size, **settings)  # noqa: E731
    cols = np.asarray(cols.data if hasattr(cols, "data") else cols)
    against_torch(folded, tfolded, cols, second="square")
    under_transforms(folded, cols)
    float32_kept(folded, tfolded, cols)
    close(folded(cols[0]), tfolded(torch.tensor(cols[0])))
    c = normal(*cols.shape)  # fold is unfold's adjoint
    close(np.sum(np.asarray(folded(c)) * x), np.sum(c * np.asarray(ours(x))))
    for module, tmodule in [(nn.Unfold(**settings), tnn.Unfold(**settings)),
                            (nn.Fold(size, **settings), tnn.Fold(size, **settings))]:
        assert repr(module) == repr(tmodule)
    close(nn.Fold(size, **settings)(cols), tnn.Fold(size, **settings)(torch.tensor(cols)))


# =======================================================================================
# 6. modules, and refusals
# =======================================================================================

MODULES = [("MaxPool1d", (3,), {}), ("MaxPool2d", ((2, 3), 1, 1), dict(ceil_mode=True)),
           ("MaxPool3d", (2,), dict(dilation=2, return_indices=True)),
           ("AvgPool1d", (3, 2, 1), dict(ceil_mode=True)),
           ("AvgPool2d", (3,), dict(divisor_override=2)),
           ("AvgPool3d", ((1, 2, 3),), dict(count_include_pad=False)),
           ("AdaptiveAvgPool1d", (3,), {}), ("AdaptiveMaxPool2d", ((None, 3), True), {}),
           ("AdaptiveMaxPool3d", (2,), {}), ("LPPool1d", (2, 3), {}),
           ("LPPool2d", (1.5, (2, 3), 1, True), {}), ("LPPool3d", (3, 2), {}),
           ("MaxUnpool1d", (2,), {}), ("MaxUnpool2d", ((2, 3), 1, (0, 1)), {}),
           ("MaxUnpool3d", (2,), dict(stride=1)), ("Fold", ((4, 5), 2), {}),
           ("Unfold", ((2, 3), 2, 1, 3), {})]


@pytest.mark.parametrize("name, args, kwargs", MODULES,
                         ids=[f"{name}-{i}" for i, (name, _, _) in enumerate(MODULES)])
def test_module_reprs_are_torchs(name, args, kwargs):
    module, tmodule = getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)
    assert repr(module) == repr(tmodule)
    assert module.parameters() == [] and module.state_dict() == {}


@pytest.mark.parametrize("d", [1, 2, 3])
def test_max_pool_module_returns_indices_as_torchs(d):
    x = normal(*SHAPES[d])
    y, indices = getattr(nn, f"MaxPool{d}d")(2, return_indices=True, ceil_mode=True)(x)
    ty, tindices = getattr(tnn, f"MaxPool{d}d")(2, return_indices=True, ceil_mode=True)(
        torch.tensor(x))
    close(y, ty)
    np.testing.assert_array_equal(indices, tindices.numpy())


def _ints(f, a):
    a = a.astype(np.int64)
    return torch.tensor(a) if f.__module__.startswith("torch") else a


REFUSALS = [
    ("max_pool2d", lambda f, x: f(x, 2, padding=2), "padding"),
    ("max_pool1d", lambda f, x: f(x, 12), "kernel"),
    ("avg_pool3d", lambda f, x: f(x, 2, padding=2), "padding"),
    ("max_pool3d", lambda f, x: f(x[0, 0, 0], 2), "input of shape"),
    ("avg_pool2d", lambda f, x: f(x, 2, divisor_override=0), "divisor_override"),
    ("adaptive_max_pool2d", lambda f, x: f(x, (2, 2, 2)), "output_size"),
    ("adaptive_avg_pool1d", lambda f, x: f(x, (2, 2)), "output_size"),
    ("max_unpool2d", lambda f, x: f(x, _ints(f, np.zeros(x.shape)), 2, output_size=(12, 12)),
     "output_size"),
    ("max_unpool2d", lambda f, x: f(x, _ints(f, np.full(x.shape, 99)), 2), "indices"),
    ("unfold", lambda f, x: f(x, 8), "kernel"),
    ("unfold", lambda f, x: f(x[0, 0, 0], 2), "input of shape"),
    ("fold", lambda f, x: f(x[0], (4, 4), 2), "expected"),
    ("fold", lambda f, x: f(x[0, 0], 4, 5), "kernel")]


@pytest.mark.parametrize("name, call, match", REFUSALS,
                         ids=[f"{name}-{i}" for i, (name, _, _) in enumerate(REFUSALS)])
def test_refusals_are_torchs(name, call, match):
    x = normal(2, 3, 4, 4, 4)[:, :, 0] if "3d" not in name else normal(2, 3, 4, 4, 4)
    if name.endswith("1d"):
        x = x[..., 0]
    with pytest.raises((RuntimeError, ValueError, IndexError)):
        call(getattr(TF, name), torch.tensor(x))
    with pytest.raises(ValueError, match=match) as error:
        call(getattr(F, name), x)
    assert name in str(error.value) and "\n" not in str(error.value)


def test_the_pooling_primitives_are_in_the_table():
    names = {p.name for p in cr.rules.primitives()}
    assert {"unfold", "fold", "max_pool"} <= names


@pytest.mark.parametrize("d", [1, 2, 3])
def test_the_with_indices_forms_are_torchs(d):
    x = normal(2, 3, *(7, 6, 5)[:d])
    for name, args in ((f"max_pool{d}d_with_indices", (3, 2, 1)),
                       (f"adaptive_max_pool{d}d_with_indices", ((3, 2, 2)[:d],))):
        y, indices = getattr(F, name)(x, *args)
        ty, tindices = getattr(TF, name)(T(x, grad=False), *args)
        close(y, ty)
        np.testing.assert_array_equal(indices, tindices.numpy())
