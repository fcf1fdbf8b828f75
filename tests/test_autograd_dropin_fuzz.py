"""Random small programs written for HIPS autograd give autograd's results when their
imports say ``chainrule.autograd`` instead of ``autograd``.

A program is drawn as Python source written against autograd's API: a function of one
to three arguments (floats, 0-d, 1-d and 2-d arrays, real, complex or some of each, and
tuples, lists and dicts of them, nested, read by indexing, iteration, ``values()`` and
``len``), whose body is a random composition of operations from ``autograd.numpy``,
``autograd.scipy.special`` and ``autograd.scipy.stats.norm``: elementwise functions,
arithmetic with broadcasting, reductions with ``axis`` (an int or a tuple), ``keepdims``
and ``ddof``, indexing, slicing and fancy indexing, ``concatenate``, ``stack`` and
``hstack``, ``dot``, ``matmul``, ``einsum``, ``tensordot``, ``outer`` and ``kron``,
``where``, ``maximum``, ``sort``, ``cumsum``, ``flip``, ``roll``, ``tile``, ``triu``,
reshapes and transposes, ``np.linalg``'s ``inv``, ``solve``, ``det``, ``slogdet``,
``norm``, ``cholesky``, ``eigh``, ``pinv`` and ``matrix_power``, the special functions;
sometimes a loop, a branch on a value and a keyword argument. One transform goes around
it: ``grad`` (``argnum`` an int or a tuple), ``value_and_grad``, ``grad_and_aux``,
``grad_named``, ``hessian``, ``make_hvp``, ``hessian_tensor_product``,
``hessian_vector_product``, ``jacobian``, ``make_vjp`` and ``make_jvp`` with random
vectors, ``tensor_jacobian_product``, ``vector_jacobian_product``, ``make_ggnvp``,
``elementwise_grad`` of a vectorised function, ``holomorphic_grad``, ``checkpoint``,
``misc.flatten``, outputs built with ``autograd.builtins``' ``tuple``, ``list`` and
``dict``, and nested transforms (grad of grad, jacobian of grad, jacobian of jacobian,
elementwise_grad of elementwise_grad).

The oracle is autograd itself: each program's source is executed twice, once as written
and once with ``autograd`` replaced by ``chainrule.autograd``, on copies of the same
inputs, and the two ``result`` values must agree in structure (tuple, list, dict, and
their lengths and keys), in the kind of each leaf (an ndarray, or a scalar: a Python or
NumPy float or complex), its shape and dtype, and its numbers (relative tolerance
1e-10, beside an absolute one of 1e-10 times the largest entry). Where autograd raises,
chainrule may raise too; where autograd gives a result, chainrule must give the same one.

Values stay in safe domains by construction: logarithms, square roots and divisions
see ``e * e + 1``; a node that could grow large is squashed with ``tanh``; the kinked
operations (abs, maximum, max, min, sort, where's condition) only see an input plus a
random constant of their own shape, so no tie and no kink is hit. A program is printed
whole in a failure message, so it can be pasted and run.

The draw leaves out what autograd itself gets wrong or refuses, so that a difference is
chainrule's: its forward rule for ``sort`` of a 2-d array (a Jacobian-shaped tangent),
and, in a complex program, a real operand of ``concatenate``, ``stack``, ``dot`` or
``einsum`` (autograd hands it a complex cotangent, which its ``real``, ``imag`` and
``abs`` pass on): a real part is added to ``0j`` at once. Functions autograd has no rule
for (``cbrt``, ``vdot``, ``average``, ``positive``) are not drawn.

``CHAINRULE_AUTOGRAD_FUZZ_N=<n>`` (1000 by default, about half a minute) draws ``n``
programs of each of the two real kinds, ``n // 2`` of each of the other four and
``n // 4`` gradients at integer arguments (against autograd's at the same floats); each
test draws from its own generator, seeded by its id, so a larger ``n`` keeps the
programs of a smaller one. Known differences are the strict xfails at the end of the
file, each a one-line program; the draw leaves those cases out.
"""

import os
import textwrap
import warnings

import numpy as onp
import pytest

from seeds_and_tolerances import per_test_generator

pytest.importorskip("autograd")

N = int(os.environ.get("CHAINRULE_AUTOGRAD_FUZZ_N", "1000"))
RNG = per_test_generator(20261130)

HEADER = """\
import autograd as ad
import autograd.numpy as np
import autograd.scipy.special as sp
from autograd import builtins
from autograd.misc import flatten
from autograd.scipy.stats import norm
"""


# ---------------------------------------------------------------------------------------
# Running a program twice and comparing what it gives.
# ---------------------------------------------------------------------------------------

def run(source, inputs, library):
    """``result`` of the program, run with ``library`` ("autograd" or
    "chainrule.autograd"), or the exception it raised."""
    if library != "autograd":
        source = source.replace("autograd", library)
    namespace = {name: _copy(value) for name, value in inputs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with onp.errstate(all="ignore"):
                exec(compile(source, "<program>", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 (a raise is an outcome to compare)
            return error
    return namespace["result"]


def _copy(value):
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v) for v in value)
    return value.copy() if isinstance(value, onp.ndarray) else value


def kind(leaf):
    """What a program sees of a leaf's type: an ndarray, or a scalar."""
    if isinstance(leaf, onp.ndarray):
        return "ndarray"
    if isinstance(leaf, (float, complex, int, onp.number, onp.bool_)):
        return "scalar"
    return type(leaf).__name__


def differences(theirs, ours, where="result"):
    """Where ``ours`` is not ``theirs``: a list of sentences, empty when they agree."""
    if isinstance(theirs, (dict, tuple, list)):
        if type(ours).__name__ != type(theirs).__name__ or not isinstance(ours, type(theirs)):
            return [f"{where}: autograd gives a {type(theirs).__name__}, "
                    f"chainrule a {type(ours).__name__}"]
        if isinstance(theirs, dict):
            if list(theirs) != list(ours):
                return [f"{where}: keys {list(theirs)} against {list(ours)}"]
            pairs = [(f"{where}[{k!r}]", theirs[k], ours[k]) for k in theirs]
        else:
            if len(theirs) != len(ours):
                return [f"{where}: length {len(theirs)} against {len(ours)}"]
            pairs = [(f"{where}[{i}]", a, b) for i, (a, b) in enumerate(zip(theirs, ours))]
        return [d for w, a, b in pairs for d in differences(a, b, w)]
    if callable(theirs):
        return [] if callable(ours) else [f"{where}: a function against {ours!r}"]
    found = []
    if kind(theirs) != kind(ours) and not zero_d_beside_a_scalar(theirs, ours):
        found.append(f"{where}: autograd gives {type(theirs).__name__}, "
                     f"chainrule {type(ours).__name__}")
    a, b = onp.asarray(theirs), onp.asarray(ours)
    if a.shape != b.shape or a.dtype != b.dtype:
        return found + [f"{where}: autograd gives {a.dtype}{list(a.shape)}, "
                        f"chainrule {b.dtype}{list(b.shape)}"]
    scale = float(onp.max(onp.abs(a), initial=1.0, where=onp.isfinite(a)))
    if not onp.allclose(b, a, rtol=1e-10, atol=1e-10 * scale, equal_nan=True):
        found.append(f"{where}: autograd gives\n{a}\nchainrule gives\n{b}")
    return found


def zero_d_beside_a_scalar(theirs, ours):
    """A 0-d ndarray on one side where the other gives a scalar. autograd's kind there is
    whatever its last rule's NumPy arithmetic made (NumPy's float64 from ``x ** 2``, a
    0-d array from an unbroadcasting sum, or from its space's zeros for an argument the
    function does not use); chainrule.autograd gives NumPy scalars for gradients and
    values and 0-d arrays for Jacobians at a float (the named tests below pin the common
    cases), and the draw lets the rest pass (about one program in twenty-five)."""
    def zero_d(x):
        return isinstance(x, onp.ndarray) and x.ndim == 0
    return ((zero_d(ours) and kind(theirs) == "scalar")
            or (zero_d(theirs) and kind(ours) == "scalar"))


def check(source, inputs):
    """Runs the program with both libraries and fails, printing it, where they differ."""
    source = HEADER + textwrap.dedent(source)
    theirs = run(source, inputs, "autograd")
    ours = run(source, inputs, "chainrule.autograd")
    shown = "\n".join(f"{k} = {_literal(v)}" for k, v in inputs.items()) + "\n" + source
    if isinstance(theirs, Exception):
        # autograd refuses (a rule it lacks: sort of a 2-d array, flip, matrix_power):
        # chainrule may refuse too, or give the gradient, which central differences check
        if not isinstance(ours, Exception):
            expected = central_difference_gradient(source, inputs)
            if expected is not None:
                scale = 1.0 + float(onp.max(onp.abs(expected), initial=0.0))
                assert onp.allclose(ours, expected, rtol=1e-5, atol=1e-6 * scale), (
                    f"autograd raises {type(theirs).__name__}: {theirs}\nchainrule gives\n"
                    f"{ours}\ncentral differences\n{expected}\n\n{shown}")
        return
    if isinstance(ours, Exception):
        pytest.fail(f"chainrule raises {type(ours).__name__}: {ours}\n"
                    f"where autograd gives {theirs!r}\n\n{shown}")
    found = differences(theirs, ours)
    assert not found, "\n".join(found) + "\n\n" + shown


def central_difference_gradient(source, inputs, h=1e-6):
    """For a program ending ``result = ad.grad(f, k)(...)`` with a real array or float as
    argument k: that gradient by central differences, f run with autograd.numpy on plain
    values; None for any other program."""
    head, last = source.rstrip().rsplit("\n", 1)
    prefix = "result = ad.grad(f, "
    if not last.startswith(prefix) or not last[len(prefix)].isdigit():
        return None
    k, call = last[len(prefix):].split(")(", 1)
    name = list(inputs)[int(k)]
    if not isinstance(inputs[name], (float, onp.ndarray)) or onp.iscomplexobj(inputs[name]):
        return None
    x = onp.asarray(inputs[name], dtype=float)
    gradient = onp.zeros(x.shape)
    for index in onp.ndindex(x.shape):
        ends = []
        for step in (h, -h):
            moved = x.copy()
            moved[index] += step
            value = run(head + f"\nresult = f({call}\n", {**inputs, name: moved}, "autograd")
            ends.append(float(value))
        gradient[index] = (ends[0] - ends[1]) / (2 * h)
    return gradient


def _literal(value):
    if isinstance(value, onp.ndarray):
        return f"onp.array({value.tolist()!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + "".join(f"{_literal(v)}, " for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


# ---------------------------------------------------------------------------------------
# Drawing programs. An expression is its source, its shape, a rough bound on its
# magnitude, and whether it is complex. ``Draw.expr(shape, depth)`` draws one of the
# given shape, so every program is valid by construction.
# ---------------------------------------------------------------------------------------

SHAPES = [(), (2,), (3,), (2, 3)]
INPUT_SHAPES = [(), (3,), (2, 3)]


class E:
    def __init__(self, src, shape, bound=1.0, cplx=False):
        self.src, self.shape, self.bound, self.cplx = _atom(src), tuple(shape), bound, cplx


def _atom(src):
    """src in parentheses if an operator stands outside every bracket in it (so that
    ``src[1]``, ``src.T`` and ``src ** 2`` apply to the whole of it)."""
    depth = 0
    for char in src:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and char == " " or src.startswith("-"):
            return f"({src})"
    return src


def _num(x):
    return f"{x:.3f}"


class Draw:
    """Random expressions over a program's leaves (its arguments, and the arrays inside
    its container arguments). ``complex_`` keeps to holomorphic operations and conj,
    real, imag and abs; ``elementwise`` to elementwise operations of one shape."""

    def __init__(self, rng, leaves, complex_=False, elementwise=False, holomorphic=False,
                 forward=False):
        self.rng, self.leaves, self.forward = rng, leaves, forward
        self.complex_, self.elementwise, self.holomorphic = complex_, elementwise, holomorphic

    def choice(self, options):
        return options[self.rng.integers(len(options))]

    def coin(self, p=0.5):
        return self.rng.random() < p

    def const(self, shape, scale=1.0):
        values = onp.round(self.rng.uniform(0.3, 1.5, shape) * self.rng.choice([-1, 1], shape)
                           * scale, 3)
        if shape == ():
            return E(_num(float(values)), (), abs(float(values)))
        return E(f"np.array({onp.array2string(values, separator=', ', precision=3)})"
                 .replace("\n", "").replace("  ", " "), shape, float(onp.abs(values).max()))

    # --- leaves, and turning an expression into one of another shape (linearly) ---

    def leaf(self, shape):
        same = [e for e in self.leaves if e.shape == shape]
        if same and self.coin(0.7):
            return self.choice(same)
        if self.elementwise:
            return self.choice(same) if same else self.leaves[0]
        return self.adapt(self.choice(self.leaves), shape)

    def adapt(self, e, shape):
        """e made into ``shape`` by indexing, summing and broadcasting with constants
        (linear in e, so no kink and no tie)."""
        s = e.shape
        if s == shape:
            return e
        if s == (2, 3):
            if shape == (3,):
                src = self.choice([f"{e.src}[0]", f"np.sum({e.src}, axis=0)", f"{e.src}[-1, :]",
                                   f"np.mean({e.src}, axis=0)"])
            elif shape == (2,):
                src = self.choice([f"{e.src}[:, 1]", f"np.sum({e.src}, axis=1)",
                                   f"{e.src}[:, ::2].sum(axis=-1)"])
            else:
                src = self.choice([f"np.sum({e.src})", f"{e.src}[1, 2]", f"np.mean({e.src})",
                                   f"{e.src}[0][1]"])
            return E(src, shape, e.bound * 6, e.cplx)
        if s == (3,):
            if shape == (2,):
                return E(self.choice([f"{e.src}[:2]", f"{e.src}[1:]", f"{e.src}[[0, 2]]",
                                      f"{e.src}[::-2]"]), shape, e.bound, e.cplx)
            if shape == ():
                return E(self.choice([f"np.sum({e.src})", f"{e.src}[1]", f"{e.src}[-1]"]),
                         shape, e.bound * 3, e.cplx)
            c = self.const((2,))
            return E(self.choice([f"np.outer({c.src}, {e.src})", f"{c.src}[:, None] * {e.src}"]),
                     shape, e.bound * c.bound, e.cplx)
        if s == (2,):
            if shape == (3,):
                return E(self.choice([f"np.concatenate([{e.src}, {e.src}[:1]])",
                                      f"np.concatenate([{e.src}[::-1], np.array([0.5])])"]),
                         shape, e.bound, e.cplx)
            if shape == ():
                return E(self.choice([f"np.sum({e.src})", f"{e.src}[0]"]), shape, e.bound * 2,
                         e.cplx)
            c = self.const((3,))
            return E(self.choice([f"np.outer({e.src}, {c.src})", f"{e.src}[:, None] * {c.src}"]),
                     shape, e.bound * c.bound, e.cplx)
        c = self.const(shape)
        return E(f"{e.src} * {c.src}", shape, e.bound * c.bound, e.cplx)

    def fresh(self, shape):
        """An input plus a random constant: no entry at a kink, no two entries tied."""
        e = self.leaf(shape)
        c = self.const(shape, 0.5)
        if e.cplx:
            e = E(f"np.real({e.src})", e.shape, e.bound)
        return E(f"({e.src} + {c.src})", shape, e.bound + c.bound)

    def squash(self, e):
        if e.bound > 8:
            return E(f"np.tanh({e.src})" if not e.cplx else f"({e.src}) * 0.1", e.shape,
                     1.0 if not e.cplx else e.bound * 0.1, e.cplx)
        return e

    # --- the draw ---

    def expr(self, shape, depth):
        if depth <= 0 or self.coin(0.15):
            return self.leaf(shape)
        options = [self.unary, self.binary, self.binary]
        if not self.elementwise:
            options += [self.structural, self.structural]
        return self.squash(self.choice(options)(shape, depth - 1))

    def unary(self, shape, depth):
        if self.complex_:
            return self.complex_unary(shape, depth)
        if self.coin(0.15) and not self.elementwise:
            f = self.fresh(shape)
            op = self.choice(["np.abs({})", "np.maximum({}, 0.0)", "np.sign({}) * {}",
                              "np.clip({}, -0.5, 0.5)", "np.fabs({})"])
            return E(op.format(f.src, f.src), shape, f.bound)
        e = self.expr(shape, depth)
        s, b = e.src, e.bound
        ops = [("np.sin({0})", 1), ("np.cos({0})", 1), ("np.tanh({0})", 1),
               ("np.exp(np.tanh({0}))", 3), ("np.log({0} * {0} + 1.0)", 2 * b + 1),
               ("np.sqrt({0} ** 2 + 1.0)", b + 1), ("np.square({0})", b * b),
               ("np.arctan({0})", 2), ("-{0}", b), ("{0} ** 3", b ** 3),
               ("np.sinh(np.tanh({0}))", 2), ("np.cosh(np.tanh({0}))", 2),
               ("np.expm1(np.tanh({0}))", 2), ("np.log1p({0} ** 2)", 2 * b + 1),
               ("sp.expit({0})", 1), ("sp.erf({0})", 1), ("sp.erfc({0})", 2),
               ("sp.gammaln({0} ** 2 + 0.5)", b * b + 2), ("sp.digamma({0} ** 2 + 0.5)", b + 3),
               ("sp.logit(sp.expit({0}))", b), ("np.arcsinh({0})", b),
               ("np.reciprocal({0} ** 2 + 1.0)", 1), ("1.0 / ({0} ** 2 + 2.0)", 1),
               ("np.power({0} ** 2 + 1.0, 1.5)", b ** 3 + 2), ("np.true_divide({0}, 3.0)", b),
               ("{0}.T.T", b), ("np.real({0})", b), ("np.log10({0} ** 2 + 1.0)", b),
               ("np.exp2(np.tanh({0}))", 2), ("np.deg2rad({0})", b), ("np.hypot({0}, 0.7)", b + 1),
               ("np.log2({0} ** 2 + 1.0)", b), 
               ("np.arccos(np.tanh({0}) * 0.9)", 3), ("np.arcsin(np.tanh({0}) * 0.9)", 2),
               ("np.arctanh(np.tanh({0}) * 0.9)", 2), ("np.arccosh({0} ** 2 + 1.5)", b),
               ("np.tan(np.tanh({0}))", 2), ("np.sinc({0})", 1), ("np.rad2deg({0})", 60 * b),
               ("{0} ** 2.0", b * b), ("np.power({0}, 2)", b * b),
               ("({0} ** 2 + 1.0) ** 0.5", b + 1), ("np.nan_to_num({0})", b),
               ("sp.gamma(np.tanh({0}) + 2.0)", 2), ("sp.rgamma(np.tanh({0}) + 2.0)", 2),
               ("sp.polygamma(1, {0} ** 2 + 0.5)", 5), ("sp.psi({0} ** 2 + 0.5)", b + 3),
               ("sp.erfinv(np.tanh({0}) * 0.9)", 2), ("sp.erfcinv(np.tanh({0}) * 0.9 + 1.0)", 2),
               ("sp.j0({0})", 1), ("sp.j1({0})", 1), ("sp.y0({0} ** 2 + 0.5)", 2),
               ("sp.i0(np.tanh({0}))", 2), ("sp.i1(np.tanh({0}))", 2),
               ("sp.iv(1.0, np.tanh({0}))", 2), ("sp.ive(0.5, {0} ** 2 + 0.5)", 1),
               ("sp.gammainc(2.0, {0} ** 2 + 0.5)", 1), ("sp.gammaincc(1.5, {0} ** 2 + 0.5)", 1),
               ("sp.betaln({0} ** 2 + 0.5, 1.5)", b * b + 3),
               ("sp.beta(np.tanh({0}) + 1.5, 2.0)", 2), ("sp.jn(2, {0})", 1),
               ("norm.logpdf({0})", b * b + 1), ("norm.cdf({0})", 1), ("norm.pdf({0}, 0.5, 1.5)", 1),
               ("np.array({0})", b)]
        if not self.elementwise:
            ops += [("{0}.flatten().reshape({1})", b), ("{0}.ravel().reshape({1})", b),
                    ("np.reshape({0}, {1})", b), ("np.atleast_1d({0}).reshape({1})", b),
                    ("np.squeeze({0})", b), ("np.clip({0}, -5.0, 5.0)", b), ("abs({0} + 2.0)", b + 2),
                    ("np.tile({0}, 1)", b) if shape else ("np.tile({0}, 1)[0]", b)]
        if shape == () and not self.elementwise:
            ops += [("float({0}) * 0.0 + {0}", b)]
        op, bound = self.choice(ops)
        return E(op.format(s, shape), shape, bound)

    def complex_unary(self, shape, depth):
        e = self.expr(shape, depth)
        s, b = e.src, e.bound
        ops = [("np.sin({0})", b + 2), ("np.cos({0})", b + 2), ("np.square({0})", b * b),
               ("-{0}", b), ("{0} ** 3", b ** 3), ("2.0j * {0}", 2 * b), ("np.sinh({0})", b + 2)]
        if b < 2:
            ops.append(("np.exp({0})", 8))
        if not self.holomorphic:
            # a real part of a complex program is added to 0j at once: autograd's rules
            # for concatenate, stack, dot and einsum hand a real operand a complex
            # cotangent, and its rules for real, imag and abs keep the imaginary part
            ops += [("np.conj({0})", b), ("(np.real({0}) + 0j)", b), ("(np.imag({0}) + 0j)", b),
                    ("(np.abs({0}) + 0j)", b), ("(np.abs({0}) ** 2 + 0j)", b * b),
                    ("(np.angle({0} + 3.0) + 0j)", 2)]
        op, bound = self.choice(ops)
        return E(op.format(s), shape, bound, cplx=e.cplx)

    def broadcastable(self, shape):
        if self.elementwise:
            return self.choice([shape, shape, ()])
        if shape == (2, 3):
            return self.choice([(2, 3), (2, 3), (3,), (), "col", "row"])
        return self.choice([shape, shape, ()])

    def binary(self, shape, depth):
        a = self.expr(shape, depth)
        other = self.broadcastable(shape)
        if other == "col":
            b = self.expr((2,), depth)
            b = E(self.choice([f"{b.src}[:, None]", f"np.expand_dims({b.src}, 1)",
                               f"np.reshape({b.src}, (2, 1))"]), (2, 1), b.bound, b.cplx)
        elif other == "row":
            b = self.expr((3,), depth)
            b = E(self.choice([f"{b.src}[None, :]", f"np.expand_dims({b.src}, 0)"]), (1, 3),
                  b.bound, b.cplx)
        else:
            b = self.expr(other, depth) if self.coin(0.7) else self.const(other)
        if self.coin():
            a, b = b, a
        if a.src == b.src:  # (no x - x: an exact zero is a kink of sinc, norm, abs)
            b = E(f"np.sin({b.src})", b.shape, 1.0, b.cplx)
        cplx = a.cplx or b.cplx
        ops = [("{0} + {1}", a.bound + b.bound), ("{0} - {1}", a.bound + b.bound),
               ("{0} * {1}", a.bound * b.bound), ("np.add({0}, {1})", a.bound + b.bound),
               ("np.multiply({0}, {1})", a.bound * b.bound)]
        if not self.complex_:
            ops += [("{0} / ({1} ** 2 + 1.0)", a.bound), ("np.divide({0}, {1} ** 2 + 1.5)", a.bound),
                    ("np.arctan2({0}, {1} ** 2 + 1.0)", 2),
                    ("np.logaddexp(np.tanh({0}), {1} * 0.1)", 2 + b.bound),
                    ("({0} ** 2 + 1.0) ** np.tanh({1})", a.bound ** 2 + 1)]
            if not self.elementwise and self.coin(0.2):
                fa, fb = self.fresh(shape), self.fresh(shape)  # (broadcasting would tie)
                op = self.choice(["np.maximum({0}, {1})", "np.minimum({0}, {1})",
                                  "np.where({0} > {1}, {0} * 2.0, {1})"])
                return E(op.format(fa.src, fb.src), shape, 2 * (fa.bound + fb.bound))
        op, bound = self.choice(ops)
        return E(op.format(a.src, b.src), shape, bound, cplx)

    def structural(self, shape, depth):
        makers = [self.reduction, self.indexed, self.joined, self.product, self.rearranged]
        if not self.complex_:
            makers += [self.ordered, self.linalg, self.selected]
        return self.choice(makers)(shape, depth)

    def reduction(self, shape, depth):
        name = self.choice(["sum", "mean"] if self.complex_ else
                           ["sum", "mean", "prod", "max", "min", "std", "var", "logsumexp"])
        kink = name in ("max", "min")
        if shape == () and self.coin(0.5):
            src_shape = self.choice([(3,), (2, 3)])
            axis = self.choice([None, None, 0, -1]) if src_shape == (3,) else self.choice(
                [None, None, (0, 1), (-1, 0)])
            keep = False
        elif shape == (2, 3):
            src_shape, axis, keep = (2, 3), self.choice([0, 1, -1]), True
        elif shape in ((2,), (3,)):
            src_shape, keep = (2, 3), False
            axis = 1 if shape == (2,) else self.choice([0, -2])
        else:
            src_shape, axis, keep = (3,), None, False
        a = self.fresh(src_shape) if kink else self.expr(src_shape, depth)
        if name == "prod":  # (no zero factor: autograd's rules divide the product by it)
            a = E(f"(np.tanh({a.src}) + 1.5)", a.shape)
        arg = "" if axis is None else f", axis={axis}"
        arg += ", keepdims=True" if keep else ""
        if name in ("std", "var") and self.coin(0.3):
            arg += ", ddof=1" if a.shape == (2, 3) and axis in (0, -2) else ", ddof=0"
        if name == "logsumexp":
            src = f"sp.logsumexp({a.src}{arg})"
        elif self.coin(0.3) and name not in ("std", "var"):
            src = f"({a.src}).{name}({arg.lstrip(', ')})"
        else:
            src = f"np.{name}({a.src}{arg})"
        e = E(src, (2, 1) if keep and axis in (1, -1) else (1, 3) if keep else shape,
              a.bound * 6, a.cplx)
        if keep:  # (2, 1) or (1, 3): broadcast back with another expression of the shape
            b = self.expr(shape, depth)
            return E(f"{e.src} * {b.src}", shape, e.bound * b.bound, e.cplx or b.cplx)
        return e

    def indexed(self, shape, depth):
        if shape == ():
            a = self.expr((2, 3), depth)
            return E(self.choice([f"{a.src}[1, 0]", f"{a.src}[-1][-1]", f"{a.src}[0, 1:].sum()"]),
                     (), a.bound * 2, a.cplx)
        if shape == (2,):
            a = self.expr((2, 3), depth)
            return E(self.choice([f"{a.src}[:, 0]", f"{a.src}[..., -1]", f"{a.src}[[1, 0], 2]",
                                  f"{a.src}.T[1]"]), (2,), a.bound, a.cplx)
        if shape == (3,):
            a = self.expr((2, 3), depth)
            return E(self.choice([f"{a.src}[1]", f"{a.src}[0, ::-1]", f"{a.src}.ravel()[2:5]",
                                  f"{a.src}[np.array([1, 0, 1]), np.array([0, 2, 1])]"]),
                     (3,), a.bound, a.cplx)
        a = self.expr((2, 3), depth)
        return E(self.choice([f"{a.src}[::-1]", f"{a.src}[:, [2, 0, 1]]", f"{a.src}[[1, 1]]",
                              f"np.repeat({a.src}[np.array([True, False])], 2, axis=0)"]),
                 (2, 3), a.bound, a.cplx)

    def joined(self, shape, depth):
        if shape == (2, 3):
            if self.coin():
                a, b = self.expr((3,), depth), self.expr((3,), depth)
                src = self.choice([f"np.stack([{a.src}, {b.src}])", f"np.vstack([{a.src}, {b.src}])",
                                   f"np.array([{a.src}, {b.src}])"])
            else:
                a, b = self.expr((2,), depth), self.expr((2, 3), depth)
                src = self.choice([f"np.concatenate([{a.src}[:, None], {b.src}[:, 1:]], axis=1)",
                                   f"np.hstack([{b.src}[:, :2], {a.src}[:, None]])",
                                   f"np.stack([{a.src}, {a.src} * 2.0, {b.src}[:, 0]], axis=1)"])
        elif shape == (3,):
            a, b = self.expr((2,), depth), self.expr((), depth)
            src = self.choice([f"np.concatenate([{a.src}, np.array([{b.src}])])",
                               f"np.hstack([{b.src}, {a.src}])",
                               f"np.array([{b.src}, {a.src}[0], {a.src}[1]])"])
        elif shape == (2,):
            a, b = self.expr((), depth), self.expr((), depth)
            src = self.choice([f"np.array([{a.src}, {b.src}])", f"np.stack([{a.src}, {b.src}])"])
        else:
            a, b = self.expr((2,), depth), self.expr((3,), depth)
            src = f"np.sum(np.concatenate([{a.src}, {b.src}]))"
        return E(src, shape, 3 * max(a.bound, b.bound), a.cplx or b.cplx)

    def product(self, shape, depth):
        if shape == ():
            a, b = self.expr((3,), depth), self.expr((3,), depth)
            src = self.choice([f"np.dot({a.src}, {b.src})", f"np.inner({a.src}, {b.src})",
                               f"np.sum({a.src} * {b.src})",
                               f"np.einsum('i,j->', {a.src}, {b.src})",
                               f"np.einsum('i,i->', {a.src}, {b.src})", f"{a.src} @ {b.src}",
                               f"np.tensordot({a.src}, {b.src}, axes=1)"])
            bound = 3 * a.bound * b.bound
        elif shape == (2,):
            a, b = self.expr((2, 3), depth), self.expr((3,), depth)
            src = self.choice([f"np.dot({a.src}, {b.src})", f"np.matmul({a.src}, {b.src})",
                               f"np.einsum('ij,j->i', {a.src}, {b.src})",
                               f"np.tensordot({a.src}, {b.src}, axes=([1], [0]))",
                               f"np.einsum('ij,j', {a.src}, {b.src})",
                               f"np.einsum('...j,j->...', {a.src}, {b.src})",
                               f"np.kron({a.src}[:, 0], {b.src}[:1])"])
            bound = 3 * a.bound * b.bound
        elif shape == (3,):
            a, b = self.expr((2,), depth), self.expr((2, 3), depth)
            src = self.choice([f"np.dot({a.src}, {b.src})", f"{a.src} @ {b.src}",
                               f"np.einsum('i,ij->j', {a.src}, {b.src})"])
            bound = 2 * a.bound * b.bound
        else:
            a, b = self.expr((2, 3), depth), self.expr((2, 3), depth)
            src = self.choice([f"np.dot({a.src}, {b.src}.T) @ {b.src}",
                               f"np.einsum('ij,kj,kl->il', {a.src}, {b.src}, {b.src})",
                               f"np.matmul({a.src}, np.transpose({b.src})) @ {b.src}",
                               f"np.outer({a.src}[:, 0], {b.src}[0])",
                               f"np.einsum('ij,ij->ij', {a.src}, {b.src})",
                               f"np.einsum('ij,kj->ik', {a.src}, {b.src}) @ {b.src}",
                               f"np.triu(np.dot({a.src}, {b.src}.T)) @ {b.src}",
                               f"np.tril({a.src}.T @ {b.src})[1:]",
                               f"np.kron({a.src}[:, :1], {b.src}[:1])"])
            bound = 6 * a.bound * b.bound * b.bound
        return E(src, shape, bound, a.cplx or b.cplx)

    def rearranged(self, shape, depth):
        if shape == (2, 3):
            a = self.expr((2, 3), depth)
            src = self.choice([f"np.flip({a.src}, 1)", f"np.roll({a.src}, 1, axis=1)",
                               f"np.reshape({a.src}.T, (2, 3))", f"np.cumsum({a.src}, axis=1)",
                               f"np.fliplr(np.flipud({a.src}))", f"np.swapaxes({a.src}.T, 0, 1)",
                               f"{a.src}.reshape(3, 2).reshape((2, 3))",
                               f"np.squeeze(np.expand_dims({a.src}, 0))",
                               f"np.tile({a.src}[:, :1], (1, 3))", f"np.rot90({a.src}, 2)",
                               f"np.cumsum({a.src}, axis=0)", f"{a.src}.T.reshape(-1)[::-1].reshape(2, 3)",
                               f"np.moveaxis({a.src}[None], 0, 2)[..., 0]",
                               f"np.transpose({a.src}.T)"])
            return E(src, shape, a.bound * 3, a.cplx)
        if shape == (3,):
            a = self.expr((3,), depth)
            src = self.choice([f"np.cumsum({a.src})", f"{a.src}[::-1]", f"np.roll({a.src}, -1)",
                               f"np.ravel(np.atleast_2d({a.src}))", f"np.diff(np.concatenate([np.zeros(1), {a.src}]))"])
            return E(src, shape, a.bound * 3, a.cplx)
        if shape == (2,):
            a = self.expr((3,), depth)
            return E(self.choice([f"np.diff({a.src})", f"np.cumsum({a.src})[1:]"]), shape,
                     a.bound * 3, a.cplx)
        a = self.expr((2, 3), depth)
        return E(self.choice([f"np.trace({a.src}[:, :2])", f"np.sum(np.diag({a.src}[:, 1:]))",
                              f"np.sum(np.diagonal({a.src}[:, 1:]))", f"{a.src}.sum()",
                              f"np.sum({a.src}.T @ {a.src})"]),
                 shape, a.bound * 2, a.cplx)

    def ordered(self, shape, depth):
        if shape == (2, 3) and not self.forward:  # (autograd's forward rule: see below)
            f = self.fresh((2, 3))
            return E(self.choice([f"np.sort({f.src}, axis=1)", f"np.sort({f.src}, axis=0)",
                                  f"np.sort({f.src})"]), shape, f.bound)
        if shape == (2, 3):
            return self.selected(shape, depth)
        if shape == (3,):
            f = self.fresh((3,))
            return E(self.choice([f"np.sort({f.src})", f"np.sort({f.src})[::-1]"]), shape, f.bound)
        if shape == (2,):
            f = self.fresh((3,))
            return E(f"np.sort({f.src})[1:]", shape, f.bound)
        f = self.fresh((3,))
        return E(f"np.sort({f.src})[1]", shape, f.bound)

    def selected(self, shape, depth):
        f = self.fresh(shape)
        a, b = self.expr(shape, depth), self.expr(shape, depth)
        return E(f"np.where({f.src} > 0.0, {a.src}, {b.src})", shape, max(a.bound, b.bound))

    def linalg(self, shape, depth):
        a = self.expr((2, 3), depth)
        c = self.const((2, 3), 0.5)
        a = E(f"(np.tanh({a.src}) + {c.src})", a.shape)  # (no norm at zero)
        gram = f"(np.dot({a.src}, {a.src}.T) + 2.0 * np.eye(2))"
        if shape == ():
            src = self.choice([f"np.linalg.det({gram})", f"np.log(np.linalg.det({gram}))",
                               f"np.linalg.norm({a.src})", f"np.linalg.slogdet({gram})[1]",
                               f"np.trace(np.linalg.inv({gram}))",
                               f"np.linalg.norm({a.src}, 'fro')",
                               f"np.linalg.norm({a.src}[0], 3)",
                               f"np.sum(np.linalg.cholesky({gram}))",
                               f"np.sum(np.linalg.eigh({gram})[0])",
                               f"np.linalg.eigh({gram})[0][1]",
                               f"np.sum(np.linalg.pinv({a.src}))",
                               f"np.sum(np.linalg.matrix_power({gram}, 2))"])
            return E(src, (), 30.0)
        if shape == (2,):
            b = self.expr((2,), depth)
            return E(self.choice([f"np.linalg.solve({gram}, {b.src})",
                                  f"np.dot(np.linalg.inv({gram}), {b.src})",
                                  f"np.linalg.norm({a.src}, axis=1)"]), shape, 3 * b.bound + 3)
        if shape == (3,):
            return E(f"np.linalg.norm({a.src}, axis=0)", shape, 3.0)
        return E(self.choice([f"np.linalg.solve({gram}, {a.src})",
                              f"np.linalg.inv({gram}) @ {a.src}"]), shape, 3.0)


# ---------------------------------------------------------------------------------------
# Arguments, and the transforms a program is run under.
# ---------------------------------------------------------------------------------------

def draw_arguments(rng, count, complex_=False, containers=True):
    """``count`` arguments: name -> value, and the leaves an expression may read. With
    ``complex_``, most arguments are complex and a real one is read as ``(x + 0j)``."""
    inputs, leaves, array_args = {}, [], []

    def value(shape):
        x = onp.round(rng.uniform(-1.2, 1.2, shape), 3)
        cplx = complex_ and rng.random() < 0.75
        if cplx:
            x = x + 1j * onp.round(rng.uniform(-0.8, 0.8, shape), 3)
        if shape == () and rng.random() < 0.5:
            return complex(x) if cplx else float(x)
        return onp.asarray(x)

    def leaf(src, value):
        if complex_ and not onp.iscomplexobj(value):
            src = f"({src} + 0j)"
        return E(src, onp.shape(value), 1.5, complex_)

    for i in range(count):
        name = f"a{i}"
        container = containers and i > 0 and rng.random() < 0.35
        if not container:
            inputs[name] = value(INPUT_SHAPES[rng.integers(len(INPUT_SHAPES))])
            leaves.append(leaf(name, inputs[name]))
            array_args.append(i)
            continue
        shapes = [INPUT_SHAPES[rng.integers(len(INPUT_SHAPES))] for _ in range(3)]
        form = ("tuple", "list", "dict", "nested")[rng.integers(4)]
        parts = [value(s) for s in shapes]
        if form == "nested":
            inputs[name] = {"w": parts[0], "b": (parts[1], [parts[2]])}
            paths = ['["w"]', '["b"][0]', '["b"][1][0]']
        elif form == "dict":
            inputs[name] = {"w": parts[0], "b": parts[1]}
            paths = ['["w"]', '["b"]']
        else:
            inputs[name] = tuple(parts[:2]) if form == "tuple" else parts[:2]
            paths = ["[0]", "[1]"]
        leaves += [leaf(name + path, part) for path, part in zip(paths, parts)]
        # the container itself, through its boxes: iteration, values(), len()
        whole = {"dict": f"sum(np.sum(v) for v in {name}.values())",
                 "nested": f"np.sum({name}['b'][1][0]) * len({name}['b'])"}.get(
                     form, f"sum(np.sum(v) for v in {name}) / len({name})")
        leaves.append(E(f"({whole} + 0j)" if complex_ else whole, (), 6.0, complex_))
    return inputs, leaves, array_args


def signature(inputs):
    return ", ".join(inputs)


def scalar(e):
    """A real number from an expression (what grad differentiates)."""
    if e.cplx:
        return f"np.real(np.sum({e.src} * np.conj({e.src}) * 0.5 + {e.src}))"
    return e.src if e.shape == () else f"np.sum({e.src})"


def random_vector(rng, shape, complex_=False):
    x = onp.round(rng.uniform(-1, 1, shape), 3)
    if complex_:
        x = x + 1j * onp.round(rng.uniform(-1, 1, shape), 3)
    return onp.asarray(x)


def random_like(rng, value):
    """A random tangent of value's space: the same containers, shapes and dtypes."""
    if isinstance(value, dict):
        return {key: random_like(rng, part) for key, part in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(random_like(rng, part) for part in value)
    tangent = random_vector(rng, onp.shape(value), onp.iscomplexobj(value))
    return type(value)(tangent) if isinstance(value, (float, complex)) else tangent


def shape_of(value):
    return onp.shape(value)


def draw_scalar_program(rng, complex_=False):
    """A real-valued function and a transform of it: grad (argnum an int or a tuple),
    value_and_grad, grad_and_aux, hessian, make_hvp, hessian_tensor_product, grad of
    grad, jacobian of grad, checkpoint, flatten."""
    inputs, leaves, array_args = draw_arguments(rng, int(rng.integers(1, 4)), complex_)
    d = Draw(rng, leaves, complex_=complex_)
    body = d.expr(SHAPES[rng.integers(len(SHAPES))], int(rng.integers(1, 4)))
    args = signature(inputs)
    names = list(inputs)
    k = int(rng.integers(len(names)))
    if rng.random() < 0.25:  # a loop, a branch on a value, a keyword argument
        step = d.expr(body.shape, 1)
        y = E("y", body.shape, 1.0, body.cplx or step.cplx)
        program = (f"def f({args}, scale=0.9):\n    y = {body.src}\n"
                   f"    for _ in range(2):\n        y = np.tanh(y) * scale + {step.src}\n"
                   f"    if np.sum(np.real(y)) > 0:\n        return {scalar(y)}\n"
                   f"    return 2.0 * {scalar(y)}\n\n")
        if rng.random() < 0.5:
            args_call = args + ", scale=0.7"
            return _scalar_transform(rng, d, program, inputs, args, args_call, names, k,
                                     array_args, complex_)
    else:
        program = f"def f({args}):\n    return {scalar(body)}\n\n"
    return _scalar_transform(rng, d, program, inputs, args, args, names, k, array_args,
                             complex_)


def _scalar_transform(rng, d, program, inputs, args, call, names, k, array_args, complex_):
    """``program`` (which defines f) with one transform of f called on ``call``."""
    transforms = ["grad", "grad", "tuple", "value_and_grad", "grad_and_aux", "flatten",
                  "checkpoint", "grad_named", "value_and_grad_tuple"]
    if not complex_ and array_args:
        transforms += ["hessian", "hvp", "htp", "hessian_vector_product", "grad_of_grad",
                       "jacobian_of_grad"]
    t = transforms[rng.integers(len(transforms))]
    if t in ("grad_and_aux", "checkpoint", "grad_of_grad", "jacobian_of_grad"):
        call = args  # (the functions these define take f's positional arguments only)
    if t in ("hessian", "htp", "hessian_vector_product", "grad_of_grad", "jacobian_of_grad"):
        k = array_args[rng.integers(len(array_args))]
    if t == "grad":
        program += f"result = ad.grad(f, {k})({call})\n"
    elif t == "tuple":
        ks = tuple(sorted(set(int(i) for i in rng.integers(len(names), size=2))))
        program += f"result = ad.grad(f, {ks!r})({call})\n"
    elif t == "value_and_grad":
        program += f"result = ad.value_and_grad(f, {k})({call})\n"
    elif t == "value_and_grad_tuple":
        ks = tuple(range(len(names)))[::-1] if rng.random() < 0.5 else (k,)
        program += f"result = ad.value_and_grad(f, {ks!r})({call})\n"
    elif t == "grad_named":
        program += f"result = ad.grad_named(f, {names[k]!r})({call})\n"
    elif t == "grad_and_aux":
        aux = d.expr(SHAPES[rng.integers(len(SHAPES))], 1)
        program += (f"def f_aux({args}):\n    return f({args}), {aux.src}\n\n"
                    f"result = ad.grad_and_aux(f_aux, {k})({call})\n")
    elif t == "flatten":
        program += f"result = flatten(ad.grad(f, {k})({args}))[0]\n"
    elif t == "checkpoint":
        inner = d.expr((3,), 2)
        program += (f"def g({args}):\n    return {inner.src}\n\n"
                    f"def h({args}):\n    return f({args}) + {scalar(E('ad.checkpoint(g)(' + args + ') ** 2', (3,), cplx=inner.cplx))}\n\n"
                    f"result = ad.grad(h, {k})({call})\n")
    elif t == "hessian":
        program += f"result = ad.hessian(f, {k})({call})\n"
    elif t == "hvp":  # (with respect to any argument: a container's tangent is one too)
        inputs["v"] = random_like(rng, inputs[names[k]])
        program += f"hvp, at = ad.make_hvp(f, {k})({args})\nresult = hvp(v), at\n"
    elif t in ("htp", "hessian_vector_product"):
        inputs["v"] = random_vector(rng, shape_of(inputs[names[k]]))
        op = "hessian_tensor_product" if t == "htp" else t
        program += f"result = ad.{op}(f, {k})({args}, v)\n"
    elif t == "grad_of_grad":
        j = array_args[rng.integers(len(array_args))]
        program += (f"def df({args}):\n    return np.sum(np.sin(ad.grad(f, {k})({args})))\n\n"
                    f"result = ad.grad(df, {j})({call})\n")
    else:
        j = array_args[rng.integers(len(array_args))]
        program += f"result = ad.jacobian(ad.grad(f, {k}), {j})({call})\n"
    return program, inputs


def draw_vector_program(rng, complex_=False):
    """An array-valued function and jacobian, make_vjp, make_jvp,
    tensor_jacobian_product or vector_jacobian_product of it, with random vectors; or
    one whose output is a builtins.tuple, list or dict of arrays, under make_vjp."""
    inputs, leaves, array_args = draw_arguments(rng, int(rng.integers(1, 3)), complex_)
    transforms = ["jacobian", "vjp", "jvp", "tjp", "vjp_container", "jacobian_of_jacobian",
                  "ggnvp"]
    if complex_:  # (autograd reshapes a complex Jacobian as a real one: jacobian and tjp raise)
        transforms = ["vjp", "jvp", "vjp_container"] * 5 + ["jacobian", "tjp"]
    t = transforms[rng.integers(len(transforms))]
    d = Draw(rng, leaves, complex_=complex_, forward=t == "jvp")
    # (make_ggnvp's default g sums over the last axis: np.sum(x, axis=-1) of a 0-d x is
    # test_a_sum_over_axis_0_of_a_0d_value_is_the_value)
    out_shape = SHAPES[1:][rng.integers(3)] if rng.random() < 0.85 or t == "ggnvp" else ()
    body = d.expr(out_shape, int(rng.integers(1, 4)))
    args = signature(inputs)
    names = list(inputs)
    k = array_args[rng.integers(len(array_args))]
    program = f"def g({args}):\n    return {body.src}\n\n"
    out_cplx = complex_ and body.cplx
    if t == "jacobian":
        program += f"result = ad.jacobian(g, {k})({args})\n"
    elif t == "jacobian_of_jacobian":
        program += f"result = ad.jacobian(ad.jacobian(g, {k}), {k})({args})\n"
    elif t == "vjp":  # argnum an int, or a tuple of them (a tuple of cotangents back)
        inputs["v"] = random_vector(rng, out_shape, out_cplx)
        if len(names) > 1 and rng.random() < 0.4:
            k = tuple(range(len(names)))[::int(rng.choice([-1, 1]))]
        program += f"vjp, ans = ad.make_vjp(g, {k})({args})\nresult = vjp(v), ans\n"
    elif t == "jvp":  # (with respect to any argument: a container's tangent is one too)
        k = int(rng.integers(len(names)))
        inputs["v"] = random_like(rng, inputs[names[k]])
        program += f"result = ad.make_jvp(g, {k})({args})(v)\n"
    elif t == "ggnvp":
        inputs["v"] = random_vector(rng, shape_of(inputs[names[k]]))
        program += f"result = ad.make_ggnvp(g, f_argnum={k})({args})(v)\n"
    elif t == "tjp":
        inputs["v"] = random_vector(rng, out_shape, out_cplx)
        op = "tensor_jacobian_product" if rng.random() < 0.5 else "vector_jacobian_product"
        program += f"result = ad.{op}(g, {k})({args}, v)\n"
    else:
        other = d.expr(SHAPES[rng.integers(len(SHAPES))], 2)
        form = ["tuple", "list", "dict"][rng.integers(3)]
        u = random_vector(rng, out_shape, out_cplx)
        w = random_vector(rng, other.shape, complex_ and other.cplx)
        if form == "dict":
            built = f"builtins.dict(out=g({args}), extra={other.src})"
            inputs["v"] = {"out": u, "extra": w}
        else:
            built = f"builtins.{form}([g({args}), {other.src}])"
            inputs["v"] = (u, w) if form == "tuple" else [u, w]
        program += (f"def pair({args}):\n    return {built}\n\n"
                    f"vjp, ans = ad.make_vjp(pair, {k})({args})\nresult = vjp(v), ans\n")
    return program, inputs


def draw_elementwise_program(rng):
    """elementwise_grad of a vectorised function of one array, or of its own
    elementwise_grad."""
    shape = INPUT_SHAPES[rng.integers(len(INPUT_SHAPES))]
    x = onp.asarray(onp.round(rng.uniform(-1.2, 1.2, shape), 3))
    d = Draw(rng, [E("x", shape, 1.5)], elementwise=True)
    body = d.expr(shape, int(rng.integers(1, 4)))
    program = f"def h(x):\n    return {body.src}\n\n"
    if rng.random() < 0.3:
        program += "result = ad.elementwise_grad(ad.elementwise_grad(h))(x)\n"
    else:
        program += "result = ad.elementwise_grad(h)(x)\n"
    return program, {"x": x}


def draw_holomorphic_program(rng):
    """holomorphic_grad of a holomorphic function of a complex number, or of one
    entry of a complex array, and make_jvp of it with a complex tangent."""
    z = complex(round(rng.uniform(-1, 1), 3), round(rng.uniform(-0.7, 0.7), 3))
    shape = INPUT_SHAPES[rng.integers(len(INPUT_SHAPES))]
    inputs = {"z": z if shape == () else onp.asarray(
        onp.round(rng.uniform(-1, 1, shape), 3) + 1j * onp.round(rng.uniform(-0.7, 0.7, shape), 3))}
    d = Draw(rng, [E("z", shape, 1.5, True)], complex_=True, holomorphic=True)
    body = d.expr((), int(rng.integers(1, 4)))
    program = f"def f(z):\n    return {body.src}\n\n"
    if shape == () or rng.random() < 0.5:
        program += "result = ad.holomorphic_grad(f)(z)\n"
    else:
        inputs["v"] = random_vector(rng, shape, True)
        program += "result = ad.make_jvp(f)(z)(v)\n"
    return program, inputs


# ---------------------------------------------------------------------------------------
# The draws.
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", range(N))
def test_a_random_real_function_under_grad_hessian_and_nested_grads(case):
    check(*draw_scalar_program(RNG))


@pytest.mark.parametrize("case", range(N))
def test_a_random_array_function_under_jacobian_vjp_jvp_and_container_outputs(case):
    check(*draw_vector_program(RNG))


@pytest.mark.parametrize("case", range(N // 2))
def test_a_random_function_of_complex_arguments_under_grad(case):
    check(*draw_scalar_program(RNG, complex_=True))


@pytest.mark.parametrize("case", range(N // 2))
def test_a_random_complex_array_function_under_vjp_and_jvp(case):
    check(*draw_vector_program(RNG, complex_=True))


@pytest.mark.parametrize("case", range(N // 2))
def test_a_random_vectorised_function_under_elementwise_grad(case):
    check(*draw_elementwise_program(RNG))


@pytest.mark.parametrize("case", range(N // 2))
def test_a_random_holomorphic_function_under_holomorphic_grad(case):
    check(*draw_holomorphic_program(RNG))


def draw_integer_argument_program(rng):
    """A real program ending ``result = ad.grad(f, k)(...)`` whose argument k is an
    array or a float, and that argument's values made integers (as ints), none of them
    zero; no std, var or norm (equal integers make a spread of zero, their kink)."""
    while True:
        source, inputs = draw_scalar_program(rng)
        last = source.rstrip().rsplit("\n", 1)[1]
        if any(name in source for name in ("std(", "var(", "norm(")):
            continue
        if last.startswith("result = ad.grad(f, ") and last[20].isdigit():
            name = list(inputs)[int(last[20:].split(")", 1)[0])]
            if isinstance(inputs[name], (float, onp.ndarray)):
                x = onp.asarray(inputs[name])
                whole = onp.where(x < 0, -1, 1) * (1 + (onp.abs(x) > 0.6))
                inputs[name] = int(whole) if isinstance(inputs[name], float) else whole.astype(int)
                return source, inputs, name


@pytest.mark.parametrize("case", range(N // 4))
def test_grad_at_integer_arguments_is_autograds_gradient_at_the_same_floats(case):
    """autograd refuses to differentiate at a Python int (``Can't differentiate w.r.t.
    type``), and at an integer array gives a gradient that is sometimes of the array's
    integer dtype (truncated: its rules for indexing write into zeros of that dtype);
    chainrule differentiates at the same numbers as floats, so its gradient is
    autograd's at those floats."""
    source, inputs, name = draw_integer_argument_program(RNG)
    source = HEADER + textwrap.dedent(source)
    at_floats = {**inputs, name: inputs[name] * 1.0}
    theirs = run(source, at_floats, "autograd")
    ours = run(source, inputs, "chainrule.autograd")
    shown = "\n".join(f"{k} = {_literal(v)}" for k, v in inputs.items()) + "\n" + source
    if isinstance(theirs, Exception):
        return
    assert not isinstance(ours, Exception), f"chainrule raises {ours!r}\n\n{shown}"
    found = differences(theirs, ours)
    assert not found, "\n".join(found) + "\n\n" + shown


# ---------------------------------------------------------------------------------------
# One program each for what the draw met at its edges: chainrule.autograd gives what
# autograd gives (the strict xfails: where it does not yet), or refuses or differs on
# purpose, as each test says. The draw leaves these cases out: zero_d_beside_a_scalar
# lets the 0-d differences pass, and the tables above draw no ``.repeat`` method, no
# ``cbrt``, no ``np.sum(x, axis=-1)`` of a 0-d value, no complex cotangent of a real
# output, no make_jvp with a tuple argnum and no float32 argument.
# ---------------------------------------------------------------------------------------

def both(program):
    """program(autograd, autograd.numpy) and program(chainrule.autograd, its numpy)."""
    import autograd
    import autograd.numpy as anp

    import chainrule.autograd as cag
    import chainrule.autograd.numpy as cnp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return program(autograd, anp), program(cag, cnp)


def same(theirs, ours):
    """Same kind of value (a 0-d array is not a NumPy scalar here), shape, dtype, number."""
    assert type(ours) is type(theirs) or (kind(ours) == kind(theirs) == "scalar"), (
        f"autograd gives {type(theirs).__name__}, chainrule {type(ours).__name__}")
    assert not differences(theirs, ours)


def test_grad_at_a_0d_array_is_a_numpy_scalar_as_in_autograd():
    """A gradient at a 0-d array is a NumPy scalar, as NumPy's arithmetic makes it in
    autograd (chainrule's own transforms give a 0-d array, as JAX's do)."""
    same(*both(lambda ad, np: ad.grad(lambda x: x ** 2)(np.array(1.5))))
    same(*both(lambda ad, np: ad.elementwise_grad(np.sin)(np.array(0.5))))
    same(*both(lambda ad, np: ad.make_vjp(np.sin)(np.array(0.5))[0](1.0)))


def test_a_scalar_value_is_a_numpy_scalar_as_in_autograd():
    """A scalar value (np.sum's) returned beside a derivative is NumPy's float64."""
    def f(np):
        return lambda x: np.sum(x ** 2)
    same(*both(lambda ad, np: ad.value_and_grad(f(np))(np.ones(2))[0]))
    same(*both(lambda ad, np: ad.make_vjp(f(np))(np.ones(2))[1]))
    same(*both(lambda ad, np: ad.make_jvp(f(np))(np.ones(2))(np.ones(2))[1]))
    same(*both(lambda ad, np: ad.grad_and_aux(lambda x: (f(np)(x), np.sum(x)))(np.ones(2))[1]))


def test_jacobian_hessian_and_tjp_at_a_float_are_0d_arrays_as_in_autograd():
    """A Jacobian at a float is a 0-d array: autograd reshapes it to ``out.shape +
    x.shape``, which is ()."""
    same(*both(lambda ad, np: ad.jacobian(lambda x: x ** 3)(1.0)))
    same(*both(lambda ad, np: ad.hessian(lambda x: x ** 3)(1.0)))
    same(*both(lambda ad, np: ad.tensor_jacobian_product(lambda x: x ** 3)(1.0, 2.0)))


@pytest.mark.xfail(strict=True, reason="the gradient with respect to a float argument the "
                   "function does not use: autograd gives its space's zeros, a 0-d ndarray; "
                   "chainrule the float 0.0")
def test_grad_of_an_unused_float_argument_is_a_0d_zero_array_as_in_autograd():
    # grad(lambda x, y: y ** 3)(1.0, 2.0): autograd array(0.), chainrule 0.0
    same(*both(lambda ad, np: ad.grad(lambda x, y: y ** 3)(1.0, 2.0)))


def test_the_repeat_method_of_a_traced_array_is_numpys():
    """x.repeat(n, axis=...) is NumPy's (PyTorch's repeat takes no axis); without an
    axis chainrule asks which is meant."""
    same(*both(lambda ad, np: ad.grad(lambda x: np.sum(x.repeat(2, axis=0) ** 2))(
        np.array([[1.0, 2.0]]))))


def test_an_argument_not_differentiated_stays_a_plain_array():
    """make_vjp, make_hvp and elementwise_grad with argnum=1 trace argument 1 alone: a
    NumPy function without a derivative (cbrt) may read argument 0."""
    def f(np):
        return lambda x, y: np.cbrt(x) * y ** 2
    same(*both(lambda ad, np: ad.make_vjp(f(np), 1)(2.0, 3.0)[0](1.0)))
    same(*both(lambda ad, np: ad.make_hvp(f(np), 1)(2.0, 3.0)[0](1.0)))
    same(*both(lambda ad, np: ad.elementwise_grad(f(np), 1)(2.0, 3.0)))


def test_a_sum_over_axis_0_of_a_0d_value_is_the_value():
    """np.sum of a 0-d value takes axis 0 or -1 (NumPy's rule): nothing to reduce, and
    make_ggnvp's default g sums a scalar output so."""
    same(*both(lambda ad, np: ad.grad(lambda x: np.sum(x ** 2, axis=-1))(1.5)))
    same(*both(lambda ad, np: ad.make_ggnvp(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))(
        np.array([1.0, 0.0]))))


def test_a_complex_cotangent_for_a_real_output_is_autograds_or_refused_by_name():
    """A complex cotangent for a real output: autograd gives a number; chainrule, as
    JAX, refuses it in one line that names the cotangent."""
    def program(ad, np):
        try:
            return ad.make_vjp(np.abs)(1 + 1j)[0](1 + 1j)
        except Exception as error:  # noqa: BLE001
            return error
    theirs, ours = both(program)
    if isinstance(ours, Exception):
        assert "cotangent" in str(ours), f"chainrule raises {type(ours).__name__}: {ours}"
    else:
        same(theirs, ours)


def test_the_gradient_at_a_float32_argument_keeps_its_dtype():
    """A gradient has its input's dtype (docs/conventions.md, as JAX's and PyTorch's):
    at a float32 argument, float32, where autograd gives what its rules compute (float64
    once the program meets a float64 array). The numbers agree to float32's digits."""
    theirs, ours = both(lambda ad, np: ad.grad(lambda x: np.sum(np.sin(x) * np.ones(2)))(
        np.ones(2, np.float32)))
    assert theirs.dtype == onp.float64 and ours.dtype == onp.float32
    onp.testing.assert_allclose(ours, theirs, rtol=1e-7)


def test_make_jvp_with_a_tuple_argnum_takes_a_tuple_of_tangents():
    """make_jvp with a tuple argnum takes a tuple of tangents, one per argument."""
    same(*both(lambda ad, np: ad.make_jvp(lambda x, y: x * y, (0, 1))(np.ones(2), 2 * np.ones(2))(
        (np.array([1.0, 3.0]), np.ones(2)))))


def test_a_plain_arrays_dot_method_given_a_traced_value_is_refused_by_name():
    """``X.dot(w)`` with X a plain ndarray and w traced: NumPy turns w into an object
    array, which autograd survives only where every later step is object arithmetic
    (``np.tanh`` of the result raises there). chainrule refuses it at once, saying why;
    ``np.dot(X, w)`` is the way to write it in both."""
    import autograd
    import autograd.numpy as anp

    import chainrule.autograd as cag
    import chainrule.autograd.numpy as cnp
    X, w = onp.array([[1.0, 2.0], [3.0, 4.0]]), onp.array([0.1, -0.2])
    with pytest.raises(TypeError, match="np.asarray"):
        cag.grad(lambda w: cnp.sum(X.dot(w)))(w)
    same(autograd.grad(lambda w: anp.sum(anp.tanh(anp.dot(X, w))))(w),
         cag.grad(lambda w: cnp.sum(cnp.tanh(cnp.dot(X, w))))(w))
