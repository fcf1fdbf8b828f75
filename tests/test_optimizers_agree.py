"""The three optimizer surfaces compute with one arithmetic (chainrule.nn.updates):
PyTorch's classes (chainrule.optim), JAX's triples (chainrule.example_libraries.
optimizers) and autograd's loops (chainrule.autograd.misc.optimizers) follow the same
path on a small quadratic wherever their formulas coincide, to the last bit (one
arithmetic, in one order); where they differ (the momentum's first step, RMSProp's
eps), the difference is the documented one.

And the optimizers' module paths: each public name is reachable where it always was.
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd.misc import optimizers as autograd_optimizers
from chainrule.example_libraries import optimizers as jax_optimizers
from chainrule.nn import updates

STEPS = 25
CURVATURE = np.array([1.0, 3.0, 0.2, 8.0])
CENTRE = np.array([0.5, -1.0, 2.0, 0.25])
START = np.array([1.5, 1.0, -0.5, -2.0])


def gradient(x):
    """The gradient of sum(CURVATURE * (x - CENTRE) ** 2) / 2."""
    return CURVATURE * (x - CENTRE)


def torch_style_path(make_optimizer):
    """The parameters after each of STEPS steps of a chainrule.optim optimizer."""
    w = cr.tensor(START.copy(), requires_grad=True)
    opt = make_optimizer([w])
    path = []
    for _ in range(STEPS):
        w.grad = gradient(w.data)
        opt.step()
        path.append(w.data.copy())
    return np.array(path)


def jax_style_path(optimizer):
    init, update, get_params = optimizer
    state, path = init(START.copy()), []
    for i in range(STEPS):
        state = update(i, gradient(get_params(state)), state)
        path.append(np.asarray(get_params(state)))
    return np.array(path)


def autograd_style_path(run, **kwargs):
    """autograd's loop calls back with the parameters before each step: the path is
    those after the first, then the result."""
    seen = []
    final = run(lambda x, i: gradient(x), START.copy(), num_iters=STEPS,
                callback=lambda x, i, g: seen.append(x.copy()), **kwargs)
    return np.array(seen[1:] + [final])


def test_adam_takes_one_path_in_all_three():
    ours = torch_style_path(lambda p: cr.optim.Adam(p, lr=0.1, betas=(0.8, 0.9), eps=1e-6))
    jax = jax_style_path(jax_optimizers.adam(0.1, b1=0.8, b2=0.9, eps=1e-6))
    autograd = autograd_style_path(autograd_optimizers.adam, step_size=0.1, b1=0.8,
                                   b2=0.9, eps=1e-6)
    np.testing.assert_array_equal(jax, ours)
    np.testing.assert_array_equal(autograd, ours)
    assert np.abs(ours[-1] - CENTRE).max() < np.abs(START - CENTRE).max() / 2  # it moved


@pytest.mark.parametrize("nesterov", [False, True])
def test_heavy_ball_and_nesterov_momentum_take_one_path_in_torch_and_jax(nesterov):
    """PyTorch starts the buffer at the first gradient, JAX at zero and adds the first
    gradient: the same buffer."""
    ours = torch_style_path(lambda p: cr.optim.SGD(p, lr=0.05, momentum=0.7,
                                                   nesterov=nesterov))
    make = jax_optimizers.nesterov if nesterov else jax_optimizers.momentum
    np.testing.assert_array_equal(jax_style_path(make(0.05, 0.7)), ours)


def test_autograds_momentum_is_dampened_from_its_first_step_and_pytorchs_is_not():
    """autograd's v = mass v - (1 - mass) g is PyTorch's buffer with dampening = mass,
    negated, but started at zero: its first step is (1 - mass) times PyTorch's."""
    mass, lr = 0.6, 0.05
    autograd = autograd_style_path(autograd_optimizers.sgd, step_size=lr, mass=mass)
    np.testing.assert_allclose(autograd[0], START - lr * (1 - mass) * gradient(START),
                               rtol=1e-15)
    ours = torch_style_path(lambda p: cr.optim.SGD(p, lr=lr, momentum=mass,
                                                   dampening=mass))
    np.testing.assert_allclose(ours[0], START - lr * gradient(START), rtol=1e-15)


def test_rmsprop_adds_eps_under_the_root_in_jax_and_to_the_root_in_autograd():
    g, mean_square = np.array([2.0]), np.array([4e-8])
    under = updates.rmsprop_step(g, mean_square, lr=1.0, eps=1e-8)
    beside = updates.rmsprop_step(g, mean_square, lr=1.0, eps=1e-8, eps_under_root=False)
    np.testing.assert_allclose(under, 2.0 / np.sqrt(5e-8), rtol=1e-15)
    np.testing.assert_allclose(beside, 2.0 / (np.sqrt(4e-8) + 1e-8), rtol=1e-15)


def test_the_update_arithmetic_is_differentiable():
    """JAX's triples run under the transforms: the arithmetic they share uses only
    operators and chainrule's functions. d/dg of Adam's first step: m_hat = g and
    v_hat = g**2, so the step is lr * g / (|g| + eps), of derivative lr * eps / (|g| + eps)**2."""
    def first_step(g):
        m = updates.moving_average(0.0, g, 0.9)
        v = updates.moving_average(0.0, g * g, 0.999)
        return updates.adam_step(m, v, 1, 0.1, 0.9, 0.999, eps=0.5)
    np.testing.assert_allclose(cr.grad(first_step)(1.5), 0.1 * 0.5 / 2.0 ** 2, rtol=1e-12)


@pytest.mark.parametrize("name", ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad",
                                  "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS",
                                  "LRScheduler", "StepLR", "CosineAnnealingLR", "LinearLR",
                                  "LinearWarmup", "LambdaLR"])
def test_every_optimizer_and_schedule_is_where_it_always_was(name):
    import chainrule.nn.optim
    import chainrule.optim
    assert getattr(chainrule.optim, name) is getattr(chainrule.nn.optim, name)
    assert getattr(cr.optim, name) is getattr(chainrule.nn.optim, name)
    assert name in chainrule.nn.optim.__all__


def test_the_schedules_are_where_torch_keeps_them_too():
    """A PyTorch program's ``from torch.optim.lr_scheduler import StepLR`` ports by
    changing ``torch`` to ``chainrule``; the module is one object under both paths."""
    import chainrule.nn.optim.lr_scheduler
    import chainrule.optim.lr_scheduler
    from chainrule.optim.lr_scheduler import StepLR
    assert chainrule.optim.lr_scheduler is chainrule.nn.optim.lr_scheduler
    assert cr.optim.lr_scheduler is chainrule.nn.optim.lr_scheduler
    assert StepLR is cr.optim.StepLR
    assert set(chainrule.optim.lr_scheduler.__all__) <= set(cr.optim.__all__)


def test_the_schedules_and_the_optimizers_check_with_one_set_of_helpers():
    """A bad hyperparameter gives the same kind of message in either."""
    from chainrule.nn.hyperparameters import require_nonnegative
    with pytest.raises(ValueError, match=r"^SGD: momentum must be >= 0, got -1$"):
        cr.optim.SGD([cr.Value(0.0)], lr=0.1, momentum=-1)
    with pytest.raises(ValueError, match=r"^StepLR: gamma must be >= 0, got -1$"):
        cr.optim.StepLR(cr.optim.SGD([cr.Value(0.0)], lr=0.1), step_size=1, gamma=-1)
    with pytest.raises(ValueError, match=r"^owner: name must be >= 0, got nan$"):
        require_nonnegative("owner", "name", float("nan"))
