"""The lines of a JAX program that speak to JAX's runtime rather than compute: the
configuration (``jax.config.update("jax_enable_x64", True)``), the devices and moving
arrays to them (``jax.devices()``, ``device_put``, ``block_until_ready``), the shapes
of a result (``eval_shape``, ``ShapeDtypeStruct``) and the names a profiler shows
(``named_call``, ``named_scope``).

chainrule computes on one CPU, in NumPy's arrays, in float64 unless given float32, and at
once: so most of these say so and change nothing. Each that would have to change
something it cannot (``jax_enable_x64`` set to False, a GPU platform, a flag it does not
know) raises, naming the setting, rather than run the program other than it asks.
"""

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..modes import _modes, _switching, modes_switched
from ..primitive import raw
from ..tensor import Tensor
from ..transforms.pytrees import tree_map

__all__ = ["config", "Device", "devices", "local_devices", "device_count",
           "local_device_count", "default_backend", "process_index", "process_count",
           "device_put", "device_get", "block_until_ready", "ShapeDtypeStruct", "eval_shape",
           "named_call", "named_scope", "ensure_compile_time_eval", "enable_x64",
           "debug_nans", "debug_infs", "log_compiles", "enable_checks",
           "threefry_partitionable", "default_matmul_precision", "numpy_rank_promotion",
           "numpy_dtype_promotion", "default_device", "default_prng_impl", "transfer_guard",
           "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device"]


@dataclasses.dataclass(frozen=True)
class Device:
    """The one device chainrule computes on, as ``jax.devices()`` lists it.

    >>> cr.devices()
    [CpuDevice(id=0)]
    """

    id: int = 0
    platform: str = "cpu"
    device_kind: str = "cpu"
    process_index: int = 0

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"


_CPU = Device()


def _refuse_platform(backend, what):
    if backend is not None and backend != "cpu":
        raise ValueError(f"{what}(backend={backend!r}): chainrule computes on the CPU "
                         f"(backend 'cpu'); another library's arrays keep their own device "
                         f"(docs/backends.md)")


def devices(backend: str | None = None) -> list[Device]:
    """The devices: one CPU (``jax.devices()``).

    >>> len(cr.devices("cpu"))
    1
    """
    _refuse_platform(backend, "devices")
    return [_CPU]


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    """The devices of this process: one CPU (``jax.local_devices()``).

    >>> cr.local_devices()[0].platform
    'cpu'
    """
    _refuse_platform(backend, "local_devices")
    return [_CPU]


def device_count(backend: str | None = None) -> int:
    """How many devices: 1 (``jax.device_count()``).

    >>> cr.device_count()
    1
    """
    _refuse_platform(backend, "device_count")
    return 1


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process has: 1 (``jax.local_device_count()``).

    >>> cr.local_device_count()
    1
    """
    _refuse_platform(backend, "local_device_count")
    return 1


def default_backend() -> str:
    """The platform computations run on: ``'cpu'`` (``jax.default_backend()``).

    >>> cr.default_backend()
    'cpu'
    """
    return "cpu"


def process_index(backend: str | None = None) -> int:
    """This process's number among the processes of a run: 0, the only one.

    >>> cr.process_index()
    0
    """
    _refuse_platform(backend, "process_index")
    return 0


def process_count(backend: str | None = None) -> int:
    """How many processes the run has: 1 (``jax.process_count()``).

    >>> cr.process_count()
    1
    """
    _refuse_platform(backend, "process_count")
    return 1


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """``x`` on the device: chainrule has one, the CPU, so the arrays of the pytree come
    back as they are (``jax.device_put``; a Python number becomes an array, as JAX makes
    it one). Tensors and other libraries' arrays keep their type and device.

    >>> cr.device_put((1.0, np.ones(2)))
    (array(1.), array([1., 1.]))
    """
    for where in (device, src):
        if where is not None and not isinstance(where, Device) and \
                getattr(where, "platform", "cpu") != "cpu":
            raise ValueError(f"device_put: chainrule computes on the CPU; got the device "
                             f"{where!r}")
    return _tree_of_arrays(x, copy=False)


def device_get(x: Any) -> Any:
    """The arrays of the pytree ``x`` as NumPy arrays on the host (``jax.device_get``):
    a Tensor gives its data.

    >>> cr.device_get({"w": cr.tensor([1.0, 2.0])})
    {'w': array([1., 2.])}
    """
    return tree_map(lambda leaf: np.asarray(leaf.data if isinstance(leaf, Tensor)
                                            else raw(leaf)), x)


def block_until_ready(x: Any) -> Any:
    """``x``, once computed: chainrule computes at once, so at once
    (``jax.block_until_ready``, for timing loops written for JAX).

    >>> cr.block_until_ready(np.ones(2))
    array([1., 1.])
    """
    return x


def _tree_of_arrays(x, copy):
    def leaf(value):
        if isinstance(value, (int, float, complex, bool, np.number)):
            return np.array(value)
        return np.array(value) if copy else value
    return tree_map(leaf, x)


@dataclasses.dataclass(frozen=True)
class ShapeDtypeStruct:
    """A shape and a dtype, standing for an array (``jax.ShapeDtypeStruct``): what
    ``eval_shape`` returns, and what it takes in place of arrays.

    >>> cr.ShapeDtypeStruct((2, 3), np.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    shape: tuple[int, ...]
    dtype: np.dtype

    def __init__(self, shape: Sequence[int], dtype: DTypeLike, *, sharding: Any = None,
                 weak_type: bool = False) -> None:
        object.__setattr__(self, "shape", tuple(int(n) for n in shape))
        object.__setattr__(self, "dtype", np.dtype(dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)``, as a pytree of
    ``ShapeDtypeStruct`` (``jax.eval_shape``). The arguments may be arrays or
    ``ShapeDtypeStruct``s; those become arrays of zeros. JAX computes nothing: chainrule
    runs ``fun`` once (on those zeros, with no graph recorded and NumPy's warnings of
    zeros kept quiet), so a function that cannot run on zeros (a Cholesky factor) is
    given arrays instead.

    >>> cr.eval_shape(lambda x: x.sum(0), cr.ShapeDtypeStruct((2, 3), np.float32))
    ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    from ..modes import no_grad

    def standing_in(leaf):
        return np.zeros(leaf.shape, leaf.dtype) if isinstance(leaf, ShapeDtypeStruct) \
            else leaf

    def described(leaf):
        value = leaf.data if isinstance(leaf, Tensor) else raw(leaf)
        return ShapeDtypeStruct(np.shape(value), np.result_type(value))

    args, kwargs = tree_map(standing_in, (args, kwargs))
    with no_grad(), np.errstate(all="ignore"):
        out = fun(*args, **kwargs)
    return tree_map(described, out)


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` itself: JAX names its calls for profilers (``jax.named_call``); a Python
    profiler already shows chainrule's by the function's own name.

    >>> f = lambda x: x + 1
    >>> cr.named_call(f, name="step") is f
    True
    """
    return fun


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A block named for profilers (``jax.named_scope``): it changes nothing here.

    >>> with cr.named_scope("layer1"):
    ...     print(cr.exp(0.0))
    1.0
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: expected a str name, got {type(name).__name__}")
    yield


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """A block computed at once (``jax.ensure_compile_time_eval``): chainrule computes
    every operation at once already (under ``cr.jit`` too, while tracing), so it changes
    nothing.

    >>> with cr.ensure_compile_time_eval():
    ...     print(np.arange(3).sum())
    3
    """
    yield


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """``jax.enable_x64()``: chainrule is in float64 already (float32 where the arrays
    are), so ``True`` changes nothing; ``False`` raises, since chainrule cannot make
    float32 its default.

    >>> with cr.enable_x64():
    ...     print(cr.ones(2).dtype)
    float64
    """
    _x64(new_val, "enable_x64")
    yield


def _x64(value, where):
    if not value:
        raise ValueError(f"{where}: chainrule computes in float64 unless given float32 "
                         f"arrays, and cannot make float32 its default; pass float32 "
                         f"arrays (np.float32, dtype=cr.float32) where you want it")


class _Config:
    """``jax.config``: ``cr.config.update("jax_enable_x64", True)`` and its reads
    (``cr.config.jax_enable_x64``). The flags a ported program sets are known; each one
    chainrule cannot honour raises, naming it, as does a flag it does not know.
    ``jax_debug_nans`` (or ``_infs``) leaves ``detect_anomaly`` on and ``jax_disable_jit``
    leaves ``disable_jit`` on, in the thread that sets them (JAX's flags are global).

    >>> cr.config.update("jax_enable_x64", True)
    >>> cr.config.jax_enable_x64
    True
    """

    def __init__(self) -> None:
        self._counted = False  # (whether a flag holds one of modes_switched's count)
        self._holding = {"anomaly": False, "jit_disabled": False}
        # each flag's setter: it checks the value, switches what it switches, and
        # returns the value to keep
        self._setters: dict[str, Callable[[Any], Any]] = {
            "jax_enable_x64": lambda v: _x64(v, "config.update('jax_enable_x64', False)")
            or True,
            "jax_platform_name": self._cpu,
            "jax_platforms": self._cpu,
            "jax_debug_nans": self._debug_nans,
            "jax_debug_infs": self._debug_infs,
            "jax_disable_jit": self._disable_jit,
            "jax_default_matmul_precision": lambda v: v,  # (one precision on a CPU)
            "jax_numpy_rank_promotion": self._rank_promotion,
            "jax_traceback_filtering": lambda v: v,  # (tracebacks are Python's)
            "jax_log_compiles": self._no_compiles,
            "jax_compilation_cache_dir": lambda v: v,  # (nothing compiled to a file)
            "jax_persistent_cache_min_compile_time_secs": lambda v: v,
            "jax_persistent_cache_min_entry_size_bytes": lambda v: v,
            "jax_default_prng_impl": lambda v: v,  # (cr.random's keys are NumPy's Philox)
            "jax_threefry_partitionable": lambda v: v,
            "jax_numpy_dtype_promotion": self._dtype_promotion,
            "jax_default_device": self._device,
            # (one CPU: no array moves between a host and a device, so none is guarded)
            "jax_transfer_guard": self._guard,
            "jax_transfer_guard_host_to_device": self._guard,
            "jax_transfer_guard_device_to_host": self._guard,
            "jax_transfer_guard_device_to_device": self._guard,
            "jax_enable_checks": bool,  # (JAX's checks of its own internals)
        }
        self._values: dict[str, Any] = {
            "jax_enable_x64": True, "jax_platform_name": "cpu", "jax_platforms": "cpu",
            "jax_debug_nans": False, "jax_debug_infs": False, "jax_disable_jit": False,
            "jax_default_matmul_precision": None, "jax_numpy_rank_promotion": "allow",
            "jax_traceback_filtering": "auto", "jax_log_compiles": False,
            "jax_compilation_cache_dir": None,
            "jax_persistent_cache_min_compile_time_secs": 1.0,
            "jax_persistent_cache_min_entry_size_bytes": 0,
            "jax_default_prng_impl": "threefry2x32", "jax_threefry_partitionable": True,
            "jax_numpy_dtype_promotion": "standard", "jax_default_device": None,
            "jax_transfer_guard": "allow", "jax_transfer_guard_host_to_device": "allow",
            "jax_transfer_guard_device_to_host": "allow",
            "jax_transfer_guard_device_to_device": "allow", "jax_enable_checks": False}

    def update(self, name: str, value: Any) -> None:
        """Set the flag ``name`` (``jax.config.update``)."""
        if name not in self._setters:
            raise AttributeError(f"config.update: chainrule does not know the flag {name!r}; "
                                 f"it knows {', '.join(sorted(self._setters))}")
        self._values[name] = self._setters[name](value)

    def read(self, name: str) -> Any:
        """The flag's value."""
        return getattr(self, name)

    @property
    def values(self) -> dict[str, Any]:
        return dict(self._values)

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"config has no flag {name!r}")

    @staticmethod
    def _cpu(value):
        if value not in ("cpu", None, ""):
            raise ValueError(f"config.update: chainrule computes on the CPU, not {value!r}")
        return "cpu"

    @staticmethod
    def _rank_promotion(value):
        if value != "allow":
            raise ValueError(f"config.update('jax_numpy_rank_promotion', {value!r}): "
                             f"chainrule broadcasts as NumPy does ('allow') and cannot "
                             f"warn or raise on it")
        return value

    @staticmethod
    def _dtype_promotion(value):
        if value != "standard":
            raise ValueError(f"config.update('jax_numpy_dtype_promotion', {value!r}): "
                             f"chainrule promotes dtypes as NumPy does ('standard') and "
                             f"cannot refuse a promotion")
        return value

    @staticmethod
    def _device(value):
        if value is not None and not isinstance(value, Device) and value != "cpu":
            raise ValueError(f"config.update('jax_default_device', {value!r}): chainrule "
                             f"computes on its one CPU; expected None or cr.devices()[0]")
        return value

    @staticmethod
    def _guard(value):
        levels = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
        if value not in levels:
            raise ValueError(f"config.update: a transfer guard of {value!r}; expected one "
                             f"of {', '.join(levels)}")
        return value

    @staticmethod
    def _no_compiles(value):
        if value:
            raise ValueError("config.update('jax_log_compiles', True): cr.jit compiles "
                             "nothing to log; cr.make_program(f)(x) shows its program")
        return False

    def _switch(self, attribute, value):
        """Set a mode of this thread until set back (a flag, where the mode's context
        managers set it for a block). While a flag holds a mode on, the count that a
        mode's check looks at first holds one more, and no longer: the scalar engine's
        fast paths look at that count."""
        setattr(_modes, attribute, bool(value))
        self._holding[attribute] = bool(value)
        needed = any(self._holding.values())
        if needed != self._counted:
            with _switching:
                modes_switched[0] += 1 if needed else -1
            self._counted = needed
        return bool(value)

    def _debug_nans(self, value):
        # JAX stops at the first NaN: chainrule's detect_anomaly, left on (it stops at
        # the first NaN or inf, so either flag switches it on)
        self._switch("anomaly", bool(value) or bool(self._values["jax_debug_infs"]))
        return bool(value)

    def _debug_infs(self, value):
        self._switch("anomaly", bool(value) or bool(self._values["jax_debug_nans"]))
        return bool(value)

    def _disable_jit(self, value):
        return self._switch("jit_disabled", value)


config = _Config()


_UNSET = object()


def _flag_context(flag: str, name: str, example: Any,
                  boolean: bool = True) -> Callable[..., Any]:
    """``jax.<name>(value)``: the flag set for a ``with`` block, then set back (a bool
    flag's value may be left out: True)."""
    @contextlib.contextmanager
    def context(new_val: Any = _UNSET) -> Iterator[None]:
        if new_val is _UNSET:
            if not boolean:
                raise TypeError(f"{name}() takes the value to set for the block")
            new_val = True
        before = config.read(flag)
        config.update(flag, new_val)
        try:
            yield
        finally:
            config.update(flag, before)
    context.__name__ = context.__qualname__ = name
    context.__doc__ = (f"``jax.{name}(value)``: ``config.update({flag!r}, value)`` for a "
                       f"``with`` block, set back after it (in this thread).\n\n"
                       f"    >>> with cr.{name}({example!r}):\n"
                       f"    ...     cr.config.{flag}\n    {example!r}\n")
    return context


debug_nans = _flag_context("jax_debug_nans", "debug_nans", True)
debug_infs = _flag_context("jax_debug_infs", "debug_infs", True)
log_compiles = _flag_context("jax_log_compiles", "log_compiles", False)
enable_checks = _flag_context("jax_enable_checks", "enable_checks", True)
threefry_partitionable = _flag_context("jax_threefry_partitionable", "threefry_partitionable",
                                       True)
default_matmul_precision = _flag_context("jax_default_matmul_precision",
                                         "default_matmul_precision", "float32", boolean=False)
numpy_rank_promotion = _flag_context("jax_numpy_rank_promotion", "numpy_rank_promotion",
                                     "allow", boolean=False)
numpy_dtype_promotion = _flag_context("jax_numpy_dtype_promotion", "numpy_dtype_promotion",
                                      "standard", boolean=False)
default_device = _flag_context("jax_default_device", "default_device", "cpu", boolean=False)
default_prng_impl = _flag_context("jax_default_prng_impl", "default_prng_impl", "rbg",
                                  boolean=False)
transfer_guard_host_to_device = _flag_context(
    "jax_transfer_guard_host_to_device", "transfer_guard_host_to_device", "log",
    boolean=False)
transfer_guard_device_to_host = _flag_context(
    "jax_transfer_guard_device_to_host", "transfer_guard_device_to_host", "log",
    boolean=False)
transfer_guard_device_to_device = _flag_context(
    "jax_transfer_guard_device_to_device", "transfer_guard_device_to_device", "log",
    boolean=False)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """``jax.transfer_guard(level)``: the three directions' guards for a ``with`` block.
    On one CPU no array moves between a host and a device, so no level stops anything.

    >>> with cr.transfer_guard("disallow"):
    ...     cr.config.jax_transfer_guard_host_to_device
    'disallow'
    """
    with transfer_guard_host_to_device(new_val), transfer_guard_device_to_host(new_val), \
            transfer_guard_device_to_device(new_val):
        yield
