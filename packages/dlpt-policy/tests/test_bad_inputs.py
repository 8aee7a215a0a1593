"""What a user gets on bad input: a clear error, never a silent answer."""

from __future__ import annotations

import numpy as np
import pytest

from dlpt import DLPT
from dlpt.baselines import DRBestArmPolicy
from dlpt.data import simulate_rct

SEEDED = {
    "DLPT": lambda seed: DLPT(seed=seed).seed,
    "DRBestArmPolicy": lambda seed: DRBestArmPolicy(seed=seed).seed,
    "simulate_rct": lambda seed: simulate_rct(20, seed=seed).y,
}


@pytest.mark.parametrize("seed", [0, 7, np.int64(3), None, np.random.default_rng(1)])
@pytest.mark.parametrize("fn", sorted(SEEDED))
def test_seed_accepted(fn, seed):
    SEEDED[fn](seed)


def test_dlpt_seed_none_and_generator_give_an_int_seed():
    assert isinstance(DLPT(seed=None).seed, int)
    assert DLPT(seed=np.random.default_rng(0)).seed == DLPT(seed=np.random.default_rng(0)).seed
    assert DLPT(seed=np.int64(3)).seed == 3


@pytest.mark.parametrize(
    ("seed", "err"), [("1", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]
)
@pytest.mark.parametrize("fn", sorted(SEEDED))
def test_seed_refused(fn, seed, err):
    with pytest.raises(err, match="seed must be"):
        SEEDED[fn](seed)


def test_int_seed_same_data():
    np.testing.assert_array_equal(simulate_rct(20, seed=np.int64(3)).y, simulate_rct(20, seed=3).y)


def test_true_value_checks_its_arguments():
    d = simulate_rct(20, seed=0)
    with pytest.raises(TypeError, match="seed must be"):
        d.true_value(1.0, n_mc=100, seed="x")
    with pytest.raises(ValueError, match="n_mc must be an integer >= 1"):
        d.true_value(1.0, n_mc=0)


@pytest.mark.parametrize("kw", [{"lr": "0.1"}, {"weight_decay": "0"}])
def test_text_settings_refused(kw):
    with pytest.raises(TypeError, match="must be a real number"):
        DLPT(**kw)


def test_fit_progress_lines_when_asked(capsys):
    d = simulate_rct(300, seed=0)
    with pytest.warns(UserWarning, match="degree q = K - 1"):
        DLPT(hidden=(4,), folds=2, epochs=2).fit(d.X, d.t, d.y, d.arms, d.probs, progress=None)
    err = capsys.readouterr().err
    assert "DLPT.fit: training" in err or err == ""  # a bar on a terminal, lines when piped
