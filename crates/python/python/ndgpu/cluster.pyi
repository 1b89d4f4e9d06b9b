from typing import Any, List, Optional, Union

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin

from . import Backend, _ArrayLike

__all__ = ['KMeans']

class KMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    n_clusters: int
    init: Any
    n_init: Union[int, str]
    max_iter: int
    tol: float
    verbose: int
    random_state: Any
    copy_x: bool
    algorithm: str
    backend: Union[str, Backend, None]
    cluster_centers_: npt.NDArray[Any]
    labels_: npt.NDArray[np.int32]
    inertia_: float
    n_iter_: int
    n_features_in_: int
    def __init__(
        self, n_clusters: int = 8, *, init: Any = "k-means++", n_init: Union[int, str] = "auto",
        max_iter: int = 300, tol: float = 1e-4, verbose: int = 0, random_state: Any = None,
        copy_x: bool = True, algorithm: str = "lloyd", backend: Union[str, Backend, None] = None,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: Any = None, sample_weight: Optional[npt.ArrayLike] = None) -> "KMeans": ...
    def fit_predict(self, X: _ArrayLike, y: Any = None, sample_weight: Optional[npt.ArrayLike] = None) -> npt.NDArray[np.int32]: ...
    def fit_transform(self, X: _ArrayLike, y: Any = None, sample_weight: Optional[npt.ArrayLike] = None) -> npt.NDArray[Any]: ...
    def predict(self, X: _ArrayLike) -> npt.NDArray[np.int32]: ...
    def transform(self, X: _ArrayLike) -> npt.NDArray[Any]: ...
    def score(self, X: _ArrayLike, y: Any = None, sample_weight: Optional[npt.ArrayLike] = None) -> float: ...
    def set_fit_request(self, *, sample_weight: Union[bool, None, str] = ...) -> "KMeans": ...
    def set_score_request(self, *, sample_weight: Union[bool, None, str] = ...) -> "KMeans": ...
