"""Forward pass: solve the QP with any ``qpsolvers`` backend, get duals and the active set.

The forward solve is where most layers lose accuracy: at OSQP's default tolerance the
active set is wrong and gradients are 25–90% off. :func:`solve_qp` therefore ties the solver
tolerance to the penalty width β (``tol = 1e-5·β`` unless told otherwise), turns polishing on
where the backend has it, and refuses (with a warning) tolerances looser than ``1e-3·β``.

Given the primal–dual solution ``(x*, ν*, μ*)`` of

.. math::
    \\min_x \\tfrac12 x^\\top Q x + q^\\top x \\quad\\text{s.t.}\\quad Gx \\le h,\\; Ax = b

(Lagrangian ``½xᵀQx + qᵀx + νᵀ(Gx − h) + μᵀ(Ax − b)``, ``ν ≥ 0``), the active set is
``J = {i : h_i − G_i x* ≤ τ_i}`` with the scale-aware threshold
``τ_i = active_tol · (1 + |h_i| + ‖G_i‖₂‖x*‖₂)``, plus every constraint whose multiplier
dominates its slack, ``ν_i‖G_i‖² > 10³·(h_i − G_i x*)·‖Q‖₂`` (interior-point solvers can leave
an active constraint with a slack of ~√tol); a constraint in ``J`` whose multiplier is
below ``dual_tol · (1 + ‖ν*‖_∞)`` is *weakly active*. If the backend returns no duals they are
recovered by least squares on stationarity ``Qx + q + G_Jᵀν_J + Aᵀμ = 0`` and ``ν`` is
clipped at zero.

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154, Section 3 (forward pass).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_positive

from ._batched import solve_batched, use_batched
from ._bounds import BoundRows, bounds_of, row_duals
from ._defaults import ACTIVE_TOL, BETA, SOLVER
from ._finish import finish_solution
from ._types import MatrixLike, QPSolution
from ._validate import QPData, QPError, canonicalize

__all__ = ["QPSolution", "auto_solver", "solve_data", "solve_qp", "solver_options"]

# qpsolvers backends that import JAX before the package they wrap: ``jaxopt_osqp_`` runs
# ``import jax.numpy`` and only then ``import jaxopt``. Without jaxopt installed the backend is
# unavailable anyway, but the attempt costs a full JAX import (1.8 s of the 2.1 s first
# ``import qpsolvers`` here; that was the 2.8–3.0 s first call of ``QPLayer``).
_JAX_BACKENDS = {"jaxopt_osqp_": "jaxopt", "qpax_": "qpax"}


def import_qpsolvers() -> Any:
    """``import qpsolvers`` without paying for JAX-based backends whose package is missing."""
    import importlib.util
    import sys

    if "qpsolvers" in sys.modules:
        return sys.modules["qpsolvers"]
    blocked = []
    for module, package in _JAX_BACKENDS.items():
        name = f"qpsolvers.solvers.{module}"
        if name not in sys.modules and importlib.util.find_spec(package) is None:
            sys.modules[name] = None  # type: ignore[assignment]  # → ImportError at once
            blocked.append(name)
    try:
        import qpsolvers
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return qpsolvers


DENSE_PREFERENCE = ("proxqp", "piqp", "quadprog", "clarabel", "osqp")
SPARSE_PREFERENCE = ("piqp", "osqp", "clarabel", "proxqp")
#: dense problems whose inequalities are all bounds (``s·x_j ≤ h_i``): the bounds go to the
#: solver natively; DAQP (dual active set) for ``n ≤ BOUNDS_SMALL_N``, else PIQP (dense
#: interior point). Measured per solve at tol 1e-9, one thread: 4×4 Sudoku (n = 64, 40
#: equalities, x ≥ 0) DAQP 0.23 ms, PIQP 0.8 ms, ProxQP 1.8 ms; long-only Markowitz PIQP vs
#: ProxQP 0.22 vs 0.37 ms (n = 50), 1.8 vs 9.3 ms (n = 200), 25 vs 84 ms (n = 500), where
#: DAQP's cost grows with the number of active bounds (15 ms at n = 200).
BOUNDS_SMALL_PREFERENCE = ("daqp", "piqp", "proxqp")
BOUNDS_PREFERENCE = ("piqp", "proxqp")
BOUNDS_SMALL_N = 64


def _bound_plan(data: QPData) -> list[BoundRows | None]:
    """Per problem, its :class:`~dxpp._bounds.BoundRows` when every inequality row of a dense
    batch is a bound (else ``None`` for all: the general path)."""
    none: list[BoundRows | None] = [None] * data.batch
    if data.sparse or data.m == 0 or data.batch == 0:
        return none
    G = data.G
    if G.ndim == 2 or G.shape[0] == 1:
        br = BoundRows(G if G.ndim == 2 else G[0])
        return [br] * data.batch if br.all_bounds else none
    if not bool(((G != 0).sum(axis=-1) == 1).all()):
        return none
    return [BoundRows(G[k]) for k in range(data.batch)]


def auto_solver(sparse: bool) -> str:
    """The backend ``solver="auto"`` picks: the first installed of a preference list (if it
    fails on a problem, ``auto`` retries that problem once with the next one).

    Measured on this machine (random dense QP, n = 1000, tol 1e-9): ProxQP dense 0.62 s,
    PIQP dense 0.99 s, quadprog 1.9 s, PIQP's sparse backend 94 s, OSQP ~11 s; hence the dense
    order ProxQP > PIQP > quadprog and, for sparse input, PIQP's sparse backend > OSQP.
    """
    qpsolvers = import_qpsolvers()

    prefs = SPARSE_PREFERENCE if sparse else DENSE_PREFERENCE
    for name in prefs:
        if name in qpsolvers.available_solvers:
            return name
    return qpsolvers.available_solvers[0]


def solver_options(solver: str, tol: float, sparse: bool) -> dict[str, Any]:
    """Keyword arguments setting ``solver``'s tolerance to ``tol`` (and polishing/backend)."""
    if solver == "osqp":
        return {
            "eps_abs": tol,
            "eps_rel": tol,
            "polish": True,
            "max_iter": 200_000,
            "eps_prim_inf": tol,
            "eps_dual_inf": tol,
        }
    if solver == "piqp":
        return {
            "eps_abs": tol,
            "eps_rel": tol,
            "check_duality_gap": True,
            "eps_duality_gap_abs": tol,
            "eps_duality_gap_rel": tol,
            "max_iter": 1000,
            "backend": "sparse" if sparse else "dense",
        }
    if solver == "proxqp":
        return {"eps_abs": tol, "eps_rel": tol, "backend": "sparse" if sparse else "dense"}
    if solver == "clarabel":
        return {"tol_feas": tol, "tol_gap_abs": tol, "tol_gap_rel": tol}
    if solver in ("cvxopt",):
        return {"abstol": tol, "reltol": tol, "feastol": tol}
    if solver == "daqp":
        return {"primal_tol": tol, "dual_tol": tol}
    if solver in ("scs",):
        return {"eps_abs": tol, "eps_rel": tol}
    if solver == "ecos":
        return {"feastol": tol, "abstol": tol, "reltol": tol}
    return {}


def _status(sol: Any) -> str:
    info = (sol.extras or {}).get("info") if hasattr(sol, "extras") else None
    for attr in ("status", "status_val"):
        if info is not None and hasattr(info, attr):
            return str(getattr(info, attr))
    if isinstance(sol.extras, dict) and "status" in sol.extras:
        return str(sol.extras["status"])
    return "found" if sol.found else "not found"


def _writable(a: NDArray) -> NDArray:
    return a if a.flags.writeable else a.copy()


def _solve_one(
    Q: Any,
    q: NDArray,
    G: Any,
    h: NDArray,
    A: Any,
    b: NDArray,
    solver: str,
    opts: dict[str, Any],
    tol: float,
    active_tol: float,
    index: int | None,
    bounds: BoundRows | None = None,
) -> tuple:
    """One problem through ``qpsolvers``; with ``bounds``, the bound rows of ``G`` go to the
    solver as ``lb ≤ x ≤ ub`` (see :mod:`dxpp._bounds`) and its multipliers come back per row."""
    qpsolvers = import_qpsolvers()

    m, p = G.shape[0], A.shape[0]
    if bounds is not None:
        box = bounds_of(bounds, h, q.size)
        Gg, hg = G[bounds.general], h[bounds.general]
        mg = hg.size
        Q, q, A, b = (_writable(a) for a in (Q, q, A, b))  # DAQP takes writable buffers
        problem = qpsolvers.Problem(
            Q,
            q,
            Gg if mg else None,
            hg if mg else None,
            A if p else None,
            b if p else None,
            box.lb,
            box.ub,
        )
    else:
        problem = qpsolvers.Problem(
            Q, q, G if m else None, h if m else None, A if p else None, b if p else None
        )
    try:
        sol = qpsolvers.solve_problem(problem, solver=solver, **opts)
    except qpsolvers.SolverError as exc:  # pragma: no cover - backend specific
        raise QPError(
            f"solver {solver!r} failed: {exc}", status="error", solver=solver, index=index
        ) from exc
    status = _status(sol)
    if not sol.found or sol.x is None or not np.all(np.isfinite(sol.x)):
        where = "" if index is None else f" (batch {index})"
        raise QPError(
            f"solver {solver!r} found no solution{where}: status {status} "
            "(infeasible or unbounded QP?)",
            status=status,
            solver=solver,
            index=index,
        )
    z = sol.z
    if bounds is not None and sol.z_box is not None:
        zg = z if z is not None and np.size(z) else np.zeros(bounds.general.size)
        z = row_duals(bounds, box, np.asarray(sol.z_box, np.float64), zg, m)
    elif bounds is not None:
        z = None  # no box multipliers: recovered by least squares in finish_solution
    return finish_solution(
        Q, q, G, h, A, b, sol.x, z, sol.y, status, solver, tol, active_tol, index
    )


def resolve_tolerance(tol: float | None, beta: float) -> float:
    """``tol`` defaults to ``1e-5·β``; a tolerance looser than ``1e-3·β`` is tightened to
    ``1e-5·β`` with a warning (loose forward solves give wrong active sets)."""
    beta = check_positive(beta, "beta")
    if tol is None:
        return 1e-5 * beta
    tol = check_positive(tol, "tol")
    if tol > 1e-3 * beta:
        warnings.warn(
            f"tol={tol:g} is too loose for beta={beta:g} (active set and gradients "
            f"would be unreliable); tightened to {1e-5 * beta:g}",
            stacklevel=3,
        )
        return 1e-5 * beta
    return tol


def solve_data(
    data: QPData,
    *,
    solver: str = SOLVER,
    tol: float | None = None,
    beta: float = BETA,
    active_tol: float = ACTIVE_TOL,
    solver_kwargs: dict[str, object] | None = None,
) -> QPSolution:
    """Solve every problem of a canonical batch; float64 arrays with a batch axis."""
    tol = resolve_tolerance(tol, beta)
    active_tol = check_positive(active_tol, "active_tol")
    qpsolvers = import_qpsolvers()

    bounds: list[BoundRows | None] = [None] * data.batch
    if solver == "auto":
        prefs = SPARSE_PREFERENCE if data.sparse else DENSE_PREFERENCE
        bounds = _bound_plan(data)
        if bounds and bounds[0] is not None:
            prefs = BOUNDS_SMALL_PREFERENCE if data.n <= BOUNDS_SMALL_N else BOUNDS_PREFERENCE
        candidates = [s for s in prefs if s in qpsolvers.available_solvers][:2]
    elif solver in qpsolvers.available_solvers:
        candidates = [solver]
    else:
        shown = ", ".join(repr(s) for s in ["auto", *qpsolvers.available_solvers])
        raise ValueError(f"solver must be one of {shown}, got {solver!r}")
    if data.batch == 0:  # an empty batch: empty results of the right trailing shapes

        def empty(size: int, dtype: Any = np.float64) -> NDArray:
            return np.zeros((0, size), dtype=dtype)

        return QPSolution(
            empty(data.n),
            empty(data.m),
            empty(data.p),
            empty(data.m, bool),
            empty(data.m, bool),
            candidates[0] if candidates else solver,
        )
    out: list[Any] = [None] * data.batch
    used: list[str] = []
    todo = list(range(data.batch))
    if use_batched(data, candidates[0], solver_kwargs):
        done = solve_batched(data, tol, active_tol)
        for k, res in done.items():
            out[k] = res
        if done:
            used.append("proxqp (batched)")
        todo = [k for k in todo if k not in done]
    for k in todo:
        error: QPError | None = None
        for name in candidates:  # "auto" falls back to the next backend once
            opts = solver_options(name, tol, data.sparse)
            opts.update(solver_kwargs or {})
            try:
                out[k] = _solve_one(
                    *data.item(k),
                    name,
                    opts,
                    tol,
                    active_tol,
                    k if data.batched else None,
                    bounds[k],
                )
                used.append(name)
                break
            except QPError as exc:
                error = error or exc
            except TypeError as exc:
                if not solver_kwargs:
                    raise
                raise TypeError(
                    f"solver_kwargs {sorted(solver_kwargs)} are not options of solver {name!r} "
                    f"({exc.__class__.__name__}: {str(exc).splitlines()[0]})"
                ) from None
        else:
            assert error is not None
            raise error
    x, nu, mu, act, weak, q_norms = (np.stack(z) for z in zip(*out))
    data.q_norms = q_norms.astype(np.float64)
    return QPSolution(x, nu, mu, act, weak, "+".join(sorted(set(used))))


def unbatch(sol: QPSolution, data: QPData) -> QPSolution:
    """Cast to the input dtype and drop the batch axis when the input had none."""

    def cast(a: NDArray) -> NDArray:
        a = a.astype(data.dtype) if a.dtype.kind == "f" else a
        return a if data.batched else a[0]

    return QPSolution(
        cast(sol.x),
        cast(sol.nu),
        cast(sol.mu),
        cast(sol.active),
        cast(sol.weakly_active),
        sol.solver,
    )


def solve_qp(
    Q: MatrixLike,
    q: ArrayLike,
    G: MatrixLike | None = None,
    h: ArrayLike | None = None,
    A: MatrixLike | None = None,
    b: ArrayLike | None = None,
    *,
    solver: str = SOLVER,
    tol: float | None = None,
    beta: float = BETA,
    active_tol: float = ACTIVE_TOL,
    check_psd: bool = True,
    solver_kwargs: dict[str, object] | None = None,
) -> QPSolution:
    """Solve ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b`` (numpy/scipy, no autograd).

    Args:
        Q: ``(n, n)`` symmetric PSD matrix, dense or ``scipy.sparse``; ``(B, n, n)`` batches.
        q: ``(n,)`` or ``(B, n)``.
        G, h: inequalities ``(m, n)``, ``(m,)`` (or batched), or ``None``.
        A, b: equalities ``(p, n)``, ``(p,)`` (or batched), or ``None``.
        solver: ``"auto"`` (see :func:`dxpp.auto_solver`) or any ``qpsolvers`` backend.
        tol: solver tolerance; default ``1e-5·beta``; looser than ``1e-3·beta`` is tightened
            with a warning.
        beta: penalty width of the backward pass (ties the forward tolerance to it).
        active_tol: relative slack threshold of the active set (see module docstring).
        check_psd: check dense ``Q`` for positive semi-definiteness (one Cholesky).
        solver_kwargs: extra keyword arguments for the backend (override ours).

    Returns:
        :class:`QPSolution` in the input's float dtype (float32 in → float32 out).

    Raises:
        QPError: the solver reports infeasible/unbounded/failed (``.status`` has its status).
        ValueError, TypeError: bad input.
    """
    data = canonicalize(Q, q, G, h, A, b, check_psd=check_psd)
    sol = solve_data(
        data, solver=solver, tol=tol, beta=beta, active_tol=active_tol, solver_kwargs=solver_kwargs
    )
    return unbatch(sol, data)
