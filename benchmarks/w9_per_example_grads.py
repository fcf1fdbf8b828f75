"""Workload 9: per-example gradients of a 784-128-10 MLP at batch 128, by vmap of grad.

The output alone is 128 copies of the weights (about 100,000 floats each), so writing
it is the floor: the "floor" row is the time NumPy takes to write that many bytes
(``np.empty`` of the output, then one pass of ``fill``). float32.

* chainrule     - ``cr.vmap(cr.grad(loss), in_axes=(None, 0, 0))`` eagerly;
* chainrule-jit - the same under ``cr.jit``;
* torch         - ``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))``;
* jax           - ``jax.vmap(jax.grad(loss))`` without jit, and under ``jax.jit``.

Each library runs 5 calls in a row per turn (``interleave(block=5)``), as a training
loop does: a call right after another library's would start with that library's
data in the caches and its freed memory handed back to the system.

    python benchmarks/w9_per_example_grads.py [tiny|quick|full]
"""
import sys

import numpy as np

from common import checked, interleave, optional, pick, row

NAME = "per-example grads"
SIZES = (784, 128, 10)


def make_problem(batch, seed=0):
    rng = np.random.default_rng(seed)
    params = {"w1": (rng.standard_normal(SIZES[:2]) / 28).astype(np.float32),
              "b1": np.zeros(SIZES[1], np.float32),
              "w2": (rng.standard_normal(SIZES[1:]) / 11).astype(np.float32),
              "b2": np.zeros(SIZES[2], np.float32)}
    x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[2], dtype=np.float32)[rng.integers(0, SIZES[2], batch)]
    return params, x, y


def make_chainrule(params, x, y, jit=False):
    import chainrule as cr

    def loss(p, xi, yi):
        h = cr.relu(xi @ p["w1"] + p["b1"])
        return -cr.sum(cr.log_softmax(h @ p["w2"] + p["b2"]) * yi)
    step = cr.vmap(cr.grad(loss), in_axes=(None, 0, 0))
    if jit:
        step = cr.jit(step)
    return lambda: step(params, x, y)


def make_torch(params, x, y, torch):
    from torch.func import grad, vmap
    p = {k: torch.from_numpy(v) for k, v in params.items()}
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def loss(p, xi, yi):
        h = torch.relu(xi @ p["w1"] + p["b1"])
        return -(torch.log_softmax(h @ p["w2"] + p["b2"], -1) * yi).sum()
    step = vmap(grad(loss), in_dims=(None, 0, 0))
    return lambda: {k: v.numpy() for k, v in step(p, xt, yt).items()}


def make_jax(params, x, y, jax, jit):
    import jax.numpy as jnp

    def loss(p, xi, yi):
        h = jax.nn.relu(xi @ p["w1"] + p["b1"])
        return -jnp.sum(jax.nn.log_softmax(h @ p["w2"] + p["b2"]) * yi)
    step = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    if jit:
        step = jax.jit(step)
    return lambda: {k: v.block_until_ready() for k, v in step(params, x, y).items()}


def make_floor(params, batch):
    count = batch * sum(v.size for v in params.values())

    def write():
        out = np.empty(count, np.float32)
        out.fill(1.0)
        return out
    return write


def run(size):
    batch = pick(size, 8, 128, 128)
    repeats = pick(size, 1, 20, 100)
    params, x, y = make_problem(batch)
    fns = {"chainrule": make_chainrule(params, x, y),
           "chainrule-jit": make_chainrule(params, x, y, jit=True),
           "numpy": make_floor(params, batch)}
    torch = optional("torch")
    if torch is not None:
        torch.set_num_threads(1)
        fns["torch"] = make_torch(params, x, y, torch)
    jax = optional("jax")
    if jax is not None:
        fns["jax"] = make_jax(params, x, y, jax, jit=False)
        fns["jax-jit"] = make_jax(params, x, y, jax, jit=True)
    reference = fns["chainrule"]()
    for lib in [lib for lib in fns if lib not in ("chainrule", "numpy")]:
        got = fns[lib]()
        for k in reference:
            checked(np.asarray(got[k], np.float64), np.asarray(reference[k], np.float64),
                    rtol=1e-3, atol=1e-5, what=f"{NAME} / {lib} / {k}")
    times = interleave(fns, repeats, warmup=2, block=5)
    case = f"784-128-10, batch {batch}, float32"
    return [row(NAME, case + (" (writing the output: the floor)" if lib == "numpy" else ""),
                lib if lib != "jax-jit" else "jax", ts,
                **({"jit": True} if lib == "jax-jit" else {})) for lib, ts in times.items()]


def _print(rows):
    for r in rows:
        label = r["library"] + (" (jit)" if r.get("jit") else "")
        print(f"{r['case']:58s} {label:14s} {1e3 * r['median_s']:8.2f} ms")


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
