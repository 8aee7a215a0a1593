# ruff: noqa
"""Diagnostic of issue 22 (run from the repo root: python packages/brain-attrib/benchmarks/diag_oracle.py); figures in README."""

# oracle ceiling: a perfect TR-pooled linear model of noun identity (ridge on one-hot noun design, delays 1-4)
import numpy as np

from brain_attrib.metrics import iou, top_k
from brain_attrib.ridge import blocked_folds, fit_ridge, pearson_cols
from brain_attrib.synthetic import NOUNS, TOPICS, fmri, planted_words

rd = fmri(seed=0)
sig = rd.extras["signal_voxels"]
nouns = [n for t in TOPICS for n in NOUNS[t]]
N = len(nouns)
D = (1, 2, 3, 4)


def stem(i):
    w = rd.words[i]
    return w[:-1] if rd.categories[i] == "noun_pl" else w


def ctxinfo(g, L=32):
    r = rd.tr_run[g]
    j = rd.tr_local[g]
    idx = np.flatnonzero(rd.word_run == r)
    n = int(np.searchsorted(rd.onsets[idx], j * rd.tr))
    ctx = idx[max(0, n - L) : n]
    return ctx, j


def design(ctx, j, words_override=None):
    x = np.zeros(len(D) * N)
    b = (rd.onsets[ctx] // rd.tr).astype(int)
    for k, i in enumerate(ctx):
        if j - b[k] in D and rd.categories[i].startswith("noun"):
            s = stem(i) if words_override is None or k not in words_override else words_override[k]
            x[D.index(j - b[k]) * N + nouns.index(s)] += 0.25
    return x


X = np.array([design(*ctxinfo(g)) for g in range(len(rd.data))])
y = rd.data
folds = []
fold_of = np.zeros(len(y), int)
pred = np.zeros_like(y)
for k, (tr, te) in enumerate(blocked_folds(len(y), 4, 5)):
    m = fit_ridge(X[tr], y[tr])
    folds.append(m)
    fold_of[te] = k
    pred[te] = m.predict(X[te])
print("oracle r", pearson_cols(pred, y)[sig].mean())
rng = np.random.default_rng(0)
cand = [g for g in range(len(y)) if len(ctxinfo(g)[0]) == 32 and planted_words(rd, g)]
trs = rng.choice(cand, 200, replace=False)
recL, recY, recG = [], [], []
for g in trs:
    ctx, j = ctxinfo(g)
    m = folds[fold_of[g]]
    f = lambda x: m.predict(x[None])[0][sig]
    y0 = f(design(ctx, j))
    yt = y[g, sig]
    L0 = np.mean((y0 - yt) ** 2)
    dL = np.zeros(len(ctx))
    dY = np.zeros(len(ctx))
    r2 = np.random.default_rng(g)
    for k, i in enumerate(ctx):
        if rd.categories[i].startswith("noun"):
            new = nouns[r2.integers(N)]
            y1 = f(design(ctx, j, {k: new}))
            dL[k] = np.mean((y1 - yt) ** 2) - L0
            dY[k] = np.sum((y1 - y0) ** 2)
    P = set(planted_words(rd, g))
    pos = {k for k, i in enumerate(ctx) if i in P}
    recL.append(iou(top_k(dL, len(pos)), pos))
    recY.append(iou(top_k(dY, len(pos)), pos))
print("oracle-pipeline erasure recovery: on L_BA", np.mean(recL), " on yhat", np.mean(recY))
