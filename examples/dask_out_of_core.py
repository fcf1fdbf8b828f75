"""A gradient over a matrix larger than any worker's memory, with Dask.

The logistic loss's gradient with respect to 50 weights, over a matrix of random
features chunked by rows (2 GB at the default size: 5,000,000 rows), on a local cluster
of two worker processes allowed 300 MB each. ``cr.grad`` builds the gradient as a Dask
graph (nothing computes); ``dask.compute`` then streams it chunk by chunk: each chunk
of rows is drawn, used for ``X @ w`` and for its share of ``X.T @ r``, and dropped.
The workers' peak resident memory (``ru_maxrss`` of each process, read with
``client.run``) shows that no worker ever held the matrix.

    python examples/dask_out_of_core.py [rows]    # 5,000,000 rows: about 2 minutes here
"""

import resource
import sys
import time

import numpy as np

import chainrule as cr


def loss(w, X, y):
    """An L2-regularised logistic loss: mean log(1 + e^z) - y z, z = X w."""
    z = X @ w
    return cr.mean(cr.logaddexp(0.0, z) - y * z) + 0.1 * cr.sum(w ** 2)


def by_hand(w, X, y):
    """The same gradient, written out with Dask's own functions (the check)."""
    import dask.array as da
    z = X @ w
    return X.T @ (1 / (1 + da.exp(-z)) - y) / X.shape[0] + 0.2 * w


def _peak_mb():
    # (Linux reports ru_maxrss in kilobytes)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(rows: int = 5_000_000, features: int = 50, chunk_rows: int = 100_000,
         memory_limit: str = "300MB") -> dict:
    """Compute the gradient on a fresh two-worker cluster; return what was measured."""
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=memory_limit,
                      processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        X = da.random.default_rng(0).standard_normal((rows, features),
                                                     chunks=(chunk_rows, features))
        y = (da.random.default_rng(1).random(rows, chunks=chunk_rows) > 0.5) * 1.0
        w = da.from_array(np.linspace(-0.5, 0.5, features))
        before = sorted(client.run(_peak_mb).values())  # (the workers, started and idle)
        t0 = time.perf_counter()
        g = cr.grad(loss)(w, X, y)          # a Dask graph: nothing has run yet
        g, expected = dask.compute(g, by_hand(w, X, y))
        seconds = time.perf_counter() - t0
        peaks = sorted(client.run(_peak_mb).values())
    result = {"matrix_gb": rows * features * 8 / 1e9, "memory_limit": memory_limit,
              "peak_mb_per_worker": peaks, "idle_peak_mb_per_worker": before,
              "seconds": seconds,
              "max_difference": float(np.max(np.abs(g - expected))), "gradient": g}
    print(f"gradient over a {result['matrix_gb']:.2f} GB matrix ({rows} x {features}, "
          f"chunks of {chunk_rows} rows) on 2 workers limited to {memory_limit}: "
          f"{seconds:.0f} s; peak resident memory per worker "
          f"{', '.join(f'{p:.0f} MB' for p in peaks)} (before it: "
          f"{', '.join(f'{p:.0f} MB' for p in before)}); largest difference from the "
          f"gradient by hand {result['max_difference']:.1e}")
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5_000_000)
