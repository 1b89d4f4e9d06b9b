"""Backends from Python: listing, opening, variants and precisions."""

from __future__ import annotations

import copy
import pickle

import numpy as np

import ndgpu


def test_backends_lists_what_runs_here_and_why_not():
    listed = ndgpu.backends()
    names = [b["name"] for b in listed]
    assert names[-1] == "cpu" and "faer" in names
    for b in listed:
        assert ("description" in b) == b["available"]
        assert ("reason" in b) != b["available"]
        assert isinstance(b["variants"], dict)
    assert {"cpu", "faer"} <= {b["name"] for b in listed if b["available"]}


def test_variants_info_and_selection(backend):
    v = backend.variants()
    assert "matmul" in v and all(isinstance(n, list) and n for n in v.values())
    info = backend.info()
    assert info["name"] == backend.name
    assert info["families"]["matmul"]["current"] == v["matmul"][0]
    assert info["families"]["matmul"]["precision"] == "ieee"
    for family, names in v.items():
        backend.set_variant(family, names[-1])
        assert backend.variant(family) == names[-1]
        backend.set_variant(family, names[0])
    backend.set_precision("matmul", "ieee")
    assert backend.variant("matmul") == v["matmul"][0]
    assert isinstance(backend.description(), str)


def test_auto_and_the_environment(monkeypatch):
    assert ndgpu.backend("auto").name in ndgpu._ndgpu.compiled_in()
    monkeypatch.setenv("NDGPU_BACKEND", "cpu")
    assert ndgpu.backend("auto").name == "cpu"


def test_backends_copy_and_pickle(backend):
    assert copy.deepcopy(backend) is backend
    again = pickle.loads(pickle.dumps(backend))
    assert again.name == backend.name
    assert np.allclose(again.matmul(np.eye(2), np.eye(2)), np.eye(2))


def test_default_backend_can_be_set():
    old = ndgpu.default_backend()
    try:
        assert ndgpu.set_default_backend("cpu").name == "cpu"
        assert ndgpu.default_backend().name == "cpu"
    finally:
        ndgpu.set_default_backend(old)
