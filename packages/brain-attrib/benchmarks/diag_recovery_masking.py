# ruff: noqa
"""Diagnostic of issue 22 (run from the repo root: python packages/brain-attrib/benchmarks/diag_recovery_masking.py); figures in README."""

import sys
import time

import numpy as np
import torch

torch.set_num_threads(2)
from scipy.stats import spearmanr

from brain_attrib import EncodingModel, Pipeline, masking_test
from brain_attrib.metrics import iou, top_k
from brain_attrib.synthetic import fmri, planted_words, tiny_lm

t0 = time.time()
lm, tok, info = tiny_lm()
lm = lm.double()
rd = fmri(seed=0)
sig = rd.extras["signal_voxels"]
for L in [int(a) for a in sys.argv[1:]]:
    rng = np.random.default_rng(0)
    em = EncodingModel(lm, tok, layer=1, context=L).fit(rd, folds=4)
    pl = Pipeline(em, voxels=sig)
    cand = [
        g
        for g in range(len(rd.data))
        if len(em.context_words(g)[0]) == L
        and em.context_words(g)[1] is not None
        and planted_words(rd, g)
    ]
    trs = rng.choice(cand, 20, replace=False)
    rec = {}
    rho = {}
    for g in trs:
        g = int(g)
        S = {}
        for bl in ("zero", "category"):
            for m in ("gxi", "ig"):
                S[(m, bl)] = pl.attribute(g, "ba", m, baseline=bl)
        S[("erasure", "-")] = pl.attribute(g, "ba", "erasure")
        pos = {
            int(np.flatnonzero(S[("erasure", "-")].word_index == i)[0])
            for i in planted_words(rd, g)
        }
        for k, w in S.items():
            rec.setdefault(k, []).append(iou(top_k(w.scores, len(pos)), pos))
        for bl in ("zero", "category"):
            rho.setdefault(bl, []).append(
                spearmanr(S[("gxi", bl)].scores, S[("ig", bl)].scores).statistic
            )
            rho.setdefault("gap_" + bl, []).append(abs(S[("ig", bl)].extras["completeness_gap"]))
    print(
        f"L={L} r={em.score()[sig].mean():.3f} rec",
        {k: round(np.mean(v), 3) for k, v in rec.items()},
        "rho",
        {k: round(float(np.median(v)), 3) for k, v in rho.items()},
        "t",
        round(time.time() - t0),
    )
    mtrs = rng.choice(cand, 40, replace=False)
    for m, bl in (("gxi", "zero"), ("gxi", "category"), ("erasure", "zero")):
        mt = masking_test(pl, mtrs, method=m, baseline=bl)
        print(
            f"  L={L} masking k={mt.k} {m}/{bl}: r0 {mt.r_original:.3f} drop top {mt.drop_top:.3f} random {mt.drop_random:.3f}",
            "t",
            round(time.time() - t0),
        )
