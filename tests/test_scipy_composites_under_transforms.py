"""chainrule.scipy's linalg, signal, ndimage, fft, interpolate, sparse.linalg and cluster under
the function transforms: generated from a table, as the derivative table's cases are.

These functions are written with chainrule's operations (a DCT is an FFT with a twist,
map_coordinates a gather at computed indices, a padded convolution a pad and a valid
convolution) or are primitives of their own (expm, the Sylvester solve). Their own test
files check values against SciPy and derivatives against JAX on plain arrays, and
each transform on a few hand-picked calls. Here every case below runs through the
derivative table's seven transforms (tests/test_table_under_transforms.py: vmap over
the first and the last axis, vmap of the first argument with the others shared,
grad of vmap, vmap of grad, jit(vmap(jit)) replayed on new numbers, jit of jacfwd),
each against the same call made one example at a time, eagerly.

Every public name of these modules has a case here or a reason in SKIPPED
(test_every_public_function_has_a_case_or_a_reason), so a function added later is
checked under the transforms as soon as it is given a row. Functions that refuse a
derivative (schur, hessenberg, funm, rsf2csf: SciPy's values only) run through the
three vmaps and jit(vmap(jit)) only.
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.scipy.cluster.vq as vq
import chainrule.scipy.fft as fft
import chainrule.scipy.interpolate as interpolate
import chainrule.scipy.linalg as la
import chainrule.scipy.ndimage as ndimage
import chainrule.scipy.signal as signal
import chainrule.scipy.sparse as sparse
import chainrule.scipy.sparse.linalg as spla

import test_table_under_transforms as transforms

CASES = []


def case(*row, **options):
    CASES.append(transforms.row(*row, **options))


def lower(a):
    return cr.tril(a)


# --- scipy.linalg: solves and factorizations ------------------------------------------
M, V, M32 = (3, 3), (3,), (3, 2)
for trans in (0, 1):
    case(f"solve_triangular-lower-trans{trans}",
         lambda a, b, t=trans: la.solve_triangular(lower(a), b, trans=t, lower=True),
         (M, "wellcond"), (M32, "any"))
case("solve_triangular-upper", lambda a, b: la.solve_triangular(cr.triu(a), b),
     (M, "wellcond"), (V, "any"))
case("cholesky-upper", la.cholesky, (M, "spd"))
case("cholesky-lower", lambda a: la.cholesky(a, lower=True), (M, "spd"))
case("cho_factor", lambda a: la.cho_factor(a)[0], (M, "spd"))
case("cho_solve", lambda a, b: la.cho_solve(la.cho_factor(a), b), (M, "spd"), (M32, "any"))
case("lu_factor", la.lu_factor, (M, "wellcond"))
for trans in (0, 1):
    case(f"lu_solve-trans{trans}",
         lambda a, b, t=trans: la.lu_solve(la.lu_factor(a), b, trans=t),
         (M, "wellcond"), (V, "any"))
case("lu", la.lu, (M, "wellcond"))
case("lu-permute_l", lambda a: la.lu(a, permute_l=True), (M, "wellcond"))
case("solve", la.solve, (M, "wellcond"), (M32, "any"))
case("inv", la.inv, (M, "wellcond"))
case("det", la.det, (M, "wellcond"))
case("slogdet", la.slogdet, (M, "wellcond"))
case("eigh", la.eigh, (M, "spd"))
case("svd", lambda a: la.svd(a, full_matrices=False), (M32, "any"))
case("qr", la.qr, (M32, "any"))
case("lstsq", lambda a, b: la.lstsq(a, b)[0], (M32, "any"), (V, "any"))
case("pinv", la.pinv, (M32, "any"))
case("solve_banded",
     lambda ab, b: la.solve_banded((1, 1), ab + np.array([[0.0], [3.0], [0.0]]), b),
     ((3, 4), "any"), ((4,), "any"))
case("solve_sylvester", la.solve_sylvester, (M, "wellcond"), ((2, 2), "wellcond"),
     (M32, "any"))
case("solve_continuous_lyapunov", la.solve_continuous_lyapunov, (M, "wellcond"),
     (M, "any"))

# --- scipy.linalg: matrix functions ----------------------------------------------------
case("expm", lambda a: la.expm(0.5 * a), (M, "any"))
case("expm_frechet", lambda a, e: la.expm_frechet(0.5 * a, e), (M, "any"), (M, "any"))
case("logm", la.logm, (M, "spd"))
case("sqrtm", la.sqrtm, (M, "spd"))
case("polar-right", la.polar, (M, "wellcond"))
case("polar-left", lambda a: la.polar(a, side="left"), (M, "wellcond"))
case("qr_multiply", la.qr_multiply, (M, "wellcond"), (M, "any"))
case("eigh_tridiagonal", la.eigh_tridiagonal, ((4,), "any"), ((3,), "any"))
case("schur", la.schur, (M, "spd"), values_only=True)
case("hessenberg", lambda a: la.hessenberg(a, calc_q=True), ((4, 4), "any"),
     values_only=True)
case("rsf2csf", lambda a: la.rsf2csf(*la.schur(a)), (M, "spd"), values_only=True)
case("funm", lambda a: la.funm(a, np.exp), (M, "spd"), values_only=True)

# --- scipy.linalg: matrices made from vectors ------------------------------------------
case("toeplitz", la.toeplitz, ((3,), "any"), ((4,), "any"))
case("toeplitz-symmetric", la.toeplitz, ((3,), "any"))
case("hankel", la.hankel, ((3,), "any"), ((4,), "any"))
case("circulant", la.circulant, ((4,), "any"))
case("companion", la.companion, ((4,), "any"))
case("leslie", la.leslie, ((3,), "any"), ((2,), "any"))
case("fiedler", la.fiedler, ((4,), "any"))
case("fiedler_companion", la.fiedler_companion, ((4,), "any"))
for mode in ("full", "same", "valid"):
    case(f"convolution_matrix-{mode}",
         lambda a, m=mode: la.convolution_matrix(a, 4, m), ((3,), "any"))
case("block_diag", la.block_diag, ((2, 2), "any"), ((1, 3), "any"))

# --- scipy.signal ----------------------------------------------------------------------
for name in ("convolve", "correlate"):
    for mode in ("full", "same", "valid"):
        case(f"{name}-{mode}", lambda a, b, f=getattr(signal, name), m=mode: f(a, b, m),
             ((5,), "any"), ((3,), "any"))
        case(f"{name}-2d-{mode}", lambda a, b, f=getattr(signal, name), m=mode: f(a, b, m),
             ((4, 3), "any"), ((2, 2), "any"))
for name in ("convolve2d", "correlate2d"):
    for mode in ("full", "same", "valid"):
        for boundary in ("fill", "wrap", "symm"):
            case(f"{name}-{mode}-{boundary}",
                 lambda a, b, f=getattr(signal, name), m=mode, bd=boundary:
                     f(a, b, m, boundary=bd, fillvalue=0.5),
                 ((4, 5), "any"), ((2, 3), "any"))
for mode in ("full", "same", "valid"):
    case(f"fftconvolve-{mode}", lambda a, b, m=mode: signal.fftconvolve(a, b, m),
         ((5,), "any"), ((3,), "any"))
case("fftconvolve-axes", lambda a, b: signal.fftconvolve(a, b, axes=1),
     ((2, 5), "any"), ((1, 3), "any"))
case("detrend-linear", signal.detrend, ((6,), "any"))
case("detrend-linear-bp", lambda x: signal.detrend(x, bp=[3]), ((7,), "any"))
case("detrend-constant-axis0", lambda x: signal.detrend(x, axis=0, type="constant"),
     ((4, 3), "any"))

# --- scipy.ndimage ---------------------------------------------------------------------
MODES = ("constant", "grid-constant", "nearest", "mirror", "reflect", "grid-mirror",
         "wrap", "grid-wrap")
for order in (0, 1):
    for mode in MODES:
        # coordinates in about [-2, 5.5]: inside the (4, 3) image and past each edge
        case(f"map_coordinates-order{order}-{mode}",
             lambda image, c, o=order, m=mode:
                 ndimage.map_coordinates(image, 2.5 * c + 1.5, o, mode=m, cval=0.5),
             ((4, 3), "any"), ((2, 5), "any"))

# --- scipy.fft -------------------------------------------------------------------------
for name in ("dct", "idct"):
    for norm in (None, "ortho", "forward"):
        case(f"{name}-{norm}", lambda x, f=getattr(fft, name), nm=norm: f(x, norm=nm),
             ((5,), "any"))
    case(f"{name}-axis0-n", lambda x, f=getattr(fft, name): f(x, n=5, axis=0),
         ((3, 4), "any"))
    case(f"{name}-cut", lambda x, f=getattr(fft, name): f(x, n=3), ((2, 5), "any"))
for name in ("dctn", "idctn"):
    case(f"{name}", lambda x, f=getattr(fft, name): f(x, norm="ortho"), ((3, 4), "any"))
    case(f"{name}-s-axes", lambda x, f=getattr(fft, name): f(x, s=(5,), axes=(0,)),
         ((3, 4), "any"))

# --- scipy.interpolate -----------------------------------------------------------------
GRID = (np.array([0.0, 0.3, 0.7, 1.0]), np.array([0.0, 0.5, 1.0]))
for method in ("linear", "nearest"):
    # points in [0.05, 1.03): inside the grid, and a little past its far edges
    case(f"RegularGridInterpolator-{method}",
         lambda values, points, m=method: interpolate.RegularGridInterpolator(
             GRID, values, m, bounds_error=False, fill_value=None)(points),
         ((4, 3), "any"), ((5, 2), "prob"))
case("RegularGridInterpolator-grid-coordinates",
     lambda x, values, points: interpolate.RegularGridInterpolator(
         (cr.cumsum(cr.abs(x)), GRID[1]), values, bounds_error=False, fill_value=0.5)(
             points),
     ((4,), "any"), ((4, 3), "any"), ((5, 2), "prob"))

# --- scipy.sparse.linalg ---------------------------------------------------------------
for name in ("cg", "minres", "gmres", "bicgstab"):
    solver = getattr(spla, name)
    case(f"{name}-function", lambda a, b, s=solver: s(lambda v: a @ v, b, rtol=1e-13)[0],
         ((4, 4), "spd"), ((4,), "any"))
ROW, COL = np.array([0, 1, 2, 0, 2]), np.array([0, 1, 2, 2, 0])
case("spsolve",
     lambda data, b: spla.spsolve(sparse.coo_array((data + 3.0, (ROW, COL)), shape=(3, 3)), b),
     ((5,), "any"), ((3,), "any"))

# --- scipy.cluster ---------------------------------------------------------------------
case("vq", vq.vq, ((5, 3), "any"), ((4, 3), "any"))
case("vq-1d", vq.vq, ((5,), "any"), ((3,), "any"))

SKIPPED = {name: "takes only a size: no argument to map or differentiate"
           for name in ("dft", "hadamard", "helmert", "hilbert", "invhilbert", "pascal",
                        "invpascal")}
SKIPPED["odeint"] = ("tests/test_scipy_integrate.py runs it under vmap, jit and nested "
                     "grads; a table of it would re-integrate for every transform")
MODULES = (la, signal, ndimage, fft, interpolate, spla, vq)


def test_every_public_function_has_a_case_or_a_reason():
    covered = {c.id.split("-")[0] for c in CASES}
    missing = [f"{m.__name__}.{name}" for m in MODULES for name in m.__all__
               if name not in covered and name not in SKIPPED]
    assert not missing, f"add a case (or a reason in SKIPPED) for: {missing}"


@pytest.mark.parametrize("case, transform", transforms.params(CASES))
def test_a_composite_through_a_transform(case, transform):
    transforms.through(case, transform)
