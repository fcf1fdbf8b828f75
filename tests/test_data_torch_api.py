"""chainrule.data's PyTorch surface (Dataset, TensorDataset, ConcatDataset, Subset,
random_split, the samplers, DataLoader, default_collate) against torch.utils.data: the
same lengths, batches, dtypes and refusals where torch's behaviour is deterministic, and
properties (permutations, repeatability) where it is random."""

import warnings
from collections import namedtuple

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import chainrule as cr
from chainrule import data as crd


class Names(crd.Dataset):
    """makemore's data: (context of 3 character indices, next character) pairs."""

    def __init__(self, words, block_size=3):
        chars = sorted(set("".join(words)))
        stoi = {c: i + 1 for i, c in enumerate(chars)}
        self.pairs = []
        for w in words:
            context = [0] * block_size
            for ch in w + ".":
                ix = stoi.get(ch, 0)
                self.pairs.append((context, ix))
                context = context[1:] + [ix]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        context, target = self.pairs[i]
        return cr.tensor(context).long(), cr.tensor(target).long()


class TorchSquares(tud.Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return torch.tensor([i, i * i]), float(i)


class Squares(crd.Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return np.array([i, i * i]), float(i)


def _as_numpy(batch):
    if isinstance(batch, torch.Tensor):
        return batch.numpy()
    if isinstance(batch, cr.Tensor):
        return batch.data
    return np.asarray(batch)


def _same_batches(ours, theirs):
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            x, y = _as_numpy(x), _as_numpy(y)
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)


# --- data sets ---------------------------------------------------------------------------

def test_a_dataset_subclass_batches_as_torchs():
    for batch_size, drop_last in ((3, False), (3, True), (7, False), (10, False), (10, True)):
        ours = crd.DataLoader(Squares(), batch_size=batch_size, drop_last=drop_last)
        theirs = tud.DataLoader(TorchSquares(), batch_size=batch_size, drop_last=drop_last)
        assert len(ours) == len(theirs)
        _same_batches(ours, theirs)
        assert all(isinstance(x, cr.Tensor) for x, _ in ours)


def test_the_base_classes_say_what_a_subclass_defines():
    with pytest.raises(NotImplementedError, match="Dataset defines __getitem__"):
        crd.Dataset()[0]
    with pytest.raises(NotImplementedError, match="Sampler defines __iter__"):
        iter(crd.Sampler())


def test_plus_concatenates_as_torchs_concat_dataset():
    a, b = crd.TensorDataset(np.arange(3)), crd.TensorDataset(np.arange(10, 14))
    ta, tb = tud.TensorDataset(torch.arange(3)), tud.TensorDataset(torch.arange(10, 14))
    ours, theirs = a + b, ta + tb
    assert isinstance(ours, crd.ConcatDataset)
    assert len(ours) == len(theirs) and ours.cumulative_sizes == theirs.cumulative_sizes
    for i in range(-len(ours), len(ours)):
        assert int(ours[i][0]) == int(theirs[i][0])
    assert len(ours + a) == 10
    with pytest.raises(ValueError, match="ConcatDataset: expected at least one"):
        crd.ConcatDataset([])


def test_tensor_dataset_keeps_its_name_for_the_arrays():
    X = cr.tensor(np.zeros((4, 2)))
    ds = crd.TensorDataset(X, np.arange(4))
    assert ds.tensors[0] is X and len(ds.tensors) == 2
    assert isinstance(ds, crd.Dataset)


def test_subset_indexes_through_its_indices_as_torchs():
    base = list(range(100, 110))
    ours, theirs = crd.Subset(base, [3, 1, 4]), tud.Subset(base, [3, 1, 4])
    assert len(ours) == len(theirs) == 3
    assert [ours[i] for i in range(3)] == [theirs[i] for i in range(3)]
    assert ours.__getitems__([2, 0]) == theirs.__getitems__([2, 0])


@pytest.mark.parametrize("n, fractions", [
    (10, [0.9, 0.1]), (7, [0.5, 0.5]), (11, [0.3, 0.3, 0.4]), (3, [0.2, 0.2, 0.2, 0.2, 0.2]),
    (32033, [0.8, 0.1, 0.1]), (5, [1.0]), (100, [0.333, 0.333, 0.334])])
def test_random_split_rounds_fractions_as_torch(n, fractions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch warns of an empty part too)
        ours = crd.random_split(range(n), fractions, generator=cr.Generator().manual_seed(0))
        theirs = tud.random_split(range(n), fractions,
                                  generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in ours] == [len(p) for p in theirs]
    assert sorted(i for p in ours for i in p) == list(range(n))


def test_random_split_takes_lengths_and_is_seeded():
    parts = crd.random_split(range(10), [3, 7], generator=cr.Generator().manual_seed(42))
    again = crd.random_split(range(10), [3, 7], generator=cr.Generator().manual_seed(42))
    other = crd.random_split(range(10), [3, 7], generator=cr.Generator().manual_seed(43))
    assert [list(p) for p in parts] == [list(p) for p in again] != [list(p) for p in other]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    cr.manual_seed(5)
    first = [list(p) for p in crd.random_split(range(10), [5, 5])]
    cr.manual_seed(5)
    assert [list(p) for p in crd.random_split(range(10), [5, 5])] == first
    assert [list(p) for p in crd.random_split(range(10), [5, 5], generator=1)] == \
        [list(p) for p in crd.random_split(range(10), [5, 5], generator=1)]


def test_random_split_refuses_what_torch_refuses():
    for lengths in ([3, 3], [0.5, 0.6], [11]):
        with pytest.raises(ValueError):
            tud.random_split(range(10), lengths)
        with pytest.raises(ValueError, match=r"random_split: .*expected "):
            crd.random_split(range(10), lengths)
    with pytest.raises(ValueError):
        tud.random_split(range(10), [1.5, -0.5])
    with pytest.raises(ValueError, match="random_split: the fraction at index 0 is 1.5"):
        crd.random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="random_split: the split at index 2 is empty"):
        crd.random_split(range(2), [0.5, 0.5, 0.0], generator=cr.Generator())
    with pytest.raises(TypeError, match="random_split: generator= must be a cr.Generator"):
        crd.random_split(range(2), [1, 1], generator=torch.Generator())


# --- samplers ----------------------------------------------------------------------------

def test_sequential_and_batch_samplers_are_torchs():
    assert list(crd.SequentialSampler(range(5))) == list(tud.SequentialSampler(range(5)))
    assert len(crd.SequentialSampler("abcd")) == 4
    for n, size, drop in ((10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                          (2, 5, True), (0, 2, False)):
        ours = crd.BatchSampler(crd.SequentialSampler(range(n)), size, drop)
        theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), size, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert list(crd.BatchSampler([5, 2, 7], 2, False)) == [[5, 2], [7]]


def test_batch_sampler_refuses_what_torch_refuses():
    for size, drop in ((0, False), (-1, False), (2.0, False), (True, False), (2, 1)):
        with pytest.raises(ValueError):
            tud.BatchSampler(range(4), size, drop)
        with pytest.raises(ValueError, match="BatchSampler: .* got (batch_size|drop_last)="):
            crd.BatchSampler(range(4), size, drop)


def test_random_sampler_is_a_seeded_permutation_new_at_each_pass():
    sampler = crd.RandomSampler(range(50), generator=cr.Generator().manual_seed(1))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second and len(sampler) == 50
    again = crd.RandomSampler(range(50), generator=cr.Generator().manual_seed(1))
    assert list(again) == first
    other = crd.RandomSampler(range(50), generator=cr.Generator().manual_seed(2))
    assert list(other) != first
    numpy_rng = crd.RandomSampler(range(50), generator=np.random.default_rng(1))
    assert sorted(numpy_rng) == list(range(50))


def test_random_sampler_without_a_generator_follows_manual_seed():
    sampler = crd.RandomSampler(range(30))
    cr.manual_seed(7)
    first = list(sampler)
    cr.manual_seed(7)
    it = iter(sampler)
    cr.rand(5)  # other draws during the pass leave its order alone (the seed is taken)
    assert list(it) == first
    cr.manual_seed(8)
    assert list(sampler) != first


def test_random_sampler_with_replacement_and_num_samples():
    g = cr.Generator().manual_seed(0)
    draws = crd.RandomSampler(range(5), replacement=True, num_samples=1000, generator=g)
    got = list(draws)
    assert len(draws) == len(got) == 1000 and set(got) == set(range(5))
    assert len(crd.RandomSampler(range(5), replacement=True, generator=g)) == 5
    # without replacement, more than n: whole permutations, then part of one (torch's)
    more = list(crd.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3]
    assert len(set(more[8:])) == 2
    # an endless stream is drawn lazily
    endless = crd.RandomSampler(range(27), replacement=True, num_samples=10 ** 10, generator=g)
    loader = crd.DataLoader(list(range(27)), sampler=endless, batch_size=32)
    assert len(loader) == 10 ** 10 // 32
    batch = next(iter(loader))
    assert batch.shape == (32,) and batch.dtype == np.int64


def test_random_sampler_refuses_what_torch_refuses():
    with pytest.raises(TypeError):
        tud.RandomSampler(range(3), replacement=1)
    with pytest.raises(TypeError, match="RandomSampler: replacement must be a bool, got "
                                        "replacement=1"):
        crd.RandomSampler(range(3), replacement=1)
    for bad in (0, -2, 2.5):
        with pytest.raises(ValueError):
            tud.RandomSampler(range(3), num_samples=bad)
        with pytest.raises(ValueError, match="RandomSampler: num_samples must be a positive "
                                             "int"):
            crd.RandomSampler(range(3), num_samples=bad)
    with pytest.raises(ValueError):
        crd.RandomSampler([])
    with pytest.raises(TypeError, match="RandomSampler: generator= must be .* got Generator"):
        crd.RandomSampler(range(3), generator=torch.Generator())


# --- the loader ------------------------------------------------------------------------

def test_loader_lengths_and_order_match_torchs():
    X, y = np.arange(22.0).reshape(11, 2), np.arange(11)
    for kwargs in (dict(), dict(batch_size=4), dict(batch_size=4, drop_last=True),
                   dict(batch_size=11), dict(batch_size=20, drop_last=True)):
        ours = crd.DataLoader(crd.TensorDataset(cr.tensor(X), cr.tensor(y).long()), **kwargs)
        theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(X), torch.tensor(y)), **kwargs)
        assert len(ours) == len(theirs)
        _same_batches(ours, theirs)
        # the same through the per-sample path
        listed = crd.DataLoader([(X[i], int(y[i])) for i in range(11)], **kwargs)
        _same_batches(listed, theirs)


def test_a_loader_over_a_custom_batch_sampler_and_sampler():
    X = np.arange(10)
    batches = [[9, 0], [3, 4, 5], [1]]
    ours = crd.DataLoader(crd.TensorDataset(X), batch_sampler=batches)
    theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(X)), batch_sampler=batches)
    assert len(ours) == len(theirs) == 3
    _same_batches(ours, theirs)
    order = [2, 8, 5, 1]
    ours = crd.DataLoader(X.tolist(), sampler=order, batch_size=3)
    theirs = tud.DataLoader(X.tolist(), sampler=order, batch_size=3)
    assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]


def test_batch_size_none_gives_samples_converted_as_torchs():
    samples = [(np.array([i, i]), i) for i in range(3)]
    ours = list(crd.DataLoader(samples, batch_size=None))
    theirs = list(tud.DataLoader(samples, batch_size=None))
    assert len(ours) == len(theirs) == 3
    for (x, n), (tx, tn) in zip(ours, theirs):
        assert isinstance(x, cr.Tensor) and x.dtype == np.int64
        np.testing.assert_array_equal(x.data, tx.numpy())
        assert n == tn and type(n) is int
    assert len(crd.DataLoader(samples, batch_size=None)) == 3


@pytest.mark.parametrize("kwargs", [
    dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(batch_size=0),
    dict(batch_size=-3),
    dict(num_workers=-1),
    dict(timeout=-1.0),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
    dict(multiprocessing_context="spawn"),
    dict(num_workers=2, prefetch_factor=-1),
])
def test_the_loader_refuses_what_torch_refuses(kwargs):
    data = list(range(4))
    with pytest.raises(ValueError):
        list(tud.DataLoader(data, **kwargs))
    with pytest.raises(ValueError, match=r"^DataLoader: "):
        crd.DataLoader(data, **kwargs)


def test_the_loader_errors_name_the_combination():
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        crd.DataLoader(range(3), sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive with "
                                         "batch_size, shuffle, sampler, and drop_last, got "
                                         "batch_size=4"):
        crd.DataLoader(range(3), batch_sampler=[[0]], batch_size=4)
    with pytest.raises(TypeError, match="DataLoader: sampler must be a Sampler or an iterable "
                                        "of indices, got bool True"):
        crd.DataLoader(range(3), 2, True, True)  # (chainrule's old 4th argument, drop_last)
    with pytest.raises(ValueError, match="DataLoader: timeout applies to workers"):
        crd.DataLoader(range(3), timeout=1.0)


def test_workers_run_in_this_process_with_the_same_batches():
    X = np.arange(20.0).reshape(10, 2)
    plain = [b.tolist() for b in crd.DataLoader(list(X), batch_size=3)]
    workers = crd.DataLoader(list(X), batch_size=3, num_workers=4, pin_memory=True,
                             persistent_workers=True, prefetch_factor=4, timeout=5.0,
                             multiprocessing_context="spawn", pin_memory_device="cpu",
                             in_order=False)
    assert [b.tolist() for b in workers] == plain and len(workers) == 4
    with pytest.raises(ValueError, match="DataLoader: worker_init_fn runs in worker "
                                         "processes, and chainrule starts none"):
        crd.DataLoader(list(X), num_workers=2, worker_init_fn=print)
    # with no workers torch never calls it, and neither does chainrule
    assert len(list(crd.DataLoader(list(X), worker_init_fn=print))) == 10


def test_shuffle_is_a_new_permutation_each_pass_and_seeded():
    data = crd.TensorDataset(np.arange(40))
    loader = crd.DataLoader(data, batch_size=8, shuffle=True,
                            generator=cr.Generator().manual_seed(3))
    first = np.concatenate([b for b, in loader]).tolist()
    second = np.concatenate([b for b, in loader]).tolist()
    assert sorted(first) == sorted(second) == list(range(40)) and first != second
    again = crd.DataLoader(data, batch_size=8, shuffle=True,
                           generator=cr.Generator().manual_seed(3))
    assert np.concatenate([b for b, in again]).tolist() == first
    unseeded = crd.DataLoader(data, batch_size=8, shuffle=True)
    cr.manual_seed(11)
    a = np.concatenate([b for b, in unseeded]).tolist()
    cr.manual_seed(11)
    assert np.concatenate([b for b, in unseeded]).tolist() == a
    cr.manual_seed(12)
    assert np.concatenate([b for b, in unseeded]).tolist() != a
    assert isinstance(loader.sampler, crd.RandomSampler)
    assert isinstance(crd.DataLoader(data).sampler, crd.SequentialSampler)
    assert isinstance(crd.DataLoader(data, shuffle=False).batch_sampler, crd.BatchSampler)


def test_a_split_of_a_tensor_dataset_batches_its_rows():
    X = cr.tensor(np.arange(20.0).reshape(10, 2), requires_grad=True)
    Y = np.arange(10)
    train, test = crd.random_split(crd.TensorDataset(X, Y), [0.8, 0.2],
                                   generator=cr.Generator().manual_seed(0))
    seen = []
    total = 0
    for xb, yb in crd.DataLoader(train, batch_size=3, shuffle=True, generator=1):
        assert isinstance(xb, cr.Tensor) and isinstance(yb, np.ndarray)
        np.testing.assert_array_equal(xb.data[:, 0], 2.0 * yb)
        seen += yb.tolist()
        total = total + xb.sum()
    assert sorted(seen) == sorted(train.indices) and len(seen) == 8
    total.backward()
    np.testing.assert_array_equal(X.grad[sorted(train.indices)], np.ones((8, 2)))
    np.testing.assert_array_equal(X.grad[sorted(test.indices)], np.zeros((2, 2)))


# --- collate --------------------------------------------------------------------------

def test_default_collate_of_nested_structures_as_torchs():
    Point = namedtuple("Point", "x y")
    samples = [{"img": np.full((2, 2), i, dtype=np.float32), "label": i, "w": 0.5 * i,
                "ok": i % 2 == 0, "name": f"s{i}", "pair": (i, [np.int32(i), 1.0]),
                "pt": Point(i, float(i)), "t": torch.tensor([i, i])} for i in range(3)]
    ours_samples = [dict(s, t=cr.tensor([i, i]).long()) for i, s in enumerate(samples)]
    ours, theirs = crd.default_collate(ours_samples), tud.default_collate(samples)
    assert set(ours) == set(theirs)

    def same(a, b):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, cr.Tensor)
            assert a.dtype == b.numpy().dtype and a.shape == tuple(b.shape)
            np.testing.assert_array_equal(a.data, b.numpy())
        elif isinstance(b, (list, tuple)):
            assert len(a) == len(b)
            if isinstance(b, Point):
                assert isinstance(a, Point)
            for u, v in zip(a, b):
                same(u, v)
        else:
            assert a == b

    for key in theirs:
        same(ours[key], theirs[key])
    assert type(ours["pair"]) is tuple and type(ours["pair"][1]) is list  # (torch: lists)


def test_default_collate_dtypes_and_gradients():
    assert crd.default_collate([1, 2]).dtype == np.int64
    assert crd.default_collate([1.0, 2]).dtype == np.float64
    assert crd.default_collate([True, False]).dtype == np.bool_
    assert crd.default_collate([np.float32(1), np.float32(2)]).dtype == np.float32
    v = cr.tensor(2.0, requires_grad=True)
    crd.default_collate([v, 3 * v]).sum().backward()
    assert v.grad == 4.0
    with pytest.raises(TypeError):
        tud.default_collate([None, None])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy "
                                        "arrays, numbers, dicts or lists; found NoneType"):
        crd.default_collate([None, None])
    with pytest.raises(TypeError, match="found an array of dtype object"):
        crd.default_collate([np.array([None]), np.array([None])])
    with pytest.raises(RuntimeError):
        tud.default_collate([(1, 2), (1,)])
    with pytest.raises(RuntimeError, match="default_collate: each sequence .* got lengths "
                                           r"\[2, 1\]"):
        crd.default_collate([(1, 2), (1,)])


def test_the_older_collate_and_batches_are_unchanged():
    out = crd.collate([(np.zeros(2), 1), (np.ones(2), 2)])
    assert isinstance(out, tuple) and isinstance(out[0], np.ndarray)
    got = [yb.tolist() for _, yb in crd.batches(np.zeros((5, 1)), np.arange(5), 2,
                                                 shuffle=False)]
    assert got == [[0, 1], [2, 3], [4]]
    custom = crd.DataLoader([1, 2, 3], batch_size=2, collate_fn=crd.collate)
    assert [type(b).__name__ for b in custom] == ["ndarray", "ndarray"]


# --- makemore ---------------------------------------------------------------------------

def test_a_makemore_loop_trains_an_embedding():
    g = cr.Generator().manual_seed(2147483647)
    words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"]
    ds = Names(words)
    train, val = crd.random_split(ds, [0.9, 0.1], generator=g)
    assert len(train) + len(val) == len(ds)
    loader = crd.DataLoader(train, batch_size=16, shuffle=True, generator=g)
    vocab = 1 + len(set("".join(words)))
    C = cr.randn((vocab, 4), generator=g, requires_grad=True)
    W = cr.randn((12, vocab), generator=g, requires_grad=True)
    opt = cr.optim.AdamW([C, W], lr=0.01)
    X, Y = next(iter(loader))
    assert X.shape == (16, 3) and X.dtype == np.int64 and Y.shape == (16,)
    assert Y.dtype == np.int64
    emb = C[X]
    assert emb.shape == (16, 3, 4)
    logits = emb.reshape(16, 12) @ W
    loss = cr.nn.functional.cross_entropy(logits, Y)
    opt.zero_grad()
    loss.backward()
    assert C.grad.shape == C.shape and np.abs(C.grad[X.data.ravel()]).sum() > 0
    unused = np.setdiff1d(np.arange(vocab), X.data)
    np.testing.assert_array_equal(C.grad[unused], 0.0)
    before = C.data.copy()
    opt.step()
    assert not np.array_equal(before, C.data)
    after = cr.nn.functional.cross_entropy(C[X].reshape(16, 12) @ W, Y)
    assert after.item() < loss.item()
    batches = [(x.shape[0], y.shape[0]) for x, y in loader]
    assert sum(b for b, _ in batches) == len(train) and len(batches) == len(loader)
