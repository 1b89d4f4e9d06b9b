"""`Backend`: an opened ndgpu backend with NumPy- and SciPy-shaped operations.

The compiled functions (``ndgpu._ndgpu``) take 2-D float32 or float64 operands of one
dtype; the methods give them NumPy's and SciPy's conventions: 0-D, 1-D and stacked
operands, dtype promotion (integers and booleans become float64, as ``numpy.linalg``
does), negative axes, keyword names and return types. They are written in two layers
of its base classes, ``_products.Products`` (products, transposes, reductions),
``_linalg.LinearAlgebra`` (linear algebra) and ``_spectra.Spectra`` (eigh, SVD), on the
operand helpers of ``_convert``.
"""

from __future__ import annotations

from typing import Any, Tuple

from ._convert import Array
from ._linalg import LstsqResult, QRResult, SlogdetResult
from ._spectra import EighResult, Spectra, SVDResult

__all__ = [
    "Backend", "Array", "QRResult", "SlogdetResult", "LstsqResult", "EighResult", "SVDResult",
]


class Backend(Spectra):
    """An opened backend: ``cpu``, ``faer``, ``cuda``, ``cublas``, ``cuda:0,1`` or
    ``auto``.

    Every NumPy-shaped function of ``ndgpu`` and ``ndgpu.linalg`` is a method here,
    computing on this backend. Host operands (anything ``numpy.asarray`` takes, of any
    memory order) give NumPy arrays; resident operands (:class:`ndgpu.Array`, from
    :meth:`asarray`) give resident arrays, without a round trip through the host.

    Parameters
    ----------
    name : str, default "auto"
        The backend; ``auto`` is the value of ``NDGPU_BACKEND`` if set, else the
        fastest that runs here (``cublas``, ``cuda``, ``faer``, ``cpu``).

    Raises
    ------
    RuntimeError
        The backend cannot run here (no GPU, no driver); the message says why.
    ValueError
        No backend of that name is compiled in.
    """

    def __init__(self, name: str = "auto") -> None:  # opened by _ndgpu.Backend.__new__
        super().__init__()

    # Backends are handles: copies share the opened backend (scikit-learn's `clone`
    # deep-copies parameters), and a pickle reopens it by name.
    def __deepcopy__(self, memo: dict) -> "Backend":
        return self

    def __copy__(self) -> "Backend":
        return self

    def __reduce__(self) -> Tuple[Any, Tuple[str]]:
        return (type(self), (self.name,))
