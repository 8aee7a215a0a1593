import math

import numpy as np
import pytest

from icml26_shared import conformal as cf


def _brute_rank(n: int, alpha: float) -> int:
    """Exact rational arithmetic: smallest integer k with k >= (n + 1)(1 - alpha)."""
    from fractions import Fraction

    return math.ceil((n + 1) * (1 - Fraction(str(alpha))))


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.9, 0.95])
def test_conformal_rank_matches_exact_arithmetic(alpha):
    ns = np.arange(0, 2001)
    got = cf.conformal_rank(ns, alpha)
    want = np.array([_brute_rank(int(n), alpha) for n in ns])
    np.testing.assert_array_equal(got, want)
    assert cf.conformal_rank(19, 0.1) == 18  # 0.9 * 20 = 18.000000000000004 in floating point
    assert isinstance(cf.conformal_rank(19, 0.1), int)


@pytest.mark.parametrize(
    "bad", [1.5, -0.1, 0.0, 1.0, 0, 1, float("nan"), np.float64(1.5), np.float32(2.0)]
)
def test_alpha_outside_open_unit_interval_raises_whatever_its_type(bad):
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\), got "):
        cf.conformal_rank(20, bad)
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\), got "):
        cf.split_quantile(np.arange(20.0), bad)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 1.2"):
        cf.split_quantile(np.ones((2, 5)), np.array([0.1, 1.2]))


def test_bad_types_raise():
    with pytest.raises(TypeError, match="alpha must be real-valued"):
        cf.conformal_rank(20, 0.1 + 0.2j)
    with pytest.raises(TypeError, match="alpha must be a real number, got bool"):
        cf.conformal_rank(20, True)
    with pytest.raises(TypeError, match="n must be a non-negative integer"):
        cf.conformal_rank(20.5, 0.1)
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        cf.conformal_rank(-1, 0.1)
    with pytest.raises(TypeError, match="scores must be real-valued"):
        cf.split_quantile(np.arange(5) + 1j, 0.1)
    with pytest.raises(ValueError, match="scores must be finite, got nan at index 1"):
        cf.split_quantile([1.0, np.nan], 0.1)


def test_split_quantile_any_order_any_axis_and_infinite_rank():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((3, 50))
    for alpha in (0.05, 0.1, 0.33):
        k = cf.conformal_rank(50, alpha)
        want = np.sort(s, axis=1)[:, k - 1]
        np.testing.assert_array_equal(cf.split_quantile(s, alpha), want)
        np.testing.assert_array_equal(cf.split_quantile(s.T, alpha, axis=0), want)
        perm = rng.permutation(50)
        np.testing.assert_array_equal(cf.split_quantile(s[:, perm], alpha), want)
    assert cf.split_quantile(np.arange(5.0), 0.1) == math.inf  # k = 6 > 5
    assert cf.split_quantile(np.arange(9.0), 0.1) == 8.0  # k = 9 = n
    assert cf.split_quantile(np.array([]), 0.1) == math.inf
    assert cf.split_quantile([1.0, np.inf, 2.0], 0.5) == 2.0  # +inf is a legal score
    assert cf.split_quantile([1.0, np.inf, 2.0], 0.4) == math.inf  # k = 3: the +inf score
    # an array of levels broadcasts against the batch axes
    levels = np.array([[0.1], [0.5]])
    out = cf.split_quantile(s, levels)
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out[1], cf.split_quantile(s, 0.5))


def test_split_quantile_coverage_is_at_least_one_minus_alpha():
    # Statistical: 4000 repetitions of n = 19 calibration + 1 test point; the coverage is exactly
    # k/(n + 1) = 0.9 for continuous scores, checked with a binomial tolerance.
    from icml26_shared.metrics import binomial_tolerance

    rng = np.random.default_rng(1)
    reps, n, alpha = 4000, 19, 0.1
    draws = rng.standard_normal((reps, n + 1))
    q = cf.split_quantile(draws[:, :n], alpha)
    rate = float(np.mean(draws[:, n] <= q))
    assert abs(rate - 0.9) <= binomial_tolerance(0.9, reps)


def test_split_quantile_matches_mapie():
    """Peer check on the same scores: MAPIE 1.x's split-CP quantile (a private helper of theirs)."""
    utils = pytest.importorskip("mapie.utils")
    rng = np.random.default_rng(2)
    checked = 0
    for n in (9, 19, 20, 50, 99, 200, 1000):
        s = rng.random(n)
        for alpha in (0.1, 0.2, 0.05):
            if cf.conformal_rank(n, alpha) > n:
                continue
            peer = utils._compute_classification_quantile(s.reshape(-1, 1), np.array([alpha]))
            assert cf.split_quantile(s, alpha) == float(np.ravel(peer)[0])
            checked += 1
    assert checked >= 15


def test_lac_scores():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    np.testing.assert_allclose(cf.lac_scores(p), 1 - p)
    np.testing.assert_allclose(cf.lac_scores(p, y=[0, 2]), [0.3, 0.4])
    with pytest.raises(ValueError, match="probs rows must sum to 1"):
        cf.lac_scores([[0.5, 0.6]])
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        cf.lac_scores(p, y=[0])
    with pytest.raises(ValueError, match=r"y must hold labels in \[0, 2\]"):
        cf.lac_scores(p, y=[0, 3])
    with pytest.raises(TypeError, match="y must hold integer labels"):
        cf.lac_scores(p, y=[0.5, 1.0])


def test_aps_scores_against_a_loop():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(6), size=40)
    p[0] = [0.25, 0.25, 0.2, 0.1, 0.1, 0.1]  # ties: broken by label index
    s = cf.aps_scores(p)
    for i in range(p.shape[0]):
        order = sorted(range(6), key=lambda j: (-p[i, j], j))
        acc = 0.0
        for j in order:
            acc += p[i, j]
            assert s[i, j] == pytest.approx(acc)
    np.testing.assert_allclose(
        cf.aps_scores(p, y=np.arange(40) % 6), s[np.arange(40), np.arange(40) % 6]
    )
    r = cf.aps_scores(p, randomized=True, rng=1)
    assert np.all(r <= s + 1e-12) and np.all(r >= s - p - 1e-12)
    np.testing.assert_array_equal(
        r, cf.aps_scores(p, randomized=True, rng=np.random.default_rng(1))
    )
    assert not np.array_equal(r, s)
