"""cr.custom_vjp in the differential fuzzer: random programs in reverse mode only
(``fuzz_programs.generate(seed, custom_vjp=True)``: grad, value_and_grad, vjp, jacrev
and a reverse transform of a vjp function, outside the program and inside it, nested up
to three levels), with subtrees under ``cr.custom_vjp`` (fwd keeps the variables, bwd
is the library's own vjp of the subtree) and ``cr.checkpoint``, against jax.custom_vjp
and jax.checkpoint in float64. JAX refuses forward mode through a custom_vjp, so jvp,
jacfwd and hessian are left out of these programs (tests/test_fuzz.py has them with
custom_jvp). The same programs run under ``cr.jit`` (traced, then replayed at other
arguments) and under ``cr.vmap`` (of the program, or of its gradient: per-example
gradients), each against JAX's.

``CHAINRULE_FUZZ_N=2000 pytest tests/test_fuzz_custom_vjp.py`` runs more programs.
"""

import dataclasses
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import fuzz_programs as fp  # noqa: E402
from test_fuzz_vmap import jax_compiled, mapped  # noqa: E402

import chainrule as cr  # noqa: E402

COUNT = int(os.environ.get("CHAINRULE_FUZZ_N", "240")) // 2
JIT_COUNT = COUNT // 2
VMAP_COUNT = COUNT // 2


def case_for(seed):
    return fp.generate(seed, custom_vjp=True)


def slow_after(count, fast=30):
    return [pytest.param(s, marks=[pytest.mark.slow] if s >= fast else [])
            for s in range(count)]


@pytest.mark.parametrize("seed", slow_after(COUNT))
def test_reverse_mode_through_custom_vjp_gives_jax_numbers(seed):
    case = case_for(seed)
    outcome = fp.check(case)
    assert outcome.kind == "agree", fp.report(case, outcome)


def moved(case, seed):
    """The case at other arguments (each leaf moved a little)."""
    rng = np.random.default_rng(20_000 + seed)

    def move(value):
        if isinstance(value, tuple):
            return tuple(move(v) for v in value)
        if isinstance(value, dict):
            return {k: move(v) for k, v in value.items()}
        step = 0.05 * rng.standard_normal(np.shape(value))
        return value + (float(step) if isinstance(value, float) else step)
    return dataclasses.replace(case, args=[dataclasses.replace(a, value=move(a.value))
                                           for a in case.args])


@pytest.mark.parametrize("seed", slow_after(JIT_COUNT, fast=12))
def test_reverse_mode_through_custom_vjp_under_jit_gives_jax_numbers(seed):
    """One cr.jit function of the arguments: traced at the case's arguments, then
    replayed at others; each result against JAX's at the same arguments."""
    case = case_for(seed)

    def program(*values):
        return fp.run(dataclasses.replace(case, args=[
            dataclasses.replace(a, value=v) for a, v in zip(case.args, values)]),
            fp.CHAINRULE)
    jitted = cr.jit(program)
    for at in (case, moved(case, seed)):
        got = jitted(*[a.value for a in at.args])
        detail = fp.difference(fp.as_numpy(got), fp.as_numpy(fp.run_jax(at)))
        assert detail is None, f"{detail}\n{fp.describe_case(at)}"


@pytest.mark.parametrize("seed", slow_after(VMAP_COUNT, fast=12))
def test_vmap_of_programs_with_custom_vjp_gives_jax_numbers(seed):
    """The program (with custom_vjp subtrees and reverse transforms inside) mapped over
    a batch of its arguments, or its gradient mapped: jax.vmap's numbers."""
    fp.jax_backend()  # (float64)
    case = case_for(seed)
    ours, theirs, values = mapped(case, seed)
    detail = fp.difference(ours(*values), jax_compiled(theirs)(*values))
    assert detail is None, f"{detail}\n{fp.describe_case(case)}"


def test_the_programs_hold_custom_vjp_and_only_reverse_transforms():
    cases = [case_for(s) for s in range(48)]
    assert all(any(n.op == "custom_vjp" for n in c.nodes()) for c in cases)
    assert {c.transform for c in cases} == {"grad", "value_and_grad", "vjp",
                                            "vjp_cotangent", "jacrev"}
    inner = {n.op for c in cases for n in c.nodes() if n.op in fp.INNER_TRANSFORMS}
    assert inner == set(fp.REVERSE_INNER)
    assert {c.extras["outer"] for c in cases if c.transform == "vjp_cotangent"} <= \
        {"grad", "jacrev"}
    assert not any(n.op == "custom_jvp" for c in cases for n in c.nodes())
