"""ndgpu.cluster.KMeans against scikit-learn's KMeans, and scikit-learn's own
estimator checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

import ndgpu
from ndgpu.cluster import KMeans

from conftest import eps


@pytest.fixture(params=["cpu", "faer"])
def name(request):
    return request.param


def blobs(dtype, n=600, k=4, d=5, seed=0):
    x, _ = make_blobs(n_samples=n, centers=k, n_features=d, random_state=seed, cluster_std=0.8)
    return x.astype(dtype)


def test_same_start_same_fixed_point_as_scikit_learn(name, dtype):
    x = blobs(dtype)
    init = x[[0, 150, 300, 450]].astype(np.float64)
    ours = KMeans(4, init=init, n_init=1, tol=0.0, backend=name).fit(x)
    ref = SkKMeans(4, init=init, n_init=1, tol=0.0, algorithm="lloyd").fit(x.astype(np.float64))
    assert np.array_equal(ours.labels_, ref.labels_)
    assert ours.cluster_centers_.dtype == dtype
    # A centroid is a mean of at most n points: each sum is within n·u·Σ|x| (§4.2).
    bound = 2 * len(x) * eps(dtype) * np.abs(x).max()
    assert np.all(np.abs(ours.cluster_centers_ - ref.cluster_centers_) <= bound)
    assert np.isclose(ours.inertia_, ref.inertia_, rtol=10 * x.size * eps(dtype))
    assert ours.n_features_in_ == 5 and ours.labels_.dtype == np.int32
    assert ours.n_iter_ >= 1


def test_finds_the_blobs_with_its_own_seeding(name):
    x, truth = make_blobs(n_samples=900, centers=3, n_features=4, random_state=3, cluster_std=0.5)
    km = KMeans(3, random_state=0, backend=name, n_init=3).fit(x)
    ref = SkKMeans(3, random_state=0, n_init=3).fit(x)
    assert np.isclose(km.inertia_, ref.inertia_, rtol=1e-6)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(truth, km.labels_) == 1.0
    assert np.array_equal(km.predict(x), km.labels_)
    assert np.array_equal(km.fit_predict(x), km.labels_)
    t = km.transform(x[:10])
    ref_t = np.linalg.norm(x[:10, None, :] - km.cluster_centers_[None], axis=2)
    assert np.allclose(t, ref_t, rtol=1e-7, atol=1e-7)
    assert np.isclose(km.score(x), -km.inertia_, rtol=1e-9)
    for init in ("random", "k-means||"):
        assert adjusted_rand_score(truth, KMeans(3, init=init, random_state=1, backend=name).fit(x).labels_) == 1.0


def test_random_state_makes_fits_reproducible(name):
    x = blobs(np.float64)
    a = KMeans(4, random_state=7, backend=name).fit(x)
    b = KMeans(4, random_state=7, backend=name).fit(x)
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)


def test_sample_weight(name):
    x = blobs(np.float64, n=200)
    init = x[[0, 50, 100, 150]]
    w = np.ones(len(x))
    a = KMeans(4, init=init, backend=name).fit(x, sample_weight=w)
    b = KMeans(4, init=init, backend=name).fit(x)
    assert np.array_equal(a.labels_, b.labels_)
    w2 = np.random.default_rng(0).uniform(0.5, 2.0, len(x))
    ours = KMeans(4, init=init, tol=0.0, backend=name).fit(x, sample_weight=w2)
    ref = SkKMeans(4, init=init, n_init=1, tol=0.0).fit(x, sample_weight=w2)
    assert np.allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10)
    assert np.isclose(ours.inertia_, ref.inertia_, rtol=1e-10)
    with pytest.raises(ValueError):
        KMeans(4, backend=name).fit(x, sample_weight=-w)


def test_empty_clusters_warn_as_scikit_learn(name):
    x = np.array([[0.0, 0.0]] * 5 + [[1.0, 1.0]] * 5)
    with pytest.warns(ConvergenceWarning, match="distinct clusters"):
        KMeans(3, init="random", random_state=0, backend=name).fit(x)


def test_parameter_errors(name):
    x = blobs(np.float64, n=20)
    with pytest.raises(ValueError, match="n_samples=20 should be >= n_clusters=30"):
        KMeans(30, backend=name).fit(x)
    with pytest.raises(ValueError):
        KMeans(2, init="nope", backend=name).fit(x)
    with pytest.raises(ValueError):
        KMeans(2, init=np.zeros((3, 5)), backend=name).fit(x)
    with pytest.raises(ValueError):
        KMeans(2, algorithm="dense", backend=name).fit(x)


def test_resident_input(name):
    b = ndgpu.backend(name)
    x = blobs(np.float64)
    init = x[[0, 150, 300, 450]]
    host = KMeans(4, init=init, backend=b).fit(x)
    dev = KMeans(4, init=init, backend=b).fit(b.asarray(x))
    assert np.array_equal(host.labels_, dev.labels_)
    assert np.array_equal(host.cluster_centers_, dev.cluster_centers_)
    assert np.array_equal(dev.predict(b.asarray(x)), host.labels_)


# scikit-learn's own KMeans fails these, and its test suite lists them as expected
# failures with this reason (sklearn/utils/_test_common/instance_generator.py): a
# random start drawn from repeated points differs from one drawn with weights.
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": (
        "sample_weight is not equivalent to removing/repeating samples."
    ),
    "check_sample_weight_equivalence_on_sparse_data": (
        "sample_weight is not equivalent to removing/repeating samples."
    ),
}


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_estimator(KMeans(), expected_failed_checks=EXPECTED_FAILURES)
