"""F.scaled_dot_product_attention, nn.MultiheadAttention, nn.TransformerEncoderLayer and
nn.TransformerEncoder against torch 2.x in float64: torch's initial weights loaded with
``load_state_dict``, the same inputs and masks, then the outputs, the attention weights
and the gradients of a scalar loss with respect to the inputs and every parameter;
second derivatives, cr.jit, cr.vmap, a training step, and the refusals."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F

TOL = 1e-10


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def both(array):
    """The same numbers as a torch leaf and a chainrule leaf, each requiring grad."""
    return torch.tensor(array, requires_grad=True), cr.tensor(array, requires_grad=True)


def weighted(out):
    """A scalar of every output, weighted so that no gradient is uniform."""
    return (out * out * out).sum() + out.sum()


def same_grads(ours, theirs):
    named = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(named)
    for name, p in ours.named_parameters():
        close(p.grad, named[name].grad)


# =======================================================================================
# scaled_dot_product_attention
# =======================================================================================

SDPA_CASES = {
    "plain": dict(),
    "bool mask": dict(mask="bool"),
    "float mask": dict(mask="float"),
    "causal": dict(is_causal=True),
    "scale": dict(scale=0.3),
    "causal, more keys": dict(is_causal=True, S=7),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    options = dict(SDPA_CASES[case])
    rng = np.random.default_rng(1)
    L, S = 5, options.pop("S", 5)
    (qt, qc), (kt, kc), (vt, vc) = (both(rng.normal(size=(2, 3, n, 4))) for n in (L, S, S))
    kind = options.pop("mask", None)
    mask_t = mask_c = None
    if kind == "bool":
        mask = rng.random((L, S)) > 0.3
        mask[:, 0] = True                                 # every query sees some key
        mask_t, mask_c = torch.tensor(mask), mask
    elif kind == "float":
        mask = rng.normal(size=(2, 1, L, S))
        mask_t, mask_c = torch.tensor(mask), mask
    out_t = TF.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask_t, **options)
    out_c = F.scaled_dot_product_attention(qc, kc, vc, attn_mask=mask_c, **options)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    for a, b in ((qc, qt), (kc, kt), (vc, vt)):
        close(a.grad, b.grad)


def test_sdpa_grouped_query_attention_matches_torch():
    rng = np.random.default_rng(2)
    (qt, qc), (kt, kc), (vt, vc) = (both(rng.normal(size=(2, h, 4, 3))) for h in (4, 2, 2))
    out_t = TF.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
    out_c = F.scaled_dot_product_attention(qc, kc, vc, enable_gqa=True)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(kc.grad, kt.grad)


def test_sdpa_second_derivatives_match_torch():
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(2, 4, 3)) for _ in range(3))
    qt = torch.tensor(q, requires_grad=True)
    out = TF.scaled_dot_product_attention(qt, torch.tensor(k), torch.tensor(v), is_causal=True)
    (g,) = torch.autograd.grad((out ** 3).sum(), qt, create_graph=True)
    (gg,) = torch.autograd.grad((g ** 2).sum(), qt)

    def first(u):
        return (F.scaled_dot_product_attention(u, k, v, is_causal=True) ** 3).sum()

    close(cr.grad(first)(q), g)
    close(cr.grad(lambda u: (cr.grad(first)(u) ** 2).sum())(q), gg)


def test_sdpa_dropout_draws_from_its_generator():
    q = np.random.default_rng(4).normal(size=(3, 6, 4))
    exact = F.scaled_dot_product_attention(q, q, q)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5, rng=0)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5, rng=0)
    close(a, b.data)
    assert not np.allclose(a.data, exact.data)
    close(F.scaled_dot_product_attention(q, q, q, dropout_p=0.0), exact.data)
    cr.manual_seed(1)
    c = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    cr.manual_seed(1)
    close(F.scaled_dot_product_attention(q, q, q, dropout_p=0.5), c.data)


# =======================================================================================
# MultiheadAttention
# =======================================================================================

def mha_pair(seed, *args, **kwargs):
    torch.manual_seed(seed)
    t = torch.nn.MultiheadAttention(*args, **kwargs).double()
    c = nn.MultiheadAttention(*args, **kwargs, rng=seed)
    assert repr(c.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    return c, t


MHA_CASES = {
    "default": (dict(), dict()),
    "batch_first": (dict(batch_first=True), dict()),
    "no bias": (dict(bias=False), dict()),
    "kdim and vdim": (dict(kdim=3, vdim=5), dict()),
    "weights per head": (dict(), dict(average_attn_weights=False)),
    "no weights": (dict(batch_first=True), dict(need_weights=False)),
    "key padding, bool": (dict(), dict(key_padding_mask="bool")),
    "key padding, float": (dict(batch_first=True), dict(key_padding_mask="float")),
    "attn_mask 2-d bool": (dict(), dict(attn_mask="bool2")),
    "attn_mask 3-d float": (dict(), dict(attn_mask="float3")),
    "causal hint": (dict(batch_first=True), dict(attn_mask="causal", is_causal=True)),
    "both masks": (dict(kdim=3, vdim=5), dict(attn_mask="bool2", key_padding_mask="bool",
                                             average_attn_weights=False)),
    "a learned key and value": (dict(add_bias_kv=True), dict()),
    "a zero key and value": (dict(add_zero_attn=True, batch_first=True), dict()),
    "both added, both masks": (dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5),
                               dict(attn_mask="bool2", key_padding_mask="bool",
                                    average_attn_weights=False)),
    "added keys, float masks": (dict(add_bias_kv=True, add_zero_attn=True),
                                dict(attn_mask="float3", key_padding_mask="float")),
    "added keys, no weights": (dict(add_bias_kv=True, batch_first=True),
                               dict(need_weights=False, attn_mask="causal")),
}


@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_torch(case):
    settings, call = MHA_CASES[case]
    call = dict(call)
    rng = np.random.default_rng(5)
    E, H, N, L, S = 8, 2, 3, 4, 6
    c, t = mha_pair(17, E, H, **settings)
    first = settings.get("batch_first", False)
    lead = (lambda n: (N, n)) if first else (lambda n: (n, N))
    q = rng.normal(size=lead(L) + (E,))
    k = rng.normal(size=lead(S) + (settings.get("kdim", E),))
    v = rng.normal(size=lead(S) + (settings.get("vdim", E),))
    masks_t, masks_c = {}, {}
    kind = call.pop("key_padding_mask", None)
    if kind:
        pad = np.zeros((N, S), bool)
        pad[0, 4:] = pad[2, 1] = True
        value = pad if kind == "bool" else np.where(pad, -np.inf, rng.normal(size=(N, S)))
        masks_t["key_padding_mask"], masks_c["key_padding_mask"] = torch.tensor(value), value
    kind = call.pop("attn_mask", None)
    if kind:
        if kind == "bool2":
            value = rng.random((L, S)) > 0.7
            value[:, 0] = False                           # every query keeps key 0
        elif kind == "float3":
            value = rng.normal(size=(N * H, L, S))
        else:
            value = np.triu(np.ones((L, S), bool), 1)
        masks_t["attn_mask"], masks_c["attn_mask"] = torch.tensor(value), value
    (qt, qc), (kt, kc), (vt, vc) = both(q), both(k), both(v)
    out_t, w_t = t(qt, kt, vt, **masks_t, **call)
    out_c, w_c = c(qc, kc, vc, **masks_c, **call)
    close(out_c, out_t)
    if call.get("need_weights", True):
        close(w_c, w_t)
        keys = w_t.shape[-1]  # S, and add_bias_kv's and add_zero_attn's keys
        loss_t = weighted(out_t) + (w_t * torch.arange(keys, dtype=torch.float64)).sum()
        loss_c = weighted(out_c) + (w_c * np.arange(keys)).sum()
    else:
        assert w_c is None and w_t is None
        loss_t, loss_c = weighted(out_t), weighted(out_c)
    loss_t.backward()
    loss_c.backward()
    for a, b in ((qc, qt), (kc, kt), (vc, vt)):
        close(a.grad, b.grad)
    same_grads(c, t)


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
def test_multihead_attention_unbatched_matches_torch():
    rng = np.random.default_rng(6)
    c, t = mha_pair(3, 6, 3)
    x = rng.normal(size=(5, 6))
    pad = np.array([False, False, True, False, True])
    mask = rng.normal(size=(3, 5, 5))
    (xt, xc) = both(x)
    out_t, w_t = t(xt, xt, xt, key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(mask))
    out_c, w_c = c(xc, xc, xc, key_padding_mask=pad, attn_mask=mask)
    assert out_c.shape == (5, 6) and w_c.shape == (5, 5)
    close(out_c, out_t)
    close(w_c, w_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(xc.grad, xt.grad)
    same_grads(c, t)


def test_multihead_attention_names_initialisation_and_dropout():
    c = nn.MultiheadAttention(8, 2, rng=0)
    t = torch.nn.MultiheadAttention(8, 2)
    assert {k: v.shape for k, v in c.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert list(c.state_dict()) == list(t.state_dict())
    assert c.torch_state_dict().keys() == c.state_dict().keys()
    a = np.sqrt(6 / 32)                                    # xavier over (24, 8)
    assert np.abs(c.in_proj_weight.data).max() <= a and np.abs(c.in_proj_weight.data).max() > .9 * a
    assert not c.in_proj_bias.data.any() and not c.out_proj.bias.data.any()
    assert np.abs(c.out_proj.weight.data).max() <= 1 / np.sqrt(8)
    assert isinstance(c.out_proj, nn.Linear)
    separate = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, rng=0)
    assert list(separate.state_dict()) == list(
        torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=5).state_dict())
    x = np.random.default_rng(7).normal(size=(4, 2, 8))
    drop, t = mha_pair(2, 8, 2, dropout=0.5)
    drop.eval()
    t.eval()
    close(drop(x, x, x)[0], t(torch.tensor(x), torch.tensor(x), torch.tensor(x))[0])
    drop.train()
    assert not np.allclose(drop(x, x, x)[0].data, drop(x, x, x)[0].data)


def test_multihead_attention_under_jit_and_vmap():
    rng = np.random.default_rng(8)
    mha = nn.MultiheadAttention(6, 2, batch_first=True, rng=1)
    x = rng.normal(size=(3, 4, 6))
    mask = np.triu(np.ones((4, 4), bool), 1)

    def f(u):
        return mha(u, u, u, attn_mask=mask)[0]

    eager = f(cr.tensor(x))
    jitted = cr.jit(f)
    close(jitted(cr.tensor(x)), eager.data)
    close(jitted(cr.tensor(x)), eager.data)
    close(cr.vmap(f)(x), eager.data)                       # each (4, 6) unbatched
    loss = lambda u: (f(u) ** 2).sum()  # noqa: E731
    close(cr.vmap(cr.grad(loss))(x)[1], cr.grad(loss)(x[1]))


# =======================================================================================
# TransformerEncoderLayer, TransformerEncoder
# =======================================================================================

def layer_pair(seed, *args, **kwargs):
    torch.manual_seed(seed)
    t = torch.nn.TransformerEncoderLayer(*args, **kwargs).double()
    if callable(kwargs.get("activation")):
        kwargs["activation"] = {TF.gelu: F.gelu, TF.silu: F.silu}[kwargs["activation"]]
    c = nn.TransformerEncoderLayer(*args, **kwargs, rng=seed)
    assert repr(c.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    return c, t


@pytest.mark.parametrize("settings", [
    dict(), dict(norm_first=True), dict(activation="gelu", batch_first=True),
    dict(activation=TF.silu, layer_norm_eps=1e-3), dict(bias=False, norm_first=True)],
    ids=["post-norm", "pre-norm", "gelu, batch_first", "callable, eps", "no bias"])
@pytest.mark.parametrize("masked", [False, True])
def test_encoder_layer_matches_torch(settings, masked):
    rng = np.random.default_rng(9)
    # training mode, dropout 0: the libraries' random draws differ
    c, t = layer_pair(23, 8, 2, dim_feedforward=16, dropout=0.0, **settings)
    shape = (3, 5, 8) if settings.get("batch_first") else (5, 3, 8)
    xt, xc = both(rng.normal(size=shape))
    masks_t, masks_c = {}, {}
    if masked:
        causal = np.triu(np.ones((5, 5), bool), 1)
        pad = np.zeros((3, 5), bool)
        pad[1, 3:] = True
        masks_t = dict(src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(pad))
        masks_c = dict(src_mask=causal, src_key_padding_mask=pad)
    out_t, out_c = t(xt, **masks_t), c(xc, **masks_c)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(xc.grad, xt.grad)
    same_grads(c, t)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_encoder_matches_torch_and_copies_the_layer():
    rng = np.random.default_rng(10)
    torch.manual_seed(31)
    layer_t = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    t = torch.nn.TransformerEncoder(layer_t, 3, norm=torch.nn.LayerNorm(8)).double()
    layer_c = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, rng=0)
    c = nn.TransformerEncoder(layer_c, 3, norm=nn.LayerNorm(8))
    assert list(c.state_dict()) == list(t.state_dict())
    assert all(layer is not layer_c for layer in c.layers)
    assert np.array_equal(c.layers[0].linear1.weight.data, c.layers[2].linear1.weight.data)
    assert c.layers[0].linear1.weight is not c.layers[2].linear1.weight
    assert c.layers[1].dropout.rng is cr.manual_seed(0)   # the shared default generator
    c.load_state_dict(t.state_dict())
    xt, xc = both(rng.normal(size=(2, 5, 8)))
    causal = np.triu(np.ones((5, 5), bool), 1)
    out_t = t(xt, mask=torch.tensor(causal), is_causal=True)
    out_c = c(xc, mask=causal, is_causal=True)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(xc.grad, xt.grad)
    same_grads(c, t)


def test_a_transformer_training_step_from_torchs_weights_matches_torch():
    """makemore's shape: embedding, encoder layer (causal), linear head, cross entropy,
    AdamW; three steps."""
    rng = np.random.default_rng(11)
    tokens, targets = rng.integers(0, 9, (4, 6)), rng.integers(0, 9, (4, 6))
    c, t = layer_pair(41, 8, 2, dim_feedforward=32, dropout=0.0, batch_first=True,
                      norm_first=True)
    torch.manual_seed(41)
    emb_t, head_t = torch.nn.Embedding(9, 8).double(), torch.nn.Linear(8, 9).double()
    emb_c, head_c = nn.Embedding(9, 8), nn.attention.NonDynamicallyQuantizableLinear(8, 9)
    emb_c.load_state_dict(emb_t.state_dict())
    head_c.load_state_dict(head_t.state_dict())
    causal = np.triu(np.ones((6, 6), bool), 1)
    params_t = [*t.parameters(), *emb_t.parameters(), *head_t.parameters()]
    params_c = [*c.parameters(), *emb_c.parameters(), *head_c.parameters()]
    opt_t = torch.optim.AdamW(params_t, lr=0.01)
    opt_c = cr.optim.AdamW(params_c, lr=0.01)
    for _ in range(3):
        logits_t = head_t(t(emb_t(torch.tensor(tokens)), src_mask=torch.tensor(causal)))
        loss_t = TF.cross_entropy(logits_t.reshape(-1, 9), torch.tensor(targets).reshape(-1))
        opt_t.zero_grad()
        loss_t.backward()
        opt_t.step()
        logits_c = head_c(c(emb_c(tokens), src_mask=causal))
        loss_c = F.cross_entropy(logits_c.reshape(-1, 9), targets.reshape(-1))
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        close(loss_c, loss_t)
    for p, q in zip(params_c, params_t):
        close(p, q)


@pytest.mark.parametrize("call, message", [
    (lambda: F.scaled_dot_product_attention(cr.ones(2, 3), cr.ones(4, 2), cr.ones(4, 2)),
     r"scaled_dot_product_attention: query \(2, 3\), key \(4, 2\), value \(4, 2\); expected"),
    (lambda: F.scaled_dot_product_attention(cr.ones(2, 3), cr.ones(2, 3), cr.ones(2, 3),
                                            attn_mask=np.ones((2, 2), bool), is_causal=True),
     r"is_causal=True makes its own mask"),
    (lambda: nn.MultiheadAttention(8, 3), r"embed_dim must be divisible by num_heads"),
    (lambda: nn.MultiheadAttention(8, 2, rng=0)(cr.ones(4, 2, 6), cr.ones(4, 2, 8),
                                                 cr.ones(4, 2, 8)),
     r"MultiheadAttention: query \(4, 2, 6\), key \(4, 2, 8\), value \(4, 2, 8\); expected"),
    (lambda: nn.MultiheadAttention(8, 2, rng=0)(cr.ones(4, 2, 8), cr.ones(4, 2, 8),
                                                 cr.ones(4, 2, 8), attn_mask=np.ones((4, 3))),
     r"MultiheadAttention: attn_mask of shape \(4, 3\), expected one of \[\(4, 4\), \(4, 4, 4\)\]"),
    (lambda: nn.MultiheadAttention(8, 2, rng=0)(cr.ones(4, 2, 8), cr.ones(4, 2, 8),
                                                 cr.ones(4, 2, 8),
                                                 key_padding_mask=np.ones((4, 2), bool)),
     r"MultiheadAttention: key_padding_mask of shape \(4, 2\), expected \(2, 4\)"),
    (lambda: nn.TransformerEncoderLayer(8, 2, activation="tanh"),
     r"TransformerEncoderLayer: activation must be 'relu', 'gelu' or a callable"),
    (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, rng=0), 0),
     r"TransformerEncoder: num_layers must be a positive int"),
    (lambda: nn.MultiheadAttention(8, 2, device="cuda"),
     r"MultiheadAttention: chainrule computes on the CPU, got device='cuda'"),
    (lambda: nn.TransformerEncoderLayer(8, 2, device="mps"),
     r"TransformerEncoderLayer: chainrule computes on the CPU, got device='mps'"),
])
def test_bad_input_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


# =======================================================================================
# ParameterList and ParameterDict (the containers a hand-written attention holds its
# per-head weights in)
# =======================================================================================

class Heads(nn.Module):
    def __init__(self, arrays):
        self.proj = nn.ParameterList(arrays[:2])
        self.scales = nn.ParameterDict({"q": arrays[2], "k": arrays[3]})

    def forward(self, x):
        return (x @ self.proj[0] * self.scales.q) @ self.proj[1] * self.scales["k"]


class TorchHeads(torch.nn.Module):
    def __init__(self, arrays):
        super().__init__()
        self.proj = torch.nn.ParameterList([torch.nn.Parameter(torch.tensor(a))
                                            for a in arrays[:2]])
        self.scales = torch.nn.ParameterDict({"q": torch.nn.Parameter(torch.tensor(arrays[2])),
                                              "k": torch.nn.Parameter(torch.tensor(arrays[3]))})

    def forward(self, x):
        return (x @ self.proj[0] * self.scales.q) @ self.proj[1] * self.scales["k"]


def test_parameter_containers_register_as_torchs():
    rng = np.random.default_rng(12)
    arrays = [rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=4),
              rng.normal(size=2)]
    c, t = Heads(arrays), TorchHeads(arrays)
    assert list(c.state_dict()) == list(t.state_dict()) == \
        ["proj.0", "proj.1", "scales.k", "scales.q"]   # a plain dict sorted, as torch
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert len(c.parameters()) == 4 and all(p.requires_grad for p in c.parameters())
    assert c.torch_state_dict().keys() == t.state_dict().keys()
    fresh = Heads([np.zeros_like(a) for a in arrays])
    fresh.load_state_dict(t.state_dict())
    xt, xc = both(rng.normal(size=(5, 3)))
    close(fresh(xc), t(xt))
    weighted(t(xt)).backward()
    weighted(fresh(xc)).backward()
    same_grads(fresh, t)
    close(xc.grad, xt.grad)
    opt = cr.optim.SGD(fresh.parameters(), lr=0.1)
    before = fresh.proj[1].data.copy()
    opt.step()
    close(fresh.proj[1], before - 0.1 * t.proj[1].grad.numpy())


def test_parameter_list_and_dict_behave_as_torchs():
    w = nn.Parameter(np.ones(2))
    plist = nn.ParameterList([w, cr.tensor([1.0, 2.0]), np.zeros(3)])
    assert plist[0] is w                                   # a Parameter stays itself
    assert isinstance(plist[1], nn.Parameter) and plist[2].requires_grad
    plist.append(np.ones(1))
    plist += [np.ones(4)]
    plist[0] = np.full(2, 3.0)
    assert [p.shape for p in plist] == [(2,), (2,), (3,), (1,), (4,)]
    assert len(plist[1:3]) == 2 and plist[0].data.tolist() == [3.0, 3.0]
    pdict = nn.ParameterDict([("a", np.ones(2))])
    pdict["b"] = np.zeros(1)
    pdict.c = cr.tensor([5.0])                             # an attribute is an entry
    assert list(pdict) == ["a", "b", "c"] and "c" in pdict and pdict.get("z") is None
    assert list(pdict.state_dict()) == ["a", "b", "c"]
    assert pdict.pop("b").shape == (1,) and list(pdict.keys()) == ["a", "c"]
    del pdict["a"]
    assert [k for k, _ in pdict.items()] == ["c"]
    with pytest.raises(KeyError, match="ParameterDict: keys must be non-empty strings"):
        pdict["x.y"] = np.ones(1)
    with pytest.raises(TypeError, match="ParameterList.append: expected a Parameter"):
        plist.append(nn.Linear(2, 2, rng=0))
    with pytest.raises(AttributeError, match="ParameterDict has no attribute or entry 'zz'"):
        pdict.zz
    assert repr(nn.ParameterDict({"a": np.ones((2, 3))})) == \
        "ParameterDict(\n  (a): Parameter containing: [float64 of size 2x3]\n)"


SELF_CASES = {
    "default": (dict(), dict()),
    "batch_first, causal": (dict(batch_first=True), dict(attn_mask="causal", is_causal=True)),
    "no bias, 2-d bool mask": (dict(bias=False), dict(attn_mask="bool2")),
    "3-d float mask": (dict(batch_first=True), dict(attn_mask="float3")),
    "key padding": (dict(), dict(key_padding_mask=True)),
    "unbatched": (dict(), dict(unbatched=True, attn_mask="causal")),
}


@pytest.mark.parametrize("case", list(SELF_CASES))
def test_self_attention_without_weights_matches_torch(case):
    """query is key is value and need_weights=False: the projections as one product and
    the heads' attention as one node (rules/fused_attention.py's self_attention; with a
    key padding mask, attention): torch's outputs and gradients all the same."""
    settings, call = SELF_CASES[case]
    call = dict(call)
    rng = np.random.default_rng(8)
    E, H, N, L = 8, 2, 3, 5
    c, t = mha_pair(21, E, H, **settings)
    unbatched = call.pop("unbatched", False)
    shape = (L, E) if unbatched else ((N, L, E) if settings.get("batch_first") else (L, N, E))
    x = rng.normal(size=shape)
    masks_t, masks_c = {}, {}
    kind = call.pop("attn_mask", None)
    if kind:
        value = {"causal": lambda: np.triu(np.ones((L, L), bool), 1),
                 "bool2": lambda: np.triu(np.ones((L, L), bool), 2),
                 "float3": lambda: rng.normal(size=(N * H, L, L))}[kind]()
        masks_t["attn_mask"], masks_c["attn_mask"] = torch.tensor(value), value
    if call.pop("key_padding_mask", False):
        pad = np.zeros((N, L), bool)
        pad[0, 3:] = pad[2, 1] = True
        masks_t["key_padding_mask"], masks_c["key_padding_mask"] = torch.tensor(pad), pad
    xt, xc = both(x)
    out_t, _ = t(xt, xt, xt, need_weights=False, **masks_t, **call)
    out_c, w_c = c(xc, xc, xc, need_weights=False, **masks_c, **call)
    assert w_c is None
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(xc.grad, xt.grad)
    same_grads(c, t)


def test_self_attention_is_one_node_unless_the_overrides_are_off():
    from chainrule.graph import topological_order
    from chainrule.rules import fused
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, rng=0)
    x = cr.tensor(np.random.default_rng(1).normal(size=(3, 5, 8)), requires_grad=True)
    names = {n._op.name for n in topological_order(layer(x, is_causal=True)) if n._prev}
    assert "self_attention" in names and "softmax" not in names
    previous = fused.set_enabled(False)
    try:
        plain = layer(x, is_causal=True)
    finally:
        fused.set_enabled(previous)
    names = {n._op.name for n in topological_order(plain) if n._prev}
    assert "softmax" in names and "self_attention" not in names
    close(plain, layer(x, is_causal=True).data, 1e-14)
