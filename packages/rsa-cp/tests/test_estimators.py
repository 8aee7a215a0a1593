import numpy as np
import pytest

from icml26_shared.metrics import binomial_tolerance
from rsa_cp import RSAConformalClassifier, RSAConformalRegressor, coverage_bounds
from rsa_cp.baselines import split_threshold


def _data(rng, n):
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.lognormal(size=n) - np.exp(0.5)
    return X, y


def test_regressor_end_to_end_and_coverage():
    rng = np.random.default_rng(0)
    m, n_rep, alpha = 20, 150, 0.1
    X, y = _data(rng, 400)
    reg = RSAConformalRegressor(confidence_level=1 - alpha).fit(X[:300], y[:300])
    hits = []
    for _ in range(n_rep):
        Xc, yc = _data(rng, m)
        Xs, ys = _data(rng, 1000)  # "simulator": same law, scored with the fitted model
        reg.conformalize(Xc, yc, reference_data=(Xs, ys))
        Xt, yt = _data(rng, 50)
        pred, pis = reg.predict_interval(Xt)
        assert pis.shape == (50, 2) and np.all(pis[:, 0] <= pred) and np.all(pred <= pis[:, 1])
        hits.append(np.mean((pis[:, 0] <= yt) & (yt <= pis[:, 1])))
    b = coverage_bounds(m, 1000, alpha, 0.4)
    assert np.mean(hits) >= b.lower - binomial_tolerance(b.lower, n_rep)


def test_reference_data_equals_reference_scores():
    rng = np.random.default_rng(1)
    X, y = _data(rng, 300)
    reg = RSAConformalRegressor().fit(X[:200], y[:200])
    a = reg.conformalize(X[200:230], y[200:230], reference_data=(X[230:], y[230:])).threshold_
    scores = np.abs(y[230:] - reg.predict(X[230:]))
    b = reg.conformalize(X[200:230], y[200:230], reference_scores=scores).threshold_
    assert a == b


def test_split_method_matches_mapie_on_the_same_inputs():
    mapie_regression = pytest.importorskip("mapie.regression")
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(2)
    X, y = _data(rng, 300)
    model = LinearRegression().fit(X[:200], y[:200])
    ours = RSAConformalRegressor(model, confidence_level=0.9, method="split", prefit=True)
    ours.conformalize(X[200:240], y[200:240])
    theirs = mapie_regression.SplitConformalRegressor(model, confidence_level=0.9, prefit=True)
    theirs.conformalize(X[200:240], y[200:240])
    _, p_ours = ours.predict_interval(X[240:])
    _, p_theirs = theirs.predict_interval(X[240:])
    np.testing.assert_allclose(p_ours, np.asarray(p_theirs)[:, :, 0], rtol=1e-10)


@pytest.mark.parametrize("method", ["split", "rsa"])
def test_infinite_intervals_and_full_sets_when_too_few_points(method):
    rng = np.random.default_rng(3)
    X, y = _data(rng, 260)
    m, alpha = 9, 0.05  # ceil(0.95 * 10) = 10 > 9
    kw = {"guarantee": "marginal"} if method == "rsa" else {}
    reg = RSAConformalRegressor(confidence_level=1 - alpha, method=method, **kw).fit(
        X[:200], y[:200]
    )
    reg.conformalize(X[200 : 200 + m], y[200 : 200 + m], reference_data=(X[220:], y[220:]))
    _, pis = reg.predict_interval(X[:5])
    assert np.all(np.isneginf(pis[:, 0])) and np.all(np.isposinf(pis[:, 1]))

    from sklearn.datasets import make_classification

    Xc, yc = make_classification(300, n_features=5, n_informative=3, n_classes=3, random_state=0)
    clf = RSAConformalClassifier(confidence_level=1 - alpha, method=method, **kw).fit(
        Xc[:200], yc[:200]
    )
    clf.conformalize(Xc[200 : 200 + m], yc[200 : 200 + m], reference_data=(Xc[220:], yc[220:]))
    _, sets = clf.predict_set(Xc[:7])
    assert sets.shape == (7, 3) and sets.all()


def test_cqr_score():
    from sklearn.linear_model import QuantileRegressor

    rng = np.random.default_rng(4)
    X, y = _data(rng, 500)
    pair = (
        QuantileRegressor(quantile=0.1, alpha=0.0, solver="highs"),
        QuantileRegressor(quantile=0.9, alpha=0.0, solver="highs"),
    )
    reg = RSAConformalRegressor(pair, confidence_level=0.9, score="cqr").fit(X[:200], y[:200])
    reg.conformalize(X[200:230], y[200:230], reference_data=(X[230:430], y[230:430]))
    pred, pis = reg.predict_interval(X[430:])
    lo = reg.estimators_[0].predict(X[430:])
    hi = reg.estimators_[1].predict(X[430:])
    t = reg.threshold_
    np.testing.assert_allclose(pis[:, 0], lo - t)
    np.testing.assert_allclose(pis[:, 1], hi + t)
    np.testing.assert_allclose(pred, (lo + hi) / 2)
    scores = reg.conformity_scores(X[:5], y[:5])
    np.testing.assert_allclose(
        scores,
        np.maximum(
            reg.estimators_[0].predict(X[:5]) - y[:5], y[:5] - reg.estimators_[1].predict(X[:5])
        ),
    )


def test_classifier_sets_follow_the_rule():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(2000, n_features=6, n_informative=4, n_classes=4, random_state=1)
    model = LogisticRegression(max_iter=1000).fit(X[:500], y[:500])
    for method in ("rsa", "spi", "split"):
        clf = RSAConformalClassifier(model, confidence_level=0.9, method=method, prefit=True)
        clf.conformalize(X[500:530], y[500:530], reference_data=(X[530:1530], y[530:1530]))
        pred, sets = clf.predict_set(X[1530:])
        scores = 1 - model.predict_proba(X[1530:])
        np.testing.assert_array_equal(sets, scores <= clf.threshold_)
        if method != "split":  # the exact rule's set is inside the threshold set
            assert not (clf.rule_.includes(scores) & ~sets).any()
        np.testing.assert_array_equal(pred, model.predict(X[1530:]))
        covered = sets[np.arange(len(pred)), y[1530:]].mean()
        assert covered > 0.7  # one calibration draw: a sanity bound, not the guarantee


def test_split_estimator_threshold_equals_function():
    rng = np.random.default_rng(5)
    X, y = _data(rng, 260)
    reg = RSAConformalRegressor(method="split").fit(X[:200], y[:200])
    reg.conformalize(X[200:], y[200:])
    assert reg.threshold_ == split_threshold(np.abs(y[200:] - reg.predict(X[200:])), 0.1)
