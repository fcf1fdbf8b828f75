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


def results_of(source):
    """``result`` of a program run with autograd, then with chainrule.autograd."""
    pytest.importorskip("autograd")
    results = []
    for text in (source, source.replace("autograd", "chainrule.autograd")):
        namespace = {}
        exec(compile(textwrap.dedent(text), "<program>", "exec"), namespace)
        results.append(namespace["result"])
    return results


def test_autograds_rkhs_example_fits_the_same_function():
    (theirs_values, theirs_alphas), (ours_values, ours_alphas) = results_of(RKHS)
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


# The rest of autograd's operators on a space of vectors of your own: one program, run
# with autograd and with chainrule.autograd, its numbers compared, and each compared
# with central differences. ``Vec`` holds a NumPy array; with ``ARRAY`` it also gives
# NumPy that array (``__array__``), which a Jacobian with respect to it needs to stack
# its gradients, in autograd and here.

VEC = """
    import numpy as onp
    import autograd.numpy as np
    from autograd import (deriv, elementwise_grad, grad, grad_and_aux, hessian,
                          hessian_tensor_product, jacobian, make_ggnvp, make_hvp, make_jvp,
                          make_vjp, tensor_jacobian_product)
    from autograd.builtins import tuple as atuple
    from autograd.core import make_jvp as make_jvp_of_one
    from autograd.extend import Box, VSpace, defjvp, defvjp, primitive, vspace

    class Vec:
        def __init__(self, v):
            self.v = v

        def __add__(self, other):
            return vspace(self).add(self, other)

        def __mul__(self, c):
            return vspace(self).scalar_mul(self, c)

        __rmul__ = __mul__

        if ARRAY:
            def __array__(self, dtype=None, copy=None):
                return onp.asarray(self.v, dtype)

    @primitive
    def to_array(u):
        return u.v

    @primitive
    def from_array(a):
        return Vec(a)

    @primitive
    def vsin(u):
        return Vec(onp.sin(u.v))

    # the rules are themselves made of primitives, so that they can be differentiated
    defvjp(to_array, lambda ans, u: lambda g: from_array(g))
    defvjp(from_array, lambda ans, a: lambda g: to_array(g))
    defvjp(vsin, lambda ans, u: lambda g: from_array(to_array(g) * np.cos(to_array(u))))
    defjvp(to_array, lambda g, ans, u: to_array(g))
    defjvp(from_array, lambda g, ans, a: from_array(g))
    defjvp(vsin, lambda g, ans, u: from_array(to_array(g) * np.cos(to_array(u))))

    class VecBox(Box, Vec):
        pass

    VecBox.register(Vec)

    class VecSpace(VSpace):
        def __init__(self, value):
            self.shape = onp.shape(value.v)
            self.size = int(onp.prod(self.shape))

        def zeros(self):
            return Vec(onp.zeros(self.shape))

        def ones(self):
            return Vec(onp.ones(self.shape))

        def standard_basis(self):
            for i in range(self.size):
                e = onp.zeros(self.size)
                e[i] = 1.0
                yield Vec(e.reshape(self.shape))

        def _add(self, x, y):
            return Vec(x.v + y.v)

        def _scalar_mul(self, x, a):
            return Vec(x.v * a)

        def _inner_prod(self, x, y):
            return onp.sum(x.v * y.v)

    VecSpace.register(Vec)

    def f_scalar(u):
        # through a primitive of Vec and the space's add, scalar_mul and inner_prod
        w = vsin(u) * 2.0 + u
        return np.sum(to_array(w) ** 3) + vspace(u).inner_prod(u, w)

    def f_vec(u):
        return vsin(u) * 3.0 + u

    def f_arr(u):
        return np.sin(to_array(u)) * to_array(u)
"""


def both(array=False):
    """The namespaces of VEC run with chainrule.autograd and with autograd."""
    pytest.importorskip("autograd")
    spaces = []
    for source in (VEC, VEC.replace("autograd", "chainrule.autograd")):
        namespace = {"ARRAY": array}
        exec(compile(textwrap.dedent(source), "<vec>", "exec"), namespace)
        spaces.append(namespace)
    theirs, ours = spaces
    return ours, theirs


def plain(value):
    """A result as NumPy arrays: a Vec's array, each of a tuple's."""
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return np.asarray(value.v if hasattr(value, "v") else value, dtype=float)


def agree(ours, theirs):
    """chainrule.autograd's result is autograd's, type and numbers."""
    if isinstance(theirs, tuple):
        assert type(ours) is tuple and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            agree(a, b)
        return
    assert type(ours).__name__ == type(theirs).__name__ or (
        np.ndim(plain(theirs)) == 0 and np.ndim(plain(ours)) == 0)
    np.testing.assert_allclose(plain(ours), plain(theirs), rtol=1e-12, atol=1e-13)


def numeric_jacobian(ns, fun, u, h=1e-6):
    """d fun(Vec(u)) / du by central differences, of shape out.shape + u.shape."""
    columns = []
    for e in np.eye(u.size):
        step = h * e.reshape(u.shape)
        columns.append((plain(fun(ns["Vec"](u + step))) - plain(fun(ns["Vec"](u - step))))
                       / (2 * h))
    return np.moveaxis(np.array(columns), 0, -1).reshape(
        np.shape(plain(fun(ns["Vec"](u)))) + u.shape)


def test_elementwise_grad_of_a_vec_is_the_vjp_of_the_results_ones():
    rng = np.random.default_rng(11)
    u = rng.normal(size=(2, 3))
    ours, theirs = both()
    for name in ("f_vec", "f_arr", "f_scalar"):
        got = ours["elementwise_grad"](ours[name])(ours["Vec"](u))
        agree(got, theirs["elementwise_grad"](theirs[name])(theirs["Vec"](u)))
        assert type(got) is ours["Vec"]
        jac = numeric_jacobian(ours, ours[name], u)
        summed = jac.reshape(-1, u.size).sum(axis=0).reshape(u.shape)
        np.testing.assert_allclose(got.v, summed, rtol=1e-6)


def test_jacobian_of_a_vec_stacks_the_gradients_shaped_by_the_spaces():
    rng = np.random.default_rng(12)
    u = rng.normal(size=(2, 3))
    ours, theirs = both(array=True)
    for name, shape in (("f_vec", (2, 3, 2, 3)), ("f_arr", (2, 3, 2, 3)),
                        ("f_scalar", (2, 3))):
        got = ours["jacobian"](ours[name])(ours["Vec"](u))
        agree(got, theirs["jacobian"](theirs[name])(theirs["Vec"](u)))
        assert got.shape == shape
        np.testing.assert_allclose(got, numeric_jacobian(ours, ours[name], u), rtol=1e-6,
                                   atol=1e-9)
    # and the tensor-Jacobian product, autograd's Jacobian of the contraction
    tensor = rng.normal(size=(2, 3))
    got = ours["tensor_jacobian_product"](ours["f_arr"])(ours["Vec"](u), tensor)
    agree(got, theirs["tensor_jacobian_product"](theirs["f_arr"])(theirs["Vec"](u), tensor))
    np.testing.assert_allclose(
        got, np.tensordot(tensor, numeric_jacobian(ours, ours["f_arr"], u), 2), rtol=1e-6)


def test_a_jacobian_whose_gradients_numpy_cannot_stack_is_refused_as_in_autograd():
    u = np.random.default_rng(13).normal(size=3)
    ours, theirs = both(array=False)
    with pytest.raises(ValueError, match="cannot reshape"):  # autograd: an object array
        theirs["jacobian"](theirs["f_vec"])(theirs["Vec"](u))
    with pytest.raises(TypeError, match=r"^jacobian: .* a Vec is a Vec, which NumPy cannot "
                                        r"make an array of; define Vec.__array__"):
        ours["jacobian"](ours["f_vec"])(ours["Vec"](u))


def test_a_method_jacobian_or_elementwise_grad_needs_is_named():
    u = np.random.default_rng(14).normal(size=3)
    for lib, ns in zip(("chainrule", "autograd"), both(array=True)):
        class Bare(ns["VecSpace"]):  # the space without ones, standard_basis or shape
            ones = standard_basis = ns["VSpace"].ones

            def __init__(self, value):
                pass
        Bare.standard_basis = ns["VSpace"].standard_basis
        ns["VSpace"].register(ns["Vec"], Bare)
        x = ns["Vec"](u)
        if lib == "autograd":  # its base class asserts
            for operator in ("elementwise_grad", "jacobian"):
                with pytest.raises((AssertionError, AttributeError)):
                    ns[operator](ns["f_vec"])(x)
            continue
        with pytest.raises(TypeError, match=r"^Bare: .* must define ones\(\) for "
                                            r"elementwise_grad"):
            ns["elementwise_grad"](ns["f_vec"])(x)
        with pytest.raises(TypeError, match=r"^Bare: .* must define shape for jacobian"):
            ns["jacobian"](ns["f_vec"])(x)
        Bare.shape = (3,)
        with pytest.raises(TypeError, match=r"^Bare: .* must define standard_basis\(\) for "
                                            r"jacobian"):
            ns["jacobian"](ns["f_vec"])(x)


def test_make_jvp_of_a_vec_carries_tangents_by_the_defjvp_rules():
    rng = np.random.default_rng(15)
    u, t = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    ours, theirs = both()
    h = 1e-6
    for name in ("f_vec", "f_arr", "f_scalar"):
        got = ours["make_jvp"](ours[name])(ours["Vec"](u))(ours["Vec"](t))
        agree(got, theirs["make_jvp"](theirs[name])(theirs["Vec"](u))(theirs["Vec"](t)))
        agree(ours["make_jvp_of_one"](ours[name], ours["Vec"](u))(ours["Vec"](t)), got)
        value, tangent = got
        fun = ours[name]
        np.testing.assert_allclose(plain(value), plain(fun(ours["Vec"](u))), rtol=1e-15)
        np.testing.assert_allclose(
            plain(tangent),
            (plain(fun(ours["Vec"](u + h * t))) - plain(fun(ours["Vec"](u - h * t)))) / (2 * h),
            rtol=1e-6)
    # deriv: autograd's, the tangent along the argument's ones()
    got = ours["deriv"](ours["f_vec"])(ours["Vec"](u))
    agree(got, theirs["deriv"](theirs["f_vec"])(theirs["Vec"](u)))
    np.testing.assert_allclose(got.v, 3 * np.cos(u) + 1, rtol=1e-14)


def test_a_primitive_without_a_jvp_rule_is_refused_in_forward_mode():
    u = np.random.default_rng(16).normal(size=3)
    for lib, ns in zip(("chainrule", "autograd"), both()):
        vcube = ns["primitive"](lambda v: ns["Vec"](v.v ** 3))
        x = ns["Vec"](u)
        error = NotImplementedError if lib == "autograd" else TypeError
        with pytest.raises(error, match="JVP of <lambda>" if lib == "autograd"
                           else "<lambda>: argument 0 needs a forward-mode derivative"):
            ns["make_jvp"](vcube)(x)(x)


def numeric_hessian_along(ns, u, t, h=1e-5):
    """d/ds grad(f_scalar)(u + s t) at 0, by central differences."""
    gradient = ns["grad"](ns["f_scalar"])
    return (gradient(ns["Vec"](u + h * t)).v - gradient(ns["Vec"](u - h * t)).v) / (2 * h)


def test_hessian_products_of_a_vec_nest_a_vjp_in_a_vjp():
    rng = np.random.default_rng(17)
    u, t = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    ours, theirs = both()  # (autograd's hessian_tensor_product with ARRAY: see below)
    expected = numeric_hessian_along(ours, u, t)
    hvp, gradient = ours["make_hvp"](ours["f_scalar"])(ours["Vec"](u))
    their_hvp, their_gradient = theirs["make_hvp"](theirs["f_scalar"])(theirs["Vec"](u))
    agree(gradient, their_gradient)
    agree(hvp(ours["Vec"](t)), their_hvp(theirs["Vec"](t)))
    np.testing.assert_allclose(hvp(ours["Vec"](t)).v, expected, rtol=1e-6)
    got = ours["hessian_tensor_product"](ours["f_scalar"])(ours["Vec"](u), ours["Vec"](t))
    agree(got, theirs["hessian_tensor_product"](theirs["f_scalar"])(theirs["Vec"](u),
                                                                     theirs["Vec"](t)))
    np.testing.assert_allclose(got.v, expected, rtol=1e-6)


def test_the_hessian_of_a_vec_is_refused_as_in_autograd():
    # autograd's hessian is jacobian(jacobian(f)): the inner Jacobian is a NumPy array,
    # stacked from the gradients, which the outer one cannot differentiate back
    u = np.random.default_rng(18).normal(size=3)
    for array in (False, True):
        ours, theirs = both(array)
        with pytest.raises((ValueError, AttributeError)):
            theirs["hessian"](theirs["f_scalar"])(theirs["Vec"](u))
        with pytest.raises(TypeError, match=r"^hessian: not with respect to a Vec .* use "
                                            r"make_hvp or hessian_tensor_product"):
            ours["hessian"](ours["f_scalar"])(ours["Vec"](u))


def test_grad_and_aux_and_make_ggnvp_of_a_vec():
    rng = np.random.default_rng(19)
    u, t = rng.normal(size=3), rng.normal(size=3)
    ours, theirs = both()

    def with_aux(ns):
        return lambda x: (ns["f_scalar"](x), ns["to_array"](x) * 2.0)
    got = ours["grad_and_aux"](with_aux(ours))(ours["Vec"](u))
    agree(got, theirs["grad_and_aux"](with_aux(theirs))(theirs["Vec"](u)))
    np.testing.assert_allclose(got[1], 2 * u, rtol=1e-15)
    assert type(got[1]) is np.ndarray
    # J^T J t for g = half the sum of squares
    got = ours["make_ggnvp"](ours["f_arr"])(ours["Vec"](u))(ours["Vec"](t))
    agree(got, theirs["make_ggnvp"](theirs["f_arr"])(theirs["Vec"](u))(theirs["Vec"](t)))
    jac = numeric_jacobian(ours, ours["f_arr"], u)
    np.testing.assert_allclose(got.v, jac.T @ jac @ t, rtol=1e-6)


def test_a_vec_beside_a_float_and_results_that_are_tuples():
    rng = np.random.default_rng(20)
    u, t = rng.normal(size=3), rng.normal(size=3)
    c, h = 1.7, 1e-6
    ours, theirs = both(array=True)

    def scaled(ns):
        return lambda x, k: ns["f_vec"](x) * k

    def run(ns):
        x, tx = ns["Vec"](u), ns["Vec"](t)
        both_jvp = ns["make_jvp"](scaled(ns), (0, 1))(x, c)((tx, 0.5))
        float_jvp = ns["make_jvp"](scaled(ns), 1)(x, c)(1.0)  # the Vec a constant
        ewg = ns["elementwise_grad"](scaled(ns), (0, 1))(x, c)
        hvp, _ = ns["make_hvp"](lambda x, k: ns["f_scalar"](x) * k, (0, 1))(x, c)
        # a tuple of results: autograd's needs its builtins.tuple (Python's is a constant)
        pair_vjp, pair = ns["make_vjp"](lambda x: ns["atuple"]((ns["vsin"](x),
                                                                ns["f_scalar"](x))))(x)
        return both_jvp, float_jvp, ewg, hvp((tx, 0.5)), pair, pair_vjp((tx, 2.0))
    got = run(ours)
    agree(got, run(theirs))
    (_, tangent), (_, along_c), (ewg_x, ewg_c), (hvp_x, hvp_c), _, pair_grad = got
    vec = ours["Vec"]
    np.testing.assert_allclose(pair_grad.v, t * np.cos(u) + 2 * ours["grad"](
        ours["f_scalar"])(vec(u)).v, rtol=1e-14)

    def f(x, k):
        return 3 * np.sin(x) * k + x * k
    np.testing.assert_allclose(
        tangent.v, (f(u + h * t, c + h * 0.5) - f(u - h * t, c - h * 0.5)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(along_c.v, f(u, 1.0), rtol=1e-14)
    np.testing.assert_allclose([*ewg_x.v, ewg_c], [*(3 * np.cos(u) + 1) * c, f(u, 1.0).sum()],
                               rtol=1e-13)
    # the Hessian of k f_scalar(x) along (t, 1/2), by central differences of its gradient
    grad_both = ours["grad"](lambda x, k: ours["f_scalar"](x) * k, (0, 1))
    ahead, behind = grad_both(vec(u + h * t), c + h / 2), grad_both(vec(u - h * t), c - h / 2)
    np.testing.assert_allclose([*hvp_x.v, hvp_c],
                               (np.array([*ahead[0].v, ahead[1]])
                                - np.array([*behind[0].v, behind[1]])) / (2 * h), rtol=1e-6)


def test_a_jacobian_with_respect_to_a_vec_and_a_float_is_refused_as_in_autograd():
    u = np.random.default_rng(21).normal(size=3)
    ours, theirs = both(array=True)
    with pytest.raises(ValueError, match="inhomogeneous"):
        theirs["jacobian"](lambda x, k: theirs["f_arr"](x) * k, (0, 1))(theirs["Vec"](u), 2.0)
    with pytest.raises(TypeError, match=r"^jacobian: with respect to one value of a vector "
                                        r"space of your own at a time"):
        ours["jacobian"](lambda x, k: ours["f_arr"](x) * k, (0, 1))(ours["Vec"](u), 2.0)


def test_a_value_of_a_users_space_made_inside_a_function_of_a_float():
    """The function makes a value of a registered space from the float it is
    differentiated in: chainrule's transforms cannot carry it, so the gradient comes
    from the trace autograd's kind of boxes (as autograd computes it)."""
    program = """
        from autograd.extend import primitive, defvjp, Box, VSpace
        from autograd import grad, value_and_grad, make_vjp
        import autograd.numpy as anp

        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

            @primitive
            def dot(self, other):
                return self.a * other.a + self.b * other.b

        class PairBox(Box):
            def dot(self, other):
                return Pair.dot(self, other)
        PairBox.register(Pair)

        class PairSpace(VSpace):
            def __init__(self, value):
                self.size = 2
            def zeros(self):
                return Pair(0.0, 0.0)
            def _add(self, x, y):
                return Pair(x.a + y.a, x.b + y.b)
            def _scalar_mul(self, x, s):
                return Pair(x.a * s, x.b * s)
            def _inner_prod(self, x, y):
                return x.a * y.a + x.b * y.b
        PairSpace.register(Pair)

        @primitive
        def make_pair(a, b):
            return Pair(a, b)
        defvjp(make_pair, lambda ans, a, b: lambda g: g.a, lambda ans, a, b: lambda g: g.b)
        defvjp(Pair.dot, lambda ans, p, q: lambda g: Pair(g * q.a, g * q.b),
               lambda ans, p, q: lambda g: Pair(g * p.a, g * p.b))
        f = lambda x: Pair.dot(make_pair(x, x * x), make_pair(2.0, anp.sin(x)))
        vjp, value = make_vjp(f)(1.3)
        result = [float(grad(f)(1.3)), *map(float, value_and_grad(f)(0.4)),
                  float(vjp(2.0)), float(value)]
    """
    theirs, ours = results_of(program)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
