"""Workload 5: end to end, 10 epochs of a 784-128-10 MLP on the 5,000-digit MNIST subset.

``load_mnist_subset(seed=0)``: 4,000 training and 1,000 test images. Batch 64 (the last
batch of an epoch is the 32 left over), Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8, as
PyTorch computes it), float32, ReLU, cross-entropy. Every library starts from the same
weights (He init from one seeded generator) and sees the same batches in the same order
(one seeded permutation per epoch):

* chainrule - ``nn.MLP([784, 128, 10])`` + ``optim.Adam`` + ``nn.functional.cross_entropy``;
* numpy     - forward, backward and Adam written by hand;
* torch     - ``torch.nn.Sequential(Linear, ReLU, Linear)`` + ``torch.optim.Adam`` +
              ``F.cross_entropy`` (its Linear, as chainrule's, stores W transposed).

Before timing, the gradients of the first batch are compared across libraries (a
mismatch raises). The wall time is the training loop (batching included, evaluation
not); the test accuracy each run reaches is recorded and compared (they should agree
to within a point: the same float32 math, summed in different orders). Runs are
interleaved (one run of each library, then again), median kept.

"tiny": 1 epoch on the first 256 training images.

    python benchmarks/w5_end_to_end.py [tiny|quick|full]
"""
import statistics
import sys
import time

import numpy as np

from common import print_targets, row as _row  # noqa: E402
from w3_tensor_mlp import worst_relative_difference  # noqa: E402

NAME = "end_to_end"
SIZES = [784, 128, 10]
BATCH, LR, BETAS, EPS = 64, 1e-3, (0.9, 0.999), 1e-8
DTYPE = np.float32


def make_row(workload, case, library, ts, **extra):
    return _row(workload, case, library, ts, **extra)


# ---------------------------------------------------------------------------------------
# Data, initial weights, batch order
# ---------------------------------------------------------------------------------------

def load(n_train=None):
    from chainrule.data import load_mnist_subset
    X_train, y_train, X_test, y_test = load_mnist_subset(seed=0)
    if n_train is not None:
        X_train, y_train = X_train[:n_train], y_train[:n_train]
    return (X_train.astype(DTYPE), y_train.astype(np.int64),
            X_test.astype(DTYPE), y_test.astype(np.int64))


def initial_weights(seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(DTYPE))
        params.append(np.zeros(b, DTYPE))
    return params


def batch_order(n, epochs, seed=1):
    """The index arrays of every batch of every epoch, in order."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(epochs):
        perm = rng.permutation(n)
        out.extend(perm[i:i + BATCH] for i in range(0, n, BATCH))
    return out


# ---------------------------------------------------------------------------------------
# NumPy by hand
# ---------------------------------------------------------------------------------------

def numpy_grads(params, x, y):
    W1, b1, W2, b2 = params
    h_pre = x @ W1 + b1
    h = np.maximum(h_pre, 0)
    logits = h @ W2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = len(y)
    d = np.exp(log_p)
    d[np.arange(n), y] -= 1
    d /= n
    dh = d @ W2.T
    dh *= h_pre > 0
    return [x.T @ dh, dh.sum(axis=0), h.T @ d, d.sum(axis=0)]


class NumpyAdam:
    def __init__(self, params):
        self.params, self.t = params, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads):
        self.t += 1
        b1, b2 = BETAS
        step_size = LR / (1 - b1 ** self.t)
        root_correction = np.sqrt(1 - b2 ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= step_size * (m / (np.sqrt(v) / root_correction + EPS))


class NumpyRun:
    def __init__(self, init):
        self.params = [p.copy() for p in init]
        self.opt = NumpyAdam(self.params)

    def grads(self, x, y):
        return numpy_grads(self.params, x, y)

    def train(self, X, y, order):
        params, opt = self.params, self.opt
        for idx in order:
            opt.step(numpy_grads(params, X[idx], y[idx]))

    def predict(self, X):
        W1, b1, W2, b2 = self.params
        return (np.maximum(X @ W1 + b1, 0) @ W2 + b2).argmax(axis=1)

    def weights(self):
        return self.params


# ---------------------------------------------------------------------------------------
# chainrule
# ---------------------------------------------------------------------------------------

class ChainruleRun:
    def __init__(self, init):
        import chainrule as cr
        from chainrule import nn, optim
        from chainrule.nn.functional import cross_entropy
        self.cr, self.cross_entropy = cr, cross_entropy
        self.model = nn.MLP(SIZES, dtype=DTYPE)
        for p, w in zip(self.model.parameters(), init):
            w = w.T if w.ndim == 2 else w  # nn.Linear's weight is (out, in), as PyTorch's
            if p.shape != w.shape:
                raise AssertionError(f"chainrule nn.MLP parameter of shape {p.shape}, "
                                     f"expected {w.shape}")
            p.data = w.copy()
        self.opt = optim.Adam(self.model.parameters(), lr=LR, betas=BETAS, eps=EPS)

    def grads(self, x, y):
        self.opt.zero_grad()
        self.cross_entropy(self.model(self.cr.tensor(x)), y).backward()
        return [p.grad.T if p.ndim == 2 else p.grad for p in self.model.parameters()]

    def train(self, X, y, order):
        cr, model, opt, cross_entropy = self.cr, self.model, self.opt, self.cross_entropy
        for idx in order:
            opt.zero_grad()
            cross_entropy(model(cr.tensor(X[idx])), y[idx]).backward()
            opt.step()

    def predict(self, X):
        with self.cr.no_grad():
            return self.model(self.cr.tensor(X)).data.argmax(axis=1)

    def weights(self):
        return [p.data.T if p.ndim == 2 else p.data for p in self.model.parameters()]


# ---------------------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------------------

class TorchRun:
    def __init__(self, init):
        import torch
        import torch.nn.functional as F
        self.torch, self.F = torch, F
        dtype = torch.from_numpy(init[0]).dtype  # the run's dtype, whatever torch's default
        self.model = torch.nn.Sequential(torch.nn.Linear(784, 128, dtype=dtype),
                                         torch.nn.ReLU(),
                                         torch.nn.Linear(128, 10, dtype=dtype))
        with torch.no_grad():
            for layer, (W, b) in zip((self.model[0], self.model[2]),
                                     zip(init[0::2], init[1::2])):
                layer.weight.copy_(torch.from_numpy(W.T.copy()))
                layer.bias.copy_(torch.from_numpy(b))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=LR, betas=BETAS, eps=EPS)
        self._tensors = {}

    def _t(self, a):
        key = id(a)
        if key not in self._tensors:
            self._tensors[key] = (a, self.torch.from_numpy(a))
        return self._tensors[key][1]

    def grads(self, x, y):
        self.opt.zero_grad()
        self.F.cross_entropy(self.model(self.torch.from_numpy(x)),
                             self.torch.from_numpy(y)).backward()
        l1, l2 = self.model[0], self.model[2]
        return [l1.weight.grad.numpy().T, l1.bias.grad.numpy(),
                l2.weight.grad.numpy().T, l2.bias.grad.numpy()]

    def train(self, X, y, order):
        torch, model, opt, F = self.torch, self.model, self.opt, self.F
        Xt, yt = self._t(X), self._t(y)
        for idx in order:
            idx = torch.from_numpy(idx)
            opt.zero_grad()
            F.cross_entropy(model(Xt[idx]), yt[idx]).backward()
            opt.step()

    def predict(self, X):
        with self.torch.no_grad():
            return self.model(self.torch.from_numpy(X)).argmax(dim=1).numpy()

    def weights(self):
        l1, l2 = self.model[0], self.model[2]
        return [l1.weight.detach().numpy().T, l1.bias.detach().numpy(),
                l2.weight.detach().numpy().T, l2.bias.detach().numpy()]


def available_libraries():
    libs = {"chainrule": ChainruleRun, "numpy": NumpyRun}
    try:
        import torch  # noqa: F401
        from w3_tensor_mlp import _blas_threads
        torch.set_num_threads(_blas_threads())
        libs["torch"] = TorchRun
    except ImportError:
        pass
    return libs


# ---------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------

SETTINGS = {  # (training images or None for all, epochs, runs per library)
    "tiny": (256, 1, 1),
    "quick": (None, 10, 1),
    "full": (None, 10, 5),
}


def run(size="quick"):
    if size not in SETTINGS:
        raise ValueError(f"size must be tiny, quick or full, got {size!r}")
    n_train, epochs, runs = SETTINGS[size]
    X, y, X_test, y_test = load(n_train)
    init = initial_weights()
    order = batch_order(len(X), epochs)
    libs = available_libraries()

    # The same gradients on the first batch, before anything is timed.
    ref = NumpyRun(init).grads(X[order[0]], y[order[0]])
    for lib, cls in libs.items():
        if lib != "numpy":
            worst = worst_relative_difference(ref, cls(init).grads(X[order[0]], y[order[0]]))
            if not worst <= 1e-4:
                raise AssertionError(f"{NAME}: {lib}'s first-batch gradients differ from "
                                     f"the hand-written NumPy ones (worst relative "
                                     f"difference {worst:.2e})")

    threads = None
    try:
        import torch
        threads = torch.get_num_threads()
    except ImportError:
        pass
    case = (f"784-128-10 MNIST {len(X)} train, {epochs} epoch{'s' * (epochs > 1)}, "
            f"batch {BATCH}, Adam {LR:g}, float32")
    times = {lib: [] for lib in libs}
    accs = {lib: [] for lib in libs}
    final = {}
    for r in range(runs):
        names = list(libs) if r % 2 == 0 else list(libs)[::-1]
        for lib in names:
            model = libs[lib](init)
            t0 = time.perf_counter()
            model.train(X, y, order)
            times[lib].append(time.perf_counter() - t0)
            accs[lib].append(float(np.mean(model.predict(X_test) == y_test)))
            final[lib] = [np.array(w) for w in model.weights()]
    rows = []
    for lib in libs:
        drift = worst_relative_difference(final["numpy"], final[lib])
        note = (f"threads={threads}; {len(order)} steps; final weights vs NumPy's: worst "
                f"relative difference {drift:.1e}")
        if lib == "chainrule":
            note += "; nn.MLP + optim.Adam"
        rows.append(make_row(NAME, case, lib, times[lib], accuracy=statistics.median(accs[lib]),
                             note=note))
    return rows


# ---------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------

def target_accuracies_agree(rows):
    name = "w5: every library reaches the same test accuracy (within 1 point)"
    accs = {r["library"]: r["accuracy"] for r in rows
            if r["workload"] == NAME and r.get("accuracy") is not None}
    if len(accs) < 2:
        return name, None, "fewer than two libraries ran"
    spread = max(accs.values()) - min(accs.values())
    detail = ", ".join(f"{k} {v:.3f}" for k, v in accs.items())
    return name, spread <= 0.01, f"{detail} (spread {100 * spread:.1f} points)"


def target_chainrule_vs_numpy(rows):
    name = "w5: chainrule's training time within 1.25x hand-written NumPy (informational)"
    med = {r["library"]: r["median_s"] for r in rows if r["workload"] == NAME}
    if "chainrule" not in med or "numpy" not in med:
        return name, None, "not measured"
    ratio = med["chainrule"] / med["numpy"]
    extra = f", torch {med['torch']:.2f} s" if "torch" in med else ""
    return name, ratio <= 1.25, (f"chainrule {med['chainrule']:.2f} s, numpy "
                                 f"{med['numpy']:.2f} s ({ratio:.2f}x){extra}")


TARGETS = [target_accuracies_agree, target_chainrule_vs_numpy]


def _print(rows):
    for r in rows:
        print(f"{r['library']:10s} {r['median_s']:8.3f} s (n={r['repeats']}) "
              f"accuracy {r['accuracy']:.3f}  {r['note']}")
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
