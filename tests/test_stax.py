"""chainrule.example_libraries.stax against jax.example_libraries.stax (float64): the
parameters JAX's init makes, copied in as NumPy arrays, give the same outputs and the
same gradients, layer by layer and in whole networks; the shapes init reports and the
parameter trees it makes are JAX's; a network in the style of JAX's
examples/mnist_classifier.py trains a few steps with chainrule.example_libraries.optimizers
as JAX's does."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as jax_optimizers, stax as jstax

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.example_libraries import optimizers, stax
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(4403)


def as_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


def close_trees(ours, theirs, rtol=1e-10, atol=1e-12):
    ours_leaves, theirs_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def same_network(build, input_shape, jax_init=False):
    """The network built from each library, with the same parameters in both: outputs
    and the gradient of a weighted sum of them agree; init's shapes and trees are JAX's.
    With ``jax_init`` the parameters are drawn by JAX's init, else by chainrule's (JAX
    compiles its truncated-normal draws for seconds; the shapes come from
    ``jax.eval_shape`` then). JAX's functions run under jax.jit: op by op, JAX compiles
    each, ten times slower."""
    (j_init, j_apply), (c_init, c_apply) = build(jstax), build(stax)
    c_shape, c_params = c_init(cr.random.key(0), input_shape)
    if jax_init:
        j_shape, j_params = jax.jit(j_init, static_argnums=1)(jax.random.key(0), input_shape)
        params = as_numpy(j_params)
    else:
        _, j_params = jax.eval_shape(lambda key: j_init(key, input_shape), jax.random.key(0))
        params = c_params
    assert jax.tree_util.tree_map(np.shape, c_params) == \
        jax.tree_util.tree_map(np.shape, j_params)
    x = RNG.standard_normal(input_shape)
    out = c_apply(params, x)
    theirs = jax.jit(j_apply)(params, x)
    close_trees(out, theirs)
    assert tuple(c_shape) == np.shape(theirs)
    w = RNG.standard_normal(np.shape(out))
    ours = cr.grad(lambda p, x: cnp.sum(c_apply(p, x) * w), (0, 1))(params, x)
    theirs = jax.jit(jax.grad(lambda p, x: jnp.sum(j_apply(p, x) * w), (0, 1)))(params, x)
    close_trees(ours, theirs)


@pytest.mark.slow
def test_dense_and_every_elementwise_layer():
    def build(s):
        return s.serial(s.Dense(6), s.Relu, s.Dense(5), s.Tanh, s.Dense(5), s.Sigmoid,
                        s.Dense(5), s.Elu, s.LeakyRelu, s.Softplus, s.Gelu, s.Selu,
                        s.Dense(4), s.Exp, s.Softmax, s.Dense(3), s.LogSoftmax, s.Identity)
    same_network(build, (7, 3), jax_init=True)


@pytest.mark.slow
def test_a_convolutional_network_with_pooling_batchnorm_and_fans():
    def build(s):
        return s.serial(
            s.Conv(4, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu,
            s.MaxPool((2, 2), strides=(2, 2)),
            s.Conv(5, (2, 2), strides=(2, 1)), s.Tanh, s.AvgPool((2, 2), padding="SAME"),
            s.SumPool((2, 2)),
            s.FanOut(2), s.parallel(s.Identity, s.serial(s.Elu, s.LeakyRelu)), s.FanInSum,
            s.Flatten, s.Dense(7), s.Gelu,
            s.FanOut(2), s.parallel(s.Dense(3), s.Dense(2)), s.FanInConcat(), s.LogSoftmax)
    same_network(build, (4, 12, 10, 3))


@pytest.mark.parametrize("pool", ["MaxPool", "AvgPool", "SumPool"])
@pytest.mark.parametrize("padding,strides", [("VALID", None), ("SAME", (2, 2)),
                                             ("SAME", (1, 2))])
def test_pooling_as_jax(pool, padding, strides):
    def build(s):
        return getattr(s, pool)((3, 2), strides=strides, padding=padding)
    same_network(build, (2, 7, 6, 3))


@pytest.mark.slow
def test_general_convolutions_batchnorm_variants_and_pooling_spec():
    def build(s):
        return s.serial(
            s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 3), strides=(1, 2), padding="SAME"),
            s.BatchNorm(axis=(0, 2, 3), center=False),
            s.MaxPool((2, 2), padding="SAME", spec="NCHW"),
            s.BatchNorm(axis=0, scale=False),
            s.GeneralConv(("NHWC", "OIHW", "NCHW"), 2, (1, 1)),
            s.BatchNorm(axis=(0, 1), center=False, scale=False))
    same_network(build, (3, 4, 6, 5))


def test_dropout_keeps_entries_with_probability_rate_as_jax():
    init, apply = stax.Dropout(0.75)
    x = RNG.standard_normal((200, 50))
    assert init(cr.random.key(0), x.shape) == (x.shape, ())
    y = apply((), x, rng=cr.random.key(1))
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.75)
    assert abs(kept.mean() - 0.75) < 0.02
    g = cr.grad(lambda x: cnp.sum(apply((), x, rng=cr.random.key(1))))(x)
    np.testing.assert_allclose(g, kept / 0.75)
    _, test_apply = stax.Dropout(0.75, mode="test")
    np.testing.assert_array_equal(test_apply((), x, rng=cr.random.key(1)), x)
    with pytest.raises(ValueError, match="Dropout: apply_fun needs a key"):
        apply((), x)
    # through serial, the key is split per layer, as JAX's
    _, net = stax.serial(stax.Dense(4), stax.Dropout(0.5))
    _, params = stax.serial(stax.Dense(4), stax.Dropout(0.5))[0](cr.random.key(0), (-1, 3))
    assert net(params, np.ones((2, 3)), rng=cr.random.key(2)).shape == (2, 4)


def test_shape_dependent_and_init_with_an_unknown_batch():
    def build(s):
        return s.serial(s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)), s.Relu)
    same_network(build, (3, 4))
    init, _ = stax.serial(stax.Conv(2, (3, 3), strides=(2, 2), padding="SAME"),
                          stax.MaxPool((2, 2), strides=(2, 2)), stax.Flatten, stax.Dense(5))
    shape, _ = init(cr.random.key(0), (-1, 9, 8, 1))
    assert shape == (-1, 5)


@pytest.mark.slow
def test_an_mnist_classifier_trains_as_jaxs_example():
    # JAX's examples/mnist_classifier.py, narrower, on random digits
    def network(s):
        return s.serial(s.Dense(64), s.Relu, s.Dense(64), s.Relu, s.Dense(10), s.LogSoftmax)

    def run(s, opt, lib, np_, params):
        _, predict = network(s)
        opt_init, opt_update, get_params = opt.momentum(0.1, mass=0.9)

        def loss(params, batch):
            inputs, targets = batch
            return -np_.mean(np_.sum(predict(params, inputs) * targets, axis=1))

        @lib.jit
        def update(i, opt_state, batch):
            return opt_update(i, lib.grad(loss)(get_params(opt_state), batch), opt_state)

        state, losses = opt_init(params), []
        for i, batch in enumerate(batches):
            losses.append(float(lib.jit(loss)(get_params(state), batch)))
            state = update(i, state, batch)
        return get_params(state), losses

    batches = []
    for _ in range(5):
        labels = RNG.integers(0, 10, 32)
        batches.append((RNG.standard_normal((32, 784)), np.eye(10)[labels]))
    _, j_params = jax.jit(network(jstax)[0], static_argnums=1)(jax.random.key(0), (-1, 784))
    ours, our_losses = run(stax, optimizers, cr, cnp, as_numpy(j_params))
    theirs, their_losses = run(jstax, jax_optimizers, jax, jnp, j_params)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-10)
    assert our_losses[-1] < our_losses[0]
    close_trees(ours, theirs, rtol=1e-9, atol=1e-11)
    # chainrule's own init trains too
    _, own = network(stax)[0](cr.random.key(3), (-1, 784))
    assert np.isfinite(run(stax, optimizers, cr, cnp, own)[1]).all()


@pytest.mark.slow
def test_lax_conv_general_dilated_as_jax_in_any_layout():
    from chainrule import lax
    for numbers, x_shape, w_shape in [
            (("NHWC", "HWIO", "NHWC"), (2, 7, 6, 3), (3, 2, 3, 4)),
            (None, (2, 3, 7, 6), (4, 3, 3, 2)),
            (("NCHW", "HWIO", "NHWC"), (2, 3, 7, 6), (3, 2, 3, 4))]:
        x, w = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
        for padding, strides, dilation in [("SAME", (1, 1), None), ("VALID", (2, 1), (2, 1)),
                                           ([(1, 2), (0, 1)], (2, 2), None)]:
            def run(conv, np_, x, w):
                return np_.sum(np_.sin(conv(x, w, strides, padding, rhs_dilation=dilation,
                                            dimension_numbers=numbers)))
            close_trees(cr.value_and_grad(lambda x, w: run(lax.conv_general_dilated, cnp, x, w),
                                          (0, 1))(x, w),
                        jax.jit(jax.value_and_grad(lambda x, w: run(
                            jax.lax.conv_general_dilated, jnp, x, w), (0, 1)))(x, w))
    with pytest.raises(ValueError, match="conv_general_dilated: padding 'VALID' with "
                                         "lhs_dilation"):  # (JAX refuses it too)
        lax.conv_general_dilated(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), "VALID",
                                 lhs_dilation=(2,))


def test_lax_conv_general_dilated_with_lhs_dilation_as_jax():
    """lhs_dilation (a transposed convolution: the input's entries spread apart, zeros
    between): values, gradients in both operands and a Hessian as JAX's, in two layouts,
    with strides, kernel dilation and uneven padding; under vmap and jit too."""
    from chainrule import lax
    rng = np.random.default_rng(11)
    for numbers, x_shape, w_shape, strides, padding, lhs, rhs in [
            (None, (2, 3, 5), (4, 3, 3), (1,), [(2, 2)], (2,), None),
            (None, (2, 3, 5), (4, 3, 3), (2,), [(1, 2)], (3,), (2,)),
            (("NHWC", "HWIO", "NHWC"), (1, 6, 5, 2), (3, 2, 2, 4), (1, 1),
             [(1, 1), (0, 2)], (2, 3), None),
            (None, (1, 2, 4, 5), (3, 2, 2, 2), (1, 2), [(2, 1), (0, 3)], (2, 1), (1, 2))]:
        x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)

        def run(conv, np_, x, w):
            return np_.sum(np_.sin(conv(x, w, strides, padding, lhs_dilation=lhs,
                                        rhs_dilation=rhs, dimension_numbers=numbers)))
        ours = lambda x, w: run(lax.conv_general_dilated, cnp, x, w)  # noqa: E731
        theirs = lambda x, w: run(jax.lax.conv_general_dilated, jnp, x, w)  # noqa: E731
        close_trees(cr.value_and_grad(ours, (0, 1))(x, w),
                    jax.value_and_grad(theirs, (0, 1))(x, w))
        close_trees(cr.jit(cr.grad(ours, 1))(x, w), jax.grad(theirs, 1)(x, w))
        close_trees(cr.vmap(cr.grad(ours), (0, None))(np.stack([x, 2 * x]), w),
                    jax.vmap(jax.grad(theirs), (0, None))(np.stack([x, 2 * x]), w))
    close_trees(cr.hessian(ours)(x, w), jax.hessian(theirs)(x, w))
