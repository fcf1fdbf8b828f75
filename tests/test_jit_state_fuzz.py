"""A property of cr.jit: a jitted training step gives the eager step's numbers whatever is
done to its model between calls. Each seed draws a sequence of changes (a parameter
added, removed or replaced, a layer replaced, a setting changed, nothing), applies it to
two twin models, and runs one step on each, the eager one and the jitted one: the
losses and every parameter after the step must agree."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn


class _Model(nn.Module):
    """Linear layers in a list, then every extra parameter added to the output."""

    def __init__(self):
        self.layers = [nn.Linear(3, 4, rng=0), nn.Linear(4, 2, rng=1)]
        self.scale = 1.0

    def forward(self, x):
        h = cr.tanh(self.layers[0](x))
        out = self.layers[1](h) * self.scale
        for name, p in self.named_parameters():
            if not name.startswith("layers."):
                out = out + cr.sum(p * p)
        return out


def _step(model, x, y):
    """zero_grad, loss, backward, and SGD written by hand over the parameters of now."""
    model.zero_grad()
    loss = cr.sum((model(cr.tensor(x)) - y) ** 2)
    loss.backward()
    for p in model.parameters():
        p.data -= 0.01 * p.grad
    return loss


def _extras(model):
    return [name for name in vars(model) if name.startswith("extra")]


def _change(rng, count):
    """One change, as a function of a model (the same numbers for both twins)."""
    kind = rng.choice(["add", "remove", "replace", "layer", "setting", "none"])
    values = rng.standard_normal(2)
    layer_seed = int(rng.integers(100))
    scale = float(rng.uniform(0.5, 2.0))

    def apply(model):
        extras = _extras(model)
        if kind == "add":
            setattr(model, f"extra{count}", nn.Parameter(values.copy()))
        elif kind == "remove" and extras:
            delattr(model, extras[int(values[0] > 0) % len(extras)])
        elif kind == "replace" and extras:
            setattr(model, extras[-1], nn.Parameter(values.copy()))
        elif kind == "replace":
            model.layers[1].bias = nn.Parameter(np.resize(values, 2))
        elif kind == "layer":
            model.layers[layer_seed % 2] = nn.Linear(*((3, 4), (4, 2))[layer_seed % 2],
                                                     rng=layer_seed)
        elif kind == "setting":
            model.scale = scale
    return apply


@pytest.mark.filterwarnings("ignore:cr.jit.*traced")  # (each change traces again)
@pytest.mark.parametrize("seed", range(24))
def test_a_jitted_step_matches_eager_whatever_happens_to_the_model(seed):
    rng = np.random.default_rng(seed)
    eager, jitted = _Model(), _Model()
    step = cr.jit(_step)
    for count in range(10):
        change = _change(rng, count)
        change(eager)
        change(jitted)
        x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
        ours, theirs = step(jitted, x, y), _step(eager, x, y)
        np.testing.assert_allclose(ours.data, theirs.data, rtol=1e-12, atol=1e-12)
        names = [name for name, _ in eager.named_parameters()]
        assert [name for name, _ in jitted.named_parameters()] == names
        for (name, p), (_, q) in zip(jitted.named_parameters(), eager.named_parameters()):
            np.testing.assert_allclose(p.data, q.data, rtol=1e-12, atol=1e-12,
                                       err_msg=f"seed {seed}, step {count}: {name}")
