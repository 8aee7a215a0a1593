import numpy as np
import pytest

from rsa_cp.data import load_diabetes, regression_scores


def test_regression_scores_laws_and_shocks():
    s = regression_scores("lognormal", 40_000, seed=0)
    assert abs(np.median(s) - 1.0) < 0.03  # median of exp N(0,1) is 1
    g = regression_scores("gamma", 40_000, seed=0)
    assert abs(g.mean() - 2.0) < 0.05
    shocked = regression_scores("lognormal", 40_000, seed=0, shock_prob=0.2)
    assert np.mean(shocked > s) == pytest.approx(0.2, abs=0.01)
    affine = regression_scores("lognormal", 100, seed=0, shift=1.0, scale=2.0)
    np.testing.assert_allclose(affine, 1.0 + 2.0 * regression_scores("lognormal", 100, seed=0))


def test_moved_generator_matches_the_deprecated_shared_one():
    from icml26_shared import datasets

    with pytest.warns(DeprecationWarning, match="use rsa_cp.data.regression_scores"):
        old = datasets.regression_scores
    for law in ("lognormal", "student_t", "gamma", "halfnormal"):
        np.testing.assert_array_equal(
            old(law, 500, seed=3, shock_prob=0.1),
            regression_scores(law, 500, seed=3, shock_prob=0.1),
        )


def test_bad_input():
    with pytest.raises(ValueError, match="law must be one of"):
        regression_scores("cauchy", 10)
    with pytest.raises(ValueError, match=r"shock_prob must be in \[0, 1\]"):
        regression_scores("gamma", 10, shock_prob=1.5)


def test_load_diabetes():
    pytest.importorskip("sklearn")
    X, y = load_diabetes()
    assert X.shape == (442, 10) and y.shape == (442,)


def test_real_classification_sets_load():
    pytest.importorskip("sklearn")
    from rsa_cp.data import REAL_SETS, load_real

    X, y = load_real("iris")
    assert X.shape == (150, 4) and y.dtype == np.int64 and set(y) == {0, 1, 2}
    assert set(REAL_SETS) == {"breast_cancer", "wine", "iris"}
    with pytest.raises(ValueError, match="name must be one of"):
        load_real("boston")
