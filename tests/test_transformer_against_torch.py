"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against torch 2.13
in float64: torch's initial weights loaded with ``load_state_dict`` (the state_dict's
names and order are torch's), the same inputs and masks, then the outputs and the
gradients of a scalar loss in the inputs and every parameter; the causal mask torch
makes; cr.jit replaying the eager numbers; and the refusals.
(The encoder and MultiheadAttention are in test_nn_attention.py.)"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261201)
TOL = 1e-10


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def both(shape):
    """The same random numbers as a torch leaf and a chainrule leaf, requiring grad."""
    array = RNG.normal(size=shape)
    return torch.tensor(array, requires_grad=True), cr.tensor(array, requires_grad=True)


def weighted(out):
    """A scalar of every output, weighted so that no gradient is uniform."""
    return (out * out * out).sum() + out.sum()


def same_grads(ours, theirs):
    named = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(named)
    for name, p in ours.named_parameters():
        close(p.grad, named[name].grad)


def loaded(ours, theirs):
    """ours with theirs's weights (torch's own random initial ones), names in order."""
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours.load_state_dict(theirs.state_dict())) == "<All keys matched successfully>"
    return ours


def masks(T, S, N, which):
    """Boolean masks (True: leave out) for T target and S memory tokens of N examples,
    as torch arrays and as NumPy ones."""
    chosen = {}
    if "causal" in which:
        chosen["tgt_mask"] = np.triu(np.ones((T, T), bool), 1)
    if "padding" in which:
        pad_t, pad_s = np.zeros((N, T), bool), np.zeros((N, S), bool)
        pad_t[1, T - 1:] = True
        pad_s[0, S - 2:] = True
        chosen.update(tgt_key_padding_mask=pad_t, memory_key_padding_mask=pad_s)
    if "memory" in which:
        memory = np.zeros((T, S), bool)
        memory[0, :2] = True
        chosen["memory_mask"] = memory
    return {k: torch.tensor(v) for k, v in chosen.items()}, chosen


DECODER_SETTINGS = [dict(), dict(norm_first=True), dict(activation="gelu", batch_first=True),
                    dict(activation=TF.silu, layer_norm_eps=1e-3),
                    dict(bias=False, norm_first=True)]
DECODER_IDS = ["post-norm", "pre-norm", "gelu, batch_first", "callable, eps", "no bias"]


@pytest.mark.parametrize("settings", DECODER_SETTINGS, ids=DECODER_IDS)
@pytest.mark.parametrize("which", ["", "causal", "causal padding memory"],
                         ids=["no masks", "causal", "all masks"])
def test_decoder_layer_matches_torch(settings, which):
    torch.manual_seed(5)
    t = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                         **settings).double()
    ours_settings = dict(settings)
    if callable(settings.get("activation")):
        ours_settings["activation"] = F.silu
    c = loaded(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                          **ours_settings, rng=0), t)
    T, S, N = 4, 5, 3
    first = settings.get("batch_first")
    (tgt_t, tgt_c), (mem_t, mem_c) = (both((N, n, 8) if first else (n, N, 8))
                                      for n in (T, S))
    masks_t, masks_c = masks(T, S, N, which)
    out_t, out_c = t(tgt_t, mem_t, **masks_t), c(tgt_c, mem_c, **masks_c)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(tgt_c.grad, tgt_t.grad)
    close(mem_c.grad, mem_t.grad)
    same_grads(c, t)


def test_an_unbatched_decoder_layer_matches_torch():
    torch.manual_seed(6)
    t = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0).double()
    c = loaded(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, rng=0), t)
    (tgt_t, tgt_c), (mem_t, mem_c) = both((4, 8)), both((6, 8))
    close(c(tgt_c, mem_c), t(tgt_t, mem_t))


def test_decoder_stacks_copies_of_the_layer_and_matches_torch():
    torch.manual_seed(7)
    layer_t = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    t = torch.nn.TransformerDecoder(layer_t, 3, norm=torch.nn.LayerNorm(8)).double()
    layer_c = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, rng=0)
    c = nn.TransformerDecoder(layer_c, 3, norm=nn.LayerNorm(8))
    assert all(layer is not layer_c for layer in c.layers)
    assert np.array_equal(c.layers[0].linear1.weight.data, c.layers[2].linear1.weight.data)
    assert c.layers[1].dropout.rng is cr.manual_seed(0)   # the shared default generator
    loaded(c, t)
    (tgt_t, tgt_c), (mem_t, mem_c) = both((2, 5, 8)), both((2, 6, 8))
    causal = np.triu(np.ones((5, 5), bool), 1)
    out_t = t(tgt_t, mem_t, tgt_mask=torch.tensor(causal), tgt_is_causal=True)
    out_c = c(tgt_c, mem_c, tgt_mask=causal, tgt_is_causal=True)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(tgt_c.grad, tgt_t.grad)
    close(mem_c.grad, mem_t.grad)
    same_grads(c, t)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("batch_first, norm_first", [(False, False), (True, True)])
def test_transformer_matches_torch_with_every_mask(batch_first, norm_first):
    torch.manual_seed(8)
    t = torch.nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=2,
                             dim_feedforward=16, dropout=0.0, batch_first=batch_first,
                             norm_first=norm_first).double()
    c = loaded(nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=2,
                              dim_feedforward=16, dropout=0.0, batch_first=batch_first,
                              norm_first=norm_first, rng=0), t)
    S, T, N = 6, 4, 3
    (src_t, src_c), (tgt_t, tgt_c) = (both((N, n, 8) if batch_first else (n, N, 8))
                                      for n in (S, T))
    pad = np.zeros((N, S), bool)
    pad[2, S - 2:] = True
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(T)
    np.testing.assert_array_equal(tgt_mask, torch.nn.Transformer.generate_square_subsequent_mask(
        T, dtype=torch.float64).numpy())
    out_t = t(src_t, tgt_t, tgt_mask=torch.tensor(tgt_mask),
              src_key_padding_mask=torch.tensor(pad), memory_key_padding_mask=torch.tensor(pad))
    out_c = c(src_c, tgt_c, tgt_mask=tgt_mask, src_key_padding_mask=pad,
              memory_key_padding_mask=pad)
    close(out_c, out_t)
    weighted(out_t).backward()
    weighted(out_c).backward()
    close(src_c.grad, src_t.grad)
    close(tgt_c.grad, tgt_t.grad)
    same_grads(c, t)


def test_transformer_starts_xavier_uniform_as_torch():
    model = nn.Transformer(16, 2, 1, 1, dim_feedforward=32, rng=0)
    for name, p in model.named_parameters():
        if p.ndim > 1:   # U(-a, a), a = sqrt(6 / (fan_in + fan_out))
            bound = np.sqrt(6 / (p.shape[0] + p.shape[1]))
            assert np.abs(p.data).max() <= bound, name
            assert np.abs(p.data).max() > 0.8 * bound, name
    assert np.array_equal(model.encoder.norm.weight.data, np.ones(16))
    again = nn.Transformer(16, 2, 1, 1, dim_feedforward=32, rng=0)
    assert all(np.array_equal(p.data, q.data)
               for p, q in zip(model.parameters(), again.parameters()))


def test_a_jitted_transformer_step_replays_the_eager_gradients():
    model = nn.Transformer(8, 2, 1, 1, dim_feedforward=16, dropout=0.0, batch_first=True,
                           rng=1)
    params = dict(model.named_parameters())
    src, tgt = RNG.normal(size=(2, 5, 8)), RNG.normal(size=(2, 3, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(3)

    def loss(p, src, tgt):
        out = cr.func.functional_call(model, p, (src, tgt), dict(tgt_mask=mask))
        return cr.sum(out * out)

    eager = cr.grad(loss)(params, src, tgt)
    jitted = cr.jit(cr.grad(loss))
    for _ in range(2):
        replayed = jitted(params, src, tgt)
        for name in params:
            np.testing.assert_allclose(np.asarray(replayed[name]), np.asarray(eager[name]),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: nn.Transformer(8, 2, 1, 1, dim_feedforward=16, rng=0)(
        cr.ones(5, 2, 8), cr.ones(4, 3, 8)),
     r"Transformer: src of shape \(5, 2, 8\) and tgt of shape \(4, 3, 8\) have different "
     r"batch sizes \(axis 1\)"),
    (lambda: nn.Transformer(8, 2, 1, 1, dim_feedforward=16, rng=0)(
        cr.ones(5, 2, 8), cr.ones(4, 2, 6)),
     r"Transformer: src of shape \(5, 2, 8\) and tgt of shape \(4, 2, 6\), expected "
     r"d_model = 8"),
    (lambda: nn.TransformerDecoderLayer(8, 2, activation="tanh"),
     r"TransformerDecoderLayer: activation must be 'relu', 'gelu' or a callable"),
    (lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, rng=0), 0),
     r"TransformerDecoder: num_layers must be a positive int"),
    (lambda: nn.TransformerDecoder(torch.nn.Linear(2, 2), 2),
     r"TransformerDecoder: decoder_layer must be a Module, got Linear"),
    (lambda: nn.Transformer(8, 2, device="cuda"),
     r"Transformer: chainrule computes on the CPU, got device='cuda'"),
])
def test_bad_input_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)
