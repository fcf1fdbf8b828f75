"""cr.checkpoint / cr.remat (JAX's gradient checkpointing) against jax.checkpoint, in
float64.

Each function is written once against a namespace (chainrule's or JAX's: the transform,
numpy, the policies, checkpoint_name), so the same source runs under both, and values,
gradients and second derivatives are compared. Then what checkpointing is for: that the
backward pass really computes again what the forward pass did not keep (calls counted),
that a policy keeps what it says, and that the peak memory of the gradient of a deep
chain falls.
"""

import functools
import tracemalloc

import jax
import jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name as jax_checkpoint_name
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals

jax.config.update("jax_enable_x64", True)

CR = dict(checkpoint=cr.checkpoint, np=cnp, name=checkpoint_name,
          policies=cr.checkpoint_policies, grad=cr.grad)
JAX = dict(checkpoint=jax.checkpoint, np=jnp, name=jax_checkpoint_name,
           policies=jax.checkpoint_policies, grad=jax.grad)
POLICIES = [None, "nothing_saveable", "everything_saveable", "dots_saveable",
            "dots_with_no_batch_dims_saveable", ("save_only_these_names", "h"),
            ("save_any_names_but_these", "h"), ("save_anything_except_these_names", "h")]


def _policy(lib, spec):
    if spec is None:
        return None
    if isinstance(spec, tuple):
        return getattr(lib["policies"], spec[0])(*spec[1:])
    return getattr(lib["policies"], spec)


def _data(seed):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(4, 5)) / 2, rng.normal(size=(5, 3)) / 2,
            rng.normal(size=(6, 4)))


def _mlp(lib, policy):
    """Two layers, a named value, a checkpoint inside: the loss of W1, W2 at x."""
    np_ = lib["np"]

    def layer(w, x):
        h = lib["name"](x @ w, "h")
        return np_.tanh(np_.sin(h) + h)
    layer = lib["checkpoint"](layer, policy=_policy(lib, policy))

    def loss(w1, w2, x):
        return np_.sum(layer(w2, layer(w1, x)) ** 2)
    return loss


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_values_and_gradients_are_jaxs(policy):
    w1, w2, x = _data(1)
    ours, theirs = _mlp(CR, policy), _mlp(JAX, policy)
    _close(ours(w1, w2, x), theirs(w1, w2, x))
    for g_ours, g_theirs in zip(cr.grad(ours, argnums=(0, 1, 2))(w1, w2, x),
                                jax.grad(theirs, argnums=(0, 1, 2))(w1, w2, x)):
        _close(g_ours, g_theirs)


@pytest.mark.parametrize("policy", [None, "dots_saveable", ("save_only_these_names", "h")],
                         ids=str)
def test_second_derivatives_are_jaxs(policy):
    w1, w2, x = _data(2)
    ours = functools.partial(_mlp(CR, policy), w2=w2, x=x)
    theirs = functools.partial(_mlp(JAX, policy), w2=w2, x=x)
    v = np.random.default_rng(3).normal(size=w1.shape)
    # Hessian-vector product as grad of grad: the checkpoint differentiated twice
    hvp_ours = cr.grad(lambda w: cr.sum(cr.grad(ours)(w) * v))(w1)
    hvp_theirs = jax.grad(lambda w: jnp.sum(jax.grad(theirs)(w) * v))(w1)
    _close(hvp_ours, hvp_theirs)


def test_hessian_of_a_checkpoint_is_jaxs():
    def f(lib):
        np_ = lib["np"]
        return lib["checkpoint"](lambda x: np_.sum(np_.sin(x) * np_.exp(x[::-1])))
    x = np.random.default_rng(4).normal(size=4)
    _close(cr.hessian(f(CR))(x), jax.hessian(f(JAX))(x))
    _close(cr.jacfwd(cr.grad(f(CR)))(x), jax.jacfwd(jax.grad(f(JAX)))(x))


def _custom_pair(lib, custom_vjp):
    """A custom_vjp function of two outputs (its bwd a rule of its own), checkpointed."""
    np_ = lib["np"]

    @custom_vjp
    def pair(x):
        return np_.sin(x), x ** 2

    def fwd(x):
        return pair(x), x

    def bwd(x, g):
        return (g[0] * np_.cos(x) + 2 * x * g[1],)
    pair.defvjp(fwd, bwd)
    return pair


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_a_custom_vjp_function_of_two_outputs_inside_a_checkpoint(policy):
    # (a policy that keeps the custom function's result: the second run computes it
    # again, since its forward also notes how its outputs are laid out)
    def loss(lib, custom_vjp):
        np_, pair = lib["np"], _custom_pair(lib, custom_vjp)
        inner = lib["checkpoint"](lambda x: np_.sum(pair(x)[0] * pair(x)[1] + x),
                                  policy=_policy(lib, policy))
        return lambda x: inner(np_.tanh(x))
    x = np.random.default_rng(5).normal(size=4)
    ours, theirs = loss(CR, cr.custom_vjp), loss(JAX, jax.custom_vjp)
    _close(ours(x), theirs(x))
    _close(cr.grad(ours)(x), jax.grad(theirs)(x))
    _close(cr.jit(cr.grad(ours))(x), jax.grad(theirs)(x))


def test_under_jvp_vmap_jit_and_jacrev_as_jax():
    def f(lib):
        np_ = lib["np"]
        return lib["checkpoint"](lambda w, x: np_.tanh(x @ w) * np_.cos(x[:, :1]))
    w, _, x = _data(5)
    t = np.random.default_rng(6).normal(size=w.shape)
    for a, b in zip(cr.jvp(lambda w: f(CR)(w, x), (w,), (t,)),
                    jax.jvp(lambda w: f(JAX)(w, x), (w,), (t,))):
        _close(a, b)
    loss = lambda lib: lambda w, x: lib["np"].sum(f(lib)(w, x) ** 2)  # noqa: E731
    xs = np.stack([x, x + 1.0, 2.0 * x])
    _close(cr.vmap(cr.grad(loss(CR)), in_axes=(None, 0))(w, xs),
           jax.vmap(jax.grad(loss(JAX)), in_axes=(None, 0))(w, xs))
    _close(cr.grad(lambda w: cr.sum(cr.vmap(lambda x: loss(CR)(w, x))(xs)))(w),
           jax.grad(lambda w: jnp.sum(jax.vmap(lambda x: loss(JAX)(w, x))(xs)))(w))
    _close(cr.jit(cr.grad(loss(CR)))(w, x), jax.jit(jax.grad(loss(JAX)))(w, x))
    _close(cr.jit(cr.grad(loss(CR)))(w, 2.0 * x), jax.grad(loss(JAX))(w, 2.0 * x))
    _close(cr.jacrev(lambda w: f(CR)(w, x))(w), jax.jacrev(lambda w: f(JAX)(w, x))(w))


def test_closures_pytrees_keywords_and_static_arguments_as_jax():
    def f(lib):
        np_ = lib["np"]

        def outer(scale, params, x):
            @functools.partial(lib["checkpoint"], static_argnums=(1,))
            def block(p, power, x=None):
                return {"y": np_.sin(x @ p["w"]) ** power * scale, "n": p["b"] * 2.0}
            out = block(params, 2, x=x)
            return np_.sum(out["y"]) + np_.sum(out["n"] ** 2)
        return outer
    w, _, x = _data(7)
    params = {"w": w, "b": np.arange(3.0)}
    ours = cr.grad(f(CR), argnums=(0, 1))(1.5, params, x)
    theirs = jax.grad(f(JAX), argnums=(0, 1))(1.5, params, x)
    _close(ours[0], theirs[0])  # the derivative by a value the checkpoint closed over
    _close(ours[1]["w"], theirs[1]["w"])
    _close(ours[1]["b"], theirs[1]["b"])


def test_a_closed_over_weight_and_integer_outputs():
    w, _, x = _data(8)

    def loss(w):
        @cr.checkpoint
        def block(x):
            y = cr.tanh(x @ w)
            return y, cr.argmax(y, axis=1)
        y, idx = block(x)
        assert idx.dtype.kind == "i"
        return cr.sum(y[np.arange(len(idx)), idx])

    def plain(w):
        y = cr.tanh(x @ w)
        return cr.sum(y[np.arange(6), cr.argmax(y, axis=1)])
    _close(cr.grad(loss)(w), cr.grad(plain)(w))


def test_a_closed_over_value_returned_as_it_is():
    w = np.arange(4.0).reshape(2, 2)

    def loss(w):
        doubled, same, product = cr.checkpoint(lambda x: (2.0 * x, w, w @ w))(1.0)
        return cr.sum(same * doubled) + cr.sum(product)
    _close(cr.grad(loss)(w), 2.0 + cr.grad(lambda w: cr.sum(w @ w))(w))


def test_a_checkpoint_inside_a_checkpoint():
    def f(lib):
        np_, cp = lib["np"], lib["checkpoint"]
        inner = cp(lambda x: np_.sin(x) * x)
        return cp(lambda x: np_.sum(inner(inner(x)) ** 2))
    x = np.linspace(-1.0, 1.0, 5)
    _close(cr.grad(f(CR))(x), jax.grad(f(JAX))(x))
    _close(cr.grad(lambda x: cr.sum(cr.grad(f(CR))(x)))(x),
           jax.grad(lambda x: jnp.sum(jax.grad(f(JAX))(x)))(x))


def test_tensor_backward_through_nn_modules():
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(5, 8), cr.nn.Tanh(), cr.nn.Linear(8, 8),
                             cr.nn.Tanh())
    head = cr.nn.Linear(8, 1)
    x = cr.tensor(np.random.default_rng(9).normal(size=(4, 5)))

    def grads(block):
        model.zero_grad()
        head.zero_grad()
        head(block(x)).sum().backward()
        return [p.grad.copy() for p in list(model.parameters()) + list(head.parameters())]
    plain, remat = grads(model), grads(cr.checkpoint(model))
    assert len(plain) == 6
    for a, b in zip(plain, remat):
        _close(a, b)
    out = cr.checkpoint(model)(x)
    assert isinstance(out, cr.Tensor) and out.requires_grad


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_training_steps_through_checkpointed_blocks(jit):
    """SGD steps of a network of checkpointed blocks, eager and under cr.jit (the
    backward pass's second runs replayed by the program): the losses of the plain
    network, step by step."""
    def losses(wrap, jit):
        cr.manual_seed(0)
        blocks = [cr.nn.Sequential(cr.nn.Linear(6, 6), cr.nn.Tanh(), cr.nn.Linear(6, 6),
                                   cr.nn.Tanh()) for _ in range(3)]
        x = cr.tensor(np.random.default_rng(14).normal(size=(5, 6)))
        opt = cr.optim.SGD([p for b in blocks for p in b.parameters()], lr=0.1)

        def step(x):
            opt.zero_grad()
            h = x
            for block in blocks:
                h = wrap(block)(h)
            loss = cr.sum(h ** 2)
            loss.backward()
            opt.step()
            return loss
        step = cr.jit(step) if jit else step
        return [float(step(x)) for _ in range(4)]
    expected = losses(lambda block: block, False)
    np.testing.assert_allclose(losses(cr.checkpoint, jit), expected, rtol=1e-12)
    assert len(set(expected)) == 4  # (the weights moved)


def test_a_module_checkpointed_keeps_its_graph_small():
    """What .backward() walks: one node for the checkpointed block, not one per
    operation inside it."""
    cr.manual_seed(1)
    model = cr.nn.Sequential(*[m for _ in range(5) for m in (cr.nn.Linear(4, 4),
                                                             cr.nn.Tanh())])
    x = cr.tensor(np.ones((2, 4)), requires_grad=True)
    plain, remat = model(x), cr.checkpoint(model)(x)
    assert remat._op is not None and "checkpoint" in remat._op.name
    assert x in remat._prev and len(plain._prev) == 1 and plain._prev[0] is not x


def _counted(calls):
    """An operation that counts its forward runs (sin, with its rules)."""
    def forward(x):
        calls.append(1)
        return np.sin(x)
    prim = cr.Primitive(forward, "counted")
    prim.defvjp(lambda g, ans, x: g * cr.cos(x))
    prim.defjvp(lambda t, ans, x: t * cr.cos(x))
    return prim


def test_the_backward_pass_runs_the_function_again():
    runs = []

    def f(x):
        runs.append(1)
        return cr.sum(cr.sin(cr.sin(x)))
    x = np.linspace(0.0, 1.0, 3)
    cr.grad(f)(x)
    assert len(runs) == 1
    runs.clear()
    cr.grad(cr.checkpoint(f))(x)
    assert len(runs) == 2  # forward, then again backward
    runs.clear()
    cr.checkpoint(f)(x)      # no derivative asked: once
    cr.jvp(cr.checkpoint(f), (x,), (x,))
    assert len(runs) == 2


@pytest.mark.parametrize("policy,runs", [
    (None, 2), (cr.checkpoint_policies.nothing_saveable, 2),
    (cr.checkpoint_policies.everything_saveable, 1),
    (cr.checkpoint_policies.dots_saveable, 2),
    (cr.checkpoint_policies.save_only_these_names("s"), 1),
    (cr.checkpoint_policies.save_only_these_names("other"), 2),
    (cr.checkpoint_policies.save_any_names_but_these("s"), 2),
    (cr.checkpoint_policies.save_any_names_but_these("other"), 1),
    (cr.checkpoint_policies.save_anything_except_these_names("s"), 1),
    (cr.checkpoint_policies.save_from_both_policies(
        cr.checkpoint_policies.dots_saveable,
        cr.checkpoint_policies.save_only_these_names("s")), 1),
    (cr.checkpoint_policies.save_from_both_policies(
        cr.checkpoint_policies.dots_saveable,
        cr.checkpoint_policies.save_only_these_names("t")), 2),
    (lambda prim, *args, **kwargs: prim.name == "counted", 1)])
def test_a_policy_keeps_what_it_says(policy, runs):
    """The operation's forward runs once where the policy keeps its result (directly
    or by the name of its value), twice where the backward pass computes it again."""
    calls = []
    counted = _counted(calls)

    def f(x):
        return cr.sum(cr.tanh(checkpoint_name(counted(x * 2.0), "s")) ** 2)
    x = np.linspace(-1.0, 1.0, 4)
    expected = cr.grad(f)(x)
    calls.clear()
    _close(cr.grad(cr.checkpoint(f, policy=policy))(x), expected)
    assert len(calls) == runs


def test_dots_saveable_does_not_compute_products_again():
    products = []
    original = cr.matmul.forward

    def f(w, x):
        return cr.sum(cr.tanh(cr.tanh(x @ w) @ w.T))
    w, _, x = _data(10)
    try:
        cr.matmul.forward = lambda *a, **k: products.append(1) or original(*a, **k)
        cr.grad(f)(w, x)
        plain = len(products)  # 2 forward, 3 in the backward pass (x needs no gradient)
        for policy, again in ((None, 2), (cr.checkpoint_policies.dots_saveable, 0)):
            products.clear()
            cr.grad(cr.checkpoint(f, policy=policy))(w, x)
            assert len(products) == plain + again, policy
    finally:
        cr.matmul.forward = original
    assert plain == 5


def test_saved_residuals_lists_what_a_policy_keeps(capsys):
    def f(w, x):
        h = checkpoint_name(x @ w, "h")
        return cr.sin(cr.einsum("ij,jk->ik", cr.tanh(h), w.T))
    w, _, x = _data(11)
    P = cr.checkpoint_policies
    arguments = [((4, 5), np.dtype(np.float64), "the argument w"),
                 ((6, 4), np.dtype(np.float64), "the argument x")]
    assert saved_residuals(f, w, x, policy=P.nothing_saveable) == arguments
    assert saved_residuals(cr.checkpoint(f), w, x) == arguments
    dots = saved_residuals(cr.checkpoint(f, policy=P.dots_saveable), w, x)[2:]
    assert [(s, what) for s, _, what in dots] == [((6, 5), "output of matmul"),
                                                  ((6, 4), "output of einsum")]
    named = saved_residuals(f, w, x, policy=P.save_only_these_names("h"))[2:]
    assert [(s, what) for s, _, what in named] == [((6, 5), "named 'h'")]
    every = saved_residuals(f, w, x)[2:]  # (a plain function: all; the name: its matmul)
    assert [what.split()[-1] for _, _, what in every] == ["'h'", "tanh", "transpose",
                                                          "einsum", "sin"]
    print_saved_residuals(f, w, x, policy=P.dots_with_no_batch_dims_saveable)
    assert capsys.readouterr().out == ("f64[4,5] from the argument w\n"
                                       "f64[6,4] from the argument x\n"
                                       "f64[6,5] output of matmul\n"
                                       "f64[6,4] output of einsum\n")


@pytest.mark.parametrize("policy", ["dots_saveable", ("save_only_these_names", "h"),
                                    "nothing_saveable", "dots_with_no_batch_dims_saveable",
                                    ("save_any_names_but_these", "g")], ids=str)
def test_print_saved_residuals_prints_jaxs_lines(policy, capsys):
    """The same lines as JAX's, but for where each value was computed (JAX's end
    with its place in the source) and the products' name (JAX's dot_general)."""
    def layer(lib):
        np_ = lib["np"]

        def layer(w, x):
            h = lib["name"](x @ w, "h")
            return np_.tanh(np_.sin(h) @ w.T)
        return lib["checkpoint"](layer, policy=_policy(lib, policy))
    w, _, x = _data(13)
    jax.ad_checkpoint.print_saved_residuals(layer(JAX), w, x)
    theirs = [line.split(" from <")[0].split(" from /")[0].replace("dot_general", "matmul")
              for line in capsys.readouterr().out.splitlines()]
    print_saved_residuals(layer(CR), w, x)
    assert capsys.readouterr().out.splitlines() == theirs
    assert len(theirs) >= 2


def test_dots_with_no_batch_dims():
    P = cr.checkpoint_policies
    assert P.dots_with_no_batch_dims_saveable(cr.matmul, np.ones((2, 3)), np.ones(3))
    assert not P.dots_with_no_batch_dims_saveable(cr.matmul, np.ones((4, 2, 3)),
                                                  np.ones((4, 3, 2)))
    einsum = type("op", (), {"name": "einsum"})()  # (the policy reads the subscripts)
    assert P.dots_with_no_batch_dims_saveable(einsum, subscripts="ij,jk->ik")
    assert not P.dots_with_no_batch_dims_saveable(einsum, subscripts="bij,bjk->bik")
    assert not P.dots_with_no_batch_dims_saveable(cr.sin, np.ones(2))
    assert P.checkpoint_dots is P.dots_saveable


def test_the_spellings_of_jax():
    from chainrule.ad_checkpoint import checkpoint
    x = np.linspace(0.0, 1.0, 3)
    expected = np.cos(np.sin(x)) * np.cos(x)
    P = cr.checkpoint_policies

    @cr.checkpoint
    def a(x):
        return cr.sum(cr.sin(cr.sin(x)))

    @functools.partial(cr.checkpoint, policy=P.dots_saveable, prevent_cse=False)
    def b(x):
        return cr.sum(cr.sin(cr.sin(x)))

    @cr.remat(policy=P.everything_saveable)
    def c(x):
        return cr.sum(cr.sin(cr.sin(x)))
    for f in (a, b, c, checkpoint(lambda x: cr.sum(cr.sin(cr.sin(x)))), cr.remat(a)):
        _close(cr.grad(f)(x), expected)
    assert a.__name__ == "a" and checkpoint is cr.remat
    assert cr.ad_checkpoint.checkpoint_name is checkpoint_name


def test_the_checkpoint_module_is_still_the_module():
    """cr.checkpoint is JAX's transform when called, and chainrule's save/load
    module otherwise (the same word in both libraries)."""
    import chainrule.checkpoint
    from chainrule.checkpoint import CheckpointError, load_header
    assert chainrule.checkpoint is cr.checkpoint
    assert cr.checkpoint.load_header is load_header
    assert issubclass(CheckpointError, ValueError)
    assert callable(cr.checkpoint) and cr.checkpoint.save is cr.save


def test_refusals_name_the_operation():
    with pytest.raises(TypeError, match="checkpoint: expected a function"):
        cr.checkpoint(3.0)
    with pytest.raises(TypeError, match="policy must be a function"):
        cr.checkpoint(cr.sin, policy="dots")
    with pytest.raises(TypeError, match="static_argnums must be ints"):
        cr.checkpoint(cr.sin, static_argnums=("x",))
    with pytest.raises(TypeError, match="checkpoint_name: expected a name"):
        checkpoint_name(1.0, 3)
    with pytest.raises(TypeError, match="save_only_these_names: expected names"):
        cr.checkpoint_policies.save_only_these_names(1)

    state = {"n": 0}

    def moody(x):  # closes over a different number of values on its second run
        state["n"] += 1
        ws = [w * 1.0 for _ in range(state["n"])]
        return cr.sum(functools.reduce(lambda a, b: a * b, ws, x))
    w = cr.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(ValueError, match="same operations each time"):
        cr.checkpoint(moody)(np.ones(3)).backward()


def _deep_chain_peak(checkpointed, layers=200, width=1000, block=10):
    rng = np.random.default_rng(12)
    w, b, x = rng.normal(size=width), rng.normal(size=width), rng.normal(size=(10, width))

    def steps(x, w, b):
        for _ in range(block):
            x = cr.tanh(x * w + b)
        return x
    step = cr.checkpoint(steps) if checkpointed else steps

    def loss(x, w, b):
        for _ in range(layers // block):
            x = step(x, w, b)
        return cr.sum(x)
    tracemalloc.start()
    try:
        grads = cr.grad(loss, argnums=(0, 1, 2))(x, w, b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, grads


def test_the_gradient_of_a_deep_chain_takes_less_memory():
    plain, expected = _deep_chain_peak(False)
    remat, grads = _deep_chain_peak(True)
    for a, b in zip(grads, expected):
        _close(a, b)
    assert remat < 0.6 * plain, (remat, plain)
    assert plain > 30e6  # (200 layers of 3 arrays of 80 kB: what there is to save)


def test_saved_residuals_name_a_leaf_of_a_container_by_its_key_path():
    """As JAX's print_saved_residuals does (``from the argument params[0][0]``): the
    argument's name, then the leaf's key path."""
    from chainrule.ad_checkpoint import saved_residuals

    def f(params, x):
        for weight, bias in params:
            x = cr.sin(weight @ x + bias)
        return cr.sum(x)
    params = [(np.ones((2, 2)), np.ones(2)), (np.ones((2, 2)), np.ones(2))]
    named = [what for _, _, what in saved_residuals(f, params, np.ones(2))
             if what.startswith("the argument")]
    assert named == ["the argument params[0][0]", "the argument params[0][1]",
                     "the argument params[1][0]", "the argument params[1][1]",
                     "the argument x"]
    assert saved_residuals(lambda d: cr.sum(cr.sin(d["a"])), {"a": np.ones(2)})[0][2] \
        == "the argument d['a']"
