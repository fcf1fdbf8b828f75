"""cr.vmap in the differential fuzzer: the random programs of ``fuzz_programs`` (inner
transforms included: grad, jvp, vjp, jacobians, Hessians, their bodies closing over the
outer variables) are mapped over a batch of their arguments, each argument mapped along
a random axis or shared (in_axes None), the result's batch axis put first or last
(out_axes), and then again with a gradient inside the map (vmap of grad: per-example
gradients). chainrule's numbers must be ``jax.vmap``'s to the fuzzer's tolerance.

``CHAINRULE_FUZZ_VMAP_N=2000 pytest tests/test_fuzz_vmap.py`` runs more programs.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import fuzz_programs as fp  # noqa: E402

import chainrule as cr  # noqa: E402

COUNT = int(os.environ.get("CHAINRULE_FUZZ_VMAP_N", "96"))
BATCH = 3


def batched_arguments(case, rng):
    """(values, in_axes): each argument stacked BATCH times, a little apart, along an
    axis of its own (0, or the last axis of a vector), or left shared (None); the first
    argument is mapped when no other is."""
    def stacked(value, axis):
        if isinstance(value, tuple):
            return tuple(stacked(v, axis) for v in value)
        if isinstance(value, dict):
            return {k: stacked(v, axis) for k, v in value.items()}
        copies = [np.asarray(value, dtype=float)
                  + 0.05 * k * rng.standard_normal(np.shape(value)) for k in range(BATCH)]
        return np.stack(copies, axis=axis)

    choices = [rng.random() for _ in case.args]
    if all(c < 0.25 for c in choices):
        choices[0] = 0.5
    values, axes = [], []
    for arg, choice in zip(case.args, choices):
        if choice < 0.25:
            values.append(arg.value)
            axes.append(None)
            continue
        axis = -1 if arg.kind == "vector" and choice > 0.75 else 0
        values.append(stacked(arg.value, axis))
        axes.append(axis)
    return values, tuple(axes)


def mapped(case, seed):
    """The two mapped programs (chainrule's, JAX's) and their batched arguments."""
    import jax
    rng = np.random.default_rng(10_000 + seed)
    values, in_axes = batched_arguments(case, rng)
    out_axes = -1 if rng.random() < 0.3 else 0
    ours, theirs = fp.to_chainrule(case), fp.to_jax(case)
    scalar = all(node.shape == () for node in case.outputs) and len(case.outputs) == 1
    if scalar and rng.random() < 0.5:  # per-example gradients
        ours = fp.CHAINRULE.grad(ours, argnums=case.argnums)
        theirs = jax.grad(theirs, argnums=case.argnums)
        out_axes = 0
    return (cr.vmap(ours, in_axes=in_axes, out_axes=out_axes),
            jax.vmap(theirs, in_axes=in_axes, out_axes=out_axes), values)


# Seeds beyond the default count, run with it: the backward pass of indexing inside an
# inner vjp or jacrev, under vmap, scatters at an index computed from batched data (a
# batched index: batching_indexing.py).
BATCHED_INDEX = {256, 407, 761, 766}


def jax_compiled(theirs):
    """JAX's mapped program as one XLA compile (eager JAX compiles each operation on its
    own, most of these tests' time); the jits inside a composition stay as drawn."""
    import jax
    return jax.jit(theirs)


def seed_params(count):
    for s in sorted(set(range(count)) | (BATCHED_INDEX if count >= 96 else set())):
        yield pytest.param(s, marks=[pytest.mark.slow] if s >= 24 else [])


@pytest.mark.parametrize("seed", list(seed_params(COUNT)))
def test_vmap_of_a_random_program_gives_jaxs_numbers(seed):
    fp.jax_backend()  # (float64)
    case = fp.generate(seed)
    ours, theirs, values = mapped(case, seed)
    expected = jax_compiled(theirs)(*values)
    got = ours(*values)
    detail = fp.difference(got, expected)
    assert detail is None, f"{detail}\n{fp.describe_case(case)}"


# ---------------------------------------------------------------------------------------
# Compositions: vmap over axes of both signs, one or two deep, with grad, jit and jvp
# around and inside it, in a random order
# ---------------------------------------------------------------------------------------

COMPOSED_COUNT = int(os.environ.get("CHAINRULE_FUZZ_VMAP_N", "96"))


def mapped_axis(value, rng):
    """An axis to stack copies of ``value`` along (a pytree's leaves all alike): from
    the front or from the back, as deep as its shallowest leaf allows."""
    leaves = [np.asarray(v) for v in fp.flatten(value)[0]] if isinstance(value, (tuple, dict)) \
        else [np.asarray(value)]
    depth = min(leaf.ndim for leaf in leaves)
    return int(rng.integers(-(depth + 1), depth + 1))


def stack_along(value, axis, rng):
    if isinstance(value, tuple):
        return tuple(stack_along(v, axis, rng) for v in value)
    if isinstance(value, dict):
        return {k: stack_along(v, axis, rng) for k, v in value.items()}
    copies = [np.asarray(value, dtype=float) + 0.05 * k * rng.standard_normal(np.shape(value))
              for k in range(BATCH)]
    return np.stack(copies, axis=axis)


def composition(case, seed):
    """(ours, theirs, values, description): the program under a random stack of
    transforms, and arguments batched once per vmap in it."""
    import jax
    rng = np.random.default_rng(30_000 + seed)
    ours, theirs = fp.to_chainrule(case), fp.to_jax(case)
    steps = []
    scalar = all(node.shape == () for node in case.outputs) and len(case.outputs) == 1
    if scalar and rng.random() < 0.5:
        ours = cr.grad(ours, argnums=case.argnums)
        theirs = jax.grad(theirs, argnums=case.argnums)
        steps.append("grad")
    values = [arg.value for arg in case.args]
    for _ in range(1 + int(rng.random() < 0.4)):  # one vmap, or a vmap of a vmap
        if rng.random() < 0.3:
            ours, theirs = cr.jit(ours), jax.jit(theirs)
            steps.append("jit")
        axes = [mapped_axis(v, rng) for v in values]
        shared = [rng.random() < 0.2 for _ in values]
        if all(shared):
            shared[0] = False
        in_axes = tuple(None if s else a for a, s in zip(axes, shared))
        values = [v if s else stack_along(v, a, rng) for v, a, s in zip(values, axes, shared)]
        out_axes = int(rng.choice([0, -1]))
        ours = cr.vmap(ours, in_axes=in_axes, out_axes=out_axes)
        theirs = jax.vmap(theirs, in_axes=in_axes, out_axes=out_axes)
        steps.append(f"vmap(in_axes={in_axes}, out_axes={out_axes})")
    if rng.random() < 0.3:
        ours, theirs = cr.jit(ours), jax.jit(theirs)
        steps.append("jit")
    if rng.random() < 0.3:  # forward mode through the whole stack
        tangents = [jax.tree_util.tree_map(lambda x: rng.standard_normal(np.shape(x)), v)
                    for v in values]
        f, g = ours, theirs
        ours = lambda *a: cr.jvp(f, tuple(a), tuple(tangents))
        theirs = lambda *a: jax.jvp(g, tuple(a), tuple(tangents))
        steps.append("jvp")
    return ours, theirs, values, " of ".join(reversed(steps))


@pytest.mark.parametrize("seed", [pytest.param(s, marks=[pytest.mark.slow] if s >= 24 else [])
                                  for s in range(COMPOSED_COUNT)])
def test_a_random_program_under_a_random_stack_of_transforms(seed):
    fp.jax_backend()  # (float64)
    case = fp.generate(seed, updates=seed % 3 == 0)  # (a third with repeated indices)
    ours, theirs, values, steps = composition(case, seed)
    expected = jax_compiled(theirs)(*values)
    got = ours(*values)
    detail = fp.difference(got, expected)
    assert detail is None, f"{steps}: {detail}\n{fp.describe_case(case)}"
