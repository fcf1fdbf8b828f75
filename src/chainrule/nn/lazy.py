"""torch's lazy modules: ``LazyLinear``, ``LazyConv1d/2d/3d``,
``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d``,
whose input size (in_features, in_channels, num_features) is read from the first input.

Until then the sized parameters are ``UninitializedParameter``s and the sized buffers
``UninitializedBuffer``s: they hold no numbers, and reading their data or shape (as
``state_dict()`` does) is an error saying so. The first call runs the eager class's
constructor with the size it read (so the weights are drawn as that class draws them,
from the layer's ``rng`` or the default generator, at that moment), fills the
uninitialised parameters in place (an optimizer built before holds the same objects)
and makes the module an instance of the eager class, as torch does. A
``load_state_dict`` before the first call takes the shapes from the state.

>>> layer = cr.nn.LazyLinear(3, rng=0)
>>> layer
LazyLinear(in_features=0, out_features=3, bias=True)
>>> layer(cr.ones(2, 5)).shape
(2, 3)
>>> layer
Linear(in_features=5, out_features=3, bias=True)
"""

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..primitive import shape_of
from ..tensor import Tensor
from .attention import NonDynamicallyQuantizableLinear
from .construction import RNG, check_device
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   Padding, Size)
from .layers import Linear
from .module import IncompatibleKeys, Parameter
from .module_state import as_array
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin", "LazyLinear",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


def _no_data(self):
    raise ValueError(f"{type(self).__name__}: a lazy module's parameter or buffer has no "
                     f"data or shape before the module's first call (or a load_state_dict "
                     f"into the lazy module itself), which give it its shape")


class UninitializedParameter(Parameter):
    """A lazy module's parameter before its shape is known (torch's
    ``nn.UninitializedParameter``): listed by ``parameters()``, so an optimizer may be
    built on it, but its ``data`` and ``shape`` are an error until ``materialize``
    (which the module's first call runs) gives it numbers and makes it a Parameter.

    >>> p = cr.nn.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', (2, 3))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64) -> None:
        check_device(type(self).__name__, device)
        super().__init__(np.empty(0, dtype), dtype=dtype)
        self.requires_grad = bool(requires_grad)

    data = property(_no_data, Tensor.data.fset)
    shape = property(_no_data)

    def materialize(self, shape: tuple[int, ...], device: Any = None,
                    dtype: DTypeLike = None) -> None:
        """Give the parameter zeros of ``shape`` (its dtype unless ``dtype``) and make it
        the class it becomes (a Parameter), in place.

        >>> p = cr.nn.UninitializedParameter()
        >>> p.materialize(3)
        >>> p.data.tolist()
        [0.0, 0.0, 0.0]
        """
        check_device(type(self).__name__, device)
        dtype = self._data.dtype if dtype is None else dtype
        self._data = np.zeros(shape, dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedBuffer(Tensor):
    """A lazy module's buffer before its shape is known (torch's
    ``nn.UninitializedBuffer``, BatchNorm's running statistics): listed by
    ``named_buffers()``, its ``data`` and ``shape`` an error until the module's first
    call (or ``materialize``) gives it numbers.

    >>> b = cr.nn.UninitializedBuffer()
    >>> b
    <UninitializedBuffer>
    >>> b.materialize((2,))
    >>> type(b).__name__, b.shape
    ('Tensor', (2,))
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None,
                 dtype: DTypeLike = np.float64) -> None:
        check_device(type(self).__name__, device)
        super().__init__(np.empty(0, dtype), requires_grad=requires_grad)

    data = property(_no_data, Tensor.data.fset)
    shape = property(_no_data)
    materialize = UninitializedParameter.materialize

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


_UNINITIALIZED = (UninitializedParameter, UninitializedBuffer)


class LazyModuleMixin:
    """What the lazy modules share (torch's ``LazyModuleMixin``): the eager class they
    become (``cls_to_become``), the size read from the first input, and the work of
    that first call. A lazy class lists its sized parameters and buffers in
    ``_lazy_names``, the attribute the size goes to in ``_lazy_size``, and reads the
    size from an input in ``_infer_size``.

    >>> layer = cr.nn.LazyConv1d(4, 3, rng=0)
    >>> layer.has_uninitialized_params()
    True
    >>> layer.initialize_parameters(cr.ones(2, 6, 10))
    >>> type(layer).__name__, layer.weight.shape
    ('Conv1d', (4, 6, 3))
    """

    cls_to_become: type = Linear
    _lazy_names: tuple[str, ...] = ("weight", "bias")
    _lazy_size: str = "in_features"

    def _lazy_setup(self, eager_init, settings: dict, dummy: int) -> None:
        """Check the settings as the eager class does (by making one of size
        ``dummy`` from a throwaway generator, so no draw is taken from the user's), then
        keep them, with the sized entries uninitialised and the size 0, as torch's."""
        eager_init(self, dummy, **dict(settings, rng=np.random.default_rng(0)))
        dtype = settings.get("dtype") or np.float64
        for name in self._lazy_names:
            value = vars(self).get(name)
            if isinstance(value, Parameter):
                setattr(self, name, UninitializedParameter(dtype=dtype))
            elif value is not None and name in self._buffer_names:
                setattr(self, name, UninitializedBuffer(dtype=dtype))
        setattr(self, self._lazy_size, 0)
        self._lazy_init = (eager_init, settings)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still waits for its shape.

        >>> cr.nn.LazyLinear(2).has_uninitialized_params()
        True
        """
        return any(isinstance(v, _UNINITIALIZED) for v in vars(self).values())

    def _infer_size(self, x: Any) -> int:
        return int(shape_of(x)[-1])

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Read the size from the input ``args[0]``, make the parameters as the eager
        class makes them (or keep those a load_state_dict gave), and become that class.

        >>> layer = cr.nn.LazyLinear(2, rng=0)
        >>> layer.initialize_parameters(cr.ones(1, 4))
        >>> type(layer).__name__, layer.weight.shape
        ('Linear', (2, 4))
        """
        name = type(self).__name__
        if not args:
            raise TypeError(f"{name}: the first call needs the input, to read "
                            f"{self._lazy_size} from")
        eager_init, settings = self._lazy_init
        lazy = [n for n in self._lazy_names if vars(self).get(n) is not None]
        if not lazy:  # (nothing sized: torch leaves the size 0, unused)
            self._become()
            return
        size = self._infer_size(args[0])
        pending = self.has_uninitialized_params()
        if (xp.recorders_open[0] and xp.recorder() is not None
                and any(isinstance(v, UninitializedBuffer) for v in vars(self).values())):
            # (a buffer made inside a trace is not one the program carries: its updates
            # would be lost)
            raise TypeError(f"{name}: a first call under cr.jit would make the buffers "
                            f"inside the trace; call the module once outside cr.jit (or "
                            f"load a state_dict into it) first")
        if not pending:  # everything loaded: no draws from the user's generator
            settings = dict(settings, rng=np.random.default_rng(0))
        fresh = object.__new__(type(self))
        eager_init(fresh, size, **settings)
        made = vars(fresh)
        for key in lazy:
            own, new = vars(self)[key], made[key]
            if isinstance(own, UninitializedParameter):
                own.materialize(new.shape, dtype=new.dtype)
                own._data = new._data
            elif isinstance(own, UninitializedBuffer):
                setattr(self, key, new)
            elif np.shape(as_array(own)) != np.shape(new):
                raise ValueError(f"{name}: {key} has shape {np.shape(as_array(own))} (as "
                                 f"loaded), but an input of shape {shape_of(args[0])} "
                                 f"gives {self._lazy_size}={size}, which needs "
                                 f"{np.shape(new)}")
        for key, value in made.items():
            if key not in vars(self) or key == self._lazy_size:
                setattr(self, key, value)
        self._become()

    def _become(self):
        del self._lazy_init
        self.__class__ = self.cls_to_become

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The first call: sizes the module from ``args[0]`` (see
        ``initialize_parameters``), then runs the eager class's forward, as every later
        call does directly.

        >>> cr.nn.LazyBatchNorm1d().forward(cr.ones(4, 3)).shape
        (4, 3)
        """
        self.initialize_parameters(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def load_state_dict(self, state: Mapping[str, ArrayLike],
                        strict: bool = True) -> IncompatibleKeys:
        """torch's lazy load: each uninitialised parameter or buffer the state names
        takes the state's shape, then the state is loaded as into any module (a refused
        load leaves them uninitialised). The size is read at the first call.

        >>> layer = cr.nn.LazyLinear(2)
        >>> layer.load_state_dict(cr.nn.Linear(3, 2, rng=0).state_dict())
        <All keys matched successfully>
        >>> layer.weight.shape
        (2, 3)
        """
        materialized = self._materialize_from(state, "")
        try:
            return super().load_state_dict(state, strict)
        except BaseException:
            self._unmaterialize(materialized)
            raise

    def _materialize_from(self, state: Mapping[str, ArrayLike], prefix: str) -> list:
        """Give each uninitialised parameter or buffer the shape of the state's entry
        ``prefix + name`` (a model's load calls this for each lazy layer in it); the
        list of what changed, for ``_unmaterialize``."""
        missing = [prefix + key for key in self._lazy_names
                   if isinstance(vars(self).get(key), _UNINITIALIZED)
                   and prefix + key not in state]
        if missing:
            raise ValueError(f"load_state_dict: {type(self).__name__} does not match the "
                             f"state: missing {missing}, which the state must hold to give "
                             f"them their shapes before the module's first call")
        materialized = []
        try:
            for key in self._lazy_names:
                own = vars(self).get(key)
                if isinstance(own, _UNINITIALIZED) and prefix + key in state:
                    shape = as_array(state[prefix + key]).shape
                    if isinstance(own, UninitializedParameter):
                        own.materialize(shape)
                    else:
                        setattr(self, key, np.zeros(shape, own._data.dtype))
                    materialized.append((key, own))
        except BaseException:
            self._unmaterialize(materialized)
            raise
        return materialized

    def _unmaterialize(self, materialized: list) -> None:
        """Undo ``_materialize_from``: a refused load leaves the layer uninitialised."""
        for key, own in materialized:
            if isinstance(own, Parameter) and not isinstance(own, _UNINITIALIZED):
                own.__class__ = UninitializedParameter
                own._data = np.empty(0, own._data.dtype)
            setattr(self, key, own)


# --- Linear --------------------------------------------------------------------------

def _linear_init(self, in_features, out_features, bias, rng, dtype):
    # torch's LazyLinear becomes an nn.Linear initialised as torch's: U(+-1/sqrt(in))
    NonDynamicallyQuantizableLinear.__init__(self, in_features, out_features, bias, rng,
                                             dtype)


class LazyLinear(LazyModuleMixin, Linear):
    """torch's ``nn.LazyLinear``: a Linear whose ``in_features`` is the last axis of
    its first input; it then becomes a ``Linear`` with torch's initialisation (weight
    and bias from U(-1/sqrt(in_features), 1/sqrt(in_features))).

    >>> layer = cr.nn.LazyLinear(4, rng=0)
    >>> layer(cr.ones(3, 7)).shape, type(layer).__name__
    ((3, 4), 'Linear')
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        check_device(type(self).__name__, device)
        self._lazy_setup(_linear_init, dict(out_features=out_features, bias=bias, rng=rng,
                                            dtype=dtype), 1)


# --- convolutions ----------------------------------------------------------------------

class _LazyConv(LazyModuleMixin):
    _lazy_size = "in_channels"

    def _infer_size(self, x):
        shape, d = shape_of(x), self.d
        if len(shape) not in (d + 1, d + 2):
            raise ValueError(f"{type(self).__name__}: input of shape {shape}, expected "
                             f"{d + 2} dimensions (N, C, *spatial) or {d + 1} (C, "
                             f"*spatial) to read in_channels from")
        return int(shape[0 if len(shape) == d + 1 else 1])


def _conv_setup(self, eager, out_channels, kernel_size, stride, padding, dilation,
                groups, bias, padding_mode, device, dtype, rng):
    check_device(type(self).__name__, device)
    settings = dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                    padding=padding, dilation=dilation, groups=groups, bias=bias,
                    padding_mode=padding_mode, rng=rng, dtype=dtype)
    self._lazy_setup(eager.__init__, settings, groups if isinstance(groups, int) else 1)


def _transposed_setup(self, eager, out_channels, kernel_size, stride, padding,
                      output_padding, groups, bias, dilation, padding_mode, device, dtype,
                      rng):
    check_device(type(self).__name__, device)
    settings = dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                    padding=padding, output_padding=output_padding, groups=groups,
                    bias=bias, dilation=dilation, padding_mode=padding_mode, rng=rng,
                    dtype=dtype)
    self._lazy_setup(eager.__init__, settings, groups if isinstance(groups, int) else 1)


class LazyConv1d(_LazyConv, Conv1d):
    """torch's ``nn.LazyConv1d``: a Conv1d whose ``in_channels`` is read from its first
    input ((N, C, L) or (C, L)); it then becomes a ``Conv1d``, initialised as one.

    >>> layer = cr.nn.LazyConv1d(4, 3, rng=0)
    >>> layer
    LazyConv1d(0, 4, kernel_size=(3,), stride=(1,))
    >>> layer(cr.ones(2, 5, 8)).shape, layer
    ((2, 4, 6), Conv1d(5, 4, kernel_size=(3,), stride=(1,)))
    """

    cls_to_become = Conv1d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Padding = 0, dilation: Size = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        _conv_setup(self, Conv1d, out_channels, kernel_size, stride, padding, dilation,
                    groups, bias, padding_mode, device, dtype, rng)


class LazyConv2d(_LazyConv, Conv2d):
    """torch's ``nn.LazyConv2d``: a Conv2d whose ``in_channels`` is read from its first
    input ((N, C, H, W) or (C, H, W)); it then becomes a ``Conv2d``.

    >>> layer = cr.nn.LazyConv2d(8, 3, padding=1, rng=0)
    >>> layer(cr.ones(1, 3, 5, 5)).shape, layer.weight.shape
    ((1, 8, 5, 5), (8, 3, 3, 3))
    """

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Padding = 0, dilation: Size = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        _conv_setup(self, Conv2d, out_channels, kernel_size, stride, padding, dilation,
                    groups, bias, padding_mode, device, dtype, rng)


class LazyConv3d(_LazyConv, Conv3d):
    """torch's ``nn.LazyConv3d``: a Conv3d whose ``in_channels`` is read from its first
    input ((N, C, D, H, W) or (C, D, H, W)); it then becomes a ``Conv3d``.

    >>> layer = cr.nn.LazyConv3d(2, 2, rng=0)
    >>> layer(cr.ones(1, 3, 3, 3, 3)).shape, type(layer).__name__
    ((1, 2, 2, 2, 2), 'Conv3d')
    """

    cls_to_become = Conv3d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Padding = 0, dilation: Size = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        _conv_setup(self, Conv3d, out_channels, kernel_size, stride, padding, dilation,
                    groups, bias, padding_mode, device, dtype, rng)


class LazyConvTranspose1d(_LazyConv, ConvTranspose1d):
    """torch's ``nn.LazyConvTranspose1d``: a ConvTranspose1d whose ``in_channels`` is
    read from its first input; it then becomes a ``ConvTranspose1d``.

    >>> layer = cr.nn.LazyConvTranspose1d(2, 4, stride=2, padding=1, rng=0)
    >>> layer(cr.ones(3, 4, 10)).shape, layer.weight.shape
    ((3, 2, 20), (4, 2, 4))
    """

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                 bias: bool = True, dilation: Size = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        _transposed_setup(self, ConvTranspose1d, out_channels, kernel_size, stride,
                          padding, output_padding, groups, bias, dilation, padding_mode,
                          device, dtype, rng)


class LazyConvTranspose2d(_LazyConv, ConvTranspose2d):
    """torch's ``nn.LazyConvTranspose2d``: a ConvTranspose2d whose ``in_channels`` is
    read from its first input; it then becomes a ``ConvTranspose2d``.

    >>> layer = cr.nn.LazyConvTranspose2d(3, 2, stride=2, rng=0)
    >>> layer(cr.ones(1, 5, 4, 4)).shape, type(layer).__name__
    ((1, 3, 8, 8), 'ConvTranspose2d')
    """

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                 bias: bool = True, dilation: Size = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        _transposed_setup(self, ConvTranspose2d, out_channels, kernel_size, stride,
                          padding, output_padding, groups, bias, dilation, padding_mode,
                          device, dtype, rng)


class LazyConvTranspose3d(_LazyConv, ConvTranspose3d):
    """torch's ``nn.LazyConvTranspose3d``: a ConvTranspose3d whose ``in_channels`` is
    read from its first input; it then becomes a ``ConvTranspose3d``.

    >>> layer = cr.nn.LazyConvTranspose3d(2, 2, stride=2, bias=False, rng=0)
    >>> layer(cr.ones(1, 3, 2, 2, 2)).shape, layer
    ((1, 2, 4, 4, 4), ConvTranspose3d(3, 2, kernel_size=(2, 2, 2), stride=(2, 2, 2), bias=False))
    """

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                 bias: bool = True, dilation: Size = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: DTypeLike = np.float64, rng: RNG = None) -> None:
        _transposed_setup(self, ConvTranspose3d, out_channels, kernel_size, stride,
                          padding, output_padding, groups, bias, dilation, padding_mode,
                          device, dtype, rng)


# --- normalisation ---------------------------------------------------------------------

class _LazyNorm(LazyModuleMixin):
    _lazy_size = "num_features"
    _lazy_names = ("weight", "bias", "running_mean", "running_var")

    def _infer_size(self, x):
        shape = shape_of(x)
        if len(shape) < 2:
            raise ValueError(f"{type(self).__name__}: input of shape {shape}, expected at "
                             f"least 2 dimensions (N, C, ...) to read num_features from")
        # (torch reads axis 1 even of an unbatched (C, *spatial) input to an instance
        # norm; here the channels are axis 0 there, as the eager layer reads them)
        d = getattr(self, "d", None)
        if d is not None and len(shape) == d + 1:
            return int(shape[0])
        return int(shape[1])


def _norm_setup(self, eager, eps, momentum, affine, track_running_stats, device, dtype,
                bias):
    check_device(type(self).__name__, device)
    settings = dict(eps=eps, momentum=momentum, affine=affine,
                    track_running_stats=track_running_stats, dtype=dtype, bias=bias)
    self._lazy_setup(lambda m, n, rng=None, **kw: eager.__init__(m, n, **kw), settings, 1)


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """torch's ``nn.LazyBatchNorm1d``: a BatchNorm1d whose ``num_features`` is axis 1 of
    its first input; it then becomes a ``BatchNorm1d`` (weight ones, bias zeros, the
    running statistics zeros and ones).

    >>> bn = cr.nn.LazyBatchNorm1d()
    >>> bn
    LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> bn(cr.ones(4, 3)).shape, bn.running_mean.shape
    ((4, 3), (3,))
    """

    cls_to_become = BatchNorm1d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        _norm_setup(self, BatchNorm1d, eps, momentum, affine, track_running_stats, device,
                    dtype, bias)


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """torch's ``nn.LazyBatchNorm2d``: a BatchNorm2d whose ``num_features`` is axis 1 of
    its first input; it then becomes a ``BatchNorm2d``.

    >>> bn = cr.nn.LazyBatchNorm2d()
    >>> bn(cr.ones(2, 3, 4, 4)).shape, type(bn).__name__
    ((2, 3, 4, 4), 'BatchNorm2d')
    """

    cls_to_become = BatchNorm2d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        _norm_setup(self, BatchNorm2d, eps, momentum, affine, track_running_stats, device,
                    dtype, bias)


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """torch's ``nn.LazyBatchNorm3d``: a BatchNorm3d whose ``num_features`` is axis 1 of
    its first input; it then becomes a ``BatchNorm3d``.

    >>> bn = cr.nn.LazyBatchNorm3d()
    >>> bn(cr.ones(2, 3, 2, 2, 2)).shape, bn.num_features
    ((2, 3, 2, 2, 2), 3)
    """

    cls_to_become = BatchNorm3d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        _norm_setup(self, BatchNorm3d, eps, momentum, affine, track_running_stats, device,
                    dtype, bias)


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """torch's ``nn.LazyInstanceNorm1d``: an InstanceNorm1d whose ``num_features`` is
    the channel axis of its first input; it then becomes an ``InstanceNorm1d``. Its
    defaults are torch's lazy ones: ``affine=True``, ``track_running_stats=True``.

    >>> norm = cr.nn.LazyInstanceNorm1d()
    >>> norm(cr.ones(2, 3, 4)).shape, norm.weight.shape
    ((2, 3, 4), (3,))
    """

    cls_to_become = InstanceNorm1d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        _norm_setup(self, InstanceNorm1d, eps, momentum, affine, track_running_stats,
                    device, dtype, bias)


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """torch's ``nn.LazyInstanceNorm2d``: an InstanceNorm2d whose ``num_features`` is
    the channel axis of its first input; it then becomes an ``InstanceNorm2d``.

    >>> norm = cr.nn.LazyInstanceNorm2d()
    >>> norm(cr.ones(2, 3, 4, 4)).shape, type(norm).__name__
    ((2, 3, 4, 4), 'InstanceNorm2d')
    """

    cls_to_become = InstanceNorm2d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        _norm_setup(self, InstanceNorm2d, eps, momentum, affine, track_running_stats,
                    device, dtype, bias)


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """torch's ``nn.LazyInstanceNorm3d``: an InstanceNorm3d whose ``num_features`` is
    the channel axis of its first input; it then becomes an ``InstanceNorm3d``.

    >>> norm = cr.nn.LazyInstanceNorm3d()
    >>> norm(cr.ones(1, 2, 2, 2, 2)).shape, norm.num_features
    ((1, 2, 2, 2, 2), 2)
    """

    cls_to_become = InstanceNorm3d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        _norm_setup(self, InstanceNorm3d, eps, momentum, affine, track_running_stats,
                    device, dtype, bias)
