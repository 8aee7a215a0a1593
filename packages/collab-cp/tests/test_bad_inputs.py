"""What a user gets on bad input: a clear error or a warning, never a silent answer."""

from __future__ import annotations

import numpy as np
import pytest

from collab_cp import (
    CollaborativeConformal,
    CollaborativeRegressor,
    OnlineCollaborative,
    calibrate_thresholds,
    collaborative_sets,
)
from collab_cp.data import heteroscedastic_regression, shifting_stream, synthetic_collaboration
from icml26_shared.state import StateFileError
from icml26_shared.testing import assert_follows_seed_rule

D = synthetic_collaboration(600, seed=0)

SEEDED = {
    "synthetic_collaboration": lambda seed: synthetic_collaboration(30, seed=seed).y,
    "shifting_stream": lambda seed: shifting_stream(30, seed=seed).y,
    "heteroscedastic_regression": lambda seed: heteroscedastic_regression(30, seed=seed).y,
}


@pytest.mark.parametrize("fn", sorted(SEEDED))
def test_seed_rule(fn):
    assert_follows_seed_rule(SEEDED[fn])


@pytest.mark.parametrize("fn", sorted(SEEDED))
def test_int_seed_same_numbers(fn):
    np.testing.assert_array_equal(SEEDED[fn](np.int64(3)), SEEDED[fn](3))


def test_from_json_truncated_or_foreign():
    text = OnlineCollaborative(0.1, 0.5).to_json()
    with pytest.raises(StateFileError, match="from_json"):
        OnlineCollaborative.from_json(text[: len(text) // 2])
    with pytest.raises(ValueError, match="state_dict"):
        OnlineCollaborative.from_json('{"method": "up"}')


def test_save_load_file(tmp_path):
    on = OnlineCollaborative(0.1, 0.5)
    path = on.save(tmp_path / "on.json")
    assert OnlineCollaborative.load(path).to_json() == on.to_json()
    (tmp_path / "cut.json").write_text(path.read_text()[:30])
    with pytest.raises(StateFileError, match=r"cut\.json"):
        OnlineCollaborative.load(tmp_path / "cut.json")
    (tmp_path / "junk.json").write_bytes(np.random.default_rng(0).bytes(40))
    with pytest.raises(StateFileError, match=r"junk\.json"):
        OnlineCollaborative.load(tmp_path / "junk.json")
    (tmp_path / "other.json").write_text('{"config": {"n_labels": 3}, "labels": []}')
    with pytest.raises(StateFileError, match=r"other\.json"):
        OnlineCollaborative.load(tmp_path / "other.json")


@pytest.mark.parametrize("cls", [CollaborativeConformal, CollaborativeRegressor])
def test_levels_as_text_refused(cls):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        cls("0.1", 0.5)


def test_masks_must_be_boolean():
    with pytest.raises(TypeError, match="human_mask must be a boolean mask"):
        collaborative_sets(np.ones((2, 3)), np.full((2, 3), 0.5), 1.0, 1.0)
    with pytest.raises(TypeError, match="in_human must be a boolean mask"):
        calibrate_thresholds(np.ones(4), np.array(["a", "b", "c", "d"]), 0.1, 0.5)


def test_too_few_points_outside_the_human_set_warns():
    s = np.arange(1.0, 11.0)
    inside = np.r_[np.ones(8, bool), np.zeros(2, bool)]
    with pytest.warns(UserWarning, match="augment threshold a is \\+inf: only 2"):
        calibrate_thresholds(s, inside, 0.1, 0.9)


def test_predict_set_refuses_another_label_space():
    cc = CollaborativeConformal(0.1, 0.5).conformalize(D.probs, D.human, D.y)
    p3 = D.probs[:5, :3] / D.probs[:5, :3].sum(1, keepdims=True)
    with pytest.raises(ValueError, match="probs must have 10 columns"):
        cc.predict_set(p3, D.human[:5, :3])
