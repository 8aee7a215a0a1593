"""Throughput of UP-OCP and the zoo: updates per second, vectorised vs Python loops vs MAPIE.

    .venv/bin/python packages/up-ocp/benchmarks/run.py [--quick] [--out reports/bench/up-ocp.json]

Everything is timed side by side in one run (one process, one core for numpy's elementwise
work); the table reports updates/s and the ratio to the pure-Python UP-OCP loop.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from icml26_shared.datasets import score_stream
from up_ocp import OnlineConformal, make_algorithm, run_algorithm
from up_ocp.baselines import aci


def _best_of(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def up_python_loop(scores: list[float], alpha: float = 0.1, eps: float = 1.0) -> list[float]:
    """UP-OCP for one stream in plain Python floats (the reference a user would write)."""
    log_w, misses, out = math.log(eps), 0.0, []
    la, l1a = math.log(alpha), math.log1p(-alpha)
    for t, s in enumerate(scores):
        b = (misses + 0.5) / (t + 1.0)
        beta = (b - alpha) / (alpha * (1.0 - alpha))
        q = math.copysign(math.exp(math.log(abs(beta)) + log_w), beta) if beta != 0 else 0.0
        out.append(q)
        if s > q:
            log_w += math.log(b) - la
            misses += 1.0
        else:
            log_w += math.log1p(-b) - l1a
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/up-ocp.json")
    args = parser.parse_args()
    n_streams, T = 1000, (500 if args.quick else 2000)
    reps = 2 if args.quick else 3
    scores = score_stream("change_point", T, n_streams=n_streams, seed=0).scores
    rows: dict[str, dict[str, float]] = {}

    def record(name: str, updates: int, seconds: float, note: str = "") -> None:
        rows[name] = {
            "updates": updates,
            "seconds": seconds,
            "updates_per_s": updates / seconds,
            "note": note,
        }

    # 1. pure-Python loop (one stream at a time)
    n_py = 50_000 if args.quick else 200_000
    flat = scores.ravel()[:n_py].tolist()
    record(
        "UP-OCP pure-Python loop",
        n_py,
        _best_of(lambda: up_python_loop(flat), reps),
        "plain floats",
    )
    ref = OnlineConformal("up").run(scores[0, :T])
    assert np.allclose(up_python_loop(scores[0, :T].tolist()), ref, rtol=1e-9, atol=1e-12)

    # 2. the numpy functional core driven one stream at a time (per-call overhead)
    algo = make_algorithm("up", 0.1)
    one = scores[0, : min(T, 2000)]
    record(
        "UP-OCP numpy, 1 stream",
        one.size,
        _best_of(lambda: run_algorithm(algo, one), reps),
        "per-step overhead",
    )

    # 3. vectorised over 1,000 streams
    t_vec = _best_of(lambda: OnlineConformal("up").run(scores), reps)
    record(
        f"UP-OCP numpy, {n_streams} streams",
        scores.size,
        t_vec,
        "one numpy op per step for all streams",
    )

    # 4. jax lax.scan (compiled once, then timed)
    try:
        import jax

        from up_ocp import run_up_jax

        with jax.enable_x64(True):
            run_up_jax(scores)  # compile
            t_jax = _best_of(lambda: run_up_jax(scores), reps)
        record(
            f"UP-OCP jax lax.scan, {n_streams} streams",
            scores.size,
            t_jax,
            "float64, after compile",
        )
    except ImportError:
        pass

    # 5. the zoo, vectorised over the same streams (shorter horizon for the costly ones)
    for method in (
        "kt_aci",
        "quantile_tracking",
        "sf_ogd",
        "decaying_ogd",
        "pid",
        "aci",
        "dtaci",
        "saocp",
    ):
        T_m = (
            T
            if method in ("kt_aci", "quantile_tracking", "sf_ogd", "decaying_ogd", "pid")
            else min(T, 300)
        )
        s_m = scores[:, :T_m]
        t_m = _best_of(lambda m=method, s=s_m: OnlineConformal(m).run(s), 1)
        record(
            f"{method}, {n_streams} streams",
            s_m.size,
            t_m,
            "window 1000" if method in ("aci", "dtaci") else "",
        )

    # 6. peer: MAPIE 1.6 ACI (one stream, predict + adapt per step) vs ours on the same scores
    try:
        from mapie.conformity_scores import AbsoluteConformityScore
        from mapie.regression import TimeSeriesRegressor
        from sklearn.linear_model import LinearRegression

        rng = np.random.default_rng(0)
        n_cal, T_p = 500, (100 if args.quick else 300)
        cx = rng.normal(size=(n_cal, 1))
        cy = cx[:, 0] + rng.normal(size=n_cal)
        tx = rng.normal(size=(T_p, 1))
        ty = tx[:, 0] + rng.normal(size=T_p)
        est = LinearRegression().fit(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]))
        est.coef_, est.intercept_ = np.array([1.0]), 0.0

        def mapie_run() -> None:
            m = TimeSeriesRegressor(
                est, method="aci", cv="prefit", conformity_score=AbsoluteConformityScore(sym=True)
            )
            m.fit(cx, cy)
            for t in range(T_p):
                m.predict(tx[t : t + 1], confidence_level=0.9, allow_infinite_bounds=True)
                m.adapt_conformal_inference(
                    tx[t : t + 1], ty[t : t + 1], gamma=0.005, confidence_level=0.9
                )

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            record("MAPIE 1.6 ACI, 1 stream", T_p, _best_of(mapie_run, 1), "peer")
        ours = aci(0.1, 0.005, calibration=np.abs(cy - cx[:, 0]), clip=True)
        s_p = np.abs(ty - tx[:, 0])
        record(
            "our ACI (MAPIE mode), 1 stream",
            T_p,
            _best_of(lambda: run_algorithm(ours, s_p), reps),
            "same numbers",
        )
    except ImportError:
        pass

    base = rows["UP-OCP pure-Python loop"]["updates_per_s"]
    width = max(len(k) for k in rows)
    print(f"{'method':<{width}}  {'updates/s':>12}  {'× Python loop':>13}  note")
    for name, r in rows.items():
        print(
            f"{name:<{width}}  {r['updates_per_s']:>12.3e}  "
            f"{r['updates_per_s'] / base:>13.2f}  {r['note']}"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "package": "up-ocp",
                "quick": args.quick,
                "n_streams": n_streams,
                "T": T,
                "machine": platform.platform(),
                "rows": rows,
            },
            indent=2,
        )
    )
    print(f"\nwritten to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
