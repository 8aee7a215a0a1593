"""Trajectory containers and the generated trajectory pools of the benchmarks.

A batch of trajectories ``τ = ((s_t, a_t))_{t < T_τ}`` is stored padded to a common length
``T`` with a boolean ``mask`` (``True`` on real steps). Discrete observations/actions are integer
tensors ``(N, T)``; continuous ones float tensors ``(N, T, d)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from icml26_shared.checks import SeedLike, rng_from_seed

__all__ = ["Trajectories", "gridworld_pool", "pendulum_pool"]


def _as_tensor(x: Any, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        t = x
    else:
        arr = np.asarray(x)
        if arr.dtype == object:
            raise ValueError(f"{name} must be a numeric array, got dtype object")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.is_complex():
        raise ValueError(f"{name} must be real-valued, got dtype {t.dtype}")
    if t.dtype == torch.bool:
        raise ValueError(f"{name} must be numeric, got dtype bool")
    if t.is_floating_point():
        if not bool(torch.isfinite(t).all()):
            bad = t[~torch.isfinite(t)].flatten()[0].item()
            raise ValueError(f"{name} must be finite (no NaN/inf), got {bad}")
        return t.to(torch.float32)
    return t.to(torch.int64)


@dataclass(frozen=True)
class Trajectories:
    """Padded trajectories: ``obs (N, T[, d_obs])``, ``acts (N, T[, d_act])``, ``mask (N, T)``.

    Integer ``obs``/``acts`` mean discrete spaces (indices), floats mean boxes. Every trajectory
    must have at least one unmasked step; observations and actions must be finite.
    """

    obs: torch.Tensor
    acts: torch.Tensor
    mask: torch.Tensor

    def __init__(self, obs: Any, acts: Any, mask: Any | None = None) -> None:
        o = _as_tensor(obs, "obs")
        a = _as_tensor(acts, "acts")
        if o.ndim < 2:
            raise ValueError(f"obs must have shape (N, T, ...), got {tuple(o.shape)}")
        if a.ndim < 2:
            raise ValueError(f"acts must have shape (N, T, ...), got {tuple(a.shape)}")
        if o.shape[0] == 0 or o.shape[1] == 0:
            raise ValueError(
                f"obs must hold at least one step of one trajectory, got {tuple(o.shape)}"
            )
        if a.shape[:2] != o.shape[:2]:
            raise ValueError(
                f"acts must have leading shape {tuple(o.shape[:2])} like obs, got {tuple(a.shape)}"
            )
        if mask is None:
            m = torch.ones(o.shape[:2], dtype=torch.bool)
        else:
            m = torch.as_tensor(np.asarray(mask) if not isinstance(mask, torch.Tensor) else mask)
            if m.dtype != torch.bool:
                if m.is_floating_point() or m.is_complex():
                    raise ValueError(f"mask must be boolean or 0/1 integers, got dtype {m.dtype}")
                if bool(((m != 0) & (m != 1)).any()):
                    raise ValueError("mask must be boolean or 0/1 integers, got other values")
                m = m != 0
            if tuple(m.shape) != tuple(o.shape[:2]):
                raise ValueError(
                    f"mask must have shape {tuple(o.shape[:2])} (N, T of obs), got {tuple(m.shape)}"
                )
        lengths = m.sum(dim=1)
        if bool((lengths == 0).any()):
            i = int(torch.nonzero(lengths == 0)[0, 0])
            raise ValueError(
                f"mask must leave at least one step per trajectory, got 0 steps at {i}"
            )
        object.__setattr__(self, "obs", o)
        object.__setattr__(self, "acts", a)
        object.__setattr__(self, "mask", m)

    @classmethod
    def from_episodes(cls, obs: Sequence[Any], acts: Sequence[Any]) -> Trajectories:
        """Pad a list of per-episode arrays ``obs[i] (T_i[, d])``, ``acts[i] (T_i[, d])``."""
        if len(obs) == 0:
            raise ValueError("obs must hold at least one episode, got an empty list")
        if len(obs) != len(acts):
            raise ValueError(f"acts must hold {len(obs)} episodes like obs, got {len(acts)}")
        os_ = [np.asarray(o) for o in obs]
        as_ = [np.asarray(a) for a in acts]
        for i, (o, a) in enumerate(zip(os_, as_)):
            if len(o) == 0:
                raise ValueError(f"obs[{i}] must have at least one step, got a zero-length episode")
            if len(a) != len(o):
                raise ValueError(f"acts[{i}] must have {len(o)} steps like obs[{i}], got {len(a)}")
        t_max = max(len(o) for o in os_)

        def pad(xs: list[np.ndarray]) -> np.ndarray:
            out = np.zeros((len(xs), t_max, *xs[0].shape[1:]), dtype=xs[0].dtype)
            for i, x in enumerate(xs):
                out[i, : len(x)] = x
            return out

        mask = np.zeros((len(os_), t_max), dtype=bool)
        for i, o in enumerate(os_):
            mask[i, : len(o)] = True
        return cls(pad(os_), pad(as_), mask)

    def __len__(self) -> int:
        return int(self.obs.shape[0])

    @property
    def lengths(self) -> torch.Tensor:
        """Number of real steps of each trajectory, ``(N,)``."""
        return self.mask.sum(dim=1)

    def subset(self, index: Any) -> Trajectories:
        """The trajectories at ``index`` (an integer array or slice)."""
        idx = torch.as_tensor(np.asarray(index)) if not isinstance(index, slice) else index
        return Trajectories(self.obs[idx], self.acts[idx], self.mask[idx])

    def segments(self, length: int) -> Trajectories:
        """Cut every trajectory into consecutive fixed-length segments (for online rating).

        Segments shorter than ``length`` at a trajectory's end are kept, padded and masked.
        """
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ValueError(f"length must be an integer >= 1, got {length!r}")
        obs, acts = [], []
        for i in range(len(self)):
            n = int(self.lengths[i])
            for start in range(0, n, length):
                stop = min(start + length, n)
                obs.append(self.obs[i, start:stop].numpy())
                acts.append(self.acts[i, start:stop].numpy())
        return Trajectories.from_episodes(obs, acts)


def gridworld_pool(
    env: Any, n: int = 1000, *, seed: SeedLike = 0, epsilons: Sequence[float] | None = None
) -> tuple[Trajectories, np.ndarray]:
    """The GridWorld pool of the benchmark: uniform-random and ε-greedy-around-optimal rollouts.

    ``n`` trajectories split evenly over the uniform random policy and ε-greedy mixtures
    ``(1 − ε) π* + ε · uniform`` of the optimal finite-horizon policy, ε ∈ {0.1, …, 0.9}.

    Returns:
        ``(trajectories, true_returns)``.
    """
    from ._envs import GridWorld

    if not isinstance(env, GridWorld):
        raise ValueError(f"env must be a GridWorld, got {type(env).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    eps_list = [round(0.1 * k, 1) for k in range(1, 10)] if epsilons is None else list(epsilons)
    rng = rng_from_seed(seed)
    _, greedy = env.value_iteration(env.reward)
    uniform = np.full((env.horizon, env.n_states, env.n_actions), 1.0 / env.n_actions)
    policies = [uniform] + [(1 - e) * env.one_hot_policy(greedy) + e * uniform for e in eps_list]
    counts = np.full(len(policies), n // len(policies))
    counts[: n - counts.sum()] += 1
    parts = [env.sample(p, int(c), rng) for p, c in zip(policies, counts) if c > 0]
    obs = np.concatenate([p[0] for p in parts])
    acts = np.concatenate([p[1] for p in parts])
    mask = np.concatenate([p[2] for p in parts])
    ret = np.concatenate([p[3] for p in parts])
    order = rng.permutation(len(ret))
    return Trajectories(obs[order], acts[order], mask[order]), ret[order]


def pendulum_pool(
    n: int = 400,
    *,
    seed: SeedLike = 0,
    random_fraction: float = 0.2,
    horizon: int = 200,
    progress: bool | None = None,
) -> tuple[Trajectories, np.ndarray]:
    """Pendulum-v1 rollouts of the energy swing-up + PD family with action noise, plus random.

    Each controller trajectory draws parameters around the family's default, and a Gaussian
    action-noise scale uniform in [0, 2]; a ``random_fraction`` of trajectories use uniform
    random torques. The hidden reward is the environment's. Needs ``pip install r4-rl[gym]``.

    Returns:
        ``(trajectories, true_returns)``.
    """
    from ._envs import PendulumSwingUp, make_pendulum
    from ._planners import rollout
    from ._progress import bar

    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not 0 <= random_fraction <= 1:
        raise ValueError(f"random_fraction must be in [0, 1], got {random_fraction!r}")
    env = make_pendulum(horizon)
    family = PendulumSwingUp()
    rng = rng_from_seed(seed)
    obs, acts, rets = [], [], []
    for i in bar(range(n), enabled=progress, total=n, desc="pendulum pool"):
        ep_seed = int(rng.integers(2**31))
        if rng.random() < random_fraction:
            policy = None
            noise = 0.0
        else:
            params = family.init_mean + family.init_std * rng.standard_normal(family.dim)
            policy = family.policy(params)
            noise = float(rng.uniform(0.0, 2.0))
        o, a, r = rollout(env, policy, seed=ep_seed, action_noise=noise, rng=rng)
        obs.append(o)
        acts.append(a)
        rets.append(float(r.sum()))
        del i
    env.close()
    return Trajectories.from_episodes(obs, acts), np.asarray(rets)
