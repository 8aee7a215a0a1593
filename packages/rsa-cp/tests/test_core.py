import numpy as np
import pytest

from rsa_cp import coverage_bounds, rsa_threshold
from rsa_cp._bounds import beta_binomial_window
from rsa_cp.baselines import (
    randomized_split_threshold,
    reference_threshold,
    spi_threshold,
    split_threshold,
)


def _random_case(rng):
    m = int(rng.integers(1, 30))
    n = int(rng.integers(m, 160))
    law = rng.integers(3)
    cal = [rng.lognormal(size=m), rng.gamma(2.0, size=m), np.abs(rng.standard_t(3, size=m))][law]
    ref = rng.lognormal(rng.normal(0, 0.5), rng.uniform(0.3, 1.5), size=n) + rng.normal(0, 0.3)
    if rng.random() < 0.2:  # discrete scores: ties inside and across the two samples
        cal, ref = np.round(cal, 1), np.round(ref, 1)
    alpha = float(rng.uniform(0.01, 0.5))
    beta = float(rng.uniform(0.02, 0.95))
    pool = np.concatenate([cal, ref])
    cands = np.concatenate([rng.choice(pool, 3), rng.uniform(pool.min() - 1, pool.max() + 1, 3)])
    return cal, ref, alpha, beta, cands


def test_alignment_off_matches_independent_spi_decision_for_decision(naive_spi):
    """Acceptance 2: 1,000 random cases (6 candidates each, ties included)."""
    rng = np.random.default_rng(2026)
    mismatches, total = 0, 0
    for _ in range(1000):
        cal, ref, alpha, beta, cands = _random_case(rng)
        rule = spi_threshold(cal, ref, alpha, beta)
        ours = rule.includes(cands)
        theirs = np.array([naive_spi(cal, ref, alpha, beta, float(c)) for c in cands])
        mismatches += int(np.sum(ours != theirs))
        total += cands.size
    assert total == 6000
    assert mismatches == 0


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_threshold_is_the_largest_included_score(seed, align):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 30))
    cal = rng.lognormal(size=m)
    ref = rng.lognormal(0.3, 0.8, size=int(rng.integers(m + 1, 400)))
    alpha = float(rng.uniform(0.05, 0.6))
    rule = rsa_threshold(cal, ref, alpha, float(rng.uniform(0.05, 0.9)), align=align)
    t = rule.threshold
    top = max(cal.max(), ref.max()) * 3
    if np.isposinf(t):
        assert rule.includes(np.array([top, 1e12])).all()
        return
    # every candidate above t is excluded: a dense grid, all data points, points just above t
    above = np.concatenate([np.linspace(0, top, 4001), cal, ref, t + np.geomspace(1e-9, 1, 30)])
    above = above[above > t]
    assert not rule.includes(above).any()
    # and t itself is included (up to rounding of T^{-1})
    assert rule.includes(np.array([t]))[0] or rule.includes(np.array([t - 1e-9 * (1 + t)]))[0]


def test_included_set_need_not_be_an_interval_but_threshold_covers_it():
    rng = np.random.default_rng(7)
    found = False
    for _ in range(200):
        rule = rsa_threshold(rng.lognormal(size=10), rng.lognormal(size=300), 0.3, 0.9)
        grid = np.linspace(0, rule.threshold, 3000) if np.isfinite(rule.threshold) else None
        if grid is not None:
            inc = rule.includes(grid)
            if not inc[: np.flatnonzero(inc)[-1]].all():
                found = True
                break
    assert found  # holes below the threshold exist: regression intervals use the threshold


@pytest.mark.parametrize("m", [1, 5, 18])
def test_infinite_when_calibration_too_small(m):
    """Acceptance 6: ceil((1-alpha)(m+1)) > m -> split CP and RSA's marginal mode are infinite,
    never clipped to the largest calibration score."""
    rng = np.random.default_rng(m)
    alpha = 0.9 / (m + 1)  # (1 - alpha)(m + 1) = m + 0.1 -> rank m + 1
    cal, ref = rng.lognormal(size=m), rng.lognormal(size=1000)
    assert split_threshold(cal, alpha) == np.inf
    marginal = rsa_threshold(cal, ref, alpha, 0.4, guarantee="marginal")
    assert marginal.is_infinite and marginal.includes(np.array([1e300])).all()
    assert marginal.coverage_lower == 1.0


@pytest.mark.parametrize(("m", "alpha"), [(3, 0.05), (5, 0.01), (10, 0.02), (19, 0.01)])
def test_rsa_top_rank_included_gives_infinite_threshold(m, alpha):
    """The RSA analogue of acceptance 6: when the rank-(m+1) threshold reaches Z_(m), every
    score above the calibration range is included, so the threshold is +inf (not S_(m))."""
    rng = np.random.default_rng(m)
    cal, ref = rng.lognormal(size=m), rng.lognormal(size=2000)
    rule = rsa_threshold(cal, ref, alpha, 0.4)
    assert rule.rank_thresholds[m] >= rule.aligned_cal[-1]
    assert rule.is_infinite and rule.certain_rank == m + 1 and rule.coverage_lower == 1.0
    assert rule.includes(np.array([cal.max() * 10, 1e300])).all()


def test_rsa_may_stay_finite_where_split_is_infinite_and_says_so():
    """By design RSA-CP trades coverage for width: its certificate then sits below 1 - alpha."""
    rng = np.random.default_rng(5)
    cal, ref = rng.lognormal(size=18), rng.lognormal(size=1000)
    alpha = 0.9 / 19
    rule = rsa_threshold(cal, ref, alpha, 0.4)
    assert split_threshold(cal, alpha) == np.inf
    if np.isfinite(rule.threshold):
        assert rule.coverage_lower < 1 - alpha
        assert rule.coverage_lower == coverage_bounds(18, 1000, alpha, 0.4).lower


def test_split_threshold_ranks():
    s = np.arange(1.0, 21.0)[::-1]
    assert split_threshold(s, 0.05) == 20.0  # ceil(0.95 * 21) = 20
    assert split_threshold(s, 0.1) == 19.0  # ceil(0.9 * 21) = 19
    assert split_threshold(s, 0.04) == np.inf  # ceil(0.96 * 21) = 21 > 20
    assert reference_threshold(s, 0.1) == 19.0


def test_randomized_split_is_exact_on_average():
    s = np.arange(1.0, 21.0)
    draws = np.array([randomized_split_threshold(s, 0.05, seed=i) for i in range(4000)])
    assert set(np.unique(draws)) <= {19.0, 20.0}
    # (1 - 0.05) * 21 = 19.95: S_(20) with probability 0.95
    assert abs(np.mean(draws == 20.0) - 0.95) < 0.02


@pytest.mark.parametrize("seed", range(30))
def test_certified_rank_depends_on_reference_only_and_lies_in_bounds(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(5, 60))
    n = int(rng.integers(m + 1, 1500))
    ref = [
        rng.lognormal(size=n),
        rng.uniform(size=n),
        np.r_[rng.normal(size=n // 2), 5 + rng.normal(size=n - n // 2)],
    ][seed % 3]
    alpha, beta = float(rng.uniform(0.02, 0.3)), float(rng.uniform(0.05, 0.9))
    ranks = {
        rsa_threshold(law(size=m), ref, alpha, beta).certain_rank
        for law in (rng.lognormal, rng.uniform, rng.exponential, rng.standard_normal)
    }
    assert len(ranks) == 1  # L(R) does not depend on the real scores
    b = coverage_bounds(m, n, alpha, beta)
    (rank,) = ranks
    assert b.rank_min <= rank <= max(b.rank_max, b.rank_min)


def test_window_matches_scipy_ppf():
    from scipy import stats

    for n, m, beta in [(1000, 20, 0.4), (3000, 40, 0.05), (57, 33, 0.7), (5, 9, 0.2)]:
        lo, hi = beta_binomial_window(n, m, beta)
        k = np.arange(1, m + 2)
        np.testing.assert_array_equal(lo, stats.betabinom.ppf(beta / 2, n, k, m + 2 - k))
        np.testing.assert_array_equal(hi, stats.betabinom.ppf(1 - beta / 2, n, k, m + 2 - k))


def test_marginal_mode_certifies_the_level_and_is_never_below_split():
    rng = np.random.default_rng(3)
    for m, alpha in [(20, 0.1), (40, 0.05), (39, 0.1), (80, 0.05)]:
        for _ in range(10):
            cal, ref = rng.lognormal(size=m), rng.lognormal(size=1000)
            rule = rsa_threshold(cal, ref, alpha, 0.4, guarantee="marginal")
            assert rule.coverage_lower >= 1 - alpha
            assert rule.threshold >= split_threshold(cal, alpha) - 1e-12
            plain = rsa_threshold(cal, ref, alpha, 0.4)
            assert rule.alpha_used <= plain.alpha_used + 1e-12


def test_scale_equivariance_of_rsa():
    rng = np.random.default_rng(11)
    cal, ref = rng.lognormal(size=25), rng.lognormal(size=800)
    a = rsa_threshold(cal, ref, 0.1).threshold
    b = rsa_threshold(cal, 2.0 * ref + 5.0, 0.1).threshold
    assert a == pytest.approx(b, rel=1e-9)
