"""A synthetic CT-like chest world in Hounsfield units, with every object's mask.

The phantom is a zoomed chest block (default 32³ voxels): air (-1000 HU) around an elliptic body
(~40 HU, smooth texture), two lungs (-850 HU with a Gaussian-random-field texture, std ~25 HU)
split into five lobes, a branching vessel tree (~40 HU, partial-volume edges), ribs (+700 HU) in
the body wall, ECG electrodes (+2000 HU discs on the anterior skin) and metaball nodules of
radius 1.5-4 voxels (at size 32): solid (~0 HU), ground-glass (~-500 HU) or calcified (+500 HU,
benign), with 0-1 spiculation (thin spikes). Intensities are windowed to [-1, 1] by

.. math:: w(h) = 2\\,\\mathrm{clip}((h + 1000) / 1400, 0, 1) - 1

(window [-1000, 400] HU). Every voxel above -600 HU inside the lungs belongs to the vessel mask or
to a nodule mask by construction, so a reader that thresholds at -600 HU off the vessel tree sees
exactly the nodules (the oracle of :mod:`shnap._oracle`).

The world follows the setting of the S(H)NAP paper (Sobieski, Grzywaczewski et al., "Auditing
Sybil", arXiv 2602.02560, ICML 2026); the phantom itself is ours.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from scipy import ndimage

from icml26_shared.checks import SeedLike, int_from_seed

__all__ = [
    "NoduleInfo",
    "NoduleSpec",
    "NoduleTemplate",
    "Phantom",
    "boundary_distance",
    "find_nodules",
    "make_phantom",
    "nodule_free_crops",
    "nodule_library",
    "random_lung_rois",
    "random_nodule_specs",
    "unwindow",
    "window",
]

AIR_HU, BODY_HU, LUNG_HU, VESSEL_HU, RIB_HU, ELECTRODE_HU = (
    -1000.0,
    40.0,
    -850.0,
    40.0,
    700.0,
    2000.0,
)
KIND_HU = {"solid": 0.0, "ground_glass": -500.0, "calcified": 500.0}
KINDS = tuple(KIND_HU)
NODULE_THRESHOLD_HU = -600.0
Placement = Literal["uniform", "central", "peripheral"]


def window(hu: np.ndarray) -> np.ndarray:
    """Window [-1000, 400] HU to [-1, 1]: ``clip((hu + 1000) / 1400, 0, 1) * 2 - 1`` (float32).

    >>> float(window(np.array(-300.0)))
    0.0
    """
    return (np.clip((np.asarray(hu, np.float32) + 1000.0) / 1400.0, 0.0, 1.0) * 2.0 - 1.0).astype(
        np.float32
    )


def unwindow(x: np.ndarray) -> np.ndarray:
    """Inverse of :func:`window` on [-1, 1] (values clipped by the window stay clipped).

    >>> float(unwindow(np.array(0.0)))
    -300.0
    """
    return ((np.asarray(x, np.float32) + 1.0) / 2.0 * 1400.0 - 1000.0).astype(np.float32)


@dataclass(frozen=True)
class NoduleSpec:
    """What a nodule is, before it is placed: core radius (voxels at size 32), kind, spiculation."""

    radius: float
    kind: str = "solid"
    spiculation: float = 0.0
    placement: Placement = "uniform"

    def __post_init__(self) -> None:
        if self.kind not in KIND_HU:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if not 0.5 <= self.radius <= 8:
            raise ValueError(f"radius must be in [0.5, 8] voxels, got {self.radius}")
        if not 0.0 <= self.spiculation <= 1.0:
            raise ValueError(f"spiculation must be in [0, 1], got {self.spiculation}")
        if self.placement not in ("uniform", "central", "peripheral"):
            raise ValueError(
                f"placement must be 'uniform', 'central' or 'peripheral', got {self.placement!r}"
            )

    @property
    def malignant(self) -> bool:
        """Calcified nodules are benign; solid and ground-glass ones may be malignant."""
        return self.kind != "calcified"


@dataclass(frozen=True)
class NoduleInfo:
    """A placed nodule: its spec, centre (voxel coordinates) and depth in the lung (voxels)."""

    spec: NoduleSpec
    centre: tuple[int, int, int]
    depth: float
    volume: int

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def malignant(self) -> bool:
        return self.spec.malignant


@dataclass(frozen=True)
class Phantom:
    """One synthetic case. ``image = window(hu)``; all masks are boolean ``(D, H, W)``."""

    hu: np.ndarray
    image: np.ndarray
    body_mask: np.ndarray
    lung_mask: np.ndarray
    vessel_mask: np.ndarray
    rib_mask: np.ndarray
    lobe: np.ndarray
    nodule_masks: tuple[np.ndarray, ...]
    nodules: tuple[NoduleInfo, ...]
    electrode_masks: tuple[np.ndarray, ...]
    seed: int

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.image.shape)  # type: ignore[return-value]

    def objects(self) -> np.ndarray:
        """Union of nodule and electrode masks."""
        out = np.zeros(self.shape, bool)
        for m in (*self.nodule_masks, *self.electrode_masks):
            out |= m
        return out


@dataclass(frozen=True)
class NoduleTemplate:
    """A nodule patch to paste (SNAP insertion): windowed ``image`` and boolean ``mask``.

    ``image`` holds the nodule over a flat -850 HU lung (partial-volume edges included); the
    patch is odd-sized and centred, so pasting at ``c`` puts the patch centre on ``c``.
    """

    image: np.ndarray
    mask: np.ndarray
    spec: NoduleSpec = NoduleSpec(2.0)
    name: str = "nodule"

    def paste_slices(
        self, centre: Sequence[int], shape: Sequence[int]
    ) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
        """Volume slices and patch slices for pasting at ``centre`` (clipped at the borders)."""
        vol, pat = [], []
        for c, p, n in zip(centre, self.mask.shape, shape):
            lo = int(c) - p // 2
            a, b = max(lo, 0), min(lo + p, n)
            vol.append(slice(a, b))
            pat.append(slice(a - lo, b - lo))
        return tuple(vol), tuple(pat)

    def placed_mask(self, centre: Sequence[int], shape: Sequence[int]) -> np.ndarray:
        """The template's mask pasted at ``centre`` in a volume of ``shape``."""
        out = np.zeros(tuple(shape), bool)
        vs, ps = self.paste_slices(centre, shape)
        out[vs] = self.mask[ps]
        return out


# --------------------------------------------------------------------------------------------
# building blocks
def _grid(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Voxel-centre coordinates normalised to [-1, 1] along each axis."""
    t = (np.arange(size, dtype=np.float32) + 0.5) / size * 2.0 - 1.0
    return np.meshgrid(t, t, t, indexing="ij")


def _grf(shape: tuple[int, ...], sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Unit-variance Gaussian random field: white noise smoothed by a Gaussian of ``sigma``."""
    f = ndimage.gaussian_filter(rng.standard_normal(shape).astype(np.float32), sigma, mode="wrap")
    return (f / (f.std() + 1e-8)).astype(np.float32)


def _segment_distance(pts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance of points ``(..., 3)`` to the segment ``a``-``b``."""
    ab = b - a
    t = np.clip(((pts - a) @ ab) / max(float(ab @ ab), 1e-9), 0.0, 1.0)
    return np.linalg.norm(pts - (a + t[..., None] * ab), axis=-1)


def _vessel_weight(
    size: int, hilum: np.ndarray, lateral: float, rng: np.random.Generator
) -> np.ndarray:
    """Partial-volume weight (0..1) of a three-generation branching vessel tree from ``hilum``."""
    pts = np.stack(np.meshgrid(*[np.arange(size, dtype=np.float32)] * 3, indexing="ij"), -1)
    weight = np.zeros((size,) * 3, np.float32)
    s = size / 32.0
    stack = [(hilum, np.array([0.0, 0.0, lateral]), 4.5 * s, 0.9 * s, 0)]
    while stack:
        start, direction, length, radius, depth = stack.pop()
        direction = direction / np.linalg.norm(direction)
        end = start + direction * length
        lo = np.clip(np.floor(np.minimum(start, end) - radius - 2).astype(int), 0, size)
        hi = np.clip(np.ceil(np.maximum(start, end) + radius + 3).astype(int), 0, size)
        box = tuple(slice(a, b) for a, b in zip(lo, hi))
        if all(b > a for a, b in zip(lo, hi)):
            d = _segment_distance(pts[box], start, end)
            weight[box] = np.maximum(weight[box], np.clip(radius + 0.5 - d, 0.0, 1.0))
        if depth < 3:
            for sign in (-1.0, 1.0):
                turn = rng.normal(0.0, 0.25, 3) + sign * rng.uniform(0.5, 0.9) * _perp(
                    direction, rng
                )
                stack.append(
                    (end, direction + turn, length * 0.8, max(radius * 0.78, 0.45 * s), depth + 1)
                )
    return weight


def _perp(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r = rng.standard_normal(3)
    r -= (r @ v) / (v @ v) * v
    return r / (np.linalg.norm(r) + 1e-9)


def _nodule_weight(
    pts: np.ndarray, centre: np.ndarray, spec: NoduleSpec, scale: float, rng: np.random.Generator
) -> np.ndarray:
    """Partial-volume weight of a metaball nodule (3 balls) with ``spiculation`` thin spikes."""
    r = spec.radius * scale
    field = np.zeros(pts.shape[:-1], np.float32)
    for k in range(3):
        off = rng.normal(0.0, 0.3 * r, 3) if k else np.zeros(3)
        rk = r * (0.8 if k == 0 else rng.uniform(0.4, 0.6))
        d2 = np.sum((pts - (centre + off)) ** 2, axis=-1) + 1e-6
        field += (rk * rk / d2).astype(np.float32)
    # field = 1 on the (merged) surface; a soft one-voxel edge around it
    radius_eq = np.sqrt(1.0 / np.maximum(field, 1e-6))  # ~ distance-like in units of r
    w = np.clip((1.0 - radius_eq) * r + 0.5, 0.0, 1.0)
    n_spikes = round(8 * spec.spiculation)
    for _ in range(n_spikes):
        u = rng.standard_normal(3)
        u /= np.linalg.norm(u)
        length = r * (0.8 + 0.8 * spec.spiculation) + rng.uniform(0, 1.0)
        d = _segment_distance(pts, centre + 0.5 * r * u, centre + (r + length) * u)
        w = np.maximum(w, np.clip(0.9 - d, 0.0, 1.0) * 0.95)
    return w.astype(np.float32)


#: largest nodule radius (voxels at size 32) of the depth-independent world (see make_phantom)
INDEPENDENT_MAX_RADIUS = 2.5


def random_nodule_specs(
    n: int,
    rng: np.random.Generator,
    *,
    kinds: Sequence[str] | None = None,
    max_radius: float = 4.0,
) -> list[NoduleSpec]:
    """``n`` random nodules: radius U(1.5, ``max_radius``), kind solid 55% / ground-glass 25% /
    calcified 20%, spiculation U(0, 1) for solid, U(0, 0.4) for the others."""
    if not 1.5 < max_radius <= 4.0:
        raise ValueError(f"max_radius must be in (1.5, 4], got {max_radius}")
    out = []
    for i in range(n):
        kind = (
            kinds[i] if kinds is not None else str(rng.choice(KINDS, p=[0.55, 0.25, 0.20]))  # type: ignore[arg-type]
        )
        radius = float(rng.uniform(1.5, max_radius))
        spic = float(rng.uniform(0, 1.0) if kind == "solid" else rng.uniform(0, 0.4))
        out.append(NoduleSpec(radius=radius, kind=kind, spiculation=spic))
    return out


def boundary_distance(lung_mask: np.ndarray) -> np.ndarray:
    """Euclidean distance (voxels) of each lung voxel to the nearest non-lung voxel (0 outside)."""
    return ndimage.distance_transform_edt(lung_mask).astype(np.float32)


def _choose_centre(
    allowed: np.ndarray, depth: np.ndarray, placement: str, rng: np.random.Generator
) -> tuple[int, int, int] | None:
    idx = np.argwhere(allowed)
    if len(idx) == 0:
        return None
    d = depth[tuple(idx.T)]
    rel = d / max(float(depth.max()), 1e-6)
    if placement == "central":
        pick = idx[rel >= np.quantile(rel, 0.5)] if len(idx) > 3 else idx
    elif placement == "peripheral":
        pick = idx[rel <= np.quantile(rel, 0.5)] if len(idx) > 3 else idx
    else:
        pick = idx
    c = pick[rng.integers(len(pick))]
    return int(c[0]), int(c[1]), int(c[2])


# --------------------------------------------------------------------------------------------
def make_phantom(
    size: int = 32,
    n_nodules: int = 0,
    electrodes: int = 0,
    seed: SeedLike = 0,
    *,
    nodules: Sequence[NoduleSpec] | None = None,
    placement: Placement = "uniform",
    depth_independent: bool = False,
) -> Phantom:
    """A synthetic chest block of ``size``³ voxels in HU with all masks (see the module docstring).

    Args:
        size: edge length in voxels (>= 16); object sizes scale with ``size / 32``.
        n_nodules: number of random nodules (ignored when ``nodules`` is given).
        electrodes: number of ECG electrode discs on the anterior skin.
        seed: the anatomy, texture and nodule draws; the same seed with other ``nodules`` or
            ``placement`` keeps the anatomy (body, lungs, vessels, ribs, texture) identical.
        nodules: explicit nodule specs (each with its own ``placement``).
        placement: placement of the random nodules: ``"uniform"`` over allowed lung voxels,
            ``"central"`` (deeper half of allowed centres by distance to the lung boundary) or
            ``"peripheral"`` (shallower half).
        depth_independent: nodule depth independent of size and risk. By default a nodule of
            radius ``r`` may sit only where it fits (depth >= r + 1, vessels >= r + 1.5 away),
            so large, risky nodules are deep (Spearman of depth and radius about 0.66). Here
            every nodule draws its centre from the positions where the world's largest nodule
            fits (radius :data:`INDEPENDENT_MAX_RADIUS`; random radii are drawn up to it and
            larger explicit radii are refused), so where a nodule sits does not depend on
            its own size, kind or spiculation.

    Nodules never touch the lung boundary, the vessel tree or each other (>= 2 voxels apart);
    a nodule that does not fit is dropped (``len(phantom.nodules)`` says how many were placed).

    >>> ph = make_phantom(32, n_nodules=2, electrodes=1, seed=0)
    >>> ph.image.shape, ph.image.dtype, len(ph.electrode_masks)
    ((32, 32, 32), dtype('float32'), 1)
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 16:
        raise ValueError(f"size must be an integer >= 16, got {size!r}")
    if isinstance(n_nodules, bool) or not isinstance(n_nodules, int | np.integer) or n_nodules < 0:
        raise ValueError(f"n_nodules must be an integer >= 0, got {n_nodules!r}")
    if not isinstance(electrodes, int | np.integer) or electrodes < 0 or electrodes > 6:
        raise ValueError(f"electrodes must be an integer in [0, 6], got {electrodes!r}")
    if placement not in ("uniform", "central", "peripheral"):
        raise ValueError(
            f"placement must be 'uniform', 'central' or 'peripheral', got {placement!r}"
        )
    size = int(size)
    shape = (size, size, size)
    s = size / 32.0
    max_radius = INDEPENDENT_MAX_RADIUS if depth_independent else 4.0
    if depth_independent and nodules is not None:
        big = [sp.radius for sp in nodules if sp.radius > INDEPENDENT_MAX_RADIUS]
        if big:
            raise ValueError(
                f"nodules: a depth-independent world takes radii <= {INDEPENDENT_MAX_RADIUS}, "
                f"got {big}"
            )
    seed = int_from_seed(seed, "seed", bits=63)
    anat = np.random.default_rng([seed, 0])
    z, y, x = _grid(size)

    # body: elliptic cylinder, slight random shape; skin distance in voxels
    by, bx = 0.80 + anat.uniform(-0.03, 0.03), 0.96 + anat.uniform(-0.02, 0.01)
    body = (y / by) ** 2 + (x / bx) ** 2 <= 1.0
    hu = np.full(shape, AIR_HU, np.float32)
    hu[body] = BODY_HU + 12.0 * _grf(shape, 1.5 * s, anat)[body]

    # lungs and lobes
    lung = np.zeros(shape, bool)
    lobe = np.zeros(shape, np.int8)
    for side, label0 in ((1.0, 1), (-1.0, 4)):
        cx = side * (0.45 + anat.uniform(-0.02, 0.02))
        rz, ry, rx = 0.92, 0.62 + anat.uniform(-0.03, 0.03), 0.40 + anat.uniform(-0.02, 0.02)
        m = ((z / rz) ** 2 + ((y - 0.02) / ry) ** 2 + ((x - cx) / rx) ** 2 <= 1.0) & body
        lung |= m
        fissure = z + 0.6 * y
        if side > 0:  # three lobes
            t1, t2 = anat.uniform(-0.45, -0.25), anat.uniform(0.2, 0.4)
            lobe[m & (fissure < t1)] = label0
            lobe[m & (fissure >= t1) & (fissure < t2)] = label0 + 1
            lobe[m & (fissure >= t2)] = label0 + 2
        else:  # two lobes
            t1 = anat.uniform(-0.1, 0.1)
            lobe[m & (fissure < t1)] = label0
            lobe[m & (fissure >= t1)] = label0 + 1
    lobe[lobe >= 4] -= 0  # labels: 1-3 one lung, 4-5 the other
    texture = LUNG_HU + 25.0 * _grf(shape, 1.0 * s, anat)
    hu[lung] = texture[lung]

    # ribs: arcs in the body wall, lateral and posterior, every ~6 voxels along z
    e_body = np.sqrt((y / by) ** 2 + (x / bx) ** 2)
    ribs = np.zeros(shape, bool)
    z_vox = np.arange(size)
    period = 6.0 * s
    phase = anat.uniform(0, period)
    rib_rows = np.abs(((z_vox - phase) % period) - period / 2) <= 0.75 * s
    ribs[rib_rows] = True
    ribs &= (e_body >= 0.88) & (e_body <= 0.95) & (y > -0.35) & ~lung
    hu[ribs] = RIB_HU + 40.0 * anat.standard_normal(int(ribs.sum())).astype(np.float32)

    # vessel tree from each hilum, clipped to the lung
    vessel_w = np.zeros(shape, np.float32)
    for side in (1.0, -1.0):
        hil = np.array([size / 2 + anat.uniform(-2, 2) * s, size / 2, size / 2 + side * 3.0 * s])
        vessel_w = np.maximum(vessel_w, _vessel_weight(size, hil, side, anat))
    vessel_w *= lung
    hu = np.where(lung, hu + vessel_w * (VESSEL_HU - hu), hu).astype(np.float32)
    vessel = lung & (hu > LUNG_HU + 100.0)

    # nodules (their own stream so a changed placement keeps the anatomy)
    nod_rng = np.random.default_rng([seed, 1])
    specs = (
        list(nodules)
        if nodules is not None
        else [
            replace(sp, placement=placement)
            for sp in random_nodule_specs(n_nodules, nod_rng, max_radius=max_radius)
        ]
    )
    depth = boundary_distance(lung)
    away_vessel = ndimage.distance_transform_edt(~vessel)
    pts = np.stack(np.meshgrid(*[np.arange(size, dtype=np.float32)] * 3, indexing="ij"), -1)
    occupied = np.zeros(shape, bool)
    nodule_masks: list[np.ndarray] = []
    infos: list[NoduleInfo] = []
    place_rng = np.random.default_rng([seed, 2])
    for spec in specs:
        r = spec.radius * s
        rf = INDEPENDENT_MAX_RADIUS * s if depth_independent else r  # the radius that must fit
        away_other = ndimage.distance_transform_edt(~occupied) if occupied.any() else np.inf
        allowed = (
            (depth >= rf + 1.0) & (away_vessel >= rf + 1.5) & (away_other >= rf + 2.5 + 2.0 * s)
        )
        centre = _choose_centre(allowed, depth, spec.placement, place_rng)
        if centre is None:
            continue
        # a local box around the centre keeps the metaball evaluation cheap
        half = int(np.ceil(r * 2.6 + 3))
        box = tuple(slice(max(c - half, 0), min(c + half + 1, size)) for c in centre)
        w_box = _nodule_weight(pts[box], np.array(centre, np.float32), spec, s, place_rng)
        w = np.zeros(shape, np.float32)
        w[box] = w_box
        w *= (
            lung
            & ~vessel
            & (ndimage.distance_transform_edt(~occupied) > 2.0 if occupied.any() else True)
        )
        target = KIND_HU[spec.kind] + 20.0 * place_rng.standard_normal(shape).astype(np.float32)
        hu = np.where(w > 0, hu + w * (target - hu), hu).astype(np.float32)
        mask = (w > 0.12) & lung
        mask = ndimage.binary_fill_holes(mask) & lung
        if mask.sum() < 4:
            continue
        occupied |= mask
        nodule_masks.append(mask)
        infos.append(NoduleInfo(spec, centre, float(depth[centre]), int(mask.sum())))

    if len(nodule_masks) < len(specs):
        warnings.warn(
            f"make_phantom placed {len(nodule_masks)} of the {len(specs)} nodules asked for: the "
            f"lungs of a size-{size} phantom have no room for more (each keeps its distance from "
            "the pleura, the vessels and the others); ask for fewer or a larger size",
            UserWarning,
            stacklevel=2,
        )

    # electrodes: +2000 HU discs straddling the anterior skin, >= 3 voxels from the lungs (so a
    # removal, dilated by one voxel, never touches lung voxels)
    el_rng = np.random.default_rng([seed, 3])
    electrode_masks: list[np.ndarray] = []
    outside_d = ndimage.distance_transform_edt(~body)
    inside_d = ndimage.distance_transform_edt(body)
    skin_band = ((outside_d > 0) & (outside_d <= 1.6 * s)) | ((inside_d > 0) & (inside_d <= 1.0))
    el_taken = np.zeros(shape, bool)
    near_lung = ndimage.binary_dilation(lung, iterations=2)  # electrodes stay off the lungs
    for _ in range(electrodes):
        for _try in range(50):
            theta = el_rng.uniform(-np.pi * 0.8, -np.pi * 0.2)  # anterior arc (y < 0)
            zc = el_rng.uniform(0.2, 0.8) * size
            yc = (np.sin(theta) * by + 1) / 2 * size - 0.5
            xc = (np.cos(theta) * bx + 1) / 2 * size - 0.5
            d = np.linalg.norm(pts - np.array([zc, yc, xc], np.float32), axis=-1)
            m = (d <= 3.0 * s) & skin_band
            if (
                m.sum() >= 4
                and not (m & near_lung).any()
                and not (ndimage.binary_dilation(m, iterations=2) & el_taken).any()
            ):
                break
        else:
            raise RuntimeError("could not place the electrodes; use fewer (electrodes <= 6)")
        hu[m] = ELECTRODE_HU
        el_taken |= m
        electrode_masks.append(m)

    return Phantom(
        hu=hu,
        image=window(hu),
        body_mask=body,
        lung_mask=lung,
        vessel_mask=vessel,
        rib_mask=ribs,
        lobe=lobe,
        nodule_masks=tuple(nodule_masks),
        nodules=tuple(infos),
        electrode_masks=tuple(electrode_masks),
        seed=int(seed),
    )


def nodule_library(
    n: int,
    seed: SeedLike = 0,
    *,
    kinds: Sequence[str] | None = None,
    radius: tuple[float, float] = (1.5, 2.5),
) -> list[NoduleTemplate]:
    """``n`` nodule templates for insertion (SNAP): windowed patches over a flat -850 HU lung.

    Kinds default to solid; ``radius`` is the range of core radii (voxels at size 32).

    >>> lib = nodule_library(2, seed=0)
    >>> lib[0].image.shape == lib[0].mask.shape, lib[0].mask.dtype
    (True, dtype('bool'))
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng([int_from_seed(seed, "seed", bits=63), 7])
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)] if kinds else "solid"
        spec = NoduleSpec(
            radius=float(rng.uniform(*radius)),
            kind=kind,
            spiculation=float(rng.uniform(0, 0.3) if kind == "solid" else 0.0),
        )
        half = int(np.ceil(spec.radius * 2.6 + 2))
        p = 2 * half + 1
        pts = np.stack(np.meshgrid(*[np.arange(p, dtype=np.float32)] * 3, indexing="ij"), -1)
        w = _nodule_weight(pts, np.array([half] * 3, np.float32), spec, 1.0, rng)
        target = KIND_HU[kind] + 20.0 * rng.standard_normal(w.shape).astype(np.float32)
        hu = LUNG_HU + w * (target - LUNG_HU)
        mask = ndimage.binary_fill_holes(w > 0.12)
        # crop to the mask's bounding box, kept odd and centred
        idx = np.argwhere(mask)
        ext = int(np.max(np.abs(idx - half))) + 1
        sl = (slice(half - ext, half + ext + 1),) * 3
        out.append(
            NoduleTemplate(
                image=window(hu[sl]), mask=mask[sl].copy(), spec=spec, name=f"{kind}-{i}"
            )
        )
    return out


def nodule_free_crops(
    n: int, size: int = 16, seed: int = 0, *, phantom_size: int = 32
) -> np.ndarray:
    """``n`` windowed ``size``³ crops centred in the lungs of nodule-free phantoms (float32).

    Eight crops per phantom; crop centres are lung voxels at least 2 voxels from the boundary.

    >>> nodule_free_crops(3, seed=0).shape
    (3, 16, 16, 16)
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if size > phantom_size:
        raise ValueError(f"size must be <= phantom_size={phantom_size}, got {size}")
    rng = np.random.default_rng([seed, 11])
    out = np.empty((n, size, size, size), np.float32)
    i, k = 0, 0
    while i < n:
        ph = make_phantom(phantom_size, seed=int(seed) * 100003 + k)
        k += 1
        cand = np.argwhere(boundary_distance(ph.lung_mask) >= 2.0)
        for c in cand[rng.choice(len(cand), size=min(8, n - i), replace=False)]:
            lo = np.clip(c - size // 2, 0, phantom_size - size)
            out[i] = ph.image[lo[0] : lo[0] + size, lo[1] : lo[1] + size, lo[2] : lo[2] + size]
            i += 1
    return out


def find_nodules(image: np.ndarray, region: np.ndarray, *, min_voxels: int = 4) -> list[np.ndarray]:
    """Connected components (26-connectivity) of ``image > window(-600 HU)`` inside ``region``
    with at least ``min_voxels`` voxels (the realism nodule check; also the oracle's reader).

    >>> ph = make_phantom(32, n_nodules=1, seed=3)
    >>> len(find_nodules(ph.image, ph.lung_mask & ~ph.vessel_mask)) == len(ph.nodules)
    True
    """
    image = np.asarray(image)
    region = np.asarray(region, bool)
    if image.shape != region.shape:
        raise ValueError(f"region must have shape {image.shape}, got {region.shape}")
    hot = (image > window(np.float32(NODULE_THRESHOLD_HU))) & region
    labels, k = ndimage.label(hot, structure=np.ones((3, 3, 3)))
    if k == 0:
        return []
    counts = np.bincount(labels.ravel(), minlength=k + 1)
    return [labels == j for j in range(1, k + 1) if counts[j] >= min_voxels]


def random_lung_rois(
    phantom: Phantom, n: int, *, radius: float = 2.0, seed: int = 0, min_distance: int = 2
) -> list[np.ndarray]:
    """``n`` disjoint ball-shaped lung ROIs (``radius`` voxels) at least ``min_distance`` voxels
    from the objects and vessels: the "random region" players of the shortcut audit."""
    rng = np.random.default_rng([seed, phantom.seed, 13])
    blocked = ndimage.binary_dilation(
        phantom.objects() | phantom.vessel_mask, iterations=int(min_distance)
    )
    pts = np.stack(np.meshgrid(*[np.arange(s) for s in phantom.shape], indexing="ij"), -1)
    out: list[np.ndarray] = []
    depth = boundary_distance(phantom.lung_mask)
    for _ in range(n):
        far = ndimage.distance_transform_edt(~blocked) > radius + 0.5
        cand = np.argwhere((depth > radius + 0.5) & far)
        if len(cand) == 0:
            raise ValueError(f"no room for {n} lung ROIs of radius {radius} in this phantom")
        c = cand[rng.integers(len(cand))]
        roi = (np.linalg.norm(pts - c, axis=-1) <= radius) & phantom.lung_mask
        out.append(roi)
        blocked |= ndimage.binary_dilation(roi, iterations=int(min_distance))
    return out
