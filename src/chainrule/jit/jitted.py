"""``cr.jit``: a function traced once per signature, then run as a program of NumPy calls.

The first call with a given *signature* (the shapes and dtypes of the arrays and
tensors passed, the structure of lists, tuples and dicts, the values of everything
else) runs the function with traced arrays (``chainrule.jit.traced``) and keeps the
program it made. Later calls with the same signature run the program: the same NumPy
calls, without building a graph, looking up a rule or making a Python object per
operation.

*State* is what the function reads and changes besides its arguments: the arrays and
gradients of tensors (a model's parameters), and what an object holds that says so
through the state protocol (``state.py``): an optimizer's learning rates and buffers,
a module's train/eval mode, a user's own class. It is found as the trace touches it
(an object among the arguments, at once): each piece becomes an input of the program,
read anew at every call, and what the function left in it becomes an output, written
back after each run. A call whose state no longer matches the traced one (other
shapes, a momentum buffer that now exists, a model switched to eval mode, a parameter
or a layer replaced, a closed-over model bound anew: ``guards.py``) traces again.

Another library's arrays (torch's, Dask's, array-api-strict's) are traced as NumPy's
are, held by the engine's wrapper (``chainrule.backends.ForeignArray``); the library is
part of the signature, and a run wraps its arrays again, so that the program's NumPy
calls are made in that library (on Dask: a graph built per call, computed when asked).
"""

import functools
import inspect
import threading
import warnings
from collections.abc import Sequence
from typing import Any, Callable, overload

import numpy as np

from .. import arrays as xp
from .. import libraries
from ..modes import is_grad_enabled, is_jit_disabled, modes_switched
from . import guards, loops, native, randomness
from .errors import ValueTracingError, values_refused
from .state import ByIdentity, ObjectState, TensorState, carries_state, grad_key
from .codegen import MISS
from .entry import Entry, distinct
from .names import argument_names, variables
from .program import Program, compile_program
from .traced import Traced
from ..primitive import Box
from ..scalar.value import Value
from ..tensor import Tensor
from ..tensor_data import foreign
from ..transforms.pytrees import node_parts

__all__ = ["jit", "make_program", "Jitted"]


# For type checkers: jit(f) is a Jitted; jit() and jit(static_argnums=...) a decorator.
@overload
def jit(fun: Callable[..., Any], *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> "Jitted": ...
@overload
def jit(fun: None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> "Callable[..., Jitted]": ...


def jit(fun: Callable[..., Any] | None = None, *,
        static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> "Jitted | Callable[..., Jitted]":
    """Trace ``fun`` once per signature into a program of NumPy calls, and replay it.

    ``cr.jit(step)(model, opt, x, y)`` runs as ``step`` does, forward, backward and
    optimizer update alike, and gives the same numbers (to the last bit: the same NumPy
    calls in the same order). Arrays, tensors and Python numbers are inputs of the
    program; arguments in ``static_argnums``/``static_argnames``, and any other value,
    are part of the signature (a new value traces again).

    While tracing, the function sees traced arrays, so Python cannot branch on their
    values: ``if x.sum() > 0:`` raises, naming the line; use ``cr.where`` or make the
    value a static argument. Python side effects (print, appending to a list) happen
    while tracing only, and so does what Python computes without arrays: a value read
    from an object becomes a constant of the program (a module's own settings are
    checked at each call, and another value traces again). Random
    numbers are never frozen: chainrule's own draws (``nn.Dropout``, ``cr.random`` with a
    key passed in) are calls of the program, drawn again at each call as eagerly, and a
    draw the function makes from ``numpy.random``, a Generator it reaches or makes
    without a seed, Python's ``random`` or torch's global generator is refused while
    tracing (jit/randomness.py). Tensors, optimizers, modules'
    train/eval modes and any object with the state protocol (``_jit_state_`` and
    ``_jit_load_``: docs/conventions.md) are state, read at every call; where one is
    replaced rather than written (``model.weight = new``, ``seq[0] = layer``, a
    closed-over model bound anew), the call traces again (jit/guards.py). A Tensor the
    function returns comes back without a graph. Updates of a parameter
    (``opt.step()``) go into its array in place where they can, as PyTorch's
    optimizers and a hand-written step do.

    >>> w = cr.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = cr.optim.SGD([w], lr=0.1)
    >>> @cr.jit
    ... def step(x):
    ...     opt.zero_grad()
    ...     loss = ((w * x) ** 2).sum()
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> [round(step(np.array([1.0, 1.0])).item(), 4) for _ in range(3)]
    [5.0, 3.2, 2.048]
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    return Jitted(fun, static_argnums, static_argnames)


def make_program(fun: Callable[..., Any], *, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = ()
                 ) -> Callable[..., Program]:
    """``make_program(f)(*args)``: the program ``cr.jit`` traces ``f`` into for these
    arguments (running ``f`` once); ``print`` it for a numbered listing of the NumPy
    calls, forward, backward and update marked.

    >>> p = cr.make_program(lambda x: (cr.tanh(x) * 2.0).sum())(np.ones(3))
    >>> print(p)
    inputs: x (3,) float64
    # forward
    1  t1 = np.tanh(x)  # (3,) float64
    2  t2 = t1 * 2.0  # (3,) float64
    3  t3 = t2.sum()  # () float64
    outputs: t3 -> returned
    """
    jitted = Jitted(fun, static_argnums, static_argnames)
    return jitted.program


def _static_arguments(fun, nums, names):
    """The static arguments by position and by name, each completed from the other
    through fun's signature, as JAX's jit does: ``static_argnames="n"`` makes ``n``
    static passed by position too, and ``static_argnums=1`` the second parameter passed
    by name. (A function without a signature keeps them as given.)"""
    try:
        parameters = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY,
                                                           p.POSITIONAL_OR_KEYWORD)]
    nums = tuple(n + len(positional) if n < 0 and positional else n for n in nums)
    by_name = [p.name for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD]
    more_nums = tuple(positional.index(name) for name in names
                      if name in by_name and positional.index(name) not in nums)
    more_names = tuple(positional[n] for n in nums
                       if 0 <= n < len(positional) and positional[n] in by_name
                       and positional[n] not in names)
    return nums + more_nums, names + more_names


class Jitted:
    """A function made by ``cr.jit``: call it as the function; ``program(*args)`` is
    the program for those arguments; ``clear()`` forgets every traced program."""

    def __init__(self, fun, static_argnums=(), static_argnames=()):
        if not callable(fun):
            raise TypeError(f"cr.jit: expected a function, got {type(fun).__name__}")
        self.fun = fun
        self.static_argnums, self.static_argnames = _static_arguments(
            fun, (static_argnums,) if isinstance(static_argnums, int) else
            tuple(static_argnums),
            (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames))
        self._programs = {}  # signature -> [Entry] (several: state may differ)
        self._fast = None    # the last entry's fast_call
        # the name and docstring of fun, not its __dict__: a fun that wraps another
        # cr.jit (cr.vmap of one, through functools.wraps) carries that one's fun and
        # programs in its __dict__, which would replace this one's own
        functools.update_wrapper(self, fun, updated=())

    def __repr__(self):
        return f"<cr.jit of {getattr(self.fun, '__qualname__', self.fun)!r}>"

    def clear(self):
        """Forget the traced programs: the next call traces again."""
        self._programs.clear()
        self._fast = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if xp.recorder() is not None or (modes_switched[0] and is_jit_disabled()):
            return self.fun(*args, **kwargs)  # (inside another trace: part of its program;
            # under disable_jit: in Python)
        fast = self._fast  # the last program run, with its checks made one function
        if fast is not None:
            result = fast(args, kwargs)
            if result is not MISS:
                return result
        try:
            key, values, tensors = self._signature(args, kwargs)
        except _OnTracers:  # cr.vmap(cr.jit(f)), cr.grad(cr.jit(f)): f is traced by the
            return self.fun(*args, **kwargs)  # transform, as any function it calls
        for entry in self._programs.get(key, ()):
            done = entry.try_run(values, tensors, args, kwargs)
            if done is not None:
                self._fast = entry.fast_call(key)
                return done[0]
        entry, result = self._trace(args, kwargs, key)
        self._fast = entry.fast_call(key)
        return result

    def program(self, *args, **kwargs):
        """The program of ``fun`` for these arguments: traced now (running ``fun``
        once), as a ``chainrule.jit.program.Program``."""
        key = self._signature(args, kwargs)[0]
        entry, _ = self._trace(args, kwargs, key, keep=False)
        return entry.program

    def compile_native(self, *args: Any, **kwargs: Any) -> str:
        """Compile the program for these arguments now, rather than after its first
        1,000 replays (``chainrule.jit.native``: Numba, where installed): "compiled"
        where the compiled function serves the calls from now on, else why not.

        >>> step = cr.jit(cr.grad(lambda x: cr.sum(cr.sin(x) * x)))
        >>> status = step.compile_native(np.linspace(0.0, 1.0, 5))  # or why not
        >>> status == "compiled" or status.startswith("not compiled: ")
        True
        """
        self(*args, **kwargs)  # traced, if it was not
        entries = self._programs.get(self._signature(args, kwargs)[0]) or ()
        if not entries:
            return "not traced: the call ran the function itself"
        return native.compile_now(entries[-1].program)

    # --- the signature ----------------------------------------------------------------
    def _signature(self, args, kwargs):
        """(a hashable key, the arrays and numbers that are inputs, the tensors)."""
        values, tensors = [], []
        positional = tuple(_static(arg) if i in self.static_argnums else
                           _flatten(arg, values, tensors) for i, arg in enumerate(args))
        named = tuple((name, _static(kwargs[name]) if name in self.static_argnames else
                       _flatten(kwargs[name], values, tensors)) for name in sorted(kwargs))
        aliases = None
        if len(tensors) > 1 and len({id(t) for t in tensors}) < len(tensors):
            # the same tensor twice is one input: which places share one is in the key
            aliases = tuple(next(i for i, u in enumerate(tensors) if u is t)
                            for t in tensors)
        return (positional, named, aliases), values, tensors

    # --- tracing ----------------------------------------------------------------------
    def _trace(self, args, kwargs, key, keep=True):
        trace = loops.Recorder("forward" if is_grad_enabled() else "no_grad")
        session = _Session(trace)
        names = argument_names(self.fun, len(args))
        traced_args = [arg if i in self.static_argnums else
                       session.argument(arg, names[i])
                       for i, arg in enumerate(args)]
        traced_kwargs = {k: kwargs[k] if k in self.static_argnames else
                         session.argument(kwargs[k], k) for k in sorted(kwargs)}
        for name, value in variables(self.fun):
            session.name(value, name)
        watch = randomness.Watch(self.fun, args, kwargs)
        # over another library's arrays, the program is what a transform over them
        # runs: the transforms inside it keep that library's results wrapped
        library = next((v._lib for v in trace.values.values() if foreign(v)), None)
        with _tracing(trace, session), _over(library), watch:
            try:
                session.adopt_arguments()
                result = self.fun(*traced_args, **traced_kwargs)
                watch.refuse_hidden_draws(trace.drawn, getattr(self.fun, "__name__", "f"))
            except BaseException as error:
                session.restore()
                trace.end()
                if isinstance(error, TypeError) and _in_the_scalar_engine(error):
                    raise values_refused() from error
                raise
        entry = session.finish(result)
        trace.end()
        entry.guards = guards.find(self.fun, args, kwargs, *session.reached())
        if keep:
            entries = self._programs.setdefault(key, [])
            entries.append(entry)
            if len(entries) == _MANY_TRACES:
                warnings.warn(f"cr.jit: {self!r} has been traced {len(entries)} times for "
                              f"arguments of the same shapes: the state it reads (a "
                              f"tensor it closes over, a module's parameters, an "
                              f"optimizer) has been replaced or has changed shape or kind "
                              f"each time, or a NumPy array it closes over was written "
                              f"into, so each call traces again (pass such an array as "
                              f"an argument)", stacklevel=3)
            if len(entries) > _MANY_TRACES:  # (the oldest let go: memory stays bounded)
                del entries[0]
        return entry, entry.rebuild(entry.traced_outputs)


_MANY_TRACES = 8  # traces of one signature before a warning says so


class _over:
    """Count a trace over ``library``'s arrays as a transform over them running
    (``Library.tracing``); nothing for NumPy's (None)."""

    def __init__(self, library):
        self.library = library

    def __enter__(self):
        if self.library is not None:
            self.library.tracing += 1

    def __exit__(self, *exc):
        if self.library is not None:
            self.library.tracing -= 1
        return False


# ---------------------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------------------

def _flatten(x, values, tensors):
    """The structure of an argument, for the key; its arrays and numbers go to values,
    its tensors to tensors."""
    kind = type(x)
    if kind is np.ndarray:
        values.append(x)
        return ("a", x.shape, x.dtype)
    if kind is float or kind is int or kind is complex:
        values.append(x)
        return kind
    if isinstance(x, Tensor):
        tensors.append(x)
        data = x._data
        if type(data) is not np.ndarray and foreign(data):  # over torch, Dask...
            return ("T", data.shape, data.dtype, x.requires_grad, grad_key(x._grad),
                    data._lib)
        return ("T", data.shape, data.dtype, x.requires_grad, grad_key(x._grad))
    if isinstance(x, np.generic):
        values.append(x)
        return ("s", x.dtype)
    if kind is tuple or kind is list:
        return (kind, tuple([_flatten(item, values, tensors) for item in x]))
    if kind is dict:
        return (dict, tuple([(k, _flatten(x[k], values, tensors)) for k in x]))
    node = node_parts(x)  # a named tuple, a registered class (an optimizer's state)
    if node is not None:
        children, aux, _ = node
        return ("node", kind, _static(aux),
                tuple([_flatten(child, values, tensors) for child in children]))
    if isinstance(x, Box) and not isinstance(x, Value):  # a transform's tracer: no
        raise _OnTracers                                   # program can stand for it
    if hasattr(x, "__dlpack__") or hasattr(x, "__array_function__"):
        library = _library_of(x)
        if library is not None:  # torch's, Dask's: the program runs in that library
            for value in values:
                if foreign(value) and value._lib is not library:
                    raise libraries.mixed_libraries(value._lib, library, "cr.jit's arguments")
            values.append(library.adopt(x))
            return ("f", library, tuple(x.shape), x.dtype)
    return _static(x)


class _OnTracers(Exception):
    """An argument holds a transform's tracer (cr.vmap's batch, cr.grad's value)."""


def _library_of(x):
    """The ``chainrule.backends.Library`` of an array of another library, or None."""
    return libraries.library_of(x)


def _static(x):
    """A static value in a key: itself if it can be hashed, else the object (by
    identity: the key keeps it alive, so its id stays its own)."""
    try:
        hash(x)
        return ("=", type(x), x)
    except TypeError:
        return ("id", ByIdentity(x))


def _in_the_scalar_engine(error):
    """Whether ``error`` was raised in the scalar engine's code (a Value given a traced
    number) and is not the error that says so already."""
    if isinstance(error, ValueTracingError):
        return False
    tb = error.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith(_SCALAR_ENGINE):
            return True
        tb = tb.tb_next
    return False


_SCALAR_ENGINE = ("chainrule.scalar.", "chainrule.nn.scalar", "chainrule.compat.micrograd.")


# ---------------------------------------------------------------------------------------
# A trace in progress: arguments, state found on the way, and the end
# ---------------------------------------------------------------------------------------

class _tracing:
    """Record in this thread (``arrays.recorders_open`` tells the hot paths of every
    thread to look at their own recorder while any trace is open)."""

    def __init__(self, trace, session):
        self.trace, self.session = trace, session

    def __enter__(self):
        self.previous = xp.set_recorder(self.trace)
        self.trace.adopt = self.session.adopt
        with _open_lock:
            xp.recorders_open[0] += 1

    def __exit__(self, *exc):
        xp.set_recorder(self.previous)
        with _open_lock:
            xp.recorders_open[0] -= 1
        return False


_open_lock = threading.Lock()


class _Session:
    """What a trace found: the arguments' leaves and the state it adopted."""

    def __init__(self, trace):
        self.trace = trace
        self.names = {}       # slot -> a reader's name
        self.states = []      # TensorState / ObjectState, in the order adopted
        self.adopted = {}     # id(object) -> its state record
        self.tensor_arguments = []  # (tensor, name): adopted first, in argument order
        self.hints = {}       # id(tensor) -> its listing name (model.layers.0.weight)
        self.object_arguments = []  # arguments that carry state: adopted after tensors

    def argument(self, arg, name):
        """The argument with traced values for its arrays and numbers (in the order
        ``_flatten`` lists them); tensors are adopted after all of them."""
        kind = type(arg)
        if kind is np.ndarray or isinstance(arg, np.generic) or kind in (float, int,
                                                                           complex):
            traced = self.trace.input(arg)
            self.names[traced._slot] = name
            return traced
        if isinstance(arg, Tensor):
            self.tensor_arguments.append((arg, name))
            self.name(arg, name)
            return arg
        if isinstance(arg, Value) or _holds_values(arg):
            raise values_refused()
        if kind is tuple or kind is list:
            return kind(self.argument(item, f"{name}[{i}]") for i, item in enumerate(arg))
        if kind is dict:
            return {k: self.argument(v, f"{name}[{k!r}]") for k, v in arg.items()}
        node = node_parts(arg)
        if node is not None:
            children, _, rebuild = node
            return rebuild([self.argument(child, f"{name}.{i}")
                            for i, child in enumerate(children)])
        if hasattr(arg, "__dlpack__") or hasattr(arg, "__array_function__"):
            library = _library_of(arg)
            if library is not None:
                traced = self.trace.input(library.adopt(arg))
                self.names[traced._slot] = name
                return traced
        self.name(arg, name)
        if carries_state(arg):
            self.object_arguments.append(arg)
        return arg

    def name(self, value, name):
        """Name the tensors ``value`` is or holds, where nothing named them before: a
        tensor ``name``, a module's parameters ``name.layers.0.weight``, a list's
        ``name[0]``. Arguments are named first, then the variables the function reads,
        then the modules it reaches (their parameters by ``named_parameters()`` alone)."""
        hints = self.hints
        if isinstance(value, Tensor):
            hints.setdefault(id(value), name)
        elif type(value) in (list, tuple):
            for i, item in enumerate(value):
                if isinstance(item, Tensor):
                    hints.setdefault(id(item), f"{name}[{i}]")
        elif type(value) is dict:
            for k, item in value.items():
                if isinstance(item, Tensor):
                    hints.setdefault(id(item), f"{name}[{k!r}]")
        elif not isinstance(value, type) and callable(getattr(value, "named_parameters",
                                                              None)):  # a module
            prefix = f"{name}." if name else ""
            for pname, p in value.named_parameters():
                hints.setdefault(id(p), prefix + pname)

    def adopt_arguments(self):
        for tensor, _ in self.tensor_arguments:
            self.adopt(tensor)
        for obj in self.object_arguments:
            self.adopt(obj)

    def adopt(self, obj):
        """Make what a tensor (or an object that carries state) holds inputs of the
        program, once."""
        if id(obj) in self.adopted:
            return
        if isinstance(obj, Tensor):
            data = obj._data
            if type(data) is not np.ndarray and not foreign(data):
                return  # made while tracing: a value of the program, not state
            state = TensorState(obj, self.trace)
        elif carries_state(obj):
            if _holds_values(obj):  # a scalar model, called
                raise values_refused()
            self.adopted[id(obj)] = None  # (its tensors are adopted while it is read)
            self.name(obj, "")  # a module reached: its parameters' own names
            state = ObjectState(obj, self.trace, self.adopt)
        elif isinstance(obj, Value):  # (a scalar model's zero_grad)
            raise values_refused()
        else:
            return
        self.adopted[id(obj)] = state
        self.states.append(state)

    def _name_states(self):
        """The listing's names of the state's inputs: a tensor by the name found for it
        (``tensor0``, ``tensor1``... where none was), an object's by its keys."""
        unnamed = 0
        for state in self.states:
            if type(state) is TensorState:
                name = self.hints.get(id(state.tensor))
                if name is None:
                    name, unnamed = f"tensor{unnamed}", unnamed + 1
                state.named(name)
            self.names.update(state.names)

    def reached(self):
        """(id -> object, ids) of the state found on the way, which a call checks is
        still where the function finds it (``guards.py``); the second, the objects
        that check what they hold themselves (the state protocol's)."""
        targets, covering = {}, set()
        for state in self.states:
            obj = state.tensor if type(state) is TensorState else state.obj
            targets[id(obj)] = obj
            if type(state) is ObjectState:
                covering.add(id(obj))
        return targets, covering

    def restore(self):
        """After a failed trace: real arrays back where traced ones were left."""
        for state in self.states:
            state.restore()

    def finish(self, result):
        self._name_states()
        outputs = []
        template = _outputs(result, outputs, self.trace)
        writes = []
        for state in self.states:
            writes.extend((state, what, where) for what, where in state.writes(outputs))
        for state in self.states:
            state.restore()
        output_slots = [t._slot for t in outputs]
        replaces = {}  # a new value of state -> the input it replaces (updated in place)
        for state, what, where in writes:
            source = state.source(what)
            if source is not None and type(where) is int:
                replaces.setdefault(output_slots[where], source)
        where_to = {}  # output slot -> where it goes, for the listing
        for i in range(len(outputs)):
            if any(type(t) is tuple and t[0] in ("out", "tensor") and t[1] == i
                   for t in _leaves_of(template)):
                where_to.setdefault(output_slots[i], []).append("returned")
        for state, what, where in writes:
            if type(where) is int:
                where_to.setdefault(output_slots[where], []).append(state.describe(what))
        parameters = [state.data_slot for state in self.states
                      if type(state) is TensorState and state.tensor.requires_grad]
        program = compile_program(self.trace, output_slots, self.names, replaces,
                                  {k: ", ".join(v) for k, v in where_to.items()},
                                  parameters)
        explicit = [self.adopted[id(t)]
                    for t in distinct([t for t, _ in self.tensor_arguments])]
        return Entry(program, template, outputs, self.states, explicit, writes)


def _holds_values(obj):
    """Whether ``obj`` is a module of the scalar engine (its parameters are Values)."""
    named = getattr(obj, "named_parameters", None)
    return (not isinstance(obj, type) and callable(named) and
            any(isinstance(p, Value) for _, p in named()))


def _outputs(x, outputs, trace):
    """The result's structure, with ("out", k) where its k-th traced value goes."""
    kind = type(x)
    if isinstance(x, Value):  # (computed in Python while tracing: a replay would not)
        raise values_refused()
    if kind is Traced:
        traced = trace.lookup(x)
        if traced is not None:
            outputs.append(traced)
            return ("out", len(outputs) - 1)
        return ("const", x)
    if isinstance(x, Tensor):
        traced = trace.lookup(x._data)
        if traced is not None:
            outputs.append(traced)
            return ("tensor", len(outputs) - 1)
        return ("const", x)
    if kind is tuple or kind is list:
        return (kind, [_outputs(item, outputs, trace) for item in x])
    if kind is dict:
        return (dict, {k: _outputs(v, outputs, trace) for k, v in x.items()})
    node = node_parts(x)
    if node is not None:
        children, _, rebuild = node
        return ("node", (rebuild, [_outputs(child, outputs, trace) for child in children]))
    return ("const", x)


def _leaves_of(template):
    tag, body = template[0], template[1]
    if tag in ("out", "tensor", "const"):
        return [template]
    items = body.values() if tag is dict else body[1] if tag == "node" else body
    return [leaf for item in items for leaf in _leaves_of(item)]
