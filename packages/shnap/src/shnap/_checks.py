"""Argument checks at the public boundary: one message style (name, what was expected, what came).

Volumes are float32 ``(D, H, W)`` arrays of windowed intensities; masks are boolean arrays of the
same shape. Every check raises ``TypeError`` for a wrong kind of object and ``ValueError`` for a
wrong value, naming the argument.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["check_batch", "check_mask", "check_players", "check_steps", "check_tau", "check_volume"]

MAX_PLAYERS = 12


def check_volume(x: Any, name: str = "x") -> np.ndarray:
    """Return ``x`` as a finite float32 ``(D, H, W)`` array or raise naming ``name``.

    >>> check_volume(np.zeros((4, 4, 4))).dtype
    dtype('float32')
    """
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic objects
        raise TypeError(f"{name} must be an array, got {type(x).__name__}") from exc
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real-valued array, got dtype {arr.dtype}")
    if arr.ndim != 3:
        raise ValueError(f"{name} must be a 3D volume (D, H, W), got shape {arr.shape}")
    if min(arr.shape) < 1:
        raise ValueError(f"{name} must be a non-empty 3D volume, got shape {arr.shape}")
    arr = arr.astype(np.float32, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {int((~np.isfinite(arr)).sum())} NaN/inf")
    warn_outside_window(arr, name)
    return arr


def warn_outside_window(arr: np.ndarray, name: str = "x") -> None:
    """Warn when ``arr`` does not look like ``window(hu)``, the [-1, 1] images (air at -1) that
    every model of the package was trained on: raw HU (values beyond +-3, far outside [-1, 1]) or a volume
    rescaled to [0, 1] (no air: its minimum well above -1). The models still run, but their
    output on such input means nothing."""
    lo, hi = float(arr.min()), float(arr.max())
    # edited volumes (a sampler's output) may overshoot [-1, 1] a little; raw HU is in the 100s
    if lo < -3.0 or hi > 3.0:
        warnings.warn(
            f"{name} has values in [{lo:.4g}, {hi:.4g}], outside [-1, 1]: the models were trained "
            "on windowed images, window(hu) maps [-1000, 400] HU to [-1, 1]; pass window(hu), "
            "not raw HU",
            UserWarning,
            stacklevel=3,
        )
    elif lo > -0.5 and arr.size >= 512:
        warnings.warn(
            f"{name} has values in [{lo:.4g}, {hi:.4g}], no air at -1: the models were trained "
            "on window(hu) in [-1, 1] (air -1, lung about -0.8); a volume rescaled to [0, 1] is "
            "outside the trained range, pass window(hu)",
            UserWarning,
            stacklevel=3,
        )


def check_mask(m: Any, like: np.ndarray, name: str = "mask") -> np.ndarray:
    """Return ``m`` as a non-empty boolean array shaped like ``like`` or raise naming ``name``.

    >>> check_mask(np.ones((2, 2, 2), bool), np.zeros((2, 2, 2))).sum()
    np.int64(8)
    """
    arr = np.asarray(m)
    if arr.dtype != np.bool_:
        raise TypeError(f"{name} must be a boolean array, got dtype {arr.dtype}")
    if arr.shape != np.shape(like):
        raise ValueError(f"{name} must have shape {np.shape(like)}, got {arr.shape}")
    if not arr.any():
        raise ValueError(f"{name} must select at least one voxel, got an empty mask")
    return arr


def check_players(players: Any, like: np.ndarray, name: str = "players") -> list[np.ndarray]:
    """Validate a sequence of 1..12 non-overlapping player masks (dict values are taken in order).

    Overlapping players are refused with both names (index or key) in the message.
    """
    if isinstance(players, dict):
        keys = [str(k) for k in players]
        seq: Sequence[Any] = list(players.values())
    elif isinstance(players, np.ndarray) and players.ndim == 4:
        seq = list(players)
        keys = [str(i) for i in range(len(seq))]
    elif isinstance(players, list | tuple):
        seq = list(players)
        keys = [str(i) for i in range(len(seq))]
    else:
        raise TypeError(f"{name} must be a sequence or dict of boolean masks, got {type(players)}")
    if not 1 <= len(seq) <= MAX_PLAYERS:
        raise ValueError(f"{name} must hold 1 to {MAX_PLAYERS} masks (N <= 12), got {len(seq)}")
    masks = [check_mask(m, like, f"{name}[{k}]") for m, k in zip(seq, keys)]
    total = np.zeros(np.shape(like), np.int16)
    for m in masks:
        total += m
    if (total > 1).any():
        for i in range(len(masks)):
            for j in range(i + 1, len(masks)):
                n = int((masks[i] & masks[j]).sum())
                if n:
                    raise ValueError(
                        f"{name}[{keys[i]}] and {name}[{keys[j]}] overlap in {n} voxels; "
                        "players must be disjoint"
                    )
    return masks


def check_tau(tau: Any, name: str = "tau") -> float:
    """``tau`` in (0, 1]."""
    t = float(tau)
    if not (0.0 < t <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {tau!r}")
    return t


def check_steps(steps: Any, name: str = "steps") -> int:
    """An integer number of steps >= 1."""
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer):
        raise TypeError(f"{name} must be an integer >= 1, got {steps!r}")
    if steps < 1:
        raise ValueError(f"{name} must be >= 1, got {steps}")
    return int(steps)


def check_batch(xs: Any, masks: Any, seeds: Sequence[int]) -> tuple[np.ndarray, list[np.ndarray]]:
    """A batch ``(B, D, H, W)`` of volumes with one mask per volume and one seed per item."""
    xs = np.asarray(xs)
    if xs.ndim != 4:
        raise ValueError(f"xs must be a batch of 3D volumes (B, D, H, W), got shape {xs.shape}")
    xs = np.stack([check_volume(x, f"xs[{i}]") for i, x in enumerate(xs)])
    masks = np.asarray(masks)
    if masks.shape != xs.shape:
        raise ValueError(f"masks must have shape {xs.shape}, got {masks.shape}")
    ms = [check_mask(m, x, f"masks[{i}]") for i, (m, x) in enumerate(zip(masks, xs))]
    if len(seeds) != len(xs):
        raise ValueError(f"seeds must have {len(xs)} entries, got {len(seeds)}")
    return xs, ms
