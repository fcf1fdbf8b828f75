"""Workload 3: one training step (forward, backward, SGD update) of an MLP.

784-128-10 and 784-512-512-10 (ReLU, cross-entropy), batch 128 and 1024, float32 and
float64. Every library gets the same data, the same initial weights and the same math:

* chainrule  - raw ``cr.tensor`` parameters and ops: ``nn.functional.linear``, the fused
               ``x @ W + b`` of the output layer and ``relu(x @ W + b)`` of a hidden
               one (as nn.Sequential runs a Linear followed by a ReLU), and
               ``nn.functional.cross_entropy``. The raw form, because it is faster than
               ``nn.MLP`` + ``optim.SGD`` (no per-layer shape check, no optimizer
               bookkeeping; ``--nn`` times that form beside it), and the math is the same.
* chainrule-jit - the same step under ``cr.jit``: traced once into a program of NumPy
               calls, replayed at every later step.
* numpy      - forward and backward written by hand: the floor for any NumPy engine.
* torch      - PyTorch eager on the CPU (``torch.addmm`` as nn.Linear does, F.cross_entropy,
               ``p.add_(g, alpha=-lr)``), its thread count set to NumPy's BLAS thread count.
* autograd   - HIPS autograd (``autograd.numpy``), ``grad`` of the loss.
* jax        - ``jax.grad`` of the loss, op by op (no jit); jax-jit: the whole step jitted.

Before any timing each library's gradients (one step at lr = 0) are compared with the
hand-written NumPy ones; a mismatch raises. Timing is interleaved (the libraries take
turns of one untimed and 5 timed steps, see common.interleave), after a warm-up. Each
configuration is timed in 3 windows at full size (quick: 1, to stay within a minute),
one pass over all configurations after another, and the median of the pooled steps is
reported: the machine's slow periods last seconds to minutes, and one short window can
fall in one.
GFLOP/s counts the matmul flops of forward and backward (2*B*a*b per matmul; the first
layer's input gradient is not computed) against a measured large GEMM (np.matmul of
2048x2048), the ceiling of this machine.

    python benchmarks/w3_tensor_mlp.py [tiny|quick|full]
"""
import os
import statistics
import sys
import time

import numpy as np

from common import (interleave as _interleave, print_targets, row as _row,  # noqa: E402
                    small_op_speed)

NAME = "tensor_mlp"
LR = 0.01

ARCHS = {"784-128-10": [784, 128, 10], "784-512-512-10": [784, 512, 512, 10]}


# ---------------------------------------------------------------------------------------
# Timing (common.py's helpers are used when it provides them)
# ---------------------------------------------------------------------------------------

def _blas_threads():
    try:
        from threadpoolctl import threadpool_info
        counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        if counts:
            return counts[0]
    except Exception:
        pass
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return os.cpu_count() or 1


# Steps timed in turns of 5 (after one untimed step), libraries alternating turn by
# turn: what each library costs in a training loop, where steps follow each other.
BLOCK = 5


def interleaved(fns, repeats, warmup=2, block=BLOCK):
    """{name: [seconds, ...]}: each callable run ``repeats`` times, taking turns."""
    return _interleave(fns, repeats, warmup, block=block)

def choose_repeats(fns, budget_s, lo, hi):
    """Repeats so that one interleaved pass over ``fns`` fits ``budget_s`` (one timed call each)."""
    total = 0.0
    for f in fns.values():
        t0 = time.perf_counter()
        f()
        total += time.perf_counter() - t0
    return int(min(hi, max(lo, budget_s / max(total, 1e-9))))


def make_row(workload, case, library, ts, **extra):
    if _row is not None:
        return _row(workload, case, library, ts, **{k: v for k, v in extra.items()
                                                    if v is not None})
    row = {"workload": workload, "case": case, "library": library,
           "median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
           "repeats": len(ts)}
    row.update({k: v for k, v in extra.items() if v is not None})
    return row


# ---------------------------------------------------------------------------------------
# The problem and the hand-written NumPy step
# ---------------------------------------------------------------------------------------

def make_problem(sizes, batch, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    y = rng.integers(0, sizes[-1], batch)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(dtype))
        params.append(np.zeros(b, dtype))
    return x, y, params


def matmul_flops(sizes, batch):
    """Forward (B*a*b multiply-adds per layer) plus backward (dW everywhere, dx on all but
    the first layer), 2 flops per multiply-add."""
    flops = 0
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        flops += 2 * batch * a * b * (2 if i == 0 else 3)
    return flops


def numpy_step(x, y, params, lr=LR):
    n_layers = len(params) // 2
    inputs, pre = [], []
    h = x
    for i in range(n_layers):
        inputs.append(h)
        z = h @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            pre.append(z)
            h = np.maximum(z, 0)
        else:
            logits = z
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = len(y)
    rows = np.arange(n)
    loss = -log_p[rows, y].mean()
    d = np.exp(log_p)
    d[rows, y] -= 1
    d /= n
    grads = [None] * len(params)
    for i in reversed(range(n_layers)):
        grads[2 * i] = inputs[i].T @ d
        grads[2 * i + 1] = d.sum(axis=0)
        if i > 0:
            d = d @ params[2 * i].T
            d *= pre[i - 1] > 0
    for p, g in zip(params, grads):
        p -= lr * g
    return loss, grads


# ---------------------------------------------------------------------------------------
# The other libraries: each make_* returns (step() -> None, grads_at_lr0() -> [ndarray])
# ---------------------------------------------------------------------------------------

def make_numpy(x, y, raw):
    params = [p.copy() for p in raw]
    return (lambda: numpy_step(x, y, params),
            lambda: numpy_step(x, y, [p.copy() for p in raw], lr=0.0)[1])


def linear_layout(arrays):
    """The weights (in, out), as NumPy's step multiplies them, in nn.Linear's and
    PyTorch's layout (out, in), and back (a transpose is its own inverse); biases as
    they are."""
    return [np.ascontiguousarray(a.T) if a.ndim == 2 else a.copy() for a in arrays]


def make_chainrule(x, y, raw, jit=False):
    import chainrule as cr
    from chainrule.nn.functional import cross_entropy, linear

    def step(xt, params, lr):
        h = xt
        n_layers = len(params) // 2
        for i in range(n_layers):  # hidden layers: relu(x @ W.T + b) as one operation
            hidden = i < n_layers - 1
            h = linear(h, params[2 * i], params[2 * i + 1], "relu" if hidden else None)
        loss = cross_entropy(h, y)
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:  # on the arrays themselves: nothing is recorded
            p.data -= lr * p.grad
        return [p.grad for p in params]

    if jit:
        step = cr.jit(step)
    xt = cr.tensor(x)
    params = [cr.tensor(p, requires_grad=True) for p in linear_layout(raw)]
    return (lambda: step(xt, params, LR),
            lambda: linear_layout(step(xt, [cr.tensor(p, requires_grad=True)
                                            for p in linear_layout(raw)], 0.0)))


def make_chainrule_jit(x, y, raw):
    """The same step as make_chainrule, traced once by cr.jit and replayed."""
    return make_chainrule(x, y, raw, jit=True)


def make_chainrule_nn(x, y, raw):
    """The nn.MLP + optim.SGD form (measured against the raw form; see the docstring)."""
    import chainrule as cr
    from chainrule import nn, optim
    from chainrule.nn.functional import cross_entropy

    sizes = [raw[0].shape[0]] + [p.shape[0] for p in raw[1::2]]

    def build():
        model = nn.MLP(sizes, dtype=raw[0].dtype)
        for p, r in zip(model.parameters(), linear_layout(raw)):
            p.data = r
        return model

    def step(model, opt):
        opt.zero_grad()
        cross_entropy(model(xt), y).backward()
        opt.step()

    xt = cr.tensor(x)
    model = build()
    opt = optim.SGD(model.parameters(), lr=LR)

    def grads():
        m = build()
        o = optim.SGD(m.parameters(), lr=0.0)
        step(m, o)
        return linear_layout([p.grad for p in m.parameters()])

    return lambda: step(model, opt), grads


def make_torch(x, y, raw):
    import torch
    import torch.nn.functional as F

    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def step(params, lr):
        h = xt
        n_layers = len(params) // 2
        for i in range(n_layers):
            h = torch.addmm(params[2 * i + 1], h, params[2 * i])
            if i < n_layers - 1:
                h = torch.relu(h)
        loss = F.cross_entropy(h, yt)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-lr)
        return params

    def fresh():
        return [torch.tensor(p.copy(), requires_grad=True) for p in raw]

    params = fresh()
    return (lambda: step(params, LR),
            lambda: [p.grad.numpy() for p in step(fresh(), 0.0)])


def _loss_fn(xnp):
    """The cross-entropy loss of the MLP written with an array module ``xnp``."""
    def loss(params, x, y):
        h = x
        n_layers = len(params) // 2
        for i in range(n_layers):
            h = xnp.dot(h, params[2 * i]) + params[2 * i + 1]
            if i < n_layers - 1:
                h = xnp.maximum(h, 0)
        shifted = h - xnp.max(h, axis=1, keepdims=True)
        log_p = shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=1, keepdims=True))
        return -xnp.mean(log_p[xnp.arange(len(y)), y])
    return loss


def make_autograd(x, y, raw):
    import autograd.numpy as anp
    from autograd import grad

    g = grad(_loss_fn(anp))
    params = [p.copy() for p in raw]

    def step():
        grads = g(params, x, y)
        for i, gi in enumerate(grads):
            params[i] = params[i] - LR * gi

    return step, lambda: [np.asarray(a) for a in g([p.copy() for p in raw], x, y)]


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)  # float64 is float64; float32 stays float32
    return jax


def make_jax(x, y, raw, jit):
    jax = _jax()
    import jax.numpy as jnp

    g = jax.grad(_loss_fn(jnp))

    def update(params, x, y, lr):
        grads = g(params, x, y)
        return [p - lr * gi for p, gi in zip(params, grads)], grads

    update = jax.jit(update) if jit else update
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    state = [[jnp.asarray(p) for p in raw]]

    def step():
        new, grads = update(state[0], xj, yj, LR)
        jax.block_until_ready(new)
        state[0] = new

    def grads():
        _, gr = update([jnp.asarray(p) for p in raw], xj, yj, 0.0)
        return [np.asarray(a) for a in gr]

    return step, grads


def available_libraries(include_chainrule_nn=False):
    libs = {"chainrule": make_chainrule, "chainrule-jit": make_chainrule_jit,
            "numpy": make_numpy}
    if include_chainrule_nn:
        libs["chainrule-nn"] = make_chainrule_nn
    try:
        import torch
        torch.set_num_threads(_blas_threads())
        libs["torch"] = make_torch
    except ImportError:
        pass
    try:
        import autograd  # noqa: F401
        libs["autograd"] = make_autograd
    except ImportError:
        pass
    try:
        _jax()
        libs["jax"] = lambda x, y, raw: make_jax(x, y, raw, jit=False)
        libs["jax-jit"] = lambda x, y, raw: make_jax(x, y, raw, jit=True)
    except ImportError:
        pass
    return libs


def worst_relative_difference(ref, other):
    return max(float(np.max(np.abs(a - np.asarray(b))) / (np.max(np.abs(a)) + 1e-30))
               for a, b in zip(ref, other))


def check_gradients(steps, dtype, case):
    """Every library's gradients (one step at lr = 0) against the hand-written NumPy ones.

    float64: every element within 1e-9 of the largest. float32: the dtype must be float32,
    and 98% of the elements within 1e-4 (a pre-activation within rounding of 0 can flip
    its ReLU mask between libraries, which changes a column of dW1 legitimately).
    """
    dtype = np.dtype(dtype)
    ref = steps["numpy"][1]()
    for lib, (_, grads) in steps.items():
        if lib == "numpy":
            continue
        got = [np.asarray(g) for g in grads()]
        if [g.shape for g in got] != [r.shape for r in ref]:
            raise AssertionError(f"{NAME} {case}: {lib}'s gradients have shapes "
                                 f"{[g.shape for g in got]}, expected {[r.shape for r in ref]}")
        wrong_dtype = [str(g.dtype) for g in got if g.dtype != dtype]
        if wrong_dtype:
            raise AssertionError(f"{NAME} {case}: {lib} computed in {wrong_dtype[0]}, "
                                 f"not {dtype}")
        for i, (r, g) in enumerate(zip(ref, got)):
            rel = np.abs(r - g) / (np.max(np.abs(r)) + 1e-30)
            if dtype == np.float64:
                bad = float(rel.max()) > 1e-9
            else:
                bad = float(np.mean(rel > 1e-4)) > 0.02 or float(rel.max()) > 0.5
            if bad:
                raise AssertionError(f"{NAME} {case}: {lib}'s gradient {i} differs from the "
                                     f"hand-written NumPy one (worst relative difference "
                                     f"{rel.max():.2e}, {np.mean(rel > 1e-4):.2%} of "
                                     f"elements beyond 1e-4)")


# ---------------------------------------------------------------------------------------
# The GEMM ceiling
# ---------------------------------------------------------------------------------------

def gemm_ceiling(n, dtype, repeats):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    ts = interleaved({"gemm": lambda: np.matmul(a, b)}, repeats, warmup=1)["gemm"]
    return ts, 2 * n ** 3


# ---------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------

CONFIGS = {
    "tiny": [(arch, 16, dt) for arch in ARCHS for dt in ("float32", "float64")],
    "quick": [("784-128-10", 32, "float32"), ("784-128-10", 128, "float32"),
              ("784-128-10", 128, "float64"), ("784-128-10", 1024, "float32"),
              ("784-512-512-10", 32, "float32")],
    "full": [(arch, b, dt) for arch in ARCHS for b in (32, 128, 1024)
             for dt in ("float32", "float64")],
}
# (seconds per config for one library's timed calls, min repeats, max repeats)
BUDGET = {"tiny": (0.0, 1, 1), "quick": (0.45, 5, 45), "full": (4.0, 15, 400)}
# Windows per configuration (the budget is split between them).
PASSES = {"tiny": 1, "quick": 1, "full": 3}


def run(size="quick", include_chainrule_nn=False):
    if size not in CONFIGS:
        raise ValueError(f"size must be tiny, quick or full, got {size!r}")
    libs = available_libraries(include_chainrule_nn)
    threads = _blas_threads()
    try:
        import torch
        threads = torch.get_num_threads()
    except ImportError:
        pass
    load = os.getloadavg()[0]  # other processes wreck multi-threaded BLAS timings
    rows = []
    # The ceiling: one large GEMM per dtype.
    ceiling = {}
    n_gemm, rep_gemm = {"tiny": (256, 1), "quick": (2048, 3), "full": (2048, 10)}[size]
    for dt in ("float32", "float64"):
        ts, flops = gemm_ceiling(n_gemm, dt, rep_gemm)
        ceiling[dt] = flops / statistics.median(ts) / 1e9
        rows.append(make_row(NAME, f"gemm {n_gemm}x{n_gemm} {dt}", "numpy", ts,
                             gflops=ceiling[dt],
                             note=f"np.matmul ceiling; BLAS threads={_blas_threads()}"))
    budget, lo, hi = BUDGET[size]
    # Every configuration is measured in PASSES windows spread over the workload, and
    # its samples pooled: one window of a few seconds can fall in one of the machine's
    # slow periods (see README, "The machine's state"), several seldom all do.
    #
    # Each window times all the libraries interleaved (the table), then chainrule and
    # NumPy alone as a pair (the target's ratio, the "pair" cases). With the other
    # libraries' steps in between, chainrule's step is slower by a few percent and
    # NumPy's is not (README, "All libraries or a pair"), a cost of running them side
    # by side that no user pays.
    groups = []  # (case, sizes, batch, dtype, step functions, repeats per window)
    for arch, batch, dt in CONFIGS[size]:
        sizes = ARCHS[arch]
        case = f"{arch} b{batch} {dt}"
        x, y, raw = make_problem(sizes, batch, dt)
        steps = {lib: make(x, y, raw) for lib, make in libs.items()}
        check_gradients(steps, dt, case)
        fns = {lib: s[0] for lib, s in steps.items()}
        windows = [(case, fns)]
        if "chainrule" in fns and "numpy" in fns and len(fns) > 3:
            pair = {lib: fns[lib] for lib in ("chainrule", "chainrule-jit", "numpy")
                    if lib in fns}
            windows.append((pair_case(case), pair))
        if size != "tiny":
            for f in fns.values():  # jit compiles, caches warm up
                f()
        for name, group in windows:  # each with the same time budget per library
            repeats = 1 if size == "tiny" else max(
                1, choose_repeats(group, budget, lo, hi) // PASSES[size])
            groups.append((name, sizes, batch, dt, group, repeats))
    times = {case: {lib: [] for lib in fns} for case, _, _, _, fns, _ in groups}
    probes = {case: [] for case in times}
    probe_calls = 2000 if size == "tiny" else 20000
    for _ in range(PASSES[size]):
        for case, _, _, _, fns, repeats in groups:
            # The machine's state around this window (common.small_op_speed): a slow
            # period costs the library with more small operations per step the most.
            probes[case].append(small_op_speed(probe_calls))
            got = interleaved(fns, repeats, 0 if size == "tiny" else 2)
            probes[case].append(small_op_speed(probe_calls))
            for lib, ts in got.items():
                times[case][lib].extend(ts)
    for case, sizes, batch, dt, _, _ in groups:
        flops = matmul_flops(sizes, batch)
        for lib, ts in times[case].items():
            gf = flops / statistics.median(ts) / 1e9
            note = (f"threads={threads}; {100 * gf / ceiling[dt]:.0f}% of GEMM ceiling; "
                    f"load1 at start {load:.1f}")
            if lib == "chainrule":
                note += "; raw cr.tensor params and ops"
            rows.append(make_row(NAME, case, lib, ts, gflops=gf, note=note,
                                 small_op_ns=probes[case], passes=PASSES[size]))
    return rows


# ---------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------

PAIR = " (pair)"


def pair_case(case):
    """The case name of a configuration timed with chainrule and NumPy alone."""
    return case + PAIR


def _by_case(rows, pairs=False):
    """{case: {library: median}} of the all-library cases (or of the pair cases)."""
    out = {}
    for r in rows:
        if (r["workload"] == NAME and not r["case"].startswith("gemm")
                and r["case"].endswith(PAIR) == pairs):
            out.setdefault(r["case"], {})[r["library"]] = r["median_s"]
    return out


def _ratios(cases, library="chainrule"):
    return {c.removesuffix(PAIR): m[library] / m["numpy"] for c, m in cases.items()
            if library in m and "numpy" in m}


def target_vs_numpy(rows):
    """The ratio of the pair cases where there are some (no user runs another library's
    step between two of theirs, so chainrule and NumPy timed alone together is the
    comparison a user sees), with the all-library ratio beside it; else the all-library
    one."""
    name = "w3: chainrule <= 1.10x hand-written NumPy at every batch >= 128"
    together, paired = _ratios(_by_case(rows)), _ratios(_by_case(rows, pairs=True))
    together = {c: r for c, r in together.items() if _batch(c) >= 128}
    paired = {c: r for c, r in paired.items() if _batch(c) >= 128}
    ratios = paired or together
    if not ratios:
        return name, None, "no rows"
    bad = {c: r for c, r in ratios.items() if r > 1.10}
    detail = "; ".join(f"{c}: {r:.2f}x" + (f" ({together[c]:.2f}x with all libraries)"
                                           if paired and c in together else "")
                       for c, r in ratios.items())
    if paired:
        detail = "chainrule and NumPy timed as a pair: " + detail
    worst = max(ratios, key=ratios.get)  # the machine's state around the closest one
    probe = next((r.get("small_op_ns") for r in rows if r["workload"] == NAME
                  and r["case"] == (pair_case(worst) if paired else worst)
                  and r.get("small_op_ns")), None)
    if probe:
        detail += (f" (around {worst}, a 2-element NumPy add took "
                   f"{min(probe):.0f}-{max(probe):.0f} ns)")
    if bad:
        detail += "; missed by " + ", ".join(f"{c}: {r / 1.10:.2f}x"
                                             for c, r in bad.items())
    return name, not bad, detail


def _faster_than(name, rows, ours, theirs, label, chosen):
    """Met if ``ours`` takes less time than ``theirs`` on every case ``chosen`` picks."""
    ratios = {c: m[ours] / m[theirs] for c, m in _by_case(rows).items()
              if chosen(c) and ours in m and theirs in m}
    if not ratios:
        return name, None, f"no rows with {label}"
    detail = "; ".join(f"{c}: {r:.2f}x {label}" for c, r in ratios.items())
    return name, all(r < 1.0 for r in ratios.values()), detail


def target_vs_torch(rows):
    return _faster_than("w3: chainrule faster than PyTorch eager at batch 128", rows,
                        "chainrule", "torch", "torch", lambda c: " b128 " in c)


def _batch(case):
    return int(case.split(" b")[1].split()[0])


def target_jit_vs_numpy(rows):
    """cr.jit's step against the hand-written one: <= 0.95x at 784-128-10 batch 128
    float32, <= 1.00x at every configuration (the pair timings where there are some)."""
    name = ("w3: cr.jit step <= 0.95x hand-written NumPy at 784-128-10 b128 float32, "
            "<= 1.00x everywhere")
    ratios = (_ratios(_by_case(rows, pairs=True), "chainrule-jit")
              or _ratios(_by_case(rows), "chainrule-jit"))
    if not ratios:
        return name, None, "no rows"
    bounds = {c: 0.95 if c == "784-128-10 b128 float32" else 1.00 for c in ratios}
    bad = {c: r for c, r in ratios.items() if r > bounds[c]}
    detail = "; ".join(f"{c}: {r:.2f}x" for c, r in ratios.items())
    if bad:
        detail += "; missed at " + ", ".join(f"{c} ({r:.2f}x > {bounds[c]:.2f}x)"
                                            for c, r in bad.items())
    return name, not bad, detail


def target_jit_vs_jax_jit(rows):
    return _faster_than(
        "w3: cr.jit step faster than jax.jit at the small sizes (784-128-10, batch <= 128)",
        rows, "chainrule-jit", "jax-jit", "jax.jit",
        lambda c: c.startswith("784-128-10 ") and _batch(c) <= 128)


TARGETS = [target_vs_numpy, target_vs_torch, target_jit_vs_numpy, target_jit_vs_jax_jit]


def _print(rows):
    for r in rows:
        extra = f"  {r['gflops']:.1f} GFLOP/s" if "gflops" in r else ""
        print(f"{r['case']:32s} {r['library']:14s} {r['median_s'] * 1e3:10.3f} ms "
              f"(n={r['repeats']}){extra}")
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    from common import keep_freed_memory
    keep_freed_memory()  # as run.py does
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick",
               include_chainrule_nn="--nn" in sys.argv))
