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

from icml26_shared.checks import check_positive_int

__all__ = [
    "QP",
    "chain_projection_qp",
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


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def random_dense_qp(n: int, seed: int | np.random.Generator | None = 0) -> QP:
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


def random_sparse_qp(
    n: int, density: float = 5e-3, seed: int | np.random.Generator | None = 0
) -> QP:
    """A random sparse QP in CSC format, the sparse analogue of :func:`random_dense_qp`.

    ``Q = MMᵀ + 1e-2 I`` with ``M`` sparse ``n×n`` (``density``), ``G`` sparse ``n×n`` with a
    unit diagonal plus random entries, ``h = G·1 + u`` with ``u ~ U[0,1]`` (so roughly
    the constraints with small ``u`` end up active), ``A`` sparse ``⌈n/10⌉×n``,
    ``b = A·1``; ``q ~ N(0, 1)·n^{1/2}·density`` pushes the solution against constraints.

    Returns:
        The :class:`QP`; matrices are ``scipy.sparse.csc_matrix``.
    """
    n = check_positive_int(n, "n", minimum=2)
    rng = _rng(seed)
    M = sp.random(n, n, density=density, random_state=rng, format="csc")
    Q = (M @ M.T + 1e-2 * sp.eye(n)).tocsc()
    G = (sp.random(n, n, density=density, random_state=rng) + sp.eye(n)).tocsc()
    h = np.asarray(G @ np.ones(n)).ravel() + rng.uniform(size=n)
    m_eq = max(1, -(-n // 10))
    A = sp.random(m_eq, n, density=max(density, 3.0 / n), random_state=rng, format="csc")
    A = (A + sp.csc_matrix((np.ones(m_eq), (np.arange(m_eq), rng.choice(n, m_eq, False))),
                           shape=(m_eq, n))).tocsc()
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
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    eye = sp.eye(n, format="csc") if sparse else np.eye(n)
    ones = sp.csc_matrix(np.ones((1, n))) if sparse else np.ones((1, n))
    return QP(eye, -y.copy(), -eye, np.zeros(n), ones, np.ones(1))


def simplex_projection_vjp(y: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    """Closed-form vector–Jacobian product of the simplex projection ``x(y)``.

    With support ``S = {i : x_i > 0}`` and ``s = 1_S``, ``∂x/∂y = diag(s) − s sᵀ/|S|``, so
    ``gᵀ ∂x/∂y = s ⊙ (g − mean_S(g))``. Differentiating w.r.t. ``q = −y`` flips the sign.
    """
    x = _project_simplex(np.asarray(y, dtype=np.float64))
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
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    D = sp.diags([np.ones(n - 1), -np.ones(n - 1)], [0, 1], shape=(n - 1, n), format="csc")
    eye = sp.eye(n, format="csc")
    if not sparse:
        D, eye = D.toarray(), eye.toarray()
    return QP(eye, -y.copy(), D, -gap * np.ones(n - 1))


def portfolio_qp(
    mu: NDArray[np.float64], cov: NDArray[np.float64], risk_aversion: float = 1.0,
    max_weight: float = 1.0,
) -> QP:
    """Long-only mean–variance portfolio: ``min ½γ wᵀΣw − μᵀw s.t. 0 ≤ w ≤ w_max, 1ᵀw = 1``."""
    mu = np.asarray(mu, dtype=np.float64)
    n = mu.shape[0]
    G = np.vstack([-np.eye(n), np.eye(n)])
    h = np.concatenate([np.zeros(n), max_weight * np.ones(n)])
    return QP(risk_aversion * np.asarray(cov), -mu, G, h, np.ones((1, n)), np.ones(1))
