"""The engine on arrays of other libraries (chainrule.backends, docs/backends.md).

The same functions, given torch tensors, array-api-strict arrays or Dask arrays, give
NumPy's numbers in the inputs' library and dtype: the transforms first (a logistic
regression and an MLP), then every case of the derivative table (tests/
test_derivatives.py) to second order, then the shims for what the
Array API standard lacks, on each library. Dask's gradients are graphs that compute only when asked,
also on a cluster of worker processes. GPU tests skip on a machine without one.
"""

import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch", reason="the torch backend needs torch")
xps = pytest.importorskip("array_api_strict", reason="needs array-api-strict")
pytest.importorskip("array_api_compat", reason="the backends need array-api-compat")
da = pytest.importorskip("dask.array", reason="the Dask backend needs dask[array]")
import dask  # noqa: E402
import dask.callbacks  # noqa: E402
from seeds_and_tolerances import per_test_generator  # noqa: E402

# Each library: how to make its array from NumPy's, and back (for the comparison only).
BACKENDS = {
    "torch": (torch.from_numpy, lambda a: a.numpy()),
    "array_api_strict": (xps.asarray, np.asarray),
    "dask": (lambda a: da.from_array(a, chunks=max(1, a.shape[0] // 2) if a.ndim else ()),
             lambda a: np.asarray(dask.compute(a)[0])),
}
EAGER = ["torch", "array_api_strict"]


def convert(name, tree):
    return cr.tree_map(lambda a: BACKENDS[name][0](np.asarray(a)), tree)


def back(name, tree):
    return cr.tree_map(lambda a: BACKENDS[name][1](a), tree)


def assert_same_kind(result, name, dtype):
    """A result is an array of the input's library and dtype."""
    for leaf in cr.tree_leaves(result):
        if name in ("torch", "torch_cuda"):
            device = "cuda" if name == "torch_cuda" else "cpu"
            assert isinstance(leaf, torch.Tensor) and leaf.device.type == device
            assert str(leaf.dtype) == f"torch.{np.dtype(dtype).name}"
        elif name == "dask":
            assert isinstance(leaf, da.Array) and leaf.dtype == dtype
        else:
            assert type(leaf).__module__.startswith("array_api_strict")
            assert leaf.dtype == getattr(xps, np.dtype(dtype).name)


# ---------------------------------------------------------------------------------------
# The transforms on two losses
# ---------------------------------------------------------------------------------------

RNG = per_test_generator(0)
X = RNG.standard_normal((40, 3))
Y = (RNG.random(40) > 0.5).astype(np.float64)
W = RNG.standard_normal(3)
PARAMS = {"W1": RNG.standard_normal((3, 5)), "b1": RNG.standard_normal(5),
          "W2": RNG.standard_normal((5, 4)), "b2": RNG.standard_normal(4)}
ONE_HOT = np.eye(4)[RNG.integers(0, 4, 40)]


def logistic_loss(w, X, y):
    """A regularised logistic regression: mean log(1 + e^z) - y z, z = X w."""
    z = X @ w
    return cr.mean(cr.logaddexp(0.0, z) - y * z) + 0.1 * cr.sum(w ** 2)


def mlp_loss(p, X, Y):
    """A one-hidden-layer MLP's cross-entropy."""
    h = cr.tanh(X @ p["W1"] + p["b1"])
    return -cr.mean(cr.sum(Y * cr.log_softmax(h @ p["W2"] + p["b2"], axis=-1), axis=-1))


@pytest.mark.parametrize("name", EAGER)
def test_grad_vjp_jvp_hessian_give_numpys_numbers_in_the_inputs_library(name):
    args = (W, X, Y)
    theirs = convert(name, args)
    g = cr.grad(logistic_loss)(*theirs)
    assert_same_kind(g, name, np.float64)
    np.testing.assert_allclose(back(name, g), cr.grad(logistic_loss)(*args), atol=1e-12)

    H = cr.hessian(logistic_loss)(*theirs)
    assert_same_kind(H, name, np.float64)
    np.testing.assert_allclose(back(name, H), cr.hessian(logistic_loss)(*args), atol=1e-12)

    f = lambda w: cr.tanh(cr.matmul(theirs[1], w))  # noqa: E731
    out, f_vjp = cr.vjp(f, theirs[0])
    (ct,) = f_vjp(convert(name, np.ones(40)))
    _, ref_vjp = cr.vjp(lambda w: cr.tanh(X @ w), W)
    assert_same_kind((out, ct), name, np.float64)
    np.testing.assert_allclose(back(name, ct), ref_vjp(np.ones(40))[0], atol=1e-12)

    out, tangent = cr.jvp(f, (theirs[0],), (convert(name, np.ones(3)),))
    assert_same_kind((out, tangent), name, np.float64)
    np.testing.assert_allclose(back(name, tangent),
                               cr.jvp(lambda w: cr.tanh(X @ w), (W,), (np.ones(3),))[1],
                               atol=1e-12)


@pytest.mark.parametrize("name", EAGER)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_mlps_gradient_keeps_the_library_and_the_dtype(name, dtype):
    args = cr.tree_map(lambda a: a.astype(dtype), (PARAMS, X, ONE_HOT))
    g = cr.grad(mlp_loss)(*convert(name, args))
    assert_same_kind(g, name, dtype)
    ref = cr.grad(mlp_loss)(*args)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for key in PARAMS:
        np.testing.assert_allclose(back(name, g[key]), ref[key], atol=tol, rtol=tol)


def test_a_primitive_on_another_librarys_array_gives_that_librarys_array():
    x = torch.tensor([0.0, 1.0], dtype=torch.float64)
    assert torch.equal(cr.exp(x), torch.exp(x))
    assert isinstance(cr.sum(x), torch.Tensor)


@pytest.mark.parametrize("name", EAGER)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_a_decomposition_outside_any_transform_gives_that_librarys_arrays(name, dtype):
    # (the wrappers look at their results' dtype: another library's, met as it is)
    a = np.array([[2.0, 1.0], [1.0, 3.0]], dtype=dtype)
    if dtype == np.complex128:
        a[0, 1], a[1, 0] = 1j, -1j
    for f in (cr.linalg.eigh, cr.linalg.svd, cr.linalg.slogdet):
        got, expected = f(convert(name, a)), f(a)
        assert got._fields == expected._fields, f.__name__
        for g, e in zip(got, expected):
            assert_same_kind(g, name, e.dtype)
            np.testing.assert_allclose(np.abs(back(name, g)), np.abs(e), rtol=1e-12)


@cr.primitive
def _scaled(x, *, w):
    """x * w, with w a keyword parameter (not differentiated)."""
    return x * w


_scaled.defvjp(lambda g, ans, x, *, w: g * w)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_a_librarys_array_as_a_keyword_parameter_computes_in_that_library(name):
    w = convert(name, np.array([1.0, 2.0, 3.0]))
    with _Computations() as computations:  # (Dask's graph is not computed to NumPy's)
        value = _scaled(np.ones(3), w=w)
        slope = cr.grad(lambda x: cr.sum(_scaled(x * x, w=w)))(np.ones(3))
    assert computations.count == 0
    for result, expected in [(value, [1.0, 2.0, 3.0]), (slope, [2.0, 4.0, 6.0])]:
        assert_same_kind(result, name, np.float64)
        np.testing.assert_allclose(back(name, result), expected)


def test_two_libraries_in_one_operation_is_an_error_naming_both():
    with pytest.raises(TypeError, match="mixes arrays of torch and array_api_strict"):
        cr.grad(lambda w, v: cr.sum(w * v))(torch.ones(2, dtype=torch.float64),
                                             xps.ones(2))


def test_what_a_library_cannot_do_raises_naming_it_and_the_operation():
    # nothing falls back to NumPy: array-api-strict has no einsum
    with pytest.raises(TypeError, match=r"array_api_strict has no einsum \(operation "
                                        r"np.einsum\)"):
        cr.grad(lambda x: cr.einsum("ii->", x))(xps.eye(2, dtype=xps.float64))


def test_import_chainrule_imports_no_backend():
    code = ("import sys, chainrule as cr, numpy as np; cr.grad(lambda x: cr.sum(x**2))"
            "(np.ones(2)); print(sorted(m for m in ('torch', 'dask', 'cupy', "
            "'array_api_compat', 'chainrule.backends') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------
# The derivative table, case by case, to second order
# ---------------------------------------------------------------------------------------

def _table_results(case, arrays, ws, vs):
    """The gradient of <w, f(x)>, and the Hessian-vector product (along v) of
    <w, f(x)> + |f(x)|^2 / 2, with respect to every input."""
    def outputs(xs):
        out = case.fn(*xs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    argnums = tuple(range(len(arrays)))
    first = cr.grad(lambda *xs: sum(cr.sum(o * w) for o, w in zip(outputs(xs), ws)),
                    argnums=argnums)(*arrays)
    second_loss = lambda *xs: sum(cr.sum(o * w) + 0.5 * cr.sum(o * o)  # noqa: E731
                                  for o, w in zip(outputs(xs), ws))
    _, hvp = cr.jvp(lambda *xs: cr.grad(second_loss, argnums=argnums)(*xs),
                    tuple(arrays), tuple(vs))
    return list(first) + list(hvp)


def _table():
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    import test_derivatives as table
    return table


def _sweep(name, first=0, every=1):
    """(the ids of the cases that pass, {id: error} of those that do not), of every
    ``every``-th case from the ``first``. On Dask, a case whose derivatives computed
    anything before ``dask.compute`` fails."""
    table = _table()
    passed, failed = [], {}
    for case in table.CASES[first::every]:
        arrays = case.arrays()
        outs = case.fn(*[cr.tensor(a) for a in arrays])
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        ws = table.cotangents(case, [o.data for o in outs], np.float64)
        vs = [table.seeded(case.id, "v").standard_normal(a.shape) for a in arrays]
        try:
            expected = _table_results(case, arrays, ws, vs)
        except TypeError:
            continue  # (a case of Tensors only: np.einsum on Tensors is refused)
        try:
            with _Computations() as computations:
                got = _table_results(case, convert(name, arrays), convert(name, ws),
                                     convert(name, vs))
            assert computations.count == 0, "computed before dask.compute"
            for g, e in zip(got, expected):
                assert_same_kind(g, name, np.float64)
                np.testing.assert_allclose(back(name, g), e, rtol=1e-9, atol=1e-12)
            passed.append(case.id)
        except (TypeError, IndexError, ValueError, NotImplementedError,
                AssertionError) as error:
            failed[case.id] = f"{type(error).__name__}: {error}"
    return passed, failed


# The cases torch gives other numbers for, and why (tests/
# test_table_under_transforms_backends.py reads these too)
TORCH_OTHER_NUMBERS = {
    "partition(kth=1)": "partition's order of the entries beside the kth is each "
                        "library's own, and so is where their gradients go",
}


def test_torch_runs_the_whole_derivative_table_to_second_order():
    passed, failed = _sweep("torch")
    assert list(failed) == list(TORCH_OTHER_NUMBERS), failed
    assert len(passed) >= 1040


def lacked_by_the_standard(error):
    """Whether an error (``"TypeError: ..."``) is array-api-strict's refusal of what the
    standard lacks: named (no einsum or erf in the standard; np.einsum itself, called
    on traced values, is refused by name), or indexing beyond it (integer arrays beside
    slices, masks beside other indices, writes by arrays)."""
    return ("array_api_strict has no" in error or error.startswith("IndexError")
            or "np.einsum on a Tensor" in error)


def test_array_api_strict_runs_the_table_but_for_what_the_standard_lacks():
    passed, failed = _sweep("array_api_strict")
    assert len(passed) >= 980
    for case_id, error in failed.items():
        assert lacked_by_the_standard(error), (case_id, error)


# What Dask has no way to do, by case, and the error that says so: dask.array.linalg
# has no det, slogdet, eigh or eigvalsh; lstsq's residuals are there or not by the rank
# of a, a value (which a choice by it would compute).
_DASK_REFUSED = {
    **{f"{name}{shape}": f"dask has no linalg.{function}"
       for shape in ("(3, 3)", "(2, 3, 3)")
       for name, function in [("det", "det"), ("slogdet", "slogdet"),
                              ("slogdet(-x)", "slogdet"), ("logabsdet", "slogdet"),
                              ("slogdet sign", "slogdet"), ("eigh", "eigh"),
                              ("eigh(spd(x))", "eigh"), ("eigvalsh", "eigvalsh")]},
    **{f"lstsq(4,2){b}": "lstsq's 'a has full column rank' needs the value of a dask array"
       for b in ("(4,)", "(4, 2)")},
    # how many distinct values there are is a value too: unique's shape
    **{name: "(operation np.unique)" for name in ("unique", "unique(axis=0)")},
}
# Dask's QR of a matrix in several chunks of rows has its own signs (a QR is unique up
# to them): its derivatives are NumPy's of Dask's decomposition (the test below)
_DASK_OWN_SIGNS = ["qr(4, 2)"]
_DASK_PARTS = 8  # the table in 8 parts of every 8th case, for pytest-xdist to spread


@pytest.mark.parametrize("part", range(_DASK_PARTS))
def test_dask_runs_the_whole_derivative_table_to_second_order(part):
    passed, failed = _sweep("dask", first=part, every=_DASK_PARTS)
    ids = [case.id for case in _table().CASES[part::_DASK_PARTS]]
    assert sorted(failed) == sorted(i for i in ids if i in _DASK_REFUSED or
                                    i in _DASK_OWN_SIGNS), failed
    for case_id, error in failed.items():
        assert case_id in _DASK_OWN_SIGNS or _DASK_REFUSED[case_id] in error, \
            (case_id, error)
    assert len(passed) >= 124  # (of about 131 a part; 1034 of the 1053 in all)


def test_dask_qr_has_its_own_signs_and_numpys_derivatives_of_them():
    """Dask's QR of a 4 x 2 matrix in two chunks of rows (a TSQR) is NumPy's with the
    signs s of Q's columns and R's rows its own. Its derivatives are NumPy's of that
    decomposition, x -> (Q s, s R): the table's, with the cotangents w_Q s and s w_R."""
    table = _table()
    case = next(c for c in table.CASES if c.id == "qr(4, 2)")
    (x,) = case.arrays()
    q, r = np.linalg.qr(x)
    q_dask, r_dask = back("dask", list(cr.qr(convert("dask", x))))
    s = np.sign(np.diagonal(r_dask)) * np.sign(np.diagonal(r))
    assert (s < 0).any()  # (else this test tests nothing: NumPy's signs)
    np.testing.assert_allclose(q_dask, q * s, atol=1e-12)
    np.testing.assert_allclose(r_dask, s[:, None] * r, atol=1e-12)
    ws = table.cotangents(case, [q, r], np.float64)
    vs = [table.seeded(case.id, "v").standard_normal(x.shape)]
    expected = _table_results(case, [x], [ws[0] * s, s[:, None] * ws[1]], vs)
    got = _table_results(case, convert("dask", [x]), convert("dask", ws), convert("dask", vs))
    for g, e in zip(got, expected):
        assert_same_kind(g, "dask", np.float64)
        np.testing.assert_allclose(back("dask", g), e, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------
# The shims: what the standard lacks, on every library
# ---------------------------------------------------------------------------------------

A = np.arange(12.0).reshape(3, 4) / 7.0
INDEX = np.array([2, 0, 2])
SHIMS = {  # name: (f, the libraries with no way to do it)
    "scatter-add (repeated rows)": (lambda a: cr.grad(lambda x: cr.sum(x[INDEX] ** 2))(a), ()),
    **{f"scatter-{how} (repeated rows)":  # x.at[i].multiply/min/max(v), ufunc.at
       (lambda a, how=how: cr.grad(lambda x: cr.sum(cr.sin(
           getattr(x.at[INDEX], how)(cr.cos(x) + 0.1)) * x))(a), ())
       for how in ("multiply", "min", "max")},
    "einsum": (lambda a: cr.grad(lambda x: cr.einsum("ij,ij->", x, x))(a),
               ("array_api_strict",)),
    "erf": (lambda a: cr.grad(lambda x: cr.sum(cr.erf(x)))(a), ("array_api_strict",)),
    "tril": (lambda a: cr.grad(lambda x: cr.sum(cr.tril(x) ** 2))(a), ()),
    "logsumexp": (lambda a: cr.grad(lambda x: cr.logsumexp(x))(a), ()),
    "pad": (lambda a: cr.grad(lambda x: cr.sum(cr.pad(x, 1) ** 2))(a), ()),
    "cumsum": (lambda a: cr.grad(lambda x: cr.sum(cr.cumsum(x, axis=1) ** 2))(a), ()),
    "flip": (lambda a: cr.grad(lambda x: cr.sum(x[::-1] * x))(a), ()),
}


@pytest.mark.parametrize("name", list(BACKENDS))
@pytest.mark.parametrize("shim", list(SHIMS))
def test_each_shim_on_each_library(shim, name):
    f, lacking = SHIMS[shim]
    if name in lacking:
        with pytest.raises(TypeError, match=f"{name} has no"):
            f(convert(name, A))
        return
    np.testing.assert_allclose(back(name, f(convert(name, A))), f(A), atol=1e-12)


# ---------------------------------------------------------------------------------------
# cr.vmap: per-example gradients, in the inputs' library
# ---------------------------------------------------------------------------------------

def example_loss(w, x, y):
    """One example's logistic loss: vmap runs it on every row at once."""
    z = x @ w
    return cr.logaddexp(0.0, z) - y * z


VMAPPED = {  # name: f(w, X, Y), each a vmap nested with another transform
    "vmap(grad)": lambda w, X, y: cr.vmap(cr.grad(example_loss), in_axes=(None, 0, 0))(
        w, X, y),
    "vmap(hessian)": lambda w, X, y: cr.vmap(cr.hessian(example_loss),
                                             in_axes=(None, 0, 0))(w, X, y),
    "grad(vmap)": lambda w, X, y: cr.grad(lambda w: cr.sum(cr.vmap(
        example_loss, in_axes=(None, 0, 0))(w, X, y)))(w),
    "vmap(jacfwd)": lambda w, X, y: cr.vmap(cr.jacfwd(lambda w, x: cr.tanh(x * w)),
                                            in_axes=(None, 0))(w, X),
    # batched indexes: sort's gather and its gradient's scatter, one row each
    "vmap(grad(sort))": lambda w, X, y: cr.vmap(cr.grad(
        lambda x: cr.sum(cr.sort(x)[::-1] * cr.cumsum(x))))(X),
    "unbatched output": lambda w, X, y: cr.vmap(lambda x: (x * 2.0, w),
                                                out_axes=(1, None))(X),
}


@pytest.mark.parametrize("name", ["torch", "dask"])
@pytest.mark.parametrize("case", list(VMAPPED))
def test_vmap_gives_numpys_numbers_in_the_inputs_library(case, name):
    f = VMAPPED[case]
    import dask.callbacks  # noqa: F401
    counter = _Computations()
    with counter:
        result = f(*convert(name, (W, X, Y)))
    assert counter.count == 0  # (Dask: a graph, nothing computed)
    assert_same_kind(result, name, np.float64)
    for got, want in zip(cr.tree_leaves(back(name, result)), cr.tree_leaves(f(W, X, Y))):
        np.testing.assert_allclose(got, want, atol=1e-12, rtol=1e-12)


def test_vmap_of_an_mlps_gradient_on_torch_float32():
    args = cr.tree_map(lambda a: a.astype(np.float32), (PARAMS, X, ONE_HOT))
    per_example = cr.vmap(cr.grad(mlp_loss), in_axes=(None, 0, 0))
    g = per_example(*convert("torch", args))
    assert_same_kind(g, "torch", np.float32)
    ref = per_example(*args)
    for key in PARAMS:
        assert tuple(g[key].shape) == (40,) + PARAMS[key].shape
        np.testing.assert_allclose(g[key].numpy(), ref[key], atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------------------
# The tensor engine over another library's array: cr.tensor(torch_tensor)
# ---------------------------------------------------------------------------------------

def tensor_mlp_loss(p, X, Y):
    """mlp_loss, with Tensors' methods."""
    h = (X @ p["W1"] + p["b1"]).tanh()
    return -(Y * cr.log_softmax(h @ p["W2"] + p["b2"], axis=-1)).sum(axis=-1).mean()


@pytest.mark.parametrize("name", ["torch", "dask"])
def test_a_tensor_over_another_librarys_array_computes_and_backpropagates_in_it(name):
    params = {k: cr.tensor(v, requires_grad=True) for k, v in convert(name, PARAMS).items()}
    X_, Y_ = convert(name, (X, ONE_HOT))
    loss = tensor_mlp_loss(params, cr.tensor(X_), Y_)  # (Y_: the library's array as it is)
    loss.backward()
    ref = {k: cr.tensor(v, requires_grad=True) for k, v in PARAMS.items()}
    tensor_mlp_loss(ref, cr.tensor(X), ONE_HOT).backward()
    for key in PARAMS:
        g = params[key].grad
        assert_same_kind((g, params[key].data), name, np.float64)
        np.testing.assert_allclose(back(name, g), ref[key].grad, atol=1e-12, rtol=1e-12)
    np.testing.assert_allclose(back(name, loss.data), tensor_mlp_loss(
        PARAMS, cr.tensor(X), ONE_HOT).item(), rtol=1e-12)


def test_a_torch_tensor_keeps_its_dtype_and_an_optimizer_steps_in_torch():
    w = cr.tensor(torch.zeros(3), requires_grad=True)  # float32, as given
    assert w.dtype == np.float32 and isinstance(w.data, torch.Tensor)
    assert cr.tensor(torch.tensor([1, 2])).data.dtype == torch.int64  # ints stay ints
    opt = cr.optim.Adam([w], lr=0.1)
    Xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float32)
    for _ in range(3):
        opt.zero_grad()
        ((cr.tensor(Xt) @ w - yt) ** 2).mean().backward()
        opt.step()
    assert isinstance(w.data, torch.Tensor) and w.data.dtype == torch.float32
    assert isinstance(w.grad, torch.Tensor) and w.grad.dtype == torch.float32
    opt.zero_grad(set_to_none=False)  # torch's zeros, in the parameter's dtype
    assert torch.equal(w.grad, torch.zeros(3))
    ref = cr.tensor(np.zeros(3, np.float32), requires_grad=True)
    opt = cr.optim.Adam([ref], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        ((cr.tensor(X.astype(np.float32)) @ ref - Y.astype(np.float32)) ** 2).mean().backward()
        opt.step()
    np.testing.assert_allclose(w.data.numpy(), ref.data, rtol=1e-5, atol=1e-6)


def test_what_a_tensor_over_torch_gives_back():
    x = cr.tensor(torch.tensor([1.0, 2.0], dtype=torch.float64), requires_grad=True)
    y = x * x
    y.backward(gradient=torch.tensor([1.0, 10.0], dtype=torch.float64))
    assert torch.equal(x.grad, torch.tensor([2.0, 40.0], dtype=torch.float64))
    x.grad = None
    (x ** 3).sum().backward(create_graph=True)  # x.grad a Tensor in the graph: 3x^2
    assert isinstance(x.grad, cr.Tensor) and isinstance(x.grad.data, torch.Tensor)
    index = x.argmax()  # a Tensor, as PyTorch's argmax gives, holding torch's int64
    assert isinstance(index, cr.Tensor) and isinstance(index.data, torch.Tensor)
    assert index.data.dtype == torch.int64 and int(index) == 1
    assert repr(cr.tensor(torch.ones(1))) == "tensor(tensor([1.]), dtype=float32)"
    with pytest.raises(TypeError, match=r"numpy\(\): this tensor holds a torch array"):
        x.numpy()
    with pytest.raises(TypeError, match="not turned into a NumPy array"):
        np.asarray(x.detach())  # (NumPy asks the Tensor: it refuses too)
    assert cr.jit(lambda t: (t * t).sum())(x).item() == 5.0  # (tests/test_jit_backends.py)


def test_transforms_at_the_meeting_of_numpys_values_and_a_librarys():
    c = torch.tensor([3.0, 4.0], dtype=torch.float64)
    # a NumPy point with a torch tangent: both results are torch's
    out, tangent = cr.jvp(lambda y: cr.sum(y * y), (np.ones(2),), (c,))
    assert isinstance(out, torch.Tensor) and torch.equal(tangent, torch.tensor(14.0,
                                                                        dtype=torch.float64))
    # inside a transform over torch, an inner transform's result (here c, the gradient
    # at a NumPy point) meets NumPy's constants as the tracers do
    g = cr.grad(lambda x: cr.sum(x * (np.ones(2) * cr.grad(
        lambda y: cr.sum(y * c))(np.zeros(2)))))(torch.ones(2, dtype=torch.float64))
    assert torch.equal(g, c)
    # a float's block of a Jacobian over torch arrays is torch's
    jac = cr.jacrev(lambda x, s: x * s, argnums=(0, 1))(c, 2.0)
    assert torch.equal(jac[1], c) and torch.equal(jac[0], 2.0 * torch.eye(2).double())
    # forward mode's seeds are the library's: NumPy's would meet torch's sort order
    x = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64)
    cube = lambda x: cr.sum(cr.sort(x) ** 3 * x)  # noqa: E731
    np.testing.assert_allclose(cr.hessian(cube)(x).numpy(), cr.hessian(cube)(x.numpy()))
    # a NumPy number among einsum's operands (torch's einsum takes tensors alone)
    twice = cr.grad(lambda x: cr.einsum(",j->", np.float64(2.0), x * x))(x)
    assert torch.equal(twice, torch.tensor([12.0, 4.0, 8.0], dtype=torch.float64))
    # a Jacobian's blocks on Dask: out.shape + in.shape
    x = da.from_array(np.array([1.0, 2.0]), chunks=1)
    jac = cr.jacrev(lambda x: cr.outer(x, np.arange(3.0)))(x)
    assert isinstance(jac, da.Array) and jac.shape == (2, 3, 2)
    np.testing.assert_allclose(jac.compute(), cr.jacrev(
        lambda x: cr.outer(x, np.arange(3.0)))(np.array([1.0, 2.0])))

# ---------------------------------------------------------------------------------------
# Dask: a gradient is a graph, computed when asked, on the cluster
# ---------------------------------------------------------------------------------------

class _Computations(dask.callbacks.Callback if hasattr(dask, "callbacks") else object):
    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def _dask_problem():
    Xd = da.from_array(X, chunks=(10, 3))  # four chunks of rows
    return da.from_array(W), Xd, da.from_array(Y, chunks=10)


def test_a_gradient_over_dask_arrays_is_a_graph_until_dask_compute():
    import dask.callbacks  # noqa: F401
    w, Xd, yd = _dask_problem()
    counter = _Computations()
    with counter:
        g = cr.grad(logistic_loss)(w, Xd, yd)
        hv = cr.hvp(lambda w: logistic_loss(w, Xd, yd), w, da.ones(3))
        assert isinstance(g, da.Array) and isinstance(hv, da.Array)
        assert counter.count == 0  # nothing computed yet
        z = cr.grad(lambda X: logistic_loss(W, X, Y))(Xd)
        assert z.chunks == Xd.chunks  # the rows stay chunked
        g_, hv_ = dask.compute(g, hv)
        assert counter.count == 1
    np.testing.assert_allclose(g_, cr.grad(logistic_loss)(W, X, Y), atol=1e-12)
    np.testing.assert_allclose(hv_, cr.hvp(lambda w: logistic_loss(w, X, Y), W, np.ones(3)),
                               atol=1e-12)


def test_dask_weights_of_an_average_stay_a_graph():
    """cr.average is a composition: its weights, a Dask array, stay Dask's (converting
    them to NumPy would compute them)."""
    import dask.callbacks  # noqa: F401
    x, w = da.from_array(X[:6], chunks=(2, 3)), da.from_array(np.array([1.0, 2.0, 3.0]))
    counter = _Computations()
    with counter:
        g = cr.grad(lambda x: cr.sum(cr.average(x, axis=1, weights=w)))(x)
        assert isinstance(g, da.Array) and counter.count == 0
        g_ = dask.compute(g)[0]
    np.testing.assert_allclose(g_, cr.grad(lambda x: cr.sum(cr.average(
        x, axis=1, weights=np.array([1.0, 2.0, 3.0]))))(X[:6]), atol=1e-15)


def test_dask_indexes_by_a_one_entry_index_on_an_axis_of_one_chunk():
    """Dask's own array [0] indexing an axis of one chunk meets a Dask bug: it has the
    name of Dask's array of the chunks' offsets, and the result the wrong shape (the
    whole axis). NumPy's index stays NumPy's, for indexing and np.take alike; so
    cross_entropy of one row of label 0 (which takes entry 0, and writes there)."""
    from chainrule.backends import library_of
    d = da.from_array(np.arange(6.0).reshape(2, 3), chunks=(2, 3))
    x = library_of(d).adopt(d)
    for taken in (x[:, np.array([0])], np.take(x, np.array([0]), axis=1),
                  x.take(np.array([0]))):
        assert taken.shape == np.asarray(dask.compute(taken._value)[0]).shape != (2, 3)
    import chainrule.nn.functional as F
    z = np.array([[0.3, -0.2, 0.5]])
    loss = cr.value_and_grad(lambda z: F.cross_entropy(z, [0]))
    value, slope = dask.compute(*loss(da.from_array(z)))
    np.testing.assert_allclose(value, loss(z)[0], atol=1e-15)
    np.testing.assert_allclose(slope, loss(z)[1], atol=1e-15)


def test_a_choice_by_data_on_dask_is_refused_rather_than_computed():
    with pytest.raises(TypeError, match="needs the value of a dask array"):
        cr.grad(lambda x: cr.sum(x) * (2.0 if cr.sum(x) > 0 else 1.0))(da.ones(3))


@pytest.mark.slow
def test_dask_gradient_and_hvp_on_a_local_cluster_of_two_processes():
    distributed = pytest.importorskip("distributed", reason="needs dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        w, Xd, yd = _dask_problem()
        g = cr.grad(logistic_loss)(w, Xd, yd)
        hv = cr.hvp(lambda w: logistic_loss(w, Xd, yd), w, da.ones(3))
        g_, hv_ = dask.compute(g, hv)  # on the cluster: the active client's
        assert len(client.scheduler_info()["workers"]) == 2
    np.testing.assert_allclose(g_, cr.grad(logistic_loss)(W, X, Y), atol=1e-12)
    np.testing.assert_allclose(hv_, cr.hvp(lambda w: logistic_loss(w, X, Y), W, np.ones(3)),
                               atol=1e-12)


@pytest.mark.slow
def test_a_gradient_over_a_matrix_larger_than_a_workers_memory_streams():
    """examples/dask_out_of_core.py at 0.6 GB (docs/backends.md runs it at 2 GB): two
    workers limited to 300 MB each compute it, and neither grows by the matrix's size
    (a worker's own start-up, which under pytest-xdist imports more, is left out)."""
    pytest.importorskip("distributed", reason="needs dask.distributed")
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / "dask_out_of_core.py"
    spec = importlib.util.spec_from_file_location("dask_out_of_core", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main(rows=1_500_000, memory_limit="300MB")
    assert result["matrix_gb"] == 0.6
    assert result["max_difference"] < 1e-12
    assert len(result["peak_mb_per_worker"]) == 2
    grown = [p - q for p, q in zip(result["peak_mb_per_worker"],
                                   result["idle_peak_mb_per_worker"])]
    assert max(grown) < 300e6 / 2 ** 20 < 0.6e9 / 2 ** 20  # (MiB, as ru_maxrss counts)


# ---------------------------------------------------------------------------------------
# GPUs: the same code on CUDA tensors and CuPy arrays
# ---------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_torch_on_cuda_stays_on_the_device():
    args = tuple(torch.from_numpy(a).cuda() for a in (W, X, Y))
    g = cr.grad(logistic_loss)(*args)
    assert g.device.type == "cuda"
    np.testing.assert_allclose(g.cpu().numpy(), cr.grad(logistic_loss)(W, X, Y), atol=1e-12)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_the_derivative_table_and_an_mlp_step_on_cuda(monkeypatch):
    monkeypatch.setitem(BACKENDS, "torch_cuda", (
        lambda a: torch.from_numpy(np.array(a)).cuda(), lambda a: a.cpu().numpy()))
    passed, failed = _sweep("torch_cuda")
    assert list(failed) == list(TORCH_OTHER_NUMBERS), failed  # (as on the CPU)
    assert len(passed) >= 1040
    for dtype, tol in [(np.float64, 1e-12), (np.float32, 1e-5)]:
        args = cr.tree_map(lambda a: a.astype(dtype), (PARAMS, X, ONE_HOT))
        step = cr.jit(cr.grad(mlp_loss))
        for g in (cr.grad(mlp_loss)(*convert("torch_cuda", args)),
                  step(*convert("torch_cuda", args)), step(*convert("torch_cuda", args))):
            assert_same_kind(g, "torch_cuda", dtype)
            ref = cr.grad(mlp_loss)(*args)
            for key in PARAMS:
                np.testing.assert_allclose(back("torch_cuda", g[key]), ref[key], atol=tol,
                                           rtol=tol)


@pytest.mark.gpu
def test_cupy_on_the_gpu():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (no GPU here)")
    g = cr.grad(logistic_loss)(*(cupy.asarray(a) for a in (W, X, Y)))
    assert isinstance(g, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(g), cr.grad(logistic_loss)(W, X, Y), atol=1e-12)
