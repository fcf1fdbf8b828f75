"""cr.jit's compiled tier (``chainrule.jit.native``): a hot program run by Numba.

A program that has been replayed ``CHAINRULE_NATIVE_AFTER`` times (1,000) is compiled
in the background; from then on its calls run the compiled function, which must give
the numbers the NumPy replay gives up to rounding, on new inputs too. Here:

* every case of the derivative table: its gradient jitted, compiled at once
  (``compile_native``), then replayed on the traced numbers and on new ones against
  the eager gradient;
* the small functions of ``benchmarks/w15_small_functions.py`` (grad, value_and_grad,
  Hessian, hvp, jacrev, jacfwd), compiled and checked the same way;
* the tier's behaviour: counted replays start the compile, a program it cannot take
  says why and keeps its NumPy replay (with no tier code in it at all), arrays of
  another layout fall back to the replay, a division by zero gives inf.

The suite runs with the tier off (``conftest.py``: results do not depend on when a
background compile ends); these tests switch it on.
"""

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.jit import native

import test_derivatives as table

pytest.importorskip("numba", reason="the compiled tier needs Numba (chainrule[native])")

REL = 1e-9
TESTS = Path(__file__).resolve().parent


@pytest.fixture
def tier_on(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "1")
    monkeypatch.setattr(native, "FASTER_ONLY", False)  # every compiled program checked


def close(actual, expected, what):
    actual, expected = cr.tree_util.tree_leaves(actual), cr.tree_util.tree_leaves(expected)
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(getattr(a, "data", a)), np.asarray(getattr(e, "data", e))
        assert a.shape == e.shape and a.dtype == e.dtype, f"{what}, output {i}"
        table.assert_close(a, e, REL, f"{what}, output {i}")


# ---------------------------------------------------------------------------------------
# Every case of the table
# ---------------------------------------------------------------------------------------

def real_loss(case, weights):
    def loss(*xs):
        total = 0.0
        outs = [o for o in table.as_list(case.fn(*xs)) if o.dtype.kind in "fc"]
        for o, w in zip(outs, weights):
            total = total + cr.real(cr.sum(o * w))
        return total
    return loss


# The table in four interleaved parts, each checked in a process of its own. Numba
# compiles its own implementation of each NumPy function once per process and reuses it,
# so fewer processes compile less (twelve took about twice the time of four); each part's
# process reaches about 1 GB, as Numba keeps every program's machine code until it ends.
CHUNKS = 4


def check_cases(cases):
    """{case id: "compiled", "not compiled: why", or "WRONG: ..."} for these cases:
    each case's gradient jitted and compiled at once, then compared with the eager
    gradient at the traced numbers and at new ones."""
    native.FASTER_ONLY = False  # every program the tier can compile is checked
    found = {}
    for case in cases:
        xs = case.arrays()
        rng = np.random.default_rng(zlib.crc32(case.id.encode()))
        eager = table.as_list(case.fn(*[cr.tensor(x) for x in xs]))
        weights = [rng.standard_normal(np.shape(o)) for o in eager
                   if np.asarray(getattr(o, "data", o)).dtype.kind in "fc"]
        loss = real_loss(case, weights)
        argnums = tuple(range(len(xs)))
        step = cr.jit(cr.grad(loss, argnums))
        status = step.compile_native(*xs)
        try:
            for scale in (1.0, 1.03):  # the traced numbers, then new ones
                moved = [x * scale for x in xs]
                close(step(*moved), cr.grad(loss, argnums)(*moved), f"x{scale}")
        except AssertionError as err:
            status = f"WRONG ({status}): {str(err).splitlines()[0]}"
        found[case.id] = status
    return found


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_the_table_compiled(chunk):
    """Every case of the derivative table, a quarter at a time, in a fresh process:
    Numba keeps the machine code of each function it compiles until the process ends. LLVM optimises less there (``NUMBA_OPT=0``, a third of the compile
    time): the same operations with the same IEEE semantics, as fast code is not what
    is checked here. Most programs compile (a regression in the renderer would
    otherwise leave the checks passing on NumPy replays alone)."""
    code = ("import json, sys, test_jit_native as t, test_derivatives as table; "
            f"print(json.dumps(t.check_cases(table.CASES[{chunk}::{CHUNKS}])))")
    env = dict(os.environ, CHAINRULE_NATIVE="1", NUMBA_OPT="0",
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], cwd=TESTS, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    wrong = {k: v for k, v in found.items() if v.startswith("WRONG")}
    assert not wrong, wrong
    made_calls = [v for v in found.values() if "the program makes no call" not in v]
    compiled = sum(v == "compiled" for v in made_calls)
    assert compiled >= 0.5 * len(made_calls), (compiled, len(made_calls), found)


# ---------------------------------------------------------------------------------------
# The small functions of the benchmark
# ---------------------------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import w15_small_functions as w15  # noqa: E402

PROBLEMS = [w15.f1_problem, w15.log_density_problem, w15.lorenz96_problem,
            w15.network_problem]
TRANSFORMS = {"grad": cr.grad, "value_and_grad": cr.value_and_grad,
              "hessian": cr.hessian, "jacrev": cr.jacrev, "jacfwd": cr.jacfwd}


@pytest.mark.parametrize("make", PROBLEMS, ids=lambda m: m.__name__)
def test_small_functions_compile_and_agree(make, tier_on):
    p = make()
    f = p.make(cnp, lambda a: a)
    for kind in p.kinds:
        if kind == "hvp":
            fn, eager, args = (cr.jit(lambda x, v: cr.hvp(f, x, v)),
                               lambda x, v: cr.hvp(f, x, v), (p.x, p.v))
        else:
            fn, eager, args = cr.jit(TRANSFORMS[kind](f)), TRANSFORMS[kind](f), (p.x,)
        assert fn.compile_native(*args) == "compiled", (p.name, kind)
        close(fn(*args), eager(*args), f"{p.name} {kind}")
        moved = cr.tree_util.tree_map(lambda a: a * 0.97, args)
        close(fn(*moved), eager(*moved), f"{p.name} {kind}, new numbers")


# ---------------------------------------------------------------------------------------
# How the tier behaves
# ---------------------------------------------------------------------------------------

def f1(x):
    return cnp.sum(cnp.sin(x) * x + cnp.exp(-x * x) / (1 + x * x)) + cnp.sum(cnp.tanh(x)) ** 2


def tier_of(jitted):
    (entry,), = jitted._programs.values()
    return entry.program.native


def test_the_hundredth_replay_starts_the_compile(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "1")
    monkeypatch.setenv("CHAINRULE_NATIVE_AFTER", "100")
    monkeypatch.setattr(native, "FASTER_ONLY", False)
    x = np.random.default_rng(0).uniform(-1, 1, 10)
    step = cr.jit(cr.grad(f1))
    numpy_answer = step(x)  # the trace
    tier = tier_of(step)
    for _ in range(99):
        assert np.array_equal(step(x), numpy_answer)  # NumPy replays, the same bits
    assert tier.state == "waiting" and tier.calls == 99
    step(x)  # the 100th replay hands it to the background compiler
    assert tier.done.wait(120), "the background compile did not end"
    assert tier.state == "ready", tier.reason
    calls = tier.calls
    compiled = step(x)
    assert tier.calls == calls  # served by the compiled function, not counted
    np.testing.assert_allclose(compiled, numpy_answer, rtol=1e-12, atol=1e-15)


def test_a_program_it_cannot_take_says_why_and_has_no_tier_code(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "1")
    x = np.random.default_rng(1).uniform(-1, 1, 10).astype(np.float32)
    step = cr.jit(cr.grad(f1))
    expected = step(x)
    assert tier_of(step) is None
    status = step.compile_native(x)
    assert status.startswith("not compiled: a value of type ndarray float32"), status
    entry, = next(iter(step._programs.values()))
    assert "_native" not in entry.program.source()
    assert np.array_equal(step(x), expected) and step(x).dtype == np.float32


def test_switched_off_no_tier_and_the_reason(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "0")
    step = cr.jit(cr.grad(f1))
    x = np.linspace(-1, 1, 10)
    step(x)
    assert tier_of(step) is None
    assert step.compile_native(x) == "not compiled: CHAINRULE_NATIVE=0"


def test_without_numba_the_reason_names_the_extra(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NATIVE", "1")
    monkeypatch.setattr(native._numba_installed, "found", False)
    step = cr.jit(cr.grad(f1))
    x = np.linspace(-1, 1, 10)
    assert step.compile_native(x) == ("not compiled: Numba is not installed "
                                      "(pip install 'chainrule[native]')")
    np.testing.assert_allclose(step(x), cr.grad(f1)(x), rtol=1e-14)


def test_another_memory_layout_falls_back_to_the_replay(tier_on):
    def f(m):
        return cnp.sum(cnp.tanh(m) * m)
    step = cr.jit(cr.grad(f))
    m = np.random.default_rng(2).standard_normal((4, 4))
    assert step.compile_native(m) == "compiled"
    transposed = m.T  # the same shape, Fortran order: Numba has no version for it
    np.testing.assert_allclose(step(transposed), cr.grad(f)(transposed), rtol=1e-12)
    np.testing.assert_allclose(step(m), cr.grad(f)(m), rtol=1e-12)


def test_division_by_zero_gives_inf_as_numpy_does(tier_on):
    def f(x):
        return cnp.sum(1.0 / x)
    step = cr.jit(cr.grad(f))
    x = np.array([1.0, 2.0, 4.0])
    assert step.compile_native(x) == "compiled"
    with np.errstate(divide="ignore"):
        got = step(np.array([0.0, 2.0, -0.0]))
    assert np.isneginf(got[0]) and got[1] == -0.25 and np.isneginf(got[2])


def test_returned_numbers_keep_the_replays_types(tier_on):
    def f(x):
        return cnp.sum(x * x)
    both = cr.jit(cr.value_and_grad(f))
    x = np.arange(3.0)
    value, grad = both(x)
    assert both.compile_native(x) == "compiled"
    value2, grad2 = both(x)
    assert type(value2) is type(value) and np.shape(value2) == np.shape(value)
    assert value2 == value and np.array_equal(grad2, grad)


def test_the_kernel_source_is_the_program(tier_on):
    step = cr.jit(cr.grad(f1))
    x = np.linspace(-1, 1, 10)
    step(x)
    source = tier_of(step).source
    assert source.startswith("def kernel(t0):")
    assert "np.sin(t0)" in source and "np.tanh(t0)" in source and "np.sum(" in source


def test_nan_inf_and_signed_zeros_come_out_as_numpy_gives_them(tier_on):
    """The compiled function on entries the trace never saw: NaN in a max, a maximum
    and a sign, a logarithm and a square root of negatives, infinities; the same
    entries as the NumPy replay gives, NaN for NaN."""
    def f(x, y):
        return (cnp.max(x) + cnp.maximum(x, y) + cnp.sign(x) * cnp.minimum(x, y)
                + cnp.log(-x) + cnp.sqrt(-x) + cnp.abs(-0.0 * x))
    fast = cr.jit(f)
    x, y = np.array([-1.0, -4.0, -2.0, -3.0]), np.array([0.5, 0.0, 5.0, -1.0])
    assert fast.compile_native(x, y) == "compiled"
    odd_x = np.array([1.0, np.nan, -0.0, -np.inf])
    odd_y = np.array([np.nan, 0.0, np.inf, -np.inf])
    with np.errstate(all="ignore"):
        replay = cr.jit(f)
        with pytest.MonkeyPatch.context() as patch:  # the same program, NumPy's replay
            patch.setenv("CHAINRULE_NATIVE", "0")
            expected = replay(odd_x, odd_y)
        got = fast(odd_x, odd_y)
    assert tier_of(fast).state == "ready"
    np.testing.assert_array_equal(got, expected)  # (NaN where NaN)
