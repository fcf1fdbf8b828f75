"""Every complex case of tests/test_complex.py through every transform: generated.

tests/test_complex.py checks each operation on complex numbers against jax.numpy
(complex128): value, VJP and JVP, to second order. Here the same cases run through the
transforms of tests/test_table_under_transforms.py, on three examples a little apart:

* ``vmap``: the examples stacked along axis 0; along their last axis; the first
  argument mapped and the others shared (``in_axes=None``);
* ``grad(vmap(f))``: the gradient of the real loss Re(sum(conj(w) * y)) of the mapped
  outputs (``grad`` asks for a real output, as JAX's does), per-example w;
* ``vmap(grad(f))``: per-example gradients of that loss, one w;
* ``jit(vmap(jit(f)))``: traced, then replayed on new numbers.

The oracle is chainrule itself, one example at a time, eagerly (a gradient: cr.grad of
the example's loss): the numbers tests/test_complex.py holds to JAX's. Each result must
be it to 1e-10, relative to the larger of its size and 1, with a complex result where
it is complex and a real one where real (a real input's gradient is real).
JAX's own transforms of the reference functions (jax.vmap, jax.grad, jax.jit) agree
with it: ``CHAINRULE_COMPLEX_ORACLE=jax`` compares with them instead, and all 888
checks pass at 1e-10; but JAX compiles each check's program with XLA, three times
chainrule's oracle's CPU time (every 15th check: 15.5 s against 5.0 s). Two cases go
through JAX's transforms in ``make test`` (``test_jaxs_transforms_agree``, 12 checks).

148 cases, 6 transforms: 888 checks. Measured on two cores shared with another test run
(load 4 to 7): ``time pytest -q -n 2 tests/test_table_under_transforms_complex.py``,
38 s; ``make test-fast``'s share (``-m "not slow"``: vmap over axis 0, 148 checks), 19
to 33 s. Most of either is each worker's start (importing JAX and torch).
"""

import os

import numpy as np
import pytest

import chainrule as cr

import test_complex as complex_table
from test_table_under_transforms import BATCH, REL, TRANSFORM_PARAMS, TRANSFORMS, rng_for

jax, jnp = complex_table.jax, complex_table.jnp
JAX_ORACLE = os.environ.get("CHAINRULE_COMPLEX_ORACLE") == "jax"
CASES = [pytest.param(case, id=case.id) for case in complex_table.CASES]


def examples(case):
    """BATCH sets of the case's inputs, each a little apart from its own: scaled by at
    most 1.08, a complex input's real part stays in (0.4, 1.3), away from the branch
    cuts along the negative reals, and a matrix stays dominant or Hermitian."""
    inputs = case.inputs()
    return [[x * (1.0 + 0.04 * k) for x in inputs] for k in range(BATCH)]


def leaves(out):
    return [np.asarray(getattr(o, "data", o)) for o in cr.tree_leaves(out)]


def weights_for(case, inputs, what, batch=()):
    """A random w of each output's shape (with ``batch`` in front), complex where the
    output is complex."""
    rng = rng_for(case, what)
    return [complex_table.like(rng, np.zeros(batch + o.shape, o.dtype))
            for o in leaves(case.fn(*inputs))]


def loss(np_, outs, weights):
    """Re(sum(conj(w) * y)) over the outputs: real, as grad asks."""
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    total = 0.0
    for y, w in zip(outs, weights):
        total = total + np_.sum(np_.real(np_.conj(w) * y))
    return total


def stacked(per_example, axis=0):
    per_example = [leaves(o) for o in per_example]
    return [np.stack([o[i] for o in per_example], axis=axis)
            for i in range(len(per_example[0]))]


def assert_close(actual, expected, what):
    actual, expected = leaves(actual), leaves(expected)
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        complex_table.assert_close(a, e, f"{what}, result {i}", REL)


def through(transforms, fn, case, sets, transform):
    """The transform of ``fn`` on the examples, with ``transforms`` (chainrule, or
    JAX's with jax.numpy) giving vmap, grad and jit."""
    vmap, grad, jit, np_ = transforms
    # JAX's transforms run as one compiled program each (eager JAX compiles each
    # operation on its own); chainrule's run as they are, what is tested
    whole = jit if np_ is jnp else (lambda f: f)
    n = len(sets[0])
    argnums = tuple(range(n))
    batched = [np.stack([xs[i] for xs in sets], axis) for axis in (0, -1)
               for i in range(n)]
    if np_ is jnp:
        batched = [jnp.asarray(b) for b in batched]
    batched, last = batched[:n], batched[n:]
    if transform == "vmap over axis 0":
        return whole(vmap(fn))(*batched)
    if transform == "vmap over the last axis":
        return whole(vmap(fn, in_axes=-1, out_axes=-1))(*last)
    if transform == "vmap of the first argument":
        shared = sets[0][1:]
        return whole(vmap(fn, in_axes=(0,) + (None,) * (n - 1)))(batched[0], *shared)
    if transform == "grad of vmap":
        ws = weights_for(case, sets[0], "batched w", (len(sets),))
        return whole(grad(lambda *a: loss(np_, vmap(fn)(*a), ws), argnums))(*batched)
    if transform == "vmap of grad":
        w = weights_for(case, sets[0], "w")
        return whole(vmap(grad(lambda *a: loss(np_, fn(*a), w), argnums)))(*batched)
    program = jit(vmap(jit(fn)))
    return [program(*[b * scale for b in batched]) for scale in (1.0, 1.02)]


CHAINRULE = (cr.vmap, cr.grad, cr.jit, cr)
JAX = (jax.vmap, jax.grad, jax.jit, jnp)


def one_at_a_time(case, sets, transform):
    """What the transform must give, from chainrule's eager results, example by
    example."""
    fn, n = case.fn, len(sets[0])
    argnums = tuple(range(n))
    if transform == "vmap over axis 0":
        return stacked([fn(*xs) for xs in sets])
    if transform == "vmap over the last axis":
        return stacked([fn(*xs) for xs in sets], axis=-1)
    if transform == "vmap of the first argument":
        return stacked([fn(xs[0], *sets[0][1:]) for xs in sets])
    if transform == "grad of vmap":
        ws = weights_for(case, sets[0], "batched w", (len(sets),))
        return stacked([cr.grad(lambda *a, k=k: loss(cr, fn(*a), [w[k] for w in ws]),
                                argnums)(*xs) for k, xs in enumerate(sets)])
    if transform == "vmap of grad":
        w = weights_for(case, sets[0], "w")
        return stacked([cr.grad(lambda *a: loss(cr, fn(*a), w), argnums)(*xs)
                        for xs in sets])
    return [stacked([fn(*[x * scale for x in xs]) for xs in sets]) for scale in (1.0, 1.02)]


@pytest.mark.parametrize("transform", TRANSFORM_PARAMS)
@pytest.mark.parametrize("case", CASES)
def test_a_complex_case_through_a_transform(case, transform):
    sets = examples(case)
    got = through(CHAINRULE, case.fn, case, sets, transform)
    if JAX_ORACLE:
        expected = through(JAX, case.ref, case, sets, transform)
    else:
        expected = one_at_a_time(case, sets, transform)
    assert_close(got, expected, transform)


# JAX's transforms of the reference functions, for two of the cases (one input, not
# holomorphic; two inputs, the second shared by the first-argument map): what
# CHAINRULE_COMPLEX_ORACLE=jax runs for all, kept running here so that it stays true.
ORACLE_CASES = [pytest.param(case, id=case.id) for case in complex_table.CASES
                if case.id in ("composite", "power-complex")]


@pytest.mark.slow
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("case", ORACLE_CASES)
def test_jaxs_transforms_agree(case, transform):
    sets = examples(case)
    theirs = through(JAX, case.ref, case, sets, transform)
    assert_close(through(CHAINRULE, case.fn, case, sets, transform), theirs, transform)
    assert_close(one_at_a_time(case, sets, transform), theirs,
                 f"{transform}, one at a time")
