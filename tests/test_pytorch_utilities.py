"""PyTorch's small utilities a training loop calls, each against torch itself:
``nn.utils``'s gradient clipping and flat parameter vectors, ``Module.requires_grad_``
(freezing), and the in-place updates written under ``no_grad()`` (``clamp_``,
``lerp_``, ``addcmul_``, ``addcdiv_``), which follow a Tensor's rule for writes.
"""

import math

import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(4711)
NORM_TYPES = [2.0, 1.0, 3.5, "inf", math.inf, 0.0, -math.inf]


def _grads_of_a_cubic(dtype, shapes=((3, 4), (4,), (2,))):
    """Parameters of ``shapes`` in both libraries, the last without a gradient (it
    takes no part in the loss), after backward of sum(p ** 3)."""
    arrays = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    sum((p ** 3).sum() for p in ours[:-1]).backward()
    sum((p ** 3).sum() for p in theirs[:-1]).backward()
    return ours, theirs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("max_norm", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("norm_type", NORM_TYPES, ids=str)
def test_clip_grad_norm_gives_torchs_norm_and_gradients(norm_type, max_norm, dtype):
    """The total norm returned and every clipped gradient, in the gradients' dtype; a
    parameter without a gradient keeps none."""
    ours, theirs = _grads_of_a_cubic(dtype)
    total = cr.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    rtol = 1e-12 if dtype == np.float64 else 2e-6
    assert isinstance(total, cr.Tensor) and total.dtype == dtype
    np.testing.assert_allclose(float(total), float(expected), rtol=rtol)
    for p, q in zip(ours, theirs):
        if q.grad is None:
            assert p.grad is None
            continue
        assert p.grad.dtype == dtype
        np.testing.assert_allclose(p.grad, q.grad.numpy(), rtol=rtol, atol=rtol * 1e-3)


@pytest.mark.parametrize("clip_value", [0.05, 1.0, 10.0])
def test_clip_grad_value_gives_torchs_gradients(clip_value):
    ours, theirs = _grads_of_a_cubic(np.float64)
    cr.nn.utils.clip_grad_value_(ours, clip_value)
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, q in zip(ours, theirs):
        assert (p.grad is None) == (q.grad is None)
        if q.grad is not None:
            np.testing.assert_array_equal(p.grad, q.grad.numpy())


def test_an_infinite_norm_makes_nan_gradients_or_raises_when_asked():
    """As torch: scaled by the infinite norm (an inf entry times 0 is NaN), or a
    one-line RuntimeError with ``error_if_nonfinite=True``."""
    w, t = cr.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0],
                                                                   requires_grad=True)
    w.grad, t.grad = np.array([np.inf, 1.0]), torch.tensor([np.inf, 1.0])
    with pytest.raises(RuntimeError, match=r"^clip_grad_norm_: the total norm of order 2\.0 "
                                           r"of the gradients is inf, which cannot be "):
        cr.nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)
    assert float(cr.nn.utils.clip_grad_norm_([w], 1.0)) == math.inf
    torch.nn.utils.clip_grad_norm_([t], 1.0)
    np.testing.assert_array_equal(w.grad, t.grad.numpy())     # [nan, 0.]


def test_clipping_scalar_values_gives_floats():
    """micrograd's Values: the norm is a float and each ``.grad`` stays a float."""
    v = [cr.Value(2.0), cr.Value(-3.0)]
    (v[0] * v[0] + v[1] * v[1]).backward()                      # gradients 4, -6
    total = cr.nn.utils.clip_grad_norm_(v, 1.0)
    assert type(total) is float and total == pytest.approx(math.sqrt(52), rel=1e-15)
    assert all(type(x.grad) is float for x in v)
    assert math.hypot(v[0].grad, v[1].grad) == pytest.approx(1.0, rel=1e-6)
    cr.nn.utils.clip_grad_value_(v, 0.5)
    assert [x.grad for x in v] == [0.5, -0.5]


def test_a_jitted_step_clips_as_the_eager_one():
    """The norm is computed with the arrays' own operations (never read as a float), so
    cr.jit records the clipping: three jitted steps give the eager steps' numbers."""
    def run(jit):
        model = cr.nn.Linear(3, 1, rng=0)
        opt = cr.optim.SGD(model.parameters(), lr=0.1)
        x, y = np.random.default_rng(0).normal(size=(8, 3)), np.ones((8, 1))

        def step(x, y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            norm = cr.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            cr.nn.utils.clip_grad_value_(model.parameters(), 0.01)
            opt.step()
            return loss, norm
        step = cr.jit(step) if jit else step
        norms = [float(step(x, y)[1]) for _ in range(3)]
        return norms, model.weight.data.copy()
    (eager_norms, eager_w), (jit_norms, jit_w) = run(False), run(True)
    assert jit_norms == eager_norms
    np.testing.assert_array_equal(jit_w, eager_w)


@pytest.mark.parametrize("call, message", [
    (lambda: cr.nn.utils.clip_grad_norm_([np.ones(2)], 1.0),
     "clip_grad_norm_: expected Tensors or Values (a model's parameters()), got ndarray"),
    (lambda: cr.nn.utils.clip_grad_norm_([], 1.0, norm_type="two"),
     "clip_grad_norm_: norm_type must be a number or 'inf', got 'two'"),
    (lambda: cr.nn.utils.clip_grad_value_([], "1"),
     "clip_grad_value_: clip_value must be a number, got '1'"),
    (lambda: cr.nn.utils.vector_to_parameters(np.ones(3), []),
     "vector_to_parameters: expected a Tensor, got ndarray"),
    (lambda: cr.nn.utils.vector_to_parameters(cr.ones(7), cr.nn.Linear(3, 2, rng=0)
                                              .parameters()),
     "vector_to_parameters: a vector of shape (7,) for parameters of 8 entries; "
     "expected (8,)"),
])
def test_bad_arguments_are_refused_in_one_line(call, message):
    with pytest.raises((TypeError, ValueError)) as refused:
        call()
    assert str(refused.value) == message


def test_parameters_to_vector_and_back_as_torch():
    """The vector is torch's (order and values), differentiable back to each parameter;
    writing a vector back gives torch's parameters."""
    ours = cr.nn.Linear(3, 2, rng=0)
    theirs = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.data))
        theirs.bias.copy_(torch.from_numpy(ours.bias.data))
    vec = cr.nn.utils.parameters_to_vector(ours.parameters())
    expected = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(vec.data, expected.detach().numpy())
    (vec ** 2).sum().backward()
    np.testing.assert_array_equal(ours.weight.grad, 2 * ours.weight.data)
    new = RNG.standard_normal(8)
    cr.nn.utils.vector_to_parameters(cr.tensor(new), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new), theirs.parameters())
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_array_equal(p.data, q.detach().numpy())


# --- freezing -----------------------------------------------------------------------

def test_requires_grad_false_freezes_a_layer_as_torch():
    """A frozen first layer gets no gradient and no update; the head trains as in
    torch; the call returns the module."""
    x = RNG.standard_normal((5, 3))
    ours = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=0), cr.nn.Tanh(), cr.nn.Linear(4, 1, rng=1))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                 torch.nn.Linear(4, 1)).double()
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in ours.torch_state_dict().items()})
    assert ours[0].requires_grad_(False) is ours[0]
    theirs[0].requires_grad_(False)
    frozen = ours[0].weight.data.copy()
    opt, t_opt = (cr.optim.SGD(ours.parameters(), lr=0.1),
                  torch.optim.SGD(theirs.parameters(), lr=0.1))
    for _ in range(3):
        opt.zero_grad()
        t_opt.zero_grad()
        (ours(x) ** 2).mean().backward()
        (theirs(torch.from_numpy(x)) ** 2).mean().backward()
        opt.step()
        t_opt.step()
    assert ours[0].weight.grad is None and not ours[0].weight.requires_grad
    np.testing.assert_array_equal(ours[0].weight.data, frozen)
    np.testing.assert_allclose(ours[2].weight.data, theirs[2].weight.detach().numpy(),
                               rtol=1e-12)
    ours.requires_grad_()
    assert all(p.requires_grad for p in ours.parameters())


def test_requires_grad_on_a_model_of_values_is_refused_naming_the_parameter():
    with pytest.raises(TypeError, match=r"^requires_grad_: layers\.0\.neurons\.0\.w\.0 is a "
                                        r"scalar Value, which always records"):
        cr.nn.MLP(2, [2, 1], rng=0).requires_grad_(False)


# --- in-place updates -----------------------------------------------------------------

@pytest.mark.parametrize("low, high", [(0.0, 1.0), (None, 0.2), (-0.1, None), (1.0, -1.0)])
def test_clamp_is_torchs_clamp(low, high):
    """With min > max every entry becomes max; NaN stays NaN; ``clip_`` is the same."""
    x = np.append(RNG.standard_normal(6), np.nan)
    expected = torch.tensor(x).clamp_(low, high).numpy()
    np.testing.assert_array_equal(cr.tensor(x).clamp_(low, high).data, expected)
    np.testing.assert_array_equal(cr.tensor(x).clip_(low, high).data, expected)


@pytest.mark.parametrize("weight", [0.0, 0.1, 0.5, 0.7, 1.0, -0.3, "tensor"])
def test_lerp_is_torchs_lerp(weight):
    """torch computes ``start + w (end - start)`` below 0.5 and ``end - (end - start)
    (1 - w)`` from 0.5, each with one fused multiply-add, which NumPy does not have: the
    two agree to a unit in the last place, and weight 1 gives ``end`` exactly."""
    x, e = RNG.standard_normal((2, 6))
    w = RNG.uniform(-0.2, 1.2, 6) if weight == "tensor" else weight
    ours = cr.tensor(x).lerp_(cr.tensor(e), cr.tensor(w) if weight == "tensor" else w)
    theirs = torch.tensor(x).lerp_(torch.tensor(e), torch.tensor(w) if weight == "tensor"
                                   else w)
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=4e-16, atol=4e-16)
    if weight == 1.0:
        np.testing.assert_array_equal(ours.data, e)


def test_an_ema_of_weights_by_lerp_keeps_float32():
    ema = cr.tensor(RNG.standard_normal(4).astype(np.float32))
    ema.lerp_(cr.tensor(np.ones(4)), 0.01)
    assert ema.dtype == np.float32


@pytest.mark.parametrize("name", ["addcmul_", "addcdiv_"])
@pytest.mark.parametrize("value", [1, 0.3, -2.5])
def test_addcmul_and_addcdiv_are_torchs(name, value):
    x, a = RNG.standard_normal((2, 5))
    b = RNG.uniform(0.5, 2.0, 5)
    ours = getattr(cr.tensor(x), name)(cr.tensor(a), cr.tensor(b), value=value)
    theirs = getattr(torch.tensor(x), name)(torch.tensor(a), torch.tensor(b), value=value)
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("update", [
    lambda w, q: w.clamp_(0.0, q),
    lambda w, q: w.lerp_(q * 2, 0.1),
    lambda w, q: w.addcmul_(q, q),
    lambda w, q: w.addcdiv_(q, q + 1),
], ids=["clamp_", "lerp_", "addcmul_", "addcdiv_"])
def test_a_written_value_that_carries_a_derivative_is_refused(update):
    """Writing numbers that carry a derivative into a tensor that records nothing
    would lose it: refused in one line, as any in-place write (inside ``no_grad()``
    nothing is carried and the write goes through)."""
    q = cr.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="carries a derivative") as refused:
        update(cr.zeros(3), q)
    assert "\n" not in str(refused.value)
    with cr.no_grad():
        update(cr.zeros(3), q)


@pytest.mark.parametrize("update", [lambda w: w.clamp_(0.0, 1.0), lambda w: w.lerp_(1.0, 0.5),
                                    lambda w: w.addcmul_(w.detach(), w.detach())],
                         ids=["clamp_", "lerp_", "addcmul_"])
def test_an_in_place_update_of_a_parameter_outside_no_grad_is_refused(update):
    w = cr.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place operations on a tensor that requires "
                                           "grad would make its gradient wrong"):
        update(w)
    with cr.no_grad():
        update(w)


def test_clamp_without_bounds_is_refused():
    with pytest.raises(ValueError, match=r"^x\.clamp_\(min, max\): at least one of min and "
                                         r"max must be given$"):
        cr.ones(2).clamp_()
