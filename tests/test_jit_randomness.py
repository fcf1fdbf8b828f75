"""cr.jit and random numbers: a draw chainrule makes (Dropout, cr.random) is a call of
the program, drawn again at each call exactly as eager code draws; a draw the function
makes behind the program's back (numpy.random's global functions, a Generator or
RandomState, Python's random) would be frozen into the program, so the trace refuses it
with the way around."""

import random

import numpy as np
import pytest

import chainrule as cr

REFUSED = r"cr.jit: \S+ drew random numbers from {} while being traced; in the program " \
          r"they would be constants"


def test_numpys_global_functions_are_refused():
    def step(x):
        return x + np.random.normal(size=x.shape)
    with pytest.raises(TypeError, match=REFUSED.format("numpy.random's global functions")):
        cr.jit(step)(np.zeros(3))


def test_a_generator_argument_closure_or_attribute_is_refused():
    rng = np.random.default_rng(0)

    def closing(x):
        return x + rng.normal(size=x.shape)

    def taking(x, g):
        return x * g.uniform(size=x.shape)

    class Noisy:
        def __init__(self):
            self.rng = np.random.RandomState(1)

        def __call__(self, x):
            return x + self.rng.standard_normal(x.shape)

    noisy = Noisy()
    for jitted, args in ((cr.jit(closing), ()), (cr.jit(taking), (rng,)),
                         (cr.jit(lambda x: noisy(x)), ())):
        with pytest.raises(TypeError, match="a (Generator|RandomState) it reaches"):
            jitted(np.zeros(3), *args)


def test_pythons_random_module_is_refused():
    with pytest.raises(TypeError, match=REFUSED.format("Python's random module")):
        cr.jit(lambda x: x * random.random())(np.ones(2))


def test_chainrules_own_draws_are_calls_of_the_program_as_eager():
    eager_drop, jit_drop = cr.nn.Dropout(0.5, rng=3), cr.nn.Dropout(0.5, rng=3)
    step = cr.jit(lambda x: jit_drop(x))
    for _ in range(4):  # the same generator stream, call after call
        np.testing.assert_array_equal(step(cr.ones(8)).data, eager_drop(cr.ones(8)).data)
    sample = cr.jit(lambda key: cr.random.normal(key, (3,)))
    for seed in range(3):
        key = cr.random.key(seed)
        np.testing.assert_array_equal(sample(key), cr.random.normal(key, (3,)))


def test_a_function_that_draws_nothing_traces_as_before():
    rng = np.random.default_rng(0)
    noise = rng.normal(size=3)  # drawn outside: an argument of the program
    step = cr.jit(lambda x, n: x + n)
    np.testing.assert_array_equal(step(np.zeros(3), noise), noise)


# --- generators made inside the function, helpers' generators, torch's generator ------

UNSEEDED = "a generator made without a seed"


@pytest.mark.parametrize("draw", [
    lambda: np.random.default_rng().standard_normal(2),
    lambda: np.random.Generator(np.random.PCG64()).normal(size=2),
    lambda: np.random.RandomState().rand(2),
    lambda: np.array([random.Random().random(), random.SystemRandom().random()]),
], ids=["default_rng()", "Generator(PCG64())", "RandomState()", "random.Random()"])
def test_a_generator_made_inside_without_a_seed_is_refused(draw):
    # (cr.rand() without seed= draws from chainrule's default generator, torch's way, as a
    # call of the program: live, not refused; tests/test_torch_random.py)
    with pytest.raises(TypeError, match=REFUSED.format(UNSEEDED + r" \(.*\)")) as caught:
        cr.jit(lambda x: x + draw())(np.zeros(2))
    assert "\n" not in str(caught.value) and "cr.random key" in str(caught.value)


def test_a_generator_made_inside_with_a_seed_gives_the_eager_numbers_at_every_call():
    def noisy(x):  # the same numbers at every call, eagerly too: nothing to freeze
        return x + np.random.default_rng(7).standard_normal(2)
    f = cr.jit(noisy)
    for scale in (0.0, 1.0, 2.0):
        np.testing.assert_array_equal(f(np.full(2, scale)), noisy(np.full(2, scale)))


def test_a_generator_a_helper_function_draws_from_is_refused():
    rng = np.random.default_rng(0)

    def helper(shape):
        return rng.normal(size=shape)
    with pytest.raises(TypeError, match="a Generator it reaches"):
        cr.jit(lambda x: x + helper(x.shape))(np.zeros(3))


def test_an_entropy_read_by_a_call_of_the_program_stays_live():
    """A function the program calls at each run (``xp.call``) may make its own
    generator: it runs again at every call, so nothing is frozen."""
    from chainrule import arrays as xp
    f = cr.jit(lambda x: xp.call(lambda v: v + np.random.default_rng().random(v.shape), x))
    first, second = f(np.zeros(3)), f(np.zeros(3))
    assert not np.array_equal(first, second)


def test_a_module_first_imported_while_tracing_may_make_its_own_generator(tmp_path):
    """A library that makes an unseeded generator at its top level, imported for the
    first time inside the traced function (chainrule.scipy loads SciPy at its first use),
    made it once for the process: the trace goes on. A generator the function itself
    makes without a seed after that import is still refused. (A fresh process: here the
    modules are imported already.)"""
    import subprocess
    import sys
    (tmp_path / "makes_its_own.py").write_text(
        "import numpy as np\nGENERATOR = np.random.default_rng()\nSCALE = 2.0\n")
    code = f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import numpy as np
import chainrule as cr
def scaled(x):
    import makes_its_own
    return x * makes_its_own.SCALE
print(cr.jit(scaled)(np.ones(2)).tolist(), cr.jit(scaled)(np.full(2, 3.0)).tolist())
norm = cr.jit(lambda x: cr.scipy.stats.norm.logpdf(x))
print(np.allclose(norm(np.zeros(1)), -0.5 * np.log(2 * np.pi)))
def drawing(x):
    import makes_its_own
    return x + np.random.default_rng().random(2)
try:
    cr.jit(drawing)(np.zeros(2))
    print("not refused")
except TypeError as refusal:
    print("made without a seed" in str(refusal))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:3] == ["[2.0, 2.0] [6.0, 6.0]", "True", "True"], out


@pytest.mark.parametrize("draw", ["rand", "randn", "randint", "normal_"])
def test_torchs_global_generator_is_refused(draw):
    torch = pytest.importorskip("torch")
    make = {"rand": lambda: torch.rand(2), "randn": lambda: torch.randn(2),
            "randint": lambda: torch.randint(0, 5, (2,)).double(),
            "normal_": lambda: torch.zeros(2, dtype=torch.float64).normal_()}[draw]
    with pytest.raises(TypeError, match="torch's global generator"):
        cr.jit(lambda x: x + make().numpy())(np.zeros(2))


def test_a_refused_trace_leaves_entropy_unwatched():
    with pytest.raises(TypeError):
        cr.jit(lambda x: x + np.random.default_rng().random(2))(np.zeros(2))
    assert random._urandom is __import__("os").urandom
    np.random.default_rng()  # (outside a trace: nothing counts it)
