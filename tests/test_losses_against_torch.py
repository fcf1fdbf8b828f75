"""The class losses' PyTorch options, generated over their grid and checked against torch.

``cross_entropy`` (class indices and class probabilities, per-class ``weight``, every
``reduction``, ``label_smoothing`` 0 and 0.2, ``ignore_index`` absent, present or on
every row, inputs (C,), (N, C), (N, C, d) and (N, C, d1, d2), float64 and float32,
labels as int64, int32, a list, floats holding integers or a chainrule Tensor),
``nll_loss``, ``binary_cross_entropy_with_logits`` (``weight``, ``pos_weight``) and
``binary_cross_entropy`` (``weight``), and their modules, against
``torch.nn.functional`` and ``torch.nn``:

1. values and first derivatives (logits; targets where they are probabilities or BCE
   targets), by ``Tensor.backward`` and by ``cr.grad``;
2. second derivatives: ``cr.hessian``, ``cr.jacfwd(cr.grad(f))`` and
   ``cr.jacrev(cr.grad(f))`` against ``torch.autograd.functional.hessian``;
3. ``cr.vmap`` (per-example losses, per-example gradients with a shared weight) against a
   loop of torch calls, and ``cr.jit`` against eager chainrule, bit for bit;
4. the weights' own gradients: against torch where torch gives one, else against
   central differences of torch's loss;
5. the modules' ``state_dict()`` (torch's names, absent when None) and its round trips;
6. refusals: one line naming the function, the argument and the shapes or value.

Tolerances. float64: rtol 1e-12 and atol 1e-14 (an entry that cancels to about 0, a
gradient's softmax - target, keeps the absolute rounding of its terms, which are of order 1; 1e-14 is 45 ulps of 1).
The Hessian of binary_cross_entropy is compared to rtol 1e-10: torch's is the one off
(see test_binary_cross_entropy_hessian).
float32: rtol 2e-6 and atol 4e-6, both libraries computing in float32 but summing and
taking the log-sum-exp in their own order. Measured over this file's float32 grid: the
largest difference is 16 float32 ulps of the array's largest entry (an entry of a
gradient that cancels, softmax - target, keeps the rounding of its terms), and where it
is above 2e-6 it is within 1.9e-7 of the entry (1.6 ulps); the tolerances are about
twice and ten times that.
torch is given the labels as int64 always: it refuses int32 and float class indices
("expected target dtype to be Long"), which chainrule takes as PyTorch programs ported
from other conventions hand them.

Differences from torch. Known and documented, not failures: with every row ignored the
mean is NaN in both and its gradient NaN in chainrule, 0 in torch
(test_every_row_ignored_gives_nan_in_both); chainrule gives the class weights of
cross_entropy and nll_loss and BCE's weight and pos_weight a gradient, where torch
refuses one (checked against central differences); under cr.jit and cr.vmap, labels of
-100 with the default ignore_index are refused, not ignored
(test_labels_of_minus_100_under_jit_and_vmap_are_refused_not_misread); torch accepts a
negative ignore_index with probability targets, chainrule refuses it
(test_a_negative_ignore_index_with_probability_targets); under cr.jit an explicit
ignore_index of -100 is the default, whose labels are refused
(test_an_explicit_ignore_index_of_minus_100_under_jit_is_the_default_and_refused).
"""

import itertools
import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F
from seeds_and_tolerances import central_difference_atol, per_test_generator

RNG = per_test_generator(20261130)

C = 4
SHAPES = {"C": (C,), "NC": (5, C), "NCd": (3, C, 5), "NCdd": (2, C, 3, 2)}
REDUCTIONS = ["mean", "sum", "none"]
DTYPES = ["float64", "float32"]
LABEL_FORMS = ["int64", "int32", "list", "float", "tensor"]
# ignore_index: "absent" (not passed, no label -100), "default" (not passed, some labels
# -100, torch's default ignore_index), "present" (ignore_index=2, a real class, on some
# rows), "all" (ignore_index=-1 on every row). One example (C,) has one label: it is
# ignored only under "all".
IGNORES = ["absent", "default", "present", "all"]
SMOOTHINGS = [0.0, 0.2]


def tolerance(dtype):
    return (dict(rtol=1e-12, atol=1e-14) if dtype == "float64"
            else dict(rtol=2e-6, atol=4e-6))


def close(ours, theirs, dtype="float64"):
    ours = np.asarray(getattr(ours, "data", ours))
    if isinstance(theirs, torch.Tensor):
        theirs = theirs.detach().numpy()
    assert ours.shape == np.shape(theirs)
    np.testing.assert_allclose(ours.astype(np.float64), np.asarray(theirs, np.float64),
                               **tolerance(dtype))


def as_torch(a, requires_grad=False):
    return torch.tensor(np.asarray(a)).requires_grad_(requires_grad)


def total(out, cotangent):
    """A scalar from a loss: itself, or its "none" losses against a fixed cotangent."""
    return out if cotangent is None else cr.sum(out * cotangent)


def total_torch(out, cotangent):
    return out if cotangent is None else (out * torch.tensor(cotangent)).sum()


def cotangent_for(shape, reduction, dtype):
    return None if reduction != "none" else RNG.normal(size=shape).astype(dtype)


def class_labels(shape, ignore):
    """int64 labels for logits ``shape`` and the ignore_index keyword to pass."""
    label_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    labels = RNG.integers(0, C, size=label_shape).astype(np.int64)
    flat = labels.reshape(-1)
    if ignore == "all":
        return np.full(label_shape, -1, np.int64), {"ignore_index": -1}
    if ignore == "absent":
        return labels, {}
    value = -100 if ignore == "default" else 2
    if flat.size > 1:
        flat[flat == value] = 0
        flat[: max(1, flat.size // 3)] = value
        flat[-1] = 3  # one row kept
    elif flat[0] == value:
        flat[0] = 3
    return labels, ({} if ignore == "default" else {"ignore_index": 2})


def in_form(labels, form):
    """The same labels as a chainrule user may hand them."""
    return {"int64": lambda: labels, "int32": lambda: labels.astype(np.int32),
            "list": lambda: labels.tolist(), "float": lambda: labels.astype(np.float64),
            "tensor": lambda: cr.tensor(labels)}[form]()


def class_weights(weighted, dtype):
    return RNG.uniform(0.5, 2.0, size=C).astype(dtype) if weighted else None


def torch_or_none(a):
    return None if a is None else torch.tensor(a)


def probabilities_like(shape, dtype):
    """Class probabilities along the class axis (1, or 0 for one example)."""
    axis = 1 if len(shape) > 1 else 0
    e = np.exp(RNG.normal(size=shape))
    return (e / e.sum(axis=axis, keepdims=True)).astype(dtype)


def first_order(ours_fn, theirs_fn, inputs, dtype, cotangent):
    """Value and gradients w.r.t. every input: chainrule by Tensor.backward and by
    cr.grad, torch by backward, all equal; chainrule keeps the dtype."""
    tensors = [cr.tensor(a, requires_grad=True) for a in inputs]
    value = ours_fn(*tensors)
    total(value, cotangent).backward()
    grads = cr.grad(lambda *a: total(ours_fn(*a), cotangent),
                    argnums=tuple(range(len(inputs))))(*inputs)
    theirs_in = [as_torch(a, True) for a in inputs]
    theirs = theirs_fn(*theirs_in)
    total_torch(theirs, cotangent).backward()
    close(value, theirs, dtype)
    assert np.asarray(value.data).dtype == np.dtype(dtype)
    for tensor, grad, torch_in in zip(tensors, grads, theirs_in):
        close(tensor.grad, torch_in.grad, dtype)
        close(grad, torch_in.grad, dtype)
        assert np.asarray(grad).dtype == np.dtype(dtype)


# =======================================================================================
# 1. Values and first derivatives over the grid
# =======================================================================================

INDEX_GRID = [case for case in itertools.product(
    SHAPES, LABEL_FORMS, IGNORES, SMOOTHINGS, [False, True], REDUCTIONS, DTYPES)
    if not (case[2] == "all" and case[5] == "mean")]  # NaN: test_every_row_ignored


@pytest.mark.parametrize("rank, form, ignore, smoothing, weighted, reduction, dtype",
                         INDEX_GRID)
def test_cross_entropy_of_class_indices(rank, form, ignore, smoothing, weighted,
                                        reduction, dtype):
    """cross_entropy and CrossEntropyLoss of class indices: value, logits' gradient (by
    backward and cr.grad) as torch's, whatever the form of the labels."""
    shape = SHAPES[rank]
    z = RNG.normal(size=shape).astype(dtype) * 2
    labels, ignore_kw = class_labels(shape, ignore)
    weight = class_weights(weighted, dtype)
    options = dict(reduction=reduction, label_smoothing=smoothing, **ignore_kw)
    ours_labels = in_form(labels, form)
    cotangent = cotangent_for(labels.shape, reduction, dtype)
    first_order(lambda a: F.cross_entropy(a, ours_labels, weight, **options),
                lambda a: TF.cross_entropy(a, torch.tensor(labels), torch_or_none(weight),
                                           **options),
                [z], dtype, cotangent)
    first_order(lambda a: nn.CrossEntropyLoss(weight, **options)(a, ours_labels),
                lambda a: torch.nn.CrossEntropyLoss(torch_or_none(weight), **options)(
                    a, torch.tensor(labels)),
                [z], dtype, cotangent)


@pytest.mark.parametrize("rank, smoothing, weighted, reduction, dtype", list(
    itertools.product(SHAPES, SMOOTHINGS, [False, True], REDUCTIONS, DTYPES)))
def test_cross_entropy_of_class_probabilities(rank, smoothing, weighted, reduction, dtype):
    """cross_entropy of targets of the logits' shape (class probabilities): value and
    gradients w.r.t. the logits and the targets, as torch's."""
    shape = SHAPES[rank]
    z = RNG.normal(size=shape).astype(dtype) * 2
    target = probabilities_like(shape, dtype)
    weight = class_weights(weighted, dtype)
    options = dict(reduction=reduction, label_smoothing=smoothing)
    cotangent = cotangent_for(shape[:1] + shape[2:] if len(shape) > 1 else (),
                              reduction, dtype)
    first_order(lambda a, t: F.cross_entropy(a, t, weight, **options),
                lambda a, t: TF.cross_entropy(a, t, torch_or_none(weight), **options),
                [z, target], dtype, cotangent)
    first_order(lambda a, t: nn.CrossEntropyLoss(weight, **options)(a, t),
                lambda a, t: torch.nn.CrossEntropyLoss(torch_or_none(weight), **options)(
                    a, t),
                [z, target], dtype, cotangent)


NLL_GRID = [case for case in itertools.product(
    ["NC", "NCd", "NCdd"], IGNORES, [False, True], REDUCTIONS, DTYPES)
    if not (case[1] == "all" and case[3] == "mean")]


@pytest.mark.parametrize("rank, ignore, weighted, reduction, dtype", NLL_GRID)
def test_nll_loss(rank, ignore, weighted, reduction, dtype):
    """nll_loss and NLLLoss: value and the log-probabilities' gradient, as torch's."""
    shape = SHAPES[rank]
    log_p = RNG.normal(size=shape).astype(dtype)
    labels, ignore_kw = class_labels(shape, ignore)
    weight = class_weights(weighted, dtype)
    cotangent = cotangent_for(labels.shape, reduction, dtype)
    first_order(lambda a: F.nll_loss(a, labels, weight, reduction=reduction, **ignore_kw),
                lambda a: TF.nll_loss(a, torch.tensor(labels), torch_or_none(weight),
                                      reduction=reduction, **ignore_kw),
                [log_p], dtype, cotangent)
    first_order(lambda a: nn.NLLLoss(weight, reduction=reduction, **ignore_kw)(a, labels),
                lambda a: torch.nn.NLLLoss(torch_or_none(weight), reduction=reduction,
                                           **ignore_kw)(a, torch.tensor(labels)),
                [log_p], dtype, cotangent)


def test_nll_loss_of_one_example():
    """nll_loss(log_p (C,), label 0-d), as torch's (cross_entropy takes this form).
    Reproducer: ``F.nll_loss(np.zeros(3), 1)``."""
    log_p = RNG.normal(size=C)
    close(F.nll_loss(log_p, np.int64(1)), TF.nll_loss(torch.tensor(log_p), torch.tensor(1)))


BCE_SHAPES = {"C": (C,), "NC": (5, C), "NCd": (3, 2, C), "NCdd": (2, 3, 2, C)}
# weight: none, one per entry ("full"), or one per last-axis entry ("row", broadcast)
BCE_WEIGHTS = [None, "full", "row"]


def bce_weight(kind, shape, dtype):
    if kind is None:
        return None
    return RNG.uniform(0.5, 2.0, size=shape if kind == "full" else shape[-1:]).astype(dtype)


@pytest.mark.parametrize("rank, weight_kind, pos_weighted, reduction, dtype", list(
    itertools.product(BCE_SHAPES, BCE_WEIGHTS, [False, True], REDUCTIONS, DTYPES)))
def test_binary_cross_entropy_with_logits(rank, weight_kind, pos_weighted, reduction,
                                          dtype):
    """binary_cross_entropy_with_logits and BCEWithLogitsLoss with weight and
    pos_weight: value and gradients w.r.t. the logits and the targets, as torch's."""
    shape = BCE_SHAPES[rank]
    z = RNG.normal(size=shape).astype(dtype) * 3
    target = RNG.uniform(size=shape).astype(dtype)
    weight = bce_weight(weight_kind, shape, dtype)
    pos_weight = RNG.uniform(0.5, 3.0, size=shape[-1:]).astype(dtype) if pos_weighted \
        else None
    cotangent = cotangent_for(shape, reduction, dtype)
    first_order(lambda a, t: F.binary_cross_entropy_with_logits(
                    a, t, weight, reduction=reduction, pos_weight=pos_weight),
                lambda a, t: TF.binary_cross_entropy_with_logits(
                    a, t, torch_or_none(weight), reduction=reduction,
                    pos_weight=torch_or_none(pos_weight)),
                [z, target], dtype, cotangent)
    first_order(lambda a, t: nn.BCEWithLogitsLoss(weight, reduction=reduction,
                                                  pos_weight=pos_weight)(a, t),
                lambda a, t: torch.nn.BCEWithLogitsLoss(
                    torch_or_none(weight), reduction=reduction,
                    pos_weight=torch_or_none(pos_weight))(a, t),
                [z, target], dtype, cotangent)


@pytest.mark.parametrize("weight_shape, pos_weight_shape", [
    ((5, 1), None), ((1, C), (1,)), ((), ()), (None, (5, 1)), ((1, 1), (1, C))])
def test_bce_with_logits_weights_broadcast_as_torchs(weight_shape, pos_weight_shape):
    """weight and pos_weight of any shape that broadcasts to the losses' without
    growing them ((N, 1), (1, C), 0-d, (1,)): value and gradients as torch's."""
    shape = (5, C)
    z, target = RNG.normal(size=shape) * 3, RNG.uniform(size=shape)
    weight, pos_weight = (None if s is None else RNG.uniform(0.5, 2.0, size=s)
                          for s in (weight_shape, pos_weight_shape))
    for reduction in REDUCTIONS:
        cotangent = cotangent_for(shape, reduction, "float64")
        first_order(lambda a, t: F.binary_cross_entropy_with_logits(
                        a, t, weight, reduction=reduction, pos_weight=pos_weight),
                    lambda a, t: TF.binary_cross_entropy_with_logits(
                        a, t, torch_or_none(weight), reduction=reduction,
                        pos_weight=torch_or_none(pos_weight)),
                    [z, target], "float64", cotangent)


@pytest.mark.parametrize("rank, weight_kind, reduction, dtype", list(
    itertools.product(BCE_SHAPES, BCE_WEIGHTS, REDUCTIONS, DTYPES)))
def test_binary_cross_entropy(rank, weight_kind, reduction, dtype):
    """binary_cross_entropy and BCELoss with weight: value and gradients w.r.t. the
    probabilities and the targets, as torch's."""
    shape = BCE_SHAPES[rank]
    p = RNG.uniform(0.05, 0.95, size=shape).astype(dtype)
    target = RNG.uniform(size=shape).astype(dtype)
    weight = bce_weight(weight_kind, shape, dtype)
    cotangent = cotangent_for(shape, reduction, dtype)
    first_order(lambda a, t: F.binary_cross_entropy(a, t, weight, reduction=reduction),
                lambda a, t: TF.binary_cross_entropy(a, t, torch_or_none(weight),
                                                     reduction=reduction),
                [p, target], dtype, cotangent)
    first_order(lambda a, t: nn.BCELoss(weight, reduction=reduction)(a, t),
                lambda a, t: torch.nn.BCELoss(torch_or_none(weight),
                                              reduction=reduction)(a, t),
                [p, target], dtype, cotangent)


def test_every_row_ignored_gives_nan_in_both():
    """Every label ignored, reduction "mean": the loss is 0 / 0, NaN in chainrule and
    in torch (cross_entropy and nll_loss). Known difference, not checked: the logits'
    gradient is then NaN in chainrule (the derivative of 0 / 0) and 0 in torch (which
    gives an ignored row no gradient whatever it is divided by)."""
    z = RNG.normal(size=(3, C))
    labels = np.full(3, 1)
    for weight in (None, RNG.uniform(0.5, 2.0, size=C)):
        ours = F.cross_entropy(z, labels, weight, ignore_index=1)
        theirs = TF.cross_entropy(torch.tensor(z), torch.tensor(labels),
                                  torch_or_none(weight), ignore_index=1)
        assert np.isnan(np.asarray(ours)) and torch.isnan(theirs)
        with np.errstate(invalid="ignore"):  # (see test_nll_loss_of_no_rows_does_not_warn)
            ours = F.nll_loss(z, labels, weight, ignore_index=1)
        theirs = TF.nll_loss(torch.tensor(z), torch.tensor(labels), torch_or_none(weight),
                             ignore_index=1)
        assert np.isnan(np.asarray(ours)) and torch.isnan(theirs)


def test_nll_loss_of_no_rows_does_not_warn():
    """nll_loss with every row ignored gives NaN without a warning, as cross_entropy
    and torch do. Reproducer: ``F.nll_loss(np.zeros((2, 3)), [1, 1], ignore_index=1)``
    warns "invalid value encountered in scalar divide"."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.cross_entropy(np.zeros((2, C)), [1, 1], ignore_index=1)   # no warning
        assert np.isnan(F.nll_loss(np.zeros((2, C)), [1, 1], ignore_index=1))


def test_nll_loss_refuses_a_negative_label():
    """A label -1 (not the ignore_index) is out of range: torch's nll_loss refuses it,
    and so should chainrule's rather than read the last class. Reproducer:
    ``F.nll_loss(np.log([[0.5, 0.25, 0.25]]), [-1])`` gives -log 0.25 = 1.386."""
    log_p = RNG.normal(size=(3, C))
    labels = np.array([0, -1, 2])
    with pytest.raises(IndexError, match="out of bounds"):
        TF.nll_loss(torch.tensor(log_p), torch.tensor(labels))
    with pytest.raises(refusal_of_cross_entropy(log_p, labels)):
        F.nll_loss(log_p, labels)


def refusal_of_cross_entropy(logits, labels):
    """The error cross_entropy raises for these labels (the one nll_loss should too)."""
    with pytest.raises(Exception) as caught:
        F.cross_entropy(logits, labels)
    return type(caught.value)


@pytest.mark.parametrize("form", ["list", "tuple", "tensor"])
def test_weights_in_other_forms_give_the_arrays_numbers(form):
    """A class weight as a list, a tuple or a chainrule Tensor that does not require
    grad gives what the NumPy array gives, to the last bit."""
    z, labels = RNG.normal(size=(5, C)), RNG.integers(0, C, 5)
    weight = RNG.uniform(0.5, 2.0, size=C)
    other = {"list": weight.tolist, "tuple": lambda: tuple(weight),
             "tensor": lambda: cr.tensor(weight)}[form]()
    for options in ({}, {"label_smoothing": 0.2, "reduction": "sum"}):
        ours = F.cross_entropy(z, labels, other, **options)
        np.testing.assert_array_equal(np.asarray(getattr(ours, "data", ours)),
                                      np.asarray(F.cross_entropy(z, labels, weight,
                                                                 **options)))


def test_a_float64_tensor_pos_weight_keeps_a_float32_loss_float32():
    """binary_cross_entropy_with_logits of float32 logits with a float64 pos_weight is
    float32 in torch. Reproducer: ``F.binary_cross_entropy_with_logits(
    cr.tensor(np.zeros(3, np.float32)), np.zeros(3, np.float32),
    pos_weight=cr.tensor([3.0, 3.0, 3.0])).dtype`` is float64. (torch refuses a float64
    class weight for float32 logits in cross_entropy, "expected scalar type Float but
    found Double"; chainrule takes it, and gives float64 for a Tensor, float32 for an
    array.)"""
    z = RNG.normal(size=(2, 3)).astype(np.float32)
    pos_weight = RNG.uniform(0.5, 2.0, size=3)
    theirs = TF.binary_cross_entropy_with_logits(torch.tensor(z), torch.tensor(z),
                                                 pos_weight=torch.tensor(pos_weight))
    assert theirs.dtype == torch.float32
    ours = F.binary_cross_entropy_with_logits(cr.tensor(z), z,
                                              pos_weight=cr.tensor(pos_weight))
    assert np.asarray(ours.data).dtype == np.float32


# =======================================================================================
# 2. Second derivatives
# =======================================================================================

def second_order(ours_fn, theirs_fn, x, rtol=1e-12):
    """The Hessian of a scalar function of one flat vector, three ways in chainrule
    (cr.hessian, forward over reverse, reverse over reverse), against torch's."""
    theirs = torch.autograd.functional.hessian(theirs_fn, torch.tensor(x)).numpy()
    ours = [cr.hessian(ours_fn)(x), cr.jacfwd(cr.grad(ours_fn))(x),
            cr.jacrev(cr.grad(ours_fn))(x)]
    for hessian in ours:
        np.testing.assert_allclose(hessian, theirs, rtol=rtol, atol=1e-14)
    return ours


SMALL = {"NC": (3, C), "NCd": (2, C, 2)}


@pytest.mark.parametrize("rank, ignore, smoothing, weighted, reduction", list(
    itertools.product(SMALL, ["absent", "present"], SMOOTHINGS, [False, True],
                      REDUCTIONS)))
def test_cross_entropy_hessian_of_class_indices(rank, ignore, smoothing, weighted,
                                                reduction):
    """cross_entropy of class indices: the logits' Hessian, in both modes, as torch's."""
    shape = SMALL[rank]
    z = RNG.normal(size=shape)
    labels, ignore_kw = class_labels(shape, ignore)
    weight = class_weights(weighted, "float64")
    options = dict(reduction=reduction, label_smoothing=smoothing, **ignore_kw)
    cotangent = cotangent_for(labels.shape, reduction, "float64")
    second_order(
        lambda x: total(F.cross_entropy(cr.reshape(x, shape), labels, weight, **options),
                        cotangent),
        lambda x: total_torch(TF.cross_entropy(x.reshape(shape), torch.tensor(labels),
                                               torch_or_none(weight), **options), cotangent),
        z.reshape(-1))


def split(x, shape, reshape):
    n = int(np.prod(shape))
    return reshape(x[:n], shape), reshape(x[n:], shape)


@pytest.mark.parametrize("rank, smoothing, weighted, reduction", list(
    itertools.product(SMALL, SMOOTHINGS, [False, True], REDUCTIONS)))
def test_cross_entropy_hessian_of_class_probabilities(rank, smoothing, weighted,
                                                      reduction):
    """cross_entropy of class probabilities: the Hessian w.r.t. logits and targets
    together (their mixed derivatives too), as torch's."""
    shape = SMALL[rank]
    x = np.concatenate([RNG.normal(size=shape).ravel(),
                        probabilities_like(shape, "float64").ravel()])
    weight = class_weights(weighted, "float64")
    options = dict(reduction=reduction, label_smoothing=smoothing)
    cotangent = cotangent_for(shape[:1] + shape[2:], reduction, "float64")
    second_order(
        lambda v: total(F.cross_entropy(*split(v, shape, cr.reshape), weight, **options),
                        cotangent),
        lambda v: total_torch(TF.cross_entropy(*split(v, shape, torch.reshape),
                                               torch_or_none(weight), **options), cotangent),
        x)


@pytest.mark.parametrize("weight_kind, pos_weighted, reduction", list(
    itertools.product(BCE_WEIGHTS, [False, True], REDUCTIONS)))
def test_binary_cross_entropy_with_logits_hessian(weight_kind, pos_weighted, reduction):
    """binary_cross_entropy_with_logits: the Hessian w.r.t. logits and targets."""
    shape = (3, C)
    x = np.concatenate([RNG.normal(size=shape).ravel() * 3, RNG.uniform(size=12)])
    weight = bce_weight(weight_kind, shape, "float64")
    pos_weight = RNG.uniform(0.5, 3.0, size=C) if pos_weighted else None
    cotangent = cotangent_for(shape, reduction, "float64")
    second_order(
        lambda v: total(F.binary_cross_entropy_with_logits(
            *split(v, shape, cr.reshape), weight, reduction=reduction,
            pos_weight=pos_weight), cotangent),
        lambda v: total_torch(TF.binary_cross_entropy_with_logits(
            *split(v, shape, torch.reshape), torch_or_none(weight), reduction=reduction,
            pos_weight=torch_or_none(pos_weight)), cotangent),
        x)


@pytest.mark.parametrize("weight_kind, reduction", list(
    itertools.product(BCE_WEIGHTS, REDUCTIONS)))
def test_binary_cross_entropy_hessian(weight_kind, reduction):
    """binary_cross_entropy: the Hessian w.r.t. probabilities and targets, as torch's
    to rtol 1e-10: torch's double backward divides by p (1 - p) + 1e-12 (its epsilon),
    about 1e-12 / (p (1 - p)) off, up to 2e-11 for p in [0.05, 0.95]. chainrule's
    probability block is the exact one, y / p**2 + (1 - y) / (1 - p)**2 on the diagonal
    (times the weight and the reduction's factor), checked to rtol 1e-13."""
    shape = (3, C)
    x = np.concatenate([RNG.uniform(0.05, 0.95, size=12), RNG.uniform(size=12)])
    weight = bce_weight(weight_kind, shape, "float64")
    cotangent = cotangent_for(shape, reduction, "float64")
    ours = second_order(
        lambda v: total(F.binary_cross_entropy(*split(v, shape, cr.reshape), weight,
                                               reduction=reduction), cotangent),
        lambda v: total_torch(TF.binary_cross_entropy(
            *split(v, shape, torch.reshape), torch_or_none(weight), reduction=reduction),
            cotangent),
        x, rtol=1e-10)
    p, y = x[:12], x[12:]
    factor = np.ones(12) if weight is None else np.broadcast_to(weight, shape).reshape(-1)
    factor = factor * {"mean": 1 / 12, "sum": 1.0}.get(
        reduction, cotangent.reshape(-1) if cotangent is not None else 1.0)
    exact = np.diag(factor * (y / p**2 + (1 - y) / (1 - p)**2))
    for hessian in ours:
        np.testing.assert_allclose(hessian[:12, :12], exact, rtol=1e-13, atol=1e-14)


# =======================================================================================
# 3. cr.vmap and cr.jit
# =======================================================================================

B = 3  # examples mapped over


def batch_of_labels(shape, ignore):
    pairs = [class_labels(shape, ignore) for _ in range(B)]
    return np.stack([labels for labels, _ in pairs]), pairs[0][1]


@pytest.mark.parametrize("rank, ignore, smoothing, weighted", list(
    itertools.product(["NC", "NCd"], ["absent", "present"], SMOOTHINGS, [False, True])))
def test_vmap_per_example_cross_entropy(rank, ignore, smoothing, weighted):
    """cr.vmap over B examples with a shared weight: the losses (reduction="none") and
    the per-example gradients (reduction="mean") are a loop of torch calls'."""
    shape = SHAPES[rank]
    z = RNG.normal(size=(B,) + shape)
    labels, ignore_kw = batch_of_labels(shape, ignore)
    weight = class_weights(weighted, "float64")
    options = dict(label_smoothing=smoothing, **ignore_kw)
    losses = cr.vmap(lambda a, y: F.cross_entropy(a, y, weight, reduction="none",
                                                  **options))(z, labels)
    grads = cr.vmap(cr.grad(lambda a, y: F.cross_entropy(a, y, weight, **options)))(
        z, labels)
    for b in range(B):
        zt = torch.tensor(z[b], requires_grad=True)
        close(losses[b], TF.cross_entropy(zt, torch.tensor(labels[b]),
                                          torch_or_none(weight), reduction="none",
                                          **options))
        loss = TF.cross_entropy(zt, torch.tensor(labels[b]), torch_or_none(weight),
                                **options)
        close(grads[b], torch.autograd.grad(loss, zt)[0])


@pytest.mark.parametrize("smoothing, weighted", list(
    itertools.product(SMOOTHINGS, [False, True])))
def test_vmap_over_single_examples(smoothing, weighted):
    """cr.vmap of cross_entropy over the rows of (N, C), each one example (C,) with a
    0-d label, as a loop of torch calls on (C,): the losses (every reduction of one
    example; an ignored example's mean is NaN in both) and the gradients."""
    z = RNG.normal(size=(6, C))
    labels = np.array([1, 0, 1, 2, 3, 3])
    weight = class_weights(weighted, "float64")
    options = dict(label_smoothing=smoothing)
    for reduction, ignore_kw in itertools.product(REDUCTIONS, [{}, {"ignore_index": 1}]):
        losses = cr.vmap(lambda a, y: F.cross_entropy(a, y, weight, reduction=reduction,
                                                      **options, **ignore_kw))(z, labels)
        expected = [TF.cross_entropy(torch.tensor(z[i]), torch.tensor(labels[i]),
                                     torch_or_none(weight), reduction=reduction, **options,
                                     **ignore_kw) for i in range(6)]
        close(losses, torch.stack(expected))
    grads = cr.vmap(cr.grad(lambda a, y: F.cross_entropy(a, y, weight, **options)))(
        z, labels)
    for i in range(6):
        zt = torch.tensor(z[i], requires_grad=True)
        loss = TF.cross_entropy(zt, torch.tensor(labels[i]), torch_or_none(weight),
                                **options)
        close(grads[i], torch.autograd.grad(loss, zt)[0])


@pytest.mark.parametrize("smoothing, weighted", list(
    itertools.product(SMOOTHINGS, [False, True])))
def test_vmap_per_example_cross_entropy_of_probabilities(smoothing, weighted):
    """cr.vmap over B examples of class-probability targets: losses ("none") and
    per-example gradients w.r.t. logits, targets and the shared weight, as a loop of
    torch calls."""
    shape = SHAPES["NCd"]
    z = RNG.normal(size=(B,) + shape)
    target = np.stack([probabilities_like(shape, "float64") for _ in range(B)])
    weight = class_weights(weighted, "float64")
    losses = cr.vmap(lambda a, t: F.cross_entropy(a, t, weight, reduction="none",
                                                  label_smoothing=smoothing))(z, target)
    gz, gt = cr.vmap(cr.grad(lambda a, t: F.cross_entropy(
        a, t, weight, label_smoothing=smoothing), argnums=(0, 1)))(z, target)
    if weighted:  # and each example's gradient w.r.t. the shared weight, which torch has
        gw = cr.vmap(cr.grad(lambda w, a, t: F.cross_entropy(a, t, w,
                                                             label_smoothing=smoothing)),
                     in_axes=(None, 0, 0))(weight, z, target)
    for b in range(B):
        zt, tt = torch.tensor(z[b], requires_grad=True), torch.tensor(target[b],
                                                                      requires_grad=True)
        wt = None if weight is None else torch.tensor(weight, requires_grad=True)
        close(losses[b], TF.cross_entropy(zt, tt, wt, reduction="none",
                                          label_smoothing=smoothing))
        loss = TF.cross_entropy(zt, tt, wt, label_smoothing=smoothing)
        expected = torch.autograd.grad(loss, (zt, tt) + ((wt,) if weighted else ()))
        close(gz[b], expected[0])
        close(gt[b], expected[1])
        if weighted:
            close(gw[b], expected[2])


@pytest.mark.parametrize("loss", ["nll_loss", "bce_with_logits", "bce"])
def test_vmap_per_example_other_losses(loss):
    """cr.vmap of nll_loss (class weights, ignore_index), BCE with logits (weight,
    pos_weight) and BCE (weight), each shared by the examples: losses ("none") and
    per-example gradients, as a loop of torch calls."""
    shape = (5, C)
    z = RNG.normal(size=(B,) + shape)
    if loss == "nll_loss":
        targets, kw = batch_of_labels(shape, "present")
        weight = class_weights(True, "float64")

        def ours(a, y, reduction):
            return F.nll_loss(a, y, weight, reduction=reduction, **kw)

        def theirs(a, y, reduction):
            return TF.nll_loss(a, torch.tensor(y), torch.tensor(weight),
                               reduction=reduction, **kw)
    else:
        targets = RNG.uniform(size=(B,) + shape)
        weight = bce_weight("row", shape, "float64")
        pos_weight = RNG.uniform(0.5, 3.0, size=C)
        if loss == "bce":
            z = RNG.uniform(0.05, 0.95, size=(B,) + shape)

        def ours(a, t, reduction):
            if loss == "bce":
                return F.binary_cross_entropy(a, t, weight, reduction=reduction)
            return F.binary_cross_entropy_with_logits(a, t, weight, reduction=reduction,
                                                      pos_weight=pos_weight)

        def theirs(a, t, reduction):
            if loss == "bce":
                return TF.binary_cross_entropy(a, torch.tensor(t), torch.tensor(weight),
                                               reduction=reduction)
            return TF.binary_cross_entropy_with_logits(
                a, torch.tensor(t), torch.tensor(weight), reduction=reduction,
                pos_weight=torch.tensor(pos_weight))

    losses = cr.vmap(lambda a, t: ours(a, t, "none"))(z, targets)
    grads = cr.vmap(cr.grad(lambda a, t: ours(a, t, "mean")))(z, targets)
    for b in range(B):
        zt = torch.tensor(z[b], requires_grad=True)
        close(losses[b], theirs(zt, targets[b], "none"))
        close(grads[b], torch.autograd.grad(theirs(zt, targets[b], "mean"), zt)[0])


JIT_CASES = {
    "indices": lambda z, y, w: F.cross_entropy(z, y, w, label_smoothing=0.2,
                                               ignore_index=2),
    "indices, none": lambda z, y, w: cr.sum(F.cross_entropy(
        z, y, w, reduction="none", ignore_index=2) * np.arange(15.0).reshape(3, 5)),
    "probabilities": lambda z, y, w: F.cross_entropy(z, cr.softmax(y * 1.0, axis=1), w,
                                                     label_smoothing=0.2),
    "nll_loss": lambda z, y, w: F.nll_loss(z, y, w, ignore_index=2, reduction="sum"),
    "bce_with_logits": lambda z, y, w: F.binary_cross_entropy_with_logits(
        z, y / 3.0, pos_weight=w.reshape(1, C, 1)),
    "bce": lambda z, y, w: F.binary_cross_entropy(cr.sigmoid(z), y / 3.0,
                                                  w.reshape(1, C, 1), reduction="sum"),
}


@pytest.mark.parametrize("case", JIT_CASES)
@pytest.mark.parametrize("labels_traced", [False, True])
def test_jit_gives_the_eager_numbers_bit_for_bit(case, labels_traced):
    """cr.jit of each loss (and of its cr.grad) gives eager chainrule's value and
    gradient to the last bit, the labels or targets closed over or passed in (traced);
    the weight passed in."""
    fn = JIT_CASES[case]
    z = RNG.normal(size=(3, C, 5))
    labels, _ = class_labels((3, C, 5), "present")
    if case == "probabilities":
        labels = RNG.normal(size=(3, C, 5))
    elif case.startswith("bce"):
        labels = RNG.uniform(0, 3, size=(3, C, 5))
    weight = class_weights(True, "float64")
    if labels_traced:
        eager, jitted = fn, cr.jit(fn)
        args = (z, labels, weight)
    else:
        eager = jitted_fn = (lambda a, w: fn(a, labels, w))
        jitted = cr.jit(jitted_fn)
        args = (z, weight)
    for _ in range(2):  # the first call traces, the second replays
        np.testing.assert_array_equal(np.asarray(jitted(*args)), np.asarray(eager(*args)))
    grad = cr.grad(eager, argnums=(0, len(args) - 1))
    jitted_grad = cr.jit(grad)
    for _ in range(2):
        for ours, expected in zip(jitted_grad(*args), grad(*args)):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(expected))


def test_labels_of_minus_100_under_jit_and_vmap_are_refused_not_misread():
    """Labels of -100 with the default ignore_index, traced by cr.jit or batched by
    cr.vmap: their values are not known when the program is made, so chainrule checks
    them and refuses in one line, naming cross_entropy and the labels' range (torch,
    eager, ignores those rows). Eager chainrule ignores them as torch does."""
    z = RNG.normal(size=(4, C))
    labels = np.array([0, -100, 2, 1])
    expected = TF.cross_entropy(torch.tensor(z), torch.tensor(labels))
    close(F.cross_entropy(z, labels), expected)
    message = re.escape("cross_entropy: labels must lie in [0, 4), got values from -100 to 2")
    with pytest.raises(ValueError, match=message):
        cr.jit(lambda a, y: F.cross_entropy(a, y))(z, labels)
    with pytest.raises(ValueError, match=message):
        cr.vmap(lambda a, y: F.cross_entropy(a, y))(z[None], labels[None])


def test_an_explicit_ignore_index_of_minus_100_under_jit_is_the_default_and_refused():
    """Under cr.jit an ``ignore_index`` of -100 cannot be told from the default, which a
    program does not look for (it keeps the fused path): labels of -100 are refused in
    one line, never misread; another ``ignore_index`` has its rows ignored, as torch."""
    z = RNG.normal(size=(4, C))
    labels = np.array([0, -100, 2, 1])
    with pytest.raises(ValueError, match=re.escape(
            "cross_entropy: labels must lie in [0, 4), got values from -100 to 2")):
        cr.jit(lambda a, y: F.cross_entropy(a, y, ignore_index=-100))(z, labels)
    marked = np.where(labels == -100, -1, labels)
    ours = cr.jit(lambda a, y: F.cross_entropy(a, y, ignore_index=-1))(z, marked)
    close(ours, TF.cross_entropy(torch.tensor(z), torch.tensor(labels), ignore_index=-100))


# =======================================================================================
# 4. The weights' own gradients
# =======================================================================================

@pytest.mark.parametrize("rank, smoothing, reduction", list(
    itertools.product(["C", "NC", "NCd"], SMOOTHINGS, REDUCTIONS)))
def test_class_weight_gradient_with_probabilities_matches_torch(rank, smoothing, reduction):
    """cross_entropy of class probabilities with a weight Tensor that requires grad:
    torch differentiates this one (its composite form), and chainrule's weight.grad and
    cr.grad w.r.t. the weight are torch's."""
    shape = SHAPES[rank]
    z, target = RNG.normal(size=shape), probabilities_like(shape, "float64")
    weight = RNG.uniform(0.5, 2.0, size=C)
    cotangent = cotangent_for(shape[:1] + shape[2:] if len(shape) > 1 else (), reduction,
                              "float64")
    w = cr.tensor(weight, requires_grad=True)
    options = dict(reduction=reduction, label_smoothing=smoothing)
    total(F.cross_entropy(z, target, w, **options), cotangent).backward()
    by_grad = cr.grad(lambda v: total(F.cross_entropy(z, target, v, **options),
                                      cotangent))(weight)
    wt = torch.tensor(weight, requires_grad=True)
    total_torch(TF.cross_entropy(torch.tensor(z), torch.tensor(target), wt, **options),
                cotangent).backward()
    close(w.grad, wt.grad)
    close(by_grad, wt.grad)


def weight_gradient_against_differences(ours, theirs, weight, scale):
    """chainrule's gradient w.r.t. a weight (by Tensor.backward and cr.grad) against
    central differences of torch's loss, step 1e-5, within the truncation and rounding
    bound of seeds_and_tolerances.central_difference_atol for a loss of size ``scale``."""
    w = cr.tensor(weight, requires_grad=True)
    ours(w).backward()
    by_grad = cr.grad(ours)(weight)
    h = 1e-5
    differences = np.zeros_like(weight)
    for k in np.ndindex(weight.shape):
        step = np.zeros_like(weight)
        step[k] = h
        differences[k] = (float(theirs(torch.tensor(weight + step)))
                          - float(theirs(torch.tensor(weight - step)))) / (2 * h)
    atol = central_difference_atol(h, scale)
    np.testing.assert_allclose(w.grad, differences, rtol=0, atol=atol)
    np.testing.assert_allclose(by_grad, differences, rtol=0, atol=atol)
    np.testing.assert_allclose(w.grad, by_grad, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("loss, ignore, smoothing, reduction", [
    case for case in itertools.product(["cross_entropy", "nll_loss"], ["absent", "present"],
                                       SMOOTHINGS, REDUCTIONS)
    if not (case[0] == "nll_loss" and case[2])])
def test_class_weight_gradient_of_class_indices_against_differences(loss, ignore, smoothing,
                                                                    reduction):
    """cross_entropy and nll_loss of class indices with a weight Tensor that requires
    grad: chainrule differentiates it; torch refuses ("nll_loss_forward is not
    differentiable with respect to argument 'weight'"), so the check is against central
    differences of torch's loss."""
    shape = SHAPES["NCd"]
    z = RNG.normal(size=shape)
    labels, ignore_kw = class_labels(shape, ignore)
    weight = RNG.uniform(0.5, 2.0, size=C)
    cotangent = cotangent_for(labels.shape, reduction, "float64")
    ours_fn, theirs_fn = (F.cross_entropy, TF.cross_entropy) if loss == "cross_entropy" \
        else (F.nll_loss, TF.nll_loss)
    options = dict(reduction=reduction, **ignore_kw)
    if smoothing:
        options["label_smoothing"] = smoothing
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'weight'"):
        theirs_fn(torch.tensor(z), torch.tensor(labels),
                  torch.tensor(weight, requires_grad=True), **options)
    weight_gradient_against_differences(
        lambda w: total(ours_fn(z, labels, w, **options), cotangent),
        lambda w: total_torch(theirs_fn(torch.tensor(z), torch.tensor(labels), w,
                                        **options), cotangent),
        weight, scale=float(np.abs(z).sum()))


@pytest.mark.parametrize("loss, which, reduction", [
    ("bce_with_logits", "weight", r) for r in REDUCTIONS] + [
    ("bce_with_logits", "pos_weight", r) for r in REDUCTIONS] + [
    ("bce", "weight", r) for r in REDUCTIONS])
def test_bce_weight_gradients_against_differences(loss, which, reduction):
    """BCE's weight and BCE with logits' weight and pos_weight, as Tensors that require
    grad: chainrule differentiates them; torch refuses (its binary_cross_entropy(_with_
    logits) is not differentiable w.r.t. weight or pos_weight), so the check is against
    central differences of torch's loss."""
    shape = (5, C)
    z, target = RNG.normal(size=shape) * 2, RNG.uniform(size=shape)
    p = RNG.uniform(0.05, 0.95, size=shape)
    cotangent = cotangent_for(shape, reduction, "float64")
    weight = RNG.uniform(0.5, 2.0, size=shape if which == "weight" else (C,))
    other = RNG.uniform(0.5, 2.0, size=C)  # the other weight, a constant

    def ours(w):
        if loss == "bce":
            return total(F.binary_cross_entropy(p, target, w, reduction=reduction),
                         cotangent)
        kw = {"pos_weight": other, "weight": w} if which == "weight" else \
            {"pos_weight": w, "weight": other}
        return total(F.binary_cross_entropy_with_logits(z, target, kw["weight"],
                                                        reduction=reduction,
                                                        pos_weight=kw["pos_weight"]),
                     cotangent)

    def theirs(w):
        if loss == "bce":
            return total_torch(TF.binary_cross_entropy(torch.tensor(p), torch.tensor(target),
                                                       w, reduction=reduction), cotangent)
        kw = {"pos_weight": torch.tensor(other), "weight": w} if which == "weight" else \
            {"pos_weight": w, "weight": torch.tensor(other)}
        return total_torch(TF.binary_cross_entropy_with_logits(
            torch.tensor(z), torch.tensor(target), kw["weight"], reduction=reduction,
            pos_weight=kw["pos_weight"]), cotangent)

    with pytest.raises(RuntimeError, match=f"not differentiable with respect to argument "
                                           f"'{which}'"):
        theirs(torch.tensor(weight, requires_grad=True))
    weight_gradient_against_differences(ours, theirs, weight,
                                        scale=float(np.abs(z).sum() + 10 * z.size))


# =======================================================================================
# 5. The modules' state_dict
# =======================================================================================

MODULES = [
    ("CrossEntropyLoss", {}), ("CrossEntropyLoss", {"weight": C}),
    ("NLLLoss", {}), ("NLLLoss", {"weight": C}),
    ("BCELoss", {}), ("BCELoss", {"weight": (5, C)}),
    ("BCEWithLogitsLoss", {}), ("BCEWithLogitsLoss", {"weight": (5, C)}),
    ("BCEWithLogitsLoss", {"pos_weight": C}),
    ("BCEWithLogitsLoss", {"weight": C, "pos_weight": C}),
]


@pytest.mark.parametrize("name, sizes", MODULES)
def test_module_state_dict_holds_the_weights_as_torchs(name, sizes):
    """A loss module's state_dict() has torch's keys (weight, pos_weight; absent when
    None) and values; loading torch's state_dict into chainrule's and chainrule's into
    torch's gives the same weights back."""
    weights = {key: RNG.uniform(0.5, 2.0, size=size) for key, size in sizes.items()}
    ours = getattr(nn, name)(**weights)
    theirs = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in weights.items()})
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key in theirs_state:
        close(ours_state[key], theirs_state[key])
    # torch's into a freshly built chainrule module, and back
    other = {key: RNG.uniform(0.5, 2.0, size=size) for key, size in sizes.items()}
    fresh = getattr(nn, name)(**other)
    fresh.load_state_dict(theirs_state)
    for key in theirs_state:
        close(fresh.state_dict()[key], theirs_state[key])
    fresh_torch = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in other.items()})
    fresh_torch.load_state_dict({k: torch.tensor(np.asarray(v))
                                 for k, v in ours.state_dict().items()})
    for key in theirs_state:
        close(ours_state[key], fresh_torch.state_dict()[key])


def test_module_with_loaded_weights_computes_what_torch_computes():
    """CrossEntropyLoss and BCEWithLogitsLoss whose weights came from load_state_dict
    compute torch's loss under those weights."""
    weight, pos_weight = RNG.uniform(0.5, 2.0, size=C), RNG.uniform(0.5, 2.0, size=C)
    z, labels, target = RNG.normal(size=(5, C)), RNG.integers(0, C, 5), RNG.uniform(
        size=(5, C))
    ce = nn.CrossEntropyLoss(np.ones(C), label_smoothing=0.1)
    ce.load_state_dict({"weight": torch.tensor(weight)})
    close(ce(z, labels), torch.nn.CrossEntropyLoss(torch.tensor(weight), label_smoothing=0.1)(
        torch.tensor(z), torch.tensor(labels)))
    bce = nn.BCEWithLogitsLoss(pos_weight=np.ones(C))
    bce.load_state_dict({"pos_weight": pos_weight})
    close(bce(z, target), torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pos_weight))(
        torch.tensor(z), torch.tensor(target)))


# =======================================================================================
# 6. Refusals
# =======================================================================================

def refused(error, call, *names):
    """``call()`` raises ``error`` with a one-line message naming each of ``names``."""
    with pytest.raises(error) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message
    for name in names:
        assert name in message, (name, message)
    return message


Z = np.zeros((4, 3))
Y = np.array([0, 1, 2, 1])
T = np.full((4, 3), 0.25)

# (what, chainrule's call, its error and the words its message names, torch's call and
# its error: every one of these torch refuses too)
REFUSALS = {
    "cross_entropy weight of the wrong shape": (
        lambda: F.cross_entropy(Z, Y, np.ones(4)),
        ValueError, ["cross_entropy", "weight", "(4,)", "(4, 3)", "(3,)"],
        lambda: TF.cross_entropy(torch.tensor(Z), torch.tensor(Y), torch.ones(4)),
        RuntimeError),
    "nll_loss weight of the wrong shape": (
        lambda: F.nll_loss(Z, Y, np.ones(2)),
        ValueError, ["nll_loss", "weight", "(2,)", "(4, 3)", "(3,)"],
        lambda: TF.nll_loss(torch.tensor(Z), torch.tensor(Y), torch.ones(2)),
        RuntimeError),
    "CrossEntropyLoss weight of the wrong shape, at its first call": (
        lambda: nn.CrossEntropyLoss(np.ones(5))(Z, Y),
        ValueError, ["cross_entropy", "weight", "(5,)", "(4, 3)"],
        lambda: torch.nn.CrossEntropyLoss(torch.ones(5))(torch.tensor(Z), torch.tensor(Y)),
        RuntimeError),
    "cross_entropy reduction in weight's place": (
        lambda: F.cross_entropy(Z, Y, "sum"),
        TypeError, ["cross_entropy", "weight", "'sum'", "reduction='sum'"],
        lambda: TF.cross_entropy(torch.tensor(Z), torch.tensor(Y), "sum"), TypeError),
    "nll_loss reduction in weight's place": (
        lambda: F.nll_loss(Z, Y, "sum"),
        TypeError, ["nll_loss", "weight", "'sum'", "reduction='sum'"],
        lambda: TF.nll_loss(torch.tensor(Z), torch.tensor(Y), "sum"), TypeError),
    "binary_cross_entropy reduction in weight's place": (
        lambda: F.binary_cross_entropy(T, T, "none"),
        TypeError, ["binary_cross_entropy", "weight", "'none'", "reduction='none'"],
        lambda: TF.binary_cross_entropy(torch.tensor(T), torch.tensor(T), "none"),
        AttributeError),  # torch: 'str' object has no attribute 'size'
    "binary_cross_entropy_with_logits reduction in weight's place": (
        lambda: F.binary_cross_entropy_with_logits(Z, T, "mean"),
        TypeError, ["binary_cross_entropy_with_logits", "weight", "'mean'"],
        lambda: TF.binary_cross_entropy_with_logits(torch.tensor(Z), torch.tensor(T),
                                                    "mean"), TypeError),
    "CrossEntropyLoss reduction in weight's place": (
        lambda: nn.CrossEntropyLoss("sum"),
        TypeError, ["CrossEntropyLoss", "weight", "'sum'", "reduction='sum'"],
        lambda: torch.nn.CrossEntropyLoss("sum"), TypeError),
    "BCEWithLogitsLoss reduction in weight's place": (
        lambda: nn.BCEWithLogitsLoss("sum"),
        TypeError, ["BCEWithLogitsLoss", "weight", "'sum'"],
        lambda: torch.nn.BCEWithLogitsLoss("sum"), TypeError),
    "pos_weight that does not broadcast": (
        lambda: F.binary_cross_entropy_with_logits(Z, T, pos_weight=np.ones(4)),
        ValueError, ["binary_cross_entropy_with_logits", "pos_weight", "(4,)", "(4, 3)"],
        lambda: TF.binary_cross_entropy_with_logits(torch.tensor(Z), torch.tensor(T),
                                                    pos_weight=torch.ones(4)),
        RuntimeError),
    "BCE with logits weight that does not broadcast": (
        lambda: F.binary_cross_entropy_with_logits(Z, T, np.ones(4)),
        ValueError, ["binary_cross_entropy_with_logits", "weight", "(4,)", "(4, 3)"],
        lambda: TF.binary_cross_entropy_with_logits(torch.tensor(Z), torch.tensor(T),
                                                    torch.ones(4)), RuntimeError),
    "BCE weight that would grow the losses": (
        lambda: F.binary_cross_entropy(T, T, np.ones((2, 4, 3))),
        ValueError, ["binary_cross_entropy", "weight", "(2, 4, 3)", "(4, 3)"],
        lambda: TF.binary_cross_entropy(torch.tensor(T), torch.tensor(T),
                                        torch.ones(2, 4, 3, dtype=torch.float64)),
        RuntimeError),
    "integer targets of the logits' shape": (
        lambda: F.cross_entropy(Z, np.zeros((4, 3), np.int64)),
        ValueError, ["cross_entropy", "(4, 3)", "int64", "probabilities"],
        lambda: TF.cross_entropy(torch.tensor(Z), torch.zeros(4, 3, dtype=torch.int64)),
        RuntimeError),
    "ignore_index with probability targets": (
        lambda: F.cross_entropy(Z, T, ignore_index=1),
        ValueError, ["cross_entropy", "ignore_index=1", "(4, 3)", "probabilities"],
        lambda: TF.cross_entropy(torch.tensor(Z), torch.tensor(T), ignore_index=1),
        RuntimeError),
}


@pytest.mark.parametrize("what", REFUSALS)
def test_refusals_are_one_line_and_torch_refuses_too(what):
    """Each mistake is refused in one line naming the function (or module), the argument
    and the shapes or value; torch refuses each too, in its own words (a string in
    binary_cross_entropy's weight place as an AttributeError, 'str' object has no
    attribute 'size'; a weight of the wrong shape in CrossEntropyLoss at its first call,
    in both). torch accepts what test_a_negative_ignore_index_with_probability_targets
    shows."""
    ours, error, names, theirs, torch_error = REFUSALS[what]
    refused(error, ours, *names)
    with pytest.raises(torch_error):
        theirs()


def test_a_negative_ignore_index_with_probability_targets():
    """ignore_index=-1 with class-probability targets: chainrule refuses it (it applies
    to class indices), naming it; torch accepts a negative ignore_index here and
    ignores it (it refuses only ignore_index >= 0), so its value is the loss without
    it, which chainrule gives when ignore_index is left out."""
    z, target = RNG.normal(size=(4, 3)), probabilities_like((4, 3), "float64")
    refused(ValueError, lambda: F.cross_entropy(z, target, ignore_index=-1),
            "cross_entropy", "ignore_index=-1", "(4, 3)")
    close(F.cross_entropy(z, target),
          TF.cross_entropy(torch.tensor(z), torch.tensor(target), ignore_index=-1))
