"""Weight averaging, as PyTorch's ``torch.optim.swa_utils`` (``swa_utils.py`` gathers
it): AveragedModel keeps a running average (SWA's mean, or an exponential moving average)
of a model's parameters; ``update_bn`` recomputes BatchNorm's running statistics for the
averaged weights.

The averaging functions see NumPy arrays: ``avg_fn(averaged, current, n_averaged)``
returns the new average of one parameter; ``multi_avg_fn(averaged_list, current_list,
n_averaged)`` updates a list of them (the parameters of one dtype) in place, as
PyTorch's update a list of tensors.

>>> model = cr.nn.Linear(2, 1, rng=0)
>>> swa = cr.optim.swa_utils.AveragedModel(model)
>>> for w in (1.0, 2.0, 6.0):
...     model.bias.data = np.array([w]); swa.update_parameters(model)
>>> swa.module.bias.data.tolist(), int(swa.n_averaged)    # the mean of 1, 2 and 6
([3.0], 3)
"""

import copy
import itertools
from collections.abc import Iterable
from typing import Any, Callable

import numpy as np

from ...modes import no_grad
from ...scalar.value import Value
from ...tensor import Tensor
from ..normalization import _BatchNorm
from ..hyperparameters import require_fraction
from ..module import Module

__all__ = ["AveragedModel", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]

AvgFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
MultiAvgFn = Callable[[list[np.ndarray], list[np.ndarray], np.ndarray], None]


def _lerp(start, end, weight):
    """PyTorch's lerp: from ``start`` for a small weight, from ``end`` for a large one."""
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _floating(array):
    return np.asarray(array).dtype.kind in "fc"


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An exponential moving average, ``ema = decay * ema + (1 - decay) * current``, over
    a list of arrays in place (PyTorch's lerp for floats; integers are rounded towards
    zero, as PyTorch's copy into an integer tensor).

    >>> ema, fn = [np.array([0.0])], cr.optim.swa_utils.get_ema_multi_avg_fn(0.75)
    >>> fn(ema, [np.array([4.0])], 1); ema[0].tolist()
    [1.0]
    """
    require_fraction("get_ema_multi_avg_fn", "decay", decay)

    def ema_update(ema_list, current_list, n_averaged):
        for ema, current in zip(ema_list, current_list, strict=True):
            if _floating(ema):
                new = _lerp(ema, current, 1 - decay)
            else:
                new = ema * decay + current * (1 - decay)
            np.copyto(ema, new, casting="unsafe")
    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """The running mean, ``avg += (current - avg) / (n_averaged + 1)``, over a list of
    arrays in place (PyTorch's lerp by ``1 / (n + 1)`` for floats).

    >>> avg, fn = [np.array([1.0])], cr.optim.swa_utils.get_swa_multi_avg_fn()
    >>> fn(avg, [np.array([4.0])], 2); avg[0].tolist()   # (1 + 1 + 4) / 3
    [2.0]
    """
    def swa_update(averaged_list, current_list, n_averaged):
        for averaged, current in zip(averaged_list, current_list, strict=True):
            if _floating(averaged):
                new = _lerp(averaged, current, float(1 / (n_averaged + 1)))
            else:
                new = averaged + (current - averaged) / (n_averaged + 1)
            np.copyto(averaged, new, casting="unsafe")
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """An exponential moving average of one array: ``decay * ema + (1 - decay) *
    current``.

    >>> cr.optim.swa_utils.get_ema_avg_fn(0.75)(np.array(0.0), np.array(4.0), 1)
    np.float64(1.0)
    """
    require_fraction("get_ema_avg_fn", "decay", decay)

    def ema_update(ema, current, n_averaged):
        return decay * ema + (1 - decay) * current
    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The running mean of one array: ``avg + (current - avg) / (n_averaged + 1)``.

    >>> cr.optim.swa_utils.get_swa_avg_fn()(np.array(1.0), np.array(4.0), 2)
    np.float64(2.0)
    """
    def swa_update(averaged, current, n_averaged):
        return averaged + (current - averaged) / (n_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (``.module``) whose parameters are the average of the
    model's, taken at each ``update_parameters(model)``: the running mean by default
    (stochastic weight averaging), or what ``avg_fn`` (one array at a time) or
    ``multi_avg_fn`` (a list, in place) computes, such as ``get_ema_multi_avg_fn(0.999)``.

    ``n_averaged`` (a buffer, in ``state_dict()``) counts the updates; the first one
    copies the model's parameters. The buffers (BatchNorm's running statistics) are
    copied from the model at each update, or, with ``use_buffers=True``, averaged with
    the parameters. Calling it calls the averaged copy.

    >>> model = cr.nn.Linear(2, 1, rng=0)
    >>> ema = cr.optim.swa_utils.AveragedModel(
    ...     model, multi_avg_fn=cr.optim.swa_utils.get_ema_multi_avg_fn(0.5))
    >>> for w in (2.0, 4.0, 8.0):
    ...     model.bias.data = np.array([w]); ema.update_parameters(model)
    >>> ema.module.bias.data.tolist()                 # ((2 + 4) / 2 + 8) / 2
    [5.5]
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: give avg_fn or multi_avg_fn, not both")
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel: expected a Module, got {type(model).__name__}")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", np.zeros((), np.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's output."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Take ``model``'s parameters (and buffers, with ``use_buffers``) into the
        average."""
        if self.use_buffers:
            ours = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            ours, theirs = self.parameters(), model.parameters()
        pairs = list(zip(ours, theirs))  # (PyTorch's zip: as many as both have)
        n = self.n_averaged.copy()
        if n == 0:
            for mine, other in pairs:
                _assign(mine, _numbers(other))
        elif self.multi_avg_fn is None:
            # (no function: the running mean, as PyTorch's on the CPU computes it)
            average = self.avg_fn or get_swa_avg_fn()
            for mine, other in pairs:
                _assign(mine, average(_numbers(mine), _numbers(other), n.copy()))
        else:
            by_dtype = {}  # PyTorch calls it once for each dtype's parameters
            for mine, other in pairs:
                by_dtype.setdefault(_numbers(mine).dtype, []).append((mine, other))
            for group in by_dtype.values():
                arrays = [_writable(mine) for mine, _ in group]
                self.multi_avg_fn(arrays, [_numbers(other) for _, other in group], n.copy())
                for (mine, _), array in zip(group, arrays):
                    _assign(mine, array)
        if not self.use_buffers:
            for mine, other in zip(self.module.buffers(), model.buffers(), strict=True):
                _assign(mine, _numbers(other))
        self.n_averaged += 1


def _numbers(p):
    """A parameter's or buffer's numbers as a NumPy array (a Value's as a 0-d one)."""
    if isinstance(p, (Tensor, Value)):
        return np.asarray(p.data)
    return np.asarray(p)


def _writable(p):
    """An array a multi_avg_fn may write into: a buffer itself; a copy of a Tensor's or
    a Value's numbers, written back after in the parameter's own way."""
    if isinstance(p, Value):
        return np.array(p.data, dtype=np.float64)
    if isinstance(p, Tensor):
        return np.array(p.data)  # (written back with _assign, as any Tensor update)
    return p


def _assign(target, numbers):
    """Write ``numbers`` into a parameter or buffer, in its own dtype (PyTorch's copy_)."""
    if isinstance(target, Value):
        target.data = float(numbers)
    elif isinstance(target, Tensor):
        target.data = np.asarray(numbers).astype(target.dtype)
    elif numbers is not target:
        np.copyto(target, numbers, casting="unsafe")


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers with one pass
    over ``loader`` (each item an input, or a list or tuple whose first entry is): the
    statistics start afresh and average over every batch (momentum None for the pass),
    in training mode; the model's mode and momenta are put back after. As PyTorch's,
    for the weights an AveragedModel holds, whose statistics were never computed.

    >>> model = cr.nn.BatchNorm1d(1)
    >>> cr.optim.swa_utils.update_bn([np.array([[1.0], [3.0]]), np.array([[5.0], [7.0]])],
    ...                              model)
    >>> model.running_mean.tolist()                  # the mean of the two batches' means
    [4.0]
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = np.zeros_like(module.running_mean)
            module.running_var = np.ones_like(module.running_var)
            module.num_batches_tracked = np.zeros_like(module.num_batches_tracked)
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None and hasattr(batch, "to"):
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)
