"""``chainrule.lax``'s operations (jax.lax's elementwise arithmetic, bit operations,
shapes, reductions, scans, sorts, products and convolutions) checked against jax.lax
in float64: the value, the gradient, a jvp and a Hessian-vector product, where JAX
defines them; JAX's own choices of derivative (abs at 0, max at a tie, clamp at a
bound, round) included. A sample runs under cr.vmap and cr.jit against jax.vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
from chainrule import lax
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(17)
TOL = dict(rtol=1e-12, atol=1e-13)


def _agree(ours, theirs, x, tol=TOL):
    """f's value, gradient, a jvp and a Hessian-vector product: chainrule's are JAX's.
    JAX's are computed under jax.jit: one compile of the whole function is quicker than
    JAX's eager dispatch, which compiles each operation on its own."""
    x = np.asarray(x, dtype=float)
    t = RNG.standard_normal(np.shape(x))
    np.testing.assert_allclose(ours(x), jax.jit(theirs)(x), **tol)
    np.testing.assert_allclose(cr.grad(ours)(x), jax.jit(jax.grad(theirs))(x), **tol)
    np.testing.assert_allclose(cr.jvp(ours, (x,), (t,))[1],
                               jax.jit(lambda x, t: jax.jvp(theirs, (x,), (t,))[1])(x, t),
                               **tol)
    np.testing.assert_allclose(
        cr.jvp(cr.grad(ours), (x,), (t,))[1],
        jax.jit(lambda x, t: jax.jvp(jax.grad(theirs), (x,), (t,))[1])(x, t), **tol)


def _numbers(kind, numbers):
    return getattr(lax, kind)(**numbers), getattr(jax.lax, kind)(**numbers)


def _same(ours, theirs):
    """The same array: values, shape and dtype."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours, theirs)
    np.testing.assert_array_equal(ours, theirs)


# ------------------------------------------------------------------- elementwise math
UNARY = {  # name: where its inputs are drawn
    "neg": (-3, 3), "exp": (-3, 3), "exp2": (-3, 3), "expm1": (-3, 3), "log": (0.1, 3),
    "log1p": (-0.9, 3), "logistic": (-3, 3), "sin": (-3, 3), "cos": (-3, 3),
    "tan": (-1.2, 1.2), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3),
    "sinh": (-3, 3), "cosh": (-3, 3), "tanh": (-3, 3), "asinh": (-3, 3),
    "acosh": (1.1, 4), "atanh": (-0.9, 0.9), "erf": (-2, 2), "sqrt": (0.1, 3),
    "rsqrt": (0.1, 3), "cbrt": (-3, 3), "square": (-3, 3), "reciprocal": (0.2, 3),
    "abs": (-3, 3), "sign": (-3, 3), "floor": (-3, 3), "ceil": (-3, 3), "round": (-3, 3),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_each_unary_function_is_jaxs_to_second_order(name):
    x = RNG.uniform(*UNARY[name], size=(3, 4))
    _agree(lambda x: cr.sum(cr.sin(getattr(lax, name)(x)) * x),
           lambda x: jnp.sum(jnp.sin(getattr(jax.lax, name)(x)) * x), x)


BINARY = {"add": (-3, 3, -3, 3), "sub": (-3, 3, -3, 3), "mul": (-3, 3, -3, 3),
          "div": (-3, 3, 0.5, 3), "rem": (-5, 5, 0.7, 2), "pow": (0.2, 3, -2, 2),
          "atan2": (-3, 3, -3, 3), "max": (-3, 3, -3, 3), "min": (-3, 3, -3, 3)}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_each_binary_function_is_jaxs_in_both_arguments(name):
    lo_a, hi_a, lo_b, hi_b = BINARY[name]
    x = np.stack([RNG.uniform(lo_a, hi_a, (3, 4)), RNG.uniform(lo_b, hi_b, (3, 4))])
    _agree(lambda x: cr.sum(cr.sin(getattr(lax, name)(x[0], x[1])) * x[0]),
           lambda x: jnp.sum(jnp.sin(getattr(jax.lax, name)(x[0], x[1])) * x[0]), x)


@pytest.mark.parametrize("y", [-3, -1, 0, 1, 2, 5])
def test_integer_pow_is_jaxs_for_every_exponent_including_zero(y):
    x = RNG.uniform(0.5, 2.0, 5) * RNG.choice([-1, 1], 5)
    _agree(lambda x: cr.sum(lax.integer_pow(x, y) * x),
           lambda x: jnp.sum(jax.lax.integer_pow(x, y) * x), x)


def test_jaxs_own_derivatives_at_the_kinks_abs_max_min_clamp_round_sign():
    for ours, theirs, at in [
            (lax.abs, jax.lax.abs, 0.0), (lax.sign, jax.lax.sign, 0.0),
            (lax.round, jax.lax.round, 0.5), (lax.floor, jax.lax.floor, 1.0),
            (lambda x: lax.max(x, 1.0), lambda x: jax.lax.max(x, 1.0), 1.0),
            (lambda x: lax.min(x, 1.0), lambda x: jax.lax.min(x, 1.0), 1.0),
            (lambda x: lax.clamp(0.0, x, 1.0), lambda x: jax.lax.clamp(0.0, x, 1.0), 1.0),
            (lambda x: lax.clamp(0.0, x, 1.0), lambda x: jax.lax.clamp(0.0, x, 1.0), 0.0),
            (lambda m: lax.clamp(m, 0.5, 1.0), lambda m: jax.lax.clamp(m, 0.5, 1.0), 0.5),
            (lambda m: lax.clamp(0.0, 0.5, m), lambda m: jax.lax.clamp(0.0, 0.5, m), 0.5)]:
        assert cr.grad(ours)(at) == jax.grad(theirs)(at)
    assert cr.grad(lax.abs)(0.0) == 1.0 and cr.grad(lambda x: lax.max(x, 1.0))(1.0) == 0.5


def test_clamp_is_jaxs_in_all_three_arguments_with_broadcast_bounds():
    x = np.stack([RNG.uniform(-2, 0, 6), RNG.uniform(-2, 2, 6), RNG.uniform(0, 2, 6)])
    _agree(lambda v: cr.sum(lax.clamp(v[0], v[1], v[2]) ** 3),
           lambda v: jnp.sum(jax.lax.clamp(v[0], v[1], v[2]) ** 3), x)
    x = RNG.uniform(-2, 2, 7)
    _same(lax.clamp(-0.5, x, 0.5), jax.lax.clamp(-0.5, x, 0.5))


def test_round_breaks_ties_away_from_zero_or_to_even_as_jax():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994, -0.2, 3.7, -0.0])
    for method in (0, 1):
        _same(lax.round(x, lax.RoundingMethod(method)),
              jax.lax.round(x, jax.lax.RoundingMethod(method)))
    assert lax.RoundingMethod.TO_NEAREST_EVEN == jax.lax.RoundingMethod.TO_NEAREST_EVEN


def test_abs_of_minus_zero_and_is_finite_nextafter_are_jaxs():
    x = np.array([-0.0, 0.0, -1.0, np.inf, -np.inf, np.nan])
    _same(lax.abs(x), jax.lax.abs(x))
    _same(lax.is_finite(x), jax.lax.is_finite(x))
    y = RNG.standard_normal(5)
    _same(lax.nextafter(y, np.full(5, 10.0)), jax.lax.nextafter(y, jnp.full(5, 10.0)))


def test_complex_conj_real_imag_are_jaxs():
    x = RNG.standard_normal((2, 5))
    _agree(lambda v: cr.sum(lax.real(lax.complex(v[0], v[1]) ** 2 * lax.conj(v[0]))
                            + lax.imag(lax.complex(v[0], v[1]) ** 3)),
           lambda v: jnp.sum(jax.lax.real(jax.lax.complex(v[0], v[1]) ** 2
                                          * jax.lax.conj(v[0]))
                             + jax.lax.imag(jax.lax.complex(v[0], v[1]) ** 3)), x)
    z = x[0] + 1j * x[1]
    _agree(lambda v: cr.sum(lax.abs(lax.exp(z * v)) + lax.real(lax.sign(z) * v)),
           lambda v: jnp.sum(jax.lax.abs(jax.lax.exp(z * v)) + jax.lax.real(jax.lax.sign(z) * v)),
           x[0])
    assert lax.conj(x[0]).dtype == jax.lax.conj(x[0]).dtype == np.complex128


# -------------------------------------------------------- comparisons and bit operations
INTEGER_TYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32]


@pytest.mark.parametrize("dtype", INTEGER_TYPES)
def test_shifts_counts_and_bitwise_operations_are_jaxs_bit_for_bit(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, 300, dtype=dtype, endpoint=True)
    x[:4] = [0, 1, info.max, info.min]
    shift = RNG.integers(-2, info.bits + 3, 300).astype(dtype)  # out of range too
    y = RNG.integers(info.min, info.max, 300, dtype=dtype, endpoint=True)
    for name in ["shift_left", "shift_right_arithmetic", "shift_right_logical"]:
        _same(getattr(lax, name)(x, shift), getattr(jax.lax, name)(x, shift))
    for name in ["population_count", "clz", "bitwise_not"]:
        _same(getattr(lax, name)(x), getattr(jax.lax, name)(x))
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt",
                 "ge"]:
        _same(getattr(lax, name)(x, y), getattr(jax.lax, name)(x, y))
    divisor = np.where(y == 0, 1, y).astype(dtype)
    if info.min < 0:  # (JAX's int overflow of min // -1 aside)
        divisor = np.where(divisor == -1, 3, divisor).astype(dtype)
    _same(lax.div(x, divisor), jax.lax.div(x, divisor))   # rounded towards zero
    _same(lax.rem(x, divisor), jax.lax.rem(x, divisor))


def test_bool_bit_operations_are_logical_ones():
    a, b = RNG.random(8) < 0.5, RNG.random(8) < 0.5
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]:
        args = (a,) if name == "bitwise_not" else (a, b)
        _same(getattr(lax, name)(*args), getattr(jax.lax, name)(*args))


# ------------------------------------------------------------------------- structure
def test_broadcasts_and_reshapes_are_jaxs():
    x = RNG.standard_normal((3, 1))
    for ours, theirs in [
            (lambda v: lax.broadcast_in_dim(v, (2, 3, 4), (1, 2)),
             lambda v: jax.lax.broadcast_in_dim(v, (2, 3, 4), (1, 2))),
            (lambda v: lax.broadcast(v, (2,)), lambda v: jax.lax.broadcast(v, (2,))),
            (lambda v: lax.broadcast_to_rank(v, 4), lambda v: jax.lax.broadcast_to_rank(v, 4)),
            (lambda v: lax.reshape(v, (1, 3), (1, 0)),
             lambda v: jax.lax.reshape(v, (1, 3), (1, 0))),
            (lambda v: lax.expand_dims(v, (0, 3)), lambda v: jax.lax.expand_dims(v, (0, 3))),
            (lambda v: lax.squeeze(v, (1,)), lambda v: jax.lax.squeeze(v, (1,))),
            (lambda v: lax.collapse(lax.broadcast(v, (2,)), 1),
             lambda v: jax.lax.collapse(jax.lax.broadcast(v, (2,)), 1)),
            (lambda v: lax.transpose(v, (1, 0)), lambda v: jax.lax.transpose(v, (1, 0))),
            (lambda v: lax.rev(v, (0,)), lambda v: jax.lax.rev(v, (0,))),
            (lambda v: lax.tile(v, (2, 3)), lambda v: jax.lax.tile(v, (2, 3)))]:
        assert np.shape(ours(x)) == np.shape(theirs(x))
        _agree(lambda v: cr.sum(cr.sin(ours(v)) * cr.arange(np.size(ours(x))).reshape(
                   np.shape(ours(x)))),
               lambda v: jnp.sum(jnp.sin(theirs(v)) * jnp.arange(np.size(theirs(x))).reshape(
                   np.shape(theirs(x)))), x)
    assert lax.broadcast_shapes((3, 1), (1, 4)) == jax.lax.broadcast_shapes((3, 1), (1, 4))


@pytest.mark.parametrize("config", [
    [(1, 2, 0), (0, 0, 0)], [(0, 0, 2), (1, 1, 1)], [(-1, 2, 1), (2, -3, 0)],
    [(-2, -1, 3), (0, 1, 2)], [(3, -4, 0), (-1, -1, 1)]])
def test_pad_with_low_high_interior_and_negative_padding_is_jaxs(config):
    x = RNG.standard_normal((3, 4))
    _same(lax.pad(x, -7.0, config), jax.lax.pad(x, -7.0, config))
    # the padding value carries a derivative too: x and it, stacked as one argument
    v = np.concatenate([x.ravel(), [0.3]])
    _agree(lambda v: cr.sum(cr.sin(lax.pad(v[:-1].reshape(3, 4), v[-1], config)) ** 2),
           lambda v: jnp.sum(jnp.sin(jax.lax.pad(v[:-1].reshape(3, 4), v[-1], config)) ** 2), v)


def test_slices_and_indexing_are_jaxs():
    x = RNG.standard_normal((5, 6))
    idx = (np.array([0, 4, -1]), np.array([2, -6, 5]))
    for ours, theirs in [
            (lambda v: lax.slice(v, (1, 0), (5, 6), (2, 3)),
             lambda v: jax.lax.slice(v, (1, 0), (5, 6), (2, 3))),
            (lambda v: lax.slice_in_dim(v, -4, None, 2, axis=1),
             lambda v: jax.lax.slice_in_dim(v, -4, None, 2, axis=1)),
            (lambda v: lax.index_in_dim(v, -2, 1, keepdims=False),
             lambda v: jax.lax.index_in_dim(v, -2, 1, keepdims=False)),
            (lambda v: lax.index_take(v, idx, (0, 1)),
             lambda v: jax.lax.index_take(v, idx, (0, 1))),
            (lambda v: lax.index_take(v, idx[:1], (1,)),
             lambda v: jax.lax.index_take(v, idx[:1], (1,))),
            (lambda v: lax.dynamic_update_index_in_dim(v, v[0] ** 2, 3, 0),
             lambda v: jax.lax.dynamic_update_index_in_dim(v, v[0] ** 2, 3, 0)),
            (lambda v: lax.concatenate([v, v[:2] * 3], 0),
             lambda v: jax.lax.concatenate([v, v[:2] * 3], 0)),
            (lambda v: lax.stack(lax.split(v, (2, 1, 2, 1), axis=1)[::2], axis=2),
             lambda v: jax.lax.stack(jax.lax.split(v, (2, 1, 2, 1), axis=1)[::2], axis=2)),
            (lambda v: lax.unstack(v, axis=1)[4], lambda v: jax.lax.unstack(v, axis=1)[4])]:
        _agree(lambda v: cr.sum(cr.cos(ours(v)) * ours(v)),
               lambda v: jnp.sum(jnp.cos(theirs(v)) * theirs(v)), x)


def test_select_and_select_n_pick_each_entrys_gradient_as_jax():
    x = RNG.standard_normal((3, 6))
    which = RNG.integers(0, 3, 6)
    pred = RNG.random(6) < 0.5
    _agree(lambda v: cr.sum(lax.select_n(which, v[0], v[1] ** 2, cr.sin(v[2])) ** 3),
           lambda v: jnp.sum(jax.lax.select_n(which, v[0], v[1] ** 2, jnp.sin(v[2])) ** 3), x)
    _agree(lambda v: cr.sum(lax.select_n(pred, v[0], v[1] ** 2) * lax.select(pred, v[2], v[0])),
           lambda v: jnp.sum(jax.lax.select_n(pred, v[0], v[1] ** 2)
                             * jax.lax.select(pred, v[2], v[0])), x)


def test_full_convert_element_type_and_iota_are_jaxs():
    _agree(lambda v: cr.sum(lax.full((2, 3), v[0]) * lax.full_like(np.ones(3), v[1])),
           lambda v: jnp.sum(jax.lax.full((2, 3), v[0]) * jax.lax.full_like(jnp.ones(3), v[1])),
           RNG.standard_normal(2))
    x = RNG.standard_normal(6) * 3
    _same(lax.convert_element_type(x, np.int32), jax.lax.convert_element_type(x, jnp.int32))
    _same(lax.convert_element_type(x, np.float32), jax.lax.convert_element_type(x, jnp.float32))
    assert cr.grad(lambda v: cr.sum(lax.convert_element_type(v, np.float32) ** 2))(x).dtype \
        == jax.grad(lambda v: jnp.sum(jax.lax.convert_element_type(v, jnp.float32) ** 2))(x).dtype
    _same(lax.iota(np.int32, 5), jax.lax.iota(jnp.int32, 5))
    _same(lax.broadcasted_iota(np.int64, (2, 3, 4), 1),
          jax.lax.broadcasted_iota(jnp.int64, (2, 3, 4), 1))


def test_dtype_and_empty_are_jaxs_with_64_bit_values():
    for value in [1, 1.0, 1j, True, float, int, complex, np.float32, "float32",
                  np.ones(2, np.int8), np.ones(2)]:
        assert lax.dtype(value) == jax.lax.dtype(value), value
    assert lax.dtype(cr.tensor([1.0], dtype=np.float32)) == np.float32
    ours, theirs = lax.empty((2, 3), np.float32), jax.lax.empty((2, 3), jnp.float32)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype


# --------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("axes", [(0,), (1, 2), (0, 2), (0, 1, 2)])
def test_reductions_over_axes_are_jaxs(axes):
    x = RNG.uniform(0.5, 1.5, (3, 4, 2)) * RNG.choice([-1, 1], (3, 4, 2))
    for name in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]:
        _agree(lambda v: cr.sum(cr.sin(getattr(lax, name)(v, axes))),
               lambda v: jnp.sum(jnp.sin(getattr(jax.lax, name)(v, axes))), x)
    ints = RNG.integers(0, 64, (3, 4, 2))
    for name in ["reduce_and", "reduce_or", "reduce_xor"]:
        _same(getattr(lax, name)(ints, axes), getattr(jax.lax, name)(ints, axes))
        _same(getattr(lax, name)(ints > 20, axes), getattr(jax.lax, name)(ints > 20, axes))


def test_reduce_max_shares_the_gradient_among_ties_as_jax():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(cr.grad(lambda v: cr.sum(lax.reduce_max(v, (1,))))(x),
                               jax.grad(lambda v: jnp.sum(jax.lax.reduce_max(v, (1,))))(x))


def test_reduce_with_a_known_monoid_and_its_identity_is_jaxs():
    x = RNG.standard_normal((3, 4))
    for ours, theirs, init in [(lax.add, jax.lax.add, 0.0), (lax.mul, jax.lax.mul, 1.0),
                               (lax.max, jax.lax.max, -np.inf), (lax.min, jax.lax.min, np.inf)]:
        _agree(lambda v: cr.sum(cr.sin(lax.reduce(v, init, ours, (1,)))),
               lambda v: jnp.sum(jnp.sin(jax.lax.reduce(v, init, theirs, (1,)))), x)


def test_reduce_combines_another_init_value_once_as_jaxs_value_does():
    # (JAX's derivative of such a reduce drops the init value: jvp gives a primal
    # without it, so only the value is compared)
    x = RNG.standard_normal((3, 4))
    for ours, theirs, init in [(lax.add, jax.lax.add, 2.5), (lax.max, jax.lax.max, 0.1),
                               (lax.mul, jax.lax.mul, -2.0)]:
        np.testing.assert_allclose(lax.reduce(x, init, ours, (1,)),
                                   jax.lax.reduce(x, init, theirs, (1,)), **TOL)


def test_reduce_and_reduce_window_fold_any_other_computation_as_jaxs():
    # (an associative computation, as XLA asks: JAX differentiates a tree of it, whatever
    # order its value took)
    x = RNG.standard_normal((3, 4))
    _agree(lambda v: cr.sum(lax.reduce(v, -np.inf, cr.logaddexp, (1,))),
           lambda v: jnp.sum(jax.lax.reduce(v, -np.inf, jnp.logaddexp, (1,))), x)
    # (JAX has no reverse mode for a general reduce_window: value and jvp compared, the
    # gradient against central differences)
    def ours(v):
        return lax.reduce_window(v, -np.inf, cr.logaddexp, (2, 2), (1, 1), "VALID")

    def theirs(v):
        return jax.lax.reduce_window(v, -np.inf, jnp.logaddexp, (2, 2), (1, 1), "VALID")
    t = RNG.standard_normal(x.shape)
    np.testing.assert_allclose(ours(x), theirs(x), **TOL)
    np.testing.assert_allclose(cr.jvp(ours, (x,), (t,))[1], jax.jvp(theirs, (x,), (t,))[1],
                               **TOL)
    cr.gradcheck(ours, x)
    np.testing.assert_allclose(lax.reduce(x, 1.0, lambda a, b: a * 0.5 + cr.sin(b), (1,)),
                               jax.lax.reduce(x, 1.0, lambda a, b: a * 0.5 + jnp.sin(b), (1,)),
                               **TOL)
    pair = ((x, np.arange(12).reshape(3, 4)), (-np.inf, 0))  # a variadic reduce: argmax
    def larger(a, b):
        return (lax.max(a[0], b[0]), lax.select(b[0] > a[0], b[1], a[1]))
    ours = lax.reduce(*pair, larger, (1,))
    theirs = jax.lax.reduce(*pair, lambda a, b: (jax.lax.max(a[0], b[0]), jax.lax.select(
        b[0] > a[0], b[1], a[1])), (1,))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("ours, theirs, init", [(lax.add, jax.lax.add, 0.0),
                                                (lax.max, jax.lax.max, -np.inf)])
@pytest.mark.parametrize("window, strides, padding, base, dilation", [
    ((2, 2), (1, 1), "VALID", None, None), ((3, 2), (2, 1), "SAME", None, None),
    ((2, 3), (1, 2), ((1, 0), (2, 1)), (2, 1), None), ((1, 2), (1, 1), "VALID", (1, 2), None)])
def test_reduce_window_is_jaxs(ours, theirs, init, window, strides, padding, base, dilation):
    x = RNG.standard_normal((5, 7))
    _agree(lambda v: cr.sum(cr.sin(lax.reduce_window(v, init, ours, window, strides, padding,
                                                     base, dilation))),
           lambda v: jnp.sum(jnp.sin(jax.lax.reduce_window(v, init, theirs, window, strides,
                                                           padding, base, dilation))), x)


@pytest.mark.parametrize("dilation", [(1, 2), (2, 3)])
def test_reduce_window_with_window_dilation_is_jaxs(dilation):
    # (JAX has no reverse mode for a dilated max window: the max is compared forward)
    x = RNG.standard_normal((5, 7))
    _agree(lambda v: cr.sum(cr.sin(lax.reduce_window(v, 0.0, lax.add, (2, 2), (1, 2), "SAME",
                                                     None, dilation))),
           lambda v: jnp.sum(jnp.sin(jax.lax.reduce_window(v, 0.0, jax.lax.add, (2, 2), (1, 2),
                                                           "SAME", None, dilation))), x)
    t = RNG.standard_normal(x.shape)
    ours = cr.jvp(lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1), "VALID",
                                              None, dilation), (x,), (t,))
    theirs = jax.jvp(lambda v: jax.lax.reduce_window(v, -np.inf, jax.lax.max, (2, 2), (1, 1),
                                                     "VALID", None, dilation), (x,), (t,))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, **TOL)


def test_argmax_and_argmin_are_jaxs_with_ties_and_index_dtype():
    x = RNG.integers(0, 3, (4, 5)).astype(float)
    for axis in (0, 1):
        _same(lax.argmax(x, axis, np.int32), jax.lax.argmax(x, axis, jnp.int32))
        _same(lax.argmin(x, axis, np.int64), jax.lax.argmin(x, axis, jnp.int64))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("axis, reverse", [(0, False), (1, True), (1, False), (0, True)])
def test_cumulative_reductions_are_jaxs(name, axis, reverse):
    x = RNG.uniform(0.5, 1.5, (4, 5)) * RNG.choice([-1, 1], (4, 5))
    _agree(lambda v: cr.sum(cr.sin(getattr(lax, name)(v, axis, reverse))),
           lambda v: jnp.sum(jnp.sin(getattr(jax.lax, name)(v, axis, reverse))), x)


def test_cummax_splits_the_gradient_at_ties_as_jaxs_scan_does():
    x = np.array([1.0, 1.0, 0.5, 1.0, 2.0, 2.0, 2.0])
    np.testing.assert_allclose(cr.grad(lambda v: cr.sum(lax.cummax(v) * cr.arange(7.0)))(x),
                               jax.grad(lambda v: jnp.sum(jax.lax.cummax(v)
                                                          * jnp.arange(7.0)))(x))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
def test_associative_scan_of_a_pytree_is_jaxs(n):
    def affine(a, b):  # (a, b) composed: x -> a x + b, a linear recurrence
        return (a[0] * b[0], b[0] * a[1] + b[1])
    x = RNG.standard_normal((2, n, 3))
    _agree(lambda v: cr.sum(lax.associative_scan(affine, (v[0], v[1]), axis=0)[1] ** 2),
           lambda v: jnp.sum(jax.lax.associative_scan(affine, (v[0], v[1]), axis=0)[1] ** 2), x)
    _agree(lambda v: cr.sum(lax.associative_scan(lax.add, v, reverse=True, axis=1) ** 2),
           lambda v: jnp.sum(jax.lax.associative_scan(jax.lax.add, v, reverse=True,
                                                      axis=1) ** 2), x)


def test_sort_of_several_operands_by_several_keys_is_jaxs():
    keys = RNG.integers(0, 3, (3, 8)).astype(float)
    keys[0, :3] = [-0.0, 0.0, np.nan]
    second = RNG.integers(0, 2, (3, 8))
    values = RNG.standard_normal((3, 8))
    for num_keys in (1, 2):
        for dimension in (0, 1):
            ours = lax.sort((keys, second, values), dimension, True, num_keys)
            theirs = jax.lax.sort((keys, second, values), dimension, True, num_keys)
            for a, b in zip(ours, theirs):
                _same(a, b)
    _agree(lambda v: cr.sum(lax.sort(v, 0) * cr.arange(24.0).reshape(3, 8)),
           lambda v: jnp.sum(jax.lax.sort(v, 0) * jnp.arange(24.0).reshape(3, 8)), values)
    _agree(lambda v: cr.sum(lax.sort_key_val(keys, v, 1)[1] * cr.arange(24.0).reshape(3, 8)),
           lambda v: jnp.sum(jax.lax.sort_key_val(keys, v, 1)[1] * jnp.arange(24.0).reshape(3, 8)),
           values)


def test_sort_of_complex_keys_is_by_real_then_imaginary_part_as_jax():
    z = RNG.integers(0, 2, 9) + 1j * RNG.standard_normal(9)
    _same(lax.sort(z), jax.lax.sort(z))


def test_top_k_is_jaxs_with_ties_first_index_first():
    x = RNG.integers(0, 4, (3, 7)).astype(float)
    for ours, theirs in zip(lax.top_k(x, 3), jax.lax.top_k(x, 3)):
        _same(ours, theirs)
    for ours, theirs in zip(lax.top_k(x, 2, axis=0), jax.lax.top_k(x, 2, axis=0)):
        _same(ours, theirs)
    y = RNG.standard_normal((3, 7))
    _agree(lambda v: cr.sum(lax.top_k(v, 4)[0] ** 3),
           lambda v: jnp.sum(jax.lax.top_k(v, 4)[0] ** 3), y)


# ------------------------------------------------------------------------------ products
@pytest.mark.parametrize("dimension_numbers, lhs_shape, rhs_shape", [
    ((((1,), (0,)), ((), ())), (3, 4), (4, 5)),
    ((((2,), (1,)), ((0,), (0,))), (2, 3, 4), (2, 4, 5)),
    ((((0, 2), (2, 1)), ((1,), (0,))), (4, 2, 3), (2, 3, 4)),
    ((((), ()), ((), ())), (2, 3), (4,))])
def test_dot_general_is_jaxs(dimension_numbers, lhs_shape, rhs_shape):
    a, b = RNG.standard_normal(lhs_shape), RNG.standard_normal(rhs_shape)
    n = a.size
    _agree(lambda v: cr.sum(cr.sin(lax.dot_general(v[:n].reshape(lhs_shape),
                                                   v[n:].reshape(rhs_shape), dimension_numbers))),
           lambda v: jnp.sum(jnp.sin(jax.lax.dot_general(v[:n].reshape(lhs_shape),
                                                         v[n:].reshape(rhs_shape),
                                                         dimension_numbers))),
           np.concatenate([a.ravel(), b.ravel()]))


def test_dot_and_batch_matmul_are_jaxs():
    a, b, c = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((2, 4, 3))
    _agree(lambda v: cr.sum(lax.dot(a, v) ** 2 + lax.dot(v, v)),
           lambda v: jnp.sum(jax.lax.dot(a, v) ** 2 + jax.lax.dot(v, v)), b)
    _agree(lambda v: cr.sum(cr.sin(lax.batch_matmul(v, v.transpose(0, 2, 1)))),
           lambda v: jnp.sum(jnp.sin(jax.lax.batch_matmul(v, v.transpose(0, 2, 1)))), c)
    _same(lax.dot(a.astype(np.float32), b.astype(np.float32),
                  preferred_element_type=np.float64).dtype,
          jax.lax.dot(a.astype(np.float32), b.astype(np.float32),
                      preferred_element_type=jnp.float64).dtype)


# -------------------------------------------------------------------------- convolutions
def test_conv_dimension_numbers_are_jaxs():
    for numbers in [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"),
                    ("NWHC", "HWOI", "CHWN")]:
        assert tuple(lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), numbers)) == \
            tuple(jax.lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), numbers))


def test_the_shape_helpers_are_jaxs():
    numbers = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_permutations(numbers) == jax.lax.conv_general_permutations(numbers)
    for padding in ["SAME", "VALID", ((1, 2), (0, -1))]:
        for strides in [(1, 1), (2, 3)]:
            assert lax.conv_shape_tuple((2, 3, 9, 7), (8, 3, 3, 2), strides, padding) == \
                jax.lax.conv_shape_tuple((2, 3, 9, 7), (8, 3, 3, 2), strides, padding)
            assert lax.conv_general_shape_tuple((2, 9, 7, 3), (3, 2, 3, 8), strides, padding,
                                                numbers) == jax.lax.conv_general_shape_tuple(
                (2, 9, 7, 3), (3, 2, 3, 8), strides, padding, numbers)
            assert lax.conv_transpose_shape_tuple((2, 9, 7, 3), (3, 2, 3, 8), strides, padding,
                                                  numbers) == jax.lax.conv_transpose_shape_tuple(
                (2, 9, 7, 3), (3, 2, 3, 8), strides, padding, numbers)
            assert lax.reduce_window_shape_tuple((9, 7), (3, 2), strides, ((1, 0), (2, 2)),
                                                 (2, 1), (1, 3)) == \
                jax.lax.reduce_window_shape_tuple((9, 7), (3, 2), strides, ((1, 0), (2, 2)),
                                                  (2, 1), (1, 3))
    _agree(lambda v: cr.sum(lax.broadcast_like(v, np.zeros((2, 3))) ** 3),
           lambda v: jnp.sum(jax.lax.broadcast_like(v, jnp.zeros((2, 3))) ** 3),
           RNG.standard_normal(3))


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1)), ((2, 0), (3, 1))])
@pytest.mark.parametrize("strides, transpose_kernel", [((1, 1), False), ((2, 3), True),
                                                       ((2, 1), False)])
def test_conv_transpose_is_jaxs(padding, strides, transpose_kernel):
    x, w = RNG.standard_normal((2, 4, 5, 3)), RNG.standard_normal((3, 2, 3, 3))
    n = x.size
    _agree(lambda v: cr.sum(cr.sin(lax.conv_transpose(
               v[:n].reshape(x.shape), v[n:].reshape(w.shape), strides, padding,
               transpose_kernel=transpose_kernel))),
           lambda v: jnp.sum(jnp.sin(jax.lax.conv_transpose(
               v[:n].reshape(x.shape), v[n:].reshape(w.shape), strides, padding,
               transpose_kernel=transpose_kernel))),
           np.concatenate([x.ravel(), w.ravel()]), tol=dict(rtol=1e-11, atol=1e-12))


def test_conv_with_general_padding_negative_padding_and_patches_are_jaxs():
    x, w = RNG.standard_normal((2, 3, 6, 5)), RNG.standard_normal((4, 3, 2, 3))
    n = x.size
    for ours, theirs in [
            (lambda a, b: lax.conv_with_general_padding(a, b, (2, 1), ((1, -1), (2, 0)),
                                                        (1, 2), (2, 1)),
             lambda a, b: jax.lax.conv_with_general_padding(a, b, (2, 1), ((1, -1), (2, 0)),
                                                            (1, 2), (2, 1))),
            (lambda a, b: lax.conv_general_dilated(
                a, b, (1, 1), ((-1, 1), (0, 0)),
                dimension_numbers=lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3),
                                                           (0, 1, 3, 2))),
             lambda a, b: jax.lax.conv_general_dilated(
                a, b, (1, 1), ((-1, 1), (0, 0)),
                dimension_numbers=jax.lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3),
                                                               (0, 1, 3, 2)))),
            (lambda a, b: lax.conv_general_dilated_patches(a, (2, 3), (1, 2), "SAME") * b[0, 0, 0, 0],
             lambda a, b: jax.lax.conv_general_dilated_patches(a, (2, 3), (1, 2), "SAME")
             * b[0, 0, 0, 0])]:
        _agree(lambda v: cr.sum(cr.sin(ours(v[:n].reshape(x.shape), v[n:].reshape(w.shape)))),
               lambda v: jnp.sum(jnp.sin(theirs(v[:n].reshape(x.shape),
                                                v[n:].reshape(w.shape)))),
               np.concatenate([x.ravel(), w.ravel()]), tol=dict(rtol=1e-11, atol=1e-12))


# ------------------------------------------------------------- under vmap, jit, Tensors
SAMPLE = [  # (chainrule's, JAX's), each a function of one (3, 4) array
    (lambda v: lax.reduce_sum(lax.mul(lax.exp(v), lax.integer_pow(v, 3)), (1,)),
     lambda v: jax.lax.reduce_sum(jax.lax.mul(jax.lax.exp(v), jax.lax.integer_pow(v, 3)), (1,))),
    (lambda v: lax.pad(lax.cumsum(v, 1, reverse=True), 0.5, [(1, -1, 1), (0, 2, 0)]),
     lambda v: jax.lax.pad(jax.lax.cumsum(v, 1, reverse=True), 0.5, [(1, -1, 1), (0, 2, 0)])),
    (lambda v: lax.dot_general(v, lax.rev(v, (0,)), (((1,), (1,)), ((), ()))),
     lambda v: jax.lax.dot_general(v, jax.lax.rev(v, (0,)), (((1,), (1,)), ((), ())))),
    (lambda v: lax.sort((v[0], v[1]), num_keys=1)[1] + lax.cummax(v[2]),
     lambda v: jax.lax.sort((v[0], v[1]), num_keys=1)[1] + jax.lax.cummax(v[2])),
    (lambda v: lax.select_n(lax.gt(v, 0.0), lax.clamp(-0.5, v, 0.5), lax.round(v) * v),
     lambda v: jax.lax.select_n(jax.lax.gt(v, 0.0), jax.lax.clamp(-0.5, v, 0.5),
                                jax.lax.round(v) * v)),
    (lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 2), "SAME"),
     lambda v: jax.lax.reduce_window(v, -np.inf, jax.lax.max, (2, 2), (1, 2), "SAME")),
    (lambda v: lax.broadcast_in_dim(lax.reduce_max(v, (0,)), (2, 4), (1,)) * lax.top_k(v, 2)[0][:2, :1],
     lambda v: jax.lax.broadcast_in_dim(jax.lax.reduce_max(v, (0,)), (2, 4), (1,))
     * jax.lax.top_k(v, 2)[0][:2, :1]),
]


@pytest.mark.parametrize("case", range(len(SAMPLE)))
def test_a_sample_under_vmap_and_jit_is_jaxs(case):
    ours, theirs = SAMPLE[case]
    xs = RNG.standard_normal((5, 3, 4))
    np.testing.assert_allclose(cr.vmap(ours)(xs), jax.vmap(theirs)(xs), **TOL)
    np.testing.assert_allclose(cr.jit(ours)(xs[0]), jax.jit(theirs)(xs[0]), **TOL)
    ours_grad = cr.vmap(cr.grad(lambda v: cr.sum(cr.sin(ours(v)))))(xs)
    theirs_grad = jax.vmap(jax.grad(lambda v: jnp.sum(jnp.sin(theirs(v)))))(xs)
    np.testing.assert_allclose(ours_grad, theirs_grad, **TOL)
    np.testing.assert_allclose(cr.jit(cr.grad(lambda v: cr.sum(cr.sin(ours(v)))))(xs[0]),
                               theirs_grad[0], **TOL)


def test_tensors_backward_through_lax_operations_as_jax_grad():
    x = RNG.standard_normal((3, 4))
    t = cr.tensor(x, requires_grad=True)
    cr.sum(lax.cumprod(lax.pad(lax.tanh(t), 1.0, [(1, 0, 0), (0, 0, 1)]), 0) ** 2).backward()
    expected = jax.grad(lambda v: jnp.sum(jax.lax.cumprod(jax.lax.pad(
        jax.lax.tanh(v), 1.0, [(1, 0, 0), (0, 0, 1)]), 0) ** 2))(x)
    np.testing.assert_allclose(t.grad, expected, **TOL)


# -------------------------------------------------------------------------------- gather
GATHERS = {  # name: (operand shape, indices, dimension numbers, slice sizes)
    "rows": ((5, 4), [[3], [0], [3], [9], [-2]],
             dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4)),
    "windows": ((6, 5), [[[0, 1], [4, 4]], [[2, 0], [5, -1]]],
                dict(offset_dims=(2, 3), collapsed_slice_dims=(), start_index_map=(0, 1)),
                (2, 3)),
    "window axes first, index map reversed": (
        (6, 5, 3), [[1, 4], [0, 2], [3, 3]],
        dict(offset_dims=(0, 1), collapsed_slice_dims=(1,), start_index_map=(1, 0)),
        (2, 1, 3)),
    "batching axes": ((3, 5, 4), [[[1], [4]], [[0], [2]], [[3], [3]]],
                      dict(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,),
                           operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
                      (1, 1, 4)),
    "no index rows": ((4, 3), np.zeros((2, 0), int),
                      dict(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=()),
                      (2, 3)),
}


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gather_is_jaxs_for_each_layout_and_mode(name, mode):
    shape, indices, numbers, sizes = GATHERS[name]
    indices = np.asarray(indices)
    if mode is None:  # a promise that the windows are inside (JAX's derivative counts on it)
        for k, d in enumerate(numbers["start_index_map"]):
            indices[..., k] = np.clip(indices[..., k], 0, shape[d] - sizes[d])
    x = RNG.standard_normal(shape)
    ours_dn, theirs_dn = _numbers("GatherDimensionNumbers", numbers)
    _same(lax.gather(x, indices, ours_dn, sizes, mode=mode),
          jax.lax.gather(x, indices, theirs_dn, sizes, mode=mode))
    fill = dict(fill_value=0.5) if mode == "fill" else {}  # (NaN would spoil a gradient)
    _agree(lambda v: cr.sum(cr.sin(lax.gather(v, indices, ours_dn, sizes, mode=mode, **fill))
                            ** 2),
           lambda v: jnp.sum(jnp.sin(jax.lax.gather(v, indices, theirs_dn, sizes, mode=mode,
                                                    **fill)) ** 2), x)


def test_gather_with_traced_indices_under_vmap_and_jit_is_jaxs():
    shape, _, numbers, sizes = GATHERS["windows"]
    x = RNG.standard_normal(shape)
    indices = RNG.integers(-1, 6, (4, 2, 3, 2))
    ours_dn, theirs_dn = _numbers("GatherDimensionNumbers", numbers)
    ours = cr.vmap(lambda i: lax.gather(x, i, ours_dn, sizes, mode="clip"))(indices)
    theirs = jax.vmap(lambda i: jax.lax.gather(x, i, theirs_dn, sizes, mode="clip"))(indices)
    _same(ours, theirs)
    xs = RNG.standard_normal((4,) + shape)      # the operand batched too
    _same(cr.vmap(lambda v, i: lax.gather(v, i, ours_dn, sizes, mode="fill"))(xs, indices),
          jax.vmap(lambda v, i: jax.lax.gather(v, i, theirs_dn, sizes, mode="fill"))(xs, indices))
    ours = cr.jit(lambda v, i: lax.gather(v, i, ours_dn, sizes, mode="fill"))(x, indices[0])
    _same(ours, jax.lax.gather(x, indices[0], theirs_dn, sizes, mode="fill"))
    grads = cr.vmap(cr.grad(lambda v: cr.sum(lax.gather(v, indices[0], ours_dn, sizes, mode="clip") ** 2)))(
        np.stack([x, 2 * x]))
    np.testing.assert_allclose(grads, jax.vmap(jax.grad(lambda v: jnp.sum(
        jax.lax.gather(v, indices[0], theirs_dn, sizes, mode="clip") ** 2)))(np.stack([x, 2 * x])), **TOL)


# ------------------------------------------------------------------------------- scatter
SCATTERS = {  # name: (operand shape, indices, updates shape, dimension numbers)
    "entries": ((6,), [[3], [0], [3], [9], [-2]], (5,),
                dict(update_window_dims=(), inserted_window_dims=(0,),
                     scatter_dims_to_operand_dims=(0,))),
    "rows": ((5, 4), [[1], [4], [1], [6]], (4, 4),
             dict(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,))),
    "windows, window axes first": (
        (6, 5), [[[0, 1], [4, 3]], [[2, 0], [5, 4]]], (2, 3, 2, 2),
        dict(update_window_dims=(0, 1), inserted_window_dims=(),
             scatter_dims_to_operand_dims=(1, 0))),
    "batching axes": ((3, 5, 4), [[[1], [4]], [[0], [0]], [[3], [6]]], (3, 2, 4),
                      dict(update_window_dims=(2,), inserted_window_dims=(1,),
                           scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                           scatter_indices_batching_dims=(0,))),
}


@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("kind", ["scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
                                  "scatter_max"])
@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_each_scatter_is_jaxs_for_each_layout_and_mode(name, kind, mode):
    shape, indices, ushape, numbers = SCATTERS[name]
    indices = np.asarray(indices)
    x = RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1, 1], shape)
    u = RNG.uniform(0.5, 1.5, ushape) * RNG.choice([-1, 1], ushape)
    ours_dn, theirs_dn = _numbers("ScatterDimensionNumbers", numbers)
    np.testing.assert_allclose(getattr(lax, kind)(x, indices, u, ours_dn, mode=mode),
                               getattr(jax.lax, kind)(x, indices, u, theirs_dn, mode=mode), **TOL)
    v = np.concatenate([x.ravel(), u.ravel()])
    n = x.size

    def ours(v):
        return cr.sum(cr.sin(getattr(lax, kind)(v[:n].reshape(shape), indices,
                                                v[n:].reshape(ushape), ours_dn, mode=mode)))

    def theirs(v):
        return jnp.sum(jnp.sin(getattr(jax.lax, kind)(v[:n].reshape(shape), indices,
                                                      v[n:].reshape(ushape), theirs_dn,
                                                      mode=mode)))
    if kind == "scatter_mul":  # (JAX differentiates it only with unique_indices=True)
        return
    if kind in ("scatter_min", "scatter_max") and mode == "clip":
        return  # (JAX's derivatives of a clipped scatter_min/max come out NaN or inf)
    _agree(ours, theirs, v)


@pytest.mark.parametrize("mode", [None, "clip"])
def test_scatter_mul_is_jaxs_in_both_arguments_where_its_places_are_distinct(mode):
    shape, _, ushape, numbers = SCATTERS["rows"]
    indices = np.array([[3], [0], [7], [1]])
    x, u = RNG.standard_normal(shape), RNG.standard_normal(ushape)
    ours_dn, theirs_dn = _numbers("ScatterDimensionNumbers", numbers)
    n = x.size
    _agree(lambda v: cr.sum(cr.sin(lax.scatter_mul(v[:n].reshape(shape), indices,
                                                   v[n:].reshape(ushape), ours_dn, mode=mode))),
           lambda v: jnp.sum(jnp.sin(jax.lax.scatter_mul(v[:n].reshape(shape), indices,
                                                         v[n:].reshape(ushape), theirs_dn,
                                                         mode=mode, unique_indices=True))),
           np.concatenate([x.ravel(), u.ravel()]))


@pytest.mark.parametrize("mode", [None, "clip"])
def test_scatter_overwrites_as_jax_where_its_places_are_distinct(mode):
    shape, _, ushape, numbers = SCATTERS["rows"]
    indices = np.array([[3], [0], [7], [1]])
    x, u = RNG.standard_normal(shape), RNG.standard_normal(ushape)
    ours_dn, theirs_dn = _numbers("ScatterDimensionNumbers", numbers)
    n = x.size
    _agree(lambda v: cr.sum(cr.sin(lax.scatter(v[:n].reshape(shape), indices,
                                               v[n:].reshape(ushape) ** 2, ours_dn, mode=mode))),
           lambda v: jnp.sum(jnp.sin(jax.lax.scatter(v[:n].reshape(shape), indices,
                                                     v[n:].reshape(ushape) ** 2, theirs_dn,
                                                     mode=mode))),
           np.concatenate([x.ravel(), u.ravel()]))


def test_scatter_add_with_traced_indices_under_vmap_and_jit_is_jaxs():
    shape, _, ushape, numbers = SCATTERS["windows, window axes first"]
    indices = RNG.integers(-1, 6, (4, 2, 2, 2))
    xs, us = RNG.standard_normal((4,) + shape), RNG.standard_normal((4,) + ushape)
    ours_dn, theirs_dn = _numbers("ScatterDimensionNumbers", numbers)
    np.testing.assert_allclose(
        cr.vmap(lambda x, i, u: lax.scatter_add(x, i, u, ours_dn))(xs, indices, us),
        jax.vmap(lambda x, i, u: jax.lax.scatter_add(x, i, u, theirs_dn))(xs, indices, us), **TOL)
    np.testing.assert_allclose(
        cr.jit(lambda x, i, u: lax.scatter_add(x, i, u, ours_dn, mode="clip"))(
            xs[0], indices[0], us[0]),
        jax.lax.scatter_add(xs[0], indices[0], us[0], theirs_dn, mode="clip"), **TOL)
    np.testing.assert_allclose(
        cr.vmap(cr.grad(lambda u, i: cr.sum(cr.sin(lax.scatter_add(xs[0], i, u, ours_dn)))))(
            us, indices),
        jax.vmap(jax.grad(lambda u, i: jnp.sum(jnp.sin(jax.lax.scatter_add(xs[0], i, u,
                                                                            theirs_dn)))))(
            us, indices), **TOL)
