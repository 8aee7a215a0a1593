"""The ground-truth risk oracle of the synthetic world: it reads the image, nothing else.

For one case (its known lung mask and vessel tree) the oracle finds the nodules as the
26-connected components of ``image > window(-600 HU)`` inside the lungs off the vessel tree
(>= 4 voxels) and scores

.. math:: \\text{logit} = \\mu + \\sum_i g(V_i, s_i, c_i) + b \\sum_{i<j} 1[V_i, V_j \\ge V_L]

with ``V`` the component volume (voxels), ``s`` its spiculation (the fraction of voxels removed
by a one-voxel binary opening: thin spikes vanish, a round core survives), ``c`` calcified (its brightest
voxel > 250 HU; solid nodules stay near 0 HU) and

.. math:: g = -0.3 \\text{ if calcified, else } q\\,(0.45\\,d - 1) + 2 s,
    \\quad d = (6V/\\pi)^{1/3},\\; q = \\mathrm{clip}((\\bar h + 700)/700, 0.3, 1)

(``q`` discounts ground glass). By construction the oracle is LMPI over nodules, location-invariant
(every feature is translation-invariant) and blind outside the lungs (electrodes, ribs, body).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from ._world import Phantom, find_nodules, unwindow

__all__ = ["NoduleFeatures", "OracleRisk"]

_OPEN = ndimage.generate_binary_structure(3, 1)


@dataclass(frozen=True)
class NoduleFeatures:
    """What the oracle measures on one component, and its main-effect score ``g``."""

    volume: int
    spiculation: float
    mean_hu: float
    calcified: bool
    g: float

    @property
    def diameter(self) -> float:
        return float((6.0 * self.volume / np.pi) ** (1.0 / 3.0))


class OracleRisk:
    """Ground-truth risk logit for one case's anatomy (see the module docstring).

    Args:
        lung_mask, vessel_mask: the case's known anatomy (a :class:`Phantom` gives both:
            :meth:`for_phantom`).
        mu: baseline logit; b: the pairwise term for two large nodules; large_voxels: ``V_L``.

    >>> from shnap._world import make_phantom
    >>> ph = make_phantom(32, n_nodules=2, electrodes=1, seed=1)
    >>> oracle = OracleRisk.for_phantom(ph)
    >>> x = ph.image.copy(); x[ph.electrode_masks[0]] = -1.0   # remove the electrode
    >>> bool(oracle(ph.image[None, None])[0] == oracle(x[None, None])[0])
    True
    """

    name = "oracle"

    def __init__(
        self,
        lung_mask: np.ndarray,
        vessel_mask: np.ndarray,
        *,
        mu: float = -3.0,
        b: float = 0.8,
        large_voxels: int = 110,
    ) -> None:
        lung = np.asarray(lung_mask, bool)
        vessel = np.asarray(vessel_mask, bool)
        if lung.shape != vessel.shape or lung.ndim != 3:
            raise ValueError(
                f"lung_mask and vessel_mask must be 3D masks of one shape, got {lung.shape} and "
                f"{vessel.shape}"
            )
        self.region = lung & ~vessel
        self.mu, self.b, self.large_voxels = float(mu), float(b), int(large_voxels)

    @classmethod
    def for_phantom(cls, phantom: Phantom, **kwargs: float) -> OracleRisk:
        """The oracle for one phantom's lungs and vessel tree."""
        return cls(phantom.lung_mask, phantom.vessel_mask, **kwargs)  # type: ignore[arg-type]

    def features(self, image: np.ndarray) -> list[NoduleFeatures]:
        """The nodules the oracle sees in ``image`` ``(D, H, W)`` and their scores."""
        image = np.asarray(image, np.float32)
        if image.shape != self.region.shape:
            raise ValueError(f"image must have shape {self.region.shape}, got {image.shape}")
        out = []
        for comp in find_nodules(image, self.region):
            vol = int(comp.sum())
            opened = ndimage.binary_opening(comp, _OPEN)
            spic = 1.0 - float(opened.sum()) / vol
            hu = unwindow(image[comp])
            mean_hu = float(hu.mean())
            calc = bool(hu.max() > 250.0)
            if calc:
                g = -0.3
            else:
                q = float(np.clip((mean_hu + 700.0) / 700.0, 0.3, 1.0))
                d = (6.0 * vol / np.pi) ** (1.0 / 3.0)
                g = q * (0.45 * d - 1.0) + 2.0 * spic
            out.append(NoduleFeatures(vol, spic, mean_hu, calc, float(g)))
        return out

    def logit(self, image: np.ndarray) -> float:
        """The oracle's risk logit for one volume."""
        feats = self.features(image)
        large = sum(f.volume >= self.large_voxels for f in feats)
        return self.mu + sum(f.g for f in feats) + self.b * large * (large - 1) / 2

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        arr = np.asarray(batch.detach().cpu().numpy() if hasattr(batch, "detach") else batch)
        if arr.ndim != 5 or arr.shape[1] != 1:
            raise ValueError(f"batch must have shape (B, 1, D, H, W), got {arr.shape}")
        return np.array([self.logit(v[0]) for v in arr], np.float64)

    def truth(self, phantom: Phantom) -> tuple[np.ndarray, np.ndarray]:
        """Ground-truth main effects ``a_i`` and pairwise terms ``b_ij`` for the phantom's
        nodules (in ``phantom.nodule_masks`` order), as the oracle scores the clean image."""
        feats = self.features(phantom.image)
        comps = find_nodules(phantom.image, self.region)
        n = len(phantom.nodule_masks)
        a = np.zeros(n)
        vol = np.zeros(n)
        for comp, f in zip(comps, feats):
            owner = [i for i, m in enumerate(phantom.nodule_masks) if (m & comp).any()]
            if len(owner) == 1:
                a[owner[0]] += f.g
                vol[owner[0]] += f.volume
        big = vol >= self.large_voxels
        bmat = self.b * np.outer(big, big).astype(float)
        np.fill_diagonal(bmat, 0.0)
        return a, bmat
