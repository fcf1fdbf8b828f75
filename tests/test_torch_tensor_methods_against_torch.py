"""PyTorch's Tensor methods that chainrule's Tensor has under the same names
(methods/torch_math.py, torch_shapes.py, torch_inplace.py), each against torch 2.13 in
float64: the values (rtol 1e-12), and for the differentiable ones the gradient of a
random weighted sum, by backward() and by cr.grad (the traced values' path). The
in-place forms: the tensor afterwards equals torch's, the write works inside
cr.no_grad() on a tensor that requires grad and is refused outside it in one line, and
the version counter moves. The random fills: torch's moments within 5 standard errors,
and the same numbers again from a generator seeded the same.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule.methods import torch_inplace as inplace
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261231)
RTOL = 1e-12


def normal(*shape):
    return RNG.standard_normal(shape)


def within(low, high):
    return lambda *shape: RNG.uniform(low, high, shape)


def positive(*shape):
    return RNG.uniform(0.5, 3.0, shape)


def distinct(*shape):
    """Entries with no ties (so max, kthvalue and the like have one answer)."""
    return RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.37 + normal(*shape) * 0.01


def index(high, *shape):
    return RNG.integers(0, high, shape)


def unique_index(high, n):
    return RNG.permutation(high)[:n]


class Lib:
    """The constants of a case as one library wants them (NumPy's or torch's)."""

    def __init__(self, constants, to_torch):
        for key, value in constants.items():
            if to_torch and isinstance(value, np.ndarray):
                value = torch.from_numpy(value.copy())
            setattr(self, key, value)


def _t(x):
    return torch.tensor(np.asarray(x), dtype=torch.float64, requires_grad=True)


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.data if hasattr(x, "data") else x)


# id: (inputs (differentiable ones), constants, the call on (x, *others, c), differentiable)
U = [  # unary elementwise: name, domain
    ("floor", normal), ("ceil", normal), ("trunc", normal), ("fix", normal),
    ("frac", normal), ("reciprocal", positive), ("rsqrt", positive), ("square", normal),
    ("acos", within(-0.9, 0.9)), ("arccos", within(-0.9, 0.9)),
    ("asin", within(-0.9, 0.9)), ("arcsin", within(-0.9, 0.9)), ("atan", normal),
    ("arctan", normal), ("acosh", within(1.1, 3.0)), ("arccosh", within(1.1, 3.0)),
    ("asinh", normal), ("arcsinh", normal), ("atanh", within(-0.9, 0.9)),
    ("arctanh", within(-0.9, 0.9)), ("cosh", normal), ("sinh", normal), ("exp2", normal),
    ("deg2rad", normal), ("rad2deg", normal), ("negative", normal), ("positive", normal),
    ("absolute", normal), ("sgn", normal), ("sinc", normal), ("logit", within(0.05, 0.95)),
]
CASES = {}
for _name, _domain in U:
    CASES[_name] = ((lambda d=_domain: [d(3, 4)]), {},
                    (lambda x, c, n=_name: getattr(x, n)()), True)

B = [  # binary: name, domains, differentiable
    ("atan2", normal, normal, True), ("arctan2", normal, normal, True),
    ("hypot", normal, normal, True), ("fmod", normal, positive, True),
    ("remainder", normal, positive, True), ("true_divide", normal, positive, True),
    ("multiply", normal, normal, True), ("xlogy", normal, positive, True),
    ("float_power", positive, normal, True), ("floor_divide", normal, positive, False),
    ("logaddexp", normal, normal, True), ("logaddexp2", normal, normal, True),
    ("fmax", normal, normal, True), ("fmin", normal, normal, True),
    ("copysign", normal, normal, True), ("heaviside", normal, normal, False),
]
for _name, _d1, _d2, _diff in B:
    CASES[_name] = ((lambda a=_d1, b=_d2: [a(3, 4), b(3, 4)]), {},
                    (lambda x, y, c, n=_name: getattr(x, n)(y)), _diff)

CASES.update({
    "xlogy-zeros": (lambda: [np.array([0.0, 0.0, 1.5]), positive(3)], {},
                    lambda x, y, c: x.xlogy(y), True),
    "divide": (lambda: [normal(3, 4), positive(3, 4)], {}, lambda x, y, c: x.divide(y), True),
    "fmax-nan": (lambda: [np.array([1.0, np.nan, np.nan]), np.array([np.nan, 2.0, np.nan])],
                 {}, lambda x, y, c: x.fmax(y), False),
    "heaviside-zeros": (lambda: [np.array([-1.0, 0.0, 2.0, 0.0]), normal(4)], {},
                        lambda x, y, c: x.heaviside(y), False),
    "logit-eps": (lambda: [RNG.uniform(0, 1, (3, 4))], {}, lambda x, c: x.logit(0.2), True),
    "nansum": (lambda: [normal(3, 4)], {}, lambda x, c: x.nansum(1), True),
    "nanmean": (lambda: [normal(3, 4)], {}, lambda x, c: x.nanmean(0, keepdim=True), True),
    "nansum-nan": (lambda: [np.array([[1.0, np.nan], [np.nan, np.nan]])], {},
                   lambda x, c: x.nansum(1), False),
    "nanmean-nan": (lambda: [np.array([[1.0, np.nan, 2.0], [np.nan, 4.0, 0.5]])], {},
                    lambda x, c: x.nanmean(1), False),
    "diff": (lambda: [normal(3, 5)], {}, lambda x, c: x.diff(), True),
    "diff-n2-dim0": (lambda: [normal(4, 3)], {}, lambda x, c: x.diff(2, 0), True),
    "diff-prepend": (lambda: [normal(3, 5)], {"p": normal(3, 2), "a": normal(3, 1)},
                     lambda x, c: x.diff(dim=1, prepend=c.p, append=c.a), True),
    "argsort": (lambda: [distinct(3, 5)], {}, lambda x, c: x.argsort(), False),
    "argsort-descending-dim0": (lambda: [distinct(4, 3)], {},
                                lambda x, c: x.argsort(0, descending=True), False),
    "argsort-ties-stable": (lambda: [np.array([3.0, 1.0, 2.0, 1.0, 3.0, 2.0])], {},
                            lambda x, c: x.argsort(descending=True, stable=True), False),
    "divide-trunc": (lambda: [normal(3, 4) * 5, positive(3, 4)], {},
                     lambda x, y, c: x.divide(y, rounding_mode="trunc"), False),
    "divide-floor": (lambda: [normal(3, 4) * 5, positive(3, 4)], {},
                     lambda x, y, c: x.divide(y, rounding_mode="floor"), False),
    "subtract-alpha": (lambda: [normal(3, 4), normal(3, 4)], {},
                       lambda x, y, c: x.subtract(y, alpha=2.5), True),
    "clamp_min": (lambda: [normal(3, 4)], {}, lambda x, c: x.clamp_min(0.1), True),
    "clamp_max": (lambda: [normal(3, 4)], {}, lambda x, c: x.clamp_max(0.1), True),
    "lerp-scalar": (lambda: [normal(3, 4), normal(3, 4)], {},
                    lambda x, y, c: x.lerp(y, 0.3), True),
    "lerp-tensor": (lambda: [normal(3, 4), normal(3, 4)], {"w": RNG.uniform(0, 1, (3, 4))},
                    lambda x, y, c: x.lerp(y, c.w), True),
    "addcmul": (lambda: [normal(3), normal(3), normal(3)], {},
                lambda x, a, b, c: x.addcmul(a, b, value=0.7), True),
    "addcdiv": (lambda: [normal(3), normal(3), positive(3)], {},
                lambda x, a, b, c: x.addcdiv(a, b, value=-1.3), True),
    "addmm": (lambda: [normal(2, 4), normal(2, 3), normal(3, 4)], {},
              lambda x, a, b, c: x.addmm(a, b, beta=0.5, alpha=2.0), True),
    "addmv": (lambda: [normal(2), normal(2, 3), normal(3)], {},
              lambda x, a, b, c: x.addmv(a, b, beta=1.5, alpha=-1.0), True),
    "mv": (lambda: [normal(2, 3), normal(3)], {}, lambda x, v, c: x.mv(v), True),
    "ger": (lambda: [normal(2), normal(3)], {}, lambda x, v, c: x.ger(v), True),
    "outer": (lambda: [normal(2), normal(3)], {}, lambda x, v, c: x.outer(v), True),
    "inverse": (lambda: [normal(3, 3) + 3 * np.eye(3)], {}, lambda x, c: x.inverse(), True),
    "det": (lambda: [normal(3, 3)], {}, lambda x, c: x.det(), True),
    "logdet": (lambda: [normal(3, 3) + 4 * np.eye(3)], {}, lambda x, c: x.logdet(), True),
    "slogdet": (lambda: [normal(3, 3)], {}, lambda x, c: x.slogdet()[1], True),
    "dist": (lambda: [normal(3, 4), normal(3, 4)], {}, lambda x, y, c: x.dist(y), True),
    "dist-p3": (lambda: [normal(3, 4), normal(3, 4)], {}, lambda x, y, c: x.dist(y, 3), True),
    "amax": (lambda: [distinct(3, 4)], {}, lambda x, c: x.amax(1), True),
    "amax-ties": (lambda: [np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])], {},
                  lambda x, c: x.amax(1, keepdim=True), True),
    "amin": (lambda: [distinct(3, 4)], {}, lambda x, c: x.amin((0, 1)), True),
    "aminmax-min": (lambda: [distinct(3, 4)], {}, lambda x, c: x.aminmax(dim=0).min, True),
    "aminmax-max": (lambda: [distinct(3, 4)], {}, lambda x, c: x.aminmax().max, True),
    "cummax": (lambda: [distinct(3, 5)], {}, lambda x, c: x.cummax(1).values, True),
    "cummax-indices": (lambda: [np.array([1.0, 3.0, 2.0, 3.0, 0.0])], {},
                       lambda x, c: x.cummax(0).indices, False),
    "cummin": (lambda: [distinct(4, 3)], {}, lambda x, c: x.cummin(0).values, True),
    "cummin-indices": (lambda: [np.array([3.0, 1.0, 2.0, 1.0])], {},
                       lambda x, c: x.cummin(0).indices, False),
    "logcumsumexp": (lambda: [normal(3, 5)], {}, lambda x, c: x.logcumsumexp(1), True),
    "sort-values": (lambda: [distinct(3, 5)], {}, lambda x, c: x.sort(1).values, True),
    "sort-descending-indices": (lambda: [distinct(4, 3)], {},
                                lambda x, c: x.sort(0, descending=True).indices, False),
    "kthvalue": (lambda: [distinct(3, 5)], {}, lambda x, c: x.kthvalue(2, 1).values, True),
    "kthvalue-indices": (lambda: [distinct(3, 5)], {},
                         lambda x, c: x.kthvalue(3, 0, keepdim=True).indices, False),
    "count_nonzero": (lambda: [np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])], {},
                      lambda x, c: x.count_nonzero(1), False),
    "nonzero": (lambda: [np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])], {},
                lambda x, c: x.nonzero(), False),
    "nonzero-tuple": (lambda: [np.array([[0.0, 1.0], [2.0, 0.0]])], {},
                      lambda x, c: x.nonzero(as_tuple=True)[1], False),
    "argwhere": (lambda: [np.array([[0.0, 1.0], [2.0, 0.0]])], {},
                 lambda x, c: x.argwhere(), False),
    "masked_select": (lambda: [normal(3, 4)], {"m": RNG.random((3, 4)) < 0.5},
                      lambda x, c: x.masked_select(c.m), True),
    "masked_select-broadcast": (lambda: [normal(3, 4)], {"m": np.array([True, False] * 2)},
                                lambda x, c: x.masked_select(c.m), True),
    "repeat_interleave": (lambda: [normal(2, 3)], {},
                          lambda x, c: x.repeat_interleave(2, dim=1), True),
    "repeat_interleave-flat": (lambda: [normal(2, 3)], {},
                               lambda x, c: x.repeat_interleave(3), True),
    "unbind": (lambda: [normal(3, 4)], {}, lambda x, c: x.unbind(1)[2], True),
    "unflatten": (lambda: [normal(2, 6)], {}, lambda x, c: x.unflatten(1, (3, -1)), True),
    "tensor_split-sections": (lambda: [normal(7, 2)], {},
                              lambda x, c: x.tensor_split(3)[1], True),
    "tensor_split-indices": (lambda: [normal(2, 7)], {},
                             lambda x, c: x.tensor_split([1, 4], dim=1)[2], True),
    "movedim": (lambda: [normal(2, 3, 4)], {}, lambda x, c: x.movedim(0, 2), True),
    "moveaxis": (lambda: [normal(2, 3, 4)], {},
                 lambda x, c: x.moveaxis((0, 1), (2, 0)), True),
    "swapdims": (lambda: [normal(2, 3, 4)], {}, lambda x, c: x.swapdims(0, 2), True),
    "reshape_as": (lambda: [normal(2, 6)], {"o": np.zeros((3, 4))},
                   lambda x, c: x.reshape_as(c.o), True),
    "flip": (lambda: [normal(2, 3, 4)], {}, lambda x, c: x.flip(0, 2), True),
    "fliplr": (lambda: [normal(2, 3)], {}, lambda x, c: x.fliplr(), True),
    "flipud": (lambda: [normal(2, 3)], {}, lambda x, c: x.flipud(), True),
    "roll": (lambda: [normal(3, 4)], {}, lambda x, c: x.roll(2, 1), True),
    "roll-flat": (lambda: [normal(3, 4)], {}, lambda x, c: x.roll(5), True),
    "roll-two": (lambda: [normal(3, 4)], {}, lambda x, c: x.roll((1, -1), (0, 1)), True),
    "rot90": (lambda: [normal(3, 4)], {}, lambda x, c: x.rot90(), True),
    "rot90-k3": (lambda: [normal(2, 3, 4)], {}, lambda x, c: x.rot90(3, (1, 2)), True),
    "tril": (lambda: [normal(4, 4)], {}, lambda x, c: x.tril(), True),
    "tril-1": (lambda: [normal(3, 4)], {}, lambda x, c: x.tril(-1), True),
    "triu": (lambda: [normal(4, 4)], {}, lambda x, c: x.triu(1), True),
    "diag-vector": (lambda: [normal(3)], {}, lambda x, c: x.diag(1), True),
    "diag-matrix": (lambda: [normal(3, 4)], {}, lambda x, c: x.diag(-1), True),
    "diagflat": (lambda: [normal(2, 2)], {}, lambda x, c: x.diagflat(1), True),
    "diag_embed": (lambda: [normal(2, 3)], {}, lambda x, c: x.diag_embed(), True),
    "diag_embed-offset": (lambda: [normal(2, 3)], {},
                          lambda x, c: x.diag_embed(-1, 0, 2), True),
    "take_along_dim": (lambda: [normal(3, 4)], {"i": index(4, 3, 2)},
                       lambda x, c: x.take_along_dim(c.i, 1), True),
    "take_along_dim-flat": (lambda: [normal(3, 4)], {"i": index(12, 5)},
                            lambda x, c: x.take_along_dim(c.i), True),
    "index_add": (lambda: [normal(4, 3), normal(5, 3)], {"i": index(4, 5)},
                  lambda x, s, c: x.index_add(0, c.i, s, alpha=2.0), True),
    "index_copy": (lambda: [normal(3, 5), normal(3, 2)], {"i": unique_index(5, 2)},
                   lambda x, s, c: x.index_copy(1, c.i, s), True),
    "index_fill": (lambda: [normal(3, 5)], {"i": index(5, 2)},
                   lambda x, c: x.index_fill(1, c.i, -2.0), True),
    "scatter": (lambda: [normal(3, 5), normal(3, 3)],
                {"i": np.stack([unique_index(5, 3) for _ in range(3)])},
                lambda x, s, c: x.scatter(1, c.i, s), True),
    "scatter-value": (lambda: [normal(3, 5)], {"i": np.stack([unique_index(3, 2)] * 1).T},
                      lambda x, c: x.scatter(0, c.i, 7.0), True),
    "scatter_add": (lambda: [normal(3, 5), normal(3, 4)], {"i": index(5, 3, 4)},
                    lambda x, s, c: x.scatter_add(1, c.i, s), True),
    "type_as": (lambda: [normal(3) * 3], {"o": np.zeros(2, dtype=np.int64)},
                lambda x, c: x.type_as(c.o), False),
    "nan_to_num": (lambda: [np.array([np.nan, np.inf, -np.inf, 1.5])], {},
                   lambda x, c: x.nan_to_num(), False),
    "nan_to_num-given": (lambda: [np.array([np.nan, np.inf, -np.inf, 1.5])], {},
                         lambda x, c: x.nan_to_num(1.0, 2.0, -3.0), False),
    "signbit": (lambda: [np.array([-1.0, -0.0, 0.0, 2.0])], {}, lambda x, c: x.signbit(), False),
    "isposinf": (lambda: [np.array([np.inf, -np.inf, 1.0])], {}, lambda x, c: x.isposinf(), False),
    "isneginf": (lambda: [np.array([np.inf, -np.inf, 1.0])], {}, lambda x, c: x.isneginf(), False),
    "isreal": (lambda: [normal(3)], {}, lambda x, c: x.isreal(), False),
    "logical_not": (lambda: [np.array([0.0, 1.0, -2.0])], {}, lambda x, c: x.logical_not(), False),
    "logical_and": (lambda: [np.array([0.0, 1.0, -2.0])], {"o": np.array([1.0, 0.0, 3.0])},
                    lambda x, c: x.logical_and(c.o), False),
    "logical_or": (lambda: [np.array([0.0, 1.0, 0.0])], {"o": np.array([1.0, 0.0, 0.0])},
                   lambda x, c: x.logical_or(c.o), False),
    "logical_xor": (lambda: [np.array([0.0, 1.0, 2.0])], {"o": np.array([1.0, 0.0, 3.0])},
                    lambda x, c: x.logical_xor(c.o), False),
})
for _scatter_reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _include in (True, False):
        CASES[f"scatter_reduce-{_scatter_reduce}-{'self' if _include else 'noself'}"] = (
            lambda: [distinct(3, 5), distinct(3, 4)], {"i": index(5, 3, 4)},
            (lambda x, s, c, r=_scatter_reduce, inc=_include:
             x.scatter_reduce(1, c.i, s, r, include_self=inc)), True)

INTEGER = {  # on int64 tensors (no derivative): the call on (x, c)
    "bincount": ({"x": np.array([0, 3, 1, 1, 3, 3])}, lambda x, c: x.bincount()),
    "bincount-weights": ({"x": np.array([0, 3, 1, 1]), "w": np.array([0.5, 1.0, 2.0, 0.25])},
                         lambda x, c: x.bincount(c.w, minlength=6)),
    "bitwise_not": ({"x": np.array([0, 5, -3])}, lambda x, c: x.bitwise_not()),
    "bitwise_and": ({"x": np.array([12, 10, 7]), "o": np.array([6, 3, 5])},
                    lambda x, c: x.bitwise_and(c.o)),
    "bitwise_or": ({"x": np.array([12, 10, 7]), "o": np.array([6, 3, 5])},
                   lambda x, c: x.bitwise_or(c.o)),
    "bitwise_xor": ({"x": np.array([12, 10, 7]), "o": np.array([6, 3, 5])},
                    lambda x, c: x.bitwise_xor(c.o)),
    "bitwise_left_shift": ({"x": np.array([1, 3, -2])}, lambda x, c: x.bitwise_left_shift(2)),
    "bitwise_right_shift": ({"x": np.array([8, -8, 7])}, lambda x, c: x.bitwise_right_shift(1)),
    "bitwise_and-bool": ({"x": np.array([True, False, True]), "o": np.array([True, True, False])},
                         lambda x, c: x.bitwise_and(c.o)),
    "floor_divide-int": ({"x": np.array([-7, 7, 5])}, lambda x, c: x.floor_divide(2)),
    "count_nonzero-int": ({"x": np.array([[0, 2], [0, 0]])}, lambda x, c: x.count_nonzero()),
}


def _run(call, inputs, constants, torch_side):
    lib = Lib(constants, torch_side)
    return call(*inputs, lib)


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients_against_torch(case):
    make, constants, call, differentiable = CASES[case]
    arrays = make()
    xs = [cr.tensor(a, requires_grad=differentiable) for a in arrays]
    ts = [_t(a) if differentiable else torch.tensor(a) for a in arrays]
    ours, theirs = _run(call, xs, constants, False), _run(call, ts, constants, True)
    assert _np(ours).shape == tuple(theirs.shape)
    if _np(theirs).dtype.kind == "f":
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=RTOL, atol=1e-14)
    else:
        np.testing.assert_array_equal(_np(ours), _np(theirs))
    if not differentiable:
        return
    weights = RNG.standard_normal(tuple(theirs.shape))
    (theirs * torch.from_numpy(weights)).sum().backward()
    (ours * weights).sum().backward()
    expected = [np.zeros(a.shape) if t.grad is None else t.grad.numpy(force=True)
                for a, t in zip(arrays, ts)]
    for x, want in zip(xs, expected):
        got = np.zeros(want.shape) if x.grad is None else np.asarray(x.grad)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    argnums = tuple(range(len(arrays)))
    grads = cr.grad(lambda *a: (_run(call, list(a), constants, False) * weights).sum(),
                    argnums=argnums)(*arrays)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", sorted(INTEGER))
def test_integer_and_boolean_methods_against_torch(case):
    constants, call = INTEGER[case]
    ours = call(cr.tensor(constants["x"]), Lib(constants, False))
    theirs = call(torch.from_numpy(constants["x"].copy()), Lib(constants, True))
    np.testing.assert_array_equal(_np(ours), _np(theirs))
    assert _np(ours).dtype == _np(theirs).dtype


@pytest.mark.parametrize("name", ["new_zeros", "new_ones", "new_empty"])
def test_new_tensors_take_the_dtype_and_size(name):
    for dtype, tdtype in ((np.float32, torch.float32), (np.int64, torch.int64)):
        ours = getattr(cr.zeros(1, dtype=dtype), name)(2, 3)
        theirs = getattr(torch.zeros(1, dtype=tdtype), name)(2, 3)
        assert ours.shape == tuple(theirs.shape) and ours.dtype == _np(theirs).dtype
        if name != "new_empty":
            np.testing.assert_array_equal(_np(ours), _np(theirs))
    assert cr.zeros(1).new_ones((2,), requires_grad=True).requires_grad


def test_new_full_and_new_tensor_and_the_facts():
    x, t = cr.zeros(2, 3, dtype=np.float32), torch.zeros(2, 3, dtype=torch.float32)
    np.testing.assert_array_equal(_np(x.new_full((2,), 3.5)), _np(t.new_full((2,), 3.5)))
    assert x.new_tensor([1, 2]).dtype == _np(t.new_tensor([1, 2])).dtype
    assert x.is_floating_point() == t.is_floating_point()
    assert cr.tensor([1]).is_floating_point() == torch.tensor([1]).is_floating_point()
    assert x.is_contiguous() == t.is_contiguous()
    assert x.t().is_contiguous() == t.t().is_contiguous()
    assert x.ndimension() == t.ndimension() and x.element_size() == t.element_size()


# --- in-place forms -------------------------------------------------------------------

# name: (domain, arguments as (x, c), constants)
INPLACE = {name: (domain, (), {}) for name, domain in U if name != "positive"}
INPLACE.update({name: (domain, (), {}) for name, domain in [
    ("abs", normal), ("neg", normal), ("exp", normal), ("log", positive),
    ("log1p", positive), ("log2", positive), ("log10", positive), ("expm1", normal),
    ("sqrt", positive), ("sin", normal), ("cos", normal), ("tan", within(-1, 1)),
    ("tanh", normal), ("sigmoid", normal), ("relu", normal), ("sign", normal),
    ("round", normal), ("erf", normal), ("logical_not", normal)]})
INPLACE.update({
    "copysign": (normal, ("o",), {"o": normal(3, 4)}),
    "heaviside": (lambda *s: RNG.integers(-1, 2, s).astype(float), ("o",), {"o": normal(3, 4)}),
})
INPLACE.update({
    "pow": (positive, (1.7,), {}), "float_power": (positive, (2.5,), {}),
    "clamp_min": (normal, (0.2,), {}), "clamp_max": (normal, (-0.2,), {}),
    "remainder": (normal, (0.7,), {}), "fmod": (normal, (0.7,), {}),
    "atan2": (normal, ("o",), {"o": normal(3, 4)}),
    "arctan2": (normal, ("o",), {"o": normal(3, 4)}),
    "hypot": (normal, ("o",), {"o": normal(3, 4)}),
    "xlogy": (normal, ("o",), {"o": positive(3, 4)}),
    "multiply": (normal, (2.5,), {}), "true_divide": (normal, (2.5,), {}),
    "divide": (normal, (2.5,), {}), "subtract": (normal, ("o",), {"o": normal(3, 4)}),
    "floor_divide": (normal, (0.3,), {}), "nan_to_num": (normal, (), {}),
    "eq": (lambda *s: RNG.integers(0, 3, s).astype(float), (1.0,), {}),
    "ne": (lambda *s: RNG.integers(0, 3, s).astype(float), (1.0,), {}),
    "lt": (normal, (0.1,), {}), "le": (normal, (0.1,), {}),
    "gt": (normal, ("o",), {"o": normal(3, 4)}), "ge": (normal, ("o",), {"o": normal(3, 4)}),
    "logical_and": (normal, ("o",), {"o": RNG.integers(0, 2, (3, 4)).astype(float)}),
    "logical_or": (normal, ("o",), {"o": RNG.integers(0, 2, (3, 4)).astype(float)}),
    "logical_xor": (normal, ("o",), {"o": RNG.integers(0, 2, (3, 4)).astype(float)}),
    "tril": (normal, (), {}), "triu": (normal, (-1,), {}),
    "masked_fill": (normal, ("m", -1.5), {"m": RNG.random((3, 4)) < 0.5}),
    "index_fill": (normal, (1, "i", 4.0), {"i": np.array([0, 2])}),
    "index_add": (normal, (0, "i", "s"), {"i": np.array([2, 0, 2]), "s": normal(3, 4)}),
    "index_copy": (normal, (1, "i", "s"), {"i": np.array([3, 1]), "s": normal(3, 2)}),
    "scatter": (normal, (1, "i", "s"), {"i": np.array([[0, 3], [1, 2], [2, 0]]),
                                        "s": normal(3, 2)}),
    "scatter_add": (normal, (1, "i", "s"), {"i": index(4, 3, 3), "s": normal(3, 3)}),
    "scatter_reduce": (normal, (1, "i", "s", "amax"), {"i": index(4, 3, 3),
                                                       "s": normal(3, 3)}),
    "addmm": (normal, ("a", "b"), {"a": normal(3, 2), "b": normal(2, 4)}),
    "fill_diagonal": (normal, (5.0,), {}),
})


def _args(args, constants, torch_side):
    out = []
    for a in args:
        if isinstance(a, str) and a in constants:
            v = constants[a]
            out.append(torch.from_numpy(v.copy()) if torch_side else v)
        else:
            out.append(a)
    return out


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_form_against_torch_and_the_write_rule(name):
    domain, args, constants = INPLACE[name]
    start = domain(3, 4)
    x, t = cr.tensor(start), torch.tensor(start)
    out = getattr(x, name + "_")(*_args(args, constants, False))
    getattr(t, name + "_")(*_args(args, constants, True))
    assert out is x and x._version[0] == 1
    np.testing.assert_allclose(x.data, t.numpy(), rtol=RTOL, atol=1e-14)
    leaf = cr.tensor(start, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        getattr(leaf, name + "_")(*_args(args, constants, False))
    assert "\n" not in str(info.value) and "cr.no_grad()" in str(info.value)
    np.testing.assert_array_equal(leaf.data, start)  # untouched
    with cr.no_grad():
        getattr(leaf, name + "_")(*_args(args, constants, False))
    np.testing.assert_allclose(leaf.data, t.numpy(), rtol=RTOL, atol=1e-14)


def test_an_inplace_form_refuses_values_a_graph_saved():
    x = cr.tensor(positive(3))
    w = cr.tensor(normal(3), requires_grad=True)
    y = (w * x).sum()
    with pytest.raises(RuntimeError, match="saved"):
        x.sqrt_()
    y.backward()
    x.sqrt_()


def test_bitwise_inplace_forms_on_integers():
    for name, arg in (("bitwise_and", 6), ("bitwise_or", 1), ("bitwise_xor", 6),
                      ("bitwise_left_shift", 2), ("bitwise_right_shift", 1),
                      ("bitwise_not", None)):
        start = np.array([12, 10, -7])
        x, t = cr.tensor(start), torch.tensor(start)
        args = () if arg is None else (arg,)
        getattr(x, name + "_")(*args)
        getattr(t, name + "_")(*args)
        np.testing.assert_array_equal(x.data, t.numpy())


@pytest.mark.parametrize("name, args", [
    ("unsqueeze_", (1,)), ("squeeze_", ()), ("squeeze_", (0,)), ("t_", ()),
    ("transpose_", (0, 2)), ("swapaxes_", (1, 2)), ("swapdims_", (0, 1))])
def test_shape_changes_in_place_against_torch(name, args):
    start = normal(1, 3, 2) if name != "t_" else normal(3, 2)
    x, t = cr.tensor(start), torch.tensor(start)
    assert getattr(x, name)(*args) is x
    getattr(t, name)(*args)
    assert x.shape == tuple(t.shape)
    np.testing.assert_array_equal(x.data, t.numpy())
    assert x._version[0] == 1
    leaf = cr.tensor(start, requires_grad=True)
    with pytest.raises(RuntimeError, match="cr.no_grad"):
        getattr(leaf, name)(*args)
    assert leaf.shape == start.shape
    with cr.no_grad():
        getattr(leaf, name)(*args)
    assert leaf.shape == tuple(t.shape)


FUNCTIONAL = {
    "relu_": ((), {}), "elu_": ((0.7,), {}), "leaky_relu_": ((0.2,), {}),
    "hardtanh_": ((-0.5, 0.8), {}), "threshold_": ((0.1, -2.0), {}), "celu_": ((1.3,), {}),
    "selu_": ((), {}), "rrelu_": ((0.1, 0.3), {"training": False}),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_inplace_activations_against_torch(name):
    args, kwargs = FUNCTIONAL[name]
    start = normal(3, 4)
    x, t = cr.tensor(start), torch.tensor(start)
    assert getattr(inplace, name)(x, *args, **kwargs) is x
    getattr(TF, name)(t, *args, **kwargs)
    np.testing.assert_allclose(x.data, t.numpy(), rtol=RTOL, atol=1e-14)
    leaf = cr.tensor(start, requires_grad=True)
    with pytest.raises(RuntimeError, match="cr.no_grad"):
        getattr(inplace, name)(leaf, *args, **kwargs)
    with cr.no_grad():
        getattr(inplace, name)(leaf, *args, **kwargs)
    np.testing.assert_allclose(leaf.data, t.numpy(), rtol=RTOL, atol=1e-14)


def test_rrelu_in_training_draws_slopes_between_the_bounds():
    x = cr.tensor(-np.ones(2000))
    inplace.rrelu_(x, 0.1, 0.3, training=True, generator=cr.Generator().manual_seed(1))
    assert ((-x.data >= 0.1) & (-x.data <= 0.3)).all()


# --- random fills -----------------------------------------------------------------------

N = 40_000
# name: (arguments, the statistic compared (of the drawn array))
FILLS = {
    "uniform_": ((2.0, 5.0), lambda a: a),
    "normal_": ((1.0, 2.0), lambda a: a),
    "bernoulli_": ((0.3,), lambda a: a),
    "exponential_": ((2.0,), lambda a: a),
    "geometric_": ((0.3,), lambda a: a),
    "log_normal_": ((0.5, 0.4), np.log),
    "cauchy_": ((1.0, 2.0), lambda a: np.arctan(a - 1.0)),  # (bounded: its mean is 0)
    "random_": ((3, 10), lambda a: a),
}


@pytest.mark.parametrize("name", sorted(FILLS))
def test_random_fill_has_torchs_moments_and_is_reproducible(name):
    args, statistic = FILLS[name]
    ours = statistic(getattr(cr.zeros(N), name)(
        *args, generator=cr.Generator().manual_seed(5)).data)
    theirs = statistic(getattr(torch.zeros(N, dtype=torch.float64), name)(
        *args, generator=torch.Generator().manual_seed(5)).numpy())
    for moment in (1, 2):
        a, b = ours ** moment, theirs ** moment
        error = np.sqrt(a.var() / N + b.var() / N)
        assert abs(a.mean() - b.mean()) < 5 * error, (moment, a.mean(), b.mean())
    again = statistic(getattr(cr.zeros(N), name)(
        *args, generator=cr.Generator().manual_seed(5)).data)
    np.testing.assert_array_equal(ours, again)
    cr.manual_seed(11)
    first = getattr(cr.zeros(5), name)(*args).data
    cr.manual_seed(11)
    np.testing.assert_array_equal(getattr(cr.zeros(5), name)(*args).data, first)


@pytest.mark.parametrize("name", sorted(FILLS))
def test_random_fill_follows_the_write_rule_and_draws_nothing_when_refused(name):
    args, _ = FILLS[name]
    leaf = cr.zeros(4, requires_grad=True)
    g = cr.Generator().manual_seed(2)
    with pytest.raises(RuntimeError, match="cr.no_grad"):
        getattr(leaf, name)(*args, generator=g)
    assert g.initial_seed() == 2 and (leaf.data == 0).all()
    with cr.no_grad():
        getattr(leaf, name)(*args, generator=g)
    h = cr.Generator().manual_seed(2)
    np.testing.assert_array_equal(leaf.data, getattr(cr.zeros(4), name)(*args, generator=h).data)
    assert leaf._version[0] == 1


def test_random_to_alone_and_float32_range():
    x = cr.zeros(1000).random_(4)
    assert set(np.unique(x.data)) <= {0.0, 1.0, 2.0, 3.0}
    y = cr.zeros(1000, dtype=np.float32).random_()
    assert (y.data >= 0).all() and (y.data <= 2 ** 24).all()


# --- the traced values' path, and views -------------------------------------------------

TRACED = {
    "kthvalue": lambda a: a.kthvalue(2, 1).values,
    "logcumsumexp": lambda a: a.logcumsumexp(1),
    "xlogy": lambda a: a.xlogy(a * a + 1),
    "rsqrt": lambda a: (a * a + 1).rsqrt(),
    "amax": lambda a: a.amax(1),
    "diag_embed": lambda a: a.diag_embed(),
    "index_add": lambda a: a.index_add(1, np.array([0, 0, 4]), a[:, :3]),
    "scatter_reduce": lambda a: a.scatter_reduce(0, np.array([[0, 0, 2, 1, 0]]), a[:1] * 2,
                                                 "amax"),
    "unbind": lambda a: a.unbind(1)[0],
    "addcmul": lambda a: a.addcmul(a, a, value=0.5),
    "clone": lambda a: a.clone() * a,
    "detach": lambda a: a.detach() * a,
}


@pytest.mark.parametrize("name", sorted(TRACED))
def test_methods_under_vmap_and_jvp_match_the_eager_ones(name):
    f = TRACED[name]
    xs = RNG.standard_normal((4, 3, 5))
    batched = cr.vmap(f)(xs)
    eager = np.stack([np.asarray(f(cr.tensor(x)).data) for x in xs])
    np.testing.assert_allclose(np.asarray(getattr(batched, "data", batched)), eager,
                               rtol=RTOL, atol=1e-14)
    tangent = RNG.standard_normal((3, 5))
    _, jvp = cr.jvp(f, (xs[0],), (tangent,))
    weights = RNG.standard_normal(np.shape(jvp))
    grad = cr.grad(lambda a: (f(a) * weights).sum())(xs[0])
    np.testing.assert_allclose(np.sum(np.asarray(jvp) * weights), np.sum(grad * tangent),
                               rtol=1e-10)


def test_argmax_argmin_and_detach_of_traced_values_are_torch_funcs():
    xs = normal(4, 3, 5)
    for name in ("argmax", "argmin"):
        for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
            ours = cr.vmap(lambda a: getattr(a, name)(**kwargs))(xs)
            theirs = torch.func.vmap(lambda a: getattr(a, name)(**kwargs))(torch.tensor(xs))
            np.testing.assert_array_equal(ours, theirs.numpy())
    # detach inside grad is a stop_gradient for torch.func as for chainrule
    ours = cr.grad(lambda a: (a.detach() ** 2 * a.sin()).sum())(xs[0])
    theirs = torch.func.grad(lambda a: (a.detach() ** 2 * a.sin()).sum())(torch.tensor(xs[0]))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=RTOL)


def test_scatter_reads_only_as_much_of_src_as_the_index_has():
    start, src = normal(3, 5), normal(4, 6)
    i = np.stack([unique_index(5, 2) for _ in range(2)])
    ours = cr.tensor(start).scatter(1, i, cr.tensor(src))
    theirs = torch.tensor(start).scatter(1, torch.from_numpy(i), torch.tensor(src))
    np.testing.assert_array_equal(ours.data, theirs.numpy())


def test_an_inplace_form_writes_through_a_view():
    start = normal(3, 3)
    x, t = cr.tensor(start), torch.tensor(start)
    x.diagonal().exp_()
    t.diagonal().exp_()
    np.testing.assert_allclose(x.data, t.numpy(), rtol=RTOL)
    assert x._version[0] == 1


def test_a_random_fill_under_jit_draws_anew_at_each_call_as_eager():
    traced, eager = cr.Generator().manual_seed(4), cr.Generator().manual_seed(4)

    def step(x):
        noise = cr.zeros(3)
        noise.normal_(generator=traced)
        return x + noise
    jitted = cr.jit(step)
    for _ in range(3):
        expected = 1.0 + cr.zeros(3).normal_(generator=eager).data
        np.testing.assert_array_equal(jitted(cr.ones(3)).data, expected)
