"""cr.debug.print and cr.debug.callback against jax.debug: what each prints, and how
often, under jit (at every call, not only while tracing), vmap (once per example, nested
vmaps in JAX's order), the derivatives (the primal values, once) and their mixes.
Each case runs the same function under both libraries and compares the printed lines.
"""

import contextlib
import io

import jax
import numpy as np
import pytest

import chainrule as cr
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(4402)
CR = dict(debug=cr.debug, jit=cr.jit, vmap=cr.vmap, grad=cr.grad, jvp=cr.jvp,
          jacrev=cr.jacrev)
JAX = dict(debug=jax.debug, jit=jax.jit, vmap=jax.vmap, grad=jax.grad, jvp=jax.jvp,
           jacrev=jax.jacrev)


def printed(run):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run()
    return out.getvalue().splitlines()


def same_lines(use):
    """``use(library)`` under chainrule and JAX: the lines each prints, equal."""
    ours, theirs = printed(lambda: use(CR)), printed(lambda: use(JAX))
    assert ours == theirs
    return ours


def shown(lib):
    def f(x):
        lib["debug"].print("x = {}", x)
        return x * 2.0
    return f


def test_under_jit_it_prints_at_every_call_with_that_calls_values():
    def use(lib):
        f = lib["jit"](shown(lib))
        for x in (1.0, 2.0, 3.5):
            f(x)
    assert same_lines(use) == ["x = 1.0", "x = 2.0", "x = 3.5"]


def test_a_plain_print_under_cr_jit_runs_only_while_tracing():
    f = cr.jit(lambda x: print("traced") or x * 2)
    assert printed(lambda: [f(v) for v in (1.0, 2.0)]) == ["traced"]


def test_under_vmap_it_prints_each_example_in_jaxs_order():
    x = np.arange(6.0).reshape(2, 3)
    assert len(same_lines(lambda lib: lib["vmap"](shown(lib))(x[0]))) == 3
    same_lines(lambda lib: lib["vmap"](lib["vmap"](shown(lib)))(x))
    same_lines(lambda lib: lib["vmap"](shown(lib), in_axes=1)(x))
    same_lines(lambda lib: lib["jit"](lib["vmap"](shown(lib)))(x))


def test_under_derivatives_it_prints_the_primal_values_once():
    same_lines(lambda lib: lib["grad"](shown(lib))(3.0))
    same_lines(lambda lib: lib["jvp"](shown(lib), (1.5,), (1.0,)))
    same_lines(lambda lib: lib["jit"](lib["grad"](shown(lib)))(3.0))
    same_lines(lambda lib: lib["vmap"](lib["grad"](shown(lib)))(np.array([1.0, 2.0])))


def test_arrays_and_keywords_are_formatted_as_in_jax():
    v = RNG.normal(size=3).round(3)
    same_lines(lambda lib: lib["debug"].print("{a} and {b}", a=v, b=3))
    same_lines(lambda lib: lib["jit"](lambda x: lib["debug"].print("{}", x) or x)(v))


def test_callback_receives_pytrees_of_values():
    def use(lib, seen):
        def f(x):
            lib["debug"].callback(lambda tree: seen.append(float(tree["twice"])),
                                  {"twice": x * 2.0})
            return x
        g = lib["jit"](f)
        g(1.0)
        g(4.0)
        lib["vmap"](g)(np.array([5.0, 6.0]))
    ours, theirs = [], []
    use(CR, ours)
    use(JAX, theirs)
    assert ours == theirs == [2.0, 8.0, 10.0, 12.0]


def test_mistakes_are_named():
    with pytest.raises(TypeError, match="cr.debug.callback: expected a function"):
        cr.debug.callback(3.0, 1.0)
    with pytest.raises(TypeError, match="cr.debug.print: the first argument is a format"):
        cr.debug.print(1.0)
