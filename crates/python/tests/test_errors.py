"""ndgpu's errors as the exceptions NumPy and SciPy users expect."""

from __future__ import annotations

import numpy as np
import pytest

import ndgpu


def test_shape_errors_are_value_errors(backend):
    with pytest.raises(ValueError, match="inner dimensions|shape"):
        backend.matmul(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError):
        backend.solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="square"):
        backend.inv(np.ones((2, 3)))
    with pytest.raises(ValueError):
        backend.cholesky(np.ones(3))
    with pytest.raises(ValueError):
        backend.lstsq(np.ones((2, 3)), np.ones(2))  # fewer rows than columns


def test_nan_and_inf_are_value_errors(backend):
    a = np.eye(3)
    a[1, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        backend.solve(a, np.ones(3))
    with pytest.raises(ValueError, match="non-finite"):
        backend.cholesky(a)


def test_not_positive_definite_names_the_pivot(backend):
    a = np.diag([4.0, 1.0, -2.0, 3.0])
    with pytest.raises(ndgpu.LinAlgError) as info:
        backend.cholesky(a)
    e = info.value
    assert isinstance(e, np.linalg.LinAlgError)
    assert e.pivot == 2 and e.value == -2.0 and e.op == "cholesky"
    assert "pivot 2" in str(e)
    with pytest.raises(np.linalg.LinAlgError):
        backend.solve(a, np.ones(4), assume_a="pos")


def test_singular_names_the_pivot(backend):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    with pytest.raises(ndgpu.LinAlgError) as info:
        backend.solve(a, np.ones(3))
    assert info.value.pivot is not None and "singular" in str(info.value)
    with pytest.raises(ndgpu.LinAlgError):
        backend.inv(a)
    with pytest.raises(ndgpu.LinAlgError) as info:
        backend.solve_triangular(np.diag([1.0, 0.0, 2.0]), np.ones(3), lower=True)
    assert info.value.pivot == 1


def test_rank_deficient_lstsq(backend):
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    with pytest.raises(ndgpu.LinAlgError) as info:
        backend.lstsq(a, np.ones(3))
    assert info.value.pivot == 1 and info.value.op == "lstsq"


def test_unknown_and_unavailable_backends():
    with pytest.raises(ValueError, match="unknown backend"):
        ndgpu.backend("tpu")
    for b in ndgpu.backends():
        if not b["available"]:
            with pytest.raises(RuntimeError) as info:
                ndgpu.backend(b["name"])
            assert b["reason"] in str(info.value)


def test_bad_arguments(backend):
    with pytest.raises(ValueError):
        backend.set_variant("matmul", "no-such-variant")
    with pytest.raises(ValueError):
        backend.set_variant("no-such-family", "x")
    with pytest.raises(ValueError):
        backend.set_precision("matmul", "fp8")
    with pytest.raises(TypeError):
        backend.matmul(np.ones((2, 2), dtype=complex), np.ones((2, 2)))
    with pytest.raises(ValueError):
        backend.qr(np.eye(2), mode="raw")
    with pytest.raises(ValueError):
        backend.solve(np.eye(2), np.ones(2), assume_a="banana")


def test_errors_never_crash_the_interpreter(backend):
    # Empty operands, zero-size results and huge shapes give results or exceptions.
    assert backend.matmul(np.ones((3, 0)), np.ones((0, 2))).tolist() == [[0.0, 0.0]] * 3
    assert backend.inv(np.zeros((0, 0))).shape == (0, 0)
    assert backend.cholesky(np.zeros((0, 0))).shape == (0, 0)
    with pytest.raises((MemoryError, ValueError)):
        backend.matmul(np.ones((1 << 20, 0)), np.ones((0, 1 << 20)))
