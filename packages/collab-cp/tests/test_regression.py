import numpy as np
import pytest

from collab_cp import CollaborativeRegressor
from collab_cp.data import heteroscedastic_regression

EPS, DELTA = 0.05, 0.7


def _split_rates(n_splits, seed):
    d = heteroscedastic_regression(5000, seed=seed)
    rng = np.random.default_rng(seed)
    out = {"harm": [], "rec": [], "n_in": [], "n_out": [], "t_in": [], "t_out": []}
    for _ in range(n_splits):
        perm = rng.permutation(5000)
        c, t = perm[:500], perm[500:]
        m = CollaborativeRegressor(EPS, DELTA).conformalize(
            d.y_pred[c], d.sigma[c], d.human_lower[c], d.human_upper[c], d.y[c]
        )
        r = m.report(d.y_pred[t], d.sigma[t], d.human_lower[t], d.human_upper[t], d.y[t])
        for k, v in zip(out, (r.harm, r.recovery, m.n_in_, m.n_out_, r.n_in, r.n_out)):
            out[k].append(v)
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def test_acceptance_5_regression_rates(rate_tolerance):
    """Acceptance 5 (reduced): harm ≤ ε and recovery ≥ δ on a heteroscedastic task."""
    r = _split_rates(200, seed=1)
    assert r["harm"].mean() <= EPS + rate_tolerance(EPS, r["n_in"], r["t_in"])
    assert r["rec"].mean() >= DELTA - rate_tolerance(DELTA, r["n_out"], r["t_out"])
    assert r["harm"].mean() >= EPS - np.mean(1 / (r["n_in"] + 1)) - rate_tolerance(
        EPS, r["n_in"], r["t_in"]
    )


@pytest.mark.slow
def test_acceptance_5_regression_rates_2000_splits():
    r = _split_rates(2000, seed=2)
    assert r["harm"].mean() <= EPS + 0.005
    assert r["rec"].mean() >= DELTA - 0.005
    assert abs(r["harm"].mean() - EPS) <= np.mean(1 / (r["n_in"] + 1)) + 0.01
    assert abs(r["rec"].mean() - DELTA) <= np.mean(1 / (r["n_out"] + 1)) + 0.01


def test_union_of_at_most_three_intervals_and_exact_geometry():
    m = CollaborativeRegressor()
    m.prune_threshold_, m.augment_threshold_ = 0.5, 2.0
    # H = [-1, 1] around ŷ = 0, σ = 1: pruned piece [-0.5, 0.5] plus AI pieces [-2,-1) and (1, 2]
    u = m.predict_interval([0.0, 0.0, 5.0], [1.0, 1.0, 1.0], [-1.0, -3.0, -1.0], [1.0, 3.0, 1.0])
    assert u.n_pieces.tolist() == [3, 1, 1]
    np.testing.assert_allclose(u.pieces[0], [[-2, -1], [-0.5, 0.5], [1, 2]])
    np.testing.assert_allclose(u.pieces[1, 0], [-0.5, 0.5])  # H covers the AI band: prune only
    np.testing.assert_allclose(u.pieces[2, 0], [3, 7])  # H far from ŷ: nothing kept inside H
    np.testing.assert_allclose(u.length, [3.0, 1.0, 4.0])


def test_membership_and_length_agree_with_the_rule_on_random_inputs():
    rng = np.random.default_rng(0)
    n = 400
    c, s = rng.normal(size=n), rng.uniform(0.2, 2, n)
    lo = c + rng.normal(size=n)
    hi = lo + rng.exponential(1.0, n)
    for b, a in [(0.7, 1.8), (2.0, 0.4), (1.0, 1.0), (-0.1, 1.0)]:
        m = CollaborativeRegressor()
        m.prune_threshold_, m.augment_threshold_ = b, a
        u = m.predict_interval(c, s, lo, hi)
        assert u.n_pieces.max() <= 3
        grid = np.linspace(-10, 10, 20_001)
        inside = (lo[:, None] <= grid) & (grid <= hi[:, None])
        score = np.abs(grid - c[:, None]) / s[:, None]
        rule = np.where(inside, score <= b, score <= a)
        member = np.stack([u.contains(np.full(n, g)) for g in grid[::200]], axis=1)
        assert np.array_equal(member, rule[:, ::200])
        np.testing.assert_allclose(u.length, rule.sum(axis=1) * (grid[1] - grid[0]), atol=2e-3)
