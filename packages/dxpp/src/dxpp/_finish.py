"""A backend's raw ``(x, z, y)`` → the solution dxpp works with: the feasibility check, the
multipliers (clipped, or recovered by least squares when the backend gave none), the active
and weakly active sets, and ``‖Q‖₂``. Shared by the per-problem forward (:mod:`dxpp._solve`)
and the batched one (:mod:`dxpp._batched`), which import it from here and not each other.

Active set: ``J = {i : h_i − G_i x* ≤ τ_i}`` with ``τ_i = active_tol·(1 + |h_i| + ‖G_i‖‖x*‖)``,
plus every row whose multiplier dominates its slack, ``ν_i‖G_i‖² > 10³·slack_i·‖Q‖₂``; weakly
active: in ``J`` with ``ν_i ≤ dual_tol·(1 + ‖ν‖_∞)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._types import spectral_norm
from ._validate import QPError

__all__ = ["finish_solution"]


def _recover_duals(Q: Any, q: NDArray, G: Any, A: Any, x: NDArray, active: NDArray) -> tuple:
    """Least squares on stationarity over the active set, ``ν`` clipped at 0."""
    C = sp.vstack([G[active], A]).toarray() if sp.issparse(G) else np.vstack([G[active], A])
    r = -(Q @ x + q)
    lam = np.linalg.lstsq(C.T, r, rcond=None)[0] if C.shape[0] else np.zeros(0)
    nu = np.zeros(G.shape[0])
    k = int(active.sum())
    nu[active] = np.maximum(lam[:k], 0.0)
    return nu, lam[k:]


def _active_sets(
    G: Any, h: NDArray, x: NDArray, nu: NDArray, active_tol: float, dual_tol: float, q_norm: float
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    if G.shape[0] == 0:
        empty = np.zeros(0, dtype=bool)
        return empty, empty
    row_norm = (
        np.sqrt(np.asarray(G.multiply(G).sum(axis=1)).ravel())
        if sp.issparse(G)
        else np.linalg.norm(G, axis=1)
    )
    slack = h - G @ x
    tau = active_tol * (1.0 + np.abs(h) + row_norm * np.linalg.norm(x))
    # complementarity test: an interior-point solution can leave an active constraint with a
    # slack of ~sqrt(tol); ν_i‖G_i‖² ≫ slack_i‖Q‖ (equal units) still marks it active
    active = (slack <= tau) | (nu * row_norm**2 > 1e3 * np.maximum(slack, 0.0) * q_norm)
    weak = active & (nu <= dual_tol * (1.0 + np.abs(nu).max(initial=0.0)))
    return active, weak


def finish_solution(
    Q: Any,
    q: NDArray,
    G: Any,
    h: NDArray,
    A: Any,
    b: NDArray,
    x: Any,
    z: Any,
    y: Any,
    status: str,
    solver: str,
    tol: float,
    active_tol: float,
    index: int | None,
) -> tuple:
    """A backend's ``(x, z, y)`` → ``(x, ν, μ, active, weakly active, ‖Q‖₂)``: the
    feasibility check (``QPError`` naming the status), duals clipped (or recovered by least
    squares when the backend gave none), the active sets, and the power-iteration estimate of
    ``‖Q‖₂`` that the backward reuses."""
    m, p = G.shape[0], A.shape[0]
    where = "" if index is None else f" (batch {index})"
    x = np.asarray(x, dtype=np.float64)
    viol_scale = 1.0 + max(np.abs(h).max(initial=0), np.abs(b).max(initial=0))
    viol = max(float(np.max(G @ x - h, initial=0.0)), float(np.abs(A @ x - b).max(initial=0.0)))
    if viol > max(1e3 * tol, 1e-6) * viol_scale:
        raise QPError(
            f"solver {solver!r} returned x violating the constraints by {viol:.3g}"
            f"{where}: status {status} (infeasible QP?)",
            status=status,
            solver=solver,
            index=index,
        )
    have_duals = (m == 0 or z is not None) and (p == 0 or y is not None)
    nu = np.asarray(z, dtype=np.float64) if m and z is not None else np.zeros(m)
    mu = np.asarray(y, dtype=np.float64) if p and y is not None else np.zeros(p)
    nu = np.maximum(nu, 0.0)
    q_spec = spectral_norm(Q)
    q_norm = q_spec if m else 0.0
    if m and q_norm == 0.0:
        q_norm = float(
            np.median(
                np.asarray(G.multiply(G).sum(axis=1)).ravel()
                if sp.issparse(G)
                else np.einsum("ij,ij->i", G, G)
            )
        )
    active, weak = _active_sets(G, h, x, nu, active_tol, 1e-7, q_norm)
    if not have_duals or not (np.all(np.isfinite(nu)) and np.all(np.isfinite(mu))):
        by_slack = _active_sets(G, h, x, np.zeros(m), active_tol, 1e-7, q_norm)[0]
        nu, mu = _recover_duals(Q, q, G, A, x, by_slack)
        active, weak = _active_sets(G, h, x, nu, active_tol, 1e-7, q_norm)
    return x, nu, mu, active, weak, q_spec
