"""A Module's forward hooks against torch 2.13's: the order pre-hooks, forward and hooks
run in, what each receives and may replace (arguments, keyword arguments, output),
prepend, always_call, removal by the handle (and as a context manager), hooks on layers
inside a Sequential (its fused Linear and ReLU included), the gradient through a
replaced output, and cr.jit tracing again when hooks change."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261208)


def both_linear():
    theirs = torch.nn.Linear(3, 2).double()
    ours = nn.Linear(3, 2, rng=0)
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def test_hooks_run_in_torchs_order_and_may_replace_arguments_and_output():
    x = RNG.normal(size=(4, 3))
    results = []
    ours_layer, theirs_layer = both_linear()
    for layer, tensor in ((ours_layer, cr.tensor), (theirs_layer, torch.tensor)):
        log = []
        layer.register_forward_pre_hook(lambda m, args: log.append("pre") or (args[0] * 2,))
        layer.register_forward_pre_hook(lambda m, args: log.append("first"), prepend=True)
        layer.register_forward_hook(lambda m, args, out: log.append("after") or out + 1)
        layer.register_forward_hook(
            lambda m, args, kwargs, out: log.append(f"kwargs {sorted(kwargs)}"),
            with_kwargs=True)
        results.append((log, layer(tensor(x))))
    (ours_log, ours), (theirs_log, theirs) = results
    assert ours_log == theirs_log == ["first", "pre", "after", "kwargs []"]
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)


def test_a_pre_hook_with_kwargs_replaces_both():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    layer = Scale()
    layer.register_forward_pre_hook(lambda m, args, kwargs: (args, {"factor": 3.0}),
                                    with_kwargs=True)
    assert layer(cr.tensor([1.0, 2.0])).tolist() == [3.0, 6.0]
    bad = Scale()
    bad.register_forward_pre_hook(lambda m, args, kwargs: args, with_kwargs=True)
    with pytest.raises(TypeError, match="must return None or \\(args, kwargs\\)"):
        bad(cr.tensor([1.0]), factor=2.0)


def test_removal_by_handle_and_context_manager():
    layer = nn.ReLU()
    seen = []
    handle = layer.register_forward_hook(lambda m, args, out: seen.append(1))
    layer(cr.tensor([1.0]))
    handle.remove()
    handle.remove()   # (again: nothing)
    layer(cr.tensor([1.0]))
    with layer.register_forward_hook(lambda m, args, out: seen.append(2)):
        layer(cr.tensor([1.0]))
    layer(cr.tensor([1.0]))
    assert seen == [1, 2]
    assert "_forward_hooks" not in vars(layer)


def test_always_call_runs_the_hook_when_forward_raises():
    layer = nn.Linear(3, 2, rng=0)
    seen = []
    layer.register_forward_hook(lambda m, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError):
        layer(cr.ones(2, 5))
    assert seen == [None]


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "plain"])
def test_hooks_inside_a_sequential_see_each_layers_output(fused):
    model = nn.Sequential(nn.Linear(3, 4, rng=0), nn.ReLU(), nn.Linear(4, 1, rng=1))
    activations = {}
    for name in ("0", "1"):
        layer = model[int(name)]
        layer.register_forward_hook(
            lambda m, args, out, name=name: activations.__setitem__(name, out.data.copy()))
    x = RNG.normal(size=(5, 3))
    previous = cr.rules.fused.set_enabled(fused)
    try:
        model(x)
    finally:
        cr.rules.fused.set_enabled(previous)
    expected = x @ model[0].weight.data.T + model[0].bias.data
    np.testing.assert_allclose(activations["0"], expected, rtol=1e-12)
    np.testing.assert_allclose(activations["1"], np.maximum(expected, 0), rtol=1e-12)


def test_the_gradient_flows_through_a_replaced_output_as_torchs():
    ours, theirs = both_linear()
    for layer in (ours, theirs):
        layer.register_forward_hook(lambda m, args, out: out * out)
    x = RNG.normal(size=(4, 3))
    (ours(x).sum()).backward()
    (theirs(torch.tensor(x)).sum()).backward()
    np.testing.assert_allclose(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-12)


def test_jit_traces_again_when_a_hook_is_added_or_removed():
    layer = nn.Linear(3, 2, rng=0)
    x = RNG.normal(size=(2, 3))
    step = cr.jit(lambda x: layer(x))
    plain = np.asarray(step(x))
    handle = layer.register_forward_hook(lambda m, args, out: out * 0)
    np.testing.assert_array_equal(np.asarray(step(x)), np.zeros((2, 2)))
    handle.remove()
    np.testing.assert_array_equal(np.asarray(step(x)), plain)


def test_a_hook_must_be_callable():
    with pytest.raises(TypeError, match="Linear: a hook must be callable, got int"):
        nn.Linear(2, 2, rng=0).register_forward_hook(3)
