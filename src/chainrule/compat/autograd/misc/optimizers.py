"""autograd.misc.optimizers: gradient descent with momentum, RMSProp and Adam on any
tree of parameters, with autograd's signature::

    x = adam(gradient, x0, callback=None, num_iters=100, step_size=0.001, ...)

``gradient(x, i)`` is the gradient at the parameters ``x`` (a tree, as ``x0``) in
iteration ``i``; ``callback(x, i, g)``, if given, is called before each update. The
tree is flattened to one vector for the update and rebuilt for each call.
"""

import numpy as np

from ....nn.updates import adam_step, momentum_buffer, moving_average, rmsprop_step
from ....transforms.pytrees import ravel_pytree

__all__ = ["sgd", "rmsprop", "adam"]


def _on_vectors(update):
    """An update written on flat vectors, run on any tree of parameters."""
    def optimizer(grad, x0, callback=None, *args, **kwargs):
        x, unflatten = ravel_pytree(x0)

        def flat_grad(x, i):
            return ravel_pytree(grad(unflatten(x), i))[0]

        def flat_callback(x, i, g):
            return callback(unflatten(x), i, unflatten(g))
        return unflatten(update(flat_grad, x, callback and flat_callback, *args, **kwargs))
    optimizer.__name__, optimizer.__doc__ = update.__name__, update.__doc__
    return optimizer


@_on_vectors
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Gradient descent with momentum: v = mass v - (1 - mass) g; x = x + step_size v.

    >>> from chainrule.autograd.misc.optimizers import sgd
    >>> sgd(lambda x, i: 2 * x, np.array([1.0]), num_iters=200)   # minimise x**2
    array([...])
    """
    # autograd's v = mass v - (1 - mass) g with x + step_size v is PyTorch's momentum
    # buffer with dampening = mass, negated: the same numbers, since negation is exact
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = momentum_buffer(velocity, g, mass, dampening=mass)
        x = x - step_size * velocity
    return x


@_on_vectors
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """RMSProp: a step divided by the root of a running mean of squared gradients."""
    mean_square = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        mean_square = moving_average(mean_square, g * g, gamma)
        x = x - rmsprop_step(g, mean_square, step_size, eps, eps_under_root=False)
    return x


@_on_vectors
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999,
         eps=10**-8):
    """Adam: steps from bias-corrected running means of the gradient and its square."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = moving_average(m, g, b1)
        v = moving_average(v, g * g, b2)
        x = x - adam_step(m, v, i + 1, step_size, b1, b2, eps)
    return x
