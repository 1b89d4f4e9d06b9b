"""The factorizations and solves of the peers of `ndgpu shootout` (imported by peer.py,
which sits beside it): LU and its solve, QR, least squares and the triangular solve,
through PyTorch on the GPU or NumPy and SciPy on the host. Their inputs (the shootout's
distributions), one run, and the check of a result with LAPACK's test ratios, each at
most 30, on sampled columns, in float64 (as crates/shootout/src/check/linalg.rs):

    lu              ‖(P·A − L·U)ⱼ‖₁ / (n·ε·‖A‖₁), and every |Lᵢⱼ| ≤ 1
    lu_solve, trsm  ‖bⱼ − A·xⱼ‖₁ / (n·ε·‖A‖₁·‖xⱼ‖₁)
    qr              ‖(A − Q·R)ⱼ‖₁ / (m·ε·‖A‖₁) and ‖(I − Qᵀ·Q)ⱼ‖₁ / (m·ε)
    lstsq           ‖Aᵀ·(b − A·x)‖₁ / (m·ε·‖A‖∞·(‖b‖₁ + ‖A‖₁·‖x‖₁))
"""

import math

import numpy as np

OPS = ("lu", "lu_solve", "qr", "lstsq", "trsm")
# The ops of an m×n A (a spec MxN, or n for a square); the others take n.
RECT = ("qr", "lstsq")
RATIO = 30.0


def work(op, dims):
    """What a run's time grows with: n³, or m·n² (QR, least squares)."""
    return dims[0] * dims[1] * dims[1] if op in RECT else dims[0] ** 3


def inputs(op, dims, rng, dtype, uniform):
    """The host inputs: LU's A uniform plus n on the diagonal (and B); QR's A uniform;
    least squares' A uniform plus 2√n on the diagonal, and b m×1; the triangular solve's
    L with n on the diagonal, uniform below and zero above, and B."""
    if op in RECT:
        m, n = dims
    else:
        m = n = dims[0]
    if op in ("lu", "lu_solve"):
        a = uniform(rng, (n, n), dtype)
        a[np.diag_indices(n)] += dtype(n)
        return [a] if op == "lu" else [a, uniform(rng, (n, n), dtype)]
    if op == "qr":
        return [uniform(rng, (m, n), dtype)]
    if op == "lstsq":
        a = uniform(rng, (m, n), dtype)
        a[np.arange(n), np.arange(n)] += dtype(2.0 * math.sqrt(n))
        return [a, uniform(rng, (m, 1), dtype)]
    if op == "trsm":
        el = np.tril(uniform(rng, (n, n), dtype), -1)
        el[np.diag_indices(n)] = dtype(n)
        return [el, uniform(rng, (n, n), dtype)]
    raise ValueError(op)


def prepare(op, s, torch):
    """A set as the runs take it: LU's solve gets A's factor, made here, untimed."""
    if op != "lu_solve":
        return s
    if torch is None:
        import scipy.linalg

        return [scipy.linalg.lu_factor(s[0], check_finite=False), s[1]]
    lu, piv = torch.linalg.lu_factor(s[0])
    return [lu, piv, s[1]]


def run_torch(op, s, torch):
    if op == "lu":
        return torch.linalg.lu_factor(s[0])
    if op == "lu_solve":
        return torch.linalg.lu_solve(s[0], s[1], s[2])
    if op == "qr":
        return torch.geqrf(s[0])
    if op == "lstsq":
        return torch.linalg.lstsq(s[0], s[1], driver="gels").solution
    if op == "trsm":
        return torch.linalg.solve_triangular(s[0], s[1], upper=False)
    raise ValueError(op)


def run_numpy(op, s):
    import scipy.linalg

    if op == "lu":
        return scipy.linalg.lu_factor(s[0], check_finite=False)
    if op == "lu_solve":
        return scipy.linalg.lu_solve(s[0], s[1], check_finite=False)
    if op == "qr":
        return np.linalg.qr(s[0], mode="raw")
    if op == "lstsq":
        return np.linalg.lstsq(s[0], s[1], rcond=None)[0]
    if op == "trsm":
        return scipy.linalg.solve_triangular(s[0], s[1], lower=True, check_finite=False)
    raise ValueError(op)


def worst(ratios, what):
    """None if every (column, ratio) is within RATIO, else the worst (NaN first)."""
    bad = [(j, r) for j, r in ratios if not r <= RATIO]
    if not bad:
        return None
    j, r = max(bad, key=lambda jr: math.inf if math.isnan(jr[1]) else jr[1])
    return f"column {j}: {what} = {r:.3e} > {RATIO}"


def check(op, host, out, e, f, sample, torch):
    """None if `out` (a run's result) is right, else why not; `f` takes a result to a
    float64 NumPy array, `sample(n)` the columns to check."""
    a = host[0].astype(np.float64)
    m, n = a.shape
    norm1 = np.abs(a).sum(0).max()
    if op == "lu":
        lu = f(out[0])
        piv = f(out[1]).astype(np.int64) - (0 if torch is None else 1)  # torch: 1-based
        if not np.all(np.isfinite(lu)):
            return "lu: a non-finite entry"
        if np.abs(np.tril(lu, -1)).max(initial=0.0) > 1.0 + 64.0 * e:
            return "lu: a multiplier above 1"
        perm = np.arange(n)
        for i, p in enumerate(piv):
            perm[[i, p]] = perm[[p, i]]
        el, u = np.tril(lu, -1) + np.eye(n), np.triu(lu)
        cols = sample(n)
        resid = np.abs(a[perm][:, cols] - el @ u[:, cols]).sum(0)
        return worst(zip(cols, resid / (n * e * norm1)), "‖(P·A − L·U)ⱼ‖₁/(n·ε·‖A‖₁)")
    if op in ("lu_solve", "trsm"):
        b, x = host[1].astype(np.float64), f(out)
        if x.shape != b.shape or not np.all(np.isfinite(x)):
            return f"{op}: X is {x.shape}, or not finite"
        cols = sample(n)
        resid = np.abs(b[:, cols] - a @ x[:, cols]).sum(0)
        ratios = resid / (n * e * norm1 * np.abs(x[:, cols]).sum(0))
        return worst(zip(cols, ratios), "‖bⱼ − A·xⱼ‖₁/(n·ε·‖A‖₁·‖xⱼ‖₁)")
    if op == "qr":
        k = min(m, n)
        if torch is None:
            import scipy.linalg

            packed, tau = out[0].T, out[1]  # NumPy's raw mode gives the transpose
            orgqr = scipy.linalg.get_lapack_funcs("orgqr", (packed,))
            q, _, info = orgqr(np.asfortranarray(packed[:, :k]), tau)
            if info != 0:
                return f"qr: orgqr info {info}"
            q, r = np.asarray(q, dtype=np.float64), np.triu(packed[:k].astype(np.float64))
        else:
            q = f(torch.linalg.householder_product(out[0][:, :k], out[1]))
            r = np.triu(f(out[0])[:k])
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(r))):
            return "qr: a non-finite entry"
        cols = sample(n)
        resid = np.abs(a[:, cols] - q @ r[:, cols]).sum(0)
        why = worst(zip(cols, resid / (m * e * norm1)), "‖(A − Q·R)ⱼ‖₁/(m·ε·‖A‖₁)")
        if why is not None:
            return why
        qcols = sample(k)
        orth = np.abs(q.T @ q[:, qcols] - np.eye(k)[:, qcols]).sum(0)
        return worst(zip(qcols, orth / (m * e)), "‖(I − Qᵀ·Q)ⱼ‖₁/(m·ε)")
    if op == "lstsq":
        b, x = host[1].astype(np.float64), f(out).reshape(-1, 1)
        if x.shape != (n, 1) or not np.all(np.isfinite(x)):
            return f"lstsq: x is {x.shape}, or not finite"
        g = a.T @ (b - a @ x)
        scale = m * e * np.abs(a).sum(1).max() * (np.abs(b).sum() + norm1 * np.abs(x).sum())
        ratio = np.abs(g).sum() / scale
        return None if ratio <= RATIO else f"‖Aᵀ·(b − A·x)‖₁/(m·ε·‖A‖∞·(‖b‖₁ + ‖A‖₁·‖x‖₁)) = {ratio:.3e}"
    return "unchecked"
