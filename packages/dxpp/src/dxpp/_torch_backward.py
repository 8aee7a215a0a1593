"""The dense penalty backward in torch: formed and factored with ``torch.linalg``, batched, on
the tensors' device and inside torch's own intra-op thread pool.

The maths is that of :mod:`dxpp._backward` (the numpy/scipy core, which stays the path for
sparse input): with the active rows ``C = [G_J; A]``, right-hand sides ``d = [h_J; b]`` and
multipliers ``λ = [ν_J; μ]``, solve the SPD system

.. math::
    (Q + C^\\top \\mathrm{diag}(w)\\, C)\\, v = \\partial L/\\partial x^*,\\qquad t = w \\odot Cv,

refine the multipliers by at most ``refine`` method-of-multipliers steps that reuse the one
Cholesky factor, and return ``∂q = −v``, ``∂Q = −½(vxᵀ + xvᵀ)``, ``∂h_J = t_I``,
``∂G_J = −(ν_J vᵀ + t_I xᵀ)``, ``∂b = t_E``, ``∂A = −(μ vᵀ + t_E xᵀ)``. A batch is handled in one
call: the active rows of every problem are gathered into a ``(B, k_max, n)`` block padded with
zero-weight rows, so ``H`` is one batched ``torch.linalg.cholesky_ex``.

Nothing here calls numpy/scipy linear algebra, so the backward never runs OpenBLAS's thread
pool next to torch's (the oversubscription that made the numpy backward erratic under load).

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np
import torch
from numpy.typing import NDArray

from icml26_shared.threads import single_thread, threads

from ._defaults import BETA, REFINE, C, Mode
from ._types import NON_UNIQUE_WARNING, POWER_ITERATIONS, RETRY_RESIDUAL, power_start

__all__ = ["TorchGrads", "torch_vjp"]

Tensor = torch.Tensor
Solve = Callable[[Tensor], Tensor]


class TorchGrads(NamedTuple):
    """Per-problem gradients, float64, batch axis first: ``Q (B,n,n)``, ``q (B,n)``, ...
    (``None`` for a matrix whose gradient was not asked for)."""

    Q: Tensor | None
    q: Tensor
    G: Tensor | None
    h: Tensor
    A: Tensor | None
    b: Tensor


def _mv(M: Tensor, v: Tensor) -> Tensor:
    return (M @ v.unsqueeze(-1)).squeeze(-1)


def _mtv(M: Tensor, v: Tensor) -> Tensor:
    return (M.mT @ v.unsqueeze(-1)).squeeze(-1)


def spectral_norm(Q: Tensor) -> Tensor:
    """Batched power-iteration estimate of ‖Q_b‖₂ (same start vector as the numpy core)."""
    v = torch.tensor(power_start(Q.shape[-1]), dtype=Q.dtype, device=Q.device)
    v = v.expand(Q.shape[0], -1)
    lam = torch.zeros(Q.shape[0], dtype=Q.dtype, device=Q.device)
    for _ in range(POWER_ITERATIONS):
        u = _mv(Q, v)
        lam = torch.linalg.vector_norm(u, dim=-1)
        v = u / torch.where(lam > 0, lam, 1.0).unsqueeze(-1)
    return lam


def _masked_median(vals: Tensor, valid: Tensor) -> Tensor:
    """Median of ``vals[b, valid[b]]`` per row (numpy's: mean of the two middle values)."""
    k = vals.shape[-1]
    cnt = valid.sum(-1)
    if k == 0:
        return torch.ones(vals.shape[0], dtype=vals.dtype, device=vals.device)
    s = torch.where(valid, vals, torch.inf).sort(-1).values
    lo = ((cnt - 1).clamp(min=0) // 2).unsqueeze(-1)
    hi = (cnt // 2).clamp(max=k - 1).unsqueeze(-1)
    med = 0.5 * (s.gather(-1, lo) + s.gather(-1, hi)).squeeze(-1)
    return torch.where(cnt > 0, med, 1.0)


def _weights(
    C: Tensor, d: Tensor, x: Tensor, valid: Tensor, q_norm: Tensor, beta: float, c: float
) -> tuple[Tensor, Tensor]:
    """Scale-aware penalty weights (``dxpp.penalty_weights``), zero on padding rows, and the
    per-problem scale they use: ``‖Q‖₂``, or the median squared active-row norm when
    ``Q = 0``."""
    r2 = (C * C).sum(-1)
    r2 = torch.where(r2 > 0, r2, 1.0)
    med = _masked_median(r2, valid)
    scale = torch.where(q_norm > 0, q_norm, med)
    resid = _mv(C, x) - d
    xn = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    z = resid / (beta * (1.0 + d.abs() + r2.sqrt() * xn))
    s = torch.sigmoid(z)
    bump = 4.0 * s * (1.0 - s)
    w = (c / beta) * scale.unsqueeze(-1) / torch.minimum(r2, med.unsqueeze(-1)) * bump
    return torch.where(valid, w, 0.0), scale


_BLOCKS = 8  # column blocks of the lower triangle: (b + 1) / 2b = 9/16 of a full GEMM's flops


def _penalty_lower(Q: Tensor, X: Tensor) -> Tensor:
    """``Q + XᵀX`` on and below the diagonal (the upper triangle is ``Q``'s, unused): the
    symmetric rank-k update ``syrk`` that torch lacks, as GEMM blocks ``X_iᵀ X_{:i}`` of the
    row blocks ``i``, which reads 9/16 of the flops of ``baddbmm(Q, Xᵀ, X)`` with 8 blocks.
    Only ``torch.linalg.cholesky_ex`` reads it (the lower half).

    On the CPU, for ``n ≥ SPLIT_MIN_N``, the blocks are shared between the calling thread and
    one helper thread (:func:`_split_blocks`), each running its GEMMs on one intra-op thread:
    two independent streams of work, with no OpenMP barrier between them, so a second core
    helps when it is free and costs nothing when another process holds it."""
    n = Q.shape[-1]
    H = Q.clone()
    edges = [round(i * n / _BLOCKS) for i in range(_BLOCKS + 1)]
    blocks = [(a, b) for a, b in pairwise(edges) if b > a]

    def run(part: list[tuple[int, int]]) -> None:
        for a, b in part:
            H[:, a:b, :b].baddbmm_(X[..., a:b].mT, X[..., :b])

    if H.device.type == "cpu" and n >= SPLIT_MIN_N and _helper_threads() > 0:
        mine, theirs = _split_blocks(blocks)
        future = _executor().submit(run, theirs)
        try:
            run(mine)
        finally:
            future.result()
    else:
        run(blocks)
    return H


SPLIT_MIN_N = 256  # n from which the penalty GEMM is shared with a helper thread


def _split_blocks(
    blocks: list[tuple[int, int]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Two lists of blocks of about equal cost (block ``(a, b)`` costs ``(b − a)·b``)."""
    mine: list[tuple[int, int]] = []
    theirs: list[tuple[int, int]] = []
    cost = [0, 0]
    for blk in sorted(blocks, key=lambda ab: -(ab[1] - ab[0]) * ab[1]):
        k = 0 if cost[0] <= cost[1] else 1
        (mine if k == 0 else theirs).append(blk)
        cost[k] += (blk[1] - blk[0]) * blk[1]
    return mine, theirs


@functools.cache
def _helper_threads() -> int:
    """1 when this process may run on more than one core, else 0."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return 1 if cores > 1 else 0


@functools.cache
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="dxpp-gemm")


#: n up to which the whole CPU backward runs on one intra-op thread (see :func:`torch_vjp`)
SERIAL_MAX_N = 1024


_CALLER = threading.local()  # the caller's thread count while the backward runs on one


#: n from which the CPU backward switches to one thread: below it torch's kernels are too
#: small to use a second thread, and the switch itself (``icml26_shared.threads.threads``,
#: which also limits the BLAS pools) costs about 1.3 ms per call
ONE_THREAD_MIN_N = 256


@contextmanager
def _one_thread(on: bool) -> Iterator[None]:
    """Run the block on one intra-op thread (``icml26_shared.threads.single_thread``),
    restoring the caller's settings afterwards, when ``on`` and torch uses more than one
    thread."""
    k = torch.get_num_threads()
    if not on or k == 1:
        yield
        return
    outer = getattr(_CALLER, "threads", None)
    _CALLER.threads = k if outer is None else outer
    try:
        with single_thread():
            yield
    finally:
        _CALLER.threads = outer


@contextmanager
def _threads(k: int) -> Iterator[None]:
    if k == torch.get_num_threads():
        yield
        return
    with threads(k):
        yield


def others_running() -> int | None:
    """Runnable tasks on the machine besides the caller, now (``procs_running`` of
    ``/proc/stat`` minus one); None where that file does not exist."""
    try:
        with open("/proc/stat", "rb") as f:
            for line in f:
                if line.startswith(b"procs_running"):
                    return max(int(line.split()[1]) - 1, 0)
    except OSError:
        return None
    return None


POOL_CHOLESKY_MIN_N = 512  # n from which an idle machine's cores factor the matrix together


def _cholesky(H: Tensor) -> tuple[Tensor, Tensor]:
    """``torch.linalg.cholesky_ex`` of the lower triangle **in place** (``H`` becomes ``L``).

    In place: one fresh ``(B, n, n)`` buffer fewer per backward, whose first-touch page
    faults cost about 1 ms at n = 800. Threads: MKL's threaded ``potrf`` synchronises its
    threads at every panel; when another process holds a core, each of those barriers waits
    for a descheduled thread (measured at n = 800 on 2 cores: 4.0 ms on 2 threads vs 6.6 ms on
    1 idle, but 12.5 ms, worst 28 ms, vs 6.4 ms beside one busy process). So the factorisation
    runs on the caller's thread count only when ``n ≥ POOL_CHOLESKY_MIN_N`` and, at that
    moment, nothing else is runnable on the machine (:func:`others_running`); otherwise on the
    one thread the backward runs on."""
    info = torch.empty(H.shape[:-2], dtype=torch.int32, device=H.device)
    caller = getattr(_CALLER, "threads", None)
    pool = (
        H.device.type == "cpu"
        and caller is not None
        and caller > 1
        and H.shape[-1] >= POOL_CHOLESKY_MIN_N
        and others_running() == 0
    )
    with _threads(caller if pool and caller is not None else torch.get_num_threads()):
        return torch.linalg.cholesky_ex(H, out=(H, info))


def _factor(make_H: Callable[[], Tensor], ridge: Tensor) -> tuple[Solve, str]:
    """Batched Cholesky of the lower triangle of ``H = make_H()`` (+ a ridge, then ×10³, on
    the problems where it fails); LU of the symmetric ``H`` for the whole batch if a problem
    still fails (``Q`` indefinite on the null space). The factor overwrites ``H``, so the
    rare failure paths rebuild it."""
    L, info = _cholesky(make_H())
    kind = "cholesky"
    bad = info != 0
    if bool(bad.any()):
        H = make_H()
        eye = torch.eye(H.shape[-1], dtype=H.dtype, device=H.device)
        for mult in (1.0, 1e3):
            idx = bad.nonzero().squeeze(-1)
            Lb, ib = _cholesky(H[idx] + (mult * ridge[idx])[:, None, None] * eye)
            L[idx] = Lb
            bad = bad.clone()
            bad[idx] = ib != 0
            kind = "cholesky+ridge"
            if not bool(bad.any()):
                warnings.warn(NON_UNIQUE_WARNING, RuntimeWarning, stacklevel=4)
                break
        if bool(bad.any()):
            warnings.warn(
                "the penalty matrix Q + CᵀWC is not positive definite (is Q positive "
                "semi-definite? check_psd=False skips that check); using an LU solve",
                RuntimeWarning,
                stacklevel=4,
            )
            H = H.tril() + H.tril(-1).mT
            LU, piv = torch.linalg.lu_factor(H)
            return (lambda r: torch.linalg.lu_solve(LU, piv, r.unsqueeze(-1)).squeeze(-1)), "lu"
    Lt = L.mT

    def solve(r: Tensor) -> Tensor:  # two triangular solves (cholesky_solve copies L per call)
        y = torch.linalg.solve_triangular(L, r.unsqueeze(-1), upper=False)
        return torch.linalg.solve_triangular(Lt, y, upper=True).squeeze(-1)

    return solve, kind


def _refine(
    Q: Tensor, C: Tensor, w: Tensor, g: Tensor, solve: Solve, refine: int, v_scale: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Penalty solve + multiplier steps (residual form), per problem until its update is
    below ``1e-9 (‖v‖ + v_scale)`` or stops halving; finished problems are frozen
    (``v_scale = ‖g‖/‖Q‖``: see ``dxpp._backward._refine``)."""
    v = solve(g)
    Cv = _mv(C, v)
    t = w * Cv
    B = g.shape[0]
    done = torch.zeros(B, dtype=torch.bool, device=g.device)
    conv = torch.zeros_like(done)
    prev = torch.full((B,), torch.inf, dtype=g.dtype, device=g.device)
    for _ in range(refine):
        r = g - _mv(Q, v) - _mtv(C, t + w * Cv)
        dv = torch.where(done.unsqueeze(-1), 0.0, solve(r))
        v = v + dv
        Cv = _mv(C, v)
        t = torch.where(done.unsqueeze(-1), t, t + w * Cv)
        rel = torch.linalg.vector_norm(dv, dim=-1) / (
            torch.linalg.vector_norm(v, dim=-1) + v_scale
        ).clamp(min=1e-300)
        new_conv = ~done & (rel <= 1e-9)
        stalled = ~done & ~new_conv & (rel > 0.5 * prev)
        conv = conv | new_conv
        prev = torch.where(done, prev, rel)
        done = done | new_conv | stalled
        if bool(done.all()):
            break
    return v, t, conv


def _kkt_residual(
    Q: Tensor, C: Tensor, g: Tensor, v: Tensor, t: Tensor, q_norm: Tensor, v_scale: Tensor
) -> Tensor:
    """Normwise backward error of ``[Q Cᵀ; C 0][v; t] = [g; 0]`` per problem, feasibility on
    the problem's scale, ``‖Cv‖/(‖C‖(‖v‖ + v_scale))`` (see ``dxpp._backward._kkt_residual``)."""
    norm = torch.linalg.vector_norm
    c_norm = (C * C).sum(-1).amax(-1).sqrt() if C.shape[1] else torch.zeros_like(q_norm)
    nv, nt = norm(v, dim=-1), norm(t, dim=-1)
    stat = norm(g - _mv(Q, v) - _mtv(C, t), dim=-1) / (
        norm(g, dim=-1) + q_norm * nv + c_norm * nt
    ).clamp(min=1e-300)
    feas = norm(_mv(C, v), dim=-1) / (c_norm * (nv + v_scale)).clamp(min=1e-300)
    return torch.maximum(stat, feas)


def _penalty_adjoint(
    Q: Tensor, C: Tensor, w: Tensor, g: Tensor, q_norm: Tensor, refine: int, v_scale: Tensor
) -> tuple[Tensor, Tensor]:
    """``(Q + Cᵀ W C) v = g``, refined; problems whose reduced-KKT backward error stays above
    ``RETRY_RESIDUAL`` (nearly dependent active rows, or a slow contraction) are redone with
    the weights ×10³ (at most twice)."""
    ridge = 1e-13 * q_norm.clamp(min=1.0) * Q.shape[-1]

    def attempt(
        Qa: Tensor, Ca: Tensor, wa: Tensor, ga: Tensor, ra: Tensor, sa: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        X = Ca * wa.sqrt().unsqueeze(-1)
        solve, _ = _factor(lambda: _penalty_lower(Qa, X), ra)
        return _refine(Qa, Ca, wa, ga, solve, refine, sa)

    v, t, conv = attempt(Q, C, w, g, ridge, v_scale)
    if not refine or bool(conv.all()):  # converged refinement: the residual check is moot
        return v, t
    res = _kkt_residual(Q, C, g, v, t, q_norm, v_scale)
    need = ~conv & (res > RETRY_RESIDUAL)
    for k in (1, 2):
        if not bool(need.any()):
            break
        idx = need.nonzero().squeeze(-1)
        v2, t2, conv2 = attempt(Q[idx], C[idx], w[idx] * 1e3**k, g[idx], ridge[idx], v_scale[idx])
        res2 = _kkt_residual(Q[idx], C[idx], g[idx], v2, t2, q_norm[idx], v_scale[idx])
        take = conv2 | (res2 < res[idx])
        v[idx] = torch.where(take.unsqueeze(-1), v2, v[idx])
        t[idx] = torch.where(take.unsqueeze(-1), t2, t[idx])
        res[idx] = torch.where(take, res2, res[idx])
        need = need.clone()
        need[idx] = ~conv2 & (res2 > RETRY_RESIDUAL)
    return v, t


def _exact_adjoint(Q: Tensor, C: Tensor, valid: Tensor, g: Tensor) -> tuple[Tensor, Tensor]:
    """Reduced KKT ``[Q Cᵀ; C 0][v; t] = [g; 0]`` by LU per problem (pseudo-inverse if
    singular)."""
    n = Q.shape[-1]
    v = torch.empty_like(g)
    t = torch.zeros(C.shape[:2], dtype=g.dtype, device=g.device)
    for i in range(g.shape[0]):
        Ci = C[i][valid[i]]
        k = Ci.shape[0]
        K = torch.zeros(n + k, n + k, dtype=g.dtype, device=g.device)
        K[:n, :n], K[:n, n:], K[n:, :n] = Q[i], Ci.T, Ci
        rhs = torch.cat([g[i], g.new_zeros(k)])
        sol, info = torch.linalg.solve_ex(K, rhs)
        if int(info) != 0 or not bool(torch.isfinite(sol).all()):
            sol = torch.linalg.pinv(K) @ rhs
        v[i] = sol[:n]
        t[i, valid[i]] = sol[n:]
    return v, t


def _active_rows(active: Tensor) -> tuple[Tensor, Tensor]:
    """Indices ``(B, k_max)`` of each problem's active rows (in order), and their validity."""
    k = active.sum(-1)
    kmax = int(k.max()) if active.numel() else 0
    order = torch.argsort((~active).to(torch.int8), dim=-1, stable=True)[:, :kmax]
    valid = torch.arange(kmax, device=active.device) < k.unsqueeze(-1)
    return order, valid


def _outer_grad(
    u: Tensor, v: Tensor, a: Tensor, b: Tensor, shared: bool, scale: float = 1.0
) -> Tensor:
    """``−scale·(u vᵀ + a bᵀ)`` per problem ``(B, r, n)``, or summed over the batch ``(r, n)``."""
    zero = u.new_zeros(())  # beta = 0: one GEMM of inner size 2 (or 2B), one pass over the output
    if shared:
        return torch.addmm(zero, torch.cat([u, a]).mT, torch.cat([v, b]), beta=0, alpha=-scale)
    return torch.baddbmm(
        zero, torch.stack([u, a], -1), torch.stack([v, b], -2), beta=0, alpha=-scale
    )


def torch_vjp(
    Q: Tensor,
    G: Tensor,
    h: Tensor,
    A: Tensor,
    b: Tensor,
    x: Tensor,
    nu: Tensor,
    mu: Tensor,
    active: Tensor,
    g: Tensor,
    *,
    mode: Mode = "penalty",
    beta: float = BETA,
    c: float = C,
    refine: int = REFINE,
    shared: tuple[bool, bool, bool] = (False, False, False),
    q_norm: Tensor | None = None,
    needs: tuple[bool, bool, bool] = (True, True, True),
) -> TorchGrads:
    """VJP of a canonical dense batch (float64 tensors, all with batch axis ``B``; matrices
    may be ``expand``-ed views): ``Q (B,n,n)``, ``G (B,m,n)``, ``A (B,p,n)``, vectors ``(B,·)``.

    ``mode``: ``"penalty"``, ``"exact"`` (per-problem reduced KKT LU, pseudo-inverse when
    singular) or ``"auto"``: the reduced KKT solve with the active bounds eliminated
    (:func:`_reduced_adjoint`) when :func:`prefer_reduced` says it is cheaper, with the
    penalty solve for the problems whose reduced system is singular; else the penalty solve.

    ``shared`` flags ``(Q, G, A)`` that are one matrix for the whole batch: their gradients
    are returned summed over the batch, ``(n, n)``/``(m, n)``/``(p, n)``, without forming the
    per-problem ones; ``needs`` flags the matrices whose gradients are wanted (the others
    are ``None``, never formed). Vector gradients are always per problem. ``q_norm`` ``(B,)``: the
    forward's estimates of ``‖Q_b‖₂`` (the same power iteration), else computed here.

    Threads: on the CPU with ``ONE_THREAD_MIN_N ≤ n ≤ SERIAL_MAX_N`` the whole backward runs
    on one intra-op thread (``icml26_shared.threads.single_thread`` for the call, the caller's
    settings restored after).
    Its kernels are small or barrier-heavy (batched GEMMs of a few MB, ``potrf`` panels,
    triangular solves); on two threads they ran faster only on an idle machine and several
    times slower beside one busy process, where each barrier waits for a descheduled thread.
    Larger problems keep torch's pool.
    """
    n = Q.shape[-1]
    with _one_thread(g.device.type == "cpu" and ONE_THREAD_MIN_N <= n <= SERIAL_MAX_N):
        return _dense_vjp(
            Q, G, h, A, b, x, nu, mu, active, g, mode, beta, c, refine, shared, q_norm, needs
        )


#: flops of the penalty path's Python-level work (the refinement loop: ~15 small kernels per
#: step) counted in :func:`prefer_reduced`'s comparison; about 0.3 ms at 3 GFlop/s
PENALTY_OVERHEAD_FLOPS = 1e6


def prefer_reduced(n: int, k: int, s: int) -> bool:
    """Whether the reduced KKT solve (an LU of size ``s``: free variables + general active
    rows) is cheaper than the penalty solve (``Q + CᵀWC`` formed from ``k`` active rows and
    Cholesky-factored at size ``n``, then refined): ``⅔s³ ≤ ⅓n³ + k n² + overhead``."""
    return 2.0 * s**3 <= n**3 + 3.0 * k * n * n + 3.0 * PENALTY_OVERHEAD_FLOPS


class BoundInfo(NamedTuple):
    """Which rows of ``G`` are simple bounds ``s·x_j ≤ h_i`` (one nonzero), per problem."""

    is_bound: Tensor  # (B, m) bool
    col: Tensor  # (B, m) the variable of each row (meaningful on bound rows)
    coef: Tensor  # (B, m) its coefficient


def bound_info(G: Tensor) -> BoundInfo:
    nz = G != 0
    is_bound = nz.sum(-1) == 1
    col = nz.to(torch.uint8).argmax(-1)
    coef = G.gather(-1, col.unsqueeze(-1)).squeeze(-1)
    return BoundInfo(is_bound, col, coef)


#: a reduced KKT LU whose smallest pivot is below this fraction of its largest is treated as
#: singular (dependent active rows, a flat Q on the free variables): the penalty path takes it
PIVOT_RATIO = 1e-11


def _reduced_sizes(active: Tensor, info: BoundInfo, n: int, p: int) -> tuple[Tensor, Tensor]:
    """Per problem: the variables fixed by an active bound row (the first such row per
    variable, index ``m`` where none) and the number of general active rows."""
    B, m = active.shape
    act_b = active & info.is_bound
    rows = torch.arange(m, device=active.device).expand(B, m)
    row_of = torch.full((B, n), m, dtype=torch.long, device=active.device)
    row_of = row_of.scatter_reduce(1, info.col, torch.where(act_b, rows, m), "amin")
    return row_of, (active & ~info.is_bound).sum(-1) + p


def _reduced_adjoint(
    Q: Tensor, G: Tensor, A: Tensor, active: Tensor, g: Tensor, info: BoundInfo, row_of: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The exact adjoint by the reduced KKT system with the active bounds eliminated.

    An active bound row ``i`` (``s·x_j ≤ h_i``) fixes ``v_j = 0``; on the free variables ``F``
    and the general active rows ``C = [G_J'; A]`` (bounds left out) solve

    .. math::
        \\begin{bmatrix} Q_{FF} & C_F^\\top \\\\ C_F & 0 \\end{bmatrix}
        \\begin{bmatrix} v_F \\\\ t \\end{bmatrix} = \\begin{bmatrix} g_F \\\\ 0 \\end{bmatrix}

    by one batched LU (padded to the batch's largest size with identity rows), and read the
    bound rows' multipliers off stationarity on the fixed variables:
    ``t_i = (g − Qv − Cᵀt)_j / s``. Returns ``(v, t_I (B, m), t_E (B, p), ok)``; ``ok`` is
    False where the LU is (numerically) singular (see ``PIVOT_RATIO``)."""
    B, n = g.shape
    m, p = G.shape[1], A.shape[1]
    dev, dt = g.device, g.dtype
    fixed = row_of < m
    F_idx, F_valid = _active_rows(~fixed)
    J_idx, J_valid = _active_rows(active & ~info.is_bound)
    bidx = torch.arange(B, device=dev)
    rows = bidx.unsqueeze(-1)
    Cg = torch.cat([G[rows, J_idx], A], dim=1)  # (B, kg, n)
    valid_g = torch.cat([J_valid, torch.ones((B, p), dtype=torch.bool, device=dev)], 1)
    f, kg = F_idx.shape[1], Cg.shape[1]
    QFF = Q[bidx[:, None, None], F_idx[:, :, None], F_idx[:, None, :]]
    CF = Cg.gather(2, F_idx.unsqueeze(1).expand(B, kg, f))
    CF = CF * (valid_g.unsqueeze(-1) & F_valid.unsqueeze(1))
    QFF = QFF * (F_valid.unsqueeze(-1) & F_valid.unsqueeze(1))
    K = torch.zeros((B, f + kg, f + kg), dtype=dt, device=dev)
    K[:, :f, :f] = QFF
    K[:, :f, f:] = CF.mT
    K[:, f:, :f] = CF
    pad = torch.cat([~F_valid, ~valid_g], 1).to(dt)
    K.diagonal(dim1=-2, dim2=-1).add_(pad)
    rhs = torch.cat([g.gather(1, F_idx) * F_valid, torch.zeros((B, kg), dtype=dt, device=dev)], 1)
    LU, piv, info_lu = torch.linalg.lu_factor_ex(K)
    dU = LU.diagonal(dim1=-2, dim2=-1).abs()
    ok = (info_lu == 0) & (dU.amin(-1) > PIVOT_RATIO * dU.amax(-1))
    sol = torch.linalg.lu_solve(LU, piv, rhs.unsqueeze(-1)).squeeze(-1)
    ok = ok & torch.isfinite(sol).all(-1)
    sol = torch.where(ok.unsqueeze(-1), sol, 0.0)
    vF = sol[:, :f] * F_valid
    tg = sol[:, f:] * valid_g
    v = torch.zeros((B, n), dtype=dt, device=dev).scatter_add(1, F_idx, vF)
    r = g - _mv(Q, v) - _mtv(Cg, tg)  # nonzero only on the fixed variables
    kI = J_idx.shape[1]
    t_I = torch.zeros((B, m + 1), dtype=dt, device=dev)
    t_I.scatter_(1, J_idx, tg[:, :kI])  # padding indices are inactive rows: 0 written
    coef_of = info.coef.gather(1, row_of.clamp(max=max(m - 1, 0))) if m else r
    t_b = torch.where(fixed, r / torch.where(fixed, coef_of, 1.0), 0.0)
    t_I.scatter_(1, torch.where(fixed, row_of, m), t_b)
    return v, t_I[:, :m], tg[:, kI:], ok


#: largest reduced system solved by scipy for a single CPU problem (:func:`_reduced_one`)
SMALL_REDUCED_S = 160


def _reduced_numpy(
    Qn: NDArray[np.float64],
    Gn: NDArray[np.float64],
    An: NDArray[np.float64],
    act: NDArray[np.bool_],
    gn: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], bool]:
    """:func:`_reduced_adjoint` for one problem, assembled in numpy (one torch LU): at these
    sizes torch's per-kernel overhead (about 40 small kernels) costs more than the solve.
    Returns ``(v, t_I, t_E, ok)``."""
    m, n = Gn.shape
    nz = Gn != 0
    is_b = nz.sum(1) == 1
    col = nz.argmax(1)
    coef = Gn[np.arange(m), col]
    act_b = np.flatnonzero(act & is_b)
    row_of = np.full(n, m)
    np.minimum.at(row_of, col[act_b], act_b)
    fixed = row_of < m
    F = np.flatnonzero(~fixed)
    J = np.flatnonzero(act & ~is_b)
    Cg = np.vstack([Gn[J], An])
    C = Cg[:, F]
    f, kg = F.size, C.shape[0]
    K = np.zeros((f + kg, f + kg))
    K[:f, :f] = Qn[F][:, F]
    K[:f, f:] = C.T
    K[f:, :f] = C
    ok = True
    t_I = np.zeros(m)
    if f + kg:  # torch's LU on the numpy buffer: two kernels, no scipy wrapper overhead
        LU, piv, _ = torch.linalg.lu_factor_ex(torch.from_numpy(K))
        dU = LU.diagonal().abs()
        ok = bool(dU.min() > PIVOT_RATIO * dU.max())
        rhs = torch.from_numpy(np.r_[gn[F], np.zeros(kg)])
        sol = torch.linalg.lu_solve(LU, piv, rhs[:, None])[:, 0].numpy()
        ok = ok and bool(np.isfinite(sol).all())
        vF, tg = sol[:f], sol[f:]
    else:
        vF, tg = np.zeros(0), np.zeros(0)
    v = np.zeros(n)
    v[F] = vF
    r = gn - Qn @ v - Cg.T @ tg
    t_I[J] = tg[: J.size]
    Fx = np.flatnonzero(fixed)
    t_I[row_of[Fx]] = r[Fx] / coef[row_of[Fx]]
    return v, t_I, tg[J.size :], ok


def _reduced_size(Gn: NDArray[np.float64], act: NDArray[np.bool_], n: int, p: int) -> int:
    """Free variables + general active rows of one problem (see :func:`_reduced_numpy`)."""
    nz = Gn != 0
    is_b = nz.sum(1) == 1
    fixed = np.unique(nz[act & is_b].argmax(1)).size
    return n - fixed + int((act & ~is_b).sum()) + p


def _reduced_one(
    Q: Tensor, G: Tensor, A: Tensor, active: Tensor, g: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """:func:`_reduced_numpy` on the tensors of a one-problem CPU batch."""
    v, t_I, t_E, ok = _reduced_numpy(
        Q[0].numpy(), G[0].numpy(), A[0].numpy(), active[0].numpy(), g[0].numpy()
    )
    v_t, tI_t, tE_t = (torch.from_numpy(a)[None] for a in (v, t_I, t_E))
    return v_t, tI_t, tE_t, torch.tensor([ok])


def small_vjp(
    Q: NDArray[np.float64],
    G: NDArray[np.float64],
    A: NDArray[np.float64],
    x: NDArray[np.float64],
    nu: NDArray[np.float64],
    mu: NDArray[np.float64],
    active: NDArray[np.bool_],
    g: NDArray[np.float64],
    needs: tuple[bool, bool, bool],
) -> tuple[NDArray[np.float64] | None, ...] | None:
    """``mode="auto"`` for one unbatched CPU problem straight from the forward's numpy
    arrays: the gradients ``(Q, q, G, h, A, b)`` (``None`` where ``needs`` says unwanted) by
    the reduced KKT solve, or ``None`` when :func:`prefer_reduced` picks the penalty solve
    or the reduced system is singular (the caller then runs :func:`torch_vjp`)."""
    n, p = x.size, A.shape[0]
    s = _reduced_size(G, active, n, p)
    if s > SMALL_REDUCED_S or not prefer_reduced(n, int(active.sum()) + p, s):
        return None
    v, t_I, t_E, ok = _reduced_numpy(Q, G, A, active, g)
    if not ok:
        return None
    nu_I = np.where(active, nu, 0.0)
    gQ = -0.5 * (np.outer(v, x) + np.outer(x, v)) if needs[0] else None
    gG = -(np.outer(nu_I, v) + np.outer(t_I, x)) if needs[1] else None
    gA = -(np.outer(mu, v) + np.outer(t_E, x)) if needs[2] else None
    return gQ, -v, gG, t_I, gA, t_E


def _penalty_rows(
    Q: Tensor,
    G: Tensor,
    h: Tensor,
    A: Tensor,
    b: Tensor,
    x: Tensor,
    active: Tensor,
    g: Tensor,
    beta: float,
    c: float,
    refine: int,
    q_norm: Tensor | None,
    exact: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(v, t_I (B, m), t_E (B, p))`` by the penalty solve (or ``exact``: the per-problem
    reduced KKT LU with a pseudo-inverse fallback) on all active rows."""
    idx, valid_I = _active_rows(active)
    rows = torch.arange(g.shape[0], device=g.device).unsqueeze(-1)
    C = torch.cat([G[rows, idx], A], dim=1)  # (B, kmax + p, n): the active rows
    d = torch.cat([h.gather(1, idx), b], dim=1)
    valid = torch.cat([valid_I, torch.ones(b.shape, dtype=torch.bool, device=g.device)], 1)
    if not bool(valid.all()):
        C = C * valid.unsqueeze(-1)
    if not exact:
        if q_norm is None:
            q_norm = spectral_norm(Q)
        w, scale = _weights(C, d, x, valid, q_norm, beta, c)
        # the natural size of the adjoint, ‖g‖/‖Q‖ (see dxpp._backward._refine)
        v_scale = torch.linalg.vector_norm(g, dim=-1) / scale
        v, t = _penalty_adjoint(Q, C, w, g, q_norm, refine, v_scale)
    else:
        v, t = _exact_adjoint(Q, C, valid, g)
    kmax = idx.shape[1]
    t_I = torch.zeros_like(h).scatter(1, idx, torch.where(valid_I, t[:, :kmax], 0.0))
    return v, t_I, t[:, kmax:]


def _dense_vjp(*args: Any) -> TorchGrads:
    """The body of :func:`torch_vjp` (positional arguments in its order)."""
    Q, G, h, A, b, x, nu, mu, active, g, mode, beta, c, refine, shared, q_norm, needs = args
    # Q is used as given: the forward checked its symmetry (Cholesky reads one half)
    B, n = g.shape
    m, p = G.shape[1], A.shape[1]
    reduced = one = False
    info: BoundInfo | None = None
    if mode == "auto" and B == 1 and g.device.type == "cpu":
        act = active[0].numpy()
        s = _reduced_size(G[0].numpy(), act, n, p)
        reduced = prefer_reduced(n, int(act.sum()) + p, s)
        one = s <= SMALL_REDUCED_S
    elif mode == "auto" and B:
        info = bound_info(G)
        row_of, kg = _reduced_sizes(active, info, n, p)
        s = int(((row_of == m).sum(-1) + kg).max())
        reduced = prefer_reduced(n, int(active.sum(-1).max()) + p, s)
    if reduced:
        if one:
            v, t_I, t_E, ok = _reduced_one(Q, G, A, active, g)
        else:
            info = bound_info(G) if info is None else info
            row_of, _ = _reduced_sizes(active, info, n, p)
            v, t_I, t_E, ok = _reduced_adjoint(Q, G, A, active, g, info, row_of)
        if not bool(ok.all()):  # singular reduced systems: the penalty solve takes them
            bad = (~ok).nonzero().squeeze(-1)
            pq = None if q_norm is None else q_norm[bad]
            vb, tIb, tEb = _penalty_rows(
                Q[bad],
                G[bad],
                h[bad],
                A[bad],
                b[bad],
                x[bad],
                active[bad],
                g[bad],
                beta,
                c,
                refine,
                pq,
                False,
            )
            v[bad], t_I[bad], t_E[bad] = vb, tIb, tEb
    else:
        v, t_I, t_E = _penalty_rows(
            Q, G, h, A, b, x, active, g, beta, c, refine, q_norm, mode == "exact"
        )
    nu_I = torch.where(active, nu, 0.0)
    gQ = _outer_grad(v, x, x, v, shared[0], 0.5) if needs[0] else None
    gG = _outer_grad(nu_I, v, t_I, x, shared[1]) if needs[1] else None
    gA = _outer_grad(mu, v, t_E, x, shared[2]) if needs[2] else None
    return TorchGrads(gQ, -v, gG, t_I, gA, t_E)
