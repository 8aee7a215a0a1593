"""R4: reward learning from ratings with the ranking mean squared error (rMSE).

Kharyal, Muslimani and Taylor, "Reward Learning through Ranking Mean Squared Error" (Ranked
Return Regression for RL), ICML 2026, arXiv:2601.09236 — reconstructed from the paper's
description. One training item is one trajectory drawn uniformly from each non-empty rating
bin (``m ≤ n`` trajectories with distinct ratings); a batch holds ``batch_size`` items and the
loss is :func:`~r4_rl.rmse_loss` of their predicted returns against their ratings::

    ℓ(θ) = mean_items (1/m) ‖r_ε(Ĝ_θ(τ_1..m)) − r_ε(c_1..m)‖²   (+ optional OOD term).

Optional OOD term for discrete spaces: ``λ (mean_{(s,a) uniform} r̂ − mean_{(s,a) ∈ data} r̂)``
(off by default; it has no lower bound on its own and only makes sense with few steps).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from icml26_shared.checks import SeedLike

from ._data import Trajectories
from ._model import FitResult, RewardModel, check_epochs, check_ratings, train_loop
from ._softrank import _check_eps, rmse_loss

__all__ = ["fit_r4"]


def fit_r4(
    model: RewardModel,
    trajs: Trajectories,
    ratings: Any,
    epochs: int = 100,
    seed: SeedLike = 0,
    *,
    n_bins: int | None = None,
    batch_size: int = 64,
    eps: float = 1.0,
    lr: float = 3e-3,
    ood_weight: float = 0.0,
    progress: bool | None = None,
) -> FitResult:
    """Fit ``model`` in place on (trajectory, rating) pairs with the rMSE loss of R4.

    Args:
        model: the :class:`RewardModel`.
        trajs: ``N`` rated trajectories.
        ratings: ``(N,)`` integer ratings in ``[0, n_bins)``, at least two distinct.
        epochs: passes; one epoch is ``ceil(N / (m · batch_size))`` Adam steps, so every
            trajectory is drawn about once per epoch (``m`` = number of non-empty bins).
        seed: sampling and dropout seed.
        n_bins: number of rating classes (default ``max(ratings) + 1``).
        batch_size: items per step.
        eps: soft-rank strength ε (the margin between consecutive ranked returns).
        lr: Adam step size.
        ood_weight: λ of the OOD term (tabular models only; 0 = off).
        progress: show a progress bar (default: only when stderr is a terminal).

    Returns:
        A :class:`FitResult` (the model is trained in place).
    """
    if not isinstance(model, RewardModel):
        raise ValueError(f"model must be a RewardModel, got {type(model).__name__}")
    model.check_trajectories(trajs)
    r, _ = check_ratings(ratings, len(trajs), n_bins)
    ep = check_epochs(epochs)
    e = _check_eps(eps)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    lam = float(ood_weight)
    if not (math.isfinite(lam) and lam >= 0):
        raise ValueError(f"ood_weight must be finite and >= 0, got {ood_weight!r}")
    if lam > 0 and not model.tabular:
        raise ValueError("ood_weight > 0 needs a model with Discrete obs and action spaces")
    levels = np.unique(r)
    bins = [np.flatnonzero(r == k) for k in levels]
    m = len(bins)
    targets = torch.as_tensor(levels, dtype=torch.float32).expand(batch_size, m)
    steps = ep * max(1, math.ceil(len(trajs) / (m * batch_size)))
    data_s = trajs.obs[trajs.mask]
    data_a = trajs.acts[trajs.mask] if lam > 0 else None

    def step_loss(rng: np.random.Generator) -> torch.Tensor:
        idx = np.stack([b[rng.integers(len(b), size=batch_size)] for b in bins], axis=1)
        pred = model.returns_at(trajs, torch.from_numpy(idx))
        loss = rmse_loss(pred, targets, eps=e)
        if lam > 0:
            table = model.reward_table()
            loss = loss + lam * (table.mean() - table[data_s, data_a].mean())
        return loss

    return train_loop(model, step_loss, steps=steps, lr=lr, seed=seed, progress=progress, desc="R4")
