"""Benchmarks for perturbedvae: fit and predict time of PerturbedVAE vs its peers, same inputs.

Run: ``.venv/bin/python packages/perturbedvae/benchmarks/run.py [--quick] [--out reports/bench/perturbedvae.json]``

One synthetic screen (controls + 12 singles; 20 held-out doubles); every method is fit on the
same train split and predicts the same doubles. Reported: seconds per fit (a fixed number of
epochs for the neural models), seconds per predict of all doubles, and the pseudobulk RMSE on
the doubles so the timing comes with the quality it buys. Ratios: peer time / our time.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from icml26_shared.bench import BenchReport, time_call
from perturbedvae import PerturbedVAE
from perturbedvae.baselines import Additive, CPALike, NoSeparationVAE, Ridge
from perturbedvae.data import simulate_screen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller screen, fewer epochs")
    parser.add_argument("--out", default="reports/bench/perturbedvae.json")
    args = parser.parse_args()
    torch.set_num_threads(1)  # every method on one thread, the same for all
    cells, controls, epochs = (60, 400, 5) if args.quick else (200, 2000, 20)
    split = simulate_screen(cells, controls, n_mc=2000 if args.quick else 20000, seed=0)
    tm = split.test.truth["true_means"]
    report = BenchReport("perturbedvae", quick=args.quick)
    case_fit = f"fit {split.train.n_cells} cells, {epochs} epochs"
    case_pred = f"predict {len(split.doubles)} doubles x 500 cells"
    makers = {
        "PerturbedVAE": lambda: PerturbedVAE(100, 12).fit(split.train, epochs=epochs, lr=1e-3),
        "PerturbedVAE alpha=0": lambda: PerturbedVAE(100, 12, alpha=0.0).fit(
            split.train, epochs=epochs, lr=1e-3
        ),
        "no separation": lambda: NoSeparationVAE(100, 12).fit(split.train, epochs=epochs, lr=1e-3),
        "CPA-like": lambda: CPALike(100, 12).fit(split.train, epochs=epochs, lr=1e-3),
        "additive": lambda: Additive().fit(split.train),
        "ridge": lambda: Ridge().fit(split.train),
    }
    repeats = 1 if args.quick else 2
    PerturbedVAE(100, 12).fit(split.train, epochs=1)  # untimed: torch's one-off start-up costs
    for name, make in makers.items():
        fitted = []
        t_fit = time_call(
            lambda make=make, fitted=fitted: fitted.append(make()), repeats=repeats, warmup=0
        )
        model = fitted[-1]
        t_pred = time_call(lambda model=model: model.predict(split.doubles, n_cells=500), repeats=3)
        pred = model.predict(split.doubles, n_cells=500)
        err = float(
            np.mean(
                [np.sqrt(np.mean((pred.mean[k] - tm[d]) ** 2)) for k, d in enumerate(split.doubles)]
            )
        )
        report.add(case_fit, name, t_fit)
        report.add(case_pred, name, t_pred, rmse=err)
    for peer in ("PerturbedVAE alpha=0", "no separation", "CPA-like", "additive", "ridge"):
        report.ratio(case_fit, "PerturbedVAE", peer)
        report.ratio(case_pred, "PerturbedVAE", peer)
    print(report.to_text())
    print(f"written to {report.write(args.out)}")


if __name__ == "__main__":
    main()
