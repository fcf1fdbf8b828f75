"""Function transforms in the style of JAX: grad, value_and_grad, vjp and jvp (the
Jacobians and Hessians built on them are in jacobians.py, the linear operators in
operators.py).

They take a function and give a function. Inputs may be Python floats, Values, NumPy
arrays or Tensors, and tuples, lists and dicts of those, nested (pytrees); results come
back in the kind that went in (a float for a float, an ndarray for an ndarray).

One mechanism serves every transform, nested in any order and to any depth: each call
draws a fresh *level* and wraps its inputs in tracers of that level (``ReverseTracer``
for grad, vjp and jacrev, in ``reverse.py``; ``JVPTracer`` for jvp and jacfwd, in
``forward.py``). An operation is handled by the highest level among its operands, which
runs it on what its tracers carry, so an outer transform's tracers flow through an
inner one untouched. A transform's result is what its own tracers carried: where that
is an outer transform's tracer (the inner function closed over an outer variable, or
its point was an outer value), the result stays traced, and the outer transform
differentiates through it like through any other value.
"""

import functools
from numbers import Real
from typing import Any, Callable

import numpy as np

from .. import libraries
from .forward import JVPTracer, tangent_in_dtype
from ..modes import enable_grad
from ..primitive import Box, new_level, _foreign_array
from ..arrays import ARRAYS, as_array, to_float
from ..primitive import raw as _innermost
from .pytrees import (LEAF, PyTree, leaves_up_to, tree_flatten, tree_map,
                      tree_unflatten)
from .reverse import ReverseTracer, gradients
from ..tensor import Tensor
from ..tensor_data import foreign
from .tracer import Tracer, derivative_levels
from ..scalar.value import Value

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "tree_flatten", "tree_unflatten"]

# ---------------------------------------------------------------------------------------
# Inputs in, results out, in the kind that went in
# ---------------------------------------------------------------------------------------

_RESULTS = (Real, complex, np.ndarray, np.generic, Box)


def _checked_output(out, name):
    """The function's output, if every leaf is a number, an array or a traced value.
    None inside a container is an empty subtree; None alone is refused: a function that
    returns nothing is almost always one that lacks its ``return``."""
    if out is None:
        raise TypeError(f"{name}: the function returned None (a missing `return`?); "
                        f"expected numbers, arrays or Tensors (or tuples, lists and dicts "
                        f"of them)")
    library = None
    for leaf in tree_flatten(out)[0]:
        if isinstance(leaf, np.ndarray) and leaf.dtype == object:
            raise TypeError(f"{name}: the function returned an array of Python objects "
                            f"(Values inside a NumPy array?); build it with cr.stack, or "
                            f"use Tensors")
        if not (isinstance(leaf, _RESULTS) or type(leaf) in ARRAYS) or \
                isinstance(leaf, (bool, np.bool_)):  # (ARRAYS: cr.jit's traced arrays)
            library = library or _library(leaf)  # (torch's, Dask's: computed from
            if library is not None:                 # closed-over arrays alone)
                continue
            raise TypeError(f"{name}: the function returned {type(leaf).__name__} "
                            f"{leaf!r:.60}; expected numbers, arrays or Tensors "
                            f"(or tuples, lists and dicts of them)")
    return out if library is None else tree_map(library.adopt, out)


def _kind(x):
    """What kind of input x is, for the kind of the results: value, tensor, array or
    float (an outer transform's tracer is the kind of what it stands for)."""
    if isinstance(x, Tracer):
        return _kind(x._contents())
    if isinstance(x, Value):
        return "value"
    if isinstance(x, Tensor):
        return "tensor"
    if isinstance(x, np.ndarray) or (isinstance(x, (list, tuple)) and x):
        return "array"
    if _narrow_scalar(x):  # (np.float32: its results keep its dtype, as 0-d arrays)
        return "array"
    if type(x) in ARRAYS:  # traced by cr.jit: a float argument, or an array (of
        if x.is_scalar:    # another library: the results are that library's, as eagerly)
            return "array" if _narrow_scalar(x._value) else "float"
        library = getattr(x, "library", None)
        return "array" if library is None else library
    if isinstance(x, (Real, complex)):
        return "float"
    library = libraries.library_of(x)  # torch, CuPy, Dask...: the kind is its Library
    if library is not None:
        return library
    raise TypeError(f"expected a float, Value, NumPy array or Tensor to differentiate, "
                    f"got {type(x).__name__} {x!r}")


def _narrow_scalar(x):
    """Whether x is a NumPy scalar of a float or complex dtype Python's numbers do not
    hold (np.float32, np.complex64): a derivative at it keeps that dtype."""
    return isinstance(x, (np.floating, np.complexfloating)) and \
        not isinstance(x, (float, complex))


def _library(x):
    """The Library of an array of another library (torch, Dask) met outside a
    transform's inputs, or None; NumPy's values are told apart without an import."""
    if not _foreign_array(x):
        return None
    return libraries.library_of(x)


def _kind_of_results(kinds):
    for kind in kinds:
        if type(kind) is not str:  # an array of another library: its Library
            return libraries.one_library(kinds, "a transform's inputs")
    return ("tensor" if "tensor" in kinds else "value" if "value" in kinds
            else "array" if "array" in kinds else "float")


def _point(x):
    """What a tracer at input x carries: x itself if it is part of a graph (a Value, a
    Tensor that requires grad, an outer transform's tracer), else its numbers as a
    float array (0-d for a float: a float then meets arrays as NumPy would)."""
    if isinstance(x, (Tracer, Value)) or (isinstance(x, Tensor) and x.requires_grad):
        dtype = x.dtype if not isinstance(x, Value) else np.dtype(np.float64)
        if dtype.kind not in "fc":
            raise TypeError(f"cannot differentiate with respect to values of dtype "
                            f"{dtype}; use floats")
        return x
    if isinstance(x, Tensor) and x.dtype.kind not in "fc":
        raise TypeError(f"cannot differentiate with respect to a tensor of dtype "
                        f"{x.dtype}; make it a float tensor (x.astype(np.float64))")
    array = x._data if isinstance(x, Tensor) else as_array(x)
    if array.dtype.kind not in "fc":
        array = array.astype(np.float64)
    return array


def _batch_of_arrays(batch):
    """An outer vmap's batch of results whose numbers are a Tensor out of any graph (the
    function computed with a Tensor it closed over, a layer's weights) as the same batch
    of the Tensor's array: the kind the result has without vmap, where the inputs were
    NumPy's. Anything else inside the batch stays as it is."""
    inner = batch._contents()
    if isinstance(inner, Tensor) and not inner.requires_grad:
        return type(batch)(inner._data, batch._level)
    if isinstance(inner, Box) and inner._batched:  # (a vmap of a vmap)
        unwrapped = _batch_of_arrays(inner)
        if unwrapped is not inner:
            return type(batch)(unwrapped, batch._level)
    return batch


def _in_kind(x, kind, like=None, lead=()):
    """A result (a value, a gradient, a tangent) in the kind of the inputs. One that is
    still traced (an outer transform's tracer, a Tensor or Value in a graph) stays as
    it is: whoever traces it differentiates it further. None stands for zeros (the
    result does not depend on the input ``like``), behind any ``lead`` batch axes."""
    if x is None:
        x = np.zeros(tuple(lead) + np.shape(_innermost(like)), dtype=_float_dtype(like))
    if isinstance(x, Tensor) and not x.requires_grad:
        x = x._data
    if isinstance(x, Box):
        if x._batched and type(kind) is str and kind != "tensor":
            return _batch_of_arrays(x)
        return x
    if isinstance(x, np.ndarray) and x.dtype == object:  # never handed back as numbers
        raise TypeError("a transform's result is an array of Python objects (Values among "
                        "NumPy arrays?), which carries no derivative; compute with NumPy "
                        "arrays or Tensors, or with Values alone")
    if kind != "tensor" and foreign(x):  # (from another library's data the function
        # closed over: in that library, never NumPy; wrapped inside a transform over it)
        return x if x._lib.tracing else x._value
    if kind == "float":  # (a batch of them, with lead axes, is an array)
        if lead or np.ndim(x) != 0:
            return as_array(x)
        return _number(x)
    if kind == "tensor":
        return Tensor._make(as_array(x))
    if kind == "value" and np.size(x) == 1 and not lead:
        return Value(float(x))
    if type(kind) is not str:  # another library's: unwrapped (chainrule.backends)
        return kind.keeps(kind.result(x)) if kind.tracing else kind.result(x)
    return as_array(x)


def _traced(f, args, kwargs, kind):
    """f(*args, **kwargs) in a transform whose results are of ``kind``: over another
    library's arrays, the results of transforms inside it stay wrapped (``Library.keeps``)."""
    if type(kind) is str:
        return f(*args, **kwargs)
    kind.tracing += 1
    try:
        return f(*args, **kwargs)
    finally:
        kind.tracing -= 1


def _number(x):
    """float(x), or complex(x) where x is complex (under cr.jit, the conversion is a call
    of the program, as to_float's is: each replay gives a Python number)."""
    if isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c":
        if type(x) is np.ndarray or type(x) not in ARRAYS:
            return complex(x)
        return x if foreign(x._value) else x._convert(complex)
    return to_float(x)


def _float_dtype(x):
    dtype = np.result_type(_innermost(x))
    return dtype if dtype.kind in "fc" else np.float64


def _argnums(argnums, nargs, name):
    if type(argnums) is int and -nargs <= argnums < nargs:  # one argument, in range:
        return (argnums % nargs,), False                  # what the checks below give
    if isinstance(argnums, np.integer):  # (a NumPy integer: one argument, as an int)
        argnums = int(argnums)
    many = not isinstance(argnums, int)
    nums = tuple(argnums) if many else (argnums,)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"{name}: argnums {argnums} is out of range for a function "
                             f"called with {nargs} positional arguments")
    nums = tuple(n % nargs for n in nums)
    if len(set(nums)) != len(nums):
        raise ValueError(f"{name}: argnums {argnums} names an argument twice; each "
                         f"argument can be differentiated once (as in JAX)")
    return nums, many


def _dtype_of(leaf):
    inner = _innermost(leaf)
    dtype = getattr(inner, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype):  # torch's, CuPy's...
        return libraries.library_of(inner).numpy_dtype(dtype)
    return np.result_type(inner)


def _check_dtypes(leaves, holomorphic, name, what, real_unless_holomorphic=True):
    """JAX's checks of a transform's inputs or outputs (``what``): complex ones with
    ``holomorphic=True``; else real ones, where the transform's derivative of a complex
    value would need a convention JAX leaves to vjp and jvp."""
    for leaf in leaves:
        dtype = _dtype_of(leaf)
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires {what}s with complex "
                            f"dtype, but got {dtype}")
        if not holomorphic and real_unless_holomorphic and dtype.kind == "c":
            use = "vjp" if what == "output" else "jvp"
            raise TypeError(f"{name} requires real-valued {what}s, but got {dtype}; for "
                            f"holomorphic differentiation, pass holomorphic=True; for a "
                            f"non-holomorphic function with complex {what}s, use "
                            f"cr.{use} directly")


def _refuse_escaped(result, level, name):
    """Raise where a result of the transform at ``level`` still holds that transform's
    own tracer: a value it differentiates reached the result outside its bookkeeping (a
    custom_jvp or custom_vjp function, or its rule, closing over it), and the number
    would be wrong."""
    if isinstance(result, Box) and level in derivative_levels(result):
        raise TypeError(
            f"{name}: the result still holds a value that {name} differentiates: a "
            f"function it calls closes over that value where its derivative cannot be "
            f"taken (a custom_jvp or custom_vjp function, or its rule, closing over it), "
            f"so the number would be wrong; pass that value to the function as an "
            f"argument")


class _ReverseRun:
    """One run of f with the chosen inputs traced at a level of its own (reverse mode),
    ready for any number of backward passes."""

    def __init__(self, f, args, kwargs, argnums, has_aux, name, holomorphic=False):
        self.name = name
        self.argnums, self.many = _argnums(argnums, len(args), name)
        self.level = new_level()
        self.input_trees, self.kinds, self.starts = [], [], []
        new_args = list(args)
        for n in self.argnums:
            leaves, treedef = tree_flatten(args[n])
            if holomorphic:
                _check_dtypes(leaves, True, name, "input")
            starts = []
            for j, leaf in enumerate(leaves):
                kind = _kind(leaf)
                if type(kind) is not str:  # another library's array: wrapped
                    leaf = leaves[j] = kind.adopt(leaf)
                self.kinds.append(kind)
                starts.append(ReverseTracer.start(_point(leaf), self.level))
            self.input_trees.append((leaves, treedef))
            self.starts.extend(starts)
            new_args[n] = tree_unflatten(treedef, starts)
        self.inputs = [leaf for leaves, _ in self.input_trees for leaf in leaves]
        self.out_kind = _kind_of_results(self.kinds)
        if type(self.out_kind) is not str:  # the other arguments' arrays wrapped too
            new_args, kwargs = self.out_kind.adopt_tree((new_args, kwargs))
        with enable_grad():  # (what a tracer carries may be a Tensor in the user's graph)
            out = _traced(f, new_args, kwargs, self.out_kind)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(f"{name}(..., has_aux=True): the function must return a "
                                f"pair (output, aux), got {type(out).__name__}")
            out, self.aux = out
        else:
            self.aux = None
        self.out = _checked_output(out, name)
        self.out_leaves, self.out_def = tree_flatten(self.out)

    def _mine(self, leaf):
        return isinstance(leaf, ReverseTracer) and leaf._level == self.level

    def output(self, aux=False):
        """The output (or the aux) in the inputs' kind: what this level's tracers carry."""
        if not aux and self.out_def is LEAF:  # tree_map's result on a tree of one leaf
            out = self._output_leaf(self.out)
        else:
            out = tree_map(self._output_leaf, self.aux if aux else self.out)
        if aux or type(self.out_kind) is str:
            return out
        return tree_map(self.out_kind.result, out)  # (a constant: in the inputs' library)

    def _output_leaf(self, leaf):
        if self._mine(leaf):
            _refuse_escaped(leaf._data, self.level, self.name)
            return _in_kind(leaf._data, self.out_kind)
        if isinstance(leaf, Box) or foreign(leaf):  # (foreign: from closed-over torch...)
            return _in_kind(leaf, self.out_kind)
        return leaf  # (a constant, or anything an aux holds)

    def pullback(self, cotangents, batch_shape=(), seeded=False):
        """Gradients for every input leaf (None where there is no path), given one
        cotangent per output leaf (None for an output to leave out). With
        ``batch_shape``, each cotangent is a batch of them, pulled back in one pass.
        ``seeded``: each cotangent is already what ``_seed`` makes of it (a NumPy array
        of its output's ``_float_dtype``, which ``_seed`` hands back as it is)."""
        roots, seeds = [], []
        for leaf, cot in zip(self.out_leaves, cotangents):
            if cot is not None and self._mine(leaf):
                roots.append(leaf)
                seeds.append(cot if seeded else _seed(leaf, cot))
        if not roots:
            return [None] * len(self.starts)
        return gradients(roots, seeds, self.starts, batch_shape)

    def input_results(self, grads, batch_shape=()):
        """Per argnum, the gradients rebuilt into the input's structure and kind."""
        out, i = [], 0
        for leaves, treedef in self.input_trees:
            results = []
            for leaf in leaves:
                kind = self.kinds[i]
                if kind == "float" and batch_shape and type(self.out_kind) is not str:
                    kind = self.out_kind  # (a float's block of a Jacobian: an array)
                g = grads[i]
                if kind == "array" and type(g) is np.ndarray and not g.dtype == object:
                    results.append(g)  # (what _in_kind gives: as_array(g) is g)
                else:
                    _refuse_escaped(g, self.level, self.name)
                    results.append(_in_kind(g, kind, leaf, batch_shape))
                i += 1
            out.append(tree_unflatten(treedef, results))
        return tuple(out) if self.many else out[0]


def _seed(leaf, cot):
    """A cotangent as the backward pass takes it: an array of the output's dtype, or,
    where it is traced (a variable of an enclosing transform), the traced value: the
    gradients are then differentiable with respect to it."""
    if isinstance(cot, Tensor) and not cot.requires_grad:
        cot = cot._data
    if isinstance(cot, Box):
        return cot
    if type(cot) is not np.ndarray and type(cot) is not float and _library(cot):
        cot = _library(cot).adopt(cot)  # (torch's, Dask's: never turned into NumPy's)
    dtype = _float_dtype(leaf)
    if dtype.kind == "f" and np.iscomplexobj(cot):  # (a real output's cotangent is real,
        # as JAX requires: its imaginary part would be dropped without a word)
        raise TypeError(f"vjp: the cotangent {cot!r:.40} is complex, but the output it "
                        f"stands for is real ({dtype}); pass a real cotangent (its real "
                        f"part)")
    return as_array(cot, dtype=dtype)


# ---------------------------------------------------------------------------------------
# Reverse mode: grad, value_and_grad, vjp
# ---------------------------------------------------------------------------------------

def _named_after(f):
    """A transform's function takes f's name and signature (``inspect.signature``), so
    that what reads them (cr.make_program's listing, help()) sees f's arguments."""
    def name(function):
        return functools.update_wrapper(function, f, assigned=("__name__", "__qualname__"),
                                        updated=()) if hasattr(f, "__name__") else function
    return name


def value_and_grad(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """``f`` and its gradient in one call: ``(value, grad)``, or ``((value, aux), grad)``.

    ``f`` must return a real scalar (complex inputs are fine: docs/conventions.md);
    with ``holomorphic=True``, a complex scalar of complex inputs, and the gradient is
    the complex derivative f'(z). ``argnums`` picks the argument(s) to differentiate
    (an int, or a tuple: then the gradient is a tuple).

    >>> cr.value_and_grad(lambda x: x ** 3)(2.0)      # x**3 and 3x**2 at x = 2
    (8.0, 12.0)
    >>> cr.value_and_grad(lambda z: z ** 3, holomorphic=True)(2j)    # 3 z**2
    ((-0-8j), (-12+0j))
    """
    @_named_after(f)
    def value_and_grad_f(*args, **kwargs):
        trace = _ReverseRun(f, args, kwargs, argnums, has_aux, "grad", holomorphic)
        if trace.out_def is not LEAF and len(trace.out_leaves) < 2:  # (JAX refuses too)
            raise TypeError(f"grad: the function must return a scalar, but it returned a "
                            f"{type(trace.out).__name__}; to return more than the value, "
                            f"pass has_aux=True and return (value, aux)")
        inner = _innermost(trace.out_leaves[0]) if len(trace.out_leaves) == 1 else None
        if inner is None or np.size(inner) != 1:
            shape = [np.shape(_innermost(leaf)) for leaf in trace.out_leaves]
            raise TypeError(f"grad: the function must return a scalar, but it returned "
                            f"{'shapes ' if len(shape) != 1 else 'shape '}"
                            f"{shape if len(shape) != 1 else shape[0]}; use cr.jacobian for "
                            f"the derivatives of every output, or reduce it with .sum()")
        leaf = trace.out_leaves[0]
        _check_dtypes([leaf], holomorphic, "grad", "output")
        seed = np.empty(np.shape(inner), _float_dtype(leaf))
        seed.fill(1)  # (np.ones' own two steps, without its Python frame)
        grads = trace.input_results(trace.pullback([seed], seeded=True))
        value = trace.output()
        if has_aux:
            return (value, trace.output(aux=True)), grads
        return value, grads

    return value_and_grad_f


def grad(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function: ``grad(f)(x)`` has the shape of x.

    ``argnums`` picks the argument(s) to differentiate (an int, or a tuple: then a
    tuple of gradients); with ``has_aux=True``, f returns ``(output, aux)`` and the
    result is ``(gradient, aux)``. Floats give floats, arrays arrays, Tensors Tensors.
    The output must be real; of complex inputs, the gradient is JAX's (for
    |z|**2, 2 conj(z): docs/conventions.md). ``holomorphic=True`` differentiates a
    complex output of complex inputs: the gradient is then f'(z).

    >>> cr.grad(lambda x: x * x + 3 * x)(2.0)       # 2x + 3 at x = 2
    7.0
    >>> cr.grad(lambda z: cr.real(z * cr.conj(z)))(3 + 4j)   # |z|**2: 2 conj(z), as JAX
    (6-8j)
    >>> cr.grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
    array([2., 4.])
    >>> cr.grad(lambda x, y: x * y, argnums=1)(2.0, 5.0)     # d/dy (x y) = x
    2.0
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux, holomorphic)

    @_named_after(f)
    def grad_f(*args, **kwargs):
        (value_aux), grads = value_and_grad_f(*args, **kwargs)
        return (grads, value_aux[1]) if has_aux else grads

    return grad_f


def vjp(f: Callable[..., Any], *primals: PyTree, has_aux: bool = False) -> tuple[Any, ...]:
    """``(out, vjp_fn)``: f at the primals, and the function that takes a cotangent
    (shaped like out) to the vector-Jacobian products, a tuple with one entry per primal.

    >>> out, f_vjp = cr.vjp(lambda x, y: x * y, 2.0, 3.0)
    >>> out, f_vjp(1.0)                            # (d/dx, d/dy) times the cotangent 1
    (6.0, (3.0, 2.0))
    """
    trace = _ReverseRun(f, primals, {}, tuple(range(len(primals))), has_aux, "vjp")

    def vjp_fn(cotangent):
        leaves = leaves_up_to(trace.out_def, cotangent, "vjp: the output and the cotangent")
        if len(leaves) != len(trace.out_leaves):
            raise ValueError(f"vjp: the cotangent has {len(leaves)} leaves, but the "
                             f"output has {len(trace.out_leaves)}")
        for leaf, out in zip(leaves, trace.out_leaves):
            if np.shape(_innermost(leaf)) != np.shape(_innermost(out)):
                raise ValueError(f"vjp: a cotangent of shape {np.shape(_innermost(leaf))} "
                                 f"for an output of shape {np.shape(_innermost(out))}")
        if type(trace.out_kind) is not str:  # another library's arrays: wrapped
            leaves = [trace.out_kind.adopt_cotangent(leaf) for leaf in leaves]
        # a traced cotangent (an enclosing transform's variable) gives gradients that
        # are traced too: a VJP is differentiable in its cotangent like anything else
        return trace.input_results(trace.pullback(leaves))

    out = trace.output()
    return (out, vjp_fn, trace.output(aux=True)) if has_aux else (out, vjp_fn)


# ---------------------------------------------------------------------------------------
# Forward mode: jvp
# ---------------------------------------------------------------------------------------

def jvp(f: Callable[..., Any], primals: tuple[PyTree, ...] | list[PyTree],
        tangents: tuple[PyTree, ...] | list[PyTree],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(out, tangent_out)``: f at the primals and its directional derivative along the
    tangents, in one forward pass (forward mode: the cost of one evaluation of f).

    >>> cr.jvp(lambda x: x ** 3, (2.0,), (1.0,))    # x**3, and 3x**2 times 1
    (8.0, 12.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples, one entry per argument")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    level = new_level()
    tracers = []
    kinds = []
    for primal, tangent in zip(primals, tangents):
        p_leaves, p_def = tree_flatten(primal)
        t_leaves = leaves_up_to(p_def, tangent, "jvp: primals and tangents")
        leaf_tracers = []
        for p, t in zip(p_leaves, t_leaves):
            kind = _kind(p)
            if kind in ("array", "float") and (library := _library(t)) is not None:
                kind = library  # (NumPy's point, a library's tangent: the library's)
            if type(kind) is not str:  # another library's arrays: wrapped
                p, t = kind.adopt(p), kind.adopt(t)
            kinds.append(kind)
            if np.shape(_innermost(p)) != np.shape(_innermost(t)):
                raise ValueError(f"jvp: a tangent of shape {np.shape(_innermost(t))} for a "
                                 f"primal of shape {np.shape(_innermost(p))}")
            p = _point(p)
            leaf_tracers.append(JVPTracer(p, _seed(p, t), level))
        tracers.append(tree_unflatten(p_def, leaf_tracers))
    out_kind = _kind_of_results(kinds)
    with enable_grad():
        out = _traced(f, tracers, {}, out_kind)
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"jvp(..., has_aux=True): the function must return a pair "
                            f"(output, aux), got {type(out).__name__}")
        out, aux = out
    out = _checked_output(out, "jvp")

    def split(leaf, want_tangent):
        if isinstance(leaf, JVPTracer) and leaf._level == level:
            value = tangent_in_dtype(leaf) if want_tangent else leaf.primal
            _refuse_escaped(value, level, "jvp")
        elif want_tangent:  # does not depend on the inputs: zeros, in its library
            inner = _innermost(leaf)
            value = inner._lib.full(inner.shape, 0, _float_dtype(leaf)) if foreign(inner) \
                else np.zeros(np.shape(inner), _float_dtype(leaf))
        else:
            value = leaf
        return _in_kind(value, out_kind)

    primal_out = tree_map(lambda leaf: split(leaf, False), out)
    tangent_out = tree_map(lambda leaf: split(leaf, True), out)
    if has_aux:  # (the aux's values of this level as what they hold, as grad's aux is)
        mine = lambda leaf: isinstance(leaf, JVPTracer) and leaf._level == level
        return primal_out, tangent_out, tree_map(
            lambda leaf: split(leaf, False) if mine(leaf) else leaf, aux)
    return primal_out, tangent_out
