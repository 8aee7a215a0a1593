"""Trainers: R4 and the baselines learn ordering on the GridWorld; bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from r4_rl import Rater, RewardModel, Trajectories, fit_r4, kendall_tau
from r4_rl.baselines import fit_bt, fit_rbrl, fit_regression, rbrl_loss
from r4_rl.data import gridworld_pool
from r4_rl.envs import Box, Discrete, GridWorld


@pytest.fixture(scope="module")
def pool():
    env = GridWorld()
    trajs, g = gridworld_pool(env, 600, seed=0)
    rater = Rater(5, 0.1, seed=0).fit(g[:300])
    _, ratings = rater.query(g[:300], 300)
    return env, trajs.subset(np.arange(300)), trajs.subset(np.arange(300, 600)), g, ratings, rater


def _tau(model, trajs, g):
    with torch.no_grad():
        return kendall_tau(model.returns(trajs).numpy(), g)


def test_r4_learns_order(pool):
    env, train, test, g, ratings, _ = pool
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    res = fit_r4(model, train, ratings, 40, 0)
    assert res.losses[-1] < 0.5 * res.losses[0]
    # (an untrained model already reaches about 0.8: returns track trajectory length here)
    assert _tau(model, test, g[300:]) > 0.88


@pytest.mark.parametrize(("fit", "bar"), [(fit_rbrl, 0.8), (fit_regression, 0.0)])
def test_rating_baselines_improve(pool, fit, bar):
    env, train, test, g, ratings, _ = pool
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    res = fit(model, train, ratings, 40, 0)
    assert res.losses[-1] < res.losses[0]
    assert _tau(model, test, g[300:]) > bar


def test_bt_improves(pool):
    env, train, test, g, _, rater = pool
    pairs, prefs = rater.compare(g[:300], 300)
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    fit_bt(model, train, pairs, prefs, 40, 0)
    assert _tau(model, test, g[300:]) > 0.7


def test_rbrl_loss_prefers_the_right_order():
    ratings = torch.tensor([0, 0, 1, 1, 2, 2])
    good = rbrl_loss(torch.tensor([0.0, 0.1, 0.5, 0.55, 0.9, 1.0]), ratings, 3, 30.0)
    bad = rbrl_loss(torch.tensor([1.0, 0.9, 0.5, 0.55, 0.1, 0.0]), ratings, 3, 30.0)
    assert float(good) < float(bad)


def test_model_returns_and_presets():
    env = GridWorld()
    model = RewardModel(env.observation_space, env.action_space, "mini", seed=0)
    assert model.hidden == (5,)
    t = Trajectories(np.array([[0, 1, 2]]), np.array([[0, 1, 3]]), np.array([[1, 1, 0]], bool))
    table = model.reward_table().detach()
    torch.testing.assert_close(model.returns(t).detach(), (table[0, 0] + table[1, 1])[None])
    disc = RewardModel(env.observation_space, env.action_space, gamma=0.5, seed=0)
    tab = disc.reward_table().detach()
    torch.testing.assert_close(disc.returns(t).detach(), (tab[0, 0] + 0.5 * tab[1, 1])[None])
    box = RewardModel(Box((3,)), Box((1,)), seed=0)
    tb = Trajectories(np.ones((2, 4, 3)), np.ones((2, 4, 1)))
    assert box.returns(tb).shape == (2,)
    np.testing.assert_allclose(
        box.step_rewards(np.ones((4, 3)), np.ones((4, 1))).sum(),
        float(box.returns(tb)[0].detach()),
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    ("ratings", "message"),
    [
        (np.full(300, 2), "at least two distinct"),
        (np.r_[np.zeros(299), 0.5], "must be integers"),
        (np.r_[np.zeros(299), 7], r"in \[0, 5\)"),
        (np.r_[np.zeros(299), -1], r"in \[0, 5\)"),
        (np.zeros(10), r"shape \(300,\)"),
        (np.r_[np.zeros(299), np.nan], "must be integers"),
    ],
)
def test_bad_ratings(pool, ratings, message):
    env, train, *_ = pool
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    with pytest.raises(ValueError, match=message):
        fit_r4(model, train, ratings, 1, 0, n_bins=5)


def test_bad_hyperparameters(pool):
    env, train, _, _, ratings, _ = pool
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    with pytest.raises(ValueError, match="eps must be"):
        fit_r4(model, train, ratings, 1, 0, eps=0.0)
    with pytest.raises(ValueError, match="epochs"):
        fit_r4(model, train, ratings, 0, 0)
    with pytest.raises(ValueError, match="lr"):
        fit_r4(model, train, ratings, 1, 0, lr=-1.0)
    with pytest.raises(ValueError, match="kappa"):
        fit_rbrl(model, train, ratings, 1, 0, kappa=0.0)
    with pytest.raises(ValueError, match="pairs must"):
        fit_bt(model, train, np.zeros((3, 3), int), np.zeros(3), 1, 0)
    with pytest.raises(ValueError, match="prefs must"):
        fit_bt(model, train, np.zeros((3, 2), int), np.full(3, 2.0), 1, 0)
    box = RewardModel(Box((3,)), Box((1,)), seed=0)
    tb = Trajectories(np.ones((4, 2, 3)), np.ones((4, 2, 1)))
    with pytest.raises(ValueError, match="ood_weight"):
        fit_r4(box, tb, [0, 1, 0, 1], 1, 0, ood_weight=0.1)
    with pytest.raises(ValueError, match=r"trajs.obs must be floats with 3"):
        fit_r4(box, Trajectories(np.ones((4, 2, 2)), np.ones((4, 2, 1))), [0, 1, 0, 1], 1, 0)


def test_ood_term_runs_on_tabular(pool):
    env, train, _, _, ratings, _ = pool
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    res = fit_r4(model, train, ratings, 2, 0, ood_weight=0.1)
    assert np.isfinite(res.losses).all()


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((Discrete(3), Discrete(2)), {"gamma": 0.0}, "gamma"),
        ((Discrete(3), Discrete(2)), {"gamma": 1.5}, "gamma"),
        ((Discrete(3), Discrete(2)), {"hidden": "big"}, "hidden"),
        ((Discrete(3), Discrete(2)), {"hidden": (0,)}, "hidden"),
        ((object(), Discrete(2)), {}, "obs_space must be a Box or Discrete"),
        ((Discrete(3), "x"), {}, "act_space must be a Box or Discrete"),
    ],
)
def test_model_bad_config(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        RewardModel(*args, **kwargs)
