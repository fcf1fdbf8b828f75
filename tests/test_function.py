"""cr.Function, PyTorch's class spelling of a custom operation, against
torch.autograd.Function (float64): the same classes, written once for each library,
give the same values, gradients and second derivatives; and it works wherever a
cr.primitive does (transforms, forward mode, cr.jit, gradcheck)."""

import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(3)


class Legendre3(cr.Function):
    """P3(x) = (5x^3 - 3x) / 2, as PyTorch's tutorial writes it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 1.5 * (5 * x ** 2 - 1)


class TorchLegendre3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 1.5 * (5 * x ** 2 - 1)


class Relu(cr.Function):
    """A backward that writes into a copy of the gradient, as PyTorch's tutorial does."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clip(0, None)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        out = grad.clone()
        out[x < 0] = 0
        return out


class TorchRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        out = grad.clone()
        out[x < 0] = 0
        return out


class Exp(cr.Function):
    """Saves its output, as PyTorch's documentation's example does."""

    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


class TorchExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


PAIRS = [(Legendre3, TorchLegendre3), (Relu, TorchRelu), (Exp, TorchExp)]


@pytest.mark.parametrize("ours, theirs", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_a_function_gives_torchs_values_and_gradients(ours, theirs):
    x = RNG.standard_normal(5)
    weights = RNG.standard_normal(5)
    tx = torch.tensor(x, requires_grad=True)
    (theirs.apply(tx) * torch.tensor(weights)).sum().backward()
    cx = cr.tensor(x, requires_grad=True)
    out = ours.apply(cx)
    np.testing.assert_allclose(out.data, theirs.apply(torch.tensor(x)).numpy(), rtol=1e-14)
    (out * weights).sum().backward()
    np.testing.assert_allclose(cx.grad, tx.grad.numpy(), rtol=1e-14)
    np.testing.assert_allclose(cr.grad(lambda x: cr.sum(ours.apply(x) * weights))(x),
                               tx.grad.numpy(), rtol=1e-14)


@pytest.mark.parametrize("ours, theirs", [PAIRS[0], PAIRS[2]], ids=["Legendre3", "Exp"])
def test_second_derivatives_differentiate_backward_as_torchs_double_backward(ours, theirs):
    x = RNG.standard_normal(4)
    tx = torch.tensor(x, requires_grad=True)
    g, = torch.autograd.grad(theirs.apply(tx).sum(), tx, create_graph=True)
    second = torch.autograd.grad((g * torch.arange(1.0, 5.0, dtype=torch.float64)).sum(), tx)[0]
    ours_second = cr.grad(lambda x: cr.sum(cr.grad(lambda x: cr.sum(ours.apply(x)))(x)
                                           * np.arange(1.0, 5.0)))(x)
    np.testing.assert_allclose(ours_second, second.numpy(), rtol=1e-13)
    cx = cr.tensor(x, requires_grad=True)  # the same through backward(create_graph=True)
    ours.apply(cx).sum().backward(create_graph=True)
    grad = cx.grad
    cx.grad = None
    (grad * np.arange(1.0, 5.0)).sum().backward()
    np.testing.assert_allclose(cx.grad, second.numpy(), rtol=1e-13)


class Square(cr.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad


def test_forward_mode_is_derived_from_backward_or_taken_from_jvp():
    class SquareWithJvp(Square):
        calls = []

        @staticmethod
        def jvp(ctx, tangent):
            SquareWithJvp.calls.append(1)
            x, = ctx.saved_tensors
            return 2 * x * tangent

    x, t = RNG.standard_normal(3), RNG.standard_normal(3)
    for op in (Square, SquareWithJvp):
        np.testing.assert_allclose(cr.jvp(op.apply, (x,), (t,))[1], 2 * x * t, rtol=1e-14)
        np.testing.assert_allclose(cr.jacfwd(op.apply)(x), np.diag(2 * x), rtol=1e-14)
        np.testing.assert_allclose(cr.hessian(lambda x: cr.sum(op.apply(x) * x))(x),
                                   np.diag(6 * x), rtol=1e-13)
    assert SquareWithJvp.calls
    assert cr.gradcheck(Square.apply, x, order=2)


def test_several_inputs_a_none_gradient_and_attributes_on_ctx():
    class Affine(cr.Function):
        @staticmethod
        def forward(ctx, x, w, label):
            ctx.label = label
            ctx.save_for_backward(x, w)
            return x * w + 1.0

        calls = []

        @staticmethod
        def backward(ctx, grad):
            Affine.calls.append(1)
            x, w = ctx.saved_tensors
            assert ctx.label == "affine"
            return grad * w, grad * x, None

    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    gx, gw = cr.grad(lambda x, w: cr.sum(Affine.apply(x, w, "affine")), argnums=(0, 1))(x, w)
    assert len(Affine.calls) == 1   # one call of backward gives both gradients
    np.testing.assert_allclose(gx, w, rtol=1e-14)
    np.testing.assert_allclose(gw, x, rtol=1e-14)


def test_a_function_runs_under_jit():
    step = cr.jit(lambda x: cr.grad(lambda x: cr.sum(Legendre3.apply(x)))(x))
    x = RNG.standard_normal(4)
    for _ in range(2):  # traced, then replayed
        np.testing.assert_allclose(step(x), 1.5 * (5 * x ** 2 - 1), rtol=1e-13)


def test_what_cannot_be_right_is_refused_in_one_line():
    class SavesAnIntermediate(cr.Function):
        @staticmethod
        def forward(ctx, x):
            square = x * x
            ctx.save_for_backward(square)
            return square * x

        @staticmethod
        def backward(ctx, grad):
            square, = ctx.saved_tensors
            return 3 * square * grad

    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(cr.grad(lambda x: cr.sum(SavesAnIntermediate.apply(x)))(x),
                               3 * x ** 2)
    with pytest.raises(TypeError, match="SavesAnIntermediate: a second derivative through "
                                        "a value saved"):
        cr.hessian(lambda x: cr.sum(SavesAnIntermediate.apply(x)))(x)

    class TooFew(cr.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match=r"TooFew.backward returned 1 gradient\(s\) for 2"):
        cr.grad(lambda x: cr.sum(TooFew.apply(x, x)))(x)

    class Writes(Relu):
        pass

    with pytest.raises(TypeError, match="Writes: forward mode needs a staticmethod jvp"):
        cr.jvp(Writes.apply, (x,), (x,))


def test_a_gradient_of_the_wrong_shape_names_the_function_and_the_shapes():
    class ShortSquare(Square):
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return (2 * x * g)[:2]  # one entry short

    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"ShortSquare.backward returned a gradient of shape "
                                         r"\(2,\) for input 0 of shape \(3,\)"):
        ShortSquare.apply(x).sum().backward()


def test_a_tensor_forward_and_backward_close_over_counts_by_its_numbers_as_in_torch():
    """PyTorch runs forward, and backward unless create_graph, without recording, so a
    tensor they close over (here the very tensor being differentiated) is a constant
    there: x.grad is backward's product alone, a plain array, and a second derivative
    (create_graph) differentiates what backward computes with it."""
    def make(lib, k):
        base = torch.autograd.Function if lib is torch else cr.Function

        class Scale(base):
            @staticmethod
            def forward(ctx, x):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * k
        return Scale

    k = cr.tensor(0.5, requires_grad=True)
    make(cr, k).apply(k).backward()
    kt = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    make(torch, kt).apply(kt).backward()
    assert type(k.grad) is np.ndarray and float(k.grad) == float(kt.grad) == 0.5

    def through_transforms(k):
        return make(cr, k).apply(k)
    assert cr.grad(through_transforms)(0.5) == 0.5
    assert cr.value_and_grad(through_transforms)(0.5) == (0.25, 0.5)
    kt = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(make(torch, kt).apply(kt), kt, create_graph=True)
    assert cr.grad(cr.grad(through_transforms))(0.5) == float(torch.autograd.grad(g, kt)[0])
    # forward mode derives the tangent from backward, which would carry the closure
    with pytest.raises(TypeError, match="closes over it.*staticmethod jvp"):
        cr.jvp(through_transforms, (0.5,), (1.0,))


def test_a_value_of_an_outer_transform_closed_over_is_differentiated_through():
    # y is differentiated by cr.grad outside; the Function's input x by none: what
    # forward and backward compute with y carries y's derivative, eagerly and jitted
    def outer(y):
        class Scaled(cr.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return cr.sin(x) * y

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * cr.cos(x) * y
        return cr.grad(Scaled.apply)(0.3) + Scaled.apply(np.float64(0.5))
    expected = np.cos(0.3) + np.sin(0.5)
    assert cr.grad(outer)(1.5) == pytest.approx(expected, rel=1e-14)
    jitted = cr.jit(cr.grad(outer))
    for y in (1.5, 2.5, -0.7):
        assert jitted(y) == pytest.approx(expected, rel=1e-14)
