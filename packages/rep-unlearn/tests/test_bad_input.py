"""One seed rule (numpy integers, Generators and None included) and bad sizes refused."""

from __future__ import annotations

import numpy as np
import pytest

import rep_unlearn as ru
from icml26_shared.testing import REFUSED_SEEDS, assert_follows_seed_rule


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


ENTRY_POINTS = {
    "gaussian_clusters": lambda s: ru.data.gaussian_clusters("class:0", n_per_class=10, seed=s),
    "Unlearner": lambda s: ru.Unlearner(seed=s),
    "digits_task": lambda s: ru.data.digits_task("class:0", seed=s),
}


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=str)
def test_seed_rule(fn):
    assert_follows_seed_rule(ENTRY_POINTS[fn])


@pytest.mark.parametrize(("seed", "err"), REFUSED_SEEDS, ids=repr)
def test_fit_original_refuses_bad_seeds(seed, err):
    task = ru.data.gaussian_clusters("class:0", n_per_class=10, seed=0)
    with pytest.raises(err, match="seed must be"):
        task.fit_original(seed=seed)


def test_numpy_integer_seed_is_the_int_seed():
    a = ru.data.gaussian_clusters("class:0", n_per_class=10, seed=np.int64(4))
    b = ru.data.gaussian_clusters("class:0", n_per_class=10, seed=4)
    assert np.array_equal(a.train.X.numpy(), b.train.X.numpy())
    assert ru.Unlearner(seed=np.int64(4)).seed == 4


def test_zero_dimensional_clusters_refused():
    with pytest.raises(ValueError, match="dim"):
        ru.data.gaussian_clusters("class:0", n_per_class=10, dim=0)
