"""nansum, nanmean, nanmax, nanmin, ptp, convolve, correlate and interp, against
jax.numpy (float64 and complex128; its functions under jax.jit).

For each: the value, the gradient of a random real loss Re(sum(w * f)) (reverse mode),
the JVP along random tangents (forward mode), and second order two ways (reverse over
reverse, forward over reverse), with respect to every argument; at NaN entries, slices
of NaN alone, ties, every mode of convolve and correlate (operands swapped too, complex
ones), and interp's left, right, period, points at the knots and repeated knots. Then
the same operations under cr.vmap, batched in each argument, with no call added to the
per-example fallbacks (``chainrule.transforms.batching.fallbacks``), and under cr.jit;
NumPy's functions on Tensors; the errors. One difference from JAX, asserted: over a
slice of NaN alone, nanmean's tangent is 0 here and 0 / 0 in JAX (whose gradient there
is 0, as chainrule's).

tests/test_derivatives.py holds their cases of the derivative table (against PyTorch
and central differences), which tests/test_table_under_transforms*.py run through the
transforms on NumPy, torch and array-api-strict arrays.
"""

from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.numpy as anp
import chainrule.numpy as cnp
from chainrule.transforms import batching

jax.config.update("jax_enable_x64", True)

REL = 1e-10


def assert_close(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype.kind == expected.dtype.kind, f"{what}: {actual.dtype} != {expected.dtype}"
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(float(finite.max()) if finite.size else 0.0, 1.0)
    np.testing.assert_allclose(actual, expected, rtol=REL, atol=REL * scale, err_msg=what)


def like(rng, x):
    """Random numbers of x's shape, complex where x is complex (a tuple for a tuple)."""
    if isinstance(x, tuple):
        return tuple(like(rng, part) for part in x)
    x = np.asarray(x)
    out = rng.standard_normal(x.shape)
    return out + 1j * rng.standard_normal(x.shape) if x.dtype.kind == "c" else out


def parts(x):
    return x if isinstance(x, tuple) else (x,)


def derivatives(f, grad, jvp, real, total, inputs, w, tangents, vs):
    """f's value, the gradient of Re(sum(w * f)) (summed over f's outputs if it has
    several), the JVP along ``tangents``, and along ``vs`` the gradient's derivative two
    ways (reverse over reverse, forward over reverse), with one library's grad, jvp,
    real and sum."""
    argnums = tuple(range(len(inputs)))

    def loss(*xs):
        return sum(real(total(c * y)) for c, y in zip(parts(w), parts(f(*xs))))

    def pairing(*xs):
        return sum(real(total(g * v)) for g, v in zip(grad(loss, argnums)(*xs), vs))

    return (f(*inputs), grad(loss, argnums)(*inputs), jvp(f, inputs, tangents)[1],
            grad(pairing, argnums)(*inputs), jvp(grad(loss, argnums), inputs, vs)[1])


def compare(cr_f, jax_f, inputs, rng):
    """cr_f against jax_f (under jax.jit) at ``inputs``: value, VJP, JVP, and two
    second-order products, with respect to every input. The functions may return a
    tuple of outputs (several calls checked with one compilation of JAX's)."""
    inputs = tuple(np.asarray(x) for x in inputs)
    w = like(rng, jax_f(*inputs))
    tangents, vs = (tuple(like(rng, x) for x in inputs) for _ in range(2))
    ours = derivatives(cr_f, cr.grad, cr.jvp, cr.real, cr.sum, inputs, w, tangents, vs)
    theirs = jax.jit(lambda *a: derivatives(jax_f, jax.grad, jax.jvp, jnp.real, jnp.sum,
                                            *a))(inputs, w, tangents, vs)
    value, grads, jvp, reverse, forward = ours
    for k, (y, e) in enumerate(zip(parts(value), parts(theirs[0]))):
        assert_close(y, e, f"value {k}")
    for i, (g, e) in enumerate(zip(grads, theirs[1])):
        assert_close(g, e, f"gradient {i}")
        assert np.all(g[np.isnan(inputs[i])] == 0), f"gradient {i} at NaN entries"
    for k, (t, e, y) in enumerate(zip(parts(jvp), parts(theirs[2]), parts(value))):
        # JAX's nanmean of a slice of NaN alone has the tangent 0 / 0 (its gradient is
        # 0); chainrule's is 0 in both modes: the value there is NaN whatever the inputs
        empty = np.isnan(np.asarray(y)) & np.isnan(np.asarray(e))
        np.testing.assert_array_equal(np.asarray(t)[empty], 0.0)
        assert_close(np.where(empty, 0.0, t), np.where(empty, 0.0, e), f"JVP {k}")
    for what, mine, expected in (("reverse over reverse", reverse, theirs[3]),
                                 ("forward over reverse", forward, theirs[4])):
        for i, (h, e) in enumerate(zip(mine, expected)):
            assert_close(h, e, f"{what}, input {i}")


# ---------------------------------------------------------------------------------------
# The reductions: NaN entries, slices of NaN alone, ties
# ---------------------------------------------------------------------------------------

NAN_REDUCTIONS = ["nansum", "nanmean", "nanmax", "nanmin"]
AXES = [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True)]


def with_nans(rng, shape):
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.3] = np.nan
    x[..., 0, :] = np.nan  # (a slice of NaN alone along the last axis)
    return x


@pytest.mark.parametrize("axis, keepdims", AXES)
@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_nan_reductions_match_jax(name, axis, keepdims):
    rng = np.random.default_rng(1)
    x = with_nans(rng, (3, 4, 5))
    compare(lambda a: getattr(cr, name)(a, axis=axis, keepdims=keepdims),
            lambda a: getattr(jnp, name)(a, axis=axis, keepdims=keepdims), [x], rng)


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_a_slice_of_nan_alone(name):
    """NaN (0 for nansum), with a gradient of 0, as JAX's: no 0 * inf."""
    x = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 2.0]])
    f = lambda a: getattr(cr, name)(a, axis=1)  # noqa: E731
    expected = np.array([0.0 if name == "nansum" else np.nan,
                         getattr(np, name)(x[1])])
    np.testing.assert_array_equal(np.asarray(f(x)), expected)
    grad = cr.grad(lambda a: cr.sum(f(a)))(x)
    np.testing.assert_array_equal(grad[0], 0.0)
    np.testing.assert_array_equal(grad, np.asarray(jax.grad(
        lambda a: jnp.sum(getattr(jnp, name)(a, axis=1)))(x)))


# (not nanmax and nanmin: JAX and NumPy order complex numbers differently)
@pytest.mark.parametrize("name", ["nansum", "nanmean"])
def test_complex_nan_reductions_match_jax(name):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    x[0, 1] = np.nan
    x[2, 3] = complex(1.0, np.nan)  # NaN in one part is NaN
    compare(lambda a: getattr(cr, name)(a, axis=1), lambda a: getattr(jnp, name)(a, axis=1),
            [x], rng)


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_without_nans_they_are_the_plain_reductions(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3))
    plain = {"nansum": cr.sum, "nanmean": cr.mean, "nanmax": cr.max, "nanmin": cr.min}[name]
    np.testing.assert_array_equal(getattr(cr, name)(x, axis=0), plain(x, axis=0))
    np.testing.assert_array_equal(cr.grad(lambda a: cr.sum(getattr(cr, name)(a, 0) ** 2))(x),
                                  cr.grad(lambda a: cr.sum(plain(a, 0) ** 2))(x))
    integers = np.arange(12).reshape(3, 4)
    assert np.asarray(getattr(cr, name)(integers)).dtype == getattr(np, name)(integers).dtype


def test_nansum_and_nanmean_take_a_dtype():
    x = np.array([1.0, np.nan, 2.0, 4.0])
    assert cr.nansum(x, dtype=np.float32).dtype == np.float32
    assert cr.nanmean(x, dtype=np.float32).dtype == np.float32
    assert cr.nanmean(x.astype(np.float32)).dtype == np.float32
    assert float(cr.nanmean(x)) == pytest.approx(7.0 / 3.0, rel=1e-15)


@pytest.mark.parametrize("axis, keepdims", AXES)
def test_ptp_matches_jax(axis, keepdims):
    rng = np.random.default_rng(4)
    compare(lambda a: cr.ptp(a, axis=axis, keepdims=keepdims),
            lambda a: jnp.ptp(a, axis=axis, keepdims=keepdims),
            [rng.standard_normal((3, 4, 5))], rng)


def test_ties_share_the_gradient_as_in_jax():
    """Tied extremes share evenly in ptp, nanmax and nanmin, as in chainrule's max and
    min and in JAX's (where every entry ties, ptp's gradient is 0)."""
    x = np.array([[3.0, 1.0, 3.0, 1.0], [2.0, 2.0, 2.0, 2.0], [np.nan, 5.0, 5.0, -1.0]])
    rng = np.random.default_rng(5)
    compare(lambda a: cr.ptp(a[:2], axis=1), lambda a: jnp.ptp(a[:2], axis=1), [x], rng)
    for name in ("nanmax", "nanmin"):
        compare(lambda a, n=name: getattr(cr, n)(a, axis=1),
                lambda a, n=name: getattr(jnp, n)(a, axis=1), [x], rng)
    grad = cr.grad(lambda a: cr.sum(cr.ptp(a[:2], axis=1)))(x)
    np.testing.assert_array_equal(grad[:2], [[0.5, -0.5, 0.5, -0.5], [0.0] * 4])
    grad = cr.grad(lambda a: cr.nanmax(a[2]))(x)
    np.testing.assert_array_equal(grad[2], [0.0, 0.5, 0.5, 0.0])


# ---------------------------------------------------------------------------------------
# convolve and correlate: every mode, either operand the longer, complex operands
# ---------------------------------------------------------------------------------------

# odd and even kernels, either operand the longer (NumPy swaps them); equal lengths in
# test_convolve_of_one_operand_with_itself, one entry in test_the_default_modes_are_numpys
LENGTHS = [(5, 3), (3, 5), (4, 6), (7, 2)]
MODES = ("full", "same", "valid")


@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("n, m", LENGTHS)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_and_correlate_match_jax_and_numpy(name, n, m, kind):
    """Every mode, each the value and derivatives of JAX's (one call checks all three)."""
    rng = np.random.default_rng(6)
    a, v = rng.standard_normal(n), rng.standard_normal(m)
    if kind == "complex":
        a, v = a + 1j * rng.standard_normal(n), v + 1j * rng.standard_normal(m)
    for mode in MODES:
        assert_close(getattr(cr, name)(a, v, mode), getattr(np, name)(a, v, mode),
                     f"NumPy's, mode {mode}")
    compare(lambda x, y: tuple(getattr(cr, name)(x, y, mode) for mode in MODES),
            lambda x, y: tuple(getattr(jnp, name)(x, y, mode) for mode in MODES), [a, v], rng)


def test_the_default_modes_are_numpys():
    a, v = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])
    np.testing.assert_array_equal(cr.convolve(a, v), np.convolve(a, v))   # full
    np.testing.assert_array_equal(cr.correlate(a, v), np.correlate(a, v))  # valid
    assert cr.convolve(np.arange(3), np.arange(2)).dtype == np.convolve(np.arange(3),
                                                                        np.arange(2)).dtype
    one = np.array([2.0])
    for mode in MODES:  # an operand of one entry, either side
        for x, y in ((one, a), (a, one)):
            assert_close(cr.correlate(x, y, mode), np.correlate(x, y, mode), mode)
            assert_close(cr.convolve(x, y, mode), np.convolve(x, y, mode), mode)


def test_convolve_of_one_operand_with_itself():
    """The same Tensor on both sides: its gradient is the sum of the two."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(4)
    compare(lambda x: cr.convolve(x, x, "same"), lambda x: jnp.convolve(x, x, "same"), [a], rng)
    compare(lambda x: cr.correlate(x, x, "full"), lambda x: jnp.correlate(x, x, "full"), [a],
            rng)


# ---------------------------------------------------------------------------------------
# interp: knots, the ends, periods
# ---------------------------------------------------------------------------------------

KNOTS = np.array([-1.0, -0.3, 0.2, 0.2, 1.1, 2.0])  # (one repeated)


def interp_points(rng):
    """Points inside and beyond the knots, and at every knot (where the slope is JAX's
    choice)."""
    return np.concatenate([rng.uniform(-2.0, 3.0, 9), KNOTS])


@pytest.mark.parametrize("left, right", [(None, None), (-3.0, 4.0), (None, 0.5),
                                         ("extrapolate", "extrapolate"),
                                         ("extrapolate", None)])
def test_interp_matches_jax(left, right):
    rng = np.random.default_rng(8)
    x, fp = interp_points(rng), rng.standard_normal(len(KNOTS))
    compare(lambda a, b, c: cr.interp(a, b, c, left, right),
            lambda a, b, c: jnp.interp(a, b, c, left, right), [x, KNOTS, fp], rng)
    if not isinstance(left, str) and not isinstance(right, str):
        assert_close(cr.interp(x, KNOTS, fp, left, right),
                     np.interp(x, KNOTS, fp, left, right), "NumPy's")


@pytest.mark.parametrize("period", [2.5, -2.5, 0.7, 10.0])
def test_interp_with_a_period_matches_jax(period):
    rng = np.random.default_rng(9)
    x, fp = interp_points(rng), rng.standard_normal(len(KNOTS))
    knots = np.array([-1.0, -0.3, 0.2, 0.9, 1.1, 2.0])  # (distinct modulo each period)
    compare(lambda a, b, c: cr.interp(a, b, c, period=period),
            lambda a, b, c: jnp.interp(a, b, c, period=period), [x, knots, fp], rng)
    assert_close(cr.interp(x, knots, fp, period=period),
                 np.interp(x, knots, fp, period=period), "NumPy's")


def test_interp_of_complex_values_and_of_nan():
    rng = np.random.default_rng(10)
    x = interp_points(rng)
    fp = rng.standard_normal(len(KNOTS)) + 1j * rng.standard_normal(len(KNOTS))
    compare(lambda a, c: cr.interp(a, KNOTS, c), lambda a, c: jnp.interp(a, KNOTS, c),
            [x, fp], rng)
    out = cr.interp(np.array([np.nan, 0.5]), KNOTS, fp.real)
    assert np.isnan(out[0]) and out[1] == np.interp(0.5, KNOTS, fp.real)


def test_interp_slope_at_a_knot_is_the_right_segments():
    """JAX's choice: the segment that starts at the knot; at the last knot, the last
    segment; beyond the ends, 0."""
    knots, values = np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 30.0])
    slopes = cr.grad(lambda x: cr.sum(cr.interp(x, knots, values)))(
        np.array([-1.0, 0.0, 1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(slopes, [0.0, 10.0, 20.0, 20.0, 0.0])
    np.testing.assert_array_equal(slopes, jax.grad(lambda x: jnp.sum(jnp.interp(
        x, knots, values)))(np.array([-1.0, 0.0, 1.0, 2.0, 3.0])))


def test_interp_takes_lists_numbers_and_one_knot():
    assert cr.interp(0.5, [0.0, 1.0], [1.0, 3.0]) == 2.0
    np.testing.assert_array_equal(cr.interp([-1.0, 0.0, 2.0], [0.0], [5.0]), [5.0] * 3)
    y = cr.interp(cr.tensor(0.25, requires_grad=True), [0.0, 1.0],
                  [cr.tensor(1.0, requires_grad=True), 3.0])
    assert float(y.data) == 1.5


# ---------------------------------------------------------------------------------------
# Under the transforms: one call for the batch (no fallback), and cr.jit
# ---------------------------------------------------------------------------------------

def _batch(rng, shape, n=3, complex_=False, nans=False):
    x = rng.standard_normal((n,) + shape)
    if complex_:
        x = x + 1j * rng.standard_normal((n,) + shape)
    if nans:
        x[rng.random(x.shape) < 0.3] = np.nan
    return x


# (id, chainrule function, JAX function, one example's inputs: shape, complex, NaN)
MAPPED = [
    ("nansum", lambda x: cr.nansum(x, 1), lambda x: jnp.nansum(x, 1), [((3, 4), 0, 1)]),
    ("nanmean", lambda x: cr.nanmean(x, 0, keepdims=True),
     lambda x: jnp.nanmean(x, 0, keepdims=True), [((3, 4), 0, 1)]),
    ("nanmax", cr.nanmax, jnp.nanmax, [((3, 4), 0, 1)]),
    ("nanmin", lambda x: cr.nanmin(x, -1), lambda x: jnp.nanmin(x, -1), [((3, 4), 0, 1)]),
    ("ptp", lambda x: cr.ptp(x, 1), lambda x: jnp.ptp(x, 1), [((3, 4), 0, 0)]),
    ("convolve", lambda a, v: cr.convolve(a, v, "same"),
     lambda a, v: jnp.convolve(a, v, "same"), [((5,), 1, 0), ((3,), 1, 0)]),
    ("correlate", lambda a, v: cr.correlate(a, v, "full"),
     lambda a, v: jnp.correlate(a, v, "full"), [((3,), 1, 0), ((6,), 0, 0)]),
    ("interp", lambda x, xp, fp: cr.interp(x, xp, fp),
     lambda x, xp, fp: jnp.interp(x, xp, fp), [((4,), 0, 0), ((5,), 0, 0), ((5,), 1, 0)]),
    ("interp(period)", lambda x, fp: cr.interp(x, KNOTS[:5] + 0.1, fp, period=2.5),
     lambda x, fp: jnp.interp(x, KNOTS[:5] + 0.1, fp, period=2.5),
     [((4,), 0, 0), ((5,), 0, 0)]),
]


def mapped_inputs(rng, specs, name):
    inputs = [_batch(rng, shape, complex_=bool(c), nans=bool(n)) for shape, c, n in specs]
    if name == "interp":  # increasing knots
        inputs[1] = np.sort(inputs[1], axis=-1)
    return inputs


def is_mapped(in_axes, i):
    return in_axes == 0 or in_axes[i] == 0


def example(args, in_axes, k):
    """Example k of the arguments of a call vmapped over ``in_axes``."""
    return [x[k] if is_mapped(in_axes, i) else x for i, x in enumerate(args)]


def one_at_a_time(f, args, in_axes):
    """f on each example in turn, eagerly, stacked: what a batched call must give."""
    size = next(len(x) for i, x in enumerate(args) if is_mapped(in_axes, i))
    rows = [f(*example(args, in_axes, k)) for k in range(size)]
    return np.stack([np.asarray(getattr(r, "data", r)) for r in rows])


@pytest.mark.parametrize("name, cr_f, jax_f, specs", MAPPED, ids=[m[0] for m in MAPPED])
def test_vmap_runs_the_batch_at_once(name, cr_f, jax_f, specs):
    """Batched in each argument alone and in all, with the gradients of grad(vmap) and
    vmap(grad): what the examples give one at a time (the numbers compare() holds to
    JAX's; JAX's vmap is compared once, each compilation of it costing seconds), and
    nothing added to the per-example fallbacks."""
    rng = np.random.default_rng(11)
    inputs = mapped_inputs(rng, specs, name)
    argnums = tuple(range(len(inputs)))
    before = Counter(batching.fallbacks)
    assert_close(cr.vmap(cr_f)(*inputs), jax.jit(jax.vmap(jax_f))(*inputs), "JAX's vmap")
    for in_axes in [tuple(0 if j == i else None for j in argnums) for i in argnums] + [0]:
        args = [x if is_mapped(in_axes, i) else x[0] for i, x in enumerate(inputs)]
        expected = one_at_a_time(cr_f, args, in_axes)
        assert_close(cr.vmap(cr_f, in_axes)(*args), expected, f"vmap {in_axes}")
        w = like(rng, expected)
        grads = cr.grad(lambda *a: cr.real(cr.sum(w * cr.vmap(cr_f, in_axes)(*a))),
                        argnums)(*args)
        rows = [cr.grad(lambda *a: cr.real(cr.sum(w[k] * cr_f(*a))), argnums)(
            *example(args, in_axes, k)) for k in range(len(w))]
        for i, g in enumerate(grads):  # (an argument shared by the examples: their sum)
            e = np.stack([r[i] for r in rows]) if is_mapped(in_axes, i) else \
                sum(r[i] for r in rows)
            assert_close(g, e, f"grad of vmap {in_axes}, argument {i}")
    gradient = cr.grad(lambda *a: cr.real(cr.sum(cr_f(*a))), argnums)
    for i, g in enumerate(cr.vmap(gradient)(*inputs)):
        e = one_at_a_time(lambda *a: gradient(*a)[i], inputs, 0)
        assert_close(g, e, f"vmap of grad, argument {i}")
    assert batching.fallbacks == before, batching.fallbacks - before


@pytest.mark.parametrize("name, cr_f, jax_f, specs", MAPPED, ids=[m[0] for m in MAPPED])
def test_jit_replays_on_new_numbers(name, cr_f, jax_f, specs):
    """cr.jit of the function and of its vmap: traced, then replayed on new numbers."""
    rng = np.random.default_rng(12)
    program, single = cr.jit(cr.vmap(cr_f)), cr.jit(cr_f)
    for _ in range(2):
        inputs = mapped_inputs(rng, specs, name)
        assert_close(program(*inputs), one_at_a_time(cr_f, inputs, 0), "jit of vmap")
        first = example(inputs, 0, 0)
        assert_close(single(*first), cr_f(*first), "jit")


# ---------------------------------------------------------------------------------------
# NumPy's functions on Tensors, the namespaces, the errors
# ---------------------------------------------------------------------------------------

NAMES = ["nansum", "nanmean", "nanmax", "nanmin", "ptp", "convolve", "correlate", "interp"]


@pytest.mark.parametrize("name", NAMES)
def test_numpys_function_on_a_tensor_is_chainrules(name):
    assert getattr(cnp, name) is getattr(cr, name) is getattr(anp, name)
    x = cr.tensor([0.5, np.nan if name.startswith("nan") else 3.0, 2.0, 1.0],
                  requires_grad=True)
    if name in ("convolve", "correlate"):
        y = getattr(np, name)(x, np.array([1.0, -1.0]), "same")
    elif name == "interp":
        y = np.interp(x, np.array([0.0, 1.0, 4.0]), np.array([0.0, 2.0, 3.0]))
    else:
        y = getattr(np, name)(x)
    assert isinstance(y, cr.Tensor)
    cr.sum(y).backward()
    assert x.grad is not None and np.all(np.isfinite(x.grad))


def test_autograd_style_code_differentiates_them():
    def loss(w):
        return anp.nanmean(anp.convolve(w, anp.array([1.0, 2.0]), "valid") ** 2) + \
            anp.ptp(anp.interp(anp.array([0.3, 1.7]), anp.array([0.0, 1.0, 2.0]), w))
    w = np.array([1.0, -2.0, 0.5])
    expected = jax.grad(lambda v: jnp.nanmean(jnp.convolve(v, jnp.array([1.0, 2.0]),
                                                           "valid") ** 2) +
                        jnp.ptp(jnp.interp(jnp.array([0.3, 1.7]), jnp.array([0.0, 1.0, 2.0]),
                                           v)))(w)
    assert_close(cr.grad(loss)(w), expected, "gradient")


@pytest.mark.parametrize("call, message", [
    (lambda: cr.convolve(np.ones((2, 2)), np.ones(3)),
     r"convolve: arrays of shapes \(2, 2\) and \(3,\); expected two 1-d arrays"),
    (lambda: cr.correlate(np.ones(3), np.ones(())),
     r"correlate: arrays of shapes \(3,\) and \(\); expected two 1-d arrays"),
    (lambda: cr.convolve(np.ones(0), np.ones(3)),
     r"convolve: arrays of shapes \(0,\) and \(3,\); expected two non-empty arrays"),
    (lambda: cr.correlate(np.ones(3), np.ones(2), mode="circular"),
     r"correlate: mode 'circular'; expected 'full', 'same' or 'valid'"),
    (lambda: cr.interp(0.5, np.ones(3), np.ones(2)),
     r"interp: xp of shape \(3,\) and fp of shape \(2,\); expected two non-empty 1-d"),
    (lambda: cr.interp(0.5, np.ones((2, 2)), np.ones((2, 2))),
     r"interp: xp of shape \(2, 2\) and fp of shape \(2, 2\); expected"),
    (lambda: cr.interp(0.5, np.ones(0), np.ones(0)), r"interp: xp of shape \(0,\)"),
    (lambda: cr.interp(np.array([0.5j]), np.arange(2.0), np.ones(2)),
     r"interp: complex x or xp"),
    (lambda: cr.interp(0.5, np.arange(2.0), np.ones(2), left="constant"),
     r"interp: left='constant'; expected a number, None or 'extrapolate'"),
    (lambda: cr.interp(0.5, np.arange(2.0), np.ones(2), period=0),
     r"interp: period=0; expected a non-zero period"),
])
def test_bad_input_gets_a_one_line_error(call, message):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert "\n" not in str(error.value)
