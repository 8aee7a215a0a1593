"""The comparison editors: three naive fills and a RePaint-style DDPM on the bridge's UNet.

All implement the ``Editor`` protocol (``remove``, ``remove_batch``, ``insert``) and leave every
voxel outside the edited mask bit-identical (spec item 2).

* :class:`ZeroFill` — the mask set to 0 after windowing (≈ −300 HU).
* :class:`GlobalMeanFill` — the mask set to the mean of the whole volume.
* :class:`ShellMeanFill` — the mask set to the mean of its 1-voxel shell (no texture).
* :class:`RePaint` — Lugmayr et al. (CVPR 2022) inpainting with an unconditional DDPM x0-predictor
  (the same :class:`~shnap._unet.UNet3D`, mask channel zero): at each step t → s the known part
  is the forward-noised input, the unknown part the DDPM posterior draw, and each step is
  resampled ``jumps`` times (noised back to t and redone) to harmonise the two.

The naive fills' ``insert`` pastes the template and fills the 1-voxel ring around it as they fill
a removal, so insertion follows the same rule as removal for every editor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from scipy import ndimage

from shnap._checks import check_batch, check_mask, check_steps, check_tau, check_volume
from shnap._crops import (
    STRUCT,
    crop_boxes,
    crop_job_key,
    extract,
    paste,
    paste_template,
    shell_mean,
)
from shnap._precision import autocast, resolve_bf16
from shnap._progress import Progress, training_progress
from shnap._unet import UNet3D
from shnap._weights import shipped_keys, weights_key

__all__ = ["DDPMConfig", "GlobalMeanFill", "RePaint", "ShellMeanFill", "ZeroFill", "alpha_bar"]


class _ConstantFill:
    """A fill by one value per edit: ``value(x, mask)``."""

    name = "constant"

    def value(self, x: np.ndarray, mask: np.ndarray) -> np.float32:
        raise NotImplementedError

    def fill(self, out: np.ndarray, x: np.ndarray, mask: np.ndarray) -> None:
        """Write the fill of ``mask`` (computed from ``x``) into ``out``."""
        out[mask] = self.value(x, mask)

    def remove(self, x: np.ndarray, mask: np.ndarray, seed: int = 0) -> np.ndarray:
        """Set ``mask`` to the fill value; every other voxel is returned unchanged."""
        x = check_volume(x, "x")
        mask = check_mask(mask, x, "mask")
        out = x.copy()
        self.fill(out, x, mask)
        return out

    def remove_batch(self, xs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """:meth:`remove` for a batch ``(B, D, H, W)``."""
        xs, ms = check_batch(xs, masks, seeds)
        out = xs.copy()
        for o, x, m in zip(out, xs, ms):
            self.fill(o, x, m)
        return out

    def insert(
        self, x: np.ndarray, nodule: Any, centre: Sequence[int], tau: float = 0.3, seed: int = 0
    ) -> np.ndarray:
        """Paste ``nodule`` at ``centre`` and fill the one-voxel ring around it."""
        x = check_volume(x, "x")
        check_tau(tau)
        pasted, placed, edit = paste_template(x, nodule, centre)
        ring = edit & ~placed
        out = pasted
        if ring.any():
            self.fill(out, x, ring)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ZeroFill(_ConstantFill):
    """Fill with 0 in windowed units (≈ −300 HU), the classic occlusion baseline."""

    name = "zero"

    def value(self, x: np.ndarray, mask: np.ndarray) -> np.float32:
        return np.float32(0.0)


class GlobalMeanFill(_ConstantFill):
    """Fill with the mean of the whole input volume."""

    name = "global-mean"

    def value(self, x: np.ndarray, mask: np.ndarray) -> np.float32:
        return np.float32(x.mean(dtype=np.float64))


class ShellMeanFill(_ConstantFill):
    """Fill each connected component of the mask with the mean of its own 1-voxel shell
    (local, but without texture)."""

    name = "shell-mean"

    def value(self, x: np.ndarray, mask: np.ndarray) -> np.float32:
        return np.float32(shell_mean(x, mask))

    def fill(self, out: np.ndarray, x: np.ndarray, mask: np.ndarray) -> None:
        """Each 26-connected component of ``mask`` gets the mean of its own shell."""
        labels, k = ndimage.label(mask, STRUCT)
        for j in range(1, k + 1):
            comp = labels == j
            out[comp] = self.value(x, comp)


# --------------------------------------------------------------------------------------------
def alpha_bar(t: Any) -> Any:
    """Cosine noise schedule ``ᾱ(t) = cos²((t + s)/(1 + s) · π/2) / cos²(s/(1 + s) · π/2)``,
    ``s = 0.008`` (Nichol & Dhariwal 2021), clipped to ``[1e-4, 1]``."""
    s = 0.008
    f = np.cos((np.asarray(t, np.float64) + s) / (1 + s) * math.pi / 2) ** 2
    f0 = math.cos(s / (1 + s) * math.pi / 2) ** 2
    return np.clip(f / f0, 1e-4, 1.0)


@dataclass(frozen=True)
class DDPMConfig:
    """Training and sampling of the RePaint baseline's unconditional DDPM."""

    steps: int = 50
    jumps: int = 2
    widths: tuple[int, int, int] = (16, 32, 64)
    margin: int = 3
    crop: int = 16
    train_steps: int = 800
    batch_size: int = 32
    lr: float = 2e-3
    seed: int = 0
    #: bf16 autocast: None (default) where the CPU computes bf16 natively, else float32
    bf16: bool | None = None


class RePaint:
    """RePaint-style DDPM inpainting (an ``Editor``) with a :class:`UNet3D` x0-predictor.

    Forward process ``x_t = √ᾱ_t x0 + √(1 − ᾱ_t) ε`` (cosine ᾱ); the network sees ``x_t`` and a
    zero mask channel (unconditional). One step t → s of RePaint: known voxels
    ``√ᾱ_s x + √(1 − ᾱ_s) ε``; unknown voxels from the DDPM posterior
    ``q(x_s | x_t, x̂0)`` with mean ``(√ᾱ_s β/(1 − ᾱ_t)) x̂0 + (√α (1 − ᾱ_s)/(1 − ᾱ_t)) x_t``,
    ``α = ᾱ_t/ᾱ_s``, ``β = 1 − α``, variance ``β (1 − ᾱ_s)/(1 − ᾱ_t)``; then, ``jumps − 1``
    times, ``x_t = √α x_s + √β ε`` and the step is redone. The output keeps the input outside the
    mask (bit-identical). Runs on the same crops as the bridge.
    """

    name = "repaint"

    def __init__(self, unet: UNet3D | None = None, config: DDPMConfig = DDPMConfig()) -> None:
        self.config = config
        self.unet = unet if unet is not None else UNet3D(config.widths)
        self.unet.eval()
        self.record: dict[str, Any] = {}

    @classmethod
    def train(
        cls,
        crops: np.ndarray,
        config: DDPMConfig = DDPMConfig(),
        progress: Progress = None,
    ) -> RePaint:
        """Fit the unconditional x0-predictor with an L1 loss on all voxels, t ~ U(0, 1).

        ``progress``: one line on stderr, then a bar when stderr is a terminal (``True``
        always, ``False`` neither; a callable gets the steps done).
        """
        with training_progress(
            progress,
            total=config.train_steps,
            desc="RePaint",
            message=f"training RePaint's UNet on {len(crops)} crops ({config.train_steps} steps)",
        ) as step:
            return cls._train(crops, config, step)

    @classmethod
    def _train(
        cls, crops: np.ndarray, config: DDPMConfig, progress: Callable[[int], None] | None
    ) -> RePaint:
        """:meth:`train` with a per-step callback."""
        crops = np.asarray(crops, np.float32)
        if crops.ndim != 4 or any(s % 4 for s in crops.shape[1:]):
            raise ValueError(
                f"crops must be (n, D, H, W) with sides multiple of 4, got {crops.shape}"
            )
        check_steps(config.train_steps, "config.train_steps")
        torch.manual_seed(config.seed)
        rng = np.random.default_rng([config.seed, 9])
        data = torch.from_numpy(crops)[:, None]
        net = UNet3D(config.widths)
        opt = torch.optim.Adam(net.parameters(), lr=config.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, config.train_steps)
        zero = torch.zeros(config.batch_size, 1, *crops.shape[1:])
        bf16 = resolve_bf16(config.bf16, "DDPMConfig")
        losses = []
        t0 = time.perf_counter()
        net.train()
        for _ in range(config.train_steps):
            x0 = data[torch.from_numpy(rng.integers(0, len(data), config.batch_size))]
            dims = [d for d in (2, 3, 4) if rng.random() < 0.5]
            if dims:
                x0 = torch.flip(x0, dims)
            t = torch.rand(config.batch_size)
            ab = torch.from_numpy(alpha_bar(t.numpy())).float()[:, None, None, None, None]
            xt = ab.sqrt() * x0 + (1 - ab).sqrt() * torch.randn_like(x0)
            with autocast(bf16):
                pred = net(xt, zero, t)
            loss = (pred.float() - x0).abs().mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
            if progress is not None:
                progress(1)
        net.eval()
        out = cls(net, config)
        k = max(1, len(losses) // 10)
        out.record = {
            "train": asdict(config),
            "seconds": time.perf_counter() - t0,
            "loss_first": float(np.mean(losses[:k])),
            "loss_last": float(np.mean(losses[-k:])),
        }
        return out

    @classmethod
    def pretrained(
        cls,
        config: DDPMConfig = DDPMConfig(),
        n_crops: int = 4000,
        *,
        cache: bool = True,
        progress: Progress = None,
    ) -> RePaint:
        """Trained on ``nodule_free_crops(n_crops, 16, config.seed)`` (the bridge's data), keyed
        by the hash of the config. Looked up in the cache (``$SHNAP_CACHE``), then among the
        weights shipped with the package (the default's UNet, float16, trained in float32; they
        also serve an auto-precision config on a CPU with native bf16); only a key found in
        neither is trained (and cached). Training prints one line on stderr first, then a bar
        when stderr is a terminal; an unreadable cache file is retrained and overwritten, with
        a warning naming it."""
        from shnap._cnn import cache_dir, read_blob, warn_retrain
        from shnap._shipped import load_shipped
        from shnap._world import nodule_free_crops

        key = f"{weights_key(config)}-{n_crops}"
        path = cache_dir() / f"repaint-{key}.pt"
        if cache and path.is_file():
            try:
                blob = read_blob(path, ("state", "record"), "RePaint cache")
                unet = UNet3D(config.widths)
                unet.load_state_dict(blob["state"])
            except (ValueError, RuntimeError) as exc:
                warn_retrain(path, exc)
            else:
                out = cls(unet, config)
                out.record = {**blob["record"], "cached": True}
                return out
        shipped = load_shipped("repaint", *(f"{k}-{n_crops}" for k in shipped_keys(config)))
        if shipped is not None:
            unet = UNet3D(config.widths)
            unet.load_state_dict(shipped[0]["unet"])
            out = cls(unet, config)
            out.record = {**shipped[1]["record"], "cached": True, "shipped": True}
            return out
        where = f"cached in {path}" if cache else "not cached"
        with training_progress(
            progress,
            total=config.train_steps,
            desc="RePaint",
            message=f"training RePaint's UNet ({n_crops} crops, {config.train_steps} steps) on "
            f"first use; {where}",
        ) as step:
            crops = nodule_free_crops(n_crops, size=16, seed=config.seed)
            out = cls._train(crops, config, step)
        out.record["cached"] = False
        if cache:
            torch.save({"state": out.unet.state_dict(), "record": out.record}, path)
        return out

    def remove(self, x: np.ndarray, mask: np.ndarray, seed: int = 0) -> np.ndarray:
        """Inpaint ``mask`` from pure noise; voxels outside it are returned bit-identical."""
        x = check_volume(x, "x")
        mask = check_mask(mask, x, "mask")
        return self.remove_batch(x[None], mask[None], [seed])[0]

    def remove_batch(self, xs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """:meth:`remove` for a batch ``(B, D, H, W)`` (crops of one shape run together; a crop
        job repeated in the batch, same crop, mask, seed and corner, is sampled once)."""
        xs, ms = check_batch(xs, masks, seeds)
        out = xs.copy()
        jobs, places, which, index = [], [], [], {}
        for b, (x, m, seed) in enumerate(zip(xs, ms, seeds)):
            for comp, (corner, size) in crop_boxes(m, self.config.margin, self.config.crop):
                xc = extract(x, corner, size, "edge")
                mc = extract(comp, corner, size, "constant")
                key = crop_job_key(xc, mc, int(seed), corner, size)
                if key not in index:
                    index[key] = len(jobs)
                    jobs.append((xc, mc, int(seed), corner, xc))
                which.append(index[key])
                places.append((b, mc, corner))
        results = self._run(jobs, 1.0)
        for (b, mc, corner), j in zip(places, which):
            paste(out[b], results[j], mc, corner)
        return out

    def insert(
        self, x: np.ndarray, nodule: Any, centre: Sequence[int], tau: float = 0.3, seed: int = 0
    ) -> np.ndarray:
        """SDEdit-style: paste, noise the dilated template mask to τ, RePaint back to 0."""
        x = check_volume(x, "x")
        tau = check_tau(tau)
        pasted, _, edit = paste_template(x, nodule, centre)
        out = x.copy()
        jobs, places = [], []
        for comp, (corner, size) in crop_boxes(edit, self.config.margin, self.config.crop):
            xc = extract(x, corner, size, "edge")
            pc = extract(pasted, corner, size, "edge")
            mc = extract(comp, corner, size, "constant")
            jobs.append((xc, mc, int(seed), corner, pc))
            places.append((mc, corner))
        for (mc, corner), res in zip(places, self._run(jobs, tau)):
            paste(out, res, mc, corner)
        return out

    @torch.inference_mode()
    def _run(self, jobs: list[tuple], t0: float) -> list[np.ndarray]:
        """RePaint from ``t0`` to 0 for jobs ``(crop, mask, seed, corner, start)``."""
        results: list[np.ndarray | None] = [None] * len(jobs)
        by_shape: dict[tuple, list[int]] = {}
        for i, j in enumerate(jobs):
            by_shape.setdefault(j[0].shape, []).append(i)
        for ids in by_shape.values():
            for a in range(0, len(ids), 96):
                part = [jobs[i] for i in ids[a : a + 96]]
                for i, res in zip(ids[a : a + 96], self._sample(part, t0)):
                    results[i] = res
        return results  # type: ignore[return-value]

    def _sample(self, part: list[tuple], t0: float) -> list[np.ndarray]:
        cfg = self.config
        bf16 = resolve_bf16(cfg.bf16, "DDPMConfig")
        n = max(1, round(cfg.steps * t0))
        draws = 1 + 3 * n * cfg.jumps
        noise = torch.from_numpy(
            np.stack(
                [
                    np.random.default_rng(
                        [seed & 0xFFFFFFFF, 3, *(c + 1000 for c in corner)]
                    ).standard_normal((draws, *xc.shape), dtype=np.float32)
                    for xc, _, seed, corner, _ in part
                ],
                axis=1,
            )
        )[:, :, None]
        known = torch.from_numpy(np.stack([j[0] for j in part]))[:, None]
        m = torch.from_numpy(np.stack([j[1] for j in part]))[:, None]
        base = torch.from_numpy(np.stack([j[4] for j in part]))[:, None]
        zero = torch.zeros_like(known)
        ab0 = float(alpha_bar(t0))
        x = math.sqrt(ab0) * base + math.sqrt(1 - ab0) * noise[0]
        d = 1
        for k in range(n):
            t = t0 * (1 - k / n)
            s = t0 * (1 - (k + 1) / n)
            at, as_ = float(alpha_bar(t)), float(alpha_bar(s))
            alpha = at / as_
            beta = 1 - alpha
            for r in range(cfg.jumps):
                with autocast(bf16):
                    x0h = self.unet(x, zero, torch.full((len(part),), t)).float()
                mean = (math.sqrt(as_) * beta / (1 - at)) * x0h + (
                    math.sqrt(alpha) * (1 - as_) / (1 - at)
                ) * x
                var = beta * (1 - as_) / (1 - at)
                unknown = mean + math.sqrt(var) * noise[d]
                kn = math.sqrt(as_) * known + math.sqrt(1 - as_) * noise[d + 1]
                d += 3
                xs = torch.where(m, unknown, kn)
                if r == cfg.jumps - 1 or k == n - 1:
                    break
                x = math.sqrt(alpha) * xs + math.sqrt(beta) * noise[d - 1]  # the third draw
            x = xs
        xn = x[:, 0].numpy()
        return [np.where(j[1], xn[r], j[0]).astype(np.float32) for r, j in enumerate(part)]
