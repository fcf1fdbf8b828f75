"""Workload 3 (quick form): one training step of a 784-128-10 MLP, chainrule vs a
forward and backward written out by hand in NumPy (the floor for any NumPy engine).

Same data, same weights; the gradients are compared before timing.

    python benchmarks/tensor_mlp.py [--batch 128] [--dtype float64] [--repeats 200]
"""
import argparse
import statistics
import time

import numpy as np

import chainrule as cr
from chainrule.nn.functional import cross_entropy


def make_problem(batch, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 784)).astype(dtype)
    y = rng.integers(0, 10, batch)
    W1 = (rng.standard_normal((784, 128)) * np.sqrt(2 / 784)).astype(dtype)
    b1 = np.zeros(128, dtype)
    W2 = (rng.standard_normal((128, 10)) * np.sqrt(2 / 128)).astype(dtype)
    b2 = np.zeros(10, dtype)
    return x, y, [W1, b1, W2, b2]


def numpy_step(x, y, params, lr=0.01):
    W1, b1, W2, b2 = params
    h_pre = x @ W1 + b1
    h = np.maximum(h_pre, 0)
    logits = h @ W2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = len(y)
    loss = -log_p[np.arange(n), y].mean()
    d_logits = np.exp(log_p)
    d_logits[np.arange(n), y] -= 1
    d_logits /= n
    dW2 = h.T @ d_logits
    db2 = d_logits.sum(axis=0)
    dh = d_logits @ W2.T
    dh_pre = dh * (h_pre > 0)
    dW1 = x.T @ dh_pre
    db1 = dh_pre.sum(axis=0)
    grads = [dW1, db1, dW2, db2]
    for p, g in zip(params, grads):
        p -= lr * g
    return loss, grads


def chainrule_step(x, y, params, lr=0.01):
    W1, b1, W2, b2 = params
    logits = (x @ W1 + b1).relu() @ W2 + b2
    loss = cross_entropy(logits, y)
    for p in params:
        p.grad = None
    loss.backward()
    with cr.no_grad():
        for p in params:
            p.data -= lr * p.grad
    return loss, [p.grad for p in params]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    x, y, raw = make_problem(args.batch, args.dtype)
    np_params = [p.copy() for p in raw]
    cr_params = [cr.tensor(p.copy(), requires_grad=True) for p in raw]
    xt = cr.tensor(x)
    loss_np, g_np = numpy_step(x, y, [p.copy() for p in raw], lr=0.0)
    loss_cr, g_cr = chainrule_step(xt, y, cr_params, lr=0.0)
    worst = max(float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-30))
                for a, b in zip(g_np, g_cr))
    print(f"same loss: {float(loss_np):.12g} vs {loss_cr.item():.12g}; "
          f"worst relative gradient difference {worst:.1e}")
    times = {"numpy": [], "chainrule": []}
    for _ in range(args.repeats):  # interleaved, so drift hits both alike
        t0 = time.perf_counter()
        numpy_step(x, y, np_params)
        t1 = time.perf_counter()
        chainrule_step(xt, y, cr_params)
        t2 = time.perf_counter()
        times["numpy"].append(t1 - t0)
        times["chainrule"].append(t2 - t1)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"784-128-10, batch {args.batch}, {args.dtype}: numpy {med['numpy'] * 1e3:.3f} ms, "
          f"chainrule {med['chainrule'] * 1e3:.3f} ms, ratio {med['chainrule'] / med['numpy']:.2f}x")


if __name__ == "__main__":
    main()
