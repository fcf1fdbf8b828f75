"""chainrule.example_libraries.optimizers against jax.example_libraries.optimizers
(float64): the same parameters after the same gradients, for every optimiser and
schedule, on a tree of parameters; and the update under cr.jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as theirs

import chainrule as cr
from chainrule.example_libraries import optimizers as ours
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(21)
PARAMS = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2), "s": 0.5}
GRADS = [{"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2) * (i % 2),
          "s": float(RNG.standard_normal())} for i in range(6)]

MAKERS = [
    ("sgd", lambda m: m.sgd(0.1)),
    ("sgd(schedule)", lambda m: m.sgd(m.exponential_decay(0.1, 2, 0.5))),
    ("momentum", lambda m: m.momentum(0.05, 0.9)),
    ("nesterov", lambda m: m.nesterov(0.05, 0.8)),
    ("adagrad", lambda m: m.adagrad(0.1, momentum=0.7)),
    ("rmsprop", lambda m: m.rmsprop(0.01, gamma=0.8)),
    ("rmsprop_momentum", lambda m: m.rmsprop_momentum(0.01)),
    ("adam", lambda m: m.adam(m.inverse_time_decay(0.1, 2, 0.3))),
    ("adamax", lambda m: m.adamax(m.polynomial_decay(0.1, 4, 0.01, 2.0))),
    ("adam(piecewise)", lambda m: m.adam(m.piecewise_constant([2, 4], [0.1, 0.05, 0.01]))),
]


@pytest.mark.parametrize("name, make", MAKERS, ids=[m[0] for m in MAKERS])
def test_an_optimiser_follows_jaxs_step_by_step(name, make):
    init, update, get_params = make(ours)
    j_init, j_update, j_get_params = make(theirs)
    state, j_state = init(PARAMS), j_init(jax.tree_util.tree_map(jnp.asarray, PARAMS))
    for i, grads in enumerate(GRADS):
        state = update(i, grads, state)
        j_state = j_update(i, jax.tree_util.tree_map(jnp.asarray, grads), j_state)
        for key in PARAMS:
            np.testing.assert_allclose(get_params(state)[key], j_get_params(j_state)[key],
                                       rtol=1e-12, atol=1e-15, err_msg=f"{name}, step {i}")


def test_the_tree_helpers_match_jaxs():
    np.testing.assert_allclose(ours.l2_norm(GRADS[0]), theirs.l2_norm(GRADS[0]), rtol=1e-14)
    for max_norm in (0.5, 100.0):
        clipped, j_clipped = ours.clip_grads(GRADS[0], max_norm), theirs.clip_grads(
            GRADS[0], max_norm)
        for key in GRADS[0]:
            np.testing.assert_allclose(clipped[key], j_clipped[key], rtol=1e-14)


def test_a_training_loop_under_jit_gives_the_eager_parameters():
    init, update, get_params = ours.adam(0.05)
    x, y = RNG.standard_normal((20, 3)), RNG.standard_normal(20)
    loss = lambda p: cr.mean((x @ p["w"] + p["b"] - y) ** 2)

    def step(i, state):
        return update(i, cr.grad(loss)(get_params(state)), state)
    jitted = cr.jit(step)
    eager = jit_state = init({"w": np.zeros(3), "b": 0.0})
    for i in range(5):
        eager, jit_state = step(i, eager), jitted(i, jit_state)
    np.testing.assert_allclose(get_params(jit_state)["w"], get_params(eager)["w"], rtol=1e-12)
    assert loss(get_params(eager)) < loss({"w": np.zeros(3), "b": 0.0})


def test_errors_name_the_optimiser():
    init, update, _ = ours.adam(0.1)
    with pytest.raises(ValueError, match="adam: the gradient tree has 1 leaves, the "
                                         "parameters 2"):
        update(0, [1.0], init([1.0, 2.0]))
    with pytest.raises(ValueError, match="piecewise_constant: expected one more value"):
        ours.piecewise_constant([1, 2], [0.1])
