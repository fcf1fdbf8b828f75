"""What ``cr.sparse_jacobian`` and ``cr.sparse_hessian`` need of another array library:
its compressed sparse row format for the result, and the input's numbers on the host,
where the sparsity pattern is found (``chainrule.sparse.pattern`` computes with SciPy).

PyTorch has ``torch.sparse_csr_tensor`` and CuPy ``cupyx.scipy.sparse.csr_matrix``,
each on the input's device; the compressed passes and the gather run in the library,
so only the input crosses to the host (once, for the pattern: none where ``sparsity=``
is given). A library without a sparse format of its own (Dask, array-api-strict) is
refused, naming the two ways on: NumPy's array for SciPy's sparse result, or a dense
Jacobian in the library.
"""

import warnings
from typing import Any

import numpy as np

from .library import Library

__all__ = ["check_sparse_support", "host_copy", "csr_array"]

_FORMATS = {"torch": "torch.sparse_csr_tensor", "cupy": "cupyx.scipy.sparse.csr_matrix"}


def _root(lib: Library) -> str:
    return lib.array_type.__module__.split(".")[0]


def check_sparse_support(lib: Library, who: str) -> None:
    """Refuse, in one line, a library with no sparse array to hold ``who``'s result."""
    if _root(lib) not in _FORMATS:
        dense = {"sparse_jacobian": "cr.jacfwd", "sparse_hessian": "cr.hessian"}.get(
            who, "cr.jacfwd or cr.hessian")
        raise TypeError(f"{who}: {lib.name} has no sparse array format for the result; "
                        f"pass NumPy's array (np.asarray(x), computing it) for SciPy's "
                        f"sparse array, or take {dense} for a dense one in {lib.name}")


def host_copy(lib: Library, x: Any) -> np.ndarray:
    """The numbers of ``x`` (an array of ``lib``) as a NumPy array on the host."""
    if _root(lib) == "torch":
        return x.detach().cpu().numpy()
    return x.get()  # (CuPy's copy to the host)


def csr_array(lib: Library, values: Any, indptr: np.ndarray, indices: np.ndarray,
              shape: tuple) -> Any:
    """The library's CSR array of ``shape`` holding ``values`` (an array of ``lib``) at
    the positions of ``indptr`` and ``indices`` (SciPy's, NumPy arrays)."""
    check_sparse_support(lib, "a sparse Jacobian or Hessian")
    if _root(lib) == "torch":
        import torch
        with warnings.catch_warnings():  # (torch says its CSR support is in beta)
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
            return torch.sparse_csr_tensor(
                lib.from_numpy(np.asarray(indptr, dtype=np.int64)),
                lib.from_numpy(np.asarray(indices, dtype=np.int64)), values, size=shape,
                check_invariants=False)  # (built here from SciPy's sorted CSR: they hold)
    import cupyx.scipy.sparse  # (its indices are 32-bit)
    return cupyx.scipy.sparse.csr_matrix(
        (values, lib.from_numpy(np.asarray(indices, dtype=np.int32)),
         lib.from_numpy(np.asarray(indptr, dtype=np.int32))), shape=shape)
