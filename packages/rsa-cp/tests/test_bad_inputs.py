"""What a user gets on bad input: a clear error or a warning, never a silent answer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rsa_cp import RSAConformalRegressor, rsa_threshold, wasserstein_distance
from rsa_cp.baselines import randomized_split_threshold, split_threshold
from rsa_cp.data import regression_scores

RNG = np.random.default_rng(0)
CAL = RNG.lognormal(size=20)
REF = RNG.lognormal(size=500)


@pytest.mark.parametrize("seed", [0, 7, np.int64(3), None, np.random.default_rng(1)])
@pytest.mark.parametrize("fn", ["regression_scores", "randomized_split_threshold"])
def test_seed_accepted(fn, seed):
    if fn == "regression_scores":
        assert regression_scores("gamma", 5, seed=seed).shape == (5,)
    else:
        assert np.isfinite(randomized_split_threshold(CAL, 0.1, seed=seed))


@pytest.mark.parametrize(
    ("seed", "err"), [("1", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]
)
@pytest.mark.parametrize("fn", ["regression_scores", "randomized_split_threshold"])
def test_seed_refused(fn, seed, err):
    with pytest.raises(err, match="seed must be"):
        if fn == "regression_scores":
            regression_scores("gamma", 5, seed=seed)
        else:
            randomized_split_threshold(CAL, 0.1, seed=seed)


def test_int_seed_gives_the_same_numbers_as_numpy():
    np.testing.assert_array_equal(
        regression_scores("gamma", 5, seed=np.int64(3)), regression_scores("gamma", 5, seed=3)
    )


def test_tied_calibration_scores_warn_when_the_threshold_is_infinite():
    with pytest.warns(UserWarning, match=r"only 1 distinct values among 20 \(ties\)"):
        rule = rsa_threshold(np.ones(20), REF, 0.1)
    assert np.isposinf(rule.threshold)
    assert split_threshold(np.ones(20), 0.1) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rsa_threshold(np.ones(20), REF, 0.1, guarantee="marginal").threshold == 1.0
        rsa_threshold(CAL, REF, 0.1)  # continuous scores: no warning


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"window": "0.4"}, "window must be a real number"), ({"align": "no"}, "align must be True")],
)
def test_rsa_threshold_refuses_text_and_non_bool(kwargs, match):
    with pytest.raises(TypeError, match=match):
        rsa_threshold(CAL, REF, 0.1, **kwargs)


@pytest.mark.parametrize("p", [1.5, "2", 0])
def test_wasserstein_p_must_be_an_integer(p):
    with pytest.raises((TypeError, ValueError), match="p must be an integer >= 1"):
        wasserstein_distance(CAL, REF, p=p)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"confidence_level": "0.9"}, "confidence_level must be a real number"),
        ({"prefit": "no"}, "prefit must be True or False"),
    ],
)
def test_estimator_refuses_text_settings(kwargs, match):
    from sklearn.linear_model import LinearRegression

    with pytest.raises(TypeError, match=match):
        RSAConformalRegressor(LinearRegression(), **kwargs)


def test_an_infinite_threshold_from_too_few_scores_warns():
    s = np.abs(np.random.default_rng(0).normal(size=300))
    with pytest.warns(UserWarning, match=r"1 calibration scores are too few at alpha=0\.1"):
        assert np.isposinf(rsa_threshold(s[:1], s, alpha=0.1).threshold)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finite threshold stays silent
        assert np.isfinite(rsa_threshold(s[:20], s, alpha=0.1).threshold)
