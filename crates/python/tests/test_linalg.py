"""Factorizations and solves against NumPy and SciPy. Each is checked by the ratio
LAPACK's own test suite checks (its threshold 30, from the backward error analysis of
the algorithm): for a solve ‖b − A·x‖ / (n·ε·‖A‖·‖x‖), for a factorization
‖A − factors‖ / (n·ε·‖A‖), for Q's orthogonality ‖I − QᵀQ‖ / (m·ε)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

import ndgpu
from conftest import eps, f64

THRESH = 30.0


def solve_ratio(a, x, b, dtype):
    a, x, b = f64(a), f64(x), f64(b)
    x2 = x.reshape(len(x), -1)
    b2 = b.reshape(len(b), -1)
    n = a.shape[0]
    r = np.linalg.norm(b2 - a @ x2, 1)
    return r / (n * eps(dtype) * np.linalg.norm(a, 1) * max(np.linalg.norm(x2, 1), 1e-300))


def spd(rng, n, dtype):
    m = rng.standard_normal((n, n))
    return (m @ m.T + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("n", [1, 5, 40])
def test_cholesky_backward_error(backend, dtype, rng, n):
    a = spd(rng, n, dtype)
    l = backend.cholesky(a)
    assert l.dtype == dtype and np.array_equal(l, np.tril(l))
    ratio = np.linalg.norm(f64(l) @ f64(l).T - f64(a), 1) / (n * eps(dtype) * np.linalg.norm(f64(a), 1))
    assert ratio < THRESH
    u = backend.cholesky(a, upper=True)
    assert np.allclose(u, l.T, rtol=0, atol=10 * n * eps(dtype) * np.abs(l).max())


def test_cholesky_reads_only_the_lower_triangle(backend, rng):
    a = spd(rng, 6, np.float64)
    junk = a + np.triu(np.full((6, 6), 1e6), 1)
    assert np.array_equal(backend.cholesky(junk), backend.cholesky(a))
    assert np.allclose(backend.cholesky(a), np.linalg.cholesky(a), atol=1e-12)


@pytest.mark.parametrize("assume_a", ["gen", "pos", None, "sym"])
@pytest.mark.parametrize("nrhs", [None, 1, 4])
def test_solve_residual(backend, dtype, rng, assume_a, nrhs):
    n = 30
    a = spd(rng, n, dtype)
    b = rng.standard_normal(n if nrhs is None else (n, nrhs)).astype(dtype)
    x = backend.solve(a, b, assume_a=assume_a)
    assert x.shape == b.shape and x.dtype == dtype
    assert solve_ratio(a, x, b, dtype) < THRESH
    ref = sla.solve(f64(a), f64(b))
    # Forward error ≤ κ(A)·(backward error): κ of these SPD matrices is small.
    kappa = np.linalg.cond(f64(a), 1)
    assert np.linalg.norm(f64(x) - ref) <= THRESH * n * eps(dtype) * kappa * np.linalg.norm(ref)


def test_solve_general_and_transposed(backend, rng):
    a = rng.standard_normal((25, 25))
    b = rng.standard_normal((25, 3))
    assert solve_ratio(a, backend.solve(a, b), b, np.float64) < THRESH
    xt = backend.solve(a, b, transposed=True)
    assert solve_ratio(a.T, xt, b, np.float64) < THRESH
    stack = rng.standard_normal((3, 6, 6))
    rhs = rng.standard_normal((3, 6, 2))
    xs = backend.solve(stack, rhs)
    for i in range(3):
        assert solve_ratio(stack[i], xs[i], rhs[i], np.float64) < THRESH


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, "T", "C"])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_scipy(backend, dtype, rng, lower, trans, unit):
    n = 20
    a = (rng.standard_normal((n, n)) + 4 * n * np.eye(n)).astype(dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    x = backend.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
    t = np.tril(f64(a)) if lower else np.triu(f64(a))
    if unit:
        np.fill_diagonal(t, 1.0)
    op = t if trans in (0, "N") else t.T
    assert solve_ratio(op, x, b, dtype) < THRESH
    ref = sla.solve_triangular(f64(a), f64(b), trans=trans, lower=lower, unit_diagonal=unit)
    assert np.allclose(f64(x), ref, rtol=THRESH * n * eps(dtype), atol=THRESH * n * eps(dtype) * np.abs(ref).max())
    v = backend.solve_triangular(a, b[:, 0], lower=lower)
    assert v.shape == (n,)


@pytest.mark.parametrize("shape", [(6, 6), (9, 4), (4, 9), (1, 1)])
def test_lu_as_scipy(backend, dtype, rng, shape):
    a = rng.standard_normal(shape).astype(dtype)
    p, l, u = backend.lu(a)
    m, n = shape
    k = min(m, n)
    assert p.shape == (m, m) and l.shape == (m, k) and u.shape == (k, n)
    assert set(np.unique(p)) <= {0.0, 1.0} and np.all(p.sum(0) == 1) and np.all(p.sum(1) == 1)
    assert np.allclose(np.diag(l), 1) and np.all(np.abs(l) <= 1) and np.array_equal(l, np.tril(l))
    assert np.array_equal(u, np.triu(u))
    ratio = np.linalg.norm(f64(p) @ f64(l) @ f64(u) - f64(a), 1) / (max(m, n) * eps(dtype) * np.linalg.norm(f64(a), 1))
    assert ratio < THRESH
    # Partial pivoting picks the same pivots as LAPACK (no ties in random data).
    sp, sl, su = sla.lu(f64(a))
    assert np.array_equal(f64(p), sp)
    pl, u2 = backend.lu(a, permute_l=True)
    assert np.allclose(f64(pl), f64(p) @ f64(l))
    pi, l3, _ = backend.lu(a, p_indices=True)
    assert np.allclose(f64(l3)[pi] @ f64(u), f64(a), atol=THRESH * k * eps(dtype) * np.abs(f64(a)).max() * k)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (6, 6)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_as_numpy(backend, dtype, rng, shape, mode):
    a = rng.standard_normal(shape).astype(dtype)
    m, n = shape
    out = backend.qr(a, mode=mode)
    ref = np.linalg.qr(f64(a), mode=mode)
    if mode == "r":
        r = out
        assert r.shape == ref.shape
        # R is unique up to the signs of its rows.
        assert np.allclose(np.abs(f64(r)), np.abs(ref), atol=THRESH * m * eps(dtype) * np.abs(ref).max())
        return
    q, r = out
    assert q.shape == ref[0].shape and r.shape == ref[1].shape
    assert np.array_equal(r, np.triu(r))
    e = eps(dtype)
    assert np.linalg.norm(f64(q) @ f64(r) - f64(a), 1) / (m * e * np.linalg.norm(f64(a), 1)) < THRESH
    qtq = f64(q).T @ f64(q)
    assert np.linalg.norm(qtq - np.eye(qtq.shape[0]), 1) / (m * e) < THRESH


def test_lstsq_as_numpy(backend, dtype, rng):
    m, n = 40, 6
    a = rng.standard_normal((m, n)).astype(dtype)
    b = rng.standard_normal((m, 2)).astype(dtype)
    x, res, rank, s = backend.lstsq(a, b)
    rx, rres, rrank, rs = np.linalg.lstsq(f64(a), f64(b), rcond=None)
    assert x.shape == rx.shape and res.shape == rres.shape and rank == rrank and s.shape == rs.shape
    e = eps(dtype)
    # Normal equations: ‖Aᵀ(b − Ax)‖ ≤ c·m·ε·‖A‖·(‖A‖·‖x‖ + ‖b‖).
    an = np.linalg.norm(f64(a), 1)
    r = f64(b) - f64(a) @ f64(x)
    ratio = np.linalg.norm(f64(a).T @ r, 1) / (m * e * an * (an * np.linalg.norm(f64(x), 1) + np.linalg.norm(f64(b), 1)))
    assert ratio < THRESH
    assert np.allclose(res, rres, rtol=THRESH * m * e)
    assert np.allclose(s, rs, rtol=THRESH * m * e)
    xv, resv, _, _ = backend.lstsq(a, b[:, 0])
    assert xv.shape == (n,) and resv.shape == (1,)


def test_det_slogdet_inv(backend, dtype, rng):
    n = 12
    a = (rng.standard_normal((n, n)) + n * np.eye(n)).astype(dtype)
    e = eps(dtype)
    kappa = np.linalg.cond(f64(a), 1)
    d = backend.det(a)
    assert d.dtype == dtype
    ref = np.linalg.det(f64(a))
    assert abs(float(d) - ref) <= THRESH * n * e * kappa * abs(ref)
    sign, logdet = backend.slogdet(a)
    rsign, rlog = np.linalg.slogdet(f64(a))
    assert sign == rsign and abs(float(logdet) - rlog) <= THRESH * n * e * kappa
    inv = backend.inv(a)
    assert inv.dtype == dtype
    ratio = np.linalg.norm(np.eye(n) - f64(a) @ f64(inv), 1) / (n * e * np.linalg.norm(f64(a), 1) * np.linalg.norm(f64(inv), 1))
    assert ratio < THRESH
    stack = np.stack([f64(a), 2 * f64(a)])
    assert np.allclose(backend.det(stack), np.linalg.det(stack), rtol=1e-10)
    assert np.allclose(backend.inv(stack), np.linalg.inv(stack), rtol=1e-10, atol=1e-14)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert backend.det(singular) == 0.0
    assert tuple(backend.slogdet(singular)) == (0.0, -np.inf)
    assert backend.det(np.zeros((0, 0))) == 1.0


def test_linalg_module_functions(rng):
    a = spd(rng, 8, np.float64)
    b = rng.standard_normal(8)
    assert np.allclose(ndgpu.linalg.solve(a, b, assume_a="pos"), np.linalg.solve(a, b))
    assert np.allclose(ndgpu.linalg.inv(a), np.linalg.inv(a))
    assert np.isclose(ndgpu.linalg.det(a), np.linalg.det(a))
    assert np.allclose(ndgpu.linalg.cholesky(a), np.linalg.cholesky(a))
    q, r = ndgpu.linalg.qr(a)
    assert np.allclose(q @ r, a)
    p, l, u = ndgpu.linalg.lu(a)
    assert np.allclose(p @ l @ u, a)
    assert np.allclose(ndgpu.linalg.lstsq(a, b)[0], np.linalg.solve(a, b))
    assert np.allclose(ndgpu.linalg.solve_triangular(a, b, lower=True), sla.solve_triangular(a, b, lower=True))
    assert ndgpu.linalg.slogdet(a).sign == 1.0
