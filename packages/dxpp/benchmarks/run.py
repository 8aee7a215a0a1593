"""Benchmark dxpp against its peers, side by side in one run (``icml26 bench dxpp``).

    python packages/dxpp/benchmarks/run.py [--quick] [--out reports/bench/dxpp.json]

Cases: dQP's random dense QP (n = 50 … 1000; peers qpth, dQP, cvxpylayers at n ≤ 100, an
OptNet-style full-KKT LU and the reduced-KKT LU), a random sparse banded QP, projection onto
a chain, a multi-period portfolio (sparse, n = T·k) and the simplex projection up to n = 1e5.
Prints forward/backward/total seconds, gradient error and the ratio of every method's
backward time to dxpp's, plus a profile of where dxpp's backward time goes. Single-threaded.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

import dxpp
from dxpp._bench import Row, dense_case, simplex_case, single_thread, sparse_case


def _print(title: str, rows: dict[str, list[Row]]) -> list[dict]:
    print(f"\n{title}")
    base = next(k for k in rows if k.startswith("dxpp penalty (auto"))
    b0 = np.median([r.backward for r in rows[base]])
    t0 = np.median([r.total for r in rows[base]])
    print(
        f"{'method':40s} {'fwd s':>9s} {'bwd s':>9s} {'total s':>9s} {'grad err':>9s} "
        f"{'bwd/dxpp':>9s} {'tot/dxpp':>9s}"
    )
    out = []
    for name, rs in rows.items():
        if not np.isfinite(rs[0].backward):
            print(f"{name:40s} {rs[0].note}")
            out.append({"method": name, "note": rs[0].note})
            continue
        f, b, t = (
            float(np.median([getattr(r, a) for r in rs])) for a in ("forward", "backward", "total")
        )
        e = float(np.max([r.error for r in rs]))
        print(
            f"{name:40s} {f:9.4f} {b:9.4f} {t:9.4f} {e:9.1e} {b / b0:9.2f} {t / t0:9.2f}"
            + (f"  {rs[0].note}" if rs[0].note else "")
        )
        out.append(
            {
                "method": name,
                "forward_s": f,
                "backward_s": b,
                "total_s": t,
                "grad_rel_error_max": e,
                "backward_ratio_to_dxpp": b / b0,
                "total_ratio_to_dxpp": t / t0,
                "note": rs[0].note,
            }
        )
    return out


def _collect(runs: list[dict[str, Row]]) -> dict[str, list[Row]]:
    keys: dict[str, list[Row]] = {}
    for r in runs:
        for k, v in r.items():
            keys.setdefault(k.split(" (auto")[0] + (" (auto)" if "(auto" in k else ""), []).append(
                v
            )
    # restore the "dxpp penalty (auto" prefix expected by _print
    return {
        ("dxpp penalty (auto)" if k.startswith("dxpp penalty (auto") else k): v
        for k, v in keys.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes")
    ap.add_argument("--out", default="reports/bench/dxpp.json")
    args = ap.parse_args()
    quick = args.quick
    dense_sizes = [50, 100, 200, 500] if quick else [50, 100, 200, 500, 1000]
    seeds = [0, 1] if quick else [0, 1, 2]
    report: dict = {"machine": platform.platform(), "quick": quick, "threads": 1, "cases": {}}
    start = time.perf_counter()
    with single_thread():
        dxpp.solve_qp(*dxpp.random_dense_qp(5, 0))  # warm-up imports
        profile: dict = {}
        for n in dense_sizes:
            prof: dict = {}
            runs = [dense_case(n, s, profile=prof if s == seeds[0] else None) for s in seeds]
            title = f"random dense QP n={n} (median of {len(seeds)} seeds; error: max)"
            report["cases"][f"dense_{n}"] = _print(title, _collect(runs))
            profile = {"n": n, **prof}
        if not quick:
            runs = [dense_case(2000, 0, peers=())]
            report["cases"]["dense_2000"] = _print(
                "random dense QP n=2000 (seed 0; peers skipped)", _collect(runs)
            )
        print(f"\nprofile of dxpp's backward at n={profile['n']} (seconds):")
        print(
            "  "
            + ", ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in profile.items()
                if k != "n"
            )
        )
        report["backward_profile"] = profile
        rng = np.random.default_rng(0)
        sparse_cases = {
            f"sparse banded n={n}": dxpp.random_sparse_qp(n, seed=0)
            for n in ([5000] if quick else [5000, 20000])
        }
        nc = 5000 if quick else 20000
        sparse_cases[f"chain projection n={nc}"] = dxpp.chain_projection_qp(
            np.cumsum(rng.normal(size=nc)) * 0.05
        )
        T, k = (20, 50) if quick else (50, 100)
        F = rng.normal(size=(k, 3))
        cov = F @ F.T * 1e-3 + np.eye(k) * 1e-3
        sparse_cases[f"multi-period portfolio n={T * k}"] = dxpp.multiperiod_portfolio_qp(
            rng.normal(size=(T, k)) * 0.05, cov
        )
        for name, qp in sparse_cases.items():
            report["cases"][name] = _print(name, _collect([sparse_case(qp)]))
        for n in [10_000, 100_000] if quick else [1000, 10_000, 100_000]:
            report["cases"][f"simplex_{n}"] = _print(
                f"simplex projection n={n} (error vs closed form)", _collect([simplex_case(n)])
            )
    report["seconds"] = time.perf_counter() - start
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=float))
    print(f"\n{report['seconds']:.0f} s; written to {out}")


if __name__ == "__main__":
    main()
