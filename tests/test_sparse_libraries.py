"""Sparse Jacobians and Hessians of another library's arrays (issue 45): computed in that
library and returned as its own compressed sparse rows (PyTorch's ``sparse_csr``), in
its dtype; a library with no sparse format is refused in one line, eagerly and under
cr.jit.

The random sparse programs of tests/test_sparse_derivatives.py run on torch tensors in
every mode, both Hessian colourings, with ``sparsity=`` and under cr.jit, against
NumPy's result (equal to the dense Jacobian there)."""

import numpy as np
import pytest
import torch

import chainrule as cr
from test_sparse_derivatives import MODES, _random_program

N = 8


def dense(result):
    """A torch CSR result as a NumPy array, checking that it is one."""
    assert isinstance(result, torch.Tensor) and result.layout == torch.sparse_csr
    return result.to_dense().numpy()


@pytest.mark.parametrize("seed", range(8))
def test_random_programs_jacobians_in_torch_equal_numpys(seed):
    rng = np.random.default_rng(3000 + seed)
    program = _random_program(rng, N)
    x = rng.standard_normal(N)
    pattern = cr.jacobian_sparsity(program)(x)
    for mode in MODES:
        expected = cr.sparse_jacobian(program, mode=mode)(x).toarray()
        np.testing.assert_allclose(dense(cr.sparse_jacobian(program, mode=mode)(
            torch.tensor(x))), expected, rtol=1e-12, atol=1e-12)
    known = cr.sparse_jacobian(program, sparsity=pattern)
    jitted = cr.jit(cr.sparse_jacobian(program))
    for point in (x, rng.standard_normal(N)):
        expected = cr.sparse_jacobian(program)(point).toarray()
        np.testing.assert_allclose(dense(known(torch.tensor(point))), expected,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dense(jitted(torch.tensor(point))), expected,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("coloring", ["star", "acyclic"])
def test_random_programs_hessians_in_torch_equal_numpys(seed, coloring):
    rng = np.random.default_rng(4000 + seed)
    program = _random_program(rng, N)
    f = lambda x: cr.sum(cr.sin(program(x))) + cr.sum(x[1:] * x[:-1])  # noqa: E731
    jitted = cr.jit(cr.sparse_hessian(f, coloring=coloring))
    for _ in range(2):
        x = rng.standard_normal(N)
        expected = np.asarray(cr.hessian(f)(x))
        scale = np.abs(expected).max()
        for got in (cr.sparse_hessian(f, coloring=coloring)(torch.tensor(x)),
                    jitted(torch.tensor(x))):
            assert np.abs(dense(got) - expected).max() <= 1e-12 * scale


def test_float32_stays_float32_in_numpy_and_in_torch():
    f = lambda x: x[1:] * x[:-1] - cr.sin(x[1:])  # noqa: E731
    g = lambda x: cr.sum(x[1:] * x[:-1] ** 2)  # noqa: E731
    x = np.linspace(0.0, 1.0, 6, dtype=np.float32)
    for mode in MODES:
        assert cr.sparse_jacobian(f, mode=mode)(x).dtype == np.float32
        assert cr.sparse_jacobian(f, mode=mode)(torch.tensor(x)).dtype == torch.float32
    for coloring in ("star", "acyclic"):
        assert cr.sparse_hessian(g, coloring=coloring)(x).dtype == np.float32
        assert cr.sparse_hessian(g, coloring=coloring)(torch.tensor(x)).dtype == \
            torch.float32


@pytest.mark.parametrize("library", ["array_api_strict", "dask"])
def test_a_library_without_a_sparse_format_is_refused_in_one_line(library):
    if library == "dask":
        import dask.array as da
        x = da.ones(4)
    else:
        import array_api_strict as xps
        x = xps.ones(4, dtype=xps.float64)
    name = "dask" if library == "dask" else "array_api_strict"
    f = lambda x: cr.sum(x ** 3)  # noqa: E731
    for call, dense_name in ((cr.sparse_jacobian(lambda x: x ** 2), "cr.jacfwd"),
                             (cr.sparse_hessian(f), "cr.hessian"),
                             (cr.jit(cr.sparse_hessian(f)), "cr.hessian")):
        with pytest.raises(TypeError, match=f"^sparse_(jacobian|hessian): {name} has no "
                                            f"sparse array format for the result; pass "
                                            f"NumPy's array .* or take {dense_name} for a "
                                            f"dense one in {name}$"):
            call(x)
