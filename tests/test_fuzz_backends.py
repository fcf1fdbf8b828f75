"""The fuzzer's programs on torch tensors and Dask arrays: NumPy's numbers, in their library.

Each seed's program (``fuzz_programs.generate``: a random expression with inner
transforms, under grad, vjp, jvp, jacrev, jacfwd, hessian or a transform of a vjp
function) runs twice with chainrule: on the case's NumPy arrays, and with every array
argument (and every tangent and cotangent) converted to a torch tensor or a Dask array;
Python floats stay floats, and the constants inside the program stay NumPy's, so each
program also mixes them with the library's arrays. The two runs must agree to 1e-12
(relative, with a 1e-12 floor), in the same structure, and the results must be in the
library: no wrapper, no Tensor, and every result an array of the library where every
differentiated leaf is one. (A result follows the kind of the inputs: a float's
derivative is a float where it is a constant, such as 0; a result computed from a
closed-over array of the library is the library's; one computed from NumPy's constants
alone may be NumPy's.) On Dask, nothing computes before ``dask.compute``.

An outcome is agree, wrong (a number, a kind, a structure), an error, or a skip: a
program whose own operator adds NumPy's constant to a closed-over array of the library,
which both libraries refuse without chainrule (``mixes_arrays_itself``). The known
failures are listed with their reason (strict xfail: one that starts to pass fails the
run, so the list stays true). More seeds: ``CHAINRULE_FUZZ_TORCH_N=300`` (and
``CHAINRULE_FUZZ_DASK_N``); the outcomes counted by category:
``python tests/test_fuzz_backends.py torch 500`` (or ``dask 100``).

Under ``cr.jit`` (``run_jitted``; ``... torch 300 --jit``): each program's transform is
the body of a jitted function whose arguments are the case's arrays, called twice (a
trace, then a replay), on NumPy's arrays and on the library's; every result must be
NumPy's eager one.
"""

import collections
import dataclasses
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # (when run as a script)

import chainrule as cr  # noqa: E402
import fuzz_programs as fp  # noqa: E402

torch = pytest.importorskip("torch", reason="needs torch")
da = pytest.importorskip("dask.array", reason="needs dask[array]")
pytest.importorskip("array_api_compat", reason="the backends need array-api-compat")
import dask  # noqa: E402
import dask.callbacks  # noqa: E402

COUNTS = {"torch": int(os.environ.get("CHAINRULE_FUZZ_TORCH_N", "48")),  # two rounds of
          "dask": int(os.environ.get("CHAINRULE_FUZZ_DASK_N", "12"))}   # the 24 patterns; half
# Seeds past the default counts that once failed, run by default too: a NumPy point
# with a torch tangent (88, 132); an inner transform's result meeting NumPy's constants
# inside a transform over torch (202); a float's block of a Jacobian (171); np.asarray
# in index_add (256, 298); forward mode's seeds meeting torch's indices (518); a NumPy
# number in torch's einsum (308); a Jacobian's blocks on Dask (29); a jvp of a vjp
# function at a float cotangent, whose gradients came out NumPy's (387); a float's
# constant derivative, which the harness took for an array's (659); a program that
# adds NumPy's constant to a closed-over torch tensor itself, skipped (492); an inner
# jvp inside jacfwd over torch, whose tangent came back as a bare torch tensor
# (6502 and 12 more of the same kind, from a run of seeds 5000-19167).
FOUND = {"torch": (88, 132, 171, 202, 256, 298, 308, 387, 492, 518, 659, 6502, 8174, 8206,
                   8374, 9998, 11278, 11798, 12974, 13366, 16366, 17518, 18254, 19006),
         "dask": (29,)}
# Under cr.jit (a trace and a replay of each program; CHAINRULE_FUZZ_JIT_N for more)
JIT_COUNTS = {"torch": int(os.environ.get("CHAINRULE_FUZZ_JIT_N", "24")),
              "dask": int(os.environ.get("CHAINRULE_FUZZ_JIT_N", "24")) // 2}
# ... and the seeds that once failed there: a Jacobian's blocks left unshaped under
# cr.jit on NumPy too (181, 229); a float derivative of a transform over torch's arrays
# (106); an inner transform's torch result meeting a traced array (80, 116).
FOUND_JIT = {"torch": (80, 106, 116, 181, 229), "dask": ()}
RTOL = ATOL = 1e-12

# A NumPy array as the library's (Dask: vectors in two chunks), and the library's type.
LIBRARIES = {
    "torch": (torch.from_numpy, torch.Tensor),
    "dask": (lambda a: da.from_array(a, chunks=max(1, (a.shape[0] + 1) // 2)
                                     if a.ndim else ()), da.Array),
}

# (library, seed): why it fails. Each is checked to still fail (strict).
KNOWN: dict = {}


def converted(tree, to):
    """Every ndarray in nested tuples, lists and dicts, converted by ``to``."""
    if isinstance(tree, np.ndarray):
        return to(tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(converted(t, to) for t in tree)
    if isinstance(tree, dict):
        return {k: converted(v, to) for k, v in tree.items()}
    return tree


def in_library(case, name):
    """The case with its arrays (arguments, tangents, cotangents) the library's."""
    to = LIBRARIES[name][0]
    return dataclasses.replace(
        case, args=[dataclasses.replace(a, value=converted(a.value, to)) for a in case.args],
        extras=converted(case.extras, to))


class _Computations(dask.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def differentiated_leaves(case):
    """The leaves the outermost transform differentiates (see the module's docstring):
    the differentiated arguments'; of a transform of a vjp function with respect to the
    cotangent (but jvp, whose results are shaped like the arguments), the cotangent's
    too: a float among them has a float for its derivative where that is a constant."""
    leaves = [leaf for a in case.differentiated for leaf in fp.flatten(a.value)[0]]
    if case.transform == "vjp_cotangent" and case.extras["outer"] != "jvp":
        leaves += fp.flatten(case.extras["cotangent"])[0]
    return leaves


def mixes_arrays_itself(error, kind):
    """Whether ``error`` is the program's own operator (``np.ones(2) + t``) refusing a
    NumPy array beside an array of the library, neither of them traced: a constant of
    the program meeting a closed-over array of the library outside any operation of
    chainrule. Both libraries refuse that without chainrule too (NumPy's "Concatenation
    operation is not implemented"): the program is not one the library can run."""
    frame = error.__traceback__
    while frame.tb_next is not None:
        frame = frame.tb_next
    if os.path.basename(frame.tb_frame.f_code.co_filename) != "fuzz_programs.py":
        return False
    operands = frame.tb_frame.f_locals.get("a", ())
    return any(type(x) is np.ndarray for x in operands) and any(
        isinstance(x, kind) for x in operands)


def run_jitted(case):
    """The case's transform run twice by one ``cr.jit`` function whose arguments are
    the case's arrays (its arguments', tangents', cotangents'): traced by the first
    call, replayed by the second. Both results."""
    arrays = []
    template = _with_slots(case, arrays)
    jitted = cr.jit(lambda *values: fp.run(_filled(template, values), fp.CHAINRULE))
    return jitted(*arrays), jitted(*arrays)


class _Slot:
    def __init__(self, n):
        self.n = n


def _with_slots(case, arrays):
    def slot(a):
        arrays.append(a)
        return _Slot(len(arrays) - 1)
    return dataclasses.replace(
        case, args=[dataclasses.replace(a, value=_mapped(a.value, slot)) for a in case.args],
        extras=_mapped(case.extras, slot))


def _filled(template, values):
    def fill(x):
        return values[x.n]
    return dataclasses.replace(
        template, args=[dataclasses.replace(a, value=_mapped(a.value, fill, _Slot))
                        for a in template.args],
        extras=_mapped(template.extras, fill, _Slot))


def _mapped(tree, f, kinds=(np.ndarray, torch.Tensor, da.Array)):
    if isinstance(tree, kinds):
        return f(tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_mapped(t, f, kinds) for t in tree)
    if isinstance(tree, dict):
        return {k: _mapped(v, f, kinds) for k, v in tree.items()}
    return tree


def outcome(name, seed, jit=False):
    """("agree" | "wrong: ..." | "error: ...", detail) for a seed on a library (with
    ``jit``: run by ``run_jitted``, both of its calls compared with NumPy's eager run)."""
    case = fp.generate(seed)
    ours = fp.run(case, fp.CHAINRULE)
    if jit:
        try:
            on_numpy = run_jitted(case)
        except Exception as error:  # noqa: BLE001
            return "skip: cr.jit cannot trace this program on NumPy either", \
                f"{type(error).__name__}: {error}"
        for result in on_numpy:
            wrong = compared(result, ours, np.ndarray, strict=False)
            if wrong is not None:
                return wrong[0] + " (cr.jit on NumPy)", wrong[1]
    counter = _Computations()
    try:
        with counter:
            if jit:
                results = run_jitted(in_library(case, name))
            else:
                results = [fp.run(in_library(case, name), fp.CHAINRULE)]
    except Exception as error:  # noqa: BLE001  (any error is an outcome to report)
        if mixes_arrays_itself(error, LIBRARIES[name][1]):
            return f"skip: the program's own operator on NumPy's and {name}'s arrays", \
                f"{type(error).__name__}: {error}"
        return "error: " + f"{type(error).__name__}: {error}".split(";")[0][:80], str(error)
    if counter.count:
        return "wrong: computed", f"{counter.count} Dask computations before dask.compute"
    for theirs in results:
        wrong = compared(theirs, ours, LIBRARIES[name][1],
                         all(isinstance(leaf, np.ndarray)
                             for leaf in differentiated_leaves(case)))
        if wrong is not None:
            return wrong
    return "agree", ""


def compared(theirs, ours, kind, strict=True):
    """None where ``theirs`` is ``ours`` in ``kind``'s arrays (to RTOL, ATOL), else
    ("wrong: ...", detail); ``strict``: every leaf of ``kind`` (not a number)."""
    leaves, structure = fp.flatten(theirs)
    if structure != fp.flatten(ours)[1]:
        return "wrong: structure", f"{structure} vs NumPy's {fp.flatten(ours)[1]}"
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, kind) and (strict or not isinstance(leaf, fp.NUMBERS)):
            return "wrong: kind", f"result leaf {i} is a {type(leaf).__name__}"
    if kind is da.Array:
        leaves = dask.compute(*leaves)
    for i, (a, b) in enumerate(zip(leaves, fp.flatten(ours)[0])):
        a = a.numpy() if isinstance(a, torch.Tensor) else np.asarray(a, dtype=float)
        b = np.asarray(b, dtype=float)
        if a.shape != b.shape:
            return "wrong: shape", f"result leaf {i}: {a.shape} vs NumPy's {b.shape}"
        if not np.all(np.abs(a - b) <= RTOL * np.maximum(np.abs(a), np.abs(b)) + ATOL):
            return "wrong: number", f"result leaf {i}: {a} vs NumPy's {b}"
    return None


def seeds():
    for name, count in COUNTS.items():
        for seed in [*range(count), *(s for s in FOUND[name] if s >= count)]:
            reason = KNOWN.get((name, seed))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, seed, id=f"{name}-{seed}", marks=marks)


@pytest.mark.parametrize("name, seed", list(seeds()))
def test_a_fuzzed_program_on_another_library_gives_numpys_numbers(name, seed):
    _check(name, seed, jit=False)


@pytest.mark.parametrize("name, seed", [
    (name, seed) for name, count in JIT_COUNTS.items()
    for seed in [*range(count), *(s for s in FOUND_JIT[name] if s >= count)]])
def test_a_fuzzed_program_jitted_on_another_library_gives_numpys_numbers(name, seed):
    """The same, under cr.jit: traced on the library's arrays, then replayed."""
    _check(name, seed, jit=True)


def _check(name, seed, jit):
    category, detail = outcome(name, seed, jit)
    if category.startswith("skip"):
        pytest.skip(f"{category[6:]} ({detail[:100]})")
    assert category == "agree", (f"{category}: {detail}\n"
                                 + fp.describe_case(fp.generate(seed)))


def main(name, count, jit=False):
    """Count the outcomes of ``count`` seeds on a library (under cr.jit with ``jit``),
    by category; print the failing seeds."""
    found = collections.Counter()
    for seed in range(count):
        category, detail = outcome(name, seed, jit)
        found[category] += 1
        if category != "agree":
            print(f"seed {seed}: {category} ({detail[:100]})")
    for category, n in found.most_common():
        print(f"{n:5d}  {category}")


if __name__ == "__main__":
    words = [w for w in sys.argv[1:] if w != "--jit"]
    main(words[0] if words else "torch", int(words[1]) if len(words) > 1 else 100,
         jit="--jit" in sys.argv)
