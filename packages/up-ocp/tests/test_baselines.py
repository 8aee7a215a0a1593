"""The baseline zoo: faithful to MAPIE, to their own guarantees, and sane on every stream."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from icml26_shared.datasets import score_stream
from up_ocp import METHODS, OnlineConformal, run_algorithm
from up_ocp._baselines import _level_quantile
from up_ocp.baselines import aci


def _mapie_aci_run(cal_x, cal_y, test_x, test_y, gamma, alpha):
    """MAPIE 1.6 ACI, one step at a time: predict, then adapt_conformal_inference."""
    from mapie.conformity_scores import AbsoluteConformityScore
    from mapie.regression import TimeSeriesRegressor
    from sklearn.linear_model import LinearRegression

    est = LinearRegression().fit(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]))
    est.coef_, est.intercept_ = np.array([1.0]), 0.0  # exactly y_hat = x
    model = TimeSeriesRegressor(
        est, method="aci", cv="prefit", conformity_score=AbsoluteConformityScore(sym=True)
    )
    model.fit(cal_x, cal_y)
    bounds, alphas = [], []
    for t in range(len(test_y)):
        _, b = model.predict(
            test_x[t : t + 1], confidence_level=1 - alpha, allow_infinite_bounds=True
        )
        bounds.append(b[0, :, 0])
        model.adapt_conformal_inference(
            test_x[t : t + 1], test_y[t : t + 1], gamma=gamma, confidence_level=1 - alpha
        )
        alphas.append(float(model.current_alpha[np.round(alpha, 2)]))
    return np.array(bounds), np.array(alphas)


@pytest.mark.parametrize("seed", [0, 1])
def test_aci_equals_mapie_aci_on_identical_streams(seed):
    pytest.importorskip("mapie")
    rng = np.random.default_rng(seed)
    alpha, gamma, n_cal, T = 0.1, 0.005, 500, 400
    cal_x = rng.normal(size=(n_cal, 1))
    cal_y = cal_x[:, 0] + rng.normal(size=n_cal)
    test_x = rng.normal(size=(T, 1))
    noise = rng.normal(size=T) * np.where(np.arange(T) < T // 2, 1.0, 1.3)  # a drift: α_t moves
    test_y = test_x[:, 0] + noise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bounds, mapie_alphas = _mapie_aci_run(cal_x, cal_y, test_x, test_y, gamma, alpha)
    # ours: the same calibration scores, the same test scores |y - y_hat|
    algo = aci(alpha, gamma, calibration=np.abs(cal_y - cal_x[:, 0]), clip=True)
    scores = np.abs(test_y - test_x[:, 0])
    state = algo.init(())
    q_ours, a_ours = [], []
    for t in range(T):
        q_ours.append(float(state.q))
        _, state = algo.update(state, scores[t])
        a_ours.append(float(state.alpha_t))
    q_ours = np.array(q_ours)
    # the MAPIE symmetric path is only defined while α_t > 1/(n+1) (it raises below): stay there
    assert mapie_alphas.min() > 1 / (n_cal + 1)
    assert np.ptp(mapie_alphas) > 0.02  # the levels really moved
    np.testing.assert_allclose(a_ours, mapie_alphas, rtol=0, atol=1e-12)
    np.testing.assert_allclose(test_x[:, 0] + q_ours, bounds[:, 1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(test_x[:, 0] - q_ours, bounds[:, 0], rtol=0, atol=1e-12)


def test_level_quantile_matches_numpy_lower_rule_on_unsorted_windows():
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(3, 57))  # storage order, not sorted: the shared quantile sorts
    for a in (0.03, 0.1, 0.5, 0.97, 1.0):
        n = ref.shape[-1]
        level = np.ceil((1 - a) * (n + 1)) / n
        want = np.quantile(ref, max(level, 0.0), axis=-1, method="lower") if level <= 1 else np.inf
        np.testing.assert_array_equal(_level_quantile(ref, a), want)
    assert np.all(_level_quantile(ref, 0.0) == np.inf)
    assert np.all(_level_quantile(ref, -0.3) == np.inf)
    assert np.all(_level_quantile(ref, 1.2) == -np.inf)
    assert np.all(_level_quantile(ref[..., :0], 0.1) == np.inf)
    mixed = _level_quantile(ref, np.array([-0.1, 0.1, 1.5]))
    assert mixed[0] == np.inf and mixed[2] == -np.inf
    assert mixed[1] == np.sort(ref[1])[int(np.ceil(0.9 * 58)) - 1]


@pytest.mark.parametrize("kind", ["alternating", "cauchy", "change_point"])
@pytest.mark.parametrize("gamma", [0.005, 0.05])
def test_aci_deterministic_guarantee(kind, gamma):
    """Gibbs & Candès (2021), Prop. 4.1: |miss − α| ≤ (max(α, 1−α) + γ)/(γT) for every sequence."""
    T, alpha = 4000, 0.1
    s = score_stream(kind, T, n_streams=2, seed=2).scores
    q, _ = run_algorithm(aci(alpha, gamma, window=200), s)
    miss = (s > q).mean(-1)
    assert np.all(np.abs(miss - alpha) <= (max(alpha, 1 - alpha) + gamma) / (gamma * T))


def test_aci_gamma_grid_equals_separate_runs():
    s = score_stream("change_point", 900, n_streams=2, seed=4).scores
    grid = np.array([0.002, 0.02, 0.2])
    q_grid, _ = run_algorithm(aci(0.1, grid[:, None], window=100), s)
    assert q_grid.shape == (3, 2, 900)
    for i, g in enumerate(grid):
        q_one, _ = run_algorithm(aci(0.1, g, window=100), s)
        np.testing.assert_array_equal(q_grid[i], q_one)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_covers_a_stationary_stream(method, stationary):
    """Long-run miss close to α on i.i.d. scores (the betting methods carry an O(√(log T/T))
    excess, hence the 0.03 bar)."""
    miss = (stationary > OnlineConformal(method, confidence_level=0.9).run(stationary)).mean(-1)
    assert np.all(np.abs(miss - 0.1) <= 0.03), miss


@pytest.mark.parametrize("method", ["aci", "dtaci", "sf_ogd", "decaying_ogd", "pid", "saocp"])
def test_scale_equivariant_baselines(method, change_point_small):
    """These baselines set their step from the scores: ×1024 (exact in floating point) scales the
    thresholds exactly and leaves every miss unchanged."""
    s = change_point_small
    q1 = OnlineConformal(method).run(s)
    q2 = OnlineConformal(method).run(1024.0 * s)
    np.testing.assert_array_equal(q2, 1024.0 * q1)


def test_dtaci_weights_stay_a_distribution(change_point_small):
    from up_ocp.baselines import dtaci

    _, state = run_algorithm(dtaci(0.1), change_point_small)
    np.testing.assert_allclose(state.weights.sum(-1), 1.0, atol=1e-12)
    assert np.all(state.weights >= 0.5 / (2 * 100) / 8)  # the σ/K floor (σ = 1/(2I))


def test_saocp_expert_pool_stays_logarithmic():
    from up_ocp.baselines import saocp

    s = score_stream("stationary", 2048, seed=0).scores
    _, state = run_algorithm(saocp(0.1), s)
    assert int((state.birth > 0).sum()) <= 8 * (np.log2(2048) + 1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "dtaci", "gammas": []}, "gammas must not be empty"),
        ({"method": "pid", "lr": 0.0}, "lr must be finite and > 0"),
        ({"method": "decaying_ogd", "decay": 0.4}, r"decay must be in \(0.5, 1.0\]"),
        ({"method": "quantile_tracking", "lr": -1.0}, "lr must be > 0"),
        ({"method": "saocp", "lifetime": 0}, "lifetime must be an integer >= 1"),
        ({"method": "aci", "window": 0}, "window must be an integer >= 1"),
        ({"method": "kt_aci", "eps": -2.0}, "eps must be finite and > 0"),
    ],
)
def test_baseline_bad_hyperparameters(kwargs, match):
    method = kwargs.pop("method")
    with pytest.raises(ValueError, match=match):
        OnlineConformal(method, **kwargs)
