"""autograd.test_util: ``check_grads``, autograd's name for ``cr.gradcheck``."""

from ..transforms.gradcheck import gradcheck
from . import _of_one

__all__ = ["check_grads"]


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    """``check_grads(f, modes=["fwd", "rev"], order=2)(*args)``: f's derivatives in
    argument ``argnum`` against central differences (GradcheckError if they differ)."""
    def check(*args, **kwargs):
        return gradcheck(_of_one(fun, argnum, args, kwargs), args[argnum], order=order,
                         modes=tuple(modes))
    return check
