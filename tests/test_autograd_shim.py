"""chainrule.autograd: programs written for HIPS autograd run with ``autograd`` replaced
by ``chainrule.autograd`` in their imports, and nothing else, with autograd's numbers.

Each program below is run twice, as written (with autograd itself, the oracle) and with
its imports changed, and every number it produces is compared.
"""

import textwrap

import numpy as np
import pytest

pytest.importorskip("autograd")


def run_both(program):
    """The program's ``result``, run with autograd and with chainrule.autograd."""
    program = textwrap.dedent(program)
    results = []
    for source in (program, program.replace("autograd", "chainrule.autograd")):
        namespace = {}
        exec(compile(source, "<program>", "exec"), namespace)
        results.append(namespace["result"])
    return results


def assert_same(theirs, ours, rtol=1e-10, atol=1e-12):
    if isinstance(theirs, dict):
        assert theirs.keys() == ours.keys()
        for key in theirs:
            assert_same(theirs[key], ours[key], rtol, atol)
    elif isinstance(theirs, (list, tuple)):
        assert len(theirs) == len(ours)
        for a, b in zip(theirs, ours):
            assert_same(a, b, rtol, atol)
    else:
        np.testing.assert_allclose(np.asarray(ours, dtype=float),
                                   np.asarray(theirs, dtype=float), rtol=rtol, atol=atol)


def test_logistic_regression_as_in_autograds_readme():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad

        def sigmoid(x):
            return 0.5 * (np.tanh(x / 2.0) + 1)

        def training_loss(weights):
            preds = sigmoid(np.dot(inputs, weights))
            label_probabilities = preds * targets + (1 - preds) * (1 - targets)
            return -np.sum(np.log(label_probabilities))

        inputs = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15],
                           [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
        targets = np.array([True, True, False, True])
        weights = np.array([0.0, 0.0, 0.0])
        training_gradient_fun = grad(training_loss)
        for i in range(100):
            weights -= training_gradient_fun(weights) * 0.01
        result = [weights, training_loss(weights)]
    """)
    assert_same(theirs, ours)


def test_a_gaussian_process_fit_with_scipy_stats_adam_and_flatten():
    theirs, ours = run_both("""
        import autograd.numpy as np
        import autograd.numpy.random as npr
        import autograd.scipy.stats.multivariate_normal as mvn
        from autograd import value_and_grad
        from autograd.misc.optimizers import adam
        from autograd.misc.flatten import flatten

        rs = npr.RandomState(0)
        X = np.linspace(-3, 3, 12).reshape(-1, 1)
        y = np.sin(X[:, 0]) + 0.1 * rs.randn(12)

        def kernel(params, x, xp):
            output_scale = np.exp(params["log_scale"])
            lengths = np.exp(params["log_lengths"])
            diffs = np.expand_dims(x / lengths, 1) - np.expand_dims(xp / lengths, 0)
            return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))

        def log_marginal_likelihood(params):
            noise = np.exp(params["log_noise"]) + 0.001
            cov = kernel(params, X, X) + noise * np.eye(len(y))
            return mvn.logpdf(y, params["mean"] * np.ones(len(y)), cov)

        params = {"log_scale": 0.1, "log_lengths": np.array([0.2]), "log_noise": -1.0,
                  "mean": 0.0}
        objective = lambda p, i: -log_marginal_likelihood(p)
        seen = []
        def callback(p, i, g):
            seen.append(objective(p, i))
        gradient = lambda p, i: value_and_grad(objective)(p, i)[1]
        fitted = adam(gradient, params, callback=callback, num_iters=30, step_size=0.05)
        vector, unflatten = flatten(fitted)
        result = [vector, seen, log_marginal_likelihood(unflatten(vector))]
    """)
    assert_same(theirs, ours, rtol=1e-9)


def test_the_derivative_operators_give_autograds_numbers():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import (grad, elementwise_grad, jacobian, hessian, make_vjp,
                              make_jvp, make_hvp, make_ggnvp, hessian_tensor_product,
                              grad_and_aux, value_and_grad,
                              vector_jacobian_product)

        def f(x, y):
            return np.sum(np.sin(x) * y ** 2) + np.prod(x)

        def g(x):
            return np.tanh(np.outer(x, x)).ravel()

        x, y, v = np.array([0.3, -1.2, 0.7]), np.array([1.5, 0.5, -2.0]), np.array([1.0, 0.5, -1.0])
        vjp, ans = make_vjp(f, 1)(x, y)
        hvp, grad_at = make_hvp(lambda x: f(x, y))(x)
        result = [
            grad(f)(x, y), grad(f, 1)(x, y), elementwise_grad(np.sin)(x), jacobian(g)(x),
            hessian(lambda x: f(x, y))(x), vjp(2.0), ans, make_jvp(g)(x)(v),
            hvp(v), grad_at, hessian_tensor_product(lambda x: f(x, y))(x, v),
            make_ggnvp(np.sin)(x)(v),
            grad_and_aux(lambda x: (f(x, y), x.sum()))(x),
            value_and_grad(f)(x, y), vector_jacobian_product(g)(x, np.ones(9)),
        ]
    """)
    assert_same(theirs, ours)


def test_a_primitive_with_autograds_extend_api():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad, make_jvp
        from autograd.extend import primitive, defvjp, defjvp

        @primitive
        def logsumexp(x):
            m = np.max(x)
            return m + np.log(np.sum(np.exp(x - m)))

        defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
        defjvp(logsumexp, lambda g, ans, x: np.sum(g * np.exp(x - ans)))

        @primitive
        def scaled(a, b):
            return a * b

        defvjp(scaled, lambda ans, a, b: lambda g: g * b, None)

        x = np.array([1.0, 2.0, 3.0])
        result = [grad(lambda x: logsumexp(x) ** 2)(x), make_jvp(logsumexp)(x)(np.ones(3)),
                  grad(lambda a: scaled(a, 3.0))(2.0)]
    """)
    assert_same(theirs, ours)


def test_check_grads_and_the_scipy_paths():
    theirs, ours = run_both("""
        import autograd.numpy as np
        import autograd.scipy.stats.norm as norm
        from autograd.scipy.special import gammaln, logsumexp
        from autograd.scipy.stats import t
        from autograd.test_util import check_grads
        from autograd import grad

        check_grads(lambda x: np.sum(norm.logpdf(x) * x), modes=["rev"],
                    order=2)(np.array([0.5, 1.5]))
        check_grads(lambda x: np.sum(gammaln(x)), modes=["rev"], order=2)(np.array([0.5, 1.5]))
        result = [grad(lambda x: logsumexp(x * 2.0))(np.array([0.1, 0.2])),
                  grad(lambda x: np.sum(gammaln(x)))(np.array([0.5, 1.5])),
                  grad(lambda df: t.logpdf(0.3, df, 0.0, 1.5))(3.0)]
    """)
    assert_same(theirs, ours)


def test_sgd_and_rmsprop_on_a_tree_give_autograds_path():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad
        from autograd.misc.optimizers import sgd, rmsprop

        def loss(p, i):
            return np.sum((p["w"] - 3.0) ** 2) + (p["b"] + 1.0) ** 2 * (1 + i % 3)

        start = {"w": np.array([0.0, 1.0]), "b": 0.5}
        result = [sgd(grad(loss), start, num_iters=50, step_size=0.05),
                  rmsprop(grad(loss), start, num_iters=50, step_size=0.05)]
    """)
    assert_same(theirs, ours)


def test_multigrad_dict_names_each_arguments_gradient():
    from chainrule.autograd import grad, multigrad_dict
    f = lambda x, y: x * y ** 2
    assert multigrad_dict(f)(2.0, 3.0) == {"x": grad(f, 0)(2.0, 3.0), "y": grad(f, 1)(2.0, 3.0)}


@pytest.mark.filterwarnings("ignore:Output seems independent of input")  # (autograd's, on a constant)
def test_the_one_argument_operators_of_core_and_unary_to_nary():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd.core import make_vjp, make_jvp
        from autograd.wrap_util import unary_to_nary

        @unary_to_nary
        def slope(f, x):
            pull, _ = make_vjp(f, x)
            return pull(1.0)

        def h(a, b):
            return np.sum(np.cos(a) * b) + a[0] * b[1]

        a, b = np.array([0.4, -0.9]), np.array([2.0, 1.5])
        pull, value = make_vjp(lambda z: np.exp(z) * 2.0, a)
        result = [slope(h)(a, b), slope(h, 1)(a, b), slope(h, (0, 1))(a, b), pull(b), value,
                  make_jvp(lambda z: z ** 3, a)(b), slope(lambda s: s < 1.0)(0.3)]
    """)
    assert_same(theirs, ours)


def test_vspace_builds_and_combines_elements_of_a_tree():
    from chainrule.autograd.core import vspace
    tree = {"w": np.ones((2, 3)), "b": [0.5, np.zeros(2)]}
    space = vspace(tree)
    assert space.size == 9 and space == vspace(space.randn()) == vspace(space.zeros())
    basis = list(space.standard_basis())
    assert len(basis) == 9
    assert float(space.inner_prod(basis[3], basis[3])) == 1.0
    assert float(space.inner_prod(basis[3], basis[4])) == 0.0
    total = space.add(space.scalar_mul(tree, 2.0), space.ones())
    assert total["b"][0] == 2.0 and total["w"].tolist() == [[3.0] * 3] * 2
    assert vspace(np.zeros(3)) != vspace(np.zeros(4))
    with pytest.raises(TypeError, match="vspace: a leaf of type str"):
        vspace({"w": "text"})


def test_check_grads_takes_trees_positions_and_names_what_fails():
    from chainrule.autograd import extend
    from chainrule.autograd.test_util import check_grads, combo_check
    import chainrule.autograd.numpy as anp

    check_grads(lambda d, s: anp.sum(d["a"] * anp.sin(d["b"][0])) * s,
                argnum=(0, 1))({"a": np.arange(3.0), "b": [np.ones(3)]}, 1.5)
    combo_check(anp.cumsum, [0])([np.ones(4), np.ones((2, 3))], axis=[0, -1])

    @extend.primitive
    def doubled(x):
        return 2.0 * x
    extend.defvjp(doubled, lambda ans, x: lambda g: 2.01 * g)      # a wrong rule
    with pytest.raises(AssertionError, match=r"\(VJP\) check of doubled failed"):
        check_grads(doubled, modes=["rev"])(1.0)
    check_grads(anp.sin)(np.ones(2) + 0.5j)  # complex arguments: tests/test_autograd_complex.py


def test_tensor_jacobian_product_contracts_the_leading_axes():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import tensor_jacobian_product, vector_jacobian_product

        f = lambda a: np.roll(np.tanh(a), 1, axis=0) * a[0]
        a = np.linspace(-1.0, 1.0, 24).reshape(4, 3, 2)
        result = [tensor_jacobian_product(f)(a, np.ones((4, 3)) * 0.5),
                  tensor_jacobian_product(f)(a, np.arange(4.0)),
                  vector_jacobian_product(f)(a, np.full((4, 3, 2), 2.0))]
    """)
    assert_same(theirs, ours)


@pytest.mark.filterwarnings("ignore:Output seems independent of input")  # (autograd's, on a constant)
def test_builtins_look_through_traced_values_and_integer_casts_carry_no_derivative():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad, make_vjp
        from autograd.builtins import isinstance, type

        def f(w):
            assert isinstance(w, np.ndarray) and type(w) is np.ndarray
            rows = np.int64(w[:, -1] * 0.0 + np.array([2.0, 0.0, 1.0]))
            return np.sum(w[rows, :-1] ** 2) + (w[0, 0] > 0.5)

        w = np.arange(12.0).reshape(3, 4) / 10.0
        result = [grad(f)(w), make_vjp(lambda x: x == 1.0)(1.0)[0](1.0)]
    """)
    assert_same(theirs, ours)


def test_make_diagonal_gradient_of_numpy_and_traced_checks():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad, jacobian
        from autograd.numpy.numpy_boxes import ArrayBox
        from autograd.tracer import getval, isbox

        d = np.sin(np.arange(30.0)).reshape(5, 6)
        seen = []

        def f(x):
            seen.append(isbox(x) and not isbox(getval(x)) and isinstance(x, ArrayBox))
            gx, gy = np.gradient(x * x)
            return np.sum(np.make_diagonal(x, axis1=-1, axis2=-2) ** 2) + np.sum(gx * gy)

        result = [jacobian(lambda x: np.make_diagonal(x, axis1=-1, axis2=-2))(d),
                  grad(f)(d), type(np.gradient(d)) is tuple, seen]
    """)
    assert_same(theirs, ours)


def test_returned_functions_are_named_as_autograd_names_them():
    from chainrule.autograd import elementwise_grad, grad, jacobian

    def loss(w, x):
        return w * x
    assert grad(loss, 1).__name__ == "grad_of_loss_wrt_argnum_1"
    assert jacobian(loss).__name__ == "jacobian_of_loss_wrt_argnum_0"
    assert elementwise_grad(loss).__doc__.lstrip().startswith("elementwise_grad of function loss")


def test_convolve_with_axes_and_dot_axes_gives_autograds_layer_and_gradients():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad
        from autograd.scipy.signal import convolve

        images = np.sin(np.arange(2 * 3 * 6 * 6.0)).reshape(2, 3, 6, 6)
        filters = np.cos(np.arange(3 * 4 * 2 * 3.0)).reshape(3, 4, 2, 3)
        result = []
        for mode in ["valid", "full", "same"]:
            layer = lambda x, w: convolve(x, w, axes=([2, 3], [2, 3]), dot_axes=([1], [0]),
                                          mode=mode)
            loss = lambda x, w: np.sum(np.tanh(layer(x, w)) ** 2)
            result += [layer(images, filters), grad(loss)(images, filters),
                       grad(loss, 1)(images, filters)]
        result.append(convolve(images[0, 0], filters[0, 0], axes=([0], [1]), mode="full"))
        # the smaller operand first: its positions are the ones looped over
        result.append(convolve(filters[0, 0], images[0, 0], axes=([1], [0]), mode="full"))
        small = lambda w, x: np.sum(convolve(w, x, axes=([1, 2], [2, 3]), dot_axes=([0], [1]),
                                            mode="valid") ** 2)
        result += [grad(small)(filters, images), grad(small, 1)(filters, images)]
    """)
    assert_same(theirs, ours, rtol=1e-9, atol=1e-11)


def test_misc_names_the_flatten_function_and_const_graph_traces_once():
    import autograd.misc as theirs
    import chainrule.autograd.misc as ours
    tree = (1.0, np.arange(3.0), {"a": np.ones((2, 2))})
    np.testing.assert_array_equal(ours.flatten(tree)[0], theirs.flatten(tree)[0])
    calls = []

    def f(x, y, scale):
        calls.append(1)
        return scale * np.sin(x * y)

    fixed = ours.const_graph(f, scale=2.0)
    for x, y in ((0.5, 1.0), (1.5, -2.0), (0.1, 3.0)):
        assert fixed(x, y) == pytest.approx(theirs.const_graph(f, scale=2.0)(x, y), rel=1e-15)
    # ours ran f once (the trace); each of autograd's three new wrappers ran it once
    assert len(calls) == 1 + 3


def test_elementwise_grad_nested_three_deep_as_in_autograds_tanh_example():
    autograd = pytest.importorskip("autograd")
    import chainrule.autograd as cag
    import chainrule.autograd.numpy as cnp
    x = np.linspace(-7, 7, 11)
    mine = cag.elementwise_grad(cag.elementwise_grad(cag.elementwise_grad(cnp.tanh)))(x)
    eg = autograd.elementwise_grad
    theirs = eg(eg(eg(autograd.numpy.tanh)))(x)
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-15)


def test_a_trace_of_nodes_names_each_operation_its_arguments_and_values_as_autograd():
    # autograd's examples/print_trace.py, recording lines instead of printing them
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad
        from autograd.tracer import Node, trace

        lines = []

        class RecordNode(Node):
            def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
                self.names = parents[0].names
                self.name = next(self.names)
                shown = [str(a) for a in args]
                for argnum, parent in zip(parent_argnums, parents):
                    shown[argnum] = parent.name
                lines.append((self.name, fun.__name__, shown, float(value)))

            def initialize_root(self, x):
                self.names = iter("ABCDEFGHIJKLMNOP")
                self.name = next(self.names)

        def fun(x):
            y = np.sin(x + x)
            return (y + y) / 2

        value, node = trace(RecordNode.new_root(1.23), fun, 1.23)
        first = list(lines)
        lines.clear()
        trace(RecordNode.new_root(1.0), grad(fun), 1.0)   # the trace goes through grad
        result = (first, lines[:6], float(value), node.name)
        # (then autograd adds gradients with its own add_outgrads, passing a VSpace)
    """)
    assert theirs[0] == ours[0]
    assert theirs[1] == ours[1]
    assert theirs[2:] == ours[2:]


def test_a_traced_graph_has_autograds_edges():
    # autograd's examples/dot_graph.py: each operation and the operations it reads
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd.tracer import Node, trace

        class GraphNode(Node):
            def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
                self.label = fun.__name__
                self.parents = [parent.label for parent in parents]
                self.edges = sorted({edge for parent in parents for edge in parent.edges}
                                    | {(parent.label, self.label) for parent in parents})

            def initialize_root(self, x):
                self.label, self.parents, self.edges = "input", [], []

        _, node = trace(GraphNode.new_root(1.0),
                        lambda x: (np.sin(x) + np.exp(x) - 0.5) * np.sin(x), 1.0)
        result = node.edges
    """)
    assert [tuple(e) for e in theirs] == [tuple(e) for e in ours]


def test_flatten_func_makes_a_function_of_one_vector_as_autograds():
    theirs, ours = run_both("""
        import autograd.numpy as np
        from autograd import grad
        from autograd.misc.flatten import flatten_func

        def objective(params, scale):
            return scale * (np.sum(params["w"] ** 2) + np.sin(params["b"]))

        flat_objective, unflatten, flat = flatten_func(
            objective, {"w": np.array([1.0, -2.0]), "b": 0.5})
        result = (flat, flat_objective(flat, 3.0), grad(flat_objective)(flat, 3.0),
                  unflatten(flat * 2)["w"])
    """)
    assert_same(theirs, ours)
