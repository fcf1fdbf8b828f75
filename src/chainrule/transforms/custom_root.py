"""``cr.custom_root`` and ``cr.custom_linear_solve``: JAX's ``lax`` functions that wrap a
user's own solver so that its answer is differentiated by the implicit function
theorem, not through its iterations.

Both are ``implicit_solution`` (implicit.py) with the user's solvers in place of
chainrule's: the solve runs on plain numbers (the function it is handed returns
numbers), and the derivative rules solve their linear systems with the user's
``tangent_solve`` (``custom_root``) or ``solve`` / ``transpose_solve``
(``custom_linear_solve``), handed the Jacobian as a function v -> J v. What the answer
is differentiated with respect to is what JAX's is: the values ``f`` or ``matvec``
closes over (found at a capture level) and ``b``; never the initial guess, nor what
the solvers themselves close over (constants of the rules, as in JAX: a solver that
closes over the value being differentiated still gives plain derivatives).

Rules written with chainrule's operations, as the user's linear solvers must be for a
second derivative (as in JAX, where they are traced). Under ``cr.vmap`` each example is
solved on its own. ``custom_root``'s solution and ``custom_linear_solve``'s ``b`` may
be pytrees (nested tuples, lists and dicts of arrays, as JAX's): they are solved for as
one flat vector, and the user's functions see pytrees of their structure.
"""

from typing import Any, Callable

import numpy as np

from .. import rules as ops
from ..arrays import ARRAYS
from ..primitive import Box, shape_of
from .implicit import implicit_solution
from .solver_numbers import on_numbers, plain
from .pytrees import LEAF, tree_flatten, tree_unflatten

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
    this (aux as it is, not differentiated). x may be a pytree (``f`` then returns one
    of the same structure, and g, y and v are such pytrees too).

    >>> def sqrt(a):                     # Newton's method, differentiated implicitly
    ...     def newton(f, x):
    ...         for _ in range(30):
    ...             x = x - f(x) / (2 * x)
    ...         return x
    ...     return cr.custom_root(lambda x: x ** 2 - a, 1.0, newton,
    ...                           lambda g, y: y / g(1.0))
    >>> float(sqrt(4.0)), float(cr.grad(sqrt)(4.0)), float(cr.hessian(sqrt)(4.0))
    (2.0, 0.25, -0.03125)
    >>> def both(a):                     # a pytree: r = sqrt(a), h = a / 2
    ...     f = lambda x: {"r": x["r"] ** 2 - a, "h": 2 * x["h"] - a}
    ...     def newton(f, x):
    ...         for _ in range(30):
    ...             x = {"r": x["r"] - f(x)["r"] / (2 * x["r"]), "h": x["h"] - f(x)["h"] / 2}
    ...         return x
    ...     def diagonal(g, y):              # J is diagonal: g of ones is its diagonal
    ...         d = g({"r": 1.0, "h": 1.0})
    ...         return {"r": y["r"] / d["r"], "h": y["h"] / d["h"]}
    ...     return cr.custom_root(f, {"r": 1.0, "h": 0.0}, newton, diagonal)
    >>> {k: float(v) for k, v in both(4.0).items()}
    {'r': 2.0, 'h': 2.0}
    >>> float(cr.grad(lambda a: both(a)["r"] + both(a)["h"])(4.0))   # 1/(2 sqrt a) + 1/2
    0.75
    """
    _callables("custom_root", f=f, solve=solve, tangent_solve=tangent_solve)
    flat_guess, to_tree, to_flat = _flattened("custom_root", "initial_guess", initial_guess)
    aux = []

    def flat_f(x):
        return to_flat(f(to_tree(x)), "f's value")

    def run_solve(tree):
        guess, = tree
        numbers = on_numbers(flat_f, "custom_root")
        found = solve(lambda x: to_tree(numbers(to_flat(x, "f's argument"))),
                      to_tree(np.asarray(guess, dtype=np.result_type(guess, float))))
        if has_aux:
            found, extra = found
            aux.append(extra)
        return plain(to_flat(found, "solve's answer"), "custom_root")

    def tangent(matvec, rhs):  # the user's tangent_solve, on f's pytrees
        g = (lambda v: to_tree(matvec(to_flat(v, "the argument of g"))))
        return to_flat(tangent_solve(g, to_tree(rhs)), "tangent_solve's answer")

    guess = ops.stop_gradient(flat_guess) if isinstance(flat_guess, Box) else flat_guess
    x = implicit_solution(lambda x, guess: flat_f(x), run_solve, (guess,), "custom_root",
                          at=guess, linear_solve=tangent, transposed_solve=tangent)
    x = to_tree(x)
    return (x, aux[-1]) if has_aux else x


def _flattened(who, name, tree):
    """The leaves of ``tree`` as one flat vector, and the functions between such vectors
    and pytrees of its structure (``to_flat(tree, what)`` refuses another structure in
    one line, naming ``what``)."""
    leaves, treedef = tree_flatten(tree)
    if not leaves:
        raise TypeError(f"{who}: {name} must hold at least one array")
    for leaf in leaves:
        if not _is_array(leaf):
            raise TypeError(f"{who}: {name}'s leaves must be arrays or numbers, got "
                            f"{type(leaf).__name__} {leaf!r:.40}")
    shapes = [shape_of(leaf) for leaf in leaves]
    bounds = np.cumsum([0] + [int(np.prod(s)) for s in shapes]).tolist()

    def to_tree(v):
        if treedef == LEAF:
            return ops.reshape(v, shapes[0])
        return tree_unflatten(treedef, [ops.reshape(v[a:b], s)
                                        for s, a, b in zip(shapes, bounds, bounds[1:])])

    def to_flat(value, what):
        parts, structure = tree_flatten(value)
        if structure != treedef or [shape_of(p) for p in parts] != shapes:
            raise TypeError(f"{who}: {what} must be a pytree of {name}'s structure and "
                            f"shapes, {_described(treedef, shapes)}; got "
                            f"{_described(structure, [shape_of(p) for p in parts])}")
        if treedef == LEAF:
            return ops.reshape(parts[0], (-1,))
        return ops.concatenate([ops.reshape(p, (-1,)) for p in parts])

    return to_flat(tree, name), to_tree, to_flat


def _described(treedef, shapes):
    return f"{tree_unflatten(treedef, ['*'] * len(shapes))} of shapes {shapes}"


def _is_array(leaf):
    # (ARRAYS: cr.jit's traced arrays too)
    return (isinstance(leaf, (np.ndarray, np.generic, Box, int, float, complex))
            or type(leaf) in ARRAYS) and not isinstance(leaf, bool)


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """x = ``solve(matvec, b)``, the solution of A x = b for the linear function
    ``matvec`` (v -> A v), differentiable with respect to ``b`` and to the values
    ``matvec`` closes over (``jax.lax.custom_linear_solve``): forward mode solves with
    ``solve``, reverse mode with ``transpose_solve(vecmat, c)`` (v -> A^T v), or with
    ``solve`` when ``symmetric``; without either, reverse mode is refused, as in JAX.
    With ``has_aux``, ``solve`` returns (x, aux), and so does this. b may be a pytree (x
    is then one of its structure, and so are what matvec and the solvers take and
    return).

    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> dense = lambda matvec, b: np.linalg.solve(A, b)   # any solver of A x = b
    >>> x = lambda b: cr.custom_linear_solve(lambda v: A @ v, b, dense, symmetric=True)
    >>> x(np.array([1.0, 2.0])).round(6).tolist()
    [0.090909, 0.636364]
    >>> bool(np.allclose(cr.jacrev(x)(np.ones(2)), np.linalg.inv(A)))
    True
    """
    _callables("custom_linear_solve", matvec=matvec, solve=solve)
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(f"custom_linear_solve: transpose_solve must be a function "
                        f"(vecmat, b) -> x, got {type(transpose_solve).__name__}")
    flat_b, to_tree, to_flat = _flattened("custom_linear_solve", "b", b)
    aux = []

    def answer(found):
        return found[0] if has_aux else found

    def flat_matvec(v):
        return to_flat(matvec(to_tree(v)), "matvec's value")

    def run_solve(tree):
        rhs, = tree
        numbers = on_numbers(flat_matvec, "custom_linear_solve")
        found = solve(lambda v: to_tree(numbers(to_flat(v, "matvec's argument"))),
                      to_tree(np.asarray(rhs, dtype=np.result_type(rhs, float))))
        if has_aux:
            aux.append(found[1])
        return plain(to_flat(answer(found), "solve's answer"), "custom_linear_solve")

    def with_solver(user_solve):
        def linear(mv, rhs):  # the user's solver, on b's pytrees
            along = (lambda v: to_tree(mv(to_flat(v, "the argument of matvec"))))
            return to_flat(answer(user_solve(along, to_tree(rhs))), "solve's answer")
        return linear

    def refused(mv, rhs):
        raise TypeError("custom_linear_solve: reverse mode needs transpose_solve= (or "
                        "symmetric=True when A is symmetric), as in JAX")

    transposed = with_solver(solve if symmetric else transpose_solve) \
        if symmetric or transpose_solve is not None else refused
    x = implicit_solution(lambda x, b: flat_matvec(x) - b, run_solve, (flat_b,),
                          "custom_linear_solve", at=flat_b, linear_solve=with_solver(solve),
                          transposed_solve=transposed)
    x = to_tree(x)
    return (x, aux[-1]) if has_aux else x


def _callables(who, **functions):
    for name, fun in functions.items():
        if not callable(fun):
            raise TypeError(f"{who}: {name} must be a function, got "
                            f"{type(fun).__name__} {fun!r:.40}")
