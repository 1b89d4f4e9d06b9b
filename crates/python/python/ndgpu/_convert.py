"""Operands for the compiled functions: NumPy's conventions made explicit.

The compiled functions (``ndgpu._ndgpu``) take 2-D float32 or float64 operands of one
dtype; these helpers convert host operands (dtype promotion: integers and booleans
become float64, as ``numpy.linalg`` does), check shapes, apply a function over stacks
of matrices, and normalize axes.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, Tuple

import numpy as np

from . import _ndgpu

Array = _ndgpu.Array

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


def float_dtype(*dtypes: np.dtype) -> np.dtype:
    """float32 when every operand is float32 or float16, else float64."""
    for d in dtypes:
        if d.kind == "c":
            raise TypeError("ndgpu computes in float32 and float64: complex input is not supported")
        if d.kind not in "biuf":
            raise TypeError(f"ndgpu cannot compute on arrays of dtype {d}")
    if dtypes and all(d.kind == "f" and d.itemsize <= 4 for d in dtypes):
        return F32
    return F64


def is_resident(x: Any) -> bool:
    return isinstance(x, Array)


def operands(*xs: Any) -> Tuple[list, np.dtype]:
    """The operands as NumPy arrays (host) or resident arrays, and the common dtype.

    Resident operands decide the dtype (host ones are converted to it); otherwise the
    host operands' dtypes do.
    """
    resident = [x for x in xs if is_resident(x)]
    if resident:
        dtype = resident[0].dtype
        if any(r.dtype != dtype for r in resident):
            raise TypeError("resident operands of one dtype (float32 or float64) expected")
        out = [x if is_resident(x) else native(x, dtype) for x in xs]
        return out, dtype
    arrays = [np.asarray(x) for x in xs]
    dtype = float_dtype(*(a.dtype for a in arrays))
    return [native(a, dtype) for a in arrays], dtype


def native(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`a` as `dtype` in native byte order and aligned (other strides are kept)."""
    a = np.asarray(a, dtype=dtype)
    return a if a.flags.aligned else a.copy()


def scalar(x: float, dtype: np.dtype) -> np.generic:
    return dtype.type(x)


def ndim_of(x: Any) -> int:
    return 2 if is_resident(x) else x.ndim


def square_stack(name: str, a: np.ndarray) -> None:
    if a.ndim < 2:
        raise ValueError(
            f"{name}: {a.ndim}-dimensional array given; the array must be at least two-dimensional"
        )
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: the last two dimensions must be square, got {a.shape}")


def stacked(f: Callable[..., Any], *xs: np.ndarray, core: Sequence[int]) -> Any:
    """Applies `f` to each matrix of stacked operands (operand i has `core[i]` core
    dimensions, 1 or 2), broadcasting the stack dimensions as NumPy does; operands
    without stack dimensions (resident ones among them) go to `f` as they are."""
    batch = np.broadcast_shapes(*(x.shape[: x.ndim - c] for x, c in zip(xs, core)))
    if not batch:
        return f(*xs)
    full = [np.broadcast_to(x, batch + x.shape[x.ndim - c :]) for x, c in zip(xs, core)]
    results = [f(*(x[i] for x in full)) for i in np.ndindex(*batch)]
    if results and isinstance(results[0], tuple):
        return tuple(
            np.stack(parts).reshape(batch + np.shape(parts[0])) for parts in zip(*results)
        )
    if not results:
        raise ValueError("ndgpu: an empty stack of matrices has no result to compute")
    return np.stack(results).reshape(batch + np.shape(results[0]))


def per_square(name: str, f: Callable[[Any], Any], a: Any) -> Any:
    """`f` of a resident matrix, or of each matrix of a host stack of square ones."""
    if is_resident(a):
        return f(a)
    square_stack(name, a)
    return stacked(f, a, core=(2,))


def normalize_axis(axis: Any, ndim: int) -> int:
    """A non-negative axis of an array of `ndim` (≥ 1) dimensions."""
    try:
        ax = int(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer or None, got {axis!r}") from None
    if ax != axis or isinstance(axis, bool):
        raise TypeError(f"axis must be an integer or None, got {axis!r}")
    n = max(ndim, 1)
    if not -n <= ax < n:
        raise np.exceptions.AxisError(ax, n) if hasattr(np, "exceptions") else ValueError(
            f"axis {ax} is out of bounds for array of dimension {n}"
        )
    return ax % n
