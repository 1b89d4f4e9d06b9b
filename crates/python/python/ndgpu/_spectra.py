"""The spectra layer of :class:`ndgpu.Backend`: :func:`numpy.linalg.eigh`,
``eigvalsh``, ``svd`` and ``svdvals`` with NumPy's names, arguments and result types.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from . import _ndgpu
from ._convert import is_resident, ndim_of, operands, per_square, stacked
from ._linalg import LinearAlgebra

__all__ = ["Spectra", "EighResult", "SVDResult"]

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _uplo(uplo: str, a: Any, self: Any) -> Any:
    """`a` with the triangle the kernels read (the lower) holding `uplo`'s."""
    if uplo not in ("L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {uplo!r}")
    if uplo == "L":
        return a
    return _ndgpu.transpose(self, a) if is_resident(a) else np.swapaxes(a, -1, -2)


def _matrices(name: str, a: Any) -> None:
    if ndim_of(a) < 2:
        raise ValueError(
            f"{name}: {ndim_of(a)}-dimensional array given; the array must be at least "
            "two-dimensional"
        )


class Spectra(LinearAlgebra):
    """The symmetric eigendecomposition and the SVD of :class:`ndgpu.Backend`."""

    def eigh(self, a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803 (NumPy's name)
        """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix, as
        :func:`numpy.linalg.eigh`: only the triangle `UPLO` ('L' or 'U') is read.

        Returns
        -------
        EighResult(eigenvalues, eigenvectors)
            ``a @ v[:, j] = w[j] * v[:, j]``. Resident `a`: resident results, the
            eigenvalues as an n×1 array.

        Raises
        ------
        ValueError
            `a` is not square, or its triangle holds NaN or ±Inf.
        ndgpu.LinAlgError
            The backend's iteration did not converge.
        """
        (a,), _ = operands(a)
        a = _uplo(UPLO, a, self)
        return EighResult(*per_square("eigh", lambda m: _ndgpu.spectra(self, m, "eigh"), a))

    def eigvalsh(self, a: Any, UPLO: str = "L") -> Any:  # noqa: N803
        """Eigenvalues (ascending) of a symmetric matrix, as
        :func:`numpy.linalg.eigvalsh`; see :meth:`eigh`."""
        (a,), _ = operands(a)
        a = _uplo(UPLO, a, self)
        return per_square("eigvalsh", lambda m: _ndgpu.spectra(self, m, "eigvalsh"), a)

    def svd(
        self, a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
    ) -> Any:
        """Singular value decomposition ``a = U @ diag(S) @ Vh``, as
        :func:`numpy.linalg.svd`: complete U and Vh by default, reduced with
        ``full_matrices=False``, the singular values alone (descending) with
        ``compute_uv=False``. `hermitian` is accepted and ignored (the general SVD is
        computed).

        Returns
        -------
        SVDResult(U, S, Vh), or S
            Resident `a`: resident results, S as a k×1 array.
        """
        del hermitian
        (a,), _ = operands(a)
        _matrices("svd", a)
        if not compute_uv:
            return self.svdvals(a)
        what = "svd_full" if full_matrices else "svd"
        one = lambda m: _ndgpu.spectra(self, m, what)  # noqa: E731
        return SVDResult(*(one(a) if is_resident(a) else stacked(one, a, core=(2,))))

    def svdvals(self, x: Any) -> Any:
        """The singular values (descending), as :func:`numpy.linalg.svdvals`."""
        (x,), _ = operands(x)
        _matrices("svdvals", x)
        one = lambda m: _ndgpu.spectra(self, m, "svdvals")  # noqa: E731
        return one(x) if is_resident(x) else stacked(one, x, core=(2,))
