"""The spectra of the peers of `ndgpu shootout` (imported by peer.py, which sits beside
it): the symmetric eigendecomposition, the reduced SVD and PCA, through PyTorch on the
GPU or NumPy (and scikit-learn) on the host. Their inputs (the shootout's
distributions), one run, and the check of a result in float64 with LAPACK's test
ratios, each at most 30, on sampled columns (as crates/shootout/src/check/spectra.rs):

    eigh  ‖A·vⱼ − wⱼ·vⱼ‖₁ / (n·ε·‖A‖₁) and ‖(VᵀV − I)ⱼ‖₁ / (n·ε); w ascending
    svd   ‖(A − U·diag(s)·Vt)ⱼ‖₁ / (max(m, n)·ε·‖A‖₁) and ‖(UᵀU − I)ⱼ‖₁ / (m·ε)
    pca   ‖Xcᵀ·Xc·pᵢ − sᵢ²·pᵢ‖₁ / (√d·2(m + d)·ε·‖Xc‖²_F) per component, and the
          components orthonormal to 30·d·ε

PCA runs several ways, one row each (its "variant"): on the GPU `torch.pca_lowrank`
(randomized: an approximation, so only its components' orthonormality is checked) and
the exact `torch.linalg.svd` of the centred X; on the host the `numpy.linalg.svd` of the
centred X and scikit-learn's `PCA()` with its default `svd_solver='auto'` (a skipped row where scikit-learn
is not importable).
"""

import math

import numpy as np

from peer_linalg import worst

OPS = ("eigh", "svd", "pca")
# The ops of an m×n A (a spec MxN, or n for a square); eigh takes n.
RECT = ("svd", "pca")
COMPONENTS = 8

LOWRANK = "pca_lowrank (randomized)"
CENTRED = "svd of centred X"
SKLEARN = "sklearn PCA(auto)"


def methods(op, torch):
    """The ways `op` runs, one row each; [None] for one unnamed way."""
    if op != "pca":
        return [None]
    return [LOWRANK, CENTRED] if torch is not None else [CENTRED, SKLEARN]


def unavailable(method):
    """Why `method` cannot run here (and how to get it), or None."""
    if method != SKLEARN:
        return None
    try:
        import sklearn.decomposition  # noqa: F401
    except ImportError as e:
        return f"scikit-learn is not importable here ({e}); pip install scikit-learn"
    return None


def work(op, dims):
    """What a run's time grows with: n³, or m·n·min(m, n)."""
    if op in RECT:
        m, n = dims
        return m * n * min(m, n)
    return dims[0] ** 3


def inputs(op, dims, rng, dtype, uniform):
    """The host inputs: eigh's A symmetric (the lower triangle uniform, mirrored); the
    SVD's A uniform; PCA's X with column j uniform times 1/√(j + 1) plus a uniform mean."""
    if op == "eigh":
        n = dims[0]
        a = np.tril(uniform(rng, (n, n), np.float64))
        return [(a + np.tril(a, -1).T).astype(dtype)]
    m, n = dims
    if op == "svd":
        return [uniform(rng, (m, n), dtype)]
    if op == "pca":
        x = uniform(rng, (m, n), np.float64) / np.sqrt(np.arange(1, n + 1))
        return [(x + uniform(rng, (1, n), np.float64)).astype(dtype)]
    raise ValueError(op)


def components(x):
    """The components a PCA of x keeps: min(m, d, 8)."""
    return min(x.shape[0], x.shape[1], COMPONENTS)


def run(op, s, torch, method):
    """One run on the set s: PyTorch on the device where torch is given, else NumPy."""
    x = s[0]
    if torch is not None:
        if op == "eigh":
            return torch.linalg.eigh(x)
        if op == "svd":
            return torch.linalg.svd(x, full_matrices=False)
        if method == LOWRANK:
            u, sv, v = torch.pca_lowrank(x, q=components(x), center=True)
            return sv, v.T
        _, sv, vt = torch.linalg.svd(x - x.mean(0, keepdim=True), full_matrices=False)
        return sv, vt[: components(x)]
    if op == "eigh":
        return np.linalg.eigh(x)
    if op == "svd":
        return np.linalg.svd(x, full_matrices=False)
    if method == SKLEARN:
        from sklearn.decomposition import PCA

        fit = PCA(n_components=components(x)).fit(x)
        return fit.singular_values_, fit.components_
    _, sv, vt = np.linalg.svd(x - x.mean(0, keepdims=True), full_matrices=False)
    return sv, vt[: components(x)]


def orthonormal(q, cols, e, what):
    """None if the columns `cols` of q are orthonormal to 30·m·ε, else why not."""
    m, k = q.shape
    orth = np.abs(q.T @ q[:, cols] - np.eye(k)[:, cols]).sum(0)
    return worst(zip(cols, orth / (m * e)), what)


def check(op, host, out, e, f, sample, method):
    """None if `out` (a run's result) is right, else why not; `f` takes a result to a
    float64 NumPy array, `sample(n)` the columns to check."""
    a = host[0].astype(np.float64)
    m, n = a.shape
    if op == "eigh":
        w, v = f(out[0]), f(out[1])
        if v.shape != (n, n) or not (np.all(np.isfinite(v)) and np.all(np.isfinite(w))):
            return f"eigh: V is {v.shape}, or not finite"
        if np.any(np.diff(w) < 0):
            return "eigh: the eigenvalues are not ascending"
        cols = sample(n)
        resid = np.abs(a @ v[:, cols] - v[:, cols] * w[cols]).sum(0)
        why = worst(zip(cols, resid / (n * e * np.abs(a).sum(0).max())), "‖A·vⱼ − wⱼ·vⱼ‖₁/(n·ε·‖A‖₁)")
        return why or orthonormal(v, cols, e, "‖(VᵀV − I)ⱼ‖₁/(n·ε)")
    if op == "svd":
        u, s, vt = f(out[0]), f(out[1]), f(out[2])
        k = min(m, n)
        if u.shape != (m, k) or vt.shape != (k, n) or not np.all(np.isfinite(u)):
            return f"svd: U is {u.shape}, Vt {vt.shape}, or not finite"
        if np.any(np.diff(s) > 0) or np.any(s < 0):
            return "svd: the singular values are not descending and nonnegative"
        cols = sample(n)
        resid = np.abs(a[:, cols] - (u * s) @ vt[:, cols]).sum(0)
        scale = max(m, n) * e * np.abs(a).sum(0).max()
        why = worst(zip(cols, resid / scale), "‖(A − U·diag(s)·Vt)ⱼ‖₁/(max(m, n)·ε·‖A‖₁)")
        return why or orthonormal(u, sample(k), e, "‖(UᵀU − I)ⱼ‖₁/(m·ε)")
    s, p = f(out[0]), f(out[1])
    k = components(a)
    if p.shape != (k, n) or not np.all(np.isfinite(p)):
        return f"pca: the components are {p.shape}, or not finite"
    why = orthonormal(p.T, np.arange(k), e, "‖(P·Pᵀ − I)ᵢ‖₁/(d·ε)")
    if why is not None or method == LOWRANK:
        return why
    xc = a - a.mean(0)
    bound = math.sqrt(n) * 2.0 * (m + n) * e * (xc * xc).sum()
    resid = np.abs(xc.T @ (xc @ p.T) - p.T * s[:k] ** 2).sum(0)
    return worst(zip(range(k), resid / bound), "‖Xcᵀ·Xc·pᵢ − sᵢ²·pᵢ‖₁/(√d·2(m + d)·ε·‖Xc‖²_F)")
