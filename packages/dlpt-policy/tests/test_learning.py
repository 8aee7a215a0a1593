"""Policy learning (spec items 2 and 3) and degree selection (item 5)."""

import warnings

import numpy as np
import pytest

from dlpt import DLPT, Policy
from dlpt.baselines import DRBestArmPolicy, best_single_arm, plug_in_policy
from dlpt.data import simulate_rct


def _fit(data, rows=None, **kw):
    rows = np.arange(data.t.size) if rows is None else rows
    opts = {"degree": 2, "hidden": (32, 32), "folds": 2, "seed": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return DLPT(**opts).fit(data.X[rows], data.t[rows], data.y[rows], data.arms, data.probs)


def test_learned_policy_beats_the_best_single_arm(small_fit):
    data, model = small_fit
    pol = model.learn_policy(split="honest")
    assert isinstance(pol, Policy)
    doses = pol(data.X)
    assert doses.shape == (data.X.shape[0],)
    assert doses.min() >= 0.6 and doses.max() <= 1.4
    v_arm = max(data.true_value(float(a)) for a in data.arms)
    truth = data.true_value(pol)
    assert truth > v_arm
    assert pol.value.ci[0] <= truth <= pol.value.ci[1]
    assert pol.plug_in_value is not None
    assert best_single_arm(model) in data.arms


def test_plug_in_policy_tracks_t_star(small_fit):
    data, model = small_fit
    pi0 = plug_in_policy(model)
    Xn = simulate_rct(2000, seed=50).X
    assert np.corrcoef(pi0(Xn), data.t_star(Xn))[0, 1] > 0.5


def test_dr_best_arm_policy_returns_tested_arms():
    data = simulate_rct(3000, seed=9)
    pol = DRBestArmPolicy().fit(data.X, data.t, data.y, data.arms, data.probs)
    assert set(np.unique(pol(data.X))) <= set(data.arms.tolist())
    assert pol.gamma_.shape == (3000, 3)


def test_cv_detects_a_missing_quadratic_term():
    data = simulate_rct(4000, seed=12)
    with pytest.warns(UserWarning, match="q = K - 1"):
        model = DLPT(degree="cv", hidden=(16,), folds=3, seed=0).fit(
            data.X, data.t, data.y, data.arms, data.probs
        )
    assert set(model.cv_mse_) == {1, 2}
    assert model.degree_ == 2
    assert model.cv_mse_[2] < model.cv_mse_[1]


def _honest_run(n, seed, peers=False, data_seed=None):
    data = simulate_rct(n, seed=2000 + seed if data_seed is None else data_seed)
    perm = np.random.default_rng([seed, 3]).permutation(n)
    A, B = np.sort(perm[: n // 2]), np.sort(perm[n // 2 :])
    learner = _fit(data, A, folds=5, seed=seed)
    evaluator = _fit(data, B, folds=5, seed=seed + 100)
    pol = learner.learn_policy(split="none", seed=seed)
    gap = data.gap(200_000)
    out = {"ours": data.true_value(pol, 200_000), "ci_ok": None}
    est = evaluator.value(pol)
    out["ci_ok"] = est.ci[0] <= out["ours"] <= est.ci[1]
    dr = DRBestArmPolicy(seed=seed).fit(data.X[A], data.t[A], data.y[A], data.arms, data.probs)
    out["dr"] = data.true_value(dr, 200_000)
    if peers:
        from dlpt.peers import dr_policy_forest

        forest = dr_policy_forest(data.X[A], data.t[A], data.y[A], data.arms, seed)
        out["forest"] = data.true_value(forest, 200_000)
    out["share"] = (out["ours"] - gap["best_single_arm"]) / gap["gap"]
    out["regret"] = gap["v_star"] - out["ours"]
    return out


@pytest.mark.slow
def test_item2_learning_recovers_three_quarters_of_the_gap():
    peers = pytest.importorskip("dlpt.peers").econml_available()
    runs = [_honest_run(20_000, s, peers) for s in range(5)]
    assert np.mean([r["share"] for r in runs]) >= 0.75
    for r in runs:
        assert r["ours"] > r["dr"]
        if peers:
            assert r["ours"] > r["forest"]


@pytest.mark.slow
def test_item3_regret_slope():
    ns = [2_000, 8_000, 32_000]
    # the data seeds of `python -m dlpt reproduce` (its regret-vs-n panel)
    regret = [
        np.mean([_honest_run(n, s, data_seed=3000 + 17 * s + n)["regret"] for s in range(5)])
        for n in ns
    ]
    slope = np.polyfit(np.log(ns), np.log(np.maximum(regret, 1e-6)), 1)[0]
    assert slope <= -0.35, (regret, slope)


@pytest.mark.slow
def test_item5_cv_selects_the_cubic_and_stays_unbiased():
    chosen, z = [], []
    for s in range(5):
        data = simulate_rct(20_000, arms=(0.6, 0.87, 1.13, 1.4), truth="cubic", seed=4000 + s)
        model = _fit(data, degree="cv", folds=5, seed=s)
        chosen.append(model.degree_)
        est = model.value(1.1)
        z.append((est.v - data.true_value(1.1)) / est.se)
    assert sum(q == 3 for q in chosen) >= 4, chosen
    assert all(abs(v) <= 3 for v in z), z


@pytest.mark.slow
def test_cv_interval_keeps_its_coverage_after_the_degree_is_chosen():
    """Cubic truth, 4 arms, n = 2,000: the higher-order term is of the order of the SE here, so
    the test often keeps q = 2 (about 3 in 10 replications) and the degree-2 interval alone
    covers V(1.1) in only ~0.875 of them (measured, 200 replications); the union with the
    saturated interval must cover at the nominal rate."""
    from icml26_shared.metrics import binomial_tolerance

    R, covered, chosen = 200, [], []
    for r in range(R):
        data = simulate_rct(2000, arms=(0.6, 0.87, 1.13, 1.4), truth="cubic", seed=50_000 + r)
        model = _fit(data, degree="cv", hidden=(16,), folds=2, seed=r)
        est = model.value(1.1)
        truth = data.true_value(1.1, 200_000)
        covered.append(est.ci[0] <= truth <= est.ci[1])
        chosen.append(model.degree_)
    rate = float(np.mean(covered))
    assert 2 in chosen and 3 in chosen, chosen  # the selection is exercised both ways
    assert abs(rate - 0.95) <= binomial_tolerance(0.95, R), rate


def test_cv_below_the_saturated_degree_reports_the_union_interval():
    data = simulate_rct(2000, arms=(0.6, 0.87, 1.13, 1.4), seed=5)  # quadratic truth, K = 4
    model = _fit(data, degree="cv", hidden=(16,), folds=2, seed=0)
    assert model.degree_ == 2 and model.higher_order_pvalue_[2] > 0.05
    sat = _fit(data, degree=3, hidden=(16,), folds=2, seed=0)
    np.testing.assert_allclose(model.saturated_.theta, sat.theta_)
    est, own, full = model.value(1.1), model.scores(1.1), sat.value(1.1)
    assert est.v == pytest.approx(own.mean()) and est.se == pytest.approx(
        own.std(ddof=1) / 44.72, rel=1e-3
    )
    assert est.ci[0] == pytest.approx(min(est.v - 1.959964 * est.se, full.ci[0]))
    assert est.ci[1] == pytest.approx(max(est.v + 1.959964 * est.se, full.ci[1]))
    c = model.contrast(1.1, 1.0)
    assert c.ci[0] <= sat.contrast(1.1, 1.0).ci[0] and c.ci[1] >= sat.contrast(1.1, 1.0).ci[1]
