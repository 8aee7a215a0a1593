"""The reward model ``r̂_θ(s, a)`` and its predicted returns ``Ĝ(τ) = Σ_t γ^t r̂(s_t, a_t)``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26_shared.checks import SeedLike, int_from_seed

from ._data import Trajectories
from ._envs import space_kind
from ._progress import bar

__all__ = ["FitResult", "RewardModel"]


class RewardModel(nn.Module):
    """An MLP reward ``r̂_θ(s, a)``; discrete states/actions are one-hot encoded.

    Args:
        obs_space: a ``Discrete`` or ``Box`` space (gymnasium's or :mod:`r4_rl.envs`').
        act_space: likewise.
        hidden: hidden layer widths (default 2 × 64), or ``"mini"`` for one hidden layer of 5.
        gamma: discount ``γ ∈ (0, 1]`` of the predicted return (1 in the paper).
        seed: initialisation seed (``None`` uses torch's global generator).

    Example:
        >>> from r4_rl.envs import GridWorld
        >>> env = GridWorld()
        >>> model = RewardModel(env.observation_space, env.action_space, seed=0)
        >>> tuple(model.reward_table().shape)
        (25, 4)
    """

    def __init__(
        self,
        obs_space: Any,
        act_space: Any,
        hidden: Sequence[int] | str = (64, 64),
        *,
        gamma: float = 1.0,
        seed: SeedLike = None,
    ) -> None:
        super().__init__()
        self.obs_kind, self.obs_dim = space_kind(obs_space, "obs_space")
        self.act_kind, self.act_dim = space_kind(act_space, "act_space")
        if isinstance(hidden, str):
            if hidden != "mini":
                raise ValueError(f"hidden must be a sequence of widths or 'mini', got {hidden!r}")
            hidden = (5,)
        if not all(isinstance(h, int | np.integer) and not isinstance(h, bool) for h in hidden):
            raise TypeError(f"hidden must be a sequence of integer widths, got {hidden!r}")
        widths = [int(h) for h in hidden]
        if any(h < 1 for h in widths):
            raise ValueError(f"hidden widths must be >= 1, got {list(hidden)}")
        if isinstance(gamma, str | bytes | bool):
            raise TypeError(f"gamma must be a real number in (0, 1], got {gamma!r}")
        try:
            g = float(gamma)
        except (TypeError, ValueError):
            raise ValueError(f"gamma must be in (0, 1], got {gamma!r}") from None
        if not 0 < g <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
        self.gamma = g
        self.hidden = tuple(widths)
        # None: torch's global generator (seeded from OS entropy unless torch.manual_seed was
        # called); a numpy Generator gives one draw of it
        gen = (
            torch.Generator().manual_seed(int_from_seed(seed, bits=63))
            if seed is not None
            else None
        )
        layers: list[nn.Module] = []
        d = self.obs_dim + self.act_dim
        for h in widths:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)
        if gen is not None:
            with torch.no_grad():
                for p in self.net.parameters():
                    bound = 1.0 / np.sqrt(p.shape[-1]) if p.ndim == 2 else 0.1
                    p.uniform_(-bound, bound, generator=gen)

    @property
    def dtype(self) -> torch.dtype:
        """The floating dtype of the network's weights (inputs are cast to it)."""
        return next(self.net.parameters()).dtype

    @property
    def tabular(self) -> bool:
        """True when both spaces are discrete (rewards come from a ``(S, A)`` table)."""
        return self.obs_kind == "discrete" and self.act_kind == "discrete"

    def _encode(self, x: torch.Tensor, kind: str, dim: int, lead: int) -> torch.Tensor:
        if kind == "discrete":
            if x.is_floating_point():
                raise ValueError("discrete observations/actions must be integer indices")
            if bool((x < 0).any()) or bool((x >= dim).any()):
                raise ValueError(
                    f"discrete indices must be in [0, {dim}), got {x.min()}..{x.max()}"
                )
            return nn.functional.one_hot(x.long(), dim).to(self.dtype)
        x = x.to(self.dtype).reshape(*x.shape[:lead], -1)
        if x.shape[-1] != dim:
            raise ValueError(f"box inputs must have {dim} features, got {x.shape[-1]}")
        return x

    def forward(self, obs: torch.Tensor, acts: torch.Tensor, lead: int = 2) -> torch.Tensor:
        """Rewards of (observation, action) pairs with ``lead`` leading batch dimensions."""
        feats = torch.cat(
            [
                self._encode(obs, self.obs_kind, self.obs_dim, lead),
                self._encode(acts, self.act_kind, self.act_dim, lead),
            ],
            dim=-1,
        )
        return self.net(feats).squeeze(-1)

    def reward_table(self) -> torch.Tensor:
        """``r̂(s, a)`` for every state and action, ``(S, A)`` (tabular models only)."""
        if not self.tabular:
            raise ValueError("reward_table needs Discrete obs_space and act_space, got a Box")
        s, a = torch.meshgrid(torch.arange(self.obs_dim), torch.arange(self.act_dim), indexing="ij")
        return self.forward(s, a)

    def step_rewards(self, obs: Any, acts: Any) -> np.ndarray:
        """Numpy rewards of one episode's steps ``obs (T[, d])``, ``acts (T[, k])``."""
        o = torch.as_tensor(np.asarray(obs))
        a = torch.as_tensor(np.asarray(acts))
        with torch.no_grad():
            return self.forward(o, a, lead=1).double().numpy()

    def returns(self, trajs: Trajectories) -> torch.Tensor:
        """Predicted returns ``Ĝ(τ) = Σ_t γ^t r̂(s_t, a_t)`` over unmasked steps, ``(N,)``."""
        self.check_trajectories(trajs)
        return self.returns_at(trajs, torch.arange(len(trajs)))

    def check_trajectories(self, trajs: Trajectories) -> None:
        """Raise unless ``trajs`` matches this model's spaces."""
        if not isinstance(trajs, Trajectories):
            raise ValueError(f"trajs must be a Trajectories, got {type(trajs).__name__}")
        for x, kind, dim, name in (
            (trajs.obs, self.obs_kind, self.obs_dim, "trajs.obs"),
            (trajs.acts, self.act_kind, self.act_dim, "trajs.acts"),
        ):
            if kind == "discrete":
                if x.is_floating_point() or x.ndim != 2:
                    raise ValueError(f"{name} must be integer indices (N, T), got {x.dtype}")
                if bool((x < 0).any()) or bool((x >= dim).any()):
                    raise ValueError(
                        f"{name} must be in [0, {dim}), got {int(x.min())}..{int(x.max())}"
                    )
            else:
                flat = int(np.prod(x.shape[2:])) if x.ndim > 2 else 1
                if not x.is_floating_point() or flat != dim:
                    raise ValueError(
                        f"{name} must be floats with {dim} features, got shape {tuple(x.shape)}"
                    )

    def returns_at(self, trajs: Trajectories, index: torch.Tensor) -> torch.Tensor:
        """Predicted returns of ``trajs`` at an integer ``index`` tensor of any shape (unchecked)."""
        flat = index.reshape(-1)
        obs, acts, mask = trajs.obs[flat], trajs.acts[flat], trajs.mask[flat]
        if self.tabular:
            r = self.reward_table()[obs, acts]
        else:
            r = self.forward(obs, acts)
        w = mask.to(r.dtype)
        if self.gamma != 1.0:
            w = w * self.gamma ** torch.arange(w.shape[1], dtype=r.dtype)
        return (r * w).sum(dim=1).reshape(index.shape)


@dataclass
class FitResult:
    """What a trainer returns: the (trained in place) model, per-step losses and seconds."""

    model: RewardModel
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def train_loop(
    model: RewardModel,
    step_loss: Callable[[np.random.Generator], torch.Tensor],
    *,
    steps: int,
    lr: float,
    seed: int,
    progress: bool | None,
    desc: str,
) -> FitResult:
    """Adam on ``step_loss(rng)`` for ``steps`` steps (shared by R4 and the baselines)."""
    if not isinstance(model, RewardModel):
        raise ValueError(f"model must be a RewardModel, got {type(model).__name__}")
    if isinstance(lr, bool) or not (isinstance(lr, int | float) and 0 < lr < float("inf")):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    seed = int_from_seed(seed, bits=63)  # torch.manual_seed and numpy need an int
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    start = time.perf_counter()
    model.train()
    for _ in bar(range(steps), enabled=progress, total=steps, desc=desc):
        opt.zero_grad()
        loss = step_loss(rng)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return FitResult(model, losses, time.perf_counter() - start)


def check_epochs(epochs: Any) -> int:
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
    return int(epochs)


def check_ratings(ratings: Any, n: int, n_bins: int | None) -> tuple[np.ndarray, int]:
    """Ratings as int64 ``(n,)`` in ``[0, n_bins)`` with at least two distinct values."""
    r = np.asarray(ratings)
    if r.ndim != 1 or r.shape[0] != n:
        raise ValueError(f"ratings must have shape ({n},) like trajs, got {r.shape}")
    if r.dtype.kind not in "iuf" or (r.dtype.kind == "f" and not np.isfinite(r).all()):
        raise ValueError(f"ratings must be integers in [0, n_bins), got dtype {r.dtype}")
    if r.dtype.kind == "f" and not np.all(r == np.round(r)):
        bad = r[r != np.round(r)][0]
        raise ValueError(f"ratings must be integers in [0, n_bins), got {bad}")
    r = r.astype(np.int64)
    if r.size and np.unique(r).size < 2:
        raise ValueError(f"ratings must hold at least two distinct ratings, got only {r[0]}")
    nb = int(r.max()) + 1 if n_bins is None else n_bins
    if isinstance(nb, bool) or not isinstance(nb, int | np.integer) or nb < 2:
        raise ValueError(f"n_bins must be an integer >= 2, got {nb!r}")
    nb = int(nb)
    if r.min() < 0 or r.max() >= nb:
        bad = r[(r < 0) | (r >= nb)][0]
        raise ValueError(f"ratings must be integers in [0, {nb}), got {bad}")
    return r, nb
