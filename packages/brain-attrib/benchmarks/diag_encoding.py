# ruff: noqa
"""Diagnostic of issue 22 (run from the repo root: python packages/brain-attrib/benchmarks/diag_encoding.py); figures in README."""

import time

import numpy as np
import torch

torch.set_num_threads(2)
from brain_attrib import EncodingModel
from brain_attrib.ridge import blocked_folds, fit_ridge, pearson_cols
from brain_attrib.synthetic import NOUNS, TOPICS, fmri, tiny_lm

t0 = time.time()
lm, tok, info = tiny_lm()
lm = lm.double()
rd = fmri(seed=0)
sig = rd.extras["signal_voxels"]
noise = rd.extras["noise_voxels"]
print(
    "corr(signal,data) sig vox:", pearson_cols(rd.extras["signal"][:, sig], rd.data[:, sig]).mean()
)
# oracle design: per TR j, delays 1..4, mean over words in TR j-d of (noun one-hot-of-stem vector s? ) -> use true HRF-free pooled noun indicator x topic
nouns = [n for t in TOPICS for n in NOUNS[t]]


def oracle_X(delays=(1, 2, 3, 4), pool="mean"):
    X = np.zeros((len(rd.data), len(delays) * len(nouns)))
    for g in range(len(rd.data)):
        r = rd.tr_run[g]
        j = rd.tr_local[g]
        idx = np.flatnonzero(rd.word_run == r)
        b = (rd.onsets[idx] // rd.tr).astype(int)
        for di, d in enumerate(delays):
            ws = idx[b == j - d]
            for i in ws:
                c = rd.categories[i]
                if c.startswith("noun"):
                    w = rd.words[i]
                    stem = w[:-1] if c == "noun_pl" else w
                    X[g, di * len(nouns) + nouns.index(stem)] += 1.0 / (
                        len(ws) if pool == "mean" else 1
                    )
    return X


def cv_r(X):
    y = rd.data
    pred = np.zeros_like(y)
    for tr, te in blocked_folds(len(y), 4, 5):
        m = fit_ridge(X[tr], y[tr])
        pred[te] = m.predict(X[te])
    r = pearson_cols(pred, y)
    return r[sig].mean(), r[noise].mean()


for dl in [(1, 2, 3, 4), (1, 2, 3, 4, 5, 6)]:
    for pool in ["mean", "sum"]:
        print("oracle noun-identity design", dl, pool, cv_r(oracle_X(dl, pool)))
print("t", time.time() - t0)
for layer in (0, 1, 2):
    em = EncodingModel(lm, tok, layer=layer, context=32).fit(rd, folds=4)
    r = em.score()
    print("layer", layer, "r sig", r[sig].mean(), "noise", r[noise].mean(), "t", time.time() - t0)
