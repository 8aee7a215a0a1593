"""Planners on a (learned) reward: tabular Q-learning and cross-entropy policy search (CEM).

Tabular Q-learning (Watkins) on a finite-horizon GridWorld keeps a time-indexed table
``Q_t(s, a)`` and, on each sampled transition, moves it towards
``r̂(s, a) + [s not terminal, t+1 < H] max_{a'} Q_{t+1}(s', a')`` with step size
``n(t, s, a)^{-0.6}`` and ε-greedy exploration decaying from 1 to 0.05.

CEM (Rubinstein; Szita and Lőrincz 2006 for policy search): keep a diagonal Gaussian over policy
parameters, score a population by the (learned) return of a few rollouts with common seeds,
refit the Gaussian to the elite fraction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26_shared.checks import SeedLike, int_from_seed, rng_from_seed

from ._envs import GridWorld, space_kind
from ._progress import bar

__all__ = ["CEMResult", "cem_search", "q_learning", "rollout"]


def _reward_table(reward_fn: Any, n_states: int, n_actions: int) -> np.ndarray:
    if hasattr(reward_fn, "reward_table"):
        table = reward_fn.reward_table().detach().cpu().numpy()
    elif callable(reward_fn):
        s, a = np.meshgrid(np.arange(n_states), np.arange(n_actions), indexing="ij")
        table = np.asarray(reward_fn(s.ravel(), a.ravel()), dtype=np.float64)
        table = table.reshape(n_states, n_actions)
    else:
        table = np.asarray(reward_fn, dtype=np.float64)
    if table.shape != (n_states, n_actions) or not np.isfinite(table).all():
        raise ValueError(
            f"reward_fn must give finite rewards of shape ({n_states}, {n_actions}), "
            f"got shape {table.shape}"
        )
    return table.astype(np.float64)


def q_learning(
    env: Any,
    reward_fn: Any,
    *,
    episodes: int = 20_000,
    n_envs: int = 100,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> np.ndarray:
    """Time-indexed tabular Q-learning on ``reward_fn`` with the env's sampled dynamics.

    Args:
        env: a :class:`~r4_rl.envs.GridWorld` (discrete states and actions).
        reward_fn: a table ``(S, A)``, a callable ``(states, actions) -> rewards`` or a
            discrete :class:`~r4_rl.RewardModel`.
        episodes: total episodes, run ``n_envs`` at a time.
        n_envs: parallel episodes per sweep.
        seed: random seed.
        progress: show a progress bar (default: only when stderr is a terminal).

    Returns:
        The greedy policy ``(H, S)`` of the learned table.
    """
    for name in ("observation_space", "action_space"):
        kind, _ = space_kind(getattr(env, name, None), f"env.{name}")
        if kind != "discrete":
            raise ValueError(f"env.{name} must be Discrete for tabular Q-learning, got Box")
    if not isinstance(env, GridWorld):
        raise ValueError(f"env must be a GridWorld (finite horizon), got {type(env).__name__}")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
    if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs < 1:
        raise ValueError(f"n_envs must be an integer >= 1, got {n_envs!r}")
    r = _reward_table(reward_fn, env.n_states, env.n_actions)
    rng = rng_from_seed(seed)
    H, S, A = env.horizon, env.n_states, env.n_actions
    Q = np.zeros((H + 1, S, A))
    visits = np.zeros((H, S, A))
    sweeps = max(1, episodes // n_envs)
    idx = np.arange(n_envs)
    for k in bar(range(sweeps), enabled=progress, total=sweeps, desc="q-learning"):
        explore = max(0.05, 1.0 - k / (0.7 * sweeps))
        s = env.reset_batch(n_envs, rng)
        alive = np.ones(n_envs, dtype=bool)
        for t in range(H):
            greedy = Q[t, s].argmax(axis=1)
            rand = rng.integers(A, size=n_envs)
            a = np.where(rng.random(n_envs) < explore, rand, greedy)
            s_next, done = env.step_batch(s, a, rng)
            boot = 0.0 if t + 1 == H else Q[t + 1, s_next].max(axis=1)
            target = r[s, a] + np.where(done, 0.0, boot)
            live = idx[alive]
            np.add.at(visits, (t, s[live], a[live]), 1.0)
            step = visits[t, s[live], a[live]] ** -0.6
            Q[t, s[live], a[live]] += step * (target[live] - Q[t, s[live], a[live]])
            alive = alive & ~done
            s = np.where(alive, s_next, s)
            if not alive.any():
                break
    return Q[:H].argmax(axis=2)


def rollout(
    env: Any,
    policy: Callable[[np.ndarray], np.ndarray] | None,
    *,
    seed: SeedLike,
    action_noise: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One episode of a gymnasium env: ``(obs (T, d), actions (T, k), env_rewards (T,))``.

    ``policy=None`` draws uniform random actions; ``action_noise`` adds Gaussian noise of that
    standard deviation to each action (clipped to the action box). ``obs[t]`` is the observation
    the action ``actions[t]`` was taken in.
    """
    seed = int_from_seed(seed)  # gymnasium's reset takes an int
    rng = np.random.default_rng(seed) if rng is None else rng
    space = env.action_space
    low, high = np.asarray(space.low), np.asarray(space.high)
    o, _ = env.reset(seed=seed)
    obs, acts, rews = [], [], []
    while True:
        if policy is None:
            a = rng.uniform(low, high).astype(np.float32)
        else:
            a = np.asarray(policy(o), dtype=np.float32)
        if action_noise > 0:
            a = np.clip(a + action_noise * rng.standard_normal(a.shape), low, high)
        a = a.astype(np.float32)
        o_next, rew, terminated, truncated, _ = env.step(a)
        obs.append(np.asarray(o, dtype=np.float32))
        acts.append(a)
        rews.append(float(rew))
        o = o_next
        if terminated or truncated:
            break
    return np.stack(obs), np.stack(acts), np.asarray(rews)


@dataclass(frozen=True)
class CEMResult:
    """The final mean parameters, and the best population score of every iteration."""

    params: np.ndarray
    history: np.ndarray


def cem_search(
    env: Any,
    policy_family: Any,
    reward_fn: Any | None = None,
    *,
    iterations: int = 8,
    population: int = 24,
    elite_frac: float = 0.25,
    episodes: int = 2,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> CEMResult:
    """Cross-entropy search over ``policy_family`` parameters, scored by ``reward_fn``.

    Args:
        env: a gymnasium env with Box observation and action spaces.
        policy_family: an object with ``dim``, ``init_mean``, ``init_std`` and
            ``policy(params) -> (obs -> action)`` (e.g. :class:`~r4_rl.envs.PendulumSwingUp`).
        reward_fn: ``None`` for the env's reward, else a :class:`~r4_rl.RewardModel` or a
            callable ``(obs (T, d), actions (T, k)) -> rewards (T,)``.
        iterations, population, elite_frac, episodes: CEM sizes (episodes per candidate use
            common seeds within an iteration).
        seed: random seed.
        progress: show a progress bar (default: only when stderr is a terminal).
    """
    for name in ("observation_space", "action_space"):
        kind, _ = space_kind(getattr(env, name, None), f"env.{name}")
        if kind != "box":
            raise ValueError(f"env.{name} must be a Box space for CEM, got Discrete")
    if not 0 < elite_frac <= 1:
        raise ValueError(f"elite_frac must be in (0, 1], got {elite_frac!r}")
    for name, val in (
        ("iterations", iterations),
        ("population", population),
        ("episodes", episodes),
    ):
        if isinstance(val, bool) or not isinstance(val, int) or val < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {val!r}")
    score_steps = _step_scorer(reward_fn)
    rng = rng_from_seed(seed)
    mean = np.asarray(policy_family.init_mean, dtype=np.float64).copy()
    std = np.asarray(policy_family.init_std, dtype=np.float64).copy()
    n_elite = max(1, round(elite_frac * population))
    history = []
    for _ in bar(range(iterations), enabled=progress, total=iterations, desc="cem"):
        seeds = rng.integers(2**31, size=episodes)
        cands = mean + std * rng.standard_normal((population, mean.size))
        scores = np.empty(population)
        for i, x in enumerate(cands):
            pol = policy_family.policy(x)
            total = 0.0
            for s in seeds:
                o, a, r = rollout(env, pol, seed=int(s))
                total += float(score_steps(o, a, r).sum())
            scores[i] = total / episodes
        elite = cands[np.argsort(scores)[::-1][:n_elite]]
        mean = elite.mean(axis=0)
        std = elite.std(axis=0) + 1e-3 * np.asarray(policy_family.init_std)
        history.append(float(scores.max()))
    return CEMResult(mean, np.asarray(history))


def _step_scorer(reward_fn: Any) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    if reward_fn is None:
        return lambda o, a, r: r
    if hasattr(reward_fn, "step_rewards"):
        return lambda o, a, r: reward_fn.step_rewards(o, a)
    if callable(reward_fn):
        return lambda o, a, r: np.asarray(reward_fn(o, a), dtype=np.float64)
    raise ValueError(f"reward_fn must be None, a RewardModel or a callable, got {reward_fn!r}")
