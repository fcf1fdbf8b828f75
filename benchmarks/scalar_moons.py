"""Workload 1 (quick form): one training step of micrograd's moons demo, chainrule vs micrograd.

Same data, same initial weights (both draw random.uniform(-1, 1) after random.seed),
same loss: SVM hinge + 1e-4 L2, full batch of 100. Needs `micrograd` installed.

    python benchmarks/scalar_moons.py [--steps 20]
"""
import argparse
import gc
import random
import statistics
import time

from chainrule.data import make_moons


def step_fn(Value, model, X, y):
    def step(lr=0.1):
        inputs = [list(map(Value, row)) for row in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg = 1e-4 * sum(p * p for p in model.parameters())
        total = data_loss + reg
        model.zero_grad()
        total.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        return total
    return step


def count_nodes(root):
    seen, stack = set(), [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(n._prev)
    return len(seen)


def time_steps(step, n, collect):
    times = []
    if collect:
        gc.disable()  # "by hand": the automatic collector stays off, we collect after each step
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        if collect:
            gc.collect()
        times.append(time.perf_counter() - t0)
    gc.enable()
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    X, y01 = make_moons(100, noise=0.1, seed=0)
    X = X.tolist()
    y = [2 * int(v) - 1 for v in y01]

    import chainrule.micrograd.engine as cre
    import chainrule.micrograd.nn as crn
    import micrograd.engine as mge
    import micrograd.nn as mgn

    libs = {}
    for name, E, N in [("chainrule", cre, crn), ("micrograd", mge, mgn)]:
        random.seed(1337)
        model = N.MLP(2, [16, 16, 1])
        libs[name] = (E.Value, model, step_fn(E.Value, model, X, y))
    # same weights and math: compare the first loss and gradients
    losses = {name: s() for name, (_, _, s) in libs.items()}
    print("first loss", {k: v.data for k, v in losses.items()})
    print("nodes per step", {k: count_nodes(v) for k, v in losses.items()})
    del losses
    for collect, label in [(True, "gc off, gc.collect() after each step (timed)"), (False, "default gc")]:
        res = {}
        for _ in range(3):  # interleave A B A B
            for name, (_, _, s) in libs.items():
                res.setdefault(name, []).append(time_steps(s, args.steps, collect))
        med = {k: statistics.median(v) for k, v in res.items()}
        print(f"{label}: " + ", ".join(f"{k} {v * 1e3:.1f} ms/step" for k, v in med.items())
              + f"  ratio micrograd/chainrule = {med['micrograd'] / med['chainrule']:.1f}x")


if __name__ == "__main__":
    main()
