"""What a user gets on bad input: a clear error or a warning, never a silent answer."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.testing import assert_follows_seed_rule
from r4_rl import Rater, RewardModel, kendall_tau
from r4_rl.envs import GridWorld

ENV = GridWorld()
SEEDED = {
    "RewardModel": lambda seed: RewardModel(ENV.observation_space, ENV.action_space, seed=seed),
    "Rater": lambda seed: Rater(n_bins=3, seed=seed),
}


@pytest.mark.parametrize("fn", sorted(SEEDED))
def test_seed_rule(fn):
    assert_follows_seed_rule(SEEDED[fn])


def test_int_seed_same_initial_weights():
    a = SEEDED["RewardModel"](np.int64(3)).reward_table()
    b = SEEDED["RewardModel"](3).reward_table()
    assert bool((a == b).all())


def test_fit_seed_refused():
    from r4_rl import fit_r4
    from r4_rl.data import gridworld_pool

    trajs, _ = gridworld_pool(ENV, 12, seed=0)
    model = SEEDED["RewardModel"](0)
    with pytest.raises(TypeError, match="seed must be"):
        fit_r4(model, trajs, np.arange(12) % 3, epochs=1, seed="0", progress=False)


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"gamma": "0.9"}, "gamma must be a real number"), ({"hidden": (1.5,)}, "integer widths")],
)
def test_model_settings_refused(kw, match):
    with pytest.raises(TypeError, match=match):
        RewardModel(ENV.observation_space, ENV.action_space, **kw)


def test_kendall_tau_of_a_constant_warns():
    with pytest.warns(UserWarning, match="pred is constant"):
        assert kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == 0.0
