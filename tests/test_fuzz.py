"""Differential fuzzing against JAX: random programs, each run by chainrule and by
jax.numpy (float64), must give the same numbers to 1e-9 (relative, with a 1e-12 floor),
in the same structure and shapes, as plain numbers (never a Tensor left in a graph).

Each seed gives one program and one transform around it (``fuzz_programs.generate``):
grad, value_and_grad, vjp, jvp, jacrev, jacfwd, hessian, or a transform of a vjp
function with respect to its cotangent; with zero, one or two more transforms inside the
program, whose bodies close over the outer variables (three levels in all). The seeds
cycle through every (transform, nesting depth) pair, so any 24 seeds in a row hold each
once. A failure prints the program as Python, the seed, the transform and both results.

An outcome is one of three: agree; a wrong number (no error); an error. A wrong number
is always a failure. Known defects are classes of programs told apart by the program's
structure, never by chainrule's outcome (``KNOWN_DEFECTS``, each with its shortest
reproducers). A program of a known class is marked ``xfail(strict=True)``: the suite
stays green while the defect stands, and a fix turns the mark into a failure that asks
for the class to be removed.

A class that loses part of a derivative also has a model: the program as chainrule
computes it, written in JAX (with ``stop_gradient`` where the part is lost). A program
of the class is marked only where the model's numbers differ from JAX's: where the lost
part is 0 anyway, chainrule's answer is right, and is checked like any other.

More programs: ``make fuzz N=5000`` (``python tests/test_fuzz.py 5000``) counts the
outcomes per class, and fails on a failure outside the classes or a class whose every
program agrees. ``CHAINRULE_FUZZ_N=5000 pytest tests/test_fuzz.py`` runs them as tests;
there, about 1 program in 1,000 of the class "two forward-mode levels" agrees (the
reverse-mode transform's function is linear in what the second level brings, so its
tangent never arrives) and shows as XPASS(strict). The default seeds hold none.
"""

import collections
import os
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # (when run as a script)

import fuzz_programs as fp  # noqa: E402

COUNT = int(os.environ.get("CHAINRULE_FUZZ_N", "240"))  # 10 rounds of the 24 patterns


# ---------------------------------------------------------------------------------------
# Known defects: classes of programs, told apart by structure
# ---------------------------------------------------------------------------------------

@dataclass
class KnownDefect:
    name: str
    reason: str
    matches: Callable          # case -> whether the program is of this class
    model: Callable = None     # case -> the case as chainrule computes it, in JAX (None:
    #                            the class raises, or gives numbers no model describes)
    reproducers: tuple = ()    # the shortest programs that show it, with JAX's answer


def carried_variables(case):
    """{inner variable: the traced variables its value carries}: itself, and what its
    point (and a jvp's tangent) carries. A forward-mode variable is a tracer around its
    point, so it carries everything the point does; a reverse-mode variable is a node
    on top of its point, which carries the point's reverse-mode variables but none of
    its tangents (the transform takes them apart, and puts them back on its results)."""
    traced = fp.traced_variables(case)
    carried = {}
    for site in fp.inner_sites(case):  # outermost first: what a point reads is known
        parts = [site.point] + ([site.direction] if site.node.op == "jvp" else [])
        names = set().union(*(fp.variables_read(p, differentiably=True) for p in parts))
        inside = set().union(*(carried.get(n, {n}) for n in names)) if names else set()
        if fp.MODE[site.node.op] == "reverse":
            inside = {n for n in inside if traced.get(n) == "reverse"}
        carried[site.var] = {site.var} | inside
    return carried


def carried_by(names, carried):
    return set().union(*(carried.get(n, {n}) for n in names)) if names else set()


def forward_levels(case, names, traced):
    """How many forward-mode transforms trace these variables (the case's own transform
    traces all the differentiated arguments together)."""
    top = {a.name for a in case.differentiated}
    return len({"top" if n in top else n for n in names if traced.get(n) == "forward"})


def two_forward_levels_around_reverse(case):
    """A reverse-mode inner transform reached, through its point or its body's closure,
    by the variables of two forward-mode transforms (hessian's own jacfwd counts as
    one, around its jacrev). A vjp's cotangent does not count: the pullback is linear
    in it, and takes its tangents apart."""
    traced, carried = fp.traced_variables(case), carried_variables(case)
    for site in fp.inner_sites(case):
        if site.node.op not in fp.REVERSE_MODE + ("hessian",):
            continue
        parts = [site.body, site.point]
        names = set().union(*(fp.variables_read(p, differentiably=True) for p in parts))
        levels = forward_levels(case, carried_by(names & site.outer, carried), traced)
        if levels + (site.node.op == "hessian") >= 2:
            return True
    return False


def vjp_at_a_cotangent_with_two_tangents(case):
    """An inner vjp pulled back at a cotangent that carries the variables of two
    forward-mode transforms."""
    traced, carried = fp.traced_variables(case), carried_variables(case)
    return any(
        site.node.op == "vjp" and forward_levels(case, carried_by(
            fp.variables_read(site.direction, differentiably=True) & site.outer, carried),
            traced) >= 2
        for site in fp.inner_sites(case))


def vjp_with_a_tangent_and_a_reverse_cotangent(case):
    """Inner vjps whose cotangent depends on a variable of an outer reverse-mode
    transform while their function closes over a forward-mode variable (a tangent that
    comes in through the point is kept)."""
    traced, carried = fp.traced_variables(case), carried_variables(case)
    found = []
    for site in fp.inner_sites(case):
        if site.node.op != "vjp":
            continue
        cotangent = fp.variables_read(site.direction, differentiably=True) & site.outer
        closure = fp.variables_read(site.body, differentiably=True) & site.outer
        if any(traced.get(n) == "reverse" for n in carried_by(cotangent, carried)) and \
                forward_levels(case, carried_by(closure, carried), traced):
            found.append(site)
    return found


def tangent_part_cut_from_the_cotangent(case):
    """The model: each such vjp as J(q)^T stop_gradient(c) + J(stop_gradient(q))^T
    (c - stop_gradient(c)), q the forward-mode variables it closes over. Its value is
    J^T c, its tangent J'(q)^T c (the first term), and its derivative in c is J^T (the
    second): only the tangent's derivative in c is gone, as in chainrule."""
    traced, carried = fp.traced_variables(case), carried_variables(case)
    outputs = list(case.outputs)
    for site in vjp_with_a_tangent_and_a_reverse_cotangent(case):
        forward = {n for n in fp.variables_read(site.body) & site.outer
                   if forward_levels(case, carried.get(n, {n}), traced)}

        def model(node, env, B, f, point, cotangent, forward=forward):
            still = B.stop_gradient
            without_tangent = {n: still(v) if n in forward else v for n, v in env.items()}

            def f_without_tangent(y):
                return fp.evaluate(node.args[0], {**without_tangent, node.params["var"]: y},
                                   B)

            return (B.vjp(f, point)[1](still(cotangent))[0]
                    + B.vjp(f_without_tangent, point)[1](cotangent - still(cotangent))[0])

        new = fp.Node("vjp", site.node.args, site.node.shape, site.node.bound,
                      dict(site.node.params, model=model))
        outputs = [fp.replaced(out, site.node, new) for out in outputs]
    return fp.Case(case.seed, case.transform, case.nest, case.args, case.argnums, outputs,
                   dict(case.extras))


KNOWN_DEFECTS = [
    KnownDefect(
        "two forward-mode levels around reverse mode",
        "grad/vjp/jacrev reached by two jvp/jacfwd levels raises TypeError (or gives 0 "
        "where a level comes in through a closure or the other's tangent)",
        two_forward_levels_around_reverse,
        reproducers=(
            ("jvp(lambda x: jvp(grad(lambda y: y ** 4), (x,), (1.0,))[1], (1.5,), (1.0,))",
             (27.0, 36.0)),
            ("jvp(lambda x: hessian(lambda y: y ** 4)(x), (1.5,), (1.0,))", (27.0, 36.0)),
            ("jvp(lambda x: jacfwd(lambda y: grad(lambda z: z / y)(1.0))(x), (2.0,), (1.0,))",
             (-0.25, 0.25)),
        )),
    KnownDefect(
        "vjp at a cotangent with two tangents",
        "a vjp pulled back at a cotangent that two jvp/jacfwd levels trace raises "
        "ValueError ('setting an array element with a sequence')",
        vjp_at_a_cotangent_with_two_tangents,
        reproducers=(
            ("jvp(lambda p: jacfwd(lambda y: vjp(lambda z: z, 1.0)[1](y * p)[0])(2.0), "
             "(3.0,), (1.0,))", (3.0, 1.0)),
        )),
    KnownDefect(
        "vjp with a tangent, at a reverse-mode cotangent",
        "a vjp closing over a jvp/jacfwd variable, pulled back at a cotangent that grad/"
        "vjp traces: the pullback's tangent has no derivative in the cotangent",
        lambda case: bool(vjp_with_a_tangent_and_a_reverse_cotangent(case)),
        tangent_part_cut_from_the_cotangent,
        reproducers=(
            ("jvp(lambda q: grad(lambda y: vjp(lambda z: (z - q) ** 3, 0.5)[1](y)[0])(2.0), "
             "(1.5,), (1.0,))", (3.0, 6.0)),
        )),
]


# ---------------------------------------------------------------------------------------
# Which class a case belongs to: structure first, then the model's numbers
# ---------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def case_for(seed):
    return fp.generate(seed)


@lru_cache(maxsize=None)
def jax_result(seed):
    return fp.run_jax(case_for(seed))


def known_defect(seed):
    """The known defect this seed's program shows, or None. A class whose model drops a
    derivative counts only where that derivative is not 0 (the model's numbers differ
    from JAX's): elsewhere chainrule's 0 is the right answer."""
    case = case_for(seed)
    for defect in KNOWN_DEFECTS:
        if not defect.matches(case):
            continue
        if defect.model is None:
            return defect
        try:
            modelled = fp.run_jax(defect.model(case))
        except Exception:  # noqa: BLE001  (a model JAX cannot run shows nothing)
            continue
        if fp.difference(fp.as_numpy(modelled), jax_result(seed)) is not None:
            return defect
    return None


def check(seed):
    """The outcome for a seed, JAX's result computed once (known_defect needs it too)."""
    case = case_for(seed)
    return fp.check(case, theirs=jax_result(seed))


def seed_params(count):
    """One test per seed, named by its transform and nesting depth, marked xfail(strict)
    where the program is of a known class."""
    for seed in range(count):
        case = case_for(seed)
        defect = known_defect(seed)
        marks = [pytest.mark.xfail(strict=True, reason=defect.reason)] if defect else []
        yield pytest.param(seed, marks=marks, id=f"{seed}-{case.transform}-{case.nest}")


# ---------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", list(seed_params(COUNT)))
def test_chainrule_gives_jax_numbers(seed):
    """The program of this seed, under its transform: chainrule's numbers are JAX's."""
    outcome = check(seed)
    assert outcome.kind == "agree", fp.report(case_for(seed), outcome)


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


@pytest.mark.parametrize("seed", range(len(fp.PATTERNS)))
def test_a_printed_program_runs_and_gives_the_same_numbers(seed):
    """describe_case is the program: run as Python with chainrule's names, it gives
    what the compiled program gives (one seed of each transform and nesting depth)."""
    import chainrule as cr
    case = case_for(seed)
    namespace = {name: getattr(cr, name) for name in dir(cr) if not name.startswith("_")}
    namespace.update(array=np.array, weighted_total=lambda tree, w: fp.weighted_total(
        fp.CHAINRULE, tree, w))
    *setup, last = fp.describe_case(case).splitlines()
    exec("\n".join(setup), namespace)
    printed = eval(last.split("   #")[0], namespace)
    assert fp.difference(printed, fp.run(case, fp.CHAINRULE)) is None


REPRODUCERS = [(d, text, answer) for d in KNOWN_DEFECTS for text, answer in d.reproducers]


@pytest.mark.parametrize("defect, text, answer", [
    pytest.param(d, text, answer, id=text,
                 marks=pytest.mark.xfail(strict=True, reason=d.reason))
    for d, text, answer in REPRODUCERS])
def test_the_minimal_reproducers_of_the_known_defects(defect, text, answer):
    """Each class's shortest programs: they fail today (strict xfail); a fix makes them
    pass, which fails the suite until the class leaves KNOWN_DEFECTS."""
    result = run_reproducer(text, CHAINRULE_NAMES)
    assert not isinstance(result, Exception), f"chainrule raised {result!r}"
    assert fp.difference(result, answer) is None, f"chainrule {result}, JAX {answer}"


@pytest.mark.parametrize("defect, text, answer", REPRODUCERS,
                         ids=[text for _, text, _ in REPRODUCERS])
def test_the_reproducers_answers_are_jaxs(defect, text, answer):
    assert fp.difference(fp.as_numpy(run_reproducer(text, jax_names())), answer) is None


TRANSFORM_NAMES = ("grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian")
CHAINRULE_NAMES = {name: getattr(fp.cr, name) for name in TRANSFORM_NAMES}


def jax_names():
    import jax
    fp.jax_backend()  # float64
    return {name: getattr(jax, name) for name in TRANSFORM_NAMES}


def run_reproducer(text, names):
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
    per_class: collections.Counter = field(default_factory=collections.Counter)
    errors: collections.Counter = field(default_factory=collections.Counter)
    surprises: list = field(default_factory=list)  # failures outside the known classes


def fuzz(count, show=3):
    """Check ``count`` programs and print the outcomes, per known class. Returns 1 if a
    program fails outside the known classes, or if a known class matched programs and
    none of them failed (fixed: it should leave KNOWN_DEFECTS); else 0. (A program of a
    known class may agree where the defect's path carries no derivative: counted.)"""
    tally = Tally()
    start = time.time()
    for seed in range(count):
        outcome = check(seed)
        defect = known_defect(seed)
        tally.outcomes[outcome.kind] += 1
        tally.per_class[(defect.name if defect else "", outcome.kind)] += 1
        if outcome.kind == "error":
            tally.errors[outcome.category] += 1
        if outcome.kind != "agree" and defect is None:
            tally.surprises.append((seed, outcome))
        case_for.cache_clear()
        jax_result.cache_clear()
    fixed = [d.name for d in KNOWN_DEFECTS
             if tally.per_class[(d.name, "agree")] and not any(
                 tally.per_class[(d.name, kind)] for kind in ("wrong", "error"))]
    print_tally(tally, count, time.time() - start, fixed, show)
    return 1 if tally.surprises or fixed else 0


def print_tally(tally, count, seconds, fixed, show):
    print(f"{count} programs in {seconds:.0f} s: " + ", ".join(
        f"{tally.outcomes[k]} {k}" for k in ("agree", "wrong", "error")))
    print("outcomes per known class:")
    for (name, kind), n in sorted(tally.per_class.items()):
        print(f"  {name or '(no known class)':50} {kind:6} {n:6}")
    for category, n in tally.errors.most_common():
        print(f"  raised {n} times: {category}")
    for name in fixed:
        print(f"every program of the class '{name}' agrees: fixed? remove it from "
              f"KNOWN_DEFECTS (tests/test_fuzz.py)")
    print(f"failures outside the known classes: {len(tally.surprises)}")
    for seed, outcome in tally.surprises:
        print(f"  seed {seed}: {outcome.category}")
    for seed, outcome in tally.surprises[:show]:
        print("-" * 88)
        print(fp.report(fp.generate(seed), outcome))


if __name__ == "__main__":
    sys.exit(fuzz(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
