"""The derivative table through the transforms, on torch and array-api-strict: generated.

tests/test_table_under_transforms.py runs each case of tests/test_derivatives.py through
the transforms on NumPy's arrays; tests/test_backends.py runs each case eagerly on other
libraries' arrays. Here the two meet: the case's examples, stacked, as torch CPU tensors
and as array-api-strict arrays, through

* ``vmap`` over axis 0;
* ``grad(vmap(f))``: the gradient of a weighted sum of the mapped outputs;
* ``jit(vmap(jit(f)))``: traced on the library's arrays, then replayed on new numbers;

and each result must be the same transform's on the NumPy arrays, to 1e-10 relative,
as an array of the inputs' library in NumPy's result's dtype (float64 stays float64, an
integer output an integer).

The cases each library leaves out are tests/test_backends.py's: on torch, the cases it
gives other numbers for (``TORCH_OTHER_NUMBERS``: partition, strict xfails here); on
array-api-strict, what the standard lacks (``lacked_by_the_standard``: einsum, erf,
indexing beyond the standard). A case array-api-strict refuses under a transform must
be refused so (an error ``lacked_by_the_standard`` accepts), and be one it refuses
eagerly too (tests/test_backends.py's own check, to second order); a case it runs
eagerly but not under a transform is a strict xfail below, with its reason. Dask is
left out: each case builds a graph and computes it, about 70 s for vmap alone over the
table in one process (every tenth case took 7 s), which would take the file past its
budget of about 3 minutes in ``make test``. Last, each output of a jitted decomposition
(slogdet, qr, eigh, svd) must replay on new numbers, on NumPy and each library.

Six checks a case (3 transforms, 2 libraries), for every case of the table. On
torch each transform compares every case but partition (a strict xfail); on
array-api-strict, the cases the standard lacks are checked to be refused, eagerly too
(cross entropy's gradient, which writes by an array, under grad of vmap besides).
Measured on two cores shared with another test run (load 4 to 7): ``time pytest -q -n
2 tests/test_table_under_transforms_backends.py``, 1 min 36 s to 2 min 24 s; ``make
test-fast``'s share (``-m "not slow"``: vmap's checks and the replays), 51 to 62 s.
"""

import numpy as np
import pytest

import chainrule as cr

import test_backends as backends
import test_derivatives as table
import test_table_under_transforms as on_numpy

torch = backends.torch
REL = 1e-10
LIBRARIES = ["torch", "array_api_strict"]
TRANSFORMS = ["vmap over axis 0", "grad of vmap", "jit of vmap of jit"]
# the developer's loop (make test-fast) runs the first; make test runs them all
TRANSFORM_PARAMS = [pytest.param(t, marks=[pytest.mark.slow] if k else [])
                    for k, t in enumerate(TRANSFORMS)]

# (library, case id): why a transform fails there although the library runs the case
# eagerly. Each is checked to still fail (strict).
FAILS_UNDER_TRANSFORMS: dict[tuple[str, str], str] = {}


def marks(name, case):
    reason = backends.TORCH_OTHER_NUMBERS.get(case.id) if name == "torch" else None
    reason = reason or FAILS_UNDER_TRANSFORMS.get((name, case.id))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


PARAMS = [pytest.param(name, case, id=f"{name}-{case.id}", marks=marks(name, case))
          for name in LIBRARIES for case in table.CASES]


def run(case, transform, to):
    """The transform of the case's function on its examples stacked on axis 0, each
    array made the library's by ``to``; the results as a list of leaves."""
    sets = on_numpy.examples(case)
    n = len(sets[0])
    batched = [np.stack([xs[i] for xs in sets]) for i in range(n)]
    fn = case.fn
    if transform == "vmap over axis 0":
        return cr.tree_leaves(cr.vmap(fn)(*map(to, batched)))
    if transform == "grad of vmap":
        one = on_numpy.outputs(case.fn(*[cr.tensor(a) for a in sets[0]]))
        per = [on_numpy.weights_for(case, one, f"w{k}") for k in range(len(sets))]
        ws = [to(np.stack([w[i] for w in per])) for i in range(len(per[0]))]
        grads = cr.grad(lambda *a: on_numpy.loss(cr.vmap(fn)(*a), ws), tuple(range(n)))
        return cr.tree_leaves(grads(*map(to, batched)))
    program = cr.jit(cr.vmap(cr.jit(fn)))
    # a trace, then a replay on new numbers
    return [leaf for scale in (1.0, 1.02)
            for leaf in cr.tree_leaves(program(*[to(b * scale) for b in batched]))]


def refused_eagerly(name, case):
    """The error of tests/test_backends.py's eager check of the case on the library (its
    gradient and a Hessian-vector product), or None where the library runs it."""
    arrays = case.arrays()
    outs = on_numpy.outputs(case.fn(*[cr.tensor(a) for a in arrays]))
    ws = table.cotangents(case, outs, np.float64)
    vs = [table.seeded(case.id, "v").standard_normal(a.shape) for a in arrays]
    try:
        backends._table_results(case, backends.convert(name, arrays),
                                backends.convert(name, ws), backends.convert(name, vs))
    except Exception as error:  # noqa: BLE001  (what the error is, is checked)
        return f"{type(error).__name__}: {error}"
    return None


@pytest.mark.parametrize("transform", TRANSFORM_PARAMS)
@pytest.mark.parametrize("name, case", PARAMS)
def test_a_case_through_a_transform_on_another_library(name, case, transform):
    expected = run(case, transform, lambda a: a)
    to = backends.BACKENDS[name][0]
    try:
        got = run(case, transform, to)
    except Exception as error:  # noqa: BLE001  (array-api-strict's refusals, checked)
        message = f"{type(error).__name__}: {error}"
        if name != "array_api_strict" or not backends.lacked_by_the_standard(message):
            raise
        eagerly = refused_eagerly(name, case)
        assert eagerly is not None, \
            f"{transform} refuses a case {name} runs eagerly: {message}"
        assert backends.lacked_by_the_standard(eagerly), eagerly
        return
    assert len(got) == len(expected), transform
    for i, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(getattr(e, "data", e))
        backends.assert_same_kind(g, name, e.dtype)
        table.assert_close(backends.back(name, g), e, REL, f"{transform}, result {i}")


@pytest.mark.parametrize("name", ["numpy", *LIBRARIES])
def test_a_jitted_decomposition_replays_its_every_output_on_new_numbers(name):
    """Each output of a decomposition returned by a jitted function is traced, not kept
    as a constant: torch's ``torch.return_types`` are tuples without a namedtuple's
    ``_fields``, and come back as namedtuples of the same names, as NumPy's."""
    x = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.4], [0.1, 0.4, 3.0]])  # (eigh: symmetric)
    to = backends.BACKENDS[name][0] if name != "numpy" else np.asarray
    for f in (cr.linalg.slogdet, cr.linalg.qr, cr.linalg.eigh, cr.linalg.svd):
        program = cr.jit(lambda a, f=f: f(a))
        program(to(x))
        replayed, traced = program(to(x * x)), cr.jit(lambda a, f=f: f(a))(to(x * x))
        assert replayed._fields == traced._fields == f(x * x)._fields
        for g, e in zip(replayed, traced):
            if name == "numpy":
                g, e = np.asarray(g), np.asarray(e)
            else:
                backends.assert_same_kind(g, name, np.float64)
                g, e = backends.back(name, g), backends.back(name, e)
            np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-13)
