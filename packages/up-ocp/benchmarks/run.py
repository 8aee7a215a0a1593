"""Throughput of UP-OCP and the zoo: updates per second, vectorised vs Python loops vs MAPIE.

    .venv/bin/python packages/up-ocp/benchmarks/run.py [--quick] [--out reports/bench/up-ocp.json]

Everything is timed side by side in one run (one process, one core for numpy's elementwise
work); the table reports updates/s and the ratio to the pure-Python UP-OCP loop.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from icml26_shared.bench import BenchReport, time_call
from icml26_shared.datasets import score_stream
from up_ocp import OnlineConformal, make_algorithm, run_algorithm
from up_ocp.baselines import aci


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
    report = BenchReport("up-ocp", quick=args.quick)

    def add(case: str, method: str, timing, updates: int, note: str = "") -> None:
        report.add(
            case, method, timing, updates=updates, updates_per_s=updates / timing.median, note=note
        )

    # 1. one stream: the pure-Python loop a user would write vs the numpy functional core
    one = scores[0]
    ref = OnlineConformal("up").run(one)
    assert np.allclose(up_python_loop(one.tolist()), ref, rtol=1e-9, atol=1e-12)
    case1 = f"1 stream, T={T}"
    add(
        case1,
        "UP-OCP pure-Python loop",
        time_call(lambda: up_python_loop(one.tolist()), repeats=reps),
        T,
    )
    algo = make_algorithm("up", 0.1)
    add(
        case1,
        "UP-OCP numpy",
        time_call(lambda: run_algorithm(algo, one), repeats=reps),
        T,
        "per-step overhead",
    )
    report.ratio(case1, "UP-OCP numpy", "UP-OCP pure-Python loop")

    # 2. many streams: the Python loop stream by stream vs one numpy op per step vs jax
    case2 = f"{n_streams} streams, T={T}"
    rows = [r.tolist() for r in scores]
    add(
        case2,
        "UP-OCP pure-Python loop",
        time_call(lambda: [up_python_loop(r) for r in rows], repeats=1, warmup=0),
        scores.size,
    )
    add(
        case2,
        "UP-OCP numpy",
        time_call(lambda: OnlineConformal("up").run(scores), repeats=reps),
        scores.size,
        "vectorised over streams",
    )
    report.ratio(case2, "UP-OCP numpy", "UP-OCP pure-Python loop")
    try:
        import jax

        from up_ocp import run_up_jax

        with jax.enable_x64(True):
            t_jax = time_call(lambda: run_up_jax(scores), repeats=reps)  # warm-up compiles
        add(case2, "UP-OCP jax lax.scan", t_jax, scores.size, "float64, after compile")
        report.ratio(case2, "UP-OCP jax lax.scan", "UP-OCP numpy")
    except ImportError:
        pass

    # 3. the zoo, vectorised over the same streams (shorter horizon for the costly ones)
    cheap = ("kt_aci", "quantile_tracking", "sf_ogd", "decaying_ogd", "pid")
    for method in (*cheap, "aci", "dtaci", "saocp"):
        T_m = T if method in cheap else min(T, 300)
        s_m = scores[:, :T_m]
        case = f"zoo, {n_streams} streams, T={T_m}"
        add(
            case,
            method,
            time_call(lambda m=method, s=s_m: OnlineConformal(m).run(s), repeats=1, warmup=0),
            s_m.size,
            "window 1000" if method in ("aci", "dtaci") else "",
        )
        if method in ("aci", "dtaci", "saocp") and T_m != T:
            continue
        if method == cheap[0]:
            add(
                case,
                "up",
                time_call(lambda s=s_m: OnlineConformal("up").run(s), repeats=1, warmup=0),
                s_m.size,
            )
    report.ratio(f"zoo, {n_streams} streams, T={T}", "up", "kt_aci")

    # 4. peer: MAPIE 1.x ACI (one stream, predict + adapt per step) vs ours on the same scores
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

        case4 = f"ACI, 1 stream, T={T_p}, n_cal={n_cal}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            add(case4, "MAPIE ACI", time_call(mapie_run, repeats=1, warmup=0), T_p, "peer")
        ours = aci(0.1, 0.005, calibration=np.abs(cy - cx[:, 0]), clip=True)
        s_p = np.abs(ty - tx[:, 0])
        add(
            case4,
            "our ACI (MAPIE mode)",
            time_call(lambda: run_algorithm(ours, s_p), repeats=reps),
            T_p,
            "same numbers",
        )
        report.ratio(case4, "our ACI (MAPIE mode)", "MAPIE ACI")
    except ImportError:
        pass

    print(report.to_text())
    print(f"\nwritten to {report.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
