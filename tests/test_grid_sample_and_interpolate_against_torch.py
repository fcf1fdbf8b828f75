"""F.affine_grid, F.grid_sample and interpolate's bicubic, area, nearest-exact and
antialiased modes (with F.upsample_bilinear and F.upsample_nearest) against torch 2.13 in
float64: values over modes, padding modes, align_corners, 2-d and 3-d and grids reaching
outside [-1, 1], the gradient of sum(w * y) in the input, the grid and theta, a
Hessian-vector product against torch's double backward, forward mode against reverse,
float32 kept, cr.vmap and cr.jit giving the eager numbers, and the refusals where torch
refuses. Grids are drawn from a continuous distribution, so no sample lands on a pixel
boundary, where the derivative in the grid jumps.
"""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule.nn import functional as F
from chainrule.nn.resampling import upsample_bilinear, upsample_nearest
from chainrule.nn.sampling_grids import affine_grid, grid_sample
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261210)
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


def quiet(f):
    """f with torch's warnings (align_corners=None, the deprecated names) silenced."""
    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*args)
    return call


def against_torch(ours, theirs, arrays, second=True, rtol=RTOL):
    """ours(*arrays) and theirs(*tensors): values and the gradient of sum(w * y) in every
    array to ``rtol``; with ``second``, a Hessian-vector product of sum(w * y) in all
    the arrays at once against torch's double backward, or for ``second="square"`` (a
    map linear in the arrays, whose Hessian is 0) of sum(w * y**2)."""
    tensors = [T(a) for a in arrays]
    ty = quiet(theirs)(*tensors)
    close(ours(*arrays), ty, rtol)
    w = normal(*ty.shape)
    argnums = tuple(range(len(arrays)))
    power = 2 if second == "square" else 1
    tgrads = torch.autograd.grad((ty ** power * torch.tensor(w)).sum(), tensors,
                                 create_graph=True)
    loss = lambda *a: cr.sum(ours(*a) ** power * w)  # noqa: E731
    grads = cr.grad(loss, argnums=argnums)(*arrays)
    for g, tg in zip(grads, tgrads):
        close(g, tg, rtol)
    if second:
        vs = [normal(*np.shape(a)) for a in arrays]
        tdot = sum((tg * torch.tensor(v)).sum() for tg, v in zip(tgrads, vs))
        ths = torch.autograd.grad(tdot, tensors, allow_unused=True)
        _, hvps = cr.jvp(lambda *a: cr.grad(loss, argnums=argnums)(*a), tuple(arrays),
                         tuple(vs))
        for h, th in zip(hvps, ths):
            close(h, np.zeros(np.shape(h)) if th is None else th, rtol)


def under_transforms(f, *arrays):
    """cr.jit and cr.vmap (over a leading batch of two of each array) give the eager
    numbers."""
    eager = f(*arrays)
    close(cr.jit(f)(*arrays), eager, 1e-14)
    others = [a * 0.9 + 0.05 for a in arrays]
    batched = cr.vmap(f)(*[np.stack([a, b]) for a, b in zip(arrays, others)])
    close(batched[0], eager, 1e-14)
    close(batched[1], f(*others), 1e-14)


def forward_is_reverse(f, *arrays):
    """The jvp of sum(f**2) along random directions equals the reverse gradient's dot."""
    loss = lambda *a: cr.sum(f(*a) ** 2)  # noqa: E731
    vs = tuple(normal(*np.shape(a)) for a in arrays)
    _, tangent = cr.jvp(loss, tuple(arrays), vs)
    grads = cr.grad(loss, argnums=tuple(range(len(arrays))))(*arrays)
    expected = sum(float(np.sum(np.asarray(g) * v)) for g, v in zip(grads, vs))
    np.testing.assert_allclose(float(np.asarray(tangent)), expected, rtol=1e-11)


def grid(*shape):
    """Normalised points, a good share of them outside [-1, 1]."""
    return RNG.uniform(-1.35, 1.35, shape)


# =======================================================================================
# 1. affine_grid
# =======================================================================================

@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 2, 4),
                                  (1, 2, 1, 1, 2)], ids=str)
@pytest.mark.parametrize("corners", [False, True, None])
def test_affine_grid_values_and_derivatives_are_torchs(size, corners):
    d = len(size) - 2
    ours = lambda t: affine_grid(t, size, align_corners=corners)  # noqa: E731
    theirs = lambda t: TF.affine_grid(t, size, align_corners=corners)  # noqa: E731
    theta = normal(size[0], d, d + 1)
    against_torch(ours, theirs, [theta], second="square")
    under_transforms(ours, theta)
    forward_is_reverse(ours, theta)
    y32 = ours(cr.tensor(theta.astype(np.float32)))
    assert y32.dtype == np.float32


def test_affine_grid_refuses_what_torch_refuses():
    cases = [(normal(2, 2, 3), (2, 3, 4), "expected \\(N, C, H, W\\)"),
             (normal(2, 2, 3), (2, 3, 0, 4), "expected every size positive"),
             (normal(2, 3, 4), (2, 3, 4, 5), "expected \\(2, 2, 3\\)"),
             (normal(2, 2, 3), (2, 3, 4, 5, 6), "expected \\(2, 3, 4\\)"),
             (np.ones((2, 2, 3), dtype=np.int64), (2, 3, 4, 5), "floating point")]
    for theta, size, match in cases:
        with pytest.raises((ValueError, RuntimeError, NotImplementedError)):
            TF.affine_grid(torch.tensor(theta), size, align_corners=False)
        with pytest.raises(ValueError, match=match):
            affine_grid(theta, size, align_corners=False)


# =======================================================================================
# 2. grid_sample
# =======================================================================================

SAMPLINGS = [(d, mode, padding, corners)
             for d, modes in ((2, ("bilinear", "nearest", "bicubic")),
                              (3, ("bilinear", "nearest")))
             for mode in modes
             for padding in ("zeros", "border", "reflection")
             for corners in (False, True)]


@pytest.mark.parametrize("d, mode, padding, corners", SAMPLINGS)
def test_grid_sample_values_and_derivatives_are_torchs(d, mode, padding, corners):
    kwargs = dict(mode=mode, padding_mode=padding, align_corners=corners)
    ours = lambda x, g: grid_sample(x, g, **kwargs)  # noqa: E731
    theirs = lambda x, g: TF.grid_sample(x, g, **kwargs)  # noqa: E731
    x = normal(2, 3, 4, 5) if d == 2 else normal(2, 2, 3, 4, 5)
    g = grid(2, 3, 4, 2) if d == 2 else grid(2, 2, 3, 2, 3)
    against_torch(ours, theirs, [x, g])
    forward_is_reverse(ours, x, g)


@pytest.mark.parametrize("d, mode", [(2, "bilinear"), (2, "nearest"), (2, "bicubic"),
                                     (3, "bilinear"), (3, "nearest")])
def test_grid_sample_under_jit_and_vmap_and_in_float32(d, mode):
    x = normal(2, 3, 4, 5) if d == 2 else normal(2, 3, 2, 4, 5)
    g = grid(2, 3, 2, 2) if d == 2 else grid(2, 2, 3, 2, 3)
    f = lambda x, g: grid_sample(x, g, mode, "reflection", False)  # noqa: E731
    under_transforms(f, x, g)
    x32, g32 = x.astype(np.float32), g.astype(np.float32)
    y32 = f(cr.tensor(x32), cr.tensor(g32))
    assert y32.dtype == np.float32
    close(y32, TF.grid_sample(torch.tensor(x32), torch.tensor(g32), mode, "reflection",
                              False), 1e-5)
    assert cr.grad(lambda g: cr.sum(f(x32, g) ** 2))(g32).dtype == np.float32


def test_grid_sample_default_align_corners_is_false():
    x, g = normal(1, 2, 3, 4), grid(1, 2, 5, 2)
    close(grid_sample(x, g), quiet(TF.grid_sample)(torch.tensor(x), torch.tensor(g)))
    close(grid_sample(x, g), grid_sample(x, g, align_corners=False), 0)


def test_grid_sample_of_a_one_pixel_input_and_an_identity_grid():
    x = normal(1, 2, 1, 1)
    g = grid(1, 3, 2, 2)
    for padding in ("zeros", "border", "reflection"):
        for corners in (False, True):
            against_torch(lambda x, g: grid_sample(x, g, "bilinear", padding, corners),
                          lambda x, g: TF.grid_sample(x, g, "bilinear", padding, corners),
                          [x, g])
    image = normal(2, 3, 4, 5)
    identity = affine_grid(np.tile(np.eye(2, 3), (2, 1, 1)), (2, 3, 4, 5), True)
    close(grid_sample(image, identity, align_corners=True), image)


@pytest.mark.parametrize("size", [(2, 3, 3, 4), (2, 3, 2, 3, 2)], ids=str)
def test_a_spatial_transformer_is_differentiable_in_theta(size):
    d = len(size) - 2
    x = normal(2, 3, 4, 5) if d == 2 else normal(2, 3, 3, 4, 2)
    theta = np.tile(np.eye(d, d + 1), (2, 1, 1)) + 0.2 * normal(2, d, d + 1)
    ours = lambda t: grid_sample(x, affine_grid(t, size, False), align_corners=False)  # noqa: E731
    theirs = lambda t: TF.grid_sample(T(x, False), TF.affine_grid(t, size, False),  # noqa: E731
                                      align_corners=False)
    against_torch(ours, theirs, [theta])
    forward_is_reverse(ours, theta)


def test_grid_sample_refuses_what_torch_refuses():
    x, g = normal(2, 3, 4, 5), grid(2, 3, 3, 2)
    cases = [((x, g, "cubic"), "mode 'cubic'; expected one of"),
             ((x, g, "bilinear", "wrap"), "padding_mode 'wrap'; expected one of"),
             ((x, grid(2, 3, 3, 3)), "expected \\(N, C, H, W\\) with \\(N, H', W', 2\\)"),
             ((x[0], g[0]), "input of shape \\(3, 4, 5\\)"),
             ((x, grid(1, 3, 3, 2)), "expected the same batch size N"),
             ((normal(1, 2, 3, 4, 5), grid(1, 2, 2, 2, 3), "bicubic"),
              "mode 'bicubic' of an input of shape \\(1, 2, 3, 4, 5\\)"),
             ((x.astype(np.float32), g), "expected the same floating dtype")]
    for args, match in cases:
        with pytest.raises((ValueError, RuntimeError, NotImplementedError)):
            quiet(TF.grid_sample)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a
                                    for a in args])
        with pytest.raises(ValueError, match=match):
            grid_sample(*args)


# =======================================================================================
# 3. interpolate's bicubic, area, nearest-exact and antialias; the deprecated aliases
# =======================================================================================

INTERPOLATIONS = [
    # (input shape, mode, size, scale_factor, align_corners, antialias)
    ((1, 2, 4, 5), "bicubic", (7, 3), None, False, False),
    ((1, 2, 4, 5), "bicubic", (7, 3), None, True, False),
    ((1, 2, 6, 5), "bicubic", None, (1.5, 0.6), None, False),
    ((1, 2, 6, 5), "bicubic", None, (2.3, 1.7), True, False),
    ((2, 1, 3, 4), "bicubic", (1, 1), None, True, False),
    ((2, 1, 3, 4), "bicubic", (1, 2), None, False, False),
    ((2, 3, 7), "area", 3, None, None, False),
    ((2, 3, 5), "area", 8, None, None, False),
    ((1, 2, 7, 5), "area", (3, 4), None, None, False),
    ((1, 2, 7, 5, 4), "area", None, 0.5, None, False),
    ((2, 3, 7), "nearest-exact", 3, None, None, False),
    ((2, 3, 7), "nearest-exact", None, 1.7, None, False),
    ((1, 2, 7, 5), "nearest-exact", (12, 3), None, None, False),
    ((1, 2, 3, 4, 5), "nearest-exact", (5, 2, 7), None, None, False),
    ((1, 2, 12, 9), "bilinear", (5, 4), None, False, True),
    ((1, 2, 12, 9), "bilinear", (5, 4), None, True, True),
    ((1, 2, 12, 9), "bilinear", None, (0.3, 0.45), None, True),
    ((1, 2, 5, 6), "bilinear", (9, 13), None, False, True),
    ((1, 2, 12, 9), "bicubic", (5, 4), None, False, True),
    ((1, 2, 12, 9), "bicubic", (5, 4), None, True, True),
    ((1, 2, 12, 9), "bicubic", None, (0.3, 0.45), None, True),
    ((1, 2, 5, 6), "bicubic", (9, 13), None, False, True),
    ((1, 2, 5, 6), "bicubic", (9, 3), None, True, True),
]


@pytest.mark.parametrize("shape, mode, size, scale, corners, antialias", INTERPOLATIONS)
def test_interpolate_new_modes_are_torchs(shape, mode, size, scale, corners, antialias):
    kwargs = dict(size=size, scale_factor=scale, mode=mode, align_corners=corners,
                  antialias=antialias)
    ours = lambda x: F.interpolate(x, **kwargs)  # noqa: E731
    theirs = lambda x: TF.interpolate(x, **kwargs)  # noqa: E731
    against_torch(ours, theirs, [normal(*shape)], second="square")
    under_transforms(ours, normal(*shape))
    forward_is_reverse(ours, normal(*shape))
    x32 = normal(*shape).astype(np.float32)
    y32 = ours(cr.tensor(x32))
    assert y32.dtype == np.float32
    close(y32, theirs(torch.tensor(x32)), 1e-5)


def test_bicubic_takes_torchs_float32_floor_and_recomputed_factors():
    x = normal(1, 1, 16, 21)
    for factor in (2.6, 1.85, (2.45, 0.7)):
        for recompute in (None, True):
            kwargs = dict(scale_factor=factor, mode="bicubic", align_corners=False,
                          recompute_scale_factor=recompute)
            close(F.interpolate(x, **kwargs), TF.interpolate(torch.tensor(x), **kwargs))


@pytest.mark.parametrize("size, scale", [((3, 7), None), (None, 2), (None, (1.5, 2.5))],
                         ids=["size", "factor", "factors"])
def test_upsample_bilinear_and_nearest_are_torchs(size, scale):
    x = normal(2, 3, 4, 5)
    against_torch(lambda x: upsample_bilinear(x, size, scale),
                  lambda x: TF.upsample_bilinear(x, size, scale), [x], second="square")
    against_torch(lambda x: upsample_nearest(x, size, scale),
                  lambda x: TF.upsample_nearest(x, size, scale), [x], second="square")


@pytest.mark.parametrize("kwargs", [dict(scale_factor=2, mode="bicubic"),
                                    dict(size=(3, 2), mode="area"),
                                    dict(scale_factor=1.5, mode="nearest-exact"),
                                    dict(size=7, mode="bicubic", align_corners=True)],
                         ids=["bicubic", "area", "nearest-exact", "bicubic-corners"])
def test_upsample_module_takes_the_new_modes(kwargs):
    m, tm = cr.nn.Upsample(**kwargs), torch.nn.Upsample(**kwargs)
    assert repr(m) == repr(tm)
    against_torch(m, tm, [normal(2, 3, 4, 5)], second="square")


def test_interpolate_refuses_the_new_modes_where_torch_refuses():
    x = normal(1, 2, 4, 4)
    cases = [(normal(1, 2, 4), dict(size=3, mode="bicubic"), "expected a 4-d input"),
             (x, dict(size=3, mode="area", align_corners=True),
              "align_corners can only be set"),
             (x, dict(size=3, mode="nearest-exact", align_corners=False),
              "align_corners can only be set"),
             (x, dict(size=3, mode="nearest", antialias=True),
              "antialias=True with mode 'nearest'"),
             (normal(1, 2, 4, 4, 4), dict(size=3, mode="trilinear", antialias=True),
              "antialias=True with mode 'trilinear'"),
             (x, dict(size=3, mode="cubic"), "mode 'cubic' is not one of")]
    for array, kwargs, match in cases:
        with pytest.raises((ValueError, NotImplementedError)):
            TF.interpolate(torch.tensor(array), **kwargs)
        with pytest.raises(ValueError, match=match):
            F.interpolate(array, **kwargs)
