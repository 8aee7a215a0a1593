"""Benchmark problem generators (dQP's random QPs, projections, a portfolio task).

Every generator returns a :class:`QP` named tuple ``(Q, q, G, h, A, b)`` in the convention
``min ½xᵀQx + qᵀx  s.t.  Gx ≤ h, Ax = b`` of :func:`dxpp.solve_qp`.

References:
    Magoon, Yang, Aigerman, Kovalsky. "Differentiation Through Black-Box Quadratic Programming
    Solvers" (dQP), NeurIPS 2025 — the random dense QP and the projection benchmarks.
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_positive,
    check_positive_int,
    check_shape,
    rng_from_seed,
)

__all__ = [
    "QP",
    "chain_projection_qp",
    "multiperiod_portfolio_qp",
    "portfolio_qp",
    "random_dense_qp",
    "random_sparse_qp",
    "simplex_projection_qp",
    "simplex_projection_vjp",
]


class QP(NamedTuple):
    """The data of one QP ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b`` (G/h, A/b may be ``None``)."""

    Q: Any
    q: NDArray[np.float64]
    G: Any = None
    h: NDArray[np.float64] | None = None
    A: Any = None
    b: NDArray[np.float64] | None = None


def _rng(seed: SeedLike) -> np.random.Generator:
    return rng_from_seed(seed)


def _vector(y: Any, name: str = "y") -> NDArray[np.float64]:
    return check_finite_array(y, name, ndim=1)


def random_dense_qp(n: int, seed: SeedLike = 0) -> QP:
    """dQP's random dense QP: ``Q = PPᵀ + 1e-4 I``, ``P, G ~ U[0,1]^{n×n}``, ``q ~ U[0,1]^n``,
    ``h = G·1 + 1``, ``A ~ U[0,1]^{⌈n/2⌉×n}``, ``b = A·1`` (so ``x = 1`` is strictly feasible).

    Args:
        n: number of variables (also the number of inequalities).
        seed: seed or generator.

    Returns:
        The :class:`QP` with dense float64 arrays.
    """
    n = check_positive_int(n, "n", minimum=2)
    rng = _rng(seed)
    P = rng.uniform(size=(n, n))
    Q = P @ P.T + 1e-4 * np.eye(n)
    q = rng.uniform(size=n)
    G = rng.uniform(size=(n, n))
    h = G.sum(axis=1) + 1.0
    A = rng.uniform(size=((n + 1) // 2, n))
    b = A.sum(axis=1)
    return QP(Q, q, G, h, A, b)


def _banded(rng: np.random.Generator, rows: int, n: int, per_row: int, width: int) -> sp.csr_matrix:
    """``rows × n`` sparse matrix, ``per_row`` U[0,1] entries per row within ``width`` of the
    row's diagonal position (banded structure, as in control / time-series QPs)."""
    centre = np.repeat(np.linspace(0, n - 1, rows).astype(int), per_row)
    cols = np.clip(centre + rng.integers(-width, width + 1, size=rows * per_row), 0, n - 1)
    data = rng.uniform(size=rows * per_row)
    M = sp.csr_matrix((data, (np.repeat(np.arange(rows), per_row), cols)), shape=(rows, n))
    M.sum_duplicates()
    return M


def random_sparse_qp(n: int, seed: SeedLike = 0, *, per_row: int = 4, width: int = 10) -> QP:
    """A random sparse banded QP in CSC format, the sparse analogue of :func:`random_dense_qp`.

    ``Q = MMᵀ + 1e-2 I`` with ``M`` banded (``per_row`` entries per row within ``width`` of
    the diagonal), ``G = [I; B]`` with ``B`` banded ``n/2 × n`` (so ``m = 3n/2``),
    ``h = G·1 + u``, ``u ~ U[0, 1]``, ``A`` banded ``⌈n/10⌉ × n``, ``b = A·1`` (``x = 1`` is
    strictly feasible) and ``q ~ U[−2, 0]^n`` pushing the solution against the constraints.

    Returns:
        The :class:`QP`; matrices are ``scipy.sparse.csc_matrix``.
    """
    n = check_positive_int(n, "n", minimum=2)
    rng = _rng(seed)
    M = _banded(rng, n, n, per_row, width)
    Q = (M @ M.T + 1e-2 * sp.eye(n)).tocsc()
    G = sp.vstack([sp.eye(n), _banded(rng, n // 2, n, per_row, width)]).tocsc()
    h = np.asarray(G @ np.ones(n)).ravel() + rng.uniform(size=G.shape[0])
    A = _banded(rng, -(-n // 10), n, per_row, width).tocsc()
    b = np.asarray(A @ np.ones(n)).ravel()
    q = -rng.uniform(0.0, 2.0, size=n)
    return QP(Q, q, G, h, A, b)


def simplex_projection_qp(y: NDArray[np.float64], *, sparse: bool = True) -> QP:
    """Euclidean projection of ``y`` onto the probability simplex as a QP:
    ``min ½‖x − y‖² s.t. x ≥ 0, 1ᵀx = 1`` (``Q = I``, ``q = −y``, ``G = −I``, ``h = 0``).

    Args:
        y: the point to project, shape ``(n,)``.
        sparse: return CSC matrices (needed for large ``n``).
    """
    y = _vector(y)
    n = y.shape[0]
    eye = sp.eye(n, format="csc") if sparse else np.eye(n)
    ones = sp.csc_matrix(np.ones((1, n))) if sparse else np.ones((1, n))
    return QP(eye, -y.copy(), -eye, np.zeros(n), ones, np.ones(1))


def simplex_projection_vjp(y: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    """Closed-form vector–Jacobian product of the simplex projection ``x(y)``.

    With support ``S = {i : x_i > 0}`` and ``s = 1_S``, ``∂x/∂y = diag(s) − s sᵀ/|S|``, so
    ``gᵀ ∂x/∂y = s ⊙ (g − mean_S(g))``. Differentiating w.r.t. ``q = −y`` flips the sign.
    """
    y = _vector(y)
    g = check_finite_array(g, "g", ndim=1)
    if g.shape != y.shape:
        raise ValueError(f"g must have the shape {y.shape} of y, got {g.shape}")
    x = _project_simplex(y)
    s = x > 0
    out = np.zeros_like(x)
    out[s] = g[s] - g[s].mean()
    return out


def _project_simplex(y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Sort-based simplex projection (Held, Wolfe, Crowder 1974; Duchi et al. 2008)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, y.size + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    return np.maximum(y - css[rho] / (rho + 1), 0.0)


def chain_projection_qp(y: NDArray[np.float64], gap: float = 0.1, *, sparse: bool = True) -> QP:
    """Projection onto a chain (isotonic-with-margin) set:
    ``min ½‖x − y‖² s.t. x_i + gap ≤ x_{i+1}`` (``n − 1`` bidiagonal inequalities)."""
    y = _vector(y)
    n = y.shape[0]
    if n < 2:
        raise ValueError(f"y must have at least 2 entries (a chain), got {n}")
    gap = check_positive(gap, "gap", strict=False)
    D = sp.diags([np.ones(n - 1), -np.ones(n - 1)], [0, 1], shape=(n - 1, n), format="csc")
    eye = sp.eye(n, format="csc")
    if not sparse:
        D, eye = D.toarray(), eye.toarray()
    return QP(eye, -y.copy(), D, -gap * np.ones(n - 1))


def portfolio_qp(
    mu: NDArray[np.float64],
    cov: NDArray[np.float64],
    risk_aversion: float = 1.0,
    max_weight: float = 1.0,
) -> QP:
    """Long-only mean–variance portfolio: ``min ½γ wᵀΣw − μᵀw s.t. 0 ≤ w ≤ w_max, 1ᵀw = 1``."""
    mu = _vector(mu, "mu")
    n = mu.shape[0]
    cov = check_finite_array(cov, "cov", ndim=2)
    check_shape(cov, (n, n), "cov")
    risk_aversion = check_positive(risk_aversion, "risk_aversion", strict=False)
    if check_positive(max_weight, "max_weight") * n < 1:
        raise ValueError(
            f"max_weight must be >= 1/n = {1 / n:g} (else no long-only portfolio sums to 1), "
            f"got {max_weight}"
        )
    G = np.vstack([-np.eye(n), np.eye(n)])
    h = np.concatenate([np.zeros(n), max_weight * np.ones(n)])
    return QP(risk_aversion * np.asarray(cov), -mu, G, h, np.ones((1, n)), np.ones(1))


def multiperiod_portfolio_qp(
    mu: NDArray[np.float64],
    cov: NDArray[np.float64],
    *,
    risk_aversion: float = 5.0,
    trade_cost: float = 1.0,
    w0: NDArray[np.float64] | None = None,
    sparse: bool = True,
) -> QP:
    """Multi-period long-only portfolio over ``T`` periods and ``k`` assets (``n = Tk``):

    ``min Σ_t ½γ w_tᵀΣw_t − μ_tᵀw_t + ½κ‖w_t − w_{t−1}‖²  s.t.  w_t ≥ 0, 1ᵀw_t = 1``,

    with ``w_0`` given (equal weights by default). ``Q`` is block tri-diagonal.

    Args:
        mu: ``(T, k)`` expected returns per period.
        cov: ``(k, k)`` covariance.
        risk_aversion, trade_cost: γ and κ.
        w0: initial holdings (``(k,)``).
        sparse: CSC matrices (else dense arrays).
    """
    mu = check_finite_array(mu, "mu", ndim=2)
    T, k = mu.shape
    cov = check_finite_array(cov, "cov", ndim=2)
    check_shape(cov, (k, k), "cov")
    risk_aversion = check_positive(risk_aversion, "risk_aversion", strict=False)
    trade_cost = check_positive(trade_cost, "trade_cost", strict=False)
    w0 = np.full(k, 1.0 / k) if w0 is None else _vector(w0, "w0")
    if w0.shape != (k,):
        raise ValueError(f"w0 must have shape ({k},), got {w0.shape}")
    n = T * k
    # Σ_t ½κ‖w_t − w_{t−1}‖² = ½ wᵀ(κ DᵀD)w − κ w_1ᵀw_0 + const, D the block difference
    main = np.full(T, 2.0)
    main[-1] = 1.0
    lap = sp.diags([main, -np.ones(T - 1), -np.ones(T - 1)], [0, 1, -1])
    Q = sp.kron(sp.eye(T), risk_aversion * sp.csr_matrix(cov)) + trade_cost * sp.kron(
        lap, sp.eye(k)
    )
    q = -mu.ravel().copy()
    q[:k] -= trade_cost * w0
    G = -sp.eye(n)
    A = sp.kron(sp.eye(T), np.ones((1, k)))
    out = [sp.csc_matrix(Q), q, sp.csc_matrix(G), np.zeros(n), sp.csc_matrix(A), np.ones(T)]
    if not sparse:
        out = [M.toarray() if sp.issparse(M) else M for M in out]
    return QP(*out)
