"""Every case of the derivative table, through every transform: generated, not picked.

``tests/test_derivatives.py`` checks each operation of the table against PyTorch
(float64, to 1e-10) and central differences, to second order, in both modes. Here
the same cases run through the transforms, and each result must equal what running
the operation one example at a time gives, eagerly (the numbers the table checked):

* ``vmap``: the examples stacked along axis 0; along their last axis; the first
  argument mapped and the others shared (``in_axes=None``);
* ``grad(vmap(f))``: the gradient of a weighted sum of the mapped outputs, against each
  example's own VJP;
* ``vmap(grad(f))``: per-example gradients, against each example's gradient;
* ``jit(vmap(jit(f)))``: a traced program of a map of a traced program, replayed on
  new numbers, against the examples one at a time;
* ``jit(jacfwd(loss))``: the gradient by forward mode, traced and replayed on new
  numbers (the JVP rules on the program's values, where an index or a mask the trace
  computes meets the tangents' plain columns), against the eager reverse-mode gradient.

So an operation added to the table is checked in every transform without anyone
writing its vmap or jit test: seven checks a case (about 40 s for the whole table on two
cores in ``make test``; ``make test-fast`` runs the first transform).
Outputs that are complex enter the losses by their real part (a real loss, as ``grad``
asks); integer outputs have no derivative and enter none.
"""

import zlib

import numpy as np
import pytest

import chainrule as cr

import test_derivatives as table

BATCH = 3
REL = 1e-10
TRANSFORMS = ["vmap over axis 0", "vmap over the last axis", "vmap of the first argument",
              "grad of vmap", "vmap of grad", "jit of vmap of jit", "jit of jacfwd"]
CASES = [pytest.param(case, id=case.id) for case in table.CASES]
# the developer's loop (make test-fast) runs the first; make test runs them all
TRANSFORM_PARAMS = [pytest.param(t, marks=[pytest.mark.slow] if k else [])
                    for k, t in enumerate(TRANSFORMS)]


# Other files' tables of composite functions (scipy's, nn.functional's, jax_nn's, lax's)
# are rows of the same shape, run through the same transforms by ``through``; a row
# whose output has no derivative runs through these.
VALUES_ONLY = ("vmap over axis 0", "vmap over the last axis", "vmap of the first argument",
               "jit of vmap of jit")


def row(id, fn, *specs, values_only=False):
    """A row of such a table: ``fn(*arrays)`` with one ``(shape, domain)`` per argument
    (the domains of tests/test_derivatives.py's ``draw``)."""
    case = table.Case(id, fn, None, specs)
    case.values_only = values_only
    return case


def params(rows):
    """Each row with each of its transforms, the first in the developer's fast loop."""
    return [pytest.param(r, t, id=f"{r.id}-{t.replace(' ', '_')}",
                         marks=[pytest.mark.slow] if k else [])
            for r in rows
            for k, t in enumerate(VALUES_ONLY if r.values_only else TRANSFORMS)]


def rng_for(case, what):
    return np.random.default_rng(zlib.crc32(f"{case.id}/{what}".encode()))


def examples(case):
    """BATCH sets of the case's inputs, each a little apart from the table's own: the
    scale keeps a domain's inputs in it (positive, symmetric positive definite, in
    (-1, 1)), and the examples are distinct where a batch might mix them up."""
    arrays = case.arrays()
    return [[a * (1.0 + 0.04 * k) for a in arrays] for k in range(BATCH)]


def outputs(out):
    return [np.asarray(getattr(o, "data", o)) for o in table.as_list(out)]


def dtype_of(o):
    """A value's dtype, without asking a transform's value for its numbers."""
    return o.dtype if hasattr(o, "dtype") else np.asarray(o).dtype


def differentiable(out):
    return [o for o in table.as_list(out) if dtype_of(o).kind in "fc"]


def loss(outs, weights):
    """The real part of sum(w * y) over the outputs that have a derivative."""
    total = 0.0
    for o, w in zip(differentiable(outs), weights):
        total = total + cr.real(cr.sum(o * w))
    return total


def weights_for(case, one_example_outputs, what):
    rng = rng_for(case, what)
    return [rng.standard_normal(np.shape(o)) for o in one_example_outputs
            if np.asarray(o).dtype.kind in "fc"]


def assert_close(actual, expected, what):
    actual, expected = outputs(actual), outputs(expected)
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype.kind == e.dtype.kind, f"{what}, output {i}: {a.dtype} vs {e.dtype}"
        table.assert_close(a, e, REL, f"{what}, output {i}")


def stacked(per_example, axis=0):
    """The examples' outputs stacked along ``axis``, output by output."""
    return [np.stack([outputs(o)[i] for o in per_example], axis=axis)
            for i in range(len(outputs(per_example[0])))]


def gradient(case, xs, weights):
    """Each input's gradient of the loss at one example, eagerly."""
    argnums = tuple(range(len(xs)))
    grads = cr.grad(lambda *a: loss(case.fn(*a), weights), argnums)(*xs)
    return list(grads)


def takes_arrays(transformed, xs):
    """Whether a transformed case runs eagerly on NumPy arrays (not only on Tensors,
    whose methods some cases call)."""
    try:
        transformed(*xs)
    except (AttributeError, TypeError):
        return False
    return True


@pytest.mark.parametrize("transform", TRANSFORM_PARAMS)
@pytest.mark.parametrize("case", CASES)
def test_a_case_through_a_transform(case, transform):
    through(case, transform)


def through(case, transform):
    """One case (``case.id``, ``case.fn`` and ``case.arrays()``) through one transform,
    against the same case run one example at a time eagerly. Other files' tables of
    composite functions (tests/test_scipy_composites_under_transforms.py) call it too."""
    sets = examples(case)
    eager = [case.fn(*[cr.tensor(a) for a in xs]) for xs in sets]
    n = len(sets[0])
    fn = case.fn

    if transform == "vmap over axis 0":
        batched = [np.stack([xs[i] for xs in sets]) for i in range(n)]
        assert_close(cr.vmap(fn)(*batched), stacked(eager), transform)
    elif transform == "vmap over the last axis":
        batched = [np.stack([xs[i] for xs in sets], axis=-1) for i in range(n)]
        out = cr.vmap(fn, in_axes=-1, out_axes=-1)(*batched)
        assert_close(out, stacked(eager, axis=-1), transform)
    elif transform == "vmap of the first argument":
        shared = sets[0][1:]
        batched = np.stack([xs[0] for xs in sets])
        expected = [fn(*[cr.tensor(a) for a in [xs[0], *shared]]) for xs in sets]
        out = cr.vmap(fn, in_axes=(0,) + (None,) * (n - 1))(batched, *shared)
        assert_close(out, stacked(expected), transform)
    elif transform == "grad of vmap":
        batched = [np.stack([xs[i] for xs in sets]) for i in range(n)]
        per = [weights_for(case, outputs(eager[0]), f"w{k}") for k in range(BATCH)]
        ws = [np.stack([w[i] for w in per]) for i in range(len(per[0]))]
        got = cr.grad(lambda *a: loss(cr.vmap(fn)(*a), ws), tuple(range(n)))(*batched)
        expected = [gradient(case, xs, w) for xs, w in zip(sets, per)]
        assert_close(list(got), [np.stack([e[i] for e in expected]) for i in range(n)],
                     transform)
    elif transform == "vmap of grad":
        batched = [np.stack([xs[i] for xs in sets]) for i in range(n)]
        w = weights_for(case, outputs(eager[0]), "w")
        got = cr.vmap(lambda *a: tuple(gradient(case, a, w)))(*batched)
        expected = [gradient(case, xs, w) for xs in sets]
        assert_close(list(got), [np.stack([e[i] for e in expected]) for i in range(n)],
                     transform)
    elif transform == "jit of jacfwd":
        w = weights_for(case, outputs(eager[0]), "w")
        forward = cr.jacfwd(lambda *a: loss(fn(*a), w), tuple(range(n)))
        program = cr.jit(forward)
        # a float32 value on the way: forward and reverse mode round in different places
        rel = 1e-6 if any(dtype_of(o) == np.float32 for o in outputs(eager[0])) else REL
        for scale in (1.0, 1.02):  # a trace, then a replay on new numbers
            xs = [a * scale for a in sets[1]]
            # NumPy arrays where the case takes them under jacfwd (under cr.jit, the
            # leaves not being differentiated are then plain traced arrays), else Tensors
            # (x.at[...], or NumPy's own ndarray.dot, which cannot take a tracer)
            inputs = xs if takes_arrays(forward, xs) else [cr.tensor(a) for a in xs]
            got, expected = outputs(list(program(*inputs))), outputs(gradient(case, xs, w))
            assert len(got) == len(expected), transform
            for i, (g, e) in enumerate(zip(got, expected)):
                table.assert_close(g, e, rel, f"{transform}, x{scale}, input {i}")
    else:
        program = cr.jit(cr.vmap(cr.jit(fn)))
        for scale in (1.0, 1.02):  # a trace, then a replay on new numbers
            scaled = [[a * scale for a in xs] for xs in sets]
            batched = [np.stack([xs[i] for xs in scaled]) for i in range(n)]
            expected = [fn(*[cr.tensor(a) for a in xs]) for xs in scaled]
            assert_close(program(*batched), stacked(expected), f"{transform}, x{scale}")
