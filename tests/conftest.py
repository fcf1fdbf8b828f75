"""What every test gets, whichever process runs it and whatever ran before it there.

`make test` spreads the suite over every core (pytest-xdist, ``-n auto``): each worker
process runs its share of the tests, in an order of its own. So no test may depend on
another having run first in the same process, nor leave behind a process-wide switch
another test would read. Tests that write files use ``tmp_path``; the switches a test
may flip are put back after each test here:

* JAX's float64 mode (``jax_enable_x64``): several test modules switch it on when they
  are imported, and docs/conventions.md's JAX column switches it off, as JAX's
  default, in the middle of a run;
* PyTorch's default dtype;
* chainrule's speed overrides (``chainrule.rules.fused.set_enabled``).

cr.jit's compiled tier (``chainrule.jit.native``) is off for the suite
(``CHAINRULE_NATIVE=0``): a program replayed a thousand times would otherwise be compiled
in the background and switch to Numba's numbers (equal but for rounding) at a moment
that depends on the machine. tests/test_jit_native.py switches it on and checks it.

Random numbers: no test draws from a state another test drew from. A module's ``RNG`` is
``seeds_and_tolerances.per_test_generator(...)``, which in a test is that test's own
generator, seeded by its node id and started here before the test's fixtures are set up;
nothing reads NumPy's or Python's global generator without seeding it first.

A few tests write into the checkout itself: building the wheel and the sdist
(tests/test_packaging.py) writes ``build/`` and ``src/*.egg-info``. Each holds a lock
on the checkout's pyproject.toml while it runs, so two builds never overlap.
(pytest-xdist's ``--dist loadgroup`` would say the same, but its 3.8 release cannot
group tests under pytest 9, whose node ids it no longer rewrites.)
"""

import collections
import ctypes
import ctypes.util
import fcntl
import gc
import os
import resource
import sys

import pytest

import seeds_and_tolerances
from chainrule.jit.jitted import Jitted
from chainrule.rules import fused

os.environ.setdefault("CHAINRULE_NATIVE", "0")  # read when a program is built

BUILDS_IN_THE_CHECKOUT = {"test_packaging.py"}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    seeds_and_tolerances.start_test(item.nodeid)
    if MEMORY_REPORT:
        _memory["before"] = _resident_kb()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    seeds_and_tolerances.end_test()
    if _floor_kb is None or _resident_kb() - _floor_kb > GROWTH_KB:
        _empty_caches()
    if MEMORY_REPORT and "before" in _memory:
        grown = _resident_kb() - _memory.pop("before")
        _memory["files"][item.path.name] += grown
        _memory["tests"].append((grown, item.nodeid))


# CHAINRULE_TEST_MEMORY=DIR: each process writes DIR/<worker>.txt at the end, with its
# peak resident memory and what each test file and the 30 largest tests added to its
# resident memory (measured before setup and after teardown, in kB).
MEMORY_REPORT = os.environ.get("CHAINRULE_TEST_MEMORY")
_memory = {"files": collections.Counter(), "tests": []}


def _resident_kb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def pytest_sessionfinish(session):
    if not MEMORY_REPORT or not _memory["tests"]:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    lines = [f"peak {peak} kB, now {_resident_kb()} kB", "", "by file:"]
    lines += [f"{kb:>10} {name}" for name, kb in _memory["files"].most_common()]
    lines += ["", "by test:"]
    lines += [f"{kb:>10} {nodeid}" for kb, nodeid in sorted(_memory["tests"])[::-1][:30]]
    os.makedirs(MEMORY_REPORT, exist_ok=True)
    with open(os.path.join(MEMORY_REPORT, f"{worker}.txt"), "w") as out:
        out.write("\n".join(lines) + "\n")


def pytest_terminal_summary(terminalreporter):
    """The files that took the suite's time (setup, call and teardown, summed over the
    workers): where to look first when the suite grows slow."""
    by_file = collections.Counter()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                by_file[report.nodeid.split("::")[0]] += report.duration
    if sum(by_file.values()) < 600:  # a short run: nothing to look for
        return
    terminalreporter.write_sep("-", "the slowest test files (seconds, all workers)")
    for name, seconds in by_file.most_common(15):
        terminalreporter.write_line(f"{seconds:9.0f}  {name}")


@pytest.fixture(autouse=True)
def _process_wide_switches_put_back():
    jax, torch = sys.modules.get("jax"), sys.modules.get("torch")  # only if imported
    x64 = jax.config.jax_enable_x64 if jax is not None else None
    dtype = torch.get_default_dtype() if torch is not None else None
    overrides = fused.enabled()
    yield
    if fused.enabled() != overrides:
        fused.set_enabled(overrides)
    if jax is not None and jax.config.jax_enable_x64 != x64:
        jax.config.update("jax_enable_x64", x64)
    if torch is not None and torch.get_default_dtype() != dtype:
        torch.set_default_dtype(dtype)


@pytest.fixture(autouse=True, scope="module")
def _caches_emptied_after_each_module(request):
    yield
    for value in list(vars(request.module).values()):
        if isinstance(value, Jitted):
            value.clear()
        elif callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_info"):
            value.cache_clear()
    _empty_caches()


# Memory. JAX keeps every program it compiles, and an eager JAX operation on a new shape
# compiles one: a vmapped fuzz program leaves about 20 MB behind, and each worker of the
# whole suite grew past 5 GB. So JAX's caches are emptied after each test module, and
# after any test that leaves the process more than GROWTH_KB above where the last
# emptying left it; the allocator then hands the freed memory back (glibc keeps it
# otherwise). The caches a test module keeps itself (functools caches, cr.jit functions
# at module level) go with the module.
GROWTH_KB = 512 * 1024
_floor_kb = None


def _empty_caches():
    global _floor_kb
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
    _floor_kb = _resident_kb()


_LIBC = (ctypes.CDLL(ctypes.util.find_library("c"))
         if sys.platform.startswith("linux") and ctypes.util.find_library("c") else None)


@pytest.fixture(autouse=True)
def _one_build_in_the_checkout_at_a_time(request):
    if request.node.path.name not in BUILDS_IN_THE_CHECKOUT:
        yield
        return
    with open(request.config.rootpath / "pyproject.toml", "rb") as anchor:
        fcntl.flock(anchor, fcntl.LOCK_EX)  # released when the file is closed
        yield
