"""Crop geometry of the editors: one box per mask component, cut out, edited and pasted back.

Every 26-connected component of an edit mask gets its own box (bounding box plus a margin, at
least ``crop`` voxels, a multiple of 4, shifted inside the volume or edge-padded), so its fill
depends neither on the other components nor on the batch it is edited in; identical crop jobs
(same crop, mask, seed and box) are computed once. Shared by the bridge and RePaint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import ndimage

__all__ = [
    "STRUCT",
    "crop_boxes",
    "crop_job_key",
    "extract",
    "paste",
    "paste_template",
    "shell_mean",
]

#: 26-connectivity (dilation by one voxel, components)
STRUCT = ndimage.generate_binary_structure(3, 3)


def shell_mean(x: np.ndarray, mask: np.ndarray) -> float:
    """Mean of ``x`` over the 1-voxel shell of ``mask`` (26-connected dilation minus the mask)."""
    shell = ndimage.binary_dilation(mask, STRUCT) & ~mask
    if not shell.any():
        raise ValueError("mask covers the whole volume: no shell voxels to fill from")
    return float(x[shell].mean(dtype=np.float64))


def crop_job_key(xc: np.ndarray, mc: np.ndarray, seed: int, corner: tuple, size: tuple) -> bytes:
    """Identity of a removal crop job: an editor samples a job repeated within one
    ``remove_batch`` call once (its noise is keyed by seed and corner, so the result is the
    same)."""
    return hashlib.blake2b(
        xc.tobytes() + mc.tobytes() + repr((seed, corner, size)).encode()
    ).digest()


def crop_boxes(mask: np.ndarray, margin: int = 3, crop: int = 16) -> list[tuple[np.ndarray, tuple]]:
    """Boxes covering the mask: ``(component mask, (corner, size))`` per 26-connected component.

    Every component is edited in its own box, so its fill does not depend on which other
    components are edited (nor its noise, keyed by its own box). Each box has sides
    ``max(crop, 4·⌈(extent + 2·margin)/4⌉)``, is centred on its cluster and shifted inside the
    volume where the volume is large enough (otherwise it sticks out and is edge-padded).
    """
    labels, _ = ndimage.label(mask, STRUCT)
    slices = ndimage.find_objects(labels)
    boxes = [
        [np.array([s.start for s in sl]) - margin, np.array([s.stop for s in sl]) + margin, [j + 1]]
        for j, sl in enumerate(slices)
        if sl is not None
    ]
    out = []
    shape = np.array(mask.shape)
    for lo, hi, labs in boxes:
        extent = hi - lo
        size = np.maximum(crop, 4 * np.ceil(extent / 4).astype(int))
        centre = (lo + hi) // 2
        corner = centre - size // 2
        inside = size <= shape
        corner = np.where(inside, np.clip(corner, 0, shape - size), corner)
        comp = np.isin(labels, labs)
        out.append((comp, (tuple(int(c) for c in corner), tuple(int(s) for s in size))))
    return out


def extract(x: np.ndarray, corner: Sequence[int], size: Sequence[int], mode: str) -> np.ndarray:
    """The box ``(corner, size)`` of ``x``, padded with ``mode`` where it leaves the volume."""
    pads, sl = [], []
    for c, s, n in zip(corner, size, x.shape):
        a, b = max(c, 0), min(c + s, n)
        pads.append((a - c, c + s - b))
        sl.append(slice(a, b))
    part = x[tuple(sl)]
    if any(p != (0, 0) for p in pads):
        part = np.pad(part, pads, mode=mode)
    return part


def paste(out: np.ndarray, sub: np.ndarray, submask: np.ndarray, corner: Sequence[int]) -> None:
    """Write ``sub`` into ``out`` at ``corner`` where ``submask`` is set (in place)."""
    vs, ps = [], []
    for c, s, n in zip(corner, sub.shape, out.shape):
        a, b = max(c, 0), min(c + s, n)
        vs.append(slice(a, b))
        ps.append(slice(a - c, b - c))
    region = out[tuple(vs)]
    m = submask[tuple(ps)]
    region[m] = sub[tuple(ps)][m]


def paste_template(
    x: np.ndarray, nodule: Any, centre: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pasted volume, placed template mask, edit mask = placed mask dilated by one voxel)."""
    centre = tuple(int(c) for c in centre)
    if len(centre) != 3 or any(not 0 <= c < n for c, n in zip(centre, x.shape)):
        raise ValueError(f"centre must be a voxel index inside shape {x.shape}, got {centre}")
    placed = nodule.placed_mask(centre, x.shape)
    if not placed.any():
        raise ValueError(f"nodule placed at {centre} covers no voxel of the volume")
    pasted = x.copy()
    vs, ps = nodule.paste_slices(centre, x.shape)
    region = pasted[vs]
    pm = nodule.mask[ps]
    region[pm] = np.asarray(nodule.image, np.float32)[ps][pm]
    return pasted, placed, ndimage.binary_dilation(placed, STRUCT)
