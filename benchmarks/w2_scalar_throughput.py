"""Workload 2: scalar engine throughput, chainrule vs micrograd.

Cases:

* "random graph forward" / "random graph backward": a layered random graph of
  about 100,000 scalar operations (quick: ~10,000). Each layer of 1,000 values
  is computed from random pairs of the previous layer with a random one of
  ``(a + b) * 0.5``, ``(a - b) * 0.5``, ``a * b``, ``a ** 2``, ``relu(a)`` (the
  operations micrograd has; each keeps values in [-1, 1]); the last layer is summed
  pairwise. Forward is the time to build the graph; backward the time of
  ``root.backward()`` on a graph built beforehand (untimed). The root and the
  gradient of every input are compared between the libraries before timing.
  ``ns_per_node`` = time / interior nodes (forward: nodes built; backward: nodes the
  backward pass visits).
* "chain backward 1e4" ... "1e6": ``root.backward()`` on a chain
  ``y = relu(y * 0.999 + 0.001)`` of n interior nodes, built beforehand; backward
  is repeated on the same graph. micrograd's recursive topological sort hits Python's
  recursion limit from about 1,000 nodes: its rows then carry an ``error``.

Times exclude Python's cyclic garbage collector: it is off while a call is timed and
a ``gc.collect()`` follows, untimed (its cost is workload 1's subject). The "chain
backward 1e6 (default gc)" row (full size only) shows the largest chain with the
collector on. Graphs are built with the collector off too: building is untimed, and a
collector running over a growing million-node chain triples the time it takes.
"""

import gc
import math
import random
import sys
import time

try:
    from common import checked, error_row, interleave, optional, pick, row
except ImportError:  # imported as benchmarks.w2_scalar_throughput
    from benchmarks.common import checked, error_row, interleave, optional, pick, row

NAME = "2 scalar throughput"

OPS = (
    lambda a, b: (a + b) * 0.5,
    lambda a, b: (a - b) * 0.5,
    lambda a, b: a * b,
    lambda a, b: a ** 2,
    lambda a, b: a.relu(),
)


def libraries():
    import chainrule.micrograd.engine as cre
    libs = {"chainrule": cre.Value}
    mge = optional("micrograd.engine")
    if mge is not None:
        libs["micrograd"] = mge.Value
    return libs


def make_program(width, depth, seed=0):
    """Inputs and, per layer, (op, i, j) for each value: the same graph for every library."""
    rng = random.Random(seed)
    inputs = [rng.uniform(-1, 1) for _ in range(width)]
    layers = [[(rng.randrange(len(OPS)), rng.randrange(width), rng.randrange(width))
               for _ in range(width)] for _ in range(depth)]
    return inputs, layers


def build(Value, inputs, layers):
    """Run the program: returns (root, input Values)."""
    xs = [Value(x) for x in inputs]
    prev = xs
    ops = OPS
    for layer in layers:
        prev = [ops[k](prev[i], prev[j]) for k, i, j in layer]
    while len(prev) > 1:  # pairwise sum: shallow, so micrograd's recursion copes
        prev = [prev[i] + prev[i + 1] if i + 1 < len(prev) else prev[i]
                for i in range(0, len(prev), 2)]
    return prev[0], xs


def interior_nodes(root):
    """How many nodes with operands ``root`` depends on (what backward visits)."""
    seen, stack, count = {id(root)}, [root], 0
    while stack:
        n = stack.pop()
        if n._prev:
            count += 1
        for p in n._prev:
            if id(p) not in seen:
                seen.add(id(p))
                stack.append(p)
    return count


def count_built(Value, inputs, layers):
    """Interior nodes built by the forward pass (some are not reachable from the root)."""
    made = [0]
    orig_init = Value.__init__

    def counting_init(self, data, _children=(), *args, **kwargs):
        if _children:
            made[0] += 1
        orig_init(self, data, _children, *args, **kwargs)
    Value.__init__ = counting_init
    try:
        build(Value, inputs, layers)
    finally:
        Value.__init__ = orig_init
    return made[0]


def _timed(fn):
    """Seconds of ``fn()`` with the collector off; the garbage is collected after, untimed."""
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
    finally:
        gc.enable()
    gc.collect()
    return t


def random_graph(size):
    width, depth = 1000, pick(size, 3, 10, 70)
    repeats = pick(size, 1, 3, 20)
    inputs, layers = make_program(width, depth)
    libs = libraries()

    # same computation: the root and every input's gradient
    results = {}
    for name, Value in libs.items():
        root, xs = build(Value, inputs, layers)
        root.backward()
        results[name] = (root.data, [x.grad for x in xs], interior_nodes(root))
        del root, xs
    for name, got in results.items():
        checked(results["chainrule"][0], got[0], rtol=1e-12, what=f"root, chainrule vs {name}")
        checked(results["chainrule"][1], got[1], rtol=1e-9,
                what=f"input gradients, chainrule vs {name}")
    built = {name: count_built(Value, inputs, layers) for name, Value in libs.items()}

    forward = interleave(
        {name: (lambda V=Value: _timed(lambda: build(V, inputs, layers)))
         for name, Value in libs.items()},
        repeats, warmup=1, self_timed=True)

    graphs = {}

    def backward_of(name, Value):
        def fn():
            if name not in graphs:
                graphs[name] = build(Value, inputs, layers)[0]
            return _timed(graphs[name].backward)
        return fn
    backward = interleave({name: backward_of(name, V) for name, V in libs.items()},
                          repeats, warmup=1, self_timed=True)
    graphs.clear()
    gc.collect()

    rows = []
    for name in libs:
        n = built[name]
        rows.append(row(NAME, "random graph forward", name, forward[name], nodes=n,
                        ns_per_node=round(min(forward[name]) and
                                          _median(forward[name]) / n * 1e9, 1)))
        n = results[name][2]
        rows.append(row(NAME, "random graph backward", name, backward[name], nodes=n,
                        ns_per_node=round(_median(backward[name]) / n * 1e9, 1)))
    return rows


def _median(xs):
    xs = sorted(xs)
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def build_chain(Value, n):
    """A chain of n interior nodes: y = relu(y * 0.999 + 0.001), n/3 times (and the rest)."""
    x = Value(0.5)
    y = x
    for i in range(n):
        r = i % 3
        y = y * 0.999 if r == 0 else (y + 0.001 if r == 1 else y.relu())
    return y, x


def chain_case(n):
    return f"chain backward 1e{round(math.log10(n))}" if n >= 10 else f"chain backward {n}"


def chains(size):
    sizes = pick(size, (100, 1000), (10**4, 10**5, 10**6), (10**4, 10**5, 10**6))
    libs = libraries()
    rows, failed = [], {}
    for n in sizes:
        repeats = pick(size, 1, max(1, min(30, 10**5 // n)), max(5, min(100, 10**7 // n)))
        for name, Value in libs.items():
            if name in failed:  # a longer chain fails as well: not built again
                rows.append(error_row(NAME, chain_case(n), name, failed[name], nodes=n))
                continue
            gc.disable()
            try:
                root, x = build_chain(Value, n)
            finally:
                gc.enable()
            try:
                _timed(root.backward)  # warm-up, and does it work at all?
            except RecursionError as err:
                failed[name] = f"RecursionError at {n} nodes: {err}"
                rows.append(error_row(NAME, chain_case(n), name, failed[name], nodes=n))
                del root, x
                gc.collect()
                continue
            expected = 0.999 ** math.ceil(n / 3)
            checked(expected, x.grad, rtol=1e-9, what=f"{name} chain gradient")
            times = [_timed(root.backward) for _ in range(repeats)]
            med = _median(times)
            rows.append(row(NAME, chain_case(n), name, times, nodes=n,
                            ns_per_node=round(med / n * 1e9, 1)))
            if name == "chainrule" and n == sizes[-1] and size == "full":
                gc.collect()
                times = []
                for _ in range(max(1, repeats // 2)):
                    t0 = time.perf_counter()
                    root.backward()
                    times.append(time.perf_counter() - t0)
                rows.append(row(NAME, chain_case(n) + " (default gc)", name, times, nodes=n,
                                ns_per_node=round(_median(times) / n * 1e9, 1)))
            del root, x
            gc.collect()
    return rows


def run(size="quick"):
    return random_graph(size) + chains(size)


# --- targets -----------------------------------------------------------------------------

def _linearity(rows):
    name = "w2 chain backward 1e4 -> 1e6 within 1.2x of linear"
    per = {}
    for r in rows:
        if (r["workload"] == NAME and r["library"] == "chainrule"
                and r["case"] in ("chain backward 1e4", "chain backward 1e6")
                and r.get("median_s")):
            per[r["case"]] = r["median_s"] / r["nodes"]
    if len(per) < 2:
        return name, None, "not measured (only at full and quick sizes)"
    ratio = per["chain backward 1e6"] / per["chain backward 1e4"]
    detail = (f"time per node at 1e6 / at 1e4 = {ratio:.2f} "
              f"({per['chain backward 1e4'] * 1e9:.0f} -> {per['chain backward 1e6'] * 1e9:.0f} ns)")
    if ratio <= 1.2:
        return name, True, detail
    return name, False, detail + f": missed by {ratio / 1.2:.2f}x"


TARGETS = [_linearity]


if __name__ == "__main__":
    import json
    for r in run(sys.argv[1] if len(sys.argv) > 1 else "quick"):
        print(json.dumps(r))
