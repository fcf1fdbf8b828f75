"""chainrule.autograd differentiates with respect to values of a vector space of the
user's own, as HIPS autograd does: a type given a ``VSpace`` (``VSpace.register``) and a
``Box`` (``Box.register``) is traced in its box, and its gradient is an element of its
space, the parts added with the space's ``add``.

autograd's examples/rkhs.py runs with autograd itself and with its imports changed, and
gives the same function; a smaller space of pairs is checked against central differences.
"""

import textwrap

import numpy as np
import pytest

from chainrule.autograd import grad, make_vjp, value_and_grad
from chainrule.autograd.extend import Box, VSpace, defvjp, primitive
from chainrule.autograd.util import func

RKHS = """
    import autograd.numpy as np
    from autograd import grad
    from autograd.extend import Box, VSpace, defvjp, primitive
    from autograd.util import func

    class RKHSFun:
        def __init__(self, kernel, alphas={}):
            self.alphas = alphas
            self.kernel = kernel
            self.vs = RKHSFunVSpace(self)

        @primitive
        def __call__(self, x):
            return sum([a * self.kernel(x, x_repr) for x_repr, a in self.alphas.items()], 0.0)

        def __add__(self, f):
            return self.vs.add(self, f)

        def __mul__(self, a):
            return self.vs.scalar_mul(self, a)

    defvjp(func(RKHSFun.__call__), lambda ans, f, x: lambda g: RKHSFun(f.kernel, {x: 1}) * g)

    class RKHSFunBox(Box, RKHSFun):
        @property
        def kernel(self):
            return self._value.kernel

    RKHSFunBox.register(RKHSFun)

    class RKHSFunVSpace(VSpace):
        def __init__(self, value):
            self.kernel = value.kernel

        def zeros(self):
            return RKHSFun(self.kernel)

        def _add(self, f, g):
            assert f.kernel is g.kernel
            return RKHSFun(f.kernel, add_dicts(f.alphas, g.alphas))

        def _scalar_mul(self, f, a):
            return RKHSFun(f.kernel, {x: a * a_cur for x, a_cur in f.alphas.items()})

        def _inner_prod(self, f, g):
            assert f.kernel is g.kernel
            return sum([a1 * a2 * f.kernel(x1, x2) for x1, a1 in f.alphas.items()
                        for x2, a2 in g.alphas.items()], 0.0)

    RKHSFunVSpace.register(RKHSFun)

    def add_dicts(d1, d2):
        d = {}
        for k, v in list(d1.items()) + list(d2.items()):
            d[k] = d[k] + v if k in d else v
        return d

    def sq_exp_kernel(x1, x2):
        return np.exp(-(x1 - x2) ** 2)

    xs = range(5)
    ys = [1, 2, 3, 2, 1]

    def logprob(f, xs, ys):
        return -sum((f(x) - y) ** 2 for x, y in zip(xs, ys))

    f = RKHSFun(sq_exp_kernel)
    for i in range(20):
        f = f + grad(logprob)(f, xs, ys) * 0.01
    result = [float(f(x)) for x in xs], {k: float(v) for k, v in f.alphas.items()}
"""


def test_autograds_rkhs_example_fits_the_same_function():
    pytest.importorskip("autograd")
    results = []
    for source in (RKHS, RKHS.replace("autograd", "chainrule.autograd")):
        namespace = {}
        exec(compile(textwrap.dedent(source), "<rkhs>", "exec"), namespace)
        results.append(namespace["result"])
    (theirs_values, theirs_alphas), (ours_values, ours_alphas) = results
    np.testing.assert_allclose(ours_values, theirs_values, rtol=1e-13)
    assert ours_alphas.keys() == theirs_alphas.keys() == set(range(5))
    np.testing.assert_allclose([ours_alphas[k] for k in range(5)],
                               [theirs_alphas[k] for k in range(5)], rtol=1e-13)


# A space of pairs (a, b): a @primitive method, the space's own operations inside the
# function, and an argument of the pair's space beside an ordinary float.

class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    @primitive
    def at(self, x):
        """a sin(x) + b x**2."""
        return self.a * np.sin(x) + self.b * x ** 2

    def __add__(self, other):
        return PairSpace(self).add(self, other)

    def __mul__(self, c):
        return PairSpace(self).scalar_mul(self, c)


defvjp(func(Pair.at),
       lambda ans, p, x: lambda g: Pair(g * np.sin(x), g * x ** 2),
       lambda ans, p, x: lambda g: g * (p.a * np.cos(x) + 2 * p.b * x))


class PairBox(Box, Pair):
    pass


PairBox.register(Pair)


class PairSpace(VSpace):
    def __init__(self, value):
        pass

    def zeros(self):
        return Pair(0.0, 0.0)

    def _add(self, p, q):
        return Pair(p.a + q.a, p.b + q.b)

    def _scalar_mul(self, p, c):
        return Pair(c * p.a, c * p.b)

    def _inner_prod(self, p, q):
        return p.a * q.a + p.b * q.b


PairSpace.register(Pair)


def loss(p, x):
    """The pair read twice, through the space's add, scalar_mul and inner_prod too."""
    q = p + p * 2.0                                        # 3p
    return q.at(x) ** 2 + PairSpace(p).inner_prod(p, q) * np.cos(x)


def central_differences(fun, p, x, h=1e-6):
    """(d/da, d/db, d/dx) of fun(p, x), by central differences."""
    return ((fun(Pair(p.a + h, p.b), x) - fun(Pair(p.a - h, p.b), x)) / (2 * h),
            (fun(Pair(p.a, p.b + h), x) - fun(Pair(p.a, p.b - h), x)) / (2 * h),
            (fun(p, x + h) - fun(p, x - h)) / (2 * h))


P, X = Pair(0.7, -1.3), 0.4


def test_the_gradient_of_a_pair_is_a_pair_of_central_differences():
    d_a, d_b, _ = central_differences(loss, P, X)
    g = grad(loss)(P, X)
    assert type(g) is Pair
    np.testing.assert_allclose([g.a, g.b], [d_a, d_b], rtol=1e-7)


def test_a_pair_and_a_float_together_and_each_alone():
    d_a, d_b, d_x = central_differences(loss, P, X)
    g_p, g_x = grad(loss, (0, 1))(P, X)
    np.testing.assert_allclose([g_p.a, g_p.b, g_x], [d_a, d_b, d_x], rtol=1e-7)
    assert type(g_x) is float
    # the float alone: chainrule's own reverse mode, the pair a constant it reads
    np.testing.assert_allclose(grad(loss, 1)(P, X), d_x, rtol=1e-7)


def test_value_and_grad_and_make_vjp_of_a_pair():
    value, g = value_and_grad(loss)(P, X)
    assert value == pytest.approx(loss(P, X), rel=1e-15)
    vjp, ans = make_vjp(lambda p: p.at(X))(P)
    assert ans == pytest.approx(P.at(X), rel=1e-15)
    h = vjp(2.0)
    np.testing.assert_allclose([h.a, h.b], [2 * np.sin(X), 2 * X ** 2], rtol=1e-15)


def test_a_result_that_does_not_depend_on_the_pair_has_the_spaces_zero():
    g = grad(lambda p, x: x ** 2)(P, X)
    assert (type(g), g.a, g.b) == (Pair, 0.0, 0.0)


def test_a_function_of_the_gradient_is_differentiated_again():
    # d/dx of the inner product of grad_p at(p, x) with p: d/dx (a sin x + b x**2)
    def along_p(x):
        g = grad(lambda p: p.at(x))(P)
        return PairSpace(g).inner_prod(g, P)
    np.testing.assert_allclose(grad(along_p)(X), P.a * np.cos(X) + 2 * P.b * X, rtol=1e-13)


def test_core_make_vjp_and_a_trace_box_a_pair_in_its_box():
    from chainrule.autograd.core import make_vjp as make_vjp_of_one
    from chainrule.autograd.tracer import Node, trace

    vjp, ans = make_vjp_of_one(lambda p: p.at(X) * 3.0, P)
    h = vjp(1.0)
    np.testing.assert_allclose([ans, h.a, h.b], [3 * P.at(X), 3 * np.sin(X), 3 * X ** 2],
                               rtol=1e-15)

    class Steps(Node):
        def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
            self.steps = parents[0].steps + [(fun.__name__, type(value).__name__)]

        def initialize_root(self):
            self.steps = []

    seen = []
    value, node = trace(Steps.new_root(), lambda p: seen.append(type(p)) or p.at(X) * 2, P)
    assert seen == [PairBox]
    assert node.steps == [("at", "float64"), ("multiply", "float64")]


def test_values_of_an_unregistered_type_are_refused():
    class Unregistered:
        a = 1.0

    with pytest.raises(TypeError, match="expected a float, Value, NumPy array or Tensor"):
        grad(lambda u: u.a * 2.0)(Unregistered())
    # beside a value of a registered space
    with pytest.raises(TypeError, match="expected a float, a NumPy array or a value of a "
                                        "registered vector space .* got Unregistered"):
        grad(lambda p, u: p.at(u.a), (0, 1))(P, Unregistered())


def test_a_space_without_a_box_and_a_box_without_a_space_are_refused():
    class SpaceOnly(Pair):
        pass

    class BoxOnly(Pair):
        pass

    PairSpace.register(SpaceOnly)
    with pytest.raises(TypeError, match=r"no Box.*SpaceOnlyBox\.register\(SpaceOnly\)"):
        grad(lambda p: p.at(X))(SpaceOnly(1.0, 2.0))

    class BoxOnlyBox(Box, BoxOnly):
        pass

    BoxOnlyBox.register(BoxOnly)
    with pytest.raises(TypeError, match=r"no vector space.*VSpace"):
        grad(lambda p: p.at(X))(BoxOnly(1.0, 2.0))


def test_a_method_without_a_vjp_and_a_result_that_is_not_a_scalar_are_refused():
    class Rules(Pair):
        @primitive
        def no_rule(self, x):
            return self.a * x

    class RulesBox(Box, Rules):
        pass

    RulesBox.register(Rules)
    PairSpace.register(Rules)
    with pytest.raises(TypeError, match="no_rule: argument 0 .* no VJP"):
        grad(lambda p: p.no_rule(X))(Rules(1.0, 2.0))
    with pytest.raises(TypeError, match="must return a scalar"):
        grad(lambda p: p * 2.0)(P)


def test_a_method_the_users_space_leaves_out_is_named():
    class Bare(VSpace):
        def __init__(self, value):
            pass
    for method, call in (("zeros()", lambda s: s.zeros()),
                         ("_inner_prod(x, y)", lambda s: s._inner_prod(1.0, 2.0))):
        with pytest.raises(TypeError, match=rf"^Bare: a vector space registered with "
                                            rf"VSpace.register must define "
                                            rf"{method.replace('(', '[(]').replace(')', '[)]')}"):
            call(Bare(None))
