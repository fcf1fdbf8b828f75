"""``chainrule.lax``: jax.lax's names, as ``from chainrule import lax``. The operations
are ``chainrule.transforms.lax``'s; jax.lax's special functions (``lgamma``,
``digamma``, ``igamma``, ``betainc``, ``bessel_i0e``...) are ``chainrule.scipy.special``'s
under jax.lax's names, imported at their first use (they need SciPy, the ``scipy``
extra), so that ``import chainrule`` still imports NumPy alone.

>>> from chainrule import lax
>>> round(float(lax.lgamma(5.0)), 6)                 # log 4!
3.178054
>>> round(float(cr.grad(lax.lgamma)(5.0)), 6)        # digamma(5)
1.506118
"""

import importlib
from typing import TYPE_CHECKING, Any

from ...transforms.lax import *  # noqa: F401,F403

if TYPE_CHECKING:
    from . import linalg  # noqa: F401
    from ...scipy.special import (digamma, erfc, gammainc as igamma,  # noqa: F401
                                 gammaincc as igammac, gammaln as lgamma, i0e as bessel_i0e,
                                 i1e as bessel_i1e, erfinv as erf_inv, betainc, polygamma,
                                 zeta)

# jax.lax's name -> chainrule.scipy.special's (the same function, the same arguments:
# igamma(a, x) is the regularized lower incomplete gamma, betainc(a, b, x) the
# regularized incomplete beta, zeta(x, q) Hurwitz's)
_SPECIAL = {"lgamma": "gammaln", "digamma": "digamma", "polygamma": "polygamma",
            "zeta": "zeta", "igamma": "gammainc", "igammac": "gammaincc",
            "betainc": "betainc", "bessel_i0e": "i0e", "bessel_i1e": "i1e",
            "erf_inv": "erfinv", "erfc": "erfc"}

__all__ = ["lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac", "betainc",
           "bessel_i0e", "bessel_i1e", "erf_inv", "erfc", "igamma_grad_a",
           "random_gamma_grad"]
__all__ += [  # written by scripts/make_exports.py: jax.lax's names
    # lax
    "fori_loop", "scan", "while_loop", "cond", "switch", "map", "dynamic_slice",
    "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
    "dynamic_index_in_dim", "stop_gradient", "Precision", "custom_root",
    "custom_linear_solve",
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


def igamma_grad_a(a: Any, x: Any) -> Any:
    """d igamma(a, x) / da, elementwise: the regularized lower incomplete gamma's
    derivative in its shape (chainrule.scipy.special.gammainc's, SciPy's values)."""
    from ...api import numpy as cnp
    from ...scipy import special
    from ...transforms import jvp
    return jvp(lambda a: special.gammainc(a, x), (a,), (cnp.ones_like(a),))[1]


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for a sample x of the standard gamma distribution of shape a, held at
    its quantile: -(d igamma / da) / (d igamma / dx), the implicit reparametrization
    jax.random.gamma's derivative uses."""
    from ...api import numpy as cnp
    from ...scipy import special
    density = cnp.exp((a - 1) * cnp.log(x) - x - special.gammaln(a))
    return -igamma_grad_a(a, x) / density


def __getattr__(name: str) -> object:
    if name == "linalg":  # jax.lax.linalg (linalg.py beside this file)
        return importlib.import_module("chainrule.compat.jax_lax.linalg")
    if name in _SPECIAL:
        special = importlib.import_module("chainrule.scipy.special")
        return getattr(special, _SPECIAL[name])
    raise AttributeError(f"module 'chainrule.lax' has no attribute '{name}'")
