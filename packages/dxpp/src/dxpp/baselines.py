"""Baselines dxpp is measured against: exact KKT adjoints computed in numpy, in torch and by
a sparse LDLᵀ, on the forward solution dxpp returns (so only the backward differs).

* :func:`kkt_vjp` — numpy/scipy LU of the reduced (dQP) or the full (OptNet) KKT system; the
  ground truth of the tests.
* :func:`torch_kkt_vjp` — the same two systems formed and LU-factored with ``torch.linalg``
  (what a torch user would write; the like-for-like peer of ``dxpp.torch``'s backward).
* :func:`sparse_kkt_ldl_vjp` — the reduced KKT system of a sparse QP as the quasi-definite
  ``[Q Cᵀ; C −δI]`` factored by qdldl (the sparse peer).

Full KKT (OptNet): with ``K = [Q Gᵀ Aᵀ; diag(ν)G diag(Gx − h) 0; A 0 0]`` solve
``Kᵀ[d_x; d_ν; d_μ] = [∂L/∂x; 0; 0]``; ``∂q = −d_x``, ``∂Q = −½(d_x xᵀ + x d_xᵀ)``,
``∂h = ν⊙d_ν``, ``∂G = −(ν d_xᵀ + (ν⊙d_ν) xᵀ)``, ``∂b = d_μ``, ``∂A = −(μ d_xᵀ + d_μ xᵀ)``.
Reduced KKT (dQP): with the active rows ``C = [G_J; A]`` solve ``[Q Cᵀ; C 0][u; η] = [∂L/∂x; 0]``.

References:
    Amos, Kolter. "OptNet: Differentiable Optimization as a Layer in Neural Networks",
    ICML 2017. Magoon et al. "Differentiation Through Black-Box Quadratic Programming
    Solvers" (dQP), NeurIPS 2025.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from icml26_shared.checks import check_choice

from ._backward import _row_grad, _sym_outer_on
from ._reference import kkt_vjp
from ._types import Gradient, QPGrad

if TYPE_CHECKING:
    import torch

__all__ = ["kkt_vjp", "sparse_kkt_ldl_vjp", "torch_kkt_vjp"]


def torch_kkt_vjp(
    Q: Any,
    q: Any,
    G: Any,
    h: Any,
    A: Any,
    b: Any,
    x: Any,
    nu: Any,
    mu: Any,
    active: Any,
    grad_x: Any,
    *,
    kind: str = "full",
) -> QPGrad[torch.Tensor | None]:
    """Exact VJP of one (unbatched, dense) QP by an LU of its KKT system in ``torch.linalg``.

    Args:
        Q, q, G, h, A, b: torch tensors of one QP (``G``/``A`` may be ``None``).
        x, nu, mu, active: its primal–dual solution and active mask (tensors or arrays).
        grad_x: ``∂L/∂x*``.
        kind: ``"full"`` (OptNet's ``(n+m+p)`` non-symmetric LU) or ``"reduced"``
            (active-set ``(n+k)`` LU).

    Returns:
        :class:`dxpp.QPGrad` of float64 tensors on ``Q``'s device (``None`` for absent G/A).
    """
    import torch

    check_choice(kind, "kind", ("reduced", "full"))
    dev = Q.device

    def t(a: Any) -> Any:
        return (
            torch.as_tensor(np.asarray(a) if not isinstance(a, torch.Tensor) else a, device=dev)
            .detach()
            .to(torch.float64)
        )

    Qd, xv, g = t(Q), t(x), t(grad_x)
    n = xv.shape[0]
    Gd = t(G) if G is not None else torch.zeros(0, n, dtype=torch.float64, device=dev)
    Ad = t(A) if A is not None else torch.zeros(0, n, dtype=torch.float64, device=dev)
    hv = t(h) if h is not None else torch.zeros(0, dtype=torch.float64, device=dev)
    nuv = t(nu) if G is not None else torch.zeros(0, dtype=torch.float64, device=dev)
    muv = t(mu) if A is not None else torch.zeros(0, dtype=torch.float64, device=dev)
    m, p = Gd.shape[0], Ad.shape[0]
    if kind == "full":
        N = n + m + p
        K = torch.zeros(N, N, dtype=torch.float64, device=dev)
        K[:n, :n], K[:n, n : n + m], K[:n, n + m :] = Qd, Gd.T, Ad.T
        K[n : n + m, :n] = nuv[:, None] * Gd
        K[n : n + m, n : n + m] = torch.diag(Gd @ xv - hv)
        K[n + m :, :n] = Ad
        LU, piv = torch.linalg.lu_factor(K)
        rhs = torch.cat([g, g.new_zeros(m + p)]).unsqueeze(-1)
        sol = torch.linalg.lu_solve(LU, piv, rhs, adjoint=True).squeeze(-1)
        u, eta_I, eta_E = sol[:n], nuv * sol[n : n + m], sol[n + m :]
        nu_used = nuv
    else:
        J = (
            torch.as_tensor(
                np.asarray(active, dtype=bool) if not isinstance(active, torch.Tensor) else active,
                device=dev,
            )
            .nonzero()
            .squeeze(-1)
        )
        C = torch.cat([Gd[J], Ad])
        k = C.shape[0]
        K = torch.zeros(n + k, n + k, dtype=torch.float64, device=dev)
        K[:n, :n], K[:n, n:], K[n:, :n] = Qd, C.T, C
        LU, piv = torch.linalg.lu_factor(K)
        sol = torch.linalg.lu_solve(LU, piv, torch.cat([g, g.new_zeros(k)]).unsqueeze(-1))
        sol = sol.squeeze(-1)
        u = sol[:n]
        eta_I = torch.zeros(m, dtype=torch.float64, device=dev)
        eta_I[J] = sol[n : n + J.numel()]
        eta_E = sol[n + J.numel() :]
        nu_used = torch.zeros(m, dtype=torch.float64, device=dev)
        nu_used[J] = nuv[J]
    gQ = -0.5 * (torch.outer(u, xv) + torch.outer(xv, u))
    gG = -(torch.outer(nu_used, u) + torch.outer(eta_I, xv)) if G is not None else None
    gA = -(torch.outer(muv, u) + torch.outer(eta_E, xv)) if A is not None else None
    return QPGrad(
        gQ, -u, gG, eta_I if G is not None else None, gA, eta_E if A is not None else None
    )


def sparse_kkt_ldl_vjp(
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
    delta: float = 1e-12,
) -> QPGrad[Gradient]:
    """Exact VJP of one sparse QP: the reduced KKT ``[Q Cᵀ; C −δI]`` factored by qdldl (AMD).

    Gradients of the matrices live on their sparsity patterns (CSC), as dxpp's do.
    """
    import qdldl

    n = np.size(x)
    Gs = sp.csr_matrix(G) if G is not None else sp.csr_matrix((0, n))
    As = sp.csr_matrix(A) if A is not None else sp.csr_matrix((0, n))
    J = np.flatnonzero(active) if G is not None else np.zeros(0, dtype=int)
    C = sp.vstack([Gs[J], As], format="csc")
    k = C.shape[0]
    K = sp.bmat([[sp.csc_matrix(Q), C.T], [C, -delta * sp.eye(k)]], format="csc")
    s = qdldl.Solver(sp.triu(K, format="csc"), upper=True).solve(
        np.concatenate([np.asarray(grad_x, dtype=np.float64), np.zeros(k)])
    )
    v, t = s[:n], s[n:]
    nu = np.asarray(nu, dtype=np.float64) if G is not None else np.zeros(0)
    mu = np.asarray(mu, dtype=np.float64) if A is not None else np.zeros(0)
    gh = np.zeros(Gs.shape[0])
    gh[J] = t[: J.size]
    return QPGrad(
        _sym_outer_on(sp.csc_matrix(Q), v, x),
        -v,
        _row_grad(sp.csc_matrix(Gs), J, nu[J], t[: J.size], v, x) if G is not None else None,
        gh if G is not None else None,
        _row_grad(sp.csc_matrix(As), np.arange(As.shape[0]), mu, t[J.size :], v, x)
        if A is not None
        else None,
        t[J.size :] if A is not None else None,
    )
