"""``jax.example_libraries.stax``: neural networks as pairs of pure functions, for
programs that import it (``from chainrule.example_libraries import stax``).

Each layer is an ``(init_fun, apply_fun)`` pair, as in JAX:

    init_fun(rng, input_shape) -> (output_shape, params)   # rng: a cr.random key
    apply_fun(params, inputs, **kwargs) -> outputs         # rng=key for Dropout

``params`` is a pytree of arrays (tuples and lists, ``()`` for a layer without any), so
``cr.grad``, ``cr.jit`` and ``chainrule.example_libraries.optimizers`` take it as JAX's
take theirs, and parameters made by JAX's stax apply here unchanged (NumPy arrays of
them). The layers and combinators are JAX's, with JAX's defaults: Dense, Conv
(``("NHWC", "HWIO", "NHWC")``) and GeneralConv, BatchNorm, the elementwise layers (Relu,
Tanh, Exp, Sigmoid, Elu, LeakyRelu, Selu, Gelu, Softplus, LogSoftmax, Softmax), MaxPool,
SumPool, AvgPool, Flatten, Identity, Dropout, FanOut, FanInSum, FanInConcat, serial,
parallel, shape_dependent. The transposed convolutions are not here: chainrule's
convolution takes no input dilation. An input shape may hold -1 for the batch, as JAX's
examples write it.

The initial draws are chainrule's (``cr.random``, not JAX's bits): the same
distributions, other numbers. ``Dropout(rate)`` keeps an entry with probability
``rate``, as JAX's does (JAX's name; PyTorch's ``p`` is the probability of dropping).

>>> from chainrule.example_libraries import stax
>>> init, apply = stax.serial(stax.Dense(3), stax.Relu, stax.Dense(1))
>>> out_shape, params = init(cr.random.key(0), (-1, 2))
>>> out_shape, apply(params, np.ones((4, 2))).shape
((-1, 1), (4, 1))
"""

import math

import numpy as np

from ... import rules as ops
from ...api import numpy as jnp, random
from ...primitive import shape_of
from ...transforms import lax
from .. import jax_nn
from ..jax_nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                      softplus, standardize)
from ..jax_nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["AvgPool", "BatchNorm", "Conv", "Dense", "Dropout", "Elu", "Exp", "FanInConcat",
           "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "Identity", "LeakyRelu",
           "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus",
           "SumPool", "Tanh", "elementwise", "parallel", "serial", "shape_dependent",
           "glorot", "randn", "logsoftmax", "relu", "log_softmax", "softmax", "softplus",
           "sigmoid", "elu", "leaky_relu", "selu", "gelu", "standardize", "glorot_normal",
           "normal", "ones", "zeros"]

# JAX's aliases, kept for old programs
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: ``inputs @ W + b``, W of shape (in, out_dim).

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.Dense(3)
    >>> out_shape, (W, b) = init(cr.random.key(0), (-1, 2))
    >>> out_shape, W.shape, b.shape
    ((-1, 3), (2, 3), (3,))
    >>> apply((W, b), np.ones((4, 2))).shape
    (4, 3)
    """
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _window_out(n, k, s, low, high):
    """A window's output length along an axis (-1, an unknown batch, stays -1)."""
    return -1 if n == -1 else (n + low + high - k) // s + 1


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer in the layout ``dimension_numbers`` (lhs, rhs, out specs,
    ``lax.conv_general_dilated``'s), its kernel ``filter_shape`` over the spatial axes,
    and a bias per output channel.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3), strides=(2, 2))
    >>> out_shape, (W, b) = init(cr.random.key(0), (-1, 3, 9, 9))
    >>> out_shape, W.shape, b.shape
    ((-1, 4, 4, 4), (4, 3, 3, 3), (1, 4, 1, 1))
    >>> apply((W, b), np.ones((2, 3, 9, 9))).shape
    (2, 4, 4, 4)
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        shapes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                        if c == "I" else next(shapes) for c in rhs_spec]
        spatial = [c for c in rhs_spec if c not in "OI"]
        sizes = [input_shape[lhs_spec.index(c)] for c in spatial]
        kernel = [kernel_shape[rhs_spec.index(c)] for c in spatial]
        pads = lax.padtype_to_pads([max(n, 1) for n in sizes], kernel, strides, padding)
        lengths = {c: _window_out(n, k, s, lo, hi)
                   for c, n, k, s, (lo, hi) in zip(spatial, sizes, kernel, strides, pads)}
        output_shape = tuple(input_shape[lhs_spec.index("N")] if c == "N" else out_chan
                             if c == "C" else lengths[c] for c in out_spec)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
         b_init=normal(1e-6)):
    """``GeneralConv`` in JAX's default layout ``("NHWC", "HWIO", "NHWC")``: inputs
    (batch, height, width, channels), a kernel (height, width, in, out), as JAX's
    ``functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))``.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.Conv(8, (3, 3), padding="SAME")
    >>> out_shape, (W, b) = init(cr.random.key(0), (-1, 28, 28, 1))
    >>> out_shape, W.shape, b.shape
    ((-1, 28, 28, 8), (3, 3, 1, 8), (1, 1, 1, 8))
    >>> apply((W, b), np.ones((2, 28, 28, 1))).shape
    (2, 28, 28, 8)
    """
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalisation over ``axis`` (the batch's own statistics, no running ones,
    as JAX's stax), then ``gamma * z + beta`` per remaining entry.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.BatchNorm()              # over N, H, W of NHWC inputs
    >>> out_shape, (beta, gamma) = init(cr.random.key(0), (8, 4, 4, 3))
    >>> out_shape, beta.shape, gamma.shape
    ((8, 4, 4, 3), (3,), (3,))
    >>> y = apply((beta, gamma), np.arange(8 * 4 * 4 * 3.0).reshape(8, 4, 4, 3))
    >>> np.round(y.std(axis=(0, 1, 2)), 4).tolist()
    [1.0, 1.0, 1.0]
    """
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(len(shape_of(x))))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.elementwise(stax.leaky_relu, negative_slope=0.1)
    >>> init(cr.random.key(0), (2, 3))
    ((2, 3), ())
    >>> apply((), np.array([-1.0, 2.0])).tolist()
    [-0.1, 2.0]
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jax_nn.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(kind):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        d = len(window_shape)

        def axes(rank):
            n_axis, c_axis = (0, rank - 1) if spec is None else (spec.index("N"),
                                                                 spec.index("C"))
            return n_axis, c_axis, [i for i in range(rank) if i not in (n_axis, c_axis)]

        def init_fun(rng, input_shape):
            n_axis, c_axis, spatial = axes(len(input_shape))
            sizes = [input_shape[i] for i in spatial]
            pads = lax.padtype_to_pads(sizes, window_shape, strides, padding)
            out = list(input_shape)
            for i, n, k, s, (lo, hi) in zip(spatial, sizes, window_shape, strides, pads):
                out[i] = _window_out(n, k, s, lo, hi)
            return tuple(out), ()

        def apply_fun(params, inputs, **kwargs):
            rank = len(shape_of(inputs))
            n_axis, c_axis, spatial = axes(rank)
            if len(spatial) != d:
                raise ValueError(f"{kind}: a window of {d} axes {window_shape} needs inputs "
                                 f"of {d + 2} dimensions, got shape {shape_of(inputs)}")
            # chainrule's pooling is PyTorch's layout, (N, C, spatial...), padded first:
            # with -inf for the max, with zeros for the sums (as JAX's initial values)
            perm = [n_axis, c_axis] + spatial
            x = ops.transpose(inputs, perm)
            sizes = list(shape_of(x)[2:])
            pads = lax.padtype_to_pads(sizes, window_shape, strides, padding)
            if any(lo or hi for lo, hi in pads):
                fill = -np.inf if kind == "MaxPool" else 0.0
                x = ops.pad(x, [(0, 0), (0, 0)] + pads, constant_values=fill)
            if kind == "MaxPool":
                out = ops.pooling.max_pool(x, window_shape, strides, d=d, name=kind)
            else:
                out = ops.pooling.avg_pool(x, window_shape, strides, d=d, name=kind) \
                    * float(math.prod(window_shape))
                if kind == "AvgPool":  # the sum over each window's entries that are not padding
                    counts = np.pad(np.ones(sizes), pads)
                    counts = np.lib.stride_tricks.sliding_window_view(counts, window_shape)
                    counts = counts[tuple(slice(None, None, s) for s in strides)]
                    out = out / counts.sum(axis=tuple(range(-d, 0)))
            return ops.transpose(out, tuple(int(i) for i in np.argsort(perm)))
        return init_fun, apply_fun
    PoolingLayer.__name__ = PoolingLayer.__qualname__ = kind
    PoolingLayer.__doc__ = _POOLING_DOC.format(what=_POOLING_WHAT[kind], kind=kind,
                                               out=_POOLING_OUTPUTS[kind])
    return PoolingLayer


_POOLING_WHAT = {"MaxPool": "The largest entry of each window",
                 "SumPool": "The sum of each window's entries (padding adds zeros)",
                 "AvgPool": "The mean of each window's entries, padding not counted (as JAX's)"}
_POOLING_DOC = """{what}: a pooling layer over the spatial
axes (all but N, first, and C, last, unless ``spec`` names them), windows of
``window_shape``, ``strides`` (1s by default, as JAX's), ``padding`` "VALID", "SAME" or
pairs.

>>> from chainrule.example_libraries import stax
>>> init, apply = stax.{kind}((2, 2), strides=(2, 2))
>>> init(cr.random.key(0), (-1, 4, 4, 1))           # NHWC
((-1, 2, 2, 1), ())
>>> x = np.arange(16.0).reshape(1, 4, 4, 1)
>>> apply((), x)[..., 0].tolist()
{out}
"""
_POOLING_OUTPUTS = {"MaxPool": "[[[5.0, 7.0], [13.0, 15.0]]]",
                    "SumPool": "[[[10.0, 18.0], [42.0, 50.0]]]",
                    "AvgPool": "[[[2.5, 4.5], [10.5, 12.5]]]"}

MaxPool = _pooling_layer("MaxPool")
SumPool = _pooling_layer("SumPool")
AvgPool = _pooling_layer("AvgPool")


def _flatten():
    """Flattens all but the leading axis."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (shape_of(inputs)[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):
    """``num`` copies of the input, for ``parallel``.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.FanOut(2)
    >>> init(cr.random.key(0), (3, 2))
    ([(3, 2), (3, 2)], ())
    >>> len(apply((), np.ones((3, 2))))
    2
    """
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """The inputs (a list) concatenated along ``axis``.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.FanInConcat(axis=-1)
    >>> init(cr.random.key(0), [(3, 2), (3, 5)])
    ((3, 7), ())
    >>> apply((), [np.ones((3, 2)), np.zeros((3, 5))]).shape
    (3, 7)
    """
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """In ``mode="train"``, each entry kept with probability ``rate`` (JAX's meaning)
    and scaled by 1 / rate, the others 0; needs ``rng=key`` at apply. In any other mode,
    the identity.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.Dropout(0.5)
    >>> y = apply((), np.ones((2, 5)), rng=cr.random.key(1))
    >>> y.shape, sorted(set(y.ravel().tolist()))        # kept entries scaled by 1 / 0.5
    ((2, 5), [0.0, 2.0])
    >>> init, apply = stax.Dropout(0.5, mode="test")
    >>> apply((), np.ones(3), rng=cr.random.key(1)).tolist()
    [1.0, 1.0, 1.0]
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout: apply_fun needs a key, as apply_fun(params, inputs, "
                             "rng=key) with key from cr.random.key; got none")
        if mode == "train":
            keep = random.bernoulli(rng, rate, shape_of(inputs))
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers):
    """The layers one after the other; params a list, one entry per layer.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    >>> out_shape, params = init(cr.random.key(0), (-1, 784))
    >>> out_shape, [p[0].shape for p in params if p]      # Relu's params are ()
    ((-1, 10), [(784, 16), (16, 10)])
    >>> apply(params, np.ones((32, 784))).shape
    (32, 10)
    >>> loss = lambda params, x: -apply(params, x)[:, 0].mean()
    >>> grads = cr.grad(loss)(params, np.ones((4, 784)))  # a tree like params
    >>> [g[0].shape for g in grads if g]
    [(784, 16), (16, 10)]
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, key in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: the i-th takes the i-th of a sequence of inputs (with
    FanOut before it, and FanInSum or FanInConcat after, a residual block).

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.parallel(stax.Dense(3), stax.Dense(4))
    >>> out_shapes, params = init(cr.random.key(0), ((-1, 2), (-1, 5)))
    >>> out_shapes
    ((-1, 3), (-1, 4))
    >>> [y.shape for y in apply(params, (np.ones((1, 2)), np.ones((1, 5))))]
    [(1, 3), (1, 4)]
    >>> init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
    ...                           stax.FanInConcat())       # [Dense(x), x]
    >>> out_shape, params = init(cr.random.key(0), (-1, 2))
    >>> out_shape, apply(params, np.ones((5, 2))).shape
    ((-1, 5), (5, 5))
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return tuple(zip(*[init(key, shape) for init, key, shape
                           in zip(init_funs, rngs, input_shape)]))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs,
                                                                rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer made by ``make_layer(input_shape)`` once the input's shape is known.

    >>> from chainrule.example_libraries import stax
    >>> init, apply = stax.shape_dependent(lambda shape: stax.Dense(shape[-1]))
    >>> out_shape, (W, b) = init(cr.random.key(0), (-1, 3))  # as wide as its input
    >>> out_shape, W.shape
    ((-1, 3), (3, 3))
    >>> apply((W, b), np.ones((2, 3))).shape
    (2, 3)
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(shape_of(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun
