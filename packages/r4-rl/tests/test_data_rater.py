"""Trajectories validation, segments, and the simulated rater's statistics."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from r4_rl import Rater, Trajectories
from r4_rl.data import gridworld_pool
from r4_rl.envs import GridWorld


def test_from_episodes_pads_and_masks():
    t = Trajectories.from_episodes(
        [np.zeros((3, 2)), np.ones((1, 2))], [np.zeros((3, 1))] * 1 + [np.ones((1, 1))]
    )
    assert t.obs.shape == (2, 3, 2) and t.lengths.tolist() == [3, 1]
    assert t.mask.tolist() == [[True, True, True], [True, False, False]]
    seg = Trajectories(np.zeros((1, 5), dtype=int), np.zeros((1, 5), dtype=int)).segments(2)
    assert len(seg) == 3 and seg.lengths.tolist() == [2, 2, 1]


@pytest.mark.parametrize(
    ("obs", "acts", "mask", "message"),
    [
        (np.full((2, 3, 1), np.nan), np.zeros((2, 3, 1)), None, "obs must be finite"),
        (np.full((2, 3, 1), np.inf), np.zeros((2, 3, 1)), None, "obs must be finite"),
        (np.zeros((2, 3, 1)), np.zeros((2, 4, 1)), None, "acts must have leading shape"),
        (np.zeros((2, 3, 1)), np.zeros((2, 3, 1)), np.ones((2, 2), bool), "mask must have shape"),
        (
            np.zeros((2, 3, 1)),
            np.zeros((2, 3, 1)),
            np.array([[1, 1, 1], [0, 0, 0]], bool),
            "at least one step",
        ),
        (np.zeros((0, 3, 1)), np.zeros((0, 3, 1)), None, "at least one step"),
        (np.zeros((2, 0, 1)), np.zeros((2, 0, 1)), None, "at least one step"),
        (np.zeros((2, 3), complex), np.zeros((2, 3)), None, "real-valued"),
        (np.zeros(3), np.zeros(3), None, "obs must have shape"),
    ],
)
def test_trajectories_bad_input(obs, acts, mask, message):
    with pytest.raises(ValueError, match=message):
        Trajectories(obs, acts, mask)


def test_from_episodes_rejects_zero_length_and_empty():
    with pytest.raises(ValueError, match="zero-length"):
        Trajectories.from_episodes([np.zeros((0, 2))], [np.zeros((0, 1))])
    with pytest.raises(ValueError, match="empty"):
        Trajectories.from_episodes([], [])


def test_quantile_bins_are_balanced_without_noise():
    g = np.random.default_rng(0).normal(size=5000)
    r = Rater(5, noise=0.0).fit(g).rate(g)
    counts = np.bincount(r, minlength=5)
    assert counts.min() >= 990 and counts.max() <= 1010


def test_flips_are_adjacent_and_at_the_stated_rate():
    g = np.random.default_rng(1).normal(size=4000)
    clean = Rater(5, noise=0.0, seed=3).fit(g).rate(g)
    flipped = Rater(5, noise=0.0, flip_prob=0.1, seed=3).fit(g).rate(g)
    changed = clean != flipped
    assert np.all(np.abs(clean - flipped)[changed] == 1)
    lo, hi = binom.ppf([1e-4, 1 - 1e-4], len(g), 0.1)
    assert lo <= changed.sum() <= hi


def test_unused_bins_and_noise_scale():
    g = np.random.default_rng(2).normal(size=2000)
    r = Rater(5, noise=0.0, unused_bins=2).fit(g).rate(g)
    assert set(np.unique(r).tolist()) == {0, 2, 4}
    rater = Rater(5, noise=0.5, seed=0).fit(g)
    diff = rater.noisy_returns(g) - g
    assert abs(diff.std() - 0.5 * g.std()) < 0.05 * g.std()


def test_compare_prefs_follow_returns_without_noise():
    g = np.arange(50.0)
    pairs, prefs = Rater(5, noise=0.0, seed=0).fit(g).compare(g, 200)
    assert np.all(pairs[:, 0] != pairs[:, 1])
    np.testing.assert_array_equal(prefs, (g[pairs[:, 0]] > g[pairs[:, 1]]).astype(float))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_bins": 1}, "n_bins"),
        ({"noise": -0.1}, "noise"),
        ({"flip_prob": 1.5}, "flip_prob"),
        ({"unused_bins": 4}, "unused_bins"),
        ({"edges": [2.0, 1.0, 3.0, 4.0]}, "edges"),
    ],
)
def test_rater_bad_config(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rater(**kwargs)


def test_rater_bad_calls():
    with pytest.raises(ValueError, match="fitted first"):
        Rater(5).rate(np.zeros(3))
    rater = Rater(5).fit(np.arange(10.0))
    with pytest.raises(ValueError, match="budget must be at most the pool size 10"):
        rater.query(np.arange(10.0), 11)
    with pytest.raises(ValueError, match="returns must be finite"):
        rater.rate(np.array([1.0, np.nan]))


def test_gridworld_pool_is_mixed():
    trajs, g = gridworld_pool(GridWorld(), 200, seed=0)
    assert len(trajs) == 200 and g.std() > 5
    assert (trajs.lengths < 20).any() and (trajs.lengths == 20).any()
