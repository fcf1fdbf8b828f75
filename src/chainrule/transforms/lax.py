"""``jax.lax`` as ``from chainrule import lax``, so that a program written for JAX
ports by its imports. It gathers:

* the loops and branches (``fori_loop``, ``scan``, ``while_loop``, ``cond``, ``switch``,
  ``map``, ``associative_scan``), the dynamic slices, ``stop_gradient``,
  ``custom_root`` and ``custom_linear_solve``: chainrule's own (``cr.fori_loop``...);
* the elementwise arithmetic (``add``, ``exp``, ``integer_pow``, ``round``, ``clamp``...:
  lax_elementwise.py), the comparisons and integer bit operations (lax_bits.py);
* the shapes and assembly (``broadcast_in_dim``, ``reshape``, ``pad``, ``select_n``,
  ``slice``...: lax_structure.py);
* the reductions, scans, sorts and products (``reduce_sum``, ``reduce``,
  ``reduce_window``, ``cumsum``, ``sort``, ``top_k``, ``dot_general``...:
  lax_reductions.py);
* the convolutions with JAX's dimension numbers (``conv_general_dilated``,
  ``conv_transpose``, ``conv_general_dilated_patches``...: lax_convolution.py);
* XLA's general ``gather`` with its dimension numbers and modes (lax_gather.py), and
  the scatters: ``scatter``, ``scatter_add``, ``scatter_mul``... (lax_scatter.py);
* the collectives over the named axes of ``cr.vmap(f, axis_name=...)``: ``psum``,
  ``pmean``, ``all_gather``, ``axis_index``, ``ppermute``... (lax_collectives.py);
* ``Precision`` (accepted by ``precision=``, which changes nothing on a CPU).

Each operation is a composition of chainrule's differentiable operations, so grad,
jvp, vmap, cr.jit and Tensors take it, with JAX's derivatives.

>>> from chainrule import lax
>>> lax.fori_loop(0, 3, lambda i, x: x + i, 0.0)
3.0
>>> lax.dynamic_slice_in_dim(np.arange(6.0), 2, 3).tolist()
[2.0, 3.0, 4.0]
"""

import enum
from collections.abc import Callable
from typing import Any

from ..primitive import shape_of
from ..rules import reshape as _reshape
from ..rules import stop_gradient
from .control import (cond, dynamic_slice, dynamic_update_slice, fori_loop, scan, switch,
                      while_loop)
from .custom_root import custom_linear_solve, custom_root
from .lax_bits import *  # noqa: F401,F403
from .lax_collectives import *  # noqa: F401,F403
from .lax_convolution import *  # noqa: F401,F403
from .lax_elementwise import *  # noqa: F401,F403
from .lax_fft import *  # noqa: F401,F403
from .lax_gather import *  # noqa: F401,F403
from .lax_reductions import *  # noqa: F401,F403
from .lax_scatter import *  # noqa: F401,F403
from .lax_structure import *  # noqa: F401,F403

__all__ = ["fori_loop", "scan", "while_loop", "cond", "switch", "map", "dynamic_slice",
           "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_index_in_dim", "stop_gradient", "Precision", "custom_root",
           "custom_linear_solve"]
__all__ += [  # written by scripts/make_exports.py: the lax operations
    # lax_bits
    "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "population_count", "clz", "bitcast_convert_type",
    # lax_collectives
    "psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size", "ppermute",
    "pshuffle", "pbroadcast", "psum_scatter", "all_to_all", "pswapaxes",
    # lax_convolution
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
    "conv_with_general_padding", "conv_transpose", "conv_general_dilated_patches",
    "padtype_to_pads", "conv_general_permutations", "conv_shape_tuple",
    "conv_general_shape_tuple", "conv_transpose_shape_tuple",
    # lax_elementwise
    "add", "sub", "mul", "div", "rem", "neg", "pow", "integer_pow", "square", "reciprocal",
    "sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1", "log", "log1p", "logistic", "sin",
    "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "abs", "sign", "max", "min", "clamp", "floor", "ceil", "round",
    "RoundingMethod", "is_finite", "nextafter", "complex", "conj", "real", "imag",
    # lax_fft
    "FftType", "fft",
    # lax_gather
    "GatherDimensionNumbers", "GatherScatterMode", "gather",
    # lax_reductions
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
    "reduce_xor", "reduce", "reduce_window", "argmax", "argmin", "cumsum", "cumprod",
    "cummax", "cummin", "cumlogsumexp", "associative_scan", "sort", "sort_key_val", "top_k",
    "approx_max_k", "approx_min_k", "dot", "dot_general", "batch_matmul",
    "reduce_window_shape_tuple",
    # lax_scatter
    "ScatterDimensionNumbers", "scatter", "scatter_add", "scatter_sub", "scatter_mul",
    "scatter_min", "scatter_max",
    # lax_structure
    "broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcast_shapes",
    "broadcasted_iota", "iota", "collapse", "concatenate", "convert_element_type",
    "expand_dims", "squeeze", "reshape", "transpose", "rev", "full", "full_like",
    "index_in_dim", "index_take", "slice", "slice_in_dim", "pad", "select", "select_n",
    "tile", "split", "stack", "unstack", "dynamic_update_index_in_dim",
    "optimization_barrier", "dtype", "empty", "broadcast_like",
]


class Precision(enum.Enum):
    """``jax.lax.Precision``, for ``precision=`` arguments (``np.dot``, ``np.einsum``...):
    accepted, and changes nothing, since a CPU computes float64 and float32 one way.
    JAX's strings name the same members.

    >>> cr.lax.Precision("highest")
    <Precision.HIGHEST: 2>
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": 0, "fastest": 0, "bfloat16": 0, "high": 1, "bfloat16_3x": 1,
                 "tensorfloat32": 1, "highest": 2, "float32": 2}
        if isinstance(value, str) and value.lower() in names:
            return cls(names[value.lower()])
        return None

    def __str__(self):
        return self.name


def map(f: Callable[[Any], Any], xs: Any) -> Any:  # noqa: A001  (JAX's name)
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked:
    a scan without a carry.

    >>> cr.lax.map(lambda x: x ** 2, np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 4.0, 9.0]
    """
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int,
                         axis: int = 0) -> Any:
    """``slice_size`` entries of ``operand`` from ``start_index`` along ``axis`` (the
    start clamped so the slice fits, as dynamic_slice), every other axis whole.

    >>> cr.lax.dynamic_slice_in_dim(np.arange(6.0).reshape(2, 3), 1, 2, axis=1).tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """
    shape = shape_of(operand)
    axis = axis % len(shape)
    starts = [start_index if k == axis else 0 for k in range(len(shape))]
    sizes = [slice_size if k == axis else n for k, n in enumerate(shape)]
    return dynamic_slice(operand, starts, sizes)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any,
                                axis: int) -> Any:
    """``operand`` with ``update`` written from ``start_index`` along ``axis``.

    >>> cr.lax.dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, axis=0).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    rank = len(shape_of(operand))
    axis = axis % rank
    return dynamic_update_slice(operand, update,
                                [start_index if k == axis else 0 for k in range(rank)])


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0,
                         keepdims: bool = True) -> Any:
    """The slice at ``index`` along ``axis``, that axis kept (of size 1) or dropped.

    >>> cr.lax.dynamic_index_in_dim(np.arange(6.0).reshape(3, 2), 2, keepdims=False).tolist()
    [4.0, 5.0]
    """
    part = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return part
    shape = shape_of(part)
    axis = axis % len(shape)
    return _reshape(part, shape[:axis] + shape[axis + 1:])
