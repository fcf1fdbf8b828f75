"""cr.jit and random numbers: a draw chainrule makes (Dropout, cr.random) is a call of
the program, drawn again at each call exactly as eager code draws; a draw the function
makes behind the program's back (numpy.random's global functions, a Generator or
RandomState, Python's random) would be frozen into the program, so the trace refuses it
with the way around."""

import random

import numpy as np
import pytest

import chainrule as cr

REFUSED = r"cr.jit: \S+ drew random numbers from {} while being traced; in the program " \
          r"they would be constants"


def test_numpys_global_functions_are_refused():
    def step(x):
        return x + np.random.normal(size=x.shape)
    with pytest.raises(TypeError, match=REFUSED.format("numpy.random's global functions")):
        cr.jit(step)(np.zeros(3))


def test_a_generator_argument_closure_or_attribute_is_refused():
    rng = np.random.default_rng(0)

    def closing(x):
        return x + rng.normal(size=x.shape)

    def taking(x, g):
        return x * g.uniform(size=x.shape)

    class Noisy:
        def __init__(self):
            self.rng = np.random.RandomState(1)

        def __call__(self, x):
            return x + self.rng.standard_normal(x.shape)

    noisy = Noisy()
    for jitted, args in ((cr.jit(closing), ()), (cr.jit(taking), (rng,)),
                         (cr.jit(lambda x: noisy(x)), ())):
        with pytest.raises(TypeError, match="a (Generator|RandomState) it reaches"):
            jitted(np.zeros(3), *args)


def test_pythons_random_module_is_refused():
    with pytest.raises(TypeError, match=REFUSED.format("Python's random module")):
        cr.jit(lambda x: x * random.random())(np.ones(2))


def test_chainrules_own_draws_are_calls_of_the_program_as_eager():
    eager_drop, jit_drop = cr.nn.Dropout(0.5, rng=3), cr.nn.Dropout(0.5, rng=3)
    step = cr.jit(lambda x: jit_drop(x))
    for _ in range(4):  # the same generator stream, call after call
        np.testing.assert_array_equal(step(cr.ones(8)).data, eager_drop(cr.ones(8)).data)
    sample = cr.jit(lambda key: cr.random.normal(key, (3,)))
    for seed in range(3):
        key = cr.random.key(seed)
        np.testing.assert_array_equal(sample(key), cr.random.normal(key, (3,)))


def test_a_function_that_draws_nothing_traces_as_before():
    rng = np.random.default_rng(0)
    noise = rng.normal(size=3)  # drawn outside: an argument of the program
    step = cr.jit(lambda x, n: x + n)
    np.testing.assert_array_equal(step(np.zeros(3), noise), noise)
