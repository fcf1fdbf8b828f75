"""Newton's method on the Rosenbrock function, with derivatives from chainrule.

The n-dimensional Rosenbrock function

    f(x) = sum over i of  100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2

has its minimum f = 0 at x = (1, 1, ..., 1), at the end of a long, curved, narrow
valley: a classic test for optimizers. Newton's method models f near x by its
second-order Taylor expansion and jumps to that model's minimum:

    solve  H(x) p = -g(x)   for the step p,     g = cr.grad(f)(x),  H = cr.hessian(f)(x)

Near the minimum this converges quadratically (the number of correct digits roughly
doubles each step). Far from it a full step can overshoot, so we shorten the step until
f decreases enough (a backtracking line search).

We run it from the textbook start (-1.2, 1) in 2-D and from a start in 5-D.

Run it with:  python examples/newton_rosenbrock.py
"""

import numpy as np

import chainrule as cr


def rosenbrock(x):
    # Slices pair each x[i] with x[i+1]; the same code runs on NumPy arrays and on
    # the Tensors that cr.grad and cr.hessian pass in.
    return cr.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


gradient = cr.grad(rosenbrock)
hessian = cr.hessian(rosenbrock)


def newton(f, x0, tol=1e-10, max_iter=100):
    """Minimize f from x0 by Newton steps with backtracking; stop when |grad| < tol.
    Returns the point, the number of steps taken and the final gradient norm."""
    x = np.asarray(x0, dtype=float)
    steps = 0
    while steps < max_iter:
        g = gradient(x)
        if np.linalg.norm(g) < tol:
            break
        step = np.linalg.solve(hessian(x), -g)
        slope = g @ step
        if slope >= 0:
            # The Hessian is not positive definite here, so the Newton step does not
            # point downhill; fall back to steepest descent for this iteration.
            step, slope = -g, -(g @ g)
        # Backtracking (Armijo): halve the step until f drops by at least a small
        # fraction of what the linear model predicts.
        t, fx = 1.0, f(x)
        while f(x + t * step) > fx + 1e-4 * t * slope and t > 1e-10:
            t /= 2
        x = x + t * step
        steps += 1
    return x, steps, np.linalg.norm(gradient(x))


def main():
    starts = {"2-D": np.array([-1.2, 1.0]),
              "5-D": np.array([-0.5, 1.5, 0.5, -1.0, 2.0])}
    results = {}
    for name, x0 in starts.items():
        x, iterations, grad_norm = newton(rosenbrock, x0)
        error = np.max(np.abs(x - 1))
        results[name] = {"start": x0, "x": x, "iterations": iterations,
                         "grad_norm": grad_norm, "f": float(rosenbrock(x)), "error": error}
        print(f"{name}: from {x0}")
        print(f"     reached x = {np.array2string(x, precision=12)}"
              f" in {iterations} Newton iterations")
        print(f"     max |x - 1| = {error:.1e}, |grad f| = {grad_norm:.1e},"
              f" f = {float(rosenbrock(x)):.1e}")
    return results


if __name__ == "__main__":
    main()
