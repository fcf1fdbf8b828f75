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


def test_a_pullback_computes_at_the_operands_and_the_point_it_was_made_at():
    a = np.zeros(3)
    x = np.array([0.2, -0.3, 0.5])
    _, pullback = cr.vjp(lambda x: cr.sum(cr.maximum(x, a) * a + cr.sin(x)), x)
    a += 7.0   # the operand, and the point itself
    x += 7.0
    (g,) = pullback(1.0)
    np.testing.assert_allclose(g, np.cos([0.2, -0.3, 0.5]), rtol=1e-15)


def test_under_jit_each_call_reads_the_arrays_as_they_are_then():
    # A jitted program reads the user's array at each call: a copy taken while it was
    # traced would freeze the derivative at the first call's numbers.
    a = np.array([1.0, 2.0, 3.0])
    x = np.array([0.1, 0.2, 0.3])

    def backward_inside(x):
        t = cr.tensor(x, requires_grad=True)
        cr.sum(cr.sin(t * a)).backward()
        return t.grad

    for f in (cr.jit(backward_inside), cr.jit(cr.grad(lambda x: cr.sum(cr.sin(x * a))))):
        for _ in range(3):
            np.testing.assert_allclose(f(x), a * np.cos(x * a), rtol=1e-14)
            a *= 2.0


def test_an_index_array_written_before_backward_changes_nothing():
    # an index is a keyword of its operation (x[i], take_along_axis, x.at[i]): kept too
    import chainrule.numpy as cnp
    for f in (lambda x, i: x[i], lambda x, i: cnp.take_along_axis(x, i, axis=0),
              lambda x, i: x.at[i].set(0.0), lambda x, i: x.at[i].add(x[i])):
        grads = []
        for write in (False, True):
            i = np.array([0, 0, 2])
            x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = cr.sum(f(x, i) * np.array([1.0, 10.0, 100.0]))
            _, pullback = cr.vjp(lambda x: cr.sum(f(x, i) * np.array([1.0, 10.0, 100.0])),
                                 np.array([1.0, 2.0, 3.0]))
            if write:
                i[:] = 1
            y.backward()
            grads.append((x.grad, pullback(1.0)[0]))
        np.testing.assert_array_equal(grads[1][0], grads[0][0])
        np.testing.assert_array_equal(grads[1][1], grads[0][0])
