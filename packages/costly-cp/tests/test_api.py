"""Public surface, argument checks, small-m behaviour and the labelling loop."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import costly_cp as cc

EXPECTED_ALL = [
    "CalibrationResult", "CostModel", "IntervalScores", "LabelBudgetCalibrator", "PACResult",
    "SetSizeCurve", "StopDecision", "StreamExhaustedWarning", "Trace", "aps_scores",
    "conformal_rank", "conformal_threshold", "data", "fit_cost_model", "lac_scores",
    "optimal_size", "pac_label", "pac_rank", "should_stop",
]  # fmt: skip


def test_all_is_exact():
    assert cc.__all__ == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert hasattr(cc, name)


# -- small m: the full set, never a clipped finite threshold (acceptance 4) -------------------
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2, 0.5])
def test_small_m_gives_infinite_threshold(alpha):
    rng = np.random.default_rng(0)
    m_finite = math.ceil((1 - alpha) / alpha - 1e-9)
    for m in range(0, m_finite):
        assert cc.conformal_threshold(rng.random(m), alpha) == math.inf
    s = rng.random(m_finite)
    assert cc.conformal_threshold(s, alpha) == s.max()


def test_conformal_rank_values():
    assert cc.conformal_rank(9, 0.1) == 9
    assert cc.conformal_rank(8, 0.1) == 9
    assert cc.conformal_rank(99, 0.1) == 90
    assert cc.conformal_rank(100, 0.1) == 91
    np.testing.assert_array_equal(cc.conformal_rank(np.array([19, 20]), 0.05), [19, 20])


def test_calibrator_small_budget_returns_full_set(classifier):
    probs, y = classifier
    with pytest.warns(UserWarning, match=r"threshold is \+inf.*max_labels=15 was reached"):
        res = (
            cc.LabelBudgetCalibrator(
                cc.lac_scores, confidence_level=0.95, n_future=1e4, max_labels=15
            )
            .conformalize(probs[:200], lambda i: int(y[i]))
            .result_
        )
    assert res.stopped_by == "budget"
    assert res.threshold == math.inf
    assert res.predict_set(cc.lac_scores(probs[:50])).all()
    assert res.cost_estimate == 15 + 1e4 * 10


def test_regression_small_budget_is_whole_line(regression):
    x, y, predict = regression
    with pytest.warns(UserWarning, match=r"threshold is \+inf"):
        res = (
            cc.LabelBudgetCalibrator(
                cc.IntervalScores(predict), confidence_level=0.9, n_future=100, max_labels=8
            )
            .conformalize(x[:100], lambda i: float(y[i]))
            .result_
        )
    lo, hi = res.predict_interval(*predict(x[:5]).T)
    assert res.threshold == math.inf and np.all(lo == -np.inf) and np.all(hi == np.inf)
    assert res.cost_estimate == math.inf


# -- scores and curves -------------------------------------------------------------------------
def test_lac_and_aps_scores():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    np.testing.assert_allclose(cc.lac_scores(p), 1 - p)
    np.testing.assert_allclose(cc.aps_scores(p), [[0.7, 0.9, 1.0], [1.0, 0.9, 0.6]])
    r = cc.aps_scores(p, randomized=True, rng=1)
    assert np.all(r <= cc.aps_scores(p) + 1e-12) and np.all(r >= cc.aps_scores(p) - p - 1e-12)


def test_set_size_curves_match_brute_force():
    rng = np.random.default_rng(1)
    S = rng.random((300, 7))
    qs = np.array([-1.0, 0.05, 0.3, 0.5, 0.77, 1.2, np.inf])
    count = cc.SetSizeCurve.from_scores(S)
    single = cc.SetSizeCurve.from_scores(S, size="not_singleton")
    for q in qs:
        sizes = (S <= q).sum(axis=1)
        assert count(q) == pytest.approx(sizes.mean() if np.isfinite(q) else 7)
        assert single(q) == pytest.approx(np.mean(sizes != 1) if np.isfinite(q) else 1)
    lo = rng.normal(size=200)
    hi = lo + rng.random(200)
    width = cc.SetSizeCurve.from_intervals(lo, hi)
    for q in (-0.6, -0.1, 0.0, 0.4):
        assert width(q) == pytest.approx(np.mean(np.maximum(hi - lo + 2 * q, 0)))
    assert width(np.inf) == np.inf


def test_pac_rank_matches_scipy_brute_force():
    from scipy import stats

    for m, n in [(60, 500), (100, 1000), (300, 2000)]:
        k = cc.pac_rank(m, 0.05, 0.05, n)

        def tail(kk, m=m, n=n):
            return stats.betabinom.sf(np.floor(0.05 * n), n, m + 1 - kk, kk)

        assert k <= m and tail(k) <= 0.05 and tail(k - 1) > 0.05
    assert cc.pac_rank(20, 0.05, 0.05, 1000) == 21  # too few for a finite PAC threshold


def test_betabinom_sf_matches_scipy():
    from scipy import stats

    from costly_cp._scores import _betabinom_sf

    x = np.array([0, 3, 10, 40, 400])
    n = np.array([5, 50, 100, 900, 9000])
    a = np.array([1.0, 2, 3, 7, 40])
    b = np.array([4.0, 5, 6, 120, 900])
    np.testing.assert_allclose(
        _betabinom_sf(x, n, a, b), stats.betabinom.sf(x, n, a, b), atol=1e-10
    )


# -- the cost model ----------------------------------------------------------------------------
def test_expected_size_is_exact_for_a_quadratic_curve():
    """The closed form equals a numerical Beta integral of the same quadratic (independent)."""
    from scipy import integrate, stats

    model = cc.CostModel(u0=0.9, a0=2.0, a1=3.0, a2=5.0, n_future=1e4, full_size=10.0, alpha=0.1)
    for m in (9, 10, 37, 100, 501):
        k = cc.conformal_rank(m, 0.1)

        def integrand(u, k=k, m=m):
            h = 2.0 + 3.0 * (u - 0.9) + 5.0 * (u - 0.9) ** 2
            return h * stats.beta.pdf(u, k, m + 1 - k)

        want, _ = integrate.quad(integrand, 0, 1, limit=200)
        assert model.expected_size(m) == pytest.approx(want, rel=1e-7)
    assert model.expected_size(8) == 10.0  # k > m: the full set
    assert model.cost(100) == pytest.approx(100 + 1e4 * model.expected_size(100))


def test_fit_recovers_a_quadratic_curve():
    class Quadratic:
        full_size = 10.0

        def __call__(self, q):  # g(q) with F = U(0, 1): h(u) = g(u)
            q = np.asarray(q)
            return 1.0 + 2.0 * (q - 0.9) + 4.0 * (q - 0.9) ** 2

    n = 5000
    s = np.arange(1, n + 1) / (n + 1)  # the exact quantiles of U(0, 1)
    model = cc.fit_cost_model(s, Quadratic(), u0=0.9, n_future=1e3, alpha=0.1)
    assert (model.a0, model.a1, model.a2) == pytest.approx((1.0, 2.0, 4.0), rel=1e-6)


def test_optimal_size_matches_brute_force():
    model = cc.CostModel(u0=0.9, a0=2.0, a1=3.0, a2=20.0, n_future=1e5, full_size=10.0, alpha=0.1)
    for lo, hi in [(20, 1500), (20, 60_000), (500, 3000)]:
        ms = np.arange(lo, hi + 1)
        assert cc.optimal_size(model, lo, hi) == ms[np.argmin(model.cost(ms))]


def test_should_stop_is_pure_and_respects_the_floor(classifier):
    probs, y = classifier
    S = cc.lac_scores(probs)
    curve = cc.SetSizeCurve.from_scores(S[:3000])
    scores = S[np.arange(3000, 3030), y[3000:3030]]
    d = cc.should_stop(scores, curve, alpha=0.1, n_future=1e4)
    assert not d.stop and d.target >= 40  # default floor ceil(4 / alpha) = 40
    big = S[np.arange(3000, 5000), y[3000:5000]]
    d1 = cc.should_stop(big, curve, alpha=0.1, n_future=1e3)
    d2 = cc.should_stop(big.copy(), curve, alpha=0.1, n_future=1e3)
    assert d1.stop and d1.target == 2000 and d1 == d2
    d3 = cc.should_stop(big[:200], curve, alpha=0.1, n_future=1e7)
    assert not d3.stop and d3.target > 200


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"confidence_level": 1.5}, ValueError, r"confidence_level must be in \(0, 1\), got 1.5"),
        ({"confidence_level": 0}, ValueError, "confidence_level must be in"),
        (
            {"confidence_level": 0.9 + 0j},
            TypeError,
            "confidence_level must be a real number, got complex",
        ),
        ({"n_future": 0}, ValueError, "n_future must be finite and > 0, got 0"),
        ({"n_future": -5}, ValueError, "n_future must be finite and > 0"),
        ({"rule": "greedy"}, ValueError, "rule must be one of 'plugin', 'split', got 'greedy'"),
        ({"max_labels": 0}, ValueError, "max_labels must be an integer >= 1"),
        ({"pilot_fraction": 1.5}, ValueError, "pilot_fraction must be in"),
    ],
)
def test_bad_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        cc.LabelBudgetCalibrator(cc.lac_scores, **kwargs)


def test_bad_score_fn_and_oracle(classifier):
    probs, _ = classifier
    with pytest.raises(TypeError, match="score_fn must be callable"):
        cc.LabelBudgetCalibrator(42)
    cal = cc.LabelBudgetCalibrator(cc.lac_scores)
    with pytest.raises(TypeError, match="oracle must be callable"):
        cal.conformalize(probs, None).result_
    with pytest.raises(ValueError, match="unlabeled must not be empty"):
        cal.conformalize(probs[:0], lambda i: 0).result_
    with pytest.raises(ValueError, match="score_fn\\(unlabeled\\) must have 3 rows"):
        cc.LabelBudgetCalibrator(lambda P: np.ones((2, 3))).conformalize(
            probs[:3], lambda i: 0
        ).result_


@pytest.mark.parametrize("bad", [10, -1, float("nan"), 2.5, "cat", None, True])
def test_oracle_labels_outside_the_label_space(classifier, bad):
    probs, _ = classifier
    cal = cc.LabelBudgetCalibrator(cc.lac_scores)
    with pytest.raises(ValueError, match=r"oracle\(0\) must return an integer label in \[0, 9\]"):
        cal.conformalize(probs[:100], lambda i: bad).result_


def test_oracle_nan_for_regression(regression):
    x, _, predict = regression
    cal = cc.LabelBudgetCalibrator(cc.IntervalScores(predict))
    with pytest.raises(ValueError, match=r"oracle\(0\) must return a finite real label, got nan"):
        cal.conformalize(x[:50], lambda i: float("nan")).result_


def test_exhausted_stream_is_a_flag_not_an_exception(classifier):
    probs, y = classifier
    for rule in ("plugin", "split"):
        with pytest.warns(cc.StreamExhaustedWarning, match="ran out after 60 labels"):
            res = (
                cc.LabelBudgetCalibrator(cc.lac_scores, n_future=1e7, rule=rule)
                .conformalize(probs[:60], lambda i: int(y[i]))
                .result_
            )
        assert res.stopped_by == "exhausted"
        assert res.labels_bought == 60
        assert math.isfinite(res.threshold)


# -- the loop ----------------------------------------------------------------------------------
def test_run_plugin_and_split(classifier):
    probs, y = classifier
    plug = (
        cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level=0.9, n_future=1e4)
        .conformalize(probs, lambda i: int(y[i]))
        .result_
    )
    assert plug.stopped_by == "rule" and plug.guarantee == "none"
    assert plug.m == plug.labels_bought >= 40
    assert plug.threshold == cc.conformal_threshold(plug.calibration_scores, 0.1)
    assert len(plug.trace.n) >= 3 and plug.trace.target[-1] <= plug.m
    split = (
        cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level=0.9, n_future=1e4, rule="split")
        .conformalize(probs, lambda i: int(y[i]))
        .result_
    )
    assert split.guarantee == "finite-sample" and split.stopped_by == "rule"
    pilot = split.labels_bought - split.m
    assert pilot >= 40
    S = cc.lac_scores(probs)
    fresh = S[split.labeled_indices[pilot:], split.labels[pilot:]]
    np.testing.assert_array_equal(np.sort(split.calibration_scores), np.sort(fresh))
    assert split.threshold == cc.conformal_threshold(fresh, 0.1)


def test_regression_run(regression):
    x, y, predict = regression
    res = (
        cc.LabelBudgetCalibrator(cc.IntervalScores(predict), confidence_level=0.9, n_future=1e3)
        .conformalize(x, lambda i: float(y[i]))
        .result_
    )
    assert res.stopped_by == "rule" and math.isfinite(res.threshold)
    lo, hi = res.predict_interval(*predict(x).T)
    covered = np.mean((lo <= y) & (y <= hi))
    assert covered > 0.85


@pytest.mark.parametrize("rule", ["plugin", "split"])
def test_resume_loses_no_label(classifier, counting_oracle, rule):
    probs, y = classifier
    kw = {"confidence_level": 0.9, "n_future": 1e4, "rule": rule, "shuffle": True, "seed": 4}
    full_oracle = counting_oracle(y)
    full = cc.LabelBudgetCalibrator(cc.lac_scores, **kw).conformalize(probs, full_oracle).result_
    cut = full.labels_bought // 2 + 3
    broken_oracle = counting_oracle(y, fail_after=cut)
    cal = cc.LabelBudgetCalibrator(cc.lac_scores, **kw)
    with pytest.raises(RuntimeError, match="annotator"):
        cal.conformalize(probs, broken_oracle).result_
    state = json.loads(json.dumps(cal.state_dict()))  # survives a trip through JSON
    assert len(state["labels"]) == cut
    resumed_oracle = counting_oracle(y)
    res = (
        cc.LabelBudgetCalibrator(cc.lac_scores, **kw)
        .load_state_dict(state)
        .conformalize(probs, resumed_oracle)
        .result_
    )
    assert len(broken_oracle.calls) + len(resumed_oracle.calls) == len(full_oracle.calls)
    assert not set(broken_oracle.calls) & set(resumed_oracle.calls)
    assert res.threshold == full.threshold and res.m == full.m
    np.testing.assert_array_equal(res.labeled_indices, full.labeled_indices)
    assert res.trace.n == full.trace.n


def test_state_dict_rejects_other_settings(classifier):
    state = cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level=0.9).state_dict()
    with pytest.raises(
        ValueError,
        match=r"saved with confidence_level=0.9, but this LabelBudgetCalibrator has confidence_level=0.8",
    ):
        cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level=0.8).load_state_dict(state)


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("n_future", {"n_future": 2e4}),
        ("rule", {"rule": "split"}),
        ("growth", {"growth": 0.1}),
        ("max_labels", {"max_labels": 50}),
        ("seed", {"seed": 3}),
    ],
)
def test_state_saved_with_other_hyperparameters_is_refused_naming_the_field(
    classifier, field, kwargs
):
    probs, y = classifier
    saved = cc.LabelBudgetCalibrator(cc.lac_scores, n_future=1e4, max_labels=30)
    saved.conformalize(probs[:200], lambda i: int(y[i]))
    base = {"n_future": 1e4, "max_labels": 30, **kwargs}
    with pytest.raises(
        ValueError, match=rf"saved with {field}=.* but this LabelBudgetCalibrator has {field}="
    ):
        cc.LabelBudgetCalibrator(cc.lac_scores, **base).load_state_dict(saved.state_dict())


def test_json_checkpoint_is_strict_and_resumes(classifier):
    import json

    probs, y = classifier
    kw = {"confidence_level": 0.9, "n_future": 1e4, "max_labels": 40}
    cal = cc.LabelBudgetCalibrator(cc.lac_scores, **kw).conformalize(
        probs[:300], lambda i: int(y[i])
    )
    text = cal.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the checkpoint"))
    again = cc.LabelBudgetCalibrator(cc.lac_scores, **kw).load_json(text)
    res = again.conformalize(probs[:300], lambda i: pytest.fail("no label is bought twice")).result_
    assert res.threshold == cal.result_.threshold and res.m == cal.result_.m


def test_unlabeled_may_be_any_iterable(classifier):
    probs, y = classifier
    kw = {"confidence_level": 0.9, "n_future": 1e4, "max_labels": 40}
    from_array = cc.LabelBudgetCalibrator(cc.lac_scores, **kw).conformalize(
        probs[:100], lambda i: int(y[i])
    )
    from_gen = cc.LabelBudgetCalibrator(cc.lac_scores, **kw).conformalize(
        (row for row in probs[:100]), lambda i: int(y[i])
    )
    assert from_gen.result_.threshold == from_array.result_.threshold
    np.testing.assert_array_equal(
        from_gen.result_.labeled_indices, from_array.result_.labeled_indices
    )
    with pytest.raises(TypeError, match="unlabeled must be an iterable"):
        cc.LabelBudgetCalibrator(cc.lac_scores).conformalize(5, lambda i: 0)


def test_estimator_verbs_and_deprecated_aliases(classifier):
    probs, y = classifier
    cal = cc.LabelBudgetCalibrator(cc.lac_scores, confidence_level=0.9, n_future=1e4, max_labels=40)
    with pytest.raises(ValueError, match="not conformalized yet"):
        cal.predict_set(cc.lac_scores(probs[:3]))
    assert cal.conformalize(probs[:200], lambda i: int(y[i])) is cal
    np.testing.assert_array_equal(
        cal.predict_set(cc.lac_scores(probs[:5])), cal.result_.predict_set(cc.lac_scores(probs[:5]))
    )
    with pytest.warns(
        DeprecationWarning, match=r"LabelBudgetCalibrator\(alpha=...\) is deprecated"
    ):
        old = cc.LabelBudgetCalibrator(cc.lac_scores, alpha=0.1, n_future=1e4, max_labels=40)
    with pytest.warns(DeprecationWarning, match="LabelBudgetCalibrator.run is deprecated"):
        res = old.run(probs[:200], lambda i: int(y[i]))
    assert res.threshold == cal.result_.threshold
    with pytest.raises(TypeError, match="not both"):
        cc.LabelBudgetCalibrator(cc.lac_scores, alpha=0.1, confidence_level=0.9)
    p = probs[:4]
    with pytest.warns(DeprecationWarning, match="aps_scores\\(seed=...\\) is deprecated"):
        r_old = cc.aps_scores(p, randomized=True, seed=1)
    np.testing.assert_array_equal(r_old, cc.aps_scores(p, randomized=True, rng=1))


@pytest.mark.parametrize("alpha", [1.5, -0.5, 0.0, 1.0, np.float64(1.5), float("nan")])
def test_alpha_outside_open_interval_raises_whatever_its_type(alpha):
    s = np.linspace(0, 1, 20)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        cc.conformal_threshold(s, alpha)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        cc.conformal_rank(20, alpha)


def test_shared_core_is_the_one_in_use():
    from icml26_shared import conformal

    assert cc.conformal_rank is conformal.conformal_rank and cc.lac_scores is conformal.lac_scores
    with pytest.raises(TypeError, match="scores must be real-valued"):
        cc.conformal_threshold(np.linspace(0, 1, 20) + 1j, 0.1)


def test_pac_label_small_pool():
    from icml26_shared.datasets import dirichlet_classifier

    d = dirichlet_classifier(3000, 10, concentration=0.02, ai_noise=0.3, human_noise=None, seed=9)
    res = cc.pac_label(d.probs, lambda i: int(d.y[i]), 0.05, 0.05, score_fn=cc.lac_scores)
    assert res.labels.shape == (3000,) and res.labels.min() >= 0
    np.testing.assert_array_equal(res.labels[res.expert], d.y[res.expert])  # the expert is right
    assert res.n_expert == int(res.expert.sum()) < 3000
    assert np.mean(res.labels != d.y) <= 0.05
    with pytest.raises(ValueError, match=r"eps must be in \(0, 1\), got 0"):
        cc.pac_label(d.probs, lambda i: 0, 0, 0.05, score_fn=cc.lac_scores)


def test_threshold_matches_mapie_and_mapie_has_no_small_m_answer():
    """Peer check on the same scores: MAPIE 1.x's split-CP quantile (private helper)."""
    utils = pytest.importorskip("mapie.utils")
    rng = np.random.default_rng(7)
    for m in (9, 10, 57, 100, 1000):
        for alpha in (0.1, 0.2):
            if cc.conformal_rank(m, alpha) > m:
                continue
            s = rng.random(m)
            peer = float(
                utils._compute_classification_quantile(s.reshape(-1, 1), np.array([alpha]))[0]
            )
            assert cc.conformal_threshold(s, alpha) == peer
    with pytest.raises(ValueError):  # MAPIE refuses m < 9 at alpha = 0.1; we return +inf
        utils._compute_classification_quantile(rng.random((8, 1)), np.array([0.1]))
    assert cc.conformal_threshold(rng.random(8), 0.1) == math.inf


def test_core_import_needs_no_extras():
    import subprocess
    import sys

    code = (
        "import sys, costly_cp; "
        "assert not {'matplotlib', 'sklearn', 'torch', 'jax'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_data_submodule_and_version():
    from importlib.metadata import version

    assert cc.__version__ == version("costly-cp")
    assert cc.data.__all__ == [
        "REAL_SETS",
        "load_real",
        "never_stopping_stream",
        "never_stopping_task",
    ]
    S, y = cc.data.never_stopping_task(300)
    scores, _ = cc.data.never_stopping_stream(300)
    np.testing.assert_array_equal(S[:, 0], scores)
    assert S.shape == (300, 10) and (y == 0).all()
    res = (
        cc.LabelBudgetCalibrator(lambda s: s, n_future=1e15, max_labels=200)
        .conformalize(S, lambda i: 0)
        .result_
    )
    assert res.m == 200 and res.stopped_by == "budget"  # the rule never stops by itself here
