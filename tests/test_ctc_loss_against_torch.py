"""F.ctc_loss and nn.CTCLoss against torch 2.13 in float64: the losses over a grid of
target layouts (padded rows, concatenated, one example), repeated labels, another blank,
empty targets and inputs shorter than the longest, in every reduction; the gradient in
the logits through a log_softmax; what differs for a leaf of log-probabilities (torch
adds exp(log_probs), which a log_softmax cancels); impossible alignments (infinite loss,
NaN gradient, or 0 with zero_infinity); second order against central differences;
forward mode against reverse; cr.jit and cr.vmap; float32; and the refusals."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261202)
TOL = 1e-11


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def problem(T=8, N=4, C=5, S=4, blank=0, repeats=True):
    """Logits (T, N, C), padded targets (N, S) of other classes than ``blank``, and
    lengths: inputs from T down, targets from S down (one empty), all alignable."""
    logits = RNG.normal(size=(T, N, C))
    labels = [c for c in range(C) if c != blank]
    targets = RNG.choice(labels, size=(N, S))
    if repeats:
        targets[0, 1] = targets[0, 0]        # a repeat needs a blank between
    input_lengths = np.array([T - i % 3 for i in range(N)])
    target_lengths = np.array([S - i % (S + 1) for i in range(N)])
    return logits, targets, input_lengths, target_lengths


def both(logits, targets, input_lengths, target_lengths, **options):
    """torch's and chainrule's loss of log_softmax(logits), and their gradients in the
    logits of loss**2 summed."""
    x = torch.tensor(logits, requires_grad=True)
    theirs = TF.ctc_loss(x.log_softmax(-1), torch.tensor(targets),
                         torch.tensor(input_lengths), torch.tensor(target_lengths),
                         **options)
    (theirs ** 2).sum().backward()

    def loss(z):
        return F.ctc_loss(cr.log_softmax(z, axis=-1), targets, input_lengths,
                          target_lengths, **options)
    ours = loss(logits)
    grad = cr.grad(lambda z: cr.sum(loss(z) ** 2))(logits)
    return (ours, grad), (theirs, x.grad)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("blank", [0, 4])
def test_losses_and_logit_gradients_are_torchs(reduction, layout, blank):
    logits, targets, input_lengths, target_lengths = problem(blank=blank)
    if layout == "concatenated":
        targets = np.concatenate([row[:n] for row, n in zip(targets, target_lengths)])
    (ours, grad), (theirs, tgrad) = both(logits, targets, input_lengths, target_lengths,
                                         reduction=reduction, blank=blank)
    close(ours, theirs)
    close(grad, tgrad)


def test_one_example_without_a_batch_axis_is_torchs():
    logits, targets, _, _ = problem(T=6, N=1, S=3)
    x = torch.tensor(logits[:, 0], requires_grad=True)
    theirs = TF.ctc_loss(x.log_softmax(-1), torch.tensor(targets[0]), torch.tensor(6),
                         torch.tensor(3), reduction="none")
    theirs.backward()
    ours = F.ctc_loss(cr.log_softmax(cr.tensor(logits[:, 0]), axis=-1), targets[0], 6, 3,
                      reduction="none")
    assert ours.shape == ()
    close(ours, theirs)
    close(cr.grad(lambda z: F.ctc_loss(cr.log_softmax(z, axis=-1), targets[0], 6, 3))(
        logits[:, 0]), x.grad / 3)   # the mean divides by the target's length


def test_a_leaf_of_log_probabilities_gets_the_derivative_torch_gives_less_exp():
    """torch's gradient in log_probs is exp(log_probs) minus the alignments' shares (the
    gradient in the logits, were they normalised); the derivative is minus the shares."""
    logits, targets, input_lengths, target_lengths = problem()
    log_probs = torch.tensor(logits).log_softmax(-1).detach().requires_grad_()
    TF.ctc_loss(log_probs, torch.tensor(targets), torch.tensor(input_lengths),
                torch.tensor(target_lengths), reduction="sum").backward()
    ours = cr.grad(lambda lp: F.ctc_loss(lp, targets, input_lengths, target_lengths,
                                         reduction="sum"))(log_probs.detach().numpy())
    expected = log_probs.grad.numpy() - np.exp(log_probs.detach().numpy())
    steps = np.arange(logits.shape[0])[:, None] < input_lengths   # (T, N)
    close(ours, np.where(steps[..., None], expected, 0.0))
    # minus the shares: each step's sum over classes is -1 within the input
    close(np.sum(ours, axis=-1), np.where(steps, -1.0, 0.0))


def test_the_module_is_the_function():
    logits, targets, input_lengths, target_lengths = problem(blank=2)
    module = nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
    theirs = torch.nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
    log_probs = np.asarray(cr.log_softmax(logits, axis=-1))
    close(module(log_probs, targets, input_lengths, target_lengths),
          theirs(torch.tensor(log_probs), torch.tensor(targets), torch.tensor(input_lengths),
                 torch.tensor(target_lengths)))
    assert repr(module) == "CTCLoss()" == repr(theirs)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_an_impossible_alignment_is_infinite_or_zero_as_torchs(zero_infinity):
    logits, targets, _, _ = problem(T=4, N=3, S=3)
    targets[1] = [1, 1, 1]                         # needs 5 steps: 3 labels, 2 blanks
    input_lengths, target_lengths = np.array([4, 4, 4]), np.array([3, 3, 2])
    (ours, grad), (theirs, tgrad) = both(logits, targets, input_lengths, target_lengths,
                                         reduction="none", zero_infinity=zero_infinity)
    close(ours, theirs)
    if zero_infinity:
        close(grad, tgrad)
        assert np.all(grad[:, 1] == 0)
    else:
        assert np.isinf(np.asarray(ours.data)[1])
        assert not np.all(np.isfinite(grad[:, 1])) and np.all(np.isnan(tgrad.numpy()[:, 1]))
        close(np.delete(grad, 1, axis=1), np.delete(tgrad.numpy(), 1, axis=1))


def test_second_order_against_central_differences():
    logits, targets, input_lengths, target_lengths = problem(T=5, N=2, C=3, S=2)

    def loss(z):
        return F.ctc_loss(cr.log_softmax(z, axis=-1), targets, input_lengths,
                          target_lengths, reduction="sum")
    v = RNG.normal(size=logits.shape)
    hvp = cr.hvp(loss, logits, v)
    h = 1e-5
    grad = cr.grad(loss)
    numeric = (grad(logits + h * v) - grad(logits - h * v)) / (2 * h)
    np.testing.assert_allclose(hvp, numeric, rtol=1e-6, atol=1e-7)


def test_forward_mode_agrees_with_reverse():
    logits, targets, input_lengths, target_lengths = problem(T=6, N=3, C=4, S=3)

    def loss(z):
        return F.ctc_loss(cr.log_softmax(z, axis=-1), targets, input_lengths,
                          target_lengths)
    v = RNG.normal(size=logits.shape)
    _, tangent = cr.jvp(loss, (logits,), (v,))
    close(tangent, np.sum(cr.grad(loss)(logits) * v))


def test_jit_replays_and_vmap_maps_over_batches_of_problems():
    logits, targets, input_lengths, target_lengths = problem()

    def loss(z):
        return F.ctc_loss(cr.log_softmax(z, axis=-1), targets, input_lengths,
                          target_lengths)
    eager = cr.value_and_grad(loss)(logits)
    jitted = cr.jit(cr.value_and_grad(loss))
    for _ in range(2):
        value, grad = jitted(logits)
        close(value, eager[0])
        close(grad, eager[1])
    stack = RNG.normal(size=(3,) + logits.shape)
    mapped = cr.vmap(loss)(stack)
    close(mapped, [loss(z).item() for z in stack])


def test_float32_stays_float32():
    logits, targets, input_lengths, target_lengths = problem()
    log_probs = cr.log_softmax(cr.tensor(logits.astype(np.float32), requires_grad=True),
                               axis=-1)
    loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths)
    assert loss.dtype == np.float32
    theirs = TF.ctc_loss(torch.tensor(logits, dtype=torch.float32).log_softmax(-1),
                         torch.tensor(targets), torch.tensor(input_lengths),
                         torch.tensor(target_lengths))
    close(loss, theirs, tol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: F.ctc_loss(np.zeros((4, 2, 3)), [[1], [1]], [4], [1, 1]),
     r"ctc_loss: input_lengths \[4\], expected 2 ints"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), [[1, 3]], [4], [2]),
     r"ctc_loss: targets must be classes in \[0, 3\) other than the blank 0"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), [[1, 0]], [4], [2]),
     r"other than the blank 0, got \[1, 0\]"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), [[1]], [5], [1]),
     r"ctc_loss: input_lengths \[5\] must be in \[0, 4\]"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), [[1]], [4], [2]),
     r"ctc_loss: targets of shape \(1, 1\), expected \(1, S\) with S >= the longest "
     r"target_length 2"),
    (lambda: F.ctc_loss(np.zeros((4, 2, 3)), [1, 2, 1], [4, 4], [1, 1]),
     r"ctc_loss: 1-d targets of 3 labels, expected the sum of target_lengths, 2"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), [[1]], [4], [1], blank=3),
     r"ctc_loss: blank 3 is not one of the 3 classes"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 1, 3)), [[1]], [4], [1]),
     r"ctc_loss: log_probs of shape \(4, 1, 1, 3\), expected \(T, N, C\) or \(T, C\)"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), [[1]], [4], [1], reduction="avg"),
     r"ctc_loss"),
])
def test_bad_input_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)
