"""chainrule's nn layers under chainrule's function transforms, against torch.func.

Each layer is built twice with the same weights: chainrule's from a seeded generator,
torch's (float64) from chainrule's ``torch_state_dict()``. Each is called as a function
of one example, written once for both libraries (``case.call``), and every transform of
that function must give torch.func's numbers for the same transform:

* ``vmap``: ``cr.vmap(f)(X)``, against the layer called on the whole batch at once and
  ``torch.func.vmap(f)``;
* ``grad``, ``vmap_grad``: the input gradient of ``sum(f(x) ** 2)`` for one example and
  per example, against ``torch.func.grad`` and ``torch.func.vmap(torch.func.grad)``;
* ``jacfwd``, ``jacrev``, ``vmap_jacfwd``, ``vmap_jacrev``: the Jacobian of the output
  in one example's input, and per example; ``hessian``: that of the loss;
* ``jit``, ``jit_grad``, ``jit_vmap``, ``jit_vmap_grad``: ``cr.jit`` of the call, of the
  gradient, of the vmapped call and of the per-example gradients, traced at one input
  and replayed at another (the function runs in Python once);
* the tensor engine: ``cr.sum(layer(X) ** 2).backward()`` on the batch, against torch's
  ``.backward()``: the input's gradient and every parameter's; and ``cr.grad`` inside
  it, its input gradient differentiated in the parameters by ``.backward()``.

Examples are unbatched, as torch takes them (a Conv2d's ``(C, H, W)``, a recurrent
layer's ``(L, H_in)``). A batch norm has no unbatched form in torch (BatchNorm1d refuses
a 1-d input, BatchNorm2d a 3-d one), so its example is a small batch itself, mapped over
an outer batch. Embedding's input is integers: it has no input derivative, so it runs
the forward transforms and the tensor engine (its weight's gradient) only. Where torch
has no batching rule (its recurrent layers) the torch side runs example by example; its
attention runs on the math kernel, whose forward mode and second derivatives it has.

The transform checks freeze the parameters (``requires_grad = False``): a transform of a
function that closes over a tensor requiring grad stays in that tensor's graph, as
torch.func's does (docs/conventions.md), and a Tensor comes back. With the parameters
frozen, a derivative of a NumPy input is a NumPy array (``test_derivatives_are_numpy``),
and a forward call is what the layer gives eagerly (a Tensor outside any graph), never
a tracer (``test_forward_results_are_not_traced``). A BatchNorm in training under vmap
is refused, as torch.func refuses it.
"""

import contextlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
import torch
import torch.func as tf
from torch.nn.attention import SDPBackend, sdpa_kernel

import chainrule as cr
from chainrule import nn
from seeds_and_tolerances import per_test_generator, seeded

RNG = per_test_generator(2026)
B = 3  # examples in a batch


def numbers(a):
    if isinstance(a, torch.Tensor):
        return a.detach().numpy()
    return a.data if isinstance(a, cr.Tensor) else np.asarray(a)


def close(actual, expected):
    actual, expected = numbers(actual), numbers(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------
# The layers: each built in both libraries, called on one example, and on a batch
# ---------------------------------------------------------------------------------------

def _self_attention(layer, x):
    return layer(x, x, x, need_weights=False)[0]


CAUSAL = np.triu(np.ones((3, 3), bool), 1)   # True above the diagonal: a later key
PADDED = np.array([False, False, True])        # the last key left out


def _masked_attention(layer, x):
    masks = (CAUSAL, PADDED) if isinstance(layer, cr.nn.Module) else (
        torch.tensor(CAUSAL), torch.tensor(PADDED))
    return layer(x, x, x, attn_mask=masks[0], key_padding_mask=masks[1],
                 need_weights=False)[0]


def _causal_encoder(layer, x):
    mask = CAUSAL if isinstance(layer, cr.nn.Module) else torch.tensor(CAUSAL)
    return layer(x, src_mask=mask, is_causal=True)


def _each(call=lambda layer, x: layer(x)):
    """The call on each example alone, stacked: for a layer whose batched call is not
    the same function of each example (a batch norm in training normalises each example
    by its own statistics under vmap, as torch.func.vmap does; a mask for one example)."""
    def batched(layer, X):
        stack = torch.stack if isinstance(X, torch.Tensor) else cr.stack
        return stack([call(layer, x) for x in X])
    return batched


def _rows(layer, X):
    """A batch norm's batch of examples, each a small batch itself: all at once."""
    return layer(X.reshape((-1,) + tuple(X.shape[2:]))).reshape(X.shape)


@dataclass
class Case:
    id: str
    make: Callable            # rng -> chainrule layer
    make_torch: Callable      # () -> torch layer (float64, weights loaded afterwards)
    example: tuple            # one example's shape
    call: Callable = staticmethod(lambda layer, x: layer(x))   # one example (or a batch)
    batched: Callable = None  # the whole batch at once; ``call`` when None
    integers: int = 0         # an index input below this (Embedding), else floats
    randomise: tuple = ()     # parameters and buffers drawn afresh (ones and zeros at init)
    positive: tuple = ()      # of which, drawn positive (a running variance)
    eval: bool = False
    torch_vmaps: bool = True  # torch.func.vmap has a batching rule for the layer
    attention: bool = False   # torch computes it with scaled_dot_product_attention
    checks: tuple = field(default=None)

    def __post_init__(self):
        if self.batched is None:
            self.batched = self.call


DERIVATIVES = ("grad", "vmap_grad", "jacfwd", "jacrev", "jit_grad", "jit_vmap_grad",
               "vmap_jacfwd", "vmap_jacrev", "hessian")
FORWARD = ("vmap", "jit", "jit_vmap")
CHECKS = FORWARD + DERIVATIVES + ("backward",)

CASES = [
    Case("Linear", lambda r: nn.Linear(4, 3, rng=r),
         lambda: torch.nn.Linear(4, 3), (4,)),
    Case("Conv1d", lambda r: nn.Conv1d(2, 3, 3, padding=1, rng=r),
         lambda: torch.nn.Conv1d(2, 3, 3, padding=1), (2, 6)),
    Case("Conv2d", lambda r: nn.Conv2d(2, 3, 3, stride=2, padding=1, rng=r),
         lambda: torch.nn.Conv2d(2, 3, 3, stride=2, padding=1), (2, 5, 5)),
    Case("MaxPool2d", lambda r: nn.MaxPool2d(3, stride=2, padding=1),
         lambda: torch.nn.MaxPool2d(3, stride=2, padding=1), (2, 5, 5)),
    Case("AvgPool2d", lambda r: nn.AvgPool2d(2, stride=2, padding=1),
         lambda: torch.nn.AvgPool2d(2, stride=2, padding=1), (2, 5, 5)),
    Case("LayerNorm", lambda r: nn.LayerNorm(4),
         lambda: torch.nn.LayerNorm(4), (3, 4), randomise=("weight", "bias")),
    Case("Embedding", lambda r: nn.Embedding(7, 3, rng=r),
         lambda: torch.nn.Embedding(7, 3), (4,), integers=7,
         checks=FORWARD + ("backward",)),
    Case("Embedding-padding_idx", lambda r: nn.Embedding(3, 2, padding_idx=1, rng=r),
         lambda: torch.nn.Embedding(3, 2, padding_idx=1), (6,), integers=3,
         checks=FORWARD + ("backward",)),
    Case("RNN", lambda r: nn.RNN(3, 4, num_layers=2, batch_first=True, rng=r),
         lambda: torch.nn.RNN(3, 4, num_layers=2, batch_first=True), (5, 3),
         call=lambda layer, x: layer(x)[0], torch_vmaps=False),
    Case("GRU", lambda r: nn.GRU(3, 4, batch_first=True, bidirectional=True, rng=r),
         lambda: torch.nn.GRU(3, 4, batch_first=True, bidirectional=True), (5, 3),
         call=lambda layer, x: layer(x)[0], torch_vmaps=False),
    Case("LSTM", lambda r: nn.LSTM(3, 4, batch_first=True, rng=r),
         lambda: torch.nn.LSTM(3, 4, batch_first=True), (5, 3),
         call=lambda layer, x: layer(x)[0], torch_vmaps=False),
    Case("MultiheadAttention",
         lambda r: nn.MultiheadAttention(4, 2, batch_first=True, rng=r),
         lambda: torch.nn.MultiheadAttention(4, 2, batch_first=True), (3, 4),
         call=_self_attention, attention=True),
    Case("TransformerEncoderLayer",
         lambda r: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                              batch_first=True, rng=r),
         lambda: torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                                  batch_first=True), (3, 4),
         randomise=("norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"),
         attention=True),
    Case("Sequential",
         lambda r: nn.Sequential(nn.Linear(4, 5, rng=r), nn.ReLU(), nn.Linear(5, 3, rng=r)),
         lambda: torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(),
                                     torch.nn.Linear(5, 3)), (4,)),
    Case("BatchNorm1d-eval", lambda r: nn.BatchNorm1d(4),
         lambda: torch.nn.BatchNorm1d(4), (2, 4), batched=_rows, eval=True,
         randomise=("weight", "bias", "running_mean", "running_var"),
         positive=("running_var",)),
    Case("BatchNorm1d-batch_statistics",
         lambda r: nn.BatchNorm1d(4, track_running_stats=False),
         lambda: torch.nn.BatchNorm1d(4, track_running_stats=False), (3, 4), batched=_each(),
         randomise=("weight", "bias")),
    Case("MultiheadAttention-masks",
         lambda r: nn.MultiheadAttention(4, 2, batch_first=True, rng=r),
         lambda: torch.nn.MultiheadAttention(4, 2, batch_first=True), (3, 4),
         call=_masked_attention, batched=_each(_masked_attention), attention=True),
    Case("TransformerEncoderLayer-causal",
         lambda r: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                              batch_first=True, rng=r),
         lambda: torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                                  batch_first=True), (3, 4),
         call=_causal_encoder, randomise=("norm1.weight", "norm1.bias"), attention=True),
    Case("Conv1d-stride_dilation", lambda r: nn.Conv1d(2, 2, 2, stride=2, dilation=2, rng=r),
         lambda: torch.nn.Conv1d(2, 2, 2, stride=2, dilation=2), (2, 7)),
    Case("Conv2d-groups_dilation",
         lambda r: nn.Conv2d(4, 2, 2, dilation=2, groups=2, padding=1, bias=False, rng=r),
         lambda: torch.nn.Conv2d(4, 2, 2, dilation=2, groups=2, padding=1, bias=False),
         (4, 3, 3)),
    Case("MaxPool2d-kernel2", lambda r: nn.MaxPool2d(2),
         lambda: torch.nn.MaxPool2d(2), (2, 4, 4)),
    Case("AvgPool2d-exclude_pad", lambda r: nn.AvgPool2d(3, stride=2, padding=1,
                                                         count_include_pad=False),
         lambda: torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
         (2, 5, 5)),
    Case("AdaptiveAvgPool2d", lambda r: nn.AdaptiveAvgPool2d((2, 3)),
         lambda: torch.nn.AdaptiveAvgPool2d((2, 3)), (2, 5, 5)),
    Case("RNN-relu", lambda r: nn.RNN(3, 4, nonlinearity="relu", batch_first=True, rng=r),
         lambda: torch.nn.RNN(3, 4, nonlinearity="relu", batch_first=True), (5, 3),
         call=lambda layer, x: layer(x)[0], torch_vmaps=False),
    Case("LSTM-hidden_state", lambda r: nn.LSTM(3, 3, num_layers=2, batch_first=True, rng=r),
         lambda: torch.nn.LSTM(3, 3, num_layers=2, batch_first=True), (4, 3),
         call=lambda layer, x: layer(x)[1][1], batched=lambda layer, X: layer(X)[1][1]
         .swapaxes(0, 1), torch_vmaps=False),
    Case("TransformerEncoderLayer-norm_first_gelu",
         lambda r: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                              activation="gelu", norm_first=True,
                                              batch_first=True, rng=r),
         lambda: torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                                  activation="gelu", norm_first=True,
                                                  batch_first=True), (3, 4),
         randomise=("norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"),
         attention=True),
    Case("Sequential-Conv2d_Flatten_GELU",
         lambda r: nn.Sequential(nn.Conv2d(1, 2, 2, rng=r), nn.GELU(), nn.Flatten(0),
                                 nn.Linear(18, 2, rng=r), nn.Tanh()),
         lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 2, 2), torch.nn.GELU(),
                                     torch.nn.Flatten(0), torch.nn.Linear(18, 2),
                                     torch.nn.Tanh()), (1, 4, 4), batched=_each()),
    Case("BatchNorm2d-eval", lambda r: nn.BatchNorm2d(2),
         lambda: torch.nn.BatchNorm2d(2), (2, 2, 3, 3), batched=_rows, eval=True,
         randomise=("weight", "bias", "running_mean", "running_var"),
         positive=("running_var",)),
    Case("Dropout-eval", lambda r: nn.Dropout(0.5, rng=r),
         lambda: torch.nn.Dropout(0.5), (4,), eval=True),
]
for _case in CASES:
    _case.checks = _case.checks or CHECKS
BY_ID = {case.id: case for case in CASES}


def build(case):
    """The chainrule layer and torch's, with the same numbers."""
    ours = case.make(seeded("weights", case.id))
    state = ours.torch_state_dict()
    draws = seeded("state", case.id)
    for name in case.randomise:
        value = draws.standard_normal(np.shape(state[name]))
        state[name] = np.abs(value) + 0.5 if name in case.positive else value
    if case.randomise:
        ours.load_torch_state_dict(state)
    theirs = case.make_torch().double()
    theirs.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in state.items()})
    if case.eval:
        ours.eval()
        theirs.eval()
    return ours, theirs


def inputs(case, *batch):
    shape = batch + case.example
    if case.integers:
        return RNG.integers(0, case.integers, size=shape)
    return RNG.standard_normal(shape)


def frozen(layer):
    for p in layer.parameters():
        p.requires_grad = False
    return layer


def as_torch(a):
    return torch.tensor(np.asarray(a))


def functions(case, ours, theirs):
    """The one-example call and its squared-sum loss, in each library."""
    f = lambda x: case.call(ours, x)                       # noqa: E731
    loss = lambda x: cr.sum(f(x) ** 2)                     # noqa: E731
    g = lambda x: case.call(theirs, x)                     # noqa: E731
    torch_loss = lambda x: (g(x) ** 2).sum()               # noqa: E731
    return f, loss, g, torch_loss


# ---------------------------------------------------------------------------------------
# Each transform, against torch.func's
# ---------------------------------------------------------------------------------------

def traced_once(transform, fn, first, second):
    """``transform(fn)`` traced at ``first`` and replayed at ``second``: fn runs in
    Python once, at the trace."""
    calls = []

    def counted(x):
        calls.append(1)
        return fn(x)

    jitted = cr.jit(transform(counted))
    jitted(first)
    out = jitted(second)
    assert len(calls) == 1, f"cr.jit ran the function {len(calls)} times, not once"
    return out


def transformed(case, check, f, loss, X, X2):
    """chainrule's result of one check, on ``X`` (or its first example); a jitted one
    is traced there and replayed on ``X2``."""
    x, x2 = X[0], X2[0]
    if check == "vmap":
        return cr.vmap(f)(X)
    if check == "jit":
        return traced_once(lambda fn: fn, f, x, x2)
    if check == "jit_vmap":
        return traced_once(cr.vmap, f, X, X2)
    if check == "grad":
        return cr.grad(loss)(x)
    if check == "vmap_grad":
        return cr.vmap(cr.grad(loss))(X)
    if check == "jacfwd":
        return cr.jacfwd(f)(x)
    if check == "jacrev":
        return cr.jacrev(f)(x)
    if check == "jit_grad":
        return traced_once(cr.grad, loss, x, x2)
    if check == "jit_vmap_grad":
        return traced_once(lambda fn: cr.vmap(cr.grad(fn)), loss, X, X2)
    if check == "vmap_jacfwd":
        return cr.vmap(cr.jacfwd(f))(X)
    if check == "vmap_jacrev":
        return cr.vmap(cr.jacrev(f))(X)
    if check == "hessian":
        return cr.hessian(loss)(x)
    raise AssertionError(check)


def torch_vmap(case, fn):
    """torch.func.vmap(fn), or, for a layer it has no batching rule for (torch's
    recurrent layers), fn on each example, stacked."""
    if case.torch_vmaps:
        return tf.vmap(fn)
    return lambda X: torch.stack([fn(x) for x in X])


def expected(case, check, ours, theirs, f, loss, g, torch_loss, X, X2):
    """What the check must give: torch.func's transform of the same function, and
    chainrule's own eager answer where there is one."""
    x, x2 = as_torch(X[0]), as_torch(X2[0])
    if check == "vmap":
        return [case.batched(ours, cr.tensor(X)), torch_vmap(case, g)(as_torch(X))]
    if check == "jit":
        return [f(X2[0]), g(x2)]
    if check == "jit_vmap":
        return [case.batched(ours, cr.tensor(X2)), torch_vmap(case, g)(as_torch(X2))]
    if check == "grad":
        return [tf.grad(torch_loss)(x)]
    if check == "vmap_grad":
        return [torch_vmap(case, tf.grad(torch_loss))(as_torch(X))]
    if check == "jacfwd":
        return [tf.jacfwd(g)(x)]
    if check == "jacrev":
        return [tf.jacrev(g)(x)]
    if check == "jit_grad":
        return [cr.grad(loss)(X2[0]), tf.grad(torch_loss)(x2)]
    if check == "jit_vmap_grad":
        return [torch_vmap(case, tf.grad(torch_loss))(as_torch(X2))]
    if check in ("vmap_jacfwd", "vmap_jacrev"):
        return [torch_vmap(case, tf.jacrev(g))(as_torch(X))]
    if check == "hessian":  # (torch.func's is jacfwd(jacrev), and jacfwd needs a vmap)
        if case.torch_vmaps:
            return [tf.hessian(torch_loss)(x)]
        return [torch.autograd.functional.hessian(torch_loss, x)]
    raise AssertionError(check)


def run(case, check, against_torch=True):
    """(chainrule's result, what it must equal) for one check."""
    ours, theirs = build(case)
    frozen(ours)
    f, loss, g, torch_loss = functions(case, ours, theirs)
    X, X2 = inputs(case, B), inputs(case, B)
    got = transformed(case, check, f, loss, X, X2)
    if not against_torch:
        return got, []
    with torch_kernels(case):
        return got, expected(case, check, ours, theirs, f, loss, g, torch_loss, X, X2)


def torch_kernels(case):
    """Torch's attention on the CPU runs a flash kernel, which has no forward-mode or
    second derivative: its math kernel (the same function) has both."""
    if case.attention:
        return sdpa_kernel(SDPBackend.MATH)
    return contextlib.nullcontext()


def pairs(checks):
    # the developer's loop (make test-fast) runs vmap and grad of each layer; make test
    # runs every check
    return [pytest.param(case.id, check, id=f"{case.id}-{check}",
                         marks=[] if check in ("vmap", "grad") else [pytest.mark.slow])
            for case in CASES for check in case.checks if check in checks]


@pytest.mark.parametrize("case_id, check", pairs(FORWARD + DERIVATIVES))
def test_layer_under_transform(case_id, check):
    got, wanted = run(BY_ID[case_id], check)
    for b in wanted:
        close(got, b)


@pytest.mark.parametrize("case_id, check", pairs(DERIVATIVES))
def test_derivatives_are_numpy(case_id, check):
    got, _ = run(BY_ID[case_id], check, against_torch=False)
    assert type(got) is np.ndarray, type(got)


@pytest.mark.parametrize("case_id, check", pairs(FORWARD))
def test_forward_results_are_not_traced(case_id, check):
    case = BY_ID[case_id]
    got, _ = run(case, check, against_torch=False)
    eager = case.call(frozen(build(case)[0]), inputs(case))
    assert type(got) is type(eager), (type(got), type(eager))
    assert type(got.data if isinstance(got, cr.Tensor) else got) is np.ndarray
    assert not getattr(got, "requires_grad", False)


# ---------------------------------------------------------------------------------------
# The tensor engine: backward() on the batch, input and parameters
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case_id", [case.id for case in CASES])
def test_backward_matches_torch(case_id):
    case = BY_ID[case_id]
    ours, theirs = build(case)
    X = inputs(case, B)
    differentiable = not case.integers
    x = cr.tensor(X, requires_grad=differentiable)
    t = torch.tensor(X, requires_grad=differentiable)
    with torch_kernels(case):
        u = case.batched(theirs, t)
    y = case.batched(ours, x)
    close(y, u)
    cr.sum(y ** 2).backward()
    (u ** 2).sum().backward()
    if differentiable:
        close(x.grad, t.grad)
        assert type(x.grad) is np.ndarray
    our_params, their_params = list(ours.parameters()), list(theirs.parameters())
    assert len(our_params) == len(their_params)
    for p, q in zip(our_params, their_params):
        close(p.grad, q.grad)


# ---------------------------------------------------------------------------------------
# Refusals: where torch.func refuses too
# ---------------------------------------------------------------------------------------

def test_batch_norm_in_training_under_vmap_is_refused_as_torch_refuses():
    """In training a BatchNorm with running statistics would update them from inside
    the map, each example with its own statistics: torch.func.vmap refuses, and so does
    cr.vmap, saying what to do instead, without touching the running statistics."""
    ours, theirs = build(BY_ID["BatchNorm1d-eval"])
    ours.train()
    theirs.train()
    X = inputs(BY_ID["BatchNorm1d-eval"], B)
    before = (ours.running_mean.copy(), ours.running_var.copy(),
              ours.num_batches_tracked.copy())
    with pytest.raises(ValueError, match=r"under cr\.vmap .*running_mean.*\.eval\(\)"):
        cr.vmap(ours)(X)
    np.testing.assert_array_equal(ours.running_mean, before[0])
    np.testing.assert_array_equal(ours.running_var, before[1])
    assert ours.num_batches_tracked == before[2]
    with pytest.raises(RuntimeError, match="running_mean"):
        tf.vmap(theirs)(as_torch(X))


# ---------------------------------------------------------------------------------------
# A transform inside the tensor engine: the parameters left live
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case_id", [
    case.id for case in CASES
    if "grad" in case.checks and list(case.make(0).parameters())])
def test_input_gradient_in_the_parameters_graph_matches_torch(case_id):
    """With the parameters requiring grad, cr.grad's input gradient is a Tensor in
    their graph, as torch.func.grad's is in torch's: ``sum(g ** 2).backward()`` gives
    each parameter's gradient of that (a gradient penalty's second derivative)."""
    case = BY_ID[case_id]
    ours, theirs = build(case)
    f, loss, g, torch_loss = functions(case, ours, theirs)
    x = inputs(case)
    got = cr.grad(loss)(x)
    assert isinstance(got, cr.Tensor) and got.requires_grad
    with torch_kernels(case):
        wanted = tf.grad(torch_loss)(as_torch(x))
        (wanted ** 2).sum().backward()
    close(got, wanted)
    cr.sum(got ** 2).backward()
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        close(p.grad, q.grad)


def test_a_recurrent_layer_mapped_along_its_own_batch_axis():
    """Without batch_first a recurrent layer's batch is axis 1 of (L, N, H_in): vmap
    over that axis, putting it back there, is the layer on the whole batch, and its
    per-example gradients are torch's."""
    ours = nn.GRU(3, 4, rng=seeded("weights", "GRU-batch_axis_1"))
    theirs = torch.nn.GRU(3, 4).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.torch_state_dict().items()})
    frozen(ours)
    X = RNG.standard_normal((5, B, 3))
    got = cr.vmap(lambda x: ours(x)[0], in_axes=1, out_axes=1)(X)
    close(got, ours(cr.tensor(X))[0])
    close(got, theirs(torch.tensor(X))[0])
    grads = cr.vmap(cr.grad(lambda x: cr.sum(ours(x)[0] ** 2)), in_axes=1, out_axes=1)(X)
    wanted = torch.stack([tf.grad(lambda x: (theirs(x)[0] ** 2).sum())(torch.tensor(x))
                          for x in np.moveaxis(X, 1, 0)], dim=1)
    close(grads, wanted)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_a_recurrent_layers_initial_state_is_mapped_and_differentiated(name):
    """The initial state is an argument like the input: mapped with it (an LSTM's
    ``(h0, c0)`` a tuple of two), and differentiated in, per example and under cr.jit."""
    ours = getattr(nn, name)(3, 4, num_layers=2, batch_first=True,
                             rng=seeded("weights", name, "h0"))
    theirs = getattr(torch.nn, name)(3, 4, num_layers=2, batch_first=True).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.torch_state_dict().items()})
    frozen(ours)
    X, H = RNG.standard_normal((B, 5, 3)), RNG.standard_normal((B, 2, 2, 4))
    state = (lambda h: (h[0], h[1])) if name == "LSTM" else (lambda h: h[0])
    f = lambda x, h: ours(x, state(h))[0]                                 # noqa: E731
    g = lambda x, h: theirs(x, state(h))[0]                               # noqa: E731
    loss = lambda x, h: cr.sum(f(x, h) ** 2)                              # noqa: E731
    torch_loss = lambda x, h: (g(x, h) ** 2).sum()                        # noqa: E731
    close(cr.vmap(f)(X, H), torch.stack([g(as_torch(x), as_torch(h)) for x, h in zip(X, H)]))
    wanted = torch.stack([tf.grad(torch_loss, argnums=1)(as_torch(x), as_torch(h))
                          for x, h in zip(X, H)])
    close(cr.vmap(cr.grad(loss, argnums=1))(X, H), wanted)
    jitted = cr.jit(cr.grad(loss, argnums=1))
    jitted(X[0], H[0])
    got = jitted(X[1], H[1])
    assert type(got) is np.ndarray
    close(got, wanted[1])
