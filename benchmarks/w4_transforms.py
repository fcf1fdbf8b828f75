"""Workload 4: Jacobians and Hessians (function transforms).

* Jacobian of f(x) = tanh(W x) + x**2, R^n -> R^n, by reverse mode (jacrev) and forward
  mode (jacfwd), n = 100 and 1000;
* Hessian of the scalar g(x) = sum(log(1 + x**2)) + sum(tanh(W x)**2), n = 100 and 1000.

W is fixed (seeded, N(0, 1/n)), float64 throughout. Libraries: chainrule (cr.jacrev,
cr.jacfwd, cr.hessian), torch.func (jacrev, jacfwd, hessian), HIPS autograd (jacobian,
which is reverse mode, and hessian; it has no forward-mode Jacobian), JAX op by op and
jitted, and a "numpy" row: the closed form worked out by hand (the floor:
J = diag(1 - t**2) W + diag(2x), H = W^T diag(2 (1 - t**2)(1 - 3 t**2)) W +
diag(2 (1 - x**2) / (1 + x**2)**2), t = tanh(W x)).

Every library's result is checked against the closed form before timing (a mismatch
raises). Each transformed function is built once and then called; the timing is
interleaved, after a warm-up (which also compiles the jitted ones), and the median kept.

    python benchmarks/w4_transforms.py [tiny|quick|full]
"""
import sys
import time

import numpy as np

from common import interleave as _interleave, print_targets, row as _row  # noqa: E402

NAME = "transforms"


def interleaved(fns, repeats, warmup=1):
    """{name: [seconds, ...]}: each callable run ``repeats`` times, taking turns."""
    return _interleave(fns, repeats, warmup)


def make_row(workload, case, library, ts, **extra):
    return _row(workload, case, library, ts, **extra)


# ---------------------------------------------------------------------------------------
# The problem and its closed form
# ---------------------------------------------------------------------------------------

def make_problem(n, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)
    return W, x


def jacobian_by_hand(W, x):
    t = np.tanh(W @ x)
    J = (1 - t * t)[:, None] * W
    J[np.diag_indices_from(J)] += 2 * x
    return J


def hessian_by_hand(W, x):
    t = np.tanh(W @ x)
    s = t * t
    H = W.T @ ((2 * (1 - s) * (1 - 3 * s))[:, None] * W)
    x2 = x * x
    H[np.diag_indices_from(H)] += 2 * (1 - x2) / (1 + x2) ** 2
    return H


# ---------------------------------------------------------------------------------------
# Each library: {kind: callable()} for kind in jacrev, jacfwd, hessian
# ---------------------------------------------------------------------------------------

def numpy_fns(W, x):
    return {"jacrev": lambda: jacobian_by_hand(W, x),
            "jacfwd": lambda: jacobian_by_hand(W, x),
            "hessian": lambda: hessian_by_hand(W, x)}


def chainrule_fns(W, x):
    import chainrule as cr

    def f(x):
        return cr.tanh(W @ x) + x ** 2

    def g(x):
        return cr.sum(cr.log(1 + x ** 2)) + cr.sum(cr.tanh(W @ x) ** 2)

    jr, jf, h = cr.jacrev(f), cr.jacfwd(f), cr.hessian(g)
    return {"jacrev": lambda: jr(x), "jacfwd": lambda: jf(x), "hessian": lambda: h(x)}


def torch_fns(W, x):
    import torch
    from torch.func import hessian, jacfwd, jacrev

    Wt, xt = torch.from_numpy(W), torch.from_numpy(x)

    def f(x):
        return torch.tanh(Wt @ x) + x ** 2

    def g(x):
        return torch.sum(torch.log(1 + x ** 2)) + torch.sum(torch.tanh(Wt @ x) ** 2)

    jr, jf, h = jacrev(f), jacfwd(f), hessian(g)
    return {"jacrev": lambda: jr(xt), "jacfwd": lambda: jf(xt), "hessian": lambda: h(xt)}


def autograd_fns(W, x):
    import autograd.numpy as anp
    from autograd import hessian, jacobian

    def f(x):
        return anp.tanh(anp.dot(W, x)) + x ** 2

    def g(x):
        return anp.sum(anp.log(1 + x ** 2)) + anp.sum(anp.tanh(anp.dot(W, x)) ** 2)

    jr, h = jacobian(f), hessian(g)
    return {"jacrev": lambda: jr(x), "hessian": lambda: h(x)}  # no forward-mode Jacobian


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_fns(W, x, jit):
    jax = _jax()
    import jax.numpy as jnp

    Wj, xj = jnp.asarray(W), jnp.asarray(x)

    def f(x):
        return jnp.tanh(Wj @ x) + x ** 2

    def g(x):
        return jnp.sum(jnp.log(1 + x ** 2)) + jnp.sum(jnp.tanh(Wj @ x) ** 2)

    wrap = jax.jit if jit else (lambda fn: fn)
    jr, jf, h = wrap(jax.jacrev(f)), wrap(jax.jacfwd(f)), wrap(jax.hessian(g))
    return {"jacrev": lambda: jr(xj).block_until_ready(),
            "jacfwd": lambda: jf(xj).block_until_ready(),
            "hessian": lambda: h(xj).block_until_ready()}


def available_libraries():
    libs = {"chainrule": chainrule_fns, "numpy": numpy_fns}
    try:
        import torch.func  # noqa: F401
        libs["torch"] = torch_fns
    except ImportError:
        pass
    try:
        import autograd  # noqa: F401
        libs["autograd"] = autograd_fns
    except ImportError:
        pass
    try:
        _jax()
        libs["jax"] = lambda W, x: jax_fns(W, x, jit=False)
        libs["jax-jit"] = lambda W, x: jax_fns(W, x, jit=True)
    except ImportError:
        pass
    return libs


# ---------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------

KINDS = ("jacrev", "jacfwd", "hessian")
CASES = {
    "tiny": [(k, 8) for k in KINDS],
    "quick": [(k, 100) for k in KINDS] + [("hessian", 1000)],
    "full": [(k, n) for n in (100, 1000) for k in KINDS],
}
# (seconds of timed calls per library and case, min repeats, max repeats)
BUDGET = {"tiny": (0.0, 1, 1), "quick": (0.3, 3, 100), "full": (4.0, 5, 500)}
# A library slower than SKIP_S per call is called once, not timed in a loop (quick only).
SKIP_S = {"tiny": None, "quick": 1.0, "full": None}
# In quick, n = 1000 runs only these (torch.func takes ~1 s per Hessian, autograd ~4 s,
# JAX op by op ~0.15 s; they are all in full).
QUICK_N1000 = ("chainrule", "numpy", "jax-jit")


def _case_name(kind, n):
    return f"{kind} n={n}"


def run(size="quick"):
    if size not in CASES:
        raise ValueError(f"size must be tiny, quick or full, got {size!r}")
    libs = available_libraries()
    budget, lo, hi = BUDGET[size]
    rows = []
    problems = {}
    for kind, n in CASES[size]:
        if n not in problems:
            W, x = make_problem(n)
            problems[n] = (W, x, {lib: make(W, x) for lib, make in libs.items()})
        W, x, fns_by_lib = problems[n]
        case = _case_name(kind, n)
        reference = hessian_by_hand(W, x) if kind == "hessian" else jacobian_by_hand(W, x)
        fns, first = {}, {}
        for lib, fns_of_lib in fns_by_lib.items():
            if kind not in fns_of_lib:
                continue
            if size == "quick" and n >= 1000 and lib not in QUICK_N1000:
                continue
            fn = fns_of_lib[kind]
            t0 = time.perf_counter()
            result = np.asarray(fn())  # checked before timing (and jit compiled here)
            first[lib] = time.perf_counter() - t0
            scale = np.max(np.abs(reference))
            worst = float(np.max(np.abs(result - reference))) / scale
            if result.shape != reference.shape or not worst <= 1e-9:
                raise AssertionError(f"{NAME} {case}: {lib} computed a different result "
                                     f"(shape {result.shape}, worst relative difference "
                                     f"{worst:.2e})")
            fns[lib] = fn
        if size == "tiny":
            times = interleaved(fns, 1, warmup=0)
        else:
            per_call = {}
            for lib, fn in fns.items():  # one more untimed call each: warm caches
                t0 = time.perf_counter()
                fn()
                per_call[lib] = time.perf_counter() - t0
            skip = SKIP_S[size]
            for lib in [l for l, t in per_call.items() if skip and t > skip]:
                rows.append({"workload": NAME, "case": case, "library": lib,
                             "median_s": per_call[lib], "min_s": per_call[lib],
                             "max_s": per_call[lib], "repeats": 1,
                             "note": "one call only (over the quick budget)"})
                del fns[lib]
            slowest = max(per_call[l] for l in fns)
            repeats = int(min(hi, max(lo, budget / max(slowest, 1e-9))))
            times = interleaved(fns, repeats, warmup=0)
        for lib, ts in times.items():
            note = {"numpy": "closed form by hand (the floor)",
                    "jax-jit": f"first call (compile) {first[lib]:.2f} s"}.get(lib)
            extra = {"note": note} if note else {}
            rows.append(make_row(NAME, case, lib, ts, **extra))
    return rows


# ---------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------

def _median(rows, case, library):
    for r in rows:
        if r["workload"] == NAME and r["case"] == case and r["library"] == library:
            return r["median_s"]
    return None


def target_jacrev_vs_torch(rows):
    name = "w4: jacrev n=100 no slower than torch.func.jacrev"
    a, b = _median(rows, "jacrev n=100", "chainrule"), _median(rows, "jacrev n=100", "torch")
    if a is None or b is None:
        return name, None, "not measured (torch missing or size without n=100)"
    return name, a <= b, (f"chainrule {a * 1e3:.3f} ms vs torch.func {b * 1e3:.3f} ms "
                          f"({a / b:.3f}x)")


def target_hessian_1000(rows):
    name = "w4: Hessian n=1000 under 0.5 s"
    a = _median(rows, "hessian n=1000", "chainrule")
    if a is None:
        return name, None, "not measured at this size"
    return name, a < 0.5, f"chainrule {a:.3f} s"


TARGETS = [target_jacrev_vs_torch, target_hessian_1000]


def _print(rows):
    for r in rows:
        print(f"{r['case']:16s} {r['library']:10s} {r['median_s'] * 1e3:11.3f} ms "
              f"(n={r['repeats']}) {r.get('note', '')}")
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
