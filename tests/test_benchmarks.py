"""Smoke test of the benchmark suite: every workload runs at its tiny size, and run.py
writes its table, JSON and plot. No timing is asserted (tiny timings mean nothing)."""

import importlib
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import common  # noqa: E402
import run as bench_run  # noqa: E402

WORKLOADS = bench_run.discover()

_results = {}


def tiny_rows(n):
    """Each workload runs once for the whole test module."""
    if n not in _results:
        module = importlib.import_module(WORKLOADS[n])
        _results[n] = (module, module.run("tiny"))
    return _results[n]


def test_workloads_are_found():
    assert 1 in WORKLOADS and 2 in WORKLOADS


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
@pytest.mark.parametrize("n", sorted(WORKLOADS))
def test_workload_tiny(n):
    module, rows = tiny_rows(n)
    assert isinstance(module.NAME, str) and module.NAME
    assert rows, f"{WORKLOADS[n]} returned no rows"
    assert any(r["library"] == "chainrule" for r in rows)
    for r in rows:
        missing = [k for k in common.ROW_KEYS if k not in r]
        assert not missing, f"{r} lacks {missing}"
        assert r["workload"] == module.NAME
        assert r["library"] in common.LIBRARIES, r
        if r.get("error"):  # a case that cannot run (micrograd's recursion limit)
            assert r["median_s"] is None
            continue
        assert r["repeats"] >= 1
        for k in ("median_s", "min_s", "max_s"):
            assert isinstance(r[k], float) and r[k] > 0 and math.isfinite(r[k]), r
        assert r["min_s"] <= r["median_s"] <= r["max_s"]
    json.dumps(rows)  # the rows go to a JSON file
    for target in getattr(module, "TARGETS", []):
        name, ok, detail = target(rows)
        assert isinstance(name, str) and ok in (True, False, None) and isinstance(detail, str)


def test_checked_raises_on_a_mismatch():
    assert common.checked([1.0, 2.0], [1.0, 2.0 + 1e-13]) == [1.0, 2.0]
    with pytest.raises(common.MismatchError):
        common.checked([1.0, 2.0], [1.0, 2.1], rtol=1e-6)
    with pytest.raises(common.MismatchError):
        common.checked(1.0, float("nan"))
    with pytest.raises(common.MismatchError):
        common.checked([1.0], [1.0, 2.0])


def test_interleave_times_each_function():
    calls = []
    times = common.interleave({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                              repeats=3, warmup=1, collect=True)
    assert calls == ["a", "b"] * 4  # warm-up, then A B A B A B (two names: no rotation)
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3}
    r = common.row("w", "c", "chainrule", times["a"])
    assert r["min_s"] <= r["median_s"] <= r["max_s"] and r["repeats"] == 3


def test_interleave_rotates_so_each_library_follows_each_other_alike():
    calls = []
    fns = {k: (lambda k=k: calls.append(k)) for k in "abc"}
    common.interleave(fns, repeats=6, warmup=0)
    follows = [calls[i - 1] + calls[i] for i in range(1, len(calls)) if calls[i - 1] != calls[i]]
    assert set(follows) == {"ab", "bc", "ca", "ba", "cb", "ac"}  # fixed order: ab bc ca only


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_pin_to_one_cpu_only_when_blas_is_single_threaded(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert common.pin_to_one_cpu() is None
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs to pin to one")
    code = ("import os, sys; sys.path.insert(0, %r); import common; "
            "cpu = common.pin_to_one_cpu(); "
            "print(cpu, sorted(os.sched_getaffinity(0)), common.machine_info()['pinned_to_cpu'])"
            % os.path.dirname(common.__file__))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}).stdout.split(maxsplit=1)
    cpu = int(out[0])
    assert out[1].strip() == f"[{cpu}] {cpu}"


def test_machine_info():
    info = common.machine_info()
    assert info["cpu_count"] and info["python"]


def test_the_small_operation_probe_is_reported_with_the_machine():
    ns = common.small_op_speed(calls=200)
    assert 1 < ns < 1e6  # nanoseconds per 2-element add: far from both ends
    line = bench_run._machine_line(dict(common.machine_info(), small_op_ns=[ns, 2 * ns]))
    assert f"a 2-element NumPy add took {ns:.0f} then {2 * ns:.0f} ns" in line
    assert "2-element" not in bench_run._machine_line(common.machine_info())


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_run_writes_table_json_and_plot(tmp_path):
    rows, targets, modules = [], [], []
    for n in sorted(WORKLOADS):
        module, got = tiny_rows(n)
        modules.append(module)
        rows.extend(dict(r) for r in got)
    bench_run.add_ratios(rows)
    for r in rows:
        if r["library"] == "chainrule" and r.get("median_s"):
            assert r["ratio"] == pytest.approx(1.0)
    targets = bench_run.check_targets(modules, rows)
    failures = [{"workload": "w9", "error": "no module benchmarks/w9_*.py"}]
    machine = common.machine_info()
    table = bench_run.format_table(rows, targets, failures, machine, title="tiny")
    assert "| workload" in table and "chainrule" in table and "w9" in table
    json_path, png_path = bench_run.write_results(str(tmp_path), rows, targets, failures,
                                                  machine, "tiny", date="2000-01-01")
    assert os.path.basename(json_path) == "2000-01-01-tiny.json"
    doc = json.loads(open(json_path).read())
    assert doc["rows"] and doc["machine"]["cpu_count"] and "targets" in doc
    assert png_path is None or os.path.getsize(png_path) > 0


def test_a_failing_workload_is_reported_not_fatal(monkeypatch):
    rows, modules, failures = bench_run.run_workloads("tiny", only=[99], log=lambda m: None)
    assert rows == [] and failures and failures[0]["workload"] == "w99"


def test_a_workload_runs_in_its_own_process_and_returns_its_rows():
    """run.py's default: each workload in a fresh process, its rows sent back as JSON."""
    rows, modules, failures = bench_run.run_workloads("tiny", only=[2], log=lambda m: None,
                                                      isolate=True)
    assert failures == [] and [m.__name__ for m in modules] == [WORKLOADS[2]]
    assert rows and all(r["workload"] == modules[0].NAME for r in rows)


def test_blocks_of_calls_take_turns():
    calls = []
    times = common.interleave({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                              repeats=4, warmup=0, block=2)
    assert calls == ["a"] * 3 + ["b"] * 3 + ["a"] * 3 + ["b"] * 3  # one untimed, then 2 timed
    assert {k: len(v) for k, v in times.items()} == {"a": 4, "b": 4}


def _w3_rows(medians):
    """Workload-3 rows from {(case, library): median seconds}."""
    w3 = importlib.import_module(WORKLOADS[3])
    return w3, [common.row(w3.NAME, case, lib, [t], small_op_ns=[310.0, 320.0])
                for (case, lib), t in medians.items()]


def test_w3_judges_the_ratio_of_chainrule_and_numpy_timed_as_a_pair():
    case = "a b128 float32"
    pair = importlib.import_module(WORKLOADS[3]).pair_case(case)
    w3, rows = _w3_rows({(case, "chainrule"): 1.12, (case, "numpy"): 1.0,
                         (case, "torch"): 1.3,
                         (pair, "chainrule"): 1.06, (pair, "numpy"): 1.0})
    name, ok, detail = w3.target_vs_numpy(rows)
    assert ok is True
    assert "a b128 float32: 1.06x (1.12x with all libraries)" in detail
    assert "310-320 ns" in detail  # the machine's state around it
    _, faster, _ = w3.target_vs_torch(rows)  # torch is only in the all-library case
    assert faster is True


def test_w3_says_by_how_much_a_configuration_misses():
    a, b = "784-128-10 b128 float32", "784-128-10 b1024 float32"
    w3, rows = _w3_rows({(a, "chainrule"): 1.21, (a, "numpy"): 1.0,
                         (b, "chainrule"): 1.0, (b, "numpy"): 1.0})
    name, ok, detail = w3.target_vs_numpy(rows)  # no pair cases: the all-library ratio
    assert ok is False and f"{a}: 1.21x" in detail and f"missed by {a}: 1.10x" in detail


def test_w3_holds_the_jitted_step_to_its_bounds_and_the_eager_one_from_batch_128():
    small, target = "784-128-10 b32 float32", "784-128-10 b128 float32"
    w3, rows = _w3_rows({(small, "chainrule"): 1.40, (small, "numpy"): 1.0,
                         (small, "chainrule-jit"): 0.99,
                         (target, "chainrule"): 1.05, (target, "numpy"): 1.0,
                         (target, "chainrule-jit"): 0.97})
    assert w3.target_vs_numpy(rows)[1] is True  # batch 32 is not held to 1.10x
    name, ok, detail = w3.target_jit_vs_numpy(rows)
    assert ok is False and f"{target} (0.97x > 0.95x)" in detail
    assert small not in detail.split("missed at")[1]


def test_eager_parts_splits_the_eager_step_into_its_rules_and_the_engine():
    eager_parts = importlib.import_module("eager_parts")
    lines = eager_parts.report([8, 4, 3], 4, np.float64, repeats=3)
    assert len(lines) == 4  # the configuration asked for, then the tiny one
    for line in lines[::2]:
        assert line.startswith("8-4-3 b4 float64: numpy ")
        for way in ("rules", "eager", "jit"):
            assert f", {way} " in line
    for line in lines[1::2]:
        assert re.fullmatch(r"  the engine \(eager - rules\): -?[0-9.]+ us", line)


def test_eager_parts_checks_that_the_rules_compute_the_eager_gradients(monkeypatch):
    from chainrule.rules import fused
    eager_parts = importlib.import_module("eager_parts")
    plain = fused._linear_pullback
    monkeypatch.setattr(fused, "_linear_pullback",  # a rule called directly goes wrong
                        lambda *args: tuple(None if g is None else 2 * g
                                            for g in plain(*args)))
    with pytest.raises(common.MismatchError, match="rules gradients"):
        eager_parts.measure([8, 4, 3], 4, np.float64, repeats=1)
