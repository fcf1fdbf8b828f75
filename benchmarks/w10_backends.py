"""Workload 10: chainrule's transforms on NumPy arrays and on torch tensors, side by side.

The same chainrule code, given torch tensors, computes with torch's functions
(chainrule.backends, docs/backends.md): what does the translation cost, and what does
torch's own autograd take for the same derivative?

* MLP step gradient: ``cr.grad(loss)`` of a 784-128-10 MLP (ReLU, cross-entropy) at
  batch 128, float32, with respect to its four parameter arrays;
* Hessian: ``cr.hessian(loss)`` of an L2-regularised logistic loss in 50 parameters
  over 1,000 examples, float64.

Libraries (rows):

* chainrule        - on NumPy arrays (the baseline, ratio 1);
* chainrule-jit    - the same function under ``cr.jit``;
* chainrule-torch  - the same call on torch CPU tensors (the result a torch tensor);
* chainrule-torch-jit - under ``cr.jit``: the program's calls replayed in torch;
* torch            - torch's own: ``torch.autograd.grad`` of the loss for the MLP,
                     ``torch.func.hessian`` for the Hessian;
* on a CUDA device, when ``torch.cuda.is_available()``, chainrule-torch and torch
  again (case "... (cuda)", each call synchronised); else one row says why not.

Every result is checked against chainrule's on NumPy before timing. torch runs with
one thread, as the other workloads do.

    python benchmarks/w10_backends.py [tiny|quick|full]
"""
import sys

import numpy as np

from common import checked, error_row, interleave, optional, pick, row

from w9_per_example_grads import make_problem as make_mlp  # (the same MLP)

NAME = "backends"


def make_logistic(n, d=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) > 0.5).astype(np.float64)
    w = rng.standard_normal(d) / np.sqrt(d)
    return w, X, y


# ---------------------------------------------------------------------------------------
# chainrule: one function for NumPy's arrays and torch's tensors alike
# ---------------------------------------------------------------------------------------

def chainrule_mlp(params, x, y, jit=False):
    import chainrule as cr

    def loss(p, x, y):
        h = cr.relu(x @ p["w1"] + p["b1"])
        return -cr.mean(cr.sum(cr.log_softmax(h @ p["w2"] + p["b2"], axis=-1) * y,
                               axis=-1))
    step = cr.jit(cr.grad(loss)) if jit else cr.grad(loss)
    return lambda: step(params, x, y)


def chainrule_hessian(w, X, y, jit=False):
    import chainrule as cr

    def loss(w, X, y):
        z = X @ w
        return cr.mean(cr.logaddexp(0.0, z) - y * z) + 0.1 * cr.sum(w ** 2)
    hessian = cr.jit(cr.hessian(loss)) if jit else cr.hessian(loss)
    return lambda: hessian(w, X, y)


# ---------------------------------------------------------------------------------------
# torch's own autograd
# ---------------------------------------------------------------------------------------

def torch_mlp(params, x, y, torch, sync):
    names = list(params)

    def step():
        p = {k: v.detach().requires_grad_() for k, v in params.items()}
        h = torch.relu(x @ p["w1"] + p["b1"])
        loss = -(torch.log_softmax(h @ p["w2"] + p["b2"], -1) * y).sum(-1).mean()
        grads = torch.autograd.grad(loss, [p[k] for k in names])
        sync()
        return dict(zip(names, grads))
    return step


def torch_hessian(w, X, y, torch, sync):
    from torch.func import hessian

    def loss(w):
        z = X @ w
        return (torch.logaddexp(torch.zeros_like(z), z) - y * z).mean() + 0.1 * (w ** 2).sum()
    h = hessian(loss)

    def step():
        out = h(w)
        sync()
        return out
    return step


def _synchronised(fn, sync):
    def call():
        out = fn()
        sync()
        return out
    return call


def _numpy(tree):
    """A result as NumPy's float64, for the check (torch's from any device)."""
    if isinstance(tree, dict):
        return [_numpy(tree[k]) for k in sorted(tree)]
    if hasattr(tree, "detach"):
        tree = tree.detach().cpu().numpy()
    return np.asarray(tree, np.float64)


def _cases(size):
    batch = pick(size, 8, 128, 128)
    n = pick(size, 20, 1000, 1000)
    return {f"MLP step gradient, 784-128-10, batch {batch}, float32": (make_mlp(batch),
                                                                        chainrule_mlp,
                                                                        torch_mlp, 1e-4),
            f"Hessian, logistic loss, 50 parameters, {n} examples, float64": (
                make_logistic(n), chainrule_hessian, torch_hessian, 1e-10)}


def run(size):
    repeats = pick(size, 1, 20, 100)
    torch = optional("torch")
    compat = optional("array_api_compat")
    rows = []
    for case, (problem, ours, theirs, rtol) in _cases(size).items():
        fns = {"chainrule": ours(*problem), "chainrule-jit": ours(*problem, jit=True)}
        devices = []
        if torch is not None and compat is not None:
            torch.set_num_threads(1)
            devices.append("cpu")
            if torch.cuda.is_available():
                devices.append("cuda")
            else:
                rows.append(error_row(NAME, case + " (cuda)", "torch",
                                      "skipped: no CUDA device (torch.cuda.is_available() "
                                      "is False)"))
        reference = _numpy(fns["chainrule"]())
        for device in devices:
            moved = _to_torch(problem, torch, device)
            sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
            found = {"chainrule-torch": _synchronised(ours(*moved), sync),
                     "chainrule-torch-jit": _synchronised(ours(*moved, jit=True), sync),
                     "torch": theirs(*moved, torch, sync)}
            for lib, fn in found.items():
                checked(_numpy(fn()), reference, rtol=rtol, atol=rtol,
                        what=f"{NAME} / {case} / {lib} on {device}")
            if device == "cpu":
                fns.update(found)
            else:
                times = interleave(found, repeats, warmup=2, block=5)
                rows += [row(NAME, case + " (cuda)", lib, ts) for lib, ts in times.items()]
        times = interleave(fns, repeats, warmup=2, block=5)
        rows += [row(NAME, case, lib, ts) for lib, ts in times.items()]
    return rows


def _to_torch(problem, torch, device):
    def move(a):
        return {k: move(v) for k, v in a.items()} if isinstance(a, dict) else \
            torch.from_numpy(a).to(device)
    return tuple(move(a) for a in problem)


def _print(rows):
    for r in rows:
        took = "-" if r["median_s"] is None else f"{1e3 * r['median_s']:8.2f} ms"
        print(f"{r['case']:68s} {r['library']:16s} {took}  {r.get('error', '')}")


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
