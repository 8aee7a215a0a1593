import numpy as np
import pytest

from icml26_shared import datasets
from icml26_shared.metrics import binomial_tolerance


@pytest.mark.parametrize("kind", datasets.SCORE_STREAM_KINDS)
def test_score_streams_are_deterministic_and_nonnegative(kind):
    a = datasets.score_stream(kind, 600, seed=3)
    b = datasets.score_stream(kind, 600, seed=3)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.scores.shape == (600,) and (a.scores >= 0).all()
    many = datasets.score_stream(kind, 50, n_streams=4, seed=3)
    assert many.scores.shape == (4, 50)


def test_change_point_stream_has_its_regime_variances():
    T = 30_000
    s = datasets.score_stream("change_point", T, seed=0).scores
    # s = sigma |eps|, so E[s^2] = sigma^2 in each third: 1, 25, 0.25
    for part, sigma in zip(np.array_split(np.arange(T), 3), [1.0, 5.0, 0.5]):
        second_moment = np.mean(s[part] ** 2)
        # relative s.e. of a mean of chi2_1 over 10^4 draws is sqrt(2/10^4) ~ 0.014
        assert abs(second_moment / sigma**2 - 1) < 0.06


def test_stream_scale_and_adversarial_shapes():
    base = datasets.score_stream("stationary", 100, seed=1).scores
    scaled = datasets.score_stream("stationary", 100, seed=1, scale=1e3).scores
    np.testing.assert_allclose(scaled, 1e3 * base)
    alt = datasets.score_stream("alternating", 6, seed=0).scores
    np.testing.assert_array_equal(alt, [1e6, 0, 1e6, 0, 1e6, 0])
    with pytest.raises(ValueError, match="kind must be one of"):
        datasets.score_stream("nope", 10)


def test_dirichlet_classifier_labels_follow_their_law():
    n = 20_000
    d = datasets.dirichlet_classifier(n, 5, seed=0)
    assert d.probs.shape == d.human_probs.shape == d.true_probs.shape == (n, 5)
    np.testing.assert_allclose(d.probs.sum(1), 1.0)
    # P(y = k) equals the mean true probability of class k
    freq = np.bincount(d.y, minlength=5) / n
    expected = d.true_probs.mean(0)
    for k in range(5):
        assert abs(freq[k] - expected[k]) <= binomial_tolerance(expected[k], n)
    # the AI (less noise) ranks the true label first more often than the human
    ai_top1 = np.mean(d.probs.argmax(1) == d.y)
    human_top1 = np.mean(d.human_probs.argmax(1) == d.y)
    assert ai_top1 > human_top1
    again = datasets.dirichlet_classifier(n, 5, seed=0)
    np.testing.assert_array_equal(again.y, d.y)


def test_moved_generators_warn_and_still_work():
    for name in ("regression_scores", "load_diabetes", "load_sp500_returns"):
        assert name not in datasets.__all__
        with pytest.warns(DeprecationWarning, match=rf"datasets\.{name} is deprecated.*use "):
            fn = getattr(datasets, name)
        assert callable(fn)
    with pytest.warns(DeprecationWarning):
        s = datasets.regression_scores("lognormal", 1000, seed=0)
    assert s.shape == (1000,) and (s > 0).all()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        datasets.nope


def test_nbody_is_deterministic_and_conserves_momentum():
    pos, vel, q = datasets.nbody_trajectories(8, 6, seed=2)
    assert pos.shape == vel.shape == (8, 6, 5, 3) and q.shape == (8, 5)
    assert set(np.unique(q)) <= {-1.0, 1.0}
    np.testing.assert_allclose(np.linalg.norm(vel[:, 0], axis=-1), 0.5)
    pos2, _, _ = datasets.nbody_trajectories(8, 6, seed=2)
    np.testing.assert_array_equal(pos, pos2)
    # pairwise forces are antisymmetric: total momentum is conserved unless clipping bites
    momentum = vel.sum(axis=2)
    drift = np.abs(momentum - momentum[:, :1]).max(axis=(1, 2))
    assert np.median(drift) < 1e-9


def test_shipped_data_loaders():
    X, y = datasets.load_digits()
    assert X.shape == (1797, 64) and set(np.unique(y)) == set(range(10))


@pytest.mark.parametrize("seed", ["0", -3, 1.5])
def test_generators_follow_the_seed_rule(seed):
    with pytest.raises((TypeError, ValueError), match="seed must be"):
        datasets.score_stream("stationary", 100, seed=seed)
    a = datasets.score_stream("stationary", 50, seed=np.int64(4)).scores
    assert np.array_equal(a, datasets.score_stream("stationary", 50, seed=4).scores)
