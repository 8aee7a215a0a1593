"""Bar a alone at paper size: geographic against random (degree-matched) contrast positives.

Run (under the CPU lock; about an hour on 2 cores):
``.venv/bin/python packages/metastreet/benchmarks/geography.py [--quick] [--seeds 0-9]
[--out reports/bench/metastreet_geography.jsonl]``

The full ``reproduce`` fits 15 rows per seed (about 6 h on 2 cores); this runs only the two rows
bar a reads, with the reproduce's own settings, jobs and seeds: ``w`` is chosen on seed 0's
validation split from {0.1, 0.5, 0.9} by the full model, then every seed fits the full model and
the same model with ``contrast_positive="random"`` on its own city (default split). Each fit
appends one JSON line to ``--out`` as it finishes, and a rerun skips the fits already there, so
an interrupted run resumes. Prints the paired gap (weighted-F1 points x100, mean ± s.e.) and
its one-sided 95 % lower bound, as the reproduce table does.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from icml26_shared.experiment import cpu_share, thread_env
from metastreet._model import W_GRID
from metastreet._reproduce import FULL, RANDOM, _job


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi) + 1)) if hi else [int(v) for v in text.split(",")]


def _fit(quick: bool, out: str, item: tuple[int, str, None, float]) -> dict[str, Any]:
    t0 = time.perf_counter()
    rec = _job(quick, item)
    row = {
        "seed": item[0], "row": item[1], "w": item[3], "seconds": time.perf_counter() - t0,
        "weighted_f1": rec["metrics"]["weighted_f1"], "val_f1": rec["val_f1"],
    }  # fmt: skip
    with open(out, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    return row


def _run(quick: bool, out: Path, items: list, done: list[dict]) -> list[dict]:
    key = {(r["seed"], r["row"], r["w"]) for r in done}
    todo = [it for it in items if (it[0], it[1], it[3]) not in key]
    fn = functools.partial(_fit, quick, str(out))
    rows = [r for r in done if (r["seed"], r["row"], r["w"]) in {(i[0], i[1], i[3]) for i in items}]
    if not todo:
        return rows
    workers = min(cpu_share(), len(todo))  # before the one-thread environment below
    saved = dict(os.environ)
    os.environ.update(thread_env(1))  # inherited by the spawned workers, then restored
    try:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as ex:
            for fut in as_completed([ex.submit(fn, it) for it in todo]):
                r = fut.result()
                print(f"seed {r['seed']} {r['row']} w={r['w']:g}: test wF1 "
                      f"{r['weighted_f1']:.4f} ({r['seconds']:.0f} s)", flush=True)  # fmt: skip
                rows.append(r)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the quick reproduce's city and network")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--out", default="reports/bench/metastreet_geography.jsonl")
    args = ap.parse_args()
    seeds = _seeds(args.seeds)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    t0 = time.perf_counter()
    cands = _run(args.quick, out, [(seeds[0], FULL, None, float(w)) for w in W_GRID], done)
    best = max(sorted(cands, key=lambda r: r["w"]), key=lambda r: r["val_f1"])
    w = best["w"]
    print(f"w = {w:g} (seed {seeds[0]} validation wF1 "
          + ", ".join(f"{r['w']:g}: {r['val_f1']:.3f}" for r in sorted(cands, key=lambda r: r["w"]))
          + ")", flush=True)  # fmt: skip
    items = [(s, r, None, w) for s in seeds for r in (FULL, RANDOM) if (s, r) != (seeds[0], FULL)]
    rows = [*_run(args.quick, out, items, done), best]
    f1 = {(r["seed"], r["row"]): r["weighted_f1"] for r in rows}
    d = np.array([100 * (f1[s, FULL] - f1[s, RANDOM]) for s in seeds])
    se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else float("inf")
    print(f"{'quick' if args.quick else 'paper'} size, {len(seeds)} seeds, w = {w:g}: full wF1 "
          f"{np.mean([f1[s, FULL] for s in seeds]):.4f}, random positives "
          f"{np.mean([f1[s, RANDOM] for s in seeds]):.4f}")  # fmt: skip
    print(f"geography (full − random positives): {d.mean():+.2f} ± {se:.2f} points, one-sided "
          f"95% lower bound {d.mean() - 1.645 * se:+.2f} (bar a: > 0); per seed "
          + " ".join(f"{v:+.2f}" for v in d))  # fmt: skip
    print(f"wall {time.perf_counter() - t0:.0f} s in this call ({len(rows)} fits in the file)")


if __name__ == "__main__":
    main()
