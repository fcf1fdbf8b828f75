"""Matrix-free operators: a Jacobian or a Hessian that is only ever multiplied.

``cr.linear_operator(f, x)`` and ``cr.hessian_operator(f, x)`` are SciPy
``LinearOperator``s of this module's class, for SciPy's Krylov solvers (cg,
gmres, lsqr), whose products are cr.jvp, cr.vjp and cr.hvp. Outside transforms they
take and give float64 arrays, as SciPy expects.

Inside a transform (the point is traced, or f closes over a traced value or a tensor
that requires grad, or the operator is applied to a traced vector), the products run
jvp and vjp on the traced values and return traced values, as JAX's ``jax.linearize``
and ``jax.vjp`` functions do: the product is then differentiable in the point, in what
f closes over, and in the vector. SciPy's solvers turn every vector into plain numbers,
which would drop that derivative, so a solver handed such an operator is refused.
"""

import functools
import sys
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import Box, raw
from ..scalar.value import Value
from ..tensor import Tensor
from .functional import jvp, vjp
from .jacobians import hvp
from .tracer import Tracer

__all__ = ["linear_operator", "hessian_operator", "DerivativeOperator", "operator_class",
           "in_graph", "flat", "shaped", "numbers"]


@functools.cache
def _scipy_operator():
    """SciPy's LinearOperator, imported on first use: SciPy is optional, and
    ``import chainrule`` imports nothing but NumPy."""
    try:
        from scipy.sparse.linalg import LinearOperator
    except ImportError:
        raise ImportError("linear_operator and hessian_operator need SciPy: pip install "
                          "'chainrule[scipy]'") from None
    return LinearOperator


@functools.cache
def operator_class():
    """DerivativeOperator joined to SciPy's LinearOperator (SciPy's methods serve the
    plain vectors)."""
    return type("DerivativeOperator", (DerivativeOperator, _scipy_operator()),
                {"__module__": __name__, "__doc__": DerivativeOperator.__doc__})


def in_graph(x):
    """Whether x carries a derivative that plain numbers would lose."""
    return isinstance(x, (Tracer, Value)) or (isinstance(x, Tensor) and x.requires_grad)


def _called_by_scipy():
    """Whether the product was asked for by SciPy's code (a solver), looking past
    SciPy's operator algebra (``op @ v``), which users call directly. (The frames
    below the caller: this function, ``_traced``, the public product method.)"""
    frame = sys._getframe(3)
    while frame is not None and frame.f_globals.get("__name__") == \
            "scipy.sparse.linalg._interface":
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__", "").startswith("scipy.")


class DerivativeOperator:
    """A Jacobian (or Hessian) as a SciPy ``LinearOperator``: what
    ``cr.linear_operator`` and ``cr.hessian_operator`` return (joined to SciPy's
    class when first used, ``operator_class``).

    ``forward`` and ``backward`` map a flat vector to a flat vector (the products by
    the matrix and by its transpose). ``traced`` says the matrix itself depends on
    traced values: its products are then traced values, computed by the chainrule
    operations, never turned into plain numbers.

    >>> J = cr.linear_operator(lambda x: x * x, np.array([1.0, 2.0]))
    >>> (J.T @ np.ones(2)).tolist(), J.traced
    ([2.0, 4.0], False)
    """

    def __init__(self, shape: tuple[int, int], forward: Callable[[Any], Any],
                 backward: Callable[[Any], Any], traced: bool, name: str,
                 dtype: Any = np.float64) -> None:
        super().__init__(np.dtype(dtype), shape)
        self._forward, self._backward = forward, backward
        self.traced, self._name = traced, name

    # SciPy's own path, for plain vectors: float64 (complex128) arrays in and out
    def _matvec(self, v):
        return self._numbers(self._forward(np.ravel(v)))

    def _rmatvec(self, u):
        return self._numbers(self._backward(np.ravel(u)))

    def _numbers(self, result):
        if in_graph(result):
            raise TypeError(self._refusal())
        return np.asarray(result, dtype=self.dtype).ravel()

    def _refusal(self):
        return (f"{self._name}: SciPy's solvers compute with plain numbers, but this "
                f"operator's products are traced (it was made inside a transform, or f "
                f"closes over a traced value), so the derivative would be lost; inside a "
                f"transform, form the matrix (cr.jacfwd, cr.hessian) and use "
                f"cr.linalg.solve, or solve outside and differentiate implicitly "
                f"(cr.fixed_point)")

    def _plain(self, x):
        return not self.traced and not in_graph(x)

    def matvec(self, x: Any) -> Any:
        """The matrix times x, a vector of shape (n,) or (n, 1) (traced or not)."""
        if self._plain(x):
            return super().matvec(x)
        return self._traced(self._forward, x, self.shape[1], "matvec")

    def rmatvec(self, x: Any) -> Any:
        """The transposed matrix times x, a vector of shape (m,) or (m, 1)."""
        if self._plain(x):
            return super().rmatvec(x)
        return self._traced(self._backward, x, self.shape[0], "rmatvec")

    def matmat(self, X: Any) -> Any:
        """The matrix times X, of shape (n, k): one product per column."""
        if self._plain(X):
            return super().matmat(X)
        return self._traced(self._forward, X, self.shape[1], "matmat")

    def rmatmat(self, X: Any) -> Any:
        """The transposed matrix times X, of shape (m, k)."""
        if self._plain(X):
            return super().rmatmat(X)
        return self._traced(self._backward, X, self.shape[0], "rmatmat")

    def dot(self, x: Any) -> Any:
        """The matrix times x (a vector or a matrix), also ``op @ x`` and ``op * x``."""
        if isinstance(x, _scipy_operator()) or np.isscalar(x) or self._plain(x):
            return super().dot(x)
        return self._traced(self._forward, x, self.shape[1], "dot")

    def _traced(self, product, x, n, name):
        """The product on values that may be traced, in x's layout: (n,), (n, 1) or
        (n, k), column by column."""
        shape = np.shape(raw(x))
        if len(shape) not in (1, 2) or shape[0] != n:
            raise ValueError(f"{self._name}.{name}: an operand of shape {shape} for an "
                             f"operator of shape {self.shape}; expected ({n},), ({n}, 1) "
                             f"or ({n}, k)")
        if _called_by_scipy():  # numbers only: a traced product is refused
            if isinstance(x, Box):
                raise TypeError(self._refusal())
            x = np.asarray(x, dtype=self.dtype)
            columns = [self._numbers(product(x[:, j] if x.ndim == 2 else x))
                       for j in range(x.shape[1] if x.ndim == 2 else 1)]
            return np.stack(columns, axis=1) if x.ndim == 2 else columns[0]
        if len(shape) == 1:
            return product(x)
        if not isinstance(x, Box):
            x = np.asarray(x)
        columns = [ops.reshape(product(x[:, j]), (-1,)) for j in range(shape[1])]
        return ops.stack(columns, axis=1)

    def _adjoint(self):  # (backward is the conjugate transpose: SciPy's rmatvec)
        return type(self)(self.shape[::-1], self._backward, self._forward, self.traced,
                          self._name, self.dtype)

    def _transpose(self):
        if self.dtype.kind != "c":  # a real matrix: its adjoint
            return self._adjoint()
        forward, backward = self._forward, self._backward
        return type(self)(self.shape[::-1], lambda v: ops.conj(backward(ops.conj(v))),
                          lambda u: ops.conj(forward(ops.conj(u))), self.traced, self._name,
                          self.dtype)


def flat(x):
    return ops.reshape(x, (-1,)) if isinstance(x, Box) else np.ravel(np.asarray(x))


def shaped(v, shape):
    return ops.reshape(v, shape) if isinstance(v, Box) else np.reshape(v, shape)


def numbers(x, name):
    """x as a float64 array, or complex128 (a list, a Tensor outside any graph, a float)."""
    try:
        return np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected numbers or an array (or a traced value), got "
                        f"{type(x).__name__} ({err})") from None


# ---------------------------------------------------------------------------------------
# The operators of a function: its Jacobian and its Hessian
# ---------------------------------------------------------------------------------------

def linear_operator(f: Callable[..., Any], x: ArrayLike) -> DerivativeOperator:
    """The Jacobian of ``f`` at ``x`` as a ``scipy.sparse.linalg.LinearOperator``:
    ``matvec`` is a jvp, ``rmatvec`` a vjp; the matrix is never formed.

    Its shape is (out.size, x.size), for SciPy's iterative solvers (needs SciPy).
    Inside a transform the products are traced values, differentiable in x, in what f
    closes over and in the vector (SciPy's solvers cannot take it there).

    Complex numbers: the matrix is complex (complex128) where x or f's output is: the
    derivative f'(z) of a holomorphic f (as JAX's ``holomorphic=True`` takes f), or the
    complex Jacobian of a real input; ``rmatvec`` is then the conjugate transpose's
    product, as SciPy's. A complex input with real outputs is refused: no complex
    matrix stands for that derivative (cr.jvp and cr.vjp give it).

    >>> f = lambda x: cr.stack([x[0] * x[1], x[0] + x[1], x[1]])     # R^2 -> R^3
    >>> J = cr.linear_operator(f, np.array([2.0, 3.0]))
    >>> J.shape
    (3, 2)
    >>> J.matvec(np.array([1.0, 0.0])).tolist()            # J @ v, the first column
    [3.0, 1.0, 0.0]
    >>> J.rmatvec(np.array([1.0, 0.0, 0.0])).tolist()      # J.T @ u, the first row
    [3.0, 2.0]
    >>> u, v = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0])
    >>> cr.grad(lambda x: u @ cr.linear_operator(f, x).matvec(v))(np.array([2.0, 3.0]))
    array([1., 0.])
    """
    traced = in_graph(x)
    if not traced:
        x = numbers(x, "linear_operator")
    out, f_vjp = vjp(f, x)
    traced = traced or in_graph(out)
    if not traced:
        out = numbers(out, "linear_operator")
    x_shape, out_shape = np.shape(raw(x)), np.shape(raw(out))
    complex_in, complex_out = np.iscomplexobj(raw(x)), np.iscomplexobj(raw(out))
    if complex_in and not complex_out:
        raise TypeError("linear_operator: f maps complex inputs to real outputs, whose "
                        "derivative is no complex matrix (it is not complex-linear); use "
                        "cr.jvp and cr.vjp, or real and imaginary parts as real inputs")

    def forward(v):
        v = shaped(v, x_shape)
        if complex_out and not complex_in:  # a real input's tangent is real: J v in parts
            return flat(jvp(f, (x,), (ops.real(v),))[1]
                        + 1j * jvp(f, (x,), (ops.imag(v),))[1])
        return flat(jvp(f, (x,), (v,))[1])

    def backward(u):
        u = shaped(u, out_shape)
        if not complex_out:
            return flat(f_vjp(u)[0])
        # J^H u = conj(J^T conj(u)); the VJP is the transpose (JAX's convention), but a
        # real input keeps its real part: J^T c = vjp(c) + i vjp(-i c) there.
        c = ops.conj(u)
        transposed = f_vjp(c)[0]
        if not complex_in:
            transposed = transposed + 1j * f_vjp(-1j * c)[0]
        return flat(ops.conj(transposed))

    dtype = np.complex128 if complex_in or complex_out else np.float64
    return operator_class()((int(np.prod(out_shape)), int(np.prod(x_shape))), forward,
                             backward, traced, "linear_operator", dtype)


def hessian_operator(f: Callable[..., Any], x: ArrayLike) -> DerivativeOperator:
    """The Hessian of scalar ``f`` at ``x`` as a symmetric ``LinearOperator`` (hvp).

    Its shape is (x.size, x.size); each product costs two backward passes. Inside a
    transform the products are traced values, as for ``linear_operator``. A complex x
    is refused: the Hessian of a real function of z is no complex matrix (``cr.hvp``
    gives its products, as jvp of grad does in JAX).

    >>> H = cr.hessian_operator(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]))
    >>> H.matvec(np.array([1.0, 1.0])).tolist()            # diag(6x) @ [1, 1]
    [6.0, 12.0]
    """
    traced = in_graph(x)
    if not traced:
        x = numbers(x, "hessian_operator")
        traced = in_graph(f(x))  # f closes over a traced value
    if np.iscomplexobj(raw(x)):
        raise TypeError("hessian_operator: complex inputs; the Hessian of a real function "
                        "of z is no complex matrix (it is not complex-linear): cr.hvp(f, z, "
                        "v) gives its products")
    x_shape = np.shape(raw(x))

    def product(v):
        return flat(hvp(f, x, shaped(v, x_shape)))

    size = int(np.prod(x_shape))
    return operator_class()((size, size), product, product, traced, "hessian_operator")
