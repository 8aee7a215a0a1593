"""UP-OCP math: the KT = Cover identity, the deterministic bound, coverage, scale-freeness."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaln, xlogy

import up_ocp
from icml26_shared.datasets import score_stream
from icml26_shared.metrics import binomial_tolerance
from up_ocp import OnlineConformal, _up, coverage_bound, run_algorithm, up_grid
from up_ocp import (
    up_ocp as up_factory,
)
from up_ocp._up import cover_fraction, cover_log_wealth, kt_fraction


def _misses_before(s, q):
    err = (s > q).astype(float)
    m = np.concatenate([np.zeros((*s.shape[:-1], 1)), np.cumsum(err, -1)[..., :-1]], -1)
    return m, np.arange(s.shape[-1])


def test_functional_core_matches_object(change_point_small):
    s = change_point_small
    state = _up.init(0.1, eps=1.0, shape=s.shape[:1])
    qs = []
    for t in range(s.shape[1]):
        qs.append(state.q)
        _, state = _up.update(state, s[:, t])
    np.testing.assert_array_equal(
        np.stack(qs, -1), OnlineConformal("up", confidence_level=0.9, eps=1.0).run(s)
    )
    assert int(state.t) == s.shape[1]


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.3])
def test_kt_closed_form_equals_exact_cover_mixture(alpha):
    """Acceptance 1: the sequential KT update equals Cover's Beta-integral mixture to 1e-9."""
    s = score_stream("change_point", 5000, n_streams=3, seed=4).scores
    q, state = run_algorithm(up_factory(alpha, eps=1.0), s)
    m, t = _misses_before(s, q)
    log_w = cover_log_wealth(m, t, alpha, 1.0)
    b = cover_fraction(m, t)
    assert np.max(np.abs(b - kt_fraction(m, t))) <= 1e-9
    q_cover = (b - alpha) / (alpha * (1 - alpha)) * np.exp(log_w)
    assert np.max(np.abs(q - q_cover) / np.exp(log_w)) <= 1e-9
    np.testing.assert_allclose(
        state.log_wealth, cover_log_wealth(state.misses, state.t, alpha), atol=1e-9
    )


def test_kt_mixture_lower_bound_constant_is_log2():
    """B(M+½,T−M+½)/B(½,½) ≥ p̂^M(1−p̂)^(T−M)/(2√T) for all M ≤ T ≤ 1500, tight at T = 1."""
    worst = -np.inf
    for T in range(1, 1501):
        M = np.arange(T + 1)
        p = M / T
        gap = xlogy(M, p) + xlogy(T - M, 1 - p) - (betaln(M + 0.5, T - M + 0.5) - betaln(0.5, 0.5))
        worst = max(worst, float((gap - 0.5 * np.log(T)).max()))
    assert worst <= np.log(2) + 1e-12
    assert worst >= np.log(2) - 1e-12


@pytest.mark.parametrize(("prior", "bar"), [((0.5, 0.5), 1e-2), ((2.0, 2.0), 1e-5)])
def test_grid_universal_portfolio_converges_to_beta_mixture(prior, bar):
    """The grid UP's wealth tends to the exact Beta mixture as the grid is refined (slowly, like
    K^-1/2, for the KT prior whose density is singular at 0 and 1; fast for a smooth prior)."""
    seq = np.where(np.random.default_rng(3).random(400) < 0.2, np.inf, -np.inf)  # forced miss/cover
    gaps = []
    for k in (50, 400, 3200):
        q, st_ = run_algorithm(up_grid(0.1, n_grid=k, prior=prior), seq)
        m = float((seq > q).sum())
        lw = st_.log_wealth + st_.log_prior
        total = np.log(np.exp(lw - lw.max()).sum()) + lw.max()
        gaps.append(abs(total - float(cover_log_wealth(m, 400, 0.1, prior=prior))))
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < bar


ADVERSARIAL = [
    ("always_miss", 1.0),
    ("always_cover", 1.0),
    ("alternating", 1.0),
    ("cauchy", 1.0),
    ("stationary", 1e6),
    ("change_point", 1e6),
    ("mixture", 1e3),
]


@pytest.mark.parametrize(("kind", "scale"), ADVERSARIAL)
@pytest.mark.parametrize("eps", [1e-3, 1.0])
def test_deterministic_bound_every_t(kind, scale, eps):
    """Acceptance 2 on the shared generators, T = 10⁴, every prefix."""
    s = score_stream(kind, 10_000, n_streams=2, scale=scale, seed=8).scores
    q = OnlineConformal("up", confidence_level=0.9, eps=eps).run(s)
    lhs, rhs = coverage_bound(s, q, 0.1, eps)
    assert np.all(lhs <= rhs + 1e-9)


def test_bound_with_infinite_scores():
    s = np.full(3000, np.inf)
    q = OnlineConformal("up", confidence_level=0.9).run(s)
    lhs, rhs = coverage_bound(s, q, 0.1)
    assert np.all(lhs <= rhs + 1e-9)


@settings(max_examples=40, deadline=None)
@given(
    misses=st.lists(st.booleans(), min_size=1, max_size=400),
    alpha=st.floats(0.01, 0.99),
    eps=st.floats(1e-4, 1e4),
    q0=st.floats(-10, 10),
)
def test_bound_property_adaptive_adversary(misses, alpha, eps, q0):
    """An adversary that sees q_t and decides miss or cover: the bound holds at every t."""
    state = _up.init(alpha, eps=eps, q0=q0)
    scores, qs = [], []
    for miss in misses:
        q = float(state.q)
        s = q + 1.0 + abs(q) if miss else q - 1.0 - abs(q)
        if not np.isfinite(s):
            s = np.inf if miss else -np.inf
        qs.append(q)
        scores.append(s)
        _, state = _up.update(state, s)
    lhs, rhs = coverage_bound(np.array(scores), np.array(qs), alpha, eps, q0)
    assert np.all(lhs <= rhs + 1e-9)


@settings(max_examples=30, deadline=None)
@given(
    scores=st.lists(st.one_of(st.floats(-1e8, 1e8), st.just(np.inf)), min_size=1, max_size=300),
    alpha=st.floats(0.02, 0.5),
)
def test_bound_property_arbitrary_scores(scores, alpha):
    # the bound holds for every sequence, signed scores included: the functional core takes
    # them (OnlineConformal refuses negative one-sided scores as a user error)
    s = np.array(scores)
    q, _ = run_algorithm(up_ocp.up_ocp(alpha), s)
    lhs, rhs = coverage_bound(s, q, alpha)
    assert np.all(lhs <= rhs + 1e-9)


def test_change_point_long_run_coverage():
    """Acceptance 3 (coverage part): 10 seeds, mean |miss − α| ≤ 0.02 at T=5,000 and ≤ 0.01 at
    T=20,000."""
    for T, bar in ((5_000, 0.02), (20_000, 0.01)):
        s = score_stream("change_point", T, n_streams=10, seed=2026).scores
        miss = (s > OnlineConformal("up", confidence_level=0.9).run(s)).mean(-1)
        assert abs(miss.mean() - 0.1) <= bar, (T, miss.mean())


def test_stationary_miss_rate_converges():
    """Statistical: on i.i.d. scores the miss rate is α + O(√(log T / T)) (one-sided excess)."""
    s = score_stream("stationary", 20_000, n_streams=4, seed=9).scores
    miss = (s > OnlineConformal("up", confidence_level=0.9).run(s)).mean(-1)
    tol = binomial_tolerance(0.1, 20_000) + np.sqrt(0.18 * np.log(20_000) / 20_000)
    assert np.all(np.abs(miss - 0.1) <= tol)
    assert np.all(miss >= 0.1 - binomial_tolerance(0.1, 20_000))


def test_scale_free_vs_fixed_step_quantile_tracking():
    """Acceptance 4: ×10³ moves UP-OCP's miss rate by ≤ 0.01; fixed-η tracking by > 0.05."""
    s = score_stream("stationary", 5000, n_streams=5, seed=3).scores
    up1 = (s > OnlineConformal("up", eps=1.0).run(s)).mean()
    up3 = (1e3 * s > OnlineConformal("up", eps=1.0).run(1e3 * s)).mean()
    fixed = {"lr": 0.1, "scale": 1.0}  # the textbook fixed step, in score units
    qt1 = (s > OnlineConformal("quantile_tracking", **fixed).run(s)).mean()
    with pytest.warns(UserWarning, match=r"lr=0.1 x scale=1 is a step in score units"):
        qt3 = (1e3 * s > OnlineConformal("quantile_tracking", **fixed).run(1e3 * s)).mean()
    assert abs(up3 - up1) <= 0.01
    assert abs(qt3 - qt1) > 0.05


def test_jax_scan_matches_numpy(jax_x64, change_point_small):
    q_np = OnlineConformal("up", confidence_level=0.9, eps=0.5).run(change_point_small)
    q_jx = up_ocp.run_up_jax(change_point_small, 0.1, eps=0.5)
    np.testing.assert_allclose(q_jx, q_np, rtol=1e-10, atol=1e-12)


def test_bound_function_rejects_bad_args():
    with pytest.raises(ValueError, match="alpha must be in"):
        coverage_bound([1.0], [1.0], 2.0)
    with pytest.raises(ValueError, match="eps must be finite and > 0"):
        coverage_bound([1.0], [1.0], 0.1, eps=-1)
    with pytest.raises(ValueError, match="prior\\[0\\] must be finite and > 0"):
        _up.init(0.1, prior=(0.0, 0.5))
