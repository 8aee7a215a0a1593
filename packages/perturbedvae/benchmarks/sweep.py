"""Small training-setting diagnostics for PerturbedVAE (one seed, one fit per variant).

Prints one JSON line per fit: the held-out doubles metrics and the probes of the reproduce
tables, for the synthetic screen (``--data syn``) or the semi-synthetic PBMC one (``--data semi``).
Used for the README's diagnosis (e.g. the initial scale of the intervention targets Δ).

    python packages/perturbedvae/benchmarks/sweep.py --data semi --delta-init 0.1 1.0
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import torch

from perturbedvae import PerturbedVAE, background_r2, probe_accuracy
from perturbedvae.data import semisynthetic_pbmc, simulate_screen
from perturbedvae.staged import QUICK, held_out_singles, score_doubles


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", choices=["syn", "semi"], default="syn")
    ap.add_argument("--delta-init", type=float, nargs="+", default=[0.1])
    ap.add_argument("--omega-init", type=float, default=0.1)
    ap.add_argument("--alpha", type=float, nargs="+", default=[0.05])
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--cells", type=int, default=0, help="cells per condition (0: quick size)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    s = args.seed
    if args.data == "syn":
        split = simulate_screen(args.cells or QUICK.syn_cells, QUICK.syn_controls, seed=s)
        dims = (8, 6)
    else:
        split = semisynthetic_pbmc(args.cells or QUICK.semi_cells, QUICK.semi_controls, seed=s)
        dims = (QUICK.semi_d_bg, QUICK.semi_d_pert)
    tr, test, sing = split.train, split.test, held_out_singles(split)
    for d0 in args.delta_init:
        for alpha in args.alpha:
            t0 = time.process_time()
            m = PerturbedVAE(tr.n_genes, len(tr.perturbations), *dims, alpha=alpha,
                             omega_init=args.omega_init, delta_init=d0)  # fmt: skip
            m.fit(tr, epochs=args.epochs, lr=args.lr, seed=s)
            fit_s = time.process_time() - t0
            met = score_doubles({"m": m}, split, QUICK, s)["metrics"]["m"]
            out = {"data": args.data, "delta_init": d0, "omega_init": args.omega_init,
                   "alpha": alpha, "lr": args.lr, "epochs": args.epochs, "seed": s,
                   "fit_cpu_s": round(fit_s, 1), "loss_last": round(m.history[-1], 2)}  # fmt: skip
            out |= {k: round(v, 4) for k, v in met.items()}
            lab = sing.conditions
            out["probe ẑ_ν"] = probe_accuracy(m.perturbation_latent(sing), lab, seed=s)[0]
            out["probe ẑ_ι"] = probe_accuracy(m.background(sing), lab, seed=s)[0]
            if args.data == "syn":
                out["R²"] = background_r2(m.background(test), test.truth["z_bg"], seed=s)
                out["probe true z_ν"] = probe_accuracy(sing.truth["z_pert"], lab, seed=s)[0]
            else:
                held = test.subset(~np.isin(test.conditions, split.doubles))
                ct = held.truth["cell_type"]
                out["cell-type probe ẑ_ι"] = probe_accuracy(m.background(held), ct, seed=s)[0]
            print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                              for k, v in out.items()}, ensure_ascii=False), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
