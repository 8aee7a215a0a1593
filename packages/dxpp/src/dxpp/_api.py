"""Framework-free entry points shared by the adapters: the one option check
(:class:`LayerOptions`) of ``dxpp.torch`` and ``dxpp.jax``, the numpy VJP :func:`qp_vjp`, and
the glue that maps batched float64 core results back to the caller's shapes and dtype."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    check_choice,
    check_finite_array,
    check_positive,
    check_positive_int,
)

from ._backward import vjp_data
from ._defaults import ACTIVE_TOL, BETA, MODE, MODES, REFINE, SOLVER, C, Mode
from ._solve import resolve_tolerance, solve_data
from ._types import Gradient, MatrixLike, QPGrad, QPSolution
from ._validate import QPData, canonicalize

__all__ = ["LayerOptions", "qp_vjp", "rebatch", "to_input_shapes"]


def rebatch(sol: QPSolution, data: QPData) -> QPSolution:
    """A public (possibly unbatched, float32) solution → float64 with a batch axis."""

    def up(a: NDArray, vec: bool = True) -> NDArray:
        a = np.asarray(a)
        a = a.astype(np.float64) if a.dtype.kind == "f" else a
        return a if data.batched else a[None]

    return QPSolution(
        up(sol.x),
        up(sol.nu),
        up(sol.mu),
        up(sol.active).astype(bool),
        up(sol.weakly_active).astype(bool),
        sol.solver,
    )


def _vec_like(g: Any, shape: tuple[int, ...] | None) -> Gradient:
    if g is None or shape is None:
        return None
    if len(shape) == 1:
        return g.sum(axis=0)
    if shape[0] == 1 and g.shape[0] != 1:
        return g.sum(axis=0, keepdims=True)
    return g


def to_input_shapes(
    grad: QPGrad, shapes: dict[str, tuple[int, ...] | None], dtype: np.dtype
) -> QPGrad[Gradient]:
    """Sum vector gradients over the batch where the input was unbatched; cast to ``dtype``."""

    def cast(a: Any) -> Any:
        if a is None:
            return None
        return a.astype(dtype) if sp.issparse(a) else np.asarray(a, dtype=dtype)

    return QPGrad(
        cast(grad.Q),
        cast(_vec_like(grad.q, shapes["q"])),
        cast(grad.G),
        cast(_vec_like(grad.h, shapes["h"])),
        cast(grad.A),
        cast(_vec_like(grad.b, shapes["b"])),
    )


def _shape(v: Any) -> tuple[int, ...] | None:
    return None if v is None else tuple(np.shape(v))


def qp_vjp(
    Q: MatrixLike,
    q: ArrayLike,
    G: MatrixLike | None,
    h: ArrayLike | None,
    A: MatrixLike | None,
    b: ArrayLike | None,
    solution: QPSolution,
    grad_x: ArrayLike,
    *,
    mode: Mode = MODE,
    beta: float = BETA,
    c: float = C,
    refine: int = REFINE,
    profile: dict[str, float | str] | None = None,
) -> QPGrad[Gradient]:
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
    if not isinstance(solution, QPSolution):
        raise TypeError(
            f"solution must be the QPSolution that dxpp.solve_qp returned, got "
            f"{type(solution).__name__}"
        )
    data = canonicalize(Q, q, G, h, A, b, check_psd=False, warn_psd=False)
    sol = rebatch(solution, data)
    # NaN/inf upstream would give all-NaN gradients (an empty batch is legal)
    g = check_finite_array(grad_x, "grad_x", allow_empty=True)
    if g.shape != np.shape(solution.x):
        raise ValueError(
            f"grad_x must have the shape of solution.x {np.shape(solution.x)}, got {g.shape}"
        )
    g = g if data.batched else g[None]
    grad = vjp_data(data, sol, g, mode=mode, beta=beta, c=c, refine=refine, profile=profile)
    shapes = {"q": _shape(q), "h": _shape(h), "b": _shape(b)}
    return to_input_shapes(grad, shapes, data.dtype)


@dataclass(frozen=True)
class LayerOptions:
    """The options of every differentiable entry point (torch and JAX), checked once.

    Attributes:
        solver: ``"auto"`` or any ``qpsolvers`` backend name.
        mode: ``"penalty"`` (dXPP's one SPD solve) or ``"exact"`` (reduced KKT).
        beta, c: penalty width and factor (``ω = c/β``).
        refine: at most this many multiplier-refinement steps (0 = the paper's adjoint).
        tol: solver tolerance override (``None``: ``1e-5·β``).
        active_tol: relative slack threshold of the active set.
        check_psd: check dense ``Q`` for positive semi-definiteness in every call.
        solver_kwargs: extra backend options, as a sorted tuple of pairs (hashable).
    """

    solver: str = SOLVER
    mode: Mode = MODE
    beta: float = BETA
    c: float = C
    refine: int = REFINE
    tol: float | None = None
    active_tol: float = ACTIVE_TOL
    check_psd: bool = True
    solver_kwargs: tuple[tuple[str, object], ...] = ()

    @classmethod
    def check(
        cls,
        *,
        solver: str = SOLVER,
        mode: Mode = MODE,
        beta: float = BETA,
        c: float = C,
        refine: int = REFINE,
        tol: float | None = None,
        active_tol: float = ACTIVE_TOL,
        check_psd: bool = True,
        solver_kwargs: dict[str, object] | None = None,
    ) -> LayerOptions:
        """Validate every option (the error names the option) and build the record."""
        if not isinstance(solver, str):
            raise TypeError(f"solver must be a string, got {type(solver).__name__}")
        check_choice(mode, "mode", MODES)
        if not isinstance(check_psd, bool | np.bool_):
            raise TypeError(f"check_psd must be a bool, got {check_psd!r}")
        if solver_kwargs is not None and not isinstance(solver_kwargs, dict):
            raise TypeError(f"solver_kwargs must be a dict, got {type(solver_kwargs).__name__}")
        beta = check_positive(beta, "beta")
        return cls(
            solver=solver,
            mode=mode,
            beta=beta,
            c=check_positive(c, "c"),
            refine=check_positive_int(refine, "refine", minimum=0),
            tol=None if tol is None else resolve_tolerance(tol, beta),
            active_tol=check_positive(active_tol, "active_tol"),
            check_psd=bool(check_psd),
            solver_kwargs=tuple(sorted((solver_kwargs or {}).items())),
        )

    def solve(self, data: QPData) -> QPSolution:
        """The forward solve of a canonical batch with these options."""
        return solve_data(
            data,
            solver=self.solver,
            tol=self.tol,
            beta=self.beta,
            active_tol=self.active_tol,
            solver_kwargs=dict(self.solver_kwargs),
        )

    def vjp(self, data: QPData, sol: QPSolution, grad_x: NDArray) -> QPGrad[Gradient]:
        """The numpy/scipy backward (sparse input) with these options."""
        return vjp_data(
            data, sol, grad_x, mode=self.mode, beta=self.beta, c=self.c, refine=self.refine
        )
