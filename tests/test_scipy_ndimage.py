"""chainrule.scipy.ndimage.map_coordinates: SciPy's values in every mode (ties
included: points half-way between samples and on the edges), and derivatives in the
image, the coordinates and cval against jax.scipy.ndimage (float64), in both modes,
to second order, under vmap and jit.

JAX's ``constant`` and ``wrap`` are SciPy's ``grid-constant`` and ``grid-wrap``
(jax.scipy.ndimage's documentation says so); chainrule follows SciPy's names, so a
mode is compared with JAX's under the name JAX gives it.
"""

import jax
import jax.numpy as jnp
import jax.scipy.ndimage as jnd
import numpy as np
import pytest
import scipy.ndimage as snd

import chainrule as cr
from chainrule.scipy.ndimage import map_coordinates
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

MODES = ["constant", "grid-constant", "nearest", "mirror", "reflect", "grid-mirror",
         "wrap", "grid-wrap"]
JAX_NAME = {"grid-constant": "constant", "nearest": "nearest", "mirror": "mirror",
            "reflect": "reflect", "grid-wrap": "wrap"}
SHAPES = [(5,), (1,), (2,), (4, 3), (3, 2, 4)]


def points(shape, rng, count=40):
    """Coordinates per axis: random ones from two periods below to two above, and every
    half and whole step from -n - 1 to 2n (the ties and the edges)."""
    out = []
    for n in shape:
        steps = np.arange(-2 * n - 2, 4 * n + 1) / 2.0
        drawn = rng.uniform(-2 * n, 3 * n, count)
        out.append(np.concatenate([rng.permutation(np.resize(steps, count)), drawn]))
    return np.array(out)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_values_are_scipys(mode, order, shape):
    rng = seeded("map_coordinates values", mode, order, shape)
    image = rng.standard_normal(shape)
    coordinates = points(shape, rng)
    ours = map_coordinates(image, coordinates, order=order, mode=mode, cval=-1.5)
    assert type(ours) is np.ndarray
    want = snd.map_coordinates(image, coordinates, order=order, mode=mode, cval=-1.5)
    np.testing.assert_allclose(ours, want, rtol=1e-13, atol=1e-14)


def generic_points(shape, rng, count=6):
    """Coordinates away from samples, edges and ties (where the derivative jumps)."""
    out = rng.uniform(-1.8, 1.8, (len(shape), count)) * np.array(shape)[:, None]
    return out + 0.5 * (np.abs(out - np.round(out)) < 0.05)


@pytest.mark.parametrize("mode", sorted(JAX_NAME))
@pytest.mark.parametrize("shape", [(5,), (4, 3)], ids=str)
def test_derivatives_match_jax_to_second_order(mode, shape):
    rng = seeded("map_coordinates derivatives", mode, shape)
    image, coordinates = rng.standard_normal(shape), generic_points(shape, rng)
    weights = rng.standard_normal(coordinates.shape[1])

    def ours(image, coordinates):
        out = map_coordinates(image, list(coordinates), order=1, mode=mode, cval=0.7)
        return cr.sum(weights * out ** 2)

    def theirs(image, coordinates):  # (JAX's cval is static: not differentiated)
        out = jnd.map_coordinates(image, list(coordinates), order=1, mode=JAX_NAME[mode],
                                  cval=0.7)
        return jnp.sum(weights * out ** 2)

    args = (image, coordinates)
    for argnum in (0, 1):
        want = jax.jit(jax.grad(theirs, argnums=argnum))(*args)
        np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(*args), want,
                                   rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(cr.jacfwd(ours, argnums=argnum)(*args), want,
                                   rtol=1e-11, atol=1e-12)
        want = jax.jit(jax.hessian(theirs, argnums=argnum))(*args)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(*args), want,
                                   rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("mode", ["constant", "wrap", "grid-mirror"])
def test_the_modes_jax_lacks_match_central_differences_of_scipy(mode):
    """SciPy's own constant and wrap (JAX's are the grid ones): the gradient in the
    coordinates and in the image against central differences of SciPy's values."""
    rng = seeded("map_coordinates differences", mode)
    shape = (4, 5)
    image, coordinates = rng.standard_normal(shape), generic_points(shape, rng)
    weights = rng.standard_normal(coordinates.shape[1])

    def scipys(image, coordinates):
        return float(np.sum(weights * snd.map_coordinates(image, coordinates, order=1,
                                                          mode=mode, cval=0.3) ** 2))

    ours = cr.grad(lambda i, c: cr.sum(weights * map_coordinates(
        i, c, order=1, mode=mode, cval=0.3) ** 2), argnums=(0, 1))(image, coordinates)
    h = 1e-6
    for k, x in enumerate((image, coordinates)):
        for index in np.ndindex(*x.shape):
            step = np.zeros_like(x)
            step[index] = h
            moved = [(image, coordinates), (image, coordinates)]
            moved[0] = tuple(a + step if j == k else a for j, a in enumerate(moved[0]))
            moved[1] = tuple(a - step if j == k else a for j, a in enumerate(moved[1]))
            difference = (scipys(*moved[0]) - scipys(*moved[1])) / (2 * h)
            assert abs(ours[k][index] - difference) < 1e-6 * max(1.0, abs(difference))


@pytest.mark.parametrize("mode", ["constant", "grid-constant"])
def test_the_derivative_in_cval_matches_central_differences_of_scipy(mode):
    rng = seeded("map_coordinates cval", mode)
    image, coordinates = rng.standard_normal((4, 5)), generic_points((4, 5), rng, 12)
    weights = rng.standard_normal(12)
    scipys = lambda cval: float(np.sum(weights * snd.map_coordinates(
        image, coordinates, order=1, mode=mode, cval=cval) ** 2))
    ours = lambda cval: cr.sum(weights * map_coordinates(
        image, coordinates, order=1, mode=mode, cval=cval) ** 2)
    h = 1e-5
    for cval in (0.0, 0.8):
        difference = (scipys(cval + h) - scipys(cval - h)) / (2 * h)
        np.testing.assert_allclose(cr.grad(ours)(cval), difference, rtol=1e-8, atol=1e-9)
        second = (cr.grad(ours)(cval + h) - cr.grad(ours)(cval - h)) / (2 * h)
        np.testing.assert_allclose(cr.grad(cr.grad(ours))(cval), second, rtol=1e-7)
        # (some points lie outside: at cval 0.8 the loss changes with it)
        assert cval == 0.0 or abs(cr.grad(ours)(cval)) > 0.1


def test_under_vmap_and_jit():
    rng = seeded("map_coordinates transforms")
    images = rng.standard_normal((3, 4, 5))
    coordinates = generic_points((4, 5), rng)
    per_image = lambda image, c: map_coordinates(image, c, order=1, mode="reflect")
    mapped = cr.vmap(per_image, in_axes=(0, None))(images, coordinates)
    for k in range(3):
        np.testing.assert_allclose(mapped[k], per_image(images[k], coordinates), rtol=1e-14)
    loss = lambda c: cr.sum(per_image(images[0], c) ** 2)
    jitted = cr.jit(cr.grad(loss))
    for c in (coordinates, coordinates + 0.31, -coordinates):  # traced at the first
        np.testing.assert_allclose(jitted(c), cr.grad(loss)(c), rtol=1e-12)
        want = jax.grad(lambda c: jnp.sum(jnd.map_coordinates(
            images[0], list(c), order=1, mode="reflect") ** 2))(c)
        np.testing.assert_allclose(jitted(c), want, rtol=1e-11, atol=1e-12)


def test_order_zero_reads_the_nearest_sample_and_has_no_slope():
    image = np.array([1.0, 2.0, 4.0, 8.0])
    c = np.array([0.2, 1.7, 2.5])
    assert map_coordinates(image, [c], order=0).tolist() == [1.0, 4.0, 8.0]
    assert cr.grad(lambda c: cr.sum(map_coordinates(image, [c], order=0)))(c).tolist() == \
        [0.0, 0.0, 0.0]
    assert cr.grad(lambda i: cr.sum(map_coordinates(i, [c], order=0)))(image).tolist() == \
        [1.0, 0.0, 1.0, 1.0]


def test_bad_input_is_named():
    image = np.ones((3, 3))
    with pytest.raises(ValueError, match="map_coordinates: order must be 0 .* got 3"):
        map_coordinates(image, np.zeros((2, 1)), order=3)
    with pytest.raises(ValueError, match="map_coordinates: mode must be one of .* 'edge'"):
        map_coordinates(image, np.zeros((2, 1)), order=1, mode="edge")
    with pytest.raises(ValueError, match=r"one array of coordinates per axis .* got 1"):
        map_coordinates(image, [np.zeros(4)], order=1)
    with pytest.raises(TypeError, match="output="):
        map_coordinates(image, np.zeros((2, 1)), order=1, output=np.zeros(1))
