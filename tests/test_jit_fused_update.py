"""An optimizer's ``p -= lr * g`` in one compiled pass (``chainrule.jit.fused``).

Where Numba is installed, cr.jit writes the two NumPy calls of a large update (the
product into a temporary, then the in-place subtraction) as one loop. The loop must give
NumPy's numbers to the last bit, not merely close ones: it rounds the product in the
array's dtype, then the difference, as the two calls do. Here:

* the loop against NumPy's two calls, on both float dtypes, both signs, sizes around
  the vector width, and every kind of number ``lr`` may be;
* the calls the loop does not take (another layout, arrays that share memory, a number
  NumPy computes in another dtype) give NumPy's numbers too;
* training steps (the raw ``p.data -= lr * p.grad``, ``nn.optim.SGD``) jitted with the
  loop against the same steps with the tier off and eagerly, step after step;
* which pairs are fused: large ones only, and none that another call reads, none inside
  a run ``blocks.py`` takes (Adam), none with the tier off.
"""

import importlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim

pytest.importorskip("numba", reason="the compiled loop needs Numba (chainrule[native])")

fused = importlib.import_module("chainrule.jit.fused")
BIG = fused.FUSED_FROM  # entries: the smallest update that is fused


@pytest.fixture
def loop(monkeypatch):
    """The tier on, and the loop compiled in this thread."""
    monkeypatch.setenv("CHAINRULE_NATIVE", "1")
    assert fused.compile_now() == "compiled"
    return fused._loop.run


def two_calls(p, s, g, sign):
    """What the replay runs without the loop: NumPy's product, then the sum into ``p``
    (a copy)."""
    p, product = p.copy(), s * g
    if sign > 0:
        p += product
    else:
        p -= product
    return p


# ---------------------------------------------------------------------------------------
# The loop, bit for bit
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("size", [1, 7, 8, 9, 1000, BIG + 3])
def test_the_loop_rounds_as_numpy_two_calls(loop, dtype, sign, size):
    rng = np.random.default_rng(size)
    p = (rng.standard_normal(size) * 10.0 ** rng.integers(-30, 30, size)).astype(dtype)
    g = (rng.standard_normal(size) * 10.0 ** rng.integers(-30, 30, size)).astype(dtype)
    for s in (0.1, 1e-3, 2.0 / 3.0, 1e-40, 3e38):
        with np.errstate(over="ignore", invalid="ignore"):  # (infinities are compared)
            want = two_calls(p, s, g, sign)
            got = p.copy()
            fused.update(got, s, g, None, sign)
        assert np.array_equal(got, want, equal_nan=True), (dtype, sign, size, s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_number_of_the_arrays_dtype_is_taken_as_numpy_takes_it(loop, dtype):
    rng = np.random.default_rng(1)
    p, g = rng.standard_normal((2, BIG)).astype(dtype)
    s = dtype(0.37)
    got = p.copy()
    fused.update(got, s, g, None, -1)
    assert np.array_equal(got, two_calls(p, s, g, -1))


@pytest.mark.parametrize("case", ["transposed", "overlapping", "float64 number",
                                  "read-only array", "same array", "read-only gradient"])
def test_calls_the_loop_does_not_take_give_numpys_numbers(loop, case):
    rng = np.random.default_rng(2)
    p = rng.standard_normal((256, 256)).astype(np.float32)
    g = rng.standard_normal((256, 256)).astype(np.float32)
    s = 0.01
    if case == "transposed":
        g = g.T
    elif case == "overlapping":
        whole = rng.standard_normal(256 * 256 + 1).astype(np.float32)
        p, g = whole[1:].reshape(256, 256), whole[:-1].reshape(256, 256)
    elif case == "float64 number":
        s = np.float64(0.01)  # float64 beside float32: NumPy's product is float64
    elif case == "same array":
        g = p
    elif case == "read-only gradient":
        g.flags.writeable = False
    want = two_calls(p, s, g.copy(), -1)
    if case == "read-only array":
        p.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            fused.update(p, s, g, None, -1)
        return
    fused.update(p, s, g, None, -1)
    assert np.array_equal(p, want)


def test_without_the_loop_the_update_is_numpys_two_calls_into_the_buffer(monkeypatch):
    monkeypatch.setattr(fused._loop, "run", None)
    monkeypatch.setattr(fused._loop, "state", "refused")  # (nothing queued)
    rng = np.random.default_rng(3)
    p, g = rng.standard_normal((2, 100))
    buffer = np.empty(100)
    want = p - 0.5 * g
    assert fused.update(p, 0.5, g, buffer, -1) is p
    assert np.array_equal(p, want) and np.array_equal(buffer, 0.5 * g)


# ---------------------------------------------------------------------------------------
# Training steps, jitted with the loop
# ---------------------------------------------------------------------------------------

def raw_step(xt, yt, params, lr):
    h = cr.relu(xt @ params[0].T + params[1])
    loss = ((h @ params[2].T + params[3] - yt) ** 2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    for p in params:
        p.data -= lr * p.grad
    return loss


def problem(dtype, seed=4):
    rng = np.random.default_rng(seed)
    shapes = [(256, 200), (256,), (8, 256), (8,)]  # 51,200 weights: fused; the rest not
    params = [rng.standard_normal(s).astype(dtype) * 0.05 for s in shapes]
    x = rng.standard_normal((16, 200)).astype(dtype)
    y = rng.standard_normal((16, 8)).astype(dtype)
    return x, y, params


def run_steps(step, x, y, arrays, steps=4):
    params = [cr.tensor(a.copy(), requires_grad=True) for a in arrays]
    xt, yt = cr.tensor(x), cr.tensor(y)
    for _ in range(steps):
        step(xt, yt, params, 0.05)
    return [p.data for p in params]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_jitted_sgd_step_with_the_loop_is_the_step_without_it(loop, monkeypatch, dtype):
    x, y, arrays = problem(dtype)
    jitted = cr.jit(raw_step)
    with_loop = run_steps(jitted, x, y, arrays)
    xt, yt = cr.tensor(x), cr.tensor(y)
    params = [cr.tensor(a.copy(), requires_grad=True) for a in arrays]
    program = cr.make_program(raw_step)(xt, yt, params, 0.05)
    assert len(program.fused) == 1  # the weight of 51,200 entries, not the small ones
    assert "one pass over memory, fused.py" in str(program)
    assert "fused_update(" in program.source()

    monkeypatch.setenv("CHAINRULE_NATIVE", "0")
    without = run_steps(cr.jit(raw_step), x, y, arrays)
    eager = run_steps(raw_step, x, y, arrays)
    for a, b, c in zip(with_loop, without, eager):
        assert a.dtype == dtype
        assert np.array_equal(a, b) and np.array_equal(a, c)


def test_nn_optim_sgd_jitted_with_the_loop_is_the_eager_step(loop):
    def make():
        model = nn.Sequential(nn.Linear(300, 256, rng=np.random.default_rng(5)), nn.ReLU(),
                              nn.Linear(256, 10, rng=np.random.default_rng(6)))
        return model, optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(7)
    x = cr.tensor(rng.standard_normal((32, 300)))
    y = np.arange(32) % 10
    results = []
    for jit in (True, False):
        model, opt = make()

        def step(x):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        run = cr.jit(step) if jit else step
        for _ in range(4):
            run(x)
        results.append([p.data.copy() for p in model.parameters()])
        if jit:  # (program() traces the step again, and so takes a step)
            assert len(run.program(x).fused) == 1  # the first layer's weight
    for a, b in zip(*results):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------------------------------
# Which pairs are fused
# ---------------------------------------------------------------------------------------

def test_small_updates_and_a_product_read_twice_are_not_fused(loop):
    def reads_twice(p, g):
        t = 0.1 * g
        p -= t
        return t.sum()
    big = np.ones(BIG)
    assert cr.make_program(reads_twice)(big.copy(), big).fused == {}

    def update(p, g):
        p -= 0.1 * g
        return p
    assert cr.make_program(update)(np.ones(BIG - 1), np.ones(BIG - 1)).fused == {}
    assert len(cr.make_program(update)(big.copy(), big).fused) == 1


def test_the_tier_off_fuses_nothing(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "0")

    def update(p, g):
        p -= 0.1 * g
        return p
    program = cr.make_program(update)(np.ones(BIG), np.ones(BIG))
    assert program.fused == {} and "fused_update" not in program.source()


def test_adams_update_is_left_to_the_blocks(loop):
    model = nn.Linear(300, 256, rng=np.random.default_rng(8))
    opt = optim.Adam(model.parameters(), lr=1e-3)
    x = cr.tensor(np.random.default_rng(9).standard_normal((16, 300)))

    @cr.jit
    def step(x):
        loss = (model(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    step(x)
    program = step.program(x)
    assert program.blocks and program.fused == {}
