"""What a user gets on bad input: a clear error, never a silent answer."""

from __future__ import annotations

import numpy as np
import pytest

import arm_ebm as ae
from arm_ebm.baselines import rejection_sample
from arm_ebm.data import planning_task
from icml26_shared.testing import assert_follows_seed_rule

SPACE = ae.SequenceSpace(3, 4, eos=2)
R = np.random.default_rng(0).normal(size=SPACE.n_sequences)
Q = ae.ebm_to_arm(ae.reward_to_steps(R, SPACE), SPACE)

SEEDED = {
    "sample": lambda seed: ae.sample(Q, SPACE, 3, seed=seed),
    "planning_task": lambda seed: planning_task(seed, min_letters=2, max_letters=4).space,
    "rejection_sample": lambda seed: rejection_sample(
        Q, np.ones(SPACE.n_sequences, bool), SPACE, 2, seed=seed, batch=10
    ),
}


@pytest.mark.parametrize("fn", sorted(SEEDED))
def test_seed_rule(fn):
    assert_follows_seed_rule(SEEDED[fn])


def test_int_seed_same_samples():
    assert ae.sample(Q, SPACE, 5, seed=np.int64(3)) == ae.sample(Q, SPACE, 5, seed=3)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ae.reward_to_steps(R.astype(str), SPACE),
        lambda: ae.ebm_to_arm(np.full(SPACE.shape, "0"), SPACE),
        lambda: ae.sample(np.full(SPACE.shape, "0"), SPACE, 2),
    ],
)
def test_text_tables_refused(call):
    with pytest.raises(TypeError, match="must be a real numeric array"):
        call()


def test_planning_task_refuses_contradictory_limits_and_nan_scale():
    with pytest.raises(ValueError, match="max_letters must be >= min_letters"):
        planning_task(0, min_letters=8, max_letters=4)
    with pytest.raises(ValueError, match="scale must be finite"):
        planning_task(0, scale=np.nan, min_letters=2, max_letters=4)


def test_rejection_sample_names_batch():
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        rejection_sample(Q, np.ones(SPACE.n_sequences, bool), SPACE, 2, batch=0)
