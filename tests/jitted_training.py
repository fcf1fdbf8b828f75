"""A small training problem and its step, shared by the optimizer tests that run a whole
step under cr.jit and compare it with the eager step bit for bit (tests/test_optim.py,
tests/test_optimizers_against_torch.py), and the fixture that runs the jitted update
both on whole arrays and by blocks of rows."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.jit import blocks as jit_blocks
from chainrule.nn.functional import cross_entropy


def training_problem():
    """An MLP (20 -> 16 -> 5), 32 inputs and their class labels, the same at every call."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 20)), rng.integers(0, 5, 32)
    model = nn.Sequential(nn.Linear(20, 16, rng=1), nn.ReLU(), nn.Linear(16, 5, rng=2))
    return model, x, y


def train_step(model, opt, x, y):
    """One step: forward, the cross-entropy (negated for an optimizer that maximizes),
    backward, the update; returns the loss."""
    opt.zero_grad()
    loss = cross_entropy(model(cr.tensor(x)), y)
    if opt.param_groups[0].get("maximize"):
        loss = -loss  # climbing -loss is training too: the weights stay finite
    loss.backward()
    opt.step()
    return loss


@pytest.fixture(params=[False, True], ids=["whole-arrays", "blocks-of-rows"])
def blocks(request, monkeypatch):
    """The jitted update on whole arrays, and by blocks of 2 rows (as a large weight's
    update runs; see tests/test_jit.py)."""
    if request.param:
        monkeypatch.setattr(jit_blocks, "_BLOCKED_FROM", 0)
        monkeypatch.setattr(jit_blocks, "_BLOCK_BYTES", 300)
        monkeypatch.setattr(jit_blocks, "_SHORTEST_RUN", 2)
