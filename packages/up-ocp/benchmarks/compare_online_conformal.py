"""Accuracy comparison with Salesforce ``online-conformal`` 1.0.2 on identical score streams.

    .venv/bin/python packages/up-ocp/benchmarks/compare_online_conformal.py [--quick]
        [--out reports/bench/up-ocp-online-conformal.json]

Streams: the synthetic change-point stream (σ 1 → 5 → 0.5, ``icml26_shared.datasets``) and the
real series of ``up_ocp.data.RETURN_SERIES`` (all shipped inside the ``arch`` package: S&P 500,
NASDAQ, VIX, WTI crude, Fama–French market), forecast = trailing 20-step mean, score = |r − r̂|,
α = 0.1, the first 50 scores as calibration/warm-up (see ``up_ocp.baselines.compare_methods``).
Prints coverage ± s.e. and width ± s.e. for every method; writes them as strict JSON. This is
the accuracy companion of ``run.py`` (throughput); it is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from icml26_shared.bench import load_average
from icml26_shared.datasets import score_stream
from up_ocp.baselines import compare_methods, online_conformal_available
from up_ocp.data import RETURN_SERIES, forecast_residuals, load_returns

ALPHA = 0.1


def streams(quick: bool) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    T = 2000 if quick else 5000
    for seed in range(1 if quick else 3):
        out[f"change_point seed {seed}"] = score_stream("change_point", T, seed=seed).scores
    for name in ("sp500", "vix") if quick else RETURN_SERIES:
        _, resid = forecast_residuals(load_returns(name), 20)
        out[name] = np.abs(resid)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/up-ocp-online-conformal.json")
    args = parser.parse_args()
    peers = online_conformal_available()
    if not peers:
        print("online-conformal is not installed: only our methods are shown")
    load0 = load_average()
    t0 = time.perf_counter()
    results: dict[str, dict[str, dict[str, float]]] = {}
    for name, s in streams(args.quick).items():
        results[name] = compare_methods(np.ravel(s), ALPHA, 50, peers=peers)
        print(f"\n== {name} (scored rounds: {np.ravel(s).size - 50})")
        print(f"{'method':52s} {'coverage ± s.e.':>16s} {'width ± s.e.':>18s} {'inf %':>6s}")
        for row, r in results[name].items():
            print(
                f"{row:52s} {r['coverage']:.3f} ± {r['coverage_se']:.3f}   "
                f"{r['width']:8.3f} ± {r['width_se']:6.3f} {100 * r['inf_frac']:6.2f}"
            )
    report = {
        "package": "up-ocp",
        "benchmark": "accuracy vs online-conformal 1.0.2",
        "quick": args.quick,
        "alpha": ALPHA,
        "n_calibration": 50,
        "peers": peers,
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_start": load0,
            "load_end": load_average(),
        },
        "seconds": time.perf_counter() - t0,
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, allow_nan=False))
    print(f"\nwrote {out} in {report['seconds']:.0f} s (load {load0} -> {load_average()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
