"""Complex numbers through chainrule.autograd, against HIPS autograd running the same
program: the vector space of a complex value (two real coordinates per entry, 1 + 1j as
its ones, Re(sum(conj(x) y)) as the inner product, the conjugate as its covector),
``grad`` of a real function of complex arguments, ``holomorphic_grad``, the VJPs and
JVPs that autograd's ``check_grads`` compares with central differences, and the
deprecated ways of giving a primitive its rules."""

import warnings

import numpy as np
import pytest

autograd = pytest.importorskip("autograd")
import autograd.numpy as anp  # noqa: E402
from autograd import core as ag_core  # noqa: E402

import chainrule.autograd as cag  # noqa: E402
import chainrule.autograd.numpy as cnp  # noqa: E402
from chainrule.autograd import core as cr_core  # noqa: E402
from chainrule.autograd.test_util import check_grads  # noqa: E402

Z = np.array([0.3 + 0.4j, -1.2 + 0.1j, 0.7 - 0.9j])


def both(program):
    """program(numpy module) run with autograd's and chainrule's."""
    return program(anp, autograd), program(cnp, cag)


def test_the_space_of_a_complex_array_is_autograds():
    for value in (Z, 2.0 - 1.0j, {"z": Z, "x": np.ones(2)}):
        ours, theirs = cr_core.vspace(value), ag_core.vspace(value)
        assert ours.size == theirs.size
        np.testing.assert_array_equal(ours.ones()["z"] if isinstance(value, dict)
                                      else ours.ones(),
                                      theirs.ones()["z"] if isinstance(value, dict)
                                      else theirs.ones())
    ours, theirs = cr_core.vspace(Z), ag_core.vspace(Z)
    assert ours.iscomplex and theirs.iscomplex
    for a, b in zip(ours.standard_basis(), theirs.standard_basis()):
        np.testing.assert_array_equal(a, b)
    u, v = Z, Z[::-1] * 1j
    assert float(ours.inner_prod(u, v)) == pytest.approx(float(theirs.inner_prod(u, v)),
                                                         rel=1e-15)
    np.testing.assert_array_equal(ours.covector(u), theirs.covector(u))
    np.random.seed(3)
    first = ours.randn()
    np.random.seed(3)
    np.testing.assert_array_equal(first, theirs.randn())  # the same draws, in order


@pytest.mark.parametrize("name, program", [
    ("abs squared", lambda np_, ad: ad.grad(lambda z: np_.sum(np_.abs(z) ** 2))(Z)),
    ("real of sin", lambda np_, ad: ad.grad(lambda z: np_.sum(np_.real(np_.sin(z) * z)))(Z)),
    ("angle", lambda np_, ad: ad.grad(lambda z: np_.sum(np_.angle(z) ** 2))(Z)),
    ("holomorphic", lambda np_, ad: ad.holomorphic_grad(lambda z: np_.exp(z) * z)(0.2 + 0.5j)),
    ("elementwise", lambda np_, ad: ad.elementwise_grad(lambda z: np_.abs(np_.sin(z)))(Z)),
    ("vjp", lambda np_, ad: ad.make_vjp(lambda z: np_.tanh(z) * z)(Z)[0](Z[::-1])),
    ("jvp", lambda np_, ad: ad.make_jvp(lambda z: np_.cos(z) ** 2)(Z)(Z * 1j)[1]),
])
def test_derivatives_of_complex_programs_are_autograds(name, program):
    theirs, ours = both(program)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [
    lambda z: cnp.sum(cnp.abs(cnp.exp(z)) ** 2),
    lambda z: cnp.tanh(z) * cnp.conj(z),
    lambda z: cnp.fft.fft(z * z),
    lambda z: cnp.linalg.norm(z),
], ids=["abs-exp", "tanh-conj", "fft", "norm"])
def test_check_grads_takes_complex_arguments_to_second_order(f):
    np.random.seed(0)
    check_grads(f, modes=["fwd", "rev"], order=2)(Z)


def test_elementwise_grad_of_a_complex_output_is_refused_as_in_autograd():
    for module, ad in ((anp, autograd), (cnp, cag)):
        with pytest.raises(TypeError, match="(?i)elementwise_grad.* real"):
            ad.elementwise_grad(module.sin)(Z)


def test_holomorphic_grad_warns_on_a_real_argument():
    with pytest.warns(UserWarning, match="not complex"):
        assert cag.holomorphic_grad(lambda x: x ** 2)(3.0) == 6.0


def test_deprecated_primitive_methods_give_rules_with_autograds_warning():
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])

    @cag.primitive
    def old(a, b):
        return a * b
    with pytest.warns(DeprecationWarning, match="defvjp"):
        old.defvjp(lambda g, ans, vs, gvs, a, b: g * b)
    with pytest.warns(DeprecationWarning, match="defgrad"):
        old.defgrad(lambda ans, a, b: lambda g: g * a, argnum=1)
    np.testing.assert_array_equal(cag.grad(lambda a, b: cnp.sum(old(a, b)), (0, 1))(x, y),
                                  (y, x))

    @cag.primitive
    def flat(a, b):
        return 0 * a * b
    with pytest.warns(DeprecationWarning, match="defvjp_is_zero"):
        flat.defvjp_is_zero([0, 1])
    np.testing.assert_array_equal(cag.grad(lambda a: cnp.sum(flat(a, y)))(x), [0.0, 0.0])


def test_a_rule_given_as_none_is_zero_and_a_missing_one_raises():
    from chainrule.autograd.extend import defvjp, primitive

    @primitive
    def scaled(a, k):
        return a * k
    defvjp(scaled, lambda ans, a, k: lambda g: g * k, None)
    assert cag.grad(lambda k: scaled(2.0, k))(3.0) == 0.0  # autograd's meaning of None
    assert cag.grad(lambda a: scaled(a, 3.0))(2.0) == 3.0

    @primitive
    def first_only(a, k):
        return a * k
    defvjp(first_only, lambda ans, a, k: lambda g: g * k)
    with pytest.raises(TypeError, match="argument 1 .* not differentiable"):
        cag.grad(lambda k: first_only(2.0, k))(3.0)


def test_quick_grad_check_and_where_as_autograd_has_them():
    from chainrule.autograd.util import quick_grad_check
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        quick_grad_check(lambda x, y: x ** 2 + y, 1.0, (2.0,))
    assert cnp.where(True, 1, 2) == anp.where(True, 1, 2) == 1
    assert cnp.where([True, False], [1, 2], y=[3, 4]) == [1, 4]
    np.testing.assert_array_equal(cnp.where([True, False, True])[0], [0, 2])
    np.testing.assert_array_equal(cnp.where(np.array([True, False]), x=np.ones(2), y=np.zeros(2)),
                                  [1.0, 0.0])
