"""A property of the whole tensor engine: any expression graph built from smooth
operations gives the same value and the same gradients as PyTorch in float64.

Hypothesis draws the inputs (1 to 3 arrays of mutually broadcastable shapes, each
possibly with fewer axes or with size-1 axes), then a program of a few steps; each step
applies one operation to earlier nodes:

- unary: tanh, sin, sigmoid, exp of a small value (exp(tanh(a)): products of
  products can grow past what exp can hold), negation;
- binary, with broadcasting: add, subtract, multiply;
- reduction: sum over one axis with keepdims (so every node stays broadcastable
  with every other).

A node may be used many times (fan-out), so gradients must add up along every path.
The loss is sum over all nodes of sum(w_k * node_k), each node with its own cotangent,
so every input and every intermediate node contributes. The program runs once on
chainrule Tensors and once on torch tensors; the loss, every node and the gradient of
every input must agree to a relative 1e-9.
"""

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr

REL = 1e-9

UNARY = {
    "tanh": (cr.tanh, torch.tanh),
    "sin": (cr.sin, torch.sin),
    "sigmoid": (cr.sigmoid, torch.sigmoid),
    "exp": (lambda a: cr.exp(cr.tanh(a)), lambda a: torch.exp(torch.tanh(a))),
    "neg": (lambda a: -a, lambda a: -a),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
}


def sum_keepdims(axis):
    return (lambda a: cr.sum(a, axis=axis % a.ndim, keepdims=True) if a.ndim else a,
            lambda a: torch.sum(a, dim=axis % a.ndim, keepdim=True) if a.ndim else a)


@st.composite
def programs(draw):
    """(inputs, steps): the inputs as float64 arrays, each step (kind, name, operands)."""
    n_inputs = draw(st.integers(1, 3))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n_inputs, min_dims=0,
                                                    max_dims=3, max_side=3))
    inputs = [draw(hnp.arrays(np.float64, shape,
                              elements=st.floats(-2, 2, allow_nan=False, width=64)))
              for shape in shapes.input_shapes]
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        n_nodes = n_inputs + len(steps)
        kind = draw(st.sampled_from(["unary", "binary", "sum"]))
        a = draw(st.integers(0, n_nodes - 1))
        if kind == "unary":
            steps.append((kind, draw(st.sampled_from(sorted(UNARY))), (a,)))
        elif kind == "binary":
            b = draw(st.integers(0, n_nodes - 1))
            steps.append((kind, draw(st.sampled_from(sorted(BINARY))), (a, b)))
        else:
            steps.append((kind, draw(st.integers(-3, 2)), (a,)))
    seed = draw(st.integers(0, 2**32 - 1))
    return inputs, steps, seed


def run(steps, leaves, world):
    """Every node of the program: the leaves, then one node per step."""
    pick = 0 if world == "chainrule" else 1
    nodes = list(leaves)
    for kind, name, operands in steps:
        args = [nodes[i] for i in operands]
        if kind == "unary":
            nodes.append(UNARY[name][pick](*args))
        elif kind == "binary":
            nodes.append(BINARY[name][pick](*args))
        else:
            nodes.append(sum_keepdims(name)[pick](*args))
    return nodes


def assert_close(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: {actual.shape} != {expected.shape}"
    scale = float(np.max(np.abs(expected), initial=0.0))
    np.testing.assert_allclose(actual, expected, rtol=REL, atol=REL * scale, err_msg=what)


@settings(max_examples=60, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_graphs_match_torch(program):
    inputs, steps, seed = program
    rng = np.random.default_rng(seed)

    xs = [cr.tensor(a, requires_grad=True) for a in inputs]
    nodes = run(steps, xs, "chainrule")
    ws = [rng.standard_normal(node.shape) for node in nodes]
    loss = sum((node * w).sum() for node, w in zip(nodes, ws))
    loss.backward()

    ts = [torch.tensor(a, requires_grad=True) for a in inputs]
    t_nodes = run(steps, ts, "torch")
    t_loss = sum((node * torch.from_numpy(w)).sum() for node, w in zip(t_nodes, ws))
    t_grads = torch.autograd.grad(t_loss, ts)

    assert_close(loss.data, t_loss.detach().numpy(), "loss")
    for k, (node, t_node) in enumerate(zip(nodes, t_nodes)):
        assert node.dtype == np.float64
        assert_close(node.data, t_node.detach().numpy(), f"node {k}")
    for i, (x, t_grad) in enumerate(zip(xs, t_grads)):
        assert x.grad is not None, f"input {i} has no gradient"
        assert np.shape(x.grad) == x.shape
        assert_close(x.grad, t_grad.numpy(), f"gradient of input {i}")


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_graphs_second_order_match_torch(program):
    """The same graphs differentiated twice: the Hessian-vector product of the loss
    from backward(create_graph=True), against torch's double backward."""
    inputs, steps, seed = program
    rng = np.random.default_rng(seed)
    xs = [cr.tensor(a, requires_grad=True) for a in inputs]
    nodes = run(steps, xs, "chainrule")
    ws = [rng.standard_normal(node.shape) for node in nodes]
    vs = [rng.standard_normal(a.shape) for a in inputs]
    # |node|^2 / 2 terms make the Hessian nonzero even for a linear program
    loss = sum((node * w).sum() + 0.5 * (node * node).sum() for node, w in zip(nodes, ws))
    loss.backward(create_graph=True)
    grads = [x.grad for x in xs]
    for x in xs:
        x.zero_grad()
    sum((g * v).sum() for g, v in zip(grads, vs)).backward()

    ts = [torch.tensor(a, requires_grad=True) for a in inputs]
    t_nodes = run(steps, ts, "torch")
    t_loss = sum((n * torch.from_numpy(w)).sum() + 0.5 * (n * n).sum()
                 for n, w in zip(t_nodes, ws))
    t_grads = torch.autograd.grad(t_loss, ts, create_graph=True)
    t_hv = torch.autograd.grad(sum((g * torch.from_numpy(v)).sum()
                                   for g, v in zip(t_grads, vs)), ts)

    for i, (x, g, t_g, t_h) in enumerate(zip(xs, grads, t_grads, t_hv)):
        assert_close(g.data, t_g.detach().numpy(), f"gradient of input {i}")
        assert_close(x.grad, t_h.numpy(), f"Hv of input {i}")
