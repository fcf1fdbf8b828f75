"""cr.jit's rewrites (``chainrule/jit/simplify.py``): fewer and cheaper NumPy calls for
the same numbers, to the last bit.

On small arrays a replay costs about a microsecond a NumPy call whatever the call
computes, so the program drops the calls that give numbers it already has: ``x * 1``
(a gradient of a sum is seeded with ones), a call made twice, a size-one array
reshaped and broadcast before an elementwise call that would broadcast it anyway; and
it makes the calls it keeps cheaper: a Python number beside an array is made a 0-d
array of that array's dtype once (NumPy converts it at every call), ``np.sum`` is
called as the ``np.add.reduce`` it hands an ndarray to, and a ufunc's ``out=`` is
passed by position.

Each is checked here against the eager run (the plain rules) bit for bit, on numbers
chosen to catch a rewrite that is only nearly right (-0.0, inf, NaN, float32), and by
what the program no longer contains.
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.jit import program as program_module

from test_jit import same

AWKWARD = np.array([0.5, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -3.0])


@pytest.fixture(autouse=True)
def awkward_numbers_are_expected():
    with np.errstate(all="ignore"):
        yield


def source_of(jitted, *args):
    """The Python a replay of ``jitted`` runs for these arguments."""
    jitted(*args)
    return jitted._fast.source


def replayed(f, *args, calls=3):
    """f jitted, checked against f eagerly at args and at args scaled (the kept buffers
    of one run are reused by the next); returns the jitted function."""
    jitted = cr.jit(f)
    for k in range(calls):
        scaled = tuple(a * (1 + k) if isinstance(a, np.ndarray) else a for a in args)
        same(f(*scaled), jitted(*scaled))
    return jitted


def without_rewrites(monkeypatch):
    """Programs compiled with every call the trace recorded (the plain rule)."""
    monkeypatch.setattr(program_module.simplify, "simplify",
                        lambda ops, values, protected: ops)


def test_the_gradient_of_a_small_function_has_a_third_fewer_calls(monkeypatch):
    def f(x):
        return cnp.sum(cnp.sin(x) * x + cnp.exp(-x * x) / (1 + x * x)) + \
            cnp.sum(cnp.tanh(x)) ** 2

    x = np.linspace(0.1, 1.0, 10)
    with monkeypatch.context() as patch:
        without_rewrites(patch)
        plain_jitted = cr.jit(cr.grad(f))
        plain = source_of(plain_jitted, x)
        same(cr.grad(f)(x), plain_jitted(x))
    rewritten = source_of(replayed(cr.grad(f), x), x)
    calls = [line for line in rewritten.splitlines() if " = " in line]
    plain_calls = [line for line in plain.splitlines() if " = " in line]
    assert len(calls) <= len(plain_calls) - 10
    assert "broadcast_to" not in rewritten and "np.sum" not in rewritten
    assert "out=" not in rewritten  # a ufunc's output buffer is passed by position


def test_times_one_is_dropped_for_real_numbers_only():
    ones = np.ones(AWKWARD.shape)
    jitted = replayed(lambda x: cnp.sin(x * ones) + cnp.cos(ones * x), AWKWARD)
    assert "multiply" not in source_of(jitted, AWKWARD) and \
        " * " not in source_of(jitted, AWKWARD)
    # (inf + 0j) * (1 + 0j) is inf + nan j: a complex x * 1 stays
    z = AWKWARD + 0j
    jitted = replayed(lambda x: cnp.exp(x * (ones + 0j)), z)
    assert "multiply" in source_of(jitted, z) or " * " in source_of(jitted, z)


def test_a_product_by_a_broader_one_keeps_its_shape():
    ones = np.ones((2, 3))
    jitted = replayed(lambda x: cnp.sin(x * ones), np.array([1.0, -0.0, 2.0]))
    assert "multiply" in source_of(jitted, np.array([1.0, -0.0, 2.0])) or \
        " * " in source_of(jitted, np.array([1.0, -0.0, 2.0]))


def test_a_call_made_twice_is_made_once():
    jitted = replayed(lambda x: cnp.sin(x) * cnp.sin(x) + cnp.sin(x), AWKWARD)
    assert source_of(jitted, AWKWARD).count("sin(") == 1


def test_a_size_one_array_is_broadcast_by_the_call_that_reads_it():
    def f(x, s):
        b = cnp.broadcast_to(cnp.reshape(s, (1,)), x.shape)
        return cnp.tanh(b * x - b)

    s = np.asarray(-0.0)
    jitted = replayed(f, AWKWARD, s)
    code = source_of(jitted, AWKWARD, s)
    assert "broadcast_to" not in code and "reshape" not in code


def test_a_broadcast_read_by_a_reduction_stays():
    def f(x, s):
        return cnp.sum(cnp.broadcast_to(s, (4,)) * x[:4]) + cnp.sum(cnp.broadcast_to(s, (4,)))

    s = np.asarray(2.5)
    jitted = replayed(f, AWKWARD, s)
    assert "broadcast_to" in source_of(jitted, AWKWARD, s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_a_python_number_is_converted_once_to_the_arrays_dtype(dtype):
    x = (np.linspace(-2, 3, 7) + (0.3j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    jitted = replayed(lambda x: (0.1 + x) * 3 - 1 / (x + 7) + 2.5 * x, x)
    assert jitted(x).dtype == dtype


def test_an_integer_array_keeps_its_python_numbers():
    x = np.arange(5)
    jitted = replayed(lambda x: x + 1.5, x)
    assert jitted(x).dtype == np.float64


def test_np_sum_runs_as_add_reduce_and_the_listing_still_says_sum():
    x = np.arange(12.0).reshape(3, 4)
    f = lambda x: cnp.sum(x, axis=0) + cnp.sum(x * x, axis=(0, 1), keepdims=True)  # noqa: E731
    jitted = replayed(f, x)
    assert "np.add.reduce" in source_of(jitted, x)
    assert "np.sum" in str(cr.make_program(f)(x))
    ints = np.arange(6)  # (an integer sum keeps np.sum: its dtype rule is its own)
    assert "np.sum" in source_of(replayed(lambda x: cnp.sum(x), ints), ints)


def test_views_of_a_rewritten_value_keep_their_own_array():
    """A transpose (a view) of ``x * 1`` must not become a view of a buffer that a later
    call overwrites: the rewrite is not made where a call viewed the result."""
    ones = np.ones((3, 3))

    def f(x):
        y = x * ones
        view = y.T
        z = cnp.sin(x) * 2  # a temporary that could reuse a buffer
        return view + z, cnp.exp(z)

    x = np.arange(9.0).reshape(3, 3) / 7
    replayed(f, x, calls=4)


def test_a_training_step_that_updates_its_parameters_stays_bit_exact():
    model = cr.nn.Linear(3, 2, rng=0)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        loss = cr.sum(model(x) * np.ones(2))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    x = cr.tensor(np.arange(6.0).reshape(2, 3))
    twin = cr.nn.Linear(3, 2, rng=0)
    twin_opt = cr.optim.SGD(twin.parameters(), lr=0.1)
    jitted = cr.jit(step)
    for _ in range(3):
        got = jitted(x)
        loss = cr.sum(twin(x) * np.ones(2))
        twin_opt.zero_grad()
        loss.backward()
        twin_opt.step()
        same(loss.numpy(), got.numpy())
    same(twin.weight.numpy(), model.weight.numpy())


def test_second_derivatives_and_forward_mode_agree_to_the_last_bit():
    def f(x):
        return cnp.sum(cnp.sin(x) * x + cnp.exp(-x * x) / (1 + x * x)) + \
            cnp.sum(cnp.tanh(x)) ** 2

    x = np.linspace(0.1, 1.0, 10)
    replayed(cr.hessian(f), x)
    replayed(lambda x: cr.jvp(f, (x,), (np.ones_like(x),)), x)
    replayed(lambda x: cr.hvp(f, x, x), x)
