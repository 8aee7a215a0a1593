"""UP-OCP around a trailing-quantile offset (``up_ocp(..., window=w)``): the bound, scale-freeness,
coverage, checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.datasets import score_stream
from icml26_shared.metrics import binomial_tolerance
from up_ocp import OnlineConformal, coverage_bound, run_algorithm, up_ocp
from up_ocp._up import trailing_offsets


@pytest.mark.parametrize(
    ("kind", "scale"),
    [("always_miss", 1.0), ("always_cover", 1.0), ("alternating", 1.0), ("cauchy", 1.0),
     ("change_point", 1e6)],
)  # fmt: skip
def test_bound_holds_at_every_t_with_the_offsets(kind, scale):
    s = score_stream(kind, 3000, n_streams=2, scale=scale, seed=4).scores
    q, state = run_algorithm(up_ocp(0.1, window=50), s)
    off = trailing_offsets(s, 0.1, 50)
    lhs, rhs = coverage_bound(s, q, 0.1, 1.0, q0=off, scales=off)
    assert np.all(lhs <= rhs + 1e-9)
    # the state's wealth is the KT mixture of the misses, whatever the offsets were
    assert np.all(np.isfinite(state.log_wealth))


def test_offsets_are_what_the_thresholds_bet_around():
    s = np.abs(np.random.default_rng(0).standard_normal(400))
    off = trailing_offsets(s, 0.1, 30)
    assert off[0] == 0.0 and off[1] == s[0]
    # the clipped rank: ceil(0.9 * 31) = 28th smallest of the last 30
    assert off[200] == np.sort(s[170:200])[27]
    q = OnlineConformal("up", window=30).run(s)
    # the bet is relative: q_t / offset_t - 1 = β_t W_{t-1}, small once the misses track α
    assert np.median(np.abs(q[100:] / off[100:] - 1)) < 1.0


def test_window_variant_is_exactly_scale_equivariant():
    s = score_stream("change_point", 2000, n_streams=3, seed=1).scores
    q1 = OnlineConformal("up", window=100).run(s)
    q3 = OnlineConformal("up", window=100).run(1e3 * s)
    # from the first score on (before it, the offset is q0 = 0 and the bet is in units of the
    # smallest float)
    np.testing.assert_allclose(q3[..., 1:], 1e3 * q1[..., 1:], rtol=1e-9)
    np.testing.assert_array_equal(1e3 * s > q3, s > q1)


def test_window_variant_covers_on_stationary_streams():
    """40 streams of 1,500 |N(0,1)| scores: the miss rate is within a binomial tolerance of α (the
    plain method's excess, which funds its wealth, is gone)."""
    s = score_stream("stationary", 1500, n_streams=40, seed=8).scores
    miss = (s > OnlineConformal("up", window=100).run(s)).mean()
    assert abs(miss - 0.1) <= binomial_tolerance(0.1, s.size) + 0.003, miss


def test_window_state_resumes_bit_exactly():
    s = np.abs(np.random.default_rng(2).standard_normal((3, 300)))
    full = OnlineConformal("up", window=40).run(s)
    oc = OnlineConformal("up", window=40)
    first = oc.run(s[:, :170])
    back = OnlineConformal.from_json(oc.to_json())
    np.testing.assert_array_equal(np.concatenate([first, back.run(s[:, 170:])], -1), full)


@pytest.mark.parametrize("window", [0, -3, 2.5, "100"])
def test_bad_window_refused(window):
    with pytest.raises((ValueError, TypeError), match="window"):
        up_ocp(0.1, window=window)
