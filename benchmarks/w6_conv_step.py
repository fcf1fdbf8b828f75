"""Workload 6: one training step (forward, backward, SGD) of a small convolutional network.

Batch 64 of 1x28x28 images -> Conv2d(1, 8, 3) -> relu -> 2x2 max pool -> flatten ->
Linear(1352, 10) -> cross-entropy, float32 and float64. Every library gets the same data,
the same initial weights and the same math:

* chainrule      - raw ``cr.tensor`` parameters with ``nn.functional.conv2d``,
                   ``max_pool2d``, ``linear`` and ``cross_entropy``: the convolution is
                   one operation of the rule table (im2col through a strided view, one
                   batched matmul), max pooling the max over unfolded windows;
* chainrule-jit  - the same step under ``cr.jit``, traced once and replayed;
* torch          - PyTorch eager on the CPU (``F.conv2d``, ``F.max_pool2d``, ``F.linear``),
                   its thread count set to NumPy's BLAS thread count;
* numpy          - forward and backward by hand: im2col through a strided view, one
                   matmul each way, the pooling as a reshape. The floor for a NumPy engine.

Before any timing each library's gradients (one step at lr = 0) are compared with the
hand-written NumPy ones; a mismatch raises. The libraries take turns of one untimed
and 5 timed steps (common.interleave), after a warm-up; the median is reported.

    python benchmarks/w6_conv_step.py [tiny|quick|full]
"""
import sys

import numpy as np

from common import agreeing_steps, interleave, optional, pick, print_targets, row

NAME = "conv2d step"
LR = 0.01
BATCH, SIDE, CHANNELS, CLASSES = 64, 28, 8, 10
POOLED = (SIDE - 2) // 2


def make_problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, 1, SIDE, SIDE)).astype(dtype)
    y = rng.integers(0, CLASSES, BATCH)
    features = CHANNELS * POOLED * POOLED
    params = [rng.uniform(-1 / 3, 1 / 3, (CHANNELS, 1, 3, 3)).astype(dtype),
              rng.uniform(-1 / 3, 1 / 3, CHANNELS).astype(dtype),
              (rng.standard_normal((features, CLASSES)) / np.sqrt(features)).astype(dtype),
              np.zeros(CLASSES, dtype)]
    return x, y, params


# ---------------------------------------------------------------------------------------
# By hand in NumPy
# ---------------------------------------------------------------------------------------

def numpy_step(x, y, params, lr=LR):
    w, b, w_out, b_out = params
    n = len(x)
    # im2col: (N, 9, 26*26), the kernel taps in w's order
    cols = np.lib.stride_tricks.sliding_window_view(x[:, 0], (3, 3), axis=(1, 2))
    cols = cols.transpose(0, 3, 4, 1, 2).reshape(n, 9, -1)
    z = np.matmul(w.reshape(CHANNELS, 9), cols) + b[:, None]          # (N, 8, 676)
    a = np.maximum(z, 0).reshape(n, CHANNELS, 2 * POOLED, 2 * POOLED)
    # the four corners of the 2x2 windows as strided views: elementwise maxima run
    # over long rows, where a reduction over two short axes would not
    corners = [(i, j, a[:, :, i::2, j::2]) for i in (0, 1) for j in (0, 1)]
    pooled = np.maximum(np.maximum(corners[0][2], corners[1][2]),
                        np.maximum(corners[2][2], corners[3][2]))
    h = pooled.reshape(n, -1)
    logits = h @ w_out + b_out
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(n)
    loss = -log_p[rows, y].mean()
    d = np.exp(log_p)
    d[rows, y] -= 1
    d /= n
    g_w_out, g_b_out = h.T @ d, d.sum(axis=0)
    d_pooled = (d @ w_out.T).reshape(pooled.shape)
    d_a = np.empty_like(a)
    for i, j, corner in corners:  # random data: no ties, one winner per window
        d_a[:, :, i::2, j::2] = (corner == pooled) * d_pooled
    d_z = d_a.reshape(n, CHANNELS, -1) * (z > 0)
    g_w = np.matmul(d_z, cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    g_b = d_z.sum(axis=(0, 2))
    grads = [g_w, g_b, g_w_out, g_b_out]
    for p, g in zip(params, grads):
        p -= lr * g
    return loss, grads


def make_numpy(x, y, raw):
    params = [p.copy() for p in raw]
    return (lambda: numpy_step(x, y, params),
            lambda: numpy_step(x, y, [p.copy() for p in raw], lr=0.0)[1])


# ---------------------------------------------------------------------------------------
# chainrule, eager and jitted; torch
# ---------------------------------------------------------------------------------------

def make_chainrule(x, y, raw, jit=False):
    import chainrule as cr
    from chainrule.nn import functional as F

    def step(xt, params, lr):
        w, b, w_out, b_out = params
        h = F.max_pool2d(cr.relu(F.conv2d(xt, w, b)), 2)
        loss = F.cross_entropy(F.linear(h.reshape((len(y), -1)), w_out, b_out), y)
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
        return [p.grad for p in params]

    if jit:
        step = cr.jit(step)
    def linear_layout(arrays):  # the output layer's weight (in, out) as nn.Linear's (out, in)
        return [np.ascontiguousarray(a.T) if a.ndim == 2 else a.copy() for a in arrays]

    xt = cr.tensor(x)
    params = [cr.tensor(p, requires_grad=True) for p in linear_layout(raw)]
    return (lambda: step(xt, params, LR),
            lambda: linear_layout(step(xt, [cr.tensor(p, requires_grad=True)
                                            for p in linear_layout(raw)], 0.0)))


def make_torch(x, y, raw, torch):
    import torch.nn.functional as TF
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def step(params, lr):
        w, b, w_out, b_out = params
        h = TF.max_pool2d(torch.relu(TF.conv2d(xt, w, b)), 2).flatten(1)
        loss = TF.cross_entropy(TF.linear(h, w_out, b_out), yt)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-lr)
        return params

    def fresh():
        w, b, w_out, b_out = (p.copy() for p in raw)
        return [torch.tensor(a, requires_grad=True) for a in (w, b, w_out.T.copy(), b_out)]

    params = fresh()

    def grads():
        got = [p.grad.numpy() for p in step(fresh(), 0.0)]
        return [got[0], got[1], got[2].T, got[3]]
    return (lambda: step(params, LR)), grads


def run(size):
    repeats = pick(size, 1, 30, 150)
    torch = optional("torch")
    if torch is not None:
        from w3_tensor_mlp import _blas_threads
        torch.set_num_threads(_blas_threads())
    rows = []
    for dtype in (np.float32, np.float64):
        case = f"batch {BATCH}, 1x{SIDE}x{SIDE} -> 8x3x3, {np.dtype(dtype).name}"
        x, y, raw = make_problem(dtype)
        makers = {"numpy": lambda: make_numpy(x, y, raw),
                  "chainrule": lambda: make_chainrule(x, y, raw),
                  "chainrule-jit": lambda: make_chainrule(x, y, raw, jit=True)}
        if torch is not None:
            makers["torch"] = lambda: make_torch(x, y, raw, torch)
        rtol = 1e-3 if dtype == np.float32 else 1e-9
        steps = agreeing_steps(makers, rtol, f"{NAME} / {case}")
        times = interleave(steps, repeats, warmup=2, block=5 if repeats >= 5 else 1)
        for lib, ts in times.items():
            rows.append(row(NAME, case, lib, ts))
    return rows


def target_chainrule_vs_torch(rows):
    name = "w6: chainrule-jit's conv step within 3x torch eager (float32, informational)"
    med = {r["library"]: r["median_s"] for r in rows
           if r["workload"] == NAME and r["case"].endswith("float32")}
    if "chainrule-jit" not in med or "torch" not in med:
        return name, None, "not measured"
    ratio = med["chainrule-jit"] / med["torch"]
    return name, ratio <= 3, (f"chainrule-jit {1e3 * med['chainrule-jit']:.2f} ms, torch "
                              f"{1e3 * med['torch']:.2f} ms ({ratio:.2f}x)")


TARGETS = [target_chainrule_vs_torch]


def _print(rows):
    for r in rows:
        print(f"{r['case']:40s} {r['library']:14s} {1e3 * r['median_s']:8.3f} ms "
              f"(min {1e3 * r['min_s']:.3f}, n={r['repeats']})")
    for dtype in ("float32", "float64"):
        med = {r["library"]: r["median_s"] for r in rows if r["case"].endswith(dtype)}
        if "numpy" in med:
            print(f"{dtype}: " + ", ".join(f"{lib} {t / med['numpy']:.2f}x numpy"
                                           for lib, t in med.items() if lib != "numpy"))
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
