"""The reproduce run in parts: one seed of one benchmark per command, then a summary.

``python -m perturbedvae reproduce`` runs everything in one process; on a shared machine where
each job must stay short, the same run can be made of parts that each write a JSON record, and
``summary`` assembles exactly the tables, checks and figures of the one-process run::

    python -m perturbedvae.staged part --part syn --seed 0 [--quick] [--out reports/perturbedvae]
    python -m perturbedvae.staged part --part semi --seed 0 ...      # and seeds 1, 2
    python -m perturbedvae.staged summary [--quick] [--out reports/perturbedvae]

The run's sizes (:data:`QUICK`, :data:`FULL`, :class:`Config`) and its scoring of held-out
doubles (:func:`score_doubles`) and single perturbations (:func:`held_out_singles`) are public
here for diagnostics that reuse them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from ._reproduce import FULL, PARTS, QUICK, Config, assemble, run_part
from ._reproduce import _score_doubles as score_doubles
from ._reproduce import _singles as held_out_singles

__all__ = ["FULL", "QUICK", "Config", "held_out_singles", "main", "score_doubles"]


def _record_path(out: Path, part: str, seed: int, quick: bool) -> Path:
    return out / f"part_{'quick' if quick else 'full'}_{part}_seed{seed}.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m perturbedvae.staged")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("part", help="one seed of one benchmark")
    p.add_argument("--part", choices=PARTS, required=True)
    p.add_argument("--seed", type=int, required=True)
    s = sub.add_parser("summary", help="assemble the parts into result.json / result.md")
    for q in (p, s):
        q.add_argument("--quick", action="store_true")
        q.add_argument("--out", default="reports/perturbedvae")
        q.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
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
    syn = [recs["syn", k] for k in cfg.seeds]
    semi = [recs["semi", k] for k in cfg.seeds]
    result = assemble(cfg, syn, semi, out)
    (out / "result.json").write_text(result.to_json())
    (out / "result.md").write_text(result.to_markdown())
    print(result.to_markdown())
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
