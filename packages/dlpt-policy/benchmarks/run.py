"""Timing and quality of DLPT against its peers on the same simulated trials.

    python packages/dlpt-policy/benchmarks/run.py [--quick] [--out reports/bench/dlpt-policy.json]

Cases: (1) per-arm values — DLPT V̂(π ≡ t_k) vs doubleml ``DoubleMLAPOS`` (time, max |diff|/SE,
max |error|/SE against the Monte Carlo truth); (2) best-arm/continuous targeting — DLPT policy
learning vs econml ``DRPolicyForest`` and the in-package DR best-arm policy (time, true value,
share of the V(t*) − best-arm gap). Peers are skipped when not installed. Imports only public
names of dlpt.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dlpt import DLPT, peers
from dlpt.baselines import DRBestArmPolicy
from dlpt.data import simulate_rct
from icml26_shared.bench import BenchReport, time_call


def _fit(data, folds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return DLPT(degree=2, hidden=(32, 32), folds=folds, seed=0).fit(
            data.X, data.t, data.y, data.arms, data.probs
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/dlpt-policy.json")
    args = parser.parse_args()
    n = 5_000 if args.quick else 20_000
    repeats = 1 if args.quick else 2
    report = BenchReport("dlpt-policy", quick=args.quick)
    data = simulate_rct(n, seed=11)
    truths = np.array([data.true_value(float(a)) for a in data.arms])

    case = f"per-arm values n={n}"
    holder: dict = {}
    t_ours = time_call(lambda: holder.update(m=_fit(data, 5)), repeats=repeats, warmup=0)
    model = holder["m"]
    ests = [model.value(float(a)) for a in data.arms]
    v = np.array([e.v for e in ests])
    se = np.array([e.se for e in ests])
    report.add(
        case, "DLPT (5-fold)", t_ours, max_err_over_se=float(np.max(np.abs(v - truths) / se))
    )
    if peers.doubleml_available():
        out: dict = {}
        t_peer = time_call(
            lambda: out.update(r=peers.doubleml_apos(data.X, data.t, data.y, data.arms)),
            repeats=repeats,
            warmup=0,
        )
        coef, _ = out["r"]
        report.add(
            case,
            "doubleml DoubleMLAPOS (5-fold)",
            t_peer,
            max_err_over_se=float(np.max(np.abs(coef - truths) / se)),
            max_diff_over_dlpt_se=float(np.max(np.abs(coef - v) / se)),
        )
        report.ratio(case, "DLPT (5-fold)", "doubleml DoubleMLAPOS (5-fold)")

    case = f"targeting n={n}"
    gap = data.gap(200_000)

    def share(pol) -> float:
        return (data.true_value(pol, 200_000) - gap["best_single_arm"]) / gap["gap"]

    pol_box: dict = {}
    t_learn = time_call(
        lambda: pol_box.update(p=_fit(data, 2).learn_policy(split="honest")),
        repeats=1,
        warmup=0,
    )
    report.add(case, "DLPT fit + learn_policy (honest)", t_learn, gap_share=share(pol_box["p"]))
    dr_box: dict = {}
    t_dr = time_call(
        lambda: dr_box.update(
            p=DRBestArmPolicy().fit(data.X, data.t, data.y, data.arms, data.probs)
        ),
        repeats=1,
        warmup=0,
    )
    report.add(case, "DR best arm (in-package)", t_dr, gap_share=share(dr_box["p"]))
    if peers.econml_available():
        f_box: dict = {}
        t_f = time_call(
            lambda: f_box.update(p=peers.dr_policy_forest(data.X, data.t, data.y, data.arms)),
            repeats=1,
            warmup=0,
        )
        report.add(case, "econml DRPolicyForest", t_f, gap_share=share(f_box["p"]))
        report.ratio(case, "DLPT fit + learn_policy (honest)", "econml DRPolicyForest")
    print(report.to_text())
    report.write(args.out)


if __name__ == "__main__":
    main()
