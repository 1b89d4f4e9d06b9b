"""Products, transposes and reductions: the NumPy-shaped methods of
:class:`ndgpu.Backend` that are not linear algebra (see ``_linalg``), and
:meth:`~ndgpu.Backend.asarray`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import _ndgpu
from ._convert import (
    F32, F64, Array, float_dtype, is_resident, ndim_of, normalize_axis, operands, scalar, stacked,
)

__all__ = ["Products"]


def _reduction(op: str, doc: str) -> Callable[..., Any]:
    """The method `op` (``sum``, ``min``, ...): a reduction with NumPy's arguments."""

    def reduction(self: "Products", a: Any, axis: Optional[int] = None, *, keepdims: bool = False) -> Any:
        return self._reduce(op, a, axis, keepdims)

    reduction.__name__ = op
    reduction.__qualname__ = f"Products.{op}"
    reduction.__doc__ = doc
    return reduction


_EXTREMUM_DOC = """{which} element, as :func:`numpy.{op}`; see :meth:`sum` for the arguments.

        Raises
        ------
        ValueError
            The array (or a lane along `axis`) is empty.
        """


class Products(_ndgpu.Backend):
    """The products, transposes and reductions of :class:`ndgpu.Backend` (the layer
    of its class hierarchy that holds them, over the compiled backend)."""

    # ---- resident arrays ---------------------------------------------------------------

    def asarray(self, x: Any, dtype: Any = None) -> "Array":
        """`x` as an array resident on this backend (uploaded; 1-D becomes a 1×n row).

        Parameters
        ----------
        x : array_like or ndgpu.Array
            The data. A resident array of this backend and dtype is returned as it is.
        dtype : {None, float32, float64}
            The element type; by default float32 for float32 (and float16) input, else
            float64.

        Returns
        -------
        ndgpu.Array
        """
        if is_resident(x):
            want = np.dtype(dtype) if dtype is not None else x.dtype
            if want == x.dtype and x.backend is self:
                return x
            if want == x.dtype:
                return _ndgpu.upload(self, x)
            return _ndgpu.upload(self, x.numpy().astype(want))
        a = np.asarray(x)
        want = np.dtype(dtype) if dtype is not None else float_dtype(a.dtype)
        if want not in (F32, F64):
            raise TypeError(f"ndgpu arrays are float32 or float64, not {want}")
        a = np.asarray(a, dtype=want)
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, -1)
        elif a.ndim > 2:
            raise ValueError(f"ndgpu arrays are 2-D; got {a.ndim} dimensions")
        return _ndgpu.upload(self, a)

    # ---- products ------------------------------------------------------------------------

    def matmul(self, a: Any, b: Any) -> Any:
        """Matrix product, as :func:`numpy.matmul`: 1-D operands are promoted to a row
        (a) or a column (b) and the added dimension removed; stacks broadcast.

        Parameters
        ----------
        a, b : array_like or ndgpu.Array

        Returns
        -------
        numpy.ndarray, scalar or ndgpu.Array
        """
        (a, b), dtype = operands(a, b)
        if is_resident(a) or is_resident(b):
            return _ndgpu.matmul(self, a, b)
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError("matmul: input operand does not have enough dimensions (0-D)")
        a2 = a.reshape(1, -1) if a.ndim == 1 else a
        b2 = b.reshape(-1, 1) if b.ndim == 1 else b
        c = stacked(lambda x, y: _ndgpu.matmul(self, x, y), a2, b2, core=(2, 2))
        if b.ndim == 1:
            c = c[..., 0]
        if a.ndim == 1:
            c = c[..., 0, :] if b.ndim != 1 else c[..., 0]
        return c[()] if c.ndim == 0 else c

    def dot(self, a: Any, b: Any) -> Any:
        """Dot product, as :func:`numpy.dot` for operands of at most two dimensions:
        the inner product of two 1-D arrays (a scalar), else the matrix product, with
        the operands and results of :meth:`matmul`."""
        (a, b), dtype = operands(a, b)
        if is_resident(a) or is_resident(b):
            if is_resident(a) and is_resident(b) and a.shape[0] == 1 and b.shape[0] == 1:
                return scalar(_ndgpu.dot(self, a, b), dtype)
            return _ndgpu.matmul(self, a, b)
        if a.ndim == 0 or b.ndim == 0:
            return np.multiply(a, b)
        if a.ndim > 2 or b.ndim > 2:
            raise ValueError("ndgpu.dot takes operands of at most two dimensions; use matmul")
        if a.ndim == 1 and b.ndim == 1:
            if a.shape != b.shape:
                raise ValueError(f"dot: shapes {a.shape} and {b.shape} not aligned")
            return scalar(_ndgpu.dot(self, a.reshape(1, -1), b.reshape(1, -1)), dtype)
        return self.matmul(a, b)

    def gram(self, a: Any) -> Any:
        """The symmetric product ``a @ a.T`` of a 2-D array.

        Parameters
        ----------
        a : array_like or ndgpu.Array, shape (n, k)

        Returns
        -------
        numpy.ndarray or ndgpu.Array, shape (n, n)
        """
        (a,), _ = operands(a)
        if ndim_of(a) != 2:
            raise ValueError(f"gram: a 2-D array expected, got {ndim_of(a)} dimensions")
        return _ndgpu.gram(self, a)

    def transpose(self, a: Any) -> Any:
        """The transpose, materialized (C-ordered), as ``numpy.transpose(a).copy()`` for
        arrays of at most two dimensions.

        Parameters
        ----------
        a : array_like or ndgpu.Array

        Returns
        -------
        numpy.ndarray or ndgpu.Array
        """
        (a,), _ = operands(a)
        if is_resident(a):
            return _ndgpu.transpose(self, a)
        if a.ndim < 2:
            return a.copy()
        if a.ndim > 2:
            raise ValueError("ndgpu.transpose takes arrays of at most two dimensions")
        return _ndgpu.transpose(self, a)

    # ---- reductions ----------------------------------------------------------------------

    def _reduce(self, op: str, a: Any, axis: Optional[int], keepdims: bool) -> Any:
        (a,), dtype = operands(a)
        arg = op.startswith("arg")

        def whole(r: float) -> Any:
            return np.intp(r) if arg else scalar(r, dtype)

        if is_resident(a):
            if axis is not None:
                axis = normalize_axis(axis, 2)
            r = _ndgpu.reduce(self, op, a, axis)
            return whole(r) if axis is None else r
        nd = a.ndim
        if nd > 2:
            raise ValueError(f"ndgpu.{op} takes arrays of at most two dimensions")
        if axis is not None:
            axis = normalize_axis(axis, max(nd, 1) if nd else 0)
        m = a.reshape(1, -1) if nd < 2 else a
        if axis is None or nd < 2:
            out = whole(_ndgpu.reduce(self, op, m, None))
            return np.full((1,) * nd, out, dtype=np.intp if arg else dtype) if keepdims else out
        r = _ndgpu.reduce(self, op, m, axis)
        if arg:
            r = r.astype(np.intp, copy=False)
        return np.expand_dims(r, axis) if keepdims else r

    sum = _reduction(
        "sum",
        """Sum of the elements, as :func:`numpy.sum` (``axis`` None, 0, 1 or negative).

        Parameters
        ----------
        a : array_like or ndgpu.Array
            At most two dimensions.
        axis : int or None
            None: of every element; 0 or -2: down the columns; 1 or -1: along the rows.
        keepdims : bool
            Keep the reduced axis with length 1 (host operands).

        Returns
        -------
        scalar, numpy.ndarray or ndgpu.Array
            A resident operand reduced along an axis gives a resident 1×n (axis 0) or
            n×1 (axis 1) array.
        """,
    )
    min = _reduction("min", _EXTREMUM_DOC.format(which="Smallest", op="min"))
    max = _reduction("max", _EXTREMUM_DOC.format(which="Largest", op="max"))
    argmin = _reduction(
        "argmin",
        """Index of the smallest element (the first of equals), as :func:`numpy.argmin`:
        with ``axis=None`` an index into the flattened (C-ordered) array.

        Returns
        -------
        numpy.intp or numpy.ndarray of intp
            Indices always come back to the host.
        """,
    )
    argmax = _reduction(
        "argmax",
        """Index of the largest element (the first of equals), as :func:`numpy.argmax`;
        see :meth:`argmin`.""",
    )
