"""PyTorch's autograd surface beside torch 2.13 itself: ``torch.autograd.grad`` and
``torch.autograd.backward`` (as ``cr.autograd.grad`` and ``cr.autograd.backward``), a
tensor's hooks (``register_hook``, ``register_post_accumulate_grad_hook``,
``retains_grad``) and a module's backward hooks (``register_full_backward_hook``,
``register_full_backward_pre_hook``).

Each scenario is written once, against a small namespace (``Torch`` or ``Chainrule``
below), and run in both libraries: every gradient, every hook's call with its
arguments, and the order of the calls must agree (float64, to 1e-12). The refusals are
checked to come where torch's do, each in one line that says what was expected.
"""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn as crnn

from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(20261202)


class Torch:
    nn = torch.nn
    grad = staticmethod(torch.autograd.grad)
    backward = staticmethod(torch.autograd.backward)

    @staticmethod
    def tensor(data, requires_grad=False):
        return torch.tensor(np.asarray(data, dtype=float), dtype=torch.float64,
                            requires_grad=requires_grad)

    @staticmethod
    def lstm(size, hidden):
        return torch.nn.LSTM(size, hidden).double()

    @staticmethod
    def linear(weight, bias):
        layer = torch.nn.Linear(weight.shape[1], weight.shape[0]).double()
        with torch.no_grad():
            layer.weight.copy_(torch.tensor(weight))
            layer.bias.copy_(torch.tensor(bias))
        return layer


class Chainrule:
    nn = crnn
    grad = staticmethod(cr.autograd.grad)
    backward = staticmethod(cr.autograd.backward)

    @staticmethod
    def tensor(data, requires_grad=False):
        return cr.tensor(np.asarray(data, dtype=float), requires_grad=requires_grad)

    @staticmethod
    def lstm(size, hidden):
        return crnn.LSTM(size, hidden)

    @staticmethod
    def linear(weight, bias):
        layer = crnn.Linear(weight.shape[1], weight.shape[0])
        layer.weight.data, layer.bias.data = weight.copy(), bias.copy()
        return layer


def numbers(x):
    """Nested lists of floats (None stays None) from either library's values."""
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return [numbers(v) for v in x]
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().tolist()
    if isinstance(x, cr.Tensor):
        return np.asarray(x.data).tolist()
    if isinstance(x, (np.ndarray, float, int)):
        return np.asarray(x).tolist()
    return x  # a label of the call log


def same(scenario):
    """The scenario's record in torch and in chainrule, compared number by number."""
    theirs, ours = numbers(scenario(Torch)), numbers(scenario(Chainrule))
    assert _close(theirs, ours), f"torch: {theirs}\nchainrule: {ours}"
    return ours


def _close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and np.isclose(a, b, rtol=1e-12, atol=1e-14)
    return a == b


# ---------------------------------------------------------------------------------------
# A tensor's hooks
# ---------------------------------------------------------------------------------------

X2 = RNG.normal(size=2)


def hooks_in_order(T):
    """Two hooks on a result (the first replaces the gradient, the second sees the
    replacement), one on the leaf, a post-accumulate hook, and retain_grad()."""
    log = []
    x = T.tensor(X2, requires_grad=True)
    h = x * 3
    h.retain_grad()
    h.register_hook(lambda g: (log.append(("h1", g * 1)), g * 10)[1])
    h.register_hook(lambda g: log.append(("h2", g * 1)))
    x.register_hook(lambda g: log.append(("x", g * 1)))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad * 1)))
    (h * h).sum().backward()
    return [log, h.grad, x.grad, h.retains_grad, x.retains_grad]


def test_hooks_run_in_order_and_replace_the_gradient():
    same(hooks_in_order)


def removed_and_twice_reached(T):
    """A node reached by two paths: its hook sees the sum, once; a removed hook is not
    called; the leaf's hook runs before .grad is added to, at each backward."""
    log = []
    x = T.tensor(X2, requires_grad=True)
    h = x.sin()
    handle = h.register_hook(lambda g: log.append(("gone", g * 1)))
    h.register_hook(lambda g: log.append(("h", g * 1)))
    handle.remove()
    handle.remove()  # (again: nothing)
    x.register_hook(lambda g: -g)
    (h * h + 2 * h).sum().backward()
    (x * x).sum().backward()
    return [log, x.grad]


def test_a_hook_sees_the_sum_of_every_path_and_a_removed_one_is_not_called():
    same(removed_and_twice_reached)


def hooks_with_create_graph(T):
    """Under create_graph the hook's arithmetic is part of the gradient's graph, so the
    second derivative goes through it."""
    x = T.tensor(X2, requires_grad=True)
    h = x * x
    h.register_hook(lambda g: g * h)
    (g,) = T.grad(h.sum() * 2, x, create_graph=True)
    (gg,) = T.grad(g.sum(), x)
    return [g, gg]


def test_a_hook_under_create_graph_is_differentiated_too():
    same(hooks_with_create_graph)


@pytest.mark.parametrize("lib", [Torch, Chainrule], ids=["torch", "chainrule"])
def test_hooks_are_refused_where_torchs_are(lib):
    constant = lib.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does(n't| not) require grad"):
        constant.register_hook(lambda g: g)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf|only a leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    x.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match="size|shape"):
        (x * 2).sum().backward()
    y = lib.tensor([1.0, 2.0], requires_grad=True)
    y.register_hook(lambda g: g.float())
    with pytest.raises(RuntimeError, match="type|dtype"):
        (y * 2).sum().backward()


def test_a_hook_gets_a_tensor_and_may_return_an_array():
    x = cr.tensor([1.0, -3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(type(g).__name__))
    x.register_hook(lambda g: np.clip(g.data, -1.0, 1.0))
    (x * 4).sum().backward()
    assert seen == ["Tensor"]
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])
    assert type(x.grad) is np.ndarray


# ---------------------------------------------------------------------------------------
# autograd.grad and autograd.backward
# ---------------------------------------------------------------------------------------

def grads_of_many(T):
    x = T.tensor(X2, requires_grad=True)
    unused = T.tensor([3.0], requires_grad=True)
    h = x.sin()
    y = (h * h).sum()
    return [
        T.grad(y, [x, h], retain_graph=True),
        T.grad(y, [x, unused], allow_unused=True, retain_graph=True),
        T.grad(y, [x, unused], allow_unused=True, materialize_grads=True,
               retain_graph=True),
        T.grad([y, h], x, grad_outputs=[T.tensor(2.0), T.tensor([1.0, -1.0])],
               retain_graph=True),
        T.grad([y, y], x, retain_graph=True),      # one output twice: twice its gradient
        T.grad(x.sum(), x),                         # a leaf's own sum
        T.grad(x, x, grad_outputs=T.tensor([2.0, 3.0])),   # an output that is a leaf
        x.grad,                                     # untouched by every call
    ]


def test_grad_of_several_outputs_and_inputs():
    same(grads_of_many)


def higher_order(T):
    x = T.tensor(X2, requires_grad=True)
    y = (x ** 3).sum() * x.sum()
    (g,) = T.grad(y, x, create_graph=True)
    (gg,) = T.grad(g.sum(), x, create_graph=True)
    (ggg,) = T.grad((gg * gg).sum(), x)
    return [g, gg, ggg, g.requires_grad]


def test_grad_with_create_graph_goes_to_any_order():
    same(higher_order)


def batched_rows(T):
    x = T.tensor(X2, requires_grad=True)
    z = x.sin() * x.sum()
    return T.grad(z, x, grad_outputs=T.tensor(np.eye(2)), is_grads_batched=True)


def test_grads_batched_give_the_rows_of_the_jacobian():
    same(batched_rows)


def retained_and_hooked_during_grad(T):
    """autograd.grad runs the hooks on its way and fills retained results' .grad (as
    torch's); it walks nothing beyond the inputs, so a hook past them is not called."""
    log = []
    x = T.tensor(X2, requires_grad=True)
    a = x * 2
    a.register_hook(lambda g: log.append(("a", g * 1)))
    h = a * 3
    h.retain_grad()
    h.register_hook(lambda g: log.append(("h", g * 1)))
    x.register_hook(lambda g: (log.append(("x", g * 1)), g * 2)[1])
    y = (h * h).sum()
    first = T.grad(y, x, retain_graph=True)
    second = T.grad(y, h)                      # stops at h: a's hook is not called
    return [first, second, log, h.grad, x.grad]


def test_grad_runs_hooks_up_to_its_inputs_and_fills_retained_results():
    same(retained_and_hooked_during_grad)


def backward_of_several(T):
    log = []
    x = T.tensor(X2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad * 1)))
    h = x * 3
    y = (h * h).sum()
    T.backward(y, inputs=[h], retain_graph=True)          # only h's .grad
    first = [h.grad, x.grad]
    T.backward([y, h], grad_tensors=[T.tensor(1.0), T.tensor([1.0, 2.0])])
    return [first, x.grad, log]


def test_backward_of_several_outputs_and_of_chosen_inputs():
    same(backward_of_several)


@pytest.mark.parametrize("lib", [Torch, Chainrule], ids=["torch", "chainrule"])
def test_grad_refuses_where_torchs_does(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    unused = lib.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="not have been used|not used"):
        lib.grad(y, [x, unused], retain_graph=True)
    with pytest.raises(RuntimeError, match="scalar"):
        lib.grad(x * 2, x)
    with pytest.raises(RuntimeError, match="does not require grad|does not have a grad_fn"):
        lib.grad(lib.tensor(1.0), x)
    lib.grad(y, x)
    with pytest.raises(RuntimeError, match="second time|freed"):
        lib.grad(y, x)


def test_the_autograd_drop_in_keeps_its_function_form():
    assert cr.autograd.grad(lambda t: t ** 3)(2.0) == 12.0


# ---------------------------------------------------------------------------------------
# A module's backward hooks
# ---------------------------------------------------------------------------------------

def two_outputs(T):
    class Two(T.nn.Module):
        def forward(self, a, b, c=None):
            return a * b, a + b

    log = []
    m = Two()
    m.register_full_backward_pre_hook(
        lambda mod, go: (log.append(("pre", go)),
                         tuple(None if g is None else g * 2 for g in go))[1])
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", gi, go)))
    a, b = T.tensor(X2, requires_grad=True), T.tensor([3.0, 4.0])
    p, q = m(a, b)                         # q gets no gradient: None in grad_output
    p.sum().backward()
    first = a.grad * 1
    b2 = T.tensor([3.0, 4.0], requires_grad=True)
    p, q = m(a, b2, c=T.tensor([1.0, 1.0], requires_grad=True))  # (a keyword: not counted)
    (p.sum() + 10 * q.sum()).backward()
    return [log, first, a.grad, b2.grad]


def test_module_hooks_see_each_input_and_output_as_torchs_do():
    same(two_outputs)


W, B = RNG.normal(size=(3, 4)), RNG.normal(size=3)
W2, B2 = RNG.normal(size=(1, 3)), RNG.normal(size=1)
XS = RNG.normal(size=(5, 4))


def sequential_with_hooks(T):
    """Hooks on layers inside a Sequential (whose Linear and ReLU chainrule fuses when
    nothing watches them), replacing gradients on both sides, prepended and removed."""
    log = []
    model = T.nn.Sequential(T.linear(W, B), T.nn.ReLU(), T.linear(W2, B2))
    model[0].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
    model[0].register_full_backward_hook(lambda m, gi, go: log.append(("first", gi, go)),
                                         prepend=True)
    gone = model[1].register_full_backward_hook(lambda m, gi, go: log.append("gone"))
    gone.remove()
    model[2].register_full_backward_pre_hook(lambda m, go: (go[0].clamp(-0.2, 0.2),))
    x = T.tensor(XS, requires_grad=True)
    ((model(x) - 1.0) ** 2).mean().backward()
    return [log, x.grad, model[0].weight.grad, model[2].weight.grad]


def test_hooks_on_layers_of_a_sequential_replace_gradients_as_torchs():
    same(sequential_with_hooks)


def no_input_requires_grad(T):
    log = []
    layer = T.linear(W, B)
    layer.register_full_backward_hook(lambda m, gi, go: log.append(("full", gi, go)))
    layer(T.tensor(XS)).sum().backward()     # the data needs no gradient
    return [log, layer.weight.grad]


def test_without_inputs_that_require_grad_the_hook_has_none_for_them():
    with pytest.warns(UserWarning):  # (torch says so; chainrule's docstring does)
        theirs = numbers(no_input_requires_grad(Torch))
    assert _close(theirs, numbers(no_input_requires_grad(Chainrule)))


def recurrent_outputs(T):
    log = []
    lstm = T.lstm(2, 3)
    lstm.register_full_backward_hook(
        lambda m, gi, go: log.append((len(gi), len(go), go[1] is None)))
    out, (h, c) = lstm(T.tensor(np.ones((4, 1, 2)), requires_grad=True))
    out.sum().backward()
    return log


def test_only_top_level_outputs_count():
    same(recurrent_outputs)


@pytest.mark.parametrize("lib", [Torch, Chainrule], ids=["torch", "chainrule"])
def test_module_hooks_are_refused_where_torchs_are(lib):
    layer = lib.linear(W, B)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="number of grad_input|tuple of 1"):
        layer(lib.tensor(XS, requires_grad=True)).sum().backward()
    layer = lib.linear(W, B)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0][:1],))
    with pytest.raises(RuntimeError, match="size|shape"):
        layer(lib.tensor(XS, requires_grad=True)).sum().backward()


def test_backward_hooks_are_refused_inside_a_transform():
    layer = crnn.Linear(4, 3)
    layer.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="backward hooks run in a Tensor's backward"):
        cr.grad(lambda x: layer(x).sum())(XS)


def test_a_jitted_step_replays_what_the_hooks_computed():
    def model():
        net = crnn.Sequential(Chainrule.linear(W, B), crnn.ReLU(), Chainrule.linear(W2, B2))
        net[0].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
        net[2].register_full_backward_pre_hook(lambda m, go: (go[0].clamp(-0.2, 0.2),))
        net[2].weight.register_hook(lambda g: g * 3)
        return net

    def step(net, xs):
        x = cr.tensor(xs, requires_grad=True)
        loss = ((net(x) - 1.0) ** 2).mean()
        net.zero_grad()
        loss.backward()
        return loss, x.grad, net[0].weight.grad, net[2].weight.grad

    eager_net, jit_net = model(), model()
    jitted = cr.jit(step)
    for k in range(3):
        xs = XS + k
        for a, b in zip(step(eager_net, xs), jitted(jit_net, xs)):
            np.testing.assert_allclose(np.asarray(getattr(a, "data", a)),
                                       np.asarray(getattr(b, "data", b)), rtol=1e-12)


# ---------------------------------------------------------------------------------------
# torch.autograd.functional
# ---------------------------------------------------------------------------------------

U3, V2 = RNG.normal(size=3), RNG.normal(size=2)


def functional_results(T, F):
    """Every function of torch.autograd.functional on one and on several inputs and
    outputs, in both modes, with and without create_graph."""
    a, b = T.tensor(U3, requires_grad=True), T.tensor(V2)

    def two(x, y):  # two inputs, two outputs
        return (x.sin() * y.sum(), (x * x).sum() * y)

    def scalar(x, y):
        return (x ** 3).sum() * (y * y).sum() + (x.sum() * y).sum()

    out = [F.jacobian(two, (a, b)),
           F.jacobian(lambda x: x.tanh() * x, a),
           F.jacobian(two, (a, b), vectorize=True, strategy="forward-mode"),
           F.hessian(scalar, (a, b)),
           F.hessian(lambda x: (x.exp() * x).sum(), a),
           F.vjp(two, (a, b), (T.tensor(U3), T.tensor(V2))),
           F.vjp(lambda x: (x ** 2).sum(), a),
           F.jvp(two, (a, b), (T.tensor(U3), T.tensor(V2))),
           F.hvp(scalar, (a, b), (T.tensor(U3), T.tensor(V2))),
           F.vhp(lambda x: (x.exp() * x).sum(), a, T.tensor(U3))]
    J = F.jacobian(lambda x: x.tanh() * x, a, create_graph=True)
    (d,) = T.grad(J.sum(), a)
    return out + [J.requires_grad, d]


def test_autograd_functional_as_torchs():
    import torch.autograd.functional as theirs
    import chainrule.autograd.functional as ours
    a = numbers(functional_results(Torch, theirs))
    b = numbers(functional_results(Chainrule, ours))
    assert _close(a, b), f"torch: {a}\nchainrule: {b}"


@pytest.mark.parametrize("lib", ["torch", "chainrule"])
def test_autograd_functional_refuses_where_torchs_does(lib):
    import torch.autograd.functional as theirs
    import chainrule.autograd.functional as ours
    T, F = (Torch, theirs) if lib == "torch" else (Chainrule, ours)
    a, b = T.tensor(U3, requires_grad=True), T.tensor(V2)
    with pytest.raises(RuntimeError, match="independent of input 1|not depend on input 1"):
        F.jacobian(lambda x, y: x * 2, (a, b), strict=True)
    with pytest.raises(RuntimeError, match="can only be None"):
        F.vjp(lambda x: x * 2, a)
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(lambda x: x * 2, a)
