"""Acceptance item 4 on its own: GPT (mixed) and frozen-embedding GPT, path-star d=50, l=5.

Run: ``.venv/bin/python packages/geomem/benchmarks/gpt_budget.py [--steps 4000] [--out FILE]``

The same settings as ``reproduce`` (full): width 128, 2 layers, 4 heads, AdamW lr 3e-3, weight
decay 0.1, batch 64 with 20% path queries, one torch thread, one process; both runs in sequence.
Prints the final probes, wall and CPU seconds and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from threadpoolctl import threadpool_limits

from geomem import train
from geomem.graphs import path_star
from geomem.models import GPT
from icml26_shared.bench import load_average


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--out", default="reports/bench/geomem_gpt_budget.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = path_star(50, 5, seed=0)
    out: dict = {"steps": args.steps, "load_start": load_average()}
    t0, c0 = time.time(), time.process_time()
    with threadpool_limits(limits=1):
        for name, frozen in (("gpt", False), ("gpt_frozen_embeddings", True)):
            m = GPT(g.n_nodes, dim=128, max_len=14, freeze_embeddings=frozen, seed=0)
            r = train(
                m, g, "mixed", args.steps, lr=3e-3, weight_decay=0.1, path_fraction=0.2,
                batch_size=64, seed=0, log_every=max(1, args.steps // 5), progress=True,
            )  # fmt: skip
            out[name] = r.history
            print(name, {k: round(v, 3) for k, v in r.final.items()}, flush=True)
    out.update(wall_s=time.time() - t0, cpu_s=time.process_time() - c0, load_end=load_average())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, allow_nan=False))
    print(
        f"wall {out['wall_s']:.0f} s, cpu {out['cpu_s']:.0f} s, load {out['load_start']} -> {out['load_end']}"
    )


if __name__ == "__main__":
    main()
