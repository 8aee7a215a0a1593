"""Benchmark: the cost of one stopping decision, amortised, up to m = 10⁵.

Compares, in one run:
* ours — :class:`LabelBudgetCalibrator`'s session, which refits the cost curve only when the label
  count has grown by 5 % (mean time per decision over a whole session up to m);
* naive — refitting at every label, i.e. one :func:`costly_cp.should_stop` call at size m (the
  per-decision cost of the direct implementation);
* MAPIE 1.x's split-conformal quantile (``mapie.utils._compute_classification_quantile``, private)
  as the peer for the threshold itself: same value on the same scores, and its time.

No peer library offers label-budgeted calibration (MAPIE, crepes, puncc only warn about small n).

Usage: python packages/costly-cp/benchmarks/run.py [--quick] [--out reports/bench/costly-cp.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from costly_cp import conformal_threshold, should_stop
from costly_cp._reproduce import never_stopping_stream
from costly_cp._session import _Session


def _session_times(top: int, marks: list[int]) -> dict[int, tuple[float, int]]:
    scores, curve = never_stopping_stream(top)  # the rule keeps buying labels up to top
    sess = _Session(alpha=0.1, n_future=1e15, curve=curve, limit=top, stream_len=top)
    out = {}
    start = time.perf_counter()
    i = 0
    while sess.needs_label():
        sess.add(scores[i])
        i += 1
        if i in marks:
            out[i] = (time.perf_counter() - start, len(sess.trace.n))
    return out


def _naive_time(m: int, repeat: int) -> float:
    scores, curve = never_stopping_stream(m)
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        should_stop(scores, curve, alpha=0.1, n_future=1e15)
        best = min(best, time.perf_counter() - t)
    return best


def _mapie(m: int, repeat: int) -> dict[str, float]:
    try:
        from mapie.utils import _compute_classification_quantile
    except ImportError:  # pragma: no cover
        return {}
    s = np.random.default_rng(2).random(m)
    t_ours, t_peer = math.inf, math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        ours = conformal_threshold(s, 0.1)
        t_ours = min(t_ours, time.perf_counter() - t)
        t = time.perf_counter()
        peer = float(_compute_classification_quantile(s.reshape(-1, 1), np.array([0.1]))[0])
        t_peer = min(t_peer, time.perf_counter() - t)
    return {"ours_s": t_ours, "mapie_s": t_peer, "same_threshold": bool(ours == peer)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/costly-cp.json")
    args = parser.parse_args()
    top = 10_000 if args.quick else 100_000
    marks = [m for m in (1_000, 10_000, 100_000) if m <= top]
    sessions = _session_times(top, marks)
    rows = []
    for m in marks:
        total, refits = sessions[m]
        ours = total / m
        naive = _naive_time(m, 3 if m >= 100_000 else 5)
        peer = _mapie(m, 5)
        rows.append({
            "m": m, "refits": refits, "ours_amortised_us": 1e6 * ours, "naive_per_decision_us": 1e6 * naive,
            "naive_over_ours": naive / ours, "log_m": math.log(m), **{f"threshold_{k}": v for k, v in peer.items()},
        })
    print(f"{'m':>7} {'refits':>6} {'ours µs/decision':>17} {'naive µs/decision':>18} {'naive/ours':>10} "
          f"{'threshold ours µs':>17} {'MAPIE µs':>9} {'same q':>6}")
    for r in rows:
        print(f"{r['m']:>7} {r['refits']:>6} {r['ours_amortised_us']:>17.1f} {r['naive_per_decision_us']:>18.1f} "
              f"{r['naive_over_ours']:>10.1f} {1e6 * r.get('threshold_ours_s', math.nan):>17.1f} "
              f"{1e6 * r.get('threshold_mapie_s', math.nan):>9.1f} {r.get('threshold_same_threshold', '-')!s:>6}")
    if len(rows) >= 2:
        growth = rows[-1]["ours_amortised_us"] / rows[0]["ours_amortised_us"]
        print(f"amortised cost from m={rows[0]['m']} to m={rows[-1]['m']}: x{growth:.2f} "
              f"(log m grows x{rows[-1]['log_m'] / rows[0]['log_m']:.2f})")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"package": "costly-cp", "quick": args.quick, "rows": rows}, indent=2))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
