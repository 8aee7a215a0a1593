# ruff: noqa
"""Diagnostic of issue 22 (run from the repo root: python packages/brain-attrib/benchmarks/diag_nwp.py); figures in README."""

import time

import numpy as np
import torch

torch.set_num_threads(2)

from brain_attrib import EncodingModel, Pipeline
from brain_attrib.metrics import center_of_mass, top_k
from brain_attrib.synthetic import fmri, planted_words, tiny_lm

t0 = time.time()
lm, tok, info = tiny_lm()
lm = lm.double()
rd = fmri(seed=0)
sig = rd.extras["signal_voxels"]
E = lm.get_input_embeddings().weight.detach()
pool = {}
for w, c in zip(rd.words, rd.categories):
    pool.setdefault(c, set()).add(w)
em = EncodingModel(lm, tok, layer=1, context=32).fit(rd, folds=4)
pl = Pipeline(em, voxels=sig)
rng = np.random.default_rng(0)
cand = [
    g
    for g in range(len(rd.data))
    if len(em.context_words(g)[0]) == 32
    and em.context_words(g)[1] is not None
    and planted_words(rd, g)
]
trs = rng.choice(cand, 40, replace=False)
# (b) indexing check vs HF loss
g = int(trs[0])
ctx, nxt = em.context_words(g)
words = [rd.words[i] for i in ctx]
item = em._encode(g, words, ctx, rd.words[nxt])
ids, p = em._pad([item])
pl._ids = ids
lb, ln, _ = pl._objectives(g, E[ids], p, [item[2]])
labels = torch.full_like(ids, -100)
labels[0, item[2]] = ids[0, item[2]]
print(
    "NWP ours",
    float(ln[0]),
    "HF loss",
    float(lm(input_ids=ids, labels=labels).loss),
    "next word",
    rd.words[nxt],
    "ctx tail",
    words[-4:],
)
res = {}


def add(k, v):
    res.setdefault(k, []).append(v)


for g in trs:
    g = int(g)
    ctx, nxt = em.context_words(g)
    words = [rd.words[i] for i in ctx]
    n = len(words)
    nw = rd.words[nxt]
    ncat = rd.categories[nxt].split("_")[0]
    item = em._encode(g, words, ctx, nw)
    ids, p = em._pad([item])
    tw = item[3]
    e = E[ids[0]]
    cm = torch.stack(
        [
            torch.stack(
                [E[tok.encode_word(w)].mean(0) for w in sorted(pool[rd.categories[ctx[k]]])]
            ).mean(0)
            if k >= 0
            else E[ids[0, 0]] * 0
            for k in tw
        ]
    )

    def agg(v):
        return np.array([v[tw == k].sum() for k in range(n)])[::-1]

    x = e[None].clone().requires_grad_(True)
    pl._ids = ids
    _, ln, _ = pl._objectives(g, x, p, [item[2]])
    (gr,) = torch.autograd.grad(-ln.sum(), x)
    gr = gr[0]
    S = {
        "gxi": agg((e * gr).sum(-1).numpy()),
        "gx(e-cat)": agg(((e - cm) * gr).sum(-1).numpy()),
        "sal": agg((gr**2).sum(-1).numpy()) ** 0.5,
    }
    S["ig"] = pl.attribute(g, "nwp", "ig", baseline="zero").scores
    S["erasure"] = pl.attribute(g, "nwp", "erasure").scores
    for m, s in S.items():
        f = np.mean([q < 5 for q in top_k(s, 5)])
        add((m, "all"), f)
        add((m, ncat), f)
        add((m, "com"), center_of_mass(s))
print({k: (round(float(np.mean(v)), 3), len(v)) for k, v in res.items()})
print("t", time.time() - t0)
