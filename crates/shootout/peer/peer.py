#!/usr/bin/env python3
"""The peers of `ndgpu shootout`: the same ops, sizes and dtype through PyTorch on the
same GPU (`--lib torch`), or through NumPy (and SciPy, where the op needs it) on the host
(`--lib numpy`), measured the way the shootout measures (a checked first run that also
warms up, CUDA events around the timed region on the GPU and the wall clock on the host,
back-to-back runs for short ones, enough copies of small inputs to rotate through twice
the L2, the median of the samples).

    python3 crates/shootout/peer/peer.py --lib torch --op chain --sizes 1024,4096 --dtype f32 \\
        --reps 20 --budget 2.0

Prints one JSON object per size on stdout:
    {"op", "size", "status": "ok" | "failed" | "skipped", "median_s", "min_s", "max_s",
     "reps", "batch", "reason", "device", "version"}
The inputs are drawn by NumPy with the shootout's distributions (not its numbers); each
result is checked against NumPy in float64 with the shootout's error bounds before it is
timed.
"""

import argparse
import json
import math
import sys
import time

import numpy as np

def lib_of(argv):
    """The --lib argument, read before argparse runs, so torch is imported only when used."""
    for i, a in enumerate(argv):
        if a.startswith("--lib="):
            return a.split("=", 1)[1]
        if a == "--lib" and i + 1 < len(argv):
            return argv[i + 1]
    return "torch"


LIB = lib_of(sys.argv)
torch = None
if LIB == "torch":
    try:
        import torch
    except ImportError as e:  # the shootout probes first; this is for direct use
        print(json.dumps({"status": "unavailable", "reason": f"no torch: {e}"}))
        sys.exit(0)

KMEANS_D, KMEANS_K = 32, 128
MIN_REGION_S = 5e-4
CHOLESKY_RATIO, SOLVE_RATIO = 30.0, 30.0


def eps(dtype):
    return float(np.finfo(dtype).eps)


def uniform(rng, shape, dtype, scale=1.0):
    return (rng.random(shape, dtype=np.float64) * 2.0 - 1.0).astype(dtype) * scale


def spd(rng, n, dtype):
    """Symmetric, off-diagonal uniform in [-1, 1), n on the diagonal: SPD by Gershgorin."""
    a = uniform(rng, (n, n), np.float64)
    a = np.tril(a, -1)
    a = a + a.T + n * np.eye(n)
    return a.astype(dtype)


def sample(n, k=16):
    return np.unique(np.linspace(0, max(n - 1, 0), min(n, k)).astype(int))


class Case:
    """Inputs of one size (on the host and, in `copies` sets, on the device), one run,
    and the check of its result."""

    def __init__(self, op, n, dtype, seed=0x5EED0001):
        self.op, self.n, self.dtype = op, n, dtype
        rng = np.random.default_rng(seed + n)
        if op in ("matmul",):
            self.host = [uniform(rng, (n, n), dtype), uniform(rng, (n, n), dtype)]
        elif op in ("gram", "transpose"):
            self.host = [uniform(rng, (n, n), dtype)]
        elif op == "sum":
            self.host = [uniform(rng, (n,), dtype)]
        elif op == "dot":
            self.host = [uniform(rng, (n,), dtype), uniform(rng, (n,), dtype)]
        elif op == "cholesky":
            self.host = [spd(rng, n, dtype)]
        elif op == "kmeans":
            n = max(n, KMEANS_K)
            centres = uniform(rng, (KMEANS_K, KMEANS_D), np.float64, 10.0)
            x = centres[np.arange(n) % KMEANS_K] + uniform(rng, (n, KMEANS_D), np.float64)
            x = x.astype(dtype)
            self.host = [x, x[:KMEANS_K].copy()]
        elif op == "solve":
            el = np.tril(uniform(rng, (n, n), dtype), -1)
            el[np.diag_indices(n)] = dtype(n)
            self.host = [el, uniform(rng, (n, n), dtype)]
        elif op == "chain":
            m = uniform(rng, (n, n), dtype)
            m[np.diag_indices(n)] += dtype(2.0 * math.sqrt(n))
            self.host = [m, uniform(rng, (n, n), dtype)]
        elif op == "transfer":
            cols = 4096 if n % 4096 == 0 else n
            self.host = [uniform(rng, (n // cols, cols), dtype)]
        else:
            raise ValueError(f"unknown op {op}")
        self.sets = []

    def upload(self, copies):
        if self.op == "transfer":
            self.sets = [None]
            return
        for _ in range(max(copies, 1)):
            if torch is None:
                self.sets.append([h.copy() for h in self.host])
            else:
                self.sets.append([torch.from_numpy(h).to("cuda") for h in self.host])

    def run(self, i):
        """One run on set i; returns the result (on the device, or a host scalar)."""
        s = self.sets[i % len(self.sets)]
        op = self.op
        if torch is None:
            return run_numpy(op, s)
        if op == "matmul":
            return s[0] @ s[1]
        if op == "gram":
            return s[0] @ s[0].T
        if op == "transpose":
            return s[0].t().contiguous()
        if op == "sum":
            return s[0].sum().item()
        if op == "dot":
            return torch.dot(s[0], s[1]).item()
        if op == "cholesky":
            return torch.linalg.cholesky(s[0])
        if op == "kmeans":
            x, c = s
            xx = (x * x).sum(1, keepdim=True)
            cc = (c * c).sum(1)
            d = xx - 2.0 * (x @ c.T) + cc
            labels = d.argmin(1)
            sums = torch.zeros_like(c).index_add_(0, labels, x)
            counts = torch.bincount(labels, minlength=c.shape[0]).to(x.dtype)[:, None]
            return labels, torch.where(counts > 0, sums / counts.clamp(min=1), c)
        if op == "solve":
            return torch.cholesky_solve(s[1], s[0])
        if op == "chain":
            a = s[0] @ s[0].T
            el = torch.linalg.cholesky(a)
            return torch.cholesky_solve(s[1], el)
        if op == "transfer":
            return torch.from_numpy(self.host[0]).cuda().cpu()
        raise ValueError(op)

    def check(self, out):
        """None if `out` (the result of a run on set 0) is right, else why not."""
        op, h, e = self.op, self.host, eps(self.dtype)
        def f(t):
            if torch is not None and torch.is_tensor(t):
                return t.double().cpu().numpy()
            return np.asarray(t, dtype=np.float64) if isinstance(t, np.ndarray) else t
        if op in ("matmul", "gram"):
            a = h[0].astype(np.float64)
            b = a.T if op == "gram" else h[1].astype(np.float64)
            got = f(out)
            rows = sample(a.shape[0])
            want = a[rows] @ b
            bound = (a.shape[1] + 2) * e * (np.abs(a[rows]) @ np.abs(b))
            err = np.abs(got[rows] - want)
            if not np.all(err <= bound):
                return f"{op}: error {np.max(err / np.maximum(bound, 1e-300)):.3e} × the bound"
            return None
        if op == "transpose":
            return None if np.array_equal(f(out), h[0].T.astype(np.float64)) else "not Aᵀ"
        if op in ("sum", "dot"):
            terms = h[0].astype(np.float64) * (h[1].astype(np.float64) if op == "dot" else 1)
            want, mag = terms.sum(), np.abs(terms).sum()
            bound = (len(terms) + 1) * e * mag
            return None if abs(out - want) <= bound else f"{op}: {out} vs {want} (bound {bound:e})"
        if op == "cholesky":
            a = h[0].astype(np.float64)
            el = f(out)
            n = a.shape[0]
            cols = sample(n)
            resid = a[:, cols] - el @ el[cols].T
            ratio = np.abs(resid).sum(0).max() / (n * e * np.abs(a).sum(0).max())
            return None if ratio <= CHOLESKY_RATIO else f"cholesky ratio {ratio:.3e}"
        if op == "kmeans":
            x, c = (v.astype(np.float64) for v in h)
            labels = f(out[0]).astype(int)
            pts = sample(x.shape[0], 256)
            d = ((x[pts, None, :] - c[None, :, :]) ** 2).sum(2)
            best = d.min(1)
            picked = d[np.arange(len(pts)), labels[pts]]
            slack = 4.0 * (KMEANS_D + 2) * e * ((x[pts] ** 2).sum(1) + (c ** 2).sum(1).max())
            return None if np.all(picked - best <= slack) else "a label is not the nearest centroid"
        if op in ("chain", "solve"):
            # X solves M·Mᵀ·X = B, M the chain's matrix or the given factor.
            m, b = (v.astype(np.float64) for v in h)
            x = f(out)
            n = m.shape[0]
            norm = np.abs(m).sum(0).max() * np.abs(m).sum(1).max()
            limit = SOLVE_RATIO + (CHOLESKY_RATIO + 1.0 if op == "chain" else 0.0)
            for j in sample(n):
                r = b[:, j] - m @ (m.T @ x[:, j])
                ratio = np.abs(r).sum() / (n * e * norm * np.abs(x[:, j]).sum())
                if not ratio <= limit:
                    return f"column {j}: residual ratio {ratio:.3e}"
            return None
        if op == "transfer":
            return None if np.array_equal(f(out), h[0].astype(np.float64)) else "changed values"
        return "unchecked"


def run_numpy(op, s):
    """One run of `op` through NumPy (SciPy for the triangular solves)."""
    if op == "matmul":
        return s[0] @ s[1]
    if op == "gram":
        return s[0] @ s[0].T
    if op == "transpose":
        return np.ascontiguousarray(s[0].T)
    if op == "sum":
        return float(s[0].sum())
    if op == "dot":
        return float(s[0] @ s[1])
    if op == "cholesky":
        return np.linalg.cholesky(s[0])
    if op == "kmeans":
        x, c = s
        d = (x * x).sum(1, keepdims=True) - 2.0 * (x @ c.T) + (c * c).sum(1)
        labels = d.argmin(1)
        counts = np.bincount(labels, minlength=c.shape[0])
        sums = np.zeros_like(c)
        np.add.at(sums, labels, x)
        means = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], c)
        return labels, means.astype(c.dtype)
    if op in ("chain", "solve"):
        import scipy.linalg

        el = np.linalg.cholesky(s[0] @ s[0].T) if op == "chain" else s[0]
        return scipy.linalg.cho_solve((el, True), s[1])
    raise ValueError(op)


def timed(case, start, runs):
    """Seconds per run of `runs` runs from set `start`: CUDA events, or the wall clock for
    transfers (host work is part of them) and on the host."""
    if torch is None:
        t = time.perf_counter()
        for i in range(start, start + runs):
            case.run(i)
        return (time.perf_counter() - t) / runs
    if case.op == "transfer":
        t = time.perf_counter()
        for i in range(start, start + runs):
            case.run(i)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / runs
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for i in range(start, start + runs):
        case.run(i)
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3 / runs


def measure(op, n, dtype, reps, budget, l2):
    case = Case(op, n, dtype)
    nbytes = sum(h.nbytes for h in case.host)
    copies = 1 if nbytes == 0 or nbytes >= l2 or op == "transfer" else min(64, math.ceil(2 * l2 / nbytes))
    case.upload(copies)
    why = case.check(case.run(0))
    if torch is not None:
        torch.cuda.synchronize()
    if why is not None:
        return {"status": "failed", "reason": f"wrong result: {why}"}
    one = timed(case, 1, 1)
    batch = 1 if one >= MIN_REGION_S else min(256, math.ceil(MIN_REGION_S / max(one, 1e-9)))
    count = int(min(reps, max(3, budget // max(one * batch, 1e-9))))
    samples, k = [], 2
    for _ in range(count):
        samples.append(timed(case, k, batch))
        k += batch
    samples.sort()
    mid = len(samples) // 2
    median = samples[mid] if len(samples) % 2 else 0.5 * (samples[mid - 1] + samples[mid])
    return {
        "status": "ok",
        "median_s": median,
        "min_s": samples[0],
        "max_s": samples[-1],
        "reps": len(samples),
        "batch": batch,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--op", required=True)
    p.add_argument("--sizes", required=True)
    p.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--budget", type=float, default=2.0)
    p.add_argument("--max-run-s", type=float, default=5.0)
    p.add_argument("--lib", choices=["torch", "numpy"], default="torch")
    args = p.parse_args()
    dtype = np.float32 if args.dtype == "f32" else np.float64
    if torch is None:
        # The host's last-level cache is not asked for: 32 MiB stands for it.
        l2 = 32 << 20
        base = {"op": args.op, "device": "host CPU", "version": np.__version__}
        if args.op == "transfer":
            for n in (int(s) for s in args.sizes.split(",")):
                print(json.dumps(dict(base, size=n, status="skipped", reason="no device to transfer to")))
            return
    else:
        if not torch.cuda.is_available():
            print(json.dumps({"status": "unavailable", "reason": "torch sees no CUDA device"}))
            return
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 50 << 20)
        base = {"op": args.op, "device": props.name, "version": torch.__version__}
    previous = None  # (size, seconds) of the last size, to skip sizes predicted too slow
    for n in (int(s) for s in args.sizes.split(",")):
        row = dict(base, size=n)
        if previous is not None:
            work = lambda m: m ** 3 if args.op in ("matmul", "gram", "cholesky", "solve", "chain") else m
            predicted = previous[1] * work(n) / work(previous[0])
            if predicted > args.max_run_s:
                row.update(status="skipped", reason=f"too slow: about {predicted:.1f} s per run predicted")
                print(json.dumps(row), flush=True)
                continue
        try:
            row.update(measure(args.op, n, dtype, args.reps, args.budget, l2))
        except Exception as e:  # a failure of one size is a row, not the end of the run
            if torch is not None and isinstance(e, torch.cuda.OutOfMemoryError):
                row.update(status="skipped", reason=f"out of device memory: {str(e).splitlines()[0]}")
            else:
                row.update(status="failed", reason=f"{type(e).__name__}: {e}")
        if row.get("status") == "ok":
            previous = (n, row["median_s"])
        print(json.dumps(row), flush=True)
        if torch is not None:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
