"""Exact KKT adjoints used as ground truth and as baselines (dense, LU).

Two classical ways to differentiate ``x*(Q, q, G, h, A, b)``:

* **Reduced (active-set) KKT** — dQP's backward and our ground truth. With the active rows
  ``C = [G_J; A]`` and multipliers ``λ = [ν_J; μ]``, solve
  ``[Q Cᵀ; C 0] [u; η] = [∂L/∂x; 0]`` and set ``∂q = −u``, ``∂Q = −½(uxᵀ + xuᵀ)``,
  ``∂d = η``, ``∂C = −(λuᵀ + ηxᵀ)`` (zero on inactive rows). Exact under LICQ and strict
  complementarity.
* **Full KKT** — OptNet's backward: differentiate all of
  ``Qx + q + Gᵀν + Aᵀμ = 0``, ``diag(ν)(Gx − h) = 0``, ``Ax = b``; with
  ``K = [Q Gᵀ Aᵀ; diag(ν)G diag(Gx − h) 0; A 0 0]`` solve ``Kᵀ[d_x; d_ν; d_μ] = [∂L/∂x; 0; 0]``
  and set ``∂q = −d_x``, ``∂Q = −½(d_x xᵀ + x d_xᵀ)``, ``∂h = ν⊙d_ν``,
  ``∂G = −(ν d_xᵀ + (ν⊙d_ν) xᵀ)``, ``∂b = d_μ``, ``∂A = −(μ d_xᵀ + d_μ xᵀ)``.
  An ``(n + m + p)``-sized non-symmetric LU: the cost the penalty method avoids.

References:
    Amos, Kolter. "OptNet: Differentiable Optimization as a Layer in Neural Networks",
    ICML 2017. Magoon et al. "Differentiation Through Black-Box Quadratic Programming
    Solvers" (dQP), NeurIPS 2025.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray

from icml26_shared.checks import check_choice, check_finite_array

from ._types import Gradient, QPGrad

__all__ = ["kkt_vjp"]


def _dense(M: Any, n: int) -> NDArray[np.float64]:
    if M is None:
        return np.zeros((0, n))
    return M.toarray() if hasattr(M, "toarray") else np.asarray(M, dtype=np.float64)


def kkt_vjp(
    Q: Any,
    q: Any,
    G: Any,
    h: Any,
    A: Any,
    b: Any,
    x: NDArray,
    nu: NDArray,
    mu: NDArray,
    active: NDArray[np.bool_],
    grad_x: NDArray,
    *,
    kind: str = "reduced",
) -> QPGrad[Gradient]:
    """Exact vector–Jacobian product of one (unbatched) QP by an LU solve of its KKT system.

    Args:
        Q, q, G, h, A, b: the QP (dense or sparse; densified here); ``G``/``A`` may be None.
        x, nu, mu, active: its primal–dual solution and active mask.
        grad_x: ``∂L/∂x*``.
        kind: ``"reduced"`` (active-set KKT; ground truth) or ``"full"`` (OptNet's KKT).

    Returns:
        :class:`dxpp.QPGrad` of dense float64 arrays (``None`` for absent ``G``/``A``).
    """
    check_choice(kind, "kind", ("reduced", "full"))
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    Qd = _dense(Q, n)
    Gd, Ad = _dense(G, n), _dense(A, n)
    hv = np.zeros(0) if h is None else np.asarray(h, dtype=np.float64)
    nu = np.zeros(0) if G is None else np.asarray(nu, dtype=np.float64)
    mu = np.zeros(0) if A is None else np.asarray(mu, dtype=np.float64)
    act = np.zeros(0, bool) if G is None else np.asarray(active, dtype=bool)
    g = check_finite_array(grad_x, "grad_x")  # NaN/inf upstream gives all-NaN gradients
    m, p = Gd.shape[0], Ad.shape[0]
    if kind == "reduced":
        J = np.flatnonzero(act)
        C = np.vstack([Gd[J], Ad])
        k = C.shape[0]
        K = np.block([[Qd, C.T], [C, np.zeros((k, k))]])
        sol = sla.lu_solve(sla.lu_factor(K), np.concatenate([g, np.zeros(k)]))
        u, eta = sol[:n], sol[n:]
        eta_I = np.zeros(m)
        eta_I[J] = eta[: J.size]
        eta_E = eta[J.size :]
        nu_used = np.zeros(m)
        nu_used[J] = nu[J]
    else:
        slack = Gd @ x - hv
        K = np.zeros((n + m + p, n + m + p))
        K[:n, :n] = Qd
        K[:n, n : n + m] = Gd.T
        K[:n, n + m :] = Ad.T
        K[n : n + m, :n] = nu[:, None] * Gd
        K[n : n + m, n : n + m] = np.diag(slack)
        K[n + m :, :n] = Ad
        sol = sla.lu_solve(sla.lu_factor(K), np.concatenate([g, np.zeros(m + p)]), trans=1)
        u, d_nu, eta_E = sol[:n], sol[n : n + m], sol[n + m :]
        eta_I = nu * d_nu
        nu_used = nu
    # each gradient is one rank-2 product (the same assembly as dxpp's backward)
    gQ = np.column_stack([u, x]) @ np.vstack([-0.5 * x, -0.5 * u])
    gG = np.column_stack([nu_used, eta_I]) @ np.vstack([-u, -x]) if G is not None else None
    gA = np.column_stack([mu, eta_E]) @ np.vstack([-u, -x]) if A is not None else None
    return QPGrad(
        gQ, -u, gG, eta_I if G is not None else None, gA, eta_E if A is not None else None
    )
