"""PyTorch's Tensor method names (chainrule/methods/torch_names.py) against torch (float64):
the same values, gradients and second derivatives, on Tensors and inside the
transforms; and the names whose NumPy meaning stays say so when used PyTorch's way."""

import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(12)
INDEX = np.array([[1, 0, 2], [2, 2, 0]])
MASK = np.array([[True, False, True], [False, False, True]])

# (id, the method call on a chainrule value, the same on a torch tensor, input shapes)
CASES = [
    ("pow(3)", lambda x: x.pow(3), lambda x: x.pow(3), [(2, 3)]),
    ("pow(y)", lambda x, y: x.abs().pow(y), lambda x, y: x.abs().pow(y), [(2, 3), (2, 3)]),
    ("mm", lambda a, b: a.mm(b), lambda a, b: a.mm(b), [(2, 3), (3, 4)]),
    ("bmm", lambda a, b: a.bmm(b), lambda a, b: a.bmm(b), [(2, 2, 3), (2, 3, 4)]),
    ("t", lambda x: x.t() * x.t(), lambda x: x.t() * x.t(), [(2, 3)]),
    ("clamp(min)", lambda x: x.clamp(min=0.1) ** 2, lambda x: x.clamp(min=0.1) ** 2, [(2, 3)]),
    ("clamp(max)", lambda x: x.clamp(max=0.2) ** 2, lambda x: x.clamp(max=0.2) ** 2, [(2, 3)]),
    ("clip(min,max)", lambda x: x.clip(min=-0.5, max=0.5) ** 2,
     lambda x: x.clip(min=-0.5, max=0.5) ** 2, [(2, 3)]),
    ("view", lambda x: x.view(3, 2) ** 2, lambda x: x.view(3, 2) ** 2, [(2, 3)]),
    ("view_as", lambda x, y: x.view_as(y) * y, lambda x, y: x.view_as(y) * y, [(2, 3), (6,)]),
    ("expand_as", lambda x, y: x.expand_as(y) * y, lambda x, y: x.expand_as(y) * y,
     [(2, 1), (2, 3)]),
    ("masked_fill", lambda x: x.masked_fill(MASK, 0.5) ** 2,
     lambda x: x.masked_fill(torch.from_numpy(MASK), 0.5) ** 2, [(2, 3)]),
    ("where", lambda x, y: x.where(MASK, y) ** 2,
     lambda x, y: x.where(torch.from_numpy(MASK), y) ** 2, [(2, 3), (2, 3)]),
    ("gather", lambda x: x.gather(1, INDEX) ** 2,
     lambda x: x.gather(1, torch.from_numpy(INDEX)) ** 2, [(2, 3)]),
    ("scatter_add", lambda x, s: x.scatter_add(1, INDEX, s) ** 2,
     lambda x, s: x.scatter_add(1, torch.from_numpy(INDEX), s) ** 2, [(2, 3), (2, 3)]),
    ("index_select", lambda x: x.index_select(1, np.array([2, 0, 2])) ** 2,
     lambda x: x.index_select(1, torch.tensor([2, 0, 2])) ** 2, [(2, 3)]),
    ("narrow", lambda x: x.narrow(1, 1, 2) ** 2, lambda x: x.narrow(1, 1, 2) ** 2, [(2, 3)]),
    ("chunk", lambda x: x.chunk(2, 1)[0] * x.chunk(2, 1)[1].sum(),
     lambda x: x.chunk(2, 1)[0] * x.chunk(2, 1)[1].sum(), [(2, 4)]),
    ("add(alpha)", lambda x, y: x.add(y, alpha=3) * x, lambda x, y: x.add(y, alpha=3) * x,
     [(2, 3), (2, 3)]),
    ("sub(alpha)", lambda x, y: x.sub(y, alpha=2) * y, lambda x, y: x.sub(y, alpha=2) * y,
     [(2, 3), (2, 3)]),
    ("mul,div,neg", lambda x, y: x.mul(y).div(y.exp()).neg(),
     lambda x, y: x.mul(y).div(y.exp()).neg(), [(2, 3), (2, 3)]),
    ("norm()", lambda x: x.norm() * x, lambda x: x.norm() * x, [(2, 3)]),
    ("norm(1, dim=1)", lambda x: x.norm(1, dim=1) * x[:, 0],
     lambda x: x.norm(1, dim=1) * x[:, 0], [(2, 3)]),
    ("norm(3, dim, keepdim)", lambda x: x.norm(3, dim=0, keepdim=True) * x,
     lambda x: x.norm(3, dim=0, keepdim=True) * x, [(2, 3)]),
    ("norm(0.5)", lambda x: x.norm(0.5) * x, lambda x: x.norm(0.5) * x, [(2, 3)]),
    ("norm(inf, dim=1)", lambda x: x.norm(float("inf"), dim=1) ** 2,
     lambda x: x.norm(float("inf"), dim=1) ** 2, [(2, 3)]),
    ("norm('fro', (0, 1))", lambda x: x.norm("fro", dim=(0, 1)) * x,
     lambda x: x.norm("fro", dim=(0, 1)) * x, [(2, 3)]),
    ("norm('nuc')", lambda x: x.norm("nuc") * x, lambda x: x.norm("nuc") * x, [(3, 2)]),
    ("topk", lambda x: x.topk(2).values ** 2, lambda x: x.topk(2).values ** 2, [(3, 4)]),
    ("topk(dim=0, smallest)", lambda x: x.topk(2, dim=0, largest=False).values * x[:2],
     lambda x: x.topk(2, dim=0, largest=False).values * x[:2], [(3, 4)]),
    ("log10", lambda x: (x * x + 1).log10(), lambda x: (x * x + 1).log10(), [(2, 3)]),
    ("log2", lambda x: (x * x + 1).log2(), lambda x: (x * x + 1).log2(), [(2, 3)]),
    ("expm1", lambda x: x.expm1(), lambda x: x.expm1(), [(2, 3)]),
    ("cr.pow", lambda x, y: cr.pow(x.abs(), y), lambda x, y: torch.pow(x.abs(), y),
     [(2, 3), (2, 3)]),
]


@pytest.mark.parametrize("name, ours, theirs, shapes", CASES, ids=[c[0] for c in CASES])
def test_a_pytorch_method_matches_torch_to_second_order(name, ours, theirs, shapes):
    inputs = [RNG.standard_normal(s) for s in shapes]
    tensors = [torch.tensor(a, requires_grad=True) for a in inputs]
    out = theirs(*tensors)
    np.testing.assert_allclose(ours(*[cr.tensor(a) for a in inputs]).data,
                               out.detach().numpy(), rtol=1e-13)
    # backward() on Tensors
    weights = RNG.standard_normal(out.shape)
    (out * torch.from_numpy(weights)).sum().backward()
    leaves = [cr.tensor(a, requires_grad=True) for a in inputs]
    (ours(*leaves) * weights).sum().backward()
    for leaf, tensor in zip(leaves, tensors):
        np.testing.assert_allclose(leaf.grad, tensor.grad.numpy(), rtol=1e-12, atol=1e-14)
    # the Hessian in the first input, through the transforms' traced values
    scalar = lambda x: cr.sum(ours(x, *[cr.tensor(a) for a in inputs[1:]]) * weights)
    torch_scalar = lambda x: (theirs(x, *[torch.from_numpy(a) for a in inputs[1:]])
                              * torch.from_numpy(weights)).sum()
    np.testing.assert_allclose(
        cr.hessian(scalar)(inputs[0]),
        torch.autograd.functional.hessian(torch_scalar, torch.from_numpy(inputs[0])).numpy(),
        rtol=1e-11, atol=1e-13)


def test_casts_counts_and_the_device():
    x = cr.tensor([[1.5, -2.5, 3.0]])
    assert x.float().dtype == np.float32 and x.float().double().dtype == np.float64
    assert x.type() == "float64" and x.type(np.float32).dtype == np.float32
    assert x.to(np.float32).dtype == np.float32 and x.to("cpu") is x
    assert x.to(cr.zeros(1, dtype=np.float32)).dtype == np.float32
    assert x.long().data.tolist() == torch.tensor([[1.5, -2.5, 3.0]]).long().tolist()
    assert (x.numel(), x.dim()) == (3, 2) and x.cpu() is x and x.contiguous() is x
    assert x.eq(3.0).tolist() == [[False, False, True]]
    assert bool(x.gt(0).any()) and not bool(x.gt(0).all())
    with pytest.raises(ValueError, match="to: chainrule computes on the CPU, got device 'cuda'"):
        x.to("cuda")


def test_grad_fn_is_the_graph_a_learner_can_walk_back():
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    b = cr.tensor(0.5, requires_grad=True)
    loss = ((w * 3.0).sum() + b) ** 2
    names, stack, leaves = [], [loss.grad_fn], []
    while stack:
        fn = stack.pop()
        names.append(fn.name())
        for nxt, _ in fn.next_functions:
            if nxt.name() == "AccumulateGrad":
                leaves.append(nxt.variable)
            else:
                stack.append(nxt)
    assert names == ["power", "add", "sum", "multiply"]
    assert {id(v) for v in leaves} == {id(w), id(b)}
    assert w.grad_fn is None and cr.tensor(1.0).grad_fn is None
    assert repr(loss.grad_fn) == "<grad_fn power>"
    assert loss.grad_fn.inputs[0].grad_fn.name() == "add"


def test_in_place_updates_follow_the_rule_for_writes():
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with cr.no_grad():            # the manual SGD step, in PyTorch's spelling
        w.sub_(w.grad, alpha=0.5)
    assert w.data.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match=r"x.add_\(y\): in-place operations on a tensor that "
                                           r"requires grad .* write x = x \+ y"):
        w.add_(1.0)
    buffer = cr.tensor([1.0, 2.0, 3.0])
    buffer.mul_(2.0).add_(1.0, alpha=2.0).div_(2.0)
    assert buffer.data.tolist() == [2.0, 3.0, 4.0]
    assert buffer.zero_().data.tolist() == [0.0, 0.0, 0.0]
    assert buffer.fill_(7.0).data.tolist() == [7.0, 7.0, 7.0]
    assert buffer.copy_(np.array([1.0, 2.0, 3.0])).data.tolist() == [1.0, 2.0, 3.0]
    saved = cr.tensor([1.0, 2.0], requires_grad=True) * 1.0
    product = saved * saved   # saves `saved`: writing into it would change the gradient
    with pytest.raises(RuntimeError, match=r"x.fill_\(v\): the values of this tensor"):
        with cr.no_grad():
            saved.fill_(0.0)
    product.sum().backward()


def test_numpys_meaning_stays_and_the_pytorch_spelling_says_where_to_go():
    x = cr.zeros(2, 3)
    assert x.size == 6
    with pytest.raises(TypeError, match=r"size is NumPy's number of entries .* use x.shape$"):
        x.size()
    with pytest.raises(TypeError, match=r"x.shape\[1\] for x.size\(1\)"):
        x.size(1)
    with pytest.raises(ValueError, match=r"mm: expected 2-d tensors, got shapes \(2, 3\) and "
                                         r"\(3,\)"):
        x.mm(cr.zeros(3))
    with pytest.raises(ValueError, match="t: expected a tensor of at most 2 dimensions"):
        cr.zeros(2, 3, 4).t()
    with pytest.raises(TypeError, match=r"for PyTorch's \(tile the whole tensor\) use cr.tile"):
        x.repeat(2, 1)


def test_pytorchs_keyword_names_for_operands_and_axes():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 2))
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b)
    torch.matmul(input=ta, other=tb).sum().backward()
    x = cr.tensor(a, requires_grad=True)
    out = cr.matmul(input=x, other=b)
    np.testing.assert_allclose(out.data, torch.matmul(input=ta, other=tb).detach().numpy())
    out.sum().backward()
    np.testing.assert_allclose(x.grad, ta.grad.numpy())
    assert x.unsqueeze(dim=1).shape == tuple(ta.unsqueeze(dim=1).shape)
    assert x.unsqueeze(dim=0).squeeze(dim=0).shape == (2, 3)
    assert cr.cat([x, x], dim=1).shape == tuple(torch.cat([ta, ta], dim=1).shape)
    with pytest.raises(TypeError, match="matmul: got input= and a positional operand"):
        cr.matmul(x, input=x)


def test_pytorchs_nn_tutorial_runs_with_chainrules_names_and_agrees():
    """The polynomial fit of PyTorch's 'Learning PyTorch with Examples' (nn version),
    written once against a module given as `lib`: torch, or chainrule under torch's
    names. From the same weights, 300 steps give the same losses and weights."""
    import math
    from chainrule import nn as crnn

    def fit(lib, nn_module, model, steps=300):
        x = lib.linspace(-math.pi, math.pi, 2000, dtype=DTYPE[lib])
        y = lib.sin(x)
        xx = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3], dtype=DTYPE[lib]))
        loss_fn = nn_module.MSELoss(reduction="sum")
        losses = []
        for _ in range(steps):
            loss = loss_fn(model(xx), y)
            losses.append(loss.item())
            model.zero_grad()
            loss.backward()
            with lib.no_grad():
                for param in model.parameters():
                    param -= 1e-6 * param.grad
        return losses

    DTYPE = {torch: torch.float64, cr: np.float64}
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)).double()
    ours = crnn.Sequential(crnn.Linear(3, 1), crnn.Flatten(0, 1))
    ours.load_torch_state_dict(theirs.state_dict())
    their_losses = fit(torch, torch.nn, theirs)
    our_losses = fit(cr, crnn, ours)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-12)
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.torch_state_dict()[name], value.numpy(), rtol=1e-12)


def test_an_integer_cast_of_a_tensor_that_requires_grad_is_a_constant_as_in_pytorch():
    x = cr.tensor([1.7, -2.2], requires_grad=True)
    ours, theirs = x.long(), torch.tensor([1.7, -2.2], requires_grad=True).long()
    assert ours.data.tolist() == theirs.tolist() and not ours.requires_grad
    assert theirs.requires_grad is False
    y = (x * ours).sum()          # the integer factor is a constant of the gradient
    y.backward()
    assert x.grad.tolist() == [1.0, -2.0]


def test_complex_methods_match_torch():
    """x.mH, x.is_complex() and x.conj_physical() as torch's; the gradient of a real loss
    is torch's conjugated (chainrule's .grad is JAX's: docs/conventions.md)."""
    z = RNG.standard_normal((2, 3, 2)) + 1j * RNG.standard_normal((2, 3, 2))
    w = RNG.standard_normal((2, 2, 3)) + 1j * RNG.standard_normal((2, 2, 3))

    def loss(x, weights):
        return ((x.mH * weights).real + x.conj_physical().imag.sum() * x.mH.abs()).sum()
    tensor = torch.tensor(z, requires_grad=True)
    np.testing.assert_allclose(cr.tensor(z).mH.data, tensor.mH.resolve_conj().detach().numpy(), rtol=0)
    np.testing.assert_allclose(cr.tensor(z).conj_physical().data,
                               tensor.conj_physical().detach().numpy(), rtol=0)
    assert cr.tensor(z).is_complex() and not cr.tensor(z.real).is_complex()
    assert tensor.is_complex() and not tensor.real.is_complex()
    loss(tensor, torch.from_numpy(w)).backward()
    leaf = cr.tensor(z, requires_grad=True)
    loss(leaf, w).backward()
    np.testing.assert_allclose(leaf.grad, tensor.grad.numpy().conj(), rtol=1e-12)
    # inside a transform too, and a real matrix's mH is its transpose
    np.testing.assert_allclose(cr.grad(lambda x: loss(x, w))(z), leaf.grad, rtol=1e-12)
    np.testing.assert_allclose(cr.tensor(z.real).mH.data, z.real.swapaxes(-1, -2), rtol=0)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        cr.tensor(z[0, 0]).mH


def test_topk_gives_torchs_values_and_indices_and_names_a_bad_k():
    x = RNG.standard_normal((3, 5))
    for dim, largest in [(-1, True), (0, False), (1, True)]:
        ours = cr.topk(cr.tensor(x), 2, dim=dim, largest=largest)
        theirs = torch.topk(torch.from_numpy(x), 2, dim=dim, largest=largest)
        np.testing.assert_array_equal(ours.values.data, theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices, theirs.indices.numpy())
    # one call under vmap, each row its own top 2
    np.testing.assert_array_equal(cr.vmap(lambda r: cr.topk(r, 2).values)(x),
                                  torch.topk(torch.from_numpy(x), 2).values.numpy())
    with pytest.raises(ValueError, match=r"topk: k=6 for an axis of 5 entries \(shape "
                                         r"\(3, 5\), axis -1\); expected 0 <= k <= 5"):
        cr.tensor(x).topk(6)


def test_norm_takes_torchs_p_first():
    x = cr.tensor([[3.0, 0.0], [0.0, -4.0]])
    assert x.norm().item() == 5.0 and x.norm(1).item() == 7.0
    assert x.norm(0).item() == 2.0  # p = 0 counts the nonzero entries, as in torch
    assert x.norm(2, dim=0).tolist() == [3.0, 4.0]
    assert cr.norm(x, axis=0).tolist() == [3.0, 4.0]  # the function keeps its axis
    with pytest.raises(ValueError, match=r"norm: p='nuc' is the norm of a matrix; got "
                                         r"shape \(2,\) and dim=None, expected two axes"):
        cr.tensor([3.0, 4.0]).norm("nuc")


def test_the_counts_and_the_place_pytorch_asks_about():
    x, t = cr.zeros(2, 3), torch.zeros(2, 3)
    assert x.nelement() == t.nelement() == 6
    assert x.device == str(t.device) == "cpu"
    assert cr.tensor(torch.ones(2, dtype=torch.float64)).device == "cpu"
    assert cr.vmap(lambda row: row.nelement() + 0 * cr.sum(row))(np.ones((4, 3))).tolist() \
        == [3.0] * 4


def test_allclose_and_isclose_answer_as_torch_does():
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9])
    assert cr.allclose(cr.tensor(a), cr.tensor(b)) == torch.allclose(torch.tensor(a),
                                                                    torch.tensor(b))
    assert not cr.allclose(cr.tensor(a), b + 1e-3)
    np.testing.assert_array_equal(cr.isclose(cr.tensor(a), b + [0.0, 1e-3]),
                                  torch.isclose(torch.tensor(a), torch.tensor(b + [0.0, 1e-3])))
    x = cr.tensor(a, requires_grad=True)
    assert cr.allclose(x * 2, 2 * a)  # a question about the numbers: no graph needed
