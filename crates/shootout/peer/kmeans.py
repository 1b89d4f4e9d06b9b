"""PyTorch and scikit-learn beside `.gpu/kmeans` (crates/ndgpu/examples/kmeans.rs), on the
same shapes and the same kind of data (uniform in a box), f32:

- PyTorch, end to end from NumPy: upload, 20 Lloyd steps (distances ‖c‖² − 2·x·cᵀ by
  matmul, TF32 off; argmin; centroid sums by index_add_), centroids and labels back.
  Given init only: PyTorch has no k-means++.
- PyTorch, resident: one Lloyd step, CUDA events, median of 20.
- scikit-learn (all cores): k-means++ (its greedy variant) + 20 iterations, and given
  init + 20 iterations, one run each, tol = 0.

    python3 crates/shootout/peer/kmeans.py
"""
import os
import time

import numpy as np
import torch

from clock import wall_samples

torch.backends.cuda.matmul.allow_tf32 = False
ITER = 20
N = 1 << 20


def data(n, d):
    rng = np.random.default_rng(0)
    return (rng.random((n, d), dtype=np.float32) - np.arange(d, dtype=np.float32) - 0.5).astype(np.float32)


def lloyd_step(x, c):
    s = (c * c).sum(1)[None, :] - 2.0 * (x @ c.T)
    lab = s.argmin(1)
    sums = torch.zeros_like(c).index_add_(0, lab, x)
    cnt = torch.bincount(lab, minlength=c.shape[0]).to(x.dtype)[:, None]
    return torch.where(cnt > 0, sums / cnt.clamp(min=1), c), lab


def end_to_end(xh, k):
    x = torch.from_numpy(xh).cuda()
    c = x[:k].clone()
    lab = None
    for _ in range(ITER):
        c, lab = lloyd_step(x, c)
    return c.cpu().numpy(), lab.cpu().numpy()


def median_min_max(t):
    t = sorted(t)
    return t[len(t) // 2], t[0], t[-1]


def wall(f, reps=5):
    return median_min_max(s * 1e3 for s in wall_samples(f, reps))


def events(f, reps=20):
    f()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        t.append(a.elapsed_time(b))
    return median_min_max(t)


def row(who, what, t, iterations=""):
    print(f"| {who} | {what} | {t[0]:.3f} | {t[1]:.3f}–{t[2]:.3f} | {iterations} |", flush=True)


def main():
    print("| peer | workload (N = 2^20, f32) | median ms | min–max ms | iterations |")
    print("|---|---|---:|---:|---:|")
    small = data(N, 32)
    row("pytorch", "end to end: given init, 20 iterations", wall(lambda: end_to_end(small, 128)), ITER)
    for d, k in [(32, 128), (128, 1024)]:
        xh = small if d == 32 else data(N, d)
        x = torch.from_numpy(xh).cuda()
        c = x[:k].clone()
        row("pytorch", f"resident: one iteration, D={d} K={k}", events(lambda: lloyd_step(x, c)), 1)
        del x
    torch.cuda.empty_cache()
    try:
        from sklearn.cluster import KMeans
        import sklearn

        cores = os.cpu_count()
        for what, init in [("k-means++ + 20 iterations", "k-means++"), ("given init, 20 iterations", small[:128])]:
            km = KMeans(n_clusters=128, init=init, n_init=1, max_iter=ITER, tol=0.0, algorithm="lloyd", random_state=0)
            s = time.perf_counter()
            km.fit(small)
            ms = (time.perf_counter() - s) * 1e3
            row(f"scikit-learn {sklearn.__version__}, {cores} cores", f"end to end: {what}", (ms, ms, ms), km.n_iter_)
    except ImportError as e:
        print(f"scikit-learn not run: {e}")


if __name__ == "__main__":
    main()
