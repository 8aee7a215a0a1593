"""The reproduce run in parts: one seed of one benchmark per command, then a summary.

``python -m perturbedvae reproduce`` runs everything in one process; on a shared machine where
each job must stay short, the same run can be made of parts that each write a JSON record, and
``summary`` assembles exactly the tables, checks and figures of the one-process run::

    python -m perturbedvae.staged part --part syn --seed 0 [--quick] [--out reports/perturbedvae]
    python -m perturbedvae.staged part --part semi --seed 0 ...      # and shift; seeds 1, 2
    python -m perturbedvae.staged summary [--quick] [--out reports/perturbedvae]
    python -m perturbedvae.staged validate --part syn --seed 0 [--quick]   # training settings

``validate`` scores training settings on validation cells of the singles (never the doubles)
and writes one JSON record per setting and checkpoint.

The run's sizes (:data:`QUICK`, :data:`FULL`, :class:`Config`) and its scoring of held-out
doubles (:func:`score_doubles`) and single perturbations (:func:`held_out_singles`) are public
here for diagnostics that reuse them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import torch

from ._reproduce import FULL, PARTS, QUICK, Config, assemble, run_part, validate
from ._reproduce import _score_doubles as score_doubles
from ._reproduce import _singles as held_out_singles

__all__ = ["FULL", "QUICK", "Config", "held_out_singles", "main", "score_doubles", "validate"]


def _record_path(out: Path, part: str, seed: int, quick: bool) -> Path:
    return out / f"part_{'quick' if quick else 'full'}_{part}_seed{seed}.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m perturbedvae.staged")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("part", help="one seed of one benchmark")
    p.add_argument("--part", choices=PARTS, required=True)
    p.add_argument("--seed", type=int, required=True)
    s = sub.add_parser("summary", help="assemble the parts into result.json / result.md")
    v = sub.add_parser("validate", help="training settings on validation cells of the singles")
    v.add_argument("--part", choices=PARTS, required=True)
    v.add_argument("--seed", type=int, required=True)
    v.add_argument("--alpha", type=float, nargs="+")
    v.add_argument("--delta-init", type=float, nargs="+")
    v.add_argument("--omega-init", type=float, nargs="+")
    v.add_argument("--every", type=int, default=20, help="score every this many epochs")
    v.add_argument("--epochs", type=int, help="train this long (default: the run's epochs)")
    for q in (p, s, v):
        q.add_argument("--quick", action="store_true")
        q.add_argument("--out", default="reports/perturbedvae")
        q.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.cmd == "validate":
        torch.set_num_threads(1)
        grid = {k: getattr(args, k) for k in ("alpha", "delta_init", "omega_init")}
        grid = {k: g for k, g in grid.items() if g}
        if args.epochs:
            cfg = dataclasses.replace(cfg, epochs=args.epochs, semi_epochs=args.epochs)
        rows = validate(cfg, args.part, args.seed, grid, every=args.every)
        tag = "quick" if args.quick else "full"
        path = out / f"validate_{tag}_{args.part}_seed{args.seed}_{'_'.join(sorted(grid))}.json"
        path.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
        for row in rows:
            print(json.dumps({k: round(x, 4) if isinstance(x, float) else x
                              for k, x in row.items()}, ensure_ascii=False))  # fmt: skip
        return 0
    if args.cmd == "part":
        if args.seed not in cfg.seeds:
            ap.error(f"--seed must be one of {cfg.seeds}")
        torch.set_num_threads(1)
        rec = run_part(cfg, args.part, args.seed, out, not args.no_progress)
        path = _record_path(out, args.part, args.seed, args.quick)
        path.write_text(json.dumps(rec, indent=1, ensure_ascii=False, default=float))
        print(f"{path}: {rec['wall_s']} s wall, {rec['cpu_s']} s CPU")
        return 0
    recs = {}
    for part in PARTS:
        for seed in cfg.seeds:
            path = _record_path(out, part, seed, args.quick)
            if not path.exists():
                ap.error(f"missing {path}: run `part --part {part} --seed {seed}` first")
            recs[part, seed] = json.loads(path.read_text())
    by = {part: [recs[part, k] for k in cfg.seeds] for part in PARTS}
    result = assemble(cfg, by["syn"], by["semi"], by["shift"], out)
    result.stamp(sum(r["wall_s"] for r in recs.values()), args.quick)  # the parts' wall times
    result.notes.append(f"run as {len(recs)} parts; seconds = the sum of their wall times")
    (out / "result.json").write_text(result.to_json())
    (out / "result.md").write_text(result.to_markdown())
    print(result.to_markdown())
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
