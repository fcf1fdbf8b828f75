"""The tensor engine's derivative table: every operation, its forward computation in
NumPy, and its rules, reverse mode (VJP) beside forward mode (JVP).

How to read a rule (the shape is ``chainrule.primitive``'s)::

    exp = elementwise(xp.exp, "exp", lambda ans, x: ans)   # d/dx e^x = e^x: both rules
    sum.defvjp(lambda g, ans, x, axis=None, keepdims=False: expand_reduced(g, ...))
    sum.defjvp(lambda t, ans, x, axis=None, keepdims=False: sum(t, ...))

``g`` is the gradient arriving at the result ``ans``; ``t`` is the tangent of one input.
A rule must also work when ``g`` or ``t`` carries extra *leading* axes, a batch (a
whole Jacobian in one pass), so the rules address axes from the end. The rules are
written with the operations of this table, so they run on raw arrays in an ordinary
backward pass and on Tensors with ``backward(create_graph=True)``: derivatives of any
order come from this one table. The engine does two things for every rule: it sums a
VJP's result back to its input's shape (``unbroadcast``) and casts it to its dtype, and
broadcasts a JVP's result to the output's shape.

The table, by topic:

* ``elementwise``: arithmetic, exp/log, trigonometric, activations, kinks, ``where``;
* ``elementary``: inverse trigonometric and hyperbolic, other bases, rounding, fmod;
* ``complexes``: real, imag, conj, angle (not holomorphic: rules of their own);
* ``reductions``: sum, mean, max, min, prod, var, std, norm, logsumexp, softmax, the
  nan-ignoring ones (nansum, nanmean, nanmax, nanmin), ptp;
* ``linalg``: matmul, dot, outer;
* ``shapes``: reshape, transpose, swapaxes, squeeze, broadcasting, moveaxis, astype;
* ``joining``: concatenate, stack, split;
* ``indexing``: ``x[...]`` and ``x.at[...]``'s updates (getitem, index_set, index_add,
  index_multiply, index_min, index_max), reached through a Tensor's indexing;
* ``ordering``: cumsum, cumprod, diff, sort, partition, take, take_along_axis, interp;
* ``assembly``: flips, tile, repeat, roll, pad, triangles, diagonals, stacking, splitting;
* ``statistics``: average, quantile, percentile, median, cov, corrcoef;
* ``solves``: inv, solve, solve_triangular;
* ``determinants``: det, slogdet;
* ``decompositions``: cholesky, eigh, eigvalsh, svd, svdvals, qr;
* ``eigen``: eig, eigvals of a general matrix (complex where NumPy's are);
* ``matrix_functions``: pinv, trace, matrix_power, lstsq, cr.linalg.norm's norms;
* ``contractions``: einsum, and tensordot, inner, kron, vdot, cross, convolve and
  correlate built from it;
* ``fft``: numpy.fft's transforms (``chainrule.numpy.fft``);
* ``convolution``: n-d convolution (with its two adjoints), and ``pooling``: max, average
  and adaptive pooling over its windows, both reached through ``nn.functional`` (conv2d,
  max_pool2d...), as PyTorch keeps them there.

Plain rules only: faster versions of a few (fused layers, kept residuals) live in
``chainrule.rules.fused`` (and ``fused_recurrent``: a GRU layer's recurrence as one
operation; ``fused_attention``: softmax(q k^T + mask) v as one; ``fused_norm``: a layer
norm as one), each tested equal to the rule it replaces.

How to add an operation
-----------------------
Four steps in three files, and the tests then check it everywhere (reverse and forward
mode, second order, vmap, cr.jit, complex inputs, other array libraries) with nothing
more written. ``cbrt`` as the example; ``sum`` for a reduction.

1. **Pick the topic file** from the list above (``cbrt`` is ``elementary.py``; a
   reduction goes in ``reductions.py``) and write the forward function there with the
   array namespace, ``xp.cbrt(x)`` (``chainrule.arrays``: NumPy's functions under the
   Array API's names), never ``np`` directly: that is what lets cr.jit record it and
   another array library run it.
2. **Give its rules, and how it batches**, in the same place. An entrywise function is
   one line, a partial derivative per argument as a function of the result and the
   operands: ``cbrt = elementwise(xp.cbrt, "cbrt", lambda ans, x: 1 / (3 * ans**2))``,
   which serves both modes and batches by itself. Otherwise ``@op(name)`` with
   ``.defvjp(...)`` and ``.defjvp(...)``, one rule per differentiable argument, written
   with the table's own operations (so derivatives of derivatives come free); a
   reduction says how it batches in its ``@op`` line,
   ``@op("sum", batching=along_axis(axis=None, keepdims=False))`` (its parameters after
   the operand, with their defaults), one that computes on stacks of matrices
   ``batching=LEADING_AXES``. A composition of existing operations needs no rules at
   all (``gelu``, ``var``). The docstring says what it computes and shows a ``>>>``
   example (tests/test_docstrings.py requires one for every public name).
3. **Export it**: add the name to the topic file's ``__all__`` and run ``python
   scripts/make_exports.py`` (it writes the name into the lists type checkers read;
   tests/test_types.py fails until it has run). That makes it ``cr.NAME`` and NumPy's
   function of that name on a Tensor. Then ``python scripts/make_api_docs.py`` writes
   its line in docs/api.md (it imports chainrule.scipy, so it needs SciPy: the ``scipy``
   or ``test`` extra; tests/test_api_docs.py fails until it has run). Add it to the
   topic's ``METHODS`` too if Tensors have it as a method (``x.NAME()``), and to the
   methods that ``methods/array.py`` spells out for type checkers.
4. **Add its row** to the case table of ``tests/test_derivatives.py``; for an entrywise
   function, one line of its list, ``("cbrt", cr.cbrt, torch.cbrt, D.cbrt, "any")``
   (the name, chainrule's function, PyTorch's, the primitive, the inputs' domain). The
   test fails for an exported operation without a row. From that row it is checked
   against PyTorch (pinned in the ``test`` extra; where torch lacks the operation, the
   row's reference composes torch's, as ``ptp``'s does) and central differences, to
   second order in both modes, and tests/test_jit.py and the transform sweeps run the
   same row under every transform.
"""

from .elementwise import *  # noqa: F401,F403
from .elementary import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .ordering import *  # noqa: F401,F403
from .assembly import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .joining import *  # noqa: F401,F403
from .solves import *  # noqa: F401,F403
from .determinants import *  # noqa: F401,F403
from .decompositions import *  # noqa: F401,F403
from .eigen import *  # noqa: F401,F403
from .matrix_functions import *  # noqa: F401,F403
from .contractions import *  # noqa: F401,F403
from .complexes import *  # noqa: F401,F403
from ..primitive import Primitive

from .linalg import matmul_jvp_a, matmul_jvp_b, matmul_vjp_a, matmul_vjp_b  # noqa: F401
from .matrix_functions import (linalg_norm, matrix_norm, multi_dot,  # noqa: F401
                               vector_norm)  # (cr.linalg only)
from .reductions import broadcast_axes, expand_reduced, unbroadcast  # noqa: F401
from .shapes import astype  # noqa: F401
from .indexing import (getitem, index_add, index_max, index_min,  # noqa: F401
                       index_multiply, index_set)

from . import (assembly, complexes, contractions, decompositions, determinants, eigen,
               elementary, elementwise, joining, linalg, matrix_functions, ordering,
               reductions, shapes, solves, statistics)
from . import (convolution, fft, fused, fused_attention, fused_norm, fused_recurrent, indexing,
               pooling)

# The topic files of cr.NAME; fft (chainrule.numpy.fft, as NumPy keeps them in numpy.fft),
# convolution and pooling (nn.functional's, as PyTorch keeps them there), indexing (a
# Tensor's x[...] and x.at[...]) and fused (speed overrides) keep their names out of cr.*
# and NumPy's namespace.
TOPICS = (elementwise, elementary, reductions, linalg, shapes, joining, ordering, assembly,
          statistics, solves, determinants, decompositions, eigen, matrix_functions,
          contractions, complexes)

# The public operations (cr.NAME): every topic file's __all__, in the order of TOPICS,
# spelt out because type checkers read only literal lists. The engines also use the
# helpers imported above.
__all__ = [  # written by scripts/make_exports.py: the operations
    # elementwise
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "log1p",
    "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "relu", "leaky_relu", "absolute",
    "sign", "clip", "softplus", "maximum", "minimum", "where", "gelu", "silu", "arctan",
    "remainder",
    # elementary
    "arcsin", "arccos", "arctan2", "hypot", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "expm1", "log2", "log10", "exp2", "logaddexp", "logaddexp2", "square", "logit",
    "reciprocal", "sinc", "deg2rad", "rad2deg", "radians", "degrees", "fabs", "fmax",
    "fmin", "mod", "fmod", "floor", "ceil", "round", "around", "rint", "trunc", "fix",
    "nan_to_num", "elu", "stop_gradient",
    # reductions
    "sum", "mean", "max", "min", "prod", "var", "std", "logsumexp", "softmax",
    "log_softmax", "norm", "trapezoid", "ptp", "nansum", "nanmean", "nanmax", "nanmin",
    # linalg
    "matmul", "dot", "outer",
    # shapes
    "reshape", "transpose", "permute", "swapaxes", "broadcast_to", "expand", "squeeze",
    "expand_dims", "unsqueeze", "flatten", "moveaxis",
    # joining
    "concatenate", "stack", "split",
    # ordering
    "cumsum", "cumprod", "diff", "sort", "topk", "partition", "unique", "take",
    "take_along_axis", "interp",
    # assembly
    "flip", "fliplr", "flipud", "rot90", "rollaxis", "roll", "tile", "repeat", "pad",
    "tril", "triu", "diagonal", "diag", "atleast_1d", "atleast_2d", "atleast_3d", "hstack",
    "vstack", "dstack", "column_stack", "array_split", "hsplit", "vsplit", "dsplit",
    "ravel", "append", "select",
    # statistics
    "average", "quantile", "percentile", "median", "cov", "corrcoef",
    # solves
    "inv", "solve", "solve_triangular",
    # determinants
    "det", "slogdet",
    # decompositions
    "cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr",
    # eigen
    "eig", "eigvals",
    # matrix_functions
    "pinv", "trace", "matrix_power", "lstsq",
    # contractions
    "einsum", "tensordot", "inner", "kron", "vdot", "cross", "convolve", "correlate",
    # complexes
    "real", "imag", "conj", "conjugate", "angle",
]


def primitives():
    """Every operation of the table (each Primitive of the topic files, indexing, fft,
    convolution, pooling and the fused layers, recurrence, attention and norm), for the
    transforms and checks that go through them all."""
    found = {}
    for module in TOPICS + (indexing, fft, convolution, pooling, fused, fused_recurrent,
                            fused_attention, fused_norm):
        for value in vars(module).values():
            if isinstance(value, Primitive):
                found[id(value)] = value
    return list(found.values())


def _methods():
    """The operations each topic file lists in its METHODS, by method name: Tensor and
    the tracers have them as methods (``x.exp()`` is ``exp(x)``; methods/array.py)."""
    found = {}
    for topic in TOPICS:
        for entry in getattr(topic, "METHODS", ()):
            method, operation = entry if isinstance(entry, tuple) else (entry, entry)
            found[method] = getattr(topic, operation)
    return found


METHODS = _methods()
