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
for _name in __all__[1:]:
    globals()[_name] = forward(__name__, _name)
del _name
