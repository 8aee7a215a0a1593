"""The generative editor: a 3D Brownian diffusion bridge that inpaints inside a mask only.

The measurement is everything outside the mask, taken noiselessly (System-embedded Diffusion
Bridge, SDB, NeurIPS 2025; used as the editor of S(H)NAP, arXiv 2602.02560). Inside the mask a
Brownian bridge runs from the clean volume x0 (t = 0) to a degraded x1 (t = 1): the mask filled
with the mean of its 1-voxel shell plus white noise,

    x1 = shell_mean(x0, M) + σ1 ε1,
    x_t = (1 − t) x0 + t x1 + σ √(t (1 − t)) ε       inside M;  x_t = x0 outside M.

A :class:`~shnap._unet.UNet3D` predicts x0 from ``(x_t, M, t)``, trained with an L1 loss on the
masked voxels of nodule-free 16³ crops. Sampling evaluates the network at ``steps`` times from
t = 1 down to ``t_end`` (0.001), spaced denser near 0 (:func:`sampling_times`:
``t_k = (1 − k/(n−1)) t0^{1/ρ} + k/(n−1) t_end^{1/ρ})^ρ``, ρ = 2) with steps t → s of the
bridge posterior given the predicted x̂0,

    x_s = x̂0 + (s / t)(x_t − x̂0) + σ √(s (t − s) / t) ε,

which is the exact law of x_s given x_t and x0 for this bridge (whatever the law of x1), and
returns x̂0 at ``t_end``. (Equal steps returned x̂0 at t = 0.02, where even an optimal denoiser
keeps only ×0.83 of the texture's Laplacian std; at 0.001 it keeps ×0.97.) After every step the
voxels outside M are reset to the input, so an edit is bit-identical to its input outside the
mask by construction (spec item 2).

Insertion (SNAP) pastes a nodule template at a centre, draws x_τ from the bridge marginal on the
template mask dilated by one voxel, and runs the same sampler from τ to 0.

The network runs on crops: each 26-connected mask component gets its own box (bounding box plus
``margin``, at least ``crop`` voxels, a multiple of 4), boxes of one shape are batched, and
identical jobs (same crop, mask and seed) are computed once. The noise of a job is drawn from a
generator seeded by ``(seed, box corner)``, so it does not depend on the batch it comes in.

One network per edit direction: removals run an unconditioned UNet trained on the masks it
edits (:func:`~shnap._editdata.removal_masks`: nodule masks dilated by one voxel over the
nodule-free twin, vessel and chest-wall voxels inside) and on a share of random metaballs that
avoid bright voxels; insertions run a UNet conditioned on the object to insert, trained on real
removal and insertion pairs (:func:`~shnap._editdata.edit_pairs`) and random masks. The
CHANGELOG records the recipes tried before this one and what each measured.

Crops live in :mod:`shnap._crops`, the training data in :mod:`shnap._editdata`, the configs in
:mod:`shnap._bridge_config` and the weights' keys in :mod:`shnap._weights`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from icml26_shared.checks import SeedLike, int_from_seed
from shnap._bridge_config import BridgeConfig, TrainConfig
from shnap._checks import check_batch, check_mask, check_steps, check_tau, check_volume
from shnap._crops import (
    crop_boxes,
    crop_job_key,
    extract,
    paste,
    paste_template,
    shell_mean,
)
from shnap._editdata import EditPairs, edit_pairs, random_metaball_mask, removal_masks
from shnap._precision import autocast, resolve_bf16
from shnap._progress import Progress, training_progress
from shnap._unet import UNet3D
from shnap._weights import shipped_keys, weights_key

__all__ = [
    "Bridge",
    "BridgeConfig",
    "EditPairs",
    "FitState",
    "TrainConfig",
    "bridge_marginal",
    "bridge_step",
    "crop_boxes",
    "crop_job_key",
    "edit_pairs",
    "random_metaball_mask",
    "removal_masks",
    "sampling_times",
    "shell_mean",
]


# --------------------------------------------------------------------------------------------
# the bridge's closed forms
def bridge_marginal(x0: Any, x1: Any, t: Any, sigma: float, eps: Any) -> Any:
    """``x_t = (1 − t) x0 + t x1 + σ √(t (1 − t)) ε`` (numpy or torch, broadcasting ``t``)."""
    root = (t * (1 - t)) ** 0.5
    return (1 - t) * x0 + t * x1 + sigma * root * eps


def bridge_step(x_t: Any, x0_hat: Any, t: Any, s: Any, sigma: float, eps: Any) -> Any:
    """One posterior step t → s < t: ``x̂0 + (s/t)(x_t − x̂0) + σ √(s (t − s) / t) ε``.

    For the bridge above this is the exact law of ``x_s`` given ``x_t`` and ``x0 = x̂0``:
    mean ``x0 + (s/t)(x_t − x0)``, variance ``σ² s (t − s) / t``.
    """
    return x0_hat + (s / t) * (x_t - x0_hat) + sigma * (s * (t - s) / t) ** 0.5 * eps


def sampling_times(t0: float, steps: int, t_end: float = 1e-3, rho: float = 2.0) -> np.ndarray:
    """The ``steps`` times at which the sampler calls the network, from ``t0`` down to
    ``t_end``, evenly spaced in ``t^(1/ρ)`` (denser near 0 for ρ > 1); one step: ``[t0]``.

    >>> np.round(sampling_times(1.0, 4), 4)
    array([1.    , 0.4586, 0.1256, 0.001 ])
    """
    steps = check_steps(steps, "steps")
    if not 0 < t_end < t0 <= 1:
        raise ValueError(f"need 0 < t_end < t0 <= 1, got t_end={t_end}, t0={t0}")
    if not rho >= 1:
        raise ValueError(f"rho must be >= 1, got {rho}")
    if steps == 1:
        return np.array([float(t0)])
    u = np.linspace(0.0, 1.0, steps)
    return ((1 - u) * t0 ** (1 / rho) + u * t_end ** (1 / rho)) ** rho


# --------------------------------------------------------------------------------------------
@dataclass
class _Job:
    x: np.ndarray  # crop of the input
    m: np.ndarray  # crop of the mask (bool)
    noise: np.ndarray  # (n_noise, *shape) float32
    start: np.ndarray  # initial state x_{t0}
    prior: np.ndarray | None = None  # insertion conditioning: the pasted object (0 elsewhere)
    prior_mask: np.ndarray | None = None  # where it is (bool)


#: the default configs (the shipped weights' ones)
DEFAULT_TRAIN, DEFAULT_CONFIG = TrainConfig(), BridgeConfig()


@dataclass
class FitState:
    """One network's training after ``step`` steps: what a later segment resumes from
    (:meth:`Bridge.fit_network`), bit-identical to a training without the break. Tensors are
    held as numpy arrays (copies), so a state pickles to the same bytes every time (a job's
    arguments are digested) and resuming from it never changes it."""

    step: int
    net: dict[str, Any]
    opt: dict[str, Any]
    sched: dict[str, Any]
    rng: dict[str, Any]
    torch_rng: np.ndarray
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _to_numpy(obj: Any) -> Any:
    """``obj`` with every tensor replaced by a numpy copy (dicts, lists, tuples walked)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().numpy().copy()
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_to_numpy(v) for v in obj)
    return obj


def _to_torch(obj: Any) -> Any:
    """The inverse of :func:`_to_numpy`: every numpy array back to a tensor (a copy)."""
    if isinstance(obj, np.ndarray):
        return torch.tensor(obj)
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_to_torch(v) for v in obj)
    return obj


def _torch_shell_mean(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """Per-item shell mean for a (B, 1, ...) batch (26-neighbour dilation by max pooling)."""
    dil = F.max_pool3d(m, 3, stride=1, padding=1)
    shell = dil - m
    return (x * shell).sum(dim=(1, 2, 3, 4)) / shell.sum(dim=(1, 2, 3, 4)).clamp_min(1.0)


def _nodule_like_masks(
    x0: torch.Tensor,
    masks: torch.Tensor,
    flat: torch.Tensor,
    level: float,
    rng: np.random.Generator,
    fallback: torch.Tensor,
) -> torch.Tensor:
    """Per crop, a random pool mask that avoids voxels above ``level`` (else the fallback
    mask): masks where a dilated nodule could sit (its shell may touch vessels or the wall)."""
    bright = (x0 > level).flatten(1).float()
    fits = (bright @ flat.T) == 0  # (B, P)
    out = fallback.clone()
    for b in range(len(x0)):
        ok = torch.nonzero(fits[b]).flatten()
        if len(ok):
            out[b] = masks[int(ok[rng.integers(len(ok))])]
    return out


def _check_training_data(
    crops: np.ndarray, pairs: EditPairs | None, removal: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """The training crops as float32, the pairs and removal masks checked against them."""
    crops = np.asarray(crops, np.float32)
    if crops.ndim != 4 or min(crops.shape[1:]) < 8:
        raise ValueError(f"crops must be (n, D, H, W) with sides >= 8, got {crops.shape}")
    if any(s % 4 for s in crops.shape[1:]):
        raise ValueError(f"crops must have sides that are multiples of 4, got {crops.shape[1:]}")
    if pairs is not None and pairs.x.shape[1:] != crops.shape[1:]:
        raise ValueError(
            f"pairs must have crops of shape {crops.shape[1:]}, got {pairs.x.shape[1:]}"
        )
    if removal is not None and (
        len(removal) != 2
        or removal[0].shape[1:] != crops.shape[1:]
        or removal[1].shape != removal[0].shape
    ):
        raise ValueError(
            f"removal must be (crops, masks) of shape (n, {crops.shape[1:]}), "
            f"got {[np.shape(r) for r in removal]}"
        )
    return crops


class Bridge:
    """The diffusion-bridge editor (an ``Editor``): ``remove``, ``remove_batch``, ``insert``.

    Args:
        unet: a trained :class:`UNet3D` (predicts x0); a fresh one when omitted.
        config: the bridge's :class:`BridgeConfig`.
        insert_unet: the network :meth:`insert` runs (conditioned on the object to insert);
            ``unet`` when omitted.

    Build it with :meth:`train`, :meth:`load` or :meth:`pretrained` (cached training on the
    synthetic world's nodule-free crops).
    """

    name = "bridge"

    def __init__(
        self,
        unet: UNet3D | None = None,
        config: BridgeConfig = DEFAULT_CONFIG,
        insert_unet: UNet3D | None = None,
    ) -> None:
        self.config = config
        self.unet = unet if unet is not None else UNet3D(config.widths, cond=True)
        self.unet.eval()
        self.insert_unet = insert_unet
        if insert_unet is not None:
            insert_unet.eval()
        self.record: dict[str, Any] = {}

    # -- training -----------------------------------------------------------------------------
    @classmethod
    def train(
        cls,
        crops: np.ndarray,
        train: TrainConfig = DEFAULT_TRAIN,
        config: BridgeConfig = DEFAULT_CONFIG,
        progress: Progress = None,
        pairs: EditPairs | None = None,
        removal: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Bridge:
        """Fit the UNets on ``crops`` (n, D, H, W) windowed, ``pairs`` (:func:`edit_pairs`)
        and ``removal`` (``(crops, masks)`` of :func:`removal_masks`) when given.

        Insertion network (conditioned; the only network when ``train.split`` is False): each
        step draws a batch with a share ``train.p_removal`` of real-object removal pairs, a
        share ``train.p_insertion`` of insertion pairs, the rest nodule-free crops with a
        random (nodule-like) metaball mask. Removal network (unconditioned, seed + 1): with
        ``removal`` given, a share ``1 − train.p_metaball`` of its batch are the masks it
        edits over their object-free crops, the rest random metaballs over ``crops`` (bright
        voxels allowed); without it, random metaballs only (code version 5). Every batch gets
        one random flip and axis permutation, ``t ~ U(0, 1)`` per item. Removals: x_t is the
        bridge marginal from the target x0 to x1 (shell mean of the input + σ1 noise).
        Insertions: the marginal from the input with the prior pasted on its mask (what
        :meth:`insert` starts from), the prior channels set. The loss is the mean absolute
        (``train.loss="l1"``) or squared (``"l2"``) error of x̂0 on the masked voxels. Adam
        with a cosine-decayed learning rate.

        ``progress``: one line on stderr, then a bar when stderr is a terminal (``True``
        always, ``False`` neither; a callable gets the steps done).
        """
        with training_progress(
            progress,
            total=train.steps * (2 if train.split else 1),
            desc="bridge",
            message=f"training the bridge on {len(crops)} crops ({train.steps} steps per network)",
        ) as step:
            return cls._train(crops, train, config, step, pairs, removal)

    @classmethod
    def _train(
        cls,
        crops: np.ndarray,
        train: TrainConfig,
        config: BridgeConfig,
        progress: Callable[[int], None] | None,
        pairs: EditPairs | None,
        removal: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Bridge:
        """:meth:`train` with a per-step callback."""
        crops = _check_training_data(crops, pairs, removal)
        check_steps(train.steps, "train.steps")
        t0 = time.perf_counter()
        nets = range(2 if train.split else 1)
        fitted = [
            cls.fit_network(i, crops, train, config, pairs, removal, progress=progress)
            for i in nets
        ]
        states = [st for _, st in fitted]
        seconds = time.perf_counter() - t0
        return cls.from_states(
            states, train, config, seconds, pairs, removal, nets=[n for n, _ in fitted]
        )

    @classmethod
    def from_states(
        cls,
        states: Sequence[FitState],
        train: TrainConfig,
        config: BridgeConfig,
        seconds: float,
        pairs: EditPairs | None = None,
        removal: tuple[np.ndarray, np.ndarray] | None = None,
        nets: Sequence[UNet3D] | None = None,
    ) -> Bridge:
        """The bridge of finished trainings (:meth:`fit_network` ``0``, and ``1`` when
        ``train.split``) with its training record; ``nets``: the trained networks (else
        built from the states)."""
        if nets is None:
            nets = []
            for i, st in enumerate(states):
                net = UNet3D(config.widths, cond=i == 0)
                net.load_state_dict(_to_torch(st.net))
                nets.append(net)
        if train.split:
            (insert_net, ins_losses), (net, losses) = zip(nets, (s.losses for s in states))
        else:
            insert_net, ins_losses, net, losses = None, [], nets[0], states[0].losses
        bridge = cls(net, config, insert_unet=insert_net)
        tail = losses[-max(1, len(losses) // 10) :]
        bridge.record = {
            "train": asdict(train),
            "seconds": seconds,
            "loss_first": float(np.mean(losses[: max(1, len(losses) // 10)])),
            "loss_last": float(np.mean(tail)),
            "insert_loss_last": float(np.mean(ins_losses[-max(1, len(ins_losses) // 10) :]))
            if ins_losses
            else None,
            "threads": torch.get_num_threads(),
            "pairs": 0 if pairs is None else len(pairs),
            "removal_masks": 0 if removal is None else len(removal[0]),
        }
        return bridge

    @classmethod
    def fit_network(
        cls,
        which: int,
        crops: np.ndarray,
        train: TrainConfig,
        config: BridgeConfig,
        pairs: EditPairs | None,
        removal: tuple[np.ndarray, np.ndarray] | None = None,
        *,
        resume: FitState | None = None,
        until: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[UNet3D, FitState]:
        """Train network ``which`` of :meth:`train` (0: the conditioned one, the insertion
        network when ``train.split``; 1: the removal network) from ``resume`` (None: from
        scratch) up to step ``until`` (None: ``train.steps``); returns the network and its
        state, from which a later call continues exactly where this one stopped."""
        if which not in ((0, 1) if train.split else (0,)):
            raise ValueError(f"which must be 0 or 1 (1 only with train.split), got {which!r}")
        if which == 0:
            args = (pairs, train.p_removal, train.p_insertion, True, 0)
            return cls._fit(crops, train, config, progress, *args, resume=resume, until=until)
        return cls._fit(
            crops, train, config, progress, pairs, 0.0, 0.0, False, 1,
            removal=removal, resume=resume, until=until,
        )  # fmt: skip

    @staticmethod
    def _fit(
        crops: np.ndarray,
        train: TrainConfig,
        config: BridgeConfig,
        progress: Callable[[int], None] | None,
        pairs: EditPairs | None,
        p_removal: float,
        p_insertion: float,
        cond: bool,
        seed_offset: int,
        *,
        removal: tuple[np.ndarray, np.ndarray] | None = None,
        resume: FitState | None = None,
        until: int | None = None,
    ) -> tuple[UNet3D, FitState]:
        """One network of :meth:`train` (validated input) from ``resume`` to step ``until``:
        the UNet and its state (per-step losses included)."""
        t0 = time.perf_counter()
        seed = train.seed + seed_offset
        bf16 = resolve_bf16(config.bf16, "BridgeConfig")
        torch.manual_seed(seed)
        rng = np.random.default_rng([seed, 5])
        pool = np.stack(
            [
                random_metaball_mask(crops.shape[1:], rng, train.radius)
                for _ in range(min(512, train.steps * train.batch_size))
            ]
        )
        data = torch.from_numpy(crops)[:, None]
        masks = torch.from_numpy(pool)[:, None].float()
        flat = masks.flatten(1)
        bright_level = float((np.clip((train.vessel_hu + 1000) / 1400, 0, 1)) * 2 - 1)
        n_rem = n_ins = n_dep = 0
        if pairs is not None and len(pairs):
            ins = torch.from_numpy(pairs.insertion)
            rem_idx = torch.nonzero(~ins).flatten().numpy()
            ins_idx = torch.nonzero(ins).flatten().numpy()
            p_t = {
                k: torch.from_numpy(np.asarray(v, np.float32))[:, None]
                for k, v in (
                    ("x", pairs.x),
                    ("x0", pairs.x0),
                    ("m", pairs.mask),
                    ("p", pairs.prior),
                    ("pm", pairs.prior_mask),
                )
            }
            n_rem = round(train.batch_size * p_removal) if len(rem_idx) else 0
            n_ins = round(train.batch_size * p_insertion) if len(ins_idx) else 0
        if removal is not None and len(removal[0]):
            dep_x = torch.from_numpy(np.asarray(removal[0], np.float32))[:, None]
            dep_m = torch.from_numpy(np.asarray(removal[1], np.float32))[:, None]
            n_dep = round(train.batch_size * (1 - train.p_metaball))
        n_rand = train.batch_size - n_rem - n_ins - n_dep
        if n_rand < 0:
            raise ValueError("train.p_removal + train.p_insertion must be <= 1")
        # random metaballs avoid bright voxels (nodule-like places); the removal network's
        # deployment masks hold vessel and wall voxels (code version 6 let its metaballs cover
        # them too: ``metaball_bright``)
        filter_bright = train.nodule_like and not (n_dep and train.metaball_bright)
        net = UNet3D(config.widths, cond=cond)
        opt = torch.optim.Adam(net.parameters(), lr=train.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, train.steps)
        losses: list[float] = []
        start_step, seconds = 0, 0.0
        if resume is not None:
            net.load_state_dict(_to_torch(resume.net))
            opt.load_state_dict(_to_torch(resume.opt))
            sched.load_state_dict(copy.deepcopy(resume.sched))
            rng.bit_generator.state = resume.rng
            torch.set_rng_state(_to_torch(resume.torch_rng))
            losses, start_step, seconds = list(resume.losses), resume.step, resume.seconds
            if progress is not None and start_step:
                progress(start_step)
        stop = train.steps if until is None else min(int(until), train.steps)
        net.train()
        for _ in range(start_step, stop):
            parts = []
            if n_rand:
                idx = torch.from_numpy(rng.integers(0, len(data), n_rand))
                midx = torch.from_numpy(rng.integers(0, len(masks), n_rand))
                x0, m = data[idx], masks[midx]
                m = torch.flip(m, [d for d in (2, 3, 4) if rng.random() < 0.5]).contiguous()
                if filter_bright:
                    m = _nodule_like_masks(x0, masks, flat, bright_level, rng, m)
                z = torch.zeros_like(x0)
                parts.append((x0, x0, m, z, z, torch.zeros(n_rand, dtype=torch.bool)))
            if n_dep:
                idx = torch.from_numpy(rng.integers(0, len(dep_x), n_dep))
                x0, m = dep_x[idx], dep_m[idx]
                z = torch.zeros_like(x0)
                parts.append((x0, x0, m, z, z, torch.zeros(n_dep, dtype=torch.bool)))
            for n_part, pool_idx, flag in (
                (n_rem, rem_idx if n_rem else None, False),
                (n_ins, ins_idx if n_ins else None, True),
            ):
                if n_part:
                    sel = torch.from_numpy(pool_idx[rng.integers(0, len(pool_idx), n_part)])
                    parts.append(
                        (
                            p_t["x"][sel],
                            p_t["x0"][sel],
                            p_t["m"][sel],
                            p_t["p"][sel],
                            p_t["pm"][sel],
                            torch.full((n_part,), flag),
                        )
                    )
            xin, x0, m, prior, pm = (torch.cat([p[j] for p in parts]) for j in range(5))
            is_ins = torch.cat([p[5] for p in parts])
            stack = torch.cat([xin, x0, m, prior, pm], 1)
            dims = [d for d in (2, 3, 4) if rng.random() < 0.5]
            if dims:
                stack = torch.flip(stack, dims)
            perm = [0, 1, *(2 + rng.permutation(3))]
            stack = stack.permute(*perm).contiguous()
            xin, x0, m, prior, pm = stack.split(1, dim=1)
            b = len(xin)
            t = torch.rand(b)
            tt = t[:, None, None, None, None]
            x1 = _torch_shell_mean(xin, m)[
                :, None, None, None, None
            ] + config.sigma1 * torch.randn_like(x0)
            start = torch.where(
                is_ins[:, None, None, None, None], torch.where(pm > 0, prior, xin), x0
            )
            xt = bridge_marginal(start, x1, tt, config.sigma, torch.randn_like(x0))
            xt = torch.where(m > 0, xt, xin)
            with autocast(bf16):
                pred = net(xt, m, t, prior, pm)
            err = pred.float() - x0
            loss = ((err.abs() if train.loss == "l1" else err**2) * m).sum() / m.sum()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
            if progress is not None:
                progress(1)
        state = FitState(
            max(start_step, stop),
            _to_numpy(net.state_dict()),
            _to_numpy(opt.state_dict()),
            copy.deepcopy(sched.state_dict()),
            rng.bit_generator.state,
            _to_numpy(torch.get_rng_state()),
            losses,
            seconds + time.perf_counter() - t0,
        )
        net.eval()
        return net, state

    @staticmethod
    def training_data(
        train: TrainConfig,
    ) -> tuple[np.ndarray, EditPairs | None, tuple[np.ndarray, np.ndarray] | None]:
        """The data :meth:`pretrained` trains on: ``nodule_free_crops(train.n_crops, 16,
        train.seed + 7)``, ``edit_pairs(train.n_pair_phantoms, 16, train.seed)`` (None for 0)
        and, for the deployment mask source, ``removal_masks(train.n_mask_phantoms, 16,
        train.seed)``."""
        from shnap._world import nodule_free_crops

        # seed + 7: phantoms apart from those of the realism study (seed 0) and the audits
        crops = nodule_free_crops(train.n_crops, size=16, seed=train.seed + 7)
        n_pairs = train.n_pair_phantoms
        pairs = edit_pairs(n_pairs, 16, train.seed) if n_pairs else None
        removal = None
        if train.split and train.removal_mask_source == "deployment" and train.n_mask_phantoms:
            removal = removal_masks(train.n_mask_phantoms, 16, train.seed)
        return crops, pairs, removal

    @classmethod
    def pretrained(
        cls,
        train: TrainConfig = DEFAULT_TRAIN,
        config: BridgeConfig = DEFAULT_CONFIG,
        *,
        cache: bool = True,
        progress: Progress = None,
    ) -> Bridge:
        """The bridge trained on :meth:`training_data`, keyed by the hash of both configs
        (sampler settings aside) and the code version.

        Looked up first in the cache, ``$SHNAP_CACHE`` (default ``~/.cache/shnap``), then among
        the weights shipped with the package (the defaults' networks, float16, trained in
        float32; they also serve an auto-precision config on a CPU with native bf16, see
        :func:`shipped_keys`); only a key found in neither is trained (and cached). Training
        prints one line on stderr first, then shows a progress bar when stderr is a terminal
        (``progress=True`` always, ``False`` neither). A cache file that cannot be read is
        retrained and overwritten, with a warning naming it.
        """
        from shnap._cnn import cache_dir, warn_retrain
        from shnap._shipped import load_shipped

        key = weights_key(train, config)
        path = cache_dir() / f"bridge-{key}.pt"
        if cache and path.is_file():
            try:
                bridge = cls.load(path)
            except ValueError as exc:
                warn_retrain(path, exc)
            else:
                bridge.record["cached"] = True
                return bridge
        shipped = load_shipped("bridge", *shipped_keys(train, config))
        if shipped is not None:
            states, meta = shipped
            unet = UNet3D(config.widths, cond=bool(meta["cond"]))
            unet.load_state_dict(states["unet"])
            insert_unet = None
            if "insert_unet" in states:
                insert_unet = UNet3D(config.widths, cond=True)
                insert_unet.load_state_dict(states["insert_unet"])
            bridge = cls(unet, config, insert_unet=insert_unet)
            bridge.record = {**meta["record"], "cached": True, "shipped": True}
            return bridge
        where = f"cached in {path}" if cache else "not cached"
        with training_progress(
            progress,
            total=train.steps * (2 if train.split else 1),
            desc="bridge",
            message=f"training the bridge ({train.n_crops} crops, {train.n_pair_phantoms} "
            f"phantom pairs, {train.steps} steps per network) on first use; {where}",
        ) as step:
            t0 = time.perf_counter()
            crops, pairs, removal = cls.training_data(train)
            data_seconds = time.perf_counter() - t0
            bridge = cls._train(crops, train, config, step, pairs, removal)
        bridge.record["data_seconds"] = data_seconds
        bridge.record["cached"] = False
        if cache:
            bridge.save(path)
        return bridge

    def save(self, path: str | Path) -> None:
        """Write the weights, the config and the training record to ``path`` (torch format)."""
        cfg = asdict(self.config)
        blob = {
            "state": self.unet.state_dict(),
            "config": cfg,
            "record": self.record,
            "cond": bool(getattr(self.unet, "cond", False)),
        }
        if self.insert_unet is not None:
            blob["insert_state"] = self.insert_unet.state_dict()
            blob["insert_cond"] = bool(getattr(self.insert_unet, "cond", False))
        torch.save(blob, path)

    @classmethod
    def load(cls, path: str | Path) -> Bridge:
        """Read a bridge written by :meth:`save`; a file that is missing, unreadable or not a
        saved bridge raises an error naming it and what is wrong."""
        from shnap._cnn import read_blob

        blob = read_blob(path, ("state", "config"), "bridge")
        try:
            cfg = dict(blob["config"])
            cfg["widths"] = tuple(cfg["widths"])
            config = BridgeConfig(**cfg)
            unet = UNet3D(config.widths, cond=bool(blob.get("cond", False)))
            unet.load_state_dict(blob["state"])
            insert_unet = None
            if "insert_state" in blob:
                insert_unet = UNet3D(config.widths, cond=bool(blob.get("insert_cond", True)))
                insert_unet.load_state_dict(blob["insert_state"])
        except (TypeError, KeyError, ValueError, RuntimeError) as exc:
            raise ValueError(
                f"bridge file {str(path)!r} does not match this version's bridge "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        bridge = cls(unet, config, insert_unet=insert_unet)
        bridge.record = dict(blob.get("record", {}))
        return bridge

    # -- editing ------------------------------------------------------------------------------
    def remove(
        self, x: np.ndarray, mask: np.ndarray, seed: SeedLike = 0, steps: int | None = None
    ) -> np.ndarray:
        """Inpaint ``mask`` of volume ``x`` (windowed, (D, H, W)) from t = 1; voxels outside
        ``mask`` are returned bit-identical."""
        seed = int_from_seed(seed, "seed", bits=63)
        x = check_volume(x, "x")
        mask = check_mask(mask, x, "mask")
        return self.remove_batch(x[None], mask[None], [seed], steps=steps)[0]

    def remove_batch(
        self,
        xs: np.ndarray,
        masks: np.ndarray,
        seeds: Sequence[int],
        steps: int | None = None,
    ) -> np.ndarray:
        """:meth:`remove` for a batch ``(B, D, H, W)`` of volumes, masks and seeds, batched over
        all crops of all items (one network call per step and crop shape)."""
        xs, ms = check_batch(xs, masks, seeds)
        steps = check_steps(self.config.steps if steps is None else steps, "steps")
        out = xs.copy()
        placements: list[tuple[int, np.ndarray, tuple]] = []
        jobs: list[_Job] = []
        index: dict[bytes, int] = {}
        which: list[int] = []
        for b, (x, m, seed) in enumerate(zip(xs, ms, seeds)):
            for comp, (corner, size) in crop_boxes(m, self.config.margin, self.config.crop):
                xc = extract(x, corner, size, "edge")
                mc = extract(comp, corner, size, "constant")
                key = crop_job_key(xc, mc, int(seed), corner, size)
                if key not in index:
                    index[key] = len(jobs)
                    jobs.append(self._removal_job(xc, mc, int(seed), corner, steps))
                which.append(index[key])
                placements.append((b, mc, corner))
        results = self._run(jobs, 1.0, steps)
        for (b, mc, corner), j in zip(placements, which):
            paste(out[b], results[j], mc, corner)
        return out

    def _removal_job(
        self, xc: np.ndarray, mc: np.ndarray, seed: int, corner: tuple, steps: int
    ) -> _Job:
        rng = np.random.default_rng([seed & 0xFFFFFFFF, *(c + 1000 for c in corner)])
        noise = rng.standard_normal((steps + 1, *xc.shape), dtype=np.float32)
        fill = np.float32(shell_mean(xc, mc))
        x1 = np.where(mc, fill + np.float32(self.config.sigma1) * noise[0], xc).astype(np.float32)
        return _Job(xc, mc, noise[1:], x1)

    def insert(
        self,
        x: np.ndarray,
        nodule: Any,
        centre: Sequence[int],
        tau: float = 0.3,
        seed: SeedLike = 0,
        steps: int | None = None,
    ) -> np.ndarray:
        """Paste ``nodule`` (a ``NoduleTemplate``) with its patch centre on ``centre``, draw
        x_τ from the bridge marginal on the pasted mask dilated by one voxel, and run the
        sampler from τ to 0 in ``max(1, round(steps·τ))`` steps (``config.insert_steps`` when
        set and ``steps`` is not given), the network conditioned on
        the template (``prior`` = the template on its mask, ``prior_mask`` = its mask; a
        network trained with :func:`edit_pairs` renders the nodule into the local texture).
        Voxels outside the dilated mask are returned bit-identical."""
        seed = int_from_seed(seed, "seed", bits=63)
        x = check_volume(x, "x")
        tau = check_tau(tau)
        if steps is None and self.config.insert_steps is not None:
            n = self.config.insert_steps
        else:
            steps = check_steps(self.config.steps if steps is None else steps, "steps")
            n = max(1, round(steps * tau))
        pasted, placed, edit = paste_template(x, nodule, centre)
        prior = np.where(placed, pasted, np.float32(0)).astype(np.float32)
        out = x.copy()
        jobs, places = [], []
        for comp, (corner, size) in crop_boxes(edit, self.config.margin, self.config.crop):
            xc = extract(x, corner, size, "edge")
            pc = extract(pasted, corner, size, "edge")
            mc = extract(comp, corner, size, "constant")
            prc = extract(prior, corner, size, "constant")
            pmc = extract(placed & comp, corner, size, "constant")
            rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 7, *(c + 1000 for c in corner)])
            noise = rng.standard_normal((n + 2, *xc.shape), dtype=np.float32)
            fill = np.float32(shell_mean(xc, mc))
            x1 = fill + np.float32(self.config.sigma1) * noise[0]
            xt = bridge_marginal(pc, x1, np.float32(tau), np.float32(self.config.sigma), noise[1])
            start = np.where(mc, xt, xc).astype(np.float32)
            jobs.append(_Job(xc, mc, noise[2:], start, prc, pmc))
            places.append((mc, corner))
        for res, (mc, corner) in zip(self._run(jobs, tau, n, self.insert_unet), places):
            paste(out, res, mc, corner)
        return out

    # -- the sampler --------------------------------------------------------------------------
    @torch.inference_mode()
    def _run(
        self,
        jobs: list[_Job],
        t0: float,
        steps: int,
        net: torch.nn.Module | None = None,
        chunk: int = 96,
    ) -> list[np.ndarray]:
        """Run the sampler for every job: the network at :func:`sampling_times` from ``t0``
        to ``config.t_end``, returning x̂0 there; ``net`` defaults to :attr:`unet` (removals)."""
        net = self.unet if net is None else net
        times = sampling_times(t0, steps, self.config.t_end, self.config.rho)
        bf16 = resolve_bf16(self.config.bf16, "BridgeConfig")
        results: list[np.ndarray | None] = [None] * len(jobs)
        by_shape: dict[tuple, list[int]] = {}
        for i, j in enumerate(jobs):
            by_shape.setdefault(j.x.shape, []).append(i)
        sigma = self.config.sigma
        for ids_all in by_shape.values():
            for a in range(0, len(ids_all), chunk):
                ids = ids_all[a : a + chunk]
                xin = torch.from_numpy(np.stack([jobs[i].x for i in ids]))[:, None]
                m = torch.from_numpy(np.stack([jobs[i].m for i in ids]))[:, None]
                mf = m.float()
                noise = torch.from_numpy(np.stack([jobs[i].noise for i in ids], axis=1))
                x = torch.from_numpy(np.stack([jobs[i].start for i in ids]))[:, None]
                cond: tuple[torch.Tensor, ...] = ()
                if getattr(net, "cond", False):
                    zero = np.zeros(jobs[ids[0]].x.shape, np.float32)
                    prior = [zero if jobs[i].prior is None else jobs[i].prior for i in ids]
                    pmask = [
                        zero if jobs[i].prior_mask is None else jobs[i].prior_mask for i in ids
                    ]
                    cond = (
                        torch.from_numpy(np.stack(prior).astype(np.float32))[:, None],
                        torch.from_numpy(np.stack(pmask).astype(np.float32))[:, None],
                    )
                for k in range(steps):
                    t = float(times[k])
                    tb = torch.full((len(ids),), t)
                    with autocast(bf16):
                        x0h = net(x, mf, tb, *cond)
                    x0h = x0h.float()
                    if k == steps - 1:
                        x = x0h
                    else:
                        s = float(times[k + 1])
                        x = bridge_step(x, x0h, t, s, sigma, noise[k][:, None])
                    x = torch.where(m, x, xin)
                xn = x[:, 0].numpy()
                for r, i in enumerate(ids):
                    results[i] = np.where(jobs[i].m, xn[r], jobs[i].x).astype(np.float32)
        return results  # type: ignore[return-value]
