import warnings

import numpy as np
import pytest

import rsa_cp
from rsa_cp import (
    RSAConformalClassifier,
    RSAConformalRegressor,
    coverage_bounds,
    diagnose,
    ot_alignment,
    rsa_threshold,
    split_threshold,
)


def test_public_api_is_exact():
    assert rsa_cp.__all__ == [
        "AlignmentMap",
        "CoverageBounds",
        "Diagnosis",
        "RSAConformalClassifier",
        "RSAConformalRegressor",
        "RSAThreshold",
        "beta_binomial_window",
        "coverage_bounds",
        "diagnose",
        "ot_alignment",
        "plot_qq",
        "randomized_split_threshold",
        "reference_threshold",
        "rsa_threshold",
        "spi_threshold",
        "split_threshold",
        "wasserstein_distance",
    ]
    for name in rsa_cp.__all__:
        assert hasattr(rsa_cp, name)


S = np.linspace(0.1, 2.0, 20)
R = np.linspace(0.05, 3.0, 500)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"alpha": 1.5}, ValueError, r"alpha must be in \(0, 1\), got 1.5"),
        ({"alpha": 0.0}, ValueError, "alpha must be in"),
        ({"window": 1.0}, ValueError, r"window must be in \(0, 1\), got 1.0"),
        ({"window": -0.1}, ValueError, "window must be in"),
        ({"guarantee": "strict"}, ValueError, "guarantee must be one of 'none', 'marginal'"),
        ({"guarantee": "marginal", "align": False}, ValueError, "needs align=True"),
        ({"alpha": "x"}, TypeError, "alpha must be a real number"),
    ],
)
def test_rsa_threshold_rejects_bad_settings(kwargs, error, match):
    with pytest.raises(error, match=match):
        rsa_threshold(S, R, **kwargs)


@pytest.mark.parametrize(
    ("cal", "ref", "match"),
    [
        ([], R, r"cal_scores must not be empty"),
        (S, [], r"ref_scores must not be empty"),
        (np.r_[S, np.nan], R, r"cal_scores must be finite, got nan at index 20"),
        (S, np.r_[R, np.inf], r"ref_scores must be finite, got inf"),
        (S.reshape(4, 5), R, r"cal_scores must have 1 dimension\(s\), got shape \(4, 5\)"),
    ],
)
def test_rsa_threshold_rejects_bad_scores(cal, ref, match):
    with pytest.raises(ValueError, match=match):
        rsa_threshold(cal, ref)


def test_small_reference_pool_warns():
    with pytest.warns(UserWarning, match="fewer than the 20 calibration scores"):
        rsa_threshold(S, R[:10])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rsa_threshold(S, R)  # no warning when N >= m


def test_estimator_bad_input():
    with pytest.raises(ValueError, match=r"confidence_level must be in \(0, 1\), got 1.2"):
        RSAConformalRegressor(confidence_level=1.2)
    with pytest.raises(ValueError, match="window must be in"):
        RSAConformalClassifier(window=0)
    with pytest.raises(ValueError, match="method must be one of 'rsa', 'spi', 'split'"):
        RSAConformalRegressor(method="jackknife")
    with pytest.raises(ValueError, match="needs method='rsa'"):
        RSAConformalRegressor(method="split", guarantee="marginal")
    with pytest.raises(TypeError, match="score='cqr' needs estimator"):
        RSAConformalRegressor(score="cqr")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    reg = RSAConformalRegressor()
    with pytest.raises(
        ValueError, match="arguments must have the same length, got X has 50, y has 49"
    ):
        reg.fit(X, y[:49])
    with pytest.raises(RuntimeError, match="call fit"):
        reg.predict(X)
    reg.fit(X, y)
    with pytest.raises(RuntimeError, match="call conformalize first"):
        reg.predict_interval(X)
    with pytest.raises(ValueError, match="needs reference scores"):
        reg.conformalize(X[:20], y[:20])
    with pytest.raises(ValueError, match="either reference_scores or reference_data"):
        reg.conformalize(X[:20], y[:20], reference_scores=R, reference_data=(X, y))
    with pytest.raises(ValueError, match="reference_scores must be finite"):
        reg.conformalize(X[:20], y[:20], reference_scores=np.r_[R, np.nan])
    with pytest.raises(ValueError, match="arguments must have the same length"):
        reg.conformalize(X[:20], y[:19], reference_scores=R)


def test_other_bad_input():
    with pytest.raises(ValueError, match="n_ref must be > n_cal"):
        coverage_bounds(20, 20)
    with pytest.raises(ValueError, match="alpha must be in"):
        split_threshold(S, alpha=2)
    with pytest.raises(ValueError, match="ref_scores must be finite"):
        ot_alignment(S, [1.0, np.nan])
    with pytest.raises(ValueError, match="cal_scores must not be empty"):
        diagnose([], R)


def test_diagnose_reports_distance_and_slack(tmp_path):
    rng = np.random.default_rng(0)
    s = rng.lognormal(size=30)
    same = diagnose(s, rng.lognormal(size=2000), alpha=0.1)
    far = diagnose(s, 3.0 * rng.lognormal(size=2000) + 2.0, alpha=0.1)
    assert same.w1_relative < far.w1_relative
    assert far.w1_affine < far.w1  # a shift and a scale explain most of the gap
    assert same.certified_coverage == far.certified_coverage  # scale-free certificate
    assert same.slack == pytest.approx(max(0.0, 0.9 - same.certified_coverage))
    assert far.reference_only_coverage_on_cal > 0.95  # the raw reference over-covers
    assert "W1" in far.summary()
    pytest.importorskip("matplotlib")
    from rsa_cp import plot_qq

    ax = plot_qq(far, path=tmp_path / "qq.png")
    assert (tmp_path / "qq.png").exists() and ax is not None
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
