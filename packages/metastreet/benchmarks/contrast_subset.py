"""Paired per-``w`` diagnostic of the contrastive term (items 1 and 2 of the spec).

Run (under the CPU lock): ``.venv/bin/python packages/metastreet/benchmarks/contrast_subset.py
n_side=32 imgs=2,5 epochs=60 seeds=0,1,2,3,4 budget=420`` and summarise with ``--summary FILE``.

For each seed and city kind (normal / spatially shuffled) it fits MetaStreet at fixed
``w`` = 0.1, 0.5, 0.9 and 1 (no contrast), two more ``w = 1`` restarts (seeds + 1000, + 2000)
and logistic regression on fused features, printing one JSON line per fit. ``contrast_on=elu``
gives 0.1.0's contrast on ``ELU(h¹)``; the default contrasts the layer-1 output ``h¹``. Because every fit
with the same seed starts from the same weights, the ``w="auto"`` model is recovered exactly
as the fixed-``w`` fit with the best validation F1, and the matched-budget control as the
best-on-validation of the three ``w = 1`` fits. Stops starting fits after ``budget`` seconds.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch

from metastreet import (
    HashingEncoder,
    MetaStreet,
    classification_metrics,
    encode_texts,
    make_city,
    street_features,
)
from metastreet.baselines import logistic_fused

VARIANTS = {
    "w01": {"w": 0.1},
    "w05": {"w": 0.5},
    "w09": {"w": 0.9},
    "nocon": {"w": 1.0},
    "nocon_r1": {"w": 1.0},
    "nocon_r2": {"w": 1.0},
}
SEED_OFFSET = {"nocon_r1": 1000, "nocon_r2": 2000}


def run(args: dict[str, str]) -> None:
    torch.set_num_threads(int(args.get("threads", 2)))
    n_side = int(args.get("n_side", 32))
    lo, hi = map(int, args.get("imgs", "5,20").split(","))
    width = int(args.get("width", 32))
    cfg = {"hidden": width, "d": width, "heads": int(args.get("heads", 4)),
           "head_dim": int(args.get("head_dim", 16)), "epochs": int(args.get("epochs", 60)),
           "n_categories": 12, "contrast_on": args.get("contrast_on", "layer")}  # fmt: skip
    seeds = [int(s) for s in args.get("seeds", "0,1,2,3,4").split(",")]
    kinds = args.get("kinds", "normal,shuffled").split(",")
    names = args.get("variants", ",".join([*VARIANTS, "logreg"])).split(",")
    budget = float(args.get("budget", 400))
    enc = HashingEncoder(64)
    t0 = time.time()
    for s in seeds:
        for kind in kinds:
            city = make_city(n_side=n_side, images_per_street=(lo, hi),
                             shuffle_space=kind == "shuffled", seed=s)  # fmt: skip
            for v in names:
                if time.time() - t0 > budget:
                    print("# budget reached", flush=True)
                    return
                t = time.time()
                if v == "logreg":
                    seq, lengths = street_features(city, 12)
                    txt = encode_texts(enc, list(city.texts or []))
                    sc = logistic_fused(city, seq.numpy(), lengths.numpy(), txt, 4)
                    test = city.mask("test")
                    res, val, w = classification_metrics(city.labels[test], sc[test]), None, None
                else:
                    m = MetaStreet(4, text_encoder=enc, **cfg, **VARIANTS[v])
                    m.fit(city, seed=s + SEED_OFFSET.get(v, 0))
                    res, val, w = m.evaluate(city), m.val_f1_, m.w_
                row = {"kind": kind, "seed": s, "v": v, "w": w, "val": val,
                       "test": res["weighted_f1"], "t": round(time.time() - t, 1)}  # fmt: skip
                print(json.dumps(row), flush=True)


def _se(x: list[float]) -> str:
    a = np.asarray(x, dtype=float)
    se = a.std(ddof=1) / np.sqrt(a.size) if a.size > 1 else 0.0
    return f"{a.mean():.3f} ± {se:.3f}"


def summary(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    for kind in ("normal", "shuffled"):
        d: dict[int, dict[str, dict]] = {}
        for r in rows:
            if r["kind"] == kind:
                d.setdefault(r["seed"], {})[r["v"]] = r
        need = ("w01", "w05", "w09", "nocon")
        seeds = sorted(s for s in d if all(k in d[s] for k in need))
        if not seeds:
            continue
        pick = {s: max(("w01", "w05", "w09"), key=lambda k: d[s][k]["val"]) for s in seeds}
        full = np.array([d[s][pick[s]]["test"] for s in seeds])
        noc = np.array([d[s]["nocon"]["test"] for s in seeds])
        print(f"{kind}: seeds {seeds}, w chosen {[pick[s] for s in seeds]}")
        for k in (*need, "logreg"):
            if all(k in d[s] for s in seeds):
                print(f"  {k:8s} test wF1 {_se([d[s][k]['test'] for s in seeds])}")
        print(f"  full (val-selected w) test wF1 {_se(list(full))}")
        print(f"  gap full - no-contrast (points) {_se(list(100 * (full - noc)))}")
        for k in ("w01", "w05", "w09"):
            g = [100 * (d[s][k]["test"] - d[s]["nocon"]["test"]) for s in seeds]
            print(f"  gap {k} - no-contrast (points) {_se(g)}")
        ms = [s for s in seeds if all(k in d[s] for k in ("nocon_r1", "nocon_r2"))]
        if ms:
            three = ("nocon", "nocon_r1", "nocon_r2")
            m3 = np.array(
                [max((d[s][k] for k in three), key=lambda r: r["val"])["test"] for s in ms]
            )
            f = np.array([d[s][pick[s]]["test"] for s in ms])
            print(f"  matched: no-contrast best of 3 restarts {_se(list(m3))}; "
                  f"gap full - matched (points) {_se(list(100 * (f - m3)))} over seeds {ms}")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        summary(sys.argv[2])
    else:
        run(dict(a.split("=", 1) for a in sys.argv[1:]))
