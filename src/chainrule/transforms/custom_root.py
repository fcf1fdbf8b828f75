"""``cr.custom_root`` and ``cr.custom_linear_solve``: JAX's ``lax`` functions that wrap a
user's own solver so that its answer is differentiated by the implicit function
theorem, not through its iterations.

Both are ``implicit_solution`` (implicit.py) with the user's solvers in place of
chainrule's: the solve runs on plain numbers (the function it is handed returns
numbers), and the derivative rules solve their linear systems with the user's
``tangent_solve`` (``custom_root``) or ``solve`` / ``transpose_solve``
(``custom_linear_solve``), handed the Jacobian as a function v -> J v. What the answer
is differentiated with respect to is what JAX's is: the values ``f`` or ``matvec``
closes over (found at a capture level) and ``b``; never the initial guess.

Rules written with chainrule's operations, as the user's linear solvers must be for a
second derivative (as in JAX, where they are traced). Under ``cr.vmap`` each example is
solved on its own. The solution and ``b`` are arrays (JAX also takes pytrees).
"""

from typing import Any, Callable

import numpy as np

from .. import rules as ops
from ..primitive import Box, shape_of
from .implicit import implicit_solution, on_numbers, plain

__all__ = ["custom_root", "custom_linear_solve"]


def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any],
                has_aux: bool = False) -> Any:
    """The root x of ``f`` found by ``solve(f, initial_guess)``, differentiable with
    respect to the values ``f`` closes over by the implicit function theorem
    (``jax.lax.custom_root``): a derivative solves the linearised system with
    ``tangent_solve(g, y)``, which returns v with g(v) = y for the linear function g
    (v -> J v, J = df/dx at the root, or its transpose in reverse mode). The initial
    guess has no derivative. With ``has_aux``, ``solve`` returns (x, aux), and so does
    this (aux as it is, not differentiated).

    >>> def sqrt(a):                     # Newton's method, differentiated implicitly
    ...     def newton(f, x):
    ...         for _ in range(30):
    ...             x = x - f(x) / (2 * x)
    ...         return x
    ...     return cr.custom_root(lambda x: x ** 2 - a, 1.0, newton,
    ...                           lambda g, y: y / g(1.0))
    >>> float(sqrt(4.0)), float(cr.grad(sqrt)(4.0)), float(cr.hessian(sqrt)(4.0))
    (2.0, 0.25, -0.03125)
    """
    _callables("custom_root", f=f, solve=solve, tangent_solve=tangent_solve)
    _array("custom_root", "initial_guess", initial_guess)
    shape = shape_of(initial_guess)
    aux = []

    def run_solve(tree):
        guess, = tree
        numbers = on_numbers(f, "custom_root")
        found = solve(numbers, np.asarray(guess, dtype=np.result_type(guess, float)))
        if has_aux:
            found, extra = found
            aux.append(extra)
        return plain(found, "custom_root")

    def tangent(matvec, rhs):  # the user's tangent_solve, on f's shapes
        g = (lambda v: ops.reshape(matvec(ops.reshape(v, (-1,))), shape))
        return ops.reshape(tangent_solve(g, ops.reshape(rhs, shape)), (-1,))

    guess = ops.stop_gradient(initial_guess) if isinstance(initial_guess, Box) \
        else initial_guess
    x = implicit_solution(lambda x, guess: f(x), run_solve, (guess,), "custom_root",
                          at=guess, linear_solve=tangent, transposed_solve=tangent)
    x = ops.reshape(x, shape)
    return (x, aux[-1]) if has_aux else x


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """x = ``solve(matvec, b)``, the solution of A x = b for the linear function
    ``matvec`` (v -> A v), differentiable with respect to ``b`` and to the values
    ``matvec`` closes over (``jax.lax.custom_linear_solve``): forward mode solves with
    ``solve``, reverse mode with ``transpose_solve(vecmat, c)`` (v -> A^T v), or with
    ``solve`` when ``symmetric``; without either, reverse mode is refused, as in JAX.
    With ``has_aux``, ``solve`` returns (x, aux), and so does this.

    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> dense = lambda matvec, b: np.linalg.solve(A, b)   # any solver of A x = b
    >>> x = lambda b: cr.custom_linear_solve(lambda v: A @ v, b, dense, symmetric=True)
    >>> x(np.array([1.0, 2.0])).round(6).tolist()
    [0.090909, 0.636364]
    >>> bool(np.allclose(cr.jacrev(x)(np.ones(2)), np.linalg.inv(A)))
    True
    """
    _callables("custom_linear_solve", matvec=matvec, solve=solve)
    _array("custom_linear_solve", "b", b)
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(f"custom_linear_solve: transpose_solve must be a function "
                        f"(vecmat, b) -> x, got {type(transpose_solve).__name__}")
    shape = shape_of(b)
    aux = []

    def answer(found):
        return found[0] if has_aux else found

    def run_solve(tree):
        rhs, = tree
        numbers = on_numbers(matvec, "custom_linear_solve")
        found = solve(numbers, np.asarray(rhs, dtype=np.result_type(rhs, float)))
        if has_aux:
            aux.append(found[1])
        return plain(answer(found), "custom_linear_solve")

    def with_solver(user_solve):
        def linear(mv, rhs):  # the user's solver, on b's shapes
            along = (lambda v: ops.reshape(mv(ops.reshape(v, (-1,))), shape))
            return ops.reshape(answer(user_solve(along, ops.reshape(rhs, shape))), (-1,))
        return linear

    def refused(mv, rhs):
        raise TypeError("custom_linear_solve: reverse mode needs transpose_solve= (or "
                        "symmetric=True when A is symmetric), as in JAX")

    transposed = with_solver(solve if symmetric else transpose_solve) \
        if symmetric or transpose_solve is not None else refused
    x = implicit_solution(lambda x, b: matvec(x) - b, run_solve, (b,),
                          "custom_linear_solve", at=b, linear_solve=with_solver(solve),
                          transposed_solve=transposed)
    x = ops.reshape(x, shape)
    return (x, aux[-1]) if has_aux else x


def _callables(who, **functions):
    for name, fun in functions.items():
        if not callable(fun):
            raise TypeError(f"{who}: {name} must be a function, got "
                            f"{type(fun).__name__} {fun!r:.40}")


def _array(who, name, value):
    if isinstance(value, (list, tuple, dict)):
        raise TypeError(f"{who}: {name} must be an array or a number (a pytree of them, "
                        f"which JAX takes, is not supported: pass one array)")
