"""The arithmetic of the optimizers' updates, written once: momentum, running averages,
Adam's, Adamax's and RMSProp's steps, as pure functions.

Three surfaces use them, each keeping its state its own way: ``chainrule.optim``
(PyTorch's classes), ``chainrule.example_libraries.optimizers`` (JAX's triples) and
``chainrule.autograd.misc.optimizers`` (autograd's loops). The arguments are whatever
those hold: NumPy arrays, numbers, another library's arrays, traced values under the
transforms or cr.jit. So only operators and chainrule's own functions (which take all
of these) compute here, and an update stays differentiable and recordable.

Where the libraries write one formula with its terms in another order, the numbers
here are one order's (PyTorch's, for Adam); they differ from the other's in the last
bits only. Where the
formulas really differ (autograd's momentum, RMSProp's eps), a parameter chooses.

>>> from chainrule.nn.updates import momentum_buffer, adam_step
>>> momentum_buffer(1.0, 2.0, momentum=0.5)           # 0.5 * 1 + 2
2.5
>>> round(float(adam_step(0.1, 0.001, 1, lr=0.1)), 6)  # Adam's first step is ~lr long
0.1
"""

from typing import Any

from .. import rules as ops

__all__ = ["momentum_buffer", "nesterov_direction", "moving_average", "adam_step",
           "rmsprop_step", "adamax_step"]


def momentum_buffer(buffer: Any, g: Any, momentum: float, dampening: float = 0) -> Any:
    """Heavy-ball momentum's running direction: ``momentum * buffer + (1 - dampening) * g``.

    PyTorch's SGD and JAX's momentum and nesterov step along it. autograd's sgd writes
    ``v = mass * v - (1 - mass) * g`` and steps ``x + step_size * v``: that ``v`` is this
    buffer with ``dampening = mass``, negated (negation is exact, so the steps are the
    same numbers).

    >>> from chainrule.nn.updates import momentum_buffer
    >>> momentum_buffer(1.0, 2.0, momentum=0.5, dampening=0.5)   # 0.5 * 1 + 0.5 * 2
    1.5
    """
    if not dampening:  # g itself, not 1 * g: one array operation fewer
        return momentum * buffer + g
    return momentum * buffer + (1 - dampening) * g


def nesterov_direction(buffer: Any, g: Any, momentum: float) -> Any:
    """Nesterov's direction: the gradient plus the momentum buffer's next step,
    ``g + momentum * buffer``.

    >>> from chainrule.nn.updates import nesterov_direction
    >>> nesterov_direction(2.0, 1.0, momentum=0.5)
    2.0
    """
    return g + momentum * buffer


def moving_average(average: Any, value: Any, decay: float) -> Any:
    """An exponential moving average, ``decay * average + (1 - decay) * value``: Adam's
    moments (of ``g`` and of ``g * g``), RMSProp's mean square.

    >>> from chainrule.nn.updates import moving_average
    >>> moving_average(1.0, 3.0, decay=0.75)
    1.5
    """
    return decay * average + (1 - decay) * value


def adam_step(m: Any, v: Any, t: Any, lr: Any, beta1: float = 0.9, beta2: float = 0.999,
              eps: float = 1e-8) -> Any:
    """What Adam subtracts at step ``t`` (from 1) with moments ``m`` and ``v``, each
    corrected for its start at zero: ``lr * m_hat / (sqrt(v_hat) + eps)``, where
    ``m_hat = m / (1 - beta1**t)`` and ``v_hat = v / (1 - beta2**t)``.

    ``t`` and ``lr`` may be traced (cr.jit carries them as inputs).

    >>> from chainrule.nn.updates import adam_step
    >>> round(float(adam_step(0.5, 0.125, 1, lr=1.0, beta1=0.5, beta2=0.5)), 6)  # 1 / 0.5
    2.0
    """
    # The corrections fold into two numbers (PyTorch's order of the terms), so the
    # arrays see four operations rather than six.
    step_size = lr / (1 - beta1 ** t)
    denominator = ops.sqrt(v) / (1 - beta2 ** t) ** 0.5 + eps
    return step_size * (m / denominator)


def rmsprop_step(g: Any, mean_square: Any, lr: Any, eps: float = 1e-8, *,
                 eps_under_root: bool = True) -> Any:
    """What RMSProp subtracts: the gradient scaled by the root of its running mean square.

    JAX adds ``eps`` under the root, ``lr * g / sqrt(mean_square + eps)``; autograd adds
    it to the root, ``lr * g / (sqrt(mean_square) + eps)`` (``eps_under_root=False``).
    PyTorch's RMSprop and Adagrad add it to the root too (Adagrad's ``mean_square`` is
    the sum of the squares, its ``lr`` the decayed one); PyTorch's centred RMSprop passes
    the variance, ``mean_square - mean**2``.

    >>> from chainrule.nn.updates import rmsprop_step
    >>> float(rmsprop_step(2.0, 4.0, lr=0.5, eps=0.0))
    0.5
    """
    if eps_under_root:
        return lr * g / ops.sqrt(mean_square + eps)
    return lr * g / (ops.sqrt(mean_square) + eps)


def adamax_step(m: Any, u: Any, t: Any, lr: Any, beta1: float = 0.9) -> Any:
    """What Adamax subtracts at step ``t`` (from 1): the first moment ``m``, corrected for
    its start at zero, over the decayed infinity norm ``u`` of the gradients,
    ``lr / (1 - beta1**t) * (m / u)``.

    Where ``eps`` goes differs: PyTorch keeps ``u = max(beta2 * u, |g| + eps)`` and
    divides by it; JAX keeps ``u = max(beta2 * u, |g|)`` and divides by ``u + eps``
    (pass that). ``t`` and ``lr`` may be traced.

    >>> from chainrule.nn.updates import adamax_step
    >>> float(adamax_step(0.5, 2.0, 1, lr=1.0, beta1=0.5))   # (0.5 / 0.5) / 2
    0.5
    """
    return lr / (1 - beta1 ** t) * (m / u)
