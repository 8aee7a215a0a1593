"""What a user gets on bad input: a clear error or a warning, never a silent answer."""

from __future__ import annotations

import numpy as np
import pytest

import costly_cp as cc
from icml26_shared.state import StateFileError

RNG = np.random.default_rng(0)
PROBS = RNG.dirichlet(np.full(5, 0.3), size=600)
Y = np.array([RNG.choice(5, p=p) for p in PROBS])


def _cal(**kw):
    return cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level=0.9, n_future=1e4, **kw)


@pytest.mark.parametrize("seed", [0, 5, np.int64(3), None, np.random.default_rng(1), 2**40])
def test_seed_accepted(seed):
    cal = _cal(shuffle=True, seed=seed)
    assert isinstance(cal.seed, int) and cal.seed >= 0


@pytest.mark.parametrize(
    ("seed", "err"), [("1", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]
)
def test_seed_refused(seed, err):
    with pytest.raises(err, match="seed must be"):
        _cal(shuffle=True, seed=seed)
    with pytest.raises(err, match="seed must be"):
        cc.pac_label(PROBS[:50], lambda i: int(Y[i]), score_fn=cc.lac_scores, seed=seed)


def test_int_seed_keeps_its_order():
    a = _cal(shuffle=True, seed=np.int64(4)).conformalize(PROBS, lambda i: int(Y[i])).result_
    b = _cal(shuffle=True, seed=4).conformalize(PROBS, lambda i: int(Y[i])).result_
    np.testing.assert_array_equal(a.labeled_indices, b.labeled_indices)


def test_contradictory_label_limits_refused():
    with pytest.raises(ValueError, match="max_labels must be >= min_labels"):
        _cal(max_labels=5, min_labels=50)


def test_exhausted_short_stream_warns_about_the_infinite_threshold():
    with pytest.warns(cc.StreamExhaustedWarning, match=r"threshold is \+inf.*ran out after 5"):
        res = _cal().conformalize(PROBS[:5], lambda i: int(Y[i])).result_
    assert res.stopped_by == "exhausted" and np.isposinf(res.threshold)


def test_load_json_truncated_or_foreign():
    text = _cal().conformalize(PROBS, lambda i: int(Y[i])).to_json()
    with pytest.raises(StateFileError, match="load_json"):
        _cal().load_json(text[: len(text) // 2])
    with pytest.raises(StateFileError, match="not a costly-cp LabelBudgetCalibrator state"):
        _cal().load_json('{"method": "up"}')


def test_save_load_file(tmp_path):
    cal = _cal().conformalize(PROBS, lambda i: int(Y[i]))
    path = cal.save(tmp_path / "cal.json")
    back = _cal().load(path).conformalize(PROBS, lambda i: 1 / 0)  # every label is held
    assert back.result_.threshold == cal.result_.threshold
    (tmp_path / "cut.json").write_text(path.read_text()[:40])
    with pytest.raises(StateFileError, match=r"cut\.json"):
        _cal().load(tmp_path / "cut.json")
    (tmp_path / "junk.json").write_bytes(RNG.bytes(50))
    with pytest.raises(StateFileError, match=r"junk\.json"):
        _cal().load(tmp_path / "junk.json")
    (tmp_path / "other.json").write_text('{"method": "up", "states": null}')
    with pytest.raises(StateFileError, match=r"other\.json.*saved by something else"):
        _cal().load(tmp_path / "other.json")


def test_predict_set_and_interval_shapes():
    cal = _cal().conformalize(PROBS, lambda i: int(Y[i]))
    with pytest.raises(ValueError, match="scores must have 5 columns"):
        cal.predict_set(np.ones((2, 3)))
    with pytest.raises(ValueError, match="upper must be >= lower"):
        cal.predict_interval([2.0], [1.0])


@pytest.mark.parametrize(
    ("call", "err", "match"),
    [
        (lambda: _cal(shuffle="yes"), TypeError, "shuffle must be True or False"),
        (
            lambda: cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level="0.9"),
            TypeError,
            "confidence_level must be a real number",
        ),
        (lambda: cc.pac_rank(100, 0.1, 0.1, -10), ValueError, "n_target must hold"),
        (lambda: cc.optimal_size(None, 1, 10), TypeError, "model must be a CostModel"),
        (lambda: cc.IntervalScores(None), TypeError, "predict_fn must be callable"),
    ],
)
def test_bad_settings_refused(call, err, match):
    with pytest.raises(err, match=match):
        call()
