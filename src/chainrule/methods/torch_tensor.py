"""PyTorch's spellings that only a Tensor has, not the transforms' traced values: its
graph (``grad_fn``, with ``name()``, ``inputs`` and ``next_functions``, as PyTorch's),
the hooks on its gradient (``register_hook``, ``register_post_accumulate_grad_hook``),
the in-place updates (``add_``, ``sub_``, ``mul_``, ``div_``, ``zero_``, ``fill_``,
``copy_``, ``clamp_``, ``lerp_``, ``addcmul_``, ``addcdiv_``; the other ``name_`` forms,
the random fills and the shape changes in place are ``torch_inplace.py``'s), which follow
the Tensor's rule for writes, and ``size``, NumPy's count whose
call as PyTorch's ``x.size()`` says where PyTorch's meaning lives.

A file of its own because these need a Tensor's state (its node and its version), which
the methods shared with the tracers (``torch_names.py``) never touch; ``Tensor`` takes
both.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from .torch_inplace import TensorInplaceMethods
from ..gradient_hooks import HookHandle, add_hook, keeps_gradient


__all__ = ["TensorTorchMethods", "GradFn", "Size"]


class Size(int):
    """A tensor's ``size``: NumPy's number of entries, an int. Called as PyTorch's
    ``x.size()`` it says where PyTorch's meaning lives.

    >>> cr.zeros(2, 3).size
    6
    """

    __slots__ = ()

    def __call__(self, dim: int | None = None) -> None:
        raise TypeError("size is NumPy's number of entries (an int) in chainrule; for "
                        "PyTorch's x.size() use x.shape" +
                        ("" if dim is None else f", and x.shape[{dim}] for x.size({dim})"))


class GradFn:
    """The operation that made a tensor, as PyTorch's ``grad_fn``: ``name()``, the
    operands it was applied to (``inputs``), and ``next_functions``, their own
    ``grad_fn`` (or, for a leaf, an ``AccumulateGrad`` holding it as ``variable``), so
    a learner can walk the graph back from the loss.

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * 2).sum()
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('sum', 'multiply')
    >>> y.grad_fn.next_functions[0][0].next_functions[0][0].variable is x
    True
    """

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def name(self) -> str:
        return self._tensor._op.name

    @property
    def inputs(self) -> tuple[Any, ...]:
        """The operands that take part in the gradient (those that require grad)."""
        return tuple(self._tensor._prev)

    @property
    def next_functions(self) -> tuple[Any, ...]:
        return tuple((operand.grad_fn if operand._prev else _AccumulateGrad(operand), 0)
                     for operand in self._tensor._prev)

    def __repr__(self):
        return f"<grad_fn {self.name()}>"


class _AccumulateGrad:
    """Where a leaf's gradient lands, as PyTorch's ``AccumulateGrad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    next_functions = ()

    def __repr__(self):
        return "<AccumulateGrad>"


def _fill(data, value, out, casting):
    out[...] = value


def _copy(data, value, out, casting):
    # floats copied into an integer tensor are truncated toward zero, as torch's copy_
    # does; anything else casts as the other in-place updates do (never complex to real)
    kinds = np.result_type(value).kind, out.dtype.kind
    np.copyto(out, value, casting="unsafe" if kinds in (("f", "i"), ("f", "u")) else casting)


def _shared(tensor, out, view):
    """``out`` (a result of ``tensor`` the table computed as a copy) holding ``view``
    instead, the same numbers in ``tensor``'s memory, with ``tensor``'s version counter:
    PyTorch's view, so a write into either shows in both, and a walk through a graph
    that saved the other sees the write (as for any NumPy view, saved.py)."""
    if type(tensor._data) is np.ndarray and type(getattr(out, "_data", None)) is np.ndarray:
        try:
            view.flags.writeable = tensor._data.flags.writeable
        except ValueError:  # (memory a graph saved, under an older view: read-only here)
            pass
        out._data, out._version = view, tensor._version
    return out


def _entry(index):
    """Whether an index picks one entry (integers only): NumPy copies it out; PyTorch
    makes it a 0-d view."""
    if isinstance(index, tuple):
        return bool(index) and all(type(i) is int or isinstance(i, np.integer) for i in index)
    return type(index) is int or isinstance(index, np.integer)


class TensorTorchMethods(TensorInplaceMethods):
    """PyTorch's spellings that only a Tensor has: its graph, and in-place updates (which
    follow the Tensor's rule for writes: see ``Tensor.__iadd__``)."""

    __slots__ = ()

    def __getitem__(self, index):
        out = super().__getitem__(index)
        if _entry(index) and type(self._data) is np.ndarray:
            entry = index if isinstance(index, tuple) else (index,)
            return _shared(self, out, self._data[entry + (Ellipsis,)])
        return out

    # --- hooks: functions called with the tensor's gradient (gradient_hooks.py) -------

    def register_hook(self, hook: Callable[[Any], Any]) -> HookHandle:
        """Call ``hook(grad)`` when backward() has this tensor's whole gradient (every
        path summed), before it flows on; ``grad`` is a Tensor, and a Tensor or array of
        its shape and dtype returned takes its place (None keeps it). Hooks run in the
        order registered, also in ``cr.autograd.grad``; the handle's ``remove()`` takes
        one off. On a leaf the hooks run before ``.grad`` is added to.

        >>> x = cr.tensor([1.0, -2.0], requires_grad=True)
        >>> handle = x.register_hook(lambda g: g.clamp(-1.0, 1.0))
        >>> (x * 5).sum().backward()
        >>> x.grad.tolist()
        [1.0, 1.0]
        """
        if not self.requires_grad:
            raise RuntimeError("register_hook: the tensor does not require grad, so no "
                               "gradient will reach it; set requires_grad=True first")
        if not callable(hook):
            raise TypeError(f"register_hook: a hook must be callable, got "
                            f"{type(hook).__name__}")
        return add_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Any], Any]) -> HookHandle:
        """Call ``hook(tensor)`` on a leaf once backward() has added to its ``.grad``
        (an optimizer step per parameter, as it arrives). Refused on a result.

        >>> w = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> handle = w.register_post_accumulate_grad_hook(lambda p: print(p.grad))
        >>> (w * w).sum().backward()
        [2. 4.]
        """
        if not self.requires_grad:
            raise RuntimeError("register_post_accumulate_grad_hook: the tensor does not "
                               "require grad")
        if self._prev:
            raise RuntimeError("register_post_accumulate_grad_hook: only a leaf (an input "
                               "or a parameter) accumulates a .grad; this tensor is the "
                               "result of an operation (use register_hook)")
        return add_hook(self, hook, after_accumulate=True)

    @property
    def retains_grad(self) -> bool:
        """Whether backward() keeps this result's gradient in ``.grad``
        (``retain_grad()`` asked for it); False for a leaf, as in PyTorch."""
        return bool(self._prev) and keeps_gradient(self)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """The diagonal ``offset`` of the (axis1, axis2) planes, as the last axis (as
        np.diagonal), sharing the tensor's memory as PyTorch's does: a write into it
        is a write into the tensor (``K.diagonal().add_(1e-6)`` inside ``no_grad()``).

        >>> K = cr.zeros(2, 2)
        >>> K.diagonal().add_(1.0).data.tolist(), K.data.tolist()
        ([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]])
        """
        out = super().diagonal(offset, axis1, axis2)
        if type(self._data) is np.ndarray:
            return _shared(self, out, np.diagonal(self._data, offset, axis1, axis2))
        return out

    @property
    def size(self) -> "Size":
        """The number of entries (NumPy's meaning; PyTorch's ``x.size()`` is ``x.shape``).

        >>> cr.zeros(2, 3).size
        6
        """
        return Size(self._data.size)

    @property
    def grad_fn(self) -> "GradFn | None":
        """The operation that made this tensor (None for a leaf or a constant)."""
        return GradFn(self) if self._op is not None and self._prev else None

    def add_(self, other: ArrayLike, alpha: float = 1) -> Any:
        """``self += alpha * other``, in place.

        >>> cr.ones(2).add_(cr.ones(2), alpha=2).data.tolist()
        [3.0, 3.0]
        """
        return self._inplace("+", np.add, other, what="x.add_(y)", scale=alpha)

    def sub_(self, other: ArrayLike, alpha: float = 1) -> Any:
        """``self -= alpha * other``, in place: the manual SGD step, inside cr.no_grad().

        >>> cr.ones(2).sub_(cr.ones(2), alpha=0.5).data.tolist()
        [0.5, 0.5]
        """
        return self._inplace("-", np.subtract, other, what="x.sub_(y)", scale=alpha)

    def mul_(self, other: ArrayLike) -> Any:
        """``self *= other``, in place.

        >>> cr.ones(2).mul_(3.0).data.tolist()
        [3.0, 3.0]
        """
        return self._inplace("*", np.multiply, other, what="x.mul_(y)")

    def div_(self, other: ArrayLike) -> Any:
        """``self /= other``, in place.

        >>> cr.ones(2).div_(4.0).data.tolist()
        [0.25, 0.25]
        """
        return self._inplace("/", np.true_divide, other, what="x.div_(y)")

    def zero_(self) -> Any:
        """Every entry set to 0, in place (a tensor's; ``.grad`` is an ndarray here, so
        ``x.grad = None`` or ``x.zero_grad()`` clears that).

        >>> cr.ones(2).zero_().data.tolist()
        [0.0, 0.0]
        """
        return self._inplace("", _fill, 0, what="x.zero_()", instead="x = cr.zeros_like(x)")

    def fill_(self, value: ArrayLike) -> Any:
        """Every entry set to ``value``, in place.

        >>> cr.zeros(2).fill_(7.0).data.tolist()
        [7.0, 7.0]
        """
        return self._inplace("", _fill, value, what="x.fill_(v)",
                             instead="x = cr.full_like(x, v)")

    def copy_(self, source: ArrayLike) -> Any:
        """``source``'s values copied in, in place.

        >>> cr.zeros(2).copy_(np.array([1.0, 2.0])).data.tolist()
        [1.0, 2.0]
        """
        return self._inplace("", _copy, source, what="x.copy_(y)", instead="x = y")

    def clamp_(self, min: ArrayLike | None = None, max: ArrayLike | None = None) -> Any:
        """Each entry limited to [min, max], in place (either bound may be None; with
        min > max every entry becomes max, and NaN stays NaN, as torch's).

        >>> cr.tensor([-1.0, 0.5, 3.0]).clamp_(0.0, 1.0).data.tolist()
        [0.0, 0.5, 1.0]
        """
        if min is None and max is None:
            raise ValueError("x.clamp_(min, max): at least one of min and max must be given")
        instead = "x = x.clamp(min, max)"
        if min is not None:
            self._inplace("", np.maximum, min, what="x.clamp_(min, max)", instead=instead)
        if max is not None:
            self._inplace("", np.minimum, max, what="x.clamp_(min, max)", instead=instead)
        return self

    clip_ = clamp_

    def lerp_(self, end: ArrayLike, weight: ArrayLike) -> Any:
        """``self + weight * (end - self)``, in place: a running average of weights
        (``ema.lerp_(p, 1 - decay)``). As torch's, weights of 0.5 and more are computed
        as ``end - (end - self) * (1 - weight)``, so weight 1 gives ``end`` exactly.

        >>> cr.zeros(2).lerp_(cr.tensor([1.0, 2.0]), 0.25).data.tolist()
        [0.25, 0.5]
        """
        start = self.detach()
        diff = end - start
        if isinstance(weight, (int, float)):
            new = start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
        else:
            new = ops.where(abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))
        return self._inplace("", _copy, new, what="x.lerp_(end, weight)",
                             instead="x = x + weight * (end - x)")

    def addcmul_(self, tensor1: ArrayLike, tensor2: ArrayLike, value: float = 1) -> Any:
        """``self += value * tensor1 * tensor2``, in place (as optimizers written for
        PyTorch update their running averages).

        >>> cr.ones(2).addcmul_(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0]), value=0.5).tolist()
        [2.5, 5.0]
        """
        return self._inplace("+", np.add, tensor1 * tensor2, what="x.addcmul_(a, b)",
                             instead="x = x + value * a * b", scale=value)

    def addcdiv_(self, tensor1: ArrayLike, tensor2: ArrayLike, value: float = 1) -> Any:
        """``self += value * tensor1 / tensor2``, in place (Adam's step, written by hand).

        >>> cr.ones(2).addcdiv_(cr.tensor([1.0, 2.0]), cr.tensor([4.0, 4.0]), value=-2).tolist()
        [0.5, 0.0]
        """
        return self._inplace("+", np.add, tensor1 / tensor2, what="x.addcdiv_(a, b)",
                             instead="x = x + value * a / b", scale=value)
