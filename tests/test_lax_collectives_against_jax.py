"""chainrule.lax's collectives over cr.vmap's named axes (``axis_name=``), against
jax.lax's under jax.vmap (float64). Every case runs, beside JAX, through:

* the vmap itself (values);
* ``vmap(grad)``: a derivative inside the vmap, where the collective's own VJP rule
  serves (psum's cotangent summed over the examples, all_gather's dealt back...);
* ``grad`` of the vmap: a derivative outside it, through the operations the
  collective's batching rule computed with;
* ``vmap(jvp)`` and ``vmap(hessian)`` (second order, inside);
* a second vmap inside the named one, whose batch the collective must carry through;
* ``cr.jit`` of ``vmap(grad)``, traced and then replayed on other numbers.

Where JAX gives no derivative (pmax, pmin) or refuses the call under vmap (a ppermute
that leaves an example without a sender), the reference is the same quantity written
with JAX's all_gather and axis_index, which JAX does differentiate.
"""

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import chainrule as cr
from chainrule import lax
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

N_EXAMPLES, INNER = 4, 3
RTOL, ATOL = 1e-12, 1e-13


@dataclass(frozen=True)
class Case:
    """``build(L, N)`` gives the function of one example with ``L`` a lax module and
    ``N`` a NumPy namespace (chainrule's or JAX's); ``reference`` builds JAX's where it
    is written otherwise, and ``derivative_reference`` where JAX's own function fails
    to differentiate; ``shape`` is one example's."""
    build: object
    shape: tuple = (3,)
    reference: object = None
    derivative_reference: object = None

    def ours(self):
        return self.build(lax, cr)

    def theirs(self, derivative=False):
        build = (derivative and self.derivative_reference) or self.reference or self.build
        return build(jlax, jnp)


def _gathered_extreme(reduce):
    return lambda L, N: lambda v: getattr(N, reduce)(L.all_gather(N.sin(v), "i"), axis=0)


def _partial_permute(L, N):
    """Example 1 receives 0's value, 2 receives 1's; 0 and 3 receive zeros."""
    source = jnp.array([0, 0, 1, 0])
    received = jnp.array([False, True, True, False])

    def f(v):
        if L is lax:
            return L.ppermute(N.sin(v), "i", [(0, 1), (1, 2)])
        mine = L.axis_index("i")
        return N.where(received[mine], L.all_gather(N.sin(v), "i")[source[mine]], 0.0)
    return f


def _broadcast(L, N):
    """jax.lax.pbroadcast fails under jax.vmap in 0.10.2 (it passes a list to take); its
    docstring's definition is the reference."""
    return lambda v: v * L.psum(N.where(L.axis_index("i") == 2, N.sin(v), 0.0), "i")


def _exchange(split, concat, tiled=False):
    """all_to_all written with all_gather and axis_index: jax.lax.all_to_all's
    derivative under jax.vmap fails in 0.10.2 (a cotangent of the wrong shape)."""
    def build(L, N):
        def f(v):
            everyone = L.all_gather(N.sin(v), "i")
            mine = L.axis_index("i")
            if not tiled:
                return N.moveaxis(N.take(everyone, mine, axis=split + 1), 0, concat)
            width = v.shape[split] // L.axis_size("i")
            piece = N.take(everyone, mine * width + N.arange(width), axis=split + 1)
            placed = N.moveaxis(piece, 0, concat)
            shape = placed.shape
            return placed.reshape(shape[:concat] + (shape[concat] * shape[concat + 1],)
                                  + shape[concat + 2:])
        return f
    return build


CASES = {
    "psum": Case(lambda L, N: lambda v: N.sin(v) * L.psum(v ** 2, "i")),
    "psum of a constant": Case(lambda L, N: lambda v: v * L.psum(2.0, "i")),
    "psum of a pytree": Case(lambda L, N: lambda v: (
        lambda t: t["a"] * t["b"][0])(L.psum({"a": v, "b": [N.cos(v)]}, "i"))),
    "pmean": Case(lambda L, N: lambda v: N.exp(v - L.pmean(v, "i"))),
    "pmax": Case(lambda L, N: lambda v: v * L.pmax(N.sin(v), "i"),
                 reference=lambda L, N: lambda v: v * _gathered_extreme("max")(L, N)(v)),
    "pmin": Case(lambda L, N: lambda v: v * L.pmin(N.sin(v), "i"),
                 reference=lambda L, N: lambda v: v * _gathered_extreme("min")(L, N)(v)),
    "all_gather": Case(lambda L, N: lambda v: L.all_gather(v ** 2, "i") * N.cos(v)),
    "all_gather axis=1": Case(lambda L, N: lambda v: N.tanh(L.all_gather(v, "i", axis=1)),
                              shape=(3, 2)),
    "all_gather axis=-1": Case(lambda L, N: lambda v: N.sin(L.all_gather(v, "i", axis=-1)),
                               shape=(3, 2)),
    "all_gather tiled": Case(lambda L, N: lambda v: N.sin(
        L.all_gather(v, "i", axis=1, tiled=True)), shape=(2, 3)),
    "axis_index": Case(lambda L, N: lambda v: v * (L.axis_index("i") + 1.0)),
    "axis_size": Case(lambda L, N: lambda v: v ** 2 * L.axis_size("i")),
    "ppermute": Case(lambda L, N: lambda v: v * L.ppermute(
        N.sin(v), "i", [(0, 1), (1, 2), (2, 3), (3, 0)])),
    "ppermute leaving examples out": Case(_partial_permute, reference=_partial_permute),
    "pshuffle": Case(lambda L, N: lambda v: v * L.pshuffle(N.sin(v), "i", [2, 0, 3, 1])),
    "pbroadcast": Case(lambda L, N: lambda v: v * L.pbroadcast(N.sin(v), "i", 2),
                       reference=_broadcast),
    "psum_scatter": Case(lambda L, N: lambda v: L.psum_scatter(N.sin(v), "i"), shape=(4, 2)),
    "psum_scatter dimension 1": Case(lambda L, N: lambda v: L.psum_scatter(
        N.sin(v), "i", scatter_dimension=1), shape=(2, 4)),
    "psum_scatter tiled": Case(lambda L, N: lambda v: L.psum_scatter(
        N.sin(v), "i", tiled=True), shape=(8,)),
    "all_to_all": Case(lambda L, N: lambda v: L.all_to_all(N.sin(v), "i", 0, 1),
                       shape=(4, 2), derivative_reference=_exchange(0, 1)),
    "all_to_all split 1 concat 0": Case(lambda L, N: lambda v: L.all_to_all(
        N.sin(v), "i", 1, 0), shape=(2, 4), derivative_reference=_exchange(1, 0)),
    "all_to_all tiled": Case(lambda L, N: lambda v: L.all_to_all(
        N.sin(v), "i", 0, 1, tiled=True), shape=(8, 2),
        derivative_reference=_exchange(0, 1, tiled=True)),
    "pswapaxes": Case(lambda L, N: lambda v: L.pswapaxes(N.sin(v), "i", 1), shape=(2, 4),
                      derivative_reference=_exchange(1, 1)),
    "two collectives": Case(lambda L, N: lambda v: L.pmean(
        v * L.psum(N.sin(v), "i"), "i") + L.all_gather(v, "i")[1]),
}


def batch(name, which="A"):
    return seeded("collectives", name, which).uniform(-1.5, 1.5,
                                                     (N_EXAMPLES,) + CASES[name].shape)


def weights(name, shape):
    return seeded("collectives", name, "weights").standard_normal(shape)


def per_example_scalar(name, f, N):
    out_shape = jax.eval_shape(jax.vmap(CASES[name].theirs(), axis_name="i"),
                               batch(name)).shape[1:]
    w = weights(name, out_shape)
    return lambda v: N.sum(f(v) * w)


def close(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=RTOL, atol=ATOL)


names = pytest.mark.parametrize("name", list(CASES))


@names
def test_values(name):
    x = batch(name)
    got = cr.vmap(CASES[name].ours(), axis_name="i")(x)
    assert type(got) is np.ndarray
    expected = jax.vmap(CASES[name].theirs(), axis_name="i")(x)
    close(got, expected)
    # (a reference written for the derivatives computes JAX's own values)
    close(jax.vmap(CASES[name].theirs(derivative=True), axis_name="i")(x), expected)


@names
def test_grad_inside_the_vmap(name):
    x = batch(name)
    ours = per_example_scalar(name, CASES[name].ours(), cr)
    theirs = per_example_scalar(name, CASES[name].theirs(derivative=True), jnp)
    close(cr.vmap(cr.grad(ours), axis_name="i")(x),
          jax.vmap(jax.grad(theirs), axis_name="i")(x))


@names
def test_grad_of_the_vmap(name):
    x = batch(name)
    ours = per_example_scalar(name, CASES[name].ours(), cr)
    theirs = per_example_scalar(name, CASES[name].theirs(derivative=True), jnp)
    close(cr.grad(lambda x: cr.sum(cr.vmap(ours, axis_name="i")(x) ** 2))(x),
          jax.grad(lambda x: jnp.sum(jax.vmap(theirs, axis_name="i")(x) ** 2))(x))


@names
def test_jvp_inside_the_vmap(name):
    x = batch(name)
    t = seeded("collectives", name, "tangent").standard_normal(x.shape)
    ours, theirs = CASES[name].ours(), CASES[name].theirs(derivative=True)
    got = cr.vmap(lambda v, u: cr.jvp(ours, (v,), (u,)), axis_name="i")(x, t)
    expected = jax.vmap(lambda v, u: jax.jvp(theirs, (v,), (u,)), axis_name="i")(x, t)
    close(got[0], expected[0])
    close(got[1], expected[1])


@names
def test_hessian_inside_the_vmap(name):
    x = batch(name)
    ours = per_example_scalar(name, CASES[name].ours(), cr)
    theirs = per_example_scalar(name, CASES[name].theirs(derivative=True), jnp)
    np.testing.assert_allclose(cr.vmap(cr.hessian(ours), axis_name="i")(x),
                               jax.vmap(jax.hessian(theirs), axis_name="i")(x),
                               rtol=1e-10, atol=1e-11)


@names
def test_a_vmap_inside_the_named_one_is_carried_through(name):
    x = seeded("collectives", name, "nested").uniform(
        -1.5, 1.5, (N_EXAMPLES, INNER) + CASES[name].shape)
    got = cr.vmap(cr.vmap(CASES[name].ours(), axis_name="j"), axis_name="i")(x)
    close(got, jax.vmap(jax.vmap(CASES[name].theirs(), axis_name="j"), axis_name="i")(x))
    # and the named vmap inside another: the outer batch carried through
    got = cr.vmap(cr.vmap(CASES[name].ours(), axis_name="i"), in_axes=1, out_axes=1)(x)
    close(got, jax.vmap(jax.vmap(CASES[name].theirs(), axis_name="i"), in_axes=1,
                        out_axes=1)(x))


@names
def test_jit_of_grad_inside_the_vmap_replays(name):
    ours = per_example_scalar(name, CASES[name].ours(), cr)
    step = cr.jit(cr.vmap(cr.grad(ours), axis_name="i"))
    for which in ("A", "B"):  # traced, then replayed on other numbers
        x = batch(name, which)
        close(step(x), cr.vmap(cr.grad(ours), axis_name="i")(x))


def test_names_are_found_innermost_first_and_tuples_go_over_several():
    x = np.arange(6.0).reshape(2, 3)

    def f(L, N):
        return lambda v: (L.psum(v, "i") + 10 * L.psum(v, "j") + 100 * L.pmax(v, ("i", "j"))
                          + 1000 * L.axis_index(("i", "j")) + L.pmean(v, ("i", "j")))
    close(cr.vmap(cr.vmap(f(lax, cr), axis_name="j"), axis_name="i")(x),
          jax.vmap(jax.vmap(f(jlax, jnp), axis_name="j"), axis_name="i")(x))
    # the same name twice: the inner vmap's
    inner = cr.vmap(cr.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")(x)
    close(inner, jax.vmap(jax.vmap(lambda v: jlax.psum(v, "i"), axis_name="i"),
                          axis_name="i")(x))


def test_integers_stay_integers():
    got = cr.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.arange(3))
    assert got.dtype == np.int64 and got.tolist() == [3, 3, 3]
    index = cr.vmap(lambda v: lax.axis_index("i"), axis_name="i")(np.ones(3))
    assert index.dtype == jax.vmap(lambda v: jlax.axis_index("i"), axis_name="i")(
        jnp.ones(3)).dtype


def test_pmax_shares_its_derivative_between_ties_as_max_does():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    got = cr.vmap(cr.grad(lambda v: lax.pmax(v, "i")), axis_name="i")(x)
    # the four examples' maxima are one function of x: 4 max(x), split between the ties
    expected = cr.grad(lambda x: 4 * cr.max(x))(x)
    close(got, expected)
    assert got.tolist() == [0.0, 2.0, 2.0, 0.0]


@pytest.mark.parametrize("call, message", [
    (lambda v: lax.psum(v, "k"), r"lax.psum: unbound axis name 'k'; .* \(bound here: 'i'\)"),
    (lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2]]), "axis_index_groups"),
    (lambda v: lax.all_gather(v, ("i", "i")), "all_gather: one axis name"),
    (lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]), "sends from one example twice or to "
                                                       "one example twice"),
    (lambda v: lax.ppermute(v, "i", [(0, 3)]), r"names an example outside the axis of 3"),
    (lambda v: lax.pshuffle(v, "i", [0, 0, 1]), "is not a permutation of 0..2"),
    (lambda v: lax.psum_scatter(v, "i"), "the scatter_dimension axis has 2 entries; "
                                         "expected 3, the axis size"),
    (lambda v: lax.all_gather(v, "i", axis=3), "axis=3 for a value of 2 axes"),
])
def test_bad_calls_name_the_collective_and_what_was_expected(call, message):
    with pytest.raises((NameError, ValueError), match=message):
        cr.vmap(call, axis_name="i")(np.ones((3, 2)))


def test_outside_any_vmap_a_name_is_unbound():
    with pytest.raises(NameError, match=r"lax.axis_index: unbound axis name 'i'; .*none"):
        lax.axis_index("i")


def test_pmap_is_a_named_vmap_traced_by_jit():
    def step(w, x, scale):
        g = cr.grad(lambda w: cr.sum((x @ w) ** 2) * scale)(w)
        return w - 0.1 * lax.pmean(g, "devices")

    def jax_step(w, x, scale):
        g = jax.grad(lambda w: jnp.sum((x @ w) ** 2) * scale)(w)
        return w - 0.1 * jlax.pmean(g, "devices")

    rng = seeded("collectives", "pmap")
    w, x = rng.standard_normal(3), rng.standard_normal((4, 5, 3))
    mapped = cr.pmap(step, axis_name="devices", in_axes=(None, 0, None),
                     static_broadcasted_argnums=2)
    # JAX's pmap wants one device per example; its vmap with the name computes the same
    reference = jax.vmap(jax_step, in_axes=(None, 0, None), axis_name="devices")
    for scale in (1.0, 2.0):
        close(mapped(w, x, scale), reference(w, x, scale))
    close(mapped(w, x + 1.0, 1.0), reference(w, x + 1.0, 1.0))
    # JAX's pmap of one example (its one CPU device) agrees too
    one = jax.pmap(jax_step, in_axes=(None, 0, None), axis_name="devices",
                   static_broadcasted_argnums=2)(w, x[:1], 1.0)
    close(mapped(w, x[:1], 1.0), one)


def test_pmap_refuses_another_platform():
    with pytest.raises(ValueError, match="pmap\\(backend='gpu'\\): chainrule computes on "
                                         "the CPU"):
        cr.pmap(lambda x: x, backend="gpu")
    with pytest.raises(ValueError, match="pmap\\(devices="):
        cr.pmap(lambda x: x, devices=["gpu:0"])
    assert cr.pmap(lambda x: x * 2, devices=cr.devices())(np.ones(2)).tolist() == [2.0, 2.0]
