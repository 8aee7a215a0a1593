import numpy as np
import pytest

import collab_cp


def test_public_api_is_exact():
    assert collab_cp.__all__ == [
        "HUMAN_POLICIES", "SCORES", "CollabReport", "CollaborativeConformal",
        "CollaborativeRegressor", "IntervalUnion", "OnlineCollaborative", "OnlineState",
        "OnlineTrace", "RegressionReport", "Thresholds", "as_label_mask", "baselines",
        "calibrate_thresholds", "collaborative_metrics", "collaborative_sets", "data",
        "experiments", "human_sets", "optimal_collaborative_sets",
    ]  # fmt: skip
    for name in collab_cp.__all__:
        assert hasattr(collab_cp, name)
    from importlib.metadata import version

    assert collab_cp.__version__ == version("collab-cp")
    assert collab_cp.baselines.__all__ == [
        "HarmControlledRestriction",
        "SplitConformalClassifier",
        "coverage_matched_sets",
        "matched_threshold",
    ]
    assert collab_cp.experiments.__all__ == ["SplitResults", "frontier", "split_evaluation"]
    for module in (collab_cp.baselines, collab_cp.data, collab_cp.experiments):
        for name in module.__all__:
            assert hasattr(module, name)


@pytest.mark.parametrize(
    "name", ["HarmControlledRestriction", "SplitConformalClassifier", "coverage_matched_sets"]
)
def test_moved_baselines_are_deprecated_aliases(name):
    with pytest.warns(
        DeprecationWarning, match=rf"collab_cp\.{name} is deprecated.*collab_cp\.baselines"
    ):
        obj = getattr(collab_cp, name)
    assert obj is getattr(collab_cp.baselines, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        collab_cp.nope


def test_conformal_quantile_is_deprecated_and_keeps_its_coverage_meaning():
    from icml26_shared.conformal import split_quantile

    s = np.random.default_rng(0).random(99)
    with pytest.warns(DeprecationWarning, match="conformal_quantile.*deprecated.*split_quantile"):
        q = collab_cp.conformal_quantile(s, 0.9)  # a coverage level
    assert q == split_quantile(s, 0.1) == np.sort(s)[89]


def test_deprecated_verbs_warn_and_match_the_new_ones():
    from collab_cp.data import heteroscedastic_regression, synthetic_collaboration

    d = synthetic_collaboration(400, "top_k", k=2, seed=0)
    new = collab_cp.CollaborativeConformal().conformalize(d.probs, d.human, d.y)
    with pytest.warns(DeprecationWarning, match="CollaborativeConformal.calibrate is deprecated"):
        old = collab_cp.CollaborativeConformal().calibrate(d.probs, d.human, d.y)
    assert old.thresholds == new.thresholds
    with pytest.warns(DeprecationWarning, match="SplitConformalClassifier.calibrate is deprecated"):
        collab_cp.baselines.SplitConformalClassifier(0.9).calibrate(d.probs, d.y)
    with pytest.warns(
        DeprecationWarning, match="HarmControlledRestriction.calibrate is deprecated"
    ):
        collab_cp.baselines.HarmControlledRestriction().calibrate(d.probs, d.human, d.y)
    r = heteroscedastic_regression(300, seed=0)
    args = (r.y_pred, r.sigma, r.human_lower, r.human_upper)
    with pytest.warns(DeprecationWarning, match="CollaborativeRegressor.calibrate is deprecated"):
        m = collab_cp.CollaborativeRegressor().calibrate(*args, r.y)
    with pytest.warns(DeprecationWarning, match="predict_intervals is deprecated"):
        old_iv = m.predict_intervals(*args)
    np.testing.assert_array_equal(old_iv.length, m.predict_interval(*args).length)


def test_reproduce_entry_point_objects():
    from collab_cp._reproduce import EXPERIMENT

    assert EXPERIMENT.package == "collab-cp"
    assert callable(EXPERIMENT.reproduce)


def test_docstring_examples_run():
    import doctest

    from collab_cp import _offline

    assert doctest.testmod(_offline).failed == 0
