"""PyTorch adapter: :class:`QPLayer`, a differentiable QP layer (``pip install dxpp[torch]``).

The forward pass calls :func:`dxpp.solve_qp` (any ``qpsolvers`` backend) on CPU numpy
copies; the backward pass is the shared numpy/scipy core (:func:`dxpp.qp_vjp`): one n×n SPD
solve per problem for ``mode="penalty"``. Dense, batched (leading batch axis on any input),
and sparse (``torch.sparse_coo``/``csr``/``csc``, gradients on the sparsity pattern) inputs;
float32 in → float32 out (computed in float64).

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
"""

from __future__ import annotations

from typing import Any

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError("dxpp.torch needs PyTorch: install it with `pip install dxpp[torch]`") from exc

import numpy as np
import scipy.sparse as sp

from ._api import to_input_shapes
from ._backward import vjp_data
from ._solve import solve_data
from ._validate import canonicalize

__all__ = ["QPLayer"]


def _to_numpy(t: Any) -> Any:
    if t is None:
        return None
    if not isinstance(t, torch.Tensor):
        return t
    if t.layout != torch.strided:
        coo = t.detach().cpu().to_sparse_coo().coalesce()
        idx = coo.indices().numpy()
        return sp.csc_matrix((coo.values().numpy(), (idx[0], idx[1])), shape=tuple(coo.shape))
    return t.detach().cpu().numpy()


def _to_torch(a: Any, like: torch.Tensor) -> torch.Tensor | None:
    if a is None:
        return None
    if sp.issparse(a):
        coo = a.tocoo()
        idx = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
        out = torch.sparse_coo_tensor(idx, torch.from_numpy(coo.data), tuple(a.shape))
        out = out.to(dtype=like.dtype, device=like.device).coalesce()
        if like.layout == torch.sparse_csr:
            return out.to_sparse_csr()
        if like.layout == torch.sparse_csc:
            return out.to_sparse_csc()
        return out
    return torch.from_numpy(np.ascontiguousarray(a)).to(dtype=like.dtype, device=like.device)


class _QPFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, opts: dict[str, Any], Q: Any, q: Any, G: Any, h: Any, A: Any,
                b: Any) -> Any:
        arrays = [_to_numpy(t) for t in (Q, q, G, h, A, b)]
        data = canonicalize(*arrays, check_psd=opts["check_psd"])
        sol = solve_data(data, solver=opts["solver"], tol=opts["tol"], beta=opts["beta"],
                         active_tol=opts["active_tol"], solver_kwargs=opts["solver_kwargs"])
        ctx.data, ctx.sol, ctx.opts = data, sol, opts
        ctx.inputs = (Q, q, G, h, A, b)

        def out(a: np.ndarray) -> torch.Tensor:
            t = torch.from_numpy(a if data.batched else a[0]).to(dtype=q.dtype, device=q.device)
            return t

        x, nu, mu = out(sol.x), out(sol.nu), out(sol.mu)
        ctx.mark_non_differentiable(nu, mu)
        return x, nu, mu

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_x: Any, _gnu: Any, _gmu: Any) -> Any:
        data, sol, opts = ctx.data, ctx.sol, ctx.opts
        g = grad_x.detach().cpu().numpy().astype(np.float64)
        g = g if data.batched else g[None]
        grad = vjp_data(data, sol, g, mode=opts["mode"], beta=opts["beta"], c=opts["c"],
                        refine=opts["refine"])
        _, q, _, h, _, b = ctx.inputs
        shapes = {"q": tuple(q.shape), "h": None if h is None else tuple(h.shape),
                  "b": None if b is None else tuple(b.shape)}
        grad = to_input_shapes(grad, shapes, np.dtype(np.float64))
        outs = [None]
        for need, g_np, t in zip(ctx.needs_input_grad[1:], grad, ctx.inputs):
            outs.append(_to_torch(g_np, t) if need and t is not None else None)
        return tuple(outs)


class QPLayer(torch.nn.Module):
    """Differentiable solution map ``(Q, q, G, h, A, b) ↦ x*`` of
    ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b``.

    Args:
        solver: ``"auto"`` or any ``qpsolvers`` backend name.
        mode: ``"penalty"`` (dXPP's one SPD solve) or ``"exact"`` (reduced KKT).
        beta: penalty width β (also sets the solver tolerance ``1e-5·β``).
        c: penalty factor; the penalty is ``c/β`` times stiffer than ``‖Q‖``.
        refine: at most this many multiplier-refinement steps in the backward pass (0 = the
            paper's pure penalty adjoint).
        tol: solver tolerance override (looser than ``1e-3·β`` is tightened with a warning).
        active_tol: relative slack threshold of the active set.
        return_duals: also return ``(ν*, μ*)`` (not differentiable).
        check_psd: check dense ``Q`` for positive semi-definiteness in every call.
        solver_kwargs: extra backend options.

    Example:
        >>> import torch
        >>> from dxpp.torch import QPLayer
        >>> Q = torch.eye(2, dtype=torch.float64)
        >>> q = torch.tensor([-1.0, -1.0], dtype=torch.float64, requires_grad=True)
        >>> x = QPLayer()(Q, q, torch.ones(1, 2, dtype=torch.float64),
        ...               torch.ones(1, dtype=torch.float64))
        >>> x.detach().numpy().round(6)
        array([0.5, 0.5])
    """

    def __init__(self, *, solver: str = "auto", mode: str = "penalty", beta: float = 1e-4,
                 c: float = 10.0, refine: int = 10, tol: float | None = None,
                 active_tol: float = 1e-7, return_duals: bool = False, check_psd: bool = True,
                 solver_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__()
        from icml26_shared.checks import check_choice, check_positive, check_positive_int

        check_choice(mode, "mode", ("penalty", "exact"))
        self.opts = {"solver": solver, "mode": mode, "beta": check_positive(beta, "beta"),
                     "c": check_positive(c, "c"),
                     "refine": check_positive_int(refine, "refine", minimum=0), "tol": tol, "active_tol": active_tol,
                     "check_psd": check_psd, "solver_kwargs": dict(solver_kwargs or {})}
        self.return_duals = return_duals

    def forward(self, Q: torch.Tensor, q: torch.Tensor, G: torch.Tensor | None = None,
                h: torch.Tensor | None = None, A: torch.Tensor | None = None,
                b: torch.Tensor | None = None) -> Any:
        """Solve and return ``x*`` (and ``(ν*, μ*)`` when ``return_duals``)."""
        if not isinstance(q, torch.Tensor):
            raise TypeError(f"q must be a torch.Tensor, got {type(q).__name__}")
        x, nu, mu = _QPFunction.apply(self.opts, Q, q, G, h, A, b)
        return (x, nu, mu) if self.return_duals else x
