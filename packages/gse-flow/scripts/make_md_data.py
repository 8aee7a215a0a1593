"""Regenerate gse-flow's shipped MD trajectories (needs ``pip install gse-flow[md]``).

    OMP_NUM_THREADS=1 python packages/gse-flow/scripts/make_md_data.py [--seed 0]
        [--molecules ethanol,toluene,naphthalene,alanine_dipeptide] [--out DIR]

Each molecule runs its :data:`gse_flow._simulate.SPECS` recipe from the seed, writes
``DIR/<name>.npz`` (float32 positions, atomic numbers, topology bonds, JSON metadata) and
updates ``DIR/manifest.json`` (sha256 and shapes, which :func:`gse_flow.md_windows` verifies).
DIR defaults to the package's data directory, so the files ship in the wheel.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gse_flow._simulate import SPECS, simulate, write_trajectory
from gse_flow.md import DATA_DIR, MANIFEST


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--molecules", default=",".join(SPECS))
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    args = ap.parse_args(argv)
    names = [m for m in args.molecules.split(",") if m]
    unknown = [m for m in names if m not in SPECS]
    if unknown:
        ap.error(f"--molecules must name entries of {sorted(SPECS)}, got {unknown}")
    manifest_path = args.out / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    for name in names:
        entry = write_trajectory(simulate(SPECS[name], seed=args.seed), args.out)
        manifest[name] = entry
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        meta = entry["metadata"]
        print(
            f"{name}: {entry['positions_shape']} frames x atoms x 3, {meta['ms_per_step']} ms/step, "
            f"{(args.out / entry['file']).stat().st_size / 1e6:.2f} MB",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
