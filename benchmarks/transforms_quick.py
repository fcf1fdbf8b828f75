"""Workload 4 (quick form): Jacobians and Hessians, chainrule vs torch.func, side by side.

f(x) = tanh(W x) + x**2 (R^n -> R^n) for jacrev; g(x) = sum(log(1 + x**2)) +
sum(tanh(W x)**2) for the Hessian; results compared before timing.

    python benchmarks/transforms_quick.py
"""
import time, statistics, numpy as np, torch, chainrule as cr
from torch.func import jacrev as tjacrev, hessian as thessian
rng = np.random.default_rng(0)
def timeit(fn, n=20):
    fn(); ts=[]
    for _ in range(n):
        t=time.perf_counter(); fn(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)
for n in (100, 1000):
    W = rng.standard_normal((n, n)) / np.sqrt(n); x = rng.standard_normal(n)
    Wt, xt = torch.tensor(W), torch.tensor(x)
    f = lambda x: cr.tanh(W @ x) + x ** 2
    ft = lambda x: torch.tanh(Wt @ x) + x ** 2
    J = cr.jacrev(f)(x); Jt = tjacrev(ft)(xt).numpy(); assert np.allclose(J, Jt)
    a = timeit(lambda: cr.jacrev(f)(x)); b = timeit(lambda: tjacrev(ft)(xt))
    print(f"jacrev n={n}: chainrule {a*1e3:.2f} ms, torch.func {b*1e3:.2f} ms")
    g = lambda x: cr.sum(cr.log(1 + x ** 2)) + cr.sum(cr.tanh(W @ x) ** 2)
    gt = lambda x: torch.sum(torch.log(1 + x ** 2)) + torch.sum(torch.tanh(Wt @ x) ** 2)
    H = cr.hessian(g)(x); Ht = thessian(gt)(xt).numpy(); assert np.allclose(H, Ht), np.abs(H-Ht).max()
    a = timeit(lambda: cr.hessian(g)(x), 5); b = timeit(lambda: thessian(gt)(xt), 5)
    print(f"hessian n={n}: chainrule {a*1e3:.1f} ms, torch.func {b*1e3:.1f} ms")
