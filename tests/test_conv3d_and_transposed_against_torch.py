"""conv3d, the transposed convolutions and the convolution modules' padding modes and
reprs against torch 2.13 in float64:

1. conv3d and conv_transpose1d/2d/3d over a grid of stride, padding, output_padding,
   dilation, groups, bias and unbatched input: values, the gradient of sum(w * y) in
   the input, the weight and the bias, and a Hessian-vector product of sum(w * y**2)
   against torch's double backward; forward mode (cr.jvp) against the reverse;
   float32 kept; cr.vmap and cr.jit giving the eager numbers;
2. the modules Conv1d/2d/3d (every padding_mode) and ConvTranspose1d/2d/3d: repr,
   parameter names and shapes, a torch state_dict loaded giving torch's values and
   gradients, torch's initial bounds, the output_size argument;
3. the refusals where torch refuses, one line naming the operation.
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

RNG = per_test_generator(20261207)
RTOL = 1e-12
# torch notes that its padding="same" with an even kernel copies the input: not ours
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def close(actual, expected, rtol=RTOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)


def normal(*shape):
    return RNG.standard_normal(shape)


def T(a, grad=True):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=grad)


def against_torch(ours, theirs, arrays):
    """ours(*arrays) and theirs(*tensors): values, the gradient of sum(w * y) in every
    array, and a Hessian-vector product of sum(w * y**2) in the first two (the input
    and the weight together, since y is bilinear in them), all to RTOL."""
    tensors = [T(a) for a in arrays]
    ty = theirs(*tensors)
    y = ours(*arrays)
    close(y, ty)
    w = normal(*ty.shape)
    tgrads = torch.autograd.grad((ty * torch.tensor(w)).sum(), tensors, retain_graph=True)
    grads = cr.grad(lambda *a: cr.sum(ours(*a) * w), argnums=tuple(range(len(arrays))))(
        *arrays)
    for g, tg in zip(grads, tgrads):
        close(g, tg)
    # Hessian of sum(w * y**2) in (x, weight) times (vx, vw)
    vs = [normal(*np.shape(a)) for a in arrays[:2]]
    tg = torch.autograd.grad((ty * ty * torch.tensor(w)).sum(), tensors[:2],
                             create_graph=True)
    th = torch.autograd.grad(sum((g * torch.tensor(v)).sum() for g, v in zip(tg, vs)),
                             tensors[:2])
    rest = arrays[2:]

    def square(x, k):
        return cr.sum(ours(x, k, *rest) ** 2 * w)

    def directional(x, k):  # <grad square, v>, whose gradient is the product
        gx, gk = cr.grad(square, argnums=(0, 1))(x, k)
        return cr.sum(gx * vs[0]) + cr.sum(gk * vs[1])

    for h, t in zip(cr.grad(directional, argnums=(0, 1))(*arrays[:2]), th):
        close(h, t)
    return y


def forward_mode_is_the_reverse(f, arrays):
    """cr.jvp's tangent along random directions, read against cr.grad: <u, J v> both
    ways."""
    vs = [normal(*np.shape(a)) for a in arrays]
    y, ty = cr.jvp(f, tuple(arrays), tuple(vs))
    u = normal(*np.shape(y))
    grads = cr.grad(lambda *a: cr.sum(f(*a) * u), argnums=tuple(range(len(arrays))))(
        *arrays)
    reverse = sum(float(np.sum(np.asarray(g) * v)) for g, v in zip(grads, vs))
    assert np.isclose(float(np.sum(np.asarray(ty) * u)), reverse, rtol=1e-11, atol=1e-11)


def under_transforms(f, *arrays):
    """cr.jit and cr.vmap (over a leading batch of two of every operand) give the eager
    numbers."""
    eager = f(*arrays)
    close(cr.jit(f)(*arrays), eager, 1e-14)
    others = [normal(*np.shape(a)) for a in arrays]
    batched = cr.vmap(f)(*[np.stack([a, b]) for a, b in zip(arrays, others)])
    close(batched[0], eager, 1e-14)
    close(batched[1], f(*others), 1e-14)


# =======================================================================================
# 1. The functions
# =======================================================================================

# (input shape, weight shape, settings, bias)
CONV3DS = [
    ((2, 3, 4, 5, 4), (4, 3, 2, 3, 2), {}, True),
    ((1, 4, 5, 6, 5), (6, 2, 3, 2, 3), dict(stride=(2, 1, 2), padding=(1, 0, 2),
                                          dilation=(1, 2, 1), groups=2), True),
    ((2, 2, 4, 4, 5), (3, 2, 3, 3, 2), dict(padding="same"), False),
    ((2, 2, 5, 5, 5), (2, 2, 3, 3, 3), dict(stride=2, padding="valid"), True),
    ((3, 4, 4, 5), (2, 3, 2, 2, 2), dict(padding=1), True),                     # unbatched
    ((1, 3, 3, 4, 3), (3, 1, 2, 2, 2), dict(groups=3, dilation=2, padding=1), False),
]
CONV3D_IDS = [f"case{i}" for i in range(len(CONV3DS))]


def _operands(xs, ws, bias, out_channels):
    return [normal(*xs), normal(*ws)] + ([normal(out_channels)] if bias else [])


@pytest.mark.parametrize("xs, ws, s, bias", CONV3DS, ids=CONV3D_IDS)
def test_conv3d_values_and_derivatives_are_torchs(xs, ws, s, bias):
    arrays = _operands(xs, ws, bias, ws[0])
    ours = lambda *a: F.conv3d(*a, **s)  # noqa: E731
    theirs = lambda *a: TF.conv3d(*a, **s)  # noqa: E731
    against_torch(ours, theirs, arrays)
    forward_mode_is_the_reverse(ours, arrays)


# (input shape, weight shape (C_in, C_out / groups, *kernel), settings, bias)
TRANSPOSED = [
    ((2, 3, 5), (3, 4, 3), {}, True),
    ((2, 4, 6), (4, 3, 4), dict(stride=2, padding=1, output_padding=1, groups=2), True),
    ((1, 2, 5), (2, 2, 3), dict(stride=3, padding=2, output_padding=2, dilation=2), False),
    ((3, 7), (3, 2, 2), dict(stride=2, output_padding=1), True),                # unbatched
    # an output_padding of the stride or more, below the dilation
    ((1, 2, 4), (2, 1, 3), dict(stride=1, padding=1, output_padding=2, dilation=3), True),
    ((1, 2, 4), (2, 1, 3), dict(stride=2, padding=0, output_padding=2, dilation=3), False),
    ((2, 2, 3, 4), (2, 3, 3, 3), {}, True),
    ((1, 4, 4, 3), (4, 1, 3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                      groups=2), True),
    ((2, 2, 4, 5), (2, 3, 2, 3), dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2)), False),
    ((2, 3, 3), (2, 2, 2, 2), dict(stride=2, padding=1, output_padding=1), True),  # unbatched
    ((1, 6, 3, 3), (6, 1, 3, 3), dict(stride=2, groups=6), True),                # depthwise
    ((1, 2, 3, 3, 3), (2, 2, 2, 2, 2), dict(stride=2, padding=1, output_padding=1), True),
    ((2, 4, 2, 3, 2), (4, 1, 3, 2, 2), dict(stride=(1, 2, 2), padding=(1, 0, 1),
                                           dilation=(2, 1, 1), groups=2), False),
    ((2, 3, 2, 2), (2, 2, 2, 2, 2), dict(stride=3, output_padding=(0, 1, 2)), True),
]
TRANSPOSED_IDS = [f"{len(ws) - 2}d-case{i}" for i, (xs, ws, s, b) in enumerate(TRANSPOSED)]
FUNCTIONS = {1: (F.conv_transpose1d, TF.conv_transpose1d),
             2: (F.conv_transpose2d, TF.conv_transpose2d),
             3: (F.conv_transpose3d, TF.conv_transpose3d)}


@pytest.mark.parametrize("xs, ws, s, bias", TRANSPOSED, ids=TRANSPOSED_IDS)
def test_conv_transpose_values_and_derivatives_are_torchs(xs, ws, s, bias):
    ours_f, theirs_f = FUNCTIONS[len(ws) - 2]
    arrays = _operands(xs, ws, bias, ws[1] * s.get("groups", 1))
    ours = lambda *a: ours_f(*a, **s)  # noqa: E731
    theirs = lambda *a: theirs_f(*a, **s)  # noqa: E731
    against_torch(ours, theirs, arrays)
    forward_mode_is_the_reverse(ours, arrays)


@pytest.mark.parametrize("xs, ws, s, bias", TRANSPOSED[1::3], ids=TRANSPOSED_IDS[1::3])
def test_conv_transpose_under_jit_and_vmap_gives_the_eager_numbers(xs, ws, s, bias):
    ours_f, _ = FUNCTIONS[len(ws) - 2]
    arrays = _operands(xs, ws, bias, ws[1] * s.get("groups", 1))
    under_transforms(lambda *a: ours_f(*a, **s), *arrays)


@pytest.mark.parametrize("xs, ws, s, bias", CONV3DS[::2], ids=CONV3D_IDS[::2])
def test_conv3d_under_jit_and_vmap_gives_the_eager_numbers(xs, ws, s, bias):
    arrays = _operands(xs, ws, bias, ws[0])
    under_transforms(lambda *a: F.conv3d(*a, **s), *arrays)


def test_conv_transpose_is_conv_s_gradient_in_its_input():
    x, w = normal(2, 4, 9, 8), normal(4, 2, 3, 2)
    s = dict(stride=(2, 3), padding=(1, 1), dilation=(1, 2), groups=2)
    g = normal(*F.conv2d(x, w, **s).shape)
    dx = cr.grad(lambda x: cr.sum(F.conv2d(x, w, **s) * g))(x)
    # the rows the strided convolution never read come back as output_padding
    close(F.conv_transpose2d(g, w, output_padding=(0, 1), **s), dx)


@pytest.mark.parametrize("name", ["conv3d", "conv_transpose1d", "conv_transpose2d",
                                  "conv_transpose3d"])
def test_float32_stays_float32(name):
    d = 3 if name == "conv3d" else int(name[-2])
    x = normal(2, 2, *(4,) * d).astype(np.float32)
    w = normal(2, 2, *(2,) * d).astype(np.float32)
    b = normal(2).astype(np.float32)
    f = getattr(F, name)
    y = f(x, w, b, stride=2)
    assert y.dtype == np.float32
    assert cr.grad(lambda x: cr.sum(f(x, w, b, stride=2) ** 2))(x).dtype == np.float32
    assert cr.jit(lambda x: f(x, w, b, stride=2))(x).dtype == np.float32
    close(y, getattr(TF, name)(*(torch.tensor(a) for a in (x, w, b)), stride=2), 1e-5)


# =======================================================================================
# 2. The modules
# =======================================================================================

def _load_and_compare(module, tmodule, x, **call):
    """module with tmodule's state_dict loaded: repr, names, values and gradients."""
    assert repr(module) == repr(tmodule)
    assert [(n, p.shape) for n, p in module.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tmodule.named_parameters()]
    assert sorted(module.state_dict()) == sorted(tmodule.state_dict())
    module.load_torch_state_dict(tmodule.state_dict())
    tx = T(x)
    ty = tmodule(tx, **call)
    cx = cr.tensor(x, requires_grad=True)
    y = module(cx, **call)
    close(y, ty)
    w = normal(*ty.shape)
    (ty * torch.tensor(w)).sum().backward()
    (y * w).sum().backward()
    close(cx.grad, tx.grad)
    for p, tp in zip(module.parameters(), tmodule.parameters()):
        close(p.grad, tp.grad)


# (d, in, out, kernel, settings, input shape)
CONV_MODULES = [
    (1, 2, 4, 3, {}, (2, 2, 7)),
    (1, 2, 4, 3, dict(padding=2, padding_mode="reflect", stride=2), (2, 2, 7)),
    (1, 4, 2, 2, dict(padding="same", padding_mode="circular", groups=2, dilation=3,
                      bias=False), (4, 6)),
    (2, 1, 8, 3, {}, (2, 1, 6, 6)),
    (2, 2, 4, (3, 2), dict(padding=(1, 2), padding_mode="replicate", stride=(2, 1)),
     (2, 2, 5, 6)),
    (2, 2, 2, 3, dict(padding="same", padding_mode="reflect", dilation=(1, 2)), (1, 2, 6, 7)),
    (2, 3, 3, 3, dict(padding="valid", padding_mode="circular", groups=3), (3, 5, 5)),
    (3, 2, 4, 2, dict(padding=1, padding_mode="circular", stride=(1, 2, 1)), (1, 2, 3, 4, 3)),
    (3, 2, 2, (2, 3, 2), dict(padding=(1, 1, 0), padding_mode="reflect", bias=False),
     (2, 2, 3, 4, 3)),
    (3, 2, 4, 3, dict(padding="same", padding_mode="replicate", groups=2), (2, 4, 3, 5)),
    (3, 2, 2, 3, dict(padding=1, dilation=2, padding_mode="zeros"), (1, 2, 5, 5, 5)),
]
CONV_MODULE_IDS = [f"Conv{m[0]}d-case{i}" for i, m in enumerate(CONV_MODULES)]


@pytest.mark.parametrize("d, cin, cout, k, s, xs", CONV_MODULES, ids=CONV_MODULE_IDS)
def test_conv_modules_and_padding_modes_are_torchs(d, cin, cout, k, s, xs):
    torch.manual_seed(int(RNG.integers(2 ** 31)))
    name = f"Conv{d}d"
    tmodule = getattr(tnn, name)(cin, cout, k, **s).double()
    _load_and_compare(getattr(nn, name)(cin, cout, k, rng=0, **s), tmodule, normal(*xs))


TRANSPOSED_MODULES = [
    (1, 2, 4, 3, {}, (2, 2, 5)),
    (1, 4, 2, 4, dict(stride=2, padding=1, output_padding=1, groups=2, bias=False), (4, 5)),
    (2, 2, 3, (2, 3), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2)), (2, 2, 3, 4)),
    (2, 4, 4, 3, dict(stride=2, padding=1, output_padding=1, groups=4), (1, 4, 3, 3)),
    (3, 2, 2, 2, dict(stride=2), (1, 2, 2, 3, 2)),
    (3, 2, 3, 3, dict(stride=(1, 2, 2), padding=1, output_padding=(0, 1, 0), bias=False),
     (2, 2, 3, 3)),
]
TRANSPOSED_MODULE_IDS = [f"ConvTranspose{m[0]}d-case{i}"
                         for i, m in enumerate(TRANSPOSED_MODULES)]


@pytest.mark.parametrize("d, cin, cout, k, s, xs", TRANSPOSED_MODULES,
                         ids=TRANSPOSED_MODULE_IDS)
def test_conv_transpose_modules_are_torchs(d, cin, cout, k, s, xs):
    torch.manual_seed(int(RNG.integers(2 ** 31)))
    name = f"ConvTranspose{d}d"
    tmodule = getattr(tnn, name)(cin, cout, k, **s).double()
    _load_and_compare(getattr(nn, name)(cin, cout, k, rng=0, **s), tmodule, normal(*xs))


@pytest.mark.parametrize("output_size", [(12, 12), (1, 4, 11, 12), (4, 11, 11)],
                         ids=["spatial", "whole", "unbatched-whole"])
def test_conv_transpose_output_size_picks_the_output_padding_as_torch(output_size):
    torch.manual_seed(int(RNG.integers(2 ** 31)))
    tmodule = tnn.ConvTranspose2d(4, 4, 3, stride=2, padding=1).double()
    module = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, rng=0)
    shape = (4, 6, 6) if len(output_size) == 3 else (1, 4, 6, 6)
    _load_and_compare(module, tmodule, normal(*shape), output_size=output_size)


@pytest.mark.parametrize("output_size", [(10, 12), (12, 13), (12,), (1, 1, 12, 12, 1)],
                         ids=["too-small", "too-large", "too-few", "too-many"])
def test_conv_transpose_output_size_out_of_range_is_refused_as_torch(output_size):
    x = normal(1, 4, 6, 6)
    with pytest.raises(ValueError):
        tnn.ConvTranspose2d(4, 4, 3, stride=2, padding=1)(torch.tensor(x).float(),
                                                          output_size=output_size)
    with pytest.raises(ValueError) as info:
        nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, rng=0)(x, output_size=output_size)
    assert "ConvTranspose2d" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("name, args", [("Conv3d", (4, 6, (2, 3, 2))),
                                        ("ConvTranspose1d", (4, 6, 3)),
                                        ("ConvTranspose2d", (6, 4, (3, 2), 1, 0, 0, 2)),
                                        ("ConvTranspose3d", (2, 3, 2))])
def test_initial_weights_are_within_torchs_bound(name, args):
    module, tmodule = getattr(nn, name)(*args, rng=0), getattr(tnn, name)(*args)
    assert module.weight.shape == tuple(tmodule.weight.shape)
    weight = module.weight.data
    fan_in = weight.shape[1] * np.prod(weight.shape[2:])
    bound = 1 / np.sqrt(fan_in)
    for p in (weight, module.bias.data):
        assert np.abs(p).max() <= bound
        assert np.abs(p).max() > 0.5 * bound
    # torch's own bound: its weights and biases stay inside the same interval
    assert float(tmodule.weight.detach().abs().max()) <= bound + 1e-7
    assert float(tmodule.bias.detach().abs().max()) <= bound + 1e-7


def test_modules_float32_and_unbatched():
    layer = nn.ConvTranspose2d(2, 3, 2, stride=2, dtype=np.float32, rng=0)
    assert layer(normal(2, 3, 3).astype(np.float32)).dtype == np.float32
    conv = nn.Conv3d(2, 3, 2, padding=1, padding_mode="reflect", dtype=np.float32, rng=0)
    assert conv(normal(2, 3, 3, 3).astype(np.float32)).shape == (3, 4, 4, 4)


# =======================================================================================
# 3. Refusals
# =======================================================================================

REFUSED = [
    ("output_padding at the stride and the dilation",
     lambda f: f["conv_transpose1d"](np.ones((1, 2, 4)), np.ones((2, 2, 3)), stride=2,
                                     output_padding=2),
     ["conv_transpose1d", "output_padding (2,)", "stride (2,)", "dilation (1,)"]),
    ("output_padding past the dilation",
     lambda f: f["conv_transpose2d"](np.ones((1, 2, 4, 4)), np.ones((2, 2, 3, 3)),
                                     output_padding=(0, 2), dilation=2),
     ["conv_transpose2d", "output_padding (0, 2)"]),
    ("channels",
     lambda f: f["conv_transpose2d"](np.ones((1, 3, 4, 4)), np.ones((2, 2, 3, 3))),
     ["conv_transpose2d", "(1, 3, 4, 4)", "(2, 2, 3, 3)", "3 channels"]),
    ("groups",
     lambda f: f["conv_transpose1d"](np.ones((1, 3, 4)), np.ones((3, 2, 3)), groups=2),
     ["conv_transpose1d", "groups=2"]),
    ("empty output",
     lambda f: f["conv_transpose1d"](np.ones((1, 2, 1)), np.ones((2, 2, 1)), padding=1),
     ["conv_transpose1d", "(1, 2, 1)", "(-1,)"]),
    ("bias",
     lambda f: f["conv_transpose3d"](np.ones((1, 2, 2, 2, 2)), np.ones((2, 2, 1, 1, 1)),
                                     np.ones(3)),
     ["conv_transpose3d", "bias of shape (3,)"]),
    ("rank",
     lambda f: f["conv3d"](np.ones((2, 4, 4)), np.ones((2, 2, 1, 1, 1))),
     ["conv3d", "(2, 4, 4)", "(N, C, D, H, W)"]),
    ("conv3d channels",
     lambda f: f["conv3d"](np.ones((1, 3, 4, 4, 4)), np.ones((2, 2, 1, 1, 1))),
     ["conv3d", "3 channels"]),
]


@pytest.mark.parametrize("call, words", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_what_torch_refuses_is_a_one_line_error_naming_the_operation(call, words):
    theirs = {name: lambda *a, name=name, **k: getattr(TF, name)(
        *(torch.tensor(v) for v in a), **k) for name in FUNCTIONS_BY_NAME}
    with pytest.raises((RuntimeError, ValueError)):
        call(theirs)
    with pytest.raises(ValueError) as info:
        call(FUNCTIONS_BY_NAME)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


FUNCTIONS_BY_NAME = {name: getattr(F, name) for name in
                     ("conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")}

MODULES_REFUSED = [
    ("padding_mode", lambda lib: lib.Conv2d(2, 2, 3, padding_mode="mirror")),
    ("transposed padding_mode", lambda lib: lib.ConvTranspose2d(2, 2, 3,
                                                                padding_mode="reflect")),
    ("same with stride", lambda lib: lib.Conv3d(2, 2, 3, stride=2, padding="same")),
    ("padding string", lambda lib: lib.Conv1d(2, 2, 3, padding="full")),
    ("groups", lambda lib: lib.ConvTranspose1d(3, 4, 3, groups=2)),
    ("groups zero", lambda lib: lib.Conv3d(2, 2, 3, groups=0)),
]


@pytest.mark.parametrize("build", [r[1] for r in MODULES_REFUSED],
                         ids=[r[0] for r in MODULES_REFUSED])
def test_modules_refuse_what_torch_refuses(build):
    with pytest.raises(ValueError):
        build(tnn)
    with pytest.raises(ValueError) as info:
        build(nn)
    assert "\n" not in str(info.value)


def test_conv_transpose_refuses_a_padding_string():
    with pytest.raises(ValueError, match="ConvTranspose2d: padding must be"):
        nn.ConvTranspose2d(2, 2, 3, padding="same")
    with pytest.raises(ValueError, match="conv_transpose2d: padding must be"):
        F.conv_transpose2d(np.ones((1, 2, 3, 3)), np.ones((2, 2, 3, 3)), padding="same")


@pytest.mark.parametrize("build, shape, call", [
    (lambda: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect", rng=0), (2, 2, 5, 4), {}),
    (lambda: nn.Conv3d(2, 2, 2, padding="same", padding_mode="circular", rng=0),
     (2, 3, 3, 4), {}),
    (lambda: nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, groups=2, rng=0),
     (1, 2, 3, 4), dict(output_size=(6, 8))),
    (lambda: nn.ConvTranspose1d(2, 2, 2, stride=3, output_padding=1, rng=0), (2, 5), {}),
], ids=["Conv2d-reflect", "Conv3d-circular-unbatched", "ConvTranspose2d-output_size",
        "ConvTranspose1d-unbatched"])
def test_modules_under_jit_and_vmap_give_the_eager_numbers(build, shape, call):
    module = build()
    f = lambda x: module(x, **call)  # noqa: E731
    x = normal(*shape)
    eager = f(x)
    close(cr.jit(f)(x), eager, 1e-14)
    xs = np.stack([x, normal(*shape)])
    batched = cr.vmap(f)(xs)
    close(batched[0], eager, 1e-14)
    close(batched[1], f(xs[1]), 1e-14)
