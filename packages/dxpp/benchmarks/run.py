"""Benchmark dxpp against its peers, side by side in one run (``icml26 bench dxpp``).

    python packages/dxpp/benchmarks/run.py [--quick] [--out reports/bench/dxpp.json]

1. Dense, from torch (dQP's random dense QP, m = n inequalities, ⌈n/2⌉ equalities): the
   backward of ``dxpp.torch.QPLayer`` vs the full-KKT LU (OptNet) and the reduced-KKT LU
   (dQP) computed with ``torch.linalg`` on the same solution, and vs qpth's own backward;
   each timed by ``time_call`` (one warm-up, median of 5), first on the machine as it is,
   then with one busy process (``python -c "while True: pass"``) beside it.
2. Sparse banded QPs (n = 5000, 20000): the numpy/scipy backward (qdldl) on a fresh sparsity
   pattern and with the symbolic factorisation reused, its overhead over its own qdldl
   factorisation, and the reduced-KKT qdldl LDLᵀ (``dxpp.baselines.sparse_kkt_ldl_vjp``).
3. Simplex projection n = 1e5: forward + backward time, error vs the closed form.
4. End to end (``end_to_end.py``): an OptNet 4×4 Sudoku training step (B = 1, 8, 128) and a
   long-only Markowitz forward + backward (n = 50 … 500) with ProxSuite's torch layer, qpth
   and cvxpylayers, lock-step on one thread, idle and beside one busy process
   (``--only end-to-end`` runs this part alone).

Every row records the load average it was measured under. Imports only public names.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import end_to_end  # this folder: the end-to-end workloads
import numpy as np
import torch

import dxpp
from dxpp.baselines import sparse_kkt_ldl_vjp, torch_kkt_vjp
from dxpp.torch import QPLayer
from icml26_shared.bench import BenchReport, time_call

NAMES = ("Q", "q", "G", "h", "A", "b")


def _la() -> float:
    return round(os.getloadavg()[0], 2)


def _rel(a: Any, b: Any) -> float:
    a = np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64)
    b = np.asarray(b.detach() if isinstance(b, torch.Tensor) else b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def _torch_backward(args: list[torch.Tensor], loss: torch.Tensor) -> Callable[[], None]:
    def run() -> None:
        for a in args:
            a.grad = None
        loss.backward(retain_graph=True)

    return run


def dense_case(report: BenchReport, n: int, seed: int, condition: str, qpth: bool) -> None:
    case = f"dense n={n} ({condition})"
    qp = dxpp.random_dense_qp(n, seed)
    w = torch.tensor(np.random.default_rng(10_000 + seed).normal(size=n))
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    t0 = time.perf_counter()
    x, nu, mu = QPLayer(check_psd=False, return_duals=True)(*args)
    fwd = time.perf_counter() - t0
    sol = dxpp.solve_qp(*qp, check_psd=False)
    ours = time_call(_torch_backward(args, x @ w), repeats=5, warmup=1)
    grads = [a.grad.clone() for a in args]
    red = torch_kkt_vjp(*args, x, nu, mu, sol.active, w, kind="reduced")
    err = max(_rel(a, b) for a, b in zip(grads, red))
    report.add(case, "dxpp.torch backward", ours, forward_s=fwd, grad_err=err, loadavg=_la())
    for kind, label in (("full", "full-KKT LU (torch)"), ("reduced", "reduced-KKT LU (torch)")):
        t = time_call(
            lambda k=kind: torch_kkt_vjp(*args, x, nu, mu, sol.active, w, kind=k),
            repeats=5,
            warmup=1,
        )
        report.add(case, label, t, loadavg=_la())
        report.ratio(case, "dxpp.torch backward", label)
    if qpth:
        try:
            from qpth.qp import QPFunction
        except ImportError:
            report.add(case, "qpth backward", None, note="qpth not installed")
            return
        targs = [torch.tensor(a, requires_grad=True) for a in qp]
        t0 = time.perf_counter()
        xq = QPFunction(verbose=-1)(*targs)[0]
        fq = time.perf_counter() - t0
        tq = time_call(_torch_backward(targs, xq @ w), repeats=5, warmup=1)
        errq = max(_rel(a.grad, b) for a, b in zip(targs, red))
        report.add(case, "qpth backward", tq, forward_s=fq, grad_err=errq, loadavg=_la())
        report.ratio(case, "dxpp.torch backward", "qpth backward")


def sparse_case(report: BenchReport, n: int) -> None:
    case = f"sparse banded n={n}"
    qp = dxpp.random_sparse_qp(n, seed=0)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(20_000).normal(size=n)
    fresh: dict[str, Any] = {}
    t0 = time.perf_counter()
    ours = dxpp.qp_vjp(*qp, sol, g, profile=fresh)  # first call on this pattern
    t_fresh = time.perf_counter() - t0
    reused = time_call(lambda: dxpp.qp_vjp(*qp, sol, g), repeats=5, warmup=1)
    prof: dict[str, Any] = {}
    dxpp.qp_vjp(*qp, sol, g, profile=prof)
    ldl = time_call(
        lambda: sparse_kkt_ldl_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g), repeats=5, warmup=1
    )
    exact = dxpp.qp_vjp(*qp, sol, g, mode="exact")  # reduced KKT by SuperLU: the reference
    err = max(_rel(a, b) for a, b in zip(ours, exact) if a is not None and not hasattr(a, "nnz"))
    ldl_ref = sparse_kkt_ldl_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g)
    err_ldl = max(
        _rel(a, b) for a, b in zip(ldl_ref, exact) if a is not None and not hasattr(a, "nnz")
    )
    report.add(
        case,
        "dxpp backward, fresh pattern",
        t_fresh,
        ldl_s=fresh.get("ldl"),
        overhead=t_fresh / fresh["ldl"],
        grad_err=err,
        loadavg=_la(),
    )
    report.add(
        case,
        "dxpp backward, symbolic reused",
        reused,
        ldl_s=prof.get("ldl"),
        overhead=reused.median / prof["ldl"],
        kind=prof.get("factor_kind"),
        loadavg=_la(),
    )
    report.add(case, "reduced-KKT LDLᵀ (qdldl)", ldl, grad_err=err_ldl, loadavg=_la())
    report.ratio(case, "dxpp backward, symbolic reused", "reduced-KKT LDLᵀ (qdldl)")
    report.add(case + " (fresh vs fresh)", "dxpp backward, fresh pattern", t_fresh)
    report.add(case + " (fresh vs fresh)", "reduced-KKT LDLᵀ (qdldl)", ldl)
    report.ratio(
        case + " (fresh vs fresh)", "dxpp backward, fresh pattern", "reduced-KKT LDLᵀ (qdldl)"
    )


def simplex_case(report: BenchReport, n: int) -> None:
    rng = np.random.default_rng(30_000)
    y, g = rng.normal(size=n), rng.normal(size=n)
    qp = dxpp.simplex_projection_qp(y)
    t0 = time.perf_counter()
    sol = dxpp.solve_qp(*qp)
    fwd = time.perf_counter() - t0
    t = time_call(lambda: dxpp.qp_vjp(*qp, sol, g), repeats=3, warmup=1)
    err = _rel(-dxpp.qp_vjp(*qp, sol, g).q, dxpp.simplex_projection_vjp(y, g))
    report.add(
        f"simplex n={n}",
        "dxpp backward",
        t,
        forward_s=fwd,
        total_s=fwd + t.median,
        grad_err=err,
        loadavg=_la(),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n ∈ {200, 500}, sparse n = 5000")
    ap.add_argument("--no-busy", action="store_true", help="skip the busy-process condition")
    ap.add_argument("--out", default="reports/bench/dxpp.json")
    ap.add_argument(
        "--only",
        choices=("all", "end-to-end"),
        default="all",
        help="end-to-end: only the Sudoku/Markowitz training-step comparison",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch.set_num_threads for this run (default: torch's own setting)",
    )
    a = ap.parse_args()
    if a.threads is not None:
        torch.set_num_threads(a.threads)
    report = BenchReport("dxpp", quick=a.quick)
    e2e = end_to_end.run_all(report, quick=a.quick, condition="idle")
    print("\nend to end, idle (peer time ÷ dxpp's)\n" + end_to_end.ratio_table(e2e), flush=True)
    if not a.no_busy:
        with end_to_end.busy_process():
            e2e = end_to_end.run_all(report, quick=a.quick, condition="one busy process")
        print("\nend to end, beside one busy process\n" + end_to_end.ratio_table(e2e), flush=True)
    if a.only == "end-to-end":
        print(f"written to {report.write(a.out)}")
        return
    report.machine["torch_threads"] = torch.get_num_threads()
    report.machine["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY")
    sizes = [200, 500] if a.quick else [200, 500, 800, 1000]
    dxpp.solve_qp(*dxpp.random_dense_qp(5, 0))  # warm-up
    print(f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()}", flush=True)
    for n in sizes:
        dense_case(report, n, 0, "as is", qpth=True)
        print(f"dense n={n} as is done, load {_la()}", flush=True)
    if not a.no_busy:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(2.0)
            for n in sizes:
                dense_case(report, n, 0, "one busy process", qpth=True)
                print(f"dense n={n} busy done, load {_la()}", flush=True)
        finally:
            busy.terminate()
            busy.wait()
    for n in [5000] if a.quick else [5000, 20000]:
        sparse_case(report, n)
    simplex_case(report, 100_000)
    print(report.to_text())
    print(f"written to {report.write(a.out)}")


if __name__ == "__main__":
    main()
