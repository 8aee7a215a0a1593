"""A batched forward for many small dense QPs: ProxQP's ``BatchQP`` solved in parallel.

OptNet's regime is many small QPs (a batch of B = 128 with n = 10–50) where a Python loop
of one ``qpsolvers`` call per problem spends most of its time outside the solver. Here the
whole batch is handed to ProxSuite's dense ``BatchQP`` and solved by
``proxsuite.proxqp.dense.solve_in_parallel`` (in C++, on one thread: see
:func:`forward_threads`),
with the same ProxQP algorithm and tolerance as the per-problem path; the duals, the
feasibility check and the active sets are post-processed exactly as there
(:func:`dxpp._finish.finish_solution`). A problem ProxQP does not report as solved goes back
to the per-problem path (with ``solver="auto"``'s fallback to the next backend and its
``QPError``).

It is chosen automatically (:func:`use_batched`) for dense batches of at least
``BATCH_MIN`` problems with ``n ≤ BATCH_MAX_N``, when the solver is ``"auto"`` or
``"proxqp"`` without extra backend options; larger problems keep the per-problem loop,
whose time is dominated by the solves themselves.

References:
    Bambade, Schramm, El Kazdadi, Caron, Taylor, Carpentier. "PROX-QP: Yet another Quadratic
    Programming Solver for Robotics and beyond", RSS 2022 (ProxQP, ProxSuite).
    Amos, Kolter. "OptNet: Differentiable Optimization as a Layer in Neural Networks",
    ICML 2017 (the batched small-QP regime).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from icml26_shared.threads import threads

from ._finish import finish_solution
from ._types import POWER_ITERATIONS, power_start
from ._validate import QPData, QPError

__all__ = ["BATCH_MAX_N", "BATCH_MIN", "solve_batched", "use_batched"]

BATCH_MIN = 4
BATCH_MAX_N = 200


def _proxsuite() -> Any:
    try:
        import proxsuite  # pyright: ignore[reportMissingImports]  # (a cmeel prefix)
    except ImportError:  # pragma: no cover - proxsuite is a declared dependency
        return None
    dense = getattr(getattr(proxsuite, "proxqp", None), "dense", None)
    if dense is None or not hasattr(dense, "BatchQP") or not hasattr(dense, "solve_in_parallel"):
        return None  # pragma: no cover - ProxSuite older than 0.6
    return proxsuite


def use_batched(data: QPData, solver: str, solver_kwargs: dict[str, Any] | None) -> bool:
    """Whether :func:`solve_batched` handles this batch (see the module docstring)."""
    return (
        not data.sparse
        and data.batch >= BATCH_MIN
        and 0 < data.n <= BATCH_MAX_N
        and solver == "proxqp"
        and not solver_kwargs
        and _proxsuite() is not None
    )


FORWARD_THREADS = 1


def forward_threads() -> int:
    """OpenMP threads for the batched solve: one. ProxSuite's OpenMP pool keeps spinning
    after each parallel region; beside torch's own pool (the backward, the user's network)
    that spin cost more than the second thread saved: measured at B = 128, n = 20 on 2
    cores, 21 ms forward on 2 threads against 28 ms on one, but the torch work that followed
    ran 3-30x slower."""
    return FORWARD_THREADS


def _solve_keeping_threads(dense: Any, qps: Any) -> None:
    """``solve_in_parallel`` sets OpenMP's thread count, which (one OpenMP runtime per
    process) would leave the caller's torch on that many threads: the count is restored
    (``icml26_shared.threads.threads`` at the caller's own count restores it on exit)."""
    torch = sys.modules.get("torch")
    if torch is None:
        dense.solve_in_parallel(qps, forward_threads())
        return
    with threads(torch.get_num_threads()):
        dense.solve_in_parallel(qps, forward_threads())


def solve_batched(data: QPData, tol: float, active_tol: float) -> dict[int, tuple]:
    """Solve every problem of a dense batch with ProxQP's ``BatchQP``; returns the finished
    ``(x, ν, μ, active, weak)`` of the problems it solved, keyed by batch index (the others
    are left to the per-problem path)."""
    dense = _proxsuite().proxqp.dense
    solved_status = _proxsuite().proxqp.QPSolverOutput.PROXQP_SOLVED
    n, m, p = data.n, data.m, data.p
    qps = dense.BatchQP()
    items = [data.item(k) for k in range(data.batch)]
    lower = np.full(m, -np.inf)
    for Q, q, G, h, A, b in items:
        qp = qps.init_qp_in_place(n, p, m)
        qp.settings.eps_abs = tol
        qp.settings.eps_rel = tol
        qp.settings.verbose = False
        qp.init(
            np.ascontiguousarray(Q),
            q,
            np.ascontiguousarray(A) if p else None,
            b if p else None,
            np.ascontiguousarray(G) if m else None,
            lower if m else None,
            h if m else None,
        )
    _solve_keeping_threads(dense, qps)
    results = [qps.get(k).results for k in range(data.batch)]
    ok = np.array(
        [r.info.status == solved_status and np.all(np.isfinite(r.x)) for r in results], bool
    )
    idx = np.flatnonzero(ok)
    if not idx.size:
        return {}
    X = np.stack([np.array(results[k].x) for k in idx])
    Z = np.stack([np.array(results[k].z) for k in idx]) if m else np.zeros((idx.size, 0))
    Y = np.stack([np.array(results[k].y) for k in idx]) if p else np.zeros((idx.size, 0))
    out: dict[int, tuple] = {}
    fin = finish_batch(data, idx, X, Z, Y, tol, active_tol)
    for j, k in enumerate(idx):
        done = fin[j]
        if done is not None:
            out[int(k)] = done
            continue
        try:  # duals not finite, or infeasible: the per-problem finish (recovers or raises)
            Q, q, G, h, A, b = items[k]
            out[int(k)] = finish_solution(
                Q, q, G, h, A, b, X[j], Z[j], Y[j], "solved", "proxqp", tol, active_tol, int(k)
            )
        except QPError:
            continue  # the per-problem path reports it (or its fallback solves it)
    return out


def _stack(M: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``(len(idx), r, n)``: the problems' own matrices, or a shared one broadcast."""
    if M.ndim == 3 and M.shape[0] != 1:
        return M[idx]
    return np.broadcast_to(M if M.ndim == 2 else M[0], (idx.size, *M.shape[-2:]))


def finish_batch(
    data: QPData,
    idx: np.ndarray,
    X: np.ndarray,
    Z: np.ndarray,
    Y: np.ndarray,
    tol: float,
    active_tol: float,
) -> list[tuple | None]:
    """:func:`dxpp._finish.finish_solution` for many problems at once (the same tests, as
    batched array operations); ``None`` where a problem needs the per-problem treatment
    (constraint violation, non-finite duals)."""
    Q = _stack(data.Q, idx)
    G = _stack(data.G, idx)
    A = _stack(data.A, idx)
    h, b = data.h[idx], data.b[idx]
    m = G.shape[1]
    viol_scale = 1.0 + np.maximum(
        np.abs(h).max(axis=1, initial=0.0), np.abs(b).max(axis=1, initial=0.0)
    )
    Gx = np.einsum("bij,bj->bi", G, X)
    Ax = np.einsum("bij,bj->bi", A, X)
    viol = np.maximum((Gx - h).max(axis=1, initial=0.0), np.abs(Ax - b).max(axis=1, initial=0.0))
    good = viol <= max(1e3 * tol, 1e-6) * viol_scale
    nu = np.maximum(Z, 0.0)
    good &= np.isfinite(nu).all(axis=1) & np.isfinite(Y).all(axis=1)
    v = np.broadcast_to(power_start(data.n), X.shape)
    lam = np.zeros(idx.size)
    for _ in range(POWER_ITERATIONS):  # dxpp._types.spectral_norm, batched
        u = np.einsum("bij,bj->bi", Q, v)
        lam = np.linalg.norm(u, axis=1)
        v = u / np.where(lam > 0, lam, 1.0)[:, None]
    if m:
        r2 = np.einsum("bij,bij->bi", G, G)
        q_norm = np.where(lam > 0, lam, np.median(r2, axis=1))
        row_norm = np.sqrt(r2)
        slack = h - Gx
        tau = active_tol * (1.0 + np.abs(h) + row_norm * np.linalg.norm(X, axis=1)[:, None])
        active = (slack <= tau) | (nu * r2 > 1e3 * np.maximum(slack, 0.0) * q_norm[:, None])
        weak = active & (nu <= 1e-7 * (1.0 + np.abs(nu).max(axis=1, keepdims=True)))
    else:
        active = weak = np.zeros((idx.size, 0), bool)
    return [
        (X[j], nu[j], Y[j], active[j], weak[j], float(lam[j])) if good[j] else None
        for j in range(idx.size)
    ]
