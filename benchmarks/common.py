"""What every benchmark workload shares: the interface, timing, checks, machine info.

The interface
=============

A workload is a module ``benchmarks/wN_<name>.py`` (N = 1..15) with

* ``NAME``: a short title, e.g. ``"1 scalar moons step"``;
* ``run(size) -> list[dict]`` with ``size`` one of ``SIZES``:

  - ``"tiny"``: every case once, at a tiny size, for the smoke test (timings meaningless);
  - ``"quick"``: small enough that the whole suite takes under a minute;
  - ``"full"``: the real measurement;

* optionally ``TARGETS``: a list of callables ``target(rows) -> (name, ok, detail)``,
  where ``rows`` are the rows of every workload that ran, ``ok`` is True, False, or
  None (could not be checked, e.g. a library is missing), and ``detail`` says by how
  much a target is met or missed.

Each row (make it with ``row(...)``) is a dict with the keys of ``ROW_KEYS``::

    {"workload": NAME, "case": "gc by hand", "library": "chainrule",
     "median_s": ..., "min_s": ..., "max_s": ..., "repeats": ...}

``library`` is one of ``LIBRARIES``. Optional extra keys: ``nodes``, ``peak_mb``,
``accuracy``, ``gflops``, ``note``, ``error`` (a case that could not run: then the
times are None), and anything else a workload wants to record.

Rules
=====

* A library that is not installed is skipped: import it with ``optional(name)``.
* Before timing, compare the results of the libraries with ``checked(a, b, rtol)``:
  a benchmark of a wrong computation is worthless, so it raises if they differ.
* Time with ``interleave(...)``: a warm-up, then many repeats, the libraries
  interleaved (A B A B ...) so that drift (frequency scaling, other processes) hits
  them alike; report the median, with min and max.
"""

import gc
import importlib
import math
import os
import platform
import statistics
import sys
import time

__all__ = [
    "SIZES", "ROW_KEYS", "LIBRARIES", "pick", "optional", "row", "error_row",
    "interleave", "time_calls", "checked", "MismatchError", "machine_info",
    "keep_freed_memory", "print_targets", "blas_libraries", "blas_env", "blas_line",
]

SIZES = ("tiny", "quick", "full")
ROW_KEYS = ("workload", "case", "library", "median_s", "min_s", "max_s", "repeats")
LIBRARIES = ("chainrule", "chainrule-jit", "chainrule-jit-numpy", "chainrule-torch",
             "chainrule-torch-jit", "micrograd", "torch", "torch-func", "numpy", "autograd",
             "jax", "jax-jit")


def pick(size, tiny, quick, full):
    """The parameter for ``size``: ``pick(size, 1, 20, 200)``."""
    if size not in SIZES:
        raise ValueError(f"size: expected one of {SIZES}, got {size!r}")
    return {"tiny": tiny, "quick": quick, "full": full}[size]


def optional(name):
    """The module ``name``, or None when it is not installed (or fails to import)."""
    try:
        return importlib.import_module(name)
    except Exception:  # ImportError, or a broken install: skip the library either way
        return None


def row(workload, case, library, times, **extra):
    """A result row from a list of times in seconds (one per repeat)."""
    times = list(times)
    if not times:
        raise ValueError(f"{workload} / {case} / {library}: no times")
    out = {
        "workload": workload, "case": case, "library": library,
        "median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
        "repeats": len(times),
    }
    out.update(extra)
    return out


def error_row(workload, case, library, error, **extra):
    """A row for a case that could not run (e.g. micrograd's RecursionError)."""
    out = {"workload": workload, "case": case, "library": library,
           "median_s": None, "min_s": None, "max_s": None, "repeats": 0,
           "error": error}
    out.update(extra)
    return out


def time_calls(fn, repeats, warmup=1, collect=False, self_timed=False):
    """Times of ``repeats`` calls of ``fn`` (one library alone); see ``interleave``."""
    return interleave({"only": fn}, repeats, warmup, collect, self_timed)["only"]


def interleave(fns, repeats, warmup=1, collect=False, self_timed=False, block=1):
    """Time several functions, interleaved: ``{name: [seconds per call]}``.

    ``fns`` maps a name (a library) to a function of no arguments. First each is
    called ``warmup`` times (untimed), then the rounds ``fns[a](); fns[b](); ...`` are
    repeated ``repeats`` times, so slow drift of the machine hits every name alike;
    with three names or more, the order rotates by one name each round.

    ``collect=True`` is "gc by hand": the automatic cyclic collector is off during the
    measurement, and a ``gc.collect()`` after each call is part of its time, so a
    library that leaves reference cycles pays for collecting them, every call.
    Otherwise the collector runs as it does by default (its pauses land wherever
    they fall, which is part of the measurement too).

    ``self_timed=True``: each function measures itself and returns its time in
    seconds (to leave set-up, such as building a graph before timing its backward
    pass, out of the time).

    ``block=k`` (k > 1): each turn is one untimed call and then k timed calls in a
    row, as a training loop runs step after step; the turns still alternate, so drift
    hits every library alike. With block=1 every call follows another library's, and
    starts with caches full of that library's code and data: a cost no user running
    one library pays, and one that weighs most on the library that runs the most
    Python per step. ``repeats`` is the number of timed calls either way.
    """
    clock = time.perf_counter
    times = {name: [] for name in fns}
    gc.collect()
    was_enabled = gc.isenabled()
    if collect:
        gc.disable()
    try:
        for _ in range(warmup):
            for fn in fns.values():
                fn()
                if collect:
                    gc.collect()
        # a turn: (timed?) for each call a library makes before the next one's turn
        turn = [True] if block == 1 else [False] + [True] * block
        order = list(fns.items())
        while any(len(t) < repeats for t in times.values()):
            for name, fn in order:
                for timed in turn:
                    if len(times[name]) == repeats:
                        break
                    if timed:
                        times[name].append(_time_call(fn, clock, collect, self_timed))
                    else:  # the turn's warm-up call
                        fn()
                        if collect:
                            gc.collect()
            # Rotate, so that each library follows each of the others: in a fixed
            # order the first library always runs right after the last, and after
            # JAX's, whose threads are still winding down, it measures 1-2% slower.
            # Two already alternate; rotating them would run one twice in a row.
            if len(order) > 2:
                order = order[1:] + order[:1]
    finally:
        if was_enabled:
            gc.enable()
    return times


def _time_call(fn, clock, collect, self_timed):
    """The seconds one call takes (with its gc.collect() when collecting by hand)."""
    t0 = clock()
    out = fn()
    if self_timed:
        if collect:
            t1 = clock()
            gc.collect()
            out += clock() - t1
        return out
    if collect:
        gc.collect()
    elapsed = clock() - t0
    del out
    return elapsed


def print_targets(targets, rows):
    """Each target checked on ``rows``, a line each: MET, MISSED or N/A, its name and how
    much (what a workload prints when run as a script; run.py makes its own table)."""
    for target in targets:
        name, ok, detail = target(rows)
        print({True: "MET   ", False: "MISSED", None: "N/A   "}[ok], name, "|", detail)


class MismatchError(AssertionError):
    """Two libraries computed different results: the benchmark would be worthless."""


def _flatten(x):
    """Numbers from a number, a Value-like (``.data``), an array, a tensor, or nests of them."""
    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().numpy()
    if hasattr(x, "tolist") and not isinstance(x, (list, tuple)):  # numpy, jax
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        out = []
        for item in x:
            out.extend(_flatten(item))
        return out
    if hasattr(x, "data") and not isinstance(x, (int, float, complex)):
        return _flatten(x.data)
    return [float(x)]


def checked(a, b, rtol=1e-9, atol=0.0, what="result"):
    """Raise ``MismatchError`` unless ``a`` and ``b`` agree to ``rtol`` (elementwise,
    relative to the larger magnitude of the whole result, plus ``atol``); return ``a``.

    ``a`` and ``b`` may be numbers, Values (their ``.data``), NumPy arrays, tensors,
    or lists/tuples of those. NaN never matches.
    """
    fa, fb = _flatten(a), _flatten(b)
    if len(fa) != len(fb):
        raise MismatchError(f"{what}: {len(fa)} numbers vs {len(fb)}")
    scale = max([abs(v) for v in fa + fb if math.isfinite(v)] + [0.0])
    worst, where = 0.0, None
    for i, (x, y) in enumerate(zip(fa, fb)):
        if x == y:
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            raise MismatchError(f"{what}: element {i} is {x!r} vs {y!r}")
        diff = abs(x - y)
        if diff > atol + rtol * scale and diff > worst:
            worst, where = diff, i
    if where is not None:
        raise MismatchError(f"{what}: element {where} differs: {fa[where]!r} vs "
                            f"{fb[where]!r} (|diff| {worst:.3g} > atol {atol:g} + rtol "
                            f"{rtol:g} * scale {scale:.3g})")
    return a


def agreeing_steps(makers, rtol, what):
    """``{library: step}`` from ``{library: make}``, where ``make()`` returns
    ``(step, gradients)``: each library's gradients (a list of arrays, from
    ``gradients()``) are first checked against the first library's, to ``rtol``."""
    import numpy as np
    steps, reference = {}, None
    for lib, make in makers.items():
        step, gradients = make()
        got = [np.asarray(g, dtype=np.float64) for g in gradients()]
        if reference is None:
            reference = got
        else:
            for a, b in zip(got, reference):
                checked(a, b, rtol=rtol, what=f"{what} / {lib}")
        steps[lib] = step
    return steps


# The environment variables that choose OpenBLAS's kernel and every BLAS's thread count.
# A machine may set OPENBLAS_CORETYPE (e.g. Haswell) for its tests: OpenBLAS then runs
# that CPU's kernels rather than the best ones for this CPU, and its matmuls slow down
# (make bench unsets it). Each is recorded with a run, set or not.
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
            "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def blas_libraries():
    """The BLAS NumPy runs on: ``[{"library", "version", "kernel", "threads"}]``.

    threadpoolctl (a dependency of scikit-learn, in the test extra) reads the library
    loaded in this process: its version, the kernel it chose at load time (OpenBLAS's
    core type, e.g. "SkylakeX" or "Haswell") and its thread count. Without it, NumPy's
    build information gives the library and version, and the kernel and thread count
    are None.
    """
    np = optional("numpy")  # loads NumPy's BLAS, which threadpoolctl can only see loaded
    tpc = optional("threadpoolctl")
    if tpc is not None:
        try:
            pools = [p for p in tpc.threadpool_info() if p.get("user_api") == "blas"]
        except Exception:
            pools = []
        if pools:
            return [{"library": p.get("internal_api"), "version": p.get("version"),
                     "kernel": p.get("architecture"), "threads": p.get("num_threads")}
                    for p in pools]
    if np is None:
        return []
    try:
        blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    except Exception:
        return []
    return [{"library": blas.get("name"), "version": blas.get("version"),
             "kernel": None, "threads": None}]


def blas_env():
    """``{variable: value or None}`` for each of ``BLAS_ENV``."""
    return {name: os.environ.get(name) for name in BLAS_ENV}


def blas_line(libraries=None, env=None):
    """One line for a reader: which BLAS, which kernel, how many threads, and the
    OpenBLAS variables that chose them."""
    libraries = blas_libraries() if libraries is None else libraries
    env = blas_env() if env is None else env
    parts = []
    for lib in libraries:
        kernel = lib.get("kernel") or "unknown (threadpoolctl is not installed)"
        threads = lib.get("threads")
        parts.append(f"{lib.get('library')} {lib.get('version') or ''}".strip()
                     + f", kernel {kernel}, "
                     + (f"{threads} thread{'s' if threads != 1 else ''}"
                        if threads is not None else "threads unknown"))
    openblas = ", ".join(f"{k}={env.get(k)}" if env.get(k) is not None else f"{k} unset"
                         for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
    return f"BLAS: {'; '.join(parts) or 'none found'} ({openblas})"


def _blas_info():
    """NumPy's BLAS in a few words, for the machine line: library, version, kernel,
    threads."""
    libraries = blas_libraries()
    if not libraries:
        return None
    return "; ".join(
        " ".join(str(x) for x in (lib["library"], lib["version"], lib["kernel"]) if x)
        + (f" ({lib['threads']} threads)" if lib["threads"] is not None else "")
        for lib in libraries)


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MALLOC_SETTING = {"applied": False}


def keep_freed_memory(limit=32 * 2**20):
    """Ask glibc's malloc to keep freed blocks of up to ``limit`` bytes in the process.

    By default glibc returns large freed blocks to the system (munmap, or trimming the
    top of the heap), and the next allocation of that size page-faults on every 4 KiB
    page it touches. A training loop running alone settles into reusing the same blocks
    and never faults; two libraries interleaved step by step keep undoing each other's
    reuse. Measured on 784-512-512-10, batch 128, float32: interleaved, 1,784 minor
    faults per pair of steps (chainrule 1,136, NumPy 648), and both steps 1.3x slower
    than alone; alone, or with this setting, 0 faults. It applies to every library of
    the process alike. Returns True if applied (glibc only; elsewhere a no-op).
    """
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        ok = (libc.mallopt(_M_MMAP_THRESHOLD, limit) == 1
              and libc.mallopt(_M_TRIM_THRESHOLD, 2 * limit) == 1)
    except (OSError, AttributeError):
        ok = False
    _MALLOC_SETTING["applied"] = ok
    return ok


def pin_to_one_cpu():
    """Run this process (and the workers it starts) on one CPU, when BLAS is told to use
    one thread (``OPENBLAS_NUM_THREADS=1``, as ``make bench`` sets by default).

    BLAS and torch obey their thread settings; XLA does not. Measured on this 2-core
    machine, 784-512-512-10 batch 128: a jitted JAX step used 1.75 cores (0.52 s of CPU
    in 0.30 s), and its threads, still winding down, slowed whichever library ran next.
    ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` changes nothing; pinning the
    process to one CPU (JAX's issue 1539 gives the same advice) gives every library one
    core. Returns the CPU, or None where nothing was pinned.
    """
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1" or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    os.sched_setaffinity(0, {cpus[-1]})
    _PINNED["cpu"] = cpus[-1]
    return cpus[-1]


_PINNED = {"cpu": None}


def small_op_speed(calls=20000):
    """Nanoseconds per call of a NumPy operation on a 2-element array (the median of 20
    batches of ``calls // 20``): what any Python engine pays per operation, whatever
    the array size.

    Recorded at the start and the end of a run, it tells a reader what state the
    machine was in. On this shared virtual machine it moves by up to 2x from one
    minute to the next (other tenants), while large matrix products move by about
    1.2x: so a library that runs more small operations per step, such as an engine
    recording a graph, is compared less favourably in a slow period than in a fast one.
    """
    import numpy as np
    a, b, out = np.ones(2), np.ones(2), np.empty(2)
    per_batch = max(1, calls // 20)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            np.add(a, b, out=out)
        times.append((time.perf_counter() - t0) / per_batch)
    return round(statistics.median(times) * 1e9, 1)


def machine_info():
    """The machine and the library versions, recorded with every result."""
    info = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for name in ("chainrule", "numpy", "torch", "micrograd", "autograd", "jax"):
        mod = optional(name)
        if mod is not None:
            versions[name] = getattr(mod, "__version__", "installed")
    if "micrograd" in versions:
        try:
            from importlib.metadata import version
            versions["micrograd"] = version("micrograd")
        except Exception:
            pass
    info["versions"] = versions
    info["numpy_blas"] = _blas_info()
    info["blas"] = blas_libraries()
    info["blas_env"] = blas_env()
    info["malloc"] = ("glibc, freed memory kept (common.keep_freed_memory)"
                      if _MALLOC_SETTING["applied"] else "default")
    if _PINNED["cpu"] is not None:
        info["pinned_to_cpu"] = _PINNED["cpu"]
    torch = sys.modules.get("torch") or None
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
    return info
