"""chainrule.data's IterableDataset (and ChainDataset) in a DataLoader, and
WeightedRandomSampler, against torch.utils.data: the same batches from the same stream,
torch's lengths and refusals; the sampler's draws follow the weights, repeat for a
seed, and come from the default generator without one."""

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import chainrule as cr
from chainrule.data import (ChainDataset, DataLoader, IterableDataset,
                            WeightedRandomSampler)


def make_stream(base, n, length=True):
    """The same stream of (features, label) pairs as a chainrule and a torch data set."""
    rng = np.random.default_rng(n)
    samples = [(rng.normal(size=3), int(rng.integers(0, 5))) for _ in range(n)]

    class Stream(base):
        def __iter__(self):
            return iter(samples)

    if length:
        Stream.__len__ = lambda self: n
    return Stream()


def as_lists(batches):
    out = []
    for batch in batches:
        if isinstance(batch, (list, tuple)):
            out.append([np.asarray(getattr(b, "data", b)).tolist() for b in batch])
        else:
            out.append(np.asarray(getattr(batch, "data", batch)).tolist())
    return out


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (4, False), (4, True),
                                                   (10, False), (None, False)])
def test_loader_batches_a_stream_as_torch(batch_size, drop_last):
    ours = DataLoader(make_stream(IterableDataset, 10), batch_size=batch_size,
                      drop_last=drop_last)
    theirs = tud.DataLoader(make_stream(tud.IterableDataset, 10), batch_size=batch_size,
                            drop_last=drop_last)
    assert len(ours) == len(theirs)
    got, expected = list(ours), list(theirs)
    assert as_lists(got) == as_lists(expected)
    if batch_size is not None:
        features, labels = got[0]
        assert features.dtype == np.float64 and labels.dtype == np.int64
    assert as_lists(ours) == as_lists(got)              # each pass reads the stream anew


def test_a_stream_without_length_has_no_len_but_loads():
    loader = DataLoader(make_stream(IterableDataset, 5, length=False), batch_size=2)
    with pytest.raises(TypeError):
        len(loader)
    assert [len(labels) for _, labels in loader] == [2, 2, 1]


def test_a_generator_function_stream_and_dict_samples():
    class Squares(IterableDataset):
        def __iter__(self):
            for i in range(5):
                yield {"x": float(i), "y": i * i}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b["y"].tolist() for b in batches] == [[0, 1], [4, 9], [16]]
    assert batches[0]["x"].dtype == np.float64
    assert [b.tolist() for b in DataLoader(Squares(), batch_size=3,
                                           collate_fn=lambda s: cr.tensor([d["y"] for d in s]))] \
        == [[0, 1, 4], [9, 16]]


@pytest.mark.parametrize("option", [dict(shuffle=True), dict(sampler=[0, 1]),
                                    dict(batch_sampler=[[0, 1]], batch_size=1)])
def test_loader_refuses_order_options_for_a_stream_as_torch(option):
    name = next(iter(option))
    with pytest.raises(ValueError, match=f"DataLoader with IterableDataset: expected "
                                         f"unspecified {name} option") as ours:
        DataLoader(make_stream(IterableDataset, 4), **option)
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(make_stream(tud.IterableDataset, 4), **option)
    assert str(theirs.value).startswith(str(ours.value).split("DataLoader: ")[-1][:60])
    assert "\n" not in str(ours.value)
    DataLoader(make_stream(IterableDataset, 4), shuffle=False)   # False is "unspecified"


def test_chain_dataset_and_plus():
    a, b = make_stream(IterableDataset, 3), make_stream(IterableDataset, 4)
    chained = a + b
    assert isinstance(chained, ChainDataset) and len(chained) == 7
    theirs = make_stream(tud.IterableDataset, 3) + make_stream(tud.IterableDataset, 4)
    assert as_lists(DataLoader(chained, batch_size=3)) == \
        as_lists(tud.DataLoader(theirs, batch_size=3))
    with pytest.raises(TypeError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([[1, 2]]))


def test_an_iterable_dataset_is_not_indexed_and_must_define_iter():
    class Empty(IterableDataset):
        pass

    with pytest.raises(TypeError, match="Empty: a subclass of IterableDataset defines "
                                        "__iter__"):
        iter(Empty())
    with pytest.raises(TypeError, match="its samples are read by iterating it"):
        make_stream(IterableDataset, 2)[0]


# =======================================================================================
# WeightedRandomSampler
# =======================================================================================

def test_weighted_sampler_follows_the_weights():
    weights = np.array([1.0, 0.0, 3.0, 6.0])
    sampler = WeightedRandomSampler(weights, 20000, generator=cr.Generator().manual_seed(3))
    draws = np.array(list(sampler))
    assert len(sampler) == 20000 and len(draws) == 20000 and draws.dtype.kind == "i"
    frequencies = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(frequencies, weights / weights.sum(), atol=0.015)
    assert frequencies[1] == 0


def test_weighted_sampler_without_replacement_draws_each_index_once_zeros_last():
    g = cr.Generator().manual_seed(4)
    for _ in range(5):
        draws = list(WeightedRandomSampler([5.0, 1.0, 0.0, 2.0], 4, replacement=False,
                                           generator=g))
        assert sorted(draws) == [0, 1, 2, 3] and draws[-1] == 2   # weight 0 comes last
    assert sorted(tud.WeightedRandomSampler([5.0, 1.0, 0.0, 2.0], 4, replacement=False)) == \
        [0, 1, 2, 3]


def test_weighted_sampler_seeds_and_the_default_generator():
    w = [0.2, 0.5, 0.3]
    a = list(WeightedRandomSampler(w, 8, generator=5))
    b = list(WeightedRandomSampler(w, 8, generator=5))
    assert a == b                                          # an int seed: the same draws
    sampler = WeightedRandomSampler(w, 30, generator=np.random.default_rng(6))
    assert list(sampler) != list(sampler)                  # a new draw at each pass
    cr.manual_seed(7)
    first = list(WeightedRandomSampler(w, 30))
    cr.manual_seed(7)
    assert list(WeightedRandomSampler(w, 30)) == first
    assert list(WeightedRandomSampler(cr.tensor(w), 30, generator=9)) == \
        list(WeightedRandomSampler(torch.tensor(w), 30, generator=9))


def test_weighted_sampler_in_a_loader():
    data = cr.data.TensorDataset(np.arange(6.0), np.arange(6))
    sampler = WeightedRandomSampler([0, 0, 1, 0, 0, 1], 10, generator=1)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    labels = np.concatenate([y.tolist() for _, y in loader])
    assert len(loader) == 3 and len(labels) == 10 and set(labels) <= {2, 5}


@pytest.mark.parametrize("args, kwargs, message", [
    (([1.0, 2.0], 0), {}, r"num_samples should be a positive integer value, but got "
                          r"num_samples=0"),
    (([1.0, 2.0], 2.5), {}, r"num_samples should be a positive integer value"),
    (([1.0, 2.0], 3), dict(replacement=1), r"replacement should be a boolean value, but "
                                           r"got replacement=1"),
    (([[1.0, 2.0]], 3), {}, r"weights should be a 1d sequence but given weights have "
                            r"shape \(1, 2\)"),
])
def test_weighted_sampler_refuses_as_torch(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        WeightedRandomSampler(*args, **kwargs)
    with pytest.raises(ValueError, match=message.split(",")[0].split(" but")[0]):
        tud.WeightedRandomSampler(*args, **kwargs)


def test_weighted_sampler_refuses_negative_or_too_many_without_replacement():
    with pytest.raises(ValueError, match="non-negative"):
        list(WeightedRandomSampler([1.0, -1.0], 2, generator=0))
    with pytest.raises(ValueError, match="cannot draw 3 samples without replacement"):
        list(WeightedRandomSampler([1.0, 1.0], 3, replacement=False, generator=0))
