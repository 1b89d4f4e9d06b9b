"""Products, transposes and reductions against NumPy, with bounds from the error
analysis of each (Higham, *Accuracy and Stability of Numerical Algorithms*): a sum of
n terms in any order is within (n−1)·u·Σ|terms| of the exact one (§4.2), so a product
C = A·B of inner dimension k within k·u·(|A|·|B|) elementwise (§3.5)."""

from __future__ import annotations

import numpy as np
import pytest

import ndgpu
from conftest import eps, f64


def product_bound(a, b, dtype):
    k = a.shape[-1] if a.ndim else 1
    return 2 * max(k, 1) * eps(dtype) * (np.abs(f64(a)) @ np.abs(f64(b)))


@pytest.mark.parametrize("shape", [(7, 5, 3), (1, 1, 1), (64, 33, 17), (0, 4, 3), (3, 0, 2)])
def test_matmul_matches_numpy_within_the_product_bound(backend, dtype, rng, shape):
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = backend.matmul(a, b)
    assert c.dtype == dtype and c.shape == (m, n)
    assert np.all(np.abs(f64(c) - f64(a) @ f64(b)) <= product_bound(a, b, dtype))


def test_matmul_takes_any_memory_order(backend, rng):
    a = rng.standard_normal((9, 6))
    big = rng.standard_normal((14, 20))
    operands = [
        big[:6, :9],  # a strided window
        np.asfortranarray(big[:6, :9]),  # column-major
        big[::2, ::2][:6, :9],  # every other row and column
        big[::-1, ::-1][:6, :9],  # negative strides
        big[:9, :6].T,  # a transposed view
    ]
    for x in (a, np.asfortranarray(a), a[::-1][::-1]):
        for y in operands:
            assert y.shape == (6, 9)
            got = backend.matmul(x, y)
            assert np.all(np.abs(got - x @ y) <= product_bound(x, y, np.float64))


def test_matmul_vectors_and_stacks_follow_numpy(backend, rng):
    a = rng.standard_normal((4, 3))
    v = rng.standard_normal(3)
    w = rng.standard_normal(4)
    assert backend.matmul(a, v).shape == (4,)
    assert np.allclose(backend.matmul(a, v), a @ v)
    assert backend.matmul(w, a).shape == (3,)
    assert np.allclose(backend.matmul(w, a), w @ a)
    s = backend.matmul(v, v)
    assert np.ndim(s) == 0 and np.isclose(s, v @ v)
    stack = rng.standard_normal((2, 5, 4, 3))
    assert np.allclose(backend.matmul(stack, v), stack @ v)
    assert np.allclose(backend.matmul(stack, a.T), stack @ a.T)
    with pytest.raises(ValueError):
        backend.matmul(np.float64(2.0), a)


def test_integers_compute_in_float64_and_float32_stays_float32(backend):
    i = np.arange(6).reshape(2, 3)
    assert backend.matmul(i, i.T).dtype == np.float64
    assert np.array_equal(backend.matmul(i, i.T), (i @ i.T).astype(np.float64))
    f = i.astype(np.float32)
    assert backend.matmul(f, f.T).dtype == np.float32
    assert backend.matmul(f, i.T.astype(np.float64)).dtype == np.float64


def test_dot_and_gram_and_transpose(backend, dtype, rng):
    x = rng.standard_normal(100).astype(dtype)
    y = rng.standard_normal(100).astype(dtype)
    d = backend.dot(x, y)
    assert d.dtype == dtype
    assert abs(float(d) - f64(x) @ f64(y)) <= 2 * 100 * eps(dtype) * np.sum(np.abs(f64(x) * f64(y)))
    a = rng.standard_normal((8, 5)).astype(dtype)
    g = backend.gram(a)
    assert g.shape == (8, 8) and np.array_equal(g, g.T)
    assert np.all(np.abs(f64(g) - f64(a) @ f64(a).T) <= product_bound(a, a.T, dtype))
    assert np.array_equal(backend.transpose(a), a.T)
    assert backend.transpose(a).flags.c_contiguous
    assert np.allclose(backend.dot(a, a.T), f64(a) @ f64(a).T, rtol=0, atol=1e-4)
    with pytest.raises(ValueError):
        backend.dot(x, y[:50])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
def test_reductions_match_numpy(backend, dtype, rng, axis):
    a = rng.standard_normal((13, 7)).astype(dtype)
    s = backend.sum(a, axis=axis)
    ref = np.sum(f64(a), axis=axis)
    n = a.size if axis is None else a.shape[axis]
    bound = 2 * n * eps(dtype) * np.sum(np.abs(f64(a)), axis=axis)
    assert np.all(np.abs(f64(s) - ref) <= bound)
    assert np.asarray(s).dtype == dtype
    for name in ("min", "max", "argmin", "argmax"):
        got = getattr(backend, name)(a, axis=axis)
        want = getattr(np, name)(a, axis=axis)
        assert np.array_equal(got, want), name
        assert np.asarray(got).dtype == np.asarray(want).dtype, name


def test_reductions_of_vectors_ties_and_keepdims(backend):
    v = np.array([3.0, 1.0, 1.0, 5.0, 5.0])
    assert backend.argmin(v) == 1 and backend.argmax(v) == 3
    assert backend.argmin(v, axis=0) == 1
    assert backend.sum(v) == 15.0
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert backend.sum(m, axis=0, keepdims=True).shape == (1, 2)
    assert backend.sum(m, axis=1, keepdims=True).shape == (2, 1)
    assert np.array_equal(backend.sum(m, axis=1, keepdims=True), np.sum(m, axis=1, keepdims=True))
    assert backend.sum(np.zeros((0, 3))) == 0.0
    assert np.array_equal(backend.sum(np.zeros((0, 3)), axis=0), np.zeros(3))
    with pytest.raises(ValueError):
        backend.min(np.zeros((0, 3)))
    with pytest.raises(ValueError):
        backend.sum(m, axis=2)


def test_module_functions_use_the_default_backend(rng):
    a = rng.standard_normal((5, 4))
    assert np.allclose(ndgpu.matmul(a, a.T), a @ a.T)
    assert np.isclose(ndgpu.sum(a), a.sum())
    assert ndgpu.argmax(a) == np.argmax(a)
    assert np.array_equal(ndgpu.min(a, axis=0), a.min(axis=0))
    assert np.array_equal(ndgpu.transpose(a), a.T)
    assert np.allclose(ndgpu.gram(a), a @ a.T)
    assert np.isclose(ndgpu.dot(a[0], a[1]), a[0] @ a[1])


def test_odd_layouts_and_dtypes(backend, rng):
    a = rng.standard_normal((5, 4))
    big_endian = a.astype(">f8")
    assert np.array_equal(backend.matmul(big_endian, a.T), a @ a.T)
    broadcast = np.broadcast_to(rng.standard_normal(4), (5, 4))  # zero row stride
    assert np.allclose(backend.matmul(broadcast, a.T), broadcast @ a.T)
    raw = np.zeros(5 * 4 * 8 + 1, dtype=np.uint8)[1:].view(np.float64).reshape(5, 4)
    raw[...] = a  # unaligned
    assert not raw.flags.aligned
    assert np.allclose(backend.matmul(raw, a.T), a @ a.T)
    assert backend.matmul(a.astype(np.float16), a.T.astype(np.float16)).dtype == np.float32
    b = a > 0
    assert np.array_equal(backend.matmul(b, b.T), (b.astype(float) @ b.T.astype(float)))
    readonly = a.copy()
    readonly.flags.writeable = False
    assert np.allclose(backend.matmul(readonly, a.T), a @ a.T)
