"""Factorizations and solves with the names and conventions of :mod:`numpy.linalg`
and :mod:`scipy.linalg`, on the default backend (or the backend of a resident
operand). Each is also a method of :class:`ndgpu.Backend`.

Errors: a singular matrix, one not positive definite, or one without full column rank
raise :class:`ndgpu.LinAlgError` (a :class:`numpy.linalg.LinAlgError`) naming the
pivot; shapes that do not fit, NaN and ±Inf raise ``ValueError``.
"""

from __future__ import annotations

from ._dispatch import forward
from ._errors import LinAlgError

__all__ = [
    "LinAlgError", "cholesky", "solve", "solve_triangular", "lu", "qr", "lstsq", "det",
    "slogdet", "inv", "eigh", "eigvalsh", "svd", "svdvals",
]

# Each runs the Backend method of its name (and has its signature and documentation)
# on the backend of its first resident operand, else on the default backend.
cholesky = forward(__name__, "cholesky")
solve = forward(__name__, "solve")
solve_triangular = forward(__name__, "solve_triangular")
lu = forward(__name__, "lu")
qr = forward(__name__, "qr")
lstsq = forward(__name__, "lstsq")
det = forward(__name__, "det")
slogdet = forward(__name__, "slogdet")
inv = forward(__name__, "inv")
eigh = forward(__name__, "eigh")
eigvalsh = forward(__name__, "eigvalsh")
svd = forward(__name__, "svd")
svdvals = forward(__name__, "svdvals")
