"""Workload 7: one step of PyTorch's first autograd tutorial: fit y = sin(x) on 2,000
points by a cubic a + b x + c x**2 + d x**3, four scalar parameters, the loss
sum((y_pred - y)**2), its backward pass and a manual gradient-descent step.

Small arrays and integer powers: what the step costs is the engine's overhead per
operation and the price of ``x ** 2`` and ``x ** 3`` (chainrule computes them as
multiplies, as PyTorch does). float32, as the tutorial; and float64.

* chainrule  - the tutorial's code with ``import chainrule as torch``'s names;
* torch      - the tutorial as written (PyTorch eager, CPU);
* numpy      - forward and backward by hand.

The gradients of one step are compared before timing; the libraries take turns.

    python benchmarks/w7_polynomial_step.py [tiny|quick|full]
"""
import math
import sys

import numpy as np

from common import agreeing_steps, interleave, optional, pick, row

NAME = "polynomial step"
LR = 1e-6
POINTS = 2000


def make_problem(dtype):
    x = np.linspace(-math.pi, math.pi, POINTS).astype(dtype)
    return x, np.sin(x), np.array([0.1, -0.2, 0.3, -0.4], dtype)


def make_numpy(x, y, start):
    params = start.copy()
    powers = [np.ones_like(x), x, x * x, x * x * x]

    def step(p, lr):
        a, b, c, d = p
        error = a + b * x + c * (x * x) + d * (x * x * x) - y
        loss = (error * error).sum()
        grads = np.array([2 * (error * power).sum() for power in powers], dtype=x.dtype)
        p -= lr * grads
        return loss, grads
    return (lambda: step(params, LR)), (lambda: step(start.copy(), 0.0)[1])


def make_chainrule(x, y, start):
    import chainrule as cr
    xt, yt = cr.tensor(x), cr.tensor(y)

    def fresh():
        return [cr.tensor(v, requires_grad=True) for v in start]

    def step(p, lr):
        a, b, c, d = p
        y_pred = a + b * xt + c * xt ** 2 + d * xt ** 3
        loss = (y_pred - yt).pow(2).sum()
        loss.backward()
        with cr.no_grad():
            for v in p:
                v -= lr * v.grad
        grads = [v.grad for v in p]
        for v in p:
            v.grad = None
        return grads

    params = fresh()
    return (lambda: step(params, LR)), (lambda: step(fresh(), 0.0))


def make_torch(x, y, start, torch):
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def fresh():
        return [torch.tensor(v, requires_grad=True) for v in start]

    def step(p, lr):
        a, b, c, d = p
        y_pred = a + b * xt + c * xt ** 2 + d * xt ** 3
        loss = (y_pred - yt).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for v in p:
                v -= lr * v.grad
        grads = [v.grad.numpy() for v in p]
        for v in p:
            v.grad = None
        return grads

    params = fresh()
    return (lambda: step(params, LR)), (lambda: step(fresh(), 0.0))


def run(size):
    repeats = pick(size, 1, 200, 1000)
    torch = optional("torch")
    if torch is not None:
        torch.set_num_threads(1)  # (2,000 points: threads cost more than they give)
    rows = []
    for dtype in (np.float32, np.float64):
        case = f"{POINTS} points, {np.dtype(dtype).name}"
        x, y, start = make_problem(dtype)
        makers = {"numpy": lambda: make_numpy(x, y, start),
                  "chainrule": lambda: make_chainrule(x, y, start)}
        if torch is not None:
            makers["torch"] = lambda: make_torch(x, y, start, torch)
        rtol = 1e-3 if dtype == np.float32 else 1e-10
        steps = agreeing_steps(makers, rtol, f"{NAME} / {case}")
        times = interleave(steps, repeats, warmup=5, block=10 if repeats >= 10 else 1)
        for lib, ts in times.items():
            rows.append(row(NAME, case, lib, ts))
    return rows


def _print(rows):
    for r in rows:
        print(f"{r['case']:24s} {r['library']:10s} {1e6 * r['median_s']:9.1f} us "
              f"(min {1e6 * r['min_s']:.1f}, n={r['repeats']})")
    for dtype in ("float32", "float64"):
        med = {r["library"]: r["median_s"] for r in rows if r["case"].endswith(dtype)}
        if "numpy" in med:
            print(f"{dtype}: " + ", ".join(f"{lib} {t / med['numpy']:.2f}x numpy"
                                           for lib, t in med.items() if lib != "numpy"))


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
