"""Single precision through the function transforms: every case of the derivative table
in float32, against JAX in float32 and against chainrule's own float64.

``tests/test_derivatives.py`` checks each operation's float32 value and gradient on
Tensors (``backward``); ``tests/test_table_under_transforms.py`` runs the table's cases
through the transforms in float64. What neither sees is a transform that computes in the
wrong precision: a seed, an identity, a tangent or a batch dimension made as float64
(NumPy's default) turns a float32 program's gradient, Jacobian, Hessian, vmap output or
replayed program into float64, or a float32 value meets a float64 constant and is
rounded back. So each case of the table, its inputs cast to float32, runs through
``grad``, ``jacrev``, ``jacfwd``, ``hessian`` (of the scalar loss
``sum(w * y + y * y / 2)`` over its outputs, whose Hessian is not zero even for a linear
operation), ``vmap`` over a stack of two examples, ``vmap(grad)``, and ``jit(grad)``
traced at one example and replayed at the other, and each result is checked for:

1. its dtype: what JAX gives for the same program (``jax_enable_x64`` on, so float32
   stays float32 and float64 stays float64; a Python float is weak in both, as in
   NumPy 2's promotion rules, NEP 50); without JAX, JAX's rules from the case's eager
   float32 outputs: a gradient (grad, jacrev, hessian) has its input's dtype, jacfwd's
   tangents the loss's, vmap's outputs the eager outputs';
2. its numbers: within float32 rounding (relative 2e-4 of the result's scale; 1e-3 for
   second derivatives) of chainrule's float64 result at the same float32 points, which
   tests/test_derivatives.py checks against PyTorch to 1e-10; and, where JAX is the
   oracle, of JAX's float32 result. A float64 reference tells a wrong formula from
   rounding, which two float32 results alone cannot;
3. that it runs at all: an error in float32 where float64 runs is a failure.

The JAX program of a case is the case's own chainrule expression with its ``cr.*``
functions swapped for ``jax.numpy`` / ``jax.scipy`` / ``jax.nn`` ones (``JNP``,
``JNP_LINALG``, ``JAX_F``); a case whose expression does not run in JAX (a Tensor
method JAX arrays lack, a fused layer) or computes something else there (``NOT_JAX``)
has no JAX oracle. JAX compiles each case anew (one ``jax.jit`` of its transforms,
about 0.4 s), so it is the oracle of every tenth case (``JAX_EVERY``; the environment
variable ``CHAINRULE_F32_JAX_EVERY=1`` makes it every case's, about ten minutes);
chainrule's float64 is every case's.

The defects these checks found (a float64 derivative of a float32 input) are each held
at their smallest at the end of the file, with JAX's answer: a NumPy float32 scalar, a
0-d float32 input in forward mode, forward-mode rules whose factor is a float64 number
(a maximum's 1/2 at a tie, log(2) for 2 ** x), and float64 weights, which promote as in
NumPy. The hand-written tests between mix precisions: a float32 array times a float64
0-d array, a NumPy float64 scalar or a Python float, a float32 function closing over a
float64 constant array, and ``backward`` into float32 Tensors (against PyTorch's dtypes).

``make test-fast`` runs every twentieth case of the table, a few with JAX, and the
hand-written tests (about 20 s); the whole file takes about a minute on one core.
"""

import functools
import os
import types

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax.scipy.special as jsp
import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import seeded

import test_derivatives as table

jax.config.update("jax_enable_x64", True)

REL = 2e-4       # a float32 result against the float64 one: float32 rounding, amplified
REL2 = 1e-3      # second derivatives (two passes of rounding)
# JAX compiles each case's program anew (about 0.4 s a case on one core, where
# chainrule's seven transforms and the float64 reference take 20 ms)
JAX_EVERY = int(os.environ.get("CHAINRULE_F32_JAX_EVERY", "10"))
FAST_EVERY = 20


# ---------------------------------------------------------------------------------------
# The JAX counterpart of a case: its chainrule expression, run with JAX's functions
# ---------------------------------------------------------------------------------------

def _gelu(x, approximate="none"):
    return jax.nn.gelu(x, approximate=approximate == "tanh")


def _clip(x, a_min=None, a_max=None):
    return jnp.clip(x, a_min, a_max)


def _norm(x, axis=None, keepdims=False):
    """cr.norm: the 2-norm over the given axes (torch's vector_norm), not NumPy's."""
    return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))


def _flatten(x, start=0, end=-1):
    """cr.flatten: PyTorch's, the axes start..end merged."""
    if x.ndim == 0:
        return x.reshape(1)
    start, end = start % x.ndim, end % x.ndim
    return x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:])


def _topk(x, k, axis=-1, largest=True):
    moved = jnp.moveaxis(x, axis, -1)
    values = jax.lax.top_k(moved if largest else -moved, k)[0]
    return types.SimpleNamespace(values=jnp.moveaxis(values if largest else -values, -1, axis))


def _expand(x, *sizes):
    sizes = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], tuple) else sizes
    shape = tuple(x.shape[i - len(sizes) + x.ndim] if s == -1 else s
                  for i, s in enumerate(sizes))
    return jnp.broadcast_to(x, shape)


def _vector_norm(x, axis=None, keepdims=False, ord=2):
    return jnp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


def _solve_triangular(a, b, lower=False):
    if b.ndim == a.ndim - 1:  # a vector, as NumPy's solve takes it
        return jsl.solve_triangular(a, b[..., None], lower=lower)[..., 0]
    return jsl.solve_triangular(a, b, lower=lower)


def _cross(a, b, axis=-1):
    if a.shape[axis] == 2:  # the z component of 2-vectors, as NumPy 1 gave it
        a, b = jnp.moveaxis(a, axis, -1), jnp.moveaxis(b, axis, -1)
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return jnp.cross(a, b, axis=axis)


JNP_LINALG = types.SimpleNamespace(**{n: getattr(jnp.linalg, n) for n in dir(jnp.linalg)
                                      if not n.startswith("_")})
JNP_LINALG.vector_norm = _vector_norm

_OVERRIDES = {
    "sigmoid": jax.nn.sigmoid, "relu": jax.nn.relu, "softplus": jax.nn.softplus,
    "silu": jax.nn.silu, "elu": jax.nn.elu, "leaky_relu": jax.nn.leaky_relu,
    "gelu": _gelu, "softmax": jax.nn.softmax, "log_softmax": jax.nn.log_softmax,
    "erf": jsp.erf, "logit": jsp.logit, "logsumexp": jsp.logsumexp,
    "stop_gradient": jax.lax.stop_gradient, "clip": _clip, "norm": _norm,
    "around": jnp.round, "flatten": _flatten, "topk": _topk, "expand": _expand,
    "permute": lambda x, *axes: jnp.transpose(x, axes), "unsqueeze": jnp.expand_dims,
    "solve_triangular": _solve_triangular, "cross": _cross, "tensor": jnp.stack,
    "inv": jnp.linalg.inv, "det": jnp.linalg.det, "slogdet": jnp.linalg.slogdet,
    "cholesky": jnp.linalg.cholesky, "eigh": jnp.linalg.eigh, "eigvalsh": jnp.linalg.eigvalsh,
    "matrix_power": jnp.linalg.matrix_power, "solve": jnp.linalg.solve,
    "svd": jnp.linalg.svd, "svdvals": jnp.linalg.svdvals, "qr": jnp.linalg.qr,
    "pinv": jnp.linalg.pinv, "lstsq": jnp.linalg.lstsq, "linalg": JNP_LINALG,
}


class _Jnp:
    """``cr`` as JAX: chainrule's names with their jax.numpy (or jax.nn, jax.scipy)
    meaning; a name JAX lacks raises AttributeError, so the case has no JAX program."""

    def __getattr__(self, name):
        if name in _OVERRIDES:
            return _OVERRIDES[name]
        return getattr(jnp, name)


JNP = _Jnp()


def _linear(x, w, b, activation=None):
    y = x @ w.T + b
    return jax.nn.relu(y) if activation == "relu" else y


def _cross_entropy(z, labels):
    labels = np.asarray(labels)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(z, -1), labels[:, None], 1))


JAX_F = types.SimpleNamespace(
    linear=_linear, cross_entropy=_cross_entropy,
    mse_loss=lambda a, b: jnp.mean((a - b) ** 2),
    binary_cross_entropy_with_logits=lambda z, t: jnp.mean(
        jax.nn.softplus(z) - z * t),
    hinge_loss=lambda s, y: jnp.mean(jax.nn.relu(1 - y * s)))


def _names():
    """id of each public chainrule function -> where JAX's is: cr's own names first,
    then cr.linalg's (linalg.norm is NumPy's norm, cr.norm torch's), then
    nn.functional's."""
    names = {}
    for where, module in (("cr", cr), ("linalg", cr.linalg), ("F", cr.nn.functional)):
        for name in dir(module):
            if not name.startswith("_"):
                names.setdefault(id(getattr(module, name)), []).append((where, name))
    return names


_NAMES = _names()
_JAX_PLACES = {"cr": JNP, "linalg": JNP_LINALG, "F": JAX_F}


def _as_jax(value):
    """A chainrule function (or a value) in a case's closure or defaults, as JAX's."""
    if not callable(value) or not getattr(value, "__module__", "").startswith("chainrule"):
        return value
    for where, name in _NAMES.get(id(value), []):  # cr.fix is cr.trunc: JAX has one
        if hasattr(_JAX_PLACES[where], name):
            return getattr(_JAX_PLACES[where], name)
    raise AttributeError(f"JAX has no {value!r}")


# cases whose JAX counterpart computes something else
NOT_JAX = {
    "partition": "the order of the entries on either side of kth is the library's own",
    "angle()": "jnp.angle of a 0-d float32 is float64 (of a 1-d one, float32)",
}


def jax_program(case):
    """The case's expression with JAX's functions, or None where it has none."""
    if case.id.startswith(tuple(NOT_JAX)):
        return None
    fn = case.fn
    if getattr(fn, "__module__", "").startswith("chainrule"):
        try:
            return _as_jax(fn)
        except AttributeError:
            return None
    if not isinstance(fn, types.FunctionType):  # operator.add, abs: JAX's arrays take them
        return fn if getattr(fn, "__module__", "") in ("_operator", "builtins") else None
    if fn.__closure__:
        return None
    try:
        defaults = tuple(_as_jax(d) for d in fn.__defaults__ or ())
    except AttributeError:
        return None
    scope = dict(fn.__globals__, cr=JNP, F=JAX_F)
    program = types.FunctionType(fn.__code__, scope, fn.__name__, defaults)
    if fn.__kwdefaults__:
        try:
            program.__kwdefaults__ = {k: _as_jax(v) for k, v in fn.__kwdefaults__.items()}
        except AttributeError:
            return None
    return program


# ---------------------------------------------------------------------------------------
# One case's programs in either library
# ---------------------------------------------------------------------------------------

def leaves(tree):
    """The arrays of a result (tuples, lists and namedtuples of them), in order."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in leaves(t)]
    return [tree]


def differentiable(outs):
    return [o for o in table.as_list(outs) if np.dtype(o.dtype).kind == "f"]


def loss_of(fn, ws, namespace):
    """sum(w * y + y * y / 2) over the float outputs: a weighted sum (the VJP), and a
    square, so that a linear operation's Hessian is not zero. The weights have each
    output's dtype; the 0.5 is a Python float, which promotes nothing."""
    def loss(*xs):
        total = 0.0
        for o, w in zip(differentiable(fn(*xs)), ws):
            total = total + namespace.sum(o * w + 0.5 * o * o)
        return total
    return loss


def weights(case, outs):
    rng = seeded("float32 weights", case.id)
    return [rng.standard_normal(np.shape(o)).astype(o.dtype) for o in differentiable(outs)]


def examples(case):
    """Two float32 examples: the table's inputs and the same a little scaled (the scale
    keeps each domain: positive, symmetric positive definite, inside (-1, 1))."""
    first = case.arrays(np.float32)
    return [first, [np.asarray(a * 1.04, dtype=np.float32) for a in first]]


def eager(fn, xs):
    with cr.no_grad():
        return [np.asarray(getattr(o, "data", o)) for o in
                table.as_list(fn(*[cr.tensor(a) for a in xs]))]


def takes_arrays(case, xs):
    """Whether the case runs on NumPy arrays (not only on Tensors, whose methods some
    cases call: x.at[...], x.maximum(y))."""
    try:
        case.fn(*xs)
    except (AttributeError, TypeError):
        return False
    return True


def cr_result(case, sets, ws, name):
    """chainrule's result of one transform of the case's loss (or, for vmap, of the
    case itself), at float32 or float64 inputs alike: on NumPy arrays, or on Tensors
    where the case calls a Tensor's methods (x.at[...], or NumPy's own ndarray.dot,
    which cannot take a transform's value)."""
    try:
        return _transform(case, sets, ws, name)
    except (AttributeError, TypeError):
        return _transform(case, [[cr.tensor(a) for a in xs] for xs in sets], ws, name)


def _transform(case, sets, ws, name):
    fn, n = case.fn, len(sets[0])
    argnums = tuple(range(n))
    loss = loss_of(fn, ws, cr)
    batched = [cr.stack([xs[i] for xs in sets]) if isinstance(sets[0][i], cr.Tensor)
               else np.stack([xs[i] for xs in sets]) for i in range(n)]
    if name in ("grad", "jacrev", "jacfwd", "hessian"):
        return getattr(cr, name)(loss, argnums)(*sets[0])
    if name == "vmap":
        return cr.vmap(fn)(*batched)
    if name == "vmap(grad)":
        return cr.vmap(cr.grad(loss, argnums))(*batched)
    program = cr.jit(cr.grad(loss, argnums))  # traced at one example, replayed at the other
    return [program(*xs) for xs in sets]


@functools.lru_cache(maxsize=None)
def case_data(case):
    """The case's two float32 examples, its weights, and chainrule's float64 results at
    the same points, eagerly: what each transform must give, to float32 rounding."""
    sets = examples(case)
    ws = weights(case, eager(case.fn, sets[0]))
    sets64 = [[a.astype(np.float64) for a in xs] for xs in sets]
    ws64 = [w.astype(np.float64) for w in ws]
    per_example = [eager(case.fn, xs) for xs in sets64]
    if not takes_arrays(case, sets64[0]):
        sets64 = [[cr.tensor(a) for a in xs] for xs in sets64]
    argnums = tuple(range(len(sets64[0])))
    loss = loss_of(case.fn, ws64, cr)
    grads = [cr.grad(loss, argnums)(*xs) for xs in sets64]
    expected = {
        "grad": grads[0], "jacrev": grads[0], "jacfwd": grads[0],
        "hessian": cr.hessian(loss, argnums)(*sets64[0]),
        "vmap": [np.stack(o) for o in zip(*per_example)],
        "vmap(grad)": [np.stack([np.asarray(getattr(a, "data", a)) for a in g])
                       for g in zip(*grads)],
        "jit(grad) replayed": grads,
    }
    return sets, ws, expected


@functools.lru_cache(maxsize=None)
def jax_results(case):
    """JAX's float32 results of every transform of the case, from one jax.jit; None
    where the case has no JAX program or JAX cannot run it."""
    program = jax_program(case)
    if program is None:
        return None
    sets = examples(case)
    try:
        ws = weights(case, jax.eval_shape(program, *sets[0]))
    except Exception:  # a name JAX lacks, a Tensor method, an index JAX refuses
        return None
    argnums = tuple(range(len(sets[0])))
    loss = loss_of(program, ws, jnp)

    def everything(first, second):
        batched = [jnp.stack([a, b]) for a, b in zip(first, second)]
        grad = jax.grad(loss, argnums)
        return {"value": loss(*first), "grad": grad(*first),
                "vmap": jax.vmap(program)(*batched),
                "vmap(grad)": jax.vmap(grad)(*batched),
                "jit(grad) replayed": [grad(*first), grad(*second)]}

    try:
        got = jax.jit(everything)(sets[0], sets[1])
    except Exception:
        return None
    return jax.tree_util.tree_map(np.asarray, got)


TRANSFORMS = ["grad", "jacrev", "jacfwd", "hessian", "vmap", "vmap(grad)",
              "jit(grad) replayed"]


def compare(got, expected, rel, what):
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected), f"{what}: {len(got)} results, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(getattr(g, "data", g))
        table.assert_close(g, np.asarray(e), rel, f"{what}, result {i}")


def rel_of(name):
    return REL2 if name == "hessian" else REL


# ---------------------------------------------------------------------------------------
# The table, in float32
# ---------------------------------------------------------------------------------------

def _takes_float32(case):
    """A case whose inputs are all floats (every case of the table today)."""
    return all(a.dtype == np.float32 for a in case.arrays(np.float32))


CASES = [c for c in table.CASES if _takes_float32(c)]
WITH_JAX = {c.id for k, c in enumerate(CASES) if k % JAX_EVERY == 0}
FAST = {c.id for k, c in enumerate(CASES)  # some with JAX, most without
        if k % FAST_EVERY == 5 or k % (8 * JAX_EVERY) == 0}


def marks_of(case, transform):
    return [] if case.id in FAST else [pytest.mark.slow]


PARAMS = [pytest.param(c, t, id=f"{c.id}-{t}", marks=marks_of(c, t))
          for c in CASES for t in TRANSFORMS]


def jax_dtypes(oracle, transform):
    """The dtypes JAX gives for a transform: read from its results, or, for the
    derivatives of the scalar loss it does not compile, by JAX's rules: jacrev's are
    the inputs' (as grad's), jacfwd's the loss's (a pushed-forward tangent has the
    output's dtype), and a Hessian's block (i, j) has the dtype of input i (jacfwd of
    the gradient)."""
    grads = [np.asarray(g).dtype for g in leaves(oracle["grad"])]
    if transform == "jacrev":
        return grads
    if transform == "jacfwd":
        return [np.asarray(oracle["value"]).dtype] * len(grads)
    if transform == "hessian":
        return [d for d in grads for _ in grads]
    return [np.asarray(r).dtype for r in leaves(oracle[transform])]


@pytest.mark.parametrize(("case", "transform"), PARAMS)
def test_a_float32_case_through_a_transform(case, transform):
    sets, ws, expected = case_data(case)
    try:
        got = cr_result(case, sets, ws, transform)
    except Exception as error:  # a failure, unless float64 fails the same way
        sets64 = [[a.astype(np.float64) for a in xs] for xs in sets]
        try:
            cr_result(case, sets64, [w.astype(np.float64) for w in ws], transform)
        except type(error):
            return
        raise AssertionError(f"float32 raises where float64 runs: {error!r}") from error
    oracle = jax_results(case) if case.id in WITH_JAX else None
    results = [np.asarray(getattr(r, "data", r)) for r in leaves(got)]
    if oracle is not None:
        dtypes = jax_dtypes(oracle, transform)
    else:  # JAX's rules, from the case's eager float32 outputs (NumPy's dtypes)
        outs = eager(case.fn, sets[0])
        loss = np.result_type(np.float32, *[o.dtype for o in differentiable(outs)])
        dtypes = {"vmap": [o.dtype for o in outs],
                  "jacfwd": [loss] * len(results)}.get(transform,
                                                       [np.dtype(np.float32)] * len(results))
    actual = [r.dtype for r in results]
    assert actual == dtypes, f"dtypes {actual}, expected (JAX's) {dtypes}"
    compare(results, expected[transform], rel_of(transform), "against float64")
    if oracle is not None and transform in oracle:
        compare(results, oracle[transform], REL, "against JAX")
    elif oracle is not None and transform in ("jacrev", "jacfwd"):
        compare(results, oracle["grad"], REL, "against JAX's gradient")


# ---------------------------------------------------------------------------------------
# Mixed precision, by hand: what a float64 constant does to a float32 program
# ---------------------------------------------------------------------------------------

C64 = np.array([0.5, -1.25, 2.0])  # float64: NumPy's default, as a user's constant is


def _scalar_programs():
    """name -> f(namespace, x): a float32 x meets each kind of float64 number (NEP 50
    and JAX agree: a Python float is weak, a NumPy float64 scalar or 0-d array and a
    float64 array are not, so they make the result float64)."""
    return {
        "x * 0-d float64 array": lambda ns, x: ns.sin(x) * np.array(2.0),
        "x * np.float64 scalar": lambda ns, x: ns.sin(x) * np.float64(2.0),
        "x * Python float": lambda ns, x: ns.sin(x) * 2.0,
        "x * float64 constant array": lambda ns, x: ns.sin(x) * C64,
        "x * float32 0-d array": lambda ns, x: ns.sin(x) * np.array(2.0, np.float32),
        "x.astype(float64) * x": lambda ns, x: ns.exp(x).astype(np.float64) * x,
    }


MIXED = _scalar_programs()
MIXED_TRANSFORMS = ["value", "grad", "jacrev", "jacfwd", "hessian", "vmap", "jit",
                    "jit(grad) replayed"]


def _mixed(ns, name, transform):
    """The transform of one mixed program, in either library (``ns`` is cr or jnp;
    ``lib`` the library's transforms)."""
    lib = cr if ns is cr else jax
    f = functools.partial(MIXED[name], ns)

    def loss(x):
        return ns.sum(f(x) * f(x))

    return {"value": f, "grad": lib.grad(loss), "jacrev": lib.jacrev(f),
            "jacfwd": lib.jacfwd(f), "hessian": lib.hessian(loss), "vmap": lib.vmap(f),
            "jit": lib.jit(f), "jit(grad) replayed": lib.jit(lib.grad(loss))}[transform]


@pytest.mark.parametrize("transform", MIXED_TRANSFORMS)
@pytest.mark.parametrize("name", list(MIXED))
def test_a_float32_program_meeting_a_float64_number(name, transform):
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    if transform == "vmap":
        x = np.stack([x, 1.5 * x])
    got = _mixed(cr, name, transform)(x)
    expected = _mixed(jnp, name, transform)(x)
    if transform == "jit(grad) replayed":  # traced at x, replayed at new numbers
        x2 = np.asarray(x * 1.5, dtype=np.float32)
        program = _mixed(cr, name, transform)
        got = [program(x), program(x2)]
        expected = [expected, _mixed(jnp, name, transform)(x2)]
    got, expected = leaves(got), [np.asarray(e) for e in leaves(expected)]
    assert [np.asarray(g).dtype for g in got] == [e.dtype for e in expected]
    compare(got, expected, REL, name)


BACKWARD = {  # name -> (chainrule's constant, torch's): a float32 leaf times it
    "0-d float64 array": (np.array(2.0), torch.tensor(2.0, dtype=torch.float64)),
    "np.float64 scalar": (np.float64(2.0), np.float64(2.0)),
    "Python float": (2.0, 2.0),
    "float64 array": (C64, torch.from_numpy(C64)),
}


@pytest.mark.parametrize("name", list(BACKWARD))
def test_backward_into_a_float32_tensor(name):
    """A leaf's gradient has the leaf's dtype, as in PyTorch, whatever the loss was
    computed in; the loss's own dtype is NumPy's (where PyTorch's rule differs: a 0-d
    tensor does not promote a tensor of more dimensions, a 0-d array does in NumPy 2)."""
    c, tc = BACKWARD[name]
    a = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    x = cr.tensor(a, dtype=np.float32, requires_grad=True)
    y = cr.sum(cr.sin(x * c) * cr.exp(x))
    y.backward()
    t = torch.tensor(a, requires_grad=True)
    yt = torch.sum(torch.sin(t * tc) * torch.exp(t))
    yt.backward()
    assert y.dtype == (np.sin(a * c) * np.exp(a)).dtype
    assert x.grad.dtype == np.float32 == np.dtype(str(t.grad.dtype).removeprefix("torch."))
    table.assert_close(x.grad, t.grad.numpy(), REL, "gradient")


def test_second_order_backward_into_a_float32_tensor():
    """create_graph=True: the gradient is a float32 Tensor, and so is the gradient of a
    function of it, through a float64 constant."""
    a = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    x = cr.tensor(a, requires_grad=True)
    cr.sum(cr.sin(x) * C64).backward(create_graph=True)
    g = x.grad
    x.zero_grad()
    cr.sum(g * g).backward()
    t = torch.tensor(a, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.sum(torch.sin(t) * torch.from_numpy(C64)), t,
                                create_graph=True)
    (hvt,) = torch.autograd.grad(torch.sum(gt * gt), t)
    assert g.dtype == np.float32 and x.grad.dtype == np.float32 and hvt.dtype == torch.float32
    table.assert_close(x.grad, hvt.numpy(), REL, "gradient of the gradient")


# ---------------------------------------------------------------------------------------
# Defects, each at its smallest: float32 in, float64 out, where JAX keeps float32
# ---------------------------------------------------------------------------------------

SCALAR_TRANSFORMS = {
    "grad": (lambda f: cr.grad(f), lambda f: jax.grad(f)),
    "jacrev": (lambda f: cr.jacrev(f), lambda f: jax.jacrev(f)),
    "jacfwd": (lambda f: cr.jacfwd(f), lambda f: jax.jacfwd(f)),
    "hessian": (lambda f: cr.hessian(f), lambda f: jax.hessian(f)),
    "jit(grad)": (lambda f: cr.jit(cr.grad(f)), lambda f: jax.jit(jax.grad(f))),
}


@pytest.mark.parametrize("transform", list(SCALAR_TRANSFORMS))
def test_a_derivative_at_a_numpy_float32_scalar_is_float32(transform):
    ours, theirs = SCALAR_TRANSFORMS[transform]
    x = np.float32(0.5)
    got, expected = ours(cr.exp)(x), theirs(jnp.exp)(x)
    assert np.asarray(expected).dtype == np.float32
    table.assert_close(np.asarray(got), np.asarray(expected), REL, transform)
    assert np.asarray(got).dtype == np.float32, f"{got!r}"


@pytest.mark.parametrize("transform", ["jacfwd", "hessian"])
def test_forward_mode_at_a_0d_float32_array_is_float32(transform):
    ours, theirs = SCALAR_TRANSFORMS[transform]
    x = np.array(0.5, dtype=np.float32)
    f = (lambda ns: lambda v: 2.0 * v) if transform == "jacfwd" else (lambda ns: ns.sinc)
    got, expected = ours(f(cr))(x), theirs(f(jnp))(x)
    assert np.asarray(expected).dtype == np.float32
    table.assert_close(np.asarray(got), np.asarray(expected), REL, transform)
    assert np.asarray(got).dtype == np.float32, f"{got!r}"


JVP_CASES = {  # name -> (chainrule's function, JAX's): rules whose factor is a float64 number
    "max(x, axis=0)": (lambda a, b: cr.max(a, axis=0), lambda a, b: jnp.max(a, axis=0)),
    "min(x)": (lambda a, b: cr.min(a), lambda a, b: jnp.min(a)),
    "maximum(x, y)": (cr.maximum, jnp.maximum),
    "minimum(x, y)": (cr.minimum, jnp.minimum),
    "fmax(x, y)": (cr.fmax, jnp.fmax),
    "fmin(x, y)": (cr.fmin, jnp.fmin),
    "x.at[0].max(y[0])": (lambda a, b: a.at[0].max(b[0]), lambda a, b: a.at[0].max(b[0])),
    "x.at[0].min(y[0])": (lambda a, b: a.at[0].min(b[0]), lambda a, b: a.at[0].min(b[0])),
    "linalg.norm(x, 2)": (lambda a, b: cr.linalg.norm(a, 2),
                          lambda a, b: jnp.linalg.norm(a, 2)),
    "leaky_relu(x, 0.2)": (lambda a, b: cr.leaky_relu(a, 0.2),
                           lambda a, b: jax.nn.leaky_relu(a, 0.2)),
    "2.0 ** x": (lambda a, b: 2.0 ** a, lambda a, b: 2.0 ** a),
    "cross_entropy(x, labels)": (
        lambda a, b: cr.nn.functional.cross_entropy(a, np.array([2, 0])),
        lambda a, b: _cross_entropy(a, np.array([2, 0]))),
}


@pytest.mark.parametrize("name", list(JVP_CASES))
def test_a_jvp_rule_keeps_float32(name):
    ours, theirs = JVP_CASES[name]
    a = np.array([[0.5, -1.2, 0.3], [0.9, 0.1, -0.4]], dtype=np.float32)
    b = np.array([[0.2, -0.3, 0.8], [-0.1, 0.6, 0.7]], dtype=np.float32)
    tangents = (np.arange(6, dtype=np.float32).reshape(2, 3) / 4, np.full_like(b, 0.5))
    _, got = cr.jvp(ours, (a, b), tangents)
    _, expected = jax.jvp(theirs, (a, b), tangents)
    assert expected.dtype == np.float32
    got = np.asarray(getattr(got, "data", got))
    table.assert_close(got, np.asarray(expected), REL, name)
    assert got.dtype == np.float32, got.dtype


WEIGHTED = {  # a float32 x with float64 weights: NumPy and JAX give float64
    "average(x, weights=w)": (lambda ns, x: ns.average(x, axis=1, weights=C64[:2]),),
    "cov(x, aweights=w)": (lambda ns, x: ns.cov(x, aweights=C64[:2] ** 2),),
}


@pytest.mark.parametrize("name", list(WEIGHTED))
def test_float64_weights_promote_as_in_numpy(name):
    (f,) = WEIGHTED[name]
    x = np.array([[0.3, -0.7], [1.1, 0.4], [0.9, -0.2]], dtype=np.float32)
    expected = f(jnp, x)
    assert f(np, x).dtype == expected.dtype == np.float64
    got = np.asarray(f(cr, x))
    table.assert_close(got, np.asarray(expected), REL, name)
    assert got.dtype == expected.dtype, got.dtype
