"""Peers re-implemented at the same feedback budget: RbRL, Bradley–Terry, rating regression.

**RbRL** (White, Wu, Zhang and Abdelzaher, "Rating-based reinforcement learning", AAAI 2024): per
batch, min-max normalise the predicted returns to ``R̃ ∈ [0, 1]``; class boundaries ``R̄₀ = 0``,
``R̄_k`` = the normalised return at sorted position "number of ratings below k" (detached),
``R̄_n = 1``; class logits ``−κ (R̃ − R̄_k)(R̃ − R̄_{k+1})`` (κ = 30) and cross-entropy against the
rating.

**Bradley–Terry** (Christiano et al. 2017): ``P(τ₁ ≻ τ₂) = σ(Ĝ₁ − Ĝ₂)``, binary cross-entropy.

**Rating regression**: mean squared error between ``Ĝ`` and the rating (a naive row).

Every trainer draws the same number of trajectories per Adam step (``batch_size · n_bins``)
as :func:`~r4_rl.fit_r4` at its default sizes, and one epoch is ``ceil(N / that)`` steps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26_shared.checks import SeedLike

from ._data import Trajectories
from ._model import FitResult, RewardModel, check_epochs, check_ratings, train_loop

__all__ = ["fit_bt", "fit_rbrl", "fit_regression"]


def _draws(n: int, per_step: int) -> tuple[int, int]:
    take = min(n, per_step)
    return take, max(1, math.ceil(n / take))


def _check_model(model: Any, trajs: Trajectories) -> None:
    if not isinstance(model, RewardModel):
        raise ValueError(f"model must be a RewardModel, got {type(model).__name__}")
    model.check_trajectories(trajs)


def rbrl_loss(pred: torch.Tensor, ratings: torch.Tensor, n_bins: int, kappa: float) -> torch.Tensor:
    """The RbRL cross-entropy of one batch of predicted returns ``pred (B,)``."""
    lo, hi = pred.min(), pred.max()
    norm = (pred - lo) / (hi - lo + 1e-8)
    srt = torch.sort(norm.detach()).values
    below = (ratings[None, :] < torch.arange(1, n_bins)[:, None]).sum(dim=1)
    inner = srt[below.clamp(max=len(srt) - 1)]
    bounds = torch.cat([norm.new_zeros(1), inner, norm.new_ones(1)])
    logits = -kappa * (norm[:, None] - bounds[None, :-1]) * (norm[:, None] - bounds[None, 1:])
    return nn.functional.cross_entropy(logits, ratings)


def fit_rbrl(
    model: RewardModel,
    trajs: Trajectories,
    ratings: Any,
    epochs: int = 100,
    seed: SeedLike = 0,
    *,
    n_bins: int | None = None,
    kappa: float = 30.0,
    batch_size: int = 320,
    lr: float = 3e-3,
    progress: bool | None = None,
) -> FitResult:
    """Fit ``model`` with the RbRL loss (White et al., AAAI 2024) on ``batch_size`` trajectories
    per step (default 64 × 5, the trajectories one R4 step sees with 5 bins)."""
    _check_model(model, trajs)
    r, nb = check_ratings(ratings, len(trajs), n_bins)
    ep = check_epochs(epochs)
    if not (isinstance(kappa, int | float) and 0 < kappa < float("inf")):
        raise ValueError(f"kappa must be a finite number > 0, got {kappa!r}")
    take, spe = _draws(len(trajs), batch_size)
    rt = torch.from_numpy(r)

    def step_loss(rng: np.random.Generator) -> torch.Tensor:
        idx = torch.from_numpy(rng.choice(len(trajs), size=take, replace=False))
        return rbrl_loss(model.returns_at(trajs, idx), rt[idx], nb, float(kappa))

    return train_loop(
        model, step_loss, steps=ep * spe, lr=lr, seed=seed, progress=progress, desc="RbRL"
    )


def fit_bt(
    model: RewardModel,
    trajs: Trajectories,
    pairs: Any,
    prefs: Any,
    epochs: int = 100,
    seed: SeedLike = 0,
    *,
    batch_size: int = 160,
    lr: float = 3e-3,
    progress: bool | None = None,
) -> FitResult:
    """Bradley–Terry reward learning on ``pairs (B, 2)`` of trajectory indices with labels
    ``prefs (B,)`` in [0, 1] (1: the first is preferred); ``batch_size`` pairs per step."""
    _check_model(model, trajs)
    p = np.asarray(pairs)
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 1 or p.dtype.kind not in "iu":
        raise ValueError(f"pairs must be integer indices of shape (B, 2), got {p.shape} {p.dtype}")
    if p.min() < 0 or p.max() >= len(trajs):
        raise ValueError(f"pairs must index trajs in [0, {len(trajs)}), got {p.min()}..{p.max()}")
    y = np.asarray(prefs, dtype=np.float64)
    if y.shape != (p.shape[0],) or not np.isfinite(y).all() or y.min() < 0 or y.max() > 1:
        raise ValueError(f"prefs must be {p.shape[0]} labels in [0, 1], got shape {y.shape}")
    ep = check_epochs(epochs)
    take, spe = _draws(len(p), batch_size)
    pt = torch.from_numpy(p.astype(np.int64))
    yt = torch.from_numpy(y).to(model.dtype)

    def step_loss(rng: np.random.Generator) -> torch.Tensor:
        idx = torch.from_numpy(rng.choice(len(p), size=take, replace=False))
        g = model.returns_at(trajs, pt[idx])
        return nn.functional.binary_cross_entropy_with_logits(g[:, 0] - g[:, 1], yt[idx])

    return train_loop(
        model, step_loss, steps=ep * spe, lr=lr, seed=seed, progress=progress, desc="BT"
    )


def fit_regression(
    model: RewardModel,
    trajs: Trajectories,
    ratings: Any,
    epochs: int = 100,
    seed: SeedLike = 0,
    *,
    n_bins: int | None = None,
    batch_size: int = 320,
    lr: float = 3e-3,
    progress: bool | None = None,
) -> FitResult:
    """Naive rating regression: mean squared error between ``Ĝ(τ)`` and the rating."""
    _check_model(model, trajs)
    r, _ = check_ratings(ratings, len(trajs), n_bins)
    ep = check_epochs(epochs)
    take, spe = _draws(len(trajs), batch_size)
    rt = torch.from_numpy(r).to(model.dtype)

    def step_loss(rng: np.random.Generator) -> torch.Tensor:
        idx = torch.from_numpy(rng.choice(len(trajs), size=take, replace=False))
        return nn.functional.mse_loss(model.returns_at(trajs, idx), rt[idx])

    return train_loop(
        model, step_loss, steps=ep * spe, lr=lr, seed=seed, progress=progress, desc="regression"
    )
