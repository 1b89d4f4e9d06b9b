from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, TransformerMixin

from . import Backend, _ArrayLike

__all__ = ['PCA']

class PCA(TransformerMixin, BaseEstimator):
    n_components: Optional[int]
    copy: bool
    whiten: bool
    svd_solver: str
    backend: Union[str, Backend, None]
    components_: npt.NDArray[Any]
    explained_variance_: npt.NDArray[Any]
    explained_variance_ratio_: npt.NDArray[Any]
    singular_values_: npt.NDArray[Any]
    mean_: npt.NDArray[Any]
    n_components_: int
    n_samples_: int
    noise_variance_: float
    n_features_in_: int
    def __init__(
        self,
        n_components: Optional[int] = None,
        *,
        copy: bool = True,
        whiten: bool = False,
        svd_solver: str = "auto",
        backend: Union[str, Backend, None] = None,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: Any = None) -> "PCA": ...
    def transform(self, X: _ArrayLike) -> npt.NDArray[Any]: ...
    def fit_transform(self, X: _ArrayLike, y: Any = None) -> npt.NDArray[Any]: ...
    def inverse_transform(self, X: _ArrayLike) -> npt.NDArray[Any]: ...
    def get_covariance(self) -> npt.NDArray[Any]: ...
