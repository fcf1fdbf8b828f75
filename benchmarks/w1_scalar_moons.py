"""Workload 1: one training step of micrograd's moons demo, chainrule vs micrograd.

The step: 100 moons points (chainrule.data.make_moons, seed 0), MLP(2, [16, 16, 1]),
SVM hinge loss + 1e-4 L2, full batch, SGD (lr 0.1): micrograd's demo notebook.
chainrule runs it through ``chainrule.micrograd.*``, the same code with micrograd's
import lines changed. Both models start from the same weights (``random.seed(1337)``
before each is built); the first loss and every gradient are compared before timing.

Cases:

* "gc by hand": the automatic collector off, ``gc.collect()`` after each step, timed
  (micrograd's graphs are reference cycles, so they pay here for collecting them);
* "default gc": the collector as Python runs it; steps run in blocks of one library,
  the blocks interleaved, and a block's time per step (collector pauses included) is
  one sample;
* "gc off (memory)": the collector off, nothing collected, for N steps: the growth of
  live memory blocks (``sys.getallocatedblocks``) and of RSS. chainrule frees each
  step's graph as soon as it is dropped, so it should stay flat; micrograd keeps
  every graph (fewer steps for micrograd: it grows by ~50 MB per step).

Extra fields: ``nodes`` (graph nodes per step), ``peak_mb`` (tracemalloc peak of
one step), and for the memory case ``steps``, ``blocks_growth``,
``rss_growth_mb``, ``mb_per_step``.
"""

import gc
import os
import random
import sys
import time
import tracemalloc

try:
    from common import checked, optional, pick, row
except ImportError:  # imported as benchmarks.w1_scalar_moons
    from benchmarks.common import checked, optional, pick, row

NAME = "1 scalar moons step"
SEED = 1337


def step_fn(Value, model, X, y, lr=0.1):
    """micrograd's demo step: returns the total loss (the root of the step's graph)."""
    params = model.parameters()

    def step():
        inputs = [list(map(Value, row_)) for row_ in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg = 1e-4 * sum(p * p for p in params)
        total = data_loss + reg
        model.zero_grad()
        total.backward()
        for p in params:
            p.data -= lr * p.grad
        return total
    return step


def count_nodes(root):
    """All nodes of the graph behind ``root``, leaves included."""
    seen, stack = set(), [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(n._prev)
    return len(seen)


def _rss_bytes():
    """The resident set size now (Linux), or the peak so far elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def libraries():
    """``{name: (Value, MLP)}`` of the libraries installed."""
    import chainrule.micrograd.engine as cre
    import chainrule.micrograd.nn as crn
    libs = {"chainrule": (cre.Value, crn.MLP)}
    mge, mgn = optional("micrograd.engine"), optional("micrograd.nn")
    if mge is not None and mgn is not None:
        libs["micrograd"] = (mge.Value, mgn.MLP)
    return libs


def make_steps(libs, X, y):
    """One fresh model per library, all from the same initial weights; checked alike."""
    steps, models, first = {}, {}, {}
    for name, (Value, MLP) in libs.items():
        random.seed(SEED)
        models[name] = MLP(2, [16, 16, 1])
        steps[name] = step_fn(Value, models[name], X, y)
    for name, step in steps.items():
        loss = step()
        first[name] = (loss.data, [p.grad for p in models[name].parameters()],
                       count_nodes(loss))
        del loss
    ref = first["chainrule"]
    for name, got in first.items():
        checked(ref[0], got[0], rtol=1e-12, what=f"first loss, chainrule vs {name}")
        checked(ref[1], got[1], rtol=1e-10, what=f"gradients, chainrule vs {name}")
    return steps, {name: got[2] for name, got in first.items()}


def peak_mb(step):
    """tracemalloc's peak over one step, in MB (the step's graph at its largest)."""
    gc.collect()
    tracemalloc.start()
    try:
        step()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()
        gc.collect()


def time_by_hand(steps, repeats):
    """gc off, gc.collect() after every step and timed with it; interleaved per step."""
    times = {name: [] for name in steps}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, step in steps.items():
                t0 = time.perf_counter()
                step()
                gc.collect()
                times[name].append(time.perf_counter() - t0)
    finally:
        gc.enable()
    return times


def time_default_gc(steps, rounds, block):
    """Default gc; blocks of ``block`` steps of one library, interleaved by block.

    A sample is a block's time per step, so the collector's pauses (set off by a
    library's own garbage) are averaged in, and charged to the library that made it.
    """
    times = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            gc.collect()  # untimed: start each block from the same clean state
            t0 = time.perf_counter()
            for _ in range(block):
                step()
            times[name].append((time.perf_counter() - t0) / block)
    gc.collect()
    return times


def memory_growth(step, n):
    """Run ``n`` steps with the collector off and nothing collected.

    Returns (step times, growth of live pymalloc blocks and of RSS in bytes between
    the end of the first step and the end of the last).
    """
    gc.collect()
    gc.disable()
    times = []
    try:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        blocks0, rss0 = sys.getallocatedblocks(), _rss_bytes()
        for _ in range(n - 1):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        blocks1, rss1 = sys.getallocatedblocks(), _rss_bytes()
    finally:
        gc.enable()
        gc.collect()
    return times, blocks1 - blocks0, rss1 - rss0


def run(size="quick"):
    from chainrule.data import make_moons

    n_points = pick(size, 20, 100, 100)
    X, y01 = make_moons(n_points, noise=0.1, seed=0)
    X = X.tolist()
    y = [2 * int(v) - 1 for v in y01]
    libs = libraries()
    steps, nodes = make_steps(libs, X, y)
    peaks = {name: peak_mb(step) for name, step in steps.items()}

    rows = []
    extra = lambda name: {"nodes": nodes[name], "peak_mb": round(peaks[name], 3),
                          "points": n_points}

    times = time_by_hand(steps, repeats=pick(size, 1, 5, 40))
    for name, ts in times.items():
        rows.append(row(NAME, "gc by hand", name, ts, **extra(name)))

    rounds, block = pick(size, (1, 1), (1, 2), (8, 4))
    times = time_default_gc(steps, rounds, block)
    for name, ts in times.items():
        rows.append(row(NAME, "default gc", name, ts, **extra(name),
                        note=f"{block} steps per sample"))

    # chainrule first: nothing another library freed can then hide its growth in RSS
    mem_steps = {"chainrule": pick(size, 3, 40, 200), "micrograd": pick(size, 2, 3, 12)}
    for name in sorted(steps, key=lambda n: n != "chainrule"):
        n = mem_steps.get(name, mem_steps["micrograd"])
        ts, blocks, rss = memory_growth(steps[name], n)
        rows.append(row(NAME, "gc off (memory)", name, ts, **extra(name), steps=n,
                        blocks_growth=blocks, rss_growth_mb=round(rss / 1e6, 2),
                        mb_per_step=round(rss / 1e6 / max(n - 1, 1), 3)))
    return rows


# --- targets -----------------------------------------------------------------------------

def _median(rows, case, library):
    for r in rows:
        if (r["workload"], r["case"], r["library"]) == (NAME, case, library):
            return r.get("median_s")
    return None


def _full_batch(rows):
    """Targets hold for the demo's 100 points (the tiny size has fewer)."""
    return any(r["workload"] == NAME and r.get("points") == 100 for r in rows)


def _speedup_target(case, goal):
    def target(rows):
        name = f"w1 {case}: chainrule >= {goal}x faster than micrograd"
        if not _full_batch(rows):
            return name, None, "not measured at this size (tiny)"
        cr, mg = _median(rows, case, "chainrule"), _median(rows, case, "micrograd")
        if not cr or not mg:
            return name, None, "not measured (micrograd not installed?)"
        ratio = mg / cr
        if ratio >= goal:
            return name, True, f"{ratio:.1f}x"
        return name, False, f"{ratio:.1f}x: missed by {goal / ratio:.2f}x"
    return target


def _memory_target(rows):
    name = "w1 memory flat with gc off"
    if not _full_batch(rows):
        return name, None, "not measured at this size (tiny)"
    for r in rows:
        if (r["workload"], r["case"], r["library"]) == (NAME, "gc off (memory)", "chainrule"):
            # flat: over all the steps, fewer live blocks gained than one step's graph has
            # nodes (a leaked graph would add at least that many every step)
            limit = r["nodes"]
            ok = r["blocks_growth"] < limit
            detail = (f"{r['steps']} steps: {r['blocks_growth']:+d} live blocks "
                      f"(limit {limit}, one graph), RSS {r['rss_growth_mb']:+.1f} MB")
            if not ok:
                detail += f": missed by {r['blocks_growth'] / limit:.1f}x"
            return f"{name} ({r['steps']} steps)", ok, detail
    return name, None, "not measured"


TARGETS = [_speedup_target("gc by hand", 5), _speedup_target("default gc", 30),
           _memory_target]


if __name__ == "__main__":
    import json
    for r in run(sys.argv[1] if len(sys.argv) > 1 else "quick"):
        print(json.dumps(r))
    