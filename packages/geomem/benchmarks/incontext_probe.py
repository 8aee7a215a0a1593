"""Acceptance item 7 on its own: the in-context GPT (fresh path-star per example, d = 5, l = 5).

Run: ``.venv/bin/python packages/geomem/benchmarks/incontext_probe.py [--steps N] [--dim D] ...``

Prints :func:`geomem.incontext.evaluate_incontext` (first step, exact path, teacher-forced first
and later path nodes on 100 unseen graphs) every ``--log-every`` steps, then wall / CPU seconds
and the load average. One torch thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from geomem import train
from geomem.graphs import path_star
from geomem.incontext import sequence_length, train_incontext
from geomem.models import GPT
from geomem.probes import teacher_forced
from icml26_shared.bench import load_average


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--l", type=int, default=5)
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--positions", default="learned", choices=["learned", "rotary"])
    ap.add_argument("--labels", type=int, default=50)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--wd", type=float, default=0.1)
    ap.add_argument("--schedule", default="constant")
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--log-every", type=int, default=0)
    ap.add_argument("--in-weights", action="store_true", help="also the same GPT in-weights")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(vars(args), flush=True)
    load0, t0, c0 = load_average(), time.time(), time.process_time()
    arch = dict(dim=args.dim, n_layers=args.layers, n_heads=args.heads, positions=args.positions)
    m = GPT(args.labels, **arch, max_len=sequence_length(args.d, args.l), seed=0)
    with threadpool_limits(limits=1):
        r = train_incontext(
            m, args.steps, d=args.d, l=args.l, batch_size=args.batch, lr=args.lr,
            weight_decay=args.wd, schedule=args.schedule, warmup=args.warmup,
            log_every=args.log_every or max(1, args.steps // 5),
        )  # fmt: skip
    for h in r.history:
        print("incontext", {k: round(v, 3) for k, v in h.items()}, flush=True)
    if args.in_weights:  # the same model and steps on one path-star (seed 0), mixed recipe
        g = path_star(args.d, args.l, seed=0)
        w = GPT(g.n_nodes, **arch, max_len=4 + 2 * args.l, seed=0)
        with threadpool_limits(limits=1):
            rw = train(
                w, g, "mixed", args.steps, lr=args.lr, weight_decay=args.wd,
                schedule=args.schedule, warmup=args.warmup, batch_size=args.batch,
                path_fraction=0.2, log_every=args.log_every or max(1, args.steps // 5),
            )  # fmt: skip
        for h in rw.history:
            print("in-weights", {k: round(v, 3) for k, v in h.items()}, flush=True)
        tf = teacher_forced(w, g)
        print(f"in-weights teacher-forced per node {np.round(tf, 3).tolist()}", flush=True)
    print(
        f"wall {time.time() - t0:.0f} s, cpu {time.process_time() - c0:.0f} s, "
        f"load {load0} -> {load_average()}"
    )


if __name__ == "__main__":
    main()
