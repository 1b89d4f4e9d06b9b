"""ndgpu.linalg.eigh, eigvalsh, svd and svdvals against NumPy, and
ndgpu.decomposition.PCA against scikit-learn's PCA, with bounds from the backward error
of a stable method (a few n·u·‖A‖) and the perturbation theory of the values (Weyl)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA as SkPCA
from sklearn.utils.estimator_checks import check_estimator

import ndgpu
from ndgpu.decomposition import PCA

from conftest import eps, f64


def symmetric(rng, n, dtype):
    a = rng.standard_normal((n, n))
    return ((a + a.T) / 2).astype(dtype)


def test_eigh_matches_numpy(backend, dtype, rng):
    n = 40
    a = symmetric(rng, n, dtype)
    w, v = backend.eigh(a)
    assert w.dtype == dtype and v.dtype == dtype and v.shape == (n, n)
    a64, w64, v64 = f64(a), f64(w), f64(v)
    norm = np.linalg.norm(a64, 2)
    u = eps(dtype)
    # LAPACK's xSYT21 ratios: residual and orthogonality, in units of n·u.
    assert np.linalg.norm(a64 @ v64 - v64 * w64, 1) / (norm * n * u) < 10
    assert np.linalg.norm(v64.T @ v64 - np.eye(n), 1) / (n * u) < 10
    # Weyl: each eigenvalue within the backward error's norm.
    assert np.all(np.abs(w64 - np.linalg.eigvalsh(a64)) <= 10 * n * u * norm)
    assert np.all(np.diff(w64) >= 0)
    assert np.allclose(f64(backend.eigvalsh(a)), w64, rtol=0, atol=10 * n * u * norm)


def test_eigh_reads_the_triangle_named(backend, rng):
    a = symmetric(rng, 6, np.float64)
    lower = np.tril(a) + np.triu(np.full((6, 6), np.nan), 1)
    upper = np.triu(a) + np.tril(np.full((6, 6), np.nan), -1)
    want = np.linalg.eigvalsh(a)
    assert np.allclose(backend.eigvalsh(lower), want, atol=1e-12)
    assert np.allclose(backend.eigvalsh(upper, UPLO="U"), want, atol=1e-12)
    with pytest.raises(ValueError):
        backend.eigvalsh(lower, UPLO="U")
    with pytest.raises(ValueError):
        backend.eigh(a, UPLO="X")


@pytest.mark.parametrize("shape", [(30, 12), (12, 30), (16, 16)])
def test_svd_matches_numpy(backend, dtype, rng, shape):
    a = rng.standard_normal(shape).astype(dtype)
    m, n = shape
    k = min(m, n)
    u = eps(dtype)
    norm = np.linalg.norm(f64(a), 2)
    want = np.linalg.svd(f64(a), compute_uv=False)
    for full in (False, True):
        U, S, Vh = backend.svd(a, full_matrices=full)
        assert (U.shape, S.shape, Vh.shape) == (
            ((m, m), (k,), (n, n)) if full else ((m, k), (k,), (k, n))
        )
        U64, S64, Vh64 = f64(U), f64(S), f64(Vh)
        rec = U64[:, :k] * S64 @ Vh64[:k]
        assert np.linalg.norm(f64(a) - rec, 1) / (norm * max(m, n) * u) < 10
        assert np.linalg.norm(U64.T @ U64 - np.eye(U64.shape[1]), 1) / (m * u) < 10
        assert np.linalg.norm(Vh64 @ Vh64.T - np.eye(Vh64.shape[0]), 1) / (n * u) < 10
        assert np.all(np.abs(S64 - want) <= 10 * max(m, n) * u * norm)
    s = backend.svd(a, compute_uv=False)
    assert np.array_equal(s, backend.svdvals(a))
    assert np.all(np.diff(f64(s)) <= 0)


def test_stacks_and_resident_operands(backend, rng):
    a = rng.standard_normal((3, 8, 5))
    U, S, Vh = backend.svd(a, full_matrices=False)
    assert (U.shape, S.shape, Vh.shape) == ((3, 8, 5), (3, 5), (3, 5, 5))
    assert np.allclose(U * S[:, None, :] @ Vh, a, atol=1e-12)
    sym = a[:, :5, :] + np.swapaxes(a[:, :5, :], 1, 2)
    assert backend.eigvalsh(sym).shape == (3, 5)
    ra = backend.asarray(a[0])
    U, S, Vh = backend.svd(ra, full_matrices=False)
    assert isinstance(S, ndgpu.Array) and S.shape == (5, 1)
    assert np.allclose(U.numpy() * S.numpy()[:, 0] @ Vh.numpy(), a[0], atol=1e-12)
    w = backend.eigvalsh(backend.asarray(sym[0]))
    assert np.allclose(w.numpy()[:, 0], np.linalg.eigvalsh(sym[0]), atol=1e-12)


def test_bad_input(backend):
    with pytest.raises(ValueError):
        backend.eigh(np.ones((2, 3)))
    with pytest.raises(ValueError):
        backend.svd(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError):
        backend.svd(np.ones(3))
    assert backend.svdvals(np.zeros((0, 3))).shape == (0,)


def test_module_functions_take_numpy_names():
    a = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert np.allclose(ndgpu.linalg.eigvalsh(a), [1.0, 3.0])
    assert np.allclose(ndgpu.linalg.svdvals(a), [3.0, 1.0])
    r = ndgpu.linalg.eigh(a)
    assert np.allclose(np.abs(r.eigenvectors), np.sqrt(0.5))


def data(rng, n, d, dtype):
    scales = np.geomspace(10.0, 0.1, d)
    return (rng.standard_normal((n, d)) * scales @ np.linalg.qr(rng.standard_normal((d, d)))[0] + 5.0).astype(dtype)


@pytest.mark.parametrize("n,d,k,solver", [(2000, 8, 3, "covariance_eigh"), (40, 30, 5, "full")])
def test_pca_matches_scikit_learn(backend, dtype, rng, n, d, k, solver):
    x = data(rng, n, d, dtype)
    ours = PCA(k, backend=backend).fit(x)
    ref = SkPCA(k, svd_solver=solver).fit(x.astype(np.float64))
    u = eps(dtype)
    assert ours.components_.shape == (k, d) and ours.components_.dtype == dtype
    # Bounds from perturbation theory, the f64 reference's own error negligible. Both
    # paths compute the covariance (X − μ)ᵀ(X − μ)/(n − 1), or its factor X − μ, to an
    # error ‖ΔC‖₂ ≤ n·u·‖X − μ‖_F²/(n − 1) = n·u·Σλ (γ_n per sum of n products, taken
    # in norm). Weyl: each variance moves by at most ‖ΔC‖₂; Davis–Kahan: each component
    # turns by at most ‖ΔC‖₂ over its gap to the other variances, the smallest of which
    # is `gap` (svd_flip fixes the signs, so the angle bounds each entry's error).
    lam = SkPCA(svd_solver="full").fit(x.astype(np.float64)).explained_variance_
    delta_c = n * u * lam.sum()
    gap = min(lam[i] - lam[i + 1] for i in range(min(k, len(lam) - 1)))
    comp_bound = delta_c / gap
    assert np.allclose(f64(ours.components_), ref.components_, rtol=0, atol=comp_bound)
    assert np.allclose(f64(ours.explained_variance_), ref.explained_variance_, rtol=0, atol=delta_c)
    # Each ratio λᵢ/Σλ: |Δλᵢ|/Σλ + λᵢ·|ΔΣλ|/(Σλ)² ≤ ‖ΔC‖₂/Σλ + d·‖ΔC‖₂/Σλ.
    ratio_bound = (1 + d) * delta_c / lam.sum()
    assert np.allclose(f64(ours.explained_variance_ratio_), ref.explained_variance_ratio_, rtol=0, atol=ratio_bound)
    mean_bound = n * u * np.abs(x).max()
    assert np.allclose(f64(ours.mean_), ref.mean_, rtol=0, atol=mean_bound)
    # The mean of the d − k other variances: each within ‖ΔC‖₂.
    assert np.isclose(ours.noise_variance_, ref.noise_variance_, rtol=0, atol=delta_c)
    t = ours.transform(x)
    assert t.shape == (n, k)
    # (x − μ)·vᵀ: the centred row (norm at most √d·max|x − μ|, off by √d·(mean_bound +
    # u·max|x|)) against a component off by at most comp_bound per entry, √d·comp_bound
    # in norm; d products summed: d·u.
    row = np.sqrt(d) * np.abs(x.astype(np.float64) - ref.mean_).max()
    t_bound = row * np.sqrt(d) * comp_bound + np.sqrt(d) * (mean_bound + u * np.abs(x).max()) + d * u * row
    assert np.allclose(f64(t), ref.transform(x.astype(np.float64)), rtol=0, atol=t_bound)
    back = ours.inverse_transform(t)
    assert back.shape == x.shape


def test_pca_refuses_what_it_does_not_do(backend):
    x = np.random.default_rng(0).standard_normal((50, 4))
    for bad in (PCA(0.9), PCA("mle"), PCA(5), PCA(2, whiten=True), PCA(2, svd_solver="full")):
        bad.backend = backend
        with pytest.raises(ValueError):
            bad.fit(x)
    x[3, 2] = np.inf
    with pytest.raises(ValueError):
        PCA(2, backend=backend).fit(x)


def test_pca_resident(backend, rng):
    x = data(rng, 500, 6, np.float64)
    p = PCA(2, backend=backend).fit(backend.asarray(x))
    q = PCA(2, backend=backend).fit(x)
    assert np.allclose(p.components_, q.components_, atol=1e-10)


EXPECTED_FAILURES = {}


def test_check_estimator():
    check_estimator(PCA(), expected_failed_checks=EXPECTED_FAILURES)
