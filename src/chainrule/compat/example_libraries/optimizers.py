"""Functional optimisers in the shape of ``jax.example_libraries.optimizers``: each is a
triple of pure functions,

    init, update, get_params = optimizers.adam(step_size=1e-3)
    state = init(params)                      # params: any tree of arrays or numbers
    state = update(i, grads, state)           # i: the step number, from 0
    params = get_params(state)

with JAX's update rules and step-size schedules (a number, or a function of the step),
so that a program written for JAX's port by changing its import. A state is an
``OptimizerState``: the arrays of each leaf's state, a pytree whose structure (the
parameters' tree) rides along as static data, as in JAX. It goes into and out of
``cr.jit`` as an argument and through the carry of ``cr.fori_loop``, and the update is
differentiable like any composition of chainrule's operations.

>>> from chainrule.example_libraries import optimizers
>>> init, update, get_params = optimizers.momentum(0.1, mass=0.9)
>>> state = init({"w": np.array([1.0, 2.0])})
>>> for i in range(2):
...     state = update(i, {"w": np.array([1.0, 1.0])}, state)
>>> get_params(state)["w"].tolist()                # steps of 0.1, then 0.19
[0.71, 1.71]
"""

from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any, NamedTuple

import numpy as np

from ... import rules as ops
from ...nn.updates import (adam_step, momentum_buffer, moving_average, nesterov_direction,
                          rmsprop_step)
from ...primitive import raw
from ...transforms.pytrees import register_pytree_node, tree_flatten, tree_unflatten


class OptimizerState(NamedTuple):
    """An optimiser's state: one state per leaf of the parameters, and their tree."""
    packed_state: list
    tree_def: Any


# the per-leaf states are the children; the tree is static data, not leaves to carry
register_pytree_node(OptimizerState, lambda state: ((state.packed_state,), state.tree_def),
                     lambda tree_def, children: OptimizerState(children[0], tree_def))

__all__ = ["sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam",
           "adamax", "constant", "exponential_decay", "inverse_time_decay",
           "polynomial_decay", "piecewise_constant", "make_schedule", "l2_norm", "clip_grads",
           "optimizer"]

Schedule = Callable[[int], float]
Optimizer = tuple[Callable[[Any], Any], Callable[[int, Any, Any], Any], Callable[[Any], Any]]


# ---------------------------------------------------------------------------------------
# Step-size schedules: functions of the step number i
# ---------------------------------------------------------------------------------------

def constant(step_size: float) -> Schedule:
    """The same step size at every step.

    >>> from chainrule.example_libraries import optimizers
    >>> optimizers.constant(0.1)(100)
    0.1
    """
    return lambda i: step_size


def exponential_decay(step_size: float, decay_steps: int, decay_rate: float) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps).

    >>> from chainrule.example_libraries import optimizers
    >>> optimizers.exponential_decay(1.0, 10, 0.5)(20)
    0.25
    """
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: float, decay_steps: int, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), with ``staircase`` the ratio
    rounded down.

    >>> from chainrule.example_libraries import optimizers
    >>> float(optimizers.inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
    0.5
    """
    if staircase:
        return lambda i: step_size / (1 + decay_rate * np.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: float, decay_steps: int, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps, as (1 - i/decay_steps)**power.

    >>> from chainrule.example_libraries import optimizers
    >>> float(optimizers.polynomial_decay(1.0, 10, 0.0)(5))
    0.5
    """
    def schedule(i):
        # a step count that is a number gives a Python number (float32 parameters stay
        # float32, as JAX's weak types keep them); a traced or batched one, an array
        done = min(int(i), decay_steps) if isinstance(i, Integral) else np.minimum(i, decay_steps)
        return (step_size - final_step_size) * (1 - done / decay_steps) ** power \
            + final_step_size
    return schedule


def piecewise_constant(boundaries: Sequence[int], values: Sequence[float]) -> Schedule:
    """values[k] for the steps after boundaries[k-1] up to boundaries[k] included (one
    more value than boundaries), as JAX's.

    >>> from chainrule.example_libraries import optimizers
    >>> [float(optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1])(i)) for i in (2, 3, 5)]
    [1.0, 0.5, 0.1]
    """
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if len(values) != len(boundaries) + 1:
        raise ValueError(f"piecewise_constant: expected one more value than boundaries, "
                         f"got {len(values)} values and {len(boundaries)} boundaries")
    return lambda i: values[int(np.sum(np.asarray(i) > boundaries))]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a number (constant) or a schedule (itself).

    >>> from chainrule.example_libraries import optimizers
    >>> optimizers.make_schedule(0.3)(7)
    0.3
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"make_schedule: expected a number or a function of the step, got "
                    f"{type(scalar_or_schedule).__name__}")


# ---------------------------------------------------------------------------------------
# The shape every optimiser shares: per-leaf init, update and get_params, lifted to trees
# ---------------------------------------------------------------------------------------

def optimizer(make: Callable[..., tuple[Callable, Callable, Callable]]
              ) -> Callable[..., Optimizer]:
    """Decorator: ``make(*hyperparameters)`` gives per-leaf ``(init, update, get_params)``
    (a leaf's state a tuple of arrays); the result works on whole trees, as JAX's.

    >>> from chainrule.example_libraries import optimizers
    >>> @optimizers.optimizer
    ... def halve(step_size):
    ...     return (lambda x: (x,), lambda i, g, state: (state[0] - step_size * g / 2,),
    ...             lambda state: state[0])
    >>> init, update, get_params = halve(1.0)
    >>> get_params(update(0, [2.0], init([5.0])))
    [4.0]
    """
    def tree_optimizer(*args, **kwargs):
        init, update, get_params = make(*args, **kwargs)

        def tree_init(params):
            leaves, treedef = tree_flatten(params)
            return OptimizerState([init(x) for x in leaves], treedef)

        def tree_update(i, grads, state):
            states, treedef = state
            grad_leaves, grad_def = tree_flatten(grads)
            if len(grad_leaves) != len(states):
                raise ValueError(f"{make.__name__}: the gradient tree has {len(grad_leaves)} "
                                 f"leaves, the parameters {len(states)}")
            return OptimizerState([update(i, g, s) for g, s in zip(grad_leaves, states)],
                                  treedef)

        def tree_get_params(state):
            states, treedef = state
            return tree_unflatten(treedef, [get_params(s) for s in states])
        return tree_init, tree_update, tree_get_params
    tree_optimizer.__name__ = make.__name__
    tree_optimizer.__doc__ = make.__doc__
    return tree_optimizer


def _zeros(x):
    return 0.0 * x if not isinstance(x, (int, float)) else 0.0


@optimizer
def sgd(step_size: float | Schedule) -> Optimizer:
    """Gradient descent: x - step_size(i) * g.

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.sgd(0.5)
    >>> get_params(update(0, 2.0, init(3.0)))
    2.0
    """
    step = make_schedule(step_size)
    return (lambda x: (x,), lambda i, g, state: (state[0] - step(i) * g,),
            lambda state: state[0])


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> Optimizer:
    """Heavy-ball momentum: v = mass v + g; x - step_size(i) v.

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.momentum(0.1, 0.9)
    >>> round(float(get_params(update(0, 2.0, init(1.0)))), 6)
    0.8
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = momentum_buffer(velocity, g, mass)
        return (x - step(i) * velocity, velocity)
    return (lambda x: (x, _zeros(x)), update, lambda state: state[0])


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> Optimizer:
    """Nesterov momentum: v = mass v + g; x - step_size(i) (mass v + g).

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.nesterov(0.1, 0.9)
    >>> round(float(get_params(update(0, 2.0, init(1.0)))), 6)
    0.62
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = momentum_buffer(velocity, g, mass)
        return (x - step(i) * nesterov_direction(velocity, g, mass), velocity)
    return (lambda x: (x, _zeros(x)), update, lambda state: state[0])


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """Adagrad with momentum: the step scaled by 1/sqrt(the sum of squared gradients).

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.adagrad(0.1)
    >>> round(float(get_params(update(0, 2.0, init(1.0)))), 6)
    0.99
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + g * g
        seen = np.asarray(raw(g_sq)) > 0  # (a leaf whose gradients were all 0 stays put)
        inv_sqrt = ops.where(seen, 1.0 / ops.sqrt(ops.where(seen, g_sq, 1.0)), 0.0)
        m = moving_average(m, g * inv_sqrt, momentum)
        return (x - step(i) * m, g_sq, m)
    return (lambda x: (x, _zeros(x), _zeros(x)), update, lambda state: state[0])


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> Optimizer:
    """RMSProp: the step divided by sqrt(a running mean of squared gradients + eps).

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.rmsprop(0.1)
    >>> round(float(get_params(update(0, 2.0, init(1.0)))), 6)
    0.683772
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = moving_average(avg_sq, g * g, gamma)
        return (x - rmsprop_step(g, avg_sq, step(i), eps), avg_sq)
    return (lambda x: (x, _zeros(x)), update, lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> Optimizer:
    """RMSProp with momentum on the scaled step.

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.rmsprop_momentum(0.1)
    >>> round(float(get_params(update(0, 2.0, init(1.0)))), 6)
    0.683772
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = moving_average(avg_sq, g * g, gamma)
        mom = momentum_buffer(mom, rmsprop_step(g, avg_sq, step(i), eps), momentum)
        return (x - mom, avg_sq, mom)
    return (lambda x: (x, _zeros(x), _zeros(x)), update, lambda state: state[0])


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Optimizer:
    """Adam, with the bias corrections of step i + 1.

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.adam(0.1)
    >>> round(float(get_params(update(0, 5.0, init(1.0)))), 6)    # a first step of 0.1
    0.9
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = moving_average(m, g, b1)
        v = moving_average(v, g * g, b2)
        return (x - adam_step(m, v, i + 1, step(i), b1, b2, eps), m, v)
    return (lambda x: (x, _zeros(x), _zeros(x)), update, lambda state: state[0])


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> Optimizer:
    """Adamax: Adam with the infinity norm of the gradients.

    >>> from chainrule.example_libraries import optimizers
    >>> init, update, get_params = optimizers.adamax(0.1)
    >>> round(float(get_params(update(0, 2.0, init(1.0)))), 6)
    0.9
    """
    step = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = moving_average(m, g, b1)
        u = ops.maximum(b2 * u, ops.absolute(g))
        return (x - (step(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u)
    return (lambda x: (x, _zeros(x), _zeros(x)), update, lambda state: state[0])


# ---------------------------------------------------------------------------------------
# Tree helpers of JAX's module
# ---------------------------------------------------------------------------------------

def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the leaves of a tree together.

    >>> from chainrule.example_libraries import optimizers
    >>> float(optimizers.l2_norm({"a": np.array([3.0]), "b": 4.0}))
    5.0
    """
    leaves = tree_flatten(tree)[0]
    return ops.sqrt(sum(ops.sum(x * x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """The gradients scaled down so that their l2 norm is at most ``max_norm``.

    >>> from chainrule.example_libraries import optimizers
    >>> optimizers.clip_grads([np.array([3.0, 4.0])], 1.0)[0].round(12).tolist()
    [0.6, 0.8]
    """
    norm = l2_norm(grad_tree)
    factor = ops.where(np.asarray(raw(norm)) < max_norm, 1.0,
                       max_norm / ops.maximum(norm, max_norm))
    leaves, treedef = tree_flatten(grad_tree)
    return tree_unflatten(treedef, [g * factor for g in leaves])
