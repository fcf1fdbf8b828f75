"""Workload 8: the gradient of a loss through a recurrent cell run for many steps,
written with ``scan`` and as a Python loop.

h = tanh(h @ W + x_t @ U) over T steps on a batch of 32 (hidden 16, input 8), the loss
the sum of the last hidden state squared; the gradient in W and U. float64.

* chainrule            - ``cr.scan`` eagerly: one operation of the graph (its reverse
                         pass reruns the steps and walks them back with cr.vjp);
* chainrule-jit        - the same under ``cr.jit``: one loop of the program for the
                         forward (which keeps each step's carry) and one for the
                         reverse walk, each body traced once;
* chainrule-jit (loop) - a Python loop under ``cr.jit``;
* jax                  - ``jax.jit(jax.grad(...))`` of ``lax.scan`` (one loop in XLA).

The program sizes (the lines of ``make_program``'s listing: a loop's body is listed,
and counted, once) are printed with the times.

    python benchmarks/w8_scan_step.py [tiny|quick|full]
"""
import sys

import numpy as np

from common import checked, interleave, optional, pick, row

NAME = "scan step"
BATCH, HIDDEN, INPUT = 32, 16, 8


def make_problem(steps, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((steps, BATCH, INPUT)),
            rng.standard_normal((HIDDEN, HIDDEN)) * 0.3,
            rng.standard_normal((INPUT, HIDDEN)) * 0.3)


def make_chainrule(xs, w, u, jit=False, loop=False):
    import chainrule as cr

    def loss(w, u):
        h = np.zeros((BATCH, HIDDEN))
        if loop:
            for x in xs:
                h = cr.tanh(h @ w + x @ u)
        else:
            h, _ = cr.scan(lambda h, x: (cr.tanh(h @ w + x @ u), None), h, xs)
        return cr.sum(h * h)

    def loss_scan_carry(params):  # differentiated in the carry: scan is one operation
        w, u = params
        h, _ = cr.scan(lambda c, x: ((cr.tanh(c[0] @ c[1] + x @ c[2]), c[1], c[2]), None),
                       (np.zeros((BATCH, HIDDEN)), w, u), xs)
        return cr.sum(h[0] * h[0])

    if loop:
        grad = cr.grad(loss, argnums=(0, 1))
        step = lambda w, u: grad(w, u)
    else:
        grad = cr.grad(loss_scan_carry)
        step = lambda w, u: grad((w, u))
    if jit:
        step = cr.jit(step)
    size = len(str(cr.make_program(step)(w, u)).splitlines()) if jit else None
    return (lambda: step(w, u)), size


def make_jax(xs, w, u, jax):
    import jax.numpy as jnp
    from jax import lax

    def loss(w, u):
        h, _ = lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u), None),
                        jnp.zeros((BATCH, HIDDEN)), xs)
        return jnp.sum(h * h)
    step = jax.jit(jax.grad(loss, argnums=(0, 1)))
    step(w, u)[0].block_until_ready()
    return lambda: [g.block_until_ready() for g in step(w, u)]


def run(size):
    steps = pick(size, 20, 1000, 1000)
    repeats = pick(size, 1, 5, 20)
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    xs, w, u = make_problem(steps)
    case = f"{steps} steps, batch {BATCH}, hidden {HIDDEN}, float64"
    fns, sizes = {}, {}
    fns["chainrule"], _ = make_chainrule(xs, w, u)
    fns["chainrule-jit"], sizes["scan"] = make_chainrule(xs, w, u, jit=True)
    loop, sizes["loop"] = make_chainrule(xs, w, u, jit=True, loop=True)
    reference = [np.asarray(g) for g in fns["chainrule"]()]
    for g, r in zip(loop(), reference):
        checked(np.asarray(g), r, rtol=1e-9, what=f"{NAME} / python loop")
    if jax is not None:
        fns["jax"] = make_jax(xs, w, u, jax)
        for g, r in zip(fns["jax"](), reference):
            checked(np.asarray(g), r, rtol=1e-9, what=f"{NAME} / jax")
    times = interleave(fns, repeats, warmup=1)
    rows = [row(NAME, case, lib, ts, program_lines=sizes.get("scan") if lib == "chainrule-jit"
                else None) for lib, ts in times.items()]
    loop_times = interleave({"chainrule-jit": loop}, repeats, warmup=1)["chainrule-jit"]
    rows.append(row(NAME, case + ", python loop", "chainrule-jit", loop_times,
                    program_lines=sizes["loop"]))
    return rows


def _print(rows):
    for r in rows:
        lines = f", program {r['program_lines']} lines" if r.get("program_lines") else ""
        print(f"{r['case']:52s} {r['library']:14s} {1e3 * r['median_s']:9.2f} ms{lines}")


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
