"""PyTorch's random functions and Generator (chainrule/api/torch_random.py), checked against
torch by their properties: the same calls accepted and refused, the same shapes, the
dtypes (float64 where torch's default is float32, int64 as torch), the ranges, and the
frequencies. The numbers themselves are NumPy's (PCG64), not torch's: reproducible from
a seed, but a different stream.

No test depends on another: each seeds what it draws from, and the default generator's
state is put back after every test (the fixture below). A frequency is checked against
the binomial (or normal) bound of five standard deviations, from a fixed seed, so the
test gives the same answer at every run.
"""

import copy
import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule.torch_random import default_generator

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def default_stream_put_back():
    state = default_generator.get_state()
    yield
    default_generator.set_state(state)


def dtype(lib, name):
    """torch.float32 for torch, np.float32 for chainrule (which takes NumPy's dtypes)."""
    return getattr(torch if lib is torch else np, name)


def floats(lib, data):
    return lib.tensor(data, dtype=dtype(lib, "float64"))


def ints(lib, data):
    """An int64 tensor: cr.tensor makes floats of ints, so an ndarray stands in."""
    return torch.tensor(data) if lib is torch else np.array(data, dtype=np.int64)


# --- the same calls, the same shapes; torch's float32 is chainrule's float64 ------------

CALLS = {
    "rand(2, 3)": lambda lib: lib.rand(2, 3),
    "rand((2, 3))": lambda lib: lib.rand((2, 3)),
    "rand([2, 3])": lambda lib: lib.rand([2, 3]),
    "rand(())": lambda lib: lib.rand(()),
    "randn(4)": lambda lib: lib.randn(4),
    "randn(2, 0)": lambda lib: lib.randn(2, 0),
    "rand(2, dtype=float32)": lambda lib: lib.rand(2, dtype=dtype(lib, "float32")),
    "randint(5, (3,))": lambda lib: lib.randint(5, (3,)),
    "randint(2, 5, (2, 2))": lambda lib: lib.randint(2, 5, (2, 2)),
    "randint(low=, high=, size=)": lambda lib: lib.randint(low=2, high=5, size=(3,)),
    "randint(high=, size=)": lambda lib: lib.randint(high=5, size=(3,)),
    "randint(5, size=[2])": lambda lib: lib.randint(5, size=[2]),
    "randint(-3, 3, (4,))": lambda lib: lib.randint(-3, 3, (4,)),
    "randint(..., dtype=float64)": lambda lib: lib.randint(0, 3, (3,), dtype=dtype(lib, "float64")),
    "randperm(5)": lambda lib: lib.randperm(5),
    "randperm(0)": lambda lib: lib.randperm(0),
    "multinomial 1-d": lambda lib: lib.multinomial(floats(lib, [1.0, 2, 3]), 2),
    "multinomial 2-d": lambda lib: lib.multinomial(floats(lib, [[1.0, 2, 3], [0, 0, 1]]), 1),
    "multinomial replacement": lambda lib: lib.multinomial(
        floats(lib, [[1.0, 2, 3], [0, 0, 1]]), num_samples=5, replacement=True),
    "multinomial no rows": lambda lib: lib.multinomial(floats(lib, np.ones((0, 3))), 2),
    "multinomial past the non-zero": lambda lib: lib.multinomial(floats(lib, [1.0, 0, 3]), 3),
    "normal(T, T)": lambda lib: lib.normal(floats(lib, [0.0, 10]), floats(lib, [1.0, 2])),
    "normal(T)": lambda lib: lib.normal(floats(lib, [0.0, 10])),
    "normal(T, 2.0)": lambda lib: lib.normal(floats(lib, [0.0, 10]), 2.0),
    "normal(0.0, T)": lambda lib: lib.normal(0.0, floats(lib, [1.0, 2])),
    "normal(T, T) broadcast": lambda lib: lib.normal(floats(lib, [0.0, 1]),
                                                     floats(lib, [[1.0], [2]])),
    "normal(2.0, 3.0, (2, 3))": lambda lib: lib.normal(2.0, 3.0, (2, 3)),
    "normal(2, 3, size=[3])": lambda lib: lib.normal(2, 3, size=[3]),
    "normal std 0": lambda lib: lib.normal(0.0, 0.0, (2,)),
    "bernoulli(T)": lambda lib: lib.bernoulli(floats(lib, [0.0, 1.0, 0.5])),
    "bernoulli(T, 0.5)": lambda lib: lib.bernoulli(floats(lib, [[0.0], [1.0]]), 0.5),
    "bernoulli(T, p=)": lambda lib: lib.bernoulli(floats(lib, [0.2]), p=1.0),
    "rand_like": lambda lib: lib.rand_like(floats(lib, [[1.0, 2.0]])),
    "randn_like": lambda lib: lib.randn_like(floats(lib, [1.0, 2.0, 3.0])),
    "rand_like(ints, dtype=)": lambda lib: lib.rand_like(ints(lib, [1, 2]),
                                                         dtype=dtype(lib, "float32")),
}


ASKS_FOR_FLOAT32 = {"rand(2, dtype=float32)", "rand_like(ints, dtype=)"}


@pytest.mark.parametrize("name", CALLS)
def test_the_same_call_gives_the_same_shape_and_torchs_dtype_in_float64(name):
    ours, theirs = CALLS[name](cr), CALLS[name](torch)
    assert type(ours) is cr.Tensor and ours.shape == tuple(theirs.shape)
    expected = str(theirs.dtype).removeprefix("torch.")
    if expected == "float32" and name not in ASKS_FOR_FLOAT32:
        expected = "float64"  # chainrule's default float
    assert ours.dtype == np.dtype(expected)


def test_integer_draws_are_int64_tensors_and_float_draws_float64():
    g = cr.Generator()
    for x in (cr.randint(0, 3, (2,), generator=g), cr.randperm(3, generator=g),
              cr.multinomial(cr.tensor([1.0, 1.0]), 1, generator=g)):
        assert type(x) is cr.Tensor and x.dtype == np.int64 and not x.requires_grad
    for x in (cr.rand(2, generator=g), cr.randn(2, generator=g), cr.normal(0, 1, (2,)),
              cr.bernoulli(cr.zeros(2), generator=g)):
        assert x.dtype == np.float64


# --- ranges ------------------------------------------------------------------------------

def test_every_draw_stays_in_its_range():
    g = cr.Generator().manual_seed(11)
    u = cr.rand(10_000, generator=g).data
    assert u.min() >= 0 and u.max() < 1
    u32 = cr.rand(10_000, generator=g, dtype=np.float32).data
    assert u32.dtype == np.float32 and u32.min() >= 0 and u32.max() < 1
    k = cr.randint(-3, 4, (10_000,), generator=g).data
    assert set(k.tolist()) == set(range(-3, 4))
    assert sorted(cr.randperm(50, generator=g).tolist()) == list(range(50))
    m = cr.multinomial(cr.tensor([[0.0, 1, 2, 0], [5, 0, 0, 1]]), 40, True, generator=g).data
    assert set(m[0].tolist()) == {1, 2} and set(m[1].tolist()) == {0, 3}
    b = cr.bernoulli(cr.full((1000,), 0.5), generator=g).data
    assert set(b.tolist()) == {0.0, 1.0}
    assert cr.bernoulli(cr.tensor([0.0, 1.0] * 50), generator=g).tolist() == [0.0, 1.0] * 50


# --- errors: what torch refuses, chainrule refuses, in one line naming the function -----

BAD = {
    "multinomial negative": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, -2, 3]), 1)),
    "multinomial inf": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, np.inf, 3]), 1)),
    "multinomial nan": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, np.nan, 3]), 1)),
    "multinomial zero sum": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [0.0, 0, 0]), 1)),
    "multinomial zero-sum row": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [[1.0, 0], [0, 0]]), 1, True)),
    "multinomial too many": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, 2, 3]), 4)),
    "multinomial no category": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, np.ones(0)), 1)),
    "multinomial 0 samples": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, 2]), 0)),
    "multinomial -1 samples": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, 2]), -1)),
    "multinomial 1.0 samples": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, [1.0, 2]), 1.0)),
    "multinomial 3-d": ("multinomial", lambda lib: lib.multinomial(
        floats(lib, np.ones((2, 2, 2))), 1)),
    "multinomial 0-d": ("multinomial", lambda lib: lib.multinomial(floats(lib, 1.0), 1)),
    "multinomial ints": ("multinomial", lambda lib: lib.multinomial(ints(lib, [1, 2]), 1)),
    "randint low == high": ("randint", lambda lib: lib.randint(5, 5, (3,))),
    "randint low > high": ("randint", lambda lib: lib.randint(5, 2, (3,))),
    "randint(0, size)": ("randint", lambda lib: lib.randint(0, (3,))),
    "randint float bounds": ("randint", lambda lib: lib.randint(0.5, 3.5, (3,))),
    "randint int size": ("randint", lambda lib: lib.randint(0, 3, 3)),
    "randint no size": ("randint", lambda lib: lib.randint(3)),
    "randint past int64": ("randint", lambda lib: lib.randint(0, 2 ** 64, (2,))),
    "randint requires_grad": ("randint", lambda lib: lib.randint(0, 3, (3,),
                                                                 requires_grad=True)),
    "randperm negative": ("randperm", lambda lib: lib.randperm(-1)),
    "randperm float": ("randperm", lambda lib: lib.randperm(2.0)),
    "randperm requires_grad": ("randperm", lambda lib: lib.randperm(3, requires_grad=True)),
    "rand negative size": ("rand", lambda lib: lib.rand(-1)),
    "rand float size": ("rand", lambda lib: lib.rand(2.0)),
    "rand int dtype": ("rand", lambda lib: lib.rand(2, dtype=dtype(lib, "int64"))),
    "randn int dtype": ("randn", lambda lib: lib.randn(2, dtype=dtype(lib, "int64"))),
    "normal negative std (Tensor)": ("normal", lambda lib: lib.normal(
        floats(lib, [0.0, 1]), floats(lib, [1.0, -1]))),
    "normal negative std (number)": ("normal", lambda lib: lib.normal(
        floats(lib, [0.0, 1]), -1.0)),
    "normal negative std (size)": ("normal", lambda lib: lib.normal(0.0, -1.0, (2,))),
    "normal nan std": ("normal", lambda lib: lib.normal(0.0, float("nan"), (2,))),
    "normal numbers without size": ("normal", lambda lib: lib.normal(2.0, 3.0)),
    "normal Tensors with size": ("normal", lambda lib: lib.normal(
        floats(lib, [0.0, 1]), floats(lib, [1.0, 1]), (2,))),
    "normal int size": ("normal", lambda lib: lib.normal(2.0, 3.0, 3)),
    "normal shapes apart": ("normal", lambda lib: lib.normal(
        floats(lib, [0.0, 1, 2]), floats(lib, [1.0, 2]))),
    "normal int mean": ("normal", lambda lib: lib.normal(ints(lib, [0, 1]), 1.0)),
    "bernoulli above 1": ("bernoulli", lambda lib: lib.bernoulli(floats(lib, [0.0, 1.5]))),
    "bernoulli below 0": ("bernoulli", lambda lib: lib.bernoulli(floats(lib, [-0.1, 1.0]))),
    "bernoulli nan": ("bernoulli", lambda lib: lib.bernoulli(floats(lib, [np.nan, 1.0]))),
    "bernoulli p above 1": ("bernoulli", lambda lib: lib.bernoulli(floats(lib, [0.2]), 1.5)),
    "bernoulli ints": ("bernoulli", lambda lib: lib.bernoulli(ints(lib, [0, 1]))),
    "rand_like ints": ("rand_like", lambda lib: lib.rand_like(ints(lib, [1, 2]))),
    "randn_like ints": ("randn_like", lambda lib: lib.randn_like(ints(lib, [1, 2]))),
    "manual_seed float": ("manual_seed", lambda lib: lib.Generator().manual_seed(1.5)),
    "manual_seed str": ("manual_seed", lambda lib: lib.Generator().manual_seed("1")),
    "manual_seed 2**64": ("manual_seed", lambda lib: lib.Generator().manual_seed(2 ** 64)),
    "manual_seed below -2**63": ("manual_seed",
                                 lambda lib: lib.Generator().manual_seed(-2 ** 63 - 1)),
    "set_state floats": ("set_state", lambda lib: lib.Generator().set_state(
        lib.zeros(45))),
    "set_state too short": ("set_state", lambda lib: lib.Generator().set_state(
        lib.Generator().get_state()[:3])),
}


@pytest.mark.parametrize("name, call", BAD.values(), ids=BAD.keys())
def test_what_torch_refuses_chainrule_refuses_in_one_line_naming_the_function(name, call):
    with pytest.raises((RuntimeError, TypeError, ValueError, NotImplementedError)):
        call(torch)
    with pytest.raises((TypeError, ValueError)) as caught:
        call(cr)
    message = str(caught.value)
    assert message.startswith(f"{name}: ") and "\n" not in message, message


def test_a_refused_draw_moves_no_generator():
    g = cr.Generator().manual_seed(4)
    state = g.get_state().tolist()
    with pytest.raises(ValueError, match="sum to 0"):
        cr.multinomial(cr.tensor([[1.0, 1.0], [0.0, 0.0]]), 1, True, generator=g)
    with pytest.raises(ValueError, match=r"expected std >= 0, got std=-2.0"):
        cr.normal(cr.zeros(2), cr.tensor([1.0, -2.0]), generator=g)
    assert g.get_state().tolist() == state


def test_generator_takes_a_numpy_generator_and_refuses_torchs():
    a = cr.randn(3, generator=np.random.default_rng(2))
    assert a.tolist() == np.random.default_rng(2).standard_normal(3).tolist()
    with pytest.raises(TypeError, match=r"randn: generator= must be a cr.Generator .*got "
                                        r"Generator"):
        cr.randn(3, generator=torch.Generator())
    with pytest.raises(TypeError, match="rand: give seed= or generator=, not both"):
        cr.rand(2, seed=0, generator=cr.Generator())
    with pytest.raises(ValueError, match="Generator: chainrule draws on the CPU"):
        cr.Generator(device="cuda")


# --- seeds, streams and states ---------------------------------------------------------

def draw_one_of_each(generator=None):
    p = cr.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 0.0, 1.0, 1.0]])
    return [cr.rand(3, generator=generator), cr.randn(2, 2, generator=generator),
            cr.randint(0, 100, (4,), generator=generator),
            cr.randperm(6, generator=generator),
            cr.multinomial(p, 3, generator=generator),
            cr.multinomial(p, 5, True, generator=generator),
            cr.normal(cr.zeros(3), cr.ones(3), generator=generator),
            cr.normal(1.0, 2.0, (2,), generator=generator),
            cr.bernoulli(cr.full((5,), 0.5), generator=generator),
            cr.rand_like(cr.zeros(2), generator=generator),
            cr.randn_like(cr.zeros(2), generator=generator)]


def as_lists(tensors):
    return [t.tolist() for t in tensors]


def test_the_same_seed_gives_the_same_draws():
    first = as_lists(draw_one_of_each(cr.Generator().manual_seed(7)))
    assert as_lists(draw_one_of_each(cr.Generator().manual_seed(7))) == first
    assert as_lists(draw_one_of_each(cr.Generator().manual_seed(8))) != first
    assert as_lists(draw_one_of_each(cr.Generator())) == \
        as_lists(draw_one_of_each(cr.Generator().manual_seed(67280421310721)))


def test_manual_seed_starts_the_default_stream_again():
    g = cr.manual_seed(5)
    assert g is default_generator and g.initial_seed() == 5
    first = as_lists(draw_one_of_each())
    assert as_lists(draw_one_of_each()) != first  # the stream moves on
    cr.manual_seed(5)
    assert as_lists(draw_one_of_each()) == first
    assert as_lists(draw_one_of_each(cr.Generator().manual_seed(5))) == first
    assert cr.manual_seed(5.0).initial_seed() == 5  # (torch.manual_seed takes int(seed))


def test_two_generators_are_independent_of_each_other_and_of_the_default():
    cr.manual_seed(0)
    default_first = cr.rand(3).tolist()
    cr.manual_seed(0)
    a, b = cr.Generator().manual_seed(1), cr.Generator().manual_seed(1)
    a_first = as_lists(draw_one_of_each(a))
    draw_one_of_each(a)  # a moves on; b and the default do not
    assert as_lists(draw_one_of_each(b)) == a_first
    assert cr.rand(3).tolist() == default_first


def test_rand_and_randn_keep_their_seed_argument():
    assert cr.rand(3, seed=5).tolist() == \
        cr.rand(3, generator=cr.Generator().manual_seed(5)).tolist()
    assert cr.randn(2, 2, seed=5).tolist() == np.random.default_rng(5).standard_normal(
        (2, 2)).tolist()
    rng = np.random.default_rng(3)
    assert cr.rand(2, seed=rng).tolist() != cr.rand(2, seed=rng).tolist()  # drawn from, as is


def test_initial_seed_and_seed_as_torch():
    for seed in (0, 2147483647, -1, -2 ** 63, 2 ** 64 - 1):
        assert cr.Generator().manual_seed(seed).initial_seed() == \
            torch.Generator().manual_seed(seed).initial_seed()
    assert cr.Generator().initial_seed() == torch.Generator().initial_seed()
    g = cr.Generator()
    seed = g.seed()
    assert 0 <= seed < 2 ** 64 and g.initial_seed() == seed
    assert cr.rand(3, generator=g).tolist() == \
        cr.rand(3, generator=cr.Generator().manual_seed(seed)).tolist()


def test_get_state_and_set_state_put_the_stream_back():
    g = cr.Generator().manual_seed(9)
    cr.randn(3, generator=g)  # (an odd number of 32-bit halves: the cached one is kept)
    cr.rand(1, generator=g, dtype=np.float32)
    state = g.get_state()
    assert state.dtype == np.uint8 and state.shape == (45,)
    after = as_lists(draw_one_of_each(g))
    other = cr.Generator().manual_seed(1)
    assert other.set_state(state) is other and other.initial_seed() == 9
    assert as_lists(draw_one_of_each(other)) == after
    assert as_lists(draw_one_of_each(g.set_state(state.data))) == after  # an ndarray too


def test_a_generator_pickles_and_copies_with_its_stream():
    g = cr.Generator().manual_seed(12)
    cr.rand(5, generator=g)
    for twin_of in (lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy):
        twin = twin_of(g)
        assert type(twin) is cr.Generator and twin.initial_seed() == 12
        assert cr.rand(3, generator=twin).tolist() == cr.rand(3, generator=g).tolist()
    assert repr(g) == str(g) == "Generator(initial_seed=12)"


# --- multinomial without replacement, and frequencies ----------------------------------

def test_multinomial_without_replacement_never_repeats_a_category():
    g = cr.Generator().manual_seed(21)
    weights = cr.rand(200, 10, generator=g) + 0.01
    for k in (1, 5, 10):
        rows = cr.multinomial(weights, k, generator=g).data
        assert all(len(set(row)) == k for row in rows.tolist())
    # past the categories with weight, the ones of weight 0 come last, as torch's
    rows = cr.multinomial(cr.tensor([[1.0, 0.0, 3.0, 0.0]] * 50), 4, generator=g).data
    assert all(set(row[:2]) == {0, 2} and set(row[2:]) == {1, 3} for row in rows.tolist())
    theirs = torch.multinomial(torch.tensor([[1.0, 0.0, 3.0, 0.0]] * 50), 4)
    assert all(set(row[:2]) == {0, 2} for row in theirs.tolist())


def within_binomial_bound(counts, n, p):
    """Each count within five standard deviations of n p (a fixed seed: no flake)."""
    counts, p = np.asarray(counts, dtype=float), np.asarray(p, dtype=float)
    return bool((np.abs(counts - n * p) <= 5 * np.sqrt(n * p * (1 - p))).all())


def test_multinomial_frequencies_match_the_weights():
    g = cr.Generator().manual_seed(31)
    weights, n = np.array([1.0, 2.0, 3.0, 4.0]), 20_000  # unnormalised
    p = weights / weights.sum()
    drawn = cr.multinomial(cr.tensor(weights), n, replacement=True, generator=g).data
    assert within_binomial_bound(np.bincount(drawn, minlength=4), n, p)
    # without replacement: the first draw has the weights' law, the second
    # P(j) = sum over i != j of p_i p_j / (1 - p_i)
    rows = cr.multinomial(cr.tensor(np.tile(weights, (n, 1))), 2, generator=g).data
    assert within_binomial_bound(np.bincount(rows[:, 0], minlength=4), n, p)
    second = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j)
                       for j in range(4)])
    assert within_binomial_bound(np.bincount(rows[:, 1], minlength=4), n, second)
    # and torch's agrees with the same bounds
    theirs = torch.multinomial(torch.tensor(np.tile(weights, (n, 1))), 2).numpy()
    assert within_binomial_bound(np.bincount(theirs[:, 1], minlength=4), n, second)


def test_the_other_frequencies_and_moments():
    g, n = cr.Generator().manual_seed(41), 20_000
    assert within_binomial_bound(np.bincount(cr.randint(0, 5, (n,), generator=g).data), n,
                                 [0.2] * 5)
    p = np.array([0.1, 0.5, 0.9])
    b = cr.bernoulli(cr.tensor(np.tile(p, (n, 1))), generator=g).data
    assert within_binomial_bound(b.sum(axis=0), n, p)
    assert within_binomial_bound(cr.bernoulli(cr.zeros(n), 0.3, generator=g).data.sum(), n,
                                 0.3)
    assert within_binomial_bound((cr.rand(n, generator=g).data < 0.25).sum(), n, 0.25)
    x = cr.normal(cr.full((n,), 2.0), 3.0, generator=g).data
    assert abs(x.mean() - 2.0) <= 5 * 3.0 / np.sqrt(n)
    assert abs(x.var() - 9.0) <= 5 * 9.0 * np.sqrt(2 / n)
    z = cr.randn(n, generator=g).data
    assert abs(z.mean()) <= 5 / np.sqrt(n) and abs(z.var() - 1) <= 5 * np.sqrt(2 / n)
    first = np.array([cr.randperm(4, generator=g).data[0] for _ in range(4000)])
    assert within_binomial_bound(np.bincount(first, minlength=4), 4000, [0.25] * 4)


# --- gradients -------------------------------------------------------------------------

def test_requires_grad_where_torch_has_it_and_samples_are_constants():
    g = cr.Generator().manual_seed(2)
    for x in (cr.rand(2, requires_grad=True, generator=g), cr.randn(2, requires_grad=True),
              cr.normal(0.0, 1.0, (2,), requires_grad=True),
              cr.randint(0, 3, (2,), dtype=np.float64, requires_grad=True),
              cr.rand_like(cr.zeros(2), requires_grad=True)):
        assert x.requires_grad and x.grad is None
        (x * x).sum().backward()
        assert x.grad.shape == (2,)
    mean = cr.zeros(3, requires_grad=True)
    assert not cr.normal(mean, 1.0, generator=g).requires_grad  # torch: zero gradients
    noise = cr.randn(3, generator=cr.Generator().manual_seed(3))
    grad = cr.grad(lambda w: (w * cr.randn(3, generator=cr.Generator().manual_seed(3))).sum())
    assert grad(np.ones(3)).tolist() == noise.tolist()


def test_a_draw_inside_vmap_says_what_to_do_instead():
    with pytest.raises(TypeError, match="bernoulli: a generator's draw cannot be batched by "
                                        "cr.vmap"):
        cr.vmap(lambda p: cr.bernoulli(p, generator=cr.Generator()))(np.full((2, 3), 0.5))


# --- cr.jit: every draw is live --------------------------------------------------------

DRAWS = {
    "rand": lambda g, x: x + cr.rand(3, generator=g),
    "randn": lambda g, x: x + cr.randn(3, generator=g),
    "randint": lambda g, x: x + cr.randint(0, 1000, (3,), generator=g),
    "randperm": lambda g, x: x + cr.randperm(3, generator=g),
    "multinomial": lambda g, x: x + cr.multinomial(cr.softmax(x, axis=-1), 3, True,
                                                   generator=g),
    "multinomial without replacement": lambda g, x: x + cr.multinomial(
        cr.softmax(x, axis=-1), 3, generator=g),
    "normal": lambda g, x: cr.normal(x, 2.0, generator=g),
    "normal(size)": lambda g, x: x + cr.normal(1.0, 2.0, (3,), generator=g),
    "bernoulli": lambda g, x: cr.bernoulli(cr.sigmoid(x), generator=g),
    "bernoulli(p)": lambda g, x: cr.bernoulli(x, 0.5, generator=g),
    "rand_like": lambda g, x: cr.rand_like(x, generator=g),
    "randn_like": lambda g, x: cr.randn_like(x, generator=g),
}


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_under_jit_each_call_draws_new_numbers_the_eager_ones(draw):
    eager_g, jit_g = cr.Generator().manual_seed(3), cr.Generator().manual_seed(3)
    step = cr.jit(lambda x: draw(jit_g, x))
    results = []
    for _ in range(4):
        x = cr.zeros(3)
        ours = step(x)
        np.testing.assert_array_equal(ours.data, draw(eager_g, x).data)
        results.append(ours.tolist())
    assert any(r != results[0] for r in results[1:]), results


def test_under_jit_the_default_generator_is_live_and_follows_manual_seed():
    step = cr.jit(lambda x: x + cr.randn(3))
    cr.manual_seed(17)
    jitted = [step(cr.zeros(3)).tolist() for _ in range(3)]
    cr.manual_seed(17)
    assert jitted == [cr.randn(3).tolist() for _ in range(3)]
    assert jitted[0] != jitted[1]


def test_manual_seed_and_set_state_inside_a_jitted_function_run_at_each_call():
    def seeded(x):
        cr.manual_seed(4)
        return x + cr.rand(2)

    g = cr.Generator()

    def restored(x, state):
        g.set_state(state)
        return x + cr.randint(0, 100, (3,), generator=g)

    step = cr.jit(seeded)
    expected = seeded(cr.zeros(2)).tolist()
    assert step(cr.zeros(2)).tolist() == expected and step(cr.zeros(2)).tolist() == expected
    jitted = cr.jit(restored)
    for seed in (1, 2, 1):
        state = cr.Generator().manual_seed(seed).get_state()
        assert jitted(cr.zeros(3), state).tolist() == restored(cr.zeros(3), state).tolist()


def test_under_jit_the_probabilities_are_inputs_and_checked_at_each_call():
    g = cr.Generator().manual_seed(0)
    sample = cr.jit(lambda p: cr.multinomial(p, 4, True, generator=g))
    assert sample(cr.tensor([0.0, 0.0, 1.0])).tolist() == [2, 2, 2, 2]
    assert sample(cr.tensor([1.0, 0.0, 0.0])).tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="multinomial: expected finite non-negative "
                                         "probabilities, got -1.0"):
        sample(cr.tensor([1.0, -1.0, 0.0]))


def test_under_jit_a_seed_argument_gives_the_same_numbers_at_every_call_as_eager():
    step = cr.jit(lambda x: x + cr.rand(2, seed=0))
    assert step(cr.zeros(2)).tolist() == step(cr.zeros(2)).tolist() == \
        cr.rand(2, seed=0).tolist()
    rng, eager_rng = np.random.default_rng(1), np.random.default_rng(1)
    live = cr.jit(lambda x: x + cr.rand(2, seed=rng))
    assert [live(cr.zeros(2)).tolist() for _ in range(2)] == \
        [cr.rand(2, seed=eager_rng).tolist() for _ in range(2)]


def test_under_jit_drawing_from_a_cr_generator_by_numpys_methods_is_still_refused():
    g = cr.Generator()
    with pytest.raises(TypeError, match="a Generator it reaches"):
        cr.jit(lambda x: x + g.normal(size=3))(np.zeros(3))


# --- Karpathy's makemore, as written for torch ------------------------------------------

def test_makemore_snippet_runs_end_to_end_with_a_backward_pass():
    g = cr.Generator().manual_seed(2147483647)
    C = cr.randn((27, 2), generator=g, requires_grad=True)
    W = cr.randn((6, 27), generator=g, requires_grad=True)
    X = cr.randint(0, 27, (32, 3), generator=g)
    Y = cr.randint(0, 27, (32,), generator=g)
    emb = C[X]                                        # (32, 3, 2), an int64 index
    logits = emb.reshape(32, 6) @ W
    loss = cr.nn.functional.cross_entropy(logits, Y)
    loss.backward()
    assert C.grad.shape == (27, 2) and W.grad.shape == (6, 27)
    counts = np.bincount(X.data.ravel(), minlength=27)  # each row's uses, summed
    assert ((C.grad != 0).any(axis=1) == (counts > 0)).all()
    p = cr.softmax(logits, axis=-1)
    ix = cr.multinomial(p, num_samples=1, replacement=True, generator=g)
    assert ix.shape == (32, 1) and ix.dtype == np.int64
    # sampling names, one character at a time, as the lecture does
    out, index = [], 0
    with cr.no_grad():
        for _ in range(20):
            probs = cr.softmax(C[np.array([index] * 3)].reshape(1, 6) @ W, axis=-1)
            index = cr.multinomial(probs, num_samples=1, replacement=True,
                                   generator=g).item()
            out.append(index)
    assert all(0 <= i < 27 for i in out)
