"""Pickling and deep-copying what a user holds: a Tensor after a forward pass, a Module
whose parameters a graph still locks, an optimizer's model, a Value an operation made.

Each pickles as a new leaf: its numbers, ``requires_grad`` and ``.grad``. The graph that
made it stays behind (as ``torch.save`` keeps no graph), and so do the locks that graph
holds on the arrays, so the copy is writable.
"""

import copy
import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule import Value, nn


def round_trips(obj):
    return [pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj)]


def test_a_tensor_in_a_graph_pickles_as_a_leaf():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0  # x's array is now locked by y's graph
    for back in round_trips(y) + round_trips(x):
        assert back.requires_grad and back._prev == ()
        back.data[0] = 7.0  # writable: no lock came along
    assert round_trips(y)[0].data.tolist() == [3.0, 6.0]


def test_a_module_after_a_forward_pass_without_backward():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    x = cr.tensor(np.ones((4, 2)))
    out = model(x)
    for back in round_trips(model):
        assert isinstance(back[0].weight, nn.Parameter)
        np.testing.assert_array_equal(back(x).data, out.data)
        assert back[0].weight is not model[0].weight


def test_gradients_come_along():
    model = nn.Linear(2, 1)
    model(cr.tensor(np.ones((3, 2)))).sum().backward()
    for back in round_trips(model):
        np.testing.assert_array_equal(back.weight.grad, model.weight.grad)


@pytest.mark.parametrize("make", [lambda a: a * a + a, lambda a: a.tanh(), lambda a: a])
def test_a_value_made_by_an_operation(make):
    a = Value(0.5, label="a")
    b = make(a)
    b.backward()
    for back in round_trips(b):
        assert (back.data, back.grad, back._prev) == (b.data, b.grad, ())


def test_a_micrograd_mlp_after_a_forward_pass():
    from chainrule.micrograd.nn import MLP
    model = MLP(2, [4, 1])
    out = model([1.0, -2.0])
    for back in round_trips(model):
        assert back([1.0, -2.0]).data == out.data
