"""Where the eager MLP step's time goes, beside the hand-written NumPy step.

Workload 3's step (784-128-10 by default: ReLU, cross-entropy, SGD), four ways, taking
turns in one process as workload 3's libraries do (``common.interleave``, turns of one
untimed and 5 timed steps):

* numpy   - the hand-written step (``w3_tensor_mlp.numpy_step``);
* rules   - the functions of chainrule's rules that the eager step runs (``rules/fused.py``:
            the fused layers' forward and pullback, the cross-entropy's), called on the
            arrays directly, with the bias gradients summed as the engine sums them:
            the eager step with its graph for free;
* eager   - chainrule's step (``w3_tensor_mlp.make_chainrule``);
* jit     - the same step under ``cr.jit``.

``eager - rules`` is what the engine adds: recording nodes, the backward walk, the
checks of shapes, labels and versions. It is printed at the configuration asked for and
at a tiny one (8-4-3, batch 4), where NumPy's share is negligible and the same Python
runs alone. The gap between the two figures is Python that runs after a large matmul
has filled the caches with its arrays.

    python benchmarks/eager_parts.py [784-128-10] [batch] [float32|float64]

Before timing, each way's gradients (one step at lr = 0) are checked against the
hand-written ones; a mismatch raises.
"""
import statistics
import sys

import numpy as np

import common
import w3_tensor_mlp as w3

TINY = ([8, 4, 3], 4)


def make_rules(x, y, raw):
    """The rules' functions on plain arrays, in the order the eager step calls them."""
    from chainrule.rules import fused

    def step(params, lr):
        n_layers = len(params) // 2
        inputs, h = [], x
        for i in range(n_layers):
            inputs.append(h)
            layer = fused._linear_relu if i < n_layers - 1 else fused._linear
            h = layer(h, params[2 * i], params[2 * i + 1])
            inputs.append(h)
        loss, residual = fused._cross_entropy_and_softmax(h, y)  # (labels checked)
        g = fused._cross_entropy_pullback(np.array(1, h.dtype), loss, h, y,
                                         (True, False), residual)[0]
        grads = [None] * len(params)
        for i in reversed(range(n_layers)):
            pullback = (fused._linear_relu_pullback if i < n_layers - 1
                        else fused._linear_pullback)
            g_x, grads[2 * i], g_b = pullback(g, inputs[2 * i + 1], inputs[2 * i],
                                              params[2 * i], params[2 * i + 1],
                                              (i > 0, True, True), None)
            grads[2 * i + 1] = np.add.reduce(g_b, axis=0)  # the engine's unbroadcast
            g = g_x
        for p, grad in zip(params, grads):
            p -= lr * grad
        return grads

    params = w3.linear_layout(raw)  # the weights in nn.Linear's (out, in)
    return (lambda: step(params, w3.LR),
            lambda: w3.linear_layout(step(w3.linear_layout(raw), 0.0)))


def measure(sizes, batch, dtype, repeats):
    """{way: median seconds per step}, after checking every way's gradients."""
    x, y, raw = w3.make_problem(sizes, batch, dtype)
    ways = {"numpy": w3.make_numpy(x, y, raw), "rules": make_rules(x, y, raw),
            "eager": w3.make_chainrule(x, y, raw),
            "jit": w3.make_chainrule(x, y, raw, jit=True)}
    expected = ways["numpy"][1]()
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    for name, (_, grads_at_lr0) in ways.items():
        common.checked(grads_at_lr0(), expected, rtol=rtol, what=f"{name} gradients")
    times = w3.interleaved({name: step for name, (step, _) in ways.items()}, repeats)
    return {name: statistics.median(ts) for name, ts in times.items()}


def report(sizes, batch, dtype, repeats=1000):
    """The table for one configuration and for the tiny one, as lines of text."""
    lines = []
    for label, (arch, b), reps in (("asked", (sizes, batch), repeats),
                                   ("tiny", TINY, repeats * 10)):
        t = measure(arch, b, dtype, reps)
        name = f"{'-'.join(map(str, arch))} b{b} {np.dtype(dtype).name}"
        lines.append(f"{name}: " + ", ".join(
            f"{way} {t[way] * 1e6:.1f} us ({t[way] / t['numpy']:.3f}x)" for way in t))
        lines.append(f"  the engine (eager - rules): {(t['eager'] - t['rules']) * 1e6:.1f} us")
    return lines


def main(argv):
    sizes = [int(s) for s in (argv[0] if argv else "784-128-10").split("-")]
    batch = int(argv[1]) if len(argv) > 1 else 128
    dtype = np.dtype(argv[2] if len(argv) > 2 else "float32").type
    for line in report(sizes, batch, dtype):
        print(line)


if __name__ == "__main__":
    common.pin_to_one_cpu()  # as make bench runs: one CPU, malloc keeping freed blocks
    common.keep_freed_memory()
    main(sys.argv[1:])
