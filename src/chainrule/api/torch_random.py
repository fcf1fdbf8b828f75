"""PyTorch's random functions and its Generator: ``cr.manual_seed``, ``cr.Generator``,
``rand``, ``randn``, ``randint``, ``randperm``, ``multinomial``, ``normal``,
``bernoulli``, ``rand_like`` and ``randn_like``, with torch's arguments, each drawing
from the default generator or from the one given as ``generator=``.

    >>> g = cr.Generator().manual_seed(2147483647)
    >>> C = cr.randn((27, 2), generator=g)
    >>> ix = cr.randint(0, 27, (32,), generator=g)
    >>> C[ix].shape, ix.dtype
    ((32, 2), dtype('int64'))

A ``cr.Generator`` is a ``numpy.random.Generator`` on PCG64 with torch's methods added
(``manual_seed``, ``seed``, ``initial_seed``, ``get_state``, ``set_state``): the same
seed gives the same numbers in every run and on every machine, but they are NumPy's
numbers, not torch's (``torch.manual_seed(0); torch.rand(3)`` and
``cr.manual_seed(0); cr.rand(3)`` differ). Float draws are float64 unless ``dtype``
says otherwise; integer draws (randint, randperm, multinomial) are int64 Tensors. A
sample is a constant of differentiation, as in torch (whose ``normal`` and
``bernoulli`` give their inputs zero gradients): ``mean + std * cr.randn(...)`` is the
reparameterised spelling.

Under ``cr.jit`` each draw is a call of the program (``chainrule.arrays.draw``): a
jitted function draws new numbers at every call, the numbers the eager function would
draw from the same generator. ``manual_seed`` and ``set_state`` inside a jitted function
are calls of the program too. ``cr.random`` is the other way, JAX's: explicit keys.
"""

import secrets
from types import MethodType

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..primitive import Box, raw, shape_of
from ..methods.torch_inplace import use_default_generator
from ..tensor import Tensor

__all__ = ["Generator", "manual_seed", "default_generator", "rand", "randn", "randint",
           "randperm", "multinomial", "normal", "bernoulli", "rand_like", "randn_like"]

# A shape, given as one int or tuple, or as several ints: rand(2, 3) or rand((2, 3)).
Shape = int | tuple[int, ...] | list[int]
# rand's and randn's seed: an int for numpy.random.default_rng, or a NumPy Generator.
Seed = int | np.random.Generator | None

DEFAULT_SEED = 67280421310721  # the initial seed of a new torch.Generator()
_SEEDS = (-2 ** 63, 2 ** 64)   # the seeds torch accepts; a negative one wraps modulo 2**64
_STATE_BYTES = 45              # PCG64's state and increment, the initial seed, a cached half


class Generator(np.random.Generator):
    """torch.Generator: a stream of random numbers that the drawing functions take as
    ``generator=``. A ``numpy.random.Generator`` on PCG64, so NumPy's methods work on
    it too; it starts from torch's default seed, 67280421310721.

    >>> g = cr.Generator().manual_seed(42)
    >>> a = cr.rand(3, generator=g)
    >>> b = cr.rand(3, generator=cr.Generator().manual_seed(42))
    >>> a.tolist() == b.tolist(), g.initial_seed()
    (True, 42)

    The numbers are NumPy's for that seed, not the ones torch draws.
    """

    def __init__(self, device: str | None = "cpu") -> None:
        if device is not None and str(device) != "cpu":
            raise ValueError(f"Generator: chainrule draws on the CPU, got device {device!r}")
        super().__init__(np.random.PCG64(DEFAULT_SEED))
        self._initial_seed = DEFAULT_SEED

    @property
    def device(self) -> str:
        """Where the numbers are made: always ``"cpu"``.

        >>> cr.Generator().device
        'cpu'
        """
        return "cpu"

    def manual_seed(self, seed: int) -> "Generator":
        """Start the stream again from ``seed`` (an int in [-2**63, 2**64); a negative
        one counts modulo 2**64, as torch); returns the generator.

        >>> g = cr.Generator()
        >>> first = cr.randint(0, 10, (5,), generator=g.manual_seed(1)).tolist()
        >>> cr.randint(0, 10, (5,), generator=g.manual_seed(1)).tolist() == first
        True
        """
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed: expected an int seed, got {seed!r} "
                            f"({type(seed).__name__})")
        if not _SEEDS[0] <= seed < _SEEDS[1]:
            raise ValueError(f"manual_seed: expected a seed in [-2**63, 2**64), got {seed}")
        xp.draw(MethodType(_reseed, self), int(seed) % 2 ** 64)
        return self

    def seed(self) -> int:
        """Seed the stream from the operating system's entropy; returns that seed.

        >>> g = cr.Generator()
        >>> g.seed() == g.initial_seed()
        True
        """
        seed = secrets.randbits(64)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream last started from (manual_seed's, seed's or the default).

        >>> cr.Generator().initial_seed()
        67280421310721
        """
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The state of the stream, a uint8 Tensor for ``set_state`` (chainrule's own
        layout, 45 bytes: it is not torch's 5056-byte state).

        >>> g = cr.Generator()
        >>> state = g.get_state()
        >>> first = cr.rand(2, generator=g).tolist()
        >>> cr.rand(2, generator=g.set_state(state)).tolist() == first
        True
        """
        return Tensor._make(xp.draw(MethodType(_state_of, self)))

    def set_state(self, new_state: ArrayLike) -> "Generator":
        """Put the stream back where ``get_state`` was taken; returns the generator.

        >>> g = cr.Generator().manual_seed(3)
        >>> g.set_state(cr.Generator().manual_seed(5).get_state()).initial_seed()
        5
        """
        state = raw(new_state)
        if getattr(state, "dtype", None) != np.uint8:
            raise TypeError(f"set_state: expected a uint8 Tensor from get_state, got "
                            f"{type(new_state).__name__} of dtype "
                            f"{getattr(state, 'dtype', None)}")
        if shape_of(state) != (_STATE_BYTES,):
            raise ValueError(f"set_state: expected a state of {_STATE_BYTES} bytes (from "
                             f"get_state), got shape {shape_of(state)}")
        xp.draw(MethodType(_set_state, self), state)
        return self

    def spawn(self, n_children: int) -> list:
        """Refused: NumPy's ``spawn`` derives children from the seed the generator was
        built with, which ``manual_seed`` does not change, so every seed would spawn
        the same children.

        >>> cr.Generator().spawn(2)
        Traceback (most recent call last):
        ...
        TypeError: spawn: a cr.Generator does not spawn children; make them with ...
        """
        raise TypeError("spawn: a cr.Generator does not spawn children; make them with "
                        "cr.Generator().manual_seed(seed) for seeds of your choosing")

    def __repr__(self) -> str:
        return f"Generator(initial_seed={self._initial_seed})"

    __str__ = __repr__  # (numpy.random.Generator's would name the bit generator)

    def __reduce__(self):
        return _restored, (bytes(_state_of(self)),)


# What changes a generator's state runs through xp.draw as a method of the generator, so
# that cr.jit records it as a call of the program (the state it sets is set again at
# each call) and knows the generator moved through the program.

def _reseed(generator, seed):
    generator.bit_generator.state = np.random.PCG64(seed).state
    generator._initial_seed = seed


def _state_of(generator):
    s = generator.bit_generator.state
    words = [(s["state"]["state"], 16), (s["state"]["inc"], 16),
             (generator._initial_seed, 8), (s["uinteger"], 4), (s["has_uint32"], 1)]
    data = b"".join(value.to_bytes(size, "little") for value, size in words)
    return np.frombuffer(data, dtype=np.uint8).copy()


def _set_state(generator, state):
    data, values = np.asarray(state, dtype=np.uint8).tobytes(), []
    for size in (16, 16, 8, 4, 1):
        values.append(int.from_bytes(data[:size], "little"))
        data = data[size:]
    pcg_state, inc, seed, uinteger, has_uint32 = values
    generator.bit_generator.state = {
        "bit_generator": "PCG64", "state": {"state": pcg_state, "inc": inc},
        "has_uint32": has_uint32, "uinteger": uinteger}
    generator._initial_seed = seed


def _restored(state):
    generator = Generator()
    _set_state(generator, np.frombuffer(state, dtype=np.uint8))
    return generator


default_generator = Generator()
default_generator.seed()  # as torch's: a new seed at each start of the program
use_default_generator(default_generator)  # (x.uniform_() and the other fills)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator, which every drawing function uses when it is given
    no ``generator=``; returns that generator (as torch.manual_seed).

    >>> g = cr.manual_seed(0)
    >>> a = cr.randn(3)
    >>> cr.manual_seed(0) is g and cr.randn(3).tolist() == a.tolist()
    True

    It seeds chainrule's drawing functions only: ``nn`` layers take their own ``rng=``.
    """
    try:
        seed = int(seed)  # (torch's manual_seed takes what int() takes)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed: expected an int seed, got {seed!r}") from None
    return default_generator.manual_seed(seed)


# ---------------------------------------------------------------------------------------
# Drawing: the generator a function draws from, and how the draw is made
# ---------------------------------------------------------------------------------------

def _generator(name, generator, seed=None):
    """The NumPy generator ``name`` draws from: ``generator=``, ``seed=`` (rand's and
    randn's), or the default one."""
    if generator is not None and seed is not None:
        raise TypeError(f"{name}: give seed= or generator=, not both")
    if generator is None:
        if seed is None:
            return default_generator
        return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"{name}: generator= must be a cr.Generator (or a numpy.random."
                        f"Generator), got {type(generator).__name__}")
    return generator


def _draw(name, sample, *args, generator=None, seed=None):
    """``sample(numpy_generator, *args)``, as a call of a cr.jit program (new numbers at
    each call). A generator made here from an int seed is the exception: it is made
    again at each eager call and gives the same numbers, so they are constants."""
    source = _generator(name, generator, seed)
    if seed is not None and not isinstance(seed, np.random.Generator):
        return sample(source, *args)
    return xp.draw(MethodType(sample, source), *args)


def _size(name, size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{name}: expected a size of ints, got {tuple(size)!r}")
        if n < 0:
            raise ValueError(f"{name}: a size cannot be negative, got {tuple(size)!r}")
    return tuple(int(n) for n in size)


def _float_dtype(name, dtype, default=np.float64):
    dtype = np.dtype(default if dtype is None else dtype)
    if dtype.kind != "f":
        raise TypeError(f"{name}: expected a floating-point dtype, got {dtype}")
    return dtype


def cpu_only(name: str, device: object) -> None:
    """Accept PyTorch's ``device=`` where it names the CPU (``"cpu"``, ``"cpu:0"``, a
    tensor's ``.device``, a ``torch.device("cpu")``) or is None; refuse any other device
    with a ValueError, as chainrule computes on the CPU.

    >>> cpu_only("zeros", "cpu")
    >>> cpu_only("zeros", "cuda")
    Traceback (most recent call last):
    ValueError: zeros: chainrule computes on the CPU, got device='cuda'
    """
    if device is not None and str(device).split(":")[0] != "cpu":
        raise ValueError(f"{name}: chainrule computes on the CPU, got device={str(device)!r}")


def _leaf(name, array, requires_grad, device=None):
    cpu_only(name, device)
    if requires_grad and np.dtype(array.dtype).kind not in "fc":
        raise TypeError(f"{name}: only floating-point tensors can require grad, got "
                        f"dtype {array.dtype}")
    return Tensor._make(array, requires_grad)


def _data(name, x):
    """The array (or number) inside x, with its dtype: a sample's inputs are data."""
    data = raw(x)
    if isinstance(data, Box):  # a batch of cr.vmap, which a generator cannot split
        raise TypeError(f"{name}: a generator's draw cannot be batched by cr.vmap; draw "
                        f"outside it, or use cr.random with a key per example")
    if isinstance(data, (list, tuple, int, float, np.generic)):
        data = np.asarray(data)
    return data, np.dtype(data.dtype)


def _first_failing(values, ok):
    """The first entry of ``values`` where ``ok`` (an array of bools) is False."""
    return np.ravel(values)[~np.ravel(ok)][0]


def _uniform(generator, shape, dtype):
    u = generator.random(shape).astype(dtype, copy=False)
    if u.dtype != np.float64:  # rounding could reach 1 in a narrower type
        u = np.minimum(u, np.nextafter(dtype.type(1), dtype.type(0)))
    return u


def _standard_normal(generator, shape, dtype):
    return generator.standard_normal(shape).astype(dtype, copy=False)


def rand(*size: Shape, seed: Seed = None, generator: Generator | None = None,
         dtype: DTypeLike = None, requires_grad: bool = False,
         device: str | None = None) -> Tensor:
    """Numbers drawn uniformly from [0, 1), of the given size: ``rand(2, 3)`` or
    ``rand((2, 3))``, float64 unless told.

    From ``generator=``, or from a generator made from ``seed=`` (an int; a NumPy
    Generator is drawn from as it is), or else from the default generator.

    >>> x = cr.rand(2, 3, seed=0)
    >>> x.shape, bool(((0 <= x.data) & (x.data < 1)).all())
    ((2, 3), True)
    >>> x.data.tolist() == cr.rand(2, 3, seed=0).data.tolist()
    True
    """
    shape, dtype = _size("rand", size), _float_dtype("rand", dtype)
    array = _draw("rand", _uniform, shape, dtype, generator=generator, seed=seed)
    return _leaf("rand", array, requires_grad, device)


def randn(*size: Shape, seed: Seed = None, generator: Generator | None = None,
          dtype: DTypeLike = None, requires_grad: bool = False,
          device: str | None = None) -> Tensor:
    """Numbers drawn from the standard normal distribution (mean 0, variance 1).

    Of the given size, float64 unless told; from ``generator=``, a ``seed=`` or the
    default generator, as ``rand``.

    >>> x = cr.randn(1000, seed=0)
    >>> x.shape, abs(float(x.data.mean())) < 0.1, round(float(x.data.std()), 1)
    ((1000,), True, 1.0)
    """
    shape, dtype = _size("randn", size), _float_dtype("randn", dtype)
    array = _draw("randn", _standard_normal, shape, dtype, generator=generator, seed=seed)
    return _leaf("randn", array, requires_grad, device)


def _like(name, x, dtype):
    data, own = _data(name, x)
    if dtype is None and own.kind != "f":
        raise TypeError(f"{name}: input has dtype {own}; draws are floating-point, "
                        f"give dtype=")
    return shape_of(data), _float_dtype(name, own if dtype is None else dtype)


def rand_like(input: ArrayLike, *, generator: Generator | None = None,
              dtype: DTypeLike = None, requires_grad: bool = False,
              device: str | None = None) -> Tensor:
    """``rand`` with the shape (and floating dtype, unless given) of ``input``.

    >>> cr.rand_like(cr.zeros(2, 3)).shape, cr.rand_like(np.ones(2, np.float32)).dtype
    ((2, 3), dtype('float32'))
    """
    shape, dtype = _like("rand_like", input, dtype)
    return _leaf("rand_like", _draw("rand_like", _uniform, shape, dtype,
                                    generator=generator), requires_grad, device)


def randn_like(input: ArrayLike, *, generator: Generator | None = None,
               dtype: DTypeLike = None, requires_grad: bool = False,
               device: str | None = None) -> Tensor:
    """``randn`` with the shape (and floating dtype, unless given) of ``input``.

    >>> cr.randn_like(cr.zeros(4), requires_grad=True).requires_grad
    True
    """
    shape, dtype = _like("randn_like", input, dtype)
    return _leaf("randn_like", _draw("randn_like", _standard_normal, shape, dtype,
                                     generator=generator), requires_grad, device)


def _integers(generator, low, high, shape, dtype):
    return generator.integers(low, high, shape, dtype=np.int64).astype(dtype, copy=False)


def _int(name, what, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: {what} must be an int, got {value!r} "
                        f"({type(value).__name__})")
    return int(value)


def randint(low: int = 0, high: int | None = None, size: tuple[int, ...] | None = None, *,
            generator: Generator | None = None, dtype: DTypeLike = np.int64,
            requires_grad: bool = False, device: str | None = None) -> Tensor:
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, ``size`` a tuple; int64 unless told.

    >>> g = cr.Generator().manual_seed(0)
    >>> ix = cr.randint(0, 27, (32,), generator=g)
    >>> ix.shape, ix.dtype, 0 <= int(ix.min()) and int(ix.max()) < 27
    ((32,), dtype('int64'), True)
    >>> cr.randint(3, (2, 2), generator=g).shape
    (2, 2)
    """
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint: size must be a tuple of ints, as randint(high, size) or "
                        f"randint(low, high, size), got size={size!r}")
    low, high = _int("randint", "low", low), _int("randint", "high", high)
    if not low < high:
        raise ValueError(f"randint: expected low < high, got low={low} and high={high}")
    if low < -2 ** 63 or high > 2 ** 63:
        raise ValueError(f"randint: the bounds must fit in int64, got low={low} and "
                         f"high={high}")
    shape, dtype = _size("randint", (size,)), np.dtype(dtype)
    array = _draw("randint", _integers, low, high, shape, dtype, generator=generator)
    return _leaf("randint", array, requires_grad, device)


def _permutation(generator, n, dtype):
    return generator.permutation(n).astype(dtype, copy=False)


def randperm(n: int, *, generator: Generator | None = None, dtype: DTypeLike = np.int64,
             requires_grad: bool = False, device: str | None = None) -> Tensor:
    """A random permutation of 0, 1, ..., n - 1 (int64 unless told).

    >>> sorted(cr.randperm(5, generator=cr.Generator()).tolist())
    [0, 1, 2, 3, 4]
    """
    n = _int("randperm", "n", n)
    if n < 0:
        raise ValueError(f"randperm: n cannot be negative, got {n}")
    array = _draw("randperm", _permutation, n, np.dtype(dtype), generator=generator)
    return _leaf("randperm", array, requires_grad, device)


def _multinomial(generator, weights, num_samples, replacement):
    w = np.asarray(weights, dtype=np.float64)
    rows = w.reshape(-1, w.shape[-1])
    ok = np.isfinite(rows) & (rows >= 0)
    if not ok.all():
        raise ValueError(f"multinomial: expected finite non-negative probabilities, got "
                         f"{_first_failing(rows, ok)}")
    totals = rows.sum(axis=-1)
    if (totals <= 0).any():
        raise ValueError(f"multinomial: the probabilities of row {int(np.argmax(totals <= 0))} "
                         f"sum to {totals[totals <= 0][0]}; expected a positive sum")
    if not len(rows):
        out = np.zeros((0, num_samples), dtype=np.int64)
    elif replacement:
        # each draw is the category whose interval of the cumulative sum holds it
        drawn = generator.random((len(rows), num_samples)) * totals[:, None]
        out = np.stack([np.searchsorted(c, d, side="right")
                        for c, d in zip(np.cumsum(rows, axis=-1), drawn)])
        # (a draw that rounds up to the total is the last category with weight)
        last = rows.shape[1] - 1 - np.argmax(rows[:, ::-1] > 0, axis=-1)
        out = np.minimum(out, last[:, None])
    else:
        # Exponential races: category i arrives at time E_i / w_i, and the order of
        # arrival is a draw without replacement in proportion to the weights (ties of
        # weight 0, after every other, in the order of their E_i)
        arrival = generator.standard_exponential(rows.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = rows / arrival
        out = np.lexsort((arrival, -score), axis=-1)[:, :num_samples]
    return out.astype(np.int64, copy=False).reshape(w.shape[:-1] + (num_samples,))


def multinomial(input: ArrayLike, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Category indices drawn in proportion to the weights in ``input`` (1-d, or 2-d: a
    draw per row), which need not sum to 1; int64, of shape (num_samples,) or
    (rows, num_samples).

    Without replacement each category is drawn at most once while any with weight is
    left (then, as torch, the ones of weight 0 follow).

    >>> g = cr.Generator().manual_seed(0)
    >>> cr.multinomial(cr.tensor([0.0, 10.0, 0.0]), 3, replacement=True, generator=g).tolist()
    [1, 1, 1]
    >>> sorted(cr.multinomial(cr.tensor([[1.0, 2.0, 3.0]]), 3, generator=g)[0].tolist())
    [0, 1, 2]
    """
    data, dtype = _data("multinomial", input)
    shape, replacement = shape_of(data), bool(replacement)
    if dtype.kind != "f":
        raise TypeError(f"multinomial: expected floating-point probabilities, got dtype "
                        f"{dtype}")
    if len(shape) not in (1, 2):
        raise ValueError(f"multinomial: expected 1-d or 2-d probabilities, got shape {shape}")
    num_samples = _int("multinomial", "num_samples", num_samples)
    if num_samples <= 0:
        raise ValueError(f"multinomial: expected num_samples > 0, got {num_samples}")
    if not replacement and num_samples > shape[-1]:
        raise ValueError(f"multinomial: cannot draw {num_samples} samples without "
                         f"replacement from {shape[-1]} categories")
    return Tensor._make(_draw("multinomial", _multinomial, data, num_samples, replacement,
                              generator=generator))


def _normal(generator, mean, std, shape, dtype):
    ok = np.asarray(std) >= 0  # (nan is not)
    if not ok.all():
        raise ValueError(f"normal: expected std >= 0, got std={_first_failing(std, ok)}")
    return (mean + std * generator.standard_normal(shape)).astype(dtype, copy=False)


def _is_number(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def normal(mean: ArrayLike, std: ArrayLike = 1.0, size: tuple[int, ...] | None = None, *,
           generator: Generator | None = None, dtype: DTypeLike = None,
           requires_grad: bool = False) -> Tensor:
    """Normal numbers of mean ``mean`` and standard deviation ``std``: Tensors (their
    broadcast shape, with a number for the other), or two numbers and a ``size`` tuple.

    >>> g = cr.Generator().manual_seed(0)
    >>> cr.normal(2.0, 3.0, (2, 3), generator=g).shape
    (2, 3)
    >>> cr.normal(cr.tensor([0.0, 100.0]), 0.0).tolist()
    [0.0, 100.0]

    A constant of differentiation: for a sample differentiable in mean and std, write
    ``mean + std * cr.randn(...)``.
    """
    if _is_number(mean) and _is_number(std):
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"normal: with a number mean and std, give size= as a tuple "
                            f"of ints, got size={size!r}")
        m, s, shape, floats = mean, std, _size("normal", (size,)), [np.dtype(np.float64)]
    else:
        if size is not None:
            raise TypeError("normal: size= is for a number mean and std; with a Tensor the "
                            "shape is the Tensor's")
        values, floats = [], []
        for what, x in (("mean", mean), ("std", std)):
            value, kind = (x, None) if _is_number(x) else _data("normal", x)
            if kind is not None and kind.kind != "f":
                raise TypeError(f"normal: expected a floating-point {what}, got dtype {kind}")
            values.append(value)
            floats += [kind] if kind is not None else []
        (m, s), shapes = values, (shape_of(values[0]), shape_of(values[1]))
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"normal: mean of shape {shapes[0]} and std of shape "
                             f"{shapes[1]} do not broadcast together") from None
    dtype = _float_dtype("normal", dtype, np.result_type(*floats))
    array = _draw("normal", _normal, m, s, shape, dtype, generator=generator)
    return _leaf("normal", array, requires_grad)


def _bernoulli(generator, p, shape, dtype):
    ok = (np.asarray(p) >= 0) & (np.asarray(p) <= 1)  # (nan is not)
    if not ok.all():
        raise ValueError(f"bernoulli: expected probabilities in [0, 1], got "
                         f"{_first_failing(p, ok)}")
    return (generator.random(shape) < p).astype(dtype)


def bernoulli(input: ArrayLike, p: float | None = None, *,
              generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (each entry its own probability), else 0: a Tensor
    of input's shape and dtype. With ``p``, every entry's probability is p.

    >>> g = cr.Generator().manual_seed(0)
    >>> cr.bernoulli(cr.tensor([0.0, 1.0, 0.0]), generator=g).tolist()
    [0.0, 1.0, 0.0]
    >>> cr.bernoulli(cr.zeros(3), p=1.0, generator=g).tolist()
    [1.0, 1.0, 1.0]
    """
    data, dtype = _data("bernoulli", input)
    if dtype.kind != "f":
        raise TypeError(f"bernoulli: expected floating-point probabilities, got dtype {dtype}")
    if p is not None and not 0 <= p <= 1:
        raise ValueError(f"bernoulli: expected p in [0, 1], got p={p}")
    probabilities = data if p is None else float(p)
    return Tensor._make(_draw("bernoulli", _bernoulli, probabilities, shape_of(data), dtype,
                              generator=generator))
