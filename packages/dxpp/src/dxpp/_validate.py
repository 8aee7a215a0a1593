"""Input checks and the canonical (batched, float64) form of a QP.

Every public entry point funnels ``(Q, q, G, h, A, b)`` through :func:`canonicalize`, which
checks shapes, finiteness, symmetry and (for dense ``Q``) positive semi-definiteness, and
returns a :class:`QPData`: float64 numpy arrays or CSC matrices with an explicit batch axis
on the vectors (``q``: ``(B, n)``) and, for dense matrices, either ``(n, n)`` (shared across
the batch) or ``(B, n, n)``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from icml26_shared.checks import check_finite_array

__all__ = ["QPData", "QPError", "canonicalize", "is_sparse"]


class QPError(RuntimeError):
    """The QP solver failed: infeasible, unbounded, or stopped without a solution.

    Attributes:
        status: the solver's own status (a string), e.g. ``"PIQP_PRIMAL_INFEASIBLE"``.
        solver: the ``qpsolvers`` backend that reported it.
        index: the batch index of the failing problem (``None`` when unbatched).
    """

    def __init__(self, message: str, *, status: str, solver: str, index: int | None = None):
        super().__init__(message)
        self.status = status
        self.solver = solver
        self.index = index


def is_sparse(M: Any) -> bool:
    """True for scipy sparse matrices/arrays."""
    return sp.issparse(M)


@dataclass
class QPData:
    """A checked QP batch in float64.

    Attributes:
        Q, G, A: ``(n, n)``/``(m, n)``/``(p, n)`` shared matrices, ``(B, ·, n)`` dense stacks,
            or CSC matrices (always shared). ``G``/``A`` have zero rows when absent.
        q, h, b: ``(B, n)``, ``(B, m)``, ``(B, p)``.
        batched: whether the caller passed a batch axis (outputs keep it).
        dtype: the input floating dtype (outputs are cast back to it).
        sparse: whether any matrix is sparse (then all are CSC).
        q_norms: ``(B,)`` power-iteration estimates of ``‖Q_k‖₂``, set by the forward solve
            so that the backward reuses them (None until then).
    """

    Q: Any
    q: NDArray[np.float64]
    G: Any
    h: NDArray[np.float64]
    A: Any
    b: NDArray[np.float64]
    batched: bool
    dtype: np.dtype
    sparse: bool
    has_G: bool
    has_A: bool
    q_norms: NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return self.q.shape[1]

    @property
    def m(self) -> int:
        return self.h.shape[1]

    @property
    def p(self) -> int:
        return self.b.shape[1]

    @property
    def batch(self) -> int:
        return self.q.shape[0]

    def item(
        self, k: int
    ) -> tuple[Any, NDArray[np.float64], Any, NDArray[np.float64], Any, NDArray[np.float64]]:
        """The ``k``-th problem ``(Q, q, G, h, A, b)`` of the batch."""

        def pick(M: Any) -> Any:
            return M if is_sparse(M) or M.ndim == 2 else M[k if M.shape[0] > 1 else 0]

        return (pick(self.Q), self.q[k], pick(self.G), self.h[k], pick(self.A), self.b[k])


def _float_dtype(*arrays: Any) -> np.dtype:
    kinds = [np.asarray(a.data if is_sparse(a) else a).dtype for a in arrays if a is not None]
    floats = [d for d in kinds if d.kind == "f"]
    if floats and all(d == np.float32 for d in floats):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _matrix(M: Any, name: str, allow_none: bool) -> Any:
    if M is None:
        if allow_none:
            return None
        raise ValueError(f"{name} must be given, got None")
    if is_sparse(M):
        M = sp.csc_matrix(M, dtype=np.float64)
        if M.ndim != 2:
            raise ValueError(f"{name} must have 2 dimension(s), got shape {M.shape}")
        check_finite_array(M.data, name, allow_empty=True)
        return M
    return check_finite_array(M, name, ndim=(2, 3), allow_empty=True)


def _vector(v: Any, name: str) -> NDArray[np.float64]:
    return check_finite_array(v, name, ndim=(1, 2), allow_empty=True)


def _batch_of(arrays: dict[str, tuple[Any, int]]) -> int:
    sizes = {}
    for name, (arr, base_ndim) in arrays.items():
        if arr is not None and not is_sparse(arr) and arr.ndim == base_ndim + 1:
            sizes[name] = arr.shape[0]
    distinct = {s for s in sizes.values() if s != 1}
    if len(distinct) > 1:
        shown = ", ".join(f"{k} has {v}" for k, v in sizes.items())
        raise ValueError(f"batch sizes must agree (or be 1), got {shown}")
    return max(sizes.values(), default=1)


def symmetry_tolerance(dtype: Any) -> float:
    """Relative tolerance of the symmetry test, ``max(100·eps, 1e-8)`` of ``Q``'s dtype:
    1.2e-5 for float32 (where ``L Lᵀ + εI`` is symmetric only to rounding), 1e-8 for float64."""
    return max(100.0 * float(np.finfo(dtype).eps), 1e-8)


def psd_shift(dtype: Any) -> float:
    """Relative diagonal shift of the PSD test, ``max(10·eps, 1e-9)`` (times ``n·max|diag|``)."""
    return max(10.0 * float(np.finfo(dtype).eps), 1e-9)


def _input_dtype(M: Any) -> np.dtype:
    d = np.asarray(M.data if is_sparse(M) else M).dtype
    return d if d.kind == "f" else np.dtype(np.float64)


def _check_symmetric_psd(
    Q: Any, check_psd: bool, warn_psd: bool = True, q_dtype: Any = np.float64
) -> Any:
    tol = symmetry_tolerance(q_dtype)
    if is_sparse(Q):
        QT = Q.T.tocsc()  # sorted indices (a transpose by counting)
        same = (
            Q.has_canonical_format  # sorted, no duplicates (the caller's arrays are not touched)
            and np.array_equal(Q.indptr, QT.indptr)
            and np.array_equal(Q.indices, QT.indices)
        )
        if same:
            diff = Q.data - QT.data  # symmetric pattern: compare the values entry by entry
        else:
            diff = (Q - QT).data
        big = float(np.abs(Q.data).max()) if Q.nnz else 0.0
        worst = float(np.abs(diff).max()) if diff.size else 0.0
        if worst > tol * max(big, 1e-300):
            raise ValueError(f"Q must be symmetric, got max |Q - Qᵀ| = {worst:.3g}")
        if worst == 0.0:
            return Q
        return ((Q + QT) * 0.5).tocsc()
    mats = Q if Q.ndim == 3 else Q[None]
    B = mats.shape[0]
    if np.array_equal(mats, mats.transpose(0, 2, 1)):
        sym = mats.copy()  # exactly symmetric (the usual case): (Q + Qᵀ)/2 is Q bit for bit
    else:
        big = np.abs(mats.reshape(B, -1)).max(axis=1)
        asym = np.abs(mats - mats.transpose(0, 2, 1)).reshape(B, -1).max(axis=1)
        bad = asym > tol * np.maximum(big, 1e-300)
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"Q must be symmetric, got max |Q - Qᵀ| = {asym[k]:.3g} (batch {k})")
        sym = 0.5 * (mats + mats.transpose(0, 2, 1))
    if not check_psd and warn_psd and sym.size and (np.diagonal(sym, axis1=1, axis2=2) < 0).any():
        warnings.warn(
            "Q has negative diagonal entries, so it is not positive semi-definite "
            "(check_psd=False skipped the full check): the QP is not convex and the "
            "solution and its gradients are unreliable",
            RuntimeWarning,
            stacklevel=4,
        )
    if check_psd:
        n = sym.shape[1]
        for k, M in enumerate(sym):
            shift = psd_shift(q_dtype) * max(float(np.abs(np.diag(M)).max()), 1e-300) * n
            try:
                np.linalg.cholesky(M + shift * np.eye(n))
            except np.linalg.LinAlgError:
                lam = float(np.linalg.eigvalsh(M)[0])
                raise ValueError(
                    f"Q must be positive semi-definite, got smallest eigenvalue {lam:.3g}"
                    + (f" (batch {k})" if len(sym) > 1 else "")
                ) from None
    return sym if Q.ndim == 3 else sym[0]


def canonicalize(
    Q: Any,
    q: Any,
    G: Any = None,
    h: Any = None,
    A: Any = None,
    b: Any = None,
    *,
    check_psd: bool = True,
    warn_psd: bool = True,
    q_dtype: Any = None,
) -> QPData:
    """Check ``(Q, q, G, h, A, b)`` and return the canonical :class:`QPData`.

    ``check_psd=False`` skips the Cholesky test of dense ``Q`` but still warns (when
    ``warn_psd``) if a diagonal entry is negative, a free necessary test. The symmetry and
    PSD tolerances follow ``Q``'s dtype (``q_dtype``, default: ``Q``'s own), see
    :func:`symmetry_tolerance`.

    Raises:
        ValueError: non-square/non-symmetric/non-PSD ``Q``, mismatched shapes, NaN/inf,
            ``G`` without ``h`` (or ``A`` without ``b``), disagreeing batch sizes.
        TypeError: non-numeric or complex input.
    """
    for name, v in zip(("Q", "q", "G", "h", "A", "b"), (Q, q, G, h, A, b)):
        if v is not None and np.iscomplexobj(v.data if is_sparse(v) else v):
            raise TypeError(f"{name} must be real-valued, got a complex array")
    dtype = _float_dtype(Q, q, G, h, A, b)
    if q_dtype is None and Q is not None:
        q_dtype = _input_dtype(Q)
    if (G is None) != (h is None):
        raise ValueError(
            f"G and h must be given together, got G={type(G).__name__}, h={type(h).__name__}"
        )
    if (A is None) != (b is None):
        raise ValueError(
            f"A and b must be given together, got A={type(A).__name__}, b={type(b).__name__}"
        )
    Qm = _matrix(Q, "Q", False)
    qv = _vector(q, "q")
    n = qv.shape[-1]
    if n == 0:
        raise ValueError(
            f"q must have at least one entry (a QP in n >= 1 variables), got shape {qv.shape}"
        )
    if Qm.shape[-1] != n or Qm.shape[-2] != n:
        raise ValueError(f"Q must have shape (n, n) with n = len(q) = {n}, got {tuple(Qm.shape)}")
    Gm = _matrix(G, "G", True)
    hv = _vector(h, "h") if h is not None else None
    Am = _matrix(A, "A", True)
    bv = _vector(b, "b") if b is not None else None
    for M, v, mn, vn in ((Gm, hv, "G", "h"), (Am, bv, "A", "b")):
        if M is None or v is None:
            continue
        if M.shape[-1] != n:
            raise ValueError(f"{mn} must have {n} columns (len(q)), got shape {tuple(M.shape)}")
        if M.shape[-2] != v.shape[-1]:
            raise ValueError(
                f"{vn} must have length {M.shape[-2]} ({mn} has {M.shape[-2]} rows), "
                f"got shape {tuple(v.shape)}"
            )
    B = _batch_of(
        {"Q": (Qm, 2), "q": (qv, 1), "G": (Gm, 2), "h": (hv, 1), "A": (Am, 2), "b": (bv, 1)}
    )
    batched = any(
        x is not None and not is_sparse(x) and x.ndim == nd + 1
        for x, nd in ((Qm, 2), (qv, 1), (Gm, 2), (hv, 1), (Am, 2), (bv, 1))
    )
    sparse = any(is_sparse(M) for M in (Qm, Gm, Am))
    if Gm is None or hv is None:
        Gm, hv = np.zeros((0, n)), np.zeros(0)
    if Am is None or bv is None:
        Am, bv = np.zeros((0, n)), np.zeros(0)
    if sparse:
        for M, name in ((Qm, "Q"), (Gm, "G"), (Am, "A")):
            if not is_sparse(M) and M.ndim == 3:
                raise ValueError(
                    f"{name} must be a single matrix when any matrix is sparse, "
                    f"got a batch of shape {M.shape}"
                )
        Qm, Gm, Am = (sp.csc_matrix(M) for M in (Qm, Gm, Am))
    Qm = _check_symmetric_psd(Qm, check_psd and not sparse, warn_psd, q_dtype or np.float64)

    def vec(v: NDArray[np.float64]) -> NDArray[np.float64]:
        v = v if v.ndim == 2 else v[None]
        return np.ascontiguousarray(np.broadcast_to(v, (B, v.shape[1])))

    return QPData(
        Qm,
        vec(qv),
        Gm,
        vec(hv),
        Am,
        vec(bv),
        batched,
        dtype,
        sparse,
        has_G=G is not None,
        has_A=A is not None,
    )
