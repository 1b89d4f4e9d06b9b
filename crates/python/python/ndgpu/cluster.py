"""Clustering estimators with scikit-learn's interface (needs scikit-learn).

:class:`KMeans` is a drop-in for :class:`sklearn.cluster.KMeans` (Lloyd's algorithm)
computing on an ndgpu backend.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Union

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _ndgpu
from ._backend import Array, Backend
from ._dispatch import resolve

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def _validate_data(est: Any, X: Any, *, skip_check_array: bool = False, **kw: Any) -> Any:
        if skip_check_array:  # only n_features_in_ and feature_names_in_
            kw["cast_to_ndarray"] = False
        return est._validate_data(X, **kw)


__all__ = ["KMeans"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _open(b: Union[str, Backend, None]) -> Backend:
    return resolve(b)


def _plain(X: Any) -> bool:
    """X is an array the compiled functions take as it is, which scikit-learn's
    validation would return unchanged: a NumPy ndarray (not a subclass) of float32 or
    float64 in native byte order, 2-D, C- or F-contiguous, with a row and a column."""
    return (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in _FLOATS
        and (X.flags.c_contiguous or X.flags.f_contiguous)
        and X.size > 0
    )


class KMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """K-Means clustering (Lloyd's algorithm) on an ndgpu backend, with the interface
    of :class:`sklearn.cluster.KMeans`.

    Parameters
    ----------
    n_clusters : int, default 8
        The number of clusters (centroids).
    init : {"k-means++", "random", "k-means||"}, array of shape (n_clusters, n_features) or callable, default "k-means++"
        How the starting centroids are chosen: greedy-free k-means++ (D² sampling),
        distinct points drawn uniformly, k-means‖ (as Spark and cuML), the given
        centroids, or ``init(X, n_clusters, random_state)`` returning them.
    n_init : int or "auto", default "auto"
        Starts from different seeds; the fit of least inertia is kept. "auto" is 1.
        Given centroids make one start.
    max_iter : int, default 300
        Most assignment steps of a start.
    tol : float, default 1e-4
        scikit-learn's tolerance: stop when an update moved the centroids by a summed
        squared distance of at most ``tol`` times the mean per-feature variance of X.
        A start also stops when no label changes.
    verbose : int, default 0
        Accepted for scikit-learn compatibility (nothing is printed).
    random_state : int, RandomState instance or None, default None
        Seeds the initialization; an int makes fits reproducible.
    copy_x : bool, default True
        Accepted for scikit-learn compatibility: X is never modified.
    algorithm : {"lloyd", "elkan"}, default "lloyd"
        Lloyd's iteration. "elkan" (the same fixed points, found faster in
        scikit-learn) is computed with Lloyd's iteration too.
    backend : str or ndgpu.Backend, default None
        Where to compute: a backend name (``cpu``, ``faer``, ``cuda``, ``cublas``,
        ``auto``) or an opened backend; None is the default backend.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centroids, in X's dtype (float32 or float64).
    labels_ : ndarray of shape (n_samples,), int32
        The cluster of each training point.
    inertia_ : float
        Sum of squared distances of the points to their centroids (weighted).
    n_iter_ : int
        Assignment steps made by the kept start.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Column names of X, when X had string column names.

    Warns
    -----
    ConvergenceWarning
        The fit ended with fewer distinct clusters than `n_clusters` (some clusters
        empty: X has duplicate points, or fewer distinct points than clusters).

    Notes
    -----
    A NumPy array of float32 or float64, 2-D and C- or F-contiguous (of the centroids'
    dtype, after a fit) goes to the backend as it is: scikit-learn's validation only
    sets or checks `n_features_in_` and `feature_names_in_`, and the backend refuses NaN
    and ±Inf while it computes (then scikit-learn's own ValueError is raised). Other
    input is validated and converted first, as by scikit-learn.
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init: Any = "k-means++",
        n_init: Union[int, str] = "auto",
        max_iter: int = 300,
        tol: float = 1e-4,
        verbose: int = 0,
        random_state: Any = None,
        copy_x: bool = True,
        algorithm: str = "lloyd",
        backend: Union[str, Backend, None] = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm
        self.backend = backend

    # ---- parameters ----------------------------------------------------------------------

    def _check_params(self, X: Any, n_samples: int, n_features: int) -> dict:
        k = self.n_clusters
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
            raise ValueError(f"n_clusters must be an int >= 1, got {k!r}")
        if n_samples < k:
            raise ValueError(f"n_samples={n_samples} should be >= n_clusters={k}.")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be an int >= 1, got {self.max_iter!r}")
        if not isinstance(self.tol, numbers.Real) or not np.isfinite(self.tol) or self.tol < 0:
            raise ValueError(f"tol must be a finite float >= 0, got {self.tol!r}")
        if self.algorithm not in ("lloyd", "elkan"):
            raise ValueError(f"algorithm must be 'lloyd' or 'elkan', got {self.algorithm!r}")
        if self.n_init == "auto":
            n_init = 1
        elif isinstance(self.n_init, numbers.Integral) and self.n_init >= 1:
            n_init = int(self.n_init)
        else:
            raise ValueError(f"n_init must be 'auto' or an int >= 1, got {self.n_init!r}")
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        kw: dict = dict(n_init=n_init, max_iter=int(self.max_iter), tol=float(self.tol), seed=seed)
        init = self.init
        if callable(init):
            init = init(X.numpy() if isinstance(X, Array) else X, k, rng)
        if isinstance(init, str):
            if init not in ("k-means++", "random", "k-means||"):
                raise ValueError(
                    f"init must be 'k-means++', 'random', 'k-means||', an array or a callable, got {init!r}"
                )
            kw["init"] = init
        else:
            centers = np.asarray(init, dtype=np.float64)
            if centers.shape != (k, n_features):
                raise ValueError(
                    f"The shape of the initial centers {centers.shape} does not match the "
                    f"number of clusters {k} and features {n_features}: expected {(k, n_features)}."
                )
            if n_init != 1 and self.n_init != "auto":
                warnings.warn(
                    "Explicit initial center position passed: performing only one init "
                    f"in {type(self).__name__} instead of n_init={n_init}.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            kw.update(init="given", centers=np.ascontiguousarray(centers), n_init=1)
        return kw

    # ---- input ---------------------------------------------------------------------------

    def _check_data(self, X: Any, reset: bool) -> Any:
        """Host X validated as scikit-learn's `validate_data` does (setting or checking
        `n_features_in_` and `feature_names_in_`), as float32 or float64. A `_plain`
        array (of the centroids' dtype, after a fit) is taken as it is, without
        validate_data's pass over the data: the compiled functions refuse NaN and ±Inf
        themselves (on the device for GPU backends), and `_check_finite` then raises
        scikit-learn's error."""
        if _plain(X) and (reset or X.dtype == self.cluster_centers_.dtype):
            return _validate_data(self, X, skip_check_array=True, reset=reset)
        X = _validate_data(
            self, X, accept_sparse=False, dtype=[np.float64, np.float32], copy=False,
            reset=reset,
        )
        return X if reset else np.asarray(X, dtype=self.cluster_centers_.dtype)

    def _check_finite(self, X: Any, reset: bool) -> None:
        """After the compiled code refused host X: raises scikit-learn's own error when X
        holds NaN or ±Inf (its full validation, run only now)."""
        if not isinstance(X, Array):
            _validate_data(
                self, X, accept_sparse=False, dtype=[np.float64, np.float32], reset=reset
            )

    # ---- fitting -------------------------------------------------------------------------

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> "KMeans":
        """Computes k-means clustering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or ndgpu.Array
            Training points; float32 stays float32, other types become float64. A
            resident array is clustered where it lives.
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default None
            Weight of each point (non-negative, of positive sum); None: all 1.

        Returns
        -------
        self : KMeans
        """
        b = _open(self.backend)
        if isinstance(X, Array):
            self.n_features_in_ = X.shape[1]
        else:
            X = self._check_data(X, reset=True)
        n, d = X.shape
        dtype = X.dtype
        kw = self._check_params(X, n, d)
        if sample_weight is not None:
            sw = _check_sample_weight(sample_weight, np.empty((n, 0)), dtype=np.float64)
            if np.any(sw < 0) or not np.sum(sw) > 0:
                raise ValueError("sample_weight must be non-negative with a positive sum")
            kw["sample_weight"] = np.ascontiguousarray(sw, dtype=np.float64)
        try:
            fit = _ndgpu.kmeans(b, X, int(self.n_clusters), **kw)
        except ValueError:
            self._check_finite(X, reset=True)
            raise
        centers = fit["centroids"]
        self.cluster_centers_ = centers.numpy() if isinstance(centers, Array) else centers
        self.cluster_centers_ = self.cluster_centers_.astype(dtype, copy=False)
        self.labels_ = fit["labels"].astype(np.int32)
        self.inertia_ = float(fit["inertia"])
        self.n_iter_ = int(fit["iterations"])
        empty = fit["empty_clusters"]
        if empty:
            distinct = self.n_clusters - len(empty)
            warnings.warn(
                f"Number of distinct clusters ({distinct}) found smaller than n_clusters "
                f"({self.n_clusters}). Possibly due to duplicate points in X.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def fit_predict(self, X: Any, y: Any = None, sample_weight: Any = None) -> np.ndarray:
        """Fits, and returns the cluster of each point (``labels_``)."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def fit_transform(self, X: Any, y: Any = None, sample_weight: Any = None) -> np.ndarray:
        """Fits, and returns the distances of each point to every centroid."""
        return self.fit(X, sample_weight=sample_weight).transform(X)

    # ---- using a fit ---------------------------------------------------------------------

    def _check_test_data(self, X: Any) -> Any:
        check_is_fitted(self)
        if isinstance(X, Array):
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
            return X
        return self._check_data(X, reset=False)

    def _labels(self, X: Any) -> np.ndarray:
        """The nearest centroid of each point of a checked X."""
        b = _open(self.backend)
        centers = self.cluster_centers_
        if isinstance(X, Array):
            centers = centers.astype(X.dtype, copy=False)
        try:
            return _ndgpu.predict(b, X, centers).astype(np.int32)
        except ValueError:
            self._check_finite(X, reset=False)
            raise

    def predict(self, X: Any) -> np.ndarray:
        """The index of the nearest centroid for each point (ties: the lowest index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or ndgpu.Array

        Returns
        -------
        labels : ndarray of shape (n_samples,), int32
        """
        return self._labels(self._check_test_data(X))

    def transform(self, X: Any) -> np.ndarray:
        """Euclidean distances of each point to every centroid.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
        """
        X = self._check_test_data(X)
        if isinstance(X, Array):
            X = X.numpy()
        b = _open(self.backend)
        c = self.cluster_centers_.astype(X.dtype, copy=False)
        # ‖x − c‖² = ‖x‖² − 2·x·c + ‖c‖², the product on the backend (as scikit-learn's
        # euclidean_distances); exact zeros where a point is a centroid.
        xx = np.einsum("ij,ij->i", X, X)
        if not np.all(np.isfinite(xx)):
            # NaN or ±Inf in X shows here (or a finite x·x overflowed: then go on).
            self._check_finite(X, reset=False)
        cross = b.matmul(X, np.ascontiguousarray(c.T))
        d2 = xx[:, None] - 2 * cross + np.einsum("ij,ij->i", c, c)[None, :]
        np.maximum(d2, 0, out=d2)
        return np.sqrt(d2, out=d2)

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Opposite of the (weighted) sum of squared distances of X to its nearest
        centroids: higher is better.

        Returns
        -------
        float
        """
        X = self._check_test_data(X)
        labels = self._labels(X)
        Xh = (X.numpy() if isinstance(X, Array) else X).astype(np.float64, copy=False)
        diff = Xh - self.cluster_centers_.astype(np.float64)[labels]
        d2 = np.einsum("ij,ij->i", diff, diff)
        if sample_weight is not None:
            d2 = d2 * _check_sample_weight(sample_weight, Xh, dtype=np.float64)
        return -float(np.sum(d2))
