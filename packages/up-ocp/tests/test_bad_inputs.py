"""What a user gets on bad input: a clear error or a warning, never a silent answer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from icml26_shared.state import StateFileError
from up_ocp import OnlineConformal, run_algorithm, up_ocp
from up_ocp.baselines import dtaci

RNG = np.random.default_rng(0)
S = np.abs(RNG.standard_normal((3, 200)))


def test_dataframe_index_is_time():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(S.T)  # 200 rows of time, 3 streams
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = OnlineConformal("up").run(df)
    assert q.shape == (200, 3)
    np.testing.assert_array_equal(q, OnlineConformal("up").run(S).T)
    q2, _ = run_algorithm(up_ocp(0.1), df)
    np.testing.assert_array_equal(q2, q)
    q3 = OnlineConformal("up", two_sided=True).run(df - 0.5)
    assert q3.shape == (2, 200, 3)


def test_ambiguous_time_axis_warns():
    with pytest.warns(UserWarning, match=r"500 streams of 3 rounds.*scores.T"):
        OnlineConformal("up").run(np.abs(RNG.standard_normal((500, 3))))


@pytest.mark.parametrize("bad", [-S, np.r_[1.0, -np.inf]])
def test_one_sided_run_refuses_negative_scores(bad):
    with pytest.raises(ValueError, match=r"non-negative.*two_sided=True"):
        OnlineConformal("up").run(bad)


def test_one_sided_update_score_refuses_negative_and_two_sided_takes_it():
    with pytest.raises(ValueError, match=r"score must be non-negative"):
        OnlineConformal("up").update_score(-1.0)
    OnlineConformal("up", two_sided=True).update_score(-1.0)


@pytest.mark.parametrize("bad", ["1.5", np.array(["1.5"]), None, [None], {"a": 1}])
def test_update_score_refuses_non_numbers(bad):
    with pytest.raises(TypeError, match=r"score must be numeric"):
        OnlineConformal("up").update_score(bad)


def test_update_score_refuses_nan():
    with pytest.raises(ValueError, match=r"NaN"):
        OnlineConformal("up").update_score(np.nan)


def test_quantile_tracking_warns_when_a_fixed_step_is_off_the_score_scale():
    with pytest.warns(UserWarning, match=r"lr=0.1 x scale=1 is a step in score units"):
        OnlineConformal("quantile_tracking", lr=0.1, scale=1.0).run(116 * S)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OnlineConformal("quantile_tracking", lr=10.0, scale=1.0).run(116 * S)
        OnlineConformal("quantile_tracking", lr=0.1, scale=116.0).run(116 * S)


def test_quantile_tracking_default_step_is_relative_to_the_score_scale():
    """lr=0.1 on scores of median ~116 (the unemployment series' scale) covers as at scale 1
    and the thresholds scale exactly with the scores; the fixed step misses almost always."""
    s = np.abs(np.random.default_rng(1).standard_normal((3, 2000)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q1 = OnlineConformal("quantile_tracking", lr=0.1).run(s)
        q116 = OnlineConformal("quantile_tracking", lr=0.1).run(116 * s)
    np.testing.assert_allclose(q116, 116 * q1, rtol=1e-12)
    miss = (116 * s > q116).mean()
    # binomial s.d. at n = 6000 is 0.004; the warm-up (~25 misses per stream) adds ~0.012
    assert abs(miss - 0.1) <= 0.03, miss
    with pytest.warns(UserWarning, match="score units"):
        q_fixed = OnlineConformal("quantile_tracking", lr=0.1, scale=1.0).run(116 * s)
    assert (116 * s > q_fixed).mean() > 0.5


@pytest.mark.parametrize("scale", ["median", -1.0, 0.0, True])
def test_quantile_tracking_refuses_a_bad_scale(scale):
    with pytest.raises((ValueError, TypeError), match="scale"):
        OnlineConformal("quantile_tracking", scale=scale)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"confidence_level": "0.9"}, TypeError, "confidence_level must be a number"),
        ({"two_sided": "no"}, TypeError, "two_sided must be True or False"),
        ({"prior": (-1.0, 0.5)}, ValueError, r"prior\[0\] must be finite and > 0"),
        ({"q0": np.nan}, ValueError, "q0 must be finite"),
    ],
)
def test_constructor_refuses(kwargs, err, match):
    with pytest.raises(err, match=match):
        OnlineConformal("up", **kwargs)


def test_dtaci_refuses_non_positive_steps():
    with pytest.raises(ValueError, match=r"gammas must be"):
        dtaci(0.1, gammas=[-1.0, 0.1])


def test_reset_refuses_text_shape():
    with pytest.raises(TypeError, match=r"shape must be an int"):
        OnlineConformal("up").reset("a")


def test_from_json_truncated_or_foreign():
    oc = OnlineConformal("up")
    oc.run(S)
    text = oc.to_json()
    with pytest.raises(StateFileError, match=r"from_json.*up-ocp OnlineConformal state"):
        OnlineConformal.from_json(text[: len(text) // 2])
    with pytest.raises(StateFileError, match=r"not an up-ocp OnlineConformal state"):
        OnlineConformal.from_json('{"threshold": 1.0}')


def test_save_load_roundtrip_truncated_and_foreign(tmp_path):
    oc = OnlineConformal("aci", gamma=0.01)
    oc.run(S)
    path = oc.save(tmp_path / "oc.json")
    back = OnlineConformal.load(path)
    np.testing.assert_array_equal(back.threshold, oc.threshold)
    bad = tmp_path / "truncated.json"
    bad.write_text(path.read_text()[:50])
    with pytest.raises(StateFileError, match=r"truncated.json.*OnlineConformal state"):
        OnlineConformal.load(bad)
    junk = tmp_path / "junk.json"
    junk.write_bytes(np.random.default_rng(1).bytes(64))
    with pytest.raises(StateFileError, match=r"junk.json"):
        OnlineConformal.load(junk)
    other = tmp_path / "other.json"
    other.write_text('{"n_labels": 3, "threshold": 0.5}')
    with pytest.raises(StateFileError, match=r"other.json.*saved by something else"):
        OnlineConformal.load(other)


@pytest.mark.parametrize(
    "bad",
    [np.array([["1.5", "2.0"] * 20]), np.array([["1.5", 2.0] * 20], dtype=object)],
)
def test_run_refuses_text_arrays(bad):
    with pytest.raises(TypeError, match="scores must be numeric"):
        OnlineConformal("up").run(bad)
    with pytest.raises(TypeError, match="scores must be numeric"):
        run_algorithm(up_ocp(0.1), bad)
    with pytest.raises(TypeError, match="y_hat must be numeric"):
        OnlineConformal("up").predict_interval(np.array(["0.1"]))
