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

A few tests write into the checkout itself: building the wheel and the sdist
(tests/test_packaging.py) writes ``build/`` and ``src/*.egg-info``. Each holds a lock
on the checkout's pyproject.toml while it runs, so two builds never overlap.
(pytest-xdist's ``--dist loadgroup`` would say the same, but its 3.8 release cannot
group tests under pytest 9, whose node ids it no longer rewrites.)
"""

import fcntl
import sys

import pytest

from chainrule.rules import fused

BUILDS_IN_THE_CHECKOUT = {"test_packaging.py"}


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


@pytest.fixture(autouse=True)
def _one_build_in_the_checkout_at_a_time(request):
    if request.node.path.name not in BUILDS_IN_THE_CHECKOUT:
        yield
        return
    with open(request.config.rootpath / "pyproject.toml", "rb") as anchor:
        fcntl.flock(anchor, fcntl.LOCK_EX)  # released when the file is closed
        yield
