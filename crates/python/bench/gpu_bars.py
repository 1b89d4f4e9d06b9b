"""The Python package against the Rust API and the peers on one GPU, in one run:

- matmul of resident 4096² float32 arrays from Python, per call (20 calls, then one
  reduction that waits for them, less the reduction alone), beside the Rust shootout's
  resident figure for the same backend (run `ndgpu shootout` in the same session);
- KMeans of 2²⁰×32 float32 host points to 128 clusters, the first 128 points as the
  start, exactly 20 iterations (tol 0), end to end from NumPy (upload, fit, labels
  back), beside scikit-learn's Lloyd KMeans on every core with the same start;
- PCA of 2²⁰×32 float32 host data to 8 components, end to end, beside scikit-learn's
  PCA (its `auto` solver) on every core, and from a resident array.

    python3 crates/python/bench/gpu_bars.py [BACKEND]   (default cuda)

Prints a table and writes gpu_bars.json into $OUT (or the current folder). Medians of 5
runs after one untimed run (scikit-learn: 3 runs).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import numpy as np

import ndgpu
from ndgpu.cluster import KMeans
from ndgpu.decomposition import PCA


def median_ms(f, reps=5, warm=1):
    for _ in range(warm):
        f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    b = ndgpu.backend(name)
    rng = np.random.default_rng(0)
    rows = []

    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    ra, rb = b.asarray(a), b.asarray(a.T.copy())
    calls = 20

    def products():
        c = None
        for _ in range(calls):
            c = b.matmul(ra, rb)
        b.sum(c)

    sync = median_ms(lambda: b.sum(ra), reps=20)
    per_call = (median_ms(products) - sync) / calls
    rows.append(("matmul 4096² f32, resident, per call (Python)", per_call, None))

    x = rng.random((1 << 20, 32), dtype=np.float32)
    start = x[:128].astype(np.float64)
    ours = median_ms(lambda: KMeans(128, init=start, n_init=1, max_iter=20, tol=0.0, backend=b).fit(x))
    rows.append(("KMeans 2²⁰×32 k=128, 20 iterations, end to end (Python)", ours, None))
    try:
        from sklearn.cluster import KMeans as SkKMeans

        sk = median_ms(
            lambda: SkKMeans(128, init=start, n_init=1, max_iter=20, tol=0.0, algorithm="lloyd").fit(x),
            reps=3,
        )
        rows.append(("  scikit-learn KMeans, same start and iterations, all cores", sk, sk / ours))
    except ImportError as e:
        rows.append((f"  scikit-learn: {e}", float("nan"), None))

    xp = (rng.standard_normal((1 << 20, 32)) * np.geomspace(10, 0.1, 32)).astype(np.float32)
    ours = median_ms(lambda: PCA(8, backend=b).fit(xp))
    rows.append(("PCA 2²⁰×32 → 8, end to end from NumPy (Python)", ours, None))
    rx = b.asarray(xp)
    res = median_ms(lambda: PCA(8, backend=b).fit(rx))
    rows.append(("PCA 2²⁰×32 → 8, from a resident array (Python)", res, None))
    try:
        from sklearn.decomposition import PCA as SkPCA

        sk = median_ms(lambda: SkPCA(8).fit(xp), reps=3)
        rows.append(("  scikit-learn PCA(8), auto solver, all cores", sk, sk / ours))
    except ImportError as e:
        rows.append((f"  scikit-learn: {e}", float("nan"), None))

    print(f"backend {name}: {b.description()}")
    for what, ms, ratio in rows:
        extra = f"   ({ratio:.1f}× ours)" if ratio else ""
        print(f"{what:<66} {ms:10.3f} ms{extra}")
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "gpu_bars.json"), "w") as f:
        json.dump([{"what": w, "ms": m, "ratio": r} for w, m, r in rows], f, indent=1)


if __name__ == "__main__":
    main()
