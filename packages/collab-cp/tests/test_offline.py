import math

import numpy as np
import pytest

from collab_cp import (
    CollaborativeConformal,
    calibrate_thresholds,
    conformity_scores,
    optimal_collaborative_sets,
)
from collab_cp.baselines import SplitConformalClassifier
from collab_cp.data import synthetic_collaboration
from collab_cp.experiments import split_evaluation
from icml26_shared.datasets import dirichlet_classifier

EPS, DELTA = 0.05, 0.7


def test_thresholds_are_the_shared_order_statistics():
    s = np.arange(1.0, 100.0)  # n = 99
    inside = np.ones(99, dtype=bool)
    # b = S_in,(⌈100·(1 - 0.05)⌉) = 95 exactly despite float rounding; a: the empty group -> +inf
    th = calibrate_thresholds(s, inside, 0.05, 0.7)
    assert th.prune == 95.0 and th.augment == math.inf and (th.n_in, th.n_out) == (99, 0)
    th = calibrate_thresholds(s, ~inside, 0.05, 0.5)  # a = S_out,(⌈100·0.5⌉) = 50
    assert th.augment == 50.0 and th.prune == math.inf
    with pytest.warns(UserWarning, match="augment threshold a is"):
        th = calibrate_thresholds(s, ~inside, 0.05, 0.999)  # index 100 > n: never clipped
    assert th.augment == math.inf


def naive_split_cp(cal_scores, test_scores, level):
    """Independent textbook split CP: sort, take the ⌈(n+1)level⌉-th value by a loop count."""
    srt = sorted(cal_scores.tolist())
    k = 0
    while k < (len(srt) + 1) * level - 1e-9:
        k += 1
    q = srt[k - 1] if k <= len(srt) else float("inf")
    return test_scores <= q


def test_empty_human_set_is_split_cp_label_for_label():
    """Acceptance 1: H ≡ ∅ reproduces split CP at level δ on 1,000 random test inputs."""
    d = dirichlet_classifier(1500, 10, concentration=0.3, seed=11)
    cal, test = slice(0, 500), slice(500, 1500)
    empty_lists = [[] for _ in range(1000)]
    cp = CollaborativeConformal(EPS, DELTA).conformalize(d.probs[cal], [[]] * 500, d.y[cal])
    ours = cp.predict_set(d.probs[test], empty_lists)
    assert cp.prune_threshold_ == math.inf and cp.n_in_ == 0
    cal_scores = 1 - d.probs[np.arange(500), d.y[cal]]
    ref = naive_split_cp(cal_scores, 1 - d.probs[test], DELTA)
    assert np.array_equal(ours, ref)
    assert np.array_equal(
        ours,
        SplitConformalClassifier(DELTA)
        .conformalize(d.probs[cal], d.y[cal])
        .predict_set(d.probs[test]),
    )
    assert ours.sum(axis=1).min() < ours.sum(axis=1).max()  # not a degenerate comparison


def test_empty_human_set_matches_mapie():
    pytest.importorskip("mapie")
    from mapie.classification import SplitConformalClassifier as MapieSCC
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Lookup(ClassifierMixin, BaseEstimator):
        def __init__(self, table=None):
            self.table = table

        def fit(self, X, y):
            self.classes_ = np.arange(self.table.shape[1])
            return self

        def predict_proba(self, X):
            return self.table[np.asarray(X, dtype=int).ravel()]

        def predict(self, X):
            return self.predict_proba(X).argmax(axis=1)

    d = dirichlet_classifier(1500, 10, concentration=0.3, seed=12)
    idx = np.arange(1500)[:, None]
    est = Lookup(d.probs).fit(idx[:10], np.arange(10))
    mapie = MapieSCC(est, confidence_level=DELTA, conformity_score="lac", prefit=True)
    mapie.conformalize(idx[:500], d.y[:500])
    _, theirs = mapie.predict_set(idx[500:])
    ours = CollaborativeConformal(EPS, DELTA).conformalize(d.probs[:500], [[]] * 500, d.y[:500])
    assert np.array_equal(ours.predict_set(d.probs[500:], [[]] * 1000), theirs[:, :, 0])


def test_full_human_set_never_adds():
    d = dirichlet_classifier(1500, 10, concentration=0.3, seed=13)
    full = np.ones_like(d.probs, dtype=bool)
    cp = CollaborativeConformal(EPS, DELTA).conformalize(d.probs[:500], full[:500], d.y[:500])
    sets = cp.predict_set(d.probs[500:], full[500:])
    assert cp.n_out_ == 0 and cp.augment_threshold_ == math.inf
    assert np.array_equal(sets, (1 - d.probs[500:]) <= cp.prune_threshold_)
    # and with random human sets nothing outside H is added when δ's branch is empty
    H = d.probs > 0.05
    sets = cp.predict_set(d.probs[500:], H[500:] | full[500:])
    assert not (sets & ~full[500:]).any()


def test_thresholds_are_the_documented_order_statistics():
    rng = np.random.default_rng(0)
    s = rng.random(300)
    inside = rng.random(300) < 0.7
    th = calibrate_thresholds(s, inside, EPS, DELTA)
    n_in, n_out = inside.sum(), (~inside).sum()
    assert th.prune == np.sort(s[inside])[math.ceil((n_in + 1) * 0.95) - 1]
    assert th.augment == np.sort(s[~inside])[math.ceil((n_out + 1) * 0.7) - 1]
    assert (th.n_in, th.n_out) == (n_in, n_out)


def _synthetic_split_rates(policy, n_splits, seed, score="1-prob", **kw):
    d = synthetic_collaboration(5000, policy, seed=seed, **kw)
    s = conformity_scores(d.probs, score)
    return split_evaluation(
        s,
        d.human,
        d.y,
        n_cal=500,
        n_splits=n_splits,
        epsilon=EPS,
        delta=DELTA,
        seed=seed,
        baselines=False,
    )


@pytest.mark.parametrize(
    ("policy", "kw", "score"),
    [
        ("top_k", {"k": 2}, "1-prob"),
        ("cumulative_mass", {"tau": 0.9}, "1-prob"),
        ("threshold", {"omega": 0.1}, "aps"),
        ("top_k", {"k": 1}, "aps"),
    ],
)
def test_harm_and_recovery_guarantees(policy, kw, score, rate_tolerance):
    """Acceptance 2 at reduced size: mean harm ≤ ε and mean recovery ≥ δ within a binomial
    tolerance, and not conservative by more than 1/(n_group + 1) (+ the same tolerance)."""
    r = _synthetic_split_rates(policy, 300, seed=21, score=score, **kw)
    tol_h = rate_tolerance(EPS, r.n_in, r.n_test_in)
    tol_r = rate_tolerance(DELTA, r.n_out, r.n_test_out)
    assert r.harm.mean() <= EPS + tol_h
    assert r.recovery.mean() >= DELTA - tol_r
    assert r.harm.mean() >= EPS - np.mean(1 / (r.n_in + 1)) - tol_h
    assert r.recovery.mean() <= DELTA + np.mean(1 / (r.n_out + 1)) + tol_r


@pytest.mark.slow
def test_acceptance_2_full_2000_splits():
    """Acceptance 2 as specified: n_cal = 500, 2,000 random splits, ε = 0.05, δ = 0.7."""
    r = _synthetic_split_rates("top_k", 2000, seed=2, k=2)
    assert r.harm.mean() <= EPS + 0.005
    assert r.recovery.mean() >= DELTA - 0.005
    assert abs(r.harm.mean() - EPS) <= np.mean(1 / (r.n_in + 1)) + 0.01
    assert abs(r.recovery.mean() - DELTA) <= np.mean(1 / (r.n_out + 1)) + 0.01


def test_callable_score_is_accepted_and_valid(rate_tolerance):
    d = synthetic_collaboration(5000, "top_k", k=2, seed=5)

    def neg_log(p):
        return -np.log(np.clip(p, 1e-300, None))

    s = conformity_scores(d.probs, neg_log)
    r = split_evaluation(
        s, d.human, d.y, n_cal=500, n_splits=200, epsilon=EPS, delta=DELTA, seed=5, baselines=False
    )
    assert r.harm.mean() <= EPS + rate_tolerance(EPS, r.n_in, r.n_test_in)
    assert r.recovery.mean() >= DELTA - rate_tolerance(DELTA, r.n_out, r.n_test_out)
    # a monotone transform of 1 - p gives the same sets as the default score
    cp1 = CollaborativeConformal(score=neg_log).conformalize(
        d.probs[:500], d.human[:500], d.y[:500]
    )
    cp2 = CollaborativeConformal().conformalize(d.probs[:500], d.human[:500], d.y[:500])
    assert np.array_equal(
        cp1.predict_set(d.probs[500:], d.human[500:]), cp2.predict_set(d.probs[500:], d.human[500:])
    )


def test_matched_coverage_smaller_than_ai_and_human_synthetic():
    """Acceptance 3 (synthetic, reduced): paired over splits, the collaborative size is below AI
    alone and below the human's own split CP at the same coverage (3 standard errors)."""
    d = synthetic_collaboration(5000, "top_k", k=2, seed=8)
    r = split_evaluation(
        1 - d.probs,
        d.human,
        d.y,
        n_cal=500,
        n_splits=100,
        epsilon=EPS,
        delta=DELTA,
        seed=8,
        human_scores=1 - d.human_probs,
    )
    for baseline in (r.ai_size, r.human_cp_size):
        diff = r.size - baseline
        assert diff.mean() + 3 * diff.std(ddof=1) / np.sqrt(diff.size) < 0
    assert np.abs(r.ai_coverage - r.coverage).max() <= 1 / 4500 + 1e-12


def test_report_groups_and_calibration_summary():
    d = synthetic_collaboration(3000, "cumulative_mass", tau=0.8, seed=3)
    cp = CollaborativeConformal(EPS, DELTA).conformalize(d.probs[:1000], d.human[:1000], d.y[:1000])
    cal = cp.report()
    assert (cal.n_in, cal.n_out) == (cp.n_in_, cp.n_out_)
    full = cp.report(d.probs[1000:], d.human[1000:], d.y[1000:])
    groups = d.human[1000:].sum(axis=1)
    per = cp.report(d.probs[1000:], d.human[1000:], d.y[1000:], groups=groups)
    assert sum(r.n for r in per.values()) == full.n
    weighted = sum(r.coverage * r.n for r in per.values()) / full.n
    assert weighted == pytest.approx(full.coverage)


def test_population_optimum_is_two_thresholds_and_matches_lp():
    """The population-optimal collaborative set (LP over inclusion probabilities) is one threshold
    on p(y|x) inside H and one outside H; our greedy solution attains the LP optimum."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(4)
    n, K = 40, 5
    p = rng.dirichlet(np.full(K, 0.5), size=n)
    H = rng.random((n, K)) < 0.4
    w, t_in, t_out = optimal_collaborative_sets(p, H, EPS, DELTA)
    # LP: min Σ w  s.t.  Σ_{in} p w ≥ (1−ε) Σ_in p,  Σ_out p w ≥ δ Σ_out p,  0 ≤ w ≤ 1
    A = -np.stack([(p * H).ravel(), (p * ~H).ravel()])
    b = -np.array([(1 - EPS) * p[H].sum(), DELTA * p[~H].sum()])
    lp = linprog(np.ones(n * K), A_ub=A, b_ub=b, bounds=(0, 1), method="highs")
    assert lp.status == 0
    assert w.sum() == pytest.approx(lp.fun, abs=1e-9)
    # constraints hold with equality (the greedy stops exactly at the target)
    assert (p * H * w).sum() == pytest.approx((1 - EPS) * p[H].sum())
    assert (p * ~H * w).sum() == pytest.approx(DELTA * p[~H].sum())
    # two thresholds: full inclusion above, none below, within each branch
    assert np.all(w[H & (p > t_in)] == 1) and np.all(w[H & (p < t_in)] == 0)
    assert np.all(w[~H & (p > t_out)] == 1) and np.all(w[~H & (p < t_out)] == 0)
    # a single threshold on p for both branches (AI-alone shape) needs a larger set at the same
    # harm/recovery on this instance
    assert t_in != t_out
