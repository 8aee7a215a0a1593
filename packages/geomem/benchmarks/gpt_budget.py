"""Acceptance item 4 on its own: GPT (mixed) and frozen-embedding GPT on a path-star.

Run: ``.venv/bin/python packages/geomem/benchmarks/gpt_budget.py [--steps N] [--only gpt] ...``

Defaults are the settings of ``reproduce`` (full): d = 50, l = 5, width 128, 2 layers, 4 heads,
AdamW; the flags override them to probe training efficiency. One torch thread per process; with
``--only`` two processes (GPT, frozen GPT) can run side by side on the two cores. Prints the
probes every ``--log-every`` steps, wall and CPU seconds and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from threadpoolctl import threadpool_limits

from geomem import REPRODUCE_CONFIGS, train
from geomem.graphs import path_star
from geomem.models import GPT
from icml26_shared.bench import load_average


def main() -> None:
    c = REPRODUCE_CONFIGS["full"]
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=c.d)
    ap.add_argument("--steps", type=int, default=c.gpt_steps)
    ap.add_argument("--dim", type=int, default=c.gpt_dim)
    ap.add_argument("--lr", type=float, default=c.gpt_lr)
    ap.add_argument("--wd", type=float, default=c.gpt_weight_decay)
    ap.add_argument("--schedule", default=c.gpt_schedule)
    ap.add_argument("--warmup", type=int, default=c.gpt_warmup)
    ap.add_argument("--batch", type=int, default=c.batch_size)
    ap.add_argument("--path-fraction", type=float, default=c.path_fraction)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("gpt", "frozen", "both"), default="both")
    ap.add_argument("--log-every", type=int, default=0)
    ap.add_argument("--out", default="reports/bench/geomem_gpt_budget.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = path_star(args.d, c.l, seed=args.seed)
    out: dict = {"args": vars(args), "load_start": load_average()}
    t0, c0 = time.time(), time.process_time()
    runs = {"gpt": False, "frozen": True}
    if args.only != "both":
        runs = {args.only: runs[args.only]}
    with threadpool_limits(limits=1):
        for name, frozen in runs.items():
            m = GPT(g.n_nodes, dim=args.dim, max_len=4 + 2 * c.l, freeze_embeddings=frozen,
                    seed=args.seed)  # fmt: skip
            r = train(
                m, g, "mixed", args.steps, lr=args.lr, weight_decay=args.wd,
                schedule=args.schedule, warmup=args.warmup, path_fraction=args.path_fraction,
                batch_size=args.batch, seed=args.seed,
                log_every=args.log_every or max(1, args.steps // 5),
            )  # fmt: skip
            out[name] = r.history
            for h in r.history:
                print(name, {k: round(v, 3) for k, v in h.items()}, flush=True)
    out.update(wall_s=time.time() - t0, cpu_s=time.process_time() - c0, load_end=load_average())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, allow_nan=False))
    print(
        f"wall {out['wall_s']:.0f} s, cpu {out['cpu_s']:.0f} s, "
        f"load {out['load_start']} -> {out['load_end']}"
    )


if __name__ == "__main__":
    main()
