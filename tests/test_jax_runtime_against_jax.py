"""The top-level names of a JAX program beyond grad and vmap, each run side by side with
JAX (float64): ``linearize``, ``linear_transpose``, ``custom_gradient``, ``pure_callback``,
``eval_shape`` with ``ShapeDtypeStruct``, ``disable_jit``, ``config.update`` and the
device questions. A program that uses them ports by its imports."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(76)


def close(ours, theirs, rtol=1e-12):
    ours_leaves, theirs_leaves = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-13)


# (id, chainrule's function, JAX's, the point)
NONLINEAR = [
    ("sin_times_x", lambda x: cr.sin(x) * x, lambda x: jnp.sin(x) * x, (1.3,)),
    ("vector", lambda x: cr.tanh(x) * cr.sum(x * x), lambda x: jnp.tanh(x) * jnp.sum(x * x),
     (np.array([0.3, -1.2, 2.0]),)),
    ("two_arguments", lambda x, y: x @ cr.exp(y), lambda x, y: x @ jnp.exp(y),
     (np.arange(6.0).reshape(2, 3) / 5, np.array([0.1, -0.4, 0.7]))),
    ("pytree_out", lambda p: {"a": p["w"] ** 2, "b": cr.log(p["v"])},
     lambda p: {"a": p["w"] ** 2, "b": jnp.log(p["v"])},
     ({"w": np.array([1.0, 2.0]), "v": np.array([0.5, 3.0])},)),
]


@pytest.mark.parametrize("name, ours, theirs, primals", NONLINEAR, ids=[c[0] for c in NONLINEAR])
def test_linearize_gives_the_output_and_the_jacobian_as_a_function(name, ours, theirs,
                                                                   primals):
    out, f_jvp = cr.linearize(ours, *primals)
    jax_out, jax_jvp = jax.linearize(theirs, *primals)
    close(out, jax_out)
    for _ in range(2):  # the same linear map, at two tangents
        tangents = jax.tree.map(lambda p: RNG.standard_normal(np.shape(p)), primals)
        tangents = tuple(jax.tree.map(lambda t, p: t if np.ndim(p) else float(t),
                                      tangents, primals))
        close(f_jvp(*tangents), jax_jvp(*tangents))


def test_linearize_with_aux_and_its_refusals():
    out, f_jvp, aux = cr.linearize(lambda x: (cr.exp(x), "note"), 0.5, has_aux=True)
    jax_out, jax_jvp, jax_aux = jax.linearize(lambda x: (jnp.exp(x), 1), 0.5, has_aux=True)
    close((out, f_jvp(2.0)), (jax_out, jax_jvp(2.0)))
    assert aux == "note"
    with pytest.raises(TypeError, match="one tangent per primal"):
        f_jvp(1.0, 2.0)
    with pytest.raises(TypeError, match="pair"):
        cr.linearize(lambda x: x, 1.0, has_aux=True)


A = np.random.default_rng(76).standard_normal((3, 4))
LINEAR = [
    ("matmul", lambda x: A @ x, lambda x: jnp.asarray(A) @ x, (np.zeros(4),)),
    ("sum_and_transpose", lambda x: (cr.sum(x, axis=0), x.T * 3.0),
     lambda x: (jnp.sum(x, axis=0), x.T * 3.0), (np.zeros((2, 3)),)),
    ("two_inputs", lambda x, y: 2 * x - y, lambda x, y: 2 * x - y, (0.0, 0.0)),
    ("pytree", lambda p: p["a"] @ A + cr.cumsum(p["b"]),
     lambda p: p["a"] @ jnp.asarray(A) + jnp.cumsum(p["b"]),
     ({"a": np.zeros(3), "b": np.zeros(4)},)),
    ("complex", lambda z: (1 + 2j) * z, lambda z: (1 + 2j) * z, (np.zeros(2, complex),)),
    ("affine", lambda x: 3 * x + 1.0, lambda x: 3 * x + 1.0, (np.zeros(2),)),
]


@pytest.mark.parametrize("name, ours, theirs, primals", LINEAR, ids=[c[0] for c in LINEAR])
def test_linear_transpose_is_jaxs_transpose(name, ours, theirs, primals):
    out = theirs(*primals)
    cotangent = jax.tree.map(lambda o: RNG.standard_normal(np.shape(o)) +
                             (1j * RNG.standard_normal(np.shape(o))
                              if np.iscomplexobj(o) else 0), out)
    ours_t = cr.linear_transpose(ours, *primals)(cotangent)
    theirs_t = jax.linear_transpose(theirs, *primals)(cotangent)
    assert isinstance(ours_t, tuple) and len(ours_t) == len(primals)
    close(ours_t, theirs_t)


def test_linear_transpose_takes_shapes_and_refuses_what_is_not_linear():
    spec = cr.ShapeDtypeStruct((4,), np.float64)
    np.testing.assert_allclose(cr.linear_transpose(lambda x: A @ x, spec)(np.ones(3))[0],
                               A.T @ np.ones(3))
    with pytest.raises(TypeError, match="not linear"):
        cr.linear_transpose(lambda x: x * x, 1.0)
    with pytest.raises(TypeError, match="not linear"):
        cr.linear_transpose(lambda x: cr.sin(x), np.zeros(3))
    with pytest.raises(TypeError, match="dtype int64 has no derivative"):
        cr.linear_transpose(lambda x: x, np.zeros(3, int))


def test_custom_gradient_is_jaxs_in_every_order_and_transform():
    def make(lib):
        def f(x):
            return lib.sin(x) * x, lambda g: (g * lib.cos(x) * 3,)
        return f
    ours, theirs = cr.custom_gradient(make(cr)), jax.custom_gradient(make(jnp))
    xs = RNG.uniform(-2, 2, 5)
    close(ours(1.1), theirs(1.1))
    close(cr.grad(ours)(1.1), jax.grad(theirs)(1.1))
    close(cr.grad(cr.grad(ours))(1.1), jax.grad(jax.grad(theirs))(1.1))
    close(cr.vmap(cr.grad(ours))(xs), jax.vmap(jax.grad(theirs))(xs))
    close(cr.jit(cr.grad(ours))(0.7), jax.jit(jax.grad(theirs))(0.7))
    two = cr.custom_gradient(lambda x, y: (x * y, lambda g: (g * 10.0, g * 20.0)))
    assert cr.grad(two, argnums=(0, 1))(2.0, 3.0) == (10.0, 20.0)
    with pytest.raises(TypeError, match="pair"):
        cr.grad(cr.custom_gradient(lambda x: x))(1.0)


SPEC3 = cr.ShapeDtypeStruct((3,), np.float64)


def test_pure_callback_calls_now_and_at_every_jitted_call():
    calls = []

    def callback(x, scale):
        calls.append(np.asarray(x).copy())
        return np.cumsum(x) * scale

    x1, x2 = RNG.standard_normal(3), RNG.standard_normal(3)
    ours = cr.jit(lambda x: cr.pure_callback(callback, SPEC3, x, 2.0) + x)
    theirs = jax.jit(lambda x: jax.pure_callback(
        callback, jax.ShapeDtypeStruct((3,), jnp.float64), x, 2.0) + x)
    for x in (x1, x2, x1):
        close(ours(x), theirs(x))
    close(cr.pure_callback(callback, SPEC3, x1, scale=2.0), np.cumsum(x1) * 2.0)
    ours_calls = [c for c in calls[::2]]  # (ours and JAX's alternate)
    assert len(calls) == 7 and all(np.array_equal(a, b) for a, b in
                                   zip(ours_calls[:3], [x1, x2, x1]))


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_pure_callback_under_vmap_is_called_as_jaxs(method):
    seen = {"ours": [], "jax": []}

    def callback(who):
        def run(x, y):
            seen[who].append((np.shape(x), np.shape(y)))
            return np.sin(x) * np.sum(y)
        return run

    xs, y = RNG.standard_normal((4, 3)), RNG.standard_normal((3,))
    ours = cr.vmap(lambda x: cr.pure_callback(callback("ours"), SPEC3, x, y,
                                              vmap_method=method))(xs)
    theirs = jax.vmap(lambda x: jax.pure_callback(
        callback("jax"), jax.ShapeDtypeStruct((3,), jnp.float64), x, y,
        vmap_method=method))(xs)
    if method != "sequential":  # (a batch call sums y's copies: compare shapes only)
        assert seen["ours"] == seen["jax"]
    else:
        close(ours, theirs)
        assert seen["ours"] == seen["jax"] == [((3,), (3,))] * 4
    assert np.shape(ours) == np.shape(theirs)


def test_pure_callback_refuses_a_derivative_a_missing_vmap_method_and_wrong_shapes():
    with pytest.raises(TypeError, match="has no derivative"):
        cr.grad(lambda x: cr.pure_callback(np.sin, cr.ShapeDtypeStruct((), np.float64), x))(1.0)
    with pytest.raises(TypeError, match="has no derivative"):
        cr.pure_callback(np.sin, SPEC3, cr.tensor(np.ones(3), requires_grad=True))
    with pytest.raises(ValueError, match="vmap_method"):
        cr.vmap(lambda x: cr.pure_callback(np.sin, SPEC3, x))(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape \(3,\) where result_shape_dtypes promised \(2,\)"):
        cr.pure_callback(np.sin, cr.ShapeDtypeStruct((2,), np.float64), np.ones(3))
    with pytest.raises(TypeError, match="dtype complex128"):
        cr.pure_callback(lambda x: x + 1j, SPEC3, np.ones(3))
    def f(x, lib):
        spec = (cr.ShapeDtypeStruct if lib is cr else jax.ShapeDtypeStruct)((3,), np.float64)
        return lib.numpy.sum(lib.pure_callback(np.sin, spec, lib.lax.stop_gradient(x)) * x)
    import chainrule.numpy  # noqa: F401  (cr.numpy, as jax.numpy)
    x = RNG.standard_normal(3)
    close(cr.grad(f)(x, cr), jax.grad(f)(x, jax))
    close(cr.jvp(lambda x: f(x, cr), (x,), (x,)), jax.jvp(lambda x: f(x, jax), (x,), (x,)))


SHAPED = [
    ("reduce", lambda x: x.sum(0), lambda x: x.sum(0), [((2, 3), np.float32)]),
    ("pytree", lambda p, n: {"y": p["a"] @ p["b"], "n": n * 2},
     lambda p, n: {"y": p["a"] @ p["b"], "n": n * 2},
     [{"a": ((4, 2), np.float64), "b": ((2, 5), np.float64)}, ((), np.int64)]),
    ("promotion", lambda x, y: (x * y, x > 0), lambda x, y: (x * y, x > 0),
     [((3,), np.float32), ((3,), np.float64)]),
]


@pytest.mark.parametrize("name, ours, theirs, shapes", SHAPED, ids=[c[0] for c in SHAPED])
def test_eval_shape_gives_jaxs_shapes_and_dtypes(name, ours, theirs, shapes):
    def specs(make):
        return jax.tree.map(lambda s: make(*s), shapes,
                            is_leaf=lambda s: isinstance(s, tuple) and len(s) == 2
                            and isinstance(s[0], tuple))
    found = cr.eval_shape(ours, *specs(cr.ShapeDtypeStruct))
    expected = jax.eval_shape(theirs, *specs(jax.ShapeDtypeStruct))
    assert jax.tree.structure(found, is_leaf=lambda s: isinstance(s, cr.ShapeDtypeStruct)) \
        .num_leaves == len(jax.tree.leaves(expected))
    for a, b in zip(jax.tree.leaves(found, is_leaf=lambda s: isinstance(s, cr.ShapeDtypeStruct)),
                    jax.tree.leaves(expected)):
        assert (a.shape, a.dtype) == (b.shape, b.dtype)


def test_eval_shape_takes_arrays_and_computes_no_graph():
    x = cr.tensor(np.ones(3), requires_grad=True)
    found = cr.eval_shape(lambda t: (t * 2).sum(), x)
    assert (found.shape, found.dtype) == ((), np.float64)
    assert x.grad is None and cr.eval_shape(cr.log, np.zeros(2)).shape == (2,)


def test_disable_jit_runs_the_python_as_jaxs_does():
    for lib, disable in ((cr, cr.disable_jit), (jax, jax.disable_jit)):
        shown = []
        f = lib.jit(lambda x: shown.append(type(x).__name__) or x * 2)
        f(1.0)
        with disable():
            f(2.0)
            f(3.0)
        f(4.0)
        assert len(shown) == 3, lib  # the trace, then the two calls in Python
        assert shown[1] == shown[2] == "float"
    with cr.disable_jit():
        with cr.disable_jit(False):
            assert not cr.is_jit_disabled()
        assert cr.is_jit_disabled()
    assert not cr.is_jit_disabled()


def test_config_flags_a_ported_program_sets():
    from chainrule.modes import modes_switched
    switched = modes_switched[0]  # (the count the scalar engine's fast paths look at)
    cr.config.update("jax_enable_x64", True)
    assert cr.config.jax_enable_x64 is True and cr.config.read("jax_platform_name") == "cpu"
    with pytest.raises(ValueError, match="float64"):
        cr.config.update("jax_enable_x64", False)
    with pytest.raises(ValueError, match="CPU"):
        cr.config.update("jax_platform_name", "gpu")
    with pytest.raises(AttributeError, match="jax_no_such_flag"):
        cr.config.update("jax_no_such_flag", 1)
    try:
        cr.config.update("jax_debug_nans", True)
        with pytest.raises(FloatingPointError, match="log"), np.errstate(divide="ignore"):
            cr.log(cr.tensor([0.0, 1.0]))
        cr.config.update("jax_disable_jit", True)
        assert cr.is_jit_disabled()
    finally:
        cr.config.update("jax_debug_nans", False)
        cr.config.update("jax_disable_jit", False)
    with np.errstate(divide="ignore"):
        assert np.isneginf(cr.log(cr.tensor([0.0])).data[0]) and not cr.is_jit_disabled()
    assert modes_switched[0] == switched  # the flags set back leave no mode counted
    with cr.enable_x64():
        assert cr.ones(2).dtype == np.float64
    with pytest.raises(ValueError, match="float64"):
        with cr.enable_x64(False):
            pass


# JAX's flags as context managers: (name, a value to set, the flag it sets)
FLAG_BLOCKS = [
    ("debug_nans", True, "jax_debug_nans"), ("debug_infs", True, "jax_debug_infs"),
    ("log_compiles", False, "jax_log_compiles"), ("enable_checks", True, "jax_enable_checks"),
    ("threefry_partitionable", False, "jax_threefry_partitionable"),
    ("default_matmul_precision", "float32", "jax_default_matmul_precision"),
    ("numpy_rank_promotion", "allow", "jax_numpy_rank_promotion"),
    ("numpy_dtype_promotion", "standard", "jax_numpy_dtype_promotion"),
    ("default_prng_impl", "rbg", "jax_default_prng_impl"),
    ("transfer_guard_host_to_device", "disallow", "jax_transfer_guard_host_to_device"),
    ("transfer_guard_device_to_host", "log", "jax_transfer_guard_device_to_host"),
    ("transfer_guard_device_to_device", "disallow", "jax_transfer_guard_device_to_device"),
]


@pytest.mark.parametrize("name, value, flag", FLAG_BLOCKS, ids=[b[0] for b in FLAG_BLOCKS])
def test_a_flags_with_block_sets_it_and_sets_it_back_as_jaxs(name, value, flag):
    before, jax_before = cr.config.read(flag), getattr(jax.config, flag)
    with getattr(cr, name)(value), getattr(jax, name)(value):
        assert cr.config.read(flag) == getattr(jax.config, flag) == value
    assert cr.config.read(flag) == before and getattr(jax.config, flag) == jax_before


def test_flag_blocks_switch_what_the_flags_switch_and_refuse_what_they_cannot():
    from chainrule.modes import modes_switched
    switched = modes_switched[0]
    with cr.debug_nans():  # (a bool flag's value left out is True, as in JAX)
        with pytest.raises(FloatingPointError, match="log"), np.errstate(divide="ignore"):
            cr.log(cr.tensor([0.0, 1.0]))
    assert modes_switched[0] == switched and not cr.config.jax_debug_nans
    with cr.transfer_guard("disallow"), jax.transfer_guard("disallow"):
        assert cr.config.jax_transfer_guard_device_to_host == \
            jax.config.jax_transfer_guard_device_to_host == "disallow"
        assert cr.device_put(np.ones(2)).tolist() == [1.0, 1.0]  # (nothing moves)
    with cr.default_device(cr.devices()[0]):
        assert cr.config.jax_default_device == cr.devices()[0]
    with pytest.raises(ValueError, match="promotes dtypes as NumPy does"):
        with cr.numpy_dtype_promotion("strict"):
            pass
    with pytest.raises(ValueError, match="its one CPU"):
        with cr.default_device("gpu"):
            pass
    with pytest.raises(TypeError, match="default_matmul_precision\\(\\) takes the value"):
        with cr.default_matmul_precision():
            pass
    assert cr.config.jax_numpy_dtype_promotion == "standard"
    assert cr.config.jax_default_device is None


def test_one_cpu_as_jax_describes_its_own():
    assert [d.platform for d in cr.devices()] == [d.platform for d in jax.devices()]
    assert repr(cr.devices()) == repr(jax.devices())
    assert (cr.device_count(), cr.local_device_count(), cr.default_backend(),
            cr.process_index(), cr.process_count()) == \
        (jax.device_count(), jax.local_device_count(), jax.default_backend(),
         jax.process_index(), jax.process_count())
    with pytest.raises(ValueError, match="CPU"):
        cr.devices("gpu")
    tree = {"a": [1.0, 2.0], "t": cr.tensor([3.0])}
    put = cr.device_put(tree, cr.devices()[0])
    assert [type(a) for a in put["a"]] == [np.ndarray] * 2 and put["t"] is tree["t"]
    got = cr.device_get(tree)
    assert isinstance(got["t"], np.ndarray) and got["t"].tolist() == [3.0]
    x = np.ones(2)
    assert cr.block_until_ready(x) is x
    with cr.named_scope("block"), cr.ensure_compile_time_eval():
        assert cr.named_call(cr.exp, name="e")(0.0) == 1.0


def test_numpy_and_scipy_are_attributes_of_the_package_as_jaxs_are():
    import chainrule.numpy
    import chainrule.scipy.special
    assert cr.numpy is chainrule.numpy and cr.scipy.special is chainrule.scipy.special
    assert cr.numpy.sin(0.0) == jax.numpy.sin(0.0)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        cr.nonesuch  # noqa: B018
