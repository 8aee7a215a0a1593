import math

import numpy as np
import pytest

from collab_cp import (
    CollaborativeConformal,
    collaborative_sets,
    conformity_scores,
)
from collab_cp.baselines import (
    HarmControlledRestriction,
    SplitConformalClassifier,
    coverage_matched_sets,
)
from collab_cp.data import synthetic_collaboration
from collab_cp.experiments import split_evaluation
from icml26_shared.metrics import binomial_tolerance, set_coverage

EPS, DELTA = 0.05, 0.7


def test_split_cp_marginal_coverage_over_many_draws():
    covs = []
    for seed in range(40):
        d = synthetic_collaboration(1500, "top_k", k=2, seed=100 + seed)
        m = SplitConformalClassifier(0.9).conformalize(d.probs[:500], d.y[:500])
        covs.append(set_coverage(m.predict_set(d.probs[500:]), d.y[500:]))
    assert np.mean(covs) >= 0.9 - binomial_tolerance(0.9, 40 * 450)
    assert np.mean(covs) <= 0.9 + 1 / 501 + binomial_tolerance(0.9, 40 * 450)


def test_restriction_is_collaborative_without_augmentation():
    d = synthetic_collaboration(3000, "top_k", k=3, seed=9)
    r = HarmControlledRestriction(EPS).conformalize(d.probs[:1000], d.human[:1000], d.y[:1000])
    c = CollaborativeConformal(EPS, DELTA).conformalize(d.probs[:1000], d.human[:1000], d.y[:1000])
    sets = r.predict_set(d.probs[1000:], d.human[1000:])
    assert r.prune_threshold_ == c.prune_threshold_
    assert not (sets & ~d.human[1000:]).any()
    s = conformity_scores(d.probs[1000:])
    assert np.array_equal(
        sets, collaborative_sets(s, d.human[1000:], c.prune_threshold_, -math.inf)
    )
    with pytest.raises(RuntimeError, match="call conformalize"):
        HarmControlledRestriction().predict_set(d.probs, d.human)


def test_coverage_matched_sets_hits_the_target():
    d = synthetic_collaboration(2000, "top_k", k=2, seed=10)
    for c in (0.5, 0.83, 0.9, 1.0):
        sets = coverage_matched_sets(d.probs, d.y, c)
        assert set_coverage(sets, d.y) == math.ceil(2000 * c) / 2000


def test_matched_coverage_smaller_than_ai_and_human_on_digits():
    """Acceptance 3 on digits (reduced): paired over splits, collaborative sets are smaller than AI
    alone and than the human's own split CP at the collaborative coverage."""
    pytest.importorskip("sklearn")
    from collab_cp.data import digits_collaboration

    d = digits_collaboration(seed=0)
    r = split_evaluation(
        1 - d.probs,
        d.human,
        d.y,
        n_cal=500,
        n_splits=60,
        epsilon=EPS,
        delta=DELTA,
        seed=0,
        human_scores=1 - d.human_probs,
    )
    for baseline in (r.ai_size, r.human_cp_size):
        diff = r.size - baseline
        assert diff.mean() + 3 * diff.std(ddof=1) / np.sqrt(diff.size) < 0
    # and the human alone as proposed is dominated in coverage
    assert r.coverage.mean() > r.human_coverage.mean()
