"""Q-learning and CEM on known rewards, the learned-reward wrapper, bad environments."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from r4_rl import RewardModel, cem_search, q_learning, rollout
from r4_rl.envs import Box, GridWorld, PendulumSwingUp


def test_q_learning_on_true_reward_is_near_optimal():
    env = GridWorld()
    _, pi_star = env.value_iteration(env.reward)
    j_star = env.evaluate(pi_star)
    j_rand = env.evaluate(np.full((env.horizon, env.n_states, env.n_actions), 0.25))
    pi = q_learning(env, env.reward, episodes=10_000, seed=0)
    assert (env.evaluate(pi) - j_rand) / (j_star - j_rand) > 0.9


def test_q_learning_accepts_model_and_callable():
    env = GridWorld(horizon=5)
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    assert q_learning(env, model, episodes=200, seed=0).shape == (5, 25)
    assert q_learning(env, lambda s, a: -np.ones(len(s)), episodes=200, seed=0).shape == (5, 25)


def test_tabular_methods_refuse_continuous_spaces():
    class BoxEnv:
        observation_space = Box((3,))
        action_space = Box((1,))

    with pytest.raises(ValueError, match="must be Discrete for tabular"):
        q_learning(BoxEnv(), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="Box space for CEM"):
        cem_search(GridWorld(), PendulumSwingUp())

    class Weird:
        observation_space = "MultiBinary"
        action_space = Box((1,))

    with pytest.raises(ValueError, match="Box or Discrete"):
        q_learning(Weird(), np.zeros((3, 1)))


def test_bad_reward_table():
    with pytest.raises(ValueError, match="reward_fn must give finite rewards"):
        q_learning(GridWorld(), np.zeros((3, 3)))


def test_cem_improves_on_pendulum():
    pytest.importorskip("gymnasium")
    from r4_rl.envs import make_pendulum

    env = make_pendulum(60)
    fam = PendulumSwingUp()
    fam.init_mean = np.array([0.0, 0.0, 0.0, 0.8])
    res = cem_search(env, fam, None, iterations=4, population=12, episodes=2, seed=0)
    start = np.mean([rollout(env, fam.policy(fam.init_mean), seed=s)[2].sum() for s in range(6)])
    found = np.mean([rollout(env, fam.policy(res.params), seed=s)[2].sum() for s in range(6)])
    assert found > start
    assert res.history.shape == (4,)


def test_learned_reward_wrapper():
    gym = pytest.importorskip("gymnasium")
    from r4_rl import LearnedRewardWrapper

    model = RewardModel(Box((3,)), Box((1,)), seed=0)
    env = LearnedRewardWrapper(gym.make("Pendulum-v1"), model)
    plain = gym.make("Pendulum-v1")
    obs, _ = env.reset(seed=3)
    obs_p, _ = plain.reset(seed=3)
    np.testing.assert_allclose(obs, obs_p)
    action = np.array([0.7], dtype=np.float32)
    _, r, *_, info = env.step(action)
    _, r_true, *_ = plain.step(action)
    assert info["true_reward"] == pytest.approx(r_true)
    with torch.no_grad():
        expect = float(model(torch.tensor(obs)[None], torch.tensor(action)[None], lead=1)[0])
    assert r == pytest.approx(expect)
    with pytest.raises(ValueError, match="observation_space must be box of size 5"):
        LearnedRewardWrapper(gym.make("Pendulum-v1"), RewardModel(Box((5,)), Box((1,))))
