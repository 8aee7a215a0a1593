"""The reproduce comparison in parts: ``python -m bittokens.comparison STAGE [--half H]``.

``python -m bittokens reproduce`` runs the whole comparison in one go. On a shared machine it
can be run in slots instead, with the very same cells and result::

    python -m bittokens.comparison grid --half 0 --out DIR   # seed 0 at every rate, half 0
    python -m bittokens.comparison grid --half 1 --out DIR
    python -m bittokens.comparison seeds --half 0 --out DIR  # seeds 1, 2 at the chosen rates
    python -m bittokens.comparison seeds --half 1 --out DIR
    python -m bittokens.comparison summary --out DIR         # tables, checks, DIR/result.json

Each call runs only the cells ``DIR/cells.jsonl`` does not hold yet (halves are balanced by
estimated cost), so a stopped slot is resumed by repeating it. ``--quick`` selects the quick
configuration. The comparison's wall time is the sum of the slots' wall times
(``DIR/stages.jsonl``, with the load average before and after each slot).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from . import _reproduce
from ._reproduce import STAGES, run_stage, split_half, summarise

__all__ = ["STAGES", "main", "run_stage", "split_half", "summarise"]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point (see the module docstring); 0 when every check passed."""
    parser = argparse.ArgumentParser(prog="python -m bittokens.comparison")
    parser.add_argument("stage", choices=[*STAGES, "summary"])
    parser.add_argument("--half", type=int, choices=(0, 1), default=None)
    parser.add_argument("--out", default="reports/bittokens")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.stage == "summary":
        result = summarise(args.quick, out)
        # the run's seconds are its cells' (trained in separate slots), stamped like a run
        cells = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
        result.stamp(sum(float(c.get("wall_seconds", 0.0)) for c in cells if c), args.quick)
        result.notes.append(f"seconds: the sum over the {len(cells)} cells' wall time")
        (out / "result.json").write_text(result.to_json())
        print(result.to_text())
        print(f"\nresults written to {out}/result.json")
        return 0 if result.passed else 1
    cfg = _reproduce.QUICK if args.quick else _reproduce.FULL
    new = run_stage(cfg, out, args.stage, args.half, show=not args.no_progress)
    for r in new:
        print(
            r["scheme"],
            "+".join(r["test"]),
            f"lr={r['lr']:g}",
            f"seed={r['seed']}",
            f"val={r['val']:.4f}",
            "test=" + ",".join(f"{v:.4f}" for v in r["test"].values()),
            f"wall={r['wall_seconds']:.0f}s",
            f"cpu={r['cpu_seconds']:.0f}s",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
