"""Function transforms in the style of JAX: a function in, a function out.

    functional.py   grad, value_and_grad, vjp, jvp: the public transforms, and what
                    turns inputs into tracers and results back into their kind
    jacobians.py    jacrev, jacfwd, hessian, hvp, built on functional.py's runs
    tracer.py       what the two modes' tracers share: a box that carries a value of
                    one level through the operations
    reverse.py      reverse mode: a tracer that records a graph, walked by backward
    forward.py      forward mode: a tracer that carries a tangent beside its value
    pytrees.py      nested tuples, lists and dicts of inputs and results, flattened
    gradcheck.py    the library's derivatives against central differences
    batching.py     vmap: a batching tracer, one more level of the same mechanism
    fixed_point.py  a fixed point of an iteration, differentiated implicitly
    implicit.py     a solver's answer (chainrule.scipy.optimize), differentiated by the
                    implicit function theorem at the root of its optimality conditions
    solver_numbers.py  what a solver computes with: the values its function closes
                    over (a batch of vmap, cr.jit's traced arrays) as plain numbers
    function.py     cr.Function: PyTorch's class spelling of a custom operation
    custom_derivatives.py  cr.custom_jvp and cr.custom_vjp: JAX's decorators for a
                    function's own derivative rule, on the primitive of
                    custom_primitive.py
    debug.py        cr.debug.print and cr.debug.callback: values inside cr.jit (at
                    every call) and vmap (per example), as jax.debug
    ad_checkpoint.py  cr.checkpoint / cr.remat, JAX's rematerialisation, on the
                    primitive of custom_primitive.py, and checkpoint_name
    checkpoint_policies.py  which values a checkpoint keeps (jax.checkpoint_policies)
"""

from .functional import grad, jvp, tree_flatten, tree_unflatten, value_and_grad, vjp
from .jacobians import hessian, hvp, jacfwd, jacobian, jacrev
from .operators import hessian_operator, linear_operator
from .vmap_axes import vmap
from .gradcheck import GradcheckError, gradcheck
from .control import (cond, dynamic_slice, dynamic_update_slice, fori_loop, scan, switch,
                      while_loop)
from .fixed_point import fixed_point
from .function import Function, FunctionCtx
from .custom_derivatives import custom_jvp, custom_vjp
from . import debug
from .pytrees import (ravel_pytree, register_dataclass, register_pytree_node, tree_leaves,
                      tree_map, tree_reduce, tree_structure)

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "jacobian", "hessian",
           "hvp", "vmap", "linear_operator", "hessian_operator", "tree_flatten", "tree_unflatten",
           "fori_loop", "scan", "while_loop", "cond", "switch",
           "dynamic_slice", "dynamic_update_slice", "ravel_pytree", "tree_map", "tree_leaves", "tree_structure", "tree_reduce",
           "register_pytree_node", "register_dataclass", "fixed_point", "gradcheck", "GradcheckError", "Function",
           "FunctionCtx", "custom_jvp", "custom_vjp"]
