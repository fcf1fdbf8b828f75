"""chainrule: automatic differentiation you can read.

    from chainrule import Value                     # the scalar engine (micrograd's API)
    a, b = Value(2.0), Value(3.0)
    c = a * b + a
    c.backward()
    a.grad, b.grad                                  # (4.0, 2.0)

    import chainrule as cr                          # the tensor engine (PyTorch-shaped)
    x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x @ x.T).relu().sum().backward()
    x.grad                                          # an ndarray, the shape of x
"""

import typing as _typing

import numpy as _np

from .api import paths as _paths

_paths.install()  # chainrule.numpy, chainrule.autograd...: where users import them (api/paths.py)

from .rules import *  # noqa: F401,F403  (the operations: cr.exp, cr.sum, ...)
from .rules.predicates import *  # noqa: F401,F403  (tests and indices: cr.isnan, cr.argmax, ...)
from .transforms import (Function, GradcheckError, fixed_point, grad, gradcheck, hessian,
                         hessian_operator, hvp, jacfwd, jacobian, jacrev, jvp, linear_operator,
                         ravel_pytree, register_dataclass, register_pytree_node, tree_flatten,
                         tree_leaves, tree_map, tree_reduce, tree_structure, tree_unflatten,
                         value_and_grad, vjp, vmap)
from .transforms.control import (cond, dynamic_slice, dynamic_update_slice, fori_loop, scan,
                                 switch, while_loop)
from .transforms import tree_util  # jax.tree_util: pytrees.py's names, Partial, ...
from .transforms.pytrees import (register_pytree_node_class, tree_flatten_with_path,
                                 tree_leaves_with_path, tree_map_with_path)
from .transforms.array_type import Array  # jax.Array's role: for isinstance, annotations
from .transforms.custom_derivatives import custom_gradient, custom_jvp, custom_vjp
from .transforms.linear_maps import linear_transpose, linearize
from .transforms.pure_callback import pure_callback
from .transforms import custom_derivatives  # jax.custom_derivatives: SymbolicZero, ...
from .transforms import tree  # jax.tree: cr.tree.map, .leaves, ... (tree_util's short names)
from .transforms.custom_root import custom_linear_solve, custom_root  # jax.lax's names
# jax.remat and jax.checkpoint_policies; jax.checkpoint is cr.checkpoint, the checkpoint
# module (below), which called is remat (nn/checkpoint.py says why)
from .transforms.ad_checkpoint import remat
from .transforms import ad_checkpoint, checkpoint_policies
from .transforms import debug  # cr.debug.print, cr.debug.callback (a namespace, as cr.lax)
from .modes import (detect_anomaly, disable_jit, enable_grad, inference_mode, is_grad_enabled,
                    is_jit_disabled, no_grad)
from .primitive import (ENTRYWISE, LEADING_AXES, Batching, Primitive, along_axis, elementwise,
                        primitive)
# (before cr.tensor, the function: a type checker reads this line as also binding
# the submodule's name, `tensor`, which the function's import must then replace)
from .tensor import Tensor
from .api.creation import (arange, eye, full, linspace, ones, ones_like, rand, randn,
                           tensor, zeros, zeros_like)
from .api.torch_counting import histc, histogram
from .api.torch_random import (Generator, bernoulli, manual_seed, multinomial, normal,
                               rand_like, randint, randn_like, randperm)
from .jit import jit, make_program, pmap
from .origin import point_warnings_at_the_user as _point_warnings_at_the_user
from .api import cuda, linalg, random  # (cuda: torch.cuda as on a machine without a GPU)
# JAX's runtime: its configuration, devices, eval_shape (compat/jax_runtime.py)
from .compat.jax_runtime import (Device, ShapeDtypeStruct, block_until_ready, config,
                                 debug_infs, debug_nans, default_backend, default_device,
                                 default_matmul_precision, default_prng_impl, device_count,
                                 device_get, device_put, devices, enable_checks, enable_x64,
                                 ensure_compile_time_eval, eval_shape, local_device_count,
                                 local_devices, log_compiles, named_call, named_scope,
                                 numpy_dtype_promotion, numpy_rank_promotion, process_count,
                                 process_index, threefry_partitionable, transfer_guard,
                                 transfer_guard_device_to_device,
                                 transfer_guard_device_to_host,
                                 transfer_guard_host_to_device)
if _typing.TYPE_CHECKING:  # (at run time at the first use: __getattr__ below)
    from .nn.checkpoint import _CallableModule
    from .compat import autograd
    from .api import numpy
    from . import scipy
    from . import nn
    from .nn import optim
    from .compat import jax_lax as lax  # jax.lax: transforms/lax.py's, and special functions
    from .compat import torch_func as func  # torch.func's names (chainrule.func)
    from .nn.checkpoint import load, save
    from .sparse import hessian_sparsity, jacobian_sparsity, sparse_hessian, sparse_jacobian
    from .app.viz import draw_graph, render_graph
    checkpoint: _CallableModule  # the module, called, is remat (nn/checkpoint.py says why)
from .scalar import Value

abs = absolute  # like numpy.abs
# PyTorch's dtype names (torch.float32, torch.long...), as NumPy's types: x.to(cr.float32),
# cr.zeros(3, dtype=cr.long), (pred.argmax(1) == y).type(cr.float). Not in __all__, where
# float, int and bool would shadow Python's own in a star import.
float16, float32, float64 = _np.float16, _np.float32, _np.float64
half, float, double = _np.float16, _np.float32, _np.float64  # noqa: A001  (torch.float is 32)
complex64, complex128 = cfloat, cdouble = _np.complex64, _np.complex128
uint8, int8, int16, int32, int64 = _np.uint8, _np.int8, _np.int16, _np.int32, _np.int64
short, int, long = _np.int16, _np.int32, _np.int64  # noqa: A001
bool = _np.bool_  # noqa: A001
cat = concatenate  # noqa: F405  (PyTorch's name; dim= is taken too)
pow = power  # noqa: F405  (torch.pow; Python's pow is builtins.pow)

__version__ = "0.1.0"

__all__ = [
    # the engines
    "Value", "Tensor", "tensor", "zeros", "ones", "full", "eye", "arange", "linspace",
    "zeros_like", "ones_like", "rand", "randn", "Primitive", "primitive", "elementwise",
    "Function", "Batching", "ENTRYWISE", "LEADING_AXES", "along_axis",
    # PyTorch's random functions and Generator (cr.random is JAX's keys)
    "manual_seed", "Generator", "randint", "randperm", "multinomial", "normal", "bernoulli",
    "rand_like", "randn_like",
    # PyTorch's counting functions (no derivative); torch.cuda's questions (no GPU here)
    "histc", "histogram", "cuda",
    # function transforms
    "grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "jacobian", "hessian",
    "hvp", "vmap", "linear_operator", "hessian_operator", "gradcheck", "GradcheckError",
    "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
    "tree_reduce", "register_pytree_node", "register_dataclass", "ravel_pytree", "fixed_point",
    "custom_root", "custom_linear_solve",
    "custom_jvp", "custom_vjp", "custom_derivatives", "tree", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "register_pytree_node_class", "Array",
    "remat", "checkpoint_policies", "ad_checkpoint", "linearize", "linear_transpose",
    "custom_gradient", "pure_callback",
    # JAX's runtime: one CPU, float64 (compat/jax_runtime.py)
    "config", "Device", "devices", "local_devices", "device_count", "local_device_count",
    "default_backend", "process_index", "process_count", "device_put", "device_get",
    "block_until_ready", "ShapeDtypeStruct", "eval_shape", "named_call", "named_scope",
    "ensure_compile_time_eval", "enable_x64",
    # (JAX's flags for a with block)
    "debug_nans", "debug_infs", "log_compiles", "enable_checks", "threefry_partitionable",
    "default_matmul_precision", "numpy_rank_promotion", "numpy_dtype_promotion",
    "default_device", "default_prng_impl", "transfer_guard", "transfer_guard_host_to_device",
    "transfer_guard_device_to_host", "transfer_guard_device_to_device",
    # sparse Jacobians and Hessians (SciPy sparse arrays; scipy imported on first use)
    "jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian",
    # JAX's structured control flow
    "fori_loop", "scan", "while_loop", "cond", "switch", "dynamic_slice", "dynamic_update_slice",
    "lax",
    # tracing a function into a program of NumPy calls
    "jit", "make_program", "pmap",
    # modes
    "no_grad", "enable_grad", "inference_mode", "is_grad_enabled", "detect_anomaly",
    "disable_jit", "is_jit_disabled",
    # training
    "nn", "optim", "checkpoint", "save", "load", "random",
    # numpy.linalg's names
    "linalg",
    # pictures
    "draw_graph", "render_graph",
]
# The operations (on Tensors, arrays and numbers; the unary functions on Values too):
# every public operation of the rule table, spelt out because type checkers read only
# literal lists
__all__ += [  # written by scripts/make_exports.py: the operations
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
__all__ += ["abs", "cat", "pow"]  # NumPy's and PyTorch's names for three of them
# tests, logic and indices: no derivative, plain NumPy results
__all__ += [  # written by scripts/make_exports.py: the predicates
    # predicates
    "isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_not", "logical_xor",
    "all", "any", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
    "argmax", "argmin", "argsort", "searchsorted", "isclose", "allclose", "array_equal",
]

_point_warnings_at_the_user()  # NumPy's RuntimeWarnings name the user's line (origin.py)


# The parts a program may never touch load at their first use, not with the package: the
# scalar engine, the tensor engine and the transforms come at once, while nn, the JAX and
# PyTorch namespaces, sparse Jacobians and pictures wait. `import chainrule` then takes
# about half the time, and leaves fewer objects for each of Python's full garbage
# collections to walk (micrograd's programs run one per step). name -> (module, attribute
# of it, or None for the module itself).
_AT_FIRST_USE = {
    "autograd": ("chainrule.autograd", None),  # as torch.autograd, and HIPS autograd's drop-in
    "numpy": ("chainrule.numpy", None),        # jax.numpy
    "scipy": ("chainrule.scipy", None),        # jax.scipy
    "nn": ("chainrule.nn", None),
    "optim": ("chainrule.optim", None),
    "checkpoint": ("chainrule.checkpoint", None),
    "func": ("chainrule.func", None),          # torch.func
    "lax": ("chainrule.lax", None),            # jax.lax
    "load": ("chainrule.nn.checkpoint", "load"),
    "save": ("chainrule.nn.checkpoint", "save"),
    "draw_graph": ("chainrule.app.viz", "draw_graph"),
    "render_graph": ("chainrule.app.viz", "render_graph"),
    **{name: ("chainrule.sparse", name) for name in
       ("jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian")},
}


def __getattr__(name: str) -> object:
    if name not in _AT_FIRST_USE:
        raise AttributeError(f"module 'chainrule' has no attribute '{name}'")
    import importlib
    module, attribute = _AT_FIRST_USE[name]
    found = importlib.import_module(module)
    if attribute is not None:
        found = getattr(found, attribute)
    globals()[name] = found  # (the next use is an ordinary lookup)
    return found


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_AT_FIRST_USE))
