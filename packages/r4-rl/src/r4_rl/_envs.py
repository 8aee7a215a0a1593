"""Environments: a tabular GridWorld with exact value iteration, and the Pendulum controller family.

GridWorld (finite horizon ``H``, states = cells, 4 actions up/down/left/right; with probability
``slip`` the move goes in a uniformly random direction instead; moving into a wall stays). The
reward is on the current state: ``+goal_reward`` at the goal (which then ends the episode),
``−step_cost − hazard_penalty·[s ∈ hazards]`` elsewhere. Start states are uniform over cells
that are neither goal nor hazard. Finite-horizon backward induction gives the exact optimum::

    Q_t(s, a) = r(s, a) + [s not terminal] Σ_{s'} P(s' | s, a) max_{a'} Q_{t+1}(s', a'),
    Q_H ≡ 0,

and :meth:`GridWorld.evaluate` computes a policy's expected return exactly by propagating the
state distribution forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Box", "Discrete", "GridWorld", "PendulumSwingUp", "make_pendulum"]

_MOVES = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]])  # up, down, left, right


@dataclass(frozen=True)
class Discrete:
    """A finite space ``{0, …, n−1}`` (the same fields as ``gymnasium.spaces.Discrete``)."""

    n: int


@dataclass(frozen=True)
class Box:
    """A real box of shape ``shape`` (the fields of ``gymnasium.spaces.Box`` that we read)."""

    shape: tuple[int, ...]


def space_kind(space: Any, name: str) -> tuple[str, int]:
    """``("discrete", n)`` or ``("box", flat_dim)`` for a gymnasium or r4_rl space, else raise."""
    kind = type(space).__name__
    if kind == "Discrete" and hasattr(space, "n"):
        return "discrete", int(space.n)
    if kind == "Box" and hasattr(space, "shape"):
        return "box", int(np.prod(space.shape)) if len(space.shape) else 1
    raise ValueError(f"{name} must be a Box or Discrete space, got {kind}")


@dataclass
class GridWorld:
    """A ``size × size`` grid with a goal, hazards, a step cost, slip and a finite horizon."""

    size: int = 5
    goal: tuple[int, int] = (4, 4)
    hazards: Sequence[tuple[int, int]] = ((1, 1), (1, 3), (3, 1), (2, 3))
    step_cost: float = 1.0
    hazard_penalty: float = 5.0
    goal_reward: float = 10.0
    slip: float = 0.1
    horizon: int = 20
    P: np.ndarray = field(init=False, repr=False)
    reward: np.ndarray = field(init=False, repr=False)
    terminal: np.ndarray = field(init=False, repr=False)
    start: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 2:
            raise ValueError(f"size must be an integer >= 2, got {self.size!r}")
        if not 0 <= self.slip <= 1:
            raise ValueError(f"slip must be in [0, 1], got {self.slip!r}")
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, int) or self.horizon < 1:
            raise ValueError(f"horizon must be an integer >= 1, got {self.horizon!r}")
        cells = [tuple(self.goal), *map(tuple, self.hazards)]
        for c in cells:
            if not all(0 <= x < self.size for x in c):
                raise ValueError(f"goal and hazards must lie on the grid, got cell {c}")
        n, a = self.n_states, self.n_actions
        P = np.zeros((n, a, n))
        for s in range(n):
            r, c = divmod(s, self.size)
            for act in range(a):
                for move in range(a):
                    p = (1 - self.slip) * (move == act) + self.slip / a
                    rr = min(max(r + _MOVES[move, 0], 0), self.size - 1)
                    cc = min(max(c + _MOVES[move, 1], 0), self.size - 1)
                    P[s, act, rr * self.size + cc] += p
        g = self.state(*self.goal)
        hz = np.zeros(n, dtype=bool)
        for h in self.hazards:
            hz[self.state(*h)] = True
        rew = np.where(hz, -self.step_cost - self.hazard_penalty, -self.step_cost)
        rew[g] = self.goal_reward
        term = np.zeros(n, dtype=bool)
        term[g] = True
        start = (~hz & ~term).astype(float)
        self.P = P
        self.reward = np.repeat(rew[:, None], a, axis=1)
        self.terminal = term
        self.start = start / start.sum()

    @property
    def n_states(self) -> int:
        return self.size * self.size

    @property
    def n_actions(self) -> int:
        return 4

    @property
    def observation_space(self) -> Discrete:
        return Discrete(self.n_states)

    @property
    def action_space(self) -> Discrete:
        return Discrete(self.n_actions)

    def state(self, row: int, col: int) -> int:
        """The index of cell ``(row, col)``."""
        return row * self.size + col

    def _check_reward(self, reward: Any) -> np.ndarray:
        r = np.asarray(reward, dtype=np.float64)
        if r.shape != (self.n_states, self.n_actions):
            raise ValueError(
                f"reward must have shape ({self.n_states}, {self.n_actions}), got {r.shape}"
            )
        if not np.isfinite(r).all():
            raise ValueError("reward must be finite, got NaN or inf")
        return r

    def value_iteration(self, reward: Any) -> tuple[np.ndarray, np.ndarray]:
        """Exact finite-horizon backward induction for the table ``reward (S, A)``.

        Returns:
            ``(Q, policy)``: ``Q (H, S, A)`` and the greedy time-indexed policy ``(H, S)``.

        Example:
            >>> env = GridWorld()
            >>> Q, pi = env.value_iteration(env.reward)
            >>> Q.shape, pi.shape
            ((20, 25, 4), (20, 25))
        """
        r = self._check_reward(reward)
        H = self.horizon
        Q = np.zeros((H, self.n_states, self.n_actions))
        v_next = np.zeros(self.n_states)
        for t in range(H - 1, -1, -1):
            cont = self.P @ v_next  # (S, A)
            Q[t] = r + np.where(self.terminal[:, None], 0.0, cont)
            v_next = Q[t].max(axis=1)
        return Q, Q.argmax(axis=2)

    def one_hot_policy(self, greedy: np.ndarray) -> np.ndarray:
        """A deterministic policy ``(H, S)`` of action indices as probabilities ``(H, S, A)``."""
        return np.eye(self.n_actions)[np.asarray(greedy)]

    def _as_probs(self, policy: Any) -> np.ndarray:
        p = np.asarray(policy)
        H, S, A = self.horizon, self.n_states, self.n_actions
        if p.shape == (H, S) and np.issubdtype(p.dtype, np.integer):
            return self.one_hot_policy(p)
        if p.shape == (S,) and np.issubdtype(p.dtype, np.integer):
            return self.one_hot_policy(np.broadcast_to(p, (H, S)))
        if p.shape == (H, S, A):
            return p.astype(np.float64)
        raise ValueError(
            f"policy must be actions (H, S) = ({H}, {S}) or probabilities (H, S, A), got {p.shape}"
        )

    def evaluate(self, policy: Any, reward: Any | None = None) -> float:
        """Exact expected return of ``policy`` from the start distribution (true reward default)."""
        pi = self._as_probs(policy)
        r = self.reward if reward is None else self._check_reward(reward)
        d = self.start.copy()
        total = 0.0
        for t in range(self.horizon):
            sa = d[:, None] * pi[t]
            total += float((sa * r).sum())
            sa = np.where(self.terminal[:, None], 0.0, sa)
            d = np.einsum("sa,sak->k", sa, self.P)
        return total

    def reset_batch(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` start states drawn from the start distribution."""
        return rng.choice(self.n_states, size=n, p=self.start)

    def step_batch(
        self, states: np.ndarray, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample next states; returns ``(next_states, done)`` (done: the state was terminal)."""
        probs = self.P[states, actions]
        u = rng.random(len(states))[:, None]
        nxt = (probs.cumsum(axis=1) < u).sum(axis=1)
        return np.minimum(nxt, self.n_states - 1), self.terminal[states]

    def sample(
        self, policy: Any, n: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``n`` rollouts: ``(states (n, H), actions (n, H), mask (n, H), true_returns (n,))``."""
        pi = self._as_probs(policy)
        H = self.horizon
        s = self.reset_batch(n, rng)
        obs = np.zeros((n, H), dtype=np.int64)
        acts = np.zeros((n, H), dtype=np.int64)
        mask = np.zeros((n, H), dtype=bool)
        alive = np.ones(n, dtype=bool)
        for t in range(H):
            cdf = pi[t, s].cumsum(axis=1)
            a = np.minimum((cdf < rng.random(n)[:, None]).sum(axis=1), self.n_actions - 1)
            obs[:, t], acts[:, t], mask[:, t] = s, a, alive
            s_next, done = self.step_batch(s, a, rng)
            alive = alive & ~done
            s = np.where(alive, s_next, s)
        returns = (self.reward[obs, acts] * mask).sum(axis=1)
        return obs, acts, mask, returns


class PendulumSwingUp:
    """A 4-parameter controller family for Pendulum-v1: energy pumping, then PD near the top.

    With ``θ`` the angle from upright and ``E = ½θ̇² + 15(cos θ − 1)`` (0 at the top; for
    Pendulum-v1, ``θ̈ = 15 sin θ + 3u`` so ``dE/dt = 3uθ̇``)::

        u = −k_p θ − k_d θ̇          if cos θ > c,
        u = k_e (−E) θ̇              otherwise,   clipped to [−2, 2].

    Parameters ``x = (k_e, k_p, k_d, c)``.
    """

    dim = 4

    def __init__(self) -> None:
        self.init_mean = np.array([0.1, 6.0, 1.0, 0.8])
        self.init_std = np.array([0.1, 5.0, 1.0, 0.15])

    def policy(self, params: Any) -> Callable[[np.ndarray], np.ndarray]:
        """The controller with parameters ``params (4,)`` as ``obs (3,) -> action (1,)``."""
        x = np.asarray(params, dtype=np.float64)
        if x.shape != (self.dim,) or not np.isfinite(x).all():
            raise ValueError(f"params must be a finite vector of shape (4,), got {x.shape}")
        k_e, k_p, k_d, c = x

        def act(obs: np.ndarray) -> np.ndarray:
            cos, sin, thdot = float(obs[0]), float(obs[1]), float(obs[2])
            th = np.arctan2(sin, cos)
            if cos > c:
                u = -k_p * th - k_d * thdot
            else:
                energy = 0.5 * thdot * thdot + 15.0 * (cos - 1.0)
                u = k_e * (-energy) * thdot
            return np.array([min(max(u, -2.0), 2.0)], dtype=np.float32)

        return act


def make_pendulum(horizon: int = 200) -> Any:
    """``gymnasium.make("Pendulum-v1", max_episode_steps=horizon)`` (needs ``r4-rl[gym]``)."""
    try:
        import gymnasium
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("Pendulum needs gymnasium: `pip install r4-rl[gym]`") from exc
    return gymnasium.make("Pendulum-v1", max_episode_steps=horizon)
