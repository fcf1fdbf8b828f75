"""Differential fuzzing against JAX: random programs, each run by chainrule and by
jax.numpy (float64), must give the same numbers to 1e-9 (relative, with a 1e-12 floor),
in the same structure and shapes, as plain numbers (never a Tensor left in a graph).

Each seed gives one program and one transform around it (``fuzz_programs.generate``):
grad, value_and_grad, vjp, jvp, jacrev, jacfwd, hessian, or a transform of a vjp
function with respect to its cotangent; with zero, one or two more transforms inside the
program, whose bodies close over the outer variables (three levels in all). The seeds
cycle through every (transform, nesting depth) pair, so any 24 seeds in a row hold each
once. A failure prints the program as Python, the seed, the transform and both results.
A second family of programs holds loops (``cr.fori_loop`` and ``cr.scan`` against
``jax.lax``'s, their bodies closing over the outer variables, inner transforms around
or inside them): the same seeds, other programs. A third holds complex numbers:
complex arguments, complex expressions inside real ones (exp(1j * x), an fft and its
abs), numpy.fft's transforms, conj, real, imag, abs, angle, and the transforms as JAX
allows them (grad of real outputs, jacfwd and hessian of real inputs, or
``holomorphic=True``). A fourth holds both loops and complex numbers: complex carries,
xs and ys of fori_loop and scan, and inner grad, vjp and jvp at a complex point.
A fifth holds custom rules: subtrees under ``cr.checkpoint`` (with JAX's policies, the
variables passed as a dict or closed over) and under ``cr.custom_jvp`` (its rule the
library's own jvp), against jax.checkpoint and jax.custom_jvp. A sixth holds
``cr.custom_vjp`` in reverse mode only (JAX refuses forward mode through it): grad,
value_and_grad, vjp, jacrev inside and outside; tests/test_fuzz_custom_vjp.py runs it,
under cr.jit and cr.vmap too, and ``make fuzz`` counts it.

An outcome is one of three: agree; a wrong number (no error); an error. Anything but
agreement is a failure.

More programs: ``make fuzz N=5000`` (``python tests/test_fuzz.py 5000``) counts the
outcomes and prints the first failures; ``CHAINRULE_FUZZ_N=5000 pytest
tests/test_fuzz.py`` runs them as tests.
"""

import collections
import os
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # (when run as a script)

import fuzz_programs as fp  # noqa: E402

COUNT = int(os.environ.get("CHAINRULE_FUZZ_N", "240"))  # 10 rounds of the 24 patterns
LOOP_COUNT = COUNT // 2  # programs with loops
COMPLEX_COUNT = COUNT // 2  # programs with complex numbers
BOTH_COUNT = COUNT // 4  # programs with loops and complex numbers
UPDATE_COUNT = COUNT // 2  # programs with indexed updates at repeated indices
CUSTOM_COUNT = COUNT // 2  # programs with checkpoints and custom_jvp


# ---------------------------------------------------------------------------------------
# The programs, and JAX's results (computed once a seed)
# ---------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def case_for(seed, loops=False, complex_numbers=False, updates=False, custom=False,
             custom_vjp=False):
    return fp.generate(seed, loops, complex_numbers=complex_numbers, updates=updates,
                       custom=custom, custom_vjp=custom_vjp)


@lru_cache(maxsize=None)
def jax_result(seed, loops=False, complex_numbers=False, updates=False, custom=False,
               custom_vjp=False):
    return fp.run_jax(case_for(seed, loops, complex_numbers, updates, custom, custom_vjp))


def check(seed, loops=False, complex_numbers=False, updates=False, custom=False,
          custom_vjp=False):
    """The outcome for a seed."""
    return fp.check(case_for(seed, loops, complex_numbers, updates, custom, custom_vjp),
                    theirs=jax_result(seed, loops, complex_numbers, updates, custom,
                                      custom_vjp))


def seed_params(count, loops=False, complex_numbers=False, updates=False, custom=False):
    """One test per seed, named by its transform and nesting depth; past the first round
    of the patterns (one seed of each), marked slow: make test runs them all."""
    for seed in range(count):
        case = case_for(seed, loops, complex_numbers, updates, custom)
        marks = [pytest.mark.slow] if seed >= len(fp.PATTERNS) else []
        yield pytest.param(seed, id=f"{seed}-{case.transform}-{case.nest}", marks=marks)


# ---------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", list(seed_params(COUNT)))
def test_chainrule_gives_jax_numbers(seed):
    """The program of this seed, under its transform: chainrule's numbers are JAX's."""
    outcome = check(seed)
    assert outcome.kind == "agree", fp.report(case_for(seed), outcome)


@pytest.mark.parametrize("seed", list(seed_params(LOOP_COUNT, loops=True)))
def test_chainrule_gives_jax_numbers_through_loops(seed):
    """The loop program of this seed: fori_loop and scan against jax.lax's."""
    outcome = check(seed, loops=True)
    assert outcome.kind == "agree", fp.report(case_for(seed, True), outcome)


@pytest.mark.parametrize("seed", list(seed_params(COMPLEX_COUNT, complex_numbers=True)))
def test_chainrule_gives_jax_numbers_with_complex_numbers(seed):
    """The complex program of this seed: complex inputs and intermediates, numpy.fft,
    holomorphic derivatives, against jax.numpy's (complex128)."""
    outcome = check(seed, complex_numbers=True)
    assert outcome.kind == "agree", fp.report(case_for(seed, complex_numbers=True), outcome)


@pytest.mark.parametrize("seed", list(seed_params(BOTH_COUNT, True, True)))
def test_chainrule_gives_jax_numbers_with_complex_numbers_through_loops(seed):
    """The program with loops and complex numbers of this seed: complex carries, and
    inner transforms at complex points."""
    outcome = check(seed, True, True)
    assert outcome.kind == "agree", fp.report(case_for(seed, True, True), outcome)


@pytest.mark.parametrize("seed", list(seed_params(UPDATE_COUNT, updates=True)))
def test_chainrule_gives_jax_numbers_through_updates_at_repeated_indices(seed):
    """The program of this seed with x.at[i].set(v), .add(v), .min(v), .max(v), i naming
    an entry twice (only the last write of a set has a derivative, every write of an add
    has, the extreme one of min and max), or .multiply(v) at distinct entries."""
    outcome = check(seed, updates=True)
    assert outcome.kind == "agree", fp.report(case_for(seed, updates=True), outcome)


@pytest.mark.parametrize("seed", list(seed_params(CUSTOM_COUNT, custom=True)))
def test_chainrule_gives_jax_numbers_through_checkpoints_and_custom_jvp(seed):
    """The program of this seed with subtrees under cr.checkpoint (a policy of JAX's,
    the variables passed or closed over) and cr.custom_jvp, inner transforms around and
    inside them: jax.checkpoint's and jax.custom_jvp's numbers."""
    outcome = check(seed, custom=True)
    assert outcome.kind == "agree", fp.report(case_for(seed, custom=True), outcome)


def test_the_custom_programs_hold_each_kind_of_custom_rule():
    cases = [case_for(s, custom=True) for s in range(48)]
    kinds = {(n.op, n.params.get("policy"), n.params.get("closure"))
             for c in cases for n in c.nodes() if n.op in fp.CUSTOM}
    assert {k[0] for k in kinds} == set(fp.CUSTOM)
    assert {k[1] for k in kinds if k[0] == "checkpoint"} == set(fp.POLICIES)
    assert {k[2] for k in kinds if k[0] == "checkpoint"} == {True, False}
    assert all(any(n.op in fp.CUSTOM for n in c.nodes()) for c in cases)


def test_the_complex_loop_programs_hold_complex_loops_and_variables():
    cases = [case_for(s, True, True) for s in range(min(BOTH_COUNT, 48))]
    complex_loops = {n.op for c in cases for n in c.nodes()
                     if n.op in fp.LOOPS and n.params.get("complex")}
    assert complex_loops == set(fp.LOOPS)
    complex_points = {n.op for c in cases for n in c.nodes()
                      if n.op in fp.INNER_TRANSFORMS and n.args[1].params.get("complex")}
    assert complex_points == {"grad", "vjp", "jvp"}


def test_the_complex_programs_hold_what_they_are_for():
    cases = [case_for(s, complex_numbers=True) for s in range(min(COMPLEX_COUNT, 120))]
    assert all(any(fp.holds_complex(out) for out in c.outputs) for c in cases)
    ops = {n.op for c in cases for n in c.nodes()}
    assert set(fp.FFTS) | {"conj", "real", "imag", "abs", "angle", "vdot"} <= ops
    holomorphic = {c.transform for c in cases if c.extras.get("holomorphic")}
    assert holomorphic == set(fp.HOLOMORPHIC_TRANSFORMS)
    complex_inputs = {c.transform for c in cases
                      if any(map(fp.is_complex_argument, c.differentiated))}
    assert complex_inputs == set(fp.TOP_TRANSFORMS)  # (jacfwd, hessian: holomorphic)
    assert any(c.transform in ("vjp", "jvp") and c.outputs[0].params.get("complex")
               for c in cases)


def test_every_loop_program_holds_a_loop_and_both_kinds_appear():
    cases = [case_for(s, True) for s in range(min(LOOP_COUNT, 48))]
    held = [{n.op for n in c.nodes()} & set(fp.LOOPS) for c in cases]
    assert all(held) and set().union(*held) == set(fp.LOOPS)
    scans = [n for c in cases for n in c.nodes() if n.op == "scan"]
    assert {n.params["reverse"] for n in scans} == {True, False}
    in_a_body = [n for c in cases for t in c.nodes() if t.op in fp.INNER_TRANSFORMS
                 for n in t.args[0].walk() if n.op in fp.LOOPS]
    assert in_a_body, "no loop inside an inner transform's body"


def test_the_seeds_cover_every_transform_at_every_nesting_depth():
    seen = {(case_for(s).transform, case_for(s).nest) for s in range(min(COUNT, 240))}
    assert seen == set(fp.PATTERNS)


def test_the_seeds_cover_every_input_kind_and_inner_transform():
    cases = [case_for(s) for s in range(min(COUNT, 240))]
    kinds = {a.kind for c in cases for a in c.args}
    inner = {site.node.op for c in cases for site in fp.inner_sites(c)}
    around_vjp = {(c.extras["outer"], c.extras["vjp_inside"])
                  for c in cases if c.transform == "vjp_cotangent"}
    assert kinds == set(fp.ARG_KINDS)
    assert inner == set(fp.INNER_TRANSFORMS)
    assert around_vjp == {(t, inside) for t in fp.COTANGENT_TRANSFORMS
                          for inside in (True, False)}


@pytest.mark.parametrize("loops, complex_numbers", [(False, False), (True, False),
                                                    (False, True), (True, True)],
                         ids=["plain", "loops", "complex", "complex-loops"])
@pytest.mark.parametrize("seed", range(len(fp.PATTERNS)))
def test_a_printed_program_runs_and_gives_the_same_numbers(seed, loops, complex_numbers):
    """describe_case is the program: run as Python with chainrule's names (and
    chainrule.scipy.special's, and chainrule.numpy.fft as fft), it gives what the
    compiled program gives (one seed of each transform and nesting depth)."""
    import chainrule as cr
    import chainrule.numpy as cnp
    import chainrule.scipy.special as sps
    case = case_for(seed, loops, complex_numbers)
    namespace = {name: getattr(cr, name) for name in dir(cr) if not name.startswith("_")}
    namespace.update({name: getattr(sps, name) for name in sps.__all__})
    namespace.update(array=np.array, fft=cnp.fft,
                     weighted_total=lambda tree, w: fp.weighted_total(fp.CHAINRULE, tree, w))
    *setup, last = fp.describe_case(case).splitlines()
    exec("\n".join(setup), namespace)
    printed = eval(last.split("   #")[0], namespace)
    assert fp.difference(printed, fp.run(case, fp.CHAINRULE)) is None


# Short programs where forward mode sits around reverse mode twice over, or a vjp is
# pulled back at a cotangent two transforms trace: the nestings that need every level
# to carry the others' values (random programs reach them rarely), with JAX's answers.
HARD_NESTINGS = [
    ("jvp(lambda x: jvp(grad(lambda y: y ** 4), (x,), (1.0,))[1], (1.5,), (1.0,))",
     (27.0, 36.0)),
    ("jvp(lambda x: hessian(lambda y: y ** 4)(x), (1.5,), (1.0,))", (27.0, 36.0)),
    ("jvp(lambda x: jacfwd(lambda y: grad(lambda z: z / y)(1.0))(x), (2.0,), (1.0,))",
     (-0.25, 0.25)),
    ("jvp(lambda p: jacfwd(lambda y: vjp(lambda z: z, 1.0)[1](y * p)[0])(2.0), "
     "(3.0,), (1.0,))", (3.0, 1.0)),
    ("jvp(lambda q: grad(lambda y: vjp(lambda z: (z - q) ** 3, 0.5)[1](y)[0])(2.0), "
     "(1.5,), (1.0,))", (3.0, 6.0)),
    ("jvp(lambda x: jvp(lambda y: jvp(grad(lambda z: x * y * z ** 3), (y,), (1.0,))[1], "
     "(x,), (1.0,))[1], (0.5,), (1.0,))", (3.0, 12.0)),
]


@pytest.mark.parametrize("text, answer", HARD_NESTINGS, ids=[t for t, _ in HARD_NESTINGS])
def test_hard_nestings_give_jax_numbers(text, answer):
    result = run_program(text, CHAINRULE_NAMES)
    assert not isinstance(result, Exception), f"chainrule raised {result!r}"
    assert fp.difference(result, answer) is None, f"chainrule {result}, JAX {answer}"


@pytest.mark.parametrize("text, answer", HARD_NESTINGS, ids=[t for t, _ in HARD_NESTINGS])
def test_the_hard_nestings_answers_are_jaxs(text, answer):
    import jax
    names = jax_names()
    # one XLA compile for the program (eager JAX compiles each operation on its own)
    theirs = jax.jit(lambda: eval(text, dict(names)))()
    assert fp.difference(fp.as_numpy(theirs), answer) is None


TRANSFORM_NAMES = ("grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian")
CHAINRULE_NAMES = {name: getattr(fp.cr, name) for name in TRANSFORM_NAMES}


def jax_names():
    import jax
    fp.jax_backend()  # float64
    return {name: getattr(jax, name) for name in TRANSFORM_NAMES}


def run_program(text, names):
    try:
        return eval(text, dict(names))
    except Exception as error:  # noqa: BLE001  (raising is one of the outcomes)
        return error


# ---------------------------------------------------------------------------------------
# The runner: python tests/test_fuzz.py N (what `make fuzz N=...` runs)
# ---------------------------------------------------------------------------------------

@dataclass
class Tally:
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    errors: collections.Counter = field(default_factory=collections.Counter)
    failures: list = field(default_factory=list)


def fuzz(count, show=3):
    """Check ``count`` programs, half as many with loops, half as many with complex
    numbers, a quarter as many with both, half as many with indexed updates and half as
    many with checkpoints and custom_jvp, half as many in reverse mode with custom_vjp,
    and print the outcomes; 1 if any fails."""
    failed = [fuzz_family(count, False, show), fuzz_family(count // 2, True, show),
              fuzz_family(count // 2, False, show, complex_numbers=True),
              fuzz_family(count // 4, True, show, complex_numbers=True),
              fuzz_family(count // 2, False, show, updates=True),
              fuzz_family(count // 2, False, show, custom=True),
              fuzz_family(count // 2, False, show, custom_vjp=True)]
    return 1 if any(failed) else 0


def fuzz_family(count, loops, show, complex_numbers=False, updates=False, custom=False,
                custom_vjp=False):
    tally = Tally()
    start = time.time()
    for seed in range(count):
        outcome = check(seed, loops, complex_numbers, updates, custom, custom_vjp)
        tally.outcomes[outcome.kind] += 1
        if outcome.kind == "error":
            tally.errors[outcome.category] += 1
        if outcome.kind != "agree":
            tally.failures.append((seed, outcome))
        case_for.cache_clear()
        jax_result.cache_clear()
    what = {(False, False): "programs", (True, False): "programs with loops",
            (False, True): "programs with complex numbers",
            (True, True): "programs with loops and complex numbers"}[loops, complex_numbers]
    what += " and indexed updates at repeated indices" if updates else ""
    what += " and checkpoints and custom_jvp" if custom else ""
    what += " in reverse mode with custom_vjp" if custom_vjp else ""
    print(f"{count} {what} in {time.time() - start:.0f} s: " + ", ".join(
        f"{tally.outcomes[k]} {k}" for k in ("agree", "wrong", "error")))
    for category, n in tally.errors.most_common():
        print(f"  raised {n} times: {category}")
    for seed, outcome in tally.failures:
        print(f"  seed {seed}: {outcome.category}")
    for seed, outcome in tally.failures[:show]:
        print("-" * 88)
        print(fp.report(fp.generate(seed, loops, complex_numbers=complex_numbers,
                                    updates=updates, custom=custom,
                                    custom_vjp=custom_vjp), outcome))
    return bool(tally.failures)


if __name__ == "__main__":
    sys.exit(fuzz(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
