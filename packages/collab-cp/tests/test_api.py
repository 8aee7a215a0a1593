import collab_cp


def test_public_api_is_exact():
    assert collab_cp.__all__ == [
        "HUMAN_POLICIES",
        "SCORES",
        "CollabReport",
        "CollaborativeConformal",
        "CollaborativeRegressor",
        "HarmControlledRestriction",
        "IntervalUnion",
        "OnlineCollaborative",
        "OnlineState",
        "OnlineTrace",
        "RegressionReport",
        "SplitConformalClassifier",
        "Thresholds",
        "as_label_mask",
        "calibrate_thresholds",
        "collaborative_metrics",
        "collaborative_sets",
        "conformal_quantile",
        "coverage_matched_sets",
        "human_sets",
        "optimal_collaborative_sets",
    ]
    for name in collab_cp.__all__:
        assert hasattr(collab_cp, name)
    assert collab_cp.__version__ == "0.1.0"


def test_reproduce_entry_point_objects():
    from collab_cp._reproduce import EXPERIMENT

    assert EXPERIMENT.package == "collab-cp"
    assert callable(EXPERIMENT.reproduce)


def test_docstring_examples_run():
    import doctest

    from collab_cp import _offline

    assert doctest.testmod(_offline).failed == 0
