"""Benchmark: the cost of one stopping decision, amortised, up to m = 10⁵.

Compares, in one run:
* ours — :class:`LabelBudgetCalibrator`, which refits the cost curve only when the label count
  has grown by 5 % (mean time per decision over a whole ``conformalize`` session up to m, on
  :func:`costly_cp.data.never_stopping_task`, where the rule keeps buying labels);
* naive — refitting at every label, i.e. one :func:`costly_cp.should_stop` call at size m (the
  per-decision cost of the direct implementation);
* MAPIE 1.x's split-conformal quantile (``mapie.utils._compute_classification_quantile``, private)
  as the peer for the threshold itself: same value on the same scores, and its time.

No peer library offers label-budgeted calibration (MAPIE, crepes, puncc only warn about small n).

Usage: python packages/costly-cp/benchmarks/run.py [--quick] [--out reports/bench/costly-cp.json]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from costly_cp import LabelBudgetCalibrator, conformal_threshold, should_stop
from costly_cp.data import never_stopping_stream, never_stopping_task
from icml26_shared.bench import BenchReport, time_call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/costly-cp.json")
    args = parser.parse_args()
    top = 10_000 if args.quick else 100_000
    marks = [m for m in (1_000, 10_000, 100_000) if m <= top]
    report = BenchReport("costly-cp", quick=args.quick)
    S, y = never_stopping_task(top)
    per_decision = {}
    for m in marks:
        case = f"m={m}"
        cal = LabelBudgetCalibrator(lambda s: s, n_future=1e15, max_labels=m)
        t = time_call(
            lambda cal=cal, m=m: cal.conformalize(S, lambda i: int(y[i])), repeats=1, warmup=0
        )
        res = cal.result_
        assert res.m == m, "the rule must keep buying labels up to m"
        per_decision[m] = t.median / m
        report.add(
            case,
            "ours (amortised, per decision)",
            t.median / m,
            refits=len(res.trace.n),
            session_s=t.median,
        )
        scores, curve = never_stopping_stream(m)
        naive = time_call(
            lambda s=scores, c=curve: should_stop(s, c, alpha=0.1, n_future=1e15),
            repeats=3 if m >= 100_000 else 5,
        )
        report.add(case, "naive refit (one should_stop at m)", naive)
        report.ratio(case, "ours (amortised, per decision)", "naive refit (one should_stop at m)")
        try:
            from mapie.utils import _compute_classification_quantile  # the peer's (private) helper
        except ImportError:  # pragma: no cover
            continue
        s = np.random.default_rng(2).random(m)
        ours_q = conformal_threshold(s, 0.1)
        peer_q = float(_compute_classification_quantile(s.reshape(-1, 1), np.array([0.1]))[0])
        report.add(
            case,
            "threshold: ours",
            time_call(lambda s=s: conformal_threshold(s, 0.1)),
            same_threshold=ours_q == peer_q,
        )
        report.add(
            case,
            "threshold: MAPIE",
            time_call(
                lambda s=s: _compute_classification_quantile(s.reshape(-1, 1), np.array([0.1]))
            ),
        )
        report.ratio(case, "threshold: ours", "threshold: MAPIE")
    print(report.to_text())
    if len(marks) >= 2:
        lo, hi = marks[0], marks[-1]
        growth = per_decision[hi] / per_decision[lo]
        print(
            f"amortised cost from m={lo} to m={hi}: x{growth:.2f} (log m grows x{math.log(hi) / math.log(lo):.2f})"
        )
    print(f"written to {report.write(args.out)}")


if __name__ == "__main__":
    main()
