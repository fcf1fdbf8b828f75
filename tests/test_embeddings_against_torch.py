"""F.embedding_bag, nn.EmbeddingBag and nn.Embedding's options (max_norm,
scale_grad_by_freq, from_pretrained) against torch 2.13 in float64: bags as rows or cut
at offsets (with include_last_offset and empty bags), the three modes, padding_idx and
per_sample_weights; the values, the gradients of sum(w * y) in the table and the
weights, the rows max_norm rescales in place, reprs and state_dicts; cr.jit and cr.vmap
giving the eager numbers; and the refusals."""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261203)
TOL = 1e-12


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


LAYOUTS = {
    "rows": dict(input=np.array([[1, 3, 3], [0, 1, 6], [6, 6, 2]]), offsets=None),
    "offsets": dict(input=np.array([4, 1, 6, 3, 0, 2, 6]), offsets=np.array([0, 2, 2, 5])),
    "last offset": dict(input=np.array([4, 1, 6, 3, 0, 2, 6]),
                        offsets=np.array([0, 3, 3, 7]), include_last_offset=True),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("mode, weighted", [("sum", False), ("sum", True), ("mean", False),
                                            ("max", False)],
                         ids=["sum", "weighted sum", "mean", "max"])  # (weights: sums only)
@pytest.mark.parametrize("padding_idx", [None, 6])
def test_bags_and_their_gradients_are_torchs(layout, mode, padding_idx, weighted):
    case = dict(LAYOUTS[layout])
    table = RNG.normal(size=(7, 4))
    indices, offsets = case.pop("input"), case.pop("offsets")
    samples = RNG.normal(size=indices.shape) if weighted else None
    tw = torch.tensor(table, requires_grad=True)
    ts = torch.tensor(samples, requires_grad=True) if weighted else None
    theirs = TF.embedding_bag(torch.tensor(indices), tw,
                              None if offsets is None else torch.tensor(offsets), mode=mode,
                              per_sample_weights=ts, padding_idx=padding_idx, **case)
    w = RNG.normal(size=tuple(theirs.shape))
    (theirs * torch.tensor(w)).sum().backward()

    def loss(table, samples):
        out = F.embedding_bag(indices, table, offsets, mode=mode, per_sample_weights=samples,
                              padding_idx=padding_idx, **case)
        return cr.sum(out * w)
    ours = F.embedding_bag(indices, table, offsets, mode=mode, per_sample_weights=samples,
                           padding_idx=padding_idx, **case)
    close(ours, theirs)
    if weighted:
        g_table, g_samples = cr.grad(loss, argnums=(0, 1))(table, samples)
        close(g_samples, ts.grad)
    else:
        g_table = cr.grad(loss)(table, None)
    close(g_table, tw.grad)


def test_the_second_derivative_in_the_weights_against_central_differences():
    indices, offsets = LAYOUTS["offsets"]["input"], LAYOUTS["offsets"]["offsets"]
    table, samples = RNG.normal(size=(7, 3)), RNG.normal(size=indices.shape)

    def loss(samples):
        out = F.embedding_bag(indices, cr.tanh(table * 1.0), offsets, mode="sum",
                              per_sample_weights=samples)
        return cr.sum(cr.sin(out))
    v, h = RNG.normal(size=samples.shape), 1e-5
    numeric = (cr.grad(loss)(samples + h * v) - cr.grad(loss)(samples - h * v)) / (2 * h)
    np.testing.assert_allclose(cr.hvp(loss, samples, v), numeric, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_the_module_loads_torchs_table_and_computes_the_same(mode):
    theirs = torch.nn.EmbeddingBag(9, 3, mode=mode, padding_idx=0).double()
    ours = nn.EmbeddingBag(9, 3, mode=mode, padding_idx=0, rng=0)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    bags = np.array([[0, 3, 8], [2, 2, 0]])
    close(ours(bags), theirs(torch.tensor(bags)))


def test_from_pretrained_copies_and_freezes_as_torchs():
    table = RNG.normal(size=(5, 2))
    for ours_cls, theirs_cls in ((nn.Embedding, torch.nn.Embedding),
                                 (nn.EmbeddingBag, torch.nn.EmbeddingBag)):
        ours = ours_cls.from_pretrained(table)
        theirs = theirs_cls.from_pretrained(torch.tensor(table))
        assert not ours.weight.requires_grad and not theirs.weight.requires_grad
        table[0, 0] += 1.0   # a copy, not a view
        assert ours.weight.data[0, 0] != table[0, 0]
        trainable = ours_cls.from_pretrained(table, freeze=False)
        assert trainable.weight.requires_grad
    bag = nn.EmbeddingBag.from_pretrained(np.eye(3), mode="max")
    assert repr(bag) == repr(torch.nn.EmbeddingBag.from_pretrained(torch.eye(3), mode="max"))


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_rescales_the_rows_looked_up_in_place_as_torchs(norm_type):
    table = RNG.normal(size=(6, 4)) * 2
    ours = nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type, _weight=table)
    theirs = torch.nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type,
                                _weight=torch.tensor(table))
    assert repr(ours) == repr(theirs)
    indices = np.array([[0, 2], [2, 5]])
    out, tout = ours(indices), theirs(torch.tensor(indices))
    close(out, tout)
    close(ours.weight, theirs.weight)             # rows 0, 2, 5 rescaled, the others not
    np.testing.assert_array_equal(ours.weight.data[[1, 3, 4]], table[[1, 3, 4]])
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    close(ours.weight.grad, theirs.weight.grad)


def test_scale_grad_by_freq_divides_each_rows_gradient_by_its_count_as_torchs():
    table = RNG.normal(size=(5, 3))
    ours = nn.Embedding(5, 3, scale_grad_by_freq=True, _weight=table)
    theirs = torch.nn.Embedding(5, 3, scale_grad_by_freq=True, _weight=torch.tensor(table))
    indices = np.array([[1, 1, 4], [1, 0, 4]])
    w = RNG.normal(size=(2, 3, 3))
    out = ours(indices)
    close(out, table[indices])                   # the same numbers
    (out * w).sum().backward()
    (theirs(torch.tensor(indices)) * torch.tensor(w)).sum().backward()
    close(ours.weight.grad, theirs.weight.grad)
    assert repr(ours) == repr(theirs)


def test_jit_replays_and_vmap_maps_the_bags():
    bags = np.array([[1, 3, 3], [0, 1, 6]])
    table = RNG.normal(size=(7, 4))

    def loss(table, samples):
        return cr.sum(F.embedding_bag(bags, table, mode="sum", per_sample_weights=samples,
                                      padding_idx=3) ** 2)
    samples = RNG.normal(size=bags.shape)
    eager = cr.grad(loss, argnums=(0, 1))(table, samples)
    jitted = cr.jit(cr.grad(loss, argnums=(0, 1)))
    for _ in range(2):
        for got, want in zip(jitted(table, samples), eager):
            close(got, want)
    stack = RNG.normal(size=(3,) + bags.shape)
    close(cr.vmap(loss, in_axes=(None, 0))(table, stack),
          [loss(table, s).item() for s in stack])
    # indices under cr.jit: the rows are found at each replay
    lookup = cr.jit(lambda idx: F.embedding_bag(idx, table, mode="max"))
    close(lookup(bags), F.embedding_bag(bags, table, mode="max"))
    close(lookup(bags[::-1].copy()), F.embedding_bag(bags[::-1], table, mode="max"))


def _rescale_a_table_a_graph_still_needs():
    layer = nn.Embedding(4, 3, max_norm=0.5, rng=0)
    x = cr.tensor(np.ones((2, 3)), requires_grad=True)
    pending = cr.sum(x @ layer.weight.T)   # its gradient in x reads the table
    layer(np.array([0, 1]))
    pending.backward()


@pytest.mark.parametrize("call, message", [
    (lambda: F.embedding_bag(np.array([0, 1]), np.ones((3, 2))),
     r"embedding_bag: 1-d input of 2 indices needs offsets"),
    (lambda: F.embedding_bag(np.array([[0, 1]]), np.ones((3, 2)), np.array([0])),
     r"embedding_bag: input of shape \(1, 2\) holds a bag per row; offsets must be None"),
    (lambda: F.embedding_bag(np.array([0, 1]), np.ones((3, 2)), np.array([1])),
     r"embedding_bag: offsets \[1\] must be 1-d, start at 0"),
    (lambda: F.embedding_bag(np.array([[0, 1]]), np.ones((3, 2)), mode="median"),
     r"embedding_bag: mode must be 'sum', 'mean' or 'max', got 'median'"),
    (lambda: F.embedding_bag(np.array([[0, 1]]), np.ones((3, 2)),
                             per_sample_weights=np.ones((1, 2))),
     r"embedding_bag: per_sample_weights weigh a sum; mode is 'mean'"),
    (lambda: F.embedding_bag(np.array([[0, 3]]), np.ones((3, 2)), mode="sum"),
     r"embedding_bag: indices must lie in \[0, 3\), got values from 0 to 3"),
    (lambda: F.embedding_bag(np.array([0, 1]), np.ones((3, 2)), np.array([0, 1]),
                             include_last_offset=True),
     r"embedding_bag: include_last_offset=True needs offsets ending at the 2 indices"),
    (lambda: nn.EmbeddingBag(3, 2, mode="median"),
     r"EmbeddingBag: mode must be 'sum', 'mean' or 'max'"),
    (lambda: nn.Embedding(3, 2, max_norm=-1.0), r"Embedding: max_norm must be a positive"),
    (lambda: nn.Embedding(3, 2, _weight=np.ones((2, 2))),
     r"Embedding: _weight of shape \(2, 2\), expected \(3, 2\)"),
    (lambda: cr.jit(lambda i: F.embedding(i, np.ones((3, 2)), max_norm=1.0))(np.array([0])),
     r"embedding: max_norm rescales the table's rows in place"),
    (lambda: _rescale_a_table_a_graph_still_needs(),
     r"Embedding: max_norm rescales the table's rows in place, but a graph not yet run "
     r"backward still needs the table's numbers"),
])
def test_bad_input_is_a_one_line_error(call, message):
    with pytest.raises((ValueError, IndexError)) as info:
        call()
    assert "\n" not in str(info.value)
    assert re.search(message, str(info.value)), str(info.value)
