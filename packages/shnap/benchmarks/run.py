"""SHNAP timing against shapiq (exact SV/SII) and shap (permutation explainer), side by side.

    .venv/bin/python packages/shnap/benchmarks/run.py [--quick] [--out reports/bench/shnap.json]

Spec acceptance 7: one 32^3 case, N = 5 players, K = 2 edits per coalition, 50 bridge steps
<= 90 s on 2 cores (the "bridge N=5 K=2" row). The algebra rows time the exact Shapley values
and pairwise interactions from a table of 2^N game values (ours vs shapiq's ExactComputer); the
end-to-end rows run the same edit-and-score game (global-mean fill, oracle) through shnap,
shapiq and shap.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import shnap
from icml26_shared.bench import BenchReport, time_call


def _algebra(report: BenchReport, repeats: int) -> None:
    try:
        import shapiq
    except ImportError:
        shapiq = None
    rng = np.random.default_rng(0)
    for n in (6, 9, 12):
        v = rng.normal(size=2**n)
        case = f"algebra N={n}"
        report.add(
            case,
            "shnap exact_sv_sii",
            time_call(lambda v=v: shnap.exact_sv_sii(v), repeats=repeats),
        )
        if shapiq is not None:
            weights = 1 << np.arange(n)

            def run(v=v, n=n, weights=weights):
                comp = shapiq.ExactComputer(
                    lambda c: v[(np.asarray(c, bool) * weights).sum(1)], n_players=n
                )
                comp("SV")
                comp("SII", order=2)

            report.add(case, "shapiq ExactComputer SV+SII", time_call(run, repeats=repeats))
            report.ratio(case, "shnap exact_sv_sii", "shapiq ExactComputer SV+SII")


def _end_to_end(report: BenchReport, repeats: int) -> None:
    fills = {n: getattr(shnap, n) for n in ("GlobalMeanFill",) if hasattr(shnap, n)}
    if not fills:
        return
    fill = fills["GlobalMeanFill"]()
    ph = shnap.make_phantom(32, n_nodules=4, electrodes=1, seed=40_000)
    players = [*ph.nodule_masks, *ph.electrode_masks][:5]
    oracle = shnap.OracleRisk.for_phantom(ph)
    n = len(players)
    case = f"edit+score N={n} (global-mean fill, oracle)"
    report.add(
        case,
        "shnap K=1",
        time_call(lambda: shnap.shnap(oracle, ph.image, players, fill, k=1), repeats=repeats),
    )

    def game(coalitions):
        out = []
        for keep in np.asarray(coalitions, bool):
            removed = np.zeros(ph.shape, bool)
            for i, m in enumerate(players):
                if not keep[i]:
                    removed |= m
            x = fill.remove(ph.image, removed, 0) if removed.any() else ph.image
            out.append(oracle.logit(x))
        return np.array(out)

    try:
        import shapiq

        def run_shapiq():
            comp = shapiq.ExactComputer(game, n_players=n)
            comp("SV")
            comp("SII", order=2)

        report.add(case, "shapiq ExactComputer", time_call(run_shapiq, repeats=repeats))
        report.ratio(case, "shnap K=1", "shapiq ExactComputer")
    except ImportError:
        pass
    try:
        import shap

        def run_shap():
            explainer = shap.PermutationExplainer(
                lambda z: game(z), shap.maskers.Independent(np.zeros((1, n)))
            )
            explainer(np.ones((1, n)), max_evals=2 * (2 * n + 1), silent=True)

        report.add(
            case,
            "shap PermutationExplainer (SV only, approximate)",
            time_call(run_shap, repeats=repeats),
        )
        report.ratio(case, "shnap K=1", "shap PermutationExplainer (SV only, approximate)")
    except ImportError:
        pass


def _bridge(report: BenchReport) -> None:
    if not hasattr(shnap, "Bridge"):
        return
    bridge = shnap.Bridge.pretrained()
    cnn, _ = shnap.train_risk_cnn(shnap.CNNConfig("zeros", False, 1500, 25))
    ph = shnap.make_phantom(32, n_nodules=4, electrodes=1, seed=40_000)
    players = [*ph.nodule_masks, *ph.electrode_masks][:5]
    timing = time_call(
        lambda: shnap.shnap(cnn, ph.image, players, bridge, k=2), repeats=1, warmup=0
    )
    report.add("one 32^3 case", f"bridge N={len(players)} K=2 (item 7: <= 90 s)", timing)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/shnap.json")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    repeats = 2 if args.quick else 5
    report = BenchReport("shnap", quick=args.quick)
    _algebra(report, repeats)
    _end_to_end(report, 1 if args.quick else 3)
    _bridge(report)
    print(report.to_text())
    report.write(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
