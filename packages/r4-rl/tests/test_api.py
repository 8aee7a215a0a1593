"""Public API exactly as exported; optional extras import lazily; docstring examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

import r4_rl
import r4_rl.baselines
import r4_rl.data
import r4_rl.envs
from icml26_shared.testing import assert_import_is_light


def test_public_api_exact():
    assert r4_rl.__all__ == [
        "CEMResult", "FitResult", "LearnedRewardWrapper", "Rater", "RewardModel", "Trajectories",
        "cem_search", "fit_r4", "kendall_tau", "q_learning", "rmse_loss", "rollout", "soft_rank",
    ]  # fmt: skip
    assert r4_rl.baselines.__all__ == ["fit_bt", "fit_rbrl", "fit_regression", "rbrl_loss"]
    assert r4_rl.data.__all__ == ["Trajectories", "gridworld_pool", "pendulum_pool"]
    assert r4_rl.envs.__all__ == [
        "Box",
        "Discrete",
        "GridWorld",
        "PendulumSwingUp",
        "make_pendulum",
    ]
    for mod in (r4_rl.baselines, r4_rl.data, r4_rl.envs):
        for name in mod.__all__:
            assert hasattr(mod, name)
    for name in r4_rl.__all__:
        if name != "LearnedRewardWrapper":
            assert hasattr(r4_rl, name)


def test_core_import_does_not_load_extras():
    assert_import_is_light("r4_rl", ["gymnasium", "matplotlib", "cvxpy", "scipy.stats", "sklearn"])


def test_version_from_metadata():
    import importlib.metadata

    assert r4_rl.__version__ == importlib.metadata.version("r4-rl")


MODULES = [
    "r4_rl._softrank", "r4_rl._model", "r4_rl._rater", "r4_rl._envs", "r4_rl._metrics",
    "r4_rl._data", "r4_rl._planners", "r4_rl._r4", "r4_rl._baselines",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0
