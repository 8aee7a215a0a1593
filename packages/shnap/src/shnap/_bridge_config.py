"""The bridge's configurations: its process and sampler, and its networks' training."""

from __future__ import annotations

from dataclasses import dataclass

from shnap._checks import check_steps

__all__ = ["BridgeConfig", "TrainConfig"]


@dataclass(frozen=True)
class BridgeConfig:
    """The bridge's process and sampler: noise scales, sampler steps, crop geometry, precision."""

    sigma: float = 0.2
    sigma1: float = 0.05
    steps: int = 50
    widths: tuple[int, int, int] = (16, 32, 64)
    margin: int = 3
    crop: int = 16
    #: bf16 autocast: None (default) where the CPU computes bf16 natively, else float32
    bf16: bool | None = None
    #: the sampler's last time (it returns x̂0 there) and the spacing of :func:`sampling_times`
    t_end: float = 1e-3
    rho: float = 2.0
    #: network calls of an insertion; None: ``max(1, round(steps * tau))``
    insert_steps: int | None = None

    def __post_init__(self) -> None:
        if self.insert_steps is not None:
            check_steps(self.insert_steps, "BridgeConfig.insert_steps")
        if not 0 < self.t_end < 0.3:
            raise ValueError(f"BridgeConfig.t_end must be in (0, 0.3), got {self.t_end}")
        if not self.rho >= 1:
            raise ValueError(f"BridgeConfig.rho must be >= 1, got {self.rho}")


@dataclass(frozen=True)
class TrainConfig:
    """Training of the bridge's UNet (its hash, with :class:`BridgeConfig`'s, keys the cache)."""

    n_crops: int = 4000
    steps: int = 1300
    batch_size: int = 32
    lr: float = 2e-3
    seed: int = 0
    radius: tuple[float, float] = (2.0, 5.0)
    #: place masks where dilated nodules can be: free of voxels above ``vessel_hu`` (vessels,
    #: chest wall), as nodules never touch vessels or the lung boundary
    nodule_like: bool = True
    vessel_hu: float = -750.0
    #: phantoms (with nodules and an electrode, and their object-free twins) giving the
    #: removal and insertion pairs of :func:`edit_pairs`; 0 trains on random masks only
    n_pair_phantoms: int = 400
    #: batch shares of real-object removals and of insertions (the rest: random masks on
    #: nodule-free crops)
    p_removal: float = 0.4
    p_insertion: float = 0.3
    #: one network per edit direction: removals by an unconditioned UNet trained on random
    #: masks only (no real pairs), insertions by the conditioned UNet (the recipe above);
    #: False: one conditioned UNet for both (code version 3)
    split: bool = True
    #: the removal network's masks: ``"deployment"`` (:func:`removal_masks` from
    #: ``n_mask_phantoms`` phantoms, a share ``p_metaball`` of random metaballs, bright voxels
    #: allowed) or ``"metaball"`` (code version 5: metaballs, ``nodule_like`` filtered)
    removal_mask_source: str = "deployment"
    n_mask_phantoms: int = 600
    p_metaball: float = 0.25
    #: the removal network's random metaballs may cover bright voxels (vessels, chest wall,
    #: ribs; code version 6); False (code version 7) keeps them ``nodule_like``, so bright
    #: voxels inside its masks come only from the deployment masks (where real removals have
    #: them); with bright metaballs it drew wall into lung voxels twice as often
    metaball_bright: bool = False
    #: the loss on x̂0's masked voxels: ``"l1"`` (mean absolute error, the default) or
    #: ``"l2"`` (mean squared error: x̂0 estimates the posterior mean, which the sampler's
    #: bridge-posterior step assumes; L1 estimates the per-voxel median)
    loss: str = "l1"

    def __post_init__(self) -> None:
        if self.loss not in ("l1", "l2"):
            raise ValueError(f"TrainConfig.loss must be 'l1' or 'l2', got {self.loss!r}")
        if self.removal_mask_source not in ("deployment", "metaball"):
            raise ValueError(
                "TrainConfig.removal_mask_source must be 'deployment' or 'metaball', "
                f"got {self.removal_mask_source!r}"
            )
        if not 0 <= self.p_metaball <= 1:
            raise ValueError(f"TrainConfig.p_metaball must be in [0, 1], got {self.p_metaball}")
