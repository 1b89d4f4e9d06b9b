#!/usr/bin/env python3
"""The peers of `ndgpu shootout`: the same ops, shapes and dtype through PyTorch on the
same GPU (`--lib torch`), or through NumPy (and SciPy, where the op needs it) on the host
(`--lib numpy`), measured the way the shootout measures (a checked first run that also
warms up, CUDA events around the timed region on the GPU and the wall clock on the host,
back-to-back runs for short ones, enough copies of small inputs to rotate through twice
the L2, the median of the samples).

    python3 crates/shootout/peer/peer.py --lib torch --op chain --shapes 1024,4096 --dtype f32 \\
        --reps 20 --budget 2.0
    python3 crates/shootout/peer/peer.py --lib torch --op matmul --shapes 1048576x32x1024,64x8192x64
    python3 crates/shootout/peer/peer.py --lib torch --op sumsq --shapes 16x16777216@1,8192x8192
    python3 crates/shootout/peer/peer.py --lib torch --op qr --shapes 4096x4096,1048576x32
    python3 crates/shootout/peer/peer.py --lib numpy --op pca --shapes 1048576x32,2048

A shape is the shootout's `Shape::spec`: `MxKxN` for matmul (A M×K times B K×N), `MxK`
for gram (M·Mᵀ of an M×K M), `RxC` for the reductions (sum, sumsq, argmax) of an R×C
matrix, whole, or `RxC@0` / `RxC@1` along axis 0 or 1, `MxN` for the A of qr, lstsq and
svd and the X of pca, and one number n for the other ops (the order of a square,
elements, points). The factorizations and solves (lu, lu_solve, qr, lstsq, trsm) are in
peer_linalg.py, the spectra (eigh, svd, pca) in peer_spectra.py, beside this file.

Prints one JSON object per shape (per shape and way, for pca: its "variant") on stdout:
    {"op", "shape", "status": "ok" | "failed" | "skipped", "median_s", "min_s", "max_s",
     "reps", "batch", "reason", "device", "version", "variant"}
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

import peer_linalg as linalg
import peer_spectra as spectra

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


REDUCTIONS = ("sum", "sumsq", "argmax")


def parse_shape(op, spec):
    """(dims, axis) of a shape spec: MxKxN, MxK, RxC[@axis], or n."""
    dims, _, axis = spec.partition("@")
    dims = [int(d) for d in dims.split("x")]
    want = {"matmul": 3, "gram": 2, "qr": 2, "lstsq": 2, "svd": 2, "pca": 2}.get(
        op, 2 if op in REDUCTIONS else 1
    )
    if len(dims) == 1 and want > 1:  # a ladder's n: a square, or one row of n elements
        dims = [1, dims[0]] if op in REDUCTIONS else dims * want
    if len(dims) != want:
        raise ValueError(f"{op} takes {want} dimensions, not {spec!r}")
    return dims, (int(axis) if axis else None)


def work(op, dims):
    """What a run's time grows with, to predict the next shape's from the last one's."""
    if op == "matmul":
        return dims[0] * dims[1] * dims[2]
    if op == "gram":
        return dims[0] * dims[0] * dims[1]
    if op in ("cholesky", "solve", "chain"):
        return dims[0] ** 3
    if op == "transpose":
        return dims[0] ** 2
    if op in linalg.OPS:
        return linalg.work(op, dims)
    if op in spectra.OPS:
        return spectra.work(op, dims)
    return math.prod(dims)


class Case:
    """Inputs of one size (on the host and, in `copies` sets, on the device), one run,
    and the check of its result."""

    def __init__(self, op, spec, dtype, seed=0x5EED0001, method=None):
        dims, self.axis = parse_shape(op, spec)
        n = dims[0]
        self.op, self.dtype, self.method = op, dtype, method
        rng = np.random.default_rng(seed + math.prod(dims))
        if op == "matmul":
            m, k, n = dims
            self.host = [uniform(rng, (m, k), dtype), uniform(rng, (k, n), dtype)]
        elif op == "gram":
            self.host = [uniform(rng, tuple(dims), dtype)]
        elif op == "transpose":
            self.host = [uniform(rng, (n, n), dtype)]
        elif op in REDUCTIONS:
            self.host = [uniform(rng, tuple(dims), dtype)]
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
        elif op in linalg.OPS:  # "lu", "lu_solve", "qr", "lstsq", "trsm"
            self.host = linalg.inputs(op, dims, rng, dtype, uniform)
        elif op in spectra.OPS:  # "eigh", "svd", "pca"
            self.host = spectra.inputs(op, dims, rng, dtype, uniform)
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
        if self.op in linalg.OPS:
            self.sets = [linalg.prepare(self.op, s, torch) for s in self.sets]

    def run(self, i):
        """One run on set i; returns the result (on the device, or a host scalar)."""
        s = self.sets[i % len(self.sets)]
        op = self.op
        if op in spectra.OPS:
            return spectra.run(op, s, torch, self.method)
        if torch is None:
            return run_numpy(op, s, self.axis)
        if op == "matmul":
            return s[0] @ s[1]
        if op == "gram":
            return s[0] @ s[0].T
        if op == "transpose":
            return s[0].t().contiguous()
        if op in REDUCTIONS:
            return run_torch_reduction(op, s[0], self.axis)
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
        if op in linalg.OPS:
            return linalg.run_torch(op, s, torch)
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
        if op in REDUCTIONS:
            return check_reduction(op, h[0], self.axis, f(out), e)
        if op == "dot":
            terms = h[0].astype(np.float64) * h[1].astype(np.float64)
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
        if op in linalg.OPS:
            return linalg.check(op, h, out, e, f, sample, torch)
        if op in spectra.OPS:
            return spectra.check(op, h, out, e, f, sample, self.method)
        return "unchecked"


def run_torch_reduction(op, x, axis):
    """A reduction of the matrix x through PyTorch: whole (the value or index comes back
    to the host, as the shootout's whole reductions do) or along an axis (stays on the
    device). The sum of squares is `vector_norm(...)**2`, one pass over x (`(x*x).sum`
    would write and read x² too)."""
    if op == "sum":
        r = x.sum() if axis is None else x.sum(axis)
    elif op == "sumsq":
        r = torch.linalg.vector_norm(x, 2, dim=axis).square()
    else:
        r = x.argmax() if axis is None else x.argmax(axis)
    return r.item() if axis is None else r


def run_numpy_reduction(op, x, axis):
    """The same through NumPy; the sum of squares as one pass (`einsum`)."""
    if op == "sum":
        r = x.sum(axis)
    elif op == "sumsq":
        r = np.einsum({None: "ij,ij->", 0: "ij,ij->j", 1: "ij,ij->i"}[axis], x, x)
    else:
        r = x.argmax(axis)
    return r.item() if axis is None else r


def check_reduction(op, x, axis, got, e):
    """None if `got` is the reduction of x along axis (None: whole), else why not: every
    lane's sum within (len + 1)·ε·Σ|terms|, and every index at a largest element of its
    lane (a tie may go either way)."""
    x = x.astype(np.float64)
    if op == "argmax":
        got = np.asarray(got, dtype=np.int64)
        if axis is None:
            ok = x.reshape(-1)[int(got)] == x.max()
        else:
            picked = np.take_along_axis(x, np.expand_dims(got, axis), axis).squeeze(axis)
            ok = np.all(picked == x.max(axis))
        return None if ok else "argmax: an index is not at its lane's largest element"
    terms = x * x if op == "sumsq" else x
    want, mag = terms.sum(axis), np.abs(terms).sum(axis)
    lane = x.size if axis is None else x.shape[axis]
    bound = (lane + 1) * e * mag
    err = np.abs(np.asarray(got, dtype=np.float64).reshape(np.shape(want)) - want)
    if np.all(err <= bound):
        return None
    return f"{op}: error {np.max(err / np.maximum(bound, 1e-300)):.3e} × the bound"


def run_numpy(op, s, axis=None):
    """One run of `op` through NumPy (SciPy for the triangular solves)."""
    if op == "matmul":
        return s[0] @ s[1]
    if op == "gram":
        return s[0] @ s[0].T
    if op == "transpose":
        return np.ascontiguousarray(s[0].T)
    if op in REDUCTIONS:
        return run_numpy_reduction(op, s[0], axis)
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
    if op in linalg.OPS:
        return linalg.run_numpy(op, s)
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


def measure(op, spec, dtype, reps, budget, l2, method=None):
    case = Case(op, spec, dtype, method=method)
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
    p.add_argument("--shapes", required=True, help="comma separated, as the module says")
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
            for spec in args.shapes.split(","):
                print(json.dumps(dict(base, shape=spec, status="skipped", reason="no device to transfer to")))
            return
    else:
        if not torch.cuda.is_available():
            print(json.dumps({"status": "unavailable", "reason": "torch sees no CUDA device"}))
            return
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 50 << 20)
        base = {"op": args.op, "device": props.name, "version": torch.__version__}
    ways = spectra.methods(args.op, torch) if args.op in spectra.OPS else [None]
    for method in ways:
        measure_all(args, dtype, l2, dict(base) if method is None else dict(base, variant=method), method)


def measure_all(args, dtype, l2, base, method):
    """One row per shape of `method` (None: the op's one way)."""
    previous = None  # (work, seconds) of the last shape, to skip shapes predicted too slow
    for spec in args.shapes.split(","):
        row = dict(base, shape=spec)
        w = work(args.op, parse_shape(args.op, spec)[0])
        why_not = spectra.unavailable(method)
        if why_not is not None:
            row.update(status="skipped", reason=why_not)
            print(json.dumps(row), flush=True)
            continue
        if previous is not None:
            predicted = previous[1] * w / max(previous[0], 1)
            if predicted > args.max_run_s:
                row.update(status="skipped", reason=f"too slow: about {predicted:.1f} s per run predicted")
                print(json.dumps(row), flush=True)
                continue
        try:
            row.update(measure(args.op, spec, dtype, args.reps, args.budget, l2, method))
        except Exception as e:  # a failure of one size is a row, not the end of the run
            if torch is not None and isinstance(e, torch.cuda.OutOfMemoryError):
                row.update(status="skipped", reason=f"out of device memory: {str(e).splitlines()[0]}")
            else:
                row.update(status="failed", reason=f"{type(e).__name__}: {e}")
        if row.get("status") == "ok":
            previous = (w, row["median_s"])
        print(json.dumps(row), flush=True)
        if torch is not None:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
