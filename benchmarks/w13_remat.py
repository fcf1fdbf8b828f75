"""Workload 13: rematerialisation (``cr.checkpoint``, JAX's ``jax.checkpoint``): the
gradient of a deep chain with and without it, its peak memory and its time.

The chain: ``layers`` layers of ``x = tanh(x * w + b)`` on x of batch 8 x width 1000,
w and b (width 1000) shared by every layer and differentiated with x; in blocks of 10
layers. Three ways:

* ``plain``: reverse mode keeps every layer's values (3 arrays a layer);
* ``remat``: each block under ``cr.checkpoint``: the forward pass keeps each block's
  input, the backward pass computes one block's values again at a time;
* ``remat, dots_saveable``: the same with a policy (nothing to keep here: no products,
  so it should cost what ``remat`` costs).

Before anything is timed the three gradients are compared (they must agree to 1e-12).
``peak_mb`` is tracemalloc's peak over one gradient (NumPy's buffers included), measured
apart from the timed calls (tracemalloc slows Python down). The targets: remat's peak
under 60% of plain's (issue 44), and its time under twice plain's.

    python benchmarks/w13_remat.py [tiny|quick|full]
"""
import sys
import tracemalloc

import numpy as np

from common import checked, interleave, pick, print_targets, row

NAME = "remat of a deep chain"
WIDTH, BATCH, BLOCK = 1000, 8, 10
WAYS = ("plain", "remat", "remat, dots_saveable")


def make_gradient(way, layers):
    """The gradient of the chain's sum with respect to (x, w, b), one of the WAYS."""
    import chainrule as cr

    def block(x, w, b):
        for _ in range(BLOCK):
            x = cr.tanh(x * w + b)
        return x
    if way == "remat":
        block = cr.checkpoint(block)
    elif way == "remat, dots_saveable":
        block = cr.checkpoint(block, policy=cr.checkpoint_policies.dots_saveable)

    def loss(x, w, b):
        for _ in range(layers // BLOCK):
            x = block(x, w, b)
        return cr.sum(x)
    return cr.grad(loss, argnums=(0, 1, 2))


def make_problem(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(BATCH, WIDTH)), rng.normal(size=WIDTH) / 2,
            rng.normal(size=WIDTH) / 2)


def peak_mb(fn):
    """tracemalloc's peak over one call, in MB."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def run(size="quick"):
    layers = pick(size, 20, 200, 1000)
    repeats = pick(size, 1, 3, 7)
    x, w, b = make_problem()
    grads = {way: make_gradient(way, layers) for way in WAYS}
    calls = {way: (lambda g=g: g(x, w, b)) for way, g in grads.items()}
    reference = calls["plain"]()
    for way in WAYS[1:]:
        for mine, theirs in zip(calls[way](), reference):
            checked(mine, theirs, rtol=1e-12, what=f"{NAME}: the gradient, {way}")
    peaks = {way: peak_mb(fn) for way, fn in calls.items()}
    times = interleave(calls, repeats, warmup=1)
    case = f"{layers} layers of width {WIDTH} (batch {BATCH}), blocks of {BLOCK}"
    return [row(NAME, f"{case}: {way}", "chainrule", times[way],
                peak_mb=round(peaks[way], 3), layers=layers) for way in WAYS]


def _by_way(rows):
    return {r["case"].rsplit(": ", 1)[1]: r for r in rows if r["workload"] == NAME}


def _memory_target(rows):
    name = "w13: remat's peak memory under 60% of plain reverse mode's (issue 44)"
    found = _by_way(rows)
    if "plain" not in found or "remat" not in found:
        return name, None, "not measured"
    if found["plain"]["layers"] < 100:  # (tiny: two blocks, nothing to save)
        return name, None, f"{found['plain']['layers']} layers: too few to judge"
    ratio = found["remat"]["peak_mb"] / found["plain"]["peak_mb"]
    return name, ratio < 0.6, (f"remat {found['remat']['peak_mb']:.1f} MB, plain "
                               f"{found['plain']['peak_mb']:.1f} MB ({100 * ratio:.0f}%)")


def _time_target(rows):
    name = "w13: remat's time under twice plain reverse mode's"
    found = _by_way(rows)
    if "plain" not in found or "remat" not in found:
        return name, None, "not measured"
    ratio = found["remat"]["median_s"] / found["plain"]["median_s"]
    return name, ratio < 2.0, (f"remat {1e3 * found['remat']['median_s']:.0f} ms, plain "
                               f"{1e3 * found['plain']['median_s']:.0f} ms "
                               f"(x{ratio:.2f})")


TARGETS = [_memory_target, _time_target]


def _print(rows):
    print(f"{'case':72s} {'median':>10s} {'peak':>10s}")
    for r in rows:
        print(f"{r['case']:72s} {1e3 * r['median_s']:7.0f} ms {r['peak_mb']:7.1f} MB")
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
