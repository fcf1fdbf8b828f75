"""``chainrule.func`` against ``torch.func``, float64: torch.func's programs, ported by
changing the imports, give torch's numbers.

The models are built in both libraries from the same weights (``load_torch_state_dict``:
chainrule's Sequential names its layers ``layers.0``, torch's ``0``, so the dicts of
parameters are compared name by name through :func:`torch_name`). Values agree to 1e-12
relative (and 1e-13 absolute, for entries that are zero up to rounding).

1. per-example gradients: ``vmap(grad(compute_loss), in_dims=(None, None, 0, 0))``, torch's
   tutorial, and the same under cr.jit;
2. model ensembling: ``stack_module_state`` and ``vmap`` over the stacked dicts;
3. Jacobians and Hessians of ``functional_call`` in the parameter dict;
4. the transforms' conventions: grad_and_value's order and aux, vjp, jvp (strict too),
   linearize, vmap's keyword arguments, randomness and chunk_size, functionalize;
5. ``functional_call`` itself: BatchNorm's buffers (running statistics updated in the
   arrays given, as torch updates the tensors given), tied weights, the module restored
   after an exception, a replaced attribute written back, and the refusals (strict,
   unknown names, names in two dicts).
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule.func import (functional_call, grad, grad_and_value, hessian, jacfwd,
                            jacrev, jvp, linearize, stack_module_state, vjp, vmap)
from seeds_and_tolerances import per_test_generator

torch = pytest.importorskip("torch")
tf = torch.func

RNG = per_test_generator(47)


def t64(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def torch_name(name):
    """chainrule's name of a Sequential's entry, in torch's spelling."""
    return name.replace("layers.", "")


def close(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        theirs = theirs.detach().numpy()
    ours = np.asarray(ours.data if isinstance(ours, cr.Tensor) else ours)
    assert ours.shape == np.shape(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def close_dict(ours, theirs):
    assert [torch_name(k) for k in ours] == list(theirs)
    for name, value in ours.items():
        if isinstance(value, dict):
            close_dict(value, theirs[torch_name(name)])
        else:
            close(value, theirs[torch_name(name)])


def mlp_pair(n_in=3, hidden=5, n_out=2):
    """nn.Sequential(Linear, Tanh, Linear) in torch and in chainrule, same weights."""
    theirs = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.Tanh(),
                                 torch.nn.Linear(hidden, n_out)).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(t64(RNG.standard_normal(tuple(p.shape))))
    ours = cr.nn.Sequential(cr.nn.Linear(n_in, hidden, rng=0), cr.nn.Tanh(),
                            cr.nn.Linear(hidden, n_out, rng=0))
    ours.load_torch_state_dict(theirs.state_dict())
    return ours, theirs


def detached(model):
    return ({k: v.detach() for k, v in model.named_parameters()},
            {k: v for k, v in model.named_buffers()})


# ---------------------------------------------------------------------------------------
# 1. Per-example gradients
# ---------------------------------------------------------------------------------------

def per_example_programs(ours, theirs):
    def compute_loss(params, buffers, sample, target):
        prediction = functional_call(ours, (params, buffers), (sample.unsqueeze(0),))
        return cr.nn.functional.mse_loss(prediction, target.unsqueeze(0))

    def compute_loss_t(params, buffers, sample, target):
        prediction = tf.functional_call(theirs, (params, buffers), (sample.unsqueeze(0),))
        return torch.nn.functional.mse_loss(prediction, target.unsqueeze(0))

    return compute_loss, compute_loss_t


def test_per_example_gradients_of_an_mlp_are_torchs():
    ours, theirs = mlp_pair()
    x, y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 2))
    compute_loss, compute_loss_t = per_example_programs(ours, theirs)
    params, buffers = detached(ours)
    got = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(
        params, buffers, cr.tensor(x), cr.tensor(y))
    want = tf.vmap(tf.grad(compute_loss_t), in_dims=(None, None, 0, 0))(
        *detached(theirs), t64(x), t64(y))
    assert {k: v.shape for k, v in got.items()} == {
        k: (8,) + tuple(p.shape) for k, p in params.items()}
    close_dict(got, want)
    # the model is its own again: the same Parameters, unchanged
    assert all(type(p) is cr.nn.Parameter for p in ours.parameters())
    close_dict(dict(ours.named_parameters()), dict(theirs.named_parameters()))


def test_per_example_gradients_under_jit_are_torchs():
    ours, theirs = mlp_pair()
    compute_loss, compute_loss_t = per_example_programs(ours, theirs)
    per_example = cr.jit(vmap(grad(compute_loss), in_dims=(None, None, 0, 0)))
    buffers = dict(ours.named_buffers())
    for _ in range(3):  # new weights and data each call: the program reads the dict's
        params = {k: RNG.standard_normal(p.shape) for k, p in ours.named_parameters()}
        x, y = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 2))
        got = per_example(params, buffers, x, y)
        want = tf.vmap(tf.grad(compute_loss_t), in_dims=(None, None, 0, 0))(
            {torch_name(k): t64(v) for k, v in params.items()}, {}, t64(x), t64(y))
        close_dict(got, want)
    close_dict(dict(ours.named_parameters()), dict(theirs.named_parameters()))


# ---------------------------------------------------------------------------------------
# 2. Model ensembling
# ---------------------------------------------------------------------------------------

def test_model_ensembling_with_stack_module_state_is_torchs():
    pairs = [mlp_pair() for _ in range(4)]
    ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    params, buffers = stack_module_state(ours)
    params_t, buffers_t = tf.stack_module_state(theirs)
    close_dict(params, params_t)
    assert all(isinstance(p, cr.Tensor) and p.requires_grad for p in params.values())
    assert buffers == {} and buffers_t == {}

    def fmodel(params, buffers, x):
        return functional_call(ours[0], (params, buffers), (x,))

    def fmodel_t(params, buffers, x):
        return tf.functional_call(theirs[0], (params, buffers), (x,))

    same = RNG.standard_normal((5, 3))
    close(vmap(fmodel, in_dims=(0, 0, None))(params, buffers, same),
          tf.vmap(fmodel_t, in_dims=(0, 0, None))(params_t, buffers_t, t64(same)))
    each = RNG.standard_normal((4, 5, 3))  # a minibatch of its own for each model
    close(vmap(fmodel)(params, buffers, each), tf.vmap(fmodel_t)(params_t, buffers_t,
                                                                  t64(each)))


def test_stack_module_state_stacks_buffers_and_refuses_what_torch_refuses():
    models = [cr.nn.Sequential(cr.nn.Linear(2, 3, rng=i), cr.nn.BatchNorm1d(3))
              for i in range(3)]
    for i, m in enumerate(models):
        m[1].running_mean[:] = i
    params, buffers = stack_module_state(models)
    assert list(buffers) == ["layers.1.running_mean", "layers.1.running_var",
                             "layers.1.num_batches_tracked"]
    assert buffers["layers.1.running_mean"].tolist() == [[0.0] * 3, [1.0] * 3, [2.0] * 3]
    assert buffers["layers.1.num_batches_tracked"].shape == (3,)
    with pytest.raises(RuntimeError, match="at least one model"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="one class"):
        stack_module_state([cr.nn.Linear(2, 3), cr.nn.Sequential(cr.nn.Linear(2, 3))])
    with pytest.raises(RuntimeError, match="same mode"):
        stack_module_state([models[0].eval(), models[1].train()])
    models[1][0].weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="requires grad in some models"):
        stack_module_state([models[0].train(), models[1]])
    with pytest.raises(RuntimeError):
        tf.stack_module_state([])


# ---------------------------------------------------------------------------------------
# 3. Jacobians and Hessians in the parameter dict
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_of_functional_call_in_the_parameters_are_torchs(transform):
    ours, theirs = mlp_pair()
    x = RNG.standard_normal((4, 3))
    params, _ = detached(ours)
    mine = {"jacrev": jacrev, "jacfwd": jacfwd}[transform]
    got = mine(lambda p, x: functional_call(ours, p, (x,)))(params, cr.tensor(x))
    want = getattr(tf, transform)(lambda p, x: tf.functional_call(theirs, p, (x,)))(
        dict(theirs.named_parameters()), t64(x))
    close_dict(got, want)


def test_hessian_of_a_loss_in_the_parameter_dict_is_torchs():
    ours, theirs = mlp_pair(2, 3, 1)
    x, y = RNG.standard_normal((4, 2)), RNG.standard_normal((4, 1))
    params, _ = detached(ours)
    got = hessian(lambda p: cr.mean((functional_call(ours, p, x) - y) ** 2))(params)
    want = tf.hessian(lambda p: torch.mean((tf.functional_call(theirs, p, t64(x))
                                            - t64(y)) ** 2))(
        {k: v.detach() for k, v in theirs.named_parameters()})
    close_dict(got, want)


def test_argnums_tuples_give_tuples_as_torch():
    ours, theirs = mlp_pair()
    x = RNG.standard_normal((4, 3))
    params, _ = detached(ours)
    g_p, g_x = jacrev(lambda p, x: functional_call(ours, p, x).sum(0), argnums=(0, 1))(
        params, cr.tensor(x))
    w_p, w_x = tf.jacrev(lambda p, x: tf.functional_call(theirs, p, x).sum(0),
                         argnums=(0, 1))(dict(theirs.named_parameters()), t64(x))
    close_dict(g_p, w_p)
    close(g_x, w_x)


# ---------------------------------------------------------------------------------------
# 4. The transforms' conventions
# ---------------------------------------------------------------------------------------

def test_grad_and_value_gives_grad_first_and_aux_with_the_value():
    x = RNG.standard_normal(4)
    f = lambda x: (cr.sin(x) ** 2).sum()                     # noqa: E731
    f_t = lambda x: (torch.sin(x) ** 2).sum()                 # noqa: E731
    g, value = grad_and_value(f)(x)
    g_t, value_t = tf.grad_and_value(f_t)(t64(x))
    close(g, g_t)
    close(value, value_t)
    g, (value, aux) = grad_and_value(lambda x: (f(x), cr.cos(x)), has_aux=True)(x)
    g_t, (value_t, aux_t) = tf.grad_and_value(lambda x: (f_t(x), torch.cos(x)),
                                              has_aux=True)(t64(x))
    close(g, g_t)
    close(value, value_t)
    close(aux, aux_t)
    gs, aux = grad(lambda x, y: ((x * y).sum(), y), argnums=(0, 1), has_aux=True)(x, 2 * x)
    gs_t, aux_t = tf.grad(lambda x, y: ((x * y).sum(), y), argnums=(0, 1),
                          has_aux=True)(t64(x), t64(2 * x))
    assert isinstance(gs, tuple) and len(gs) == 2
    for a, b in zip(gs, gs_t):
        close(a, b)
    close(aux, aux_t)


def test_vjp_and_jvp_of_functional_call_follow_torchs_conventions():
    ours, theirs = mlp_pair()
    x = RNG.standard_normal((4, 3))
    params, _ = detached(ours)
    params_t = {k: v.detach() for k, v in theirs.named_parameters()}
    f = lambda p: functional_call(ours, p, (x,))                      # noqa: E731
    f_t = lambda p: tf.functional_call(theirs, p, (t64(x),))          # noqa: E731
    cot = RNG.standard_normal((4, 2))
    out, vjp_fn = vjp(f, params)
    out_t, vjp_fn_t = tf.vjp(f_t, params_t)
    close(out, out_t)
    (got,), (want,) = vjp_fn(cot), vjp_fn_t(t64(cot))
    close_dict(got, want)
    (got,), (want,) = vjp_fn(cot, retain_graph=False), vjp_fn_t(t64(cot), retain_graph=False)
    close_dict(got, want)
    out, vjp_fn, aux = vjp(lambda p: (f(p), {"x": 1.0}), params, has_aux=True)
    assert aux == {"x": 1.0} and len(vjp_fn(cot)) == 1
    tangents = {k: RNG.standard_normal(v.shape) for k, v in params.items()}
    out, tangent = jvp(f, (params,), (tangents,))
    out_t, tangent_t = tf.jvp(f_t, (params_t,), ({torch_name(k): t64(v)
                                                   for k, v in tangents.items()},))
    close(out, out_t)
    close(tangent, tangent_t)
    out, tangent, aux = jvp(lambda p: (f(p), f(p).sum()), (params,), (tangents,),
                            has_aux=True)
    close(aux, out.sum())


def test_jvp_strict_refuses_an_output_that_does_not_depend_on_the_inputs():
    x, v = np.ones(3), np.ones(3)
    with pytest.raises(RuntimeError, match="strict=True"):
        tf.jvp(lambda x: t64(np.zeros(3)), (t64(x),), (t64(v),), strict=True)
    with pytest.raises(RuntimeError, match="strict=True"):
        jvp(lambda x: np.zeros(3), (x,), (v,), strict=True)
    out, tangent = jvp(lambda x: np.zeros(3), (x,), (v,))
    assert tangent.tolist() == [0.0] * 3
    close(jvp(lambda x: cr.sin(x), (x,), (v,), strict=True)[1], np.cos(x))


@pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node")  # (torch's own)
def test_linearize_is_torchs():
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)
    f, f_t = (lambda x: cr.tanh(x) * x), (lambda x: torch.tanh(x) * x)
    out, jvp_fn = linearize(f, x)
    out_t, jvp_fn_t = tf.linearize(f_t, t64(x))
    close(out, out_t)
    close(jvp_fn(v), jvp_fn_t(t64(v)))
    close(jvp_fn(2 * v), jvp_fn_t(t64(2 * v)))


def test_vmap_keyword_arguments_are_not_mapped_as_in_torch():
    x, w = RNG.standard_normal((5, 3)), RNG.standard_normal(3)
    got = vmap(lambda x, *, w: (x * w).sum())(x, w=w)
    close(got, tf.vmap(lambda x, *, w: (x * w).sum())(t64(x), w=t64(w)))
    got = vmap(lambda x, w: (x * w).sum(), in_dims=(1, None), out_dims=0)(x.T, w)
    close(got, (x * w).sum(1))


@pytest.mark.parametrize("chunk_size", [1, 3, 4, 10])
def test_vmap_in_chunks_is_torchs(chunk_size):
    ours, theirs = mlp_pair()
    x, y = RNG.standard_normal((7, 3)), RNG.standard_normal((7, 2))
    compute_loss, compute_loss_t = per_example_programs(ours, theirs)
    got = vmap(grad(compute_loss), in_dims=(None, None, 0, 0), chunk_size=chunk_size)(
        *detached(ours), cr.tensor(x), cr.tensor(y))
    want = tf.vmap(tf.grad(compute_loss_t), in_dims=(None, None, 0, 0),
                   chunk_size=chunk_size)(*detached(theirs), t64(x), t64(y))
    close_dict(got, want)
    f = lambda x, w: (cr.sin(x) * w, {"s": cr.sum(x)})                # noqa: E731
    f_t = lambda x, w: (torch.sin(x) * w, {"s": torch.sum(x)})         # noqa: E731
    w = RNG.standard_normal(3)
    got = vmap(f, in_dims=(1, None), out_dims=(1, 0), chunk_size=chunk_size)(x.T, w)
    want = tf.vmap(f_t, in_dims=(1, None), out_dims=(1, 0), chunk_size=chunk_size)(
        t64(x.T), t64(w))
    close(got[0], want[0])
    close(got[1]["s"], want[1]["s"])


def test_vmap_options_torch_has_and_chainrule_answers():
    x = RNG.standard_normal((6, 2))
    f = lambda x: cr.sin(x) * 2                                       # noqa: E731
    close(vmap(f, randomness="same")(x), np.sin(x) * 2)
    with pytest.raises(ValueError, match="randomness='different' cannot be honoured"):
        vmap(f, randomness="different")
    with pytest.raises(ValueError, match="randomness must be"):
        vmap(f, randomness="other")
    with pytest.raises(ValueError, match="chunk_size must be"):
        vmap(f, chunk_size=0)
    with pytest.raises(ValueError, match="chunk_size must be"):
        jacrev(f, chunk_size=-1)


def test_functionalize_is_the_function():
    f = lambda x: x * 2                                               # noqa: E731
    assert cr.func.functionalize(f) is f
    with pytest.raises(ValueError, match="remove must be"):
        cr.func.functionalize(f, remove="views")


def test_cr_func_is_the_module_at_chainrule_func():
    import chainrule.func
    assert cr.func is chainrule.func
    assert set(tf.__all__) - set(cr.func.__all__) == {"rearrange", "debug_unwrap"}


# ---------------------------------------------------------------------------------------
# 5. functional_call itself
# ---------------------------------------------------------------------------------------

def batch_norm_pair():
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(t64(RNG.standard_normal(tuple(p.shape))))
    ours = cr.nn.Sequential(cr.nn.Linear(3, 4, rng=0), cr.nn.BatchNorm1d(4))
    ours.load_torch_state_dict(theirs.state_dict())
    return ours, theirs


def buffers_of(model, statistics):
    """Running statistics to pass in: torch's tensors and chainrule's arrays."""
    mean, var = statistics
    if isinstance(model, torch.nn.Module):
        return {"1.running_mean": t64(mean), "1.running_var": t64(var),
                "1.num_batches_tracked": torch.tensor(3)}
    return {"layers.1.running_mean": mean.copy(), "layers.1.running_var": var.copy(),
            "layers.1.num_batches_tracked": np.array(3)}


@pytest.mark.parametrize("jitted", [False, True])
def test_batch_norm_in_training_updates_the_buffers_given_as_torch(jitted):
    """In training mode the batch's statistics normalise and the running ones given are
    updated in place (torch updates the tensors given); the module's own stay as they
    were. Under grad (and cr.jit) too, and the gradient is torch's."""
    ours, theirs = batch_norm_pair()
    statistics = RNG.standard_normal(4), RNG.uniform(0.5, 2.0, 4)
    b_ours, b_theirs = buffers_of(ours, statistics), buffers_of(theirs, statistics)
    x = RNG.standard_normal((6, 3))

    def loss(p, b, x):
        return (functional_call(ours, (p, b), (x,)) ** 3).sum()

    def loss_t(p, b, x):
        return (tf.functional_call(theirs, (p, b), (x,)) ** 3).sum()

    step = cr.jit(grad(loss)) if jitted else grad(loss)
    params, _ = detached(ours)
    params_t = {k: v.detach() for k, v in theirs.named_parameters()}
    for _ in range(2):  # two calls: the statistics move twice
        close_dict(step(params, b_ours, x), tf.grad(loss_t)(params_t, b_theirs, t64(x)))
    close_dict(b_ours, b_theirs)
    assert b_ours["layers.1.num_batches_tracked"] == 5
    close_dict(dict(ours.named_buffers()), dict(theirs.named_buffers()))
    assert ours[1].running_mean.tolist() == [0.0] * 4


def test_batch_norm_buffers_in_eval_are_read_and_ensembled_as_torch():
    pairs = [batch_norm_pair() for _ in range(3)]
    for ours, theirs in pairs:
        statistics = RNG.standard_normal(4), RNG.uniform(0.5, 2.0, 4)
        ours.load_state_dict(dict(ours.state_dict()) | buffers_of(ours, statistics))
        theirs.load_state_dict(dict(theirs.state_dict()) | buffers_of(theirs, statistics))
        ours.eval(), theirs.eval()
    params, buffers = stack_module_state([p[0] for p in pairs])
    params_t, buffers_t = tf.stack_module_state([p[1] for p in pairs])
    close_dict(buffers, buffers_t)
    x = RNG.standard_normal((3, 5, 3))
    got = vmap(lambda p, b, x: functional_call(pairs[0][0], (p, b), x))(params, buffers, x)
    want = tf.vmap(lambda p, b, x: tf.functional_call(pairs[0][1], (p, b), x))(
        params_t, buffers_t, t64(x))
    close(got, want)


def test_batch_norm_in_training_under_vmap_is_refused_as_by_torch():
    ours, theirs = batch_norm_pair()
    x = RNG.standard_normal((2, 6, 3))
    with pytest.raises(ValueError, match="batch_norm: training under cr.vmap"):
        vmap(lambda p, x: functional_call(ours, p, x), in_dims=(None, 0))(
            detached(ours)[0], x)
    with pytest.raises(RuntimeError):
        tf.vmap(lambda p, x: tf.functional_call(theirs, p, x), in_dims=(None, 0))(
            dict(theirs.named_parameters()), t64(x))


def tied_pair():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(torch.tanh(self.a(x)))

    class TiedOurs(cr.nn.Module):
        def __init__(self):
            self.a, self.b = cr.nn.Linear(3, 3, rng=0), cr.nn.Linear(3, 3, rng=1)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(cr.tanh(self.a(x)))

    theirs, ours = Tied().double(), TiedOurs()
    ours.load_torch_state_dict(theirs.state_dict())
    return ours, theirs


def test_tied_weights_are_filled_together_as_torch():
    ours, theirs = tied_pair()
    assert [n for n, _ in ours.named_parameters()] == ["a.weight", "a.bias", "b.bias"]
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3))
    for name in ("a.weight", "b.weight"):
        for tie in (True, False):
            close(functional_call(ours, {name: w}, x, tie_weights=tie),
                  tf.functional_call(theirs, {name: t64(w)}, t64(x), tie_weights=tie))
    both = {"a.weight": w, "b.weight": 2 * w}
    close(functional_call(ours, both, x, tie_weights=False),
          tf.functional_call(theirs, {k: t64(v) for k, v in both.items()}, t64(x),
                             tie_weights=False))
    with pytest.raises(ValueError, match="tied"):
        functional_call(ours, both, x)
    with pytest.raises(ValueError, match="tied"):
        tf.functional_call(theirs, {k: t64(v) for k, v in both.items()}, t64(x))
    same = {"a.weight": w, "b.weight": w}  # one value for both names: allowed
    w_t = t64(w)
    close(functional_call(ours, same, x),
          tf.functional_call(theirs, {k: w_t for k in same}, t64(x)))
    # the gradient of the tied weight gathers both of its uses
    g = grad(lambda p: functional_call(ours, p, x).sum())({"a.weight": w})
    g_t = tf.grad(lambda p: tf.functional_call(theirs, p, t64(x)).sum())({"a.weight": t64(w)})
    close_dict(g, g_t)
    assert ours.b.weight is ours.a.weight


def test_the_module_is_restored_when_the_call_raises():
    class Boom(cr.nn.Module):
        def __init__(self):
            self.lin = cr.nn.Linear(2, 2, rng=0)
            self.register_buffer("scale", np.ones(2))

        def forward(self, x):
            self.lin(x) * self.scale
            raise ZeroDivisionError("inside forward")

    model = Boom()
    weight, scale = model.lin.weight, model.scale
    with pytest.raises(ZeroDivisionError, match="inside forward"):
        functional_call(model, {"lin.weight": np.zeros((2, 2)), "scale": np.zeros(2)},
                        np.ones((1, 2)))
    assert model.lin.weight is weight and model.scale is scale
    with pytest.raises(ZeroDivisionError):  # and under a transform, its tracers gone
        grad(lambda w: functional_call(model, {"lin.weight": w}, np.ones((1, 2))))(
            np.zeros((2, 2)))
    assert model.lin.weight is weight
    assert [type(p) for p in model.parameters()] == [cr.nn.Parameter] * 2


def test_an_attribute_the_module_sets_again_is_written_to_the_dict_as_torch():
    class Foo(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("foo", torch.zeros(()))

        def forward(self, x):
            self.foo = self.foo + 1
            return x + self.foo

    class FooOurs(cr.nn.Module):
        def __init__(self):
            self.register_buffer("foo", np.zeros(()))

        def forward(self, x):
            self.foo = self.foo + 1
            return x + self.foo

    ours, theirs = FooOurs(), Foo().double()
    given, given_t = {"foo": np.zeros(())}, {"foo": torch.zeros((), dtype=torch.float64)}
    close(functional_call(ours, given, np.ones(())), tf.functional_call(theirs, given_t,
                                                                       torch.ones(())))
    close(given["foo"], given_t["foo"])
    assert float(ours.foo) == 0.0 and float(theirs.foo) == 0.0


def test_functional_call_refuses_names_it_cannot_place():
    ours, theirs = mlp_pair()
    params, _ = detached(ours)
    params_t = dict(theirs.named_parameters())
    x = np.ones((1, 3))
    partial = {k: v for k, v in params.items() if k != "layers.2.bias"}
    functional_call(ours, partial, x)  # missing names keep the module's own values
    with pytest.raises(RuntimeError, match=r"missing names \['layers.2.bias'\]"):
        functional_call(ours, partial, x, strict=True)
    with pytest.raises(RuntimeError, match="Missing key"):
        tf.functional_call(theirs, {k: v for k, v in params_t.items() if k != "2.bias"},
                           t64(x), strict=True)
    with pytest.raises(RuntimeError, match=r"unexpected names \['2.bias'\]"):
        functional_call(ours, {"2.bias": np.zeros(2)}, x)  # (torch's spelling: not ours)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        tf.functional_call(theirs, params_t | {"extra": t64(np.zeros(2))}, t64(x),
                           strict=True)
    with pytest.raises(ValueError, match="more than one"):
        functional_call(ours, (params, {"layers.0.bias": np.zeros(5)}), x)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        tf.functional_call(theirs, (params_t, {"0.bias": t64(np.zeros(5))}), t64(x))
    with pytest.raises(ValueError, match="expected a dict"):
        functional_call(ours, [1, 2], x)
    with pytest.raises(TypeError, match="expected a cr.nn.Module"):
        functional_call(theirs, {}, x)
    assert all(type(p) is cr.nn.Parameter for p in ours.parameters())


def test_functional_call_takes_one_argument_a_tuple_and_keywords():
    class Scaled(cr.nn.Module):
        def __init__(self):
            self.w = cr.nn.Parameter(np.ones(2))

        def forward(self, x, y=None, *, scale=1.0):
            return (x * self.w + (0 if y is None else y)) * scale

    model, x = Scaled(), np.array([1.0, 2.0])
    w = {"w": np.array([3.0, 4.0])}
    assert functional_call(model, w, x).tolist() == [3.0, 8.0]
    assert functional_call(model, w, (x, x)).tolist() == [4.0, 10.0]
    assert functional_call(model, w, (x,), {"scale": 2.0}).tolist() == [6.0, 16.0]


def containers_pair():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList([torch.nn.Linear(3, 3), torch.nn.Linear(3, 2)])
            self.scales = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(3))])
            self.offsets = torch.nn.ParameterDict({"out": torch.nn.Parameter(torch.zeros(2))})

        def forward(self, x):
            h = torch.tanh(self.blocks[0](x)) * self.scales[0]
            return self.blocks[1](h) + self.offsets["out"]

    class NetOurs(cr.nn.Module):
        def __init__(self):
            self.blocks = cr.nn.ModuleList([cr.nn.Linear(3, 3, rng=0), cr.nn.Linear(3, 2, rng=1)])
            self.scales = cr.nn.ParameterList([cr.nn.Parameter(np.ones(3))])
            self.offsets = cr.nn.ParameterDict({"out": cr.nn.Parameter(np.zeros(2))})

        def forward(self, x):
            h = cr.tanh(self.blocks[0](x)) * self.scales[0]
            return self.blocks[1](h) + self.offsets["out"]

    theirs, ours = Net().double(), NetOurs()
    ours.load_torch_state_dict(theirs.state_dict())
    return ours, theirs


def test_parameters_held_in_containers_are_replaced_as_torch():
    """ModuleList, ParameterList and ParameterDict keep their entries in ``_items``: the
    names are torch's (``blocks.0.weight``, ``scales.0``, ``offsets.out``)."""
    ours, theirs = containers_pair()
    names = [n for n, _ in ours.named_parameters()]
    assert names == [n for n, _ in theirs.named_parameters()]
    x = RNG.standard_normal((4, 3))
    new = {n: RNG.standard_normal(p.shape) for n, p in ours.named_parameters()}
    new_t = {n: t64(v) for n, v in new.items()}
    close(functional_call(ours, new, x), tf.functional_call(theirs, new_t, t64(x)))
    g = grad(lambda p: cr.sum(functional_call(ours, p, x) ** 2))(new)
    g_t = tf.grad(lambda p: torch.sum(tf.functional_call(theirs, p, t64(x)) ** 2))(new_t)
    close_dict(g, g_t)
    assert all(type(p) is cr.nn.Parameter for p in ours.parameters())
    close_dict(dict(ours.named_parameters()), dict(theirs.named_parameters()))


def test_under_jit_the_names_not_given_are_the_modules_own_at_each_call():
    ours, theirs = mlp_pair()
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    jitted = cr.jit(lambda p, x: functional_call(ours, p, x))
    for step in range(3):  # the module's own bias moves between calls, as in training
        close(jitted({"layers.0.weight": w}, x),
              tf.functional_call(theirs, {"0.weight": t64(w)}, t64(x)))
        for model in (ours[2].bias, theirs[2].bias):
            model.data += 0.5
    assert type(ours[0].weight) is cr.nn.Parameter


def test_a_module_reached_by_two_paths_is_replaced_under_either_name_as_torch():
    shared_t, shared = torch.nn.Linear(3, 3).double(), cr.nn.Linear(3, 3, rng=0)
    shared.load_torch_state_dict(shared_t.state_dict())
    theirs = torch.nn.Sequential(shared_t, torch.nn.Tanh(), shared_t)
    ours = cr.nn.Sequential(shared, cr.nn.Tanh(), shared)
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3))
    before = shared_t.weight.detach().clone()
    for name in ("layers.0.weight", "layers.2.weight"):
        given = {name: w}
        close(functional_call(ours, given, x),
              tf.functional_call(theirs, {torch_name(name): t64(w)}, t64(x)))
        assert given[name] is w  # nothing written back: the module set nothing
    # chainrule puts the module's own Parameter back; torch 2.13 restores the two names
    # in the order it replaced them, and leaves the tensor given in the shared Linear
    assert shared.weight is ours[2].weight and type(shared.weight) is cr.nn.Parameter
    close(shared.weight, before)
