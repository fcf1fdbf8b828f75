"""Run the benchmark suite: every workload benchmarks/wN_*.py, a table, JSON and a plot.

    python benchmarks/run.py                  # the full measurement (minutes)
    python benchmarks/run.py --quick          # the whole suite in about a minute
    python benchmarks/run.py --only 1,3       # workloads 1 and 3 only
    python benchmarks/run.py --out DIR        # where results go (benchmarks/results)

Writes DIR/<YYYY-MM-DD>.json (full), <YYYY-MM-DD>-quick.json (--quick) or
<YYYY-MM-DD>-tiny.json (--size tiny), with the rows, the machine and the targets, and
a PNG of the same name: how many times faster chainrule is than each other library,
per workload and case.

ratio = (the other library's median) / (chainrule's median), for the same workload and
case: above 1, chainrule is faster; below 1, the other library is. chainrule's own rows
have ratio 1.

Each workload runs in a fresh Python process of its own (``--in-process``: all in this
one), with glibc told to keep freed memory (``--default-malloc``: not); see
run_workloads and common.keep_freed_memory for why. With BLAS single-threaded (as make
bench sets it), the run is pinned to one CPU (``--all-cpus``: not), since JAX ignores
thread settings (common.pin_to_one_cpu). A workload whose module is missing
or raises is reported, not fatal. See common.py for the interface a workload implements.

The first line of a run names the BLAS it measures with (library, version, the kernel
OpenBLAS chose, thread count, and the OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE that may
have forced the kernel); the JSON records the same under ``machine``.
"""

import argparse
import datetime
import glob
import importlib
import json
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
for path in (HERE, os.path.dirname(HERE)):  # `import common` and `import benchmarks.common`
    if path not in sys.path:
        sys.path.insert(0, path)

from common import (SIZES, blas_line, keep_freed_memory, machine_info,  # noqa: E402
                    pin_to_one_cpu, small_op_speed)

__all__ = ["discover", "run_workloads", "add_ratios", "check_targets", "format_table",
           "write_results", "main"]


def discover():
    """``{N: module name}`` of the workload files benchmarks/wN_*.py, by number."""
    found = {}
    for path in sorted(glob.glob(os.path.join(HERE, "w[0-9]*_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        m = re.match(r"w(\d+)_", name)
        if m:
            found[int(m.group(1))] = name
    return dict(sorted(found.items()))


def run_workloads(size, only=None, log=print, isolate=False, default_malloc=False):
    """Run the workloads: returns (rows, modules, failures).

    ``only``: workload numbers to run (None: all). ``failures`` is a list of
    ``{"workload": ..., "error": ...}`` for a module that is missing, fails to import
    or raises; the other workloads run all the same.

    ``isolate=True`` runs each workload in a fresh Python process (as pyperf does), so
    that none inherits the heap, caches and garbage of the ones before it: the scalar
    workloads leave millions of freed objects behind, and the tensor steps timed after
    them in the same process come out up to 5% slower, chainrule's and NumPy's unevenly.
    """
    found = discover()
    rows, modules, failures = [], [], []
    for n in (only if only else list(found)):
        name = found.get(n)
        if name is None:
            failures.append({"workload": f"w{n}", "error": "no module benchmarks/w{n}_*.py"})
            log(f"workload {n}: missing")
            continue
        t0 = time.perf_counter()
        try:
            module = importlib.import_module(name)
            label = getattr(module, "NAME", name)
            log(f"workload {label} ({size}) ...")
            got = _run_in_worker(n, size, default_malloc) if isolate else module.run(size)
            modules.append(module)
        except Exception as err:
            failures.append({"workload": name, "error": f"{type(err).__name__}: {err}",
                             "traceback": traceback.format_exc()})
            log(f"workload {name} FAILED: {type(err).__name__}: {err}")
            continue
        rows.extend(got)
        log(f"  {len(got)} rows in {time.perf_counter() - t0:.1f} s")
    return rows, modules, failures


def _run_in_worker(n, size, default_malloc):
    """Workload ``n`` in a child process (``run.py --worker N``); its rows, as JSON."""
    command = [sys.executable, os.path.abspath(__file__), "--worker", str(n), "--size", size]
    if default_malloc:
        command.append("--default-malloc")
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)  # stderr: the log
    if done.returncode != 0:
        raise RuntimeError(f"the worker process exited with {done.returncode} (its "
                           f"traceback is above)")
    return json.loads(done.stdout)


def _worker(n, size):
    """In the child: run one workload and write its rows to stdout as JSON (anything the
    workload prints goes to stderr, so that stdout holds nothing but the rows)."""
    module = importlib.import_module(discover()[n])
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        got = module.run(size)
    finally:
        sys.stdout = real_stdout
    json.dump(got, sys.stdout)
    return 0


def add_ratios(rows):
    """Set ``ratio`` on every row: its median / chainrule's median for the same
    workload and case (>1: chainrule is faster). None where either is missing."""
    base = {(r["workload"], r["case"]): r.get("median_s")
            for r in rows if r["library"] == "chainrule"}
    for r in rows:
        b, m = base.get((r["workload"], r["case"])), r.get("median_s")
        r["ratio"] = (m / b) if (b and m) else None
    return rows


def check_targets(modules, rows):
    """Each module's TARGETS applied to all rows: ``[{"name", "ok", "detail"}]``."""
    out = []
    for module in modules:
        for target in getattr(module, "TARGETS", []):
            try:
                name, ok, detail = target(rows)
            except Exception as err:
                name = f"{getattr(module, 'NAME', module.__name__)}: {getattr(target, '__name__', target)}"
                ok, detail = None, f"the check raised {type(err).__name__}: {err}"
            out.append({"name": name, "ok": ok, "detail": detail})
    return out


def _fmt_num(x):
    if isinstance(x, float):
        return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"
    return str(x)


def _fmt_time(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} us"
    return f"{s * 1e9:.3g} ns"


def format_table(rows, targets=(), failures=(), machine=None, title=None):
    """The results as a Markdown table, with the targets and failures as a footer."""
    lines = []
    if title:
        lines += [title, ""]
    if machine:
        lines += [_machine_line(machine), ""]
    header = ["workload", "case", "library", "median", "min", "max", "ratio", "note"]
    body = []
    for r in rows:
        note = r.get("error") or r.get("note") or ""
        extras = [f"{k}={_fmt_num(r[k])}" for k in ("nodes", "ns_per_node", "peak_mb",
                                                    "accuracy", "gflops", "mb_per_step",
                                                    "blocks_growth")
                  if r.get(k) is not None]
        note = "; ".join(x for x in [", ".join(extras), note] if x)
        if len(note) > 90:
            note = note[:87] + "..."
        ratio = r.get("ratio")
        body.append([str(r["workload"]), str(r["case"]), str(r["library"]),
                     _fmt_time(r.get("median_s")), _fmt_time(r.get("min_s")),
                     _fmt_time(r.get("max_s")),
                     "-" if ratio is None else f"{ratio:.2f}", note.replace("|", "/")])
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
              for i, h in enumerate(header)]
    fmt = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    lines.append(fmt(header))
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += [fmt(b) for b in body]
    lines += ["", "ratio = other library's median / chainrule's median "
                  "(>1: chainrule is faster)"]
    if targets:
        lines += ["", "Targets:"]
        for t in targets:
            mark = {True: "MET   ", False: "MISSED", None: "n/a   "}[t["ok"]]
            lines.append(f"- {mark} {t['name']}: {t['detail']}")
    if failures:
        lines += ["", "Workloads that did not run:"]
        lines += [f"- {f['workload']}: {f['error']}" for f in failures]
    return "\n".join(lines)


def _machine_line(m):
    v = m.get("versions", {})
    libs = ", ".join(f"{k} {val}" for k, val in v.items())
    return (f"Machine: {m.get('cpu_model') or m.get('processor')}, "
            f"{m.get('cpus_usable', m.get('cpu_count'))} CPUs usable "
            f"({m.get('cpu_count')} in all), Python {m.get('python')}, "
            f"NumPy BLAS: {m.get('numpy_blas')}, torch threads: {m.get('torch_threads', '-')}; "
            f"{libs}" + _small_op_note(m.get("small_op_ns")))


def _small_op_note(ns):
    """The small-operation probe (common.small_op_speed) at the start and end of a run."""
    if not ns:
        return ""
    return (f"; a 2-element NumPy add took {' then '.join(f'{n:.0f}' for n in ns)} ns "
            f"(start, end of the run)")


def plot(rows, path):
    """A bar per (workload, case, other library): how many times faster chainrule is."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = [r for r in rows if r["library"] != "chainrule" and r.get("ratio")]
    libs = sorted({r["library"] for r in bars})
    colors = {lib: f"C{i}" for i, lib in enumerate(libs)}
    height = max(2.5, 0.3 * len(bars) + 1.2)
    fig, ax = plt.subplots(figsize=(9, height))
    labels = [_short(f"{r['workload']} | {r['case']}") for r in bars]
    ys = list(range(len(bars)))[::-1]
    for lib in libs:  # one call per library, so that the legend has its colour
        mine = [(y, r["ratio"]) for y, r in zip(ys, bars) if r["library"] == lib]
        ax.barh([y for y, _ in mine], [ratio for _, ratio in mine], color=colors[lib],
                label=lib)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.axvline(1.0, color="k", lw=1)
    if bars:
        ax.set_xscale("log")
    ax.set_xlabel("other library's time / chainrule's time  (>1: chainrule is faster)")
    if libs:
        ax.legend(loc="best", fontsize=8)
    ax.set_title("chainrule's speed relative to other libraries")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _short(label, limit=42):
    return label if len(label) <= limit else label[:limit - 3] + "..."


def write_results(out_dir, rows, targets, failures, machine, size, date=None,
                  elapsed_s=None):
    """Write <date>[-size].json and .png into out_dir; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    date = date or datetime.date.today().isoformat()
    stem = date if size == "full" else f"{date}-{size}"
    json_path = os.path.join(out_dir, stem + ".json")
    doc = {"date": date, "size": size, "elapsed_s": elapsed_s, "machine": machine,
           "ratio": "other library's median / chainrule's median (>1: chainrule is faster)",
           "targets": targets,
           "failures": [{k: v for k, v in f.items()} for f in failures],
           "rows": rows}
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1, default=str)
    png_path = os.path.join(out_dir, stem + ".png")
    try:
        plot(rows, png_path)
    except Exception as err:  # no matplotlib: the JSON and table still stand
        print(f"no plot: {type(err).__name__}: {err}", file=sys.stderr)
        png_path = None
    return json_path, png_path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the whole suite in about a minute")
    ap.add_argument("--size", choices=SIZES, help="tiny (smoke test), quick or full")
    ap.add_argument("--only", help="workload numbers, e.g. 1,3")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--default-malloc", action="store_true",
                    help="leave glibc's malloc as it is (see common.keep_freed_memory)")
    ap.add_argument("--in-process", action="store_true",
                    help="run every workload in this process, not each in its own")
    ap.add_argument("--all-cpus", action="store_true",
                    help="do not pin the run to one CPU (see common.pin_to_one_cpu)")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)  # see _worker
    args = ap.parse_args(argv)
    if not args.default_malloc:
        keep_freed_memory()
    if args.worker is None and not args.all_cpus:
        pin_to_one_cpu()  # the workers inherit it
    if args.worker is not None:
        return _worker(args.worker, args.size or "full")
    size = args.size or ("quick" if args.quick else "full")
    only = [int(x) for x in args.only.split(",") if x.strip()] if args.only else None

    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    # What every matmul of the run runs on (the workers inherit the environment, so
    # they load the same kernel); machine_info records it in the JSON too.
    log(blas_line())
    t0 = time.perf_counter()
    small_op_ns = [small_op_speed()]  # the machine's state, at the start and the end
    rows, modules, failures = run_workloads(size, only, log, isolate=not args.in_process,
                                            default_malloc=args.default_malloc)
    small_op_ns.append(small_op_speed())
    elapsed = time.perf_counter() - t0
    add_ratios(rows)
    targets = check_targets(modules, rows)
    machine = dict(machine_info(), small_op_ns=small_op_ns)
    date = datetime.date.today().isoformat()
    print(format_table(rows, targets, failures, machine,
                       title=f"chainrule benchmarks, {date}, {size} ({elapsed:.0f} s)"))
    json_path, png_path = write_results(args.out, rows, targets, failures, machine, size,
                                        date, round(elapsed, 1))
    print(f"\nwrote {json_path}" + (f" and {png_path}" if png_path else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
