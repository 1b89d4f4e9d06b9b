"""ndgpu.cluster.KMeans's input: plain float32/float64 NumPy arrays skip scikit-learn's
validation pass over the data (the compiled code refuses NaN and ±Inf itself), and give
what the validated path gives; NaN and ±Inf still raise scikit-learn's errors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import sklearn.utils.validation as skv
from sklearn.datasets import make_blobs

import ndgpu.cluster as cluster
from ndgpu.cluster import KMeans

NAN = "Input X contains NaN."


def inf(dtype) -> str:
    return f"Input X contains infinity or a value too large for {np.dtype(dtype)!r}."


@pytest.fixture(params=["cpu", "faer"])
def name(request):
    return request.param


def points(dtype, n=400, d=6, k=4):
    x, _ = make_blobs(n_samples=n, centers=k, n_features=d, random_state=1, cluster_std=1.0)
    return x.astype(dtype)


def fitted(name, x, k=4):
    start = np.asarray(x, dtype=np.float64)[:k]
    return KMeans(k, init=start, n_init=1, backend=name).fit(x)


def same_fit(a: KMeans, b: KMeans) -> None:
    assert np.array_equal(a.labels_, b.labels_)
    assert a.cluster_centers_.dtype == b.cluster_centers_.dtype
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.inertia_ == b.inertia_ and a.n_iter_ == b.n_iter_
    assert a.n_features_in_ == b.n_features_in_
    assert not hasattr(a, "feature_names_in_") and not hasattr(b, "feature_names_in_")


@pytest.fixture
def full_checks(monkeypatch):
    """Counts the calls of validate_data that check the data (rather than only its
    feature names and count)."""
    calls = []
    real = cluster._validate_data

    def counted(est, X, **kw):
        if not kw.get("skip_check_array", False):
            calls.append(type(X).__name__)
        return real(est, X, **kw)

    monkeypatch.setattr(cluster, "_validate_data", counted)
    return calls


def test_plain_arrays_give_what_validated_input_gives(name, full_checks):
    x = points(np.float64)
    fast = fitted(name, x)
    assert full_checks == []
    same_fit(fast, fitted(name, np.asfortranarray(x)))
    assert full_checks == []
    # A list and a non-contiguous view are validated (float64 both), as before.
    same_fit(fast, fitted(name, x.tolist()))
    wide = np.repeat(x, 2, axis=1)[:, ::2]
    same_fit(fast, fitted(name, wide))
    assert full_checks == ["list", "ndarray"]
    x32 = x.astype(np.float32)
    same_fit(fitted(name, x32), fitted(name, np.repeat(x32, 2, axis=1)[:, ::2]))
    # float16 is validated into float64: as the float64 array of the same values.
    x16 = x.astype(np.float16)
    same_fit(fitted(name, x16.astype(np.float64)), fitted(name, x16))
    del full_checks[:]
    for ask in (x, np.asfortranarray(x)):
        assert np.array_equal(fast.predict(ask), fast.labels_)
        assert fast.score(ask) == fast.score(x.tolist())
        assert np.array_equal(fast.fit_predict(ask), fast.labels_)
    assert np.array_equal(fast.transform(x), fast.transform(x.tolist()))
    # F order sums the products in another order, as it did when validated.
    assert np.allclose(fast.transform(np.asfortranarray(x)), fast.transform(x), rtol=1e-12)
    assert full_checks == ["list"] * 3


def test_plain_arrays_skip_the_validation_pass(name, monkeypatch):
    def no_pass(*args, **kw):
        raise AssertionError("a host pass over X")

    real = cluster._validate_data

    def only_names(est, X, **kw):
        if not kw.get("skip_check_array", False):
            no_pass()
        return real(est, X, **kw)

    monkeypatch.setattr(cluster, "_validate_data", only_names)
    monkeypatch.setattr(skv, "check_array", no_pass)
    monkeypatch.setattr(skv, "_assert_all_finite", no_pass)
    for dtype in (np.float32, np.float64):
        x = points(dtype)
        for ask in (x, np.asfortranarray(x)):
            km = fitted(name, ask)
            assert km.n_features_in_ == x.shape[1] and km.cluster_centers_.dtype == dtype
            assert np.array_equal(km.predict(ask), km.labels_)
            assert km.transform(ask).shape == (len(x), 4)
            assert np.isclose(km.score(ask), -km.inertia_)
            assert np.array_equal(km.fit_predict(ask), km.labels_)
    # The patches bite: a list is validated.
    with pytest.raises(AssertionError, match="a host pass over X"):
        fitted(name, points(np.float64).tolist())


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nan_and_inf_raise_scikit_learns_errors(name, dtype, bad, order):
    message = NAN if np.isnan(bad) else inf(dtype)
    x = points(dtype)
    km = fitted(name, x)
    y = np.array(x, order=order)
    y[137, 3] = bad
    for init in ("k-means++", "random", "k-means||", x[:4]):
        with pytest.raises(ValueError, match=re.escape(message)):
            KMeans(4, init=init, n_init=1, backend=name).fit(y)
    with pytest.raises(ValueError, match=re.escape(message)):
        KMeans(4, backend=name).fit_predict(y)
    for method in (km.predict, km.transform, km.score, km.fit_transform):
        with pytest.raises(ValueError, match=re.escape(message)):
            method(y)
    # A NaN anywhere is reported, as scikit-learn does, even after another bad value.
    y[0, 0], y[200, 1] = bad, np.nan
    with pytest.raises(ValueError, match=re.escape(NAN)):
        KMeans(4, backend=name).fit(y)


def test_feature_names_and_counts_are_kept(name):
    x = points(np.float64)
    frame = pd.DataFrame(x, columns=[f"f{i}" for i in range(x.shape[1])])
    km = fitted(name, frame)
    assert list(km.feature_names_in_) == list(frame.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        assert np.array_equal(km.predict(x), km.labels_)
    km.fit(x)
    assert not hasattr(km, "feature_names_in_") and km.n_features_in_ == x.shape[1]
    expect = f"X has 5 features, but KMeans is expecting {x.shape[1]} features as input"
    for method in (km.predict, km.transform, km.score):
        with pytest.raises(ValueError, match=expect):
            method(x[:, :5].copy())
    # A plain array of the other dtype is validated into the centroids' dtype.
    x32 = x.astype(np.float32)
    assert np.array_equal(km.predict(x32), km.predict(x32.tolist()))
    with pytest.raises(ValueError, match="0 sample"):
        KMeans(2, backend=name).fit(np.empty((0, 3)))
