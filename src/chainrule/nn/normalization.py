"""Batch, group, instance, RMS and local response normalisation, as functions and as
modules, with torch's signatures, parameter names and buffers (so a torch
``state_dict`` loads as it is). Built from chainrule's mean, reshape and sqrt:
derivatives of any order, cr.vmap and cr.jit go through them. (LayerNorm is in
layers.py.)

>>> import chainrule.nn.functional as F
>>> x = cr.tensor([[[1.0, 3.0], [10.0, 30.0]]])             # (N=1, C=2, L=2)
>>> np.round(F.group_norm(x, 2).data, 4).tolist()           # each channel alone
[[[-1.0, 1.0], [-1.0, 1.0]]]
"""

import warnings
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, raw as _raw, shape_of
from ..rules.common import Result, float_dtype
from .module import Module, Parameter

__all__ = ["batch_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm",
           "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm"]


def _affine(out, weight, bias, channels, ndim):
    """out * weight + bias, both of C entries, along axis 1 of an ndim-axis out."""
    per_channel = (channels,) + (1,) * (ndim - 2)
    if weight is not None:
        out = out * ops.reshape(weight, per_channel)
    if bias is not None:
        out = out + ops.reshape(bias, per_channel)
    return out


def _check_per_channel(name, shape, channels, **arrays):
    for what, array in arrays.items():
        if array is not None and shape_of(array) != (channels,):
            raise ValueError(f"{name}: {what} of shape {shape_of(array)}, expected "
                             f"({channels},) for an input of shape {shape}")


def _input_statistics(x, axes):
    """x's mean over ``axes``, x minus it, and the biased variance (axes kept)."""
    mean = ops.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    return mean, centred, ops.mean(centred * centred, axis=axes, keepdims=True)


def _move_running_statistics(running_mean, running_var, mean, var, count, momentum):
    """The running statistics moved in place by ``momentum`` towards this batch's mean
    and unbiased variance (``count`` entries each), averaged over the examples where
    each has statistics of its own."""
    for running, batch in ((running_mean, _raw(mean)),
                           (running_var, _raw(var) * (count / (count - 1)))):
        if running is not None:
            per_channel = xp.mean(batch.reshape(-1, running.shape[0]), axis=0)
            xp.copyto(running, (1 - momentum) * running + momentum * per_channel)


def _by_running_statistics(name, setting, x, running_mean, running_var):
    """x minus the running mean, and the running variance, along x's channel axis."""
    if running_mean is None or running_var is None:
        raise ValueError(f"{name}: {setting} normalises by the running statistics; "
                         f"running_mean and running_var are None")
    dtype = float_dtype(x)
    per_channel = (1, shape_of(x)[1]) + (1,) * (len(shape_of(x)) - 2)
    mean = xp.as_array(running_mean, dtype).reshape(per_channel)
    return x - mean, xp.as_array(running_var, dtype).reshape(per_channel)


def batch_norm(x: ArrayLike, running_mean: np.ndarray | None,
               running_var: np.ndarray | None, weight: ArrayLike | None = None,
               bias: ArrayLike | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Result:
    """PyTorch's ``batch_norm``: x (N, C, *spatial) normalised per channel,
    (x - mean) / sqrt(var + eps) * weight + bias.

    ``training=True``: the batch's mean and biased variance normalise, and
    ``running_mean`` / ``running_var`` (arrays of C, or None) are updated in place,
    moving by ``momentum`` towards the batch's mean and unbiased variance.
    ``training=False``: the running statistics normalise.

    >>> x = cr.tensor([[0.0], [2.0]])
    >>> mean, var = np.zeros(1), np.ones(1)
    >>> np.round(batch_norm(x, mean, var, training=True).data, 4).tolist()
    [[-1.0], [1.0]]
    >>> mean.tolist(), var.tolist()               # 0.1 of the way to 1 and 2
    ([0.1], [1.1])
    """
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"batch_norm: input of shape {shape}, expected (N, C, ...)")
    channels = shape[1]
    _check_per_channel("batch_norm", shape, channels, running_mean=running_mean,
                       running_var=running_var, weight=weight, bias=bias)
    if not training:
        centred, var = _by_running_statistics("batch_norm", "training=False", x,
                                              running_mean, running_var)
        return _affine(centred / ops.sqrt(var + eps), weight, bias, channels, len(shape))
    axes = (0,) + tuple(range(2, len(shape)))
    count = int(np.prod([shape[a] for a in axes]))
    if count < 2:
        raise ValueError(f"batch_norm: input of shape {shape} has one value per channel; "
                         f"training needs more than one to estimate a variance")
    mean, centred, var = _input_statistics(x, axes)
    if isinstance(_raw(mean), Box) and (running_mean is not None or running_var is not None):
        raise ValueError("batch_norm: training under cr.vmap would update running_mean "
                         "and running_var, one array for every example, with each "
                         "example's statistics; call .eval() to normalise by them, or "
                         "pass track_running_stats=False (or None for both) to normalise "
                         "each example by its own")
    _move_running_statistics(running_mean, running_var, mean, var, count, momentum)
    return _affine(centred / ops.sqrt(var + eps), weight, bias, channels, len(shape))


def group_norm(input: ArrayLike, num_groups: int, weight: ArrayLike | None = None,
               bias: ArrayLike | None = None, eps: float = 1e-5) -> Result:
    """torch's ``group_norm``: the C channels of x (N, C, *) split into ``num_groups``
    groups of C / num_groups, each example's group normalised by its own mean and
    biased variance, then ``weight`` (C,) and ``bias`` (C,) per channel.

    >>> x = cr.tensor([[[0.0], [2.0], [5.0], [7.0]]])        # (1, 4, 1), 2 groups
    >>> np.round(group_norm(x, 2, eps=0.0).data, 4).ravel().tolist()
    [-1.0, 1.0, -1.0, 1.0]
    """
    shape = shape_of(input)
    if len(shape) < 2:
        raise ValueError(f"group_norm: input of shape {shape}, expected (N, C, ...) with "
                         f"at least 2 dimensions")
    channels = shape[1]
    if (not isinstance(num_groups, Integral) or num_groups < 1
            or channels % num_groups):
        raise ValueError(f"group_norm: num_groups={num_groups!r} must be a positive int "
                         f"that divides the {channels} channels of an input of shape "
                         f"{shape}")
    _check_per_channel("group_norm", shape, channels, weight=weight, bias=bias)
    if shape[0] * channels // num_groups * int(np.prod(shape[2:])) == 1:
        # torch's refusal: a single value per group has no variance to speak of
        raise ValueError(f"group_norm: input of shape {shape} with {num_groups} groups "
                         f"has one value per group; expected more than one")
    grouped = ops.reshape(input, (shape[0], num_groups, -1))
    mean = ops.mean(grouped, axis=-1, keepdims=True)
    centred = grouped - mean
    var = ops.mean(centred * centred, axis=-1, keepdims=True)
    out = ops.reshape(centred / ops.sqrt(var + eps), shape)
    return _affine(out, weight, bias, channels, len(shape))


def instance_norm(input: ArrayLike, running_mean: np.ndarray | None = None,
                  running_var: np.ndarray | None = None, weight: ArrayLike | None = None,
                  bias: ArrayLike | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Result:
    """torch's ``instance_norm``: each channel of each example of x (N, C, *spatial)
    normalised over its spatial entries, then ``weight`` and ``bias`` (C,).

    ``use_input_stats=True``: the example's own mean and biased variance normalise,
    and ``running_mean`` / ``running_var`` (arrays of C, or None) move in place by
    ``momentum`` towards the batch's average of the per-example means and unbiased
    variances, as torch's. ``use_input_stats=False``: the running statistics normalise.

    >>> x = cr.tensor([[[0.0, 2.0]], [[4.0, 8.0]]])            # (N=2, C=1, L=2)
    >>> mean, var = np.zeros(1), np.ones(1)
    >>> np.round(instance_norm(x, mean, var, eps=0.0).data, 4).tolist()
    [[[-1.0, 1.0]], [[-1.0, 1.0]]]
    >>> np.round(mean, 4).tolist(), np.round(var, 4).tolist()  # 0.1 of the way to 3.5, 5
    ([0.35], [1.4])
    """
    shape = shape_of(input)
    if len(shape) < 3:
        raise ValueError(f"instance_norm: input of shape {shape}, expected (N, C, "
                         f"*spatial) with at least one spatial axis")
    channels = shape[1]
    _check_per_channel("instance_norm", shape, channels, running_mean=running_mean,
                       running_var=running_var, weight=weight, bias=bias)
    if not use_input_stats:
        centred, var = _by_running_statistics("instance_norm", "use_input_stats=False",
                                              input, running_mean, running_var)
        return _affine(centred / ops.sqrt(var + eps), weight, bias, channels, len(shape))
    count = int(np.prod(shape[2:]))
    if count == 1:
        raise ValueError(f"instance_norm: input of shape {shape} has one spatial entry; "
                         f"expected more than 1 when using the input's statistics")
    mean, centred, var = _input_statistics(input, tuple(range(2, len(shape))))
    if running_mean is not None or running_var is not None:
        if isinstance(_raw(mean), Box):
            raise ValueError("instance_norm: updating running_mean and running_var "
                             "under cr.vmap would give one array per example; call "
                             ".eval() or pass track_running_stats=False")
        # (each example has its own statistics: the running ones move towards their
        # average over the batch, as torch's)
        _move_running_statistics(running_mean, running_var, mean, var, count, momentum)
    return _affine(centred / ops.sqrt(var + eps), weight, bias, channels, len(shape))


def local_response_norm(input: ArrayLike, size: int, alpha: float = 1e-4,
                        beta: float = 0.75, k: float = 1.0) -> Result:
    """torch's ``local_response_norm`` (AlexNet's): each entry of x (N, C, *) divided by
    (k + alpha * mean of the squares over ``size`` neighbouring channels) ** beta, the
    window centred on its channel (size // 2 before, (size - 1) // 2 after), zeros past
    the ends counted in the mean.

    >>> x = cr.tensor([[[2.0], [0.0], [0.0]]])                 # (N=1, C=3, L=1)
    >>> np.round(local_response_norm(x, 3, alpha=3.0, beta=1.0).data.ravel(), 4).tolist()
    [0.4, 0.0, 0.0]
    """
    shape = shape_of(input)
    if len(shape) < 3:
        raise ValueError(f"local_response_norm: input of shape {shape}, expected (N, C, "
                         f"...) with at least 3 dimensions")
    if not isinstance(size, Integral) or size < 1:
        raise ValueError(f"local_response_norm: size must be a positive int, got {size!r}")
    channels = shape[1]
    squares = input * input
    before, after = size // 2, (size - 1) // 2
    widths = [(0, 0)] * len(shape)
    widths[1] = (before, after)
    padded = ops.pad(squares, widths)
    window = padded[:, 0:channels]
    for shift in range(1, size):
        window = window + padded[:, shift:shift + channels]
    return input / (k + alpha * (window / size)) ** beta


def _normalized_shape(value, name):
    shape = (value,) if isinstance(value, Integral) else tuple(value)
    if not shape or not all(isinstance(n, Integral) and n > 0 for n in shape):
        raise ValueError(f"{name}: normalized_shape must be a positive int or a tuple of "
                         f"them, got {value!r}")
    return tuple(int(n) for n in shape)


def rms_norm(input: ArrayLike, normalized_shape: int | tuple[int, ...],
             weight: ArrayLike | None = None, eps: float | None = None) -> Result:
    """torch's ``rms_norm``: x / sqrt(mean(x**2) + eps) over the last
    ``normalized_shape`` axes, times ``weight`` (of that shape) where given. ``eps=None``
    is the machine epsilon of x's dtype, as torch's.

    >>> np.round(rms_norm(cr.tensor([[3.0, 4.0]]), 2).data, 4).tolist()
    [[0.8485, 1.1314]]
    """
    shape, normalized = shape_of(input), _normalized_shape(normalized_shape, "rms_norm")
    n = len(normalized)
    if len(shape) < n or tuple(shape[len(shape) - n:]) != normalized:
        raise ValueError(f"rms_norm: input of shape {shape}, expected it to end with "
                         f"normalized_shape {normalized}")
    if weight is not None and shape_of(weight) != normalized:
        raise ValueError(f"rms_norm: weight of shape {shape_of(weight)}, expected "
                         f"normalized_shape {normalized}")
    if eps is None:
        eps = float(np.finfo(float_dtype(input)).eps)
    axes = tuple(range(-n, 0))
    out = input / ops.sqrt(ops.mean(input * input, axis=axes, keepdims=True) + eps)
    return out if weight is None else out * weight


class _RunningStatisticsNorm(Module):
    """What batch and instance normalisation share: ``weight`` and ``bias`` of C (with
    ``affine``), and the buffers ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` (with ``track_running_stats``), under torch's names."""

    _buffer_names = ("running_mean", "running_var", "num_batches_tracked")

    def __init__(self, num_features: int, eps: float, momentum: float | None, affine: bool,
                 track_running_stats: bool, dtype: DTypeLike, bias: bool = True) -> None:
        name = type(self).__name__
        if not isinstance(num_features, Integral) or num_features < 1:
            raise ValueError(f"{name}: num_features must be a positive int, got "
                             f"{num_features!r}")
        if momentum is not None and not 0 <= momentum <= 1:
            raise ValueError(f"{name}: momentum must be in [0, 1] or None, got {momentum!r}")
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features), dtype=dtype) if affine else None
        self.bias = Parameter(np.zeros(num_features), dtype=dtype) \
            if affine and bias else None
        if track_running_stats:
            self.running_mean = np.zeros(num_features, dtype)
            self.running_var = np.ones(num_features, dtype)
            self.num_batches_tracked = np.zeros((), np.int64)
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_RunningStatisticsNorm):
    _ndims = (4,)

    def forward(self, x: ArrayLike) -> Result:
        """Normalised by the batch's statistics in training (which also update the
        running ones), by the running statistics in eval."""
        shape = shape_of(x)
        if len(shape) not in self._ndims or shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: input of shape {shape}, expected "
                             f"{self._expected} with C = {self.num_features}")
        use_batch = self.training or not self.track_running_stats
        factor = 0.0 if self.momentum is None else self.momentum
        tracking = self.training and self.track_running_stats
        if tracking and self.momentum is None:  # a cumulative average, as PyTorch's
            factor = 1 / (self.num_batches_tracked + 1)  # momentum=None, this batch counted
        out = batch_norm(x, self.running_mean if self.track_running_stats else None,
                           self.running_var if self.track_running_stats else None,
                           self.weight, self.bias, use_batch, factor, self.eps)
        if tracking:  # (counted once the running statistics took it: a refused call, as
            # under cr.vmap, counts nothing)
            xp.add(self.num_batches_tracked, 1, out=self.num_batches_tracked)
        return out


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs over all but the channel axis
    (PyTorch's ``nn.BatchNorm1d``): (x - mean) / sqrt(var + eps) * weight + bias.

    In training the batch's mean and (biased) variance normalise, and the running ones
    move towards them by ``momentum`` (the running variance towards the unbiased one);
    in eval the running ones normalise. ``momentum=None`` keeps a cumulative average.
    ``state_dict()`` holds ``running_mean``, ``running_var`` and
    ``num_batches_tracked``, as PyTorch's does.

    >>> bn = cr.nn.BatchNorm1d(2)
    >>> y = bn(cr.tensor([[1.0, 10.0], [3.0, 30.0]]))
    >>> np.round(y.data, 3).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    >>> bn.running_mean.tolist()                  # 0.9 * 0 + 0.1 * the batch's mean
    [0.2, 2.0]
    """

    _ndims = (2, 3)
    _expected = "(N, C) or (N, C, L)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs per channel (PyTorch's
    ``nn.BatchNorm2d``); see ``BatchNorm1d`` for the statistics, train and eval.

    >>> bn = cr.nn.BatchNorm2d(3)
    >>> y = bn(cr.tensor(np.random.default_rng(0).normal(5.0, 2.0, (4, 3, 6, 6))))
    >>> np.allclose(y.data.mean(axis=(0, 2, 3)), 0.0)     # each channel centred
    True
    >>> bn.eval()(cr.ones(1, 3, 2, 2)).shape      # the running statistics now
    (1, 3, 2, 2)
    """

    _ndims = (4,)
    _expected = "(N, C, H, W)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs per channel (PyTorch's
    ``nn.BatchNorm3d``); see ``BatchNorm1d`` for the statistics, train and eval.

    >>> bn = cr.nn.BatchNorm3d(2)
    >>> bn(cr.tensor(np.arange(32.0).reshape(2, 2, 2, 2, 2))).shape
    (2, 2, 2, 2, 2)
    >>> np.round(bn.running_mean, 4).tolist()     # 0.1 of the channels' means, 11.5, 19.5
    [1.15, 1.95]
    """

    _ndims = (5,)
    _expected = "(N, C, D, H, W)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias)


class GroupNorm(Module):
    """Group normalisation (torch's ``nn.GroupNorm``): the channels of x (N, C, *) in
    ``num_groups`` groups, each normalised per example; ``weight`` (ones) and ``bias``
    (zeros) of C when ``affine``.

    >>> norm = cr.nn.GroupNorm(2, 4)
    >>> norm
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> norm(cr.ones(3, 4, 5)).shape
    (3, 4, 5)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, dtype: DTypeLike = np.float64, *,
                 bias: bool = True) -> None:
        for what, n in (("num_groups", num_groups), ("num_channels", num_channels)):
            if not isinstance(n, Integral) or n < 1:
                raise ValueError(f"GroupNorm: {what} must be a positive int, got {n!r}")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels={num_channels} must be divisible "
                             f"by num_groups={num_groups}")
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        self.eps, self.affine = eps, affine
        self.weight = Parameter(np.ones(num_channels), dtype=dtype) if affine else None
        self.bias = Parameter(np.zeros(num_channels), dtype=dtype) \
            if affine and bias else None

    def forward(self, x: ArrayLike) -> Result:
        """x normalised per example and group, then scaled and shifted per channel."""
        shape = shape_of(x)
        if len(shape) < 2 or shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: input of shape {shape}, expected (N, C, ...) "
                             f"with C = {self.num_channels}")
        return group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class _InstanceNorm(_RunningStatisticsNorm):
    # (torch keeps num_batches_tracked in the state_dict, but InstanceNorm never moves it)
    d = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias)

    def forward(self, x: ArrayLike) -> Result:
        """Each example's channels normalised by their own statistics in training (or
        always, without running statistics), by the running ones in eval."""
        shape, d = shape_of(x), self.d
        if len(shape) not in (d + 1, d + 2):
            raise ValueError(f"{type(self).__name__}: input of shape {shape}, expected "
                             f"{d + 2} dimensions (N, C, *spatial) or {d + 1} (C, "
                             f"*spatial)")
        unbatched = len(shape) == d + 1
        if shape[0 if unbatched else 1] != self.num_features:
            message = (f"{type(self).__name__}: input of shape {shape}, expected "
                       f"{self.num_features} channels (num_features)")
            if self.affine or self.track_running_stats:
                raise ValueError(message)
            # (torch only warns: without weights or statistics, num_features is unused)
            warnings.warn(message + "; num_features is unused without affine",
                          stacklevel=2)
        if unbatched:
            x = ops.reshape(x, (1,) + shape)
        out = instance_norm(x, self.running_mean, self.running_var, self.weight,
                            self.bias, self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return ops.reshape(out, shape) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) (torch's ``nn.InstanceNorm1d``):
    each example's channel by its own mean and biased variance; ``affine`` adds
    ``weight`` and ``bias`` of C; ``track_running_stats`` keeps ``running_mean`` and
    ``running_var`` (moved by ``momentum`` in training, used in eval), as torch's.

    >>> norm = cr.nn.InstanceNorm1d(2)
    >>> np.round(norm(cr.tensor([[[1.0, 3.0], [0.0, 10.0]]])).data, 3).tolist()
    [[[-1.0, 1.0], [-1.0, 1.0]]]
    """

    d = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias=bias)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) (torch's
    ``nn.InstanceNorm2d``); see ``InstanceNorm1d``.

    >>> sorted(cr.nn.InstanceNorm2d(3, track_running_stats=True).state_dict())
    ['num_batches_tracked', 'running_mean', 'running_var']
    """

    d = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias=bias)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) (torch's
    ``nn.InstanceNorm3d``); see ``InstanceNorm1d``.

    >>> cr.nn.InstanceNorm3d(2)(cr.ones(1, 2, 2, 2, 2)).shape
    (1, 2, 2, 2, 2)
    """

    d = 3

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias=bias)


class LocalResponseNorm(Module):
    """Local response normalisation across channels (torch's ``nn.LocalResponseNorm``):
    see ``F.local_response_norm``.

    >>> cr.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: ArrayLike) -> Result:
        """Each entry divided by its neighbouring channels' response."""
        return local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the last axes (torch's ``nn.RMSNorm``):
    x / sqrt(mean(x**2) + eps) * weight, ``weight`` (ones) of ``normalized_shape`` when
    ``elementwise_affine``; ``eps=None`` is the machine epsilon of x's dtype.

    >>> norm = cr.nn.RMSNorm(2)
    >>> norm
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> np.round(norm(cr.tensor([[3.0, 4.0]])).data, 4).tolist()
    [[0.8485, 1.1314]]
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float | None = None,
                 elementwise_affine: bool = True, dtype: DTypeLike = np.float64) -> None:
        self.normalized_shape = _normalized_shape(normalized_shape, "RMSNorm")
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = (Parameter(np.ones(self.normalized_shape), dtype=dtype)
                       if elementwise_affine else None)

    def forward(self, x: ArrayLike) -> Result:
        """x / sqrt(mean(x**2) + eps) * weight over the last axes."""
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
