"""Calibration time of RSA-CP against split CP, SPI and MAPIE, side by side in one run.

    .venv/bin/python packages/rsa-cp/benchmarks/run.py [--quick] [--out reports/bench/rsa-cp.json]

Spec acceptance 5: calibration with m = 40, N = 3000 under 50 ms. "cold" clears the cached
Beta-Binomial window first (a new (N, m, beta) triple); "warm" reuses it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rsa_cp import RSAConformalRegressor, rsa_threshold, split_threshold
from rsa_cp._bounds import _window_cached


def _time(fn: Callable[[], object], repeats: int, setup: Callable[[], None] | None = None) -> dict:
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {
        "median_ms": 1e3 * statistics.median(times),
        "max_ms": 1e3 * max(times),
        "repeats": repeats,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/rsa-cp.json")
    args = parser.parse_args()
    repeats = 20 if args.quick else 200
    rng = np.random.default_rng(0)
    rows: dict[str, dict] = {}
    for m, n in [(40, 3000), (20, 1000), (160, 3000)]:
        s, r = rng.lognormal(size=m), rng.lognormal(size=n)
        tag = f"m={m} N={n}"
        rsa_threshold(s, r, 0.05)  # import / first-call effects out of the way
        rows[f"split CP ({tag})"] = _time(lambda s=s: split_threshold(s, 0.05), repeats)
        rows[f"SPI warm ({tag})"] = _time(
            lambda s=s, r=r: rsa_threshold(s, r, 0.05, align=False), repeats
        )
        rows[f"RSA-CP warm ({tag})"] = _time(lambda s=s, r=r: rsa_threshold(s, r, 0.05), repeats)
        rows[f"RSA-CP cold ({tag})"] = _time(
            lambda s=s, r=r: rsa_threshold(s, r, 0.05), repeats, setup=_window_cached.cache_clear
        )
        rows[f"RSA-CP marginal warm ({tag})"] = _time(
            lambda s=s, r=r: rsa_threshold(s, r, 0.05, guarantee="marginal"), repeats
        )
    # estimator level, with MAPIE's split conformal regressor on the same prefit model
    from sklearn.linear_model import LinearRegression

    X = rng.normal(size=(3100, 5))
    y = X @ rng.normal(size=5) + rng.lognormal(size=3100)
    model = LinearRegression().fit(X[:60], y[:60])
    ref = np.abs(y[100:] - model.predict(X[100:]))
    ours = RSAConformalRegressor(model, confidence_level=0.95, prefit=True)
    rows["RSAConformalRegressor.conformalize (m=40 N=3000)"] = _time(
        lambda: ours.conformalize(X[60:100], y[60:100], reference_scores=ref), repeats
    )
    split = RSAConformalRegressor(model, confidence_level=0.95, method="split", prefit=True)
    rows["RSAConformalRegressor split .conformalize (m=40)"] = _time(
        lambda: split.conformalize(X[60:100], y[60:100]), repeats
    )
    try:
        from mapie.regression import SplitConformalRegressor

        def mapie_once() -> None:  # MAPIE refuses a second conformalize on one object
            SplitConformalRegressor(model, confidence_level=0.95, prefit=True).conformalize(
                X[60:100], y[60:100]
            )

        rows["MAPIE SplitConformalRegressor(...).conformalize (m=40)"] = _time(mapie_once, repeats)
    except ImportError:
        pass
    base = rows["split CP (m=40 N=3000)"]["median_ms"]
    print(f"{'method':55s} {'median ms':>10s} {'max ms':>9s} {'x split':>9s}")
    for name, row in rows.items():
        row["ratio_vs_split_cp_m40"] = row["median_ms"] / base
        print(
            f"{name:55s} {row['median_ms']:10.3f} {row['max_ms']:9.3f} "
            f"{row['ratio_vs_split_cp_m40']:9.1f}"
        )
    target = rows["RSA-CP cold (m=40 N=3000)"]["median_ms"]
    verdict = "met" if target < 50 else "NOT met"
    print(
        f"\nacceptance 5 (m=40, N=3000 calibration < 50 ms, cold cache): {target:.2f} ms, {verdict}"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "package": "rsa-cp",
                "quick": args.quick,
                "python": platform.python_version(),
                "machine": platform.machine(),
                "rows": rows,
                "acceptance_5_ms": target,
                "acceptance_5_met": target < 50,
            },
            indent=2,
        )
    )
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
