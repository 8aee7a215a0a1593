"""GridWorld: value iteration against known answers and brute force; exact evaluation vs MC."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from r4_rl.envs import GridWorld


def test_deterministic_optimum_is_shortest_path():
    env = GridWorld(size=5, hazards=(), slip=0.0, horizon=20)
    Q, _ = env.value_iteration(env.reward)
    for r, c in itertools.product(range(5), range(5)):
        d = (4 - r) + (4 - c)
        assert Q[0, env.state(r, c)].max() == pytest.approx(10.0 - d)


def _brute_force(env: GridWorld, s: int, t: int) -> float:
    """Expectimax by plain recursion over every action at every step (independent of VI)."""
    if t == env.horizon:
        return 0.0
    best = -np.inf
    for a in range(env.n_actions):
        value = env.reward[s, a]
        if not env.terminal[s]:
            value += sum(
                p * _brute_force(env, s2, t + 1) for s2, p in enumerate(env.P[s, a]) if p > 0
            )
        best = max(best, value)
    return best


def test_value_iteration_matches_brute_force_with_slip():
    env = GridWorld(size=3, goal=(2, 2), hazards=((1, 1),), slip=0.3, horizon=4)
    Q, _ = env.value_iteration(env.reward)
    for s in range(env.n_states):
        assert Q[0, s].max() == pytest.approx(_brute_force(env, s, 0), abs=1e-12)


def test_exact_evaluation_matches_monte_carlo():
    env = GridWorld()
    _, pi = env.value_iteration(env.reward)
    exact = env.evaluate(pi)
    rng = np.random.default_rng(0)
    *_, returns = env.sample(pi, 20_000, rng)
    se = returns.std() / np.sqrt(len(returns))
    assert abs(returns.mean() - exact) < 4 * se
    uniform = np.full((env.horizon, env.n_states, env.n_actions), 0.25)
    *_, ret_u = env.sample(uniform, 20_000, rng)
    assert abs(ret_u.mean() - env.evaluate(uniform)) < 4 * ret_u.std() / np.sqrt(len(ret_u))


def test_optimal_beats_random_and_sample_shapes():
    env = GridWorld()
    _, pi = env.value_iteration(env.reward)
    uniform = np.full((env.horizon, env.n_states, env.n_actions), 0.25)
    assert env.evaluate(pi) > env.evaluate(uniform) + 10
    obs, acts, mask, ret = env.sample(pi, 7, np.random.default_rng(1))
    assert obs.shape == acts.shape == mask.shape == (7, env.horizon)
    np.testing.assert_allclose(ret, (env.reward[obs, acts] * mask).sum(1))
    # a trajectory stops right after the goal step
    for o, m in zip(obs, mask):
        n = int(m.sum())
        assert m[:n].all() and not m[n:].any()
        if n < env.horizon:
            assert env.terminal[o[n - 1]]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": 1}, "size"),
        ({"slip": 1.5}, "slip"),
        ({"horizon": 0}, "horizon"),
        ({"goal": (7, 7)}, "on the grid"),
    ],
)
def test_bad_config(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GridWorld(**kwargs)


def test_bad_reward_and_policy():
    env = GridWorld()
    with pytest.raises(ValueError, match="reward must have shape"):
        env.value_iteration(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="reward must be finite"):
        env.value_iteration(np.full((25, 4), np.nan))
    with pytest.raises(ValueError, match="policy must be"):
        env.evaluate(np.zeros((2, 2)))
