"""NumPy's functions on Tensors (chainrule.methods.numpy_protocol): they run chainrule's
differentiable operation, give a plain answer where there is no derivative, or raise;
they never drop a gradient without a word. Gradients are checked against JAX."""

import numpy as np
import pytest

import chainrule as cr

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.5, 0.7, -0.4])

# one program, written with NumPy's names (np for chainrule, jnp for JAX)
PROGRAMS = {
    "np.exp": lambda np_, x, y: np_.sum(np_.exp(x)),
    "np.sin * np.cos": lambda np_, x, y: np_.sum(np_.sin(x) * np_.cos(y)),
    "np.sum axis keepdims": lambda np_, x, y: np_.sum(np_.sum(np_.outer(x, y), axis=0,
                                                              keepdims=True) ** 2),
    "np.mean np.var np.std": lambda np_, x, y: np_.mean(x * y) + np_.var(x) + np_.std(y),
    "np.max np.min": lambda np_, x, y: np_.max(x * y) - np_.min(x + y),
    "np.concatenate np.stack": lambda np_, x, y: np_.sum(
        np_.concatenate([x, y]) ** 2) + np_.sum(np_.stack([x, y]) * 3.0),
    "np.where np.maximum": lambda np_, x, y: np_.sum(
        np_.where(x > 0, x, y) + np_.maximum(x, y)),
    "np.dot np.matmul np.reshape": lambda np_, x, y: np_.dot(x, y) + np_.sum(
        np_.matmul(np_.reshape(x, (3, 1)), np_.reshape(y, (1, 3)))),
    "np.tanh np.log1p np.sqrt": lambda np_, x, y: np_.sum(
        np_.tanh(x) + np_.log1p(y * y) + np_.sqrt(x * x + 1.0)),
    "array % tensor, tensor % number": lambda np_, x, y: np_.sum(
        (x % 0.5) * np_.ones(3) + np_.array([5.0, 6.0, 7.0]) % (y * y + 2.0)),
    "ndarray operators": lambda np_, x, y: np_.sum(np_.ones(3) * x - np_.ones(3) / (y + 3.0)),
    "np.linalg.norm np.clip": lambda np_, x, y: np_.linalg.norm(x) + np_.sum(
        np_.clip(y, -0.5, 1.0)),
}


# numpy.linalg and the contractions (rules.solves, .determinants, .decompositions,
# .contractions): matrices built from x and y, far from singular
def _matrix(np_, x, y):
    return np_.outer(x, y) + np_.outer(y * y, x) + 3.0 * np_.eye(3)


def _spd(np_, x, y):
    return np_.outer(x, x) + np_.outer(y, y) + 3.0 * np_.eye(3)


WEIGHTS = np.arange(9.0).reshape(3, 3) / 9.0
PROGRAMS.update({
    "np.linalg.inv det slogdet solve": lambda np_, x, y: np_.sum(
        np_.linalg.inv(_matrix(np_, x, y))) + np_.linalg.det(_matrix(np_, x, y))
    + np_.linalg.slogdet(_matrix(np_, x, y))[1] + np_.sum(np_.linalg.solve(
        _matrix(np_, x, y), y) * x) + np_.sum(np_.linalg.solve(_matrix(np_, x, y),
                                                               np_.outer(y, x))),
    "np.linalg.cholesky eigh eigvalsh": lambda np_, x, y: np_.sum(
        np_.linalg.cholesky(_spd(np_, x, y)) * WEIGHTS) + np_.sum(
        np_.linalg.eigh(_spd(np_, x, y))[0] * x) + np_.sum(
        np_.linalg.eigh(_spd(np_, x, y))[1] ** 2 * WEIGHTS) + np_.sum(
        np_.linalg.eigvalsh(_spd(np_, x, y)) ** 2),
    "np.linalg.svd qr pinv": lambda np_, x, y: np_.sum(
        np_.linalg.svd(_matrix(np_, x, y), full_matrices=False)[1] * y) + np_.sum(
        np_.linalg.svd(_matrix(np_, x, y), full_matrices=False)[0] ** 2 * WEIGHTS) + np_.sum(
        np_.linalg.qr(_matrix(np_, x, y))[1] ** 2 * WEIGHTS) + np_.sum(
        np_.linalg.pinv(_matrix(np_, x, y)[:, :2])),
    "np.linalg.norm ord axis": lambda np_, x, y: np_.linalg.norm(x, 1) + np_.linalg.norm(
        y, np_.inf) + np_.linalg.norm(_matrix(np_, x, y), "nuc") + np_.linalg.norm(
        _matrix(np_, x, y), 2) + np_.sum(np_.linalg.norm(_matrix(np_, x, y), 3, axis=0))
    + np_.sum(np_.linalg.norm(_matrix(np_, x, y), np_.inf, axis=(1, 0), keepdims=True)),
    "np.linalg.matrix_power lstsq": lambda np_, x, y: np_.sum(np_.linalg.matrix_power(
        _matrix(np_, x, y), 3)) + np_.sum(np_.linalg.matrix_power(_matrix(np_, x, y), -2))
    + np_.sum(np_.linalg.lstsq(_matrix(np_, x, y)[:, :2], y, rcond=None)[0]),
    "np.einsum np.tensordot np.trace np.kron np.inner np.vdot np.cross":
        lambda np_, x, y: np_.einsum("i,j,ij->", x, y, _matrix(np_, x, y)) + np_.sum(
            np_.tensordot(_matrix(np_, x, y), _matrix(np_, y, x), axes=1) * WEIGHTS)
        + np_.trace(_matrix(np_, x, y)) + np_.sum(np_.kron(x, y) ** 2) + np_.inner(x, y)
        + np_.vdot(_matrix(np_, x, y), WEIGHTS) + np_.sum(np_.cross(x, y) * y)
        + np_.einsum("ii", _matrix(np_, y, x)) + np_.sum(np_.dot(
            np_.reshape(np_.outer(x, y), (3, 3, 1)) * x, y) ** 2),
})


@pytest.mark.slow  # (JAX traces each program: seconds in all)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_numpy_program_on_tensors_has_jaxs_gradient(name):
    program = PROGRAMS[name]
    ours = cr.grad(lambda x, y: program(np, x, y), argnums=(0, 1))(X, Y)
    theirs = jax.grad(lambda x, y: program(jnp, x, y), argnums=(0, 1))(X, Y)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "mean", "norm", "var", "std", "max", "min",
                                    "prod", "logsumexp"])
def test_a_list_of_tensors_handed_to_a_reduction_is_their_stack(reduce):
    ours = cr.grad(lambda x: getattr(cr, reduce)([x, x * x + 2.0]))(np.array(0.5))
    special = {"norm": lambda: jnp.linalg.norm, "logsumexp": lambda: jax.scipy.special.logsumexp}
    jax_reduce = special[reduce]() if reduce in special else getattr(jnp, reduce)
    theirs = jax.grad(lambda x: jax_reduce(jnp.stack([x, x * x + 2.0])))(0.5)
    np.testing.assert_allclose(ours, float(theirs), rtol=1e-12, atol=1e-14)


def test_a_numpy_function_chainrule_lacks_raises_on_a_tensor_in_a_graph():
    x = cr.tensor(X, requires_grad=True)
    with pytest.raises(TypeError, match=r"np\.unwrap on a Tensor that is part of a graph"):
        np.unwrap(x)
    with pytest.raises(TypeError, match=r"np\.unwrap"):
        cr.grad(lambda v: cr.sum(np.unwrap(v)))(X)
    with pytest.raises(TypeError, match=r"np\.exp with out"):
        np.exp(x, out=np.empty(3))


def test_outside_any_graph_a_numpy_function_runs_on_the_array():
    """No tensor requires grad: there is no gradient to lose."""
    x = cr.tensor(X)
    y = np.unwrap(x)
    assert isinstance(y, cr.Tensor) and y.data.tolist() == np.unwrap(X).tolist()


def test_functions_without_a_derivative_give_plain_answers():
    x = cr.tensor(X, requires_grad=True)
    assert np.shape(x) == (3,) and np.ndim(x) == 1 and np.size(x) == 3
    assert np.argmax(x) == 2 and np.allclose(x, X)
    less = np.zeros(3) < x
    assert isinstance(less, cr.Tensor) and less.data.tolist() == [True, False, True]
    assert np.floor(x).data.tolist() == [0.0, -2.0, 2.0]  # piecewise constant


def test_unique_differentiates_through_each_values_first_occurrence():
    """np.unique of a Tensor is chainrule's: its values carry their first occurrence's
    gradient (as jax.numpy.unique with size=; without size JAX's is zero and torch's
    unique has none); index, inverse and counts are NumPy's."""
    data = np.array([3.0, 1.0, 3.0, 2.0])
    x = cr.tensor(data, requires_grad=True)
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    for ours, numpys in zip((values.data, index, inverse, counts),
                            np.unique(data, True, True, True)):
        np.testing.assert_array_equal(ours, numpys)
    loss = cr.sum(x ** 2) + np.sum(np.unique(x) * np.array([1.0, 10.0, 100.0]))
    loss.backward()
    np.testing.assert_array_equal(x.grad, 2 * data + [100.0, 1.0, 0.0, 10.0])
    theirs = jax.grad(lambda v: jnp.sum(v ** 2) + jnp.sum(
        jnp.unique(v, size=3) * jnp.array([1.0, 10.0, 100.0])))(data)
    np.testing.assert_array_equal(x.grad, theirs)
    rows = cr.tensor([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0]], requires_grad=True)
    (np.unique(rows, axis=0) * np.array([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert rows.grad.tolist() == [[3.0, 4.0], [1.0, 2.0], [0.0, 0.0]]


def test_unique_under_vmap_and_jit():
    """Under cr.vmap each example is asked apart (examples with as many distinct values
    form a batch; others are refused, naming the shapes); cr.jit finds them at each call."""
    batch = np.array([[3.0, 1.0, 2.0], [1.0, 5.0, 0.0]])
    weights = np.array([1.0, 10.0, 100.0])
    per_example = cr.vmap(cr.grad(lambda v: cr.sum(cr.unique(v) * weights)))(batch)
    assert per_example.tolist() == [[100.0, 1.0, 10.0], [10.0, 100.0, 1.0]]
    with pytest.raises(ValueError, match=r"np\.unique gives the examples results of "
                                         r"different shapes"):
        cr.vmap(cr.unique)(np.array([[3.0, 1.0, 3.0], [1.0, 5.0, 0.0]]))
    f = cr.jit(cr.grad(lambda v: cr.sum(cr.unique(v) ** 3)))
    for data in (np.array([3.0, 1.0, 3.0, 2.0]), np.array([1.0, 1.0, 1.0, 2.0, 5.0])):
        expected = np.zeros_like(data)
        expected[np.unique(data, return_index=True)[1]] = 3 * np.unique(data) ** 2
        np.testing.assert_array_equal(f(data), expected)


NUMPY_NAMES = ["cumsum", "cumprod", "diff", "sort", "flip", "fliplr", "rot90", "roll",
               "tile", "repeat", "pad", "tril", "triu", "diagonal", "ravel", "median",
               "quantile", "percentile", "cov", "corrcoef", "arcsin", "sinh", "log2",
               "expm1", "square", "hypot", "arctan2", "logaddexp", "fmax", "fmod", "floor",
               "round", "sinc", "nan_to_num"]
NUMPY_CALLS = {
    "quantile": lambda f, x: f(x, 0.3), "percentile": lambda f, x: f(x, 30),
    "hypot": lambda f, x: f(x, x + 1), "arctan2": lambda f, x: f(x, x + 1),
    "logaddexp": lambda f, x: f(x, 2 * x), "fmax": lambda f, x: f(x, 0.6),
    "fmod": lambda f, x: f(x, 0.3), "tile": lambda f, x: f(x, 2),
    "repeat": lambda f, x: f(x, 2), "pad": lambda f, x: f(x, 1, mode="reflect"),
    "rot90": lambda f, x: f(x), "roll": lambda f, x: f(x, 1),
}
M23 = np.array([[0.1, 0.7, 0.4], [0.9, 0.3, 0.2]])


@pytest.mark.slow  # (JAX traces each function)
@pytest.mark.parametrize("name", NUMPY_NAMES)
def test_numpy_functions_on_a_tensor_run_chainrules_and_match_jax(name):
    """np.NAME(tensor) is differentiable: its gradient is jax.numpy's."""
    call = NUMPY_CALLS.get(name, lambda f, x: f(x))
    x = cr.tensor(M23, requires_grad=True)
    cr.sum(call(getattr(np, name), x) * 1.5).backward()
    jax_f = getattr(jnp, name)
    theirs = jax.grad(lambda m: jnp.sum(call(jax_f, m) * 1.5))(M23)
    np.testing.assert_allclose(x.grad, np.asarray(theirs), rtol=1e-12, atol=1e-14)


def test_linspace_differentiates_through_endpoints_in_a_graph():
    ours = cr.grad(lambda a: cr.sum(cr.linspace(a, 3.0, 4) ** 2))(1.0)
    theirs = jax.grad(lambda a: jnp.sum(jnp.linspace(a, 3.0, 4) ** 2))(1.0)
    np.testing.assert_allclose(ours, float(theirs), rtol=1e-12)
    start = cr.tensor(0.5, requires_grad=True)
    cr.sum(cr.linspace(start, 2.0, 3)).backward()
    assert start.grad.tolist() == 1.5  # d/ds of (s + (2 - s) i / 2) summed over i = 0, 1, 2


@pytest.mark.slow
def test_a_gaussian_process_marginal_likelihood_has_jaxs_gradient():
    """The program issue 16 names: a GP's negative log marginal likelihood, written with
    NumPy (cholesky, solve, slogdet, einsum) and run on Tensors, differentiated in its
    hyperparameters and its inputs, against the same program in jax.numpy."""
    rng = np.random.default_rng(16)
    inputs, targets = rng.uniform(-2.0, 2.0, 6), rng.standard_normal(6)

    def nll(np_, log_scale, log_noise, x):
        sq = (x[:, None] - x[None, :]) ** 2
        k = np_.exp(-0.5 * sq / np_.exp(2.0 * log_scale)) + np_.exp(log_noise) * np_.eye(6)
        chol = np_.linalg.cholesky(k)
        alpha = np_.linalg.solve(k, targets)
        logdet = np_.linalg.slogdet(k)[1]
        half_logdet = np_.sum(np_.log(np_.einsum("ii->i", chol)))   # the same, from L
        return (0.5 * np_.einsum("i,i->", targets, alpha) + 0.25 * logdet
                + 0.5 * half_logdet + 3.0 * np_.log(2 * np_.pi))

    args = (0.3, -1.0, inputs)
    ours = cr.grad(lambda *a: nll(np, *a), argnums=(0, 1, 2))(*args)
    theirs = jax.grad(lambda *a: nll(jnp, *a), argnums=(0, 1, 2))(*args)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)
    value = float(nll(np, *[cr.tensor(a) for a in args]).data)
    assert value == pytest.approx(float(nll(jnp, *args)), rel=1e-12)


@pytest.mark.slow
def test_third_derivatives_through_the_decompositions_match_jax():
    """Derivatives of any order: the rules of cholesky, eigh, slogdet, svd, qr, pinv and
    einsum are written with the table's operations, so grad of grad of grad (and
    forward mode over reverse mode) runs through them, and agrees with JAX."""
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    d = np.array([[0.3, -0.1, 0.2], [0.4, 0.1, -0.5], [0.0, 0.2, 0.1]])

    def f(np_, t):
        m = a + t * d
        s = m + m.T
        return (np_.sum(np_.linalg.cholesky(s) ** 2 * WEIGHTS)
                + np_.sum(np_.linalg.eigh(s)[1] ** 2 * WEIGHTS) + np_.linalg.slogdet(m)[1]
                + np_.sum(np_.linalg.svd(m, full_matrices=False)[1] ** 3)
                + np_.sum(np_.linalg.qr(m)[1] ** 2 * WEIGHTS) + np_.sum(np_.linalg.pinv(m))
                + np_.einsum("ij,jk,ki->", m, m, m))

    ours, theirs = (lambda t: f(np, t)), (lambda t: f(jnp, t))
    for _ in range(3):
        ours, theirs = cr.grad(ours), jax.grad(theirs)
        np.testing.assert_allclose(ours(0.1), float(theirs(0.1)), rtol=1e-9)
    mixed = cr.jacfwd(cr.jacfwd(cr.grad(lambda t: f(np, t))))(0.1)
    np.testing.assert_allclose(mixed, float(theirs(0.1)), rtol=1e-9)


def test_creation_functions_differentiate_through_graph_values_or_refuse_them():
    assert cr.grad(lambda a: cr.sum(cr.full((2, 3), a)))(2.0) == 6.0
    with pytest.raises(TypeError, match="arange: a bound is part of a graph"):
        cr.grad(lambda a: cr.sum(cr.arange(0, a)))(2.0)
    with pytest.raises(TypeError, match=r"x.clone\(\) for a copy in the graph"):
        cr.tensor(cr.tensor([1.0], requires_grad=True))
    assert cr.tensor(cr.tensor([1.0])).tolist() == [1.0]  # outside any graph: a copy


class Labeled:
    """A stand-in for an array of another library (xarray's DataArray, a pandas Series):
    NumPy's protocols, and its own wrapper around every result."""

    __array_priority__ = 50

    def __init__(self, values):
        self.values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self.values

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = [i.values if isinstance(i, Labeled) else i for i in inputs]
        return Labeled(getattr(ufunc, method)(*inputs, **kwargs))


def test_an_array_of_another_library_is_refused_where_it_would_lose_the_gradient():
    a = Labeled([2.0, 3.0])
    message = (r"multiply: an argument is a .*Labeled, an array type chainrule does not "
               r"differentiate through .*np.asarray")
    with pytest.raises(TypeError, match=message):
        cr.grad(lambda x: cr.sum(x * a))(np.array([1.0, 1.0]))
    with pytest.raises(TypeError, match=message):
        cr.tensor([1.0, 1.0], requires_grad=True) * a
    assert cr.grad(lambda x: cr.sum(x * np.asarray(a)))(np.array([1.0, 1.0])).tolist() \
        == [2.0, 3.0]
    assert type(cr.multiply(np.ones(2), a)) is Labeled    # no graph: NumPy's own result


def test_numpy_2s_linalg_diagonal_runs_on_the_last_two_axes_with_its_gradient():
    if not hasattr(np.linalg, "diagonal"):
        pytest.skip("NumPy 1 has no np.linalg.diagonal")
    a = np.arange(12.0).reshape(3, 2, 2)
    x = cr.tensor(a, requires_grad=True)
    np.testing.assert_array_equal(np.linalg.diagonal(x).data, np.linalg.diagonal(a))
    np.linalg.diagonal(x).sum().backward()
    np.testing.assert_array_equal(x.grad, np.broadcast_to(np.eye(2), (3, 2, 2)))


def test_an_array_of_values_among_a_graphs_arguments_is_refused_in_every_mode():
    """Values inside a NumPy array (dtype=object) carry no derivative a rule can see:
    a gradient through them would be zeros, without a word."""
    objects = np.array([cr.Value(1.0), cr.Value(2.0)], dtype=object)
    message = r"multiply: an argument is a NumPy array of Python objects"
    for transform in (cr.grad, cr.jacfwd, cr.jacrev):
        with pytest.raises(TypeError, match=message):
            transform(lambda x: cr.sum(x * objects))(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=message):
        cr.tensor([1.0, 2.0], requires_grad=True) * objects


@pytest.mark.parametrize("compute", [
    lambda t: np.vectorize(lambda v: v * 2.0)(t),
    lambda t: np.apply_along_axis(lambda row: row * 2.0, 0, t),
    lambda t: np.piecewise(t, [t > 0], [lambda v: v * 2.0]),
], ids=["vectorize", "apply_along_axis", "piecewise"])
def test_numpy_computing_through_python_refuses_a_tensor_that_requires_grad(compute):
    """np.vectorize and its kin compute new numbers through the user's Python function:
    the gradient would be lost silently, so a tensor that requires grad is refused (by
    __array__ for np.vectorize, by __array_function__ for the others), with the way
    around; its numbers (detach) and plain reads stay allowed."""
    t = cr.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"np\.\w+.*(requires grad|part of a graph).*detach"):
        compute(t)
    np.testing.assert_array_equal(compute(t.detach()), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0])   # reading the numbers
