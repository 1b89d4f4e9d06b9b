"""Shared fixtures: the CPU backends every machine has, and the GPU marker."""

from __future__ import annotations

import numpy as np
import pytest

import ndgpu

CPU_BACKENDS = ["cpu", "faer"]


def gpu_backends():
    """The GPU backends that open here, and why each other one does not."""
    ok, why = [], []
    for b in ndgpu.backends():
        if b["name"] in ("cuda", "cublas"):
            if b["available"]:
                ok.append(b["name"])
            else:
                why.append(f"{b['name']}: {b['reason']}")
    return ok, why


def pytest_collection_modifyitems(config, items):
    ok, why = gpu_backends()
    if ok:
        return
    reason = "no GPU backend opens here (" + ("; ".join(why) or "none compiled in") + ")"
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=CPU_BACKENDS)
def backend(request):
    """Each CPU backend in turn."""
    return ndgpu.backend(request.param)


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request):
    return np.dtype(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def eps(dtype) -> float:
    return float(np.finfo(dtype).eps)


def f64(x):
    """A host float64 copy (of a resident array too)."""
    if isinstance(x, ndgpu.Array):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)
