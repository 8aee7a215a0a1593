"""Per-word fit (the paper's) vs one pass per TR (the pipeline's function), on the tiny LM and the
synthetic fMRI: held-out BA r on signal / noise voxels for each, and the fit-vs-pipeline
``consistency_gap`` of the per-word fit on 20 random TRs (and on all held-out TRs with P_j ≠ ∅).

Run from the repo root:

    python packages/brain-attrib/benchmarks/diag_per_word.py [--layers 1 2 4] [--context 32]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from brain_attrib import EncodingModel, Pipeline, consistency_gap
from brain_attrib.synthetic import fmri, planted_words, tiny_lm


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--context", type=int, default=32)
    args = ap.parse_args()
    torch.set_num_threads(2)
    lm, tok, _ = tiny_lm(progress=True)
    lm = lm.double()
    rd = fmri(seed=0)
    sig, noise = rd.extras["signal_voxels"], rd.extras["noise_voxels"]
    trs = np.asarray([g for g in range(len(rd.data)) if planted_words(rd, g)])
    for layer in args.layers:
        for features in ("per_tr", "per_word"):
            t0 = time.perf_counter()
            em = EncodingModel(lm, tok, layer=layer, context=args.context, features=features)
            em.fit(rd, progress=True)
            r = em.score()
            pl = Pipeline(em, voxels=sig)
            print(
                f"layer {layer} {features}: BA r signal {r[sig].mean():.3f} noise "
                f"{r[noise].mean():.3f} ({time.perf_counter() - t0:.0f} s)\n"
                f"  gap, 20 TRs: {consistency_gap(pl)}\n"
                f"  gap, {len(trs)} TRs with P_j: {consistency_gap(pl, trs)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
