"""A NumPy array used in an operation and written into before backward().

A node keeps its operands for its rules. A Tensor's array is locked while a graph can
still read it (tests/test_writes.py); a plain NumPy array passed as an operand belongs
to the user, who may write into it, or into the array it is a view of, at any time. So
the node keeps a copy of such an operand, taken when the operation runs, as PyTorch and
JAX do when they turn a NumPy array into one of theirs: the gradient is that of the
function at the values it was computed with. A read-only array needs no copy.
"""

import numpy as np

import chainrule as cr


def test_a_write_into_an_operand_before_backward_changes_nothing():
    a = np.ones(2)
    x = cr.tensor([0.5, 1.0], requires_grad=True)
    y = cr.sum(cr.sin(x * a))
    a[0] = 100.0
    y.backward()
    np.testing.assert_allclose(x.grad, np.cos([0.5, 1.0]), rtol=1e-15)


def test_a_write_through_the_array_an_operand_is_a_view_of():
    base = np.arange(1.0, 7.0)
    w = base[::2]  # a view: writing into base writes into w
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = cr.sum(x * x * w)
    base[:] = 0.0
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * np.array([1.0, 2.0, 3.0]) * [1.0, 3.0, 5.0])


def test_every_operand_position_and_second_order():
    a, b = np.array([2.0, 3.0]), np.array([[1.0, 2.0], [3.0, 4.0]])
    x = cr.tensor([0.3, -0.7], requires_grad=True)
    y = cr.sum(cr.exp(a * x) @ b)  # a in front, b behind
    a[:], b[:] = -1.0, 0.0
    y.backward(create_graph=True)
    first = np.array([2.0, 3.0]) * np.exp(np.array([2.0, 3.0]) * [0.3, -0.7]) * [3.0, 7.0]
    g, x.grad = x.grad, None
    np.testing.assert_allclose(g.data, first, rtol=1e-14)
    g.sum().backward()  # the second derivative reads the same copies
    np.testing.assert_allclose(x.grad, first * [2.0, 3.0], rtol=1e-14)


def test_a_read_only_operand_is_kept_as_it_is():
    a = np.ones(3)
    a.setflags(write=False)
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * a
    assert any(arg is a for arg in y._raw_args)


def test_no_copy_where_nothing_is_recorded():
    a = np.ones(3)
    with cr.no_grad():
        y = cr.tensor([1.0, 2.0, 3.0], requires_grad=True) * a
    assert y._prev == () or not y.requires_grad
