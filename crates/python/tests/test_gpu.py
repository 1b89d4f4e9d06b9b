"""The GPU backends agree with the CPU reference (skipped, with the reason, on a
machine where no GPU backend opens)."""

from __future__ import annotations

import numpy as np
import pytest

import ndgpu
from conftest import eps, f64, gpu_backends

pytestmark = pytest.mark.gpu


def gpu_names():
    ok, _ = gpu_backends()
    return ok or ["cuda"]


@pytest.fixture(params=gpu_names())
def gpu(request):
    return ndgpu.backend(request.param)


def test_gpu_matmul_and_solve_match_the_cpu(gpu, rng):
    a = rng.standard_normal((64, 48))
    b = rng.standard_normal((48, 32))
    c = gpu.matmul(a, b)
    assert np.all(np.abs(c - a @ b) <= 2 * 48 * eps(np.float64) * (np.abs(a) @ np.abs(b)))
    spd = a.T @ a + 48 * np.eye(48)
    x = gpu.solve(spd, b, assume_a="pos")
    r = np.linalg.norm(b - spd @ x, 1) / (48 * eps(np.float64) * np.linalg.norm(spd, 1) * np.linalg.norm(x, 1))
    assert r < 30


def test_gpu_resident_chain_and_errors(gpu, rng):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    ra = gpu.asarray(a)
    assert ra.__dlpack_device__()[0] == 2
    g = gpu.gram(ra)
    assert isinstance(g, ndgpu.Array)
    assert np.allclose(g.numpy(), f64(a) @ f64(a).T, rtol=1e-4, atol=1e-3)
    with pytest.raises(ndgpu.LinAlgError):
        gpu.cholesky(gpu.asarray(-np.eye(4)))
    with pytest.raises(ValueError):
        ndgpu.backend("cpu").matmul(ra, ra)  # an array of another place


def test_gpu_spectra_and_pca_match_numpy_and_the_cpu(gpu, rng):
    from ndgpu.decomposition import PCA

    a = rng.standard_normal((300, 24))
    n, u = 300, eps(np.float64)
    s = gpu.svdvals(a)
    norm = np.linalg.norm(a, 2)
    assert np.all(np.abs(s - np.linalg.svd(a, compute_uv=False)) <= 10 * n * u * norm)
    U, S, Vh = gpu.svd(gpu.asarray(a), full_matrices=False)
    assert np.linalg.norm(a - f64(U) * f64(S)[:, 0] @ f64(Vh), 1) <= 10 * n * u * norm * 24
    sym = a.T @ a
    w, v = gpu.eigh(sym)
    assert np.linalg.norm(sym @ v - v * w, 1) <= 10 * 24 * u * np.linalg.norm(sym, 1) * 24
    p = PCA(4, backend=gpu).fit(a)
    q = PCA(4, backend="cpu").fit(a)
    assert np.allclose(p.components_, q.components_, atol=1e3 * n * u)
    assert np.allclose(p.explained_variance_, q.explained_variance_, rtol=1e3 * n * u)
