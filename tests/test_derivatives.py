"""The tensor engine's derivative table (``chainrule.rules``), op by op, checked
against references that share no code with it.

Every operation of the table is one or more *cases* in ``CASES`` below: the chainrule
expression, the same expression in PyTorch, and the inputs it is evaluated at (their
shapes and a domain that keeps them away from kinks and from the edges of domains).
Each case then runs through the generic checks, top to bottom:

1. value and full vector-Jacobian product against PyTorch float64: ``(y * w).sum()``
   with a fixed random cotangent ``w`` (not just ones), relative error <= 1e-10;
2. the same gradient against central differences along a random direction;
3. second order: ``backward(create_graph=True)``, then the Hessian-vector product,
   against PyTorch's double backward and against central differences of the gradient;
4. forward mode: the JVP rules of the primitive, called directly on NumPy arrays,
   against central differences (only for cases that are a single ``Primitive`` call);
5. float32 in, float32 out (values and gradients), against PyTorch float32.

Then the conventions at kinks, ties, zeros and huge arguments (exact values), and the
losses of ``chainrule.nn.functional``.
"""

import math
import operator
import re
import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as F
import types

from chainrule import rules
from chainrule.rules import fused, fused_attention, fused_norm, fused_recurrent
from chainrule.primitive import Primitive
from chainrule.rules import elementwise, joining, ordering, shapes

# The table's operations, with the primitives behind its wrappers (concatenate, stack,
# where, clip) and the fused operations of chainrule.rules.fused, which are checked the same way.
D = types.SimpleNamespace(**{name: value for name, value in vars(rules).items()
                             if not name.startswith("_")},
                          _concatenate=joining._concatenate, _stack=joining._stack,
                          _where=elementwise._where, _clip=elementwise._clip,
                          _cumsum=ordering._cumsum,
                          linear=fused.linear, linear_relu=fused.linear_relu)

# ---------------------------------------------------------------------------------------
# Helpers (local to this file)
# ---------------------------------------------------------------------------------------

REL64 = 1e-10   # float64 against float64: only rounding may differ
REL32 = 1e-5    # float32 against float32
FD_EPS = 1e-6   # step of the central differences (first derivatives)
FD_REL = 2e-8   # what central differences with that step can promise (truncation
#                ~1e-12, rounding ~1e-16 / 1e-6; the worst case here is ~6e-10)


def draw(rng, shape, domain):
    """Random inputs in a domain where the op is smooth and the references agree.

    any: |x| in [0.2, 1.5], either sign (away from the kinks of relu, abs, sign at 0,
    and from 0 for division); pos: [0.5, 2] (log, sqrt, a base of a real power);
    unit: [-0.9, 0.9] (tan, log1p); wide: normal with scale 2 (softmax, logsumexp);
    prob: [0.05, 0.95] (targets of a binary cross-entropy); gt1: [1.2, 3] (arccosh);
    spd: symmetric positive definite matrices on the last two axes (x x^T + n I from an
    "any" x); wellcond: an "any" matrix plus 3 I (inverses, determinants and solves far
    from singular).
    """
    if domain in ("spd", "wellcond"):
        x, n = draw(rng, shape, "any"), shape[-1]
        if domain == "wellcond":
            return x + 3.0 * np.eye(n)
        return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    if domain == "any":
        out = rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    elif domain == "pos":
        out = rng.uniform(0.5, 2.0, shape)
    elif domain == "unit":
        out = rng.uniform(-0.9, 0.9, shape)
    elif domain == "wide":
        out = 2.0 * rng.standard_normal(shape)
    elif domain == "prob":
        out = rng.uniform(0.05, 0.95, shape)
    elif domain == "gt1":
        out = rng.uniform(1.2, 3.0, shape)
    else:
        raise ValueError(domain)
    return np.asarray(out, dtype=np.float64)


def seeded(*parts):
    """A generator seeded by the case's name: every run draws the same numbers."""
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


class Case:
    """One operation at one set of shapes.

    ``fn(*tensors)`` is the chainrule expression, ``ref(*torch_tensors)`` the PyTorch
    one (either may return a list of outputs, as split does). ``specs`` gives one
    ``(shape, domain)`` per differentiable input. ``prim(*arrays)``, when the
    expression is a single primitive call, returns ``(primitive, args, kwargs)``: the
    same call, for the JVP check (an argument that *is* one of the arrays is
    differentiated). ``fd=False`` for an op whose output is rounded to float32, or whose
    derivative is 0 by definition (stop_gradient): finite differences mean nothing
    there, in either mode; ``f32=False`` for a case that changes dtype.
    """

    def __init__(self, id, fn, ref, specs, prim=None, fd=True, f32=True):
        self.id, self.fn, self.ref, self.specs = id, fn, ref, list(specs)
        self.prim, self.fd, self.f32 = prim, fd, f32

    def arrays(self, dtype=np.float64):
        rng = seeded(self.id)
        return [draw(rng, shape, domain).astype(dtype) for shape, domain in self.specs]

    def __repr__(self):
        return self.id


CASES = []


def case(id, fn, ref, *specs, **options):
    CASES.append(Case(id, fn, ref, specs, **options))


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def cotangents(case, outputs, dtype):
    """The fixed random cotangent ``w`` of each output (the vector of the VJP)."""
    rng = seeded(case.id, "cotangent")
    return [rng.standard_normal(np.shape(o)).astype(dtype) for o in outputs]


def assert_close(actual, expected, rel, what):
    """Same shape, and |actual - expected| <= rel * (|expected| + max|expected|):
    relative per element, with a floor at the array's own scale (so that an entry
    that cancels to ~0 is not held to a relative error of its rounding noise)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    finite = np.abs(expected[np.isfinite(expected)])  # NaN where both are NaN is checked apart
    scale = float(np.max(finite)) if finite.size else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rel, atol=rel * scale, err_msg=what)


def to_torch(a):
    return torch.tensor(np.asarray(a), requires_grad=True)


# --- running one case in each world --------------------------------------------------

def cr_forward(case, arrays):
    """Outputs as ndarrays, without recording a graph: what central differences use."""
    with cr.no_grad():
        return [np.asarray(o.data) for o in as_list(case.fn(*[cr.tensor(a) for a in arrays]))]


def cr_vjp(case, arrays, ws):
    """chainrule: outputs and the gradient of sum(w * y) with respect to every input."""
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    outs = as_list(case.fn(*xs))
    loss = sum((o * w).sum() for o, w in zip(outs, ws))
    loss.backward()
    grads = [np.zeros_like(a) if x.grad is None else x.grad for x, a in zip(xs, arrays)]
    return [o.data for o in outs], grads


def torch_vjp(case, arrays, ws):
    xs = [to_torch(a) for a in arrays]
    outs = as_list(case.ref(*xs))
    loss = sum((o * torch.from_numpy(w)).sum() for o, w in zip(outs, ws))
    grads = torch.autograd.grad(loss, xs, allow_unused=True)
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
    return ([o.detach().numpy() for o in outs],
            [g.numpy() for g in grads])


def second_order_loss(outs, ws):
    """L = <w, y> + |y|^2 / 2. Its Hessian has the op's own second derivative (through
    w) and J^T J (through |y|^2), so even a linear op like reshape or getitem has a
    Hessian, which its VJP rule must produce when it runs on Tensors."""
    return sum((o * w).sum() + 0.5 * (o * o).sum() for o, w in zip(outs, ws))


def cr_hvp(case, arrays, ws, vs):
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    second_order_loss(as_list(case.fn(*xs)), ws).backward(create_graph=True)
    grads = [x.grad for x in xs]
    assert all(isinstance(g, cr.Tensor) for g in grads), "create_graph=True gives Tensors"
    for x in xs:
        x.zero_grad()
    sum((g * v).sum() for g, v in zip(grads, vs)).backward()
    return [np.zeros_like(a) if x.grad is None else np.asarray(x.grad)
            for x, a in zip(xs, arrays)]


def cr_grad_of_second_order_loss(case, arrays, ws):
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    second_order_loss(as_list(case.fn(*xs)), ws).backward()
    return [np.zeros_like(a) if x.grad is None else x.grad for x, a in zip(xs, arrays)]


def torch_hvp(case, arrays, ws, vs):
    xs = [to_torch(a) for a in arrays]
    outs = as_list(case.ref(*xs))
    loss = second_order_loss(outs, [torch.from_numpy(w) for w in ws])
    grads = torch.autograd.grad(loss, xs, create_graph=True, allow_unused=True)
    s = sum((g * torch.from_numpy(v)).sum() for g, v in zip(grads, vs) if g is not None)
    if not (isinstance(s, torch.Tensor) and s.requires_grad):
        return [np.zeros_like(a) for a in arrays]
    hv = torch.autograd.grad(s, xs, allow_unused=True)
    return [np.zeros_like(a) if h is None else h.detach().numpy() for h, a in zip(hv, arrays)]


# --- PyTorch spellings of NumPy-style reductions -------------------------------------

def dims_of(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    return axis if isinstance(axis, tuple) else (axis,)


def t_reduction(reduce):
    """``reduce(x, dims, keepdim)`` with NumPy's axis=None and 0-d semantics."""
    def ref(x, axis=None, keepdims=False):
        if x.ndim == 0:
            return reduce(x.reshape(1), (0,), False).reshape(())
        return reduce(x, dims_of(x, axis), keepdims)
    return ref


def _t_prod(x, dims, keepdim):
    for d in sorted((d % x.ndim for d in dims), reverse=True):
        x = x.prod(dim=d, keepdim=True)
    return x if keepdim else x.reshape([n for i, n in enumerate(x.shape)
                                        if i not in {d % x.ndim for d in dims}])


T_REDUCE = {
    "sum": t_reduction(lambda x, d, k: torch.sum(x, dim=d, keepdim=k)),
    "mean": t_reduction(lambda x, d, k: torch.mean(x, dim=d, keepdim=k)),
    "max": t_reduction(lambda x, d, k: torch.amax(x, dim=d, keepdim=k)),
    "min": t_reduction(lambda x, d, k: torch.amin(x, dim=d, keepdim=k)),
    "prod": t_reduction(_t_prod),
    "logsumexp": t_reduction(lambda x, d, k: torch.logsumexp(x, dim=d, keepdim=k)),
    "norm": t_reduction(lambda x, d, k: torch.linalg.vector_norm(x, 2, dim=d, keepdim=k)),
    "var": t_reduction(lambda x, d, k: torch.var(x, dim=d, correction=0, keepdim=k)),
    "std": t_reduction(lambda x, d, k: torch.std(x, dim=d, correction=0, keepdim=k)),
}


def t_index(index):
    """The same index for a torch tensor (arrays become tensors, lists stay lists)."""
    if isinstance(index, tuple):
        return tuple(t_index(i) for i in index)
    if isinstance(index, np.ndarray):
        return torch.from_numpy(index)
    return index


# ---------------------------------------------------------------------------------------
# The cases: every operation of the table
# ---------------------------------------------------------------------------------------

# --- elementwise, one argument: (name, chainrule, torch, primitive, domain) -----------

UNARY = [
    ("exp", cr.exp, torch.exp, D.exp, "any"),
    ("log", cr.log, torch.log, D.log, "pos"),
    ("log1p", cr.log1p, torch.log1p, D.log1p, "unit"),
    ("sqrt", cr.sqrt, torch.sqrt, D.sqrt, "pos"),
    ("abs", cr.abs, torch.abs, D.absolute, "any"),
    ("sin", cr.sin, torch.sin, D.sin, "any"),
    ("cos", cr.cos, torch.cos, D.cos, "any"),
    ("tan", cr.tan, torch.tan, D.tan, "unit"),
    ("arctan", cr.arctan, torch.arctan, D.arctan, "any"),
    ("tanh", cr.tanh, torch.tanh, D.tanh, "any"),
    ("sigmoid", cr.sigmoid, torch.sigmoid, D.sigmoid, "wide"),
    ("erf", cr.erf, torch.erf, D.erf, "any"),
    ("relu", cr.relu, torch.relu, D.relu, "any"),
    ("softplus", cr.softplus, TF.softplus, D.softplus, "wide"),
    ("sign", cr.sign, torch.sign, D.sign, "any"),
    ("negative", cr.negative, torch.neg, D.negative, "any"),
    ("arcsin", cr.arcsin, torch.asin, D.arcsin, "unit"),
    ("arccos", cr.arccos, torch.acos, D.arccos, "unit"),
    ("sinh", cr.sinh, torch.sinh, D.sinh, "any"),
    ("cosh", cr.cosh, torch.cosh, D.cosh, "any"),
    ("arcsinh", cr.arcsinh, torch.asinh, D.arcsinh, "any"),
    ("arccosh", cr.arccosh, torch.acosh, D.arccosh, "gt1"),
    ("arctanh", cr.arctanh, torch.atanh, D.arctanh, "unit"),
    ("expm1", cr.expm1, torch.expm1, D.expm1, "any"),
    ("log2", cr.log2, torch.log2, D.log2, "pos"),
    ("log10", cr.log10, torch.log10, D.log10, "pos"),
    ("exp2", cr.exp2, torch.exp2, D.exp2, "any"),
    ("square", cr.square, torch.square, D.square, "any"),
    ("logit", cr.logit, torch.logit, D.logit, "prob"),
    ("reciprocal", cr.reciprocal, torch.reciprocal, D.reciprocal, "any"),
    ("sinc", cr.sinc, torch.sinc, D.sinc, "any"),
    ("deg2rad", cr.deg2rad, torch.deg2rad, D.deg2rad, "any"),
    ("rad2deg", cr.rad2deg, torch.rad2deg, D.rad2deg, "any"),
    ("radians", cr.radians, torch.deg2rad, D.deg2rad, "any"),
    ("degrees", cr.degrees, torch.rad2deg, D.rad2deg, "any"),
    ("fabs", cr.fabs, torch.abs, D.absolute, "any"),
    ("floor", cr.floor, torch.floor, D.floor, "any"),
    ("ceil", cr.ceil, torch.ceil, D.ceil, "any"),
    ("trunc", cr.trunc, torch.trunc, D.trunc, "any"),
    ("fix", cr.fix, torch.trunc, D.trunc, "any"),
    ("rint", cr.rint, torch.round, D.rint, "any"),
    ("round", cr.round, torch.round, D.round, "any"),
    ("around", cr.around, torch.round, D.round, "any"),
    ("nan_to_num", cr.nan_to_num, torch.nan_to_num, D.nan_to_num, "any"),
    ("real", cr.real, torch.real, D.real, "any"),
    ("conj", cr.conj, torch.conj, D.conj, "any"),
    ("conjugate", cr.conjugate, torch.conj, D.conj, "any"),
    ("imag", cr.imag, lambda x: x * 0, D.imag, "any"),
    ("angle", cr.angle, torch.angle, D.angle, "any"),  # (complex: tests/test_complex.py)
]
SHAPES = [(), (3,), (2, 3)]

for _name, _f, _t, _p, _dom in UNARY:
    for _shape in SHAPES:
        case(f"{_name}{_shape}", _f, _t, (_shape, _dom),
             prim=lambda x, _p=_p: (_p, (x,), {}))
# the identity with derivative 0 by definition (so no central differences)
for _shape in SHAPES:
    case(f"stop_gradient{_shape}", cr.stop_gradient, lambda x: x.detach() + 0 * x,
         (_shape, "any"), prim=lambda x: (D.stop_gradient, (x,), {}), fd=False)

# the same operations as Tensor methods and operators
for _name, _f, _t, _p, _dom in UNARY:
    if callable(getattr(cr.Tensor, _name, None)):  # (x.real and x.imag are properties)
        case(f"x.{_name}()", lambda x, _n=_name: getattr(x, _n)(), _t, ((2, 3), _dom))
case("-x", operator.neg, operator.neg, ((2, 3), "any"),
     prim=lambda x: (D.negative, (x,), {}))
case("abs(x)", abs, abs, ((2, 3), "any"), prim=lambda x: (D.absolute, (x,), {}))

# with parameters
for _shape in SHAPES:
    case(f"leaky_relu{_shape}", cr.leaky_relu, TF.leaky_relu, (_shape, "any"),
         prim=lambda x: (D.leaky_relu, (x,), {}))
    case(f"leaky_relu(0.2){_shape}", lambda x: cr.leaky_relu(x, 0.2),
         lambda x: TF.leaky_relu(x, 0.2), (_shape, "any"),
         prim=lambda x: (D.leaky_relu, (x,), {"negative_slope": 0.2}))
    case(f"clip(-0.5,0.5){_shape}", lambda x: cr.clip(x, -0.5, 0.5),
         lambda x: torch.clamp(x, -0.5, 0.5), (_shape, "any"),
         prim=lambda x: (D._clip, (x, -0.5, 0.5), {}))
    case(f"silu{_shape}", cr.silu, TF.silu, (_shape, "any"))
    case(f"elu{_shape}", cr.elu, TF.elu, (_shape, "any"))
    case(f"elu(0.5){_shape}", lambda x: cr.elu(x, 0.5), lambda x: TF.elu(x, 0.5), (_shape, "any"))
    for _approximate in ("none", "tanh"):
        case(f"gelu({_approximate}){_shape}", lambda x, a=_approximate: cr.gelu(x, a),
             lambda x, a=_approximate: TF.gelu(x, approximate=a), (_shape, "any"))
# nn.functional's piecewise and smooth activations (compositions of the table's
# operations, checked here as a row each; their kinks are tests/test_activations_against_torch.py's)
_ACTIVATIONS = [
    ("relu6", F.relu6, TF.relu6),
    ("hardtanh", F.hardtanh, TF.hardtanh),
    ("hardtanh(-0.5,0.8)", lambda x: F.hardtanh(x, -0.5, 0.8),
     lambda x: TF.hardtanh(x, -0.5, 0.8)),
    ("selu", F.selu, TF.selu),
    ("celu", F.celu, TF.celu),
    # (alpha 0.5: torch computes 1 / alpha in float32, and 1 / 0.7 would differ by 2e-8)
    ("celu(0.5)", lambda x: F.celu(x, 0.5), lambda x: TF.celu(x, 0.5)),
    ("mish", F.mish, TF.mish),
    ("softsign", F.softsign, TF.softsign),
    ("logsigmoid", F.logsigmoid, TF.logsigmoid),
    ("hardswish", F.hardswish, TF.hardswish),
    # (torch's own hardsigmoid scales its gradient by a float32 1/6: composed here)
    ("hardsigmoid", F.hardsigmoid,
     lambda x: torch.where(x <= -3, 0.0, torch.where(x >= 3, 1.0, x / 6 + 0.5))),
    ("hardshrink", F.hardshrink, TF.hardshrink),
    ("hardshrink(0.9)", lambda x: F.hardshrink(x, 0.9), lambda x: TF.hardshrink(x, 0.9)),
    ("softshrink", F.softshrink, TF.softshrink),
    ("tanhshrink", F.tanhshrink, TF.tanhshrink),
    ("threshold(0.5,-2)", lambda x: F.threshold(x, 0.5, -2.0),
     lambda x: TF.threshold(x, 0.5, -2.0)),
    ("rrelu(eval)", lambda x: F.rrelu(x, 0.1, 0.3), lambda x: TF.rrelu(x, 0.1, 0.3)),
]
for _name, _f, _t in _ACTIVATIONS:
    for _shape in SHAPES:
        case(f"F.{_name}{_shape}", _f, _t, (_shape, "any"))
case("F.glu", F.glu, TF.glu, ((2, 4), "any"))
case("F.glu(dim=0)", lambda x: F.glu(x, 0), lambda x: TF.glu(x, 0), ((4, 3), "any"))
case("F.softmin", lambda x: F.softmin(x, -1), lambda x: TF.softmin(x, -1), ((2, 3), "wide"))
case("F.prelu(channels)", F.prelu, TF.prelu, ((2, 3, 2), "any"), ((3,), "pos"))
case("F.prelu(one)", F.prelu, TF.prelu, ((2, 3), "any"), ((1,), "pos"))
case("clip(a_min)", lambda x: cr.clip(x, a_min=-0.5), lambda x: torch.clamp(x, min=-0.5),
     ((2, 3), "any"), prim=lambda x: (D._clip, (x, -0.5, None), {}))
case("clip(a_max)", lambda x: cr.clip(x, a_max=0.5), lambda x: torch.clamp(x, max=0.5),
     ((2, 3), "any"), prim=lambda x: (D._clip, (x, None, 0.5), {}))
case("x.clip()", lambda x: x.clip(-0.5, 0.5), lambda x: x.clamp(-0.5, 0.5), ((2, 3), "any"))
case("x.leaky_relu(0.2)", lambda x: x.leaky_relu(0.2), lambda x: TF.leaky_relu(x, 0.2),
     ((2, 3), "any"))
case("x.gelu(tanh)", lambda x: x.gelu("tanh"), lambda x: TF.gelu(x, approximate="tanh"),
     ((2, 3), "any"))

# --- elementwise, two arguments, with broadcasting ------------------------------------

BINARY = [
    # name, operator (or None), chainrule function, torch, primitive, domains
    ("add", operator.add, cr.add, torch.add, D.add, ("any", "any")),
    ("subtract", operator.sub, cr.subtract, torch.sub, D.subtract, ("any", "any")),
    ("multiply", operator.mul, cr.multiply, torch.mul, D.multiply, ("any", "any")),
    ("divide", operator.truediv, cr.divide, torch.div, D.divide, ("any", "any")),
    ("power", operator.pow, cr.power, torch.pow, D.power, ("pos", "any")),
    ("maximum", None, cr.maximum, torch.maximum, D.maximum, ("any", "any")),
    ("minimum", None, cr.minimum, torch.minimum, D.minimum, ("any", "any")),
    ("remainder", operator.mod, cr.remainder, torch.remainder, D.remainder, ("any", "pos")),
    ("mod", None, cr.mod, torch.remainder, D.remainder, ("any", "pos")),
    ("fmod", None, cr.fmod, torch.fmod, D.fmod, ("any", "pos")),
    ("arctan2", None, cr.arctan2, torch.atan2, D.arctan2, ("any", "any")),
    ("hypot", None, cr.hypot, torch.hypot, D.hypot, ("any", "any")),
    ("logaddexp", None, cr.logaddexp, torch.logaddexp, D.logaddexp, ("wide", "wide")),
    ("logaddexp2", None, cr.logaddexp2, torch.logaddexp2, D.logaddexp2, ("wide", "wide")),
    ("fmax", None, cr.fmax, torch.fmax, D.fmax, ("any", "any")),
    ("fmin", None, cr.fmin, torch.fmin, D.fmin, ("any", "any")),
]
BROADCAST_PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((), (2, 3)), ((2, 3), ()),
                   ((3, 1), (4,)), ((2, 1, 3), (4, 1))]

for _name, _op, _f, _t, _p, (_da, _db) in BINARY:
    for _sa, _sb in BROADCAST_PAIRS:
        for _how, _call in (("op", _op), ("fn", _f)):
            if _call is not None:
                case(f"{_name}[{_how}]{_sa}{_sb}", _call, _t, (_sa, _da), (_sb, _db),
                     prim=lambda a, b, _p=_p: (_p, (a, b), {}))
case("maximum(x,0.3)", lambda x: cr.maximum(x, 0.3), lambda x: torch.clamp(x, min=0.3),
     ((2, 3), "any"), prim=lambda x: (D.maximum, (x, 0.3), {}))
case("minimum(0.3,x)", lambda x: cr.minimum(0.3, x), lambda x: torch.clamp(x, max=0.3),
     ((2, 3), "any"), prim=lambda x: (D.minimum, (0.3, x), {}))
case("x.maximum(y)", lambda a, b: a.maximum(b), torch.maximum, ((3,), "any"), ((2, 3), "any"))
case("x.minimum(y)", lambda a, b: a.minimum(b), torch.minimum, ((3,), "any"), ((2, 3), "any"))

# with constants: Python numbers and ndarrays on either side (the reflected operators)
C23 = seeded("constant").uniform(0.5, 2.0, (2, 3))


def _const(x, like):
    """C23 with the dtype of ``like`` (float32 stays float32 in the float32 check)."""
    if isinstance(like, torch.Tensor):
        return torch.tensor(x, dtype=like.dtype)
    return np.asarray(x, dtype=like.dtype)


SCALAR_FORMS = [
    ("x+2.5", lambda x: x + 2.5, "any", D.add, lambda x: (x, 2.5)),
    ("2.5+x", lambda x: 2.5 + x, "any", D.add, lambda x: (2.5, x)),
    ("x-2.5", lambda x: x - 2.5, "any", D.subtract, lambda x: (x, 2.5)),
    ("2.5-x", lambda x: 2.5 - x, "any", D.subtract, lambda x: (2.5, x)),
    ("3*x", lambda x: 3.0 * x, "any", D.multiply, lambda x: (3.0, x)),
    ("x*3", lambda x: x * 3.0, "any", D.multiply, lambda x: (x, 3.0)),
    ("x/4", lambda x: x / 4.0, "any", D.divide, lambda x: (x, 4.0)),
    ("4/x", lambda x: 4.0 / x, "any", D.divide, lambda x: (4.0, x)),
    ("x**3", lambda x: x ** 3, "any", D.power, lambda x: (x, 3)),
    ("x**2.5", lambda x: x ** 2.5, "pos", D.power, lambda x: (x, 2.5)),
    ("x**-1.5", lambda x: x ** -1.5, "pos", D.power, lambda x: (x, -1.5)),
    ("x**0.5", lambda x: x ** 0.5, "pos", D.power, lambda x: (x, 0.5)),
    ("x**0", lambda x: x ** 0, "any", D.power, lambda x: (x, 0)),
    ("2**x", lambda x: 2.0 ** x, "any", D.power, lambda x: (2.0, x)),
]
for _name, _expr, _dom, _p, _args in SCALAR_FORMS:
    case(_name, _expr, _expr, ((2, 3), _dom),
         prim=lambda x, _p=_p, _args=_args: (_p, _args(x), {}))

NDARRAY_FORMS = [  # C23 (2, 3) on the left of a Tensor (3,): ndarray op Tensor
    ("C+x", operator.add, D.add), ("C-x", operator.sub, D.subtract),
    ("C*x", operator.mul, D.multiply), ("C/x", operator.truediv, D.divide),
    ("C**x", operator.pow, D.power), ("x-C", lambda c, x: x - c, None),
]
for _name, _op, _p in NDARRAY_FORMS:
    case(_name, lambda x, _op=_op: _op(_const(C23, x), x),
         lambda x, _op=_op: _op(_const(C23, x), x), ((3,), "any"),
         prim=None if _p is None else
         lambda x, _p=_p: (_p, (np.asarray(C23, x.dtype), x), {}))
case("float64(2)*x", lambda x: np.float64(2.0) * x, lambda x: 2.0 * x, ((3,), "any"),
     f32=False)

# where: the condition is a constant (an array, or a comparison of tensors)
COND23 = np.array([[True, False, True], [False, False, True]])
COND31 = np.array([[True], [False], [True]])
case("where(2,3)", lambda a, b: cr.where(COND23, a, b),
     lambda a, b: torch.where(torch.from_numpy(COND23), a, b), ((2, 3), "any"), ((2, 3), "any"),
     prim=lambda a, b: (D._where, (COND23, a, b), {}))
case("where(3,1)(4,)()", lambda a, b: cr.where(COND31, a, b),
     lambda a, b: torch.where(torch.from_numpy(COND31), a, b), ((4,), "any"), ((), "any"),
     prim=lambda a, b: (D._where, (COND31, a, b), {}))
case("where(a>0,a,b)", lambda a, b: cr.where(a > 0, a, b),
     lambda a, b: torch.where(a > 0, a, b), ((2, 3), "any"), ((3,), "any"))
case("where(c,a,0.0)", lambda a: cr.where(COND23, a, 0.0),
     lambda a: torch.where(torch.from_numpy(COND23), a, 0.0), ((2, 3), "any"),
     prim=lambda a: (D._where, (COND23, a, 0.0), {}))

# --- reductions: every axis form, keepdims or not --------------------------------------

REDUCE = [
    ("sum", cr.sum, D.sum, "any"), ("mean", cr.mean, D.mean, "any"),
    ("max", cr.max, D.max, "any"), ("min", cr.min, D.min, "any"),
    ("prod", cr.prod, D.prod, "any"), ("logsumexp", cr.logsumexp, D.logsumexp, "wide"),
    ("norm", cr.norm, D.norm, "any"), ("var", cr.var, None, "any"),
    ("std", cr.std, None, "any"),
]
AXES = [((), None), ((3,), None), ((3,), 0), ((3,), -1), ((2, 3), None), ((2, 3), 0),
        ((2, 3), 1), ((2, 3), (0, 1)), ((2, 3, 4), None), ((2, 3, 4), 1), ((2, 3, 4), -1),
        ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 0))]

for _name, _f, _p, _dom in REDUCE:
    for _shape, _axis in AXES:
        if _name == "std" and _shape == ():
            continue  # the std of one number is 0, where sqrt has no derivative
        for _keep in (False, True):
            case(f"{_name}{_shape}axis={_axis},keepdims={_keep}",
                 lambda x, _f=_f, a=_axis, k=_keep: _f(x, axis=a, keepdims=k),
                 lambda x, _n=_name, a=_axis, k=_keep: T_REDUCE[_n](x, a, k),
                 (_shape, _dom),
                 prim=None if _p is None else
                 lambda x, _p=_p, a=_axis, k=_keep: (_p, (x,), {"axis": a, "keepdims": k}))
    if _name == "norm":  # (the method is torch's: x.norm(p, dim))
        case("x.norm(2, 1)", lambda x: x.norm(2, 1), lambda x: T_REDUCE["norm"](x, 1, False),
             ((2, 3), _dom))
        continue
    case(f"x.{_name}(1)", lambda x, _n=_name: getattr(x, _n)(1),
         lambda x, _n=_name: T_REDUCE[_n](x, 1, False), ((2, 3), _dom))
for _fname, _tname in (("var", "var"), ("std", "std")):
    for _axis in (None, 1):
        case(f"{_fname}(ddof=1,axis={_axis})",
             lambda x, _f=getattr(cr, _fname), a=_axis: _f(x, axis=a, ddof=1),
             lambda x, _t=getattr(torch, _tname), a=_axis:
             _t(x, dim=dims_of(x, a), correction=1), ((2, 3), "any"))

# ptp, and the reductions that ignore NaN: the inputs hold NaN at every third entry
# (whose gradient is 0), no slice of NaN alone (there torch's nanmean has a gradient of
# NaN, JAX's and chainrule's 0: tests/test_numpy_additions.py)
def _nan_every_third(x):
    nan_at = np.arange(int(np.prod(x.shape))).reshape(tuple(x.shape)) % 3 == 1
    return x + _const(np.where(nan_at, np.nan, 0.0), x)


def _t_nan_filled(reduce, fill):
    return lambda x, a, k: T_REDUCE[reduce](torch.where(torch.isnan(x), fill, x), a, k)


NAN_REDUCE = [("nansum", lambda x, a, k: torch.nansum(x, dims_of(x, a), k), True),
              ("nanmean", lambda x, a, k: torch.nanmean(x, dims_of(x, a), k), True),
              ("nanmax", _t_nan_filled("max", -math.inf), True),
              ("nanmin", _t_nan_filled("min", math.inf), True),
              ("ptp", lambda x, a, k: T_REDUCE["max"](x, a, k) - T_REDUCE["min"](x, a, k),
               False)]
for _name, _t, _nans in NAN_REDUCE:
    _in = _nan_every_third if _nans else (lambda x: x)
    for _shape, _axis, _keep in [((3,), None, False), ((2, 3), 1, False),
                                 ((2, 3, 4), (0, 2), True)]:
        case(f"{_name}{_shape}axis={_axis},keepdims={_keep}",
             lambda x, _f=getattr(cr, _name), _in=_in, a=_axis, k=_keep: _f(_in(x), a,
                                                                             keepdims=k),
             lambda x, _t=_t, _in=_in, a=_axis, k=_keep: _t(_in(x), a, k), (_shape, "any"))

# trapezoid: a spacing, sample points along the axis, or sample points shaped as y
X_SAMPLES = np.array([0.0, 0.5, 1.7, 2.0])
case("trapezoid(2,4)", lambda y: cr.trapezoid(y), lambda y: torch.trapezoid(y),
     ((2, 4), "any"))
case("trapezoid(4,3)dx,axis=0", lambda y: cr.trapezoid(y, dx=0.3, axis=0),
     lambda y: torch.trapezoid(y, dx=0.3, dim=0), ((4, 3), "any"))
case("trapezoid(2,4)x", lambda y: cr.trapezoid(y, X_SAMPLES),
     lambda y: torch.trapezoid(y, torch.from_numpy(X_SAMPLES).to(y.dtype)), ((2, 4), "any"),
     f32=False)  # (float64 sample points make a float64 integral, as in NumPy)
case("trapezoid(y,x)(2,4)", lambda y, x: cr.trapezoid(y, x), lambda y, x: torch.trapezoid(y, x),
     ((2, 4), "any"), ((2, 4), "any"))

SOFTMAX_AXES = [((3,), 0), ((3,), -1), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), 1),
                ((2, 3, 4), -1)]
for _name, _f, _t, _p in (("softmax", cr.softmax, torch.softmax, D.softmax),
                          ("log_softmax", cr.log_softmax, torch.log_softmax, D.log_softmax)):
    for _shape, _axis in SOFTMAX_AXES:
        case(f"{_name}{_shape}axis={_axis}", lambda x, _f=_f, a=_axis: _f(x, axis=a),
             lambda x, _t=_t, a=_axis: _t(x, dim=a), (_shape, "wide"),
             prim=lambda x, _p=_p, a=_axis: (_p, (x,), {"axis": a}))
    case(f"{_name}(default axis)", _f, lambda x, _t=_t: _t(x, dim=-1), ((2, 3), "wide"),
         prim=lambda x, _p=_p: (_p, (x,), {}))
    case(f"x.{_name}(0)", lambda x, _n=_name: getattr(x, _n)(0),
         lambda x, _t=_t: _t(x, dim=0), ((2, 3), "wide"))

# --- linear algebra ---------------------------------------------------------------------

MATMUL_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
                ((5, 1, 2, 3), (1, 4, 3, 2))]
for _sa, _sb in MATMUL_PAIRS:
    case(f"a@b{_sa}{_sb}", operator.matmul, operator.matmul, (_sa, "any"), (_sb, "any"),
         prim=lambda a, b: (D.matmul, (a, b), {}))
    case(f"matmul{_sa}{_sb}", cr.matmul, torch.matmul, (_sa, "any"), (_sb, "any"))
case("a.matmul(b)", lambda a, b: a.matmul(b), torch.matmul, ((2, 3), "any"), ((3, 4), "any"))
case("ndarray@x", lambda x: _const(C23, x) @ x, lambda x: _const(C23, x) @ x,
     ((3, 4), "any"))

for _sa, _sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4))]:
    case(f"dot{_sa}{_sb}", cr.dot, torch.matmul, (_sa, "any"), (_sb, "any"))
case("dot()(3,)", cr.dot, torch.mul, ((), "any"), ((3,), "any"))
case("x.dot(y)", lambda a, b: a.dot(b), torch.dot, ((3,), "any"), ((3,), "any"))
case("outer(3,)(4,)", cr.outer, torch.outer, ((3,), "any"), ((4,), "any"))
case("outer(2,2)(3,)", cr.outer, lambda a, b: torch.outer(a.flatten(), b),
     ((2, 2), "any"), ((3,), "any"))
case("x.outer(y)", lambda a, b: a.outer(b), torch.outer, ((2,), "any"), ((3,), "any"))

# --- Linear algebra: decompositions, solves, contractions ------------------------------

from chainrule.rules import contractions as _cn, decompositions as _dc  # noqa: E402
from chainrule.rules import determinants as _dt  # noqa: E402


def _eye_like(x, n):
    """An identity of x's kind and dtype (a torch tensor or an ndarray)."""
    return torch.eye(n, dtype=x.dtype) if isinstance(x, torch.Tensor) else np.eye(n, dtype=x.dtype)


def _spd(x):
    """x x^T + n I: symmetric positive definite, built from a free matrix inside the
    function, so that PyTorch, the differences and chainrule see the same function."""
    n = x.shape[-1]
    return x @ x.swapaxes(-1, -2) + n * _eye_like(x, n)


def _sym_t(x):
    """(x + x^T)/2 in PyTorch: chainrule's cholesky and eigh symmetrise their input (as
    JAX's do), PyTorch's read one triangle; on this the two are the same function."""
    return 0.5 * (x + x.mT)


def _t_slogdet(x):
    sign, logdet = torch.linalg.slogdet(x)
    return [sign + 0.0 * logdet, logdet]  # (a sign with a zero gradient, as chainrule's)


def _eigh_invariants(w, v):
    """What does not depend on the eigenvectors' signs (NumPy's and PyTorch's may differ):
    the eigenvalues and the squared entries of the eigenvectors."""
    return [w, v ** 2]


def _svd_invariants(u, s, vh):
    """Sign-free parts of an SVD: S, squared entries of U and Vh, and U @ Vh."""
    return [s, u ** 2, vh ** 2, u @ vh]


SQUARE = [(3, 3), (2, 3, 3)]
for _s in SQUARE:
    case(f"inv{_s}", cr.inv, torch.linalg.inv, (_s, "wellcond"),
         prim=lambda x: (D.inv, (x,), {}))
    case(f"det{_s}", cr.det, torch.linalg.det, (_s, "wellcond"),
         prim=lambda x: (D.det, (x,), {}))
    case(f"slogdet{_s}", lambda x: list(cr.slogdet(x)), _t_slogdet, (_s, "wellcond"))
    case(f"slogdet(-x){_s}", lambda x: list(cr.slogdet(-x)), lambda x: _t_slogdet(-x),
         (_s, "wellcond"))
    case(f"logabsdet{_s}", lambda x: cr.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1],
         (_s, "wellcond"), prim=lambda x: (_dt._logabsdet, (x,), {}))
    case(f"slogdet sign{_s}", lambda x: cr.slogdet(x)[0] * x.sum(),
         lambda x: torch.linalg.slogdet(x)[0] * x.sum(), (_s, "wellcond"),
         prim=lambda x: (_dt._det_sign, (x,), {}))
    case(f"cholesky{_s}", cr.cholesky, lambda x: torch.linalg.cholesky(_sym_t(x)),
         (_s, "spd"), prim=lambda x: (D.cholesky, (x,), {}))
    case(f"cholesky(spd(x)){_s}", lambda x: cr.linalg.cholesky(_spd(x)),
         lambda x: torch.linalg.cholesky(_spd(x)), (_s, "any"))
    case(f"eigh{_s}", lambda x: _eigh_invariants(*cr.eigh(x)),
         lambda x: _eigh_invariants(*torch.linalg.eigh(_sym_t(x))),
         (_s, "spd"), prim=lambda x: (_dc._eigh, (x,), {}))
    case(f"eigh(spd(x)){_s}", lambda x: cr.linalg.eigh(_spd(x)).eigenvalues,
         lambda x: torch.linalg.eigh(_spd(x))[0], (_s, "any"))
    case(f"eigvalsh{_s}", cr.eigvalsh, lambda x: torch.linalg.eigvalsh(_sym_t(x)),
         (_s, "spd"), prim=lambda x: (D.eigvalsh, (x,), {}))
    case(f"trace{_s}", lambda x: cr.trace(x, axis1=-2, axis2=-1),
         lambda x: torch.diagonal(x, 0, -2, -1).sum(-1), (_s, "any"))
    for _n in (0, 1, 3, -2):
        case(f"matrix_power({_n}){_s}", lambda x, n=_n: cr.matrix_power(x, n),
             lambda x, n=_n: torch.linalg.matrix_power(x, n), (_s, "wellcond"))
    for _lower in (True, False):
        case(f"solve_triangular(lower={_lower}){_s}",
             lambda a, b, lo=_lower: cr.solve_triangular(a, b, lower=lo),
             lambda a, b, lo=_lower: torch.linalg.solve_triangular(a, b, upper=not lo),
             (_s, "wellcond"), (_s[:-1] + (2,), "any"))
for _sa, _sb in [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 4)),
                 ((2, 3, 3), (3, 4)), ((3, 3), (2, 3, 1))]:
    case(f"solve{_sa}{_sb}", cr.solve, torch.linalg.solve, (_sa, "wellcond"), (_sb, "any"),
         prim=lambda a, b: (D.solve, (a, b), {}))
case("solve_triangular(3,3)(3,)", lambda a, b: cr.solve_triangular(a, b, lower=True),
     lambda a, b: torch.linalg.solve_triangular(a, b[:, None], upper=False)[:, 0],
     ((3, 3), "wellcond"), ((3,), "any"))
case("trace(offset=1,axis1=2,axis2=0)", lambda x: cr.trace(x, 1, 2, 0),
     lambda x: torch.diagonal(x, 1, 2, 0).sum(-1), ((3, 2, 4), "any"))
case("trace(offset=-1)", lambda x: cr.trace(x, -1), lambda x: torch.diagonal(x, -1).sum(),
     ((3, 4), "any"))
case("x.trace()", lambda x: x.trace(), torch.trace, ((3, 3), "any"))

for _s in [(3, 3), (4, 2), (2, 4), (2, 3, 2)]:
    case(f"svd{_s}", lambda x: _svd_invariants(*cr.svd(x, full_matrices=False)),
         lambda x: _svd_invariants(*torch.linalg.svd(x, full_matrices=False)),
         (_s, "any"), prim=lambda x: (_dc._svd, (x,), {}))
    case(f"svdvals{_s}", cr.svdvals, torch.linalg.svdvals, (_s, "any"),
         prim=lambda x: (D.svdvals, (x,), {}))
    case(f"qr{_s}", lambda x: list(cr.qr(x)), lambda x: list(torch.linalg.qr(x)), (_s, "any"),
         prim=None if _s[-2] < _s[-1] else lambda x: (_dc._qr, (x,), {}))
    case(f"pinv{_s}", cr.pinv, torch.linalg.pinv, (_s, "any"),
         prim=lambda x: (D.pinv, (x,), {}))
case("svd(compute_uv=False)", lambda x: cr.linalg.svd(x, compute_uv=False),
     torch.linalg.svdvals, ((3, 2), "any"))
for _sb in [(4,), (4, 2)]:
    case(f"lstsq(4,2){_sb}", lambda a, b: list(cr.lstsq(a, b)[:2]),
         lambda a, b: [torch.linalg.pinv(a) @ b,
                       ((a @ (torch.linalg.pinv(a) @ b) - b) ** 2).sum(0).reshape(-1)],
         ((4, 2), "any"), (_sb, "any"))

# cr.linalg.norm: NumPy's ord, axis and keepdims, against torch's vector and matrix norms
_VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 3, 0.5]
for _ord in _VECTOR_ORDS:
    case(f"linalg.norm(3,)ord={_ord}", lambda x, o=_ord: cr.linalg.norm(x, o),
         lambda x, o=_ord: torch.linalg.vector_norm(x, 2 if o is None else o), ((3,), "any"))
    case(f"linalg.norm(2,3)ord={_ord},axis=1,keepdims",
         lambda x, o=_ord: cr.linalg.norm(x, o, axis=1, keepdims=True),
         lambda x, o=_ord: torch.linalg.vector_norm(x, 2 if o is None else o, dim=1,
                                                    keepdim=True), ((2, 3), "any"))
for _ord in [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]:
    case(f"linalg.norm(3,4)ord={_ord}", lambda x, o=_ord: cr.linalg.norm(x, o),
         lambda x, o=_ord: torch.linalg.matrix_norm(x, "fro" if o is None else o),
         ((3, 4), "any"))
    case(f"linalg.norm(2,3,4)ord={_ord},axis=(2,0),keepdims",
         lambda x, o=_ord: cr.linalg.norm(x, o, axis=(2, 0), keepdims=True),
         lambda x, o=_ord: torch.linalg.matrix_norm(x, "fro" if o is None else o, dim=(2, 0),
                                                    keepdim=True), ((2, 3, 4), "any"))
case("linalg.norm(2,3,4)", cr.linalg.norm, lambda x: torch.linalg.vector_norm(x),
     ((2, 3, 4), "any"))
for _ord, _axis in [(2, None), (1, (0, 2)), (np.inf, -1), (3, None)]:
    case(f"linalg.vector_norm(2,3,4)ord={_ord},axis={_axis}",
         lambda x, o=_ord, a=_axis: cr.linalg.vector_norm(x, a, ord=o),
         lambda x, o=_ord, a=_axis: torch.linalg.vector_norm(x, o, dim=a), ((2, 3, 4), "any"))
for _ord in ["fro", "nuc", 2, -np.inf]:
    case(f"linalg.matrix_norm(2,3,4)ord={_ord}",
         lambda x, o=_ord: cr.linalg.matrix_norm(x, keepdims=True, ord=o),
         lambda x, o=_ord: torch.linalg.matrix_norm(x, o, keepdim=True), ((2, 3, 4), "any"))
case("linalg.multi_dot", lambda a, b, c: cr.linalg.multi_dot([a, b, c]),
     lambda a, b, c: torch.linalg.multi_dot([a, b, c]), ((3,), "any"), ((3, 4), "any"),
     ((4, 2), "any"))

# contractions: einsum in every spelling NumPy accepts
EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]), ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,jk", [(2, 2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("iij->j", [(3, 3, 2)]), ("iji->j", [(3, 2, 3)]), ("ij,ij->i", [(2, 3), (1, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ijk->kij", [(2, 3, 4)]),
    ("i...->...", [(2, 3, 4)]), ("ik,k->i", [(2, 3), (3,)]), ("iii->i", [(2, 2, 2)]),
    ("ij,k->ijk", [(2, 3), (2,)]), ("ij->i", [(2, 3)]), ("ijk,ik->", [(2, 3, 4), (2, 4)]),
    ("...,...->...", [(2, 3), (3,)]),
]
for _sub, _shapes in EINSUMS:
    case(f"einsum('{_sub}'){_shapes}", lambda *xs, s=_sub: cr.einsum(s, *xs),
         lambda *xs, s=_sub: torch.einsum(s, *xs), *[(sh, "any") for sh in _shapes],
         prim=lambda *xs, s=_sub: (_cn._einsum, xs, {"subscripts": s}))
case("einsum('ij,ij->',x,x)", lambda x: cr.einsum("ij,ij->", x, x),
     lambda x: torch.einsum("ij,ij->", x, x), ((2, 3), "any"))
case("einsum(interleaved)", lambda a, b: cr.einsum(a, [0, 1], b, [1, 2], [0, 2]),
     lambda a, b: a @ b, ((2, 3), "any"), ((3, 4), "any"))
case("np.einsum(tensors)", lambda a, b: np.einsum("ij,jk->ik", a, b),
     lambda a, b: a @ b, ((2, 3), "any"), ((3, 4), "any"))

for _sa, _sb, _axes in [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0),
                        ((2, 3, 4), (4, 3), ([1, 2], [1, 0])), ((3, 4), (2, 4), (1, 1))]:
    case(f"tensordot{_sa}{_sb}axes={_axes}", lambda a, b, ax=_axes: cr.tensordot(a, b, ax),
         lambda a, b, ax=_axes: torch.tensordot(a, b, dims=ax if isinstance(ax, int) else
                                                [list(np.atleast_1d(d)) for d in ax]),
         (_sa, "any"), (_sb, "any"))
for _sa, _sb in [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (2, 3))]:
    case(f"inner{_sa}{_sb}", cr.inner, torch.inner, (_sa, "any"), (_sb, "any"))
for _sa, _sb in [((2,), (3,)), ((2, 2), (3, 2)), ((2,), (2, 3)), ((2, 1, 2), (3, 2))]:
    case(f"kron{_sa}{_sb}", cr.kron, torch.kron, (_sa, "any"), (_sb, "any"))
case("vdot(2,3)(3,2)", cr.vdot, lambda a, b: torch.vdot(a.flatten(), b.flatten()),
     ((2, 3), "any"), ((3, 2), "any"))
for _sa, _sb in [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))]:
    case(f"cross{_sa}{_sb}", cr.cross,
         lambda a, b: torch.linalg.cross(*torch.broadcast_tensors(a, b)),
         (_sa, "any"), (_sb, "any"))
case("cross(axis=0)", lambda a, b: cr.cross(a, b, axis=0),
     lambda a, b: torch.linalg.cross(a, b, dim=0), ((3, 2), "any"), ((3, 2), "any"))
case("cross(2-vectors)", cr.cross, lambda a, b: a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
     ((2, 2), "any"), ((2,), "any"))
for _sa, _sb in [((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((3,), (2, 3, 4)),
                 ((2, 3), (4, 3, 2))]:
    case(f"dot{_sa}{_sb}", cr.dot,
         lambda a, b: torch.tensordot(a, b, dims=([a.ndim - 1], [max(b.ndim - 2, 0)])),
         (_sa, "any"), (_sb, "any"))



def _t_sliding(a, v, mode, convolve):
    """np.convolve and np.correlate (of real operands) in torch: conv1d, a correlation,
    with the longer operand as the input and the kernel flipped for a convolution."""
    swapped = len(v) > len(a)
    if swapped:
        a, v = v, a
    if convolve:
        v = v.flip(0)
    m = len(v)
    pads = {"full": (m - 1, m - 1), "same": (m // 2, m - 1 - m // 2), "valid": (0, 0)}[mode]
    out = TF.conv1d(TF.pad(a, pads)[None, None], v[None, None])[0, 0]
    return out.flip(0) if swapped and not convolve else out


for _sa, _sb in [((5,), (3,)), ((4,), (6,))]:  # an odd kernel; a longer, even v (swapped)
    for _mode in ("full", "same", "valid"):
        for _name in ("convolve", "correlate"):
            case(f"{_name}{_sa}{_sb}{_mode}",
                 lambda a, v, f=getattr(cr, _name), m=_mode: f(a, v, m),
                 lambda a, v, m=_mode, c=_name == "convolve": _t_sliding(a, v, m, c),
                 (_sa, "any"), (_sb, "any"))

# --- shapes -----------------------------------------------------------------------------

for _shape, _new in [((2, 3), (3, 2)), ((2, 3), (6,)), ((2, 3, 4), (4, -1)), ((), (1, 1)),
                     ((6,), (2, 1, 3))]:
    case(f"reshape{_shape}->{_new}", lambda x, s=_new: cr.reshape(x, s),
         lambda x, s=_new: x.reshape(s), (_shape, "any"),
         prim=lambda x, s=_new: (shapes._reshape, (x, s), {}))


def _t_reshape_f(x, shape):
    """NumPy's reshape in Fortran order, which torch lacks: C order on reversed axes."""
    reverse = lambda t: t.permute(*range(t.ndim - 1, -1, -1))
    return reverse(reverse(x).reshape(tuple(shape)[::-1]))


for _shape, _new in [((2, 3), (3, 2)), ((2, 3, 4), (4, -1)), ((6,), (2, 1, 3))]:
    case(f"reshape{_shape}->{_new},F", lambda x, s=_new: cr.reshape(x, s, order="F"),
         lambda x, s=_new: _t_reshape_f(x, s), (_shape, "any"))
case("x.reshape(3,2,order=F)", lambda x: x.reshape(3, 2, order="F"),
     lambda x: _t_reshape_f(x, (3, 2)), ((2, 3), "any"))
case("x.reshape(3,2)", lambda x: x.reshape(3, 2), lambda x: x.reshape(3, 2), ((2, 3), "any"))
case("x.reshape((3,2))", lambda x: x.reshape((3, 2)), lambda x: x.reshape(3, 2),
     ((2, 3), "any"))

case("x.T", lambda x: x.T, lambda x: x.T, ((2, 3), "any"),
     prim=lambda x: (D.transpose, (x,), {}))
case("transpose(2,3,4)", cr.transpose, lambda x: x.permute(2, 1, 0), ((2, 3, 4), "any"),
     prim=lambda x: (D.transpose, (x,), {}))
for _axes in [(1, 2, 0), (2, 0, 1), (-1, 0, 1)]:
    case(f"transpose{_axes}", lambda x, a=_axes: cr.transpose(x, a),
         lambda x, a=_axes: x.permute(*a), ((2, 3, 4), "any"),
         prim=lambda x, a=_axes: (D.transpose, (x, a), {}))
case("permute(x,2,0,1)", lambda x: cr.permute(x, 2, 0, 1), lambda x: x.permute(2, 0, 1),
     ((2, 3, 4), "any"))
case("x.permute((1,2,0))", lambda x: x.permute((1, 2, 0)), lambda x: x.permute(1, 2, 0),
     ((2, 3, 4), "any"))
case("x.transpose(1,0,2)", lambda x: x.transpose(1, 0, 2), lambda x: x.permute(1, 0, 2),
     ((2, 3, 4), "any"))
for _a1, _a2 in [(0, 2), (-1, 0), (1, 1)]:
    case(f"swapaxes({_a1},{_a2})", lambda x, a=_a1, b=_a2: cr.swapaxes(x, a, b),
         lambda x, a=_a1, b=_a2: torch.swapaxes(x, a, b), ((2, 3, 4), "any"),
         prim=lambda x, a=_a1, b=_a2: (D.swapaxes, (x, a, b), {}))

for _shape, _to in [((3,), (2, 3)), ((3, 1), (2, 3, 4)), ((), (2, 2)), ((1, 3), (1, 3))]:
    case(f"broadcast_to{_shape}->{_to}", lambda x, s=_to: cr.broadcast_to(x, s),
         lambda x, s=_to: torch.broadcast_to(x, s), (_shape, "any"),
         prim=lambda x, s=_to: (D.broadcast_to, (x, s), {}))
case("expand(x,2,-1,4)", lambda x: cr.expand(x, 2, -1, 4), lambda x: x.expand(2, -1, 4),
     ((3, 1), "any"))
case("x.expand((4,3))", lambda x: x.expand((4, 3)), lambda x: x.expand(4, 3), ((1, 3), "any"))
case("x.broadcast_to((2,3))", lambda x: x.broadcast_to((2, 3)),
     lambda x: x.broadcast_to((2, 3)), ((3,), "any"))

for _axis, _tdim in [(None, None), (0, 0), (-1, -1), ((0, 2), (0, 2))]:
    case(f"squeeze(axis={_axis})", lambda x, a=_axis: cr.squeeze(x, a),
         lambda x, d=_tdim: x.squeeze() if d is None else x.squeeze(d), ((1, 3, 1), "any"),
         prim=lambda x, a=_axis: (D.squeeze, (x, a), {}))
case("x.squeeze()", lambda x: x.squeeze(), lambda x: x.squeeze(), ((1, 3), "any"))
for _axis in (0, 1, -1):
    case(f"unsqueeze({_axis})", lambda x, a=_axis: cr.unsqueeze(x, a),
         lambda x, a=_axis: x.unsqueeze(a), ((2, 3), "any"),
         prim=lambda x, a=_axis: (D.expand_dims, (x, a), {}))
case("expand_dims(x,0)()", lambda x: cr.expand_dims(x, 0), lambda x: x.unsqueeze(0),
     ((), "any"))
case("topk(3,4)k=2", lambda x: cr.topk(x, 2).values, lambda x: torch.topk(x, 2).values,
     ((3, 4), "any"))
case("topk(3,4)k=2,axis=0,smallest", lambda x: cr.topk(x, 2, axis=0, largest=False).values,
     lambda x: torch.topk(x, 2, dim=0, largest=False).values, ((3, 4), "any"))
case("x.unsqueeze(1)", lambda x: x.unsqueeze(1), lambda x: x.unsqueeze(1), ((3,), "any"))
case("x.expand_dims(-1)", lambda x: x.expand_dims(-1), lambda x: x.unsqueeze(-1),
     ((3,), "any"))

for _shape, _args in [((2, 3, 4), ()), ((2, 3, 4), (1,)), ((2, 3, 4), (0, 1)), ((), ()),
                      ((3,), ())]:
    case(f"flatten{_shape}{_args}", lambda x, a=_args: cr.flatten(x, *a),
         lambda x, a=_args: torch.flatten(x, *a), (_shape, "any"))
case("x.flatten(1)", lambda x: x.flatten(1), lambda x: x.flatten(1), ((2, 3, 4), "any"))

# concatenate and stack: any number of tensors; the same tensor twice accumulates
for _shapes, _axis in [([(2, 3), (1, 3)], 0), ([(2, 3), (2, 2), (2, 1)], 1),
                       ([(2, 3), (2, 2)], -1), ([(3,), (2,)], 0), ([(2, 3, 1), (2, 3, 2)], 2)]:
    case(f"concatenate{_shapes}axis={_axis}",
         lambda *xs, a=_axis: cr.concatenate(list(xs), axis=a),
         lambda *xs, a=_axis: torch.cat(xs, dim=a), *[(s, "any") for s in _shapes],
         prim=lambda *xs, a=_axis: (D._concatenate, xs, {"axis": a}))
case("concatenate([x,x])", lambda x: cr.concatenate([x, x]), lambda x: torch.cat([x, x]),
     ((2, 3), "any"), prim=lambda x: (D._concatenate, (x, x), {}))
case("concatenate([x,ndarray])",
     lambda x: cr.concatenate([x, _const(C23, x)], axis=0),
     lambda x: torch.cat([x, _const(C23, x)], dim=0), ((1, 3), "any"),
     prim=lambda x: (D._concatenate, (x, np.asarray(C23, x.dtype)), {"axis": 0}))
for _shapes, _axis in [([(2, 3), (2, 3)], 0), ([(2, 3), (2, 3)], 1), ([(2, 3), (2, 3)], -1),
                       ([(2, 3), (2, 3), (2, 3)], 2), ([(), ()], 0)]:
    case(f"stack{_shapes}axis={_axis}", lambda *xs, a=_axis: cr.stack(list(xs), axis=a),
         lambda *xs, a=_axis: torch.stack(xs, dim=a), *[(s, "any") for s in _shapes],
         prim=lambda *xs, a=_axis: (D._stack, xs, {"axis": a}))
case("stack([x,x])", lambda x: cr.stack([x, x], axis=1),
     lambda x: torch.stack([x, x], dim=1), ((3,), "any"),
     prim=lambda x: (D._stack, (x, x), {"axis": 1}))
case("tensor([x,y])", lambda a, b: cr.tensor([a, b]), lambda a, b: torch.stack([a, b]),
     ((3,), "any"), ((3,), "any"))

# split returns a list of pieces: each gets its own cotangent
for _shape, _sections, _axis in [((6,), 3, 0), ((2, 6), [1, 4], 1), ((4, 3), 2, 0),
                                 ((2, 6), 3, -1)]:
    case(f"split{_shape},{_sections},axis={_axis}",
         lambda x, s=_sections, a=_axis: cr.split(x, s, axis=a),
         lambda x, s=_sections, a=_axis: torch.tensor_split(x, s, dim=a), (_shape, "any"))
case("x.split(2)", lambda x: x.split(2), lambda x: torch.tensor_split(x, 2), ((4,), "any"))

# --- indexing: every kind of index; repeated indices must accumulate ---------------------

MASK45 = seeded("mask").random((4, 5)) > 0.5
INDEXES = [
    ("1", 1), ("-1", -1), ("1:3", slice(1, 3)), ("::2", slice(None, None, 2)),
    (":,1:4", (slice(None), slice(1, 4))), ("1,2:", (1, slice(2, None))),
    ("...,1", (Ellipsis, 1)), ("1,...", (1, Ellipsis)), ("None", None),
    (":,None,2", (slice(None), None, 2)),
    ("mask45", MASK45), ("rowmask", np.array([True, False, True, True])),
    (":,colmask", (slice(None), np.array([True, False, True, False, True]))),
    ("[T,F,T,T],1", ([True, False, True, True], 1)),
    ("[0,2,2,0,3]", np.array([0, 2, 2, 0, 3])), ("[[0,1],[1,1]]", np.array([[0, 1], [1, 1]])),
    ("rows,cols repeated", (np.array([0, 0, 1, 3]), np.array([1, 1, 4, 1]))),
    ("list [3,3,1]", [3, 3, 1]), ("[2,2],1:4", (np.array([2, 2]), slice(1, 4))),
    ("1,[0,0,4]", (1, np.array([0, 0, 4]))),
]
for _name, _index in INDEXES:
    case(f"x[{_name}]", lambda x, i=_index: x[i], lambda x, i=_index: x[t_index(i)],
         ((4, 5), "any"),
         prim=lambda x, i=_index: (D.getitem, (x,),
                                   {"index": np.asarray(i) if isinstance(i, list) else i}))
case("x[...,[1,1]](2,3,4)", lambda x: x[..., np.array([1, 1])],
     lambda x: x[..., torch.tensor([1, 1])], ((2, 3, 4), "any"))
case("x[int tensor]", lambda x: x[cr.tensor([1, 1, 0], dtype=np.int64)],
     lambda x: x[torch.tensor([1, 1, 0])], ((3,), "any"))
case("x[1](3,)", lambda x: x[1], lambda x: x[1], ((3,), "any"))
case("x[::-1]", lambda x: x[::-1], lambda x: torch.flip(x, [0]), ((4, 5), "any"),
     prim=lambda x: (D.getitem, (x,), {"index": slice(None, None, -1)}))

# empty tensors: the gradient is empty too, with the input's shape
case("sum(0,3)axis=0", lambda x: cr.sum(x, axis=0), lambda x: torch.sum(x, dim=0),
     ((0, 3), "any"), prim=lambda x: (D.sum, (x,), {"axis": 0}))
case("concatenate[(0,3),(2,3)]", lambda a, b: cr.concatenate([a, b]),
     lambda a, b: torch.cat([a, b]), ((0, 3), "any"), ((2, 3), "any"),
     prim=lambda a, b: (D._concatenate, (a, b), {}))
case("matmul(2,0)(0,3)", cr.matmul, torch.matmul, ((2, 0), "any"), ((0, 3), "any"))


# x.at[index].set(v) / .add(v): differentiable in x and in v
def _t_set(x, v, index):
    y = x.clone()
    y[t_index(index)] = v
    return y


def _t_add(x, v, index):
    parts = index if isinstance(index, tuple) else (index,)
    if all(isinstance(p, np.ndarray) for p in parts):  # advanced: repeated indices add up
        return x.index_put(tuple(torch.from_numpy(p) for p in parts), v, accumulate=True)
    y = x.clone()
    y[t_index(index)] = y[t_index(index)] + v
    return y


AT = [  # (name, index, shape of v); no repeated index for set (which write wins is unspecified)
    ("1", 1, (5,)), ("1:3,2", (slice(1, 3), 2), ()), ("mask45", MASK45, (int(MASK45.sum()),)),
    ("[0,2]", np.array([0, 2]), (2, 5)), ("...,0", (Ellipsis, 0), (4,)),
    ("1:3 bcast", slice(1, 3), (5,)), ("rows,cols", (np.array([0, 3]), np.array([1, 4])), (2,)),
]
AT_ADD_ONLY = [
    ("[0,2,0]", np.array([0, 2, 0]), (3, 5)),
    ("rows,cols repeated", (np.array([0, 0, 1]), np.array([1, 1, 4])), (3,)),
]
for _k, (_name, _index, _vshape) in enumerate(AT + AT_ADD_ONLY):
    if _k < len(AT):
        case(f"x.at[{_name}].set(v)", lambda x, v, i=_index: x.at[i].set(v),
             lambda x, v, i=_index: _t_set(x, v, i), ((4, 5), "any"), (_vshape, "any"),
             prim=lambda x, v, i=_index: (D.index_set, (x, v), {"index": i}))
    case(f"x.at[{_name}].add(v)", lambda x, v, i=_index: x.at[i].add(v),
         lambda x, v, i=_index: _t_add(x, v, i), ((4, 5), "any"), (_vshape, "any"),
         prim=lambda x, v, i=_index: (D.index_add, (x, v), {"index": i}))
case("x.at[1].set(2.0)", lambda x: x.at[1].set(2.0), lambda x: _t_set(x, 2.0, 1),
     ((4, 5), "any"), prim=lambda x: (D.index_set, (x, 2.0), {"index": 1}))


# x.at[index].multiply(v) / .min(v) / .max(v): PyTorch's scatter_reduce at the flat
# positions the index picks, x included; the draws keep x and v apart (no ties)
def _t_reduce(x, v, index, reduce):
    positions = np.arange(x.numel()).reshape(tuple(x.shape))[index]
    values = torch.broadcast_to(v, positions.shape).reshape(-1)
    return x.reshape(-1).scatter_reduce(0, torch.from_numpy(positions.reshape(-1)), values,
                                        reduce, include_self=True).reshape(x.shape)


for _name, _index, _vshape in AT + AT_ADD_ONLY:
    for _method, _reduce, _prim in (("multiply", "prod", D.index_multiply),
                                    ("min", "amin", D.index_min), ("max", "amax", D.index_max)):
        case(f"x.at[{_name}].{_method}(v)",
             lambda x, v, i=_index, m=_method: getattr(x.at[i], m)(v),
             lambda x, v, i=_index, r=_reduce: _t_reduce(x, v, i, r),
             ((4, 5), "any"), (_vshape, "any"),
             prim=lambda x, v, i=_index, p=_prim: (p, (x, v), {"index": i}))

# --- cumulative operations and ordering (rules/ordering.py) -------------------------------

for _axis in (0, 1, -1):
    case(f"cumsum(axis={_axis})", lambda x, a=_axis: cr.cumsum(x, a),
         lambda x, a=_axis: torch.cumsum(x, a), ((3, 4), "any"),
         prim=lambda x, a=_axis: (D._cumsum, (x, a - 2 if a >= 0 else a), {}))
    case(f"cumprod(axis={_axis})", lambda x, a=_axis: cr.cumprod(x, a),
         lambda x, a=_axis: torch.cumprod(x, a), ((3, 4), "any"))
case("cumsum(flat)", cr.cumsum, lambda x: torch.cumsum(x.flatten(), 0), ((2, 3), "any"))
case("cumprod(flat)", cr.cumprod, lambda x: torch.cumprod(x.flatten(), 0), ((2, 3), "any"))
_ZERO_AT_1 = np.array([1.0, 0.0, 1.0, 1.0])  # cumprod through a zero: exact derivatives
case("cumprod(with a zero)", lambda x: cr.cumprod(x * _const(_ZERO_AT_1, x)),
     lambda x: torch.cumprod(x * _const(_ZERO_AT_1, x), 0), ((4,), "any"))
case("diff", cr.diff, torch.diff, ((3, 4), "any"))
case("diff(n=2,axis=0)", lambda x: cr.diff(x, 2, axis=0), lambda x: torch.diff(x, 2, dim=0),
     ((4, 3), "any"))
case("diff(prepend,append)", lambda x, p: cr.diff(x, prepend=p, append=0.5),
     lambda x, p: torch.diff(x, prepend=p, append=torch.full((1,), 0.5, dtype=x.dtype)),
     ((4,), "any"), ((1,), "any"))
case("sort", cr.sort, lambda x: torch.sort(x).values, ((3, 4), "wide"))
case("sort(axis=0)", lambda x: cr.sort(x, 0), lambda x: torch.sort(x, 0).values,
     ((3, 4), "wide"))
case("sort(axis=None)", lambda x: cr.sort(x, None), lambda x: torch.sort(x.flatten()).values,
     ((3, 4), "wide"))
# unique: each distinct value its first occurrence; with distinct entries (wide draws),
# the sorted entries, so torch's sort is the reference (torch's unique has no derivative)
case("unique", cr.unique, lambda x: torch.sort(x.flatten()).values, ((3, 4), "wide"))
case("unique(axis=0)", lambda x: cr.unique(x, axis=0),
     lambda x: x[torch.from_numpy(np.unique(x.detach().numpy(), axis=0,
                                            return_index=True)[1])], ((4, 3), "wide"))
case("partition(kth=1)", lambda x: cr.partition(x, 1),
     lambda x: torch.gather(x, -1, torch.from_numpy(
         np.argpartition(x.detach().numpy(), 1, -1))), ((3, 5), "wide"))
_TAKE = np.array([2, 0, 2, 5])
case("take(flat)", lambda x: cr.take(x, _TAKE),
     lambda x: torch.take(x, torch.from_numpy(_TAKE)), ((2, 3), "any"))
case("take(axis=1)", lambda x: cr.take(x, _TAKE[:3], axis=1),
     lambda x: torch.index_select(x, 1, torch.from_numpy(_TAKE[:3])), ((2, 3), "any"))
_ALONG = np.array([[0, 2], [1, 1], [2, 0]])
case("take_along_axis", lambda x: cr.take_along_axis(x, _ALONG, axis=1),
     lambda x: torch.take_along_dim(x, torch.from_numpy(_ALONG), 1), ((3, 3), "any"))


# interp: constant knots, or knots moved (no further than keeps them sorted), and
# values at them; points of either sign, some beyond the ends
_KNOTS = np.array([-1.0, -0.2, 0.5, 1.3])


def _t_interp(x, knots, values, left=None, right=None):
    """np.interp in torch, the segment of each point found by torch's searchsorted."""
    right_end = torch.searchsorted(knots.detach(), x.detach().contiguous(), right=True)
    i = right_end.clamp(1, len(knots) - 1)
    x0, x1, f0, f1 = knots[i - 1], knots[i], values[i - 1], values[i]
    f = f0 + (x - x0) / (x1 - x0) * (f1 - f0)
    f = torch.where(x < knots[0], values[0] if left is None else left, f)
    return torch.where(x > knots[-1], values[-1] if right is None else right, f)


def _t_periodic_interp(x, knots, values, period):
    knots = knots % period
    order = torch.argsort(knots.detach())
    knots, values = knots[order], values[order]
    knots = torch.cat([knots[-1:] - period, knots, knots[:1] + period])
    values = torch.cat([values[-1:], values, values[:1]])
    return _t_interp(x % period, knots, values)


case("interp(x,fp)", lambda x, f: cr.interp(x, _const(_KNOTS, x), f),
     lambda x, f: _t_interp(x, _const(_KNOTS, x), f), ((2, 3), "any"), ((4,), "any"))
case("interp(x,xp,fp)", lambda x, k, f: cr.interp(x, _const(_KNOTS, k) + 0.1 * k, f),
     lambda x, k, f: _t_interp(x, _const(_KNOTS, k) + 0.1 * k, f), ((5,), "any"),
     ((4,), "any"), ((4,), "any"))
case("interp(left,right)", lambda x, f: cr.interp(x, _const(_KNOTS, x), f, -3.0, 2.0),
     lambda x, f: _t_interp(x, _const(_KNOTS, x), f, -3.0, 2.0), ((2, 3), "any"),
     ((4,), "any"))
case("interp(period)", lambda x, f: cr.interp(x, _const(_KNOTS, x), f, period=2.0),
     lambda x, f: _t_periodic_interp(x, _const(_KNOTS, x), f, 2.0), ((2, 3), "any"),
     ((4,), "any"))

# --- assembly (rules/assembly.py) ---------------------------------------------------------


def _gather_ref(x, positions, axis):
    """torch: the entries at NumPy-computed positions along an axis (pad's reference for
    the modes torch's pad lacks or restricts to batched inputs)."""
    return torch.index_select(x, axis, torch.from_numpy(positions))


def _t_pad(x, widths, mode):
    for axis, (before, after) in enumerate(widths):
        x = _gather_ref(x, np.pad(np.arange(x.shape[axis]), (before, after), mode=mode), axis)
    return x


case("flip", cr.flip, lambda x: torch.flip(x, (0, 1)), ((2, 3), "any"))
case("flip(axis=1)", lambda x: cr.flip(x, 1), lambda x: torch.flip(x, (1,)), ((2, 3), "any"))
case("fliplr", cr.fliplr, torch.fliplr, ((2, 3), "any"))
case("flipud", cr.flipud, torch.flipud, ((2, 3), "any"))
for _k in (1, 2, 3):
    case(f"rot90(k={_k})", lambda x, k=_k: cr.rot90(x, k), lambda x, k=_k: torch.rot90(x, k),
         ((2, 3), "any"))
case("moveaxis", lambda x: cr.moveaxis(x, 0, -1), lambda x: torch.movedim(x, 0, -1),
     ((2, 3, 4), "any"))
case("rollaxis", lambda x: cr.rollaxis(x, 2), lambda x: torch.movedim(x, 2, 0),
     ((2, 3, 4), "any"))
case("roll", lambda x: cr.roll(x, 2), lambda x: torch.roll(x, 2), ((2, 3), "any"))
case("roll(axis)", lambda x: cr.roll(x, (1, -1), (0, 1)),
     lambda x: torch.roll(x, (1, -1), (0, 1)), ((2, 3), "any"))
case("tile", lambda x: cr.tile(x, (2, 1, 2)), lambda x: torch.tile(x, (2, 1, 2)),
     ((2, 3), "any"))
case("repeat", lambda x: cr.repeat(x, 2), lambda x: torch.repeat_interleave(x.flatten(), 2),
     ((2, 3), "any"))
case("repeat(counts,axis=0)", lambda x: cr.repeat(x, [1, 3], axis=0),
     lambda x: torch.repeat_interleave(x, torch.tensor([1, 3]), 0), ((2, 3), "any"))
_WIDTHS = ((1, 2), (2, 0))
case("pad(constant)", lambda x: cr.pad(x, _WIDTHS, constant_values=0.5),
     lambda x: TF.pad(x, (2, 0, 1, 2), value=0.5), ((3, 4), "any"))
for _mode in ("edge", "reflect", "symmetric", "wrap"):
    case(f"pad({_mode})", lambda x, m=_mode: cr.pad(x, _WIDTHS, mode=m),
         lambda x, m=_mode: _t_pad(x, _WIDTHS, m), ((3, 4), "any"))
for _k in (0, 1, -1):
    case(f"tril(k={_k})", lambda x, k=_k: cr.tril(x, k), lambda x, k=_k: torch.tril(x, k),
         ((3, 4), "any"))
    case(f"triu(k={_k})", lambda x, k=_k: cr.triu(x, k), lambda x, k=_k: torch.triu(x, k),
         ((2, 3, 4), "any"))
    case(f"diagonal(offset={_k})", lambda x, k=_k: cr.diagonal(x, k),
         lambda x, k=_k: torch.diagonal(x, k), ((3, 4), "any"))
    case(f"diag(1-D, k={_k})", lambda x, k=_k: cr.diag(x, k), lambda x, k=_k: torch.diag(x, k),
         ((3,), "any"))
    case(f"diag(2-D, k={_k})", lambda x, k=_k: cr.diag(x, k), lambda x, k=_k: torch.diag(x, k),
         ((3, 4), "any"))
case("diagonal(axes 1,2)", lambda x: cr.diagonal(x, 0, 1, 2),
     lambda x: torch.diagonal(x, 0, 1, 2), ((2, 3, 3), "any"))
for _n, _t in ((1, torch.atleast_1d), (2, torch.atleast_2d), (3, torch.atleast_3d)):
    for _shape in ((), (3,), (2, 3)):
        case(f"atleast_{_n}d{_shape}", getattr(cr, f"atleast_{_n}d"), _t, (_shape, "any"))
for _name, _t in (("hstack", torch.hstack), ("vstack", torch.vstack),
                  ("dstack", torch.dstack), ("column_stack", torch.column_stack)):
    for _shape in ((3,), (2, 3)):
        case(f"{_name}{_shape}", lambda a, b, n=_name: getattr(cr, n)([a, b]),
             lambda a, b, t=_t: t([a, b]), (_shape, "any"), (_shape, "any"))
case("array_split(3)", lambda x: cr.array_split(x, 3),
     lambda x: list(torch.tensor_split(x, 3)), ((7, 2), "any"))
case("array_split([1,4],axis=1)", lambda x: cr.array_split(x, [1, 4], axis=1),
     lambda x: list(torch.tensor_split(x, [1, 4], 1)), ((2, 6), "any"))
case("hsplit", lambda x: cr.hsplit(x, 2), lambda x: list(torch.hsplit(x, 2)), ((2, 4), "any"))
case("vsplit", lambda x: cr.vsplit(x, 2), lambda x: list(torch.vsplit(x, 2)), ((4, 2), "any"))
case("dsplit", lambda x: cr.dsplit(x, [1]), lambda x: list(torch.dsplit(x, [1])),
     ((2, 2, 3), "any"))
case("ravel", cr.ravel, torch.ravel, ((2, 3), "any"))
case("append", cr.append, lambda a, b: torch.cat([a.flatten(), b.flatten()]),
     ((2, 3), "any"), ((2,), "any"))
case("append(axis=0)", lambda a, b: cr.append(a, b, axis=0), lambda a, b: torch.cat([a, b]),
     ((2, 3), "any"), ((1, 3), "any"))
case("select", lambda x, y: cr.select([x < 0, y > 0], [x * y, y], 0.25),
     lambda x, y: torch.where(x < 0, x * y, torch.where(y > 0, y, 0.25)),
     ((2, 3), "any"), ((2, 3), "any"))

# --- statistics (rules/statistics.py) -----------------------------------------------------

_W = np.array([0.5, 2.0, 1.0, 1.5])
# (weights in x's dtype: float64 weights make a float32 x's mean float64, as in NumPy)
case("average(weights)", lambda x: cr.average(x, axis=1, weights=_W.astype(x.dtype)),
     lambda x: (x * _const(_W, x)).sum(1) / _W.sum(), ((3, 4), "any"))
case("average(weights=y)", lambda x, w: cr.average(x, weights=w),
     lambda x, w: (x * w).sum() / w.sum(), ((3, 4), "any"), ((3, 4), "pos"))
case("average", cr.average, torch.mean, ((3, 4), "any"))
for _q in (0.0, 0.3, 0.5, 1.0):
    case(f"quantile({_q})", lambda x, q=_q: cr.quantile(x, q, axis=1),
         lambda x, q=_q: torch.quantile(x, q, dim=1), ((3, 5), "wide"))
case("quantile(q traced)", lambda x, q: cr.quantile(x, q),
     lambda x, q: torch.quantile(x, q), ((6,), "wide"), ((), "prob"))
case("quantile([0.2,0.7],keepdims)", lambda x: cr.quantile(x, [0.2, 0.7], 0, keepdims=True),
     lambda x: torch.quantile(x, torch.tensor([0.2, 0.7], dtype=x.dtype), 0, keepdim=True),
     ((5, 3), "wide"))
case("percentile(40)", lambda x: cr.percentile(x, 40, axis=0),
     lambda x: torch.quantile(x, 0.4, dim=0), ((5, 3), "wide"))
case("median", cr.median, lambda x: torch.quantile(x, 0.5), ((2, 3), "wide"))
case("median(odd,axis=0)", lambda x: cr.median(x, 0), lambda x: torch.median(x, 0).values,
     ((5, 3), "wide"))
_FW, _AW = np.array([1, 2, 1, 3, 1]), np.array([0.5, 1.0, 2.0, 1.0, 0.25])
case("cov", cr.cov, torch.cov, ((3, 5), "wide"))
case("cov(rowvar=False,bias)", lambda x: cr.cov(x, rowvar=False, bias=True),
     lambda x: torch.cov(x.T, correction=0), ((5, 3), "wide"))
case("cov(x,y)", cr.cov, lambda x, y: torch.cov(torch.stack([x, y])), ((5,), "wide"),
     ((5,), "wide"))
case("cov(weights)", lambda x: cr.cov(x, fweights=_FW, aweights=_AW.astype(x.dtype)),
     lambda x: torch.cov(x, fweights=torch.from_numpy(_FW),
                         aweights=torch.from_numpy(_AW).to(x.dtype)), ((3, 5), "wide"))
case("cov(aweights differentiated)", lambda x, w: cr.cov(x, fweights=_FW, aweights=w),
     lambda x, w: torch.cov(x, fweights=torch.from_numpy(_FW), aweights=w),
     ((3, 5), "wide"), ((5,), "pos"))
case("corrcoef", cr.corrcoef, torch.corrcoef, ((3, 5), "wide"))

# --- dtype ------------------------------------------------------------------------------

case("x.astype(float32)", lambda x: x.astype(np.float32), lambda x: x.to(torch.float32),
     ((2, 3), "any"), fd=False)
case("x.astype(float64)", lambda x: x.astype("float64"), lambda x: x.to(torch.float64),
     ((2, 3), "any"), f32=False, prim=lambda x: (D.astype, (x, np.dtype(np.float64)), {}))

# --- the fused layers of chainrule.rules.fused ------------------------------------------------------

for _sx in [(2, 3), (3,), (5, 2, 3)]:  # a layer's x @ W.T + b, fused; W (out, in) as torch's
    case(f"linear{_sx}", F.linear, lambda x, w, b: torch.nn.functional.linear(x, w, b),
         (_sx, "any"), ((4, 3), "any"), ((4,), "any"),
         prim=lambda x, w, b: (D.linear, (x, w, b), {}))

for _sx in [(2, 3), (3,), (3, 2, 3)]:  # a hidden layer's relu(x @ W.T + b), fused
    case(f"linear_relu{_sx}", lambda x, w, b: F.linear(x, w, b, activation="relu"),
         lambda x, w, b: torch.relu(torch.nn.functional.linear(x, w, b)), (_sx, "any"),
         ((4, 3), "any"), ((4,), "any"), prim=lambda x, w, b: (D.linear_relu, (x, w, b), {}))


def _torch_gru_sequence(gi, h0, w, b):
    """torch's GRU equations, step by step: the reference of gru_sequence."""
    hidden, h, outs = h0.shape[-1], h0, []
    for t in range(gi.shape[-3]):
        x, gh = gi[..., t, :, :], h @ w.T + b
        r = torch.sigmoid(x[..., :hidden] + gh[..., :hidden])
        z = torch.sigmoid(x[..., hidden:2 * hidden] + gh[..., hidden:2 * hidden])
        n = torch.tanh(x[..., 2 * hidden:] + r * gh[..., 2 * hidden:])
        h = (1 - z) * n + z * h
        outs.append(h)
    return torch.stack(outs, -3)


# a GRU layer's recurrence, fused (chainrule.rules.fused_recurrent): 3 steps, batch 2, hidden 2
case("gru_sequence", fused_recurrent.gru_sequence, _torch_gru_sequence, ((3, 2, 6), "any"),
     ((2, 2), "any"), ((6, 2), "any"), ((6,), "any"),
     prim=lambda gi, h0, w, b: (fused_recurrent.gru_sequence, (gi, h0, w, b), {}))


def _torch_attention(q, k, v, mask, scale=0.7):
    """softmax((q scale) k^T + mask) v: the reference of the fused attention."""
    return torch.softmax((q * scale) @ k.transpose(-1, -2) + mask, -1) @ v


def _torch_self_attention(qkv, mask, heads=2, scale=0.7):
    """The packed self-attention: qkv split in q, k, v and in heads, joined after."""
    *lead, length, width = qkv.shape
    x = qkv.reshape(*lead, length, 3, heads, width // (3 * heads))
    q, k, v = (x[..., i, :, :].transpose(-3, -2) for i in range(3))
    out = _torch_attention(q, k, v, mask, scale).transpose(-3, -2)
    return out.reshape(*lead, length, width // 3)


# attention, fused (chainrule.rules.fused_attention): 2 heads of 3 queries, 4 keys, a
# float mask (differentiable); the packed self-attention of 2 heads over 3 tokens
case("attention", lambda q, k, v, m: fused_attention.attention(q, k, v, m, scale=0.7),
     _torch_attention, ((2, 3, 2), "any"), ((2, 4, 2), "any"), ((2, 4, 3), "any"),
     ((3, 4), "any"),
     prim=lambda q, k, v, m: (fused_attention.attention, (q, k, v, m), {"scale": 0.7}))
case("self_attention",
     lambda qkv, m: fused_attention.self_attention(qkv, m, heads=2, scale=0.7),
     _torch_self_attention, ((2, 3, 12), "any"), ((3, 3), "any"),
     prim=lambda qkv, m: (fused_attention.self_attention, (qkv, m),
                          {"heads": 2, "scale": 0.7}))


# a layer norm over the last axis, fused (chainrule.rules.fused_norm)
case("fused layer_norm", lambda x, w, b: fused_norm.layer_norm(x, w, b, eps=1e-5),
     lambda x, w, b: TF.layer_norm(x, (4,), w, b, eps=1e-5), ((2, 3, 4), "any"),
     ((4,), "any"), ((4,), "any"),
     prim=lambda x, w, b: (fused_norm.layer_norm, (x, w, b), {"eps": 1e-5}))


def test_linear_relu_cases_stay_away_from_the_kink():
    """Finite differences across relu's kink mean nothing: every pre-activation of the
    linear_relu cases is at least 0.05 away from 0 (or the cases must change)."""
    for c in CASES:
        if c.id.startswith("linear_relu"):
            x, w, b = c.arrays()
            assert np.min(np.abs(x @ w.T + b)) > 0.05, c.id



# --- losses (chainrule.nn.functional) -----------------------------------------------------

LABELS = np.array([2, 0, 3])
case("cross_entropy", lambda z: F.cross_entropy(z, LABELS),
     lambda z: TF.cross_entropy(z, torch.from_numpy(LABELS)), ((3, 4), "wide"),
     prim=lambda z: (fused.cross_entropy, (z, LABELS), {}))
case("cross_entropy(N=1)", lambda z: F.cross_entropy(z, [1]),
     lambda z: TF.cross_entropy(z, torch.tensor([1])), ((1, 5), "wide"))
case("mse_loss", F.mse_loss, TF.mse_loss, ((2, 3), "any"), ((2, 3), "any"))
case("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits,
     TF.binary_cross_entropy_with_logits, ((2, 3), "wide"), ((2, 3), "prob"))
# PyTorch's options of the class losses: per-class weights (a constant, as torch's),
# smoothing, ignored labels, soft labels (differentiable, as torch's), a class at every
# position of (N, C, d), and BCE's per-entry and positive weights
_W4 = np.array([0.5, 2.0, 1.0, 1.5])
_IGNORING = np.array([2, 1, 1])
_LABELS_ND = np.array([[2, 0, 3], [1, 1, 0]])
case("cross_entropy(weight, label_smoothing)",
     lambda z: F.cross_entropy(z, LABELS, _const(_W4, z), label_smoothing=0.2),
     lambda z: TF.cross_entropy(z, torch.from_numpy(LABELS), _const(_W4, z),
                                label_smoothing=0.2), ((3, 4), "wide"))
case("cross_entropy(weight, ignore_index)",
     lambda z: F.cross_entropy(z, _IGNORING, _const(_W4, z), ignore_index=1),
     lambda z: TF.cross_entropy(z, torch.from_numpy(_IGNORING), _const(_W4, z),
                                ignore_index=1), ((3, 4), "wide"))
case("cross_entropy(probabilities)", lambda z, p: F.cross_entropy(z, p, label_smoothing=0.1),
     lambda z, p: TF.cross_entropy(z, p, label_smoothing=0.1), ((3, 4), "wide"),
     ((3, 4), "prob"))
case("cross_entropy(N,C,d)", lambda z: F.cross_entropy(z, _LABELS_ND, reduction="none"),
     lambda z: TF.cross_entropy(z, torch.from_numpy(_LABELS_ND), reduction="none"),
     ((2, 4, 3), "wide"))
case("nll_loss(weight)", lambda z: F.nll_loss(z, LABELS, _const(_W4, z)),
     lambda z: TF.nll_loss(z, torch.from_numpy(LABELS), _const(_W4, z)), ((3, 4), "any"))
case("binary_cross_entropy_with_logits(weight, pos_weight)",
     lambda z, y: F.binary_cross_entropy_with_logits(z, y, _const(C23, z),
                                                     pos_weight=_const(_W4[:3], z)),
     lambda z, y: TF.binary_cross_entropy_with_logits(z, y, _const(C23, z),
                                                      pos_weight=_const(_W4[:3], z)),
     ((2, 3), "wide"), ((2, 3), "prob"))
case("binary_cross_entropy(weight)",
     lambda p, y: F.binary_cross_entropy(p, y, _const(C23, p), reduction="sum"),
     lambda p, y: TF.binary_cross_entropy(p, y, _const(C23, p), reduction="sum"),
     ((2, 3), "prob"), ((2, 3), "prob"))
_PM1 = np.array([1.0, -1.0, -1.0, 1.0])
case("hinge_loss", lambda s: F.hinge_loss(s, _const(_PM1, s)),
     lambda s: torch.relu(1 - _const(_PM1, s) * s).mean(), ((4,), "wide"))

# --- distances and the other losses: normalize, cosine_similarity, pairwise_distance,
# pdist (torch's pdist has no double backward: its reference is the norm of the row
# differences)
_PAIRS = np.triu_indices(4, 1)
case("normalize", F.normalize, TF.normalize, ((3, 4), "any"))
case("normalize(p=1,dim=0)", lambda x: F.normalize(x, p=1, dim=0),
     lambda x: TF.normalize(x, p=1, dim=0), ((3, 4), "any"))
case("normalize(p=3,dim=-1)", lambda x: F.normalize(x, p=3.0, dim=-1),
     lambda x: TF.normalize(x, p=3.0, dim=-1), ((2, 3, 4), "any"))
case("cosine_similarity", F.cosine_similarity, TF.cosine_similarity,
     ((3, 4), "any"), ((3, 4), "any"))
case("cosine_similarity(dim=-1, broadcast)", lambda a, b: F.cosine_similarity(a, b, dim=-1),
     lambda a, b: TF.cosine_similarity(a, b, dim=-1), ((2, 1, 4), "any"), ((3, 4), "any"))
case("pairwise_distance", F.pairwise_distance, TF.pairwise_distance,
     ((3, 4), "any"), ((3, 4), "any"))
case("pairwise_distance(p=1, keepdim)", lambda a, b: F.pairwise_distance(a, b, 1.0, keepdim=True),
     lambda a, b: TF.pairwise_distance(a, b, 1.0, keepdim=True), ((3, 4), "any"), ((4,), "any"))
case("pairwise_distance(p=3)", lambda a, b: F.pairwise_distance(a, b, 3.0, eps=0.0),
     lambda a, b: TF.pairwise_distance(a, b, 3.0, eps=0.0), ((2, 5), "any"), ((2, 5), "any"))
case("pairwise_distance(p=inf)", lambda a, b: F.pairwise_distance(a, b, math.inf),
     lambda a, b: TF.pairwise_distance(a, b, math.inf), ((3, 4), "any"), ((3, 4), "any"))
case("pairwise_distance(p=-1.5)", lambda a, b: F.pairwise_distance(a, b, -1.5),
     lambda a, b: TF.pairwise_distance(a, b, -1.5), ((3, 4), "any"), ((3, 4), "any"))
case("pdist", F.pdist, lambda x: torch.linalg.vector_norm(x[_PAIRS[0]] - x[_PAIRS[1]], dim=1),
     ((4, 3), "any"))
case("pdist(p=1)", lambda x: F.pdist(x, 1.0),
     lambda x: torch.linalg.vector_norm(x[_PAIRS[0]] - x[_PAIRS[1]], 1, dim=1), ((4, 3), "any"))
case("pdist(p=inf)", lambda x: F.pdist(x, math.inf),
     lambda x: torch.linalg.vector_norm(x[_PAIRS[0]] - x[_PAIRS[1]], math.inf, dim=1),
     ((4, 3), "any"))
case("pdist(p=1.5)", lambda x: F.pdist(x, 1.5),
     lambda x: torch.linalg.vector_norm(x[_PAIRS[0]] - x[_PAIRS[1]], 1.5, dim=1),
     ((4, 3), "any"))
# kl_div, poisson_nll_loss, gaussian_nll_loss (torch warns that kl_div's "mean" is not
# "batchmean": its rows take the other reductions)
case("kl_div(batchmean)", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
     lambda x, t: TF.kl_div(x, t, reduction="batchmean"), ((3, 4), "any"), ((3, 4), "prob"))
case("kl_div(none)", lambda x, t: F.kl_div(x, t, reduction="none"),
     lambda x, t: TF.kl_div(x, t, reduction="none"), ((2, 3), "any"), ((2, 3), "prob"))
case("kl_div(log_target, sum)", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
     lambda x, t: TF.kl_div(x, t, reduction="sum", log_target=True), ((3, 4), "any"),
     ((3, 4), "any"))
case("poisson_nll_loss", F.poisson_nll_loss, TF.poisson_nll_loss, ((3, 4), "any"),
     ((3, 4), "pos"))
case("poisson_nll_loss(rates, full)",
     lambda x, t: F.poisson_nll_loss(x, t, False, True, eps=1e-3, reduction="none"),
     lambda x, t: TF.poisson_nll_loss(x, t, False, True, eps=1e-3, reduction="none"),
     ((2, 3), "pos"), ((2, 3), "gt1"))
case("poisson_nll_loss(full, sum)", lambda x, t: F.poisson_nll_loss(x, t, full=True,
                                                                     reduction="sum"),
     lambda x, t: TF.poisson_nll_loss(x, t, full=True, reduction="sum"), ((2, 3), "any"),
     ((2, 3), "gt1"))
case("gaussian_nll_loss", F.gaussian_nll_loss, TF.gaussian_nll_loss, ((3, 4), "any"),
     ((3, 4), "any"), ((3, 4), "pos"))
case("gaussian_nll_loss(var per row, full)",
     lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     lambda x, t, v: TF.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     ((3, 4), "any"), ((3, 4), "any"), ((3,), "pos"))
case("gaussian_nll_loss(shared var, sum)",
     lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="sum"),
     lambda x, t, v: TF.gaussian_nll_loss(x, t, v, reduction="sum"),
     ((2, 3, 2), "any"), ((2, 3, 2), "any"), ((2, 1, 2), "pos"))
# the margin and embedding losses: margin_ranking_loss, hinge_embedding_loss,
# cosine_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
# triplet_margin_loss, triplet_margin_with_distance_loss, multi_margin_loss and
# multilabel_margin_loss (torch's last two have no double backward: their references
# are written out)
_PM3 = np.array([1.0, -1.0, 1.0])
_PM34 = seeded("signs").choice([-1.0, 1.0], (3, 4))
_MULTI = np.array([2, 0, 3])
_LISTED = np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]])
_LISTED_PAIRS = np.zeros((3, 4, 4))
for _row, _listed in enumerate(_LISTED):
    _kept = _listed[:np.argmax(np.append(_listed, -1) == -1)]
    for _j in _kept:
        _LISTED_PAIRS[_row, _j] += np.isin(np.arange(4), _kept, invert=True)


def _torch_multi_margin(x, labels, p, margin, weight):
    z = (margin - x.gather(1, torch.from_numpy(labels)[:, None]) + x).clamp_min(0) ** p
    z = z * torch.from_numpy(np.arange(x.shape[1]) != labels[:, None])
    return (z * weight[torch.from_numpy(labels)][:, None]).sum(1).mean() / x.shape[1]


case("margin_ranking_loss", lambda a, b: F.margin_ranking_loss(a, b, _const(_PM3, a), 0.2),
     lambda a, b: TF.margin_ranking_loss(a, b, _const(_PM3, a), 0.2), ((3,), "any"),
     ((3,), "any"))
case("hinge_embedding_loss", lambda x: F.hinge_embedding_loss(x, _const(_PM34, x), 0.5,
                                                              reduction="none"),
     lambda x: TF.hinge_embedding_loss(x, _const(_PM34, x), 0.5, reduction="none"),
     ((3, 4), "any"))
case("cosine_embedding_loss", lambda a, b: F.cosine_embedding_loss(a, b, _const(_PM3, a), -0.9),
     lambda a, b: TF.cosine_embedding_loss(a, b, _const(_PM3, a), -0.9), ((3, 4), "any"),
     ((3, 4), "any"))
case("soft_margin_loss", lambda x: F.soft_margin_loss(x, _const(_PM34, x)),
     lambda x: TF.soft_margin_loss(x, _const(_PM34, x)), ((3, 4), "wide"))
case("multilabel_soft_margin_loss(weight)",
     lambda x, t: F.multilabel_soft_margin_loss(x, t, _const(_W4, x), reduction="sum"),
     lambda x, t: TF.multilabel_soft_margin_loss(x, t, _const(_W4, x), reduction="sum"),
     ((3, 4), "wide"), ((3, 4), "prob"))
case("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0),
     lambda a, p, n: TF.triplet_margin_loss(a, p, n, 2.0), ((3, 4), "any"), ((3, 4), "any"),
     ((3, 4), "any"))
case("triplet_margin_loss(p=1, swap)",
     lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0, 1.0, swap=True, reduction="none"),
     lambda a, p, n: TF.triplet_margin_loss(a, p, n, 2.0, 1.0, swap=True, reduction="none"),
     ((3, 4), "any"), ((3, 4), "any"), ((3, 4), "any"))
case("triplet_margin_with_distance_loss(cosine, swap)",
     lambda a, p, n: F.triplet_margin_with_distance_loss(
         a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), swap=True),
     lambda a, p, n: TF.triplet_margin_with_distance_loss(
         a, p, n, distance_function=lambda x, y: 1 - TF.cosine_similarity(x, y), swap=True),
     ((3, 4), "any"), ((3, 4), "any"), ((3, 4), "any"))
case("multi_margin_loss(p=2, weight)",
     lambda x: F.multi_margin_loss(x, _MULTI, 2, 1.5, _const(_W4, x)),
     lambda x: _torch_multi_margin(x, _MULTI, 2, 1.5, _const(_W4, x)), ((3, 4), "any"))
case("multi_margin_loss", lambda x: F.multi_margin_loss(x, _MULTI, margin=2.0),
     lambda x: _torch_multi_margin(x, _MULTI, 1, 2.0, _const(np.ones(4), x)), ((3, 4), "any"))
case("multilabel_margin_loss", lambda x: F.multilabel_margin_loss(x, _LISTED),
     lambda x: ((1 - x[:, :, None] + x[:, None, :]).clamp_min(0)
                * _const(_LISTED_PAIRS, x)).sum((1, 2)).mean() / 4, ((3, 4), "any"))
# @@LOSSES@@

CASE_PARAMS = [pytest.param(c, id=c.id) for c in CASES]
FD_PARAMS = [pytest.param(c, id=c.id) for c in CASES if c.fd]
JVP_PARAMS = [pytest.param(c, id=c.id) for c in CASES if c.prim is not None and c.fd]
F32_PARAMS = [pytest.param(c, id=c.id) for c in CASES if c.f32]


def test_case_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_public_operation_has_a_case():
    """The table above covers every operation ``chainrule`` exports (by name)."""
    # every public operation of the table (cr.abs is the case id of absolute), and two
    # that are reached as methods
    names = sorted(set(rules.__all__) - {"absolute"} | {"abs", "astype", "at["})
    assert set(names) - {"astype", "at["} <= set(cr.__all__)
    missing = [n for n in names if not any(n in c.id for c in CASES)]
    assert not missing, f"no case for {missing}"


def test_every_primitive_has_a_jvp_case():
    """Every Primitive of the table (and the fused cross_entropy) is checked in forward
    mode below, and has a JVP rule for each argument that has a VJP rule."""
    primitives = {obj for obj in vars(D).values() if isinstance(obj, Primitive)}
    primitives.update({fused.cross_entropy, fused_recurrent.gru_sequence,
                       fused_attention.attention, fused_attention.self_attention,
                       fused_norm.layer_norm})
    calls = [c.prim(*c.arrays()) for c in CASES if c.prim is not None]
    covered = {prim for prim, _, _ in calls}
    assert primitives - covered == set(), sorted(p.name for p in primitives - covered)
    for p in primitives:  # (a variadic operation has one rule of each kind, for all)
        assert set(p.vjps) == set(p.jvps), p


# ---------------------------------------------------------------------------------------
# 1. Value and vector-Jacobian product against PyTorch float64
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASE_PARAMS)
def test_value_and_gradient_match_torch(case):
    arrays = case.arrays()
    with torch.no_grad():
        shapes = [o.shape for o in as_list(case.ref(*[torch.from_numpy(a) for a in arrays]))]
    ws = cotangents(case, [np.empty(s) for s in shapes], np.float64)
    outs, grads = cr_vjp(case, arrays, ws)
    t_outs, t_grads = torch_vjp(case, arrays, ws)
    assert len(outs) == len(t_outs)
    for i, (o, t) in enumerate(zip(outs, t_outs)):
        assert o.dtype == t.dtype, f"output {i}: dtype {o.dtype}, torch {t.dtype}"
        assert_close(o, t, REL64, f"output {i}")
    for i, (g, t, a) in enumerate(zip(grads, t_grads, arrays)):
        # (np.shape/np.asarray: a 0-d .grad may be a NumPy scalar, see
        # test_grad_of_a_0d_tensor_is_an_ndarray)
        assert np.shape(g) == a.shape and np.asarray(g).dtype == a.dtype, f"grad {i}: {g!r}"
        assert_close(g, t, REL64, f"gradient of input {i}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_of_a_0d_tensor_is_an_ndarray(dtype):
    """.grad is documented as an ndarray the shape of the tensor. For a 0-d tensor used
    twice (x * x), _accumulate_leaf adds two 0-d arrays, and NumPy returns a scalar."""
    x = cr.tensor(np.asarray(2.0, dtype=dtype), requires_grad=True)
    (x * x).backward()
    assert float(x.grad) == 4.0 and x.grad.dtype == dtype  # the value is right
    assert isinstance(x.grad, np.ndarray), type(x.grad)


# ---------------------------------------------------------------------------------------
# 2. The same gradients against central differences along a random direction
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", FD_PARAMS)
def test_gradient_matches_central_differences(case):
    """<grad L, d> == (L(x + h d) - L(x - h d)) / 2h with L = sum(w * y), h = 1e-6."""
    arrays = case.arrays()
    ws = cotangents(case, cr_forward(case, arrays), np.float64)
    _, grads = cr_vjp(case, arrays, ws)
    rng = seeded(case.id, "direction")
    ds = [rng.standard_normal(a.shape) for a in arrays]

    def loss(sign):
        outs = cr_forward(case, [a + sign * FD_EPS * d for a, d in zip(arrays, ds)])
        return sum(float(np.sum(o * w)) for o, w in zip(outs, ws))

    fd = (loss(+1) - loss(-1)) / (2 * FD_EPS)
    directional = sum(float(np.sum(g * d)) for g, d in zip(grads, ds))
    scale = max(1.0, sum(float(np.sum(np.abs(g * d))) for g, d in zip(grads, ds)))
    assert abs(directional - fd) <= FD_REL * scale, (directional, fd)


# ---------------------------------------------------------------------------------------
# 3. Second order: Hessian-vector products through backward(create_graph=True)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", FD_PARAMS)
def test_hessian_vector_product(case):
    """d/dx <grad L(x), v> for L = <w, y> + |y|^2/2, against PyTorch's double backward
    and against (grad L(x + h v) - grad L(x - h v)) / 2h (first-order gradients only)."""
    arrays = case.arrays()
    ws = cotangents(case, cr_forward(case, arrays), np.float64)
    rng = seeded(case.id, "hvp")
    vs = [rng.standard_normal(a.shape) for a in arrays]
    hv = cr_hvp(case, arrays, ws, vs)
    t_hv = torch_hvp(case, arrays, ws, vs)
    h = 1e-5
    plus = cr_grad_of_second_order_loss(case, [a + h * v for a, v in zip(arrays, vs)], ws)
    minus = cr_grad_of_second_order_loss(case, [a - h * v for a, v in zip(arrays, vs)], ws)
    for i, (mine, theirs, p, m) in enumerate(zip(hv, t_hv, plus, minus)):
        assert_close(mine, theirs, 1e-9, f"Hv, input {i}, vs torch")
        assert_close(mine, (p - m) / (2 * h), 1e-6, f"Hv, input {i}, vs differences")


def test_prod_hessian_at_a_zero():
    """f = x0 x1 x2 at x = (0, 3, 2): d2f/dx1 dx0 = x2 = 2, d2f/dx0 dx1 = x2 = 2 (the
    Hessian is symmetric). The rule builds df/dx1 as a where() that is constantly 0 when
    x0 == 0, so its derivative with respect to x0 is lost."""
    x = cr.tensor([0.0, 3.0, 2.0], requires_grad=True)
    cr.prod(x).backward(create_graph=True)
    g = x.grad
    x.zero_grad()
    g[1].backward()
    t = torch.tensor([0.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(t.prod(), t, create_graph=True)
    (expected,) = torch.autograd.grad(tg[1], t)
    np.testing.assert_array_equal(expected.numpy(), [2.0, 0.0, 0.0])  # the reference
    np.testing.assert_array_equal(x.grad.data, [2.0, 0.0, 0.0])


def test_third_derivative_of_a_chain():
    """Derivatives of any order from the one table: d3/dx3 of tanh(sin(x) * x**2)."""
    x0 = 0.7
    x = cr.tensor(x0, requires_grad=True)
    grads = []
    y = cr.tanh(cr.sin(x) * x ** 2)
    for _ in range(3):
        y.backward(create_graph=True)
        y, x.grad = x.grad, None
        grads.append(float(y.data))
    t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    ty = torch.tanh(torch.sin(t) * t ** 2)
    expected = []
    for _ in range(3):
        (ty,) = torch.autograd.grad(ty, t, create_graph=True)
        expected.append(ty.item())
    np.testing.assert_allclose(grads, expected, rtol=1e-12)


# ---------------------------------------------------------------------------------------
# 4. Forward mode: the JVP rules, called directly on NumPy arrays
# ---------------------------------------------------------------------------------------

def jvp_of(prim, args, kwargs, tangent_of):
    """sum_i p.jvp_i(t_i, ans, *args, **kw) over the differentiated arguments,
    each broadcast to the output's shape (what the engine does with it)."""
    ans = np.asarray(prim.forward(*args, **kwargs))
    total = np.zeros(ans.shape)
    for i, arg in enumerate(args):
        t = tangent_of(arg)
        if t is None:
            continue
        out = prim.jvp(i)(t, ans, *args, **kwargs)
        assert not isinstance(out, cr.Tensor), "a rule on arrays must return an array"
        total = total + np.broadcast_to(np.asarray(out), ans.shape)
    return ans, total


@pytest.mark.parametrize("case", JVP_PARAMS)
def test_jvp_rules_match_central_differences(case):
    """Forward mode: the tangent of the output, J t, against
    (f(x + h t) - f(x - h t)) / 2h, every differentiable argument moved at once."""
    arrays = case.arrays()
    rng = seeded(case.id, "tangent")
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    prim, args, kwargs = case.prim(*arrays)
    assert isinstance(prim, Primitive)

    def tangent_of(arg):
        for a, t in zip(arrays, tangents):
            if arg is a:
                return t
        return None

    assert any(tangent_of(arg) is not None for arg in args), "no differentiable argument"
    ans, jvp = jvp_of(prim, args, kwargs, tangent_of)

    def f(sign):
        p, shifted_args, kw = case.prim(*[a + sign * FD_EPS * t for a, t in zip(arrays, tangents)])
        return np.asarray(p.forward(*shifted_args, **kw))

    fd = (f(+1) - f(-1)) / (2 * FD_EPS)
    assert jvp.shape == ans.shape
    np.testing.assert_allclose(jvp, fd, rtol=FD_REL, atol=FD_REL * max(1.0, np.max(np.abs(fd),
                                                                                    initial=0)))


def test_astype_jvp_casts_the_tangent():
    """astype to float32 (where differences are useless): the tangent is cast too."""
    x = np.array([1.0, 2.0, 3.0])
    t = np.array([0.1, -0.2, 1.0 / 3.0])
    ans = D.astype.forward(x, np.dtype(np.float32))
    out = D.astype.jvps[0](t, ans, x, np.dtype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, t.astype(np.float32))


# ---------------------------------------------------------------------------------------
# 5. float32 stays float32, and agrees with PyTorch float32
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", F32_PARAMS)
def test_float32_stays_float32(case):
    arrays = case.arrays(np.float32)
    with torch.no_grad():
        shapes = [o.shape for o in as_list(case.ref(*[torch.from_numpy(a) for a in arrays]))]
    ws = cotangents(case, [np.empty(s) for s in shapes], np.float32)
    outs, grads = cr_vjp(case, arrays, ws)
    t_outs, t_grads = torch_vjp(case, arrays, ws)
    for i, (o, t) in enumerate(zip(outs, t_outs)):
        assert o.dtype == np.float32, f"output {i} is {o.dtype}"
        assert_close(o, t, REL32, f"output {i}")
    for i, (g, t) in enumerate(zip(grads, t_grads)):
        assert g.dtype == np.float32, f"gradient of input {i} is {g.dtype}"
        assert_close(g, t, REL32, f"gradient of input {i}")


F32_FD_PARAMS = [pytest.param(c, id=c.id) for c in CASES if c.f32 and c.fd]


@pytest.mark.parametrize("case", F32_FD_PARAMS)
def test_float32_second_order_stays_float32(case):
    """With create_graph=True too: float32 gradients (Tensors), float32 Hessian-vector
    products, close to PyTorch's float32 double backward."""
    arrays = case.arrays(np.float32)
    ws = [w.astype(np.float32) for w in cotangents(case, cr_forward(case, arrays), np.float32)]
    rng = seeded(case.id, "hvp")
    vs = [rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    second_order_loss(as_list(case.fn(*xs)), ws).backward(create_graph=True)
    grads = [x.grad for x in xs]
    assert all(g.dtype == np.float32 for g in grads), [g.dtype for g in grads]
    for x in xs:
        x.zero_grad()
    sum((g * v).sum() for g, v in zip(grads, vs)).backward()
    t_hv = torch_hvp(case, arrays, ws, vs)
    for i, (x, t) in enumerate(zip(xs, t_hv)):
        hv = np.zeros_like(arrays[i]) if x.grad is None else x.grad
        assert hv.dtype == np.float32, f"Hv of input {i} is {hv.dtype}"
        assert_close(hv, t, 1e-4, f"Hv of input {i}")


def test_float32_to_float64_and_back():
    """astype is differentiable both ways; each gradient has its input's dtype."""
    x = cr.tensor(np.array([1.5, -2.0], dtype=np.float32), requires_grad=True)
    y = x.astype(np.float64)
    assert y.dtype == np.float64
    (y * np.array([1.0 / 3.0, 2.0])).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, np.array([1.0 / 3.0, 2.0], dtype=np.float32))


# ---------------------------------------------------------------------------------------
# 6. Conventions at kinks, ties and zeros, and huge arguments (exact values)
# ---------------------------------------------------------------------------------------

def grad_of(f, *values):
    """The value of f and the gradient of sum(f) for each input, all float64."""
    xs = [cr.tensor(v, requires_grad=True) for v in values]
    out = f(*xs)
    out.sum().backward()
    return out.data, [x.grad for x in xs]


def torch_grad_of(f, *values):
    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = f(*xs)
    grads = torch.autograd.grad(out.sum(), xs)
    return out.detach().numpy(), [g.numpy() for g in grads]


def test_relu_and_abs_have_zero_derivative_at_zero():
    _, (g,) = grad_of(cr.relu, [0.0, -1.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])
    _, (g,) = grad_of(cr.abs, [0.0, -1.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, -1.0, 1.0])
    _, (g,) = grad_of(cr.sign, [0.0, -1.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])


def test_leaky_relu_and_clip_at_their_kinks_match_torch():
    """leaky_relu'(0) is the negative slope; clip lets the bounds themselves through
    (PyTorch's clamp does both the same way)."""
    _, (g,) = grad_of(lambda x: cr.leaky_relu(x, 0.2), [0.0, 1.0])
    np.testing.assert_array_equal(g, [0.2, 1.0])
    value, (g,) = grad_of(lambda x: cr.clip(x, -1.0, 1.0), [-1.0, 1.0, 2.0, -3.0])
    _, (tg,) = torch_grad_of(lambda x: torch.clamp(x, -1.0, 1.0), [-1.0, 1.0, 2.0, -3.0])
    np.testing.assert_array_equal(value, [-1.0, 1.0, 1.0, -1.0])
    np.testing.assert_array_equal(g, tg)
    np.testing.assert_array_equal(g, [1.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("reduce, values, expected", [
    ("max", [1.0, 3.0, 3.0], [0.0, 0.5, 0.5]),
    ("min", [2.0, 1.0, 1.0], [0.0, 0.5, 0.5]),
    ("max", [2.0, 2.0, 2.0, 2.0], [0.25] * 4),
])
def test_max_min_ties_share_the_gradient_evenly(reduce, values, expected):
    _, (g,) = grad_of(getattr(cr, reduce), values)
    np.testing.assert_array_equal(g, expected)
    _, (tg,) = torch_grad_of(getattr(torch, "a" + reduce), values)
    np.testing.assert_array_equal(g, tg)


def test_max_ties_along_an_axis():
    x = [[0.0, 3.0, 3.0], [5.0, 5.0, 5.0], [0.0, 1.0, 2.0]]
    _, (g,) = grad_of(lambda t: cr.max(t, axis=1), x)
    np.testing.assert_array_equal(g, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [0, 0, 1]])
    _, (g,) = grad_of(lambda t: cr.min(t, axis=0, keepdims=True), x)
    np.testing.assert_array_equal(g, [[0.5, 0, 0], [0, 0, 0], [0.5, 1, 1]])
    _, (tg,) = torch_grad_of(lambda t: torch.amin(t, dim=0, keepdim=True), x)
    np.testing.assert_array_equal(g, tg)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_ties_share_evenly(op):
    _, (ga, gb) = grad_of(getattr(cr, op), [1.0, 2.0, 3.0], [1.0, 0.0, 5.0])
    big = op == "maximum"
    np.testing.assert_array_equal(ga, [0.5, 1.0 if big else 0.0, 0.0 if big else 1.0])
    np.testing.assert_array_equal(gb, [0.5, 0.0 if big else 1.0, 1.0 if big else 0.0])
    _, (tga, tgb) = torch_grad_of(getattr(torch, op), [1.0, 2.0, 3.0], [1.0, 0.0, 5.0])
    np.testing.assert_array_equal(ga, tga)
    np.testing.assert_array_equal(gb, tgb)
    _, (g,) = grad_of(lambda a: getattr(cr, op)(a, a), [1.0, 2.0])   # 1/2 + 1/2
    np.testing.assert_array_equal(g, [1.0, 1.0])


def test_x_to_the_zero_has_derivative_zero_at_zero():
    """d/dx x**0 = 0 everywhere, 0 included, for a number or a tensor exponent of 0;
    d/dy x**y at y = 0 is ln x (0 at x = 0). Checked against PyTorch as well."""
    _, (g,) = grad_of(lambda x: x ** 0, [0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])
    _, (g,) = grad_of(lambda x: x ** 0.0, [0.0, -2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])
    value, (gx, gy) = grad_of(operator.pow, [0.0, 2.0], [0.0, 0.0])
    _, (tgx, tgy) = torch_grad_of(torch.pow, [0.0, 2.0], [0.0, 0.0])
    np.testing.assert_array_equal(value, [1.0, 1.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, math.log(2.0)])
    np.testing.assert_array_equal(gx, tgx)
    np.testing.assert_array_equal(gy, tgy)


def test_zero_to_a_positive_power_has_exponent_derivative_zero():
    """d/dy 0**y = 0 for y > 0 (not 0 * log 0 = nan); d/dx x**y at x = 0 is y 0**(y-1)."""
    with np.errstate(divide="ignore"):
        value, (gx, gy) = grad_of(operator.pow, [0.0, 0.0, 0.0], [0.5, 1.0, 2.0])
    _, (tgx, tgy) = torch_grad_of(torch.pow, [0.0, 0.0, 0.0], [0.5, 1.0, 2.0])
    np.testing.assert_array_equal(value, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gx, [np.inf, 1.0, 0.0])
    np.testing.assert_array_equal(gx, tgx)
    np.testing.assert_array_equal(gy, tgy)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (None, True), (1, False), (0, True)])
def test_norm_at_zero_has_gradient_zero(axis, keepdims):
    x = [[0.0, 0.0], [3.0, 4.0]] if axis == 1 else [[0.0, 0.0], [0.0, 0.0]]
    value, (g,) = grad_of(lambda t: cr.norm(t, axis=axis, keepdims=keepdims), x)
    assert np.isfinite(g).all()
    expected = [[0.0, 0.0], [0.6, 0.8]] if axis == 1 else [[0.0, 0.0], [0.0, 0.0]]
    np.testing.assert_allclose(g, expected, rtol=1e-15, atol=0)
    _, (tg,) = torch_grad_of(lambda t: torch.linalg.vector_norm(
        t, dim=None if axis is None else axis, keepdim=keepdims), x)
    np.testing.assert_allclose(g, tg, rtol=1e-15, atol=0)


@pytest.mark.parametrize("values, axis", [
    ([0.0, 2.0, 3.0], None),                       # one zero: only its entry survives
    ([0.0, 0.0, 3.0], None),                       # two zeros: every entry is 0
    ([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0], [5.0, 0.0, -2.0]], 1),
    ([[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]], 0),
])
def test_prod_gradient_is_exact_with_zeros(values, axis):
    _, (g,) = grad_of(lambda t: cr.prod(t, axis=axis), values)
    _, (tg,) = torch_grad_of(lambda t: torch.prod(t) if axis is None else
                             torch.prod(t, dim=axis), values)
    assert np.isfinite(g).all()
    np.testing.assert_array_equal(g, tg)


def test_log_softmax_of_far_apart_logits():
    value, (g,) = grad_of(cr.log_softmax, [1000.0, 0.0, -1000.0])
    np.testing.assert_allclose(value, [0.0, -1000.0, -2000.0], rtol=0, atol=1e-12)
    # the gradient of sum(log_softmax(x)) is 1 - 3 softmax(x)
    np.testing.assert_allclose(g, [-2.0, 1.0, 1.0], rtol=0, atol=1e-12)


def test_cross_entropy_through_far_apart_logits_is_finite():
    logits = cr.tensor([[1000.0, 0.0, -1000.0]], requires_grad=True)
    loss = F.cross_entropy(logits, [2])
    assert float(loss.data) == pytest.approx(2000.0, rel=1e-15)
    loss.backward()
    np.testing.assert_allclose(logits.grad, [[1.0, 0.0, -1.0]], rtol=0, atol=1e-15)
    # and through the composed log_softmax, picking the label by indexing
    logits.zero_grad()
    (-cr.log_softmax(logits, axis=1)[0, 2]).backward()
    assert np.isfinite(logits.grad).all()
    np.testing.assert_allclose(logits.grad, [[1.0, 0.0, -1.0]], rtol=0, atol=1e-15)


@pytest.mark.parametrize("values", [[1e308, 1e308, 0.0], [1000.0, 999.0, -1000.0],
                                    [-1e308, -1e308]])
def test_softmax_of_huge_values_is_finite(values):
    value, (g,) = grad_of(lambda x: cr.softmax(x) * cr.tensor(np.arange(len(values)) + 1.0),
                          values)
    assert np.isfinite(value).all() and np.isfinite(g).all()
    t_value, (tg,) = torch_grad_of(
        lambda x: torch.softmax(x, 0) * (torch.arange(len(values)) + 1.0), values)
    np.testing.assert_allclose(value, t_value, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-15)


def test_logsumexp_of_minus_infinity_and_of_large_values():
    with np.errstate(divide="ignore", invalid="ignore"):
        assert float(cr.logsumexp(cr.tensor([-np.inf, -np.inf])).data) == -np.inf
    value, (g,) = grad_of(cr.logsumexp, [-np.inf, 0.0])
    assert float(value) == 0.0
    np.testing.assert_array_equal(g, [0.0, 1.0])
    value, (g,) = grad_of(cr.logsumexp, [1000.0, 1000.0])
    assert float(value) == pytest.approx(1000.0 + math.log(2.0), rel=1e-15)
    # exp(x - lse): lse = 1000 + ln 2 is rounded (to ~1e-13), so ~1e-13 relative
    np.testing.assert_allclose(g, [0.5, 0.5], rtol=1e-12)
    _, (tg,) = torch_grad_of(lambda x: torch.logsumexp(x, 0), [1000.0, 1000.0])
    np.testing.assert_allclose(g, tg, rtol=1e-12)
    value, (g,) = grad_of(lambda x: cr.logsumexp(x, axis=1), [[1e308, 1e308], [-1e308, 0.0]])
    np.testing.assert_array_equal(value, [1e308, 0.0])  # finite: no overflow
    assert np.isfinite(g).all()


@pytest.mark.parametrize("big", [1e15, 1e16, 1e308])
def test_logsumexp_gradient_is_softmax_for_large_values(big):
    """The gradient of logsumexp is softmax(x): for two equal entries [0.5, 0.5],
    whatever their size. The rule exp(x - logsumexp(x)) subtracts a rounded ans
    (1e16 + ln 2 rounds to 1e16) and gets [1, 1] (and [0.47, 0.47] at 1e15)."""
    _, (g,) = grad_of(cr.logsumexp, [big, big])
    np.testing.assert_allclose(g, [0.5, 0.5], rtol=1e-12)
    np.testing.assert_allclose(np.sum(g), 1.0, rtol=1e-12)  # softmax sums to 1


@pytest.mark.parametrize("big", [1e15, 1e16, 1e308])
def test_log_softmax_is_shift_invariant_for_large_values(big):
    """log_softmax(x + c) == log_softmax(x): for [c, c], [-ln 2, -ln 2] and gradient
    (of the first entry) [1/2, -1/2]; cross_entropy of [[c, c]] is ln 2. PyTorch gets
    all of these; chainrule returns [0, 0] (or [-0.75, -0.75] at 1e15)."""
    value, (g,) = grad_of(lambda x: cr.log_softmax(x)[0], [big, big])
    t_value, (tg,) = torch_grad_of(lambda x: torch.log_softmax(x, 0)[0], [big, big])
    np.testing.assert_allclose(t_value, -math.log(2.0), rtol=1e-15)   # the reference
    np.testing.assert_allclose(tg, [0.5, -0.5], rtol=1e-15)
    assert float(F.cross_entropy(cr.tensor([[big, big]]), [0]).data) == pytest.approx(
        math.log(2.0), rel=1e-12)
    np.testing.assert_allclose(value, t_value, rtol=1e-12)
    np.testing.assert_allclose(g, tg, rtol=1e-12)


@pytest.mark.parametrize("x", [-1000.0, 1000.0])
def test_sigmoid_and_softplus_of_huge_arguments(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        value, (g,) = grad_of(cr.sigmoid, [x])
        np.testing.assert_array_equal(value, [1.0 if x > 0 else 0.0])
        np.testing.assert_array_equal(g, [0.0])
        value, (g,) = grad_of(cr.softplus, [x])
        np.testing.assert_array_equal(value, [max(x, 0.0)])
        np.testing.assert_array_equal(g, [1.0 if x > 0 else 0.0])


def test_repeated_indices_accumulate():
    """x[[0, 0, 0, 2]] reads x[0] three times: its gradient is 3 (not 1)."""
    _, (g,) = grad_of(lambda x: x[[0, 0, 0, 2]], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [3.0, 0.0, 1.0])
    _, (g, gv) = grad_of(lambda x, v: x.at[np.array([1, 1])].add(v) * 2.0, [1.0, 2.0, 3.0],
                         [10.0, 20.0])
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(gv, [2.0, 2.0])
    _, (g, gv) = grad_of(lambda x, v: x.at[1].set(v) * 3.0, [1.0, 2.0, 3.0], 5.0)
    np.testing.assert_array_equal(g, [3.0, 0.0, 3.0])  # the overwritten entry gets none
    np.testing.assert_array_equal(gv, 3.0)


@pytest.mark.parametrize("how", ["keywords", "create_graph"])
def test_clip_with_tensor_bounds(how):
    """Bounds may be Tensors (constants here, as torch.clamp allows); the gradient is
    1 inside [lo, hi] and 0 outside, however the bounds are passed."""
    x = cr.tensor([0.1, 2.0, -3.0], requires_grad=True)
    lo, hi = cr.tensor(-1.0), cr.tensor(1.0)
    if how == "keywords":
        cr.clip(x, a_min=lo, a_max=hi).sum().backward()
    else:
        (cr.clip(x, lo, hi) * 2.0).sum().backward(create_graph=True)
    expected = [1.0, 0.0, 0.0] if how == "keywords" else [2.0, 0.0, 0.0]
    np.testing.assert_array_equal(np.asarray(x.grad.data if isinstance(x.grad, cr.Tensor)
                                             else x.grad), expected)


def test_clip_with_positional_tensor_bounds():
    """The same with positional Tensor bounds and an ordinary backward works."""
    x = cr.tensor([0.1, 2.0, -3.0], requires_grad=True)
    cr.clip(x, cr.tensor(-1.0), cr.tensor(1.0)).sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 0.0, 0.0])


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh', got 'erf'"):
        cr.gelu(cr.tensor([1.0]), "erf")


def test_dot_rejects_operands_that_do_not_align():
    with pytest.raises(ValueError, match=re.escape("dot: shapes (2, 2, 3) and (2,) cannot be "
                                                   "multiplied (3 != 2")):
        cr.dot(cr.ones(2, 2, 3), cr.ones(2))


@pytest.mark.parametrize("call, message", [
    (lambda: cr.cholesky(cr.ones(2, 3)), "cholesky: a matrix of shape (2, 3); expected square"),
    (lambda: cr.inv(cr.ones(3)), "inv: a matrix of shape (3,); expected square"),
    (lambda: cr.solve(cr.eye(3), cr.ones(2)),
     "solve: a of shape (3, 3) and b of shape (2,); expected b of shape (3,) or (..., 3, k)"),
    (lambda: cr.svd(cr.ones(2, 3)), "svd: full_matrices=True for shape (2, 3)"),
    (lambda: cr.svd(cr.ones(3)), "svd: an array of shape (3,); expected matrices"),
    (lambda: cr.einsum("ij,jk->ik", cr.ones(2, 3)), "einsum: subscripts 'ij,jk->ik' name 2"),
    (lambda: cr.einsum("ijk->i", cr.ones(2, 3)), "einsum: labels 'ijk' for an operand of shape"),
    (lambda: cr.tensordot(cr.ones(2, 3), cr.ones(2, 3), 1),
     "tensordot: shapes (2, 3) and (2, 3) with axes [1] and [0]"),
    (lambda: cr.linalg.norm(cr.ones(2, 3), "nuc", axis=1), "norm: ord='nuc' for a vector"),
    (lambda: cr.cross(cr.ones(4), cr.ones(3)), "cross: vectors of sizes 4 and 3"),
    (lambda: cr.trace(cr.ones(3)), "trace: an array of shape (3,); expected at least 2-D"),
])
def test_linear_algebra_errors_name_the_operation_and_the_shapes(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


@pytest.mark.parametrize("matrix", [
    [[1.0, 2.0], [2.0, 4.0]],                                    # rank 1 of 2
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]],         # rank 2 of 3
    [[[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]],        # a batch, one singular
])
def test_det_of_a_singular_matrix_has_the_cofactors_as_gradient(matrix):
    """d det A / dA is the matrix of cofactors, which exists where A has no inverse
    (JAX's answer; PyTorch 2's det gives zeros at an exactly singular matrix)."""
    a = np.array(matrix)
    cofactors = np.empty_like(a)
    for index in np.ndindex(*a.shape):
        *batch, i, j = index
        minor = np.delete(np.delete(a[tuple(batch)], i, axis=0), j, axis=1)
        cofactors[index] = (-1) ** (i + j) * np.linalg.det(minor)
    _, (g,) = grad_of(cr.det, a)
    np.testing.assert_allclose(g, cofactors, rtol=1e-12, atol=1e-12)
    _, tangent = cr.jvp(cr.det, (a,), (np.ones_like(a),))
    np.testing.assert_allclose(tangent, cofactors.sum(axis=(-2, -1)), rtol=1e-12, atol=1e-12)


def test_repeated_eigenvalues_and_singular_values_keep_their_gradient_exact():
    """At exactly repeated eigenvalues (singular values) the eigenvectors' derivative does
    not exist; chainrule leaves those terms out (docs/conventions.md), so the values'
    gradient is PyTorch's even when the vectors are computed and used too, and finite."""
    a = np.diag([1.0, 1.0, 2.0])
    weights = np.array([1.0, 1.0, 3.0])
    _, (g,) = grad_of(lambda x: cr.sum(cr.eigh(x)[0] * weights), a)
    _, (tg,) = torch_grad_of(lambda x: (torch.linalg.eigh(x)[0] * torch.tensor(weights)).sum(), a)
    np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-12)
    _, (g,) = grad_of(lambda x: cr.sum(cr.eigh(x)[0]) + cr.sum(cr.eigh(x)[1] ** 3), a)
    assert np.isfinite(g).all()
    _, (g,) = grad_of(lambda x: cr.sum(cr.svd(x, full_matrices=False)[1]), np.eye(3))
    np.testing.assert_allclose(g, np.eye(3), rtol=1e-12, atol=1e-12)


def test_numpy_linalg_functions_on_tensors_run_chainrules_operations():
    """np.linalg.solve(tensor, tensor), np.einsum(..., tensor) and the rest give Tensors
    in the graph (numpy_protocol.LINALG_FUNCTIONS), with chainrule's gradients."""
    a = cr.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    b = cr.tensor([1.0, -1.0], requires_grad=True)
    outputs = [np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a),
               np.linalg.slogdet(a)[1], np.linalg.cholesky(a), np.linalg.eigh(a)[0],
               np.linalg.svd(a, full_matrices=False)[1], np.linalg.qr(a)[1],
               np.linalg.pinv(a), np.linalg.norm(a, "nuc"), np.linalg.matrix_power(a, 2),
               np.trace(a), np.einsum("ij,j->i", a, b), np.tensordot(a, b, 1),
               np.inner(a, b), np.kron(a, b), np.vdot(a, a), np.linalg.eigvalsh(a)]
    for out in outputs:
        assert isinstance(out, cr.Tensor) and out.requires_grad, out
    total = sum(cr.sum(out) for out in outputs)
    total.backward()
    ta = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    tb = torch.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
    sym = 0.5 * (ta + ta.T)
    t_total = sum(o.sum() for o in [
        torch.linalg.solve(ta, tb), torch.linalg.inv(ta), torch.linalg.det(ta),
        torch.linalg.slogdet(ta)[1], torch.linalg.cholesky(sym), torch.linalg.eigh(sym)[0],
        torch.linalg.svdvals(ta), torch.linalg.qr(ta)[1], torch.linalg.pinv(ta),
        torch.linalg.matrix_norm(ta, "nuc"), ta @ ta, torch.trace(ta), ta @ tb, ta @ tb,
        ta @ tb, torch.kron(ta, tb), (ta * ta).sum(), torch.linalg.eigvalsh(sym)])
    t_total.backward()
    assert_close(total.data, t_total.detach().numpy(), REL64, "value")
    assert_close(a.grad, ta.grad.numpy(), REL64, "gradient of a")
    assert_close(b.grad, tb.grad.numpy(), REL64, "gradient of b")


def test_split_into_unequal_sections_is_an_error():
    with pytest.raises(ValueError, match="axis 0 of size 5 does not divide into 2 equal"):
        cr.split(cr.ones(5), 2)


# ---------------------------------------------------------------------------------------
# 7. Losses (chainrule.nn.functional): more shapes, and their error messages
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, c", [(1, 2), (4, 3), (5, 7)])
@pytest.mark.parametrize("labels_as", ["int64", "float", "tensor", "list"])
def test_cross_entropy_matches_torch(n, c, labels_as):
    rng = seeded("ce", n, c)
    logits = 3.0 * rng.standard_normal((n, c))
    labels = rng.integers(0, c, n)
    given = {"int64": labels, "float": labels.astype(np.float64),
             "tensor": cr.tensor(labels), "list": labels.tolist()}[labels_as]
    z = cr.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(z, given)
    loss.backward()
    tz = to_torch(logits)
    t_loss = TF.cross_entropy(tz, torch.from_numpy(labels))
    t_loss.backward()
    assert_close(loss.data, t_loss.detach().numpy(), REL64, "loss")
    assert_close(z.grad, tz.grad.numpy(), REL64, "gradient")


@pytest.mark.parametrize("logits_shape, labels, message", [
    ((3, 4), np.zeros((3, 1), dtype=int),
     "logits of shape (3, 4) and labels of shape (3, 1); expected (N, C) and (N,)"),
    ((3, 4), np.zeros(2, dtype=int),
     "logits of shape (3, 4) and labels of shape (2,); expected (N, C) and (N,)"),
    ((3, 4), np.array([0, 4, 1]), "labels must lie in [0, 4), got values from 0 to 4"),
    ((3, 4), np.array([0, -1, 3]), "labels must lie in [0, 4), got values from -1 to 3"),
    ((3, 4), np.array([0.0, 1.5, 2.0]), "labels must be integer class indices"),
])
@pytest.mark.parametrize("loss", [
    F.cross_entropy,                                        # the fused operation's check
    lambda logits, labels: F.cross_entropy(logits, labels, reduction="sum"),  # the plain
    fused.cross_entropy,                                     # the fused operation alone
])
def test_cross_entropy_rejects_bad_labels(logits_shape, labels, message, loss):
    """A label out of range would pick another entry silently: every path refuses it."""
    with pytest.raises(ValueError, match=re.escape("cross_entropy: " + message)):
        loss(cr.ones(*logits_shape, requires_grad=True), labels)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_refuses_integer_labels_of_the_logits_shape(reduction):
    """Labels of the logits' own shape are class probabilities, as in PyTorch, so they
    must be floats: integers there are a mistake of shape, and say so."""
    with pytest.raises(ValueError, match=re.escape(
            "cross_entropy: logits of shape (4,) and labels of shape (4,) are class "
            "probabilities, which must be floats, got dtype int64; class indices: "
            "expected (N, C) and (N,)")):
        F.cross_entropy(cr.ones(4, requires_grad=True), np.zeros(4, dtype=np.int64),
                        reduction=reduction)
    with pytest.raises(ValueError, match=re.escape(
            "cross_entropy: logits of shape (4,) and labels of shape (4,); expected (N, C) "
            "and (N,)")):
        fused.cross_entropy(cr.ones(4, requires_grad=True), np.zeros(4, dtype=np.int64))


@pytest.mark.parametrize("labels", [np.array([1.0, 2.0, 0.0]), [1, 2, 0],
                                    np.array([1, 2, 0], dtype=np.int32)])
def test_cross_entropy_second_order_takes_labels_in_every_form(labels):
    """The fused loss's plain rules (second order, jacrev) read labels as given: floats
    holding integers, a list, int32, like the forward."""
    z = seeded("labels forms").standard_normal((3, 4))
    expected = torch.autograd.functional.hessian(
        lambda v: TF.cross_entropy(v, torch.tensor([1, 2, 0])), torch.from_numpy(z))
    hessian = cr.hessian(lambda v: F.cross_entropy(v, labels))(z)
    assert_close(hessian, expected.numpy(), REL64, "hessian")


def test_losses_accept_plain_arrays():
    """Without Tensors the losses are plain NumPy (values agree with PyTorch)."""
    rng = seeded("plain losses")
    p, y = rng.standard_normal((2, 3)), rng.uniform(0, 1, (2, 3))
    pairs = [
        (F.mse_loss(p, y), TF.mse_loss(torch.from_numpy(p), torch.from_numpy(y))),
        (F.binary_cross_entropy_with_logits(p, y),
         TF.binary_cross_entropy_with_logits(torch.from_numpy(p), torch.from_numpy(y))),
        (F.cross_entropy(p, [0, 2]), TF.cross_entropy(torch.from_numpy(p), torch.tensor([0, 2]))),
    ]
    for mine, theirs in pairs:
        assert not isinstance(mine, cr.Tensor)
        assert float(mine) == pytest.approx(float(theirs), rel=1e-12)


def test_clip_bounds_given_as_tensors_get_gradients_like_torch_clamp():
    """A bound receives the gradient where it binds (x beyond it), as in torch.clamp."""
    x0 = np.array([-2.0, -0.5, 0.0, 0.7, 3.0])
    x, lo, hi = (cr.tensor(v, requires_grad=True) for v in (x0, -1.0, 1.0))
    (cr.clip(x, lo, hi) * cr.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    xt = torch.tensor(x0, requires_grad=True)
    lot = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
    hit = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    (torch.clamp(xt, min=lot, max=hit) * torch.tensor([1.0, 2, 3, 4, 5],
                                                      dtype=torch.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad, xt.grad.numpy())
    assert lo.grad == lot.grad.item() and hi.grad == hit.grad.item()


# ---------------------------------------------------------------------------------------
# 8. A batch of cotangents in one backward pass (what jacrev uses): every rule must work
#    when the gradient carries extra leading axes. Checked row by row against PyTorch.
# ---------------------------------------------------------------------------------------

BATCH = 3


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_batch_of_cotangents_in_one_pass(case):
    from chainrule.primitive import new_level
    from chainrule.transforms.reverse import ReverseTracer, gradients
    arrays = case.arrays()
    level = new_level()
    xs = [ReverseTracer.start(a, level) for a in arrays]
    outs = as_list(case.fn(*xs))
    rng = seeded(case.id, "batch")
    seeds = [rng.standard_normal((BATCH,) + tuple(o.shape)) for o in outs]
    grads = gradients(outs, seeds, xs, batch_shape=(BATCH,))
    xt = [to_torch(a) for a in arrays]
    outs_t = as_list(case.ref(*xt))
    for b in range(BATCH):
        expected = torch.autograd.grad(outs_t, xt, [torch.from_numpy(np.asarray(s[b]))
                                                    for s in seeds],
                                       retain_graph=True, allow_unused=True)
        for x, g, e in zip(xs, grads, expected):
            e = np.zeros(x.shape) if e is None else e.numpy()
            got = np.zeros(x.shape) if g is None else np.asarray(g)[b]
            rel = 1e-10 if case.fd else 1e-6  # (a cast to float32 rounds)
            assert_close(got, e, rel, f"{case.id}: row {b} of a batched VJP")


# ---------------------------------------------------------------------------------------
# 9. A batch of tangents in one forward pass (what jacfwd uses), through the forward-mode
#    tracer; each row against central differences along that row's direction.
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", JVP_PARAMS)
def test_a_batch_of_tangents_in_one_pass(case):
    from chainrule.transforms.forward import JVPTracer
    from chainrule.primitive import new_level
    arrays = case.arrays()
    rng = seeded(case.id, "tangent batch")
    tangents = [rng.standard_normal((BATCH,) + a.shape) for a in arrays]
    prim, args, kwargs = case.prim(*arrays)
    level = new_level()
    traced = [next((JVPTracer(a, t, level) for a, t in zip(arrays, tangents) if arg is a), arg)
              for arg in args]
    out = prim(*traced, **kwargs)
    ans = np.asarray(prim.forward(*args, **kwargs))
    assert np.shape(out.tangent) == (BATCH,) + ans.shape

    def f(b, sign):
        p, shifted, kw = case.prim(*[a + sign * FD_EPS * t[b] for a, t in zip(arrays, tangents)])
        return np.asarray(p.forward(*shifted, **kw))

    for b in range(BATCH):
        fd = (f(b, +1) - f(b, -1)) / (2 * FD_EPS)
        np.testing.assert_allclose(np.asarray(out.tangent)[b], fd, rtol=FD_REL,
                                   atol=FD_REL * max(1.0, np.max(np.abs(fd), initial=0)))


# ---------------------------------------------------------------------------------------
# 10. Every operation passes cr.gradcheck, the check users run on their own rules: to
#     second order, forward and reverse mode, against central differences.
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", FD_PARAMS)
def test_every_operation_passes_gradcheck_to_second_order(case):
    arrays = [np.asarray(a) for a in case.arrays()]

    def f(*xs):
        out = case.fn(*[cr.tensor(x) if isinstance(x, np.ndarray) else x for x in xs])
        return out[0] if isinstance(out, (list, tuple)) else out

    assert cr.gradcheck(f, *arrays, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-4)


def test_erf_of_a_python_float_is_float64():
    """NumPy 2 treats a Python float as 'weak': float32 must not leak in from a default."""
    assert cr.erf(0.7).dtype == np.float64
    assert cr.erf(0.7) == pytest.approx(math.erf(0.7), rel=1e-15)
    assert cr.erf(np.float32(0.7)).dtype == np.float32


def test_an_array_valued_operation_on_a_value_joins_the_tensor_engine():
    """The scalar engine holds single numbers: an operation that makes an array of one
    gives a Tensor (docs/conventions.md), whose gradient flows back into the Value."""
    v = cr.Value(2.0)
    t = cr.broadcast_to(v, (2, 2))
    assert isinstance(t, cr.Tensor) and t.shape == (2, 2)
    (t * 3.0).sum().backward()
    assert v.grad == 12.0
    assert cr.sum(cr.Value(2.0)).data == 2.0   # reductions of one number stay Values
