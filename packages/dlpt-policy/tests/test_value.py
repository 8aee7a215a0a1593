"""Spec item 1 (evaluation): V̂ ± SE for an untested constant dose and for t*(x)."""

import warnings

import numpy as np
import pytest

from dlpt import DLPT
from dlpt.data import simulate_rct


def _fit(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return DLPT(degree=2, folds=2, seed=0, **kw).fit(
            data.X, data.t, data.y, data.arms, data.probs
        )


def test_one_replication_within_three_se(small_fit):
    data, model = small_fit
    for policy in (1.1, data.t_star):
        est = model.value(policy)
        assert abs(est.v - data.true_value(policy)) <= 3 * est.se


def test_contrast_uses_paired_differences(small_fit):
    data, model = small_fit
    c = model.contrast(data.t_star, 1.0)
    a, b = model.value(data.t_star), model.value(1.0)
    assert c.v == pytest.approx(a.v - b.v, abs=1e-12)
    # paired SE is far below the SE of an unpaired difference
    assert c.se < 0.5 * np.hypot(a.se, b.se)
    truth = data.true_value(data.t_star) - data.true_value(1.0)
    assert abs(c.v - truth) <= 3 * c.se


def test_covariate_dependent_probabilities():
    data = simulate_rct(5000, probs="covariate", seed=5)
    assert data.probs.shape == (5000, 3)
    model = _fit(data, hidden=(32, 32))
    assert model.lambda_.shape == (5000, 3, 3)
    for policy in (1.1, data.t_star):
        est = model.value(policy)
        assert abs(est.v - data.true_value(policy)) <= 3 * est.se


def test_response_curve_is_close_to_truth(small_fit):
    data, model = small_fit
    grid = np.linspace(0.6, 1.4, 9)
    Xn = simulate_rct(500, seed=99).X
    err = model.response(Xn, grid) - data.mu(Xn, np.broadcast_to(grid, (500, 9)))
    spread = data.mu(Xn, np.broadcast_to(grid, (500, 9))).std()
    assert np.sqrt(np.mean(err**2)) < 0.5 * spread


@pytest.mark.slow
def test_item1_thirty_replications_at_20k():
    """|V̂ − V| ≤ 2 SE in ≥ 90% of 30 replications, 95% CI coverage in [0.85, 1]."""
    cover = {"1.1": [], "t*": []}
    within2 = {"1.1": [], "t*": []}
    for rep in range(30):
        data = simulate_rct(20_000, seed=1000 + rep)
        model = _fit(data, hidden=(32, 32))  # the configuration of `reproduce`
        for name, policy in (("1.1", 1.1), ("t*", data.t_star)):
            est, truth = model.value(policy), data.true_value(policy)
            within2[name].append(abs(est.v - truth) <= 2 * est.se)
            cover[name].append(est.ci[0] <= truth <= est.ci[1])
    for name in cover:
        assert np.mean(within2[name]) >= 0.9, (name, np.mean(within2[name]))
        assert 0.85 <= np.mean(cover[name]) <= 1.0, (name, np.mean(cover[name]))


@pytest.mark.slow
def test_coverage_many_replications_binomial_bound(lower_bound):
    """200 replications at n = 2,000: coverage of the 95% CI not below the binomial bound."""
    reps = 200
    hits = {"1.1": 0, "t*": 0, "contrast": 0}
    for rep in range(reps):
        data = simulate_rct(2000, seed=5000 + rep)
        model = _fit(data, hidden=(16,), epochs=60)
        for name, policy in (("1.1", 1.1), ("t*", data.t_star)):
            est, truth = model.value(policy), data.true_value(policy, n_mc=200_000)
            hits[name] += est.ci[0] <= truth <= est.ci[1]
        c = model.contrast(data.t_star, 1.0)
        truth = data.true_value(data.t_star, n_mc=200_000) - data.true_value(1.0, n_mc=200_000)
        hits["contrast"] += c.ci[0] <= truth <= c.ci[1]
    bound = lower_bound(0.95, reps)
    for name, h in hits.items():
        assert h / reps >= bound, (name, h / reps, bound)
