"""SciPy's trust-region Newton-CG optimizer, fed by chainrule's derivatives.

``scipy.optimize.minimize(..., method="trust-ncg")`` needs the gradient and, instead of
the whole Hessian, only Hessian-vector products H(x) p (its inner conjugate-gradient
solver asks for one per iteration). chainrule gives both:

    jac   = cr.grad(f)                       # reverse mode
    hessp = lambda x, p: cr.hvp(f, x, p)     # reverse over reverse; H is never formed

We minimize the Rosenbrock function (minimum at all ones), after checking our
derivatives against SciPy's hand-written ones (scipy.optimize.rosen_der and
rosen_hess_prod) at a few points, and compare with the run that uses SciPy's.

Run it with:  python examples/trust_ncg.py
"""

import numpy as np
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess_prod

import chainrule as cr


def rosenbrock(x):
    """The n-dimensional Rosenbrock function, written with chainrule's operations."""
    return cr.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


gradient = cr.grad(rosenbrock)


def hessian_times(x, p):
    return cr.hvp(rosenbrock, x, p)


def compare_with_scipy(points, directions):
    """Largest relative difference from SciPy's derivatives over all the points."""
    grad_error = hessp_error = 0.0
    for x, p in zip(points, directions):
        ours, theirs = gradient(x), rosen_der(x)
        grad_error = max(grad_error, np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
        ours, theirs = hessian_times(x, p), rosen_hess_prod(x, p)
        hessp_error = max(hessp_error, np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
    return grad_error, hessp_error


def main():
    rng = np.random.default_rng(0)
    n = 6
    points = [rng.uniform(-2, 2, n) for _ in range(5)]
    directions = [rng.standard_normal(n) for _ in range(5)]
    grad_error, hessp_error = compare_with_scipy(points, directions)
    print(f"at {len(points)} random points in {n}-D, largest relative difference from SciPy:")
    print(f"  cr.grad vs rosen_der:       {grad_error:.1e}")
    print(f"  cr.hvp  vs rosen_hess_prod: {hessp_error:.1e}")

    x0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.5, 0.2])
    ours = minimize(rosenbrock, x0, method="trust-ncg", jac=gradient, hessp=hessian_times,
                    options={"gtol": 1e-10})
    scipys = minimize(rosen, x0, method="trust-ncg", jac=rosen_der, hessp=rosen_hess_prod,
                      options={"gtol": 1e-10})
    print(f"\ntrust-ncg from {x0}:")
    for label, result in (("chainrule derivatives", ours), ("SciPy derivatives", scipys)):
        print(f"  {label:22s} x = {np.array2string(result.x, precision=10)},"
              f" max |x - 1| = {np.max(np.abs(result.x - 1)):.1e}")
        print(f"  {'':22s} {result.nit} iterations, {result.nhev} Hessian-vector products,"
              f" success={result.success}")
    difference = np.max(np.abs(ours.x - scipys.x))
    print(f"  the two answers differ by at most {difference:.1e}")
    return {"grad_error": grad_error, "hessp_error": hessp_error, "x0": x0,
            "ours": ours, "scipy": scipys, "difference": difference}


if __name__ == "__main__":
    main()
