"""Errors and warnings a learner meets first, in one line that names the operation and
the shapes, as PyTorch's do.

1. A matrix product of shapes that do not fit (``@``, ``cr.matmul``, chainrule.numpy's
   ``matmul`` and ``dot``, 1-d and batched operands) names both shapes and the sizes
   that differ; NumPy's own message stays attached as the cause.
2. An elementwise operation of shapes that do not broadcast names both shapes and the
   axis where they differ.
3. ``.item()`` of a tensor of more than one entry says how many it has.
4. Reading ``.grad`` of a result (not a leaf) warns that backward() fills it for leaves
   only, unless ``retain_grad()`` asked for it; leaves never warn.
"""

import re
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp


def ones(*shape, requires_grad=False):
    return cr.tensor(np.ones(shape), requires_grad=requires_grad)


def message_of(call):
    with pytest.raises(ValueError) as caught:
        call()
    return str(caught.value)


# ---------------------------------------------------------------------------------------
# 1. matmul
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [
    lambda a, b: a @ b,
    lambda a, b: cr.matmul(a, b),
    lambda a, b: cnp.matmul(a, b),
    lambda a, b: a.matmul(b),
], ids=["@", "cr.matmul", "chainrule.numpy.matmul", "Tensor.matmul"])
def test_a_matmul_of_shapes_that_do_not_fit_names_both(spelling):
    assert message_of(lambda: spelling(ones(2, 3), ones(2, 3))) == (
        "matmul: shapes (2, 3) and (2, 3) cannot be multiplied (3 != 2)")


@pytest.mark.parametrize("a, b, says", [
    ((3,), (2,), "matmul: shapes (3,) and (2,) cannot be multiplied (3 != 2)"),
    ((3,), (2, 4), "matmul: shapes (3,) and (2, 4) cannot be multiplied (3 != 2)"),
    ((2, 3), (4,), "matmul: shapes (2, 3) and (4,) cannot be multiplied (3 != 4)"),
    ((5, 2, 3), (2, 3), "matmul: shapes (5, 2, 3) and (2, 3) cannot be multiplied (3 != 2)"),
    ((4, 2, 3), (5, 3, 2), "matmul: shapes (4, 2, 3) and (5, 3, 2) cannot be multiplied: "
                           "the batch axes (4,) and (5,) do not broadcast"),
    ((), (3,), "matmul: shapes () and (3,) cannot be multiplied: a 0-d operand has no "
               "axis to sum over (use * to scale)"),
], ids=["1-d @ 1-d", "1-d @ 2-d", "2-d @ 1-d", "batch @ 2-d", "batches", "0-d"])
def test_every_kind_of_matmul_mismatch_says_which_sizes_differ(a, b, says):
    assert message_of(lambda: ones(*a) @ ones(*b)) == says


def test_dot_names_both_shapes_too():
    assert message_of(lambda: cnp.dot(ones(2, 3), ones(2, 3))) == (
        "dot: shapes (2, 3) and (2, 3) cannot be multiplied (3 != 2: the last axis of a "
        "against the second-to-last axis of b)")


def test_the_same_message_inside_a_graph_and_on_plain_arrays():
    expected = "matmul: shapes (2, 3) and (2, 3) cannot be multiplied (3 != 2)"
    assert message_of(lambda: ones(2, 3, requires_grad=True) @ ones(2, 3)) == expected
    assert message_of(lambda: cr.matmul(np.ones((2, 3)), np.ones((2, 3)))) == expected
    assert message_of(lambda: cr.grad(lambda x: (x @ x).sum())(np.ones((2, 3)))) == expected


def test_numpys_message_is_kept_as_the_cause():
    with pytest.raises(ValueError) as caught:
        ones(2, 3) @ ones(2, 3)
    assert isinstance(caught.value.__cause__, ValueError)
    assert "matmul" in str(caught.value.__cause__)     # NumPy's gufunc text


# ---------------------------------------------------------------------------------------
# 2. broadcasting
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, spelling", [
    ("add", lambda a, b: a + b),
    ("subtract", lambda a, b: a - b),
    ("multiply", lambda a, b: a * b),
    ("divide", lambda a, b: a / b),
    ("power", lambda a, b: a ** b),
    ("maximum", cr.maximum),
])
def test_shapes_that_do_not_broadcast_are_named(name, spelling):
    assert message_of(lambda: spelling(ones(2, 3), ones(4))) == (
        f"{name}: shapes (2, 3) and (4,) do not broadcast (axis -1 has 3 and 4; sizes "
        f"must match, or one be 1)")


def test_the_axis_named_is_the_one_that_differs():
    says = message_of(lambda: ones(5, 2, 3) + ones(4, 1, 3))
    assert says.startswith("add: shapes (5, 2, 3) and (4, 1, 3) do not broadcast")
    assert "axis -3 has 5 and 4" in says


def test_an_ndarray_or_a_list_on_either_side_is_named_by_its_shape():
    assert message_of(lambda: np.ones((2, 3)) + ones(4)).startswith(
        "add: shapes (2, 3) and (4,) do not broadcast")
    assert message_of(lambda: ones(2, 3) * [1.0, 2.0]).startswith(
        "multiply: shapes (2, 3) and (2,) do not broadcast")


def test_shapes_that_broadcast_still_broadcast():
    assert (ones(2, 3) + ones(3)).shape == (2, 3)
    assert (ones(4, 1, 3) * ones(2, 1)).shape == (4, 2, 3)


# ---------------------------------------------------------------------------------------
# 3. item()
# ---------------------------------------------------------------------------------------

def test_item_of_many_entries_says_how_many():
    assert message_of(lambda: ones(2, 3).item()) == (
        "item(): only a tensor of one entry converts to a Python number; this one has 6 "
        "entries (shape (2, 3))")


def test_item_of_one_entry_in_any_shape_is_its_number():
    assert cr.tensor(2.5).item() == 2.5
    assert cr.tensor([[[7]]]).item() == 7


# ---------------------------------------------------------------------------------------
# 4. .grad of a result
# ---------------------------------------------------------------------------------------

def test_reading_grad_of_a_result_warns_that_only_leaves_get_one():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    with pytest.warns(UserWarning, match=re.escape(
            "reading .grad of a tensor an operation made (the result of multiply), which "
            "is None: backward() fills .grad only for leaves")) as caught:
        assert y.grad is None
    assert "retain_grad()" in str(caught[0].message)
    assert caught[0].filename == __file__               # the line that read it


def test_every_read_warns():
    y = cr.tensor([1.0], requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad, y.grad
    assert len(caught) == 2


def quietly(read):
    """``read()``, failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return read()


def test_leaves_never_warn():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    assert quietly(lambda: x.grad) is None           # before backward: None, silently
    (x * x).sum().backward()
    assert quietly(lambda: x.grad).tolist() == [2.0, 4.0]
    constant = cr.tensor([1.0]) * 2                  # made by an operation, but outside
    assert quietly(lambda: constant.grad) is None    # any graph: a leaf, as in PyTorch


def test_a_result_that_retains_its_grad_does_not_warn():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).retain_grad()
    assert quietly(lambda: y.grad) is None           # before backward, too
    y.sum().backward()
    assert quietly(lambda: y.grad).tolist() == [1.0, 1.0]


def test_an_optimizer_step_reads_only_leaves():
    model = cr.nn.Linear(2, 1, rng=0)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    quietly(lambda: (model(cr.ones(3, 2)).sum().backward(), opt.step(), opt.zero_grad()))
