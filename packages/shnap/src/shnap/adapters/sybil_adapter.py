"""Run Sybil behind ``shnap.SubprocessRiskModel``: ``.npy`` volumes in, year-t risk logits out.

Run this file with the Python of an environment where Sybil is installed (Sybil pins Python
< 3.11 and torch 1.13, so it cannot share shnap's environment)::

    model = SubprocessRiskModel(
        ["/path/to/sybil-env/bin/python", str(sybil_adapter_path()), "--year", "6"]
    )

Each call gets ``input.npy`` (float32 ``(B, 1, D, H, W)``, shnap's windowed intensities in
[-1, 1]) and ``output.npy`` paths as its last two arguments. For every volume it maps the
window back to HU (``hu = (x + 1) / 2 * 1400 - 1000``), resamples it linearly to Sybil's axial
``200 x 256 x 256`` grid (first slice = the abdominal end, as Sybil expects), writes the slices
as 16-bit PNGs of ``hu + 1024`` and scores them with ``Sybil(...).predict([Serie(paths,
file_type="png", voxel_spacing=...)])``; the output is ``log(p / (1 - p))`` of the chosen year's
cumulative risk ``p``. Needs only numpy, scipy and Pillow besides Sybil. This adapter has not
been run against a real Sybil install here (none can be installed in shnap's environment); its
I/O and resampling are tested with a stub ``sybil`` module.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

SYBIL_SHAPE = (200, 256, 256)


def to_hu(x: np.ndarray) -> np.ndarray:
    """Inverse of shnap's window: [-1, 1] -> [-1000, 400] HU."""
    return (np.asarray(x, np.float32) + 1.0) / 2.0 * 1400.0 - 1000.0


def resample(volume: np.ndarray, shape: tuple[int, int, int] = SYBIL_SHAPE) -> np.ndarray:
    """Linear resampling of a ``(D, H, W)`` volume to ``shape`` (scipy.ndimage.zoom, order 1)."""
    from scipy import ndimage

    factors = [t / s for t, s in zip(shape, volume.shape)]
    out = ndimage.zoom(np.asarray(volume, np.float32), factors, order=1, mode="nearest")
    return out[: shape[0], : shape[1], : shape[2]]


def risk_logit(p: float) -> float:
    """``log(p / (1 - p))`` with ``p`` clipped to [1e-6, 1 - 1e-6]."""
    p = float(np.clip(p, 1e-6, 1 - 1e-6))
    return float(np.log(p / (1 - p)))


def score(
    batch: np.ndarray, year: int, model_name: str, spacing: tuple[float, float, float]
) -> np.ndarray:
    """Year-``year`` Sybil logits of a ``(B, 1, D, H, W)`` batch of windowed volumes."""
    from PIL import Image
    from sybil import Serie, Sybil

    model = Sybil(model_name)
    out = []
    for vol in batch[:, 0]:
        hu = resample(to_hu(vol))
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, sl in enumerate(hu):
                path = Path(tmp) / f"slice_{i:03d}.png"
                Image.fromarray(np.clip(sl + 1024, 0, 65535).astype(np.uint16)).save(path)
                paths.append(str(path))
            serie = Serie(paths, file_type="png", voxel_spacing=list(spacing))
            pred = model.predict([serie])
            out.append(risk_logit(np.asarray(pred.scores)[0][year - 1]))
    return np.asarray(out, np.float64)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--year", type=int, default=6, help="risk year 1..6 (default 6)")
    parser.add_argument("--model", default="sybil_ensemble", help="Sybil model name")
    parser.add_argument(
        "--spacing",
        type=float,
        nargs=3,
        default=(0.703125, 0.703125, 2.5),
        help="voxel spacing (x, y, z) in mm passed to Serie",
    )
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args(argv)
    if not 1 <= args.year <= 6:
        print(f"--year must be in 1..6, got {args.year}", file=sys.stderr)
        return 2
    batch = np.load(args.input)
    if batch.ndim != 5 or batch.shape[1] != 1:
        print(f"input must have shape (B, 1, D, H, W), got {batch.shape}", file=sys.stderr)
        return 2
    np.save(args.output, score(batch, args.year, args.model, tuple(args.spacing)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
