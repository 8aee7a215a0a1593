"""Framework-free entry points shared by the adapters: a numpy VJP and the glue that maps
batched float64 core results back to the caller's shapes and dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._backward import QPGrad, vjp_data
from ._solve import QPSolution
from ._validate import QPData, canonicalize

__all__ = ["qp_vjp", "rebatch", "to_input_shapes"]


def rebatch(sol: QPSolution, data: QPData) -> QPSolution:
    """A public (possibly unbatched, float32) solution → float64 with a batch axis."""
    def up(a: NDArray, vec: bool = True) -> NDArray:
        a = np.asarray(a)
        a = a.astype(np.float64) if a.dtype.kind == "f" else a
        return a if data.batched else a[None]

    return QPSolution(up(sol.x), up(sol.nu), up(sol.mu), up(sol.active).astype(bool),
                      up(sol.weakly_active).astype(bool), sol.solver)


def _vec_like(g: NDArray | None, shape: tuple[int, ...] | None) -> NDArray | None:
    if g is None or shape is None:
        return None
    if len(shape) == 1:
        return g.sum(axis=0)
    if shape[0] == 1 and g.shape[0] != 1:
        return g.sum(axis=0, keepdims=True)
    return g


def to_input_shapes(grad: QPGrad, shapes: dict[str, tuple[int, ...] | None],
                    dtype: np.dtype) -> QPGrad:
    """Sum vector gradients over the batch where the input was unbatched; cast to ``dtype``."""
    def cast(a: Any) -> Any:
        if a is None:
            return None
        return a.astype(dtype) if sp.issparse(a) else np.asarray(a, dtype=dtype)

    return QPGrad(cast(grad.Q), cast(_vec_like(grad.q, shapes["q"])), cast(grad.G),
                  cast(_vec_like(grad.h, shapes["h"])), cast(grad.A),
                  cast(_vec_like(grad.b, shapes["b"])))


def _shape(v: Any) -> tuple[int, ...] | None:
    return None if v is None else tuple(np.shape(v))


def qp_vjp(
    Q: Any, q: Any, G: Any, h: Any, A: Any, b: Any, solution: QPSolution, grad_x: Any, *,
    mode: str = "penalty", beta: float = 1e-4, c: float = 10.0, refine: int = 10,
    profile: dict[str, Any] | None = None,
) -> QPGrad:
    """Gradients of a loss w.r.t. ``(Q, q, G, h, A, b)`` given ``∂L/∂x*`` (numpy/scipy).

    ``penalty`` mode solves the one SPD system ``(Q + Cᵀ diag(w) C) v = ∂L/∂x*`` of dXPP
    (see :mod:`dxpp._backward` for the weights and the error bound); ``exact`` solves the
    reduced active-set KKT system.

    Args:
        Q, q, G, h, A, b: the QP, as passed to :func:`dxpp.solve_qp`.
        solution: the :class:`dxpp.QPSolution` that :func:`dxpp.solve_qp` returned for them.
        grad_x: ``∂L/∂x*`` with the shape of ``solution.x``.
        mode: ``"penalty"`` or ``"exact"``.
        beta, c: penalty width and factor; the penalty is ``c/β`` times stiffer than ``Q``.
        refine: at most this many multiplier-refinement steps reusing the factorisation
            (0 = the paper's pure penalty adjoint; see :func:`dxpp._backward.vjp_data`).
        profile: optional dict receiving the seconds spent per backward stage.

    Returns:
        :class:`dxpp.QPGrad` shaped like the inputs (sparse inputs give gradients on their
        sparsity pattern), in the input dtype.

    References:
        Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box
        Quadratic Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
    """
    data = canonicalize(Q, q, G, h, A, b, check_psd=False)
    sol = rebatch(solution, data)
    g = np.asarray(grad_x, dtype=np.float64)
    if g.shape != np.shape(solution.x):
        raise ValueError(f"grad_x must have the shape of solution.x {np.shape(solution.x)}, "
                         f"got {g.shape}")
    g = g if data.batched else g[None]
    grad = vjp_data(data, sol, g, mode=mode, beta=beta, c=c, refine=refine, profile=profile)
    shapes = {"q": _shape(q), "h": _shape(h), "b": _shape(b)}
    return to_input_shapes(grad, shapes, data.dtype)
