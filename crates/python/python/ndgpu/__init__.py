"""ndgpu: GPU linear algebra for NumPy, SciPy and scikit-learn users.

The functions here take NumPy's names, arguments and return conventions, and compute
on the default backend: the one named by the environment variable ``NDGPU_BACKEND``,
else the fastest that runs here (``cublas``, ``cuda``, ``faer``, ``cpu``). A machine
without a GPU computes on the CPU backends; the CUDA libraries load at run time.

>>> import numpy as np, ndgpu
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> ndgpu.matmul(a, a)
array([[20., 14.],
       [14., 13.]])

``ndgpu.backend(name)`` opens one backend, with the same functions as methods;
``ndgpu.asarray(x)`` makes an array resident where a backend computes, which the
functions take and return without a round trip through the host. ``ndgpu.linalg``
holds the factorizations, solves and spectra; ``ndgpu.cluster.KMeans`` and
``ndgpu.decomposition.PCA`` are scikit-learn estimators.
"""

from __future__ import annotations

from typing import Any, List, Union

from . import _ndgpu
from ._backend import (
    Array, Backend, EighResult, LstsqResult, QRResult, SlogdetResult, SVDResult,
)
from ._dispatch import default_backend, forward, resolve, set_default_backend
from ._errors import LinAlgError

__all__ = [
    "Array", "Backend", "LinAlgError", "QRResult", "SlogdetResult", "LstsqResult",
    "EighResult", "SVDResult",
    "backend", "backends", "default_backend", "set_default_backend", "asarray",
    "matmul", "dot", "gram", "transpose", "sum", "min", "max", "argmin", "argmax",
    "linalg", "cluster", "decomposition", "__version__",
]

__version__: str = _ndgpu.__version__


def backend(name: str = "auto") -> Backend:
    """Opens backend `name`: ``cpu``, ``faer``, ``cuda``, ``cublas``, ``cuda:0,1``,
    ``cuda:all``, or ``auto`` (``NDGPU_BACKEND`` if set, else the fastest here).

    Raises
    ------
    RuntimeError
        The backend cannot run on this machine; the message says why.
    ValueError
        No backend of that name is compiled in.
    """
    return Backend(name)


def backends() -> List[dict]:
    """Every compiled-in backend, in the order ``auto`` prefers them, with whether it
    runs here: dicts with ``name``, ``available``, ``description`` (available) or
    ``reason`` (not), ``notes`` and ``variants`` (``{family: [variant, ...]}``)."""
    return _ndgpu.backends()


def asarray(x: Any, dtype: Any = None, *, backend: Union[None, str, Backend] = None) -> Array:
    """`x` resident where `backend` (default: the default backend) computes; see
    :meth:`Backend.asarray`."""
    return resolve(backend).asarray(x, dtype=dtype)


# Each runs the Backend method of its name (and has its signature and documentation)
# on the backend of its first resident operand, else on the default backend.
matmul = forward(__name__, "matmul")
dot = forward(__name__, "dot")
gram = forward(__name__, "gram")
transpose = forward(__name__, "transpose")
sum = forward(__name__, "sum")  # noqa: A001
min = forward(__name__, "min")  # noqa: A001
max = forward(__name__, "max")  # noqa: A001
argmin = forward(__name__, "argmin")
argmax = forward(__name__, "argmax")

from . import linalg  # noqa: E402


def __getattr__(name: str) -> Any:
    # ndgpu.cluster and ndgpu.decomposition need scikit-learn: imported on first use only.
    if name in ("cluster", "decomposition"):
        import importlib

        return importlib.import_module(".cluster", __name__)
    raise AttributeError(f"module 'ndgpu' has no attribute {name!r}")
