"""Convolution, pooling and batch normalisation, against PyTorch in float64 (and JAX's
``conv_general_dilated`` for Hessians):

1. conv1d/conv2d with stride, padding (ints, pairs, "same", "valid"), dilation, groups:
   values, gradients in x, weight and bias, second order (torch.autograd.grad with
   create_graph), forward mode (torch.func.jvp), Jacobians both ways, cr.hessian
   against jax.hessian, third order against central differences;
2. max_pool2d, avg_pool2d (count_include_pad both ways), adaptive_avg_pool2d: the same;
   ties in a max-pool window share the gradient;
3. batch_norm and BatchNorm1d/2d in training and eval, running statistics, state_dict,
   a PyTorch model's weights and buffers loaded as they are;
4. cr.jit: a traced and replayed training step gives the eager numbers, BatchNorm's
   running statistics included;
5. errors: one line naming the operation, the shapes and what was expected;
6. the CNN recipe trains on the bundled MNIST subset.
"""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F

TOL = 1e-10
# PyTorch notes that its padding="same" with an even kernel copies the input: not ours
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def normal(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def T(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=True)


# (input shape, weight shape, settings): 1-d and 2-d, every setting, odd combinations
CONVS = [
    ((2, 3, 9), (4, 3, 3), {}),
    ((2, 4, 11), (6, 2, 3), dict(stride=2, padding=2, dilation=2, groups=2)),
    ((1, 2, 8), (2, 2, 4), dict(padding="same")),
    ((2, 3, 7, 8), (4, 3, 3, 3), {}),
    ((2, 3, 7, 8), (5, 3, 3, 2), dict(stride=2, padding=1)),
    ((2, 4, 9, 8), (6, 2, 3, 2), dict(stride=(2, 3), padding=(1, 2), dilation=(2, 1),
                                      groups=2)),
    ((1, 4, 10, 10), (4, 4, 4, 3), dict(padding="same", dilation=(1, 2))),
    ((2, 3, 6, 6), (3, 1, 3, 3), dict(stride=3, groups=3)),              # depthwise
    ((2, 2, 7, 7), (3, 2, 2, 2), dict(stride=3, padding="valid")),       # rows unreached
]
IDS = [f"{len(x) - 2}d-{'-'.join(f'{k}{v}' for k, v in s.items()) or 'plain'}"
       for x, w, s in CONVS]


def torch_conv(x, w, b=None, **s):
    return (TF.conv1d if x.ndim == 3 else TF.conv2d)(x, w, b, **s)


def cr_conv(x, w, b=None, **s):
    return (F.conv1d if np.ndim(x) == 3 or getattr(x, "ndim", 0) == 3 else F.conv2d)(
        x, w, b, **s)


# =======================================================================================
# 1. Convolution
# =======================================================================================

@pytest.mark.parametrize("xs, ws, s", CONVS, ids=IDS)
def test_conv_values_and_gradients_match_torch(xs, ws, s):
    x, w, b = normal(*xs), normal(*ws, seed=1), normal(ws[0], seed=2)
    tx, tw, tb = T(x), T(w), T(b)
    ty = torch_conv(tx, tw, tb, **s)
    g = normal(*ty.shape, seed=3)
    expected = torch.autograd.grad(ty, (tx, tw, tb), torch.tensor(g))
    cx, cw, cb = (cr.tensor(a, requires_grad=True) for a in (x, w, b))
    y = cr_conv(cx, cw, cb, **s)
    close(y, ty)
    (y * g).sum().backward()
    for got, want in zip((cx.grad, cw.grad, cb.grad), expected):
        close(got, want)


@pytest.mark.parametrize("xs, ws, s", CONVS, ids=IDS)
def test_conv_second_order_matches_torch(xs, ws, s):
    """Hessian-vector products of a nonlinear loss in (x, w): through conv's VJP, the
    VJPs of its two adjoint operations."""
    x, w, v, u = normal(*xs), normal(*ws, seed=1), normal(*xs, seed=4), normal(*ws, seed=5)
    tx, tw = T(x), T(w)
    c = normal(*torch_conv(tx, tw, **s).shape, seed=6)

    def loss_torch(x, w):
        return (torch.tanh(torch_conv(x, w, **s)) * torch.tensor(c)).sum()

    gx, gw = torch.autograd.grad(loss_torch(tx, tw), (tx, tw), create_graph=True)
    hx, hw = torch.autograd.grad((gx * torch.tensor(v)).sum() + (gw * torch.tensor(u)).sum(),
                                 (tx, tw))

    def loss(x, w):
        return cr.sum(cr.tanh(cr_conv(x, w, **s)) * c)

    def directional(x, w):
        dx, dw = cr.grad(loss, argnums=(0, 1))(x, w)
        return cr.sum(dx * v) + cr.sum(dw * u)

    ex, ew = cr.grad(directional, argnums=(0, 1))(x, w)
    close(ex, hx)
    close(ew, hw)


@pytest.mark.parametrize("xs, ws, s", CONVS[::2], ids=IDS[::2])
def test_conv_forward_mode_matches_torch(xs, ws, s):
    x, w, dx, dw = normal(*xs), normal(*ws, seed=1), normal(*xs, seed=2), normal(*ws, seed=3)
    _, expected = torch.func.jvp(lambda x, w: torch_conv(x, w, **s),
                                 (torch.tensor(x), torch.tensor(w)),
                                 (torch.tensor(dx), torch.tensor(dw)))
    y, tangent = cr.jvp(lambda x, w: cr_conv(x, w, **s), (x, w), (dx, dw))
    close(tangent, expected)
    # second order in forward mode: the JVP of the gradient
    c = normal(*np.shape(y), seed=4)
    grad_x = cr.grad(lambda x, w: cr.sum(cr.tanh(cr_conv(x, w, **s)) * c))
    _, hvp = cr.jvp(lambda x: grad_x(x, w), (x,), (dx,))
    tx = T(x)
    gx, = torch.autograd.grad((torch.tanh(torch_conv(tx, torch.tensor(w), **s))
                               * torch.tensor(c)).sum(), tx, create_graph=True)
    hx, = torch.autograd.grad((gx * torch.tensor(dx)).sum(), tx)
    close(hvp, hx)


def test_conv_jacobians_both_ways_match_torch():
    """jacrev and jacfwd push a batch of cotangents or tangents through the rules at
    once: the leading axes every rule must carry."""
    s = dict(stride=2, padding=1, dilation=(1, 2), groups=2)
    x, w = normal(1, 2, 5, 6), normal(4, 1, 2, 2, seed=1)
    want_x, want_w = torch.autograd.functional.jacobian(
        lambda x, w: TF.conv2d(x, w, **s), (torch.tensor(x), torch.tensor(w)))
    for jac in (cr.jacrev, cr.jacfwd):
        got_x, got_w = jac(lambda x, w: F.conv2d(x, w, **s), argnums=(0, 1))(x, w)
        close(got_x, want_x)
        close(got_w, want_w)


def test_conv_hessian_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    x, w = normal(1, 2, 4, 5), normal(2, 1, 2, 3, seed=1)
    c = normal(1, 2, 2, 3, seed=2)

    def loss_jax(x, w):
        y = jax.lax.conv_general_dilated(x, w, window_strides=(1, 2), padding=[(0, 0), (1, 1)],
                                         rhs_dilation=(2, 1), feature_group_count=2)
        return jnp.sum(jnp.sin(y) * c)

    def loss(x, w):
        y = F.conv2d(x, w, stride=(1, 2), padding=(0, 1), dilation=(2, 1), groups=2)
        return cr.sum(cr.sin(y) * c)

    # padding=(0, 1): no rows and one column on each side; JAX names both sides
    for argnum in (0, 1):
        want = jax.hessian(loss_jax, argnums=argnum)(jnp.asarray(x), jnp.asarray(w))
        got = cr.hessian(loss, argnums=argnum)(x, w)
        close(got, np.asarray(want))
    mixed = jax.jacfwd(jax.grad(loss_jax, argnums=0), argnums=1)(jnp.asarray(x),
                                                               jnp.asarray(w))
    close(cr.jacfwd(cr.grad(loss, argnums=0), argnums=1)(x, w), np.asarray(mixed))


def test_conv_third_order_matches_central_differences():
    s = dict(stride=2, padding=1)
    x, w = normal(1, 1, 5, 5), normal(2, 1, 3, 3, seed=1)
    v = normal(1, 1, 5, 5, seed=2)

    def loss(x):
        return cr.sum(cr.tanh(F.conv2d(x, w, **s)) ** 2)

    def second(x):  # v' H(x) v
        return cr.sum(cr.grad(lambda x: cr.sum(cr.grad(loss)(x) * v))(x) * v)

    third = cr.grad(second)(x)
    h = 1e-4
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        numeric[i] = (float(second(x + e)) - float(second(x - e))) / (2 * h)
    np.testing.assert_allclose(third, numeric, rtol=1e-5, atol=1e-6)


def test_conv_inside_grad_and_hessian_of_a_scalar_function():
    x, w = normal(1, 1, 4, 4), normal(1, 1, 2, 2, seed=1)
    hess = cr.hessian(lambda w: cr.sum(F.conv2d(x, w) ** 2))(w)
    # sum(conv(x, w)**2) is a quadratic form in w: its Hessian is 2 X^T X
    cols = np.lib.stride_tricks.sliding_window_view(x[0, 0], (2, 2)).reshape(-1, 4)
    close(hess.reshape(4, 4), 2 * cols.T @ cols)


def test_float32_is_kept_and_float64_is_the_default():
    x32, w32 = normal(2, 1, 6, 6).astype(np.float32), normal(3, 1, 3, 3).astype(np.float32)
    x = cr.tensor(x32, requires_grad=True)
    w = cr.tensor(w32, requires_grad=True)
    y = F.max_pool2d(F.conv2d(x, w, padding=1), 2)
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32
    assert nn.Conv2d(1, 2, 3, rng=0).weight.dtype == np.float64
    assert nn.Conv2d(1, 2, 3, rng=0, dtype=np.float32)(cr.tensor(x32)).dtype == np.float32


def test_unbatched_input_as_torch():
    x, w = normal(3, 6, 6), normal(2, 3, 3, 3, seed=1)
    close(F.conv2d(x, w, padding=1), TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1))
    close(F.max_pool2d(x, 2), TF.max_pool2d(torch.tensor(x), 2))


# =======================================================================================
# 2. Pooling
# =======================================================================================

POOLS = [
    ("max", dict(kernel_size=2)),
    ("max", dict(kernel_size=3, stride=2, padding=1)),
    ("max", dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), dilation=(2, 1))),
    ("avg", dict(kernel_size=2)),
    ("avg", dict(kernel_size=3, stride=2, padding=1)),
    ("avg", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg", dict(kernel_size=(2, 3), stride=1, padding=(1, 0), count_include_pad=False)),
    ("adaptive", dict(output_size=(3, 2))),
    ("adaptive", dict(output_size=1)),
    ("adaptive", dict(output_size=(4, None))),
]
POOL_IDS = [f"{kind}-{'-'.join(f'{k}{v}' for k, v in s.items())}" for kind, s in POOLS]


def pooled(kind, lib, x, s):
    if lib == "torch":
        fn = {"max": TF.max_pool2d, "avg": TF.avg_pool2d,
              "adaptive": TF.adaptive_avg_pool2d}[kind]
    else:
        fn = {"max": F.max_pool2d, "avg": F.avg_pool2d,
              "adaptive": F.adaptive_avg_pool2d}[kind]
    return fn(x, **s)


@pytest.mark.parametrize("kind, s", POOLS, ids=POOL_IDS)
def test_pool_values_gradients_and_second_order_match_torch(kind, s):
    x = normal(2, 3, 7, 9)  # no ties: PyTorch gives a tie's gradient to one entry
    tx = T(x)
    ty = pooled(kind, "torch", tx, s)
    close(pooled(kind, "cr", x, s), ty)
    c, v = normal(*ty.shape, seed=1), normal(*x.shape, seed=2)
    gx, = torch.autograd.grad((torch.tanh(ty) * torch.tensor(c)).sum(), tx,
                              create_graph=True)
    hx, = torch.autograd.grad((gx * torch.tensor(v)).sum(), tx)

    def loss(x):
        return cr.sum(cr.tanh(pooled(kind, "cr", x, s)) * c)

    close(cr.grad(loss)(x), gx)
    close(cr.grad(lambda x: cr.sum(cr.grad(loss)(x) * v))(x), hx)
    _, tangent = cr.jvp(lambda x: pooled(kind, "cr", x, s), (x,), (v,))
    _, want = torch.func.jvp(lambda x: pooled(kind, "torch", x, s), (torch.tensor(x),),
                             (torch.tensor(v),))
    close(tangent, want)


def test_max_pool_ties_share_the_gradient():
    x = cr.tensor([[[[1.0, 3.0, 0.0], [3.0, 2.0, 0.0], [0.0, 0.0, 0.0]]]],
                  requires_grad=True)
    # four overlapping windows (stride 1): the two 3s tie in the first one (half each)
    # and win one window each alone; the 2 wins the last window
    F.max_pool2d(x, 2, stride=1).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.5, 0.0], [1.5, 1.0, 0.0], [0.0, 0.0, 0.0]]]]


def test_pool_jacobians_both_ways():
    x = normal(1, 2, 5, 5)
    for kind, s in (("max", dict(kernel_size=3, stride=2, padding=1)),
                    ("avg", dict(kernel_size=2, stride=1)), ("adaptive", dict(output_size=3))):
        want = torch.autograd.functional.jacobian(lambda x: pooled(kind, "torch", x, s),
                                                  torch.tensor(x))
        for jac in (cr.jacrev, cr.jacfwd):
            close(jac(lambda x: pooled(kind, "cr", x, s))(x), want)


# =======================================================================================
# 3. Batch normalisation
# =======================================================================================

@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 2, 4, 5)])
def test_batch_norm_training_matches_torch_to_second_order(shape):
    x, w, b = normal(*shape), normal(shape[1], seed=1), normal(shape[1], seed=2)
    rm, rv = normal(shape[1], seed=3), 1 + np.abs(normal(shape[1], seed=4))
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    tx, tw, tb = T(x), T(w), T(b)
    ty = TF.batch_norm(tx, trm, trv, tw, tb, training=True, momentum=0.3, eps=1e-3)
    c, v = normal(*shape, seed=5), normal(*shape, seed=6)
    grads = torch.autograd.grad((torch.tanh(ty) * torch.tensor(c)).sum(), (tx, tw, tb),
                                create_graph=True)
    hx, = torch.autograd.grad((grads[0] * torch.tensor(v)).sum(), tx, retain_graph=True)

    cx, cw, cb = (cr.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.batch_norm(cx, rm, rv, cw, cb, training=True, momentum=0.3, eps=1e-3)
    close(y, ty)
    close(rm, trm)
    close(rv, trv)
    (cr.tanh(y) * c).sum().backward()
    for got, want in zip((cx.grad, cw.grad, cb.grad), grads):
        close(got, want)

    def loss(x):
        return cr.sum(cr.tanh(F.batch_norm(x, None, None, w, b, training=True, eps=1e-3))
                      * c)

    close(cr.grad(lambda x: cr.sum(cr.grad(loss)(x) * v))(x), hx)


def test_batch_norm_eval_matches_torch():
    x, w, b = normal(3, 2, 4, 4), normal(2, seed=1), normal(2, seed=2)
    rm, rv = normal(2, seed=3), 1 + np.abs(normal(2, seed=4))
    tx = T(x)
    ty = TF.batch_norm(tx, torch.tensor(rm), torch.tensor(rv), torch.tensor(w),
                       torch.tensor(b), training=False)
    g, = torch.autograd.grad(ty.sum(), tx)
    cx = cr.tensor(x, requires_grad=True)
    y = F.batch_norm(cx, rm.copy(), rv.copy(), w, b)
    close(y, ty)
    y.sum().backward()
    close(cx.grad, g)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_modules_match_torch_in_train_and_eval(momentum):
    torch_bn = torch.nn.BatchNorm2d(3, momentum=momentum).double()
    bn = nn.BatchNorm2d(3, momentum=momentum)
    torch_bn.weight.data[:] = torch.tensor(normal(3, seed=9))
    bn.load_torch_state_dict(torch_bn.state_dict())
    for step in range(3):
        x = normal(4, 3, 5, 5, seed=step) * 2 + step
        close(bn(x), torch_bn(torch.tensor(x)))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        close(getattr(bn, name), getattr(torch_bn, name))
    bn.eval(), torch_bn.eval()
    x = normal(2, 3, 5, 5, seed=7)
    close(bn(x), torch_bn(torch.tensor(x)))
    one = nn.BatchNorm1d(4, affine=False, track_running_stats=False)
    torch_one = torch.nn.BatchNorm1d(4, affine=False, track_running_stats=False).double()
    x = normal(5, 4, 3, seed=8)
    close(one.eval()(x), torch_one.eval()(torch.tensor(x)))  # batch statistics, always
    assert one.parameters() == [] and one.state_dict() == {}


def test_batchnorm_buffers_in_state_dict_and_not_in_parameters():
    model = nn.Sequential(nn.Conv2d(1, 2, 3, rng=0), nn.BatchNorm2d(2))
    model(normal(4, 1, 6, 6))
    state = model.state_dict()
    assert sorted(state) == ["layers.0.bias", "layers.0.weight", "layers.1.bias",
                             "layers.1.num_batches_tracked", "layers.1.running_mean",
                             "layers.1.running_var", "layers.1.weight"]
    assert len(model.parameters()) == 4
    fresh = nn.Sequential(nn.Conv2d(1, 2, 3, rng=1), nn.BatchNorm2d(2))
    fresh.load_state_dict(state)
    assert int(fresh[1].num_batches_tracked) == 1
    close(fresh[1].running_var, model[1].running_var)
    fresh.eval(), model.eval()
    close(fresh(normal(2, 1, 6, 6, seed=3)), model(normal(2, 1, 6, 6, seed=3)))


def test_a_torch_cnn_loads_and_computes_the_same():
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 6, 3, groups=2, stride=2),
        torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(24, 3)).double()
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, rng=0), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, groups=2, stride=2, rng=0), nn.AdaptiveAvgPool2d(2),
        nn.Flatten(), nn.Linear(24, 3, rng=0))
    assert repr(model).count("Conv2d(") == 2
    tmodel(torch.randn(8, 1, 10, 10, dtype=torch.float64))  # running statistics move
    model.load_torch_state_dict(tmodel.state_dict())
    x = normal(5, 1, 10, 10)
    for train in (True, False):
        model.train(train), tmodel.train(train)
        tx = T(x)
        ty = tmodel(tx)
        y = model(cr.tensor(x, requires_grad=True))
        close(y, ty)
        g = normal(*ty.shape, seed=1)
        ty.backward(torch.tensor(g))
        model.zero_grad()
        (y * g).sum().backward()
        for (name, p), tp in zip(model.named_parameters(), tmodel.parameters()):
            close(p.grad, tp.grad.T if p.grad.shape != tuple(tp.shape) else tp.grad)
        tmodel.zero_grad()
    back = model.torch_state_dict()
    assert sorted(back) == sorted(tmodel.state_dict())


def test_conv1d_module_with_torch_weights_matches_torch():
    tconv = torch.nn.Conv1d(4, 6, 3, stride=2, padding="valid", dilation=2, groups=2).double()
    conv = nn.Conv1d(4, 6, 3, stride=2, padding="valid", dilation=2, groups=2, rng=0)
    conv.load_torch_state_dict(tconv.state_dict())
    x = normal(3, 4, 13)
    tx = T(x)
    ty = tconv(tx)
    cx = cr.tensor(x, requires_grad=True)
    y = conv(cx)
    close(y, ty)
    g = normal(*ty.shape, seed=1)
    ty.backward(torch.tensor(g))
    (y * g).sum().backward()
    close(cx.grad, tx.grad)
    close(conv.weight.grad, tconv.weight.grad)
    close(conv.bias.grad, tconv.bias.grad)


def test_batchnorm1d_module_trains_as_torch_and_its_forward_mode_agrees():
    tbn, bn = torch.nn.BatchNorm1d(3, momentum=0.2).double(), nn.BatchNorm1d(3, momentum=0.2)
    for step in range(2):
        x = normal(6, 3, 4, seed=step) + step
        close(bn(x), tbn(torch.tensor(x)))
    close(bn.running_var, tbn.running_var)
    x, v = normal(5, 3, seed=3), normal(5, 3, seed=4)
    w, b = normal(3, seed=5), normal(3, seed=6)
    _, want = torch.func.jvp(lambda x: TF.batch_norm(x, None, None, torch.tensor(w),
                                                     torch.tensor(b), training=True),
                             (torch.tensor(x),), (torch.tensor(v),))
    _, got = cr.jvp(lambda x: F.batch_norm(x, None, None, w, b, training=True), (x,), (v,))
    close(got, want)


def test_conv_init_is_torchs_uniform_bound():
    layer = nn.Conv2d(6, 40, (3, 5), groups=2, rng=0)
    bound = 1 / np.sqrt(3 * 3 * 5)
    w, b = layer.weight.data, layer.bias.data
    assert w.shape == (40, 3, 3, 5) and np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound  # a uniform's spread
    assert np.array_equal(nn.Conv2d(6, 40, 3, rng=5).weight.data,
                          nn.Conv2d(6, 40, 3, rng=5).weight.data)
    assert nn.Conv1d(2, 3, 4, bias=False, rng=0).bias is None


# =======================================================================================
# 4. cr.jit
# =======================================================================================

def small_cnn(seed=0, batch_norm=False):
    layers = [nn.Conv2d(1, 4, 3, rng=seed)]
    if batch_norm:
        layers.append(nn.BatchNorm2d(4))
    layers += [nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1, stride=2,
                                                        rng=seed + 1),
               nn.AvgPool2d(2, padding=1), nn.Flatten(), nn.Linear(16, 3, rng=seed)]
    return nn.Sequential(*layers)


@pytest.mark.parametrize("batch_norm", [False, True])
def test_a_jitted_training_step_replays_the_eager_numbers(batch_norm):
    models = [small_cnn(batch_norm=batch_norm) for _ in range(2)]
    opts = [cr.optim.Adam(m.parameters(), lr=1e-2) for m in models]

    def step(model, opt, x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    jitted = cr.jit(step)
    rng = np.random.default_rng(0)
    for i in range(4):
        x, y = cr.tensor(rng.normal(size=(5, 1, 12, 12))), rng.integers(0, 3, 5)
        eager = step(models[0], opts[0], x, y)
        traced = jitted(models[1], opts[1], x, y)
        close(traced, eager, 1e-12)
    for (name, a), b in zip(models[0].state_dict().items(), models[1].state_dict().values()):
        close(b, a, 1e-12)
    if batch_norm:
        assert int(models[1][1].num_batches_tracked) == 4
        models[0].eval(), models[1].eval()
        x = cr.tensor(rng.normal(size=(2, 1, 12, 12)))
        close(cr.jit(lambda m, x: m(x))(models[1], x), models[0](x), 1e-12)


def test_jit_of_second_order_through_conv_and_pools():
    w = normal(2, 1, 3, 3)

    def hvp(x, v):
        def loss(x):
            return cr.sum(cr.tanh(F.max_pool2d(F.conv2d(x, w, padding=1), 2)) ** 2)
        return cr.grad(lambda x: cr.sum(cr.grad(loss)(x) * v))(x)

    jitted = cr.jit(hvp)
    for seed in range(3):
        x, v = normal(1, 1, 6, 6, seed=seed), normal(1, 1, 6, 6, seed=seed + 10)
        close(jitted(x, v), hvp(x, v), 1e-12)


# =======================================================================================
# 5. Errors
# =======================================================================================

@pytest.mark.parametrize("call, words", [
    (lambda: F.conv2d(np.ones((2, 3, 8, 8)), np.ones((4, 2, 3, 3))),
     ["conv2d", "(2, 3, 8, 8)", "(4, 2, 3, 3)", "3 channels", "expects 2"]),
    (lambda: F.conv2d(np.ones((1, 1, 4, 4)), np.ones((1, 1, 5, 3))),
     ["conv2d", "(1, 1, 4, 4)", "(5, 3)", "no larger than the padded input"]),
    (lambda: F.conv2d(np.ones((1, 1, 4, 4)), np.ones((1, 1, 7, 3)), padding=1),
     ["conv2d", "padded input's 6"]),
    (lambda: F.conv2d(np.ones((1, 6, 4, 4)), np.ones((4, 2, 3, 3)), groups=3),
     ["conv2d", "groups=3", "4 output channels", "(4, 2, 3, 3)"]),
    (lambda: F.conv1d(np.ones((1, 2, 4, 4)), np.ones((1, 2, 3))),
     ["conv1d", "(1, 2, 4, 4)", "(N, C, L)"]),
    (lambda: F.conv2d(np.ones((1, 1, 4, 4)), np.ones((1, 1, 3, 3)), stride=2, padding="same"),
     ["conv2d", "padding='same' needs stride 1"]),
    (lambda: F.max_pool2d(np.ones((1, 1, 3, 3)), 4),
     ["max_pool2d", "(1, 1, 3, 3)", "(4, 4)"]),
    (lambda: F.max_pool2d(np.ones((1, 1, 8, 8)), 2, padding=2),
     ["max_pool2d", "at most half the kernel"]),
    (lambda: F.adaptive_avg_pool2d(np.ones((1, 1, 3, 3)), 0),
     ["adaptive_avg_pool2d", "output_size"]),
    (lambda: nn.BatchNorm2d(3)(cr.ones(2, 4, 3, 3)),
     ["BatchNorm2d", "(2, 4, 3, 3)", "C = 3"]),
    (lambda: F.batch_norm(np.ones((1, 2)), None, None, training=True),
     ["batch_norm", "(1, 2)", "more than one"]),
    (lambda: nn.Conv2d(4, 6, 3, groups=4), ["Conv2d", "groups=4", "out_channels=6"]),
])
def test_bad_input_is_a_one_line_error_naming_the_operation(call, words):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


# =======================================================================================
# 6. A CNN that trains
# =======================================================================================

def test_cnn_recipe_learns_quickly():
    from chainrule.app.recipes import train_mnist_cnn
    model, metrics = train_mnist_cnn(epochs=2, n_train=1500, show_progress=False)
    assert metrics["test_accuracy"] > 0.75, metrics["history"]
    assert metrics["config"]["model"] == "cnn" and metrics["epochs_completed"] == 2
    assert sum(isinstance(m, nn.Conv2d) for m in model.modules()) == 2


@pytest.mark.slow
def test_cnn_recipe_beats_the_mlp():
    """The MLP's defaults reach 95.0% on the bundled subset's test set."""
    from chainrule.app.recipes import train_mnist_cnn
    model, metrics = train_mnist_cnn(show_progress=False)
    assert metrics["test_accuracy"] > 0.950, metrics["history"]


def test_the_command_line_trains_a_cnn_and_refuses_what_it_cannot(capsys, tmp_path):
    from chainrule.app.cli import main
    assert main(["train", "digits", "--model", "cnn", "--epochs", "2", "--quiet",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "digits (tensor engine, cnn): 2 epochs" in out
    trained = re.search(r"test accuracy (\d+\.\d)%", out).group(1)
    assert main(["eval", str(tmp_path / "model.safetensors")]) == 0  # rebuilt from the file
    evaluated = re.search(r"test accuracy (\d+\.\d+)%", capsys.readouterr().out).group(1)
    assert abs(float(evaluated) - float(trained)) <= 0.05  # the same model, other rounding
    assert main(["train", "moons", "--model", "cnn", "--quiet"]) != 0
    assert "--model cnn is for digits and mnist" in capsys.readouterr().err
    assert main(["train", "digits", "--model", "cnn", "--hidden", "8", "--quiet"]) != 0
    assert "drop --hidden" in capsys.readouterr().err
