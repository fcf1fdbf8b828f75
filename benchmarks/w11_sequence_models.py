"""Workload 11: one training step (forward, backward, SGD) of makemore-sized sequence
models, chainrule eager against PyTorch eager, float32 and float64.

* GRU language model: tokens (batch 32, block 16) of a 27-letter vocabulary ->
  Embedding(27, 64) -> GRU(64, 64, batch_first) -> Linear(64, 27) -> cross-entropy;
* Transformer encoder layer: tokens (32, 16) -> Embedding(27, 64) ->
  TransformerEncoderLayer(d_model 64, 4 heads, feed-forward 256, dropout 0, causal
  mask, batch_first) -> Linear(64, 27) -> cross-entropy.

Both libraries run the same model class by class (``nn.Embedding``, ``nn.GRU``,
``nn.TransformerEncoderLayer``, ``nn.Linear``), from torch's initial weights (copied in
with ``load_torch_state_dict``), on the same tokens; torch runs on one thread
(``torch.set_num_threads(1)``), as chainrule's NumPy does under ``make bench``. Before any
timing the loss and every parameter's gradient of one step at lr = 0 are compared; a
mismatch raises. The libraries take turns of one untimed and 5 timed steps
(common.interleave); the median is reported, and the ratio torch / chainrule (above 1:
chainrule is faster).

    python benchmarks/w11_sequence_models.py [tiny|quick|full]
"""
import sys

import numpy as np

from common import agreeing_steps, interleave, optional, pick, print_targets, row

NAME = "sequence model step"
LR = 0.01
VOCAB, EMBED, HIDDEN, BLOCK, BATCH, HEADS = 27, 64, 64, 16, 32, 4
MODELS = ("GRU", "Transformer")


def make_problem(seed=0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, VOCAB, (BATCH, BLOCK))
    targets = rng.integers(0, VOCAB, (BATCH, BLOCK))
    return tokens, targets


def torch_model(kind, torch):
    """torch's model (float64, seeded): what both libraries start from."""
    nn = torch.nn
    mask = torch.triu(torch.ones(BLOCK, BLOCK, dtype=torch.bool), 1)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, EMBED)
            if kind == "GRU":
                self.body = nn.GRU(EMBED, HIDDEN, batch_first=True)
            else:
                self.body = nn.TransformerEncoderLayer(EMBED, HEADS, 4 * EMBED, dropout=0.0,
                                                       batch_first=True)
            self.head = nn.Linear(HIDDEN, VOCAB)

        def forward(self, idx):
            x = self.emb(idx)
            x = self.body(x)[0] if kind == "GRU" else self.body(x, src_mask=mask,
                                                                is_causal=True)
            return self.head(x)

    torch.manual_seed(0)
    return Model().double()


def chainrule_model(kind, state, dtype):
    import chainrule as cr
    from chainrule import nn
    mask = np.triu(np.ones((BLOCK, BLOCK), dtype=bool), 1)

    class Model(nn.Module):
        def __init__(self):
            self.emb = nn.Embedding(VOCAB, EMBED, rng=0)
            if kind == "GRU":
                self.body = nn.GRU(EMBED, HIDDEN, batch_first=True, rng=0)
            else:
                self.body = nn.TransformerEncoderLayer(EMBED, HEADS, 4 * EMBED, dropout=0.0,
                                                       batch_first=True, rng=0)
            self.head = nn.Linear(HIDDEN, VOCAB, rng=0)

        def forward(self, idx):
            x = self.emb(idx)
            x = self.body(x)[0] if kind == "GRU" else self.body(x, src_mask=mask,
                                                                is_causal=True)
            return self.head(x)

    model = Model()
    if state is not None:
        model.load_torch_state_dict(state)
    return model.to(dtype), cr


def make_chainrule(kind, dtype, state, tokens, targets):
    from chainrule.nn import functional as F
    model, _ = chainrule_model(kind, state, dtype)
    params = model.parameters()
    names = [name for name, _ in model.named_parameters()]
    flat_targets = targets.reshape(-1)

    def step(lr):
        loss = F.cross_entropy(model(tokens).reshape(-1, VOCAB), flat_targets)
        model.zero_grad()
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
        return loss

    def gradients():
        fresh, _ = chainrule_model(kind, state, dtype)
        loss = F.cross_entropy(fresh(tokens).reshape(-1, VOCAB), flat_targets)
        loss.backward()
        # in torch's layouts (a Linear's weight may be kept (in, out)), by torch's names
        shapes = {k: v.shape for k, v in state.items()}
        grads = {name: (p.grad if p.grad.shape == shapes[name] else p.grad.T)
                 for name, p in zip(names, fresh.parameters())}
        return [np.array([loss.item()])] + [grads[k] for k in sorted(grads)]

    return (lambda: step(LR)), gradients


def make_torch(kind, dtype, torch, tokens, targets):
    import torch.nn.functional as TF
    to = (lambda m: m.float()) if dtype == np.float32 else (lambda m: m.double())
    model = to(torch_model(kind, torch))
    params = list(model.parameters())
    idx, flat = torch.from_numpy(tokens), torch.from_numpy(targets.reshape(-1))

    def step(lr):
        loss = TF.cross_entropy(model(idx).reshape(-1, VOCAB), flat)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-lr)
        return loss

    def gradients():
        fresh = to(torch_model(kind, torch))
        loss = TF.cross_entropy(fresh(idx).reshape(-1, VOCAB), flat)
        loss.backward()
        grads = {name: p.grad.numpy() for name, p in fresh.named_parameters()}
        return [np.array([loss.item()])] + [grads[k] for k in sorted(grads)]

    return (lambda: step(LR)), gradients


def run(size):
    repeats = pick(size, 1, 10, 60)
    torch = optional("torch")
    rows = []
    if torch is not None:
        torch.set_num_threads(1)
    tokens, targets = make_problem()
    for kind in MODELS:
        if torch is not None:
            state = {k: v.detach().numpy().copy() for k, v in torch_model(kind, torch)
                     .state_dict().items()}
        else:  # chainrule alone, from its own initial weights
            state = chainrule_model(kind, None, np.float64)[0].torch_state_dict()
        for dtype in (np.float32, np.float64):
            case = f"{kind}, batch {BATCH} x block {BLOCK}, {np.dtype(dtype).name}"
            makers = {}
            if torch is not None:
                makers["torch"] = lambda: make_torch(kind, dtype, torch, tokens, targets)
            makers["chainrule"] = lambda: make_chainrule(kind, dtype, state, tokens, targets)
            rtol = 2e-3 if dtype == np.float32 else 1e-9
            steps = agreeing_steps(makers, rtol, f"{NAME} / {case}")
            times = interleave(steps, repeats, warmup=2, block=5 if repeats >= 5 else 1)
            for lib, ts in times.items():
                rows.append(row(NAME, case, lib, ts))
    return rows


def _target(kind):
    def target(rows):
        name = (f"w11: chainrule's {kind} step no slower than torch eager, float32 "
                f"(issue 43)")
        med = {r["library"]: r["median_s"] for r in rows if r["workload"] == NAME
               and r["case"].startswith(kind) and r["case"].endswith("float32")}
        if not med.get("chainrule") or not med.get("torch"):
            return name, None, "not measured"
        ratio = med["torch"] / med["chainrule"]
        return name, ratio >= 1, (f"chainrule {1e3 * med['chainrule']:.2f} ms, torch "
                                  f"{1e3 * med['torch']:.2f} ms (torch / chainrule "
                                  f"{ratio:.2f})")
    return target


TARGETS = [_target(kind) for kind in MODELS]


def _print(rows):
    """The two libraries side by side per case, and torch / chainrule."""
    cases = list(dict.fromkeys(r["case"] for r in rows))
    print(f"{'case':44s} {'chainrule':>12s} {'torch':>12s} {'torch/chainrule':>16s}")
    for case in cases:
        med = {r["library"]: r["median_s"] for r in rows if r["case"] == case}
        c, t = med.get("chainrule"), med.get("torch")
        ratio = f"{t / c:.2f}" if c and t else "-"
        torch_ms = f"{1e3 * t:9.2f} ms" if t else f"{'-':>12s}"
        print(f"{case:44s} {1e3 * c:9.2f} ms {torch_ms} {ratio:>16s}")
    print_targets(TARGETS, rows)


if __name__ == "__main__":
    _print(run(sys.argv[1] if len(sys.argv) > 1 else "quick"))
