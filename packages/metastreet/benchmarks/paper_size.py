"""Bars a and b alone at paper size: the rows they read, without the rest of the full table.

Run (with nothing else on the cores, as its timings are reported):
``.venv/bin/python packages/metastreet/benchmarks/paper_size.py [--rows geography,rates]
[--rates 0.01,0.02,0.05,0.1] [--quick] [--seeds 0-9] [--out reports/bench/metastreet_ab.jsonl]``

The full ``reproduce`` fits 15 rows per seed (about 6 h on 2 cores). This runs only the rows of
bar a (``geography``: the full model and the same model with ``contrast_positive="random"``,
default split) and of bar b (``rates``: full and no-contrast at each label rate), with the
reproduce's own settings, jobs and seeds. ``w`` is chosen as there: on seed 0's validation split
from {0.1, 0.5, 0.9} by the full model. On 2 cores a paper-size fit takes about 200 s (two at
once), so ``geography`` over 10 seeds is about 35 min and each label rate another 35 min.

Each fit appends one JSON line to ``--out`` as it finishes and a rerun skips the fits already
there, so a run resumes, and rows added later reuse the chosen ``w``. Prints the paired gaps
(weighted-F1 points x100, mean ± s.e.) with the intervals the reproduce table uses: one-sided
95 % for a, two-sided 95 % for b.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26_shared.experiment import parallel_map
from metastreet import HashingEncoder, MetaStreet, MiniLMEncoder, make_city, with_label_rate

Item = tuple[int, str, float | None, float]

# the reproduce's settings and row names (a test checks they match ``_reproduce``)
W_GRID = (0.1, 0.5, 0.9)
RATES = (0.01, 0.02, 0.05, 0.10)
FULL, NO_CONTRAST, RANDOM = "full", "− contrast (w=1)", "random positives (degree-matched)"
VARIANTS: dict[str, dict[str, Any]] = {
    FULL: {},
    NO_CONTRAST: {"w": 1.0},
    RANDOM: {"contrast_positive": "random"},
}
SETTINGS = {
    True: {
        "city": {"n_side": 20, "images_per_street": (2, 5)},
        "model": {"hidden": 32, "d": 32, "heads": 4, "head_dim": 16, "epochs": 60,
                  "n_categories": 12},
    },
    False: {
        "city": {"n_side": 32},
        "model": {"n_categories": 12, "device": "cuda" if torch.cuda.is_available() else "cpu"},
    },
}  # fmt: skip


def _rate_row(variant: str, rate: float) -> str:
    return f"{variant} @ {100 * rate:g}% labels"


@functools.lru_cache(maxsize=2)
def _encoder(quick: bool) -> Any:
    if quick:
        return HashingEncoder(64)
    try:
        return MiniLMEncoder()
    except ImportError:  # without the text extra
        return HashingEncoder(64)


def _job(quick: bool, item: Item) -> dict[str, Any]:
    """One fit, as the reproduce's: ``(seed, row, rate, w)`` → test and validation wF1."""
    seed, row, rate, w = item
    cfg = SETTINGS[quick]
    city = make_city(**cfg["city"], signal="both", seed=seed)
    if rate is not None:
        city = with_label_rate(city, rate, seed)
    extra = VARIANTS[row.split(" @ ")[0]]
    model = MetaStreet(4, text_encoder=_encoder(quick), **{**cfg["model"], "w": w, **extra})
    model.fit(city, seed=seed)
    return {"metrics": model.evaluate(city), "val_f1": model.val_f1_}


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi) + 1)) if hi else [int(v) for v in text.split(",")]


def _fit(quick: bool, out: str, item: Item) -> dict[str, Any]:
    t0 = time.perf_counter()
    rec = _job(quick, item)
    row = {
        "seed": item[0], "row": item[1], "rate": item[2], "w": item[3],
        "seconds": time.perf_counter() - t0, "weighted_f1": rec["metrics"]["weighted_f1"],
        "val_f1": rec["val_f1"],
    }  # fmt: skip
    with open(out, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    return row


def _run(quick: bool, out: Path, items: list[Item], done: list[dict]) -> list[dict]:
    """Fit the ``items`` not in ``done`` (one worker process per core, one thread each; each
    fit appends its line to ``out`` as it ends); every row of ``items``."""
    wanted = {(s, r, w) for s, r, _, w in items}
    rows = [r for r in done if (r["seed"], r["row"], r["w"]) in wanted]
    have = {(r["seed"], r["row"], r["w"]) for r in rows}
    todo = [it for it in items if (it[0], it[1], it[3]) not in have]
    fn = functools.partial(_fit, quick, str(out))
    return rows + parallel_map(fn, todo, progress_bar=True, desc="fits") if todo else rows


def _gap(f1: dict, seeds: list[int], a: str, b: str) -> tuple[np.ndarray, float]:
    d = np.array([100 * (f1[s, a] - f1[s, b]) for s in seeds])
    return d, float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("inf")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="geography", help="geography, rates or both (comma)")
    ap.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES))
    ap.add_argument("--quick", action="store_true", help="the quick reproduce's city and network")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--out", default="reports/bench/metastreet_ab.jsonl")
    args = ap.parse_args()
    seeds, kinds = _seeds(args.seeds), set(args.rows.split(","))
    if not kinds <= {"geography", "rates"}:
        raise SystemExit(f"--rows takes geography and/or rates, got {args.rows!r}")
    rates = sorted(float(v) for v in args.rates.split(","))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    t0 = time.perf_counter()
    cands = _run(args.quick, out, [(seeds[0], FULL, None, float(w)) for w in W_GRID], done)
    best = max(sorted(cands, key=lambda r: r["w"]), key=lambda r: r["val_f1"])  # first of ties
    w = best["w"]
    print(f"w = {w:g} (seed {seeds[0]} validation wF1 "
          + ", ".join(f"{r['w']:g}: {r['val_f1']:.3f}" for r in sorted(cands, key=lambda r: r["w"]))
          + ")", flush=True)  # fmt: skip
    items: list[Item] = []
    if "geography" in kinds:
        items += [
            (s, r, None, w) for s in seeds for r in (FULL, RANDOM) if (s, r) != (seeds[0], FULL)
        ]
    if "rates" in kinds:
        items += [
            (s, _rate_row(v, r), r, w) for r in rates for s in seeds for v in (FULL, NO_CONTRAST)
        ]
    rows = [*_run(args.quick, out, items, done), best]
    f1 = {(r["seed"], r["row"]): r["weighted_f1"] for r in rows}
    size = "quick" if args.quick else "paper"
    if "geography" in kinds:
        d, se = _gap(f1, seeds, FULL, RANDOM)
        print(f"{size} size, {len(seeds)} seeds, w = {w:g}: full wF1 "
              f"{np.mean([f1[s, FULL] for s in seeds]):.4f}, random positives "
              f"{np.mean([f1[s, RANDOM] for s in seeds]):.4f}")  # fmt: skip
        print(f"a: geography (full − random positives) {d.mean():+.2f} ± {se:.2f} points, "
              f"one-sided 95% lower bound {d.mean() - 1.645 * se:+.2f} (bar: > 0); per seed "
              + " ".join(f"{v:+.2f}" for v in d))  # fmt: skip
    if "rates" in kinds:
        means = {}
        for r in rates:
            d, se = _gap(f1, seeds, _rate_row(FULL, r), _rate_row(NO_CONTRAST, r))
            means[r] = d.mean()
            print(f"b: {100 * r:g}% labels, full − no-contrast {d.mean():+.2f} ± {se:.2f} points, "
                  f"95% [{d.mean() - 1.96 * se:+.2f}, {d.mean() + 1.96 * se:+.2f}]; full wF1 "
                  f"{np.mean([f1[s, _rate_row(FULL, r)] for s in seeds]):.4f}")  # fmt: skip
        low = [m for r, m in means.items() if r <= 0.02]
        if low and 0.1 in means:
            print(f"b: mean gap at 1-2% labels {np.mean(low):+.2f} against {means[0.1]:+.2f} at "
                  f"10% (bar: larger)")  # fmt: skip
    print(f"wall {time.perf_counter() - t0:.0f} s in this call ({len(rows)} fits read)")


if __name__ == "__main__":
    main()
