"""The CPU bars of the users-without-a-GPU issue, on this machine: NumPy and
scikit-learn against `ndgpu run ... --backend B` on the same inputs.

    python3 crates/shootout/peer/cpu_vs_numpy.py [NDGPU_BINARY] [BACKEND ...]

Writes the inputs to a temporary folder, times each peer call (best of 5 after a
warm-up) and each ndgpu call (the `seconds` its --json reports, which time the
backend call on arrays already in memory, as the peer's are; best of 5), and prints
a Markdown table with the ratios. Needs numpy and scikit-learn.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from clock import wall_samples


def best(f, reps=5):
    return min(wall_samples(f, reps))


def ours(binary, args, reps=5):
    secs = []
    for _ in range(reps + 1):
        r = subprocess.run([binary, "run", *args, "--json"], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"ndgpu {' '.join(args)}: {r.stderr.strip()}")
        secs.append(json.loads(r.stdout)["seconds"])
    return min(secs[1:]), json.loads(r.stdout)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/ndgpu"
    backends = sys.argv[2:] or ["faer", "cpu"]
    rng = np.random.default_rng(1)
    d = tempfile.mkdtemp(prefix="ndgpu-cpu-bars-")
    path = lambda name: os.path.join(d, name)

    a = rng.standard_normal((2048, 2048), dtype=np.float32)
    b = rng.standard_normal((2048, 2048), dtype=np.float32)
    np.save(path("a.npy"), a)
    np.save(path("b.npy"), b)
    m = rng.standard_normal((2048, 2048))
    spd = m @ m.T + 2048 * np.eye(2048)
    np.save(path("spd.npy"), spd)
    centers = rng.standard_normal((8, 16)) * 5
    x = (centers[rng.integers(0, 8, 100_000)] + rng.standard_normal((100_000, 16))).astype(np.float32)
    c0 = x[rng.choice(100_000, 8, replace=False)]
    np.save(path("x.npy"), x)
    np.save(path("c0.npy"), c0)

    rows = []
    t_np = best(lambda: a @ b)
    rows.append(("matmul 2048² f32", t_np, "NumPy", ["matmul", path("a.npy"), path("b.npy"), "-o", path("o.npy")]))
    t_np = best(lambda: np.linalg.cholesky(spd))
    rows.append(("cholesky 2048 f64", t_np, "NumPy", ["cholesky", path("spd.npy"), "-o", path("l.npy")]))

    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=8, init=c0, n_init=1, algorithm="lloyd", max_iter=300, tol=0.0)
    t_sk = best(lambda: km.fit(x), reps=3)
    rows.append((f"k-means 100k×16 f32, k = 8 ({km.n_iter_} iterations in scikit-learn)", t_sk,
                 "scikit-learn",
                 ["kmeans", path("x.npy"), "--k", "8", "--init", path("c0.npy"), "--tol", "0",
                  "--max-iter", "300", "--out-dir", path("km")]))

    import sklearn
    print(f"NumPy {np.__version__}, scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs")
    print()
    print("| case | peer | peer s | " + " | ".join(f"{b} s | {b} / peer" for b in backends) + " |")
    print("|---|---|---:|" + "---:|---:|" * len(backends))
    for name, t_peer, peer, args in rows:
        cells = []
        for bk in backends:
            t, info = ours(binary, [*args, "--backend", bk], reps=3 if bk == "cpu" else 5)
            extra = f" ({info['iterations']} it.)" if "iterations" in info else ""
            cells.append(f"{t:.4f}{extra} | {t / t_peer:.2f}×")
        print(f"| {name} | {peer} | {t_peer:.4f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
