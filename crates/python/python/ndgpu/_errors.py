"""The exception ndgpu raises for a matrix the operation cannot factor."""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["LinAlgError"]


class LinAlgError(np.linalg.LinAlgError):
    """A matrix is singular, not positive definite, or not of full column rank.

    A subclass of :class:`numpy.linalg.LinAlgError`, so code written for NumPy and
    SciPy catches it unchanged.

    Attributes
    ----------
    op : str or None
        The operation that met it (``"cholesky"``, ``"solve"``, ``"lstsq"``, ...).
    pivot : int or None
        0-based index of the first failing pivot (for ``lstsq``: the first column that
        depends on the ones before it).
    value : float or None
        The failing pivot's value (Cholesky), or ``|R[pivot, pivot]|`` (``lstsq``).
    """

    def __init__(
        self,
        message: str,
        *,
        op: Optional[str] = None,
        pivot: Optional[int] = None,
        value: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.op = op
        self.pivot = pivot
        self.value = value
