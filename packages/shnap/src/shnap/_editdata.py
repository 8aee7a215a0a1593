"""Training data of the bridge: random metaball masks, removal and insertion pairs from
phantoms and their object-free twins, and the masks the removal network edits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from icml26_shared.checks import SeedLike, int_from_seed
from shnap._crops import STRUCT

__all__ = ["EditPairs", "edit_pairs", "random_metaball_mask", "removal_masks"]


def random_metaball_mask(
    shape: Sequence[int],
    rng: np.random.Generator,
    radius: tuple[float, float] = (2.0, 5.0),
    margin: int = 1,
) -> np.ndarray:
    """A random metaball: ``Σ_i r_i² / |p − c_i|² ≥ 1`` over 1–3 balls around a random centre.

    The radii are uniform in ``radius`` (nodules of radius 1.5–4 voxels dilated by one); the
    mask is kept ``margin`` voxels inside the box so that it always has a shell.
    """
    shape = tuple(int(s) for s in shape)
    grid = np.stack(np.meshgrid(*[np.arange(s, dtype=np.float32) for s in shape], indexing="ij"))
    for _ in range(100):
        k = int(rng.integers(1, 4))
        r = rng.uniform(*radius, size=k)
        r[1:] *= rng.uniform(0.4, 0.8, size=k - 1)
        lo = np.array([margin + r[0]] * 3)
        hi = np.array(shape, dtype=np.float64) - 1 - margin - r[0]
        if np.any(hi < lo):
            raise ValueError(f"shape {shape} too small for radius {radius} and margin {margin}")
        c0 = rng.uniform(lo, hi)
        centres = c0 + rng.normal(0, 1, (k, 3)) * r[0] * 0.6
        field_ = np.zeros(shape, np.float32)
        for ci, ri in zip(centres, r):
            d2 = ((grid - ci[:, None, None, None].astype(np.float32)) ** 2).sum(0)
            field_ += np.float32(ri**2) / np.maximum(d2, 1e-3)
        m = field_ >= 1.0
        inner = np.zeros(shape, bool)
        inner[tuple(slice(margin, s - margin) for s in shape)] = True
        if m.any() and not (m & ~inner).any():
            return m
    raise RuntimeError("could not draw a metaball mask inside the box")  # pragma: no cover


@dataclass(frozen=True)
class EditPairs:
    """Training pairs (n, S, S, S): the editor's input ``x``, the target ``x0``, the edit
    ``mask`` and the insertion conditioning ``prior`` / ``prior_mask`` (zero for removals);
    ``insertion`` flags the insertion pairs."""

    x: np.ndarray
    x0: np.ndarray
    mask: np.ndarray
    prior: np.ndarray
    prior_mask: np.ndarray
    insertion: np.ndarray

    def __len__(self) -> int:
        return len(self.x)


def edit_pairs(n_phantoms: int, size: int = 16, seed: SeedLike = 0) -> EditPairs:
    """Removal and insertion pairs from phantoms and their object-free twins.

    Phantom ``s`` (2-4 nodules, one electrode; seeds ``2_000_000 + 100_003·seed + k``, apart
    from every seed the reproduce and realism studies draw) and ``make_phantom(s)`` without
    objects share their anatomy. For each object whose mask dilated by one voxel (minus the
    other objects), plus a shell, fits a ``size``³ crop:

    * a removal pair: input = the case, target = the twin inside the mask (the true
      background where the object was), the case outside;
    * for a nodule, an insertion pair: input = the removal's target, target = the case,
      ``prior`` = the nodule as a template over flat lung (``window(-850 HU + hu - hu_twin)``
      on the nodule mask), ``prior_mask`` = the nodule mask: what :meth:`Bridge.insert`
      conditions on.
    """
    from shnap._world import LUNG_HU, make_phantom, window

    seed = int_from_seed(seed, "seed", bits=63)
    rng = np.random.default_rng([seed, 17])
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("x", "x0", "m", "p", "pm", "ins")}
    for k in range(int(n_phantoms)):
        s = 2_000_000 + 100_003 * int(seed) + k
        ph = make_phantom(32, n_nodules=int(rng.integers(2, 5)), electrodes=1, seed=s)
        bare = make_phantom(32, seed=s)
        objects = ph.objects()
        kinds = [(m, True) for m in ph.nodule_masks] + [(m, False) for m in ph.electrode_masks]
        for om, is_nodule in kinds:
            region = ndimage.binary_dilation(om, STRUCT) & ~(objects & ~om)
            sl = ndimage.find_objects(region.astype(np.int8))[0]
            lo = np.array([a.start for a in sl])
            hi = np.array([a.stop for a in sl])
            if np.any(hi - lo + 2 > size):
                continue
            corner = np.clip((lo + hi) // 2 - size // 2, 0, 32 - size)
            box = tuple(slice(c, c + size) for c in corner)
            case = ph.image[box]
            back = np.where(region[box], bare.image[box], case).astype(np.float32)
            zero = np.zeros_like(case)
            cols["x"].append(case)
            cols["x0"].append(back)
            cols["m"].append(region[box])
            cols["p"].append(zero)
            cols["pm"].append(np.zeros(case.shape, bool))
            cols["ins"].append(np.array(False))
            if is_nodule:
                template = window(LUNG_HU + ph.hu[box] - bare.hu[box])
                cols["x"].append(back)
                cols["x0"].append(case)
                cols["m"].append(region[box])
                cols["p"].append(np.where(om[box], template, 0.0).astype(np.float32))
                cols["pm"].append(om[box])
                cols["ins"].append(np.array(True))
    if not cols["x"]:
        raise ValueError("no object fitted a crop; use more phantoms or a larger size")
    return EditPairs(*(np.stack(cols[k]) for k in ("x", "x0", "m", "p", "pm", "ins")))


def removal_masks(
    n_phantoms: int, size: int = 16, seed: SeedLike = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Training data of the removal network: the masks it edits, over object-free targets.

    Phantom ``s`` (seeds ``3_000_000 + 100_003·seed + k``, apart from every other study) gets
    2-4 random nodules at the centres the world allows; each nodule's mask dilated by one voxel
    (26-connected; the removal region of :func:`shnap.shnap`) is cut, in a ``size``³ crop
    centred on it, from the nodule-free twin ``make_phantom(32, seed=s)``: vessel and
    chest-wall voxels stay inside the mask, and the target holds no object. Returns
    ``(crops, masks)``, (n, size, size, size) float32 and bool.
    """
    from shnap._world import make_phantom, random_nodule_specs

    if n_phantoms < 1:
        raise ValueError(f"n_phantoms must be >= 1, got {n_phantoms}")
    seed = int_from_seed(seed, "seed", bits=63)
    rng = np.random.default_rng([seed, 23])
    crops, masks = [], []
    for k in range(int(n_phantoms)):
        s = 3_000_000 + 100_003 * int(seed) + k
        specs = random_nodule_specs(int(rng.integers(2, 5)), rng)
        ph = make_phantom(32, nodules=specs, seed=s)
        bare = make_phantom(32, seed=s).image
        for om in ph.nodule_masks:
            region = ndimage.binary_dilation(om, STRUCT)
            sl = ndimage.find_objects(region.astype(np.int8))[0]
            lo = np.array([a.start for a in sl])
            hi = np.array([a.stop for a in sl])
            if np.any(hi - lo + 2 > size):
                continue
            corner = np.clip((lo + hi) // 2 - size // 2, 0, 32 - size)
            box = tuple(slice(c, c + size) for c in corner)
            crops.append(bare[box])
            masks.append(region[box])
    if not crops:
        raise ValueError("no nodule fitted a crop; use more phantoms or a larger size")
    return np.stack(crops).astype(np.float32), np.stack(masks)
