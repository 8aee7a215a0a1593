"""Shipped molecular-dynamics trajectories: MD17's molecules under GFN2-xTB, alanine dipeptide
under amber14 + GBn2.

The arrays ship in the wheel (``gse_flow/data/md/<name>.npz``, float32) with a manifest of
sha256 checksums and shapes; the loader verifies both before use, so ``reproduce`` needs no
simulation engine. They are *not* MD17's DFT trajectories: the molecules are MD17's (ethanol,
toluene, naphthalene), the potential is GFN2-xTB (``tblite``) at MD17's temperature and step
(500 K, 0.5 fs). ``packages/gse-flow/scripts/make_md_data.py`` (extra ``gse-flow[md]``)
regenerates them from a seed (:mod:`gse_flow._simulate` holds the recipes).

Frames are stored every 10 steps (5 fs), the spacing of GeoTDM's MD17 protocol (every 10th
frame of MD17's 0.5 fs trajectories), so :func:`md_windows` keeps every stored frame by
default: windows of 10 past + 20 future frames (50 fs + 100 fs), split train/validation/test
60/20/20 by contiguous blocks of time; no window crosses a block boundary.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_choice, check_positive_int

from ._data import Protocol, Windows, trajectory_windows

__all__ = ["DATA_DIR", "MANIFEST", "MOLECULES", "bond_lengths", "md_trajectory", "md_windows"]

#: the package's data directory (``manifest.json`` and one ``.npz`` per molecule)
DATA_DIR = Path(__file__).parent / "data" / "md"
MANIFEST = "manifest.json"
#: the shipped molecules: three of MD17's under GFN2-xTB, then alanine dipeptide (amber14)
MOLECULES = ("ethanol", "toluene", "naphthalene", "alanine_dipeptide")


def _manifest(data_dir: Path) -> dict[str, Any]:
    path = data_dir / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"data_dir must hold {MANIFEST}, got {str(data_dir)!r} without it")
    return json.loads(path.read_text())


def md_trajectory(molecule: str, *, data_dir: str | Path | None = None) -> dict[str, Any]:
    """The verified arrays of one shipped trajectory.

    Args:
        molecule: one of :data:`MOLECULES` (or another entry of ``data_dir``'s manifest).
        data_dir: a directory with ``manifest.json`` and the ``.npz`` files (default: the
            package's own, :data:`DATA_DIR`).

    Returns:
        ``{"positions": (T, N, 3) float32 Å, "atomic_numbers": (N,), "bonds": (E, 2),
        "metadata": dict}`` (engine, level of theory, temperature, step, frame spacing, seed).

    Raises:
        ValueError: an unknown molecule, or a file whose sha256 or array shapes differ from the
            manifest's (the message names the file).
    """
    root = DATA_DIR if data_dir is None else Path(data_dir)
    manifest = _manifest(root)
    name = check_choice(molecule, "molecule", sorted(manifest))
    entry = manifest[name]
    path = root / entry["file"]
    if not path.is_file():
        raise FileNotFoundError(f"{path.name} is listed in {MANIFEST} but missing from {root}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != entry["sha256"]:
        raise ValueError(
            f"{path.name} has sha256 {digest[:16]}…, the manifest expects {entry['sha256'][:16]}…: "
            "the file is corrupt or was modified; regenerate it with scripts/make_md_data.py"
        )
    with np.load(path) as data:
        out = {k: data[k] for k in ("positions", "atomic_numbers", "bonds")}
        out["metadata"] = json.loads(str(data["metadata"]))
    shape = tuple(entry["positions_shape"])
    x, z, b = out["positions"], out["atomic_numbers"], out["bonds"]
    if x.shape != shape or x.dtype != np.float32:
        raise ValueError(
            f"{path.name}: positions must be float32 of shape {shape}, got {x.dtype} {x.shape}"
        )
    if z.shape != (shape[1],):
        raise ValueError(
            f"{path.name}: atomic_numbers must have shape ({shape[1]},), got {z.shape}"
        )
    if b.ndim != 2 or b.shape[1] != 2 or b.min() < 0 or b.max() >= shape[1]:
        raise ValueError(
            f"{path.name}: bonds must be (E, 2) atom indices in [0, {shape[1]}), got shape {b.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{path.name}: positions must be finite")
    return out


def bond_lengths(positions: Any, bonds: Any) -> NDArray:
    """Lengths ``(..., E)`` of the ``bonds`` ``(E, 2)`` in ``positions`` ``(..., N, 3)``."""
    x = np.asarray(positions)
    b = np.asarray(bonds)
    return np.linalg.norm(x[..., b[:, 0], :] - x[..., b[:, 1], :], axis=-1)


def md_windows(
    molecule: str,
    *,
    n_history: int = 10,
    n_future: int = 20,
    step: int = 1,
    caps: tuple[int, int, int] = (5000, 1000, 1000),
    data_dir: str | Path | None = None,
) -> tuple[dict[str, Windows], dict[str, NDArray[np.int64]]]:
    """Train/validation/test windows of a shipped trajectory.

    The trajectory is split 60/20/20 into contiguous blocks of time; each block gives windows of
    ``n_history + n_future`` frames (every ``step``-th stored frame, stored frames 5 fs apart)
    sliding by one kept frame, at most ``caps`` per block (evenly spaced when capped). The graph
    is the topology's bonds (both directions); node scalars are ``z / 10``.

    Args:
        molecule: one of :data:`MOLECULES`.
        n_history, n_future: frames per window (GeoTDM's MD17 protocol: 10 and 20).
        step: keep every ``step``-th stored frame.
        caps: the most train/validation/test windows.
        data_dir: see :func:`md_trajectory`.

    Returns:
        ``(windows, frames)`` as :func:`gse_flow.trajectory_windows`: dicts keyed ``"train"``,
        ``"val"``, ``"test"``; ``frames[s]`` the stored-frame indices of every window.

    Raises:
        ValueError: an unknown molecule, a corrupt file (named), bad lengths or caps.
    """
    for name, v in (("n_history", n_history), ("n_future", n_future), ("step", step)):
        check_positive_int(v, name)
    if n_history < 2:
        raise ValueError(f"n_history must be >= 2, got {n_history}")
    if len(caps) != 3 or any(int(c) < 1 for c in caps):
        raise ValueError(f"caps must be three positive window counts, got {caps}")
    traj = md_trajectory(molecule, data_dir=data_dir)
    b = traj["bonds"].astype(np.int32)
    edges = np.concatenate([b.T, b.T[::-1]], axis=1)
    protocol = Protocol(n_history, n_future, step, caps=(int(caps[0]), int(caps[1]), int(caps[2])))
    attr = traj["atomic_numbers"][:, None] / 10.0
    return trajectory_windows(traj["positions"], attr, edges, protocol=protocol)
