"""One seed rule: integers, numpy integers, Generators and None accepted; the rest refused."""

from __future__ import annotations

import numpy as np
import pytest

from perturbedvae import PerturbedVAE, energy_distance
from perturbedvae.data import simulate_screen

ACCEPTED = [0, 3, np.int64(3), np.uint8(7), None, "generator"]
REFUSED = [("3", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


def _entry(name, seed, split, model):
    if name == "simulate_screen":
        return simulate_screen(
            n_cells=10, n_controls=20, n_singles=3, n_doubles=1, n_genes=60, n_mc=50, seed=seed
        )
    if name == "energy_distance":
        rng = np.random.default_rng(1)
        return energy_distance(rng.normal(size=(8, 3)), rng.normal(size=(9, 3)), seed=seed)
    if name == "fit":
        return PerturbedVAE(100, 12, hidden=8).fit(split.train, epochs=1, seed=seed, progress=False)
    cond = next(c for c in split.train.conditions if c != "ctrl")
    return model.predict(cond, n_cells=5, seed=seed)


NAMES = ["simulate_screen", "energy_distance", "fit", "predict"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", ACCEPTED, ids=repr)
def test_seed_kinds_accepted(name, seed, split, model):
    _entry(name, _seed(seed), split, model)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("seed", "err"), REFUSED, ids=repr)
def test_bad_seeds_refused(name, seed, err, split, model):
    with pytest.raises(err, match="seed must be"):
        _entry(name, seed, split, model)


def test_numpy_integer_seed_is_the_int_seed():
    kw = dict(n_cells=10, n_controls=20, n_singles=3, n_doubles=1, n_genes=60, n_mc=50)
    a, b = simulate_screen(seed=np.int64(2), **kw), simulate_screen(seed=2, **kw)
    np.testing.assert_array_equal(a.train.X, b.train.X)
