"""Matrix decompositions with scikit-learn's interface (needs scikit-learn).

:class:`PCA` is a drop-in for :class:`sklearn.decomposition.PCA` (exact, without
whitening) computing on an ndgpu backend.
"""

from __future__ import annotations

import numbers
from typing import Any, Union

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _ndgpu
from ._backend import Array, Backend
from ._dispatch import resolve

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def _validate_data(est: Any, X: Any, **kw: Any) -> Any:
        return est._validate_data(X, **kw)


__all__ = ["PCA"]


class PCA(TransformerMixin, BaseEstimator):
    """Principal component analysis on an ndgpu backend, with the interface of
    :class:`sklearn.decomposition.PCA`.

    The data are centred (not scaled); the components are the right singular vectors
    of the centred data, signed as scikit-learn's ``svd_flip`` signs them (each
    component's entry of largest absolute value positive). The path is scikit-learn's
    ``svd_solver="auto"`` for dense data: ``covariance_eigh`` (the backend's gram of the
    centred data, then its ``eigh``) when n_features ≤ 1000 and n_samples ≥
    10·n_features, else ``full`` (the backend's SVD of the centred data).

    Parameters
    ----------
    n_components : int or None, default None
        Components kept, 1 to min(n_samples, n_features); None keeps all of them.
    copy : bool, default True
        Accepted for scikit-learn compatibility (X is never overwritten).
    whiten : bool, default False
        Only False is supported.
    svd_solver : {"auto", "full", "covariance_eigh"}, default "auto"
        "auto" picks as above; "full" and "covariance_eigh" are accepted where "auto"
        would pick them, else refused (the path follows the shape).
    backend : str or ndgpu.Backend or None, default None
        Where to compute; None is the default backend.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    explained_variance_ : ndarray of shape (n_components,)
    explained_variance_ratio_ : ndarray of shape (n_components,)
    singular_values_ : ndarray of shape (n_components,)
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    n_samples_ : int
    noise_variance_ : float
        The mean variance of the discarded components (0 when all are kept).
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components: Union[int, None] = None,
        *,
        copy: bool = True,
        whiten: bool = False,
        svd_solver: str = "auto",
        backend: Union[str, Backend, None] = None,
    ) -> None:
        self.n_components, self.copy, self.whiten = n_components, copy, whiten
        self.svd_solver, self.backend = svd_solver, backend

    def _check_params(self, n: int, d: int) -> Union[int, None]:
        k = self.n_components
        if k is not None and (
            not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k <= min(n, d)
        ):
            raise ValueError(
                f"n_components={k!r} must be None or an int between 1 and "
                f"min(n_samples, n_features)={min(n, d)} (fractions and 'mle' are not supported)"
            )
        if self.whiten:
            raise ValueError("whiten=True is not supported")
        auto = "covariance_eigh" if d <= 1000 and n >= 10 * d else "full"
        if self.svd_solver not in ("auto", auto):
            raise ValueError(
                f"svd_solver={self.svd_solver!r}: this shape takes {auto!r} (or 'auto')"
            )
        return None if k is None else int(k)

    def fit(self, X: Any, y: Any = None) -> "PCA":
        """Fits the model to X (array-like of shape (n_samples, n_features), or a
        resident ndgpu.Array, fitted where it lives). float32 stays float32, other types
        become float64.

        Returns
        -------
        self : PCA
        """
        resident = isinstance(X, Array)
        kw = dict(accept_sparse=False, dtype=[np.float64, np.float32], ensure_min_samples=2)
        X = X if resident else _validate_data(self, X, **kw)
        n, d = X.shape
        if resident:
            self.n_features_in_ = d
        fit = _ndgpu.pca_fit(resolve(self.backend), X, self._check_params(n, d))
        self.components_ = fit["components"]
        self.explained_variance_ = fit["explained_variance"]
        self.explained_variance_ratio_ = fit["explained_variance_ratio"]
        self.singular_values_ = fit["singular_values"]
        self.mean_ = fit["mean"]
        self.n_components_ = self.components_.shape[0]
        self.n_samples_ = int(fit["n_samples"])
        rest = min(n, d) - self.n_components_
        if rest > 0:
            ratio = self.explained_variance_ratio_
            total = float(np.sum(self.explained_variance_)) / max(float(np.sum(ratio)), 1e-300)
            left = total - float(np.sum(self.explained_variance_))
            self.noise_variance_ = max(left, 0.0) / rest if np.sum(ratio) > 0 else 0.0
        else:
            self.noise_variance_ = 0.0
        return self

    def transform(self, X: Any) -> np.ndarray:
        """``(X - mean_) @ components_.T``: X in the components' coordinates."""
        check_is_fitted(self)
        b = resolve(self.backend)
        if isinstance(X, Array):
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but PCA is expecting {self.n_features_in_} "
                    "features as input."
                )
            dtype = X.dtype
        else:
            X = _validate_data(self, X, accept_sparse=False, dtype=[np.float64, np.float32], reset=False)
            dtype = self.components_.dtype
            X = np.asarray(X, dtype=dtype)
        mean = np.ascontiguousarray(self.mean_.reshape(1, -1), dtype=dtype)
        comps = np.ascontiguousarray(self.components_, dtype=dtype)
        return _ndgpu.pca_transform(b, X, mean, comps)

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        """Fits, then transforms X."""
        return self.fit(X).transform(X)

    def inverse_transform(self, X: Any) -> np.ndarray:
        """``X @ components_ + mean_``: back to the original space."""
        check_is_fitted(self)
        X = np.asarray(X.numpy() if isinstance(X, Array) else X, dtype=self.components_.dtype)
        return resolve(self.backend).matmul(X, self.components_) + self.mean_

    def get_covariance(self) -> np.ndarray:
        """The covariance of the data under the model (scikit-learn's formula)."""
        check_is_fitted(self)
        v = self.components_
        d = v.shape[1]
        return (v.T * (self.explained_variance_ - self.noise_variance_)) @ v + self.noise_variance_ * np.eye(d)
