import numpy as np
import pytest

from icml26_shared import metrics


def test_coverage_and_width_by_hand():
    y = np.array([0.0, 1.0, 2.0, 3.0])
    lo = np.array([-1.0, 1.5, 2.0, -np.inf])
    hi = np.array([1.0, 2.0, 2.0, np.inf])
    assert metrics.coverage(y, lo, hi) == 0.75  # the second point is outside, ends are closed
    assert metrics.interval_width([0, 1], [2, 4]) == 2.5
    assert metrics.interval_width([0, 0], [1, np.inf]) == np.inf
    with pytest.raises(ValueError, match="upper must be >= lower"):
        metrics.interval_width([1], [0])


def test_set_metrics_report_empty_sets_both_ways():
    sets = np.array([[True, False, True], [False, False, False], [False, True, False]])
    y = np.array([2, 0, 0])
    assert metrics.set_coverage(sets, y) == pytest.approx(1 / 3)
    size = metrics.set_size(sets)
    assert size.mean == pytest.approx(1.0)  # (2 + 0 + 1) / 3
    assert size.mean_nonempty == pytest.approx(1.5)
    assert size.empty_rate == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match=r"y must hold labels in \[0, 2\]"):
        metrics.set_coverage(sets, np.array([0, 3, 1]))
    with pytest.raises(ValueError, match="boolean"):
        metrics.set_size(np.ones((2, 2)))


def test_group_coverage():
    out = metrics.group_coverage([1, 0, 1, 1], ["a", "a", "b", "b"])
    assert out == {"a": 0.5, "b": 1.0}


def test_pinball_loss_by_hand():
    # u = y - q = [1, -2]; tau = 0.9 -> [0.9, 0.2]
    assert metrics.pinball_loss([1.0, 0.0], [0.0, 2.0], 0.9) == pytest.approx(0.55)
    # the tau-quantile minimises the empirical pinball loss
    rng = np.random.default_rng(0)
    y = rng.standard_normal(20_000)
    grid = np.linspace(0.5, 2.0, 151)
    best = grid[np.argmin([metrics.pinball_loss(y, q, 0.9) for q in grid])]
    assert abs(best - np.quantile(y, 0.9)) < 0.02


def test_miscoverage_curves():
    e = np.array([1, 0, 0, 1, 1, 0])
    np.testing.assert_allclose(metrics.long_run_miscoverage(e), [1, 0.5, 1 / 3, 0.5, 0.6, 0.5])
    np.testing.assert_allclose(metrics.rolling_miscoverage(e, 2), [1, 0.5, 0, 0.5, 1, 0.5])
    two = metrics.long_run_miscoverage(np.stack([e, 1 - e]))
    np.testing.assert_allclose(two[0] + two[1], 1.0)


def test_standard_error_and_binomial_tolerance():
    assert metrics.mc_standard_error([1.0, 3.0]) == pytest.approx(np.sqrt(2) / np.sqrt(2))
    assert metrics.mc_standard_error([5.0]) == 0.0
    tol = metrics.binomial_tolerance(0.1, 1000, confidence=0.999)
    # normal approximation: 3.29 * sqrt(0.09 / 1000) ~ 0.031
    assert 0.025 < tol < 0.04
    rng = np.random.default_rng(1)
    rates = rng.binomial(1000, 0.1, size=2000) / 1000
    assert np.mean(np.abs(rates - 0.1) <= tol) >= 0.995


def test_trajectory_errors_by_hand():
    target = np.zeros((1, 2, 1, 3))  # B=1, F=2, N=1
    pred = target.copy()
    pred[0, 0, 0] = [3.0, 4.0, 0.0]  # error 5 at the first frame, 0 at the last
    assert metrics.ade(pred, target) == pytest.approx(2.5)
    assert metrics.fde(pred, target) == pytest.approx(0.0)
    samples = np.stack([pred, target], axis=1)  # (B, K=2, F, N, 3)
    assert metrics.min_ade(samples, target) == 0.0
    assert metrics.min_fde(samples[:, :1], target) == 0.0


def test_relative_error():
    assert metrics.relative_error([1.0, 2.0], [1.0, 2.0]) == 0.0
    assert metrics.relative_error([0.0, 2.0], [0.0, 1.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same shape"):
        metrics.relative_error([1.0], [1.0, 2.0])
