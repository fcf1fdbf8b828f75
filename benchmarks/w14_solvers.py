"""Workload 14: derivatives through SciPy's solvers (``chainrule.scipy.optimize``): what
the derivative of a converged solve costs beside the solve.

For each solver, one problem of n unknowns and its parameters:

* ``minimize`` (BFGS): ridge regression's weights (n = 50, 200 data points), the
  gradient of a validation loss with respect to the penalty;
* ``minimize`` (trust-exact): the same, the solver given chainrule's Hessian;
* ``root`` (hybr): a nonlinear system of n = 50 equations (a tridiagonal coupling plus
  x**3), the Jacobian-vector product of the solution with respect to its right side;
* ``least_squares`` (trf): an exponential fit of 3 parameters to 200 points, the
  Jacobian of the fit with respect to the data (200 columns);
* ``brentq``: a scalar root, the gradient with respect to its parameter;
* ``minimize`` (SLSQP) with constraints: a long-only portfolio of n assets (weights
  summing to 1, some at their bound 0), the gradient of its expected return with
  respect to the expected returns, through the KKT conditions;
* ``least_squares`` (trf) with bounds: the exponential fit with its amplitude capped
  (active at the answer), the Jacobian of the fit with respect to the data, through
  the KKT conditions of the bounded problem.

Each is timed two ways: the solve through chainrule with nothing to differentiate
(``solve``: SciPy given chainrule's exact derivatives) and the solve with its derivative
(``solve + derivative``). The target (issue 46): the derivative of a converged solve
costs about one linear solve with the Hessian or Jacobian (and the derivatives that
build it), so ``solve + derivative`` stays within 3x of the solve.

    python benchmarks/w14_solvers.py [tiny|quick|full]
"""
import sys

import numpy as np

from common import interleave, pick, print_targets, row

NAME = "derivatives through solvers"


def ridge(n, rng):
    import chainrule as cr
    from chainrule.scipy import optimize
    X, X_val = rng.normal(size=(200, n)), rng.normal(size=(50, n))
    y, y_val = rng.normal(size=200), rng.normal(size=50)

    def loss(w, lam):
        r = X @ w - y
        return 0.5 * cr.sum(r * r) + 0.5 * lam * cr.sum(w * w)

    def problem(method):
        def validation(lam):
            w = optimize.minimize(loss, np.zeros(n), args=(lam,), method=method,
                                  options={"gtol": 1e-8}).x
            r = X_val @ w - y_val
            return cr.sum(r * r)
        return (lambda: validation(0.5)), (lambda: cr.grad(validation)(0.5))
    return problem


def system(n, rng):
    import chainrule as cr
    from chainrule.scipy import optimize
    b = rng.normal(size=n)

    def residual(x, b):
        coupled = 2.5 * x - cr.concatenate([x[1:], np.zeros(1)]) - \
            cr.concatenate([np.zeros(1), x[:-1]])
        return coupled + x ** 3 - b

    def solve(b):
        return optimize.root(residual, np.zeros(n), args=(b,), tol=1e-12).x
    direction = rng.normal(size=n)
    return (lambda: solve(b)), (lambda: cr.jvp(solve, (b,), (direction,))[1])


def exponential_fit(rng):
    import chainrule as cr
    from chainrule.scipy import optimize
    t = np.linspace(0.0, 3.0, 200)
    y = 2.0 * np.exp(-0.8 * t) + 0.3 + 0.02 * rng.normal(size=200)

    def fit(y):
        return optimize.least_squares(lambda c, y: c[0] * cr.exp(-c[1] * t) + c[2] - y,
                                      np.array([1.0, 1.0, 0.0]), args=(y,)).x
    return (lambda: fit(y)), (lambda: cr.jacrev(fit)(y))


def capped_fit(rng):
    import chainrule as cr
    from chainrule.scipy import optimize
    t = np.linspace(0.0, 3.0, 200)
    y = 2.0 * np.exp(-0.8 * t) + 0.3 + 0.02 * rng.normal(size=200)

    def fit(y):  # the amplitude capped at 1.5: active at the answer
        return optimize.least_squares(lambda c, y: c[0] * cr.exp(-c[1] * t) + c[2] - y,
                                      np.array([1.0, 1.0, 0.0]), args=(y,),
                                      bounds=([0.0, 0.0, -1.0], [1.5, 5.0, 1.0])).x
    return (lambda: fit(y)), (lambda: cr.jacrev(fit)(y))


def scalar_root():
    import chainrule as cr
    from chainrule.scipy import optimize

    def crossing(k):
        return optimize.brentq(lambda x, k: cr.cos(x) - k * x, 0.0, 2.0, args=(k,))
    return (lambda: crossing(1.0)), (lambda: cr.grad(crossing)(1.0))


def portfolio(n, rng):
    import chainrule as cr
    from chainrule.scipy import optimize
    factors = rng.normal(size=(n, 3))
    cov = factors @ factors.T / 3 + 0.05 * np.eye(n)
    mu = rng.normal(0.05, 0.05, size=n)

    def expected_return(mu):
        w = optimize.minimize(lambda w, mu: 2.0 * cr.sum(w * cr.matmul(cov, w)) - cr.sum(mu * w),
                              np.full(n, 1.0 / n), args=(mu,), method="SLSQP",
                              bounds=[(0.0, None)] * n, options={"ftol": 1e-12},
                              constraints={"type": "eq", "fun": lambda w: cr.sum(w) - 1.0}).x
        return cr.sum(w * mu)
    return (lambda: expected_return(mu)), (lambda: cr.grad(expected_return)(mu))


def run(size="quick"):
    n = pick(size, 5, 30, 50)
    repeats = pick(size, 1, 5, 15)
    rng = np.random.default_rng(0)
    ridge_problem = ridge(n, rng)
    cases = {
        f"minimize (BFGS), n = {n}": ridge_problem("BFGS"),
        f"minimize (trust-exact), n = {n}": ridge_problem("trust-exact"),
        f"root (hybr), n = {n}": system(n, rng),
        "least_squares (trf), 3 parameters, 200 points": exponential_fit(rng),
        "brentq": scalar_root(),
        f"minimize (SLSQP) with constraints, n = {n}": portfolio(n, rng),
        "least_squares (trf) with an active bound, 3 parameters, 200 points": capped_fit(rng),
    }
    rows = []
    for case, (solve, with_derivative) in cases.items():
        times = interleave({"solve": solve, "solve + derivative": with_derivative},
                           repeats, warmup=1)
        for way, measured in times.items():
            rows.append(row(NAME, f"{case}: {way}", "chainrule", measured))
    return rows


def _ratios(rows):
    found = {}
    for r in rows:
        if r["workload"] != NAME or r.get("median_s") is None:
            continue
        case, way = r["case"].rsplit(": ", 1)
        found.setdefault(case, {})[way] = r["median_s"]
    return {case: ways["solve + derivative"] / ways["solve"] for case, ways in found.items()
            if "solve" in ways and "solve + derivative" in ways}


def _target(rows):
    name = "w14: a solve with its derivative within 3x of the solve (issue 46)"
    ratios = _ratios(rows)
    if not ratios:
        return name, None, "not measured"
    worst = max(ratios, key=ratios.get)
    return name, ratios[worst] < 3.0, (", ".join(f"{case.split(',')[0]} x{ratio:.2f}"
                                                  for case, ratio in ratios.items())
                                       + f"; worst: {worst}")


TARGETS = [_target]


def _print(rows):
    print(f"{'case':70s} {'median':>10s}")
    for r in rows:
        print(f"{r['case']:70s} {1e3 * r['median_s']:7.2f} ms")
    for case, ratio in _ratios(rows).items():
        print(f"{case:62s} derivative x{ratio:.2f}")
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
