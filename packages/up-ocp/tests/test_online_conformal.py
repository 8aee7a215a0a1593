"""Salesforce ``online-conformal`` as a peer, finite DtACI, the comparison helpers."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.datasets import score_stream
from up_ocp import run_algorithm
from up_ocp.baselines import (
    compare_methods,
    dtaci,
    interval_summary,
    online_conformal_available,
    online_conformal_thresholds,
)

needs_peer = pytest.mark.skipif(
    not online_conformal_available(), reason="online-conformal (and Merlion) not installed"
)


# ---------------------------------------------------------------- the peer adapter


def _sf_ogd_by_hand(s: np.ndarray, alpha: float, n: int) -> np.ndarray:
    """Independent re-derivation of their ScaleFreeOGD on a score stream: D = √3·max(calibration),
    q ← max(0, q − D g / √(3 Σ g²)), g the pinball gradient at level 1 − α; it first runs over
    the calibration scores, then announces q before each test score."""
    c = 1.0 - alpha
    D = np.sqrt(3.0) * np.max(s[:n])
    q, G, out = 0.0, 0.0, []
    for i, v in enumerate(s):
        if i >= n:
            out.append(q)
        g = -c * (v > q) + (1 - c) * (v < q)
        G += g * g
        if G:
            q = max(0.0, q - D / np.sqrt(3.0 * G) * g)
    return np.array(out)


@needs_peer
def test_adapter_drives_their_sf_ogd_on_the_same_stream():
    s = score_stream("change_point", 400, seed=2).scores
    got = online_conformal_thresholds("sf_ogd", s, 0.1, 30)
    np.testing.assert_allclose(got, _sf_ogd_by_hand(s, 0.1, 30), rtol=1e-12, atol=1e-12)


@needs_peer
@pytest.mark.parametrize("method", ["faci", "saocp", "sf_ogd"])
def test_their_methods_cover_on_a_stationary_stream(method):
    s = score_stream("stationary", 1000, seed=4).scores
    q = online_conformal_thresholds(method, s, 0.1, 50)
    miss = float((s[50:] > q).mean())
    tol = 3.5 * np.sqrt(0.09 / q.size) + 0.01
    assert abs(miss - 0.1) <= tol


@needs_peer
def test_our_dtaci_matches_their_faci_statistically():
    """Same algorithm (Gibbs & Candès), different reference set: coverage within binomial noise and
    widths within 5% on a stationary stream."""
    s = score_stream("stationary", 1500, seed=5).scores
    theirs = online_conformal_thresholds("faci", s, 0.1, 50)
    ours, _ = run_algorithm(dtaci(0.1), s)
    a, b = interval_summary(s[50:], ours[50:]), interval_summary(s[50:], theirs)
    assert abs(a["coverage"] - b["coverage"]) <= 3.5 * np.sqrt(2 * 0.09 / theirs.size)
    assert abs(a["width"] / b["width"] - 1) <= 0.05


def test_adapter_input_errors():
    s = np.abs(np.random.default_rng(0).standard_normal(100))
    with pytest.raises(ValueError, match="method must be one of"):
        online_conformal_thresholds("aci", s)
    with pytest.raises(ValueError, match="longer than n_calibration=50"):
        online_conformal_thresholds("faci", s[:50])
    with pytest.raises(ValueError, match="scores must be >= 0"):
        online_conformal_thresholds("faci", -s)
    with pytest.raises(ValueError, match="alpha"):
        online_conformal_thresholds("faci", s, 1.5)
    with pytest.raises(ValueError, match=r"NaN|finite"):
        online_conformal_thresholds("faci", np.r_[s, np.nan])


@needs_peer
def test_compare_methods_rows_and_finite_widths():
    s = score_stream("change_point", 400, seed=6).scores
    res = compare_methods(s, 0.1, 50)
    assert "FACI (online-conformal)" in res and "UP-OCP (ours, ε=1)" in res
    for row, r in res.items():
        assert 0.0 <= r["coverage"] <= 1.0, row
        assert np.isfinite(r["width"]) and r["width"] > 0, row
        assert r["coverage_se"] >= 0 and r["width_se"] >= 0, row


def test_compare_methods_without_peers_has_only_ours():
    s = score_stream("stationary", 300, seed=7).scores
    res = compare_methods(s, 0.1, 50, peers=False, variants=False)
    assert not any("online-conformal" in k for k in res)
    assert res["DtACI/FACI (ours) at UP-OCP's realised miss"]["inf_frac"] == 0.0


# ---------------------------------------------------------------- finite DtACI (item 3)


def test_dtaci_finite_replaces_inf_by_the_window_max():
    # long runs of covers push the output level to 0 and below
    s = np.r_[np.linspace(1.0, 2.0, 50), np.zeros(400)]
    raw, _ = run_algorithm(dtaci(0.1, finite=False, window=50), s)
    fin, _ = run_algorithm(dtaci(0.1, window=50), s)
    assert np.isposinf(raw[1:]).any()
    assert np.isfinite(fin[1:]).all()  # only q_1 (no score seen yet) may be +inf
    # where the raw update is +inf the finite one is the largest score of the window
    for t in np.flatnonzero(np.isposinf(raw))[:5]:
        if t == 0:
            continue
        assert fin[t] == pytest.approx(s[max(0, t - 50) : t].max())
    same = np.isfinite(raw)
    np.testing.assert_array_equal(fin[same], raw[same])


def test_dtaci_finite_must_be_bool():
    with pytest.raises(TypeError, match="finite must be a bool"):
        dtaci(0.1, finite="yes")


# ---------------------------------------------------------------- interval_summary


def test_interval_summary_by_hand():
    s = np.tile([0.5, 1.5], 20)
    q = np.tile([1.0, np.inf], 20)
    r = interval_summary(s, q)
    assert r["coverage"] == 1.0 and r["inf_frac"] == 0.5
    assert r["width"] == pytest.approx(2.0)  # the mean of the finite 2q only
    q2 = np.tile([1.0, 1.0], 20)
    assert interval_summary(s, q2)["coverage"] == 0.5


def test_interval_summary_errors():
    with pytest.raises(ValueError, match="same length"):
        interval_summary(np.ones(30), np.ones(31))
    with pytest.raises(ValueError, match="at least 20 rounds"):
        interval_summary(np.ones(5), np.ones(5))


# ---------------------------------------------------------------- the diagnosis (item 2)


@pytest.mark.parametrize("kind", ["stationary", "change_point", "cauchy"])
def test_up_with_zero_offset_never_over_covers(kind):
    """README: with q̂0 = 0 and positive scores, q_t > 0 needs M_{t-1} + ½ > αt, so
    every prefix has M_t ≥ αt − ½ (UP-OCP cannot over-cover; its error is one-sided)."""
    from up_ocp import up_ocp

    s = np.abs(score_stream(kind, 3000, n_streams=2, seed=8).scores) + 1e-12
    for alpha in (0.05, 0.1, 0.3):
        q, _ = run_algorithm(up_ocp(alpha, eps=float(np.median(s))), s)
        m = np.cumsum(s > q, axis=-1)
        t = np.arange(1, s.shape[-1] + 1)
        assert (m >= alpha * t - 0.5 - 1e-9).all()
