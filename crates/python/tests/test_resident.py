"""Resident arrays: made once, computed on, read back once."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import ndgpu


def test_asarray_shape_dtype_and_round_trip(backend, dtype, rng):
    a = rng.standard_normal((5, 3)).astype(dtype)
    r = backend.asarray(a)
    assert isinstance(r, ndgpu.Array)
    assert r.shape == (5, 3) and r.dtype == dtype and r.ndim == 2 and len(r) == 5
    assert r.backend is backend
    assert np.array_equal(r.numpy(), a)
    assert np.array_equal(np.asarray(r), a)
    assert np.asarray(r, dtype=np.float64).dtype == np.float64
    assert backend.asarray(r) is r
    assert ndgpu.asarray(np.asfortranarray(a), backend=backend).numpy().tolist() == a.tolist()
    assert backend.asarray([1, 2, 3]).shape == (1, 3)
    assert backend.asarray(a, dtype=np.float32).dtype == np.float32
    assert "Array" in repr(r)


def test_operations_on_resident_arrays_stay_resident(backend, rng):
    a = rng.standard_normal((6, 6))
    spd = a @ a.T + 6 * np.eye(6)
    b = rng.standard_normal((6, 2))
    ra, rs, rb = backend.asarray(a), backend.asarray(spd), backend.asarray(b)
    for got, want in [
        (backend.matmul(ra, rb), a @ b),
        (backend.gram(ra), a @ a.T),
        (backend.transpose(ra), a.T),
        (backend.cholesky(rs), np.linalg.cholesky(spd)),
        (backend.solve(rs, rb), np.linalg.solve(spd, b)),
        (backend.solve(rs, rb, assume_a="pos"), np.linalg.solve(spd, b)),
        (backend.inv(rs), np.linalg.inv(spd)),
        (backend.lstsq(ra, rb)[0], np.linalg.lstsq(a, b, rcond=None)[0]),
        (backend.solve_triangular(rs, rb, lower=True), np.linalg.solve(np.tril(spd), b)),
        (backend.sum(ra, axis=0), a.sum(axis=0, keepdims=True)),
        (backend.max(ra, axis=1), a.max(axis=1, keepdims=True)),
    ]:
        assert isinstance(got, ndgpu.Array)
        assert np.allclose(got.numpy(), want, atol=1e-10)
    assert np.isclose(backend.sum(ra), a.sum())
    assert backend.argmax(ra) == np.argmax(a)
    assert np.array_equal(backend.argmin(ra, axis=0), np.argmin(a, axis=0))
    assert np.isclose(backend.det(rs), np.linalg.det(spd))
    assert np.isclose(backend.slogdet(rs).logabsdet, np.linalg.slogdet(spd)[1])
    p, l, u = backend.lu(ra)
    assert isinstance(p, ndgpu.Array) and np.allclose(p.numpy() @ l.numpy() @ u.numpy(), a)
    q, r = backend.qr(ra)
    assert isinstance(q, ndgpu.Array) and np.allclose(q.numpy() @ r.numpy(), a)
    # A host operand beside a resident one is uploaded; the result is resident.
    assert isinstance(backend.matmul(ra, b), ndgpu.Array)
    # Module functions run on the operand's backend.
    assert isinstance(ndgpu.matmul(ra, rb), ndgpu.Array)
    assert isinstance(ndgpu.linalg.inv(rs), ndgpu.Array)


def test_resident_operands_of_mixed_dtypes_are_refused(backend):
    with pytest.raises(TypeError):
        backend.matmul(backend.asarray(np.eye(2, dtype=np.float32)), backend.asarray(np.eye(2)))


def test_dlpack_shares_host_memory(backend, rng):
    a = rng.standard_normal((4, 3))
    r = backend.asarray(a)
    assert r.__dlpack_device__() == (1, 0)
    v = np.from_dlpack(r)
    assert np.array_equal(v, a)
    del r
    assert np.array_equal(v, a)  # the capsule keeps the memory alive
    r2 = backend.asarray(a)
    # Two exports of one resident array are views of the same memory, not copies.
    assert np.shares_memory(np.from_dlpack(r2), np.asarray(r2, copy=False))
    assert not np.shares_memory(r2.numpy(), np.asarray(r2, copy=False))
    assert np.array_equal(np.asarray(r2, copy=False), a)


def test_the_gil_is_released_while_a_backend_computes(rng):
    # A product on the single-threaded reference backend that takes a while. This
    # thread stamps the time as fast as it can meanwhile: with the GIL released its
    # stamps cover the whole call; held, they could cover at most one switch interval
    # (5 ms) of it.
    cpu = ndgpu.backend("cpu")
    a = rng.standard_normal((900, 900))
    span, out = [], []

    def work():
        t0 = time.perf_counter()
        out.append(cpu.matmul(a, a))
        span.extend([t0, time.perf_counter()])

    t = threading.Thread(target=work)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    t0, t1 = span
    inside = [x for x in stamps if t0 < x < t1]
    assert t1 - t0 > 0.03, "the product was too quick to tell"
    assert inside and (max(inside) - min(inside)) / (t1 - t0) > 0.5
    assert np.allclose(out[0], a @ a)


def test_concurrent_calls_on_one_backend(backend, rng):
    a = rng.standard_normal((200, 200))
    out, errors = [], []

    def work():
        try:
            out.append(backend.matmul(a, a))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(out) == 4
    for c in out:
        assert np.allclose(c, a @ a)
