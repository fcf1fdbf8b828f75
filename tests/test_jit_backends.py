"""cr.jit over the arrays of other libraries: torch, array-api-strict and Dask.

A program traced on another library's arrays is the same list of calls as on NumPy's;
a replay makes each call in that library (through ``chainrule.backends.ForeignArray``),
so results come back in the inputs' library and dtype, and on Dask a call of the
jitted function builds a Dask graph without running the engine's Python again: nothing
computes until ``dask.compute``. Each test compares with NumPy's numbers and counts the
traces (a replay must not trace again).
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim

torch = pytest.importorskip("torch", reason="the torch backend needs torch")
xps = pytest.importorskip("array_api_strict", reason="needs array-api-strict")
da = pytest.importorskip("dask.array", reason="the Dask backend needs dask[array]")
import dask  # noqa: E402
import dask.callbacks  # noqa: E402
from seeds_and_tolerances import per_test_generator  # noqa: E402

LIBRARIES = {
    "torch": (torch.from_numpy, lambda a: a.numpy(), torch.Tensor),
    "array_api_strict": (xps.asarray, np.asarray, type(xps.ones(1))),
    "dask": (lambda a: da.from_array(a, chunks=max(1, a.shape[0] // 2) if a.ndim else ()),
             lambda a: np.asarray(dask.compute(a)[0]), da.Array),
}

RNG = per_test_generator(7)
X = RNG.standard_normal((40, 3))
Y = (RNG.random(40) > 0.5).astype(np.float64)
W = RNG.standard_normal(3)


def convert(name, tree):
    return cr.tree_map(lambda a: LIBRARIES[name][0](np.array(a)), tree)


def back(name, tree):
    return cr.tree_map(LIBRARIES[name][1], tree)


def logistic_loss(w, X, y):
    z = X @ w
    return cr.mean(cr.logaddexp(0.0, z) - y * z) + 0.1 * cr.sum(w ** 2)


class Counted:
    """A function that counts the times it runs: once per trace under cr.jit."""

    def __init__(self, f):
        self.f, self.runs = f, 0

    def __call__(self, *args):
        self.runs += 1
        return self.f(*args)


class Computations(dask.callbacks.Callback):
    """Counts Dask's computations while active."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


@pytest.mark.parametrize("name", list(LIBRARIES))
def test_a_jitted_gradient_replays_in_the_inputs_library(name):
    loss = Counted(logistic_loss)
    step = cr.jit(cr.value_and_grad(loss))
    for scale in (1.0, 2.0, -0.5):  # new values each call: nothing frozen
        args = convert(name, (W * scale, X, Y))
        with Computations() as computations:
            value, g = step(*args)
        assert computations.count == 0  # (Dask: a graph, computed when asked)
        assert isinstance(value, LIBRARIES[name][2]) and isinstance(g, LIBRARIES[name][2])
        want = cr.value_and_grad(logistic_loss)(W * scale, X, Y)
        np.testing.assert_allclose(back(name, value), want[0], rtol=1e-13)
        np.testing.assert_allclose(back(name, g), want[1], rtol=1e-13, atol=1e-15)
    assert loss.runs == 1  # one trace, replayed twice


@pytest.mark.parametrize("name", list(LIBRARIES))
def test_the_program_says_which_library_it_runs_in(name):
    program = cr.make_program(cr.grad(logistic_loss))(*convert(name, (W, X, Y)))
    listing = str(program)
    assert f"(3,) float64 {name}" in listing.splitlines()[0]
    assert "np.matmul(X, w)" in listing


def test_float32_stays_float32_and_a_hessian_replays_on_torch():
    hessian = cr.jit(cr.hessian(logistic_loss))
    args32 = convert("torch", tuple(a.astype(np.float32) for a in (W, X, Y)))
    H = hessian(*args32)
    assert H.dtype == torch.float32 and H.shape == (3, 3)
    np.testing.assert_allclose(H.numpy(), cr.hessian(logistic_loss)(W, X, Y), rtol=1e-5)
    H64 = hessian(*convert("torch", (W, X, Y)))  # another dtype: traced again
    assert H64.dtype == torch.float64
    np.testing.assert_allclose(H64.numpy(), cr.hessian(logistic_loss)(W, X, Y),
                               rtol=1e-13)


def test_one_jitted_function_serves_numpy_and_torch_each_in_its_own_library():
    loss = Counted(logistic_loss)
    step = cr.jit(cr.grad(loss))
    for args in [(W, X, Y), convert("torch", (W, X, Y)), (W, X, Y),
                 convert("torch", (W, X, Y))]:
        g = step(*args)
        assert isinstance(g, torch.Tensor) == isinstance(args[0], torch.Tensor)
        np.testing.assert_allclose(np.asarray(g), cr.grad(logistic_loss)(W, X, Y),
                                   rtol=1e-13)
    assert loss.runs == 2  # one program per library


def test_two_libraries_in_one_jitted_call_is_an_error_naming_both():
    step = cr.jit(cr.grad(logistic_loss))
    with pytest.raises(TypeError, match="mixes arrays of torch and array_api_strict"):
        step(torch.from_numpy(W), xps.asarray(X), xps.asarray(Y))


def test_vmap_of_grad_replays_on_torch():
    def example(w, x, y):
        z = x @ w
        return cr.logaddexp(0.0, z) - y * z
    per_example = cr.jit(cr.vmap(cr.grad(example), in_axes=(None, 0, 0)))
    expected = cr.vmap(cr.grad(example), in_axes=(None, 0, 0))(W, X, Y)
    for _ in range(2):
        got = per_example(*convert("torch", (W, X, Y)))
        assert isinstance(got, torch.Tensor) and got.shape == (40, 3)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-13, atol=1e-15)


def test_a_dask_program_builds_a_graph_per_call_that_computes_on_new_data():
    step = cr.jit(cr.grad(logistic_loss))
    graphs = [step(*convert("dask", (W, X * s, Y))) for s in (1.0, 3.0)]
    assert all(isinstance(g, da.Array) for g in graphs)
    first, second = dask.compute(*graphs)
    np.testing.assert_allclose(first, cr.grad(logistic_loss)(W, X, Y), rtol=1e-13)
    np.testing.assert_allclose(second, cr.grad(logistic_loss)(W, X * 3.0, Y), rtol=1e-13)


# ---------------------------------------------------------------------------------------
# The Tensor engine: a model's training step, jitted, on torch
# ---------------------------------------------------------------------------------------

LABELS = RNG.integers(0, 3, 64)
INPUTS = RNG.standard_normal((64, 5))


def _training(convert_array, optimizer, jit, steps=4):
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
    start = np.random.default_rng(1)
    for p in model.parameters():
        p.data = convert_array(start.standard_normal(p.shape) * 0.5)
    opt = optimizer(model.parameters(), lr=0.05)
    xb, yb = cr.tensor(convert_array(INPUTS)), convert_array(LABELS)
    runs = []

    def step(xb, yb):
        runs.append(1)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    if jit:
        step = cr.jit(step)
    losses = [step(xb, yb).item() for _ in range(steps)]
    return losses, list(model.parameters()), len(runs)


@pytest.mark.parametrize("optimizer", [optim.SGD, optim.Adam])
def test_a_jitted_training_step_on_torch_tensors_is_numpys_step(optimizer):
    losses, params, runs = _training(torch.from_numpy, optimizer, jit=True, steps=6)
    # traced as often as on NumPy: for the first step (no gradients yet) and the next;
    # the model's and the optimizer's state are inputs, read anew at each replay
    assert runs == _training(lambda a: a, optimizer, jit=True)[2] == 2
    want_losses, want_params, _ = _training(lambda a: a, optimizer, jit=False, steps=6)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-13)
    for p, q in zip(params, want_params):
        assert isinstance(p.data, torch.Tensor) and isinstance(p.grad, torch.Tensor)
        np.testing.assert_allclose(p.data.numpy(), q.data, rtol=1e-12, atol=1e-14)


def test_cross_entropys_gradient_on_torch_is_torchs():
    logits = RNG.standard_normal((6, 3))
    labels = RNG.integers(0, 3, 6)
    x = cr.tensor(torch.from_numpy(logits.copy()), requires_grad=True)
    nn.functional.cross_entropy(x, torch.from_numpy(labels)).backward()
    t = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(t, torch.from_numpy(labels)).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-13, atol=1e-16)
