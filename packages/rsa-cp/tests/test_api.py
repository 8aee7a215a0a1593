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
)
from rsa_cp.baselines import split_threshold


def test_public_api_is_exact():
    assert rsa_cp.__all__ == [
        "AlignmentMap", "CoverageBounds", "Diagnosis", "RSAConformalClassifier",
        "RSAConformalRegressor", "RSAThreshold", "baselines", "coverage_bounds", "data",
        "diagnose", "ot_alignment", "plot_qq", "rsa_threshold", "wasserstein_distance",
    ]  # fmt: skip
    assert rsa_cp.baselines.__all__ == [
        "randomized_split_threshold",
        "reference_threshold",
        "spi_threshold",
        "split_threshold",
    ]
    assert rsa_cp.data.__all__ == [
        "REAL_SETS", "SCORE_LAWS", "load_diabetes", "load_real", "regression_scores",
    ]  # fmt: skip
    for module in (rsa_cp, rsa_cp.baselines, rsa_cp.data):
        for name in module.__all__:
            assert hasattr(module, name)


@pytest.mark.parametrize(
    "name",
    [
        "split_threshold",
        "randomized_split_threshold",
        "reference_threshold",
        "spi_threshold",
        "beta_binomial_window",
    ],
)
def test_old_top_level_names_are_deprecated_aliases(name):
    with pytest.warns(DeprecationWarning, match=rf"rsa_cp\.{name} is deprecated.*0\.2: use "):
        obj = getattr(rsa_cp, name)
    assert callable(obj)
    if name != "beta_binomial_window":
        assert obj is getattr(rsa_cp.baselines, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rsa_cp.nope


def test_version_comes_from_the_installed_metadata():
    from importlib.metadata import version

    assert rsa_cp.__version__ == version("rsa-cp")


@pytest.mark.parametrize("alpha", [1.5, -0.1, 0.0, 1.0, np.float64(1.5), float("nan")])
def test_alpha_outside_open_interval_raises_for_every_type(alpha):
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        split_threshold(np.arange(20.0), alpha)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        rsa_threshold(np.arange(20.0), np.arange(200.0), alpha)


def test_complex_scores_are_rejected():
    with pytest.raises(TypeError, match="cal_scores must be real-valued"):
        split_threshold(np.arange(20.0) + 1j, 0.1)
    with pytest.raises(TypeError, match="real-valued"):
        rsa_threshold(np.arange(20.0) + 1j, np.arange(200.0), 0.1)


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
