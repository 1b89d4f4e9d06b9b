"""Linear algebra: the :mod:`numpy.linalg`- and :mod:`scipy.linalg`-shaped methods of
:class:`ndgpu.Backend` (factorizations, solves, determinants, inverses) and their
result types.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Optional, Union

import numpy as np

from . import _ndgpu
from ._convert import is_resident, ndim_of, operands, per_square, scalar, square_stack, stacked
from ._products import Products

__all__ = ["LinearAlgebra", "QRResult", "SlogdetResult", "LstsqResult"]

QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


class LinearAlgebra(Products):
    """The linear algebra of :class:`ndgpu.Backend` (the layer of its class hierarchy
    that holds it, over the products and reductions)."""

    def cholesky(self, a: Any, *, upper: bool = False) -> Any:
        """Cholesky factor, as :func:`numpy.linalg.cholesky`: lower L with
        ``a = L @ L.T`` (only the lower triangle of `a` is read), or with ``upper=True``
        the upper factor ``L.T`` (only the upper triangle is read).

        Raises
        ------
        ndgpu.LinAlgError
            `a` is not positive definite; ``pivot`` names the first failing pivot.
        ValueError
            `a` is not square, or holds NaN or ±Inf.
        """
        (a,), _ = operands(a)

        def lower_factor(m: Any) -> Any:
            return per_square("cholesky", lambda x: _ndgpu.cholesky(self, x), m)

        if not upper:
            return lower_factor(a)
        if is_resident(a):
            return _ndgpu.transpose(self, lower_factor(_ndgpu.transpose(self, a)))
        square_stack("cholesky", a)
        return np.ascontiguousarray(np.swapaxes(lower_factor(np.swapaxes(a, -1, -2)), -1, -2))

    def solve(
        self,
        a: Any,
        b: Any,
        *,
        lower: bool = False,
        assume_a: Optional[str] = None,
        transposed: bool = False,
        overwrite_a: bool = False,
        overwrite_b: bool = False,
        check_finite: bool = True,
    ) -> Any:
        """Solves ``a @ x = b``, as :func:`scipy.linalg.solve`.

        Parameters
        ----------
        a : array_like or ndgpu.Array, shape (n, n)
        b : array_like or ndgpu.Array, shape (n,) or (n, k)
        lower : bool
            With ``assume_a="pos"``: read the lower triangle of `a` (else the upper).
        assume_a : {None, "gen", "general", "sym", "her", "pos", "lower triangular", "upper triangular"}
            "gen" (and "sym", "her": the same solution): LU with partial pivoting;
            "pos": Cholesky; the triangular ones: a triangular solve.
        transposed : bool
            Solve ``a.T @ x = b``.
        overwrite_a, overwrite_b, check_finite : bool
            Accepted for SciPy compatibility; inputs are never overwritten, and NaN or
            ±Inf is always refused (``ValueError``).

        Returns
        -------
        numpy.ndarray or ndgpu.Array, of `b`'s shape

        Raises
        ------
        ndgpu.LinAlgError
            `a` is singular (LU met an exactly zero pivot), or not positive definite.
        ValueError
            Shapes do not fit, or NaN or ±Inf in the input.
        """
        kind = {
            None: "gen", "gen": "gen", "general": "gen", "sym": "gen", "symmetric": "gen",
            "her": "gen", "hermitian": "gen", "pos": "pos", "positive definite": "pos",
            "lower triangular": "lower", "upper triangular": "upper",
        }.get(assume_a)
        if kind is None:
            raise ValueError(f"solve: unknown assume_a {assume_a!r}")
        if kind in ("lower", "upper"):
            return self.solve_triangular(a, b, lower=kind == "lower", trans=int(transposed))
        (a, b), _ = operands(a, b)
        if kind == "pos" and not lower:
            transposed = not transposed  # the upper triangle of a is the lower of a.T
        if transposed:
            a = _ndgpu.transpose(self, a) if is_resident(a) else np.swapaxes(a, -1, -2)
        if is_resident(a) or is_resident(b):
            return _ndgpu.solve(self, a, b, kind == "pos")
        square_stack("solve", a)
        vector = b.ndim == 1
        b2 = b.reshape(-1, 1) if vector else b
        x = stacked(lambda m, r: _ndgpu.solve(self, m, r, kind == "pos"), a, b2, core=(2, 2))
        return x[..., 0] if vector else x

    def solve_triangular(
        self,
        a: Any,
        b: Any,
        trans: Union[int, str] = 0,
        lower: bool = False,
        unit_diagonal: bool = False,
        overwrite_b: bool = False,
        check_finite: bool = True,
    ) -> Any:
        """Solves ``op(T) @ x = b`` for T the lower or upper triangle of `a`, as
        :func:`scipy.linalg.solve_triangular`.

        Parameters
        ----------
        a : array_like or ndgpu.Array, shape (n, n)
            Only the triangle named by `lower` is read (not its diagonal with
            `unit_diagonal`).
        b : array_like or ndgpu.Array, shape (n,) or (n, k)
        trans : {0, 1, 2, "N", "T", "C"}
            op(T) = T, T.T, T.T (real input).
        lower : bool
            Use the lower triangle (else the upper).
        unit_diagonal : bool
            Assume ones on the diagonal.

        Returns
        -------
        numpy.ndarray or ndgpu.Array, of `b`'s shape, as :meth:`solve`; a zero on the
        diagonal read raises :class:`ndgpu.LinAlgError` (``pivot`` names it).
        """
        t = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}.get(trans)
        if t is None:
            raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
        (a, b), _ = operands(a, b)
        if is_resident(a) or is_resident(b):
            return _ndgpu.solve_triangular(self, a, b, lower, t, unit_diagonal)
        if a.ndim != 2 or b.ndim not in (1, 2):
            raise ValueError(
                f"solve_triangular: a 2-D a and a 1-D or 2-D b expected, got {a.shape} and {b.shape}"
            )
        vector = b.ndim == 1
        x = _ndgpu.solve_triangular(
            self, a, b.reshape(-1, 1) if vector else b, lower, t, unit_diagonal
        )
        return x[:, 0] if vector else x

    def lu(
        self, a: Any, permute_l: bool = False, overwrite_a: bool = False,
        check_finite: bool = True, p_indices: bool = False,
    ) -> Any:
        """LU with partial pivoting, as :func:`scipy.linalg.lu`: ``a = P @ L @ U``.

        Parameters
        ----------
        a : array_like or ndgpu.Array, shape (m, n)
        permute_l : bool
            Return ``(P @ L, U)``.
        p_indices : bool
            Return the permutation as row indices p, with ``a = L[p] @ U``.

        Returns
        -------
        (P, L, U), (PL, U) or (p, L, U)
            P (m, m), L (m, k) unit lower triangular, U (k, n), k = min(m, n).
        """
        (a,), _ = operands(a)
        if not is_resident(a) and a.ndim < 2:
            raise ValueError(f"lu: a 2-D array expected, got {a.ndim} dimensions")
        p, l, u = stacked(lambda m: _ndgpu.lu(self, m), a, core=(2,))
        if permute_l:
            return self.matmul(p, l), u
        if p_indices:
            ph = p.numpy() if is_resident(p) else p
            return np.argmax(ph, axis=-1), l, u
        return p, l, u

    def qr(self, a: Any, mode: str = "reduced") -> Any:
        """QR factorization, as :func:`numpy.linalg.qr`.

        Parameters
        ----------
        a : array_like or ndgpu.Array, shape (m, n)
        mode : {"reduced", "complete", "r"}
            Q (m, k) and R (k, n) with k = min(m, n); Q (m, m) and R (m, n); R only.

        Returns
        -------
        QRResult(Q, R), or R for ``mode="r"``
        """
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"qr: unrecognized mode {mode!r} (reduced, complete, r)")
        (a,), _ = operands(a)
        if not is_resident(a) and a.ndim != 2:
            raise ValueError(f"qr: a 2-D array expected, got {a.ndim} dimensions")
        q, r = _ndgpu.qr(self, a, mode == "complete")
        return r if mode == "r" else QRResult(q, r)

    def lstsq(self, a: Any, b: Any, rcond: Any = None) -> Any:
        """Least-squares solution of ``a @ x ≈ b``, as :func:`numpy.linalg.lstsq`, for
        `a` of full column rank with m ≥ n (through Householder QR).

        Parameters
        ----------
        a : array_like or ndgpu.Array, shape (m, n)
        b : array_like or ndgpu.Array, shape (m,) or (m, k)
        rcond : None
            Accepted for NumPy compatibility: the rank test is NumPy's default,
            ε·max(m, n)·max |R[i, i]|.

        Returns
        -------
        LstsqResult(x, residuals, rank, s)
            As NumPy: residuals are the squared 2-norms of the columns of
            ``b - a @ x`` when m > n (else empty), rank is n, s are the singular
            values of `a` (of its R factor: a second QR, and an n×n SVD on the host).
            x is resident for resident operands; the others are NumPy arrays.

        Raises
        ------
        ndgpu.LinAlgError
            `a` does not have full column rank (``pivot``: the first dependent column).
        ValueError
            m < n, shapes that do not fit, NaN or ±Inf.
        """
        (a, b), dtype = operands(a, b)
        if ndim_of(a) != 2 or ndim_of(b) not in (1, 2):
            raise ValueError(
                f"lstsq: a 2-D a and a 1-D or 2-D b expected, got {a.shape} and {b.shape}"
            )
        vector = not is_resident(b) and b.ndim == 1
        b2 = b.reshape(-1, 1) if vector else b
        x = _ndgpu.lstsq(self, a, b2)
        ah = a.numpy() if is_resident(a) else a
        bh = b2.numpy() if is_resident(b2) else b2
        xh = x.numpy() if is_resident(x) else x
        m, n = ah.shape
        if m > n:
            residuals = np.sum((bh - ah @ xh) ** 2, axis=0).astype(dtype)
            if vector:
                residuals = residuals.reshape(1)
        else:
            residuals = np.empty((0,), dtype=dtype)
        s = _ndgpu.spectra(self, a, "svdvals")
        s = s.numpy()[:, 0] if is_resident(s) else s
        if vector:
            x = x[:, 0]
        return LstsqResult(x, residuals, np.int64(n), s)

    def det(self, a: Any) -> Any:
        """Determinant, as :func:`numpy.linalg.det` (through LU; stacks broadcast).

        Returns
        -------
        scalar of `a`'s dtype, or numpy.ndarray for a stack
        """
        (a,), dtype = operands(a)
        return per_square("det", lambda m: scalar(_ndgpu.det(self, m), dtype), a)

    def slogdet(self, a: Any) -> Any:
        """Sign and natural log of the absolute determinant, as
        :func:`numpy.linalg.slogdet` (sign 0 and log -inf for a singular `a`).

        Returns
        -------
        SlogdetResult(sign, logabsdet)
        """
        (a,), dtype = operands(a)
        one = lambda m: tuple(scalar(v, dtype) for v in _ndgpu.slogdet(self, m))  # noqa: E731
        return SlogdetResult(*per_square("slogdet", one, a))

    def inv(self, a: Any) -> Any:
        """Inverse, as :func:`numpy.linalg.inv` (through LU; stacks broadcast).

        Raises
        ------
        ndgpu.LinAlgError
            `a` is singular.
        """
        (a,), _ = operands(a)
        return per_square("inv", lambda m: _ndgpu.inv(self, m), a)
