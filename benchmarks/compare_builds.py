"""Two builds of chainrule side by side: the scalar moons step and the MLP step (with its
hand-written NumPy twin), interleaved, for a change that must not cost speed.

    python benchmarks/compare_builds.py BEFORE_SRC AFTER_SRC [--rounds 10]

Each ``*_SRC`` is a ``src`` folder (for the code on main, a ``git worktree add`` of it).
Every round runs each build in a fresh process, alternating which goes first, pinned to
one CPU with BLAS single-threaded (as ``make bench``); the medians over rounds are
compared. What is timed is workload 1's step (micrograd's demo, 100 samples) and
workload 3's step (784-128-10, float32) at batch 128 and 32, eager and under ``cr.jit``,
as the chainrule / NumPy ratio, which cancels the machine's slow and fast periods.
"""

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# One measurement, run inside a process whose chainrule is the build under test.
PROBE = r"""
import gc, random, sys, time
import numpy as np
sys.path[:0] = [{here!r}, {root!r}]
median = lambda ts: sorted(ts)[len(ts) // 2]
if sys.argv[1] == "moons":
    import w1_scalar_moons as w1
    import chainrule.micrograd.engine as engine, chainrule.micrograd.nn as nn
    from chainrule.data import make_moons
    X, y = make_moons(100, noise=0.1, seed=1337)
    random.seed(1337)
    step = w1.step_fn(engine.Value, nn.MLP(2, [16, 16, 1]),
                      [list(map(float, row)) for row in X], [2.0 * v - 1 for v in y])
    gc.disable()
    times = []
    for i in range(18):
        start = time.perf_counter(); loss = step(); del loss
        times.append(time.perf_counter() - start); gc.collect()
    print(median(times[3:]))
else:
    import w3_tensor_mlp as w3
    x, labels, raw = w3.make_problem([784, 128, 10], int(sys.argv[2]), np.float32)
    ours, _ = w3.make_chainrule(x, labels, raw, jit=sys.argv[4:] == ["jit"])
    numpy, _ = w3.make_numpy(x, labels, raw)
    for _ in range(20):
        ours(); numpy()
    a, b = [], []
    for _ in range(int(sys.argv[3])):
        start = time.perf_counter(); ours(); a.append(time.perf_counter() - start)
        start = time.perf_counter(); numpy(); b.append(time.perf_counter() - start)
    print(median(a) / median(b))
"""

MEASURES = {"moons step (s)": ["moons"], "MLP b128 / NumPy": ["mlp", "128", "300"],
            "MLP b32 / NumPy": ["mlp", "32", "600"],
            "MLP b128 jit / NumPy": ["mlp", "128", "300", "jit"],
            "MLP b32 jit / NumPy": ["mlp", "32", "600", "jit"]}


def measure(src, args):
    env = dict(os.environ, PYTHONPATH=src, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    # Each build's own workloads (a build's benchmark files speak its API: a layout
    # change moves them with it), or this checkout's where the build has none.
    bench = os.path.join(os.path.dirname(os.path.abspath(src)), "benchmarks")
    bench = bench if os.path.isdir(bench) else HERE
    probe = PROBE.format(here=bench, root=os.path.dirname(bench))
    pin = ["taskset", "-c", "0"] if sys.platform.startswith("linux") else []
    out = subprocess.run(pin + [sys.executable, "-c", probe, *args], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=10)
    options = parser.parse_args(argv)
    builds = {"before": options.before, "after": options.after}
    results = {name: {m: [] for m in MEASURES} for name in builds}
    for r in range(options.rounds):
        order = list(builds) if r % 2 == 0 else list(builds)[::-1]
        for name in order:
            for what, args in MEASURES.items():
                results[name][what].append(measure(builds[name], args))
    print(f"{'':20} {'before':>10} {'after':>10} {'after/before':>13}   "
          f"(medians of {options.rounds} interleaved rounds)")
    for what in MEASURES:
        b = statistics.median(results["before"][what])
        a = statistics.median(results["after"][what])
        print(f"{what:20} {b:10.4g} {a:10.4g} {a / b:13.3f}")


if __name__ == "__main__":
    main()
