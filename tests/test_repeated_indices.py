"""Indexed updates whose index names one entry more than once, against JAX (float64).

``x.at[i].set(v)`` writes each value in turn, so where ``i`` repeats an entry only the
last write stays in the result, and only that value has a derivative: the others are
overwritten and reach nothing (JAX's semantics, and NumPy's order of writes).
``x.at[i].add(v)`` adds every value, so each one's derivative is whatever reaches its
entry. Both are checked in every way a derivative is asked for: VJPs, JVPs, both
Jacobians, a Hessian through a nonlinearity, under ``vmap`` (the values, the array or
the index mapped; a gradient inside and outside the map) and under ``cr.jit``.

``x.at[i].multiply(v)``, ``.min(v)`` and ``.max(v)`` combine every value with the entry
it lands on, one after another (NumPy's ``ufunc.at``). JAX answers the derivatives of
``.min`` and ``.max`` at repeated indices (tied contributors share evenly, as here) but
refuses those of ``.multiply`` unless the indices are unique, so the JAX program for
``.multiply`` writes the same product one value at a time (``one_at_a_time``), which JAX
differentiates to any order. PyTorch's ``scatter_reduce`` (``prod``, ``amin``,
``amax``, ``include_self=True``) is a second reference, and central differences a third;
zeros among the multiplied values and ties of ``.min`` / ``.max`` have tests of their own.
"""

import zlib

import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import central_difference_atol

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

S = slice(None)
# (shape of x, index, shape of the values written): each index repeats an entry
CASES = {
    "one entry twice": ((5,), (np.array([3, 3]),), ()),
    "interleaved": ((5,), (np.array([0, 2, 0, 2, 2]),), (5,)),
    "pairs of arrays": ((3, 4), (np.array([0, 2, 0]), np.array([1, 1, 1])), (3,)),
    "rows twice": ((3, 4), (np.array([1, 1]), S), (2, 4)),
    "columns twice": ((3, 4), (S, np.array([3, 0, 3])), (3, 3)),
    "arrays apart": ((2, 3, 4), (np.array([[0, 1], [0, 1]]), S, np.array([2, 2])),
                     (2, 2, 3)),
    "a list of indices": ((4,), ([1, 1, 2],), (3,)),
}
MASK = np.array([[True, False, True], [False, False, True], [True, True, False]])
# the other index kinds .set accepts, for the updates that combine values with x
KINDS = {
    "an int": ((3, 4), (1,), (4,)),
    "a slice, a value broadcast": ((3, 4), (slice(1, 3),), ()),
    "a mask": ((3, 3), (MASK,), (int(MASK.sum()),)),
    "ellipsis and an int": ((2, 3), (Ellipsis, 2), (2,)),
    "an int and an array": ((3, 4), (1, np.array([0, 3, 0])), (3,)),
    "arrays broadcast, a row": ((3, 4), (np.array([[0], [2], [0]]), np.array([1, 1])), (2,)),
}
UPDATES = ["set", "add", "multiply", "min", "max"]
COMBINING = ["multiply", "min", "max"]
UFUNCS = {"multiply": np.multiply, "min": np.minimum, "max": np.maximum}
TORCH_REDUCE = {"multiply": "prod", "min": "amin", "max": "amax"}
# (case, update): every update at repeated indices; the other kinds for the three new
EVERY = [(name, update) for update in UPDATES for name in CASES] + \
    [(name, update) for update in COMBINING for name in KINDS]


def rng_for(*parts):
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def flat_positions(shape, index):
    """Where each value of ``x.at[index]`` lands: flat positions in x, one per value
    (the region the index selects), in NumPy's order of writes."""
    return np.arange(int(np.prod(shape))).reshape(shape)[index]


def one_at_a_time(x, v, index):
    """``x.at[index].multiply(v)`` in JAX as one write per value, in NumPy's order: the
    same numbers, with derivatives JAX gives at repeated indices (scatter_mul's it
    refuses)."""
    positions = flat_positions(x.shape, index)
    values = jnp.broadcast_to(v, positions.shape).ravel()
    flat = x.ravel()
    for k, p in enumerate(positions.ravel()):
        flat = flat.at[p].set(flat[p] * values[k])
    return flat.reshape(x.shape)


def functions(update, index):
    """The update as a function of (x, v), in chainrule and in JAX."""
    index = index if len(index) > 1 else index[0]
    jindex = tuple(jnp.asarray(p) if isinstance(p, (np.ndarray, list)) else p
                   for p in (index if isinstance(index, tuple) else (index,)))
    jindex = jindex if isinstance(index, tuple) else jindex[0]

    def mine(x, v):
        x = x if hasattr(x, "at") else cr.tensor(x)  # (a tracer has .at too)
        return getattr(x.at[index], update)(v)

    def theirs(x, v):
        if update == "multiply":
            return one_at_a_time(jnp.asarray(x), v, index)
        return getattr(jnp.asarray(x).at[jindex], update)(v)
    return mine, theirs


def torch_function(update, shape, index):
    """The update in PyTorch: ``scatter_reduce`` at the flat positions, x included."""
    index = index if len(index) > 1 else index[0]
    positions = torch.from_numpy(flat_positions(shape, index).ravel())
    region = flat_positions(shape, index).shape

    def theirs(x, v):
        values = torch.broadcast_to(v, region).reshape(-1)
        return x.reshape(-1).scatter_reduce(0, positions, values, TORCH_REDUCE[update],
                                            include_self=True).reshape(shape)
    return theirs


def inputs(name, update):
    shape, _, value_shape = {**CASES, **KINDS}[name]
    rng = rng_for(name, update)
    return rng.standard_normal(shape), rng.standard_normal(value_shape), rng


def close(mine, theirs):
    mine = [np.asarray(getattr(m, "data", m)) for m in cr.tree_flatten(mine)[0]]
    theirs = [np.asarray(t) for t in jax.tree_util.tree_leaves(theirs)]
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert m.shape == t.shape, (m.shape, t.shape)
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, update", EVERY)
def test_value_vjp_and_jvp(name, update):
    x, v, rng = inputs(name, update)
    mine, theirs = functions(update, {**CASES, **KINDS}[name][1])
    out, pullback = cr.vjp(mine, x, v)
    j_out = jax.jit(theirs)(x, v)
    close(out, j_out)
    w = rng.standard_normal(np.shape(j_out))
    close(pullback(w), jax.jit(lambda x, v, w: jax.vjp(theirs, x, v)[1](w))(x, v, w))
    tx, tv = rng.standard_normal(x.shape), rng.standard_normal(v.shape)
    close(cr.jvp(mine, (x, v), (tx, tv)),
          jax.jit(lambda x, v, tx, tv: jax.jvp(theirs, (x, v), (tx, tv)))(x, v, tx, tv))


@pytest.mark.parametrize("name, update", EVERY)
def test_jacobians_and_a_hessian(name, update):
    x, v, _ = inputs(name, update)
    mine, theirs = functions(update, {**CASES, **KINDS}[name][1])
    for argnums in (0, 1):
        expected = jax.jit(jax.jacrev(theirs, argnums))(x, v)  # (compiled: quicker)
        close(cr.jacrev(mine, argnums)(x, v), expected)
        close(cr.jacfwd(mine, argnums)(x, v), expected)
    curved = lambda f, sin, total: lambda x, v: total(sin(f(x, v ** 2)) * f(x ** 3, v))
    close(cr.hessian(curved(mine, cr.sin, cr.sum), (0, 1))(x, v),
          jax.jit(jax.hessian(curved(theirs, jnp.sin, jnp.sum), (0, 1)))(x, v))


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("name", CASES)
def test_under_vmap_with_the_values_or_the_array_mapped(name, update):
    x, v, rng = inputs(name, update)
    mine, theirs = functions(update, CASES[name][1])
    xs = np.stack([x, 2 * x, -x])
    vs = np.stack([v, 0.5 * v, v + 1])
    for in_axes, args in (((None, 0), (x, vs)), ((0, None), (xs, v)), ((0, 0), (xs, vs))):
        j_out = jax.jit(jax.vmap(theirs, in_axes))(*args)
        close(cr.vmap(mine, in_axes)(*args), j_out)
        w = rng.standard_normal(np.shape(j_out))
        loss = lambda f, vmap, total: lambda *a: total(vmap(f, in_axes)(*a) * w)
        close(cr.grad(loss(mine, cr.vmap, cr.sum), (0, 1))(*args),
              jax.jit(jax.grad(loss(theirs, jax.vmap, jnp.sum), (0, 1)))(*args))
        per_example = lambda f, total, k: lambda a, b: total(f(a, b) * w[k])
        close(cr.vmap(cr.grad(per_example(mine, cr.sum, 0), (0, 1)), in_axes)(*args),
              jax.jit(jax.vmap(jax.grad(per_example(theirs, jnp.sum, 0), (0, 1)), in_axes))(
                  *args))


@pytest.mark.parametrize("update", UPDATES)
def test_under_vmap_with_the_index_mapped(update):
    """Each example writes at its own places, repeated within the example."""
    rng = rng_for("mapped index", update)
    x, v = rng.standard_normal(5), rng.standard_normal((3, 4))
    index = np.array([[1, 1, 4, 1], [0, 2, 2, 0], [3, 3, 3, 3]])

    def mine(v, i):
        return getattr(cr.tensor(x).at[i], update)(v)

    def theirs(v, i):
        if update == "multiply":  # one write per value (see one_at_a_time)
            out = jnp.asarray(x)
            for k in range(len(i)):
                out = out.at[i[k]].set(out[i[k]] * v[k])
            return out
        return getattr(jnp.asarray(x).at[i], update)(v)
    close(cr.vmap(mine)(v, index), jax.jit(jax.vmap(theirs))(v, index))
    w = rng.standard_normal((3, 5))
    close(cr.grad(lambda v: cr.sum(cr.vmap(mine)(v, index) * w))(v),
          jax.jit(jax.grad(lambda v: jnp.sum(jax.vmap(theirs)(v, index) * w)))(v))
    close(cr.vmap(cr.grad(lambda v, i: cr.sum(cr.sin(mine(v, i)))))(v, index),
          jax.jit(jax.vmap(jax.grad(lambda v, i: jnp.sum(jnp.sin(theirs(v, i))))))(v, index))


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("name", CASES)
def test_under_jit(name, update):
    x, v, rng = inputs(name, update)
    mine, theirs = functions(update, CASES[name][1])
    w = rng.standard_normal(np.shape(theirs(x, v)))
    loss = lambda f, total: lambda x, v: total(f(x, v) * w)
    jitted = cr.jit(cr.value_and_grad(loss(mine, cr.sum), (0, 1)))
    expected = jax.value_and_grad(loss(theirs, jnp.sum), (0, 1))
    for scale in (1.0, -2.0):  # a trace, then a replay on new numbers
        close(jitted(scale * x, scale * v), expected(scale * x, scale * v))


def test_the_tensor_engine_gives_the_last_write_its_gradient():
    """backward() through x.at[i].set(v), as the functional transforms do."""
    v = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = cr.zeros(4).at[np.array([2, 0, 2])].set(v)
    (y * cr.tensor([10.0, 20.0, 30.0, 40.0])).sum().backward()
    assert v.grad.tolist() == [0.0, 10.0, 30.0]
    assert y.data.tolist() == [2.0, 0.0, 3.0, 0.0]


# ---------------------------------------------------------------------------------------
# .multiply, .min, .max: NumPy's ufunc.at, PyTorch's scatter_reduce, central differences
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("update", COMBINING)
@pytest.mark.parametrize("name", [*CASES, *KINDS])
def test_values_are_numpys_ufunc_at_and_jaxs(name, update):
    x, v, _ = inputs(name, update)
    index = {**CASES, **KINDS}[name][1]
    index = index if len(index) > 1 else index[0]
    expected = x.copy()
    UFUNCS[update].at(expected, index, v)
    mine, _ = functions(update, {**CASES, **KINDS}[name][1])
    np.testing.assert_array_equal(mine(x, v).data, expected)
    jindex = tuple(jnp.asarray(p) if isinstance(p, (np.ndarray, list)) else p
                   for p in (index if isinstance(index, tuple) else (index,)))
    theirs = getattr(jnp.asarray(x).at[jindex if isinstance(index, tuple) else jindex[0]],
                     update)(v)  # (JAX computes scatter_mul's value, not its derivative)
    np.testing.assert_allclose(mine(x, v).data, theirs, rtol=1e-14, atol=0)


def torch_close(mine, theirs):
    mine = [np.asarray(getattr(m, "data", m)) for m in cr.tree_flatten(mine)[0]]
    theirs = [t.detach().numpy() for t in (theirs if isinstance(theirs, (tuple, list))
                                           else (theirs,))]
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t.reshape(m.shape), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("update", COMBINING)
@pytest.mark.parametrize("name", CASES)
def test_against_pytorch_scatter_reduce(name, update):
    """VJP, JVP (as the Jacobian times the tangent: PyTorch's forward mode of
    scatter_reduce's prod gives a zero tangent), both Jacobians and a Hessian."""
    x, v, rng = inputs(name, update)
    mine, _ = functions(update, CASES[name][1])
    theirs = torch_function(update, x.shape, CASES[name][1])
    tx, tv = torch.tensor(x, requires_grad=True), torch.tensor(v, requires_grad=True)
    out = theirs(tx, tv)
    w = rng.standard_normal(x.shape)
    torch_close(cr.vjp(mine, x, v)[1](w),
                torch.autograd.grad(out, (tx, tv), torch.from_numpy(w)))
    jx, jv = torch.autograd.functional.jacobian(theirs, (torch.tensor(x), torch.tensor(v)))
    for argnums, j in ((0, jx), (1, jv)):
        torch_close(cr.jacrev(mine, argnums)(x, v), j)
        torch_close(cr.jacfwd(mine, argnums)(x, v), j)
    dx, dv = rng.standard_normal(x.shape), rng.standard_normal(v.shape)
    tangent = (jx.reshape(x.size, x.size) @ torch.from_numpy(dx.ravel())
               + jv.reshape(x.size, v.size) @ torch.from_numpy(dv.ravel()))
    torch_close(cr.jvp(mine, (x, v), (dx, dv))[1], tangent)
    curved = lambda f, sin, total: lambda x, v: total(sin(f(x, v ** 2)) * f(x ** 3, v))
    torch_close(cr.hessian(curved(mine, cr.sin, cr.sum), (0, 1))(x, v),
                [h for row in torch.autograd.functional.hessian(
                    curved(theirs, torch.sin, torch.sum), (torch.tensor(x), torch.tensor(v)))
                 for h in row])


@pytest.mark.parametrize("update", COMBINING)
@pytest.mark.parametrize("name", [*CASES, *KINDS])
def test_against_central_differences(name, update):
    """The gradient of sum(w * y) along a random direction of (x, v), and the Hessian
    of sum(w * y ** 2) along it: the inputs (normal draws) are far from ties and zeros."""
    x, v, rng = inputs(name, update)
    mine, _ = functions(update, {**CASES, **KINDS}[name][1])
    w = rng.standard_normal(x.shape)
    loss = lambda x, v: cr.sum(w * mine(x, v) ** 2)
    dx, dv = rng.standard_normal(x.shape), rng.standard_normal(v.shape)
    h = 1e-6
    value = lambda s: loss(x + s * dx, v + s * dv).item()
    gx, gv = cr.grad(loss, (0, 1))(x, v)
    scale = float(np.sum(np.abs(w * mine(x, v).data ** 2)))
    np.testing.assert_allclose(np.sum(gx * dx) + np.sum(gv * dv),
                               (value(h) - value(-h)) / (2 * h),
                               atol=central_difference_atol(h, scale), rtol=0)
    slope = lambda s: [np.asarray(g) for g in cr.grad(loss, (0, 1))(x + s * dx, v + s * dv)]
    hx, hv = cr.jvp(lambda x, v: cr.grad(loss, (0, 1))(x, v), (x, v), (dx, dv))[1]
    for analytic, plus, minus in zip((hx, hv), slope(h), slope(-h)):
        np.testing.assert_allclose(analytic, (plus - minus) / (2 * h),
                                   atol=central_difference_atol(h, scale), rtol=0)


# ---------------------------------------------------------------------------------------
# Zeros among the multiplied values, and ties of .min / .max
# ---------------------------------------------------------------------------------------

ZEROS = {  # values landing at entries 0 (twice or three times) and 2 of x
    "one zero": np.array([2.0, 0.0, 5.0, 3.0]),
    "two zeros at one entry": np.array([2.0, 0.0, 5.0, 0.0]),
    "three zeros at one entry": np.array([0.0, 0.0, 5.0, 0.0]),
    "zeros at two entries": np.array([0.0, 3.0, 0.0, 1.5]),
}
ZERO_INDEX = np.array([0, 0, 2, 0])


@pytest.mark.parametrize("values", ZEROS)
def test_zeros_among_the_multiplied_values(values):
    """d/dv_k is x[p] times the product of the other values at p, exact without a
    division: no NaN, no warning, first order against PyTorch and JAX, second order
    against JAX (PyTorch refuses the second derivative with two zeros at one entry)."""
    x, v = np.array([1.5, -2.0, 3.0]), ZEROS[values]
    mine, theirs = functions("multiply", (ZERO_INDEX,))
    curved = lambda f, sin, total: lambda x, v: total(sin(f(x, v)) * x[0])
    with np.errstate(all="raise"):
        grads = cr.grad(curved(mine, cr.sin, cr.sum), (0, 1))(x, v)
        hessian = cr.hessian(curved(mine, cr.sin, cr.sum), (0, 1))(x, v)
        jacobian = cr.jacfwd(mine, 1)(x, v)
    close(grads, jax.jit(jax.grad(curved(theirs, jnp.sin, jnp.sum), (0, 1)))(x, v))
    close(hessian, jax.jit(jax.hessian(curved(theirs, jnp.sin, jnp.sum), (0, 1)))(x, v))
    close(jacobian, jax.jit(jax.jacrev(theirs, 1))(x, v))
    tx, tv = torch.tensor(x, requires_grad=True), torch.tensor(v, requires_grad=True)
    out = torch_function("multiply", x.shape, (ZERO_INDEX,))(tx, tv)
    torch_close(grads, torch.autograd.grad(torch.sum(torch.sin(out) * tx[0]), (tx, tv)))


def test_the_product_of_the_others_by_hand():
    """x[0] = 2 gets the values 3, 0, 4: the output is 0, and only the zero's derivative
    is not: 2 * 3 * 4."""
    v = cr.tensor([3.0, 0.0, 4.0], requires_grad=True)
    y = cr.tensor([2.0, 7.0]).at[np.array([0, 0, 0])].multiply(v)
    y.sum().backward()
    assert y.data.tolist() == [0.0, 7.0]
    assert v.grad.tolist() == [0.0, 24.0, 0.0]


TIES = {  # (x, index, values): contributors equal to the result
    "x and one value": (np.array([1.0, 2.0, 3.0]), np.array([0, 2]), np.array([1.0, 7.0])),
    "two values": (np.array([5.0, 2.0, -5.0]), np.array([0, 0, 2]), np.array([1.0, 1.0, 0.0])),
    "x and two values": (np.array([1.0, 2.0]), np.array([1, 1, 0]), np.array([2.0, 2.0, 4.0])),
    "three values, a row each": (np.array([[0.5, 3.0], [1.0, -1.0]]),
                                 (np.array([0, 0, 0]), slice(None)),
                                 np.array([[0.5, 3.0], [0.5, 3.0], [0.5, -9.0]])),
}


@pytest.mark.parametrize("update", ["min", "max"])
@pytest.mark.parametrize("tie", TIES)
def test_ties_share_the_derivative_evenly(tie, update):
    """Every contributor equal to the result gets an equal share, as JAX's scatter_min
    and scatter_max (their JVP averages the tied tangents) and PyTorch's scatter_reduce
    amin/amax; the shares at one entry sum to 1."""
    x, index, v = TIES[tie]
    if update == "min":  # the same ties, reflected
        x, v = -x, -v
    mine, theirs = functions(update, index if isinstance(index, tuple) else (index,))
    jacobians = jax.jit(jax.jacrev(theirs, (0, 1)))(x, v)
    for argnums in (0, 1):
        expected = jacobians[argnums]
        close(cr.jacrev(mine, argnums)(x, v), expected)
        close(cr.jacfwd(mine, argnums)(x, v), expected)
        close(cr.vmap(cr.grad(lambda x, v, k: mine(x, v).reshape(-1)[k], argnums),
                      (None, None, 0))(x, v, np.arange(x.size)),
              np.asarray(expected).reshape((x.size,) + np.shape((x, v)[argnums])))
    jx, jv = torch.autograd.functional.jacobian(
        torch_function(update, x.shape, index if isinstance(index, tuple) else (index,)),
        (torch.tensor(x), torch.tensor(v)))
    torch_close(cr.jacrev(mine, (0, 1))(x, v), [jx, jv])
    total = np.asarray(jacobians[0]).reshape(x.size, x.size).sum(1) + \
        np.asarray(jacobians[1]).reshape(x.size, v.size).sum(1)
    np.testing.assert_allclose(total, 1.0)
