# ruff: noqa
"""Diagnostic of issue 22 (run from the repo root: python packages/brain-attrib/benchmarks/diag_baselines.py); figures in README."""

import time

import numpy as np
import torch

torch.set_num_threads(2)
from scipy.stats import spearmanr

from brain_attrib import EncodingModel, Pipeline
from brain_attrib.metrics import iou, top_k
from brain_attrib.synthetic import fmri, planted_words, tiny_lm

t0 = time.time()
lm, tok, info = tiny_lm()
lm = lm.double()
rd = fmri(seed=0)
sig = rd.extras["signal_voxels"]
E = lm.get_input_embeddings().weight.detach()
P = lm.transformer.wpe.weight.detach()
print(
    "wpe norm mean", P[:40].norm(dim=1).mean().item(), "wte norm mean", E.norm(dim=1).mean().item()
)
# corpus-frequency mean embedding
ids_all = [i for w in rd.words for i in tok.encode_word(w)]
ebar = E[ids_all].mean(0)
catmean = {}
pool = {}
for w, c in zip(rd.words, rd.categories):
    pool.setdefault(c, set()).add(w)
rng = np.random.default_rng(0)


def _same_category(cat, word, rng):
    """A random other word of the run's category ``cat`` (the pipeline's erasure replacement)."""
    cands = sorted(pool[cat] - {word}) or [word]
    return cands[int(rng.integers(len(cands)))]


layer = int(__import__("sys").argv[1]) if len(__import__("sys").argv) > 1 else 1
em = EncodingModel(lm, tok, layer=layer, context=32).fit(rd, folds=4)
pl = Pipeline(em, voxels=sig)
cand = [
    g
    for g in range(len(rd.data))
    if len(em.context_words(g)[0]) == 32
    and em.context_words(g)[1] is not None
    and planted_words(rd, g)
]
trs = rng.choice(cand, 20, replace=False)


def grads(g, x_list, obj="ba"):
    """return per-token grads of -L at each x in list (stack)"""
    ctx, nxt = em.context_words(g)
    words = [rd.words[i] for i in ctx]
    nw = rd.words[nxt] if obj == "nwp" else None
    item = em._encode(g, words, ctx, nw)
    ids, p = em._pad([item])
    x = torch.stack(x_list).requires_grad_(True)
    pl._ids = ids.expand(len(x_list), -1)
    lb, ln, yh = pl._objectives(g, x, p.expand(len(x_list), -1, -1), [item[2]] * len(x_list))
    L = lb if obj == "ba" else ln
    (gr,) = torch.autograd.grad(-L.sum(), x)
    return gr, item, ids


res = {}


def add(m, v):
    res.setdefault(m, []).append(v)


for g in trs:
    g = int(g)
    ctx, _ = em.context_words(g)
    words = [rd.words[i] for i in ctx]
    n = len(words)
    item = em._encode(g, words, ctx, None)
    ids, _ = em._pad([item])
    tw = item[3]
    e = E[ids[0]]
    # baselines
    cm = torch.stack(
        [
            E[
                [i for w in sorted(pool[rd.categories[ctx[k]]]) for i in tok.encode_word(w)][:1]
            ].mean(0)
            if False
            else torch.stack(
                [E[tok.encode_word(w)].mean(0) for w in sorted(pool[rd.categories[ctx[k]]])]
            ).mean(0)
            for k in tw
        ]
    )
    bases = {"zero": torch.zeros_like(e), "mean": ebar.expand_as(e).clone(), "catmean": cm}

    def agg(tokv):
        return np.array([tokv[tw == k].sum() for k in range(n)])[::-1]

    S = {}
    gr, _, _ = grads(g, [e])
    gr = gr[0]
    S["gxi"] = agg((e * gr).sum(-1).numpy())
    S["saliency_l2"] = agg(gr.norm(dim=-1).numpy() ** 2) ** 0.5
    for bn, b in bases.items():
        S[f"gx(e-{bn})"] = agg(((e - b) * gr).sum(-1).numpy())
        al = (torch.arange(20, dtype=e.dtype) + 0.5) / 20
        gi, _, _ = grads(g, [b + a * (e - b) for a in al])
        S[f"ig_{bn}"] = agg(((e - b) * gi.mean(0)).sum(-1).numpy())
    # erasure
    S["erasure"] = pl.attribute(g, "ba", "erasure").scores
    r2 = np.random.default_rng(g)
    y0 = pl.predict(g)
    S["erasure_yhat"] = np.array(
        [
            np.sum(
                (
                    pl.predict(
                        g,
                        [
                            *words[:i],
                            _same_category(rd.categories[ctx[i]], words[i], r2),
                            *words[i + 1 :],
                        ],
                    )
                    - y0
                )
                ** 2
            )
            for i in range(n)
        ]
    )[::-1]
    Pw = planted_words(rd, g)
    wi = ctx[::-1]
    pos = {int(np.flatnonzero(wi == i)[0]) for i in Pw}
    for m, s in S.items():
        add(("rec", m), iou(top_k(s, len(pos)), pos))
        add(("rho_er", m), spearmanr(np.abs(s), np.abs(S["erasure"])).statistic)
    add(("rho", "gxi~ig_zero"), spearmanr(S["gxi"], S["ig_zero"]).statistic)
    add(("rho", "gx(e-mean)~ig_mean"), spearmanr(S["gx(e-mean)"], S["ig_mean"]).statistic)
    add(
        ("rho", "gx(e-catmean)~ig_catmean"),
        spearmanr(S["gx(e-catmean)"], S["ig_catmean"]).statistic,
    )
print("layer", layer, "r", em.score()[sig].mean())
for k, v in res.items():
    print(k, round(float(np.mean(v) if k[0] == "rec" else np.median(v)), 3))
print("t", time.time() - t0)
