"""NumPy's functions on Tensors (chainrule.numpy_protocol): they run chainrule's
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
    with pytest.raises(TypeError, match=r"np\.convolve on a Tensor that is part of a graph"):
        np.convolve(x, x)
    with pytest.raises(TypeError, match=r"np\.convolve"):
        cr.grad(lambda v: cr.sum(np.convolve(v, v)))(X)
    with pytest.raises(TypeError, match=r"np\.exp with out"):
        np.exp(x, out=np.empty(3))


def test_outside_any_graph_a_numpy_function_runs_on_the_array():
    """No tensor requires grad: there is no gradient to lose."""
    x = cr.tensor(X)
    y = np.convolve(x, x)
    assert isinstance(y, cr.Tensor) and y.data.tolist() == np.convolve(X, X).tolist()


def test_functions_without_a_derivative_give_plain_answers():
    x = cr.tensor(X, requires_grad=True)
    assert np.shape(x) == (3,) and np.ndim(x) == 1 and np.size(x) == 3
    assert np.argmax(x) == 2 and np.allclose(x, X)
    less = np.zeros(3) < x
    assert isinstance(less, cr.Tensor) and less.data.tolist() == [True, False, True]
    assert np.floor(x).data.tolist() == [0.0, -2.0, 2.0]  # piecewise constant


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
