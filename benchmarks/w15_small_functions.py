"""Workload 15: small functions, differentiated over and over (issue 47, "measure first").

A sampler asks for the gradient of a 20-parameter log density millions of times; an
ODE solver asks for the Jacobian of a 6-state right-hand side at every implicit step.
The arrays are so small that the arithmetic costs next to nothing: what decides is what
a library pays per call (checking arguments, dispatching, building and walking a graph)
and per operation (a Python call and a NumPy call for each ``+``). This workload
measures that cost on four such functions:

1. ``f1(x) = sum(sin(x) x + exp(-x**2) / (1 + x**2)) + sum(tanh(x))**2``, x of 10;
2. a log density of 20 parameters: a linear model of 19 weights with Gaussian noise of
   unknown scale (the 20th parameter, log sigma) on 40 data points, and a standard
   normal prior on the weights;
3. Lorenz-96 with 6 states, ``dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + 8``, whose
   Jacobian an implicit ODE solver needs (by reverse and by forward mode);
4. a 10-32-1 tanh network's squared error on one example, differentiated with respect
   to its four parameter arrays (no Hessian here: 385 x 385 blocks are not a small
   function's derivative any more; the Hessian-vector product is what optimisers use).

For each, ``grad``, ``value_and_grad``, ``hessian`` and ``hvp`` (the ODE: ``jacrev`` and
``jacfwd``), in:

* ``chainrule``: eager ``cr.grad(f)`` etc., f written with ``chainrule.numpy``;
* ``chainrule-jit``: ``cr.jit(cr.grad(f))`` etc., as it runs once its program is hot:
  compiled by Numba where installed (``chainrule.jit.native``; ``compile_native`` does
  at setup what the 1,000th call would start in the background);
* ``chainrule-jit-numpy``: the same, its program replayed as NumPy calls (the tier
  switched off, ``CHAINRULE_NATIVE=0``): what the first 1,000 calls run, and every call
  without Numba;
* ``jax-jit``: ``jax.jit(jax.grad(f))`` etc., float64, arguments already on the device;
* ``torch``: PyTorch eager, fresh leaf tensors and ``backward()`` each call (the Hessian
  by ``torch.autograd.functional.hessian``, the HVP by double backward, the Jacobian by
  ``torch.autograd.functional.jacobian``);
* ``torch-func``: ``torch.func.grad``, ``grad_and_value``, ``hessian``,
  ``jvp(grad(f))``, ``jacrev``, ``jacfwd``;
* ``autograd``: HIPS autograd (no forward mode, so no ``jacfwd``);
* ``numpy``: the closed form by hand (not written for the network's HVP), the floor.

Every result is first checked against chainrule's eager one (``np.testing.
assert_allclose``, rtol 1e-9). Each library's call is then timed in batches of calls
in a row (a batch lasts about a millisecond, so that a call runs with its own code
and data in cache, as in a sampler's loop, not right after another library's), the
libraries' batches interleaved; a row is the median time per call.

Two more rows per problem: the **first call** of ``cr.jit(cr.grad(f))`` and of
``jax.jit(jax.grad(f))`` (trace and compile; the ODE: ``jacrev``), each on a fresh
function object so that nothing is cached. A library that is not installed is skipped
with the reason printed.

    python benchmarks/w15_small_functions.py [tiny|quick|full]
"""
import sys
import time

import numpy as np

from common import interleave, optional, pick, print_targets, row

NAME = "small functions"

LIBS = ("chainrule", "chainrule-jit", "chainrule-jit-numpy", "jax-jit", "torch", "torch-func", "autograd", "numpy")
RTOL = 1e-9


# ---------------------------------------------------------------------------------------
# Helpers: pytrees of tuples, flattening for the check
# ---------------------------------------------------------------------------------------

def tmap(fn, x):
    """``fn`` on each array of ``x``, an array or a tuple of arrays."""
    return tuple(fn(a) for a in x) if isinstance(x, tuple) else fn(x)


def flat(x):
    """One float64 vector from a result: arrays, tensors, numbers, nested tuples."""
    if isinstance(x, (tuple, list)):
        return np.concatenate([flat(a) for a in x]) if x else np.zeros(0)
    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64).ravel()


def agree(got, want, what):
    got, want = flat(got), flat(want)
    # Entries that cancel to about zero (e.g. a Hessian's) differ by rounding alone: an
    # absolute floor far below the result's scale keeps rtol from judging them.
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13 * scale, err_msg=what)


# ---------------------------------------------------------------------------------------
# The problems. Each function is written once, for any NumPy-like module ``m`` (chainrule.
# numpy, jax.numpy, torch, autograd.numpy); ``const`` turns the problem's data into that
# library's arrays. ``make(m, const)`` returns a new function object on every call (the
# first-call rows rely on it). ``by_hand`` holds the closed forms.
# ---------------------------------------------------------------------------------------

class Problem:
    def __init__(self, name, kinds, make, x, v, by_hand):
        self.name, self.kinds, self.make = name, kinds, make
        self.x, self.v, self.by_hand = x, v, by_hand


def f1_problem():
    def make(m, const):
        def f1(x):
            return m.sum(m.sin(x) * x + m.exp(-x * x) / (1 + x * x)) + m.sum(m.tanh(x)) ** 2
        return f1

    def parts(x):
        t, e, q = np.tanh(x), np.exp(-x * x), 1 + x * x
        s = 1 - t * t  # tanh'
        total = np.sum(t)
        inner = 1 / q + 1 / q ** 2
        grad = np.sin(x) + x * np.cos(x) - 2 * x * e * inner + 2 * total * s
        return t, e, q, s, total, inner, grad

    def value(x):
        return np.sum(np.sin(x) * x + np.exp(-x * x) / (1 + x * x)) + np.sum(np.tanh(x)) ** 2

    def grad(x):
        return parts(x)[-1]

    def hessian(x):
        t, e, q, s, total, inner, _ = parts(x)
        x2 = x * x
        d2 = (2 * np.cos(x) - x * np.sin(x) - 2 * e * inner + 4 * x2 * e * inner
              + 4 * x2 * e * (1 / q ** 2 + 2 / q ** 3) - 4 * total * t * s)
        return np.diag(d2) + 2 * np.outer(s, s)

    rng = np.random.default_rng(1)
    return Problem("f1, 10 numbers", ("grad", "value_and_grad", "hessian", "hvp"), make,
                   rng.uniform(-1.5, 1.5, 10), rng.normal(size=10),
                   {"grad": grad, "value_and_grad": lambda x: (value(x), grad(x)),
                    "hessian": hessian, "hvp": lambda x, v: hessian(x) @ v})


def log_density_problem():
    rng = np.random.default_rng(2)
    n, d = 40, 19
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) * 0.5 + 0.3 * rng.normal(size=n)

    def make(m, const):
        Xc, yc = const(X), const(y)

        def log_density(theta):
            w, log_sigma = theta[:d], theta[d]
            r = yc - Xc @ w
            return (-n * log_sigma - 0.5 * m.exp(-2 * log_sigma) * m.sum(r * r)
                    - 0.5 * m.sum(w * w))
        return log_density

    def value(theta):
        w, s = theta[:d], theta[d]
        r = y - X @ w
        return -n * s - 0.5 * np.exp(-2 * s) * (r @ r) - 0.5 * (w @ w)

    def grad(theta):
        w, s = theta[:d], theta[d]
        r, k = y - X @ w, np.exp(-2 * s)
        return np.concatenate([k * (X.T @ r) - w, [-n + k * (r @ r)]])

    def hessian(theta):
        w, s = theta[:d], theta[d]
        r, k = y - X @ w, np.exp(-2 * s)
        H = np.empty((d + 1, d + 1))
        H[:d, :d] = -k * (X.T @ X) - np.eye(d)
        H[:d, d] = H[d, :d] = -2 * k * (X.T @ r)
        H[d, d] = -2 * k * (r @ r)
        return H

    theta = np.concatenate([0.1 * rng.normal(size=d), [np.log(0.5)]])
    return Problem("log density, 20 parameters", ("grad", "value_and_grad", "hessian", "hvp"),
                   make, theta, rng.normal(size=d + 1),
                   {"grad": grad, "value_and_grad": lambda t: (value(t), grad(t)),
                    "hessian": hessian, "hvp": lambda t, v: hessian(t) @ v})


def lorenz96_problem():
    n, forcing = 6, 8.0

    def make(m, const):
        def lorenz96(x):
            return (m.roll(x, -1) - m.roll(x, 2)) * m.roll(x, 1) - x + forcing
        return lorenz96

    i = np.arange(n)

    def jacobian(x):
        J = -np.eye(n)
        J[i, (i + 1) % n] = x[(i - 1) % n]
        J[i, (i - 2) % n] = -x[(i - 1) % n]
        J[i, (i - 1) % n] = x[(i + 1) % n] - x[(i - 2) % n]
        return J

    rng = np.random.default_rng(3)
    return Problem("Lorenz-96 Jacobian, 6 states", ("jacrev", "jacfwd"), make,
                   forcing + rng.normal(size=n), None,
                   {"jacrev": jacobian, "jacfwd": jacobian})


def network_problem():
    rng = np.random.default_rng(4)
    sizes = (10, 32, 1)
    example, target = rng.normal(size=sizes[0]), 0.7

    def make(m, const):
        xc = const(example)

        def squared_error(params):
            W1, b1, w2, b2 = params
            h = m.tanh(W1 @ xc + b1)
            return (m.sum(w2 * h) + b2 - target) ** 2
        return squared_error

    def forward(params):
        W1, b1, w2, b2 = params
        h = np.tanh(W1 @ example + b1)
        return h, np.sum(w2 * h) + b2 - target

    def grad(params):
        h, err = forward(params)
        d = 2 * err
        dz = d * params[2] * (1 - h * h)
        return np.outer(dz, example), dz, d * h, d

    def value_and_grad(params):
        return forward(params)[1] ** 2, grad(params)

    def init():
        return (rng.normal(size=(sizes[1], sizes[0])) / np.sqrt(sizes[0]),
                0.1 * rng.normal(size=sizes[1]),
                rng.normal(size=sizes[1]) / np.sqrt(sizes[1]), np.array(0.05))

    return Problem("10-32-1 network, parameters", ("grad", "value_and_grad", "hvp"), make,
                   init(), init(), {"grad": grad, "value_and_grad": value_and_grad})


PROBLEMS = (f1_problem, log_density_problem, lorenz96_problem, network_problem)


# ---------------------------------------------------------------------------------------
# Each library: {kind: callable()} for a problem, or a reason it cannot run
# ---------------------------------------------------------------------------------------

def chainrule_calls(p, jit, native=True):
    import os
    import chainrule as cr
    import chainrule.numpy as cnp
    f = p.make(cnp, lambda a: a)
    wrap = cr.jit if jit else (lambda fn: fn)
    transforms = {"grad": cr.grad, "value_and_grad": cr.value_and_grad,
                  "hessian": cr.hessian, "jacrev": cr.jacrev, "jacfwd": cr.jacfwd}
    calls = {}
    for kind in p.kinds:
        if kind == "hvp":
            fn, args = wrap(lambda x, v: cr.hvp(f, x, v)), (p.x, p.v)
        else:
            fn, args = wrap(transforms[kind](f)), (p.x,)
        calls[kind] = lambda fn=fn, args=args: fn(*args)
        if jit:  # traced here, with the compiled tier on or off
            saved = os.environ.get("CHAINRULE_NATIVE")
            os.environ["CHAINRULE_NATIVE"] = "1" if native else "0"
            try:
                status = fn.compile_native(*args)
            finally:
                if saved is None:
                    del os.environ["CHAINRULE_NATIVE"]
                else:
                    os.environ["CHAINRULE_NATIVE"] = saved
            if native:
                print(f"  {p.name}, {kind}: {status}", flush=True)
    return calls


def jax_module():
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    return jax


def jax_calls(p):
    jax = jax_module()
    import jax.numpy as jnp
    f = p.make(jnp, jnp.asarray)
    x, v = tmap(jnp.asarray, p.x), (None if p.v is None else tmap(jnp.asarray, p.v))
    transforms = {"grad": jax.grad, "value_and_grad": jax.value_and_grad,
                  "hessian": jax.hessian, "jacrev": jax.jacrev, "jacfwd": jax.jacfwd,
                  "hvp": lambda f: lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1]}
    calls = {}
    for kind in p.kinds:
        fn = jax.jit(transforms[kind](f))
        args = (x, v) if kind == "hvp" else (x,)
        calls[kind] = lambda fn=fn, args=args: jax.block_until_ready(fn(*args))
    return calls


def torch_eager_calls(p):
    import torch
    f = p.make(torch, torch.from_numpy)
    xt = tmap(torch.from_numpy, p.x)
    vt = None if p.v is None else tmap(torch.from_numpy, p.v)

    def leaves():  # fresh each call, as a training or sampling loop makes them
        return tmap(lambda a: torch.tensor(a, requires_grad=True), p.x)

    def as_list(t):
        return list(t) if isinstance(t, tuple) else [t]

    def grads_of(t):
        return tmap(lambda leaf: leaf.grad, t)

    def grad():
        t = leaves()
        f(t).backward()
        return grads_of(t)

    def value_and_grad():
        t = leaves()
        out = f(t)
        out.backward()
        return out.detach(), grads_of(t)

    def hvp():
        t = leaves()
        gs = torch.autograd.grad(f(t), as_list(t), create_graph=True)
        dot = sum(torch.sum(g * v) for g, v in zip(gs, as_list(vt)))
        hv = torch.autograd.grad(dot, as_list(t))
        return tuple(hv) if isinstance(t, tuple) else hv[0]

    calls = {"grad": grad, "value_and_grad": value_and_grad, "hvp": hvp,
             "hessian": lambda: torch.autograd.functional.hessian(f, xt),
             "jacrev": lambda: torch.autograd.functional.jacobian(f, xt)}
    return {kind: calls[kind] for kind in p.kinds if kind in calls}


def torch_func_calls(p):
    import torch
    from torch import func
    f = p.make(torch, torch.from_numpy)
    xt = tmap(torch.from_numpy, p.x)
    vt = None if p.v is None else tmap(torch.from_numpy, p.v)
    grad, grad_and_value = func.grad(f), func.grad_and_value(f)
    fns = {"hessian": func.hessian(f), "jacrev": func.jacrev(f), "jacfwd": func.jacfwd(f)}
    calls = {"grad": lambda: grad(xt),
             "value_and_grad": lambda: grad_and_value(xt)[::-1],
             "hvp": lambda: func.jvp(grad, (xt,), (vt,))[1]}
    calls.update({kind: (lambda fn=fn: fn(xt)) for kind, fn in fns.items()})
    return {kind: calls[kind] for kind in p.kinds}


def autograd_calls(p):
    import autograd
    import autograd.numpy as anp
    f = p.make(anp, lambda a: a)
    fns = {"grad": autograd.grad(f), "value_and_grad": autograd.value_and_grad(f),
           "hessian": autograd.hessian(f), "jacrev": autograd.jacobian(f)}
    if isinstance(p.x, tuple):  # its hessian_vector_product takes arrays only
        grad = autograd.grad(f)
        hvp = autograd.grad(lambda x, v: sum(anp.sum(g * u) for g, u in zip(grad(x), v)))
    else:
        hvp = autograd.hessian_vector_product(f)
    calls = {kind: (lambda fn=fn: fn(p.x)) for kind, fn in fns.items()}
    calls["hvp"] = lambda: hvp(p.x, p.v)
    return {kind: calls[kind] for kind in p.kinds if kind in calls}


def numpy_calls(p):
    calls = {}
    for kind, fn in p.by_hand.items():
        args = (p.x, p.v) if kind == "hvp" else (p.x,)
        calls[kind] = lambda fn=fn, args=args: fn(*args)
    return calls


def missing_libraries():
    """{library: why it is skipped} for the libraries this machine lacks."""
    why = {}
    if jax_module() is None:
        why["jax-jit"] = "jax is not installed"
    if optional("torch") is None:
        why["torch"] = why["torch-func"] = "torch is not installed"
    elif optional("torch.func") is None:
        why["torch-func"] = "this torch has no torch.func"
    if optional("autograd") is None:
        why["autograd"] = "HIPS autograd is not installed"
    return why


BUILDERS = {
    "chainrule": lambda p: chainrule_calls(p, jit=False),
    "chainrule-jit": lambda p: chainrule_calls(p, jit=True),
    "chainrule-jit-numpy": lambda p: chainrule_calls(p, jit=True, native=False),
    "jax-jit": jax_calls,
    "torch": torch_eager_calls,
    "torch-func": torch_func_calls,
    "autograd": autograd_calls,
    "numpy": numpy_calls,
}


# ---------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------

# seconds of timed calls per library and case; the repeats (batches) at least / at most;
# how long a batch of calls in a row lasts
BUDGET = {"tiny": (0.0, 1, 1), "quick": (0.15, 5, 50), "full": (1.5, 15, 300)}
BATCH_S = 1e-3


def per_call_seconds(fn, at_least=0.02):
    """A rough time per call, to size the batches (the calls are also a warm-up)."""
    calls, t0 = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= at_least or calls >= 1000:
            return elapsed / calls


def batched(fn, k):
    def run_batch():
        for _ in range(k):
            fn()
    return run_batch


def time_case(calls, size):
    """{library: (seconds per call for each batch, calls per batch)}, interleaved."""
    budget, lo, hi = BUDGET[size]
    if size == "tiny":
        return {lib: (ts, 1) for lib, ts in interleave(calls, 1, warmup=0).items()}
    per_call = {lib: per_call_seconds(fn) for lib, fn in calls.items()}
    ks = {lib: max(1, round(BATCH_S / t)) for lib, t in per_call.items()}
    batch_s = max(per_call[lib] * ks[lib] for lib in calls)
    repeats = int(min(hi, max(lo, budget / batch_s)))
    times = interleave({lib: batched(fn, ks[lib]) for lib, fn in calls.items()},
                       repeats, warmup=1)
    return {lib: ([t / ks[lib] for t in ts], ks[lib]) for lib, ts in times.items()}


def first_calls(p, repeats):
    """Rows: the first call of jit(grad) (jacrev for the ODE) of a fresh function, trace
    and compile included, for chainrule and JAX, interleaved."""
    import chainrule as cr
    import chainrule.numpy as cnp
    kind, fns = p.kinds[0], {}
    transform = {"grad": cr.grad, "jacrev": cr.jacrev}[kind]
    fns["chainrule-jit"] = lambda: cr.jit(transform(p.make(cnp, lambda a: a)))(p.x)
    jax = jax_module()
    if jax is not None:
        import jax.numpy as jnp
        x = tmap(jnp.asarray, p.x)
        jtransform = {"grad": jax.grad, "jacrev": jax.jacrev}[kind]
        fns["jax-jit"] = lambda: jax.block_until_ready(
            jax.jit(jtransform(p.make(jnp, jnp.asarray)))(x))
    times = interleave(fns, repeats, warmup=0 if repeats == 1 else 1)
    return [row(NAME, f"{p.name}: first call of jit({kind})", lib, ts,
                note="trace + compile, a fresh function each call")
            for lib, ts in times.items()]


def run(size="quick"):
    first_call_repeats = pick(size, 1, 5, 15)
    missing = missing_libraries()
    for lib, why in missing.items():
        print(f"{NAME}: {lib} skipped: {why}")
    torch = optional("torch")
    if torch is not None:
        torch.set_num_threads(1)  # arrays of 10 to 385 numbers: threads only cost
    rows = []
    for make_problem in PROBLEMS:
        p = make_problem()
        by_lib = {lib: BUILDERS[lib](p) for lib in LIBS if lib not in missing}
        for kind in p.kinds:
            case = f"{p.name}: {kind}"
            calls = {lib: c[kind] for lib, c in by_lib.items() if kind in c}
            reference = calls["chainrule"]()
            for lib, fn in calls.items():  # the same numbers first (and jit compiles here)
                agree(fn(), reference, f"{NAME} / {case} / {lib} vs chainrule")
            for lib, (ts, k) in time_case(calls, size).items():
                note = {"numpy": "closed form by hand"}.get(lib)
                rows.append(row(NAME, case, lib, ts, calls_per_batch=k,
                                **({"note": note} if note else {})))
        rows.extend(first_calls(p, first_call_repeats))
    return rows


# ---------------------------------------------------------------------------------------
# Targets (issue 47, "must hold")
# ---------------------------------------------------------------------------------------

def _medians(rows):
    return {(r["case"], r["library"]): r["median_s"] for r in rows
            if r["workload"] == NAME and r.get("median_s") is not None}


def _versus(rows, kinds, mine, theirs):
    """(ok, detail): mine's median at or below each of theirs', in the cases of kinds."""
    med = _medians(rows)
    parts, ok = [], True
    for (case, lib), t in sorted(med.items()):
        if lib != mine or case.rsplit(": ", 1)[1] not in kinds:
            continue
        for other in theirs:
            t_other = med.get((case, other))
            if t_other is None:
                continue
            ok = ok and t <= t_other
            parts.append(f"{case.split(',')[0]} {case.rsplit(': ', 1)[1]}: "
                         f"{other} / {mine} = {t_other / t:.2f}")
    if not parts:
        return None, "not measured"
    return ok, "; ".join(parts)


def target_jit_grad(rows):
    name = "w15: cr.jit(grad) at or below jax.jit(grad) (issue 47)"
    return (name, *_versus(rows, ("grad",), "chainrule-jit", ("jax-jit",)))


def target_jit_hessian(rows):
    name = "w15: cr.jit(hessian) at or below jax.jit(hessian) (issue 47)"
    return (name, *_versus(rows, ("hessian",), "chainrule-jit", ("jax-jit",)))


def target_eager_grad(rows):
    name = "w15: eager cr.grad ahead of PyTorch eager and HIPS autograd (issue 47)"
    return (name, *_versus(rows, ("grad",), "chainrule", ("torch", "autograd")))


def target_first_call(rows):
    name = "w15: cr.jit's first call at least 10x faster than jax.jit's (issue 47)"
    med = _medians(rows)
    parts, ok = [], True
    for (case, lib), t in sorted(med.items()):
        if lib == "chainrule-jit" and "first call" in case and (case, "jax-jit") in med:
            ratio = med[(case, "jax-jit")] / t
            ok = ok and ratio >= 10
            parts.append(f"{case.split(',')[0]}: jax-jit / chainrule-jit = {ratio:.1f}")
    if not parts:
        return name, None, "not measured (jax missing?)"
    return name, ok, "; ".join(parts)


TARGETS = [target_jit_grad, target_jit_hessian, target_eager_grad, target_first_call]


def _fmt(s):
    return "-" if s is None else (f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} us")


def _print(rows):
    """One line per case, a column per library: median time per call."""
    libs = [lib for lib in LIBS if any(r["library"] == lib for r in rows)]
    med = _medians(rows)
    cases = list(dict.fromkeys(r["case"] for r in rows))
    width = max(len(c) for c in cases)
    print(f"{'case':{width}s} " + " ".join(f"{lib:>13s}" for lib in libs))
    for case in cases:
        print(f"{case:{width}s} " + " ".join(f"{_fmt(med.get((case, lib))):>13s}"
                                              for lib in libs))
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
