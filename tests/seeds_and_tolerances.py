"""Random numbers and finite-difference tolerances that do not depend on what ran before.

**Seeds.** A test module's ``RNG = per_test_generator(31)`` stands where it had
``RNG = np.random.default_rng(31)``. Inside a test, ``RNG.standard_normal(...)`` draws from
a generator seeded by that test's node id (``test_x.py::test_y[case]``), made afresh when
the test starts (tests/conftest.py calls :func:`start_test` and :func:`end_test`): a test
draws the same numbers whichever tests ran before it in its process, in whatever order,
and on however many workers. Outside a test (at import, building parameter lists) it
draws from ``np.random.default_rng(31)``, as before: a module is imported once per
process, so those draws are the same in every process too. :func:`seeded` is the same
for a generator a test asks for by name.

**Central differences.** ``(f(x + h) - f(x - h)) / 2h`` is off from f'(x) by its
truncation, ``h**2 / 6 * f'''``, plus its rounding: each of ``f(x + h)`` and
``f(x - h)`` carries an error of about ``eps * |f|``, and their difference is divided by
``2h``. :func:`central_difference_atol` turns those two into the absolute tolerance of a
comparison, so that a check states the step and the function's scale instead of a bare
number fitted to one draw.
"""

import zlib

import numpy as np

EPS = np.finfo(np.float64).eps

_current = None  # the running test's generator, or None between tests


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


def seeded(*parts):
    """A generator seeded by the given names (a test's id, a case's name): every run,
    every worker and every order draws the same numbers."""
    return np.random.default_rng(_seed(*parts))


def start_test(nodeid):
    """Called by tests/conftest.py before each test: the test's own generator."""
    global _current
    _current = seeded(nodeid)


def end_test():
    global _current
    _current = None


class per_test_generator:
    """A module-level stand-in for a ``numpy.random.Generator``: in a test, that test's
    own generator (seeded by its node id); outside one, ``default_rng(import_seed)``."""

    def __init__(self, import_seed):
        self._at_import = np.random.default_rng(import_seed)

    def __getattr__(self, name):
        return getattr(_current if _current is not None else self._at_import, name)


def central_differences(f, a, h=1e-5):
    """The Jacobian of f at a by central differences, one entry of a at a time: shape
    ``f(a).shape + a.shape`` (a a number or an array). Its error is what
    :func:`central_difference_atol` bounds."""
    a = np.asarray(a, dtype=float)
    columns = []
    for k in range(a.size):
        step = np.zeros(a.size)
        step[k] = h
        step = step.reshape(a.shape)
        columns.append((np.asarray(f(a + step)) - np.asarray(f(a - step))) / (2 * h))
    return np.stack(columns, axis=-1).reshape(np.shape(f(a)) + a.shape)


def central_difference_atol(h, f_scale, third_derivative_scale=None, *, conditioning=1.0,
                            safety=10.0):
    """The absolute error to allow a central difference of step ``h``.

    ``f_scale`` is the size of the function's values, summed over what it adds up
    (``sum |w * y|`` for ``f = sum(w * y)``: the size of its rounding errors, which a
    cancelling sum does not shrink). ``third_derivative_scale`` bounds ``|f'''|`` along
    the step; by default the function is taken to vary on the scale of an input of order
    1, so ``|f'''| ~ f_scale``. ``conditioning`` multiplies the rounding error of an
    evaluation that is less accurate than a correctly rounded one (an iterative matrix
    function, a quadrature, an ODE solve); ``safety`` covers the constants the estimate
    leaves out, the same for every draw.
    """
    if third_derivative_scale is None:
        third_derivative_scale = f_scale
    truncation = h * h / 6.0 * third_derivative_scale
    rounding = conditioning * EPS * f_scale / h
    return safety * (truncation + rounding)
