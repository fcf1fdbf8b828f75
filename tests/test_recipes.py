"""The training recipes behind `chainrule train`: the loss is micrograd's, checked with
PyTorch, and a training step leaves nothing behind for the garbage collector."""

import gc

import numpy as np
import pytest
import torch

from chainrule.data import make_moons
from chainrule.nn import MLP
from chainrule.app.recipes import TrainingDiverged, moons_loss, train_moons, train_toy
from chainrule.app.training import TrainingWarning


def torch_mlp_loss(model, X, y, alpha=1e-4):
    """The same network and hinge loss, written independently in PyTorch."""
    layers = []
    for layer in model.layers:
        W = torch.tensor([[w.data for w in n.w] for n in layer.neurons],
                         dtype=torch.float64, requires_grad=True)
        b = torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64,
                         requires_grad=True)
        layers.append((W, b))
    h = torch.tensor(X, dtype=torch.float64)
    for i, (W, b) in enumerate(layers):
        h = h @ W.T + b
        if i < len(layers) - 1:
            h = torch.relu(h)
    scores = h[:, 0]
    yt = torch.tensor(y, dtype=torch.float64)
    data_loss = torch.relu(1 - yt * scores).mean()
    reg = alpha * sum((W ** 2).sum() + (b ** 2).sum() for W, b in layers)
    loss = data_loss + reg
    loss.backward()
    return loss, layers


def test_moons_loss_and_gradients_match_pytorch():
    X, labels = make_moons(40, seed=2)
    y = [2 * int(v) - 1 for v in labels]
    model = MLP(2, [8, 8, 1], rng=5)
    loss, accuracy = moons_loss(model, X.tolist(), y)
    loss.backward()
    expected, layers = torch_mlp_loss(model, X, y)
    assert loss.data == pytest.approx(expected.item(), rel=1e-12)
    for layer, (W, b) in zip(model.layers, layers):
        ours_W = np.array([[w.grad for w in n.w] for n in layer.neurons])
        ours_b = np.array([n.b.grad for n in layer.neurons])
        np.testing.assert_allclose(ours_W, W.grad.numpy(), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(ours_b, b.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert 0.0 <= accuracy <= 1.0


def test_a_training_step_makes_no_reference_cycles():
    """With the cyclic collector off, a whole step (forward, backward, update) leaves
    nothing for it: every node was freed by reference counting when the loss went away.
    micrograd's closures leave its entire graph (65,818 nodes a step) for the collector."""
    X, labels = make_moons(30, seed=0)
    y = [2 * int(v) - 1 for v in labels]
    model = MLP(2, [16, 16, 1], rng=0)
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            loss, _ = moons_loss(model, X.tolist(), y)
            model.zero_grad()
            loss.backward()
            for p in model.parameters():
                p.data -= 0.1 * p.grad
            del loss
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_train_moons_is_micrograd_demo_and_reaches_100_percent():
    _, X, y, metrics = train_moons(steps=100, seed=1, show_progress=False)
    assert len(X) == 100 and set(y) == {-1, 1}
    assert metrics["train_accuracy"] == 1.0
    assert metrics["parameters"] == 337


def test_divergence_raises_instead_of_returning_nan():
    with pytest.raises(TrainingDiverged, match="smaller learning rate"), \
            pytest.warns(TrainingWarning, match="the loss grew from .* the learning rate "
                                                "50 is probably too large"):
        train_toy(steps=100, lr=50.0, show_progress=False)
