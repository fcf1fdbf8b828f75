"""Arrays a pass makes and drops are served again from freed memory, not new pages.

A backward pass or a Jacobian makes and drops arrays of tens of KB at every call. With
glibc's first limits, malloc hands freed memory back to the system once 128 KB of it
lie at the top of the heap, and the next call takes it back page by page, one page
fault for every 4 KB (on this project's machine a Hessian of 100 inputs took twice as
long). ``import chainrule`` frees one 2 MB block (``arrays._keep_freed_memory``), after
which glibc keeps up to 4 MB for reuse, as it does for any program that once freed an
array of that size.

The page faults are counted (``ru_minflt``), not timed, in a fresh interpreter each, on
Linux with glibc only: what malloc does elsewhere is another library's choice.
"""

import os
import subprocess
import sys

import pytest

try:
    _GLIBC = os.confstr("CS_GNU_LIBC_VERSION")
except (AttributeError, ValueError, OSError):
    _GLIBC = None

pytestmark = pytest.mark.skipif(not _GLIBC or not sys.platform.startswith("linux"),
                                reason="glibc's malloc on Linux only")

# twelve arrays of 100 KB each (below glibc's first 128 KB, so they come from the heap),
# made and dropped together, fifty times over: page faults per round
ROUNDS = """
import resource
import numpy as np
{setup}
def work():
    arrays = [np.ones(12_500) for _ in range(12)]
    del arrays
for _ in range(3):
    work()
start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    work()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start) / 50)
"""

HESSIAN = """
import resource
import numpy as np
import chainrule as cr
W = np.random.default_rng(0).standard_normal((100, 100)) / 10
hess = cr.hessian(lambda x: cr.sum(cr.log(1 + x ** 2)) + cr.sum(cr.tanh(W @ x) ** 2))
x = np.linspace(-1.0, 1.0, 100)
for _ in range(3):
    hess(x)
start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    hess(x)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start) / 20)
"""


def faults_per_round(code, **malloc_settings):
    """Minor page faults per round of ``code``, run in a fresh interpreter whose malloc
    has glibc's own settings plus ``malloc_settings`` (environment variables)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(malloc_settings)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


def test_numpy_alone_takes_new_pages_for_every_round():
    """The behaviour the module works around, seen by this very count: without
    chainrule, each round takes new pages for most of its 1.2 MB (300 pages)."""
    assert faults_per_round(ROUNDS.format(setup="")) > 100


def test_after_import_chainrule_a_round_reuses_freed_memory():
    assert faults_per_round(ROUNDS.format(setup="import chainrule")) < 10


def test_limits_the_user_set_are_left_alone():
    """``MALLOC_TRIM_THRESHOLD_`` pins glibc's limits: chainrule's freed block then moves
    nothing, and the pages come and go as the user asked."""
    pinned = faults_per_round(ROUNDS.format(setup="import chainrule"),
                              MALLOC_TRIM_THRESHOLD_="131072")
    assert pinned > 100


def test_a_hessian_of_100_inputs_takes_no_new_pages():
    assert faults_per_round(HESSIAN) < 5
