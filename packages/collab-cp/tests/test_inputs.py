import json

import numpy as np
import pytest

from collab_cp import (
    CollaborativeConformal,
    CollaborativeRegressor,
    OnlineCollaborative,
    as_label_mask,
    conformity_scores,
    human_sets,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=20)
    y = rng.integers(0, 4, 20)
    H = p > 0.3
    return p, H, y


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
@pytest.mark.parametrize("name", ["epsilon", "delta"])
def test_levels_outside_unit_interval(bad, name):
    with pytest.raises(ValueError, match=rf"{name} must be in \(0, 1\), got"):
        CollaborativeConformal(**{name: bad})
    with pytest.raises(ValueError, match=rf"{name} must be in \(0, 1\)"):
        OnlineCollaborative(**{name: bad})
    with pytest.raises(ValueError, match=rf"{name} must be in \(0, 1\)"):
        CollaborativeRegressor(**{name: bad})


def test_human_sets_wrong_shape(data):
    p, _, y = data
    with pytest.raises(ValueError, match=r"human_sets must have shape \(20, 4\), got \(20, 5\)"):
        CollaborativeConformal().conformalize(p, np.zeros((20, 5), bool), y)
    with pytest.raises(ValueError, match="human_sets must hold 20 sets, got 19"):
        CollaborativeConformal().conformalize(p, [[0]] * 19, y)


def test_human_labels_outside_label_space(data):
    p, _, y = data
    sets = [[0]] * 19 + [[1, 4]]
    with pytest.raises(
        ValueError, match=r"human_sets\[19\] must hold labels in \[0, 3\], got \[1, 4\]"
    ):
        CollaborativeConformal().conformalize(p, sets, y)
    with pytest.raises(ValueError, match=r"human_sets\[0\] must hold labels in \[0, 3\]"):
        CollaborativeConformal().conformalize(p, [[-1]] + [[0]] * 19, y)
    with pytest.raises(TypeError, match=r"human_sets\[0\] must hold integer labels"):
        CollaborativeConformal().conformalize(p, [[0.5]] * 20, y)


def test_probabilities_must_sum_to_one_and_be_finite(data):
    p, H, y = data
    q = p.copy()
    q[3] *= 1.1
    with pytest.raises(ValueError, match=r"probs rows must sum to 1, got .* at row 3"):
        CollaborativeConformal().conformalize(q, H, y)
    q = p.copy()
    q[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"probs must be finite, got nan at index \(2, 1\)"):
        CollaborativeConformal().conformalize(q, H, y)
    with pytest.raises(ValueError, match="human_probs rows must sum to 1"):
        human_sets(np.full((3, 4), 0.5))


def test_labels_checked(data):
    p, H, y = data
    with pytest.raises(ValueError, match=r"y must hold labels in \[0, 3\]"):
        CollaborativeConformal().conformalize(p, H, np.r_[y[:-1], 7])
    with pytest.raises(ValueError, match=r"y must have shape \(20,\)"):
        CollaborativeConformal().conformalize(p, H, y[:5])
    with pytest.raises(TypeError, match="y must hold integer labels"):
        CollaborativeConformal().conformalize(p, H, np.full(20, 0.5))


def test_masks_lists_and_integer_arrays_agree(data):
    p, H, y = data
    lists = [np.flatnonzero(r).tolist() for r in H]
    assert np.array_equal(as_label_mask(lists, 20, 4), H)
    top2 = np.argsort(-p, axis=1)[:, :2]
    assert np.array_equal(as_label_mask(top2, 20, 4), human_sets(p, "top_k", k=2))
    a = CollaborativeConformal().conformalize(p, H, y).predict_set(p, H)
    b = CollaborativeConformal().conformalize(p, lists, y).predict_set(p, lists)
    assert np.array_equal(a, b)


def test_unknown_names_and_uncalibrated(data):
    p, H, y = data
    with pytest.raises(ValueError, match="score must be one of '1-prob', 'aps', got 'bad'"):
        CollaborativeConformal(score="bad")
    with pytest.raises(ValueError, match="policy must be one of"):
        human_sets(p, "median")
    with pytest.raises(ValueError, match="k must be at most the number of classes 4, got 5"):
        human_sets(p, "top_k", k=5)
    with pytest.raises(RuntimeError, match="call conformalize"):
        CollaborativeConformal().predict_set(p, H)
    with pytest.raises(ValueError, match="score\\(probs\\) must have shape"):
        conformity_scores(p, lambda q: q[:, :2])
    cp = CollaborativeConformal().conformalize(p, H, y)
    with pytest.raises(ValueError, match="report needs all of probs, human_sets and y"):
        cp.report(p, H)


def test_regression_and_online_inputs():
    m = CollaborativeRegressor()
    with pytest.raises(ValueError, match=r"sigma must be > 0, got 0\.0 at index 1"):
        m.conformalize([0, 0], [1, 0], [-1, -1], [1, 1], [0, 0])
    with pytest.raises(ValueError, match="human_upper must be >= human_lower"):
        m.conformalize([0, 0], [1, 1], [-1, 2], [1, 1], [0, 0])
    with pytest.raises(ValueError, match="arguments must have the same length"):
        m.conformalize([0, 0], [1, 1, 1], [-1, -1], [1, 1], [0, 0])
    with pytest.raises(ValueError, match="eta must be finite and > 0, got 0"):
        OnlineCollaborative(eta=0)
    with pytest.raises(ValueError, match="data must be the output of"):
        OnlineCollaborative.from_state_dict(json.loads('{"config": {}}'))
    with pytest.raises(ValueError, match=r"human_set\[0\] must hold labels in \[0, 2\]"):
        OnlineCollaborative().update([0.2, 0.3, 0.5], [3], 0)


def test_integer_mask_is_refused_with_a_hint():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=6)
    H = human_sets(p, "top_k", k=2)
    with pytest.raises(
        TypeError,
        match=r"integer 0/1 array of the mask's shape \(6, 4\).*astype\(bool\).*label lists",
    ):
        as_label_mask(H.astype(int), 6, 4)
    with pytest.raises(TypeError, match="Pass a boolean mask"):
        CollaborativeConformal().conformalize(p, H.astype(np.int8), rng.integers(0, 4, 6))
    # label lists as a 2-D integer array of another shape are still read as labels
    top2 = np.argsort(-p, axis=1)[:, :2]
    np.testing.assert_array_equal(as_label_mask(top2, 6, 4), H)
    np.testing.assert_array_equal(as_label_mask(H, 6, 4), H)


def test_complex_probabilities_are_rejected():
    p = np.full((3, 2), 0.5) + 0j
    with pytest.raises(TypeError, match="probs must be real-valued"):
        conformity_scores(p)
