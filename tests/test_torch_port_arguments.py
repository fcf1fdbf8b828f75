"""PyTorch's arguments that programs ported from torch pass as they are (issue 43: the
Zero to Hero lectures and makemore): var's and std's ``unbiased=`` and ``correction=``,
and ``device=`` of the functions that make tensors. Values and gradients against torch
in float64."""

import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(43)

# (how the variance is asked for in chainrule, the same in torch)
VARIANCES = [
    ("var(unbiased=True)", lambda x: x.var(0, keepdim=True, unbiased=True),
     lambda x: x.var(0, keepdim=True, unbiased=True)),
    ("var(unbiased=False)", lambda x: x.var(dim=1, unbiased=False),
     lambda x: x.var(dim=1, unbiased=False)),
    ("var(correction=0)", lambda x: cr.var(x, correction=0), lambda x: torch.var(x, correction=0)),
    ("var(correction=2)", lambda x: x.var((0, 1), correction=2),
     lambda x: x.var((0, 1), correction=2)),
    ("std(unbiased=True)", lambda x: x.std(0, keepdim=True, unbiased=True),
     lambda x: x.std(0, keepdim=True, unbiased=True)),
    ("std(correction=0)", lambda x: cr.std(x, dim=1, correction=0),
     lambda x: torch.std(x, dim=1, correction=0)),
    ("std(dim, True)", lambda x: x.std(1, True), lambda x: x.std(1, True)),
]


@pytest.mark.parametrize("name, ours, theirs", VARIANCES, ids=[c[0] for c in VARIANCES])
def test_variance_takes_torchs_correction_arguments(name, ours, theirs):
    data = RNG.normal(size=(5, 4))
    weights = RNG.normal(size=np.shape(theirs(torch.tensor(data))))
    x = cr.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    value, expected = ours(x), theirs(t)
    np.testing.assert_allclose(value.data, expected.detach().numpy(), rtol=1e-12)
    (value * weights).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_unbiased_under_a_transform_is_torchs():
    data = RNG.normal(size=(6,))
    ours = cr.grad(lambda x: cr.std(x, unbiased=True) * cr.var(x, correction=0))(data)
    t = torch.tensor(data, requires_grad=True)
    (torch.std(t, unbiased=True) * torch.var(t, correction=0)).backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("given", [dict(ddof=1, unbiased=True), dict(correction=1, unbiased=True),
                                   dict(ddof=0, correction=0)])
def test_two_spellings_of_the_correction_are_refused(given):
    with pytest.raises(TypeError, match="give one"):
        cr.var(cr.ones(3), **given)
    with pytest.raises(TypeError, match="give one"):
        cr.ones(3).std(0, 1, unbiased=True)


# (the call with device=, what it gives without it)
MAKERS = [
    ("tensor", lambda d: cr.tensor([1.0, 2.0], device=d), lambda: cr.tensor([1.0, 2.0])),
    ("zeros", lambda d: cr.zeros((2, 3), device=d), lambda: cr.zeros((2, 3))),
    ("ones", lambda d: cr.ones(2, 3, device=d), lambda: cr.ones(2, 3)),
    ("full", lambda d: cr.full((2,), 0.5, device=d), lambda: cr.full((2,), 0.5)),
    ("eye", lambda d: cr.eye(3, device=d), lambda: cr.eye(3)),
    ("arange", lambda d: cr.arange(0, 5, dtype=cr.long, device=d), lambda: cr.arange(5)),
    ("linspace", lambda d: cr.linspace(0, 1, 4, device=d), lambda: cr.linspace(0, 1, 4)),
    ("zeros_like", lambda d: cr.zeros_like(cr.ones(2), device=d), lambda: cr.zeros(2)),
    ("ones_like", lambda d: cr.ones_like(cr.ones(2), device=d), lambda: cr.ones(2)),
    ("rand", lambda d: cr.rand(3, seed=1, device=d), lambda: cr.rand(3, seed=1)),
    ("randn", lambda d: cr.randn(3, seed=1, device=d), lambda: cr.randn(3, seed=1)),
    ("randint", lambda d: cr.randint(0, 9, (4,), generator=cr.Generator().manual_seed(2), device=d),
     lambda: cr.randint(0, 9, (4,), generator=cr.Generator().manual_seed(2))),
    ("randperm", lambda d: cr.randperm(5, generator=cr.Generator().manual_seed(3), device=d),
     lambda: cr.randperm(5, generator=cr.Generator().manual_seed(3))),
    ("rand_like", lambda d: cr.rand_like(cr.ones(3), generator=cr.Generator().manual_seed(4),
                                         device=d),
     lambda: cr.rand_like(cr.ones(3), generator=cr.Generator().manual_seed(4))),
    ("randn_like", lambda d: cr.randn_like(cr.ones(3), generator=cr.Generator().manual_seed(5),
                                           device=d),
     lambda: cr.randn_like(cr.ones(3), generator=cr.Generator().manual_seed(5))),
]


@pytest.mark.parametrize("name, with_device, without", MAKERS, ids=[m[0] for m in MAKERS])
@pytest.mark.parametrize("device", [None, "cpu", "cpu:0", "x.device", "torch.device"])
def test_device_cpu_is_accepted(name, with_device, without, device):
    device = {"x.device": cr.zeros(1).device, "torch.device": torch.device("cpu")}.get(device,
                                                                                     device)
    made, plain = with_device(device), without()
    assert made.dtype == plain.dtype and made.tolist() == plain.tolist()


@pytest.mark.parametrize("name, with_device, without", MAKERS, ids=[m[0] for m in MAKERS])
def test_another_device_is_refused(name, with_device, without):
    with pytest.raises(ValueError, match=f"{name}: chainrule computes on the CPU"):
        with_device("cuda:0")


def test_positions_on_the_inputs_device_as_makemore_makes_them():
    """makemore's Transformer: positions made on idx's device, embedded and added to the
    tokens'; the same numbers and gradient as torch's."""
    table = RNG.normal(size=(8, 3))
    idx = np.array([[1, 4, 2], [0, 7, 7]])
    ours, theirs = cr.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    results = []
    for lib, wte, ix in ((cr, ours, cr.tensor(idx)), (torch, theirs, torch.tensor(idx))):
        pos = lib.arange(0, ix.shape[1], dtype=lib.long, device=ix.device).unsqueeze(0)
        h = lib.zeros((2, 3, 3), device=ix.device) + wte[ix] + wte[pos]
        (lib.tanh(h) ** 2).sum().backward()
        results.append(h)
    np.testing.assert_allclose(results[0].data, results[1].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-10)


def test_split_with_torchs_dim_says_how_to_write_it():
    """makemore's attention: q, k, v = c_attn(x).split(n_embd, dim=2). NumPy's split
    counts pieces, so dim= is refused with the rewrite, and the rewrite is torch's split."""
    data = RNG.normal(size=(2, 3, 12))
    x, t = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    with pytest.raises(TypeError, match=r"x.split\(x.shape\[2\] // size, axis=2\)"):
        x.split(4, dim=2)
    ours, theirs = x.split(x.shape[2] // 4, axis=2), t.split(4, dim=2)
    weights = [RNG.normal(size=(2, 3, 4)) for _ in range(3)]
    sum(((p * w) ** 2).sum() for p, w in zip(ours, weights)).backward()
    sum(((p * torch.tensor(w)) ** 2).sum() for p, w in zip(theirs, weights)).backward()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="PyTorch's takes the size of each piece"):
        cr.split(x, 5, axis=2)


def test_max_values_and_indices_say_what_to_write():
    """The backprop-ninja lecture's logits.max(1, keepdim=True).values and
    logits.max(1).indices: x.max(1, keepdim=True) and x.argmax(1) give torch's numbers
    and gradient, and .values/.indices name them."""
    data = RNG.normal(size=(4, 5))
    x, t = cr.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    for name in ("values", "indices"):
        with pytest.raises(AttributeError, match=r"x.argmax\(dim\) for x.max\(dim\).indices"):
            getattr(x.max(1, keepdim=True), name)
        with pytest.raises(AttributeError, match=f"has no .{name}"):
            cr.grad(lambda u: getattr(u.min(0), name).sum())(data)
    ours, theirs = x.max(1, keepdim=True), t.max(1, keepdim=True).values
    np.testing.assert_array_equal(ours.data, theirs.detach().numpy())
    np.testing.assert_array_equal(x.argmax(1).data, t.max(1).indices.numpy())
    weights = RNG.normal(size=(4, 1))
    (ours * weights).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad, t.grad.numpy())
