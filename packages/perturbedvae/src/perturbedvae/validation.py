"""Training settings scored on validation cells of the singles, never on the held-out doubles::

    python -m perturbedvae.validation --part syn --seed 0 [--quick] [--alpha 0 1 3] \\
        [--delta-init 0.5 1] [--omega-init 0.1] [--every 20] [--epochs 120] [--out DIR]

writes one JSON record per setting and checkpoint (``DIR/validate_<mode>_<part>_seed<k>_<grid>.json``)
and prints them. The run's sizes (:data:`QUICK`, :data:`FULL`, :class:`Config`) and its scoring of
held-out doubles (:func:`score_doubles`) and single perturbations (:func:`held_out_singles`) are
public here for diagnostics that reuse them. (The reproduce run itself resumes from its job cache:
``python -m perturbedvae reproduce --set max_new_jobs=1`` runs it one part at a time.)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from icml26_shared.threads import single_thread

from ._reproduce import FULL, PARTS, QUICK, Config, validate
from ._reproduce import _score_doubles as score_doubles
from ._reproduce import _singles as held_out_singles

__all__ = ["FULL", "QUICK", "Config", "held_out_singles", "main", "score_doubles", "validate"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m perturbedvae.validation")
    ap.add_argument("--part", choices=PARTS, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--alpha", type=float, nargs="+")
    ap.add_argument("--delta-init", type=float, nargs="+")
    ap.add_argument("--omega-init", type=float, nargs="+")
    ap.add_argument("--every", type=int, default=20, help="score every this many epochs")
    ap.add_argument("--epochs", type=int, help="train this long (default: the run's epochs)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="reports/perturbedvae")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    grid = {k: getattr(args, k) for k in ("alpha", "delta_init", "omega_init")}
    grid = {k: g for k, g in grid.items() if g}
    if args.epochs:
        cfg = dataclasses.replace(cfg, epochs=args.epochs, semi_epochs=args.epochs)
    with single_thread():
        rows = validate(cfg, args.part, args.seed, grid, every=args.every)
    tag = "quick" if args.quick else "full"
    path = out / f"validate_{tag}_{args.part}_seed{args.seed}_{'_'.join(sorted(grid))}.json"
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    for row in rows:
        print(json.dumps({k: round(x, 4) if isinstance(x, float) else x
                          for k, x in row.items()}, ensure_ascii=False))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
