"""Where autograd's examples, run through chainrule.autograd, print numbers that drift
from autograd's own, the cause is rounding or a solver's tolerance, not a derivative.

- A training run (autograd's examples/bayesian_neural_net.py, made small here): the first
  gradient agrees with autograd's to 1e-12; the two runs then differ, growing with the
  iterations, by as much as autograd differs from itself when its initial parameters are
  multiplied by (1 + 1e-15). A derivative wrong by more than rounding would show in the
  first gradient, and would set chainrule's run apart from both of autograd's.
- examples/fixed_points.py: the value and the first derivative are autograd's to the last
  bit; the second derivative, a fixed point of its own iterated to the example's
  ``tol=1e-4``, differs by an amount that shrinks with ``tol`` as each library's error
  from the exact value does.
"""

import numpy as np
import pytest

autograd = pytest.importorskip("autograd", reason="HIPS autograd is not installed")

import autograd.numpy as anp  # noqa: E402
import autograd.numpy.random as anpr  # noqa: E402
from autograd import grad as agrad  # noqa: E402
from autograd.misc.fixed_points import fixed_point as afixed_point  # noqa: E402
from autograd.misc.optimizers import adam as aadam  # noqa: E402

import chainrule.autograd.numpy as cnp  # noqa: E402
import chainrule.autograd.numpy.random as cnpr  # noqa: E402
from chainrule.autograd import grad as cgrad  # noqa: E402
from chainrule.autograd.misc.fixed_points import fixed_point as cfixed_point  # noqa: E402
from chainrule.autograd.misc.optimizers import adam as cadam  # noqa: E402

AUTOGRAD = (anp, anpr, agrad, aadam)
CHAINRULE = (cnp, cnpr, cgrad, cadam)


def bayesian_neural_net(lib, iterations, scale=1.0):
    """examples/bayesian_neural_net.py with a smaller net (layers [1, 10, 10, 1]) and 10
    samples per step, its plotting left out: the variational parameters after each
    of ``iterations`` steps of adam, and the first gradient. ``scale`` multiplies the
    initial parameters."""
    np_, npr, grad, adam = lib
    shapes = [(1, 10), (10, 10), (10, 1)]
    num_weights = sum((m + 1) * n for m, n in shapes)

    def predictions(weights, inputs):
        inputs = np_.expand_dims(inputs, 0)
        for m, n in shapes:
            w = weights[:, : m * n].reshape((len(weights), m, n))
            b = weights[:, m * n: m * n + n].reshape((len(weights), 1, n))
            weights = weights[:, (m + 1) * n:]
            outputs = np_.einsum("mnd,mdo->mno", inputs, w) + b
            inputs = np_.exp(-(outputs**2))
        return outputs

    rs = npr.RandomState(0)
    x = np_.concatenate([np_.linspace(0, 2, num=20), np_.linspace(6, 8, num=20)])
    targets = (np_.cos(x) + rs.randn(40) * 0.1).reshape((40, 1))
    inputs = ((x - 4.0) / 4.0).reshape((40, 1))

    def logprob(weights):
        log_prior = -0.1 * np_.sum(weights**2, axis=1)
        preds = predictions(weights, inputs)
        return log_prior - np_.sum((preds - targets) ** 2, axis=1)[:, 0] / 0.01

    samples_rs = npr.RandomState(0)

    def objective(params, t):
        mean, log_std = params[:num_weights], params[num_weights:]
        samples = samples_rs.randn(10, num_weights) * np_.exp(log_std) + mean
        entropy = 0.5 * num_weights * (1.0 + np_.log(2 * np_.pi)) + np_.sum(log_std)
        return -(entropy + np_.mean(logprob(samples)))

    init_rs = npr.RandomState(0)
    init = np_.concatenate([init_rs.randn(num_weights), -5 * np_.ones(num_weights)]) * scale
    path, gradients = [], []
    gradient = grad(objective)

    def recorded(params, t):
        g = gradient(params, t)
        if not gradients:
            gradients.append(np.array(g))
        return g

    adam(recorded, init, step_size=0.1, num_iters=iterations,
         callback=lambda params, t, g: path.append(np.array(params)))
    return np.array(path), gradients[0]


def relative(a, b):
    return np.linalg.norm(a - b, axis=-1) / np.linalg.norm(a, axis=-1)


def test_bayesian_neural_net_drift_is_rounding():
    iterations = 300
    ag, ag_first = bayesian_neural_net(AUTOGRAD, iterations)
    cr, cr_first = bayesian_neural_net(CHAINRULE, iterations)
    perturbed, _ = bayesian_neural_net(AUTOGRAD, iterations, scale=1.0 + 1e-15)

    # (a) the first gradient, at the same point, is autograd's
    assert relative(ag_first, cr_first) < 1e-12

    # (b) the runs part as autograd parts from itself after a rounding-sized change
    to_chainrule, to_itself = relative(ag, cr), relative(ag, perturbed)
    assert to_chainrule[0] < 1e-13
    # both grow by the same factor (about 1e4 from step 150 to step 300; measured, 7e3
    # and 9e3) to the same order (1e-8 and 2e-7 at step 300: chainrule's rounding starts
    # smaller than the 1e-15 change)
    growth = to_chainrule[-1] / to_chainrule[149]
    growth_itself = to_itself[-1] / to_itself[149]
    assert 1e2 < growth_itself and growth_itself / 10 < growth < growth_itself * 10
    assert to_itself[-1] / 100 < to_chainrule[-1] < to_itself[-1] * 10


def sqrt_by_fixed_point(np_, fixed_point, tol):
    # examples/fixed_points.py: sqrt(a) as the fixed point of x - 0.05 (x^2 - a)
    step = lambda a: lambda x: x - 0.05 * (x**2 - a)
    return lambda a: fixed_point(step, a, 10.0, lambda x, y: np_.abs(x - y), tol)


@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_fixed_points_differ_within_tolerance(tol):
    fa = sqrt_by_fixed_point(anp, afixed_point, tol)
    fc = sqrt_by_fixed_point(cnp, cfixed_point, tol)
    # the value and the first derivative: the same iterations, the same numbers
    assert fc(2.0) == fa(2.0)
    assert cgrad(fc)(2.0) == agrad(fa)(2.0)
    # the second derivative: both within about 100 tol of the exact value
    # (-1/4 2^-3/2 = -0.0884), and of each other, by as much as tol shrinks
    exact = -0.25 * 2.0**-1.5
    second_a, second_c = agrad(agrad(fa))(2.0), cgrad(cgrad(fc))(2.0)
    assert abs(second_a - exact) < 100 * tol * abs(exact)
    assert abs(second_c - exact) < 100 * tol * abs(exact)
    assert abs(second_c - second_a) < 20 * tol * abs(exact)
