"""Item 7 diagnostic: can the package's GPT learn in-context retrieval at all at this budget?

Run: ``.venv/bin/python packages/geomem/benchmarks/retrieval_probe.py --task recall``
(or ``--task nocomma``; ``--positions rotary``, ``--steps``, ``--lr``, ``--batch``).

* ``recall``: associative recall. ``k`` key-value pairs of distinct node tokens, shuffled, as
  ``a b ,`` triples, then ``q`` queries ``a_j b_j``; the loss falls on each ``b_j``, predicted
  at the position of its key. This is the in-context edge lookup without the graph.
* ``nocomma``: the in-context path-star of :mod:`geomem.incontext` (d = 5, l = 5) with the
  commas inside the path removed (``= root n1 n2 n3 t <eos>``), so the next node is looked
  up by the current token (a plain induction step). **Not the spec's format**: a diagnostic.

Same GPT, AdamW parameter groups (weight decay 0.01 on matrices and the token table, none on
biases and LayerNorm gains) and schedule (100 linear warm-up steps, cosine to ``lr / 10``) as
:func:`geomem.incontext.train_incontext`, restated here because benchmarks use public names
only; one torch thread. Prints accuracy on 200 held-out sequences every 250 steps.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch
from torch.nn import functional as F

from geomem.incontext import make_dataset
from geomem.models import GPT
from geomem.tasks import SPECIALS

N_LABELS = 50
SP = {s: N_LABELS + i for i, s in enumerate(SPECIALS)}


def recall_batch(n: int, k: int, q: int, rng: np.random.Generator) -> torch.Tensor:
    rows = []
    for _ in range(n):
        toks = rng.choice(N_LABELS, size=2 * k, replace=False)
        ids: list[int] = []
        for a, b in zip(toks[:k], toks[k:], strict=True):
            ids += [int(a), int(b), SP[","]]
        ids[-1] = SP["="]
        for j in rng.choice(k, size=q, replace=False):
            ids += [int(toks[j]), int(toks[k + j])]
        rows.append(ids)
    return torch.tensor(rows)


def nocomma_batch(n: int, rng: np.random.Generator, d: int = 5, l: int = 5) -> torch.Tensor:
    """``n`` sequences of :func:`geomem.incontext.make_dataset` with the commas after ``=``
    dropped (every row has the same layout, so the kept columns are those of row 0)."""
    b = make_dataset(n, d=d, l=l, n_labels=N_LABELS, seed=int(rng.integers(2**31)))
    keep = [i for i in range(b.ids.shape[1]) if i <= b.eq or int(b.ids[0, i]) != SP[","]]
    return b.ids[:, keep]


def lr_at(s: int, lr: float, steps: int, warmup: int = 100) -> float:
    if s < warmup:
        return lr * (s + 1) / warmup
    frac = (s - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=("recall", "nocomma"), default="recall")
    ap.add_argument("--positions", choices=("learned", "rotary"), default="learned")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--pairs", type=int, default=10, help="recall: key-value pairs")
    ap.add_argument("--queries", type=int, default=5, help="recall: queries per sequence")
    a = ap.parse_args()
    torch.set_num_threads(1)
    print(vars(a), flush=True)

    def make(n: int, rng: np.random.Generator) -> torch.Tensor:
        if a.task == "recall":
            return recall_batch(n, a.pairs, a.queries, rng)
        return nocomma_batch(n, rng)

    ev = make(200, np.random.default_rng(99))
    t = ev.shape[1]
    if a.task == "recall":  # positions of the query keys; each predicts its value
        src = torch.arange(3 * a.pairs, t - 1, 2)
        names = {"recall": slice(None)}
    else:  # positions of "=", root, n1, n2, n3: each predicts the next path node
        eq = t - 7
        src = torch.arange(eq, eq + 5)
        names = {"root": slice(0, 1), "n1": slice(1, 2), "n2": slice(2, 3), "later": slice(2, 5)}
    m = GPT(N_LABELS, dim=128, n_layers=2, n_heads=4, positions=a.positions, max_len=t, seed=0)
    params = [p for p in m.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.01},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=lr_at(0, a.lr, a.steps))
    rng = np.random.default_rng(0)
    t0 = time.time()
    for s in range(a.steps + 1):
        if s % 250 == 0:
            with torch.no_grad():
                ok = (m(ev[:, :-1]).argmax(-1)[:, src] == ev[:, src + 1]).double()
            acc = {k: round(float(ok[:, v].mean()), 3) for k, v in names.items()}
            print(s, acc, f"{time.time() - t0:.0f} s", flush=True)
        if s == a.steps:
            break
        ids = make(a.batch, rng)
        logits = m(ids[:, :-1])[:, src]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, src + 1].reshape(-1))
        for group in opt.param_groups:
            group["lr"] = lr_at(s, a.lr, a.steps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
