"""End-to-end training steps through a QP layer: dxpp against ProxSuite, qpth, cvxpylayers.

    python packages/dxpp/benchmarks/end_to_end.py [--quick] [--busy] [--out FILE]

Two workloads written as a user of each layer would write them, run in one process on one
thread (``icml26_shared.threads.single_thread``) and timed **lock-step**: every repeat runs
one step of each method in turn, so a change of machine load hits them all alike; the
figure is the median over repeats and each peer's ratio is its median over dxpp's.

1. OptNet's 4×4 Sudoku (``n = 64`` one-hot cells): ``x* = argmin ½·0.1‖x‖² − puzzleᵀx``
   s.t. ``A x = A z₀``, ``x ≥ 0`` with a learned ``A ∈ R^{40×64}`` and ``log z₀``; one step is
   forward + backward of the mean squared error to the solved board + an Adam step, at
   batch ``B ∈ {1, 8, 128}``. Every method passes its layer the same tensors, broadcast the
   way OptNet does (``Q``, ``G``, ``h``, ``A``, ``b`` unbatched).
2. Long-only Markowitz: ``x* = argmin ½xᵀΣx − μᵀx`` s.t. ``1ᵀx = 1``, ``x ≥ 0``; one step
   is forward + backward of a realised return ``−rᵀx*`` w.r.t. ``Σ`` and ``μ``, at
   ``n ∈ {50, 100, 200, 500}``.

Peers at their defaults: ``proxsuite.torch.qplayer.QPFunction()`` (ProxQP forward, its own
backward), ``qpth.qp.QPFunction(verbose=-1)`` (batched interior point, full KKT) and
``cvxpylayers.torch.CvxpyLayer`` (SCS + diffcp; Σ enters it as the parameter ``Σ^{1/2}``
through a differentiable Cholesky, since ``quad_form`` of a parameter is not DPP). dxpp
runs ``dxpp.torch.QPFunction`` on the Sudoku (the qpth drop-in) and ``dxpp.torch.QPLayer``
on Markowitz, at its defaults.

Gradient accuracy: each method's gradient of the same loss w.r.t. the learned tensors, on
the first batch, against an exact adjoint (quadprog's active-set solution, the reduced KKT
system by LU: ``dxpp.kkt_vjp``), as ``‖g − g_exact‖/‖g_exact‖``.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import torch

import dxpp
from dxpp.torch import QPFunction, QPLayer
from icml26_shared.bench import BenchReport, Timing
from icml26_shared.threads import single_thread

Tensor = torch.Tensor
METHODS = ("dxpp", "proxsuite", "qpth", "cvxpylayers")
SUDOKU_BATCHES = (1, 8, 128)
MARKOWITZ_SIZES = (50, 100, 200, 500)
CELLS = 64  # 4 × 4 cells × 4 digits, one-hot
EQUALITIES = 40


# ------------------------------------------------------------------------------- problems
def sudoku_boards(count: int, seed: int) -> tuple[Tensor, Tensor]:
    """``count`` random 4×4 Sudoku puzzles with 8 of 16 cells given and their solutions, as
    one-hot ``(count, 64)`` float64 tensors (a valid grid relabelled and permuted)."""
    rng = np.random.default_rng(seed)
    base = np.array([[0, 1, 2, 3], [2, 3, 0, 1], [1, 0, 3, 2], [3, 2, 1, 0]])
    puzzles, boards = [], []
    for _ in range(count):
        grid = rng.permutation(4)[base]
        bands = [b * 2 + r for b in rng.permutation(2) for r in rng.permutation(2)]
        stacks = [s * 2 + c for s in rng.permutation(2) for c in rng.permutation(2)]
        grid = grid[bands][:, stacks]
        if rng.random() < 0.5:
            grid = grid.T
        one_hot = np.eye(4)[grid].reshape(-1)
        given = np.repeat(rng.permutation(16) < 8, 4)
        boards.append(one_hot)
        puzzles.append(one_hot * given)
    return torch.tensor(np.array(puzzles)), torch.tensor(np.array(boards))


def markowitz(n: int, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    """``(Σ, μ, r)``: a 5-factor covariance plus idiosyncratic variance (yearly scale), mean
    returns, and one realised return vector drawn around them."""
    rng = np.random.default_rng(seed)
    F = rng.normal(scale=0.15, size=(n, 5))
    cov = F @ F.T + np.diag(rng.uniform(0.02, 0.08, size=n))
    mu = rng.normal(0.06, 0.04, size=n)
    r = rng.multivariate_normal(mu, cov)
    return torch.tensor(cov), torch.tensor(mu), torch.tensor(r)


# ------------------------------------------------------------------------------- layers
# Each layer maps OptNet-style (Q, p, G, h, A, b) tensors to x* (B, n) or (n,).
Layer = Callable[..., Tensor]


def dxpp_layer(kind: str) -> Layer:
    if kind == "sudoku":
        return QPFunction(verbose=-1)
    return QPLayer()


def proxsuite_layer(kind: str) -> Layer:
    from proxsuite.torch.qplayer import QPFunction as ProxFunction

    fn = ProxFunction()

    def solve(Q: Tensor, p: Tensor, G: Tensor, h: Tensor, A: Tensor, b: Tensor) -> Tensor:
        lower = torch.full_like(h, -1e20)
        return fn(Q, p, A, b, G, lower, h)[0]

    return solve


def qpth_layer(kind: str) -> Layer:
    from qpth.qp import QPFunction as QpthFunction

    return QpthFunction(verbose=-1)


def cvxpylayers_layer(kind: str, n: int) -> Layer:
    """A CvxpyLayer for the workload (built once: its construction is timed separately)."""
    import cvxpy as cp
    from cvxpylayers.torch import CvxpyLayer

    x = cp.Variable(n)
    if kind == "sudoku":
        p, A, b = cp.Parameter(n), cp.Parameter((EQUALITIES, n)), cp.Parameter(EQUALITIES)
        prob = cp.Problem(cp.Minimize(0.05 * cp.sum_squares(x) + p @ x), [A @ x == b, x >= 0])
        layer = CvxpyLayer(prob, parameters=[p, A, b], variables=[x])

        def solve(Q: Tensor, p_: Tensor, G: Tensor, h: Tensor, A_: Tensor, b_: Tensor) -> Tensor:
            return layer(p_, A_, b_)[0]

        return solve
    S, q = cp.Parameter((n, n)), cp.Parameter(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(S @ x) + q @ x), [cp.sum(x) == 1, x >= 0])
    layer = CvxpyLayer(prob, parameters=[S, q], variables=[x])

    def solve_m(Q: Tensor, p_: Tensor, G: Tensor, h: Tensor, A_: Tensor, b_: Tensor) -> Tensor:
        S_ = torch.linalg.cholesky(Q).mT  # Σ = SᵀS
        return layer(S_, p_)[0]

    return solve_m


def make_layer(method: str, kind: str, n: int) -> Layer:
    if method == "cvxpylayers":
        return cvxpylayers_layer(kind, n)
    return {"dxpp": dxpp_layer, "proxsuite": proxsuite_layer, "qpth": qpth_layer}[method](kind)


@contextmanager
def _quiet() -> Iterator[None]:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        yield


# ------------------------------------------------------------------------------- workloads
@dataclass
class SudokuModel:
    """OptNet's ``OptNetEq`` on 4×4 boards: learned ``A`` and ``log z₀``, ``b = A z₀``."""

    layer: Layer
    A: Tensor
    log_z0: Tensor
    opt: torch.optim.Optimizer = field(init=False)

    def __post_init__(self) -> None:
        self.opt = torch.optim.Adam([self.A, self.log_z0], lr=1e-3)

    def loss(self, puzzles: Tensor, boards: Tensor) -> Tensor:
        Q = 0.1 * torch.eye(CELLS, dtype=torch.float64)
        G = -torch.eye(CELLS, dtype=torch.float64)
        h = torch.zeros(CELLS, dtype=torch.float64)
        b = self.A @ self.log_z0.exp()
        x = self.layer(Q, -puzzles, G, h, self.A, b)
        return (x.reshape(boards.shape) - boards).square().mean()

    def step(self, puzzles: Tensor, boards: Tensor) -> float:
        self.opt.zero_grad()
        loss = self.loss(puzzles, boards)
        loss.backward()
        self.opt.step()
        return float(loss)


@dataclass
class MarkowitzStep:
    layer: Layer
    Sigma: Tensor
    mu: Tensor
    r: Tensor

    def loss(self) -> Tensor:
        n = self.mu.shape[0]
        G = -torch.eye(n, dtype=torch.float64)
        h = torch.zeros(n, dtype=torch.float64)
        A = torch.ones(1, n, dtype=torch.float64)
        b = torch.ones(1, dtype=torch.float64)
        x = self.layer(self.Sigma, -self.mu, G, h, A, b).reshape(n)
        return -(self.r * x).sum()

    def step(self) -> float:
        self.Sigma.grad = None
        self.mu.grad = None
        loss = self.loss()
        loss.backward()
        return float(loss)


# ------------------------------------------------------------------------------- exact adjoint
class _Exact(torch.autograd.Function):
    """x* by quadprog (dual active set, exact to round-off), backward by the reduced KKT LU of
    ``dxpp.kkt_vjp`` per problem: the ground truth of the accuracy columns."""

    @staticmethod
    def forward(ctx: Any, Q: Tensor, p: Tensor, G: Tensor, h: Tensor, A: Tensor, b: Tensor) -> Any:
        B = p.shape[0] if p.ndim == 2 else 1

        def item(t: Tensor, base: int, k: int) -> np.ndarray:
            t = t.detach()
            return (t[k] if t.ndim == base + 1 else t).numpy()

        xs, grads_in = [], []
        for k in range(B):
            qp = [item(t, nd, k) for t, nd in zip((Q, p, G, h, A, b), (2, 1, 2, 1, 2, 1))]
            sol = dxpp.solve_qp(*qp, solver="quadprog", tol=1e-12, check_psd=False)
            xs.append(sol.x)
            grads_in.append((qp, sol))
        ctx.grads_in, ctx.shapes = grads_in, [t.shape for t in (Q, p, G, h, A, b)]
        x = torch.tensor(np.array(xs))
        return x if p.ndim == 2 else x[0]

    @staticmethod
    def backward(ctx: Any, gx: Tensor) -> Any:
        gx = gx.reshape(len(ctx.grads_in), -1)
        total: list[Any] = [None] * 6
        per: list[list[np.ndarray]] = [[] for _ in range(6)]
        for k, (qp, sol) in enumerate(ctx.grads_in):
            g = dxpp.kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, gx[k].numpy())
            for i, gi in enumerate(g):
                per[i].append(gi)
        for i, shape in enumerate(ctx.shapes):
            stack = torch.tensor(np.array(per[i]))
            total[i] = stack.sum(0) if len(shape) == stack.ndim - 1 else stack.reshape(shape)
        return tuple(total)


def exact_layer(Q: Tensor, p: Tensor, G: Tensor, h: Tensor, A: Tensor, b: Tensor) -> Tensor:
    return _Exact.apply(Q, p, G, h, A, b)


def _rel(a: Tensor, b: Tensor) -> float:
    return float((a.double() - b).norm() / b.norm().clamp(min=1e-300))


# ------------------------------------------------------------------------------- runners
@dataclass
class Case:
    """One workload at one size: a step per method, run lock-step."""

    name: str
    steps: dict[str, Callable[[], Any]]
    errors: dict[str, float]
    notes: dict[str, str] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)


T = TypeVar("T")


def _built(build: Callable[[], T], method: str, notes: dict[str, str]) -> T:
    """``build()`` with the solvers' output silenced; cvxpylayers' construction time (seconds,
    not part of a step) goes to ``notes``."""
    t0 = time.perf_counter()
    with _quiet():
        out = build()
    if method == "cvxpylayers":
        notes[method] = f"construction {time.perf_counter() - t0:.1f} s"
    return out


def sudoku_case(B: int, methods: tuple[str, ...], seed: int = 0) -> Case:
    puzzles, boards = sudoku_boards(max(B, 1) * 4, seed)
    gen = torch.Generator().manual_seed(seed)
    A0 = torch.rand(EQUALITIES, CELLS, dtype=torch.float64, generator=gen)
    batches = [(puzzles[i * B : (i + 1) * B], boards[i * B : (i + 1) * B]) for i in range(4)]

    def model(layer: Layer) -> SudokuModel:
        return SudokuModel(
            layer,
            A0.clone().requires_grad_(True),
            torch.zeros(CELLS, dtype=torch.float64, requires_grad=True),
        )

    ref = model(exact_layer)
    ref.loss(*batches[0]).backward()
    steps: dict[str, Callable[[], Any]] = {}
    errors: dict[str, float] = {}
    notes: dict[str, str] = {}
    for method in methods:
        m = _built(lambda k=method: model(make_layer(k, "sudoku", CELLS)), method, notes)
        with _quiet():
            m.loss(*batches[0]).backward()
        # qpth and dxpp.torch.QPFunction give a broadcast input the batch mean gradient
        scale = B if method in ("qpth", "dxpp") else 1
        errors[method] = max(
            _rel(m.A.grad * scale, ref.A.grad), _rel(m.log_z0.grad * scale, ref.log_z0.grad)
        )
        counter = iter(range(10**9))

        def step(m: SudokuModel = m, counter: Iterator[int] = counter) -> float:
            puz, brd = batches[next(counter) % len(batches)]
            with _quiet():
                return m.step(puz, brd)

        steps[method] = step
    return Case(f"sudoku B={B}", steps, errors, notes)


def markowitz_case(n: int, methods: tuple[str, ...], seed: int = 0) -> Case:
    Sigma, mu, r = markowitz(n, seed)

    def make(layer: Layer) -> MarkowitzStep:
        return MarkowitzStep(
            layer, Sigma.clone().requires_grad_(True), mu.clone().requires_grad_(True), r
        )

    ref = make(exact_layer)
    ref.loss().backward()
    assert ref.Sigma.grad is not None and ref.mu.grad is not None
    steps: dict[str, Callable[[], Any]] = {}
    errors: dict[str, float] = {}
    notes: dict[str, str] = {}
    for method in methods:
        s = _built(lambda k=method: make(make_layer(k, "markowitz", n)), method, notes)
        with _quiet():
            s.step()
        assert s.Sigma.grad is not None and s.mu.grad is not None
        errors[method] = max(_rel(s.Sigma.grad, ref.Sigma.grad), _rel(s.mu.grad, ref.mu.grad))

        def step(s: MarkowitzStep = s) -> float:
            with _quiet():
                return s.step()

        steps[method] = step
    free = int(
        (
            dxpp.solve_qp(
                Sigma.numpy(), -mu.numpy(), -np.eye(n), np.zeros(n), np.ones((1, n)), np.ones(1)
            ).x
            > 1e-9
        ).sum()
    )
    notes["dxpp"] = f"{n - free} of {n} bounds active"
    return Case(f"markowitz n={n}", steps, errors, notes)


def run_lockstep(case: Case, repeats: int, slow: dict[str, int], warmup: int = 2) -> None:
    """``repeats`` rounds, each one step of every method in turn (a method listed in ``slow``
    only in its first ``slow[method]`` rounds); per-step seconds into ``case.times``."""
    for fn in case.steps.values():
        for _ in range(warmup):
            fn()
    case.times = {m: [] for m in case.steps}
    for r in range(repeats):
        for method, fn in case.steps.items():
            if r >= slow.get(method, repeats):
                continue
            t0 = time.perf_counter()
            fn()
            case.times[method].append(time.perf_counter() - t0)


def record(report: BenchReport, case: Case, condition: str) -> dict[str, float]:
    """Rows and ratios (peer ÷ dxpp, > 1: dxpp faster) in ``report``; medians returned."""
    name = f"{case.name} ({condition})"
    med = {}
    for method, ts in case.times.items():
        med[method] = statistics.median(ts)
        report.add(
            name,
            method,
            Timing(med[method], min(ts), tuple(ts)),
            grad_err=case.errors[method],
            loadavg=round(os.getloadavg()[0], 2),
            **({"note": case.notes[method]} if method in case.notes else {}),
        )
    for method in case.times:
        if method != "dxpp":
            report.ratio(name, "dxpp", method)
    return med


def run_all(
    report: BenchReport,
    *,
    quick: bool,
    condition: str,
    methods: tuple[str, ...] = METHODS,
    sudoku: tuple[int, ...] = SUDOKU_BATCHES,
    markowitz_sizes: tuple[int, ...] = MARKOWITZ_SIZES,
) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    """Both workloads on one thread; returns ``(case, medians, errors)`` per case."""
    out = []
    with single_thread():
        for B in sudoku:
            case = sudoku_case(B, methods)
            reps = (10 if quick else 30) if B < 128 else (5 if quick else 12)
            run_lockstep(case, reps, {"cvxpylayers": 3 if B == 128 else 5})
            out.append((case.name, record(report, case, condition), case.errors))
            print(_line(out[-1]), flush=True)
        for n in markowitz_sizes:
            ms = tuple(m for m in methods if m != "cvxpylayers" or n <= 200)
            case = markowitz_case(n, ms)
            reps = (10 if quick else 30) if n < 500 else (5 if quick else 12)
            run_lockstep(case, reps, {"cvxpylayers": 3, "qpth": max(3, reps // 2)})
            out.append((case.name, record(report, case, condition), case.errors))
            print(_line(out[-1]), flush=True)
    return out


def _line(row: tuple[str, dict[str, float], dict[str, float]]) -> str:
    name, med, err = row
    base = med["dxpp"]
    cells = [f"{name:<16} dxpp {base * 1e3:8.2f} ms (err {err['dxpp']:.1e})"]
    for m, t in med.items():
        if m != "dxpp":
            cells.append(f"{m} {t / base:6.2f}x (err {err[m]:.1e})")
    return "  ".join(cells)


def ratio_table(rows: list[tuple[str, dict[str, float], dict[str, float]]]) -> str:
    """Markdown: dxpp's median step, each peer's median ÷ dxpp's, and gradient errors."""
    peers = [m for m in METHODS if m != "dxpp"]
    head = "| case | dxpp ms | " + " | ".join(f"{p} ÷ dxpp" for p in peers)
    head += " | grad err dxpp | " + " | ".join(f"{p}" for p in peers) + " |"
    lines = [head, "|" + "---|" * (3 + 2 * len(peers))]
    for name, med, err in rows:
        ratios = [f"{med[p] / med['dxpp']:.2f}" if p in med else "–" for p in peers]
        errs = [f"{err[p]:.0e}" if p in err else "–" for p in peers]
        lines.append(
            f"| {name} | {med['dxpp'] * 1e3:.2f} | "
            + " | ".join(ratios)
            + f" | {err['dxpp']:.0e} | "
            + " | ".join(errs)
            + " |"
        )
    return "\n".join(lines)


@contextmanager
def busy_process() -> Iterator[None]:
    """One process spinning on a core beside the block (started here, stopped after)."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(2.0)
        yield
    finally:
        busy.terminate()
        busy.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--busy", action="store_true", help="also run beside one busy process")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--sudoku", type=int, nargs="*", default=list(SUDOKU_BATCHES))
    ap.add_argument("--markowitz", type=int, nargs="*", default=list(MARKOWITZ_SIZES))
    ap.add_argument("--out", default="reports/bench/dxpp_end_to_end.json")
    a = ap.parse_args()
    report = BenchReport("dxpp-end-to-end", quick=a.quick)
    kw = dict(
        quick=a.quick,
        methods=tuple(a.methods),
        sudoku=tuple(a.sudoku),
        markowitz_sizes=tuple(a.markowitz),
    )
    idle = run_all(report, condition="idle", **kw)
    print("\nidle\n" + ratio_table(idle), flush=True)
    if a.busy:
        with busy_process():
            busy = run_all(report, condition="one busy process", **kw)
        print("\nbeside one busy process\n" + ratio_table(busy), flush=True)
    print(f"written to {report.write(a.out)}")


if __name__ == "__main__":
    main()
