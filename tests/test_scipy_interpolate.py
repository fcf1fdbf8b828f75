"""chainrule.scipy.interpolate.RegularGridInterpolator (linear and nearest): SciPy's
values exactly (points on grid lines, cell midpoints, outside with each fill_value,
trailing value axes), and derivatives in the points asked for, the values and the
grid's coordinates against jax.scipy.interpolate's, to second order in both modes,
under vmap and jit.
"""

import jax
import jax.numpy as jnp
import jax.scipy.interpolate as jinterp
import numpy as np
import pytest
import scipy.interpolate as sinterp

import chainrule as cr
from chainrule.scipy.interpolate import RegularGridInterpolator
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)


def problem(name, dims=2, trailing=()):
    """(grid, values, points asked for): points inside and outside the grid, on its
    lines and half-way across cells."""
    rng = seeded("regular grid", name, dims, trailing)
    grid = tuple(np.sort(rng.uniform(-2, 2, n)) for n in (4, 5, 3)[:dims])
    values = rng.standard_normal(tuple(len(g) for g in grid) + trailing)
    xi = np.stack([rng.uniform(g[0] - 0.6, g[-1] + 0.6, 40) for g in grid], axis=-1)
    for k, g in enumerate(grid):
        xi[4 * k:4 * k + len(g[:4]), k] = g[:4]
        xi[20 + k, k] = (g[0] + g[1]) / 2  # (a tie for nearest)
    return grid, values, xi


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 2.5], ids=["nan", "None", "2.5"])
@pytest.mark.parametrize("dims, trailing", [(1, ()), (2, ()), (3, ()), (2, (2,))])
def test_values_are_scipys(method, fill_value, dims, trailing):
    grid, values, xi = problem("values", dims, trailing)
    ours = RegularGridInterpolator(grid, values, method=method, bounds_error=False,
                                   fill_value=fill_value)(xi)
    want = sinterp.RegularGridInterpolator(grid, values, method=method, bounds_error=False,
                                           fill_value=fill_value)(xi)
    assert type(ours) is np.ndarray and ours.shape == want.shape
    np.testing.assert_allclose(ours, want, rtol=1e-13, atol=1e-14)


def test_bounds_error_is_scipys_default_and_a_tuple_of_coordinates_is_taken():
    grid, values, xi = problem("bounds")
    with pytest.raises(ValueError, match="out of bounds in dimension"):
        RegularGridInterpolator(grid, values)(xi)
    inside = np.array([[0.1, 0.2], [-0.3, 0.4]])
    f = RegularGridInterpolator(grid, values)
    np.testing.assert_allclose(f((inside[:, 0], inside[:, 1])), f(inside), rtol=1e-15)
    np.testing.assert_allclose(f(inside), sinterp.RegularGridInterpolator(grid, values)(inside),
                               rtol=1e-13)
    with pytest.raises(ValueError, match="pass bounds_error=False"):
        cr.jit(lambda x: f(x))(inside)


def generic(grid, count, rng):
    """Points inside the grid, away from its lines (where the slope jumps)."""
    out = []
    for g in grid:
        cells = rng.integers(0, len(g) - 1, count)
        t = rng.uniform(0.1, 0.9, count)
        out.append(g[cells] + t * (g[cells + 1] - g[cells]))
    return np.stack(out, axis=-1)


@pytest.mark.parametrize("argnum", [0, 1, 2], ids=["points asked", "values", "grid"])
def test_linear_derivatives_match_jax_to_second_order(argnum):
    grid, values, _ = problem("derivatives")
    rng = seeded("regular grid derivatives", argnum)
    xi = generic(grid, 7, rng)
    weights = rng.standard_normal(7)

    def ours(xi, values, grid):
        f = RegularGridInterpolator(tuple(grid), values, bounds_error=False)
        return cr.sum(weights * f(xi) ** 2)

    def theirs(xi, values, grid):
        f = jinterp.RegularGridInterpolator(tuple(grid), values)
        return jnp.sum(weights * f(xi) ** 2)

    args = (xi, values, list(grid))
    want = jax.jit(jax.grad(theirs, argnums=argnum))(*args)
    got = cr.grad(ours, argnums=argnum)(*args)
    forward = cr.jacfwd(ours, argnums=argnum)(*args)
    for a, b, c in zip(cr.tree_leaves(got), cr.tree_leaves(forward), jax.tree.leaves(want)):
        np.testing.assert_allclose(a, c, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(b, c, rtol=1e-11, atol=1e-12)
    if argnum != 2:  # (the grid is a list of arrays: its Hessian is a nested block)
        want = jax.jit(jax.hessian(theirs, argnums=argnum))(*args)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(*args), want,
                                   rtol=1e-10, atol=1e-11)


def test_nearest_has_no_slope_in_the_points_and_picks_values():
    grid, values, _ = problem("nearest")
    xi = generic(grid, 5, seeded("nearest points"))
    f = lambda v, x: cr.sum(RegularGridInterpolator(grid, v, method="nearest")(x))
    assert not np.any(cr.grad(f, argnums=1)(values, xi))
    counts = cr.grad(f)(values, xi)  # each value's weight: how often it is the nearest
    assert counts.sum() == 5 and set(np.unique(counts)) <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}


def test_under_vmap_and_jit():
    grid, values, _ = problem("transforms")
    rng = seeded("regular grid transforms")
    batches = np.stack([generic(grid, 6, rng) for _ in range(3)])
    f = RegularGridInterpolator(grid, values, bounds_error=False, fill_value=None)
    mapped = cr.vmap(f)(batches)
    for k in range(3):
        np.testing.assert_allclose(mapped[k], f(batches[k]), rtol=1e-14)
    loss = lambda x: cr.sum(f(x) ** 2)
    jitted = cr.jit(cr.grad(loss))
    for x in batches:  # traced at the first
        np.testing.assert_allclose(jitted(x), cr.grad(loss)(x), rtol=1e-12)
        want = jax.grad(lambda x: jnp.sum(jinterp.RegularGridInterpolator(
            grid, values, fill_value=None)(x) ** 2))(x)
        np.testing.assert_allclose(jitted(x), want, rtol=1e-11, atol=1e-12)


def test_bad_input_is_named():
    grid, values, xi = problem("errors")
    with pytest.raises(ValueError, match="method must be 'linear' or 'nearest'.*'cubic'"):
        RegularGridInterpolator(grid, values, method="cubic")
    with pytest.raises(ValueError, match="dimension 0 must be strictly ascending"):
        RegularGridInterpolator((grid[0][::-1], grid[1]), values)
    with pytest.raises(ValueError, match=r"dimension 1 must be 1-d with 5 entries"):
        RegularGridInterpolator((grid[0], grid[1][:3]), values)
    with pytest.raises(ValueError, match=r"must have shape \(\.\.\., 2\), got \(40, 3\)"):
        RegularGridInterpolator(grid, values, bounds_error=False)(np.ones((40, 3)))
